//! Data types, reduce operations and the element kernels that apply them.
//!
//! Buffers are little-endian byte slices (`&[u8]`), so the same kernels run
//! in the reference executor, in the rank workers (on the bytes of a
//! transferred `ArrayBuffer`) and in tests.
//!
//! ## Arithmetic (what "reduce" means, bit for bit)
//! - `fp32`: IEEE-754 binary32 `a + b`, `a * b`; `max`/`min` return the larger
//!   / smaller operand (inputs never hold NaN).
//! - `fp16`, `bf16`: each operand widened to fp32, the op applied in fp32, the
//!   result rounded back to nearest-even (the `half` crate's `from_f32`). One
//!   rounding per reduce, which is what a reduce kernel computing in fp32 and
//!   storing in 16 bits does.
//! - `int32`, `int8`: two's-complement **wrapping** (`wrapping_add`,
//!   `wrapping_mul`). This is what reduction hardware does: NCCL's device
//!   `FuncSum`/`FuncProd` are plain `x + y` / `x * y` on the element type, which
//!   wrap on every GPU, and HCCL's integer reductions run on the same kind of
//!   fixed-width ALU. Wrapping add and mul are associative and commutative, so
//!   an integer result never depends on the reduction order.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Element type of a collective's buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// IEEE binary32, 4 bytes.
    Fp32,
    /// IEEE binary16, 2 bytes.
    Fp16,
    /// bfloat16 (8-bit exponent, 7-bit mantissa), 2 bytes.
    Bf16,
    /// Two's-complement 32-bit integer, 4 bytes.
    Int32,
    /// Two's-complement 8-bit integer, 1 byte.
    Int8,
}

