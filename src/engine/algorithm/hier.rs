//! HCCL's hierarchical decomposition for multi-server Atlas A2 clusters
//! (hccl `docs/en/user_guide/coll_algo_intro/` "level0 / level1": intra-server
//! (level0) Mesh over HCCS, inter-server (level1) algorithm over RoCE; also
//! `../shared/reference/hardware-and-algorithms.md`, "Hierarchical
//! decomposition on A2").
//!
//! `n = 8·S` ranks, rank `r = 8s + l` is NPU `l` of server `s`. The buffer's
//! `n` blocks are split into 8 *parts*, one per local index `l`, of `S`
//! blocks each: for AllReduce part `l` is the contiguous blocks
//! `l·S .. l·S + S`; for ReduceScatter and AllGather it is the blocks
//! `s·8 + l` (`s = 0..S`), so that rank `r` ends up owning block `r`.
//! - AllReduce: intra-server Mesh ReduceScatter (rank `(s, l)` receives part
//!   `l` from its 7 server peers), inter-server ring AllReduce among the `S`
//!   ranks `(·, l)` on part `l` (ring ReduceScatter then ring AllGather over
//!   the `S` blocks of the part), intra-server Mesh AllGather of part `l`.
//! - ReduceScatter: intra-server Mesh ReduceScatter, then inter-server ring
//!   ReduceScatter of part `l`.
//! - AllGather: inter-server ring AllGather of part `l`, then intra-server
//!   Mesh AllGather.
//!
//! Only `1/8` of the data crosses the inter-server network per rank, which
//! is why HCCL uses it on A2: bandwidth-optimal when RoCE is the bottleneck.
//!
//! Cost (uncontended, one α and β for every link, `B` bytes, `S` servers):
//! AllReduce `2α + 2·B/8·β + 7/8·Bγ + 2(S-1)(α + B/n·β) + (S-1)·B/n·γ`;
//! ReduceScatter `α + B/8·β + 7/8·Bγ + (S-1)(α + B/n·(β + γ))`;
//! AllGather `α + B/8·β + (S-1)(α + B/n·β)`. (ReduceScatter and AllGather
//! send a part's `S` blocks as `S` messages sharing one link: same data
//! term, but a reduce may start before all of them arrived.)

use super::step;
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer, TransferKind};

/// NPUs per server (Atlas 800T A2).
pub const PER_SERVER: usize = 8;

/// The hierarchical steps for `primitive` on `n = 8·S` ranks and the chunk
/// count (one chunk per block). Only AllReduce, ReduceScatter, AllGather.
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    let g = PER_SERVER;
    let servers = n / g;
    let contiguous = primitive == Primitive::AllReduce;
    // Block `i` (0..servers) of part `l`.
    let block = |l: usize, i: usize| {
        if contiguous {
            l * servers + i
        } else {
            i * g + l
        }
    };
    // Transfers of part `l` from `src` to `dst`.
    let part = |src: usize, dst: usize, l: usize, kind: TransferKind| -> Vec<Transfer> {
        if contiguous {
            vec![Transfer {
                kind,
                ..Transfer::copy(src, dst, block(l, 0), servers)
            }]
        } else {
            (0..servers)
                .map(|i| Transfer {
                    kind,
                    ..Transfer::copy(src, dst, block(l, i), 1)
                })
                .collect()
        }
    };
    let intra = |kind: TransferKind, name: &str| {
        let mut t = Vec::new();
        for s in 0..servers {
            for dst_l in 0..g {
                for src_l in (0..g).filter(|&x| x != dst_l) {
                    // RS: dst receives its own part; AG: src sends its own part.
                    let l = if kind == TransferKind::Reduce {
                        dst_l
                    } else {
                        src_l
                    };
                    t.extend(part(s * g + src_l, s * g + dst_l, l, kind));
                }
            }
        }
        step(name, t)
    };
    // Inter-server ring over the `servers` blocks of each part.
    let ring = |kind: TransferKind, name: &str| -> Vec<Step> {
        (0..servers.saturating_sub(1))
            .map(|k| {
                let mut t = Vec::new();
                for s in 0..servers {
                    for l in 0..g {
                        let i = match kind {
                            TransferKind::Reduce => (s + 2 * servers - k - 1) % servers,
                            TransferKind::Copy => (s + servers - k) % servers,
                        };
                        t.push(Transfer {
                            kind,
                            ..Transfer::copy(s * g + l, ((s + 1) % servers) * g + l, block(l, i), 1)
                        });
                    }
                }
                step(name, t)
            })
            .collect()
    };
    let mut steps = Vec::new();
    match primitive {
        Primitive::AllGather => {
            steps.extend(ring(TransferKind::Copy, "inter-server AllGather"));
            steps.push(intra(TransferKind::Copy, "intra-server AllGather"));
        }
        Primitive::ReduceScatter => {
            steps.push(intra(TransferKind::Reduce, "intra-server ReduceScatter"));
            steps.extend(ring(TransferKind::Reduce, "inter-server ReduceScatter"));
        }
        _ => {
            steps.push(intra(TransferKind::Reduce, "intra-server ReduceScatter"));
            steps.extend(ring(TransferKind::Reduce, "inter-server AllReduce"));
            steps.extend(ring(TransferKind::Copy, "inter-server AllReduce"));
            steps.push(intra(TransferKind::Copy, "intra-server AllGather"));
        }
    }
    (n, steps)
}
