// End-to-end: the tuner-file card (ui/tuner_card.rs, engine/tune.rs
// compare_tuner): a tuner file someone has, read as what it makes the
// library run at each size of the chart, beside the model's
// recommendation for the page's configuration.
// - NCCL's sample performance data (tests/fixtures/readers), pasted on
//   h100-8: AllReduce 1×8 runs ring/simple up to 16 KiB (line 3),
//   ring/ll128 to 512 KiB (line 8), nvls/simple at 1 MiB (line 11), and
//   no line matches above; each size the file decides differs from the
//   model's ring/ll;
// - HCCL's example rules, loaded from the file on 910b-8: AllGather up to
//   1 MiB is aicpu/sole/mesh (line 36), shown beside the model's mesh but
//   not compared; switching the collective keeps the file and re-reads it;
// - a broken file names the line, the value and what is allowed, and the
//   text stays in the box with that line selected;
// - a dropped file is read at once; the card speaks Chinese on lang=zh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import { BASE, launchChromium, watch } from './browser.mjs';

const DIR = new URL('../fixtures/readers/', import.meta.url).pathname;
const CSV = readFileSync(`${DIR}nccl_tuner_sample_performance_data.csv`, 'utf8');
const HCCL = `${DIR}hccl_tuner_config.json`;
const MIB = 1 << 20;

let browser;
let context;
const problems = [];
before(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
});
after(async () => { await browser?.close(); });

async function open(query) {
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(`${BASE}/?v=1&${query}`);
  await page.waitForSelector('#tuner');
  return page;
}

/** Waits until the card shows the model's side too. */
async function ready(page) {
  await page.waitForFunction(() => document.querySelector('#tuner')?.getAttribute('data-state') === 'ready',
    null, { timeout: 60_000 });
}

/** The table's rows: size range, the file's choice and line, the model's, the verdict. */
async function rows(page) {
  return page.$$eval('#tuner-rows tbody tr', (trs) => trs.map((tr) => ({
    from: Number(tr.dataset.from),
    to: Number(tr.dataset.to),
    file: tr.dataset.file,
    line: tr.dataset.line,
    model: tr.dataset.model,
    state: tr.dataset.state,
    text: tr.textContent,
  })));
}

const at = (rs, bytes) => rs.find((r) => r.from <= bytes && bytes <= r.to);

