//! Measurement logs in: nccl-tests / rccl-tests output ([`nccl_tests`]) and
//! Ascend `hccl_test` output ([`hccl_test`]), parsed into [`Log`]s of
//! [`Table`]s of [`Row`]s that [`super::calibrate`] fits a profile to.
//!
//! Parsing never panics and never gives up on noise: shell prompts, NCCL
//! INFO lines, `mpirun --tag-output` prefixes (`[1,0]<stdout>:`) and blank
//! lines are skipped. A line that is inside a table and starts like a data
//! row but is not one is an error naming the line, its text and what was
//! expected. A table whose numbers are physically impossible (one rank, or
//! an algbw above any device's memory bandwidth) is kept but marked
//! [`Table::rejected`] with the reason, and is never fitted.

pub mod hccl_test;
pub mod msccl;
pub mod nccl_tests;
pub mod report;

use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// Highest algbw any real collective measurement can show, GB/s: above the
/// memory bandwidth of every device in the fixtures' class (H100 HBM3
/// 3,350 GB/s; MI300X 5,300 GB/s), with margin. A row above it timed
/// nothing (the 1-GPU in-place no-op of the 2080 Ti log shows 5.7 million).
pub const MAX_PLAUSIBLE_ALGBW_GBPS: f64 = 10_000.0;

/// Which program wrote a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// NVIDIA nccl-tests or AMD rccl-tests (`*_perf`).
    NcclTests,
    /// Huawei `hccl_test` (`*_test`).
    HcclTest,
}

/// The collective a table measured, as the tools name it (`all_reduce_perf`
/// -> `AllReduce`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// `all_reduce`.
    AllReduce,
    /// `all_gather`.
    AllGather,
    /// `reduce_scatter`.
    ReduceScatter,
    /// `broadcast`.
    Broadcast,
    /// `reduce`.
    Reduce,
    /// `alltoall` (hccl_test: `alltoall`, `alltoallv`).
    AllToAll,
    /// `sendrecv`.
    SendRecv,
    /// `gather`.
    Gather,
    /// `scatter`.
    Scatter,
    /// `hypercube`.
    HyperCube,
    /// Any other program name.
    Other(String),
}

impl Collective {
    /// From a tool's base name without `_perf` / `_test` (`all_reduce`).
    pub fn from_tool_name(name: &str) -> Collective {
        match name.to_ascii_lowercase().as_str() {
            "all_reduce" | "allreduce" => Collective::AllReduce,
            "all_gather" | "allgather" => Collective::AllGather,
            "reduce_scatter" | "reducescatter" => Collective::ReduceScatter,
            "broadcast" => Collective::Broadcast,
            "reduce" => Collective::Reduce,
            "alltoall" | "all_to_all" | "alltoallv" => Collective::AllToAll,
            "sendrecv" | "send_recv" => Collective::SendRecv,
            "gather" => Collective::Gather,
            "scatter" => Collective::Scatter,
            "hypercube" => Collective::HyperCube,
            other => Collective::Other(other.to_string()),
        }
    }

