//! The cost model: alpha-beta-gamma per transfer, with link contention.
//!
//! Per transfer on link `l`: `α_l + bytes / B_l` (`B_l` the link's GB/s per
//! direction, `β = 1/B`); per reduce: `bytes / G` (`G` the device's reduce
//! throughput, `γ = 1/G`; none if the topology reduces inline).
//!
//! Steps are synchronous (a step starts when the previous one has ended on
//! every rank), which is how the closed forms count. Within a step, the
//! transfers that cross the same link in the same direction share its
//! bandwidth fairly (processor sharing): with flows `b_1..b_k` starting
//! together, flow `i` ends after `α + Σ_j min(b_j, b_i) / B`. A receiver
//! reduces its arrivals one after another in arrival order. Links are full
//! duplex. On an uncontended topology this equals the closed forms of
//! Thakur, Rabenseifner & Gropp (2005) and HCCL's `Mesh.md` exactly
//! ([`closed_form_us`]; tests assert it).
//!
//! Reported like nccl-tests (`doc/PERFORMANCE.md`): `algbw = S / t` in GB/s
//! (1e9 bytes), `busbw = algbw × factor` ([`Primitive::busbw_factor`]).

use super::algorithm::Algorithm;
use super::collective::Primitive;
use super::dtype::DType;
use super::schedule::{Schedule, TransferKind};
use super::topology::{Topology, TopologyError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// When one transfer runs on the modelled hardware.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransferTiming {
    /// Step index.
    pub step: usize,
    /// Index within the step's transfers.
    pub index: usize,
    /// Bytes moved.
    pub bytes: u64,
    /// The link it crosses (index into [`Topology::links`]).
    pub link: usize,
    /// Start, µs from the collective's start.
    pub start_us: f64,
    /// Arrival of the last byte, µs.
    pub end_us: f64,
    /// End of the receiver's reduce of this data (== `end_us` for a copy), µs.
    pub done_us: f64,
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

/// The modelled run: every step and transfer with start and end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// One entry per schedule step.
    pub steps: Vec<StepTiming>,
    /// One entry per transfer, in schedule order.
    pub transfers: Vec<TransferTiming>,
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
}

/// Predicts how long `schedule` takes for a message of `bytes` bytes of
/// `dtype` on `topo` (rank `r` on device `r`).
///
/// Errors: [`TopologyError`] if the ranks do not fit or two communicating
/// ranks have no link.
pub fn estimate(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
) -> Result<Estimate, TopologyError> {
    topo.check_ranks(schedule.ranks)?;
    let es = dtype.size_bytes() as u64;
    let elems = (bytes / es) as usize;
    let gamma = topo.reduce_gbps;
    let mut t0 = 0.0f64;
    let mut steps = Vec::with_capacity(schedule.steps.len());
    let mut transfers = Vec::with_capacity(schedule.transfer_count());
    for (si, step) in schedule.steps.iter().enumerate() {
        // Bytes and link of each transfer; flows per link direction.
        let mut flows: HashMap<(usize, bool), Vec<u64>> = HashMap::new();
        let mut info = Vec::with_capacity(step.transfers.len());
        for t in &step.transfers {
            let link = topo.require_link(t.src, t.dst)?;
            let b = schedule.range_elems(elems, t.first, t.count).len() as u64 * es;
            let forward = topo.links[link].a == t.src;
            flows.entry((link, forward)).or_default().push(b);
            info.push((link, forward, b));
        }
        let max_link_sharing = flows.values().map(|v| v.len()).max().unwrap_or(0);
        // Arrival times, then serial reduces per receiver in arrival order.
        let mut arrivals: Vec<(f64, usize)> = Vec::with_capacity(info.len());
        for (i, &(link, forward, b)) in info.iter().enumerate() {
            let l = &topo.links[link];
            let shared: u64 = flows[&(link, forward)].iter().map(|&x| x.min(b)).sum();
            arrivals.push((
                t0 + l.latency_us + shared as f64 / (l.bandwidth_gbps * 1e3),
                i,
            ));
        }
        let mut order: Vec<usize> = (0..info.len()).collect();
        order.sort_by(|&x, &y| arrivals[x].0.total_cmp(&arrivals[y].0).then(x.cmp(&y)));
        let mut busy_until: HashMap<usize, f64> = HashMap::new();
        let mut done = vec![0.0; info.len()];
        for i in order {
            let t = &step.transfers[i];
            let arrive = arrivals[i].0;
            done[i] = match (t.kind, gamma) {
                (TransferKind::Reduce, Some(g)) => {
                    let start = busy_until.get(&t.dst).copied().unwrap_or(t0).max(arrive);
                    let end = start + info[i].2 as f64 / (g * 1e3);
                    busy_until.insert(t.dst, end);
                    end
                }
                _ => arrive,
            };
        }
        let end = done.iter().copied().fold(t0, f64::max);
        for (i, &(link, _, b)) in info.iter().enumerate() {
            transfers.push(TransferTiming {
                step: si,
                index: i,
                bytes: b,
                link,
                start_us: t0,
                end_us: arrivals[i].0,
                done_us: done[i],
            });
        }
        steps.push(StepTiming {
            start_us: t0,
            end_us: end,
            max_link_sharing,
        });
        t0 = end;
    }
    let time_us = t0;
    let algbw_gbps = if time_us > 0.0 {
        bytes as f64 / (time_us * 1e3)
    } else {
        0.0
    };
    Ok(Estimate {
        bytes,
        time_us,
        algbw_gbps,
        busbw_gbps: algbw_gbps * schedule.primitive.busbw_factor(schedule.ranks),
        timeline: Timeline { steps, transfers },
    })
}

