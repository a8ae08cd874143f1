//! Ring algorithms (Patarasuk & Yuan, "Bandwidth optimal all-reduce
//! algorithms for clusters of workstations", JPDC 2009; NCCL's ring; HCCL's
//! `Ring.md`).
//!
//! Ranks form the ring `0 -> 1 -> ... -> n-1 -> 0`. The buffer is cut into
//! `n` chunks (one per block).
//! - ReduceScatter: in step `k = 0..n-1`, rank `r` sends chunk
//!   `(r - k - 1) mod n` to `r + 1`, which reduces it into its own. After
//!   `n - 1` steps rank `r` holds the full reduction of chunk `r`.
//! - AllGather: in step `k`, rank `r` sends chunk `(r - k) mod n` to `r + 1`,
//!   which copies it. After `n - 1` steps everyone holds every chunk.
//! - AllReduce: ReduceScatter, then AllGather (`2(n-1)` steps).
//! - Barrier: the AllGather of one token per rank (`n-1` steps, no data).
//! - SendRecv (nccl-tests `sendrecv`): one step, rank `r` sends its send
//!   block to rank `r + 1`'s receive block.
//! - Broadcast (NCCL's only Broadcast, `ncclPatternPipelineFrom`): a chain
//!   along the ring from the root, `root -> root+1 -> … -> root-1`: in step
//!   `k` rank `root + k` passes the whole buffer on (`n - 1` steps). NCCL
//!   pipelines it in slices (the cost model's `slices`), which is what makes
//!   it fast: `(k + n - 2)(α + S/k·β)` with `k` slices, one at a time.
//! - Reduce (NCCL's `ncclPatternPipelineTo`): the chain ending at the root,
//!   `root+1 -> root+2 -> … -> root`, each rank adding its input into the
//!   partial sum it passes on.
//!
//! Cost (uncontended, Thakur, Rabenseifner & Gropp 2005):
//! AllReduce `2(n-1)α + 2(n-1)/n·Sβ + (n-1)/n·Sγ`; RS/AG `(n-1)α + (n-1)/n·Sβ`
//! (+ `(n-1)/n·Sγ` for RS); Barrier `(n-1)α`; SendRecv `α + Sβ`;
//! Broadcast `(n-1)(α + Sβ)`, Reduce `(n-1)(α + Sβ + Sγ)` unsliced.

use super::{CostTerms, Lazy, LazyIter, StepIter};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer, TransferKind};

/// Step `k` of a phase: rank `r` sends chunk `(r + offset) mod n` to
/// `r + 1` (no division per transfer: the ring's steps are streamed by
/// the millions at 8192 ranks).
fn phase_step(n: usize, kind: TransferKind, name: &'static str, offset: usize) -> Step {
    let mut c = offset % n;
    Step {
        phase: name.to_string(),
        transfers: (0..n)
            .map(|r| {
                let t = Transfer {
                    kind,
                    ..Transfer::copy(r, if r + 1 == n { 0 } else { r + 1 }, c, 1)
                };
                c = if c + 1 == n { 0 } else { c + 1 };
                t
            })
            .collect(),
    }
}

/// `n - 1` steps; in step `k` rank `r` sends chunk `(r + offset(k)) mod n`
/// to `r + 1`. Every step after the first moves one chunk from each rank
/// to its successor like the first, so it is a [`Lazy::Repeat`] (made
/// only if asked).
fn phase(
    n: usize,
    kind: TransferKind,
    name: &'static str,
    offset: impl Fn(usize) -> usize + Copy + 'static,
) -> impl Iterator<Item = Lazy> {
    (0..n - 1).map(move |k| {
        if k == 0 {
            Lazy::Made(phase_step(n, kind, name, offset(k)))
        } else {
            Lazy::Repeat(Box::new(move || phase_step(n, kind, name, offset(k))))
        }
    })
}

fn reduce_scatter(n: usize) -> impl Iterator<Item = Lazy> {
    phase(n, TransferKind::Reduce, "ReduceScatter", move |k| n - k - 1)
}

