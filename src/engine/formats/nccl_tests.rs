//! nccl-tests / rccl-tests text output (`all_reduce_perf` and siblings).
//!
//! Sources of the layout: NVIDIA nccl-tests `src/util.cu`
//! (`writeResultHeader`, `writeBenchmarkLinePreamble`,
//! `writeBenchmarkLineBody`, `writePerIterReport`, `writeTimestamp`;
//! github.com/NVIDIA/nccl-tests @a0b82b2, v2.19.6) and AMD rccl-tests
//! `src/common.cu` (github.com/ROCm/rccl-tests @ae3e635, `-O 0` in-place
//! only), and nccl-tests v2.0.0 output as published in
//! github.com/llv22/nccl-osx (no `redop` column for AllGather / Broadcast,
//! no `root` column for non-rooted collectives, `error` instead of
//! `#wrong`).
//!
//! A table is a comment line of column names
//! `#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong`
//! (the line above it says which halves follow: `out-of-place  in-place`,
//! or only one), then one row per size, each column one token. Columns
//! are found by name: `size`, `count`, `type`, `redop`, `root`, then per
//! half `time` (or `cputime`, `-C 1`), `algbw`, `busbw`, `#wrong` (or
//! `error`). Other columns are skipped: `-I 1`'s `i_min i_max i_p99 i_cv%`
//! after each half, `-S 1`'s trailing `timestamp` (printed as two tokens,
//! `%Y-%m-%d %H:%M:%S`). A table ends at `# Out of bounds values`, `# Avg
//! bus bandwidth`, `# Collective test concluded`, the next header or the
//! next launch line.
//!
//! Context taken from around a table: the collective (`# Collective test
//! starting: X_perf`, or a command line naming `X_perf`), the rank count
//! (see [`super::Table::ranks`]). A table whose log names no collective
//! gets one inferred from its busbw / algbw ratio where that is
//! unambiguous (see [`infer_collective`]). Everything else (shell prompts,
//! NCCL INFO lines, `<snip>`, environment dumps) is skipped.

use super::launch::{self, parse_usize};
use super::lines::StreamReader;
use super::{
    excerpt, is_missing, measure, measure_expected, parse_count, Collective, FormatError, Halves,
    Row, Table, TableBuilder, Tool,
};
use std::collections::BTreeSet;

/// Where the cells of one half (out-of-place or in-place) are.
#[derive(Clone, Debug, PartialEq)]
struct Half {
    time: usize,
    algbw: Option<usize>,
    busbw: Option<usize>,
    check: Option<usize>,
}

/// Column layout of one table, from its header's names.
#[derive(Clone, Debug, PartialEq)]
struct Columns {
    size: usize,
    count: Option<usize>,
    dtype: Option<usize>,
    redop: Option<usize>,
    root: Option<usize>,
    /// One or two halves, in printed order.
    halves: Vec<Half>,
    which: Halves,
    /// Tokens a row needs (every known column).
    min_tokens: usize,
    /// The header's names, for messages.
    names: Vec<String>,
}

impl Columns {
    /// The column layout if `body` (a comment without `#`) is a header;
    /// `above` is what the line above said about halves
    /// `(out-of-place, in-place)`.
    fn from_header(body: &str, above: (bool, bool)) -> Option<Columns> {
        let tok: Vec<&str> = body.split_whitespace().collect();
        if tok.first() != Some(&"size") || !tok.iter().any(|t| *t == "time" || *t == "cputime") {
            return None;
        }
        let find = |name: &str| tok.iter().position(|t| *t == name);
        let mut halves: Vec<Half> = Vec::new();
        for (i, t) in tok.iter().enumerate() {
            match *t {
                "time" | "cputime" => halves.push(Half {
                    time: i,
                    algbw: None,
                    busbw: None,
                    check: None,
                }),
                "algbw" | "busbw" | "#wrong" | "wrong" | "error" | "errors" => {
                    if let Some(h) = halves.last_mut() {
                        let slot = match *t {
                            "algbw" => &mut h.algbw,
                            "busbw" => &mut h.busbw,
                            _ => &mut h.check,
                        };
                        slot.get_or_insert(i);
                    }
                }
                _ => {}
            }
        }
        halves.truncate(2);
        let which = match (halves.len(), above) {
            (2, _) => Halves::Both,
            (_, (false, true)) => Halves::InPlace,
            _ => Halves::OutOfPlace,
        };
        let size = 0;
        let (count, dtype, redop, root) =
            (find("count"), find("type"), find("redop"), find("root"));
        let last = halves
            .iter()
            .flat_map(|h| [Some(h.time), h.algbw, h.busbw, h.check])
            .chain([Some(size), count, dtype, redop, root])
            .flatten()
            .max()
            .unwrap_or(0);
        Some(Columns {
            size,
            count,
            dtype,
            redop,
            root,
            halves,
            which,
            min_tokens: last + 1,
            names: tok.iter().map(|s| s.to_string()).collect(),
        })
    }

