//! HCCL's hierarchical decomposition for multi-server Atlas A2 clusters
//! (hccl `docs/en/user_guide/coll_algo_intro/` "level0 / level1": intra-server
//! (level0) Mesh over HCCS, inter-server (level1) algorithm over RoCE; also
//! `docs/hardware-and-algorithms.md`, "Hierarchical
//! decomposition on A2").
//!
//! `n = 8·S` ranks, rank `r = 8s + l` is NPU `l` of server `s`. The buffer's
//! `n` blocks are split into 8 *parts*, one per local index `l`, of `S`
//! blocks each: for AllReduce part `l` is the contiguous blocks
//! `l·S .. l·S + S`; for ReduceScatter and AllGather it is the blocks
//! `s·8 + l` (`s = 0..S`), so that rank `r` ends up owning block `r`.
//! - AllReduce: intra-server Mesh ReduceScatter (rank `(s, l)` receives part
//!   `l` from its 7 server peers), inter-server AllReduce among the `S`
//!   ranks `(·, l)` on part `l` by the level1 algorithm ([`Level1`]: ring,
//!   `hier`; or NHR, `hier-nhr`, HCCL's default from 4 servers) over the
//!   `S` blocks of the part, intra-server Mesh AllGather of part `l`.
//! - ReduceScatter: intra-server Mesh ReduceScatter, then inter-server
//!   (level1) ReduceScatter of part `l`.
//! - AllGather: inter-server (level1) AllGather of part `l`, then
//!   intra-server Mesh AllGather.
//!
//! - Broadcast (root `(sr, lr)`, parts contiguous as for AllReduce): intra-server
//!   Scatter (the root sends part `l` to NPU `l` of its server), inter-server
//!   Broadcast of part `l` among the ranks `(·, l)` along a binomial tree
//!   rooted at server `sr` (MPICH's binomial Broadcast), intra-server
//!   AllGather in every server. This is HCCL's documented decomposition
//!   (`docs/hardware-and-algorithms.md`: "Broadcast = intra
//!   Scatter -> inter Broadcast -> intra AllGather"); the binomial inter
//!   level is our choice among HCCL's level-1 algorithms.
//! - Reduce, the mirror image: intra-server ReduceScatter, inter-server
//!   binomial Reduce of part `l` to server `sr`, intra-server Gather of the
//!   8 parts at the root.
//! - Scatter (HCCL has no hierarchical Scatter note; this is the same
//!   two-level idea): the root hands NPU `l` of its server the blocks
//!   `8s + l` of lane `l` (intra-server, `S'` blocks each), then each sends
//!   block `8s + l` straight to `(s, l)` (inter-server, one step). Gather is
//!   Scatter reversed (HCCL has no Gather at all).
//!
//! Only `1/8` of the data crosses the inter-server network per rank, which
//! is why HCCL uses it on A2: bandwidth-optimal when RoCE is the bottleneck.
//!
//! Cost (uncontended, one α and β for every link, `B` bytes, `S` servers):
//! AllReduce `2α + 2·B/8·β + 7/8·Bγ + 2(S-1)(α + B/n·β) + (S-1)·B/n·γ`;
//! ReduceScatter `α + B/8·β + 7/8·Bγ + (S-1)(α + B/n·(β + γ))`;
//! AllGather `α + B/8·β + (S-1)(α + B/n·β)` with the ring; with NHR
//! between servers the `(S-1)` inter-server latencies become `ceil(log2 S)`
//! (the data terms are the same); with `D = ceil(log2 S)`:
//! Broadcast `(2 + D)(α + B/8·β)`; Reduce `(2 + D)(α + B/8·β) + (7 +
//! D)·B/8·γ`; Scatter and Gather `α + B/8·β + [S > 1](α + B/n·β)`.
//! (ReduceScatter, AllGather, Scatter and Gather send a part's `S` blocks
//! as `S` messages sharing one link: same data term, but a reduce may start
//! before all of them arrived.)

use super::step;
use super::{CostTerms, Lazy, LazyIter, StepIter};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer, TransferKind};

/// NPUs per server (Atlas 800T A2).
pub const PER_SERVER: usize = 8;

/// The inter-server (level1) algorithm of AllReduce, ReduceScatter and
/// AllGather (HCCL_ALGO's `level1:ring` / `level1:NHR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level1 {
    /// Ring between the servers (`hier`): `m - 1` steps per phase.
    Ring,
    /// NHR between the servers (`hier-nhr`): `ceil(log2 m)` steps per phase.
    Nhr,
}

