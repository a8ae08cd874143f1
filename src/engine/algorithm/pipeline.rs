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
use super::{CostTerms, Lazy, LazyIter};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Step, Transfer};

/// ReduceScatter's pipeline keeps this many slices of its buffer in flight
/// (`PIPELINE_DEPTH`, hccl `reduce_scatter_pipeline_pub.h`).
const RS_PIPELINE_DEPTH: u64 = 3;

/// Bytes of one buffer loop of algorithm `algorithm` (its URL name) for
/// `primitive` on `ranks` ranks with a CCL buffer of `buffer` bytes
/// (`HCCL_BUFFSIZE`). HCCL's executors say it in `CalcLoopMaxCount`: most
/// fit one buffer a loop (`CollAllReduceExecutor`: `cclBuffSize /
/// unitSize`); the op-base pipeline executors one buffer per rank
/// (`CollAllReduceMeshOpbasePipelineExecutor`: `(cclBuffSize - align) /
/// unitSize * userRankSize`; AllGather's counts per-rank input against
/// the whole buffer), ReduceScatter's a third of that (`PIPELINE_DEPTH`).
pub fn loop_bytes(algorithm: &str, primitive: Primitive, ranks: usize, buffer: u64) -> u64 {
    let per_rank = |div: u64| buffer.saturating_mul(ranks as u64) / div;
    if algorithm != super::Algorithm::Pipeline.name() {
        return buffer;
    }
    match primitive {
        Primitive::AllReduce | Primitive::AllGather => per_rank(1),
        Primitive::ReduceScatter => per_rank(RS_PIPELINE_DEPTH),
        _ => buffer,
    }
}

/// AllGather step `t` of `m` servers: per holder position `(at, l)` (in
/// that order, so that every step's traffic is the same but for the last,
/// see [`stream_lazy`]) the block of rank `((at - t) mod m, l)` goes on
/// along the ring (if `t < m - 1`) and to the 7 server peers.
fn all_gather_step(m: usize, t: usize) -> Step {
    let g = PER_SERVER;
    let mut tr = Vec::with_capacity(m * g * g);
    for at in 0..m {
        let b0 = ((at + m - t % m) % m) * g;
        for l in 0..g {
            let (holder, b) = (at * g + l, b0 + l);
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
}

/// ReduceScatter step `t` of `m` servers (`u = m - 1 - t`): per receiver
/// `(at, l)` (in that order, as in [`all_gather_step`]) of block `b` of
/// rank `((at - u) mod m, l)`, the 7 peers' inputs of `b` (mesh first)
/// and, if `t > 0`, the partial sum from `(at + 1, l)` (ring last).
fn reduce_scatter_step(m: usize, t: usize) -> Step {
    let g = PER_SERVER;
    let u = m - 1 - t;
    let mut tr = Vec::with_capacity(m * g * g);
    for at in 0..m {
        let b0 = ((at + m - u) % m) * g;
        for l in 0..g {
            let (to, b) = (at * g + l, b0 + l);
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
}

/// `m` steps made by `make(m, t)`; step `t` is a [`Lazy::Repeat`] of its
/// predecessor when `repeats(t)` (same traffic: only the blocks differ).
fn lazy(
    m: usize,
    make: fn(usize, usize) -> Step,
    repeats: impl Fn(usize) -> bool + 'static,
) -> impl Iterator<Item = Lazy> {
    (0..m).map(move |t| {
        if repeats(t) {
            Lazy::Repeat(Box::new(move || make(m, t)))
        } else {
            Lazy::Made(make(m, t))
        }
    })
}

/// The Pipeline steps for `primitive` on `n = 8·m` ranks and the chunk count
/// (one chunk per block). Only AllReduce, ReduceScatter, AllGather.
pub fn steps(primitive: Primitive, n: usize) -> (usize, Vec<Step>) {
    let (chunks, s) = stream_lazy(primitive, n);
    (chunks, s.map(Lazy::make).collect())
}

/// [`steps`], each step made when the iterator reaches it; a step whose
/// traffic is its predecessor's comes as a [`Lazy::Repeat`]: AllGather
/// steps `1..m - 1` (ring + mesh, like step 0) and ReduceScatter steps
/// `2..m` (like step 1), so a 1024-rank AllReduce makes 4 of its 256
/// steps for the cost model.
pub fn stream_lazy(primitive: Primitive, n: usize) -> (usize, LazyIter) {
    let m = n / PER_SERVER;
    let rs = move || lazy(m, reduce_scatter_step, |t| t >= 2);
    let ag = move || lazy(m, all_gather_step, move |t| t >= 1 && t + 1 < m);
    let steps: LazyIter = match primitive {
        Primitive::AllGather => Box::new(ag()),
        Primitive::ReduceScatter => Box::new(rs()),
        _ => Box::new(rs().chain(ag())),
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

    /// The pipeline's loops hold a buffer per rank (`CalcLoopMaxCount`):
    /// 1024 ranks × 200 MiB = 200 GiB; ReduceScatter a third (24 × 200 MiB
    /// / 3 = 1600 MiB); other executors one buffer.
    #[test]
    fn pipeline_loops_hold_a_buffer_per_rank() {
        let buf = 200 << 20;
        assert_eq!(
            loop_bytes("pipeline", Primitive::AllReduce, 1024, buf),
            200 << 30
        );
        assert_eq!(
            loop_bytes("pipeline", Primitive::AllGather, 16, buf),
            3200 << 20
        );
        assert_eq!(
            loop_bytes("pipeline", Primitive::ReduceScatter, 24, buf),
            1600 << 20
        );
        assert_eq!(loop_bytes("hier-nhr", Primitive::AllReduce, 1024, buf), buf);
        assert_eq!(loop_bytes("mesh", Primitive::AllGather, 8, buf), buf);
    }

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

    #[test]
    fn a_1024_rank_allreduce_makes_4_of_its_256_steps() {
        // ReduceScatter steps 0 and 1, AllGather steps 0 and m - 1 are
        // made; the other 252 repeat their predecessor's traffic.
        let (_, s) = stream_lazy(Primitive::AllReduce, 1024);
        let made: Vec<usize> = s
            .enumerate()
            .filter(|(_, l)| matches!(l, Lazy::Made(_)))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(made, [0, 1, 128, 255]);
    }
}
