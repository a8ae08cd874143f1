//! The planning pipeline: `Config -> Plan`. The one place that decides
//! `auto`, builds and verifies the schedule, estimates it with the
//! configured slicing and compression, ranks the applicable algorithms and
//! says why. The page, `cclsim` (predict, sweep, accuracy, fusion) and the
//! tests all call it, so one question gets one answer everywhere.
//!
//! ## Stages
//! 1. **Machine** ([`machine`]): the preset, the user's custom topology, or
//!    the measured machine of a fitted profile (`topo=measured`); with a
//!    profile, its link figures at this message size
//!    ([`Profile::apply_at`]).
//! 2. **Decision** ([`Decision`]): the user's algorithm, or `auto`:
//!    - on a fitted profile measuring this collective on this many ranks,
//!      the measured curve itself ([`Profile::predict_us`]: the library's
//!      own choice as measured), with the segment it comes from;
//!    - else the machine's library's own rule ([`Library::choose`]: HCCL's
//!      selection by level and size, NCCL's tuning model, Open MPI's
//!      `coll/tuned` fixed rules);
//!    - else (no library, or none of its algorithms applies) the model's
//!      fastest applicable algorithm.
//! 3. **Schedule** ([`algorithm::build_on`], with the machine's nodes) and
//!    its symbolic verification up to [`MAX_DRAWN_RANKS`] ranks.
//! 4. **Estimate** ([`estimate`]): the event simulation with the configured
//!    slicing when the schedule fits the simulation budget
//!    ([`SIM_BUDGET_TRANSFERS`], [`SIM_BUDGET_STEP_TRANSFERS`]), else the
//!    per-step bottleneck [`Bound`]; page and CLI share the budget, and the
//!    estimate says which method made it ([`Method`]). With compression,
//!    the compressed estimate is the headline.
//! 5. **Ranking** ([`Plan::new`] only; [`Plan::headline`] skips it): every
//!    applicable algorithm estimated the same way (the chosen one's row is
//!    the headline's own estimate, uncompressed), labelled whether the
//!    library runs it; rows whose schedules are too large to build here
//!    are listed without a figure ([`BUILD_BUDGET_TRANSFERS`]).
//!
//! `auto` never simulates what a rule or the measured curve already
//! decides: at 1024 ranks it costs at most the one estimate of the chosen
//! algorithm.

pub mod bound;
pub mod holdout;
pub mod sweep;
pub mod validate;

pub use bound::{Bound, BoundWalk};
pub use sweep::{
    chart_sizes, prediction_curve, prediction_curve_on, sweep_curve, sweep_curves, sweep_key,
    Curve, PredictedPoint, SWEEP_REWALK_TRANSFERS, SWEEP_SIM_TRANSFERS,
};

use super::algorithm::{self, Algorithm, Streamed};
use super::calibrate::Profile;
use super::collective::Primitive;
use super::compressed::{self, CompressedEstimate, CompressedSetup, Placement};
use super::config::{AlgoChoice, Config, MEASURED};
use super::cost::{self, Estimate, LinkLoad, Record, SimBudget, Slices, Timeline};
use super::dtype::DType;
use super::fusion::{self, BucketCost, FusionPlan, Tensor};
use super::library::{Call, Library};
use super::predict::{Answer, Calibration};
use super::quantization::{self, Scheme};
use super::schedule::{Next, Schedule, Step, StepSource};
use super::topology::Topology;
use super::units::format_bytes;
use super::verify::{self, Verified};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use thiserror::Error;

/// Most ranks a plan verifies symbolically and the page draws and animates
/// rank by rank (the symbolic trace holds steps × ranks × chunks sets).
pub const MAX_DRAWN_RANKS: usize = 64;

/// Most transfers an estimate simulates event by event in one buffer
/// loop, counting only steps that are not equal to their predecessor (a
/// repeated step is reused, [`cost::Streaming`]); beyond it, the [`Bound`].
/// For sliced and slow / late-device simulations every transfer counts.
/// A simulated step costs about 0.3 µs per transfer natively.
pub const SIM_BUDGET_TRANSFERS: usize = 2_100_000;
/// Most transfers of one step an estimate simulates (max-min fair rates
/// are recomputed over every flow of a step at each event).
pub const SIM_BUDGET_STEP_TRANSFERS: usize = 65_536;
/// Most transfers of a model-only plan (above [`MAX_DRAWN_RANKS`] ranks)
/// whose full [`Timeline`] [`Plan::new`] records (the page colours the
/// links of the model-only drawing by it); above, the steps only
/// ([`Record::Steps`]), as `cclsim` and the ranking rows do: the same
/// figures without memory per transfer.
pub const MAX_RECORDED_TRANSFERS: usize = 65_536;
/// Most transfers (by [`transfers_upper`]) a schedule may have to be built
/// for a ranking row; rows above it are listed without a figure. Also the
/// most transfers one step may hold ([`step_transfers_upper`]) for any
/// estimate: a streamed schedule holds one step at a time.
pub const BUILD_BUDGET_TRANSFERS: usize = 4_200_000;
/// Most transfers (by [`transfers_upper`]) the estimate of a plan's own
/// algorithm walks, streamed step by step ([`estimate_source`]): the walk
/// costs a few ns per transfer natively (ring AllReduce on 8192 ranks has
/// 134 201 344).
pub const WALK_BUDGET_TRANSFERS: usize = 1 << 28;

/// Why a plan could not be made.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PlanError {
    /// The machine: an unknown preset, a custom topology or profile that
    /// does not apply, ranks that do not fit.
    #[error("{0}")]
    Machine(String),
    /// The algorithm asked for does not implement the call.
    #[error("{0}")]
    Algorithm(String),
    /// No algorithm implements the primitive on this many ranks.
    #[error("no algorithm implements {primitive} on {ranks} ranks; {limit}")]
    NoAlgorithm {
        /// The primitive's title.
        primitive: &'static str,
        /// The rank count.
        ranks: usize,
        /// The rank counts the primitive runs on.
        limit: String,
    },
    /// The schedule failed symbolic verification (a bug, never user input).
    #[error("the {algorithm} schedule failed symbolic verification: {why}")]
    Verify {
        /// The algorithm.
        algorithm: Algorithm,
        /// The verifier's message.
        why: String,
    },
    /// The cost model could not run (no route between two ranks).
    #[error("{0}")]
    Model(String),
}

