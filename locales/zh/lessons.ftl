# 课程文字（各站的配置在 lessons/*.json）。与 ../en/lessons.ftl 的 id 一一对应。
# 术语依照 HCCL 中文文档。
# 文中引用的模型数字由 tests/lessons.rs 对照各站的预估逐一检查（中英文都查）。

## 1. 什么是集合通信
lesson-collective-title = 什么是集合通信：AllReduce = ReduceScatter + AllGather
lesson-collective-intro = 4 个 NPU、一次 AllReduce，在缓冲区上逐块观察。
lesson-collective-1-say = 集合通信是通信域中所有 rank 共同发起的一次调用。在 AllReduce 中，每个 NPU 开始时只有自己的缓冲区，结束时都要得到所有缓冲区之和。下面每一行是一个 NPU 的缓冲区，分成 4 个数据块；单元格的颜色和圆点表示该数据块含有哪些 rank 的贡献。
lesson-collective-1-look = 缓冲区网格：每个 NPU 一行，每个数据块一列。
lesson-collective-1-ask = 在第一步之前，每个数据块含有几个 rank 的贡献？
lesson-collective-1-answer = 一个：它自己所在 rank 的。此时还没有任何数据移动，所以每个单元格都是本行的颜色、只有一个圆点。
lesson-collective-2-say = 环(Ring)算法的第 1 步：每个 NPU 把一个数据块发给下一个 NPU，后者把它累加到自己的副本上。没有哪个 NPU 发送整个缓冲区——只发四分之一。
lesson-collective-2-look = NPU1 的数据块 3，它刚刚收到 NPU0 的那一份。
lesson-collective-2-ask = 现在 NPU1 的数据块 3 含有哪些 rank 的贡献？
lesson-collective-2-answer = rank 0 和 rank 1：NPU0 发来了它的数据块 3，NPU1 把它加到了自己的数据上。
lesson-collective-3-say = 经过 3 步（n = 4 时为 n − 1 步），每个 NPU 都有一个含全部贡献的数据块：颜色最深。这就是 ReduceScatter：归约的结果按数据块分散到各个 rank。
lesson-collective-3-look = NPU0 的数据块 0：已在全部四个 rank 上归约完成。
lesson-collective-3-ask = 现在整个网格中有几个完整的数据块？为什么是这个数？
lesson-collective-3-answer = 四个，每个 NPU 一个：每个数据块沿环走了一圈，每跳收集一份贡献，最后停在它的负责者那里。
lesson-collective-4-say = 接下来的 3 步是 AllGather：每个负责者把完整的数据块沿环复制下去，直到每个 NPU 都拥有全部数据块。AllReduce = ReduceScatter + AllGather，共 2(n − 1) = 6 步。
lesson-collective-4-look = 结束时的缓冲区网格：每个单元格都已完整。
lesson-collective-4-ask = 在 AllGather 这一半中，还有 NPU 做加法吗？
lesson-collective-4-answer = 没有。AllGather 只复制已完成的数据块（步骤日志中的 →）；所有的加法（⇒）都发生在 ReduceScatter 那一半。
lesson-collective-5-say = 单独的 ReduceScatter 在它那一半之后就结束了：3 步，每个 NPU 只保留自己那块归约好的数据。它本身就是一种集合通信（例如用于切分的优化器状态）。
lesson-collective-5-look = 预估：这次 ReduceScatter 的预测时间。
lesson-collective-5-ask = 与前几站的 AllReduce 比较（那里的预估约为 26 µs）。为什么大约是一半？
lesson-collective-5-answer = 它只做两半中的一半：6 步中的 3 步，每步字节数相同，所以约 13 µs。

