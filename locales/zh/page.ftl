# 页面文字：标题、横幅、配置、播放、缓冲区、步骤日志、预估、结果、图表、时间线。
# 与 ../en/page.ftl 的消息 id 一一对应（tests/i18n.rs 检查）。
# 术语依照 HCCL 中文文档：集合通信、通信算法、带宽、时延、通信域、归约、
# Server内/Server间、环(Ring)算法、全连接(Full Mesh)、数据量、通信步数。

## Header and language
app-tagline = 像 HCCL 和 NCCL 那样执行集合通信（AllReduce、AlltoAll、Broadcast 等）：在 Web Worker 上的各个 rank 之间传递真实数据，每个数据块都有动画，每一步的耗时都由 α-β 模型给出。
lang-switch = 语言
copy-link = 复制链接
copied = 已复制
share-link-label = 当前配置的链接
jump-measurements = 导入实测 ↓
jump-measurements-title = 粘贴 nccl-tests 或 hccl_test 日志：模型据此拟合所测机器，并预测其他数据量、规模与集合通信
jump-settings = 设置 ↓
learn-open = 学习
learn-close = 关闭课程
skip-to-main = 跳到拓扑图
clipboard-missing = 此浏览器在这里不提供剪贴板；请选中下面的链接并复制
clipboard-refused = 浏览器拒绝复制（{ $why }）；请选中下面的链接并复制

## The link's banner
banner-notes = 关于此链接的说明（其中的设置均未丢失）：
banner-errors = 此链接中有些设置无法识别；其余设置照常生效：
banner-dismiss = 关闭
banner-dismiss-label = 关闭关于此链接的说明
badge-error = 错误
badge-notice = 提示
banner-used = 已改用 { $used }
banner-used-default = 已改用默认值
banner-more = 另有 { $n } 项（{ $keys }）
fault-banner = 已注入故障（测试用）：{ $what }。
ui-lang-bad = 语言：en 或 zh
ui-lesson-bad = 课程：{ $ids }
ui-stop-bad = 本课程的第 1..={ $max } 站

## Stage
topology = 拓扑
topology-model-only = 拓扑（仅模型）
stage-label = 拓扑、缓冲区与播放
model-only = 仅模型。
model-only-text = { $ranks } 个 rank：会计算预估时间和所有通信算法的排名，但页面只在 { $drawn } 个 rank 以内逐步绘制和播放调度（符号追踪的规模是 通信步数 × rank 数 × 数据块数：此处为 { $steps } × { $ranks } × { $chunks }），并且只在 { $executed } 个 rank 以内真实执行。
model-only-bound = 此调度的传输太多，无法在页面中逐条链路仿真：其时间取每步瓶颈界（最大时延 + 最忙链路的字节数 / 带宽）。
model-only-sim = 其时间按链路逐条仿真（鼠标悬停在链路上可查看其在整个过程中的负载）。
footer = 哪些是模型、哪些是真实的：数据、归约和校验都是真实的（在此浏览器中运行，与参考执行器逐位比对）。时间是硬件模型的结果，不是实测；通信算法依照 HCCL 的 Ring 与 Mesh 文档以及 NCCL 的 ring 实现思路，而非其源代码。每个数值旁都注明了来源。
drawing-label = { $title } 的示意图：{ $devices } 个 { $device }
transfers-now = 本步的传输
transfers-none = 此状态下没有传输。
transfer-item = { $src } → { $dst }：{ $chunks }（{ $kind }）
kind-copy = 复制
kind-reduce = 归约

## Controls
controls-label = 配置
f-primitive = 集合通信原语
f-algorithm = 通信算法
f-root = 根节点 (root)
f-size = 数据量
f-size-per-rank = 每个 rank 的 S
f-size-slider = 数据量，对数刻度，1 KiB 到 16 GiB
f-size-typed = 数据量（字节）；可输入 4096、64MiB、1.5 GB 等，按回车生效
f-dtype = 数据类型
f-redop = 归约操作
f-na = 不适用
f-redop-na = 不适用：{ $op } 不做归约
f-ranks = rank 数
f-seed = 随机种子
f-seed-title = 每个 rank 初始随机输入数据的种子：种子相同，缓冲区就相同，因此通过链接可以重复同一次运行及其逐位校验
f-topology = 拓扑
f-your-own = 自定义…
f-your-own-title = 以 JSON 粘贴或加载你自己的机器
f-slices = 切片数
f-slices-title = 代价模型中每次传输的切片数：auto = 与通信库一致（NCCL 为 512 KiB / 1 MiB 切片；HCCL 不切片，按 HCCL_BUFFSIZE 分轮执行）
size-is = S = { $bytes }。
model-only-why = 仅模型：{ $why }。
model-only-bytes = 超过 { $max } 的消息只做建模，不在浏览器中执行
model-only-ranks = 超过 { $max } 个 rank 只做建模，不在浏览器中执行
model-only-buffers = 所有 rank 的缓冲区合计将超过浏览器中的上限 { $cap }；仅建模
model-only-once = （压缩运行的上限；placement=once 时每个 rank 都持有全部 { $ranks } 份压缩输入，每个 rank { $per }）
model-only-compressed = （压缩运行的上限：页面要为每个 rank 计算参考结果）
auto-is = auto：
auto-library = { $lib } 实际采用的
auto-measured = { $lib } 的实测结果（拟合曲线）
auto-model = 模型预测最快的
auto-at = — 在 { $ranks } 个 { $device } 上、数据量 { $bytes } 时，{ $why }。
auto-nccl = { $runs }（以 { $algo } 绘制）
auto-would = auto 在这里会选择 { $algo }。
bytes-bad = 数据量“{ $text }”不是合法的大小（{ $why }）。允许：{ $min } 到 { $max }，例如 4096、64MiB、1.5 GB。
bytes-range = 数据量“{ $text }” = { $bytes } 字节，超出范围；允许：{ $min } 到 { $max }（{ $max_bytes } 字节）。
bytes-multiple = 数据量“{ $text }” = { $bytes } 字节，不是 { $dtype } 元素（每个 { $es } 字节）的整数倍；允许：{ $es } 的倍数，例如 { $example }。
seed-bad = 随机种子“{ $text }”不合法：应为 0..=18446744073709551615 的整数。

