//! From a model to its communication: one training step.
//!
//! A model ([`model`]), a parallel layout (DP × CP × PP × TP, EP, ZeRO
//! stage, microbatches) and a machine give what the step issues ([`traffic`]:
//! each collective, its size, group and calls, with the formula's source),
//! each call timed on the machine the way `cclsim predict` times it
//! ([`time`]), the compute, and the step time:
//!
//! `step = compute + bubble + exposed communication`
//!
//! - compute: `6 · Ψ_active · tokens` FLOPs (Kaplan et al. 2020,
//!   "Scaling Laws for Neural Language Models", §2.1, C ≈ 6N per token;
//!   Hoffmann et al. 2022 use the same; the attention term `12·L·h·s`
//!   per token on request, [`StepInput::attention_flops`]),
//!   spread evenly over the ranks, at `peak × MFU`;
//! - bubble: `(pp − 1) / m` of the compute for 1F1B with `m`
//!   microbatches (Narayanan et al. 2021, §2.2.1);
//! - exposed communication: what the compute does not hide ([`time`]).
//!
//! This is the engine's one compute model: a device's peak and an MFU,
//! no kernels, no memory limit (a layout that would not fit in memory is
//! still timed).

/// The models a step is asked about: [`crate::engine::transformer`].
pub use crate::engine::transformer as model;
pub mod link;
#[cfg(test)]
mod tests;
pub mod time;
pub mod traffic;
pub mod validate;

use super::collective::Primitive;
use super::config::Config;
use super::dtype::DType;
use super::quantization::Scheme;
use super::topology::Topology;
use model::ModelShape;
use serde::{Deserialize, Serialize};
use thiserror::Error;
use traffic::{Issued, Overlap};
use validate::invalid;
pub use validate::validate;

/// Most microbatches per step.
pub const MAX_MICROBATCHES: u64 = 1 << 20;
/// Largest global batch, sequences.
pub const MAX_BATCH: u64 = 1 << 30;

/// What a step is asked about (the machine is given apart, as a
/// [`Config`]: its topology, profile and ranks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StepInput {
    /// A model preset ([`model::PRESETS`]), or the name of `shape`.
    pub model: String,
    /// A model read from its `config.json` ([`model::from_config_json`]);
    /// `None`: the preset `model`.
    pub shape: Option<ModelShape>,
    /// Data-parallel ranks.
    pub dp: usize,
    /// Tensor-parallel ranks (Megatron).
    pub tp: usize,
    /// Pipeline stages (1F1B).
    pub pp: usize,
    /// Expert-parallel ranks (MoE models; 1 otherwise).
    pub ep: usize,
    /// Context-parallel ranks: each holds `seq / cp` of every sequence and
    /// passes keys and values around a ring in attention (Megatron-LM's
    /// `--context-parallel-size`, Transformer Engine's P2P ring).
    pub cp: usize,
    /// ZeRO stage 0..=3 (3 = FSDP full shard).
    pub zero: u8,
    /// Microbatches per step.
    pub microbatches: usize,
    /// Sequence length, tokens.
    pub seq: u64,
    /// Global batch, sequences.
    pub batch: u64,
    /// Parameter (and activation) dtype.
    pub param_dtype: DType,
    /// Dtype the gradients are reduced in.
    pub grad_dtype: DType,
    /// Model FLOPs utilisation, 0 < x ≤ 1.
    pub mfu: f64,
    /// The device's dense bf16 peak, TFLOPS (`None`: the cited figure of
    /// the machine's accelerator, [`peak_of`]).
    pub peak_tflops: Option<f64>,
    /// DDP's bucket cap, bytes (`None`: DDP's default).
    pub bucket_cap: Option<u64>,
    /// Megatron's sequence parallelism: TP's AllReduces as ReduceScatter +
    /// AllGather.
    pub sequence_parallel: bool,
    /// Count attention's own FLOPs, `12 · L · h · s` per token, beside
    /// `6 · Ψ_active`: the `s/(6h)` term of `72·B·s·l·h²·(1 + s/(6h) +
    /// V/(12·l·h))` (Korthikanti et al. 2022; Narayanan et al. 2021 count
    /// 96 for activation recomputation's extra forward); for latent
    /// attention its own head widths ([`ModelShape::attention_width`]).
    pub attention_flops: bool,
    /// Block quantisation of the data-parallel gradient reductions (DDP's
    /// AllReduce, ZeRO's gradient ReduceScatter): a what-if, timed by the
    /// playground's compression model ([`crate::engine::compressed`]).
    /// Neither NCCL nor HCCL compresses; PyTorch DDP's built-in comm hooks
    /// cast to fp16 / bf16 (`torch/distributed/algorithms/ddp_comm_hooks/
    /// default_hooks.py`), use PowerSGD (`powerSGD_hook.py`) or, marked
    /// experimental, quantise to uint8 per tensor or per 512-element chunk
    /// and AllGather (`quantization_hooks.py`); none is a block-scaled
    /// int8 / fp8 reduction like this one.
    pub compress: Scheme,
}

