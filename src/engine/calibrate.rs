//! Calibration: fit a [`Profile`] (the `α`-`β` figures of a real machine)
//! to measured rows of an nccl-tests / rccl-tests / hccl_test log, and turn
//! it back into cost parameters of a [`Topology`].
//!
//! ## The model fitted
//! `t(S) = α + S / B` per *segment* of message sizes (`α` µs, `B` GB/s of
//! algbw, 1e9 bytes). Real curves are not one straight line: NCCL switches
//! protocol (LL, LL128, Simple) and algorithm by size (nccl
//! `src/graph/tuning.cc`), each with its own latency and bandwidth, and
//! NVLS/tree take over at large sizes. So the fit splits the sizes into up to
//! [`MAX_SEGMENTS`] contiguous segments, each with its own `α`, `B`, and
//! keeps a split only if the data supports it (BIC, Schwarz 1978, with a
//! noise floor of [`NOISE_FLOOR`] relative error, so a clean log stays one
//! segment). Between two segments' size ranges the prediction follows the
//! chord joining the two segments' fitted end points.
//!
//! The split search is exact up to [`EXACT_SEARCH_MAX_POINTS`] distinct
//! sizes (repeated sizes are averaged first) and linear in the rows above
//! (candidate splits bounded by [`MAX_BLOCKS`]; see [`fit_segments`]), so a
//! 100 000-row log fits in well under a second.
//!
//! ## Robust least squares
//! Each segment is fitted by iteratively reweighted least squares with
//! Huber's loss (Huber 1964; Holland & Welsch 1977) on *relative* residuals
//! `r_i = (t_i - α - S_i/B) / t_i`: weights `w_i = ψ(r_i/s)/(r_i/s) / t_i²`
//! with `k = 1.345` and the scale `s = MAD / 0.6745` (floored at 0.1 %), so
//! one outlier (the 2080 Ti broadcast's in-place spike, the EFA log's 256 KB
//! jump) does not drag the line. `α ≥ 0` and `B > 0` are enforced by
//! refitting the other parameter alone.
//!
//! ## From profile to topology
//! nccl-tests' busbw is the bandwidth of the busiest link of a ring
//! (`doc/PERFORMANCE.md`), so the per-link bandwidth is `B × factor` (the
//! busbw factor of the collective) and the per-step latency is `α /
//! steps`, where `steps` is the ring's step count ([`Collective::ring_steps`];
//! AllReduce `2(n-1)`). A ring on a topology with those link figures then
//! reproduces the fitted line exactly.

use super::collective::Primitive;
use super::formats::{Collective, FormatError, Log, Row, Table, Tool};
use super::hardware::{Accelerator, Arch, Hardware};
use super::library::Library;
use super::predict::{Calibration, MeasuredTable};
use super::topology::{Device, Link, LinkKind, Switch, Topology, TopologyError};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Most segments a fit may use.
pub const MAX_SEGMENTS: usize = 5;
/// Fewest rows a segment is fitted on (2 parameters + 1 degree of freedom).
pub const MIN_SEGMENT_ROWS: usize = 3;
/// Relative error below which a fit is "as good as the measurement": the
/// run-to-run noise of nccl-tests (out-of-place vs in-place times of one
/// row differ by about 0.5 %). The model choice never rewards going below it.
pub const NOISE_FLOOR: f64 = 0.005;
/// Most distinct sizes the exact split search runs on ([`fit_segments`]).
pub const EXACT_SEARCH_MAX_POINTS: usize = 64;
/// Most blocks (runs of sizes between candidate split points) of the
/// bounded search above [`EXACT_SEARCH_MAX_POINTS`].
pub const MAX_BLOCKS: usize = 64;
/// Huber's tuning constant (95 % efficiency at the normal).
const HUBER_K: f64 = 1.345;

/// One size range fitted by one line `t = α + S / B`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Smallest measured size in the segment, bytes.
    pub first_bytes: u64,
    /// Largest measured size in the segment, bytes.
    pub last_bytes: u64,
    /// Latency term, µs (≥ 0).
    pub alpha_us: f64,
    /// Asymptotic algbw of the segment, GB/s (> 0; [`MAX_FIT_GBPS`] if the
    /// time does not grow with size).
    pub algbw_gbps: f64,
}

/// Cap on a fitted bandwidth, GB/s: a flat segment (time independent of
/// size, pure latency) gets this instead of infinity (JSON has no infinity).
pub const MAX_FIT_GBPS: f64 = 1e6;

impl Segment {
    /// `α + S / B`, µs.
    pub fn time_us(&self, bytes: u64) -> f64 {
        self.alpha_us + bytes as f64 / (self.algbw_gbps * 1e3)
    }
}

/// One row, measured and fitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitRow {
    /// Line in the log.
    pub line: usize,
    /// Message size, bytes.
    pub bytes: u64,
    /// Measured out-of-place time, µs.
    pub measured_us: f64,
    /// The profile's time, µs.
    pub fitted_us: f64,
    /// `(fitted - measured) / measured`.
    pub rel_err: f64,
    /// Was this row used by the fit (false: `count 0` rows, held-out rows).
    pub used: bool,
}

/// A machine as one collective measured it: JSON, reusable as cost
/// parameters ([`Profile::apply`], [`Profile::topology_at`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Where it comes from (file name, table line).
    pub source: String,
    /// The program that measured it.
    pub tool: Tool,
    /// The collective measured (`None` if the log does not say; then
    /// treated as AllReduce for the link conversion).
    pub collective: Option<Collective>,
    /// Ranks of the measured run.
    pub ranks: usize,
    /// Latency term of the largest-size segment, µs (whole collective).
    pub alpha_us: f64,
    /// Asymptotic algbw of the largest-size segment, GB/s.
    pub algbw_gbps: f64,
    /// `algbw × busbw factor`, GB/s: the per-link bandwidth of a ring.
    pub busbw_gbps: f64,
    /// Per-step latency `α / ring steps`, µs.
    pub link_alpha_us: f64,
    /// The segments, in size order (at least one).
    pub segments: Vec<Segment>,
    /// Every row of the table, measured vs fitted.
    pub rows: Vec<FitRow>,
    /// The fit's residuals where it was fitted: `(bytes, ln(measured /
    /// line))` at each fitted size (at most [`MAX_KNOTS`], averaged in
    /// log-size buckets above). [`Profile::predict_us`] interpolates them,
    /// so the profile reproduces what was measured where it was measured
    /// and follows the measured curve's bends between two sizes (a
    /// protocol switch, a bandwidth ramp) that the α-β lines smooth over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub knots: Vec<(u64, f64)>,
    /// The machine as link classes with the library model's corrections
    /// fitted to the same rows ([`crate::engine::predict`]): what predicts
    /// other collectives, sizes and scales. `None` where the library has no
    /// model here (hccl_test, OSU) or the collective is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical: Option<Calibration>,
    /// Median `|rel_err|` over the used rows.
    pub median_rel_err: f64,
    /// Max `|rel_err|` over the used rows.
    pub max_rel_err: f64,
}

