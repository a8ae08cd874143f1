//! Fitting the corrections of [`super::model`] to measured rows.
//!
//! Every row is a (collective, ranks, nodes, bytes, time) measurement.
//! What ran at each row is NCCL's choice ([`model::what_runs`]), fixed
//! before the fit: the corrections change how long things take, never
//! what NCCL's own constants pick. The fit minimises, over the
//! corrections `θ`, Huber's loss (`δ` = [`HUBER_DELTA`]) of the log
//! residuals `ln(model / measured)` plus that of the prior residuals
//! `PRIOR_WEIGHT · (θ − μ) / σ` ([`Param::prior`]), by iteratively
//! reweighted Levenberg–Marquardt with a forward-difference Jacobian.
//! A row the model cannot explain (a protocol switch the real library
//! made elsewhere, a congested run) costs linearly, so it does not drag
//! the corrections.
//!
//! The uncertainty is the linearised posterior: `Σ = (Jᵀ J / s² +
//! diag(1 / σ²))⁻¹` with `s` the scale of the log residuals: 1.4826 × their
//! median absolute deviation, or their 80 % quantile / 1.2816 where that is
//! wider (heavy tails), at least [`MIN_SIGMA`]. A correction the rows do not constrain keeps its
//! prior's spread, so a prediction that leans on it gets a wide range.

use super::model::{self, Param, Params, Run, Shape, N_PARAMS};
use crate::engine::collective::Primitive;
use crate::engine::hardware::Hardware;
use crate::engine::library::nccl::{Func, Tuning};
use serde::{Deserialize, Serialize};

/// [`Param::NetPeer`] of a profile fitted without it: `e^-30`, nothing.
const LEGACY_NO_NET_PEER: f64 = -30.0;

/// Per-peer size below which a grouped send's row is down-weighted
/// ([`row_weight`]).
pub const TINY_PEER_BYTES: u64 = 256;
/// Weight of such a row.
pub const TINY_PEER_WEIGHT: f64 = 0.25;
/// Huber's threshold on a log residual (5 %).
pub const HUBER_DELTA: f64 = 0.05;
/// Weight of the prior residuals in the fit (the posterior's spread uses
/// the priors' own σ).
pub const PRIOR_WEIGHT: f64 = 0.3;
/// Floor of the residual scale, ln units (2 %: nccl-tests' run-to-run
/// noise is about 0.5 %, the model's structure does not get below a few %).
pub const MIN_SIGMA: f64 = 0.02;
/// Iterations of the reweighted Levenberg–Marquardt loop.
const ITERATIONS: usize = 60;

/// One measured row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The call.
    pub shape: Shape,
    /// nccl-tests' size, bytes.
    pub bytes: u64,
    /// Measured time, µs.
    pub time_us: f64,
}

/// A row with what may have run (fixed during the fit): NCCL's pick and
/// the entries near it ([`model::alternatives`]); the row is explained by
/// whichever of them comes closest.
struct Prepared {
    obs: Observation,
    runs: Vec<Run>,
    tuning: Option<Tuning>,
}

/// The factor within which, by NCCL's own model, a row may have run
/// another (algorithm, protocol) than NCCL 2.30.7's pick.
pub const FIT_SPREAD: f64 = 1.0;

/// The fitted corrections with their uncertainty.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fitted {
    /// The corrections, in [`Param::ALL`] order.
    pub params: Vec<f64>,
    /// Their posterior covariance (row-major, `N_PARAMS²`).
    pub covariance: Vec<f64>,
    /// Robust scale of the log residuals at the fitted rows.
    pub sigma: f64,
    /// Median `|model / measured − 1|` over the fitted rows.
    pub median_abs_err: f64,
    /// Rows fitted.
    pub rows: usize,
}

impl Fitted {
    /// The corrections as an array (prior means where the vector is
    /// short). A profile fitted before [`Param::NetPeer`] existed put every
    /// peer's whole cost in [`Param::PeerLat`]: it keeps that meaning (no
    /// extra cost for a network peer), instead of paying it twice.
    pub fn params(&self) -> Params {
        let mut p = model::prior_means();
        if self.params.len() <= Param::NetPeer as usize {
            p[Param::NetPeer as usize] = LEGACY_NO_NET_PEER;
        }
        for (i, v) in self.params.iter().enumerate().take(N_PARAMS) {
            p[i] = *v;
        }
        p
    }

    /// Covariance entry `(i, j)` (the prior's variance on the diagonal
    /// where the matrix is missing). A matrix of fewer parameters (a
    /// profile of an earlier model: the parameters are appended, never
    /// reordered) is read with its own row length.
    pub fn cov(&self, i: usize, j: usize) -> f64 {
        let n = (self.covariance.len() as f64).sqrt().round() as usize;
        let stored = n * n == self.covariance.len() && i < n && j < n;
        match stored.then(|| self.covariance.get(i * n + j)).flatten() {
            Some(v) => *v,
            None if i == j => Param::ALL[i].prior().1.powi(2),
            None => 0.0,
        }
    }

