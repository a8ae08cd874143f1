//! Stage 2, the decision: what `auto` runs (the library's rule, the
//! measured curve, or the model's fastest), the calibrated prediction
//! where one applies, the ranking rows, and which plans the page leaves
//! to the planner worker.

use super::estimate::estimate_source;
use super::estimate::stream;
use super::estimate::transfers_upper;
use super::estimate::{Built, Headline};
use super::Candidate;
use super::Decision;
use super::Method;
use super::Offload;
use super::PlanError;
use super::Scope;
use super::BUILD_BUDGET_TRANSFERS;
use crate::engine::algorithm::{self, Algorithm};
use crate::engine::calibrate::Profile;
use crate::engine::collective::Primitive;
use crate::engine::config::AlgoChoice;
use crate::engine::config::Config;
use crate::engine::config::MEASURED;
use crate::engine::cost;
use crate::engine::cost::Record;
use crate::engine::library::Call;
use crate::engine::library::Library;
use crate::engine::predict::Answer;
use crate::engine::predict::Calibration;
use crate::engine::schedule::Schedule;
use crate::engine::topology::Topology;

/// The rank counts `primitive` runs on, in words (AlltoAllV's `n²` blocks
/// cap it).
pub fn rank_limit(primitive: Primitive) -> String {
    match primitive {
        Primitive::AlltoAllV => format!(
            "AlltoAllV runs on 2..={} ranks (its per-pair counts make n² blocks)",
            crate::engine::collective::MAX_ALLTOALLV_RANKS
        ),
        p => format!("{} runs on 2 or more ranks", p.title()),
    }
}

/// The call a library's rule sees.
pub(super) fn call<'a>(config: &Config, topo: &'a Topology) -> Call<'a> {
    Call {
        topology: topo,
        primitive: config.primitive,
        ranks: config.ranks,
        bytes: config.bytes,
        nvls_ok: crate::engine::library::nccl::nvls_supported(
            config.primitive,
            config.dtype,
            config.redop,
        ),
        elem_bytes: config.dtype.size_bytes() as u64,
    }
}

/// Does the fitted profile of `config` measure exactly this call (the same
/// collective on the same number of ranks)? Returns the profile.
pub(super) fn measured_curve(config: &Config) -> Option<&Profile> {
    // The curve measured the healthy machine; a degraded one is simulated
    // (with the profile's link figures).
    if !config.faults.is_none() {
        return None;
    }
    let p = config.profile.as_ref()?;
    let same_op = p
        .collective
        .as_ref()
        .and_then(|c| c.primitive())
        .is_some_and(|x| x == config.primitive);
    (same_op && p.ranks == config.ranks).then_some(p)
}

/// The calibrated library model of `config`'s machine, where one applies:
/// a fitted profile's physical fit on the measured machine, or the
/// preset's own ([`Calibration::preset`]) on an NCCL machine (a preset's
/// link classes, or those read from a custom topology's links). HCCL and MPI machines: `None` (their
/// time is the schedule's simulation).
pub fn calibration(config: &Config, topo: &Topology) -> Option<Calibration> {
    if topo.library != Library::Nccl {
        return None;
    }
    if config.topo == MEASURED {
        return config.profile.as_ref()?.physical.clone();
    }
    if config.profile.is_some() {
        return None;
    }
    // A custom NCCL machine: its link classes read from its links.
    Some(Calibration::preset(topo.hardware.clone().unwrap_or_else(
        || crate::engine::library::nccl::hardware_of(topo),
    )))
}

/// The calibrated model's answer for an `auto` decision by the library's
/// rule on a healthy machine without compression (`None` elsewhere: a
/// fixed algorithm, a measured curve, faults and compression are the
/// schedule's).
pub(super) fn predicted(config: &Config, topo: &Topology, decision: &Decision) -> Option<Answer> {
    let by_rule = matches!(decision, Decision::Library { .. });
    if !by_rule || !config.faults.is_none() || config.compresses(config.bytes) {
        return None;
    }
    let cal = calibration(config, topo)?;
    let nvls_ok =
        crate::engine::library::nccl::nvls_supported(config.primitive, config.dtype, config.redop);
    Some(cal.answer_with(config.primitive, config.ranks, config.bytes, nvls_ok))
}

/// The segment of `p` whose fit `bytes` uses (the nearest one outside
/// every measured range).
pub(super) fn segment_of(p: &Profile, bytes: u64) -> usize {
    p.segments
        .iter()
        .position(|s| bytes <= s.last_bytes)
        .unwrap_or(p.segments.len().saturating_sub(1))
}