impl DType {
    /// Every data type, in the order the UI lists them.
    pub const ALL: [DType; 5] = [
        DType::Fp32,
        DType::Fp16,
        DType::Bf16,
        DType::Int32,
        DType::Int8,
    ];

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            DType::Fp32 | DType::Int32 => 4,
            DType::Fp16 | DType::Bf16 => 2,
            DType::Int8 => 1,
        }
    }

    /// The name used in URLs and the UI (`fp32`, `fp16`, `bf16`, `int32`, `int8`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Fp32 => "fp32",
            DType::Fp16 => "fp16",
            DType::Bf16 => "bf16",
            DType::Int32 => "int32",
            DType::Int8 => "int8",
        }
    }

    /// Parses a [`DType::name`]; `None` for anything else.
    pub fn from_name(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == s)
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, DType::Fp32 | DType::Fp16 | DType::Bf16)
    }

    /// Unit roundoff u (half the machine epsilon) of the type: 2^-24 (fp32),
    /// 2^-11 (fp16), 2^-8 (bf16); 0 for integers (exact, wrapping).
    pub fn unit_roundoff(self) -> f64 {
        match self {
            DType::Fp32 => 2f64.powi(-24),
            DType::Fp16 => 2f64.powi(-11),
            DType::Bf16 => 2f64.powi(-8),
            DType::Int32 | DType::Int8 => 0.0,
        }
    }

    /// Smallest positive subnormal of the type (absolute error floor when a
    /// product underflows); 0 for integers.
    pub fn min_subnormal(self) -> f64 {
        match self {
            DType::Fp32 => 2f64.powi(-149),
            DType::Fp16 => 2f64.powi(-24),
            DType::Bf16 => 2f64.powi(-133),
            DType::Int32 | DType::Int8 => 0.0,
        }
    }

    /// Reads element `i` of a little-endian buffer as f64 (exact for every type).
    ///
    /// Panics if `i` is out of range: callers index within buffers they sized.
    pub fn read_f64(self, buf: &[u8], i: usize) -> f64 {
        let s = self.size_bytes();
        let b = &buf[i * s..(i + 1) * s];
        match self {
            DType::Fp32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            DType::Fp16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::Bf16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::Int32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            DType::Int8 => b[0] as i8 as f64,
        }
    }

    /// Every element of `buf` as f64, exact ([`DType::read_f64`] of each),
    /// in one loop per dtype: a checker's piece of ~64K elements read one
    /// `read_f64` at a time, matching the dtype each time, cost more than
    /// hashing its inputs again (in a profile). A trailing partial
    /// element is ignored.
    pub fn decode_f64(self, buf: &[u8]) -> Vec<f64> {
        match self {
            DType::Fp32 => buf
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                .collect(),
            DType::Fp16 => buf
                .chunks_exact(2)
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
            DType::Bf16 => buf
                .chunks_exact(2)
                .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
            DType::Int32 => buf
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                .collect(),
            DType::Int8 => buf.iter().map(|&x| x as i8 as f64).collect(),
        }
    }

    /// Formats element `i` of a buffer for display (short: `0.4375`, `-12`).
    pub fn format_element(self, buf: &[u8], i: usize) -> String {
        let v = self.read_f64(buf, i);
        if self.is_float() {
            let s = format!("{v:.4}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            if s.is_empty() || s == "-" || s == "-0" {
                "0".to_string()
            } else {
                s.to_string()
            }
        } else {
            format!("{v}")
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Reduction operator, as `HcclReduceOp` / `ncclRedOp_t` (SUM, PROD, MAX,
/// MIN; AVG is NCCL's only, see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReduceOp {
    /// Sum.
    Sum,
    /// Product.
    Prod,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Average, as NCCL's `ncclAvg` computes it (module doc): floats
    /// pre-multiplied by `1/n` in the dtype then summed, integers summed then
    /// divided by `n` toward zero. HCCL has no average.
    Avg,
}

impl ReduceOp {
    /// Every op, in UI order.
    pub const ALL: [ReduceOp; 5] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Avg,
    ];

    /// URL/UI name (`sum`, `prod`, `max`, `min`, `avg`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Avg => "avg",
        }
    }

    /// True if HCCL's `HcclReduceOp` has this op (`HCCL_REDUCE_SUM`,
    /// `HCCL_REDUCE_PROD`, `HCCL_REDUCE_MAX`, `HCCL_REDUCE_MIN`; CANN
    /// `hccl_types.h`): every op but [`ReduceOp::Avg`].
    pub fn in_hccl(self) -> bool {
        self != ReduceOp::Avg
    }

    /// The op the pairwise reduce kernel applies: [`ReduceOp::Sum`] for
    /// [`ReduceOp::Avg`] (its scaling is [`pre_op`] / [`post_op`]), else
    /// the op itself.
    pub fn combine(self) -> ReduceOp {
        match self {
            ReduceOp::Avg => ReduceOp::Sum,
            o => o,
        }
    }

    /// Parses a [`ReduceOp::name`].
    pub fn from_name(s: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|o| o.name() == s)
    }

    /// The infix symbol used in step descriptions (`+`, `×`, `max`, `min`;
    /// `+` for avg, whose steps add pre-scaled values).
    pub fn symbol(self) -> &'static str {
        match self {
            ReduceOp::Sum | ReduceOp::Avg => "+",
            ReduceOp::Prod => "×",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    #[inline]
    fn f32(self, a: f32, b: f32) -> f32 {
        match self {
            ReduceOp::Sum | ReduceOp::Avg => a + b,
            ReduceOp::Prod => a * b,
            ReduceOp::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
            ReduceOp::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
        }
    }

    /// Exact reduction of two f64 values in the ideal arithmetic of `dtype`
    /// (wrapping for integers). Used for the exact reference. For
    /// [`ReduceOp::Avg`] this is the sum; [`ReduceOp::exact_finish`]
    /// divides.
    pub fn exact(self, dtype: DType, a: f64, b: f64) -> f64 {
        match dtype {
            DType::Int32 => {
                let (x, y) = (a as i32, b as i32);
                (match self {
                    ReduceOp::Sum | ReduceOp::Avg => x.wrapping_add(y),
                    ReduceOp::Prod => x.wrapping_mul(y),
                    ReduceOp::Max => x.max(y),
                    ReduceOp::Min => x.min(y),
                }) as f64
            }
            DType::Int8 => {
                let (x, y) = (a as i8, b as i8);
                (match self {
                    ReduceOp::Sum | ReduceOp::Avg => x.wrapping_add(y),
                    ReduceOp::Prod => x.wrapping_mul(y),
                    ReduceOp::Max => x.max(y),
                    ReduceOp::Min => x.min(y),
                }) as f64
            }
            _ => match self {
                ReduceOp::Sum | ReduceOp::Avg => a + b,
                ReduceOp::Prod => a * b,
                ReduceOp::Max => a.max(b),
                ReduceOp::Min => a.min(b),
            },
        }
    }
}

