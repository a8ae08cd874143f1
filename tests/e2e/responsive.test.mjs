// End-to-end: the page-responsiveness measurement (scripts/measure-page.mjs)
// runs on a few of its links and reaches every state it measures.
// It asserts what the page does, never how long it took: the figures are
// printed (docs/performance.md has the latest), since timings are noisy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launchChromium } from './browser.mjs';
import { measureLink, table } from '../../scripts/measure-page.mjs';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

test('a checked 8-rank run: estimate, run and check all reached, long tasks observed', async () => {
  const r = await measureLink(browser, BASE, '8 x 64 MiB', '?ranks=8&bytes=64MiB&dtype=fp32');
  console.log(table([r]));
  assert.equal(r.timedOut, undefined);
  assert.equal(r.state, 'verified');
  assert.ok(r.estimateUs > 0);
  assert.equal(r.longtaskSupported, true, 'PerformanceObserver longtask is available');
  assert.deepEqual(r.problems, []);
});

test('64 ranks: the animation plays and frames are counted', async () => {
  const r = await measureLink(browser, BASE, '64 ranks', '?topo=910b-8x8&ranks=64', { frames: true });
  console.log(table([r]));
  assert.equal(r.state, 'verified');
  assert.ok(r.frames.count > 0);
  assert.deepEqual(r.problems, []);
});

test('128 ranks is model-only and a control change shows a new estimate', async () => {
  const r = await measureLink(browser, BASE, '128 ranks 1 GiB',
    '?topo=910b-16x8&ranks=128&bytes=1GiB&op=allreduce', { changes: true });
  console.log(table([r]));
  assert.equal(r.state, 'model-only');
  assert.ok(r.changes.length > 0);
  for (const c of r.changes) assert.ok(c.dom !== null, `${c.control} changed the estimate`);
  assert.deepEqual(r.problems, []);
});

// 1024 ranks once ran the page's wasm out of memory (the determinism card
// compared the 1024-rank schedules on real data): now it loads, shows an
// estimate, the ranking and the chart, and the determinism card says why it
// does not compare (field, value, what is allowed), with no page error.
test('1024 ranks loads: estimate, ranking, chart, and no error', async () => {
  const r = await measureLink(browser, BASE, '1024 ranks 1 GiB',
    '?topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce', { timeout: 600_000 });
  console.log(table([r]));
  assert.equal(r.timedOut, undefined);
  assert.equal(r.state, 'model-only');
  assert.ok(r.estimateUs > 0);
  // The plan is made in the planner worker: the page drew its placeholder
  // first, then the estimate replaced it.
  assert.ok(r.planningMs !== undefined && r.planningMs < r.estimateMs, `planning ${r.planningMs}, estimate ${r.estimateMs}`);
  assert.deepEqual(r.problems, []);
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${BASE}/?topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce`);
  await page.waitForSelector('table.ranking tbody tr', { timeout: 600_000 });
  assert.ok(await page.locator('table.ranking tbody tr').count() >= 3);
  await page.waitForSelector('.chart-svg', { timeout: 600_000 });
  assert.ok(Number(await page.getAttribute('.chart-svg', 'data-curves')) >= 3);
  assert.match(await page.textContent('#det-error'), /ranks=1024: the determinism comparison runs on 2\.\.=64 ranks/);
  assert.equal(await page.locator('#url-errors .inline-error, .inline-error:not(#det-error)').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

// slices=2 at 1024 ranks once never showed an estimate (Bruck's sliced
// simulation ran for minutes): the sliced simulation now stops at the
// engine's work budget (cost::SLICE_WORK_BUDGET), so nb's estimate is the
// unsliced one (114 469 µs, what `cclsim predict --algo nb --slices 1`
// prints), every ranking row arrives, and the slicing line says why.
test('1024 ranks, nb, slices=2: the work budget caps it, estimate and ranking arrive', async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${BASE}/?topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce&algo=nb&slices=2`);
  await page.waitForSelector('table.ranking tbody tr', { timeout: 600_000 });
  assert.equal((await page.textContent('#estimate-us')).replace(/\D/g, ''), '114469');
  assert.ok(await page.locator('table.ranking tbody tr').count() >= 3);
  assert.match(await page.textContent('body'),
    /slices=2, as set; capped to 1: the pipelined simulation of 2 slices needs more than 2000000 flow updates/);
  assert.deepEqual(problems, []);
  await context.close();
});