## Playback
keys-hint = 按键：空格 播放/暂停 · ←/→ 单步 · Home/End
btn-first = 回到初始状态
btn-back = 后退一步
btn-back-text = ◀ 后退
btn-play = 播放
btn-play-text = ▶ 播放
btn-pause = 暂停
btn-pause-text = ❚❚ 暂停
btn-forward = 前进一步
btn-forward-text = 前进 ▶
btn-last = 跳到最后
speed = 速度
scrub = 步骤
scrub-label = 动画的步骤（0 = 初始状态）
initial-state = 初始状态
step-of = 第 { $step } 步，共 { $total } 步
clock-modelled = 共 { $us } µs（模型）
clock-loops = 共 { $us } µs · 显示第 1 轮，共 { $loops } 轮 · { $loops } 轮合计：{ $all } µs
loops-title = 超过 HCCL_BUFFSIZE 的消息分 { $loops } 轮背靠背执行，每轮 { $bytes }；显示的步骤是其中一轮
timeline-label = 模型时间线：每步一段，宽度 = 模型耗时
seg-title = 第 { $k } 步：{ $phase } · { $from }–{ $to } µs
seg-label = 转到第 { $k } 步
step-description = 用文字描述当前步骤

## Buffers
buffers = 缓冲区
buffers-label = 各 rank 的缓冲区
buf-before = 第一步之前
buf-after = 第 { $step } 步之后，共 { $total } 步
buf-chunks = { $chunks } 个数据块，每块约 { $size }
buf-holds = { $device } 的数据块 { $chunk }：含 { $ranks }
buf-first = 第一个元素 = { $value }
buf-receives = 从 { $src } 接收（{ $kind }）
buf-not-output = 不属于该 rank 的输出
buf-block = rank { $b } 的数据块
buf-send-piece = 发给 rank { $b } 的数据
buf-recv-slot = 接收来自 rank { $b } 的数据的位置
buf-v-send = 发送数据 rank { $a } -> rank { $b }
buf-v-recv = 接收位置 rank { $a } -> rank { $b }
buf-send-block = 发送块
buf-recv-block = 接收块
buf-col = 数据块 { $c } = { $what }
legend = 图例
legend-one = 单个 rank 的贡献：
legend-partial = 部分归约（k 个 rank）：
legend-partial-chip = { $n } 个 rank 中的 { $k } 个
legend-all = 全部
legend-full = 完全归约
legend-empty = 空
legend-recv-reduce = 接收（归约）
legend-recv-copy = 接收（复制）
legend-send = 发送
buf-hint-values = 单元格中的数值：rank worker 实际算出的该数据块第一个元素（真实数据）。颜色和圆点：它含有哪些 rank 的贡献（符号追踪）。
buf-hint-waiting = 单元格中的数值：在 rank worker 报告真实数据之前显示“…”。颜色和圆点：该数据块含有哪些 rank 的贡献（符号追踪）。
buf-hint-compact = { $n } 个 rank × { $chunks } 个数据块时，每个单元格只显示颜色；指向单元格，或聚焦网格后用方向键移动，网格下方会用文字说明它所含的内容；屏幕阅读器可读取文字摘要。
buf-canvas-label = 缓冲区网格：{ $n } 个 rank × { $chunks } 个数据块，颜色表示每个数据块含有哪些 rank 的贡献
buf-cursor-hint = 指向单元格，或聚焦网格后使用方向键，即可读取它所含的内容。
buf-hint-scratch = 最后一步之后，褪色的单元格是临时空间：不属于该 rank 的输出。
buf-hint-alltoall = 每行左半部分是发送区（发给 rank j 的数据），右半部分是接收区（来自 rank j 的数据）；rank 自己的那份留在发送区。
buf-table-caption = 本步之后各 rank 的数据块所含内容

## Step log
step-log = 步骤日志
step-log-label = 步骤日志：每一步的每次传输
step-log-count = { $steps } 步 · { $transfers } 次传输
step-log-hint = a→b c3：rank a 把数据块 3 发给 rank b；→ 复制，⇒ 归约。时间由模型给出。点击某步可查看；按键：空格 播放/暂停，←/→ 单步，Home/End。
log-share = { $n } 条流共享一条链路
log-xfer = { $src } 把 { $chunks } 发给 { $dst }（{ $kind }）

