//! `cclrun`: any schedule on real processes with MPI, measured and checked
//! like nccl-tests (native, cargo feature `mpi`).
//!
//! `mpirun -np N cclrun --op OP [--algo A[,B,...]] [-b 8 -e 64M -f 2]
//! [--dtype D] [--redop R] [--root R] [-w 5] [-n 20] [--topo T |
//! --topology C.json | --profile P.json] [--compare] [--json]
//! [--timeout-ms 30000]`
//!
//! Each MPI process is one rank. Every rank plans with the engine
//! (`Plan::headline` on the configuration the same page link gives:
//! `auto` is decided once, in `engine::plan`), verifies the schedule
//! symbolically, runs its own part with the same `RankMachine` the web
//! workers use (`runtime::mpi::StepDriver`: every transfer of a step in
//! flight on nonblocking point-to-point), and checks its output bit for bit
//! against the schedule's reduction order and against the exact result
//! (`engine::check`). `--algo library` runs the MPI library's own
//! collective instead (`runtime::mpi::library`), checked against the exact
//! result. Rank 0 prints nccl-tests' table (`cclsim fit` reads it back).
//!
//! Time of an iteration: the slowest rank's, from a barrier to its last
//! message; a row's time is the mean (`--stat median`: the median) over
//! the `-n` timed iterations after
//! `-w` warm-ups; the check reads the last timed iteration's output.
//!
//! Ranks map to the topology's devices in order. Without `--topo`,
//! `--topology` or `--profile` the machine is `mpi-star`: the N processes
//! as devices behind one switch (10 GB/s, 1 µs per link: an assumption
//! that only `auto` uses; nothing measured depends on it).
//!
//! Exit codes: 0 all checks pass; 1 a rank's output is wrong (each such
//! rank prints its rank, chunk and element) or a rank failed; 2 bad
//! arguments (one line from rank 0); 3 a rank waited longer than
//! `--timeout-ms` (it names the step and peers, then `MPI_Abort`).

use ccl_playground::engine::algorithm::Algorithm;
use ccl_playground::engine::check::{Checker, RankReport};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::config::{AlgoChoice, Config};
use ccl_playground::engine::execute::initial_buffer;
use ccl_playground::engine::formats::report::{self, ReportHeader, ReportRow};
use ccl_playground::engine::plan::Plan;
use ccl_playground::engine::schedule::Schedule;
use ccl_playground::engine::verify::{self, Verified};
use ccl_playground::flags::{self, FlagNames, MachineFlags};
use ccl_playground::runtime::fault::Fault;
use ccl_playground::runtime::machine::RankMachine;
use ccl_playground::runtime::mpi::library::{self, LibraryRun};
use ccl_playground::runtime::mpi::{say, StepDriver};
use clap::Parser;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "cclrun",
    version,
    about = "Run a collective's schedule on real processes (mpirun -np N cclrun ...), measured and checked like nccl-tests"
)]
struct Cli {
    /// Collective: allreduce, reducescatter, allgather, broadcast, reduce,
    /// scatter, gather, alltoall, alltoallv, barrier, sendrecv.
    #[arg(long)]
    op: String,
    /// Algorithm(s), comma-separated: auto (engine::plan's choice on the
    /// machine), library (the MPI library's own collective), ring, mesh,
    /// rhd, tree, star, pairwise, nb, dbtree, hier, hier-nhr, nhr, pipeline.
    /// With --compare, default: every applicable algorithm, auto and library.
    #[arg(long)]
    algo: Option<String>,
    /// Smallest message size S (nccl-tests' size): 8, 1K, 4MiB.
    #[arg(short = 'b', long = "minbytes", default_value = "8")]
    min: String,
    /// Largest message size.
    #[arg(short = 'e', long = "maxbytes", default_value = "32M")]
    max: String,
    /// Multiplication factor between sizes (>= 2).
    #[arg(short = 'f', long = "stepfactor", default_value_t = 2)]
    factor: u64,
    /// Element type: fp32, fp16, bf16, int32, int8.
    #[arg(long, default_value = "fp32")]
    dtype: String,
    /// Reduce op: sum, prod, max, min.
    #[arg(long, default_value = "sum")]
    redop: String,
    /// Root rank of broadcast, reduce, scatter, gather.
    #[arg(long)]
    root: Option<usize>,
    /// Warm-up iterations per size (not timed).
    #[arg(short = 'w', long = "warmup_iters", default_value_t = 5)]
    warmup: u32,
    /// Timed iterations per size.
    #[arg(short = 'n', long = "iters", default_value_t = 20)]
    iters: u32,
    /// Topology preset the ranks map onto in order (910b-8, h100-8,
    /// 910b-{S}x8, ...); default: mpi-star (N processes behind one switch).
    #[arg(long)]
    topo: Option<String>,
    /// A custom topology JSON file (docs/custom-topology.md).
    #[arg(long)]
    topology: Option<PathBuf>,
    /// A profile from `cclsim fit`: the measured machine.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Seed of the deterministic inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One table with every algorithm side by side per size, and the ratio
    /// of our best to the library.
    #[arg(long)]
    compare: bool,
    /// JSON lines (one object per size and algorithm) instead of tables.
    #[arg(long)]
    json: bool,
    /// A row's time over its timed iterations: mean (nccl-tests) or median
    /// (robust on a shared machine).
    #[arg(long, value_enum, default_value = "mean")]
    stat: Stat,
    /// A rank that waits longer than this for a message aborts the job
    /// with a message naming the step and the peers (exit code 3), ms.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
    /// Test only: KIND:rank=R:step=K (kill, throw, drop, corrupt) or
    /// delay:rank=R:step=K:ms=M, fired at rank R's first send at a step >= K.
    #[arg(long, hide = true)]
    fault: Option<String>,
}