    fn expected(&self) -> String {
        let shown = self.names[..self.min_tokens.min(self.names.len())].join(" ");
        if self.names.len() > self.min_tokens {
            format!("a row `{shown} …` (at least {} columns)", self.min_tokens)
        } else {
            format!("a row `{shown}` ({} columns)", self.min_tokens)
        }
    }

    fn half_name(&self, k: usize) -> &'static str {
        match (self.which, k) {
            (Halves::InPlace, _) | (Halves::Both, 1) => "in-place",
            _ => "out-of-place",
        }
    }

    /// Where a row printed its `redop` cell empty, if it did: older
    /// nccl-tests pass the op name `""` for AllGather, AlltoAll,
    /// Broadcast, Gather and Scatter (`TimeTest(..., "", root)` in
    /// `src/alltoall.cu` and its siblings before @7f73c67), printed as
    /// six spaces by `%6s`, so the row has one token fewer than the
    /// header. The sign: the token under `redop` is a number (the time or
    /// the root after it), which no op name is, and the token under
    /// `type` is a type, not an op (a row that lost its `type` cell
    /// instead would show its op there and is reported, never read one
    /// column off).
    fn empty_redop(&self, tok: &[&str]) -> Option<usize> {
        const OPS: [&str; 8] = [
            "sum",
            "prod",
            "max",
            "min",
            "avg",
            "mulsum",
            "premulsum",
            "none",
        ];
        let r = self.redop?;
        let cell = tok.get(r)?;
        let numeric = |c: &str| is_missing(c) || c.parse::<f64>().is_ok();
        if !numeric(cell) {
            return None;
        }
        match self.dtype.map(|d| tok.get(d)) {
            Some(Some(t)) if numeric(t) || OPS.contains(t) => None,
            Some(None) => None,
            _ => Some(r),
        }
    }

    /// One data row; `Ok(None)` if its first timing is missing (`N/A`).
    fn parse_row(&self, line: usize, text: &str) -> Result<Option<Row>, FormatError> {
        let mut tok: Vec<&str> = text.split_whitespace().collect();
        if let Some(r) = self.empty_redop(&tok) {
            tok.insert(r, "");
        }
        if tok.len() < self.min_tokens {
            return Err(FormatError::BadRow {
                line,
                text: excerpt(text),
                expected: self.expected(),
            });
        }
        let bad = |column: &str, value: &str, expected: &str| FormatError::BadCell {
            line,
            column: column.to_string(),
            value: excerpt(value),
            expected: expected.to_string(),
        };
        let bytes = parse_count(tok[self.size])
            .ok_or_else(|| bad("size", tok[self.size], "a size in bytes (digits)"))?;
        let count = match self.count {
            Some(i) => Some(
                parse_count(tok[i])
                    .ok_or_else(|| bad("count", tok[i], "an element count (digits)"))?,
            ),
            None => None,
        };
        let root = match self.root {
            Some(i) => Some(
                tok[i]
                    .parse::<i64>()
                    .map_err(|_| bad("root", tok[i], "a rank (an integer; -1 for none)"))?,
            ),
            None => None,
        };
        let mut measures = Vec::with_capacity(2);
        for (k, h) in self.halves.iter().enumerate() {
            let m = measure(
                bytes,
                tok[h.time],
                h.algbw.map(|i| tok[i]),
                h.busbw.map(|i| tok[i]),
                h.check.map(|i| tok[i]),
            )
            .map_err(|(col, v)| {
                let name = if col == "time" {
                    self.names[h.time].as_str()
                } else {
                    col
                };
                bad(
                    &format!("{} {name}", self.half_name(k)),
                    &v,
                    measure_expected(col),
                )
            })?;
            measures.push(m);
        }
        let mut it = measures.into_iter();
        let Some(first) = it.next().flatten() else {
            return Ok(None);
        };
        Ok(Some(Row {
            line,
            bytes,
            count,
            dtype: self.dtype.map(|i| tok[i].to_string()),
            redop: self
                .redop
                .map(|i| tok[i].to_string())
                .filter(|o| !o.is_empty()),
            root,
            out_of_place: first,
            in_place: it.next().flatten(),
        }))
    }
}

