//! One run of the plan on the rank workers: starting it, checking each rank's
//! output as it arrives, and the state the page shows.
//!
//! A newer run supersedes an older one: every run has an id, results carry
//! it, and the app ignores ids that are not the current one. The checking
//! task also stops checking once its run is stale.

use crate::engine::check::{Checker, Mismatch, RankCheck, RankReport};
use crate::engine::compressed::{
    CompressedCheck, CompressedCheckBuilder, CompressedCompare, CompressedReport,
};
use crate::engine::plan::{CompressedPlan, Plan};
use crate::runtime::browser::codec::DoneBytes;
use crate::runtime::{self, RankOutput, RunError, RunRequest, RunSummary};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender};
use futures::future::{select, Either};
use futures::StreamExt;
use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;

/// What the last run came to (`#run-result[data-state]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Nothing run yet.
    Idle,
    /// Workers are running or outputs are being checked.
    Running,
    /// Every rank's output is bit-exact and within tolerance.
    Verified,
    /// At least one rank's output differs.
    Mismatch,
    /// The run (or the plan) failed.
    Error,
    /// Too large to execute in the browser; only the model ran.
    ModelOnly,
}

impl RunState {
    /// The `data-state` value.
    pub fn name(self) -> &'static str {
        match self {
            RunState::Idle => "idle",
            RunState::Running => "running",
            RunState::Verified => "verified",
            RunState::Mismatch => "mismatch",
            RunState::Error => "error",
            RunState::ModelOnly => "model-only",
        }
    }
}

/// The state of the current run, as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunView {
    /// Run id (increases with every run).
    pub id: u64,
    /// State.
    pub state: RunState,
    /// Ranks in the run.
    pub ranks: usize,
    /// One report per checked rank, in arrival order.
    pub reports: Vec<RankReport>,
    /// `samples[rank]`: that rank's `RankOutput::samples` once it arrived.
    pub samples: Vec<Option<Vec<Vec<Option<f64>>>>>,
    /// Browser wall time of the workers, ms.
    pub wall_ms: Option<f64>,
    /// The collective's own wall time (inputs built to last output), ms.
    pub collective_ms: Option<f64>,
    /// The workers' reduce kernels (`simd128` or `scalar`), once done.
    pub kernels: Option<&'static str>,
    /// What went wrong, in words.
    pub error: Option<String>,
    /// A compressed run's error against the uncompressed exact result and
    /// its wire bytes (known once the compressed reference is computed).
    pub compressed: Option<CompressedReport>,
    /// Why the compressed reference could not be made (every rank then
    /// counts as mismatched).
    pub reference_error: Option<String>,
}

impl RunView {
    /// A fresh view for run `id` of `ranks` ranks.
    pub fn new(id: u64, state: RunState, ranks: usize) -> RunView {
        RunView {
            id,
            state,
            ranks,
            reports: Vec::new(),
            samples: vec![None; ranks],
            wall_ms: None,
            collective_ms: None,
            kernels: None,
            error: None,
            compressed: None,
            reference_error: None,
        }
    }

    /// Max |output − exact| over the checked ranks, if any were checked.
    pub fn max_abs_error(&self) -> Option<f64> {
        self.reports
            .iter()
            .map(|r| r.max_abs_error)
            .reduce(f64::max)
    }

    /// Records one checked rank.
    pub fn add(&mut self, report: RankReport, samples: Vec<Vec<Option<f64>>>) {
        if let Some(slot) = self.samples.get_mut(report.rank) {
            *slot = Some(samples);
        }
        self.reports.push(report);
    }