## Estimate
estimate = 预估
estimate-label = 代价模型预估
estimate-sub = α-β 模型，无需 worker
predicted = 预测时间
predicted-note = 预测时间（{ $note }）
note-compressed = 含压缩；排名表中的该行未压缩
note-measured = 拟合曲线；排名表中的各行由拟合出的链路参数建模
algbw-title = 算法带宽：消息大小 S 除以时间 t，按 nccl-tests 的定义（GB = 10⁹ 字节）
busbw-title = 总线带宽：{ $ranks } 个 rank 上的 { $op } 为 algbw × { $factor }，即环算法在每个 rank 链路上产生的流量速率，因此在任何 rank 数下都可与链路峰值比较；搬运数据更少的算法（由交换机归约，如 NVLS）可超过链路速度（nccl-tests PERFORMANCE.md）
chosen-library = auto：{ $lib } 实际采用的
chosen-measured = auto：{ $lib } 的实测结果（拟合曲线）
chosen-model = auto：模型预测最快的
chosen-fixed-other = 你的选择 — auto 会选 { $algo }
chosen-fixed-same = 你的选择 — 与 auto 相同
algo-line = · { $chosen } · { $ranks } 个 { $device } 上数据量 { $bytes } 的 { $op }
algo-line-barrier = · { $chosen } · { $ranks } 个 { $device } 上的 Barrier（无数据，数据量不适用）
estimate-compressed = 使用 { $scheme } 压缩（{ $placement }；假设分析，见下文）：{ $t } µs，不压缩为 { $u } µs。下面的排名不含压缩。
th-algorithm = 通信算法
th-steps = 通信步数
th-time = 时间 (µs)
th-busbw = busbw (GB/s)
ranking-caption = 所有适用的通信算法，最快的在前
ranking-pending = 正在为其他算法排序…
chart-pending = 正在绘制曲线…
planning = 正在后台规划 { $ranks } 个 rank（页面保持可操作）…
estimate-updating = 正在后台按新设置更新估计…
badge-shown = 当前
badge-not-lib = 非 { $lib }
not-lib-title = { $lib } 在 { $op } 中不使用 { $algo }
bound = （界）
bound-title = 每步瓶颈界：该调度超出了模型逐条链路仿真的规模
too-large = 过大
too-large-title = 其调度太大，无法在此构建
why-details = 原因：每个候选算法的数字（英文）
link-figures = 模型使用的链路参数（英文来源）
assumption = 假设
machine-figures = 模型使用的机器参数（英文来源）
model-note-nccl = 此处为模型结果，并非实测：由 NCCL 的调优模型按其自身常数决定采用的算法与协议；时间由其时延与带宽公式加上上面的校正给出，80 % 范围反映校正的不确定程度。busbw 采用 nccl-tests 的定义。
model-note-a = 这是模型而非实测：每次传输耗时 α + 字节数/B；
model-note-sliced = 切片在各步之间流水（每步之间无同步）
model-note-sync = 各步同步执行
model-note-share = ；同一链路方向上的多条流共享其带宽
model-note-up-to = （此处最多 { $n } 条）
model-note-none = （此处没有共享）
model-note-b = 。真实的 HCCL 还会把超过 HCCL_BUFFSIZE（200 MB）的消息分轮执行、对切片做流水，并有模型未计入的 kernel 启动和同步开销。busbw 采用 nccl-tests 的定义；hccl_test 只打印 algbw。

## Result
result = 结果
res-idle = 空闲
res-idle-text = 尚未运行。
res-waiting = 等待规划
res-waiting-text = 该规划仿真耗时较长（流水线切片估算、auto 所需的排名或融合视图的各个桶），因此由后台规划 worker 计算，不占用页面主线程；规划一到，各 rank 即开始运行。
res-running = 运行中…
res-running-text = { $ranks } 个 rank worker 正在用真实的 { $dtype } 数据执行该调度；每个输出到达时即校验（已完成 { $done } / { $ranks }）。
res-verified = 已验证
res-verified-compressed = 全部 { $ranks } 个 rank 的输出与压缩版参考执行器逐位一致（相同编解码、相同顺序）。它们相对未压缩精确结果的误差来自压缩，见下文。
res-verified-text = 全部 { $ranks } 个 rank 的输出与参考执行器逐位一致（相同的归约顺序），且与精确结果之差在 { $dtype } 的容差之内。
res-mismatch = 不一致
res-mismatch-text = 有些 rank 的输出与参考结果不同：
res-error = 错误
res-error-text = 运行未完成：
res-model-only = 仅模型
res-model-only-text = 未执行：{ $why }。
res-model-only-drawn = 预估和动画仍然有效。
res-model-only-undrawn = 预估和通信算法排名仍然有效；此 rank 数下不播放动画。
res-too-large = 对浏览器来说太大
res-max-error = 最大 |误差|
res-vs-exact = 相对精确值，共 { $n } 个元素
res-wall = worker 实际耗时
res-wall-note = （此浏览器，而非所建模的硬件）
res-collective = 集合通信本身
res-collective-note = （所有 rank 就绪到最后一个 rank 完成：不含 worker 启动与输入生成；{ $kernels } 规约内核）
res-checked = 已校验的 rank
res-checked-of = { $done } / { $ranks }
rerun = 再运行一次
res-real = 真实数据在 Web Worker 上运行（每个 worker 承载一组 rank），逐位校验。

## Chart
chart = busbw 与数据量
chart-label = busbw 随数据量的变化
chart-sub = { $topo } 上 { $ranks } 个 rank 的 { $op } · { $dtype }
chart-x = 每个 rank 的数据量 S（对数刻度）
chart-y = busbw (GB/s)
chart-current = 当前数据量 { $bytes }
chart-legend = 曲线
chart-peaks = { $algo } 峰值 { $gbps } GB/s
chart-same = 此处重合的曲线：{ $algos }（后者以虚线画在第一条之上）。
chart-hint = 模型曲线：在此 rank 数下实现该原语的所有通信算法，1 KiB … 1 GiB。圆点是上面所示通信算法在当前数据量下的值。
chart-bound-hint = “界”：传输太多，无法在页面中逐条链路仿真，因此画的是每步瓶颈界（每步取最大时延 + 最忙链路的字节数 / 带宽）。
chart-not-drawn = 图表未绘制：{ $why }
chart-fitted = 拟合曲线
chart-measured = 实测（你的日志）
chart-look = { $algo } 在 { $bytes }
chart-data = 图表中的数字

## Timeline (Gantt)
gantt = 时间线
gantt-label = 模型运行的时间线
gantt-rows = 甘特图：{ $rows } 行，点击可转到某一步
gantt-by-link = 每个承载数据的链路方向一行；一个条块是某一步中的一段忙碌区间（橙色：多条流共享）。
gantt-by-rank = 每个 rank 一行；一个条块是它发送的一次传输，从开始到接收方完成归约。
gantt-follow = 红线跟随动画；点击可转到某一步。

