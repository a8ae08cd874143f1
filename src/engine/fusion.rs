//! Fusion: bucketing the many per-tensor AllReduces of a backward pass into
//! few large ones, as PyTorch DDP does, and what it buys on a topology.
//!
//! ## Buckets (PyTorch DDP, `torch/nn/parallel/distributed.py` and
//! `torch/csrc/distributed/c10d/reducer.cpp`, `compute_bucket_assignment_by_size`)
//! Tensors are taken in reverse order of the model's parameters (the order
//! gradients become ready in the backward pass). A tensor is added to the
//! open bucket; when the bucket reaches its limit it closes (the tensor
//! that crosses the limit stays in it). When `bucket_cap_mb` is **not
//! given**, DDP uses its default 25 MiB cap and a small first bucket of
//! 1 MiB (`dist._DEFAULT_FIRST_BUCKET_BYTES`: `bucket_size_limits =
//! [_DEFAULT_FIRST_BUCKET_BYTES, bucket_bytes_cap]` only when
//! `bucket_bytes_cap_default`); when it **is given** (even as 25), every
//! bucket's limit is the cap. A cap of 0 means no fusion: one AllReduce
//! per tensor. (This is DDP's steady state: with the default
//! `find_unused_parameters=False` its first iteration uses one bucket in
//! parameter order and then rebuilds the buckets in the order gradients
//! arrived, which is the layout modelled here.)
//!
//! ## Model presets
//! `llama3-8b` and `llama3-70b`: the dense tensors of
//! [`transformer::LLAMA3_8B`] and [`transformer::LLAMA3_70B`] (their
//! sources there; tests check 8 030 261 248 and 70 553 706 496
//! parameters).

use super::algorithm::Algorithm;
use super::dtype::DType;
use super::transformer;
use super::units::format_bytes;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// DDP's first-bucket limit, bytes (`dist._DEFAULT_FIRST_BUCKET_BYTES`).
pub const DDP_FIRST_BUCKET_BYTES: u64 = 1 << 20;
/// DDP's default bucket cap, bytes (`bucket_cap_mb = 25`).
pub const DDP_BUCKET_CAP_BYTES: u64 = 25 << 20;

pub use super::transformer::Tensor;

/// An invalid `fusion` value.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FusionError {
    /// Not a known preset nor `COUNTxSIZE`.
    #[error("fusion={0:?}: allowed llama3-8b, llama3-70b, or COUNTxSIZE with COUNT 1..=10000 and SIZE 1 B..1 GiB (e.g. 30x4MiB)")]
    Spec(String),
}

/// Parses a `fusion` value: `llama3-8b`, `llama3-70b`, or `COUNTxSIZE`
/// (`30x4MiB`: 30 equal tensors of 4 MiB of `dtype`).
///
/// Errors: [`FusionError::Spec`].
pub fn parse_fusion(s: &str, dtype: DType) -> Result<Vec<Tensor>, FusionError> {
    match s {
        "llama3-8b" => return Ok(transformer::tensors(&transformer::LLAMA3_8B).0),
        "llama3-70b" => return Ok(transformer::tensors(&transformer::LLAMA3_70B).0),
        _ => {}
    }
    let err = || FusionError::Spec(s.chars().take(80).collect());
    let (count, size) = s.split_once(['x', 'X']).ok_or_else(err)?;
    let count: u64 = count.trim().parse().map_err(|_| err())?;
    let bytes = super::units::parse_bytes(size).map_err(|_| err())?;
    if !(1..=10_000).contains(&count) || bytes == 0 || bytes > 1 << 30 {
        return Err(err());
    }
    let elems = (bytes / dtype.size_bytes() as u64).max(1);
    Ok((0..count)
        .map(|i| Tensor {
            name: format!("layer{i}"),
            elems,
        })
        .collect())
}

/// One fused AllReduce.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Indices into the tensor list (in the order they were added: reverse
    /// parameter order).
    pub tensors: Vec<usize>,
    /// Bytes of the fused buffer.
    pub bytes: u64,
}

