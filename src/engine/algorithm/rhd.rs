//! Recursive halving-doubling (Rabenseifner's algorithm; HCCL's H-D_R,
//! hccl `docs/en/user_guide/coll_algo_intro/RHD.md`; Thakur, Rabenseifner &
//! Gropp, "Optimization of Collective Communication Operations in MPICH",
//! IJHPCA 2005, §4; MPICH `allreduce_intra_reduce_scatter_allgather.c`).
//!
//! For `p = 2^L` ranks the buffer is cut into `p` parts:
//! - ReduceScatter (recursive halving): at mask `m = p/2, …, 1` rank `r`
//!   exchanges with `r XOR m`: of its current window of `2m` parts (those
//!   sharing `r`'s bits above `m`) it keeps the half containing part `r` and
//!   sends the other half, which the partner reduces. After `L` steps rank
//!   `r` holds part `r` fully reduced.
//! - AllGather (recursive doubling): at mask `m = 1, …, p/2` rank `r` sends
//!   its window of `m` parts to `r XOR m`.
//! - AllReduce: ReduceScatter then AllGather.
//!
//! Non-power-of-2 `n` (AllReduce only), the fold of MPICH and HCCL: with
//! `p' = 2^floor(log2 n)` and `e = n - p'`, first each even rank `2i < 2e`
//! sends its whole buffer to `2i + 1`, which reduces it; the `p'` remaining
//! ranks (odd ranks below `2e`, all ranks from `2e`) run the algorithm above
//! on `p'` parts; finally each `2i + 1` sends the result back to `2i`.
//! Blocks are cut into `p'` chunks so that the `p'` parts are whole chunks.
//!
//! Cost (uncontended): `n = 2^L`: AllReduce `2Lα + 2(n-1)/n·Sβ +
//! (n-1)/n·Sγ`, ReduceScatter `Lα + (n-1)/n·S(β + γ)`, AllGather `Lα +
//! (n-1)/n·Sβ`. Otherwise AllReduce `(2L' + 2)α + (2(p'-1)/p' + 2)·Sβ +
//! ((p'-1)/p' + 1)·Sγ` with `L' = log2 p'` (the fold's reduce is the `+1`).

use super::step;
use super::CostTerms;
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer, TransferKind};

/// The RHD steps for `primitive` on `n >= 2` ranks and the chunk count.
/// Only AllReduce (any `n`), ReduceScatter and AllGather (`n = 2^k`).
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    let p = if n.is_power_of_two() {
        n
    } else {
        n.next_power_of_two() / 2
    };
    let e = n - p;
    // Part g is chunks [g·w, (g+1)·w).
    let (chunks, w) = if e == 0 { (n, 1) } else { (n * p, n) };
    // Participant i -> actual rank.
    let actual = |i: usize| if i < e { 2 * i + 1 } else { i + e };
    let mut steps = Vec::new();
    if e > 0 {
        steps.push(step(
            "Fold",
            (0..e)
                .map(|i| Transfer::reduce(2 * i, 2 * i + 1, 0, chunks))
                .collect(),
        ));
    }
    let halving = |steps: &mut Vec<Step>| {
        let mut m = p / 2;
        while m >= 1 {
            let transfers = (0..p)
                .map(|i| {
                    let base = i & !(2 * m - 1);
                    let send = if i & m != 0 { base } else { base + m };
                    Transfer::reduce(actual(i), actual(i ^ m), send * w, m * w)
                })
                .collect();
            steps.push(step("ReduceScatter", transfers));
            m /= 2;
        }
    };
    let doubling = |steps: &mut Vec<Step>| {
        let mut m = 1;
        while m < p {
            let transfers = (0..p)
                .map(|i| {
                    let base = i & !(m - 1);
                    Transfer {
                        kind: TransferKind::Copy,
                        ..Transfer::copy(actual(i), actual(i ^ m), base * w, m * w)
                    }
                })
                .collect();
            steps.push(step("AllGather", transfers));
            m *= 2;
        }
    };
    match primitive {
        Primitive::ReduceScatter => halving(&mut steps),
        Primitive::AllGather => doubling(&mut steps),
        _ => {
            halving(&mut steps);
            doubling(&mut steps);
        }
    }
    if e > 0 {
        steps.push(step(
            "Unfold",
            (0..e)
                .map(|i| Transfer::copy(2 * i + 1, 2 * i, 0, chunks))
                .collect(),
        ));
    }
    (chunks, steps)
}

/// Uncontended closed form (Thakur, Rabenseifner & Gropp 2005; HCCL
/// `RHD.md`), µs, `L = log2 n`: for `n = 2^L`, AllReduce `2Lα +
/// 2(n-1)/n·Sβ + (n-1)/n·Sγ`, ReduceScatter `Lα + (n-1)/n·S(β + γ)`,
/// AllGather (and the rest) `Lα + (n-1)/n·Sβ`; for other `n`, AllReduce
/// with `p' = 2^L'` the largest power of 2 below `n`: `(2L' + 2)α +
/// (2(p'-1)/p' + 2)·Sβ + ((p'-1)/p' + 1)·Sγ`.
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    use Primitive::*;
    let (a, s, beta, gamma, n) = (t.alpha_us, t.s, t.beta, t.gamma, t.n);
    let l = t.log2_ceil();
    Some(if n.is_power_of_two() {
        match p {
            AllReduce => 2.0 * l * a + 2.0 * t.frac() * s * beta + t.red(),
            ReduceScatter => l * a + t.frac() * s * beta + t.red(),
            _ => l * a + t.frac() * s * beta,
        }
    } else {
        let p = (n.next_power_of_two() / 2) as f64;
        let lp = p.log2();
        let pf = (p - 1.0) / p;
        (2.0 * lp + 2.0) * a + (2.0 * pf + 2.0) * s * beta + (pf + 1.0) * s * gamma
    })
}