    /// No rows: the priors, with an assumed residual scale of 10 %.
    pub fn prior() -> Fitted {
        let mut cov = vec![0.0; N_PARAMS * N_PARAMS];
        for (i, p) in Param::ALL.iter().enumerate() {
            cov[i * N_PARAMS + i] = p.prior().1.powi(2);
        }
        Fitted {
            params: model::prior_means().to_vec(),
            covariance: cov,
            sigma: 0.1,
            median_abs_err: f64::NAN,
            rows: 0,
        }
    }
}

fn prepare(hw: &Hardware, rows: &[Observation]) -> Vec<Prepared> {
    rows.iter()
        .filter(|o| o.bytes > 0 && o.time_us > 0.0 && o.time_us.is_finite())
        .map(|o| {
            let (runs, tuning) = model::alternatives(hw, &o.shape, o.bytes, FIT_SPREAD);
            Prepared {
                obs: o.clone(),
                runs,
                tuning,
            }
        })
        .collect()
}

fn log_residuals(hw: &Hardware, rows: &[Prepared], p: &Params, measured_nodes: usize) -> Vec<f64> {
    rows.iter()
        .map(|r| {
            r.runs
                .iter()
                .map(|run| {
                    let t = model::time_us(
                        hw,
                        &r.obs.shape,
                        run,
                        r.tuning.as_ref(),
                        r.obs.bytes,
                        p,
                        measured_nodes,
                    );
                    (t / r.obs.time_us).ln()
                })
                .min_by(|a, b| a.abs().total_cmp(&b.abs()))
                .unwrap_or(0.0)
        })
        .collect()
}

/// The Jacobian of `f` (forward differences), rows × `N_PARAMS`.
fn jacobian(f: &dyn Fn(&Params) -> Vec<f64>, p: &Params, base: &[f64]) -> Vec<Vec<f64>> {
    let h = 1e-5;
    let mut cols = Vec::with_capacity(N_PARAMS);
    for j in 0..N_PARAMS {
        let mut q = *p;
        q[j] += h;
        let r = f(&q);
        cols.push(
            r.iter()
                .zip(base)
                .map(|(a, b)| (a - b) / h)
                .collect::<Vec<f64>>(),
        );
    }
    (0..base.len())
        .map(|i| (0..N_PARAMS).map(|j| cols[j][i]).collect())
        .collect()
}