/** cclsim's prediction at 1024 ranks (910b-128x8, AllReduce), with `args`. */
function cclsim1024(...args) {
  const bin = [join(ROOT, 'target/debug/cclsim'), join(ROOT, 'target/release/cclsim')].find(existsSync);
  assert.ok(bin, 'cclsim is built (cargo test builds it)');
  return JSON.parse(execFileSync(bin, ['predict', '--topo', '910b-128x8', '--ranks', '1024',
    '--op', 'allreduce', ...args, '--json'], { encoding: 'utf8' }));
}

/** The 1024-rank, 1 GiB page once its ranking is up, and its problems. */
async function open1024() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(`${BASE}/?topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce`);
  await page.waitForSelector('table.ranking tbody tr', { timeout: 600_000 });
  return { context, page, problems };
}

/** The page's estimate equals cclsim's `want`, as the page rounds it (ui/format.rs `us`). */
async function assertShown(page, want) {
  const t = want.time_us;
  const rounded = t < 10 ? t.toFixed(2) : t < 1000 ? t.toFixed(1) : t.toFixed(0);
  const shown = (await page.textContent('#estimate-us')).replace(/[^0-9.]/g, '');
  assert.equal(shown, rounded, `page ${shown} µs, cclsim ${t} µs`);
}

// A model-only plan is made in the planner worker; a newer configuration
// cancels the request for the older one (the worker is restarted if it was
// busy with it). Dragging the size slider through ten sizes at 1024 ranks
// ends on exactly what cclsim answers for the last size, never on a stale
// answer, and the page shows no error.
test('1024 ranks: a size drag ends on the estimate of the last size, as cclsim gives it', async () => {
  const want = cclsim1024('--bytes', '1MiB');
  const { context, page, problems } = await open1024();
  await page.evaluate(async () => {
    const el = document.querySelector('#bytes-slider');
    for (const v of ['29', '28', '27', '26', '25', '24', '23', '22', '21', '20']) {
      el.value = v;
      el.dispatchEvent(new InputEvent('input', { bubbles: true }));
      await new Promise((r) => setTimeout(r, 40));
    }
  });
  // The page renders a change once its plan comes (or dimmed after
  // STALE_MS): until then it still shows the previous size, not updating.
  await page.waitForFunction(() => !document.querySelector('#estimate-updating, #ranking-pending')
    && /^1 ?MiB$/.test(document.querySelector('#bytes')?.value ?? '')
    && document.querySelector('table.ranking tbody tr'), null, { timeout: 600_000, polling: 100 });
  assert.match(await page.inputValue('#bytes'), /^1 ?MiB$/);
  await assertShown(page, want);
  assert.match(await page.textContent('#estimate'), new RegExp(want.algorithm));
  assert.deepEqual(problems, []);
  await context.close();
});

// A control change at 1024 ranks is drawn when its plan comes (the page
// does not re-render in between, ui/app.rs STALE_MS), so two changes a few
// ms apart reach the App before the controls are drawn again: the second
// must start from the first (ui/latest.rs), not undo it. The size slider,
// then #algo 5 ms later: the page ends on both, with cclsim's estimate.
// (Checked to fail: with `use_latest` handing out the props' configuration
// the page ends on 1 GiB and ring.)
test('1024 ranks: two quick changes both stick (the second does not undo the first)', async () => {
  const want = cclsim1024('--bytes', '4MiB', '--algo', 'ring');
  const { context, page, problems } = await open1024();
  await page.evaluate(async () => {
    const slider = document.querySelector('#bytes-slider');
    slider.value = '22';
    slider.dispatchEvent(new InputEvent('input', { bubbles: true }));
    await new Promise((r) => setTimeout(r, 5));
    const algo = document.querySelector('#algo');
    algo.value = 'ring';
    algo.dispatchEvent(new Event('change', { bubbles: true }));
  });
  await page.waitForFunction(() => !document.querySelector('#estimate-updating, #ranking-pending')
    && /^4 ?MiB$/.test(document.querySelector('#bytes')?.value ?? '')
    && document.querySelector('#algo')?.value === 'ring'
    && document.querySelector('table.ranking tbody tr'), null, { timeout: 120_000, polling: 100 })
    .catch(() => assert.fail(`the page did not end on 4 MiB and ring: ${page.url()}`));
  const q = new URL(page.url()).searchParams;
  assert.equal(q.get('algo'), 'ring', page.url());
  assert.equal(q.get('bytes'), String(4 << 20), page.url());
  await assertShown(page, want);
  assert.deepEqual(problems, []);
  await context.close();
});

