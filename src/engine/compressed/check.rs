//! The compressed reference every worker must equal bit for bit, built at
//! once ([`CompressedCheck::prepare`]) or in small units
//! ([`CompressedCheckBuilder`]), and the error report against the
//! uncompressed exact result.

use super::*;
use crate::engine::check::OutputBytes;
use crate::engine::execute::ExecuteError;
use crate::engine::quantization::{ErrorAccumulator, ErrorStats};
use std::collections::HashMap;

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
    /// Errors: [`ExecuteError`]: the codec's [`WireError`] (see
    /// [`check_applies`]), or a transfer the schedule cannot carry out.
    pub fn prepare(
        collective: &Schedule,
        run_schedule: &Schedule,
        setup: &CompressedSetup,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
    ) -> Result<CompressedCheck, ExecuteError> {
        let mut b =
            CompressedCheckBuilder::new(collective, run_schedule, setup, dtype, op, seed, elems)?;
        while !b.advance()? {}
        Ok(b.finish())
    }

    /// Compares rank `rank`'s output with the reference, bit for bit, on
    /// its output elements: `(mismatched, checked, first mismatch as
    /// (element, got, want))`. A buffer of the wrong length mismatches
    /// everywhere. [`Self::begin`] and [`Self::advance`] in one go.
    pub fn compare(&self, rank: usize, output: &[u8]) -> (usize, usize, Option<(usize, f64, f64)>) {
        let mut c = self.begin(rank);
        while !self.advance(&mut c, output) {}
        (c.mismatched, c.checked, c.first)
    }

    /// Starts comparing rank `rank`'s output ([`Self::advance`]).
    pub fn begin(&self, rank: usize) -> CompressedCompare {
        CompressedCompare {
            rank,
            range: 0,
            at: 0,
            mismatched: 0,
            checked: 0,
            first: None,
            scratch: Vec::new(),
        }
    }

    /// Compares the next piece (at most
    /// [`crate::engine::check::CHECK_PIECE_ELEMS`] elements: a comparison,
    /// no arithmetic) of `c`'s rank's `output`, read where it is
    /// ([`OutputBytes`]: the page leaves a worker's buffer outside wasm
    /// memory); `true` once the whole output is compared. A rank without a
    /// reference compares nothing.
    pub fn advance<O: OutputBytes + ?Sized>(&self, c: &mut CompressedCompare, output: &O) -> bool {
        let es = self.dtype.size_bytes();
        let (Some(want), Some(ranges)) = (self.outputs.get(c.rank), self.output_ranges.get(c.rank))
        else {
            return true;
        };
        if output.len() != want.len() {
            let all: usize = ranges.iter().map(|r| r.len()).sum();
            (c.mismatched, c.checked, c.first) = (all, all, None);
            return true;
        }
        let Some(r) = ranges.get(c.range) else {
            return true;
        };
        let a = (r.start + c.at).min(r.end);
        let b = (a + crate::engine::check::CHECK_PIECE_ELEMS).min(r.end);
        let got = output.piece(a * es..b * es, &mut c.scratch);
        let expected = &want[a * es..b * es];
        if !crate::engine::check::same_bytes(got, expected) {
            for j in 0..b - a {
                let (g, w) = (&got[j * es..(j + 1) * es], &expected[j * es..(j + 1) * es]);
                if g != w {
                    c.mismatched += 1;
                    if c.first.is_none() {
                        c.first =
                            Some((a + j, self.dtype.read_f64(g, 0), self.dtype.read_f64(w, 0)));
                    }
                }
            }
        }
        c.checked += b - a;
        if b < r.end {
            c.at = b - r.start;
        } else {
            c.range += 1;
            c.at = 0;
        }
        c.range >= ranges.len()
    }
}

