//! What one training step issues, per rank: each collective kind with its
//! primitive, its size `S` in nccl-tests' convention (the AllReduce
//! buffer; the whole gathered or scattered array for AllGather and
//! ReduceScatter; each rank's send buffer for AlltoAll and Send/Recv:
//! [`crate::engine::collective`]), its group and its calls per step.
//! Nothing here is timed.
//!
//! ## Ranks and groups
//! Rank `r = ((d·cp + c)·pp + p)·tp + t` for data-parallel index `d`,
//! context-parallel index `c`, stage `p` and tensor-parallel index `t`:
//! TP innermost (inside a node), DP outermost, as the brief of this view
//! asks. (Megatron-LM's default order, `parallel_state.py`
//! `order="tp-cp-ep-dp-pp"`, puts CP next to TP and PP outermost instead;
//! only the strides below would change.) A group is `size` ranks `stride`
//! apart: TP `(tp, 1)`; a PP neighbour pair `(2, tp)`; the CP ring
//! `(cp, tp·pp)`; the gradients' data-parallel group, which spans the
//! context-parallel ranks too (they hold the same weights; Megatron's
//! `data_parallel_group_with_context_parallel`), `(dp·cp, tp·pp)`; EP the
//! first `ep` of it `(ep, tp·pp)`; the experts' data-parallel group
//! `(dp·cp/ep, ep·tp·pp)`.
//!
//! ## Formulas (Ψ parameters; a rank holds `Ψ_r` = its share of them)
//! - **Data parallel** (Rajbhandari et al. 2020, "ZeRO", §7: plain DP
//!   moves 2Ψ per rank per step, ZeRO-1/2 2Ψ, ZeRO-3 3Ψ):
//!   - ZeRO 0 (PyTorch DDP, `torch/nn/parallel/distributed.py`): one
//!     AllReduce of the gradients per DDP bucket, once per step (gradient
//!     accumulation runs under `no_sync`), the buckets of
//!     [`crate::engine::fusion::buckets`].
//!   - ZeRO 1/2 (DeepSpeed `stage_1_and_2.py`; Megatron's distributed
//!     optimizer): a ReduceScatter of each bucket's gradients and an
//!     AllGather of the updated parameters, once per step.
//!     Stages 1 and 2 issue the same calls (the paper: 2Ψ both); they
//!     differ in what each rank keeps in memory.
//!   - ZeRO 3 (DeepSpeed `stage3.py`; PyTorch FSDP `FULL_SHARD`): per
//!     layer, an AllGather of its parameters before its forward and again
//!     before its backward (they are freed in between), and a
//!     ReduceScatter of its gradients after its backward, every
//!     microbatch (the full gradient is never kept).
//! - **Tensor parallel** (Shoeybi et al. 2019, "Megatron-LM", §3 and
//!   Fig. 4): per layer two AllReduces of `b·s·h` activations forward
//!   (after attention and after the MLP) and two backward, every
//!   microbatch of `b` sequences of `s` tokens.
//!   With sequence parallelism (Korthikanti et al. 2022) each AllReduce
//!   is a ReduceScatter and an AllGather of the same array.
//! - **Pipeline parallel** (Narayanan et al. 2021, "Efficient Large-Scale
//!   Language Model Training on GPU Clusters", §2.2, 1F1B): per microbatch
//!   a stage sends its `b·s·h` activations forward and their gradient
//!   backward: 2 sends per microbatch.
//! - **Expert parallel** (Lepikhin et al. 2020, "GShard"; Megatron
//!   Core MoE's AlltoAll token dispatcher): per MoE layer an AlltoAll
//!   dispatches `b·s·top_k` token copies of `h` elements and another
//!   combines them, forward, and both again backward: 4 per MoE layer per
//!   microbatch.
//! - **Context parallel** (Megatron-LM `--context-parallel-size` with
//!   Transformer Engine's P2P ring, `context_parallel.py`
//!   `AttnFuncWithCPAndKVP2P`; Liu et al. 2023, "Ring Attention"): each
//!   rank holds `s/cp` tokens of a sequence; per layer and microbatch the
//!   forward passes its keys and values to the next rank `cp − 1` times,
//!   the backward passes keys, values and their gradients (twice the
//!   bytes) `cp − 1` times, each pass overlapping attention on the chunk
//!   already received. Activations of TP, PP and EP carry `s/cp` tokens.
//!
//! A rank's share of a tensor is `elems / (tp·pp)` (experts: `/(ep·tp·pp)`),
//! rounded up: the rank's stage holds `1/pp` of the layers and TP splits
//! each of its matrices `tp` ways. This spreads the embedding and the head
//! over all stages (an approximation: Megatron puts them on the first and
//! last stage), which keeps every rank's `Ψ_r` and bucket count alike.

