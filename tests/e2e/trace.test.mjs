// End-to-end: the Timeline card's "Perfetto trace" download
// (ui/gantt.rs → engine/formats/trace.rs) is valid trace-event JSON, holds
// every transfer of the modelled run, and is the same file
// `cclsim predict --trace` writes for the same link (one pipeline).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, mkdtempSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE, launchChromium, watch } from './browser.mjs';

const ROOT = new URL('../../', import.meta.url).pathname;
let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

test('the page downloads the Perfetto trace cclsim writes', async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems = [];
  watch(page, problems);
  await page.goto(`${BASE}/?v=1&topo=910b-8&op=allreduce&algo=ring&bytes=1MiB&dtype=fp32`);
  await page.waitForSelector('#trace-download');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#trace-download')]);
  assert.equal(download.suggestedFilename(), 'ccl_allreduce_ring_8ranks_1048576.trace.json');
  const trace = JSON.parse(readFileSync(await download.path(), 'utf8'));
  const ev = trace.traceEvents;
  // Ring AllReduce on 8 ranks: 14 steps × 8 sends, each a begin and an end.
  assert.equal(ev.filter((e) => e.ph === 'b' && e.cat === 'send').length, 14 * 8);
  assert.equal(ev.filter((e) => e.ph === 'e' && e.cat === 'send').length, 14 * 8);
  assert.equal(ev.filter((e) => e.ph === 'b' && e.cat === 'step').length, 14);
  assert.ok(ev.every((e) => e.ph === 'M' || (Number.isFinite(e.ts) && e.ts >= 0)));
  assert.equal(trace.otherData.algorithm, 'ring');

  const bin = [join(ROOT, 'target/debug/cclsim'), join(ROOT, 'target/release/cclsim')].find(existsSync);
  assert.ok(bin, 'cclsim is built (cargo test builds it)');
  const out = join(mkdtempSync(join(tmpdir(), 'trace-')), 't.json');
  execFileSync(bin, ['predict', '--topo', '910b-8', '--op', 'allreduce', '--algo', 'ring',
    '--bytes', '1MiB', '--dtype', 'fp32', '--trace', out]);
  assert.deepEqual(trace, JSON.parse(readFileSync(out, 'utf8')));
  assert.deepEqual(problems, []);
  await context.close();
});
