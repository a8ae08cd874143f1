// Screenshots of the main views at 1280×800 and on a 390-px-wide phone
// (tests/e2e/out/screen-*.png), for a person to look at; also checks that
// nothing overflows the phone's width and that play / step sit beside the
// drawing at 64 ranks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { BASE, launchChromium } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

const settled = () => {
  const s = document.querySelector('#run-result')?.dataset.state;
  return s && s !== 'idle' && s !== 'running';
};

const SHOTS = [
  ['default-en', '?lang=en'],
  ['default-zh', '?lang=zh'],
  ['lesson-collective-2-en', '?lesson=collective&stop=2&lang=en'],
  ['lesson-collective-2-zh', '?lesson=collective&stop=2&lang=zh'],
  ['lesson-hier-3-zh', '?lesson=hier&stop=3&lang=zh'],
  ['lesson-mesh-4-en', '?lesson=mesh&stop=4&lang=en'],
  ['ranks64-en', '?lang=en&topo=910b-8x8&op=allreduce&algo=hier&bytes=1MiB'],
];

for (const [name, query] of SHOTS) {
  for (const [suffix, vp] of [['', { width: 1280, height: 800 }], ['-phone', { width: 390, height: 844 }]]) {
    test(`screenshot ${name}${suffix}`, async () => {
      const page = await browser.newPage({ viewport: vp, deviceScaleFactor: 1 });
      await page.goto(`${BASE}/${query}`);
      await page.waitForFunction(settled, null, { timeout: 120_000 });
      if (query.includes('lesson=')) {
        await page.click('#learn-answer-toggle');
      }
      await page.screenshot({ path: `${OUT}screen-${name}${suffix}.png` });
      if (suffix === '-phone') {
        const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(over <= 1, `${name}: the page is ${over} px wider than the phone`);
      }
      if (name.startsWith('ranks64') && !suffix) {
        // Play / step are in the drawing's column, not below 64 buffer rows.
        const inTopo = await page.locator('#stage-topo #btn-play').count();
        assert.equal(inTopo, 1);
        assert.ok(await page.locator('#buffers .buf-grid.compact').count() === 1);
      }
      await page.close();
    });
  }
}

// The first screen a visitor sees (README's four shots): the run's result
// and the estimate (on a phone its predicted time whole, above the fold),
// without scrolling; on a phone "Settings ↓" takes it to the controls.
for (const lang of ['en', 'zh']) {
  for (const [kind, vp, must] of [
    ['desktop', { width: 1400, height: 900 }, ['#run-result', '#estimate']],
    ['phone', { width: 390, height: 844 }, ['#run-result', '#estimate', '#estimate-us']],
  ]) {
    test(`first screen, ${kind}, ${lang}: ${must.join(' and ')} in view`, async () => {
      const page = await browser.newPage({ viewport: vp, deviceScaleFactor: 1 });
      await page.goto(`${BASE}/?lang=${lang}`);
      await page.waitForFunction(settled, null, { timeout: 120_000 });
      for (const sel of must) {
        const box = await page.locator(sel).first().boundingBox();
        assert.ok(box && box.y + 40 < vp.height, `${sel} starts at ${box?.y} px, below the ${vp.height} px screen`);
      }
      await page.screenshot({ path: `docs/first-${kind}-${lang}.png` });
      if (kind === 'phone') {
        const us = await page.locator('#estimate-us').boundingBox();
        assert.ok(us.y + us.height <= vp.height, `the predicted time ends at ${us.y + us.height} px`);
        await page.click('#jump-settings');
        await page.waitForFunction(() => Math.abs(document.querySelector('#controls').getBoundingClientRect().top) < 2);
      }
      await page.close();
    });
  }
}