/// The estimate of one applicable algorithm as a ranking row.
pub(super) fn candidate(
    config: &Config,
    topo: &Topology,
    library: Library,
    a: Algorithm,
) -> Result<Candidate, PlanError> {
    let runs_in_library = library.runs(a, config.primitive) && allowed(topo, a);
    if transfers_upper(a, config.primitive, config.ranks) > BUILD_BUDGET_TRANSFERS {
        return Ok(Candidate {
            algorithm: a,
            runs_in_library,
            estimate: None,
            method: Method::Skipped,
            steps: 0,
            latency_us: 0.0,
        });
    }
    let s = stream(config, topo, a)?;
    // A row shows figures only: no per-transfer timeline, and no need to
    // hold the schedule whole.
    let (e, method, latency_us, steps) = estimate_source(
        &s,
        topo,
        config.bytes,
        config.dtype,
        config.slices,
        Record::Steps,
    )?;
    Ok(Candidate {
        algorithm: a,
        runs_in_library,
        estimate: Some(e),
        method,
        steps,
        latency_us,
    })
}

/// May `auto` on `topo` pick `a` (a custom topology's algorithm list)?
pub(super) fn allowed(topo: &Topology, a: Algorithm) -> bool {
    topo.algorithms.is_empty() || topo.algorithms.contains(&a)
}

/// The applicable algorithms of `config`, in UI order.
pub(super) fn applicable(config: &Config) -> Result<Vec<Algorithm>, PlanError> {
    let list = Algorithm::applicable(config.primitive, config.ranks);
    if list.is_empty() {
        return Err(PlanError::NoAlgorithm {
            primitive: config.primitive.title(),
            ranks: config.ranks,
            limit: rank_limit(config.primitive),
        });
    }
    Ok(list)
}