    /// Settles the state once the workers are done.
    pub fn finish(&mut self, result: Result<RunSummary, RunError>) {
        match result {
            Err(e) => {
                self.state = RunState::Error;
                self.error = Some(e.to_string());
            }
            Ok(summary) => {
                self.wall_ms = Some(summary.wall_ms);
                self.collective_ms = summary.collective_ms;
                self.kernels = Some(summary.kernels);
                let bad: Vec<&RankReport> = self.reports.iter().filter(|r| !r.ok()).collect();
                if self.reports.len() < self.ranks {
                    self.state = RunState::Error;
                    let mut got: Vec<usize> = self.reports.iter().map(|r| r.rank).collect();
                    got.sort_unstable();
                    self.error = Some(format!(
                        "the run ended but only {} of {} ranks reported an output (ranks {})",
                        self.reports.len(),
                        self.ranks,
                        super::format::ranks(got)
                    ));
                } else if bad.is_empty() {
                    self.state = RunState::Verified;
                } else {
                    self.state = RunState::Mismatch;
                    let lines: Vec<String> = match &self.reference_error {
                        Some(why) => vec![format!(
                            "The compressed reference could not be made: {why}."
                        )],
                        None => bad.iter().map(|r| describe_mismatch(r)).collect(),
                    };
                    self.error = Some(lines.join(" "));
                }
            }
        }
    }
}

/// One rank's failed check in words.
pub fn describe_mismatch(r: &RankReport) -> String {
    let mut s = format!("Rank {}: ", r.rank);
    if r.mismatched_elements > 0 {
        s.push_str(&format!(
            "{} of {} output elements differ from the reference executor's bits",
            r.mismatched_elements, r.checked_elements
        ));
        if let Some(m) = &r.first_mismatch {
            s.push_str(&format!(
                " (first at element {}: got {}, expected {})",
                m.element, m.got, m.want
            ));
        }
    }
    if r.beyond_tolerance > 0 {
        if r.mismatched_elements > 0 {
            s.push_str("; ");
        }
        s.push_str(&format!(
            "{} elements are further from the exact result than the dtype's tolerance",
            r.beyond_tolerance
        ));
    }
    s.push('.');
    s
}

/// What the checking task hears: a rank's output, the compressed reference
/// being ready, the end of the run.
enum Event {
    /// A done rank and its buffer where the worker transferred it.
    Output(RankOutput, DoneBytes),
    Reference(Result<CompressedCheck, String>),
    Done(Result<RunSummary, RunError>),
}

/// Most main-thread time one slice of checking takes before it yields to
/// the event loop, ms (one piece,
/// [`crate::engine::check::piece_elems`] elements, may overrun it).
const CHECK_SLICE_MS: f64 = 20.0;

/// Lets the browser run what is queued (input, a frame, messages from the
/// workers), then resumes: the check's yield between two slices. A
/// `MessageChannel` message is queued at once; `setTimeout(0)` is clamped
/// to at least 4 ms once timers nest more than five deep (WHATWG HTML,
/// the timer initialisation steps), and the check's chain of slices
/// nests: ~4 ms idle after every 20 ms slice, about a sixth of the
/// 8 × 64 MiB page's check in a trace. Falls back to that timeout where a
/// channel cannot be made.
async fn yield_to_browser() {
    let channel = web_sys::MessageChannel::new().ok();
    if let Some(ch) = channel {
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            ch.port1().set_onmessage(Some(&resolve));
        });
        if ch
            .port2()
            .post_message(&wasm_bindgen::JsValue::NULL)
            .is_ok()
        {
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
            ch.port1().set_onmessage(None);
            ch.port1().close();
            return;
        }
    }
    yew::platform::time::sleep(std::time::Duration::ZERO).await;
}

/// How far one rank's output is checked: against the exact reference
/// ([`Checker`]) or, in a compressed run, against the compressed
/// reference ([`CompressedCheck`]).
enum Comparison {
    Plain(RankCheck),
    Compressed(CompressedCompare),
}

impl Comparison {
    /// Checks the next piece of `output` against the exact reference
    /// (`checker`) or the compressed one (`reference`); `true` once the
    /// whole output is checked.
    fn advance(
        &mut self,
        checker: &mut Checker,
        reference: Option<&CompressedCheck>,
        output: &DoneBytes,
    ) -> bool {
        match (self, reference) {
            (Comparison::Plain(c), _) => checker.advance(c, output),
            (Comparison::Compressed(c), Some(k)) => k.advance(c, output),
            // Begun only with a reference: nothing to compare against.
            (Comparison::Compressed(_), None) => true,
        }
    }

