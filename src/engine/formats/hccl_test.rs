//! Huawei `hccl_test` output (CANN "HCCL Performance Tester",
//! hiascend.com `HCCLpertest_16_0006`): one table per run,
//!
//! ```text
//! data_size(Bytes):  aveg_time(us):  alg_bandwidth(GB/s):  check_result:
//! 1024               31.82           0.03218               success
//! ```
//!
//! `data_size` is the data of one NPU, `aveg_time` the collective's time,
//! `alg_bandwidth` `data_size / time` (algbw; hccl_test prints no busbw),
//! `check_result` `success`, `failed` or `NULL`. The collective comes from
//! the command line (`./bin/all_reduce_test`), the rank count from
//! `mpirun -n P` (one process per NPU).

use super::{excerpt, strip_tag, Collective, FormatError, Log, Measure, Row, Table, Tool};

const EXPECTED: &str =
    "a row `data_size aveg_time alg_bandwidth check_result` (bytes, µs, GB/s, success|failed|NULL)";

/// Collective and rank count from a command line running `X_test`.
fn parse_command(line: &str) -> Option<(Collective, Option<usize>)> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let at = tokens.iter().position(|t| {
        let b = t.rsplit('/').next().unwrap_or(t);
        b.ends_with("_test") && b.len() > 5
    })?;
    let base = tokens[at].rsplit('/').next().unwrap_or(tokens[at]);
    let collective = Collective::from_tool_name(&base[..base.len() - 5]);
    let mut ranks = None;
    for w in tokens[..at].windows(2) {
        if matches!(w[0], "-n" | "-np" | "--np") {
            ranks = w[1].parse::<usize>().ok().filter(|&n| n > 0 && n < 1 << 20);
        }
    }
    Some((collective, ranks))
}

fn parse_row(line_no: usize, text: &str) -> Result<Row, FormatError> {
    let bad = || FormatError::BadRow {
        line: line_no,
        text: excerpt(text.trim()),
        expected: EXPECTED.into(),
    };
    let tok: Vec<&str> = text.split_whitespace().collect();
    if tok.len() != 4 {
        return Err(bad());
    }
    let bytes: u64 = tok[0].parse().map_err(|_| bad())?;
    let time_us: f64 = tok[1].parse().map_err(|_| bad())?;
    let algbw_gbps: f64 = tok[2].parse().map_err(|_| bad())?;
    if !(time_us.is_finite() && time_us >= 0.0 && algbw_gbps.is_finite() && algbw_gbps >= 0.0) {
        return Err(bad());
    }
    Ok(Row {
        line: line_no,
        bytes,
        count: None,
        dtype: None,
        redop: None,
        root: None,
        out_of_place: Measure {
            time_us,
            algbw_gbps,
            busbw_gbps: None,
            check: tok[3].to_string(),
        },
        in_place: None,
    })
}

/// Parses hccl_test output: one table per header line.
///
/// Errors: [`FormatError::BadRow`] for a malformed row after a header;
/// [`FormatError::NoTable`] if there is no header.
pub fn parse(text: &str) -> Result<Log, FormatError> {
    let mut tables: Vec<Table> = Vec::new();
    let mut pending: Option<(Collective, Option<usize>)> = None;
    let mut open: Option<Table> = None;
    let finish = |open: &mut Option<Table>, tables: &mut Vec<Table>| {
        if let Some(mut t) = open.take() {
            t.check_plausible();
            tables.push(t);
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = strip_tag(raw).trim();
        if line.starts_with('#') {
            continue;
        }
        if line.contains("data_size") && line.contains("aveg_time") {
            finish(&mut open, &mut tables);
            let (collective, ranks) = pending.clone().map_or((None, None), |(c, r)| (Some(c), r));
            open = Some(Table {
                tool: Tool::HcclTest,
                line: line_no,
                collective,
                ranks,
                rows: Vec::new(),
                rejected: None,
            });
            continue;
        }
        if line.bytes().next().is_some_and(|c| c.is_ascii_digit()) {
            if let Some(t) = open.as_mut() {
                t.rows.push(parse_row(line_no, line)?);
            }
            continue;
        }
        if let Some(cmd) = parse_command(line) {
            finish(&mut open, &mut tables);
            pending = Some(cmd);
        }
    }
    finish(&mut open, &mut tables);
    if tables.is_empty() {
        return Err(FormatError::NoTable);
    }
    Ok(Log { tables })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_errors() {
        let text = "mpirun -n 8 ./bin/all_gather_test -b 8K -e 16M -f 2 -p 8\n\
data_size(Bytes):   aveg_time(us):   alg_bandwidth(GB/s):   check_result:\n\
8192   30.5   0.26859   success\n";
        let log = parse(text).unwrap();
        let t = &log.tables[0];
        assert_eq!(t.collective, Some(Collective::AllGather));
        assert_eq!(t.ranks, Some(8));
        assert_eq!(t.rows[0].bytes, 8192);
        assert_eq!(t.rows[0].out_of_place.time_us, 30.5);
        let e = parse(&text.replace("30.5", "30.5 extra")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 3: expected a row `data_size"),
            "{e}"
        );
    }
}