## Algorithm summaries
algo-ring = 环(Ring)算法：每个 rank 只与下一个 rank 通信；每阶段 n-1 步，每步 1/n 的数据（Broadcast / Reduce：从根出发 / 到根的链，按切片流水）
algo-mesh = 全连接(Full Mesh)（HCCL 的 Mesh 算法）：每个 rank 同时与所有对端通信；每阶段一步
algo-rhd = 递归二分和倍增算法(RHD)（HCCL H-D_R，Rabenseifner）：每阶段 log2 n 步，与距离 2^k 的伙伴交换的数据先减半再倍增
algo-tree = 二项树：拥有数据的节点每步翻倍（log2 n 步），用于有根节点的原语
algo-star = 星形：根节点在一步内与每个 rank 交换
algo-pairwise = 逐对通信算法(Pairwise)：n-1 步，每步一个对端，不共享链路
algo-nb = 非均匀的数据块通信算法(NB)（Bruck）：任意 n 都是 ceil(log2 n) 步，距离 1、2、4、…
algo-dbtree = 双二叉树（NCCL）：两棵树各传一半数据；时延为对数深度，带宽用满
algo-nvls = NCCL 在这里运行 { $runs }：NVLink SHARP，每块 GPU 把数据写入 NVSwitch，由交换机完成规约并把结果组播回去；图中画成每块 GPU 对每块 GPU（mesh），但规约其实由交换机完成
algo-hier = 分层算法（HCCL A2）：Server内经 HCCS 用 Mesh，Server间经 RoCE 用环（8·S 个 rank）
algo-hier-nhr = 分层算法，Server间使用 NHR：ceil(log2 S) 个 Server间步骤
algo-nhr = 非均衡的层次环算法(NHR)：任意 n 每阶段都是 ceil(log2 n) 步
algo-pipeline = 流水线并行算法(Pipeline)（HCCL）：Server间的环与 Server内的 Mesh 在同一些步骤中重叠（8·S 个 rank）
verdict-short = { $chosen }：{ $algo }，预测 { $t } µs，在 { $count } 个候选中排第 { $rank }。
verdict-short-unranked = { $chosen }：{ $algo }，预测 { $t } µs。
ranking-error = 无法计算其他算法的排名：{ $error }
slices-title = URL 参数 slices：auto 或 1..=256
topo-title-910b-8 = 1 台服务器 × 8 张昇腾 910B，HCCS 全互连（28 条链路）
topo-title-910a-8 = 1 台服务器 × 8 张昇腾 910（910A）：两组各 4 张走 HCCS，组间走 PCIe
topo-title-h100-8 = 1 台服务器 × 8 张 NVIDIA H100 SXM，NVLink4 经 NVSwitch 互连
topo-title-cluster = { $servers } 台服务器 × 8 张昇腾 910B：服务器内 HCCS 全互连，每个 NPU 一个 RoCE 端口
topo-short-910b-8 = 8× 昇腾 910B，HCCS 全互连
topo-short-910a-8 = 8× 昇腾 910，2 组 HCCS + PCIe
topo-short-h100-8 = 8× H100，NVSwitch
topo-short-cluster = { $servers } 台服务器 × 8 910B，RoCE
slice-unsliced = 不切片：每一步的传输整块发送，各步同步
slice-set = slices={ $n }，按设定
slice-auto-profile = auto：1 个切片；拟合的配置测量的是整个库，其流水已包含在拟合的 α 和 β 中
slice-auto-hccl = auto：1 个切片；HCCL 每一步整块发送，大消息按其 CCL 缓冲区分块流水（HCCL_BUFFSIZE { $buffer }：缓冲区循环）
slice-auto-nccl = auto：{ $n } 个切片，每片至多 { $slice }，即 NCCL Simple 协议的切片（NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 的 { $steps } 步）；最大一次传输 { $largest }
slice-cap-transfers = 上限降为 { $n }，使切片数 × { $transfers } 次传输不超过 { $budget } 个模拟子传输
slice-cap-flow = 上限降为 1：{ $n } 个切片的流水模拟需要超过 { $budget } 次流量更新（不同时刻完成的传输每完成一次就重新分配链路），因此该循环按不切片估算
slice-window-nccl = 每个连接最多 { $w } 个切片同时在途（NCCL：NCCL_STEPS 8 / SLICESTEPS）
slice-window-hccl = 每个连接最多 1 个切片同时在途（HCCL：一次一个）
slice-join = ；
slice-end = 。
slices-line = 每次传输 { $n } 个切片{ $window ->
    [0] {""}
   *[other] ，最多 { $window } 个同时在途
}

## Learn mode
learn-title = 课程
learn-list-hint = 简短的导览：每一站会设置好页面，告诉你该看哪里（已高亮），并提出一个问题。每一站都是可以分享的链接。
learn-stops = { $n } 站
learn-lesson = 课程
learn-all = 全部课程
learn-stops-label = 本课程的各站
learn-stop-of = 第 { $stop } 站，共 { $total } 站
learn-off-stop = 你修改了设置；高亮和讲解针对的是本站的设置。
learn-restore = 回到本站
learn-look = 请看：
learn-show-me = 带我去看
learn-question = 问题：
learn-show-answer = 显示答案
learn-hide-answer = 隐藏答案
learn-prev = ← 上一站
learn-next = 下一站 →
learn-done = 完成：全部课程
topo-copy = 复制：接收方保存该数据块
topo-reduce = 归约：接收方把它合并进自己的数据（操作 { $op }）
link-hccs-tip = HCCS（华为缓存一致性系统）：同一服务器内连接昇腾 NPU 的链路；910B 服务器上每个 NPU 与其他每个 NPU 各有一条（全互联）
link-roce-tip = RoCE（基于融合以太网的 RDMA）：连接各服务器的网络，经由图中的交换机
link-pcie-tip = PCIe：主机总线；此处承载没有直连链路的加速卡之间的流量，比 HCCS 或 NVLink 慢
link-nvlink-tip = NVLink：NVIDIA 的 GPU 间链路；8 卡 A100 或 H100 HGX/DGX 服务器上每个 GPU 经 NVSwitch 芯片到达其他每个 GPU
topo-token = 令牌 = 传输中的数据块，颜色表示它所含的内容
topo-collapsed = { $servers } 台服务器各画成一个方框（内部为 8 个 NPU、HCCS 全连接）；一条线代表一台服务器的 8 个 RoCE 端口。悬停在方框或线上可查看参数和负载。
topo-too-many = 本步有 { $n } 次传输：高亮显示忙碌的链路（悬停查看负载），不绘制令牌。
topo-servers = 数字是 rank。橙色线：连到交换网络的 RoCE 端口（Server间，慢速层级）；服务器内的灰色线：HCCS（Server内）。悬停在链路上可查看其带宽和负载。
gantt-loops = 显示第 1 轮，共 { $loops } 轮（{ $us } µs，合计 { $all } µs）
gantt-us = { $us } µs（模型）
gantt-by-link-btn = 按链路
gantt-trace = Perfetto 跟踪 ⤓
gantt-trace-title = 将此时间线下载为 Chrome / Perfetto 跟踪文件（JSON trace events：每个 rank 一条轨道、各步骤、每条链路的负载计数）；可在 ui.perfetto.dev 中打开
gantt-by-rank-btn = 按 rank

