//! HCCL's hierarchical Pipeline algorithm (hicann/hccl
//! `docs/en/user_guide/coll_algo_intro/Pipeline.md`): an inter-server ring
//! among same-index NPUs overlapped with intra-server full-mesh forwarding,
//! so that the HCCS links work while RoCE carries the ring.
//!
//! `n = 8·m` ranks, rank `r = 8s + l` is NPU `l` of server `s`; every block
//! is `S/n` and block `b` belongs to rank `b`.
//! - AllGather, steps `t = 0..m`: the block of rank `(s, l)` is at
//!   `((s + t) mod m, l)` at the start of step `t`; in step `t` that holder
//!   sends it on along the ring to `((s + t + 1) mod m, l)` (if `t < m - 1`)
//!   *and*, in the same step, to its 7 server peers over the mesh. Step 0
//!   hides the intra-server send of the rank's own block under the first
//!   ring step; after the last ring step one intra-server step remains
//!   (`Pipeline.md`, Figures 1 and 2).
//! - ReduceScatter: the same schedule reversed in time and direction. In
//!   step `t` (`u = m - 1 - t`) the 7 peers of `((s + u) mod m, l)` send it
//!   their own input of block `(s, l)` while `((s + u + 1) mod m, l)` sends
//!   it the partial sum it has accumulated (if `t > 0`); it reduces all 8
//!   (mesh first, ring last). Rank `(s, l)` ends with block `(s, l)`.
//! - AllReduce: ReduceScatter then AllGather (`Pipeline.md` Table 1: twice
//!   the ReduceScatter time).
//!
//! Every step except the first (ReduceScatter) / last (AllGather) has a
//! ring transfer and mesh transfers side by side: that is the overlap, and
//! the step lasts `max(α_inter + S/n·β_inter, α_intra + S/n·β_intra)`.
//!
//! Cost (`Pipeline.md` Table 1, `p_inter = m`): AllGather and ReduceScatter
//! `(m - 1)·max(S/n·β_inter + α_inter, S/n·β_intra + α_intra) +
//! S/n·β_intra + α_intra`; AllReduce twice that. With one α and β for every link that
//! is `m(α + S/n·β)`, plus the reduce `(n-1)/n·Sγ` for ReduceScatter and
//! AllReduce (8 reduces per receiver per step, 7 in the first).

use super::hier::PER_SERVER;
use super::step;
use super::{CostTerms, StepIter};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer};

fn all_gather(n: usize) -> impl Iterator<Item = Step> {
    let g = PER_SERVER;
    let m = n / g;
    (0..m).map(move |t| {
        let mut tr = Vec::new();
        for s in 0..m {
            for l in 0..g {
                let b = s * g + l;
                let at = (s + t) % m;
                let holder = at * g + l;
                if t + 1 < m {
                    tr.push(Transfer::copy(holder, ((at + 1) % m) * g + l, b, 1));
                }
                for p in (0..g).filter(|&p| p != l) {
                    tr.push(Transfer::copy(holder, at * g + p, b, 1));
                }
            }
        }
        let phase = if t + 1 < m {
            "AllGather: inter-server ring + intra-server mesh"
        } else {
            "AllGather: intra-server mesh"
        };
        step(phase, tr)
    })
}

fn reduce_scatter(n: usize) -> impl Iterator<Item = Step> {
    let g = PER_SERVER;
    let m = n / g;
    (0..m).map(move |t| {
        let u = m - 1 - t;
        let mut tr = Vec::new();
        for s in 0..m {
            for l in 0..g {
                let b = s * g + l;
                let at = (s + u) % m;
                let to = at * g + l;
                for p in (0..g).filter(|&p| p != l) {
                    tr.push(Transfer::reduce(at * g + p, to, b, 1));
                }
                if t > 0 {
                    tr.push(Transfer::reduce(((at + 1) % m) * g + l, to, b, 1));
                }
            }
        }
        let phase = if t > 0 {
            "ReduceScatter: inter-server ring + intra-server mesh"
        } else {
            "ReduceScatter: intra-server mesh"
        };
        step(phase, tr)
    })
}

/// The Pipeline steps for `primitive` on `n = 8·m` ranks and the chunk count
/// (one chunk per block). Only AllReduce, ReduceScatter, AllGather.
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    let (chunks, s) = stream(primitive, n);
    (chunks, s.collect())
}

/// [`steps`], each step made when the iterator reaches it.
pub fn stream(primitive: Primitive, n: usize) -> (usize, StepIter) {
    let steps: StepIter = match primitive {
        Primitive::AllGather => Box::new(all_gather(n)),
        Primitive::ReduceScatter => Box::new(reduce_scatter(n)),
        _ => Box::new(reduce_scatter(n).chain(all_gather(n))),
    };
    (n, steps)
}

/// Uncontended closed form (HCCL `Pipeline.md` with one α and β, `S'`
/// servers), µs: AllGather `S'(α + S/n·β)`, ReduceScatter `S'(α + S/n·β) +
/// (n-1)/n·Sγ`, AllReduce `2S'(α + S/n·β) + (n-1)/n·Sγ`.
pub fn closed_form(p: Primitive, t: &CostTerms) -> Option<f64> {
    let step = (t.n / PER_SERVER) as f64 * (t.alpha_us + t.s / t.nf() * t.beta);
    Some(match p {
        Primitive::AllGather => step,
        Primitive::ReduceScatter => step + t.red(),
        _ => 2.0 * step + t.red(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_and_mesh_share_steps() {
        // 3 servers: AllGather steps 0 and 1 carry 24 ring + 168 mesh
        // transfers, step 2 only the 168 mesh ones.
        let (_, s) = steps(Primitive::AllGather, 24);
        let inter = |st: &Step| {
            st.transfers
                .iter()
                .filter(|t| t.src / 8 != t.dst / 8)
                .count()
        };
        let counts: Vec<(usize, usize)> = s
            .iter()
            .map(|st| (inter(st), st.transfers.len() - inter(st)))
            .collect();
        assert_eq!(counts, [(24, 168), (24, 168), (0, 168)]);
        // Step 1: rank 9 (server 1, NPU 1) forwards rank 1's block to rank 17
        // and to its server peers.
        assert!(s[1].transfers.contains(&Transfer::copy(9, 17, 1, 1)));
        assert!(s[1].transfers.contains(&Transfer::copy(9, 8, 1, 1)));
        let (_, s) = steps(Primitive::ReduceScatter, 24);
        let counts: Vec<usize> = s.iter().map(inter).collect();
        assert_eq!(counts, [0, 24, 24]);
    }
}
