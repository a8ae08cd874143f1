//! Tuner files, read as "what this file makes the library run at each
//! size and rank count": a table of choices in matching order, not
//! measurements.
//!
//! - **NCCL example tuner config** (`NCCL_TUNER_CONFIG_FILE`, what `cclsim
//!   tune --format nccl-tuner-csv` writes): NVIDIA/nccl
//!   `plugins/tuner/example/plugin.c` `loadConfig` / `pluginGetCollInfo`:
//!   one line `collective,min_bytes,max_bytes,algorithm,protocol,channels,
//!   nNodes,nRanks[,numPipeOps[,regBuff]]`, `#` comments; fields are
//!   trimmed; lines of fewer than 8 fields are skipped, beyond 10 the
//!   extra ones ignored; an unknown collective is read as allreduce, an
//!   unknown algorithm as ring, an unknown protocol as simple (the parse
//!   functions' defaults); `-1` matches any node count, rank count, pipe
//!   ops or registration, and keeps NCCL's channel count. The first line
//!   whose collective, `min_bytes ≤ size ≤ max_bytes`, nodes, ranks, pipe
//!   ops and registration match wins (unless NCCL cannot run that
//!   algorithm and protocol there, when the next matching line is tried).
//! - **NCCL example tuner performance data** (`scripts/
//!   sample_performance_data.csv`, the input of `scripts/
//!   optimize_config.py`): measured rows `collective, size_bytes,
//!   algorithm, protocol, channels, nodes, ranks, pipeOps, regBuff, …,
//!   latency_us`. What they make NCCL run is the config the script writes
//!   by default: per (collective, nodes, ranks, pipeOps, regBuff) and
//!   size range the row of lowest `latency_us`; ranges per (nodes, ranks)
//!   from 0 to the midpoint between consecutive measured sizes, the last
//!   ending at the largest measured size; adjacent ranges with the same
//!   algorithm, protocol and channels merged; lines sorted by
//!   (collective, nodes, ranks, min_bytes).
//! - **HCCL tuner-plugin rules** (`HCCL_TUNER_CONFIG_FILE`, hicann/hccl
//!   `examples/06_tuner_plugin/plugin.cpp`): `{"version": 1, "op_types":
//!   {"allreduce": {"rules": [{"match": {...}, "engine", "executor",
//!   "template", "cost"}]}}}`. Within an op the first rule whose match
//!   holds wins (`MyGetCollInfo`); bounds are inclusive; `min_ranks`,
//!   `max_ranks` are `uint32` and `min_bytes`, `max_bytes` `size_t`, so
//!   4294967295 is 2^32 − 1 (4 GiB − 1 B for bytes), a bound like any
//!   other, not "unlimited". Any schema error (a missing required field, a
//!   name not in the plugin's lists, `min > max`, `version` not 1) and the
//!   plugin changes nothing at all (`configValid = 0`).

use super::columns::unquote;
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use thiserror::Error;

/// Largest tuner file read, bytes (HCCL's plugin reads at most 4 MiB,
/// `MAX_FILE_SIZE`).
pub const MAX_TUNER_BYTES: usize = 4 << 20;

/// Which file a table was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    /// NCCL's example tuner config (CSV lines).
    NcclConfig,
    /// NCCL's example tuner performance data (the optimizer's input).
    NcclPerformance,
    /// HCCL's tuner-plugin rules (JSON).
    HcclRules,
}

impl Source {
    /// What the file is, as a user would name it.
    pub fn title(self) -> &'static str {
        match self {
            Source::NcclConfig => {
                "NCCL example tuner config (plugins/tuner/example, NCCL_TUNER_CONFIG_FILE)"
            }
            Source::NcclPerformance => {
                "NCCL example tuner performance data (scripts/optimize_config.py input)"
            }
            Source::HcclRules => "HCCL tuner-plugin rules (HCCL_TUNER_CONFIG_FILE)",
        }
    }
}

/// An inclusive range of a count; `None` bounds are open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    /// Smallest value that matches.
    pub min: Option<u64>,
    /// Largest value that matches.
    pub max: Option<u64>,
}

impl Bounds {
    /// Any value.
    pub const ANY: Bounds = Bounds {
        min: None,
        max: None,
    };

    /// Exactly `v`, or any for NCCL's `-1`.
    fn exact_or_any(v: i64) -> Bounds {
        if v < 0 {
            Bounds::ANY
        } else {
            Bounds {
                min: Some(v as u64),
                max: Some(v as u64),
            }
        }
    }

    /// Does `v` lie in the range?
    pub fn holds(&self, v: u64) -> bool {
        self.min.is_none_or(|m| v >= m) && self.max.is_none_or(|m| v <= m)
    }

    fn show(&self) -> String {
        match (self.min, self.max) {
            (None, None) => "any".into(),
            (Some(a), Some(b)) if a == b => a.to_string(),
            (a, b) => format!(
                "{}..{}",
                a.map_or(String::new(), |v| v.to_string()),
                b.map_or(String::new(), |v| v.to_string())
            ),
        }
    }
}

