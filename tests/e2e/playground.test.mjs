// End-to-end: the release build served by `trunk serve`, driven by
// Playwright in Debian's Chromium. Run by scripts/test.sh with BASE_URL set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, appendFileSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });

let browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => { await browser?.close(); });

/** Opens `query`, collects console errors and page errors, returns { page, problems }. */
async function open(query, { width = 1400, height = 900 } = {}) {
  const page = await browser.newPage({ viewport: { width, height } });
  const problems = [];
  watch(page, problems);
  await page.goto(`${BASE}/${query}`);
  return { page, problems };
}

/** Waits until #run-result reaches a final state; returns its data attributes. */
async function finalState(page, timeout = 60_000) {
  await page.waitForFunction(() => {
    const s = document.querySelector('#run-result')?.getAttribute('data-state');
    return s && !['idle', 'running'].includes(s);
  }, null, { timeout });
  return page.$eval('#run-result', (el) => Object.fromEntries(
    [...el.attributes].filter((a) => a.name.startsWith('data-')).map((a) => [a.name.slice(5), a.value])));
}

test('the default page runs AllReduce on 8 ranks of the 910B server and verifies it', async () => {
  const { page, problems } = await open('');
  const r = await finalState(page);
  assert.equal(r.state, 'verified', JSON.stringify(r));
  assert.equal(r.op, 'allreduce');
  assert.equal(r.topo, '910b-8');
  assert.equal(r.ranks, '8');
  assert.ok(['ring', 'mesh'].includes(r.algorithm), r.algorithm);
  assert.ok(Number(r['estimate-us']) > 0);
  assert.ok(Number(r['busbw-gbps']) > 0);
  assert.equal(Number(r['max-abs-error']) >= 0, true);
  assert.equal(await page.locator('svg line, svg path').count() >= 28, true, 'the topology is drawn');
  assert.ok(page.url().includes('op=allreduce'), `URL carries the config: ${page.url()}`);
  await page.screenshot({ path: `${OUT}default.png` });
  assert.deepEqual(problems, []);
  await page.close();
});

const cases = [
  ['?op=allreduce&algo=ring&dtype=fp16&redop=prod&ranks=4&bytes=1MiB&seed=9', { op: 'allreduce', algorithm: 'ring', ranks: '4', dtype: 'fp16' }],
  ['?op=reducescatter&algo=mesh&dtype=bf16&redop=max&ranks=5&bytes=256KiB', { op: 'reducescatter', algorithm: 'mesh', ranks: '5' }],
  ['?op=allgather&algo=ring&dtype=int8&ranks=3&bytes=4KiB', { op: 'allgather', algorithm: 'ring', ranks: '3', bytes: '4096' }],
  ['?op=allreduce&algo=mesh&dtype=int32&redop=min&ranks=2&bytes=1MB', { algorithm: 'mesh', ranks: '2', bytes: '1000000' }],
];
for (const [query, want] of cases) {
  test(`a link restores and verifies ${query}`, async () => {
    const { page, problems } = await open(query);
    const r = await finalState(page);
    assert.equal(r.state, 'verified', JSON.stringify(r));
    for (const [k, v] of Object.entries(want)) assert.equal(r[k], v, k);
    assert.equal(await page.locator('#config-error').innerText().catch(() => ''), '');
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('8 ranks x 64 MiB fp32 ring AllReduce verifies; time to verified is reported', async () => {
  const t0 = Date.now();
  const { page, problems } = await open('?op=allreduce&algo=ring&bytes=64MiB&dtype=fp32&ranks=8');
  const r = await finalState(page, 120_000);
  const ms = Date.now() - t0;
  assert.equal(r.state, 'verified', JSON.stringify(r));
  appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} 8 ranks x 64 MiB fp32 ring AllReduce: page load to verified ${ms} ms, worker wall ${r['wall-ms']} ms\n`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('invalid values are named in #config-error and the rest still runs', async () => {
  const { page, problems } = await open('?op=allgather&ranks=99&dtype=fp64&bytes=-5');
  const r = await finalState(page);
  const msg = await page.locator('#config-error').innerText();
  for (const k of ['ranks', '99', 'dtype', 'fp64', 'bytes']) assert.ok(msg.includes(k), `${k} in: ${msg}`);
  assert.equal(r.op, 'allgather');
  assert.equal(r.state, 'verified');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a hostile value is shown as text, never run as HTML', async () => {
  const { page, problems } = await open('?op=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&algo=javascript:alert(2)');
  await finalState(page);
  const msg = await page.locator('#config-error').innerText();
  assert.ok(msg.includes('<img src=x onerror=alert(1)>'), msg);
  assert.equal(await page.locator('#config-error img').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('sizes above what the browser executes are model-only', async () => {
  const { page, problems } = await open('?bytes=1GiB');
  const r = await finalState(page);
  assert.equal(r.state, 'model-only');
  assert.equal(r.bytes, String(1 << 30));
  assert.ok(Number(r['estimate-us']) > 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('changing a control updates the URL and re-runs', async () => {
  const { page, problems } = await open('?ranks=4&bytes=64KiB');
  await finalState(page);
  const select = page.locator('select#op');
  await select.selectOption('allgather');
  await page.waitForFunction(() => location.search.includes('op=allgather'));
  const r = await finalState(page);
  assert.equal(r.op, 'allgather');
  assert.equal(r.state, 'verified');
  assert.deepEqual(problems, []);
  await page.close();
});

test('mid-animation screenshot (README)', async () => {
  const { page, problems } = await open('?op=allreduce&algo=ring&ranks=8&bytes=16MiB');
  await finalState(page);
  // Step forward a few times so the picture shows a step in flight.
  const fwd = page.locator('#btn-forward');
  for (let i = 0; i < 3; i++) await fwd.click();
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${OUT}mid-animation.png` });
  assert.deepEqual(problems, []);
  await page.close();
});

