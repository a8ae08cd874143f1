//! The worker pool: starts a few web workers, each hosting a contiguous
//! block of ranks ([`crate::runtime::placement`]), wires every communicating worker
//! pair with one `MessageChannel`, collects each rank's result, enforces the
//! timeout and the stall watchdog.
//!
//! The page never touches the data in flight: each worker builds its ranks'
//! inputs; chunks between ranks on one worker are handed over in the
//! worker's memory, and between workers they travel on `MessagePort`s as
//! transferred `ArrayBuffer`s. The page only sends each worker its init
//! message (the [`RunRequest`], the rank table and its ports) and receives
//! each rank's final buffer.

use super::codec::{decode_to_page, encode_to_worker, epoch_ms, DoneBytes, PageEvent};
use crate::runtime::fault::Fault;
use crate::runtime::placement::{self, WorkerLayout};
use crate::runtime::protocol::{RankOutput, RunError, RunRequest, RunSummary, ToWorker};
use gloo_timers::callback::{Interval, Timeout};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    Blob, BlobPropertyBag, ErrorEvent, Event, MessageChannel, MessageEvent, MessagePort, Url,
    Worker,
};

/// URL of the rank worker's wasm-bindgen JS, relative to the page. trunk
/// (`data-type="worker"`) emits `worker.js` (the `no-modules` bindings, which
/// do not start themselves) and `worker_bg.wasm` next to `index.html`.
pub const WORKER_JS: &str = "./worker.js";

/// URL of the rank worker's wasm, relative to the page.
pub const WORKER_WASM: &str = "./worker_bg.wasm";
/// The SIMD rank worker's script (trunk's output for the `worker_simd`
/// binary: the SIMD128 reduce kernels), started instead of
/// [`WORKER_JS`] where [`simd_supported`].
pub const WORKER_SIMD_JS: &str = "./worker_simd.js";
/// The SIMD rank worker's wasm.
pub const WORKER_SIMD_WASM: &str = "./worker_simd_bg.wasm";

/// The smallest module with a SIMD128 instruction (`i32.const 0;
/// i8x16.splat; i8x16.popcnt` returning a `v128`): the probe of the
/// wasm-feature-detect library (GoogleChromeLabs/wasm-feature-detect,
/// `src/detectors/simd`).
const SIMD_PROBE: [u8; 31] = [
    0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253,
    15, 253, 98, 11,
];

/// Whether this browser's WebAssembly engine accepts SIMD128 (Chrome 91+,
/// Firefox 89+, Safari 16.4+): `WebAssembly.validate` of [`SIMD_PROBE`].
pub fn simd_supported() -> bool {
    let probe = js_sys::Uint8Array::from(&SIMD_PROBE[..]);
    js_sys::WebAssembly::validate(&probe.into()).unwrap_or(false)
}

/// How often the stall watchdog looks, ms.
const WATCHDOG_TICK_MS: u32 = 200;

/// A run is stalled when every unfinished rank is blocked on a receive and
/// no worker has said anything for this long, ms, plus 1 ms per 200 kB of
/// the rank buffers one worker hosts (a healthy worker that just got a
/// message may be reducing it for each of its ranks).
pub const STALL_MS: u32 = 1000;

/// The stall watchdog pings the workers this long before its verdict, ms;
/// a worker that has not answered by then is reported lost
/// ([`RunError::WorkerLost`]).
pub const PING_LEAD_MS: u32 = 2 * WATCHDOG_TICK_MS;

/// At least this long between the ping and the verdict, ms (when the page
/// was too busy to ping on time).
const PING_GRACE_MS: u32 = 150;

thread_local! {
    /// The test-only fault armed for the next run ([`arm_fault`]).
    static ARMED: Cell<Option<Fault>> = const { Cell::new(None) };
}

/// Arms `fault` for the next run only (testing the failure paths end to
/// end; the page does this only for the test-only URL key `fault`). The
/// next [`run`] / [`run_with_script`] takes it and sends it to its workers.
pub fn arm_fault(fault: Fault) {
    ARMED.with(|a| a.set(Some(fault)));
}

/// The stall threshold for a run whose workers each hold at most `bytes`
/// bytes of rank buffers, ms.
pub fn stall_ms(bytes: u64) -> u32 {
    STALL_MS.saturating_add((bytes / 200_000).min(60_000) as u32)
}

