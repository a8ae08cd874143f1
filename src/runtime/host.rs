//! The ranks one worker hosts, as pure Rust (no web types; compiled natively
//! by `tests/runtime_native.rs`): several [`RankMachine`]s, local delivery
//! between them, and the reports the worker passes on to the page.
//!
//! The worker ([`super::browser::worker`]) feeds every chunk that arrives on a port
//! into [`Host::deliver`] and then calls [`Host::drain`], which advances every
//! rank that may have work until none has: a send to a rank on another worker
//! goes to the `send` callback (which posts it on that worker's port); a send
//! to a rank on this worker goes straight from the sender's buffer into the
//! receiver's when the receiver's next op is that receive
//! ([`RankMachine::receive_now`]: no copy in between), else it is copied
//! once into the receiver's queue (no `postMessage`); either way the
//! receiver is advanced in the same drain. Local
//! messages of a rank pair are queued in send order, remote ones travel on
//! one FIFO port per worker pair, so each receiver sees every peer's messages
//! in order, as [`RankMachine`] requires.

use super::machine::{ChunkHeader, MachineError, Payload, Progress, RankMachine};
use super::placement::{Route, WorkerLayout};
use super::protocol::Routed;
use std::collections::{BTreeMap, VecDeque};
use thiserror::Error;

/// A message's bytes: still on the wire (`P`, a JS `Uint8Array` in the
/// worker) or copied from a rank on the same worker.
#[derive(Debug)]
pub enum Bytes<P> {
    /// Arrived on a port.
    Wire(P),
    /// Sent by a co-hosted rank.
    Local(Vec<u8>),
}

impl<P: Payload> Payload for Bytes<P> {
    fn byte_len(&self) -> usize {
        match self {
            Bytes::Wire(p) => p.byte_len(),
            Bytes::Local(v) => v.len(),
        }
    }
    fn copy_into(&self, dst: &mut [u8]) {
        match self {
            Bytes::Wire(p) => p.copy_into(dst),
            Bytes::Local(v) => dst.copy_from_slice(v),
        }
    }
    fn copy_part_into(&self, offset: usize, dst: &mut [u8]) {
        match self {
            Bytes::Wire(p) => p.copy_part_into(offset, dst),
            Bytes::Local(v) => v.copy_part_into(offset, dst),
        }
    }
    fn as_slice(&self) -> Option<&[u8]> {
        match self {
            Bytes::Wire(p) => p.as_slice(),
            Bytes::Local(v) => Some(v),
        }
    }
}

/// What the `send` callback of [`Host::drain`] did with a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sent {
    /// Taken care of by the callback (posted to the receiver's worker, or
    /// dropped or deferred by a test-only fault).
    Handled,
    /// Deliver it to the co-hosted receiver now (only for [`Route::Local`]).
    Local,
    /// Deliver these bytes instead to the co-hosted receiver now (only for
    /// [`Route::Local`]; the test-only `corrupt` fault).
    LocalBytes(Vec<u8>),
    /// Stop this worker at once (a test-only `kill`): every hosted rank is
    /// abandoned and nothing more is reported.
    Halt,
}

/// What a drain has to tell the page, in order.
#[derive(Debug, PartialEq)]
pub enum Report {
    /// `rank` finished: its final buffer and sample rows
    /// ([`RankMachine::into_output`]).
    Done {
        /// The rank.
        rank: usize,
        /// Final buffer (little-endian elements).
        buffer: Vec<u8>,
        /// Sample rows.
        samples: Vec<Vec<Option<f64>>>,
    },
    /// `rank` advanced as far as it can and waits for rank `from`; `step` is
    /// the highest step it has sent or received a chunk of.
    Waiting {
        /// The rank.
        rank: usize,
        /// The rank it waits for.
        from: usize,
        /// Its highest step so far.
        step: usize,
    },
    /// `rank` failed; the host stops (every hosted rank is abandoned).
    Failed {
        /// The rank.
        rank: usize,
        /// Why, for the page.
        message: String,
    },
    /// The `send` callback returned [`Sent::Halt`]; the host stopped.
    Halted,
}

/// Why a host cannot be built or a message not delivered. Never a panic.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum HostError {
    /// The layout gives this worker no rank.
    #[error("worker {worker} hosts no rank of the run")]
    NoRanks {
        /// The worker.
        worker: usize,
    },
    /// A hosted rank's machine could not be built.
    #[error("rank {rank}: {error}")]
    Machine {
        /// The rank.
        rank: usize,
        /// Why.
        error: MachineError,
    },
    /// A message arrived for a rank this worker does not host, or from a
    /// rank that is not in the run.
    #[error("a chunk from rank {from} to rank {to} arrived at worker {worker}, which does not host rank {to}")]
    NotHosted {
        /// Sender.
        from: usize,
        /// Receiver.
        to: usize,
        /// This worker.
        worker: usize,
    },
}