/// What the lines before a table said about the run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    collective: Option<Collective>,
    /// Ranks listed under `# Using devices`.
    device_ranks: BTreeSet<usize>,
    /// Their hosts, and the device name of the last line.
    hosts: BTreeSet<String>,
    accelerator: Option<String>,
    /// `nThread` and `nGpus` of the `# nThread` line.
    nthread: Option<usize>,
    ngpus: Option<usize>,
    /// From the command line: launcher process count, `-g`, `-t`, and
    /// whether the command gives a rank count at all.
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
            (true, Some(p)) => p.checked_mul(per_proc),
            // A command without a launcher: one process.
            (true, None) => Some(per_proc),
            _ => None,
        }
    }

    /// The context of a command line running `X_perf`.
    fn from_command(line: &str) -> Option<Context> {
        let l = launch::parse(line, |b| b.ends_with("_perf") && b.len() > 5)?;
        let mut ctx = Context {
            collective: Some(Collective::from_tool_name(
                &l.program[..l.program.len() - 5],
            )),
            command: true,
            procs: l.procs,
            ..Context::default()
        };
        if l.launcher.is_some() && l.procs.is_none() {
            // A launcher whose process count we cannot read: unknown.
            ctx.command = false;
        }
        for (i, a) in l.args.iter().enumerate() {
            for (flag, slot) in [("-g", &mut ctx.g), ("-t", &mut ctx.t)] {
                if let Some(rest) = a.strip_prefix(flag) {
                    let v = if rest.is_empty() {
                        l.args.get(i + 1).and_then(|n| parse_usize(n))
                    } else {
                        parse_usize(rest)
                    };
                    if v.is_some() {
                        *slot = v;
                    }
                }
            }
        }
        Some(ctx)
    }
}

/// The host and the device name of a `Rank` line's rest (`  3 Group  0
/// Pid 123 on host0 device  3 [0000:1b:00] NVIDIA H100 80GB HBM3`): the
/// word after `on`, and what follows the `[bus]` (or the device number).
fn host_and_device(rest: &str) -> (Option<&str>, Option<&str>) {
    let host = rest
        .split_once(" on ")
        .and_then(|(_, r)| r.split_whitespace().next());
    let name = rest
        .split_once(" device ")
        .map(|(_, r)| r.trim_start())
        .map(|r| match r.find(']') {
            Some(i) => &r[i + 1..],
            None => r.trim_start_matches(|c: char| c.is_ascii_digit()),
        })
        .map(str::trim)
        .filter(|n| !n.is_empty());
    (host, name)
}

/// Lines NCCL itself prints (`NCCL_DEBUG=INFO`: `host:pid:tid [dev] NCCL
/// INFO …`), possibly inside a table. A data row with such text glued to
/// it is not one of them: it starts with the size, and is reported.
fn is_nccl_debug(line: &str) -> bool {
    (line.contains("NCCL INFO") || line.contains("NCCL WARN") || line.contains("NCCL TRACE"))
        && line
            .split_whitespace()
            .next()
            .is_some_and(|t| t.contains(':') || t == "NCCL")
}

