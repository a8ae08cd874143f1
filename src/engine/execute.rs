//! The reference executor: applies a [`Schedule`] to real rank buffers with
//! the step semantics of [`super::schedule`] and the kernels of
//! [`super::dtype`]. The rank workers run the same kernels in the same order,
//! so their results equal this executor's bit for bit.

use super::dtype::{post_op, pre_op, reduce_into, DType, ReduceOp};
use super::input;
use super::quantization::Compression;
use super::schedule::{BadTransfer, Schedule, TransferKind};
use super::wire::{decode, encode, WireError};
use std::ops::Range;
use thiserror::Error;

/// Why a schedule could not be executed on the given buffers.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExecuteError {
    /// The number of buffers is not the schedule's rank count.
    #[error("schedule has {want} ranks but {got} buffers were given")]
    RankCount { want: usize, got: usize },
    /// A buffer's length differs from the others or is not whole elements.
    #[error("rank {rank}'s buffer has {len} bytes; every buffer must have {want} bytes ({dtype} elements)")]
    BufferLength {
        rank: usize,
        len: usize,
        want: usize,
        dtype: DType,
    },
    /// A transfer names a rank or chunk outside the schedule, moves no
    /// chunk, or its source and destination differ in size
    /// ([`Schedule::check_transfer`]).
    #[error(transparent)]
    BadTransfer(#[from] BadTransfer),
    /// A compressed payload could not be encoded (not a float dtype).
    #[error(transparent)]
    Wire(#[from] WireError),
}

/// Runs `schedule` on `buffers` (one per rank, equal lengths, whole elements
/// of `dtype`), in place. The message size `S` (in elements) is taken to be
/// the largest whose layout ([`Schedule::buffer_elems`]) fits the buffers;
/// for most primitives that is the buffer length.
///
/// Errors: [`ExecuteError`] on a shape mismatch; nothing is modified then.
pub fn execute(
    schedule: &Schedule,
    dtype: DType,
    op: ReduceOp,
    buffers: &mut [Vec<u8>],
) -> Result<(), ExecuteError> {
    let len = buffers.first().map_or(0, |b| b.len());
    let elems = message_elems(schedule, len / dtype.size_bytes());
    execute_elems(schedule, dtype, op, buffers, elems)
}

/// [`execute`] for a message of `elems` elements: every buffer must have
/// [`Schedule::buffer_elems`]`(elems)` elements of `dtype`.
///
/// Errors: [`ExecuteError`] on a shape mismatch; nothing is modified then.
pub fn execute_elems(
    schedule: &Schedule,
    dtype: DType,
    op: ReduceOp,
    buffers: &mut [Vec<u8>],
    elems: usize,
) -> Result<(), ExecuteError> {
    execute_elems_with(schedule, dtype, op, buffers, elems, None).map(|_| ())
}

/// [`execute_elems`], optionally with every transfer's payload passed
/// through a compression codec (`decode(encode(payload))`, see
/// [`super::wire`]) before the receiver copies or reduces it.
/// Returns the bytes put on the wire (all transfers; encoded sizes when
/// compressed).
///
/// Errors: [`ExecuteError`] on a shape mismatch (nothing is modified then)
/// or [`ExecuteError::Wire`] if the dtype cannot be compressed.
pub fn execute_elems_with(
    schedule: &Schedule,
    dtype: DType,
    op: ReduceOp,
    buffers: &mut [Vec<u8>],
    elems: usize,
    codec: Option<&Compression>,
) -> Result<u64, ExecuteError> {
    if let Some(c) = codec {
        if c.scheme != super::quantization::Scheme::None && !dtype.is_float() {
            return Err(WireError::NotFloat(dtype).into());
        }
    }
    let n = schedule.ranks;
    if buffers.len() != n {
        return Err(ExecuteError::RankCount {
            want: n,
            got: buffers.len(),
        });
    }
    let es = dtype.size_bytes();
    let want = schedule.buffer_elems(elems) * es;
    for (rank, b) in buffers.iter().enumerate() {
        if b.len() != want {
            return Err(ExecuteError::BufferLength {
                rank,
                len: b.len(),
                want,
                dtype,
            });
        }
    }
    for (step, s) in schedule.steps.iter().enumerate() {
        for index in 0..s.transfers.len() {
            schedule.check_transfer(step, index, Some(elems))?;
        }
    }
    for b in buffers.iter_mut() {
        pre_op_rank(schedule, dtype, op, b);
    }
    let mut wire = 0u64;
    for step in 0..schedule.steps.len() {
        wire += execute_step(schedule, step, dtype, op, buffers, elems, codec)?;
    }
    for (rank, b) in buffers.iter_mut().enumerate() {
        post_op_rank(schedule, dtype, op, rank, b, elems);
    }
    Ok(wire)
}

/// What a rank does to its buffer before the first step: `op`'s
/// [`pre_op`] on the whole buffer when the primitive reduces (for `avg` on
/// floats, every input element times `1/n` in the dtype, NCCL's
/// `PreMulSum`; receive and scratch areas hold zeros, which stay zero).
/// The reference executor and every rank machine call this one function.
pub fn pre_op_rank(schedule: &Schedule, dtype: DType, op: ReduceOp, buffer: &mut [u8]) {
    if schedule.primitive.reduces() {
        pre_op(dtype, op, schedule.ranks, buffer);
    }
}

/// The chunks rank `rank` post-processes after its last step (see
/// [`post_op_rank`]): every chunk that must hold the reduction over all
/// ranks, when `op` has a post-operation on `dtype` (`avg` on integers);
/// empty otherwise. The executor and every rank machine use this list.
pub fn post_op_chunks(schedule: &Schedule, dtype: DType, op: ReduceOp, rank: usize) -> Vec<usize> {
    if !schedule.primitive.reduces() || op != ReduceOp::Avg || dtype.is_float() {
        return Vec::new();
    }
    (0..schedule.chunks)
        .filter(|&c| schedule.is_reduced_output(rank, c))
        .collect()
}

/// What rank `rank` does to its buffer after its last step: `op`'s
/// [`post_op`] on each of [`post_op_chunks`] (for `avg` on integers, the
/// sum divided by `n` toward zero, NCCL's `SumPostDiv`). Other chunks are
/// left as they are; so is a buffer shorter than the layout of `elems`
/// elements.
pub fn post_op_rank(
    schedule: &Schedule,
    dtype: DType,
    op: ReduceOp,
    rank: usize,
    buffer: &mut [u8],
    elems: usize,
) {
    let es = dtype.size_bytes();
    for chunk in post_op_chunks(schedule, dtype, op, rank) {
        let r = schedule.chunk_elems(elems, chunk);
        if let Some(b) = buffer.get_mut(r.start * es..r.end * es) {
            post_op(dtype, op, schedule.ranks, b);
        }
    }
}

/// Applies step `step` of `schedule` (one unit of [`execute_elems_with`],
/// for callers that spread the work over time). Buffers must already have
/// been checked by [`execute_elems_with`]'s shape rules; a transfer outside
/// them panics (a caller bug). Returns the step's wire bytes. The reduce
/// op's pre- and post-operations ([`pre_op_rank`], [`post_op_rank`]) are
/// the caller's, before the first and after the last step.
///
/// Errors: [`ExecuteError::Wire`] if the dtype cannot be compressed.
pub fn execute_step(
    schedule: &Schedule,
    step: usize,
    dtype: DType,
    op: ReduceOp,
    buffers: &mut [Vec<u8>],
    elems: usize,
    codec: Option<&Compression>,
) -> Result<u64, ExecuteError> {
    // Read every source as it was at the start of the step.
    let mut wire = 0u64;
    let mut payloads: Vec<Vec<u8>> = Vec::with_capacity(schedule.steps[step].transfers.len());
    for i in 0..schedule.steps[step].transfers.len() {
        let (data, w) = transfer_payload(
            schedule,
            step,
            i,
            dtype,
            buffers,
            elems,
            codec,
            0..usize::MAX,
        )?;
        wire += w;
        payloads.push(data);
    }
    for (i, data) in payloads.iter().enumerate() {
        apply_transfer(schedule, step, i, dtype, op, buffers, elems, data, 0);
    }
    Ok(wire)
}

/// What transfer `i` of step `step` delivers, read from its source's
/// buffer now (the step's sends all read the start-of-step state: read
/// every payload of a step before applying any): the payload as the
/// receiver gets it (`decode(encode(..))` with a codec) and its wire bytes,
/// for the elements `part` of the transfer (counted from its first
/// element, clamped to its length: `0..usize::MAX` is all of it), so that
/// a caller can spread a large transfer over several units of work. With a codec,
/// `part.start` must be a multiple of the codec's block: blocks restart at
/// every payload ([`super::wire`]), so the parts of a transfer cut at
/// block multiples decode to the parts of the whole payload, bit for bit,
/// and their wire bytes add up to the whole payload's.
///
/// Errors: [`ExecuteError::Wire`] if the dtype cannot be compressed.
#[allow(clippy::too_many_arguments)]
pub fn transfer_payload(
    schedule: &Schedule,
    step: usize,
    i: usize,
    dtype: DType,
    buffers: &[Vec<u8>],
    elems: usize,
    codec: Option<&Compression>,
    part: Range<usize>,
) -> Result<(Vec<u8>, u64), ExecuteError> {
    let es = dtype.size_bytes();
    let t = &schedule.steps[step].transfers[i];
    let r = clamp_part(schedule.range_elems(elems, t.first, t.count), part);
    let raw = &buffers[t.src][r.start * es..r.end * es];
    // A local transfer (src == dst) never crosses a wire: no codec.
    Ok(match codec.filter(|_| t.src != t.dst) {
        Some(c) => {
            let w = encode(c, dtype, raw)?;
            let mut data = vec![0u8; raw.len()];
            decode(c, dtype, &w, &mut data)?;
            (data, w.len() as u64)
        }
        None if t.src == t.dst => (raw.to_vec(), 0),
        None => (raw.to_vec(), raw.len() as u64),
    })
}

/// The elements `part` (relative to `whole.start`, clamped) of `whole`.
fn clamp_part(whole: Range<usize>, part: Range<usize>) -> Range<usize> {
    let len = whole.end - whole.start;
    let a = whole.start + part.start.min(len);
    let b = whole.start + part.end.min(len);
    a..b.max(a)
}

/// Applies transfer `i` of step `step` at its receiver: copies or reduces
/// `payload` ([`transfer_payload`]) into the destination chunks, from `at`
/// elements after the transfer's first element (0: the whole transfer's
/// payload). A payload reaching past the transfer's end panics (a caller
/// bug).
#[allow(clippy::too_many_arguments)]
pub fn apply_transfer(
    schedule: &Schedule,
    step: usize,
    i: usize,
    dtype: DType,
    op: ReduceOp,
    buffers: &mut [Vec<u8>],
    elems: usize,
    payload: &[u8],
    at: usize,
) {
    let es = dtype.size_bytes();
    let t = &schedule.steps[step].transfers[i];
    let r = clamp_part(
        schedule.range_elems(elems, t.dst_first, t.count),
        at..at + payload.len() / es,
    );
    let dst = &mut buffers[t.dst][r.start * es..r.end * es];
    match t.kind {
        TransferKind::Copy => dst.copy_from_slice(payload),
        TransferKind::Reduce => reduce_into(dtype, op, dst, payload),
    }
}

/// The message size `S` in elements whose layout fills a buffer of
/// `buffer_elems` elements: `buffer_elems` itself where the layout is the
/// message (most primitives), else the largest `S` with
/// `schedule.buffer_elems(S) <= buffer_elems` (AlltoAll's `2S` buffer).
pub fn message_elems(schedule: &Schedule, buffer_elems: usize) -> usize {
    if schedule.buffer_elems(buffer_elems) == buffer_elems {
        return buffer_elems;
    }
    // buffer_elems(S) is non-decreasing in S: binary search.
    let (mut lo, mut hi) = (0usize, buffer_elems);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if schedule.buffer_elems(mid) <= buffer_elems {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The initial buffer of `rank` for a message of `elems` elements
/// ([`Schedule::buffer_elems`]`(elems)` elements long): its input
/// ([`input::fill`], element `i` a function of `(seed, rank, i)`) in the
/// blocks the primitive gives it, zeros elsewhere (receive areas, scratch).
pub fn initial_buffer(
    schedule: &Schedule,
    dtype: DType,
    seed: u64,
    rank: usize,
    elems: usize,
) -> Vec<u8> {
    initial_buffer_with_progress(schedule, dtype, seed, rank, elems, &mut || {})
}

/// [`initial_buffer`], calling `progress` after each piece
/// ([`FILL_PIECE_ELEMS`] elements): a browser worker's heartbeat while it
/// builds 64 MiB and more of input in one handler.
pub fn initial_buffer_with_progress(
    schedule: &Schedule,
    dtype: DType,
    seed: u64,
    rank: usize,
    elems: usize,
    progress: &mut dyn FnMut(),
) -> Vec<u8> {
    initial_buffer_with(schedule, dtype, rank, elems, |r, out| {
        input::fill(dtype, seed, rank, r, out);
        progress();
    })
}

/// How many elements [`initial_buffer_with`] asks its `fill` for at a time.
///
/// A rank worker builds its inputs (64 MiB a rank on the 8 × 64 MiB page)
/// in its first message handler, in code V8 has not optimised yet. V8 runs
/// a wasm function as Liftoff (baseline) code first and uses TurboFan's
/// optimised code for the calls after its tier-up; a call already running
/// keeps its code (<https://v8.dev/blog/wasm-dynamic-tiering>). So the loop
/// must be a function of its own, called once a piece: inlined into the
/// worker's one large set-up function, it ran as baseline code to the end.
/// Measured in Chromium, 8 ranks × 64 MiB fp32 on 4 workers, with the loop
/// inlined: each worker's first rank took 224–382 ms to build, its second
/// (optimised by then) 80–174 ms.
pub const FILL_PIECE_ELEMS: usize = 1 << 16;

/// [`initial_buffer`] with the input made by `fill(element range, bytes)`
/// for each block the primitive gives `rank`, [`FILL_PIECE_ELEMS`] elements
/// at a time (the last piece of a block shorter).
pub fn initial_buffer_with(
    schedule: &Schedule,
    dtype: DType,
    rank: usize,
    elems: usize,
    mut fill: impl FnMut(std::ops::Range<usize>, &mut [u8]),
) -> Vec<u8> {
    let es = dtype.size_bytes();
    let mut buf = vec![0u8; schedule.buffer_elems(elems) * es];
    // Called through an opaque pointer, `fill` stays a function of its own
    // (see FILL_PIECE_ELEMS): not inlined here (checked with wasm-dis on a
    // release build of the worker; `black_box` is a hint, not a
    // guarantee).
    let fill: &mut dyn FnMut(std::ops::Range<usize>, &mut [u8]) = std::hint::black_box(&mut fill);
    let k = schedule.chunks_per_block().max(1);
    for block in 0..schedule.blocks() {
        if schedule.holds_input(rank, block * k) {
            let r = schedule.range_elems(elems, block * k, k);
            for a in r.clone().step_by(FILL_PIECE_ELEMS) {
                let b = (a + FILL_PIECE_ELEMS).min(r.end);
                fill(a..b, &mut buf[a * es..b * es]);
            }
        }
    }
    buf
}

/// Runs `schedule` on the deterministic inputs of `seed` for a message of
/// `elems` elements and returns every rank's final buffer (`ranks` buffers
/// of [`Schedule::buffer_elems`]`(elems)` elements).
///
/// Errors: [`ExecuteError`] if a transfer of `schedule` names a rank or
/// chunk outside it (the buffers themselves are built to its shape).
pub fn reference_run(
    schedule: &Schedule,
    dtype: DType,
    op: ReduceOp,
    seed: u64,
    elems: usize,
) -> Result<Vec<Vec<u8>>, ExecuteError> {
    let mut bufs: Vec<Vec<u8>> = (0..schedule.ranks)
        .map(|r| initial_buffer(schedule, dtype, seed, r, elems))
        .collect();
    execute_elems(schedule, dtype, op, &mut bufs, elems)?;
    Ok(bufs)
}
