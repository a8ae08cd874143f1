//! The rank worker: one web worker hosts one or more ranks (a contiguous
//! block, [`crate::runtime::placement`]).
//!
//! Life of a worker (see [`crate::runtime::protocol`] for the messages):
//! 1. [`start`] installs the panic hook and the page-message handler, then
//!    posts [`ToPage::Ready`] (messages posted to a worker before its wasm has
//!    loaded would be lost, so the page waits for this).
//! 2. The page sends [`ToWorker::Init`]: the worker's index, the run's rank
//!    table and one `MessagePort` per peer worker. The worker builds a
//!    [`Host`] (one [`crate::runtime::machine::RankMachine`] per hosted rank, each
//!    with its own input buffer), listens on every port and drains the host:
//!    a send to a rank on another worker goes straight to that worker's port
//!    as a transferred `ArrayBuffer` (never through the page); a send to a
//!    co-hosted rank is queued into it directly (no `postMessage`).
//! 3. Each chunk that arrives on a port is queued for its receiving rank and
//!    the host drains again. Once the rank has consumed it, its buffer joins
//!    this worker's [`BufferPool`] (or, when the pool has enough of its
//!    length or this worker sends none of it, goes back to the sending
//!    worker's; [`Incoming`]); a later
//!    remote send of that length is copied into it rather than into a
//!    fresh `ArrayBuffer`. Whenever a rank stops to wait, the worker tells
//!    the page whom it waits for ([`ToPage::Waiting`]; the pool's stall
//!    watchdog uses it), and it answers the watchdog's [`ToWorker::Ping`]
//!    with [`ToPage::Pong`] (a worker that does not is reported lost).
//! 4. Each rank that finishes is posted at once as [`ToPage::Done`] with its
//!    samples and its buffer (a transferred `ArrayBuffer`), so the page checks
//!    it while the other ranks still run. Once all are done the worker idles
//!    until the page terminates it.
//!
//! A test-only [`Fault`] in the init message (never in a normal run) makes
//! the worker of the fault's rank throw, close itself (taking every rank it
//! hosts down), drop or delay a message at that rank's first send at or
//! after the fault's step.
//!
//! Any error (undecodable message, schedule mismatch) is posted as
//! [`ToPage::Failed`]; a panic is posted the same way by the panic hook before
//! the wasm traps.

use super::codec::{
    decode_port, decode_to_worker, encode_chunk_in, encode_to_page, encode_to_page_with_progress,
    epoch_ms, BufferPool, Incoming, PortMessage, Wire,
};
use crate::runtime::fault::{Fault, FaultKind};
use crate::runtime::host::{Bytes, Host, Report, Sent};
use crate::runtime::placement::{Route, WorkerLayout};
use crate::runtime::protocol::{samples_to_bits, Routed, ToPage, ToWorker};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

/// A computing worker posts [`ToPage::Working`] when it has posted nothing
/// to the page for this long, ms (well below the pool's 1 s stall
/// threshold, so a busy worker is never taken for a dead one).
pub const HEARTBEAT_MS: f64 = 250.0;

thread_local! {
    /// This worker's index once known (for pongs and heartbeats).
    static WORKER: Cell<Option<usize>> = const { Cell::new(None) };
    /// When this worker had built its ranks (inputs ready), epoch ms.
    static STARTED: Cell<Option<f64>> = const { Cell::new(None) };
    /// When this worker last posted to the page, `Date.now()` ms.
    static LAST_POST: Cell<f64> = const { Cell::new(0.0) };
    /// Everything the worker keeps alive: its host, ports and handlers.
    static STATE: RefCell<Option<Rc<Ranks>>> = const { RefCell::new(None) };
}

/// A `MessagePort` handler kept alive by the worker.
type PortHandler = Closure<dyn FnMut(MessageEvent)>;

