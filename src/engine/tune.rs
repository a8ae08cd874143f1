//! Tuning you can paste: the model's choice for each message size of a
//! sweep ([`Plan::headline`] with `algo=auto`, the one definition of auto)
//! written in the syntax users hand-write for the machine's library, and
//! validators of each syntax from its documentation.
//!
//! - **NCCL environment** (`NCCL_ALGO`, `NCCL_PROTO`): NVIDIA/nccl
//!   `src/graph/tuning.cc` `parseList`: `[<list>;]<func>:<list>;...`, a list
//!   is comma-separated names (case-insensitive) optionally led by `^`
//!   (everything but); only the first entry may lack a `<func>:` prefix.
//!   Functions `Broadcast, Reduce, AllGather, ReduceScatter, AllReduce`,
//!   algorithms `Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree,
//!   PAT`, protocols `LL, LL128, Simple` (`src/init.cc`). These variables are
//!   global: they cannot change with the message size. What we write
//!   restricts each collective to the algorithms (protocols) the model picks
//!   anywhere in the sweep, and leaves the per-size choice to NCCL.
//! - **NCCL tuner plugin CSV** (NVIDIA/nccl `plugins/tuner/example`,
//!   README and `nccl_tuner.conf`): one line per size range,
//!   `collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]`,
//!   `#` comments; collectives `broadcast, reduce, allgather,
//!   reducescatter, allreduce`; algorithms `tree, ring, collnet_direct,
//!   collnet_chain, nvls, nvls_tree, pat`; protocols `ll, ll128, simple`;
//!   `-1` = any / NCCL's default. This is how per-size-range choices are
//!   expressed (`NCCL_TUNER_CONFIG_FILE` points the plugin at the file).
//! - **HCCL** (`HCCL_ALGO`, Huawei CANN environment-variable reference,
//!   "HCCL_ALGO"): `level0:NA;level1:<algo>` for every op, or
//!   `<op>=level0:NA;level1:<algo>` joined by `/`; ops `allgather,
//!   reducescatter, allreduce, broadcast, reduce, scatter, alltoall`;
//!   level1 (between servers) `ring, H-D_R, NHR, NHR_V1, NB, AHC, pipeline,
//!   pairwise`; level0 (inside a server) only `NA`. One algorithm per op,
//!   no size ranges, and nothing to set on one server.
//!
//! The other way round, [`compare_tuner`] reads a tuner file someone has
//! (NCCL's example tuner config or performance data, HCCL's tuner-plugin
//! rules: [`tuner`]) as what it makes the library run at each size, beside
//! the model's recommendation: `cclsim tuner --op` and the page's tuner
//! card.

use super::algorithm::Algorithm;
use super::collective::Primitive;
use super::config::{AlgoChoice, Config};
use super::formats::tuner::{self, Bounds, Rule, Source, TunerError, TunerTable};
use super::library::nccl::{self, Func, NcclAlgo, Protocol, Tuning};
use super::library::{Call, Library};
use super::plan::Plan;
use super::topology::Topology;
use super::units::format_bytes;
use serde::{Deserialize, Serialize};

/// What to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// `NCCL_ALGO` / `NCCL_PROTO` lines.
    NcclEnv,
    /// The example tuner plugin's CSV.
    NcclTunerCsv,
    /// `HCCL_ALGO`.
    Hccl,
}

impl Format {
    /// Parses `nccl-env`, `nccl-tuner-csv`, `hccl`.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "nccl-env" => Some(Format::NcclEnv),
            "nccl-tuner-csv" => Some(Format::NcclTunerCsv),
            "hccl" => Some(Format::Hccl),
            _ => None,
        }
    }
    /// The library whose syntax it is.
    pub fn library(self) -> Library {
        match self {
            Format::Hccl => Library::Hccl,
            _ => Library::Nccl,
        }
    }
}

/// The model's choice at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// Message size S, bytes.
    pub bytes: u64,
    /// The algorithm auto runs.
    pub algorithm: Algorithm,
    /// NCCL's algorithm, where its tuning model picks one (NVLS is drawn
    /// as another of our algorithms).
    pub nccl: Option<NcclAlgo>,
    /// NCCL's protocol, where its tuning model picks one.
    pub protocol: Option<Protocol>,
    /// Predicted time, µs.
    pub time_us: f64,
}

/// The headline label every output carries.
pub const LABEL: &str = "the model's recommendation for the modelled machine";