/// Why a profile could not be fitted or used.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CalibrateError {
    /// The log could not be parsed.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The table was rejected by the parser.
    #[error("table at line {line} is rejected: {reason}")]
    Rejected { line: usize, reason: String },
    /// Too few usable rows.
    #[error("table at line {line} has {rows} usable rows (non-zero size, positive time); a fit needs at least 2")]
    TooFewRows { line: usize, rows: usize },
    /// No rank count in the log and none given.
    #[error(
        "the log does not print the rank count for the table at line {line}; pass it (--ranks N)"
    )]
    NoRanks { line: usize },
    /// A rank count below 2.
    #[error("ranks must be at least 2, got {0}")]
    BadRanks(usize),
    /// No usable table.
    #[error("no usable table in the log ({0})")]
    NoUsableTable(String),
    /// A profile whose numbers are not finite or positive.
    #[error("profile field `{field}` is {value}; must be a positive finite number")]
    BadProfile { field: &'static str, value: f64 },
    /// A library-model correction out of range.
    #[error("profile field `physical.fitted` holds {value}; a correction (or its variance) must be finite, within ±20 (±400)")]
    BadCorrection { value: f64 },
}

/// A measured point `(bytes, µs)`.
pub type Point = (u64, f64);

/// Weighted least squares of `t = a + b·S` with weights `w`; returns `(a, b)`
/// with `a ≥ 0`, `b ≥ 0` (refitting one parameter alone if the other came
/// out negative).
fn wls(p: &[Point], w: &[f64]) -> (f64, f64) {
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&(s, t), &wi) in p.iter().zip(w) {
        let x = s as f64;
        sw += wi;
        sx += wi * x;
        sy += wi * t;
        sxx += wi * x * x;
        sxy += wi * x * t;
    }
    let det = sw * sxx - sx * sx;
    let (mut a, mut b) = if det.abs() > 1e-300 * sw * sxx && det != 0.0 {
        ((sy * sxx - sx * sxy) / det, (sw * sxy - sx * sy) / det)
    } else {
        (sy / sw, 0.0)
    };
    if b < 0.0 || !b.is_finite() {
        b = 0.0;
        a = sy / sw;
    }
    if a < 0.0 || !a.is_finite() {
        a = 0.0;
        b = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    }
    (a, b)
}

/// Robust fit of one segment (Huber IRLS on relative residuals); returns
/// `(α µs, β µs/byte)`.
pub fn fit_line(points: &[Point]) -> (f64, f64) {
    let base: Vec<f64> = points
        .iter()
        .map(|&(_, t)| 1.0 / (t * t).max(1e-12))
        .collect();
    let mut w = base.clone();
    let (mut a, mut b) = wls(points, &w);
    for _ in 0..50 {
        let r: Vec<f64> = points
            .iter()
            .map(|&(s, t)| (t - a - b * s as f64) / t)
            .collect();
        let mut abs: Vec<f64> = r.iter().map(|x| x.abs()).collect();
        // The middle element (as after a full sort), in O(n).
        let mid = abs.len() / 2;
        let mad = *abs.select_nth_unstable_by(mid, f64::total_cmp).1;
        let scale = (mad / 0.6745).max(1e-3);
        for i in 0..points.len() {
            let u = (r[i] / scale).abs();
            w[i] = base[i] * if u <= HUBER_K { 1.0 } else { HUBER_K / u };
        }
        let (na, nb) = wls(points, &w);
        let done = (na - a).abs() <= 1e-12 * a.abs().max(1e-9)
            && (nb - b).abs() <= 1e-12 * b.abs().max(1e-18);
        a = na;
        b = nb;
        if done {
            break;
        }
    }
    (a, b)
}

fn segment_of(points: &[Point]) -> Segment {
    let (a, b) = fit_line(points);
    Segment {
        first_bytes: points[0].0,
        last_bytes: points[points.len() - 1].0,
        alpha_us: a,
        algbw_gbps: if b > 0.0 {
            (1.0 / (b * 1e3)).min(MAX_FIT_GBPS)
        } else {
            MAX_FIT_GBPS
        },
    }
}

fn sq_rel_err(seg: &Segment, points: &[Point]) -> f64 {
    points
        .iter()
        .map(|&(s, t)| {
            let r = (seg.time_us(s) - t) / t;
            r * r
        })
        .sum()
}

/// Fits segments to points sorted by size (distinct sizes, positive times):
/// for each segment count `K = 1..=MAX_SEGMENTS` the split with the least
/// squared relative error (dynamic programming over contiguous splits),
/// then the `K` with the lowest BIC `n·ln(max(RSS/n, NOISE_FLOOR²)) +
/// (3K - 1)·ln n` (RSS over relative residuals; 2 parameters per segment
/// + 1 per split point).
///
/// Up to [`EXACT_SEARCH_MAX_POINTS`] points (every real fixture: nccl-tests
/// sweeps by factors of 2, 20–40 sizes) the search is exact: every
/// contiguous run is fitted robustly. Above, it grows linearly with the
/// points: split points are restricted to at most [`MAX_BLOCKS`] block
/// boundaries (half-octave size buckets, large buckets cut evenly), each
/// run of blocks is scored by the closed-form weighted least squares of
/// [`fit_line`]'s first step (per-block sums, O(1) per run), and only the
/// `K` chosen splits are refitted robustly and compared by BIC.
pub fn fit_segments(points: &[Point]) -> Vec<Segment> {
    let n = points.len();
    if n < 2 * MIN_SEGMENT_ROWS {
        return vec![segment_of(points)];
    }
    if n <= EXACT_SEARCH_MAX_POINTS {
        fit_segments_exact(points)
    } else {
        fit_segments_blocked(points)
    }
}

