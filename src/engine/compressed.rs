//! A collective run with compressed transfers (the what-if of
//! [`super::compress`]; HCCL and NCCL have no gradient compression): the wire
//! codec, the two placements, the compressed reference executor, the error
//! report against the uncompressed exact result, and the modelled time.
//!
//! ## Wire format
//! A payload of `k` elements of a float dtype travels as `k` one-byte codes
//! followed by `ceil(k / block)` scales (little-endian fp16 or fp32, see
//! [`ScaleType`]): [`wire_len`] bytes. Blocks restart at every payload.
//!
//! ## Placements
//! - [`Placement::Hop`]: every transfer of the schedule is encoded by the
//!   sender and decoded by the receiver, which then copies or reduces in the
//!   dtype as usual; a value reduced at `h` hops is requantised `h` times, so
//!   the error grows with the hop count.
//! - [`Placement::Once`] (AllReduce only): each rank quantises its input
//!   once; the ranks AllGather the compressed inputs (the wire carries
//!   `n · wire_len(S)` bytes per rank's view, as int8 "elements"); each rank
//!   then decodes all `n` inputs and reduces them locally in f32, in rank
//!   order 0..n, rounding to the dtype once. Less error; more bytes for
//!   n > 2 (each rank receives n − 1 whole inputs instead of pieces).
//!
//! Workers and this module's reference run the same functions in the same
//! order, so a correct run equals [`CompressedCheck::prepare`]'s reference
//! outputs bit for bit.

use super::collective::Primitive;
use super::compress::{
    dequantize, gradient_range, quantize, Compression, ErrorAccumulator, ErrorStats, GradientShape,
    Quantized, ScaleType, Scheme,
};
use super::dtype::{DType, ReduceOp};
use super::schedule::Schedule;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ops::Range;
use thiserror::Error;

/// Where quantisation happens (see module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// Quantise every transfer; dequantise-reduce-requantise at each hop.
    #[default]
    Hop,
    /// Quantise each input once, AllGather, reduce locally in f32.
    Once,
}

impl Placement {
    /// Both, in UI order.
    pub const ALL: [Placement; 2] = [Placement::Hop, Placement::Once];

    /// URL name (`hop`, `once`).
    pub fn name(self) -> &'static str {
        match self {
            Placement::Hop => "hop",
            Placement::Once => "once",
        }
    }

    /// Parses a [`Placement::name`].
    pub fn from_name(s: &str) -> Option<Placement> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// Everything a compressed run needs besides the schedule: the codec, where
/// it applies, and the gradient-like inputs it runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressedSetup {
    /// Scheme, block size and scale storage (never [`Scheme::None`] here).
    pub compression: Compression,
    /// Hop or once.
    pub placement: Placement,
    /// The inputs' distribution ([`super::compress::gradient_at`]).
    pub shape: GradientShape,
}

/// Why a compressed payload or run cannot be processed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum WireError {
    /// Compression needs a float dtype.
    #[error("compression applies to fp32, fp16 and bf16 data, not {0}")]
    NotFloat(DType),
    /// A payload's length is not the codec's length for its element count.
    #[error("a compressed payload of {elems} elements must be {want} bytes, got {got}")]
    Length {
        elems: usize,
        want: usize,
        got: usize,
    },
    /// `placement=once` is defined for AllReduce only.
    #[error(
        "placement=once is defined for AllReduce (quantise, AllGather, reduce locally), not {0}"
    )]
    OnceNeedsAllReduce(&'static str),
}

/// Bytes on the wire for a payload of `elems` elements (module docs):
/// `elems + ceil(elems / block) · scale bytes`.
pub fn wire_len(c: &Compression, elems: usize) -> usize {
    elems + elems.div_ceil(c.block.max(1)) * c.scale.bytes() as usize
}

fn to_f32(dtype: DType, payload: &[u8]) -> Result<Vec<f32>, WireError> {
    Ok(match dtype {
        DType::Fp32 => payload
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        DType::Fp16 => payload
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        DType::Bf16 => payload
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        d => return Err(WireError::NotFloat(d)),
    })
}

/// Writes `xs` into `out` in `dtype` (round to nearest even for fp16/bf16).
/// Shape: `out.len() == xs.len() · dtype size`.
fn from_f32(dtype: DType, xs: &[f32], out: &mut [u8]) {
    match dtype {
        DType::Fp32 => out
            .chunks_exact_mut(4)
            .zip(xs)
            .for_each(|(o, x)| o.copy_from_slice(&x.to_le_bytes())),
        DType::Fp16 => out
            .chunks_exact_mut(2)
            .zip(xs)
            .for_each(|(o, x)| o.copy_from_slice(&half::f16::from_f32(*x).to_le_bytes())),
        DType::Bf16 => out
            .chunks_exact_mut(2)
            .zip(xs)
            .for_each(|(o, x)| o.copy_from_slice(&half::bf16::from_f32(*x).to_le_bytes())),
        DType::Int32 | DType::Int8 => {}
    }
}

