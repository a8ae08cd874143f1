// End-to-end: the Training step card (ui/step_card.rs, engine/step/):
// llama3-8b on h100-8 with dp 8 gives the same figures as
// `cclsim step --model llama3-8b --dp 8 --seq 4096 --batch 8 --topo h100-8 --json`;
// a collective's link opens the playground on that call; on 910b-8
// (no cited peak) the engine's error names peak_tflops, and a given peak
// makes the step. Screenshots: docs/step.png (1400×900) and a 390 px phone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, launchChromium, watch } from './browser.mjs';

// From `cclsim step --model llama3-8b --dp 8 --seq 4096 --batch 8 --topo h100-8 --json`.
const EXPECTED = {
  stepTimeUs: 502783.5318533738,
  tokensPerS: 65173.176772933955,
  firstBytes: 1050673152,
  // The fourth row (a 32 MiB bucket): the one the test opens.
  drill: 3,
  drillBytes: 33554432,
  drillPrimitive: 'allreduce',
  drillRanks: 8,
  rows: 6,
};

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

async function open(viewport, query) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = watch(page);
  await page.goto(`${BASE}/?${query}`);
  await page.waitForSelector('#step', { timeout: 60_000 });
  await page.locator('#step').scrollIntoViewIfNeeded();
  return { context, page, problems };
}

const near = (got, want, rel = 1e-6) =>
  assert.ok(Math.abs(got - want) <= rel * Math.abs(want), `${got} vs ${want}`);

test('llama3-8b dp 8 on h100-8: the engine\'s figures, and a row opens its collective', async () => {
  const { context, page, problems } = await open({ width: 1400, height: 900 }, 'v=1&topo=h100-8&ranks=8');
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  near(Number(await page.getAttribute('#step-time', 'data-us')), EXPECTED.stepTimeUs);
  near(Number(await page.getAttribute('#step-tokens', 'data-v')), EXPECTED.tokensPerS);
  const rows = page.locator('#step-table tbody tr');
  assert.equal(await rows.count(), EXPECTED.rows);
  assert.equal(await rows.first().getAttribute('data-bytes'), String(EXPECTED.firstBytes));
  assert.match(await page.textContent('#step-time'), /\d/);
  assert.match(await page.textContent('#step-exposed'), /%/);
  // The lane drawing: two lanes.
  assert.equal(await page.locator('#step-lanes .step-lane').count(), 2);
  await page.locator('#step').screenshot({ path: 'docs/step.png' });
  await page.screenshot({ path: '/tmp/step-desktop.png' });
  // Drill down: one collective in the playground.
  const drill = `#step-drill-${EXPECTED.drill}`;
  assert.equal(await rows.nth(EXPECTED.drill).getAttribute('data-bytes'), String(EXPECTED.drillBytes));
  await Promise.all([page.waitForURL(/bytes=/), page.click(drill)]);
  const u = new URL(page.url());
  assert.equal(u.searchParams.get('op'), EXPECTED.drillPrimitive);
  assert.equal(u.searchParams.get('bytes'), String(EXPECTED.drillBytes));
  assert.equal(u.searchParams.get('topo'), 'h100-8');
  await page.waitForSelector('#run-result[data-bytes]', { timeout: 60_000 });
  assert.equal(await page.getAttribute('#run-result', 'data-bytes'), String(EXPECTED.drillBytes));
  assert.equal(await page.getAttribute('#run-result', 'data-op'), EXPECTED.drillPrimitive);
  assert.equal(await page.getAttribute('#run-result', 'data-ranks'), String(EXPECTED.drillRanks));
  assert.equal(await page.inputValue('#bytes'), '32 MiB');
  assert.deepEqual(problems, []);
  await context.close();
});

test('910b-8 without a peak: the error names peak_tflops; a peak makes the step', async () => {
  const { context, page, problems } = await open({ width: 390, height: 844 }, 'v=1');
  await page.waitForSelector('#step-error', { timeout: 60_000 });
  assert.match(await page.textContent('#step-error'), /peak_tflops/);
  await page.fill('#step-peak', '300');
  await page.press('#step-peak', 'Enter');
  await page.locator('#step-peak').blur();
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  assert.match(await page.textContent('#step-compute'), /300 TFLOPS/);
  // Nothing wider than the phone's viewport but the table's own scroller.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(overflow <= 390, `page scrolls sideways: ${overflow}`);
  await page.locator('#step').scrollIntoViewIfNeeded();
  await page.locator('#step').screenshot({ path: '/tmp/step-phone.png' });
  assert.deepEqual(problems, []);
  await context.close();
});