/// One line or rule: where it applies and what it makes the library run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// 1-based line of the rule (HCCL: of its `match` key; the
    /// performance data: of the row chosen).
    pub line: usize,
    /// The collective it applies to.
    pub op: Primitive,
    /// Message sizes it matches, bytes (inclusive; the library's size:
    /// NCCL's `nBytes`, HCCL's `nBytes` of `hcclTunerCollInfo_t`).
    pub bytes: Bounds,
    /// Rank counts it matches.
    pub ranks: Bounds,
    /// Node (NCCL) or server (HCCL) counts it matches.
    pub nodes: Bounds,
    /// Element type it matches (HCCL `data_type`), if any.
    pub dtype: Option<String>,
    /// Conditions beyond these (NCCL pipe ops and registration, HCCL
    /// communicator name, NPUs per server, pods, buffer size), as written.
    pub conditions: Vec<String>,
    /// What runs: NCCL `algorithm/protocol`, HCCL
    /// `engine/executor/template`.
    pub choice: String,
    /// NCCL channels (`None`: NCCL's own count).
    pub channels: Option<i64>,
    /// HCCL's `cost`, or the performance data's metric of the chosen row.
    pub cost: Option<f64>,
}

impl Rule {
    /// Our algorithm for an NCCL rule's algorithm, if we model it
    /// (`ring` ring, `tree` NCCL's double binary tree, `pat` PAT).
    pub fn algorithm(&self) -> Option<Algorithm> {
        match self.choice.split('/').next()? {
            "ring" => Some(Algorithm::Ring),
            "tree" => Some(Algorithm::Dbtree),
            "pat" => Some(Algorithm::Nb),
            // NVLS reduces in the NVSwitch; our schedules draw it as the
            // all-pairs exchange it replaces (library::nccl::NcclAlgo::drawn_as).
            "nvls" => Some(Algorithm::Mesh),
            "nvls_tree" => Some(Algorithm::Dbtree),
            _ => None,
        }
    }
}

/// A tuner file as its table of choices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunerTable {
    /// The file's kind.
    pub source: Source,
    /// The rules in matching order.
    pub rules: Vec<Rule>,
    /// What the reader did or the library will do that a user should
    /// know (skipped lines, defaults, rules that never match).
    pub notes: Vec<String>,
}

/// One call: what a rule is matched against.
#[derive(Clone, Debug, PartialEq)]
pub struct Call<'a> {
    /// The collective.
    pub op: Primitive,
    /// Size, bytes.
    pub bytes: u64,
    /// Ranks of the communicator.
    pub ranks: u64,
    /// Nodes (servers), if known; a rule bounding them then does not match
    /// an unknown count.
    pub nodes: Option<u64>,
    /// Element type (HCCL names: fp16, fp32, bfp16, int8, ...), if known.
    pub dtype: Option<&'a str>,
}

impl TunerTable {
    /// The rule the library applies to `call`: the first that matches
    /// (conditions beyond op, size, ranks, nodes and type are taken as
    /// met; HCCL's communicator name and NCCL's pipe ops are shown, not
    /// checked).
    pub fn choice(&self, call: &Call) -> Option<&Rule> {
        self.rules.iter().find(|r| {
            r.op == call.op
                && r.bytes.holds(call.bytes)
                && r.ranks.holds(call.ranks)
                && (r.nodes == Bounds::ANY || call.nodes.is_some_and(|n| r.nodes.holds(n)))
                && match (&r.dtype, call.dtype) {
                    (None, _) => true,
                    (Some(d), Some(c)) => hccl_type(d) == hccl_type(c),
                    (Some(_), None) => false,
                }
        })
    }

    /// The table as text: a header naming the file's kind and matching
    /// rule, then one line per rule, then the notes.
    pub fn render(&self) -> String {
        let mut t = format!("# {}: {} rule(s), ", self.source.title(), self.rules.len());
        t.push_str(match self.source {
            Source::HcclRules => "the first matching rule of its op wins; bounds inclusive\n",
            _ => "the first matching line wins; bounds inclusive\n",
        });
        let _ = writeln!(
            t,
            "# {:>5} {:<14} {:<14} {:<14} {:<24} {:<7} {:<24} {:>8} {:>8}",
            "line", "collective", "ranks", "nodes", "bytes", "type", "runs", "channels", "cost"
        );
        for r in &self.rules {
            let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            let _ = writeln!(
                t,
                "{:>7} {:<14} {:<14} {:<14} {:<24} {:<7} {:<24} {:>8} {:>8}{}",
                r.line,
                r.op.name(),
                r.ranks.show(),
                r.nodes.show(),
                r.bytes.show(),
                r.dtype.as_deref().unwrap_or("any"),
                r.choice,
                opt(r.channels.map(|c| c.to_string())),
                opt(r.cost.map(|c| c.to_string())),
                if r.conditions.is_empty() {
                    String::new()
                } else {
                    format!("  if {}", r.conditions.join(", "))
                }
            );
        }
        for n in &self.notes {
            let _ = writeln!(t, "# note: {n}");
        }
        t
    }
}

