//! A step's inputs in a link: one URL key per [`StepInput`] field, named
//! after `cclsim step`'s flags (`step` is the model), written only where
//! the value differs from [`StepInput::default`] so that a shared step
//! stays short.
//!
//! A key is read by its type alone (an integer, a number, a dtype, a
//! size, a switch): whether the values make a step (TP dividing the
//! heads, ranks equal to the product of the degrees, ...) is
//! [`super::validate`]'s to say, with the field, once the machine is
//! known. A value that is not even of its type is an error naming the key
//! and what it takes, and the field keeps its default.

use super::{model, StepInput};
use crate::engine::config::Config;
use crate::engine::dtype::DType;
use crate::engine::quantization::Scheme;
use crate::engine::transformer::ModelShape;
use crate::engine::units::parse_bytes;

/// Every key, in the order [`to_pairs`] writes them.
pub const KEYS: [&str; 19] = [
    "step",
    "step_shape",
    "step_dp",
    "step_tp",
    "step_pp",
    "step_ep",
    "step_cp",
    "step_zero",
    "step_mb",
    "step_seq",
    "step_batch",
    "step_mfu",
    "step_peak",
    "step_dtype",
    "step_grad_dtype",
    "step_bucket",
    "step_sp",
    "step_attn",
    "step_compress",
];

/// One value that is not of its key's type: the key, the value and what
/// the key takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkError {
    /// The URL key.
    pub key: &'static str,
    /// The value given.
    pub value: String,
    /// What the key takes.
    pub allowed: String,
}

fn whole(v: &str) -> Result<u64, String> {
    v.parse::<u64>()
        .map_err(|_| "a whole number 0..=18446744073709551615".to_string())
}

fn number(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err("a finite number, e.g. 0.4".to_string()),
    }
}

fn switch(v: &str) -> Result<bool, String> {
    match v {
        "1" | "on" | "true" => Ok(true),
        "0" | "off" | "false" => Ok(false),
        _ => Err("1 or 0 (on or off)".to_string()),
    }
}

fn dtype(v: &str) -> Result<DType, String> {
    DType::from_name(v).ok_or_else(|| "one of fp32, fp16, bf16, int32, int8".to_string())
}

/// The fields of a `config.json` a `step_shape` value lists, in order: the
/// first nine for a Llama or Mixtral shape, all seventeen for a DeepSeek
/// one (its expert width, shared experts, dense layers and latent
/// attention; a 0 is an absent field).
const SHAPE_FIELDS: [&str; 17] = [
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
    "num_local_experts",
    "num_experts_per_tok",
    "tie_word_embeddings",
    "moe_intermediate_size",
    "n_shared_experts",
    "first_k_dense_replace",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
];

/// The fields of a Llama or Mixtral shape.
const LLAMA_SHAPE_FIELDS: usize = 9;

/// A model read from a pasted `config.json`, as nine or seventeen whole
/// numbers joined by dots in [`SHAPE_FIELDS`] order, checked by the same
/// reader as the `config.json` itself ([`model::from_config_json`]).
fn shape(v: &str) -> Result<ModelShape, String> {
    let allowed = || {
        format!(
            "nine or seventeen whole numbers joined by dots: {}",
            SHAPE_FIELDS.join(", ")
        )
    };
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() != LLAMA_SHAPE_FIELDS && parts.len() != SHAPE_FIELDS.len() {
        return Err(allowed());
    }
    let mut json = serde_json::Map::new();
    for (name, part) in SHAPE_FIELDS.iter().zip(&parts) {
        let n: u64 = part.parse().map_err(|_| allowed())?;
        json.insert(name.to_string(), n.into());
    }
    model::from_config_json(&serde_json::Value::Object(json).to_string())
        .map_err(|(field, value, why)| format!("{field} {value}: {why}"))
}