// The Gantt chart's bars and the step log's steps are drawn a slice per
// event-loop task (ui/deferred.rs `use_drawn_in_tasks`). A slice must only
// add its own items: unkeyed, yew reconciled the growing list from its end,
// so every slice re-rendered all the items before it onto new props (256–960
// `x`/`width`/`fill` patches and text changes per slice at 64 ranks, the
// last slices tasks of 80–120 ms). Checked to fail without the keys.
// A step is cut into pieces of at most 400 bars and 1 500 chips
// (`Sliced`): a 64-rank mesh step has 4 032 transfers, and drawn whole it
// made tasks of 300–600 ms.
for (const [what, query] of [['64 ranks', '?topo=910b-8x8&ranks=64'], ['64-rank mesh (2 steps of 4 032 transfers)', '?topo=910b-8x8&ranks=64&algo=mesh']]) test(`${what}: the Gantt chart and the step log grow by slices that never re-patch what is drawn`, async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(() => {
    window.__slices = { adds: { bars: 0, log: 0 }, repatched: [], removed: 0 };
    const where = (n) => {
      const e = n.nodeType === 1 ? n : n.parentElement;
      return e?.closest('#gantt .gbars') ? 'bars' : e?.closest('#step-log') ? 'log' : null;
    };
    const start = () => new MutationObserver((list) => {
      const added = { bars: false, log: false };
      for (const m of list) {
        const w = where(m.target);
        if (!w) continue;
        if (m.type === 'childList') {
          if (m.addedNodes.length) added[w] = true;
          window.__slices.removed += m.removedNodes.length;
        } else if (m.type === 'characterData' || ['x', 'y', 'width', 'fill', 'data-step'].includes(m.attributeName)) {
          // A step's highlight (`class`, `aria-current`) may change; its
          // place, size, colour and words never do.
          window.__slices.repatched.push(`${w}: ${m.type} ${m.attributeName ?? ''}`);
        }
      }
      for (const w of ['bars', 'log']) if (added[w]) window.__slices.adds[w] += 1;
    }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
  });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${BASE}/${query}`);
  // Everything drawn: one log entry per step plus the initial state, and
  // one bar per transfer (the chart is by rank at 64 ranks).
  await page.waitForFunction(() => {
    const m = /(\d+)\D+(\d+)/.exec(document.querySelector('.step-log .card-head .muted')?.textContent ?? '');
    return m && document.querySelectorAll('#step-log > li').length === Number(m[1]) + 1
      && document.querySelectorAll('#gantt .gbars rect.gbar').length === Number(m[2]);
  }, null, { timeout: 120_000, polling: 100 });
  const s = await page.evaluate(() => window.__slices);
  const order = await page.$$eval('#step-log > li', (ls) => ls.map((l) => Number(l.dataset.step)));
  assert.ok(s.adds.bars > 1 && s.adds.log > 1, `drawn in slices: ${JSON.stringify(s.adds)}`);
  assert.deepEqual(s.repatched.slice(0, 5), [], `${s.repatched.length} re-patches`);
  assert.equal(s.removed, 0);
  assert.deepEqual(order, order.map((_, k) => k), 'the log lists its steps in order');
  // Every chip of every step, in pieces of at most 1 500 and bars in
  // groups of at most 400.
  const m = /(\d+)\D+(\d+)/.exec(await page.textContent('.step-log .card-head .muted'));
  assert.equal(await page.locator('#step-log .xfer').count(), Number(m[2]));
  const groups = await page.$$eval('#gantt .gbars > g.gstep-bars', (gs) => gs.map((g) => g.children.length));
  assert.ok(Math.max(...groups) <= 400, `bars per group: ${groups}`);
  // The current step is its groups' class, on every group of the step.
  await page.click('#btn-forward');
  await page.waitForFunction(() => document.querySelectorAll('#gantt .gstep-bars.current').length > 0);
  const current = await page.$$eval('#gantt .gstep-bars.current', (gs) => gs.reduce((n, g) => n + g.children.length, 0));
  const first = await page.$$eval('#step-log > li[data-step="1"] .xfer', (cs) => cs.length);
  assert.equal(current, first, 'the current groups hold step 1\'s bars');
  assert.deepEqual(problems, []);
  await context.close();
});

// Above 8 servers each server is one box (ui/topology_view.rs
// `ServerPiece`): at 1 024 servers (8 192 ranks) the drawing is 9 232 SVG
// elements, and drawn at once it was a task of 140–230 ms. It comes 128
// servers a task, each slice adding its own boxes and trunks.
test('8 192 ranks: the 1 024 server boxes come in slices that only add', async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(() => {
    window.__boxes = { adds: 0, removed: 0, repatched: 0 };
    const start = () => new MutationObserver((list) => {
      let added = false;
      for (const m of list) {
        const e = m.target.nodeType === 1 ? m.target : m.target.parentElement;
        if (!e?.closest('#topology .boxes, #topology .ports')) continue;
        if (m.type === 'childList') {
          if ([...m.addedNodes].some((n) => n.nodeType === 1)) added = true;
          window.__boxes.removed += m.removedNodes.length;
        } else window.__boxes.repatched += 1;
      }
      if (added) window.__boxes.adds += 1;
    }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
  });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${BASE}/?topo=910b-1024x8&ranks=8192&bytes=1GiB&op=allreduce&algo=ring`);
  await page.waitForFunction(() => document.querySelectorAll('#topology .server-box.collapsed').length === 1024
    && document.querySelectorAll('#topology .link.trunk').length === 1024, null, { timeout: 120_000, polling: 100 });
  const b = await page.evaluate(() => window.__boxes);
  assert.ok(b.adds >= 8, `drawn in slices: ${JSON.stringify(b)}`);
  assert.equal(b.removed, 0);
  assert.equal(b.repatched, 0);
  // In order: the last box is server 1023, ranks 8184–8191.
  assert.equal(await page.textContent('#topology .server-box.collapsed:last-child .box-sub'), 'r8184–8191');
  assert.deepEqual(problems, []);
  await context.close();
});

