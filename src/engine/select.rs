//! "auto": the cheapest predicted algorithm, with the ranking and the reason
//! in words.

use super::algorithm::{self, Algorithm};
use super::collective::Primitive;
use super::cost::{self, Estimate};
use super::dtype::DType;
use super::topology::{Topology, TopologyError};
use std::collections::HashMap;

/// One applicable algorithm and its prediction.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Its predicted time, algbw, busbw and timeline.
    pub estimate: Estimate,
    /// Number of steps.
    pub steps: usize,
    /// Time spent in per-message latency (sum over steps of the step's
    /// largest route α), µs.
    pub latency_us: f64,
    /// Most bytes any one link direction carries over the whole collective.
    pub busiest_link_bytes: u64,
    /// The link direction that needs longest to carry its bytes (bytes /
    /// bandwidth, every hop of every route counted): its bytes ...
    pub slowest_link_bytes: u64,
    /// ... its bandwidth, GB/s ...
    pub slowest_link_gbps: f64,
    /// ... and that time, µs: a lower bound of the data term.
    pub slowest_link_us: f64,
}

/// The result of "auto".
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// Every applicable algorithm, fastest first (ties: UI order).
    pub ranking: Vec<Candidate>,
    /// Why the first one wins, in words.
    pub reason: String,
}

impl Selection {
    /// The chosen (fastest) algorithm.
    pub fn chosen(&self) -> Algorithm {
        self.ranking[0].algorithm
    }
}

fn candidate(
    algorithm: Algorithm,
    primitive: Primitive,
    topo: &Topology,
    ranks: usize,
    root: usize,
    bytes: u64,
    dtype: DType,
) -> Result<Option<Candidate>, TopologyError> {
    let Ok(schedule) = algorithm::build_with_root(algorithm, primitive, ranks, root) else {
        return Ok(None);
    };
    let estimate = cost::estimate(&schedule, topo, bytes, dtype)?;
    let mut latency_us = 0.0;
    for (si, _) in schedule.steps.iter().enumerate() {
        let a = estimate
            .timeline
            .transfers
            .iter()
            .filter(|t| t.step == si)
            .map(|t| {
                estimate
                    .timeline
                    .routes
                    .get(t.route)
                    .map_or(topo.links[t.link].latency_us, |r| r.latency_us)
            })
            .fold(0.0, f64::max);
        latency_us += a;
    }
    // Bytes per link direction over the whole collective: the first loop's
    // transfers, scaled to the whole message (loops differ only in size).
    let tl = &estimate.timeline;
    let scale = if tl.loops > 1 && tl.loop_bytes > 0 {
        bytes as f64 / tl.loop_bytes as f64
    } else {
        1.0
    };
    let mut per_link: HashMap<(usize, bool), u64> = HashMap::new();
    for tt in &tl.transfers {
        let b = (tt.bytes as f64 * scale).round() as u64;
        match tl.routes.get(tt.route) {
            Some(r) => {
                for h in &r.hops {
                    *per_link.entry((h.link, h.forward)).or_default() += b;
                }
            }
            None => *per_link.entry((tt.link, true)).or_default() += b,
        }
    }
    let (mut slowest_link_bytes, mut slowest_link_gbps, mut slowest_link_us) = (0, 0.0, 0.0);
    for (&(link, _), &b) in &per_link {
        let gbps = topo
            .links
            .get(link)
            .map_or(f64::INFINITY, |l| l.bandwidth_gbps);
        let us = b as f64 / (gbps * 1e3);
        if us > slowest_link_us {
            (slowest_link_bytes, slowest_link_gbps, slowest_link_us) = (b, gbps, us);
        }
    }
    Ok(Some(Candidate {
        algorithm,
        steps: schedule.steps.len(),
        latency_us,
        busiest_link_bytes: per_link.values().copied().max().unwrap_or(0),
        slowest_link_bytes,
        slowest_link_gbps,
        slowest_link_us,
        estimate,
    }))
}