/// One rank's comparison with the compressed reference in progress
/// ([`CompressedCheck::begin`], [`CompressedCheck::advance`]).
#[derive(Debug)]
pub struct CompressedCompare {
    /// The rank.
    pub rank: usize,
    /// Index of the output range being compared, and elements done in it.
    range: usize,
    at: usize,
    /// Elements that differ so far.
    pub mismatched: usize,
    /// Elements compared so far.
    pub checked: usize,
    /// The first mismatch: (element, got, want).
    pub first: Option<(usize, f64, f64)>,
    /// A piece copied in from outside wasm memory.
    scratch: Vec<u8>,
}

/// Where a [`CompressedCheckBuilder`] is. Every stage works on one piece
/// of at most [`CompressedCheckBuilder::piece`] elements, starting `at`
/// elements into what it walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Generating rank `r`'s input in block `b`, from element `at` of the
    /// block (hop: the output starts as the same bytes).
    Inputs { r: usize, b: usize, at: usize },
    /// Hop, step `k`: reading transfer `i`'s payload through the codec.
    HopRead { k: usize, i: usize, at: usize },
    /// Hop, step `k`: applying transfer `i` at its receiver.
    HopApply { k: usize, i: usize, at: usize },
    /// Once: encoding every rank's input elements from `at`, decoding and
    /// reducing them into every rank's output.
    Once { at: usize },
    /// Comparing chunk `c` of rank `r`'s reference output with the exact
    /// result, from element `at` of the chunk.
    Exact { r: usize, c: usize, at: usize },
    /// Finished.
    Done,
}

/// Elements one unit of [`CompressedCheckBuilder::advance`] aims at on
/// `ranks` ranks, before rounding up to a multiple of the codec's block:
/// the plain checker's piece ([`crate::engine::check::piece_elems`],
/// 64K elements up to 8 ranks, fewer beyond), because a `once` unit
/// encodes a piece of every rank's input and an exact-result unit reads
/// every contributor's: the work of a unit stays about the same at any
/// rank count. A unit of a whole transfer, input block or chunk is one
/// main-thread task of 65–175 ms on the page for an 8 × 32 MiB fp8 run
/// (traced), over the page's bound of 100 ms a task.
pub fn compressed_piece_elems(ranks: usize) -> usize {
    crate::engine::check::piece_elems(ranks)
}

/// [`CompressedCheck::prepare`] in small units of work (one piece of one
/// rank's input, of one transfer, or of one output chunk, at most
/// [`Self::piece`] elements), so that a page can yield to its event loop
/// between them instead of freezing for seconds. Pieces of a transfer are
/// cut at multiples of the codec's block, where blocks restart anyway, so
/// the result equals whole-transfer encoding bit for bit (a test checks it
/// against the executor and [`once_reduce`]).
#[derive(Debug)]
pub struct CompressedCheckBuilder {
    collective: Schedule,
    run: Schedule,
    setup: CompressedSetup,
    dtype: DType,
    op: ReduceOp,
    seed: u64,
    elems: usize,
    piece: usize,
    stage: Stage,
    inputs: Vec<Vec<u8>>,
    outputs: Vec<Vec<u8>>,
    payloads: Vec<Vec<u8>>,
    wire: u64,
    cache: HashMap<(Vec<usize>, usize, usize), Vec<f64>>,
    acc: ErrorAccumulator,
    output_ranges: Vec<Vec<Range<usize>>>,
}

