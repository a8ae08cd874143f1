//! The cost model: alpha-beta-gamma per transfer, with link contention,
//! simulated event by event.
//!
//! ## The model
//! - A transfer from rank `s` to rank `d` follows its [`Route`] (the direct
//!   link, or a path through switches, [`Topology::route`]). It starts at
//!   its step's start, pays the route's latency `α` (sum of the hops'
//!   latencies), then moves its bytes through every hop of the route at the
//!   same rate.
//! - Links are full duplex: each direction of a link is its own resource of
//!   `B_l` GB/s (`β = 1/B`).
//! - Rates are **max-min fair** (progressive filling, Bertsekas & Gallager,
//!   *Data Networks*, §6.5.2): every flow gets the largest rate such that no
//!   link direction is over capacity and no flow could get more without
//!   taking from a flow that has less. Rates are recomputed at every event
//!   (a flow starting after its `α`, a flow finishing), which makes the
//!   simulation exact for piecewise-constant rates.
//! - A receiver reduces its arrivals one after another in arrival order at
//!   `G` GB/s (`γ = 1/G`; none if the topology reduces inline).
//! - Steps are synchronous: a step starts when the previous one has ended on
//!   every rank, which is how the closed forms count.
//! - Buffer loops: if the topology has a staging buffer
//!   ([`Topology::ccl_buffer_bytes`], HCCL's `HCCL_BUFFSIZE`), a message of
//!   `S` bytes runs as `ceil(S / buffer)` back-to-back loops of at most
//!   `buffer` bytes (whole elements), each a full run of the schedule.
//!
//! With one flow per link direction this reduces to `α + bytes / B` per
//! transfer and equals the closed forms of Thakur, Rabenseifner & Gropp
//! (2005) and HCCL's `Mesh.md` exactly ([`closed_form_us`]; tests assert
//! it). With `k` equal flows on one link direction each ends after
//! `α + k·bytes / B`.
//!
//! Reported like nccl-tests (`doc/PERFORMANCE.md`): `algbw = S / t` in GB/s
//! (1e9 bytes), `busbw = algbw × factor` ([`Primitive::busbw_factor`]).

use super::algorithm::Algorithm;
use super::collective::Primitive;
use super::dtype::DType;
use super::schedule::Schedule;
use super::topology::{Route, Topology, TopologyError};
use serde::{Deserialize, Serialize};

mod fast;
#[doc(hidden)]
pub mod reference;
mod sliced;
#[doc(hidden)]
pub use reference::estimate_sliced_reference;
pub use sliced::{
    choose as choose_slices, nccl_slice_bytes, Slices, Slicing, MAX_SLICES, NCCL_STEP_BYTES,
    SLICE_BUDGET,
};

/// When one transfer runs on the modelled hardware.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransferTiming {
    /// Step index.
    pub step: usize,
    /// Index within the step's transfers.
    pub index: usize,
    /// Bytes moved.
    pub bytes: u64,
    /// The link it crosses (index into [`Topology::links`]); for a route
    /// through switches, its first hop (see `route`); `usize::MAX` for a
    /// local copy or reduce (`src == dst`, no link).
    pub link: usize,
    /// Start, µs from the collective's start.
    pub start_us: f64,
    /// Arrival of the last byte, µs.
    pub end_us: f64,
    /// End of the receiver's reduce of this data (== `end_us` for a copy), µs.
    pub done_us: f64,
    /// Index into [`Timeline::routes`]: every link the transfer crosses.
    #[serde(default)]
    pub route: usize,
}

/// When one step runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepTiming {
    /// Start, µs.
    pub start_us: f64,
    /// End (every rank done), µs.
    pub end_us: f64,
    /// Most flows sharing one link direction in this step (1 = uncontended).
    pub max_link_sharing: usize,
}

