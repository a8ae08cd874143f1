//! The root component: holds the configuration, its plan, the current run
//! and the playback clock; lays out the page.
//!
//! Flow: URL -> [`Config`] -> [`Plan`] (instant: estimate, schedule, trace)
//! -> after a short debounce, a worker run ([`run::start`]) whose rank
//! outputs are checked as they arrive. Changing a control rewrites the URL
//! (`history.replaceState`), re-plans and re-runs; a newer run supersedes an
//! older one (results carry a run id).

use super::buffers::Buffers;
use super::chart::Chart;
use super::controls::Controls;
use super::custom_topology::CustomTopologyPanel;
use super::deferred::Deferred;
use super::determinism_card::DeterminismCard;
use super::estimate_panel::EstimatePanel;
use super::faults_card::FaultsCard;
use super::format;
use super::gantt::Gantt;
use super::latest::Latest;
use super::learn::Learn;
use super::log_import::{self, Import, LogImport};
use super::motion::{self, Clock, Frames};
use super::msccl_card::MscclCard;
use super::playback::Playback;
use super::result_panel::ResultPanel;
use super::run::{self, RunState, RunView};
use super::step_card::StepCard;
use super::step_log::StepLog;
use super::topology_view::TopologyView;
use super::tune_card::TuneCard;
use super::tuner_card::TunerCard;
use super::url;
use super::what_if::{CompressionCard, FusionCard};
use crate::engine::algorithm::Algorithm;
use crate::engine::config::{Config, ConfigError, MEASURED};
use crate::engine::custom_topology::{CustomTopology, SpecError};
use crate::engine::plan::{Offload, OnPage, Plan, Ranked, MAX_DRAWN_RANKS};
use crate::engine::step::StepInput;
use crate::engine::units::{
    format_bytes, message_bytes, parse_bytes, MAX_MESSAGE_BYTES as MAX_BYTES,
    MIN_MESSAGE_BYTES as MIN_BYTES,
};
use crate::i18n::{self, Lang};
use crate::lessons::{self, Lesson, Look};
use crate::runtime::browser::planner::Planner;
use crate::runtime::planner::{Answer, Job, Lane, Response};
use crate::runtime::{RunError, RunSummary};
use crate::t;
use gloo_timers::callback::Timeout;
use std::cell::Cell;
use std::rc::Rc;
use yew::prelude::*;

/// Wall time of one animated step at speed 1×, ms.
const STEP_MS: f64 = 1400.0;
/// Progress value past 1 that a played step rests at before the next starts.
const DWELL: f64 = 1.3;
/// Delay between a control change and the worker run, ms (the estimate
/// updates at once; dragging the size slider does not start a run per tick).
const RUN_DEBOUNCE_MS: u32 = 250;
/// Longest wait for the page to be idle before a run's workers start, ms
/// ([`super::deferred::when_idle`]): a 64-rank page draws its parts over
/// ~1.5 s of slices on 2 cores.
const RUN_IDLE_WAIT_MS: u32 = 2000;

/// How long (ms) the page waits after a control change for a model-only
/// plan before it renders the previous plan dimmed as stale (`#estimate`
/// `aria-busy`): most answers come first (the headline at 1024 ranks
/// takes 2–50 ms of wasm), and the page then renders once. 100 ms: the
/// limit below which a response feels instant (Nielsen, *Usability
/// Engineering*, 1993, ch. 5), and the page's bound on any main-thread
/// task.
pub const STALE_MS: u32 = 100;

/// In which event-loop task after the first render each part of the page
/// is first drawn ([`Deferred`]), so that no main-thread task passes
/// 100 ms. The whole page in one first render is a task of 240–370 ms
/// (most of it making DOM nodes); the header, the controls, the drawing
/// (at most 16 ranks) and the result and estimate come first, then one
/// part a task, top to bottom. The buffer grid (770 elements at 8 ranks)
/// is not in the first render: with it, that task took 93 ms in a trace
/// of the default page, 48 ms of it lazy compilation of the functions it
/// ran for the first time. A part, once drawn, stays drawn.
struct FirstDrawn {
    buffers: u32,
    gantt: u32,
    step_log: u32,
    what_ifs: u32,
    chart: u32,
    side_cards: u32,
}

const FIRST_DRAWN: FirstDrawn = FirstDrawn {
    buffers: 1,
    gantt: 2,
    step_log: 3,
    what_ifs: 4,
    chart: 5,
    side_cards: 6,
};

/// The task in which a part first drawn in task `part` of
/// [`FIRST_DRAWN`] is drawn on `ranks` ranks: above 16 ranks the topology
/// drawing (1 500 elements at 64 ranks; 1 200 on the model-only page of
/// 1024) takes task 1 and every later part comes one task later.
fn first_drawn(part: u32, ranks: usize) -> u32 {
    part + u32::from(ranks > 16)
}

