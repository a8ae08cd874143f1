// End-to-end: the field's terms explain themselves where they appear
// (ui/term.rs), on hover and on keyboard focus, in both languages:
// algbw and busbw in the estimate, each ranked algorithm's name, the
// seed and slices fields, and each kind of link the drawing shows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launchChromium, watch, runResult as final } from './browser.mjs';

let browser;
let context;
const problems = [];
before(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
});
after(async () => { await browser?.close(); });

/** The tooltip `term` shows once focused: its ::after content. */
async function tipOnFocus(page, term) {
  await term.focus();
  return term.evaluate((el) => {
    const c = getComputedStyle(el, '::after').content;
    // `"text" / ""`: the tip, with empty alternative text for readers.
    return c === 'none' ? '' : JSON.parse(c.replace(/\s*\/\s*""$/, ''));
  });
}

/** The first `.term` under `scope` whose own text is `text`. */
function termNamed(page, scope, text) {
  return page.locator(`${scope} .term`).filter({ hasText: text }).first();
}

test('in English each term explains itself on focus, and the explanation is read after it', async () => {
  problems.length = 0;
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(`${BASE}/?lang=en&topo=910b-2x8&op=allreduce&bytes=1MiB`);
  await final(page, { topo: '910b-2x8' });
  const busbw = termNamed(page, '#estimate', 'busbw = algbw');
  assert.match(await tipOnFocus(page, busbw), /^bus bandwidth: algbw × 1\.875 for AllReduce on 16 ranks/);
  // Near the window's right edge the tooltip opens leftwards: no sideways scroll.
  assert.match(await busbw.getAttribute('class'), /\btip-left\b/);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth) <= 1);
  assert.match(await tipOnFocus(page, termNamed(page, '#estimate', 'algbw = S / t')), /^algorithm bandwidth: the message size S over the time t/);
  const rhd = page.locator('#estimate tr[data-algorithm="rhd"] .term');
  assert.match(await tipOnFocus(page, rhd), /^recursive halving-doubling \(HCCL H-D_R, Rabenseifner\)/);
  // A screen reader reads the explanation after the term.
  assert.match(await rhd.textContent(), /^rhd: recursive halving-doubling/);
  assert.match(await tipOnFocus(page, termNamed(page, '#controls', 'Seed')), /^The seed of the random input every rank starts from/);
  assert.match(await tipOnFocus(page, termNamed(page, '#controls', 'Slices')), /^Slices per transfer in the cost model/);
  // Two servers: HCCS inside each, RoCE between them.
  assert.match(await tipOnFocus(page, termNamed(page, '.topo-legend', 'HCCS')), /^HCCS \(Huawei Cache Coherence System\)/);
  const roce = termNamed(page, '.topo-legend', 'RoCE');
  assert.match(await tipOnFocus(page, roce), /^RoCE \(RDMA over Converged Ethernet\)/);
  // The seed field keeps its own short name; the explanation is the term's.
  assert.equal(await page.locator('#seed').evaluate((el) => el.labels[0].textContent), 'Seed');
  // Nothing explains itself until asked: focus elsewhere, the tooltip goes.
  await page.locator('#seed').focus();
  assert.equal(await roce.evaluate((el) => getComputedStyle(el, '::after').content), 'none');
  assert.deepEqual(problems, []);
  await page.close();
});

test('in Chinese the same terms explain themselves in Chinese', async () => {
  problems.length = 0;
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(`${BASE}/?lang=zh&topo=910b-2x8&op=allreduce&bytes=1MiB`);
  await final(page, { topo: '910b-2x8' });
  assert.match(await tipOnFocus(page, termNamed(page, '#estimate', 'busbw = algbw')), /^总线带宽：16 个 rank 上的 AllReduce 为 algbw × 1\.875/);
  assert.match(await tipOnFocus(page, termNamed(page, '#controls', '随机种子')), /^每个 rank 初始随机输入数据的种子/);
  assert.match(await tipOnFocus(page, termNamed(page, '.topo-legend', 'HCCS')), /^HCCS（华为缓存一致性系统）/);
  assert.deepEqual(problems, []);
  await page.close();
});
