//! `cclsim`: the cost model on the command line (native only).
//!
//! - `cclsim predict --topo T --op OP --algo A|auto --bytes B --ranks N [--profile P.json] [--slices auto|K] [--json]`
//! - `cclsim sweep --topo T --op OP -b 8 -e 1G -f 2 [--algo A] [--slices auto|K]`: an
//!   nccl-tests-style table.
//! - `--slices`: slices per transfer (`engine::cost::estimate_sliced`;
//!   default `auto`, like the library); JSON adds `slices`, `slices_why`.
//! - `cclsim fit LOG --out P.json [--ranks N] [--op NAME] [--json]`: fit a
//!   profile; per-row measured vs fitted.
//! - `cclsim accuracy [DIR]`: hold-out accuracy on every log in DIR (fit the
//!   even-indexed sizes, predict the odd ones), and the built-in `h100-8`
//!   ring AllReduce busbw against the measured 365–370 GB/s.
//!
//! - `cclsim fusion --topo T --ranks N --fusion llama3-8b|30x4MiB --bucket 25MiB [--dtype D] [--json]`:
//!   DDP-style bucketing, fused vs unfused AllReduce time.
//! - `cclsim compress --scheme int8|fp8e4m3|fp8e5m2 [--block 256] [--scale fp16|fp32]
//!   [--shape normal|heavy|layers] [--elems N] [--json]`: the error and
//!   wire size of one quantisation round trip on gradient-like data (a
//!   what-if: HCCL and NCCL have no gradient compression).
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
    use ccl_playground::engine::calibrate::{holdout_accuracy, Profile};
    use ccl_playground::engine::collective::Primitive;
    use ccl_playground::engine::config::{parse_bytes, AlgoChoice};
    use ccl_playground::engine::cost::{self, Estimate, Slices};
    use ccl_playground::engine::dtype::DType;
    use ccl_playground::engine::formats::{self, Collective};
    use ccl_playground::engine::select::{format_bytes, select};
    use ccl_playground::engine::topology::Topology;
    use clap::{Parser, Subcommand};
    use std::path::{Path, PathBuf};

    /// Largest message cclsim models, bytes (1 TiB).
    const MAX_BYTES: u64 = 1 << 40;

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
        /// Topology preset: 910b-8, 910a-8, h100-8, 910b-{S}x8 (S = 2..=128).
        #[arg(long)]
        topo: Option<String>,
        /// Collective: allreduce, reducescatter, allgather, broadcast, reduce,
        /// scatter, gather, alltoall, alltoallv, barrier, sendrecv (root 0).
        #[arg(long)]
        op: String,
        /// Algorithm: auto, ring, mesh, rhd, tree, star, pairwise, nb, dbtree, hier.
        #[arg(long, default_value = "auto")]
        algo: String,
        /// Number of ranks (default: every device of the topology, or the
        /// profile's rank count).
        #[arg(long)]
        ranks: Option<usize>,
        /// Element type: fp32, fp16, bf16, int32, int8.
        #[arg(long, default_value = "fp32")]
        dtype: String,
        /// A profile from `cclsim fit`: its link figures replace the
        /// topology's (or, without --topo, describe the machine).
        #[arg(long)]
        profile: Option<PathBuf>,
        /// Slices per transfer: auto (NCCL's 512 KiB / 1 MiB slice on NCCL
        /// machines, 1 on HCCL ones and on a fitted profile) or 1..=256.
        #[arg(long, default_value = "auto")]
        slices: String,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// Time, algbw and busbw of one collective.
        Predict {
            #[command(flatten)]
            m: Machine,
            /// Message size S (nccl-tests' size): 4096, 64MiB, 1G, 1.5GB.
            #[arg(long)]
            bytes: String,
            /// Print JSON (time_us, algbw_gbps, busbw_gbps, algorithm, ...).
            #[arg(long)]
            json: bool,
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
        },
        /// Fit a profile to an nccl-tests / rccl-tests / hccl_test log.
        Fit {
            /// The log file.
            log: PathBuf,
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
            /// Bucket cap (0 = one AllReduce per tensor); DDP's default 25MiB.
            #[arg(long, default_value = "25MiB")]
            bucket: String,
            /// Gradient dtype.
            #[arg(long, default_value = "bf16")]
            dtype: String,
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

    fn size(name: &str, v: &str) -> Res<u64> {
        let b = parse_bytes(v).map_err(|e| format!("--{name} {v:?}: {e}"))?;
        if b == 0 || b > MAX_BYTES {
            return Err(format!("--{name} {v:?}: a size from 1 byte to 1 TiB"));
        }
        Ok(b)
    }

    fn load_profile(p: &Path) -> Res<Profile> {
        let text = read_capped(p, MAX_PROFILE_BYTES, "profile")?;
        let prof: Profile = serde_json::from_str(&text)
            .map_err(|e| format!("profile {} is not a cclsim profile: {e}", p.display()))?;
        prof.validate()
            .map_err(|e| format!("profile {}: {e}", p.display()))?;
        Ok(prof)
    }

    struct Setup {
        op: Primitive,
        algo: AlgoChoice,
        dtype: DType,
        ranks: usize,
        base: Option<Topology>,
        profile: Option<Profile>,
        slices: Slices,
    }

    fn setup(m: &Machine) -> Res<Setup> {
        let op = Primitive::from_name(&m.op.to_ascii_lowercase()).ok_or_else(|| {
            format!(
                "--op {:?}: one of {}",
                m.op,
                Primitive::ALL.map(|p| p.name()).join(", ")
            )
        })?;
        let algo = AlgoChoice::from_name(&m.algo.to_ascii_lowercase()).ok_or_else(|| {
            format!(
                "--algo {:?}: one of auto, {}",
                m.algo,
                Algorithm::ALL.map(|a| a.name()).join(", ")
            )
        })?;
        let dtype = DType::from_name(&m.dtype.to_ascii_lowercase()).ok_or_else(|| {
            format!(
                "--dtype {:?}: one of fp32, fp16, bf16, int32, int8",
                m.dtype
            )
        })?;
        let slices =
            Slices::parse(&m.slices).map_err(|e| format!("--slices {:?}: {e}", m.slices))?;
        let base = match &m.topo {
            Some(t) => Some(Topology::preset(t).map_err(|e| e.to_string())?),
            None => None,
        };
        let profile = match &m.profile {
            Some(p) => Some(load_profile(p)?),
            None => None,
        };
        let ranks = match (m.ranks, &base, &profile) {
            (Some(r), _, _) => r,
            (None, Some(t), _) => t.devices.len(),
            (None, None, Some(p)) => p.ranks,
            (None, None, None) => return Err("--topo is required unless --profile is given".into()),
        };
        if let Some(t) = &base {
            t.check_ranks(ranks).map_err(|e| e.to_string())?;
        } else if !(2..=4096).contains(&ranks) {
            return Err(format!("--ranks {ranks}: 2..=4096 on a profile's machine"));
        }
        Ok(Setup {
            op,
            algo,
            dtype,
            ranks,
            base,
            profile,
            slices,
        })
    }

    impl Setup {
        fn topology(&self, bytes: u64) -> Res<Topology> {
            match (&self.base, &self.profile) {
                (Some(t), None) => Ok(t.clone()),
                (Some(t), Some(p)) => p.apply_at(t, bytes).map_err(|e| e.to_string()),
                (None, Some(p)) => {
                    let mut q = p.clone();
                    q.ranks = q.ranks.max(self.ranks);
                    let mut t = q.topology_at(bytes);
                    // Keep the fitted link figures of the measured rank count.
                    let (lat, bw) = p.link_params_at(bytes);
                    for l in &mut t.links {
                        l.bandwidth_gbps = bw;
                        l.latency_us = lat / 2.0;
                    }
                    Ok(t)
                }
                (None, None) => Err("--topo is required unless --profile is given".into()),
            }
        }

        fn run(&self, bytes: u64) -> Res<(Algorithm, Estimate, String)> {
            let es = self.dtype.size_bytes() as u64;
            if bytes % es != 0 {
                return Err(format!(
                    "--bytes {bytes}: a whole number of {} elements ({es} bytes each)",
                    self.dtype
                ));
            }
            let topo = self.topology(bytes)?;
            match self.algo {
                AlgoChoice::Auto => {
                    let sel = select(self.op, &topo, self.ranks, bytes, self.dtype)
                        .map_err(|e| e.to_string())?;
                    if sel.ranking.is_empty() {
                        return Err("no algorithm applies".into());
                    }
                    // Rank the applicable algorithms again with slicing.
                    let mut best: Option<(Algorithm, Estimate)> = None;
                    for c in sel.ranking {
                        let e = if self.slices == Slices::Fixed(1) {
                            c.estimate
                        } else {
                            let s = algorithm::build(c.algorithm, self.op, self.ranks)
                                .map_err(|e| e.to_string())?;
                            cost::estimate_sliced(&s, &topo, bytes, self.dtype, self.slices)
                                .map_err(|e| e.to_string())?
                        };
                        if best.as_ref().is_none_or(|b| e.time_us < b.1.time_us) {
                            best = Some((c.algorithm, e));
                        }
                    }
                    let (a, e) = best.ok_or("no algorithm applies")?;
                    Ok((a, e, topo.name))
                }
                AlgoChoice::Fixed(a) => {
                    let s = algorithm::build(a, self.op, self.ranks).map_err(|e| e.to_string())?;
                    let e = cost::estimate_sliced(&s, &topo, bytes, self.dtype, self.slices)
                        .map_err(|e| e.to_string())?;
                    Ok((a, e, topo.name))
                }
            }
        }
    }

    fn predict(m: &Machine, bytes: &str, json: bool) -> Res<()> {
        let s = setup(m)?;
        let bytes = size("bytes", bytes)?;
        let (a, e, topo) = s.run(bytes)?;
        if json {
            let v = serde_json::json!({
                "time_us": e.time_us,
                "algbw_gbps": e.algbw_gbps,
                "busbw_gbps": e.busbw_gbps,
                "algorithm": a.name(),
                "op": s.op.name(),
                "bytes": bytes,
                "ranks": s.ranks,
                "topology": topo,
                "loops": e.timeline.loops,
                "slices": e.slicing.slices,
                "slices_why": e.slicing.why,
                "max_link_sharing": e.timeline.steps.iter().map(|x| x.max_link_sharing).max().unwrap_or(0),
            });
            println!("{v}");
        } else {
            println!(
                "{} {} of {} on {} ranks of {}: {:.2} µs, algbw {:.2} GB/s, busbw {:.2} GB/s",
                a.name(),
                s.op.title(),
                format_bytes(bytes),
                s.ranks,
                topo,
                e.time_us,
                e.algbw_gbps,
                e.busbw_gbps
            );
            println!("slices: {} ({})", e.slicing.slices, e.slicing.why);
        }
        Ok(())
    }

    fn sweep(m: &Machine, min: &str, max: &str, factor: u64) -> Res<()> {
        let s = setup(m)?;
        let (lo, hi) = (size("minbytes", min)?, size("maxbytes", max)?);
        if lo > hi {
            return Err(format!("-b {min} is larger than -e {max}"));
        }
        if factor < 2 {
            return Err(format!("-f {factor}: a factor of at least 2"));
        }
        let es = s.dtype.size_bytes() as u64;
        println!(
            "# cclsim sweep: {} on {} ranks of {}, {}, algorithm {}, slices {}",
            s.op.title(),
            s.ranks,
            m.topo.as_deref().unwrap_or("the profile's machine"),
            s.dtype,
            s.algo.name(),
            s.slices.name()
        );
        println!(
            "#{:>12} {:>13} {:>6} {:>9} {:>12} {:>8} {:>8}",
            "size", "count", "type", "algorithm", "time", "algbw", "busbw"
        );
        println!(
            "#{:>12} {:>13} {:>6} {:>9} {:>12} {:>8} {:>8}",
            "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)"
        );
        let mut b = lo;
        loop {
            let bytes = b - b % es;
            if bytes > 0 {
                let (a, e, _) = s.run(bytes)?;
                println!(
                    "{:>13} {:>13} {:>6} {:>9} {:>12.2} {:>8.2} {:>8.2}",
                    bytes,
                    bytes / es,
                    s.dtype.name(),
                    a.name(),
                    e.time_us,
                    e.algbw_gbps,
                    e.busbw_gbps
                );
            }
            match b.checked_mul(factor) {
                Some(n) if n <= hi => b = n,
                _ => break,
            }
        }
        Ok(())
    }

    fn read_log(p: &Path) -> Res<formats::Log> {
        let text = read_capped(p, formats::MAX_LOG_BYTES, "log")?;
        formats::parse_log(&text).map_err(|e| format!("{}: {e}", p.display()))
    }

    fn fit(
        log: &Path,
        out: Option<&Path>,
        ranks: Option<usize>,
        op: Option<&str>,
        json: bool,
    ) -> Res<()> {
        let parsed = read_log(log)?;
        let coll = op.map(Collective::from_tool_name);
        let name = log
            .file_name()
            .map_or("log".to_string(), |n| n.to_string_lossy().into_owned());
        let p = Profile::fit_log(&parsed, coll.as_ref(), ranks, &name)
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

    fn accuracy(dir: &Path, ranks: usize, min_bytes: &str) -> Res<()> {
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
        println!("# Hold-out accuracy: fit the even-indexed sizes, predict the odd ones; |relative time error| over held-out sizes >= {}", format_bytes(min));
        println!(
            "{:<46} {:<44} {:>4} {:>5} {:>8} {:>8}",
            "log", "table", "segs", "rows", "median%", "max%"
        );
        let mut medians = Vec::new();
        for f in &files {
            let name = f
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            // One unreadable file is reported; the others are still measured.
            let log = match read_log(f) {
                Ok(log) => log,
                Err(e) => {
                    println!("{name:<46} unreadable: {e}");
                    continue;
                }
            };
            for t in &log.tables {
                if let Some(r) = &t.rejected {
                    println!(
                        "{:<46} {:<44} rejected: {}",
                        name,
                        t.label(),
                        r.chars().take(90).collect::<String>()
                    );
                    continue;
                }
                match holdout_accuracy(t, Some(ranks), min) {
                    Ok(a) if a.rows > 0 => {
                        medians.push(a.median_rel_err);
                        println!(
                            "{:<46} {:<44} {:>4} {:>5} {:>8.2} {:>8.2}",
                            name,
                            a.table,
                            a.segments,
                            a.rows,
                            a.median_rel_err * 100.0,
                            a.max_rel_err * 100.0
                        );
                    }
                    Ok(a) => println!(
                        "{:<46} {:<44} no held-out rows >= {}",
                        name,
                        a.table,
                        format_bytes(min)
                    ),
                    Err(e) => println!("{:<46} {:<44} {e}", name, t.label()),
                }
            }
        }
        medians.sort_by(f64::total_cmp);
        if !medians.is_empty() {
            let within = medians.iter().filter(|&&m| m <= 0.05).count();
            println!(
                "# {} of {} tables have median error <= 5 %; worst median {:.2} %",
                within,
                medians.len(),
                medians[medians.len() - 1] * 100.0
            );
        }
        // Built-in h100-8, no fit, ring AllReduce busbw vs measured.
        println!();
        println!("# Built-in h100-8 (no fit), ring AllReduce on 8 GPUs, busbw vs the measured 365-370 GB/s (NVIDIA/nccl issue 1455); default slices (auto), and unsliced");
        println!(
            "{:>13} {:>12} {:>12} {:>10} {:>7} {:>12} {:>10}",
            "size(B)", "time(us)", "busbw(GB/s)", "vs 367.5", "slices", "unsliced bw", "vs 367.5"
        );
        let topo = Topology::h100_8();
        let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8)
            .map_err(|e| e.to_string())?;
        let mut b: u64 = 64 << 20;
        while b <= 16 << 30 {
            let e = cost::estimate_sliced(&s, &topo, b, DType::Fp32, Slices::Auto)
                .map_err(|e| e.to_string())?;
            let u = cost::estimate(&s, &topo, b, DType::Fp32).map_err(|e| e.to_string())?;
            println!(
                "{:>13} {:>12.2} {:>12.2} {:>+9.2}% {:>7} {:>12.2} {:>+9.2}%",
                b,
                e.time_us,
                e.busbw_gbps,
                (e.busbw_gbps - 367.5) / 367.5 * 100.0,
                e.slicing.slices,
                u.busbw_gbps,
                (u.busbw_gbps - 367.5) / 367.5 * 100.0
            );
            b *= 2;
        }
        Ok(())
    }

    fn fusion_cmd(
        topo: &str,
        ranks: usize,
        spec: &str,
        bucket: &str,
        dtype: &str,
        json: bool,
    ) -> Res<()> {
        use ccl_playground::engine::fusion;
        let topology = Topology::preset(topo).map_err(|e| e.to_string())?;
        let dt = DType::from_name(dtype)
            .ok_or_else(|| format!("--dtype {dtype:?}: allowed fp32, fp16, bf16, int32, int8"))?;
        let cap = parse_bytes(bucket).map_err(|e| format!("--bucket {bucket:?}: {e}"))?;
        let tensors = fusion::parse_fusion(spec, dt).map_err(|e| e.to_string())?;
        let plan = fusion::plan(&tensors, dt, cap, &topology, ranks).map_err(|e| e.to_string())?;
        if json {
            let v = serde_json::json!({
                "tensors": tensors.len(),
                "buckets": plan.buckets.len(),
                "total_bytes": plan.total_bytes,
                "unfused_us": plan.unfused_us,
                "fused_us": plan.fused_us,
                "crossover_bytes": plan.crossover_bytes,
            });
            println!("{v}");
        } else {
            println!("{}", plan.summary(tensors.len()));
            println!(
                "{:>6} {:>8} {:>12} {:>10} {:>12}",
                "bucket", "tensors", "bytes", "algorithm", "time(us)"
            );
            for (i, (b, c)) in plan.buckets.iter().enumerate() {
                println!(
                    "{:>6} {:>8} {:>12} {:>10} {:>12.2}",
                    i,
                    b.tensors.len(),
                    b.bytes,
                    c.algorithm.name(),
                    c.time_us
                );
            }
        }
        Ok(())
    }

    fn compress_cmd(
        scheme: &str,
        block: usize,
        scale: &str,
        shape: &str,
        elems: usize,
        json: bool,
    ) -> Res<()> {
        use ccl_playground::engine::compress::{
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
        let x = compress::gradients(shape, 1, 0, elems);
        let y = compress::round_trip(&c, &x);
        let exact: Vec<f64> = x.iter().map(|v| *v as f64).collect();
        let approx: Vec<f64> = y.iter().map(|v| *v as f64).collect();
        let st = compress::error_stats(&exact, &approx);
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
            Cmd::Predict { m, bytes, json } => predict(m, bytes, *json),
            Cmd::Sweep {
                m,
                min,
                max,
                factor,
            } => sweep(m, min, max, *factor),
            Cmd::Fit {
                log,
                out,
                ranks,
                op,
                json,
            } => fit(log, out.as_deref(), *ranks, op.as_deref(), *json),
            Cmd::Accuracy {
                dir,
                ranks,
                min_bytes,
            } => accuracy(dir, *ranks, min_bytes),
            Cmd::Fusion {
                topo,
                ranks,
                fusion,
                bucket,
                dtype,
                json,
            } => fusion_cmd(topo, *ranks, fusion, bucket, dtype, *json),
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
