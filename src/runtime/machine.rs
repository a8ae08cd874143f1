//! The rank state machine: one rank's part of a [`Schedule`], driven by
//! arriving messages, with no web types in it.
//!
//! A worker hosts one [`RankMachine`] per rank of its block
//! ([`super::host::Host`]); it feeds every chunk for a rank (from a peer
//! worker's port, or from a co-hosted rank) into [`RankMachine::deliver`]
//! and then calls [`RankMachine::advance`], which performs the rank's ops
//! ([`Schedule::rank_ops`]) in order until it must wait for a message that
//! has not arrived yet, or until the rank is done. Sends never block: they are
//! handed to a callback (the host queues them locally or the worker posts
//! them to the receiving worker's port).
//!
//! Semantics are those of [`crate::engine::execute`]: per step all sends first
//! (they read the buffer as it was at the start of the step), then the
//! receives in listed order (`Copy` overwrites, `Reduce` is
//! [`reduce_into`]). Messages between a pair of ranks arrive in order (one
//! FIFO per peer) and both sides walk the schedule in the same order, so the
//! next message from a peer is always the one the next receive from that peer
//! expects; its `(step, first, count)` header is checked anyway.
//!
//! This module is pure Rust (it compiles natively; see
//! `tests/runtime_native.rs`), generic over the payload type so that the
//! worker can copy bytes straight out of a JS `ArrayBuffer`.

use crate::engine::compressed::{self, CompressedSetup, Placement, WireError};
use crate::engine::dtype::{post_op, reduce_into, DType, ReduceOp};
use crate::engine::execute::{initial_buffer_with_progress, post_op_chunks, pre_op_rank};
use crate::engine::quantization::Compression;
use crate::engine::schedule::{BadTransfer, RankOp, Schedule, TransferKind};
use std::collections::{HashMap, VecDeque};
use thiserror::Error;

/// Which chunks a message carries: the sender's chunks `[first, first +
/// count)` of `step` (the receiver places them where its schedule says,
/// [`RankOp::Recv::at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChunkHeader {
    /// The step (index into `Schedule::steps`) the transfer belongs to.
    pub step: usize,
    /// First chunk index.
    pub first: usize,
    /// Number of consecutive chunks.
    pub count: usize,
}

/// The bytes of a received message, wherever they live (a `Vec<u8>` in
/// tests, a JS `Uint8Array` in the worker).
pub trait Payload {
    /// Length in bytes.
    fn byte_len(&self) -> usize;
    /// Copies all bytes into `dst`; the machine guarantees
    /// `dst.len() == self.byte_len()`.
    fn copy_into(&self, dst: &mut [u8]);
    /// Copies the `dst.len()` bytes at `offset` into `dst`; the machine
    /// guarantees `offset + dst.len() <= self.byte_len()`. A `Reduce` of
    /// bytes elsewhere ([`Self::as_slice`] is `None`) reads them this way,
    /// [`RECV_PIECE_BYTES`] at a time, into a scratch that stays in cache.
    fn copy_part_into(&self, offset: usize, dst: &mut [u8]);
    /// The bytes as one slice in this process's memory, if they are (then a
    /// `Reduce` reads them in place instead of copying them to scratch
    /// first); `None` (the default) for bytes elsewhere (JS memory).
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }
}

impl Payload for Vec<u8> {
    fn byte_len(&self) -> usize {
        self.len()
    }
    fn copy_into(&self, dst: &mut [u8]) {
        dst.copy_from_slice(self);
    }
    fn copy_part_into(&self, offset: usize, dst: &mut [u8]) {
        dst.copy_from_slice(&self[offset..offset + dst.len()]);
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

/// A shared receive buffer: the MPI runner receives into buffers it keeps
/// and reuses across iterations (`Rc::get_mut` once the machine has
/// consumed its clone), so no buffer is allocated per message.
impl Payload for std::rc::Rc<Vec<u8>> {
    fn byte_len(&self) -> usize {
        self.len()
    }
    fn copy_into(&self, dst: &mut [u8]) {
        dst.copy_from_slice(self);
    }
    fn copy_part_into(&self, offset: usize, dst: &mut [u8]) {
        dst.copy_from_slice(&self[offset..offset + dst.len()]);
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

/// How many bytes of a received message a `Reduce` copies into scratch and
/// reduces at a time when the bytes are not in this memory (a JS
/// `ArrayBuffer` in the worker): small enough that the scratch stays in the
/// core's cache between the copy and the reduce, so the message crosses
/// memory once instead of being written out to a message-sized scratch and
/// read back; a multiple of every element size and of 16 (the SIMD128
/// vector), so the pieces reduce to the same bits as the whole.
pub const RECV_PIECE_BYTES: usize = 128 * 1024;

/// Why a rank cannot run its part of the schedule. Never a panic.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MachineError {
    /// The schedule does not have this rank.
    #[error("rank {rank} is not in the schedule (it has {ranks} ranks)")]
    NoSuchRank { rank: usize, ranks: usize },
    /// `chunks` is zero or not a multiple of the primitive's blocks, or the
    /// root is not a rank.
    #[error("schedule has {chunks} chunks for {ranks} ranks (root {root}); chunks must be a positive multiple of the {blocks} blocks and the root a rank")]
    BadChunks {
        chunks: usize,
        ranks: usize,
        blocks: usize,
        root: usize,
    },
    /// The buffer size overflows memory (`elems * dtype size`).
    #[error("a buffer of {elems} {dtype} elements does not fit in memory")]
    TooLarge { elems: usize, dtype: DType },
    /// A transfer of this rank names a rank or chunk outside the schedule,
    /// moves no chunk, or lands in chunks of another size
    /// ([`Schedule::check_transfer`]).
    #[error(transparent)]
    BadTransfer(#[from] BadTransfer),
    /// The next message from `from` is not the one the schedule expects.
    #[error("from rank {from}: expected step {want_step} chunks {want_first}+{want_count}, got step {got_step} chunks {got_first}+{got_count}")]
    Mismatch {
        from: usize,
        want_step: usize,
        want_first: usize,
        want_count: usize,
        got_step: usize,
        got_first: usize,
        got_count: usize,
    },
    /// The message has the right header but the wrong number of bytes.
    #[error(
        "from rank {from}: step {step} chunks {first}+{count} should be {want} bytes, got {got}"
    )]
    PayloadLength {
        from: usize,
        step: usize,
        first: usize,
        count: usize,
        want: usize,
        got: usize,
    },
    /// A compressed payload could not be encoded or decoded.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A buffer handed to [`RankMachine::with_buffer`] has the wrong length.
    #[error("the initial buffer has {got} bytes; the schedule needs {want}")]
    BufferLength { want: usize, got: usize },
    /// [`RankMachine::advance_ranges`] on a compressed machine (its sends
    /// are encoded copies, not ranges of the buffer).
    #[error("a compressed rank's sends are encoded copies, not buffer ranges")]
    RangesWithCodec,
    /// Messages arrived that the schedule never receives.
    #[error("{count} unexpected message(s) left from rank {from} when the rank finished")]
    Leftover { from: usize, count: usize },
}

/// What [`RankMachine::advance`] stopped at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The next op receives from this rank, and no message from it is queued.
    Waiting {
        /// The peer whose message is awaited.
        from: usize,
    },
    /// Every op is done; [`RankMachine::into_output`] gives the result.
    Done,
}

/// One rank executing its part of a schedule on its own buffer.
#[derive(Debug)]
pub struct RankMachine<P> {
    rank: usize,
    dtype: DType,
    op: ReduceOp,
    steps: usize,
    chunk_ranges: Vec<std::ops::Range<usize>>,
    ops: Vec<RankOp>,
    next: usize,
    buffer: Vec<u8>,
    scratch: Vec<u8>,
    queues: HashMap<usize, VecDeque<(ChunkHeader, P)>>,
    samples: Vec<Vec<Option<f64>>>,
    /// Chunks sampled per row: the collective's, not scratch.
    sampled: usize,
    /// Local transfers (`src == dst`): sent to itself, in order.
    local: VecDeque<(ChunkHeader, Vec<u8>)>,
    /// Hop compression: every payload is encoded on send, decoded on receive.
    codec: Option<Compression>,
    /// Once compression: after the AllGather of compressed inputs, the
    /// local reduce that makes the output.
    once: Option<OnceFinish>,
    wire: Vec<u8>,
    /// The reduce op's post-operation (`avg` on integers: `/ ranks`), on
    /// these chunks, once, when the last op is done
    /// ([`post_op_chunks`]); emptied when applied.
    post: Vec<usize>,
    ranks: usize,
}

/// The local step of `placement=once` ([`compressed::once_reduce`]).
#[derive(Clone, Copy, Debug)]
struct OnceFinish {
    compression: Compression,
    dtype: DType,
    op: ReduceOp,
    ranks: usize,
    elems: usize,
}

impl<P: Payload> RankMachine<P> {
    /// Builds rank `rank`'s machine: its initial buffer
    /// ([`crate::engine::execute::initial_buffer`] of `elems` elements of `dtype` from `seed`), its op
    /// list and the first sample row.
    ///
    /// Errors: [`MachineError`] if the rank, chunk count, buffer size or one
    /// of this rank's transfers does not fit the schedule.
    pub fn new(
        schedule: &Schedule,
        rank: usize,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
    ) -> Result<Self, MachineError> {
        Self::new_with_progress(schedule, rank, dtype, op, seed, elems, &mut || {})
    }