impl ReduceOp {
    /// `acc[i] = self.exact(dtype, acc[i], x[i])` for every element (the op
    /// chosen once, outside the loop). Shapes: equal lengths.
    pub fn exact_into(self, dtype: DType, acc: &mut [f64], x: &[f64]) {
        if !dtype.is_float() {
            for (a, b) in acc.iter_mut().zip(x) {
                *a = self.exact(dtype, *a, *b);
            }
            return;
        }
        let pairs = acc.iter_mut().zip(x);
        match self {
            ReduceOp::Sum | ReduceOp::Avg => pairs.for_each(|(a, b)| *a += b),
            ReduceOp::Prod => pairs.for_each(|(a, b)| *a *= b),
            ReduceOp::Max => pairs.for_each(|(a, b)| *a = a.max(*b)),
            ReduceOp::Min => pairs.for_each(|(a, b)| *a = a.min(*b)),
        }
    }

    /// The exact result of a reduction of `n` ranks' values whose exact
    /// fold ([`ReduceOp::exact`]) is `folded`: `folded / n` for
    /// [`ReduceOp::Avg`] (toward zero for integers, as NCCL's
    /// `FuncSumPostDiv`), `folded` for every other op.
    pub fn exact_finish(self, dtype: DType, folded: f64, n: usize) -> f64 {
        match self {
            ReduceOp::Avg if dtype.is_float() => folded / n.max(1) as f64,
            ReduceOp::Avg => (folded / n.max(1) as f64).trunc(),
            _ => folded,
        }
    }
}

/// NCCL's `ncclAvg` scalar for floats on `n` ranks: `float(1.0/n)` converted
/// to `dtype` (`__float2half`, `__float2bfloat16`, round to nearest even;
/// NCCL `src/enqueue.cc` `hostToDevRedOp`), as f64. `1.0` for integers
/// (their average divides after the sum) and for `n == 0`.
pub fn avg_scalar(dtype: DType, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let s = (1.0f64 / n as f64) as f32;
    match dtype {
        DType::Fp32 => s as f64,
        DType::Fp16 => half::f16::from_f32(s).to_f64(),
        DType::Bf16 => half::bf16::from_f32(s).to_f64(),
        DType::Int32 | DType::Int8 => 1.0,
    }
}

/// The pre-operation of `op` on one rank's contribution `buf` (`n` ranks):
/// for [`ReduceOp::Avg`] on a float dtype, every element `x` becomes
/// `x·s` rounded once to the dtype (`s` = [`avg_scalar`]; NCCL's
/// `FuncPreMulSum::preOp`). A no-op for every other op and for integers.
/// A trailing partial element is left as is.
pub fn pre_op(dtype: DType, op: ReduceOp, n: usize, buf: &mut [u8]) {
    if op != ReduceOp::Avg || !dtype.is_float() {
        return;
    }
    let s = avg_scalar(dtype, n) as f32;
    match dtype {
        DType::Fp32 => {
            for c in buf.chunks_exact_mut(4) {
                let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                c.copy_from_slice(&(x * s).to_le_bytes());
            }
        }
        DType::Fp16 => {
            for c in buf.chunks_exact_mut(2) {
                let x = half::f16::from_le_bytes([c[0], c[1]]).to_f32();
                c.copy_from_slice(&half::f16::from_f32(x * s).to_le_bytes());
            }
        }
        DType::Bf16 => {
            for c in buf.chunks_exact_mut(2) {
                let x = half::bf16::from_le_bytes([c[0], c[1]]).to_f32();
                c.copy_from_slice(&half::bf16::from_f32(x * s).to_le_bytes());
            }
        }
        DType::Int32 | DType::Int8 => {}
    }
}

