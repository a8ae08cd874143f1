//! The what-ifs a plan carries: the compressed run of the chosen
//! algorithm and the fusion view of a backward pass.

use super::estimate::verify_schedule;
use super::CompressedPlan;
use super::FusionView;
use super::Plan;
use super::PlanError;
use super::{Scope, MAX_DRAWN_RANKS};
use crate::engine::algorithm;
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use crate::engine::compressed;
use crate::engine::compressed::CompressedSetup;
use crate::engine::compressed::Placement;
use crate::engine::config::AlgoChoice;
use crate::engine::config::Config;
use crate::engine::cost::Estimate;
use crate::engine::dtype::DType;
use crate::engine::fusion;
use crate::engine::fusion::BucketCost;
use crate::engine::quantization;
use crate::engine::quantization::Scheme;
use crate::engine::schedule::Schedule;
use crate::engine::topology::Topology;
use crate::engine::verify::Verified;
use std::sync::Arc;

/// The compression what-if of `config` on the chosen `algorithm`: with
/// `placement=once`, the AllGather of the compressed inputs (the same
/// algorithm if it implements AllGather, else auto's AllGather on this
/// machine) is what runs.
///
/// Errors: [`PlanError::Model`] (a dtype or primitive compression does not
/// apply to; no route).
pub(super) fn compressed_plan(
    config: &Config,
    topology: &Topology,
    algorithm: Algorithm,
    schedule: Schedule,
) -> Result<CompressedPlan, PlanError> {
    let model = |e: String| PlanError::Model(e);
    let setup = CompressedSetup {
        compression: config.compress,
        placement: config.placement,
        shape: config.grad,
    };
    compressed::check_applies(&setup, config.primitive, config.dtype, config.redop)
        .map_err(|e| model(e.to_string()))?;
    let (run, gather_algorithm) = match setup.placement {
        Placement::Hop => (schedule.clone(), None),
        Placement::Once => {
            let elems = config.elems();
            let w = compressed::wire_len(&setup.compression, elems) as u64;
            let gather = if algorithm.supports(Primitive::AllGather, config.ranks) {
                algorithm
            } else {
                let mut c = config.clone();
                c.primitive = Primitive::AllGather;
                c.algo = AlgoChoice::Auto;
                c.dtype = DType::Int8;
                c.bytes = (config.ranks as u64 * w).max(1);
                c.compress.scheme = Scheme::None;
                c.fusion = None;
                Plan::headline(&c)?.algorithm
            };
            let s = algorithm::build(gather, Primitive::AllGather, config.ranks)
                .map_err(|e| PlanError::Algorithm(e.to_string()))?;
            (s, Some(gather))
        }
    };
    let estimate = compressed::estimate(
        &schedule,
        &run,
        &setup,
        topology,
        config.bytes,
        config.dtype,
        config.slices,
    )
    .map_err(|e| model(e.to_string()))?;
    Ok(CompressedPlan {
        setup,
        collective: schedule,
        gather_algorithm,
        estimate,
    })
}

