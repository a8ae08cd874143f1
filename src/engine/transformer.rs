//! Transformer models as the communication sees them: their shapes (the
//! fields of their public `config.json`) and their parameters in
//! `model.parameters()` order, dense and expert apart. DDP's buckets
//! ([`crate::engine::fusion`]) and a training step ([`crate::engine::step`])
//! both take their tensors from here.
//!
//! - Meta-Llama-3-8B: `meta-llama/Meta-Llama-3-8B` `config.json`: hidden
//!   4096, intermediate 14336, 32 layers, 32 heads, 8 KV heads, vocab
//!   128256, untied embeddings (8 030 261 248 parameters).
//! - Meta-Llama-3-70B: hidden 8192, intermediate 28672, 80 layers, 64
//!   heads, 8 KV heads, vocab 128256 (70 553 706 496 parameters).
//! - Llama-3.1-405B: `meta-llama/Llama-3.1-405B` `config.json`:
//!   `hidden_size` 16384, `intermediate_size` 53248, `num_hidden_layers`
//!   126, `num_attention_heads` 128, `num_key_value_heads` 8, `vocab_size`
//!   128256, `tie_word_embeddings` false.
//! - Mixtral-8x7B: `mistralai/Mixtral-8x7B-v0.1` `config.json`:
//!   `hidden_size` 4096, `intermediate_size` 14336, `num_hidden_layers` 32,
//!   `num_attention_heads` 32, `num_key_value_heads` 8, `vocab_size` 32000,
//!   `num_local_experts` 8, `num_experts_per_tok` 2, `tie_word_embeddings`
//!   false.
//! - DeepSeek-V3: `deepseek-ai/DeepSeek-V3` `config.json`: `hidden_size`
//!   7168, `intermediate_size` 18432 (the dense layers' MLP),
//!   `moe_intermediate_size` 2048, `num_hidden_layers` 61,
//!   `first_k_dense_replace` 3, `n_routed_experts` 256, `n_shared_experts`
//!   1, `num_experts_per_tok` 8, `num_attention_heads` 128,
//!   `num_key_value_heads` 128, multi-head latent attention with
//!   `q_lora_rank` 1536, `kv_lora_rank` 512, `qk_nope_head_dim` 128,
//!   `qk_rope_head_dim` 64, `v_head_dim` 128, `vocab_size` 129280,
//!   `tie_word_embeddings` false: 671 026 404 352 parameters (DeepSeek's
//!   "671B total"), without the multi-token-prediction module the
//!   checkpoint adds (`num_nextn_predict_layers` 1, 11.5B, used in
//!   training as an extra layer; left out here) and without the router's
//!   `e_score_correction_bias` (256 per MoE layer).
//!
//! The tensors are Hugging Face's `LlamaForCausalLM` /
//! `MixtralForCausalLM` / `DeepseekV3ForCausalLM` parameters in
//! `model.parameters()` order (the order DDP's buckets are filled in
//! reverse); a Mixtral layer's MLP is a router (`block_sparse_moe.gate`,
//! hidden × experts) and `experts` copies of the SwiGLU MLP (`w1`, `w2`,
//! `w3`); a DeepSeek MoE layer's is a router (`mlp.gate`), the routed
//! experts (`mlp.experts.E.{gate,up,down}_proj`) and the shared ones
//! (`mlp.shared_experts`, `n_shared_experts` × the expert width), and its
//! attention the latent projections of `modeling_deepseek.py`
//! (`q_a_proj`, `q_a_layernorm`, `q_b_proj`, `kv_a_proj_with_mqa`,
//! `kv_a_layernorm`, `kv_b_proj`, `o_proj`).

use serde::{Deserialize, Serialize};