    /// [`Self::new`], calling `progress` after each piece of the input
    /// ([`crate::engine::execute::FILL_PIECE_ELEMS`] elements): a browser worker builds 64 MiB and
    /// more of input in one handler and must say it is alive meanwhile (its
    /// heartbeat), or the page's stall watchdog takes its silence for a
    /// dead worker (seen on a loaded 2-core machine: "no progress for
    /// 1671 ms", a healthy worker building its inputs).
    ///
    /// Errors: as [`Self::new`].
    pub fn new_with_progress(
        schedule: &Schedule,
        rank: usize,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
        progress: &mut dyn FnMut(),
    ) -> Result<Self, MachineError> {
        Self::build(schedule, rank, dtype, op, elems, || {
            Ok(initial_buffer_with_progress(
                schedule, dtype, seed, rank, elems, progress,
            ))
        })
    }

    /// As [`Self::new`], starting from `buffer` instead of making the
    /// input: a repeated run (the MPI runner's timed iterations) keeps one
    /// [`crate::engine::execute::initial_buffer`] and hands each iteration a copy of it, so inputs
    /// are generated once. `buffer` must be
    /// [`Schedule::buffer_elems`]`(elems)` elements of `dtype`.
    ///
    /// Errors: as [`Self::new`], and [`MachineError::BufferLength`].
    pub fn with_buffer(
        schedule: &Schedule,
        rank: usize,
        dtype: DType,
        op: ReduceOp,
        elems: usize,
        buffer: Vec<u8>,
    ) -> Result<Self, MachineError> {
        Self::build(schedule, rank, dtype, op, elems, || {
            let want = schedule.buffer_elems(elems) * dtype.size_bytes();
            if buffer.len() != want {
                return Err(MachineError::BufferLength {
                    want,
                    got: buffer.len(),
                });
            }
            Ok(buffer)
        })
    }

    fn build(
        schedule: &Schedule,
        rank: usize,
        dtype: DType,
        op: ReduceOp,
        elems: usize,
        buffer: impl FnOnce() -> Result<Vec<u8>, MachineError>,
    ) -> Result<Self, MachineError> {
        let ranks = schedule.ranks;
        if rank >= ranks {
            return Err(MachineError::NoSuchRank { rank, ranks });
        }
        let blocks = schedule.blocks();
        if schedule.chunks == 0
            || blocks == 0
            || schedule.chunks % blocks != 0
            || schedule.root >= ranks
        {
            return Err(MachineError::BadChunks {
                chunks: schedule.chunks,
                ranks,
                blocks,
                root: schedule.root,
            });
        }
        let total = elems
            .checked_mul(2)
            .and_then(|e| e.checked_mul(dtype.size_bytes()));
        if total.is_none_or(|b| b > isize::MAX as usize / 2) {
            return Err(MachineError::TooLarge { elems, dtype });
        }
        for (step, s) in schedule.steps.iter().enumerate() {
            for (index, t) in s.transfers.iter().enumerate() {
                if t.src == rank || t.dst == rank {
                    schedule.check_transfer(step, index, Some(elems))?;
                }
            }
        }
        let chunk_ranges = (0..schedule.total_chunks())
            .map(|c| schedule.chunk_elems(elems, c))
            .collect();
        let mut buffer = buffer()?;
        pre_op_rank(schedule, dtype, op, &mut buffer);
        let mut m = RankMachine {
            rank,
            dtype,
            op,
            steps: schedule.steps.len(),
            chunk_ranges,
            ops: schedule.rank_ops(rank),
            next: 0,
            buffer,
            scratch: Vec::new(),
            queues: HashMap::new(),
            samples: Vec::with_capacity(schedule.steps.len() + 1),
            sampled: schedule.chunks,
            local: VecDeque::new(),
            codec: None,
            once: None,
            wire: Vec::new(),
            post: post_op_chunks(schedule, dtype, op, rank),
            ranks,
        };
        m.record();
        Ok(m)
    }