/// Why a tuner file cannot be read.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TunerError {
    /// Larger than [`MAX_TUNER_BYTES`].
    #[error("the file is {bytes} bytes, larger than {cap} bytes (the cap for a tuner file)")]
    TooLarge {
        /// Size of the input, bytes.
        bytes: usize,
        /// The cap.
        cap: usize,
    },
    /// Not a tuner file of a kind this reader knows.
    #[error("not a tuner file: expected NCCL's example tuner config (`allreduce,0,65536,tree,simple,-1,1,8`), its performance data (a header `collective,size_bytes,algorithm,protocol,...,latency_us`) or HCCL's tuner-plugin rules (`{{\"version\": 1, \"op_types\": {{...}}}}`)")]
    Unknown,
    /// A line of a CSV cannot be read.
    #[error("line {line}: {what}")]
    Line {
        /// 1-based line.
        line: usize,
        /// What is wrong and what is allowed.
        what: String,
    },
    /// Malformed JSON.
    #[error("line {line}, column {column}: not valid JSON ({message})")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// A value this reader does not interpret (a bound that is not an
    /// integer in its type's range: the plugin's C cast would wrap it).
    #[error("{0}")]
    Value(String),
    /// HCCL's plugin rejects the rules: it then changes nothing.
    #[error("HCCL's tuner plugin ignores this whole file (any schema error and plugin.cpp does not intervene): {}", .0.join("; "))]
    Schema(Vec<String>),
}

/// What a tuner file is, if `text` looks like one (for the log reader's
/// message: such a file is not measurements).
pub fn sniff(text: &str) -> Option<&'static str> {
    detect(text).map(Source::title)
}

fn detect(text: &str) -> Option<Source> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    if first.starts_with('{') {
        return text.contains("\"op_types\"").then_some(Source::HcclRules);
    }
    let f: Vec<String> = first
        .split(',')
        .map(|c| unquote(c).to_ascii_lowercase())
        .collect();
    if f.iter().any(|c| c == "size_bytes") && f.iter().any(|c| c == "algorithm") {
        return Some(Source::NcclPerformance);
    }
    let numeric = |i: usize| f.get(i).is_some_and(|c| c.parse::<u64>().is_ok());
    let coll = f.first().and_then(|c| nccl_func(c).map(|_| ()));
    ((8..=10).contains(&f.len()) && coll.is_some() && numeric(1) && numeric(2))
        .then_some(Source::NcclConfig)
}

/// Reads any tuner file this module knows.
///
/// Errors: [`TunerError::TooLarge`], [`TunerError::Unknown`], and each
/// reader's own.
pub fn parse(text: &str) -> Result<TunerTable, TunerError> {
    if text.len() > MAX_TUNER_BYTES {
        return Err(TunerError::TooLarge {
            bytes: text.len(),
            cap: MAX_TUNER_BYTES,
        });
    }
    match detect(text) {
        Some(Source::NcclConfig) => Ok(nccl_config(text)),
        Some(Source::NcclPerformance) => nccl_performance(text),
        Some(Source::HcclRules) => hccl_rules(text),
        None => Err(TunerError::Unknown),
    }
}

/// NCCL's function of a tuner collective name (`plugin.c`
/// `parseCollType`).
fn nccl_func(name: &str) -> Option<Primitive> {
    match name {
        "broadcast" => Some(Primitive::Broadcast),
        "reduce" => Some(Primitive::Reduce),
        "allgather" => Some(Primitive::AllGather),
        "reducescatter" => Some(Primitive::ReduceScatter),
        "allreduce" => Some(Primitive::AllReduce),
        _ => None,
    }
}

/// NCCL's algorithms and protocols as the example tuner names them
/// (`plugin.c` `parseAlgorithm`, `parseProtocol`).
pub(crate) const NCCL_ALGOS: [&str; 7] = [
    "tree",
    "ring",
    "collnet_direct",
    "collnet_chain",
    "nvls",
    "nvls_tree",
    "pat",
];
pub(crate) const NCCL_PROTOS: [&str; 3] = ["ll", "ll128", "simple"];

/// NCCL's collectives as the example tuner names them (`plugin.c`
/// `parseCollType`).
const NCCL_FUNCS: [&str; 5] = [
    "broadcast",
    "reduce",
    "allgather",
    "reducescatter",
    "allreduce",
];

/// `value` if the plugin knows the name, else the `default` its parse
/// function returns (`plugin.c` `parseCollType`, `parseAlgorithm`,
/// `parseProtocol`), noted.
fn plugin_name<'a>(
    what: &str,
    value: &'a str,
    names: &[&str],
    default: &'a str,
    line: usize,
    notes: &mut Vec<String>,
) -> &'a str {
    if names.contains(&value) {
        return value;
    }
    notes.push(format!(
        "line {line}: {what} `{value}` is none the plugin knows; it reads it as {default}"
    ));
    default
}

/// `strtoull` / `atoi` of a field: its leading number, 0 without one.
fn c_number(s: &str) -> i64 {
    let t = s.trim();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(d) => (-1, d),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end]
        .parse::<i64>()
        .map_or(if end == 0 { 0 } else { i64::MAX }, |v| sign * v)
}

