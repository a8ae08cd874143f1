//! The chart's curves: every applicable algorithm's busbw at each message
//! size, by the plan's own estimate ([`super::estimate_source`]) and
//! within the plan's budgets, so the sweep costs at most one pass over a
//! schedule's steps per size it simulates and one walk per machine it
//! bounds, whatever the rank count (the page's chart, and the tests).
//! On a machine with a calibrated library model ([`super::calibration`]),
//! also that model's prediction at each size with its 80 % range and the
//! library's own belief ([`prediction_curve`]).

use super::decide::{applicable, calibration};
use super::estimate::{estimate_walk, stream, transfers_upper};
use super::machine::machine;
use super::{Bound, PlanError, BUILD_BUDGET_TRANSFERS};
use crate::engine::algorithm::Algorithm;
use crate::engine::config::{AlgoChoice, Config};
use crate::engine::cost::{Record, SimBudget};
use crate::engine::topology::Topology;
use serde::{Deserialize, Serialize};

/// Most transfers a curve simulates per size (counting, as the plan does,
/// only the steps not equal to their predecessor); a schedule above it is
/// drawn with its [`Bound`] (dashed), walked once per machine. 21 sizes ×
/// 8 algorithms × this many transfers is what a chart costs at most in
/// simulation; a ring AllReduce up to 2048 ranks (two steps made per
/// loop) is within it.
pub const SWEEP_SIM_TRANSFERS: usize = 4_096;

/// Most transfers a curve's schedule may hand out made (not repeats) to be
/// walked again at each size: a larger one (mesh on 1024 ranks, a million
/// transfers a step) is walked once per machine and its [`Bound`] serves
/// every size.
pub const SWEEP_REWALK_TRANSFERS: usize = 65_536;

/// One algorithm's busbw curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// `(bytes, busbw GB/s)` per size (a size whose machine does not
    /// apply is left out).
    pub points: Vec<(u64, f64)>,
    /// Some point is the [`Bound`], not a simulation.
    pub bound: bool,
    /// Why the curve has no points: its schedule is above the plan's
    /// budgets ([`BUILD_BUDGET_TRANSFERS`], [`super::WALK_BUDGET_TRANSFERS`]).
    pub skipped: Option<String>,
    /// Passes over the schedule's steps the curve took (a simulation or a
    /// bound's walk each): at most one per size, and one per machine for a
    /// schedule above [`SWEEP_REWALK_TRANSFERS`].
    pub passes: usize,
    /// Transfers the passes walked (made steps'), summed: the curve's work
    /// (the tests check it stays bounded).
    pub walked: usize,
}

/// The sizes the page's chart sweeps: 1 KiB, 2 KiB, … 1 GiB.
pub fn chart_sizes() -> Vec<u64> {
    (10..=30).map(|k| 1u64 << k).collect()
}

/// What the curves of `config` depend on: the configuration without its
/// message size, algorithm choice, seed, reduce op and what-ifs (the
/// chart's curves are uncompressed headline estimates, [`super::Plan::at`]).
/// Equal keys, equal curves: the page sweeps again only when it changes.
pub fn sweep_key(config: &Config) -> Config {
    let d = Config::default();
    Config {
        bytes: d.bytes,
        algo: AlgoChoice::Auto,
        seed: d.seed,
        redop: d.redop,
        compress: d.compress,
        placement: d.placement,
        grad: d.grad,
        fusion: d.fusion,
        bucket: d.bucket,
        compress_min: d.compress_min,
        ..config.clone()
    }
}

/// Every applicable algorithm's curve of `config` at `sizes`
/// ([`sweep_curve`] each, in UI order); an algorithm whose schedule cannot
/// be made for this call (e.g. not on these nodes) has no curve.
///
/// Errors: [`PlanError::NoAlgorithm`] (nothing applies).
pub fn sweep_curves(config: &Config, sizes: &[u64]) -> Result<Vec<Curve>, PlanError> {
    let mut out = Vec::new();
    for a in applicable(config)? {
        if let Some(c) = sweep_curve(config, a, sizes) {
            out.push(c);
        }
    }
    Ok(out)
}

