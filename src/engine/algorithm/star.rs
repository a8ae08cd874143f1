//! Star: the rooted one-step algorithms (HCCL `Star.md`, hccl
//! `docs/en/user_guide/coll_algo_intro/Star.md`: the root talks to every
//! other rank directly, which suits a full mesh where each pair has a link).
//!
//! - Broadcast: one step; the root sends its whole buffer to every rank.
//! - Reduce: one step; every rank sends its whole buffer to the root, which
//!   reduces the `n - 1` arrivals in ascending sender order.
//! - Scatter: one step; the root sends block `j` to rank `j`.
//! - Gather: one step; rank `j` sends block `j` to the root.
//!
//! Cost (uncontended full mesh; every transfer on its own link): Broadcast
//! `α + Sβ`; Reduce `α + Sβ + (n-1)·Sγ` (the root reduces serially); Scatter,
//! Gather `α + S/n·β`.

use super::step;
use super::CostTerms;
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer};

/// The star steps for `primitive` on `n >= 2` ranks with `root`, and the
/// chunk count (one chunk per block). Only Broadcast, Reduce, Scatter, Gather.
pub fn steps(primitive: Primitive, n: usize, root: usize) -> (usize, Vec<Step>) {
    let others = (0..n).filter(move |&j| j != root);
    let transfers: Vec<Transfer> = match primitive {
        Primitive::Broadcast => others.map(|j| Transfer::copy(root, j, 0, n)).collect(),
        Primitive::Reduce => others.map(|j| Transfer::reduce(j, root, 0, n)).collect(),
        Primitive::Scatter => others.map(|j| Transfer::copy(root, j, j, 1)).collect(),
        _ => others.map(|j| Transfer::copy(j, root, j, 1)).collect(),
    };
    (n, vec![step(primitive.title(), transfers)])
}

/// Uncontended closed form (the root talks to every rank at once), µs:
/// Broadcast `α + Sβ`, Reduce `α + Sβ + (n-1)·Sγ`, Scatter / Gather `α +
/// S/n·β`.
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta, gamma, nf) = (t.alpha_us, t.s, t.beta, t.gamma, t.nf());
    Some(match p {
        Broadcast => a + s * beta,
        Reduce => a + s * beta + (nf - 1.0) * s * gamma,
        _ => a + s / nf * beta,
    })
}
