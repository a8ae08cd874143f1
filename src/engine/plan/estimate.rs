//! Stage 4, the estimate: the event simulation within its budget, else the
//! per-step bound, of a schedule built whole or streamed step by step; the
//! budgets that decide how a schedule is held.

use super::bound::{Bound, BoundWalk};
use super::Method;
use super::PlanError;
use super::BUILD_BUDGET_TRANSFERS;
use super::SIM_BUDGET_STEP_TRANSFERS;
use super::SIM_BUDGET_TRANSFERS;
use super::WALK_BUDGET_TRANSFERS;
use super::{Scope, MAX_DRAWN_RANKS, MAX_RECORDED_TRANSFERS};
use crate::engine::algorithm;
use crate::engine::algorithm::Algorithm;
use crate::engine::algorithm::Streamed;
use crate::engine::collective::Primitive;
use crate::engine::config::Config;
use crate::engine::cost;
use crate::engine::cost::Estimate;
use crate::engine::cost::Record;
use crate::engine::cost::SimBudget;
use crate::engine::cost::Slices;
use crate::engine::cost::Timeline;
use crate::engine::dtype::DType;
use crate::engine::schedule::Next;
use crate::engine::schedule::Schedule;
use crate::engine::schedule::Step;
use crate::engine::schedule::StepSource;
use crate::engine::topology::Topology;
use crate::engine::verify;
use crate::engine::verify::Verified;

/// An upper bound of the transfers of `algorithm`'s schedule for
/// `primitive` on `n` ranks, without building it (a test checks it against
/// every built schedule up to 64 ranks).
pub fn transfers_upper(algorithm: Algorithm, primitive: Primitive, n: usize) -> usize {
    use Algorithm::*;
    use Primitive::*;
    let l = n.next_power_of_two().trailing_zeros() as usize + 1;
    let m = n / 8 + 1;
    match algorithm {
        Ring => match primitive {
            AllReduce => 2 * n * n,
            Broadcast | Reduce | SendRecv => n,
            _ => n * n,
        },
        Mesh | Pairwise => 2 * n * n,
        Nb if primitive == AlltoAll => 2 * n * n,
        Rhd | Tree | Nb => 8 * n * l,
        Star => 2 * n,
        Dbtree => 4 * n,
        Hier | HierNhr | Pipeline => 128 * m * m + 128 * m,
        Nhr => 2 * n * n + 4 * n * l,
    }
}

/// An upper bound of the transfers a streamed estimate of `algorithm`'s
/// schedule for `primitive` on `n` ranks holds at once, without building
/// it (a test checks it against the widest step of every built schedule
/// up to 64 ranks): `n` for a ring, `64·(n/8 + 1)` for `hier`'s
/// AllReduce (its intra-server steps), that or [`SIM_BUDGET_TRANSFERS`]
/// for `hier-nhr`'s AllReduce (its level1 shifts are made only to be
/// simulated), `64·(n/8 + 1)` for `pipeline` (8 ring and 56 mesh sends per
/// server a step), else [`transfers_upper`].
pub fn step_transfers_upper(algorithm: Algorithm, primitive: Primitive, n: usize) -> usize {
    match algorithm {
        Algorithm::Ring => n,
        Algorithm::Hier if primitive == Primitive::AllReduce => 64 * (n / 8 + 1),
        // Its level1 steps are shifts (`Next::Shift`), made only to be
        // simulated: one within SIM_BUDGET_STEP_TRANSFERS, or the whole
        // schedule within SIM_BUDGET_TRANSFERS where the simulation needs
        // it built; the other made steps are the intra-server ones.
        Algorithm::HierNhr if primitive == Primitive::AllReduce => {
            (64 * (n / 8 + 1)).max(SIM_BUDGET_TRANSFERS)
        }
        // A step holds, per server, 8 ring sends and 8 × 7 mesh sends.
        Algorithm::Pipeline => 64 * (n / 8 + 1),
        _ => transfers_upper(algorithm, primitive, n),
    }
}

/// The estimate of `schedule`: simulated with `slices` if it fits the
/// budget, else the [`Bound`]; and the per-message latency in it, µs.
///
/// Errors: [`PlanError::Model`] (no route between two ranks).
pub fn estimate(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
) -> Result<(Estimate, Method, f64), PlanError> {
    estimate_recorded(schedule, topo, bytes, dtype, slices, Record::Full)
}

/// [`estimate`], recording as much of a simulated [`Timeline`] as `record`
/// asks ([`Record::Steps`]: no memory per transfer; the figures are the
/// same).
///
/// Errors: [`PlanError::Model`] (no route between two ranks).
pub fn estimate_recorded(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
    record: Record,
) -> Result<(Estimate, Method, f64), PlanError> {
    let (e, m, l, _) = estimate_source(schedule, topo, bytes, dtype, slices, record)?;
    Ok((e, m, l))
}

