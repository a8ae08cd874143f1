//! Bruck's algorithm (Bruck, Ho, Kipnis, Upfal & Weathersby, "Efficient
//! algorithms for all-to-all communications in multiport message-passing
//! systems", IEEE TPDS 1997; MPICH `allgather_intra_brucks.c`), which HCCL
//! runs as NB, "nonuniform Bruck" (hccl
//! `docs/en/user_guide/coll_algo_intro/NB.md`): `ceil(log2 n)` steps for
//! any rank count, no fold needed.
//!
//! - AllGather: at step `k` (distance `d = 2^k`, `cnt = min(d, n - d)`) rank
//!   `r` sends the blocks `r, …, r + cnt - 1` (mod n) it holds to `r - d`.
//!   After the step it holds `r, …, r + 2d - 1`.
//! - ReduceScatter: the dual, in reverse step order: at distance `d` rank
//!   `q` sends its partial sums of blocks `q + d, …, q + d + cnt - 1` to
//!   `q + d`, which reduces them.
//! - AllReduce: ReduceScatter then AllGather. Barrier: the AllGather of
//!   tokens (the dissemination barrier, Hensgen, Finkel & Manber 1988).
//!
//! A range that wraps past block `n - 1` is sent as two messages to the
//! same peer in the same step (they share the link; the data term is the
//! same as for one message).
//!
//! Cost (uncontended, `L = ceil(log2 n)`): AllGather `Lα + (n-1)/n·Sβ`;
//! ReduceScatter `Lα + (n-1)/n·S(β + γ)`; AllReduce twice the data term
//! plus `(n-1)/n·Sγ`; Barrier `Lα`.

use super::{span, step};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, TransferKind};

fn distances(n: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut d = 1;
    while d < n {
        v.push(d);
        d *= 2;
    }
    v
}

fn all_gather(n: usize, phase: &str) -> Vec<Step> {
    distances(n)
        .into_iter()
        .map(|d| {
            let cnt = d.min(n - d);
            step(
                phase,
                (0..n)
                    .flat_map(|r| span(r, (r + n - d) % n, r, cnt, n, 1, TransferKind::Copy))
                    .collect(),
            )
        })
        .collect()
}

fn reduce_scatter(n: usize) -> Vec<Step> {
    distances(n)
        .into_iter()
        .rev()
        .map(|d| {
            let cnt = d.min(n - d);
            step(
                "ReduceScatter",
                (0..n)
                    .flat_map(|q| span(q, (q + d) % n, q + d, cnt, n, 1, TransferKind::Reduce))
                    .collect(),
            )
        })
        .collect()
}

/// The Bruck steps for `primitive` on `n >= 2` ranks and the chunk count
/// (one chunk per block). Only AllGather, ReduceScatter, AllReduce, Barrier.
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    let steps = match primitive {
        Primitive::AllGather => all_gather(n, "AllGather"),
        Primitive::Barrier => all_gather(n, "Barrier"),
        Primitive::ReduceScatter => reduce_scatter(n),
        _ => {
            let mut s = reduce_scatter(n);
            s.extend(all_gather(n, "AllGather"));
            s
        }
    };
    (n, steps)
}