/// The fusion what-if of `config` (`None` without `fusion`): every bucket
/// and every tensor planned as its own AllReduce with `auto`.
///
/// Errors: [`PlanError`] of a bucket's plan.
pub(super) fn fusion_view(config: &Config) -> Result<Option<FusionView>, PlanError> {
    if config.primitive != Primitive::AllReduce {
        return Ok(None);
    }
    let Some((tensors, buckets, run_bucket)) = config.fusion_buckets() else {
        return Ok(None);
    };
    let es = config.dtype.size_bytes() as u64;
    let plan = fusion::plan(&tensors, config.dtype, config.bucket, |bytes| {
        let b = bytes.max(es);
        let p = Plan::at(config, AlgoChoice::Auto, b)?;
        Ok::<_, PlanError>(BucketCost {
            bytes,
            algorithm: p.algorithm,
            time_us: p.estimate.time_us,
            latency_us: p.latency_us,
        })
    })?;
    let running = run_bucket
        .filter(|&i| buckets[i].bytes == config.bytes)
        .or_else(|| buckets.iter().position(|b| b.bytes == config.bytes));
    let compression = if config.compress.scheme != Scheme::None {
        let codec = quantization::codec_rel_l2(&config.compress, config.grad, config.seed);
        Some(fusion::compress_large(
            &plan,
            config.compress_min,
            |b| config.compresses(b),
            codec,
            |bytes| {
                let mut c = config.clone();
                c.bytes = bytes.max(es);
                c.algo = AlgoChoice::Auto;
                c.fusion = None;
                c.compress_min = 0;
                let p = Plan::headline(&c)?;
                let e = p.compressed.as_ref().map(|x| &x.estimate).ok_or_else(|| {
                    PlanError::Model(format!(
                        "no compressed estimate for a {} bucket",
                        crate::engine::units::format_bytes(bytes)
                    ))
                })?;
                Ok::<_, PlanError>(fusion::CompressedBucketCost {
                    time_us: e.time_us,
                    wire_bytes: e.wire_bytes,
                    uncompressed_bytes: e.uncompressed_bytes,
                })
            },
        )?)
    } else {
        None
    };
    Ok(Some(FusionView {
        tensors,
        plan,
        run_bucket,
        running,
        compression,
    }))
}

/// The compression what-if of the chosen algorithm, where `config`
/// compresses and its schedule was built.
///
/// Errors: [`PlanError`] of [`compressed_plan`].
pub(super) fn compress(
    config: &Config,
    topology: &Topology,
    algorithm: Algorithm,
    schedule: Option<&Schedule>,
) -> Result<Option<Arc<CompressedPlan>>, PlanError> {
    match schedule {
        Some(s) if config.compresses(config.bytes) => Ok(Some(Arc::new(compressed_plan(
            config,
            topology,
            algorithm,
            s.clone(),
        )?))),
        _ => Ok(None),
    }
}

/// The compressed run as the plan's headline: its time includes the
/// codec's work, and algbw / busbw follow from it.
pub(super) fn compressed_headline(config: &Config, c: &CompressedPlan) -> Estimate {
    let mut estimate = c.estimate.estimate.clone();
    estimate.time_us = c.estimate.time_us;
    let t = estimate.time_us;
    let bw = if t > 0.0 {
        config.bytes as f64 / (t * 1e3)
    } else {
        0.0
    };
    estimate.algbw_gbps = bw;
    estimate.busbw_gbps = bw * config.primitive.busbw_factor(config.ranks);
    estimate
}

/// The schedule drawn and run, and its verification: with compression
/// `placement=once`, the AllGather of the codes; else the chosen one.
///
/// Errors: [`PlanError`] of building or verifying that AllGather.
pub(super) fn what_runs(
    config: &Config,
    scope: Scope,
    compressed: Option<&CompressedPlan>,
    schedule: Option<Schedule>,
    verified: Option<Verified>,
) -> Result<(Option<Schedule>, Option<Verified>), PlanError> {
    let gather = compressed
        .and_then(|c| c.gather_algorithm)
        .filter(|_| scope.detailed());
    let Some(g) = gather else {
        return Ok((schedule, verified));
    };
    let s = algorithm::build(g, Primitive::AllGather, config.ranks)
        .map_err(|e| PlanError::Algorithm(e.to_string()))?;
    let v = if config.ranks <= MAX_DRAWN_RANKS {
        Some(verify_schedule(&s, g)?)
    } else {
        None
    };
    Ok((Some(s), v))
}

/// The same algorithm's estimate on the healthy machine, where `config`
/// has faults (the verdict says the slowdown).
///
/// Errors: [`PlanError`] of that plan.
pub(super) fn healthy_estimate(
    config: &Config,
    algorithm: Algorithm,
) -> Result<Option<Estimate>, PlanError> {
    if config.faults.is_none() {
        return Ok(None);
    }
    let mut h = config.clone();
    h.faults = Default::default();
    h.algo = AlgoChoice::Fixed(algorithm);
    Ok(Some(Plan::make(&h, Scope::Headline)?.estimate))
}
