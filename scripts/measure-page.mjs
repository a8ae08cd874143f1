#!/usr/bin/env node
// Measures how responsive the page is, in Debian's Chromium
// driven by playwright-core, against a served page:
//
//   node scripts/measure-page.mjs --base http://127.0.0.1:8092 [--json out.json] [--only NAME,..]
//
// For each heavy link it loads the page and records the longest main-thread
// task (PerformanceObserver `longtask`, tasks over 50 ms) per page state:
// `load` (navigation until the estimate shows a number), `run+check` (from
// then until #run-result leaves `running`: the worker run and the checks).
// At 1024 ranks it also times the estimate after a control change (every
// algorithm of the #algo select, the size slider): from the event until #estimate-us shows
// a new number, and until the frame after it. At 64 ranks it plays the
// animation and records requestAnimationFrame frame times (median and
// 95th percentile, i.e. the 5th-percentile frame rate).
//
// Figures, not assertions: these machines are noisy, so nothing here
// passes or fails on a time. tests/e2e/responsive.test.mjs runs the same
// code and asserts only that every state is reached.
import { launchChromium } from '../tests/e2e/browser.mjs';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The heavy links (the most ranks, bytes, slices and compression a page
 *  draws or models), plus the default page and 64 ranks. */
export const LINKS = [
  ['default', ''],
  ['64 ranks', '?topo=910b-8x8&ranks=64'],
  ['128 ranks 1 GiB', '?topo=910b-16x8&ranks=128&bytes=1GiB&op=allreduce'],
  ['1024 ranks 1 GiB', '?topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce'],
  ['1024 ranks 1 GiB ring', '?topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce&algo=ring'],
  ['1024 ranks 1 GiB slices=2', '?topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce&slices=2'],
  ['8 x 64 MiB', '?ranks=8&bytes=64MiB&dtype=fp32'],
  ['8 x 128 MiB', '?ranks=8&bytes=128MiB&dtype=fp32'],
  ['64 x 16 MiB', '?topo=910b-8x8&ranks=64&bytes=16MiB&dtype=fp32'],
  ['fp8 compressed 32 MiB', '?dtype=fp16&bytes=32MiB&compress=fp8e4m3&placement=hop&block=32&scale=fp32'],
];

/** Installed before the page's scripts: the longtask log and state times. */
function instrument() {
  window.__longtasks = [];
  window.__marks = {};
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longtasks.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch (e) { window.__longtasks = null; }
  const mark = (k) => { if (window.__marks[k] === undefined) window.__marks[k] = performance.now(); };
  const look = () => {
    // The page drew while its plan was made in the planner worker.
    if (document.querySelector('#planning')) mark('planning');
    const est = document.querySelector('#estimate-us')?.textContent ?? '';
    if (/\d/.test(est)) mark('estimate');
    const s = document.querySelector('#run-result')?.getAttribute('data-state');
    if (s && s !== 'idle' && s !== 'running') mark('final');
  };
  new MutationObserver(look).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
}

const number = (s) => (/\d/.test(s ?? '') ? Number(String(s).replace(/[^0-9.]/g, '')) : null);

/** The longest task in [from, to) of `tasks`, ms (0 if none over 50 ms). */
const longest = (tasks, from, to) => tasks
  .filter((t) => t.start >= from && t.start < to)
  .reduce((m, t) => Math.max(m, t.ms), 0);

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null;
};

/**
 * Changes control `sel` to `value` in the page and times the estimate:
 * `dom` until #estimate-us shows a number other than `before`, `frame`
 * until the animation frame after that. Resolves null after 120 s.
 */
function changeAndTime([sel, value, kind]) {
  const before = document.querySelector('#estimate-us')?.textContent;
  return new Promise((resolve) => {
    let done = false;
    const t0 = performance.now();
    const check = () => {
      const now = document.querySelector('#estimate-us')?.textContent;
      if (done || !/\d/.test(now ?? '') || now === before) return;
      done = true;
      const dom = performance.now() - t0;
      mo.disconnect();
      requestAnimationFrame(() => resolve({ dom, frame: performance.now() - t0, text: now }));
    };
    const mo = new MutationObserver(check);
    mo.observe(document.body, { subtree: true, childList: true, characterData: true });
    setTimeout(() => { if (!done) { done = true; mo.disconnect(); resolve(null); } }, 120_000);
    const el = document.querySelector(sel);
    el.value = value;
    el.dispatchEvent(kind === 'input'
      ? new InputEvent('input', { bubbles: true })
      : new Event('change', { bubbles: true }));
    check();
  });
}

/** requestAnimationFrame intervals over `ms` of wall time. */
function frameTimes(ms) {
  return new Promise((resolve) => {
    const out = [];
    let last = null;
    const t0 = performance.now();
    const f = (t) => {
      if (last !== null) out.push(t - last);
      last = t;
      if (t - t0 < ms) requestAnimationFrame(f); else resolve(out);
    };
    requestAnimationFrame(f);
  });
}

/**
 * Loads `query` and measures it. Returns { name, query, estimateMs,
 * finalMs, state, load, run, after, total, changes?, frames? } (ms;
 * `load` / `run` the longest task of that state). A page that does not
 * reach a state within `timeout` ms is reported with `timedOut`.
 */