use super::model::{sum, tensors, ModelShape};
use super::StepInput;
use crate::engine::collective::Primitive;
use crate::engine::dtype::DType;
use crate::engine::fusion::{buckets, Tensor};
use serde::{Deserialize, Serialize};

/// Ranks `size` apart by `stride`, starting at rank 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Group {
    /// Ranks in the group.
    pub size: usize,
    /// Distance between consecutive members.
    pub stride: usize,
}

impl Group {
    /// The members of the group that holds rank 0.
    pub fn ranks(&self) -> Vec<usize> {
        (0..self.size).map(|i| i * self.stride).collect()
    }
}

/// What a kind of call can hide behind ([`super::time`] applies it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Overlap {
    /// On the critical path: TP, PP, EP.
    None,
    /// Runs during every microbatch's forward pass (ZeRO-3's prefetched
    /// AllGather).
    Forward,
    /// Runs during every microbatch's backward pass (ZeRO-3's backward
    /// AllGather and ReduceScatter).
    Backward,
    /// Runs during attention's forward compute (context parallelism's
    /// key-value ring).
    AttentionForward,
    /// Runs during attention's backward compute (the ring of keys, values
    /// and their gradients).
    AttentionBackward,
    /// Once per step, during the first microbatch's forward pass (ZeRO-1/2's
    /// updated parameters, gathered as the next step begins).
    FirstForward,
    /// Once per step, during the last microbatch's backward pass (DDP's
    /// buckets and ZeRO-1/2's ReduceScatters: gradients accumulate
    /// locally until then, DDP's `no_sync`).
    LastBackward,
}

impl Overlap {
    /// Every kind.
    pub const ALL: [Overlap; 7] = [
        Overlap::None,
        Overlap::Forward,
        Overlap::Backward,
        Overlap::AttentionForward,
        Overlap::AttentionBackward,
        Overlap::FirstForward,
        Overlap::LastBackward,
    ];

    /// The compute it hides behind, of a step of `compute_us` (of which
    /// `attention_us` is attention's) in `micro` microbatches: forward a
    /// third, backward two thirds (6Ψ per token: 2Ψ forward, 4Ψ backward;
    /// attention's own FLOPs split alike, 4 forward, 8 backward of 12).
    pub fn window_us(self, compute_us: f64, attention_us: f64, micro: usize) -> f64 {
        let m = micro.max(1) as f64;
        match self {
            Overlap::None => 0.0,
            Overlap::Forward => compute_us / 3.0,
            Overlap::Backward => compute_us * 2.0 / 3.0,
            Overlap::AttentionForward => attention_us / 3.0,
            Overlap::AttentionBackward => attention_us * 2.0 / 3.0,
            Overlap::FirstForward => compute_us / 3.0 / m,
            Overlap::LastBackward => compute_us * 2.0 / 3.0 / m,
        }
    }

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Overlap::None => "none",
            Overlap::Forward => "forward",
            Overlap::Backward => "backward",
            Overlap::AttentionForward => "attention forward",
            Overlap::AttentionBackward => "attention backward",
            Overlap::FirstForward => "first forward",
            Overlap::LastBackward => "last backward",
        }
    }
}

/// One kind of call a step issues.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Issued {
    /// What for, in words.
    pub purpose: String,
    /// The primitive.
    pub primitive: Primitive,
    /// nccl-tests' size `S` of one call, bytes (module doc).
    pub bytes: u64,
    /// Its element type.
    pub dtype: DType,
    /// The group it runs in.
    pub group: Group,
    /// Calls per step, per rank.
    pub calls: u64,
    /// What it may hide behind.
    pub overlap: Overlap,
    /// Of `calls`, how many cannot hide whatever the compute: DDP's last
    /// bucket, ZeRO-3's first AllGather.
    pub edge_calls: u64,
    /// A data-parallel gradient reduction (what [`super::StepInput::compress`]
    /// compresses).
    pub gradient: bool,
}

