// The browser half of scripts/bench-exec.sh: opens one page link in headless
// Chromium `--reps` times (a fresh page each time, so workers start anew),
// waits until the run is verified, and reads the workers' wall time the page
// reports (#run-result data-wall-ms: spawning the workers to the last rank's
// output, checking excluded; src/runtime/browser/pool.rs) and, when the
// workers report it, the collective's own wall (data-collective-ms: the last
// rank's start of step 0 ... the last rank's end, inputs and wasm start-up
// excluded, the span MPI_Allreduce timing covers).
//
// On Linux it also samples, every 50 ms while a page runs, the resident
// memory (VmRSS in /proc/PID/status) of the Chromium renderer processes this
// script started (descendants of this node process; the renderers of
// earlier reps are left out): the page and its rank workers live there.
// Reported as the peak per rep and against the rank data the run holds,
// ranks x bytes (from #run-result data-ranks and data-bytes): every rank's
// buffer for AllReduce, Broadcast and the like; AlltoAll and SendRecv hold
// about twice that, so their ratio reads about 2x high. The goal is a run's
// memory bounded by about twice its data.
//
// Usage: node scripts/bench-exec.mjs --base http://127.0.0.1:8091 \
//          --link '?v=1&op=allreduce&algo=ring&topo=910b-8&bytes=64MiB&dtype=fp32' --reps 5
// Prints one line per rep and a summary line
//   browser <link>: wall median <ms> (min .. max) collective median <ms> (min .. max) over <n> reps
import { chromium } from 'playwright-core';
import { readFileSync, readdirSync } from 'node:fs';

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

// This script's Chromium renderer processes (Linux /proc; null where /proc
// cannot be read), found by walking every process's parent: done once a
// second, not at every sample, so the sampling costs the run little.
function myRenderers() {
  let procs;
  try {
    procs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const parent = new Map();
  const renderer = [];
  for (const pid of procs) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent.set(pid, stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) renderer.push(pid);
    } catch {
      // The process ended while we looked.
    }
  }
  const mine = (pid) => {
    for (let p = pid, hops = 0; p && p !== '0' && hops < 64; p = parent.get(p), hops++) {
      if (p === String(process.pid)) return true;
    }
    return false;
  };
  return renderer.filter(mine);
}

// Resident bytes of `pids` (VmRSS, in kB whatever the page size; reading
// /proc/PID/status does not walk the page tables as smaps does), or null
// if none could be read.
function rss(pids) {
  let bytes = null;
  for (const pid of pids) {
    try {
      const kb = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
      if (kb) bytes = (bytes ?? 0) + Number(kb[1]) * 1024;
    } catch {
      // Ended.
    }
  }
  return bytes;
}

// Samples the peak resident memory of this rep's renderers until stopped.
// `earlier`: renderer PIDs of earlier reps (still exiting), left out.
function memorySampler(earlier) {
  if (myRenderers() === null) return { stop: () => null };
  let pids = [];
  let peak = null;
  let lastScan = 0;
  const sample = () => {
    const now = Date.now();
    if (now - lastScan >= 1000 || pids.length === 0) {
      pids = (myRenderers() ?? []).filter((p) => !earlier.has(p));
      lastScan = now;
    }
    const b = rss(pids);
    if (b !== null) peak = Math.max(peak ?? 0, b);
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    stop: () => {
      clearInterval(timer);
      for (const p of pids) earlier.add(p);
      return peak;
    },
  };
}
const MiB = 1024 * 1024;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const walls = [];
const collectives = [];
const peaks = [];
const earlierRenderers = new Set();
try {
  for (let i = 0; i < reps; i++) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const sampler = memorySampler(earlierRenderers);
    let peak = null;
    try {
      await page.goto(`${base}/${link}`);
      await page.waitForFunction(() => {
        const s = document.querySelector('#run-result')?.getAttribute('data-state');
        return s && !['idle', 'running'].includes(s);
      }, null, { timeout: 300_000, polling: 50 });
    } finally {
      peak = sampler.stop();
    }
    const r = await page.$eval('#run-result', (el) => ({
      state: el.getAttribute('data-state'),
      wall: Number(el.getAttribute('data-wall-ms')),
      collective: Number(el.getAttribute('data-collective-ms')),
      workers: navigator.hardwareConcurrency,
      data: Number(el.getAttribute('data-ranks')) * Number(el.getAttribute('data-bytes')),
    }));
    await page.close();
    if (r.state !== 'verified' || errors.length) {
      console.error(`rep ${i + 1}: the run ended \`${r.state}\`, not verified ${errors.join('; ')}`);
      process.exit(1);
    }
    walls.push(r.wall);
    if (Number.isFinite(r.collective) && r.collective > 0) collectives.push(r.collective);
    const memory = peak === null ? '' : `, peak renderer memory ${(peak / MiB).toFixed(0)} MiB (${(peak / r.data).toFixed(2)}x the ${(r.data / MiB).toFixed(0)} MiB of rank data)`;
    if (peak !== null) peaks.push(peak / r.data);
    console.log(`rep ${i + 1}: wall ${r.wall.toFixed(1)} ms, collective ${Number.isFinite(r.collective) ? r.collective.toFixed(1) : '-'} ms${memory} (hardwareConcurrency ${r.workers})`);
  }
} finally {
  await browser.close();
}
const ratio = peaks.length ? `; peak renderer memory / rank data: median ${median(peaks).toFixed(2)}x (${Math.min(...peaks).toFixed(2)} .. ${Math.max(...peaks).toFixed(2)})` : '';
console.log(`browser ${link}: wall ${fmt(walls)}; collective ${fmt(collectives)} over ${reps} reps${ratio}`);
