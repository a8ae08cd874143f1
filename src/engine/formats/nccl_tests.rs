//! nccl-tests / rccl-tests output (`all_reduce_perf` and siblings; NVIDIA
//! `nccl-tests` `src/common.cu` prints it, AMD `rccl-tests` the same).
//!
//! A table is a header line
//! `#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong`
//! (old versions, e.g. nccl-tests of NCCL 2.4: no `root`, `error` instead of
//! `#wrong`), then one row per size:
//! `size count type redop [root] time algbw busbw wrong time algbw busbw wrong`
//! (out-of-place then in-place; `wrong` may be `N/A`). A table ends at
//! `# Out of bounds values`, `# Avg bus bandwidth`, `# Collective test
//! concluded` or the next header.
//!
//! Context taken from around a table: the collective (`# Collective test
//! starting: X_perf`, or a command line naming `X_perf`), the rank count
//! (see [`super::Table::ranks`]). Everything else (shell prompts, NCCL INFO
//! lines, `<snip>`, environment dumps) is skipped.

use super::{excerpt, strip_tag, Collective, FormatError, Log, Measure, Row, Table, Tool};

/// Column layout of one table.
#[derive(Clone, Copy, Debug)]
struct Layout {
    has_root: bool,
    /// Name of the check column (`#wrong` or `error`).
    check: &'static str,
}

impl Layout {
    fn expected(&self) -> String {
        format!(
            "a row `size count type redop{} time algbw busbw {c} time algbw busbw {c}` ({} columns)",
            if self.has_root { " root" } else { "" },
            if self.has_root { 13 } else { 12 },
            c = self.check
        )
    }
}

/// What the lines before a table said about the run.
#[derive(Default)]
struct Context {
    collective: Option<Collective>,
    /// Ranks listed under `# Using devices`.
    device_ranks: Vec<usize>,
    /// `nThread` and `nGpus` of the `# nThread` line.
    nthread: Option<usize>,
    ngpus: Option<usize>,
    /// From the command line: mpirun process count, `-g`, `-t`, and
    /// whether it was launched by mpirun at all.
    procs: Option<usize>,
    g: Option<usize>,
    t: Option<usize>,
    command: bool,
}

impl Context {
    fn ranks(&self) -> Option<usize> {
        if !self.device_ranks.is_empty() {
            return Some(self.device_ranks.len());
        }
        let per_proc = self.g.or(self.ngpus).unwrap_or(1) * self.t.or(self.nthread).unwrap_or(1);
        match (self.command, self.procs) {
            (true, Some(p)) => Some(p * per_proc),
            // A command without mpirun: one process.
            (true, None) => Some(per_proc),
            _ => None,
        }
    }
}

fn parse_usize(s: &str) -> Option<usize> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A command line that runs `X_perf`: collective, mpirun process count, `-g`, `-t`.
fn parse_command(line: &str, ctx: &mut Context) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let Some(perf) = tokens.iter().position(|t| {
        let base = t.rsplit('/').next().unwrap_or(t);
        base.ends_with("_perf") && base.len() > 5
    }) else {
        return false;
    };
    let base = tokens[perf].rsplit('/').next().unwrap_or(tokens[perf]);
    ctx.collective = Some(Collective::from_tool_name(&base[..base.len() - 5]));
    ctx.command = true;
    ctx.procs = None;
    ctx.g = None;
    ctx.t = None;
    ctx.device_ranks.clear();
    ctx.nthread = None;
    ctx.ngpus = None;
    let launcher = tokens[..perf]
        .iter()
        .any(|t| t.ends_with("mpirun") || t.ends_with("mpiexec") || t.ends_with("srun"));
    if launcher {
        for w in tokens[..perf].windows(2) {
            if matches!(w[0], "-np" | "-n" | "--np" | "-c" | "--ntasks") {
                if let Some(n) = parse_usize(w[1]) {
                    ctx.procs = Some(n);
                }
            }
        }
        if ctx.procs.is_none() {
            // A launcher whose process count we cannot read: unknown.
            ctx.command = false;
        }
    }
    let args = &tokens[perf + 1..];
    for (i, a) in args.iter().enumerate() {
        for (flag, slot) in [("-g", &mut ctx.g), ("-t", &mut ctx.t)] {
            if let Some(rest) = a.strip_prefix(flag) {
                let v = if rest.is_empty() {
                    args.get(i + 1).and_then(|n| parse_usize(n))
                } else {
                    parse_usize(rest)
                };
                if v.is_some() {
                    *slot = v;
                }
            }
        }
    }
    true
}