/// DDP's bucket assignment (module docs) for `tensors` of `dtype` with the
/// cap `cap_bytes`: `None` = `bucket_cap_mb` not given (DDP's default
/// 25 MiB cap, with the small first bucket of
/// [`DDP_FIRST_BUCKET_BYTES`]); `Some(cap)` = given (every bucket up to
/// `cap`, no small first bucket; 0 = one bucket per tensor). A bucket
/// closes when its size reaches its limit; the tensor that crosses the
/// limit stays in it (`compute_bucket_assignment_by_size`).
pub fn buckets(tensors: &[Tensor], dtype: DType, cap_bytes: Option<u64>) -> Vec<Bucket> {
    let es = dtype.size_bytes() as u64;
    let cap = cap_bytes.unwrap_or(DDP_BUCKET_CAP_BYTES);
    let mut out = Vec::new();
    let mut open = Bucket {
        tensors: vec![],
        bytes: 0,
    };
    for i in (0..tensors.len()).rev() {
        open.tensors.push(i);
        open.bytes += tensors[i].elems * es;
        let limit = if out.is_empty() && cap_bytes.is_none() {
            DDP_FIRST_BUCKET_BYTES
        } else {
            cap
        };
        if open.bytes >= limit {
            out.push(std::mem::replace(
                &mut open,
                Bucket {
                    tensors: vec![],
                    bytes: 0,
                },
            ));
        }
    }
    if !open.tensors.is_empty() {
        out.push(open);
    }
    out
}

/// Largest bucket the page runs for real by default, bytes (a few seconds
/// of worker time at 8 ranks in a browser).
pub const RUN_BUCKET_MAX_BYTES: u64 = 64 << 20;

/// The bucket to run for real: among buckets of 1 KiB..=`max_bytes`, the
/// one fusing the most tensors (then the larger, then the earlier); `None`
/// if no bucket is in range.
pub fn run_bucket(buckets: &[Bucket], max_bytes: u64) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, b) in buckets.iter().enumerate() {
        if !(1024..=max_bytes).contains(&b.bytes) {
            continue;
        }
        let better = best.is_none_or(|j| {
            let o = &buckets[j];
            (b.tensors.len(), b.bytes) > (o.tensors.len(), o.bytes)
        });
        if better {
            best = Some(i);
        }
    }
    best
}

/// Where each tensor of `bucket` sits in the fused buffer, in elements:
/// `(tensor index, range)`, packed in the bucket's order (as DDP packs).
pub fn unpack(bucket: &Bucket, tensors: &[Tensor]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut at = 0usize;
    bucket
        .tensors
        .iter()
        .map(|&i| {
            let n = tensors.get(i).map_or(0, |t| t.elems as usize);
            let r = at..at + n;
            at += n;
            (i, r)
        })
        .collect()
}

/// The predicted cost of one AllReduce.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketCost {
    /// Bytes.
    pub bytes: u64,
    /// Algorithm auto chose.
    pub algorithm: Algorithm,
    /// Predicted time, µs.
    pub time_us: f64,
    /// Of which per-message latency, µs.
    pub latency_us: f64,
}

/// Fused vs unfused, for one tensor list, cap and machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FusionPlan {
    /// The buckets with their predicted cost, in launch order.
    pub buckets: Vec<(Bucket, BucketCost)>,
    /// Σ over tensors of one AllReduce each, µs.
    pub unfused_us: f64,
    /// Σ over buckets, µs (AllReduces run back to back; overlap with the
    /// backward pass is not modelled).
    pub fused_us: f64,
    /// The smallest power-of-two AllReduce size at which moving data takes
    /// longer than per-message latency (below it, latency dominates and
    /// fusing pays most), bytes.
    pub crossover_bytes: u64,
    /// Total gradient bytes.
    pub total_bytes: u64,
}

