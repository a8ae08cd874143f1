//! `cclsim step`: one training step of a model on a parallel layout, its
//! collectives timed as `predict` times them.

use super::*;
use ccl_playground::engine::quantization::Scheme;
use ccl_playground::engine::step::{self, StepInput};

/// The flags of `step` that describe the layout.
pub(super) struct StepFlags<'a> {
    pub(super) model: Option<&'a str>,
    pub(super) config: Option<&'a Path>,
    /// dp, tp, pp, ep, cp, microbatches.
    pub(super) dims: [usize; 6],
    pub(super) zero: u8,
    pub(super) seq: u64,
    pub(super) batch: u64,
    pub(super) dtypes: (&'a str, &'a str),
    pub(super) mfu: f64,
    pub(super) peak_tflops: Option<f64>,
    pub(super) bucket: Option<&'a str>,
    /// --sequence-parallel, --attention-flops.
    pub(super) switches: (bool, bool),
    /// --compress.
    pub(super) compress: &'a str,
}

/// The engine's input of `step`'s flags; a bad dtype or size names its flag.
pub(super) fn step_input(f: &StepFlags) -> Res<StepInput> {
    let dtype = |flag: &str, v: &str| {
        DType::from_name(&v.to_ascii_lowercase())
            .ok_or_else(|| format!("--{flag} {v:?}: fp32, fp16 or bf16"))
    };
    let bucket_cap = match f.bucket {
        Some(b) => Some(parse_bytes(b).map_err(|e| format!("--bucket {b:?}: {e}"))?),
        None => None,
    };
    let [dp, tp, pp, ep, cp, microbatches] = f.dims;
    let (model, shape) = step_model(f)?;
    Ok(StepInput {
        model,
        shape,
        dp,
        tp,
        pp,
        ep,
        cp,
        zero: f.zero,
        microbatches,
        seq: f.seq,
        batch: f.batch,
        param_dtype: dtype("param-dtype", f.dtypes.0)?,
        grad_dtype: dtype("grad-dtype", f.dtypes.1)?,
        mfu: f.mfu,
        peak_tflops: f.peak_tflops,
        bucket_cap,
        sequence_parallel: f.switches.0,
        attention_flops: f.switches.1,
        compress: Scheme::from_name(&f.compress.to_ascii_lowercase()).ok_or_else(|| {
            format!(
                "--compress {:?}: none, int8, fp8e4m3 or fp8e5m2",
                f.compress
            )
        })?,
    })
}

/// Largest config.json `--config` reads, bytes.
pub(super) const MAX_MODEL_CONFIG_BYTES: usize = 1 << 20;

/// The model of `--model` / `--config`: its name and, from a
/// config.json, its shape.
pub(super) fn step_model(f: &StepFlags) -> Res<(String, Option<step::model::ModelShape>)> {
    let Some(path) = f.config else {
        let m = f
            .model
            .ok_or("--model is required unless --config is given")?;
        return Ok((m.to_ascii_lowercase(), None));
    };
    let text = read_capped(path, MAX_MODEL_CONFIG_BYTES, "config.json")?;
    let shape = step::model::from_config_json(&text).map_err(|(field, value, allowed)| {
        format!("--config {}: {field} {value}: {allowed}", path.display())
    })?;
    let name = match f.model {
        Some(m) => m.to_string(),
        None => path.display().to_string(),
    };
    Ok((name, Some(shape)))
}

/// `cclsim step`: the engine's [`step::step`] on the machine of these
/// flags (the configuration `predict` would make), as a table or JSON.
pub(super) fn step_cmd(f: &StepFlags, m: &Machine, vs: Option<&str>, json: bool) -> Res<()> {
    let input = step_input(f)?;
    let machine = config(m, "1MiB", "--bytes")?;
    let flag_error = |e: step::StepError| match e {
        step::StepError::Invalid {
            field,
            value,
            allowed,
        } => format!("--{} {value}: {allowed}", field.replace('_', "-")),
        other => other.to_string(),
    };
    let r = step::step(&input, &machine).map_err(flag_error)?;
    let Some(overrides) = vs else {
        if json {
            let v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            return out(&format!("{v}\n"));
        }
        return out(&step_text(&r));
    };
    let (machine_b, input_b) = step::link::variant(&machine, &input, overrides)
        .map_err(|e| format!("--vs {overrides:?}: {e}"))?;
    let b = step::step(&input_b, &machine_b).map_err(|e| format!("--vs {overrides:?}: {e}"))?;
    let changes = step::compare(&r, &b);
    if json {
        let v = serde_json::json!({"a": r, "b": b, "changes": changes});
        return out(&format!("{v}\n"));
    }
    out(&format!(
        "A: this step\n{}\nB: with {overrides}\n{}\n{}",
        step_text(&r),
        step_text(&b),
        changes_text(&changes)
    ))
}

/// The comparison as a table: figure, A, B, B / A.
fn changes_text(changes: &[step::Change]) -> String {
    let mut t = format!("{:<16} {:>14} {:>14} {:>8}\n", "figure", "A", "B", "B/A");
    for c in changes {
        // The share in percent, the rest in their own unit.
        let (name, scale) = match c.figure.as_str() {
            "comm_share" => ("comm_share(%)", 100.0),
            f => (f.trim_end_matches("_us"), 1.0),
        };
        t.push_str(&format!(
            "{name:<16} {:>14.1} {:>14.1} {:>8.3}\n",
            scale * c.a,
            scale * c.b,
            c.ratio()
        ));
    }
    t
}

/// The step as a table and a summary.
pub(super) fn step_text(r: &step::StepReport) -> String {
    let mut t = format!(
        "{} ({:.1} B parameters, {:.1} B active) on {} ranks, {} tokens per step\n",
        r.model,
        r.params as f64 / 1e9,
        r.active_params as f64 / 1e9,
        r.ranks,
        r.tokens
    );
    t.push_str(&format!(
        "{:<13} {:>12} {:>5} {:>7} {:>12} {:>13} {:>13}  {}\n",
        "primitive", "bytes", "group", "calls", "us/call", "total(us)", "hides", "what for"
    ));
    for c in &r.collectives {
        let mut range = match c.range_us {
            Some((lo, hi)) => format!("; 80 % range {lo:.1}–{hi:.1} us"),
            None => String::new(),
        };
        if !c.compression.is_empty() {
            range.push_str(&format!("; compression: {}", c.compression));
        }
        t.push_str(&format!(
            "{:<13} {:>12} {:>5} {:>7} {:>12.1} {:>13.0} {:>13}  {} [{}; {}{range}]\n",
            step::title(&c.primitive),
            format_bytes(c.bytes),
            c.group_ranks,
            c.calls,
            c.time_us,
            c.total_us,
            c.overlap,
            c.purpose,
            c.algorithm,
            c.placement
        ));
    }
    t.push_str(&format!(
        "compute {:.0} us ({:.3e} FLOPs / {} ranks at {} TFLOPS [{}] × MFU {})\n",
        r.compute_us, r.flops, r.ranks, r.peak_tflops, r.peak_source, r.mfu
    ));
    t.push_str(&format!(
        "pipeline bubble {:.0} us; communication {:.0} us in all, {:.0} us exposed\n",
        r.bubble_us, r.comm_us, r.exposed_comm_us
    ));
    t.push_str(&format!(
        "step {:.0} us, {:.0} tokens/s; exposed communication {:.1} % of the step ({:.1} % if nothing overlapped)\n",
        r.step_time_us,
        r.tokens_per_s,
        100.0 * r.comm_share,
        100.0 * r.comm_share_serial
    ));
    t
}
