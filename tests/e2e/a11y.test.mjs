// End-to-end: accessibility. axe-core (npm) audits the main views and must
// report no serious or critical violation; the animation is driven by the
// keyboard alone (play, step, scrub, speed) with a visible focus; the
// drawing and the buffer grid have text alternatives; results are
// announced in live regions; the rank colours stay apart under the common
// colour-vision deficiencies; reduced motion is honoured.
//
// The page's CSP forbids injected scripts, so the audit's browser context
// alone uses bypassCSP (axe is injected from node_modules with addScriptTag).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BASE, launchChromium } from './browser.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');
const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

const settled = () => {
  const s = document.querySelector('#run-result')?.dataset.state;
  return s && s !== 'idle' && s !== 'running';
};

const VIEWS = [
  ['default page', '?lang=en'],
  ['default page in Chinese', '?lang=zh'],
  ['a lesson stop in English', '?lang=en&lesson=ring&stop=1'],
  ['a lesson stop in Chinese', '?lesson=hier&stop=3&lang=zh'],
  ['compression what-if', '?lang=en&op=allreduce&dtype=fp16&compress=int8&bytes=16MiB'],
  ['64 ranks', '?lang=en&topo=910b-8x8&op=allreduce&algo=hier&bytes=1MiB'],
  ['calibrated NCCL prediction', '?lang=en&topo=h100-8&op=allreduce&bytes=16MiB'],
  ['phone width', '?lang=zh&lesson=collective&stop=2', { width: 390, height: 844 }],
];

for (const [name, query, vp] of VIEWS) {
  test(`axe: no serious or critical violation on the ${name}`, async () => {
    const ctx = await browser.newContext({ bypassCSP: true, viewport: vp ?? { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(`${BASE}/${query}`);
    await page.waitForFunction(settled, null, { timeout: 120_000 });
    await page.addScriptTag({ path: AXE });
    const t0 = Date.now();
    const result = await page.evaluate(async () => {
      // eslint-disable-next-line no-undef
      const r = await axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n')[1] ?? ''}`),
      }));
    });
    const bad = result.filter((v) => ['serious', 'critical'].includes(v.impact));
    appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} axe on ${name}: ${result.length} violation kinds (${bad.length} serious/critical) in ${Date.now() - t0} ms\n`);
    assert.deepEqual(bad, [], JSON.stringify(bad, null, 1));
    await ctx.close();
  });
}

test('the animation works from the keyboard alone, with a visible focus', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${BASE}/?lang=en&op=allreduce&algo=ring&ranks=4&bytes=64KiB`);
  await page.waitForFunction(settled, null, { timeout: 60_000 });
  const step = () => page.getAttribute('#step-clock', 'data-step');
  // Tab reaches the play button; its focus ring is visible.
  let found = false;
  for (let i = 0; i < 80 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => document.activeElement?.id === 'btn-forward');
  }
  assert.ok(found, 'Tab reaches the step button');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none', 'focus is visible');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#step-clock').dataset.step === '1');
  // The scrubber: a range input, arrows and End move it.
  // (The page renders after the key's event, so wait for the clock: read
  // at once, a loaded machine still showed the previous step.)
  const clockAt = (want) => page.waitForFunction(
    (w) => document.querySelector('#step-clock').dataset.step === w, want, { timeout: 10_000 });
  await page.focus('#scrub');
  await page.keyboard.press('ArrowRight');
  await clockAt('2');
  assert.equal(await step(), '2');
  await page.keyboard.press('End');
  const last = await page.getAttribute('#step-clock', 'data-steps');
  await clockAt(last);
  assert.equal(await step(), last);
  await page.keyboard.press('Home');
  await clockAt('0');
  assert.equal(await step(), '0');
  // Speed: a select, changed by keyboard.
  await page.focus('#speed');
  await page.keyboard.press('ArrowDown');
  // Space on the page body plays; the drawing's text alternative follows.
  await page.focus('#step-log');
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press('Space');
  await page.waitForFunction(() => Number(document.querySelector('#step-clock').dataset.step) >= 1, null, { timeout: 10_000 });
  await page.keyboard.press('Space');
  const alt = await page.textContent('#drawing-text');
  assert.match(alt, /NPU\d → NPU\d: c\d/);
  assert.equal(await page.getAttribute('#topology', 'aria-describedby'), 'drawing-text');
  assert.match(await page.textContent('#buf-summary'), /NPU0: /);
  // Results are announced.
  assert.equal(await page.getAttribute('#run-result .result-blurb', 'role'), 'status');
  assert.equal(await page.getAttribute('#step-description', 'aria-live'), 'polite');
  // The step log and the drawing's card are reachable: the log's steps are buttons.
  assert.ok(await page.locator('#step-log button').count() > 4);
  await page.close();
});

test('rank colours stay distinguishable under protanopia, deuteranopia and tritanopia', async () => {
  // The page's palette (ui/colors.rs RANK), simulated with Machado et al.
  // 2009 (severity 1) matrices; every pair must differ by ΔE76 >= 8.
  const page = await browser.newPage();
  await page.goto(`${BASE}/?lang=en&ranks=8&algo=ring&bytes=64KiB`);
  await page.waitForSelector('#buffers .legend .chip');
  const colours = await page.$$eval('#buffers .legend .legend-item:first-child .chip', (els) => els.map((e) => getComputedStyle(e).backgroundColor));
  assert.equal(colours.length, 8);
  const rgb = colours.map((c) => c.match(/\d+/g).slice(0, 3).map(Number));
  const M = {
    protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
  };
  const lin = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lab = ([r, g, b]) => {
    const X = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    const Y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    const Z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
    return [116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))];
  };
  let worst = Infinity;
  for (const [name, m] of Object.entries(M)) {
    const sim = rgb.map((c) => {
      const l = c.map(lin);
      return lab(m.map((row) => Math.min(1, Math.max(0, row[0] * l[0] + row[1] * l[1] + row[2] * l[2]))));
    });
    for (let i = 0; i < sim.length; i++) {
      for (let j = i + 1; j < sim.length; j++) {
        const d = Math.hypot(...sim[i].map((v, k) => v - sim[j][k]));
        worst = Math.min(worst, d);
        assert.ok(d >= 8, `${name}: rank ${i} vs rank ${j} ΔE ${d.toFixed(1)}`);
      }
    }
  }
  appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} rank colours: smallest ΔE76 between two ranks under simulated CVD = ${worst.toFixed(1)}\n`);
  // Colour is not the only carrier: at 8 ranks every cell has its dots.
  assert.ok(await page.locator('#buffers .cell .pip.on').count() > 0);
  await page.close();
});

test('reduced motion: a step shows its end state at once', async () => {
  const ctx = await browser.newContext({ reducedMotion: 'reduce', viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(`${BASE}/?lang=en&op=allreduce&algo=ring&ranks=4&bytes=64KiB`);
  await page.waitForSelector('#btn-forward');
  await page.click('#btn-forward');
  // No gliding: the model clock jumps to the end of step 1 and stays there.
  await page.waitForTimeout(200);
  const a = await page.textContent('#step-clock .t');
  await page.waitForTimeout(900);
  const b = await page.textContent('#step-clock .t');
  assert.equal(a, b);
  assert.notEqual(a, 't = 0 µs');
  await ctx.close();
});