/// The hierarchical steps for `primitive` on `n = 8·S` ranks with root
/// `root` (rooted primitives only) and the chunk count (one chunk per
/// block). AllReduce, ReduceScatter, AllGather with `level1` between the
/// servers; Broadcast, Reduce, Scatter, Gather (their own inter-server
/// forms, `level1` ignored).
pub fn steps(primitive: Primitive, n: usize, root: usize, level1: Level1) -> (usize, Vec<Step>) {
    let (chunks, s) = stream(primitive, n, root, level1);
    (chunks, s.collect())
}

/// [`steps`], each step made when the iterator reaches it (the level1
/// schedule is itself streamed, one flat step per lane-wise step).
pub fn stream(primitive: Primitive, n: usize, root: usize, level1: Level1) -> (usize, StepIter) {
    let (chunks, s) = stream_lazy(primitive, n, root, level1);
    (chunks, Box::new(s.map(Lazy::make)))
}

/// [`stream`], the level1 steps as their level1 algorithm hands them out
/// ([`super::ring::stream_lazy`]: a repeat of the previous step's traffic;
/// [`super::nhr::stream_lazy`]: a shift, which run in every lane at once
/// is a shift by `8·d` over all ranks), so the cost model's bound makes
/// none of them on many servers (8 192 ranks: 1 024 servers).
pub fn stream_lazy(
    primitive: Primitive,
    n: usize,
    root: usize,
    level1: Level1,
) -> (usize, LazyIter) {
    if primitive.rooted() {
        return (
            n,
            Box::new(rooted(primitive, n, root).into_iter().map(Lazy::Made)),
        );
    }
    let g = PER_SERVER;
    let servers = n / g;
    let contiguous = primitive == Primitive::AllReduce;
    // Block `i` (0..servers) of part `l`.
    let block = move |l: usize, i: usize| {
        if contiguous {
            l * servers + i
        } else {
            i * g + l
        }
    };
    // Transfers of part `l` from `src` to `dst`, appended to `t`.
    let part =
        move |t: &mut Vec<Transfer>, src: usize, dst: usize, l: usize, kind: TransferKind| {
            if contiguous {
                t.push(Transfer {
                    kind,
                    ..Transfer::copy(src, dst, block(l, 0), servers)
                });
            } else {
                t.extend((0..servers).map(|i| Transfer {
                    kind,
                    ..Transfer::copy(src, dst, block(l, i), 1)
                }));
            }
        };
    // One transfer a part if it is contiguous, else one a block.
    let per_part = if contiguous { 1 } else { servers };
    let intra = move |kind: TransferKind, name: &str| {
        let mut t = Vec::with_capacity(servers * g * (g - 1) * per_part);
        for s in 0..servers {
            for dst_l in 0..g {
                for src_l in (0..g).filter(|&x| x != dst_l) {
                    // RS: dst receives its own part; AG: src sends its own part.
                    let l = if kind == TransferKind::Reduce {
                        dst_l
                    } else {
                        src_l
                    };
                    part(&mut t, s * g + src_l, s * g + dst_l, l, kind);
                }
            }
        }
        step(name, t)
    };
    // The level1 algorithm's own schedule over the `servers` blocks of a
    // part (one chunk per block), run in every lane `l` at once: its rank
    // `i` is NPU `l` of server `i`, its block `b` the part's block `b`.
    let lanes = move |st: &Step, name: &str| {
        // Sized up front: 65 536 transfers a step at 1024 ranks, grown by
        // doubling they were copied ~16 times over.
        let blocks: usize = if contiguous {
            st.transfers.len()
        } else {
            st.transfers.iter().map(|x| x.count).sum()
        };
        let mut t = Vec::with_capacity(g * blocks);
        for l in 0..g {
            for x in &st.transfers {
                let (src, dst) = (x.src * g + l, x.dst * g + l);
                if contiguous {
                    t.push(Transfer {
                        kind: x.kind,
                        ..Transfer::copy(src, dst, block(l, x.first), x.count)
                    });
                } else {
                    t.extend((x.first..x.first + x.count).map(|b| Transfer {
                        kind: x.kind,
                        ..Transfer::copy(src, dst, block(l, b), 1)
                    }));
                }
            }
        }
        step(&format!("inter-server {} ({name})", st.phase), t)
    };
    let inter = move |p: Primitive| -> LazyIter {
        if servers < 2 {
            return Box::new(std::iter::empty());
        }
        let (name, flat) = match level1 {
            Level1::Ring => ("ring", super::ring::stream_lazy(p, servers, 0).1),
            Level1::Nhr => ("NHR", super::nhr::stream_lazy(p, servers, 0).1),
        };
        Box::new(flat.map(move |x| match x {
            Lazy::Made(st) => Lazy::Made(lanes(&st, name)),
            // The lanes' traffic is a function of the flat traffic.
            Lazy::Repeat(f) => Lazy::Repeat(Box::new(move || lanes(&f(), name))),
            Lazy::Shift {
                ranks,
                shift,
                count,
                width,
                make,
            } => Lazy::Shift {
                ranks: ranks * g,
                shift: shift * g,
                count,
                // Contiguous parts keep the runs; else one transfer a block.
                width: if contiguous {
                    g * width
                } else {
                    g * ranks * count
                },
                make: Box::new(move || lanes(&make(), name)),
            },
            Lazy::Exchange { make, .. } => Lazy::Made(lanes(&make(), name)),
        }))
    };
    use std::iter::once_with;
    let rs = move || Lazy::Made(intra(TransferKind::Reduce, "intra-server ReduceScatter"));
    let ag = move || Lazy::Made(intra(TransferKind::Copy, "intra-server AllGather"));
    let steps: LazyIter = match primitive {
        Primitive::AllGather => Box::new(inter(Primitive::AllGather).chain(once_with(ag))),
        Primitive::ReduceScatter => Box::new(once_with(rs).chain(inter(Primitive::ReduceScatter))),
        _ => Box::new(
            once_with(rs)
                .chain(inter(Primitive::AllReduce))
                .chain(once_with(ag)),
        ),
    };
    (n, steps)
}

