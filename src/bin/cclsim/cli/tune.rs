//! `cclsim tune` and `cclsim tuner`: the model's recommendation in the
//! syntax users write, and what a tuner file makes the library run.

use super::*;

/// The sizes `-b lo -e hi -f factor` name (at most 64).
pub(super) fn sweep_sizes(sizes: &TuneSizes) -> Res<Vec<u64>> {
    let (min, max, factor) = (sizes.min.as_str(), sizes.max.as_str(), sizes.factor);
    let lo = parse_bytes(min).map_err(|e| format!("-b {min:?}: {e}"))?;
    let hi = parse_bytes(max).map_err(|e| format!("-e {max:?}: {e}"))?;
    if lo == 0 || lo > hi {
        return Err(format!(
            "-b {min:?} -e {max:?}: need 1 <= minbytes <= maxbytes"
        ));
    }
    if factor < 2 {
        return Err(format!("-f {factor}: the step factor must be at least 2"));
    }
    let mut sizes = Vec::new();
    let mut b = lo;
    while b <= hi {
        sizes.push(b);
        match b.checked_mul(factor) {
            Some(x) => b = x,
            None => break,
        }
    }
    if sizes.len() > 64 {
        return Err(format!(
            "{} sizes: at most 64 (raise -f or narrow -b/-e)",
            sizes.len()
        ));
    }
    Ok(sizes)
}

/// `cclsim tuner`'s flags as clap parses them, kept next to the code
/// that reads them so the command line's dispatch stays one line per
/// subcommand.
#[derive(clap::Args)]
pub(super) struct TunerOptions {
    /// The tuner file.
    file: PathBuf,
    /// Collective of the per-size view (nccl-tests' names or ours).
    #[arg(long)]
    op: Option<String>,
    /// Ranks of the communicator (default with --topo: every device).
    #[arg(long)]
    ranks: Option<usize>,
    /// Nodes (HCCL: servers) of the communicator (default with
    /// --topo: the machine's).
    #[arg(long)]
    nodes: Option<u64>,
    /// Element type: fp32, fp16, bf16, int32, int8.
    #[arg(long, default_value = "fp32")]
    dtype: String,
    /// Topology preset whose model's recommendation is shown beside.
    #[arg(long)]
    topo: Option<String>,
    #[command(flatten)]
    sizes: TuneSizes,
}

impl TunerOptions {
    /// Runs `cclsim tuner` with these flags ([`tuner_cmd`]).
    pub(super) fn run(&self) -> Res<()> {
        tuner_cmd(&TunerArgs {
            file: &self.file,
            op: self.op.as_deref(),
            ranks: self.ranks,
            nodes: self.nodes,
            dtype: &self.dtype,
            topo: self.topo.as_deref(),
            sizes: &self.sizes,
        })
    }
}

/// The flags of `cclsim tuner`.
pub(super) struct TunerArgs<'a> {
    pub(super) file: &'a Path,
    pub(super) op: Option<&'a str>,
    pub(super) ranks: Option<usize>,
    pub(super) nodes: Option<u64>,
    pub(super) dtype: &'a str,
    pub(super) topo: Option<&'a str>,
    pub(super) sizes: &'a TuneSizes,
}

/// The model's side of `cclsim tuner --topo`: the Config of the
/// preset with the command's collective, ranks and element type.
pub(super) fn tuner_model(a: &TunerArgs, topo: &str, op: &str) -> Res<Config> {
    let m = Machine {
        topo: Some(topo.to_string()),
        topology: None,
        op: op.to_string(),
        algo: "auto".into(),
        ranks: a.ranks,
        root: None,
        dtype: a.dtype.to_string(),
        profile: None,
        slices: "auto".into(),
        redop: "sum".into(),
        slow: None,
        late: None,
        down: None,
    };
    config(&m, &a.sizes.min, "-b")
}

pub(super) fn tuner_cmd(a: &TunerArgs) -> Res<()> {
    use ccl_playground::engine::formats::tuner;
    use ccl_playground::engine::tune::{self, CompareError, TunerQuery};
    let text = read_capped(a.file, tuner::MAX_TUNER_BYTES, "tuner file")?;
    let table = tuner::parse(&text).map_err(|e| format!("{}: {e}", a.file.display()))?;
    let mut t = table.render();
    let Some(op) = a.op else {
        return out(&t);
    };
    let primitive = Primitive::from_name(op).ok_or_else(|| {
        format!(
            "--op {op:?}: expected one of {} (nccl-tests' all_reduce, all_gather, reduce_scatter, ... too)",
            Primitive::ALL.map(|p| p.name()).join(", ")
        )
    })?;
    let sizes = sweep_sizes(a.sizes)?;
    let model = match a.topo {
        None => None,
        Some(topo) => Some(tuner_model(a, topo, op)?),
    };
    let query = TunerQuery {
        op: primitive,
        ranks: a.ranks,
        nodes: a.nodes,
        dtype: a.dtype,
        model: model.as_ref(),
    };
    let compared = tune::compare_table(&table, &query, &sizes).map_err(|e| match e {
        CompareError::NoRanks => {
            "--ranks N: the file's rules depend on the rank count (or give --topo)".to_string()
        }
        e => e.to_string(),
    })?;
    t.push_str(&compared.render());
    out(&t)
}

pub(super) fn tune_cmd(m: &Machine, sweep: &TuneSizes, format: Option<&str>) -> Res<()> {
    use ccl_playground::engine::library::Library;
    use ccl_playground::engine::tune::{self, Format};
    let sizes = sweep_sizes(sweep)?;
    let c = config(m, &sweep.min, "-b")?;
    let library = ccl_playground::engine::plan::machine(&c)
        .map_err(|e| e.to_string())?
        .library;
    let fmt = match format {
        Some(f) => Format::parse(f)
            .ok_or_else(|| format!("--format {f:?}: expected nccl-env, nccl-tuner-csv or hccl"))?,
        None if library == Library::Hccl => Format::Hccl,
        None => Format::NcclTunerCsv,
    };
    out(&tune::text(&c, fmt, &sizes)?)
}
