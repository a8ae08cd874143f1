# The page's chrome: header, banners, controls, playback, buffers, step log,
# estimate, result, chart, timeline, what-ifs. Chinese: ../zh/page.ftl (the
# same ids; tests/i18n.rs checks).

## Header and language
app-tagline = Collectives (AllReduce, AlltoAll, Broadcast and kin) as HCCL and NCCL run them: real data on web-worker ranks, every chunk animated, every step timed by an α-β model.
lang-switch = Language
copy-link = Copy link
copied = copied
share-link-label = Link to this configuration
jump-measurements = Your measurements ↓
jump-measurements-title = Paste an nccl-tests or hccl_test log: the model fits the machine it measured and predicts other sizes, scales and collectives
jump-settings = Settings ↓
learn-open = Learn
learn-close = Close lessons
skip-to-main = Skip to the drawing
clipboard-missing = this browser offers no clipboard here; select the link below and copy it
clipboard-refused = the browser refused to copy ({ $why }); select the link below and copy it

## The link's banner
banner-notes = Notes on this link (nothing it sets was lost):
banner-errors = Some settings in this link were not understood; everything else applies:
banner-dismiss = dismiss
banner-dismiss-label = Dismiss the notes on this link
badge-error = error
badge-notice = notice
banner-used = used { $used } instead
banner-used-default = the default was used instead
banner-more = and { $n } more ({ $keys })
fault-banner = Fault injected (testing): { $what }.
ui-lang-bad = a language: en or zh
ui-lesson-bad = a lesson: { $ids }
ui-stop-bad = a stop 1..={ $max } of this lesson

