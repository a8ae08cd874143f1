// End-to-end: every guided lesson plays through, in English and in Chinese.
// Each stop: the learn panel shows it (data-stop), the page reaches the
// stop's configuration and step, the highlight exists, the question's
// answer is hidden and one click reveals it. Also: a stop link restores the
// page, Back / Forward walk the stops, the language switch translates the
// narration, a bad lesson / stop / lang value says what was used instead.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, appendFileSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });
const LESSON_DIR = new URL('../../lessons/', import.meta.url).pathname;
const lessons = readdirSync(LESSON_DIR).filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(LESSON_DIR + f, 'utf8')));
const CJK = /[\u4e00-\u9fff]/;

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

async function newPage(width = 1280, height = 800) {
  const page = await browser.newPage({ viewport: { width, height } });
  const problems = [];
  watch(page, problems);
  return { page, problems };
}

/** The highlight of a stop's `look`, as a selector that must match. */
function lookSelector(look) {
  if (look.cell) return `#buffers .buf-row[data-rank="${look.cell.rank}"] .cell[data-chunk="${look.cell.chunk}"].lesson-look`;
  if (look.ranking) return `#estimate tr.lesson-look[data-algorithm="${look.ranking}"]`;
  if (look.chart) return '#busbw-chart .lesson-look-item';
  if (look.link) return '#topology .link-g.lesson-look-link';
  if (look.panel) return `#${look.panel}.lesson-look, #${look.panel}.lesson-look-dom`;
  throw new Error(`unknown look ${JSON.stringify(look)}`);
}

/** Checks the page shows stop k (1-based) of `lesson`, then reveals its answer. */
async function checkStop(page, lesson, k, lang) {
  const stop = lesson.stops[k - 1];
  await page.waitForSelector(`#learn[data-lesson="${lesson.id}"][data-stop="${k}"]`);
  // The configuration: every key of the stop's query is in the address bar.
  const want = new URLSearchParams(stop.query);
  await page.waitForFunction(([id, kk]) => {
    const q = new URLSearchParams(location.search);
    return q.get('lesson') === id && q.get('stop') === String(kk);
  }, [lesson.id, k]);
  const have = new URLSearchParams(new URL(page.url()).search);
  for (const key of ['op', 'algo', 'topo', 'dtype', 'compress', 'placement', 'fusion']) {
    if (want.has(key)) assert.equal(have.get(key), want.get(key), `${lesson.id} stop ${k}: ${key}`);
  }
  assert.equal(have.get('lang'), lang);
  // The step.
  if (await page.locator('#step-clock').count()) {
    const step = await page.getAttribute('#step-clock', 'data-step');
    const steps = Number(await page.getAttribute('#step-clock', 'data-steps'));
    assert.equal(Number(step), Math.min(stop.step, steps), `${lesson.id} stop ${k}: step`);
  }
  // The highlight.
  const sel = lookSelector(stop.look);
  await page.waitForSelector(sel, { state: 'attached', timeout: 15_000 });
  // The words, in the language.
  const say = await page.textContent('#learn-say');
  assert.ok(say.trim().length > 20, `${lesson.id} stop ${k}: narration`);
  // English keeps HCCL's Chinese level names (Server内 / Server间) as terms.
  assert.equal(CJK.test(say.replace(/Server[内间]/g, '')), lang === 'zh', `${lesson.id} stop ${k}: narration language`);
  assert.ok(!/^lesson-/.test(say.trim()), `${lesson.id} stop ${k}: a missing message id`);
  // The answer: hidden, then one click away.
  assert.equal(await page.isVisible('#learn-answer'), false);
  await page.click('#learn-answer-toggle');
  await page.waitForSelector('#learn-answer', { state: 'visible' });
  assert.equal(await page.getAttribute('#learn-answer-toggle', 'aria-expanded'), 'true');
  assert.ok((await page.textContent('#learn-answer')).trim().length > 5);
}

