//! Accuracy on public measurements, by the path a user takes: fit a
//! profile to a log ([`Profile::fit_log`], what `cclsim fit` does), then ask
//! the plan for another size, scale or collective with `algo=auto` on the
//! measured machine ([`Plan::headline`], what `cclsim predict --profile`
//! does), and compare with what was measured.
//!
//! - **same scale**: fit the even-indexed rows of a table, predict the odd
//!   ones ([`super::super::plan::holdout`]);
//! - **cross scale**: fit a collective's table at the fewest nodes of a set,
//!   predict the same collective's tables at every other node count;
//! - **cross collective**: fit the AllReduce table at the fewest nodes,
//!   predict every other collective's table at every node count;
//! - **preset**: a preset with no fit (`h100-8`) against a log of that
//!   machine.
//!
//! Each line gives the median and largest relative error over the rows of
//! at least [`MIN_BYTES`] and, where the plan gives a range, how many
//! measured values fall inside the 80 % range.

use crate::engine::calibrate::Profile;
use crate::engine::config::{AlgoChoice, Config, MEASURED};
use crate::engine::dtype::DType;
use crate::engine::formats::{self, Collective, Log, Table};
use crate::engine::plan::{holdout, Plan};
use crate::engine::stats;
use crate::engine::units::{format_bytes, MAX_MESSAGE_BYTES};

/// Smallest size counted, bytes.
pub const MIN_BYTES: u64 = 1024;

/// One measured table of a set.
#[derive(Clone, Debug)]
pub struct SetTable {
    /// Nodes it ran on.
    pub nodes: usize,
    /// Its collective.
    pub collective: Collective,
    /// The parsed log.
    pub log: Log,
    /// Where it comes from (file name).
    pub source: String,
}

/// Tables of one machine at several scales and collectives.
#[derive(Clone, Debug)]
pub struct Set {
    /// Its name (the folder).
    pub name: String,
    /// Its tables.
    pub tables: Vec<SetTable>,
}

/// What a kind of check measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Even rows fitted, odd rows predicted.
    SameScale,
    /// Fewest nodes fitted, other node counts predicted.
    CrossScale,
    /// AllReduce fitted, other collectives predicted.
    CrossCollective,
    /// A preset with no fit.
    Preset,
}

impl Kind {
    /// Heading in the tables.
    pub fn title(self) -> &'static str {
        match self {
            Kind::SameScale => "same scale (even rows fitted, odd rows predicted)",
            Kind::CrossScale => "cross scale (fewest nodes fitted, the others predicted)",
            Kind::CrossCollective => "cross collective (AllReduce fitted, the others predicted)",
            Kind::Preset => "preset, no fit",
        }
    }
}

/// One line of the tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The check.
    pub kind: Kind,
    /// The set or file.
    pub set: String,
    /// What was fitted (`all_reduce n2`), or the preset.
    pub fitted: String,
    /// What was predicted (`all_gather n540`).
    pub predicted: String,
    /// `(bytes, measured µs, predicted µs, inside the 80 % range)` per row.
    pub rows: Vec<(u64, f64, f64, Option<bool>)>,
}

impl Line {
    fn errors(&self) -> Vec<f64> {
        self.rows
            .iter()
            .map(|&(_, m, p, _)| ((p - m) / m).abs())
            .collect()
    }

    /// Median relative error.
    pub fn median(&self) -> f64 {
        stats::median(self.errors()).unwrap_or(f64::NAN)
    }

    /// Largest relative error.
    pub fn max(&self) -> f64 {
        self.errors().into_iter().fold(0.0, f64::max)
    }

    /// Share of rows inside the 80 % range (`None` without ranges).
    pub fn coverage(&self) -> Option<f64> {
        let with: Vec<bool> = self.rows.iter().filter_map(|r| r.3).collect();
        (!with.is_empty()).then(|| with.iter().filter(|&&x| x).count() as f64 / with.len() as f64)
    }
}

/// The dtype a size is a whole number of.
fn dtype_for(bytes: u64) -> DType {
    [DType::Fp32, DType::Fp16, DType::Int8]
        .into_iter()
        .find(|d| bytes % d.size_bytes() as u64 == 0)
        .unwrap_or(DType::Int8)
}

fn first_table(log: &Log) -> Option<&Table> {
    log.usable().into_iter().next()
}

fn label(t: &SetTable) -> String {
    format!("{} n{}", t.collective.name(), t.nodes)
}