## What-ifs (compression, fusion)
wi-c-title = 压缩的假设分析
wi-not-hccl = HCCL 中没有
wi-c-note-a = HCCL 没有梯度压缩（它的 C API{" "}
wi-c-note-b = 以缓冲区自身的数据类型做归约，没有量化编解码），NCCL 也没有。这里模拟的是框架层的压缩器（例如 PyTorch DDP 的 communication hook）在集合通信前后所做的事。worker 会真实地量化、发送和反量化；运行结果与压缩版参考执行器逐位比对。
wi-compress = 压缩
wi-block-bad = 块大小“{ $value }”不可用：应为 { $min }..={ $max } 的整数（每个缩放因子对应的元素数）。
wi-block = 块大小
wi-scale = 缩放因子
wi-placement = 位置
wi-hop = hop：每次传输
wi-once = once：输入一次，然后 AllGather
wi-inputs = 输入
wi-claim = 检验一个说法：节省的通信时间
wi-claim-eg = 例如 −73 %
wi-wire = 线上字节数
wi-wire-line = { $wire }，不压缩为 { $raw }（{ $pct } %）
wi-time = 模型时间
wi-time-line = { $t } µs，不压缩为 { $u } µs（{ $change }）
wi-error = 相对精确值的误差
wi-after-run = 运行之后…
wi-flushed = 被清零
wi-flushed-line = 非零精确值中有 { $pct } % 变成了 0
wi-model-only = 超过 { $n } 个 rank 时仅模型：压缩假设分析在此 rank 数以内运行并建模。
wi-pick = 选择一种方案，用每次传输都量化（hop）或每个输入只量化一次（once）的方式、在类似梯度的输入上运行同一个集合通信，并与不压缩的运行比较误差和时间。
wi-float-only = 压缩只适用于 fp32、fp16 和 bf16；请选择浮点数据类型。
wi-f-title = 融合的假设分析
wi-f-sub = DDP 式的梯度分桶
wi-tensors = 张量
wi-buckets = 桶
wi-none = 无
wi-equal-layers = N 个相同的层
wi-layers = 层
wi-bucket-cap = 桶上限
wi-fusion-times = 未融合 { $unfused } µs → 融合 { $fused } µs（{ $gain }）
wi-no-fusion = 不融合：每个张量一次 AllReduce
wi-less-time = 时间减少 { $pct } %
wi-faster = 快 { $x } 倍
wi-back-to-back = 各次 AllReduce 依次执行，每次用 auto 选择的通信算法；未建模与反向传播的重叠
wi-crossover = 分界点
wi-crossover-line = 每次 AllReduce 低于约 { $bytes } 时时延占主导：这正是融合要消除的
wi-fuse-bars = 未融合 { $unfused } µs，融合 { $fused } µs
wi-unfused-bar = 未融合，{ $n } 次 AllReduce：{ $us } µs
wi-fused-bar = 融合，{ $n } 个桶：{ $us } µs
wi-blocks = 每个块是一个桶的 AllReduce（较深部分：其每条消息的时延）；悬停查看其张量和时间。
wi-no-bucket = 没有足够小的桶可以在浏览器中运行；模型仍然适用。

## Custom topology and measurements
ct-title = 自定义拓扑
ct-label = 自定义拓扑：粘贴或加载 JSON
ct-input = 拓扑 JSON
ct-not-used = 未采用：
ct-is = 为
ct-in-use = 正在使用：
ct-share = 分享链接中包含它。
ct-schema = 设备（2..={ $max } 个）、可选的交换机，以及带 bandwidth_gbps（每方向 GB/s）和 latency_us（µs）的链路。rank r 运行在 devices[r] 上；设备不转发流量，所以每对设备都需要一条直连链路或一条经过交换机的路径。
ct-use = 使用此拓扑
ct-use-title = 校验 JSON 并在这台机器上运行
ct-load = 加载文件…
ct-load-title = 读取一个 .json 文件并使用它
ct-example = 示例
ct-example-title = 在框中放入一个 4-GPU 示例（NVLink 环 + PCIe 交换机）
ct-readme = 格式和上限：见仓库中的 docs/custom-topology.md。
li-title = 你的实测数据
li-label = 实测数据：粘贴或拖入日志
li-text = 日志文本
li-paste = 在这里粘贴 nccl-tests（all_reduce_perf …，文本或 -J JSON）、rccl-tests、hccl_test 或 OSU micro-benchmarks 的输出，或拖入文件；带启动器前缀（mpirun、srun -l、pdsh、kubectl）也可以。其实测 busbw 会画在图表上，并拟合出一个参数档案（每个数据量区间的 α 和带宽）。
li-reading = 正在后台（规划 worker）读取 { $size }…
li-clear = 清除
li-kept = 已保存在此浏览器中，下次访问仍在；“清除”即删除。
li-not-kept = 超过 { $size }：重新加载后不保留（浏览器存储空间有限）。
li-held = 整个 { $size } 的日志都会被读取；文本框只读地显示其前 { $shown }（浏览器排版数 MB 文本要花数秒）。清除后可粘贴另一份。
li-not-stored = 此浏览器未保存它（隐私窗口，或存储已满）：重新加载后即消失。
li-unreadable = 无法读取此日志：
li-tables = 找到 { $n } 张表。
li-fit-table = 拟合的表
li-no-fit = 未能拟合参数档案：
li-use = 让模型使用此参数档案
li-use-title = 对日志实测的机器建模（拓扑“measured”：其节点、加速卡和通信库），rank 数取日志的；改变 rank 数或节点数即可预测其他规模
li-back-preset = 回到之前的拓扑
li-back-topology = 停止使用此参数档案
li-model-uses = 模型使用：
li-line = 行
li-size = 数据量
li-measured = 实测 µs
li-fitted = 拟合 µs
li-error = 误差
li-rejected = 此表被拒绝：
li-unusable = 其中 { $n } 张不可用（见下）。
li-not-used = 未使用：
li-fitted-below = 已在下方拟合