/// `strtoull` of a field (`max_bytes`): its leading number, saturating
/// at `u64::MAX`, a `-` negating it modulo 2^64 (`-1` is `SIZE_MAX`), 0
/// without one.
fn c_unsigned(s: &str) -> u64 {
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let v = digits[..end]
        .parse::<u64>()
        .unwrap_or(if end == 0 { 0 } else { u64::MAX });
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

/// NCCL's example tuner config, as `plugin.c` reads it.
fn nccl_config(text: &str) -> TunerTable {
    let mut rules = Vec::new();
    let mut notes = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.starts_with('#') || raw.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = raw
            .split(',')
            .map(|t| t.trim_matches([' ', '\t']))
            .filter(|t| !t.is_empty())
            .take(10)
            .collect();
        if f.len() < 8 {
            notes.push(format!(
                "line {line}: {} field(s); the plugin skips lines of fewer than 8",
                f.len()
            ));
            continue;
        }
        let op_name = plugin_name(
            "collective",
            f[0],
            &NCCL_FUNCS,
            "allreduce",
            line,
            &mut notes,
        );
        let op = nccl_func(op_name).unwrap_or(Primitive::AllReduce);
        let algo = plugin_name("algorithm", f[3], &NCCL_ALGOS, "ring", line, &mut notes);
        let proto = plugin_name("protocol", f[4], &NCCL_PROTOS, "simple", line, &mut notes);
        let (lo, hi) = (c_unsigned(f[1]), c_unsigned(f[2]));
        if lo > hi {
            notes.push(format!(
                "line {line}: min_bytes {lo} > max_bytes {hi}: the line matches no size"
            ));
        }
        let mut conditions = Vec::new();
        for (k, name) in [(8usize, "numPipeOps"), (9, "regBuff")] {
            if let Some(v) = f.get(k).map(|v| c_number(v)).filter(|v| *v != -1) {
                conditions.push(format!("{name}={v}"));
            }
        }
        let channels = c_number(f[5]);
        rules.push(Rule {
            line,
            op,
            bytes: Bounds {
                min: Some(lo),
                max: Some(hi),
            },
            ranks: Bounds::exact_or_any(c_number(f[7])),
            nodes: Bounds::exact_or_any(c_number(f[6])),
            dtype: None,
            conditions,
            choice: format!("{algo}/{proto}"),
            channels: (channels != -1).then_some(channels),
            cost: None,
        });
    }
    TunerTable {
        source: Source::NcclConfig,
        rules,
        notes,
    }
}

/// One row of the performance data.
#[derive(Clone, Debug)]
struct Measured {
    line: usize,
    collective: String,
    size: u64,
    algorithm: String,
    protocol: String,
    channels: i64,
    nodes: i64,
    ranks: i64,
    pipe_ops: i64,
    reg_buff: i64,
    latency_us: f64,
}

/// The rows of the performance data, by the header's names (csv
/// `DictReader`); a row without a finite `latency_us` ≥ 0 is skipped,
/// as the script skips it, and noted.
fn measured_rows(text: &str) -> Result<(Vec<Measured>, Vec<String>), TunerError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((hl, header)) = lines.next() else {
        return Err(TunerError::Unknown);
    };
    let names: Vec<String> = header.split(',').map(|c| unquote(c).to_string()).collect();
    let col = |n: &str| names.iter().position(|c| c == n);
    let need = [
        "collective",
        "size_bytes",
        "algorithm",
        "protocol",
        "channels",
        "nodes",
        "ranks",
        "pipeOps",
        "regBuff",
        "latency_us",
    ];
    let mut at = [0usize; 10];
    for (k, n) in need.iter().enumerate() {
        at[k] = col(n).ok_or_else(|| TunerError::Line {
            line: hl + 1,
            what: format!(
                "the header names no `{n}` column (the optimizer reads {})",
                need.join(", ")
            ),
        })?;
    }
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for (i, l) in lines {
        let line = i + 1;
        let cells: Vec<&str> = l.split(',').map(unquote).collect();
        if cells.len() != names.len() {
            return Err(TunerError::Line {
                line,
                what: format!(
                    "{} fields, but the header (line {}) names {}",
                    cells.len(),
                    hl + 1,
                    names.len()
                ),
            });
        }
        let int = |k: usize| -> Result<i64, TunerError> {
            cells[at[k]].parse::<i64>().map_err(|_| TunerError::Line {
                line,
                what: format!(
                    "{} is `{}`; expected an integer (-1 for any)",
                    need[k], cells[at[k]]
                ),
            })
        };
        let latency = cells[at[9]]
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0);
        let Some(latency_us) = latency else {
            notes.push(format!(
                "line {line}: latency_us `{}` is not a number ≥ 0; the optimizer skips the row",
                cells[at[9]]
            ));
            continue;
        };
        rows.push(Measured {
            line,
            collective: cells[at[0]].to_string(),
            size: u64::try_from(int(1)?).map_err(|_| TunerError::Line {
                line,
                what: format!("size_bytes is `{}`; expected a size ≥ 0", cells[at[1]]),
            })?,
            algorithm: cells[at[2]].to_string(),
            protocol: cells[at[3]].to_string(),
            channels: int(4)?,
            nodes: int(5)?,
            ranks: int(6)?,
            pipe_ops: int(7)?,
            reg_buff: int(8)?,
            latency_us,
        });
    }
    Ok((rows, notes))
}