/// What one column of a sweep runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Choice {
    Ours(AlgoChoice),
    Library,
}

impl Choice {
    fn name(self) -> &'static str {
        match self {
            Choice::Ours(a) => a.name(),
            Choice::Library => "library",
        }
    }
}

/// Everything every rank agrees on before the first message.
struct Setup {
    base: Config,
    choices: Vec<Choice>,
    sizes: Vec<u64>,
    warmup: u32,
    iters: u32,
    timeout: Duration,
    fault: Option<Fault>,
    compare: bool,
    json: bool,
    stat: Stat,
}

/// How a row's time summarises its timed iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Stat {
    /// The mean (what nccl-tests prints).
    Mean,
    /// The median (robust to a shared machine's time slices).
    Median,
}

impl Stat {
    fn name(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::Median => "median",
        }
    }

    /// The statistic of `xs` (non-empty: `-n` is at least 1).
    fn of(self, xs: &mut [f64]) -> f64 {
        match self {
            Stat::Mean => xs.iter().sum::<f64>() / xs.len().max(1) as f64,
            Stat::Median => {
                xs.sort_by(f64::total_cmp);
                let m = xs.len() / 2;
                if xs.len() % 2 == 1 {
                    xs[m]
                } else {
                    (xs[m - 1] + xs[m]) / 2.0
                }
            }
        }
    }
}

type Res<T> = Result<T, String>;

/// Link figures of the default `mpi-star` machine (an assumption; only
/// `auto` reads them): GB/s per direction and µs per link.
const STAR_GBPS: f64 = 10.0;
const STAR_US: f64 = 1.0;

/// The default machine: `n` processes behind one switch, as a custom
/// topology (so it goes through the same validation as a user's).
fn star_json(n: usize) -> String {
    let devices: Vec<String> = (0..n).map(|r| format!("{{\"id\":\"p{r}\"}}")).collect();
    let links: Vec<String> = (0..n)
        .map(|r| {
            format!("{{\"a\":\"p{r}\",\"b\":\"sw\",\"kind\":\"roce\",\"bandwidth_gbps\":{STAR_GBPS},\"latency_us\":{STAR_US}}}")
        })
        .collect();
    format!(
        "{{\"name\":\"mpi-star\",\"title\":\"{n} MPI processes behind one switch (assumed {STAR_GBPS} GB/s, {STAR_US} µs per link)\",\"devices\":[{}],\"switches\":[{{\"id\":\"sw\"}}],\"links\":[{}]}}",
        devices.join(","),
        links.join(",")
    )
}