/// "latency-bound: 62% of its time is per-message latency" or
/// "bandwidth-bound: ...% of its time is moving data", for the share of a
/// predicted time spent in per-message latency (0..=1).
pub fn bound_phrase(latency_share: f64) -> String {
    if latency_share >= 0.5 {
        format!(
            "latency-bound: {:.0}% of its time is per-message latency",
            latency_share * 100.0
        )
    } else {
        format!(
            "bandwidth-bound: {:.0}% of its time is moving data",
            (1.0 - latency_share) * 100.0
        )
    }
}

/// Formats a byte count with binary units (`64 MiB`, `1.5 KiB`, `100 B`).
pub fn format_bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64;
    let mut u = "B";
    for unit in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        u = unit;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {u}", v.round())
    } else {
        format!("{v:.2} {u}")
    }
}

/// Ranks every algorithm that implements `primitive` on `ranks` ranks of
/// `topo` for `bytes` bytes of `dtype`, fastest first, and explains the
/// winner (root 0 for a rooted primitive; see [`select_with_root`]).
///
/// Errors: [`TopologyError`] if the ranks do not fit the topology.
pub fn select(
    primitive: Primitive,
    topo: &Topology,
    ranks: usize,
    bytes: u64,
    dtype: DType,
) -> Result<Selection, TopologyError> {
    select_with_root(primitive, topo, ranks, 0, bytes, dtype)
}

/// [`select`] with the root of a rooted primitive. The reason says whether
/// the winner is latency-bound or bandwidth-bound, whether it has the least
/// latency (steps × α) and the least data time on its slowest link of all
/// candidates, and lists every candidate's steps, latency, bytes on its
/// slowest link and predicted time.
///
/// Errors: [`TopologyError`] if the ranks do not fit the topology;
/// [`TopologyError::NoAlgorithm`] if no algorithm implements the primitive
/// on that many ranks (AlltoAllV above
/// [`super::collective::MAX_ALLTOALLV_RANKS`]).
pub fn select_with_root(
    primitive: Primitive,
    topo: &Topology,
    ranks: usize,
    root: usize,
    bytes: u64,
    dtype: DType,
) -> Result<Selection, TopologyError> {
    topo.check_ranks(ranks)?;
    let mut ranking = Vec::new();
    for a in Algorithm::ALL {
        if let Some(c) = candidate(a, primitive, topo, ranks, root, bytes, dtype)? {
            ranking.push(c);
        }
    }
    if ranking.is_empty() {
        return Err(TopologyError::NoAlgorithm {
            primitive: primitive.title().to_string(),
            ranks,
        });
    }
    ranking.sort_by(|x, y| x.estimate.time_us.total_cmp(&y.estimate.time_us));
    let best = &ranking[0];
    let share = if best.estimate.time_us > 0.0 {
        best.latency_us / best.estimate.time_us
    } else {
        1.0
    };
    let bound = bound_phrase(share);
    let least_latency = ranking
        .iter()
        .all(|c| best.latency_us <= c.latency_us + 1e-9);
    let least_data = ranking
        .iter()
        .all(|c| best.slowest_link_us <= c.slowest_link_us + 1e-9);
    let why = match (least_latency, least_data) {
        (true, true) => " It has both the least latency (steps × α) and the least data on its slowest link.".to_string(),
        (true, false) => " It is latency-optimal: the fewest steps × α of all candidates.".to_string(),
        (false, true) => format!(
            " It is bandwidth-optimal: its slowest link carries {} at {:.1} GB/s ({:.1} µs), the least of all candidates.",
            format_bytes(best.slowest_link_bytes),
            best.slowest_link_gbps,
            best.slowest_link_us
        ),
        (false, false) => " It balances latency and data best.".to_string(),
    };
    let mut reason = format!(
        "{} wins at {} on {} ranks ({bound}).{why} ",
        best.algorithm,
        format_bytes(bytes),
        ranks
    );
    let parts: Vec<String> = ranking
        .iter()
        .map(|c| {
            format!(
                "{}: {} steps ({:.1} µs of latency), slowest link carries {} at {:.1} GB/s ({:.1} µs) → {:.2} µs",
                c.algorithm,
                c.steps,
                c.latency_us,
                format_bytes(c.slowest_link_bytes),
                c.slowest_link_gbps,
                c.slowest_link_us,
                c.estimate.time_us
            )
        })
        .collect();
    reason.push_str(&parts.join("; "));
    reason.push('.');
    Ok(Selection { ranking, reason })
}