/// Messages of [`App`].
pub enum Msg {
    /// A part of the page drawn in a later task ([`Deferred`]) appeared:
    /// mark a lesson's highlighted card again (no re-render).
    Drawn,
    /// A control produced a new configuration.
    SetConfig(Config),
    /// The training step card's inputs changed.
    SetStep(StepInput),
    /// A step pinned for comparison (its whole query), or unpinned.
    PinStep(Option<String>),
    /// The typed size changed (not applied).
    BytesText(String),
    /// Apply the typed size.
    BytesCommit,
    /// Apply a typed seed.
    Seed(String),
    /// The page's first plan and run, one task after its first render
    /// ([`App::create`]).
    Start,
    /// The debounce of run `id` elapsed: start the workers.
    StartRun(u64),
    /// Run the current configuration again.
    Rerun,
    /// The ranks of run `id` checked in one slice of checking.
    Report(u64, Vec<run::Checked>),
    /// The compressed run `id`'s error and wire bytes.
    Compressed(
        u64,
        Result<crate::engine::compressed::CompressedReport, String>,
    ),
    /// Run `id` ended.
    Done(u64, Result<RunSummary, RunError>),
    /// Show step `k` (0 = initial state), animating its transfers.
    Goto(usize),
    /// Play from the current step.
    Play,
    /// Pause.
    Pause,
    /// One step forward, animated.
    Forward,
    /// One step back.
    Back,
    /// Animation speed factor.
    Speed(f64),
    /// Animation frame (its `requestAnimationFrame` timestamp, ms).
    Tick(f64),
    /// [`STALE_MS`] after the change that asked plan `id`: show the
    /// previous plan as stale if that plan has not come.
    ShowStale(u64),
    /// Copy the share link.
    CopyLink,
    /// The clipboard answered.
    Copied(Result<(), String>),
    /// Hide the URL errors.
    DismissUrlErrors,
    /// Keyboard: play or pause.
    TogglePlay,
    /// Keyboard: jump to the last step.
    Last,
    /// The pasted / dropped log text changed.
    LogText(String),
    /// Fit table `i` of the log.
    LogTable(usize),
    /// The planner worker read and fitted the log of import request `n`
    /// ([`Job::Import`]), or could not.
    Imported(u64, Result<Box<Import>, String>),
    /// Use the fitted profile for the model (true) or the preset (false).
    UseProfile(bool),
    /// The custom topology text changed (typed, pasted, example).
    TopoText(String),
    /// A `.json` file was loaded: set the text and use it.
    TopoFile(String),
    /// Parse the custom topology text and use it.
    UseTopo,
    /// Switch the page's language.
    SetLang(Lang),
    /// Open learn mode (the lesson list).
    OpenLearn,
    /// Close learn mode.
    CloseLearn,
    /// Back to the lesson list.
    LearnList,
    /// Go to a lesson's stop (1-based), a new history entry.
    LessonStop(&'static str, usize),
    /// Show or hide the stop's answer.
    Answer(bool),
    /// Scroll to and focus what the stop highlights.
    ShowMe,
    /// Back / Forward: restore the page from the address bar.
    PopState,
    /// The planner worker answered plan request `id` of a lane (a
    /// model-only configuration's headline, or its full plan); dropped if
    /// the configuration changed since.
    Planned(u64, Lane, Response),
}

/// The page's callbacks to its children, made once in `create`. yew
/// re-renders a child only when its props changed, and a [`Callback`] is
/// equal only to itself: made anew in every `view`, they re-rendered the
/// controls and every card at every animation tick (30 ms at 64 ranks).
struct Callbacks {
    goto: Callback<usize>,
    play: Callback<()>,
    pause: Callback<()>,
    forward: Callback<()>,
    back: Callback<()>,
    speed: Callback<f64>,
    set_config: Callback<Config>,
    set_step: Callback<StepInput>,
    pin_step: Callback<Option<String>>,
    bytes_text: Callback<String>,
    bytes_commit: Callback<()>,
    seed: Callback<String>,
    rerun: Callback<()>,
    topo_text: Callback<String>,
    topo_file: Callback<String>,
    use_topo: Callback<()>,
    log_text: Callback<String>,
    log_table: Callback<usize>,
    use_profile: Callback<bool>,
    lesson_stop: Callback<(&'static str, usize)>,
    answer: Callback<bool>,
    show_me: Callback<()>,
    close_learn: Callback<()>,
    learn_list: Callback<()>,
    drawn: Callback<()>,
}

impl Callbacks {
    fn new(link: &html::Scope<App>) -> Self {
        Callbacks {
            goto: link.callback(Msg::Goto),
            play: link.callback(|_| Msg::Play),
            pause: link.callback(|_| Msg::Pause),
            forward: link.callback(|_| Msg::Forward),
            back: link.callback(|_| Msg::Back),
            speed: link.callback(Msg::Speed),
            set_config: link.callback(Msg::SetConfig),
            set_step: link.callback(Msg::SetStep),
            pin_step: link.callback(Msg::PinStep),
            bytes_text: link.callback(Msg::BytesText),
            bytes_commit: link.callback(|_| Msg::BytesCommit),
            seed: link.callback(Msg::Seed),
            rerun: link.callback(|_| Msg::Rerun),
            topo_text: link.callback(Msg::TopoText),
            topo_file: link.callback(Msg::TopoFile),
            use_topo: link.callback(|_| Msg::UseTopo),
            log_text: link.callback(Msg::LogText),
            log_table: link.callback(Msg::LogTable),
            use_profile: link.callback(Msg::UseProfile),
            lesson_stop: link.callback(|(id, k)| Msg::LessonStop(id, k)),
            answer: link.callback(Msg::Answer),
            show_me: link.callback(|_| Msg::ShowMe),
            close_learn: link.callback(|_| Msg::CloseLearn),
            learn_list: link.callback(|_| Msg::LearnList),
            drawn: link.callback(|_| Msg::Drawn),
        }
    }
}

/// The page.
pub struct App {
    /// Callbacks to the children, made once ([`Callbacks`]).
    cb: Callbacks,
    config: Config,
    url_errors: Vec<ConfigError>,
    plan: Result<Rc<Plan>, String>,
    /// The shown plan's ranking is being made in the planner worker
    /// ([`Msg::Planned`]): a model-only plan that is only the headline, or
    /// a drawn plan made without its ranking ([`Plan::unranked`]).
    plan_partial: bool,
    /// A drawn plan's ranking and its words, from the planner worker
    /// ([`Job::Ranked`]); while [`App::plan_partial`], the previous
    /// configuration's, shown dimmed. `None` for a model-only plan (its
    /// full plan has them).
    ranked: Option<Rc<Ranked>>,
    /// Why a drawn plan's ranking could not be made (the planner worker
    /// failed, or a ranking row's plan did): the drawn plan stays.
    ranking_error: Option<String>,
    /// Id of the latest plan asked for: a plan made for an older
    /// configuration is dropped.
    plan_seq: u64,
    /// The configuration's plan is being made in the planner worker (a
    /// model-only configuration): the plan shown, if any, is the previous
    /// configuration's, shown dimmed until the answer comes.
    planning: bool,
    /// The planner worker: model-only plans, the chart's sweep, the tuning
    /// text and the determinism comparison, off the main thread (also the
    /// cards' context).
    planner: Planner,
    /// The configuration as of now, for the controls' callbacks (a
    /// context): it is ahead of their props while a render waits for a
    /// model-only plan ([`STALE_MS`]).
    latest: Latest,
    /// The timer of [`Msg::ShowStale`].
    stale_later: Option<Timeout>,
    /// The id of the latest plan the planner answered, set as soon as the
    /// answer is read (its [`Msg::Planned`] follows in a task of its own):
    /// a [`Msg::ShowStale`] due in between does not dim what is about to
    /// be replaced.
    answered: Rc<Cell<u64>>,
    bytes_text: String,
    bytes_error: Option<String>,
    seed_error: Option<String>,
    run: Rc<RunView>,
    run_seq: u64,
    current_run: Rc<Cell<u64>>,
    /// The next run's debounce (`Msg::StartRun`); dropped (cancelled) by a
    /// newer run.
    pending_run: Option<Timeout>,
    /// The address bar's rewrite in place (its query), a task after the
    /// change that made it ([`App::store`]).
    store_later: Option<(Rc<str>, Timeout)>,
    /// The first plan and run, a task after the first render
    /// ([`Msg::Start`]; its own timer: a rerun or a new run replacing
    /// `pending_run` must not drop it).
    start: Option<Timeout>,
    /// Current step, 1-based (0 = initial state).
    step: usize,
    /// A lesson stop's step, set when its plan comes from the planner
    /// worker ([`Job::Drawn`]).
    step_when_planned: Option<usize>,
    /// The configuration's plan is a drawn one being made in the planner
    /// worker ([`Job::Drawn`]: `Plan::on_page` offloaded it); its run
    /// waits for it.
    drawn_in_worker: bool,
    /// Progress of the current step (0..=DWELL; >= 1 means done).
    frac: f64,
    /// `frac` up to 1, for the components that move ([`motion::use_progress`]):
    /// a frame sets it and re-renders only them, not the App.
    clock: Clock,
    playing: bool,
    speed: f64,
    /// The playback clock's animation frames (one asked for while it runs).
    frames: Frames,
    last_tick: f64,
    copy_status: Option<Result<(), String>>,
    /// The document's keydown listener (Space, ←, →, Home, End), kept alive.
    keys: Option<wasm_bindgen::closure::Closure<dyn Fn(KeyboardEvent)>>,
    /// The test-only fault of the link (`fault=`), until the first run takes it.
    fault: Option<crate::runtime::fault::Fault>,
    /// The banner saying a fault was injected (stays after the run).
    fault_banner: Option<String>,
    /// The pasted log, as pasted (never rewritten by the page).
    log_text: String,
    /// The log table the user chose to fit.
    log_table: Option<usize>,
    /// The log parsed and fitted.
    import: Rc<Import>,
    /// The latest import request's number; an older answer is dropped.
    import_seq: u64,
    /// Bytes of the log the planner worker is reading; `None`: `import`
    /// is the text's.
    import_reading: Option<usize>,
    /// The browser kept the pasted log for the next visit ([`log_import::keep`]).
    log_kept: bool,
    /// The configuration before "Use this profile for the model" moved
    /// the page to the measured machine: turning the profile off goes
    /// back to its topology and rank count.
    before_profile: Option<Config>,
    /// The custom topology text, as typed / pasted / loaded (never
    /// rewritten by the page; filled from the link's topology on load).
    topo_text: String,
    /// Why the last "use this topology" was refused.
    topo_error: Option<SpecError>,
    /// The page's language.
    lang: Lang,
    /// Learn mode is open.
    learn_open: bool,
    /// The open lesson and its stop (1-based).
    lesson: Option<(&'static Lesson, usize)>,
    /// A setting changed since the stop was shown (its highlight is off).
    off_stop: bool,
    /// The training step card's inputs, once the user or the link set
    /// them (kept in the link, not in `Config`: nothing else reads them).
    training_step: Option<StepInput>,
    /// The pinned step compared beside it (its whole query), in the link
    /// as `step_vs`.
    step_vs: Option<String>,
    /// The stop's answer is shown.
    answer: bool,
    /// Scroll to the highlight after the next render.
    show_me: bool,
    /// The user asked for reduced motion: steps jump, tokens do not glide.
    reduced_motion: bool,
    /// The window's popstate listener, kept alive.
    popstate: Option<wasm_bindgen::closure::Closure<dyn Fn(web_sys::Event)>>,
    /// The size the user had before the fusion what-if replaced it with
    /// the bucket the workers run, and how they wrote it: turning fusion
    /// off gives both back.
    bytes_before_fusion: Option<(u64, String)>,
    /// The configuration the user had when they opened learn mode:
    /// closing it gives it back (a lesson's settings are the lesson's,
    /// not the user's).
    before_lesson: Option<Config>,
    /// When a control last changed the configuration ([`motion::now_ms`]):
    /// changes closer together than [`HISTORY_MERGE_MS`] (a slider drag)
    /// share one history entry.
    last_change_ms: f64,
}

/// The link's banner lists this many notices (unknown keys), then says
/// how many more there are.
const BANNER_SHOWN: usize = 5;
/// The keys of the unlisted ones the banner names.
const BANNER_MORE_KEYS: usize = 10;

/// Control changes less than this apart (ms) make one history entry, so a
/// slider drag is one step of Back, not dozens.
const HISTORY_MERGE_MS: f64 = 1000.0;

impl App {
    /// The page's own link state.
    fn ui(&self) -> url::UiState {
        url::UiState {
            lang: self.lang,
            lesson: if self.learn_open { self.lesson } else { None },
            step: self.training_step.clone(),
            vs: self.step_vs.clone(),
        }
    }

    /// The query of the page as it is: configuration, language, lesson.
    fn query(&self) -> String {
        url::query_with(&self.config, &self.ui(), !self.off_stop)
    }

    /// Writes the address bar: a new history entry now if `push`, else
    /// in place one task later, so that the estimate comes first
    /// (`history.replaceState` took 8–13 ms of a control change's task in
    /// a CPU profile of a 1024-rank page); a newer write replaces one
    /// still waiting.
    fn store(&mut self, push: bool) {
        let query: Rc<str> = self.query().into();
        if push {
            // The entry being left keeps the state it had: a rewrite still
            // waiting is written first.
            if let Some((q, _)) = self.store_later.take() {
                url::store_query(&q, false);
            }
            url::store_query(&query, true);
        } else {
            let q = query.clone();
            let t = Timeout::new(0, move || url::store_query(&q, false));
            self.store_later = Some((query, t));
        }
    }

    /// What the current stop highlights, unless a setting changed since.
    fn look(&self) -> Option<&'static Look> {
        match (self.learn_open, self.lesson, self.off_stop) {
            (true, Some((l, k)), false) => l.stops.get(k - 1).map(|s| &s.look),
            _ => None,
        }
    }

    /// Shows stop `k` of lesson `l`: its configuration, its step, its
    /// words; a new history entry if `push`.
    fn go_stop(&mut self, ctx: &Context<Self>, l: &'static Lesson, k: usize, push: bool) {
        let k = k.clamp(1, l.stops.len().max(1));
        let Some(stop) = l.stops.get(k - 1) else {
            return;
        };
        let (mut config, _) = Config::from_query(&stop.query);
        config.normalize_what_ifs();
        self.learn_open = true;
        self.lesson = Some((l, k));
        self.off_stop = false;
        self.answer = false;
        if config != self.config {
            self.config = config;
            self.copy_status = None;
            self.replan(ctx);
            self.schedule_run(ctx, 0);
        } else if self.plan_seq == 0 {
            // Before the page's first plan (`Msg::Start`): the stop's step
            // is capped by the plan's steps.
            self.replan(ctx);
        }
        self.playing = false;
        self.frames.cancel();
        // A plan made in the planner worker is not here yet: the stop's
        // step waits for it.
        self.step = stop.step.min(self.steps());
        self.step_when_planned = (self.drawn_in_worker && stop.step > 0).then_some(stop.step);
        self.frac = DWELL;
        self.store(push);
    }