/// The configuration of the flags at message size `bytes`, through
/// `Config::from_query` (the page's validation); errors name the flag.
/// Without `--topo`, `--topology` or `--profile` the machine is
/// `mpi-star` of the `n` processes.
fn config(cli: &Cli, n: usize, bytes: &str, flag: &str) -> Res<Config> {
    let mut q = form_urlencoded::Serializer::new(String::new());
    q.append_pair("v", "1")
        .append_pair("op", &cli.op.to_ascii_lowercase())
        .append_pair("dtype", &cli.dtype.to_ascii_lowercase())
        .append_pair("redop", &cli.redop.to_ascii_lowercase())
        .append_pair("seed", &cli.seed.to_string())
        .append_pair("bytes", bytes)
        .append_pair("ranks", &n.to_string());
    if let Some(r) = cli.root {
        q.append_pair("root", &r.to_string());
    }
    let machine = MachineFlags {
        topo: cli.topo.as_deref(),
        topology: cli.topology.as_deref(),
        profile: cli.profile.as_deref(),
    };
    let star = || {
        if n > 64 {
            return Err(format!(
                "-np {n}: the default mpi-star machine has at most 64 processes; name one with --topo (910b-{{S}}x8 up to 1024 ranks) or --profile"
            ));
        }
        Ok(star_json(n))
    };
    let names = FlagNames {
        bytes: flag,
        ranks: "-np (mpirun)",
    };
    flags::machine_config(q, &machine, star, &names)
}