/// What `auto` decides for `config` on `topo`, and (for the model's
/// choice) the ranking it made to decide. The only definition of `auto`.
pub(super) fn decide_auto(
    config: &Config,
    topo: &Topology,
    library: Library,
) -> Result<(Algorithm, Decision, Option<Vec<Candidate>>), PlanError> {
    let list = applicable(config)?;
    if let Some((a, d)) = decide_by_rule(config, topo, library) {
        return Ok((a, d, None));
    }
    // The model's fastest among the allowed algorithms.
    let why = match library {
        Library::Model if topo.algorithms.is_empty() => {
            "this machine names no library, so auto takes the cost model's fastest".to_string()
        }
        Library::Model => format!(
            "this machine names no library, so auto takes the cost model's fastest of {}",
            topo.algorithms
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        l => format!(
            "{} has no algorithm in this catalogue for {} here, so auto takes the cost model's fastest",
            l.title(),
            config.primitive.title()
        ),
    };
    let pool: Vec<Algorithm> = {
        let p: Vec<Algorithm> = list.iter().copied().filter(|&a| allowed(topo, a)).collect();
        if p.is_empty() {
            list
        } else {
            p
        }
    };
    let mut rows = Vec::new();
    for a in pool {
        rows.push(candidate(config, topo, library, a)?);
    }
    sort(&mut rows);
    let best = rows
        .iter()
        .find(|c| c.estimate.is_some())
        .map(|c| c.algorithm)
        .unwrap_or(rows[0].algorithm);
    Ok((best, Decision::Model { why }, Some(rows)))
}

/// `auto`'s choice when the library has a rule for this call (measured
/// or not): no simulation. `None` where `auto` takes the model's fastest.
pub(super) fn decide_by_rule(
    config: &Config,
    topo: &Topology,
    library: Library,
) -> Option<(Algorithm, Decision)> {
    let c = library.choose(&call(config, topo))?;
    Some(match measured_curve(config) {
        Some(p) => (
            c.algorithm,
            Decision::Measured {
                segment: segment_of(p, config.bytes),
                drawn_why: c.why,
            },
        ),
        None => (c.algorithm, Decision::Library { why: c.why }),
    })
}

pub(super) fn sort(rows: &mut [Candidate]) {
    rows.sort_by(|x, y| {
        let (a, b) = (x.time_us(), y.time_us());
        match (a.is_nan(), b.is_nan()) {
            (false, false) => a.total_cmp(&b),
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            (true, true) => std::cmp::Ordering::Equal,
        }
    });
}

/// Why `auto` decided as it did, in one sentence.
pub(super) fn decision_why(d: &Decision) -> String {
    match d {
        Decision::Library { why } => why.clone(),
        Decision::Measured { .. } => "the fitted curve of the measured collective".into(),
        Decision::Model { why } => why.clone(),
        Decision::Fixed { .. } => String::new(),
    }
}

/// [`Offload::Fusion`], [`Offload::CompressedPipelined`] or
/// [`Offload::Pipelined`] where the drawn plan of `config` on `topo` would
/// run a pipelined simulation or a fusion view's many ranked buckets
/// (`schedule`: the one its estimate simulates).
pub(super) fn costly_estimate(
    config: &Config,
    topo: &Topology,
    schedule: Option<&Schedule>,
) -> Option<Offload> {
    let unsliced = cost::unsliced_by_rule(topo, config.slices);
    let fusion = config.primitive == Primitive::AllReduce && config.fusion_buckets().is_some();
    if fusion && (!unsliced || decide_by_rule(config, topo, topo.library).is_none()) {
        return Some(Offload::Fusion);
    }
    if unsliced {
        return None;
    }
    if config.compresses(config.bytes) {
        return Some(Offload::CompressedPipelined);
    }
    let s = schedule?;
    let k = cost::slicing(s, topo, config.bytes, config.dtype, config.slices).slices;
    (k > 1).then_some(Offload::Pipelined { slices: k })
}

/// What a plan runs: the algorithm, why, and for the model's fastest the
/// rows it ranked to decide (the ranking reuses them).
pub(super) struct Chosen {
    pub(super) algorithm: Algorithm,
    pub(super) decision: Decision,
    pub(super) model_rows: Option<Vec<Candidate>>,
}

/// The user's algorithm or `auto`'s, with what `auto` would pick as far as
/// `scope` asks. `None` when the page may offload and `auto` needs the
/// model's ranking (no library rule applies): the planner worker makes it.
///
/// Errors: [`PlanError::Algorithm`] (the user's algorithm does not
/// implement this call), [`PlanError`] from `auto`'s ranking.
pub(super) fn choose(
    config: &Config,
    topology: &Topology,
    scope: Scope,
    may_offload: bool,
) -> Result<Option<Chosen>, PlanError> {
    let library = topology.library;
    let a = match config.algo {
        AlgoChoice::Auto if may_offload && decide_by_rule(config, topology, library).is_none() => {
            return Ok(None)
        }
        AlgoChoice::Auto => {
            let (algorithm, decision, model_rows) = decide_auto(config, topology, library)?;
            return Ok(Some(Chosen {
                algorithm,
                decision,
                model_rows,
            }));
        }
        AlgoChoice::Fixed(a) => a,
    };
    if !a.supports(config.primitive, config.ranks) {
        return Err(unsupported(config, a));
    }
    let auto_would = match scope {
        Scope::Full => decide_auto(config, topology, library)
            .ok()
            .map(|(x, d, _)| (x, decision_why(&d))),
        // The library's rule is cheap; the model's fastest (no rule)
        // needs the ranking, which the worker makes.
        Scope::Drawn => {
            decide_by_rule(config, topology, library).map(|(x, d)| (x, decision_why(&d)))
        }
        Scope::Headline => None,
    };
    Ok(Some(Chosen {
        algorithm: a,
        decision: Decision::Fixed { auto_would },
        model_rows: None,
    }))
}

/// Why the user's algorithm `a` cannot run `config`: the builder's own
/// words where it has them.
fn unsupported(config: &Config, a: Algorithm) -> PlanError {
    match algorithm::build_on(
        a,
        config.primitive,
        config.ranks,
        config.root,
        &[config.ranks],
    ) {
        Err(e) => PlanError::Algorithm(e.to_string()),
        Ok(_) => PlanError::Algorithm(format!(
            "{a} does not implement {} on {} ranks",
            config.primitive.title(),
            config.ranks
        )),
    }
}

/// The ranking of every applicable algorithm: the chosen one's row is the
/// headline's own estimate (`own_row`: unless the headline is a measured
/// curve), the model's rows are reused, the rest estimated here.
///
/// Errors: [`PlanError`] of a row's estimate.
pub(super) fn rank(
    config: &Config,
    topology: &Topology,
    (chosen, own_row): (Algorithm, bool),
    head: &Headline,
    built: &Built,
    model_rows: Vec<Candidate>,
) -> Result<Vec<Candidate>, PlanError> {
    let library = topology.library;
    let mut ranking = Vec::new();
    for a in applicable(config)? {
        let row = if a == chosen && own_row {
            Candidate {
                algorithm: a,
                runs_in_library: library.runs(a, config.primitive) && allowed(topology, a),
                estimate: Some(head.estimate.clone()),
                method: head.method,
                steps: built
                    .schedule
                    .as_ref()
                    .map_or(head.walked_steps, |s| s.steps.len()),
                latency_us: head.latency_us,
            }
        } else if let Some(r) = model_rows.iter().find(|r| r.algorithm == a) {
            r.clone()
        } else {
            candidate(config, topology, library, a)?
        };
        ranking.push(row);
    }
    sort(&mut ranking);
    Ok(ranking)
}