/// The layout's numbers the formulas use.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Sequences per microbatch per DP rank (`b`).
    micro_seqs: u64,
    /// Tokens of a sequence a rank holds, `s / cp`.
    seq: u64,
    /// Microbatches (`m`).
    micro: u64,
    /// Layers per stage.
    stage_layers: u64,
    /// MoE layers of the stage with the most of them (a model's first,
    /// dense, layers all fall in the first stage).
    stage_moe_layers: u64,
}

fn shape(input: &StepInput, model: &ModelShape) -> Shape {
    let micro = input.microbatches as u64;
    let stage_layers = model.layers / input.pp.max(1) as u64;
    Shape {
        micro_seqs: input.batch / (input.dp as u64 * micro).max(1),
        seq: input.seq / input.cp.max(1) as u64,
        micro,
        stage_layers,
        stage_moe_layers: stage_layers.min(model.moe_layers()),
    }
}

/// Everything a step of `input` on `model` issues (validated input:
/// [`super::validate`]); collectives of one rank are left out.
pub fn issued(input: &StepInput, model: &ModelShape) -> Vec<Issued> {
    let sh = shape(input, model);
    let mut out = Vec::new();
    let (dense, experts) = tensors(model);
    let (tp, pp) = (input.tp as u64, input.pp as u64);
    let dp = Group {
        size: input.dp * input.cp,
        stride: input.tp * input.pp,
    };
    out.extend(data_parallel(input, &share(&dense, tp * pp), dp, sh, ""));
    if model.moe() {
        let edp = Group {
            size: input.dp * input.cp / input.ep.max(1),
            stride: input.ep * input.tp * input.pp,
        };
        let e = share(&experts, input.ep as u64 * tp * pp);
        out.extend(data_parallel(input, &e, edp, sh, "expert "));
    }
    out.extend(tensor_parallel(input, model, sh));
    out.extend(pipeline(input, model, sh));
    out.extend(expert_parallel(input, model, sh));
    out.extend(context_parallel(input, model, sh));
    out.retain(|i| i.group.size > 1 && i.calls > 0 && i.bytes > 0);
    out
}

/// A rank's share of each tensor: `elems / parts`, rounded up.
fn share(t: &[Tensor], parts: u64) -> Vec<Tensor> {
    t.iter()
        .map(|t| Tensor {
            name: t.name.clone(),
            elems: t.elems.div_ceil(parts.max(1)),
        })
        .collect()
}

/// The data-parallel calls of the tensors `t` (a rank's share) over `g`.
fn data_parallel(input: &StepInput, t: &[Tensor], g: Group, sh: Shape, what: &str) -> Vec<Issued> {
    match input.zero {
        0 => ddp(input, t, g, what),
        1 | 2 => sharded_optimizer(input, t, g, what),
        _ => fully_sharded(input, t, g, sh, what),
    }
}

/// Calls of equal size grouped, in launch order of their first call;
/// `edge` marks the size of the one call that cannot hide.
fn by_size(sizes: &[u64], edge: Option<u64>) -> Vec<(u64, u64, u64)> {
    let mut rows: Vec<(u64, u64, u64)> = Vec::new();
    for &b in sizes {
        match rows.iter_mut().find(|r| r.0 == b) {
            Some(r) => r.1 += 1,
            None => rows.push((b, 1, 0)),
        }
    }
    for r in &mut rows {
        if Some(r.0) == edge {
            r.2 = 1;
        }
    }
    rows
}

