//! Measurement records into tables: one record is one size and one half
//! (out-of-place or in-place) of one run, as a CSV or markdown row or a
//! JSON object gives it ([`super::delimited`], [`super::json_records`]).
//! Records of the same run (collective, type, op, root, rank count,
//! rccl-tests' `numCycle`, and the value column of a pasted table) form
//! one [`Table`]; an out-of-place and an in-place record of the same size
//! (rccl-tests writes them as two records, `inPlace` 0 and 1) form one
//! [`Row`].
//!
//! A time is taken as given; without one, from algbw (`time = size /
//! algbw`); with busbw only, the table waits for its collective and rank
//! count ([`Pending::FromBusbw`]).

use super::nccl_tests::infer_collective;
use super::{Collective, FormatError, Halves, Measure, Pending, Row, Table, TableBuilder, Tool};

/// One size and one half of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Record {
    /// 1-based line.
    pub(crate) line: usize,
    /// The record's text (to keep output printed twice once).
    pub(crate) text: String,
    /// Which value column of a pasted table (0 for one series).
    pub(crate) series: usize,
    /// Collective as written.
    pub(crate) collective: Option<String>,
    /// Size, bytes.
    pub(crate) bytes: u64,
    /// Elements.
    pub(crate) count: Option<u64>,
    /// Element type.
    pub(crate) dtype: Option<String>,
    /// Reduce op.
    pub(crate) redop: Option<String>,
    /// Root rank.
    pub(crate) root: Option<i64>,
    /// Ranks of the run.
    pub(crate) ranks: Option<usize>,
    /// In-place (`Some(true)`), out-of-place, or not said.
    pub(crate) in_place: Option<bool>,
    /// rccl-tests' `numCycle`.
    pub(crate) cycle: Option<String>,
    /// Time, µs.
    pub(crate) time_us: Option<f64>,
    /// algbw, GB/s.
    pub(crate) algbw: Option<f64>,
    /// busbw, GB/s.
    pub(crate) busbw: Option<f64>,
    /// The check cell as written.
    pub(crate) wrong: Option<String>,
}

/// The fields that tell runs apart.
type Key = (
    usize,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<usize>,
    Option<String>,
);

fn key(r: &Record) -> Key {
    (
        r.series,
        r.collective.as_ref().map(|c| c.to_ascii_lowercase()),
        r.dtype.clone(),
        r.redop.clone(),
        r.root,
        r.ranks,
        r.cycle.clone(),
    )
}

/// What the text around a block of records says, and how it was read.
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    /// 1-based line of the block's header (or first record).
    pub(crate) line: usize,
    /// The collective, where no record names one.
    pub(crate) collective: Option<Collective>,
    /// Notes for every table of the block.
    pub(crate) notes: Vec<String>,
    /// Notes for the table of one series.
    pub(crate) series_notes: Vec<(usize, String)>,
    /// Why each series cannot be read (a bandwidth of unknown kind).
    pub(crate) series_errors: Vec<(usize, String)>,
}

/// A block that cannot be read at all, as one table rejected with `why`.
pub(crate) fn rejected(ctx: &Context, why: String) -> Table {
    let mut t = TableBuilder::new(Tool::NcclTests, ctx.line.max(1), Halves::OutOfPlace).finish();
    t.collective = ctx.collective.clone();
    t.rejected = Some(why);
    t
}

/// One run's records in order, the first bad one kept.
#[derive(Default)]
struct Group {
    records: Vec<Record>,
    error: Option<FormatError>,
    more_errors: usize,
}

impl Group {
    fn fail(&mut self, e: FormatError) {
        if self.error.is_none() {
            self.error = Some(e);
        } else {
            self.more_errors += 1;
        }
    }
}

/// The records of one block as tables. A record that failed with a
/// known run (`Err((Some(record), e))`) rejects its run's table; one
/// that failed before its run was known (`Err((None, e))`: a CSV row of
/// the wrong length) rejects every table of the block.
pub(crate) fn tables(
    items: Vec<Result<Record, (Option<Record>, FormatError)>>,
    ctx: &Context,
) -> Vec<Table> {
    let mut groups: Vec<(Key, Group)> = Vec::new();
    let mut orphans: Vec<FormatError> = Vec::new();
    fn find(r: &Record, groups: &mut Vec<(Key, Group)>) -> usize {
        let k = key(r);
        match groups.iter().position(|(g, _)| *g == k) {
            Some(i) => i,
            None => {
                groups.push((k, Group::default()));
                groups.len() - 1
            }
        }
    }
    for item in items {
        match item {
            Ok(r) => {
                let i = find(&r, &mut groups);
                groups[i].1.records.push(r);
            }
            Err((Some(r), e)) => {
                let i = find(&r, &mut groups);
                groups[i].1.fail(e);
            }
            Err((None, e)) => orphans.push(e),
        }
    }
    if groups.is_empty() {
        if let Some(e) = orphans.first().cloned() {
            groups.push((key(&Record::default()), Group::default()));
            groups[0].1.fail(e);
            groups[0].1.more_errors += orphans.len() - 1;
        }
    } else {
        for (_, g) in &mut groups {
            for e in &orphans {
                g.fail(e.clone());
            }
        }
    }
    groups
        .into_iter()
        .map(|(k, g)| table(k.0, g, ctx))
        .collect()
}