    fn plan(&self) -> Option<Rc<Plan>> {
        self.plan.as_ref().ok().cloned()
    }

    fn steps(&self) -> usize {
        self.plan.as_ref().map(|p| p.steps()).unwrap_or(0)
    }

    /// Re-plans after a configuration change and resets the playback.
    /// [`Plan::on_page`] says where. A drawn configuration (up to
    /// [`MAX_DRAWN_RANKS`] ranks) is planned here without its ranking
    /// (at most ~33 ms natively; the ranking comes as [`Job::Ranked`]),
    /// unless its estimate simulates much: then the planner worker makes
    /// it ([`Job::Drawn`]) and its run waits. A model-only one is planned
    /// in the planner workers: its
    /// headline ([`Job::Headline`]: decision and estimate, the same
    /// figures) on a worker of its own, and beside it the full plan
    /// ([`Job::Full`]: ranking, what-ifs, about a second of wasm at 1024
    /// ranks), which replaces the headline when it comes
    /// ([`Msg::Planned`]); a newer configuration cancels both requests.
    fn replan(&mut self, ctx: &Context<Self>) {
        // Every change of `self.config` is planned here (a control, a
        // lesson stop, the browser's back button): the controls' callbacks
        // start from it from now on, drawn or not.
        self.latest.set(&self.config);
        self.plan_seq += 1;
        self.step_when_planned = None;
        self.drawn_in_worker = false;
        // The engine says what this thread makes: a costly plan (model-only,
        // auto by the model's fastest, a pipelined simulation) is made in
        // the planner worker.
        let made = match Plan::on_page(&self.config) {
            Ok(OnPage::Offload(why)) => Err(why),
            Ok(OnPage::Made(p)) => Ok(Ok(Rc::new(*p))),
            Err(e) => Ok(Err(e.to_string())),
        };
        match made {
            Err(Offload::ModelOnly) => {
                // The shown plan, its ranking and whether that is pending
                // stay as they are (dimmed) until the answer replaces them.
                self.planning = true;
                for job in [Job::Headline, Job::Full] {
                    self.ask_plan(ctx, job);
                }
            }
            Err(_) => {
                // A drawn plan made whole in the worker (its headline is
                // the costly part): drawn, verified and run when it comes.
                self.planner.cancel(Lane::Full);
                self.planning = true;
                self.drawn_in_worker = true;
                self.ask_plan(ctx, Job::Drawn);
            }
            Ok(plan) => {
                self.planner.cancel(Lane::Full);
                self.planning = false;
                // The ranking simulates every applicable algorithm
                // (hundreds of ms at 64 ranks with slices, or h100-8 at 1
                // GiB): it is made in the planner worker, on the
                // headline's lane, and the previous one is shown dimmed
                // until it comes.
                self.plan = plan;
                self.plan_partial = self.plan.is_ok();
                self.ranking_error = None;
                if self.plan.is_ok() {
                    self.ask_plan(ctx, Job::Ranked);
                } else {
                    self.planner.cancel(Lane::Headline);
                }
            }
        }
        self.reset_playback();
    }

    /// Asks the planner `job` about the current configuration; its answer
    /// comes as [`Msg::Planned`] with the current plan id and the job's
    /// lane.
    fn ask_plan(&self, ctx: &Context<Self>, job: Job) {
        let (link, id, lane) = (ctx.link().clone(), self.plan_seq, job.lane());
        // Handled in a task of its own, not in the one that read the
        // worker's message: the first answer after a page load is also the
        // first time this wasm decodes a plan, and V8 compiles its
        // functions lazily, on first call (a trace at 1024 ranks: 50-75 ms
        // compiling the decoder before wasm-opt was told not to merge it
        // into one function), and the App's update and render (30-40 ms)
        // ran in the same task's microtasks.
        let answered = self.answered.clone();
        self.planner.ask(&self.config, job, move |r| {
            answered.set(id);
            let link = link.clone();
            yew::platform::spawn_local(async move {
                gloo_timers::future::TimeoutFuture::new(0).await;
                link.send_message(Msg::Planned(id, lane, r))
            });
        });
    }

    /// The playback and the typed size after a new plan.
    fn reset_playback(&mut self) {
        self.step = 0;
        self.frac = DWELL;
        self.playing = false;
        self.frames.cancel();
        // A size typed as the user likes it (`1.5GB`) stays as typed.
        if parse_bytes(self.bytes_text.trim()) != Ok(self.config.bytes) {
            self.bytes_text = format::bytes_field(self.config.bytes);
        }
        self.bytes_error = None;
    }

    /// Starts a new run of the current plan after `delay_ms` (superseding
    /// any older run).
    fn schedule_run(&mut self, ctx: &Context<Self>, delay_ms: u32) {
        // The cards' planner jobs wait while a run's workers compute
        // (`Msg::StartRun` holds them, the run's end lets them go).
        self.planner.hold(false);
        self.run_seq += 1;
        let id = self.run_seq;
        self.current_run.set(id);
        self.pending_run = None;
        let ranks = self.config.ranks;
        self.run = Rc::new(match &self.plan {
            // Planned in the worker: model-only (above the drawn ranks),
            // or a drawn plan that runs when it comes (`Msg::Planned`).
            _ if self.drawn_in_worker => RunView::new(id, RunState::Idle, ranks),
            _ if self.planning => RunView::new(id, RunState::ModelOnly, ranks),
            Err(e) => {
                let mut v = RunView::new(id, RunState::Error, ranks);
                v.error = Some(e.clone());
                v
            }
            Ok(p) if !p.config.executable() => RunView::new(id, RunState::ModelOnly, ranks),
            Ok(_) => {
                let link = ctx.link().clone();
                self.pending_run = Some(Timeout::new(delay_ms, move || {
                    link.send_message(Msg::StartRun(id))
                }));
                RunView::new(id, RunState::Running, ranks)
            }
        });
    }

    /// Writes a user's change to the address bar: a new history entry, so
    /// Back returns to the settings before it (a burst of changes is one
    /// entry).
    fn store_change(&mut self) {
        let now = motion::now_ms();
        let push = now - self.last_change_ms > HISTORY_MERGE_MS;
        self.last_change_ms = now;
        self.store(push);
    }

    fn set_config(&mut self, ctx: &Context<Self>, mut config: Config) {
        // A control change can leave a what-if inconsistent (e.g. int32
        // with compression): the same rules as a link's.
        config.normalize_what_ifs();
        self.keep_user_size(&mut config);
        if config == self.config {
            return;
        }
        let before = std::mem::replace(&mut self.config, config);
        if self.learn_open && self.lesson.is_some() {
            self.off_stop = true;
        }
        self.store_change();
        // Only the collective and the rank count change what a log reads
        // as (a table naming neither takes the page's).
        let (op, ranks) = (self.config.primitive, self.config.ranks);
        if (op, ranks) != (before.primitive, before.ranks) && !self.log_text.trim().is_empty() {
            self.reimport(ctx);
        }
        self.copy_status = None;
        self.replan(ctx);
        self.schedule_run(ctx, RUN_DEBOUNCE_MS);
    }

    /// Fusion replaces the user's size with the bucket the workers run;
    /// when `next` turns fusion on, remember the user's size, and when it
    /// turns fusion off with that bucket still the size, give it back. A
    /// size the user picked while fused stays.
    fn keep_user_size(&mut self, next: &mut Config) {
        match (self.config.fusion.is_some(), next.fusion.is_some()) {
            (false, true) => {
                self.bytes_before_fusion = Some((self.config.bytes, self.bytes_text.clone()))
            }
            (true, false) => {
                let Some((b, text)) = self.bytes_before_fusion.take() else {
                    return;
                };
                let untouched = next.bytes == self.config.bytes
                    && self.config.fusion_run_bytes() == Some(self.config.bytes);
                let es = next.dtype.size_bytes() as u64;
                let b = b - b % es;
                if untouched && b > 0 {
                    next.bytes = b;
                    if parse_bytes(text.trim()) == Ok(b) {
                        self.bytes_text = text;
                    }
                }
            }
            _ => {}
        }
    }

    /// Re-parses and re-fits the pasted log: in the planner worker
    /// ([`Job::Import`]; a log can be megabytes, seconds of wasm), its
    /// answer as [`Msg::Imported`]. Nothing, or a text above the readers'
    /// cap (refused at once, by length), is read here.
    fn reimport(&mut self, ctx: &Context<Self>) {
        self.import_seq += 1;
        let text = &self.log_text;
        if text.trim().is_empty() || text.len() > crate::engine::formats::MAX_LOG_BYTES {
            let next = Import::new(
                text,
                self.log_table,
                self.config.primitive,
                self.config.ranks,
            );
            self.import_reading = None;
            if *self.import != next {
                self.import = Rc::new(next);
            }
            return;
        }
        self.import_reading = Some(text.len());
        let (link, seq) = (ctx.link().clone(), self.import_seq);
        let job = Job::Import {
            text: text.clone(),
            table: self.log_table,
        };
        self.planner.ask(&self.config, job, move |r| {
            let imported = match r.answer {
                Ok(Answer::Import(i)) => Ok(i),
                Ok(_) => Err("the planner worker answered another question".to_string()),
                Err(e) => Err(e),
            };
            link.send_message(Msg::Imported(seq, imported));
        });
    }

    fn ensure_ticker(&mut self) {
        if !self.frames.running() {
            self.last_tick = motion::now_ms();
            self.frames.request();
        }
    }