impl Default for StepInput {
    fn default() -> Self {
        StepInput {
            model: "llama3-8b".into(),
            shape: None,
            dp: 8,
            tp: 1,
            pp: 1,
            ep: 1,
            cp: 1,
            zero: 0,
            microbatches: 1,
            seq: 4096,
            batch: 8,
            param_dtype: DType::Bf16,
            grad_dtype: DType::Bf16,
            mfu: 0.4,
            peak_tflops: None,
            bucket_cap: None,
            sequence_parallel: false,
            attention_flops: false,
            compress: Scheme::None,
        }
    }
}

/// Why a step cannot be modelled.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum StepError {
    /// An input value: the field, the value, what is allowed.
    #[error("{field}={value}: {allowed}")]
    Invalid {
        /// The field (`tp`, `dp`, ...).
        field: &'static str,
        /// Its value.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// A call could not be timed on the machine.
    #[error("timing the {what}: {why}")]
    Timing {
        /// The call.
        what: String,
        /// The plan's error.
        why: String,
    },
}

/// One kind of call, timed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepCollective {
    /// What for.
    pub purpose: String,
    /// The primitive's name (`allreduce`).
    pub primitive: String,
    /// nccl-tests' size of one call, bytes.
    pub bytes: u64,
    /// Ranks in its group.
    pub group_ranks: usize,
    /// The members of the group holding rank 0.
    pub ranks: Vec<usize>,
    /// Calls per step, per rank.
    pub calls: u64,
    /// µs per call.
    pub time_us: f64,
    /// The 80 % range per call, µs, when the prediction gives one.
    pub range_us: Option<(f64, f64)>,
    /// `calls × time_us`.
    pub total_us: f64,
    /// Bytes a rank sends per step for it: `calls × S ×` nccl-tests'
    /// busbw factor (a bandwidth-optimal algorithm's per-rank volume, the
    /// ZeRO paper's unit).
    pub wire_bytes: f64,
    /// What it hides behind: `none`, `forward`, `backward`, `first
    /// forward`, `last backward` ([`Overlap`]).
    pub overlap: String,
    /// The algorithm the machine's library runs.
    pub algorithm: String,
    /// How its group was placed for timing.
    pub placement: String,
    /// With [`StepInput::compress`] on a gradient reduction: the scheme it
    /// was timed with, or why it went uncompressed; empty otherwise.
    #[serde(default)]
    pub compression: String,
}

/// One step, timed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// The model preset.
    pub model: String,
    /// Its parameters.
    pub params: u64,
    /// Those one token goes through.
    pub active_params: u64,
    /// Ranks.
    pub ranks: usize,
    /// Tokens per step.
    pub tokens: u64,
    /// The calls.
    pub collectives: Vec<StepCollective>,
    /// FLOPs per step, all ranks.
    pub flops: f64,
    /// The peak used, TFLOPS, and where it comes from.
    pub peak_tflops: f64,
    /// Its source.
    pub peak_source: String,
    /// MFU used.
    pub mfu: f64,
    /// Compute per step per rank, µs.
    pub compute_us: f64,
    /// Pipeline bubble, µs.
    pub bubble_us: f64,
    /// Σ of every call's time, µs.
    pub comm_us: f64,
    /// What the compute does not hide, µs.
    pub exposed_comm_us: f64,
    /// compute + bubble + exposed communication, µs.
    pub step_time_us: f64,
    /// Tokens per second, whole machine.
    pub tokens_per_s: f64,
    /// exposed communication / step time.
    pub comm_share: f64,
    /// comm / (compute + comm): the share if nothing overlapped.
    pub comm_share_serial: f64,
}

