//! The MPI adapter of the runtime (native, cargo feature `mpi`): each MPI
//! process is one rank, driving the same [`RankMachine`] the web workers
//! drive, with real chunks on nonblocking point-to-point messages.
//!
//! ## One step at a time, every transfer of it in flight
//! [`StepDriver::run`] walks the rank's receive steps in order. For each:
//! 1. post an `MPI_Irecv` for every receive of the step (tag = step mod
//!    [`TAG_MODULUS`]), each into a receive buffer the driver keeps across
//!    steps and iterations ([`std::rc::Rc`]`<Vec<u8>>`, reused once the
//!    machine has consumed it, so nothing is allocated per message);
//! 2. post an `MPI_Isend` for every send the machine has emitted since the
//!    last step (its own sends of this step and of idle steps before it),
//!    straight from the rank's buffer ([`RankMachine::advance_ranges`]: no
//!    copy; the machine does not write the buffer until the next advance,
//!    and every send completes before it);
//! 3. poll the whole set (`MPI_Testany`) until done, or until the timeout,
//!    then `MPI_Abort` with a message naming the rank, the step and the
//!    peers it still waits for (a peer that died, hangs or lost a message:
//!    never a silent hang);
//! 4. deliver the received chunks in the schedule's order and advance: the
//!    machine applies them (`Copy`: one copy into the buffer; `Reduce`: the
//!    [`crate::engine::dtype::reduce_into`] kernel reading the receive
//!    buffer in place) and emits the next step's sends.
//!
//! Messages of a rank pair match in order (MPI's non-overtaking rule within
//! a tag) and both ends walk the schedule in the same order, so each receive
//! gets the chunk it expects; its length is checked against the schedule.
//! Sends never wait for receives of a later step, so the walk cannot
//! deadlock on a verified schedule.
//!
//! A test-only [`Fault`] (`--fault KIND:rank=R:step=K`) makes rank `R`
//! misbehave at its first send at a step `>= K`: `kill` exits the process
//! (mpirun then ends the job), `throw` panics, `drop` never sends (the
//! receiver's timeout fires), `delay` sends `ms` late, `corrupt` sends the
//! chunk with its first byte flipped (the receiver's check names it).

use super::fault::{Fault, FaultKind};
use super::machine::{ChunkHeader, MachineError, Progress, RankMachine};
use crate::engine::dtype::DType;
use crate::engine::schedule::{RankOp, Schedule};
pub mod library;

use mpi::request::multiple_scope;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::ops::Range;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Message tags are the step modulo this (MPI guarantees tags up to 32767).
pub const TAG_MODULUS: usize = 32768;

/// Polls of a step's requests before each further poll yields the core
/// (only when [`oversubscribed`]).
pub const SPIN_POLLS: u32 = 1024;

/// The exit code of a rank that gives up waiting (after `MPI_Abort`,
/// mpirun exits with it).
pub const TIMEOUT_EXIT: i32 = 3;

/// One line on stderr in one write (mpirun forwards every rank's stderr;
/// a line written in pieces interleaves with other ranks' lines).
pub fn say(line: String) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// The tag of a step's messages.
fn tag(step: usize) -> i32 {
    (step % TAG_MODULUS) as i32
}

/// One receive of a step: from whom, which chunks, how many bytes.
#[derive(Clone, Debug)]
struct Recv {
    from: usize,
    header: ChunkHeader,
    bytes: usize,
}

/// Drives one rank's [`RankMachine`] over MPI, step by step (module doc).
/// Built once per (schedule, rank, size) and reused for every iteration.
pub struct StepDriver {
    /// The steps in which this rank receives, in order, with their receives.
    steps: Vec<(usize, Vec<Recv>)>,
    /// Receive buffers, one per receive of the widest step.
    buffers: Vec<Rc<Vec<u8>>>,
    /// The sends emitted and not yet posted: (to, header, byte range).
    sends: Vec<(usize, ChunkHeader, Range<usize>)>,
    /// A corrupted copy of a chunk (test-only `corrupt` fault).
    corrupt: Vec<u8>,
    /// More ranks on this host than cores ([`oversubscribed`]).
    oversubscribed: bool,
}

/// Are there more ranks on this host than cores? From the launcher's
/// environment (`OMPI_COMM_WORLD_LOCAL_SIZE`, Open MPI; `MPI_LOCALNRANKS`,
/// MPICH) against `std::thread::available_parallelism`; false if unknown.
pub fn oversubscribed() -> bool {
    let local = ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.trim().parse::<usize>().ok());
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    local.is_some_and(|l| l > cores)
}

