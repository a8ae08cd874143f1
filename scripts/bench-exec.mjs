// The browser half of scripts/bench-exec.sh: opens one page link in headless
// Chromium `--reps` times (a fresh page each time, so workers start anew),
// waits until the run is verified, and reads the workers' wall time the page
// reports (#run-result data-wall-ms: spawning the workers to the last rank's
// output, checking excluded; src/runtime/browser/pool.rs) and, when the
// workers report it, the collective's own wall (data-collective-ms: the last
// rank's start of step 0 ... the last rank's end, inputs and wasm start-up
// excluded, the span MPI_Allreduce timing covers).
//
// Usage: node scripts/bench-exec.mjs --base http://127.0.0.1:8091 \
//          --link '?v=1&op=allreduce&algo=ring&topo=910b-8&bytes=64MiB&dtype=fp32' --reps 5
// Prints one line per rep and a summary line
//   browser <link>: wall median <ms> (min .. max) collective median <ms> (min .. max) over <n> reps
import { chromium } from 'playwright-core';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const base = arg('base', process.env.BASE_URL ?? 'http://127.0.0.1:8091');
const link = arg('link', '?v=1&op=allreduce&algo=ring&topo=910b-8&bytes=64MiB&dtype=fp32&seed=1');
const reps = Number(arg('reps', '5'));
if (!Number.isInteger(reps) || reps < 1) {
  console.error(`--reps: \`${arg('reps')}\` is not a whole number of runs (1 or more)`);
  process.exit(2);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const fmt = (xs) => xs.length
  ? `median ${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)} .. ${Math.max(...xs).toFixed(1)})`
  : 'not reported';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const walls = [];
const collectives = [];
try {
  for (let i = 0; i < reps; i++) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/${link}`);
    await page.waitForFunction(() => {
      const s = document.querySelector('#run-result')?.getAttribute('data-state');
      return s && !['idle', 'running'].includes(s);
    }, null, { timeout: 300_000, polling: 50 });
    const r = await page.$eval('#run-result', (el) => ({
      state: el.getAttribute('data-state'),
      wall: Number(el.getAttribute('data-wall-ms')),
      collective: Number(el.getAttribute('data-collective-ms')),
      workers: navigator.hardwareConcurrency,
    }));
    await page.close();
    if (r.state !== 'verified' || errors.length) {
      console.error(`rep ${i + 1}: the run ended \`${r.state}\`, not verified ${errors.join('; ')}`);
      process.exit(1);
    }
    walls.push(r.wall);
    if (Number.isFinite(r.collective) && r.collective > 0) collectives.push(r.collective);
    console.log(`rep ${i + 1}: wall ${r.wall.toFixed(1)} ms, collective ${Number.isFinite(r.collective) ? r.collective.toFixed(1) : '-'} ms (hardwareConcurrency ${r.workers})`);
  }
} finally {
  await browser.close();
}
console.log(`browser ${link}: wall ${fmt(walls)}; collective ${fmt(collectives)} over ${reps} reps`);
