//! `cclsim`: the planning pipeline on the command line (native only). Every
//! figure comes from `engine::plan`, the same function the page calls, on
//! the configuration the same link would give (`--json` prints that link).
//!
//! - `cclsim predict --topo T --op OP --algo A|auto --bytes B [--ranks N]
//!   [--profile P.json] [--topology C.json] [--slices auto|K] [--dtype D]
//!   [--root R] [--redop sum|prod|max|min|avg] [--slow R:F] [--late R:US]
//!   [--down A-B|A-port] [--json | --format table|jsonl|csv] [--trace FILE]`:
//!   with slow ranks or failed links (`engine::degrade`), also the healthy
//!   machine's time and the ratio
//! - `cclsim sweep ... -b 8 -e 1G -f 2 [--format table|jsonl|csv]`:
//!   nccl-tests' table (which `cclsim fit` reads back), JSON lines or CSV.
//! - `cclsim fit LOG --out P.json [--ranks N] [--op NAME] [--json]`: fit a
//!   profile; per-row measured vs fitted.
//! - `cclsim accuracy [DIR]`: the user's path on every log in DIR (default:
//!   the real logs in `tests/fixtures/nccl-tests`): fit the even-indexed
//!   sizes of each table, then predict each odd one with `--profile --algo
//!   auto`, and print the hold-out error.
//! - `cclsim fusion --topo T --ranks N --fusion llama3-8b|30x4MiB [--bucket
//!   25MiB] [--dtype D] [--json]`: DDP-style bucketing (without `--bucket`:
//!   DDP's default, with its small first bucket), fused vs unfused.
//! - `cclsim compress --scheme int8|fp8e4m3|fp8e5m2 ...`: the error and wire
//!   size of one quantisation round trip (a what-if: HCCL and NCCL have no
//!   gradient compression).
//!
//! Bad input exits with status 2 and one line on stderr.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(cli::main());
}

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use ccl_playground::engine::algorithm::{self, Algorithm};
    use ccl_playground::engine::calibrate::Profile;
    use ccl_playground::engine::collective::Primitive;
    use ccl_playground::engine::config::{Config, MEASURED};
    use ccl_playground::engine::cost::{self, Slices};
    use ccl_playground::engine::dtype::DType;
    use ccl_playground::engine::formats::report::{self, ReportHeader, ReportRow};
    use ccl_playground::engine::formats::{self, Collective};
    use ccl_playground::engine::plan::{Decision, Plan};
    use ccl_playground::engine::step::{self, StepInput};
    use ccl_playground::engine::topology::Topology;
    use ccl_playground::engine::units::{format_bytes, message_bytes, parse_bytes};
    use clap::{Parser, Subcommand, ValueEnum};
    use std::path::{Path, PathBuf};

    /// Output formats of predict and sweep.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
    enum Format {
        /// nccl-tests' table (`cclsim fit` reads it back).
        Table,
        /// One JSON object per size.
        Jsonl,
        /// Comma-separated values with a header line.
        Csv,
    }

    /// Every `println!` below goes through [`print_or_quit`]: when stdout is closed
    /// (`cclsim sweep … | head -2`) the process ends quietly with status 0
    /// instead of panicking on the broken pipe.
    macro_rules! println {
        () => {
            print_or_quit(format_args!("\n"))
        };
        ($($arg:tt)*) => {
            print_or_quit(format_args!("{}\n", format_args!($($arg)*)))
        };
    }

    /// Writes to stdout; a closed pipe exits quietly (status 0), any other
    /// write error exits with status 1 and one line on stderr.
    fn print_or_quit(args: std::fmt::Arguments) {
        use std::io::Write;
        if let Err(e) = std::io::stdout().lock().write_fmt(args) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            eprintln!("cclsim: cannot write to stdout: {e}");
            std::process::exit(1);
        }
    }

    /// Largest profile `--profile` reads, bytes (a fit of 100 000 rows is
    /// about 20 MB of JSON).
    const MAX_PROFILE_BYTES: usize = 64 << 20;

    /// Reads a text file of at most `cap` bytes: `FILE is larger than N
    /// bytes (the cap for a WHAT)` above it (reading at most `cap + 1`
    /// bytes, so `/dev/zero` ends), and an error naming the first bad
    /// byte if it is not UTF-8.
    fn read_capped(p: &Path, cap: usize, what: &str) -> Res<String> {
        use std::io::Read;
        let file = std::fs::File::open(p)
            .map_err(|e| format!("cannot read {what} {}: {e}", p.display()))?;
        let mut buf = Vec::new();
        file.take(cap as u64 + 1)
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read {what} {}: {e}", p.display()))?;
        if buf.len() > cap {
            return Err(format!(
                "{} is larger than {cap} bytes (the cap for a {what})",
                p.display()
            ));
        }
        String::from_utf8(buf).map_err(|e| {
            format!(
                "{} is not UTF-8 text (the byte at offset {} is not valid UTF-8); a {what} is text",
                p.display(),
                e.utf8_error().valid_up_to()
            )
        })
    }

    #[derive(Parser)]
    #[command(
        name = "cclsim",
        version,
        about = "Predict, sweep and calibrate collective communication times (ccl-playground's cost model)"
    )]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(clap::Args)]
    struct Machine {
        /// Topology preset: 910b-8, 910a-8, h100-8, 910b-{S}x8 (S = 2..=1024);
        /// default with --profile: the measured machine; with --topology: custom.
        #[arg(long)]
        topo: Option<String>,
        /// A custom topology JSON file (docs/custom-topology.md).
        #[arg(long)]
        topology: Option<PathBuf>,
        /// Collective: allreduce, reducescatter, allgather, broadcast, reduce,
        /// scatter, gather, alltoall, alltoallv, barrier, sendrecv.
        #[arg(long)]
        op: String,
        /// Algorithm: auto (the machine's library's own choice), ring, mesh,
        /// rhd, tree, star, pairwise, nb, dbtree, hier, hier-nhr, nhr,
        /// pipeline.
        #[arg(long, default_value = "auto")]
        algo: String,
        /// Number of ranks (default: every device of the topology, or the
        /// profile's rank count).
        #[arg(long)]
        ranks: Option<usize>,
        /// Root rank of broadcast, reduce, scatter, gather.
        #[arg(long)]
        root: Option<usize>,
        /// Element type: fp32, fp16, bf16, int32, int8.
        #[arg(long, default_value = "fp32")]
        dtype: String,
        /// A profile from `cclsim fit`: auto predicts the measured curve;
        /// its link figures replace the topology's.
        #[arg(long)]
        profile: Option<PathBuf>,
        /// Slices per transfer: auto (like the library) or 1..=256.
        #[arg(long, default_value = "auto")]
        slices: String,
        /// Reduce op: sum, prod, max, min, avg (NCCL's ncclAvg; HCCL has none).
        #[arg(long, default_value = "sum")]
        redop: String,
        /// Slow ranks: RANK:FACTOR[,...] (3:0.5 = rank 3 at half speed),
        /// as the page's `slow=` key.
        #[arg(long)]
        slow: Option<String>,
        /// Late ranks: RANK:MICROSECONDS[,...] (3:200), as `late=`.
        #[arg(long)]
        late: Option<String>,
        /// Failed links: A-B (the link between devices A and B) or A-port
        /// (device A's RoCE / switch port), comma-separated, as `down=`.
        #[arg(long)]
        down: Option<String>,
    }

    /// The size sweep of `tune` and `tuner`: `-b 1KiB -e 1GiB -f 4`.
    #[derive(clap::Args)]
    struct TuneSizes {
        /// Smallest size.
        #[arg(short = 'b', long = "minbytes", default_value = "1KiB")]
        min: String,
        /// Largest size.
        #[arg(short = 'e', long = "maxbytes", default_value = "1GiB")]
        max: String,
        /// Multiplication factor between sizes (≥ 2).
        #[arg(short = 'f', long = "stepfactor", default_value_t = 4)]
        factor: u64,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// Time, algbw and busbw of one collective.
        Predict {
            #[command(flatten)]
            m: Machine,
            /// Message size S (nccl-tests' size): 4096, 64MiB, 1G, 1.5GB;
            /// 1 B to 16 GiB.
            #[arg(long)]
            bytes: String,
            /// Print JSON (time_us, algbw_gbps, busbw_gbps, algorithm,
            /// library, decision, method, link, ...).
            #[arg(long)]
            json: bool,
            /// Print nccl-tests' table, a JSON line or CSV instead.
            #[arg(long, value_enum)]
            format: Option<Format>,
            /// Also write the modelled timeline as a Chrome / Perfetto
            /// trace (JSON trace events: a track per rank, per step, and a
            /// load counter per link direction) to this file; open it in
            /// https://ui.perfetto.dev.
            #[arg(long, value_name = "FILE")]
            trace: Option<PathBuf>,
        },
        /// An nccl-tests-style table over message sizes.
        Sweep {
            #[command(flatten)]
            m: Machine,
            /// Smallest size.
            #[arg(short = 'b', long = "minbytes", default_value = "8")]
            min: String,
            /// Largest size.
            #[arg(short = 'e', long = "maxbytes", default_value = "1G")]
            max: String,
            /// Multiplication factor between sizes (≥ 2).
            #[arg(short = 'f', long = "stepfactor", default_value_t = 2)]
            factor: u64,
            /// Output: nccl-tests' table (default), JSON lines, CSV.
            #[arg(long, value_enum, default_value = "table")]
            format: Format,
        },
        /// Fit a profile to an nccl-tests / rccl-tests / hccl_test log.
        Fit {
            /// The log files: the first one's table is the measured curve;
            /// the library model is fitted to every table of every file
            /// (several collectives and scales of one machine).
            #[arg(required = true, num_args = 1..)]
            logs: Vec<PathBuf>,
            /// Where to write the profile (JSON).
            #[arg(long)]
            out: Option<PathBuf>,
            /// Rank count, if the log does not print one.
            #[arg(long)]
            ranks: Option<usize>,
            /// Which table: its collective (all_reduce, all_gather, ...);
            /// default the first usable one.
            #[arg(long)]
            op: Option<String>,
            /// Print the profile as JSON.
            #[arg(long)]
            json: bool,
        },
        /// DDP-style fusion: buckets, fused vs unfused AllReduce time.
        Fusion {
            /// Topology preset.
            #[arg(long, default_value = "910b-8")]
            topo: String,
            /// Ranks.
            #[arg(long, default_value_t = 8)]
            ranks: usize,
            /// Tensors: llama3-8b, llama3-70b or COUNTxSIZE (30x4MiB).
            #[arg(long)]
            fusion: String,
            /// DDP's bucket_cap_mb as a size (0 = one AllReduce per tensor);
            /// not given: DDP's default 25 MiB with its 1 MiB first bucket.
            #[arg(long)]
            bucket: Option<String>,
            /// Gradient dtype.
            #[arg(long, default_value = "bf16")]
            dtype: String,
            /// Compress the buckets (what-if): none, int8, fp8e4m3, fp8e5m2.
            #[arg(long, default_value = "none")]
            compress: String,
            /// With --compress: buckets smaller than this size are sent
            /// uncompressed ("compress only large gradients"); 0 = all.
            #[arg(long = "compress-min", default_value = "0")]
            compress_min: String,
            /// Print JSON.
            #[arg(long)]
            json: bool,
        },
        /// Error and wire size of one block-quantisation round trip (what-if).
        Compress {
            /// int8, fp8e4m3, fp8e5m2.
            #[arg(long)]
            scheme: String,
            /// Elements per block (32..=4096).
            #[arg(long, default_value_t = 256)]
            block: usize,
            /// Scale storage: fp16 or fp32.
            #[arg(long, default_value = "fp16")]
            scale: String,
            /// Input distribution: normal, heavy, layers.
            #[arg(long, default_value = "normal")]
            shape: String,
            /// Number of elements.
            #[arg(long, default_value_t = 1 << 20)]
            elems: usize,
            /// Print JSON.
            #[arg(long)]
            json: bool,
        },
        /// Import an MSCCL algorithm XML file or an MSCCL++ execution plan
        /// (JSON): verify it, predict its time on a machine with its
        /// protocol, print a summary (exit 2 naming the element when it
        /// cannot be imported or does not implement its collective).
        Msccl {
            /// The MSCCL XML file (<algo> <gpu> <tb> <step>) or MSCCL++
            /// plan (JSON: gpus / threadblocks / ops).
            file: PathBuf,
            /// Topology preset (default: h100-8 up to 8 GPUs, else
            /// 910b-{S}x8 with enough servers).
            #[arg(long)]
            topo: Option<String>,
            /// Message size S to predict (nccl-tests' size).
            #[arg(long, default_value = "1MiB")]
            bytes: String,
            /// Element type.
            #[arg(long, default_value = "fp32")]
            dtype: String,
            /// Print JSON.
            #[arg(long)]
            json: bool,
        },
        /// The model's recommendation for the modelled machine, over a size
        /// sweep, in the syntax users hand-write: NCCL_ALGO / NCCL_PROTO, the
        /// NCCL example tuner plugin's CSV, or HCCL_ALGO.
        Tune {
            #[command(flatten)]
            m: Machine,
            #[command(flatten)]
            sizes: TuneSizes,
            /// nccl-env, nccl-tuner-csv or hccl (default: the machine's library).
            #[arg(long)]
            format: Option<String>,
        },
        /// Read a tuner file (NCCL's example tuner config or its
        /// performance data, HCCL's tuner-plugin rules) as what it makes the
        /// library run at each size and rank count; with --op, per size, and
        /// with --topo beside the model's own recommendation.
        Tuner {
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
        },
        /// Write one of our schedules as MSCCL XML (re-imports to the same
        /// schedule).
        MscclExport {
            #[command(flatten)]
            m: Machine,
            /// Message size for `--algo auto`'s choice.
            #[arg(long, default_value = "1MiB")]
            bytes: String,
        },
        /// Determinism on real data: the AllReduce of these flags (its
        /// algorithm, auto resolved) against another algorithm or fp32 on
        /// the same inputs: differing elements, ulp histogram, one
        /// element's two reduction orders; --fixed: both in a fixed order
        /// (chain Reduce + Broadcast) and what that costs in the model.
        Determinism {
            #[command(flatten)]
            m: Machine,
            /// Message size S.
            #[arg(long, default_value = "64KiB")]
            bytes: String,
            /// The other side: an algorithm name, or fp32.
            #[arg(long)]
            versus: String,
            /// Reduce both sides in one fixed order.
            #[arg(long)]
            fixed: bool,
            /// The element whose reduction orders are shown.
            #[arg(long, default_value_t = 0)]
            element: usize,
            /// Print JSON.
            #[arg(long)]
            json: bool,
        },
        /// One training step of a model on a parallel layout: what it
        /// issues (each collective, its size, group and calls), each timed
        /// as `predict` times it, the compute, the exposed communication
        /// and the step time.
        Step {
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
            /// Expert-parallel ranks (MoE models), taken from the DP group.
            #[arg(long, default_value_t = 1)]
            ep: usize,
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
            /// profile's); dp·tp·pp must equal it.
            #[arg(long)]
            ranks: Option<usize>,
            /// Megatron's sequence parallelism (TP's AllReduces as
            /// ReduceScatter + AllGather).
            #[arg(long = "sequence-parallel")]
            sequence_parallel: bool,
            /// Also count attention's FLOPs (12·layers·hidden·seq per token).
            #[arg(long = "attention-flops")]
            attention_flops: bool,
            /// Print JSON.
            #[arg(long)]
            json: bool,
        },
        /// Accuracy tables on the public logs in the repository, by the
        /// user's path: same scale (even rows fitted, odd predicted), cross
        /// scale (fewest nodes fitted, the others predicted), cross
        /// collective (AllReduce fitted, the others predicted), and the
        /// h100-8 preset with no fit; median and largest error over sizes
        /// >= 1 KiB and how many measured values fall in the 80 % range.
        Validate {
            /// The fixtures directory: every sub-folder holding
            /// `n{NODES}_{collective}.txt` logs is one machine's set; the
            /// H100 logs of `nccl-tests/` check the h100-8 preset.
            #[arg(default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))]
            dir: PathBuf,
            /// Also print every row: size, measured, predicted, error, in range.
            #[arg(long)]
            rows: bool,
            /// Print only the one-table summary (per check and set).
            #[arg(long)]
            summary: bool,
        },
        /// Hold-out accuracy of the fit on every log in a directory, and the
        /// built-in h100-8 against measured NCCL busbw.
        Accuracy {
            /// Directory of logs (*.txt, *.log, *.json).
            #[arg(default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nccl-tests"))]
            dir: PathBuf,
            /// Rank count for tables whose log does not print one.
            #[arg(long, default_value_t = 8)]
            ranks: usize,
            /// Smallest held-out size counted, bytes.
            #[arg(long, default_value = "64KiB")]
            min_bytes: String,
        },
    }

    type Res<T> = Result<T, String>;

    fn load_profile(p: &Path) -> Res<Profile> {
        let text = read_capped(p, MAX_PROFILE_BYTES, "profile")?;
        let prof: Profile = serde_json::from_str(&text)
            .map_err(|e| format!("profile {} is not a cclsim profile: {e}", p.display()))?;
        prof.validate()
            .map_err(|e| format!("profile {}: {e}", p.display()))?;
        Ok(prof)
    }

    /// The configuration these flags give: the same `Config::from_query`
    /// a page link goes through (so the CLI and the page validate alike);
    /// an error names the flag, the value and what is allowed.
    fn config(m: &Machine, bytes: &str, flag: &str) -> Res<Config> {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("v", "1")
            .append_pair("op", &m.op.to_ascii_lowercase())
            .append_pair("algo", &m.algo.to_ascii_lowercase())
            .append_pair("dtype", &m.dtype.to_ascii_lowercase())
            .append_pair("redop", &m.redop.to_ascii_lowercase())
            .append_pair("slices", &m.slices)
            .append_pair("bytes", bytes);
        let profile = match &m.profile {
            Some(p) => Some(load_profile(p)?),
            None => None,
        };
        let topo = match (&m.topo, &m.topology, &profile) {
            (Some(t), _, _) => t.clone(),
            (None, Some(_), _) => "custom".into(),
            (None, None, Some(_)) => MEASURED.into(),
            (None, None, None) => {
                return Err("--topo is required unless --profile or --topology is given".into())
            }
        };
        q.append_pair("topo", &topo);
        if let Some(r) = m.ranks {
            q.append_pair("ranks", &r.to_string());
        }
        if let Some(r) = m.root {
            q.append_pair("root", &r.to_string());
        }
        for (k, v) in [("slow", &m.slow), ("late", &m.late), ("down", &m.down)] {
            if let Some(v) = v {
                q.append_pair(k, v);
            }
        }
        if let Some(path) = &m.topology {
            let text = read_capped(path, MAX_TOPOLOGY_FILE_BYTES, "custom topology")?;
            let t = ccl_playground::engine::custom_topology::CustomTopology::parse(&text)
                .map_err(|e| format!("--topology {}: {e}", path.display()))?;
            q.append_pair("topology", &t.to_json());
        }
        if let Some(p) = &profile {
            let mut lean = p.clone();
            lean.rows.clear();
            q.append_pair(
                "profile",
                &serde_json::to_string(&lean).map_err(|e| e.to_string())?,
            );
        }
        let (c, errors) = Config::from_query(&q.finish());
        if let Some(e) = errors.iter().find(|e| !e.is_notice()) {
            let name = match e.key.as_str() {
                "bytes" => flag.to_string(),
                k => format!("--{k}"),
            };
            return Err(format!("{name} {:?}: {}", e.value, e.allowed));
        }
        Ok(c)
    }

    /// Most bytes of a custom topology file (the page's paste cap).
    const MAX_TOPOLOGY_FILE_BYTES: usize = ccl_playground::engine::custom_topology::MAX_JSON_CHARS;

    /// The plan of `c`, or its error as one line.
    fn plan(c: &Config) -> Res<Plan> {
        Plan::headline(c).map_err(|e| e.to_string())
    }

    fn decision_name(d: &Decision) -> &'static str {
        match d {
            Decision::Library { .. } => "library",
            Decision::Measured { .. } => "measured",
            Decision::Model { .. } => "model",
            Decision::Fixed { .. } => "fixed",
        }
    }

    /// The report header of a configuration.
    fn header(c: &Config, topo: &Topology, notes: Vec<String>) -> ReportHeader {
        ReportHeader {
            primitive: c.primitive,
            dtype: c.dtype,
            redop: c.redop,
            root: c.root,
            devices: (0..c.ranks)
                .map(|r| topo.node_label(r).to_string())
                .collect(),
            producer: "cclsim".into(),
            notes,
            processes: vec![],
        }
    }

    /// Writes `p`'s timeline as a trace-event file (`--trace`).
    fn write_trace(p: &Plan, path: &Path) -> Res<()> {
        if p.estimate.timeline.transfers.is_empty() {
            return Err(format!(
                "--trace {}: this plan has no modelled timeline to export (method: {}); {}",
                path.display(),
                p.method.name(),
                p.verdict
            ));
        }
        let trace =
            formats::trace::chrome_trace(p.drawn_schedule(), &p.estimate.timeline, &p.topology);
        std::fs::write(path, trace.to_string())
            .map_err(|e| format!("--trace {}: cannot write: {e}", path.display()))
    }

    fn row(p: &Plan) -> ReportRow {
        let e = &p.estimate;
        ReportRow {
            bytes: e.bytes,
            time_us: e.time_us,
            algbw_gbps: e.algbw_gbps,
            busbw_gbps: e.busbw_gbps,
            wrong: None,
            extra: vec![
                ("algorithm".into(), p.algorithm.name().into()),
                ("library".into(), p.library.name().into()),
                ("decision".into(), decision_name(&p.decision).into()),
                ("method".into(), p.method.name().into()),
            ],
        }
    }

    fn print_report(c: &Config, topo: &Topology, rows: &[ReportRow], f: Format) -> Res<()> {
        let notes = vec![
            "cclsim: a model, not a measurement (ccl-playground). The page link of the same configuration:".into(),
            format!("?{}", c.to_query()),
        ];
        let h = header(c, topo, notes);
        let text = match f {
            Format::Table => report::nccl_tests_table(&h, rows),
            Format::Jsonl => report::json_lines(&h, rows),
            Format::Csv => report::csv(&h, rows),
        };
        out(&text)
    }

    fn predict(
        m: &Machine,
        bytes: &str,
        json: bool,
        format: Option<Format>,
        trace: Option<&Path>,
    ) -> Res<()> {
        let c = config(m, bytes, "--bytes")?;
        let p = match trace {
            // The page's plan: the drawn schedule's timeline, even on a
            // measured curve.
            Some(_) => Plan::new(&c).map_err(|e| e.to_string())?,
            None => plan(&c)?,
        };
        if let Some(path) = trace {
            write_trace(&p, path)?;
        }
        let e = &p.estimate;
        if let Some(f) = format {
            return print_report(&c, &p.topology, &[row(&p)], f);
        }
        if json {
            let runs = p.library.runs(p.algorithm, c.primitive);
            let v = serde_json::json!({
                "time_us": e.time_us,
                "algbw_gbps": e.algbw_gbps,
                "busbw_gbps": e.busbw_gbps,
                "algorithm": p.algorithm.name(),
                "library": p.library.name(),
                "decision": decision_name(&p.decision),
                "runs_in_library": runs,
                "method": p.method.name(),
                "verdict": p.verdict,
                "op": c.primitive.name(),
                "redop": c.redop.name(),
                "redop_note": p.library.redop_note(c.primitive, c.redop),
                "bytes": c.bytes,
                "ranks": c.ranks,
                "topology": p.topology.name,
                "loops": e.timeline.loops,
                "slices": e.slicing.slices,
                "slices_why": e.slicing.why,
                "max_link_sharing": e.timeline.steps.iter().map(|x| x.max_link_sharing).max().unwrap_or(0),
                "link": format!("?{}", c.to_query()),
                "faults": faults_json(&c),
                "healthy_time_us": p.healthy.as_ref().map(|h| h.time_us),
                "slowdown": p.slowdown(),
                "prediction": p.prediction.as_ref().map(|a| serde_json::json!({
                    "low_us": a.low_us,
                    "high_us": a.high_us,
                    "runs": a.runs,
                    "channels": a.channels,
                    "library_us": a.library_us,
                    "nodes": a.shape.nodes,
                    "why": a.why,
                    "note": a.note,
                })),
            });
            return out(&format!("{v}\n"));
        }
        if let Some(n) = p.library.redop_note(c.primitive, c.redop) {
            out(&format!("note: {n}\n"))?;
        }
        out(&format!(
            "{} {} of {} on {} ranks of {}: {:.2} µs, algbw {:.2} GB/s, busbw {:.2} GB/s\n{}\n",
            p.algorithm.name(),
            c.primitive.title(),
            format_bytes(c.bytes),
            c.ranks,
            p.topology.name,
            e.time_us,
            e.algbw_gbps,
            e.busbw_gbps,
            p.verdict,
        ))?;
        match &p.prediction {
            // The calibrated model: no slices of ours, a range and its reach.
            Some(a) => out(&format!("{}\n", a.note)),
            None => out(&format!(
                "slices: {} ({})\n",
                e.slicing.slices, e.slicing.why
            )),
        }
    }

    /// The degradation of `c` as JSON (`null` when healthy): each key's
    /// value as the page's link writes it.
    fn faults_json(c: &Config) -> serde_json::Value {
        if c.faults.is_none() {
            return serde_json::Value::Null;
        }
        let f = &c.faults;
        serde_json::json!({
            "slow": f.slow.iter().map(|&(r, x)| serde_json::json!({"rank": r, "speed": x})).collect::<Vec<_>>(),
            "late": f.late.iter().map(|&(r, d)| serde_json::json!({"rank": r, "late_us": d})).collect::<Vec<_>>(),
            "down": f.down.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
        })
    }

    fn sweep(m: &Machine, min: &str, max: &str, factor: u64, format: Format) -> Res<()> {
        let lo = config(m, min, "-b")?;
        let hi = config(m, max, "-b")?.bytes;
        let hi = message_bytes(max, lo.dtype)
            .map_err(|(e, _)| format!("-e {max:?}: {e}"))
            .map(|_| hi)?;
        if lo.bytes > hi {
            return Err(format!("-b {min} is larger than -e {max}"));
        }
        if factor < 2 {
            return Err(format!("-f {factor}: a factor of at least 2"));
        }
        let es = lo.dtype.size_bytes() as u64;
        let mut rows = Vec::new();
        let mut topo = None;
        let mut b = lo.bytes;
        loop {
            let bytes = b - b % es;
            if bytes > 0 {
                let mut c = lo.clone();
                c.bytes = bytes;
                let p = plan(&c)?;
                rows.push(row(&p));
                topo.get_or_insert(p.topology);
            }
            match b.checked_mul(factor) {
                Some(n) if n <= hi => b = n,
                _ => break,
            }
        }
        match topo {
            Some(t) => print_report(&lo, &t, &rows, format),
            None => Ok(()),
        }
    }

    /// Writes `text` to stdout through [`print_or_quit`].
    fn out(text: &str) -> Res<()> {
        print_or_quit(format_args!("{text}"));
        Ok(())
    }

    fn read_log(p: &Path) -> Res<formats::Log> {
        let text = read_capped(p, formats::MAX_LOG_BYTES, "log")?;
        formats::parse_log(&text).map_err(|e| format!("{}: {e}", p.display()))
    }

    /// `--op` of `fit`: a collective in the one vocabulary
    /// ([`Primitive::from_name`]: ours and nccl-tests' names), or
    /// `hypercube` (nccl-tests' `hypercube_perf`).
    fn op_collective(op: &str) -> Res<Collective> {
        match Collective::from_tool_name(op) {
            Collective::Other(_) => Err(format!(
                "--op {op:?}: expected one of {} (nccl-tests' all_reduce, all_gather, reduce_scatter, ... too), or hypercube",
                Primitive::ALL.map(|p| p.name()).join(", ")
            )),
            c => Ok(c),
        }
    }

    fn fit(
        logs: &[PathBuf],
        out: Option<&Path>,
        ranks: Option<usize>,
        op: Option<&str>,
        json: bool,
    ) -> Res<()> {
        let coll = op.map(op_collective).transpose()?;
        let mut read = Vec::new();
        for l in logs {
            let name = l
                .file_name()
                .map_or("log".to_string(), |n| n.to_string_lossy().into_owned());
            let mut parsed = read_log(l)?;
            // What the log does not print, the flags give: OSU's per-rank
            // sizes and busbw-only tables convert once they are known.
            parsed.assume(ranks, coll.as_ref());
            read.push((parsed, name));
        }
        let log = logs.first().ok_or("give at least one log")?;
        let parsed = read[0].0.clone();
        let p = Profile::fit_logs(&read, coll.as_ref(), ranks)
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let text = serde_json::to_string_pretty(&p).map_err(|e| e.to_string())?;
        if let Some(out) = out {
            std::fs::write(out, &text)
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        }
        if json {
            println!("{text}");
            return Ok(());
        }
        for t in &parsed.tables {
            if let Some(r) = &t.rejected {
                println!("# skipped {}: {r}", t.label());
            }
        }
        if let Some(t) = parsed
            .tables
            .iter()
            .find(|t| p.source.ends_with(&format!("(table at line {})", t.line)))
        {
            for n in &t.notes {
                println!("# note: {n}");
            }
        }
        println!("# {}", p.describe());
        if let Some(c) = &p.physical {
            let hw = &c.hardware;
            println!(
                "# library model (NCCL's tuning model, corrections {}): {} node(s) of {} × {} ({} GB/s in the node), {} NIC(s) of {} GB/s per node",
                c.basis,
                c.measured.iter().map(|m| m.nodes).max().unwrap_or(1),
                hw.gpus_per_node,
                hw.accelerator,
                hw.gpu_gbps,
                hw.nics_per_node,
                hw.nic_gbps
            );
            let names: Vec<String> = ccl_playground::engine::predict::model::Param::ALL
                .iter()
                .zip(c.fitted.params())
                .map(|(q, v)| format!("{} {v:+.2}", q.name()))
                .collect();
            println!(
                "# corrections (ln of NCCL's figure; 0 = NCCL's own): {}",
                names.join(", ")
            );
        }
        for (k, s) in p.segments.iter().enumerate() {
            println!(
                "# segment {k}: {}..{}: α {:.2} µs, algbw {:.2} GB/s",
                s.first_bytes, s.last_bytes, s.alpha_us, s.algbw_gbps
            );
        }
        println!(
            "# per link (ring): α {:.3} µs per step, {:.2} GB/s",
            p.link_alpha_us, p.busbw_gbps
        );
        println!(
            "#{:>5} {:>13} {:>12} {:>12} {:>8} {:>5}",
            "line", "size", "measured", "fitted", "error", "used"
        );
        println!(
            "#{:>5} {:>13} {:>12} {:>12} {:>8} {:>5}",
            "", "(B)", "(us)", "(us)", "(%)", ""
        );
        for r in &p.rows {
            println!(
                "{:>6} {:>13} {:>12.2} {:>12.2} {:>+8.2} {:>5}",
                r.line,
                r.bytes,
                r.measured_us,
                r.fitted_us,
                r.rel_err * 100.0,
                if r.used { "yes" } else { "no" }
            );
        }
        Ok(())
    }

    /// H100 logs the h100-8 preset is checked against (in `nccl-tests/`).
    const PRESET_LOGS: [&str; 2] = [
        "nccl_h100_1node_p5_allreduce_7.txt",
        "nccl_h100_1node_5colls_16.txt",
    ];

    fn validate(dir: &Path, rows: bool, summary: bool) -> Res<()> {
        use ccl_playground::engine::plan::validate::{self as v, Set};
        let mut lines = Vec::new();
        let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for f in &folders {
            let mut files: Vec<PathBuf> = std::fs::read_dir(f)
                .map_err(|e| format!("cannot read directory {}: {e}", f.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            files.sort();
            let mut tables = Vec::new();
            for p in &files {
                let name = p
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned());
                let Ok(text) = std::fs::read_to_string(p) else {
                    continue;
                };
                if let Some(t) = v::set_table(&name, &text) {
                    tables.push(t?);
                }
            }
            if tables.is_empty() {
                continue;
            }
            let name = f
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            lines.extend(v::check_set(&Set { name, tables })?);
        }
        for name in PRESET_LOGS {
            let p = dir.join("nccl-tests").join(name);
            if let Ok(log) = read_log(&p) {
                lines.extend(v::check_preset("h100-8", &log, name)?);
            }
        }
        if summary {
            print!("{}", v::render_summary(&lines));
            return Ok(());
        }
        let default = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"));
        let place = if dir == default {
            "tests/fixtures".to_string()
        } else {
            dir.display().to_string()
        };
        println!(
            "# Accuracy on the public logs in {place} (cclsim validate): |predicted / measured - 1| over sizes >= 1 KiB; \"in 80 % range\": measured values inside the prediction's range."
        );
        print!("{}", v::render(&lines));
        if rows {
            print!("{}", v::render_rows(&lines));
        }
        Ok(())
    }

    fn accuracy(dir: &Path, ranks: usize, min_bytes: &str) -> Res<()> {
        use ccl_playground::engine::plan::holdout::holdout;
        let min = parse_bytes(min_bytes).map_err(|e| format!("--min-bytes {min_bytes:?}: {e}"))?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|x| x == "txt" || x == "log" || x == "json")
            })
            .collect();
        files.sort();
        let mut text = format!(
            "# Hold-out accuracy by the user's path: `cclsim fit` on the even-indexed sizes of each table, then `cclsim predict --profile P --algo auto` on each odd one (>= {}); |relative time error|\n",
            format_bytes(min)
        );
        text.push_str(&format!(
            "{:<46} {:<44} {:>4} {:>5} {:>8} {:>8}\n",
            "log", "table", "segs", "rows", "median%", "max%"
        ));
        let mut medians = Vec::new();
        let mut all = Vec::new();
        for f in &files {
            let name = f
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            // One unreadable file is reported; the others are still measured.
            let log = match read_log(f) {
                Ok(mut log) => {
                    log.assume(Some(ranks), None);
                    log
                }
                Err(e) => {
                    println!("{name:<46} unreadable: {e}");
                    continue;
                }
            };
            for t in &log.tables {
                if let Some(r) = &t.rejected {
                    text.push_str(&format!(
                        "{:<46} {:<44} rejected: {}\n",
                        name,
                        t.label(),
                        r.chars().take(90).collect::<String>()
                    ));
                    continue;
                }
                // A log that does not name its collective: what its file
                // name says, as the user's `cclsim fit --op` would.
                let hint = [
                    "all_reduce",
                    "allreduce",
                    "all_gather",
                    "allgather",
                    "reduce_scatter",
                    "alltoall",
                    "broadcast",
                    "sendrecv",
                ]
                .into_iter()
                .find(|k| name.contains(k))
                .map(Collective::from_tool_name);
                match holdout(t, Some(ranks), hint.as_ref(), min) {
                    Ok(h) if !h.rows.is_empty() => {
                        medians.push(h.median());
                        all.extend(h.errors());
                        text.push_str(&format!(
                            "{:<46} {:<44} {:>4} {:>5} {:>8.2} {:>8.2}{}\n",
                            name,
                            h.table,
                            h.segments,
                            h.rows.len(),
                            h.median() * 100.0,
                            h.max() * 100.0,
                            if h.beyond_limit > 0 {
                                format!(
                                    "  ({} held-out rows above 16 GiB not predicted)",
                                    h.beyond_limit
                                )
                            } else {
                                String::new()
                            }
                        ));
                    }
                    Ok(h) => text.push_str(&format!(
                        "{:<46} {:<44} no held-out rows >= {}\n",
                        name,
                        h.table,
                        format_bytes(min)
                    )),
                    Err(e) => text.push_str(&format!("{:<46} {:<44} {e}\n", name, t.label())),
                }
            }
        }
        medians.sort_by(f64::total_cmp);
        all.sort_by(f64::total_cmp);
        if !medians.is_empty() {
            let within = medians.iter().filter(|&&m| m <= 0.05).count();
            let within10 = medians.iter().filter(|&&m| m <= 0.10).count();
            text.push_str(&format!(
                "# {} tables: median of the table medians {:.2} %, median over all {} held-out rows {:.2} %; {} tables <= 5 %, {} <= 10 %; worst table median {:.2} %\n",
                medians.len(),
                medians[medians.len() / 2] * 100.0,
                all.len(),
                all[all.len() / 2] * 100.0,
                within,
                within10,
                medians[medians.len() - 1] * 100.0
            ));
        }
        // Built-in h100-8, no fit, ring AllReduce busbw vs measured.
        text.push_str("\n# Built-in h100-8 (no fit), ring AllReduce on 8 GPUs, busbw vs the measured 365-370 GB/s (NVIDIA/nccl issue 1455); default slices (auto), and unsliced\n");
        text.push_str(&format!(
            "{:>13} {:>12} {:>12} {:>10} {:>7} {:>12} {:>10}\n",
            "size(B)", "time(us)", "busbw(GB/s)", "vs 367.5", "slices", "unsliced bw", "vs 367.5"
        ));
        let topo = Topology::h100_8();
        let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8)
            .map_err(|e| e.to_string())?;
        let mut b: u64 = 64 << 20;
        while b <= 16 << 30 {
            let e = cost::estimate_sliced(&s, &topo, b, DType::Fp32, Slices::Auto)
                .map_err(|e| e.to_string())?;
            let u = cost::estimate(&s, &topo, b, DType::Fp32).map_err(|e| e.to_string())?;
            text.push_str(&format!(
                "{:>13} {:>12.2} {:>12.2} {:>+9.2}% {:>7} {:>12.2} {:>+9.2}%\n",
                b,
                e.time_us,
                e.busbw_gbps,
                (e.busbw_gbps - 367.5) / 367.5 * 100.0,
                e.slicing.slices,
                u.busbw_gbps,
                (u.busbw_gbps - 367.5) / 367.5 * 100.0
            ));
            b *= 2;
        }
        out(&text)
    }

    fn fusion_cmd(
        topo: &str,
        ranks: usize,
        spec: &str,
        bucket: Option<&str>,
        dtype: &str,
        (compress, compress_min): (&str, &str),
        json: bool,
    ) -> Res<()> {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("v", "1")
            .append_pair("op", "allreduce")
            .append_pair("topo", topo)
            .append_pair("ranks", &ranks.to_string())
            .append_pair("dtype", dtype)
            .append_pair("fusion", spec)
            .append_pair("compress", compress)
            .append_pair("compress_min", compress_min);
        if let Some(b) = bucket {
            q.append_pair("bucket", b);
        }
        let (c, errors) = Config::from_query(&q.finish());
        if let Some(e) = errors.iter().find(|e| !e.is_notice()) {
            return Err(format!(
                "--{} {:?}: {}",
                e.key.replace('_', "-"),
                e.value,
                e.allowed
            ));
        }
        let p = Plan::new(&c).map_err(|e| e.to_string())?;
        let Some(f) = &p.fusion else {
            return Err(format!("--fusion {spec:?}: no fusion plan"));
        };
        let plan = &f.plan;
        if json {
            let v = serde_json::json!({
                "tensors": f.tensors.len(),
                "buckets": plan.buckets.len(),
                "bucket_cap": c.bucket,
                "bucket_sizes": plan.buckets.iter().map(|(b, _)| b.tensors.len()).collect::<Vec<_>>(),
                "total_bytes": plan.total_bytes,
                "unfused_us": plan.unfused_us,
                "fused_us": plan.fused_us,
                "crossover_bytes": plan.crossover_bytes,
                "compression": f.compression,
                "link": format!("?{}", c.to_query()),
            });
            out(&format!("{v}\n"))
        } else {
            let mut text = format!("{}\n", plan.summary(f.tensors.len()));
            if let Some(z) = &f.compression {
                text.push_str(&format!(
                    "compression ({} what-if; HCCL and NCCL have none): {}\n",
                    c.compress.scheme.name(),
                    z.summary(plan.fused_us)
                ));
            }
            text.push_str(&format!(
                "{:>6} {:>8} {:>12} {:>10} {:>12} {:>10}\n",
                "bucket", "tensors", "bytes", "algorithm", "time(us)", "compressed"
            ));
            for (i, (b, cost)) in plan.buckets.iter().enumerate() {
                let z = f.compression.as_ref().map(|z| z.compressed[i]);
                text.push_str(&format!(
                    "{:>6} {:>8} {:>12} {:>10} {:>12.2} {:>10}\n",
                    i,
                    b.tensors.len(),
                    b.bytes,
                    cost.algorithm.name(),
                    cost.time_us,
                    match z {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "-",
                    }
                ));
            }
            out(&text)
        }
    }

    fn determinism_cmd(
        m: &Machine,
        bytes: &str,
        versus: &str,
        fixed: bool,
        element: usize,
        json: bool,
    ) -> Res<()> {
        use ccl_playground::engine::determinism::{compare, Versus};
        let c = config(m, bytes, "--bytes")?;
        let v = Versus::from_name(versus).map_err(|e| format!("--versus {versus:?}: {e}"))?;
        let algorithm = plan(&c)?.algorithm;
        let r = compare(&c, algorithm, v, fixed, element).map_err(|e| format!("--{e}"))?;
        if json {
            let v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            return out(&format!("{v}\n"));
        }
        let mut t = format!(
            "{} vs {}: {} of {} elements differ, max {} ulps (dtype {}, {} ranks, seed {})\n",
            r.sides[0], r.sides[1], r.differing, r.elements, r.max_ulps, c.dtype, c.ranks, c.seed
        );
        t.push_str("ulps     elements\n");
        for (lo, hi, k) in &r.histogram {
            let label = match (lo, hi) {
                (l, h) if l == h => format!("{l}"),
                (l, &u64::MAX) => format!(">={l}"),
                (l, h) => format!("{l}-{h}"),
            };
            t.push_str(&format!("{label:<8} {k}\n"));
        }
        t.push_str(&format!(
            "element {}: {} = {}\n            {} = {}\n",
            r.element, r.values[0], r.orders[0], r.values[1], r.orders[1]
        ));
        if let Some(f) = &r.fixed {
            t.push_str(&format!(
                "fixed order (chain Reduce to rank 0 + chain Broadcast, as HCCL_DETERMINISTIC's order-preserving mode promises one order): {:.2} + {:.2} = {:.2} µs vs {:.2} µs for {} AllReduce\n",
                f.reduce_us,
                f.broadcast_us,
                f.reduce_us + f.broadcast_us,
                f.allreduce_us,
                algorithm.name()
            ));
        }
        out(&t)
    }

    fn compress_cmd(
        scheme: &str,
        block: usize,
        scale: &str,
        shape: &str,
        elems: usize,
        json: bool,
    ) -> Res<()> {
        use ccl_playground::engine::quantization::{
            self, Compression, GradientShape, ScaleType, Scheme,
        };
        let scheme = Scheme::from_name(scheme)
            .filter(|s| *s != Scheme::None)
            .ok_or_else(|| format!("--scheme {scheme:?}: allowed int8, fp8e4m3, fp8e5m2"))?;
        let scale = match scale {
            "fp16" => ScaleType::Fp16,
            "fp32" => ScaleType::Fp32,
            _ => return Err(format!("--scale {scale:?}: allowed fp16, fp32")),
        };
        // The page's names (grad=normal|heavy|layers); the first spellings
        // of this CLI still work.
        let shape = match shape {
            "heavytailed" => GradientShape::HeavyTailed,
            "layered" => GradientShape::Layered,
            s => GradientShape::from_name(s)
                .ok_or_else(|| format!("--shape {s:?}: allowed normal, heavy, layers"))?,
        };
        if elems == 0 || elems > 1 << 28 {
            return Err(format!("--elems {elems}: allowed 1..=268435456"));
        }
        let c = Compression {
            scheme,
            block,
            scale,
        };
        c.validate().map_err(|e| e.to_string())?;
        let x = quantization::gradients(shape, 1, 0, elems);
        let y = quantization::round_trip(&c, &x);
        let exact: Vec<f64> = x.iter().map(|v| *v as f64).collect();
        let approx: Vec<f64> = y.iter().map(|v| *v as f64).collect();
        let st = quantization::error_stats(&exact, &approx);
        let wire = c.wire_bytes(elems as u64, 2);
        let ratio = wire as f64 / (elems as f64 * 2.0);
        if json {
            println!(
                "{}",
                serde_json::json!({"stats": st, "wire_bytes": wire, "fp16_bytes": elems * 2, "wire_ratio_vs_fp16": ratio})
            );
        } else {
            println!("{} block {} scale {:?} on {} {:?} values (a what-if: HCCL has no gradient compression)", scheme, block, scale, elems, shape);
            println!(
                "max abs error {:.3e}  RMSE {:.3e}  relative L2 {:.3}%  flushed to zero {:.2}%",
                st.max_abs_error,
                st.rmse,
                st.rel_l2_error * 100.0,
                st.flushed_fraction * 100.0
            );
            println!("wire {} bytes = {:.4} of fp16", wire, ratio);
        }
        Ok(())
    }

    /// Most bytes of an MSCCL file.
    const MAX_MSCCL_FILE_BYTES: u64 = 64 << 20;

    fn msccl_cmd(file: &Path, topo: Option<&str>, bytes: &str, dtype: &str, json: bool) -> Res<()> {
        use ccl_playground::engine::cost::Slices;
        use ccl_playground::engine::formats::msccl;
        use ccl_playground::engine::plan;
        use ccl_playground::engine::verify::verify;
        let text = read_capped(file, MAX_MSCCL_FILE_BYTES as usize, "MSCCL file")?;
        let imp = msccl::import(&text).map_err(|e| format!("msccl {}: {e}", file.display()))?;
        let s = &imp.schedule;
        verify(s).map_err(|e| format!("msccl {}: {}", file.display(), imp.explain(&e)))?;
        let dtype = DType::from_name(&dtype.to_ascii_lowercase()).ok_or_else(|| {
            format!("--dtype {dtype:?}: expected fp32, fp16, bf16, int32 or int8")
        })?;
        let b = parse_bytes(bytes).map_err(|e| format!("--bytes {bytes:?}: {e}"))?;
        let topo_name = match topo {
            Some(t) => t.to_string(),
            None if s.ranks <= 8 => "h100-8".into(),
            None => format!("910b-{}x8", s.ranks.div_ceil(8).max(2)),
        };
        let machine =
            Topology::preset(&topo_name).map_err(|e| format!("--topo {topo_name:?}: {e}"))?;
        // The file's data moves with its protocol (LL: packets with flags).
        let wire = msccl::protocol_topology(&machine, imp.protocol);
        let (e, method, _) = plan::estimate(s, &wire, b, dtype, Slices::Auto)
            .map_err(|e| format!("--topo {topo_name:?}: {e}"))?;
        // The machine's own choice for the same call, for comparison.
        let q = format!(
            "v=1&op={}&algo=auto&ranks={}&topo={}&bytes={b}&dtype={}",
            s.primitive.name(),
            s.ranks,
            topo_name,
            dtype.name()
        );
        let (cfg, errs) = Config::from_query(&q);
        let auto = if errs.iter().any(|x| !x.is_notice()) {
            None
        } else {
            Plan::headline(&cfg).ok()
        };
        let net = s
            .steps
            .iter()
            .flat_map(|x| &x.transfers)
            .filter(|t| t.src != t.dst)
            .count();
        let local = s.transfer_count() - net;
        let p = &imp.program;
        let in_range = p.bytes_range.map(|(lo, hi)| lo <= b && b <= hi);
        if json {
            let v = serde_json::json!({
                "name": p.name, "coll": p.coll, "proto": p.proto, "ngpus": p.ngpus,
                "nchannels": p.nchannels, "nchunksperloop": p.nchunksperloop,
                "format": match imp.format { msccl::Format::Xml => "msccl-xml", msccl::Format::MscclppPlan => "mscclpp-plan" },
                "thread_blocks": imp.thread_blocks, "xml_steps": imp.xml_steps,
                "verified": true, "primitive": s.primitive.name(), "chunks": s.chunks,
                "chunk_factor": imp.chunk_factor, "scratch_chunks": s.scratch,
                "steps": s.steps.len(), "transfers": net, "local_transfers": local,
                "granule_elems": s.granule(),
                "topo": topo_name, "bytes": b, "dtype": dtype.name(),
                "time_us": e.time_us, "algbw_gbps": e.algbw_gbps, "busbw_gbps": e.busbw_gbps,
                "method": method.name(),
                "bytes_range": p.bytes_range, "in_bytes_range": in_range,
                "auto": auto.as_ref().map(|a| serde_json::json!({"algorithm": a.algorithm.name(), "time_us": a.estimate.time_us})),
                "notes": imp.notes,
            });
            return out(&format!("{v}\n"));
        }
        let mut t = String::new();
        let (kind, steps) = match imp.format {
            msccl::Format::Xml => ("", "steps in the file"),
            msccl::Format::MscclppPlan => ("MSCCL++ plan, ", "ops in the plan"),
        };
        t.push_str(&format!(
            "{} ({}, {kind}{} on {} GPUs, proto {}, {} channels, {} thread blocks, {} {steps})\n",
            if p.name.is_empty() {
                "(unnamed)"
            } else {
                &p.name
            },
            file.display(),
            p.coll,
            p.ngpus,
            p.proto,
            p.nchannels,
            imp.thread_blocks,
            imp.xml_steps
        ));
        t.push_str(&format!(
            "schedule: {} on {} ranks, {} chunks ({} per MSCCL chunk) + {} scratch, {} steps, {} transfers + {} local copies/reduces\n",
            s.primitive.title(),
            s.ranks,
            s.chunks,
            imp.chunk_factor,
            s.scratch,
            s.steps.len(),
            net,
            local
        ));
        t.push_str(&format!(
            "verified: every output chunk holds what {} requires\n",
            s.primitive.title()
        ));
        t.push_str(&format!(
            "predicted on {topo_name}{} at {} {}: {:.2} us, algbw {:.2} GB/s, busbw {:.2} GB/s ({})\n",
            if imp.protocol == msccl::Protocol::Simple {
                String::new()
            } else {
                format!(" with {}", imp.protocol.name())
            },
            format_bytes(b),
            dtype.name(),
            e.time_us,
            e.algbw_gbps,
            e.busbw_gbps,
            method.name()
        ));
        if let Some(a) = &auto {
            t.push_str(&format!(
                "the machine's own choice (auto): {} {:.2} us\n",
                a.algorithm.name(),
                a.estimate.time_us
            ));
        }
        if let (Some(false), Some((lo, hi))) = (in_range, p.bytes_range) {
            let who = match imp.format {
                msccl::Format::Xml => "the MSCCL runtime would not pick it",
                msccl::Format::MscclppPlan => "the MSCCL++ executor refuses it",
            };
            t.push_str(&format!(
                "note: the file is for {lo}..={hi} bytes; {who} at {b}\n"
            ));
        }
        for n in &imp.notes {
            t.push_str(&format!("note: {n}\n"));
        }
        out(&t)
    }

    /// The sizes `-b lo -e hi -f factor` name (at most 64).
    fn sweep_sizes(sizes: &TuneSizes) -> Res<Vec<u64>> {
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

    /// The flags of `cclsim tuner`.
    struct TunerArgs<'a> {
        file: &'a Path,
        op: Option<&'a str>,
        ranks: Option<usize>,
        nodes: Option<u64>,
        dtype: &'a str,
        topo: Option<&'a str>,
        sizes: &'a TuneSizes,
    }

    /// The model's side of `cclsim tuner --topo`: the Config of the
    /// preset with the command's collective, ranks and element type.
    fn tuner_model(a: &TunerArgs, topo: &str, op: &str) -> Res<Config> {
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

    fn tuner_cmd(a: &TunerArgs) -> Res<()> {
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

    fn tune_cmd(m: &Machine, sweep: &TuneSizes, format: Option<&str>) -> Res<()> {
        use ccl_playground::engine::library::Library;
        use ccl_playground::engine::tune::{self, Format};
        let sizes = sweep_sizes(sweep)?;
        let c = config(m, &sweep.min, "-b")?;
        let library = ccl_playground::engine::plan::machine(&c)
            .map_err(|e| e.to_string())?
            .library;
        let fmt = match format {
            Some(f) => Format::parse(f).ok_or_else(|| {
                format!("--format {f:?}: expected nccl-env, nccl-tuner-csv or hccl")
            })?,
            None if library == Library::Hccl => Format::Hccl,
            None => Format::NcclTunerCsv,
        };
        out(&tune::text(&c, fmt, &sizes)?)
    }

    fn msccl_export_cmd(m: &Machine, bytes: &str) -> Res<()> {
        use ccl_playground::engine::formats::msccl;
        let c = config(m, bytes, "--bytes")?;
        let p = Plan::new(&c).map_err(|e| e.to_string())?;
        // Above the drawn ranks a large schedule is streamed, never held.
        let s = p.schedule.as_ref().ok_or_else(|| {
            format!(
                "{} ranks: MSCCL export takes 1..=64 (the schedule of {} on {} ranks is {} steps, streamed through the estimate, not held)",
                c.ranks, p.algorithm, c.ranks, p.schedule_steps
            )
        })?;
        let xml = msccl::export(s).map_err(|e| e.to_string())?;
        out(&xml)
    }

    /// The flags of `step` that describe the layout.
    struct StepFlags<'a> {
        model: Option<&'a str>,
        config: Option<&'a Path>,
        /// dp, tp, pp, ep, microbatches.
        dims: [usize; 5],
        zero: u8,
        seq: u64,
        batch: u64,
        dtypes: (&'a str, &'a str),
        mfu: f64,
        peak_tflops: Option<f64>,
        bucket: Option<&'a str>,
        /// --sequence-parallel, --attention-flops.
        switches: (bool, bool),
    }

    /// The engine's input of `step`'s flags; a bad dtype or size names its flag.
    fn step_input(f: &StepFlags) -> Res<StepInput> {
        let dtype = |flag: &str, v: &str| {
            DType::from_name(&v.to_ascii_lowercase())
                .ok_or_else(|| format!("--{flag} {v:?}: fp32, fp16 or bf16"))
        };
        let bucket_cap = match f.bucket {
            Some(b) => Some(parse_bytes(b).map_err(|e| format!("--bucket {b:?}: {e}"))?),
            None => None,
        };
        let [dp, tp, pp, ep, microbatches] = f.dims;
        let (model, shape) = step_model(f)?;
        Ok(StepInput {
            model,
            shape,
            dp,
            tp,
            pp,
            ep,
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
        })
    }

    /// Largest config.json `--config` reads, bytes.
    const MAX_MODEL_CONFIG_BYTES: usize = 1 << 20;

    /// The model of `--model` / `--config`: its name and, from a
    /// config.json, its shape.
    fn step_model(f: &StepFlags) -> Res<(String, Option<step::model::ModelShape>)> {
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
    fn step_cmd(f: &StepFlags, m: &Machine, json: bool) -> Res<()> {
        let input = step_input(f)?;
        let machine = config(m, "1MiB", "--bytes")?;
        let r = step::step(&input, &machine).map_err(|e| match e {
            step::StepError::Invalid {
                field,
                value,
                allowed,
            } => format!("--{} {value}: {allowed}", field.replace('_', "-")),
            other => other.to_string(),
        })?;
        if json {
            let v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            return out(&format!("{v}\n"));
        }
        out(&step_text(&r))
    }

    /// The step as a table and a summary.
    fn step_text(r: &step::StepReport) -> String {
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
            let range = match c.range_us {
                Some((lo, hi)) => format!("; 80 % range {lo:.1}–{hi:.1} us"),
                None => String::new(),
            };
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

    pub fn main() -> i32 {
        let cli = match Cli::try_parse() {
            Ok(c) => c,
            Err(e) => {
                use clap::error::ErrorKind;
                if matches!(
                    e.kind(),
                    ErrorKind::DisplayHelp
                        | ErrorKind::DisplayVersion
                        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                ) {
                    let _ = e.print();
                    return 0;
                }
                let text = e.render().to_string();
                let first = text
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("bad arguments");
                eprintln!("cclsim: {}", first.trim_start_matches("error: "));
                return 2;
            }
        };
        let r = match &cli.cmd {
            Cmd::Predict {
                m,
                bytes,
                json,
                format,
                trace,
            } => predict(m, bytes, *json, *format, trace.as_deref()),
            Cmd::Sweep {
                m,
                min,
                max,
                factor,
                format,
            } => sweep(m, min, max, *factor, *format),
            Cmd::Fit {
                logs,
                out,
                ranks,
                op,
                json,
            } => fit(logs, out.as_deref(), *ranks, op.as_deref(), *json),
            Cmd::Accuracy {
                dir,
                ranks,
                min_bytes,
            } => accuracy(dir, *ranks, min_bytes),
            Cmd::Validate { dir, rows, summary } => validate(dir, *rows, *summary),
            Cmd::Determinism {
                m,
                bytes,
                versus,
                fixed,
                element,
                json,
            } => determinism_cmd(m, bytes, versus, *fixed, *element, *json),
            Cmd::Fusion {
                topo,
                ranks,
                fusion,
                bucket,
                dtype,
                compress,
                compress_min,
                json,
            } => fusion_cmd(
                topo,
                *ranks,
                fusion,
                bucket.as_deref(),
                dtype,
                (compress, compress_min),
                *json,
            ),
            Cmd::Msccl {
                file,
                topo,
                bytes,
                dtype,
                json,
            } => msccl_cmd(file, topo.as_deref(), bytes, dtype, *json),
            Cmd::MscclExport { m, bytes } => msccl_export_cmd(m, bytes),
            Cmd::Tuner {
                file,
                op,
                ranks,
                nodes,
                dtype,
                topo,
                sizes,
            } => tuner_cmd(&TunerArgs {
                file,
                op: op.as_deref(),
                ranks: *ranks,
                nodes: *nodes,
                dtype,
                topo: topo.as_deref(),
                sizes,
            }),
            Cmd::Tune { m, sizes, format } => tune_cmd(m, sizes, format.as_deref()),
            Cmd::Step {
                model,
                config: model_config,
                dp,
                tp,
                pp,
                ep,
                zero,
                microbatches,
                seq,
                batch,
                param_dtype,
                grad_dtype,
                mfu,
                peak_tflops,
                bucket,
                topo,
                topology,
                profile,
                ranks,
                sequence_parallel,
                attention_flops,
                json,
            } => {
                let layout = StepFlags {
                    switches: (*sequence_parallel, *attention_flops),
                    model: model.as_deref(),
                    config: model_config.as_deref(),
                    dims: [*dp, *tp, *pp, *ep, *microbatches],
                    zero: *zero,
                    seq: *seq,
                    batch: *batch,
                    dtypes: (param_dtype, grad_dtype),
                    mfu: *mfu,
                    peak_tflops: *peak_tflops,
                    bucket: bucket.as_deref(),
                };
                let machine = Machine {
                    topo: topo.clone(),
                    topology: topology.clone(),
                    op: "allreduce".into(),
                    algo: "auto".into(),
                    ranks: *ranks,
                    root: None,
                    dtype: "bf16".into(),
                    profile: profile.clone(),
                    slices: "auto".into(),
                    redop: "sum".into(),
                    slow: None,
                    late: None,
                    down: None,
                };
                step_cmd(&layout, &machine, *json)
            }
            Cmd::Compress {
                scheme,
                block,
                scale,
                shape,
                elems,
                json,
            } => compress_cmd(scheme, *block, scale, shape, *elems, *json),
        };
        match r {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("cclsim: {}", e.replace('\n', " "));
                2
            }
        }
    }
}