// From `cclsim step --model llama3-70b --dp 1 --tp 8 --seq 4096 --batch 8 --topo h100-8 --json`.
const SHARED = { stepTimeUs: 5036955.907116522, rows: 1, bytes: 536870912 };

test('the step is in the link: a shared link opens it, an edit is written back, a bad key is named', async () => {
  const query = 'v=1&topo=h100-8&ranks=8&step=llama3-70b&step_dp=1&step_tp=8';
  const { context, page, problems } = await open({ width: 1400, height: 900 }, query);
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  assert.equal(await page.inputValue('#step-model'), 'llama3-70b');
  assert.equal(await page.inputValue('#step-tp'), '8');
  assert.equal(await page.inputValue('#step-dp'), '1');
  near(Number(await page.getAttribute('#step-time', 'data-us')), SHARED.stepTimeUs);
  const rows = page.locator('#step-table tbody tr');
  assert.equal(await rows.count(), SHARED.rows);
  assert.equal(await rows.first().getAttribute('data-bytes'), String(SHARED.bytes));
  // An edit goes into the address bar, and a reload keeps it.
  await page.fill('#step-batch', '16');
  await page.locator('#step-batch').blur();
  await page.waitForURL(/step_batch=16/);
  const u = new URL(page.url());
  assert.equal(u.searchParams.get('step'), 'llama3-70b');
  assert.equal(u.searchParams.get('step_tp'), '8');
  await page.reload();
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  assert.equal(await page.inputValue('#step-batch'), '16');
  assert.equal(await page.inputValue('#step-tp'), '8');
  // The table's bytes follow the batch: twice the sequences per call.
  assert.equal(await rows.first().getAttribute('data-bytes'), String(2 * SHARED.bytes));
  assert.deepEqual(problems, []);
  // A value not of its key's type is named in the link's banner; the
  // step keeps the rest.
  await page.goto(`${BASE}/?${query}&step_zero=5`);
  await page.waitForSelector('#config-error:not([hidden])');
  assert.match(await page.locator('#config-error').innerText(), /step_zero/);
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  assert.equal(await page.inputValue('#step-tp'), '8');
  await context.close();
});

// A pasted config.json (Llama-3-70B's fields, one ignored) gives what
// `cclsim step --config cfg.json --dp 1 --tp 8 --seq 4096 --batch 8 --topo h100-8`
// gives, and the link carries its shape; a bad field is named.
test('a pasted config.json is the step\'s model, and its shape is in the link', async () => {
  const { context, page, problems } = await open({ width: 1400, height: 900 },
    'v=1&topo=h100-8&ranks=8&step=llama3-8b&step_dp=1&step_tp=8');
  await page.click('#step-config summary');
  await page.fill('#step-config-json', JSON.stringify({
    num_attention_heads: 7, hidden_size: 8192, intermediate_size: 28672, num_hidden_layers: 80, vocab_size: 128256,
  }));
  await page.click('#step-config-use');
  assert.match(await page.textContent('#step-error'), /num_attention_heads “7”/);
  await page.fill('#step-config-json', JSON.stringify({
    hidden_size: 8192, intermediate_size: 28672, num_hidden_layers: 80, num_attention_heads: 64,
    num_key_value_heads: 8, vocab_size: 128256, rope_theta: 500000.0,
  }));
  await page.click('#step-config-use');
  await page.waitForURL(/step_shape=/);
  await page.waitForFunction((want) => {
    const el = document.querySelector('#step-time');
    return el && Math.abs(Number(el.getAttribute('data-us')) - want) <= 1e-6 * want;
  }, SHARED.stepTimeUs, { timeout: 60_000 });
  assert.equal(new URL(page.url()).searchParams.get('step_shape'), '8192.28672.80.64.8.128256.0.0.0');
  assert.equal(await page.inputValue('#step-model'), 'config.json');
  await page.reload();
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  assert.equal(await page.inputValue('#step-model'), 'config.json');
  near(Number(await page.getAttribute('#step-time', 'data-us')), SHARED.stepTimeUs);
  // A preset replaces the pasted model.
  await page.selectOption('#step-model', 'llama3-8b');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('step_shape'));
  await page.locator('#step').screenshot({ path: '/tmp/step-config.png' });
  assert.deepEqual(problems, []);
  await context.close();
});

// The README's worked case is one click from the card: the link sets the
// machine and the step; the figure is `cclsim step --model llama3-70b
// --topo 910b-8 --dp 8 --batch 8 --peak-tflops 300 --json`'s.
test('the worked case opens from the card with the CLI\'s step time', async () => {
  const { context, page, problems } = await open({ width: 1400, height: 900 }, 'v=1');
  await Promise.all([page.waitForURL(/step=llama3-70b/), page.click('#step-worked')]);
  const u = new URL(page.url());
  assert.equal(u.searchParams.get('topo'), '910b-8');
  assert.equal(u.searchParams.get('step_peak'), '300');
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  near(Number(await page.getAttribute('#step-time', 'data-us')), 14478180.80710211);
  assert.match(await page.textContent('#step-exposed'), /0\.2 %/);
  assert.deepEqual(problems, []);
  await context.close();
});