fn parse_measure(tok: &[&str]) -> Option<Measure> {
    let time_us: f64 = tok[0].parse().ok()?;
    let algbw_gbps: f64 = tok[1].parse().ok()?;
    let busbw_gbps: f64 = tok[2].parse().ok()?;
    if !(time_us.is_finite() && algbw_gbps.is_finite() && busbw_gbps.is_finite())
        || time_us < 0.0
        || algbw_gbps < 0.0
        || busbw_gbps < 0.0
    {
        return None;
    }
    Some(Measure {
        time_us,
        algbw_gbps,
        busbw_gbps: Some(busbw_gbps),
        check: tok[3].to_string(),
    })
}

fn parse_row(line_no: usize, text: &str, layout: Layout) -> Result<Row, FormatError> {
    let bad = || FormatError::BadRow {
        line: line_no,
        text: excerpt(text.trim()),
        expected: layout.expected(),
    };
    let tok: Vec<&str> = text.split_whitespace().collect();
    let base = if layout.has_root { 5 } else { 4 };
    if tok.len() != base + 8 && tok.len() != base + 4 {
        return Err(bad());
    }
    let bytes: u64 = tok[0].parse().map_err(|_| bad())?;
    let count: u64 = tok[1].parse().map_err(|_| bad())?;
    let root = if layout.has_root {
        Some(tok[4].parse::<i64>().map_err(|_| bad())?)
    } else {
        None
    };
    let out_of_place = parse_measure(&tok[base..base + 4]).ok_or_else(bad)?;
    let in_place = if tok.len() == base + 8 {
        Some(parse_measure(&tok[base + 4..base + 8]).ok_or_else(bad)?)
    } else {
        None
    };
    Ok(Row {
        line: line_no,
        bytes,
        count: Some(count),
        dtype: Some(tok[2].to_string()),
        redop: Some(tok[3].to_string()),
        root,
        out_of_place,
        in_place,
    })
}

/// Is this (comment body) the column header of a table?
fn header_layout(body: &str) -> Option<Layout> {
    let tok: Vec<&str> = body.split_whitespace().collect();
    if tok.first() != Some(&"size") || !tok.contains(&"count") || !tok.contains(&"time") {
        return None;
    }
    Some(Layout {
        has_root: tok.contains(&"root"),
        check: if tok.contains(&"error") {
            "error"
        } else {
            "#wrong"
        },
    })
}

