//! Block quantisation for the compression what-if (INT8, FP8 E4M3, FP8 E5M2),
//! its wire size and its error statistics.
//!
//! **A what-if.** HCCL has no gradient-compression API (its C API,
//! `include/hccl.h`, reduces full-precision buffers only); NCCL has none
//! either. This module models what a framework-level compressor (e.g. a
//! PyTorch DDP communication hook) would do around the collective.
//!
//! ## Scheme
//! The buffer is cut into blocks of `block` elements. Each block stores one
//! scale (fp16 or fp32, see [`ScaleType`]) and one 8-bit code per element:
//! - `int8`: symmetric, `scale = max|x| / 127`, `code = round_half_even(x /
//!   scale)` clamped to `[-127, 127]`, `x' = code · scale`;
//! - `fp8e4m3` / `fp8e5m2`: `scale = max|x| / FP8_MAX`, `code = fp8(x / scale)`
//!   (round to nearest even, saturating at the largest finite value),
//!   `x' = fp8⁻¹(code) · scale`. Formats per the OCP 8-bit Floating Point
//!   Specification (OFP8) rev 1.0, 2023: E4M3 bias 7, no infinities, max 448;
//!   E5M2 bias 15, IEEE-like with infinities, max 57344.
//!
//! The scale is rounded to its storage type *before* quantising, so encoder
//! and decoder agree. An fp16 scale underflows for blocks whose `max|x| /
//! 127` is below 2^-24 ≈ 6e-8: the whole block is then flushed to zero — the
//! failure that matters for small gradients, counted by
//! [`ErrorStats::flushed_fraction`].

use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// The quantisation scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// No compression.
    None,
    /// Symmetric 8-bit integers, one scale per block.
    Int8,
    /// OCP FP8 E4M3 (max 448), one scale per block.
    Fp8e4m3,
    /// OCP FP8 E5M2 (max 57344), one scale per block.
    Fp8e5m2,
}

impl Scheme {
    /// Every scheme, in UI order.
    pub const ALL: [Scheme; 4] = [Scheme::None, Scheme::Int8, Scheme::Fp8e4m3, Scheme::Fp8e5m2];

    /// URL name (`none`, `int8`, `fp8e4m3`, `fp8e5m2`).
    pub fn name(self) -> &'static str {
        match self {
            Scheme::None => "none",
            Scheme::Int8 => "int8",
            Scheme::Fp8e4m3 => "fp8e4m3",
            Scheme::Fp8e5m2 => "fp8e5m2",
        }
    }

    /// Parses a [`Scheme::name`].
    pub fn from_name(s: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|x| x.name() == s)
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a block's scale is stored on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleType {
    /// IEEE binary16: 2 bytes per block; underflows below 2^-24.
    Fp16,
    /// IEEE binary32: 4 bytes per block.
    Fp32,
}

impl ScaleType {
    /// Bytes per stored scale.
    pub fn bytes(self) -> u64 {
        match self {
            ScaleType::Fp16 => 2,
            ScaleType::Fp32 => 4,
        }
    }

    fn round(self, s: f32) -> f32 {
        match self {
            ScaleType::Fp16 => half::f16::from_f32(s).to_f32(),
            ScaleType::Fp32 => s,
        }
    }
}

/// Smallest and largest block size, elements.
pub const BLOCK_RANGE: std::ops::RangeInclusive<usize> = 32..=4096;

/// A compression configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compression {
    /// The scheme.
    pub scheme: Scheme,
    /// Elements per block (32..=4096; default 256).
    pub block: usize,
    /// Scale storage.
    pub scale: ScaleType,
}

impl Default for Compression {
    fn default() -> Self {
        Compression {
            scheme: Scheme::None,
            block: 256,
            scale: ScaleType::Fp16,
        }
    }
}

/// An invalid compression setting.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CompressError {
    /// Block size out of range.
    #[error("block={0}: allowed 32..=4096 elements")]
    Block(usize),
}

impl Compression {
    /// Checks the block size.
    ///
    /// Errors: [`CompressError::Block`].
    pub fn validate(&self) -> Result<(), CompressError> {
        if !BLOCK_RANGE.contains(&self.block) {
            return Err(CompressError::Block(self.block));
        }
        Ok(())
    }

    /// Bytes on the wire for `elems` elements whose uncompressed element
    /// size is `elem_bytes`: one byte per element plus one scale per block
    /// (or `elems · elem_bytes` for [`Scheme::None`]).
    pub fn wire_bytes(&self, elems: u64, elem_bytes: u64) -> u64 {
        match self.scheme {
            Scheme::None => elems * elem_bytes,
            _ => elems + elems.div_ceil(self.block.max(1) as u64) * self.scale.bytes(),
        }
    }
}