/// The measure of one record: `Ok(None)` if it has no time, algbw or
/// busbw; busbw alone gives time and algbw 0 (the table waits).
fn measure_of(r: &Record) -> Option<Measure> {
    let bytes = r.bytes as f64;
    let (time_us, algbw) = match (r.time_us, r.algbw) {
        (Some(t), Some(a)) => (t, a),
        (Some(t), None) => (t, if t > 0.0 { bytes / (t * 1e3) } else { 0.0 }),
        (None, Some(a)) if a > 0.0 => (bytes / (a * 1e3), a),
        (None, _) if r.busbw.is_some() => (0.0, 0.0),
        _ => return None,
    };
    Some(Measure {
        time_us,
        algbw_gbps: algbw,
        busbw_gbps: r.busbw,
        check: r.wrong.clone().unwrap_or_else(|| "N/A".to_string()),
    })
}

/// Pairs out-of-place and in-place records of the same size into rows.
fn rows_of(records: &[Record]) -> Vec<(Option<&Record>, Option<&Record>)> {
    let mut rows: Vec<(Option<&Record>, Option<&Record>)> = Vec::new();
    for r in records {
        let ip = r.in_place == Some(true);
        let merge = rows.last_mut().filter(|(o, i)| {
            let same = o.or(*i).is_some_and(|x| x.bytes == r.bytes);
            same && if ip { i.is_none() } else { o.is_none() }
        });
        match (merge, ip) {
            (Some(last), true) => last.1 = Some(r),
            (Some(last), false) => last.0 = Some(r),
            (None, true) => rows.push((None, Some(r))),
            (None, false) => rows.push((Some(r), None)),
        }
    }
    rows
}

fn table(series: usize, g: Group, ctx: &Context) -> Table {
    let has = |ip: bool| g.records.iter().any(|r| (r.in_place == Some(true)) == ip);
    let halves = match (has(false), has(true)) {
        (true, true) => Halves::Both,
        (false, true) => Halves::InPlace,
        _ => Halves::OutOfPlace,
    };
    let first = g.records.first();
    let line = first.map_or(ctx.line, |r| ctx.line.min(r.line).max(1));
    let mut b = TableBuilder::new(Tool::NcclTests, line, halves);
    {
        let t = b.table_mut();
        t.collective = first
            .and_then(|r| r.collective.as_deref())
            .map(Collective::from_tool_name)
            .or_else(|| ctx.collective.clone());
        t.ranks = first.and_then(|r| r.ranks);
        t.notes.extend(ctx.notes.iter().cloned());
        t.notes.extend(
            ctx.series_notes
                .iter()
                .filter(|(s, _)| *s == series)
                .map(|(_, n)| n.clone()),
        );
    }
    let from_busbw = g
        .records
        .iter()
        .any(|r| r.time_us.is_none() && r.algbw.is_none() && r.busbw.is_some());
    for (o, i) in rows_of(&g.records) {
        let lead = o.or(i).map_or(0, |r| r.line);
        let text = [o, i]
            .iter()
            .flatten()
            .map(|r| r.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let (first, second) = match halves {
            Halves::Both => (o, i),
            _ => (o.or(i), None),
        };
        b.row(lead, &text, || {
            Ok(first.and_then(|f| {
                Some(Row {
                    line: f.line,
                    bytes: f.bytes,
                    count: f.count,
                    dtype: f.dtype.clone(),
                    redop: f.redop.clone(),
                    root: f.root,
                    out_of_place: measure_of(f)?,
                    in_place: second.and_then(measure_of),
                })
            }))
        });
    }
    if let Some(e) = g.error {
        b.fail(e, g.more_errors);
    }
    let mut t = b.finish();
    if let Some((_, why)) = ctx.series_errors.iter().find(|(s, _)| *s == series) {
        t.rejected.get_or_insert_with(|| why.clone());
    }
    whole_sizes(&mut t);
    if t.collective.is_none() {
        if let Some((c, _)) = infer_collective(&t) {
            t.notes.push(format!(
                "the input names no collective; {} inferred from busbw / algbw (nccl-tests doc/PERFORMANCE.md)",
                c.name()
            ));
            t.collective = Some(c);
        }
    }
    if from_busbw {
        t.pending = Some(Pending::FromBusbw);
        t.resolve();
    }
    t
}

/// rccl-tests' `Reporter` wrote the receive buffer as `size` before it
/// wrote the larger of send and receive (`src/common.cu`: `expectedBytes`,
/// later `largestMessageSize`), so ReduceScatter and Scatter records of
/// older files give one rank's part. Such a size is known by algbw × time
/// (full precision in these files): when that is `ranks × size` and not
/// `size`, the size is multiplied, and noted.
fn whole_sizes(t: &mut Table) {
    let Some(n) = t.ranks.filter(|&n| n > 1) else {
        return;
    };
    let near = |a: f64, b: f64| (a - b).abs() <= 0.01 * b;
    let mut fixed = 0;
    for r in &mut t.rows {
        let m = &r.out_of_place;
        let moved = m.algbw_gbps * m.time_us * 1e3;
        let whole = r.bytes as f64 * n as f64;
        if r.bytes > 0 && near(moved, whole) && !near(moved, r.bytes as f64) {
            r.bytes = r.bytes.saturating_mul(n as u64);
            fixed += 1;
        }
    }
    if fixed > 0 {
        t.notes.push(format!(
            "{fixed} size(s) × {n} ranks: algbw × time is the whole buffer, the record gave one rank's part (older rccl-tests output files)"
        ));
    }
}