/// A decoder-only transformer: a Llama shape, with or without experts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelShape {
    /// `hidden_size`.
    pub hidden: u64,
    /// `intermediate_size` (per expert for a mixture of experts).
    pub intermediate: u64,
    /// `num_hidden_layers`.
    pub layers: u64,
    /// `num_attention_heads`.
    pub heads: u64,
    /// `num_key_value_heads`.
    pub kv_heads: u64,
    /// `vocab_size`.
    pub vocab: u64,
    /// `num_local_experts` (0: a dense model).
    pub experts: u64,
    /// `num_experts_per_tok` (0: a dense model).
    pub top_k: u64,
    /// `tie_word_embeddings`: the output head is the embedding.
    pub tied: bool,
    /// `moe_intermediate_size`: each expert's MLP width (0: `intermediate`,
    /// as Mixtral).
    #[serde(default)]
    pub moe_intermediate: u64,
    /// `n_shared_experts`: experts every token goes through, beside the
    /// routed ones (dense parameters: expert parallelism does not shard
    /// them).
    #[serde(default)]
    pub shared_experts: u64,
    /// `first_k_dense_replace`: the first layers keep a dense MLP of
    /// `intermediate` (0: every layer of a mixture of experts is one).
    #[serde(default)]
    pub dense_layers: u64,
    /// Multi-head latent attention; `None`: grouped-query attention.
    #[serde(default)]
    pub mla: Option<Mla>,
}

/// DeepSeek's multi-head latent attention (`config.json` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mla {
    /// `q_lora_rank` (0: the queries are not compressed, one `q_proj`).
    pub q_lora_rank: u64,
    /// `kv_lora_rank`.
    pub kv_lora_rank: u64,
    /// `qk_nope_head_dim`.
    pub qk_nope_head_dim: u64,
    /// `qk_rope_head_dim`.
    pub qk_rope_head_dim: u64,
    /// `v_head_dim`.
    pub v_head_dim: u64,
}

impl ModelShape {
    /// Is it a mixture of experts?
    pub fn moe(&self) -> bool {
        self.experts > 0
    }

    /// Parameters of one dense SwiGLU MLP (gate, up, down).
    pub fn mlp_params(&self) -> u64 {
        3 * self.hidden * self.intermediate
    }

    /// One expert's MLP width.
    pub fn expert_intermediate(&self) -> u64 {
        if self.moe_intermediate > 0 {
            self.moe_intermediate
        } else {
            self.intermediate
        }
    }

    /// Parameters of one expert's SwiGLU MLP.
    pub fn expert_params(&self) -> u64 {
        3 * self.hidden * self.expert_intermediate()
    }

    /// Layers whose MLP is a mixture of experts.
    pub fn moe_layers(&self) -> u64 {
        if self.moe() {
            self.layers.saturating_sub(self.dense_layers)
        } else {
            0
        }
    }

    /// Elements per token per layer that attention's score and value
    /// products run over, `heads · (qk head dim + v head dim)`: `2 · hidden`
    /// for grouped-query attention, wider for latent attention
    /// (DeepSeek-V3: 128 · (192 + 128) = 40 960).
    pub fn attention_width(&self) -> u64 {
        match self.mla {
            Some(m) => self.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim),
            None => 2 * self.hidden,
        }
    }

    /// Elements of one token's keys and values in one layer, as a
    /// context-parallel ring passes them: `2 · kv_heads · head_dim`
    /// (grouped-query), or latent attention's keys and values expanded
    /// per head, `heads · (qk head dim + v head dim)` (Megatron runs
    /// latent attention's core as ordinary attention on them).
    pub fn kv_width(&self) -> u64 {
        match self.mla {
            Some(_) => self.attention_width(),
            None => 2 * self.kv_heads * (self.hidden / self.heads.max(1)),
        }
    }

    /// Every parameter.
    pub fn params(&self) -> u64 {
        let (dense, experts) = tensors(self);
        sum(&dense) + sum(&experts)
    }

    /// Parameters one token goes through: the dense ones and `top_k` of
    /// the experts (the Kaplan / Chinchilla FLOP rule counts these).
    pub fn active_params(&self) -> u64 {
        let (dense, _) = tensors(self);
        sum(&dense) + self.moe_layers() * self.top_k * self.expert_params()
    }
}

/// Σ elements.
pub fn sum(t: &[Tensor]) -> u64 {
    t.iter().map(|t| t.elems).sum()
}

/// One gradient tensor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    /// Parameter name (`layers.3.mlp.up_proj`).
    pub name: String,
    /// Number of elements.
    pub elems: u64,
}