/// The post-operation of `op` on a finished reduction `buf` over `n`
/// ranks: for [`ReduceOp::Avg`] on an integer dtype, every element becomes
/// its (wrapped) sum divided by `n`, rounded toward zero (NCCL's
/// `FuncSumPostDiv::postOp`). A no-op for every other op and for floats.
pub fn post_op(dtype: DType, op: ReduceOp, n: usize, buf: &mut [u8]) {
    if op != ReduceOp::Avg || dtype.is_float() || n == 0 {
        return;
    }
    let d = n.min(i32::MAX as usize) as i64;
    match dtype {
        DType::Int32 => {
            for c in buf.chunks_exact_mut(4) {
                let x = i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64;
                c.copy_from_slice(&((x / d) as i32).to_le_bytes());
            }
        }
        DType::Int8 => {
            for c in buf.iter_mut() {
                *c = ((*c as i8 as i64 / d) as i8) as u8;
            }
        }
        _ => {}
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `dst[i] = op(dst[i], src[i])` for every element, on little-endian bytes.
///
/// Shapes: `dst.len() == src.len()`, a multiple of `dtype.size_bytes()`;
/// a mismatch is a caller bug and panics.
///
/// [`ReduceOp::Avg`] adds here (its scaling is [`pre_op`] / [`post_op`]).
///
/// In wasm built with the cargo feature `simd` (the rank workers'
/// `worker_simd`), the whole 16-byte vectors go through the SIMD128 kernels
/// of [`super::simd128`], which give the same bits as
/// [`reduce_into_scalar`]; the rest, and every build without the feature,
/// runs the scalar loops.
pub fn reduce_into(dtype: DType, op: ReduceOp, dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "reduce_into: length mismatch");
    let done = simd_prefix(dtype, op.combine(), dst, src);
    reduce_into_scalar(dtype, op, &mut dst[done..], &src[done..]);
}

/// Reduces the longest prefix of whole 16-byte vectors with the SIMD128
/// kernel for `(dtype, op)` (`op` already [`ReduceOp::combine`]d) and
/// returns its length in bytes; 0 (nothing touched) where there is no
/// kernel: fp16, bf16, int8 prod (SIMD128 has no `i8x16.mul`).
#[cfg(all(target_arch = "wasm32", feature = "simd"))]
fn simd_prefix(dtype: DType, op: ReduceOp, dst: &mut [u8], src: &[u8]) -> usize {
    use super::simd128 as k;
    match (dtype, op) {
        (DType::Fp32, ReduceOp::Sum | ReduceOp::Avg) => k::f32_sum(dst, src),
        (DType::Fp32, ReduceOp::Prod) => k::f32_prod(dst, src),
        (DType::Fp32, ReduceOp::Max) => k::f32_max(dst, src),
        (DType::Fp32, ReduceOp::Min) => k::f32_min(dst, src),
        (DType::Int32, ReduceOp::Sum | ReduceOp::Avg) => k::i32_sum(dst, src),
        (DType::Int32, ReduceOp::Prod) => k::i32_prod(dst, src),
        (DType::Int32, ReduceOp::Max) => k::i32_max(dst, src),
        (DType::Int32, ReduceOp::Min) => k::i32_min(dst, src),
        (DType::Int8, ReduceOp::Sum | ReduceOp::Avg) => k::i8_sum(dst, src),
        (DType::Int8, ReduceOp::Max) => k::i8_max(dst, src),
        (DType::Int8, ReduceOp::Min) => k::i8_min(dst, src),
        _ => 0,
    }
}

/// Without the `simd` feature (native, the scalar worker): no kernel.
#[cfg(not(all(target_arch = "wasm32", feature = "simd")))]
fn simd_prefix(_: DType, _: ReduceOp, _: &mut [u8], _: &[u8]) -> usize {
    0
}

/// [`reduce_into`] by the portable element loops alone: the definition the
/// SIMD128 kernels are tested against (same shapes, same panics).
pub fn reduce_into_scalar(dtype: DType, op: ReduceOp, dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "reduce_into: length mismatch");
    let op = op.combine();
    // One loop per (dtype, op), the op a constant in it, so the compiler
    // can vectorise (a `match op` per element keeps the fp32 sum scalar).
    macro_rules! per_op {
        ($op:expr, $o:ident => $body:expr) => {
            match $op {
                ReduceOp::Sum | ReduceOp::Avg => {
                    const $o: ReduceOp = ReduceOp::Sum;
                    $body
                }
                ReduceOp::Prod => {
                    const $o: ReduceOp = ReduceOp::Prod;
                    $body
                }
                ReduceOp::Max => {
                    const $o: ReduceOp = ReduceOp::Max;
                    $body
                }
                ReduceOp::Min => {
                    const $o: ReduceOp = ReduceOp::Min;
                    $body
                }
            }
        };
    }
    match dtype {
        DType::Fp32 => per_op!(op, O => each::<4>(dst, src, |a, b| {
            O.f32(f32::from_le_bytes(a), f32::from_le_bytes(b)).to_le_bytes()
        })),
        DType::Fp16 => per_op!(op, O => each::<2>(dst, src, |a, b| {
            let (a, b) = (half::f16::from_le_bytes(a), half::f16::from_le_bytes(b));
            half::f16::from_f32(O.f32(a.to_f32(), b.to_f32())).to_le_bytes()
        })),
        DType::Bf16 => per_op!(op, O => each::<2>(dst, src, |a, b| {
            let (a, b) = (half::bf16::from_le_bytes(a), half::bf16::from_le_bytes(b));
            half::bf16::from_f32(O.f32(a.to_f32(), b.to_f32())).to_le_bytes()
        })),
        DType::Int32 => per_op!(op, O => each::<4>(dst, src, |a, b| {
            int_op(O, i32::from_le_bytes(a), i32::from_le_bytes(b)).to_le_bytes()
        })),
        DType::Int8 => per_op!(op, O => each::<1>(dst, src, |a, b| {
            [int_op(O, a[0] as i8, b[0] as i8) as u8]
        })),
    }
}