/// An OCP 8-bit floating-point format (see module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Format {
    /// Exponent bits.
    pub exp_bits: u32,
    /// Mantissa bits.
    pub man_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// IEEE-like infinities (E5M2) or not (E4M3: only S.1111.111 is NaN).
    pub ieee_special: bool,
}

/// OCP E4M3: bias 7, max 448, no infinities.
pub const E4M3: Fp8Format = Fp8Format {
    exp_bits: 4,
    man_bits: 3,
    bias: 7,
    ieee_special: false,
};
/// OCP E5M2: bias 15, max 57344, infinities and NaNs as IEEE.
pub const E5M2: Fp8Format = Fp8Format {
    exp_bits: 5,
    man_bits: 2,
    bias: 15,
    ieee_special: true,
};

impl Fp8Format {
    /// Decodes a code to f32 (NaN for NaN codes, ±inf for E5M2 infinities).
    pub fn decode(self, code: u8) -> f32 {
        let sign = if code & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let e = ((code >> self.man_bits) & ((1 << self.exp_bits) - 1)) as i32;
        let m = (code & ((1 << self.man_bits) - 1)) as i32;
        let emax = (1 << self.exp_bits) - 1;
        if self.ieee_special && e == emax {
            return if m == 0 {
                sign * f32::INFINITY
            } else {
                f32::NAN
            };
        }
        if !self.ieee_special && e == emax && m == (1 << self.man_bits) - 1 {
            return f32::NAN;
        }
        let frac = m as f32 / (1 << self.man_bits) as f32;
        if e == 0 {
            sign * frac * 2f32.powi(1 - self.bias)
        } else {
            sign * (1.0 + frac) * 2f32.powi(e - self.bias)
        }
    }

    /// Largest finite value (448 for E4M3, 57344 for E5M2).
    pub fn max(self) -> f32 {
        self.decode(self.max_code())
    }

    fn max_code(self) -> u8 {
        if self.ieee_special {
            // Exponent all ones is special: largest is emax-1 with full mantissa.
            ((((1u32 << self.exp_bits) - 2) << self.man_bits) | ((1 << self.man_bits) - 1)) as u8
        } else {
            // S.1111.110
            ((((1u32 << self.exp_bits) - 1) << self.man_bits) | ((1 << self.man_bits) - 2)) as u8
        }
    }

    /// Encodes `x` to the nearest code (ties to even), saturating to ±max;
    /// NaN maps to the canonical NaN.
    pub fn encode(self, x: f32) -> u8 {
        if x.is_nan() {
            // S.1111.111 is NaN in both E4M3 and E5M2.
            return 0x7F;
        }
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        let a = x.abs();
        let maxc = self.max_code();
        if a >= self.max() {
            return sign | maxc;
        }
        // Positive codes 0..=maxc are monotonic in value: binary search.
        let (mut lo, mut hi) = (0u8, maxc);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.decode(mid) <= a {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let (vl, vh) = (self.decode(lo), self.decode(hi));
        let code = if a - vl < vh - a || (a - vl == vh - a && lo % 2 == 0) {
            lo
        } else {
            hi
        };
        if code == 0 {
            0 // no negative zero on the wire
        } else {
            sign | code
        }
    }
}

/// Quantised data: one code per element and one (stored) scale per block.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    /// One code per element.
    pub codes: Vec<u8>,
    /// One scale per block, already rounded to its storage type.
    pub scales: Vec<f32>,
}

fn fp8_format(s: Scheme) -> Option<Fp8Format> {
    match s {
        Scheme::Fp8e4m3 => Some(E4M3),
        Scheme::Fp8e5m2 => Some(E5M2),
        _ => None,
    }
}

/// Quantises `x` with `c` (see module docs). For [`Scheme::None`] the codes
/// are empty and [`dequantize`] is not meaningful; use the data as is.
pub fn quantize(c: &Compression, x: &[f32]) -> Quantized {
    let block = c.block.max(1);
    let mut codes = Vec::with_capacity(x.len());
    let mut scales = Vec::with_capacity(x.len().div_ceil(block));
    let qmax = match c.scheme {
        Scheme::None => return Quantized { codes, scales },
        Scheme::Int8 => 127.0f32,
        s => fp8_format(s).map_or(1.0, |f| f.max()),
    };
    for chunk in x.chunks(block) {
        let amax = chunk.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = c.scale.round(amax / qmax);
        scales.push(scale);
        for &v in chunk {
            let code = if scale == 0.0 || !scale.is_finite() {
                0
            } else {
                match c.scheme {
                    Scheme::Int8 => (v / scale).round_ties_even().clamp(-127.0, 127.0) as i8 as u8,
                    s => fp8_format(s).map_or(0, |f| f.encode(v / scale)),
                }
            };
            codes.push(code);
        }
    }
    Quantized { codes, scales }
}