// A Gantt bar's tooltip (an SVG <title>) is made when the bar is hovered,
// not drawn with every bar (ui/gantt.rs `hover_title`): by link and by
// rank, the hovered bar gets the words of its own step and transfer, once.
// yew reuses a rect for another bar when the view or the plan changes, so
// the same rect hovered again must name its new bar, not keep the old title.
test('a Gantt bar gets its tooltip on hover: its step, and by rank its own sender', async () => {
  const { page, problems } = await open('?op=allreduce&algo=ring&ranks=4&bytes=1MiB');
  await finalState(page);
  const hover = (sel) => page.$eval(sel, (el) => {
    el.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    el.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    return { titles: el.querySelectorAll('title').length, text: el.querySelector('title')?.textContent,
      y: Number(el.getAttribute('y')) };
  });
  assert.equal(await page.locator('#gantt .gbars title').count(), 0, 'no tooltip is drawn up front');
  // The step log's chips too: the chip's words, on hover. (The log and
  // the chart are drawn a few tasks after the page: wait for both.)
  await page.waitForSelector('#step-log li:nth-child(3) .xfer:nth-child(2)');
  await page.waitForSelector('#gantt .gbars > g:nth-child(3) > rect:nth-child(2)');
  const chip = await page.$eval('#step-log li:nth-child(3) .xfer:nth-child(2)', (el) => {
    el.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    return [el.textContent, el.getAttribute('title')];
  });
  const [, src, dst, c] = /^(\d)[→⇒](\d) (c\d)$/.exec(chip[0]) ?? [];
  assert.match(chip[1] ?? '', new RegExp(`^NPU${src} sends ${c} to NPU${dst} \\((copy|reduce)\\)$`), chip.join(' / '));
  const bar = '#gantt .gbars > g:nth-child(3) > rect:nth-child(2)';
  const link = await hover(bar);
  assert.equal(link.titles, 1);
  assert.match(link.text, /^step 3: \d+ flows? · [\d.]+–[\d.]+ µs$/);
  await page.locator('#gantt .gantt-by button', { hasText: 'by rank' }).click();
  await page.waitForSelector(`#gantt svg.gantt[data-rows="4"] ${bar.slice(7)}.rank`);
  const rank = await hover(bar);
  assert.equal(rank.titles, 1);
  const m = /^step 3: rank (\d) → rank (\d), ([\d.]+ [KMG]?i?B) · [\d.]+–[\d.]+ µs$/.exec(rank.text);
  assert.ok(m, rank.text);
  // The bar's row is its sender's (ROW_H 13, AXIS_H 22, 2 px inset).
  assert.equal(Number(m[1]), (rank.y - 24) / 13, `row of y=${rank.y}`);
  // A new plan (64 MiB): the same rect now draws a larger transfer.
  await page.fill('#bytes', '64MiB');
  await page.press('#bytes', 'Enter');
  await page.waitForFunction(() => {
    const r = document.querySelector('#run-result');
    return r?.getAttribute('data-bytes') === String(64 << 20) && r.getAttribute('data-state') === 'verified';
  }, null, { timeout: 60_000 });
  const bigger = await hover(bar);
  assert.equal(bigger.titles, 1);
  const m2 = /^step 3: rank (\d) → rank (\d), ([\d.]+ [KMG]?i?B) · /.exec(bigger.text);
  assert.ok(m2, bigger.text);
  assert.notEqual(m2[3], m[3], `the title follows the new plan: ${bigger.text}`);
  assert.deepEqual(problems, []);
  await page.close();
});