/// How many workers [`run`] starts for `ranks` ranks on this browser:
/// [`placement::worker_count`] with `navigator.hardwareConcurrency`.
pub fn workers_for(ranks: usize) -> usize {
    let cores = web_sys::window()
        .map(|w| w.navigator().hardware_concurrency())
        .filter(|c| c.is_finite() && *c >= 1.0)
        .map(|c| c as usize);
    placement::worker_count(ranks, cores)
}

/// Runs `req` on [`workers_for`]`(ranks)` web workers, each hosting a
/// contiguous block of ranks ([`WorkerLayout::new`]).
///
/// Each worker runs a tiny bootstrap script (a same-origin `blob:` URL) that
/// loads [`WORKER_JS`] and instantiates [`WORKER_WASM`], whose `main` calls
/// [`super::worker::start`]. So this works whether or not trunk's
/// `data-loader-shim` is used.
///
/// `on_output` is called once per rank, as soon as that rank's final buffer
/// arrives (in completion order, not rank order), so the caller can check it
/// right away: the [`RankOutput`] (its `buffer` empty) and the buffer as the
/// worker transferred it, outside wasm memory ([`DoneBytes`]: checked a
/// piece at a time). Resolves to [`RunSummary`] once every rank is done; `wall_ms`
/// is the time from spawning the workers to the moment the last rank posted
/// its output (each worker stamps `performance.timeOrigin + now()`), so time
/// the page spends in `on_output` (checking) does not count; `collective_ms`
/// is from the last worker's "inputs built" stamp to the same end. If the stamps
/// are missing or inconsistent, it falls back to the page's
/// `performance.now()` at the arrival of the last output.
///
/// Errors:
/// - [`RunError::Spawn`] if a worker or channel cannot be created, the
///   schedule has no ranks or names a rank outside it;
/// - [`RunError::Worker`] if a worker throws (script/wasm load failure, a
///   trap), panics, or reports an error (bad message, schedule mismatch);
///   `rank` is the failing rank when the worker knows it, else the first
///   rank the worker hosts, and the message then names all of them;
/// - [`RunError::Timeout`] if not every rank is done `req.timeout_ms` ms after
///   spawning, with the ranks still missing;
/// - [`RunError::WorkerLost`] if no worker said anything for [`stall_ms`] ms
///   (computing workers post heartbeats) and a worker with unfinished ranks
///   did not answer a [`ToWorker::Ping`] sent [`PING_LEAD_MS`] before the
///   verdict: it was terminated or died silently, and all its ranks with it;
/// - [`RunError::Stalled`] if instead every worker answered and every
///   unfinished rank reported that it waits for a message (a lost or late
///   message), naming who waits for whom.
///
/// Time the page itself was busy (a late watchdog tick) does not count
/// towards [`stall_ms`].
///
/// In every outcome, and also if the returned future is dropped early, all
/// workers are terminated and every handler is released, so the next call
/// starts clean.
pub async fn run(
    req: RunRequest,
    on_output: impl FnMut(RankOutput, DoneBytes) + 'static,
) -> Result<RunSummary, RunError> {
    let simd = simd_supported();
    let boot = if simd {
        Bootstrap::new(WORKER_SIMD_JS, WORKER_SIMD_WASM)?
    } else {
        Bootstrap::new(WORKER_JS, WORKER_WASM)?
    };
    let mut summary = run_with_script(&boot.url, req, on_output).await?;
    summary.kernels = if simd { "simd128" } else { "scalar" };
    Ok(summary)
}

/// [`run`] with each worker started from `script_url`, which must be a
/// complete classic worker script: it sets up the rank worker (as trunk's
/// `worker_loader.js` shim does) or speaks the protocol itself (tests).
///
/// Errors: as [`run`].
pub async fn run_with_script(
    script_url: &str,
    req: RunRequest,
    on_output: impl FnMut(RankOutput, DoneBytes) + 'static,
) -> Result<RunSummary, RunError> {
    let workers = workers_for(req.schedule.ranks);
    run_on_workers(script_url, req, workers, on_output).await
}