/// Predicts every row (≥ [`MIN_BYTES`]) of `target` with `profile` on the
/// measured machine.
fn predict_rows(
    profile: &Profile,
    target: &SetTable,
) -> Result<Vec<(u64, f64, f64, Option<bool>)>, String> {
    let table =
        first_table(&target.log).ok_or_else(|| format!("{}: no usable table", target.source))?;
    let ranks = table
        .ranks
        .ok_or_else(|| format!("{}: the log prints no rank count", target.source))?;
    let primitive = target
        .collective
        .primitive()
        .ok_or_else(|| format!("{}: no primitive", target.source))?;
    let mut out = Vec::new();
    for r in table.fittable_rows() {
        if r.bytes < MIN_BYTES || r.bytes > MAX_MESSAGE_BYTES {
            continue;
        }
        let c = Config {
            primitive,
            algo: AlgoChoice::Auto,
            topo: MEASURED.into(),
            bytes: r.bytes,
            dtype: dtype_for(r.bytes),
            ranks,
            profile: Some(profile.clone()),
            ..Config::default()
        };
        let plan = Plan::headline(&c)
            .map_err(|e| format!("{} at {}: {e}", target.source, format_bytes(r.bytes)))?;
        let m = r.out_of_place.time_us;
        let inside = plan
            .prediction
            .as_ref()
            .map(|a| a.low_us <= m && m <= a.high_us);
        out.push((r.bytes, m, plan.estimate.time_us, inside));
    }
    Ok(out)
}

fn fit(t: &SetTable) -> Result<Profile, String> {
    Profile::fit_log(&t.log, Some(&t.collective), None, &t.source)
        .map_err(|e| format!("{}: {e}", t.source))
}

/// The same-scale, cross-scale and cross-collective lines of `set`.
///
/// Errors: a sentence naming the file (no usable table, no rank count, a
/// plan that fails).
pub fn check_set(set: &Set) -> Result<Vec<Line>, String> {
    let mut out = Vec::new();
    for t in &set.tables {
        let table = first_table(&t.log).ok_or_else(|| format!("{}: no usable table", t.source))?;
        let h = holdout::holdout(table, None, Some(&t.collective), MIN_BYTES)?;
        out.push(Line {
            kind: Kind::SameScale,
            set: set.name.clone(),
            fitted: format!("{} (even rows)", label(t)),
            predicted: format!("{} (odd rows)", label(t)),
            rows: h.rows.iter().map(|&(b, m, p)| (b, m, p, None)).collect(),
        });
    }
    let fewest = set.tables.iter().map(|t| t.nodes).min().unwrap_or(1);
    let mut collectives: Vec<Collective> = Vec::new();
    for t in &set.tables {
        if !collectives.contains(&t.collective) {
            collectives.push(t.collective.clone());
        }
    }
    for c in &collectives {
        let Some(base) = set
            .tables
            .iter()
            .find(|t| &t.collective == c && t.nodes == fewest)
        else {
            continue;
        };
        let profile = fit(base)?;
        for t in set
            .tables
            .iter()
            .filter(|t| &t.collective == c && t.nodes != fewest)
        {
            out.push(Line {
                kind: Kind::CrossScale,
                set: set.name.clone(),
                fitted: label(base),
                predicted: label(t),
                rows: predict_rows(&profile, t)?,
            });
        }
    }
    if let Some(base) = set
        .tables
        .iter()
        .find(|t| t.collective == Collective::AllReduce && t.nodes == fewest)
    {
        let profile = fit(base)?;
        for t in set
            .tables
            .iter()
            .filter(|t| t.collective != Collective::AllReduce)
        {
            out.push(Line {
                kind: Kind::CrossCollective,
                set: set.name.clone(),
                fitted: label(base),
                predicted: label(t),
                rows: predict_rows(&profile, t)?,
            });
        }
    }
    Ok(out)
}

/// Each usable table of `log` against preset `topo` with `algo=auto` (no
/// fit), rows of at least [`MIN_BYTES`].
///
/// Errors: a sentence (a table that names no collective, a plan that fails).
pub fn check_preset(topo: &str, log: &Log, source: &str) -> Result<Vec<Line>, String> {
    let mut out = Vec::new();
    for table in log.usable() {
        // A table that names no collective: the one its file name says.
        let hint = Collective::from_file_name(source);
        let Some(c) = table.collective.as_ref().or(hint.as_ref()) else {
            continue;
        };
        let Some(primitive) = c.primitive() else {
            continue;
        };
        let ranks = table.ranks.unwrap_or(8);
        let mut rows = Vec::new();
        for r in table.fittable_rows() {
            if r.bytes < MIN_BYTES || r.bytes > MAX_MESSAGE_BYTES {
                continue;
            }
            let cfg = Config {
                primitive,
                algo: AlgoChoice::Auto,
                topo: topo.into(),
                bytes: r.bytes,
                dtype: dtype_for(r.bytes),
                ranks,
                ..Config::default()
            };
            let plan = Plan::headline(&cfg).map_err(|e| format!("{source}: {e}"))?;
            let m = r.out_of_place.time_us;
            let inside = plan
                .prediction
                .as_ref()
                .map(|a| a.low_us <= m && m <= a.high_us);
            rows.push((r.bytes, m, plan.estimate.time_us, inside));
        }
        out.push(Line {
            kind: Kind::Preset,
            set: source.to_string(),
            fitted: topo.to_string(),
            predicted: format!("{} ({} rows)", c.name(), rows.len()),
            rows,
        });
    }
    Ok(out)
}