/// The BIC choice of the segment count from each count's RSS.
fn choose_k(n: usize, kmax: usize, rss: impl Fn(usize) -> f64) -> usize {
    let nf = n as f64;
    let floor = NOISE_FLOOR * NOISE_FLOOR;
    let bic = |k: usize| nf * (rss(k) / nf).max(floor).ln() + (3 * k - 1) as f64 * nf.ln();
    (1..=kmax)
        .filter(|&k| rss(k).is_finite())
        .min_by(|&x, &y| bic(x).total_cmp(&bic(y)).then(x.cmp(&y)))
        .unwrap_or(1)
}

/// Weighted sums of one run of points with weights `1/t²` and sizes
/// scaled by `1/scale`: enough for the closed-form fit and its error.
#[derive(Clone, Copy, Default)]
struct Sums {
    points: usize,
    /// Σw, Σwx, Σwx², Σwt, Σwxt (Σwt² = points).
    w: f64,
    wx: f64,
    wxx: f64,
    wt: f64,
    wxt: f64,
}

impl Sums {
    fn of(points: &[Point], scale: f64) -> Sums {
        let mut s = Sums::default();
        for &(b, t) in points {
            let (x, w) = (b as f64 / scale, 1.0 / (t * t).max(1e-12));
            s.points += 1;
            s.w += w;
            s.wx += w * x;
            s.wxx += w * x * x;
            s.wt += w * t;
            s.wxt += w * x * t;
        }
        s
    }

    fn add(&mut self, o: &Sums) {
        self.points += o.points;
        self.w += o.w;
        self.wx += o.wx;
        self.wxx += o.wxx;
        self.wt += o.wt;
        self.wxt += o.wxt;
    }

    /// Squared relative error of the weighted least-squares line (with
    /// [`wls`]'s `a ≥ 0`, `b ≥ 0` rule).
    fn cost(&self) -> f64 {
        let det = self.w * self.wxx - self.wx * self.wx;
        let (mut a, mut b) = if det.abs() > 1e-300 * self.w * self.wxx && det != 0.0 {
            (
                (self.wt * self.wxx - self.wx * self.wxt) / det,
                (self.w * self.wxt - self.wx * self.wt) / det,
            )
        } else {
            (self.wt / self.w, 0.0)
        };
        if b < 0.0 || !b.is_finite() {
            b = 0.0;
            a = self.wt / self.w;
        }
        if a < 0.0 || !a.is_finite() {
            a = 0.0;
            b = if self.wxx > 0.0 {
                (self.wxt / self.wxx).max(0.0)
            } else {
                0.0
            };
        }
        // Σw(a + bx - t)², expanded (Σwt² = points).
        let c = a * a * self.w + 2.0 * a * b * self.wx + b * b * self.wxx
            - 2.0 * a * self.wt
            - 2.0 * b * self.wxt
            + self.points as f64;
        c.max(0.0)
    }
}

/// Block starts for the bounded search: a new block at every half-octave
/// size bucket, buckets of more than `n/16` points cut evenly, at most
/// [`MAX_BLOCKS`] blocks (evenly thinned).
fn block_starts(points: &[Point]) -> Vec<usize> {
    let n = points.len();
    let bucket = |b: u64| (2.0 * (b.max(1) as f64).log2()).floor() as i64;
    let cap = n.div_ceil(16).max(MIN_SEGMENT_ROWS);
    let mut starts = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && bucket(points[j].0) == bucket(points[i].0) {
            j += 1;
        }
        let mut k = i;
        while k < j {
            starts.push(k);
            k += cap;
        }
        i = j;
    }
    if starts.len() > MAX_BLOCKS {
        let m = starts.len();
        starts = (0..MAX_BLOCKS)
            .map(|k| starts[k * m / MAX_BLOCKS])
            .collect();
    }
    starts
}

/// The bounded search (module doc; `n >` [`EXACT_SEARCH_MAX_POINTS`]).
fn fit_segments_blocked(points: &[Point]) -> Vec<Segment> {
    let n = points.len();
    let starts = block_starts(points);
    let nb = starts.len();
    let end = |b: usize| if b + 1 < nb { starts[b + 1] } else { n };
    let scale = points[n - 1].0.max(1) as f64;
    let blocks: Vec<Sums> = (0..nb)
        .map(|b| Sums::of(&points[starts[b]..end(b)], scale))
        .collect();
    // cost[i][j]: blocks i..j (j exclusive) as one segment.
    let mut cost = vec![vec![f64::INFINITY; nb + 1]; nb + 1];
    for (i, row) in cost.iter_mut().enumerate().take(nb) {
        let mut s = Sums::default();
        for (j, block) in blocks.iter().enumerate().skip(i) {
            s.add(block);
            if s.points >= MIN_SEGMENT_ROWS {
                row[j + 1] = s.cost();
            }
        }
    }
    let kmax = MAX_SEGMENTS.min(n / MIN_SEGMENT_ROWS).min(nb);
    let mut best = vec![vec![f64::INFINITY; nb + 1]; kmax + 1];
    let mut from = vec![vec![0usize; nb + 1]; kmax + 1];
    best[0][0] = 0.0;
    for k in 1..=kmax {
        for j in k..=nb {
            for i in k - 1..j {
                let c = best[k - 1][i] + cost[i][j];
                if c < best[k][j] {
                    best[k][j] = c;
                    from[k][j] = i;
                }
            }
        }
    }
    // Each count's split, refitted robustly; BIC on the robust errors.
    let fits: Vec<Option<(Vec<Segment>, f64)>> = (0..=kmax)
        .map(|k| {
            if k == 0 || !best[k][nb].is_finite() {
                return None;
            }
            let mut segs = Vec::with_capacity(k);
            let mut rss = 0.0;
            let mut j = nb;
            for kk in (1..=k).rev() {
                let i = from[kk][j];
                let run = &points[starts[i]..if j < nb { starts[j] } else { n }];
                let seg = segment_of(run);
                rss += sq_rel_err(&seg, run);
                segs.push(seg);
                j = i;
            }
            segs.reverse();
            Some((segs, rss))
        })
        .collect();
    let rss = |k: usize| fits[k].as_ref().map_or(f64::INFINITY, |f| f.1);
    let k = choose_k(n, kmax, rss);
    fits.into_iter()
        .nth(k)
        .flatten()
        .map_or_else(|| vec![segment_of(points)], |f| f.0)
}