/// ZeRO 0: DDP's bucketed AllReduce; the last bucket (the first layers'
/// gradients, ready last) cannot hide behind the backward pass.
fn ddp(input: &StepInput, t: &[Tensor], g: Group, what: &str) -> Vec<Issued> {
    let sizes: Vec<u64> = buckets(t, input.grad_dtype, input.bucket_cap)
        .iter()
        .map(|b| b.bytes)
        .collect();
    by_size(&sizes, sizes.last().copied())
        .into_iter()
        .map(|(bytes, calls, edge_calls)| Issued {
            purpose: format!("{what}gradient AllReduce, a DDP bucket"),
            primitive: Primitive::AllReduce,
            bytes,
            dtype: input.grad_dtype,
            group: g,
            calls,
            overlap: Overlap::LastBackward,
            edge_calls,
            gradient: true,
        })
        .collect()
}

/// ZeRO 1/2: each bucket's gradients ReduceScattered (hiding like DDP's),
/// the updated parameters AllGathered (during the next forward, but the
/// first bucket's).
fn sharded_optimizer(input: &StepInput, t: &[Tensor], g: Group, what: &str) -> Vec<Issued> {
    let grads: Vec<u64> = buckets(t, input.grad_dtype, input.bucket_cap)
        .iter()
        .map(|b| b.bytes)
        .collect();
    let ratio = input.param_dtype.size_bytes() as u64;
    let gs = input.grad_dtype.size_bytes() as u64;
    let params: Vec<u64> = grads.iter().rev().map(|b| b / gs * ratio).collect();
    let mut out = Vec::new();
    for (bytes, calls, edge_calls) in by_size(&grads, grads.last().copied()) {
        out.push(Issued {
            purpose: format!(
                "{what}gradient ReduceScatter (ZeRO-{}), a bucket",
                input.zero
            ),
            primitive: Primitive::ReduceScatter,
            bytes,
            dtype: input.grad_dtype,
            group: g,
            calls,
            overlap: Overlap::LastBackward,
            edge_calls,
            gradient: true,
        });
    }
    for (bytes, calls, edge_calls) in by_size(&params, params.first().copied()) {
        out.push(Issued {
            purpose: format!(
                "{what}updated-parameter AllGather (ZeRO-{}), a bucket",
                input.zero
            ),
            primitive: Primitive::AllGather,
            bytes,
            dtype: input.param_dtype,
            group: g,
            calls,
            overlap: Overlap::FirstForward,
            edge_calls,
            gradient: false,
        });
    }
    out
}

/// ZeRO 3 / FSDP: per layer of the stage, AllGather forward and backward
/// and ReduceScatter, every microbatch; the rank's share split evenly
/// over its layers (FSDP wraps each transformer block; the embedding and
/// the head are folded into the blocks).
fn fully_sharded(input: &StepInput, t: &[Tensor], g: Group, sh: Shape, what: &str) -> Vec<Issued> {
    let units = sh.stage_layers.max(1);
    let elems = sum(t).div_ceil(units);
    let calls = units * sh.micro;
    let row = |purpose: String, primitive, dtype: DType, overlap| Issued {
        purpose,
        primitive,
        bytes: elems * dtype.size_bytes() as u64,
        dtype,
        group: g,
        calls,
        overlap,
        edge_calls: 1,
        gradient: primitive == Primitive::ReduceScatter,
    };
    vec![
        row(
            format!("{what}parameter AllGather before a layer's forward (ZeRO-3)"),
            Primitive::AllGather,
            input.param_dtype,
            Overlap::Forward,
        ),
        row(
            format!("{what}parameter AllGather before a layer's backward (ZeRO-3)"),
            Primitive::AllGather,
            input.param_dtype,
            Overlap::Backward,
        ),
        row(
            format!("{what}gradient ReduceScatter after a layer's backward (ZeRO-3)"),
            Primitive::ReduceScatter,
            input.grad_dtype,
            Overlap::Backward,
        ),
    ]
}

/// Bytes of one microbatch's activations on a rank, `b·(s/cp)·h` elements.
fn activation_bytes(input: &StepInput, model: &ModelShape, sh: Shape) -> u64 {
    sh.micro_seqs * sh.seq * model.hidden * input.param_dtype.size_bytes() as u64
}

