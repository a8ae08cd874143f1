# 用文字描述每一步动画（src/ui/describe.rs）：发生了什么，以及这一步在通信算法中
# 为什么存在。$device 为 NPU（昇腾）、GPU（NVIDIA）或 rank。

step-before-head = 第 1 步之前，共 { $total } 步 — { $op }：
step-head = 第 { $step } 步，共 { $total } 步 — { $phase }：
step-intro = { $n } 个 { $device } 上用 { $algo } 执行 { $op }：{ $what }
phase-intra = Server内
phase-inter = Server间
phase-chain = （链）
phase-binomial = （二项树）

## Where each primitive starts
start-allreduce = 每个 { $device } 的全部 { $chunks } 个数据块都是自己的输入；数据块 b 是 rank b 最先归约的那一块。
start-reducescatter = 每个 { $device } 的全部 { $chunks } 个数据块都是自己的输入；数据块 b 最终归 rank b 所有。
start-allgather = 每个 { $device } 只有自己的数据块（{ $device } r 上的数据块 r）；其余数据块为空。
start-barrier = 每个 { $device } 只有自己的令牌；其余为空。
start-reduce = 每个 { $device } 的全部 { $chunks } 个数据块都是自己的输入。
start-broadcast = 只有根节点 { $device }{ $root } 有数据；其余为空。
start-scatter = 只有根节点 { $device }{ $root } 有数据；其余为空。
start-gather = 每个 { $device } 只有自己的数据块（{ $device } r 上的数据块 r）。
start-alltoall = 每个 { $device } 的发送区里有发给每个 rank 的一份数据（左半部分）；接收区（右半部分）为空。
start-alltoallv = 每个 { $device } 的发送区里有发给每个 rank 的、大小各不相同的一份数据（左半部分）；接收区（右半部分）为空。
start-sendrecv = 每个 { $device } 有自己的发送块；接收块为空。

## Where each primitive ends
goal-allreduce = 目标：每个 { $device } 最终拥有全部数据块，且每块都在所有 rank 上完成归约。
goal-reducescatter = 目标：{ $device } r 最终拥有在所有 rank 上归约完成的数据块 r。
goal-allgather = 目标：每个 { $device } 最终拥有每个 rank 的数据块。
goal-barrier = 目标：在所有 { $device } 都到达之前，没有 { $device } 离开（每个 { $device } 都收到其他所有 { $device } 的消息；不传数据）。
goal-broadcast = 目标：每个 { $device } 最终拥有 { $device }{ $root } 的缓冲区。
goal-reduce = 目标：{ $device }{ $root } 最终拥有全部数据块，且每块都在所有 rank 上完成归约。
goal-scatter = 目标：{ $device } r 最终拥有 { $device }{ $root } 缓冲区中的数据块 r。
goal-gather = 目标：{ $device }{ $root } 最终拥有每个 rank 的数据块。
goal-alltoall = 目标：{ $device } r 的接收区最终拥有每个 rank 发给 r 的那份数据。
goal-alltoallv = 目标：{ $device } r 的接收区最终拥有每个 rank 发给 r 的那份数据。
goal-sendrecv = 目标：{ $device } r 的接收块最终拥有 { $device } r-1 的发送块。

done-allreduce = 完成：每个 { $device } 都拥有全部数据块，且每块都在所有 rank 上完成归约。
done-reducescatter = 完成：{ $device } r 拥有在所有 rank 上归约完成的数据块 r（其他数据块是临时空间）。
done-allgather = 完成：每个 { $device } 都拥有每个 rank 的数据块。
done-other = 完成：{ $op } 结束。

## One transfer group in words
chunk-one = 数据块 { $first }
chunk-range = 数据块 { $first }–{ $last }
list-two = { $a } 和 { $b }
list-sep = 、
others-all = 其他全部 { $n } 个 { $device }
holds-every = 所有 rank 的贡献
holds-one = rank { $r } 的贡献
holds-ranks = rank { $ranks } 的贡献
holds-nothing = 尚无内容
verb-sum = 将其累加到自己的副本上
verb-prod = 将其乘到自己的副本上
verb-max = 对它和自己的副本逐元素取最大值
verb-min = 对它和自己的副本逐元素取最小值
verb-avg = 将其（已乘以 1/n）累加到自己的副本上
say-reduce = { $src } 把 { $chunks }（已含 { $before }）发给 { $dst }，{ $dst } { $verb }（现含 { $after }）。
say-reduce-many = { $srcs } 依次{ $inorder }把 { $chunks } 发给 { $dst }；{ $dst } 每次都{ $verb }（现含 { $after }）。
in-rank-order = 按 rank 顺序
say-copy = { $src } 把 { $chunks }（含 { $before }）发给 { $dst }，{ $dst } 将其保存。
say-copy-many = { $src } 把 { $chunks }（含 { $before }）发给 { $dsts }，各自将其保存。