    /// Rank `rank`'s machine for a run with compressed transfers
    /// ([`compressed`]): the message is `elems` elements of `dtype` with
    /// gradient-like inputs from `seed`.
    /// - [`Placement::Hop`]: `schedule` is the collective's; every payload
    ///   is encoded on send and decoded on receive.
    /// - [`Placement::Once`]: `schedule` is the AllGather run over the
    ///   compressed inputs (int8 "elements", `ranks ·`
    ///   [`compressed::wire_len`]`(elems)` of them); [`Self::into_output`]
    ///   then decodes and reduces them locally.
    ///
    /// Errors: as [`Self::new`], and [`MachineError::Wire`] for a dtype or
    /// primitive the setup does not apply to.
    pub fn compressed(
        schedule: &Schedule,
        rank: usize,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
        setup: &CompressedSetup,
    ) -> Result<Self, MachineError> {
        Self::compressed_with_progress(schedule, rank, dtype, op, seed, elems, setup, &mut || {})
    }

    /// [`Self::compressed`], calling `progress` after each piece of the
    /// gradient input (`Placement::Hop`) or once the encoded input is made
    /// (`Placement::Once`), as [`Self::new_with_progress`].
    ///
    /// Errors: as [`Self::compressed`].
    #[allow(clippy::too_many_arguments)]
    pub fn compressed_with_progress(
        schedule: &Schedule,
        rank: usize,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
        setup: &CompressedSetup,
        progress: &mut dyn FnMut(),
    ) -> Result<Self, MachineError> {
        if !dtype.is_float() {
            return Err(WireError::NotFloat(dtype).into());
        }
        // The machine around a zeroed buffer, replaced below by the
        // compressed run's own input (building the plain input first, as
        // before, generated every input twice).
        let zeroed = |dtype: DType, elems: usize| {
            Self::build(schedule, rank, dtype, op, elems, || {
                Ok(vec![0u8; schedule.buffer_elems(elems) * dtype.size_bytes()])
            })
        };
        match setup.placement {
            Placement::Hop => {
                let mut m = zeroed(dtype, elems)?;
                m.buffer = compressed::initial_buffer_with_progress(
                    schedule, setup, dtype, seed, rank, elems, progress,
                );
                m.codec = Some(setup.compression);
                m.samples.clear();
                m.record();
                Ok(m)
            }
            Placement::Once => {
                let n = schedule.ranks;
                let bytes = n
                    .checked_mul(compressed::wire_len(&setup.compression, elems))
                    .ok_or(MachineError::TooLarge { elems, dtype })?;
                let mut m = zeroed(DType::Int8, bytes)?;
                m.buffer = compressed::once_initial_buffer(setup, dtype, seed, rank, n, elems)?;
                progress();
                m.once = Some(OnceFinish {
                    compression: setup.compression,
                    dtype,
                    op,
                    ranks: n,
                    elems,
                });
                m.samples.clear();
                m.record();
                Ok(m)
            }
        }
    }

    /// This machine's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The current buffer (`elems * dtype size` bytes, little-endian).
    pub fn buffer(&self) -> &[u8] {
        &self.buffer
    }

    /// True once every op is done.
    pub fn is_done(&self) -> bool {
        self.next == self.ops.len()
    }

    /// Receives a message of a rank on the same worker straight from the
    /// sender's buffer (`bytes`: the chunk as the send's step sees it), if
    /// it is the one this rank's next op receives and nothing from `from`
    /// is queued before it: the chunk is copied or reduced into this rank's
    /// buffer now, with no intermediate copy, exactly as the receive would
    /// have later (ops before it are done, so the step semantics hold).
    /// Returns false, touching nothing, otherwise (then the caller copies
    /// the bytes and [`Self::deliver`]s them; a mismatch is reported when
    /// that receive runs). Not with hop compression (its bytes are wire
    /// codes). Call [`Self::advance`] afterwards to go on.
    pub fn receive_now(&mut self, from: usize, header: ChunkHeader, bytes: &[u8]) -> bool {
        let Some(&RankOp::Recv {
            step,
            from: f,
            first,
            count,
            kind,
            at,
        }) = self.ops.get(self.next)
        else {
            return false;
        };
        let es = self.dtype.size_bytes();
        let r = self.range_elems(at, count);
        let (a, b) = (r.start * es, r.end * es);
        if f != from
            || from == self.rank
            || self.codec.is_some()
            || header != (ChunkHeader { step, first, count })
            || bytes.len() != b - a
            || self.queues.get(&from).is_some_and(|q| !q.is_empty())
        {
            return false;
        }
        while self.samples.len() <= step {
            self.record();
        }
        match kind {
            TransferKind::Copy => self.buffer[a..b].copy_from_slice(bytes),
            TransferKind::Reduce => reduce_into(self.dtype, self.op, &mut self.buffer[a..b], bytes),
        }
        self.next += 1;
        true
    }

    /// Queues a message that arrived from rank `from` (FIFO per peer). It is
    /// checked when the receive that consumes it runs.
    pub fn deliver(&mut self, from: usize, header: ChunkHeader, payload: P) {
        self.queues
            .entry(from)
            .or_default()
            .push_back((header, payload));
    }

    /// Performs ops in order until one must wait or all are done. Each send
    /// calls `send(to, header, bytes)` with the chunk bytes as they are now
    /// (the start of the send's step); the callback copies them out.
    ///
    /// Errors: [`MachineError::Mismatch`] / [`MachineError::PayloadLength`]
    /// for a message that is not the one expected,
    /// [`MachineError::Leftover`] if messages remain when the rank is done.
    /// After an error the machine should be dropped.
    pub fn advance(
        &mut self,
        mut send: impl FnMut(usize, ChunkHeader, &[u8]),
    ) -> Result<Progress, MachineError> {
        self.advance_with(&mut send, None)
    }