/// Encodes a payload (whole elements of a float `dtype`) to its wire bytes
/// ([`wire_len`] long; a copy for [`Scheme::None`]).
///
/// Errors: [`WireError::NotFloat`].
pub fn encode(c: &Compression, dtype: DType, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    if c.scheme == Scheme::None {
        return Ok(payload.to_vec());
    }
    let q = quantize(c, &to_f32(dtype, payload)?);
    let mut wire = q.codes;
    wire.reserve(q.scales.len() * c.scale.bytes() as usize);
    for s in q.scales {
        match c.scale {
            ScaleType::Fp16 => wire.extend_from_slice(&half::f16::from_f32(s).to_le_bytes()),
            ScaleType::Fp32 => wire.extend_from_slice(&s.to_le_bytes()),
        }
    }
    Ok(wire)
}

/// Decodes `elems` elements from `wire` to f32 values.
///
/// Errors: [`WireError::Length`] if `wire` is not [`wire_len`] bytes.
pub fn decode_f32(c: &Compression, wire: &[u8], elems: usize) -> Result<Vec<f32>, WireError> {
    let want = wire_len(c, elems);
    if wire.len() != want {
        return Err(WireError::Length {
            elems,
            want,
            got: wire.len(),
        });
    }
    let (codes, scale_bytes) = wire.split_at(elems);
    let scales = match c.scale {
        ScaleType::Fp16 => scale_bytes
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        ScaleType::Fp32 => scale_bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    };
    Ok(dequantize(
        c,
        &Quantized {
            codes: codes.to_vec(),
            scales,
        },
    ))
}

/// Decodes `wire` into `out` (`elems · dtype size` bytes of `dtype`; a copy
/// for [`Scheme::None`]).
///
/// Errors: [`WireError::Length`], [`WireError::NotFloat`].
pub fn decode(c: &Compression, dtype: DType, wire: &[u8], out: &mut [u8]) -> Result<(), WireError> {
    let elems = out.len() / dtype.size_bytes();
    if c.scheme == Scheme::None {
        if wire.len() != out.len() {
            return Err(WireError::Length {
                elems,
                want: out.len(),
                got: wire.len(),
            });
        }
        out.copy_from_slice(wire);
        return Ok(());
    }
    if !dtype.is_float() {
        return Err(WireError::NotFloat(dtype));
    }
    let xs = decode_f32(c, wire, elems)?;
    from_f32(dtype, &xs, out);
    Ok(())
}

/// Writes rank `rank`'s gradient-like input elements `elems` into `out`
/// (`dtype`, rounded to nearest even). Element `i` is
/// [`super::compress::gradient_at`]`(shape, seed, rank, i)`.
pub fn fill_gradients(
    shape: GradientShape,
    dtype: DType,
    seed: u64,
    rank: usize,
    elems: Range<usize>,
    out: &mut [u8],
) {
    let xs = gradient_range(shape, seed, rank, elems.start as u64..elems.end as u64);
    from_f32(dtype, &xs, out);
}

/// Rank `rank`'s initial buffer for `schedule` with gradient inputs: like
/// [`super::execute::initial_buffer`] (inputs in the blocks the primitive
/// gives the rank, zeros elsewhere).
pub fn initial_buffer(
    schedule: &Schedule,
    setup: &CompressedSetup,
    dtype: DType,
    seed: u64,
    rank: usize,
    elems: usize,
) -> Vec<u8> {
    super::execute::initial_buffer_with(schedule, dtype, rank, elems, |r, out| {
        fill_gradients(setup.shape, dtype, seed, rank, r, out)
    })
}

/// `placement=once`: rank `rank`'s initial buffer for the AllGather of
/// compressed inputs: `ranks` blocks of [`wire_len`]`(elems)` bytes, block
/// `rank` holding its encoded input (`elems` gradient elements), the rest
/// zero.
///
/// Errors: [`WireError::NotFloat`].
pub fn once_initial_buffer(
    setup: &CompressedSetup,
    dtype: DType,
    seed: u64,
    rank: usize,
    ranks: usize,
    elems: usize,
) -> Result<Vec<u8>, WireError> {
    let w = wire_len(&setup.compression, elems);
    let mut input = vec![0u8; elems * dtype.size_bytes()];
    fill_gradients(setup.shape, dtype, seed, rank, 0..elems, &mut input);
    let mut buf = vec![0u8; ranks * w];
    buf[rank * w..(rank + 1) * w].copy_from_slice(&encode(&setup.compression, dtype, &input)?);
    Ok(buf)
}