// A drawn plan whose estimate is a pipelined (sliced) simulation is made
// in the planner worker (engine `Plan::on_page`): Bruck (nb) on 64 ranks
// with slices=256 simulates up to the engine's work budget, 0.2 s natively,
// and was a 440–510 ms task at load on the main thread. The result panel
// waits for the plan, then the ranks run and verify; the estimate is
// cclsim's, the slicing line the engine's, and the Gantt chart and the
// step log are drawn from the plan that came. A plan the page makes
// itself (the default 8-rank page) never waits. (Checked to fail on the
// build before: it never waits.)
test('64 ranks, nb, slices=256: a drawn plan made in the planner worker runs, verifies and shows cclsim\'s estimate', async () => {
  const bin = [join(ROOT, 'target/debug/cclsim'), join(ROOT, 'target/release/cclsim')].find(existsSync);
  assert.ok(bin, 'cclsim is built (cargo test builds it)');
  const want = JSON.parse(execFileSync(bin, ['predict', '--topo', '910b-8x8', '--ranks', '64', '--op', 'allreduce',
    '--algo', 'nb', '--slices', '256', '--bytes', '1MiB', '--json'], { encoding: 'utf8' }));
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(() => {
    window.__waited = false;
    const start = () => new MutationObserver(() => {
      if (/Waiting for the plan/.test(document.querySelector('#run-result')?.textContent ?? '')) window.__waited = true;
    }).observe(document, { subtree: true, childList: true, characterData: true });
    if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
  });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(`${BASE}/?lang=en`);
  await page.waitForSelector('#run-result[data-state="verified"]', { timeout: 60_000 });
  assert.equal(await page.evaluate(() => window.__waited), false, 'the default plan is made on the page');
  await page.goto(`${BASE}/?topo=910b-8x8&ranks=64&op=allreduce&algo=nb&slices=256&bytes=1MiB&lang=en`);
  await page.waitForSelector('#run-result[data-state="verified"]', { timeout: 180_000 });
  assert.ok(await page.evaluate(() => window.__waited), 'the result panel waited for the plan');
  await assertShown(page, want);
  assert.match(await page.textContent('body'), /slices=256, as set; capped to 74/);
  await page.waitForSelector('table.ranking tbody tr');
  assert.ok(await page.locator('table.ranking tbody tr').count() >= 3);
  // Every step and bar of the plan that came (steps, transfers: the log's head).
  await page.waitForFunction(() => {
    const m = /(\d+)\D+(\d+)/.exec(document.querySelector('.step-log .card-head .muted')?.textContent ?? '');
    return m && Number(m[2]) > 0 && document.querySelectorAll('#step-log > li').length === Number(m[1]) + 1
      && document.querySelectorAll('#gantt .gbars rect.gbar').length === Number(m[2]);
  }, null, { timeout: 60_000, polling: 100 });
  assert.deepEqual(problems, []);
  await context.close();
});
