//! The command line: flags, the configuration they give (the page link's
//! path), shared readers, and the dispatch to one file per subcommand.

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::calibrate::Profile;
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::config::Config;
use ccl_playground::engine::cost::{self, Slices};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::formats::report::{self, ReportHeader, ReportRow};
use ccl_playground::engine::formats::{self, Collective};
use ccl_playground::engine::plan::{Decision, Plan};
use ccl_playground::engine::topology::Topology;
use ccl_playground::engine::units::{format_bytes, message_bytes, parse_bytes};
use ccl_playground::flags::{self, read_capped, FlagNames, MachineFlags};
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
        #[command(flatten)]
        o: FusionOptions,
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
        #[command(flatten)]
        o: TunerOptions,
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
        #[command(flatten)]
        o: StepOptions,
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
    let machine = MachineFlags {
        topo: m.topo.as_deref(),
        topology: m.topology.as_deref(),
        profile: m.profile.as_deref(),
    };
    let names = FlagNames {
        bytes: flag,
        ranks: "--ranks",
    };
    flags::machine_config(
        q,
        &machine,
        || Err("--topo is required unless --profile or --topology is given".into()),
        &names,
    )
}

/// The plan of `c`, or its error as one line.
fn plan(c: &Config) -> Res<Plan> {
    Plan::headline(c).map_err(|e| e.to_string())
}

/// Writes `text` to stdout through [`print_or_quit`].
fn out(text: &str) -> Res<()> {
    print_or_quit(format_args!("{text}"));
    Ok(())
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
    match run(&cli.cmd) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("cclsim: {}", e.replace('\n', " "));
            2
        }
    }
}

/// Runs the parsed subcommand: each arm only hands its flags to the
/// function (or the options' `run`) in that subcommand's file.
fn run(cmd: &Cmd) -> Res<()> {
    match cmd {
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
        Cmd::Fusion { o } => o.run(),
        Cmd::Msccl {
            file,
            topo,
            bytes,
            dtype,
            json,
        } => msccl_cmd(file, topo.as_deref(), bytes, dtype, *json),
        Cmd::MscclExport { m, bytes } => msccl_export_cmd(m, bytes),
        Cmd::Tuner { o } => o.run(),
        Cmd::Tune { m, sizes, format } => tune_cmd(m, sizes, format.as_deref()),
        Cmd::Step { o } => o.run(),
        Cmd::Compress {
            scheme,
            block,
            scale,
            shape,
            elems,
            json,
        } => compress_cmd(scheme, *block, scale, shape, *elems, *json),
    }
}

mod compress;
mod determinism;
mod fit;
mod fusion;
mod msccl;
mod predict;
mod step;
mod tune;
mod validate;
use compress::compress_cmd;
use determinism::determinism_cmd;
use fit::{fit, read_log};
use fusion::FusionOptions;
use msccl::{msccl_cmd, msccl_export_cmd};
use predict::{predict, sweep};
use step::StepOptions;
use tune::{tune_cmd, TunerOptions};
use validate::{accuracy, validate};
