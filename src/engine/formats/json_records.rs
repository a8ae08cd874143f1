//! JSON records, one object per size and half: rccl-tests' `--output_file
//! F -Z json` (`src/common.cu` `Reporter`: one object per line in the
//! first form, a list `[{...}, ...]` since the reporter buffers its
//! results; keys `name`, `size`, `type`, `redop`, `inPlace`, `time`,
//! `algBw`, `busBw`, `wrong` or `#wrong` (a string), `gpus` without MPI,
//! `nodes`, `ranks`, `ranksPerNode`, `gpusPerRank` with MPI, `numCycle`)
//! and `cclsim predict|sweep --format jsonl` (`collective`, `bytes`,
//! `time_us`, `algbw_gbps`, `busbw_gbps`, `ranks`, ...). Keys are read by
//! the vocabulary of [`super::columns`]; unknown keys are skipped; an
//! object without a size and a time or bandwidth is not a record.

use super::columns::{self, Column, Field};
use super::delimited;
use super::nccl_json::{json_error, offset_in, LineIndex};
use super::records::{self, Context, Record};
use super::{FormatError, Table};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON value as a table cell.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One object as a record, if it is one.
fn record(
    line: usize,
    raw: &RawValue,
    ctx: &mut Context,
) -> Option<Result<Record, (Option<Record>, FormatError)>> {
    let obj: Map<String, Value> = serde_json::from_str(raw.get()).ok()?;
    let mut cols: Vec<Column> = Vec::with_capacity(obj.len());
    let mut cells: Vec<String> = Vec::with_capacity(obj.len());
    for (k, v) in &obj {
        // A key in a unit nothing reads is skipped, as an unknown key.
        if let Ok(c) = columns::column(k) {
            cols.push(c);
            cells.push(cell(v));
        }
    }
    let has = |f: Field| cols.iter().any(|c| c.field == Some(f));
    let value = [Field::Time, Field::Algbw, Field::Busbw, Field::Bandwidth];
    if !has(Field::Size) || !value.iter().any(|f| has(*f)) {
        return None;
    }
    let series = delimited::series_of(&cols, "", ctx);
    let mut labelled = false;
    Some(delimited::record(
        line,
        raw.get(),
        &cells,
        &cols,
        series.first()?,
        &mut labelled,
    ))
}

/// The records of `text` from byte `start` (JSON lines, or lists of
/// objects) as tables; none if no object is a record.
///
/// Errors: [`FormatError::Json`] if the input is not JSON before any
/// record (a later break ends the input, noted on the tables).
pub(crate) fn parse(text: &str, start: usize) -> Result<Vec<Table>, FormatError> {
    let lines = LineIndex::new(text);
    let mut items = Vec::new();
    let mut ctx = Context::default();
    let mut broken = None;
    let docs = serde_json::Deserializer::from_str(&text[start..]).into_iter::<&RawValue>();
    for doc in docs {
        let doc = match doc {
            Ok(d) => d,
            Err(e) if items.is_empty() => return Err(json_error(&lines, start, &e)),
            Err(e) => {
                broken = Some(json_error(&lines, start, &e));
                break;
            }
        };
        let elements: Vec<&RawValue> =
            serde_json::from_str(doc.get()).unwrap_or_else(|_| vec![doc]);
        for raw in elements {
            let line = lines.line(offset_in(text, raw.get()));
            if ctx.line == 0 {
                ctx.line = line;
            }
            items.extend(record(line, raw, &mut ctx));
        }
    }
    if items.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(e) = broken {
        ctx.notes.push(format!(
            "the input after line {} is not read: {e}",
            ctx.line
        ));
    }
    Ok(records::tables(items, &ctx))
}
