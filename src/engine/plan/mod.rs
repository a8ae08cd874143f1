//! The planning pipeline: `Config -> Plan`. The one place that decides
//! `auto`, builds and verifies the schedule, estimates it with the
//! configured slicing and compression, ranks the applicable algorithms and
//! says why. The page, `cclsim` (predict, sweep, accuracy, fusion) and the
//! tests all call it, so one question gets one answer everywhere.
//!
//! ## Stages, one file each, in the order [`Plan::new`] runs them
//! 1. **Machine** (`machine.rs`, [`machine`]): the preset, the user's
//!    custom topology, or the measured machine of a fitted profile
//!    (`topo=measured`); with a profile, its link figures at this message
//!    size ([`Profile::apply_at`]); faults applied.
//! 2. **Decision** (`decide.rs`, [`Decision`]): the user's algorithm, or
//!    `auto`:
//!    - on a fitted profile measuring this collective on this many ranks,
//!      the measured curve itself ([`Profile::predict_us`]: the library's
//!      own choice as measured), with the segment it comes from;
//!    - else the machine's library's own rule ([`Library::choose`]: HCCL's
//!      selection by level and size, NCCL's tuning model, Open MPI's
//!      `coll/tuned` fixed rules), timed by the calibrated model where one
//!      applies ([`calibration`]);
//!    - else (no library, or none of its algorithms applies) the model's
//!      fastest applicable algorithm.
//! 3. **Schedule** (`estimate.rs`: built whole or streamed,
//!    [`algorithm::build_on`] with the machine's nodes) and its symbolic
//!    verification up to [`MAX_DRAWN_RANKS`] ranks.
//! 4. **Estimate** (`estimate.rs`, [`estimate`]): the event simulation
//!    with the configured slicing when the schedule fits the simulation
//!    budget ([`SIM_BUDGET_TRANSFERS`], [`SIM_BUDGET_STEP_TRANSFERS`]),
//!    else the per-step bottleneck [`Bound`]; page and CLI share the
//!    budget, and the estimate says which method made it ([`Method`]).
//! 5. **Ranking** (`decide.rs`; [`Plan::new`] only, [`Plan::headline`]
//!    skips it): every applicable algorithm estimated the same way (the
//!    chosen one's row is the headline's own estimate, uncompressed),
//!    labelled whether the library runs it; rows whose schedules are too
//!    large to build here are listed without a figure
//!    ([`BUILD_BUDGET_TRANSFERS`]).
//! 6. **What-ifs** (`what_if.rs`): compression (its estimate becomes the
//!    headline), the fusion view, and under faults the healthy machine's
//!    time.
//! 7. **Words** (`words.rs`): the verdict and the details.
//!
//! `auto` never simulates what a rule or the measured curve already
//! decides: at 1024 ranks it costs at most the one estimate of the chosen
//! algorithm.

pub mod bound;
mod decide;
mod estimate;
pub mod holdout;
mod machine;
pub mod sweep;
pub mod validate;
mod what_if;
mod words;

pub use bound::{Bound, BoundWalk};
pub use decide::{calibration, rank_limit};
use decide::{choose, costly_estimate, measured_curve, predicted, rank, Chosen};
use estimate::{build, by_time_alone, headline_estimate, verify_schedule};
pub use estimate::{
    estimate, estimate_recorded, estimate_source, step_transfers_upper, transfers_upper,
};
pub use machine::{machine, same_machine};
pub use sweep::{
    chart_sizes, prediction_curve, prediction_curve_on, sweep_curve, sweep_curves, sweep_key,
    Curve, PredictedPoint, SWEEP_REWALK_TRANSFERS, SWEEP_SIM_TRANSFERS,
};
use what_if::{compress, compressed_headline, fusion_view, healthy_estimate, what_runs};
pub use words::bound_phrase;

