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
    bytes: u64,
    dtype: DType,
) -> Result<Option<Candidate>, TopologyError> {
    let Ok(schedule) = algorithm::build(algorithm, primitive, ranks) else {
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
    let mut per_link: HashMap<(usize, usize), u64> = HashMap::new();
    for (t, tt) in schedule
        .steps
        .iter()
        .flat_map(|s| s.transfers.iter())
        .zip(&estimate.timeline.transfers)
    {
        *per_link.entry((tt.link, t.src)).or_default() += tt.bytes;
    }
    Ok(Some(Candidate {
        algorithm,
        steps: schedule.steps.len(),
        latency_us,
        busiest_link_bytes: per_link.values().copied().max().unwrap_or(0),
        estimate,
    }))
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
/// winner.
///
/// Errors: [`TopologyError`] if the ranks do not fit the topology.
pub fn select(
    primitive: Primitive,
    topo: &Topology,
    ranks: usize,
    bytes: u64,
    dtype: DType,
) -> Result<Selection, TopologyError> {
    topo.check_ranks(ranks)?;
    let mut ranking = Vec::new();
    for a in Algorithm::ALL {
        if let Some(c) = candidate(a, primitive, topo, ranks, bytes, dtype)? {
            ranking.push(c);
        }
    }
    ranking.sort_by(|x, y| x.estimate.time_us.total_cmp(&y.estimate.time_us));
    let best = &ranking[0];
    let share = if best.estimate.time_us > 0.0 {
        best.latency_us / best.estimate.time_us
    } else {
        1.0
    };
    let bound = if share >= 0.5 {
        format!(
            "latency-bound: {:.0}% of its time is per-message latency",
            share * 100.0
        )
    } else {
        format!(
            "bandwidth-bound: {:.0}% of its time is moving data",
            (1.0 - share) * 100.0
        )
    };
    let mut reason = format!(
        "{} wins at {} on {} ranks ({bound}). ",
        best.algorithm,
        format_bytes(bytes),
        ranks
    );
    let parts: Vec<String> = ranking
        .iter()
        .map(|c| {
            format!(
                "{}: {} steps ({:.1} µs of latency), busiest link carries {} in all → {:.2} µs",
                c.algorithm,
                c.steps,
                c.latency_us,
                format_bytes(c.busiest_link_bytes),
                c.estimate.time_us
            )
        })
        .collect();
    reason.push_str(&parts.join("; "));
    reason.push('.');
    Ok(Selection { ranking, reason })
}
