//! nccl-tests JSON output (`-J FILE.json`, nccl-tests 2.19+, JSON file
//! version 3).
//!
//! Source of the layout: NVIDIA nccl-tests `src/util.cu` @a0b82b2
//! (`jsonOutputInit`, `writeDeviceReport`, `writeResultHeader`,
//! `writeBenchmarkLinePreamble`, `writeBenchmarkLineBody`,
//! `writeResultFooter`). One file per run, on one line:
//!
//! ```text
//! {"version":3, "start_time":"…", "args":["./build/all_reduce_perf", …],
//!  "env":[…], "nccl_version":22703,
//!  "config":{"nthreads":1, "ngpus":8, …, "devices":[{"rank":0, …}]},
//!  "results":[{"size":8, "count":2, "type":"float", "redop":"sum",
//!    "root":"    -1",
//!    "out_of_place":{"time":12.3, "alg_bw":0.0, "bus_bw":0.0, "nwrong":0.0},
//!    "in_place":{…}, "actual_iterations":20, "experiment_name":""}, …],
//!  "out_of_bounds":{…}, "average_bus_bandwidth":{…}, "errors":[], "end_time":"…"}
//! ```
//!
//! `time` is `cpu_time` with `-C 1`; a NaN is written as the string
//! `"nan"` (a missing value here); `nwrong` is `null` without `-c`;
//! `root` is the printed `%6i` string. `devices` holds one entry per
//! process (the root parses the first rank line of each process's block),
//! so the rank count is `devices × nthreads × ngpus`. The collective is
//! the program of `args[0]` (`all_reduce_perf`). Several files
//! concatenated are several tables.

use super::nccl_tests::infer_collective;
use super::{excerpt, Collective, FormatError, Halves, Measure, Row, Table, TableBuilder, Tool};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Byte offset where JSON input starts: the first line that is neither
/// blank nor a `#` comment, if it starts with `{` (a document, or JSON
/// lines) or `[` (a list of records: rccl-tests `-Z json`).
pub(crate) fn json_start(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            offset += line.len();
            continue;
        }
        return (t.starts_with('{') || t.starts_with('['))
            .then_some(offset + line.len() - line.trim_start().len());
    }
    None
}

/// 1-based line of byte offsets, from the positions of the newlines.
pub(crate) struct LineIndex(Vec<usize>);

impl LineIndex {
    pub(crate) fn new(text: &str) -> LineIndex {
        LineIndex(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    pub(crate) fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&nl| nl < offset) + 1
    }

    pub(crate) fn column(&self, offset: usize) -> usize {
        let l = self.line(offset);
        if l == 1 {
            offset + 1
        } else {
            offset - self.0[l - 2]
        }
    }
}

/// Byte offset of `part`, a slice of `text`, in `text`.
pub(crate) fn offset_in(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// A number cell: `Ok(None)` for missing (`null`, `"nan"`, absent),
/// `Err(text)` for anything else that is not a finite number ≥ 0.
fn number(v: Option<&Value>) -> Result<Option<f64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if super::is_missing(s.trim()) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(n.to_string()),
        },
        Some(other) => Err(excerpt(&other.to_string())),
    }
}

/// One half (`out_of_place` / `in_place`); `Ok(None)` if absent or its
/// time is missing.
fn half(
    bytes: u64,
    v: Option<&Value>,
    name: &str,
    bad: &dyn Fn(String, String, &str) -> FormatError,
) -> Result<Option<Measure>, FormatError> {
    let obj = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => o,
        Some(other) => {
            return Err(bad(
                name.to_string(),
                excerpt(&other.to_string()),
                "an object {\"time\", \"alg_bw\", \"bus_bw\", \"nwrong\"} or null",
            ))
        }
    };
    let time_key = if obj.contains_key("cpu_time") {
        "cpu_time"
    } else {
        "time"
    };
    let field =
        |k: &str, what: &str| number(obj.get(k)).map_err(|v| bad(format!("{name}.{k}"), v, what));
    let Some(time_us) = field(time_key, "a time in µs (a number ≥ 0, or \"nan\")")? else {
        return Ok(None);
    };
    let bw = "a bandwidth in GB/s (a number ≥ 0, or \"nan\")";
    let algbw_gbps = field("alg_bw", bw)?.unwrap_or(if time_us > 0.0 {
        bytes as f64 / (time_us * 1e3)
    } else {
        0.0
    });
    let busbw_gbps = field("bus_bw", bw)?;
    let check = match obj.get("nwrong") {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
            _ => n.to_string(),
        },
        Some(Value::String(s)) => s.clone(),
        _ => "N/A".to_string(),
    };
    Ok(Some(Measure {
        time_us,
        algbw_gbps,
        busbw_gbps,
        check,
    }))
}

