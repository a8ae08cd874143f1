// End-to-end fault injection: a worker that throws, one terminated mid-run,
// a lost message and a late message each end the run with a clear error
// within 2 s; the page stays responsive and the next run verifies.
//
// Faults are injected with the test-only URL key `fault` (see
// src/runtime/protocol.rs `Fault::parse`): it arms the page's first run
// only, shows #fault-banner, and is dropped from the address bar.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, appendFileSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });

let browser;
let page;
const problems = [];
before(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  watch(page, problems, { console: false });
  // Every change of #run-result's state, with the page's own clock.
  await page.addInitScript(() => {
    window.__states = [];
    const note = () => {
      const s = document.querySelector('#run-result')?.getAttribute('data-state');
      const last = window.__states[window.__states.length - 1];
      if (s && (!last || last[0] !== s)) window.__states.push([s, performance.now()]);
    };
    new MutationObserver(note).observe(document, {
      subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'],
    });
  });
});
after(async () => { await browser?.close(); });

const state = () => page.$eval('#run-result', (el) => el.getAttribute('data-state')).catch(() => null);

/** Polls until #run-result's state satisfies `pred`; returns [state, ms waited]. */
async function waitState(pred, timeout = 30_000) {
  const t0 = Date.now();
  for (;;) {
    const s = await state();
    if (s && pred(s)) return [s, Date.now() - t0];
    if (Date.now() - t0 > timeout) throw new Error(`state still ${s} after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

const LINK = '?v=1&op=allreduce&algo=ring&ranks=4&bytes=64KiB&dtype=fp32&seed=3';
const faults = [
  ['throw:rank=2:step=1', /rank 2.*(injected fault|throws)/i],
  ['kill:rank=1:step=1', /no progress for \d+ ms: .*waits for rank 1/i],
  // A lost message mid-run: the sender's next message overtakes it and the
  // receiver names the step it expected.
  ['drop:rank=3:step=1', /from rank 3: expected step 1/i],
  // The last message lost (ring AllReduce on 4 ranks has steps 0..5):
  // nothing overtakes it, every rank waits, the stall watchdog ends the run.
  ['drop:rank=3:step=5', /no progress for \d+ ms: .*waits for rank 3/i],
  // A late message either leaves every rank waiting (stall) or overtaken by
  // the sender's next message (the receiver names the step it expected).
  ['delay:rank=2:step=1:ms=8000', /no progress for \d+ ms|expected step 1/i],
];

for (const [fault, words] of faults) {
  test(`fault ${fault}: error within 2 s, page responsive, next run verifies`, async () => {
    problems.length = 0;
    await page.goto(`${BASE}/${LINK}&fault=${fault}`);
    await page.locator('#fault-banner').waitFor();
    assert.match(await page.locator('#fault-banner').innerText(), /fault injected/i);
    const [s] = await waitState((s) => !['idle', 'running'].includes(s), 10_000);
    assert.equal(s, 'error', `state ${s}`);
    // From the moment the run started (workers spawned) to the error.
    const states = await page.evaluate(() => window.__states);
    const start = states.find(([st]) => st === 'running');
    const end = states.find(([st]) => st === 'error');
    assert.ok(start && end, JSON.stringify(states));
    const ms = Math.round(end[1] - start[1]);
    assert.ok(ms <= 2000, `error after ${ms} ms (> 2 s)`);
    appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} fault ${fault}: run start to error ${ms} ms\n`);
    const text = await page.locator('#run-result').innerText();
    assert.match(text, words, text);
    assert.ok(!page.url().includes('fault='), `fault is not kept in the link: ${page.url()}`);
    // Responsive: the page answers at once, and a control still works.
    const t = Date.now();
    await page.evaluate(() => document.title);
    assert.ok(Date.now() - t < 500, 'page answers');
    await page.locator('#rerun').click();
    const [again] = await waitState((s) => !['idle', 'running', 'error'].includes(s), 30_000);
    assert.equal(again, 'verified', 'the next run (no fault) verifies');
    assert.deepEqual(problems, []);
  });
}

test('a malformed fault is a config error and injects nothing', async () => {
  problems.length = 0;
  await page.goto(`${BASE}/${LINK}&fault=explode:rank=1`);
  const [s] = await waitState((s) => !['idle', 'running'].includes(s));
  assert.equal(s, 'verified');
  const msg = await page.locator('#config-error').innerText();
  assert.ok(msg.includes('fault') && msg.includes('explode:rank=1'), msg);
  assert.equal(await page.locator('#fault-banner').count(), 0);
  assert.deepEqual(problems, []);
});
