//! Measurement logs in: nccl-tests / rccl-tests text output
//! ([`nccl_tests`]) and `-J` JSON output ([`nccl_json`]), Ascend
//! `hccl_test` output ([`hccl_test`]) and OSU micro-benchmarks collective
//! latency output ([`osu`]), parsed into a [`Log`] of [`Table`]s of
//! [`Row`]s that [`super::calibrate`] fits a profile to.
//!
//! ## What is read, and how
//! - **Launcher prefixes** are stripped first ([`lines`]): mpirun
//!   `--tag-output` (`[1,0]<stdout>:`), MPICH / Intel MPI `-prepend-rank`
//!   (`[0] `), Slurm `srun -l` (` 0: `), pdsh (`host: `), `kubectl logs
//!   --timestamps` (`YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ `) and `--prefix`
//!   (`[pod/p/c] `), in any mix. Lines with different rank / host labels
//!   are read as separate streams, so output interleaved from several ranks
//!   still gives whole tables; a launch line without a label applies to
//!   every stream.
//! - **Columns are found by their header names**, never by counting
//!   tokens: `size count type redop root time|cputime algbw busbw
//!   #wrong|error`, repeated for the out-of-place and in-place halves (the
//!   line above the header says which halves are printed). Columns the
//!   reader does not know (nccl-tests' `-S` timestamps, `-I`
//!   per-iteration statistics, vendor extras) are skipped.
//! - **`N/A` (or `nan`) cells are missing values**: a missing algbw is
//!   computed as `size / time`, a missing busbw stays `None`, a row whose
//!   time is missing is left out and noted ([`Table::notes`]).
//! - **Each table stands alone.** A malformed row makes its table
//!   [`Table::rejected`] with the line, the cell, its value and what was
//!   expected; every other table of the input is still read. A table whose
//!   numbers are physically impossible (one rank, or an algbw above any
//!   device's memory bandwidth) is rejected the same way. [`parse_log`]
//!   fails only when nothing in the input is recognizable.
//! - **Duplicated output is kept once**: a table in which every row occurs
//!   the same number of times `k ≥ 2` (two ranks printing the same lines
//!   unlabelled) keeps one of each, and a table repeated with the same
//!   measurements (every rank printing it) is kept once; the table's notes
//!   say so. (Rows that merely repeat, like nccl-tests' `count 0` rows, are
//!   kept.)
//! - **Sizes are nccl-tests' `size`** (`doc/PERFORMANCE.md`: the whole
//!   buffer). A tool printing one rank's or one peer's part (OSU's
//!   osu_allgather, osu_alltoall, osu_gather, osu_scatter) has its sizes
//!   multiplied by the rank count once it is known; a table that cannot
//!   be converted yet (no rank count in the input, or busbw without a
//!   collective) waits ([`Pending`]), rejected with what to pass, until
//!   [`Log::assume`] gives the caller's rank count and collective.
//!
//! Parsing never panics and runs in time linear in the input (up to
//! [`MAX_LOG_BYTES`]).

pub(crate) mod columns;
pub(crate) mod delimited;
pub mod hccl_test;
pub(crate) mod json_records;
pub mod launch;
pub mod lines;
pub mod msccl;
pub mod nccl_json;
pub mod nccl_tests;
pub mod osu;
pub(crate) mod records;
pub mod report;
pub mod trace;
pub mod tuner;

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fmt;
use thiserror::Error;

/// Highest algbw any real collective measurement can show, GB/s: above the
/// memory bandwidth of every device in the fixtures' class (H100 HBM3
/// 3,350 GB/s; MI300X 5,300 GB/s), with margin. A row above it timed
/// nothing (the 1-GPU in-place no-op of the 2080 Ti log shows 5.7 million).
pub const MAX_PLAUSIBLE_ALGBW_GBPS: f64 = 10_000.0;

/// Largest input [`parse_log`] reads, bytes (64 MiB: about 500 000 rows of
/// nccl-tests output). Larger input is [`FormatError::TooLarge`].
pub const MAX_LOG_BYTES: usize = 64 << 20;