    /// Advances the playback clock to frame time `now` (ms) and asks for
    /// the next frame while it runs. Returns whether the App re-renders:
    /// only when the step, its end state (what the buffers show) or
    /// play / pause changed; the progress in between reaches the moving
    /// parts through the [`Clock`].
    fn tick(&mut self, now: f64) -> bool {
        let before = (self.step, self.frac >= 1.0, self.playing);
        let dt = (now - self.last_tick).clamp(0.0, 200.0);
        self.last_tick = now;
        let total = self.steps();
        let more = if self.frac < DWELL && (self.frac < 1.0 || self.playing) {
            // Reduced motion: a step shows its end state at once (no gliding
            // tokens); playing still dwells on each step.
            if self.reduced_motion && self.frac < 1.0 {
                self.frac = 1.0;
            }
            self.frac = (self.frac + dt * self.speed / STEP_MS).min(DWELL);
            if !self.playing && self.frac >= 1.0 {
                self.frac = DWELL;
                false
            } else {
                true
            }
        } else if self.playing && self.step < total {
            self.step += 1;
            self.frac = 0.0;
            true
        } else {
            self.playing = false;
            false
        };
        if more {
            self.frames.request();
        }
        before != (self.step, self.frac >= 1.0, self.playing)
    }

    fn commit_bytes(&mut self, ctx: &Context<Self>) {
        let text = self.bytes_text.trim().to_string();
        let dtype = self.config.dtype;
        let es = dtype.size_bytes() as u64;
        // The engine's one definition of a message size (the link's and
        // cclsim's); the words around it are the page's, in its language.
        let result = match parse_bytes(&text) {
            Err(why) => Err(t!(
                "bytes-bad",
                text = text.clone(),
                why = why,
                min = format_bytes(MIN_BYTES),
                max = format_bytes(MAX_BYTES)
            )),
            Ok(b) => match message_bytes(&text, dtype) {
                Ok(b) => Ok(b),
                Err(_) if !(MIN_BYTES..=MAX_BYTES).contains(&b) => Err(t!(
                    "bytes-range",
                    text = text.clone(),
                    bytes = b,
                    min = format_bytes(MIN_BYTES),
                    max = format_bytes(MAX_BYTES),
                    max_bytes = MAX_BYTES
                )),
                Err(_) => Err(t!(
                    "bytes-multiple",
                    text = text.clone(),
                    bytes = b,
                    dtype = dtype.name(),
                    es = es,
                    example = (b - b % es).max(es)
                )),
            },
        };
        match result {
            Err(e) => self.bytes_error = Some(e),
            Ok(b) => {
                let mut next = self.config.clone();
                next.bytes = b;
                self.bytes_error = None;
                if next != self.config {
                    self.set_config(ctx, next);
                }
            }
        }
    }
}

impl App {
    /// Marks the card a stop's `Look::Panel` names (the cards are other
    /// components' elements), sets `<html lang>`, and after "show me"
    /// scrolls to the highlight and moves the focus there.
    fn apply_dom_look(&mut self) {
        use wasm_bindgen::JsCast;
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let Some(root) = doc.document_element() {
            if root.get_attribute("lang").as_deref() != Some(self.lang.html_lang()) {
                let _ = root.set_attribute("lang", self.lang.html_lang());
            }
        }
        let want = match self.look() {
            Some(Look::Panel(id)) => Some(id.as_str()),
            _ => None,
        };
        if let Ok(list) = doc.query_selector_all(".lesson-look-dom") {
            for i in 0..list.length() {
                if let Some(el) = list
                    .item(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                {
                    if Some(el.id().as_str()) != want {
                        let _ = el.class_list().remove_1("lesson-look-dom");
                    }
                }
            }
        }
        if let Some(el) = want.and_then(|id| doc.get_element_by_id(id)) {
            if !el.class_list().contains("lesson-look-dom") {
                let _ = el.class_list().add_1("lesson-look-dom");
            }
        }
        if std::mem::take(&mut self.show_me) {
            let target = doc
                .query_selector(
                    ".lesson-look, .lesson-look-dom, .lesson-look-link, .lesson-look-card",
                )
                .ok()
                .flatten();
            if let Some(el) = target {
                el.scroll_into_view_with_bool(false);
                // Focus the highlighted element if it is HTML, else its card.
                let focus = el
                    .clone()
                    .dyn_into::<web_sys::HtmlElement>()
                    .ok()
                    .or_else(|| {
                        el.closest("section")
                            .ok()
                            .flatten()
                            .and_then(|c| c.dyn_into().ok())
                    });
                if let Some(h) = focus {
                    if h.get_attribute("tabindex").is_none() {
                        let _ = h.set_attribute("tabindex", "-1");
                    }
                    let _ = h.focus();
                }
            }
        }
    }
}

impl App {
    /// [`Component::update`] but the [`Clock`]'s: handles `msg`, returns
    /// whether the App re-renders.
    fn handle(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::SetConfig(c) => return self.config_set(ctx, c),
            Msg::ShowStale(id) => return self.show_stale(id),
            Msg::BytesText(t) => {
                self.bytes_text = t;
                self.bytes_error = None;
            }
            Msg::BytesCommit => self.commit_bytes(ctx),
            Msg::Planned(id, lane, r) => return self.planned(ctx, id, lane, r),
            Msg::Seed(text) => self.apply_seed(ctx, text),
            Msg::Start => self.first_plan_and_run(ctx),
            Msg::StartRun(id) => return self.start_run(ctx, id),
            Msg::Rerun => {
                self.schedule_run(ctx, 0);
            }
            Msg::Report(id, checked) => return self.add_checked(id, checked),
            Msg::Compressed(id, r) => return self.add_compressed(id, r),
            Msg::Done(id, res) => return self.finish_run(id, res),
            Msg::Goto(k) => self.go_to_step(k),
            Msg::Play => self.play(),
            Msg::Pause => self.pause(),
            Msg::Forward => self.step_forward(),
            Msg::Back => self.step_back(),
            Msg::Speed(s) => self.speed = s.clamp(0.05, 16.0),
            Msg::Tick(now) => return self.tick(now),
            Msg::CopyLink => {
                self.copy_link(ctx);
                return false;
            }
            Msg::Copied(r) => self.copy_status = Some(r),
            Msg::DismissUrlErrors => self.url_errors.clear(),
            Msg::TogglePlay => {
                let msg = if self.playing { Msg::Pause } else { Msg::Play };
                return self.handle(ctx, msg);
            }
            Msg::Last => return self.handle(ctx, Msg::Goto(self.steps())),
            Msg::LogText(text) => self.on_log_text(ctx, text),
            Msg::LogTable(i) => {
                self.log_table = Some(i);
                self.reimport(ctx);
            }
            Msg::Imported(seq, imported) => return self.on_imported(seq, imported),
            Msg::UseProfile(on) => return self.use_profile(ctx, on),
            Msg::TopoText(text) => {
                self.topo_text = text;
                self.topo_error = None;
            }
            Msg::TopoFile(text) => {
                self.topo_text = text;
                return self.handle(ctx, Msg::UseTopo);
            }
            Msg::UseTopo => self.use_topology(ctx),
            Msg::SetStep(step) => return self.set_training_step(step),
            Msg::PinStep(vs) => return self.pin_step(vs),
            Msg::SetLang(l) => return self.switch_lang(l),
            Msg::OpenLearn => self.open_learn(),
            Msg::CloseLearn => self.close_learn(ctx),
            Msg::LearnList => self.show_lesson_list(),
            Msg::LessonStop(id, k) => return self.go_to_lesson_stop(ctx, id, k),
            Msg::Answer(on) => self.answer = on,
            Msg::ShowMe => self.show_me = true,
            Msg::Drawn => {
                self.apply_dom_look();
                return false;
            }
            Msg::PopState => self.pop_state(ctx),
        }
        true
    }

    /// [`STALE_MS`] after the change that asked plan `id`: render (the
    /// previous plan dimmed as stale) only if that plan is still the one
    /// asked for and has not come, since an answered plan rendered already.
    fn show_stale(&mut self, id: u64) -> bool {
        self.stale_later = None;
        id == self.plan_seq && self.planning && self.answered.get() != id
    }

    /// Applies a typed seed; a seed that is not a number stays typed and
    /// the field says why, so the user can correct it.
    fn apply_seed(&mut self, ctx: &Context<Self>, text: String) {
        match text.trim().parse::<u64>() {
            Ok(seed) => {
                self.seed_error = None;
                let mut next = self.config.clone();
                next.seed = seed;
                self.set_config(ctx, next);
            }
            Err(_) => self.seed_error = Some(crate::t!("seed-bad", text = text.trim().to_string())),
        }
    }

    /// The page's first plan and run, one task after its first render, so
    /// the first render is not held up by planning.
    fn first_plan_and_run(&mut self, ctx: &Context<Self>) {
        self.start = None;
        // A lesson stop or a control change planned already.
        if self.plan_seq == 0 {
            self.replan(ctx);
        }
        // The page runs its configuration once on load.
        self.schedule_run(ctx, 0);
    }

    /// Adds the ranks run `id` checked to its result; a superseded run's
    /// report is dropped, with no render. Whether to render.
    fn add_checked(&mut self, id: u64, checked: Vec<run::Checked>) -> bool {
        if id != self.current_run.get() {
            return false;
        }
        let run = Rc::make_mut(&mut self.run);
        for (rep, samples) in checked {
            run.add(rep, samples);
        }
        true
    }

    /// Keeps the compressed run `id`'s report, or why it has none; a
    /// superseded run's is dropped, with no render. Whether to render.
    fn add_compressed(
        &mut self,
        id: u64,
        r: Result<crate::engine::compressed::CompressedReport, String>,
    ) -> bool {
        if id != self.current_run.get() {
            return false;
        }
        let run = Rc::make_mut(&mut self.run);
        match r {
            Ok(r) => run.compressed = Some(r),
            Err(e) => run.reference_error = Some(e),
        }
        true
    }

    /// Run `id` ended: the planner's held jobs may go on, and the run shows
    /// its outcome; a superseded run's end is dropped. Whether to render.
    fn finish_run(&mut self, id: u64, res: Result<RunSummary, RunError>) -> bool {
        if id != self.current_run.get() {
            return false;
        }
        self.planner.hold(false);
        Rc::make_mut(&mut self.run).finish(res);
        true
    }