/// Plans `tensors` of `dtype` with the cap `cap_bytes` (see [`buckets`]):
/// `cost(bytes)` is the predicted AllReduce of `bytes` (the planning
/// pipeline's `auto` on the machine, [`crate::engine::plan`]); tensors of
/// equal size are costed once.
///
/// Errors: the first error of `cost`.
pub fn plan<E>(
    tensors: &[Tensor],
    dtype: DType,
    cap_bytes: Option<u64>,
    mut cost: impl FnMut(u64) -> Result<BucketCost, E>,
) -> Result<FusionPlan, E> {
    let es = dtype.size_bytes() as u64;
    let mut memo: std::collections::HashMap<u64, BucketCost> = Default::default();
    let mut cost = |bytes: u64| -> Result<BucketCost, E> {
        if let Some(c) = memo.get(&bytes) {
            return Ok(c.clone());
        }
        let c = cost(bytes)?;
        memo.insert(bytes, c.clone());
        Ok(c)
    };
    let mut unfused_us = 0.0;
    for t in tensors {
        unfused_us += cost(t.elems * es)?.time_us;
    }
    let mut fused = Vec::new();
    let mut fused_us = 0.0;
    for b in buckets(tensors, dtype, cap_bytes) {
        let c = cost(b.bytes)?;
        fused_us += c.time_us;
        fused.push((b, c));
    }
    let mut crossover_bytes = 1 << 30;
    for k in 10..=30 {
        let c = cost(1u64 << k)?;
        if c.time_us - c.latency_us >= c.latency_us {
            crossover_bytes = 1 << k;
            break;
        }
    }
    Ok(FusionPlan {
        buckets: fused,
        unfused_us,
        fused_us,
        crossover_bytes,
        total_bytes: tensors.iter().map(|t| t.elems * es).sum(),
    })
}

/// One bucket's compressed run, as the compression what-if models it
/// ([`crate::engine::compressed::estimate`] on the bucket's AllReduce).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressedBucketCost {
    /// Modelled time with compressed transfers and codec work, µs.
    pub time_us: f64,
    /// Bytes on the wire, compressed (all transfers of the collective).
    pub wire_bytes: u64,
    /// Bytes on the wire of the same collective uncompressed.
    pub uncompressed_bytes: u64,
}

/// "Compress only large gradients" (the seed's remedy for compression
/// jitter): the fused buckets of at least `min_bytes` compressed, the rest
/// sent as they are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressedFusion {
    /// The threshold, bytes (`compress_min`).
    pub min_bytes: u64,
    /// Per bucket (launch order): compressed or not.
    pub compressed: Vec<bool>,
    /// Σ over buckets of their time (compressed time for compressed
    /// buckets, [`BucketCost::time_us`] for the others), µs.
    pub time_us: f64,
    /// Σ over buckets of their wire bytes (compressed or not).
    pub wire_bytes: u64,
    /// Σ over buckets of their uncompressed wire bytes.
    pub uncompressed_wire_bytes: u64,
    /// Gradient bytes in compressed buckets / all gradient bytes.
    pub compressed_fraction: f64,
    /// Relative L2 error of one quantisation round trip of these
    /// gradient-like inputs (the codec's own error).
    pub codec_rel_l2: f64,
    /// Relative L2 error of the whole gradient: `codec_rel_l2 ·
    /// √compressed_fraction` (uncompressed buckets are exact; the inputs'
    /// elements are identically distributed, so the squared errors and the
    /// squared values add in proportion to the elements).
    pub rel_l2_error: f64,
}

/// Compresses the buckets of `plan` whose bytes pass `compresses` (the
/// config's one rule, [`crate::engine::config::Config::compresses`]):
/// `cost(bytes)` is the compressed what-if of one bucket's AllReduce
/// (asked for every bucket size once, also uncompressed ones: their wire
/// bytes are its `uncompressed_bytes`); `codec_rel_l2` the codec's error
/// on these inputs. See [`CompressedFusion`] for the totals.
///
/// Errors: the first error of `cost`.
pub fn compress_large<E>(
    plan: &FusionPlan,
    min_bytes: u64,
    compresses: impl Fn(u64) -> bool,
    codec_rel_l2: f64,
    mut cost: impl FnMut(u64) -> Result<CompressedBucketCost, E>,
) -> Result<CompressedFusion, E> {
    let mut memo: std::collections::HashMap<u64, CompressedBucketCost> = Default::default();
    let (mut time_us, mut wire, mut raw, mut in_compressed) = (0.0, 0u64, 0u64, 0u64);
    let mut compressed = Vec::with_capacity(plan.buckets.len());
    for (b, c) in &plan.buckets {
        let k = match memo.get(&b.bytes) {
            Some(k) => *k,
            None => {
                let k = cost(b.bytes)?;
                memo.insert(b.bytes, k);
                k
            }
        };
        let on = compresses(b.bytes);
        compressed.push(on);
        raw += k.uncompressed_bytes;
        if on {
            time_us += k.time_us;
            wire += k.wire_bytes;
            in_compressed += b.bytes;
        } else {
            time_us += c.time_us;
            wire += k.uncompressed_bytes;
        }
    }
    let compressed_fraction = if plan.total_bytes > 0 {
        in_compressed as f64 / plan.total_bytes as f64
    } else {
        0.0
    };
    Ok(CompressedFusion {
        min_bytes,
        compressed,
        time_us,
        wire_bytes: wire,
        uncompressed_wire_bytes: raw,
        compressed_fraction,
        codec_rel_l2,
        rel_l2_error: codec_rel_l2 * compressed_fraction.sqrt(),
    })
}