/// Which program wrote a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// NVIDIA nccl-tests or AMD rccl-tests (`*_perf`): text, `-J` JSON,
    /// rccl-tests' `--output_file` CSV and JSON; also tables of their
    /// numbers from elsewhere (pasted from a README or wiki, `cclsim`'s
    /// own JSON lines and CSV), which carry the same columns.
    NcclTests,
    /// Huawei `hccl_test` (`*_test`).
    HcclTest,
    /// OSU micro-benchmarks collective latency tests (`osu_allreduce`, …).
    Osu,
}

impl Tool {
    /// The program's name as its users write it (`nccl-tests`).
    pub fn name(&self) -> &'static str {
        match self {
            Tool::NcclTests => "nccl-tests",
            Tool::HcclTest => "hccl_test",
            Tool::Osu => "OSU micro-benchmarks",
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
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
    /// The collective a file name says, where it says one (nccl-tests'
    /// spellings `all_reduce`, `all_gather`, `reduce_scatter`, `alltoall`,
    /// `broadcast`, `reduce`, `sendrecv`, or ours without the underscore;
    /// the longest match wins, so `reduce_scatter` is not `reduce`).
    pub fn from_file_name(name: &str) -> Option<Collective> {
        let n = name.to_ascii_lowercase();
        [
            "reduce_scatter",
            "reducescatter",
            "all_reduce",
            "allreduce",
            "all_gather",
            "allgather",
            "alltoall",
            "all_to_all",
            "broadcast",
            "sendrecv",
            "reduce",
        ]
        .into_iter()
        .find(|k| n.contains(k))
        .map(|k| Collective::from_tool_name(&k.replace("all_to_all", "alltoall")))
    }

    /// From a tool's base name without `_perf` / `_test` / `osu_`
    /// (`all_reduce`, `allreduce`, `bcast`, `AllReduce`): the one
    /// vocabulary of [`Primitive::from_name`](super::collective::Primitive::from_name),
    /// plus `alltoallv` (hccl_test's, read as AlltoAll) and `hypercube`;
    /// any other name is [`Collective::Other`].
    pub fn from_tool_name(name: &str) -> Collective {
        use super::collective::Primitive;
        match Primitive::from_name(name) {
            Some(Primitive::AllReduce) => Collective::AllReduce,
            Some(Primitive::AllGather) => Collective::AllGather,
            Some(Primitive::ReduceScatter) => Collective::ReduceScatter,
            Some(Primitive::Broadcast) => Collective::Broadcast,
            Some(Primitive::Reduce) => Collective::Reduce,
            Some(Primitive::AlltoAll | Primitive::AlltoAllV) => Collective::AllToAll,
            Some(Primitive::SendRecv) => Collective::SendRecv,
            Some(Primitive::Gather) => Collective::Gather,
            Some(Primitive::Scatter) => Collective::Scatter,
            _ if name.eq_ignore_ascii_case("hypercube") => Collective::HyperCube,
            _ => Collective::Other(name.to_ascii_lowercase()),
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
    /// Average time of one collective, µs (nccl-tests `time`, or `cputime`
    /// with `-C 1`; hccl_test `aveg_time`; OSU `Avg Latency(us)`).
    pub time_us: f64,
    /// `size / time`, GB/s (1e9 bytes): as printed; computed from size and
    /// time where the tool prints none (OSU) or prints `N/A`.
    pub algbw_gbps: f64,
    /// busbw, GB/s, as printed (`None`: not printed, as by hccl_test and
    /// OSU, or `N/A`).
    pub busbw_gbps: Option<f64>,
    /// The check column as printed: `#wrong` count, old `error` value,
    /// `N/A`, hccl_test's `success` / `failed` / `NULL`, OSU's `Pass` /
    /// `Fail`; `N/A` where the tool printed no check column.
    pub check: String,
}

/// One message size of a table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// 1-based line number in the input (JSON: the line where the result
    /// record starts).
    pub line: usize,
    /// Message size, bytes, in nccl-tests' convention: its `size`
    /// (`doc/PERFORMANCE.md`; AllGather / AlltoAll: the whole receive /
    /// send buffer, `n` times one rank's part); hccl_test's `data_size`
    /// (one NPU's data); OSU's `Size`, multiplied by the rank count for
    /// osu_allgather, osu_alltoall (bytes per peer), osu_gather and
    /// osu_scatter once it is known ([`Pending::PerRankSizes`]; until
    /// then, as printed, and the table waits); a pasted table's size
    /// label as the power of two it rounds (`65K` = 65536).
    pub bytes: u64,
    /// Elements as printed (`count`: nccl-tests prints the per-rank
    /// parameter, for AlltoAll the elements per peer, `size / (n ×
    /// type size)`); `None` for hccl_test, OSU and tables without one.
    pub count: Option<u64>,
    /// Element type as printed (`float`, `double`, `fp32`, OSU's
    /// `MPI_CHAR`), if printed.
    pub dtype: Option<String>,
    /// Reduce op as printed (`sum`, `none`), if printed.
    pub redop: Option<String>,
    /// Root rank (`-1` = none), if the table has a `root` column (old
    /// nccl-tests tables of non-rooted collectives have none).
    pub root: Option<i64>,
    /// The row's first timing: out-of-place; in an in-place-only table
    /// ([`Halves::InPlace`]) the in-place one; hccl_test's and OSU's only
    /// timing.
    pub out_of_place: Measure,
    /// In-place timing, if the table prints both halves.
    pub in_place: Option<Measure>,
}

impl Row {
    /// A `count 0` / `size 0` row: kept for display, never fitted (its time
    /// is launch overhead, not a transfer).
    pub fn is_empty(&self) -> bool {
        self.bytes == 0 || self.count == Some(0)
    }
}

/// Which timings a table prints (nccl-tests: the line above the column
/// header, `out-of-place  in-place`; rccl-tests `-O 0` prints in-place only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Halves {
    /// Out-of-place then in-place (nccl-tests' default).
    #[default]
    Both,
    /// One timing, out-of-place (hccl_test and OSU have only this one).
    OutOfPlace,
    /// One timing, in-place (rccl-tests `-O 0`); [`Row::out_of_place`]
    /// holds it.
    InPlace,
}

/// A conversion a table's rows wait for because the input does not say
/// what it needs (the rank count, the collective). Until
/// [`Table::assume`] supplies it the table is [`Table::rejected`] with a
/// sentence naming what to pass, so nothing fits numbers in the wrong
/// convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pending {
    /// Each row's size is one rank's part (OSU's osu_allgather,
    /// osu_gather, osu_scatter: `sendcount` per rank) or one peer's
    /// (osu_alltoall: bytes per destination; OMB
    /// `c/mpi/collective/blocking/osu_alltoall.c` passes `size` as
    /// `MPI_Alltoall`'s per-peer count). nccl-tests' `size` is the whole
    /// buffer, ranks × that (nccl-tests `src/all_gather.cu`,
    /// `src/alltoall.cu` `GetCollByteCount`: `sendcount = nranks ×
    /// paramcount`): waits for the rank count.
    PerRankSizes,
    /// The input gives busbw only (a pasted table): algbw = busbw /
    /// the collective's factor on `n` ranks ([`Collective::busbw_factor`],
    /// nccl-tests `doc/PERFORMANCE.md`), time = size / algbw. Waits for
    /// the rank count and the collective; until then each measure's time
    /// and algbw are 0.
    FromBusbw,
}