impl CompressedCheckBuilder {
    /// A builder for [`CompressedCheck::prepare`]'s arguments.
    ///
    /// Errors: [`ExecuteError`]: the codec's [`WireError`] (see
    /// [`check_applies`]); with `hop` placement, a run schedule whose
    /// ranks or buffer layout are not the collective's
    /// ([`ExecuteError::RankCount`], [`ExecuteError::BufferLength`]) or
    /// with a transfer it cannot carry out ([`ExecuteError::BadTransfer`]),
    /// as the reference executor checks them before it runs.
    pub fn new(
        collective: &Schedule,
        run_schedule: &Schedule,
        setup: &CompressedSetup,
        dtype: DType,
        op: ReduceOp,
        seed: u64,
        elems: usize,
    ) -> Result<Self, ExecuteError> {
        check_applies(setup, collective.primitive, dtype, op)?;
        if setup.placement == Placement::Hop {
            // The hop run moves the collective's buffers.
            let run = run_schedule;
            if run.ranks != collective.ranks {
                return Err(ExecuteError::RankCount {
                    want: run.ranks,
                    got: collective.ranks,
                });
            }
            let es = dtype.size_bytes();
            let (want, len) = (
                run.buffer_elems(elems) * es,
                collective.buffer_elems(elems) * es,
            );
            if want != len {
                return Err(ExecuteError::BufferLength {
                    rank: 0,
                    len,
                    want,
                    dtype,
                });
            }
            for (step, st) in run.steps.iter().enumerate() {
                for index in 0..st.transfers.len() {
                    run.check_transfer(step, index, Some(elems))?;
                }
            }
        }
        let mut b = CompressedCheckBuilder {
            collective: collective.clone(),
            run: run_schedule.clone(),
            setup: *setup,
            dtype,
            op,
            seed,
            elems,
            piece: 0,
            stage: Stage::Inputs { r: 0, b: 0, at: 0 },
            inputs: Vec::with_capacity(collective.ranks),
            outputs: Vec::new(),
            payloads: Vec::new(),
            wire: 0,
            cache: HashMap::new(),
            acc: ErrorAccumulator::default(),
            output_ranges: vec![Vec::new(); collective.ranks],
        };
        b.set_piece(compressed_piece_elems(collective.ranks));
        Ok(b)
    }

    /// The same builder with units of about `target` elements (rounded up
    /// to a multiple of the codec's block, at least one block) instead of
    /// [`compressed_piece_elems`]: the result does not depend on it (tests
    /// cut small outputs into many pieces this way).
    pub fn with_piece_elems(mut self, target: usize) -> Self {
        self.set_piece(target);
        self
    }

    fn set_piece(&mut self, target: usize) {
        let block = self.setup.compression.block.max(1);
        self.piece = target.max(1).div_ceil(block) * block;
    }

    /// Elements one unit of [`Self::advance`] works on at most.
    pub fn piece(&self) -> usize {
        self.piece
    }

    /// The stage after the inputs are made.
    fn after_inputs(&mut self) -> Stage {
        match self.setup.placement {
            Placement::Hop => self.after_step(None),
            Placement::Once => {
                let len = self.elems * self.dtype.size_bytes();
                self.outputs = (0..self.collective.ranks)
                    .map(|_| Vec::with_capacity(len))
                    .collect();
                Stage::Once { at: 0 }
            }
        }
    }

    /// The stage after hop step `done` (`None`: before the first).
    fn after_step(&self, done: Option<usize>) -> Stage {
        let next = done.map_or(0, |k| k + 1);
        match (next..self.run.steps.len()).find(|&k| !self.run.steps[k].transfers.is_empty()) {
            Some(k) => Stage::HopRead { k, i: 0, at: 0 },
            None => Stage::Exact { r: 0, c: 0, at: 0 },
        }
    }

    /// Elements of hop transfer `i` of step `k`.
    fn transfer_len(&self, k: usize, i: usize) -> usize {
        let t = &self.run.steps[k].transfers[i];
        self.run.range_elems(self.elems, t.first, t.count).len()
    }

    /// Does one unit of work (one piece, at most [`Self::piece`]
    /// elements); `Ok(true)` once everything is done.
    ///
    /// Errors: [`ExecuteError`]: the codec's [`WireError`], or a transfer
    /// the schedule cannot carry out ([`ExecuteError::BadTransfer`]).
    pub fn advance(&mut self) -> Result<bool, ExecuteError> {
        self.stage = match self.stage {
            Stage::Inputs { r, b, at } => self.input_piece(r, b, at),
            Stage::HopRead { k, i, at } => self.hop_read_piece(k, i, at)?,
            Stage::HopApply { k, i, at } => self.hop_apply_piece(k, i, at),
            Stage::Once { at } => self.once_piece(at)?,
            Stage::Exact { r, c, at } => self.exact_piece(r, c, at),
            Stage::Done => Stage::Done,
        };
        Ok(self.stage == Stage::Done)
    }