/// One interval during which one direction of a link carries data.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkBusy {
    /// Index into [`Topology::links`].
    pub link: usize,
    /// `true` for the direction `a -> b`.
    pub forward: bool,
    /// Step index.
    pub step: usize,
    /// First byte enters the link, µs.
    pub start_us: f64,
    /// Last byte leaves the link, µs.
    pub end_us: f64,
    /// Flows that crossed it in this interval.
    pub flows: usize,
}

/// The modelled run: every step and transfer with start and end.
///
/// With buffer loops (`loops > 1`) the steps, transfers and link intervals
/// are those of the first loop (of `loop_bytes` bytes); the collective runs
/// `loops` such loops back to back (the last one possibly smaller), and
/// [`Estimate::time_us`] is their total.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// One entry per schedule step.
    pub steps: Vec<StepTiming>,
    /// One entry per transfer, in schedule order.
    pub transfers: Vec<TransferTiming>,
    /// The distinct routes the transfers take ([`TransferTiming::route`]).
    #[serde(default)]
    pub routes: Vec<Route>,
    /// Busy intervals of every link direction, per step, in step order.
    #[serde(default)]
    pub link_busy: Vec<LinkBusy>,
    /// Number of buffer loops (1 if the message fits the buffer).
    #[serde(default = "one")]
    pub loops: u64,
    /// Bytes of the first loop (== the message size if `loops == 1`).
    #[serde(default)]
    pub loop_bytes: u64,
}

fn one() -> u64 {
    1
}

/// The prediction for one collective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Message size S in bytes (nccl-tests' "size").
    pub bytes: u64,
    /// Predicted time, µs.
    pub time_us: f64,
    /// `S / t`, GB/s.
    pub algbw_gbps: f64,
    /// `algbw × factor`, GB/s.
    pub busbw_gbps: f64,
    /// The step-by-step timeline.
    pub timeline: Timeline,
    /// How many slices per transfer were simulated, and why
    /// ([`estimate_sliced`]).
    #[serde(default)]
    pub slicing: Slicing,
}

/// Predicts how long `schedule` takes for a message of `bytes` bytes of
/// `dtype` on `topo` (rank `r` on device `r`), by the event-driven
/// simulation described in the module doc, including buffer loops,
/// unsliced (`slices=1`: step-synchronous, equal to the closed forms).
///
/// Errors: [`TopologyError`] if the ranks do not fit, a link is malformed,
/// or two communicating ranks have no route.
pub fn estimate(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
) -> Result<Estimate, TopologyError> {
    estimate_sliced(schedule, topo, bytes, dtype, Slices::Fixed(1))
}

/// How much of the [`Timeline`] an estimate records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Record {
    /// Every step, transfer, route and link interval (what the page draws
    /// and animates).
    #[default]
    Full,
    /// The steps only ([`Timeline::transfers`], `routes` and `link_busy`
    /// left empty): what a total needs, with no memory per transfer
    /// (`cclsim predict`, the ranking, sweeps).
    Steps,
}

/// [`estimate`] with every transfer cut into slices that pipeline through
/// the steps (`slices`: `auto` = like the real library, or a count; the
/// rule, the caps and the pipelined model are in [`sliced`]'s doc,
/// `src/engine/cost/sliced.rs`). One slice is exactly [`estimate`]; the
/// count used and why are in [`Estimate::slicing`]. With buffer loops each
/// loop is sliced. Records the whole [`Timeline`] ([`Record::Full`]).
///
/// Errors: as [`estimate`].
pub fn estimate_sliced(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
) -> Result<Estimate, TopologyError> {
    estimate_recorded(schedule, topo, bytes, dtype, slices, Record::Full)
}