impl Pending {
    /// Why a table waiting for this conversion is rejected, and what to
    /// pass.
    pub fn reason(self) -> &'static str {
        match self {
            Pending::PerRankSizes => "each size is one rank's part (one peer's for alltoall) and nccl-tests' size is ranks × that; the input prints no rank count: pass it (--ranks N)",
            Pending::FromBusbw => "only busbw is given: the time needs the collective and the rank count (algbw = busbw / the collective's busbw factor): pass them (--op NAME --ranks N)",
        }
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
    /// X_perf`, the command line, OSU's title), or, for nccl-tests tables
    /// that name none, inferred from the printed busbw / algbw ratio (see
    /// [`Table::notes`]).
    pub collective: Option<Collective>,
    /// Number of ranks, if derivable from the log (`# Using devices` rank
    /// lines; else `mpirun -np P` × `-g G` × `-t T`; else `-g G` × `-t T` of
    /// a command without mpirun; hccl_test: `mpirun -n P`, else its `-p`
    /// NPUs per node × the launcher's node count; OSU: the launcher's
    /// process count; JSON: devices × threads × GPUs of its `config`).
    pub ranks: Option<usize>,
    /// Number of nodes, if the log lists the host of every rank
    /// (nccl-tests' `#  Rank r Group g Pid p on HOST device d [bus] NAME`
    /// lines: the distinct hosts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<usize>,
    /// The accelerator's name as the log prints it (the `NAME` of those
    /// lines, e.g. `NVIDIA A100-SXM4-40GB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerator: Option<String>,
    /// Rows in order.
    pub rows: Vec<Row>,
    /// Why the table must not be fitted, if it must not: a malformed row
    /// (its line, the cell, the value and what was expected) or impossible
    /// numbers.
    pub rejected: Option<String>,
    /// Which timings the table prints.
    #[serde(default)]
    pub halves: Halves,
    /// What the reader did that a user should know: rows left out (time
    /// `N/A`), duplicates dropped, the collective inferred, the stream
    /// (launcher label) the table came from, sizes converted.
    #[serde(default)]
    pub notes: Vec<String>,
    /// A conversion the rows still wait for (see [`Pending`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
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