/// A dense Llama shape (no experts, untied head).
const fn llama(hidden: u64, intermediate: u64, layers: u64, heads: u64, vocab: u64) -> ModelShape {
    ModelShape {
        hidden,
        intermediate,
        layers,
        heads,
        kv_heads: 8,
        vocab,
        experts: 0,
        top_k: 0,
        tied: false,
        moe_intermediate: 0,
        shared_experts: 0,
        dense_layers: 0,
        mla: None,
    }
}

/// Meta-Llama-3-8B (module doc).
pub const LLAMA3_8B: ModelShape = llama(4096, 14336, 32, 32, 128256);

/// Meta-Llama-3-70B (module doc).
pub const LLAMA3_70B: ModelShape = llama(8192, 28672, 80, 64, 128256);

/// Meta-Llama-3.1-405B (module doc).
pub const LLAMA31_405B: ModelShape = llama(16384, 53248, 126, 128, 128256);

/// Mixtral-8x7B (module doc).
pub const MIXTRAL_8X7B: ModelShape = ModelShape {
    vocab: 32000,
    experts: 8,
    top_k: 2,
    ..llama(4096, 14336, 32, 32, 32000)
};

/// DeepSeek-V3 (module doc).
pub const DEEPSEEK_V3: ModelShape = ModelShape {
    kv_heads: 128,
    experts: 256,
    top_k: 8,
    moe_intermediate: 2048,
    shared_experts: 1,
    dense_layers: 3,
    mla: Some(Mla {
        q_lora_rank: 1536,
        kv_lora_rank: 512,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
    }),
    ..llama(7168, 18432, 61, 128, 129280)
};

/// The preset names, as the CLI and a link spell them.
pub const PRESETS: [&str; 5] = [
    "llama3-8b",
    "llama3-70b",
    "llama3.1-405b",
    "mixtral-8x7b",
    "deepseek-v3",
];

/// A preset by name ([`PRESETS`]).
pub fn preset(name: &str) -> Option<ModelShape> {
    match name {
        "llama3-8b" => Some(LLAMA3_8B),
        "llama3-70b" => Some(LLAMA3_70B),
        "llama3.1-405b" => Some(LLAMA31_405B),
        "mixtral-8x7b" => Some(MIXTRAL_8X7B),
        "deepseek-v3" => Some(DEEPSEEK_V3),
        _ => None,
    }
}

/// The model's tensors in `model.parameters()` order: `(dense, experts)`
/// (the routed experts' MLPs apart, since expert parallelism shards them
/// and their gradients reduce over fewer ranks).
pub fn tensors(s: &ModelShape) -> (Vec<Tensor>, Vec<Tensor>) {
    let mut dense = vec![tensor("embed_tokens", s.vocab * s.hidden)];
    let mut experts = Vec::new();
    for l in 0..s.layers {
        let p = format!("layers.{l}");
        match s.mla {
            Some(m) => latent_attention(s, m, &p, &mut dense),
            None => grouped_query_attention(s, &p, &mut dense),
        }
        if s.moe() && l >= s.dense_layers {
            mixture_of_experts(s, &p, &mut dense, &mut experts);
        } else {
            swiglu(s.hidden, s.intermediate, &format!("{p}.mlp"), &mut dense);
        }
        dense.push(tensor(&format!("{p}.input_layernorm"), s.hidden));
        dense.push(tensor(&format!("{p}.post_attention_layernorm"), s.hidden));
    }
    dense.push(tensor("norm", s.hidden));
    if !s.tied {
        dense.push(tensor("lm_head", s.vocab * s.hidden));
    }
    (dense, experts)
}

fn tensor(name: &str, elems: u64) -> Tensor {
    Tensor {
        name: name.to_string(),
        elems,
    }
}

/// Llama's attention: q and o `hidden²`, k and v `hidden × kv width`.
fn grouped_query_attention(s: &ModelShape, p: &str, out: &mut Vec<Tensor>) {
    let kv = s.hidden / s.heads.max(1) * s.kv_heads;
    for (w, elems) in [("q", s.hidden), ("k", kv), ("v", kv), ("o", s.hidden)] {
        out.push(tensor(&format!("{p}.self_attn.{w}_proj"), s.hidden * elems));
    }
}