/// Reconstructs values from [`quantize`]'s output (`x' = code · scale`).
pub fn dequantize(c: &Compression, q: &Quantized) -> Vec<f32> {
    let block = c.block.max(1);
    q.codes
        .iter()
        .enumerate()
        .map(|(i, &code)| {
            let s = q.scales.get(i / block).copied().unwrap_or(0.0);
            match c.scheme {
                Scheme::None => 0.0,
                Scheme::Int8 => code as i8 as f32 * s,
                sch => fp8_format(sch).map_or(0.0, |f| f.decode(code)) * s,
            }
        })
        .collect()
}

/// `dequantize(quantize(x))`; `x` itself for [`Scheme::None`].
pub fn round_trip(c: &Compression, x: &[f32]) -> Vec<f32> {
    if c.scheme == Scheme::None {
        return x.to_vec();
    }
    dequantize(c, &quantize(c, x))
}

/// Error of an approximation against the exact values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorStats {
    /// Elements compared.
    pub elements: usize,
    /// max |approx − exact|.
    pub max_abs_error: f64,
    /// sqrt(mean (approx − exact)²).
    pub rmse: f64,
    /// ‖approx − exact‖₂ / ‖exact‖₂ (0 if exact is all zero).
    pub rel_l2_error: f64,
    /// Fraction of nonzero exact elements that came out exactly zero.
    pub flushed_fraction: f64,
}

/// Error statistics of `approx` against `exact` (equal lengths; extra
/// elements of the longer one are ignored).
pub fn error_stats(exact: &[f64], approx: &[f64]) -> ErrorStats {
    let n = exact.len().min(approx.len());
    let (mut max_abs, mut se, mut ne, mut nonzero, mut flushed) =
        (0.0f64, 0.0f64, 0.0f64, 0usize, 0usize);
    for (&e, &a) in exact.iter().zip(approx).take(n) {
        let d = a - e;
        max_abs = max_abs.max(d.abs());
        se += d * d;
        ne += e * e;
        if e != 0.0 {
            nonzero += 1;
            if a == 0.0 {
                flushed += 1;
            }
        }
    }
    ErrorStats {
        elements: n,
        max_abs_error: max_abs,
        rmse: if n > 0 { (se / n as f64).sqrt() } else { 0.0 },
        rel_l2_error: if ne > 0.0 { (se / ne).sqrt() } else { 0.0 },
        flushed_fraction: if nonzero > 0 {
            flushed as f64 / nonzero as f64
        } else {
            0.0
        },
    }
}

/// Distributions of gradient-like inputs. Uniform noise hides the failure
/// that matters (small values flushed to zero), so these mimic gradients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GradientShape {
    /// N(0, 1e-3²).
    Normal,
    /// Student-t with 3 degrees of freedom × 1e-3: rare large outliers
    /// inflate the block scale and crush the rest of the block.
    HeavyTailed,
    /// Normal, with the scale changing every 4096 elements ("layers")
    /// through 1e-2, 1e-3, ..., 1e-8.
    Layered,
}