/// `ceil(log2 m)`: the steps of a binomial tree over `m` servers.
pub fn tree_depth(m: usize) -> usize {
    m.next_power_of_two().trailing_zeros() as usize
}

/// The rooted forms on `n = 8·m` ranks, root `(sr, lr)`; part `l` is the
/// contiguous blocks `l·m .. l·m + m` (Broadcast, Reduce) and the blocks
/// `8s + l` of lane `l` (Scatter, Gather).
fn rooted(primitive: Primitive, n: usize, root: usize) -> Vec<Step> {
    let g = PER_SERVER;
    let m = n / g;
    let (sr, lr) = (root / g, root % g);
    let rank = |s: usize, l: usize| s * g + l;
    let part = |src: usize, dst: usize, l: usize| Transfer::copy(src, dst, l * m, m);
    // Server `s` at distance `v` from the root's server.
    let server = |v: usize| (sr + v) % m;
    let mut steps = Vec::new();
    match primitive {
        Primitive::Broadcast => {
            steps.push(step(
                "intra-server Scatter",
                (0..g)
                    .filter(|&l| l != lr)
                    .map(|l| part(root, rank(sr, l), l))
                    .collect(),
            ));
            let mut d = 1;
            while d < m {
                let mut t = Vec::new();
                for v in (0..d).filter(|v| v + d < m) {
                    for l in 0..g {
                        t.push(part(rank(server(v), l), rank(server(v + d), l), l));
                    }
                }
                steps.push(step("inter-server Broadcast (binomial)", t));
                d *= 2;
            }
            let mut t = Vec::new();
            for s in 0..m {
                for l in 0..g {
                    for p in (0..g).filter(|&p| p != l) {
                        t.push(part(rank(s, l), rank(s, p), l));
                    }
                }
            }
            steps.push(step("intra-server AllGather", t));
        }
        Primitive::Reduce => {
            let mut t = Vec::new();
            for s in 0..m {
                for l in 0..g {
                    for p in (0..g).filter(|&p| p != l) {
                        t.push(Transfer {
                            kind: TransferKind::Reduce,
                            ..part(rank(s, p), rank(s, l), l)
                        });
                    }
                }
            }
            steps.push(step("intra-server ReduceScatter", t));
            let mut d = m.next_power_of_two() / 2;
            while d >= 1 {
                let mut t = Vec::new();
                for v in (d..(2 * d).min(m)).filter(|&v| v < m) {
                    for l in 0..g {
                        t.push(Transfer {
                            kind: TransferKind::Reduce,
                            ..part(rank(server(v), l), rank(server(v - d), l), l)
                        });
                    }
                }
                steps.push(step("inter-server Reduce (binomial)", t));
                d /= 2;
            }
            steps.push(step(
                "intra-server Gather",
                (0..g)
                    .filter(|&l| l != lr)
                    .map(|l| part(rank(sr, l), root, l))
                    .collect(),
            ));
        }
        Primitive::Scatter => {
            // The root hands lane l's blocks to NPU l of its server, which
            // sends each to its server.
            let mut t = Vec::new();
            for l in (0..g).filter(|&l| l != lr) {
                for s in 0..m {
                    t.push(Transfer::copy(root, rank(sr, l), rank(s, l), 1));
                }
            }
            steps.push(step("intra-server Scatter", t));
            if m > 1 {
                let mut t = Vec::new();
                for l in 0..g {
                    for s in (0..m).filter(|&s| s != sr) {
                        t.push(Transfer::copy(rank(sr, l), rank(s, l), rank(s, l), 1));
                    }
                }
                steps.push(step("inter-server Scatter", t));
            }
        }
        _ => {
            // Gather: the mirror image of Scatter.
            if m > 1 {
                let mut t = Vec::new();
                for l in 0..g {
                    for s in (0..m).filter(|&s| s != sr) {
                        t.push(Transfer::copy(rank(s, l), rank(sr, l), rank(s, l), 1));
                    }
                }
                steps.push(step("inter-server Gather", t));
            }
            let mut t = Vec::new();
            for l in (0..g).filter(|&l| l != lr) {
                for s in 0..m {
                    t.push(Transfer::copy(rank(sr, l), root, rank(s, l), 1));
                }
            }
            steps.push(step("intra-server Gather", t));
        }
    }
    steps
}