/// One hosted rank: its machine until done/failed, its highest step.
#[derive(Debug)]
struct Slot<P> {
    rank: usize,
    machine: Option<RankMachine<Bytes<P>>>,
    step: usize,
}

/// The ranks of one worker.
#[derive(Debug)]
pub struct Host<P> {
    layout: WorkerLayout,
    worker: usize,
    slots: Vec<Slot<P>>,
    /// rank -> index in `slots`.
    index: BTreeMap<usize, usize>,
    /// Slots that may be able to advance, each at most once.
    ready: VecDeque<usize>,
    queued: Vec<bool>,
    /// After a failure or a halt: ignore everything.
    stopped: bool,
}

impl<P: Payload> Host<P> {
    /// Hosts the ranks `layout` gives `worker`, each machine made by
    /// `build(rank)` (the worker passes [`RankMachine::new`] with the run's
    /// request). Every rank starts ready to advance.
    ///
    /// Errors: [`HostError::NoRanks`] if the worker has no rank,
    /// [`HostError::Machine`] if a machine cannot be built.
    pub fn new(
        layout: WorkerLayout,
        worker: usize,
        mut build: impl FnMut(usize) -> Result<RankMachine<Bytes<P>>, MachineError>,
    ) -> Result<Host<P>, HostError> {
        let ranks = layout.ranks_of(worker);
        if ranks.is_empty() {
            return Err(HostError::NoRanks { worker });
        }
        let mut slots = Vec::with_capacity(ranks.len());
        for &rank in &ranks {
            let machine = build(rank).map_err(|error| HostError::Machine { rank, error })?;
            slots.push(Slot {
                rank,
                machine: Some(machine),
                step: 0,
            });
        }
        Ok(Host {
            index: ranks.iter().enumerate().map(|(i, &r)| (r, i)).collect(),
            ready: (0..slots.len()).collect(),
            queued: vec![true; slots.len()],
            slots,
            layout,
            worker,
            stopped: false,
        })
    }

    /// The hosted ranks, ascending.
    pub fn ranks(&self) -> Vec<usize> {
        self.slots.iter().map(|s| s.rank).collect()
    }

    /// This worker's index.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// The run's worker layout.
    pub fn layout(&self) -> &WorkerLayout {
        &self.layout
    }

    /// True once every hosted rank is done, or the host stopped.
    pub fn is_finished(&self) -> bool {
        self.stopped || self.slots.iter().all(|s| s.machine.is_none())
    }

    /// Queues a chunk that arrived from another worker (or, deferred by a
    /// test-only delay, from this one) for its receiver, which the next
    /// [`Host::drain`] advances. A chunk for a rank that already finished is
    /// ignored (its machine reported any leftover when it finished).
    ///
    /// Errors: [`HostError::NotHosted`] if `msg.to` is not hosted here or
    /// `msg.from` is not a rank of the run.
    pub fn deliver(&mut self, msg: Routed, payload: Bytes<P>) -> Result<(), HostError> {
        let not_hosted = HostError::NotHosted {
            from: msg.from,
            to: msg.to,
            worker: self.worker,
        };
        let Some(&i) = self.index.get(&msg.to) else {
            return Err(not_hosted);
        };
        if msg.from >= self.layout.ranks() || msg.from == msg.to {
            return Err(not_hosted);
        }
        if self.stopped {
            return Ok(());
        }
        let slot = &mut self.slots[i];
        if let Some(m) = slot.machine.as_mut() {
            slot.step = slot.step.max(msg.chunk.step);
            m.deliver(msg.from, msg.chunk, payload);
            self.mark(i);
        }
        Ok(())
    }

    fn mark(&mut self, i: usize) {
        if !self.queued[i] {
            self.queued[i] = true;
            self.ready.push_back(i);
        }
    }