## 2. 环(Ring)算法
lesson-ring-title = 环(Ring)算法：带宽最优，以及它在哪里吃亏（α 与 β）
lesson-ring-intro = 8 个 GPU 组成一个环：每条链路都在忙，没有浪费一个字节——但要连续付 14 次时延。
lesson-ring-1-say = 在环(Ring)算法 AllReduce 的每一步中，每个 GPU 把缓冲区的 1/8 发给下一个。8 条链路同时传数据；14 步下来，每个 GPU 共发送缓冲区的 2(n − 1)/n：这是任何 AllReduce 所需发送量的下限。所以说环算法是带宽最优的。
lesson-ring-1-look = 从 GPU0 到 GPU1 的链路（经过交换芯片），本步正忙。
lesson-ring-1-ask = 在 8 个 GPU 上对 S 字节做 AllReduce，每个 GPU 总共发送多少字节？
lesson-ring-1-answer = 2 × 7/8 × S = 1.75 S（每一半 7 步，每步 S/8）。没有哪种通信算法能让每个 rank 发得更少。
lesson-ring-2-say = 数据量为 256 MiB 时每步传 32 MiB，时间几乎全是 β（字节数 / 带宽）：预估说这次运行受带宽限制。此时环算法的 busbw 接近一个 GPU 的链路所能承载的带宽。
lesson-ring-2-look = 排名表中 ring 那一行：时间和 busbw。
lesson-ring-2-ask = 这里 ring 的 busbw 约为 370 GB/s。既然每个 GPU 发送了 1.75 × 256 MiB，为什么还说它“接近链路速度”？
lesson-ring-2-answer = busbw 已经除掉了 2(n − 1)/n 这个系数（nccl-tests 的定义）：它就是每个 GPU 的链路实际跑出的速率，约为模型给一个 GPU 的 371 GB/s 中的 370 GB/s。
lesson-ring-3-say = 同样的环，数据量改为 64 KiB。每步只传 8 KiB，所以每步的耗时主要是固定的时延 α；连续 14 步就是 14 个 α。预估说这次运行受时延限制。
lesson-ring-3-look = 又是 ring 那一行，现在排在接近末尾。
lesson-ring-3-ask = 在这个数据量下，为什么通信步数更少的算法能胜过环算法，尽管它们发送的字节一样多甚至更多？
lesson-ring-3-answer = 因为时间 ≈ 通信步数 × α + 字节数 × β，64 KiB 时 α 项占主导：6 步（rhd、nhr）或 2 步（mesh）付的时延远少于环的 14 步。
lesson-ring-4-say = 图表给出了 ring 在各个数据量下的 busbw：左侧 α 占主导，曲线平而低；右侧 β 占主导，曲线升到平台。曲线的交点就是最优通信算法改变的地方。
lesson-ring-4-look = 图表中 ring 曲线在 64 KiB 处（画圈的点）。
lesson-ring-4-ask = 从图表看：在数据量坐标轴的哪一端，ring 能追上其他算法？
lesson-ring-4-answer = 在大的一端（几百 MiB），那里所有通信算法都受带宽限制；数据量小时 ring 远远落后。