fn all_gather(n: usize, name: &'static str) -> impl Iterator<Item = Lazy> {
    phase(n, TransferKind::Copy, name, move |k| n - k)
}

/// The chain along the ring from (Broadcast) or to (Reduce) `root`.
fn chain(primitive: Primitive, n: usize, root: usize) -> impl Iterator<Item = Step> {
    (0..n - 1).map(move |k| {
        let t = if primitive == Primitive::Broadcast {
            Transfer::copy((root + k) % n, (root + k + 1) % n, 0, n)
        } else {
            Transfer::reduce((root + k + 1) % n, (root + k + 2) % n, 0, n)
        };
        Step {
            phase: format!("{} (chain)", primitive.title()),
            transfers: vec![t],
        }
    })
}

/// The ring steps for `primitive` on `n >= 2` ranks (Broadcast and Reduce
/// from / to `root`; the others ignore it), and the chunk count (one chunk
/// per block). Only the primitives of [`super::Algorithm::supports`].
pub fn steps(primitive: Primitive, n: usize, root: usize) -> (usize, Vec<Step>) {
    let (chunks, s) = stream(primitive, n, root);
    (chunks, s.collect())
}

/// [`steps`], each step made when the iterator reaches it.
pub fn stream(primitive: Primitive, n: usize, root: usize) -> (usize, StepIter) {
    let (chunks, s) = stream_lazy(primitive, n, root);
    (chunks, Box::new(s.map(Lazy::make)))
}

/// [`stream`], with every step of a ReduceScatter / AllGather / Barrier
/// phase after its first as a [`Lazy::Repeat`] of its predecessor's
/// traffic.
pub fn stream_lazy(primitive: Primitive, n: usize, root: usize) -> (usize, LazyIter) {
    let steps: LazyIter = match primitive {
        Primitive::Broadcast | Primitive::Reduce => {
            Box::new(chain(primitive, n, root).map(Lazy::Made))
        }
        Primitive::ReduceScatter => Box::new(reduce_scatter(n)),
        Primitive::AllGather => Box::new(all_gather(n, "AllGather")),
        Primitive::Barrier => Box::new(all_gather(n, "Barrier")),
        Primitive::SendRecv => Box::new(std::iter::once_with(move || {
            Lazy::Made(Step {
                phase: "SendRecv".into(),
                transfers: (0..n)
                    .map(|r| Transfer::copy(r, (r + 1) % n, 0, 1).to_chunk(1))
                    .collect(),
            })
        })),
        _ => Box::new(reduce_scatter(n).chain(all_gather(n, "AllGather"))),
    };
    (primitive.blocks(n), steps)
}

/// Uncontended closed form (Thakur, Rabenseifner & Gropp 2005;
/// `docs/hardware-and-algorithms.md`), µs: AllReduce `2(n-1)α +
/// 2(n-1)/n·Sβ + (n-1)/n·Sγ`; ReduceScatter `(n-1)α + (n-1)/n·S(β + γ)`;
/// AllGather `(n-1)α + (n-1)/n·Sβ`; Barrier `(n-1)α`; SendRecv `α + Sβ`;
/// Broadcast `(n-1)(α + Sβ)` and Reduce `(n-1)(α + Sβ + Sγ)` (chains).
/// `None` for a primitive it does not implement.
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta, gamma, nf) = (t.alpha_us, t.s, t.beta, t.gamma, t.nf());
    Some(match p {
        AllReduce => 2.0 * (nf - 1.0) * a + 2.0 * t.frac() * s * beta + t.red(),
        ReduceScatter => (nf - 1.0) * a + t.frac() * s * beta + t.red(),
        AllGather => (nf - 1.0) * a + t.frac() * s * beta,
        Barrier => (nf - 1.0) * a,
        SendRecv => a + s * beta,
        Broadcast => (nf - 1.0) * (a + s * beta),
        Reduce => (nf - 1.0) * (a + s * beta + s * gamma),
        _ => return None,
    })
}
