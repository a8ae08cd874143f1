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
//!
//! The tensors are Hugging Face's `LlamaForCausalLM` /
//! `MixtralForCausalLM` parameters in `model.parameters()` order (the
//! order DDP's buckets are filled in reverse); a Mixtral layer's MLP is a
//! router (`block_sparse_moe.gate`, hidden × experts) and `experts` copies
//! of the SwiGLU MLP (`w1`, `w2`, `w3`).

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
}

impl ModelShape {
    /// Is it a mixture of experts?
    pub fn moe(&self) -> bool {
        self.experts > 0
    }

    /// Parameters of one SwiGLU MLP (gate, up, down).
    pub fn mlp_params(&self) -> u64 {
        3 * self.hidden * self.intermediate
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
        sum(&dense) + self.layers * self.top_k * self.mlp_params()
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
    }
}

/// Meta-Llama-3-8B (module doc).
pub const LLAMA3_8B: ModelShape = llama(4096, 14336, 32, 32, 128256);

/// Meta-Llama-3-70B (module doc).
pub const LLAMA3_70B: ModelShape = llama(8192, 28672, 80, 64, 128256);

/// Meta-Llama-3.1-405B (module doc).
pub const LLAMA31_405B: ModelShape = ModelShape {
    hidden: 16384,
    intermediate: 53248,
    layers: 126,
    heads: 128,
    kv_heads: 8,
    vocab: 128256,
    experts: 0,
    top_k: 0,
    tied: false,
};

/// Mixtral-8x7B (module doc).
pub const MIXTRAL_8X7B: ModelShape = ModelShape {
    hidden: 4096,
    intermediate: 14336,
    layers: 32,
    heads: 32,
    kv_heads: 8,
    vocab: 32000,
    experts: 8,
    top_k: 2,
    tied: false,
};

/// The preset names, as the CLI and a link spell them.
pub const PRESETS: [&str; 4] = ["llama3-8b", "llama3-70b", "llama3.1-405b", "mixtral-8x7b"];

/// A preset by name ([`PRESETS`]).
pub fn preset(name: &str) -> Option<ModelShape> {
    match name {
        "llama3-8b" => Some(LLAMA3_8B),
        "llama3-70b" => Some(LLAMA3_70B),
        "llama3.1-405b" => Some(LLAMA31_405B),
        "mixtral-8x7b" => Some(MIXTRAL_8X7B),
        _ => None,
    }
}

/// The model's tensors in `model.parameters()` order: `(dense, experts)`
/// (the experts' MLPs apart, since expert parallelism shards them and
/// their gradients reduce over fewer ranks).
pub fn tensors(s: &ModelShape) -> (Vec<Tensor>, Vec<Tensor>) {
    let kv = s.hidden / s.heads.max(1) * s.kv_heads;
    let t = |name: String, elems| Tensor { name, elems };
    let mut dense = vec![t("embed_tokens".into(), s.vocab * s.hidden)];
    let mut experts = Vec::new();
    for l in 0..s.layers {
        let p = format!("layers.{l}");
        dense.push(t(format!("{p}.self_attn.q_proj"), s.hidden * s.hidden));
        dense.push(t(format!("{p}.self_attn.k_proj"), s.hidden * kv));
        dense.push(t(format!("{p}.self_attn.v_proj"), s.hidden * kv));
        dense.push(t(format!("{p}.self_attn.o_proj"), s.hidden * s.hidden));
        if s.moe() {
            let g = format!("{p}.block_sparse_moe.gate");
            dense.push(t(g, s.hidden * s.experts));
            for e in 0..s.experts {
                for w in ["w1", "w2", "w3"] {
                    let name = format!("{p}.block_sparse_moe.experts.{e}.{w}");
                    experts.push(t(name, s.hidden * s.intermediate));
                }
            }
        } else {
            for w in ["gate_proj", "up_proj", "down_proj"] {
                dense.push(t(format!("{p}.mlp.{w}"), s.hidden * s.intermediate));
            }
        }
        dense.push(t(format!("{p}.input_layernorm"), s.hidden));
        dense.push(t(format!("{p}.post_attention_layernorm"), s.hidden));
    }
    dense.push(t("norm".into(), s.hidden));
    if !s.tied {
        dense.push(t("lm_head".into(), s.vocab * s.hidden));
    }
    (dense, experts)
}

/// A field of a `config.json` that cannot be read: the field, the value,
/// what is allowed.
pub type FieldError = (&'static str, String, String);

/// Largest value of each shape field read from a `config.json`.
const CONFIG_FIELDS: [(&str, u64); 9] = [
    ("hidden_size", 1 << 20),
    ("intermediate_size", 1 << 22),
    ("num_hidden_layers", 10_000),
    ("num_attention_heads", 1 << 14),
    ("num_key_value_heads", 1 << 14),
    ("vocab_size", 1 << 24),
    ("num_local_experts", 1 << 12),
    ("num_experts_per_tok", 1 << 12),
    ("tie_word_embeddings", 1),
];

/// The shape of a Hugging Face `config.json` (`transformers`'
/// `LlamaConfig` / `MixtralConfig` field names): `hidden_size`,
/// `intermediate_size`, `num_hidden_layers`, `num_attention_heads`,
/// `vocab_size` required; `num_key_value_heads` (default: the heads, as
/// `LlamaConfig`), `num_local_experts` and `num_experts_per_tok` (default
/// 0: dense), `tie_word_embeddings` (default false). Other fields are
/// ignored.
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
    let get = |i: usize, default: Option<u64>| -> Result<u64, FieldError> {
        let (name, max) = CONFIG_FIELDS[i.min(CONFIG_FIELDS.len() - 1)];
        let allowed = || format!("a whole number, 1 to {max}");
        match v.get(name) {
            None | Some(serde_json::Value::Null) => {
                default.ok_or((name, "missing".into(), allowed()))
            }
            Some(serde_json::Value::Bool(b)) if max == 1 => Ok(*b as u64),
            Some(x) => match x.as_u64() {
                Some(n) if (1..=max).contains(&n) || (n == 0 && default == Some(0)) => Ok(n),
                _ => Err((name, x.to_string(), allowed())),
            },
        }
    };
    let (hidden, intermediate, layers) = (get(0, None)?, get(1, None)?, get(2, None)?);
    let heads = get(3, None)?;
    let s = ModelShape {
        hidden,
        intermediate,
        layers,
        heads,
        kv_heads: get(4, Some(heads))?,
        vocab: get(5, None)?,
        experts: get(6, Some(0))?,
        top_k: get(7, Some(0))?,
        tied: get(8, Some(0))? == 1,
    };
    consistent(s)
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
