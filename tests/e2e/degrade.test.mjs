// End-to-end: slow ranks and broken links on the drawn machine
// (engine::degrade). Not the worker-failure injection of faults.test.mjs.
// - A slow-rank link (slow=3:0.5) and a failed-link link (down=0-1) each
//   change the estimate against the healthy link, say healthy vs faulty
//   time in #estimate-faults, change the timeline (waits drawn and listed
//   in #fault-waits; the relayed route), mark the drawing, and the real
//   run on the workers still verifies (same schedule, same data).
// - The card's controls write the same keys into the link; a bad value is
//   named with what is allowed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { BASE, launchChromium } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });

let browser;
let page;
const problems = [];
before(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
});
after(async () => { await browser?.close(); });

/** Opens `query`, waits for #run-result to settle; returns its data-*. */
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

const estimateUs = async () => Number((await page.locator('#estimate-us').innerText()).replace(/[^0-9.]/g, ''));
/** The timeline's bars and waits, as text (changes when the timing does). */
const timeline = () => page.$eval('#gantt svg', (el) => ({
  bars: [...el.querySelectorAll('.gbar')].map((b) => `${b.getAttribute('x')}:${b.getAttribute('width')}`).join(' '),
  waits: el.querySelectorAll('.gwait').length,
}));

const RING = 'v=1&op=allreduce&algo=ring&topo=910b-8&bytes=16MiB&dtype=fp32&ranks=8&seed=1';
const MESH = 'v=1&op=allreduce&algo=mesh&topo=910b-8&bytes=16MiB&dtype=fp32&ranks=8&seed=1';

test('a slow rank slows every step, the others wait for it, and the run still verifies', async () => {
  const healthy = await settle(RING);
  assert.equal(healthy.state, 'verified', healthy.error);
  const tHealthy = await estimateUs();
  await page.locator('#gantt .gantt-by button', { hasText: 'by rank' }).click();
  const tlHealthy = await timeline();
  assert.equal(tlHealthy.waits, 0);
  assert.equal(await page.locator('#estimate-faults').count(), 0);

  const slow = await settle(`${RING}&slow=3:0.5`);
  assert.equal(slow.state, 'verified', slow.error);
  const tSlow = await estimateUs();
  // 14 steps of α + (S/8)/(B/2) instead of α + (S/8)/B (tests/degrade.rs).
  const want = 14 * (3.4 + 2097152 / 9150);
  assert.ok(Math.abs(tSlow - want) / want < 1e-3, `${tSlow} vs ${want}`);
  assert.ok(tSlow > 1.9 * tHealthy, `${tSlow} vs ${tHealthy}`);
  const line = await page.locator('#estimate-faults').innerText();
  assert.match(line, /slow=3:0\.5/);
  assert.match(line, /healthy machine \(×1\.9\d\)/, line);
  const tl = await timeline();
  assert.notEqual(tl.bars, tlHealthy.bars);
  assert.ok(tl.waits >= 14 * 6, `waits drawn: ${tl.waits}`);
  const waits = await page.locator('#fault-waits li').allInnerTexts();
  assert.equal(waits.length, 8);
  assert.match(waits[0], /^Step 1: 6 ranks wait up to [\d.]+ µs for rank 3 \(3→4 ends the step\)\./, waits[0]);
  assert.match(await page.locator('#fault-waits').innerText(), /and 6 more steps/);
  assert.equal(await page.locator('#topology .node.slow').count(), 1);
  assert.match(await page.locator('#drawing-text').textContent(), /degraded: slow=3:0\.5/);
  await page.screenshot({ path: `${OUT}degrade-slow.png`, fullPage: false });
  assert.deepEqual(problems, []);
});

test('a failed link on the mesh routes through a third NPU, costs time, and the run still verifies', async () => {
  const healthy = await settle(MESH);
  assert.equal(healthy.state, 'verified', healthy.error);
  const tHealthy = await estimateUs();
  const tlHealthy = await timeline();
  const down = await settle(`${MESH}&down=0-1`);
  assert.equal(down.state, 'verified', down.error);
  const tDown = await estimateUs();
  // Two steps of α + 2c/B instead of α + c/B.
  const want = 2 * (3.4 + 2 * 2097152 / 18300);
  assert.ok(Math.abs(tDown - want) / want < 1e-3, `${tDown} vs ${want}`);
  assert.ok(tDown > tHealthy);
  assert.match(await page.locator('#estimate-faults').innerText(), /down=0-1/);
  assert.notEqual((await timeline()).bars, tlHealthy.bars);
  // The drawing: the failed link dashed red, with its text.
  const d = page.locator('#topology .link-g.down');
  assert.equal(await d.count(), 1);
  assert.match(await d.locator('title').textContent(), /NPU0–NPU1 is down/);
  // HCCL's rule sees no full mesh any more: auto would run ring.
  assert.match(await page.locator('#auto-reason').innerText(), /auto would run ring/);
  await page.locator('#faults').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${OUT}degrade-down.png`, fullPage: false });
  assert.deepEqual(problems, []);
});

test('the card writes the keys into the link and names a bad value', async () => {
  await settle(RING);
  await page.locator('#fault-example-slow').click();
  await page.waitForSelector('#estimate-faults');
  // The address bar is written a task after the change (ui/app.rs `store`).
  await page.waitForURL(/[?&]slow=3%3A0\.5(&|$)/);
  assert.match(page.url(), /[?&]slow=3%3A0\.5(&|$)/);
  await page.fill('#fault-down', '0-1, 2-5');
  await page.locator('#fault-down').dispatchEvent('change');
  await page.waitForFunction(() => /down=0-1,2-5/.test(document.querySelector('#estimate-faults')?.innerText ?? ''));
  await page.fill('#fault-late', '3:-5');
  await page.locator('#fault-late').dispatchEvent('change');
  const err = await page.locator('#faults .inline-error').innerText();
  assert.match(err, /^late=3:-5: RANK:VALUE/, err);
  assert.match(err, /0\.\.=1000000/);
  await page.locator('#fault-clear').click();
  await page.waitForFunction(() => !document.querySelector('#estimate-faults'));
  await page.waitForFunction(() => !/slow=|down=/.test(location.search));
  assert.doesNotMatch(page.url(), /slow=|down=/);
  assert.deepEqual(problems, []);
});
