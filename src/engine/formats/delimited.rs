//! Tables of delimited text: CSV (rccl-tests' `--output_file` with
//! `--output_format csv`, `cclsim sweep --format csv`, a spreadsheet's
//! export) and markdown pipe tables pasted from a README or wiki.
//!
//! A table starts at a header row that names a size column and a time,
//! algbw, busbw or bandwidth column ([`super::columns`]); a markdown
//! header needs the separator row under it (`|---|---|`, GitHub-flavoured
//! markdown). Cells are read by the header's names, never by position
//! from the end: a row with another number of fields than the header is
//! an error naming both counts and the line (rccl-tests built with MPI
//! writes a `nodes` value its CSV header does not name, `src/common.cu`
//! `Reporter`, so every cell after `collective` would be read one column
//! off). A CSV table ends at a blank line, a `#` comment or a line
//! without a comma; a markdown table at the first line not starting with
//! `|`.
//!
//! The text above a table (back to the previous table, at most 30 lines;
//! `#!` provenance lines excluded) tells what the numbers do not: the
//! collective (`NCCL AllReduce`), whether an unnamed bandwidth column
//! (`ND GB200 v6 (GB/s)`) is bus or algorithm bandwidth (`bus bandwidth`,
//! `busbw`; `algbw`, `algorithm bandwidth`), and whether the runs were
//! in-place. A bandwidth column whose kind nothing says is rejected,
//! never guessed. Several unnamed bandwidth columns (one per machine) are
//! one table each.

use super::columns::{self, unquote, Column, Field};
use super::launch::parse_usize;
use super::records::{self, Context, Record};
use super::{excerpt, Collective, FormatError, Table};
use crate::engine::collective::Primitive;

/// Lines of text above a table read for its context.
const CONTEXT_LINES: usize = 30;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Markdown,
    Csv,
}

/// Cells of a CSV line (RFC 4180 quotes: `"a,b"`, `""` inside quotes).
fn csv_cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// Cells of a markdown table row (`| a | b |`).
fn pipe_cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(|c| c.trim().to_string()).collect()
}

fn cells(kind: Kind, line: &str) -> Vec<String> {
    match kind {
        Kind::Markdown => pipe_cells(line),
        Kind::Csv => csv_cells(line),
    }
}

/// `|---|:--:|`: a markdown header's separator row.
fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// Is line `i` a table header, and of which kind?
fn header_at(lines: &[&str], i: usize) -> Option<Kind> {
    let l = lines[i].trim();
    if l.starts_with('|') && lines.get(i + 1).is_some_and(|n| is_separator(n)) {
        return Some(Kind::Markdown);
    }
    if l.starts_with('#') || !l.contains(',') {
        return None;
    }
    let fields: Vec<Option<Field>> = csv_cells(l)
        .iter()
        .map(|c| columns::column(c).ok().and_then(|c| c.field))
        .collect();
    let has = |f: Field| fields.contains(&Some(f));
    let value = [Field::Time, Field::Algbw, Field::Busbw, Field::Bandwidth];
    (has(Field::Size) && value.iter().any(|f| has(*f))).then_some(Kind::Csv)
}

/// Index after the last row of the table whose header is at `i`.
fn block_end(lines: &[&str], i: usize, kind: Kind) -> usize {
    let start = match kind {
        Kind::Markdown => i + 2,
        Kind::Csv => i + 1,
    };
    let mut end = start;
    while let Some(l) = lines.get(end).map(|l| l.trim()) {
        let row = match kind {
            Kind::Markdown => l.starts_with('|'),
            Kind::Csv => !l.is_empty() && !l.starts_with('#') && l.contains(','),
        };
        if !row {
            break;
        }
        end += 1;
    }
    end
}

/// Every delimited table of `text`, in order.
pub(crate) fn read(text: &str) -> Vec<Table> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let (mut i, mut after_previous) = (0, 0);
    while i < lines.len() {
        let Some(kind) = header_at(&lines, i) else {
            i += 1;
            continue;
        };
        let end = block_end(&lines, i, kind);
        let from = after_previous.max(i.saturating_sub(CONTEXT_LINES));
        let above: Vec<&str> = lines[from..i]
            .iter()
            .copied()
            .filter(|l| !l.trim_start().starts_with("#!"))
            .collect();
        let body = match kind {
            Kind::Markdown => i + 2,
            Kind::Csv => i + 1,
        };
        out.extend(block(
            kind,
            i + 1,
            &lines[i],
            &lines[body..end],
            body + 1,
            &above.join("\n"),
        ));
        after_previous = end;
        i = end.max(i + 1);
    }
    out
}