/// The size ranges the optimizer makes for one (nodes, ranks): from 0 to
/// the midpoint of consecutive measured sizes, the last ending at the
/// largest (`auto_determine_size_ranges`).
fn ranges_of(mut sizes: Vec<u64>) -> Vec<(u64, u64)> {
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() <= 1 {
        return vec![(0, sizes.first().copied().unwrap_or(0))];
    }
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(sizes.len());
    for (i, &s) in sizes.iter().enumerate() {
        let lo = out.last().map_or(0, |l| l.1 + 1);
        let hi = match sizes.get(i + 1) {
            Some(&n) => s / 2 + n / 2 + (s % 2 + n % 2) / 2,
            None => s,
        };
        out.push((lo, hi));
    }
    out
}

/// The config `optimize_config.py` writes by default from the
/// performance data, as rules.
fn nccl_performance(text: &str) -> Result<TunerTable, TunerError> {
    let (rows, mut notes) = measured_rows(text)?;
    // Size ranges per (nodes, ranks), in first-seen order.
    let mut topo: Vec<((i64, i64), Vec<u64>)> = Vec::new();
    for r in &rows {
        match topo.iter_mut().find(|(k, _)| *k == (r.nodes, r.ranks)) {
            Some((_, s)) => s.push(r.size),
            None => topo.push(((r.nodes, r.ranks), vec![r.size])),
        }
    }
    let topo: Vec<((i64, i64), Vec<(u64, u64)>)> =
        topo.into_iter().map(|(k, s)| (k, ranges_of(s))).collect();
    // The best row per (collective, nodes, ranks, pipeOps, regBuff) and range.
    type Group = ((String, i64, i64, i64, i64), (u64, u64));
    let mut best: Vec<(Group, Measured)> = Vec::new();
    for r in rows {
        let range = topo
            .iter()
            .find(|(k, _)| *k == (r.nodes, r.ranks))
            .and_then(|(_, rs)| rs.iter().find(|(lo, hi)| *lo <= r.size && r.size <= *hi))
            .copied()
            .unwrap_or((r.size, r.size));
        let g = (
            (
                r.collective.clone(),
                r.nodes,
                r.ranks,
                r.pipe_ops,
                r.reg_buff,
            ),
            range,
        );
        match best.iter_mut().find(|(k, _)| *k == g) {
            Some((_, b)) if r.latency_us < b.latency_us => *b = r,
            Some(_) => {}
            None => best.push((g, r)),
        }
    }
    let merged = merge_ranges(best);
    let mut rules = Vec::new();
    for ((key, (lo, hi)), m) in merged {
        let Some(op) = nccl_func(&key.0) else {
            notes.push(format!(
                "line {}: collective `{}` is none the plugin knows; it reads it as allreduce",
                m.line, key.0
            ));
            continue;
        };
        let mut conditions = Vec::new();
        for (name, v) in [("numPipeOps", key.3), ("regBuff", key.4)] {
            if v != -1 {
                conditions.push(format!("{name}={v}"));
            }
        }
        rules.push(Rule {
            line: m.line,
            op,
            bytes: Bounds {
                min: Some(lo),
                max: Some(hi),
            },
            ranks: Bounds::exact_or_any(key.2),
            nodes: Bounds::exact_or_any(key.1),
            dtype: None,
            conditions,
            choice: format!("{}/{}", m.algorithm, m.protocol),
            channels: (m.channels != -1).then_some(m.channels),
            cost: Some(m.latency_us),
        });
    }
    notes.push("the config scripts/optimize_config.py writes by default: per size range the row of lowest latency_us (the cost column: its latency); ranges end at the midpoints between measured sizes, and sizes above the largest measured one match no line (NCCL's own tuning applies)".into());
    Ok(TunerTable {
        source: Source::NcclPerformance,
        rules,
        notes,
    })
}

