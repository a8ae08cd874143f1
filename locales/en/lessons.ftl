# The guided lessons' words (lessons/*.json holds their stops). Ids:
# lesson-<id>-title, -intro, and per stop k: -<k>-say, -look, -ask, -answer.
# Numbers quoted here are this page's model's: tests/lessons.rs asserts each
# one, in both languages, against the plan of its stop (LESSONS_PRINT=1
# prints the plans).

## 1. What a collective is
lesson-collective-title = What a collective is: AllReduce = ReduceScatter + AllGather
lesson-collective-intro = Four NPUs, one AllReduce, watched chunk by chunk on their buffers.
lesson-collective-1-say = A collective is one call that every rank of a communicator makes together. In AllReduce every NPU starts with its own buffer and must end with the sum of all of them. Each row below is one NPU's buffer, cut into 4 chunks; a cell's colour and its dots say whose contributions the chunk holds.
lesson-collective-1-look = the buffer grid: one row per NPU, one column per chunk.
lesson-collective-1-ask = Before the first step, how many ranks' contributions does each chunk hold?
lesson-collective-1-answer = One: its own rank's. Nothing has moved yet, so every cell has its row's colour and a single dot.
lesson-collective-2-say = Step 1 of the ring: every NPU sends one chunk to the next NPU, which adds it into its own copy. No NPU sends its whole buffer — only a quarter of it.
lesson-collective-2-look = NPU1's chunk 3, which has just received NPU0's part.
lesson-collective-2-ask = Which ranks' contributions does NPU1's chunk 3 hold now?
lesson-collective-2-answer = Ranks 0 and 1: NPU0 sent its chunk 3, NPU1 added it to its own.
lesson-collective-3-say = After 3 steps (n − 1 for n = 4) each NPU holds one chunk that contains everybody's contribution: the darkest colour. That is ReduceScatter: the sum, scattered one chunk per rank.
lesson-collective-3-look = NPU0's chunk 0: complete, reduced over all four ranks.
lesson-collective-3-ask = How many complete chunks are there in the whole grid now, and why that many?
lesson-collective-3-answer = Four, one per NPU: each chunk travelled once around the ring, picking up one contribution per hop, and stopped at its owner.
lesson-collective-4-say = The next 3 steps are an AllGather: each owner's complete chunk is copied around the ring until every NPU has all of them. AllReduce = ReduceScatter + AllGather, 2(n − 1) = 6 steps.
lesson-collective-4-look = the buffer grid at the end: every cell complete.
lesson-collective-4-ask = Copies in the AllGather half: does any NPU add anything any more?
lesson-collective-4-answer = No. The AllGather only copies finished chunks (→ in the step log); all the adding (⇒) happened in the ReduceScatter half.
lesson-collective-5-say = ReduceScatter alone stops after its half: 3 steps, and each NPU keeps only its own reduced chunk. It is a collective in its own right (used for sharded optimiser states, for example).
lesson-collective-5-look = the estimate: the predicted time of this ReduceScatter.
lesson-collective-5-ask = Compare it with the AllReduce of the previous stops (the estimate there said about 26 µs). Why roughly half?
lesson-collective-5-answer = It does one of the two halves: 3 of the 6 steps, the same bytes per step, so about 13 µs.