    /// As [`Self::advance`], but each send is handed over as the byte range
    /// of [`Self::buffer`] it reads, without copying: `send(to, header,
    /// range)`. It stops before the first receive that follows a send of
    /// this call (returning [`Progress::Waiting`] even if that message is
    /// queued), so every range it handed out holds the chunk as the send's
    /// step sees it until the next [`Self::advance`] /
    /// [`Self::advance_ranges`]; [`Self::deliver`] does not touch the
    /// buffer. So a driver can post every send straight from the buffer and
    /// complete them before it advances again (the MPI runner does).
    ///
    /// Errors: as [`Self::advance`], and [`MachineError::RangesWithCodec`]
    /// for a machine with hop compression.
    pub fn advance_ranges(
        &mut self,
        mut send: impl FnMut(usize, ChunkHeader, std::ops::Range<usize>),
    ) -> Result<Progress, MachineError> {
        if self.codec.is_some() {
            return Err(MachineError::RangesWithCodec);
        }
        self.advance_with(&mut |_, _, _| {}, Some(&mut send))
    }

    /// The loop both [`Self::advance`] and [`Self::advance_ranges`] run: ops
    /// in schedule order, each step's sample row recorded before its first
    /// op, until a receive must wait or the rank finishes. With `ranges`,
    /// the first receive after a send of this call waits, so the handed-out
    /// ranges stay valid until the caller has posted them.
    #[allow(clippy::type_complexity)]
    fn advance_with(
        &mut self,
        send: &mut dyn FnMut(usize, ChunkHeader, &[u8]),
        mut ranges: Option<&mut dyn FnMut(usize, ChunkHeader, std::ops::Range<usize>)>,
    ) -> Result<Progress, MachineError> {
        let mut sent = false;
        while let Some(&op) = self.ops.get(self.next) {
            let step = match op {
                RankOp::Send { step, .. } | RankOp::Recv { step, .. } => step,
            };
            // Ranks idle in a step still record a row for it.
            self.record_through(step);
            match op {
                RankOp::Send {
                    step,
                    to,
                    first,
                    count,
                } => {
                    sent = true;
                    let header = ChunkHeader { step, first, count };
                    self.send_op(to, header, send, ranges.as_deref_mut())?;
                }
                RankOp::Recv {
                    step,
                    from,
                    first,
                    count,
                    kind,
                    at,
                } => {
                    if sent && ranges.is_some() {
                        // The ranges handed out must stay valid: no receive
                        // (not even a local one) may write the buffer
                        // before the caller sent them.
                        return Ok(Progress::Waiting { from });
                    }
                    let want = ChunkHeader { step, first, count };
                    if from == self.rank {
                        self.receive_local(want, kind, at)?;
                    } else if !self.receive_queued(from, want, kind, at)? {
                        return Ok(Progress::Waiting { from });
                    }
                }
            }
            self.next += 1;
        }
        self.finish()
    }

    /// Records sample rows until the one for `step` exists, so a row holds
    /// the buffer as it was before that step's first op ran.
    fn record_through(&mut self, step: usize) {
        while self.samples.len() <= step {
            self.record();
        }
    }