/// The exact search: every contiguous run of points is fitted robustly
/// (O(n²) fits, O(n²) memory; `n ≤` [`EXACT_SEARCH_MAX_POINTS`]).
fn fit_segments_exact(points: &[Point]) -> Vec<Segment> {
    let n = points.len();
    // cost[i][j]: squared relative error of one segment on points[i..j].
    let mut cost = vec![vec![f64::INFINITY; n + 1]; n + 1];
    let mut segs = vec![vec![None; n + 1]; n + 1];
    for i in 0..n {
        for j in i + MIN_SEGMENT_ROWS..=n {
            let s = segment_of(&points[i..j]);
            cost[i][j] = sq_rel_err(&s, &points[i..j]);
            segs[i][j] = Some(s);
        }
    }
    let kmax = MAX_SEGMENTS.min(n / MIN_SEGMENT_ROWS);
    // best[k][j]: min cost of k segments on points[..j]; from[k][j]: split.
    let mut best = vec![vec![f64::INFINITY; n + 1]; kmax + 1];
    let mut from = vec![vec![0usize; n + 1]; kmax + 1];
    best[0][0] = 0.0;
    for k in 1..=kmax {
        for j in k * MIN_SEGMENT_ROWS..=n {
            for i in (k - 1) * MIN_SEGMENT_ROWS..=j - MIN_SEGMENT_ROWS {
                let c = best[k - 1][i] + cost[i][j];
                if c < best[k][j] {
                    best[k][j] = c;
                    from[k][j] = i;
                }
            }
        }
    }
    let k = choose_k(n, kmax, |k| best[k][n]);
    let mut out = Vec::with_capacity(k);
    let mut j = n;
    for kk in (1..=k).rev() {
        let i = from[kk][j];
        out.push(
            segs[i][j]
                .clone()
                .unwrap_or_else(|| segment_of(&points[i..j])),
        );
        j = i;
    }
    out.reverse();
    out
}

/// Most residual knots a profile keeps (a 100 000-row log still links).
pub const MAX_KNOTS: usize = 64;

/// The residuals `ln(t / line(S))` of `points` (sorted, distinct sizes)
/// against `segments`; above [`MAX_KNOTS`] points, averaged in equal
/// log-size buckets (their geometric-mean size).
fn knots_of(segments: &[Segment], points: &[Point]) -> Vec<(u64, f64)> {
    let r: Vec<(f64, f64)> = points
        .iter()
        .filter(|&&(s, t)| s > 0 && t > 0.0)
        .map(|&(s, t)| {
            let (a, b) = params_at(segments, s);
            let line = a + s as f64 / (b * 1e3);
            ((s as f64).ln(), (t / line).ln())
        })
        .filter(|x| x.1.is_finite())
        .collect();
    if r.len() <= MAX_KNOTS {
        return r
            .into_iter()
            .map(|(x, y)| (x.exp().round() as u64, y))
            .collect();
    }
    let (lo, hi) = (r[0].0, r[r.len() - 1].0);
    let width = (hi - lo) / MAX_KNOTS as f64;
    let mut out: Vec<(u64, f64)> = Vec::new();
    let mut acc = (0.0, 0.0, 0usize, 0usize);
    for (i, &(x, y)) in r.iter().enumerate() {
        let bucket = (((x - lo) / width) as usize).min(MAX_KNOTS - 1);
        if acc.2 > 0 && bucket != acc.3 {
            out.push((
                (acc.0 / acc.2 as f64).exp().round() as u64,
                acc.1 / acc.2 as f64,
            ));
            acc = (0.0, 0.0, 0, bucket);
        }
        if acc.2 == 0 {
            acc.3 = bucket;
        }
        acc.0 += x;
        acc.1 += y;
        acc.2 += 1;
        if i + 1 == r.len() {
            out.push((
                (acc.0 / acc.2 as f64).exp().round() as u64,
                acc.1 / acc.2 as f64,
            ));
        }
    }
    out
}

