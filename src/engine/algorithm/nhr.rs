//! HCCL's NHR, "nonuniform hierarchical ring" (hicann/hccl
//! `docs/en/user_guide/coll_algo_intro/NHR.md`; the step rule is that of
//! `ReduceScatterNHR::GetStepInfo` / `AllGatherNHR::GetStepInfo` in the
//! hicann/hccl sources): `L = ceil(log2 n)`
//! steps for any rank count, no fold, and the largest messages go to the
//! nearest ring neighbours.
//!
//! - ReduceScatter, step `k = 0..L` (distance `d = 2^k`): rank `r` sends to
//!   `r - d` the partial sums of the `m_k = floor((n - 1 + 2^k) / 2^(k+1))`
//!   blocks `r - d, r - d - 2^(k+1), r - d - 2·2^(k+1), …` (mod n), which
//!   `r - d` reduces into the same blocks. The first step moves about half
//!   of the data, every later step about half as much, the last one block.
//! - AllGather, the mirror image: step `s = 0..L` uses `k = L - 1 - s`,
//!   `d = 2^k`; rank `r` sends to `r + d` the `m_k` blocks `r, r - 2^(k+1),
//!   r - 2·2^(k+1), …` it holds.
//! - AllReduce: ReduceScatter then AllGather (as `NHR.md` says).
//! - Broadcast: Scatter then AllGather (as `NHR.md` says). NHR's Scatter
//!   runs down the spanning tree of the root's block, which is the binomial
//!   tree relative to the root (the root first sends the far half of the
//!   blocks `2^(L-1)` ranks away, …): [`super::tree`]'s Scatter steps, then
//!   the AllGather above.
//!
//! `Σ_k m_k = n - 1` (each step halves the remaining distance), so every
//! rank sends `(n-1)/n` of the data per phase. HCCL renumbers the slices
//! (`sliceMap_`) so that every message is one contiguous range; here the
//! buffer layout is fixed by the collective, so the blocks of one step are
//! sent as one transfer per run of consecutive block indices, all to the
//! same peer in the same step (they share the link and start together: the
//! step costs `α + m_k·S/n·β`, as one aggregated message would).
//!
//! Cost (uncontended, NHR.md Table 1): ReduceScatter `Lα + (n-1)/n·S(β +
//! γ)`; AllGather `Lα + (n-1)/n·Sβ`; AllReduce `2Lα + 2(n-1)/n·Sβ +
//! (n-1)/n·Sγ`; Broadcast `2Lα + 2(n-1)/n·Sβ` (the Scatter's `Lα +
//! (n-1)/n·Sβ`: the root's message is the largest of each step and the
//! root sends every other block once). (With γ and a step split into several runs a reduce may
//! start before the last run arrives; the model is then at most that much
//! faster than the closed form.)

use super::step;
use super::{CostTerms, Lazy, LazyIter, StepIter};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer};

/// `ceil(log2 n)`: HCCL's `GetNHRStepNum` (the bit length of `n - 1`).
pub fn step_count(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros()) as usize
}

/// Blocks sent per rank at distance `2^k`: `floor((n - 1 + 2^k) / 2^(k+1))`.
pub fn blocks_at(n: usize, k: usize) -> usize {
    (n - 1 + (1 << k)) / (1 << (k + 1))
}

/// The blocks rank `first` - `j·2^(k+1)` (mod n), `j = 0..blocks_at(n, k)`,
/// as runs `(start, len)` of consecutive indices.
fn runs(n: usize, k: usize, first: usize) -> Vec<(usize, usize)> {
    let stride = 1 << (k + 1);
    let mut idx: Vec<usize> = (0..blocks_at(n, k))
        .map(|j| (first + n - (j * stride) % n) % n)
        .collect();
    idx.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for b in idx {
        match out.last_mut() {
            Some((s, l)) if *s + *l == b => *l += 1,
            _ => out.push((b, 1)),
        }
    }
    out
}

/// ReduceScatter's step at distance `2^k`: rank `r` sends the partial
/// sums of its peer `r - 2^k`'s blocks to it.
fn reduce_scatter_step(n: usize, k: usize) -> Step {
    let d = 1 << k;
    let mut t = Vec::with_capacity(step_width(n, k));
    for r in 0..n {
        let to = (r + n - d % n) % n;
        for (b, len) in runs(n, k, to) {
            t.push(Transfer::reduce(r, to, b, len));
        }
    }
    step("ReduceScatter", t)
}

/// AllGather's step at distance `2^k`: rank `r` sends the blocks it holds
/// to `r + 2^k`.
fn all_gather_step(n: usize, k: usize) -> Step {
    let d = 1 << k;
    let mut t = Vec::with_capacity(step_width(n, k));
    for r in 0..n {
        let to = (r + d) % n;
        for (b, len) in runs(n, k, r) {
            t.push(Transfer::copy(r, to, b, len));
        }
    }
    step("AllGather", t)
}

/// The NHR steps for `primitive` on `n >= 2` ranks (Broadcast from `root`,
/// the others ignore it) and the chunk count (one chunk per block). Only
/// AllReduce, ReduceScatter, AllGather, Broadcast.
pub fn steps(primitive: Primitive, n: usize, root: usize) -> (usize, Vec<Step>) {
    let (chunks, s) = stream(primitive, n, root);
    (chunks, s.collect())
}

