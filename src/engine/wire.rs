//! The wire codec of compressed transfers (the what-if of
//! [`super::quantization`]; HCCL and NCCL have none): a payload of `k`
//! elements of a float dtype travels as `k` one-byte codes followed by
//! `ceil(k / block)` scales (little-endian fp16 or fp32, see
//! [`ScaleType`]): [`wire_len`] bytes. Blocks restart at every payload.
//! A leaf: the executor, the workers and [`super::compressed`] all call it.

use super::dtype::DType;
use super::quantization::{dequantize, quantize, Compression, Quantized, ScaleType, Scheme};
use thiserror::Error;

/// Why a compressed payload or run cannot be processed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum WireError {
    /// Compression needs a float dtype.
    #[error("compression applies to fp32, fp16 and bf16 data, not {0}")]
    NotFloat(DType),
    /// A payload's length is not the codec's length for its element count.
    #[error("a compressed payload of {elems} elements must be {want} bytes, got {got}")]
    Length {
        elems: usize,
        want: usize,
        got: usize,
    },
    /// `placement=once` is defined for AllReduce only.
    #[error(
        "placement=once is defined for AllReduce (quantise, AllGather, reduce locally), not {0}"
    )]
    OnceNeedsAllReduce(&'static str),
    /// The compression what-if models sum, prod, max and min; NCCL's `avg`
    /// pre-scales each contribution before it is quantised, which is not
    /// modelled.
    #[error("the compression what-if models redop sum, prod, max or min, not avg")]
    Avg,
}

/// Bytes on the wire for a payload of `elems` elements (module docs):
/// `elems + ceil(elems / block) · scale bytes`.
pub fn wire_len(c: &Compression, elems: usize) -> usize {
    elems + elems.div_ceil(c.block.max(1)) * c.scale.bytes() as usize
}

fn to_f32(dtype: DType, payload: &[u8]) -> Result<Vec<f32>, WireError> {
    Ok(match dtype {
        DType::Fp32 => payload
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        DType::Fp16 => payload
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        DType::Bf16 => payload
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        d => return Err(WireError::NotFloat(d)),
    })
}

/// Writes `xs` into `out` in `dtype` (round to nearest even for fp16/bf16).
/// Shape: `out.len() == xs.len() · dtype size`.
pub(crate) fn from_f32(dtype: DType, xs: &[f32], out: &mut [u8]) {
    match dtype {
        DType::Fp32 => out
            .chunks_exact_mut(4)
            .zip(xs)
            .for_each(|(o, x)| o.copy_from_slice(&x.to_le_bytes())),
        DType::Fp16 => out
            .chunks_exact_mut(2)
            .zip(xs)
            .for_each(|(o, x)| o.copy_from_slice(&half::f16::from_f32(*x).to_le_bytes())),
        DType::Bf16 => out
            .chunks_exact_mut(2)
            .zip(xs)
            .for_each(|(o, x)| o.copy_from_slice(&half::bf16::from_f32(*x).to_le_bytes())),
        DType::Int32 | DType::Int8 => {}
    }
}

/// Encodes a payload (whole elements of a float `dtype`) to its wire bytes
/// ([`wire_len`] long; a copy for [`Scheme::None`]).
///
/// Errors: [`WireError::NotFloat`].
pub fn encode(c: &Compression, dtype: DType, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    if c.scheme == Scheme::None {
        return Ok(payload.to_vec());
    }
    let q = quantize(c, &to_f32(dtype, payload)?);
    let mut wire = q.codes;
    wire.reserve(q.scales.len() * c.scale.bytes() as usize);
    for s in q.scales {
        match c.scale {
            ScaleType::Fp16 => wire.extend_from_slice(&half::f16::from_f32(s).to_le_bytes()),
            ScaleType::Fp32 => wire.extend_from_slice(&s.to_le_bytes()),
        }
    }
    Ok(wire)
}

/// Decodes `elems` elements from `wire` to f32 values.
///
/// Errors: [`WireError::Length`] if `wire` is not [`wire_len`] bytes.
pub fn decode_f32(c: &Compression, wire: &[u8], elems: usize) -> Result<Vec<f32>, WireError> {
    let want = wire_len(c, elems);
    if wire.len() != want {
        return Err(WireError::Length {
            elems,
            want,
            got: wire.len(),
        });
    }
    let (codes, scale_bytes) = wire.split_at(elems);
    let scales = match c.scale {
        ScaleType::Fp16 => scale_bytes
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        ScaleType::Fp32 => scale_bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    };
    Ok(dequantize(
        c,
        &Quantized {
            codes: codes.to_vec(),
            scales,
        },
    ))
}

/// Decodes `wire` into `out` (`elems · dtype size` bytes of `dtype`; a copy
/// for [`Scheme::None`]).
///
/// Errors: [`WireError::Length`], [`WireError::NotFloat`].
pub fn decode(c: &Compression, dtype: DType, wire: &[u8], out: &mut [u8]) -> Result<(), WireError> {
    let elems = out.len() / dtype.size_bytes();
    if c.scheme == Scheme::None {
        if wire.len() != out.len() {
            return Err(WireError::Length {
                elems,
                want: out.len(),
                got: wire.len(),
            });
        }
        out.copy_from_slice(wire);
        return Ok(());
    }
    if !dtype.is_float() {
        return Err(WireError::NotFloat(dtype));
    }
    let xs = decode_f32(c, wire, elems)?;
    from_f32(dtype, &xs, out);
    Ok(())
}