/// The monotone piecewise-cubic Hermite interpolant (PCHIP: Fritsch &
/// Carlson, SIAM J. Numer. Anal. 1980; the slopes of SciPy's
/// `PchipInterpolator`) of the points `(xs[i], ys[i])` (increasing `xs`,
/// at least 2) at `x` within them.
fn pchip(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    let n = xs.len();
    let h: Vec<f64> = (0..n - 1).map(|i| xs[i + 1] - xs[i]).collect();
    let d: Vec<f64> = (0..n - 1).map(|i| (ys[i + 1] - ys[i]) / h[i]).collect();
    let slope = |i: usize| -> f64 {
        if n == 2 {
            return d[0];
        }
        if i == 0 || i == n - 1 {
            // One-sided three-point end slope, kept shape-preserving.
            let (h0, h1, d0, d1) = if i == 0 {
                (h[0], h[1], d[0], d[1])
            } else {
                (h[n - 2], h[n - 3], d[n - 2], d[n - 3])
            };
            let m = ((2.0 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
            if m.signum() != d0.signum() {
                0.0
            } else if d0.signum() != d1.signum() && m.abs() > 3.0 * d0.abs() {
                3.0 * d0
            } else {
                m
            }
        } else if d[i - 1] * d[i] <= 0.0 {
            0.0
        } else {
            let (w1, w2) = (2.0 * h[i] + h[i - 1], h[i] + 2.0 * h[i - 1]);
            (w1 + w2) / (w1 / d[i - 1] + w2 / d[i])
        }
    };
    let i = xs.partition_point(|&v| v <= x).clamp(1, n - 1) - 1;
    let t = (x - xs[i]) / h[i];
    let (m0, m1) = (slope(i), slope(i + 1));
    let (t2, t3) = (t * t, t * t * t);
    (2.0 * t3 - 3.0 * t2 + 1.0) * ys[i]
        + (t3 - 2.0 * t2 + t) * h[i] * m0
        + (-2.0 * t3 + 3.0 * t2) * ys[i + 1]
        + (t3 - t2) * h[i] * m1
}

/// The residual at `bytes`: linear in `ln(bytes)` between the knots, the
/// end knots' value outside them, 0 without knots.
fn residual_at(knots: &[(u64, f64)], bytes: u64) -> f64 {
    let (Some(first), Some(last)) = (knots.first(), knots.last()) else {
        return 0.0;
    };
    if bytes <= first.0 {
        return first.1;
    }
    if bytes >= last.0 {
        return last.1;
    }
    let k = knots.partition_point(|k| k.0 <= bytes);
    let (s0, r0) = knots[k - 1];
    let (s1, r1) = knots[k];
    if s1 <= s0 {
        return r0;
    }
    let x = ((bytes as f64).ln() - (s0 as f64).ln()) / ((s1 as f64).ln() - (s0 as f64).ln());
    r0 + x * (r1 - r0)
}

/// `(α µs, algbw GB/s)` at `bytes` for fitted segments: the segment whose
/// measured range holds `bytes`; below the first / above the last, the
/// first / last; between two segments, the chord through their fitted
/// times at the two range ends (if that chord has `α ≥ 0` and positive
/// slope; else the nearer segment in log-size).
pub fn params_at(segments: &[Segment], bytes: u64) -> (f64, f64) {
    let Some(first) = segments.first() else {
        return (0.0, MAX_FIT_GBPS);
    };
    if bytes <= first.first_bytes {
        return (first.alpha_us, first.algbw_gbps);
    }
    for (k, s) in segments.iter().enumerate() {
        if bytes <= s.last_bytes {
            if bytes >= s.first_bytes || k == 0 {
                return (s.alpha_us, s.algbw_gbps);
            }
            let p = &segments[k - 1];
            let (s1, s2) = (p.last_bytes as f64, s.first_bytes as f64);
            let (t1, t2) = (p.time_us(p.last_bytes), s.time_us(s.first_bytes));
            let slope = (t2 - t1) / (s2 - s1);
            let alpha = t1 - slope * s1;
            if slope > 0.0 && alpha >= 0.0 && slope.is_finite() {
                return (alpha, (1.0 / (slope * 1e3)).min(MAX_FIT_GBPS));
            }
            let x = (bytes as f64).ln();
            let near = if x - s1.ln() <= s2.ln() - x { p } else { s };
            return (near.alpha_us, near.algbw_gbps);
        }
    }
    let last = &segments[segments.len() - 1];
    (last.alpha_us, last.algbw_gbps)
}

fn median(v: Vec<f64>) -> f64 {
    super::stats::median(v).unwrap_or(0.0)
}

/// Usable points of rows: non-empty, positive finite time; sorted by size,
/// repeated sizes averaged.
fn points_of(rows: &[&Row]) -> Vec<Point> {
    let mut p: Vec<Point> = rows
        .iter()
        .filter(|r| {
            !r.is_empty() && r.out_of_place.time_us > 0.0 && r.out_of_place.time_us.is_finite()
        })
        .map(|r| (r.bytes, r.out_of_place.time_us))
        .collect();
    p.sort_by_key(|x| x.0);
    let mut out: Vec<(u64, f64, usize)> = Vec::new();
    for (s, t) in p {
        match out.last_mut() {
            Some(last) if last.0 == s => {
                last.1 += t;
                last.2 += 1;
            }
            _ => out.push((s, t, 1)),
        }
    }
    out.into_iter().map(|(s, t, k)| (s, t / k as f64)).collect()
}

/// Most accelerators per node assumed when a log does not list hosts (an
/// HGX/DGX node).
pub const DEFAULT_GPUS_PER_NODE: usize = 8;

/// The network port speed a generation's nodes usually carry, GB/s: 100,
/// 200, 400 and 800 Gb/s (EDR, HDR, NDR, XDR InfiniBand generations).
fn default_nic_gbps(arch: Arch) -> f64 {
    match arch {
        Arch::Volta => 12.5,
        Arch::Ampere => 25.0,
        Arch::Hopper => 50.0,
        Arch::Blackwell => 100.0,
    }
}

/// The machine `table` measured on `ranks` ranks, as link classes: nodes
/// from the hosts the log lists (else one node up to
/// [`DEFAULT_GPUS_PER_NODE`] ranks, that many per node above), the
/// accelerator from its device lines, and, on several nodes, as many
/// network ports per node as the largest measured busbw needs at 80 % of
/// the generation's port speed (at most one per GPU); on one node, one
/// port per GPU.
pub fn hardware_of_table(
    table: &Table,
    ranks: usize,
    coll: &Collective,
    points: &[Point],
) -> Hardware {
    let nodes = table
        .nodes
        .filter(|&k| k >= 1 && k <= ranks)
        .unwrap_or_else(|| ranks.div_ceil(DEFAULT_GPUS_PER_NODE).max(1));
    let ppn = (ranks / nodes).max(1);
    let name = table
        .accelerator
        .clone()
        .unwrap_or_else(|| "an unnamed accelerator".to_string());
    let arch = Accelerator::of_name(&name).map_or(Arch::Ampere, |a| a.arch);
    let nic = default_nic_gbps(arch);
    let nics = if nodes > 1 {
        let busbw = points
            .iter()
            .map(|&(b, t)| b as f64 / (t * 1e3) * coll.busbw_factor(ranks))
            .fold(0.0, f64::max);
        ((busbw / (0.8 * nic)).round() as usize).clamp(1, ppn)
    } else {
        ppn
    };
    let mut hw = Hardware::of_accelerator(&name, ppn, nics, nic);
    hw.sources.push(format!(
        "{nodes} node{} of {ppn} (from {}); {nics} network port{} of {nic} GB/s per node ({})",
        if nodes == 1 { "" } else { "s" },
        if table.nodes.is_some() {
            "the hosts the log lists"
        } else {
            "the rank count: the log lists no hosts"
        },
        if nics == 1 { "" } else { "s" },
        if nodes > 1 {
            "enough for the largest measured busbw at 80 % of the port"
        } else {
            "one per GPU, assumed: one node measured"
        }
    ));
    hw
}

/// The library model fitted to `points` of `table` (NCCL's, for
/// nccl-tests and rccl-tests logs of a known collective).
fn physical_fit(
    table: &Table,
    collective: Option<&Collective>,
    ranks: usize,
    points: &[Point],
    source: &str,
) -> Option<Calibration> {
    let coll = collective?;
    let primitive = coll.primitive()?;
    if table.tool != Tool::NcclTests {
        return None;
    }
    let hw = hardware_of_table(table, ranks, coll, points);
    let nodes = hw.nodes_for(ranks);
    Some(Calibration::fit(
        hw,
        &[MeasuredTable {
            source: format!("{source} (table at line {})", table.line),
            primitive,
            ranks,
            nodes,
            rows: points.to_vec(),
        }],
    ))
}

impl Profile {
    /// Fits a profile to `table`, using only the rows for which `use_row`
    /// (given the row's index among the table's fittable rows) is true;
    /// every row is reported. `ranks` is used if the table has no rank count.
    ///
    /// Errors: [`CalibrateError::Rejected`], [`CalibrateError::NoRanks`],
    /// [`CalibrateError::BadRanks`], [`CalibrateError::TooFewRows`].
    pub fn fit_table_with(
        table: &Table,
        ranks: Option<usize>,
        source: &str,
        use_row: impl Fn(usize) -> bool,
    ) -> Result<Profile, CalibrateError> {
        if let Some(reason) = &table.rejected {
            return Err(CalibrateError::Rejected {
                line: table.line,
                reason: reason.clone(),
            });
        }
        let n = table
            .ranks
            .or(ranks)
            .ok_or(CalibrateError::NoRanks { line: table.line })?;
        if n < 2 {
            return Err(CalibrateError::BadRanks(n));
        }
        let fittable = table.fittable_rows();
        let chosen: Vec<&Row> = fittable
            .iter()
            .enumerate()
            .filter(|(i, _)| use_row(*i))
            .map(|(_, r)| *r)
            .collect();
        let points = points_of(&chosen);
        if points.len() < 2 {
            return Err(CalibrateError::TooFewRows {
                line: table.line,
                rows: points.len(),
            });
        }
        let segments = fit_segments(&points);
        let knots = knots_of(&segments, &points);
        let collective = table.collective.clone();
        let coll = collective.clone().unwrap_or(Collective::AllReduce);
        let last = segments[segments.len() - 1].clone();
        // By identity: JSON rows may share a line.
        let used: std::collections::HashSet<*const Row> =
            chosen.iter().map(|r| *r as *const Row).collect();
        let rows: Vec<FitRow> = table
            .rows
            .iter()
            .map(|r| {
                let (a, b) = params_at(&segments, r.bytes);
                let fitted = a + r.bytes as f64 / (b * 1e3);
                let measured = r.out_of_place.time_us;
                FitRow {
                    line: r.line,
                    bytes: r.bytes,
                    measured_us: measured,
                    fitted_us: fitted,
                    rel_err: if measured > 0.0 {
                        (fitted - measured) / measured
                    } else {
                        0.0
                    },
                    used: !r.is_empty() && used.contains(&(r as *const Row)),
                }
            })
            .collect();
        let errs: Vec<f64> = rows
            .iter()
            .filter(|r| r.used)
            .map(|r| r.rel_err.abs())
            .collect();
        let physical = physical_fit(table, collective.as_ref(), n, &points, source);
        Ok(Profile {
            physical,
            source: format!("{source} (table at line {})", table.line),
            tool: table.tool,
            collective,
            ranks: n,
            alpha_us: last.alpha_us,
            algbw_gbps: last.algbw_gbps,
            busbw_gbps: last.algbw_gbps * coll.busbw_factor(n),
            link_alpha_us: last.alpha_us / coll.ring_steps(n) as f64,
            max_rel_err: errs.iter().copied().fold(0.0, f64::max),
            median_rel_err: median(errs),
            segments,
            rows,
            knots,
        })
    }

    /// [`Profile::fit_table_with`] on every fittable row.
    ///
    /// Errors: as [`Profile::fit_table_with`].
    pub fn fit_table(
        table: &Table,
        ranks: Option<usize>,
        source: &str,
    ) -> Result<Profile, CalibrateError> {
        Profile::fit_table_with(table, ranks, source, |_| true)
    }

    /// Fits the first usable table of `log` whose collective is `collective`
    /// (any, if `None`).
    ///
    /// Errors: [`CalibrateError::NoUsableTable`] (listing the rejected
    /// tables' reasons), or those of [`Profile::fit_table`].
    pub fn fit_log(
        log: &Log,
        collective: Option<&Collective>,
        ranks: Option<usize>,
        source: &str,
    ) -> Result<Profile, CalibrateError> {
        // A table that does not name its collective takes the caller's
        // (`cclsim fit --op`: the user knows what they ran).
        let table = log
            .usable()
            .into_iter()
            .find(|t| collective.is_none() || t.collective.as_ref() == collective)
            .or_else(|| {
                collective.and_then(|_| log.usable().into_iter().find(|t| t.collective.is_none()))
            })
            .ok_or_else(|| {
                let why: Vec<String> = log
                    .tables
                    .iter()
                    .map(|t| match &t.rejected {
                        Some(r) => format!("{}: {r}", t.label()),
                        None => t.label(),
                    })
                    .collect();
                CalibrateError::NoUsableTable(why.join("; "))
            })?;
        let mut p = Profile::fit_table(table, ranks, source)?;
        if p.collective.is_none() && collective.is_some() {
            p.collective = collective.cloned();
            let points: Vec<Point> = p
                .rows
                .iter()
                .filter(|r| r.used)
                .map(|r| (r.bytes, r.measured_us))
                .collect();
            p.physical = physical_fit(table, collective, p.ranks, &points, source);
        }
        Ok(p)
    }

    /// [`Profile::fit_log`] on the first of `logs`, whose library model
    /// is then fitted to every usable table of every log (several
    /// collectives, several scales): each table's collective is the one its
    /// log names, else the one its source's file name says
    /// ([`Collective::from_file_name`]), else `collective`; tables with none
    /// of these, or of another tool than nccl-tests / rccl-tests, are left
    /// out of the library model. The machine's link classes come from the
    /// multi-node table with the fewest nodes that is not an AlltoAll (its
    /// busbw says how many NICs a node has before a large network's taper
    /// or an AlltoAll's per-peer costs hide it), else from the first table.
    ///
    /// Errors: those of [`Profile::fit_log`] on the first log;
    /// [`CalibrateError::NoUsableTable`] without logs.
    pub fn fit_logs(
        logs: &[(Log, String)],
        collective: Option<&Collective>,
        ranks: Option<usize>,
    ) -> Result<Profile, CalibrateError> {
        let (first, name) = logs
            .first()
            .ok_or_else(|| CalibrateError::NoUsableTable("no log given".into()))?;
        // The file name speaks only for a log whose tables name nothing.
        let unnamed = first.usable().iter().all(|t| t.collective.is_none());
        let hint = Collective::from_file_name(name).filter(|_| unnamed);
        let mut p = Profile::fit_log(first, collective.or(hint.as_ref()), ranks, name)?;
        if logs.len() == 1 {
            return Ok(p);
        }
        let mut tables = Vec::new();
        // (rank of preference, hardware): lower is better.
        let mut best: Option<((usize, usize), Hardware)> = None;
        for (log, source) in logs {
            let hint = Collective::from_file_name(source);
            for t in log.usable() {
                let Some(coll) = t.collective.as_ref().or(hint.as_ref()).or(collective) else {
                    continue;
                };
                let (Some(primitive), Some(n)) = (coll.primitive(), t.ranks.or(ranks)) else {
                    continue;
                };
                if t.tool != Tool::NcclTests || n < 2 {
                    continue;
                }
                let rows: Vec<&Row> = t.fittable_rows();
                let points = points_of(&rows);
                let hw = hardware_of_table(t, n, coll, &points);
                let nodes = hw.nodes_for(n);
                let rank = match (nodes > 1, primitive == Primitive::AlltoAll) {
                    (true, false) => (0, nodes),
                    (true, true) => (1, nodes),
                    (false, _) => (2, 0),
                };
                if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                    best = Some((rank, hw));
                }
                tables.push(MeasuredTable {
                    source: format!("{source} (table at line {})", t.line),
                    primitive,
                    ranks: n,
                    nodes,
                    rows: points,
                });
            }
        }
        if let Some((_, hw)) = best {
            p.physical = Some(Calibration::fit(hw, &tables));
        }
        Ok(p)
    }

    /// `(α µs, algbw GB/s)` of the whole collective at `bytes` ([`params_at`]).
    pub fn params_at(&self, bytes: u64) -> (f64, f64) {
        params_at(&self.segments, bytes)
    }

    /// The fitted time of the measured collective at `bytes`, µs. Between
    /// the fitted sizes: the monotone cubic (PCHIP, Fritsch & Carlson
    /// 1980) through the measured times at the knots, in `ln(time)` over
    /// `ln(bytes)`, so the profile reproduces what was measured where it was
    /// measured and follows the curve's bends between two sizes (a protocol
    /// switch, a bandwidth ramp) that the α-β lines smooth over. Outside
    /// them (and without knots): the α-β line of the nearest segment
    /// ([`Profile::params_at`]) times the end knot's residual.
    pub fn predict_us(&self, bytes: u64) -> f64 {
        let (a, b) = self.params_at(bytes);
        let line = |s: u64| {
            let (a, b) = self.params_at(s);
            a + s as f64 / (b * 1e3)
        };
        let k = &self.knots;
        match (k.first(), k.last()) {
            (Some(f), Some(l)) if k.len() >= 2 && bytes > f.0 && bytes < l.0 => {
                let xs: Vec<f64> = k.iter().map(|&(s, _)| (s as f64).ln()).collect();
                let ys: Vec<f64> = k.iter().map(|&(s, r)| line(s).ln() + r).collect();
                pchip(&xs, &ys, (bytes as f64).ln()).exp()
            }
            _ => (a + bytes as f64 / (b * 1e3)) * residual_at(k, bytes).exp(),
        }
    }

    fn collective_or_default(&self) -> Collective {
        self.collective.clone().unwrap_or(Collective::AllReduce)
    }

    /// Per-link `(latency µs, bandwidth GB/s)` at `bytes`: `α / ring steps`
    /// and `algbw × busbw factor` (module doc).
    pub fn link_params_at(&self, bytes: u64) -> (f64, f64) {
        let c = self.collective_or_default();
        let (a, b) = self.params_at(bytes);
        (
            a / c.ring_steps(self.ranks) as f64,
            b * c.busbw_factor(self.ranks),
        )
    }

    /// Checks the numbers a topology would be built from.
    ///
    /// Errors: [`CalibrateError::BadProfile`], [`CalibrateError::BadRanks`].
    pub fn validate(&self) -> Result<(), CalibrateError> {
        if self.ranks < 2 {
            return Err(CalibrateError::BadRanks(self.ranks));
        }
        if let Some(c) = &self.physical {
            let hw = &c.hardware;
            for (field, value) in [
                ("physical.hardware.gpu_gbps", hw.gpu_gbps),
                ("physical.hardware.pair_gbps", hw.pair_gbps),
                ("physical.hardware.nic_gbps", hw.nic_gbps),
                ("physical.hardware.gpus_per_node", hw.gpus_per_node as f64),
                ("physical.hardware.nics_per_node", hw.nics_per_node as f64),
                ("physical.fitted.sigma", c.fitted.sigma.max(1e-9)),
            ] {
                if !(value.is_finite() && value > 0.0) {
                    return Err(CalibrateError::BadProfile { field, value });
                }
            }
            // A correction is a natural log: beyond ±20 it is no machine.
            if let Some(&v) = c
                .fitted
                .params
                .iter()
                .chain(&c.fitted.covariance)
                .find(|v| !v.is_finite() || v.abs() > 20.0 * 20.0)
            {
                return Err(CalibrateError::BadCorrection { value: v });
            }
            if let Some(&v) = c.fitted.params.iter().find(|v| v.abs() > 20.0) {
                return Err(CalibrateError::BadCorrection { value: v });
            }
        }
        if self.segments.is_empty() {
            return Err(CalibrateError::BadProfile {
                field: "segments",
                value: 0.0,
            });
        }
        for s in &self.segments {
            if !(s.alpha_us.is_finite() && s.alpha_us >= 0.0) {
                return Err(CalibrateError::BadProfile {
                    field: "alpha_us",
                    value: s.alpha_us,
                });
            }
            if !(s.algbw_gbps.is_finite() && s.algbw_gbps > 0.0) {
                return Err(CalibrateError::BadProfile {
                    field: "algbw_gbps",
                    value: s.algbw_gbps,
                });
            }
        }
        Ok(())
    }

    /// `topo` with every link's figures replaced by the profile's at
    /// `bytes`: bandwidth = [`Profile::link_params_at`]'s, latency = its
    /// per-step latency divided by the hop count of the route rank 0 ->
    /// rank 1 (so a ring neighbour pays one step latency). No buffer loops
    /// (the measured times include the library's own), reductions inline.
    ///
    /// Errors: [`TopologyError::NoLink`] if devices 0 and 1 have no route.
    pub fn apply_at(&self, topo: &Topology, bytes: u64) -> Result<Topology, TopologyError> {
        let (lat, bw) = self.link_params_at(bytes);
        let hops = if topo.devices.len() >= 2 {
            topo.route(0, 1)?.hops.len().max(1)
        } else {
            1
        };
        let mut t = topo.clone();
        for l in &mut t.links {
            l.bandwidth_gbps = bw;
            l.latency_us = lat / hops as f64;
        }
        t.reduce_gbps = None;
        t.ccl_buffer_bytes = None;
        t.name = format!("{}+profile", topo.name);
        t.sources.push(self.describe());
        Ok(t)
    }

    /// [`Profile::apply_at`] with the largest-size segment.
    ///
    /// Errors: as [`Profile::apply_at`].
    pub fn apply(&self, topo: &Topology) -> Result<Topology, TopologyError> {
        self.apply_at(topo, self.segments.last().map_or(0, |s| s.last_bytes))
    }

    /// The machine the profile was measured on, as a topology: `ranks`
    /// devices, each with one link to a non-blocking switch (a star, like
    /// NVSwitch or a RoCE fabric; no contention between distinct pairs),
    /// with the link figures at `bytes`.
    pub fn topology_at(&self, bytes: u64) -> Topology {
        let (lat, bw) = self.link_params_at(bytes);
        let n = self.ranks.max(2);
        Topology {
            name: "profile".into(),
            title: format!("fitted: {}", self.source),
            devices: (0..n)
                .map(|i| Device {
                    label: format!("R{i}"),
                    server: 0,
                })
                .collect(),
            links: (0..n)
                .map(|d| Link {
                    a: d,
                    b: n,
                    kind: LinkKind::Nvlink,
                    bandwidth_gbps: bw,
                    latency_us: lat / 2.0,
                })
                .collect(),
            reduce_gbps: None,
            sources: vec![self.describe()],
            switches: vec![Switch {
                label: "switch".into(),
                server: 0,
            }],
            ccl_buffer_bytes: None,
            library: self.library(),
            algorithms: Vec::new(),
            impairment: Default::default(),
            hardware: None,
        }
    }

    /// The library the profile measured ([`Library::of_tool`]).
    pub fn library(&self) -> Library {
        Library::of_tool(self.tool)
    }

    /// One line: what was fitted, and how well.
    pub fn describe(&self) -> String {
        format!(
            "fitted profile of {} ({}, {} ranks): α {:.2} µs, algbw {:.2} GB/s, busbw {:.2} GB/s (per link), {} segment(s), median |error| {:.1} %, max {:.1} %",
            self.source,
            self.collective.as_ref().map_or("unknown collective", |c| c.name()),
            self.ranks,
            self.alpha_us,
            self.algbw_gbps,
            self.busbw_gbps,
            self.segments.len(),
            self.median_rel_err * 100.0,
            self.max_rel_err * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_line_is_recovered_exactly_in_one_segment() {
        let pts: Vec<Point> = (10..30)
            .map(|k| (1u64 << k, 12.0 + (1u64 << k) as f64 / 50e3))
            .collect();
        let segs = fit_segments(&pts);
        assert_eq!(segs.len(), 1);
        assert!((segs[0].alpha_us - 12.0).abs() < 1e-6, "{segs:?}");
        assert!((segs[0].algbw_gbps - 50.0).abs() < 1e-6);
    }

    #[test]
    fn an_outlier_does_not_drag_the_robust_line() {
        let mut pts: Vec<Point> = (10..30)
            .map(|k| (1u64 << k, 12.0 + (1u64 << k) as f64 / 50e3))
            .collect();
        pts[12].1 *= 3.0;
        let (a, b) = fit_line(&pts);
        assert!((a - 12.0).abs() < 0.05, "{a}");
        assert!((1.0 / (b * 1e3) - 50.0).abs() < 0.5);
    }

    #[test]
    fn many_sizes_take_the_bounded_search_and_find_the_regimes() {
        // 4000 distinct sizes (nccl-tests -i stepping), two regimes with a
        // 1 % wobble: the bounded search finds the break and both lines.
        let pts: Vec<Point> = (1..=4000u64)
            .map(|k| {
                let s = k * (64 << 10);
                let wobble = 1.0 + 0.01 * (((k * 7919) % 13) as f64 / 6.0 - 1.0);
                let t = if s < 64 << 20 {
                    20.0 + s as f64 / 50e3
                } else {
                    60.0 + s as f64 / 150e3
                };
                (s, t * wobble)
            })
            .collect();
        let segs = fit_segments(&pts);
        assert_eq!(segs.len(), 2, "{segs:?}");
        assert!((segs[1].algbw_gbps - 150.0).abs() < 1.5, "{segs:?}");
        assert!((segs[0].algbw_gbps - 50.0).abs() < 0.5, "{segs:?}");
        assert!(segs[0].last_bytes < 64 << 20 && segs[1].first_bytes >= 60 << 20);
        assert!(block_starts(&pts).len() <= MAX_BLOCKS);
    }

    #[test]
    fn two_regimes_become_two_segments() {
        let pts: Vec<Point> = (10..30)
            .map(|k| {
                let s = (1u64 << k) as f64;
                (
                    1u64 << k,
                    if k < 20 {
                        5.0 + s / 10e3
                    } else {
                        80.0 + s / 100e3
                    },
                )
            })
            .collect();
        let segs = fit_segments(&pts);
        assert_eq!(segs.len(), 2, "{segs:?}");
        assert!((segs[1].algbw_gbps - 100.0).abs() < 1e-3);
        assert!((segs[0].alpha_us - 5.0).abs() < 1e-3);
    }
}