    /// Shows step `k` (at most the last), animating its transfers; the
    /// initial state has none to animate, so it rests.
    fn go_to_step(&mut self, k: usize) {
        self.playing = false;
        self.step = k.min(self.steps());
        if self.step == 0 {
            self.frac = DWELL;
            self.frames.cancel();
        } else {
            self.frac = 0.0;
            self.ensure_ticker();
        }
    }

    /// Plays from the current step, from the start when at the end, so
    /// Play always has steps to show.
    fn play(&mut self) {
        if self.step >= self.steps() {
            self.step = 0;
            self.frac = DWELL;
        }
        self.playing = true;
        self.ensure_ticker();
    }

    /// Pauses: a step in flight finishes its animation rather than
    /// freezing half-drawn.
    fn pause(&mut self) {
        self.playing = false;
        if self.frac < 1.0 {
            self.ensure_ticker(); // finish the step in flight
        } else {
            self.frac = DWELL;
            self.frames.cancel();
        }
    }

    /// One step forward, animated; at the last step there is none to go to.
    fn step_forward(&mut self) {
        self.playing = false;
        if self.step < self.steps() {
            self.step += 1;
            self.frac = 0.0;
            self.ensure_ticker();
        }
    }

    /// One step back, shown at rest: a step is animated going forward only.
    fn step_back(&mut self) {
        self.playing = false;
        self.frames.cancel();
        self.step = self.step.saturating_sub(1);
        self.frac = DWELL;
    }

    /// Copies the share link; the clipboard answers later
    /// ([`Msg::Copied`]), so nothing changes on the page now.
    fn copy_link(&mut self, ctx: &Context<Self>) {
        let link = url::link_of(&self.query());
        let scope = ctx.link().clone();
        yew::platform::spawn_local(async move {
            let r = url::copy_to_clipboard(link).await;
            scope.send_message(Msg::Copied(r));
        });
    }

    /// The pasted or dropped log text changed: kept for the next visit and
    /// read again, its table picked anew (the old pick may not exist in it).
    fn on_log_text(&mut self, ctx: &Context<Self>, text: String) {
        if text != self.log_text {
            self.log_text = text;
            self.log_table = None;
            self.log_kept = log_import::keep(&self.log_text);
            self.reimport(ctx);
        }
    }

    /// The planner worker's reading of import request `seq`; an answer to
    /// an older request is dropped, with no render. Whether to render.
    fn on_imported(&mut self, seq: u64, imported: Result<Box<Import>, String>) -> bool {
        if seq != self.import_seq {
            return false;
        }
        self.import_reading = None;
        self.import = Rc::new(match imported {
            Ok(i) => *i,
            Err(e) => Import::unread(e),
        });
        true
    }

    /// Uses the fitted profile for the model (`on`), remembering the
    /// machine to come back to, or goes back to it; without a fit there is
    /// nothing to use. Whether to render.
    fn use_profile(&mut self, ctx: &Context<Self>, on: bool) -> bool {
        let next = if on {
            let Some(Ok(p)) = &self.import.fit else {
                return false;
            };
            // The machine to come back to: the one before the
            // first profile (a second fit replaces the profile,
            // not the way back).
            if self.config.topo != MEASURED || self.before_profile.is_none() {
                self.before_profile = Some(self.config.clone());
            }
            super::topologies::with_profile(&self.config, p)
        } else {
            let back = if self.config.topo == MEASURED {
                self.before_profile.take()
            } else {
                None
            };
            super::topologies::without_profile(&self.config, back.as_ref())
        };
        self.set_config(ctx, next);
        true
    }

    /// Parses the custom topology text and uses it; text that does not
    /// parse stays, and the panel says why.
    fn use_topology(&mut self, ctx: &Context<Self>) {
        match CustomTopology::parse(&self.topo_text) {
            Ok(t) => {
                self.topo_error = None;
                let next = super::topologies::with_custom(&self.config, t);
                self.set_config(ctx, next);
            }
            Err(e) => self.topo_error = Some(e),
        }
    }

    /// The training step card's inputs changed: kept in the address; the
    /// same inputs again change nothing. Whether to render.
    fn set_training_step(&mut self, step: StepInput) -> bool {
        if self.training_step.as_ref() == Some(&step) {
            return false;
        }
        self.training_step = Some(step);
        self.store_change();
        true
    }

    /// Pins a step for comparison (its whole query) or unpins it, kept in
    /// the address; the same pin again changes nothing. Whether to render.
    fn pin_step(&mut self, vs: Option<String>) -> bool {
        if self.step_vs == vs {
            return false;
        }
        // Pinning the default step makes it the user's own.
        if self.training_step.is_none() {
            self.training_step = vs
                .as_deref()
                .and_then(|q| crate::engine::step::link::from_full_query(q).ok())
                .map(|(_, s)| s);
        }
        self.step_vs = vs;
        self.store_change();
        true
    }

    /// Switches the page's language, kept in the address; the same
    /// language again changes nothing. Whether to render.
    fn switch_lang(&mut self, l: Lang) -> bool {
        if l == self.lang {
            return false;
        }
        self.lang = l;
        i18n::set_lang(l);
        self.store(false);
        true
    }

    /// Opens the lesson list, remembering the user's own configuration so
    /// that closing the lessons gives it back.
    fn open_learn(&mut self) {
        if !self.learn_open {
            self.before_lesson = Some(self.config.clone());
        }
        self.learn_open = true;
        self.lesson = None;
        self.store(false);
    }

    /// Back to the lesson list from a lesson.
    fn show_lesson_list(&mut self) {
        self.lesson = None;
        self.off_stop = false;
        self.store(false);
    }

    /// Goes to stop `k` of lesson `id`, a new history entry; an unknown
    /// lesson changes nothing. Whether to render.
    fn go_to_lesson_stop(&mut self, ctx: &Context<Self>, id: &'static str, k: usize) -> bool {
        let Some(l) = lessons::find(id) else {
            return false;
        };
        // The link's complaints about lesson keys are answered.
        self.url_errors
            .retain(|e| !url::UI_KEYS.contains(&e.key.as_str()));
        self.go_stop(ctx, l, k, true);
        true
    }

    /// A control produced `c`: plan it; whether to render now.
    fn config_set(&mut self, ctx: &Context<Self>, c: Config) -> bool {
        self.seed_error = None;
        let shown = self.plan.is_ok();
        self.set_config(ctx, c);
        // A model-only plan is on its way from the planner worker
        // (tens of ms at 1024 ranks): the page keeps showing the
        // previous one and renders once, with the answer
        // (`Msg::Planned`), or after STALE_MS dimmed as stale. A
        // render now would diff and lay out the whole page on the
        // cores the planner needs; the controls' callbacks start
        // from `latest`, not from their lagging props.
        if shown && self.planning {
            let (link, id) = (ctx.link().clone(), self.plan_seq);
            self.stale_later = Some(Timeout::new(STALE_MS, move || {
                link.send_message(Msg::ShowStale(id))
            }));
            return false;
        }
        true
    }

    /// The planner worker's answer `r` to plan `id` on `lane`; whether to render.
    fn planned(&mut self, ctx: &Context<Self>, id: u64, lane: Lane, r: Response) -> bool {
        if id != self.plan_seq {
            return false;
        }
        // The headline is late when the full plan (the same
        // figures and more) came first (a drawn plan's ranking
        // comes on the headline's lane while it is partial).
        if lane == Lane::Headline && !self.planning && !self.plan_partial {
            return false;
        }
        // A drawn plan made in the worker ([`Job::Drawn`]): its
        // run waits for it.
        let drawn_here = std::mem::take(&mut self.drawn_in_worker);
        let was_planning = std::mem::replace(&mut self.planning, false);
        match r.answer {
            Ok(Answer::Ranked(r)) => {
                self.ranked = Some(Rc::new(*r));
                self.plan_partial = false;
            }
            Ok(Answer::Headline(p)) => {
                self.plan = p.arrive(self.plan.as_deref().ok()).map(Rc::new);
                self.plan_partial = self.plan.is_ok();
                (self.ranked, self.ranking_error) = (None, None);
            }
            // The same configuration: only the ranking and the
            // what-ifs are new (the step stays).
            Ok(Answer::Full(p)) => {
                self.plan = p.arrive(self.plan.as_deref().ok()).map(Rc::new);
                self.plan_partial = false;
                (self.ranked, self.ranking_error) = (None, None);
            }
            // A drawn plan made in the worker: its trace is made
            // here (it does not cross), it runs, and its ranking
            // follows (the previous one dimmed until then).
            Ok(Answer::Drawn(p)) => {
                self.plan = p
                    .arrive(self.plan.as_deref().ok())
                    .and_then(|p| p.with_verification().map_err(|e| e.to_string()))
                    .map(Rc::new);
                self.plan_partial = self.plan.is_ok();
                self.ranking_error = None;
                // The stop's step, or where the keys moved the
                // previous plan's playback meanwhile.
                let k = self.step_when_planned.take().unwrap_or(self.step);
                self.step = k.min(self.steps());
                if drawn_here && self.plan.is_ok() {
                    self.schedule_run(ctx, 0);
                }
            }
            // A drawn plan's ranking failed (the worker, or a row's
            // plan): the plan stays, the panel says why.
            Err(e) if !drawn_here && self.config.ranks <= MAX_DRAWN_RANKS && self.plan.is_ok() => {
                self.ranking_error = Some(e);
                self.ranked = None;
                self.plan_partial = false;
            }
            Ok(_) => return false,
            // The full plan's error after the headline's is the
            // same sentence: said once.
            // (A plan asked for meets the same error anew: it is
            // shown, and the run panel told.)
            Err(e) if !was_planning && self.plan.as_ref().err() == Some(&e) => return false,
            Err(e) => {
                self.plan = Err(e);
                self.plan_partial = false;
            }
        }
        // A failed plan (the headline, or the full plan's ranking
        // or what-ifs) is said in the result panel too.
        if self.plan.is_err() {
            self.schedule_run(ctx, 0);
        }
        true
    }

