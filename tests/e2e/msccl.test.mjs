// End-to-end: the MSCCL card (ui/msccl_card.rs, engine/formats/msccl/).
// - each of the real MSCCL files and an MSCCL++ plan in tests/fixtures/msccl loads from a
//   file, is verified and estimated, and runs on the rank workers with
//   every rank equal to the reference bit for bit;
// - a broken file shows an error naming gpu / tb / step;
// - "Export current as MSCCL XML" downloads XML that imports back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const DIR = new URL('../fixtures/msccl/', import.meta.url).pathname;
const FILES = [
  ['msccl_allreduce_binarytree_4gpu_simple.xml', 'AllReduce', 'allreduce_binary_tree'],
  ['msccl_allreduce_ring_4gpu_4ch_simple.xml', 'AllReduce', 'allreduce_ring_4channelsperring'],
  ['msccl_ndv4_alltoall_allpairs_8gpu_ll_2ch.xml', 'AlltoAll', 'alltoall_allpairs'],
  ['mscclpp_plan_allreduce_2gpu_simple.json', 'AllReduce', 'allreduce'],
];

let browser;
let context;
const problems = [];
before(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
});
after(async () => { await browser?.close(); });

async function open(url) {
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(url);
  await page.waitForSelector('#msccl');
  return page;
}

test('the three real MSCCL files import, verify and run on the workers', async () => {
  const page = await open(`${BASE}/?v=1&topo=h100-8`);
  for (const [f, prim, name] of FILES) {
    await page.setInputFiles('#msccl-file', `${DIR}${f}`);
    // This file's summary (the previous file's card is also "verified").
    await page.waitForFunction((n) => {
      const card = document.querySelector('#msccl');
      return card?.getAttribute('data-state') === 'verified'
        && card.querySelector('.msccl-summary strong')?.textContent === n;
    }, name, { timeout: 30_000 });
    const verified = await page.textContent('#msccl-verified');
    assert.match(verified, new RegExp(`verified: every output chunk holds what ${prim} requires`), f);
    assert.match(await page.textContent('#msccl-estimate'), /Model on .*µs/, f);
    await page.click('#msccl-run');
    await page.waitForFunction(() => {
      const s = document.querySelector('#msccl-run-result')?.getAttribute('data-state');
      return s && s !== 'running';
    }, null, { timeout: 60_000 });
    const state = await page.getAttribute('#msccl-run-result', 'data-state');
    assert.equal(state, 'verified', `${f}: ${await page.textContent('#msccl-run-result')}`);
  }
  mkdirSync('tests/e2e/out', { recursive: true });
  await (await page.$('#msccl')).screenshot({ path: 'tests/e2e/out/msccl-card.png' });
  assert.deepEqual(problems, []);
});

test('a broken file names the element; export re-imports', async () => {
  const page = await open(`${BASE}/?v=1&topo=910b-8&op=allreduce&algo=ring`);
  const bad = readFileSync(`${DIR}${FILES[1][0]}`, 'utf8').replace('type="rrs"', 'type="zz"');
  await page.fill('#msccl-input', bad);
  await page.click('#msccl-import');
  await page.waitForSelector('#msccl-error');
  assert.match(await page.textContent('#msccl-error'), /gpu 0 \/ tb 2 \/ step 0: type="zz"/);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#msccl-export')]);
  assert.match(download.suggestedFilename(), /^allreduce_ring_8gpu\.xml$/);
  const path = await download.path();
  const xml = readFileSync(path, 'utf8');
  assert.match(xml, /<algo name="ring" proto="Simple"/);
  await page.fill('#msccl-input', xml);
  await page.click('#msccl-import');
  await page.waitForFunction(() => document.querySelector('#msccl')?.getAttribute('data-state') === 'verified');
  assert.match(await page.textContent('#msccl-verified'), /AllReduce requires \(14 IR steps/);
  assert.deepEqual(problems, []);
});