/// Infers the collective of a table whose log names none, from what
/// nccl-tests prints (`doc/PERFORMANCE.md`: busbw = algbw × factor) where
/// only one collective fits, on `n ≥ 3` ranks and rows with algbw ≥ 1
/// GB/s (so the printed 2 decimals are within 1 %):
///
/// | busbw / algbw | root | redop | collective |
/// |---|---|---|---|
/// | `2(n-1)/n` | `-1` or no column | not `none` | AllReduce |
/// | `(n-1)/n` | `-1` | not `none` | ReduceScatter |
/// | `(n-1)/n` | `-1` | `none` | AllGather (in-place `#wrong` a count) or AlltoAll (in-place `#wrong` `N/A` only) |
/// | `1` | `≥ 0` | `none` or no column | Broadcast |
/// | `1` | `≥ 0` | not `none` | Reduce |
///
/// (Without the in-place check, `-c 0`, AllGather and AlltoAll stay
/// unknown.) Returns the collective and the measured ratio.
pub fn infer_collective(t: &Table) -> Option<(Collective, f64)> {
    let n = t.ranks.filter(|&n| n >= 3)? as f64;
    let ratios: Vec<f64> = t
        .rows
        .iter()
        .filter_map(|r| {
            let m = &r.out_of_place;
            m.busbw_gbps
                .filter(|_| m.algbw_gbps >= 1.0)
                .map(|b| b / m.algbw_gbps)
        })
        .collect();
    let first = t.rows.first()?;
    if ratios.is_empty()
        || t.rows
            .iter()
            .any(|r| r.root != first.root || r.redop != first.redop)
    {
        return None;
    }
    let near = |f: f64| ratios.iter().all(|r| (r - f).abs() <= 0.01 * f);
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    let reduces = first.redop.as_deref().is_some_and(|o| o != "none");
    let rooted = first.root.is_some_and(|r| r >= 0);
    let c = if near(2.0 * (n - 1.0) / n) && !rooted && first.redop.as_deref() != Some("none") {
        Collective::AllReduce
    } else if near((n - 1.0) / n) && first.root == Some(-1) && reduces {
        Collective::ReduceScatter
    } else if near((n - 1.0) / n) && first.root == Some(-1) && !reduces {
        // AllGather and AlltoAll print the same busbw factor; nccl-tests
        // checks AllGather in place but never AlltoAll (`alltoall.cu`:
        // `reportErrors = in_place ? 0 : 1`, printed `N/A` by `util.cu`).
        let in_place = |f: &dyn Fn(&str) -> bool| {
            t.rows
                .iter()
                .all(|r| r.in_place.as_ref().is_some_and(|m| f(m.check.as_str())))
        };
        if in_place(&|c| c == "N/A") && t.rows.iter().any(|r| r.out_of_place.check != "N/A") {
            Collective::AllToAll
        } else if in_place(&|c| c.parse::<f64>().is_ok()) {
            Collective::AllGather
        } else {
            return None;
        }
    } else if near(1.0) && rooted {
        if reduces {
            Collective::Reduce
        } else {
            Collective::Broadcast
        }
    } else {
        return None;
    };
    Some((c, mean))
}

struct Open {
    cols: Columns,
    /// The header's tokens, to recognise the same header printed twice.
    header: String,
    b: TableBuilder,
}

/// Reads nccl-tests / rccl-tests tables from one stream.
pub(crate) struct Reader {
    ctx: Context,
    open: Option<Open>,
    /// What the previous comment line said about halves.
    above: (bool, bool),
    tables: Vec<Table>,
}

impl Reader {
    fn close(&mut self) {
        if let Some(o) = self.open.take() {
            let mut t = o.b.finish();
            let empty = t.rows.iter().filter(|r| r.redop.is_none()).count();
            if o.cols.redop.is_some() && empty > 0 {
                t.notes.push(format!(
                    "{empty} row(s) print nothing under `redop` (older nccl-tests print an empty op for non-reducing collectives); their later cells are read by the header's names"
                ));
            }
            if t.collective.is_none() {
                if let Some((c, ratio)) = infer_collective(&t) {
                    t.notes.push(format!(
                        "the log names no collective; {} inferred from busbw / algbw = {:.3} on {} ranks with redop {} and root {} (nccl-tests doc/PERFORMANCE.md)",
                        c.name(),
                        ratio,
                        t.ranks.unwrap_or(0),
                        t.rows[0].redop.as_deref().unwrap_or("(none printed)"),
                        t.rows[0].root.map_or("(none printed)".to_string(), |r| r.to_string()),
                    ));
                    t.collective = Some(c);
                }
            }
            self.tables.push(t);
        }
    }
}