/// [`estimate_sliced`], recording as much of the [`Timeline`] as `record`
/// asks (times are the same either way). Unsliced (`k = 1`) loops run on
/// the fast step-synchronous simulator ([`fast`]: flat per-link arrays,
/// routes resolved once per rank pair, a step identical to the previous
/// one reused, max-min fair rates filled level by level); sliced ones on
/// the pipelined simulator ([`sliced`]). Both equal
/// [`reference::estimate_sliced_reference`] to 1e-9 relative
/// (`tests/sim_reference.rs`).
///
/// Errors: as [`estimate`].
pub fn estimate_recorded(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
    record: Record,
) -> Result<Estimate, TopologyError> {
    topo.check_ranks(schedule.ranks)?;
    topo.validate()?;
    let full = record == Record::Full;
    let es = dtype.size_bytes() as u64;
    let elems = bytes / es;
    // Buffer loops: whole elements per loop.
    let (loops, loop_elems) = match topo.ccl_buffer_bytes {
        Some(buf) if bytes > buf && buf >= es => {
            let per = buf / es;
            (elems.div_ceil(per), per)
        }
        _ => (1, elems),
    };
    let slicing = sliced::choose(schedule, topo, loop_elems, es, slices);
    let (k, w) = (slicing.slices as usize, slicing.window as usize);
    // The last step ends last when steps are synchronous; sliced steps
    // overlap, so take the latest end.
    let total = |t: &Timeline| t.steps.iter().map(|s| s.end_us).fold(0.0, f64::max);
    let (mut timeline, last_us) = if k > 1 {
        let sim = reference::Simulator::new(schedule, topo)?;
        let first = sim.run_sliced(loop_elems, es, k, w, slicing.slice_elems, full);
        let last = last_loop(elems, loops, loop_elems)
            .map(|e| total(&sim.run_sliced(e, es, k, w, slicing.slice_elems, false)));
        (first, last)
    } else {
        let sim = fast::Fast::new(schedule, topo)?;
        let first = sim.run(loop_elems, es, full);
        let last = last_loop(elems, loops, loop_elems).map(|e| total(&sim.run(e, es, false)));
        (first, last)
    };
    let first_us = total(&timeline);
    let mut time_us = first_us;
    if loops > 1 {
        time_us = (loops - 1) as f64 * first_us + last_us.unwrap_or(first_us);
    }
    timeline.loops = loops;
    timeline.loop_bytes = loop_elems * es;
    // A Barrier moves no payload: nccl-tests-style bandwidths are 0 for it.
    let algbw_gbps = if time_us > 0.0 && schedule.primitive != Primitive::Barrier {
        bytes as f64 / (time_us * 1e3)
    } else {
        0.0
    };
    Ok(Estimate {
        bytes,
        time_us,
        algbw_gbps,
        busbw_gbps: algbw_gbps * schedule.primitive.busbw_factor(schedule.ranks),
        timeline,
        slicing,
    })
}

/// Elements of the last buffer loop when it differs from the others.
fn last_loop(elems: u64, loops: u64, loop_elems: u64) -> Option<u64> {
    (loops > 1)
        .then(|| elems - (loops - 1) * loop_elems)
        .filter(|&e| e != loop_elems)
}

/// The uncontended closed form of `algorithm` for `primitive` on `n` ranks,
/// message `s` bytes, per-message latency `alpha_us`, link bandwidth
/// `bw_gbps` (β = 1/bw) and reduce throughput `reduce_gbps` (γ = 1/G, `None`
/// = 0). µs. `NaN` where the algorithm does not implement the primitive
/// (see [`closed_form`]).
pub fn closed_form_us(
    algorithm: Algorithm,
    primitive: Primitive,
    n: usize,
    s: f64,
    alpha_us: f64,
    bw_gbps: f64,
    reduce_gbps: Option<f64>,
) -> f64 {
    closed_form(algorithm, primitive, n, s, alpha_us, bw_gbps, reduce_gbps).unwrap_or(f64::NAN)
}