/// [`run_with_script`] on exactly `workers` workers (`1..=ranks`; tests use
/// it to put many ranks on few workers).
///
/// Errors: as [`run`]; [`RunError::Spawn`] if `workers` is not in
/// `1..=ranks`.
pub async fn run_on_workers(
    script_url: &str,
    req: RunRequest,
    workers: usize,
    mut on_output: impl FnMut(RankOutput, DoneBytes) + 'static,
) -> Result<RunSummary, RunError> {
    let mut run = Run::start(script_url, req, workers)?;
    loop {
        let incoming = run.inbox.next().await;
        match incoming {
            Incoming::Tick => run.tick()?,
            Incoming::Message(w, data) => {
                if let Some(summary) = run.message(w, &data, &mut on_output)? {
                    return Ok(summary);
                }
            }
            Incoming::Error(w, message) => return Err(run.worker_error(w, message)),
            Incoming::Timeout => return Err(run.timed_out()),
        }
    }
    // `run` drops here on every path: its pool's workers terminated,
    // handlers released.
}

/// One run in progress: its pool and everything the event loop of
/// [`run_on_workers`] reads and updates between two events, kept in one
/// place so each kind of event is handled by its own method.
struct Run {
    req: RunRequest,
    placement: WorkerLayout,
    /// The test-only fault every worker gets with its init.
    fault: Option<Fault>,
    /// Ranks in the run.
    n: usize,
    /// Workers in the run.
    workers: usize,
    /// Dropped before `inbox` (fields drop in declaration order), as the
    /// run's end: its workers terminated, their handlers released.
    pool: Pool,
    inbox: Rc<Inbox>,
    /// The page's clock when the workers were spawned, for the arrival
    /// time the summary falls back to.
    t0: f64,
    /// The same moment on the workers' clock (`timeOrigin + now()`), so
    /// their stamps can be compared with it.
    t0_epoch: Option<f64>,
    /// The latest "finished" stamp of the ranks done so far.
    last_finished: Option<f64>,
    /// The last worker's "inputs built" stamp (`None` once any is missing).
    last_started: Option<Option<f64>>,
    /// The stall threshold of this run ([`stall_for`]), ms.
    stall: u32,
    /// Per rank: `(waits for, step)` from its last report, if it waits.
    waits: Vec<Option<(usize, usize)>>,
    /// When a worker last said something other than a pong.
    last_activity: f64,
    /// When the watchdog last ticked, to notice that the page was busy.
    last_tick: f64,
    /// The stall watchdog's ping: when sent, and who answered since.
    ping_at: Option<f64>,
    pongs: Vec<bool>,
    /// Per rank: whether its output arrived.
    done: Vec<bool>,
    /// Ranks whose output has not arrived.
    remaining: usize,
}

impl Run {
    /// Checks the request, spawns the workers with their handlers, starts
    /// the timeout and the watchdog and makes every channel, in that
    /// order; an error on the way drops what was made so far (the pool
    /// terminates its workers).
    fn start(script_url: &str, req: RunRequest, workers: usize) -> Result<Run, RunError> {
        let n = req.schedule.ranks;
        if n == 0 {
            return Err(RunError::Spawn("the schedule has no ranks".into()));
        }
        let placement =
            WorkerLayout::new(n, workers).map_err(|e| RunError::Spawn(e.to_string()))?;
        let fault = ARMED.with(Cell::take);
        let t0 = now_ms();
        let t0_epoch = epoch_ms();
        let inbox = Rc::new(Inbox::default());
        let mut pool = Pool::default();
        for w in 0..workers {
            pool.spawn(script_url, w, &inbox)?;
        }
        pool.start_clocks(req.timeout_ms, &inbox);
        let stall = stall_for(&req, workers);
        let last_activity = now_ms();
        pool.ports = wire_ports(&req, &placement, workers)?;
        Ok(Run {
            req,
            placement,
            fault,
            n,
            workers,
            pool,
            inbox,
            t0,
            t0_epoch,
            last_finished: None,
            last_started: None,
            stall,
            waits: vec![None; n],
            last_activity,
            last_tick: last_activity,
            ping_at: None,
            pongs: vec![false; workers],
            done: vec![false; n],
            remaining: n,
        })
    }

