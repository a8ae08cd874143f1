//! OSU micro-benchmarks collective latency tests (`osu_allreduce`,
//! `osu_allgather`, `osu_alltoall`, `osu_bcast`, `osu_reduce_scatter`, …,
//! and their `osu_nccl_*` / `-CUDA` / `-ROCM` variants).
//!
//! What they print (OMB 7.1 `c/util/osu_util_mpi.c`, `print_preamble`,
//! `print_only_header`, `print_stats`, `print_stats_validate`; the copy in
//! github.com/lanl/benchmarks @7e0fdf9 `microbenchmarks/osumb/`):
//!
//! ```text
//! # OSU MPI Allreduce Latency Test v7.1
//! # Datatype: MPI_CHAR.
//! # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
//! 4                     136.08             99.29            164.85        1000
//! ```
//!
//! Header `"%-10s%20s"` (`# Size`, `Avg Latency(us)`; `-f` adds `Min
//! Latency(us)`, `Max Latency(us)`, `Iterations`; `-c` adds
//! `Validation`), rows `"%-10d%20.2f"` (bytes, µs) and the same extras
//! (`Pass` / `Fail` for validation). Columns are found by name; others are
//! skipped. The collective comes from the title (`# OSU MPI Allreduce
//! Latency Test`) or the program name; OSU prints no rank count, so it
//! comes from the launch line (`mpirun -np 16 osu_allreduce`), else the
//! caller supplies it ([`super::Log::assume`]). `Size` is the tool's
//! message size: for osu_allgather, osu_gather and osu_scatter one rank's
//! part, for osu_alltoall one peer's (`MPI_Alltoall`'s per-destination
//! count, OMB `c/mpi/collective/blocking/osu_alltoall.c`), where
//! nccl-tests' `size` is the whole buffer, ranks × that (nccl-tests
//! `src/alltoall.cu` `AlltoAllGetCollByteCount`: `sendcount = nranks ×
//! paramcount`; the `count` it prints is elements per peer). Such sizes
//! are multiplied by the rank count as soon as it is known
//! ([`Pending::PerRankSizes`]); osu_allreduce, osu_bcast, osu_reduce and
//! osu_reduce_scatter print the whole buffer already. OMB 7.x
//! `--tail-lat` columns (`P50 Tail Lat(us)`) are skipped.

use super::launch;
use super::lines::StreamReader;
use super::{
    excerpt, measure, measure_expected, parse_count, Collective, FormatError, Halves, Pending, Row,
    Table, TableBuilder, Tool,
};

/// The collective of an OSU benchmark name, from its title words
/// (`Allreduce`, `All-to-All Personalized Exchange`, `Reduce_scatter`) or
/// program name (`osu_allreduce`, `osu_nccl_bcast`).
fn collective_of(name: &str) -> Collective {
    let key: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let key = key.strip_prefix("nccl").unwrap_or(&key);
    let key = key.strip_prefix("xccl").unwrap_or(key);
    match key {
        "allreduce" => Collective::AllReduce,
        "allgather" => Collective::AllGather,
        "reducescatter" => Collective::ReduceScatter,
        "bcast" | "broadcast" => Collective::Broadcast,
        "reduce" => Collective::Reduce,
        "gather" => Collective::Gather,
        "scatter" => Collective::Scatter,
        k if k == "alltoall" || k == "alltoallpersonalizedexchange" => Collective::AllToAll,
        k => Collective::Other(k.to_string()),
    }
}

/// The collective named by a title `OSU <library>[-ACCEL] <Name> Latency
/// Test[ vX.Y]`.
fn title_collective(comment: &str) -> Option<Collective> {
    let rest = comment.strip_prefix("OSU ")?;
    let end = rest.find(" Latency Test")?;
    let words = &rest[..end];
    // Skip the library word (`MPI`, `MPI-CUDA`, `NCCL`).
    let (_, name) = words.split_once(' ')?;
    Some(collective_of(name))
}

/// Collective and process count of a command line running `osu_*`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Command {
    collective: Collective,
    ranks: Option<usize>,
}

/// OMB's point-to-point latency tests (`c/mpi/pt2pt`), whose `# Size
/// Avg Latency(us)` tables look like a collective's.
const POINT_TO_POINT: [&str; 5] = [
    "latency",
    "latencymt",
    "latencymp",
    "multilat",
    "latencypersistent",
];

