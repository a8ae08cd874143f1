//! The planner worker (wasm only): [`crate::runtime::planner`]'s jobs made
//! in a web worker of their own, so that the engine's slow answers (a
//! model-only plan at 1024 ranks, the chart's sweep, the tuning text, the
//! determinism comparison) never run on the page's main thread.
//!
//! - The worker side, [`serve`] (`src/bin/planner.rs`, built by trunk as
//!   `planner.js` + `planner_bg.wasm`): posts the string `"ready"`, then
//!   answers each request it is sent ([`planner::answer`]), one at a time.
//! - The page side, [`Planner`]: [`WORKERS`] workers, each spawned on
//!   first use, each taking the lanes [`Lane::worker`] gives it (the
//!   headline one to itself, so a control change never waits behind a
//!   ranking or a sweep); at most one job per [`Lane`] queued or running;
//!   a worker takes its lanes in their order (while the page
//!   [`Planner::hold`]s, the headline only; while a headline is made and
//!   for [`SETTLE_MS`] after its answer, the other worker starts
//!   nothing). A newer job of a lane
//!   replaces a queued one and cancels a running one by terminating its
//!   worker and starting a fresh one (a worker cannot be interrupted; a
//!   stale answer is never waited for; the other worker goes on). A worker
//!   that throws or fails to load fails its running job with the reason and
//!   is replaced; after [`MAX_FAILURES`] failures in a row the queued jobs
//!   fail too, until the next ask.
//!
//! Messages: requests and responses are CBOR bytes ([`planner::encode`])
//! in a transferred `Uint8Array`; the page sends a worker its next request
//! only after the last response of the previous one, so the job running
//! on each worker is always known.

use super::pool::{js_text, Bootstrap};
use crate::engine::config::Config;
use crate::runtime::planner::{self, Job, Lane, Request, Response, WORKERS};
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, ErrorEvent, Event, MessageEvent, Worker};

/// The planner worker's wasm-bindgen JS, relative to the page (trunk's
/// `data-type="worker"` output for the `planner` binary).
pub const PLANNER_JS: &str = "./planner.js";
/// The planner worker's wasm, relative to the page.
pub const PLANNER_WASM: &str = "./planner_bg.wasm";
/// Failures in a row (a throw or a failed load) after which the queued jobs
/// fail with the last reason instead of waiting for yet another worker.
pub const MAX_FAILURES: u32 = 3;
/// After a headline's answer, the slow worker waits this long (ms) before
/// it starts (or restarts, after a cancel) on the same configuration: a
/// user's next change (a drag of the size slider, keys on a select) then
/// finds the cores free, instead of shared with a fresh worker's compile
/// and a ranking that change cancels at once. The ranking arrives that
/// much later (it takes about a second of wasm at 1024 ranks).
pub const SETTLE_MS: u32 = 200;

/// The worker's entry point: installs the message handler, then posts
/// `"ready"` (a request posted before the wasm loaded would be lost, so
/// the page waits for it).
pub fn serve() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let out = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let bytes = js_sys::Uint8Array::new(&ev.data()).to_vec();
        let mut reply = |r: Response| {
            let arr = js_sys::Uint8Array::from(planner::encode(&r).as_slice());
            let _ = out.post_message_with_transfer(&arr, &js_sys::Array::of1(&arr.buffer()));
        };
        match planner::decode::<Request>(&bytes) {
            Ok(req) => planner::answer(&req, &mut reply),
            // The page sends one request at a time: id 0 names the one it
            // is waiting for.
            Err(e) => reply(Response {
                id: 0,
                answer: Err(e),
                last: true,
            }),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str("ready"));
}

/// What a job's asker is told, once per [`Response`].
type OnResponse = Rc<dyn Fn(Response)>;

/// A job waiting or running.
struct Pending {
    id: u64,
    lane: Lane,
    /// The encoded [`Request`].
    bytes: Vec<u8>,
    on: OnResponse,
}

/// A live worker and its handlers; dropping it terminates the worker.
struct Spawned {
    worker: Worker,
    _boot: Bootstrap,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(Event)>,
}