## Why this step exists
why-label = 为什么：
why-ring = { $phase ->
    [rs] 环(Ring)算法的 ReduceScatter：每个 { $device } 把一个数据块传给下一个，后者把自己的那份归约进去；经过 { $n } − 1 步，每个数据块都恰好经过每个 { $device } 一次。每步每条链路只传 1/{ $n } 的数据，没有链路空闲，也没有人多发一个字节。
    [ag] 环(Ring)算法的 AllGather：每个已完成的数据块沿环继续传递并被复制，每步一跳，直到全部 { $n } 个 { $device } 都拥有它——又是 { $n } − 1 步，每步 1/{ $n } 的数据。
    [barrier] 环(Ring)算法的 Barrier：令牌沿环走一圈；在它经过所有人之前，谁都不能离开。
   *[other] 环只和相邻的节点通信：通信步数多，每步只传一小部分数据。
}
why-mesh = { $phase ->
    [rs] 全连接(Full Mesh)的 ReduceScatter（HCCL 的 Mesh 算法）：每个 { $device } 通过自己的 { $n } − 1 条直连链路，同时把每个对端负责的数据块发给它，由负责者归约。一步代替 { $n } − 1 步：只付一次 α，且所有链路同时在用。
    [ag] 全连接(Full Mesh)的 AllGather：每个负责者同时通过直连链路把完成的数据块发给全部 { $n } − 1 个对端。在全连接拓扑上只需一步。
    [a2a] 全连接(Full Mesh)的 AlltoAll：每个 { $device } 同时把每份数据经各自的直连链路发给对应的对端；一步完成。
    [spread] 根节点通过直连链路同时发给每个对端。
    [collect] 每个对端通过直连链路同时发给根节点。
   *[other] 全连接(Full Mesh)：每个 { $device } 在同一步里与所有对端通信，只付一次 α，并用上每条直连链路。
}
why-rhd = { $phase ->
    [rs] 递归二分（递归二分和倍增算法(RHD)）：每个 { $device } 与距离 2^k 的伙伴交换自己仍在归约的数据的一半，保留另一半。log2 { $n } 步代替 { $n } − 1 步：α 少得多，字节数与环相同。
    [ag] 递归倍增：伙伴之间交换各自拥有的全部数据，每步翻倍，直到每个 { $device } 拥有全部归约好的数据块。
    [fold] rank 数不是 2 的幂：多出来的 { $device } 先把数据交给伙伴（折叠），使其余的个数成为 2 的幂。
    [unfold] 展开：伙伴把结果交还给一开始被折叠出去的 { $device }。
   *[other] 递归二分和倍增算法(RHD)：每个阶段 log2 { $n } 步，与距离 2^k 的伙伴交换。
}
why-tree = { $phase ->
    [spread] 二项树：每个已有数据的 { $device } 再转发给一个新的 { $device }，拥有者每步翻倍（log2 { $n } 步）。
    [collect] 二项树：每步有一半 { $device } 把（部分）结果交给伙伴，log2 { $n } 步之后根节点拥有全部结果。
   *[other] 二项树：拥有数据的节点数每步翻倍（或减半）。
}
why-star = 根节点在这一步里与其他每个 { $device } 交换；简单，但根节点的链路要承载全部数据。
why-pairwise = 逐对通信算法(Pairwise)：第 k 步每个 { $device } 发给前方第 k 个对端、从后方第 k 个接收——每步只有一个对端，因此没有链路被共享。
why-nb = { $phase ->
    [a2a] Bruck AlltoAll：数据按距离 1、2、4、… 转发，log2 { $n } 步即可，代价是部分数据被发送不止一次。
   *[other] 非均匀的数据块通信算法(NB)（Bruck）：在距离 1、2、4、… 上，每个 { $device } 发送目前已收集到的数据；任意 rank 数都只需 ceil(log2 { $n }) 步。
}
why-dbtree = 双二叉树（NCCL）：两棵树各承载一半数据，先向根归约、再向下广播；每个 { $device } 在其中一棵树里是叶子，因此没有链路承载全部数据。
why-hier = { $phase ->
    [intra] Server内（level0，HCCS 全连接）：每台服务器的 8 个 { $device } 通过快速的直连链路同时交换。
    [inter] Server间（level1，RoCE）：每台服务器中每份切片只有一个 { $device } 走慢速网络，只带 1/8 的数据——分层算法只把必须离开服务器的数据送上 RoCE。
   *[other] 分层：快速的 Server内步骤包围慢速的 Server间步骤。
}
why-hier-nhr = { $phase ->
    [intra] Server内（level0，HCCS 全连接）：每台服务器的 8 个 { $device } 通过快速的直连链路同时交换。
    [inter] Server间（level1，RoCE）使用非均衡的层次环算法(NHR)：ceil(log2 服务器数) 步代替 服务器数 − 1 步，Server间时延更少。
   *[other] 分层算法，Server间使用 NHR。
}
why-nhr = 非均衡的层次环算法(NHR)：在逐渐增大的距离上交换，任意 { $n } 都只需每阶段 ceil(log2 { $n }) 步，而每个 { $device } 总共仍只发送 (n − 1)/n 的数据。
why-pipeline = 流水线并行算法(Pipeline)：Server间的环（RoCE）和 Server内的 Mesh（HCCS）在同一些步骤中同时工作，慢速层级的时间掩盖了快速层级的时间。