/// Which half a value column belongs to, and where its cells are.
#[derive(Clone, Debug, Default)]
pub(crate) struct Series {
    id: usize,
    in_place: Option<bool>,
    time: Option<(usize, f64)>,
    algbw: Option<(usize, f64)>,
    busbw: Option<(usize, f64)>,
    wrong: Option<usize>,
}

/// Bus or algorithm bandwidth, as the text says.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bw {
    Bus,
    Alg,
}

/// What the text above a table says about the bandwidth kind.
fn context_bandwidth(text: &str) -> Option<Bw> {
    let t = text.to_ascii_lowercase();
    let bus = ["busbw", "bus bandwidth", "bus bw"]
        .iter()
        .any(|k| t.contains(k));
    let alg = [
        "algbw",
        "algorithm bandwidth",
        "alg bw",
        "algorithmic bandwidth",
    ]
    .iter()
    .any(|k| t.contains(k));
    match (bus, alg) {
        (true, false) => Some(Bw::Bus),
        (false, true) => Some(Bw::Alg),
        _ => None,
    }
}

/// The one collective the text above a table names, if exactly one:
/// compound names in any spelling (`AllReduce`, `all_reduce_perf`,
/// `reduce_scatter`), single words only capitalised (`Broadcast`,
/// `Reduce`: as plain words they are English).
fn context_collective(text: &str) -> Option<Collective> {
    let mut found: Vec<Primitive> = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let w = word.strip_suffix("_perf").unwrap_or(word);
        let Some(p) = Primitive::from_name(w) else {
            continue;
        };
        let compound = matches!(
            p,
            Primitive::AllReduce
                | Primitive::AllGather
                | Primitive::ReduceScatter
                | Primitive::AlltoAll
                | Primitive::AlltoAllV
                | Primitive::SendRecv
        );
        let capital = w.starts_with(|c: char| c.is_ascii_uppercase());
        if (compound || capital) && p != Primitive::Barrier && !found.contains(&p) {
            found.push(p);
        }
    }
    match found.as_slice() {
        [p] => Some(Collective::from_tool_name(p.name())),
        _ => None,
    }
}

/// Does the text above a table say the runs were in-place only?
fn context_in_place(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    (t.contains("in-place") || t.contains("in place")) && !t.contains("out-of-place")
}

/// One table block: its header at `header_line`, rows from `first_line`.
fn block(
    kind: Kind,
    header_line: usize,
    header: &str,
    rows: &[&str],
    first_line: usize,
    above: &str,
) -> Vec<Table> {
    let names = cells(kind, header);
    let mut ctx = Context {
        line: header_line,
        ..Context::default()
    };
    let cols: Vec<Column> = match names.iter().map(|n| columns::column(n)).collect() {
        Ok(c) => c,
        Err(why) => {
            return vec![records::rejected(
                &ctx,
                format!("line {header_line}: {why}"),
            )]
        }
    };
    let find = |f: Field| cols.iter().position(|c| c.field == Some(f));
    if find(Field::Size).is_none() {
        // A table of something else (a machine's specification).
        return Vec::new();
    }
    let choices = names
        .iter()
        .filter(|n| {
            ["algorithm", "protocol", "channels"].contains(&n.trim().to_ascii_lowercase().as_str())
        })
        .count();
    if choices == 3 {
        return vec![records::rejected(
            &ctx,
            format!("line {header_line}: a tuner's table (algorithm, protocol and channels per size and rank count, as NCCL's example tuner reads): choices, not one run's measurements; read it with `cclsim tuner FILE`"),
        )];
    }
    let series = series_of(&cols, above, &mut ctx);
    if context_in_place(above) && find(Field::InPlace).is_none() {
        ctx.notes
            .push("in-place runs (the text above the table says so)".into());
    }
    ctx.collective = context_collective(above);
    if let Some(c) = &ctx.collective {
        if find(Field::Collective).is_none() {
            ctx.notes
                .push(format!("{} from the text above the table", c.name()));
        }
    }
    let in_place_text = context_in_place(above);
    let mut items = Vec::new();
    let mut labelled = false;
    for (k, row) in rows.iter().enumerate() {
        let line = first_line + k;
        let cells = cells(kind, row);
        if cells.len() != names.len() {
            items.push(Err((
                None,
                field_count(line, row, &cells, &names, header_line),
            )));
            continue;
        }
        for s in &series {
            let mut s = s.clone();
            if in_place_text && s.in_place.is_none() {
                s.in_place = Some(true);
            }
            items.push(record(line, row, &cells, &cols, &s, &mut labelled));
        }
    }
    if labelled {
        ctx.notes.push(
            "sizes read from labels: `65K` is 65536 (a label names the power of two it rounds)"
                .into(),
        );
    }
    records::tables(items, &ctx)
}