/// The running ranks of this worker.
struct Ranks {
    /// Itself, for deferred (test-only delayed) local deliveries.
    me: Weak<Ranks>,
    /// The machines; `None` once finished or failed.
    host: RefCell<Option<Host<Incoming>>>,
    /// Peer worker -> the port of that worker pair.
    ports: HashMap<usize, MessagePort>,
    /// Spare chunk buffers (consumed here or handed back), for the next
    /// remote sends; shared with every [`Incoming`] until it is dropped.
    pool: Rc<RefCell<BufferPool>>,
    handlers: RefCell<Vec<PortHandler>>,
    /// The test-only injected fault, until it fires (then `None`).
    fault: Cell<Option<Fault>>,
}

fn scope() -> Option<DedicatedWorkerGlobalScope> {
    js_sys::global()
        .dyn_into::<DedicatedWorkerGlobalScope>()
        .ok()
}

fn post(scope: &DedicatedWorkerGlobalScope, w: Wire) {
    // postMessage only throws for uncloneable data; ours is plain.
    let _ = scope.post_message_with_transfer(&w.message, &w.transfer);
    LAST_POST.with(|t| t.set(js_sys::Date::now()));
}

/// Posts [`ToPage::Working`] if nothing was posted for [`HEARTBEAT_MS`]
/// (called between pieces of work: each rank built, each chunk sent).
fn heartbeat() {
    let now = js_sys::Date::now();
    if now - LAST_POST.with(Cell::get) < HEARTBEAT_MS {
        return;
    }
    if let (Some(s), Some(worker)) = (scope(), WORKER.with(Cell::get)) {
        post(&s, encode_to_page(&ToPage::Working { worker }, None));
    }
}

fn post_failed(rank: Option<usize>, message: String) {
    if let Some(s) = scope() {
        post(&s, encode_to_page(&ToPage::Failed { rank, message }, None));
    }
}

/// The worker's entry point (called by `src/bin/worker.rs`). Does nothing
/// outside a dedicated worker.
pub fn start() {
    let Some(scope) = scope() else {
        return;
    };
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        // Which of the hosted ranks panicked is unknown: the pool names the
        // worker's ranks.
        post_failed(None, format!("panic: {info}"));
    }));
    let on_page = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let (msg, ports) = match decode_to_worker(&ev.data()) {
            Ok(x) => x,
            Err(e) => return post_failed(None, e.to_string()),
        };
        match msg {
            ToWorker::Ping => {
                if let (Some(s), Some(worker)) = (self::scope(), WORKER.with(Cell::get)) {
                    post(&s, encode_to_page(&ToPage::Pong { worker }, None));
                }
            }
            ToWorker::Init { .. } if STATE.with(|s| s.borrow().is_some()) => {
                post_failed(None, "a second init message arrived".into());
            }
            init @ ToWorker::Init { .. } => {
                if let Err(message) = self::init(init, ports) {
                    post_failed(None, message);
                }
            }
        }
    });
    scope.set_onmessage(Some(on_page.as_ref().unchecked_ref()));
    on_page.forget(); // lives as long as the worker
    post(&scope, encode_to_page(&ToPage::Ready, None));
}

