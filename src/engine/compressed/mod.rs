//! A collective run with compressed transfers (the what-if of
//! [`super::quantization`]; HCCL and NCCL have no gradient compression),
//! shaped like the plain path: the wire codec ([`super::wire`]), the
//! inputs and placements (here), the compressed reference and its check
//! ([`check`]), and the modelled time ([`cost`]).
//!
//! ## Placements
//! - [`Placement::Hop`]: every transfer of the schedule is encoded by the
//!   sender and decoded by the receiver, which then copies or reduces in the
//!   dtype as usual; a value reduced at `h` hops is requantised `h` times, so
//!   the error grows with the hop count.
//! - [`Placement::Once`] (AllReduce only): each rank quantises its input
//!   once; the ranks AllGather the compressed inputs (the wire carries
//!   `n · wire_len(S)` bytes per rank's view, as int8 "elements"); each rank
//!   then decodes all `n` inputs and reduces them locally in f32, in rank
//!   order 0..n, rounding to the dtype once. Less error; more bytes for
//!   n > 2 (each rank receives n − 1 whole inputs instead of pieces).
//!
//! Workers and this module's reference run the same functions in the same
//! order, so a correct run equals [`CompressedCheck::prepare`]'s reference
//! outputs bit for bit.

pub mod check;
pub mod cost;

pub use super::wire::{decode, decode_f32, encode, wire_len, WireError};
pub use check::{CompressedCheck, CompressedCheckBuilder, CompressedCompare, CompressedReport};
pub use cost::{estimate, CompressedEstimate, CODEC_GBPS};

use super::collective::Primitive;
use super::dtype::{DType, ReduceOp};
use super::quantization::{gradient_range, Compression, GradientShape, Scheme};
use super::schedule::Schedule;
use super::wire::from_f32;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Where quantisation happens (see module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// Quantise every transfer; dequantise-reduce-requantise at each hop.
    #[default]
    Hop,
    /// Quantise each input once, AllGather, reduce locally in f32.
    Once,
}

impl Placement {
    /// Both, in UI order.
    pub const ALL: [Placement; 2] = [Placement::Hop, Placement::Once];

    /// URL name (`hop`, `once`).
    pub fn name(self) -> &'static str {
        match self {
            Placement::Hop => "hop",
            Placement::Once => "once",
        }
    }

    /// Parses a [`Placement::name`].
    pub fn from_name(s: &str) -> Option<Placement> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// Everything a compressed run needs besides the schedule: the codec, where
/// it applies, and the gradient-like inputs it runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressedSetup {
    /// Scheme, block size and scale storage (never [`Scheme::None`] here).
    pub compression: Compression,
    /// Hop or once.
    pub placement: Placement,
    /// The inputs' distribution ([`super::quantization::gradient_at`]).
    pub shape: GradientShape,
}

/// Writes rank `rank`'s gradient-like input elements `elems` into `out`
/// (`dtype`, rounded to nearest even). Element `i` is
/// [`super::quantization::gradient_at`]`(shape, seed, rank, i)`.
pub fn fill_gradients(
    shape: GradientShape,
    dtype: DType,
    seed: u64,
    rank: usize,
    elems: Range<usize>,
    out: &mut [u8],
) {
    let xs = gradient_range(shape, seed, rank, elems.start as u64..elems.end as u64);
    from_f32(dtype, &xs, out);
}

/// Rank `rank`'s initial buffer for `schedule` with gradient inputs: like
/// [`super::execute::initial_buffer`] (inputs in the blocks the primitive
/// gives the rank, zeros elsewhere).
pub fn initial_buffer(
    schedule: &Schedule,
    setup: &CompressedSetup,
    dtype: DType,
    seed: u64,
    rank: usize,
    elems: usize,
) -> Vec<u8> {
    initial_buffer_with_progress(schedule, setup, dtype, seed, rank, elems, &mut || {})
}

/// [`initial_buffer`], calling `progress` after each piece
/// ([`super::execute::FILL_PIECE_ELEMS`] elements; a browser worker's
/// heartbeat).
pub fn initial_buffer_with_progress(
    schedule: &Schedule,
    setup: &CompressedSetup,
    dtype: DType,
    seed: u64,
    rank: usize,
    elems: usize,
    progress: &mut dyn FnMut(),
) -> Vec<u8> {
    super::execute::initial_buffer_with(schedule, dtype, rank, elems, |r, out| {
        fill_gradients(setup.shape, dtype, seed, rank, r, out);
        progress();
    })
}