/// `placement=once`: after the AllGather, decodes the `ranks` compressed
/// inputs in `gathered` and reduces them in f32 in rank order, rounding to
/// `dtype` once: the rank's `elems`-element output.
///
/// Errors: [`WireError::Length`] if `gathered` is not `ranks ·`
/// [`wire_len`]`(elems)` bytes; [`WireError::NotFloat`].
pub fn once_reduce(
    c: &Compression,
    dtype: DType,
    op: ReduceOp,
    gathered: &[u8],
    ranks: usize,
    elems: usize,
) -> Result<Vec<u8>, WireError> {
    if !dtype.is_float() {
        return Err(WireError::NotFloat(dtype));
    }
    let w = wire_len(c, elems);
    if gathered.len() != ranks * w {
        return Err(WireError::Length {
            elems: ranks * elems,
            want: ranks * w,
            got: gathered.len(),
        });
    }
    let mut acc: Vec<f32> = Vec::new();
    for r in 0..ranks {
        let xs = decode_f32(c, &gathered[r * w..(r + 1) * w], elems)?;
        if r == 0 {
            acc = xs;
            continue;
        }
        for (a, x) in acc.iter_mut().zip(xs) {
            *a = match op {
                ReduceOp::Sum => *a + x,
                ReduceOp::Prod => *a * x,
                ReduceOp::Max => a.max(x),
                ReduceOp::Min => a.min(x),
            };
        }
    }
    let mut out = vec![0u8; elems * dtype.size_bytes()];
    from_f32(dtype, &acc, &mut out);
    Ok(out)
}

/// Checks that `setup` can run `primitive` on `dtype`.
///
/// Errors: [`WireError::NotFloat`], [`WireError::OnceNeedsAllReduce`].
pub fn check_applies(
    setup: &CompressedSetup,
    primitive: Primitive,
    dtype: DType,
) -> Result<(), WireError> {
    if !dtype.is_float() {
        return Err(WireError::NotFloat(dtype));
    }
    if setup.placement == Placement::Once && primitive != Primitive::AllReduce {
        return Err(WireError::OnceNeedsAllReduce(primitive.name()));
    }
    Ok(())
}

/// Bytes every transfer of `schedule` puts on the wire for a message of
/// `elems` elements of `dtype`: `(uncompressed, compressed)` where the
/// compressed count applies [`wire_len`] to every transfer's payload.
pub fn schedule_wire_bytes(
    schedule: &Schedule,
    c: &Compression,
    dtype: DType,
    elems: usize,
) -> (u64, u64) {
    let es = dtype.size_bytes() as u64;
    let (mut raw, mut wire) = (0u64, 0u64);
    for t in schedule.steps.iter().flat_map(|s| &s.transfers) {
        let k = schedule.range_elems(elems, t.first, t.count).len();
        raw += k as u64 * es;
        wire += if c.scheme == Scheme::None {
            k as u64 * es
        } else {
            wire_len(c, k) as u64
        };
    }
    (raw, wire)
}

/// What a compressed run came to, against the uncompressed exact result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressedReport {
    /// Error statistics over every output element of every rank.
    pub stats: ErrorStats,
    /// Bytes the compressed run puts on the wire (all transfers).
    pub wire_bytes: u64,
    /// Bytes the same collective puts on the wire uncompressed (the
    /// collective's schedule, every transfer at the dtype's size).
    pub uncompressed_bytes: u64,
}

/// The reference every worker must equal, and the error report.
#[derive(Clone, Debug)]
pub struct CompressedCheck {
    /// Per rank, the output bytes a correct run produces (hop: the whole
    /// buffer; once: the `elems`-element result).
    pub outputs: Vec<Vec<u8>>,
    /// The error report.
    pub report: CompressedReport,
    dtype: DType,
    /// Per rank, the element ranges that are output.
    output_ranges: Vec<Vec<Range<usize>>>,
}