impl CompressedFusion {
    /// One sentence for `cclsim` (the page words it from the fields).
    pub fn summary(&self, fused_us: f64) -> String {
        let n = self.compressed.iter().filter(|x| **x).count();
        format!(
            "{n} of {} buckets of at least {} compressed ({:.1} % of the gradient bytes): {} on the wire instead of {}, {:.0} µs instead of {:.0} µs fused uncompressed, relative L2 error {:.2e} (codec {:.2e} × √{:.3})",
            self.compressed.len(),
            format_bytes(self.min_bytes),
            100.0 * self.compressed_fraction,
            format_bytes(self.wire_bytes),
            format_bytes(self.uncompressed_wire_bytes),
            self.time_us,
            fused_us,
            self.rel_l2_error,
            self.codec_rel_l2,
            self.compressed_fraction
        )
    }
}

impl FusionPlan {
    /// One sentence for the UI.
    pub fn summary(&self, tensors: usize) -> String {
        format!(
            "{tensors} AllReduces of {} in all take {:.0} µs one by one; fused into {} buckets they take {:.0} µs ({:.1}× faster). Below about {} per AllReduce, latency dominates.",
            format_bytes(self.total_bytes),
            self.unfused_us,
            self.buckets.len(),
            self.fused_us,
            self.unfused_us / self.fused_us.max(f64::MIN_POSITIVE),
            format_bytes(self.crossover_bytes)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_large_sums_compressed_and_plain_buckets() {
        // Tensors 4, 4, 1 MiB with cap 4 MiB, taken in reverse order: 1 MiB
        // then 4 MiB crosses the cap (bucket of 5 MiB), then 4 MiB. Costs: uncompressed t = bytes/1 MiB µs;
        // compressed half the time and a quarter of the wire bytes; the
        // collective's wire bytes twice the message.
        let mib = 1u64 << 20;
        let ts: Vec<Tensor> = [4u64, 4, 1]
            .iter()
            .enumerate()
            .map(|(i, m)| Tensor {
                name: format!("t{i}"),
                elems: m * mib / 4,
            })
            .collect();
        let p = plan(&ts, DType::Fp32, Some(4 * mib), |b| {
            Ok::<_, ()>(BucketCost {
                bytes: b,
                algorithm: Algorithm::Ring,
                time_us: (b / mib) as f64,
                latency_us: 0.0,
            })
        })
        .unwrap();
        let sizes: Vec<u64> = p.buckets.iter().map(|(b, _)| b.bytes / mib).collect();
        assert_eq!(sizes, vec![5, 4]);
        let cost = |b: u64| {
            Ok::<_, ()>(CompressedBucketCost {
                time_us: (b / mib) as f64 / 2.0,
                wire_bytes: b / 2,
                uncompressed_bytes: 2 * b,
            })
        };
        let c = compress_large(&p, 5 * mib, |b| b >= 5 * mib, 0.01, cost).unwrap();
        assert_eq!(c.compressed, vec![true, false]);
        // Time: 2.5 (compressed 5 MiB) + 4 (plain 4 MiB) = 6.5 µs.
        assert_eq!(c.time_us, 6.5);
        // Wire: 2.5 MiB (compressed) + 8 MiB (plain 4 MiB bucket, twice).
        assert_eq!(c.wire_bytes, 21 * mib / 2);
        assert_eq!(c.uncompressed_wire_bytes, 18 * mib);
        assert_eq!(c.compressed_fraction, 5.0 / 9.0);
        assert_eq!(c.rel_l2_error, 0.01 * (5.0f64 / 9.0).sqrt());
        // Threshold 0: everything compressed; above every bucket: nothing.
        let all = compress_large(&p, 0, |_| true, 0.01, cost).unwrap();
        assert_eq!((all.time_us, all.wire_bytes), (4.5, 9 * mib / 2));
        assert_eq!(all.rel_l2_error, 0.01);
        let none = compress_large(&p, 8 * mib, |_| false, 0.01, cost).unwrap();
        assert_eq!(
            (none.time_us, none.wire_bytes, none.rel_l2_error),
            (9.0, 18 * mib, 0.0)
        );
    }

    #[test]
    fn llama3_parameter_counts_match_the_published_sizes() {
        let n8: u64 = transformer::tensors(&transformer::LLAMA3_8B)
            .0
            .iter()
            .map(|t| t.elems)
            .sum();
        assert_eq!(n8, 8_030_261_248);
        let n70: u64 = transformer::tensors(&transformer::LLAMA3_70B)
            .0
            .iter()
            .map(|t| t.elems)
            .sum();
        assert_eq!(n70, 70_553_706_496);
        assert_eq!(
            transformer::tensors(&transformer::LLAMA3_8B).0.len(),
            32 * 9 + 3
        );
    }

    #[test]
    fn ddp_buckets_fill_in_reverse_with_a_small_first_bucket() {
        let ts = parse_fusion("30x4MiB", DType::Fp32).unwrap();
        let b = buckets(&ts, DType::Fp32, None);
        // First bucket closes at 1 MiB (one 4 MiB tensor), then 7 tensors = 28 MiB >= 25 MiB.
        assert_eq!(b[0].tensors, vec![29]);
        assert_eq!(b[1].tensors, (22..=28).rev().collect::<Vec<_>>());
        assert_eq!(b[1].bytes, 28 << 20);
        assert_eq!(b.iter().map(|x| x.tensors.len()).sum::<usize>(), 30);
        assert_eq!(b.len(), 1 + 4 + 1); // 1 + 7+7+7+7 + 1 leftover
        let none = buckets(&ts, DType::Fp32, Some(0));
        assert_eq!(none.len(), 30);
    }

    /// The cases of PyTorch DDP's `compute_bucket_assignment_by_size` with
    /// and without `bucket_cap_mb` (30 tensors of 4 MiB).
    #[test]
    fn ddp_makes_the_small_first_bucket_only_when_no_cap_is_given() {
        let ts = parse_fusion("30x4MiB", DType::Fp32).unwrap();
        let sizes = |cap: Option<u64>| -> Vec<usize> {
            buckets(&ts, DType::Fp32, cap)
                .iter()
                .map(|b| b.tensors.len())
                .collect()
        };
        assert_eq!(sizes(None), [1, 7, 7, 7, 7, 1]);
        assert_eq!(sizes(Some(25 << 20)), [7, 7, 7, 7, 2]);
        assert_eq!(sizes(Some(50 << 20)), [13, 13, 4]);
        assert_eq!(sizes(Some(0)), vec![1; 30]);
    }

    #[test]
    fn fusing_llama3_8b_is_faster_and_has_fewer_buckets() {
        // A linear cost stands in for the planning pipeline here (20 µs +
        // bytes / 100 GB/s); tests/plan.rs runs the real one.
        let cost = |bytes: u64| {
            Ok::<_, ()>(BucketCost {
                bytes,
                algorithm: crate::engine::algorithm::Algorithm::Mesh,
                time_us: 20.0 + bytes as f64 / 100e3,
                latency_us: 20.0,
            })
        };
        let ts = parse_fusion("llama3-8b", DType::Bf16).unwrap();
        let fused = plan(&ts, DType::Bf16, None, cost).unwrap();
        let unfused = plan(&ts, DType::Bf16, Some(0), cost).unwrap();
        assert!(fused.buckets.len() < unfused.buckets.len());
        assert_eq!(unfused.buckets.len(), ts.len());
        assert!(fused.fused_us < unfused.fused_us);
        assert!((unfused.fused_us - unfused.unfused_us).abs() < 1e-6 * unfused.unfused_us);
        assert_eq!(fused.total_bytes, 8_030_261_248 * 2);
        assert!(fused.summary(ts.len()).contains("buckets"));
    }

    #[test]
    fn the_run_bucket_fuses_the_most_tensors_and_unpacks_in_order() {
        let ts = parse_fusion("30x4MiB", DType::Fp32).unwrap();
        let b = buckets(&ts, DType::Fp32, None);
        let i = run_bucket(&b, RUN_BUCKET_MAX_BYTES).unwrap();
        assert_eq!(i, 1);
        let u = unpack(&b[i], &ts);
        assert_eq!(u[0], (28, 0..(1 << 20)));
        assert_eq!(u[6], (22, 6 << 20..7 << 20));
        assert_eq!(run_bucket(&b, 1000), None);
        let l = parse_fusion("llama3-8b", DType::Bf16).unwrap();
        let lb = buckets(&l, DType::Bf16, None);
        let k = run_bucket(&lb, RUN_BUCKET_MAX_BYTES).unwrap();
        assert!(lb[k].tensors.len() >= 2 && lb[k].bytes <= RUN_BUCKET_MAX_BYTES);
    }

    /// A fused AllReduce unpacks to the per-tensor AllReduces: every element
    /// of every unpacked tensor equals its own AllReduce's exact result
    /// within the dtype's summation tolerance (the bits can differ: an
    /// element's reduction order depends on the chunk it falls in).
    #[test]
    fn a_fused_allreduce_unpacks_to_the_per_tensor_allreduces() {
        use crate::engine::algorithm::{build, Algorithm};
        use crate::engine::collective::Primitive;
        use crate::engine::execute::execute;
        let ts = parse_fusion("5x3KiB", DType::Fp32).unwrap();
        let b = &buckets(&ts, DType::Fp32, Some(1 << 20))[0];
        let n = 4;
        let total: usize = b.tensors.iter().map(|&i| ts[i].elems as usize).sum();
        let inputs: Vec<Vec<u8>> = (0..n)
            .map(|r| crate::engine::input::buffer(DType::Fp32, 3, r, total))
            .collect();
        let ring = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let mut fused = inputs.clone();
        execute(
            &ring,
            DType::Fp32,
            crate::engine::dtype::ReduceOp::Sum,
            &mut fused,
        )
        .unwrap();
        for (_, r) in unpack(b, &ts) {
            let mut own: Vec<Vec<u8>> = inputs
                .iter()
                .map(|x| x[r.start * 4..r.end * 4].to_vec())
                .collect();
            execute(
                &ring,
                DType::Fp32,
                crate::engine::dtype::ReduceOp::Sum,
                &mut own,
            )
            .unwrap();
            for j in 0..r.len() {
                let exact: f64 = (0..n)
                    .map(|q| DType::Fp32.read_f64(&inputs[q], r.start + j))
                    .sum();
                let tol = 1.01
                    * 3.0
                    * DType::Fp32.unit_roundoff()
                    * (0..n)
                        .map(|q| DType::Fp32.read_f64(&inputs[q], r.start + j).abs())
                        .sum::<f64>();
                for rank in 0..n {
                    let f = DType::Fp32.read_f64(&fused[rank], r.start + j);
                    let o = DType::Fp32.read_f64(&own[rank], j);
                    assert!((f - exact).abs() <= tol && (o - exact).abs() <= tol);
                }
            }
        }
    }

    #[test]
    fn bad_specs_are_refused_with_what_is_allowed() {
        for s in ["", "x", "30x", "0x4MiB", "3x2GiB", "llama4", "99999x1KiB"] {
            let e = parse_fusion(s, DType::Fp16).unwrap_err();
            assert!(e.to_string().contains("allowed llama3-8b"), "{s}: {e}");
        }
        assert_eq!(parse_fusion("2x1KiB", DType::Fp16).unwrap()[1].elems, 512);
    }
}