/// Why a rank's run failed (the timeout aborts the job instead).
#[derive(Debug)]
pub enum DriveError {
    /// The machine refused a message or could not run.
    Machine(MachineError),
    /// A message arrived with another length than the schedule's.
    Length {
        /// The sender.
        from: usize,
        /// The step.
        step: usize,
        /// Bytes expected.
        want: usize,
        /// Bytes received.
        got: usize,
    },
    /// The machine still waits after the last receive step (a bug).
    Stuck {
        /// The peer it waits for.
        from: usize,
    },
}

impl std::fmt::Display for DriveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriveError::Stuck { from } => write!(
                f,
                "the rank still waits for rank {from} after its last receive step"
            ),
            DriveError::Machine(e) => write!(f, "{e}"),
            DriveError::Length {
                from,
                step,
                want,
                got,
            } => write!(
                f,
                "from rank {from}: step {step} should carry {want} bytes, got {got}"
            ),
        }
    }
}

impl From<MachineError> for DriveError {
    fn from(e: MachineError) -> Self {
        DriveError::Machine(e)
    }
}

impl StepDriver {
    /// The driver of rank `rank` of `schedule` for messages of `elems`
    /// elements of `dtype` (the receive plan: every receive's step, peer and
    /// byte length, from [`Schedule::rank_ops`]).
    pub fn new(schedule: &Schedule, rank: usize, dtype: DType, elems: usize) -> StepDriver {
        let es = dtype.size_bytes();
        let mut steps: Vec<(usize, Vec<Recv>)> = Vec::new();
        for op in schedule.rank_ops(rank) {
            if let RankOp::Recv {
                step,
                from,
                first,
                count,
                ..
            } = op
            {
                if from == rank {
                    // A local copy / reduce: the machine does it itself.
                    continue;
                }
                let bytes = schedule.range_elems(elems, first, count).len() * es;
                let recv = Recv {
                    from,
                    header: ChunkHeader { step, first, count },
                    bytes,
                };
                match steps.last_mut() {
                    Some((s, list)) if *s == step => list.push(recv),
                    _ => steps.push((step, vec![recv])),
                }
            }
        }
        let widest = steps.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
        StepDriver {
            steps,
            buffers: (0..widest).map(|_| Rc::new(Vec::new())).collect(),
            sends: Vec::new(),
            corrupt: Vec::new(),
            oversubscribed: oversubscribed(),
        }
    }