/// The cited dense bf16 peak of a machine's accelerator, TFLOPS, and its
/// source: H100 SXM 989 (NVIDIA H100 Tensor Core GPU datasheet: 1 979
/// with sparsity), A100 312 (NVIDIA A100 datasheet). Others (Ascend 910B
/// has no Huawei datasheet figure here): `None`, and the step asks for
/// `peak_tflops`.
pub fn peak_of(topo: &Topology) -> Option<(f64, &'static str)> {
    let name = topo.hardware.as_ref()?.accelerator.to_ascii_uppercase();
    if name.contains("PCIE") {
        return None;
    }
    if name.contains("H100") || name.contains("H200") {
        return Some((989.0, "NVIDIA H100 datasheet, SXM, bf16 dense"));
    }
    if name.contains("A100") {
        return Some((312.0, "NVIDIA A100 datasheet, bf16 dense"));
    }
    None
}

/// One training step of `input` on `machine` (its topology, profile and
/// rank count; its own collective and size are ignored).
///
/// Errors: [`StepError`].
pub fn step(input: &StepInput, machine: &Config) -> Result<StepReport, StepError> {
    let m = validate(input, machine.ranks)?;
    timed(input, &m, machine)
}

/// [`step`] of a validated `input` on the shape `m`.
fn timed(input: &StepInput, m: &ModelShape, machine: &Config) -> Result<StepReport, StepError> {
    let timing = |what: &str, why: String| StepError::Timing {
        what: what.into(),
        why,
    };
    let mut timer = time::Timer::new(machine)
        .map_err(|e| timing("machine", e))?
        .compressing(input.compress);
    let (peak, source) = peak(input, timer.topology())?;
    let issued = traffic::issued(input, m);
    let mut rows = Vec::with_capacity(issued.len());
    for i in &issued {
        let t = timer.time(i).map_err(|e| timing(&i.purpose, e))?;
        rows.push((i, t));
    }
    let tokens = input.batch * input.seq;
    let flops = flops_per_token(input, m) * tokens as f64;
    let ranks = machine.ranks;
    let compute_us = flops / ranks as f64 / (peak * 1e12 * input.mfu) * 1e6;
    let attention_us = compute_us * attention_flops_per_token(input, m) / flops_per_token(input, m);
    Ok(report(
        input,
        m,
        ranks,
        (flops, peak, source, compute_us, attention_us),
        rows,
    ))
}

/// Training FLOPs per token: `6 · Ψ_active`, and with
/// [`StepInput::attention_flops`] attention's own.
fn flops_per_token(input: &StepInput, m: &ModelShape) -> f64 {
    6.0 * m.active_params() as f64 + attention_flops_per_token(input, m)
}

/// Attention's score and value products per token when the step counts
/// them: `6 · L · s · width` (forward `2 · s · width`, backward twice
/// that), `width = heads · (qk + v head dims)` ([`ModelShape::
/// attention_width`]); for grouped-query attention `width = 2h`, the
/// `12 · L · h · s` of Korthikanti et al.
fn attention_flops_per_token(input: &StepInput, m: &ModelShape) -> f64 {
    if !input.attention_flops {
        return 0.0;
    }
    6.0 * m.layers as f64 * input.seq as f64 * m.attention_width() as f64
}

/// The peak: the input's, else the machine's cited one.
fn peak(input: &StepInput, topo: &Topology) -> Result<(f64, String), StepError> {
    if let Some(p) = input.peak_tflops {
        return Ok((p, "given".into()));
    }
    match peak_of(topo) {
        Some((p, s)) => Ok((p, s.into())),
        None => Err(invalid(
            "peak_tflops",
            "none",
            format!(
                "{} has no cited bf16 peak here (H100 and A100 do); give the device's dense bf16 TFLOPS",
                topo.name
            ),
        )),
    }
}

/// The report of timed rows.
fn report(
    input: &StepInput,
    m: &ModelShape,
    ranks: usize,
    (flops, peak, source, compute_us, attention_us): (f64, f64, String, f64, f64),
    rows: Vec<(&Issued, time::Timed)>,
) -> StepReport {
    let pp = input.pp as f64;
    let bubble_us = (pp - 1.0) / input.microbatches as f64 * compute_us;
    let times: Vec<(&Issued, f64)> = rows.iter().map(|(i, t)| (*i, t.time_us)).collect();
    let exposed_comm_us: f64 = Overlap::ALL
        .iter()
        .map(|&o| {
            let window = o.window_us(compute_us, attention_us, input.microbatches);
            time::exposed(&times, o, window)
        })
        .sum();
    let collectives: Vec<StepCollective> = rows.into_iter().map(|(i, t)| row(i, t)).collect();
    let comm_us: f64 = collectives.iter().map(|c| c.total_us).sum();
    let step_time_us = compute_us + bubble_us + exposed_comm_us;
    let tokens = input.batch * input.seq;
    StepReport {
        model: input.model.clone(),
        params: m.params(),
        active_params: m.active_params(),
        ranks,
        tokens,
        collectives,
        flops,
        peak_tflops: peak,
        peak_source: source,
        mfu: input.mfu,
        compute_us,
        bubble_us,
        comm_us,
        exposed_comm_us,
        step_time_us,
        tokens_per_s: tokens as f64 / (step_time_us * 1e-6),
        comm_share: exposed_comm_us / step_time_us,
        comm_share_serial: comm_us / (compute_us + comm_us),
    }
}