    /// Makes one piece of rank `r`'s input in block `b` (hop: its output
    /// too, which starts as the same bytes), and says which piece comes
    /// next. Buffers are reserved, not zeroed, when a rank starts: each
    /// piece zeroes or fills only its own bytes, so no unit has to zero a
    /// whole 32 MiB buffer at once.
    fn input_piece(&mut self, r: usize, b: usize, at: usize) -> Stage {
        let (elems, piece) = (self.elems, self.piece);
        let es = self.dtype.size_bytes();
        let len = self.collective.buffer_elems(elems) * es;
        let hop = self.setup.placement == Placement::Hop;
        if b == 0 && at == 0 {
            self.inputs.push(Vec::with_capacity(len));
            if hop {
                self.outputs.push(Vec::with_capacity(len));
            }
        }
        let k = self.collective.chunks_per_block().max(1);
        let block = self.collective.range_elems(elems, b * k, k);
        let part = (block.start + at).min(block.end)..(block.start + at + piece).min(block.end);
        let input = &mut self.inputs[r];
        // Zeros up to the piece (a gap before the block, if any),
        // then the piece itself.
        input.resize(part.end * es, 0);
        if self.collective.holds_input(r, b * k) {
            fill_gradients(
                self.setup.shape,
                self.dtype,
                self.seed,
                r,
                part.clone(),
                &mut input[part.start * es..part.end * es],
            );
        }
        let last_block = b + 1 >= self.collective.blocks();
        if part.end >= block.end && last_block {
            // Past the last block: zeros (a scratch area, if any).
            input.resize(len, 0);
        }
        if hop {
            let from = self.outputs[r].len();
            let to = self.inputs[r].len();
            let (inputs, outputs) = (&self.inputs, &mut self.outputs);
            outputs[r].extend_from_slice(&inputs[r][from..to]);
        }
        if part.end < block.end {
            Stage::Inputs {
                r,
                b,
                at: at + piece,
            }
        } else if !last_block {
            Stage::Inputs { r, b: b + 1, at: 0 }
        } else if r + 1 < self.collective.ranks {
            Stage::Inputs {
                r: r + 1,
                b: 0,
                at: 0,
            }
        } else {
            self.after_inputs()
        }
    }

    /// Reads one piece of hop transfer `i` of step `k` through the codec
    /// into its payload. Every payload of a step is read before any is
    /// applied, because a step's transfers all see the buffers as they
    /// were before the step.
    fn hop_read_piece(&mut self, k: usize, i: usize, at: usize) -> Result<Stage, ExecuteError> {
        let (data, w) = crate::engine::execute::transfer_payload(
            &self.run,
            k,
            i,
            self.dtype,
            &self.outputs,
            self.elems,
            Some(&self.setup.compression),
            at..at + self.piece,
        )?;
        self.wire += w;
        if at == 0 {
            self.payloads.push(data);
        } else if let Some(p) = self.payloads.last_mut() {
            p.extend_from_slice(&data);
        }
        Ok(if at + self.piece < self.transfer_len(k, i) {
            Stage::HopRead {
                k,
                i,
                at: at + self.piece,
            }
        } else if i + 1 < self.run.steps[k].transfers.len() {
            Stage::HopRead { k, i: i + 1, at: 0 }
        } else {
            Stage::HopApply { k, i: 0, at: 0 }
        })
    }