/// The model's choice at each size: `config` with `algo=auto` and each
/// `bytes` in turn.
///
/// Errors: the plan's error, as a sentence.
pub fn sweep(config: &Config, sizes: &[u64]) -> Result<Vec<Choice>, String> {
    let mut out = Vec::with_capacity(sizes.len());
    for &b in sizes {
        let mut c = config.clone();
        c.algo = AlgoChoice::Auto;
        c.bytes = b;
        let p = Plan::headline(&c).map_err(|e| e.to_string())?;
        // NCCL's own pick: the plan's prediction where there is one, else
        // its tuning model on the plan's machine.
        let (nccl, protocol) = match &p.prediction {
            Some(a) => (a.algo, a.protocol),
            None if p.topology.library == Library::Nccl => {
                let call = Call {
                    topology: &p.topology,
                    primitive: c.primitive,
                    ranks: c.ranks,
                    bytes: b,
                    nvls_ok: nccl::nvls_supported(c.primitive, c.dtype, c.redop),
                    elem_bytes: c.dtype.size_bytes() as u64,
                };
                let hw = nccl::hardware_of_call(&call);
                Func::of(c.primitive)
                    .and_then(|f| {
                        Tuning::with(&hw, f, c.ranks, call.nodes().len(), call.nvls_ok).pick(b)
                    })
                    .map_or((None, None), |(e, _)| (Some(e.algo), Some(e.protocol)))
            }
            None => (None, None),
        };
        out.push(Choice {
            bytes: b,
            algorithm: p.algorithm,
            nccl,
            protocol,
            time_us: p.estimate.time_us,
        });
    }
    Ok(out)
}

/// NCCL's name of a choice (`NCCL_ALGO` spelling): its tuning model's pick,
/// else our algorithm's NCCL name if NCCL has it.
fn nccl_name(c: &Choice) -> Option<&'static str> {
    c.nccl
        .map(NcclAlgo::name)
        .or_else(|| nccl_algo(c.algorithm))
}

/// The tuner CSV's spelling of a choice's algorithm.
fn nccl_csv_name(c: &Choice) -> Option<String> {
    c.nccl
        .map(|a| a.csv_name().to_string())
        .or_else(|| nccl_algo(c.algorithm).map(str::to_ascii_lowercase))
}

impl Choice {
    /// `algorithm/protocol` in the tuner CSV's spelling (`ring/ll`,
    /// `nvls/simple`; `simple` where the model picks no protocol), `None`
    /// where the choice is not an NCCL algorithm.
    pub fn tuner_name(&self) -> Option<String> {
        let a = nccl_csv_name(self)?;
        let p = self
            .protocol
            .map_or("simple".to_string(), |p| p.name().to_ascii_lowercase());
        Some(format!("{a}/{p}"))
    }
}

/// NCCL's name of our algorithm (`NCCL_ALGO` spelling), if NCCL has it.
pub fn nccl_algo(a: Algorithm) -> Option<&'static str> {
    match a {
        Algorithm::Ring => Some("Ring"),
        Algorithm::Dbtree => Some("Tree"),
        Algorithm::Nb => Some("PAT"),
        _ => None,
    }
}

/// NCCL's function name (`NCCL_ALGO` prefix), for the collectives it tunes.
pub fn nccl_func(p: Primitive) -> Option<&'static str> {
    match p {
        Primitive::Broadcast => Some("Broadcast"),
        Primitive::Reduce => Some("Reduce"),
        Primitive::AllGather => Some("AllGather"),
        Primitive::ReduceScatter => Some("ReduceScatter"),
        Primitive::AllReduce => Some("AllReduce"),
        _ => None,
    }
}

fn proto_env(p: Protocol) -> &'static str {
    match p {
        Protocol::Ll => "LL",
        Protocol::Ll128 => "LL128",
        Protocol::Simple => "Simple",
    }
}

/// HCCL's level1 name of our algorithm, if `HCCL_ALGO` can select it.
pub fn hccl_level1(a: Algorithm) -> Option<&'static str> {
    match a {
        Algorithm::Hier | Algorithm::Ring => Some("ring"),
        Algorithm::Rhd => Some("H-D_R"),
        Algorithm::Nhr | Algorithm::HierNhr => Some("NHR"),
        Algorithm::Nb => Some("NB"),
        Algorithm::Pipeline => Some("pipeline"),
        Algorithm::Pairwise => Some("pairwise"),
        _ => None,
    }
}

/// Consecutive sizes with the same choice, as byte ranges: `(min, max,
/// choice)`; the first starts at 0, each ends at its last size, the last
/// at `u64::MAX`: the plugin reads `max_bytes` with `strtoull` into a
/// `size_t` (`plugin.c` `loadConfig`), so that line holds every larger
/// size (4294967295, 2^32 − 1, would leave calls of 4 GiB and more to
/// NCCL's own choice).
pub fn ranges(choices: &[Choice]) -> Vec<(u64, u64, &Choice)> {
    let mut v: Vec<(u64, u64, &Choice)> = Vec::new();
    for c in choices {
        match v.last_mut() {
            Some(last)
                if last.2.algorithm == c.algorithm
                    && last.2.nccl == c.nccl
                    && last.2.protocol == c.protocol =>
            {
                last.1 = c.bytes
            }
            _ => {
                let lo = v.last().map_or(0, |l| l.1 + 1);
                v.push((lo, c.bytes, c));
            }
        }
    }
    if let Some(last) = v.last_mut() {
        last.1 = u64::MAX;
    }
    v
}