/// `placement=once`: rank `rank`'s initial buffer for the AllGather of
/// compressed inputs: `ranks` blocks of [`wire_len`]`(elems)` bytes, block
/// `rank` holding its encoded input (`elems` gradient elements), the rest
/// zero.
///
/// Errors: [`WireError::NotFloat`].
pub fn once_initial_buffer(
    setup: &CompressedSetup,
    dtype: DType,
    seed: u64,
    rank: usize,
    ranks: usize,
    elems: usize,
) -> Result<Vec<u8>, WireError> {
    let w = wire_len(&setup.compression, elems);
    let mut input = vec![0u8; elems * dtype.size_bytes()];
    fill_gradients(setup.shape, dtype, seed, rank, 0..elems, &mut input);
    let mut buf = vec![0u8; ranks * w];
    buf[rank * w..(rank + 1) * w].copy_from_slice(&encode(&setup.compression, dtype, &input)?);
    Ok(buf)
}

/// `placement=once`: after the AllGather, decodes the `ranks` compressed
/// inputs in `gathered` and reduces them in f32 in rank order, rounding to
/// `dtype` once: the rank's `elems`-element output.
///
/// Errors: [`WireError::Length`] if `gathered` is not `ranks ·`
/// [`wire_len`]`(elems)` bytes; [`WireError::NotFloat`].
pub fn once_reduce(
    c: &Compression,
    dtype: DType,
    op: ReduceOp,
    gathered: &[u8],
    ranks: usize,
    elems: usize,
) -> Result<Vec<u8>, WireError> {
    reducible(dtype, op)?;
    let w = wire_len(c, elems);
    if gathered.len() != ranks * w {
        return Err(WireError::Length {
            elems: ranks * elems,
            want: ranks * w,
            got: gathered.len(),
        });
    }
    let mut out = vec![0u8; elems * dtype.size_bytes()];
    reduce_wires(
        c,
        dtype,
        op,
        (0..ranks).map(|r| &gathered[r * w..(r + 1) * w]),
        &mut out,
    )?;
    Ok(out)
}

/// The reduction of [`once_reduce`]: decodes each of `wires` (rank order,
/// each [`wire_len`] bytes of `out.len() / dtype size` elements), reduces
/// them in f32 in that order and writes the result to `out` in `dtype`.
/// Blocks restart at every payload, so the elements `a..b` of every rank's
/// input (cut at a multiple of the block), encoded apart, reduce to the
/// elements `a..b` of [`once_reduce`]'s output: the reference builds it a
/// piece at a time that way.
///
/// Errors: [`WireError::Length`], [`WireError::NotFloat`],
/// [`WireError::Avg`].
pub fn reduce_wires<'a>(
    c: &Compression,
    dtype: DType,
    op: ReduceOp,
    wires: impl IntoIterator<Item = &'a [u8]>,
    out: &mut [u8],
) -> Result<(), WireError> {
    reducible(dtype, op)?;
    let elems = out.len() / dtype.size_bytes();
    let mut acc: Vec<f32> = Vec::new();
    for (r, wire) in wires.into_iter().enumerate() {
        let xs = decode_f32(c, wire, elems)?;
        if r == 0 {
            acc = xs;
            continue;
        }
        for (a, x) in acc.iter_mut().zip(xs) {
            *a = match op {
                ReduceOp::Sum | ReduceOp::Avg => *a + x,
                ReduceOp::Prod => *a * x,
                ReduceOp::Max => a.max(x),
                ReduceOp::Min => a.min(x),
            };
        }
    }
    from_f32(dtype, &acc, out);
    Ok(())
}

/// Can [`reduce_wires`] reduce `dtype` with `op`?
///
/// Errors: [`WireError::NotFloat`], [`WireError::Avg`].
fn reducible(dtype: DType, op: ReduceOp) -> Result<(), WireError> {
    if !dtype.is_float() {
        return Err(WireError::NotFloat(dtype));
    }
    if op == ReduceOp::Avg {
        return Err(WireError::Avg);
    }
    Ok(())
}

/// Checks that `setup` can run `primitive` on `dtype`.
///
/// Errors: [`WireError::NotFloat`], [`WireError::OnceNeedsAllReduce`].
pub fn check_applies(
    setup: &CompressedSetup,
    primitive: Primitive,
    dtype: DType,
    op: ReduceOp,
) -> Result<(), WireError> {
    if !dtype.is_float() {
        return Err(WireError::NotFloat(dtype));
    }
    if primitive.reduces() && op == ReduceOp::Avg {
        return Err(WireError::Avg);
    }
    if setup.placement == Placement::Once && primitive != Primitive::AllReduce {
        return Err(WireError::OnceNeedsAllReduce(primitive.name()));
    }
    Ok(())
}