/// `combine_sequential_ranges`: per (collective, nodes, ranks, pipeOps,
/// regBuff), ranges with the same algorithm, protocol and channels that
/// touch are merged; the result sorted by (collective, nodes, ranks,
/// min_bytes).
#[allow(clippy::type_complexity)]
fn merge_ranges(
    best: Vec<(((String, i64, i64, i64, i64), (u64, u64)), Measured)>,
) -> Vec<(((String, i64, i64, i64, i64), (u64, u64)), Measured)> {
    let mut topo: Vec<((String, i64, i64, i64, i64), Vec<((u64, u64), Measured)>)> = Vec::new();
    for ((k, range), m) in best {
        match topo.iter_mut().find(|(t, _)| *t == k) {
            Some((_, v)) => v.push((range, m)),
            None => topo.push((k, vec![(range, m)])),
        }
    }
    let mut out = Vec::new();
    for (k, mut v) in topo {
        v.sort_by_key(|(r, _)| r.0);
        let mut tunings: Vec<((String, String, i64), Vec<((u64, u64), Measured)>)> = Vec::new();
        for (r, m) in v {
            let t = (m.algorithm.clone(), m.protocol.clone(), m.channels);
            match tunings.iter_mut().find(|(x, _)| *x == t) {
                Some((_, g)) => g.push((r, m)),
                None => tunings.push((t, vec![(r, m)])),
            }
        }
        for (_, g) in tunings {
            let mut cur: Option<((u64, u64), Measured)> = None;
            for (r, m) in g {
                match cur.as_mut() {
                    Some((c, _)) if c.1.saturating_add(1) >= r.0 => c.1 = c.1.max(r.1),
                    _ => {
                        if let Some((c, cm)) = cur.replace((r, m)) {
                            out.push(((k.clone(), c), cm));
                        }
                    }
                }
            }
            if let Some((c, cm)) = cur {
                out.push(((k.clone(), c), cm));
            }
        }
    }
    out.sort_by(|a, b| {
        let (ka, kb) = (&a.0 .0, &b.0 .0);
        (&ka.0, ka.1, ka.2, a.0 .1 .0).cmp(&(&kb.0, kb.1, kb.2, b.0 .1 .0))
    });
    out
}

/// HCCL's data type of a name (`plugin.cpp` `g_dataTypeMap`: synonyms
/// `float16`/`fp16`, `float32`/`fp32`, `float64`/`fp64`,
/// `bfloat16`/`bfp16`), `None` for a name HCCL has not.
fn hccl_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "int8" => "int8",
        "int16" => "int16",
        "int32" => "int32",
        "int64" => "int64",
        "uint8" => "uint8",
        "uint16" => "uint16",
        "uint32" => "uint32",
        "uint64" => "uint64",
        "fp16" | "float16" => "fp16",
        "fp32" | "float32" => "fp32",
        "fp64" | "float64" => "fp64",
        "bfp16" | "bfloat16" => "bfp16",
        _ => return None,
    })
}

const HCCL_OPS: [(&str, Primitive); 8] = [
    ("allreduce", Primitive::AllReduce),
    ("allgather", Primitive::AllGather),
    ("broadcast", Primitive::Broadcast),
    ("reduce", Primitive::Reduce),
    ("reduce_scatter", Primitive::ReduceScatter),
    ("scatter", Primitive::Scatter),
    ("alltoall", Primitive::AlltoAll),
    ("alltoallv", Primitive::AlltoAllV),
];
const HCCL_ENGINES: [&str; 5] = ["aicpu", "ccums", "ccusched", "aiv", "dpu"];
const HCCL_EXECUTORS: [&str; 5] = ["sole", "sequence", "parallel", "pipeline", "concur"];
const HCCL_TEMPLATES: [&str; 10] = [
    "mesh",
    "mesh2die",
    "meshoneshot",
    "meshtwoshot",
    "meshconcur",
    "meshmultilink",
    "meshchunk",
    "meshchunktwoshot",
    "nhr",
    "nhrmultilink",
];
const HCCL_MATCH_KEYS: [&str; 15] = [
    "min_ranks",
    "max_ranks",
    "min_bytes",
    "max_bytes",
    "data_type",
    "comm_name",
    "min_npus_per_server",
    "max_npus_per_server",
    "min_servers",
    "max_servers",
    "min_pods",
    "max_pods",
    "min_super_pods",
    "max_super_pods",
    "buffer_size",
];

