//! The planner worker's jobs: the engine's slow answers the page needs
//! (a model-only plan, the chart's busbw sweep, the tuning text, the
//! determinism comparison, a tuner file beside the model, a training step,
//! a pasted log read and fitted), made in a web worker of their own so that no
//! main-thread task runs them (the page's bound: no main-thread task over
//! 100 ms for any valid link). Pure Rust on every target: [`answer`] only calls
//! the engine's own functions, the same ones `cclsim` calls, and is tested
//! natively (`tests/planner.rs`); `browser::planner` carries [`Request`]s
//! and [`Response`]s between the page and the worker as CBOR bytes
//! ([`encode`], [`decode`]).
//!
//! A [`Job`] belongs to a [`Lane`]; the page keeps at most one job per lane
//! queued or running, and a newer job of a lane cancels the older one (a
//! running one by restarting its worker), so a stale answer never costs
//! the user a wait. The headline has a worker of its own
//! ([`Lane::worker`]): no slow job (a ranking, a sweep) stands between a
//! control change and its estimate.

use crate::engine::algorithm::Algorithm;
use crate::engine::config::Config;
use crate::engine::determinism::{self, Comparison, Versus};
use crate::engine::import::Import;
use crate::engine::plan::{self, Curve, Plan, MAX_DRAWN_RANKS};
use crate::engine::step::{self, StepInput, StepReport};
use crate::engine::topology::Topology;
use crate::engine::tune::{self, Format, TunerComparison, TunerQuery};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What the page asks of the planner worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// [`Plan::headline`] (decision and estimate): [`Answer::Headline`].
    /// For a model-only configuration (above [`MAX_DRAWN_RANKS`] ranks): a
    /// drawn plan's symbolic trace is not sent ([`Plan::verified`] is not
    /// serialized), so the page makes drawn plans itself.
    Headline,
    /// [`Plan::new`] (the headline's figures, the ranking, the what-ifs):
    /// [`Answer::Full`]. Asked beside [`Job::Headline`], on the other
    /// worker.
    Full,
    /// [`Plan::ranked`] of [`Plan::new`], its rows without their
    /// timelines: [`Answer::Ranked`]. For a drawn configuration, whose plan
    /// the page makes itself without the ranking ([`Plan::unranked`]). On
    /// the headline's lane: never held behind a run, never behind a card.
    Ranked,
    /// A drawn configuration the page does not plan on its main thread
    /// ([`Plan::on_page`]'s [`plan::Offload`]): [`Plan::unranked`] as
    /// [`Answer::Drawn`] as soon as it is made (the page verifies its
    /// schedule again, [`Plan::with_verification`]: the trace does not
    /// cross), then [`Job::Ranked`]'s answer. On the headline's lane.
    Drawn,
    /// [`plan::sweep_curves`] at `sizes` (bytes), without the curves the
    /// plan's budgets skip: [`Answer::Curves`].
    Curves {
        /// Message sizes, bytes.
        sizes: Vec<u64>,
    },
    /// [`tune::text`] in `format` at `sizes` (bytes): [`Answer::Tune`].
    Tune {
        /// The syntax to write.
        format: Format,
        /// Message sizes, bytes.
        sizes: Vec<u64>,
    },
    /// [`determinism::compare`] of `algorithm` against `versus`:
    /// [`Answer::Determinism`].
    Determinism {
        /// The plan's algorithm.
        algorithm: Algorithm,
        /// What it is compared with.
        versus: Versus,
        /// Also the fixed-order (HCCL_DETERMINISTIC) variant.
        fixed: bool,
        /// The element whose two reduction orders are shown.
        element: usize,
    },
    /// [`tune::compare_tuner`] of the tuner file `text` for the
    /// configuration ([`TunerQuery::modelled`]) at `sizes` (bytes):
    /// [`Answer::Tuner`]. The model's side is a sweep: seconds at
    /// thousands of ranks.
    Tuner {
        /// The tuner file.
        text: String,
        /// Message sizes, bytes.
        sizes: Vec<u64>,
    },
    /// [`step::step`] of `input` on the configuration's machine (its
    /// topology, profile and ranks): [`Answer::Step`]. Every collective of
    /// the step is a headline plan: tens of ms each, hundreds at scale.
    Step {
        /// The model and its layout.
        input: StepInput,
        /// A pinned step to compare with ([`step::step_vs`]).
        vs: Option<String>,
    },
    /// [`Import::new`] of a pasted log `text` with the configuration's
    /// collective and rank count: [`Answer::Import`]. A log can be
    /// megabytes (up to the readers' cap), seconds of parsing in wasm.
    Import {
        /// The log.
        text: String,
        /// The table the user chose to fit; `None`: the reader's choice.
        table: Option<usize>,
    },
}

/// Which queue a [`Job`] waits in: one job per lane at a time, and a
/// worker takes its lanes in this order (the estimate first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    /// [`Job::Headline`].
    Headline,
    /// [`Job::Full`].
    Full,
    /// [`Job::Curves`].
    Curves,
    /// [`Job::Tune`].
    Tune,
    /// [`Job::Determinism`].
    Determinism,
    /// [`Job::Tuner`].
    Tuner,
    /// [`Job::Step`].
    Step,
    /// [`Job::Import`].
    Import,
}

