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

/// Reduction operator, as `HcclReduceOp` / `ncclRedOp_t` (SUM, PROD, MAX, MIN).
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
}

impl ReduceOp {
    /// Every op, in UI order.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min];

    /// URL/UI name (`sum`, `prod`, `max`, `min`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    /// Parses a [`ReduceOp::name`].
    pub fn from_name(s: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|o| o.name() == s)
    }

    /// The infix symbol used in step descriptions (`+`, `×`, `max`, `min`).
    pub fn symbol(self) -> &'static str {
        match self {
            ReduceOp::Sum => "+",
            ReduceOp::Prod => "×",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    #[inline]
    fn f32(self, a: f32, b: f32) -> f32 {
        match self {
            ReduceOp::Sum => a + b,
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
    /// (wrapping for integers). Used for the exact reference.
    pub fn exact(self, dtype: DType, a: f64, b: f64) -> f64 {
        match dtype {
            DType::Int32 => {
                let (x, y) = (a as i32, b as i32);
                (match self {
                    ReduceOp::Sum => x.wrapping_add(y),
                    ReduceOp::Prod => x.wrapping_mul(y),
                    ReduceOp::Max => x.max(y),
                    ReduceOp::Min => x.min(y),
                }) as f64
            }
            DType::Int8 => {
                let (x, y) = (a as i8, b as i8);
                (match self {
                    ReduceOp::Sum => x.wrapping_add(y),
                    ReduceOp::Prod => x.wrapping_mul(y),
                    ReduceOp::Max => x.max(y),
                    ReduceOp::Min => x.min(y),
                }) as f64
            }
            _ => match self {
                ReduceOp::Sum => a + b,
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
            ReduceOp::Sum => pairs.for_each(|(a, b)| *a += b),
            ReduceOp::Prod => pairs.for_each(|(a, b)| *a *= b),
            ReduceOp::Max => pairs.for_each(|(a, b)| *a = a.max(*b)),
            ReduceOp::Min => pairs.for_each(|(a, b)| *a = a.min(*b)),
        }
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
pub fn reduce_into(dtype: DType, op: ReduceOp, dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "reduce_into: length mismatch");
    // One loop per (dtype, op), the op a constant in it, so the compiler
    // can vectorise (a `match op` per element keeps the fp32 sum scalar).
    macro_rules! per_op {
        ($op:expr, $o:ident => $body:expr) => {
            match $op {
                ReduceOp::Sum => {
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
        let (a, b): ([u8; N], [u8; N]) = (
            d.try_into().expect("N-byte chunk"),
            s.try_into().expect("N-byte chunk"),
        );
        d.copy_from_slice(&f(a, b));
    }
}

/// An integer reduce op (wrapping; the arithmetic contract of the module doc).
#[inline(always)]
fn int_op<T: WrappingInt>(op: ReduceOp, a: T, b: T) -> T {
    match op {
        ReduceOp::Sum => a.wrapping_add_(b),
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