fn setup(cli: &Cli, n: usize) -> Res<Setup> {
    if n < 2 {
        return Err(format!(
            "-np {n}: a collective needs at least 2 processes (mpirun -np N cclrun ...)"
        ));
    }
    let base = config(cli, n, &cli.min, "-b")?;
    let hi = config(cli, n, &cli.max, "-e")?.bytes;
    if base.bytes > hi {
        return Err(format!("-b {} is larger than -e {}", cli.min, cli.max));
    }
    if cli.factor < 2 {
        return Err(format!("-f {}: a factor of at least 2", cli.factor));
    }
    if cli.iters == 0 || cli.iters > 100_000 {
        return Err(format!("-n {}: 1..=100000 timed iterations", cli.iters));
    }
    if cli.warmup > 100_000 {
        return Err(format!("-w {}: 0..=100000 warm-up iterations", cli.warmup));
    }
    if cli.timeout_ms == 0 || cli.timeout_ms > 3_600_000 {
        return Err(format!("--timeout-ms {}: 1..=3600000 ms", cli.timeout_ms));
    }
    let fault = match &cli.fault {
        Some(f) => Some(Fault::parse(f).map_err(|e| format!("--fault {f:?}: {e}"))?),
        None => None,
    };
    let applicable = Algorithm::applicable(base.primitive, n);
    let choices: Vec<Choice> = match &cli.algo {
        Some(list) => list
            .split(',')
            .map(|s| {
                let s = s.trim().to_ascii_lowercase();
                if s == "library" {
                    Ok(Choice::Library)
                } else {
                    AlgoChoice::from_name(&s).map(Choice::Ours).ok_or_else(|| {
                        format!(
                            "--algo {s:?}: one of auto, library, {}",
                            Algorithm::ALL.map(|a| a.name()).join(", ")
                        )
                    })
                }
            })
            .collect::<Res<_>>()?,
        None if cli.compare => applicable
            .iter()
            .map(|&a| Choice::Ours(AlgoChoice::Fixed(a)))
            .chain([Choice::Ours(AlgoChoice::Auto)])
            .chain(
                library::supports(base.primitive, base.dtype, base.redop)
                    .is_ok()
                    .then_some(Choice::Library),
            )
            .collect(),
        None => vec![Choice::Ours(AlgoChoice::Auto)],
    };
    for c in &choices {
        match c {
            Choice::Library => library::supports(base.primitive, base.dtype, base.redop)
                .map_err(|e| format!("--algo library: {e}"))?,
            Choice::Ours(AlgoChoice::Fixed(a)) if !a.supports(base.primitive, n) => {
                return Err(format!(
                    "--algo {}: {a} does not implement {} on {n} ranks; applicable: {}",
                    a.name(),
                    base.primitive.title(),
                    applicable
                        .iter()
                        .map(|a| a.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
            _ => {}
        }
    }
    // Sizes: nccl-tests' -b/-e/-f; element counts of the block primitives
    // rounded down to a multiple of the ranks (equal blocks, as nccl-tests).
    let es = base.dtype.size_bytes() as u64;
    let unit = if library::needs_equal_blocks(base.primitive) {
        es * n as u64
    } else {
        es
    };
    let mut sizes = Vec::new();
    let mut b = base.bytes;
    loop {
        let s = b - b % unit;
        if s > 0 && sizes.last() != Some(&s) {
            sizes.push(s);
        }
        match b.checked_mul(cli.factor) {
            Some(x) if x <= hi => b = x,
            _ => break,
        }
    }
    if sizes.is_empty() {
        return Err(format!(
            "-b {} .. -e {}: no size holds a whole element per rank ({} bytes)",
            cli.min, cli.max, unit
        ));
    }
    Ok(Setup {
        base,
        choices,
        sizes,
        warmup: cli.warmup,
        iters: cli.iters,
        timeout: Duration::from_millis(cli.timeout_ms),
        fault,
        compare: cli.compare,
        json: cli.json,
        stat: cli.stat,
    })
}

/// Aborts the job if a blocking MPI call (barrier, the library's
/// collective) does not return within the timeout: the p2p path polls
/// with its own deadline, but a blocking call cannot.
#[derive(Clone)]
struct Watchdog {
    deadline_ms: Arc<AtomicU64>,
    what: Arc<Mutex<String>>,
    origin: Instant,
}

impl Watchdog {
    fn start(rank: usize, timeout: Duration) -> Watchdog {
        let w = Watchdog {
            deadline_ms: Arc::new(AtomicU64::new(0)),
            what: Arc::new(Mutex::new(String::new())),
            origin: Instant::now(),
        };
        let t = w.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            let d = t.deadline_ms.load(Ordering::Relaxed);
            if d != 0 && t.origin.elapsed().as_millis() as u64 > d {
                let what = t.what.lock().map(|s| s.clone()).unwrap_or_default();
                eprintln!(
                    "cclrun: rank {rank}: {what} did not return within {} ms (a peer died or hangs); aborting (--timeout-ms)",
                    timeout.as_millis()
                );
                // Not MPI_Abort: MPI is not called from a second thread;
                // mpirun ends the job when a rank dies.
                std::process::abort();
            }
        });
        w
    }

    fn arm(&self, what: &str, timeout: Duration) {
        if let Ok(mut s) = self.what.lock() {
            s.clear();
            s.push_str(what);
        }
        let at = self.origin.elapsed() + timeout;
        self.deadline_ms
            .store((at.as_millis() as u64).max(1), Ordering::Relaxed);
    }

    fn disarm(&self) {
        self.deadline_ms.store(0, Ordering::Relaxed);
    }
}

/// One measured row: mean slowest-rank time and the wrong elements of all ranks.
struct Measured {
    time_us: f64,
    wrong: u64,
    /// The algorithm that ran (auto's choice).
    algorithm: String,
}

struct Ctx<'a> {
    world: &'a SimpleCommunicator,
    rank: usize,
    setup: &'a Setup,
    watchdog: Watchdog,
    fault: Option<Fault>,
}

impl Ctx<'_> {
    /// The slowest rank's `dt` (seconds).
    fn slowest(&self, dt: f64) -> f64 {
        let mut mx = 0.0f64;
        self.watchdog
            .arm("MPI_Allreduce of the iteration times", self.setup.timeout);
        self.world
            .all_reduce_into(&dt, &mut mx, SystemOperation::max());
        self.watchdog.disarm();
        mx
    }

    fn barrier(&self) {
        self.watchdog.arm("MPI_Barrier", self.setup.timeout);
        self.world.barrier();
        self.watchdog.disarm();
    }

    fn sum(&self, x: u64) -> u64 {
        let mut s = 0u64;
        self.watchdog
            .arm("MPI_Allreduce of the wrong counts", self.setup.timeout);
        self.world
            .all_reduce_into(&x, &mut s, SystemOperation::sum());
        self.watchdog.disarm();
        s
    }

    /// Prints a failing rank's report (its rank, the chunk and element).
    fn report_wrong(
        &self,
        what: &str,
        bytes: u64,
        schedule: &Schedule,
        elems: usize,
        r: &RankReport,
        exact_only: bool,
    ) {
        let Some(m) = &r.first_mismatch else {
            say(format!(
                "cclrun: rank {}: {what} at {bytes} B: {} wrong element(s)",
                self.rank,
                r.mismatched_elements + r.beyond_tolerance
            ));
            return;
        };
        let chunk = (0..schedule.chunks)
            .find(|&c| schedule.chunk_elems(elems, c).contains(&m.element))
            .unwrap_or(0);
        let within = m.element - schedule.chunk_elems(elems, chunk).start;
        say(format!(
            "cclrun: rank {}: {what} at {bytes} B: {} wrong element(s) of {}; first: chunk {chunk} element {within} (buffer element {}): got {}, want {} ({})",
            self.rank,
            r.mismatched_elements.max(r.beyond_tolerance),
            r.checked_elements,
            m.element,
            m.got,
            m.want,
            if exact_only {
                "the exact result within the dtype's tolerance"
            } else {
                "bit for bit, the schedule's reduction order"
            }
        ));
    }

    /// Plans `choice` at `bytes` (for the library: auto's schedule, whose
    /// layout and contributions the checker reads) and verifies it.
    fn plan(&self, choice: Choice, bytes: u64) -> Res<(Plan, Schedule, Verified)> {
        let mut c = self.setup.base.clone();
        c.bytes = bytes;
        c.algo = match choice {
            Choice::Ours(a) => a,
            Choice::Library => AlgoChoice::Auto,
        };
        let p = Plan::headline(&c).map_err(|e| e.to_string())?;
        let s = p
            .schedule
            .clone()
            .ok_or_else(|| "the plan has no schedule to run".to_string())?;
        let v = verify::verify(&s).map_err(|e| {
            format!(
                "the {} schedule failed symbolic verification: {e}",
                p.algorithm
            )
        })?;
        Ok((p, s, v))
    }

    fn measure(&mut self, choice: Choice, bytes: u64) -> Res<Measured> {
        let setup = self.setup;
        let (dtype, op, seed) = (setup.base.dtype, setup.base.redop, setup.base.seed);
        let elems = (bytes / dtype.size_bytes() as u64) as usize;
        let (plan, schedule, verified) = self.plan(choice, bytes)?;
        let mut checker = Checker::new(&schedule, &verified, dtype, op, seed, elems);
        let total = setup.warmup + setup.iters;
        let mut times = Vec::with_capacity(setup.iters as usize);
        let (report, exact_only, what) = match choice {
            Choice::Library => {
                let name = library::call_name(schedule.primitive).unwrap_or("library");
                let mut lib = LibraryRun::new(&schedule, self.rank, dtype, op, seed, elems)?;
                for it in 0..total {
                    self.barrier();
                    self.watchdog.arm(name, setup.timeout);
                    let t0 = mpi::time();
                    lib.run(self.world);
                    let dt = mpi::time() - t0;
                    self.watchdog.disarm();
                    let mx = self.slowest(dt);
                    if it >= setup.warmup {
                        times.push(mx);
                    }
                }
                let out = lib.output();
                (
                    checker.check_rank_exact(self.rank, &out),
                    true,
                    name.to_string(),
                )
            }
            Choice::Ours(_) => {
                let pristine = initial_buffer(&schedule, dtype, seed, self.rank, elems);
                let mut driver = StepDriver::new(&schedule, self.rank, dtype, elems);
                let mut buf = pristine.clone();
                for it in 0..total {
                    buf.copy_from_slice(&pristine);
                    let mut m =
                        RankMachine::with_buffer(&schedule, self.rank, dtype, op, elems, buf)
                            .map_err(|e| format!("rank {}: {e}", self.rank))?;
                    self.barrier();
                    let t0 = mpi::time();
                    let r = driver.run(self.world, &mut m, setup.timeout, &mut self.fault);
                    let dt = mpi::time() - t0;
                    if let Err(e) = r {
                        say(format!(
                            "cclrun: rank {}: {} {} at {bytes} B: {e}; aborting",
                            self.rank,
                            plan.algorithm,
                            schedule.primitive.title()
                        ));
                        self.world.abort(1);
                    }
                    buf = m.into_output().0;
                    let mx = self.slowest(dt);
                    if it >= setup.warmup {
                        times.push(mx);
                    }
                }
                (
                    checker.check_rank(self.rank, &buf),
                    false,
                    format!("{} {}", plan.algorithm, schedule.primitive.title()),
                )
            }
        };
        let mine = (report.mismatched_elements + report.beyond_tolerance) as u64;
        if mine > 0 {
            self.report_wrong(&what, bytes, &schedule, elems, &report, exact_only);
        }
        let wrong = self.sum(mine);
        Ok(Measured {
            time_us: setup.stat.of(&mut times) * 1e6,
            wrong,
            algorithm: match choice {
                Choice::Library => "library".into(),
                Choice::Ours(_) => plan.algorithm.name().into(),
            },
        })
    }
}

