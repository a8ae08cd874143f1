// End-to-end: 64 ranks run for real on a few web workers, each hosting a
// contiguous block of ranks (src/runtime/placement.rs); above 64 ranks the
// page is model-only with its note. Faults still end a 64-rank run, and a
// killed worker is reported with every rank it hosted.
//
// Measurements (page load to verified) go to tests/e2e/out/measurements.txt.
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

/** Opens `query`, collects page errors, returns { page, problems }. */
async function open(query) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems = [];
  watch(page, problems);
  await page.goto(`${BASE}/${query}`);
  return { page, problems };
}

/** Waits until #run-result reaches a final state; returns its data attributes. */
async function finalState(page, timeout = 120_000) {
  await page.waitForFunction(() => {
    const s = document.querySelector('#run-result')?.getAttribute('data-state');
    return s && !['idle', 'running'].includes(s);
  }, null, { timeout, polling: 20 });
  return page.$eval('#run-result', (el) => Object.fromEntries(
    [...el.attributes].filter((a) => a.name.startsWith('data-')).map((a) => [a.name.slice(5), a.value])));
}

const TOPO = 'topo=910b-8x8&ranks=64';

for (const [algo, bytes] of [['ring', '1MiB'], ['auto', '1MiB'], ['ring', '16MiB'], ['auto', '16MiB']]) {
  test(`64 ranks x ${bytes} fp32 ${algo} AllReduce on 910b-8x8 runs for real and verifies`, async () => {
    const t0 = Date.now();
    const { page, problems } = await open(`?v=1&op=allreduce&algo=${algo}&${TOPO}&bytes=${bytes}&dtype=fp32&seed=5`);
    const r = await finalState(page);
    const ms = Date.now() - t0;
    assert.equal(r.state, 'verified', JSON.stringify(r));
    assert.equal(r.ranks, '64');
    assert.equal(r.topo, '910b-8x8');
    assert.ok(Number(r['wall-ms']) > 0, r['wall-ms']);
    assert.equal(await page.locator('#model-only-note').count(), 0, 'no model-only note at 64 ranks');
    const workers = await page.evaluate(() => navigator.hardwareConcurrency);
    appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} 64 ranks x ${bytes} fp32 ${algo} (${r.algorithm}) AllReduce on 910b-8x8 (hardwareConcurrency ${workers}): page load to verified ${ms} ms, worker wall ${r['wall-ms']} ms\n`);
    if (algo === 'ring' && bytes === '1MiB') await page.screenshot({ path: `${OUT}runtime64.png`, fullPage: false });
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('above 16 ranks the buffer grid is one canvas: its pixels are the cells, its words the cell under the cursor', async () => {
  const { page, problems } = await open(`?v=1&op=allreduce&algo=ring&${TOPO}&bytes=1MiB&dtype=fp32&seed=5`);
  assert.equal((await finalState(page)).state, 'verified');
  const canvas = page.locator('#buf-canvas');
  await canvas.waitFor();
  // 64 x 64 cells, no element each (the DOM grid was 4 096 of them).
  assert.equal(await page.locator('#buffers .cell').count(), 0);
  assert.ok(await page.locator('#buffers *').count() < 400, 'the grid is a few hundred elements');
  // The colour at a cell's centre (CSS px -> device px).
  const pixel = (r, c) => page.$eval('#buf-canvas', (el, [r, c]) => {
    const w = el.clientWidth, pitch = (w + 1) / 64, cell = pitch - 1, k = el.width / w;
    const d = el.getContext('2d').getImageData(Math.floor((c * pitch + cell / 2) * k), Math.floor((r * 10 + 4.5) * k), 1, 1).data;
    return [d[0], d[1], d[2]];
  }, [r, c]);
  // The page shows the initial state until played (Back to it if not).
  if (await page.locator('#btn-first').isEnabled()) await page.click('#btn-first');
  // Before step 1 every chunk holds its own rank's contribution: rank 3's
  // colour is Okabe-Ito #d55e00, rank 7's #000000 (ui/colors.rs RANK).
  await page.waitForFunction(() => /before the first step/.test(document.querySelector('#buffers .card-head')?.textContent ?? ''));
  assert.deepEqual(await pixel(3, 10), [0xd5, 0x5e, 0x00]);
  assert.deepEqual(await pixel(63, 0), [0, 0, 0]);
  await page.click('#btn-last');
  // The last button shows step 125 of 126 while the last step plays
  // (about a second), then 126: wait for that, or the step read below
  // moves under the test (it did on a busy machine).
  await page.waitForFunction(() => /after step (\d+) of \1\b/.test(document.querySelector('#buffers .card-head')?.textContent ?? ''));
  // After the last step every chunk is fully reduced (COMPLETE #2b1d6e).
  assert.deepEqual(await pixel(3, 10), [0x2b, 0x1d, 0x6e]);
  assert.deepEqual(await pixel(63, 63), [0x2b, 0x1d, 0x6e]);
  // The pointer on rank 5's chunk 9: its words below the grid.
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const pitch = (box.width + 1) / 64;
  await page.mouse.move(box.x + 9 * pitch + 2, box.y + 5 * 10 + 4);
  await page.waitForFunction(() => /S0-NPU5 chunk 9: holds every rank/.test(document.querySelector('#buf-cursor').textContent));
  // The keyboard moves the same cursor.
  await canvas.focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => /S0-NPU6 chunk 10: holds every rank/.test(document.querySelector('#buf-cursor').textContent));
  // The grid keeps the keys it takes: ← and Home move its cursor, not the
  // playback (which has the same keys everywhere else on the page).
  const stepText = () => page.textContent('#buffers .card-head .muted');
  const atStep = await stepText();
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('Home');
  await page.waitForFunction(() => /S0-NPU6 chunk 0: holds every rank/.test(document.querySelector('#buf-cursor').textContent));
  assert.equal(await stepText(), atStep);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a grid of many chunks is a canvas at 8 ranks too; a small one stays cells with values', async () => {
  // AlltoAllV at 8 ranks: 128 chunks a rank (send and receive blocks), 1 024
  // cells. As DOM cells it was 12 363 elements made in a 179 ms task and
  // 128 columns overflowing the panel (ui/buffers.rs MAX_DOM_CELLS).
  const { page, problems } = await open('?v=1&op=alltoallv&algo=auto&topo=910b-8&ranks=8&bytes=1MiB&dtype=bf16');
  assert.equal((await finalState(page)).state, 'verified');
  await page.locator('#buf-canvas').waitFor();
  assert.equal(await page.locator('#buffers .cell').count(), 0);
  assert.ok(await page.locator('#buffers *').count() < 400, 'the grid is a few hundred elements');
  assert.match(await page.textContent('#buffers .hint'), /At 8 ranks × 128 chunks each cell shows only its colour/);
  // The canvas fits the panel (the DOM grid's columns ran past it).
  const [canvasW, panelW] = await page.$eval('#buf-canvas', (el) => [el.getBoundingClientRect().right, el.closest('#buffers').getBoundingClientRect().right]);
  assert.ok(canvasW <= panelW, `${canvasW} <= ${panelW}`);
  // The default page's 8 × 8 grid stays cells, each with its value.
  await page.goto(`${BASE}/?v=1&op=allreduce&algo=ring&topo=910b-8&ranks=8&bytes=1MiB&dtype=fp32`);
  assert.equal((await finalState(page)).state, 'verified');
  await page.waitForFunction(() => document.querySelectorAll('#buffers .cell').length === 64);
  assert.equal(await page.locator('#buf-canvas').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('above 64 ranks the page is model-only with the visible note', async () => {
  const { page, problems } = await open('?v=1&op=allreduce&algo=ring&topo=910b-16x8&ranks=128&bytes=1MiB');
  const r = await finalState(page);
  assert.equal(r.state, 'model-only', JSON.stringify(r));
  // The result panel says model-only at once; the plan (and with it the
  // note) comes from the planner worker.
  const note = page.locator('#model-only-note');
  await note.waitFor({ timeout: 60_000 });
  assert.ok(await note.isVisible(), 'the note is visible');
  const text = await note.innerText();
  assert.match(text, /128 ranks/);
  assert.match(text, /executes up to 64 ranks for real/);
  assert.deepEqual(problems, []);
  await page.close();
});

// With navigator.hardwareConcurrency <= 7 a 64-rank run uses 4 workers
// (ranks 0–15, 16–31, 32–47, 48–63); with more cores 8 or 16 workers.
const faults = [
  // Killing rank 20's worker silently takes every rank it hosts down.
  ['kill:rank=20:step=3', /no progress for \d+ ms: the worker hosting ranks \d+–\d+ stopped answering \(terminated or crashed\), so all its ranks failed with it; rank \d+ waits for rank/i],
  // An uncaught error names the worker's ranks (the fault's rank is in the error text).
  ['throw:rank=40:step=2', /worker failed: .*injected fault: rank 40's worker throws at step \d+.*\(worker \d+ hosted ranks \d+–\d+; all of them failed\)/i],
  ['drop:rank=63:step=125', /no progress for \d+ ms: .*waits for rank 63/i],
];
for (const [fault, words] of faults) {
  test(`64 ranks, fault ${fault}: the run ends with a clear error, the next run verifies`, async () => {
    const { page, problems } = await open(`?v=1&op=allreduce&algo=ring&${TOPO}&bytes=64KiB&dtype=fp32&fault=${fault}`);
    await page.locator('#fault-banner').waitFor();
    const t0 = Date.now();
    const r = await finalState(page, 30_000);
    const ms = Date.now() - t0;
    assert.equal(r.state, 'error', JSON.stringify(r));
    const text = await page.locator('#run-result').innerText();
    assert.match(text, words, text);
    appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} 64 ranks fault ${fault}: error after ${ms} ms: ${text.split('\n').find((l) => words.test(l)) ?? ''}\n`);
    await page.locator('#rerun').click();
    await page.waitForFunction(() => document.querySelector('#run-result')?.getAttribute('data-state') !== 'error');
    const again = await finalState(page);
    assert.equal(again.state, 'verified', 'the next run (no fault) verifies');
    assert.deepEqual(problems, []);
    await page.close();
  });
}