    /// The stall watchdog's tick: pings the busy workers a little before
    /// the verdict, then ends the run if one did not answer or if every
    /// unfinished rank waits for a message; an error ends the run.
    fn tick(&mut self) -> Result<(), RunError> {
        let now = now_ms();
        if now - self.last_tick > 3.0 * WATCHDOG_TICK_MS as f64 {
            // The page was busy (checking outputs): messages may be
            // queued behind this tick; start counting again.
            self.last_activity = now;
        }
        self.last_tick = now;
        // Workers with unfinished ranks. Until each has its init, a
        // silent one may still be loading: only the timeout applies.
        let busy: Vec<usize> = (0..self.workers)
            .filter(|&w| self.placement.ranks_of(w).iter().any(|&r| !self.done[r]))
            .collect();
        if busy.is_empty() || busy.iter().any(|&w| self.pool.ports[w].is_some()) {
            return Ok(());
        }
        let quiet = now - self.last_activity;
        // Ask them once per quiet spell, a little before the verdict,
        // whether they are alive. A computing worker posts heartbeats
        // (`ToPage::Working`), so it is never quiet that long.
        let fresh_ping = self.ping_at.is_some_and(|t| t >= self.last_activity);
        if quiet + PING_LEAD_MS as f64 >= self.stall as f64 && !fresh_ping {
            self.ping(&busy, now);
            return Ok(());
        }
        let pinged_long_enough = self
            .ping_at
            .is_some_and(|t| now - t >= PING_GRACE_MS as f64);
        if quiet < self.stall as f64 || !fresh_ping || !pinged_long_enough {
            return Ok(());
        }
        self.verdict(busy)
    }

    /// Asks the `busy` workers whether they are alive, forgetting the
    /// answers to an earlier ping so only this one counts.
    fn ping(&mut self, busy: &[usize], now: f64) {
        self.pongs.fill(false);
        self.ping_at = Some(now);
        let ping = encode_to_worker(&ToWorker::Ping, &[]);
        for &w in busy {
            // A dead worker's postMessage is silently dropped.
            let _ = self.pool.workers[w].post_message_with_transfer(&ping.message, &ping.transfer);
        }
    }

    /// The stall verdict once the run was quiet long enough after a ping:
    /// a `busy` worker that did not answer is lost (and all its ranks with
    /// it); else, if every unfinished rank waits for a message, the run is
    /// stalled; else it goes on.
    fn verdict(&self, busy: Vec<usize>) -> Result<(), RunError> {
        let (n, done, waits) = (self.n, &self.done, &self.waits);
        let lost: Vec<usize> = busy.into_iter().filter(|&w| !self.pongs[w]).collect();
        let alive = |r: usize| !lost.contains(&self.placement.worker_of(r).unwrap_or(0));
        let waiting: Vec<(usize, usize, usize)> = (0..n)
            .filter(|&r| !done[r] && alive(r))
            .filter_map(|r| waits[r].map(|(from, step)| (r, from, step)))
            .collect();
        if let Some(&worker) = lost.first() {
            return Err(RunError::WorkerLost {
                ms: self.stall,
                worker,
                ranks: self.placement.ranks_of(worker),
                waits: waiting,
            });
        }
        if (0..n).all(|r| done[r] || waits[r].is_some()) {
            return Err(RunError::Stalled {
                ms: self.stall,
                waits: waiting,
            });
        }
        Ok(())
    }

    /// A message from worker `w`: the summary once the last rank is done,
    /// an error that ends the run, or nothing more to do yet.
    fn message(
        &mut self,
        w: usize,
        data: &JsValue,
        on_output: &mut impl FnMut(RankOutput, DoneBytes),
    ) -> Result<Option<RunSummary>, RunError> {
        let event = match decode_to_page(data) {
            // A pong is not progress: it does not reset the stall clock.
            Ok(PageEvent::Pong(_)) => {
                self.pongs[w] = true;
                return Ok(None);
            }
            event => event,
        };
        self.last_activity = now_ms();
        match event {
            Ok(PageEvent::Ready) => self.send_init(w)?,
            Ok(PageEvent::Done(out, stamps, bytes)) => {
                return self.rank_done(w, out, stamps, bytes, on_output)
            }
            Ok(PageEvent::Waiting(r, from, step)) => {
                if self.placement.worker_of(r) == Some(w) {
                    self.waits[r] = Some((from, step));
                }
            }
            Ok(PageEvent::Failed {
                rank: Some(r),
                message,
            }) if self.placement.worker_of(r) == Some(w) => {
                return Err(RunError::Worker { rank: r, message })
            }
            Ok(PageEvent::Failed { message, .. }) => return Err(self.worker_error(w, message)),
            // A heartbeat: only resets the stall clock (above).
            Ok(PageEvent::Working(_)) => {}
            Ok(PageEvent::Pong(_)) => {} // handled above
            Err(e) => return Err(self.worker_error(w, format!("undecodable message: {e}"))),
        }
        Ok(None)
    }