/// Every rank's (pid, host), gathered to rank 0 (fixed 64-byte names).
fn processes(world: &SimpleCommunicator, rank: usize) -> Vec<(u32, String)> {
    const W: usize = 64;
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
    let mut mine = [0u8; W + 4];
    mine[..4].copy_from_slice(&std::process::id().to_le_bytes());
    let hb = host.as_bytes();
    let k = hb.len().min(W);
    mine[4..4 + k].copy_from_slice(&hb[..k]);
    let n = world.size() as usize;
    let mut all = vec![0u8; n * (W + 4)];
    world.all_gather_into(&mine[..], &mut all[..]);
    let _ = rank;
    all.chunks_exact(W + 4)
        .map(|c| {
            let pid = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let name: Vec<u8> = c[4..].iter().copied().take_while(|&b| b != 0).collect();
            (pid, String::from_utf8_lossy(&name).into_owned())
        })
        .collect()
}

fn row(
    bytes: u64,
    m: &Measured,
    p: Primitive,
    n: usize,
    extra: Vec<(String, String)>,
) -> ReportRow {
    let algbw = if m.time_us > 0.0 && p != Primitive::Barrier {
        bytes as f64 / (m.time_us * 1e3)
    } else {
        0.0
    };
    ReportRow {
        bytes,
        time_us: m.time_us,
        algbw_gbps: algbw,
        busbw_gbps: algbw * p.busbw_factor(n),
        wrong: Some(m.wrong),
        extra,
    }
}