/// How many planner workers the page keeps ([`Lane::worker`]).
pub const WORKERS: usize = 2;

impl Lane {
    /// The worker (`0..WORKERS`) that takes this lane's jobs: the headline
    /// has worker 0 to itself (tens of ms, and what a control change
    /// waits for; a drawn page's ranking, [`Job::Ranked`], and a drawn plan
    /// the page leaves to the worker, [`Job::Drawn`], are on this lane
    /// too: under a millisecond natively for the default page's ranking,
    /// 130–500 ms for `h100-8` at 1 GiB or 64 ranks with slices, during
    /// which worker 1 starts nothing, [`Lane`]'s order); the slow jobs
    /// share worker 1 (a full plan at 1024 ranks
    /// ranks every algorithm: about a second of wasm; the sweep, seconds).
    /// A cancelled job restarts only its own worker.
    pub fn worker(self) -> usize {
        match self {
            Lane::Headline => 0,
            Lane::Full
            | Lane::Curves
            | Lane::Tune
            | Lane::Determinism
            | Lane::Tuner
            | Lane::Step
            | Lane::Import => 1,
        }
    }
}

impl Job {
    /// Its lane.
    pub fn lane(&self) -> Lane {
        match self {
            Job::Headline | Job::Ranked | Job::Drawn => Lane::Headline,
            Job::Full => Lane::Full,
            Job::Curves { .. } => Lane::Curves,
            Job::Tune { .. } => Lane::Tune,
            Job::Determinism { .. } => Lane::Determinism,
            Job::Tuner { .. } => Lane::Tuner,
            Job::Step { .. } => Lane::Step,
            Job::Import { .. } => Lane::Import,
        }
    }
}

/// One question: `job` about `config`. `id` is the page's, echoed in every
/// [`Response`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The page's id of this request.
    pub id: u64,
    /// The configuration asked about.
    pub config: Config,
    /// What is asked.
    pub job: Job,
}

/// A plan on its way to the page: [`for_page`]'s plan without its
/// machine, which the page makes again from the configuration
/// ([`Carried::arrive`]: the same [`plan::machine`] the plan was made on;
/// at 1024 ranks the machine is three quarters of the bytes, and reading
/// it in wasm takes longer than making it).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Carried(Plan);

impl Carried {
    /// `plan`, ready to cross ([`for_page`], its machine left behind).
    pub fn new(plan: Plan) -> Carried {
        let mut p = for_page(plan);
        p.topology = Topology::default();
        Carried(p)
    }

    /// The plan as the page holds it: its machine made again, or taken
    /// from `prev`, the page's previous plan, when that one was made on
    /// the same machine ([`plan::same_machine`]: a size or algorithm
    /// change at 1024 ranks).
    ///
    /// Errors: the machine's error (never for a configuration the worker
    /// planned: the same function made it there).
    pub fn arrive(self, prev: Option<&Plan>) -> Result<Plan, String> {
        let mut p = self.0;
        p.topology = match prev {
            Some(q) if plan::same_machine(&q.config, &p.config) => q.topology.clone(),
            _ => plan::machine(&p.config).map_err(|e| e.to_string())?,
        };
        Ok(p)
    }
}

/// An answer of a [`Job`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Answer {
    /// The headline plan ([`Plan::headline`]).
    Headline(Box<Carried>),
    /// The full plan ([`Plan::new`]).
    Full(Box<Carried>),
    /// The ranking and its words ([`Job::Ranked`]).
    Ranked(Box<plan::Ranked>),
    /// A drawn plan without its ranking ([`Job::Drawn`]), its trace to be
    /// made again on the page.
    Drawn(Box<Carried>),
    /// The chart's curves.
    Curves(Vec<Curve>),
    /// The tuning text.
    Tune(String),
    /// The determinism comparison.
    Determinism(Box<Comparison>),
    /// A tuner file beside the model's recommendation.
    Tuner(Box<TunerComparison>),
    /// One training step ([`Job::Step`]), and the pinned one beside it.
    Step(Box<StepReport>, Option<Box<Result<step::Pinned, String>>>),
    /// A pasted log, parsed and fitted ([`Job::Import`]).
    Import(Box<Import>),
}

/// One message from the worker: an answer (or the job's error, in words)
/// to request `id`. `last`: no more answers to that request follow.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Response {
    /// The request's id.
    pub id: u64,
    /// The answer, or why there is none.
    pub answer: Result<Answer, String>,
    /// The request is done.
    pub last: bool,
}