## 3. 递归二分和倍增算法(RHD)
lesson-rhd-title = 递归二分和倍增算法(RHD)：步数更少，时延更低
lesson-rhd-intro = log2 n 步代替 n − 1 步：RHD 如何用距离换步数。
lesson-rhd-1-say = 在递归二分的第一步中，每个 NPU 与相隔 4 个 rank（距离 n/2）的伙伴交换一半缓冲区，保留它将要归约的那一半。两半同时、双向传输。
lesson-rhd-1-look = NPU0 与 NPU1 之间的链路——本步它是空闲的：NPU0 的伙伴是 NPU4。
lesson-rhd-1-ask = 这一步之后，每个 NPU 还需要归约缓冲区的多少？
lesson-rhd-1-answer = 一半。第 2 步之后是四分之一，第 3 步之后是八分之一：数据每步减半。
lesson-rhd-2-say = 经过 log2 8 = 3 步递归二分，每个 NPU 都拥有一个完全归约的数据块——与环算法 7 步后的 ReduceScatter 结果相同。接着 3 步递归倍增再把它收集回来。
lesson-rhd-2-look = NPU0 的数据块 0：3 步之后已经完整。
lesson-rhd-2-ask = 在 8 个 NPU 上，整个 RHD AllReduce 需要多少步？环算法是 14 步。
lesson-rhd-2-answer = 6 步：3 步二分 + 3 步倍增（2 log2 n），每个 NPU 发送的字节数与环相同，都是 1.75 S。
lesson-rhd-3-say = 数据量为 64 KiB 时时延占主导，所以 6 步胜过 14 步：排名表中 rhd 远远领先 ring。但在这台 910B 服务器上它仍然不是第一。
lesson-rhd-3-look = 排名表中 rhd 那一行。
lesson-rhd-3-ask = rhd 预测约 27 µs，ring 约 54 µs。为什么 rhd 不是正好快 14/6 倍？
lesson-rhd-3-answer = 因为时间并不全是 α：两者的字节数（β 部分）相同，只有时延部分缩小为 6/14。
lesson-rhd-4-say = 6 个 NPU 不是 2 的幂，RHD 要先折叠：2 个 NPU 把数据交给伙伴，剩下 4 个做递归二分和倍增，最后一步展开，把结果送回。rank 数不是 2 的幂就要多付几步。
lesson-rhd-4-look = 用文字描述的步骤：这是折叠步。
lesson-rhd-4-ask = 对于不是 2 的幂的 rank 数，NB（Bruck）或 NHR 有什么不同？
lesson-rhd-4-answer = 它们不需要折叠：在距离 1、2、4、… 上的交换对任意 n 都成立，每阶段 ceil(log2 n) 步。

## 4. 910B 的全连接(Full Mesh)
lesson-mesh-title = 910B 的全连接(Full Mesh)：为什么单机上 HCCL 的 Mesh 胜出
lesson-mesh-intro = 8 个 NPU、28 条 HCCS 链路：每个 NPU 只用一条链路的算法会浪费其余六条。
lesson-mesh-1-say = 在 Atlas 800T A2（910B）服务器上，每对 NPU 之间都有自己的 HCCS 链路：全连接(Full Mesh)。环算法只用到下一个 NPU 的那条链路——每个 NPU 7 条链路中的 1 条。其余 6 条每一步都闲着。
lesson-mesh-1-look = NPU0 → NPU1 的链路：本步环算法中 NPU0 唯一使用的链路。
lesson-mesh-1-ask = 环算法用了 NPU0 多大比例的链路？
lesson-mesh-1-answer = 7 条中的 1 条。单条 HCCS 链路本身并不快（模型取每方向 18.3 GB/s，即 HCCL 自己的规划值），所以环算法让服务器的大部分带宽闲置。
lesson-mesh-2-say = HCCL 的 Mesh 算法同时发给所有对端：在它的 ReduceScatter 步骤中，每个 NPU 通过全部 7 条链路并行地把每个对端负责的数据块发给它。每个阶段一步。
lesson-mesh-2-look = NPU0 – NPU4 的链路：现在它也在忙，每条链路都在忙。
lesson-mesh-2-ask = Mesh AllReduce 需要几步？每步每个 NPU 用几条链路？
lesson-mesh-2-answer = 2 步（ReduceScatter、AllGather），每步都用全部 7 条链路。
lesson-mesh-3-say = 数据量为 256 MiB 时排名表显示了差距：mesh 预测约 3.7 ms，ring 约 25.8 ms。字节数相同，但 mesh 把它们同时分摊到 7 条链路上。
lesson-mesh-3-look = 排名表最上面 mesh 那一行。
lesson-mesh-3-ask = 差距约为 7 倍。这个 7 从哪里来？
lesson-mesh-3-answer = 来自 mesh 中每个 NPU 同时使用的 7 条链路，而 ring 只用 1 条（每个 NPU 的字节数相同）。
lesson-mesh-4-say = 使用 algo=auto 时，页面的做法与 HCCL 在单机上相同：level0 是全连接，所以运行 Mesh。图表显示在这台机器上 mesh 在所有数据量下都位居最上。
lesson-mesh-4-look = 图表中 mesh 曲线在 256 MiB 处。
lesson-mesh-4-ask = 在 NVIDIA H100 服务器（NVSwitch）上，mesh 还会有同样的优势吗？
lesson-mesh-4-answer = 不会：那里每个 GPU 到交换芯片只有一个粗连接，环算法已经用满了它的带宽；所以 NCCL 用 ring 和 tree，而不是 mesh。