    /// Runs `machine` (a fresh machine of this driver's rank) to the end
    /// over `world`. A wait longer than `timeout` prints a message naming
    /// this rank, the step and the peers it waits for, and aborts the job
    /// (`MPI_Abort`, exit code [`TIMEOUT_EXIT`]). `fault` is the test-only
    /// fault (module doc), `None` in normal runs; it is taken when it fires.
    ///
    /// Errors: [`DriveError`] (a message that is not what the schedule
    /// says; never for a verified schedule between healthy ranks).
    pub fn run(
        &mut self,
        world: &SimpleCommunicator,
        machine: &mut RankMachine<Rc<Vec<u8>>>,
        timeout: Duration,
        fault: &mut Option<Fault>,
    ) -> Result<(), DriveError> {
        let me = machine.rank();
        let sends = &mut self.sends;
        sends.clear();
        let mut progress = machine.advance_ranges(|to, h, r| sends.push((to, h, r)))?;
        let mut next = 0;
        loop {
            let recvs: &[Recv] = match self.steps.get(next) {
                Some((_, l)) => l,
                None => &[],
            };
            if recvs.is_empty() && self.sends.is_empty() {
                break;
            }
            for (buf, r) in self.buffers.iter_mut().zip(recvs) {
                if Rc::get_mut(buf).is_none() {
                    *buf = Rc::new(Vec::new()); // still held: never for a drained machine
                }
                let b = Rc::get_mut(buf).expect("a fresh Rc is unique");
                b.resize(r.bytes, 0);
            }
            // The test-only fault, at this rank's first send at or after its step.
            let mut dropped = None;
            let mut corrupted = None;
            if let Some(f) = fault.filter(|f| f.rank == me) {
                if let Some(i) = self.sends.iter().position(|s| s.1.step >= f.step) {
                    *fault = None;
                    let step = self.sends[i].1.step;
                    match f.kind {
                        FaultKind::Kill => {
                            say(format!(
                                "cclrun: injected fault: rank {me} exits at step {step} (as if it died)"
                            ));
                            std::process::exit(1);
                        }
                        FaultKind::Throw => {
                            panic!("injected fault: rank {me} panics at step {step}")
                        }
                        FaultKind::Drop => dropped = Some(i),
                        FaultKind::Delay { ms } => {
                            std::thread::sleep(Duration::from_millis(ms as u64))
                        }
                        FaultKind::Corrupt => {
                            let r = self.sends[i].2.clone();
                            self.corrupt.clear();
                            self.corrupt.extend_from_slice(&machine.buffer()[r]);
                            if let Some(b) = self.corrupt.first_mut() {
                                *b ^= 0xFF;
                            }
                            corrupted = Some(i);
                        }
                    }
                }
            }
            let buffer = machine.buffer();
            let corrupt = &self.corrupt;
            let sends = &self.sends;
            let oversubscribed = self.oversubscribed;
            let nrecv = recvs.len();
            let got = multiple_scope(nrecv + sends.len(), |scope, coll| {
                for (buf, r) in self.buffers.iter_mut().zip(recvs) {
                    let b: &mut [u8] = Rc::get_mut(buf).expect("unique, checked above");
                    coll.add(
                        world
                            .process_at_rank(r.from as i32)
                            .immediate_receive_into_with_tag(scope, b, tag(r.header.step)),
                    );
                }
                for (i, (to, h, r)) in sends.iter().enumerate() {
                    if dropped == Some(i) {
                        continue;
                    }
                    let data: &[u8] = if corrupted == Some(i) {
                        corrupt
                    } else {
                        &buffer[r.clone()]
                    };
                    coll.add(world.process_at_rank(*to as i32).immediate_send_with_tag(
                        scope,
                        data,
                        tag(h.step),
                    ));
                }
                let mut lengths = vec![0usize; nrecv];
                let deadline = Instant::now() + timeout;
                let mut polls = 0u32;
                while coll.incomplete() > 0 {
                    // MPI_Testany, not test_some: rsmpi 0.8's test_some reads
                    // the statuses at the request's index, where
                    // MPI_Testsome packs them from 0.
                    if let Some((i, status, _)) = coll.test_any() {
                        if i < nrecv {
                            lengths[i] = status.count(u8::equivalent_datatype()).max(0) as usize;
                        }
                    }
                    polls = polls.wrapping_add(1);
                    // Oversubscribed (more ranks here than cores): spin a
                    // little, then leave the core to the peers. Otherwise
                    // keep it, as MPI's own progress loop does.
                    if oversubscribed && polls > SPIN_POLLS {
                        std::thread::yield_now();
                    }
                    if polls % 64 == 0 && Instant::now() > deadline {
                        let step = recvs
                            .first()
                            .map(|r| r.header.step)
                            .or_else(|| sends.first().map(|s| s.1.step))
                            .unwrap_or(0);
                        let mut peers: Vec<usize> = recvs.iter().map(|r| r.from).collect();
                        peers.dedup();
                        say(format!(
                            "cclrun: rank {me}: no progress for {} ms at step {step} (receiving from rank(s) {peers:?}, sending to rank(s) {:?}): a peer died, hangs or lost a message; aborting the job (--timeout-ms)",
                            timeout.as_millis(),
                            sends.iter().map(|s| s.0).collect::<Vec<_>>()
                        ));
                        world.abort(TIMEOUT_EXIT);
                    }
                }
                lengths
            });
            for ((buf, r), len) in self.buffers.iter().zip(recvs).zip(got) {
                if len != r.bytes {
                    return Err(DriveError::Length {
                        from: r.from,
                        step: r.header.step,
                        want: r.bytes,
                        got: len,
                    });
                }
                machine.deliver(r.from, r.header, buf.clone());
            }
            if !recvs.is_empty() {
                next += 1;
            }
            let sends = &mut self.sends;
            sends.clear();
            progress = machine.advance_ranges(|to, h, r| sends.push((to, h, r)))?;
        }
        match progress {
            Progress::Done => Ok(()),
            // Unreachable: every receive of the rank has its step above.
            Progress::Waiting { from } => Err(DriveError::Stuck { from }),
        }
    }
}