/// How an estimate was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// [`cost::estimate_sliced`]: event-driven, link-level, max-min fair.
    Simulated,
    /// [`Bound`]: per step, largest route α + busiest link direction's
    /// bytes / bandwidth (the schedule exceeds the simulation budget).
    Bound,
    /// The fitted profile's measured curve, segment `segment`.
    Measured {
        /// Index into [`Profile::segments`].
        segment: usize,
    },
    /// The library's model calibrated to the machine ([`crate::engine::predict`]):
    /// what the library runs at this scale and how long it takes, with a range.
    Predicted,
    /// Not estimated: the schedule is too large to build here.
    Skipped,
}

impl Method {
    /// A short name (`simulated`, `bound`, `measured`, `skipped`), as in
    /// `cclsim --json`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Simulated => "simulated",
            Method::Bound => "bound",
            Method::Measured { .. } => "measured",
            Method::Predicted => "predicted",
            Method::Skipped => "skipped",
        }
    }
}

/// How the algorithm of a plan was decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Decision {
    /// `auto`: the library's own rule, with its reason.
    Library {
        /// Why the library runs it (the rule and its source).
        why: String,
    },
    /// `auto`: the fitted curve of the measured collective; the schedule
    /// shown is the library's own choice on the measured machine.
    Measured {
        /// The segment of the fit the size falls in.
        segment: usize,
        /// Why the drawn algorithm is drawn.
        drawn_why: String,
    },
    /// `auto`: the cost model's fastest (no library, or no algorithm of
    /// the library applies).
    Model {
        /// Why there is no library rule here.
        why: String,
    },
    /// The user's choice.
    Fixed {
        /// What `auto` would run, and why.
        auto_would: Option<(Algorithm, String)>,
    },
}

impl Decision {
    /// What `auto` would run instead of the user's fixed choice, where it
    /// is known (`None` for an `auto` decision).
    pub fn auto_would(&self) -> Option<Algorithm> {
        match self {
            Decision::Fixed { auto_would } => auto_would.as_ref().map(|x| x.0),
            _ => None,
        }
    }
}

/// One row of the ranking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Does the machine's library run it for this primitive?
    pub runs_in_library: bool,
    /// Its estimate (configured slicing, uncompressed); `None` when
    /// skipped ([`Method::Skipped`]).
    pub estimate: Option<Estimate>,
    /// How it was made.
    pub method: Method,
    /// Steps of its schedule (0 if not built).
    pub steps: usize,
    /// Per-message latency in its time: Σ over steps of the step's largest
    /// route α, times the buffer loops, µs.
    pub latency_us: f64,
}

impl Candidate {
    /// Its predicted time, µs (`NaN` if skipped).
    pub fn time_us(&self) -> f64 {
        self.estimate.as_ref().map_or(f64::NAN, |e| e.time_us)
    }
}

/// The compression what-if of a plan.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompressedPlan {
    /// Codec, placement, inputs.
    pub setup: CompressedSetup,
    /// The uncompressed collective's schedule (defines outputs and the
    /// uncompressed bytes; equal to the plan's schedule for `hop`).
    pub collective: Schedule,
    /// The AllGather algorithm of `placement=once`.
    pub gather_algorithm: Option<Algorithm>,
    /// The modelled times and bytes.
    pub estimate: CompressedEstimate,
}

/// The fusion what-if of a plan.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FusionView {
    /// The tensors AllReduced after a backward pass.
    pub tensors: Vec<Tensor>,
    /// Buckets (DDP's assignment) with their predicted costs (each bucket
    /// planned like any AllReduce: `auto` on this machine); unfused and
    /// fused totals; the crossover.
    pub plan: FusionPlan,
    /// The bucket the page runs for real by default.
    pub run_bucket: Option<usize>,
    /// The bucket whose size is this plan's message size (the real run is
    /// that fused bucket), if any.
    pub running: Option<usize>,
    /// With compression on: the buckets of at least `compress_min`
    /// compressed, the rest sent as is ([`fusion::compress_large`]).
    pub compression: Option<fusion::CompressedFusion>,
}

/// The model's view of one configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    /// The configuration it was made from.
    pub config: Config,
    /// The machine as modelled (with a profile's link figures at this size).
    pub topology: Topology,
    /// Whose choices `auto` follows.
    pub library: Library,
    /// The algorithm drawn, run and (unless measured) estimated.
    pub algorithm: Algorithm,
    /// How it was decided.
    pub decision: Decision,
    /// Its schedule, held whole where something needs every step at once:
    /// the drawn plans (up to [`MAX_DRAWN_RANKS`] ranks), compression, and
    /// a full plan's schedule of at most [`MAX_RECORDED_TRANSFERS`]
    /// transfers (by [`transfers_upper`]), whose timeline is recorded
    /// transfer by transfer. `None` otherwise: the estimate and the
    /// ranking stream the steps ([`Plan::schedule_steps`] and
    /// [`Plan::schedule_chunks`] give its shape).
    pub schedule: Option<Schedule>,
    /// Steps of its schedule, whether held ([`Plan::schedule`]) or only
    /// streamed through the estimate (0 for the measured curve without a
    /// schedule).
    pub schedule_steps: usize,
    /// Chunks per rank buffer of its schedule, held or streamed (0 without
    /// one).
    pub schedule_chunks: usize,
    /// The headline timeline's load per link over one loop
    /// ([`Timeline::link_loads`], by index into `topology.links`): what the
    /// drawing colours links by before the first step and, above the
    /// drawn ranks, all it shows (empty when the timeline was not
    /// recorded link by link: no load known).
    pub link_loads: Vec<[LinkLoad; 2]>,
    /// Its symbolic trace; `None` above [`MAX_DRAWN_RANKS`] ranks. Not
    /// serialized: a model-only plan that crosses to the page from the
    /// planner worker has none, and the page makes a drawn one's again
    /// ([`Plan::with_verification`]).
    #[serde(skip)]
    pub verified: Option<Verified>,
    /// The headline estimate (configured slicing; compressed when
    /// compression is on). For a measured curve, time and bandwidths are
    /// the curve's, the timeline the drawn schedule's simulation.
    pub estimate: Estimate,
    /// How the headline was made.
    pub method: Method,
    /// Per-message latency in the headline, µs.
    pub latency_us: f64,
    /// Every applicable algorithm, fastest first (empty for
    /// [`Plan::headline`]).
    pub ranking: Vec<Candidate>,
    /// The verdict in one or two sentences.
    pub verdict: String,
    /// Details on demand: the ranking in words.
    pub details: Vec<String>,
    /// The fitted profile in use, described in one line.
    pub profile: Option<String>,
    /// The calibrated library model's answer ([`Method::Predicted`]): the
    /// headline's time with its 80 % range, what the library runs, its own
    /// predicted time and the "measured at / predicted for" note.
    #[serde(default)]
    pub prediction: Option<crate::engine::predict::Answer>,
    /// The compression what-if, when `compress` is on.
    pub compressed: Option<Arc<CompressedPlan>>,
    /// The fusion what-if, when `fusion` is set.
    pub fusion: Option<Arc<FusionView>>,
    /// With slow ranks or failed links ([`Config::faults`]): the same
    /// algorithm's headline estimate on the healthy machine (same
    /// slicing, compression and method), to compare against.
    pub healthy: Option<Estimate>,
}