/// The halves present in a result record.
fn halves_of(rec: &Map<String, Value>) -> Halves {
    let has = |k: &str| rec.get(k).is_some_and(|v| !v.is_null());
    match (has("out_of_place"), has("in_place")) {
        (false, true) => Halves::InPlace,
        (true, false) => Halves::OutOfPlace,
        _ => Halves::Both,
    }
}

fn row(
    line: usize,
    index: usize,
    raw: &RawValue,
    halves: Halves,
) -> Result<Option<Row>, FormatError> {
    let bad = |column: String, value: String, expected: &str| FormatError::BadCell {
        line,
        column: format!("results[{index}].{column}"),
        value,
        expected: expected.to_string(),
    };
    let rec: Map<String, Value> = match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::Object(m)) => m,
        _ => {
            return Err(FormatError::BadRow {
                line,
                text: excerpt(raw.get()),
                expected: format!("results[{index}] to be an object {{\"size\", \"count\", \"type\", \"redop\", \"root\", \"out_of_place\", \"in_place\"}}"),
            })
        }
    };
    let bytes = match rec.get("size") {
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
        other => {
            return Err(bad(
                "size".into(),
                other.map_or("missing".into(), |v| excerpt(&v.to_string())),
                "a size in bytes (an integer ≥ 0)",
            ))
        }
    };
    let count = match rec.get("count") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
        Some(other) => {
            return Err(bad(
                "count".into(),
                excerpt(&other.to_string()),
                "an element count (an integer ≥ 0)",
            ))
        }
    };
    let text = |k: &str| {
        rec.get(k)
            .and_then(Value::as_str)
            .map(|s| s.trim().to_string())
    };
    let root = match rec.get("root") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64(),
        Some(Value::String(s)) if s.trim().parse::<i64>().is_ok() => s.trim().parse().ok(),
        Some(other) => {
            return Err(bad(
                "root".into(),
                excerpt(&other.to_string()),
                "a rank (an integer, or its printed string; -1 for none)",
            ))
        }
    };
    let bad_ref: &dyn Fn(String, String, &str) -> FormatError = &bad;
    let oop = half(bytes, rec.get("out_of_place"), "out_of_place", bad_ref)?;
    let ip = half(bytes, rec.get("in_place"), "in_place", bad_ref)?;
    let (first, second) = match halves {
        Halves::InPlace => (ip, None),
        Halves::OutOfPlace => (oop, None),
        Halves::Both => (oop, ip),
    };
    Ok(first.map(|out_of_place| Row {
        line,
        bytes,
        count,
        dtype: text("type"),
        redop: text("redop"),
        root,
        out_of_place,
        in_place: second,
    }))
}

/// One JSON document: a table if it has a `results` list.
fn table(text: &str, lines: &LineIndex, doc: &RawValue) -> Option<Table> {
    let fields: BTreeMap<String, &RawValue> = serde_json::from_str(doc.get()).ok()?;
    let results: Vec<&RawValue> = serde_json::from_str(fields.get("results")?.get()).ok()?;
    let line = lines.line(offset_in(text, doc.get()));
    let collective = fields
        .get("args")
        .and_then(|a| serde_json::from_str::<Vec<String>>(a.get()).ok())
        .and_then(|args| {
            let prog = args.first()?;
            let base = prog.rsplit('/').next().unwrap_or(prog);
            let name = base.strip_suffix("_perf").filter(|n| !n.is_empty())?;
            Some(Collective::from_tool_name(name))
        });
    let ranks = fields
        .get("config")
        .and_then(|c| serde_json::from_str::<Value>(c.get()).ok())
        .and_then(|c| {
            let devices = c.get("devices")?.as_array()?.len();
            let per = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(1).max(1) as usize;
            devices
                .checked_mul(per("nthreads"))?
                .checked_mul(per("ngpus"))
                .filter(|&n| n > 0)
        });
    let halves = results
        .iter()
        .find_map(|r| match serde_json::from_str::<Value>(r.get()) {
            Ok(Value::Object(m)) => Some(halves_of(&m)),
            _ => None,
        })
        .unwrap_or_default();
    let mut b = TableBuilder::new(Tool::NcclTests, line, halves);
    b.table_mut().collective = collective;
    b.table_mut().ranks = ranks;
    for (i, raw) in results.iter().enumerate() {
        let at = lines.line(offset_in(text, raw.get()));
        b.row(at, raw.get(), || row(at, i, raw, halves));
    }
    let mut t = b.finish();
    if t.collective.is_none() {
        if let Some((c, ratio)) = infer_collective(&t) {
            t.notes.push(format!(
                "the log names no collective; {} inferred from busbw / algbw = {ratio:.3} on {} ranks (nccl-tests doc/PERFORMANCE.md)",
                c.name(),
                t.ranks.unwrap_or(0)
            ));
            t.collective = Some(c);
        }
    }
    Some(t)
}