for (const lang of ['en', 'zh']) {
  test(`every lesson plays through stop by stop (${lang})`, async () => {
    const { page, problems } = await newPage();
    const t0 = Date.now();
    let stops = 0;
    for (const lesson of lessons) {
      await page.goto(`${BASE}/?lesson=${lesson.id}&stop=1&lang=${lang}`);
      for (let k = 1; k <= lesson.stops.length; k++) {
        await checkStop(page, lesson, k, lang);
        stops += 1;
        if (k === 1 && lesson.id === 'ring') await page.screenshot({ path: `${OUT}lesson-ring-1-${lang}.png` });
        if (k < lesson.stops.length) await page.click('#learn-next');
      }
      // The last stop's button leads back to the lesson list.
      await page.click('#learn-next');
      await page.waitForSelector('#learn .lesson-list');
    }
    const ms = Date.now() - t0;
    appendFileSync(`${OUT}measurements.txt`, `${new Date().toISOString()} lessons (${lang}): ${lessons.length} lessons, ${stops} stops played through in ${ms} ms\n`);
    assert.ok(lessons.length >= 8);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('a stop link restores the page; Back and Forward walk the stops', async () => {
  const { page, problems } = await newPage();
  await page.goto(`${BASE}/?lesson=hier&stop=1&lang=en`);
  await page.waitForSelector('#learn[data-stop="1"]');
  // Opening topo=910b-4x8 with no ranks uses all 32 NPUs, controls included.
  assert.equal(await page.inputValue('#ranks'), '32');
  await page.click('#learn-next');
  await page.waitForSelector('#learn[data-stop="2"]');
  await page.click('#learn-next');
  await page.waitForSelector('#learn[data-stop="3"]');
  assert.equal(await page.getAttribute('#step-clock', 'data-step'), '2');
  await page.goBack();
  await page.waitForSelector('#learn[data-stop="2"]');
  assert.equal(await page.getAttribute('#step-clock', 'data-step'), '1');
  await page.goBack();
  await page.waitForSelector('#learn[data-stop="1"]');
  assert.equal(await page.getAttribute('#step-clock', 'data-step'), '0');
  await page.goForward();
  await page.waitForSelector('#learn[data-stop="2"]');
  // A fresh page from the same link shows the same stop.
  const url = page.url();
  const { page: p2 } = await newPage();
  await p2.goto(url);
  await p2.waitForSelector('#learn[data-lesson="hier"][data-stop="2"]');
  assert.equal(await p2.getAttribute('#step-clock', 'data-step'), '1');
  assert.equal(await p2.textContent('#learn-say'), await page.textContent('#learn-say'));
  // Changing a setting leaves the stop (the link drops stop=) and offers the way back.
  await p2.selectOption('#algo', 'hier-nhr');
  await p2.waitForSelector('#learn-restore');
  assert.ok(!new URL(p2.url()).searchParams.has('stop'));
  await p2.click('#learn-restore');
  await p2.waitForSelector('#learn-restore', { state: 'detached' });
  assert.equal(new URL(p2.url()).searchParams.get('algo'), 'hier');
  assert.deepEqual(problems, []);
  await p2.close();
  await page.close();
});

test('the language switch translates the page, the narration and the step description', async () => {
  const { page, problems } = await newPage();
  await page.goto(`${BASE}/?lesson=collective&stop=2&lang=en`);
  await page.waitForSelector('#learn[data-stop="2"]');
  const en = await page.textContent('#step-description');
  assert.match(en, /NPU0 sends chunk 3, which already holds rank 0's contribution, to NPU1, which adds it into its own copy/);
  assert.match(await page.textContent('#step-why'), /Ring ReduceScatter/);
  await page.click('.lang-button[data-lang="zh"]');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  const zh = await page.textContent('#step-description');
  assert.match(zh, /NPU0 把 数据块 3（已含 rank 0 的贡献）发给 NPU1，NPU1 将其累加到自己的副本上/);
  assert.match(await page.textContent('#learn-say'), /环\(Ring\)算法/);
  assert.match(await page.textContent('#estimate'), /预估/);
  assert.equal(new URL(page.url()).searchParams.get('lang'), 'zh');
  // NVIDIA machines say GPU.
  await page.goto(`${BASE}/?lesson=ring&stop=1&lang=en`);
  await page.waitForSelector('#learn[data-stop="1"]');
  assert.match(await page.textContent('#step-description'), /GPU0 sends/);
  assert.doesNotMatch(await page.textContent('#step-description'), /NPU/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('bad lesson, stop and lang values say what was used instead', async () => {
  const { page } = await newPage();
  await page.goto(`${BASE}/?lesson=ring&stop=99&lang=xx&ranks=zz`);
  await page.waitForSelector('#config-error:not([hidden])');
  const banner = await page.textContent('#config-error');
  assert.match(banner, /stop="99"/);
  assert.match(banner, /used stop=1 instead/);
  assert.match(banner, /lang="xx"/);
  assert.match(banner, /used lang=(en|zh) instead/);
  assert.match(banner, /ranks="zz"/);
  assert.match(banner, /used ranks=\d+ instead/);
  await page.waitForSelector('#learn[data-lesson="ring"][data-stop="1"]');
  await page.goto(`${BASE}/?lesson=nope`);
  assert.match(await page.textContent('#config-error'), /lesson="nope"/);
  await page.close();
});