redop-avg-option = avg（NCCL 的 ncclAvg）
redop-lacks = { $lib } 没有 { $op }：其归约操作只有 SUM、PROD、MAX、MIN。此处按 NCCL 的 ncclAvg 计算：每个 rank 的数据先在该数据类型中乘以 1/n，再求和（整数：先求和，再除以 n 向零取整）。
wi-compress-min = 压缩阈值
wi-compress-min-title = compress_min：小于此大小的消息和融合桶不压缩直接发送（0 = 全部压缩）
wi-below-min = 此消息（{ $bytes }）小于 compress_min（{ $min }）：不压缩直接发送。
wi-large-only = 只压缩大桶
wi-large-only-line = { $n } 个桶中 { $k } 个（不小于 { $min }）被压缩：线上 { $wire }，而非 { $raw }；{ $t } µs，而非 { $fused } µs；相对 L2 误差 { $err }
det-title = 确定性计算
det-pending = 正在后台用真实输入运行两种归约顺序…
det-sub = 相同输入分别由 { $algo }（{ $dtype }）和另一种配置归约，逐位比较
det-versus = 对比
det-fp32 = fp32（相同输入）
det-element = 元素
det-fixed = 固定归约顺序
det-elements = 元素数
det-count = { $a } 与 { $b } 之间 { $n } 个元素中有 { $differ } 个不同（最大 { $ulps } ulp）。
det-count-first = （只比较消息 { $total } 个元素中的前 { $n } 个。）
det-cost = 固定顺序按链式 Reduce 到 rank 0（{ $reduce } µs）+ 链式 Broadcast（{ $bcast } µs）= { $total } µs 建模，对比 { $algo } AllReduce 的 { $ar } µs。
det-source = HCCL 的确定性计算（HCCL_DETERMINISTIC=true；strict 为保序：所有 bit 位的归约顺序一致）使结果可复现，文档说明会有性能下降；NCCL 没有此开关，只有在算法、协议和 rank 数相同时才逐位可复现。两种归约顺序来自校验器的表达式树。
det-ranks = { $m } 个 rank（相同贡献，先在本地求和）
# 慢卡与链路故障（engine::degrade）
faults-title = 慢卡与链路故障
faults-sub = 在模型时钟上的假设分析
faults-note = 先试一试慢卡或链路故障，不必等 profiler 事后告诉你。只改变时间：调度不变，所以真实运行也不变，仍然校验。语法与链接参数 slow=、late=、down= 以及 cclsim predict --slow/--late/--down 相同。
faults-slow = 慢卡（rank:速度倍率）
faults-late = 迟到的卡（rank:µs）
faults-down = 故障链路（a-b 或 a-port）
faults-example-slow = rank 3 半速
faults-example-down = 链路 0–1 故障
faults-clear = 恢复健康机器
estimate-faults = 在 { $faults } 下：{ $t } µs，健康机器上为 { $h } µs（×{ $x }）。
gantt-slow-mark = （慢卡）
gantt-wait-title = 第 { $step } 步：rank { $r } 等待 rank { $b } { $us } µs
waits-heading = 谁在等谁
waits-line = 第 { $step } 步：{ $n } 个 rank 最多等待 rank { $b } { $us } µs（{ $src }→{ $dst } 结束这一步）。
waits-more = ……还有 { $n } 步。
topo-down-title = 链路 { $a }–{ $b } 故障：流量绕行
topo-slow-title = rank { $r } 是慢卡：收发和计算速度 ×{ $f }
topo-late-title = rank { $r } 晚 { $us } µs 启动
drawing-faults = 这台机器已降级：{ $faults }。故障链路画成红色虚线；慢卡带红色虚线圈。