/// The uncontended closed form of every algorithm × primitive it
/// implements, in µs; `None` for a combination it does not implement.
/// Arguments as [`closed_form_us`]; `s` is nccl-tests' size
/// ([`super::collective`]), assumed to divide evenly into the schedule's
/// chunks. `L = ceil(log2 n)`.
///
/// Sources (`docs/hardware-and-algorithms.md`; Thakur,
/// Rabenseifner & Gropp 2005; HCCL `coll_algo_intro/*.md`), each also in
/// its algorithm's doc comment:
/// - ring AllReduce `2(n-1)α + 2(n-1)/n·Sβ + (n-1)/n·Sγ`; RS
///   `(n-1)α + (n-1)/n·S(β + γ)`; AG `(n-1)α + (n-1)/n·Sβ`; Barrier
///   `(n-1)α`; SendRecv `α + Sβ`;
/// - mesh AllReduce `2α + 2·S/n·β + (n-1)/n·Sγ`; RS `α + S/n·β +
///   (n-1)/n·Sγ`; AG `α + S/n·β`; Barrier `α`; Broadcast `2α + 2·S/n·β`;
///   Reduce `2α + 2·S/n·β + (n-1)/n·Sγ`; AlltoAll `α + S/n·β`; AlltoAllV
///   `α + max_{i≠j} c_ij·β`;
/// - rhd (`n = 2^L`) AllReduce `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`, RS
///   `Lα + (n-1)/n·S(β + γ)`, AG `Lα + (n-1)/n·Sβ`; other `n`, AllReduce
///   with `p' = 2^L'` the largest power of 2 below `n`: `(2L' + 2)α +
///   (2(p'-1)/p' + 2)·Sβ + ((p'-1)/p' + 1)·Sγ`;
/// - tree Broadcast `L(α + Sβ)`, Reduce `L(α + Sβ + Sγ)`, Scatter / Gather
///   `Σ_{m=2^j<n} (α + min(m, n-m)·S/n·β)`;
/// - star Broadcast `α + Sβ`, Reduce `α + Sβ + (n-1)·Sγ`, Scatter / Gather
///   `α + S/n·β`;
/// - pairwise AlltoAll `(n-1)(α + S/n·β)`, AlltoAllV `Σ_{k=1}^{n-1} (α +
///   max_r c_{r,r+k}·β)`;
/// - nb AG `Lα + (n-1)/n·Sβ`, RS `Lα + (n-1)/n·S(β + γ)`, AllReduce
///   `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`, Barrier `Lα`; AlltoAll (Bruck)
///   `Σ_{k<L} (α + c_k·S/n·β)`, `c_k = #{1 <= i < n : bit k of i set}`
///   (`Lα + L·S/2·β` for `n = 2^L`, the textbook form);
/// - nhr (HCCL `NHR.md`) as nb: AG `Lα + (n-1)/n·Sβ`, RS `Lα +
///   (n-1)/n·S(β + γ)`, AllReduce `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`,
///   Broadcast `2Lα + 2(n-1)/n·Sβ`;
/// - pipeline (HCCL `Pipeline.md` with one α and β, `S'` servers): AG
///   `S'(α + S/n·β)`, RS `S'(α + S/n·β) + (n-1)/n·Sγ`, AllReduce
///   `2S'(α + S/n·β) + (n-1)/n·Sγ`;
/// - dbtree AllReduce (one node: the chain) `2D·α + Σ_s m_s·S/2·β + Σ_s
///   k_s·S/2·γ` (tree depth `D`, per-step pair multiplicity `m_s` and
///   fan-in `k_s`, [`super::algorithm::dbtree::shape`]);
/// - ring Broadcast `(n-1)(α + Sβ)`, Reduce `(n-1)(α + Sβ + Sγ)` (chains);
/// - hier-nhr as hier with `ceil(log2 S')` instead of `S' - 1` inter-server
///   latencies per phase (same data terms);
/// - hier (`n = 8·S'` ranks, `S'` servers) AllReduce `2α + 2·S/8·β +
///   7/8·Sγ + 2(S'-1)(α + S/n·β) + (S'-1)·S/n·γ`, RS `α + S/8·β + 7/8·Sγ +
///   (S'-1)(α + S/n·(β + γ))`, AG `α + S/8·β + (S'-1)(α + S/n·β)`; with
///   `D = ceil(log2 S')`: Broadcast `(2 + D)(α + S/8·β)`, Reduce `(2 +
///   D)(α + S/8·β) + (7 + D)·S/8·γ`, Scatter / Gather `α + S/8·β + [S' >
///   1](α + S/n·β)`.
///
/// AlltoAllV's `c_ij = w(i,j)·S/Σw` bytes ([`super::collective::moe_weight`]).
pub fn closed_form(
    algorithm: Algorithm,
    primitive: Primitive,
    n: usize,
    s: f64,
    alpha_us: f64,
    bw_gbps: f64,
    reduce_gbps: Option<f64>,
) -> Option<f64> {
    use Primitive::*;
    if !algorithm.supports(primitive, n) {
        return None;
    }
    let nf = n as f64;
    let a = alpha_us;
    let beta = 1.0 / (bw_gbps * 1e3); // µs per byte
    let gamma = reduce_gbps.map_or(0.0, |g| 1.0 / (g * 1e3));
    let frac = (nf - 1.0) / nf;
    let red = frac * s * gamma;
    let l = (n.next_power_of_two().trailing_zeros()) as f64;
    let w_total: u64 = (0..n)
        .flat_map(|i| (0..n).map(move |j| super::collective::moe_weight(i, j)))
        .sum();
    let c = |i: usize, j: usize| super::collective::moe_weight(i, j) as f64 * s / w_total as f64;
    Some(match (algorithm, primitive) {
        (Algorithm::Ring, AllReduce) => 2.0 * (nf - 1.0) * a + 2.0 * frac * s * beta + red,
        (Algorithm::Ring, ReduceScatter) => (nf - 1.0) * a + frac * s * beta + red,
        (Algorithm::Ring, AllGather) => (nf - 1.0) * a + frac * s * beta,
        (Algorithm::Ring, Barrier) => (nf - 1.0) * a,
        (Algorithm::Ring, SendRecv) => a + s * beta,
        (Algorithm::Ring, Broadcast) => (nf - 1.0) * (a + s * beta),
        (Algorithm::Ring, Reduce) => (nf - 1.0) * (a + s * beta + s * gamma),
        (Algorithm::Mesh, AllReduce) => 2.0 * a + 2.0 * s / nf * beta + red,
        (Algorithm::Mesh, ReduceScatter) => a + s / nf * beta + red,
        (Algorithm::Mesh, AllGather) | (Algorithm::Mesh, AlltoAll) => a + s / nf * beta,
        (Algorithm::Mesh, Barrier) => a,
        (Algorithm::Mesh, Broadcast) => 2.0 * a + 2.0 * s / nf * beta,
        (Algorithm::Mesh, Reduce) => 2.0 * a + 2.0 * s / nf * beta + red,
        (Algorithm::Mesh, AlltoAllV) => {
            let max = (0..n)
                .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
                .map(|(i, j)| c(i, j))
                .fold(0.0, f64::max);
            a + max * beta
        }
        (Algorithm::Rhd, p) if n.is_power_of_two() => match p {
            AllReduce => 2.0 * l * a + 2.0 * frac * s * beta + red,
            ReduceScatter => l * a + frac * s * beta + red,
            _ => l * a + frac * s * beta,
        },
        (Algorithm::Rhd, _) => {
            let p = (n.next_power_of_two() / 2) as f64;
            let lp = p.log2();
            let pf = (p - 1.0) / p;
            (2.0 * lp + 2.0) * a + (2.0 * pf + 2.0) * s * beta + (pf + 1.0) * s * gamma
        }
        (Algorithm::Tree, Broadcast) => l * (a + s * beta),
        (Algorithm::Tree, Reduce) => l * (a + s * beta + s * gamma),
        (Algorithm::Tree, _) => {
            let mut t = 0.0;
            let mut m = 1;
            while m < n {
                t += a + m.min(n - m) as f64 * s / nf * beta;
                m *= 2;
            }
            t
        }
        (Algorithm::Star, Broadcast) => a + s * beta,
        (Algorithm::Star, Reduce) => a + s * beta + (nf - 1.0) * s * gamma,
        (Algorithm::Star, _) => a + s / nf * beta,
        (Algorithm::Pairwise, AlltoAll) => (nf - 1.0) * (a + s / nf * beta),
        (Algorithm::Pairwise, _) => (1..n)
            .map(|k| {
                let max = (0..n).map(|r| c(r, (r + k) % n)).fold(0.0, f64::max);
                a + max * beta
            })
            .sum(),
        (Algorithm::Nb, AllGather) => l * a + frac * s * beta,
        (Algorithm::Nb, ReduceScatter) => l * a + frac * s * beta + red,
        (Algorithm::Nb, Barrier) => l * a,
        (Algorithm::Nb, AlltoAll) => (0..l as usize)
            .map(|k| a + super::algorithm::nb::alltoall_blocks_at(n, k) as f64 * s / nf * beta)
            .sum(),
        (Algorithm::Nb, _) => 2.0 * l * a + 2.0 * frac * s * beta + red,
        (Algorithm::HierNhr, p) => {
            // As hier, with ceil(log2 S') inter-server steps per phase.
            let m = n / 8;
            let steps = m.next_power_of_two().trailing_zeros() as f64;
            let srv = (m as f64) - 1.0;
            let (intra, inter) = (s / 8.0, s / nf);
            match p {
                AllReduce => {
                    2.0 * a
                        + 2.0 * intra * beta
                        + 7.0 * intra * gamma
                        + 2.0 * steps * a
                        + srv * (2.0 * inter * beta + inter * gamma)
                }
                ReduceScatter => {
                    a + intra * beta
                        + 7.0 * intra * gamma
                        + steps * a
                        + srv * inter * (beta + gamma)
                }
                _ => a + intra * beta + steps * a + srv * inter * beta,
            }
        }
        (Algorithm::Hier, p) => {
            let srv = (n / 8) as f64 - 1.0;
            let (intra, inter) = (s / 8.0, s / nf);
            match p {
                AllReduce => {
                    2.0 * a
                        + 2.0 * intra * beta
                        + 7.0 * intra * gamma
                        + srv * (2.0 * a + 2.0 * inter * beta + inter * gamma)
                }
                ReduceScatter => {
                    a + intra * beta + 7.0 * intra * gamma + srv * (a + inter * (beta + gamma))
                }
                AllGather => a + intra * beta + srv * (a + inter * beta),
                Broadcast | Reduce => {
                    let d = super::algorithm::hier::tree_depth(n / 8) as f64;
                    let red = if p == Reduce {
                        (7.0 + d) * intra * gamma
                    } else {
                        0.0
                    };
                    (2.0 + d) * (a + intra * beta) + red
                }
                // Scatter, Gather.
                _ => a + intra * beta + if srv > 0.0 { a + inter * beta } else { 0.0 },
            }
        }
        (Algorithm::Nhr, p) => match p {
            AllGather => l * a + frac * s * beta,
            ReduceScatter => l * a + frac * s * beta + red,
            Broadcast => 2.0 * l * a + 2.0 * frac * s * beta,
            _ => 2.0 * l * a + 2.0 * frac * s * beta + red,
        },
        (Algorithm::Pipeline, p) => {
            let step = (n / 8) as f64 * (a + s / nf * beta);
            match p {
                AllGather => step,
                ReduceScatter => step + red,
                _ => 2.0 * step + red,
            }
        }
        (Algorithm::Dbtree, _) => {
            let (_, per) = super::algorithm::dbtree::shape(&[n]);
            per.iter()
                .map(|&(m, k)| a + m as f64 * s / 2.0 * beta + k as f64 * s / 2.0 * gamma)
                .sum()
        }
        // Unreachable: `supports` was checked above.
        (Algorithm::Ring, _) | (Algorithm::Mesh, _) => return None,
    })
}