/// The tuning text of `config` over `sizes`: [`sweep`] on its machine
/// ([`super::plan::machine`]), then [`render`] with the machine's library
/// and node count. What `cclsim tune` prints and the page's tuning card
/// shows.
///
/// Errors: the machine's or the plan's error, or [`render`]'s, as a
/// sentence.
pub fn text(config: &Config, format: Format, sizes: &[u64]) -> Result<String, String> {
    let topo = super::plan::machine(config).map_err(|e| e.to_string())?;
    let choices = sweep(config, sizes)?;
    let nodes = topo.nodes_of(config.ranks).len();
    render(format, config, topo.library, nodes, &choices)
}

/// Writes the choices in `format`'s syntax, commented with the per-size
/// table and [`LABEL`].
///
/// Errors: a sentence when the format is not the machine's library's, or
/// the library cannot set this collective that way.
pub fn render(
    format: Format,
    config: &Config,
    library: Library,
    nodes: usize,
    choices: &[Choice],
) -> Result<String, String> {
    if library != format.library() {
        return Err(wrong_library(format, config, library));
    }
    let mut t = choices_table(config, library, choices);
    match format {
        Format::NcclEnv | Format::NcclTunerCsv => {
            nccl_lines(format, config, nodes, choices, &mut t)?
        }
        Format::Hccl => hccl_lines(config, nodes, choices, &mut t)?,
    }
    Ok(t)
}

/// The sentence refusing `format` on a machine that runs `library`: a
/// file in another library's syntax would be silently ignored, so it names
/// the formats that do apply.
fn wrong_library(format: Format, config: &Config, library: Library) -> String {
    format!(
        "--format {}: the machine {} runs {}, not {}; use --format {}",
        match format {
            Format::NcclEnv => "nccl-env",
            Format::NcclTunerCsv => "nccl-tuner-csv",
            Format::Hccl => "hccl",
        },
        config.topo,
        library.title(),
        format.library().title(),
        if library == Library::Hccl {
            "hccl"
        } else {
            "nccl-env or nccl-tuner-csv"
        }
    )
}

/// The comment every format starts with: [`LABEL`], what was modelled, and
/// the choice and predicted time at each size, so that a pasted file still
/// says where its settings came from even where the syntax cannot hold
/// per-size choices.
fn choices_table(config: &Config, library: Library, choices: &[Choice]) -> String {
    let mut t = format!(
        "# {LABEL}: {} on {} ranks of {} ({}), {} per size\n",
        config.primitive.title(),
        config.ranks,
        config.topo,
        library.title(),
        config.dtype.name()
    );
    for c in choices {
        t.push_str(&format!(
            "#   {:>10}  {}{}  {:.2} us\n",
            format_bytes(c.bytes),
            c.nccl.map_or(c.algorithm.name(), NcclAlgo::name),
            c.protocol
                .map(|p| format!("/{}", p.name()))
                .unwrap_or_default(),
            c.time_us
        ));
    }
    t
}

/// Appends the NCCL environment or tuner CSV lines. Both only cover
/// NCCL's tuned collectives and its own algorithms, so either refusal
/// comes before anything is written for a size.
fn nccl_lines(
    format: Format,
    config: &Config,
    nodes: usize,
    choices: &[Choice],
    t: &mut String,
) -> Result<(), String> {
    let op = config.primitive;
    let Some(func) = nccl_func(op) else {
        return Err(format!("--op {}: NCCL_ALGO and the tuner plugin cover allreduce, allgather, reducescatter, broadcast and reduce; NCCL runs {} as point-to-point sends, which they do not select", op.name(), op.title()));
    };
    for c in choices {
        if nccl_name(c).is_none() {
            return Err(format!(
                "at {}: the model picks {}, which is not an NCCL algorithm",
                format_bytes(c.bytes),
                c.algorithm.name()
            ));
        }
    }
    if format == Format::NcclEnv {
        nccl_env_lines(func, choices, t);
    } else {
        nccl_csv_lines(func, config, nodes, choices, t);
    }
    Ok(())
}