impl CompressedCheck {
    /// Runs the compressed reference for `run_schedule` (hop: the
    /// collective's schedule; once: the AllGather schedule) and compares it
    /// with the exact result of `collective` (the uncompressed collective's
    /// schedule, which defines outputs and the uncompressed byte count).
    ///
    /// Errors: [`WireError`] (see [`check_applies`]).
    pub fn prepare(
        collective: &Schedule,
        run_schedule: &Schedule,
        setup: &CompressedSetup,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
    ) -> Result<CompressedCheck, WireError> {
        let mut b =
            CompressedCheckBuilder::new(collective, run_schedule, setup, dtype, op, seed, elems)?;
        while !b.advance()? {}
        Ok(b.finish())
    }

    /// Compares rank `rank`'s output with the reference, bit for bit, on
    /// its output elements: `(mismatched, checked, first mismatch as
    /// (element, got, want))`. A buffer of the wrong length mismatches
    /// everywhere.
    pub fn compare(&self, rank: usize, output: &[u8]) -> (usize, usize, Option<(usize, f64, f64)>) {
        let es = self.dtype.size_bytes();
        let (Some(want), Some(ranges)) = (self.outputs.get(rank), self.output_ranges.get(rank))
        else {
            return (0, 0, None);
        };
        let checked: usize = ranges.iter().map(|r| r.len()).sum();
        if output.len() != want.len() {
            return (checked, checked, None);
        }
        let (mut bad, mut first) = (0usize, None);
        for r in ranges {
            let (a, b) = (r.start * es, r.end * es);
            if output[a..b] == want[a..b] {
                continue;
            }
            for j in r.clone() {
                if output[j * es..(j + 1) * es] != want[j * es..(j + 1) * es] {
                    bad += 1;
                    if first.is_none() {
                        first = Some((
                            j,
                            self.dtype.read_f64(output, j),
                            self.dtype.read_f64(want, j),
                        ));
                    }
                }
            }
        }
        (bad, checked, first)
    }
}

/// Where a [`CompressedCheckBuilder`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Generating block `b` of rank `r`'s input.
    Inputs(usize, usize),
    /// Hop, step `k`: reading transfer `i`'s payload through the codec.
    HopRead(usize, usize),
    /// Hop, step `k`: applying transfer `i` at its receiver.
    HopApply(usize, usize),
    /// Once: encoding rank `r`'s input.
    Once(usize),
    /// Comparing chunk `c` of rank `r`'s reference output with the exact
    /// result.
    Exact(usize, usize),
    /// Finished.
    Done,
}

/// [`CompressedCheck::prepare`] in small units of work (one block of one
/// rank's input, one transfer, one output chunk), so that a page can yield
/// to its event loop between them instead of freezing for seconds.
#[derive(Debug)]
pub struct CompressedCheckBuilder {
    collective: Schedule,
    run: Schedule,
    setup: CompressedSetup,
    dtype: DType,
    op: ReduceOp,
    seed: u64,
    elems: usize,
    stage: Stage,
    inputs: Vec<Vec<u8>>,
    outputs: Vec<Vec<u8>>,
    payloads: Vec<Vec<u8>>,
    gathered: Vec<u8>,
    wire: u64,
    cache: HashMap<(Vec<usize>, usize), Vec<f64>>,
    acc: ErrorAccumulator,
    output_ranges: Vec<Vec<Range<usize>>>,
}

impl CompressedCheckBuilder {
    /// A builder for [`CompressedCheck::prepare`]'s arguments.
    ///
    /// Errors: [`WireError`] (see [`check_applies`]).
    pub fn new(
        collective: &Schedule,
        run_schedule: &Schedule,
        setup: &CompressedSetup,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
    ) -> Result<Self, WireError> {
        check_applies(setup, collective.primitive, dtype)?;
        Ok(CompressedCheckBuilder {
            collective: collective.clone(),
            run: run_schedule.clone(),
            setup: *setup,
            dtype,
            op,
            seed,
            elems,
            stage: Stage::Inputs(0, 0),
            inputs: Vec::with_capacity(collective.ranks),
            outputs: Vec::new(),
            payloads: Vec::new(),
            gathered: Vec::new(),
            wire: 0,
            cache: HashMap::new(),
            acc: ErrorAccumulator::default(),
            output_ranges: vec![Vec::new(); collective.ranks],
        })
    }

    /// The stage after the inputs are made.
    fn after_inputs(&mut self) -> Stage {
        let n = self.collective.ranks;
        match self.setup.placement {
            Placement::Hop => {
                self.outputs = self.inputs.clone();
                self.after_step(None)
            }
            Placement::Once => {
                self.gathered = vec![0u8; n * wire_len(&self.setup.compression, self.elems)];
                Stage::Once(0)
            }
        }
    }