// From `cclsim step --model llama3-8b --dp 8 --seq 4096 --batch 8 --topo h100-8 --compress int8 --json`
// (A, pinned, is EXPECTED's step without compression).
const COMPRESSED = { stepTimeUs: 510562.284926254 };

test('a pinned step sits beside the current one: compression compared, kept in the link', async () => {
  const { context, page, problems } = await open({ width: 1400, height: 900 }, 'v=1&topo=h100-8&ranks=8');
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  await Promise.all([page.waitForURL(/step_vs=/), page.click('#step-pin')]);
  await page.selectOption('#step-compress', 'int8');
  await page.waitForURL(/step_compress=int8/);
  await page.waitForSelector('#step-vs-table', { timeout: 60_000 });
  const figure = async (name) => {
    const row = page.locator(`#step-vs-table tr[data-figure="${name}"]`);
    await row.waitFor({ timeout: 60_000 });
    return { a: Number(await row.getAttribute('data-a')), b: Number(await row.getAttribute('data-b')) };
  };
  await page.waitForFunction((want) => {
    const r = document.querySelector('#step-vs-table tr[data-figure="step_time_us"]');
    return r && Math.abs(Number(r.getAttribute('data-b')) - want) < 1e-6 * want;
  }, COMPRESSED.stepTimeUs, { timeout: 60_000 });
  const t = await figure('step_time_us');
  near(t.a, EXPECTED.stepTimeUs);
  near(t.b, COMPRESSED.stepTimeUs);
  // The compute does not change; what differs is said by its key.
  const c = await figure('compute_us');
  assert.equal(c.a, c.b);
  assert.match(await page.innerText('#step-vs-differs'), /step_compress: default → int8/);
  // The gradient rows say how they were timed.
  assert.match(await page.innerText('#step-table'), /· int8/);
  await page.locator('#step').screenshot({ path: 'docs/step-compare.png' });
  // A reload (the link) keeps both sides; Unpin drops A from the link.
  await page.reload();
  await page.waitForSelector('#step-vs-table', { timeout: 60_000 });
  near((await figure('step_time_us')).a, EXPECTED.stepTimeUs);
  await page.click('#step-unpin');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('step_vs'));
  await page.waitForSelector('#step-pin', { timeout: 60_000 });
  assert.equal(await page.locator('#step-vs-table').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

// From `cclsim step --model llama3-8b --dp 1 --cp 8 --seq 32768 --batch 1
// --attention-flops --topo h100-8 --json`.
const CONTEXT_PARALLEL = {
  stepTimeUs: 1036419.1044847994,
  rows: 8,
};

test('context parallelism on the card: the ring asks for attention FLOPs, then times as the CLI does', async () => {
  const { context, page, problems } = await open({ width: 1400, height: 900 },
    'v=1&topo=h100-8&ranks=8&step=llama3-8b&step_dp=1&step_seq=32768&step_batch=1');
  // dp 1 on 8 ranks: the product of the degrees is named.
  await page.waitForSelector('#step-error', { timeout: 60_000 });
  assert.match(await page.textContent('#step-error'), /dp·tp·pp·cp = 1·1·1·1 = 1/);
  await page.fill('#step-cp', '8');
  await page.dispatchEvent('#step-cp', 'change');
  await page.waitForURL(/step_cp=8/);
  await page.waitForFunction(() => /attention/.test(document.querySelector('#step-error')?.textContent ?? ''),
    null, { timeout: 60_000 });
  assert.match(await page.textContent('#step-error'), /^cp=8/);
  await page.check('#step-attn');
  await page.waitForURL(/step_attn=1/);
  await page.waitForSelector('#step-table', { timeout: 60_000 });
  near(Number(await page.getAttribute('#step-time', 'data-us')), CONTEXT_PARALLEL.stepTimeUs);
  const rows = page.locator('#step-table tbody tr');
  assert.equal(await rows.count(), CONTEXT_PARALLEL.rows);
  const ring = rows.filter({ hasText: 'context-parallel ring' });
  assert.equal(await ring.count(), 2);
  assert.match(await ring.first().textContent(), /attention forward/);
  // The preset list holds DeepSeek-V3.
  assert.equal(await page.locator('#step-model option[value="deepseek-v3"]').count(), 1);
  assert.deepEqual(problems, []);
  await context.close();
});
