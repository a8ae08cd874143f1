// End-to-end: the page as a person uses it. The controls, the address
// bar, the estimate and the run's result are views of one state, however
// the page got there (controls, a link, a lesson, Back / Forward); a
// what-if or a lesson that changes the settings gives the user's own back
// when it is left; words with units and names keep their case; a link
// with thousands of bad keys gets a short banner; the page has an icon.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const OUT = new URL('./out/', import.meta.url).pathname;
mkdirSync(OUT, { recursive: true });

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

async function open(query, { width = 1400, height = 900 } = {}) {
  const page = await browser.newPage({ viewport: { width, height } });
  const problems = [];
  watch(page, problems);
  await page.goto(`${BASE}/${query}`);
  return { page, problems };
}

/** Waits until the run of `op` on `ranks` ranks reached a final state; returns its data attributes. */
async function settled(page, op, ranks, timeout = 60_000) {
  await page.waitForFunction(([op, ranks]) => {
    const el = document.querySelector('#run-result');
    const s = el?.getAttribute('data-state');
    return s && !['idle', 'running'].includes(s)
      && el.getAttribute('data-op') === op && el.getAttribute('data-ranks') === ranks;
  }, [op, ranks], { timeout });
  return page.$eval('#run-result', (el) => Object.fromEntries(
    [...el.attributes].filter((a) => a.name.startsWith('data-')).map((a) => [a.name.slice(5), a.value])));
}

const param = (page, key) => new URL(page.url()).searchParams.get(key);

/** Every control named after a link key shows the value the address bar has. */
async function controlsShowUrl(page, where) {
  for (const key of ['op', 'algo', 'ranks', 'dtype', 'topo']) {
    const want = param(page, key);
    if (want === null) continue;
    assert.equal(await page.inputValue(`#${key}`), want, `${where}: #${key} shows the link's ${key}`);
  }
}

test('after Back from a lesson the controls show the settings that run, and a pick applies', async () => {
  const { page, problems } = await open('');
  await settled(page, 'allreduce', '8');
  await page.selectOption('#op', 'allgather');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('op') === 'allgather');
  await page.selectOption('#ranks', '4');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('ranks') === '4');
  await settled(page, 'allgather', '4');
  await page.click('#learn-open');
  await page.locator('.lesson-pick').nth(1).click();
  await page.waitForSelector('#learn[data-stop="1"]');
  await page.waitForFunction(() => new URLSearchParams(location.search).has('lesson'));
  await controlsShowUrl(page, 'lesson 2, stop 1');
  await page.goBack();
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('lesson'));
  assert.equal(param(page, 'op'), 'allgather');
  assert.equal(param(page, 'ranks'), '4');
  const r = await settled(page, 'allgather', '4');
  assert.equal(r.state, 'verified', JSON.stringify(r));
  assert.match(await page.locator('#estimate').innerText(), /AllGather/);
  // The controls say what runs.
  assert.equal(await page.inputValue('#op'), 'allgather');
  assert.equal(await page.inputValue('#ranks'), '4');
  await controlsShowUrl(page, 'after Back');
  await page.screenshot({ path: `${OUT}state-after-back.png` });
  // Picking AllReduce runs AllReduce.
  await page.selectOption('#op', 'allreduce');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('op') === 'allreduce');
  assert.equal((await settled(page, 'allreduce', '4')).state, 'verified');
  // Forward to the lesson: the controls follow again.
  await page.goBack();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('op') === 'allgather');
  await page.goForward();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('op') === 'allreduce');
  await controlsShowUrl(page, 'after Forward');
  assert.deepEqual(problems, []);
  await page.close();
});

test('fusion runs its bucket, and turning it off gives the typed size back', async () => {
  const { page, problems } = await open('');
  await settled(page, 'allreduce', '8');
  await page.fill('#bytes', '12MiB');
  await page.press('#bytes', 'Enter');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('bytes') !== null
    && /12/.test(document.querySelector('#bytes').value));
  const typed = await page.inputValue('#bytes');
  const typedParam = param(page, 'bytes');
  await page.locator('#fusion-preset').scrollIntoViewIfNeeded();
  await page.selectOption('#fusion-preset', 'llama3-70b');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('fusion') === 'llama3-70b');
  await page.waitForFunction((t) => document.querySelector('#bytes').value !== t, typed);
  assert.notEqual(param(page, 'bytes'), typedParam, 'fusion runs the bucket');
  await page.selectOption('#fusion-preset', 'none');
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('fusion'));
  await page.waitForFunction((t) => document.querySelector('#bytes').value === t, typed);
  assert.equal(param(page, 'bytes'), typedParam);
  assert.equal(await page.inputValue('#fusion-preset'), 'none');
  assert.deepEqual(problems, []);
  await page.close();
});

