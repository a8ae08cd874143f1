//! Huawei `hccl_test` output (CANN "HCCL Performance Tester"): one table
//! per run. The tool prints (hicann/oam-tools
//! `src/hccl_test/common/src/hccl_opbase_rootinfo_base.cc` @0d015da,
//! `print_execution_time`: header `"%-15s | %-12s | %-18s | %s"`, rows
//! `"%-17llu | %-14.2f | %-20.5f | success"`):
//!
//! ```text
//! data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:
//! 8192              | 764.55         | 0.00998              | success
//! ```
//!
//! Huawei's documentation (hiascend `HCCLpertest_16_0006`) shows the same
//! columns without the `|`; both are read. Columns are found by name
//! (`data_size`, `aveg_time`, `alg_bandwidth`, `check_result`); others are
//! skipped. `data_size` is the data of one NPU, `aveg_time` the
//! collective's time, `alg_bandwidth` `data_size / time` (algbw; hccl_test
//! prints no busbw), `check_result` `success`, `failed` or `NULL`.
//!
//! The collective comes from the command line (`./bin/all_reduce_test`),
//! the rank count from the launcher's process count (`mpirun -n 8`: one
//! process per NPU, hccl_test `docs/zh/hccl_test/cmdline_options_desc.md`:
//! `-n` is nodes × NPUs per node); without one, from hccl_test's own `-p`
//! (NPUs per node) × the launcher's node count, when both are given.

use super::launch::{self, parse_usize};
use super::lines::StreamReader;
use super::{
    excerpt, measure, measure_expected, parse_count, Collective, FormatError, Halves, Row, Table,
    TableBuilder, Tool,
};

/// Collective and rank count of a command line running `X_test`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Command {
    collective: Collective,
    ranks: Option<usize>,
}

impl Command {
    fn parse(line: &str) -> Option<Command> {
        let l = launch::parse(line, |b| b.ends_with("_test") && b.len() > 5)?;
        let collective = Collective::from_tool_name(&l.program[..l.program.len() - 5]);
        let mut npus = None;
        for w in l.args.windows(2) {
            if matches!(w[0].as_str(), "-p" | "--npus") {
                npus = parse_usize(&w[1]);
            }
        }
        let ranks = l.procs.or(match (npus, l.nodes) {
            (Some(p), Some(n)) => p.checked_mul(n),
            _ => None,
        });
        Some(Command { collective, ranks })
    }
}

/// Where the cells of a row are, from the header's names.
#[derive(Clone, Debug)]
struct Columns {
    size: usize,
    time: usize,
    algbw: Option<usize>,
    check: Option<usize>,
    min_tokens: usize,
}

/// Tokens of a header or row: whitespace- and `|`-separated.
fn tokens(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || c == '|')
        .filter(|t| !t.is_empty())
        .collect()
}

