// End-to-end: the Determinism card (ui/determinism_card.rs,
// engine/determinism.rs): ring vs mesh on fp16 differ in some elements;
// with a fixed reduction order none differ and the modelled cost shows;
// redop=avg on HCCL says HCCL has no avg; a screenshot for docs/guide.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launchChromium } from './browser.mjs';

let browser;
let context;
before(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
});
after(async () => { await browser?.close(); });

const count = async (page) => {
  const t = await page.textContent('#det-count');
  const m = t.match(/(\d+) of (\d+) elements differ/);
  assert.ok(m, t);
  return [Number(m[1]), Number(m[2])];
};

test('ring vs mesh on fp16 differ; a fixed order makes them equal', async () => {
  const page = await context.newPage();
  await page.goto(`${BASE}/?v=1&topo=910b-8&op=allreduce&algo=ring&dtype=fp16&bytes=64KiB&seed=1`);
  await page.waitForSelector('#det-count');
  await page.selectOption('#det-versus', 'mesh');
  await page.waitForFunction(() => document.querySelector('#det-count')?.textContent.includes('mesh'));
  const [differ, n] = await count(page);
  assert.equal(n, 32768);
  assert.ok(differ > 0, `${differ}`);
  assert.match(await page.textContent('#det-orders'), /\(r0 \+ \(r7/);
  await page.check('#det-fixed');
  await page.waitForSelector('#det-cost');
  const [fixedDiffer] = await count(page);
  assert.equal(fixedDiffer, 0);
  await page.locator('#determinism').screenshot({ path: 'docs/determinism.png' });
});

test('avg on an HCCL machine says HCCL has none', async () => {
  const page = await context.newPage();
  await page.goto(`${BASE}/?v=1&topo=910b-8&op=allreduce&redop=avg`);
  await page.waitForSelector('#redop-note');
  assert.match(await page.textContent('#redop-note'), /HCCL has no avg/);
});

test('a large message is compared on its first elements, and the card says so', async () => {
  const page = await context.newPage();
  await page.goto(`${BASE}/?v=1&topo=910b-8&op=allreduce&algo=ring&dtype=fp16&bytes=16MiB&seed=1`);
  await page.waitForSelector('#det-count');
  const [, n] = await count(page);
  assert.equal(n, 262144);
  assert.match(await page.textContent('#det-sampled'), /first 262144 of its 8388608 elements/);
  // A small message is compared whole: no such words.
  await page.goto(`${BASE}/?v=1&topo=910b-8&op=allreduce&algo=ring&dtype=fp16&bytes=64KiB&seed=1`);
  await page.waitForSelector('#det-count');
  assert.equal(await page.locator('#det-sampled').count(), 0);
  await page.close();
});