    /// The stage after hop step `done` (`None`: before the first).
    fn after_step(&self, done: Option<usize>) -> Stage {
        let next = done.map_or(0, |k| k + 1);
        match (next..self.run.steps.len()).find(|&k| !self.run.steps[k].transfers.is_empty()) {
            Some(k) => Stage::HopRead(k, 0),
            None => Stage::Exact(0, 0),
        }
    }

    /// Does one unit of work; `Ok(true)` once everything is done.
    ///
    /// Errors: [`WireError`] from the codec.
    pub fn advance(&mut self) -> Result<bool, WireError> {
        let n = self.collective.ranks;
        let (dtype, elems) = (self.dtype, self.elems);
        let c = self.setup.compression;
        let es = dtype.size_bytes();
        let wire_err = |e: super::execute::ExecuteError| match e {
            super::execute::ExecuteError::Wire(w) => w,
            other => panic!("compressed reference: {other}"),
        };
        self.stage = match self.stage {
            Stage::Inputs(r, b) => {
                if b == 0 {
                    self.inputs
                        .push(vec![0u8; self.collective.buffer_elems(elems) * es]);
                }
                let k = self.collective.chunks_per_block().max(1);
                if self.collective.holds_input(r, b * k) {
                    let range = self.collective.range_elems(elems, b * k, k);
                    fill_gradients(
                        self.setup.shape,
                        dtype,
                        self.seed,
                        r,
                        range.clone(),
                        &mut self.inputs[r][range.start * es..range.end * es],
                    );
                }
                if b + 1 < self.collective.blocks() {
                    Stage::Inputs(r, b + 1)
                } else if r + 1 < n {
                    Stage::Inputs(r + 1, 0)
                } else {
                    self.after_inputs()
                }
            }
            Stage::HopRead(k, i) => {
                let (data, w) = super::execute::transfer_payload(
                    &self.run,
                    k,
                    i,
                    dtype,
                    &self.outputs,
                    elems,
                    Some(&c),
                )
                .map_err(wire_err)?;
                self.wire += w;
                self.payloads.push(data);
                if i + 1 < self.run.steps[k].transfers.len() {
                    Stage::HopRead(k, i + 1)
                } else {
                    Stage::HopApply(k, 0)
                }
            }
            Stage::HopApply(k, i) => {
                super::execute::apply_transfer(
                    &self.run,
                    k,
                    i,
                    dtype,
                    self.op,
                    &mut self.outputs,
                    elems,
                    &self.payloads[i],
                );
                if i + 1 < self.run.steps[k].transfers.len() {
                    Stage::HopApply(k, i + 1)
                } else {
                    self.payloads.clear();
                    self.after_step(Some(k))
                }
            }
            Stage::Once(r) => {
                let w = wire_len(&c, elems);
                let code = encode(&c, dtype, &self.inputs[r][..elems * es])?;
                self.gathered[r * w..(r + 1) * w].copy_from_slice(&code);
                if r + 1 < n {
                    Stage::Once(r + 1)
                } else {
                    let out = once_reduce(&c, dtype, self.op, &self.gathered, n, elems)?;
                    self.outputs = vec![out; n];
                    self.gathered = Vec::new();
                    self.wire =
                        schedule_wire_bytes(&self.run, &Compression::default(), DType::Int8, n * w)
                            .0;
                    Stage::Exact(0, 0)
                }
            }
            Stage::Exact(rank, chunk) => {
                // The exact (f64, uncompressed) value of every output
                // element: the exact reduction of its contributors'
                // inputs, cached per (contributors, source chunk).
                let (collective, inputs, op) = (&self.collective, &self.inputs, self.op);
                if let Some((from, src)) = collective.expected_after(rank, chunk) {
                    let sr = collective.chunk_elems(elems, src);
                    let exact = self.cache.entry((from.clone(), src)).or_insert_with(|| {
                        let read = |q: usize| -> Vec<f64> {
                            sr.clone().map(|i| dtype.read_f64(&inputs[q], i)).collect()
                        };
                        let mut x = read(from[0]);
                        for &q in &from[1..] {
                            op.exact_into(dtype, &mut x, &read(q));
                        }
                        x
                    });
                    let out = &self.outputs[rank];
                    let dst = collective.chunk_elems(elems, chunk);
                    for (j, &e) in dst.clone().zip(exact.iter()) {
                        self.acc.add(e, dtype.read_f64(out, j));
                    }
                    let ranges = &mut self.output_ranges[rank];
                    match ranges.last_mut() {
                        Some(r) if r.end == dst.start => r.end = dst.end,
                        _ => ranges.push(dst),
                    }
                }
                if chunk + 1 < collective.chunks {
                    Stage::Exact(rank, chunk + 1)
                } else if rank + 1 < n {
                    Stage::Exact(rank + 1, 0)
                } else {
                    self.inputs = Vec::new();
                    self.cache = HashMap::new();
                    Stage::Done
                }
            }
            Stage::Done => Stage::Done,
        };
        Ok(self.stage == Stage::Done)
    }