## 5. 跨服务器的分层
lesson-hier-title = 跨服务器：hier、hier-nhr、pipeline（RoCE 是慢速层级）
lesson-hier-intro = 4 台 910B 服务器、32 个 NPU：服务器内是快速的 HCCS，服务器之间是较慢的 RoCE。
lesson-hier-1-say = topo=910b-4x8 是 4 台服务器、每台 8 个 NPU。Server内（level0）的 NPU 通过 HCCS 全连接通信；Server间（level1）只能通过 RoCE，每个 NPU 的带宽低得多。打开这个链接时不指定 ranks=，就会用上全部 32 个 NPU。
lesson-hier-1-look = 示意图：四个服务器方框，RoCE 线连到交换网络。
lesson-hier-1-ask = 哪个层级应该承载尽可能少的字节？
lesson-hier-1-answer = level1，即服务器之间的 RoCE 网络：它是慢的那一层。
lesson-hier-2-say = hier 先在每台服务器内部做：经 HCCS 的 Mesh ReduceScatter，于是每个 NPU 持有本服务器之和的 1/8。
lesson-hier-2-look = 服务器 0 内部 NPU0 – NPU1 的 HCCS 链路。
lesson-hier-2-ask = 这一步之后，每个 NPU 还需要在服务器之间发送多少数据？
lesson-hier-2-answer = 缓冲区的 1/8：Server内这一步已经把本地 8 份贡献合并了。
lesson-hier-3-say = 然后是服务器之间经 RoCE 的环：每台服务器的第 k 个 NPU 只与下一台服务器的第 k 个 NPU 通信，携带它的 1/8 切片。每个 NPU 用自己的 RoCE 端口，所以一台服务器的 8 个端口并行工作。
lesson-hier-3-look = 从 NPU0（服务器 0）到 NPU8（服务器 1）的 RoCE 路径。
lesson-hier-3-ask = 4 台服务器时，每个阶段的 Server间环需要几步？
lesson-hier-3-answer = ReduceScatter 3 步（服务器数 − 1），AllGather 再 3 步。
lesson-hier-4-say = hier-nhr 把 Server间的环换成 NHR（每阶段 ceil(log2 4) = 2 步），pipeline 则让 RoCE 环与 HCCS Mesh 在同一些步骤中重叠。排名表的顺序是 pipeline、hier-nhr、hier——在全部 32 个 NPU 上直接做 mesh 或 ring 则远远落后。
lesson-hier-4-look = 排名表中 hier-nhr 那一行。
lesson-hier-4-ask = 为什么直接做 mesh（每个 NPU 对每个 NPU）在这里这么慢，而它在单机上是最快的？
lesson-hier-4-answer = 每个 NPU 的 31 个对端中有 24 个在其他服务器上，所以它的大部分字节都要经过 RoCE，而且多条流共享 RoCE 端口：慢速层级几乎承载了全部数据。
lesson-hier-5-say = 使用 auto 时，多机上的 HCCL 在每个 rank 超过 1 MiB 的 AllReduce 中使用流水线并行算法(Pipeline)：慢速的 RoCE 传输掩盖了快速的 HCCS 传输。图表显示大数据量时 pipeline 位居最上。
lesson-hier-5-look = 图表中 pipeline 曲线在 256 MiB 处。
lesson-hier-5-ask = pipeline 约 3.8 ms，hier 约 6.9 ms：hier 单独花在 HCCS 上的时间，pipeline 是怎么处理的？
lesson-hier-5-answer = 让它重叠：一个切片在经过 RoCE 时，上一个切片在同一步里经 HCCS 传输，于是服务器内部的时间被隐藏在网络时间之后。

