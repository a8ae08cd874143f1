// End-to-end: links and hostile input, under the strict Content-Security-
// Policy `trunk serve` sends (Trunk.toml [serve] csp).
// - 100 random valid links (seeded generator): each reaches a final state,
//   restores its configuration, no console error, no page error;
// - 50 mutated invalid links: each shows #config-error naming the key, no
//   page error;
// - `javascript:` and HTML in every key and value show as text.
// One page is reused (page.goto) and sizes are small, to keep this quick.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launchChromium, watch } from './browser.mjs';

const FINAL = (s) => s && !['idle', 'running'].includes(s);

let browser;
let page;
const problems = [];
before(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  watch(page, problems);
  // CSP violations (also reported on the console by Chromium).
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
});
after(async () => { await browser?.close(); });

/** mulberry32: a small seeded PRNG, so every run tests the same links. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];

const DSIZE = { fp32: 4, fp16: 2, bf16: 2, int32: 4, int8: 1 };

/** A random valid link and the data-* attributes it must produce. */
function validLink(r) {
  const op = pick(r, ['allreduce', 'reducescatter', 'allgather']);
  const topo = pick(r, ['910b-8', '910b-8', '910a-8', 'h100-8']);
  const algo = topo === '910b-8' ? pick(r, ['auto', 'ring', 'mesh']) : pick(r, ['auto', 'ring']);
  const dtype = pick(r, Object.keys(DSIZE));
  const redop = pick(r, ['sum', 'prod', 'max', 'min']);
  const ranks = 2 + Math.floor(r() * 7);
  const kib = 1 + Math.floor(r() * 96);
  const bytes = kib * 1024;
  const bytesText = pick(r, [String(bytes), `${kib}KiB`, `${kib} kib`]);
  const seed = Math.floor(r() * 2 ** 40);
  const pairs = [['op', op], ['algo', algo], ['topo', topo], ['bytes', bytesText], ['dtype', dtype],
    ['redop', redop], ['ranks', String(ranks)], ['seed', String(seed)]];
  // Shuffle the key order; half the links carry the version, half are legacy.
  pairs.sort(() => r() - 0.5);
  if (r() < 0.5) pairs.unshift(['v', '1']);
  const q = new URLSearchParams(pairs).toString();
  const want = { op, topo, ranks: String(ranks), bytes: String(bytes), dtype };
  if (algo !== 'auto') want.algorithm = algo;
  return [`?${q}`, want];
}

const JUNK = ['', '-5', '1e400', '%FF%FE', 'x'.repeat(10_000), '<img src=x onerror=alert(1)>',
  'javascript:alert(1)', '%E0%A4%A', 'NaN', '99999999999999999999999', '0', '1.5'];
const KEYS = ['op', 'algo', 'topo', 'bytes', 'dtype', 'redop', 'ranks', 'seed'];

/** A valid link with one value replaced by junk that no key accepts. */
function invalidLink(r) {
  const [q] = validLink(r);
  const params = new URLSearchParams(q.slice(1));
  const key = pick(r, KEYS);
  let junk = pick(r, JUNK);
  // `0`, `1.5` are junk for every key but seed (`0` is a valid seed).
  if (key === 'seed' && junk === '0') junk = '-1';
  params.delete(key);
  // Raw (not re-encoded) junk: percent-encoding garbage stays garbage.
  const raw = junk.startsWith('%') ? junk : encodeURIComponent(junk);
  return [`?${params.toString()}&${key}=${raw}`, key];
}

async function waitFinal(timeout = 30_000) {
  await page.waitForFunction((_) => {
    const s = document.querySelector('#run-result')?.getAttribute('data-state');
    return s && !['idle', 'running'].includes(s);
  }, null, { timeout, polling: 25 });
  return page.$eval('#run-result', (el) => Object.fromEntries(
    [...el.attributes].filter((a) => a.name.startsWith('data-')).map((a) => [a.name.slice(5), a.value])));
}