use super::algorithm::Algorithm;
use super::calibrate::Profile;
use super::collective::Primitive;
use super::compressed::{CompressedEstimate, CompressedSetup};
use super::config::{AlgoChoice, Config};
use super::cost::{Estimate, LinkLoad};
use super::fusion::{self, FusionPlan, Tensor};
use super::library::Library;
use super::quantization::Scheme;
use super::schedule::{Schedule, StepSource};
use super::topology::Topology;
use super::verify::Verified;
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
        let Some(chosen) = choose(config, &topology, scope, may_offload)? else {
            return Ok(OnPage::Offload(Offload::ModelsFastest));
        };
        let Chosen {
            algorithm,
            decision,
            model_rows,
        } = chosen;
        let measured = match &decision {
            Decision::Measured { segment, .. } => measured_curve(config).map(|p| (p, *segment)),
            _ => None,
        };
        let prediction = predicted(config, &topology, &decision);
        let by_time = measured.is_some() || prediction.is_some();
        let built = build(config, &topology, scope, algorithm, by_time)?;
        if may_offload {
            if let Some(why) = costly_estimate(config, &topology, built.schedule.as_ref()) {
                return Ok(OnPage::Offload(why));
            }
        }
        let verified = match (&built.schedule, scope, config.ranks <= MAX_DRAWN_RANKS) {
            (Some(s), sc, true) if sc.detailed() => Some(verify_schedule(s, algorithm)?),
            _ => None,
        };
        let head = match (measured, &prediction) {
            (Some((p, segment)), _) => {
                let t = p.predict_us(config.bytes);
                let alpha = p.params_at(config.bytes).0;
                by_time_alone(
                    config,
                    &topology,
                    scope,
                    &built,
                    t,
                    alpha,
                    Method::Measured { segment },
                )
            }
            (None, Some(a)) => by_time_alone(
                config,
                &topology,
                scope,
                &built,
                a.time_us,
                a.latency_us,
                Method::Predicted,
            ),
            (None, None) => headline_estimate(config, &topology, scope, &built)?,
        };
        let ranking = match scope {
            Scope::Full => rank(
                config,
                &topology,
                (algorithm, measured.is_none()),
                &head,
                &built,
                model_rows.unwrap_or_default(),
            )?,
            _ => Vec::new(),
        };
        let fusion = match scope.detailed() {
            true => fusion_view(config)?.map(Arc::new),
            false => None,
        };
        let compressed = compress(config, &topology, algorithm, built.schedule.as_ref())?;
        let (schedule, verified) = what_runs(
            config,
            scope,
            compressed.as_deref(),
            built.schedule,
            verified,
        )?;
        // With compression its estimate is the headline (the codec's work
        // included); the ranking above keeps the uncompressed row.
        let estimate = match &compressed {
            Some(c) => compressed_headline(config, c),
            None => head.estimate,
        };
        let plan = Plan {
            healthy: healthy_estimate(config, algorithm)?,
            schedule_steps: schedule
                .as_ref()
                .map_or(head.walked_steps, |s| s.steps.len()),
            schedule_chunks: match (&schedule, &built.streamed) {
                (Some(s), _) => s.chunks,
                (None, Some(st)) => st.header().chunks,
                (None, None) => 0,
            },
            config: config.clone(),
            library: topology.library,
            algorithm,
            decision,
            schedule,
            verified,
            method: if compressed.is_some() {
                Method::Simulated
            } else {
                head.method
            },
            link_loads: if estimate.timeline.link_busy.is_empty() {
                Vec::new()
            } else {
                estimate.timeline.link_loads(topology.links.len())
            },
            estimate,
            latency_us: head.latency_us,
            ranking,
            verdict: String::new(),
            details: Vec::new(),
            profile: config.profile.as_ref().map(Profile::describe),
            prediction,
            compressed,
            fusion,
            topology,
        };
        Ok(OnPage::Made(Box::new(plan.worded(scope))))
    }

    /// Faulty time over healthy time (`None` on a healthy machine): 2.0 =
    /// the fault makes the collective take twice as long.
    pub fn slowdown(&self) -> Option<f64> {
        let h = self.healthy.as_ref()?;
        (h.time_us > 0.0).then(|| self.estimate.time_us / h.time_us)
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

    /// Buffer loops of the run (1 if the message fits one loop of HCCL's
    /// buffer, [`crate::engine::cost::loop_capacity`]).
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