fn row(i: &Issued, t: time::Timed) -> StepCollective {
    let factor = i.primitive.busbw_factor(i.group.size);
    StepCollective {
        purpose: i.purpose.clone(),
        primitive: i.primitive.name().into(),
        bytes: i.bytes,
        group_ranks: i.group.size,
        ranks: i.group.ranks(),
        calls: i.calls,
        time_us: t.time_us,
        range_us: t.range_us,
        total_us: i.calls as f64 * t.time_us,
        wire_bytes: i.calls as f64 * i.bytes as f64 * factor,
        overlap: i.overlap.name().into(),
        algorithm: t.algorithm,
        placement: t.placement,
        compression: t.compression,
    }
}

/// One figure of two steps side by side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The figure, as [`StepReport`]'s field (`step_time_us`, ...).
    pub figure: String,
    /// Its value in the first step (the pinned one, `a`).
    pub a: f64,
    /// Its value in the second.
    pub b: f64,
}

impl Change {
    /// `b / a` (1 when both are 0; infinite when only `a` is).
    pub fn ratio(&self) -> f64 {
        match (self.a == 0.0, self.b == 0.0) {
            (true, true) => 1.0,
            (true, false) => f64::INFINITY,
            _ => self.b / self.a,
        }
    }
}

/// Two steps' figures side by side (the what-if comparison): step time,
/// compute, bubble, communication, exposed communication, its share and
/// tokens per second, in that order.
pub fn compare(a: &StepReport, b: &StepReport) -> Vec<Change> {
    let figures: [(&str, fn(&StepReport) -> f64); 7] = [
        ("step_time_us", |r| r.step_time_us),
        ("compute_us", |r| r.compute_us),
        ("bubble_us", |r| r.bubble_us),
        ("comm_us", |r| r.comm_us),
        ("exposed_comm_us", |r| r.exposed_comm_us),
        ("comm_share", |r| r.comm_share),
        ("tokens_per_s", |r| r.tokens_per_s),
    ];
    figures
        .iter()
        .map(|(figure, f)| Change {
            figure: figure.to_string(),
            a: f(a),
            b: f(b),
        })
        .collect()
}

/// A pinned step beside the current one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pinned {
    /// The pinned step.
    pub report: StepReport,
    /// Each figure, pinned (`a`) and current (`b`).
    pub changes: Vec<Change>,
    /// The link keys that differ: `(key, pinned value, current value)`,
    /// an empty value being the key's default ([`link::differences`]).
    pub differs: Vec<(String, String, String)>,
}

/// [`step`] of `input` on `machine`, and beside it the step of a pinned
/// [`link::full_query`] `vs`: the pinned report, the changes from it and
/// the keys that differ, or why the pinned step could not be made (it
/// never hides the current one).
///
/// Errors: the current step's [`StepError`].
pub fn step_vs(
    input: &StepInput,
    machine: &Config,
    vs: Option<&str>,
) -> Result<(StepReport, Option<Result<Pinned, String>>), StepError> {
    let now = step(input, machine)?;
    let pinned = vs.map(|q| {
        let (m, i) = link::from_full_query(q)?;
        let report = step(&i, &m).map_err(|e| e.to_string())?;
        // Both sides as the step reads them, so a key written another way
        // (or a page setting the step ignores) is no difference.
        let differs =
            link::differences(&link::full_query(&m, &i), &link::full_query(machine, input));
        Ok(Pinned {
            changes: compare(&report, &now),
            differs,
            report,
        })
    });
    Ok((now, pinned))
}

/// The title of a primitive by its name (for text output).
pub fn title(name: &str) -> &'static str {
    Primitive::from_name(name).map_or("?", |p| p.title())
}