    /// Rank `rank`'s report once [`Comparison::advance`] is done.
    fn report(self, reference: Option<&CompressedCheck>, rank: usize) -> RankReport {
        match self {
            Comparison::Plain(c) => c.report,
            Comparison::Compressed(c) => compressed_report(reference.map(|k| (k, &c)), rank),
        }
    }
}

/// One rank's check against the compressed reference (bit for bit on its
/// output elements; `max_abs_error` is the run's error against the
/// uncompressed exact result, which compression makes large by design, so
/// no tolerance applies), from a finished comparison; `None` (the
/// reference could not be made): nothing verifies.
fn compressed_report(
    chk: Option<(&CompressedCheck, &CompressedCompare)>,
    rank: usize,
) -> RankReport {
    match chk {
        Some((k, c)) => RankReport {
            rank,
            mismatched_elements: c.mismatched,
            first_mismatch: c
                .first
                .map(|(element, got, want)| Mismatch { element, got, want }),
            max_abs_error: k.report.stats.max_abs_error,
            beyond_tolerance: 0,
            checked_elements: c.checked,
        },
        None => RankReport {
            rank,
            mismatched_elements: 1,
            first_mismatch: None,
            max_abs_error: f64::NAN,
            beyond_tolerance: 0,
            checked_elements: 1,
        },
    }
}

/// Time the run may take before the runtime gives up, ms: 20 s plus 1 ms
/// per 10 kB of `bytes`, all ranks' buffers together (up to 64 ranks share
/// a few workers, so the work grows with the total, not the message; 1 GiB
/// gives 127 s. A hung run ends sooner through the stall watchdog).
pub fn timeout_ms(bytes: u64) -> u32 {
    (20_000 + bytes / 10_000).min(u32::MAX as u64) as u32
}

/// One checked rank: its report and its `RankOutput::samples`.
pub type Checked = (RankReport, Vec<Vec<Option<f64>>>);

/// Starts run `id` of `plan` on the workers. `on_report` gets the ranks
/// checked in one slice of checking (with their samples), once per slice:
/// the page re-renders once for all of them, not once per rank (at 64
/// ranks, most ranks finish checking in the same slice: after the first,
/// their expected values are cached). `on_done` gets the run's end. Both
/// are only called while `current.get() == id`.
///
/// The task starts the compressed reference's build and the run, each in
/// a task of its own, then checks the outputs as they come
/// ([`check_outputs`]).
pub fn start(
    id: u64,
    plan: Rc<Plan>,
    current: Rc<Cell<u64>>,
    on_report: impl Fn(u64, Vec<Checked>) + 'static,
    on_compressed: impl Fn(u64, Result<CompressedReport, String>) + 'static,
    on_done: impl FnOnce(u64, Result<RunSummary, RunError>) + 'static,
) {
    yew::platform::spawn_local(async move {
        let c = &plan.config;
        let req = run_request(&plan);
        // One checker for the whole run: it caches the expected chunks, so
        // ranks holding the same value (every rank after an AllReduce) cost
        // one evaluation. It borrows the plan, which this task owns.
        let Some(verified) = plan.verified.as_ref() else {
            on_done(
                id,
                Err(RunError::Spawn(
                    "this plan is model-only (no symbolic trace to check against)".into(),
                )),
            );
            return;
        };
        let checker = Checker::new(
            plan.drawn_schedule(),
            verified,
            c.dtype,
            c.redop,
            c.seed,
            c.elems(),
        );
        let (tx, mut rx) = futures::channel::mpsc::unbounded::<Event>();
        if let Some(cp) = plan.compressed.clone() {
            spawn_reference(id, cp, plan.clone(), current.clone(), tx.clone());
        }
        spawn_run(id, req, current.clone(), tx.clone());
        drop(tx);
        let state = CheckState::new(checker, plan.compressed.is_some());
        let result = check_outputs(id, state, &mut rx, &current, &on_report, &on_compressed).await;
        if let (Some(result), true) = (result, current.get() == id) {
            on_done(id, result);
        }
    });
}