/// Algorithm `a`'s curve of `config` at `sizes`, each point the plan's
/// estimate of that size (its machine at the size, [`machine`]; uncompressed,
/// with the configured slicing) simulated within [`SWEEP_SIM_TRANSFERS`],
/// else the [`Bound`] of the one walk made on that machine. `None` if `a`
/// cannot be made for this call.
pub fn sweep_curve(config: &Config, a: Algorithm, sizes: &[u64]) -> Option<Curve> {
    let mut curve = Curve {
        algorithm: a,
        points: Vec::with_capacity(sizes.len()),
        bound: false,
        skipped: None,
        passes: 0,
        walked: 0,
    };
    let (p, n) = (config.primitive, config.ranks);
    if transfers_upper(a, p, n) > BUILD_BUDGET_TRANSFERS {
        curve.skipped = Some(format!(
            "{a} for {} on {n} ranks could hold {} transfers (at most {BUILD_BUDGET_TRANSFERS} are modelled per curve)",
            p.title(),
            transfers_upper(a, p, n)
        ));
        return Some(curve);
    }
    let budget = SimBudget {
        transfers: SWEEP_SIM_TRANSFERS,
        step_transfers: SWEEP_SIM_TRANSFERS,
    };
    let mut source = None;
    // The last machine walked and its bound, once a pass was too large to
    // repeat per size.
    let mut walked: Option<(Topology, Bound)> = None;
    for &b in sizes {
        let mut at = config.clone();
        at.bytes = b;
        let Ok(topo) = machine(&at) else {
            continue;
        };
        if source.is_none() {
            match stream(config, &topo, a) {
                Ok(s) => source = Some(s),
                Err(PlanError::Algorithm(_)) => return None,
                Err(e) => {
                    curve.skipped = Some(e.to_string());
                    return Some(curve);
                }
            }
        }
        let Some(st) = &source else {
            return None;
        };
        if let Some((_, bound)) = walked.as_ref().filter(|(t, _)| *t == topo) {
            curve
                .points
                .push((b, bound.estimate(b, config.dtype).0.busbw_gbps));
            curve.bound = true;
            continue;
        }
        curve.passes += 1;
        let Ok(w) = estimate_walk(
            st,
            &topo,
            b,
            config.dtype,
            config.slices,
            Record::Steps,
            budget,
        ) else {
            continue;
        };
        curve.walked += w.made;
        curve.points.push((b, w.estimate.busbw_gbps));
        if w.method == super::Method::Bound {
            curve.bound = true;
            if w.made > SWEEP_REWALK_TRANSFERS {
                // Too large to walk per size: its bound from here on.
                walked = Some((topo, w.bound));
            }
        }
    }
    Some(curve)
}

/// The calibrated library model's answer at one size of the chart, as
/// busbw ([`prediction_curve`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictedPoint {
    /// Message size, bytes.
    pub bytes: u64,
    /// Predicted busbw, GB/s.
    pub busbw_gbps: f64,
    /// Low end of the 80 % range, GB/s (the busbw of the range's longest
    /// time).
    pub low_gbps: f64,
    /// High end of the 80 % range, GB/s (of its shortest time).
    pub high_gbps: f64,
    /// The busbw NCCL's own tuning model believes (its constants, no
    /// correction); `None` where NCCL has no model for the call (grouped
    /// send/recv).
    pub library_gbps: Option<f64>,
    /// What runs at this size, in NCCL's words (`Tree/LL`).
    pub runs: String,
}

/// The calibrated prediction of `config`'s collective at each of `sizes`
/// (bytes; a zero size is left out): on the machine of `config`
/// ([`machine`]), where [`super::calibration`] has a model for it. `None`
/// elsewhere: an HCCL or MPI machine, a profile applied to a preset's
/// links, a machine that cannot be made, a Barrier (no bytes, no busbw),
/// and a degraded machine (faults), which the model does not predict.
pub fn prediction_curve(config: &Config, sizes: &[u64]) -> Option<Vec<PredictedPoint>> {
    if !config.faults.is_none() {
        return None;
    }
    let topo = machine(config).ok()?;
    prediction_curve_on(config, &topo, sizes)
}

/// [`prediction_curve`] on `topo`, the machine of `config` already made
/// (the page has its plan's): the calibration needs only its library and
/// hardware, whatever its link figures at the plan's size.
pub fn prediction_curve_on(
    config: &Config,
    topo: &Topology,
    sizes: &[u64],
) -> Option<Vec<PredictedPoint>> {
    if !config.faults.is_none() {
        return None;
    }
    let factor = config.primitive.busbw_factor(config.ranks);
    if factor <= 0.0 {
        return None;
    }
    let cal = calibration(config, topo)?;
    let busbw = |bytes: u64, us: f64| {
        if us > 0.0 && us.is_finite() {
            bytes as f64 / (us * 1e3) * factor
        } else {
            0.0
        }
    };
    Some(
        sizes
            .iter()
            .filter(|&&b| b > 0)
            .map(|&b| {
                let a = cal.answer(config.primitive, config.ranks, b);
                PredictedPoint {
                    bytes: b,
                    busbw_gbps: busbw(b, a.time_us),
                    low_gbps: busbw(b, a.high_us),
                    high_gbps: busbw(b, a.low_us),
                    library_gbps: a.library_us.map(|us| busbw(b, us)),
                    runs: a.runs,
                }
            })
            .collect(),
    )
}