## 2. Ring: bandwidth-optimal, and where it loses
lesson-ring-title = Ring: bandwidth-optimal, and where it loses (α vs β)
lesson-ring-intro = Eight GPUs in a ring: every link busy, no byte wasted — and 14 latencies in a row.
lesson-ring-1-say = In every step of ring AllReduce each GPU sends 1/8 of its buffer to its successor. All 8 links carry data at once, and over the 14 steps each GPU sends 2(n − 1)/n of its buffer: the least any AllReduce can send. That is why ring is called bandwidth-optimal.
lesson-ring-1-look = the link from GPU0 to GPU1 (through the switch), busy in this step.
lesson-ring-1-ask = How many bytes does each GPU send in total for an AllReduce of S bytes on 8 GPUs?
lesson-ring-1-answer = 2 × 7/8 × S = 1.75 S (7 steps of S/8 in each half). No algorithm can send less per rank.
lesson-ring-2-say = At 256 MiB each step moves 32 MiB, so the time is almost all β (bytes / bandwidth): the estimate says the run is bandwidth-bound. Here ring's busbw is close to what one GPU's links can carry.
lesson-ring-2-look = ring's row in the ranking: its time and busbw.
lesson-ring-2-ask = Ring's busbw here is about 370 GB/s. Why is that called "close to the link speed" even though each GPU sent 1.75 × 256 MiB?
lesson-ring-2-answer = busbw already divides out the 2(n − 1)/n factor (nccl-tests' definition): it is the rate each GPU's link really ran at, about 370 of the 371 GB/s the model gives a GPU.
lesson-ring-3-say = Now the same ring with 64 KiB. Each step moves only 8 KiB, so every step costs mostly its fixed latency α; 14 steps in a row means 14 α's. The estimate calls the run latency-bound.
lesson-ring-3-look = ring's row again, now near the bottom of the ranking.
lesson-ring-3-ask = Why do algorithms with fewer steps beat ring at this size, even though they send as many bytes or more?
lesson-ring-3-answer = Because time ≈ steps × α + bytes × β, and at 64 KiB the α term dominates: 6 steps (rhd, nhr) or 2 (mesh) pay far fewer latencies than ring's 14.
lesson-ring-4-say = The chart shows ring's busbw over every size: flat and low on the left, where α dominates, rising to its plateau on the right, where β does. The crossing of the curves is where the best algorithm changes.
lesson-ring-4-look = ring's curve at 64 KiB on the chart (the ringed point).
lesson-ring-4-ask = From the chart: at which end of the size axis does ring catch up with the others?
lesson-ring-4-answer = At the large end (hundreds of MiB), where every algorithm is bandwidth-bound; at small sizes ring stays far below.

## 3. Halving-doubling and latency
lesson-rhd-title = Recursive halving-doubling (RHD): fewer steps, less latency
lesson-rhd-intro = log2 n steps instead of n − 1: how RHD trades steps for distance.
lesson-rhd-1-say = In the first step of recursive halving each NPU swaps half of its buffer with a partner 4 ranks away (distance n/2), keeping the half it will reduce. Both halves move at once, in both directions.
lesson-rhd-1-look = the link between NPU0 and NPU1 — in this step it is idle: NPU0's partner is NPU4.
lesson-rhd-1-ask = How much of its buffer does each NPU still need to reduce after this step?
lesson-rhd-1-answer = Half. After step 2 a quarter, after step 3 an eighth: the data halves every step.
lesson-rhd-2-say = After log2 8 = 3 steps of halving, each NPU owns one fully reduced chunk — the same ReduceScatter result the ring reached in 7 steps. Three steps of doubling then gather it back.
lesson-rhd-2-look = NPU0's chunk 0: already complete after 3 steps.
lesson-rhd-2-ask = How many steps does the whole RHD AllReduce take on 8 NPUs, against ring's 14?
lesson-rhd-2-answer = 6: 3 halving + 3 doubling (2 log2 n), with the same 1.75 S bytes per NPU as ring.
lesson-rhd-3-say = At 64 KiB, latency dominates, so 6 steps beat 14: the ranking puts rhd well ahead of ring. But on this 910B server it is still not first.
lesson-rhd-3-look = rhd's row in the ranking.
lesson-rhd-3-ask = rhd predicts about 27 µs and ring about 54 µs. Why is rhd not exactly 14/6 times faster?
lesson-rhd-3-answer = Because not all of the time is α: the bytes (β) are the same for both, so only the latency part shrinks by 14/6.
lesson-rhd-4-say = With 6 NPUs — not a power of two — RHD first folds: 2 NPUs hand their data to a partner, the remaining 4 run halving-doubling, and an unfold step returns the result. Extra steps for the odd count.
lesson-rhd-4-look = the step in words: this is the fold step.
lesson-rhd-4-ask = What does NB (Bruck) or NHR do differently for counts that are not powers of two?
lesson-rhd-4-answer = They need no fold: their exchanges at distances 1, 2, 4, … work for any n in ceil(log2 n) steps per phase.

## 4. The 910B full mesh
lesson-mesh-title = The 910B full mesh: why HCCL's mesh wins on one server
lesson-mesh-intro = Eight NPUs, 28 HCCS links: an algorithm that uses one link per NPU wastes six of them.
lesson-mesh-1-say = On an Atlas 800T A2 (910B) server every pair of NPUs has its own HCCS link: a full mesh. Ring uses only the link to its successor — one of each NPU's 7 links. The other 6 sit idle in every step.
lesson-mesh-1-look = the link NPU0 → NPU1: the only one NPU0 uses in this ring step.
lesson-mesh-1-ask = What fraction of NPU0's links does the ring use?
lesson-mesh-1-answer = 1 of 7. Each HCCS link is slow on its own (the model gives 18.3 GB/s per direction, HCCL's own planning figure), so ring leaves most of the server's bandwidth unused.
lesson-mesh-2-say = HCCL's Mesh algorithm sends to every peer at once: in its ReduceScatter step each NPU sends each other NPU the chunk that NPU owns, over all 7 links in parallel. One step per phase.
lesson-mesh-2-look = the link NPU0 – NPU4: busy now too, like every link.
lesson-mesh-2-ask = How many steps does mesh AllReduce take, and how many links does each NPU use in each?
lesson-mesh-2-answer = 2 steps (ReduceScatter, AllGather), and all 7 links in each.
lesson-mesh-3-say = At 256 MiB the ranking shows the gap: mesh predicts about 3.7 ms, ring about 25.8 ms. Same bytes, but mesh spreads them over 7 links at once.
lesson-mesh-3-look = mesh's row at the top of the ranking.
lesson-mesh-3-ask = The gap is about 7×. Where does the 7 come from?
lesson-mesh-3-answer = From the 7 links each NPU drives at once in mesh against 1 in ring (the bytes per NPU are the same).
lesson-mesh-4-say = With algo=auto the page does what HCCL does on one server: level 0 is a full mesh, so it runs Mesh. The chart shows mesh on top at every size on this machine.
lesson-mesh-4-look = mesh's curve at 256 MiB on the chart.
lesson-mesh-4-ask = On an NVIDIA H100 server (NVSwitch) would mesh have the same advantage?
lesson-mesh-4-answer = No: there every GPU has one fat connection to the switches, so ring already uses all of its bandwidth; that is why NCCL runs ring and tree, not mesh.

## 5. Hierarchy across servers
lesson-hier-title = Across servers: hier, hier-nhr, pipeline (RoCE is the slow level)
lesson-hier-intro = Four 910B servers, 32 NPUs: fast HCCS inside each server, slower RoCE between them.
lesson-hier-1-say = topo=910b-4x8 is 4 servers of 8 NPUs. Inside a server (Server内, level 0) NPUs talk over the HCCS full mesh; between servers (Server间, level 1) only over RoCE, much slower per NPU. Opening this link with no ranks= uses all 32 NPUs.
lesson-hier-1-look = the drawing: four server boxes, RoCE lines to the fabric.
lesson-hier-1-ask = Which level should carry as few bytes as possible?
lesson-hier-1-answer = Level 1, the RoCE network between servers: it is the slow one.
lesson-hier-2-say = hier starts inside each server: a mesh ReduceScatter over HCCS, so each NPU holds 1/8 of its server's sum.
lesson-hier-2-look = the HCCS link NPU0 – NPU1 inside server 0.
lesson-hier-2-ask = After this step, how much data does each NPU still have to send between servers?
lesson-hier-2-answer = 1/8 of the buffer: the intra-server step already combined the 8 local contributions.
lesson-hier-3-say = Then a ring between the servers, over RoCE: NPU k of each server talks only to NPU k of the next server, carrying its 1/8 slice. Each NPU uses its own RoCE port, so all 8 ports of a server work in parallel.
lesson-hier-3-look = the RoCE path from NPU0 (server 0) to NPU8 (server 1).
lesson-hier-3-ask = How many inter-server steps does the ring take with 4 servers, per phase?
lesson-hier-3-answer = 3 (servers − 1) for the ReduceScatter, and 3 more for the AllGather.
lesson-hier-4-say = hier-nhr replaces the inter-server ring with NHR (ceil(log2 4) = 2 steps per phase), and pipeline overlaps the RoCE ring with the HCCS mesh in the same steps. The ranking orders them: pipeline, hier-nhr, hier — and flat mesh or ring over all 32 NPUs far behind.
lesson-hier-4-look = hier-nhr's row in the ranking.
lesson-hier-4-ask = Why is flat mesh (every NPU to every NPU) so slow here, though it won on one server?
lesson-hier-4-answer = 24 of each NPU's 31 peers are in other servers, so most of its bytes cross RoCE, and flows share the RoCE ports: the slow level carries almost everything.
lesson-hier-5-say = With auto, HCCL on several servers runs its Pipeline for AllReduce above 1 MiB per rank: the slow RoCE transfers hide the fast HCCS ones. The chart shows pipeline on top at large sizes.
lesson-hier-5-look = pipeline's curve at 256 MiB on the chart.
lesson-hier-5-ask = pipeline about 3.8 ms, hier about 6.9 ms: what does pipeline do with the HCCS time that hier spends separately?
lesson-hier-5-answer = It overlaps it: while a slice crosses RoCE, the previous slice moves over HCCS in the same step, so the server-internal time is hidden behind the network time.

## 6. AlltoAll for mixture-of-experts
lesson-alltoall-title = AlltoAll for mixture-of-experts (MoE)
lesson-alltoall-intro = Every NPU has a different piece for every other NPU: tokens travelling to their experts.
lesson-alltoall-1-say = In a mixture-of-experts layer each NPU hosts some experts, and each token must go to the NPU of its expert. AlltoAll does that: NPU r's send area holds one piece for every rank (left half of its row); its receive area (right half) collects one piece from every rank.
lesson-alltoall-1-look = NPU0's piece for rank 3 in its send area.
lesson-alltoall-1-ask = Unlike AllReduce, does anything get added in an AlltoAll?
lesson-alltoall-1-answer = No. It is pure data movement: every piece is copied once, from its sender to its one receiver.
lesson-alltoall-2-say = HCCL's mesh AlltoAll on one server does it in one step: every NPU sends each peer its piece over their direct HCCS link, all 56 transfers at once.
lesson-alltoall-2-look = NPU3's receive slot for the piece from rank 0, filled in this step.
lesson-alltoall-2-ask = Where did NPU3's piece from rank 0 come from?
lesson-alltoall-2-answer = From NPU0's send area, piece 3 — exactly the cell of the previous stop.
lesson-alltoall-3-say = Pairwise does the same exchange in n − 1 = 7 steps, one peer per step (HCCL uses it when a mesh is not available). Fewer flows at once, but 7 latencies.
lesson-alltoall-3-look = pairwise's row in the ranking.
lesson-alltoall-3-ask = On this full mesh, why is mesh about 7× faster than pairwise at 1 MiB?
lesson-alltoall-3-answer = Mesh drives all 7 links of each NPU in one step; pairwise uses one link per step for 7 steps.
lesson-alltoall-4-say = Real MoE traffic is uneven: some experts are popular. AlltoAllV sends pieces of different sizes; the buffer grid shows one cell per sender–receiver pair.
lesson-alltoall-4-look = the AlltoAllV buffer grid.
lesson-alltoall-4-ask = With uneven pieces, who decides how long the step takes?
lesson-alltoall-4-answer = The busiest link: the NPU pair with the largest piece. The others finish early and wait.

## 7. What INT8 compression really saves and costs
lesson-int8-title = What INT8 compression really saves and costs
lesson-int8-intro = Half the bytes on the wire is not half the time. A what-if: HCCL and NCCL have no gradient compression.
lesson-int8-1-say = First the baseline: an fp16 AllReduce of 16 MiB on one 910B server, as HCCL runs it (mesh). Note the predicted time.
lesson-int8-1-look = the estimate: about 236 µs.
lesson-int8-1-ask = Is this run bandwidth-bound or latency-bound?
lesson-int8-1-answer = Bandwidth-bound: 97% of its time is moving data, so fewer bytes could help — in principle.
lesson-int8-2-say = Now block INT8 compression on every transfer (placement=hop): each 256-element block becomes 8-bit codes plus one fp16 scale. HCCL and NCCL have no such compression; this card is a what-if, run for real on the workers and checked against its own compressed reference.
lesson-int8-2-look = the compression card: wire bytes, error and time.
lesson-int8-2-ask = The wire carries about half the bytes. Why is the predicted time not halved (about 269 µs against 236 µs)?
lesson-int8-2-answer = Because every hop must encode and decode, and that codec work costs time too; on fast HCCS links it costs more than the bytes it saves.
lesson-int8-3-say = The claim check takes a sentence such as "INT8 halves AllReduce time" and checks it against the model and the run.
lesson-int8-3-look = the claim check.
lesson-int8-3-ask = What is the error of the compressed result against the exact sum, roughly?
lesson-int8-3-answer = A relative L2 error of about 0.1–1 %: 8-bit codes per block; the card reports it from the real run.
lesson-int8-4-say = placement=once compresses each rank's input once and gathers the codes (an AllGather of compressed data, then a local reduce). Less error, because nothing is re-quantised at every hop — but every NPU receives every other NPU's whole buffer.
lesson-int8-4-look = the compression card with placement once.
lesson-int8-4-ask = Why is once so much slower here (about 1.1 ms)?
lesson-int8-4-answer = An AllGather of n compressed buffers moves about n/2 times the bytes of a reduce-as-you-go AllReduce, and then every NPU decodes and reduces all of them.
lesson-int8-5-say = Across four servers the slow RoCE level carries the bytes, so the balance between bytes saved and codec time shifts. Compare the estimate's compressed and uncompressed times.
lesson-int8-5-look = the estimate's line "With int8 compression …".
lesson-int8-5-ask = Where can compression pay off at all?
lesson-int8-5-answer = Only where the network is slow compared with the codec (a slow inter-server link, a large message); on fast links the encode/decode time eats the saving.

## 8. Fusing small AllReduces
lesson-fusion-title = What fusing small AllReduces buys
lesson-fusion-intro = Thirty 64 KiB gradients: thirty latencies, or one.
lesson-fusion-1-say = After a backward pass a framework must AllReduce every gradient. fusion=30x64KiB with bucket=0 runs 30 separate AllReduces of 64 KiB. Each one is latency-bound: it pays its α's for very few bytes.
lesson-fusion-1-look = the fusion card: 30 buckets, the unfused time.
lesson-fusion-1-ask = One 64 KiB AllReduce is predicted at about 7.7 µs. About how long do 30 take, one after another?
lesson-fusion-1-answer = About 30 × 7.7 ≈ 230 µs: 30 times the same latencies.
lesson-fusion-2-say = With PyTorch DDP's bucketing (bucket=25MiB) the 30 tensors go into one bucket: one AllReduce of 1.88 MiB.
lesson-fusion-2-look = the fusion card: one bucket, the fused time.
lesson-fusion-2-ask = The fused AllReduce moves the same bytes. Why is it several times faster?
lesson-fusion-2-answer = It pays the per-message latency once instead of 30 times; the bytes cost the same either way.
lesson-fusion-3-say = On the chart, 64 KiB sits on the steep left part of the curve (low busbw), 2 MiB much higher: fusing moves the work to where the links are used well.
lesson-fusion-3-look = mesh's curve at 64 KiB on the chart.
lesson-fusion-3-ask = Is there a price for fusing?
lesson-fusion-3-answer = Yes: a bucket waits until its last gradient is ready, so the communication starts later and overlaps less with the backward pass; that is why DDP caps buckets (25 MiB) rather than fusing everything.
lesson-fusion-4-say = A real model: Llama-3 8B's gradients with DDP's default buckets (1 MiB first bucket, 25 MiB cap, reverse order).
lesson-fusion-4-look = the fusion card: buckets and times for Llama-3 8B.
lesson-fusion-4-ask = With large tensors, does fusing still save as much?
lesson-fusion-4-answer = Much less: big tensors are already bandwidth-bound, so only the small ones (norms, biases) gain from sharing a bucket.
