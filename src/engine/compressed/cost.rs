//! The modelled time of a compressed run: compressed transfers plus the
//! codec's work at an assumed throughput.

use super::*;

/// Assumed throughput of the quantise / dequantise / local-reduce kernels,
/// GB/s of uncompressed data processed. **An assumption**, not a
/// measurement: these are memory-bound elementwise kernels, and 400 GB/s is
/// a small fraction of the HBM bandwidth of the modelled devices (TB/s
/// class: HBM2e on 910B, HBM3 3.35 TB/s on H100 SXM); the UI shows it next
/// to the codec time.
pub const CODEC_GBPS: f64 = 400.0;

/// The modelled time of a compressed run, next to the uncompressed one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressedEstimate {
    /// Transfers (and any reduces) with compressed payloads, µs.
    pub transfer_us: f64,
    /// Quantise, dequantise and (once) local-reduce work not overlapped
    /// with transfers, µs, at [`CODEC_GBPS`].
    pub codec_us: f64,
    /// `transfer_us + codec_us`.
    pub time_us: f64,
    /// The same collective uncompressed, µs.
    pub uncompressed_us: f64,
    /// Bytes on the wire, compressed (all transfers).
    pub wire_bytes: u64,
    /// Bytes on the wire, uncompressed collective.
    pub uncompressed_bytes: u64,
    /// The transfer timeline (hop: the collective's steps with compressed
    /// payloads; once: the AllGather's steps).
    pub estimate: crate::engine::cost::Estimate,
}

impl CompressedEstimate {
    /// Relative change of the modelled time vs uncompressed (−0.4 = 40 %
    /// faster).
    pub fn time_change(&self) -> f64 {
        if self.uncompressed_us > 0.0 {
            self.time_us / self.uncompressed_us - 1.0
        } else {
            0.0
        }
    }
}

/// Models a compressed run of `collective` (a message of `bytes` bytes of
/// `dtype` on `topo`, cut into `slices` as [`crate::engine::cost::estimate_sliced`]):
/// `run_schedule` is the collective itself for
/// [`Placement::Hop`], the AllGather of the compressed inputs for
/// [`Placement::Once`].
///
/// - Hop: the event simulation of the collective with every link's
///   bandwidth divided by `wire_bytes / uncompressed_bytes` (each transfer
///   then takes its compressed size's time; α and reduce costs unchanged),
///   plus, per step, the busiest rank's encode + decode bytes at
///   [`CODEC_GBPS`].
/// - Once: the simulation of the AllGather of `ranks · wire_len(S)` bytes,
///   plus one encode of `S`, `ranks` decodes of `S` and `ranks − 1` local
///   reduces of `S` at [`CODEC_GBPS`].
///
/// Errors: the topology's (ranks that do not fit, no route).
pub fn estimate(
    collective: &Schedule,
    run_schedule: &Schedule,
    setup: &CompressedSetup,
    topo: &crate::engine::topology::Topology,
    bytes: u64,
    dtype: DType,
    slices: crate::engine::cost::Slices,
) -> Result<CompressedEstimate, crate::engine::topology::TopologyError> {
    use crate::engine::cost;
    let es = dtype.size_bytes() as u64;
    let elems = (bytes / es) as usize;
    let c = &setup.compression;
    let plain = cost::estimate_sliced(collective, topo, bytes, dtype, slices)?;
    let (uncompressed_bytes, hop_wire) = schedule_wire_bytes(collective, c, dtype, elems);
    let codec_rate = CODEC_GBPS * 1e3; // bytes per µs
    let (mut est, wire_bytes, codec_us) = match setup.placement {
        Placement::Hop => {
            let ratio = if uncompressed_bytes > 0 {
                hop_wire as f64 / uncompressed_bytes as f64
            } else {
                1.0
            };
            let mut scaled = topo.clone();
            for l in &mut scaled.links {
                l.bandwidth_gbps /= ratio;
            }
            let e = cost::estimate_sliced(collective, &scaled, bytes, dtype, slices)?;
            let mut codec = 0.0;
            let mut per_rank = vec![0u64; collective.ranks];
            for step in &collective.steps {
                per_rank.iter_mut().for_each(|b| *b = 0);
                for t in &step.transfers {
                    let b = collective.range_elems(elems, t.first, t.count).len() as u64 * es;
                    per_rank[t.src] += b;
                    per_rank[t.dst] += b;
                }
                codec += per_rank.iter().copied().max().unwrap_or(0) as f64 / codec_rate;
            }
            (e, hop_wire, codec)
        }
        Placement::Once => {
            let n = collective.ranks as u64;
            let w = wire_len(c, elems) as u64;
            let e = cost::estimate_sliced(run_schedule, topo, n * w, DType::Int8, slices)?;
            let (raw, _) = schedule_wire_bytes(
                run_schedule,
                &Compression::default(),
                DType::Int8,
                (n * w) as usize,
            );
            let codec = (1 + n + n.saturating_sub(1)) as f64 * bytes as f64 / codec_rate;
            (e, raw, codec)
        }
    };
    let transfer_us = est.time_us;
    let time_us = transfer_us + codec_us;
    // Report it as the collective of S bytes (nccl-tests conventions).
    est.bytes = bytes;
    est.time_us = time_us;
    est.algbw_gbps = if time_us > 0.0 {
        bytes as f64 / (time_us * 1e3)
    } else {
        0.0
    };
    est.busbw_gbps = est.algbw_gbps * collective.primitive.busbw_factor(collective.ranks);
    Ok(CompressedEstimate {
        transfer_us,
        codec_us,
        time_us,
        uncompressed_us: plain.time_us,
        wire_bytes,
        uncompressed_bytes,
        estimate: est,
    })
}