test('closing the lessons gives back the settings the user had; Back undoes a control change', async () => {
  const { page, problems } = await open('?slow=3:0.5&ranks=8');
  await settled(page, 'allreduce', '8');
  const before = new URL(page.url()).searchParams;
  assert.equal(before.get('slow'), '3:0.5');
  await page.click('#learn-open');
  await page.locator('.lesson-pick').nth(1).click();
  await page.waitForSelector('#learn[data-stop="1"]');
  await page.waitForFunction(() => new URLSearchParams(location.search).has('lesson'));
  await page.click('#learn-close');
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('lesson'));
  const now = new URL(page.url()).searchParams;
  for (const key of ['slow', 'op', 'algo', 'ranks', 'bytes', 'topo', 'dtype']) {
    assert.equal(now.get(key), before.get(key), `Close lessons keeps the user's ${key}`);
  }
  await controlsShowUrl(page, 'after Close lessons');
  assert.equal(await page.inputValue('#fault-slow'), '3:0.5');
  // The lesson is one Back away.
  await page.goBack();
  await page.waitForSelector('#learn[data-stop="1"]');
  await page.goForward();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('slow') === '3:0.5');
  // A control change is a history entry: Back returns to the settings before it.
  await page.selectOption('#dtype', 'fp16');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('dtype') === 'fp16');
  await page.goBack();
  await page.waitForFunction((d) => new URLSearchParams(location.search).get('dtype') === d, before.get('dtype'));
  assert.ok(page.url().startsWith(BASE), page.url());
  await controlsShowUrl(page, 'after Back from a control change');
  assert.deepEqual(problems, []);
  await page.close();
});

test('headings and labels keep µ, α, β and camel-cased names as written', async () => {
  const { page, problems } = await open('?lesson=ring&stop=1&lang=en');
  await page.waitForSelector('#learn[data-stop="1"]');
  const head = await page.locator('#learn-head').innerText();
  assert.match(head, /\(α vs β\)/, head);
  const late = await page.locator('label[for="fault-late"]').innerText();
  assert.match(late, /rank:µs/, late);
  await page.locator('label[for="fault-late"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${OUT}state-case-faults.png` });
  await page.goto(`${BASE}/?lesson=collective&stop=1&lang=en`);
  await page.waitForSelector('#learn[data-stop="1"]');
  const head2 = await page.locator('#learn-head').innerText();
  assert.match(head2, /AllReduce = ReduceScatter \+ AllGather/, head2);
  assert.equal(await page.locator('label[for="op"]').innerText(), 'Primitive');
  await page.screenshot({ path: `${OUT}state-case-lesson.png` });
  assert.deepEqual(problems, []);
  await page.close();
});

test('a link with 2 000 unknown keys gets a short banner', async () => {
  const keys = Array.from({ length: 2000 }, (_, i) => `zz${i}=1`).join('&');
  const { page, problems } = await open(`?${keys}`);
  await page.waitForSelector('#config-error:not([hidden])');
  assert.equal(await page.locator('#config-error li.config-notice').count(), 5);
  const more = await page.locator('#config-notice-more').innerText();
  assert.match(more, /1,?995 more/, more);
  const text = await page.locator('#config-error').innerText();
  assert.ok(text.length < 2000, `the banner is ${text.length} characters`);
  assert.match(text, /zz0/);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  assert.ok(height < 8000, `the page is ${height} px high`);
  await page.screenshot({ path: `${OUT}state-many-keys.png` });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the page has an icon and no request of it fails', async () => {
  const page = await browser.newPage();
  const problems = [];
  watch(page, problems);
  const failed = [];
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  await page.goto(`${BASE}/`);
  await settled(page, 'allreduce', '8');
  assert.equal(await page.locator('link[rel="icon"]').count(), 1);
  assert.deepEqual(failed, []);
  assert.deepEqual(problems, []);
  await page.close();
});

// One definition of a message size: the box takes what the link and
// cclsim take (1 B to 16 GiB, a whole number of elements), says that range
// when a size is out of it, and keeps a size written as the user wrote it.
test('the size box takes the link\'s range, says it, and keeps a size as typed', async () => {
  const { page, problems } = await open('?v=1&topo=910b-8&op=allreduce&ranks=8');
  await settled(page, 'allreduce', '8');
  await page.fill('#bytes', '1.5MB');
  await page.press('#bytes', 'Enter');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('bytes') === '1500000');
  await settled(page, 'allreduce', '8');
  assert.equal(await page.inputValue('#bytes'), '1.5MB');
  await page.fill('#bytes', '32GiB');
  await page.press('#bytes', 'Enter');
  const error = await page.locator('#bytes-error').innerText();
  assert.match(error, /1 B to 16\.00 GiB|1 B to 16 GiB/, error);
  assert.match(error, /17179869184/, error);
  assert.equal(param(page, 'bytes'), '1500000');
  assert.deepEqual(problems, []);
  await page.close();
});
