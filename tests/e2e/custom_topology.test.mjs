// End-to-end: a user-defined topology and a fitted profile, in the page and
// in the share link (ui/custom_topology.rs, engine/custom_topology.rs,
// `topology=` / `profile=` in engine/config.rs).
// - paste a 4-device JSON, use it: drawn (its ids on the SVG), a real run
//   verified; copy the link, open it in a new page: same topology, same
//   predicted time, same algorithm, the JSON back in the box;
// - a bad JSON: an error naming the field, the text kept as typed, the
//   previous topology still in use; a .json file loads and applies;
// - a fitted profile moves the model to the measured machine; its link
//   reproduces the profile's prediction.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import { BASE, launchChromium, watch, runResult as final } from './browser.mjs';

// 4 devices: two pairs on NVLink, a PCIe switch joining everyone.
const FOUR = {
  name: 'two-pairs',
  title: '4 GPUs: 2 NVLink pairs + a PCIe switch',
  devices: [{ id: 'gpu0' }, { id: 'gpu1' }, { id: 'gpu2' }, { id: 'gpu3' }],
  switches: [{ id: 'pcie' }],
  links: [
    { a: 'gpu0', b: 'gpu1', kind: 'nvlink', bandwidth_gbps: 100, latency_us: 2.5 },
    { a: 'gpu2', b: 'gpu3', kind: 'nvlink', bandwidth_gbps: 100, latency_us: 2.5 },
    { a: 'gpu0', b: 'pcie', kind: 'pcie', bandwidth_gbps: 24, latency_us: 1.2 },
    { a: 'gpu1', b: 'pcie', kind: 'pcie', bandwidth_gbps: 24, latency_us: 1.2 },
    { a: 'gpu2', b: 'pcie', kind: 'pcie', bandwidth_gbps: 24, latency_us: 1.2 },
    { a: 'gpu3', b: 'pcie', kind: 'pcie', bandwidth_gbps: 24, latency_us: 1.2 },
  ],
};

let browser;
let context;
const problems = [];
before(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
});
after(async () => { await browser?.close(); });

async function open(url) {
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(url);
  return page;
}

const labels = (page) => page.$$eval('#topology .node-label', (xs) => xs.map((x) => x.textContent));

test('a pasted 4-device topology is drawn, runs verified, and its link reproduces it', async () => {
  problems.length = 0;
  const page = await open(`${BASE}/?v=1&op=allreduce&bytes=256KiB`);
  await final(page, { topo: '910b-8' });
  await page.fill('#topology-input', JSON.stringify(FOUR, null, 2));
  await page.click('#use-topology');
  const r = await final(page, { topo: 'custom', ranks: '4' });
  assert.equal(r.state, 'verified', JSON.stringify(r));
  const est = Number(r['estimate-us']);
  assert.ok(est > 0, JSON.stringify(r));
  const drawn = await labels(page);
  for (const id of ['gpu0', 'gpu1', 'gpu2', 'gpu3', 'pcie']) assert.ok(drawn.includes(id), `${id} in ${drawn}`);
  assert.match(await page.textContent('#topology-status'), /In use: two-pairs — 4 devices, 1 switch, 6 links/);
  assert.match(await page.$eval('#topo', (s) => s.selectedOptions[0].textContent), /^custom — two-pairs/);
  mkdirSync('tests/e2e/out', { recursive: true });
  await page.locator('#custom-topology').screenshot({ path: 'tests/e2e/out/custom-topology-panel.png' });
  await page.screenshot({ path: 'tests/e2e/out/custom-topology-page.png', fullPage: true });

  // Copy the share link (clipboard), open it in a new page.
  await page.click('#copy-link');
  await page.waitForSelector('.copy-ok');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(link, await page.locator('#share-link').inputValue());
  assert.match(link, /[?&]topo=custom&/, link);
  assert.match(link, /&topology=%7B%22name%22%3A%22two-pairs%22/, link);
  const page2 = await open(link);
  const r2 = await final(page2, { topo: 'custom', ranks: '4' });
  assert.equal(r2.state, 'verified');
  assert.equal(r2['estimate-us'], r['estimate-us']);
  assert.equal(r2.algorithm, r.algorithm);
  assert.equal(r2['busbw-gbps'], r['busbw-gbps']);
  assert.deepEqual(await labels(page2), drawn);
  assert.deepEqual(JSON.parse(await page2.inputValue('#topology-input')), FOUR);
  assert.equal(await page2.$$eval('#config-error li', (xs) => xs.length), 0);
  // A fixed algorithm: auto on this machine (no library) is the model's
  // fastest, which the planner's ranking says; the controls name it.
  const other = r.algorithm === 'ring' ? 'mesh' : 'ring';
  await page2.selectOption('#algo', other);
  await page2.waitForFunction((a) => new RegExp(`auto would run ${a} here`).test(document.querySelector('#auto-choice')?.textContent ?? ''),
    r.algorithm, { timeout: 60_000, polling: 100 })
    .catch(async () => assert.fail(`#auto-choice: ${await page2.textContent('#auto-choice').catch(() => 'absent')}`));
  assert.deepEqual(problems, []);
  await page2.close();
  await page.close();
});