/// The schedule of a plan that has none (no steps).
static NO_SCHEDULE: Schedule = Schedule {
    primitive: Primitive::AllReduce,
    algorithm: String::new(),
    ranks: 0,
    chunks: 0,
    root: 0,
    scratch: 0,
    steps: Vec::new(),
};

/// Two plans of the same configuration are the same plan.
impl PartialEq for Plan {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
    }
}

/// The machine of `config` at its message size: the preset, the custom
/// topology or the measured machine (`topo=measured`, a star of the
/// profile's rank count), with the profile's link figures if a profile is
/// in use ([`Profile::apply_at`] / [`Profile::topology_at`]); its library is
/// the profile's when there is one.
///
/// With slow ranks or failed links ([`Config::faults`]) the machine is the
/// degraded one ([`super::degrade::Degradation::apply`]): everything the
/// plan estimates and ranks, it estimates on that machine.
///
/// Errors: [`PlanError::Machine`] (also a `down` link that does not exist,
/// or a rank with no route left).
pub fn machine(config: &Config) -> Result<Topology, PlanError> {
    let t = healthy_machine(config)?;
    config
        .faults
        .apply(&t, config.ranks)
        .map_err(PlanError::Machine)
}

/// Do `a` and `b` make the same [`machine`]? Its inputs: the preset or
/// custom topology, the fitted profile (whose link figures depend on the
/// message size), the degradation and the rank count. The page keeps the
/// machine of its previous plan when the next one is the same
/// ([`crate::runtime::planner::Carried::arrive`]): at 1024 ranks making
/// it again was 4.5 ms of the task that shows a new estimate.
pub fn same_machine(a: &Config, b: &Config) -> bool {
    a.topo == b.topo
        && a.custom == b.custom
        && a.profile == b.profile
        && a.faults == b.faults
        && a.ranks == b.ranks
        && (a.profile.is_none() || a.bytes == b.bytes)
}

/// [`machine`] without the degradation.
fn healthy_machine(config: &Config) -> Result<Topology, PlanError> {
    let m = |e: String| PlanError::Machine(e);
    let mut t = if config.topo == MEASURED {
        let p = config
            .profile
            .as_ref()
            .ok_or_else(|| m("topo=measured needs a fitted profile (profile=...)".into()))?;
        let most = super::config::MAX_PROFILE_RANKS;
        if config.ranks > most || p.ranks > most {
            return Err(m(format!(
                "the measured machine is modelled up to {most} ranks ({} asked, the profile measured {})",
                config.ranks, p.ranks
            )));
        }
        let mut q = p.clone();
        q.ranks = q.ranks.max(config.ranks);
        let mut t = q.topology_at(config.bytes);
        if let Some(cal) = &p.physical {
            // The measured machine's nodes, so that the library's rule and
            // the drawing see them.
            let g = cal.hardware.gpus_per_node.max(1);
            for (r, d) in t.devices.iter_mut().enumerate() {
                d.server = r / g;
            }
            t.hardware = Some(cal.hardware.clone());
        }
        // The link figures of the measured rank count.
        let (lat, bw) = p.link_params_at(config.bytes);
        for l in &mut t.links {
            l.bandwidth_gbps = bw;
            l.latency_us = lat / 2.0;
        }
        t
    } else {
        let base = config.topology().map_err(m)?;
        match &config.profile {
            Some(p) => {
                let mut t = p
                    .apply_at(&base, config.bytes)
                    .map_err(|e| m(e.to_string()))?;
                t.library = p.library();
                t
            }
            None => base,
        }
    };
    if let Some(p) = &config.profile {
        t.library = p.library();
    }
    t.check_ranks(config.ranks).map_err(|e| m(e.to_string()))?;
    Ok(t)
}

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
struct Walked {
    estimate: Estimate,
    method: Method,
    latency_us: f64,
    steps: usize,
    /// The bound its walk made (valid for any size on this machine).
    bound: Bound,
    /// Transfers of the steps it was handed made ([`Next::Step`]): what
    /// the walk cost.
    made: usize,
}

