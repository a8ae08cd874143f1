# Every animation step in words (src/ui/describe.rs): what happens, and why
# the step exists in its algorithm. $device is NPU (Ascend), GPU (NVIDIA) or
# rank.

step-before-head = Before step 1 of { $total } — { $op }:
step-head = Step { $step } of { $total } — { $phase }:
step-intro = { $op } on { $n } { $device }s with { $algo }: { $what }
phase-intra = intra-server
phase-inter = inter-server
phase-chain = (chain)
phase-binomial = (binomial)

## Where each primitive starts ($chunks, $root)
start-allreduce = every { $device } holds its own input in all { $chunks } chunks; chunk b is the block that rank b reduces first.
start-reducescatter = every { $device } holds its own input in all { $chunks } chunks; chunk b is the block that rank b ends up owning.
start-allgather = each { $device } holds only its own chunk (chunk r on { $device } r); the other chunks are empty.
start-barrier = each { $device } holds only its own token; the others are empty.
start-reduce = every { $device } holds its own input in all { $chunks } chunks.
start-broadcast = only the root { $device }{ $root } holds data; the others are empty.
start-scatter = only the root { $device }{ $root } holds data; the others are empty.
start-gather = each { $device } holds only its own chunk (chunk r on { $device } r).
start-alltoall = each { $device } holds its send area: one piece for every rank (left half); the receive area (right half) is empty.
start-alltoallv = each { $device } holds its send area: one piece of its own size for every rank (left half); the receive area (right half) is empty.
start-sendrecv = each { $device } holds its send block; its receive block is empty.

## Where each primitive ends
goal-allreduce = Goal: every { $device } ends with every chunk reduced over all ranks.
goal-reducescatter = Goal: { $device } r ends with chunk r reduced over all ranks.
goal-allgather = Goal: every { $device } ends with every rank's chunk.
goal-barrier = Goal: no { $device } leaves before every { $device } has arrived (every { $device } hears from every other; no data).
goal-broadcast = Goal: every { $device } ends with { $device }{ $root }'s buffer.
goal-reduce = Goal: { $device }{ $root } ends with every chunk reduced over all ranks.
goal-scatter = Goal: { $device } r ends with chunk r of { $device }{ $root }'s buffer.
goal-gather = Goal: { $device }{ $root } ends with every rank's chunk.
goal-alltoall = Goal: { $device } r ends with every rank's piece for r in its receive area.
goal-alltoallv = Goal: { $device } r ends with every rank's piece for r in its receive area.
goal-sendrecv = Goal: { $device } r ends with { $device } r-1's send block in its receive block.

done-allreduce = Done: every { $device } holds every chunk reduced over all ranks.
done-reducescatter = Done: { $device } r holds chunk r reduced over all ranks (the other chunks are scratch).
done-allgather = Done: every { $device } holds every rank's chunk.
done-other = Done: { $op } complete.

## One transfer group in words
chunk-one = chunk { $first }
chunk-range = chunks { $first }–{ $last }
list-two = { $a } and { $b }
list-sep = {", "}
others-all = all { $n } other { $device }s
holds-every = every rank's contribution
holds-one = rank { $r }'s contribution
holds-ranks = ranks { $ranks }
holds-nothing = nothing yet
verb-sum = adds it into its own copy
verb-prod = multiplies it into its own copy
verb-max = keeps the element-wise maximum of it and its own copy
verb-min = keeps the element-wise minimum of it and its own copy
verb-avg = adds it (already scaled by 1/n) into its own copy
say-reduce = { $src } sends { $chunks }, which already holds { $before }, to { $dst }, which { $verb } (now { $after }).
say-reduce-many = { $srcs } send { $chunks } to { $dst } one after another{ $inorder }; { $dst } { $verb } each time (now { $after }).
in-rank-order = , in rank order
say-copy = { $src } sends { $chunks }, which holds { $before }, to { $dst }, which stores it.
say-copy-many = { $src } sends { $chunks }, which holds { $before }, to { $dsts }, which each store it.

