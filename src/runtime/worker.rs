//! The rank worker: one web worker hosts one rank.
//!
//! Life of a worker (see [`super::protocol`] for the messages):
//! 1. [`start`] installs the panic hook and the page-message handler, then
//!    posts [`ToPage::Ready`] (messages posted to a worker before its wasm has
//!    loaded would be lost, so the page waits for this).
//! 2. The page sends [`ToWorker::Init`] with one `MessagePort` per peer. The
//!    worker builds a [`RankMachine`] (its own input buffer), listens on every
//!    port and advances the machine: sends go straight to the peer's port as
//!    transferred `ArrayBuffer`s, never through the page.
//! 3. Each chunk that arrives on a port is queued for that peer and the
//!    machine advances again, until it is done. Whenever it stops to wait,
//!    the worker tells the page whom it waits for ([`ToPage::Waiting`]; the
//!    pool's stall watchdog uses it).
//!
//! A test-only [`Fault`] in the init message (never in a normal run) makes
//! this rank throw, close itself, drop or delay a message at its first send
//! at or after the fault's step.
//! 4. The worker posts [`ToPage::Done`] with its samples and its buffer (a
//!    transferred `ArrayBuffer`), closes its ports and idles until the page
//!    terminates it.
//!
//! Any error (undecodable message, schedule mismatch) is posted as
//! [`ToPage::Failed`]; a panic is posted the same way by the panic hook before
//! the wasm traps.

use super::machine::{ChunkHeader, Payload, Progress, RankMachine};
use super::protocol::{
    decode_chunk, decode_to_worker, encode_chunk, encode_to_page, epoch_ms, samples_to_bits, Fault,
    FaultKind, ToPage, ToWorker, Wire,
};
use js_sys::Uint8Array;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

impl Payload for Uint8Array {
    fn byte_len(&self) -> usize {
        self.length() as usize
    }
    fn copy_into(&self, dst: &mut [u8]) {
        self.copy_to(dst);
    }
}

thread_local! {
    /// This worker's rank once known (for the panic hook's report).
    static RANK: Cell<Option<usize>> = const { Cell::new(None) };
    /// Everything the worker keeps alive: its machine, ports and handlers.
    static STATE: RefCell<Option<Rc<Rank>>> = const { RefCell::new(None) };
}

/// A `MessagePort` handler kept alive by the worker.
type PortHandler = Closure<dyn FnMut(MessageEvent)>;

/// A running rank.
struct Rank {
    rank: usize,
    machine: RefCell<Option<RankMachine<Uint8Array>>>,
    ports: HashMap<usize, MessagePort>,
    handlers: RefCell<Vec<PortHandler>>,
    /// The test-only injected fault, until it fires (then `None`).
    fault: Cell<Option<Fault>>,
    /// The highest step this rank has sent or received a chunk of.
    step: Cell<usize>,
}

fn scope() -> Option<DedicatedWorkerGlobalScope> {
    js_sys::global()
        .dyn_into::<DedicatedWorkerGlobalScope>()
        .ok()
}

fn post(scope: &DedicatedWorkerGlobalScope, w: Wire) {
    // postMessage only throws for uncloneable data; ours is plain.
    let _ = scope.post_message_with_transfer(&w.message, &w.transfer);
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
        post_failed(RANK.with(Cell::get), format!("panic: {info}"));
    }));
    let on_init = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        if STATE.with(|s| s.borrow().is_some()) {
            post_failed(RANK.with(Cell::get), "a second init message arrived".into());
            return;
        }
        if let Err(message) = init(&ev.data()) {
            post_failed(RANK.with(Cell::get), message);
        }
    });
    scope.set_onmessage(Some(on_init.as_ref().unchecked_ref()));
    on_init.forget(); // lives as long as the worker
    post(&scope, encode_to_page(&ToPage::Ready, None));
}