impl Columns {
    fn from_header(line: &str) -> Option<Columns> {
        let tok = tokens(line);
        let find = |name: &str| tok.iter().position(|t| t.starts_with(name));
        let (size, time) = (find("data_size")?, find("aveg_time")?);
        let (algbw, check) = (find("alg_bandwidth"), find("check_result"));
        let min_tokens = [Some(size), Some(time), algbw, check]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0)
            + 1;
        Some(Columns {
            size,
            time,
            algbw,
            check,
            min_tokens,
        })
    }

    fn parse_row(&self, line: usize, text: &str) -> Result<Option<Row>, FormatError> {
        let tok = tokens(text);
        if tok.len() < self.min_tokens {
            return Err(FormatError::BadRow {
                line,
                text: excerpt(text),
                expected: format!(
                    "a row `data_size | aveg_time | alg_bandwidth | check_result` (bytes, µs, GB/s, success|failed|NULL; {} columns)",
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
            .ok_or_else(|| bad("data_size", tok[self.size], "a size in bytes (digits)"))?;
        let m = measure(
            bytes,
            tok[self.time],
            self.algbw.map(|i| tok[i]),
            None,
            self.check.map(|i| tok[i]),
        )
        .map_err(|(col, v)| {
            let name = if col == "time" {
                "aveg_time"
            } else {
                "alg_bandwidth"
            };
            bad(name, &v, measure_expected(col))
        })?;
        Ok(m.map(|out_of_place| Row {
            line,
            bytes,
            count: None,
            dtype: None,
            redop: None,
            root: None,
            out_of_place,
            in_place: None,
        }))
    }
}

/// Reads hccl_test tables from one stream.
pub(crate) struct Reader {
    command: Option<Command>,
    open: Option<(Columns, TableBuilder)>,
    tables: Vec<Table>,
}

impl Reader {
    fn close(&mut self) {
        if let Some((_, b)) = self.open.take() {
            self.tables.push(b.finish());
        }
    }
}

impl StreamReader for Reader {
    type Launch = Command;

    fn launch(body: &str) -> Option<Command> {
        let t = body.trim_start();
        if !body.contains("_test") || t.starts_with('#') {
            return None;
        }
        Command::parse(t)
    }

    fn new(launch: Option<Command>) -> Reader {
        Reader {
            command: launch,
            open: None,
            tables: Vec::new(),
        }
    }

    fn on_launch(&mut self, launch: Command) {
        self.close();
        self.command = Some(launch);
    }

    fn on_line(&mut self, no: usize, body: &str) {
        let line = body.trim();
        if line.starts_with('#') {
            return;
        }
        if line.contains("data_size") && line.contains("aveg_time") {
            if let Some(cols) = Columns::from_header(line) {
                if self.open.as_ref().is_some_and(|(_, b)| b.is_blank()) {
                    // The same header printed again before any row.
                    return;
                }
                self.close();
                let mut b = TableBuilder::new(Tool::HcclTest, no, Halves::OutOfPlace);
                if let Some(c) = &self.command {
                    b.table_mut().collective = Some(c.collective.clone());
                    b.table_mut().ranks = c.ranks;
                }
                self.open = Some((cols, b));
            }
            return;
        }
        if let Some((cols, b)) = self.open.as_mut() {
            if line.bytes().next().is_some_and(|c| c.is_ascii_digit()) {
                b.row(no, line, || cols.parse_row(no, line));
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
    use super::super::parse_log;
    use super::*;

    #[test]
    fn rows_and_errors() {
        let text = "mpirun -n 8 ./bin/all_gather_test -b 8K -e 16M -f 2 -p 8\n\
data_size(Bytes):   aveg_time(us):   alg_bandwidth(GB/s):   check_result:\n\
8192   30.5   0.26859   success\n";
        let log = parse_log(text).unwrap();
        let t = &log.tables[0];
        assert_eq!(t.collective, Some(Collective::AllGather));
        assert_eq!(t.ranks, Some(8));
        assert_eq!(t.rows[0].bytes, 8192);
        assert_eq!(t.rows[0].out_of_place.time_us, 30.5);
        let log = parse_log(&text.replace("30.5", "30,5")).unwrap();
        assert_eq!(
            log.tables[0].rejected.as_deref(),
            Some("line 3: aveg_time is `30,5`; expected a time in µs (a number ≥ 0, or N/A)")
        );
    }

    #[test]
    fn a_rank_reporting_a_failed_check_does_not_cut_the_table() {
        let text = "mpirun -n 8 ./bin/all_reduce_test -b 8K -e 16K -f 2 -p 8\n\
data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n\
local rank_id 3, check result failed, 8192              | 30.50          | 0.26859              | failed\n\
8192              | 30.50          | 0.26859              | failed\n\
16384             | 31.20          | 0.52513              | success\n";
        let t = parse_log(text).unwrap().tables.remove(0);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].out_of_place.check, "failed");
        assert_eq!(
            (t.rows[1].bytes, t.rows[1].out_of_place.time_us),
            (16384, 31.2)
        );
    }

    #[test]
    fn ranks_from_npus_per_node_and_nodes() {
        let c = Command::parse("mpirun -hosts a,b ./bin/all_reduce_test -p 8 -n 20").unwrap();
        assert_eq!(c.ranks, Some(16));
        let c = Command::parse("mpirun -n 4 ./bin/all_reduce_test -p 8").unwrap();
        assert_eq!(c.ranks, Some(4));
        let c = Command::parse("./bin/all_reduce_test -p 8").unwrap();
        assert_eq!(c.ranks, None);
    }
}