/// `dst[i] = f(dst[i], src[i])` over `N`-byte elements.
#[inline(always)]
fn each<const N: usize>(dst: &mut [u8], src: &[u8], f: impl Fn([u8; N], [u8; N]) -> [u8; N]) {
    for (d, s) in dst.chunks_exact_mut(N).zip(src.chunks_exact(N)) {
        // Always N bytes (`chunks_exact`): the conversions cannot fail.
        if let (Ok(a), Ok(b)) = (<[u8; N]>::try_from(&*d), <[u8; N]>::try_from(s)) {
            d.copy_from_slice(&f(a, b));
        }
    }
}

/// An integer reduce op (wrapping; the arithmetic contract of the module doc).
#[inline(always)]
fn int_op<T: WrappingInt>(op: ReduceOp, a: T, b: T) -> T {
    match op {
        ReduceOp::Sum | ReduceOp::Avg => a.wrapping_add_(b),
        ReduceOp::Prod => a.wrapping_mul_(b),
        ReduceOp::Max => a.max(b),
        ReduceOp::Min => a.min(b),
    }
}

/// The integer types [`int_op`] reduces.
trait WrappingInt: Ord + Copy {
    fn wrapping_add_(self, b: Self) -> Self;
    fn wrapping_mul_(self, b: Self) -> Self;
}

impl WrappingInt for i32 {
    fn wrapping_add_(self, b: Self) -> Self {
        self.wrapping_add(b)
    }
    fn wrapping_mul_(self, b: Self) -> Self {
        self.wrapping_mul(b)
    }
}