# 校准后的通信库模型给出的预测（ui/prediction.rs）及其在图表上的区间带。
estimate-sub-calibrated = NCCL 调优模型，按本机校准
pred-range-tag = 80 % 范围
pred-busbw = busbw
pred-range-title = 80 % 范围：来自拟合残差与修正项的不确定度，问题离实测越远，范围越宽
pred-runs = NCCL 运行
pred-channels = （{ $n } 个通道）
pred-p2p = 分组 send/recv（与每个对端同时收发）
pred-own = · NCCL 自身模型：
pred-own-title = NCCL 的调优模型（tuning.cc）用其自带常数、不加修正得到的时间：NCCL 自己的判断。上方的时间是同一模型按本机校准后的结果。
pred-measured-tag = 实测
pred-basis-tag = 依据
pred-not-measured = 本机没有实测数据：使用 NCCL 自带常数（以及他处的实测值，见下）；范围来自修正项的先验。
pred-measured-item = { $op }，{ $nodes } 节点 × { $g }（{ $ranks } 个 rank），{ $from }–{ $to }
pred-for-tag = 预测
pred-for = { $op }，{ $nodes } 节点（{ $ranks } 个 rank），{ $bytes }：{ $reach }。
reach-not-measured = 仅依据 NCCL 自带常数
reach-within = 在实测范围之内
reach-other-size = 实测过的集合通信和规模，但数据量不同
reach-other-scale = 实测过的集合通信，但规模不同
reach-other-collective = 未实测的集合通信，规模实测过
reach-other-both = 集合通信与规模均未实测
pred-dominated = 范围主要来自：{ $what }
assume-taper-short = { $nodes } 节点时的网络带宽（仅实测到 { $measured } 节点）
assume-taper = { $nodes } 节点间的网络未实测（仅实测到 { $measured } 节点）：假定每节点的网络带宽随节点数每翻一倍下降约 4 %（范围内为 0 到 9 %）。
assume-peer-short = AlltoAll 的每对端开销（未实测）
assume-peer = 未实测分组 send/recv（AlltoAll）：其每对端开销和带宽取先验值（每个对端 5 µs）。
assume-net-lat-short = 网络单跳时延
assume-net-lat = 实测数据未能确定网络单跳时延。
assume-lat-growth-short = { $nodes } 节点时的网络时延（仅实测到 { $measured } 节点）
assume-lat-growth = { $nodes } 节点间的网络时延未实测（仅实测到 { $measured } 节点）：假定节点数每翻一倍，单跳时延增加约 3 %（范围内最多 7 %）。
assume-net-bw-short = 网络带宽
assume-net-bw = 实测数据未能确定网络带宽（假定为 NCCL 的网卡带宽值）。
assume-ring-short = 跨节点环算法每一步的开销
assume-ring = 实测数据未能确定跨节点环算法每一步的开销。
assume-intra-short = 节点内带宽
assume-intra = 实测数据未能确定节点内带宽。
assume-lat-const-short = NCCL 的时延常数
assume-lat-const = 未实测的部分采用 NCCL 的时延常数。
assume-proto-short = NCCL 的协议效率
assume-proto = 采用 NCCL 的协议效率假定。
assume-unmeasured-short = 本机未实测 { $op }
assume-unmeasured = 本机未实测 { $op }：修正项来自 { $measured } 的实测。
assume-scatter-short = 实测数据自身的离散（±{ $pct } %）
assume-scatter = 实测数据相对模型的离散（±{ $pct } %）。
pred-runner-up = 按 NCCL 自身模型，{ $runs } 与其选择相差不到 { $x } 倍：其他 NCCL 版本或调优插件可能改用它，因此范围包含它校准后的时间（{ $t } µs）。
pred-engine-words = 模型的原文说明（英文）：
chart-pred = NCCL（已校准）— 80 % 范围
chart-pred-own = NCCL 自身模型
chart-pred-hint = 青色线是预估值，即校准后的 NCCL 模型，阴影带是它在每个数据量上的 80 % 范围；虚线是 NCCL 自身调优模型的判断。各算法曲线按机器的链路参数逐链路仿真各自的调度：是同一台机器的更粗略的模型。
f-nodes = 节点数（× { $g }）
f-nodes-title = 实测机器的节点数，每节点 { $g } 个 rank：据此设置 rank 数
nodes-bad = 节点数“{ $text }”不合法：应为 { $least }..={ $most } 的整数（每节点 { $g } 个 rank）。
topo-measured = measured — { $nodes } 节点 × { $g } { $accelerator }（你的日志，{ $ranks } 个 rank）
topo-measured-links = measured — 你的日志，{ $ranks } 个 rank（{ $tool }）
chart-measured-at = 实测于 { $ranks } 个 rank（你的日志；图表是另一个 rank 数）
chart-fitted-at = 拟合曲线（{ $ranks } 个 rank）
topo-collapsed-nodes = { $servers } 个节点各画成一个方框（每个 { $g } 张 GPU）；一条线代表一个节点到网络的连接。悬停在方框或线上可查看参数和负载。
topo-nodes = 数字是 rank。方框是实测机器的节点；连到横条的线使用由你的日志拟合出的参数。悬停在链路上可查看其带宽和负载。
st-title = 训练步
st-sub = 模型在 { $topo }（{ $ranks } 个 rank）上的一步：它发出的每个集合通信，按首页估计的方式计时
st-model = 模型
st-model-pasted = config.json（粘贴的）
st-config-summary = 你自己的模型：粘贴它的 config.json
st-config-hint = Hugging Face 的 config.json（Llama、Mixtral 与 DeepSeek-V3 的字段名）：hidden_size、intermediate_size、num_hidden_layers、num_attention_heads、num_key_value_heads、vocab_size、num_local_experts 或 n_routed_experts、num_experts_per_tok、tie_word_embeddings；DeepSeek 的 moe_intermediate_size、n_shared_experts、first_k_dense_replace 与潜在注意力（q_lora_rank、kv_lora_rank、qk_nope_head_dim、qk_rope_head_dim、v_head_dim）。其他字段忽略；模型形状会写入链接。
st-config-use = 使用此模型
st-config-bad = config.json：{ $field } “{ $value }” 不允许：{ $allowed }。
st-worked-intro = 算例：
st-worked = 在一台 8 × 910B 服务器上以 DDP 训练 Llama-3 70B（假设峰值 300 TFLOPS）：AllReduce 真占一步的 35 % 吗？
st-f-microbatches = 微批次
st-f-seq = 序列长度
st-f-batch = 全局批大小
st-f-mfu = MFU
st-peak = 峰值 TFLOPS
st-peak-placeholder = 机器引用的峰值
st-compress = 梯度压缩
st-cp-title = 上下文并行：每个 rank 持有每条序列的 seq / cp 个 token，在注意力中沿环传递键和值（Megatron-LM 与 Transformer Engine 的 P2P 环）；需要计入注意力的 FLOPs，环形传递藏在其计算之后。
st-sp = 序列并行
st-sp-title = Megatron 的序列并行：张量并行的每次 AllReduce 变为同一激活的 ReduceScatter 与 AllGather（Korthikanti 等，2022）。
st-attn = 计入注意力 FLOPs
st-attn-title = 在 6 · 激活参数之外加上注意力自身的 FLOPs（分组查询注意力为每 token 12 · 层数 · hidden · 序列长度）；长序列需要计入。
st-compress-title = 对数据并行的梯度归约做分块量化，按 playground 的压缩模型计时：这是假设分析。NCCL 和 HCCL 都不做压缩；PyTorch DDP 内置的通信钩子做 fp16 / bf16 转换、PowerSGD，或（实验性的）量化为 uint8 后做 AllGather；都不是这里这种按块缩放的 int8 / fp8 归约。
st-bad-compress = 压缩方式“{ $value }”不可用：可选 none、int8、fp8e4m3 或 fp8e5m2。
st-pin = 把这一步固定为 A
st-pin-hint = 然后修改并行布局、压缩、桶上限或机器：卡片会把两步并排比较。
st-repin = 改为固定这一步
st-unpin = 取消固定
st-vs-title = 固定的 A 与当前的 B 并排比较
st-vs-bad = 无法计算固定的那一步（链接键 step_vs）：{ $error }
st-vs-same = A 与 B 的输入相同。
st-vs-default = 默认
st-vs-figure = 指标
st-vs-a = A（固定）
st-vs-b = B（当前）
st-vs-ratio = B / A
st-vs-share = 暴露通信占一步的比例
st-pending = 正在规划 worker 中为这一步的每个集合通信计时…
st-bad-whole = { $field } “{ $value }” 不允许：应为整数。
st-bad-number = { $field } “{ $value }” 不允许：应为数字。
st-compute = 计算
st-bubble = 流水线气泡
st-comm = 通信（总和）
st-exposed = 暴露的通信
st-share = 占一步的 { $share } %
st-step-time = 步时间
st-tokens = tokens/s
st-lane-compute = 计算
st-lane-comm-value = { $comm }（{ $exposed } 暴露）
st-lane-comm = 通信
st-lanes-label = 计算 { $compute }；通信 { $comm }，其中 { $exposed } 暴露。
st-legend-compute = 计算
st-legend-bubble = 气泡
st-legend-hidden = 被计算掩盖
st-legend-exposed = 暴露
st-col-purpose = 用途
st-col-primitive = 原语
st-col-bytes = 字节
st-col-group = 组
st-col-calls = 调用次数
st-col-per-call = 每次
st-col-total = 合计
st-col-overlap = 重叠于
st-drill = 在 playground 中打开 { $ranks } 个 rank 上 { $bytes } 的 { $primitive }
st-source = 计算 = 6 · 激活参数 · tokens（计入时加上注意力的 FLOPs），按峰值 × MFU（峰值：{ $peak }）；每次调用按首页估计计时；计算能掩盖多少按 cclsim step 的重叠模型。点击原语可打开该调用。
fusion-hint-drawn-only = 融合最多规划到 64 个 rank（auto 在此范围内比较每种桶大小）。
fusion-hint-allreduce = 融合只适用于 AllReduce。
fusion-hint-pick = 选出一次反向传播要 AllReduce 的张量（Llama 3 的形状，或 N 个相同的层），比较逐张量 AllReduce 与 DDP 分桶。
fusion-not-bucket = worker 运行的是 { $bytes }（不是其中任何一个桶）。
fusion-run-bucket = 运行第 { $k } 个桶（{ $tensors } 个张量，{ $bytes }）
fusion-run = worker 把第 { $bucket } 个桶（{ $tensors } 个张量，{ $bytes }）作为一次 AllReduce 运行，与参考结果逐位比对，且每个元素都在其精确和的 { $dtype } 容差之内。精确和按元素计算，所以这也是每个拆包后张量自己的 AllReduce 结果；与逐张量运行相比，只有元素的舍入顺序可能不同。
topo-idle = 空闲
topo-box-server = 服务器 { $n }
topo-box-node = 节点 { $n }
topo-box-group = HCCS 组 { $g }（NPU{ $a }–{ $b }）
topo-box-ranks = 本次运行的 rank { $a }–{ $b }
topo-box-idle = 不在本次运行中
topo-box-node-title = 节点 { $n }：{ $gpus } 块 GPU（设备 { $a }–{ $b }）；{ $run }
topo-box-server-title = 服务器 { $n }：8 块昇腾 910B NPU（设备 { $a }–{ $b }），内部 HCCS 全互联（28 条链路 × { $gbps } GB/s）；{ $run }
topo-switch-roce = RoCE 交换网络
topo-switch-title = { $label }：交换机（不承载 rank）
topo-bar-fitted = 网络 — 拟合值：每个 rank 的链路 { $gbps } GB/s、{ $us } µs
topo-bar-switch = { $label } — 无阻塞交换机，每块 NPU 一个 { $gbps } GB/s RoCE 端口
topo-bar-title = { $label }：交换机（不承载 rank）；只在 { $device } 端口处建模争用（这是一个假设）
topo-trunk-title = { $code } ↔ { $fabric }：{ $ports } 个 RoCE 端口 × 每方向 { $gbps } GB/s，每个 α { $us } µs
    { $load }
topo-trunk-load = 负载（{ $scope }）：{ $dirs } 个端口方向上共 { $flows } 条流，最忙的 { $busy } / { $window } µs
topo-trunk-unsimulated = （此方案没有逐链路负载：未知）
topo-link-head = { $kind } { $a }–{ $b }：每方向 { $gbps } GB/s，α { $us } µs
topo-link-load = { $link }
    负载（{ $scope }）：
      { $there }
      { $back }
topo-link-unsimulated = { $link }
    （此方案没有逐链路模拟：负载未知）
topo-dir-idle = { $from }→{ $to }：空闲
topo-dir-busy = { $from }→{ $to }：{ $flows } 条流，忙 { $busy } / { $window } µs（{ $percent } %）
topo-scope-step = 第 { $step } 步
topo-scope-loop = 第 1 轮循环（共 { $loops } 轮；流数取最忙的一步）
topo-scope-run = 整个运行期间（流数取同时最多的时刻）