    /// The tools' name (`all_reduce`).
    pub fn name(&self) -> &str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::AllToAll => "alltoall",
            Collective::SendRecv => "sendrecv",
            Collective::Gather => "gather",
            Collective::Scatter => "scatter",
            Collective::HyperCube => "hypercube",
            Collective::Other(s) => s,
        }
    }

    /// The engine's primitive, if it models this collective.
    pub fn primitive(&self) -> Option<super::collective::Primitive> {
        use super::collective::Primitive;
        match self {
            Collective::AllReduce => Some(Primitive::AllReduce),
            Collective::AllGather => Some(Primitive::AllGather),
            Collective::ReduceScatter => Some(Primitive::ReduceScatter),
            Collective::Broadcast => Some(Primitive::Broadcast),
            Collective::Reduce => Some(Primitive::Reduce),
            Collective::AllToAll => Some(Primitive::AlltoAll),
            Collective::SendRecv => Some(Primitive::SendRecv),
            Collective::Gather => Some(Primitive::Gather),
            Collective::Scatter => Some(Primitive::Scatter),
            Collective::HyperCube | Collective::Other(_) => None,
        }
    }

    /// nccl-tests' busbw factor for `n` ranks (`doc/PERFORMANCE.md`):
    /// AllReduce `2(n-1)/n`; AllGather, ReduceScatter, AlltoAll, Gather,
    /// Scatter `(n-1)/n`; Broadcast, Reduce, SendRecv `1`; others `1`.
    pub fn busbw_factor(&self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather
            | Collective::ReduceScatter
            | Collective::AllToAll
            | Collective::Gather
            | Collective::Scatter => (n - 1.0) / n,
            _ => 1.0,
        }
    }

    /// Sequential steps of the ring algorithm NCCL runs for it on `n`
    /// ranks (AllReduce `2(n-1)`, AllGather / ReduceScatter / Broadcast /
    /// Reduce `n-1`, AlltoAll `n-1` pairwise exchanges, SendRecv `1`):
    /// the number of per-message latencies `α` in its closed form (Thakur,
    /// Rabenseifner & Gropp 2005; Broadcast/Reduce as the pipelined ring).
    pub fn ring_steps(&self, n: usize) -> usize {
        let n = n.max(2);
        match self {
            Collective::AllReduce => 2 * (n - 1),
            Collective::SendRecv => 1,
            _ => n - 1,
        }
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One timing of a row (out-of-place or in-place).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Average time of one collective, µs.
    pub time_us: f64,
    /// `size / time`, GB/s (1e9 bytes), as printed.
    pub algbw_gbps: f64,
    /// busbw, GB/s, as printed (`None`: hccl_test prints none).
    pub busbw_gbps: Option<f64>,
    /// The check column as printed: `#wrong` count, old `error` value,
    /// `N/A`, or hccl_test's `success` / `failed` / `NULL`.
    pub check: String,
}

/// One message size of a table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// 1-based line number in the input.
    pub line: usize,
    /// Message size, bytes (nccl-tests' `size`; hccl_test's `data_size`).
    pub bytes: u64,
    /// Elements (`count`; `None` for hccl_test).
    pub count: Option<u64>,
    /// Element type as printed (`float`, `double`, `fp32`), if printed.
    pub dtype: Option<String>,
    /// Reduce op as printed (`sum`, `none`), if printed.
    pub redop: Option<String>,
    /// Root rank (`-1` = none), if the table has a `root` column (old
    /// nccl-tests tables have none).
    pub root: Option<i64>,
    /// Out-of-place timing (hccl_test: its only timing).
    pub out_of_place: Measure,
    /// In-place timing, if printed.
    pub in_place: Option<Measure>,
}

impl Row {
    /// A `count 0` / `size 0` row: kept for display, never fitted (its time
    /// is launch overhead, not a transfer).
    pub fn is_empty(&self) -> bool {
        self.bytes == 0 || self.count == Some(0)
    }
}

/// One table: the rows of one run of one collective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The tool that wrote it.
    pub tool: Tool,
    /// 1-based line of the table's header.
    pub line: usize,
    /// The collective, if the log names it (`# Collective test starting:
    /// X_perf`, or the command line).
    pub collective: Option<Collective>,
    /// Number of ranks, if derivable from the log (`# Using devices` rank
    /// lines; else `mpirun -np P` × `-g G` × `-t T`; else `-g G` × `-t T` of
    /// a command without mpirun; hccl_test: `mpirun -n P`).
    pub ranks: Option<usize>,
    /// Rows in order.
    pub rows: Vec<Row>,
    /// Why the table must not be fitted, if it must not.
    pub rejected: Option<String>,
}

impl Table {
    /// The rows a fit may use: non-empty rows of a non-rejected table.
    pub fn fittable_rows(&self) -> Vec<&Row> {
        if self.rejected.is_some() {
            return Vec::new();
        }
        self.rows.iter().filter(|r| !r.is_empty()).collect()
    }

    /// A one-line label: `all_reduce, 8 ranks, 35 rows (line 12)`.
    pub fn label(&self) -> String {
        format!(
            "{}, {} ranks, {} rows (line {})",
            self.collective
                .as_ref()
                .map_or("unknown collective", |c| c.name()),
            self.ranks.map_or("?".to_string(), |r| r.to_string()),
            self.rows.len(),
            self.line
        )
    }