// Until the app's wasm has loaded, the page shows its name and a loading
// line (index.html), not a blank page; the app replaces it when it mounts.
test('while the wasm loads the page says so, and the app replaces that line', async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems = [];
  watch(page, problems);
  await page.route('**/app-*_bg.wasm', async (route) => {
    await new Promise((r) => setTimeout(r, 1500));
    await route.continue();
  });
  const loading = page.goto(`${BASE}/`);
  await page.waitForSelector('.boot h1', { timeout: 10_000 });
  assert.equal(await page.textContent('.boot h1'), 'ccl-playground');
  assert.match(await page.textContent('.boot .tagline'), /^Loading the engine \(wasm\)… · 正在加载…$/);
  await loading;
  await finalState(page);
  assert.equal(await page.locator('.boot').count(), 0);
  assert.equal(await page.locator('h1').count(), 1);
  assert.deepEqual(problems, []);
  await page.close();
});

// On an NCCL machine auto names NCCL's own choice, not only the schedule
// that draws it: 1 GiB on h100-8 is NVLS/Simple (NCCL 2.30.7's tuning
// model), drawn as mesh, and the line under the control describes NVLS
// (the switch reduces), not HCCL's mesh.
test('auto on h100-8 names NCCL\'s NVLS, drawn as mesh', async () => {
  const { page, problems } = await open('?v=1&op=allreduce&topo=h100-8&ranks=8&bytes=1GiB');
  await page.waitForFunction(() => /\d/.test(document.querySelector('#estimate-us')?.textContent ?? ''));
  assert.match(await page.textContent('#auto-choice'), /auto: NVLS\/Simple, drawn as mesh — what NCCL runs at 1 GiB on 8 GPUs/);
  const summary = await page.textContent('.algo-summary');
  assert.match(summary, /^NCCL runs NVLS\/Simple here: NVLink SHARP/);
  assert.doesNotMatch(summary, /HCCL/);
  assert.deepEqual(problems, []);
  await page.close();
});

// Why a page is model-only is said in the page's language (the engine
// gives the reason as data, not an English sentence).
test('in Chinese the model-only reason is Chinese', async () => {
  const { page, problems } = await open('?v=1&lang=zh&op=allreduce&topo=910b-8&ranks=8&bytes=1GiB');
  await page.waitForFunction(() => /仅模型/.test(document.querySelector('section.controls')?.textContent ?? ''));
  assert.match(await page.textContent('section.controls'), /仅模型：超过 128 MiB 的消息只做建模，不在浏览器中执行。/);
  await page.goto(`${BASE}/?v=1&lang=zh&op=allreduce&topo=910b-16x8&ranks=65&bytes=1MiB`);
  await page.waitForFunction(() => /超过 64 个 rank/.test(document.querySelector('section.controls')?.textContent ?? ''));
  assert.doesNotMatch(await page.textContent('section.controls'), /modelled/);
  assert.deepEqual(problems, []);
  await page.close();
});

// A drawn page makes its plan without the ranking and takes the ranking
// from the planner worker (engine Plan::unranked, Job::Ranked). What auto
// would pick is the library's rule, so the controls say it at once; the
// ranking comes with every row and the chosen one marked, and the verdict
// names auto's pick with its time (a review found the hint gone when the
// unranked plan left auto's pick to the worker).
test('a drawn page with a fixed algorithm: auto\'s pick in the controls, the ranking from the planner', async () => {
  const { page, problems } = await open('?v=1&op=allreduce&algo=ring&topo=910b-8&ranks=8&bytes=256MiB&dtype=fp16');
  await page.waitForFunction(() => /\d/.test(document.querySelector('#estimate-us')?.textContent ?? ''));
  assert.match(await page.textContent('#auto-choice'), /auto would run mesh here/);
  await page.waitForFunction(() => document.querySelectorAll('#estimate table.ranking:not(.stale) tbody tr').length > 1);
  assert.equal(await page.getAttribute('#estimate table.ranking tr.chosen', 'data-algorithm'), 'ring');
  assert.match(await page.textContent('#auto-reason'), /auto would run mesh \(\d/);
  assert.equal(await page.locator('#ranking-error').count(), 0);
  // A size change: the new ranking replaces the old one (the old one
  // never marks a row meanwhile), and auto's pick is said again.
  await page.fill('#bytes', '64 KiB');
  await page.press('#bytes', 'Enter');
  await page.waitForFunction(() => /64 KiB/.test(document.querySelector('#auto-reason')?.textContent ?? '')
    && document.querySelectorAll('#estimate table.ranking:not(.stale) tr.chosen').length === 1);
  assert.equal(await page.locator('#estimate table.ranking.stale tr.chosen').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});