    /// Advances every rank that may have work until none has. Each send
    /// calls `send(header, route, bytes)` with the chunk as it is now; for a
    /// [`Route::Local`] send, returning [`Sent::Local`] copies it into the
    /// co-hosted receiver's queue. Returns what to tell the page: every
    /// rank that finished ([`Report::Done`]), then one [`Report::Waiting`]
    /// per rank that was advanced and now waits; or, if a rank failed or the
    /// callback returned [`Sent::Halt`] / an error, the reports up to then
    /// and [`Report::Failed`] / [`Report::Halted`] (the host then stops).
    pub fn drain(
        &mut self,
        mut send: impl FnMut(Routed, Route, &[u8]) -> Result<Sent, String>,
    ) -> Vec<Report> {
        let mut reports = Vec::new();
        let mut waits: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        while let Some(i) = self.ready.pop_front() {
            self.queued[i] = false;
            if self.stopped {
                break;
            }
            let rank = self.slots[i].rank;
            let Some(mut m) = self.slots[i].machine.take() else {
                continue;
            };
            let mut local: Vec<(Routed, Vec<u8>)> = Vec::new();
            // Co-hosted receivers that took a chunk straight from `m`'s buffer.
            let mut received: Vec<usize> = Vec::new();
            let mut outcome: Result<(), Result<Sent, String>> = Ok(());
            let mut step = self.slots[i].step;
            let (layout, index, slots) = (&self.layout, &self.index, &mut self.slots);
            let progress = m.advance(|to, chunk: ChunkHeader, bytes| {
                step = step.max(chunk.step);
                if outcome.is_err() {
                    return;
                }
                let msg = Routed {
                    from: rank,
                    to,
                    chunk,
                };
                let Some(route) = layout.route(rank, to) else {
                    outcome = Err(Err(format!("rank {rank} sends to rank {to}, not in the run")));
                    return;
                };
                match send(msg, route, bytes) {
                    Ok(Sent::Handled) => {}
                    Ok(Sent::Local) if route == Route::Local => {
                        // Straight into the receiver if it is waiting for
                        // exactly this chunk (and nothing of ours for it is
                        // pending), else a copy queued for it.
                        let j = index.get(&to).copied().filter(|_| {
                            local.iter().all(|(m, _)| m.to != to)
                        });
                        let took = match j.map(|j| &mut slots[j]) {
                            Some(Slot {
                                machine: Some(r),
                                step: s,
                                ..
                            }) => {
                                let took = r.receive_now(rank, chunk, bytes);
                                if took {
                                    *s = (*s).max(chunk.step);
                                }
                                took
                            }
                            _ => false,
                        };
                        if took {
                            received.extend(j);
                        } else {
                            local.push((msg, bytes.to_vec()));
                        }
                    }
                    Ok(Sent::LocalBytes(v)) if route == Route::Local => local.push((msg, v)),
                    Ok(Sent::Local | Sent::LocalBytes(_)) => {
                        outcome = Err(Err(format!(
                            "rank {rank}'s chunk for rank {to} cannot be delivered locally: rank {to} is on another worker"
                        )))
                    }
                    Ok(Sent::Halt) => outcome = Err(Ok(Sent::Halt)),
                    Err(e) => outcome = Err(Err(e)),
                }
            });
            self.slots[i].step = step;
            match outcome {
                Err(Ok(_halt)) => {
                    self.stop();
                    reports.push(Report::Halted);
                    return reports;
                }
                Err(Err(message)) => {
                    self.stop();
                    reports.push(Report::Failed { rank, message });
                    return reports;
                }
                Ok(()) => {}
            }
            match progress {
                Ok(Progress::Waiting { from }) => {
                    self.slots[i].machine = Some(m);
                    waits.insert(rank, (from, step));
                }
                Ok(Progress::Done) => {
                    waits.remove(&rank);
                    let (buffer, samples) = m.into_output();
                    reports.push(Report::Done {
                        rank,
                        buffer,
                        samples,
                    });
                }
                Err(e) => {
                    self.stop();
                    reports.push(Report::Failed {
                        rank,
                        message: e.to_string(),
                    });
                    return reports;
                }
            }
            for j in received {
                self.mark(j);
            }
            for (msg, bytes) in local {
                // The receiver is hosted here (`Route::Local`), so this cannot fail.
                if let Err(e) = self.deliver(msg, Bytes::Local(bytes)) {
                    self.stop();
                    reports.push(Report::Failed {
                        rank,
                        message: e.to_string(),
                    });
                    return reports;
                }
            }
        }
        reports.extend(waits.into_iter().filter_map(|(rank, (from, step))| {
            // Still waiting at the end of the drain (a later local message
            // may have let it advance further and report again).
            let i = self.index[&rank];
            self.slots[i]
                .machine
                .is_some()
                .then_some(Report::Waiting { rank, from, step })
        }));
        reports
    }

    /// Abandons every hosted rank (after a failure or a halt).
    fn stop(&mut self) {
        self.stopped = true;
        for s in &mut self.slots {
            s.machine = None;
        }
        self.ready.clear();
    }
}
