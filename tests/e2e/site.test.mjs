// End-to-end: the static site (scripts/site.sh) served from a sub-path by a
// plain file server that sends no CSP, COOP or COEP header, as GitHub Pages
// serves https://user.github.io/ccl-playground/. The page loads, estimates,
// runs and verifies a collective on its workers, asks for nothing outside
// its own folder, enforces its <meta> CSP without a violation, and its share
// link points at the folder it was loaded from.
//
// After one visit the site works offline: its service worker (scripts/
// site-sw.mjs) has cached every file, the network goes off, and a reload
// still estimates and verifies; a second build's worker replaces the cache.
//
// SITE_DIR names a built site (scripts/test.sh builds one); without it the
// test builds one into a temporary folder (a release build, incremental
// after `trunk serve --release`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { launchChromium, watch } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });
const ROOT = new URL('../../', import.meta.url).pathname;
const SUB = '/sub/path/';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

let site;
let builtHere = null;
let server;
let base;
let browser;
/** Every path the server was asked for, in order. */
const served = [];
/** The folder served (a test swaps in a second build); `down`: every connection is dropped. */
const host = { dir: null, down: false };

/** A static file server of `host.dir` at SUB: only GET/HEAD, no security headers, like a plain host. */
function serve() {
  return createServer((req, res) => {
    if (host.down) { req.socket.destroy(); return; }
    const dir = host.dir;
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    served.push(path);
    if (!path.startsWith(SUB)) { res.writeHead(404).end('not under the site folder'); return; }
    let file = normalize(join(dir, path.slice(SUB.length)));
    if (file !== dir && !file.startsWith(dir + sep)) { res.writeHead(403).end(); return; }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) { res.writeHead(404).end('not found'); return; }
    const body = readFileSync(file);
    res.writeHead(200, {
      'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
      'Content-Length': body.length,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
}

before(async () => {
  site = process.env.SITE_DIR;
  if (!site) {
    builtHere = mkdtempSync(join(tmpdir(), 'ccl-site-'));
    site = builtHere;
    // The build's output to stderr: stdout is the test runner's report.
    execFileSync('bash', ['scripts/site.sh', site], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  }
  site = resolve(site);
  assert.ok(existsSync(join(site, 'index.html')), `${site}/index.html (SITE_DIR) exists`);
  host.dir = site;
  server = serve();
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}${SUB}`;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
  if (builtHere) rmSync(builtHere, { recursive: true, force: true });
});

test('the static site works from a sub-path with no server headers', { timeout: 180_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const origin = new URL(base).origin;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  const problems = watch(page, []);
  // Violations are also events; collected in case a browser stops logging them.
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation',
      (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const outside = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol === 'http:' || u.protocol === 'https:') {
      if (u.origin !== origin || !u.pathname.startsWith(SUB)) outside.push(r.url());
    }
  });

  const resp = await page.goto(base);
  assert.equal(resp.status(), 200);
  assert.equal(resp.headers()['content-security-policy'], undefined, 'the server sends no CSP');
  const csp = await page.evaluate(
    () => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content ?? null);
  assert.ok(csp, 'index.html carries its CSP as a <meta> element (scripts/site-csp.mjs)');
  for (const d of ["script-src 'self' 'wasm-unsafe-eval' 'sha256-", "worker-src 'self' blob:", "object-src 'none'", "base-uri 'none'"]) {
    assert.ok(csp?.includes(d), `the meta CSP has ${d}: ${csp}`);
  }
  assert.ok(!/nonce|frame-ancestors|\{\{/.test(csp), `nothing a static meta CSP cannot carry: ${csp}`);

  // The first estimate.
  await page.waitForFunction(() => /\d/.test(document.querySelector('#estimate-us')?.textContent ?? ''),
    null, { timeout: 60_000 });
  const finalState = async () => {
    await page.waitForFunction(() => {
      const s = document.querySelector('#run-result')?.getAttribute('data-state');
      return s && !['idle', 'running'].includes(s);
    }, null, { timeout: 60_000 });
    return page.$eval('#run-result', (el) => Object.fromEntries(
      [...el.attributes].filter((a) => a.name.startsWith('data-')).map((a) => [a.name.slice(5), a.value])));
  };
  assert.equal((await finalState()).state, 'verified', 'the run on load verifies');

  // Run it again with the button: the workers start again from the site's folder.
  await page.evaluate(() => {
    window.__states = [];
    new MutationObserver(() => window.__states.push(
      document.querySelector('#run-result')?.getAttribute('data-state'),
    )).observe(document.querySelector('#run-result'), { attributes: true, attributeFilter: ['data-state'] });
  });
  await page.click('#rerun');
  await page.waitForFunction(() => window.__states.includes('running'), null, { timeout: 30_000 });
  const r = await finalState();
  assert.equal(r.state, 'verified', JSON.stringify(r));
  assert.equal(r.op, 'allreduce');
  assert.ok(Number(r['estimate-us']) > 0, JSON.stringify(r));

  // The share link: this folder's URL, whatever host and path it is on.
  await page.click('#copy-link');
  await page.waitForSelector('.copy-ok');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(link, await page.locator('#share-link').inputValue());
  assert.ok(link.startsWith(`${base}?`), `the share link ${link} starts with ${base}?`);
  await page.screenshot({ path: `${OUT}site-subpath.png` });

  assert.deepEqual(outside, [], 'every request stays in the site folder');
  for (const want of ['index.html', 'planner.js', 'planner_bg.wasm']) {
    const p = want === 'index.html' ? SUB : `${SUB}${want}`;
    assert.ok(served.includes(p), `the server was asked for ${p}: ${served.join(' ')}`);
  }
  assert.ok(served.some((p) => /\/worker(_simd)?_bg\.wasm$/.test(p)), `a rank worker's wasm: ${served.join(' ')}`);
  assert.deepEqual(served.filter((p) => !p.startsWith(SUB)), [], 'the server saw nothing outside the folder');
  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(problems, []);

  // The policy is in force, not only present: an injected inline script
  // does not run, and the browser reports the violation.
  const injected = await page.evaluate(async () => {
    const s = document.createElement('script');
    s.textContent = 'window.__injected = true;';
    document.head.append(s);
    await new Promise((ok) => setTimeout(ok, 100));
    return { ran: window.__injected === true, violations: window.__csp };
  });
  assert.equal(injected.ran, false, 'the meta CSP blocks an injected inline script');
  assert.ok(injected.violations.some((v) => v.startsWith('script-src')), JSON.stringify(injected.violations));

  // The copied link opens the same configuration from the same folder.
  const page2 = await context.newPage();
  const problems2 = watch(page2, []);
  await page2.goto(link);
  await page2.waitForFunction(() => {
    const s = document.querySelector('#run-result')?.getAttribute('data-state');
    return s && !['idle', 'running'].includes(s);
  }, null, { timeout: 60_000 });
  assert.equal(await page2.getAttribute('#run-result', 'data-state'), 'verified');
  assert.deepEqual(problems2, []);
  await context.close();
});

test('a path outside the site folder is not served (the check above can fail)', async () => {
  const res = await fetch(new URL('/worker.js', base));
  assert.equal(res.status, 404);
});

test('after one visit the site works offline, and a new build replaces the cache', { timeout: 240_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = watch(page, []);
  const settled = async () => {
    await page.waitForFunction(() => /\d/.test(document.querySelector('#estimate-us')?.textContent ?? ''),
      null, { timeout: 60_000 });
    await page.waitForFunction(() => {
      const s = document.querySelector('#run-result')?.getAttribute('data-state');
      return s && !['idle', 'running'].includes(s);
    }, null, { timeout: 60_000 });
    return page.getAttribute('#run-result', 'data-state');
  };
  const cached = () => page.evaluate(async () => {
    const out = {};
    for (const key of await caches.keys()) {
      out[key] = (await (await caches.open(key)).keys()).map((r) => r.url).sort();
    }
    return out;
  });
  const versionOf = (dir) => readFileSync(join(dir, 'sw.js'), 'utf8').match(/^const VERSION = "([0-9a-f]{16})";$/m)?.[1];

  // The first visit, online: the worker installs, takes the page over and
  // holds every file of the build (index.html under the folder's own URL).
  await page.goto(base);
  assert.equal(await settled(), 'verified');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
  const v1 = versionOf(site);
  assert.ok(v1, 'sw.js carries a version');
  const want = readdirSync(site).filter((f) => f !== 'sw.js')
    .map((f) => (f === 'index.html' ? base : `${base}${f}`)).sort();
  for (const w of ['worker.js', 'worker_bg.wasm', 'planner.js', 'planner_bg.wasm', 'sw-register.js']) {
    assert.ok(want.includes(`${base}${w}`), `${w} is in the build`);
  }
  assert.ok(want.some((u) => /app-[0-9a-f]{1,16}_bg\.wasm$/.test(u)) && want.some((u) => /\.css$/.test(u)), want.join(' '));
  assert.deepEqual(await cached(), { [`ccl-playground ${base} ${v1}`]: want });

  // The network off (the browser's, and the server drops every connection):
  // a reload, and the share link opened in a new tab, load from the cache,
  // estimate, start the workers and verify.
  await context.setOffline(true);
  host.down = true;
  try {
    await page.reload();
    assert.equal(await settled(), 'verified', 'offline: the run on load verifies');
    await page.click('#rerun');
    await page.waitForFunction(() => document.querySelector('#run-result')?.getAttribute('data-state') === 'running',
      null, { timeout: 30_000 }).catch(() => {});
    assert.equal(await settled(), 'verified', 'offline: a second run verifies');
    await page.screenshot({ path: `${OUT}site-offline.png` });
    const link = await page.locator('#share-link').inputValue();
    assert.ok(link.startsWith(`${base}?`), link);
    const page2 = await context.newPage();
    const problems2 = watch(page2, []);
    await page2.goto(link);
    await page2.waitForFunction(() => {
      const s = document.querySelector('#run-result')?.getAttribute('data-state');
      return s && !['idle', 'running'].includes(s);
    }, null, { timeout: 60_000 });
    assert.equal(await page2.getAttribute('#run-result', 'data-state'), 'verified', 'offline: the share link');
    assert.deepEqual(problems2, []);
    await page2.close();
  } finally {
    await context.setOffline(false);
    host.down = false;
  }

  // A second build (the same files, one of them changed): a new version, so
  // a new cache name; online again, a reload fetches the new sw.js, and
  // once it activates only its cache is left.
  const second = mkdtempSync(join(tmpdir(), 'ccl-site2-'));
  try {
    cpSync(site, second, { recursive: true });
    const index = join(second, 'index.html');
    // In <head>: the app replaces <body> when it mounts.
    writeFileSync(index, readFileSync(index, 'utf8').replace('</head>', '<meta name="ccl-test-build" content="second"></head>'));
    execFileSync('node', ['scripts/site-sw.mjs', second], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    const v2 = versionOf(second);
    assert.ok(v2 && v2 !== v1, `a changed file changes the version: ${v1} then ${v2}`);
    assert.equal(readFileSync(index, 'utf8').split('sw-register.js').length, 2, 'the register tag is added once');
    host.dir = second;
    await page.reload();
    assert.equal(await settled(), 'verified');
    await page.waitForFunction(async (name) => {
      const keys = await caches.keys();
      return keys.length === 1 && keys[0] === name;
    }, `ccl-playground ${base} ${v2}`, { timeout: 60_000, polling: 250 });
    assert.equal(await page.evaluate(() => document.querySelector('meta[name="ccl-test-build"]')?.content ?? null),
      'second', 'online, the page is the network\'s new index.html');
  } finally {
    host.dir = site;
    rmSync(second, { recursive: true, force: true });
  }
  assert.deepEqual(problems, []);
  await context.close();
});
