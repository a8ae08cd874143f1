//! Pairwise exchange for AlltoAll and AlltoAllV (HCCL `Pairwise.md`, hccl
//! `docs/en/user_guide/coll_algo_intro/Pairwise.md`; MPICH
//! `src/mpi/coll/alltoall/alltoall_intra_pairwise.c`).
//!
//! In step `k = 1..n-1` rank `r` sends its piece for `j = (r + k) mod n`
//! from send block `j` to `j`'s receive slot for `r` (and receives from
//! `r - k`). Every rank sends to and receives from exactly one peer per
//! step, so on any topology with a path per pair no link direction is
//! shared by two of a rank's own messages.
//!
//! Cost (uncontended): AlltoAll `(n-1)·(α + S/n·β)`; AlltoAllV
//! `Σ_{k=1}^{n-1} (α + max_r c_{r, r+k}·β)` with `c_ij` the bytes `i` sends
//! to `j` (each step waits for its largest message).

use super::mesh::alltoall_transfer;
use super::step;
use super::CostTerms;
use crate::engine::collective::Primitive;
use crate::engine::schedule::Step;

/// The pairwise steps for AlltoAll / AlltoAllV on `n >= 2` ranks, and the
/// chunk count (one chunk per block).
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    let steps = (1..n)
        .map(|k| {
            step(
                primitive.title(),
                (0..n)
                    .map(|r| alltoall_transfer(primitive, n, r, (r + k) % n))
                    .collect(),
            )
        })
        .collect();
    (primitive.blocks(n), steps)
}

/// Uncontended closed form (pairwise exchange, Thakur, Rabenseifner &
/// Gropp 2005), µs: AlltoAll `(n-1)(α + S/n·β)`, AlltoAllV `Σ_{k=1}^{n-1}
/// (α + max_r c_{r,r+k}·β)` ([`CostTerms::moe_bytes`]).
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    let (a, s, beta, nf, n) = (t.alpha_us, t.s, t.beta, t.nf(), t.n);
    Some(match p {
        Primitive::AlltoAll => (nf - 1.0) * (a + s / nf * beta),
        _ => {
            let c = t.moe_bytes();
            (1..n)
                .map(|k| {
                    let max = (0..n).map(|r| c(r, (r + k) % n)).fold(0.0, f64::max);
                    a + max * beta
                })
                .sum()
        }
    })
}