fn init(msg: ToWorker, ports: Vec<MessagePort>) -> Result<(), String> {
    let ToWorker::Init {
        worker,
        worker_of,
        request,
        peers,
        fault,
    } = msg
    else {
        return Err("expected the init message".into());
    };
    let workers = worker_of.iter().max().map_or(0, |m| m + 1);
    let layout = WorkerLayout::from_table(worker_of, request.schedule.ranks, workers)
        .map_err(|e| e.to_string())?;
    if let Some(&p) = peers.iter().find(|&&p| p == worker || p >= workers) {
        return Err(format!(
            "init gives worker {worker} a port to worker {p}, itself or outside 0..{workers}"
        ));
    }
    WORKER.with(|w| w.set(Some(worker)));
    LAST_POST.with(|t| t.set(js_sys::Date::now()));
    let host = Host::new(layout, worker, |rank| {
        // A heartbeat as the input is built: 64 MiB and more a rank, one
        // handler (the page's watchdog must not take the silence for a
        // dead worker).
        let m = request.rank_machine_with_progress(rank, &mut heartbeat);
        heartbeat();
        m
    })
    .map_err(|e| e.to_string())?;
    STARTED.with(|s| s.set(epoch_ms()));
    let hosted = host.ranks();
    let state = Rc::new_cyclic(|me| Ranks {
        me: me.clone(),
        host: RefCell::new(Some(host)),
        ports: peers.iter().copied().zip(ports).collect(),
        handlers: RefCell::new(Vec::new()),
        pool: Rc::default(),
        fault: Cell::new(fault.filter(|f| hosted.contains(&f.rank))),
    });
    STATE.with(|s| *s.borrow_mut() = Some(state.clone()));
    for (&peer, port) in &state.ports {
        let weak = Rc::downgrade(&state);
        let h = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            if let Some(st) = weak.upgrade() {
                st.on_chunk(peer, &ev.data());
            }
        });
        port.set_onmessage(Some(h.as_ref().unchecked_ref())); // also starts the port
        state.handlers.borrow_mut().push(h);
    }
    state.drain();
    Ok(())
}

impl Ranks {
    /// A message arrived on the port of worker `peer`: a chunk (once
    /// consumed, its buffer joins this worker's pool or goes back to
    /// `peer`, [`Incoming`]), or a buffer `peer` handed back.
    fn on_chunk(&self, peer: usize, data: &JsValue) {
        match decode_port(data) {
            Ok(PortMessage::Chunk(msg, bytes)) => {
                let back = self.ports.get(&peer).cloned();
                let pool = Some(self.pool.clone());
                self.deliver(
                    Some(peer),
                    msg,
                    Bytes::Wire(Incoming::new(bytes, back, pool)),
                );
            }
            Ok(PortMessage::Returned(buffer)) => self.pool.borrow_mut().put(buffer),
            Err(e) => self.fail(None, format!("message from worker {peer}: {e}")),
        }
    }

    /// Queues `msg` for its receiver (which must be hosted here; a chunk on
    /// `peer`'s port must come from one of `peer`'s ranks) and drains.
    fn deliver(&self, peer: Option<usize>, msg: Routed, bytes: Bytes<Incoming>) {
        // A borrow that is still held means an injected `throw` unwound
        // through `drain` (a JS exception skips Rust destructors): this
        // worker has already failed, so later messages are ignored.
        let Ok(mut slot) = self.host.try_borrow_mut() else {
            return;
        };
        let Some(host) = slot.as_mut() else {
            return; // finished or failed: ignore
        };
        if let Some(peer) = peer {
            let from = host.layout().worker_of(msg.from);
            if from != Some(peer) {
                drop(slot);
                return self.fail(
                    Some(msg.to),
                    format!(
                        "a chunk from rank {} arrived on worker {peer}'s port, but rank {} is hosted by worker {from:?}",
                        msg.from, msg.from
                    ),
                );
            }
        }
        if let Err(e) = host.deliver(msg, bytes) {
            drop(slot);
            return self.fail(Some(msg.to), e.to_string());
        }
        drop(slot);
        self.drain();
    }