impl StreamReader for Reader {
    type Launch = Context;

    fn launch(body: &str) -> Option<Context> {
        let t = body.trim_start();
        if !body.contains("_perf") || t.starts_with('#') || is_nccl_debug(body) {
            return None;
        }
        Context::from_command(t)
    }

    fn new(launch: Option<Context>) -> Reader {
        Reader {
            ctx: launch.unwrap_or_default(),
            open: None,
            above: (false, false),
            tables: Vec::new(),
        }
    }

    fn on_launch(&mut self, launch: Context) {
        self.close();
        self.ctx = launch;
    }

    fn on_line(&mut self, no: usize, body: &str) {
        let trimmed = body.trim();
        if is_nccl_debug(trimmed) {
            return;
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            let c = comment.trim();
            let above = std::mem::replace(
                &mut self.above,
                (c.contains("out-of-place"), c.contains("in-place")),
            );
            if let Some(cols) = Columns::from_header(c, above) {
                let header = c.split_whitespace().collect::<Vec<_>>().join(" ");
                if let Some(o) = &self.open {
                    if o.header == header && o.b.is_blank() {
                        // The same header printed again (two ranks' output
                        // interleaved without labels): one table.
                        return;
                    }
                }
                self.close();
                let mut b = TableBuilder::new(Tool::NcclTests, no, cols.which);
                let t = b.table_mut();
                t.collective = self.ctx.collective.clone();
                t.ranks = self.ctx.ranks();
                if !self.ctx.hosts.is_empty() && self.ctx.hosts.len() <= self.ctx.device_ranks.len()
                {
                    t.nodes = Some(self.ctx.hosts.len());
                }
                t.accelerator = self.ctx.accelerator.clone();
                self.open = Some(Open { cols, header, b });
            } else if c.starts_with("Out of bounds")
                || c.starts_with("Avg bus bandwidth")
                || c.starts_with("Collective test concluded")
            {
                // The context belonged to this table; the next run prints its own.
                self.close();
                self.ctx = Context::default();
            } else if let Some(rest) = c.strip_prefix("Collective test starting:") {
                let name = rest.trim();
                let name = name.strip_suffix("_perf").unwrap_or(name);
                self.ctx.collective = Some(Collective::from_tool_name(name));
            } else if c.starts_with("nThread") {
                let tok: Vec<&str> = c.split_whitespace().collect();
                for w in tok.windows(2) {
                    match w[0] {
                        "nThread" => self.ctx.nthread = parse_usize(w[1]),
                        "nGpus" => self.ctx.ngpus = parse_usize(w[1]),
                        _ => {}
                    }
                }
                self.ctx.device_ranks.clear();
                self.ctx.hosts.clear();
            } else if let Some(rest) = c.strip_prefix("Rank") {
                // `#  Rank  3 Group  0 Pid 123 on host0 device  3 [...] NAME`
                if rest.contains(" on ") && rest.contains("device") {
                    let index = rest.split_whitespace().next().filter(|r| {
                        r.len() <= 7 && !r.is_empty() && r.bytes().all(|c| c.is_ascii_digit())
                    });
                    if let Some(r) = index.and_then(|r| r.parse().ok()) {
                        self.ctx.device_ranks.insert(r);
                        let (host, name) = host_and_device(rest);
                        if let Some(h) = host {
                            self.ctx.hosts.insert(h.to_string());
                        }
                        if let Some(n) = name {
                            self.ctx.accelerator = Some(n.to_string());
                        }
                    }
                }
            }
            return;
        }
        self.above = (false, false);
        if let Some(o) = self.open.as_mut() {
            if trimmed.bytes().next().is_some_and(|c| c.is_ascii_digit()) {
                let cols = &o.cols;
                o.b.row(no, trimmed, || cols.parse_row(no, trimmed));
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

    const OLD: &str = "\
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2   float     sum    146.7    0.00    0.00  2e-07    159.1    0.00    0.00  1e-07
     8388608       2097152   float     sum   4615.5    1.82    3.41  5e-07   4614.6    1.82    3.41  5e-07
# Avg bus bandwidth    : 0.708142
";

    #[test]
    fn old_error_column_without_root() {
        let log = parse_log(OLD).unwrap();
        assert_eq!(log.tables.len(), 1);
        let r = &log.tables[0].rows[1];
        assert_eq!(r.bytes, 8388608);
        assert_eq!(r.root, None);
        assert_eq!(r.out_of_place.time_us, 4615.5);
        assert_eq!(r.in_place.as_ref().unwrap().check, "5e-07");
        assert_eq!(log.tables[0].ranks, None);
    }

    #[test]
    fn malformed_rows_reject_their_table_naming_line_cell_and_shape() {
        let bad = OLD.replace("146.7", "fast");
        let log = parse_log(&bad).unwrap();
        assert_eq!(
            log.tables[0].rejected.as_deref(),
            Some(
                "line 3: out-of-place time is `fast`; expected a time in µs (a number ≥ 0, or N/A)"
            )
        );
        let short = OLD.replace("    159.1    0.00    0.00  1e-07", "");
        let log = parse_log(&short).unwrap();
        assert_eq!(
            log.tables[0].rejected.as_deref(),
            Some("line 3: expected a row `size count type redop time algbw busbw error time algbw busbw error` (12 columns), found `8             2   float     sum    146.7    0.00    0.00  2e-07`")
        );
        assert_eq!(parse_log("hello\nworld").unwrap_err(), FormatError::NoTable);
    }

    #[test]
    fn command_lines_give_collective_and_ranks() {
        let c = Context::from_command("root@h:~# ./build/all_reduce_perf -b 8 -e 1024M -f 2 -g2")
            .unwrap();
        assert_eq!(c.collective, Some(Collective::AllReduce));
        assert_eq!(c.ranks(), Some(2));
        let c = Context::from_command(
            "$ mpirun -np 8 --mca pml ob1 ./rccl-tests/build/alltoall_perf -b 8 -g 1",
        )
        .unwrap();
        assert_eq!(
            (c.collective.clone(), c.ranks()),
            (Some(Collective::AllToAll), Some(8))
        );
        assert!(Context::from_command("echo hello").is_none());
    }

    #[test]
    fn nccl_debug_lines_inside_a_table_are_skipped_but_glued_rows_reported() {
        let info = "10.0.0.1:4242:4242 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n";
        let text = OLD.replace("     8388608", &format!("{info}     8388608"));
        let log = parse_log(&text).unwrap();
        assert_eq!(
            (log.tables[0].rows.len(), log.tables[0].rejected.clone()),
            (2, None)
        );
        // NCCL's own line glued into a row (stderr and stdout on one
        // terminal): the row is reported, not silently dropped.
        let glued = OLD.replace("4615.5    1.82", "4615.5host0:1:1 [0] NCCL WARN x");
        let log = parse_log(&glued).unwrap();
        assert_eq!(
            log.tables[0].rejected.as_deref(),
            Some("line 4: out-of-place time is `4615.5host0:1:1`; expected a time in µs (a number ≥ 0, or N/A)")
        );
    }

    #[test]
    fn header_names_find_the_columns() {
        let c = Columns::from_header(
            "size count type redop root time algbw busbw #wrong i_min i_max i_p99 i_cv% time algbw busbw #wrong i_min i_max i_p99 i_cv% timestamp",
            (true, true),
        )
        .unwrap();
        assert_eq!(c.halves[1].time, 13);
        assert_eq!(c.min_tokens, 17);
        let c = Columns::from_header(
            "size count type redop root cputime algbw busbw #wrong",
            (false, true),
        )
        .unwrap();
        assert_eq!((c.which, c.halves.len()), (Halves::InPlace, 1));
        let c = Columns::from_header(
            "size count type redop root time algbw busbw #wrong",
            (true, false),
        )
        .unwrap();
        assert_eq!(c.which, Halves::OutOfPlace);
        assert!(Columns::from_header("size of the buffer", (false, false)).is_none());
    }
}
