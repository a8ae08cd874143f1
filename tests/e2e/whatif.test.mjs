// End-to-end: the compression and fusion what-ifs.
// - fp16 INT8 block-256 AllReduce of 16 MiB: verified against the compressed
//   reference, relative L2 error 0.1 %–5 %, wire bytes within 1 % of
//   (1 + 2/256)/2 of the uncompressed bytes;
// - placement=once: lower error and more wire bytes than hop;
// - fusion=llama3-8b&bucket=25MiB: fewer buckets and a lower predicted time
//   than bucket=0, and the fused bucket's real run verifies;
// - the controls drive the same state; a claim is checked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, appendFileSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const FINAL = (s) => s && !['idle', 'running'].includes(s);
let browser;
let page;
const problems = [];
before(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  watch(page, problems);
});
after(async () => { await browser?.close(); });

/** Opens `query` and waits for #run-result to settle; returns its data-*. */
async function settle(query, timeout = 120_000) {
  await page.goto(`${BASE}/?${query}`);
  await page.waitForFunction(
    () => {
      const s = document.querySelector('#run-result')?.dataset.state;
      return s && s !== 'idle' && s !== 'running';
    },
    null,
    { timeout },
  );
  return page.$eval('#run-result', (el) => ({ ...el.dataset, error: document.querySelector('#run-error')?.textContent ?? '' }));
}

function measure(line) {
  mkdirSync('tests/e2e/out', { recursive: true });
  appendFileSync('tests/e2e/out/measurements.txt', `${line}\n`);
}

test('int8 hop AllReduce of 16 MiB fp16 verifies with 8-bit error and half the bytes', async () => {
  const t0 = Date.now();
  const d = await settle('v=1&op=allreduce&dtype=fp16&compress=int8&block=256&bytes=16MiB');
  assert.equal(d.state, 'verified', d.error);
  assert.equal(d.compression, 'int8');
  assert.equal(d.placement, 'hop');
  const rel = Number(d.relError);
  assert.ok(rel >= 0.001 && rel <= 0.05, `relative L2 error ${rel}`);
  const ratio = Number(d.wireBytes) / Number(d.uncompressedBytes);
  const want = (1 + 2 / 256) / 2;
  assert.ok(Math.abs(ratio / want - 1) < 0.01, `wire ratio ${ratio} vs ${want}`);
  assert.ok(Number(d.flushedFraction) >= 0 && Number(d.flushedFraction) < 0.01, d.flushedFraction);
  // The card shows the same figures and says this is not HCCL.
  const card = await page.textContent('#compression');
  assert.match(card, /HCCL has no gradient compression/);
  assert.match(await page.textContent('#compressed-error'), /relative L2/);
  measure(`whatif: fp16 int8 hop 16 MiB × 8 page→verified ${Date.now() - t0} ms, rel L2 ${(rel * 100).toFixed(3)} %, wire ratio ${ratio.toFixed(4)}`);
  assert.deepEqual(problems, []);
});

test('placement=once: less error, more bytes on the wire', async () => {
  const base = 'v=1&op=allreduce&dtype=fp16&compress=int8&block=256&bytes=4MiB';
  const hop = await settle(`${base}&placement=hop`);
  const once = await settle(`${base}&placement=once`);
  assert.equal(hop.state, 'verified', hop.error);
  assert.equal(once.state, 'verified', once.error);
  assert.ok(Number(once.relError) < Number(hop.relError), `${once.relError} < ${hop.relError}`);
  assert.ok(Number(once.wireBytes) > Number(hop.wireBytes), `${once.wireBytes} > ${hop.wireBytes}`);
  measure(`whatif: 4 MiB fp16 int8 rel L2 hop ${hop.relError} once ${once.relError}; wire hop ${hop.wireBytes} once ${once.wireBytes}`);
  assert.deepEqual(problems, []);
});

test('fp8 and heavy-tailed inputs run; the controls rewrite the link; a claim is checked', async () => {
  await settle('v=1&op=allreduce&dtype=bf16&bytes=1MiB');
  await page.selectOption('#compress', 'fp8e4m3');
  await page.waitForFunction(() => document.querySelector('#run-result')?.dataset.compression === 'fp8e4m3');
  await page.waitForFunction(() => document.querySelector('#run-result')?.dataset.state === 'verified', null, { timeout: 60_000 });
  const normalError = await page.$eval('#run-result', (el) => el.dataset.relError);
  await page.selectOption('#grad', 'heavy');
  await page.waitForFunction(() => location.search.includes('grad=heavy'));
  // The heavy-tailed run: a new error figure, verified.
  await page.waitForFunction(
    (before) => {
      const d = document.querySelector('#run-result')?.dataset;
      return d && d.state === 'verified' && d.relError !== '' && d.relError !== before;
    },
    normalError,
    { timeout: 60_000 },
  );
  assert.match(await page.evaluate(() => location.search), /compress=fp8e4m3/);
  await page.fill('#claim', '−73 %');
  const claim = await page.textContent('#claim-result');
  assert.match(claim, /Claimed −73\.0 %/);
  assert.match(claim, /the model gives/);
  await page.screenshot({ path: 'tests/e2e/out/whatif-compression.png', fullPage: true });
  assert.deepEqual(problems, []);
});

test('integer dtypes refuse compression with a message naming the key', async () => {
  await page.goto(`${BASE}/?v=1&dtype=int32&compress=int8`);
  const err = await page.textContent('#config-error');
  assert.match(err, /compress/);
  assert.match(err, /fp32, fp16 and bf16/);
  assert.deepEqual(problems, []);
});

test('fusion=llama3-8b: DDP buckets beat one AllReduce per tensor; the fused bucket verifies', async () => {
  const unfused = await settle('v=1&op=allreduce&dtype=bf16&fusion=llama3-8b&bucket=0');
  const t0 = Date.now();
  const fused = await settle('v=1&op=allreduce&dtype=bf16&fusion=llama3-8b&bucket=25MiB');
  assert.equal(fused.state, 'verified', fused.error);
  assert.ok(Number(fused.buckets) < Number(unfused.buckets), `${fused.buckets} < ${unfused.buckets}`);
  assert.equal(Number(unfused.buckets), 32 * 9 + 3);
  assert.ok(Number(fused.fusedUs) < Number(unfused.fusedUs), `${fused.fusedUs} < ${unfused.fusedUs}`);
  assert.ok(Math.abs(Number(unfused.fusedUs) - Number(unfused.unfusedUs)) < 1e-6 * Number(unfused.unfusedUs));
  assert.notEqual(fused.fusionBucket, '', 'the real run is one of the buckets');
  assert.match(await page.textContent('#fusion-run'), /unpacked tensor's own AllReduce result/);
  await page.screenshot({ path: 'tests/e2e/out/whatif-fusion.png', fullPage: true });
  measure(`whatif: llama3-8b bf16 buckets ${fused.buckets} (vs ${unfused.buckets}), fused ${Number(fused.fusedUs).toFixed(0)} µs vs unfused ${Number(fused.unfusedUs).toFixed(0)} µs; bucket ${fused.fusionBucket} (${fused.bytes} B) verified in ${Date.now() - t0} ms`);
  assert.deepEqual(problems, []);
});