export async function measureLink(browser, base, name, query, { timeout = 180_000, changes = false, frames = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.addInitScript(instrument);
  const out = { name, query, problems };
  const t0 = Date.now();
  try {
    await page.goto(`${base}/${query}`, { timeout });
    await page.waitForFunction(() => window.__marks?.final !== undefined && window.__marks?.estimate !== undefined,
      null, { timeout: Math.max(1000, timeout - (Date.now() - t0)), polling: 100 });
  } catch (e) {
    out.timedOut = Date.now() - t0;
    // The page may be blocked: do not wait for it to close.
    await Promise.race([context.close(), new Promise((r) => setTimeout(r, 5000))]);
    return out;
  }
  // Let the last tasks of the run settle.
  await page.waitForTimeout(1500);
  const snap = await page.evaluate(() => ({
    marks: window.__marks,
    tasks: window.__longtasks,
    state: document.querySelector('#run-result')?.getAttribute('data-state'),
    estimate: document.querySelector('#estimate-us')?.textContent,
    now: performance.now(),
  }));
  const tasks = snap.tasks ?? [];
  Object.assign(out, {
    state: snap.state,
    estimateUs: number(snap.estimate),
    estimateMs: snap.marks.estimate,
    planningMs: snap.marks.planning,
    finalMs: Math.max(snap.marks.final, snap.marks.estimate),
    load: longest(tasks, 0, snap.marks.estimate),
    run: longest(tasks, snap.marks.estimate, Infinity),
    total: longest(tasks, 0, Infinity),
    longtaskSupported: snap.tasks !== null,
  });
  if (changes) {
    const algos = await page.$$eval('#algo option', (os) => os.map((o) => o.value));
    const cur = await page.$eval('#algo', (s) => s.value);
    // Back to the current choice right after the first other one: `auto`
    // after the algorithm it picks would not change the number.
    const others = algos.filter((x) => x !== cur);
    const steps = [others[0], cur, ...others.slice(1)].map((a) => ['#algo', a, 'change']);
    for (const v of ['28', '20', '29']) steps.push(['#bytes-slider', v, 'input']);
    const before = await page.evaluate(() => performance.now());
    out.changes = [];
    for (const s of steps) {
      const r = await page.evaluate(changeAndTime, s);
      out.changes.push({ control: `${s[0]}=${s[1]}`, ...(r ?? { dom: null, frame: null }) });
      // Let a run or anything the change scheduled settle before the next.
      await page.waitForTimeout(800);
    }
    const tasks2 = await page.evaluate(() => window.__longtasks ?? []);
    out.changeLongest = longest(tasks2, before, Infinity);
  }
  if (frames) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click('#btn-play');
    const before = await page.evaluate(() => performance.now());
    const ft = await page.evaluate(frameTimes, 6000);
    const tasks2 = await page.evaluate(() => window.__longtasks ?? []);
    out.frames = {
      count: ft.length,
      median: quantile(ft, 0.5),
      p95: quantile(ft, 0.95),
      max: Math.max(...ft),
      longest: longest(tasks2, before, Infinity),
    };
  }
  await context.close();
  return out;
}

const fmt = (x) => (x === null || x === undefined ? '–' : (typeof x === 'number' ? x.toFixed(0) : String(x)));

/** The figures as a Markdown table. */
export function table(results) {
  const lines = ['| link | state | estimate shown (ms) | done (ms) | longest task, load (ms) | longest task, run+check (ms) |',
    '|---|---|---:|---:|---:|---:|'];
  for (const r of results) {
    if (r.timedOut) {
      lines.push(`| ${r.name} | not done after ${(r.timedOut / 1000).toFixed(0)} s | – | – | – | – |`);
    } else {
      lines.push(`| ${r.name} | ${r.state} | ${fmt(r.estimateMs)} | ${fmt(r.finalMs)} | ${fmt(r.load)} | ${fmt(r.run)} |`);
    }
  }
  for (const r of results.filter((x) => x.changes)) {
    lines.push('', `Estimate after a control change (${r.name}):`, '',
      '| control | new number in DOM (ms) | next frame (ms) |', '|---|---:|---:|');
    for (const c of r.changes) lines.push(`| ${c.control} | ${fmt(c.dom)} | ${fmt(c.frame)} |`);
    lines.push(`| longest task over the changes | ${fmt(r.changeLongest)} | |`);
  }
  for (const r of results.filter((x) => x.frames)) {
    const f = r.frames;
    lines.push('', `Animation frames (${r.name}, playing 6 s): ${f.count} frames, median ${f.median.toFixed(1)} ms, `
      + `95th percentile ${f.p95.toFixed(1)} ms, worst ${f.max.toFixed(1)} ms, longest task ${fmt(f.longest)} ms`);
  }
  return lines.join('\n');
}

async function main() {
  const args = process.argv.slice(2);
  const arg = (k) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : undefined; };
  const base = arg('--base') ?? process.env.BASE_URL ?? 'http://127.0.0.1:8080';
  const only = arg('--only')?.split(',');
  const browser = await launchChromium();
  const results = [];
  try {
    for (const [name, query] of LINKS) {
      if (only && !only.some((o) => name.includes(o))) continue;
      const r = await measureLink(browser, base, name, query, {
        changes: name === '1024 ranks 1 GiB' || name === '128 ranks 1 GiB',
        frames: name === '64 ranks',
        timeout: Number(arg('--timeout') ?? 180_000),
      });
      results.push(r);
      console.error(JSON.stringify(r));
    }
  } finally {
    await browser.close();
  }
  console.log(`Measured ${new Date().toISOString()} against ${base}\n`);
  console.log(table(results));
  if (arg('--json')) writeFileSync(arg('--json'), JSON.stringify(results, null, 2));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => { console.error(e); process.exit(1); });
}