/// The error of a row with another number of fields than its header.
fn field_count(
    line: usize,
    text: &str,
    cells: &[String],
    names: &[String],
    header_line: usize,
) -> FormatError {
    let lower: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
    let hint = (cells.len() == names.len() + 1
        && lower.iter().any(|n| n == "rankspernode")
        && !lower.iter().any(|n| n == "nodes"))
    .then(|| " (rccl-tests built with MPI writes a `nodes` value after the collective that its header does not name)".to_string())
    .unwrap_or_default();
    FormatError::FieldCount {
        line,
        found: cells.len(),
        header_line,
        expected: names.len(),
        names: excerpt(&names.join(", ")),
        text: excerpt(text.trim()),
        hint,
    }
}

/// Bus or algorithm bandwidth of an unnamed bandwidth column: its name
/// (`Bus BW (GB/s)` is read as busbw already; `H100 bus (GB/s)`), else the
/// text above the table.
fn bandwidth_kind(c: &Column, above: Option<Bw>) -> Option<Bw> {
    let n = c.name.to_ascii_lowercase();
    match (n.contains("bus"), n.contains("alg")) {
        (true, false) => Some(Bw::Bus),
        (false, true) => Some(Bw::Alg),
        _ => above,
    }
}

/// Where a series keeps the column of field `f`, if it is a value.
fn slot_of(h: &mut Series, f: Option<Field>) -> Option<&mut Option<(usize, f64)>> {
    match f {
        Some(Field::Time) => Some(&mut h.time),
        Some(Field::Algbw) => Some(&mut h.algbw),
        Some(Field::Busbw) => Some(&mut h.busbw),
        _ => None,
    }
}

/// The value columns as series: time / algbw / busbw / check columns
/// make one (a repeated one starts its in-place half, as nccl-tests'
/// two halves pasted as one wide table); each bandwidth column of
/// unnamed kind is a series of its own, unless it is the only value.
pub(crate) fn series_of(cols: &[Column], above: &str, ctx: &mut Context) -> Vec<Series> {
    let kind = context_bandwidth(above);
    let mut halves = vec![Series::default()];
    let mut unnamed: Vec<(usize, &Column)> = Vec::new();
    for (i, c) in cols.iter().enumerate() {
        let slot = |h: &mut Series| slot_of(h, c.field).map(|s| s.is_some());
        let taken = halves.last_mut().and_then(|h| match c.field {
            Some(Field::Wrong) => Some(h.wrong.is_some()),
            _ => slot(h),
        });
        if taken == Some(true) && halves.len() == 1 {
            halves[0].in_place = Some(false);
            halves.push(Series {
                in_place: Some(true),
                ..Series::default()
            });
        }
        let Some(h) = halves.last_mut() else { continue };
        match c.field {
            Some(Field::Wrong) => {
                h.wrong.get_or_insert(i);
            }
            Some(Field::Bandwidth) => unnamed.push((i, c)),
            f => {
                if let Some(s) = slot_of(h, f) {
                    s.get_or_insert((i, c.scale));
                }
            }
        }
    }
    let named = halves[0].time.is_some() || halves[0].algbw.is_some() || halves[0].busbw.is_some();
    let mut out = halves;
    for (k, (i, c)) in unnamed.into_iter().enumerate() {
        let id = if named { k + 1 } else { k };
        let bw = bandwidth_kind(c, kind);
        let mut s = if id == 0 {
            out[0].clone()
        } else {
            Series {
                id,
                ..Series::default()
            }
        };
        let what = match bw {
            Some(Bw::Alg) => {
                s.algbw = Some((i, c.scale));
                "algbw"
            }
            Some(Bw::Bus) | None => {
                s.busbw = Some((i, c.scale));
                "busbw"
            }
        };
        match bw {
            None => ctx.series_errors.push((id, format!(
                "line {}: column `{}` is a bandwidth, but neither its name nor the text above the table says whether it is bus bandwidth (busbw) or algorithm bandwidth (algbw)",
                ctx.line, c.name
            ))),
            Some(_) => ctx.series_notes.push((id, format!("{what}: column `{}` ({} says so)", c.name,
                if bandwidth_kind(c, None).is_some() { "its name" } else { "the text above the table" }))),
        }
        if id == 0 {
            out[0] = s;
        } else {
            out.push(s);
        }
    }
    out
}