/// `NCCL_ALGO` / `NCCL_PROTO` for `func`. The variables are global, so
/// they list every algorithm (protocol) the model picks anywhere in the
/// sweep, in first-picked order, and leave the per-size choice to NCCL.
fn nccl_env_lines(func: &str, choices: &[Choice], t: &mut String) {
    let mut algos: Vec<&str> = Vec::new();
    let mut protos: Vec<&str> = Vec::new();
    // Every choice is an NCCL algorithm (checked by the caller).
    for (c, a) in choices.iter().filter_map(|c| Some((c, nccl_name(c)?))) {
        if !algos.contains(&a) {
            algos.push(a);
        }
        if let Some(p) = c.protocol {
            if !protos.contains(&proto_env(p)) {
                protos.push(proto_env(p));
            }
        }
    }
    t.push_str("# NCCL_ALGO / NCCL_PROTO are global (no size ranges): these restrict\n# NCCL to what the model picks anywhere in the sweep and leave the per-size\n# choice to NCCL's tuner; for per-size ranges use --format nccl-tuner-csv.\n");
    t.push_str(&format!("NCCL_ALGO={func}:{}\n", algos.join(",")));
    if protos.is_empty() {
        t.push_str("# NCCL_PROTO: the model does not pick a protocol for this collective\n");
    } else {
        t.push_str(&format!("NCCL_PROTO={func}:{}\n", protos.join(",")));
    }
}

/// The example tuner plugin's CSV for `func`: one line per run of sizes
/// with the same choice ([`ranges`]), since the plugin matches a call by
/// its byte range, node and rank count.
fn nccl_csv_lines(func: &str, config: &Config, nodes: usize, choices: &[Choice], t: &mut String) {
    t.push_str(
        "# NCCL example tuner plugin (plugins/tuner/example), NCCL_TUNER_CONFIG_FILE=<this file>\n",
    );
    t.push_str("# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n");
    if choices.iter().any(|c| c.protocol.is_none()) {
        t.push_str("# protocol: the model does not pick one for this collective; simple is written (the plugin's default)\n");
    }
    for (lo, hi, c) in ranges(choices) {
        let Some(a) = nccl_csv_name(c) else {
            continue; // Not an NCCL algorithm: refused by the caller.
        };
        let p = c
            .protocol
            .map_or("simple", |p| p.name())
            .to_ascii_lowercase();
        t.push_str(&format!(
            "{},{lo},{hi},{a},{p},-1,{nodes},{},-1,-1\n",
            func.to_ascii_lowercase(),
            config.ranks
        ));
    }
}

/// Appends the `HCCL_ALGO` line. It sets only the algorithm between
/// servers, one per op, so on one server it writes a note instead, and
/// otherwise pins the algorithm chosen at the most sizes, listing the
/// others when the choice changes with size.
fn hccl_lines(
    config: &Config,
    nodes: usize,
    choices: &[Choice],
    t: &mut String,
) -> Result<(), String> {
    let op = config.primitive;
    let hop = hccl_op(op)?;
    if nodes <= 1 {
        t.push_str("# HCCL_ALGO sets the algorithm between servers (level1; level0 inside a\n# server is only NA): on one server there is nothing to set. HCCL picks\n# its intra-server algorithm itself.\n");
        return Ok(());
    }
    let count = hccl_counts(choices)?;
    let Some(best) = count.iter().max_by_key(|x| x.1) else {
        return Err("the sweep has no sizes: nothing to recommend".into());
    };
    if count.len() > 1 {
        t.push_str("# HCCL_ALGO holds one algorithm per op, no size ranges. The model's choice\n# changes with size:\n");
        for (a, k, lo, hi) in &count {
            t.push_str(&format!(
                "#   {a}: {k} sizes ({}..{})\n",
                format_bytes(*lo),
                format_bytes(*hi)
            ));
        }
        t.push_str(&format!("# The line pins {}, chosen at the most sizes; leaving HCCL_ALGO unset\n# lets HCCL switch by size itself.\n", best.0));
    }
    t.push_str(&format!(
        "HCCL_ALGO=\"{hop}=level0:NA;level1:{}\"\n",
        best.0
    ));
    Ok(())
}

/// `HCCL_ALGO`'s name of `op`, refused for the ops it cannot set.
fn hccl_op(op: Primitive) -> Result<&'static str, String> {
    match op {
        Primitive::AllGather
        | Primitive::ReduceScatter
        | Primitive::AllReduce
        | Primitive::Broadcast
        | Primitive::Reduce
        | Primitive::Scatter
        | Primitive::AlltoAll => Ok(op.name()),
        _ => Err(format!(
            "--op {}: HCCL_ALGO sets allgather, reducescatter, allreduce, broadcast, reduce, scatter and alltoall",
            op.name()
        )),
    }
}