/// Bytes every transfer of `schedule` puts on the wire for a message of
/// `elems` elements of `dtype`: `(uncompressed, compressed)` where the
/// compressed count applies [`wire_len`] to every transfer's payload.
pub fn schedule_wire_bytes(
    schedule: &Schedule,
    c: &Compression,
    dtype: DType,
    elems: usize,
) -> (u64, u64) {
    let es = dtype.size_bytes() as u64;
    let (mut raw, mut wire) = (0u64, 0u64);
    for t in schedule.steps.iter().flat_map(|s| &s.transfers) {
        let k = schedule.range_elems(elems, t.first, t.count).len();
        raw += k as u64 * es;
        wire += if c.scheme == Scheme::None {
            k as u64 * es
        } else {
            wire_len(c, k) as u64
        };
    }
    (raw, wire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::algorithm::{build, Algorithm};
    use crate::engine::check::tests::Outside;
    use crate::engine::quantization::ScaleType;

    fn int8(block: usize) -> Compression {
        Compression {
            scheme: Scheme::Int8,
            block,
            scale: ScaleType::Fp16,
        }
    }

    #[test]
    fn wire_format_is_codes_then_scales() {
        let c = int8(32);
        assert_eq!(wire_len(&c, 64), 64 + 2 * 2);
        assert_eq!(wire_len(&c, 65), 65 + 3 * 2);
        // fp32 payload [0.5, -1.0, 0.25]: scale = 1/127 (rounded to fp16).
        let xs = [0.5f32, -1.0, 0.25];
        let payload: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let wire = encode(&c, DType::Fp32, &payload).unwrap();
        assert_eq!(wire.len(), 3 + 2);
        let scale = half::f16::from_f32(1.0 / 127.0).to_f32();
        let codes: Vec<i8> = wire[..3].iter().map(|&b| b as i8).collect();
        assert_eq!(
            codes,
            vec![
                (0.5 / scale).round() as i8,
                -127,
                (0.25 / scale).round() as i8
            ]
        );
        assert_eq!(half::f16::from_le_bytes([wire[3], wire[4]]).to_f32(), scale);
        let mut out = vec![0u8; 12];
        decode(&c, DType::Fp32, &wire, &mut out).unwrap();
        let back: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(back[1], -127.0 * scale);
        assert_eq!(back[0], codes[0] as f32 * scale);
        assert!(matches!(
            decode(&c, DType::Fp32, &wire[..4], &mut out),
            Err(WireError::Length {
                elems: 3,
                want: 5,
                got: 4
            })
        ));
        assert_eq!(
            encode(&c, DType::Int32, &payload),
            Err(WireError::NotFloat(DType::Int32))
        );
    }

    fn setup(placement: Placement) -> CompressedSetup {
        CompressedSetup {
            compression: int8(256),
            placement,
            shape: GradientShape::Normal,
        }
    }

    #[test]
    fn hop_allreduce_error_and_wire_bytes_are_what_8_bit_blocks_give() {
        let n = 8;
        let elems = 1 << 16;
        let s = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let chk = CompressedCheck::prepare(
            &s,
            &s,
            &setup(Placement::Hop),
            DType::Fp16,
            ReduceOp::Sum,
            1,
            elems,
        )
        .unwrap();
        let r = &chk.report;
        // Ring AllReduce moves 2(n-1)/n · S per rank: 2·7·2^16·2 bytes in all.
        assert_eq!(r.uncompressed_bytes, 2 * 7 * (1 << 16) * 2);
        let ratio = r.wire_bytes as f64 / r.uncompressed_bytes as f64;
        let want = (1.0 + 2.0 / 256.0) / 2.0;
        assert!((ratio / want - 1.0).abs() < 0.01, "ratio {ratio} vs {want}");
        assert!(
            (0.001..0.05).contains(&r.stats.rel_l2_error),
            "rel L2 {}",
            r.stats.rel_l2_error
        );
        assert_eq!(r.stats.elements, n * elems);
    }

    #[test]
    fn once_has_less_error_and_more_bytes_than_hop() {
        let n = 8;
        let elems = 1 << 14;
        let ar = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let ag = build(Algorithm::Ring, Primitive::AllGather, n).unwrap();
        let hop = CompressedCheck::prepare(
            &ar,
            &ar,
            &setup(Placement::Hop),
            DType::Fp16,
            ReduceOp::Sum,
            3,
            elems,
        )
        .unwrap();
        let once = CompressedCheck::prepare(
            &ar,
            &ag,
            &setup(Placement::Once),
            DType::Fp16,
            ReduceOp::Sum,
            3,
            elems,
        )
        .unwrap();
        assert!(once.report.stats.rel_l2_error < hop.report.stats.rel_l2_error);
        assert!(once.report.wire_bytes > hop.report.wire_bytes);
        // Once: ring AllGather of n blocks of wire_len(S) bytes: (n-1)·n·W.
        let w = wire_len(&int8(256), elems) as u64;
        assert_eq!(once.report.wire_bytes, 7 * 8 * w);
        // Every rank holds the same result.
        assert!(once.outputs.iter().all(|o| o == &once.outputs[0]));
        // A wrong output is found.
        let mut bad = once.outputs[2].clone();
        bad[10] ^= 1;
        let (m, checked, first) = once.compare(2, &bad);
        assert_eq!((m, checked), (1, elems));
        assert_eq!(first.map(|f| f.0), Some(5));
        assert_eq!(once.compare(2, &once.outputs[2]).0, 0);
    }

    /// A comparison a piece at a time finds every changed element of a
    /// 150 000-element output (three pieces), reports the first, and
    /// counts a wrong-length buffer as all mismatched.
    #[test]
    fn a_comparison_in_pieces_finds_every_mismatch() {
        let (n, elems) = (2, 150_000);
        let ar = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let k = CompressedCheck::prepare(
            &ar,
            &ar,
            &setup(Placement::Hop),
            DType::Fp32,
            ReduceOp::Sum,
            4,
            elems,
        )
        .unwrap();
        let mut out = k.outputs[1].clone();
        for e in [10, 70_000, 149_999] {
            out[e * 4] ^= 1;
        }
        let got = DType::Fp32.read_f64(&out, 10);
        let want = DType::Fp32.read_f64(&k.outputs[1], 10);
        // Read by copies, as the page reads a worker's buffer.
        let copied = Outside(out.clone(), std::cell::Cell::new(0));
        let mut c = k.begin(1);
        let mut pieces = 0;
        while {
            pieces += 1;
            !k.advance(&mut c, &copied)
        } {}
        assert_eq!(pieces, 3);
        assert_eq!((c.mismatched, c.checked), (3, elems));
        assert_eq!(c.first, Some((10, got, want)));
        assert_eq!(k.compare(1, &out), (3, elems, Some((10, got, want))));
        assert_eq!(k.compare(1, &k.outputs[1]), (0, elems, None));
        assert_eq!(k.compare(1, &out[4..]), (elems, elems, None));
    }

    #[test]
    fn modelled_time_is_compressed_transfers_plus_codec_work() {
        use crate::engine::topology::Topology;
        let topo = Topology::preset("910b-8").unwrap();
        let n = 8;
        let bytes = 16u64 << 20;
        let ar = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let ag = build(Algorithm::Ring, Primitive::AllGather, n).unwrap();
        let hop = estimate(
            &ar,
            &ar,
            &setup(Placement::Hop),
            &topo,
            bytes,
            DType::Fp16,
            crate::engine::cost::Slices::Fixed(1),
        )
        .unwrap();
        // Ring: 14 steps of S/8 per link; compressed ≈ half the bytes.
        let plain = crate::engine::cost::estimate(&ar, &topo, bytes, DType::Fp16).unwrap();
        assert_eq!(hop.uncompressed_us, plain.time_us);
        let ratio = hop.wire_bytes as f64 / hop.uncompressed_bytes as f64;
        let alpha_us = 14.0 * topo.links[0].latency_us;
        let beta_us = plain.time_us - alpha_us;
        assert!((hop.transfer_us - (alpha_us + beta_us * ratio)).abs() < 1e-6 * plain.time_us);
        // Each step every rank encodes S/8 and decodes S/8 (fp16 bytes).
        let codec = 14.0 * 2.0 * (bytes / 8) as f64 / (CODEC_GBPS * 1e3);
        assert!((hop.codec_us - codec).abs() < 1e-9);
        assert_eq!(hop.time_us, hop.transfer_us + hop.codec_us);
        assert!(hop.time_change() < -0.3, "{}", hop.time_change());
        let once = estimate(
            &ar,
            &ag,
            &setup(Placement::Once),
            &topo,
            bytes,
            DType::Fp16,
            crate::engine::cost::Slices::Fixed(1),
        )
        .unwrap();
        assert!(once.wire_bytes > hop.wire_bytes);
        assert_eq!(
            once.codec_us,
            (1 + 8 + 7) as f64 * bytes as f64 / (CODEC_GBPS * 1e3)
        );
        assert_eq!(once.estimate.bytes, bytes);
    }

    #[test]
    fn once_is_refused_for_other_primitives_and_int_dtypes() {
        let s = setup(Placement::Once);
        assert_eq!(
            check_applies(&s, Primitive::AllGather, DType::Fp16, ReduceOp::Sum),
            Err(WireError::OnceNeedsAllReduce("allgather"))
        );
        assert_eq!(
            check_applies(
                &setup(Placement::Hop),
                Primitive::AllGather,
                DType::Int32,
                ReduceOp::Sum
            ),
            Err(WireError::NotFloat(DType::Int32))
        );
        assert_eq!(
            check_applies(
                &setup(Placement::Hop),
                Primitive::AllReduce,
                DType::Fp16,
                ReduceOp::Avg
            ),
            Err(WireError::Avg)
        );
    }
}