## 6. 混合专家模型的 AlltoAll
lesson-alltoall-title = 混合专家模型（MoE）的 AlltoAll
lesson-alltoall-intro = 每个 NPU 给其他每个 NPU 各有一份不同的数据：token 被送往各自的专家。
lesson-alltoall-1-say = 在混合专家层中，每个 NPU 承载一部分专家，每个 token 都要送到它的专家所在的 NPU。AlltoAll 完成这件事：NPU r 的发送区有发给每个 rank 的一份（本行左半部分）；接收区（右半部分）收集来自每个 rank 的一份。
lesson-alltoall-1-look = NPU0 发送区中发给 rank 3 的那一份。
lesson-alltoall-1-ask = 与 AllReduce 不同，AlltoAll 中有没有加法？
lesson-alltoall-1-answer = 没有。它是纯粹的数据搬运：每一份都从发送方复制一次，送到它唯一的接收方。
lesson-alltoall-2-say = 单机上 HCCL 的 Mesh AlltoAll 一步完成：每个 NPU 通过直连的 HCCS 链路把对应的那份发给每个对端，56 次传输同时进行。
lesson-alltoall-2-look = NPU3 接收区中来自 rank 0 的位置，本步被填上。
lesson-alltoall-2-ask = NPU3 收到的来自 rank 0 的那份，是从哪里来的？
lesson-alltoall-2-answer = 来自 NPU0 发送区的第 3 份——正是上一站的那个单元格。
lesson-alltoall-3-say = 逐对通信算法(Pairwise)用 n − 1 = 7 步完成同样的交换，每步一个对端（没有全连接时 HCCL 使用它）。同时在途的流更少，但要付 7 次时延。
lesson-alltoall-3-look = 排名表中 pairwise 那一行。
lesson-alltoall-3-ask = 在这个全连接拓扑上，数据量 1 MiB 时为什么 mesh 比 pairwise 快约 7 倍？
lesson-alltoall-3-answer = Mesh 在一步内用上每个 NPU 的全部 7 条链路；pairwise 每步只用一条链路，共 7 步。
lesson-alltoall-4-say = 真实的 MoE 流量并不均匀：有些专家很热门。AlltoAllV 发送大小各不相同的数据；缓冲区网格中每对发送方–接收方占一个单元格。
lesson-alltoall-4-look = AlltoAllV 的缓冲区网格。
lesson-alltoall-4-ask = 各份数据大小不均时，由谁决定这一步的耗时？
lesson-alltoall-4-answer = 最忙的链路：数据最大的那一对 NPU。其他的提前完成，然后等待。