test('the page is served with a strict Content-Security-Policy and works under it', async () => {
  problems.length = 0;
  const resp = await page.goto(`${BASE}/?v=1&ranks=4&bytes=64KiB`);
  const csp = resp.headers()['content-security-policy'] ?? '';
  for (const d of ["script-src 'self' 'wasm-unsafe-eval' 'nonce-", "worker-src 'self' blob:", "object-src 'none'"]) {
    assert.ok(csp.includes(d), `CSP has ${d}: ${csp}`);
  }
  assert.ok(!csp.includes("'unsafe-eval'") && !/script-src[^;]*'unsafe-inline'/.test(csp), csp);
  const r = await waitFinal();
  assert.equal(r.state, 'verified', JSON.stringify(r));
  // The address bar and the share link carry the version first, then every field.
  for (const u of [page.url(), await page.locator('#share-link').inputValue()]) {
    assert.match(u, /\?v=1&op=allreduce&algo=auto&topo=910b-8&bytes=65536&dtype=fp32&redop=sum&ranks=4&seed=1($|&)/, u);
  }
  assert.deepEqual(problems, []);
});

test('100 random valid links each reach a final state and restore their configuration', async () => {
  const r = rng(20261129);
  const failures = [];
  for (let i = 0; i < 100; i++) {
    const [q, want] = validLink(r);
    problems.length = 0;
    await page.goto(`${BASE}/${q}`);
    const got = await waitFinal();
    const bad = Object.entries(want).filter(([k, v]) => got[k] !== v);
    if (!['verified', 'model-only'].includes(got.state)) bad.push(['state', got.state]);
    const err = await page.locator('#config-error').innerText().catch(() => '');
    if (err.trim()) bad.push(['config-error', err]);
    if (problems.length) bad.push(['problems', problems.join(' | ')]);
    if (bad.length) failures.push(`${q}: ${JSON.stringify(bad)}`);
  }
  assert.deepEqual(failures, []);
});

test('50 mutated invalid links each show #config-error naming the key, and no page error', async () => {
  const r = rng(777);
  const failures = [];
  for (let i = 0; i < 50; i++) {
    const [q, key] = invalidLink(r);
    problems.length = 0;
    await page.goto(`${BASE}/${q}`);
    const box = page.locator('#config-error');
    await box.waitFor({ state: 'visible', timeout: 10_000 }).catch(() => {});
    const text = await box.innerText().catch(() => '');
    // The page got as far as planning and starting the run (its end is
    // what the valid links test; this keeps the suite quick).
    await page.waitForFunction(() => document.querySelector('#run-result')?.getAttribute('data-state') !== 'idle',
      null, { timeout: 10_000, polling: 25 }).catch(() => failures.push(`${q.slice(0, 200)}: the run never started`));
    const pageErrors = problems.filter((p) => !p.startsWith('console: '));
    if (!text.includes(`${key}=`)) failures.push(`${q.slice(0, 200)}: #config-error lacks ${key}: ${text.slice(0, 200)}`);
    if (pageErrors.length) failures.push(`${q.slice(0, 200)}: ${pageErrors.join(' | ')}`);
    if (await page.locator('#config-error img, #config-error script, a[href^="javascript:"]').count()) {
      failures.push(`${q.slice(0, 200)}: markup from the link was inserted`);
    }
  }
  assert.deepEqual(failures, []);
});

test('javascript: and HTML in every key and value show as text', async () => {
  problems.length = 0;
  const js = 'javascript:alert(document.domain)';
  const pairs = KEYS.map((k) => [k, js]);
  pairs.push(['<img src=x onerror=alert(1)>', '<script>alert(2)</script>'], [js, js], ['v', js]);
  await page.goto(`${BASE}/?${new URLSearchParams(pairs).toString()}`);
  const r = await waitFinal();
  assert.equal(r.state, 'verified', 'every key keeps its default and the page runs');
  const text = await page.locator('#config-error').innerText();
  for (const k of KEYS) assert.ok(text.includes(`${k}="${js}"`), `${k} in ${text}`);
  assert.ok(text.includes('<img src=x onerror=alert(1)>'), text);
  assert.ok(text.includes('<script>alert(2)</script>'), text);
  assert.match(text, /notice/i, 'unknown keys are notices');
  assert.equal(await page.locator('#config-error img, #config-error script').count(), 0);
  assert.equal(await page.locator('a[href^="javascript:"]').count(), 0);
  // The share link is built from the configuration, never from the raw link.
  const share = await page.locator('#share-link').inputValue();
  assert.ok(!share.includes('javascript'), share);
  assert.deepEqual(problems, []);
});