/// Each level1 algorithm the model picks, in first-picked order: `(name,
/// sizes, first size, last size)`, so the most-picked one can be pinned
/// and the others listed. A pick `HCCL_ALGO` cannot select is refused.
fn hccl_counts(choices: &[Choice]) -> Result<Vec<(&'static str, usize, u64, u64)>, String> {
    let mut count: Vec<(&'static str, usize, u64, u64)> = Vec::new();
    for c in choices {
        let Some(a) = hccl_level1(c.algorithm) else {
            return Err(format!(
                "at {}: the model picks {}, which HCCL_ALGO cannot select",
                format_bytes(c.bytes),
                c.algorithm.name()
            ));
        };
        match count.iter_mut().find(|x| x.0 == a) {
            Some(x) => {
                x.1 += 1;
                x.3 = c.bytes;
            }
            None => count.push((a, 1, c.bytes, c.bytes)),
        }
    }
    Ok(count)
}

// ------------------------------------------------- a tuner file compared

/// Whom a tuner file is asked about: one collective on one communicator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TunerQuery<'a> {
    /// The collective.
    pub op: Primitive,
    /// Ranks of the communicator; `None`: the model configuration's.
    pub ranks: Option<usize>,
    /// Nodes (HCCL: servers); `None`: the model machine's, else unknown
    /// (a rule bounding them then does not match).
    pub nodes: Option<u64>,
    /// Element type, our name or HCCL's (`fp32`, `bf16`, `bfloat16`, ...).
    pub dtype: &'a str,
    /// The configuration whose model's recommendation is shown beside;
    /// its collective is the query's `op`.
    pub model: Option<&'a Config>,
}

impl<'a> TunerQuery<'a> {
    /// `config`'s collective, ranks and element type, beside the model's
    /// recommendation for its machine (a [`sweep`]: at thousands of ranks,
    /// seconds).
    pub fn modelled(config: &'a Config) -> TunerQuery<'a> {
        TunerQuery {
            op: config.primitive,
            ranks: None,
            nodes: None,
            dtype: config.dtype.name(),
            model: Some(config),
        }
    }

    /// `config`'s collective, ranks and element type on `machine` (its
    /// node count), without the model: the file's side alone, as cheap as
    /// matching its rules.
    pub fn file_only(config: &'a Config, machine: &Topology) -> TunerQuery<'a> {
        TunerQuery {
            op: config.primitive,
            ranks: Some(config.ranks),
            nodes: Some(machine.nodes_of(config.ranks).len() as u64),
            dtype: config.dtype.name(),
            model: None,
        }
    }
}

/// Why the file's choices and the model's are shown side by side but not
/// compared name for name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Apart {
    /// No model: only the file's side.
    NoModel,
    /// The file is read by one library, the modelled machine runs another.
    OtherLibrary {
        /// The library that reads the file.
        file: Library,
        /// The library the machine runs.
        machine: Library,
    },
    /// HCCL's rules name an engine, an executor and a template; the model
    /// names one of our algorithms.
    HcclNames,
}

/// One size of a [`TunerComparison`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunerRow {
    /// Message size, bytes.
    pub bytes: u64,
    /// The rule the library applies at this size (`None`: no rule
    /// matches, the library makes its own choice).
    pub rule: Option<Rule>,
    /// The model's choice at this size, if a model was asked.
    pub model: Option<Choice>,
    /// The model's choice in the file's spelling ([`Choice::tuner_name`]),
    /// else our algorithm's name.
    pub model_name: Option<String>,
    /// Does the rule name exactly the model's choice? `None` without a
    /// model; `Some(false)` where no rule matches.
    pub same: Option<bool>,
}

/// What a tuner file makes the library run at each size, beside the
/// model's own recommendation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunerComparison {
    /// The file read.
    pub table: TunerTable,
    /// The collective.
    pub op: Primitive,
    /// Ranks matched against the rules.
    pub ranks: usize,
    /// Nodes (servers) matched against the rules, if known.
    pub nodes: Option<u64>,
    /// Element type matched against the rules, as asked.
    pub dtype: String,
    /// The modelled machine (its topology name) and its library, if a
    /// model was asked.
    pub machine: Option<(String, Library)>,
    /// Why the rows' `same` is not a verdict, if it is not.
    pub apart: Option<Apart>,
    /// One row per size, in the order asked.
    pub rows: Vec<TunerRow>,
}

/// Why a tuner file cannot be compared.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// The file cannot be read ([`tuner::parse`]).
    #[error(transparent)]
    File(#[from] TunerError),
    /// Neither the query nor a model configuration gives the rank count.
    #[error("the file's rules depend on the rank count: give it, or a machine to model")]
    NoRanks,
    /// The model's side failed (its machine or a plan), as a sentence.
    #[error("{0}")]
    Model(String),
}

