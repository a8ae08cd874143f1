//! Binomial trees for the rooted primitives (MPICH
//! `src/mpi/coll/bcast/bcast_intra_binomial.c`,
//! `reduce/reduce_intra_binomial.c`, `scatter/scatter_intra_binomial.c`,
//! `gather/gather_intra_binomial.c`; Thakur, Rabenseifner & Gropp 2005).
//!
//! Ranks are renumbered relative to the root (`rel = (r - root) mod n`); let
//! `L = ceil(log2 n)` and the masks `m = 2^(L-1), …, 2, 1`.
//! - Broadcast (top-down): at mask `m`, every `rel ≡ 0 (mod 2m)` with
//!   `rel + m < n` sends the whole buffer to `rel + m`.
//! - Scatter (top-down): the same edges, carrying only the blocks of the
//!   receiver's subtree, relative ranks `[rel + m, min(rel + 2m, n))`.
//! - Reduce / Gather (bottom-up, masks `1, 2, …`): `rel ≡ m (mod 2m)` sends
//!   to `rel - m` its whole (partially reduced) buffer, or the blocks of its
//!   subtree `[rel, min(rel + m, n))`.
//!
//! Cost (uncontended; at every step each rank receives at most one message):
//! Broadcast `L·(α + Sβ)`; Reduce `L·(α + Sβ + Sγ)`; Scatter, Gather
//! `Σ_{m = 2^j < n} (α + min(m, n - m)·S/n·β)` (= `Lα + (n-1)/n·Sβ` for
//! `n = 2^L`): the root's message is the largest of each step.

use super::CostTerms;
use super::{span, step};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer, TransferKind};

/// The masks `2^(L-1), …, 1` for `n` ranks (`L = ceil(log2 n)`).
pub(crate) fn masks_down(n: usize) -> Vec<usize> {
    let mut m = n.next_power_of_two() / 2;
    let mut v = Vec::new();
    while m >= 1 {
        v.push(m);
        m /= 2;
    }
    v
}

/// The binomial-tree steps for `primitive` on `n >= 2` ranks with `root`,
/// and the chunk count (one chunk per block). Only Broadcast, Reduce,
/// Scatter, Gather.
pub fn steps(primitive: Primitive, n: usize, root: usize) -> (usize, Vec<Step>) {
    let act = |rel: usize| (rel + root) % n;
    let down = primitive == Primitive::Broadcast || primitive == Primitive::Scatter;
    let mut masks = masks_down(n);
    if !down {
        masks.reverse();
    }
    let steps = masks
        .into_iter()
        .map(|m| {
            let mut transfers: Vec<Transfer> = Vec::new();
            for rel in 0..n {
                if down && rel % (2 * m) == 0 && rel + m < n {
                    let (src, dst) = (act(rel), act(rel + m));
                    match primitive {
                        Primitive::Broadcast => transfers.push(Transfer::copy(src, dst, 0, n)),
                        _ => transfers.extend(span(
                            src,
                            dst,
                            act(rel + m),
                            (rel + 2 * m).min(n) - (rel + m),
                            n,
                            1,
                            TransferKind::Copy,
                        )),
                    }
                } else if !down && rel % (2 * m) == m {
                    let (src, dst) = (act(rel), act(rel - m));
                    match primitive {
                        Primitive::Reduce => transfers.push(Transfer::reduce(src, dst, 0, n)),
                        _ => transfers.extend(span(
                            src,
                            dst,
                            act(rel),
                            (rel + m).min(n) - rel,
                            n,
                            1,
                            TransferKind::Copy,
                        )),
                    }
                }
            }
            step(primitive.title(), transfers)
        })
        .collect();
    (n, steps)
}

/// Uncontended closed form (binomial trees, Thakur, Rabenseifner & Gropp
/// 2005), µs, `L = ceil(log2 n)`: Broadcast `L(α + Sβ)`, Reduce `L(α + Sβ +
/// Sγ)`, Scatter / Gather `Σ_{m=2^j<n} (α + min(m, n-m)·S/n·β)`.
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta, gamma, n) = (t.alpha_us, t.s, t.beta, t.gamma, t.n);
    let l = t.log2_ceil();
    Some(match p {
        Broadcast => l * (a + s * beta),
        Reduce => l * (a + s * beta + s * gamma),
        _ => {
            let mut total = 0.0;
            let mut m = 1;
            while m < n {
                total += a + m.min(n - m) as f64 * s / t.nf() * beta;
                m *= 2;
            }
            total
        }
    })
}
