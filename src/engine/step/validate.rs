//! The checks of a step's input: each error names the field, its value
//! and what is allowed.

use super::model::{self, ModelShape};
use super::{StepError, StepInput, MAX_BATCH, MAX_MICROBATCHES};

/// An input error.
pub(super) fn invalid(field: &'static str, value: impl ToString, allowed: String) -> StepError {
    StepError::Invalid {
        field,
        value: value.to_string(),
        allowed,
    }
}

/// The model of `input`, checked against the layout and `ranks`.
///
/// Errors: [`StepError::Invalid`] naming the first bad field.
pub fn validate(input: &StepInput, ranks: usize) -> Result<ModelShape, StepError> {
    let m = input
        .shape
        .or_else(|| model::preset(&input.model))
        .ok_or_else(|| {
            invalid(
                "model",
                &input.model,
                format!("one of {}", model::PRESETS.join(", ")),
            )
        })?;
    for (field, v) in [
        ("dp", input.dp),
        ("tp", input.tp),
        ("pp", input.pp),
        ("ep", input.ep),
        ("cp", input.cp),
    ] {
        if v == 0 {
            return Err(invalid(field, v, "at least 1".into()));
        }
    }
    check_tp(input, &m)?;
    let n = [input.tp, input.pp, input.cp]
        .iter()
        .fold(input.dp, |n, &d| n.saturating_mul(d));
    if n != ranks {
        let why = format!(
            "dp·tp·pp·cp = {}·{}·{}·{} = {n} must equal the machine's {ranks} ranks",
            input.dp, input.tp, input.pp, input.cp
        );
        return Err(invalid("dp", input.dp, why));
    }
    check_ep(input, &m)?;
    check_cp(input)?;
    check_batch(input, &m)?;
    check_numbers(input)?;
    Ok(m)
}

fn divisors(n: u64) -> String {
    let d: Vec<String> = (1..=n)
        .filter(|d| n % d == 0)
        .map(|d| d.to_string())
        .collect();
    d.join(", ")
}

fn check_tp(input: &StepInput, m: &ModelShape) -> Result<(), StepError> {
    let tp = input.tp as u64;
    if m.heads % tp != 0 || m.kv_heads % tp != 0 {
        let g = gcd(m.heads, m.kv_heads);
        let why = format!(
            "must divide the model's {} attention heads and {} KV heads (allowed: {})",
            m.heads,
            m.kv_heads,
            divisors(g)
        );
        return Err(invalid("tp", tp, why));
    }
    Ok(())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Megatron-LM's convention: EP ranks are taken from the data-parallel
/// group (with context parallelism, the data- and context-parallel group:
/// the experts see every token of a sequence), so `ep` divides `dp · cp`
/// (`megatron/core/parallel_state.py` of 2024, e.g. the
/// Megatron-LM-240405 that PAI-Megatron-Patch vendors:
/// "data_parallel_size ... is not divisible by
/// expert_model_parallel_size") and the experts (NeMo's parallelism
/// guide: "the number of experts should be exactly divisible by the
/// expert_model_parallel_size"). Later Megatron Core versions build the
/// expert groups apart from the dense ones (`expert_tensor_parallel_size`);
/// this model keeps the simpler, older rule.
fn check_ep(input: &StepInput, m: &ModelShape) -> Result<(), StepError> {
    let ep = input.ep as u64;
    if !m.moe() && ep != 1 {
        return Err(invalid(
            "ep",
            ep,
            format!("1: {} has no experts", input.model),
        ));
    }
    let dp_cp = input.dp as u64 * input.cp as u64;
    if m.moe() && (dp_cp % ep != 0 || m.experts % ep != 0) {
        let why = format!(
            "must divide dp·cp = {dp_cp} and the model's {} experts (Megatron-LM takes EP ranks from the data-parallel group)",
            m.experts
        );
        return Err(invalid("ep", ep, why));
    }
    Ok(())
}

/// Context parallelism splits each sequence into `2 · cp` chunks, a rank
/// taking one from each end so causal attention's work is even (Megatron-LM
/// `get_batch_on_this_cp_rank`; Transformer Engine's P2P ring assumes it),
/// so `2 · cp` divides the sequence. Its ring hides behind attention's
/// compute, so the step must count that compute
/// ([`StepInput::attention_flops`]): without it a long-sequence step
/// would be timed without the work context parallelism exists for.
fn check_cp(input: &StepInput) -> Result<(), StepError> {
    let cp = input.cp as u64;
    if cp > 1 && input.seq % (2 * cp) != 0 {
        let why = format!(
            "2·cp must divide the sequence length {} (Megatron-LM cuts each sequence into 2·cp chunks)",
            input.seq
        );
        return Err(invalid("cp", cp, why));
    }
    if cp > 1 && !input.attention_flops {
        let why = "1 unless attention's FLOPs are counted (cclsim step --attention-flops, link key step_attn=1): context parallelism's ring hides behind attention".to_string();
        return Err(invalid("cp", cp, why));
    }
    Ok(())
}

fn check_batch(input: &StepInput, m: &ModelShape) -> Result<(), StepError> {
    let (pp, mb) = (input.pp as u64, input.microbatches as u64);
    if m.layers % pp != 0 {
        return Err(invalid(
            "pp",
            pp,
            format!(
                "must divide the model's {} layers (allowed: {})",
                m.layers,
                divisors(m.layers)
            ),
        ));
    }
    if mb == 0 || mb < pp || mb > MAX_MICROBATCHES {
        return Err(invalid(
            "microbatches",
            mb,
            format!("pp = {pp} to {MAX_MICROBATCHES} (1F1B needs a microbatch per stage)"),
        ));
    }
    let per = (input.dp as u64).saturating_mul(mb);
    if input.batch == 0 || input.batch % per != 0 || input.batch > MAX_BATCH {
        let why = format!(
            "a positive multiple of dp·microbatches = {per} sequences, at most {MAX_BATCH}"
        );
        return Err(invalid("batch", input.batch, why));
    }
    Ok(())
}

fn check_numbers(input: &StepInput) -> Result<(), StepError> {
    if input.zero > 3 {
        return Err(invalid(
            "zero",
            input.zero,
            "0, 1, 2 or 3 (3 = FSDP full shard)".into(),
        ));
    }
    if !(1..=1 << 20).contains(&input.seq) {
        return Err(invalid("seq", input.seq, "1 to 1048576 tokens".into()));
    }
    if !(input.mfu > 0.0 && input.mfu <= 1.0) {
        return Err(invalid("mfu", input.mfu, "a fraction, 0 < mfu ≤ 1".into()));
    }
    if let Some(p) = input.peak_tflops {
        if !(p > 0.0 && p <= 1e6) {
            return Err(invalid("peak_tflops", p, "0 < TFLOPS ≤ 1000000".into()));
        }
    }
    for (field, d) in [
        ("param_dtype", input.param_dtype),
        ("grad_dtype", input.grad_dtype),
    ] {
        if !d.is_float() {
            return Err(invalid(field, d.name(), "fp32, fp16 or bf16".into()));
        }
    }
    Ok(())
}
