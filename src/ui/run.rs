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
use crate::engine::plan::Plan;
use crate::runtime::browser::codec::DoneBytes;
use crate::runtime::{self, RankOutput, RunError, RunRequest, RunSummary};
use futures::future::{select, Either};
use futures::StreamExt;
use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

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
        let req = RunRequest {
            schedule: plan.drawn_schedule().clone(),
            dtype: c.dtype,
            op: c.redop,
            seed: c.seed,
            elems: c.elems(),
            timeout_ms: timeout_ms(c.buffer_bytes().saturating_mul(c.ranks as u64)),
            compressed: plan.compressed.as_ref().map(|x| x.setup),
        };
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
        let mut checker = Checker::new(
            plan.drawn_schedule(),
            verified,
            c.dtype,
            c.redop,
            c.seed,
            c.elems(),
        );
        let (tx, mut rx) = futures::channel::mpsc::unbounded::<Event>();
        // A compressed run is checked against the compressed reference,
        // built beside the run a slice of small units at a time (yielding
        // to the event loop in between, so the page stays responsive); outputs
        // that arrive before it is ready wait for it.
        if let Some(cp) = plan.compressed.clone() {
            let (tx, current, plan) = (tx.clone(), current.clone(), plan.clone());
            yew::platform::spawn_local(async move {
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
                            return;
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
                let _ = tx.unbounded_send(Event::Reference(built));
            });
        }
        // The run in a task of its own, which drops a superseded run (that
        // terminates its workers: `runtime::run` cleans up when its future
        // is dropped).
        {
            let (tx, watch) = (tx.clone(), current.clone());
            let on_output = tx.clone();
            yew::platform::spawn_local(async move {
                let run = Box::pin(runtime::run(req, move |out, bytes| {
                    let _ = on_output.unbounded_send(Event::Output(out, bytes));
                }));
                let stale = Box::pin(async move {
                    while watch.get() == id {
                        yew::platform::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                });
                if let Either::Left((result, _)) = select(run, stale).await {
                    let _ = tx.unbounded_send(Event::Done(result));
                }
            });
        }
        drop(tx);
        // Checking: outputs wait in arrival order and are checked a piece
        // at a time, at most CHECK_SLICE_MS per slice, yielding between
        // slices, so a large output never blocks the page. The checker
        // keeps one output's worth of expected pieces; the queue holds the
        // outputs not checked yet, as the workers transferred them (outside
        // wasm memory: a piece is copied in when it is checked).
        let compressed = plan.compressed.is_some();
        let mut queue: VecDeque<(RankOutput, DoneBytes)> = VecDeque::new();
        // The output being checked, and how far.
        let mut checking: Option<(RankOutput, DoneBytes, Comparison)> = None;
        let mut compressed_check: Option<Result<CompressedCheck, String>> = None;
        let mut result: Option<Result<RunSummary, RunError>> = None;
        let absorb = |event: Event,
                      queue: &mut VecDeque<(RankOutput, DoneBytes)>,
                      compressed_check: &mut Option<Result<CompressedCheck, String>>,
                      result: &mut Option<Result<RunSummary, RunError>>| {
            match event {
                Event::Output(out, bytes) => queue.push_back((out, bytes)),
                Event::Reference(r) => {
                    on_compressed(
                        id,
                        r.as_ref().map(|k| k.report.clone()).map_err(Clone::clone),
                    );
                    *compressed_check = Some(r);
                }
                Event::Done(r) => *result = Some(r),
            }
        };
        loop {
            if current.get() != id {
                return;
            }
            while let Ok(event) = rx.try_recv() {
                absorb(event, &mut queue, &mut compressed_check, &mut result);
            }
            if matches!(result, Some(Err(_))) {
                break;
            }
            let ready = !compressed || compressed_check.is_some();
            if ready && (checking.is_some() || !queue.is_empty()) {
                let t0 = js_sys::Date::now();
                let mut checked: Vec<Checked> = Vec::new();
                while js_sys::Date::now() - t0 < CHECK_SLICE_MS {
                    if checking.is_none() {
                        let Some((out, bytes)) = queue.pop_front() else {
                            break;
                        };
                        // A compressed run is compared with its reference
                        // a piece at a time where the worker transferred
                        // it, like the plain check.
                        let c = match &compressed_check {
                            None => Comparison::Plain(checker.begin(out.rank, &bytes)),
                            Some(Ok(k)) => Comparison::Compressed(k.begin(out.rank)),
                            Some(Err(_)) => {
                                checked.push((compressed_report(None, out.rank), out.samples));
                                continue;
                            }
                        };
                        checking = Some((out, bytes, c));
                    }
                    let reference = compressed_check.as_ref().and_then(|r| r.as_ref().ok());
                    let Some((_, bytes, c)) = checking.as_mut() else {
                        break;
                    };
                    if c.advance(&mut checker, reference, bytes) {
                        if let Some((out, _, c)) = checking.take() {
                            checked.push((c.report(reference, out.rank), out.samples));
                        }
                    }
                }
                if !checked.is_empty() {
                    on_report(id, checked);
                }
                yield_to_browser().await;
                continue;
            }
            if result.is_some() && ready {
                break;
            }
            match rx.next().await {
                Some(event) => absorb(event, &mut queue, &mut compressed_check, &mut result),
                // Every sender is gone before the end: the run went stale.
                None if result.is_none() => return,
                None => break,
            }
        }
        if let (Some(result), true) = (result, current.get() == id) {
            on_done(id, result);
        }
    });
}