/// [`estimate_source`] within `budget` of simulated transfers (the plan's,
/// or the chart sweep's smaller one).
fn estimate_walk(
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
fn made_if_simulated(
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
fn walk_made(
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

/// The rank counts `primitive` runs on, in words (AlltoAllV's `n²` blocks
/// cap it).
pub fn rank_limit(primitive: Primitive) -> String {
    match primitive {
        Primitive::AlltoAllV => format!(
            "AlltoAllV runs on 2..={} ranks (its per-pair counts make n² blocks)",
            super::collective::MAX_ALLTOALLV_RANKS
        ),
        p => format!("{} runs on 2 or more ranks", p.title()),
    }
}

/// The call a library's rule sees.
fn call<'a>(config: &Config, topo: &'a Topology) -> Call<'a> {
    Call {
        topology: topo,
        primitive: config.primitive,
        ranks: config.ranks,
        bytes: config.bytes,
        nvls_ok: super::library::nccl::nvls_supported(config.primitive, config.dtype, config.redop),
        elem_bytes: config.dtype.size_bytes() as u64,
    }
}

/// Does the fitted profile of `config` measure exactly this call (the same
/// collective on the same number of ranks)? Returns the profile.
fn measured_curve(config: &Config) -> Option<&Profile> {
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
    Some(Calibration::preset(
        topo.hardware
            .clone()
            .unwrap_or_else(|| super::library::nccl::hardware_of(topo)),
    ))
}

/// The calibrated model's answer for an `auto` decision by the library's
/// rule on a healthy machine without compression (`None` elsewhere: a
/// fixed algorithm, a measured curve, faults and compression are the
/// schedule's).
fn predicted(config: &Config, topo: &Topology, decision: &Decision) -> Option<Answer> {
    let by_rule = matches!(decision, Decision::Library { .. });
    if !by_rule || !config.faults.is_none() || config.compresses(config.bytes) {
        return None;
    }
    let cal = calibration(config, topo)?;
    let nvls_ok =
        super::library::nccl::nvls_supported(config.primitive, config.dtype, config.redop);
    Some(cal.answer_with(config.primitive, config.ranks, config.bytes, nvls_ok))
}

/// The segment of `p` whose fit `bytes` uses (the nearest one outside
/// every measured range).
fn segment_of(p: &Profile, bytes: u64) -> usize {
    p.segments
        .iter()
        .position(|s| bytes <= s.last_bytes)
        .unwrap_or(p.segments.len().saturating_sub(1))
}

/// An [`Estimate`] made of a time alone (no timeline).
fn estimate_of_time(bytes: u64, time_us: f64, primitive: Primitive, ranks: usize) -> Estimate {
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

/// The estimate of one applicable algorithm as a ranking row.
fn candidate(
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
fn allowed(topo: &Topology, a: Algorithm) -> bool {
    topo.algorithms.is_empty() || topo.algorithms.contains(&a)
}

/// The steps of `a` for `config`, made on demand.
///
/// Errors: [`PlanError::Algorithm`] (it does not apply);
/// [`PlanError::Model`] if one of its steps could exceed
/// [`BUILD_BUDGET_TRANSFERS`] (held at once) or all of them
/// [`WALK_BUDGET_TRANSFERS`] (walked).
fn stream(config: &Config, topo: &Topology, a: Algorithm) -> Result<Streamed, PlanError> {
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

/// The applicable algorithms of `config`, in UI order.
fn applicable(config: &Config) -> Result<Vec<Algorithm>, PlanError> {
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
fn decide_auto(
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
fn decide_by_rule(
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

fn sort(rows: &mut [Candidate]) {
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

/// "latency-bound: 62% of its time is per-message latency" or
/// "bandwidth-bound: 80% of its time is moving data", for the share of a
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

/// How much detail a plan computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    /// Everything: verification, ranking, what-ifs (the page).
    Full,
    /// [`Scope::Full`] but the ranking, and what `auto` would pick instead
    /// of a fixed algorithm where only the model decides (the drawn page's
    /// main thread; those come from the planner worker as [`Ranked`]).
    Drawn,
    /// The decision and the headline estimate (cclsim predict and sweep,
    /// fusion buckets).
    Headline,
}

impl Scope {
    /// Verification, the drawn timeline, the what-ifs and the details.
    fn detailed(self) -> bool {
        matches!(self, Scope::Full | Scope::Drawn)
    }
}

/// What a full plan has beyond an unranked one ([`Plan::unranked`]): the ranking
/// of every applicable algorithm and the words that depend on it. The
/// drawn page's main thread makes the plan without it, and the planner
/// worker this from [`Plan::new`] of the same configuration: a ranking
/// simulates every applicable algorithm, a task of hundreds of
/// milliseconds that would freeze the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// [`Plan::ranking`].
    pub ranking: Vec<Candidate>,
    /// [`Plan::decision`] (with what `auto` would pick).
    pub decision: Decision,
    /// [`Plan::verdict`].
    pub verdict: String,
    /// [`Plan::details`].
    pub details: Vec<String>,
}

/// Why the drawn page leaves a configuration's plan to the planner worker
/// ([`Plan::on_page`]): what would make it costly on the page's main
/// thread, where no task may run over 100 ms. The page then asks the
/// worker for it (`runtime::planner::Job::Drawn`: [`Plan::unranked`],
/// then the ranking) and draws it when it comes, the previous plan dimmed
/// meanwhile, as for a model-only plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offload {
    /// Above [`MAX_DRAWN_RANKS`] ranks: the plan is model-only.
    ModelOnly,
    /// `auto` where the machine's library has no rule: its choice is the
    /// model's fastest, which simulates every applicable algorithm.
    ModelsFastest,
    /// The estimate is the pipelined simulation of this many slices per
    /// transfer ([`cost::slicing`]), up to [`cost::SLICE_WORK_BUDGET`]
    /// flow updates: 0.1–0.5 s natively at 64 ranks (`slices=8` or `256`),
    /// 0.1 s for `h100-8` at 1 GiB.
    Pipelined {
        /// Slices per transfer.
        slices: u32,
    },
    /// Compression on a machine whose rule may slice: the compressed
    /// estimate simulates its own schedule (with `placement=once`, the
    /// AllGather of every rank's codes, whose transfers are larger than
    /// the collective's), pipelined wherever a transfer is larger than a
    /// slice (a custom 64-rank machine with int8 `once` at 64 MiB: 109 ms
    /// natively, 228 ms with a slow rank).
    CompressedPipelined,
    /// Fusion where a bucket's plan may simulate much: on a machine whose
    /// rule may slice (a bucket larger than a slice is a pipelined
    /// simulation), or whose library has no rule (each bucket's `auto` is
    /// the model's fastest: every applicable algorithm simulated per
    /// bucket, 49–92 ms natively for Llama 3 on a custom 64-rank machine).
    Fusion,
}

/// What [`Plan::on_page`] gives the drawn page's main thread.
#[derive(Debug)]
pub enum OnPage {
    /// [`Plan::unranked`]'s plan, made here.
    Made(Box<Plan>),
    /// The planner worker makes it, for this reason.
    Offload(Offload),
}

/// `s`'s symbolic verification, `algorithm`'s schedule.
///
/// Errors: [`PlanError::Verify`] (a bug, never user input).
fn verify_schedule(s: &Schedule, algorithm: Algorithm) -> Result<Verified, PlanError> {
    verify::verify(s).map_err(|e| PlanError::Verify {
        algorithm,
        why: e.to_string(),
    })
}

/// [`Offload::Fusion`], [`Offload::CompressedPipelined`] or
/// [`Offload::Pipelined`] where the drawn plan of `config` on `topo` would
/// run a pipelined simulation or a fusion view's many ranked buckets
/// (`schedule`: the one its estimate simulates).
fn costly_estimate(
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

impl Plan {
    /// The full plan of `config`: machine, decision, schedule, verification
    /// (up to [`MAX_DRAWN_RANKS`] ranks), headline estimate, the ranking of
    /// every applicable algorithm, the compression and fusion what-ifs.
    ///
    /// Errors: [`PlanError`].
    pub fn new(config: &Config) -> Result<Plan, PlanError> {
        Plan::make(config, Scope::Full)
    }

    /// [`Plan::new`] without what needs the ranking: its rows are empty,
    /// a fixed algorithm's decision says what `auto` would pick only where
    /// the library has a rule (not where `auto` takes the model's
    /// fastest), and the verdict and details say nothing of the other
    /// algorithms.
    /// [`Plan::ranked`] of [`Plan::new`] has those. What the drawn page
    /// makes on its main thread.
    ///
    /// Errors: [`PlanError`] (the full plan may also fail where this does
    /// not: in a ranking row).
    pub fn unranked(config: &Config) -> Result<Plan, PlanError> {
        Plan::make(config, Scope::Drawn)
    }

    /// The ranking and the words that depend on it ([`Ranked`]); empty for
    /// a plan made without its ranking.
    pub fn ranked(&self) -> Ranked {
        Ranked {
            ranking: self.ranking.clone(),
            decision: self.decision.clone(),
            verdict: self.verdict.clone(),
            details: self.details.clone(),
        }
    }

    /// The same decision and headline estimate as [`Plan::new`], without
    /// the ranking, the verification and the what-ifs: what `cclsim predict`
    /// and `sweep` print.
    ///
    /// Errors: [`PlanError`].
    pub fn headline(config: &Config) -> Result<Plan, PlanError> {
        Plan::make(config, Scope::Headline)
    }

    /// What the drawn page's main thread makes of `config`: the plan
    /// [`Plan::unranked`] makes, or why it is left to the planner worker
    /// ([`Offload`]), found before the costly part is begun. The one
    /// definition of what the page plans where.
    ///
    /// Errors: [`PlanError`], as [`Plan::unranked`]'s.
    pub fn on_page(config: &Config) -> Result<OnPage, PlanError> {
        Plan::make_on(config, Scope::Drawn, true)
    }

    /// Fills [`Plan::verified`] of a drawn plan that has a schedule but no
    /// trace: one made by the planner worker ([`Plan::on_page`]'s
    /// [`Offload`]), whose trace does not cross (it is not serialized).
    /// The same [`verify::verify`] of the same schedule [`Plan::new`]
    /// made; nothing else changes.
    ///
    /// Errors: [`PlanError::Verify`] (a bug: the worker verified the same
    /// schedule).
    pub fn with_verification(mut self) -> Result<Plan, PlanError> {
        if self.verified.is_none() && self.config.ranks <= MAX_DRAWN_RANKS {
            if let Some(s) = &self.schedule {
                let algorithm = self
                    .compressed
                    .as_ref()
                    .and_then(|c| c.gather_algorithm)
                    .unwrap_or(self.algorithm);
                self.verified = Some(verify_schedule(s, algorithm)?);
            }
        }
        Ok(self)
    }

    fn make(config: &Config, scope: Scope) -> Result<Plan, PlanError> {
        match Plan::make_on(config, scope, false)? {
            OnPage::Made(p) => Ok(*p),
            // Not reached: only `make_on(.., true)` offloads.
            OnPage::Offload(why) => Err(PlanError::Model(format!(
                "this plan is made in the planner worker ({why:?})"
            ))),
        }
    }

    /// [`Plan::make`]; with `may_offload`, stops with [`OnPage::Offload`]
    /// as soon as it finds a reason.
    fn make_on(config: &Config, scope: Scope, may_offload: bool) -> Result<OnPage, PlanError> {
        if may_offload && config.ranks > MAX_DRAWN_RANKS {
            return Ok(OnPage::Offload(Offload::ModelOnly));
        }
        let topology = machine(config)?;
        let library = topology.library;
        let (algorithm, decision, model_rows) = match config.algo {
            AlgoChoice::Auto
                if may_offload && decide_by_rule(config, &topology, library).is_none() =>
            {
                return Ok(OnPage::Offload(Offload::ModelsFastest))
            }
            AlgoChoice::Auto => decide_auto(config, &topology, library)?,
            AlgoChoice::Fixed(a) => {
                if !a.supports(config.primitive, config.ranks) {
                    return Err(
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
                        },
                    );
                }
                let auto_would = match scope {
                    Scope::Full => decide_auto(config, &topology, library)
                        .ok()
                        .map(|(x, d, _)| (x, decision_why(&d))),
                    // The library's rule is cheap; the model's fastest
                    // (no rule) needs the ranking, which the worker makes.
                    Scope::Drawn => decide_by_rule(config, &topology, library)
                        .map(|(x, d)| (x, decision_why(&d))),
                    Scope::Headline => None,
                };
                (a, Decision::Fixed { auto_would }, None)
            }
        };
        let measured = match &decision {
            Decision::Measured { segment, .. } => measured_curve(config).map(|p| (p, *segment)),
            _ => None,
        };
        let prediction = predicted(config, &topology, &decision);
        // The schedule: always when drawn; for a measured curve or a
        // prediction above the drawn limit, none is needed.
        let need_schedule = (measured.is_none() && prediction.is_none())
            || (scope.detailed() && config.ranks <= MAX_DRAWN_RANKS);
        // Held whole only where something needs every step at once (the
        // drawn page, the verifier, compression); else its steps are
        // streamed through the estimate one at a time.
        let streamed = if need_schedule {
            Some(stream(config, &topology, algorithm)?)
        } else {
            None
        };
        // A model-only plan (above the drawn ranks) holds its schedule
        // only when it is small enough to record transfer by transfer
        // ([`MAX_RECORDED_TRANSFERS`], by its upper bound: a trace can be
        // written of it); else the estimate and the ranking stream its
        // steps (pipeline at 1024 ranks has 2.6 M transfers).
        let drawn = config.ranks <= MAX_DRAWN_RANKS;
        // The compressed estimate simulates the whole schedule: refuse
        // one too large to hold (ring on 8192 ranks: 134 M transfers,
        // ~6 GB) instead of building it; counted where the upper bound
        // says it might be (hier's bound is loose).
        let upper = transfers_upper(algorithm, config.primitive, config.ranks);
        if let (Some(st), true) = (&streamed, config.compresses(config.bytes)) {
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
        }
        let keep = drawn
            || config.compresses(config.bytes)
            || (scope.detailed() && upper <= MAX_RECORDED_TRANSFERS);
        let schedule = match (&streamed, keep) {
            (Some(st), true) => Some(st.build()),
            _ => None,
        };
        if may_offload {
            if let Some(why) = costly_estimate(config, &topology, schedule.as_ref()) {
                return Ok(OnPage::Offload(why));
            }
        }
        let verified = match (&schedule, scope, config.ranks <= MAX_DRAWN_RANKS) {
            (Some(s), sc, true) if sc.detailed() => Some(verify_schedule(s, algorithm)?),
            _ => None,
        };
        // The steps the estimate walked when it streamed them.
        let mut walked_steps = 0;
        let (mut estimate, mut method, latency_us) = match (&schedule, measured) {
            (_, None) if prediction.is_some() => {
                let a = prediction
                    .as_ref()
                    .ok_or_else(|| PlanError::Model("no prediction".into()))?;
                let mut e =
                    estimate_of_time(config.bytes, a.time_us, config.primitive, config.ranks);
                if let (Some(s), true) = (&schedule, scope.detailed()) {
                    // The drawn schedule's modelled timeline, for the animation.
                    if let Ok((sim, _, _)) =
                        self::estimate(s, &topology, config.bytes, config.dtype, config.slices)
                    {
                        e.timeline = sim.timeline;
                        e.slicing = sim.slicing;
                    }
                }
                (e, Method::Predicted, a.latency_us)
            }
            (_, Some((p, segment))) => {
                let t = p.predict_us(config.bytes);
                let mut e = estimate_of_time(config.bytes, t, config.primitive, config.ranks);
                if let (Some(s), true) = (&schedule, scope.detailed()) {
                    // The drawn schedule's modelled timeline, for the animation.
                    if let Ok((sim, _, _)) =
                        self::estimate(s, &topology, config.bytes, config.dtype, config.slices)
                    {
                        e.timeline = sim.timeline;
                        e.slicing = sim.slicing;
                    }
                }
                let alpha = p.params_at(config.bytes).0;
                (e, Method::Measured { segment }, alpha)
            }
            (Some(s), None) => {
                // The page draws the timeline; cclsim and sweeps need the
                // figures only, and so does a model-only plan too large to
                // colour its links by (its per-transfer timeline would be
                // hundreds of MB at 1024 ranks).
                let record = match scope {
                    Scope::Full | Scope::Drawn
                        if config.ranks <= MAX_DRAWN_RANKS
                            || s.transfer_count() <= MAX_RECORDED_TRANSFERS =>
                    {
                        Record::Full
                    }
                    _ => Record::Steps,
                };
                estimate_recorded(
                    s,
                    &topology,
                    config.bytes,
                    config.dtype,
                    config.slices,
                    record,
                )?
            }
            (None, None) if streamed.is_some() => {
                let st = streamed
                    .as_ref()
                    .ok_or_else(|| PlanError::Model("no schedule to estimate".into()))?;
                let (e, m, l, steps) = estimate_source(
                    st,
                    &topology,
                    config.bytes,
                    config.dtype,
                    config.slices,
                    Record::Steps,
                )?;
                walked_steps = steps;
                (e, m, l)
            }
            (None, None) => {
                return Err(PlanError::Model(
                    "no schedule to estimate (a measured curve was expected)".into(),
                ))
            }
        };
        // The ranking (full plans only).
        let mut ranking = Vec::new();
        if scope == Scope::Full {
            let model_rows = model_rows.unwrap_or_default();
            for a in applicable(config)? {
                let row = if a == algorithm && measured.is_none() {
                    Candidate {
                        algorithm: a,
                        runs_in_library: library.runs(a, config.primitive) && allowed(&topology, a),
                        estimate: Some(estimate.clone()),
                        method,
                        steps: schedule.as_ref().map_or(walked_steps, |s| s.steps.len()),
                        latency_us,
                    }
                } else if let Some(r) = model_rows.iter().find(|r| r.algorithm == a) {
                    r.clone()
                } else {
                    candidate(config, &topology, library, a)?
                };
                ranking.push(row);
            }
            sort(&mut ranking);
        }
        // The what-ifs.
        let mut compressed = None;
        let mut fusion = None;
        if scope.detailed() {
            fusion = fusion_view(config)?.map(Arc::new);
        }
        if config.compresses(config.bytes) {
            if let Some(s) = &schedule {
                let c = compressed_plan(config, &topology, algorithm, s.clone())?;
                estimate = c.estimate.estimate.clone();
                // The compressed time includes the codec work.
                estimate.time_us = c.estimate.time_us;
                let t = estimate.time_us;
                let bw = if t > 0.0 {
                    config.bytes as f64 / (t * 1e3)
                } else {
                    0.0
                };
                estimate.algbw_gbps = bw;
                estimate.busbw_gbps = bw * config.primitive.busbw_factor(config.ranks);
                method = Method::Simulated;
                compressed = Some(Arc::new(c));
            }
        }
        let (schedule, verified) = match (&compressed, scope) {
            // placement=once draws and runs the AllGather of the codes.
            (Some(cp), sc) if sc.detailed() && cp.gather_algorithm.is_some() => {
                let g = &cp.gather_algorithm.unwrap_or(algorithm);
                let s = algorithm::build(*g, Primitive::AllGather, config.ranks)
                    .map_err(|e| PlanError::Algorithm(e.to_string()))?;
                let v = if config.ranks <= MAX_DRAWN_RANKS {
                    Some(verify_schedule(&s, *g)?)
                } else {
                    None
                };
                (Some(s), v)
            }
            _ => (schedule, verified),
        };
        // The same algorithm on the healthy machine.
        let healthy = if config.faults.is_none() {
            None
        } else {
            let mut h = config.clone();
            h.faults = Default::default();
            h.algo = AlgoChoice::Fixed(algorithm);
            Some(Plan::make(&h, Scope::Headline)?.estimate)
        };
        let (schedule_steps, schedule_chunks) = match (&schedule, &streamed) {
            (Some(s), _) => (s.steps.len(), s.chunks),
            (None, Some(st)) => (walked_steps, st.header().chunks),
            (None, None) => (0, 0),
        };
        let mut plan = Plan {
            healthy,
            schedule_steps,
            schedule_chunks,
            link_loads: if estimate.timeline.link_busy.is_empty() {
                Vec::new()
            } else {
                estimate.timeline.link_loads(topology.links.len())
            },
            config: config.clone(),
            library,
            algorithm,
            decision,
            schedule,
            verified,
            estimate,
            method,
            latency_us,
            ranking,
            verdict: String::new(),
            details: Vec::new(),
            profile: config.profile.as_ref().map(Profile::describe),
            prediction,
            compressed,
            fusion,
            topology,
        };
        plan.verdict = plan.make_verdict();
        if let (Some(h), Some(x)) = (&plan.healthy, plan.slowdown()) {
            plan.verdict.push_str(&format!(
                " With {}: {:.2} µs against {:.2} µs on the healthy machine (×{x:.2}).",
                config.faults.describe(),
                plan.estimate.time_us,
                h.time_us
            ));
            if let Some(best) = plan.ranking.first().filter(|b| b.algorithm != algorithm) {
                plan.verdict.push_str(&format!(
                    " Under the fault the model's fastest is {} ({:.2} µs).",
                    best.algorithm,
                    best.time_us()
                ));
            }
        }
        if scope.detailed() {
            plan.details = plan.make_details();
        }
        Ok(OnPage::Made(Box::new(plan)))
    }

    /// Faulty time over healthy time (`None` on a healthy machine): 2.0 =
    /// the fault makes the collective take twice as long.
    pub fn slowdown(&self) -> Option<f64> {
        let h = self.healthy.as_ref()?;
        (h.time_us > 0.0).then(|| self.estimate.time_us / h.time_us)
    }

    /// The verdict: who chose what and why, and the predicted time.
    fn make_verdict(&self) -> String {
        let c = &self.config;
        let share = if self.estimate.time_us > 0.0 {
            (self.latency_us / self.estimate.time_us).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let size = if c.primitive == Primitive::Barrier {
            String::new()
        } else {
            format!(" of {}", format_bytes(c.bytes))
        };
        let time = format!(
            "{:.2} µs for {}{size} on {} ranks",
            self.estimate.time_us,
            c.primitive.title(),
            c.ranks
        );
        match &self.decision {
            Decision::Library { why } => {
                let range = self.prediction.as_ref().map_or(String::new(), |a| {
                    format!(
                        ", 80 % range {:.2}–{:.2} µs{}",
                        a.low_us,
                        a.high_us,
                        a.library_us.map_or(String::new(), |own| format!(
                            "; NCCL's own model says {own:.2} µs"
                        ))
                    )
                });
                format!(
                    "{} runs {} here: {why}. Predicted {time} ({}{range}).",
                    self.library.title(),
                    self.algorithm,
                    bound_phrase(share)
                )
            }
            Decision::Measured { segment, drawn_why } => {
                let seg = self
                    .config
                    .profile
                    .as_ref()
                    .and_then(|p| p.segments.get(*segment));
                format!(
                    "{} as measured: the fitted curve{} gives {time}. The steps drawn are {}'s: {drawn_why}.",
                    self.library.title(),
                    seg.map_or(String::new(), |s| format!(
                        " (segment {} of the fit, {}–{}: α {:.2} µs, {:.2} GB/s)",
                        segment + 1,
                        format_bytes(s.first_bytes),
                        format_bytes(s.last_bytes),
                        s.alpha_us,
                        s.algbw_gbps
                    )),
                    self.algorithm
                )
            }
            Decision::Model { why } => format!(
                "{} is the model's fastest here ({why}). Predicted {time} ({}).",
                self.algorithm,
                bound_phrase(share)
            ),
            Decision::Fixed { auto_would } => {
                let runs = self.library.runs(self.algorithm, c.primitive);
                let not_lib = if runs || self.library == Library::Model {
                    String::new()
                } else {
                    format!(
                        " {} is not what {} runs for {}.",
                        self.algorithm,
                        self.library.title(),
                        c.primitive.title()
                    )
                };
                let would = match auto_would {
                    Some((a, _)) if *a != self.algorithm => format!(
                        " auto would run {a}{}.",
                        self.ranking
                            .iter()
                            .find(|r| r.algorithm == *a)
                            .and_then(|r| r.estimate.as_ref())
                            .map_or(String::new(), |e| format!(" ({:.2} µs)", e.time_us))
                    ),
                    Some(_) => " It is also auto's choice.".to_string(),
                    None => String::new(),
                };
                let derived = if self.config.profile.is_some() {
                    " Derived from the profile's link figures, not measured."
                } else {
                    ""
                };
                format!(
                    "Your choice: {}. Predicted {time} ({}).{derived}{not_lib}{would}",
                    self.algorithm,
                    bound_phrase(share)
                )
            }
        }
    }

    /// The ranking in words, one line per row, and how the headline was made.
    fn make_details(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(n) = self
            .library
            .redop_note(self.config.primitive, self.config.redop)
        {
            out.push(format!("{n}."));
        }
        match self.method {
            Method::Bound => out.push(format!(
                "The schedule has more than {SIM_BUDGET_TRANSFERS} transfers to simulate (or {SIM_BUDGET_STEP_TRANSFERS} in one step), more than this model simulates link by link, so its time is the per-step bottleneck bound (largest latency + busiest link's bytes / bandwidth), here and in cclsim alike."
            )),
            Method::Measured { .. } => out.push(
                "The time is the fitted curve (cclsim fit), the library's own choice as measured; the animation follows the drawn schedule's modelled steps.".into(),
            ),
            Method::Predicted => {
                if let Some(a) = &self.prediction {
                    out.push(format!(
                        "The time is NCCL's tuning model calibrated to the machine ({} runs; {}): {}",
                        a.runs,
                        self.config
                            .profile
                            .as_ref()
                            .and_then(|p| p.physical.as_ref())
                            .map_or_else(|| "preset figures".to_string(), |c| c.basis.clone()),
                        a.note
                    ));
                }
            }
            _ => {}
        }
        if self.compressed.is_some() {
            out.push(
                "The headline includes compression; the ranking below is uncompressed.".into(),
            );
        } else if self.config.compress.scheme != Scheme::None {
            out.push(format!(
                "This message ({}) is below compress_min ({}): sent uncompressed.",
                crate::engine::units::format_bytes(self.config.bytes),
                crate::engine::units::format_bytes(self.config.compress_min)
            ));
        }
        for r in &self.ranking {
            let lib = if r.runs_in_library || self.library == Library::Model {
                String::new()
            } else {
                format!(" — not what {} runs", self.library.title())
            };
            let line = match &r.estimate {
                Some(e) => format!(
                    "{}: {} steps, {:.1} µs of latency → {:.2} µs, busbw {:.2} GB/s{}{lib}",
                    r.algorithm,
                    r.steps,
                    r.latency_us,
                    e.time_us,
                    e.busbw_gbps,
                    if r.method == Method::Bound { " (bound)" } else { "" }
                ),
                None => format!(
                    "{}: not estimated here (its schedule would exceed {BUILD_BUDGET_TRANSFERS} transfers){lib}",
                    r.algorithm
                ),
            };
            out.push(line);
        }
        out
    }

    /// The schedule drawn and run, or an empty one (no steps) for a plan
    /// that built none.
    pub fn drawn_schedule(&self) -> &Schedule {
        self.schedule.as_ref().unwrap_or(&NO_SCHEDULE)
    }

    /// Number of steps the page can show (0 for a model-only plan).
    pub fn steps(&self) -> usize {
        match (&self.verified, &self.schedule) {
            (Some(_), Some(s)) => s.steps.len(),
            _ => 0,
        }
    }

    /// Is this plan drawn step by step (it has a symbolic trace)?
    pub fn drawn(&self) -> bool {
        self.verified.is_some()
    }

    /// Was the algorithm chosen by "auto"?
    pub fn auto(&self) -> bool {
        self.config.algo == AlgoChoice::Auto
    }

    /// What `auto` runs for this configuration (the plan's own algorithm
    /// when auto, else what auto would run).
    pub fn auto_algorithm(&self) -> Option<Algorithm> {
        match &self.decision {
            d @ Decision::Fixed { .. } => d.auto_would(),
            _ => Some(self.algorithm),
        }
    }

    /// Buffer loops of the run (1 if the message fits HCCL's buffer).
    pub fn loops(&self) -> u64 {
        self.estimate.timeline.loops.max(1)
    }

    /// Modelled time of one loop of the drawn steps, µs.
    pub fn loop_us(&self) -> f64 {
        self.estimate
            .timeline
            .steps
            .iter()
            .map(|s| s.end_us)
            .fold(0.0, f64::max)
            .max(if self.estimate.timeline.steps.is_empty() {
                self.estimate.time_us
            } else {
                0.0
            })
    }

    /// The headline time of `algorithm` for `config` at `bytes`: the same
    /// decision and estimate as [`Plan::headline`] (the chart's curves).
    ///
    /// Errors: [`PlanError`].
    pub fn at(config: &Config, algorithm: AlgoChoice, bytes: u64) -> Result<Plan, PlanError> {
        let mut c = config.clone();
        c.bytes = bytes;
        c.algo = algorithm;
        c.compress.scheme = Scheme::None;
        c.fusion = None;
        Plan::headline(&c)
    }
}

/// Why `auto` decided as it did, in one sentence.
fn decision_why(d: &Decision) -> String {
    match d {
        Decision::Library { why } => why.clone(),
        Decision::Measured { .. } => "the fitted curve of the measured collective".into(),
        Decision::Model { why } => why.clone(),
        Decision::Fixed { .. } => String::new(),
    }
}

/// The compression what-if of `config` on the chosen `algorithm`: with
/// `placement=once`, the AllGather of the compressed inputs (the same
/// algorithm if it implements AllGather, else auto's AllGather on this
/// machine) is what runs.
///
/// Errors: [`PlanError::Model`] (a dtype or primitive compression does not
/// apply to; no route).
fn compressed_plan(
    config: &Config,
    topology: &Topology,
    algorithm: Algorithm,
    schedule: Schedule,
) -> Result<CompressedPlan, PlanError> {
    let model = |e: String| PlanError::Model(e);
    let setup = CompressedSetup {
        compression: config.compress,
        placement: config.placement,
        shape: config.grad,
    };
    compressed::check_applies(&setup, config.primitive, config.dtype, config.redop)
        .map_err(|e| model(e.to_string()))?;
    let (run, gather_algorithm) = match setup.placement {
        Placement::Hop => (schedule.clone(), None),
        Placement::Once => {
            let elems = config.elems();
            let w = compressed::wire_len(&setup.compression, elems) as u64;
            let gather = if algorithm.supports(Primitive::AllGather, config.ranks) {
                algorithm
            } else {
                let mut c = config.clone();
                c.primitive = Primitive::AllGather;
                c.algo = AlgoChoice::Auto;
                c.dtype = DType::Int8;
                c.bytes = (config.ranks as u64 * w).max(1);
                c.compress.scheme = Scheme::None;
                c.fusion = None;
                Plan::headline(&c)?.algorithm
            };
            let s = algorithm::build(gather, Primitive::AllGather, config.ranks)
                .map_err(|e| PlanError::Algorithm(e.to_string()))?;
            (s, Some(gather))
        }
    };
    let estimate = compressed::estimate(
        &schedule,
        &run,
        &setup,
        topology,
        config.bytes,
        config.dtype,
        config.slices,
    )
    .map_err(|e| model(e.to_string()))?;
    Ok(CompressedPlan {
        setup,
        collective: schedule,
        gather_algorithm,
        estimate,
    })
}

/// The fusion what-if of `config` (`None` without `fusion`): every bucket
/// and every tensor planned as its own AllReduce with `auto`.
///
/// Errors: [`PlanError`] of a bucket's plan.
fn fusion_view(config: &Config) -> Result<Option<FusionView>, PlanError> {
    if config.primitive != Primitive::AllReduce {
        return Ok(None);
    }
    let Some((tensors, buckets, run_bucket)) = config.fusion_buckets() else {
        return Ok(None);
    };
    let es = config.dtype.size_bytes() as u64;
    let plan = fusion::plan(&tensors, config.dtype, config.bucket, |bytes| {
        let b = bytes.max(es);
        let p = Plan::at(config, AlgoChoice::Auto, b)?;
        Ok::<_, PlanError>(BucketCost {
            bytes,
            algorithm: p.algorithm,
            time_us: p.estimate.time_us,
            latency_us: p.latency_us,
        })
    })?;
    let running = run_bucket
        .filter(|&i| buckets[i].bytes == config.bytes)
        .or_else(|| buckets.iter().position(|b| b.bytes == config.bytes));
    let compression = if config.compress.scheme != Scheme::None {
        let codec = quantization::codec_rel_l2(&config.compress, config.grad, config.seed);
        Some(fusion::compress_large(
            &plan,
            config.compress_min,
            |b| config.compresses(b),
            codec,
            |bytes| {
                let mut c = config.clone();
                c.bytes = bytes.max(es);
                c.algo = AlgoChoice::Auto;
                c.fusion = None;
                c.compress_min = 0;
                let p = Plan::headline(&c)?;
                let e = p.compressed.as_ref().map(|x| &x.estimate).ok_or_else(|| {
                    PlanError::Model(format!(
                        "no compressed estimate for a {} bucket",
                        crate::engine::units::format_bytes(bytes)
                    ))
                })?;
                Ok::<_, PlanError>(fusion::CompressedBucketCost {
                    time_us: e.time_us,
                    wire_bytes: e.wire_bytes,
                    uncompressed_bytes: e.uncompressed_bytes,
                })
            },
        )?)
    } else {
        None
    };
    Ok(Some(FusionView {
        tensors,
        plan,
        run_bucket,
        running,
        compression,
    }))
}
