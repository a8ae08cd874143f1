// End-to-end: the whole collective catalogue, through
// the page's #run-result (data-state, data-algorithm):
// - on `910b-8` (8 ranks, executed for real) every primitive verifies with
//   `algo=auto` and with each algorithm that applies to it;
// - on `910a-8` (8 ranks, executed) and `910b-4x8` (32 ranks, more than the
//   browser executes, so model-only) every primitive reaches `verified` or
//   `model-only` with `algo=auto` and with each applicable algorithm;
// - the table below agrees with the page: for each primitive, a link with an
//   algorithm that does not apply names the applicable ones in #config-error;
// - AlltoAllV's documented limit (at most MAX_ALLTOALLV_RANKS = 16 ranks,
//   src/engine/collective.rs): on 32 ranks the page refuses it with an error
//   naming the primitive and the rank count; on 16 ranks of `910b-4x8` it verifies.
// Never `error` or `mismatch` otherwise, no console error, no page error, no
// CSP violation. A page is reused for up to LINKS_PER_PAGE URLs (page.goto
// per URL) and sizes are small (64 KiB), to keep this quick.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const BYTES = '64KiB';
// CATALOGUE_LOG=file: one line per link (time, state, algorithm), for diagnosis.
const LOG = process.env.CATALOGUE_LOG;
const ROOT = 5; // a non-zero root, valid for 8, 16 and 32 ranks

// Mirrors `Algorithm::supports` in src/engine/algorithm/mod.rs (and
// MAX_ALLTOALLV_RANKS = 16, hier::PER_SERVER = 8): which algorithm implements
// which primitive on how many ranks. Keep the two in step.
const MAX_ALLTOALLV_RANKS = 16;
const PER_SERVER = 8;
const PRIMITIVES = ['allreduce', 'reducescatter', 'allgather', 'broadcast', 'reduce', 'scatter',
  'gather', 'alltoall', 'alltoallv', 'barrier', 'sendrecv'];
const ROOTED = new Set(['broadcast', 'reduce', 'scatter', 'gather']);
const SUPPORTS = {
  ring: (op) => ['allreduce', 'reducescatter', 'allgather', 'broadcast', 'reduce', 'barrier', 'sendrecv'].includes(op),
  mesh: (op, n) => (op === 'alltoallv' ? n <= MAX_ALLTOALLV_RANKS
    : ['allreduce', 'reducescatter', 'allgather', 'broadcast', 'reduce', 'alltoall', 'barrier'].includes(op)),
  rhd: (op, n) => op === 'allreduce' || (['reducescatter', 'allgather'].includes(op) && (n & (n - 1)) === 0),
  tree: (op) => ROOTED.has(op),
  star: (op) => ROOTED.has(op),
  pairwise: (op, n) => op === 'alltoall' || (op === 'alltoallv' && n <= MAX_ALLTOALLV_RANKS),
  nb: (op) => ['allgather', 'reducescatter', 'allreduce', 'barrier', 'alltoall'].includes(op),
  dbtree: (op) => op === 'allreduce',
  hier: (op, n) => n % PER_SERVER === 0
    && ['allreduce', 'reducescatter', 'allgather', 'broadcast', 'reduce', 'scatter', 'gather'].includes(op),
  'hier-nhr': (op, n) => n % PER_SERVER === 0 && ['allreduce', 'reducescatter', 'allgather'].includes(op),
  nhr: (op) => ['allreduce', 'reducescatter', 'allgather', 'broadcast'].includes(op),
  pipeline: (op, n) => n % PER_SERVER === 0 && ['allreduce', 'reducescatter', 'allgather'].includes(op),
};
/** The algorithms that implement `op` on `n` ranks, in UI order (`Algorithm::applicable`). */
const applicable = (op, n) => Object.keys(SUPPORTS).filter((a) => n >= 2 && SUPPORTS[a](op, n));

/** Every (primitive, algo) link of `topo` on `ranks` ranks: auto first, then each applicable algorithm. */
function combos(topo, ranks) {
  const out = [];
  for (const op of PRIMITIVES) {
    const algos = applicable(op, ranks);
    if (algos.length === 0) continue; // covered by the AlltoAllV-limit test
    for (const algo of ['auto', ...algos]) {
      const q = new URLSearchParams({ v: '1', op, algo, topo, bytes: BYTES, dtype: 'fp32', redop: 'sum', ranks: String(ranks), seed: '7' });
      if (ROOTED.has(op)) q.set('root', String(ROOT));
      out.push({ op, algo, algos, query: `?${q}` });
    }
  }
  return out;
}

let browser;
let page;
let opened = 0; // URLs opened in `page`
const problems = [];
// Every link starts the page's wasm, its planner worker and (when executed)
// the rank workers: a linear memory each, and V8 reserves ~10 GB of address
// space per memory for its trap-handler bounds checks, inside the process's
// V8 sandbox (Node.js docs, test/wasm-allocation; V8 commit fcd3ef48, "virtual
// memory cage"). After ~130-180 links in one tab some rank worker failed with
// "WebAssembly.instantiate(): Out of memory: Cannot allocate Wasm memory for
// new instance" (4 links of ~190), while the renderer's VmSize stayed at
// 1448 GiB: address space not yet
// given back by earlier documents. A fresh context (its own renderer process)
// every LINKS_PER_PAGE links keeps the test about the page, not one tab's GC.
const LINKS_PER_PAGE = 25;
async function goto(url) {
  if (!page || opened >= LINKS_PER_PAGE) {
    await page?.context().close();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    watch(page, problems);
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    opened = 0;
  }
  opened += 1;
  await page.goto(url);
}
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