    /// Applies one piece of hop transfer `i` of step `k`'s payload at its
    /// receiver; after the step's last transfer its payloads are dropped,
    /// since the next step reads its own.
    fn hop_apply_piece(&mut self, k: usize, i: usize, at: usize) -> Stage {
        let es = self.dtype.size_bytes();
        let len = self.transfer_len(k, i);
        let end = (at + self.piece).min(len);
        crate::engine::execute::apply_transfer(
            &self.run,
            k,
            i,
            self.dtype,
            self.op,
            &mut self.outputs,
            self.elems,
            &self.payloads[i][at * es..end * es],
            at,
        );
        if end < len {
            Stage::HopApply { k, i, at: end }
        } else if i + 1 < self.run.steps[k].transfers.len() {
            Stage::HopApply { k, i: i + 1, at: 0 }
        } else {
            self.payloads.clear();
            self.after_step(Some(k))
        }
    }

    /// Encodes one piece of every rank's input, decodes and reduces it
    /// into every rank's output (once: all ranks end with the same
    /// result). The wire bytes are counted once at the end, from the
    /// gathered encoded size, because the run moves whole encoded inputs
    /// rather than per-piece payloads.
    fn once_piece(&mut self, at: usize) -> Result<Stage, ExecuteError> {
        let (dtype, elems, c) = (self.dtype, self.elems, self.setup.compression);
        let es = dtype.size_bytes();
        let end = (at + self.piece).min(elems);
        let wires = self
            .inputs
            .iter()
            .map(|x| encode(&c, dtype, &x[at * es..end * es]))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = vec![0u8; (end - at) * es];
        reduce_wires(
            &c,
            dtype,
            self.op,
            wires.iter().map(Vec::as_slice),
            &mut out,
        )?;
        for o in &mut self.outputs {
            o.extend_from_slice(&out);
        }
        Ok(if end < elems {
            Stage::Once { at: end }
        } else {
            let n = self.collective.ranks;
            let w = wire_len(&c, elems);
            self.wire =
                schedule_wire_bytes(&self.run, &Compression::default(), DType::Int8, n * w).0;
            Stage::Exact { r: 0, c: 0, at: 0 }
        })
    }