/// The library that reads a tuner file of `source`.
pub fn tuner_library(source: Source) -> Library {
    match source {
        Source::HcclRules => Library::Hccl,
        Source::NcclConfig | Source::NcclPerformance => Library::Nccl,
    }
}

/// HCCL's name of our element type where it differs (`plugin.cpp`
/// `g_dataTypeMap` has `bfloat16`/`bfp16`, not `bf16`); other names as
/// given.
fn hccl_dtype(dtype: &str) -> &str {
    match dtype {
        "bf16" => "bfloat16",
        d => d,
    }
}

/// [`compare_table`] of the tuner file `text` ([`tuner::parse`]): what
/// the page's tuner card shows.
///
/// Errors: [`CompareError`].
pub fn compare_tuner(
    text: &str,
    query: &TunerQuery,
    sizes: &[u64],
) -> Result<TunerComparison, CompareError> {
    let table = tuner::parse(text)?;
    compare_table(&table, query, sizes)
}

/// What `table` makes the library run at each of `sizes` for `query`
/// ([`TunerTable::choice`]), beside the model's recommendation ([`sweep`]
/// of the query's model configuration with `algo=auto`), with whether the
/// two name the same thing. What `cclsim tuner --op` prints
/// ([`TunerComparison::render`]) and the page's tuner card shows.
///
/// Errors: [`CompareError::NoRanks`], [`CompareError::Model`].
pub fn compare_table(
    table: &TunerTable,
    query: &TunerQuery,
    sizes: &[u64],
) -> Result<TunerComparison, CompareError> {
    let model = match query.model {
        None => None,
        Some(c) => {
            let machine =
                super::plan::machine(c).map_err(|e| CompareError::Model(e.to_string()))?;
            let nodes = machine.nodes_of(c.ranks).len() as u64;
            let choices = sweep(c, sizes).map_err(CompareError::Model)?;
            Some((c, machine.library, nodes, choices))
        }
    };
    let ranks = query
        .ranks
        .or(model.as_ref().map(|m| m.0.ranks))
        .ok_or(CompareError::NoRanks)?;
    let nodes = query.nodes.or(model.as_ref().map(|m| m.2));
    let file_library = tuner_library(table.source);
    let apart = match &model {
        None => Some(Apart::NoModel),
        Some((_, lib, _, _)) if *lib != file_library => Some(Apart::OtherLibrary {
            file: file_library,
            machine: *lib,
        }),
        Some(_) if table.source == Source::HcclRules => Some(Apart::HcclNames),
        Some(_) => None,
    };
    let rows = sizes
        .iter()
        .enumerate()
        .map(|(k, &bytes)| {
            let rule = table
                .choice(&tuner::Call {
                    op: query.op,
                    bytes,
                    ranks: ranks as u64,
                    nodes,
                    dtype: Some(hccl_dtype(query.dtype)),
                })
                .cloned();
            let choice = model.as_ref().and_then(|m| m.3.get(k)).cloned();
            let model_name = choice.as_ref().map(|c| {
                c.tuner_name()
                    .unwrap_or_else(|| c.algorithm.name().to_string())
            });
            let same = model_name
                .as_ref()
                .map(|n| rule.as_ref().is_some_and(|r| &r.choice == n));
            TunerRow {
                bytes,
                rule,
                model: choice,
                model_name,
                same,
            }
        })
        .collect();
    Ok(TunerComparison {
        table: table.clone(),
        op: query.op,
        ranks,
        nodes,
        dtype: query.dtype.to_string(),
        machine: model.map(|m| (m.0.topo.clone(), m.1)),
        apart,
        rows,
    })
}

/// Sizes next to one another that read the same: `rows[first..=last]`
/// all match the same rule (or none) and the model picks the same there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Index of its first row.
    pub first: usize,
    /// Index of its last row.
    pub last: usize,
}

impl TunerComparison {
    /// The rows as runs of sizes that read the same (one per row when
    /// every size differs from the next), in order.
    pub fn runs(&self) -> Vec<Run> {
        let mut out: Vec<Run> = Vec::new();
        for (k, r) in self.rows.iter().enumerate() {
            match out.last_mut() {
                Some(run)
                    if {
                        let p = &self.rows[run.last];
                        p.rule.as_ref().map(|x| x.line) == r.rule.as_ref().map(|x| x.line)
                            && p.model_name == r.model_name
                    } =>
                {
                    run.last = k
                }
                _ => out.push(Run { first: k, last: k }),
            }
        }
        out
    }