fn init(data: &JsValue) -> Result<(), String> {
    let (
        ToWorker::Init {
            rank,
            request,
            peers,
            fault,
        },
        ports,
    ) = decode_to_worker(data).map_err(|e| e.to_string())?;
    RANK.with(|r| r.set(Some(rank)));
    let machine = RankMachine::new(
        &request.schedule,
        rank,
        request.dtype,
        request.op,
        request.seed,
        request.elems,
    )
    .map_err(|e| e.to_string())?;
    let state = Rc::new(Rank {
        rank,
        machine: RefCell::new(Some(machine)),
        ports: peers.iter().copied().zip(ports).collect(),
        handlers: RefCell::new(Vec::new()),
        fault: Cell::new(fault.filter(|f| f.rank == rank)),
        step: Cell::new(0),
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
    state.advance();
    Ok(())
}

impl Rank {
    fn on_chunk(&self, from: usize, data: &JsValue) {
        let (header, bytes): (ChunkHeader, Uint8Array) = match decode_chunk(data) {
            Ok(x) => x,
            Err(e) => return self.fail(format!("message from rank {from}: {e}")),
        };
        // A borrow that is still held means an injected `throw` unwound
        // through `advance` (a JS exception skips Rust destructors): this
        // rank has already failed, so later messages are ignored.
        let Ok(mut slot) = self.machine.try_borrow_mut() else {
            return;
        };
        if let Some(m) = slot.as_mut() {
            self.step.set(self.step.get().max(header.step));
            m.deliver(from, header, bytes);
        } else {
            return; // already done or failed: ignore
        }
        drop(slot);
        self.advance();
    }

    fn advance(&self) {
        let Ok(mut slot) = self.machine.try_borrow_mut() else {
            return;
        };
        let Some(m) = slot.as_mut() else { return };
        let mut missing_port = None;
        let mut killed = false;
        let progress = m.advance(|to, header, bytes| {
            self.step.set(self.step.get().max(header.step));
            if killed {
                return;
            }
            // The test-only fault fires at this rank's first send at or after its step.
            let fault = self.fault.get().filter(|f| header.step >= f.step);
            let mut delay_ms = None;
            if let Some(f) = fault {
                self.fault.set(None);
                match f.kind {
                    FaultKind::Throw => wasm_bindgen::throw_str(&format!(
                        "injected fault: rank {}'s worker throws at step {}",
                        self.rank, header.step
                    )),
                    FaultKind::Kill => {
                        killed = true;
                        return;
                    }
                    FaultKind::Drop => return,
                    FaultKind::Delay { ms } => delay_ms = Some(ms),
                }
            }
            match self.ports.get(&to) {
                Some(port) => {
                    let w = encode_chunk(header, bytes);
                    if let Some(ms) = delay_ms {
                        let port = port.clone();
                        gloo_timers::callback::Timeout::new(ms, move || {
                            let _ = port.post_message_with_transferable(&w.message, &w.transfer);
                        })
                        .forget();
                    } else if let Err(e) =
                        port.post_message_with_transferable(&w.message, &w.transfer)
                    {
                        missing_port.get_or_insert(format!("posting to rank {to} failed: {e:?}"));
                    }
                }
                None => {
                    missing_port.get_or_insert(format!("no port to rank {to}"));
                }
            }
        });
        if killed {
            // As if the browser terminated the worker: it says nothing more.
            slot.take();
            drop(slot);
            if let Some(s) = scope() {
                s.close();
            }
            return;
        }
        if let Some(msg) = missing_port {
            slot.take();
            drop(slot);
            return self.fail(msg);
        }
        match progress {
            Ok(Progress::Waiting { from }) => {
                drop(slot);
                if let Some(s) = scope() {
                    let waiting = ToPage::Waiting {
                        rank: self.rank,
                        from,
                        step: self.step.get(),
                    };
                    post(&s, encode_to_page(&waiting, None));
                }
            }
            Ok(Progress::Done) => {
                let Some(m) = slot.take() else { return };
                drop(slot);
                let (buffer, samples) = m.into_output();
                if let Some(s) = scope() {
                    let done = ToPage::Done {
                        rank: self.rank,
                        samples: samples_to_bits(&samples),
                        finished_ms: epoch_ms(),
                    };
                    post(&s, encode_to_page(&done, Some(&buffer)));
                }
                // Ports stay open: a send posted just now may still be in
                // flight; the page terminates the worker when all ranks are done.
            }
            Err(e) => {
                slot.take();
                drop(slot);
                self.fail(e.to_string());
            }
        }
    }

    fn fail(&self, message: String) {
        if let Ok(mut m) = self.machine.try_borrow_mut() {
            m.take();
        }
        post_failed(Some(self.rank), message);
        self.close();
    }

    fn close(&self) {
        for p in self.ports.values() {
            p.set_onmessage(None);
            p.close();
        }
    }
}
