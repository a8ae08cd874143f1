// End-to-end: the calibrated NCCL prediction on the page (ui/prediction.rs,
// ui/chart.rs, "Use this profile for the model" in ui/app.rs).
// - h100-8 AllReduce 16 MiB: the headline's 80 % range, what NCCL runs and
//   NCCL's own time beside ours; the chart's band;
// - a pasted 2-node Polaris log (NCCL 2.18, 4 × A100 a node), profile on:
//   the page moves to the measured machine on the log's 8 ranks; 540 nodes
//   (2 160 ranks) asked through the nodes field: NCCL's tree with LL, a
//   range, "measured at 2 nodes / predicted for 540"; the link carries it;
//   the profile off restores the topology and ranks before;
// - the same in Chinese, said from the answer's values.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BASE, launchChromium, watch, runResult as final } from './browser.mjs';

const POLARIS = readFileSync(
  new URL('../fixtures/polaris-2.18/n2_all_reduce.txt', import.meta.url), 'utf8');

let browser;
let context;
const problems = [];
before(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
});
after(async () => { await browser?.close(); });

async function open(url) {
  const page = await context.newPage();
  watch(page, problems);
  await page.goto(url);
  return page;
}

/** `#prediction`'s data-* once it shows what runs. */
async function prediction(page, runs) {
  await page.waitForFunction((r) => document.querySelector('#prediction')?.dataset.runs === r,
    runs, { timeout: 60_000, polling: 50 });
  return page.$eval('#prediction', (el) => ({ ...el.dataset }));
}

/** `68.4–135.9 µs` → [68.4, 135.9]. */
function range(text) {
  const m = text.match(/([\d.,]+)–([\d.,]+)/);
  assert.ok(m, text);
  return [m[1], m[2]].map((x) => Number(x.replace(/[,\s]/g, '')));
}