/// Uncontended closed form (HCCL's hierarchical executors with one α and
/// β; `n = 8·S'` ranks on `S'` servers), µs. With a level-1 ring:
/// AllReduce `2α + 2·S/8·β + 7/8·Sγ + 2(S'-1)(α + S/n·β) + (S'-1)·S/n·γ`,
/// ReduceScatter `α + S/8·β + 7/8·Sγ + (S'-1)(α + S/n·(β + γ))`, AllGather
/// `α + S/8·β + (S'-1)(α + S/n·β)`; with `D = ceil(log2 S')`: Broadcast
/// `(2 + D)(α + S/8·β)`, Reduce `(2 + D)(α + S/8·β) + (7 + D)·S/8·γ`,
/// Scatter / Gather `α + S/8·β + [S' > 1](α + S/n·β)`. With level-1 NHR
/// (`hier-nhr`): the same data terms with `ceil(log2 S')` instead of
/// `S' - 1` inter-server latencies per phase (AllReduce, ReduceScatter,
/// AllGather).
pub fn closed_form(p: Primitive, t: &CostTerms, level1: Level1) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta, gamma, nf, n) = (t.alpha_us, t.s, t.beta, t.gamma, t.nf(), t.n);
    let (intra, inter) = (s / 8.0, s / nf);
    let srv = (n / 8) as f64 - 1.0;
    if level1 == Level1::Nhr {
        let steps = (n / 8).next_power_of_two().trailing_zeros() as f64;
        return Some(match p {
            AllReduce => {
                2.0 * a
                    + 2.0 * intra * beta
                    + 7.0 * intra * gamma
                    + 2.0 * steps * a
                    + srv * (2.0 * inter * beta + inter * gamma)
            }
            ReduceScatter => {
                a + intra * beta + 7.0 * intra * gamma + steps * a + srv * inter * (beta + gamma)
            }
            _ => a + intra * beta + steps * a + srv * inter * beta,
        });
    }
    Some(match p {
        AllReduce => {
            2.0 * a
                + 2.0 * intra * beta
                + 7.0 * intra * gamma
                + srv * (2.0 * a + 2.0 * inter * beta + inter * gamma)
        }
        ReduceScatter => {
            a + intra * beta + 7.0 * intra * gamma + srv * (a + inter * (beta + gamma))
        }
        AllGather => a + intra * beta + srv * (a + inter * beta),
        Broadcast | Reduce => {
            let d = tree_depth(n / 8) as f64;
            let red = if p == Reduce {
                (7.0 + d) * intra * gamma
            } else {
                0.0
            };
            (2.0 + d) * (a + intra * beta) + red
        }
        // Scatter, Gather.
        _ => a + intra * beta + if srv > 0.0 { a + inter * beta } else { 0.0 },
    })
}