    /// Starts run `id` on the rank workers once the page is idle (never renders).
    fn start_run(&mut self, ctx: &Context<Self>, id: u64) -> bool {
        if id != self.current_run.get() {
            return false;
        }
        if let Some(plan) = self.plan() {
            self.planner.hold(true);
            let (l1, l2, l3) = (ctx.link().clone(), ctx.link().clone(), ctx.link().clone());
            // The link's test-only fault goes with this run only:
            // armed when its workers start, dropped if a newer run
            // supersedes it first (its rank and step were this
            // configuration's).
            let fault = self.fault.take();
            let current = self.current_run.clone();
            // The workers start once the page is idle
            // (`when_idle`, RUN_IDLE_WAIT_MS at the latest): not
            // in this message's task, which on a page load also
            // draws the new plan's stage, and not while the page
            // still draws its slices, whose tasks the workers'
            // threads would stretch on a machine of few cores. A
            // newer run makes this one stale (`current_run`). The
            // cards' planner jobs not yet begun wait from here
            // (`hold`), through the idle wait too.
            self.pending_run = None;
            super::deferred::when_idle(RUN_IDLE_WAIT_MS, move || {
                if current.get() != id {
                    return;
                }
                if let Some(f) = fault {
                    crate::runtime::browser::pool::arm_fault(f);
                }
                run::start(
                    id,
                    plan,
                    current,
                    move |id, checked| l1.send_message(Msg::Report(id, checked)),
                    move |id, r| l3.send_message(Msg::Compressed(id, r)),
                    move |id, res| l2.send_message(Msg::Done(id, res)),
                );
            });
        } else {
            self.pending_run = None;
        }
        false
    }

    /// Leaves the lessons, giving back the user's own configuration.
    fn close_learn(&mut self, ctx: &Context<Self>) {
        self.learn_open = false;
        self.lesson = None;
        self.off_stop = false;
        // Leaving the lessons gives back what the user had (a
        // what-if such as `slow=` included); a lesson opened from a
        // link had nothing before it and keeps its settings.
        if let Some(c) = self.before_lesson.take() {
            if c != self.config {
                self.config = c;
                self.copy_status = None;
                self.replan(ctx);
                self.schedule_run(ctx, 0);
            }
        }
        // The lesson stays one Back away.
        self.store(true);
    }

    /// Back or Forward: the page becomes the address it went to.
    fn pop_state(&mut self, ctx: &Context<Self>) {
        // The entry the user went to is the address now: an
        // in-place rewrite still waiting would overwrite it.
        self.store_later = None;
        let query = url::current_query();
        let (config, errors) = url::load();
        let (ui, ui_errors) = url::load_ui(&query);
        let stop_given = form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
            .any(|(k, _)| k == "stop");
        self.url_errors = errors;
        self.url_errors.extend(ui_errors);
        self.lang = ui.lang;
        i18n::set_lang(ui.lang);
        self.training_step = ui.step.clone();
        self.step_vs = ui.vs.clone();
        match ui.lesson {
            Some((l, k)) if stop_given => self.go_stop(ctx, l, k, false),
            _ => {
                if ui.lesson.is_none() {
                    self.before_lesson = None;
                }
                self.learn_open = ui.lesson.is_some();
                self.lesson = ui.lesson;
                self.off_stop = ui.lesson.is_some();
                if config != self.config {
                    self.config = config;
                    self.replan(ctx);
                    self.schedule_run(ctx, 0);
                }
            }
        }
    }
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let (config, mut url_errors) = url::load();
        let query = url::current_query();
        // The language first: the link banner's words are in it.
        let (ui, _) = url::load_ui(&query);
        i18n::set_lang(ui.lang);
        let (ui, ui_errors) = url::load_ui(&query);
        url_errors.extend(ui_errors);
        let stop_given = form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
            .any(|(k, _)| k == "stop");
        let mut app = App {
            cb: Callbacks::new(ctx.link()),
            config,
            url_errors,
            plan: Err(String::new()),
            plan_partial: false,
            ranked: None,
            ranking_error: None,
            plan_seq: 0,
            planning: false,
            planner: Planner::new(),
            latest: Latest::default(),
            stale_later: None,
            answered: Rc::new(Cell::new(0)),
            bytes_text: String::new(),
            bytes_error: None,
            seed_error: None,
            run: Rc::new(RunView::new(0, RunState::Idle, 0)),
            run_seq: 0,
            current_run: Rc::new(Cell::new(0)),
            pending_run: None,
            store_later: None,
            start: None,
            step: 0,
            step_when_planned: None,
            drawn_in_worker: false,
            frac: DWELL,
            clock: Clock::new(1.0),
            playing: false,
            speed: 1.0,
            frames: {
                let link = ctx.link().clone();
                Frames::new(move |ts| link.send_message(Msg::Tick(ts)))
            },
            last_tick: 0.0,
            copy_status: None,
            keys: None,
            fault: url::load_fault(),
            fault_banner: url::load_fault().map(|f| f.describe()),
            log_text: log_import::kept(),
            log_table: None,
            import: Rc::new(Import::empty()),
            import_seq: 0,
            import_reading: None,
            log_kept: true,
            before_profile: None,
            topo_text: String::new(),
            topo_error: None,
            lang: ui.lang,
            learn_open: ui.lesson.is_some(),
            lesson: ui.lesson,
            training_step: ui.step.clone(),
            step_vs: ui.vs.clone(),
            off_stop: ui.lesson.is_some() && !stop_given,
            answer: false,
            show_me: false,
            reduced_motion: web_sys::window()
                .and_then(|w| {
                    w.match_media("(prefers-reduced-motion: reduce)")
                        .ok()
                        .flatten()
                })
                .is_some_and(|m| m.matches()),
            popstate: None,
            bytes_before_fusion: None,
            before_lesson: None,
            last_change_ms: f64::NEG_INFINITY,
        };
        if let Some(t) = &app.config.custom {
            app.topo_text = serde_json::to_string_pretty(t).unwrap_or_default();
        }
        // A log pasted before the reload, read again.
        if !app.log_text.is_empty() {
            app.reimport(ctx);
        }
        // A lesson stop's link shows that stop (its configuration and
        // step, which needs the plan's steps: `go_stop` plans now).
        if let (Some((l, k)), true) = (ui.lesson, stop_given) {
            app.go_stop(ctx, l, k, false);
        }
        // A clean link (or none) is rewritten to the full configuration, so
        // the address bar always reproduces the run; a link with errors is
        // left as the user gave it (nothing they had is lost).
        if app.url_errors.is_empty() {
            app.store(false);
        }
        // The first render is the page around a placeholder (`#planning`);
        // the plan and the run come one task later (`Msg::Start`): the
        // wasm's first task also compiles every function it calls for the
        // first time (V8 compiles wasm lazily, on the main thread), and the
        // plan's first use of the engine was most of that.
        if app.plan_seq == 0 {
            app.planning = true;
        }
        let link = ctx.link().clone();
        app.start = Some(Timeout::new(0, move || link.send_message(Msg::Start)));
        app.latest.set(&app.config);
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        let render = self.handle(ctx, msg);
        self.clock.set(self.frac.min(1.0));
        render
    }

    fn rendered(&mut self, ctx: &Context<Self>, first_render: bool) {
        self.apply_dom_look();
        if !first_render {
            return;
        }
        // Back / Forward between lesson stops.
        let link = ctx.link().clone();
        let pop = wasm_bindgen::closure::Closure::<dyn Fn(web_sys::Event)>::new(
            move |_: web_sys::Event| link.send_message(Msg::PopState),
        );
        if let Some(w) = web_sys::window() {
            let _ = w.add_event_listener_with_callback(
                "popstate",
                wasm_bindgen::JsCast::unchecked_ref(pop.as_ref()),
            );
        }
        self.popstate = Some(pop);
        // Playback keys, unless the user is typing in a form field.
        let link = ctx.link().clone();
        let handler = wasm_bindgen::closure::Closure::<dyn Fn(KeyboardEvent)>::new(
            move |e: KeyboardEvent| {
                // A focused widget that took the key (the canvas buffer
                // grid's cursor) keeps it.
                if e.ctrl_key() || e.meta_key() || e.alt_key() || e.default_prevented() {
                    return;
                }
                let typing = e
                    .target()
                    .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
                    .is_some_and(|el| {
                        matches!(
                            el.tag_name().as_str(),
                            "INPUT" | "SELECT" | "TEXTAREA" | "BUTTON"
                        )
                    });
                if typing {
                    return;
                }
                let msg = match e.key().as_str() {
                    " " => Msg::TogglePlay,
                    "ArrowRight" => Msg::Forward,
                    "ArrowLeft" => Msg::Back,
                    "Home" => Msg::Goto(0),
                    "End" => Msg::Last,
                    _ => return,
                };
                e.prevent_default();
                link.send_message(msg);
            },
        );
        if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
            let _ = doc.add_event_listener_with_callback(
                "keydown",
                wasm_bindgen::JsCast::unchecked_ref(handler.as_ref()),
            );
        }
        self.keys = Some(handler);
    }

    /// The page's outline, top to bottom. Each part is its own method so
    /// that what the page is made of reads here, and each part's markup
    /// can be read on its own.
    fn view(&self, ctx: &Context<Self>) -> Html {
        // Every part's words are looked up in this language.
        i18n::set_lang(self.lang);
        let plan = self.plan();
        html! {
            <ContextProvider<Lang> context={self.lang}>
            <ContextProvider<Planner> context={self.planner.clone()}>
            <ContextProvider<Latest> context={self.latest.clone()}>
            <ContextProvider<Clock> context={self.clock.clone()}>
            <div class="app">
                <a class="skip-link" href="#stage">{t!("skip-to-main")}</a>
                {self.header(ctx)}
                {self.config_banner(ctx)}
                {self.fault_banner()}
                {self.learn_panel()}
                {self.controls(&plan)}
                {self.main_layout(&plan)}
                {self.what_ifs(&plan)}
                {self.measure_layout(&plan)}
                {footer()}
            </div>
            </ContextProvider<Clock>>
            </ContextProvider<Latest>>
            </ContextProvider<Planner>>
            </ContextProvider<Lang>>
        }
    }
}