fn run(world: &SimpleCommunicator, cli: &Cli) -> i32 {
    let rank = world.rank() as usize;
    let n = world.size() as usize;
    let setup = match setup(cli, n) {
        Ok(s) => s,
        Err(e) => {
            if rank == 0 {
                eprintln!("cclrun: {}", e.replace('\n', " "));
            }
            return 2;
        }
    };
    let procs = processes(world, rank);
    let mut ctx = Ctx {
        world,
        rank,
        setup: &setup,
        watchdog: Watchdog::start(rank, setup.timeout),
        fault: setup.fault,
    };
    let base = &setup.base;
    // results[choice][size]; sizes outer, so every column of a row is
    // measured in the same stretch of time (a shared machine's load drifts).
    let mut results: Vec<Vec<Measured>> = setup.choices.iter().map(|_| Vec::new()).collect();
    let mut topo_labels: Vec<String> = Vec::new();
    let mut machine = String::new();
    for &bytes in &setup.sizes {
        for (k, &choice) in setup.choices.iter().enumerate() {
            match ctx.measure(choice, bytes) {
                Ok(m) => results[k].push(m),
                Err(e) => {
                    // Deterministic on every rank (planning is), so every
                    // rank stops here together.
                    if rank == 0 {
                        eprintln!("cclrun: {} at {bytes} B: {e}", choice.name());
                    }
                    return 2;
                }
            }
        }
    }
    if let Ok(p) = Plan::headline(base) {
        topo_labels = (0..n)
            .map(|r| p.topology.node_label(r).to_string())
            .collect();
        machine = match &base.custom {
            Some(t) => t.name.clone().unwrap_or_else(|| "custom".into()),
            None => p.topology.name.clone(),
        };
    }
    let wrong: u64 = results.iter().flatten().map(|m| m.wrong).sum();
    if rank == 0 {
        let text = render(&setup, n, &procs, &topo_labels, &machine, &results);
        use std::io::Write;
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
    }
    if wrong > 0 {
        1
    } else {
        0
    }
}