/// `P50`, `P99`: a percentile column's first word.
fn is_percentile(t: &str) -> bool {
    t.len() > 1 && t.starts_with('P') && t[1..].bytes().all(|c| c.is_ascii_digit())
}

/// Does the tool print one rank's part as `Size` for this collective
/// (see [`Pending::PerRankSizes`])?
fn per_rank_sizes(c: &Collective) -> bool {
    matches!(
        c,
        Collective::AllGather | Collective::AllToAll | Collective::Gather | Collective::Scatter
    )
}

/// Where the cells of a row are, from the header's names.
#[derive(Clone, Debug)]
struct Columns {
    size: usize,
    avg: usize,
    validation: Option<usize>,
    min_tokens: usize,
}

impl Columns {
    /// `# Size  Avg Latency(us) [Min Latency(us) Max Latency(us)
    /// Iterations] [Validation]` (without the `#`).
    fn from_header(comment: &str) -> Option<Columns> {
        let tok: Vec<&str> = comment.split_whitespace().collect();
        if tok.first() != Some(&"Size") {
            return None;
        }
        // Column names of one to three words; each column is one row token.
        let mut col = 0;
        let (mut avg, mut validation) = (None, None);
        let mut i = 1;
        while i < tok.len() {
            let t = tok[i];
            let next = tok.get(i + 1).copied().unwrap_or("");
            let words = if matches!(t, "Avg" | "Min" | "Max") && next.starts_with("Latency") {
                if t == "Avg" {
                    avg.get_or_insert(col);
                }
                2
            } else if t.starts_with("Latency") {
                avg.get_or_insert(col);
                // `Latency (us)`: the unit as its own word.
                if next == "(us)" {
                    2
                } else {
                    1
                }
            } else if is_percentile(t) && next == "Tail" {
                // `P50 Tail Lat(us)` (OMB 7.x `--tail-lat`).
                3
            } else if (t == "Transmit" && next == "Size")
                || (t == "Bandwidth" && next.starts_with('('))
            {
                2
            } else {
                if t == "Validation" {
                    validation = Some(col);
                }
                1
            };
            i += words;
            col += 1;
        }
        let avg = avg? + 1;
        let validation = validation.map(|v| v + 1);
        Some(Columns {
            size: 0,
            avg,
            validation,
            min_tokens: avg.max(validation.unwrap_or(0)) + 1,
        })
    }

    fn parse_row(
        &self,
        line: usize,
        text: &str,
        dtype: Option<&str>,
    ) -> Result<Option<Row>, FormatError> {
        let tok: Vec<&str> = text.split_whitespace().collect();
        if tok.len() < self.min_tokens {
            return Err(FormatError::BadRow {
                line,
                text: excerpt(text),
                expected: format!(
                    "a row `Size  Avg Latency(us) …` (bytes, µs; {} columns)",
                    self.min_tokens
                ),
            });
        }
        let bad = |column: &str, value: &str, expected: &str| FormatError::BadCell {
            line,
            column: column.to_string(),
            value: excerpt(value),
            expected: expected.to_string(),
        };
        let bytes = parse_count(tok[self.size])
            .ok_or_else(|| bad("Size", tok[self.size], "a size in bytes (digits)"))?;
        let m = measure(
            bytes,
            tok[self.avg],
            None,
            None,
            self.validation.map(|i| tok[i]),
        )
        .map_err(|(col, v)| bad("Avg Latency(us)", &v, measure_expected(col)))?;
        Ok(m.map(|out_of_place| Row {
            line,
            bytes,
            count: None,
            dtype: dtype.map(str::to_string),
            redop: None,
            root: None,
            out_of_place,
            in_place: None,
        }))
    }
}

/// Reads OSU tables from one stream.
pub(crate) struct Reader {
    command: Option<Command>,
    title: Option<Collective>,
    dtype: Option<String>,
    open: Option<(Columns, TableBuilder)>,
    tables: Vec<Table>,
}