    /// Supplies what the input does not print: the rank count (`ranks`,
    /// if the table has none) and the collective (`collective`, if it
    /// names none), each noted; then runs the conversion the table waits
    /// for ([`Table::pending`]) if it now can. What `cclsim fit --ranks
    /// --op` and the page's rank count do before fitting. Idempotent.
    pub fn assume(&mut self, ranks: Option<usize>, collective: Option<&Collective>) {
        if let (None, Some(n)) = (self.ranks, ranks) {
            self.ranks = Some(n);
            self.notes.push(format!(
                "{n} ranks as given (the input prints no rank count)"
            ));
        }
        if let (None, Some(c)) = (&self.collective, collective) {
            self.collective = Some(c.clone());
            self.notes.push(format!(
                "{} as given (the input names no collective)",
                c.name()
            ));
        }
        self.resolve();
    }

    /// Runs the pending conversion if the rank count (and, from busbw,
    /// the collective) are known; else rejects the table saying what to
    /// pass. Tables rejected for another reason stay so.
    pub(crate) fn resolve(&mut self) {
        let Some(p) = self.pending else { return };
        let waiting = Some(p.reason().to_string());
        let ready = match (p, self.ranks, &self.collective) {
            (Pending::PerRankSizes, Some(n), _) => Some(n),
            (Pending::FromBusbw, Some(n), Some(_)) => Some(n),
            _ => None,
        };
        let Some(n) = ready else {
            if self.rejected.is_none() {
                self.rejected = waiting;
            }
            return;
        };
        let other_reason = self.rejected.is_some() && self.rejected != waiting;
        self.pending = None;
        if other_reason {
            return;
        }
        self.rejected = None;
        let converted = match p {
            Pending::PerRankSizes => self.scale_sizes(n),
            Pending::FromBusbw => self.times_from_busbw(n),
        };
        match converted {
            Err(why) => self.rejected = Some(why),
            Ok(()) => self.check_plausible(),
        }
    }

    /// Multiplies every size by `n` (per-rank parts to nccl-tests' whole
    /// buffer) and recomputes algbw from it.
    fn scale_sizes(&mut self, n: usize) -> Result<(), String> {
        for r in &mut self.rows {
            let whole = r.bytes.checked_mul(n as u64).ok_or_else(|| {
                format!(
                    "line {}: {} bytes × {n} ranks is more bytes than any buffer",
                    r.line, r.bytes
                )
            })?;
            let ratio = whole as f64 / r.bytes.max(1) as f64;
            r.bytes = whole;
            for m in std::iter::once(&mut r.out_of_place).chain(r.in_place.as_mut()) {
                m.algbw_gbps *= ratio;
            }
        }
        let part = match &self.collective {
            Some(Collective::AllToAll) => "one peer's part (alltoall)".to_string(),
            Some(c) => format!("one rank's part ({})", c.name()),
            None => "one rank's part".to_string(),
        };
        self.notes.push(format!(
            "sizes are × {n} ranks: the tool prints {part}, nccl-tests' size is the whole buffer"
        ));
        Ok(())
    }