/// A cell that must be a count (a positive integer).
fn count_cell(cols: &[Column], cells: &[String], f: Field) -> Option<usize> {
    cols.iter()
        .position(|c| c.field == Some(f))
        .and_then(|i| parse_usize(unquote(&cells[i])))
}

/// The rank count of a row: rccl-tests with MPI writes processes
/// (`ranks`) and GPUs per process (`gpusperrank`), without MPI all GPUs
/// (`gpus`); `cclsim` writes `ranks`.
fn ranks_of(cols: &[Column], cells: &[String]) -> Option<usize> {
    let get = |f| count_cell(cols, cells, f);
    match (get(Field::Ranks), get(Field::GpusPerRank), get(Field::Gpus)) {
        (Some(r), Some(g), _) => r.checked_mul(g),
        (Some(r), None, _) => Some(r),
        (None, _, Some(g)) => Some(g),
        _ => None,
    }
}

/// One series of one row as a record.
pub(crate) fn record(
    line: usize,
    text: &str,
    cells: &[String],
    cols: &[Column],
    s: &Series,
    labelled: &mut bool,
) -> Result<Record, (Option<Record>, FormatError)> {
    let at = |f: Field| cols.iter().position(|c| c.field == Some(f));
    let string = |f: Field| {
        at(f)
            .map(|i| unquote(&cells[i]).to_string())
            .filter(|v| !v.is_empty())
    };
    let mut r = Record {
        line,
        text: text.trim().to_string(),
        series: s.id,
        collective: string(Field::Collective),
        dtype: string(Field::Type),
        redop: string(Field::Redop),
        ranks: ranks_of(cols, cells),
        cycle: string(Field::Cycle),
        wrong: s
            .wrong
            .map(|i| unquote(&cells[i]).to_string())
            .filter(|w| !w.is_empty()),
        ..Record::default()
    };
    let bad = |i: usize, expected: &str| FormatError::BadCell {
        line,
        column: cols[i].name.clone(),
        value: excerpt(unquote(&cells[i])),
        expected: expected.to_string(),
    };
    let fail = |r: &Record, e| Err((Some(r.clone()), e));
    r.in_place = match (s.in_place, at(Field::InPlace)) {
        (Some(ip), _) => Some(ip),
        (None, Some(i)) => match columns::in_place(&cells[i]) {
            Some(ip) => Some(ip),
            None => return fail(&r, bad(i, "in-place: 0 or 1")),
        },
        (None, None) => None,
    };
    if let Some(i) = at(Field::Root) {
        match unquote(&cells[i]).parse::<i64>() {
            Ok(v) => r.root = Some(v),
            Err(_) if unquote(&cells[i]).is_empty() => {}
            Err(_) => return fail(&r, bad(i, "a rank (an integer; -1 for none)")),
        }
    }
    let Some(si) = at(Field::Size) else {
        return fail(&r, bad(0, "a size column"));
    };
    let size = unquote(&cells[si]);
    match columns::size_label(size) {
        Some(b) => {
            *labelled |= !size.bytes().all(|c| c.is_ascii_digit() || c == b',');
            r.bytes = (b as f64 * cols[si].scale).round() as u64;
        }
        None => {
            return fail(
                &r,
                bad(si, "a size in bytes (digits, or a label: 64K, 1M, 8G)"),
            )
        }
    }
    if let Some(i) = at(Field::Count) {
        r.count = super::parse_count(unquote(&cells[i]));
    }
    let value = |slot: Option<(usize, f64)>, what: &str| match slot {
        None => Ok(None),
        Some((i, scale)) => columns::number(&cells[i])
            .map(|v| v.map(|v| v * scale))
            .map_err(|_| bad(i, what)),
    };
    let time = value(s.time, "a time (a number ≥ 0, or N/A)");
    let algbw = value(s.algbw, "a bandwidth (a number ≥ 0, or N/A)");
    let busbw = value(s.busbw, "a bandwidth (a number ≥ 0, or N/A)");
    match (time, algbw, busbw) {
        (Ok(t), Ok(a), Ok(b)) => {
            (r.time_us, r.algbw, r.busbw) = (t, a, b);
            Ok(r)
        }
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => fail(&r, e),
    }
}