impl Reader {
    fn close(&mut self) {
        if let Some((_, b)) = self.open.take() {
            let mut t = b.finish();
            if let Some(Collective::Other(k)) = &t.collective {
                if POINT_TO_POINT.contains(&k.as_str()) {
                    t.rejected = Some(format!(
                        "osu_{k} is a point-to-point test (one pair of ranks), not a collective"
                    ));
                }
            }
            if t.collective.as_ref().is_some_and(per_rank_sizes) {
                t.pending = Some(Pending::PerRankSizes);
                t.resolve();
            }
            self.tables.push(t);
        }
    }
}

impl StreamReader for Reader {
    type Launch = Command;

    fn launch(body: &str) -> Option<Command> {
        let t = body.trim_start();
        if !body.contains("osu_") || t.starts_with('#') {
            return None;
        }
        let l = launch::parse(t, |b| b.starts_with("osu_") && b.len() > 4)?;
        Some(Command {
            collective: collective_of(&l.program[4..]),
            ranks: l.procs,
        })
    }

    fn new(launch: Option<Command>) -> Reader {
        Reader {
            command: launch,
            title: None,
            dtype: None,
            open: None,
            tables: Vec::new(),
        }
    }

    fn on_launch(&mut self, launch: Command) {
        self.close();
        self.command = Some(launch);
        self.title = None;
        self.dtype = None;
    }

    fn on_line(&mut self, no: usize, body: &str) {
        let line = body.trim();
        if let Some(comment) = line.strip_prefix('#') {
            let c = comment.trim();
            if let Some(coll) = title_collective(c) {
                self.close();
                self.title = Some(coll);
                self.dtype = None;
            } else if let Some(d) = c.strip_prefix("Datatype:") {
                self.close();
                self.dtype = Some(d.trim().trim_end_matches('.').to_string());
            } else if let Some(cols) = Columns::from_header(c) {
                if self.open.as_ref().is_some_and(|(_, b)| b.is_blank()) {
                    return;
                }
                self.close();
                let mut b = TableBuilder::new(Tool::Osu, no, Halves::OutOfPlace);
                let t = b.table_mut();
                t.collective = self
                    .title
                    .clone()
                    .or_else(|| self.command.as_ref().map(|c| c.collective.clone()));
                t.ranks = self.command.as_ref().and_then(|c| c.ranks);
                self.open = Some((cols, b));
            }
            return;
        }
        if let Some((cols, b)) = self.open.as_mut() {
            if line.bytes().next().is_some_and(|c| c.is_ascii_digit()) {
                let dtype = self.dtype.as_deref();
                b.row(no, line, || cols.parse_row(no, line, dtype));
            }
        }
    }

    fn finish(mut self) -> Vec<Table> {
        self.close();
        self.tables
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_and_program_names() {
        assert_eq!(
            title_collective("OSU MPI Allreduce Latency Test v7.1"),
            Some(Collective::AllReduce)
        );
        assert_eq!(
            title_collective("OSU MPI-CUDA All-to-All Personalized Exchange Latency Test v7.1"),
            Some(Collective::AllToAll)
        );
        assert_eq!(
            title_collective("OSU NCCL Reduce_scatter Latency Test"),
            Some(Collective::ReduceScatter)
        );
        assert_eq!(title_collective("OSU MPI Latency Test v7.1"), None);
        assert_eq!(collective_of("bcast"), Collective::Broadcast);
        assert_eq!(collective_of("nccl_allgather"), Collective::AllGather);
    }

    #[test]
    fn header_names_find_the_columns() {
        let c = Columns::from_header(
            "Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations          Validation",
        )
        .unwrap();
        assert_eq!((c.avg, c.validation, c.min_tokens), (1, Some(5), 6));
        // OMB 7.x `--tail-lat`: three-word percentile columns after the
        // validation column.
        let c = Columns::from_header(
            "Size       Avg Latency(us)        Validation     P50 Tail Lat(us)     P99 Tail Lat(us)",
        )
        .unwrap();
        assert_eq!((c.avg, c.validation, c.min_tokens), (1, Some(2), 3));
        let c = Columns::from_header(
            "Size Avg Latency(us) Min Latency(us) Max Latency(us) Iterations P90 Tail Lat(us) Validation",
        )
        .unwrap();
        assert_eq!((c.avg, c.validation, c.min_tokens), (1, Some(6), 7));
        let c = Columns::from_header("Size       Avg Latency(us)").unwrap();
        assert_eq!((c.avg, c.min_tokens), (1, 2));
        assert!(Columns::from_header("Size of things").is_none());
    }
}