/// DeepSeek's latent attention, as `DeepseekV3Attention` declares it.
fn latent_attention(s: &ModelShape, m: Mla, p: &str, out: &mut Vec<Tensor>) {
    let a = format!("{p}.self_attn");
    let q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if m.q_lora_rank == 0 {
        out.push(tensor(&format!("{a}.q_proj"), s.hidden * s.heads * q_head));
    } else {
        out.push(tensor(&format!("{a}.q_a_proj"), s.hidden * m.q_lora_rank));
        out.push(tensor(&format!("{a}.q_a_layernorm"), m.q_lora_rank));
        let q_b = m.q_lora_rank * s.heads * q_head;
        out.push(tensor(&format!("{a}.q_b_proj"), q_b));
    }
    let kv_a = s.hidden * (m.kv_lora_rank + m.qk_rope_head_dim);
    out.push(tensor(&format!("{a}.kv_a_proj_with_mqa"), kv_a));
    out.push(tensor(&format!("{a}.kv_a_layernorm"), m.kv_lora_rank));
    let kv_b = m.kv_lora_rank * s.heads * (m.qk_nope_head_dim + m.v_head_dim);
    out.push(tensor(&format!("{a}.kv_b_proj"), kv_b));
    out.push(tensor(
        &format!("{a}.o_proj"),
        s.heads * m.v_head_dim * s.hidden,
    ));
}

/// A SwiGLU MLP of width `inter` under the name `p`.
fn swiglu(hidden: u64, inter: u64, p: &str, out: &mut Vec<Tensor>) {
    for w in ["gate_proj", "up_proj", "down_proj"] {
        out.push(tensor(&format!("{p}.{w}"), hidden * inter));
    }
}

/// A layer's mixture of experts: the router and any shared experts are
/// dense, the routed experts go to `experts`. Mixtral's names where the
/// model is Mixtral-shaped (no shared experts, no latent attention),
/// DeepSeek's otherwise.
fn mixture_of_experts(s: &ModelShape, p: &str, dense: &mut Vec<Tensor>, experts: &mut Vec<Tensor>) {
    let width = s.expert_intermediate();
    if s.shared_experts == 0 && s.mla.is_none() {
        dense.push(tensor(
            &format!("{p}.block_sparse_moe.gate"),
            s.hidden * s.experts,
        ));
        for e in 0..s.experts {
            for w in ["w1", "w2", "w3"] {
                let name = format!("{p}.block_sparse_moe.experts.{e}.{w}");
                experts.push(tensor(&name, s.hidden * width));
            }
        }
        return;
    }
    dense.push(tensor(&format!("{p}.mlp.gate"), s.hidden * s.experts));
    for e in 0..s.experts {
        swiglu(s.hidden, width, &format!("{p}.mlp.experts.{e}"), experts);
    }
    if s.shared_experts > 0 {
        let shared = width * s.shared_experts;
        swiglu(s.hidden, shared, &format!("{p}.mlp.shared_experts"), dense);
    }
}