test('a bad topology names the field, keeps the text, and keeps the topology in use', async () => {
  problems.length = 0;
  const page = await open(`${BASE}/?v=1&bytes=64KiB&ranks=4`);
  await final(page, { topo: '910b-8' });
  const bad = JSON.stringify({ ...FOUR, links: FOUR.links.map((l, i) => (i === 3 ? { ...l, bandwidth_gbps: -5 } : l)) }, null, 2);
  await page.fill('#topology-input', bad);
  await page.click('#use-topology');
  const err = page.locator('#topology-error');
  await err.waitFor();
  const text = await err.textContent();
  assert.match(text, /links\[3\]\.bandwidth_gbps/, text);
  assert.match(text, /-5/, text);
  assert.match(text, /a number from 0\.001 to 1e5 GB\/s/, text);
  assert.equal(await err.getAttribute('data-field'), 'links[3].bandwidth_gbps');
  assert.equal(await page.inputValue('#topology-input'), bad);
  assert.equal(await page.getAttribute('#run-result', 'data-topo'), '910b-8');
  await page.locator('#custom-topology').screenshot({ path: 'tests/e2e/out/custom-topology-error.png' });

  // Unknown device, and text that is not JSON.
  const unknown = JSON.stringify({ ...FOUR, links: [...FOUR.links, { a: 'gpu0', b: 'gpu9', bandwidth_gbps: 1, latency_us: 1 }] });
  await page.fill('#topology-input', unknown);
  await page.click('#use-topology');
  await page.waitForFunction(() => document.querySelector('#topology-error')?.dataset.field === 'links[6].b');
  assert.match(await err.textContent(), /"gpu9".*known: gpu0, gpu1, gpu2, gpu3, pcie/);
  await page.fill('#topology-input', '{"devices": [');
  await page.click('#use-topology');
  await page.waitForFunction(() => document.querySelector('#topology-error')?.dataset.field === '(text)');
  assert.equal(await page.inputValue('#topology-input'), '{"devices": [');

  // A .json file loads into the box and is used at once.
  await page.setInputFiles('#topology-file', {
    name: 'four.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(FOUR)),
  });
  const r = await final(page, { topo: 'custom', ranks: '4' });
  assert.equal(r.state, 'verified');
  assert.equal(await page.locator('#topology-error').count(), 0);
  assert.equal(await page.inputValue('#topology-input'), JSON.stringify(FOUR));
  // Back to a preset from the list.
  await page.selectOption('#topo', 'h100-8');
  await final(page, { topo: 'h100-8' });
  await page.waitForFunction(() => !/topology=/.test(location.search));
  assert.doesNotMatch(page.url(), /topology=/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a fitted profile in the link reproduces the profile\'s prediction', async () => {
  problems.length = 0;
  const page = await open(`${BASE}/?v=1&op=allreduce&algo=ring&bytes=4MiB&ranks=8`);
  const before = await final(page, { topo: '910b-8' });
  const log = readFileSync(new URL('../fixtures/hccl_test_910b_8_allreduce_synthetic.txt', import.meta.url), 'utf8');
  await page.fill('#log-input', log);
  await page.click('#use-profile');
  await page.waitForSelector('#profile-in-use');
  await page.waitForFunction((b) => document.querySelector('#run-result')?.getAttribute('data-estimate-us') !== b,
    before['estimate-us']);
  // The model is the machine the log measured, on the log's rank count.
  const r = await final(page, { topo: 'measured', ranks: '8' });
  const link = await page.locator('#share-link').inputValue();
  assert.match(link, /topo=measured/, link);
  assert.match(link, /&profile=%7B%22source%22/, link);
  const inUse = await page.textContent('#profile-in-use');
  const page2 = await open(link);
  const r2 = await final(page2, { topo: 'measured', ranks: '8' });
  assert.equal(r2['estimate-us'], r['estimate-us']);
  assert.equal(r2['busbw-gbps'], r['busbw-gbps']);
  assert.equal(await page2.textContent('#profile-in-use'), inUse);
  // The way back from a linked profile: the default topology.
  await page2.click('#drop-profile');
  await final(page2, { topo: '910b-8', 'estimate-us': before['estimate-us'] });
  assert.doesNotMatch(page2.url(), /profile=/);
  assert.deepEqual(problems, []);
  await page2.close();
  await page.close();
});