    /// The check, once [`Self::advance`] returned `true` (before that, a
    /// check of what is done so far).
    pub fn finish(self) -> CompressedCheck {
        let (uncompressed_bytes, _) = schedule_wire_bytes(
            &self.collective,
            &Compression::default(),
            self.dtype,
            self.elems,
        );
        CompressedCheck {
            outputs: self.outputs,
            report: CompressedReport {
                stats: self.acc.finish(),
                wire_bytes: self.wire,
                uncompressed_bytes,
            },
            dtype: self.dtype,
            output_ranges: self.output_ranges,
        }
    }
}

/// Assumed throughput of the quantise / dequantise / local-reduce kernels,
/// GB/s of uncompressed data processed. **An assumption**, not a
/// measurement: these are memory-bound elementwise kernels, and 400 GB/s is
/// a small fraction of the HBM bandwidth of the modelled devices (TB/s
/// class: HBM2e on 910B, HBM3 3.35 TB/s on H100 SXM); the UI shows it next
/// to the codec time.
pub const CODEC_GBPS: f64 = 400.0;

/// The modelled time of a compressed run, next to the uncompressed one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressedEstimate {
    /// Transfers (and any reduces) with compressed payloads, µs.
    pub transfer_us: f64,
    /// Quantise, dequantise and (once) local-reduce work not overlapped
    /// with transfers, µs, at [`CODEC_GBPS`].
    pub codec_us: f64,
    /// `transfer_us + codec_us`.
    pub time_us: f64,
    /// The same collective uncompressed, µs.
    pub uncompressed_us: f64,
    /// Bytes on the wire, compressed (all transfers).
    pub wire_bytes: u64,
    /// Bytes on the wire, uncompressed collective.
    pub uncompressed_bytes: u64,
    /// The transfer timeline (hop: the collective's steps with compressed
    /// payloads; once: the AllGather's steps).
    pub estimate: super::cost::Estimate,
}

impl CompressedEstimate {
    /// Relative change of the modelled time vs uncompressed (−0.4 = 40 %
    /// faster).
    pub fn time_change(&self) -> f64 {
        if self.uncompressed_us > 0.0 {
            self.time_us / self.uncompressed_us - 1.0
        } else {
            0.0
        }
    }
}