## 7. INT8 压缩真正省下和付出的
lesson-int8-title = INT8 压缩真正省下了什么、又付出了什么
lesson-int8-intro = 线上字节减半并不等于时间减半。这是一个假设分析：HCCL 和 NCCL 都没有梯度压缩。
lesson-int8-1-say = 先看基线：单台 910B 服务器上 16 MiB 的 fp16 AllReduce，按 HCCL 的方式运行（mesh）。记下预测时间。
lesson-int8-1-look = 预估：约 236 µs。
lesson-int8-1-ask = 这次运行受带宽限制还是受时延限制？
lesson-int8-1-answer = 受带宽限制：97% 的时间在搬运数据，所以原则上减少字节会有帮助。
lesson-int8-2-say = 现在对每次传输做分块 INT8 压缩（placement=hop）：每 256 个元素的块变成 8 位编码加一个 fp16 缩放因子。HCCL 和 NCCL 都没有这种压缩；这张卡片是假设分析，在 worker 上真实运行，并与它自己的压缩参考结果比对。
lesson-int8-2-look = 压缩卡片：线上字节数、误差和时间。
lesson-int8-2-ask = 线上只传了约一半的字节。为什么预测时间没有减半（约 269 µs，而不压缩是 236 µs）？
lesson-int8-2-answer = 因为每一跳都要编码和解码，这些编解码也要花时间；在快速的 HCCS 链路上，它花掉的时间比省下的字节还多。
lesson-int8-3-say = 声明检查把“INT8 让 AllReduce 时间减半”这样的说法拿到模型和真实运行上检验。
lesson-int8-3-look = 声明检查。
lesson-int8-3-ask = 压缩后的结果相对精确和的误差大约是多少？
lesson-int8-3-answer = 相对 L2 误差约为 0.1–1%：每块 8 位编码；卡片上的数值来自真实运行。
lesson-int8-4-say = placement=once 只对每个 rank 的输入压缩一次，然后收集编码（对压缩数据做 AllGather，再在本地归约）。误差更小，因为不会在每一跳重新量化——但每个 NPU 都要接收其他每个 NPU 的整个缓冲区。
lesson-int8-4-look = placement 为 once 的压缩卡片。
lesson-int8-4-ask = 为什么 once 在这里慢得多（约 1.1 ms）？
lesson-int8-4-answer = n 个压缩缓冲区的 AllGather 搬运的字节约为边传边归约的 AllReduce 的 n/2 倍，而且之后每个 NPU 都要解码并归约全部数据。
lesson-int8-5-say = 跨四台服务器时，慢速的 RoCE 层级承载这些字节，省下的字节与编解码时间之间的平衡随之改变。比较预估中压缩与不压缩的时间。
lesson-int8-5-look = 预估中“使用 int8 压缩 …”那一行。
lesson-int8-5-ask = 压缩究竟在哪里才可能划算？
lesson-int8-5-answer = 只有在网络比编解码慢得多的地方（慢速的 Server间链路、大消息）；在快速链路上，编解码时间会吃掉省下的时间。

## 8. 融合小的 AllReduce
lesson-fusion-title = 融合小的 AllReduce 能换来什么
lesson-fusion-intro = 30 个 64 KiB 的梯度：付 30 次时延，还是 1 次。
lesson-fusion-1-say = 反向传播之后，框架要对每个梯度做 AllReduce。fusion=30x64KiB 且 bucket=0 时会运行 30 次独立的 64 KiB AllReduce。每一次都受时延限制：为很少的字节付出它的各个 α。
lesson-fusion-1-look = 融合卡片：30 个桶，未融合的时间。
lesson-fusion-1-ask = 一次 64 KiB 的 AllReduce 预测约 7.7 µs。30 次依次执行大约要多久？
lesson-fusion-1-answer = 约 30 × 7.7 ≈ 230 µs：同样的时延付了 30 次。
lesson-fusion-2-say = 使用 PyTorch DDP 的分桶（bucket=25MiB），这 30 个张量放进同一个桶：一次 1.88 MiB 的 AllReduce。
lesson-fusion-2-look = 融合卡片：一个桶，融合后的时间。
lesson-fusion-2-ask = 融合后的 AllReduce 搬运同样多的字节。为什么快了好几倍？
lesson-fusion-2-answer = 它只付一次每条消息的时延，而不是 30 次；字节的开销两种方式都一样。
lesson-fusion-3-say = 在图表上，64 KiB 位于曲线左侧陡峭的部分（busbw 低），2 MiB 则高得多：融合把工作移到了链路被充分利用的地方。
lesson-fusion-3-look = 图表中 mesh 曲线在 64 KiB 处。
lesson-fusion-3-ask = 融合有代价吗？
lesson-fusion-3-answer = 有：一个桶要等到它的最后一个梯度就绪，所以通信开始得更晚，与反向传播的重叠更少；这就是 DDP 给桶设上限（25 MiB）而不是把所有东西都融合的原因。
lesson-fusion-4-say = 一个真实模型：Llama-3 8B 的梯度，使用 DDP 的默认分桶（第一个桶 1 MiB、上限 25 MiB、逆序）。
lesson-fusion-4-look = 融合卡片：Llama-3 8B 的桶和时间。
lesson-fusion-4-ask = 张量很大时，融合还能省下同样多吗？
lesson-fusion-4-answer = 少得多：大张量本来就受带宽限制，只有小张量（norm、bias）能从共用一个桶中获益。