    /// The communicators the file has rules for, `(collective, ranks,
    /// nodes)` once each in file order: what to set the page to when no
    /// rule matches.
    pub fn scopes(&self) -> Vec<(Primitive, Bounds, Bounds)> {
        let mut out: Vec<(Primitive, Bounds, Bounds)> = Vec::new();
        for r in &self.table.rules {
            let s = (r.op, r.ranks, r.nodes);
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// The per-size view as text: a header naming the call and the model,
    /// then one line per size with the file's rule (and its line), the
    /// model's choice and whether they are the same.
    pub fn render(&self) -> String {
        let mut t = format!(
            "# per size: {} on {} ranks ({} node(s)), {}: the file's rule{}\n",
            self.op.name(),
            self.ranks,
            self.nodes.map_or("?".to_string(), |n| n.to_string()),
            self.dtype,
            self.machine
                .as_ref()
                .map(|(topo, _)| format!(" beside {LABEL} for {topo}"))
                .unwrap_or_default()
        );
        t.push_str(&format!(
            "# {:>10}  {:<30} {:<16} {}\n",
            "size", "file (line)", "model", "same"
        ));
        for r in &self.rows {
            let file = r
                .rule
                .as_ref()
                .map_or("no rule: the library's own choice".to_string(), |r| {
                    format!("{} (line {})", r.choice, r.line)
                });
            let theirs = r.model_name.clone().unwrap_or_default();
            let same = match r.same {
                None => "",
                Some(true) => "yes",
                Some(false) => "no",
            };
            t.push_str(&format!(
                "{:>12}  {file:<30} {theirs:<16} {same}\n",
                format_bytes(r.bytes)
            ));
        }
        t
    }
}

// ------------------------------------------------------------- validators

const NCCL_FUNCS: [&str; 5] = [
    "Broadcast",
    "Reduce",
    "AllGather",
    "ReduceScatter",
    "AllReduce",
];
const NCCL_ALGOS: [&str; 7] = [
    "Tree",
    "Ring",
    "CollNetDirect",
    "CollNetChain",
    "NVLS",
    "NVLSTree",
    "PAT",
];
const NCCL_PROTOS: [&str; 3] = ["LL", "LL128", "Simple"];

/// Checks an `NCCL_ALGO` (`algos = true`) or `NCCL_PROTO` value against
/// `parseList`'s grammar; returns `(prefix, negated, names)` per entry.
///
/// Errors: a sentence naming the token.
pub fn parse_nccl_list(
    value: &str,
    algos: bool,
) -> Result<Vec<(Option<String>, bool, Vec<String>)>, String> {
    let elems: &[&str] = if algos { &NCCL_ALGOS } else { &NCCL_PROTOS };
    let mut out = Vec::new();
    for (i, entry) in value.split(';').enumerate() {
        if entry.is_empty() {
            return Err(format!("empty entry in {value:?}"));
        }
        let (prefix, list) = match entry.split_once(':') {
            Some((p, l)) => (Some(p), l),
            None if i == 0 => (None, entry),
            None => {
                return Err(format!(
                    "entry {entry:?}: all entries except the first must have a prefix"
                ))
            }
        };
        if let Some(p) = prefix {
            if !NCCL_FUNCS.iter().any(|f| f.eq_ignore_ascii_case(p)) {
                return Err(format!("unrecognized prefix token {p:?}"));
            }
        }
        let (neg, list) = match list.strip_prefix('^') {
            Some(l) => (true, l),
            None => (false, list),
        };
        let mut names = Vec::new();
        for e in list.split(',') {
            if !elems.iter().any(|x| x.eq_ignore_ascii_case(e)) {
                return Err(format!("unrecognized element token {e:?}"));
            }
            names.push(e.to_string());
        }
        out.push((prefix.map(str::to_string), neg, names));
    }
    Ok(out)
}

/// Checks an example tuner plugin CSV: 8 to 10 fields per non-comment
/// line, known collective / algorithm / protocol, integer sizes with
/// `min <= max`, integer or `-1` counts. Returns the rows' `(collective,
/// min, max, algorithm, protocol)`.
///
/// Errors: a sentence naming the line and field.
#[allow(clippy::type_complexity)]
pub fn parse_tuner_csv(text: &str) -> Result<Vec<(String, u64, u64, String, String)>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = l.split(',').collect();
        if !(8..=10).contains(&f.len()) {
            return Err(format!(
                "line {}: {} fields, expected 8 to 10",
                i + 1,
                f.len()
            ));
        }
        if ![
            "broadcast",
            "reduce",
            "allgather",
            "reducescatter",
            "allreduce",
        ]
        .contains(&f[0])
        {
            return Err(format!("line {}: collective_type {:?}", i + 1, f[0]));
        }
        let num = |k: usize| -> Result<u64, String> {
            f[k].parse::<u64>().map_err(|_| {
                format!(
                    "line {}: field {} {:?} is not a byte count",
                    i + 1,
                    k + 1,
                    f[k]
                )
            })
        };
        let (lo, hi) = (num(1)?, num(2)?);
        if lo > hi {
            return Err(format!("line {}: min_bytes {lo} > max_bytes {hi}", i + 1));
        }
        if !super::formats::tuner::NCCL_ALGOS.contains(&f[3]) {
            return Err(format!("line {}: algorithm {:?}", i + 1, f[3]));
        }
        if !super::formats::tuner::NCCL_PROTOS.contains(&f[4]) {
            return Err(format!("line {}: protocol {:?}", i + 1, f[4]));
        }
        for (k, v) in f.iter().enumerate().skip(5) {
            let ok = v.parse::<i64>().is_ok_and(|x| x == -1 || x >= 0);
            if !ok {
                return Err(format!(
                    "line {}: field {} {v:?} is not a count or -1",
                    i + 1,
                    k + 1
                ));
            }
        }
        rows.push((f[0].to_string(), lo, hi, f[3].to_string(), f[4].to_string()));
    }
    Ok(rows)
}

