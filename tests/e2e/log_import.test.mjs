// End-to-end: the "measurements in" card with a large log and across a
// reload. A pasted log is read and fitted in the planner worker, so the
// page says it is reading and stays responsive (the longest main-thread
// task while a 5 MB log is read is printed to tests/e2e/out/
// measurements.txt, not asserted: timings are noisy); a log up to 2 MiB
// is kept in the browser for the next visit, a larger one says it is not,
// and Clear forgets it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
const H100 = readFileSync(new URL('../fixtures/nccl-tests/nccl_h100_1node_5colls_16.txt', import.meta.url), 'utf8');
const HCCL = readFileSync(new URL('../fixtures/hccl_test_910b_8_allreduce_synthetic.txt', import.meta.url), 'utf8');

let browser;
before(async () => { browser = await launchChromium(); mkdirSync(OUT, { recursive: true }); });
after(async () => { await browser?.close(); });

async function open(context) {
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(`${BASE}/?lang=en&topo=h100-8&ranks=8&op=allgather`);
  await page.waitForSelector('#log-input', { timeout: 60_000 });
  return { page, problems };
}

test('a 5 MB log is read in the background: the card says so, the page answers, the tables arrive', async () => {
  const context = await browser.newContext();
  const { page, problems } = await open(context);
  // 360 runs of the 8×H100 five-collective log: 5.1 MB, its five tables
  // each printed 360 times (the reader keeps a table printed again once).
  const copies = 360;
  const big = Array(copies).fill(H100).join('\n');
  assert.ok(big.length > 5_000_000, `${big.length}`);
  // The text crosses from the test to the page first (seconds over the
  // DevTools protocol, not the page's work); then, as a paste does it, the
  // value at once and one input event (Playwright's fill types it through
  // the input method, minutes for 5 MB).
  await page.evaluate((v) => { window.__big = v; }, big);
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
      .observe({ type: 'longtask' });
  });
  const [pasteMs, handlerMs] = await page.evaluate(() => {
    const el = document.querySelector('#log-input');
    const a = performance.now();
    el.value = window.__big;
    const b = performance.now();
    el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
    return [b - a, performance.now() - b];
  });
  await page.waitForSelector('#log-reading', { timeout: 10_000 });
  // The box shows the log's first 64 KiB, read-only: Chromium takes over
  // a second to lay out 5 MB of textarea text; the page holds it whole.
  const shown = await page.inputValue('#log-input');
  assert.ok(shown.length <= 64 * 1024 && shown.endsWith('\n…'), `${shown.length}`);
  assert.ok(big.startsWith(shown.slice(0, -2)));
  assert.equal(await page.locator('#log-input').isEditable(), false);
  assert.match(await page.textContent('#log-held'), /The whole 4\.87 MiB log is read; the box shows its first 64 KiB/);
  assert.match(await page.textContent('#log-reading'), /Reading 4\.87 MiB in the background/);
  // While the worker reads, a control still answers.
  await page.selectOption('#op', 'allreduce');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('op') === 'allreduce');
  await page.waitForSelector('#log-status[data-tables]', { timeout: 120_000 });
  assert.equal(await page.getAttribute('#log-status', 'data-tables'), '5');
  assert.match(await page.textContent('#log-tables'), /printed again at line \d+ \(kept once\)/);
  assert.equal(await page.locator('#log-reading').count(), 0);
  // The AllReduce page fits an AllReduce table.
  await page.waitForSelector('#use-profile', { timeout: 60_000 });
  const longest = await page.evaluate(() => Math.max(0, ...window.__long));
  appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} 5 MB log (${big.length} B) pasted: the browser's own insertion ${Math.round(pasteMs)} ms, the page's input handler ${Math.round(handlerMs)} ms, longest main-thread task ${Math.round(longest)} ms\n`);
  // Above 2 MiB it is not kept, and says so.
  assert.match(await page.textContent('#log-kept'), /not kept across a reload/);
  await page.reload();
  await page.waitForSelector('#log-input', { timeout: 60_000 });
  assert.equal(await page.inputValue('#log-input'), '');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a pasted log survives a reload, and Clear forgets it', async () => {
  const context = await browser.newContext();
  const { page, problems } = await open(context);
  await page.fill('#log-input', HCCL);
  await page.waitForSelector('#log-status[data-tables="1"]', { timeout: 60_000 });
  assert.match(await page.textContent('#log-kept'), /Kept in this browser/);
  await page.reload();
  await page.waitForSelector('#log-status[data-tables="1"]', { timeout: 60_000 });
  assert.equal(await page.inputValue('#log-input'), HCCL);
  // A second page of the same browser opens with it too.
  const { page: other, problems: otherProblems } = await open(context);
  assert.equal(await other.inputValue('#log-input'), HCCL);
  await other.close();
  await page.click('#log-clear');
  assert.equal(await page.inputValue('#log-input'), '');
  await page.waitForSelector('#log-status:not([data-tables])');
  await page.reload();
  await page.waitForSelector('#log-input', { timeout: 60_000 });
  assert.equal(await page.inputValue('#log-input'), '');
  assert.deepEqual(problems, []);
  assert.deepEqual(otherProblems, []);
  await context.close();
});

test('the first screen leads to the log import: "Your measurements" scrolls to it and puts the cursor in it', async () => {
  for (const viewport of [{ width: 1400, height: 900 }, { width: 390, height: 844 }]) {
    const context = await browser.newContext({ viewport });
    const { page, problems } = await open(context);
    const jump = page.locator('#jump-measurements');
    // On the first screen, without scrolling.
    const box = await jump.boundingBox();
    assert.ok(box && box.y + box.height <= viewport.height, JSON.stringify(box));
    assert.match(await jump.textContent(), /Your measurements/);
    await jump.click();
    await page.waitForFunction(() => document.activeElement?.id === 'log-input', null, { timeout: 10_000 });
    const input = await page.locator('#log-input').boundingBox();
    assert.ok(input.y >= 0 && input.y < viewport.height, JSON.stringify(input));
    // The jump is no navigation: the address keeps its state.
    assert.match(page.url(), /topo=h100-8/);
    assert.deepEqual(problems, []);
    await context.close();
  }
});