fn shape_value(m: &ModelShape) -> String {
    let a = m.mla.unwrap_or(model::Mla {
        q_lora_rank: 0,
        kv_lora_rank: 0,
        qk_nope_head_dim: 0,
        qk_rope_head_dim: 0,
        v_head_dim: 0,
    });
    let all = [
        m.hidden,
        m.intermediate,
        m.layers,
        m.heads,
        m.kv_heads,
        m.vocab,
        m.experts,
        m.top_k,
        u64::from(m.tied),
        m.moe_intermediate,
        m.shared_experts,
        m.dense_layers,
        a.q_lora_rank,
        a.kv_lora_rank,
        a.qk_nope_head_dim,
        a.qk_rope_head_dim,
        a.v_head_dim,
    ];
    let llama = all[LLAMA_SHAPE_FIELDS..].iter().all(|&n| n == 0);
    let n = if llama { LLAMA_SHAPE_FIELDS } else { all.len() };
    all[..n]
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

fn usize_of(v: &str) -> Result<usize, String> {
    whole(v).and_then(|n| usize::try_from(n).map_err(|_| "a smaller whole number".to_string()))
}

/// Sets the field of `key` in `s` from `v`; `Ok(false)` if `key` is not a
/// step key.
fn set(s: &mut StepInput, key: &str, v: &str) -> Result<bool, String> {
    match key {
        "step" => {
            if v.is_empty() {
                return Err("a model name, e.g. llama3-70b".to_string());
            }
            s.model = v.to_string()
        }
        "step_shape" => s.shape = Some(shape(v)?),
        "step_dp" => s.dp = usize_of(v)?,
        "step_tp" => s.tp = usize_of(v)?,
        "step_pp" => s.pp = usize_of(v)?,
        "step_ep" => s.ep = usize_of(v)?,
        "step_cp" => s.cp = usize_of(v)?,
        "step_zero" => {
            s.zero = match v {
                "0" | "1" | "2" | "3" => v.parse().unwrap_or(0),
                _ => return Err("0, 1, 2 or 3 (the ZeRO stage; 3 is FSDP)".to_string()),
            }
        }
        "step_mb" => s.microbatches = usize_of(v)?,
        "step_seq" => s.seq = whole(v)?,
        "step_batch" => s.batch = whole(v)?,
        "step_mfu" => s.mfu = number(v)?,
        "step_peak" => s.peak_tflops = Some(number(v)?),
        "step_dtype" => s.param_dtype = dtype(v)?,
        "step_grad_dtype" => s.grad_dtype = dtype(v)?,
        "step_bucket" => {
            s.bucket_cap = Some(parse_bytes(v).map_err(|e| format!("a size such as 25MiB ({e})"))?)
        }
        "step_sp" => s.sequence_parallel = switch(v)?,
        "step_attn" => s.attention_flops = switch(v)?,
        "step_compress" => {
            s.compress = Scheme::from_name(v)
                .ok_or_else(|| "one of none, int8, fp8e4m3, fp8e5m2".to_string())?
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The step a link's `(key, value)` pairs describe: `None` when no step
/// key is present; otherwise [`StepInput::default`] with every readable
/// key applied (the last of a repeated key wins), and one error per value
/// that is not of its key's type.
pub fn from_pairs(pairs: &[(String, String)]) -> (Option<StepInput>, Vec<LinkError>) {
    let mut step = None::<StepInput>;
    let mut errors = Vec::new();
    for (k, v) in pairs {
        let Some(key) = KEYS.iter().find(|x| **x == k.as_str()) else {
            continue;
        };
        let s = step.get_or_insert_with(StepInput::default);
        let v = v.trim();
        if let Err(allowed) = set(s, key, v) {
            errors.push(LinkError {
                key,
                value: v.chars().take(80).collect(),
                allowed,
            });
        }
    }
    (step, errors)
}

/// The keys of `s` that differ from [`StepInput::default`] (the model
/// always: it says the link holds a step; a model read from a
/// `config.json` as its shape, `step_shape`).
pub fn to_pairs(s: &StepInput) -> Vec<(&'static str, String)> {
    let d = StepInput::default();
    let mut out = vec![("step", s.model.clone())];
    if let Some(m) = &s.shape {
        out.push(("step_shape", shape_value(m)));
    }
    let mut put = |key: &'static str, differs: bool, v: String| {
        if differs {
            out.push((key, v));
        }
    };
    put("step_dp", s.dp != d.dp, s.dp.to_string());
    put("step_tp", s.tp != d.tp, s.tp.to_string());
    put("step_pp", s.pp != d.pp, s.pp.to_string());
    put("step_ep", s.ep != d.ep, s.ep.to_string());
    put("step_cp", s.cp != d.cp, s.cp.to_string());
    put("step_zero", s.zero != d.zero, s.zero.to_string());
    put(
        "step_mb",
        s.microbatches != d.microbatches,
        s.microbatches.to_string(),
    );
    put("step_seq", s.seq != d.seq, s.seq.to_string());
    put("step_batch", s.batch != d.batch, s.batch.to_string());
    put("step_mfu", s.mfu != d.mfu, s.mfu.to_string());
    if let Some(p) = s.peak_tflops {
        put("step_peak", true, p.to_string());
    }
    put(
        "step_dtype",
        s.param_dtype != d.param_dtype,
        s.param_dtype.name().to_string(),
    );
    put(
        "step_grad_dtype",
        s.grad_dtype != d.grad_dtype,
        s.grad_dtype.name().to_string(),
    );
    if let Some(b) = s.bucket_cap {
        let v = if b > 0 && b % (1 << 20) == 0 {
            format!("{}MiB", b >> 20)
        } else {
            b.to_string()
        };
        put("step_bucket", true, v);
    }
    put(
        "step_sp",
        s.sequence_parallel != d.sequence_parallel,
        flag(s.sequence_parallel),
    );
    put(
        "step_attn",
        s.attention_flops != d.attention_flops,
        flag(s.attention_flops),
    );
    put(
        "step_compress",
        s.compress != d.compress,
        s.compress.name().to_string(),
    );
    out
}

/// [`to_pairs`] as a query string (without `?`).
pub fn to_query(s: &StepInput) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in to_pairs(s) {
        q.append_pair(k, &v);
    }
    q.finish()
}

/// The key of a pinned step compared beside the current one: its value
/// is a whole [`full_query`] (machine and step), percent-encoded.
pub const VS_KEY: &str = "step_vs";

/// What of a page's configuration a step reads: the machine (topology,
/// custom topology, profile, ranks, faults, slicing); every collective,
/// size, algorithm and what-if of the page is the default, since the step
/// sets each call's own (`auto`, uncompressed unless
/// [`StepInput::compress`], a sum).
pub fn step_machine(c: &Config) -> Config {
    Config {
        topo: c.topo.clone(),
        custom: c.custom.clone(),
        profile: c.profile.clone(),
        ranks: c.ranks,
        faults: c.faults.clone(),
        slices: c.slices,
        ..Config::default()
    }
}

/// A step and its machine as one query: the machine's keys
/// ([`Config::to_query`] of [`step_machine`]), then the step's
/// ([`to_query`]).
pub fn full_query(machine: &Config, s: &StepInput) -> String {
    format!("{}&{}", step_machine(machine).to_query(), to_query(s))
}

/// The machine and step of a [`full_query`]; keys of neither are
/// refused.
///
/// Errors: every value that is not of its key's type and every unknown
/// key, as `key=value: allowed`, joined by `; `.
pub fn from_full_query(q: &str) -> Result<(Config, StepInput), String> {
    let q = q.strip_prefix('?').unwrap_or(q);
    let (machine, config_errors) = Config::from_query(q);
    let pairs: Vec<(String, String)> = form_urlencoded::parse(q.as_bytes()).into_owned().collect();
    let (step, step_errors) = from_pairs(&pairs);
    let mut errors: Vec<String> = config_errors
        .iter()
        .filter(|e| !(e.is_notice() && KEYS.contains(&e.key.as_str())))
        .map(|e| format!("{}={}: {}", e.key, e.value, e.allowed))
        .collect();
    errors.extend(
        step_errors
            .iter()
            .map(|e| format!("{}={}: {}", e.key, e.value, e.allowed)),
    );
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    Ok((step_machine(&machine), step.unwrap_or_default()))
}

/// `machine` and `s` with `overrides` (link keys, `step_tp=2&topo=h100-8`)
/// written over them: the other side of a comparison.
///
/// Errors: as [`from_full_query`], for the keys of `overrides`.
pub fn variant(
    machine: &Config,
    s: &StepInput,
    overrides: &str,
) -> Result<(Config, StepInput), String> {
    let o = overrides.trim().trim_start_matches('?');
    from_full_query(&format!("{}&{o}", full_query(machine, s)))
}

/// The keys whose values differ between two queries, in `b`'s order and
/// then `a`'s leftovers: `(key, value in a, value in b)`, an absent key's
/// value empty (its default). `v` is left out.
pub fn differences(a: &str, b: &str) -> Vec<(String, String, String)> {
    let read = |q: &str| -> Vec<(String, String)> {
        form_urlencoded::parse(q.trim_start_matches('?').as_bytes())
            .into_owned()
            .filter(|(k, _)| k != "v")
            .collect()
    };
    let (a, b) = (read(a), read(b));
    let last = |pairs: &[(String, String)], k: &str| {
        pairs
            .iter()
            .rev()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let mut keys: Vec<&String> = Vec::new();
    for (k, _) in b.iter().chain(a.iter()) {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter_map(|k| {
            let (x, y) = (last(&a, k), last(&b, k));
            (x != y).then(|| (k.clone(), x.unwrap_or_default(), y.unwrap_or_default()))
        })
        .collect()
}

fn flag(b: bool) -> String {
    if b { "1" } else { "0" }.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(q: &str) -> Vec<(String, String)> {
        form_urlencoded::parse(q.as_bytes()).into_owned().collect()
    }

    #[test]
    fn no_step_key_is_no_step() {
        assert_eq!(from_pairs(&pairs("op=allreduce&ranks=8")), (None, vec![]));
    }

    #[test]
    fn the_seed_story_reads_back_field_by_field() {
        let (s, errors) = from_pairs(&pairs(
            "step=llama3-70b&step_dp=8&step_batch=64&step_mfu=0.45&step_peak=313&step_bucket=25MiB&step_sp=1",
        ));
        assert_eq!(errors, vec![]);
        let s = s.unwrap();
        assert_eq!(s.model, "llama3-70b");
        assert_eq!((s.dp, s.tp, s.pp, s.batch), (8, 1, 1, 64));
        assert_eq!(s.mfu, 0.45);
        assert_eq!(s.peak_tflops, Some(313.0));
        assert_eq!(s.bucket_cap, Some(25 << 20));
        assert!(s.sequence_parallel && !s.attention_flops);
    }

    #[test]
    fn written_keys_are_the_non_defaults_and_read_back_equal() {
        let s = StepInput {
            model: "mixtral-8x7b".into(),
            dp: 4,
            tp: 2,
            ep: 4,
            zero: 3,
            microbatches: 4,
            mfu: 0.35,
            peak_tflops: Some(989.5),
            grad_dtype: DType::Fp32,
            bucket_cap: Some(100 << 20),
            attention_flops: true,
            compress: Scheme::Int8,
            ..StepInput::default()
        };
        let written = to_pairs(&s);
        let keys: Vec<&str> = written.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "step",
                "step_dp",
                "step_tp",
                "step_ep",
                "step_zero",
                "step_mb",
                "step_mfu",
                "step_peak",
                "step_grad_dtype",
                "step_bucket",
                "step_attn",
                "step_compress"
            ]
        );
        let back: Vec<(String, String)> = written
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(from_pairs(&back), (Some(s), vec![]));
        // The default step is its model alone.
        assert_eq!(
            to_pairs(&StepInput::default()),
            [("step", "llama3-8b".to_string())]
        );
    }

    #[test]
    fn a_pasted_config_travels_as_its_shape() {
        let s = StepInput {
            model: "config.json".into(),
            shape: Some(model::LLAMA3_70B),
            ..StepInput::default()
        };
        let written = to_pairs(&s);
        assert_eq!(
            written[1],
            ("step_shape", "8192.28672.80.64.8.128256.0.0.0".to_string())
        );
        let back: Vec<(String, String)> = written
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(from_pairs(&back), (Some(s), vec![]));
        // The reader of config.json checks it: 7 heads do not divide 8192.
        let (_, errors) = from_pairs(&pairs("step_shape=8192.28672.80.7.7.128256.0.0.0"));
        assert_eq!(errors[0].key, "step_shape");
        assert!(
            errors[0].allowed.contains("num_attention_heads 7"),
            "{}",
            errors[0].allowed
        );
        let (_, errors) = from_pairs(&pairs("step_shape=1.2.3"));
        assert!(errors[0]
            .allowed
            .starts_with("nine or seventeen whole numbers"));
    }

    #[test]
    fn a_deepseek_shape_travels_with_its_latent_attention() {
        let s = StepInput {
            model: "config.json".into(),
            shape: Some(model::DEEPSEEK_V3),
            ..StepInput::default()
        };
        let written = to_pairs(&s);
        assert_eq!(
            written[1].1,
            "7168.18432.61.128.128.129280.256.8.0.2048.1.3.1536.512.128.64.128"
        );
        let back: Vec<(String, String)> = written
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(from_pairs(&back), (Some(s), vec![]));
    }

    #[test]
    fn a_value_not_of_its_type_names_the_key_and_keeps_the_default() {
        let (s, errors) = from_pairs(&pairs("step_tp=two&step_zero=4&step_mfu=NaN&step_sp=maybe"));
        let s = s.unwrap();
        assert_eq!(
            (s.tp, s.zero, s.mfu, s.sequence_parallel),
            (1, 0, 0.4, false)
        );
        let got: Vec<(&str, &str)> = errors.iter().map(|e| (e.key, e.value.as_str())).collect();
        assert_eq!(
            got,
            [
                ("step_tp", "two"),
                ("step_zero", "4"),
                ("step_mfu", "NaN"),
                ("step_sp", "maybe")
            ]
        );
        assert!(errors[1].allowed.contains("0, 1, 2 or 3"));
    }

    #[test]
    fn out_of_range_values_are_kept_for_the_step_to_name() {
        // tp = 3 is a number: whether it divides the heads is the step's
        // question on its machine, not the link's.
        let (s, errors) = from_pairs(&pairs("step=llama3-8b&step_tp=3&step_dp=0"));
        assert_eq!(errors, vec![]);
        let s = s.unwrap();
        assert_eq!((s.tp, s.dp), (3, 0));
    }

    #[test]
    fn a_variant_is_the_step_with_link_keys_written_over_it() {
        let machine = Config {
            topo: "910b-2x8".into(),
            ranks: 16,
            ..Config::default()
        };
        let s = StepInput {
            dp: 16,
            batch: 16,
            ..StepInput::default()
        };
        let (m, v) = variant(&machine, &s, "step_tp=2&step_dp=8&step_compress=int8").unwrap();
        assert_eq!(m, machine);
        assert_eq!(
            v,
            StepInput {
                tp: 2,
                dp: 8,
                compress: Scheme::Int8,
                ..s.clone()
            }
        );
        // Another machine, the step kept.
        let (m, v) = variant(&machine, &s, "?topo=h100-8&ranks=8").unwrap();
        assert_eq!((m.topo.as_str(), m.ranks), ("h100-8", 8));
        assert_eq!(v, s);
        // A full query reads back what wrote it.
        assert_eq!(
            from_full_query(&full_query(&machine, &s)),
            Ok((machine.clone(), s.clone()))
        );
        // A typo is refused, named, never dropped.
        let e = variant(&machine, &s, "step_tpp=2").unwrap_err();
        assert!(e.starts_with("step_tpp=2: unknown key"), "{e}");
        let e = variant(&machine, &s, "step_compress=zip").unwrap_err();
        assert_eq!(e, "step_compress=zip: one of none, int8, fp8e4m3, fp8e5m2");
    }

    #[test]
    fn differences_name_each_changed_key_with_both_values() {
        let d = differences(
            "v=1&topo=910b-8&step=llama3-8b&step_dp=8",
            "v=1&topo=h100-8&step=llama3-8b&step_dp=4&step_tp=2",
        );
        let want = [
            ("topo", "910b-8", "h100-8"),
            ("step_dp", "8", "4"),
            ("step_tp", "", "2"),
        ];
        assert_eq!(
            d,
            want.map(|(k, a, b)| (k.to_string(), a.to_string(), b.to_string()))
        );
        assert_eq!(differences("a=1", "a=1"), vec![]);
    }
}