test("NCCL's sample performance data: what it makes NCCL run beside the model", async () => {
  const page = await open('topo=h100-8&op=allreduce');
  await page.fill('#tuner-input', CSV);
  await page.click('#tuner-read');
  await ready(page);
  assert.match(await page.textContent('#tuner-kind'), /NCCL tuner performance data.*9 rules/);
  assert.match(await page.textContent('#tuner-for'), /What it makes NCCL run for AllReduce on 8 ranks \(1 node\), fp32/);
  const rs = await rows(page);
  assert.deepEqual(rs.map((r) => [r.from, r.to, r.file, r.line, r.model, r.state]), [
    [1024, 16384, 'ring/simple', '3', 'ring/ll', 'differs'],
    [32768, 524288, 'ring/ll128', '8', 'ring/ll', 'differs'],
    [MIB, MIB, 'nvls/simple', '11', 'ring/ll', 'differs'],
    [2 * MIB, 1 << 30, '', '', 'nvls/simple', 'none'],
  ]);
  assert.match(at(rs, MIB).text, /1 MiBnvls\/simpleline 11ring\/ll≠/);
  assert.match(at(rs, 4 * MIB).text, /no rule: NCCL's own choice/);
  assert.match(await page.textContent('#tuner-summary'),
    /At all 11 sizes this file decides \(of the chart's 21\), it picks something other than the model's recommendation\./);
  mkdirSync('tests/e2e/out', { recursive: true });
  await (await page.$('#tuner')).screenshot({ path: 'tests/e2e/out/tuner-card-nccl.png' });
  assert.deepEqual(problems, []);
});

test("HCCL's tuner-plugin rules from a file; the file stays when the collective changes", async () => {
  const page = await open('topo=910b-8&op=allgather');
  await page.setInputFiles('#tuner-file', HCCL);
  await ready(page);
  assert.match(await page.inputValue('#tuner-input'), /"op_types"/);
  assert.match(await page.textContent('#tuner-kind'), /HCCL tuner-plugin rules/);
  let rs = await rows(page);
  assert.deepEqual(rs.map((r) => [r.from, r.to, r.file, r.line, r.model, r.state]), [
    [1024, MIB, 'aicpu/sole/mesh', '36', 'mesh', 'apart'],
    [2 * MIB, 1 << 30, '', '', 'mesh', 'none'],
  ]);
  assert.match(await page.textContent('#tuner-apart'), /HCCL's rules name an engine, an executor and a template/);
  // AllReduce in fp16: the first rule (8..16 ranks, up to 64 KiB) is NHR,
  // then meshoneshot for exactly 8 ranks.
  await page.selectOption('#op', 'allreduce');
  await page.selectOption('#dtype', 'fp16');
  await page.waitForFunction(() => document.querySelector('#tuner-for')?.textContent.includes('AllReduce')
    && document.querySelector('#tuner-for')?.textContent.includes('fp16')
    && document.querySelector('#tuner')?.getAttribute('data-state') === 'ready', null, { timeout: 60_000 });
  rs = await rows(page);
  assert.deepEqual([at(rs, 64 * 1024).file, at(rs, 64 * 1024).line], ['aicpu/sole/nhr', '7']);
  assert.deepEqual([at(rs, 128 * 1024).file, at(rs, 128 * 1024).line], ['aicpu/sole/meshoneshot', '20']);
  assert.match(await page.inputValue('#tuner-input'), /"meshoneshot"/);
  await (await page.$('#tuner')).screenshot({ path: 'tests/e2e/out/tuner-card-hccl.png' });
  assert.deepEqual(problems, []);
});

test('a broken file names the line, the value and what is allowed, and stays in the box', async () => {
  const page = await open('topo=h100-8&op=allreduce');
  const bad = CSV.replace('allreduce,32768,ring,simple,4,', 'allreduce,32768,ring,simple,four,');
  await page.fill('#tuner-input', bad);
  await page.click('#tuner-read');
  await page.waitForSelector('#tuner-error');
  assert.equal(await page.getAttribute('#tuner', 'data-state'), 'error');
  assert.equal(await page.textContent('#tuner-error'),
    'This file cannot be read: line 7: channels is `four`; expected an integer (-1 for any)');
  assert.equal(await page.inputValue('#tuner-input'), bad);
  // The line it names is selected in the box.
  assert.equal(await page.$eval('#tuner-input', (ta) => ta.value.slice(ta.selectionStart, ta.selectionEnd)),
    'allreduce,32768,ring,simple,four,1,8,-1,-1,0.18,189.2,18.4');
  const json = readFileSync(HCCL, 'utf8').replace('"nhr"', '"nhrr"');
  await page.fill('#tuner-input', json);
  await page.click('#tuner-read');
  await page.waitForFunction(() => document.querySelector('#tuner-error')?.textContent.includes('nhrr'));
  assert.match(await page.textContent('#tuner-error'),
    /op_types\.allreduce\.rules\[0\]: invalid template 'nhrr' \(expected one of mesh, mesh2die, meshoneshot/);
  await (await page.$('#tuner')).screenshot({ path: 'tests/e2e/out/tuner-card-error.png' });
  assert.deepEqual(problems, []);
});

test('the card in Chinese, a file dropped on it', async () => {
  const page = await open('topo=h100-8&op=allreduce&lang=zh');
  const drop = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'sample_performance_data.csv', { type: 'text/csv' }));
    return dt;
  }, CSV);
  await page.dispatchEvent('#tuner-input', 'drop', { dataTransfer: drop });
  await ready(page);
  assert.equal(await page.inputValue('#tuner-input'), CSV);
  assert.equal(await page.textContent('#tuner h2'), 'Tuner 配置文件');
  assert.match(await page.textContent('#tuner-for'), /此文件让 NCCL 在 AllReduce、8 个 rank（1 个节点）、fp32 下/);
  assert.match(at(await rows(page), 4 * MIB).text, /无规则命中：由 NCCL 自行选择/);
  assert.deepEqual(problems, []);
});