/// serde_json's error `e` of input read from byte `start` as a
/// [`FormatError::Json`] with the line and column in the whole text.
pub(crate) fn json_error(lines: &LineIndex, start: usize, e: &serde_json::Error) -> FormatError {
    // serde_json counts from `start`.
    let first_line = lines.line(start);
    let (line, column) = if e.line() <= 1 {
        (
            first_line,
            lines.column(start) + e.column().saturating_sub(1),
        )
    } else {
        (first_line + e.line() - 1, e.column())
    };
    FormatError::Json {
        line,
        column,
        message: json_message(e),
    }
}

/// serde_json's description of `e` without its position (given apart).
pub(crate) fn json_message(e: &serde_json::Error) -> String {
    e.to_string()
        .split(" at line ")
        .next()
        .unwrap_or("")
        .to_string()
}

/// Parses nccl-tests JSON starting at byte `start` of `text` (see
/// [`json_start`]): one table per JSON document with a `results` list.
///
/// Errors: [`FormatError::Json`] if the first document is not valid JSON
/// (a later broken one ends the input, noted on the last table);
/// [`FormatError::NoTable`] if no document has `results`.
pub(crate) fn parse(text: &str, start: usize) -> Result<super::Log, FormatError> {
    let lines = LineIndex::new(text);
    let mut tables = Vec::new();
    let mut docs = serde_json::Deserializer::from_str(&text[start..]).into_iter::<&RawValue>();
    loop {
        match docs.next() {
            None => break,
            Some(Ok(doc)) => tables.extend(table(text, &lines, doc)),
            Some(Err(e)) => {
                let err = json_error(&lines, start, &e);
                match tables.last_mut() {
                    None => return Err(err),
                    Some(t) => {
                        t.notes
                            .push(format!("the input after this table is not read: {err}"));
                        break;
                    }
                }
            }
        }
    }
    super::finish_log(tables)
}

#[cfg(test)]
mod tests {
    use super::super::parse_log;
    use super::*;

    const ONE: &str = r#"{"version":3,"args":["./build/all_reduce_perf","-b","8"],"config":{"nthreads":1,"ngpus":2,"devices":[{"rank":0},{"rank":2}]},"results":[{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":12.500000,"alg_bw":0.000640,"bus_bw":0.000960,"nwrong":0.000000},"in_place":{"time":"nan","alg_bw":"nan","bus_bw":"nan","nwrong":null},"actual_iterations":20,"experiment_name":""}]}"#;

    #[test]
    fn one_line_json() {
        let log = parse_log(ONE).unwrap();
        let t = &log.tables[0];
        assert_eq!(
            (t.ranks, t.collective.clone()),
            (Some(4), Some(Collective::AllReduce))
        );
        let r = &t.rows[0];
        assert_eq!((r.bytes, r.count, r.root), (8, Some(2), Some(-1)));
        assert_eq!(r.out_of_place.time_us, 12.5);
        assert_eq!(r.out_of_place.check, "0");
        assert_eq!(r.in_place, None);
    }

    #[test]
    fn broken_json_names_line_and_column() {
        let e = parse_log("#! comment\n{\"version\":3,\n \"results\": [1,]}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3, column 16: not valid JSON (expected value); expected nccl-tests `-J` output or JSON records (rccl-tests `-Z json`, `cclsim --format jsonl`)"
        );
        let log = parse_log(&ONE.replace("\"size\":8", "\"size\":-8")).unwrap();
        assert_eq!(
            log.tables[0].rejected.as_deref(),
            Some("line 1: results[0].size is `-8`; expected a size in bytes (an integer ≥ 0)")
        );
        assert_eq!(parse_log("{\"a\": 1}").unwrap_err(), FormatError::NoTable);
    }
}