impl Drop for Spawned {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

/// One planner worker and the job it runs.
#[derive(Default)]
struct Slot {
    spawned: Option<Spawned>,
    /// The worker said `"ready"`.
    ready: bool,
    running: Option<Pending>,
}

#[derive(Default)]
struct State {
    /// Worker `w` takes the lanes whose [`Lane::worker`] is `w`.
    slots: [Slot; WORKERS],
    /// At most one job per lane.
    queue: Vec<Pending>,
    next_id: u64,
    /// Failures since the last answer.
    failures: u32,
    /// Only [`Lane::Headline`] jobs start ([`Planner::hold`]).
    held: bool,
    /// Set after a headline's answer: the slow worker waits until it fires
    /// ([`SETTLE_MS`]).
    settle: Option<gloo_timers::callback::Timeout>,
}

/// The page's handle on the planner workers (cheap to clone; equal to its
/// clones only, so it can be a yew context).
#[derive(Clone)]
pub struct Planner {
    state: Rc<RefCell<State>>,
}

impl PartialEq for Planner {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.state, &other.state)
    }
}

impl Default for Planner {
    fn default() -> Self {
        Planner::new()
    }
}

impl Planner {
    /// A planner; a worker starts on the first [`Planner::ask`] of one of
    /// its lanes.
    pub fn new() -> Planner {
        Planner {
            state: Rc::new(RefCell::new(State::default())),
        }
    }

    /// Asks `job` about `config`; `on` gets each [`Response`] to it (the
    /// last has `last`), unless a newer job of the same lane replaces it
    /// first. Returns the request's id.
    pub fn ask(&self, config: &Config, job: Job, on: impl Fn(Response) + 'static) -> u64 {
        let lane = job.lane();
        let id = {
            let mut st = self.state.borrow_mut();
            st.next_id += 1;
            st.failures = st.failures.min(MAX_FAILURES - 1);
            st.next_id
        };
        let bytes = planner::encode(&Request {
            id,
            config: config.clone(),
            job,
        });
        self.cancel(lane);
        self.state.borrow_mut().queue.push(Pending {
            id,
            lane,
            bytes,
            on: Rc::new(on),
        });
        self.pump();
        id
    }

    /// While `held`, only [`Lane::Headline`] jobs start; the others wait in
    /// their lanes (a job already running finishes). The page holds the
    /// cards' jobs while a real run's workers compute, so that they do not
    /// share the cores with it (a determinism comparison of 8 × 64 MiB is
    /// seconds of work).
    pub fn hold(&self, held: bool) {
        let release = {
            let mut st = self.state.borrow_mut();
            let was = std::mem::replace(&mut st.held, held);
            was && !held
        };
        if release {
            self.pump();
        }
    }

    /// Drops the job of `lane`: a queued one is forgotten, a running one
    /// stops with its worker (a fresh worker takes that worker's other
    /// lanes; the other worker goes on).
    pub fn cancel(&self, lane: Lane) {
        let restart = {
            let mut st = self.state.borrow_mut();
            st.queue.retain(|p| p.lane != lane);
            let slot = &mut st.slots[lane.worker()];
            if slot.running.as_ref().is_some_and(|r| r.lane == lane) {
                *slot = Slot::default();
                true
            } else {
                false
            }
        };
        if restart {
            self.pump();
        }
    }

    /// Starts the workers that have jobs waiting, and sends each free one
    /// its next job.
    fn pump(&self) {
        let mut failed: Vec<(Pending, String)> = Vec::new();
        {
            let mut st = self.state.borrow_mut();
            let st = &mut *st;
            // While a headline is made (and for SETTLE_MS after it), the
            // slow lanes neither start nor restart their worker: the
            // headline has the cores to itself (2 here), and on a drag of
            // the size slider nothing slow starts before the last size's
            // headline.
            let headline = Lane::Headline.worker();
            let making = st.slots[headline].running.is_some()
                || st.queue.iter().any(|p| p.lane == Lane::Headline)
                || st.settle.is_some();
            for w in 0..WORKERS {
                let mine = |p: &Pending| p.lane.worker() == w;
                let slot = &mut st.slots[w];
                if slot.running.is_none() && !st.queue.iter().any(mine) {
                    continue;
                }
                if w != headline && making && slot.running.is_none() {
                    continue;
                }
                if slot.spawned.is_none() {
                    match self.spawn(w) {
                        Ok(s) => {
                            slot.spawned = Some(s);
                            slot.ready = false;
                        }
                        Err(why) => {
                            let (theirs, rest): (Vec<Pending>, Vec<Pending>) =
                                st.queue.drain(..).partition(mine);
                            st.queue = rest;
                            failed.extend(theirs.into_iter().map(|p| (p, why.clone())));
                            continue;
                        }
                    }
                }
                if !slot.ready || slot.running.is_some() {
                    continue;
                }
                let held = st.held;
                let Some(k) = (0..st.queue.len())
                    .filter(|&k| mine(&st.queue[k]))
                    .filter(|&k| !held || st.queue[k].lane == Lane::Headline)
                    .min_by_key(|&k| st.queue[k].lane)
                else {
                    continue;
                };
                let p = st.queue.remove(k);
                let arr = js_sys::Uint8Array::from(p.bytes.as_slice());
                let sent = slot.spawned.as_ref().map(|s| {
                    s.worker
                        .post_message_with_transfer(&arr, &js_sys::Array::of1(&arr.buffer()))
                });
                match sent {
                    Some(Ok(())) => slot.running = Some(p),
                    Some(Err(e)) => failed.push((p, js_text(&e))),
                    None => st.queue.insert(k, p),
                }
            }
        }
        for (p, why) in failed {
            (p.on)(Response {
                id: p.id,
                answer: Err(format!("the planner worker could not start: {why}")),
                last: true,
            });
        }
    }