/// A field of a `config.json` that cannot be read: the field, the value,
/// what is allowed.
pub type FieldError = (&'static str, String, String);

/// Largest value of each shape field read from a `config.json`.
const CONFIG_FIELDS: [(&str, u64); 18] = [
    ("hidden_size", 1 << 20),
    ("intermediate_size", 1 << 22),
    ("num_hidden_layers", 10_000),
    ("num_attention_heads", 1 << 14),
    ("num_key_value_heads", 1 << 14),
    ("vocab_size", 1 << 24),
    ("num_local_experts", 1 << 12),
    ("n_routed_experts", 1 << 12),
    ("num_experts_per_tok", 1 << 12),
    ("tie_word_embeddings", 1),
    ("moe_intermediate_size", 1 << 22),
    ("n_shared_experts", 1 << 12),
    ("first_k_dense_replace", 10_000),
    ("q_lora_rank", 1 << 20),
    ("kv_lora_rank", 1 << 20),
    ("qk_nope_head_dim", 1 << 14),
    ("qk_rope_head_dim", 1 << 14),
    ("v_head_dim", 1 << 14),
];

/// The shape of a Hugging Face `config.json` (`transformers`'
/// `LlamaConfig` / `MixtralConfig` / `DeepseekV3Config` field names):
/// `hidden_size`, `intermediate_size`, `num_hidden_layers`,
/// `num_attention_heads`, `vocab_size` required; `num_key_value_heads`
/// (default: the heads, as `LlamaConfig`), the experts as
/// `num_local_experts` or `n_routed_experts` and `num_experts_per_tok`
/// (default 0: dense), `tie_word_embeddings` (default false); DeepSeek's
/// `moe_intermediate_size`, `n_shared_experts`, `first_k_dense_replace`
/// (default 0) and, with a `kv_lora_rank`, latent attention's
/// `q_lora_rank` (null or 0: uncompressed queries), `qk_nope_head_dim`,
/// `qk_rope_head_dim` and `v_head_dim`. Other fields are ignored.
///
/// Errors: the first field missing, not a whole number in range, or
/// inconsistent (heads must divide the hidden size, KV heads the heads).
pub fn from_config_json(text: &str) -> Result<ModelShape, FieldError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        (
            "config",
            e.to_string(),
            "a JSON object (config.json)".into(),
        )
    })?;
    let get = |name: &'static str, default: Option<u64>| config_field(&v, name, default);
    let (hidden, intermediate, layers) = (
        get("hidden_size", None)?,
        get("intermediate_size", None)?,
        get("num_hidden_layers", None)?,
    );
    let heads = get("num_attention_heads", None)?;
    let experts = match get("num_local_experts", Some(0))? {
        0 => get("n_routed_experts", Some(0))?,
        n => n,
    };
    let s = ModelShape {
        hidden,
        intermediate,
        layers,
        heads,
        kv_heads: get("num_key_value_heads", Some(heads))?,
        vocab: get("vocab_size", None)?,
        experts,
        top_k: get("num_experts_per_tok", Some(0))?,
        tied: get("tie_word_embeddings", Some(0))? == 1,
        moe_intermediate: get("moe_intermediate_size", Some(0))?,
        shared_experts: get("n_shared_experts", Some(0))?,
        dense_layers: get("first_k_dense_replace", Some(0))?,
        mla: latent_attention_of(&v)?,
    };
    consistent(s)
}

/// Latent attention's fields, when the config has a `kv_lora_rank`.
fn latent_attention_of(v: &serde_json::Value) -> Result<Option<Mla>, FieldError> {
    let get = |name: &'static str, default: Option<u64>| config_field(v, name, default);
    if get("kv_lora_rank", Some(0))? == 0 {
        return Ok(None);
    }
    Ok(Some(Mla {
        q_lora_rank: get("q_lora_rank", Some(0))?,
        kv_lora_rank: get("kv_lora_rank", None)?,
        qk_nope_head_dim: get("qk_nope_head_dim", None)?,
        qk_rope_head_dim: get("qk_rope_head_dim", Some(0))?,
        v_head_dim: get("v_head_dim", None)?,
    }))
}

/// The whole number `name` of a config (a boolean where its cap is 1);
/// `default` when it is absent or null (and 0 allowed when the default
/// is 0).
fn config_field(
    v: &serde_json::Value,
    name: &'static str,
    default: Option<u64>,
) -> Result<u64, FieldError> {
    let max = CONFIG_FIELDS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(u64::MAX, |f| f.1);
    let allowed = || format!("a whole number, 1 to {max}");
    match v.get(name) {
        None | Some(serde_json::Value::Null) => default.ok_or((name, "missing".into(), allowed())),
        Some(serde_json::Value::Bool(b)) if max == 1 => Ok(*b as u64),
        Some(x) => match x.as_u64() {
            Some(n) if (1..=max).contains(&n) || (n == 0 && default == Some(0)) => Ok(n),
            _ => Err((name, x.to_string(), allowed())),
        },
    }
}