/** Opens `query`, waits for a final #run-result state; returns its data-* attributes and #run-error. */
async function runLink(query, timeout = 30_000) {
  problems.length = 0;
  const t0 = Date.now();
  await goto(`${BASE}/${query}`);
  await page.waitForFunction(() => {
    const s = document.querySelector('#run-result')?.getAttribute('data-state');
    return s && !['idle', 'running'].includes(s);
  }, null, { timeout, polling: 25 });
  // (Not locator.innerText: it would wait for a #run-error that never comes.)
  const r = await page.evaluate(() => {
    const el = document.querySelector('#run-result');
    const out = Object.fromEntries([...el.attributes].filter((a) => a.name.startsWith('data-'))
      .map((a) => [a.name.slice(5), a.value]));
    out.error = document.querySelector('#run-error')?.innerText ?? '';
    out.configError = (document.querySelector('#config-error')?.innerText ?? '').trim();
    return out;
  });
  if (LOG) appendFileSync(LOG, `${Date.now() - t0} ms ${r.state} ${r.algorithm} ${query} ${r.error}\n`);
  return r;
}

/** Runs every combination of `topo` × `ranks`; returns the failures (strings). */
async function catalogue(topo, ranks, states) {
  const failures = [];
  for (const { op, algo, algos, query } of combos(topo, ranks)) {
    const r = await runLink(query);
    const bad = [];
    if (!states.includes(r.state)) bad.push(`state ${r.state}${r.error ? `: ${r.error}` : ''}`);
    if (r.op !== op) bad.push(`op ${r.op}`);
    if (r.topo !== topo || r.ranks !== String(ranks)) bad.push(`topo/ranks ${r.topo}/${r.ranks}`);
    if (algo === 'auto' ? !algos.includes(r.algorithm) : r.algorithm !== algo) bad.push(`algorithm ${r.algorithm}`);
    if (r.configError) bad.push(`config-error: ${r.configError}`);
    if (problems.length) bad.push(problems.join(' | '));
    if (bad.length) failures.push(`${query}: ${bad.join('; ')}`);
  }
  return failures;
}

test('the table mirrors Algorithm::supports: the page lists the same applicable algorithms', async () => {
  const failures = [];
  for (const [topo, ranks] of [['910b-8', 8], ['910b-8', 6], ['910b-4x8', 32]]) {
    for (const op of PRIMITIVES) {
      // AlltoAllV above its limit runs on MAX_ALLTOALLV_RANKS (engine::config clamps ranks).
      const want = applicable(op, op === 'alltoallv' ? Math.min(ranks, MAX_ALLTOALLV_RANKS) : ranks);
      const wrong = Object.keys(SUPPORTS).find((a) => !want.includes(a));
      problems.length = 0;
      await goto(`${BASE}/?v=1&op=${op}&algo=${wrong}&topo=${topo}&bytes=${BYTES}&ranks=${ranks}`);
      // The message is there from the first render; no need to wait for the run.
      const msg = await page.waitForFunction(() => {
        const t = document.querySelector('#config-error')?.innerText ?? '';
        return t.includes('applicable:') && t;
      }, null, { timeout: 10_000, polling: 25 }).then((h) => h.jsonValue());
      // "...; applicable: auto, ring, mesh — used algo=auto instead".
      const listed = (msg.match(/applicable: ([^;—\n]*)/)?.[1] ?? '?').split(',').map((x) => x.trim())
        .filter((x) => x && x !== 'auto' && x !== 'none');
      if (JSON.stringify(listed) !== JSON.stringify(want)) failures.push(`${topo} ${ranks} ${op}: page ${listed}, table ${want}`);
      if (want.length === 0 && !/applicable: none\b/.test(msg)) failures.push(`${topo} ${ranks} ${op}: ${msg}`);
      if (problems.length) failures.push(`${topo} ${ranks} ${op}: ${problems.join(' | ')}`);
    }
  }
  assert.deepEqual(failures, []);
});

test('910b-8: every primitive verifies with algo=auto and with each applicable algorithm', async () => {
  assert.deepEqual(await catalogue('910b-8', 8, ['verified']), []);
});

test('910a-8: every primitive reaches verified or model-only, auto and each applicable algorithm', async () => {
  assert.deepEqual(await catalogue('910a-8', 8, ['verified', 'model-only']), []);
});

test('910b-4x8: every primitive reaches verified or model-only, auto and each applicable algorithm', async () => {
  assert.deepEqual(await catalogue('910b-4x8', 32, ['verified', 'model-only']), []);
});

test('AlltoAllV above 16 ranks (documented limit) runs on 16, saying so, and verifies on 16 ranks of 910b-4x8', async () => {
  assert.deepEqual(applicable('alltoallv', 32), []);
  // engine::config clamps ranks to MAX_ALLTOALLV_RANKS and says which value it used.
  const clamped = await runLink(`?v=1&op=alltoallv&algo=auto&topo=910b-4x8&bytes=${BYTES}&ranks=32`);
  assert.equal(clamped.ranks, '16', JSON.stringify(clamped));
  assert.match(clamped.configError, /AlltoAllV runs on 2\.\.=16 ranks/, clamped.configError);
  assert.match(clamped.configError, /32/, clamped.configError);
  assert.deepEqual(problems, []);
  for (const algo of ['auto', ...applicable('alltoallv', 16)]) {
    const r = await runLink(`?v=1&op=alltoallv&algo=${algo}&topo=910b-4x8&bytes=${BYTES}&ranks=16`);
    assert.equal(r.state, 'verified', `${algo}: ${JSON.stringify(r)}`);
    if (algo !== 'auto') assert.equal(r.algorithm, algo);
    assert.deepEqual(problems, [], algo);
  }
});