## Stage
topology = Topology
topology-model-only = Topology (model only)
stage-label = Topology, buffers and playback
model-only = Model only.
model-only-text = { $ranks } ranks: the estimate and the ranking of every algorithm are computed, but the page draws and animates schedules step by step only up to { $drawn } ranks (the symbolic trace is steps × ranks × chunks: { $steps } × { $ranks } × { $chunks } here), and executes up to { $executed } ranks for real.
model-only-bound = This schedule has too many transfers to simulate link by link in the page: its time is the per-step bottleneck bound (largest latency + busiest link's bytes / bandwidth).
model-only-sim = Its time is simulated link by link (hover a link for its load over the run).
footer = What is modelled and what is real: the data, the reductions and the checks are real (run in this browser, bit for bit against a reference executor). The times are a model of the hardware, not a measurement; the algorithms follow HCCL's Ring and Mesh notes and NCCL's ring, not their source code. Sources are cited next to each figure.
drawing-label = Drawing of { $title }: { $devices } { $device }s
transfers-now = Transfers in this step
transfers-none = No transfer in this state.
transfer-item = { $src } → { $dst }: { $chunks } ({ $kind })
kind-copy = copy
kind-reduce = reduce

## Controls
controls-label = Configuration
f-primitive = Primitive
f-algorithm = Algorithm
f-root = Root
f-size = Message size
f-size-per-rank = S per rank
f-size-slider = Message size, log scale from 1 KiB to 16 GiB
f-size-typed = Message size in bytes; type e.g. 4096, 64MiB, 1.5 GB and press Enter
f-dtype = Data type
f-redop = Reduce op
f-na = n/a
f-redop-na = n/a: { $op } does not reduce
f-ranks = Ranks
f-seed = Seed
f-seed-title = The seed of the random input every rank starts from: the same seed gives the same buffers, so a run and its bit-for-bit check can be repeated from the link
f-topology = Topology
f-your-own = your own…
f-your-own-title = Paste or load your own machine as JSON
f-slices = Slices
f-slices-title = Slices per transfer in the cost model: auto = like the library (NCCL 512 KiB / 1 MiB slices; HCCL none, it loops by HCCL_BUFFSIZE)
size-is = S = { $bytes }.
model-only-why = Model only: { $why }.
model-only-bytes = messages above { $max } are modelled, not executed in the browser
model-only-ranks = more than { $max } ranks are modelled, not executed in the browser
model-only-buffers = all ranks' buffers together would exceed { $cap } in the browser; modelled only
model-only-once = (the cap for compressed runs; with placement=once every rank holds all { $ranks } compressed inputs, { $per } per rank)
model-only-compressed = (the cap for compressed runs, whose reference the page computes for every rank)
auto-is = auto:
auto-library = what { $lib } runs
auto-measured = { $lib } as measured (the fitted curve)
auto-model = the model's fastest
auto-at = — { $why } at { $bytes } on { $ranks } { $device }s.
auto-nccl = { $runs }, drawn as { $algo }
auto-would = auto would run { $algo } here.
bytes-bad = bytes “{ $text }” is not a message size ({ $why }). Allowed: { $min } to { $max }, e.g. 4096, 64MiB, 1.5 GB.
bytes-range = bytes “{ $text }” = { $bytes } bytes is out of range; allowed: { $min } to { $max } ({ $max_bytes } bytes).
bytes-multiple = bytes “{ $text }” = { $bytes } bytes is not a whole number of { $dtype } elements ({ $es } bytes each); allowed: a multiple of { $es }, e.g. { $example }.
seed-bad = seed “{ $text }” is not allowed: an integer 0..=18446744073709551615.

## Playback
keys-hint = Keys: Space play/pause · ←/→ one step · Home/End
btn-first = Back to the initial state
btn-back = One step back
btn-back-text = ◀ Step
btn-play = Play
btn-play-text = ▶ Play
btn-pause = Pause
btn-pause-text = ❚❚ Pause
btn-forward = One step forward
btn-forward-text = Step ▶
btn-last = Jump to the end
speed = Speed
scrub = Step
scrub-label = Step of the animation (0 = initial state)
initial-state = Initial state
step-of = Step { $step } of { $total }
clock-modelled = of { $us } µs modelled
clock-loops = of { $us } µs · loop 1 of { $loops } shown · all { $loops } loops: { $all } µs
loops-title = Messages above HCCL_BUFFSIZE run in { $loops } back-to-back loops of { $bytes }; the steps shown are one loop
timeline-label = Modelled timeline: one segment per step, width = modelled duration
seg-title = Step { $k }: { $phase } · { $from }–{ $to } µs
seg-label = Go to step { $k }
step-description = The current step in words

## Buffers
buffers = Buffers
buffers-label = Rank buffers
buf-before = before the first step
buf-after = after step { $step } of { $total }
buf-chunks = { $chunks } chunks of ~{ $size } each
buf-holds = { $device } chunk { $chunk }: holds { $ranks }
buf-first = first element = { $value }
buf-receives = receives from { $src } ({ $kind })
buf-not-output = not part of this rank's output
buf-block = block of rank { $b }
buf-send-piece = send piece for rank { $b }
buf-recv-slot = receive slot for the piece from rank { $b }
buf-v-send = send piece rank { $a } -> rank { $b }
buf-v-recv = receive slot for rank { $a } -> rank { $b }
buf-send-block = send block
buf-recv-block = receive block
buf-col = chunk { $c } = { $what }
legend = Legend
legend-one = one rank's contribution:
legend-partial = partly reduced (k ranks):
legend-partial-chip = { $k } of { $n } ranks
legend-all = all
legend-full = fully reduced
legend-empty = empty
legend-recv-reduce = receives (reduce)
legend-recv-copy = receives (copy)
legend-send = sends
buf-hint-values = Cell value: the chunk's first element as the rank workers computed it (real data). Colour and dots: whose contributions it holds (symbolic trace).
buf-hint-waiting = Cell value: “…” until the rank workers report real data. Colour and dots: whose contributions the chunk holds (symbolic trace).
buf-hint-compact = At { $n } ranks × { $chunks } chunks each cell shows only its colour; point at a cell, or focus the grid and move with the arrow keys, for what it holds in words below the grid; screen readers get a text summary.
buf-canvas-label = Buffer grid: { $n } ranks × { $chunks } chunks, coloured by whose contributions each chunk holds
buf-cursor-hint = Point at a cell, or focus the grid and use the arrow keys, to read what it holds.
buf-hint-scratch = After the last step, faded cells are scratch: not part of that rank's output.
buf-hint-alltoall = The left half of each row is the send area (the piece for rank j), the right half the receive area (the piece from rank j); a rank's own piece stays in its send area.
buf-table-caption = What each rank's chunks hold after this step

## Step log
step-log = Step log
step-log-label = Step log: every transfer of every step
step-log-count = { $steps } steps · { $transfers } transfers
step-log-hint = a→b c3: rank a sends chunk 3 to rank b; → copy, ⇒ reduce. Times are the model's. Click a step to see it; keys: Space play/pause, ←/→ step, Home/End.
log-share = { $n } flows share a link
log-xfer = { $src } sends { $chunks } to { $dst } ({ $kind })

## Estimate
estimate = Estimate
estimate-label = Cost model estimate
estimate-sub = α-β model, no workers needed
predicted = predicted time
predicted-note = predicted time ({ $note })
note-compressed = includes compression; the ranking row is uncompressed
note-measured = the fitted curve; the ranking rows are modelled from the profile's link figures
algbw-title = algorithm bandwidth: the message size S over the time t, as nccl-tests prints it (GB = 10⁹ bytes)
busbw-title = bus bandwidth: algbw × { $factor } for { $op } on { $ranks } ranks, the traffic a ring would put on each rank's links, so it compares with a link's peak at any rank count; an algorithm that moves less data (a switch that reduces, NVLS) can exceed the link (nccl-tests PERFORMANCE.md)
chosen-library = auto: what { $lib } runs
chosen-measured = auto: { $lib } as measured (fitted curve)
chosen-model = auto: the model's fastest
chosen-fixed-other = your choice — auto would run { $algo }
chosen-fixed-same = your choice — also auto's
algo-line = · { $chosen } · { $op } of { $bytes } on { $ranks } { $device }s
algo-line-barrier = · { $chosen } · Barrier (no payload: the message size does not apply) on { $ranks } { $device }s
estimate-compressed = With { $scheme } compression ({ $placement }; a what-if, see below): { $t } µs vs { $u } µs uncompressed. The ranking below is uncompressed.
th-algorithm = algorithm
th-steps = steps
th-time = time (µs)
th-busbw = busbw (GB/s)
ranking-caption = Every applicable algorithm, fastest first
ranking-pending = Ranking the other algorithms…
chart-pending = Drawing the curves…
planning = Planning { $ranks } ranks in the planner worker (the page stays responsive)…
estimate-updating = Updating the estimate for the new settings in the planner worker…
badge-shown = shown
badge-not-lib = not { $lib }
not-lib-title = { $lib } does not run { $algo } for { $op }
bound = (bound)
bound-title = per-step bottleneck bound: the schedule is larger than the model simulates link by link
too-large = too large
too-large-title = its schedule is too large to build here
why-details = Why: every candidate in numbers
link-figures = Link figures the model uses
assumption = assumption
machine-figures = The machine the model uses
model-note-nccl = Modelled, not measured here: NCCL's tuning model picks what runs with NCCL's own constants; its latency and bandwidth formulas, with the corrections above, give the time, and the 80 % range says how sure those corrections are. busbw follows nccl-tests' definition.
model-note-a = Modelled, not measured: per transfer α + bytes/B;
model-note-sliced = slices pipeline through the steps (no barrier per step)
model-note-sync = steps are synchronous
model-note-share = ; flows on the same link direction share its bandwidth
model-note-up-to = (up to { $n } here)
model-note-none = (none share one here)
model-note-b = . Real HCCL also splits messages above HCCL_BUFFSIZE (200 MB) into loops, pipelines slices and pays kernel-launch and synchronisation costs that the model leaves out. busbw follows nccl-tests' definition; hccl_test prints only algbw.

## Result
result = Result
res-idle = Idle
res-idle-text = Nothing has run yet.
res-waiting = Waiting for the plan
res-waiting-text = This plan takes long to simulate (a pipelined estimate, a ranking to decide auto, or a fusion view's buckets), so the planner worker makes it, off the page's main thread; the ranks run as soon as it comes.
res-running = Running…
res-running-text = { $ranks } rank workers are executing the schedule on real { $dtype } data; each output is checked as it arrives ({ $done } of { $ranks } so far).
res-verified = Verified
res-verified-compressed = All { $ranks } ranks' outputs are bit-identical to the compressed reference executor (same codec, same order). Their error against the uncompressed exact result is the compression's, reported below.
res-verified-text = All { $ranks } ranks' outputs are bit-identical to the reference executor (same reduction order) and within the { $dtype } tolerance of the exact result.
res-mismatch = Mismatch
res-mismatch-text = Some rank outputs differ from the reference:
res-error = Error
res-error-text = The run did not complete:
res-model-only = Model only
res-model-only-text = Not executed: { $why }.
res-model-only-drawn = The estimate and the animation still apply.
res-model-only-undrawn = The estimate and the algorithm ranking still apply; nothing is animated at this rank count.
res-too-large = too large for the browser
res-max-error = max |error|
res-vs-exact = vs exact, over { $n } elements
res-wall = worker wall time
res-wall-note = (this browser, not the modelled hardware)
res-collective = collective alone
res-collective-note = (every rank ready to last rank done: no worker start-up, no input generation; { $kernels } reduce kernels)
res-checked = ranks checked
res-checked-of = { $done } of { $ranks }
rerun = Run again
res-real = Real data on web workers (each hosting a block of ranks); checked bit for bit.

## Chart
chart = busbw vs message size
chart-label = busbw versus message size
chart-sub = { $op } on { $ranks } ranks of { $topo } · { $dtype }
chart-x = message size S per rank (log scale)
chart-y = busbw (GB/s)
chart-current = current size { $bytes }
chart-legend = Curves
chart-peaks = { $algo } peaks at { $gbps } GB/s
chart-same = Coinciding curves here: { $algos } (the later ones drawn dashed over the first).
chart-hint = Model curves: every algorithm that implements this primitive on this rank count, 1 KiB … 1 GiB. The dot is the algorithm shown above at the current size.
chart-bound-hint = “bound”: too many transfers to simulate link by link in the page, so the per-step bottleneck bound is drawn (largest latency + busiest link's bytes / bandwidth, per step).
chart-not-drawn = chart not drawn: { $why }
chart-fitted = fitted profile
chart-measured = measured (your log)
chart-look = { $algo } at { $bytes }
chart-data = The chart's numbers

## Timeline (Gantt)
gantt = Timeline
gantt-label = Timeline of the modelled run
gantt-rows = Gantt chart: { $rows } rows, click to go to a step
gantt-by-link = One row per link direction that carries data; a bar is a busy interval of one step (orange: several flows share it).
gantt-by-rank = One row per rank; a bar is one transfer it sends, from its start to the end of the receiver's reduce.
gantt-follow = The red line follows the animation; click to go to a step.

## Algorithm summaries (one per algorithm)
algo-ring = ring: each rank talks only to its successor; n-1 steps per phase, 1/n of the data per step (Broadcast / Reduce: a chain from / to the root, pipelined in slices)
algo-mesh = mesh (HCCL's full-mesh algorithm): every rank talks to every peer at once; one step per phase
algo-rhd = recursive halving-doubling (HCCL H-D_R, Rabenseifner): log2 n steps per phase, halving then doubling the data exchanged with a partner at distance 2^k
algo-tree = binomial tree: the holders double every step (log2 n steps), for the rooted primitives
algo-star = star: the root exchanges with every rank in one step
algo-pairwise = pairwise (HCCL Pairwise): n-1 steps, one peer per step, no link shared
algo-nb = NB (HCCL's nonuniform Bruck): ceil(log2 n) steps for any n, at distances 1, 2, 4, …
algo-dbtree = double binary tree (NCCL): two trees, each with half the data; log-depth latency, full bandwidth
algo-nvls = NCCL runs { $runs } here: NVLink SHARP, every GPU writes its data into the NVSwitch, which reduces it and multicasts the result back; drawn as every GPU to every GPU (mesh), though the switch does the reducing
algo-hier = hierarchy (HCCL A2): intra-server mesh over HCCS, inter-server ring over RoCE (8·S ranks)
algo-hier-nhr = hierarchy with NHR between the servers: ceil(log2 S) inter-server steps
algo-nhr = NHR (HCCL's nonuniform hierarchical ring): ceil(log2 n) steps per phase for any n
algo-pipeline = pipeline (HCCL): the inter-server ring and the intra-server mesh overlap in the same steps (8·S ranks)
verdict-short = { $chosen }: { $algo }, predicted { $t } µs, { $rank } of { $count } candidates.
verdict-short-unranked = { $chosen }: { $algo }, predicted { $t } µs.
ranking-error = The ranking of the other algorithms could not be made: { $error }
slices-title = URL key slices: auto or 1..=256
topo-title-910b-8 = 1 server × 8 Ascend 910B, HCCS full mesh (28 links)
topo-title-910a-8 = 1 server × 8 Ascend 910 (910A): 2 groups of 4 on HCCS, PCIe between groups
topo-title-h100-8 = 1 server × 8 NVIDIA H100 SXM, NVLink4 through NVSwitch
topo-title-cluster = { $servers } servers × 8 Ascend 910B: HCCS full mesh inside, one RoCE port per NPU
topo-short-910b-8 = 8× Ascend 910B, HCCS mesh
topo-short-910a-8 = 8× Ascend 910, 2 HCCS groups + PCIe
topo-short-h100-8 = 8× H100, NVSwitch
topo-short-cluster = { $servers } servers × 8 910B, RoCE
slice-unsliced = unsliced: each step's transfers move whole, steps are synchronous
slice-set = slices={ $n }, as set
slice-auto-profile = auto: 1 slice; a fitted profile measured the library as a whole, its pipelining is already in the fitted α and β
slice-auto-hccl = auto: 1 slice; HCCL moves each step whole and pipelines a large message by its CCL buffer (HCCL_BUFFSIZE { $buffer }: buffer loops)
slice-auto-nccl = auto: { $n ->
    [one] 1 slice
   *[other] { $n } slices
} of at most { $slice }, NCCL's Simple-protocol slice ({ $steps } steps of NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8); largest transfer { $largest }
slice-cap-transfers = capped to { $n } so that slices × { $transfers } transfers stay within { $budget } simulated sub-transfers
slice-cap-flow = capped to 1: the pipelined simulation of { $n } slices needs more than { $budget } flow updates (transfers that finish at different times re-share the links at every finish), so the loop is estimated unsliced
slice-window-nccl = up to { $w } slices in flight per connection (NCCL: NCCL_STEPS 8 / SLICESTEPS)
slice-window-hccl = up to 1 slice in flight per connection (HCCL: one at a time)
slice-join = {"; "}
slice-end = .
slices-line = { $n ->
    [one] 1 slice per transfer
   *[other] { $n } slices per transfer
}{ $window ->
    [0] {""}
   *[other] , up to { $window } in flight
}

## Learn mode
learn-title = Lessons
learn-list-hint = Short guided tours: each stop sets the page up, tells you what to look at (it is highlighted) and asks a question. Every stop is a link you can share.
learn-stops = { $n } stops
learn-lesson = Lesson
learn-all = all lessons
learn-stops-label = Stops of this lesson
learn-stop-of = Stop { $stop } of { $total }
learn-off-stop = You changed a setting; the highlight and the narration are for the stop's settings.
learn-restore = Back to this stop
learn-look = Look at:
learn-show-me = show me
learn-question = Question:
learn-show-answer = Show the answer
learn-hide-answer = Hide the answer
learn-prev = ← Previous stop
learn-next = Next stop →
learn-done = Done: all lessons
topo-copy = copy: the receiver stores the chunk
topo-reduce = reduce: the receiver combines it into its own (op { $op })
link-hccs-tip = HCCS (Huawei Cache Coherence System): the links that join the Ascend NPUs of one server; on a 910B server each NPU has one to every other NPU (a full mesh)
link-roce-tip = RoCE (RDMA over Converged Ethernet): the network that joins the servers, through the switches drawn
link-pcie-tip = PCIe: the host bus; here it carries traffic between accelerators that have no direct link, slower than HCCS or NVLink
link-nvlink-tip = NVLink: NVIDIA's GPU-to-GPU link; on an 8-GPU A100 or H100 HGX/DGX server every GPU reaches every other one through NVSwitch chips
topo-token = token = chunk in flight, coloured by what it holds
topo-collapsed = { $servers } servers drawn as one box each (8 NPUs, HCCS full mesh inside); a line is a server's 8 RoCE ports. Hover a box or a line for figures and load.
topo-too-many = { $n } transfers in this step: busy links highlighted (hover for load), tokens not drawn.
topo-servers = Numbers are ranks. Orange lines: RoCE ports to the fabric (Server间, the slow level); grey inside a server: HCCS (Server内). Hover a link for its bandwidth and load.
gantt-loops = loop 1 of { $loops } shown ({ $us } of { $all } µs in all)
gantt-us = { $us } µs modelled
gantt-by-link-btn = by link
gantt-trace = Perfetto trace ⤓
gantt-trace-title = Download this timeline as a Chrome / Perfetto trace (JSON trace events: a track per rank, the steps, a load counter per link); open it in ui.perfetto.dev
gantt-by-rank-btn = by rank

## What-ifs (compression, fusion)
wi-c-title = Compression what-if
wi-not-hccl = not in HCCL
wi-c-note-a = HCCL has no gradient compression (its C API,{" "}
wi-c-note-b = , reduces buffers in their own data type, with no quantising codec), and neither does NCCL. This models what a framework-level compressor (e.g. a PyTorch DDP communication hook) would do around the collective. The workers really quantise, send and dequantise; the run is verified bit for bit against a compressed reference executor.
wi-compress = compress
wi-block-bad = block “{ $value }” is not allowed: an integer { $min }..={ $max } elements per scale.
wi-block = block
wi-scale = scale
wi-placement = placement
wi-hop = hop: every transfer
wi-once = once: input, then AllGather
wi-inputs = inputs
wi-claim = Check a claim: communication time saved
wi-claim-eg = e.g. −73 %
wi-wire = wire bytes
wi-wire-line = { $wire } vs { $raw } uncompressed ({ $pct } %)
wi-time = modelled time
wi-time-line = { $t } µs vs { $u } µs uncompressed ({ $change })
wi-error = error vs exact
wi-after-run = after the run…
wi-flushed = flushed to zero
wi-flushed-line = { $pct } % of the nonzero exact values came out 0
wi-model-only = Model-only above { $n } ranks: the compression what-if runs and is modelled up to that many ranks.
wi-pick = Pick a scheme to run the same collective with every transfer quantised (hop) or with each input quantised once (once), on gradient-like inputs, and compare error and time with the uncompressed run.
wi-float-only = Compression applies to fp32, fp16 and bf16; pick a float dtype.
wi-f-title = Fusion what-if
wi-f-sub = DDP-style gradient buckets
wi-tensors = tensors
wi-buckets = buckets
wi-none = none
wi-equal-layers = N equal layers
wi-layers = layers
wi-bucket-cap = bucket cap
wi-fusion-times = unfused { $unfused } µs → fused { $fused } µs ({ $gain })
wi-no-fusion = no fusion: one AllReduce per tensor
wi-less-time = { $pct } % less time
wi-faster = { $x }× faster
wi-back-to-back = AllReduces back to back, each with auto's algorithm; overlap with the backward pass is not modelled
wi-crossover = crossover
wi-crossover-line = below about { $bytes } per AllReduce, latency dominates: that is what fusing removes
wi-fuse-bars = Unfused { $unfused } µs, fused { $fused } µs
wi-unfused-bar = unfused, { $n } AllReduces: { $us } µs
wi-fused-bar = fused, { $n } buckets: { $us } µs
wi-blocks = Each block is one bucket's AllReduce (darker: its per-message latency); hover for its tensors and time.
wi-no-bucket = No bucket is small enough to run in the browser; the model still applies.

## Custom topology and measurements
ct-title = Custom topology
ct-label = Custom topology: paste or load JSON
ct-input = Topology JSON
ct-not-used = Not used:
ct-is = is
ct-in-use = In use:
ct-share = The share link carries it.
ct-schema = Devices (2..={ $max }), optional switches, and links with bandwidth_gbps (GB/s per direction) and latency_us (µs). Rank r runs on devices[r]; devices do not forward traffic, so every pair needs a direct link or a path through switches.
ct-use = Use this topology
ct-use-title = Validate the JSON and run on this machine
ct-load = Load file…
ct-load-title = Read a .json file and use it
ct-example = Example
ct-example-title = Put a 4-GPU example (NVLink ring + PCIe switch) in the box
ct-readme = Schema and caps: docs/custom-topology.md in the repository.
li-title = Your measurements
li-label = Measurements: paste or drop a log
li-text = Log text
li-paste = Paste the output of nccl-tests (all_reduce_perf …, text or -J JSON), rccl-tests, hccl_test or the OSU micro-benchmarks here, or drop the file; launcher prefixes (mpirun, srun -l, pdsh, kubectl) are fine. Its measured busbw is drawn on the chart and a profile (α and bandwidth per size range) is fitted to it.
li-reading = Reading { $size } in the background (the planner worker)…
li-clear = Clear
li-kept = Kept in this browser for your next visit; Clear forgets it.
li-not-kept = Above { $size }: not kept across a reload (the browser's storage is small).
li-held = The whole { $size } log is read; the box shows its first { $shown }, read-only (a browser takes seconds to lay out megabytes of text). Clear it to paste another.
li-not-stored = This browser did not keep it (private window, or its storage is full): it is gone after a reload.
li-unreadable = Could not read this log:
li-tables = { $n ->
    [one] 1 table found.
   *[other] { $n } tables found.
}
li-fit-table = Fit table
li-no-fit = No profile fitted:
li-use = Use this profile for the model
li-use-title = Model the machine the log measured (topology “measured”: its nodes, accelerators and library) on the log's rank count; change ranks or nodes to predict other scales
li-back-preset = Back to the previous topology
li-back-topology = Stop using this profile
li-model-uses = Model uses:
li-line = line
li-size = size
li-measured = measured µs
li-fitted = fitted µs
li-error = error
li-rejected = This table is rejected:
li-unusable = { $n ->
    [one] 1 of them is not usable (below).
   *[other] { $n } of them are not usable (below).
}
li-not-used = not used:
li-fitted-below = fitted below

redop-avg-option = avg (NCCL's ncclAvg)
redop-lacks = { $lib } has no { $op }: its reduce ops are SUM, PROD, MAX and MIN. This run computes NCCL's ncclAvg: each rank's data times 1/n in the data type, then summed (integers: summed, then divided by n toward zero).
wi-compress-min = compress from
wi-compress-min-title = compress_min: messages and fusion buckets smaller than this are sent uncompressed (0 = compress everything)
wi-below-min = This message ({ $bytes }) is below compress_min ({ $min }): it is sent uncompressed.
wi-large-only = compress only large buckets
wi-large-only-line = { $k } of { $n } buckets of at least { $min } compressed: { $wire } on the wire instead of { $raw }; { $t } µs instead of { $fused } µs; relative L2 error { $err }
det-title = Determinism
det-pending = Running both reduction orders on the real inputs in the planner worker…
det-sub = the same inputs reduced by { $algo } ({ $dtype }) and by another configuration, bit for bit
det-versus = compare with
det-fp32 = fp32 (same inputs)
det-element = element
det-fixed = fixed reduction order
det-elements = elements
det-count = { $differ } of { $n } elements differ between { $a } and { $b } (max { $ulps } ulps).
det-count-first = (The message's first { $n } of its { $total } elements are compared.)
det-cost = Fixed order modelled as a chain Reduce to rank 0 ({ $reduce } µs) + a chain Broadcast ({ $bcast } µs) = { $total } µs, against { $ar } µs for the { $algo } AllReduce.
det-source = HCCL's 确定性计算 (HCCL_DETERMINISTIC=true; strict = order-preserving: one reduction order for every bit) makes results repeatable at a documented performance cost; NCCL has no switch and repeats bit for bit only for the same algorithm, protocol and rank count. The two reduction orders are the verifier's expression trees.
det-ranks = { $m } ranks (same contributions, summed locally first)
# Slow ranks and broken links (engine::degrade)
faults-title = Slow ranks and broken links
faults-sub = what-if on the model's clock
faults-note = Try a slow card or a failed link before a profiler tells you. Only the timing changes: the schedule, and so the real run, stays the same and still verifies. Same syntax as the link keys slow=, late=, down= and cclsim predict --slow/--late/--down.
faults-slow = Slow ranks (rank:speed)
faults-late = Late ranks (rank:µs)
faults-down = Links down (a-b or a-port)
faults-example-slow = Rank 3 at half speed
faults-example-down = Link 0–1 down
faults-clear = Healthy machine
estimate-faults = With { $faults }: { $t } µs against { $h } µs on the healthy machine (×{ $x }).
gantt-slow-mark = (slow)
gantt-wait-title = step { $step }: rank { $r } waits { $us } µs for rank { $b }
waits-heading = Who waits for whom
waits-line = Step { $step }: { $n } ranks wait up to { $us } µs for rank { $b } ({ $src }→{ $dst } ends the step).
waits-more = … and { $n } more steps.
topo-down-title = Link { $a }–{ $b } is down: traffic routes around it
topo-slow-title = rank { $r } is a slow card: it sends and computes at ×{ $f }
topo-late-title = rank { $r } starts { $us } µs late
drawing-faults = This machine is degraded: { $faults }. Failed links are drawn dashed red; slow ranks have a red dashed ring.

# The calibrated library model's answer (ui/prediction.rs) and its band on the chart.
estimate-sub-calibrated = NCCL's tuning model, calibrated to the machine
pred-range-tag = 80 % range
pred-busbw = busbw
pred-range-title = The 80 % range: the fit's scatter and the corrections' uncertainty, wider the further the question is from what was measured
pred-runs = NCCL runs
pred-channels = on { $n ->
    [one] 1 channel
   *[other] { $n } channels
}
pred-p2p = grouped send/recv to every peer
pred-own = · NCCL's own model:
pred-own-title = NCCL's tuning model with its own constants (tuning.cc), uncorrected: what NCCL believes. The headline is the same model calibrated to this machine.
pred-measured-tag = Measured
pred-basis-tag = Basis
pred-not-measured = no measurement of this machine: NCCL's own constants (with figures measured elsewhere, below); the range from the corrections' priors.
pred-measured-item = { $op } on { $nodes ->
    [one] 1 node
   *[other] { $nodes } nodes
} × { $g } ({ $ranks } ranks), { $from }–{ $to }
pred-for-tag = Predicted
pred-for = { $op } on { $nodes ->
    [one] 1 node
   *[other] { $nodes } nodes
} ({ $ranks } ranks), { $bytes }: { $reach }.
reach-not-measured = from NCCL's constants alone
reach-within = within what was measured
reach-other-size = the measured collective and scale, another size
reach-other-scale = the measured collective at another scale
reach-other-collective = another collective at a measured scale
reach-other-both = another collective at another scale
pred-dominated = The range is dominated by { $what }
assume-taper-short = the network's bandwidth at { $nodes } nodes (measured up to { $measured })
assume-taper = The network between { $nodes } nodes was not measured (up to { $measured } were): its bandwidth per node is assumed to fall by about 4 % per doubling of the nodes (0 to 9 % in the range).
assume-peer-short = AlltoAll's per-peer cost (not measured)
assume-peer = No grouped send/recv (AlltoAll) was measured: its per-peer cost and bandwidth are priors (5 µs a peer).
assume-net-lat-short = the network hop latency
assume-net-lat = The network hop latency is not pinned down by the measurements.
assume-lat-growth-short = the network latency at { $nodes } nodes (measured up to { $measured })
assume-lat-growth = The network latency between { $nodes } nodes was not measured (up to { $measured } were): a hop is assumed to cost about 3 % more per doubling of the nodes (up to 7 % in the range).
assume-net-bw-short = the network bandwidth
assume-net-bw = The network bandwidth is not pinned down by the measurements (NCCL's NIC figure is assumed).
assume-ring-short = a multi-node ring's per-step overhead
assume-ring = A multi-node ring's per-step overhead is not pinned down by the measurements.
assume-intra-short = the in-node bandwidth
assume-intra = The in-node bandwidth is not pinned down by the measurements.
assume-lat-const-short = NCCL's latency constants
assume-lat-const = NCCL's latency constants are assumed for what was not measured.
assume-proto-short = NCCL's protocol efficiencies
assume-proto = NCCL's protocol efficiencies are assumed.
assume-unmeasured-short = { $op } not being measured on this machine
assume-unmeasured = { $op } was not measured on this machine: the corrections come from { $measured }.
assume-scatter-short = the measurements' own scatter (±{ $pct } %)
assume-scatter = The measurements' own scatter around the model (±{ $pct } %).
pred-runner-up = By NCCL's own model { $runs } is within { $x }× of its pick: another NCCL version or a tuner plugin may run it, so the range includes its calibrated time ({ $t } µs).
pred-engine-words = The model's own words:
chart-pred = NCCL (calibrated) — 80 % range
chart-pred-own = NCCL's own model
chart-pred-hint = The teal line is the estimate, the calibrated NCCL model, and the shaded band its 80 % range at each size; the dashed line is what NCCL's own tuning model believes. The algorithm curves simulate each schedule link by link on the machine's link figures: a cruder model of the same machine.
f-nodes = Nodes (× { $g })
f-nodes-title = Nodes of the measured machine, { $g } ranks each: sets the rank count
nodes-bad = nodes “{ $text }” is not allowed: an integer { $least }..={ $most } (× { $g } ranks a node).
topo-measured = measured — { $nodes ->
    [one] 1 node
   *[other] { $nodes } nodes
} × { $g } { $accelerator } (your log, { $ranks } ranks)
topo-measured-links = measured — your log's { $ranks } ranks ({ $tool })
chart-measured-at = measured on { $ranks } ranks (your log; the chart is of another rank count)
chart-fitted-at = fitted profile ({ $ranks } ranks)
topo-collapsed-nodes = { $servers } nodes drawn as one box each ({ $g } GPUs); a line is a node's link to the network. Hover a box or a line for figures and load.
topo-nodes = Numbers are ranks. The boxes are the measured machine's nodes; the lines to the bar carry the figures fitted to your log. Hover a link for its bandwidth and load.
st-title = Training step
st-sub = one step of a model on { $topo } ({ $ranks } ranks): every collective it issues, timed like the headline
st-model = model
st-model-pasted = config.json (pasted)
st-config-summary = Your own model: paste its config.json
st-config-hint = A Hugging Face config.json (Llama, Mixtral and DeepSeek-V3 field names): hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size, num_local_experts or n_routed_experts, num_experts_per_tok, tie_word_embeddings; DeepSeek's moe_intermediate_size, n_shared_experts, first_k_dense_replace and latent attention (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim). Other fields are ignored; the shape goes into the link.
st-config-use = Use this model
st-config-bad = config.json: { $field } “{ $value }” is not allowed: { $allowed }.
st-worked-intro = A worked case:
st-worked = Llama-3 70B with DDP on one 8 × 910B server (a 300 TFLOPS peak assumed): is AllReduce 35 % of the step?
st-f-microbatches = microbatches
st-f-seq = sequence
st-f-batch = global batch
st-f-mfu = MFU
st-peak = peak TFLOPS
st-peak-placeholder = datasheet peak
st-compress = gradient compression
st-cp-title = Context parallelism: each rank holds seq / cp tokens of every sequence and passes keys and values around a ring in attention (Megatron-LM with Transformer Engine's P2P ring); it needs attention's FLOPs counted, which the ring hides behind.
st-sp = sequence parallelism
st-sp-title = Megatron's sequence parallelism: each tensor-parallel AllReduce becomes a ReduceScatter and an AllGather of the same activations (Korthikanti et al. 2022).
st-attn = count attention FLOPs
st-attn-title = Add attention's own FLOPs (12 · layers · hidden · sequence per token for grouped-query attention) to 6 · active parameters; long sequences need it.
st-compress-title = Block quantisation of the data-parallel gradient reductions, timed by the playground's compression model: a what-if. Neither NCCL nor HCCL compresses; PyTorch DDP's built-in comm hooks cast to fp16 / bf16, use PowerSGD or (experimental) quantise to uint8 and AllGather; none is a block-scaled int8 / fp8 reduction like this one.
st-bad-compress = compression “{ $value }” is not allowed: none, int8, fp8e4m3 or fp8e5m2.
st-pin = Pin this step as A
st-pin-hint = then change the layout, the compression, the bucket cap or the machine: the card sets the two steps side by side.
st-repin = Pin this one instead
st-unpin = Unpin
st-vs-title = Pinned step A beside this step B
st-vs-bad = The pinned step (link key step_vs) cannot be made: { $error }
st-vs-same = A and B have the same inputs.
st-vs-default = default
st-vs-figure = figure
st-vs-a = A (pinned)
st-vs-b = B (this step)
st-vs-ratio = B / A
st-vs-share = exposed share of the step
st-pending = Timing every collective of the step in the planner worker…
st-bad-whole = { $field } “{ $value }” is not allowed: a whole number.
st-bad-number = { $field } “{ $value }” is not allowed: a number.
st-compute = compute
st-bubble = pipeline bubble
st-comm = communication (sum)
st-exposed = exposed communication
st-share = { $share } % of the step
st-step-time = step time
st-tokens = tokens/s
st-lane-compute = compute
st-lane-comm-value = { $comm } ({ $exposed } exposed)
st-lane-comm = communication
st-lanes-label = Compute { $compute }; communication { $comm }, of which { $exposed } exposed.
st-legend-compute = compute
st-legend-bubble = bubble
st-legend-hidden = hidden behind compute
st-legend-exposed = exposed
st-col-purpose = what for
st-col-primitive = primitive
st-col-bytes = bytes
st-col-group = group
st-col-calls = calls
st-col-per-call = per call
st-col-total = total
st-col-overlap = overlaps
st-drill = Open { $primitive } of { $bytes } on { $ranks } ranks in the playground
st-source = Compute = 6 · active parameters · tokens (+ attention's FLOPs when counted) at peak × MFU (peak: { $peak }); each call timed as the playground's headline; what the compute hides per cclsim step's overlap model. Click a primitive to open that call.
fusion-hint-drawn-only = Fusion is planned up to 64 ranks (auto ranks every bucket size there).
fusion-hint-allreduce = Fusion applies to AllReduce.
fusion-hint-pick = Pick the tensors a backward pass AllReduces (Llama 3 shapes, or N equal layers) to compare one AllReduce per tensor with DDP's buckets.
fusion-not-bucket = The workers run { $bytes } (not one of the buckets).
fusion-run-bucket = Run bucket { $k } ({ $tensors } { $tensors ->
        [one] tensor
       *[other] tensors
    }, { $bytes })
fusion-run = The workers run bucket { $bucket } ({ $tensors } { $tensors ->
        [one] tensor
       *[other] tensors
    }, { $bytes }) as one AllReduce, checked bit for bit against the reference and every element within the { $dtype } tolerance of its exact sum. Exact sums are per element, so this is also each unpacked tensor's own AllReduce result; only an element's rounding order can differ from a per-tensor run.
topo-idle = idle
topo-box-server = server { $n }
topo-box-node = node { $n }
topo-box-group = HCCS group { $g } (NPU{ $a }–{ $b })
topo-box-ranks = ranks { $a }–{ $b } of this run
topo-box-idle = not in this run
topo-box-node-title = node { $n }: { $gpus } GPUs (devices { $a }–{ $b }); { $run }
topo-box-server-title = server { $n }: 8 Ascend 910B NPUs (devices { $a }–{ $b }), HCCS full mesh inside (28 links × { $gbps } GB/s); { $run }
topo-switch-roce = RoCE fabric
topo-switch-title = { $label }: a switch (hosts no rank)
topo-bar-fitted = network — fitted: { $gbps } GB/s, { $us } µs a rank's link
topo-bar-switch = { $label } — non-blocking switch, one { $gbps } GB/s RoCE port per NPU
topo-bar-title = { $label }: a switch (hosts no rank); contention is modelled at the { $device } ports only (an assumption)
topo-trunk-title = { $code } ↔ { $fabric }: { $ports } RoCE ports × { $gbps } GB/s per direction, α { $us } µs each
    { $load }
topo-trunk-load = Load { $scope }: { $flows } flows on { $dirs } port directions, busiest { $busy } of { $window } µs
topo-trunk-unsimulated = (no link-level load for this plan: not known)
topo-link-head = { $kind } { $a }–{ $b }: { $gbps } GB/s per direction, α { $us } µs
topo-link-load = { $link }
    Load { $scope }:
      { $there }
      { $back }
topo-link-unsimulated = { $link }
    (no link-level simulation for this plan: load not known)
topo-dir-idle = { $from }→{ $to }: idle
topo-dir-busy = { $from }→{ $to }: { $flows ->
        [one] 1 flow
       *[other] { $flows } flows
    }, busy { $busy } of { $window } µs ({ $percent } %)
topo-scope-step = in step { $step }
topo-scope-loop = over loop 1 of { $loops } (busiest step shown as flows)
topo-scope-run = over the whole run (most flows at once)