/// HCCL's tuner-plugin rules, as `plugin.cpp` parses and checks them.
fn hccl_rules(text: &str) -> Result<TunerTable, TunerError> {
    let root: Value = serde_json::from_str(text).map_err(|e| TunerError::Json {
        line: e.line(),
        column: e.column(),
        message: super::nccl_json::json_message(&e),
    })?;
    let (mut errors, mut bad, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    let Some(obj) = root.as_object() else {
        return Err(TunerError::Schema(vec![
            "config root is not an object".into()
        ]));
    };
    match obj.get("version").map(|v| v.as_i64()) {
        None => errors.push("missing required field 'version'".to_string()),
        Some(Some(1)) => {}
        Some(v) => errors.push(format!(
            "version must be 1, got {}",
            v.map_or("a non-integer".into(), |v| v.to_string())
        )),
    }
    let Some(ops) = obj.get("op_types").and_then(Value::as_object) else {
        errors.push("missing required field 'op_types'".into());
        return Err(TunerError::Schema(errors));
    };
    let lines = RuleLines::new(text);
    let mut rules = Vec::new();
    let mut known_ops = 0;
    for (name, op_obj) in ops {
        let Some(&(_, op)) = HCCL_OPS.iter().find(|(n, _)| n == name) else {
            errors.push(format!(
                "unknown op_type '{name}' (expected one of {})",
                HCCL_OPS.map(|o| o.0).join(", ")
            ));
            continue;
        };
        known_ops += 1;
        if known_ops > 8 {
            errors.push(format!(
                "op_type count exceeds MAX_OP_TYPES(8), '{name}' skipped"
            ));
            continue;
        }
        let Some(list) = op_obj.get("rules").and_then(Value::as_array) else {
            errors.push(format!("op_type '{name}' missing 'rules' array"));
            continue;
        };
        if list.is_empty() {
            errors.push(format!("op_type '{name}' has no rules (minItems=1)"));
        }
        if list.len() > 2000 {
            errors.push(format!(
                "op_type '{name}' rule count exceeds MAX_RULES_PER_OP(2000)"
            ));
        }
        for (k, r) in list.iter().take(2000).enumerate() {
            let at = format!("op_types.{name}.rules[{k}]");
            if let Some(rule) = hccl_rule(r, op, &at, (&mut errors, &mut bad, &mut notes)) {
                rules.push(Rule {
                    line: lines.next_rule(name, k),
                    ..rule
                });
            }
        }
    }
    // In file order (serde_json's map sorts the ops; the order within an
    // op, which decides, is kept).
    rules.sort_by_key(|r| r.line);
    if rules.len() > 5000 {
        errors.push(format!(
            "total rules {} exceeds MAX_TOTAL_RULES(5000)",
            rules.len()
        ));
    }
    if !errors.is_empty() {
        return Err(TunerError::Schema(errors));
    }
    if let Some(first) = bad.into_iter().next() {
        return Err(TunerError::Value(first));
    }
    for r in &rules {
        for (b, what) in [(r.bytes.max, "max_bytes"), (r.ranks.max, "max_ranks")] {
            if b == Some(u32::MAX as u64) {
                notes.push(format!(
                    "line {}: {what} 4294967295 is 2^32 − 1{}, a bound like any other",
                    r.line,
                    if what == "max_bytes" {
                        " (4 GiB − 1 B): a call of 4 GiB or more does not match"
                    } else {
                        ": it holds every rank count"
                    }
                ));
            }
        }
    }
    Ok(TunerTable {
        source: Source::HcclRules,
        rules,
        notes,
    })
}

/// The conditions of an HCCL match beyond op, ranks, bytes, servers and
/// type, as a user reads them.
fn hccl_conditions(m: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut conditions = Vec::new();
    for (key, label) in [
        ("comm_name", "comm name contains"),
        ("min_npus_per_server", "NPUs per server ≥"),
        ("max_npus_per_server", "NPUs per server ≤"),
        ("min_pods", "pods ≥"),
        ("max_pods", "pods ≤"),
        ("min_super_pods", "super pods ≥"),
        ("max_super_pods", "super pods ≤"),
        ("buffer_size", "buffer size ="),
    ] {
        if let Some(v) = m.get(key) {
            conditions.push(format!(
                "{label} {}",
                v.as_str().map_or(v.to_string(), str::to_string)
            ));
        }
    }
    conditions
}

/// A rule's `engine`, `executor` or `template`: one of `allowed`
/// (`plugin.cpp` `is_valid_*`), else a schema error.
fn hccl_name(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    allowed: &[&str],
    at: &str,
    errors: &mut Vec<String>,
) -> String {
    match obj.get(key).map(Value::as_str) {
        Some(Some(v)) if allowed.contains(&v) => v.to_string(),
        Some(Some(v)) => {
            errors.push(format!(
                "{at}: invalid {key} '{v}' (expected one of {})",
                allowed.join(", ")
            ));
            String::new()
        }
        Some(None) => {
            errors.push(format!("{at}: {key} is not a string"));
            String::new()
        }
        None => {
            errors.push(format!("{at}: rule missing required field '{key}'"));
            String::new()
        }
    }
}

/// One HCCL rule, its schema errors pushed to `errors`.
fn hccl_rule(
    r: &Value,
    op: Primitive,
    at: &str,
    (errors, bad, notes): (&mut Vec<String>, &mut Vec<String>, &mut Vec<String>),
) -> Option<Rule> {
    let Some(obj) = r.as_object() else {
        errors.push(format!("{at}: rule is not an object"));
        return None;
    };
    for k in obj.keys() {
        if !["match", "engine", "executor", "template", "cost", "args"].contains(&k.as_str()) {
            notes.push(format!(
                "{at}: unknown field '{k}' skipped (a schema warning)"
            ));
        }
    }
    let Some(m) = obj.get("match").and_then(Value::as_object) else {
        errors.push(format!("{at}: rule missing required field 'match'"));
        return None;
    };
    for k in m.keys() {
        if !HCCL_MATCH_KEYS.contains(&k.as_str()) {
            notes.push(format!(
                "{at}.match: unknown field '{k}' skipped (a schema warning)"
            ));
        }
    }
    let bound = |key: &str, cap: u64, bad: &mut Vec<String>| -> Option<u64> {
        let v = m.get(key)?;
        match v.as_u64().filter(|x| *x <= cap) {
            Some(x) => Some(x),
            None => {
                bad.push(format!(
                    "{at}.match.{key} is {v}: expected an integer 0..={cap} (the plugin would cast it, not check it)"
                ));
                None
            }
        }
    };
    let u32max = u32::MAX as u64;
    let required = |key: &str, cap: u64, errors: &mut Vec<String>, bad: &mut Vec<String>| {
        if !m.contains_key(key) {
            errors.push(format!("{at}: rule missing required field '{key}'"));
        }
        bound(key, cap, bad)
    };
    let ranks = Bounds {
        min: required("min_ranks", u32max, errors, bad),
        max: required("max_ranks", u32max, errors, bad),
    };
    let bytes = Bounds {
        min: required("min_bytes", u64::MAX, errors, bad),
        max: required("max_bytes", u64::MAX, errors, bad),
    };
    for (b, what) in [(ranks, "ranks"), (bytes, "bytes")] {
        if let (Some(a), Some(z)) = (b.min, b.max) {
            if a > z {
                errors.push(format!("{at}: min_{what}({a}) > max_{what}({z})"));
            }
        }
    }
    let nodes = Bounds {
        min: bound("min_servers", u32max, bad),
        max: bound("max_servers", u32max, bad),
    };
    let conditions = hccl_conditions(m);
    let dtype = m
        .get("data_type")
        .map(|v| v.as_str().unwrap_or("").to_string());
    if let Some(d) = &dtype {
        if hccl_type(d).is_none() {
            notes.push(format!(
                "{at}: data_type `{d}` is no HCCL type: the rule matches no call"
            ));
        }
    }
    let choice = [
        hccl_name(obj, "engine", &HCCL_ENGINES, at, errors),
        hccl_name(obj, "executor", &HCCL_EXECUTORS, at, errors),
        hccl_name(obj, "template", &HCCL_TEMPLATES, at, errors),
    ]
    .join("/");
    let cost = obj.get("cost").and_then(Value::as_f64);
    if cost.is_none() {
        errors.push(format!(
            "{at}: rule missing required field 'cost' (a number)"
        ));
    }
    Some(Rule {
        line: 0,
        op,
        bytes,
        ranks,
        nodes,
        dtype,
        conditions,
        choice,
        channels: None,
        cost,
    })
}

/// The line of each rule object in the text: the `k`-th `"match"` after
/// the op's key.
struct RuleLines<'a> {
    text: &'a str,
}