/// Solves `a x = b` (symmetric positive definite, `N_PARAMS` square) by
/// Gaussian elimination with partial pivoting; `None` if singular.
fn solve(mut a: [[f64; N_PARAMS]; N_PARAMS], mut b: [f64; N_PARAMS]) -> Option<[f64; N_PARAMS]> {
    for c in 0..N_PARAMS {
        let piv = (c..N_PARAMS).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[piv][c].abs() < 1e-300 {
            return None;
        }
        a.swap(c, piv);
        b.swap(c, piv);
        for r in c + 1..N_PARAMS {
            let f = a[r][c] / a[c][c];
            for k in c..N_PARAMS {
                a[r][k] -= f * a[c][k];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0; N_PARAMS];
    for c in (0..N_PARAMS).rev() {
        let s: f64 = (c + 1..N_PARAMS).map(|k| a[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    Some(x)
}

/// The inverse of a symmetric positive definite matrix, column by column.
fn invert(a: [[f64; N_PARAMS]; N_PARAMS]) -> Option<[[f64; N_PARAMS]; N_PARAMS]> {
    let mut out = [[0.0; N_PARAMS]; N_PARAMS];
    for j in 0..N_PARAMS {
        let mut e = [0.0; N_PARAMS];
        e[j] = 1.0;
        let col = solve(a, e)?;
        for i in 0..N_PARAMS {
            out[i][j] = col[i];
        }
    }
    Some(out)
}

fn huber_weight(r: f64) -> f64 {
    if r.abs() <= HUBER_DELTA {
        1.0
    } else {
        HUBER_DELTA / r.abs()
    }
}

fn huber(r: f64) -> f64 {
    let a = r.abs();
    if a <= HUBER_DELTA {
        0.5 * r * r
    } else {
        HUBER_DELTA * (a - 0.5 * HUBER_DELTA)
    }
}

fn median(v: Vec<f64>) -> f64 {
    crate::engine::stats::median(v).unwrap_or(f64::NAN)
}

/// Prior residuals of `p`.
fn prior_residuals(p: &Params) -> [f64; N_PARAMS] {
    let mut r = [0.0; N_PARAMS];
    for (i, q) in Param::ALL.iter().enumerate() {
        let (mu, sd) = q.prior();
        r[i] = PRIOR_WEIGHT * (p[i] - mu) / sd;
    }
    r
}

/// Weight of a row in the fit: [`TINY_PEER_WEIGHT`] for grouped sends of
/// less than [`TINY_PEER_BYTES`] per peer, else 1. Such rows time a
/// transport's tiniest-message path rather than the per-peer cost of the
/// AlltoAll a training step issues (KiBs per peer and up): on the public
/// Polaris Slingshot-11 sets (argonne-lcf/alcf-nccl-tests, NCCL 2.18)
/// 128 B per peer takes 1.75–2.3× as long as 256 B at 2, 8 and 540 nodes,
/// while the TCP-socket and Sophia InfiniBand sets show no such step; at
/// full weight the six sub-KiB rows of a 2-node log carry that exception
/// to every size and scale.
fn row_weight(o: &Observation) -> f64 {
    let p2p = Func::of(o.shape.primitive).is_none();
    let per_peer = o.bytes / o.shape.ranks.max(1) as u64;
    if p2p && o.shape.primitive != Primitive::SendRecv && per_peer < TINY_PEER_BYTES {
        TINY_PEER_WEIGHT
    } else {
        1.0
    }
}

fn objective(data: &[f64], weights: &[f64], p: &Params) -> f64 {
    data.iter()
        .zip(weights)
        .map(|(&r, &w)| w * huber(r))
        .sum::<f64>()
        + prior_residuals(p).iter().map(|&r| huber(r)).sum::<f64>()
}

/// Fits the corrections to `rows` on `hw` (module doc); `measured_nodes`
/// is the largest node count among them (the taper's origin). Rows with no
/// bytes or no positive time are left out; none left: the priors.
pub fn fit(hw: &Hardware, rows: &[Observation], measured_nodes: usize) -> Fitted {
    fit_scored(hw, rows, measured_nodes).0
}

/// [`fit`], with the robust objective it reached (data and priors): the
/// lower, the better `hw` explains the rows, so two guesses at a hidden
/// fact of the machine can be told apart by the rows themselves.
pub fn fit_scored(hw: &Hardware, rows: &[Observation], measured_nodes: usize) -> (Fitted, f64) {
    let prepared = prepare(hw, rows);
    if prepared.is_empty() {
        return (Fitted::prior(), 0.0);
    }
    let f = |p: &Params| log_residuals(hw, &prepared, p, measured_nodes);
    let weights: Vec<f64> = prepared.iter().map(|r| row_weight(&r.obs)).collect();
    let mut p = model::prior_means();
    let mut r = f(&p);
    let mut cost = objective(&r, &weights, &p);
    let mut lambda = 1e-2;
    for _ in 0..ITERATIONS {
        let j = jacobian(&f, &p, &r);
        let pr = prior_residuals(&p);
        let mut a = [[0.0; N_PARAMS]; N_PARAMS];
        let mut g = [0.0; N_PARAMS];
        for ((row, &ri), &wr) in j.iter().zip(&r).zip(&weights) {
            let w = wr * huber_weight(ri);
            for i in 0..N_PARAMS {
                g[i] += w * row[i] * ri;
                for k in 0..N_PARAMS {
                    a[i][k] += w * row[i] * row[k];
                }
            }
        }
        for (i, q) in Param::ALL.iter().enumerate() {
            let d = PRIOR_WEIGHT / q.prior().1;
            let w = huber_weight(pr[i]);
            a[i][i] += w * d * d;
            g[i] += w * d * pr[i];
        }
        let mut improved = false;
        for _ in 0..8 {
            let mut m = a;
            for (i, row) in m.iter_mut().enumerate() {
                row[i] += lambda * (a[i][i] + 1e-9);
            }
            let Some(step) = solve(m, g.map(|x| -x)) else {
                lambda *= 10.0;
                continue;
            };
            let mut q = p;
            for i in 0..N_PARAMS {
                q[i] += step[i];
            }
            let rq = f(&q);
            let cq = objective(&rq, &weights, &q);
            if cq.is_finite() && cq < cost {
                let gain = cost - cq;
                p = q;
                r = rq;
                cost = cq;
                lambda = (lambda / 3.0).max(1e-9);
                improved = gain > 1e-12 * cost.max(1e-12);
                break;
            }
            lambda *= 10.0;
        }
        if !improved {
            break;
        }
    }
    let med = median(r.clone());
    let mut dev: Vec<f64> = r.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    // The residuals' own 80 % quantile, where it is wider than the normal
    // scale their median deviation implies: a log whose mid sizes stray
    // from every model (a protocol switch elsewhere, a congested run) makes
    // a range as wide as its own scatter.
    let q80 = dev
        .get(((dev.len() as f64 * 0.8).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0.0)
        / super::Z80;
    let sigma = (1.4826 * median(dev.clone())).max(q80).max(MIN_SIGMA);
    let j = jacobian(&f, &p, &r);
    let mut h = [[0.0; N_PARAMS]; N_PARAMS];
    for row in &j {
        for i in 0..N_PARAMS {
            for k in 0..N_PARAMS {
                h[i][k] += row[i] * row[k] / (sigma * sigma);
            }
        }
    }
    for (i, q) in Param::ALL.iter().enumerate() {
        h[i][i] += 1.0 / q.prior().1.powi(2);
    }
    let cov = invert(h).map_or_else(
        || Fitted::prior().covariance,
        |c| c.iter().flat_map(|row| row.iter().copied()).collect(),
    );
    let fitted = Fitted {
        params: p.to_vec(),
        covariance: cov,
        sigma,
        median_abs_err: median(r.iter().map(|x| x.exp_m1().abs()).collect()),
        rows: prepared.len(),
    };
    (fitted, cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::collective::Primitive;

    #[test]
    fn rows_made_by_the_model_are_fitted_back() {
        // Rows made with a 2× network latency and a 0.8× network bandwidth
        // on 2 nodes of 4 A100: the fit reproduces every row within 1 %.
        let hw = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        let mut truth = model::prior_means();
        truth[Param::NetLat as usize] = 2f64.ln();
        truth[Param::NetBw as usize] = 0.8f64.ln();
        let shape = Shape::on(&hw, Primitive::AllReduce, 8);
        let rows: Vec<Observation> = (10..31)
            .map(|k| {
                let bytes = 1u64 << k;
                let (run, t) = model::what_runs(&hw, &shape, bytes);
                let time_us = model::time_us(
                    &hw,
                    &shape,
                    &run,
                    t.as_ref().map(|x| &x.0),
                    bytes,
                    &truth,
                    2,
                );
                Observation {
                    shape,
                    bytes,
                    time_us,
                }
            })
            .collect();
        let f = fit(&hw, &rows, 2);
        assert_eq!(f.rows, 21);
        assert!(f.median_abs_err < 0.01, "{f:?}");
        // The network bandwidth is what the large rows pin down.
        assert!(
            (f.params()[Param::NetBw as usize] - 0.8f64.ln()).abs() < 0.02,
            "{:?}",
            f.params
        );
    }

    #[test]
    fn no_rows_keep_the_priors() {
        let hw = Hardware::h100_node();
        let f = fit(&hw, &[], 1);
        assert_eq!(f.rows, 0);
        assert_eq!(f.params(), model::prior_means());
        assert!((f.cov(0, 0) - 0.09).abs() < 1e-12);
    }

    #[test]
    fn a_profile_of_the_earlier_thirteen_parameters_is_read_unshifted() {
        // Thirteen parameters (no NetPeer) and a 13 × 13 covariance with
        // 0.01 · (i + 1) on its diagonal and 0.5 at (1, 0).
        let n = 13;
        let mut cov = vec![0.0; n * n];
        for i in 0..n {
            cov[i * n + i] = 0.01 * (i + 1) as f64;
        }
        cov[n] = 0.5;
        let old = Fitted {
            params: (0..n).map(|i| i as f64 / 10.0).collect(),
            covariance: cov,
            sigma: 0.1,
            median_abs_err: 0.05,
            rows: 20,
        };
        let p = old.params();
        assert_eq!(p[Param::PeerLat as usize], 0.9);
        assert_eq!(p[Param::LatGrowth as usize], 1.2);
        // Its per-peer cost already held the network's share.
        assert_eq!(p[Param::NetPeer as usize], LEGACY_NO_NET_PEER);
        assert_eq!(old.cov(12, 12), 0.13);
        assert_eq!(old.cov(1, 0), 0.5);
        assert_eq!(old.cov(0, 1), 0.0);
        assert_eq!(old.cov(13, 13), 0.09);
        assert_eq!(old.cov(13, 0), 0.0);
    }

    #[test]
    fn grouped_sends_of_a_few_bytes_per_peer_weigh_a_quarter() {
        let row = |primitive, ranks, bytes| Observation {
            shape: Shape {
                primitive,
                ranks,
                nodes: 2,
                nvls_ok: true,
            },
            bytes,
            time_us: 10.0,
        };
        // 8 ranks: 1 KiB is 128 B per peer, 2 KiB 256 B.
        assert_eq!(row_weight(&row(Primitive::AlltoAll, 8, 1024)), 0.25);
        assert_eq!(row_weight(&row(Primitive::AlltoAll, 8, 2048)), 1.0);
        assert_eq!(row_weight(&row(Primitive::AllReduce, 8, 8)), 1.0);
        assert_eq!(row_weight(&row(Primitive::SendRecv, 8, 8)), 1.0);
    }
}