/// The uncontended closed form of `algorithm` for `primitive` on `n` ranks,
/// message `s` bytes, per-message latency `alpha_us`, link bandwidth
/// `bw_gbps` (β = 1/bw) and reduce throughput `reduce_gbps` (γ = 1/G, `None`
/// = 0). µs.
///
/// Sources (`../shared/reference/hardware-and-algorithms.md`):
/// - ring AllReduce `2(n-1)α + 2(n-1)/n·Sβ + (n-1)/n·Sγ`; ring RS
///   `(n-1)α + (n-1)/n·Sβ + (n-1)/n·Sγ`; ring AG `(n-1)α + (n-1)/n·Sβ`
///   (Thakur, Rabenseifner & Gropp 2005);
/// - mesh AllReduce `2α + 2·S/n·β + (n-1)/n·Sγ`; mesh RS `α + S/n·β +
///   (n-1)/n·Sγ`; mesh AG `α + S/n·β` (HCCL `Mesh.md`).
pub fn closed_form_us(
    algorithm: Algorithm,
    primitive: Primitive,
    n: usize,
    s: f64,
    alpha_us: f64,
    bw_gbps: f64,
    reduce_gbps: Option<f64>,
) -> f64 {
    let nf = n as f64;
    let beta = 1.0 / (bw_gbps * 1e3); // µs per byte
    let gamma = reduce_gbps.map_or(0.0, |g| 1.0 / (g * 1e3));
    let red = (nf - 1.0) / nf * s * gamma;
    match (algorithm, primitive) {
        (Algorithm::Ring, Primitive::AllReduce) => {
            2.0 * (nf - 1.0) * alpha_us + 2.0 * (nf - 1.0) / nf * s * beta + red
        }
        (Algorithm::Ring, Primitive::ReduceScatter) => {
            (nf - 1.0) * alpha_us + (nf - 1.0) / nf * s * beta + red
        }
        (Algorithm::Ring, Primitive::AllGather) => {
            (nf - 1.0) * alpha_us + (nf - 1.0) / nf * s * beta
        }
        (Algorithm::Mesh, Primitive::AllReduce) => 2.0 * alpha_us + 2.0 * s / nf * beta + red,
        (Algorithm::Mesh, Primitive::ReduceScatter) => alpha_us + s / nf * beta + red,
        (Algorithm::Mesh, Primitive::AllGather) => alpha_us + s / nf * beta,
    }
}