    /// Worker `w` is ready: it gets its init with its ports, once (its
    /// ports are transferred with the first init, so a second ready has
    /// nothing to send).
    fn send_init(&mut self, w: usize) -> Result<(), RunError> {
        let Some(mine) = self.pool.ports[w].take() else {
            return Ok(());
        };
        let (peers, ports): (Vec<usize>, Vec<MessagePort>) = mine.into_iter().unzip();
        let init = ToWorker::Init {
            worker: w,
            worker_of: self.placement.table().to_vec(),
            request: self.req.clone(),
            peers,
            fault: self.fault,
        };
        let msg = encode_to_worker(&init, &ports);
        self.pool.workers[w]
            .post_message_with_transfer(&msg.message, &msg.transfer)
            .map_err(|e| RunError::Spawn(format!("posting worker {w}'s init: {}", js_text(&e))))
    }

    /// A rank's output from worker `w`: counted once (a repeat is
    /// ignored), its stamps kept for the summary, and handed to
    /// `on_output` at once so the caller can check it while others run.
    fn rank_done(
        &mut self,
        w: usize,
        out: RankOutput,
        (started_ms, finished_ms): (Option<f64>, Option<f64>),
        bytes: DoneBytes,
        on_output: &mut impl FnMut(RankOutput, DoneBytes),
    ) -> Result<Option<RunSummary>, RunError> {
        let rank = out.rank;
        if self.placement.worker_of(rank) != Some(w) {
            return Err(self.worker_error(
                w,
                format!("reported a result for rank {rank}, which it does not host"),
            ));
        }
        if self.done[rank] {
            return Ok(None);
        }
        self.done[rank] = true;
        self.remaining -= 1;
        self.last_finished = match (self.last_finished, finished_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.last_started = Some(match (self.last_started, started_ms) {
            (None, s) => s,
            (Some(Some(a)), Some(b)) => Some(a.max(b)),
            (Some(_), _) => None,
        });
        let arrival_ms = now_ms() - self.t0;
        on_output(out, bytes);
        Ok((self.remaining == 0).then(|| self.summary(arrival_ms)))
    }

    /// The run's times from the workers' stamps, which leave out the time
    /// the page spent checking outputs; the page's `arrival_ms` where the
    /// stamps are missing or do not fit inside it.
    fn summary(&self, arrival_ms: f64) -> RunSummary {
        let stamped = self
            .t0_epoch
            .zip(self.last_finished)
            .map(|(t0, t1)| t1 - t0);
        let wall_ms = match stamped {
            Some(w) if (0.0..=arrival_ms).contains(&w) => w,
            _ => arrival_ms,
        };
        let collective_ms = self
            .last_started
            .flatten()
            .zip(self.last_finished)
            .map(|(t0, t1)| t1 - t0)
            .filter(|c| (0.0..=wall_ms).contains(c));
        RunSummary {
            wall_ms,
            collective_ms,
            kernels: "scalar",
        }
    }

    /// The error of a worker that failed without naming a rank: its first
    /// rank, and every rank it hosted in the message, since they all
    /// failed with it.
    fn worker_error(&self, w: usize, message: String) -> RunError {
        let ranks = self.placement.ranks_of(w);
        let message = if ranks.len() > 1 {
            format!(
                "{message} (worker {w} hosted ranks {}; all of them failed)",
                WorkerLayout::describe_ranks(&ranks)
            )
        } else {
            message
        };
        RunError::Worker {
            rank: ranks.first().copied().unwrap_or(0),
            message,
        }
    }

    /// The run's time is up: the error names the ranks still missing.
    fn timed_out(&self) -> RunError {
        let waiting = (0..self.n).filter(|&r| !self.done[r]).collect();
        RunError::Timeout {
            ms: self.req.timeout_ms,
            waiting,
        }
    }
}

/// The stall threshold of `req` on `workers` workers ([`stall_ms`] of the
/// bytes one worker works through between two messages), so a worker
/// busy with a large buffer is not taken for a stalled one.
fn stall_for(req: &RunRequest, workers: usize) -> u32 {
    // A busy worker reduces for all of its ranks between two messages. A
    // compressed run's worker also generates gradient inputs (Box–Muller)
    // and encodes / decodes every payload: about 50× the work per byte of
    // a plain reduce, with no heartbeat in between.
    let per_worker = req.schedule.ranks.div_ceil(workers) as u64;
    let work_factor = if req.compressed.is_some() { 50 } else { 1 };
    stall_ms(
        (req.elems as u64)
            .saturating_mul(req.dtype.size_bytes() as u64)
            .saturating_mul(per_worker)
            .saturating_mul(work_factor),
    )
}

/// One channel per communicating worker pair; a worker gets its ports
/// with its init. Ranks on one worker talk without a channel. Per worker:
/// `(peer worker, port)`.
///
/// Errors: [`RunError::Spawn`] if the schedule pairs a rank outside the
/// run or with itself (no channel could carry that), or a channel cannot
/// be made.
fn wire_ports(
    req: &RunRequest,
    placement: &WorkerLayout,
    workers: usize,
) -> Result<Vec<Option<Vec<(usize, MessagePort)>>>, RunError> {
    let n = req.schedule.ranks;
    let rank_pairs = req.schedule.peer_pairs();
    if let Some((a, b)) = rank_pairs
        .iter()
        .find(|&&(a, b)| a >= n || b >= n || a == b)
    {
        return Err(RunError::Spawn(format!(
            "the schedule pairs ranks {a} and {b}, outside 0..{n} or a self-pair"
        )));
    }
    let mut ports: Vec<Vec<(usize, MessagePort)>> = (0..workers).map(|_| Vec::new()).collect();
    for (a, b) in placement.worker_pairs(&rank_pairs) {
        let ch = MessageChannel::new()
            .map_err(|e| RunError::Spawn(format!("new MessageChannel(): {}", js_text(&e))))?;
        ports[a].push((b, ch.port1()));
        ports[b].push((a, ch.port2()));
    }
    Ok(ports.into_iter().map(Some).collect())
}

/// A `blob:` URL of the worker bootstrap script; revoked on drop. Also
/// the planner worker's ([`super::planner`]).
pub(crate) struct Bootstrap {
    /// The script's `blob:` URL.
    pub(crate) url: String,
}

impl Bootstrap {
    /// `js` and `wasm` are resolved against the page's URL. The bootstrap
    /// reports a failed wasm load as [`crate::runtime::protocol::ToPage::Failed`] (a
    /// rejected promise would not reach the page's `onerror`): a message
    /// `{h}` whose JSON header has `kind: "failed"`.
    pub(crate) fn new(js: &str, wasm: &str) -> Result<Bootstrap, RunError> {
        let spawn = |what: &str, e: JsValue| RunError::Spawn(format!("{what}: {}", js_text(&e)));
        let base = web_sys::window()
            .ok_or_else(|| RunError::Spawn("no window".into()))?
            .location()
            .href()
            .map_err(|e| spawn("reading the page URL", e))?;
        let abs = |u: &str| {
            Url::new_with_base(u, &base)
                .map(|u| u.href())
                .map_err(|e| spawn("resolving a worker URL", e))
        };
        let (js, wasm) = (abs(js)?, abs(wasm)?);
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let script = format!(
            "importScripts({js});\n\
             wasm_bindgen({{ module_or_path: {wasm} }}).catch(function (e) {{\n\
               postMessage({{ h: JSON.stringify({{ kind: 'failed', rank: null, \
             message: 'loading the worker wasm failed: ' + e }}) }});\n\
             }});\n",
            js = quote(&js),
            wasm = quote(&wasm),
        );
        let parts = js_sys::Array::of1(&JsValue::from_str(&script));
        let opts = BlobPropertyBag::new();
        opts.set_type("text/javascript");
        let blob = Blob::new_with_str_sequence_and_options(&parts, &opts)
            .map_err(|e| spawn("new Blob()", e))?;
        let url = Url::create_object_url_with_blob(&blob)
            .map_err(|e| spawn("URL.createObjectURL()", e))?;
        Ok(Bootstrap { url })
    }
}

impl Drop for Bootstrap {
    fn drop(&mut self) {
        let _ = Url::revoke_object_url(&self.url);
    }
}

/// Milliseconds from `performance.now()` (or `Date.now()` without a window).
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

pub(crate) fn js_text(v: &JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{v:?}"))
}

/// What the pool waits for.
enum Incoming {
    /// A message from worker `.0`.
    Message(usize, JsValue),
    /// Worker `.0` threw.
    Error(usize, String),
    /// The run's time is up.
    Timeout,
    /// The stall watchdog's tick.
    Tick,
}

/// A single-consumer event queue the JS callbacks push into.
#[derive(Default)]
struct Inbox {
    queue: RefCell<VecDeque<Incoming>>,
    waker: RefCell<Option<Waker>>,
}

impl Inbox {
    fn push(&self, ev: Incoming) {
        self.queue.borrow_mut().push_back(ev);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    async fn next(&self) -> Incoming {
        std::future::poll_fn(|cx| match self.queue.borrow_mut().pop_front() {
            Some(ev) => Poll::Ready(ev),
            None => {
                *self.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

/// Owns the run's workers, handlers, timer and untransferred ports; dropping
/// it ends the run.
#[derive(Default)]
struct Pool {
    workers: Vec<Worker>,
    handlers: Vec<Closure<dyn FnMut(Event)>>,
    timer: Option<Timeout>,
    watchdog: Option<Interval>,
    ports: Vec<Option<Vec<(usize, MessagePort)>>>,
}

impl Pool {
    /// Starts worker `w` from `script_url` with its message, error and
    /// message-error handlers, which only queue what happened in `inbox`
    /// for the run's loop; the pool keeps the handlers alive and releases
    /// them when it drops.
    fn spawn(&mut self, script_url: &str, w: usize, inbox: &Rc<Inbox>) -> Result<(), RunError> {
        let worker = Worker::new(script_url)
            .map_err(|e| RunError::Spawn(format!("new Worker({script_url}): {}", js_text(&e))))?;
        let ib = inbox.clone();
        let on_message = Closure::<dyn FnMut(Event)>::new(move |ev: Event| {
            if let Some(ev) = ev.dyn_ref::<MessageEvent>() {
                ib.push(Incoming::Message(w, ev.data()));
            }
        });
        let ib = inbox.clone();
        let on_error = Closure::<dyn FnMut(Event)>::new(move |ev: Event| {
            let message = match ev.dyn_ref::<ErrorEvent>() {
                Some(e) if !e.message().is_empty() => {
                    format!("{} ({}:{})", e.message(), e.filename(), e.lineno())
                }
                _ => "the worker script failed to load or threw".to_string(),
            };
            ev.prevent_default(); // handled here; keeps the console quiet
            ib.push(Incoming::Error(w, message));
        });
        let ib = inbox.clone();
        let on_message_error = Closure::<dyn FnMut(Event)>::new(move |_ev: Event| {
            ib.push(Incoming::Error(
                w,
                "a message from the worker could not be deserialised".into(),
            ));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        worker.set_onmessageerror(Some(on_message_error.as_ref().unchecked_ref()));
        self.workers.push(worker);
        self.handlers
            .extend([on_message, on_error, on_message_error]);
        Ok(())
    }

    /// Starts the run's timeout and the stall watchdog's tick; both only
    /// queue an event in `inbox`, and the pool cancels them when it drops.
    fn start_clocks(&mut self, timeout_ms: u32, inbox: &Rc<Inbox>) {
        let ib = inbox.clone();
        self.timer = Some(Timeout::new(timeout_ms, move || ib.push(Incoming::Timeout)));
        let ib = inbox.clone();
        self.watchdog = Some(Interval::new(WATCHDOG_TICK_MS, move || {
            ib.push(Incoming::Tick)
        }));
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Some(t) = self.timer.take() {
            t.cancel();
        }
        if let Some(w) = self.watchdog.take() {
            w.cancel();
        }
        for w in &self.workers {
            w.set_onmessage(None);
            w.set_onerror(None);
            w.set_onmessageerror(None);
            w.terminate();
        }
        for (_, p) in self.ports.iter_mut().filter_map(Option::take).flatten() {
            p.close();
        }
    }
}