/// Answers `req`, handing each [`Response`] to `emit` as soon as it is
/// made; the last one has `last` ([`Job::Drawn`] has two, the others one).
/// Never panics on a configuration: every error is a [`Response`] with
/// the engine's message.
pub fn answer(req: &Request, emit: &mut dyn FnMut(Response)) {
    let id = req.id;
    let c = &req.config;
    let done = |answer: Result<Answer, String>| Response {
        id,
        answer,
        last: true,
    };
    match &req.job {
        Job::Headline => emit(done(
            Plan::headline(c)
                .map(|h| Answer::Headline(Box::new(Carried::new(h))))
                .map_err(|e| e.to_string()),
        )),
        Job::Drawn => match Plan::unranked(c) {
            Err(e) => emit(done(Err(e.to_string()))),
            Ok(p) => {
                emit(Response {
                    id,
                    answer: Ok(Answer::Drawn(Box::new(Carried::new(p)))),
                    last: false,
                });
                emit(done(ranked(c)));
            }
        },
        Job::Full => emit(done(
            Plan::new(c)
                .map(|p| Answer::Full(Box::new(Carried::new(p))))
                .map_err(|e| e.to_string()),
        )),
        Job::Ranked => emit(done(ranked(c))),
        Job::Curves { sizes } => emit(done(
            plan::sweep_curves(c, sizes)
                .map(|v| Answer::Curves(v.into_iter().filter(|c| c.skipped.is_none()).collect()))
                .map_err(|e| e.to_string()),
        )),
        Job::Tune { format, sizes } => emit(done(tune::text(c, *format, sizes).map(Answer::Tune))),
        Job::Determinism {
            algorithm,
            versus,
            fixed,
            element,
        } => emit(done(
            determinism::compare(c, *algorithm, *versus, *fixed, *element)
                .map(|x| Answer::Determinism(Box::new(x))),
        )),
        Job::Tuner { text, sizes } => emit(done(
            tune::compare_tuner(text, &TunerQuery::modelled(c), sizes)
                .map(|x| Answer::Tuner(Box::new(x)))
                .map_err(|e| e.to_string()),
        )),
        Job::Import { text, table } => emit(done(Ok(Answer::Import(Box::new(Import::new(
            text,
            *table,
            c.primitive,
            c.ranks,
        )))))),
        Job::Step { input, vs } => emit(done(
            step::step_vs(input, c, vs.as_deref())
                .map(|(r, pinned)| Answer::Step(Box::new(r), pinned.map(Box::new)))
                .map_err(|e| e.to_string()),
        )),
    }
}

/// [`Job::Ranked`]'s answer.
fn ranked(c: &Config) -> Result<Answer, String> {
    Plan::new(c)
        .map(|p| Answer::Ranked(Box::new(ranked_for_page(p.ranked()))))
        .map_err(|e| e.to_string())
}

/// A plan as the page holds it: its ranking rows without their timelines
/// (a row shows its time, busbw, steps and method; the chosen row's
/// timeline is the plan's own, 2 MB of CBOR for 64-rank ring with
/// `slices=8`), and a model-only plan (above [`MAX_DRAWN_RANKS`] ranks)
/// also without its held schedule and its per-transfer and per-link
/// records (`transfers`, `routes`, `link_busy`), which nothing on the page
/// shows above the drawn ranks (the drawing colours links by
/// [`Plan::link_loads`], the note gives [`Plan::schedule_steps`] and
/// [`Plan::schedule_chunks`], the estimate panel the headline's steps);
/// at 128 ranks they are megabytes to carry from the worker and tens of
/// ms to read on the page.
pub fn for_page(mut plan: Plan) -> Plan {
    fn per_transfer(t: &mut crate::engine::cost::Timeline) {
        t.transfers = Vec::new();
        t.routes = Vec::new();
        t.link_busy = Vec::new();
    }
    rows_for_page(&mut plan.ranking);
    if plan.config.ranks > MAX_DRAWN_RANKS {
        plan.schedule = None;
        per_transfer(&mut plan.estimate.timeline);
        // A compressed plan's copy of the collective serves the run's
        // check only (a model-only plan never runs).
        if let Some(cp) = plan.compressed.as_mut() {
            let cp = std::sync::Arc::make_mut(cp);
            cp.collective.steps = Vec::new();
            per_transfer(&mut cp.estimate.estimate.timeline);
        }
    }
    plan
}

/// The ranking as the page shows it: each row's time, busbw, steps and
/// method, without its timeline (the chosen row's is the drawn plan's
/// whole per-transfer timeline, which the page has).
pub fn ranked_for_page(mut r: plan::Ranked) -> plan::Ranked {
    rows_for_page(&mut r.ranking);
    r
}

/// Ranking rows without their timelines ([`for_page`]).
fn rows_for_page(rows: &mut [plan::Candidate]) {
    for row in rows {
        if let Some(e) = row.estimate.as_mut() {
            let t = &mut e.timeline;
            (t.steps, t.transfers, t.routes, t.link_busy) = Default::default();
        }
    }
}

/// `value` as CBOR bytes (every `f64` kept bit for bit, NaN included).
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail; a type serde cannot write would be a
    // bug of this module's types, reported as an empty message.
    if ciborium::into_writer(value, &mut out).is_err() {
        out.clear();
    }
    out
}

/// A value back from [`encode`]'s bytes.
///
/// Errors: the bytes are not a CBOR encoding of `T` (in words).
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    ciborium::from_reader(bytes).map_err(|e| format!("a planner message could not be read: {e}"))
}
