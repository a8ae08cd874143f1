//! Block quantisation for the compression what-if (INT8, FP8 E4M3, FP8 E5M2),
//! its wire size and its error statistics.
//!
//! **A what-if.** HCCL has no gradient-compression API (its C API,
//! `include/hccl.h`, reduces the buffers it is given in their own data
//! type; there is no quantising codec); NCCL has none either. This module
//! models what a framework-level compressor (e.g. a PyTorch DDP
//! communication hook) would do around the collective.
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
//! and decoder agree. An fp16 scale rounds to 0 when `max|x| / qmax` is
//! below 2^-25 (half the smallest fp16 subnormal), i.e. for blocks with
//! `max|x|` below 2^-25 · qmax: ≈ 3.8e-6 for int8 (qmax 127), ≈ 1.3e-5 for
//! E4M3 (448), ≈ 1.7e-3 for E5M2 (57344). Such a block is flushed to zero
//! whole — the failure that matters for small gradients, counted by
//! [`ErrorStats::flushed_fraction`]; an fp32 scale avoids it.

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

    /// The largest code magnitude the scale maps `max|x|` to: 127 (int8),
    /// 448 (E4M3), 57344 (E5M2); 0 for none.
    pub fn qmax(self) -> f32 {
        match self {
            Scheme::None => 0.0,
            Scheme::Int8 => 127.0,
            s => fp8_format(s).map_or(0.0, |f| f.max()),
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
    /// URL name (`fp16`, `fp32`).
    pub fn name(self) -> &'static str {
        match self {
            ScaleType::Fp16 => "fp16",
            ScaleType::Fp32 => "fp32",
        }
    }

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
    /// Decodes a code to f32 (NaN for NaN codes, ±inf for E5M2 infinities):
    /// a look-up in the format's table of 256 values for [`E4M3`] and
    /// [`E5M2`] (made once by [`Fp8Format::decode_formula`]; `2^e` by
    /// `powi` per element made the fp8 codec ~0.3 µs an element, the
    /// compressed reference of 8 × 32 MiB fp16 a minute), the formula for
    /// any other format.
    #[inline]
    pub fn decode(self, code: u8) -> f32 {
        match self.table() {
            Some(t) => t[code as usize],
            None => self.decode_formula(code),
        }
    }

    /// The 256 decoded codes of an OCP format ([`E4M3`], [`E5M2`]), made
    /// on first use; `None` for another format.
    fn table(self) -> Option<&'static [f32; 256]> {
        static TABLE_E4M3: std::sync::OnceLock<[f32; 256]> = std::sync::OnceLock::new();
        static TABLE_E5M2: std::sync::OnceLock<[f32; 256]> = std::sync::OnceLock::new();
        let cell = if self == E4M3 {
            &TABLE_E4M3
        } else if self == E5M2 {
            &TABLE_E5M2
        } else {
            return None;
        };
        Some(cell.get_or_init(|| std::array::from_fn(|c| self.decode_formula(c as u8))))
    }

    /// Decodes a code by the format's definition (sign, biased exponent,
    /// mantissa; OCP 8-bit Floating Point Specification rev 1.0, 2023).
    pub fn decode_formula(self, code: u8) -> f32 {
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
    /// NaN maps to the canonical NaN. Arithmetic on the f32's bits
    /// ([`Fp8Encoder`]); a test holds it to the search over decoded codes
    /// (`encode_by`) at every code, tie and neighbouring ulp.
    #[inline]
    pub fn encode(self, x: f32) -> u8 {
        Fp8Encoder::new(self).encode(x)
    }

    /// Encoding by definition: the nearest of the decoded codes found by
    /// binary search (`decode` gives each code's value), ties to the even
    /// code. The reference [`Fp8Encoder`] is tested against (natively the
    /// two measure the same speed; the arithmetic one needs no table).
    #[cfg(test)]
    fn encode_by(self, x: f32, decode: impl Fn(u8) -> f32) -> u8 {
        if x.is_nan() {
            // S.1111.111 is NaN in both E4M3 and E5M2.
            return 0x7F;
        }
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        let a = x.abs();
        let maxc = self.max_code();
        if a >= decode(maxc) {
            return sign | maxc;
        }
        // Positive codes 0..=maxc are monotonic in value: binary search.
        let (mut lo, mut hi) = (0u8, maxc);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if decode(mid) <= a {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let (vl, vh) = (decode(lo), decode(hi));
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

/// Round-to-nearest-even encoding of f32 into one [`Fp8Format`], its
/// constants computed once (what [`quantize`] uses per block).
///
/// How: `|x| ≥ max` saturates to the largest finite code; a normal value
/// (`|x| ≥ 2^(1−bias)`) is the f32's bits re-biased to the format's
/// exponent bias and shifted right by `23 − man_bits` with the usual RNE
/// increment (`half − 1 + lsb`), a mantissa carry rolling into the
/// exponent as it should; a subnormal is `|x| · 2^(man_bits − 1 + bias)`
/// rounded to an integer (exact: a power-of-two scale), whose top value
/// `2^man_bits` is the smallest normal's code. Zero is never negative on
/// the wire; NaN is the canonical S.1111.111. Requires `man_bits ≤ 22` and
/// the format's exponents within f32's normal range (true of E4M3, E5M2).
#[derive(Clone, Copy, Debug)]
pub struct Fp8Encoder {
    max: f32,
    max_code: u8,
    min_normal: f32,
    subnormal_scale: f32,
    rebias: u32,
    shift: u32,
}

impl Fp8Encoder {
    /// The encoder of `f`.
    pub fn new(f: Fp8Format) -> Self {
        let pow2 = |k: i32| f32::from_bits(((k + 127) as u32) << 23);
        Self {
            max: f.max(),
            max_code: f.max_code(),
            min_normal: pow2(1 - f.bias),
            subnormal_scale: pow2(f.man_bits as i32 - 1 + f.bias),
            rebias: ((127 - f.bias) as u32) << 23,
            shift: 23 - f.man_bits,
        }
    }

    /// The code of `x` (see the type's docs).
    #[inline]
    pub fn encode(&self, x: f32) -> u8 {
        if x.is_nan() {
            return 0x7F;
        }
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        let a = x.abs();
        if a >= self.max {
            return sign | self.max_code;
        }
        let code = if a < self.min_normal {
            round_ties_even(a * self.subnormal_scale) as u32
        } else {
            let v = a.to_bits() - self.rebias;
            let half = 1u32 << (self.shift - 1);
            (v + half - 1 + ((v >> self.shift) & 1)) >> self.shift
        };
        if code == 0 {
            0
        } else {
            sign | code as u8
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
    let qmax = match c.scheme {
        Scheme::None => {
            return Quantized {
                codes: Vec::new(),
                scales: Vec::new(),
            }
        }
        Scheme::Int8 => 127.0f32,
        s => fp8_format(s).map_or(1.0, |f| f.max()),
    };
    let mut codes = vec![0u8; x.len()];
    let mut scales = Vec::with_capacity(x.len().div_ceil(block));
    // The fp8 encoder, its constants made once per call.
    let fp8 = fp8_format(c.scheme).map(Fp8Encoder::new);
    for (chunk, out) in x.chunks(block).zip(codes.chunks_mut(block)) {
        let amax = chunk.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = c.scale.round(amax / qmax);
        scales.push(scale);
        if scale == 0.0 || !scale.is_finite() {
            continue; // codes stay 0
        }
        match c.scheme {
            Scheme::Int8 => {
                for (o, &v) in out.iter_mut().zip(chunk) {
                    *o = round_ties_even(v / scale).clamp(-127.0, 127.0) as i8 as u8;
                }
            }
            _ => {
                if let Some(e) = &fp8 {
                    for (o, &v) in out.iter_mut().zip(chunk) {
                        *o = e.encode(v / scale);
                    }
                }
            }
        }
    }
    Quantized { codes, scales }
}

/// Round half to even, as `f32::round_ties_even`, written with the
/// 1.5 · 2^23 trick (exact for |x| < 2^22 under IEEE round-to-nearest-even;
/// larger values are already integers), because the library call is not
/// inlined on baseline x86-64. A test compares the two.
#[inline]
fn round_ties_even(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2^23
    if x.abs() < 4_194_304.0 {
        (x + MAGIC) - MAGIC
    } else {
        x
    }
}

/// Reconstructs values from [`quantize`]'s output (`x' = code · scale`).
pub fn dequantize(c: &Compression, q: &Quantized) -> Vec<f32> {
    let block = c.block.max(1);
    let mut out = vec![0.0f32; q.codes.len()];
    let table: Option<[f32; 256]> =
        fp8_format(c.scheme).map(|f| std::array::from_fn(|k| f.decode(k as u8)));
    for (i, (o, codes)) in out.chunks_mut(block).zip(q.codes.chunks(block)).enumerate() {
        let s = q.scales.get(i).copied().unwrap_or(0.0);
        match (c.scheme, &table) {
            (Scheme::None, _) => {}
            (Scheme::Int8, _) => {
                for (o, &code) in o.iter_mut().zip(codes) {
                    *o = code as i8 as f32 * s;
                }
            }
            (_, Some(t)) => {
                for (o, &code) in o.iter_mut().zip(codes) {
                    *o = t[code as usize] * s;
                }
            }
            (_, None) => {}
        }
    }
    out
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

/// Error statistics accumulated one element at a time (for outputs too
/// large to hold twice).
#[derive(Clone, Debug, Default)]
pub struct ErrorAccumulator {
    n: usize,
    max_abs: f64,
    se: f64,
    ne: f64,
    nonzero: usize,
    flushed: usize,
}

impl ErrorAccumulator {
    /// Adds one element: its exact value and its approximation.
    #[inline]
    pub fn add(&mut self, exact: f64, approx: f64) {
        let d = approx - exact;
        self.n += 1;
        self.max_abs = self.max_abs.max(d.abs());
        self.se += d * d;
        self.ne += exact * exact;
        if exact != 0.0 {
            self.nonzero += 1;
            if approx == 0.0 {
                self.flushed += 1;
            }
        }
    }

    /// The statistics of every element added.
    pub fn finish(&self) -> ErrorStats {
        let n = self.n;
        ErrorStats {
            elements: n,
            max_abs_error: self.max_abs,
            rmse: if n > 0 {
                (self.se / n as f64).sqrt()
            } else {
                0.0
            },
            rel_l2_error: if self.ne > 0.0 {
                (self.se / self.ne).sqrt()
            } else {
                0.0
            },
            flushed_fraction: if self.nonzero > 0 {
                self.flushed as f64 / self.nonzero as f64
            } else {
                0.0
            },
        }
    }
}

/// Error statistics of `approx` against `exact` (equal lengths; extra
/// elements of the longer one are ignored).
pub fn error_stats(exact: &[f64], approx: &[f64]) -> ErrorStats {
    let mut acc = ErrorAccumulator::default();
    for (&e, &a) in exact.iter().zip(approx) {
        acc.add(e, a);
    }
    acc.finish()
}

/// Elements [`codec_rel_l2`] quantises: 2^16, a sample (every block size
/// 32..=4096 divides it), enough for a stable relative L2 error.
pub const CODEC_SAMPLE_ELEMS: usize = 1 << 16;

/// The relative L2 error of one quantisation round trip of
/// [`CODEC_SAMPLE_ELEMS`] gradient-like inputs of `shape` (rank 0 of
/// `seed`): the codec's own error on these inputs, 0 without compression.
pub fn codec_rel_l2(c: &Compression, shape: GradientShape, seed: u64) -> f64 {
    let x = gradients(shape, seed, 0, CODEC_SAMPLE_ELEMS);
    let y = round_trip(c, &x);
    let exact: Vec<f64> = x.iter().map(|v| *v as f64).collect();
    let approx: Vec<f64> = y.iter().map(|v| *v as f64).collect();
    error_stats(&exact, &approx).rel_l2_error
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

/// Box–Muller on two counter-based uniforms: the standard normal pair
/// `(r cos θ, r sin θ)` of pair `p` (elements `2p` and `2p + 1`), in f32
/// (24-bit uniforms: |z| ≤ 5.9, plenty for gradient-like data).
fn normal_pair(seed: u64, rank: usize, p: u64) -> (f64, f64) {
    let u = |i: u64| -> f32 {
        let mut z = seed
            ^ (rank as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)
            ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 40) as f32 + 0.5) / (1u32 << 24) as f32
    };
    let r = (-2.0 * u(2 * p).ln()).sqrt();
    let (sin, cos) = (std::f32::consts::TAU * u(2 * p + 1)).sin_cos();
    ((r * cos) as f64, (r * sin) as f64)
}

/// Standard normals by element index, computing each Box–Muller pair once
/// when walked in order.
struct Normals {
    seed: u64,
    rank: usize,
    pair: Option<(u64, (f64, f64))>,
}

impl Normals {
    fn new(seed: u64, rank: usize) -> Self {
        Normals {
            seed,
            rank,
            pair: None,
        }
    }

    #[inline]
    fn at(&mut self, i: u64) -> f64 {
        let p = i >> 1;
        let (a, b) = match self.pair {
            Some((q, v)) if q == p => v,
            _ => {
                let v = normal_pair(self.seed, self.rank, p);
                self.pair = Some((p, v));
                v
            }
        };
        if i & 1 == 0 {
            a
        } else {
            b
        }
    }
}

/// Gradient-like values by element index (see [`gradient_at`]); each
/// Box–Muller pair is computed once when walked in order.
struct Gradients {
    shape: GradientShape,
    z: Normals,
    chi: [Normals; 3],
}

impl Gradients {
    fn new(shape: GradientShape, seed: u64, rank: usize) -> Self {
        Gradients {
            shape,
            z: Normals::new(seed, rank),
            chi: [1u64, 2, 3].map(|k| Normals::new(seed ^ (k * 0x5555), rank)),
        }
    }

    #[inline]
    fn at(&mut self, i: u64) -> f32 {
        let v = match self.shape {
            GradientShape::Normal => 1e-3 * self.z.at(i),
            GradientShape::HeavyTailed => {
                let z = self.z.at(i);
                let chi2: f64 = self.chi.iter_mut().map(|n| n.at(i).powi(2)).sum();
                1e-3 * z / (chi2 / 3.0).sqrt()
            }
            GradientShape::Layered => {
                let layer = (i / 4096) % 7;
                10f64.powi(-2 - layer as i32) * self.z.at(i)
            }
        };
        v as f32
    }
}

/// Element `i` of rank `rank`'s gradient-like input (a pure function of
/// `(shape, seed, rank, i)`, so any range can be generated on its own):
/// - normal: `1e-3 · z_i`;
/// - heavy-tailed: `1e-3 · z_i / sqrt(χ²₃ / 3)` (Student-t, 3 d.o.f.);
/// - layered: `10^(−2 − ⌊i / 4096⌋ mod 7) · z_i`;
///
/// where `z_i` are standard normals from Box–Muller on counter-based
/// uniforms (elements `2p`, `2p + 1` share a pair).
pub fn gradient_at(shape: GradientShape, seed: u64, rank: usize, i: u64) -> f32 {
    Gradients::new(shape, seed, rank).at(i)
}

/// Rank `rank`'s gradient-like values for elements `range` (equal to
/// [`gradient_at`] element by element, a test asserts it; each Box–Muller
/// pair computed once).
pub fn gradient_range(
    shape: GradientShape,
    seed: u64,
    rank: usize,
    range: std::ops::Range<u64>,
) -> Vec<f32> {
    let mut g = Gradients::new(shape, seed, rank);
    range.map(|i| g.at(i)).collect()
}

/// Rank `rank`'s `n` gradient-like values (deterministic in `seed`):
/// [`gradient_at`] for `i` in `0..n`.
pub fn gradients(shape: GradientShape, seed: u64, rank: usize, n: usize) -> Vec<f32> {
    gradient_range(shape, seed, rank, 0..n as u64)
}

impl GradientShape {
    /// Every shape, in UI order.
    pub const ALL: [GradientShape; 3] = [
        GradientShape::Normal,
        GradientShape::HeavyTailed,
        GradientShape::Layered,
    ];

    /// URL name (`normal`, `heavy`, `layers`).
    pub fn name(self) -> &'static str {
        match self {
            GradientShape::Normal => "normal",
            GradientShape::HeavyTailed => "heavy",
            GradientShape::Layered => "layers",
        }
    }

    /// Parses a [`GradientShape::name`].
    pub fn from_name(s: &str) -> Option<GradientShape> {
        Self::ALL.into_iter().find(|g| g.name() == s)
    }

    /// One line for the UI.
    pub fn describe(self) -> &'static str {
        match self {
            GradientShape::Normal => "normal, σ = 1e-3",
            GradientShape::HeavyTailed => "heavy-tailed (Student-t, 3 d.o.f.) × 1e-3",
            GradientShape::Layered => "layers of 4096 with σ from 1e-2 down to 1e-8",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_rounding_equals_round_ties_even() {
        let mut x = -300.0f32;
        while x < 300.0 {
            assert_eq!(round_ties_even(x), x.round_ties_even(), "{x}");
            x += 0.125 / 3.0;
        }
        for v in [
            0.5f32, 1.5, 2.5, -0.5, -2.5, 126.5, -126.5, 4194303.5, 1e9, -1e9, 0.0, -0.0,
        ] {
            assert_eq!(round_ties_even(v), v.round_ties_even(), "{v}");
        }
    }

    #[test]
    fn gradient_ranges_equal_gradients_by_index() {
        for shape in GradientShape::ALL {
            let r = gradient_range(shape, 9, 2, 5..9000);
            for (k, v) in r.iter().enumerate() {
                assert_eq!(*v, gradient_at(shape, 9, 2, 5 + k as u64), "{shape:?} {k}");
            }
        }
    }

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
    fn the_decode_tables_are_the_formula_bit_for_bit() {
        for f in [E4M3, E5M2] {
            for code in 0..=255u8 {
                let (t, d) = (f.decode(code), f.decode_formula(code));
                assert!(
                    t.to_bits() == d.to_bits() || (t.is_nan() && d.is_nan()),
                    "{f:?} {code:#x}: {t} vs {d}"
                );
            }
        }
        // The arithmetic encoder gives the codes of the search over the
        // formula's (and the table's) values: at every code's value, the
        // midpoints between neighbours (ties) and one ulp either side, a
        // sweep of magnitudes and a stride through every f32 below 2·max.
        // A format without a table (E3M4, bias 3) too.
        let e3m4 = Fp8Format {
            exp_bits: 3,
            man_bits: 4,
            bias: 3,
            ieee_special: false,
        };
        for f in [E4M3, E5M2, e3m4] {
            let formula = |x: f32| f.encode_by(x, |c| f.decode_formula(c));
            let table = |x: f32| f.encode_by(x, |c| f.decode(c));
            let mut xs = vec![0.0, f32::INFINITY, f32::MIN_POSITIVE, 1e-45];
            for c in 0..=f.max_code() {
                let v = f.decode_formula(c);
                let w = f.decode_formula(c.saturating_add(1).min(f.max_code()));
                let mid = (v + w) / 2.0;
                for x in [v, mid] {
                    xs.extend([x, f32::from_bits(x.to_bits() + 1)]);
                    if x > 0.0 {
                        xs.push(f32::from_bits(x.to_bits() - 1));
                    }
                }
            }
            let mut x = 1e-12f32;
            while x < 1e6 {
                xs.push(x);
                x *= 1.0137;
            }
            let top = (2.0 * f.max()).to_bits();
            xs.extend((0..top).step_by(4099).map(f32::from_bits));
            for x in xs {
                for y in [x, -x] {
                    let want = formula(y);
                    assert_eq!(f.encode(y), want, "{f:?} {y:e}");
                    assert_eq!(table(y), want, "{f:?} {y:e}");
                }
            }
            assert_eq!(f.encode(f32::NAN), 0x7F);
        }
        // Another format has no table: the formula.
        assert_eq!(e3m4.decode(0x38), e3m4.decode_formula(0x38));
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