/// What the workers are asked to run: the drawn schedule on the plan's
/// buffers, with a timeout that grows with all ranks' bytes together
/// ([`timeout_ms`]).
fn run_request(plan: &Plan) -> RunRequest {
    let c = &plan.config;
    RunRequest {
        schedule: plan.drawn_schedule().clone(),
        dtype: c.dtype,
        op: c.redop,
        seed: c.seed,
        elems: c.elems(),
        timeout_ms: timeout_ms(c.buffer_bytes().saturating_mul(c.ranks as u64)),
        compressed: plan.compressed.as_ref().map(|x| x.setup),
    }
}

/// A compressed run is checked against the compressed reference, built
/// beside the run in a task of its own ([`build_reference`]); outputs that
/// arrive before it is ready wait for it. A superseded run's reference is
/// dropped unsent.
fn spawn_reference(
    id: u64,
    cp: Arc<CompressedPlan>,
    plan: Rc<Plan>,
    current: Rc<Cell<u64>>,
    tx: UnboundedSender<Event>,
) {
    yew::platform::spawn_local(async move {
        let Some(built) = build_reference(id, &cp, &plan, &current).await else {
            return;
        };
        // The receiver is gone only once the checking task has ended (its
        // run superseded): then no one waits for the reference.
        let _ = tx.unbounded_send(Event::Reference(built));
    });
}

/// Builds the compressed reference a slice of small units at a time,
/// yielding to the event loop in between so the page stays responsive;
/// `None` once run `id` is superseded, as its reference is of no use.
async fn build_reference(
    id: u64,
    cp: &CompressedPlan,
    plan: &Plan,
    current: &Cell<u64>,
) -> Option<Result<CompressedCheck, String>> {
    let c = &plan.config;
    let built = match CompressedCheckBuilder::new(
        &cp.collective,
        plan.drawn_schedule(),
        &cp.setup,
        c.dtype,
        c.redop,
        c.seed,
        c.elems(),
    ) {
        Err(e) => Err(e.to_string()),
        // Units of one piece each, as many as fit in
        // CHECK_SLICE_MS, then a yield.
        Ok(mut b) => 'slices: loop {
            if current.get() != id {
                return None;
            }
            let t0 = js_sys::Date::now();
            while js_sys::Date::now() - t0 < CHECK_SLICE_MS {
                match b.advance() {
                    Err(e) => break 'slices Err(e.to_string()),
                    Ok(true) => break 'slices Ok(b.finish()),
                    Ok(false) => {}
                }
            }
            yield_to_browser().await
        },
    };
    Some(built)
}

/// The run in a task of its own, which drops a superseded run (that
/// terminates its workers: `runtime::run` cleans up when its future is
/// dropped). Each output and the run's end go to the checking task.
fn spawn_run(id: u64, req: RunRequest, watch: Rc<Cell<u64>>, tx: UnboundedSender<Event>) {
    let on_output = tx.clone();
    yew::platform::spawn_local(async move {
        let run = Box::pin(runtime::run(req, move |out, bytes| {
            // The receiver is gone only once the checking task has ended
            // (the run superseded): the output has no one to check it.
            let _ = on_output.unbounded_send(Event::Output(out, bytes));
        }));
        let stale = Box::pin(async move {
            while watch.get() == id {
                yew::platform::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        });
        if let Either::Left((result, _)) = select(run, stale).await {
            // As above: no receiver, no one waiting for the end.
            let _ = tx.unbounded_send(Event::Done(result));
        }
    });
}

/// The checking task's state. Outputs wait in arrival order and are
/// checked a piece at a time, at most CHECK_SLICE_MS per slice, yielding
/// between slices, so a large output never blocks the page. The checker
/// keeps one output's worth of expected pieces; the queue holds the
/// outputs not checked yet, as the workers transferred them (outside wasm
/// memory: a piece is copied in when it is checked).
struct CheckState<'a> {
    checker: Checker<'a>,
    /// The run is compressed: outputs wait for the compressed reference.
    compressed: bool,
    queue: VecDeque<(RankOutput, DoneBytes)>,
    /// The output being checked, and how far.
    checking: Option<(RankOutput, DoneBytes, Comparison)>,
    /// The compressed reference, once built (or why it could not be).
    compressed_check: Option<Result<CompressedCheck, String>>,
    /// The run's end, once heard.
    result: Option<Result<RunSummary, RunError>>,
}

