//! WebAssembly SIMD128 reduce kernels: the element loops of
//! [`super::dtype::reduce_into`] sixteen bytes at a time, for the rank
//! workers' hot path (`dst[i] = op(dst[i], src[i])` over a received chunk).
//!
//! Compiled only into wasm with the cargo feature `simd` (the `worker_simd`
//! binary: `data-cargo-features="simd"` in index.html; each kernel enables
//! the `simd128` target feature for itself, so the rest of the module stays
//! plain wasm); everywhere else, and for the types and ops without a kernel
//! here, the
//! portable loops of [`super::dtype::reduce_into_scalar`] run, and they are
//! the definition: every kernel here gives the same bits (the wasm test
//! `simd_kernels_match_scalar_bits` in `tests/wasm_runtime.rs` compares
//! them over random, signed-zero and extreme inputs).
//!
//! Why the bits agree: each lane applies the same IEEE-754 / two's-complement
//! operation as the scalar loop, element by element, with no reassociation:
//! - fp32 sum / prod: `f32x4.add` / `f32x4.mul` (round to nearest-even, as
//!   the scalar `f32` ops);
//! - fp32 max / min: `f32x4.pmax(a, b)` = `a < b ? b : a` and
//!   `f32x4.pmin(a, b)` = `b < a ? b : a`, exactly the scalar rule of
//!   [`super::dtype`] (not IEEE maxNum; WebAssembly SIMD spec, "pseudo-min
//!   and pseudo-max");
//! - int32, int8: wrapping `add` / `mul` (int32 only: SIMD128 has no
//!   `i8x16.mul`) and signed `max` / `min`.
//!
//! Shapes: `dst.len() == src.len()` (checked by the caller). Which kernel
//! serves which `(dtype, op)` is decided in [`super::dtype`] (this module
//! knows no dtypes, so the two do not import each other). Calling a
//! `#[target_feature]` function is safe on wasm: an engine without simd128
//! rejects the whole module at validation and never runs it; the pool
//! starts `worker_simd` only after `WebAssembly.validate` accepted a SIMD
//! module (`runtime::browser::pool::simd_supported`).

use core::arch::wasm32::*;

/// One kernel: `dst[v] = $op(dst[v], src[v])` over every whole 16-byte
/// vector `v`; returns the bytes done. Loads and stores are unaligned
/// (`v128.load` / `v128.store` take any address).
macro_rules! kernel {
    ($name:ident, $op:ident) => {
        #[doc = concat!("`dst = ", stringify!($op), "(dst, src)` per 16-byte vector; returns the bytes done.")]
        #[target_feature(enable = "simd128")]
        pub fn $name(dst: &mut [u8], src: &[u8]) -> usize {
            let n = dst.len().min(src.len()) / 16;
            let (d, s) = (dst.as_mut_ptr() as *mut v128, src.as_ptr() as *const v128);
            for i in 0..n {
                // SAFETY: i < n, so bytes 16 i .. 16 i + 16 lie in both slices.
                unsafe { v128_store(d.add(i), $op(v128_load(d.add(i)), v128_load(s.add(i)))) };
            }
            n * 16
        }
    };
}

kernel!(f32_sum, f32x4_add);
kernel!(f32_prod, f32x4_mul);
kernel!(f32_max, f32x4_pmax);
kernel!(f32_min, f32x4_pmin);
kernel!(i32_sum, i32x4_add);
kernel!(i32_prod, i32x4_mul);
kernel!(i32_max, i32x4_max);
kernel!(i32_min, i32x4_min);
kernel!(i8_sum, i8x16_add);
kernel!(i8_max, i8x16_max);
kernel!(i8_min, i8x16_min);
