// End-to-end: the `slices` key and control (cost-model slicing).
// - h100-8 (NCCL): auto picks NCCL's 1 MiB slices, the estimate panel says
//   how many and why; choosing 1 in #slices changes the estimate and the
//   link (`slices=1`); a bad value is named in #config-error;
// - 910b-8 (HCCL): auto is one slice, the panel names HCCL_BUFFSIZE.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launchChromium, watch } from './browser.mjs';

let browser;
let page;
const problems = [];
before(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  watch(page, problems);
});
after(async () => { await browser?.close(); });

const slicesText = () => page.locator('#estimate-slices').innerText();
const estimateUs = async () => Number((await page.locator('#estimate-us').innerText()).replace(/[^0-9.]/g, ''));

test('auto slices on h100-8 follow NCCL, and the control changes estimate and link', async () => {
  await page.goto(`${BASE}/?v=1&op=allreduce&algo=ring&topo=h100-8&bytes=64MiB&dtype=fp32&ranks=8&seed=1`);
  await page.waitForSelector('#estimate-slices', { timeout: 60000 });
  const auto = await slicesText();
  assert.match(auto, /^8 slices per transfer, up to 4 in flight/, auto);
  assert.match(auto, /NCCL/, auto);
  assert.equal(await page.locator('#slices').inputValue(), 'auto');
  const tAuto = await estimateUs();
  await page.screenshot({ path: 'tests/e2e/out/slices-h100-auto.png', fullPage: false });
  await page.selectOption('#slices', '1');
  await page.waitForFunction(() => document.querySelector('#estimate-slices')?.innerText.startsWith('1 slice per transfer'));
  const tOne = await estimateUs();
  assert.notEqual(tOne, tAuto);
  await page.waitForURL(/[?&]slices=1(&|$)/);
  assert.match(page.url(), /[?&]slices=1(&|$)/);
  // A bad value: named with what is allowed; the rest of the link applies.
  await page.goto(`${BASE}/?v=1&op=allreduce&topo=h100-8&ranks=8&bytes=1MiB&slices=0`);
  await page.waitForSelector('#config-error', { timeout: 60000 });
  const msg = await page.locator('#config-error').innerText();
  assert.match(msg, /slices/);
  assert.match(msg, /auto or an integer 1\.\.=256/);
  assert.deepEqual(problems, []);
});

test('auto on 910b-8 is one slice (HCCL loops by its buffer)', async () => {
  await page.goto(`${BASE}/?v=1&op=allreduce&algo=ring&topo=910b-8&bytes=64MiB&dtype=fp32&ranks=8&seed=1`);
  await page.waitForSelector('#estimate-slices', { timeout: 60000 });
  const t = await slicesText();
  assert.match(t, /^1 slice per transfer/, t);
  assert.match(t, /HCCL_BUFFSIZE/, t);
  assert.deepEqual(problems, []);
});