/// [`estimate_recorded`] of a built or streamed schedule ([`StepSource`]),
/// in one pass over its steps: the [`Bound`]'s walk and, where the
/// unsliced fast simulator applies ([`cost::Streaming`]), the simulation,
/// which gives up (and the bound is the estimate) once the steps it had
/// to simulate, those not equal to their predecessor, exceed
/// [`SIM_BUDGET_TRANSFERS`] in a loop or [`SIM_BUDGET_STEP_TRANSFERS`] in
/// one step. Sliced and slow / late-device simulations see every transfer
/// of the built schedule, so there the budget counts them all. Also
/// returns the number of steps.
///
/// Errors: [`PlanError::Model`] (no route between two ranks).
pub fn estimate_source(
    source: &dyn StepSource,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
    record: Record,
) -> Result<(Estimate, Method, f64, usize), PlanError> {
    let budget = SimBudget {
        transfers: SIM_BUDGET_TRANSFERS,
        step_transfers: SIM_BUDGET_STEP_TRANSFERS,
    };
    let w = estimate_walk(source, topo, bytes, dtype, slices, record, budget)?;
    Ok((w.estimate, w.method, w.latency_us, w.steps))
}

/// What [`estimate_walk`] found.
pub(super) struct Walked {
    pub(super) estimate: Estimate,
    pub(super) method: Method,
    pub(super) latency_us: f64,
    pub(super) steps: usize,
    /// The bound its walk made (valid for any size on this machine).
    pub(super) bound: Bound,
    /// Transfers of the steps it was handed made ([`Next::Step`]): what
    /// the walk cost.
    pub(super) made: usize,
}

/// [`estimate_source`] within `budget` of simulated transfers (the plan's,
/// or the chart sweep's smaller one).
pub(super) fn estimate_walk(
    source: &dyn StepSource,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
    record: Record,
    budget: SimBudget,
) -> Result<Walked, PlanError> {
    let model = |e: String| PlanError::Model(e);
    let header = source.header();
    let mut sim = cost::Streaming::new(header, topo, bytes, dtype, slices, record, Some(budget))
        .map_err(|e| model(e.to_string()))?;
    let mut walk = BoundWalk::new(topo);
    let (mut total, mut widest, mut steps, mut made) = (0usize, 0usize, 0usize, 0usize);
    // Transfers of the last step (a repeat has as many).
    let mut width = 0usize;
    let mut err = None;
    source.each_next(&mut |next| {
        let walked = match next {
            Next::Step(st) => {
                width = st.transfers.len();
                made += width;
                walk.step(st).map_err(model).and_then(|()| match &mut sim {
                    Some(s) => s.step(st).map(|_| ()).map_err(|e| model(e.to_string())),
                    None => Ok(()),
                })
            }
            // Neither the bound's walk nor a simulation over budget makes
            // a complete exchange or a shift; one that is simulated is
            // made once.
            Next::Exchange { ranks, count, make } => {
                width = ranks * ranks.saturating_sub(1);
                match made_if_simulated(&mut sim, width, make) {
                    Some(st) => {
                        made += width;
                        walk_made(&mut walk, &mut sim, &st)
                    }
                    None => walk.exchange(ranks, count, make).map_err(model).map(|m| {
                        if m {
                            made += width;
                        }
                    }),
                }
            }
            Next::Shift {
                ranks,
                shift,
                count,
                width: w,
                make,
            } => {
                width = w;
                // The walk never needs the shift made (`BoundWalk::shift`
                // equals its walk of the made step to the bit).
                let made_step = made_if_simulated(&mut sim, width, make);
                walk.shift(ranks, shift, count)
                    .map_err(model)
                    .and_then(|()| match (made_step, &mut sim) {
                        (Some(st), Some(s)) => {
                            made += width;
                            s.step(&st).map(|_| ()).map_err(|e| model(e.to_string()))
                        }
                        _ => Ok(()),
                    })
            }
            // Neither the walk nor the simulation makes the step unless
            // it must (the first step, or chunks of unequal sizes).
            Next::Repeat(make) => walk
                .repeat(make)
                .map_err(model)
                .and_then(|()| match &mut sim {
                    Some(s) => s.repeat(make).map(|_| ()).map_err(|e| model(e.to_string())),
                    None => Ok(()),
                }),
        };
        if let Err(e) = walked {
            err = Some(e);
            return false;
        }
        total += width;
        widest = widest.max(width);
        steps += 1;
        true
    });
    if let Some(e) = err {
        return Err(e);
    }
    let bound = walk.finish(header);
    let (b, latency_us, _) = bound.estimate(bytes, dtype);
    let simulated = match sim {
        Some(s) => s.finish(),
        None if total <= budget.transfers && widest <= budget.step_transfers => Some(
            cost::estimate_recorded(&source.to_schedule(), topo, bytes, dtype, slices, record)
                .map_err(|e| model(e.to_string()))?,
        ),
        None => None,
    };
    let (estimate, method) = match simulated {
        Some(e) => (e, Method::Simulated),
        None => (b, Method::Bound),
    };
    Ok(Walked {
        estimate,
        method,
        latency_us,
        steps,
        bound,
        made,
    })
}