/// Parses nccl-tests / rccl-tests output: every table, in order.
///
/// Errors: [`FormatError::BadRow`] (line number, text, the expected row
/// shape) for a malformed row inside a table; [`FormatError::NoTable`] if
/// the text has no table header.
pub fn parse(text: &str) -> Result<Log, FormatError> {
    let mut ctx = Context::default();
    let mut tables: Vec<Table> = Vec::new();
    let mut open: Option<(Layout, Table)> = None;
    let close = |open: &mut Option<(Layout, Table)>, tables: &mut Vec<Table>| {
        if let Some((_, mut t)) = open.take() {
            t.check_plausible();
            tables.push(t);
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = strip_tag(raw);
        let trimmed = line.trim();
        if let Some(body) = trimmed.strip_prefix('#') {
            let body = body.trim();
            if let Some(layout) = header_layout(body) {
                close(&mut open, &mut tables);
                open = Some((
                    layout,
                    Table {
                        tool: Tool::NcclTests,
                        line: line_no,
                        collective: ctx.collective.clone(),
                        ranks: ctx.ranks(),
                        rows: Vec::new(),
                        rejected: None,
                    },
                ));
            } else if body.starts_with("Out of bounds")
                || body.starts_with("Avg bus bandwidth")
                || body.starts_with("Collective test concluded")
            {
                // The context belonged to this table; the next run prints its own.
                close(&mut open, &mut tables);
                ctx = Context::default();
            } else if let Some(rest) = body.strip_prefix("Collective test starting:") {
                let name = rest.trim();
                let name = name.strip_suffix("_perf").unwrap_or(name);
                ctx.collective = Some(Collective::from_tool_name(name));
            } else if body.starts_with("nThread") {
                let tok: Vec<&str> = body.split_whitespace().collect();
                for w in tok.windows(2) {
                    match w[0] {
                        "nThread" => ctx.nthread = parse_usize(w[1]),
                        "nGpus" => ctx.ngpus = parse_usize(w[1]),
                        _ => {}
                    }
                }
                ctx.device_ranks.clear();
            } else if let Some(rest) = body.strip_prefix("Rank") {
                // `#  Rank  3 Group  0 Pid 123 on host0 device  3 [...] NAME`
                if rest.contains(" on ") && rest.contains("device") {
                    if let Some(r) = rest.split_whitespace().next().and_then(parse_usize) {
                        if !ctx.device_ranks.contains(&r) {
                            ctx.device_ranks.push(r);
                        }
                    }
                }
            }
            continue;
        }
        let starts_numeric = trimmed.bytes().next().is_some_and(|c| c.is_ascii_digit());
        if let Some((layout, table)) = open.as_mut() {
            if starts_numeric {
                table.rows.push(parse_row(line_no, trimmed, *layout)?);
                continue;
            }
        }
        if trimmed.contains("_perf") {
            let mut fresh = Context::default();
            if parse_command(trimmed, &mut fresh) {
                close(&mut open, &mut tables);
                ctx = fresh;
            }
        }
    }
    close(&mut open, &mut tables);
    if tables.is_empty() {
        return Err(FormatError::NoTable);
    }
    Ok(Log { tables })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "\
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2   float     sum    146.7    0.00    0.00  2e-07    159.1    0.00    0.00  1e-07
     8388608       2097152   float     sum   4615.5    1.82    3.41  5e-07   4614.6    1.82    3.41  5e-07
# Avg bus bandwidth    : 0.708142
";

    #[test]
    fn old_error_column_without_root() {
        let log = parse(OLD).unwrap();
        assert_eq!(log.tables.len(), 1);
        let r = &log.tables[0].rows[1];
        assert_eq!(r.bytes, 8388608);
        assert_eq!(r.root, None);
        assert_eq!(r.out_of_place.time_us, 4615.5);
        assert_eq!(r.in_place.as_ref().unwrap().check, "5e-07");
        assert_eq!(log.tables[0].ranks, None);
    }

    #[test]
    fn malformed_rows_name_line_text_and_shape() {
        let bad = OLD.replace("146.7", "fast");
        let e = parse(&bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3: expected a row `size count type redop time algbw busbw error time algbw busbw error` (12 columns), found `8             2   float     sum    fast    0.00    0.00  2e-07    159.1    0.00    0.00  1e-07`"
        );
        assert_eq!(parse("hello\nworld").unwrap_err(), FormatError::NoTable);
    }

    #[test]
    fn command_lines_give_collective_and_ranks() {
        let mut c = Context::default();
        assert!(parse_command(
            "root@h:~# ./build/all_reduce_perf -b 8 -e 1024M -f 2 -g2",
            &mut c
        ));
        assert_eq!(c.collective, Some(Collective::AllReduce));
        assert_eq!(c.ranks(), Some(2));
        let mut c = Context::default();
        assert!(parse_command(
            "$ mpirun -np 8 --mca pml ob1 ./rccl-tests/build/alltoall_perf -b 8 -g 1",
            &mut c
        ));
        assert_eq!(
            (c.collective.clone(), c.ranks()),
            (Some(Collective::AllToAll), Some(8))
        );
        let mut c = Context::default();
        assert!(!parse_command("echo hello", &mut c));
    }
}