/// Scrolls the page to the element `id` (no history entry) and focuses
/// `focus`, if given.
fn jump_to(id: &'static str, focus: Option<&'static str>) -> Callback<MouseEvent> {
    use wasm_bindgen::JsCast;
    Callback::from(move |_: MouseEvent| {
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let Some(el) = doc.get_element_by_id(id) {
            el.scroll_into_view();
        }
        if let Some(el) = focus
            .and_then(|f| doc.get_element_by_id(f))
            .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    })
}

/// The parts of the page [`App::view`] lays out, one method a part.
impl App {
    /// The top bar: the name, the language switch, the way into learn
    /// mode and the share link, which are there whatever the plan is.
    fn header(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let share = url::link_of(&self.query());
        let lang_buttons = Lang::ALL.iter().map(|l| {
            let l = *l;
            let on = l == self.lang;
            html! {
                <button class={classes!("lang-button", on.then_some("on"))} lang={l.html_lang()} aria-pressed={on.to_string()}
                    data-lang={l.code()} onclick={link.callback(move |_| Msg::SetLang(l))}>{l.native_name()}</button>
            }
        });
        html! {
            <header class="top">
                <div class="brand">
                    <h1>{"ccl-playground"}</h1>
                    <p class="tagline">{t!("app-tagline")}</p>
                </div>
                <div class="top-actions">
                    <div class="lang-switch" role="group" aria-label={t!("lang-switch")}>{ for lang_buttons }</div>
                    if !self.learn_open {
                        <button id="learn-open" class="learn-open" onclick={link.callback(|_| Msg::OpenLearn)}>{t!("learn-open")}</button>
                    }
                    // A phone shows the result and the estimate first; this
                    // takes it to the controls below them (no history entry).
                    <button id="jump-settings" class="jump-settings" onclick={jump_to("controls", None)}>{t!("jump-settings")}</button>
                    // The way to the user's own measurements, from the first screen.
                    <button id="jump-measurements" class="jump-measurements" title={t!("jump-measurements-title")}
                        onclick={jump_to("log-import", Some("log-input"))}>{t!("jump-measurements")}</button>
                </div>
                <div class="share">
                    <button id="copy-link" class="primary" onclick={link.callback(|_| Msg::CopyLink)}>{t!("copy-link")}</button>
                    {self.copy_note()}
                    <input id="share-link" class="share-link" type="text" readonly=true value={share}
                        aria-label={t!("share-link-label")} onfocus={Callback::from(|e: FocusEvent| {
                            e.target_unchecked_into::<web_sys::HtmlInputElement>().select();
                        })} />
                </div>
            </header>
        }
    }

    /// Whether the last "copy link" worked, beside its button, so the
    /// user knows the link is on the clipboard (or why it is not).
    fn copy_note(&self) -> Html {
        match &self.copy_status {
            Some(Ok(())) => html! { <span class="copy-ok" role="status">{t!("copied")}</span> },
            Some(Err(e)) => html! { <span class="copy-err" role="status">{e.clone()}</span> },
            None => html! {},
        }
    }

    /// The link's banner: what in the address was wrong or unknown, and
    /// what the page used instead, so a shared link that no longer means
    /// what it did does not fail silently. A link can carry thousands of
    /// unknown keys: the banner shows a few notices and counts the rest
    /// ([`banner_more`]), not a page of them. Errors are all listed: one
    /// per known key at most.
    fn config_banner(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        // What a bad value of the link was replaced with.
        let effective: Vec<(String, String)> =
            form_urlencoded::parse(self.config.to_query().as_bytes())
                .into_owned()
                .collect();
        let (notices, errors): (Vec<&ConfigError>, Vec<&ConfigError>) =
            self.url_errors.iter().partition(|e| e.is_notice());
        html! {
            <div id="config-error" class="config-error" role="alert" hidden={self.url_errors.is_empty()}>
                if !self.url_errors.is_empty() {
                    <div class="config-error-head">
                        <strong>{ if self.url_errors.iter().all(|e| e.is_notice()) {
                            t!("banner-notes")
                        } else {
                            t!("banner-errors")
                        } }</strong>
                        <button class="link-button" onclick={link.callback(|_| Msg::DismissUrlErrors)} aria-label={t!("banner-dismiss-label")}>{t!("banner-dismiss")}</button>
                    </div>
                    <ul class="config-errors">
                        { for errors.iter().map(|e| html! { <li class="config-error-item"><span class="badge-error">{t!("badge-error")}</span>{" "}<code>{e.to_string()}</code><span class="used-instead">{used_instead(e, &effective)}</span></li> }) }
                    </ul>
                    <ul class="config-notices">
                        { for notices.iter().take(BANNER_SHOWN).map(|e| html! { <li class="config-notice"><span class="badge-notice">{t!("badge-notice")}</span>{" "}<code>{e.to_string()}</code></li> }) }
                        { banner_more(&notices, "config-notice-more") }
                    </ul>
                }
            </div>
        }
    }

    /// The test-only fault's banner: a run that fails on purpose says so,
    /// and keeps saying so after the run.
    fn fault_banner(&self) -> Html {
        html! {
            if let Some(b) = &self.fault_banner {
                <div id="fault-banner" class="fault-banner" role="status">{t!("fault-banner", what = b.clone())}</div>
            }
        }
    }

    /// Learn mode's lesson panel, above the controls so a stop's words
    /// sit beside the settings it changed; nothing while learn mode is
    /// closed.
    fn learn_panel(&self) -> Html {
        let cb = &self.cb;
        if self.learn_open {
            html! {
                <Learn at={self.lesson} off_stop={self.off_stop} answer={self.answer}
                    on_stop={cb.lesson_stop.clone()}
                    on_answer={cb.answer.clone()}
                    on_show_me={cb.show_me.clone()}
                    on_close={cb.close_learn.clone()}
                    on_list={cb.learn_list.clone()} />
            }
        } else {
            html! {}
        }
    }

    /// The controls: the configuration and the texts of its two typed
    /// fields, which are the user's as typed until committed.
    fn controls(&self, plan: &Option<Rc<Plan>>) -> Html {
        let cb = &self.cb;
        html! {
            <Controls config={self.config.clone()} plan={plan.clone()}
                ranked_auto={self.ranked.as_ref().filter(|_| !self.plan_partial).and_then(|r| r.decision.auto_would())}
                bytes_text={AttrValue::from(self.bytes_text.clone())}
                bytes_error={self.bytes_error.clone().map(AttrValue::from)}
                seed_error={self.seed_error.clone().map(AttrValue::from)}
                on_change={cb.set_config.clone()}
                on_bytes_text={cb.bytes_text.clone()}
                on_bytes_commit={cb.bytes_commit.clone()}
                on_seed={cb.seed.clone()} />
        }
    }

    /// The main layout: the stage (the drawing or why there is none) in
    /// the wide column, the run's result and the estimate beside it, so
    /// the figures stay in view while the drawing plays.
    fn main_layout(&self, plan: &Option<Rc<Plan>>) -> Html {
        let cb = &self.cb;
        let look_row = match self.look() {
            Some(Look::Ranking(a)) => Some(AttrValue::from(a.clone())),
            _ => None,
        };
        html! {
            <main class="layout">
                <div class="col col-main">{self.stage(plan)}</div>
                <div class="col col-side">
                    <ResultPanel config={self.config.clone()} plan={plan.clone()} run={self.run.clone()}
                        waiting={self.drawn_in_worker}
                        on_rerun={cb.rerun.clone()} />
                    if let Some(p) = &plan {
                        <EstimatePanel plan={p.clone()} ranked={self.ranked.clone()} ranking_error={self.ranking_error.clone()} look_row={look_row.clone()} look_panel={self.look_panel("estimate")} pending={self.plan_partial} stale={self.planning} />
                    }
                </div>
            </main>
        }
    }

    /// Whether the current lesson stop highlights the panel `id`.
    fn look_panel(&self, id: &str) -> bool {
        matches!(self.look(), Some(Look::Panel(p)) if p == id)
    }

    /// The stage for whatever plan there is: drawn, model-only (too many
    /// ranks to draw), still being planned, or the reason there is none.
    fn stage(&self, plan: &Option<Rc<Plan>>) -> Html {
        match plan {
            Some(p) if !p.drawn() => model_only_stage(p),
            Some(p) => self.drawn_stage(p),
            None if self.planning => html! {
                <section class="card stage model-only" id="stage" aria-busy="true">
                    <div class="card-head"><h2>{t!("topology")}</h2></div>
                    <p class="hint" id="planning" role="status">{t!("planning", ranks = self.config.ranks)}</p>
                </section>
            },
            None => html! {
                <section class="card stage">
                    <h2>{t!("topology")}</h2>
                    <p class="result-error" lang="en">{self.plan.as_ref().err().cloned().unwrap_or_default()}</p>
                </section>
            },
        }
    }