    /// Turns busbw into algbw and time on `n` ranks of the table's
    /// collective; rows whose busbw is 0 (no time can follow) are left
    /// out and noted.
    fn times_from_busbw(&mut self, n: usize) -> Result<(), String> {
        let coll = self.collective.clone().unwrap_or(Collective::AllReduce);
        let factor = coll.busbw_factor(n);
        if factor.is_nan() || factor <= 0.0 {
            return Err(format!(
                "{} on {n} rank(s) has busbw factor {factor}: no time follows from busbw",
                coll.name()
            ));
        }
        let mut dropped = Vec::new();
        self.rows.retain_mut(|r| {
            let bytes = r.bytes as f64;
            let mut ok = true;
            for m in std::iter::once(&mut r.out_of_place).chain(r.in_place.as_mut()) {
                let bus = m.busbw_gbps.unwrap_or(0.0);
                m.algbw_gbps = bus / factor;
                m.time_us = if m.algbw_gbps > 0.0 {
                    bytes / (m.algbw_gbps * 1e3)
                } else {
                    0.0
                };
                ok &= m.algbw_gbps > 0.0 || r.bytes == 0;
            }
            if !ok {
                dropped.push(r.line);
            }
            ok
        });
        self.notes.push(format!(
            "times from busbw: algbw = busbw / {factor} ({} on {n} ranks), time = size / algbw",
            coll.name()
        ));
        if !dropped.is_empty() {
            self.notes.push(format!(
                "{} row(s) with busbw 0 left out (no time follows; line {})",
                dropped.len(),
                dropped
                    .iter()
                    .take(5)
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.rows.is_empty() {
            return Err(format!(
                "no row with a busbw above 0 after the header at line {}",
                self.line
            ));
        }
        Ok(())
    }

    /// Do two tables hold the same measurements (ignoring line numbers and
    /// notes)? Used to keep output printed by several ranks once.
    fn same_measurements(&self, other: &Table) -> bool {
        self.tool == other.tool
            && self.collective == other.collective
            && self.ranks == other.ranks
            && self.halves == other.halves
            && self.rejected.is_some() == other.rejected.is_some()
            && self.rows.len() == other.rows.len()
            && self.rows.iter().zip(&other.rows).all(|(a, b)| {
                a.bytes == b.bytes
                    && a.count == b.count
                    && a.dtype == b.dtype
                    && a.redop == b.redop
                    && a.root == b.root
                    && a.out_of_place == b.out_of_place
                    && a.in_place == b.in_place
            })
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

    /// [`Table::assume`] on every table: the caller's rank count and
    /// collective where the input gives none.
    pub fn assume(&mut self, ranks: Option<usize>, collective: Option<&Collective>) {
        for t in &mut self.tables {
            t.assume(ranks, collective);
        }
    }

    /// Tables that are rejected, with their reasons.
    pub fn rejected(&self) -> Vec<(&Table, &str)> {
        self.tables
            .iter()
            .filter_map(|t| t.rejected.as_deref().map(|r| (t, r)))
            .collect()
    }
}

/// Why a log, a table or a row could not be read.
#[derive(Debug, Error, Clone, PartialEq, Serialize, Deserialize)]
pub enum FormatError {
    /// A line inside a table starts like a data row but has too few
    /// columns.
    #[error("line {line}: expected {expected}, found `{text}`")]
    BadRow {
        /// 1-based line number.
        line: usize,
        /// The line (truncated to 100 characters).
        text: String,
        /// What a row of this table looks like.
        expected: String,
    },
    /// One cell of a data row is not what its column holds.
    #[error("line {line}: {column} is `{value}`; expected {expected}")]
    BadCell {
        /// 1-based line number.
        line: usize,
        /// The column, as its header names it (`out-of-place time`).
        column: String,
        /// The cell (truncated to 100 characters).
        value: String,
        /// What the column holds.
        expected: String,
    },
    /// A row of a CSV or markdown table has another number of fields than
    /// its header names: it is never read by position.
    #[error("line {line}: {found} fields, but the header (line {header_line}) names {expected} columns ({names}){hint}; a row is read by the header's names, so this one cannot be read without shifting its cells: `{text}`")]
    FieldCount {
        /// 1-based line of the row.
        line: usize,
        /// Fields in the row.
        found: usize,
        /// 1-based line of the header.
        header_line: usize,
        /// Columns the header names.
        expected: usize,
        /// The header's names (truncated to 100 characters).
        names: String,
        /// The row (truncated to 100 characters).
        text: String,
        /// A known cause, if one fits (empty otherwise).
        hint: String,
    },
    /// The input starts like JSON but is not valid JSON.
    #[error(
        "line {line}, column {column}: not valid JSON ({message}); expected nccl-tests `-J` output or JSON records (rccl-tests `-Z json`, `cclsim --format jsonl`)"
    )]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// The input is a tuner's file (NCCL's example tuner CSV, HCCL's
    /// tuner-plugin JSON): choices per size, not measurements.
    #[error("this is {0}: a table of what the library runs at each size, not measurements; read it with `cclsim tuner FILE`")]
    TunerFile(String),
    /// Input larger than [`MAX_LOG_BYTES`].
    #[error("the log is {bytes} bytes, larger than {cap} bytes (the cap for a log)")]
    TooLarge {
        /// Size of the input, bytes.
        bytes: usize,
        /// The cap, bytes.
        cap: usize,
    },
    /// No table in the input.
    #[error("no table found: expected an nccl-tests / rccl-tests header line (`#  size  count  type  redop  root  time  algbw  busbw ...`), nccl-tests -J JSON (`{{\"version\": ..., \"results\": [...]}}`), an hccl_test header (`data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:`) or an OSU header (`# Size  Avg Latency(us)`)")]
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

/// Is a cell a missing value (`N/A`, `nan`, `-nan`)?
pub(crate) fn is_missing(cell: &str) -> bool {
    cell.eq_ignore_ascii_case("n/a") || cell.eq_ignore_ascii_case("nan") || cell == "-nan"
}

/// A byte / element count cell: decimal digits.
pub(crate) fn parse_count(cell: &str) -> Option<u64> {
    if cell.is_empty() || cell.len() > 20 || !cell.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    cell.parse().ok()
}

/// A non-negative finite decimal (`764.55`, `1.2e+06`).
pub(crate) fn parse_nonneg(cell: &str) -> Option<f64> {
    let v: f64 = cell.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// Builds a [`Measure`] from its cells. `Ok(None)` if the time is missing
/// (`N/A`); `Err((column, value))` names the first bad cell.
pub(crate) fn measure(
    bytes: u64,
    time: &str,
    algbw: Option<&str>,
    busbw: Option<&str>,
    check: Option<&str>,
) -> Result<Option<Measure>, (&'static str, String)> {
    if is_missing(time) {
        return Ok(None);
    }
    let time_us = parse_nonneg(time).ok_or(("time", time.to_string()))?;
    let computed = || {
        if time_us > 0.0 {
            bytes as f64 / (time_us * 1e3)
        } else {
            0.0
        }
    };
    let algbw_gbps = match algbw {
        Some(a) if !is_missing(a) => parse_nonneg(a).ok_or(("algbw", a.to_string()))?,
        _ => computed(),
    };
    let busbw_gbps = match busbw {
        Some(b) if !is_missing(b) => Some(parse_nonneg(b).ok_or(("busbw", b.to_string()))?),
        _ => None,
    };
    Ok(Some(Measure {
        time_us,
        algbw_gbps,
        busbw_gbps,
        check: check.unwrap_or("N/A").to_string(),
    }))
}

/// What a measure column holds, for error messages.
pub(crate) fn measure_expected(column: &str) -> &'static str {
    match column {
        "time" => "a time in µs (a number ≥ 0, or N/A)",
        _ => "a bandwidth in GB/s (a number ≥ 0, or N/A)",
    }
}

/// Collects one table's rows: keeps the first malformed row as the
/// table's rejection, notes rows without a time, and keeps output printed
/// several times once (every row repeated the same number of times: two
/// ranks printing the same lines unlabelled).
pub(crate) struct TableBuilder {
    table: Table,
    /// Hash of the whitespace-normalised text of each accepted row.
    keys: Vec<u64>,
    first_error: Option<FormatError>,
    more_errors: usize,
    missing: Vec<usize>,
    seen_any: bool,
}

impl TableBuilder {
    pub(crate) fn new(tool: Tool, line: usize, halves: Halves) -> TableBuilder {
        TableBuilder {
            table: Table {
                tool,
                line,
                collective: None,
                ranks: None,
                nodes: None,
                accelerator: None,
                rows: Vec::new(),
                rejected: None,
                halves,
                notes: Vec::new(),
                pending: None,
            },
            keys: Vec::new(),
            first_error: None,
            more_errors: 0,
            missing: Vec::new(),
            seen_any: false,
        }
    }

    pub(crate) fn table_mut(&mut self) -> &mut Table {
        &mut self.table
    }

    /// Has no data line been seen yet?
    pub(crate) fn is_blank(&self) -> bool {
        !self.seen_any
    }

    /// A bad input that is not one row (a record of the wrong shape):
    /// the table's rejection if it is the first, and `more` after it.
    pub(crate) fn fail(&mut self, e: FormatError, more: usize) {
        self.seen_any = true;
        if self.first_error.is_none() {
            self.first_error = Some(e);
            self.more_errors += more;
        } else {
            self.more_errors += 1 + more;
        }
    }

    /// One data line.
    pub(crate) fn row(
        &mut self,
        line: usize,
        text: &str,
        parse: impl FnOnce() -> Result<Option<Row>, FormatError>,
    ) {
        self.seen_any = true;
        match parse() {
            Ok(Some(r)) => {
                self.table.rows.push(r);
                let mut h = std::collections::hash_map::DefaultHasher::new();
                for t in text.split_whitespace() {
                    std::hash::Hash::hash(t, &mut h);
                }
                self.keys.push(std::hash::Hasher::finish(&h));
            }
            Ok(None) => self.missing.push(line),
            Err(e) => {
                if self.first_error.is_none() {
                    self.first_error = Some(e);
                } else {
                    self.more_errors += 1;
                }
            }
        }
    }

    /// If every row's text occurs the same number of times `k ≥ 2`, the
    /// output was printed `k` times: keep the first of each.
    fn dedupe(&mut self) {
        let mut counts: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        for k in &self.keys {
            *counts.entry(*k).or_insert(0) += 1;
        }
        let Some(&k) = counts.values().next() else {
            return;
        };
        if k < 2 || counts.values().any(|&c| c != k) {
            return;
        }
        let mut seen: HashSet<u64> = HashSet::new();
        let keep: Vec<bool> = self.keys.iter().map(|key| seen.insert(*key)).collect();
        let mut it = keep.iter();
        self.table.rows.retain(|_| *it.next().unwrap_or(&true));
        self.table.notes.push(format!(
            "every row printed {k} times (output of several ranks interleaved); kept once"
        ));
    }

    /// The finished table: rejected by its first bad row, else checked for
    /// plausibility; notes on missing and duplicated rows.
    pub(crate) fn finish(mut self) -> Table {
        self.dedupe();
        let mut t = self.table;
        if !self.missing.is_empty() {
            let lines: Vec<String> = self.missing.iter().take(5).map(|l| l.to_string()).collect();
            t.notes.push(format!(
                "{} row(s) without a time (N/A) left out (line {}{})",
                self.missing.len(),
                lines.join(", "),
                if self.missing.len() > 5 { ", …" } else { "" }
            ));
        }
        if let Some(e) = self.first_error {
            t.rejected = Some(if self.more_errors > 0 {
                format!("{e} (and {} more bad row(s))", self.more_errors)
            } else {
                e.to_string()
            });
        } else if t.rows.is_empty() {
            t.rejected = Some(format!(
                "no data rows after the header at line {} (the run printed none)",
                t.line
            ));
        } else {
            t.check_plausible();
        }
        t
    }
}

/// Parses any supported log: nccl-tests `-J` JSON if the first line that
/// is not a `#` comment starts with `{`; else the text formats, every
/// table of every tool in file order.
///
/// Errors: [`FormatError::TooLarge`] above [`MAX_LOG_BYTES`];
/// [`FormatError::Json`] for malformed JSON input; [`FormatError::NoTable`]
/// if nothing in the input is a table. Malformed rows are not errors of
/// the log but of their table ([`Table::rejected`]).
pub fn parse_log(text: &str) -> Result<Log, FormatError> {
    if text.len() > MAX_LOG_BYTES {
        return Err(FormatError::TooLarge {
            bytes: text.len(),
            cap: MAX_LOG_BYTES,
        });
    }
    let read = match nccl_json::json_start(text) {
        Some(start) => parse_json(text, start),
        None => parse_text(text),
    };
    match read {
        Err(FormatError::NoTable) => Err(tuner::sniff(text)
            .map(|what| FormatError::TunerFile(what.to_string()))
            .unwrap_or(FormatError::NoTable)),
        other => other,
    }
}

/// JSON input: nccl-tests `-J` documents, else JSON records; a text log
/// may start with a `{...}` line of its own (a Python dict of settings),
/// so it is read as text when neither JSON reading finds a table.
fn parse_json(text: &str, start: usize) -> Result<Log, FormatError> {
    let json = match nccl_json::parse(text, start) {
        Ok(log) => return Ok(log),
        Err(FormatError::NoTable) => match json_records::parse(text, start) {
            Ok(tables) if !tables.is_empty() => return finish_log(tables),
            Ok(_) => FormatError::NoTable,
            Err(e) => e,
        },
        Err(e) => e,
    };
    match parse_text(text) {
        Err(FormatError::NoTable) => Err(json),
        other => other,
    }
}

fn parse_text(text: &str) -> Result<Log, FormatError> {
    let lines = lines::split(text);
    let mut tables = lines::read::<nccl_tests::Reader>(&lines);
    tables.extend(lines::read::<hccl_test::Reader>(&lines));
    tables.extend(lines::read::<osu::Reader>(&lines));
    tables.extend(delimited::read(text));
    finish_log(tables)
}

/// Orders tables by line, keeps tables repeated verbatim once.
pub(crate) fn finish_log(mut tables: Vec<Table>) -> Result<Log, FormatError> {
    tables.sort_by_key(|t| t.line);
    let mut out: Vec<Table> = Vec::with_capacity(tables.len());
    for t in tables {
        match out.iter_mut().find(|k| k.same_measurements(&t)) {
            Some(kept) => {
                let note = format!("printed again at line {} (kept once)", t.line);
                if kept.notes.len() < 20 {
                    kept.notes.push(note);
                }
            }
            None => out.push(t),
        }
    }
    if out.is_empty() {
        return Err(FormatError::NoTable);
    }
    Ok(Log { tables: out })
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
    fn sizes() {
        assert_eq!(parse_tool_size("1G"), Some(1 << 30));
        assert_eq!(parse_tool_size("1024M"), Some(1 << 30));
        assert_eq!(parse_tool_size("8"), Some(8));
        assert_eq!(parse_tool_size("x"), None);
        assert_eq!(parse_tool_size("99999999999999999999G"), None);
    }

    #[test]
    fn measures_treat_na_as_missing() {
        let m = measure(1000, "2.00", Some("N/A"), Some("N/A"), Some("N/A"))
            .unwrap()
            .unwrap();
        assert_eq!((m.time_us, m.algbw_gbps, m.busbw_gbps), (2.0, 0.5, None));
        assert_eq!(measure(1000, "N/A", None, None, None), Ok(None));
        assert_eq!(
            measure(1000, "fast", None, None, None),
            Err(("time", "fast".to_string()))
        );
        assert_eq!(
            measure(1000, "1.5e+03", Some("-1"), None, None),
            Err(("algbw", "-1".to_string()))
        );
    }

    #[test]
    fn a_too_large_log_names_its_size_and_the_cap() {
        let big = " ".repeat(MAX_LOG_BYTES + 1);
        assert_eq!(
            parse_log(&big).unwrap_err().to_string(),
            format!(
                "the log is {} bytes, larger than {} bytes (the cap for a log)",
                MAX_LOG_BYTES + 1,
                MAX_LOG_BYTES
            )
        );
    }
}