impl<'a> CheckState<'a> {
    /// Nothing heard yet.
    fn new(checker: Checker<'a>, compressed: bool) -> CheckState<'a> {
        CheckState {
            checker,
            compressed,
            queue: VecDeque::new(),
            checking: None,
            compressed_check: None,
            result: None,
        }
    }

    /// Takes in what the checking task heard: an output joins the queue,
    /// the compressed reference is kept (and its report goes to the page
    /// at once), the run's end is kept for when the queue is checked.
    fn absorb(
        &mut self,
        event: Event,
        id: u64,
        on_compressed: &impl Fn(u64, Result<CompressedReport, String>),
    ) {
        match event {
            Event::Output(out, bytes) => self.queue.push_back((out, bytes)),
            Event::Reference(r) => {
                on_compressed(
                    id,
                    r.as_ref().map(|k| k.report.clone()).map_err(Clone::clone),
                );
                self.compressed_check = Some(r);
            }
            Event::Done(r) => self.result = Some(r),
        }
    }

    /// One slice of checking, at most CHECK_SLICE_MS: the output being
    /// checked and then the queued ones, a piece at a time; the ranks
    /// whose check ended in it.
    fn check_slice(&mut self) -> Vec<Checked> {
        let t0 = js_sys::Date::now();
        let mut checked: Vec<Checked> = Vec::new();
        while js_sys::Date::now() - t0 < CHECK_SLICE_MS {
            if self.checking.is_none() {
                let Some((out, bytes)) = self.queue.pop_front() else {
                    break;
                };
                // A compressed run is compared with its reference
                // a piece at a time where the worker transferred
                // it, like the plain check.
                let c = match &self.compressed_check {
                    None => Comparison::Plain(self.checker.begin(out.rank, &bytes)),
                    Some(Ok(k)) => Comparison::Compressed(k.begin(out.rank)),
                    Some(Err(_)) => {
                        checked.push((compressed_report(None, out.rank), out.samples));
                        continue;
                    }
                };
                self.checking = Some((out, bytes, c));
            }
            let reference = self.compressed_check.as_ref().and_then(|r| r.as_ref().ok());
            let Some((_, bytes, c)) = self.checking.as_mut() else {
                break;
            };
            if c.advance(&mut self.checker, reference, bytes) {
                if let Some((out, _, c)) = self.checking.take() {
                    checked.push((c.report(reference, out.rank), out.samples));
                }
            }
        }
        checked
    }
}

/// Checks run `id`'s outputs as they arrive ([`CheckState`]), a slice at a
/// time with a yield to the browser between slices, until the run has
/// ended and every output is checked, or a failed run's end is heard. The
/// run's end, or `None` once the run is superseded (nothing is then said
/// of it).
async fn check_outputs(
    id: u64,
    mut state: CheckState<'_>,
    rx: &mut UnboundedReceiver<Event>,
    current: &Cell<u64>,
    on_report: &impl Fn(u64, Vec<Checked>),
    on_compressed: &impl Fn(u64, Result<CompressedReport, String>),
) -> Option<Result<RunSummary, RunError>> {
    loop {
        if current.get() != id {
            return None;
        }
        while let Ok(event) = rx.try_recv() {
            state.absorb(event, id, on_compressed);
        }
        if matches!(state.result, Some(Err(_))) {
            break;
        }
        let ready = !state.compressed || state.compressed_check.is_some();
        if ready && (state.checking.is_some() || !state.queue.is_empty()) {
            let checked = state.check_slice();
            if !checked.is_empty() {
                on_report(id, checked);
            }
            yield_to_browser().await;
            continue;
        }
        if state.result.is_some() && ready {
            break;
        }
        match rx.next().await {
            Some(event) => state.absorb(event, id, on_compressed),
            // Every sender is gone before the end: the run went stale.
            None if state.result.is_none() => return None,
            None => break,
        }
    }
    state.result
}