    /// A drawn plan's stage: the topology drawing, the buffer grid and
    /// playback, then the timeline and the step log that follow the
    /// same step.
    fn drawn_stage(&self, p: &Rc<Plan>) -> Html {
        let cb = &self.cb;
        let look = self.look();
        let look_cell = match look {
            Some(Look::Cell { rank, chunk }) => Some((*rank, *chunk)),
            _ => None,
        };
        let look_link = match look {
            Some(Look::Link(a, b)) => Some((*a, *b)),
            _ => None,
        };
        let shown = if self.frac >= 1.0 {
            self.step
        } else {
            self.step.saturating_sub(1)
        };
        html! {
            <>
                <section class={classes!("card", "stage", self.planning.then_some("stale"))} id="stage" tabindex="-1" aria-label={t!("stage-label")} aria-busy={self.planning.to_string()}>
                    <div class={classes!("stage-grid", p.topology.devices.iter().any(|d| d.server > 0).then_some("stacked"), (p.config.ranks > 16).then_some("many"))}>
                        <div class="stage-topo" id="stage-topo">
                            <div class="card-head">
                                <h2>{t!("topology")}</h2>
                                {super::format::topology_title(&p.topology)}
                            </div>
                            // Many ranks: the drawing and the buffer grid are tall,
                            // so play / step sit right above the drawing.
                            if p.config.ranks > 16 {
                                {self.playback(p)}
                            }
                            // Above 16 ranks the drawing (1 500 elements at 64)
                            // comes a task after the estimate, the buffer grid
                            // a task after it (FIRST_DRAWN; once drawn, each stays).
                            <Deferred tasks={first_drawn(0, p.config.ranks)}>
                                <TopologyView plan={p.clone()} step={self.step} look_link={look_link} />
                            </Deferred>
                            {drawing_text(p, self.step)}
                        </div>
                        <Deferred tasks={first_drawn(FIRST_DRAWN.buffers, p.config.ranks)} on_drawn={cb.drawn.clone()}>
                            <Buffers plan={p.clone()} run={self.run.clone()} shown={shown} step={self.step}
                                look_cell={look_cell} look_panel={self.look_panel("buffers")} />
                        </Deferred>
                    </div>
                    if p.config.ranks <= 16 {
                        {self.playback(p)}
                    }
                </section>
                <Deferred tasks={first_drawn(FIRST_DRAWN.gantt, p.config.ranks)} on_drawn={cb.drawn.clone()}>
                    if !p.estimate.timeline.steps.is_empty() {
                        <Gantt plan={p.clone()} step={self.step} on_goto={cb.goto.clone()} />
                    }
                </Deferred>
                <Deferred tasks={first_drawn(FIRST_DRAWN.step_log, p.config.ranks)}>
                    <StepLog plan={p.clone()} step={self.step} on_goto={cb.goto.clone()} />
                </Deferred>
            </>
        }
    }

    /// Play, pause, step and speed; where it sits depends on the rank
    /// count ([`App::drawn_stage`]).
    fn playback(&self, p: &Rc<Plan>) -> Html {
        let cb = &self.cb;
        html! {
            <Playback plan={p.clone()} step={self.step} playing={self.playing} speed={self.speed}
                on_goto={cb.goto.clone()} on_play={cb.play.clone()}
                on_pause={cb.pause.clone()} on_forward={cb.forward.clone()}
                on_back={cb.back.clone()} on_speed={cb.speed.clone()} />
        }
    }

    /// The what-if cards (compression, fusion, faults) and the training
    /// step card: each changes the configuration, so they come right
    /// after the figures they change.
    fn what_ifs(&self, plan: &Option<Rc<Plan>>) -> Html {
        let cb = &self.cb;
        html! {
            <Deferred tasks={first_drawn(FIRST_DRAWN.what_ifs, self.config.ranks)} on_drawn={cb.drawn.clone()}>
                <div class="what-ifs">
                    <CompressionCard config={self.config.clone()} plan={plan.clone()} run={self.run.clone()}
                        on_change={cb.set_config.clone()} />
                    <FusionCard config={self.config.clone()} plan={plan.clone()} run={self.run.clone()}
                        on_change={cb.set_config.clone()} />
                    <FaultsCard config={self.config.clone()} plan={plan.clone()} run={self.run.clone()}
                        on_change={cb.set_config.clone()} />
                </div>
                <StepCard config={self.config.clone()} step={self.training_step.clone()}
                    on_change={cb.set_step.clone()} vs={self.step_vs.clone()} on_pin={cb.pin_step.clone()} />
            </Deferred>
        }
    }

    /// The measuring layout: the size sweep chart (with an imported log
    /// over it) and, beside it, the cards that bring a topology or a
    /// measured profile in or read the plan another way.
    fn measure_layout(&self, plan: &Option<Rc<Plan>>) -> Html {
        let cb = &self.cb;
        let look_chart = match self.look() {
            Some(Look::Chart { algorithm, bytes }) => {
                Algorithm::from_name(algorithm).map(|a| (a, *bytes))
            }
            _ => None,
        };
        html! {
            <div class="layout measure">
                <div class="col col-main">
                    <Deferred tasks={first_drawn(FIRST_DRAWN.chart, self.config.ranks)} on_drawn={cb.drawn.clone()}>
                        if let Some(p) = &plan {
                            <Chart plan={p.clone()} overlay={log_import::overlay(&self.import).map(Rc::new)} look={look_chart} />
                        }
                    </Deferred>
                </div>
                <div class="col col-side">
                    <Deferred tasks={first_drawn(FIRST_DRAWN.side_cards, self.config.ranks)}>
                        <CustomTopologyPanel text={AttrValue::from(self.topo_text.clone())} error={self.topo_error.clone()}
                            in_use={self.config.custom.clone()}
                            on_text={cb.topo_text.clone()} on_file={cb.topo_file.clone()}
                            on_use={cb.use_topo.clone()} />
                        <MscclCard plan={plan.clone()} />
                        <TuneCard plan={plan.clone()} />
                        <TunerCard plan={plan.clone()} />
                        <DeterminismCard plan={plan.clone()} />
                        <LogImport text={AttrValue::from(self.log_text.clone())} import={self.import.clone()} reading={self.import_reading} kept={self.log_kept}
                            in_use={self.config.profile.as_ref().map(|p| AttrValue::from(p.describe()))}
                            on_text={cb.log_text.clone()} on_table={cb.log_table.clone()}
                            on_use={cb.use_profile.clone()} />
                    </Deferred>
                </div>
            </div>
        }
    }
}

/// What the page used in place of the link's bad value `e`, from the
/// `effective` configuration's query, so the user sees what the page
/// shows instead of guessing; nothing for the page's own keys.
fn used_instead(e: &ConfigError, effective: &[(String, String)]) -> String {
    if url::is_ui_key(&e.key) {
        return String::new();
    }
    match effective.iter().find(|(k, _)| *k == e.key) {
        Some((k, v)) => format!(" — {}", t!("banner-used", used = format!("{k}={v}"))),
        None => format!(" — {}", t!("banner-used-default")),
    }
}

/// The banner's line counting the entries of `list` past the first
/// [`BANNER_SHOWN`], naming some of their keys (cut short), so a link
/// with thousands of unknown keys makes one line, not a page.
fn banner_more(list: &[&ConfigError], id: &'static str) -> Html {
    let rest = &list[list.len().min(BANNER_SHOWN)..];
    if rest.is_empty() {
        return html! {};
    }
    let mut keys: Vec<&str> = rest
        .iter()
        .map(|e| e.key.as_str())
        .take(BANNER_MORE_KEYS)
        .collect();
    keys.dedup();
    let keys = keys
        .iter()
        .map(|k| k.chars().take(40).collect::<String>())
        .collect::<Vec<_>>()
        .join(", ");
    let keys = if rest.len() > BANNER_MORE_KEYS {
        format!("{keys}, …")
    } else {
        keys
    };
    html! { <li class="config-more" id={id}>{t!("banner-more", n = rest.len(), keys = keys)}</li> }
}

/// A model-only plan's stage (too many ranks to draw the transfers): the
/// topology alone and a note saying why, so the page still shows the
/// machine the estimate is for.
fn model_only_stage(p: &Rc<Plan>) -> Html {
    html! {
        <section class="card stage model-only" id="stage" aria-label={t!("topology-model-only")}>
            <div class="card-head">
                <h2>{t!("topology")}</h2>
                {super::format::topology_title(&p.topology)}
            </div>
            <p class="model-only-note" id="model-only-note" role="note">
                <strong>{t!("model-only")}{" "}</strong>
                {t!(
                    "model-only-text",
                    ranks = p.config.ranks, drawn = crate::engine::plan::MAX_DRAWN_RANKS, steps = p.schedule_steps, chunks = p.schedule_chunks,
                    executed = crate::engine::config::MAX_EXECUTED_RANKS
                )}{" "}
                { if p.method == crate::engine::plan::Method::Bound { t!("model-only-bound") } else { t!("model-only-sim") } }
            </p>
            // As on a drawn page, a task after the estimate above 16
            // ranks: 1 200 elements at 1024 ranks (128 servers) were
            // most of the 114 ms task that read the planner's answer.
            <Deferred tasks={first_drawn(0, p.config.ranks)}>
                <TopologyView plan={p.clone()} step={0} />
            </Deferred>
            <div id="drawing-text" class="sr-only">{t!("transfers-none")}</div>
        </section>
    }
}

/// The page's footer: what of the page is real and what is a model, so
/// a reader weighs the figures above it rightly.
fn footer() -> Html {
    html! {
        <footer class="foot">
            <p>{t!("footer")}</p>
        </footer>
    }
}

/// The drawing's text alternative: the current step's transfers as a list
/// (`#drawing-text`, the topology SVG's `aria-describedby`).
fn drawing_text(plan: &Plan, step: usize) -> Html {
    let transfers = plan
        .drawn_schedule()
        .steps
        .get(step.wrapping_sub(1))
        .map(|s| s.transfers.as_slice())
        .unwrap_or(&[]);
    html! {
        <div id="drawing-text" class="sr-only">
            if !plan.config.faults.is_none() {
                <p>{t!("drawing-faults", faults = plan.config.faults.describe())}</p>
            }
            <p>{t!("transfers-now")}</p>
            if transfers.is_empty() {
                <p>{t!("transfers-none")}</p>
            } else {
                <ul>
                    { for transfers.iter().take(64).map(|x| html! {
                        <li>{t!(
                            "transfer-item",
                            src = super::describe::label(plan, x.src),
                            dst = super::describe::label(plan, x.dst),
                            chunks = format::chunks(x.first, x.count),
                            kind = match x.kind {
                                crate::engine::schedule::TransferKind::Copy => t!("kind-copy"),
                                crate::engine::schedule::TransferKind::Reduce => t!("kind-reduce"),
                            }
                        )}</li>
                    }) }
                </ul>
            }
        </div>
    }
}
