//! Hold-out accuracy by the user's own path: fit a profile to the
//! even-indexed sizes of a measured table (what `cclsim fit` does on a log
//! of those rows), then predict every odd-indexed size with that profile
//! and `auto` through [`Plan::headline`] (what `cclsim predict --profile
//! P.json --algo auto` does), and compare with the measured time.

use super::{Plan, PlanError};
use crate::engine::calibrate::Profile;
use crate::engine::config::{AlgoChoice, Config, MEASURED};
use crate::engine::dtype::DType;
use crate::engine::formats::{Collective, Table};
use crate::engine::units::MAX_MESSAGE_BYTES;

/// One table's hold-out result.
#[derive(Clone, Debug, PartialEq)]
pub struct Holdout {
    /// The table.
    pub table: String,
    /// Segments of the fit.
    pub segments: usize,
    /// `(bytes, measured µs, predicted µs)` of every held-out row at or
    /// above the minimum size.
    pub rows: Vec<(u64, f64, f64)>,
    /// Held-out rows above the message limit, not predicted.
    pub beyond_limit: usize,
}

impl Holdout {
    /// `|predicted - measured| / measured` of each row.
    pub fn errors(&self) -> Vec<f64> {
        self.rows
            .iter()
            .map(|&(_, m, p)| ((p - m) / m).abs())
            .collect()
    }

    /// Median relative error (0 without rows).
    pub fn median(&self) -> f64 {
        crate::engine::stats::median(self.errors()).unwrap_or(0.0)
    }

    /// Largest relative error (0 without rows).
    pub fn max(&self) -> f64 {
        self.errors().into_iter().fold(0.0, f64::max)
    }
}

/// The dtype a measured row's size is a whole number of (the fitted curve
/// does not depend on it; the configuration needs one).
fn dtype_for(bytes: u64) -> DType {
    [DType::Fp32, DType::Fp16, DType::Int8]
        .into_iter()
        .find(|d| bytes % d.size_bytes() as u64 == 0)
        .unwrap_or(DType::Int8)
}

/// Fits `table`'s even-indexed fittable rows and predicts the odd ones of
/// at least `min_bytes` on the measured machine with `auto` (module doc);
/// `ranks` is used if the table has no rank count, `collective` if it does
/// not name its collective (as `cclsim fit --ranks N --op NAME` would).
///
/// Errors: a sentence (a rejected table, too few rows, no rank count, a
/// collective the catalogue has no primitive for, a plan that fails).
pub fn holdout(
    table: &Table,
    ranks: Option<usize>,
    collective: Option<&Collective>,
    min_bytes: u64,
) -> Result<Holdout, String> {
    let mut p = Profile::fit_table_with(table, ranks, "holdout", |i| i % 2 == 0)
        .map_err(|e| e.to_string())?;
    if p.collective.is_none() {
        // What `cclsim fit --op` tells a log that does not name it.
        p.collective = collective.cloned();
    }
    let op = p
        .collective
        .as_ref()
        .and_then(|c| c.primitive())
        .ok_or_else(|| format!("{}: no primitive of the catalogue", table.label()))?;
    let mut rows = Vec::new();
    let mut beyond_limit = 0;
    for (i, r) in table.fittable_rows().into_iter().enumerate() {
        if i % 2 == 0 || r.bytes < min_bytes {
            continue;
        }
        if r.bytes > MAX_MESSAGE_BYTES {
            beyond_limit += 1;
            continue;
        }
        let c = Config {
            primitive: op,
            algo: AlgoChoice::Auto,
            topo: MEASURED.into(),
            bytes: r.bytes,
            dtype: dtype_for(r.bytes),
            ranks: p.ranks,
            profile: Some(p.clone()),
            ..Config::default()
        };
        let plan = Plan::headline(&c).map_err(|e: PlanError| e.to_string())?;
        rows.push((r.bytes, r.out_of_place.time_us, plan.estimate.time_us));
    }
    Ok(Holdout {
        table: table.label(),
        segments: p.segments.len(),
        rows,
        beyond_limit,
    })
}
