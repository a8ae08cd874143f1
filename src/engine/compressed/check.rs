//! The compressed reference every worker must equal bit for bit, built at
//! once ([`CompressedCheck::prepare`]) or in small units
//! ([`CompressedCheckBuilder`]), and the error report against the
//! uncompressed exact result.

use super::*;
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
    /// Errors: [`ExecuteError`]: the codec's [`WireError`], or a transfer
    /// the schedule cannot carry out ([`ExecuteError::BadTransfer`]).
    pub fn advance(&mut self) -> Result<bool, ExecuteError> {
        let n = self.collective.ranks;
        let (dtype, elems) = (self.dtype, self.elems);
        let c = self.setup.compression;
        let es = dtype.size_bytes();
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
                let (data, w) = crate::engine::execute::transfer_payload(
                    &self.run,
                    k,
                    i,
                    dtype,
                    &self.outputs,
                    elems,
                    Some(&c),
                )?;
                self.wire += w;
                self.payloads.push(data);
                if i + 1 < self.run.steps[k].transfers.len() {
                    Stage::HopRead(k, i + 1)
                } else {
                    Stage::HopApply(k, 0)
                }
            }
            Stage::HopApply(k, i) => {
                crate::engine::execute::apply_transfer(
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
