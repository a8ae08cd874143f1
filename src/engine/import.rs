//! A pasted log as the page's "measurements in" card reads it: every table
//! parsed ([`parse_log`]), one of them fitted ([`Profile::fit_table`]).
//! A log can be megabytes, so the page asks the planner worker for this
//! (`runtime::planner`'s `Job::Import`) and its main thread only draws the
//! answer; `cclsim fit` reads a log through the same two functions.

use crate::engine::calibrate::Profile;
use crate::engine::collective::Primitive;
use crate::engine::formats::{parse_log, Collective, FormatError, Log};
use serde::{Deserialize, Serialize};

/// The parsed log and its fit (made again when the text, the chosen table,
/// or the page's collective or rank count changes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Import {
    /// `None` for an empty text.
    pub parsed: Option<Result<Log, FormatError>>,
    /// Index of the fitted table in `log.tables`.
    pub table: usize,
    /// The fit of that table.
    pub fit: Option<Result<Profile, String>>,
    /// The table printed no rank count; this one (the page's) was assumed.
    pub assumed_ranks: Option<usize>,
}

impl Import {
    /// Nothing pasted.
    pub fn empty() -> Import {
        Import {
            parsed: None,
            table: 0,
            fit: None,
            assumed_ranks: None,
        }
    }

    /// A log that could not be read at all (the reader's worker failed):
    /// `why` stands as the fit's error.
    pub fn unread(why: String) -> Import {
        Import {
            fit: Some(Err(why)),
            ..Import::empty()
        }
    }

    /// Parses `text`; fits table `choice` (else the first usable one of
    /// primitive `op`, else the first usable one); `ranks` if the table
    /// prints none.
    pub fn new(text: &str, choice: Option<usize>, op: Primitive, ranks: usize) -> Import {
        if text.trim().is_empty() {
            return Import::empty();
        }
        // Which tables print their rank count, before the page's fills
        // the others (OSU's per-rank sizes and busbw-only tables convert
        // with it, and a table naming no collective takes the page's).
        let mut printed: Vec<bool> = Vec::new();
        let parsed = parse_log(text).map(|mut log| {
            printed = log.tables.iter().map(|t| t.ranks.is_some()).collect();
            log.assume(Some(ranks), Some(&Collective::from_tool_name(op.name())));
            log
        });
        let (table, fit, assumed_ranks) = match &parsed {
            Err(_) => (0, None, None),
            Ok(log) => {
                let table = chosen_table(log, choice, op);
                match log.tables.get(table) {
                    None => (0, None, None),
                    Some(t) => {
                        let fit = Profile::fit_table(t, Some(ranks), "pasted log")
                            .map_err(|e| e.to_string());
                        let assumed = !printed.get(table).copied().unwrap_or(false);
                        (table, Some(fit), assumed.then_some(ranks))
                    }
                }
            }
        };
        Import {
            parsed: Some(parsed),
            table,
            fit,
            assumed_ranks,
        }
    }
}

/// The table to fit: `choice` if the log has it, else the first usable
/// table of primitive `op`, else the first usable one, else the first.
fn chosen_table(log: &Log, choice: Option<usize>, op: Primitive) -> usize {
    let usable = |i: &usize| {
        let t = &log.tables[*i];
        t.rejected.is_none() && !t.fittable_rows().is_empty()
    };
    choice
        .filter(|i| *i < log.tables.len())
        .or_else(|| {
            (0..log.tables.len()).filter(usable).find(|i| {
                log.tables[*i]
                    .collective
                    .as_ref()
                    .and_then(|c| c.primitive())
                    == Some(op)
            })
        })
        .or_else(|| (0..log.tables.len()).find(usable))
        .unwrap_or(0)
}