/// A set's table from a file named `n{NODES}_{collective}.txt` (the
/// collective in nccl-tests' spelling) and its text; `None` for another
/// name.
///
/// Errors: the log reader's.
pub fn set_table(file_name: &str, text: &str) -> Option<Result<SetTable, String>> {
    let stem = file_name.strip_suffix(".txt")?;
    let (n, coll) = stem.strip_prefix('n')?.split_once('_')?;
    let nodes: usize = n.parse().ok()?;
    let collective = Collective::from_tool_name(coll);
    collective.primitive()?;
    Some(
        formats::parse_log(text)
            .map(|log| SetTable {
                nodes,
                collective,
                log,
                source: file_name.to_string(),
            })
            .map_err(|e| format!("{file_name}: {e}")),
    )
}

/// One line per check and set: how many tables, the median of their
/// median errors, the worst one, and the share of all their rows inside
/// the 80 % range.
pub fn render_summary(lines: &[Line]) -> String {
    let mut s = String::from(
        "| check | set | tables | median of medians | worst median | rows in 80 % range |\n|---|---|---|---|---|---|\n",
    );
    for kind in [
        Kind::SameScale,
        Kind::CrossScale,
        Kind::CrossCollective,
        Kind::Preset,
    ] {
        let mut sets: Vec<&str> = Vec::new();
        for l in lines.iter().filter(|l| l.kind == kind) {
            if !sets.contains(&l.set.as_str()) {
                sets.push(&l.set);
            }
        }
        for set in sets {
            let of: Vec<&Line> = lines
                .iter()
                .filter(|l| l.kind == kind && l.set == set)
                .collect();
            let meds: Vec<f64> = of
                .iter()
                .map(|l| l.median())
                .filter(|m| m.is_finite())
                .collect();
            let worst = meds.iter().copied().fold(f64::NAN, f64::max);
            let mid = stats::median(meds).unwrap_or(f64::NAN);
            let ranged: Vec<bool> = of
                .iter()
                .flat_map(|l| l.rows.iter().filter_map(|r| r.3))
                .collect();
            let inside = if ranged.is_empty() {
                "—".to_string()
            } else {
                format!(
                    "{:.0} % of {}",
                    100.0 * ranged.iter().filter(|&&x| x).count() as f64 / ranged.len() as f64,
                    ranged.len()
                )
            };
            s.push_str(&format!(
                "| {} | {set} | {} | {:.1} % | {:.1} % | {inside} |\n",
                match kind {
                    Kind::SameScale => "same scale",
                    Kind::CrossScale => "cross scale",
                    Kind::CrossCollective => "cross collective",
                    Kind::Preset => "preset, no fit",
                },
                of.len(),
                mid * 100.0,
                worst * 100.0
            ));
        }
    }
    s
}

/// Every row of every line: size, measured, predicted, error, in range.
pub fn render_rows(lines: &[Line]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(&format!(
            "\n# {}: {} -> {} ({})\n",
            l.set,
            l.fitted,
            l.predicted,
            l.kind.title()
        ));
        for &(b, m, p, inside) in &l.rows {
            s.push_str(&format!(
                "{:>14} {:>12.2} {:>12.2} {:>+8.1}% {}\n",
                b,
                m,
                p,
                (p / m - 1.0) * 100.0,
                match inside {
                    Some(true) => "in",
                    Some(false) => "OUT",
                    None => "",
                }
            ));
        }
    }
    s
}

/// The tables as markdown, one per kind, with a summary line.
pub fn render(lines: &[Line]) -> String {
    let mut s = String::new();
    for kind in [
        Kind::SameScale,
        Kind::CrossScale,
        Kind::CrossCollective,
        Kind::Preset,
    ] {
        let of: Vec<&Line> = lines.iter().filter(|l| l.kind == kind).collect();
        if of.is_empty() {
            continue;
        }
        s.push_str(&format!("\n### {}\n\n", kind.title()));
        s.push_str("| set | fitted | predicted | rows ≥ 1 KiB | median error | max error | in 80 % range |\n|---|---|---|---|---|---|---|\n");
        for l in of {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {:.1} % | {:.1} % | {} |\n",
                l.set,
                l.fitted,
                l.predicted,
                l.rows.len(),
                l.median() * 100.0,
                l.max() * 100.0,
                l.coverage()
                    .map_or("—".to_string(), |c| format!("{:.0} %", c * 100.0))
            ));
        }
    }
    s
}