impl<'a> RuleLines<'a> {
    fn new(text: &'a str) -> RuleLines<'a> {
        RuleLines { text }
    }

    fn next_rule(&self, op: &str, k: usize) -> usize {
        let key = format!("\"{op}\"");
        let Some(from) = self.text.find(&key) else {
            return 0;
        };
        let rest = &self.text[from..];
        let at = rest
            .match_indices("\"match\"")
            .nth(k)
            .map_or(0, |(i, _)| from + i);
        self.text[..at].matches('\n').count() + 1
    }
}

/// `(min, max, algorithm/protocol)` of each rule of `op`, in order: an
/// NCCL config's lines as `cclsim tune` writes them.
pub fn ranges(t: &TunerTable, op: Primitive) -> Vec<(u64, u64, String)> {
    t.rules
        .iter()
        .filter(|r| r.op == op)
        .map(|r| {
            (
                r.bytes.min.unwrap_or(0),
                r.bytes.max.unwrap_or(u64::MAX),
                r.choice.clone(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimizer_ranges_split_at_midpoints() {
        assert_eq!(
            ranges_of(vec![1048576, 1024, 32768, 1024]),
            [(0, 16896), (16897, 540672), (540673, 1048576)]
        );
        assert_eq!(ranges_of(vec![7]), [(0, 7)]);
        assert_eq!(
            [
                c_unsigned("18446744073709551615"),
                c_unsigned("-1"),
                c_unsigned("99999999999999999999"),
                c_unsigned("x"),
                c_unsigned(" 64k")
            ],
            [u64::MAX, u64::MAX, u64::MAX, 0, 64]
        );
        assert_eq!(
            ranges_of(vec![u64::MAX, u64::MAX - 2]),
            [(0, u64::MAX - 1), (u64::MAX, u64::MAX)]
        );
    }

    #[test]
    fn config_lines_read_as_the_plugin_reads_them() {
        let t = parse("# c\nallreduce,0,65536,tree,simple,2,1,-1,-1,1\nbroadcast , 0 , 32768 , ringg , simple , -1 , 1 , -1\nallgather,0,4294967295,ring,simple,4,2,-1\nshort,1\n").unwrap();
        assert_eq!(t.rules.len(), 3);
        assert_eq!(t.rules[0].conditions, ["regBuff=1"]);
        assert_eq!(
            (t.rules[0].channels, t.rules[0].ranks),
            (Some(2), Bounds::ANY)
        );
        assert_eq!(t.rules[1].choice, "ring/simple");
        assert_eq!(
            t.notes,
            [
                "line 3: algorithm `ringg` is none the plugin knows; it reads it as ring",
                "line 5: 2 field(s); the plugin skips lines of fewer than 8"
            ]
        );
        let call = Call {
            op: Primitive::AllGather,
            bytes: 1 << 20,
            ranks: 16,
            nodes: Some(2),
            dtype: None,
        };
        assert_eq!(t.choice(&call).map(|r| r.line), Some(4));
        assert_eq!(
            t.choice(&Call {
                nodes: Some(1),
                ..call
            }),
            None
        );
    }
}
