// End-to-end: how long are the links people copy? Records, in
// tests/e2e/out/measurements.txt, the length of the default page's link,
// of a link carrying a fitted profile (the Polaris 2-node log, "Use this
// profile for the model") and of links carrying a custom topology (the
// 4-device example, and two 8-GPU servers with their NVSwitches and a NIC
// fabric: 16 devices, 3 switches, 32 links). A chat pastes ~2000
// characters without trouble; the test asserts the default is far below it
// and records the rest as they are. Also: a link from a newer format
// (`v=99`) opens, with a notice naming the version it was read as.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { BASE, launchChromium, watch, runResult as final } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });
const POLARIS = readFileSync(
  new URL('../fixtures/polaris-2.18/n2_all_reduce.txt', import.meta.url), 'utf8');

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

// Two DGX-like servers: each GPU on its server's NVSwitch and, through its
// NIC, on one RoCE fabric.
const SIXTEEN = (() => {
  const devices = [];
  const links = [];
  for (let g = 0; g < 16; g++) {
    const s = Math.floor(g / 8);
    // `server` only where it is not the default 0: the link writes the
    // topology in that canonical form, and the test compares it back.
    devices.push(s ? { id: `s${s}g${g % 8}`, server: s } : { id: `s${s}g${g % 8}` });
    links.push({ a: `s${s}g${g % 8}`, b: `nvs${s}`, kind: 'nvlink', bandwidth_gbps: 450, latency_us: 0.7 });
    links.push({ a: `s${s}g${g % 8}`, b: 'roce', kind: 'roce', bandwidth_gbps: 50, latency_us: 3.5 });
  }
  return {
    name: '2x8-dgx',
    title: '2 servers × 8 GPUs: NVSwitch inside, 400G RoCE between',
    devices,
    switches: [{ id: 'nvs0' }, { id: 'nvs1', server: 1 }, { id: 'roce' }],
    links,
    reduce_gbps: 300,
  };
})();

let browser;
let context;
const problems = [];
before(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(BASE).origin });
});
after(async () => { await browser?.close(); });

async function open(url) {
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(url);
  return page;
}

/** The link "Copy link" puts on the clipboard. */
async function copied(page) {
  await page.click('#copy-link');
  await page.waitForSelector('.copy-ok');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(link, await page.locator('#share-link').inputValue());
  return link;
}

const lengths = {};
function record(what, link) {
  lengths[what] = link.length;
  const query = link.length - link.indexOf('?');
  appendFileSync(`${OUT}measurements.txt`,
    `${new Date().toISOString()} share link length, ${what}: ${link.length} characters (${query} after the path)\n`);
}

test('the copied links, measured', { timeout: 300_000 }, async () => {
  problems.length = 0;
  const page = await open(`${BASE}/`);
  await final(page);
  const base = await copied(page);
  record('default page', base);
  assert.ok(base.length < 300, `${base.length}: ${base}`);

  await page.fill('#log-input', POLARIS);
  await page.click('#use-profile');
  await final(page, { topo: 'measured', ranks: '8' });
  const prof = await copied(page);
  assert.match(prof, /[?&]profile=/);
  record('fitted profile (Polaris 2 nodes, topo=measured)', prof);
  await page.close();

  for (const [what, topo] of [['custom topology, 4 devices', FOUR], ['custom topology, 16 devices', SIXTEEN]]) {
    const p = await open(`${BASE}/?v=1&op=allreduce&bytes=256KiB`);
    await final(p, { topo: '910b-8' });
    await p.fill('#topology-input', JSON.stringify(topo, null, 2));
    await p.click('#use-topology');
    await final(p, { topo: 'custom', ranks: String(topo.devices.length) });
    const link = await copied(p);
    assert.match(link, /[?&]topology=/);
    record(what, link);
    // It opens back to the same machine.
    const p2 = await open(link);
    await final(p2, { topo: 'custom', ranks: String(topo.devices.length) });
    assert.deepEqual(JSON.parse(await p2.inputValue('#topology-input')), topo);
    await p2.close();
    await p.close();
  }
  console.log(JSON.stringify(lengths));
  // Where the length goes: the JSON values, percent-encoded.
  for (const [what, link] of [['profile', prof]]) {
    const v = new URL(link).searchParams.get(what);
    console.log(`${what}: ${v.length} characters of JSON, ${encodeURIComponent(v).length} percent-encoded`);
  }
  assert.deepEqual(problems, []);
});

test('a link from a newer format opens, with a notice naming its version', async () => {
  problems.length = 0;
  const page = await open(`${BASE}/?v=99&op=allgather&bytes=64KiB&ranks=4`);
  await final(page, { op: 'allgather', ranks: '4' });
  const notice = await page.textContent('#config-error');
  assert.match(notice, /v=99|99/, notice);
  appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} a v=99 link: ${notice.replace(/\s+/g, ' ').trim()}\n`);
  console.log(notice.replace(/\s+/g, ' ').trim());
  assert.deepEqual(problems, []);
  await page.close();
});