fn uniform01(seed: u64, rank: usize, i: u64) -> f64 {
    let mut z = seed
        ^ (rank as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)
        ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

fn normal(seed: u64, rank: usize, i: u64) -> f64 {
    // Box-Muller on two counter-based uniforms.
    let (u, v) = (
        uniform01(seed, rank, 2 * i),
        uniform01(seed, rank, 2 * i + 1),
    );
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Rank `rank`'s `n` gradient-like values (deterministic in `seed`).
pub fn gradients(shape: GradientShape, seed: u64, rank: usize, n: usize) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let v = match shape {
                GradientShape::Normal => 1e-3 * normal(seed, rank, i),
                GradientShape::HeavyTailed => {
                    let z = normal(seed, rank, i);
                    let chi2: f64 = (1..=3)
                        .map(|k| normal(seed ^ (k * 0x5555), rank, i).powi(2))
                        .sum();
                    1e-3 * z / (chi2 / 3.0).sqrt()
                }
                GradientShape::Layered => {
                    let layer = (i / 4096) % 7;
                    10f64.powi(-2 - layer as i32) * normal(seed, rank, i)
                }
            };
            v as f32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_round_trip_on_fixed_values() {
        let c = Compression {
            scheme: Scheme::Int8,
            block: 32,
            scale: ScaleType::Fp32,
        };
        let q = quantize(&c, &[1.0, -0.5, 0.25, 0.0]);
        assert_eq!(q.scales, vec![1.0 / 127.0]);
        // -63.5 rounds to even (-64), 31.75 to 32.
        assert_eq!(q.codes, vec![127, (-64i8) as u8, 32, 0]);
        let x = dequantize(&c, &q);
        assert_eq!(x, vec![1.0, -64.0 / 127.0, 32.0 / 127.0, 0.0]);
    }

    #[test]
    fn fp8_formats_match_ocp() {
        assert_eq!(E4M3.max(), 448.0);
        assert_eq!(E5M2.max(), 57344.0);
        assert!(E4M3.decode(0x7F).is_nan());
        assert_eq!(E5M2.decode(0x7C), f32::INFINITY);
        assert_eq!(E4M3.decode(0x01), 2f32.powi(-9)); // smallest subnormal
        assert_eq!(E5M2.decode(0x01), 2f32.powi(-16));
        assert_eq!(E4M3.encode(448.0), 0x7E);
        assert_eq!(E4M3.encode(1000.0), 0x7E); // saturates
        assert_eq!(E4M3.encode(-1.0), 0xB8);
        assert_eq!(E4M3.encode(1.0), 0x38);
        // 1.0625 lies halfway between 1.0 (mantissa 000) and 1.125 (001): ties to even.
        assert_eq!(E4M3.encode(1.0625), 0x38);
        assert_eq!(E4M3.encode(2f32.powi(-11)), 0); // below half the smallest subnormal
        for code in 0..=0x7Eu8 {
            assert_eq!(E4M3.encode(E4M3.decode(code)), code, "E4M3 code {code:#x}");
        }
        for code in 0..=0x7Bu8 {
            assert_eq!(E5M2.encode(E5M2.decode(code)), code, "E5M2 code {code:#x}");
        }
    }

    #[test]
    fn wire_bytes_count_scales() {
        let c = Compression {
            scheme: Scheme::Int8,
            block: 256,
            scale: ScaleType::Fp16,
        };
        let elems = 8u64 << 20; // 16 MiB of fp16
        let w = c.wire_bytes(elems, 2);
        assert_eq!(w, elems + elems / 256 * 2);
        let ratio = w as f64 / (elems * 2) as f64;
        assert!((ratio - (1.0 + 2.0 / 256.0) / 2.0).abs() < 1e-12);
        assert_eq!(Compression::default().wire_bytes(10, 2), 20);
        assert_eq!(
            Compression { block: 16, ..c }.validate(),
            Err(CompressError::Block(16))
        );
    }

    #[test]
    fn int8_on_normal_gradients_errs_about_half_a_percent() {
        let c = Compression {
            scheme: Scheme::Int8,
            block: 256,
            scale: ScaleType::Fp16,
        };
        let x = gradients(GradientShape::Normal, 3, 0, 1 << 16);
        let y = round_trip(&c, &x);
        let s = error_stats(
            &x.iter().map(|v| *v as f64).collect::<Vec<_>>(),
            &y.iter().map(|v| *v as f64).collect::<Vec<_>>(),
        );
        assert!(s.rel_l2_error > 1e-3 && s.rel_l2_error < 2e-2, "{s:?}");
        assert!(s.flushed_fraction < 0.02, "{s:?}");
    }

    #[test]
    fn fp16_scales_flush_tiny_layers() {
        let x = gradients(GradientShape::Layered, 5, 0, 7 * 4096);
        let exact: Vec<f64> = x.iter().map(|v| *v as f64).collect();
        let f16 = Compression {
            scheme: Scheme::Int8,
            block: 256,
            scale: ScaleType::Fp16,
        };
        let f32s = Compression {
            scale: ScaleType::Fp32,
            ..f16
        };
        let a = error_stats(
            &exact,
            &round_trip(&f16, &x)
                .iter()
                .map(|v| *v as f64)
                .collect::<Vec<_>>(),
        );
        let b = error_stats(
            &exact,
            &round_trip(&f32s, &x)
                .iter()
                .map(|v| *v as f64)
                .collect::<Vec<_>>(),
        );
        // The 1e-7 and 1e-8 layers (2 of 7) have max|x|/127 below fp16's 6e-8.
        assert!(a.flushed_fraction > 0.25, "{a:?}");
        assert!(b.flushed_fraction < 0.02, "{b:?}");
    }

    #[test]
    fn error_stats_on_fixed_values() {
        let s = error_stats(&[1.0, 2.0, 0.0, 4.0], &[1.0, 0.0, 0.0, 3.0]);
        assert_eq!(s.max_abs_error, 2.0);
        assert!((s.rmse - (5.0f64 / 4.0).sqrt()).abs() < 1e-15);
        assert!((s.rel_l2_error - (5.0f64 / 21.0).sqrt()).abs() < 1e-15);
        assert!((s.flushed_fraction - 1.0 / 3.0).abs() < 1e-15);
    }
}
