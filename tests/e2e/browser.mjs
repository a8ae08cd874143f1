// Shared by the e2e test files (not a test file itself: node --test runs
// only *.test.mjs here): the served page's address and Debian's Chromium,
// launched with the flags this closed network needs.
import { chromium } from 'playwright-core';

/** The page under test (scripts/test.sh sets BASE_URL). */
export const BASE = process.env.BASE_URL ?? 'http://127.0.0.1:8080';

/** Headless Chromium (/usr/bin/chromium, or $CHROMIUM); never a downloaded browser. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Collects what must never happen on `page` into `problems` (returned):
 * uncaught page errors, console errors (unless `console: false`, for the
 * worker-failure suite, whose failures log by design) and dialogs, which
 * are dismissed so the page never blocks. Every test file sets its pages
 * up through this one helper and asserts `problems` is empty.
 */
export function watch(page, problems = [], { console: consoleErrors = true } = {}) {
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  if (consoleErrors) {
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  }
  page.on('dialog', async (d) => { problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
  return problems;
}

/**
 * The `#run-result` data-* attributes once the page's run is final (not
 * idle, not running) and every `want` attribute (`{ topo: 'h100-8' }`)
 * has its value: what a test reads after it changed the configuration.
 */
export async function runResult(page, want = {}, timeout = 120_000) {
  await page.waitForFunction((w) => {
    const el = document.querySelector('#run-result');
    const s = el?.getAttribute('data-state');
    if (!s || ['idle', 'running'].includes(s)) return false;
    return Object.entries(w).every(([k, v]) => el.getAttribute(`data-${k}`) === v);
  }, want, { timeout, polling: 50 });
  return page.$eval('#run-result', (el) => Object.fromEntries(
    [...el.attributes].filter((a) => a.name.startsWith('data-')).map((a) => [a.name.slice(5), a.value])));
}