    /// Marks the table rejected if its numbers are impossible: one rank
    /// (a collective on one device moves nothing between devices), or any
    /// algbw above [`MAX_PLAUSIBLE_ALGBW_GBPS`].
    pub(crate) fn check_plausible(&mut self) {
        let worst = self
            .rows
            .iter()
            .flat_map(|r| {
                std::iter::once(&r.out_of_place)
                    .chain(r.in_place.as_ref())
                    .map(move |m| (r, m))
            })
            .filter(|(_, m)| m.algbw_gbps > MAX_PLAUSIBLE_ALGBW_GBPS)
            .max_by(|a, b| a.1.algbw_gbps.total_cmp(&b.1.algbw_gbps));
        let impossible = worst.map(|(r, m)| {
            format!(
                "{} µs for {} bytes (line {}) is algbw {} GB/s, above any device's memory bandwidth (limit {} GB/s)",
                m.time_us, r.bytes, r.line, m.algbw_gbps, MAX_PLAUSIBLE_ALGBW_GBPS
            )
        });
        self.rejected = match (self.ranks, impossible) {
            (Some(1), Some(why)) => Some(format!(
                "1 rank: a collective on one device moves no data between devices (out-of-place times a local copy, in-place a no-op); {why}"
            )),
            (Some(1), None) => Some(
                "1 rank: a collective on one device moves no data between devices; its times are local copies".into(),
            ),
            (_, Some(why)) => Some(why),
            _ => None,
        };
    }
}

/// A parsed log: every table in file order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Log {
    /// Tables in file order.
    pub tables: Vec<Table>,
}

impl Log {
    /// Tables that are not rejected and have at least one fittable row.
    pub fn usable(&self) -> Vec<&Table> {
        self.tables
            .iter()
            .filter(|t| t.rejected.is_none() && !t.fittable_rows().is_empty())
            .collect()
    }
}

/// Why a log could not be parsed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FormatError {
    /// A line inside a table starts like a data row but is not one.
    #[error("line {line}: expected {expected}, found `{text}`")]
    BadRow {
        /// 1-based line number.
        line: usize,
        /// The line (truncated to 100 characters).
        text: String,
        /// What a row of this table looks like.
        expected: String,
    },
    /// No table in the input.
    #[error("no table found: expected an nccl-tests header line (`#  size  count  type  redop  root  time  algbw  busbw ...`) or an hccl_test header (`data_size(Bytes) aveg_time(us) alg_bandwidth(GB/s) check_result`)")]
    NoTable,
}

/// Truncates a line for an error message.
pub(crate) fn excerpt(s: &str) -> String {
    if s.chars().count() > 100 {
        format!("{}…", s.chars().take(100).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Strips an `mpirun --tag-output` prefix (`[1,0]<stdout>:`,
/// `[1,3]<stderr>:`) from a line.
pub(crate) fn strip_tag(line: &str) -> &str {
    let l = line.trim_end_matches(['\r', '\n']);
    if let Some(rest) = l.strip_prefix('[') {
        if let Some(close) = rest.find("]<") {
            let inside = &rest[..close];
            let after = &rest[close + 2..];
            if inside
                .split(',')
                .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
            {
                if let Some(gt) = after.find(">:") {
                    return &after[gt + 2..];
                }
            }
        }
    }
    l
}

/// Parses any supported log: hccl_test if a line has its header, else
/// nccl-tests / rccl-tests.
///
/// Errors: [`FormatError::BadRow`] for a malformed row inside a table,
/// [`FormatError::NoTable`] if there is no table.
pub fn parse_log(text: &str) -> Result<Log, FormatError> {
    if text
        .lines()
        .any(|l| l.contains("data_size") && l.contains("aveg_time"))
    {
        hccl_test::parse(text)
    } else {
        nccl_tests::parse(text)
    }
}

/// Parses a size with an optional binary suffix as the tools take it on
/// the command line (`8`, `1K`, `64M`, `1G`; K/M/G = 2^10/2^20/2^30).
pub fn parse_tool_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1u64 << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) || num.len() > 20 {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_sizes() {
        assert_eq!(strip_tag("[1,0]<stdout>:#  size"), "#  size");
        assert_eq!(strip_tag("[12,345]<stderr>:x"), "x");
        assert_eq!(strip_tag("[a,0]<stdout>:x"), "[a,0]<stdout>:x");
        assert_eq!(strip_tag("[1,0]<stdout"), "[1,0]<stdout");
        assert_eq!(parse_tool_size("1G"), Some(1 << 30));
        assert_eq!(parse_tool_size("1024M"), Some(1 << 30));
        assert_eq!(parse_tool_size("8"), Some(8));
        assert_eq!(parse_tool_size("x"), None);
        assert_eq!(parse_tool_size("99999999999999999999G"), None);
    }
}
