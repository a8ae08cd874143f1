//! Full-mesh algorithms: HCCL's intra-server "Mesh" (hccl
//! `docs/en/user_guide/coll_algo_intro/Mesh.md`): on a server where every
//! pair of NPUs has its own HCCS link, every rank exchanges with all `n - 1`
//! peers at once, so each phase is a single step with every link busy.
//!
//! - ReduceScatter: one step; rank `r` sends chunk `j` to rank `j` for every
//!   `j != r`; rank `j` reduces the `n - 1` arrivals in ascending sender order.
//! - AllGather (and Barrier, on tokens): one step; rank `r` sends chunk `r`
//!   to every peer.
//! - AllReduce: ReduceScatter then AllGather (2 steps).
//! - Broadcast: the root scatters block `j` to rank `j`, then AllGather
//!   (HCCL's mesh Broadcast, 2 steps).
//! - Reduce: ReduceScatter, then every rank sends its reduced block to the
//!   root (2 steps).
//! - AlltoAll / AlltoAllV: one step; rank `r` sends its piece for `j` to `j`.
//!
//! Cost (uncontended full mesh, HCCL `Mesh.md`): AllReduce
//! `2α + 2·S/n·β + (n-1)/n·Sγ`; RS `α + S/n·β + (n-1)/n·Sγ`; AG `α + S/n·β`;
//! Barrier `α`; Broadcast `2α + 2·S/n·β`; Reduce `2α + 2·S/n·β +
//! (n-1)/n·Sγ`; AlltoAll `α + S/n·β`; AlltoAllV `α + max_{i≠j} c_ij·β`.

use super::step;
use super::{CostTerms, Lazy, LazyIter, StepIter};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer};

fn reduce_scatter(n: usize) -> Step {
    // Ordered by receiver, then by sender: the receiver reduces in rank order.
    let transfers = (0..n)
        .flat_map(|dst| {
            (0..n)
                .filter(move |&src| src != dst)
                .map(move |src| Transfer::reduce(src, dst, dst, 1))
        })
        .collect();
    step("ReduceScatter", transfers)
}

fn all_gather(n: usize, phase: &str) -> Step {
    let transfers = (0..n)
        .flat_map(|src| {
            (0..n)
                .filter(move |&dst| dst != src)
                .map(move |dst| Transfer::copy(src, dst, src, 1))
        })
        .collect();
    step(phase, transfers)
}

/// Rank `r`'s piece for `j` goes from send block `j` to `j`'s receive
/// block `n + r` (AlltoAll) or `n² + r·n + j` (AlltoAllV).
pub(crate) fn alltoall_transfer(primitive: Primitive, n: usize, r: usize, j: usize) -> Transfer {
    if primitive == Primitive::AlltoAllV {
        Transfer::copy(r, j, r * n + j, 1).to_chunk(n * n + r * n + j)
    } else {
        Transfer::copy(r, j, j, 1).to_chunk(n + r)
    }
}

/// The mesh steps for `primitive` on `n >= 2` ranks with `root`, and the
/// chunk count (one chunk per block). Only the primitives of
/// [`super::Algorithm::supports`].
pub fn steps(primitive: Primitive, n: usize, root: usize) -> (usize, Vec<Step>) {
    let (chunks, s) = stream(primitive, n, root);
    (chunks, s.collect())
}

/// [`steps`], each step made when the iterator reaches it (a step of an
/// AllReduce on 1024 ranks has 1 047 552 transfers).
pub fn stream(primitive: Primitive, n: usize, root: usize) -> (usize, StepIter) {
    let (chunks, s) = stream_lazy(primitive, n, root);
    (chunks, Box::new(s.map(Lazy::make)))
}

/// [`stream`], every all-pairs step (ReduceScatter, AllGather, Barrier,
/// AlltoAll, AlltoAllV: one transfer of one chunk for every ordered pair
/// of ranks) a [`Lazy::Exchange`] the cost model's bound need not make;
/// Broadcast's scatter and Reduce's gather are made.
pub fn stream_lazy(primitive: Primitive, n: usize, root: usize) -> (usize, LazyIter) {
    use std::iter::once_with;
    let exchange = move |make: Box<dyn Fn() -> Step>| Lazy::Exchange {
        ranks: n,
        count: 1,
        make,
    };
    let rs = move || exchange(Box::new(move || reduce_scatter(n)));
    let ag = move |phase: &'static str| exchange(Box::new(move || all_gather(n, phase)));
    let scatter = move || {
        Lazy::Made(step(
            "Scatter",
            (0..n)
                .filter(|&j| j != root)
                .map(|j| Transfer::copy(root, j, j, 1))
                .collect(),
        ))
    };
    let gather = move || {
        Lazy::Made(step(
            "Gather",
            (0..n)
                .filter(|&j| j != root)
                .map(|j| Transfer::copy(j, root, j, 1))
                .collect(),
        ))
    };
    let steps: LazyIter = match primitive {
        Primitive::ReduceScatter => Box::new(once_with(rs)),
        Primitive::AllGather => Box::new(once_with(move || ag("AllGather"))),
        Primitive::Barrier => Box::new(once_with(move || ag("Barrier"))),
        Primitive::Broadcast => {
            Box::new(once_with(scatter).chain(once_with(move || ag("AllGather"))))
        }
        Primitive::Reduce => Box::new(once_with(rs).chain(once_with(gather))),
        Primitive::AlltoAll | Primitive::AlltoAllV => Box::new(once_with(move || {
            exchange(Box::new(move || {
                step(
                    primitive.title(),
                    (0..n)
                        .flat_map(|r| {
                            (0..n)
                                .filter(move |&j| j != r)
                                .map(move |j| alltoall_transfer(primitive, n, r, j))
                        })
                        .collect(),
                )
            }))
        })),
        _ => Box::new(once_with(rs).chain(once_with(move || ag("AllGather")))),
    };
    (primitive.blocks(n), steps)
}

/// Uncontended closed form (HCCL `Mesh.md`), µs: AllReduce `2α + 2·S/n·β
/// + (n-1)/n·Sγ`; ReduceScatter `α + S/n·β + (n-1)/n·Sγ`; AllGather and
/// AlltoAll `α + S/n·β`; Barrier `α`; Broadcast `2α + 2·S/n·β`; Reduce
/// `2α + 2·S/n·β + (n-1)/n·Sγ`; AlltoAllV `α + max_{i≠j} c_ij·β`
/// ([`CostTerms::moe_bytes`]). `None` for a primitive it does not
/// implement.
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta, nf, n) = (t.alpha_us, t.s, t.beta, t.nf(), t.n);
    Some(match p {
        AllReduce => 2.0 * a + 2.0 * s / nf * beta + t.red(),
        ReduceScatter => a + s / nf * beta + t.red(),
        AllGather | AlltoAll => a + s / nf * beta,
        Barrier => a,
        Broadcast => 2.0 * a + 2.0 * s / nf * beta,
        Reduce => 2.0 * a + 2.0 * s / nf * beta + t.red(),
        AlltoAllV => {
            let c = t.moe_bytes();
            let max = (0..n)
                .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
                .map(|(i, j)| c(i, j))
                .fold(0.0, f64::max);
            a + max * beta
        }
        _ => return None,
    })
}