/// Megatron TP: 2 AllReduces forward and 2 backward per layer; with
/// sequence parallelism each becomes a ReduceScatter and an AllGather of
/// the same `b·s·h` array (Korthikanti et al. 2022, "Reducing Activation
/// Recomputation in Large Transformer Models", §4.2.2: the AllReduce
/// split into its two halves, same bandwidth).
fn tensor_parallel(input: &StepInput, model: &ModelShape, sh: Shape) -> Vec<Issued> {
    let row = |purpose: &str, primitive| Issued {
        purpose: purpose.into(),
        primitive,
        bytes: activation_bytes(input, model, sh),
        dtype: input.param_dtype,
        group: Group {
            size: input.tp,
            stride: 1,
        },
        calls: 4 * sh.stage_layers * sh.micro,
        overlap: Overlap::None,
        edge_calls: 0,
        gradient: false,
    };
    if !input.sequence_parallel {
        let what = "activation AllReduce of tensor parallelism (2 forward + 2 backward per layer)";
        return vec![row(what, Primitive::AllReduce)];
    }
    vec![
        row(
            "activation ReduceScatter of sequence parallelism (2 forward + 2 backward per layer)",
            Primitive::ReduceScatter,
        ),
        row(
            "activation AllGather of sequence parallelism (2 forward + 2 backward per layer)",
            Primitive::AllGather,
        ),
    ]
}

/// 1F1B: a stage's activations forward and gradients backward.
fn pipeline(input: &StepInput, model: &ModelShape, sh: Shape) -> Vec<Issued> {
    vec![Issued {
        purpose: "pipeline Send/Recv of a microbatch's activations (forward) and their gradient (backward)".into(),
        primitive: Primitive::SendRecv,
        bytes: activation_bytes(input, model, sh),
        dtype: input.param_dtype,
        group: Group {
            size: if input.pp > 1 { 2 } else { 1 },
            stride: input.tp,
        },
        calls: 2 * sh.micro,
        overlap: Overlap::None,
        edge_calls: 0,
        gradient: false,
    }]
}

/// MoE: AlltoAll dispatch and combine, forward and backward, per MoE
/// layer.
fn expert_parallel(input: &StepInput, model: &ModelShape, sh: Shape) -> Vec<Issued> {
    if !model.moe() {
        return vec![];
    }
    let es = input.param_dtype.size_bytes() as u64;
    vec![Issued {
        purpose: "MoE token AlltoAll, dispatch and combine (forward and backward, per MoE layer)"
            .into(),
        primitive: Primitive::AlltoAll,
        bytes: sh.micro_seqs * sh.seq * model.top_k * model.hidden * es,
        dtype: input.param_dtype,
        group: Group {
            size: input.ep,
            stride: input.tp * input.pp,
        },
        calls: 4 * sh.stage_moe_layers * sh.micro,
        overlap: Overlap::None,
        edge_calls: 0,
        gradient: false,
    }]
}

/// Context parallelism's key-value ring, per layer and microbatch: `cp −
/// 1` passes of a rank's keys and values forward, `cp − 1` of them with
/// their gradients backward, each a Send/Recv between ring neighbours
/// timed on the pair that closes the ring (the last member back to the
/// first: across nodes whenever the ring is), since every pass waits for
/// its slowest pair. TP splits the heads, so a rank passes `1/tp` of them.
fn context_parallel(input: &StepInput, model: &ModelShape, sh: Shape) -> Vec<Issued> {
    if input.cp < 2 {
        return vec![];
    }
    let es = input.param_dtype.size_bytes() as u64;
    let kv = sh.micro_seqs * sh.seq * model.kv_width() / input.tp.max(1) as u64 * es;
    let ring_close = Group {
        size: 2,
        stride: (input.cp - 1) * input.tp * input.pp,
    };
    let calls = (input.cp as u64 - 1) * sh.stage_layers * sh.micro;
    let row = |purpose: &str, bytes, overlap| Issued {
        purpose: purpose.into(),
        primitive: Primitive::SendRecv,
        bytes,
        dtype: input.param_dtype,
        group: ring_close,
        calls,
        overlap,
        edge_calls: 0,
        gradient: false,
    };
    vec![
        row(
            "context-parallel ring: keys and values to the next rank (cp − 1 per layer, forward)",
            kv,
            Overlap::AttentionForward,
        ),
        row(
            "context-parallel ring: keys, values and their gradients (cp − 1 per layer, backward)",
            2 * kv,
            Overlap::AttentionBackward,
        ),
    ]
}