/// Transfers of a step at distance `2^k`: every rank sends
/// [`blocks_at`]`(n, k)` blocks as runs of consecutive indices ([`runs`]),
/// and over the `n` ranks the first block takes every value once, so the
/// sets are the `n` rotations of one set `S`. A rotation has as many
/// cyclic runs `c = |S| - #{b ∈ S : b + 1 mod n ∈ S}` as `S`, one more
/// linear run where it holds both `n - 1` and `0`, which happens for as
/// many rotations as `S` has cyclically adjacent pairs (`|S| - c`): `n·c
/// + |S| - c`. O(n).
pub fn step_width(n: usize, k: usize) -> usize {
    let m = blocks_at(n, k);
    let stride = 1 << (k + 1);
    let mut in_set = vec![false; n];
    for j in 0..m {
        in_set[(n - (j * stride) % n) % n] = true;
    }
    let adjacent = (0..n).filter(|&b| in_set[b] && in_set[(b + 1) % n]).count();
    let cyclic = m - adjacent;
    n * cyclic + adjacent
}

/// [`steps`], each NHR step made when the iterator reaches it.
pub fn stream(primitive: Primitive, n: usize, root: usize) -> (usize, StepIter) {
    let (chunks, s) = stream_lazy(primitive, n, root);
    (chunks, Box::new(s.map(Lazy::make)))
}

/// [`stream`], every ReduceScatter and AllGather step a [`Lazy::Shift`]
/// (rank `r` sends its [`blocks_at`] blocks to `r - 2^k` or `r + 2^k`),
/// which the cost model's bound need not make; Broadcast's Scatter steps
/// are made.
pub fn stream_lazy(primitive: Primitive, n: usize, root: usize) -> (usize, LazyIter) {
    let l = step_count(n);
    let rs = move || {
        (0..l).map(move |k| Lazy::Shift {
            ranks: n,
            shift: n - (1 << k) % n,
            count: blocks_at(n, k),
            width: step_width(n, k),
            make: Box::new(move || reduce_scatter_step(n, k)),
        })
    };
    let ag = move || {
        (0..l).map(move |s| {
            let k = l - 1 - s;
            Lazy::Shift {
                ranks: n,
                shift: (1 << k) % n,
                count: blocks_at(n, k),
                width: step_width(n, k),
                make: Box::new(move || all_gather_step(n, k)),
            }
        })
    };
    let steps: LazyIter = match primitive {
        Primitive::Broadcast => {
            let (_, mut s) = super::tree::steps(Primitive::Scatter, n, root);
            for st in &mut s {
                st.phase = "Scatter".into();
            }
            Box::new(s.into_iter().map(Lazy::Made).chain(ag()))
        }
        Primitive::ReduceScatter => Box::new(rs()),
        Primitive::AllGather => Box::new(ag()),
        _ => Box::new(rs().chain(ag())),
    };
    (n, steps)
}

/// Uncontended closed form (HCCL `NHR.md`), µs, `L = ceil(log2 n)`:
/// AllGather `Lα + (n-1)/n·Sβ`, ReduceScatter `Lα + (n-1)/n·S(β + γ)`,
/// AllReduce `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`, Broadcast `2Lα +
/// 2(n-1)/n·Sβ`.
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta) = (t.alpha_us, t.s, t.beta);
    let l = t.log2_ceil();
    Some(match p {
        AllGather => l * a + t.frac() * s * beta,
        ReduceScatter => l * a + t.frac() * s * beta + t.red(),
        Broadcast => 2.0 * l * a + 2.0 * t.frac() * s * beta,
        _ => 2.0 * l * a + 2.0 * t.frac() * s * beta + t.red(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hccl_step_rule() {
        // NHR.md: ceil(log2 n) steps; Σ m_k = n - 1.
        for n in 2..=64 {
            assert_eq!(
                step_count(n),
                n.next_power_of_two().trailing_zeros() as usize
            );
            let total: usize = (0..step_count(n)).map(|k| blocks_at(n, k)).sum();
            assert_eq!(total, n - 1, "n={n}");
        }
        // n = 5: 2, 1, 1 blocks; rank 0 sends blocks 4 and 2 to rank 4 first.
        assert_eq!(
            (0..3).map(|k| blocks_at(5, k)).collect::<Vec<_>>(),
            [2, 1, 1]
        );
        assert_eq!(runs(5, 0, 4), [(2, 1), (4, 1)]);
        // The width of a step without making it, against the made steps.
        for n in (2..=130).chain([255, 256, 257, 1000, 1024]) {
            let (_, s) = steps(Primitive::AllReduce, n, 0);
            let l = step_count(n);
            for (i, st) in s.iter().enumerate() {
                let k = if i < l { i } else { 2 * l - 1 - i };
                assert_eq!(st.transfers.len(), step_width(n, k), "n={n} step {i}");
            }
        }
        let (_, s) = steps(Primitive::ReduceScatter, 5, 0);
        assert_eq!(
            s[0].transfers[..2],
            [Transfer::reduce(0, 4, 2, 1), Transfer::reduce(0, 4, 4, 1)]
        );
    }
}
