// End-to-end: the "Tuning you can paste" card (ui/tune_card.rs,
// engine/tune.rs): on h100-8 the tuner plugin CSV parses line by line as
// the plugin's README defines it; the NCCL_ALGO / NCCL_PROTO lines as
// tuning.cc's parseList grammar; on one 910B server HCCL_ALGO says there
// is nothing to set.
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

const CSV = /^(broadcast|reduce|allgather|reducescatter|allreduce),(\d+),(\d+),(tree|ring|collnet_direct|collnet_chain|nvls|nvls_tree|pat),(ll|ll128|simple)(,-?\d+){3,5}$/;
const ENV = /^NCCL_(ALGO|PROTO)=(Broadcast|Reduce|AllGather|ReduceScatter|AllReduce):(\^?)([A-Za-z0-9]+)(,[A-Za-z0-9]+)*$/;

test('the tuning text parses as each library syntax', async () => {
  const page = await context.newPage();
  await page.goto(`${BASE}/?v=1&topo=h100-8&op=allreduce`);
  await page.waitForSelector('#tune-text');
  const csv = (await page.textContent('#tune-text')).split('\n').filter((l) => l && !l.startsWith('#'));
  assert.ok(csv.length >= 1);
  let next = 0;
  for (const line of csv) {
    const m = line.match(CSV);
    assert.ok(m, line);
    assert.equal(Number(m[2]), next, line);
    next = Number(m[3]) + 1;
  }
  await page.click('#tune-format');
  await page.waitForFunction(() => document.querySelector('#tune-text')?.textContent.includes('NCCL_ALGO='));
  const env = (await page.textContent('#tune-text')).split('\n').filter((l) => l && !l.startsWith('#'));
  assert.ok(env.length >= 1);
  for (const line of env) assert.match(line, ENV);
  await page.goto(`${BASE}/?v=1&topo=910b-8&op=allreduce`);
  await page.waitForSelector('#tune-text');
  assert.match(await page.textContent('#tune-text'), /on one server there is nothing to set/);
});