    /// Starts worker `w` (its messages and errors are told with `w`).
    fn spawn(&self, w: usize) -> Result<Spawned, String> {
        let boot = Bootstrap::new(PLANNER_JS, PLANNER_WASM).map_err(|e| e.to_string())?;
        let worker = Worker::new(&boot.url)
            .map_err(|e| format!("new Worker({}): {}", boot.url, js_text(&e)))?;
        let me = Rc::downgrade(&self.state);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            received(&me, w, ev.data());
        });
        let me = Rc::downgrade(&self.state);
        let on_error = Closure::<dyn FnMut(Event)>::new(move |ev: Event| {
            let why = match ev.dyn_ref::<ErrorEvent>() {
                Some(e) if !e.message().is_empty() => e.message(),
                _ => "the planner worker's script failed to load or threw".to_string(),
            };
            ev.prevent_default();
            failed(&me, w, why);
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Spawned {
            worker,
            _boot: boot,
            _on_message: on_message,
            _on_error: on_error,
        })
    }
}

/// A message from worker `w`.
fn received(me: &Weak<RefCell<State>>, w: usize, data: JsValue) {
    let Some(state) = me.upgrade() else { return };
    let planner = Planner { state };
    if data.as_string().as_deref() == Some("ready") {
        planner.state.borrow_mut().slots[w].ready = true;
        planner.pump();
        return;
    }
    // The bootstrap's `{h}` report of a wasm that failed to load.
    if let Ok(h) = js_sys::Reflect::get(&data, &JsValue::from_str("h")) {
        if let Some(h) = h.as_string() {
            let why = serde_json::from_str::<serde_json::Value>(&h)
                .ok()
                .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(String::from))
                .unwrap_or(h);
            return failed(me, w, why);
        }
    }
    let bytes = js_sys::Uint8Array::new(&data).to_vec();
    let response = match planner::decode::<Response>(&bytes) {
        Ok(r) => r,
        Err(e) => return failed(me, w, e),
    };
    let deliver = {
        let mut st = planner.state.borrow_mut();
        let st = &mut *st;
        let slot = &mut st.slots[w];
        match slot.running.as_ref() {
            Some(r) if r.id == response.id || response.id == 0 => {
                let on = r.on.clone();
                st.failures = 0;
                if response.last {
                    slot.running = None;
                }
                Some(on)
            }
            _ => None,
        }
    };
    // Told with no borrow held: the asker may ask again at once.
    if let Some(on) = deliver {
        let last = response.last;
        on(response);
        if last {
            if w == Lane::Headline.worker() {
                let me = me.clone();
                let settle = gloo_timers::callback::Timeout::new(SETTLE_MS, move || {
                    if let Some(state) = me.upgrade() {
                        state.borrow_mut().settle = None;
                        Planner { state }.pump();
                    }
                });
                planner.state.borrow_mut().settle = Some(settle);
            }
            planner.pump();
        }
    }
}

/// Worker `w` threw or could not load: its running job fails with `why`,
/// and a fresh worker takes its lanes (unless workers failed too often:
/// then its queued jobs fail too).
fn failed(me: &Weak<RefCell<State>>, w: usize, why: String) {
    let Some(state) = me.upgrade() else { return };
    let planner = Planner { state };
    let (running, given_up) = {
        let mut st = planner.state.borrow_mut();
        let running = std::mem::take(&mut st.slots[w]).running;
        st.failures += 1;
        let given_up: Vec<Pending> = if st.failures >= MAX_FAILURES {
            let (theirs, rest) = st.queue.drain(..).partition(|p| p.lane.worker() == w);
            st.queue = rest;
            theirs
        } else {
            Vec::new()
        };
        (running, given_up)
    };
    for p in running.into_iter().chain(given_up) {
        (p.on)(Response {
            id: p.id,
            answer: Err(format!("the planner worker failed: {why}")),
            last: true,
        });
    }
    planner.pump();
}