    /// Advances every hosted rank that can, then reports to the page.
    fn drain(&self) {
        let Ok(mut slot) = self.host.try_borrow_mut() else {
            return;
        };
        let Some(host) = slot.as_mut() else { return };
        let reports = host.drain(|msg, route, bytes| self.send(msg, route, bytes));
        let finished = host.is_finished();
        if finished {
            slot.take();
        }
        drop(slot);
        // Every rank done in this drain was done by now: stamped before
        // the first output is copied out (64 MiB each at the largest), so
        // a co-hosted rank's finish does not include another's copy.
        let finished_ms = epoch_ms();
        let Some(s) = scope() else { return };
        for r in reports {
            match r {
                Report::Done {
                    rank,
                    buffer,
                    samples,
                } => {
                    let done = ToPage::Done {
                        rank,
                        samples: samples_to_bits(&samples),
                        finished_ms,
                        started_ms: STARTED.with(Cell::get),
                    };
                    let wire = encode_to_page_with_progress(&done, Some(&buffer), &mut heartbeat);
                    post(&s, wire);
                }
                Report::Waiting { rank, from, step } => {
                    post(
                        &s,
                        encode_to_page(&ToPage::Waiting { rank, from, step }, None),
                    );
                }
                Report::Failed { rank, message } => return self.fail(Some(rank), message),
                Report::Halted => {
                    // As if the browser terminated the worker: it says
                    // nothing more, for any of its ranks.
                    self.close();
                    s.close();
                    return;
                }
            }
        }
        // Ports stay open once all ranks are done: a send posted just now may
        // still be in flight; the page terminates the worker.
    }

    /// One send of a hosted rank: the test-only fault, then local delivery
    /// or a post on the receiving worker's port.
    fn send(&self, msg: Routed, route: Route, bytes: &[u8]) -> Result<Sent, String> {
        heartbeat();
        let fault = self
            .fault
            .get()
            .filter(|f| f.rank == msg.from && msg.chunk.step >= f.step);
        let mut delay_ms = None;
        let mut corrupted = None;
        if let Some(f) = fault {
            self.fault.set(None);
            match f.kind {
                FaultKind::Throw => wasm_bindgen::throw_str(&format!(
                    "injected fault: rank {}'s worker throws at step {}",
                    msg.from, msg.chunk.step
                )),
                FaultKind::Kill => return Ok(Sent::Halt),
                FaultKind::Drop => return Ok(Sent::Handled),
                FaultKind::Delay { ms } => delay_ms = Some(ms),
                FaultKind::Corrupt => {
                    let mut copy = bytes.to_vec();
                    if let Some(b) = copy.first_mut() {
                        *b ^= 0xFF;
                    }
                    corrupted = Some(copy);
                }
            }
        }
        if let (Route::Local, Some(copy)) = (route, &corrupted) {
            return Ok(Sent::LocalBytes(copy.clone()));
        }
        let bytes: &[u8] = corrupted.as_deref().unwrap_or(bytes);
        match (route, delay_ms) {
            (Route::Local, None) => Ok(Sent::Local),
            (Route::Local, Some(ms)) => {
                let (me, copy) = (self.me.clone(), bytes.to_vec());
                gloo_timers::callback::Timeout::new(ms, move || {
                    if let Some(st) = me.upgrade() {
                        st.deliver(None, msg, Bytes::Local(copy));
                    }
                })
                .forget();
                Ok(Sent::Handled)
            }
            (Route::Remote(w), delay) => {
                let port = self
                    .ports
                    .get(&w)
                    .ok_or_else(|| format!("no port to worker {w} (rank {})", msg.to))?;
                let reuse = self.pool.borrow_mut().take(bytes.len());
                let wire = encode_chunk_in(msg, bytes, reuse);
                if let Some(ms) = delay {
                    let port = port.clone();
                    gloo_timers::callback::Timeout::new(ms, move || {
                        let _ = port.post_message_with_transferable(&wire.message, &wire.transfer);
                    })
                    .forget();
                } else {
                    port.post_message_with_transferable(&wire.message, &wire.transfer)
                        .map_err(|e| format!("posting to rank {} failed: {e:?}", msg.to))?;
                }
                Ok(Sent::Handled)
            }
        }
    }

    fn fail(&self, rank: Option<usize>, message: String) {
        if let Ok(mut h) = self.host.try_borrow_mut() {
            h.take();
        }
        post_failed(rank, message);
        self.close();
    }

    fn close(&self) {
        for p in self.ports.values() {
            p.set_onmessage(None);
            p.close();
        }
    }
}