/// The page link of `base` with `choice` (`library` has no page
/// counterpart: auto), without the long topology and profile JSON.
fn link(base: &Config, choice: Choice) -> String {
    let mut c = base.clone();
    if let Choice::Ours(a) = choice {
        c.algo = a;
    }
    let q: Vec<String> = c
        .to_query()
        .split('&')
        .filter(|kv| !kv.starts_with("topology=") && !kv.starts_with("profile="))
        .map(String::from)
        .collect();
    format!("page link (without the topology JSON): ?{}", q.join("&"))
}

fn render(
    setup: &Setup,
    n: usize,
    procs: &[(u32, String)],
    labels: &[String],
    machine: &str,
    results: &[Vec<Measured>],
) -> String {
    let base = &setup.base;
    let p = base.primitive;
    let lib = setup.choices.iter().position(|&c| c == Choice::Library);
    let notes = |choice: Choice| {
        vec![
            format!(
                "cclrun: {} on {n} MPI processes (real runs, checked): {} of {}; machine {machine}; time = {} over {} iterations (after {} warm-ups) of the slowest rank, from a barrier",
                choice.name(),
                p.title(),
                base.dtype.name(),
                setup.stat.name(),
                setup.iters,
                setup.warmup
            ),
            "cclrun: our schedules run in place, so the in-place half repeats the out-of-place figures".into(),
            link(base, choice),
        ]
    };
    let header = |choice: Choice| ReportHeader {
        primitive: p,
        dtype: base.dtype,
        redop: base.redop,
        root: base.root,
        devices: (0..n)
            .map(|r| labels.get(r).cloned().unwrap_or_else(|| format!("p{r}")))
            .collect(),
        producer: "cclrun".into(),
        notes: notes(choice),
        processes: procs.to_vec(),
    };
    let ratio = |k: usize, i: usize| lib.map(|l| results[k][i].time_us / results[l][i].time_us);
    let extra = |k: usize, i: usize| {
        let choice = setup.choices[k];
        let mut e = vec![
            ("algorithm".to_string(), results[k][i].algorithm.clone()),
            ("choice".to_string(), choice.name().to_string()),
        ];
        if let Some(r) = ratio(k, i) {
            e.push(("vs_library".to_string(), format!("{r:.3}")));
        }
        e
    };
    if setup.json {
        let mut s = String::new();
        for (k, &choice) in setup.choices.iter().enumerate() {
            let rows: Vec<ReportRow> = setup
                .sizes
                .iter()
                .enumerate()
                .map(|(i, &b)| row(b, &results[k][i], p, n, extra(k, i)))
                .collect();
            s.push_str(&report::json_lines(&header(choice), &rows));
        }
        return s;
    }
    if !setup.compare {
        let mut s = String::new();
        for (k, &choice) in setup.choices.iter().enumerate() {
            let rows: Vec<ReportRow> = setup
                .sizes
                .iter()
                .enumerate()
                .map(|(i, &b)| row(b, &results[k][i], p, n, vec![]))
                .collect();
            s.push_str(&report::nccl_tests_table(&header(choice), &rows));
        }
        return s;
    }
    // --compare: one table, every choice side by side.
    let mut s = String::new();
    for l in notes(Choice::Ours(AlgoChoice::Auto)).iter().skip(1) {
        s.push_str(&format!("# {l}\n"));
    }
    s.push_str(&format!(
        "# cclrun --compare: {} {} {} on {n} MPI processes; time (us) = {} over {} iterations of the slowest rank; busbw (GB/s) as nccl-tests; best = our fastest; ratio = best time / library time (< 1: ours faster); #wrong summed over every rank and column\n",
        p.title(),
        base.dtype.name(),
        base.redop.name(),
        setup.stat.name(),
        setup.iters
    ));
    let mut head = format!("#{:>11}", "size");
    let mut units = format!("#{:>11}", "(B)");
    for c in &setup.choices {
        head.push_str(&format!(" {:>18}", c.name()));
        units.push_str(&format!(" {:>9} {:>8}", "time", "busbw"));
    }
    head.push_str(&format!(
        " {:>8} {:>7} {:>6} {:>6}",
        "best", "ratio", "auto", "#wrong"
    ));
    s.push_str(&head);
    s.push('\n');
    s.push_str(&units);
    s.push('\n');
    for (i, &b) in setup.sizes.iter().enumerate() {
        let mut line = format!("{b:>12}");
        let mut best: Option<(usize, f64)> = None;
        let mut wrong = 0;
        let mut auto = String::from("-");
        for (k, c) in setup.choices.iter().enumerate() {
            let r = row(b, &results[k][i], p, n, vec![]);
            line.push_str(&format!(
                " {:>9} {:>8.2}",
                report::time_field(r.time_us),
                r.busbw_gbps
            ));
            wrong += results[k][i].wrong;
            match c {
                Choice::Ours(AlgoChoice::Auto) => auto = results[k][i].algorithm.clone(),
                Choice::Ours(_) => {
                    if best.is_none_or(|(_, t)| r.time_us < t) {
                        best = Some((k, r.time_us));
                    }
                }
                Choice::Library => {}
            }
        }
        if best.is_none() {
            best = setup
                .choices
                .iter()
                .position(|c| matches!(c, Choice::Ours(_)))
                .map(|k| (k, results[k][i].time_us));
        }
        let (bname, ratio) = match (best, lib) {
            (Some((k, t)), Some(l)) => (
                results[k][i].algorithm.clone(),
                format!("{:.2}", t / results[l][i].time_us),
            ),
            (Some((k, _)), None) => (results[k][i].algorithm.clone(), "-".into()),
            _ => ("-".into(), "-".into()),
        };
        line.push_str(&format!(" {bname:>8} {ratio:>7} {auto:>6} {wrong:>6}"));
        s.push_str(&line);
        s.push('\n');
    }
    s
}

fn main() {
    let code = {
        let Some(universe) = mpi::initialize() else {
            eprintln!("cclrun: MPI could not be initialised (run it as mpirun -np N cclrun ...)");
            std::process::exit(2);
        };
        let world = universe.world();
        let rank = world.rank();
        match Cli::try_parse() {
            Ok(cli) => run(&world, &cli),
            Err(e) => {
                use clap::error::ErrorKind;
                let info = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
                if rank == 0 {
                    if info {
                        let _ = e.print();
                    } else {
                        let text = e.render().to_string();
                        let first = text
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("bad arguments");
                        eprintln!("cclrun: {}", first.trim_start_matches("error: "));
                    }
                }
                if info {
                    0
                } else {
                    2
                }
            }
        }
        // `universe` drops here: MPI_Finalize.
    };
    std::process::exit(code);
}