/// Heads divide the hidden size, KV heads the heads, top-k the experts.
fn consistent(s: ModelShape) -> Result<ModelShape, FieldError> {
    if s.hidden % s.heads != 0 {
        let why = format!("a divisor of hidden_size {}", s.hidden);
        return Err(("num_attention_heads", s.heads.to_string(), why));
    }
    if s.heads % s.kv_heads != 0 {
        let why = format!("a divisor of num_attention_heads {}", s.heads);
        return Err(("num_key_value_heads", s.kv_heads.to_string(), why));
    }
    if s.top_k > s.experts || (s.experts > 0 && s.top_k == 0) {
        let why = format!("1 to num_local_experts {} (0 for a dense model)", s.experts);
        return Err(("num_experts_per_tok", s.top_k.to_string(), why));
    }
    if s.dense_layers > s.layers {
        let why = format!("0 to num_hidden_layers {}", s.layers);
        return Err(("first_k_dense_replace", s.dense_layers.to_string(), why));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dense_llama_is_its_parameters_in_order() {
        // LlamaForCausalLM: embed, 9 tensors a layer, norm, lm_head.
        let (dense, experts) = tensors(&LLAMA3_8B);
        assert!(experts.is_empty());
        assert_eq!(dense.len(), 32 * 9 + 3);
        let names: Vec<&str> = dense.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names[..3],
            [
                "embed_tokens",
                "layers.0.self_attn.q_proj",
                "layers.0.self_attn.k_proj"
            ]
        );
        assert_eq!(names[names.len() - 2..], ["norm", "lm_head"]);
        // k_proj: hidden × (hidden / heads × KV heads) = 4096 × 1024.
        assert_eq!(dense[2].elems, 4096 * 1024);
        assert_eq!(LLAMA3_8B.params(), 8_030_261_248);
        assert_eq!(LLAMA3_70B.params(), 70_553_706_496);
    }

    #[test]
    fn parameter_counts_match_the_published_sizes() {
        // 405B: embed + head 2·128256·16384 = 4 202 692 608; a layer
        // 2·16384² + 2·16384·1024 + 3·16384·53248 + 2·16384
        // = 536 870 912 + 33 554 432 + 2 617 245 696 + 32 768
        // = 3 187 703 808, × 126 = 401 650 679 808; + norm 16384.
        assert_eq!(LLAMA31_405B.params(), 405_853_388_800);
        assert_eq!(LLAMA31_405B.active_params(), LLAMA31_405B.params());
        // Mixtral: a layer's attention 2·4096² + 2·4096·1024 = 41 943 040,
        // router 4096·8 = 32 768, norms 8192, experts 8·3·4096·14336 =
        // 1 409 286 144; × 32 = 46 440 644 608; + embed and head
        // 2·32000·4096 = 262 144 000 + norm 4096 = 46 702 792 704
        // ("46.7B" in Mistral's announcement).
        assert_eq!(MIXTRAL_8X7B.params(), 46_702_792_704);
        // Active: all but 6 of 8 experts per layer: 46 702 792 704 −
        // 32·6·176 160 768 = 12 879 925 248 ("12.9B").
        assert_eq!(MIXTRAL_8X7B.active_params(), 12_879_925_248);
        assert_eq!(preset("mixtral-8x7b"), Some(MIXTRAL_8X7B));
        assert_eq!(preset("gpt-5"), None);
    }

    #[test]
    fn deepseek_v3_is_its_published_size() {
        let m = DEEPSEEK_V3;
        // Latent attention, a layer: q_a 7168·1536 = 11 010 048, q_a norm
        // 1 536, q_b 1536·128·192 = 37 748 736, kv_a 7168·(512 + 64) =
        // 4 128 768, kv_a norm 512, kv_b 512·128·256 = 16 777 216, o
        // 128·128·7168 = 117 440 512: 187 107 328.
        let (dense, experts) = tensors(&m);
        let attn: u64 = dense[1..8].iter().map(|t| t.elems).sum();
        assert_eq!(dense[1].name, "layers.0.self_attn.q_a_proj");
        assert_eq!(attn, 187_107_328);
        // 3 dense layers: MLP 3·7168·18432 = 396 361 728. 58 MoE layers:
        // router 256·7168 = 1 835 008, shared expert 3·7168·2048 =
        // 44 040 192, 256 routed experts of 44 040 192 = 11 274 289 152.
        assert_eq!(experts.len() as u64, 58 * 256 * 3);
        assert_eq!(sum(&experts), 58 * 11_274_289_152);
        // Σ = embed + head 2·129280·7168 = 1 853 358 080, norm 7168,
        // 61·(187 107 328 + 2·7168) = 11 414 421 504, 3·396 361 728 =
        // 1 189 085 184, 58·(1 835 008 + 44 040 192 + 11 274 289 152) =
        // 656 569 532 416: 671 026 404 352 ("671B total parameters").
        assert_eq!(m.params(), 671_026_404_352);
        // Active: 8 of 256 routed experts: 671 026 404 352 −
        // 58·248·44 040 192 = 37 552 282 624; without the embedding
        // (0.93B, a lookup) 36.6B, DeepSeek's "36.6B activated".
        assert_eq!(m.active_params(), 37_552_282_624);
        // Attention runs over 128·(192 + 128) elements; the KV a CP ring
        // passes is the same, expanded per head.
        assert_eq!((m.attention_width(), m.kv_width()), (40_960, 40_960));
        assert_eq!(
            (LLAMA3_8B.attention_width(), LLAMA3_8B.kv_width()),
            (8192, 2 * 8 * 128)
        );
        assert_eq!(preset("deepseek-v3"), Some(m));
    }

    #[test]
    fn a_deepseek_config_json_reads_as_the_preset() {
        // The fields of deepseek-ai/DeepSeek-V3's config.json that shape
        // the model (others, e.g. n_group and the MTP layer, ignored).
        let v3 = r#"{"architectures": ["DeepseekV3ForCausalLM"], "first_k_dense_replace": 3,
            "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
            "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8,
            "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128,
            "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
            "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64, "tie_word_embeddings": false, "v_head_dim": 128,
            "vocab_size": 129280}"#;
        assert_eq!(from_config_json(v3), Ok(DEEPSEEK_V3));
        // DeepSeek-V2-Lite writes "q_lora_rank": null: one q_proj.
        let lite = v3.replace("\"q_lora_rank\": 1536", "\"q_lora_rank\": null");
        let m = from_config_json(&lite).unwrap();
        assert_eq!(m.mla.map(|a| a.q_lora_rank), Some(0));
        assert_eq!(tensors(&m).0[1].name, "layers.0.self_attn.q_proj");
        assert_eq!(tensors(&m).0[1].elems, 7168 * 128 * 192);
        let e = from_config_json(&v3.replace(
            "\"first_k_dense_replace\": 3",
            "\"first_k_dense_replace\": 62",
        ))
        .unwrap_err();
        assert_eq!((e.0, e.1.as_str()), ("first_k_dense_replace", "62"));
        let e = from_config_json(&v3.replace("\"v_head_dim\": 128,", "")).unwrap_err();
        assert_eq!((e.0, e.1.as_str()), ("v_head_dim", "missing"));
    }

    #[test]
    fn a_config_json_reads_as_its_preset() {
        // The fields of mistralai/Mixtral-8x7B-v0.1's config.json (others
        // ignored).
        let mixtral = r#"{"architectures": ["MixtralForCausalLM"], "hidden_size": 4096,
            "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 8,
            "num_experts_per_tok": 2, "tie_word_embeddings": false, "rope_theta": 1e6}"#;
        assert_eq!(from_config_json(mixtral), Ok(MIXTRAL_8X7B));
        // No KV heads: as many as heads (LlamaConfig's default); no experts.
        let dense = r#"{"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "vocab_size": 10, "tie_word_embeddings": true}"#;
        let d = from_config_json(dense).unwrap();
        assert_eq!((d.kv_heads, d.experts, d.tied), (4, 0, true));
        // Tied: no head; 10·64 + 2·(4·64·64 + 3·64·128 + 128) + 64.
        assert_eq!(d.params(), 640 + 2 * (16_384 + 24_576 + 128) + 64);
        let e = from_config_json(&dense.replace("\"vocab_size\": 10,", "")).unwrap_err();
        assert_eq!((e.0, e.1.as_str()), ("vocab_size", "missing"));
        let e = from_config_json(
            &dense.replace("\"num_attention_heads\": 4", "\"num_attention_heads\": 3"),
        )
        .unwrap_err();
        assert_eq!((e.0, e.1.as_str()), ("num_attention_heads", "3"));
        let e = from_config_json(&dense.replace("64,", "-1,")).unwrap_err();
        assert_eq!((e.0, e.1.as_str()), ("hidden_size", "-1"));
        assert_eq!(from_config_json("[1]").unwrap_err().0, "hidden_size");
        assert_eq!(from_config_json("{").unwrap_err().0, "config");
    }
}