## Why this step exists ($phase: rs, ag, fold, unfold, spread, collect, a2a, barrier, inter, intra, sendrecv, other)
why-label = Why:
why-ring = { $phase ->
    [rs] Ring ReduceScatter: each { $device } passes one chunk to its successor, which adds its own part; after { $n } − 1 such steps every chunk has visited every { $device } once. Every link carries 1/{ $n } of the data per step, so no link idles and nobody sends more than the minimum.
    [ag] Ring AllGather: each finished chunk travels on round the ring and is copied, one hop per step, until all { $n } { $device }s hold it — another { $n } − 1 steps of 1/{ $n } of the data.
    [barrier] Ring Barrier: a token goes round the ring; nobody can leave before it has passed everyone.
   *[other] A ring only ever talks to its neighbour: many cheap steps, each moving a small part of the data.
}
why-mesh = { $phase ->
    [rs] Mesh ReduceScatter (HCCL's full-mesh algorithm): every { $device } sends each peer the chunk that peer owns, all at once over its { $n } − 1 direct links, and each owner reduces what it receives. One step instead of { $n } − 1: one α, and every link busy.
    [ag] Mesh AllGather: every owner sends its finished chunk to all { $n } − 1 peers at once over the direct links. On a full mesh this is one step.
    [a2a] Mesh AlltoAll: every { $device } sends every peer its piece at once, each over its own direct link; one step.
    [spread] The root sends to every peer at once over its direct links.
    [collect] Every peer sends to the root at once over its direct links.
   *[other] Full mesh: every { $device } talks to every peer in the same step, which pays one α and uses every direct link.
}
why-rhd = { $phase ->
    [rs] Recursive halving: each { $device } swaps half of what it still reduces with a partner at distance 2^k and keeps the other half. log2 { $n } steps instead of { $n } − 1: far fewer α's, the same bytes as ring.
    [ag] Recursive doubling: partners swap everything they have, doubling it each step, until every { $device } holds every reduced chunk.
    [fold] The count is not a power of two: the extra { $device }s first hand their data to a partner (fold), so the rest is a power of two.
    [unfold] Unfold: the partners hand the result back to the { $device }s folded out at the start.
   *[other] Halving-doubling: log2 { $n } steps per phase, exchanging with a partner at distance 2^k.
}
why-tree = { $phase ->
    [spread] Binomial tree: every { $device } that already has the data forwards it to one new { $device }, so the holders double each step (log2 { $n } steps).
    [collect] Binomial tree: half of the { $device }s hand their (partial) result to a partner each step, so after log2 { $n } steps the root has it all.
   *[other] Binomial tree: the number of holders doubles (or halves) every step.
}
why-star = The root exchanges with every other { $device } in this one step; simple, but the root's links carry everything.
why-pairwise = Pairwise AlltoAll: in step k each { $device } sends to the peer k places ahead and receives from k places behind — one peer per step, so no link is shared.
why-nb = { $phase ->
    [a2a] Bruck AlltoAll: pieces are forwarded at distances 1, 2, 4, …, so log2 { $n } steps suffice, at the cost of sending some data more than once.
   *[other] Bruck / NB (HCCL's nonuniform Bruck): at distances 1, 2, 4, … every { $device } sends what it has gathered so far; ceil(log2 { $n }) steps for any count.
}
why-dbtree = Double binary tree (NCCL): two trees, each carrying half of the data, reduce up to the root and broadcast back down; every { $device } is a leaf in one tree, so no link carries everything.
why-hier = { $phase ->
    [intra] Server内 (level 0, HCCS full mesh): the 8 { $device }s of each server exchange at once over their fast direct links.
    [inter] Server间 (level 1, RoCE): only one { $device } per server slice crosses the slow network, carrying 1/8 of the data — the hierarchy sends over RoCE only what must leave the server.
   *[other] Hierarchy: fast intra-server steps around slow inter-server steps.
}
why-hier-nhr = { $phase ->
    [intra] Server内 (level 0, HCCS full mesh): the 8 { $device }s of each server exchange at once over their fast direct links.
    [inter] Server间 (level 1, RoCE) with NHR: ceil(log2 servers) steps instead of servers − 1, so fewer inter-server latencies.
   *[other] Hierarchy with NHR between the servers.
}
why-nhr = NHR (nonuniform hierarchical ring): exchanges at growing distances so any { $n } needs only ceil(log2 { $n }) steps per phase, while each { $device } still sends (n − 1)/n of the data in all.
why-pipeline = HCCL Pipeline: the inter-server ring (RoCE) and the intra-server mesh (HCCS) work in the same steps, so the slow level's time hides the fast level's.