/// The step `make` makes if the streamed simulation `sim` would simulate a
/// step of `width` transfers; else `None`, and a simulation gives up (the
/// step is too wide for its budget, or it was over already).
pub(super) fn made_if_simulated(
    sim: &mut Option<cost::Streaming<'_>>,
    width: usize,
    make: &mut dyn FnMut() -> Step,
) -> Option<Step> {
    match sim {
        Some(s) if s.takes(width) => Some(make()),
        Some(s) => {
            s.give_up();
            None
        }
        None => None,
    }
}

/// Feeds a made step to the bound's walk and the simulation.
pub(super) fn walk_made(
    walk: &mut BoundWalk<'_>,
    sim: &mut Option<cost::Streaming<'_>>,
    st: &Step,
) -> Result<(), PlanError> {
    walk.step(st).map_err(PlanError::Model)?;
    match sim {
        Some(s) => s
            .step(st)
            .map(|_| ())
            .map_err(|e| PlanError::Model(e.to_string())),
        None => Ok(()),
    }
}

/// An [`Estimate`] made of a time alone (no timeline).
pub(super) fn estimate_of_time(
    bytes: u64,
    time_us: f64,
    primitive: Primitive,
    ranks: usize,
) -> Estimate {
    let timeline = Timeline {
        steps: Vec::new(),
        transfers: Vec::new(),
        routes: Vec::new(),
        link_busy: Vec::new(),
        loops: 1,
        loop_bytes: bytes,
    };
    Estimate::new(
        bytes,
        time_us,
        primitive,
        ranks,
        timeline,
        Default::default(),
    )
}

/// The steps of `a` for `config`, made on demand.
///
/// Errors: [`PlanError::Algorithm`] (it does not apply);
/// [`PlanError::Model`] if one of its steps could exceed
/// [`BUILD_BUDGET_TRANSFERS`] (held at once) or all of them
/// [`WALK_BUDGET_TRANSFERS`] (walked).
pub(super) fn stream(
    config: &Config,
    topo: &Topology,
    a: Algorithm,
) -> Result<Streamed, PlanError> {
    let (p, n) = (config.primitive, config.ranks);
    let (step, all) = (step_transfers_upper(a, p, n), transfers_upper(a, p, n));
    if step > BUILD_BUDGET_TRANSFERS || all > WALK_BUDGET_TRANSFERS {
        return Err(PlanError::Model(format!(
            "{a} for {} on {n} ranks is not modelled here: its schedule could hold {step} transfers in one step (at most {BUILD_BUDGET_TRANSFERS} are held at once) and {all} in all (at most {WALK_BUDGET_TRANSFERS} are walked)",
            p.title()
        )));
    }
    algorithm::stream_on(a, p, n, config.root, &topo.nodes_of(n))
        .map_err(|e| PlanError::Algorithm(e.to_string()))
}

/// `s`'s symbolic verification, `algorithm`'s schedule.
///
/// Errors: [`PlanError::Verify`] (a bug, never user input).
pub(super) fn verify_schedule(s: &Schedule, algorithm: Algorithm) -> Result<Verified, PlanError> {
    verify::verify(s).map_err(|e| PlanError::Verify {
        algorithm,
        why: e.to_string(),
    })
}

/// The chosen algorithm's schedule as the plan holds it: streamed step by
/// step, and built whole where something needs every step at once.
pub(super) struct Built {
    pub(super) streamed: Option<Streamed>,
    pub(super) schedule: Option<Schedule>,
}