test('h100-8 AllReduce 16 MiB shows the range, what NCCL runs and NCCL\'s own time', async () => {
  problems.length = 0;
  const page = await open(`${BASE}/?lang=en&topo=h100-8&op=allreduce&bytes=16MiB`);
  const r = await final(page, { topo: 'h100-8', bytes: String(16 << 20) });
  const p = await prediction(page, 'NVLS/Simple');
  const t = Number(r['estimate-us']);
  const [lo, hi] = [Number(p.lowUs), Number(p.highUs)];
  // Calibrated NVLS at 16 MiB on 8 H100: 25 µs + 16 MiB / 274.29 GB/s
  // + the fill of 2 × 32 KiB chunks × 128 in flight = 116.75 µs, 80 % in
  // 96.1–141.8; NCCL's own constants: 98.4 µs.
  assert.ok(Math.abs(t - 116.75) < 0.01, `${t}`);
  assert.ok(Math.abs(lo - 96.13) < 0.01 && Math.abs(hi - 141.80) < 0.01, `${lo} ${hi}`);
  assert.ok(Math.abs(Number(p.libraryUs) - 98.40) < 0.01, p.libraryUs);
  assert.equal(p.channels, '8');
  // What the user reads: the range under the time, NCCL's own time beside it.
  const shown = range(await page.textContent('#estimate-range'));
  assert.deepEqual(shown, [96.1, 141.8]);
  const [blo, bhi] = range(await page.textContent('#estimate-busbw-range'));
  const busbw = Number(r['busbw-gbps']);
  assert.ok(blo < busbw && busbw < bhi, `${blo} ${busbw} ${bhi}`);
  assert.match(await page.textContent('#prediction-runs'), /NCCL runs NVLS\/Simple on 8 channels\s*· NCCL's own model: 98\.4 µs/);
  assert.match(await page.textContent('#prediction-reach'), /Basis\s*no measurement of this machine.*Predicted\s*AllReduce on 1 node \(8 ranks\), 16 MiB/s);
  assert.match(await page.textContent('#prediction'), /80 % range\s*96\.1–141\.8 µs · busbw/);
  // The chart: the band and the prediction at every chart size, in the legend.
  await page.waitForSelector('#busbw-chart .chart-svg[data-predicted="21"] svg polygon', { timeout: 120_000 });
  assert.equal(await page.textContent('#chart-predicted'), 'NCCL (calibrated) — 80 % range');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a pasted 2-node Polaris log predicts 540 nodes on the measured machine, and comes back', async () => {
  problems.length = 0;
  const page = await open(`${BASE}/?lang=en&op=allreduce&bytes=1KiB`);
  const before = await final(page, { topo: '910b-8', ranks: '8' });
  await page.fill('#log-input', POLARIS);
  await page.click('#use-profile');
  // The machine the log measured, on its 8 ranks: 2 nodes × 4 A100.
  await final(page, { topo: 'measured', ranks: '8' });
  assert.equal(await page.inputValue('#topo'), 'measured');
  assert.match(await page.locator('#topo option:checked').textContent(), /2 nodes × 4 NVIDIA A100-SXM4-40GB/);
  assert.equal(await page.inputValue('#nodes'), '2');
  // At the measured scale the headline is the fitted curve itself; the
  // chart still draws the calibrated model's band beside the log.
  assert.equal(await page.locator('#prediction').count(), 0);
  await page.waitForSelector('#busbw-chart .chart-svg[data-predicted="21"] svg polygon', { timeout: 120_000 });
  assert.match(await page.textContent('#topology'), /node 0.*node 1/s);
  // 540 nodes, as an engineer sizing the machine asks it.
  await page.fill('#nodes', '540');
  await page.locator('#nodes').dispatchEvent('change');
  const r = await final(page, { topo: 'measured', ranks: '2160', state: 'model-only' });
  const p = await prediction(page, 'Tree/LL');
  const t = Number(r['estimate-us']);
  // Measured at 540 nodes: 280.4 µs (n540_all_reduce.txt); NCCL's own
  // tree/LL constants: 100.4 µs of latency plus the bytes.
  assert.ok(Number(p.lowUs) < t && t < Number(p.highUs), `${p.lowUs} ${t} ${p.highUs}`);
  assert.ok(t > 140 && t < 560, `${t}`);
  assert.ok(Number(p.libraryUs) > 100.4 && Number(p.libraryUs) < 101, p.libraryUs);
  assert.equal(p.reach, 'OtherScale');
  assert.match(await page.textContent('#prediction-runs'), /NCCL runs Tree\/LL/);
  const reach = await page.textContent('#prediction-reach');
  assert.match(reach, /Measured\s*AllReduce on 2 nodes × 4 \(8 ranks\), 4 B–1 GiB/);
  assert.match(reach, /Predicted\s*AllReduce on 540 nodes \(2160 ranks\), 1 KiB: the measured collective at another scale\./);
  // At 1 KiB the time is latency, and 540 nodes are 8 doublings beyond
  // the measured 2: the assumed growth of a network hop outweighs the
  // fit's own scatter around NCCL's formulas.
  assert.match(await page.textContent('#prediction-why summary'), /The range is dominated by the network latency at 540 nodes/);
  // The figures behind it are the measured machine's and the fit's, not
  // the schedule simulation's HCCL notes; the fit found no LL128 across
  // Polaris's nodes (its NICs hang off the CPU).
  const figures = await page.textContent('#calibrated-sources');
  assert.match(figures, /The machine the model uses/);
  assert.match(figures, /2 network ports of 25 GB\/s per node/);
  assert.match(figures, /no LL128 across nodes: the rows fit better without it/);
  assert.match(figures, /corrections to NCCL's constants: fitted to 29 rows of 1 table/);
  assert.doesNotMatch(figures, /HCCL/);
  const [lo, hi] = range(await page.textContent('#estimate-range'));
  assert.ok(lo < t && t < hi, `${lo} ${t} ${hi}`);
  await page.waitForSelector('#busbw-chart .chart-svg[data-predicted="21"] svg polygon', { timeout: 240_000 });
  assert.match(await page.textContent('#chart-measured-other'), /measured on 8 ranks/);
  // The link carries the fitted machine at 540 nodes.
  const link = await page.locator('#share-link').inputValue();
  assert.match(link, /topo=measured/);
  assert.match(link, /ranks=2160/);
  const page2 = await open(link);
  await final(page2, { topo: 'measured', ranks: '2160' });
  // A model-only plan comes from the planner worker after the state.
  assert.equal((await prediction(page2, 'Tree/LL')).highUs, p.highUs);
  const r2 = await final(page2, { topo: 'measured', ranks: '2160' });
  assert.equal(r2['estimate-us'], r['estimate-us']);
  await page2.close();
  // Off: the topology and ranks from before.
  await page.click('#drop-profile');
  const back = await final(page, { topo: '910b-8', ranks: '8' });
  assert.equal(back['estimate-us'], before['estimate-us']);
  assert.equal(await page.locator('#prediction').count(), 0);
  assert.doesNotMatch(page.url(), /profile=/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('in Chinese the prediction is said from its values', async () => {
  problems.length = 0;
  const page = await open(`${BASE}/?lang=zh&op=allreduce&bytes=1KiB`);
  await final(page, { topo: '910b-8' });
  await page.fill('#log-input', POLARIS);
  await page.click('#use-profile');
  await final(page, { topo: 'measured', ranks: '8' });
  await page.fill('#nodes', '540');
  await page.locator('#nodes').dispatchEvent('change');
  await final(page, { topo: 'measured', ranks: '2160' });
  await prediction(page, 'Tree/LL');
  const reach = await page.textContent('#prediction-reach');
  assert.match(reach, /实测\s*AllReduce，2 节点 × 4（8 个 rank），4 B–1 GiB/);
  assert.match(reach, /预测\s*AllReduce，540 节点（2160 个 rank），1 KiB：实测过的集合通信，但规模不同。/);
  assert.match(await page.textContent('#prediction-runs'), /NCCL 运行 Tree\/LL.*NCCL 自身模型：/);
  assert.match(await page.textContent('#prediction-why summary'), /范围主要来自：540 节点时的网络时延（仅实测到 2 节点）/);
  assert.match(await page.textContent('#chart-predicted'), /NCCL（已校准）— 80 % 范围/);
  // A bad node count names the field, the value and what is allowed.
  await page.fill('#nodes', '5000');
  await page.locator('#nodes').dispatchEvent('change');
  assert.match(await page.textContent('#nodes-error'), /节点数“5000”不合法：应为 1..=1024 的整数/);
  assert.deepEqual(problems, []);
  await page.close();
});
