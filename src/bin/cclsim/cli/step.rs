//! `cclsim step`: one training step of a model on a parallel layout, its
//! collectives timed as `predict` times them.

use super::*;
use ccl_playground::engine::quantization::Scheme;
use ccl_playground::engine::step::{self, StepInput};

/// `cclsim step`'s flags as clap parses them, kept next to the code that
/// reads them so the command line's dispatch stays one line per
/// subcommand.
#[derive(clap::Args)]
pub(super) struct StepOptions {
    /// Model: llama3-8b, llama3-70b, llama3.1-405b, mixtral-8x7b
    /// (with --config: its name).
    #[arg(long)]
    model: Option<String>,
    /// A Hugging Face config.json to read the model from
    /// (hidden_size, intermediate_size, num_hidden_layers,
    /// num_attention_heads, num_key_value_heads, vocab_size,
    /// num_local_experts, num_experts_per_tok, tie_word_embeddings).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Data-parallel ranks.
    #[arg(long)]
    dp: usize,
    /// Tensor-parallel ranks (Megatron).
    #[arg(long, default_value_t = 1)]
    tp: usize,
    /// Pipeline stages (1F1B).
    #[arg(long, default_value_t = 1)]
    pp: usize,
    /// Expert-parallel ranks (MoE models), taken from the data- and
    /// context-parallel group (ep divides dp·cp).
    #[arg(long, default_value_t = 1)]
    ep: usize,
    /// Context-parallel ranks (a ring of keys and values in
    /// attention; needs --attention-flops; 2·cp divides --seq).
    #[arg(long, default_value_t = 1)]
    cp: usize,
    /// ZeRO stage: 0 (DDP), 1, 2, 3 (FSDP full shard).
    #[arg(long, default_value_t = 0)]
    zero: u8,
    /// Microbatches per step (at least --pp).
    #[arg(long, default_value_t = 1)]
    microbatches: usize,
    /// Sequence length, tokens.
    #[arg(long, default_value_t = 4096)]
    seq: u64,
    /// Global batch, sequences (a multiple of dp·microbatches).
    #[arg(long)]
    batch: u64,
    /// Parameter and activation dtype: bf16, fp16, fp32.
    #[arg(long = "param-dtype", default_value = "bf16")]
    param_dtype: String,
    /// Dtype gradients are reduced in.
    #[arg(long = "grad-dtype", default_value = "bf16")]
    grad_dtype: String,
    /// Model FLOPs utilisation.
    #[arg(long, default_value_t = 0.4)]
    mfu: f64,
    /// The device's dense bf16 peak, TFLOPS (needed where the
    /// machine's accelerator has no cited figure, e.g. 910B).
    #[arg(long = "peak-tflops")]
    peak_tflops: Option<f64>,
    /// DDP's bucket_cap_mb as a size; default DDP's own.
    #[arg(long)]
    bucket: Option<String>,
    /// Topology preset (as predict's --topo).
    #[arg(long)]
    topo: Option<String>,
    /// A custom topology JSON file.
    #[arg(long)]
    topology: Option<PathBuf>,
    /// A profile from `cclsim fit` (as predict's --profile).
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Ranks of the machine (default: every device, or the
    /// profile's); dp·tp·pp·cp must equal it.
    #[arg(long)]
    ranks: Option<usize>,
    /// Megatron's sequence parallelism (TP's AllReduces as
    /// ReduceScatter + AllGather).
    #[arg(long = "sequence-parallel")]
    sequence_parallel: bool,
    /// Also count attention's FLOPs (12·layers·hidden·seq per token).
    #[arg(long = "attention-flops")]
    attention_flops: bool,
    /// Compress the data-parallel gradient reductions (a what-if:
    /// neither NCCL nor HCCL compresses): none, int8, fp8e4m3, fp8e5m2.
    #[arg(long, default_value = "none")]
    compress: String,
    /// Compare with a second step: this one with these link keys
    /// written over it (the page's keys, docs/links.md), e.g.
    /// "step_tp=2&step_dp=4" or "topo=h100-8" or "step_compress=int8".
    #[arg(long)]
    vs: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl StepOptions {
    /// Runs `cclsim step`: the layout flags as [`StepFlags`], the machine
    /// flags as a [`Machine`], then [`step_cmd`].
    pub(super) fn run(&self) -> Res<()> {
        step_cmd(
            &self.layout(),
            &self.machine(),
            self.vs.as_deref(),
            self.json,
        )
    }

    /// The flags that describe the model and its parallel layout.
    fn layout(&self) -> StepFlags<'_> {
        StepFlags {
            switches: (self.sequence_parallel, self.attention_flops),
            compress: &self.compress,
            model: self.model.as_deref(),
            config: self.config.as_deref(),
            dims: [
                self.dp,
                self.tp,
                self.pp,
                self.ep,
                self.cp,
                self.microbatches,
            ],
            zero: self.zero,
            seq: self.seq,
            batch: self.batch,
            dtypes: (&self.param_dtype, &self.grad_dtype),
            mfu: self.mfu,
            peak_tflops: self.peak_tflops,
            bucket: self.bucket.as_deref(),
        }
    }

    /// The machine a step runs on. Only its topology, profile and rank
    /// flags come from `step`'s flags: [`step::step`] ignores the
    /// machine's own collective and size, so the rest are those of a plain
    /// `auto` bf16 sum AllReduce with no slow, late or failed parts.
    fn machine(&self) -> Machine {
        Machine {
            topo: self.topo.clone(),
            topology: self.topology.clone(),
            op: "allreduce".into(),
            algo: "auto".into(),
            ranks: self.ranks,
            root: None,
            dtype: "bf16".into(),
            profile: self.profile.clone(),
            slices: "auto".into(),
            redop: "sum".into(),
            slow: None,
            late: None,
            down: None,
        }
    }
}

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