    /// One send op. A send to this rank itself (MSCCL's `cpy` / `re`) keeps
    /// a copy for the matching local receive, with no wire and no codec;
    /// otherwise the chunk goes out encoded (hop compression), as a buffer
    /// range (`ranges`, no copy), or as the buffer's bytes, as the step
    /// sees them.
    #[allow(clippy::type_complexity)]
    fn send_op(
        &mut self,
        to: usize,
        header: ChunkHeader,
        send: &mut dyn FnMut(usize, ChunkHeader, &[u8]),
        ranges: Option<&mut (dyn FnMut(usize, ChunkHeader, std::ops::Range<usize>) + '_)>,
    ) -> Result<(), MachineError> {
        let es = self.dtype.size_bytes();
        let r = self.range_elems(header.first, header.count);
        let bytes = r.start * es..r.end * es;
        if to == self.rank {
            self.local.push_back((header, self.buffer[bytes].to_vec()));
            return Ok(());
        }
        match (&self.codec, ranges) {
            (Some(c), _) => {
                self.wire = compressed::encode(c, self.dtype, &self.buffer[bytes])?;
                send(to, header, &self.wire);
            }
            (None, Some(f)) => f(to, header, bytes),
            (None, None) => send(to, header, &self.buffer[bytes]),
        }
        Ok(())
    }

    /// A receive from this rank itself: takes the oldest local send, which
    /// must be the one the schedule expects here, since local sends and
    /// receives are listed in the same order.
    fn receive_local(
        &mut self,
        want: ChunkHeader,
        kind: TransferKind,
        at: usize,
    ) -> Result<(), MachineError> {
        let es = self.dtype.size_bytes();
        let r = self.range_elems(at, want.count);
        let (a, b) = (r.start * es, r.end * es);
        match self.local.pop_front() {
            Some((got, data)) if got == want && data.len() == b - a => {
                apply_chunk(self.dtype, self.op, kind, &mut self.buffer[a..b], &data);
                Ok(())
            }
            _ => Err(MachineError::Mismatch {
                from: self.rank,
                want_step: want.step,
                want_first: want.first,
                want_count: want.count,
                got_step: want.step,
                got_first: want.first,
                got_count: 0,
            }),
        }
    }

    /// A receive from a peer: takes the next queued message from `from`,
    /// checks its header and length, and copies or reduces it into the
    /// buffer at chunk `at`. Returns false, touching nothing, when no
    /// message from `from` is queued yet.
    fn receive_queued(
        &mut self,
        from: usize,
        want: ChunkHeader,
        kind: TransferKind,
        at: usize,
    ) -> Result<bool, MachineError> {
        let Some((got, payload)) = self.queues.get_mut(&from).and_then(|q| q.pop_front()) else {
            return Ok(false);
        };
        if got != want {
            return Err(MachineError::Mismatch {
                from,
                want_step: want.step,
                want_first: want.first,
                want_count: want.count,
                got_step: got.step,
                got_first: got.first,
                got_count: got.count,
            });
        }
        let es = self.dtype.size_bytes();
        let r = self.range_elems(at, want.count);
        let (a, b) = (r.start * es, r.end * es);
        let want_len = match &self.codec {
            Some(c) => compressed::wire_len(c, r.len()),
            None => b - a,
        };
        if payload.byte_len() != want_len {
            return Err(MachineError::PayloadLength {
                from,
                step: want.step,
                first: want.first,
                count: want.count,
                want: want_len,
                got: payload.byte_len(),
            });
        }
        match self.codec {
            Some(c) => self.apply_encoded(&c, kind, a..b, &payload)?,
            None => self.apply_payload(kind, a..b, &payload),
        }
        Ok(true)
    }

    /// Decodes a hop-compressed payload through the wire and scratch
    /// buffers (the payload may live outside Rust memory, and both buffers
    /// are reused across receives), then applies the decoded chunk to
    /// `bytes` of the buffer.
    fn apply_encoded(
        &mut self,
        c: &Compression,
        kind: TransferKind,
        bytes: std::ops::Range<usize>,
        payload: &P,
    ) -> Result<(), MachineError> {
        self.wire.resize(payload.byte_len(), 0);
        payload.copy_into(&mut self.wire);
        self.scratch.resize(bytes.len(), 0);
        compressed::decode(c, self.dtype, &self.wire, &mut self.scratch)?;
        apply_chunk(
            self.dtype,
            self.op,
            kind,
            &mut self.buffer[bytes],
            &self.scratch,
        );
        Ok(())
    }

    /// Applies an uncompressed payload to `bytes` of the buffer. A reduce
    /// reads the payload in place when it is Rust memory; otherwise it
    /// goes piece by piece through a cache-sized scratch, so a large chunk
    /// is never copied whole before it is reduced.
    fn apply_payload(&mut self, kind: TransferKind, bytes: std::ops::Range<usize>, payload: &P) {
        let (a, b) = (bytes.start, bytes.end);
        if kind == TransferKind::Copy {
            payload.copy_into(&mut self.buffer[a..b]);
            return;
        }
        if let Some(inc) = payload.as_slice() {
            reduce_into(self.dtype, self.op, &mut self.buffer[a..b], inc);
            return;
        }
        self.scratch.resize(RECV_PIECE_BYTES.min(b - a), 0);
        for start in (a..b).step_by(RECV_PIECE_BYTES) {
            let end = (start + RECV_PIECE_BYTES).min(b);
            let piece = &mut self.scratch[..end - start];
            payload.copy_part_into(start - a, piece);
            reduce_into(self.dtype, self.op, &mut self.buffer[start..end], piece);
        }
    }

    /// Ends the rank once every op is done: the reduce op's post-operation
    /// on its chunks, sample rows up to `steps + 1` (trailing idle steps
    /// included), the scratch and wire buffers released, and an error if
    /// any peer sent more than the schedule consumed.
    fn finish(&mut self) -> Result<Progress, MachineError> {
        let es = self.dtype.size_bytes();
        for chunk in std::mem::take(&mut self.post) {
            let r = self.chunk_ranges[chunk].clone();
            post_op(
                self.dtype,
                self.op,
                self.ranks,
                &mut self.buffer[r.start * es..r.end * es],
            );
        }
        while self.samples.len() < self.steps + 1 {
            self.record();
        }
        self.scratch = Vec::new();
        self.wire = Vec::new();
        if let Some((&from, q)) = self.queues.iter().find(|(_, q)| !q.is_empty()) {
            return Err(MachineError::Leftover {
                from,
                count: q.len(),
            });
        }
        Ok(Progress::Done)
    }

    /// The final buffer and the sample rows (`steps + 1` rows of `chunks`
    /// values: the first element of each chunk after `s` steps, `None` for an
    /// empty chunk). Meaningful once [`Progress::Done`] was returned.
    ///
    /// With `placement=once` the buffer is the local reduce of the gathered
    /// compressed inputs ([`compressed::once_reduce`]), `elems` elements of
    /// the run's dtype (the gathered bytes if they cannot be decoded, which
    /// the checker then reports).
    pub fn into_output(self) -> (Vec<u8>, Vec<Vec<Option<f64>>>) {
        match self.once {
            Some(o) => {
                let out = compressed::once_reduce(
                    &o.compression,
                    o.dtype,
                    o.op,
                    &self.buffer,
                    o.ranks,
                    o.elems,
                )
                .unwrap_or(self.buffer);
                (out, self.samples)
            }
            None => (self.buffer, self.samples),
        }
    }

    /// Element range of chunks `[first, first + count)` (validated in `new`);
    /// equal to [`Schedule::range_elems`] for non-empty ranges.
    fn range_elems(&self, first: usize, count: usize) -> std::ops::Range<usize> {
        if count == 0 {
            return 0..0;
        }
        self.chunk_ranges[first].start..self.chunk_ranges[first + count - 1].end
    }

    fn record(&mut self) {
        let row = self.chunk_ranges[..self.sampled]
            .iter()
            .map(|r| (!r.is_empty()).then(|| self.dtype.read_f64(&self.buffer, r.start)))
            .collect();
        self.samples.push(row);
    }
}

/// Writes a received chunk `src` into `dst`: a copy overwrites it, a
/// reduce combines them with [`reduce_into`], as the reference executor
/// does, so every receive path gives the same bits.
fn apply_chunk(dtype: DType, op: ReduceOp, kind: TransferKind, dst: &mut [u8], src: &[u8]) {
    match kind {
        TransferKind::Copy => dst.copy_from_slice(src),
        TransferKind::Reduce => reduce_into(dtype, op, dst, src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::algorithm::{build_with_root, Algorithm};
    use crate::engine::collective::Primitive;
    use crate::engine::execute::reference_run;
    use crate::engine::schedule::{Step, Transfer};

    type Msg = (usize, usize, ChunkHeader, Vec<u8>); // (from, to, header, bytes)
    type Output = (Vec<u8>, Vec<Vec<Option<f64>>>); // (buffer, samples)

    /// Runs every rank's machine to completion, delivering messages in the
    /// order `pick` chooses among the pending ones (FIFO per pair kept).
    fn run_all(
        s: &Schedule,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
        mut pick: impl FnMut(usize) -> usize,
    ) -> Result<Vec<Output>, MachineError> {
        let mut ms: Vec<RankMachine<Vec<u8>>> = (0..s.ranks)
            .map(|r| RankMachine::new(s, r, dtype, op, seed, elems))
            .collect::<Result<_, _>>()?;
        let mut pending: Vec<Msg> = Vec::new();
        for (r, m) in ms.iter_mut().enumerate() {
            m.advance(|to, h, b| pending.push((r, to, h, b.to_vec())))?;
        }
        while !pending.is_empty() {
            // Keep per-pair FIFO: only the first pending message of a pair may go.
            let heads: Vec<usize> = (0..pending.len())
                .filter(|&i| {
                    !pending[..i]
                        .iter()
                        .any(|p| p.0 == pending[i].0 && p.1 == pending[i].1)
                })
                .collect();
            let (from, to, h, b) = pending.remove(heads[pick(heads.len()) % heads.len()]);
            ms[to].deliver(from, h, b);
            ms[to].advance(|t, h, b| pending.push((to, t, h, b.to_vec())))?;
        }
        assert!(ms.iter().all(|m| m.is_done()), "every rank finishes");
        Ok(ms.into_iter().map(|m| m.into_output()).collect())
    }

    fn check_equals_reference(
        alg: Algorithm,
        p: Primitive,
        n: usize,
        dtype: DType,
        op: ReduceOp,
        elems: usize,
    ) {
        // Rooted primitives from the last rank, so the root is not rank 0.
        let s = build_with_root(alg, p, n, n - 1).expect("builds");
        let want = reference_run(&s, dtype, op, 7, elems).unwrap();
        let mut x = 12345u64;
        let outs = run_all(&s, dtype, op, 7, elems, |k| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize % k
        })
        .expect("runs");
        for (r, (buf, samples)) in outs.iter().enumerate() {
            assert_eq!(
                buf, &want[r],
                "{alg:?} {p:?} n={n} {dtype:?} {op:?} rank {r}"
            );
            assert_eq!(samples.len(), s.steps.len() + 1);
            assert!(samples.iter().all(|row| row.len() == s.chunks));
            let last = samples.last().unwrap();
            for (c, v) in last.iter().enumerate() {
                let range = s.chunk_elems(elems, c);
                assert_eq!(
                    *v,
                    (!range.is_empty()).then(|| dtype.read_f64(&want[r], range.start))
                );
            }
        }
    }

    /// Bytes "elsewhere" (as a JS `ArrayBuffer` is): no slice, so a
    /// `Reduce` takes the piecewise path through scratch.
    struct Elsewhere(Vec<u8>);
    impl Payload for Elsewhere {
        fn byte_len(&self) -> usize {
            self.0.len()
        }
        fn copy_into(&self, dst: &mut [u8]) {
            dst.copy_from_slice(&self.0);
        }
        fn copy_part_into(&self, offset: usize, dst: &mut [u8]) {
            dst.copy_from_slice(&self.0[offset..offset + dst.len()]);
        }
    }

    #[test]
    fn reduces_of_bytes_elsewhere_go_piecewise_and_equal_the_reference() {
        // Chunks of several pieces plus a partial one (and tiny ones), every
        // dtype width: the pieces reduce to the reference's bits.
        let piece_elems = |d: DType| RECV_PIECE_BYTES / d.size_bytes();
        for (alg, n, dtype, op, elems) in [
            (
                Algorithm::Ring,
                4,
                DType::Fp32,
                ReduceOp::Sum,
                4 * (2 * piece_elems(DType::Fp32) + 37),
            ),
            (
                Algorithm::Mesh,
                3,
                DType::Bf16,
                ReduceOp::Max,
                3 * piece_elems(DType::Bf16) + 5,
            ),
            (
                Algorithm::Ring,
                5,
                DType::Int8,
                ReduceOp::Avg,
                5 * piece_elems(DType::Int8) + 3,
            ),
            (Algorithm::Ring, 3, DType::Int32, ReduceOp::Prod, 7),
        ] {
            let s = build_with_root(alg, Primitive::AllReduce, n, 0).expect("builds");
            let want = reference_run(&s, dtype, op, 3, elems).unwrap();
            let mut ms: Vec<RankMachine<Elsewhere>> = (0..n)
                .map(|r| RankMachine::new(&s, r, dtype, op, 3, elems).expect("builds"))
                .collect();
            let mut pending: VecDeque<Msg> = VecDeque::new();
            for (r, m) in ms.iter_mut().enumerate() {
                m.advance(|to, h, b| pending.push_back((r, to, h, b.to_vec())))
                    .expect("advances");
            }
            while let Some((from, to, h, b)) = pending.pop_front() {
                ms[to].deliver(from, h, Elsewhere(b));
                ms[to]
                    .advance(|t, h, b| pending.push_back((to, t, h, b.to_vec())))
                    .expect("advances");
            }
            for (r, m) in ms.into_iter().enumerate() {
                assert!(m.is_done());
                assert_eq!(
                    m.into_output().0,
                    want[r],
                    "{alg:?} {dtype:?} {op:?} rank {r}"
                );
            }
        }
    }

    #[test]
    fn receive_now_takes_only_the_next_receive() {
        // Ring AllReduce on 3 ranks: rank 1's ops are send (step 0) then
        // receive from rank 0 (step 0), ...
        let s = build_with_root(Algorithm::Ring, Primitive::AllReduce, 3, 0).expect("builds");
        let (dtype, op, elems) = (DType::Fp32, ReduceOp::Sum, 30);
        let mut ms: Vec<RankMachine<Vec<u8>>> = (0..3)
            .map(|r| RankMachine::new(&s, r, dtype, op, 9, elems).expect("builds"))
            .collect();
        let mut sent: Vec<Vec<Msg>> = vec![Vec::new(); 3];
        for (r, m) in ms.iter_mut().enumerate() {
            m.advance(|to, h, b| sent[r].push((r, to, h, b.to_vec())))
                .expect("advances");
        }
        let (_, to, h, b) = sent[0][0].clone();
        assert_eq!(to, 1);
        // Not from another sender, not another header, not a short payload.
        assert!(!ms[1].receive_now(2, h, &b));
        assert!(!ms[1].receive_now(0, ChunkHeader { step: 1, ..h }, &b));
        assert!(!ms[1].receive_now(0, h, &b[1..]));
        // Not while something from rank 0 is queued before it.
        ms[1].deliver(0, h, b.clone());
        assert!(!ms[1].receive_now(0, h, &b));
        // Otherwise taken now, with the result a queued delivery would give.
        let mut twin = RankMachine::<Vec<u8>>::new(&s, 1, dtype, op, 9, elems).expect("builds");
        twin.advance(|_, _, _| {}).expect("advances");
        assert!(twin.receive_now(0, h, &b));
        assert!(!twin.receive_now(0, h, &b), "that receive is done");
        let mut a = Vec::new();
        let mut c = Vec::new();
        ms[1]
            .advance(|to, h, b| a.push((to, h, b.to_vec())))
            .expect("advances");
        twin.advance(|to, h, b| c.push((to, h, b.to_vec())))
            .expect("advances");
        assert_eq!(a, c);
        assert_eq!(ms[1].buffer(), twin.buffer());
    }

    /// Runs compressed machines to completion, delivering in send order.
    fn run_compressed(
        s: &Schedule,
        dtype: DType,
        elems: usize,
        setup: &CompressedSetup,
    ) -> Vec<Vec<u8>> {
        let mut ms: Vec<RankMachine<Vec<u8>>> = (0..s.ranks)
            .map(|r| RankMachine::compressed(s, r, dtype, ReduceOp::Sum, 5, elems, setup))
            .collect::<Result<_, _>>()
            .expect("builds");
        let mut pending: VecDeque<Msg> = VecDeque::new();
        for (r, m) in ms.iter_mut().enumerate() {
            m.advance(|to, h, b| pending.push_back((r, to, h, b.to_vec())))
                .expect("advances");
        }
        while let Some((from, to, h, b)) = pending.pop_front() {
            ms[to].deliver(from, h, b);
            ms[to]
                .advance(|t, h, b| pending.push_back((to, t, h, b.to_vec())))
                .expect("advances");
        }
        assert!(ms.iter().all(|m| m.is_done()));
        ms.into_iter().map(|m| m.into_output().0).collect()
    }

    #[test]
    fn compressed_machines_equal_the_compressed_reference_bit_for_bit() {
        use crate::engine::compressed::CompressedCheck;
        use crate::engine::quantization::{GradientShape, ScaleType, Scheme};
        for scheme in [Scheme::Int8, Scheme::Fp8e4m3, Scheme::Fp8e5m2] {
            for (placement, alg) in [
                (Placement::Hop, Algorithm::Ring),
                (Placement::Hop, Algorithm::Mesh),
                (Placement::Once, Algorithm::Ring),
            ] {
                let setup = CompressedSetup {
                    compression: Compression {
                        scheme,
                        block: 64,
                        scale: ScaleType::Fp32,
                    },
                    placement,
                    shape: GradientShape::HeavyTailed,
                };
                let n = 6;
                let elems = 1000;
                let ar = build_with_root(alg, Primitive::AllReduce, n, 0).unwrap();
                let run = match placement {
                    Placement::Hop => ar.clone(),
                    Placement::Once => build_with_root(alg, Primitive::AllGather, n, 0).unwrap(),
                };
                let chk = CompressedCheck::prepare(
                    &ar,
                    &run,
                    &setup,
                    DType::Bf16,
                    ReduceOp::Sum,
                    5,
                    elems,
                )
                .unwrap();
                let outs = run_compressed(&run, DType::Bf16, elems, &setup);
                for (r, o) in outs.iter().enumerate() {
                    assert_eq!(
                        chk.compare(r, o).0,
                        0,
                        "{scheme:?} {placement:?} {alg:?} rank {r}"
                    );
                    assert_eq!(o, &chk.outputs[r]);
                }
            }
        }
    }

    #[test]
    fn machines_equal_reference_bit_for_bit() {
        for alg in Algorithm::ALL {
            for p in Primitive::ALL {
                for n in [2, 3, 4, 8] {
                    if !alg.supports(p, n) {
                        continue;
                    }
                    for dtype in DType::ALL {
                        for op in [ReduceOp::Sum, ReduceOp::Max] {
                            for elems in [0, 1, 5, 1000] {
                                check_equals_reference(alg, p, n, dtype, op, elems);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn building_a_machine_reports_progress_once_a_piece() {
        use crate::engine::execute::FILL_PIECE_ELEMS;
        use crate::engine::quantization::{GradientShape, ScaleType, Scheme};
        use std::rc::Rc;
        // Ring AllReduce, 3 ranks: the input is one block of 2 pieces and a
        // remainder.
        let s = build_with_root(Algorithm::Ring, Primitive::AllReduce, 3, 0).unwrap();
        let elems = 2 * FILL_PIECE_ELEMS + 9;
        let mut calls = 0;
        let m: RankMachine<Rc<Vec<u8>>> = RankMachine::new_with_progress(
            &s,
            1,
            DType::Fp32,
            ReduceOp::Sum,
            4,
            elems,
            &mut || calls += 1,
        )
        .unwrap();
        assert_eq!(calls, 3);
        let plain: RankMachine<Rc<Vec<u8>>> =
            RankMachine::new(&s, 1, DType::Fp32, ReduceOp::Sum, 4, elems).unwrap();
        assert_eq!(m.buffer(), plain.buffer());
        // Compressed, hop: the gradient input, piece by piece too.
        let setup = CompressedSetup {
            compression: Compression {
                scheme: Scheme::Int8,
                block: 64,
                scale: ScaleType::Fp32,
            },
            placement: Placement::Hop,
            shape: GradientShape::Normal,
        };
        let mut calls = 0;
        let c: RankMachine<Rc<Vec<u8>>> = RankMachine::compressed_with_progress(
            &s,
            1,
            DType::Fp16,
            ReduceOp::Sum,
            4,
            elems,
            &setup,
            &mut || calls += 1,
        )
        .unwrap();
        assert_eq!(calls, 3);
        assert_eq!(
            c.buffer(),
            compressed::initial_buffer(&s, &setup, DType::Fp16, 4, 1, elems).as_slice()
        );
    }

    #[test]
    fn ranges_and_given_buffers_equal_the_reference() {
        use crate::engine::execute::initial_buffer;
        use std::rc::Rc;
        type Pending = VecDeque<(usize, usize, ChunkHeader, Vec<u8>)>;
        // Advances rank `r` until it emits nothing more, copying each send's
        // range right away (as a driver that sends before advancing again).
        fn drive(ms: &mut [RankMachine<Rc<Vec<u8>>>], r: usize, pending: &mut Pending) {
            loop {
                let mut out = Vec::new();
                ms[r]
                    .advance_ranges(|to, h, range| out.push((to, h, range)))
                    .expect("advances");
                if out.is_empty() {
                    return;
                }
                for (to, h, range) in out {
                    pending.push_back((r, to, h, ms[r].buffer()[range].to_vec()));
                }
            }
        }
        for (alg, p) in [
            (Algorithm::Ring, Primitive::AllReduce),
            (Algorithm::Mesh, Primitive::AlltoAll),
            (Algorithm::Rhd, Primitive::AllReduce),
            (Algorithm::Nhr, Primitive::ReduceScatter),
            (Algorithm::Tree, Primitive::Broadcast),
            (Algorithm::Nb, Primitive::AllGather),
        ] {
            let (n, elems, dtype) = (5, 101, DType::Bf16);
            let s = build_with_root(alg, p, n, 2).unwrap();
            let want = reference_run(&s, dtype, ReduceOp::Sum, 3, elems).unwrap();
            let mut ms: Vec<RankMachine<Rc<Vec<u8>>>> = (0..n)
                .map(|r| {
                    let b = initial_buffer(&s, dtype, 3, r, elems);
                    RankMachine::with_buffer(&s, r, dtype, ReduceOp::Sum, elems, b).unwrap()
                })
                .collect();
            let mut pending = Pending::new();
            for r in 0..n {
                drive(&mut ms, r, &mut pending);
            }
            // Deliver in send order (FIFO per pair, as MPI keeps it).
            while let Some((from, to, h, b)) = pending.pop_front() {
                ms[to].deliver(from, h, Rc::new(b));
                drive(&mut ms, to, &mut pending);
            }
            for (r, m) in ms.into_iter().enumerate() {
                assert!(m.is_done(), "{alg:?} {p:?} rank {r}");
                assert_eq!(m.into_output().0, want[r], "{alg:?} {p:?} rank {r}");
            }
        }
        let s = build_with_root(Algorithm::Ring, Primitive::AllReduce, 2, 0).unwrap();
        assert_eq!(
            RankMachine::<Vec<u8>>::with_buffer(&s, 0, DType::Fp32, ReduceOp::Sum, 4, vec![0; 3])
                .unwrap_err(),
            MachineError::BufferLength { want: 16, got: 3 }
        );
    }

    fn pair() -> Schedule {
        Schedule {
            primitive: Primitive::AllReduce,
            algorithm: "test".into(),
            ranks: 2,
            chunks: 2,
            root: 0,
            scratch: 0,
            steps: vec![
                Step {
                    phase: "a".into(),
                    transfers: vec![Transfer::reduce(0, 1, 0, 1)],
                },
                Step {
                    phase: "idle".into(),
                    transfers: vec![],
                },
                Step {
                    phase: "b".into(),
                    transfers: vec![Transfer::copy(1, 0, 0, 1)],
                },
            ],
        }
    }

    #[test]
    fn waits_then_resumes_and_records_idle_steps() {
        let s = pair();
        let mut m0 = RankMachine::<Vec<u8>>::new(&s, 0, DType::Fp32, ReduceOp::Sum, 1, 4).unwrap();
        let mut sent = Vec::new();
        assert_eq!(
            m0.advance(|to, h, b| sent.push((to, h, b.to_vec())))
                .unwrap(),
            Progress::Waiting { from: 1 }
        );
        assert_eq!(sent.len(), 1);
        assert_eq!(
            sent[0].1,
            ChunkHeader {
                step: 0,
                first: 0,
                count: 1
            }
        );
        assert_eq!(sent[0].2.len(), 2 * 4);
        // Waiting for step 2: rows for steps 0 and 1 (after step 0, after step 1) are in.
        m0.deliver(
            1,
            ChunkHeader {
                step: 2,
                first: 0,
                count: 1,
            },
            vec![0u8; 8],
        );
        assert_eq!(
            m0.advance(|_, _, _| panic!("no more sends")).unwrap(),
            Progress::Done
        );
        let (buf, samples) = m0.into_output();
        assert_eq!(samples.len(), 4);
        assert_eq!(&buf[..8], &[0u8; 8]);
        assert_eq!(samples[3][0], Some(0.0));
        assert_eq!(samples[0], samples[2]);
    }

    #[test]
    fn wrong_messages_are_typed_errors() {
        let s = pair();
        let mut m1 = RankMachine::<Vec<u8>>::new(&s, 1, DType::Fp32, ReduceOp::Sum, 1, 4).unwrap();
        m1.deliver(
            0,
            ChunkHeader {
                step: 1,
                first: 0,
                count: 1,
            },
            vec![0u8; 8],
        );
        assert!(matches!(
            m1.advance(|_, _, _| {}),
            Err(MachineError::Mismatch {
                from: 0,
                want_step: 0,
                ..
            })
        ));

        let mut m1 = RankMachine::<Vec<u8>>::new(&s, 1, DType::Fp32, ReduceOp::Sum, 1, 4).unwrap();
        m1.deliver(
            0,
            ChunkHeader {
                step: 0,
                first: 0,
                count: 1,
            },
            vec![0u8; 3],
        );
        assert_eq!(
            m1.advance(|_, _, _| {}),
            Err(MachineError::PayloadLength {
                from: 0,
                step: 0,
                first: 0,
                count: 1,
                want: 8,
                got: 3
            })
        );

        let mut m0 = RankMachine::<Vec<u8>>::new(&s, 0, DType::Fp32, ReduceOp::Sum, 1, 4).unwrap();
        m0.deliver(
            1,
            ChunkHeader {
                step: 2,
                first: 0,
                count: 1,
            },
            vec![0u8; 8],
        );
        m0.deliver(
            1,
            ChunkHeader {
                step: 2,
                first: 0,
                count: 1,
            },
            vec![0u8; 8],
        );
        assert_eq!(
            m0.advance(|_, _, _| {}),
            Err(MachineError::Leftover { from: 1, count: 1 })
        );

        assert!(matches!(
            RankMachine::<Vec<u8>>::new(&s, 2, DType::Fp32, ReduceOp::Sum, 1, 4),
            Err(MachineError::NoSuchRank { rank: 2, ranks: 2 })
        ));
        let mut bad = pair();
        bad.steps[0].transfers[0].count = 5;
        assert!(matches!(
            RankMachine::<Vec<u8>>::new(&bad, 0, DType::Fp32, ReduceOp::Sum, 1, 4),
            Err(MachineError::BadTransfer(BadTransfer { step: 0, .. }))
        ));
        bad.steps[0].transfers[0] = Transfer::copy(0, 0, 0, 1).to_chunk(7);
        assert!(matches!(
            RankMachine::<Vec<u8>>::new(&bad, 0, DType::Fp32, ReduceOp::Sum, 1, 4),
            Err(MachineError::BadTransfer(_))
        ));
        // A local copy (src == dst, MSCCL's cpy) is a transfer like any other.
        bad.steps[0].transfers[0] = Transfer::copy(0, 0, 0, 1);
        assert!(RankMachine::<Vec<u8>>::new(&bad, 0, DType::Fp32, ReduceOp::Sum, 1, 4).is_ok());
    }
}