/// Checks an `HCCL_ALGO` value: `level0:NA;level1:<algo>[;level2:<algo>]`
/// or `<op>=...` entries joined by `/`. Returns `(op, level1)` per entry
/// (`op` None for the global form).
///
/// Errors: a sentence naming the token.
pub fn parse_hccl_algo(value: &str) -> Result<Vec<(Option<String>, String)>, String> {
    const OPS: [&str; 7] = [
        "allgather",
        "reducescatter",
        "allreduce",
        "broadcast",
        "reduce",
        "scatter",
        "alltoall",
    ];
    const L1: [&str; 8] = [
        "ring", "H-D_R", "NHR", "NHR_V1", "NB", "AHC", "pipeline", "pairwise",
    ];
    let levels = |s: &str| -> Result<String, String> {
        let parts: Vec<&str> = s.split(';').collect();
        if parts.len() < 2 || parts[0] != "level0:NA" {
            return Err(format!("{s:?}: expected level0:NA;level1:<algo>"));
        }
        let Some(a) = parts[1].strip_prefix("level1:") else {
            return Err(format!("{:?}: expected level1:<algo>", parts[1]));
        };
        if !L1.contains(&a) {
            return Err(format!("level1 {a:?}: expected one of {}", L1.join(", ")));
        }
        Ok(a.to_string())
    };
    if !value.contains('=') {
        return Ok(vec![(None, levels(value)?)]);
    }
    let mut out = Vec::new();
    for e in value.split('/') {
        let Some((op, rest)) = e.split_once('=') else {
            return Err(format!("{e:?}: expected <op>=level0:NA;level1:<algo>"));
        };
        if !OPS.contains(&op) {
            return Err(format!("op {op:?}: expected one of {}", OPS.join(", ")));
        }
        out.push((Some(op.to_string()), levels(rest)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators_accept_the_documented_examples_and_refuse_typos() {
        // tuning.cc's own examples.
        assert!(parse_nccl_list(
            "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring",
            true
        )
        .is_ok());
        assert!(parse_nccl_list("LL,Simple;allreduce:^LL", false).is_ok());
        assert!(parse_nccl_list("^LL128;allreduce:LL128", false).is_ok());
        assert!(parse_nccl_list("allreduce:tree;ring", true).is_err());
        assert!(parse_nccl_list("allreduce:trees", true).is_err());
        assert!(parse_nccl_list("alltoall:ring", true).is_err());
        // The plugin's example conf lines.
        let conf = "# c\nallreduce,0,65536,tree,simple,2,1,-1,-1,1\nbroadcast,0,32768,tree,simple,-1,1,-1\nallgather,0,4294967295,ring,simple,4,2,-1\n";
        assert_eq!(parse_tuner_csv(conf).unwrap().len(), 3);
        assert!(parse_tuner_csv("allreduce,10,5,ring,simple,-1,1,8").is_err());
        assert!(parse_tuner_csv("allreduce,0,5,ring,fast,-1,1,8").is_err());
        // CANN's examples.
        assert_eq!(
            parse_hccl_algo("level0:NA;level1:H-D_R").unwrap(),
            vec![(None, "H-D_R".into())]
        );
        assert_eq!(
            parse_hccl_algo("alltoall=level0:NA;level1:pairwise/allreduce=level0:NA;level1:ring")
                .unwrap()
                .len(),
            2
        );
        assert!(parse_hccl_algo("level0:ring;level1:ring").is_err());
        assert!(parse_hccl_algo("alltoallv=level0:NA;level1:pairwise").is_err());
    }
}