    /// Compares one piece of chunk `chunk` of rank `rank`'s reference
    /// output with the exact (f64, uncompressed) value of every element:
    /// the exact reduction of its contributors' inputs. That value is
    /// cached per (contributors, source chunk, piece) because every rank
    /// that ends with the same chunk needs the same one. The inputs and
    /// cache are dropped at the end, since only the outputs are kept.
    fn exact_piece(&mut self, rank: usize, chunk: usize, at: usize) -> Stage {
        let (dtype, elems) = (self.dtype, self.elems);
        let (collective, inputs, op) = (&self.collective, &self.inputs, self.op);
        let dst = collective.chunk_elems(elems, chunk);
        let end = (at + self.piece).min(dst.len());
        if let Some((from, src)) = collective.expected_after(rank, chunk) {
            let sr = collective.chunk_elems(elems, src);
            let sr = (sr.start + at).min(sr.end)..(sr.start + end).min(sr.end);
            let exact = self
                .cache
                .entry((from.clone(), src, at))
                .or_insert_with(|| {
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
            let part = dst.start + at..dst.start + end;
            for (j, &e) in part.clone().zip(exact.iter()) {
                self.acc.add(e, dtype.read_f64(out, j));
            }
            let ranges = &mut self.output_ranges[rank];
            match ranges.last_mut() {
                Some(r) if r.end == part.start => r.end = part.end,
                _ => ranges.push(part),
            }
        }
        if end < dst.len() {
            Stage::Exact {
                r: rank,
                c: chunk,
                at: end,
            }
        } else if chunk + 1 < collective.chunks {
            Stage::Exact {
                r: rank,
                c: chunk + 1,
                at: 0,
            }
        } else if rank + 1 < collective.ranks {
            Stage::Exact {
                r: rank + 1,
                c: 0,
                at: 0,
            }
        } else {
            self.inputs = Vec::new();
            self.cache = HashMap::new();
            Stage::Done
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::algorithm::{build, Algorithm};
    use crate::engine::execute::execute_step;
    use crate::engine::quantization::ScaleType;

    fn setup(scheme: Scheme, block: usize, placement: Placement) -> CompressedSetup {
        CompressedSetup {
            compression: Compression {
                scheme,
                block,
                scale: ScaleType::Fp32,
            },
            placement,
            shape: GradientShape::HeavyTailed,
        }
    }

    fn built(b: CompressedCheckBuilder) -> CompressedCheck {
        let mut b = b;
        while !b.advance().unwrap() {}
        b.finish()
    }

    /// The reference made one block-sized piece at a time equals whole
    /// transfers (hop: the executor over the codec; once: every rank's
    /// whole input encoded, then [`once_reduce`]) bit for bit, AllReduce and
    /// AllGather (zeros outside a rank's block), and its
    /// report equals the one made in large pieces. Transfers of 333 and 388
    /// elements cut into blocks of 32 and 100 end in a partial piece.
    #[test]
    fn a_reference_made_in_block_pieces_equals_whole_transfers_bit_for_bit() {
        let (dtype, op, seed) = (DType::Bf16, ReduceOp::Sum, 9);
        for (scheme, block, n, elems) in [
            (Scheme::Fp8e4m3, 32, 3, 1000),
            (Scheme::Int8, 100, 2, 777),
            (Scheme::Fp8e5m2, 64, 4, 1553),
        ] {
            let ar = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
            let ag = build(Algorithm::Ring, Primitive::AllGather, n).unwrap();
            let hop = setup(scheme, block, Placement::Hop);
            let small = |collective: &Schedule, run: &Schedule, s: &CompressedSetup| {
                let b = CompressedCheckBuilder::new(collective, run, s, dtype, op, seed, elems)
                    .unwrap()
                    .with_piece_elems(1);
                assert_eq!(b.piece(), block);
                built(b)
            };
            // Hop, against the executor: AllReduce, and AllGather, whose
            // ranks hold input in one block and zeros elsewhere.
            for s in [&ar, &ag] {
                let mut bufs: Vec<Vec<u8>> = (0..n)
                    .map(|r| initial_buffer(s, &hop, dtype, seed, r, elems))
                    .collect();
                let mut wire = 0;
                for k in 0..s.steps.len() {
                    wire += execute_step(s, k, dtype, op, &mut bufs, elems, Some(&hop.compression))
                        .unwrap();
                }
                let pieces = small(s, s, &hop);
                assert_eq!(
                    pieces.outputs, bufs,
                    "{scheme:?} block {block} {:?}",
                    s.primitive
                );
                assert_eq!(pieces.report.wire_bytes, wire);
                let whole = CompressedCheck::prepare(s, s, &hop, dtype, op, seed, elems).unwrap();
                assert_eq!(pieces.report, whole.report);
                assert_eq!(pieces.output_ranges, whole.output_ranges);
            }
            // Once, against once_reduce over whole encoded inputs.
            let once = setup(scheme, block, Placement::Once);
            let gathered: Vec<u8> = (0..n)
                .flat_map(|r| {
                    let mut x = vec![0u8; elems * dtype.size_bytes()];
                    fill_gradients(once.shape, dtype, seed, r, 0..elems, &mut x);
                    encode(&once.compression, dtype, &x).unwrap()
                })
                .collect();
            let want = once_reduce(&once.compression, dtype, op, &gathered, n, elems).unwrap();
            let pieces = small(&ar, &ag, &once);
            assert!(pieces.outputs.iter().all(|o| *o == want), "{scheme:?} once");
            let whole = CompressedCheck::prepare(&ar, &ag, &once, dtype, op, seed, elems).unwrap();
            assert_eq!(pieces.report, whole.report);
            assert_eq!(pieces.output_ranges, whole.output_ranges);
        }
    }
}