/// The schedule of `algorithm` for `config`: none when the headline is a
/// time alone (`by_time`: a measured curve or a prediction) above the
/// drawn ranks; held whole for the drawn page, the verifier and
/// compression, and for a model-only plan small enough to record transfer
/// by transfer ([`MAX_RECORDED_TRANSFERS`]: a trace can be written of
/// it); else streamed (pipeline at 1024 ranks has 2.6 M transfers).
///
/// Errors: [`PlanError`] of the builder, and [`PlanError::Model`] for a
/// compressed estimate of a schedule too large to hold.
pub(super) fn build(
    config: &Config,
    topology: &Topology,
    scope: Scope,
    algorithm: Algorithm,
    by_time: bool,
) -> Result<Built, PlanError> {
    let drawn = config.ranks <= MAX_DRAWN_RANKS;
    let need_schedule = !by_time || (scope.detailed() && drawn);
    let streamed = if need_schedule {
        Some(stream(config, topology, algorithm)?)
    } else {
        None
    };
    let upper = transfers_upper(algorithm, config.primitive, config.ranks);
    if let (Some(st), true) = (&streamed, config.compresses(config.bytes)) {
        check_compressible(config, algorithm, st, upper)?;
    }
    let keep = drawn
        || config.compresses(config.bytes)
        || (scope.detailed() && upper <= MAX_RECORDED_TRANSFERS);
    let schedule = match (&streamed, keep) {
        (Some(st), true) => Some(st.build()),
        _ => None,
    };
    Ok(Built { streamed, schedule })
}

/// The compressed estimate simulates the whole schedule: refuse one too
/// large to hold (ring on 8192 ranks: 134 M transfers, ~6 GB) instead of
/// building it; counted only where the upper bound says it might be
/// (hier's bound is loose).
fn check_compressible(
    config: &Config,
    algorithm: Algorithm,
    st: &Streamed,
    upper: usize,
) -> Result<(), PlanError> {
    let count = if upper > BUILD_BUDGET_TRANSFERS {
        st.transfer_count()
    } else {
        0
    };
    if count > BUILD_BUDGET_TRANSFERS {
        return Err(PlanError::Model(format!(
            "compress={}: the compressed estimate simulates the whole schedule, and {algorithm} for {} on {} ranks has {count} transfers (at most {BUILD_BUDGET_TRANSFERS} are held); allowed here: compress=none, fewer ranks, or an algorithm with fewer transfers",
            config.compress.scheme.name(),
            config.primitive.title(),
            config.ranks
        )));
    }
    Ok(())
}

/// The headline estimate of the chosen algorithm, before compression.
pub(super) struct Headline {
    pub(super) estimate: Estimate,
    pub(super) method: Method,
    /// Per-message latency in it, µs.
    pub(super) latency_us: f64,
    /// The steps the estimate walked when it streamed them (0 otherwise).
    pub(super) walked_steps: usize,
}

/// A headline that is a time alone (a measured curve or a prediction),
/// with the drawn schedule's modelled timeline for the animation.
pub(super) fn by_time_alone(
    config: &Config,
    topology: &Topology,
    scope: Scope,
    built: &Built,
    time_us: f64,
    latency_us: f64,
    method: Method,
) -> Headline {
    let mut e = estimate_of_time(config.bytes, time_us, config.primitive, config.ranks);
    if let (Some(s), true) = (&built.schedule, scope.detailed()) {
        if let Ok((sim, _, _)) = estimate(s, topology, config.bytes, config.dtype, config.slices) {
            e.timeline = sim.timeline;
            e.slicing = sim.slicing;
        }
    }
    Headline {
        estimate: e,
        method,
        latency_us,
        walked_steps: 0,
    }
}

/// The headline estimate of the built schedule: recorded transfer by
/// transfer where the page draws it, else its steps only (cclsim, sweeps,
/// and a model-only plan too large to colour its links by: its
/// per-transfer timeline would be hundreds of MB at 1024 ranks).
///
/// Errors: [`PlanError::Model`] (no route; no schedule at all).
pub(super) fn headline_estimate(
    config: &Config,
    topology: &Topology,
    scope: Scope,
    built: &Built,
) -> Result<Headline, PlanError> {
    let (bytes, dtype, slices) = (config.bytes, config.dtype, config.slices);
    match (&built.schedule, &built.streamed) {
        (Some(s), _) => {
            let record = match scope {
                Scope::Full | Scope::Drawn
                    if config.ranks <= MAX_DRAWN_RANKS
                        || s.transfer_count() <= MAX_RECORDED_TRANSFERS =>
                {
                    Record::Full
                }
                _ => Record::Steps,
            };
            let (estimate, method, latency_us) =
                estimate_recorded(s, topology, bytes, dtype, slices, record)?;
            Ok(Headline {
                estimate,
                method,
                latency_us,
                walked_steps: 0,
            })
        }
        (None, Some(st)) => {
            let (estimate, method, latency_us, walked_steps) =
                estimate_source(st, topology, bytes, dtype, slices, Record::Steps)?;
            Ok(Headline {
                estimate,
                method,
                latency_us,
                walked_steps,
            })
        }
        (None, None) => Err(PlanError::Model(
            "no schedule to estimate (a measured curve was expected)".into(),
        )),
    }
}