/// Models a compressed run of `collective` (a message of `bytes` bytes of
/// `dtype` on `topo`, cut into `slices` as [`super::cost::estimate_sliced`]):
/// `run_schedule` is the collective itself for
/// [`Placement::Hop`], the AllGather of the compressed inputs for
/// [`Placement::Once`].
///
/// - Hop: the event simulation of the collective with every link's
///   bandwidth divided by `wire_bytes / uncompressed_bytes` (each transfer
///   then takes its compressed size's time; α and reduce costs unchanged),
///   plus, per step, the busiest rank's encode + decode bytes at
///   [`CODEC_GBPS`].
/// - Once: the simulation of the AllGather of `ranks · wire_len(S)` bytes,
///   plus one encode of `S`, `ranks` decodes of `S` and `ranks − 1` local
///   reduces of `S` at [`CODEC_GBPS`].
///
/// Errors: the topology's (ranks that do not fit, no route).
pub fn estimate(
    collective: &Schedule,
    run_schedule: &Schedule,
    setup: &CompressedSetup,
    topo: &super::topology::Topology,
    bytes: u64,
    dtype: DType,
    slices: super::cost::Slices,
) -> Result<CompressedEstimate, super::topology::TopologyError> {
    use super::cost;
    let es = dtype.size_bytes() as u64;
    let elems = (bytes / es) as usize;
    let c = &setup.compression;
    let plain = cost::estimate_sliced(collective, topo, bytes, dtype, slices)?;
    let (uncompressed_bytes, hop_wire) = schedule_wire_bytes(collective, c, dtype, elems);
    let codec_rate = CODEC_GBPS * 1e3; // bytes per µs
    let (mut est, wire_bytes, codec_us) = match setup.placement {
        Placement::Hop => {
            let ratio = if uncompressed_bytes > 0 {
                hop_wire as f64 / uncompressed_bytes as f64
            } else {
                1.0
            };
            let mut scaled = topo.clone();
            for l in &mut scaled.links {
                l.bandwidth_gbps /= ratio;
            }
            let e = cost::estimate_sliced(collective, &scaled, bytes, dtype, slices)?;
            let mut codec = 0.0;
            let mut per_rank = vec![0u64; collective.ranks];
            for step in &collective.steps {
                per_rank.iter_mut().for_each(|b| *b = 0);
                for t in &step.transfers {
                    let b = collective.range_elems(elems, t.first, t.count).len() as u64 * es;
                    per_rank[t.src] += b;
                    per_rank[t.dst] += b;
                }
                codec += per_rank.iter().copied().max().unwrap_or(0) as f64 / codec_rate;
            }
            (e, hop_wire, codec)
        }
        Placement::Once => {
            let n = collective.ranks as u64;
            let w = wire_len(c, elems) as u64;
            let e = cost::estimate_sliced(run_schedule, topo, n * w, DType::Int8, slices)?;
            let (raw, _) = schedule_wire_bytes(
                run_schedule,
                &Compression::default(),
                DType::Int8,
                (n * w) as usize,
            );
            let codec = (1 + n + n.saturating_sub(1)) as f64 * bytes as f64 / codec_rate;
            (e, raw, codec)
        }
    };
    let transfer_us = est.time_us;
    let time_us = transfer_us + codec_us;
    // Report it as the collective of S bytes (nccl-tests conventions).
    est.bytes = bytes;
    est.time_us = time_us;
    est.algbw_gbps = if time_us > 0.0 {
        bytes as f64 / (time_us * 1e3)
    } else {
        0.0
    };
    est.busbw_gbps = est.algbw_gbps * collective.primitive.busbw_factor(collective.ranks);
    Ok(CompressedEstimate {
        transfer_us,
        codec_us,
        time_us,
        uncompressed_us: plain.time_us,
        wire_bytes,
        uncompressed_bytes,
        estimate: est,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::algorithm::{build, Algorithm};

    fn int8(block: usize) -> Compression {
        Compression {
            scheme: Scheme::Int8,
            block,
            scale: ScaleType::Fp16,
        }
    }

    #[test]
    fn wire_format_is_codes_then_scales() {
        let c = int8(32);
        assert_eq!(wire_len(&c, 64), 64 + 2 * 2);
        assert_eq!(wire_len(&c, 65), 65 + 3 * 2);
        // fp32 payload [0.5, -1.0, 0.25]: scale = 1/127 (rounded to fp16).
        let xs = [0.5f32, -1.0, 0.25];
        let payload: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let wire = encode(&c, DType::Fp32, &payload).unwrap();
        assert_eq!(wire.len(), 3 + 2);
        let scale = half::f16::from_f32(1.0 / 127.0).to_f32();
        let codes: Vec<i8> = wire[..3].iter().map(|&b| b as i8).collect();
        assert_eq!(
            codes,
            vec![
                (0.5 / scale).round() as i8,
                -127,
                (0.25 / scale).round() as i8
            ]
        );
        assert_eq!(half::f16::from_le_bytes([wire[3], wire[4]]).to_f32(), scale);
        let mut out = vec![0u8; 12];
        decode(&c, DType::Fp32, &wire, &mut out).unwrap();
        let back: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(back[1], -127.0 * scale);
        assert_eq!(back[0], codes[0] as f32 * scale);
        assert!(matches!(
            decode(&c, DType::Fp32, &wire[..4], &mut out),
            Err(WireError::Length {
                elems: 3,
                want: 5,
                got: 4
            })
        ));
        assert_eq!(
            encode(&c, DType::Int32, &payload),
            Err(WireError::NotFloat(DType::Int32))
        );
    }

    fn setup(placement: Placement) -> CompressedSetup {
        CompressedSetup {
            compression: int8(256),
            placement,
            shape: GradientShape::Normal,
        }
    }

    #[test]
    fn hop_allreduce_error_and_wire_bytes_are_what_8_bit_blocks_give() {
        let n = 8;
        let elems = 1 << 16;
        let s = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let chk = CompressedCheck::prepare(
            &s,
            &s,
            &setup(Placement::Hop),
            DType::Fp16,
            ReduceOp::Sum,
            1,
            elems,
        )
        .unwrap();
        let r = &chk.report;
        // Ring AllReduce moves 2(n-1)/n · S per rank: 2·7·2^16·2 bytes in all.
        assert_eq!(r.uncompressed_bytes, 2 * 7 * (1 << 16) * 2);
        let ratio = r.wire_bytes as f64 / r.uncompressed_bytes as f64;
        let want = (1.0 + 2.0 / 256.0) / 2.0;
        assert!((ratio / want - 1.0).abs() < 0.01, "ratio {ratio} vs {want}");
        assert!(
            (0.001..0.05).contains(&r.stats.rel_l2_error),
            "rel L2 {}",
            r.stats.rel_l2_error
        );
        assert_eq!(r.stats.elements, n * elems);
    }

    #[test]
    fn once_has_less_error_and_more_bytes_than_hop() {
        let n = 8;
        let elems = 1 << 14;
        let ar = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let ag = build(Algorithm::Ring, Primitive::AllGather, n).unwrap();
        let hop = CompressedCheck::prepare(
            &ar,
            &ar,
            &setup(Placement::Hop),
            DType::Fp16,
            ReduceOp::Sum,
            3,
            elems,
        )
        .unwrap();
        let once = CompressedCheck::prepare(
            &ar,
            &ag,
            &setup(Placement::Once),
            DType::Fp16,
            ReduceOp::Sum,
            3,
            elems,
        )
        .unwrap();
        assert!(once.report.stats.rel_l2_error < hop.report.stats.rel_l2_error);
        assert!(once.report.wire_bytes > hop.report.wire_bytes);
        // Once: ring AllGather of n blocks of wire_len(S) bytes: (n-1)·n·W.
        let w = wire_len(&int8(256), elems) as u64;
        assert_eq!(once.report.wire_bytes, 7 * 8 * w);
        // Every rank holds the same result.
        assert!(once.outputs.iter().all(|o| o == &once.outputs[0]));
        // A wrong output is found.
        let mut bad = once.outputs[2].clone();
        bad[10] ^= 1;
        let (m, checked, first) = once.compare(2, &bad);
        assert_eq!((m, checked), (1, elems));
        assert_eq!(first.map(|f| f.0), Some(5));
        assert_eq!(once.compare(2, &once.outputs[2]).0, 0);
    }

    #[test]
    fn modelled_time_is_compressed_transfers_plus_codec_work() {
        use crate::engine::topology::Topology;
        let topo = Topology::preset("910b-8").unwrap();
        let n = 8;
        let bytes = 16u64 << 20;
        let ar = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let ag = build(Algorithm::Ring, Primitive::AllGather, n).unwrap();
        let hop = estimate(
            &ar,
            &ar,
            &setup(Placement::Hop),
            &topo,
            bytes,
            DType::Fp16,
            crate::engine::cost::Slices::Fixed(1),
        )
        .unwrap();
        // Ring: 14 steps of S/8 per link; compressed ≈ half the bytes.
        let plain = crate::engine::cost::estimate(&ar, &topo, bytes, DType::Fp16).unwrap();
        assert_eq!(hop.uncompressed_us, plain.time_us);
        let ratio = hop.wire_bytes as f64 / hop.uncompressed_bytes as f64;
        let alpha_us = 14.0 * topo.links[0].latency_us;
        let beta_us = plain.time_us - alpha_us;
        assert!((hop.transfer_us - (alpha_us + beta_us * ratio)).abs() < 1e-6 * plain.time_us);
        // Each step every rank encodes S/8 and decodes S/8 (fp16 bytes).
        let codec = 14.0 * 2.0 * (bytes / 8) as f64 / (CODEC_GBPS * 1e3);
        assert!((hop.codec_us - codec).abs() < 1e-9);
        assert_eq!(hop.time_us, hop.transfer_us + hop.codec_us);
        assert!(hop.time_change() < -0.3, "{}", hop.time_change());
        let once = estimate(
            &ar,
            &ag,
            &setup(Placement::Once),
            &topo,
            bytes,
            DType::Fp16,
            crate::engine::cost::Slices::Fixed(1),
        )
        .unwrap();
        assert!(once.wire_bytes > hop.wire_bytes);
        assert_eq!(
            once.codec_us,
            (1 + 8 + 7) as f64 * bytes as f64 / (CODEC_GBPS * 1e3)
        );
        assert_eq!(once.estimate.bytes, bytes);
    }

    #[test]
    fn once_is_refused_for_other_primitives_and_int_dtypes() {
        let s = setup(Placement::Once);
        assert_eq!(
            check_applies(&s, Primitive::AllGather, DType::Fp16),
            Err(WireError::OnceNeedsAllReduce("allgather"))
        );
        assert_eq!(
            check_applies(&setup(Placement::Hop), Primitive::AllGather, DType::Int32),
            Err(WireError::NotFloat(DType::Int32))
        );
    }
}