impl WrappingInt for i8 {
    fn wrapping_add_(self, b: Self) -> Self {
        self.wrapping_add(b)
    }
    fn wrapping_mul_(self, b: Self) -> Self {
        self.wrapping_mul(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_f64_reads_every_element_as_read_f64_does() {
        // Bytes that are every kind of value somewhere (negatives, NaN and
        // infinity patterns for the floats), and a trailing partial element.
        let buf: Vec<u8> = (0..259u32).map(|i| (i * 97 % 256) as u8).collect();
        for dtype in DType::ALL {
            let n = buf.len() / dtype.size_bytes();
            let one_by_one: Vec<u64> = (0..n).map(|i| dtype.read_f64(&buf, i).to_bits()).collect();
            let all: Vec<u64> = dtype.decode_f64(&buf).iter().map(|x| x.to_bits()).collect();
            assert_eq!(all, one_by_one, "{dtype:?}");
        }
    }

    fn i8buf(v: &[i8]) -> Vec<u8> {
        v.iter().map(|x| *x as u8).collect()
    }

    #[test]
    fn int8_sum_and_prod_wrap() {
        let mut d = i8buf(&[120, -128, 100, 16]);
        reduce_into(
            DType::Int8,
            ReduceOp::Sum,
            &mut d,
            &i8buf(&[10, -1, 27, 16]),
        );
        assert_eq!(d, i8buf(&[-126, 127, 127, 32]));
        let mut d = i8buf(&[16, -16]);
        reduce_into(DType::Int8, ReduceOp::Prod, &mut d, &i8buf(&[16, 9]));
        // 256 wraps to 0; -144 wraps to 112.
        assert_eq!(d, i8buf(&[0, 112]));
    }

    #[test]
    fn int32_sum_wraps_at_i32_max() {
        let mut d = i32::MAX.to_le_bytes().to_vec();
        reduce_into(DType::Int32, ReduceOp::Sum, &mut d, &1i32.to_le_bytes());
        assert_eq!(d, i32::MIN.to_le_bytes());
        assert_eq!(
            ReduceOp::Sum.exact(DType::Int32, i32::MAX as f64, 1.0),
            i32::MIN as f64
        );
    }

    #[test]
    fn fp16_rounds_once_per_reduce() {
        // 2048 + 1 is not representable in fp16 (11-bit significand): ties to even -> 2048.
        let mut d = half::f16::from_f32(2048.0).to_le_bytes().to_vec();
        reduce_into(
            DType::Fp16,
            ReduceOp::Sum,
            &mut d,
            &half::f16::from_f32(1.0).to_le_bytes(),
        );
        assert_eq!(DType::Fp16.read_f64(&d, 0), 2048.0);
        let mut d = half::f16::from_f32(2048.0).to_le_bytes().to_vec();
        reduce_into(
            DType::Fp16,
            ReduceOp::Sum,
            &mut d,
            &half::f16::from_f32(3.0).to_le_bytes(),
        );
        assert_eq!(DType::Fp16.read_f64(&d, 0), 2052.0);
    }

    #[test]
    fn bf16_and_fp32_max_min() {
        let mut d = [
            half::bf16::from_f32(-1.5).to_le_bytes(),
            half::bf16::from_f32(2.0).to_le_bytes(),
        ]
        .concat();
        let s = [
            half::bf16::from_f32(0.25).to_le_bytes(),
            half::bf16::from_f32(-3.0).to_le_bytes(),
        ]
        .concat();
        reduce_into(DType::Bf16, ReduceOp::Max, &mut d, &s);
        assert_eq!(
            (DType::Bf16.read_f64(&d, 0), DType::Bf16.read_f64(&d, 1)),
            (0.25, 2.0)
        );
        let mut d = [1.0f32.to_le_bytes(), 5.0f32.to_le_bytes()].concat();
        let s = [(-2.0f32).to_le_bytes(), 7.0f32.to_le_bytes()].concat();
        reduce_into(DType::Fp32, ReduceOp::Min, &mut d, &s);
        assert_eq!(
            (DType::Fp32.read_f64(&d, 0), DType::Fp32.read_f64(&d, 1)),
            (-2.0, 5.0)
        );
    }

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
        for o in ReduceOp::ALL {
            assert_eq!(ReduceOp::from_name(o.name()), Some(o));
        }
        assert_eq!(DType::from_name("float"), None);
    }

    #[test]
    fn format_element_is_short() {
        let b = 0.4375f32.to_le_bytes();
        assert_eq!(DType::Fp32.format_element(&b, 0), "0.4375");
        let b = (-12i32).to_le_bytes();
        assert_eq!(DType::Int32.format_element(&b, 0), "-12");
    }
}
