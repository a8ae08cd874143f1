//! Deterministic pseudo-random rank inputs.
//!
//! Element `i` of rank `r`'s input is a pure function of `(seed, r, i)`
//! (a SplitMix64 hash of the three, Steele, Lea & Flood 2014), so a worker
//! makes its own input without receiving it, the checker recomputes any
//! element on demand, and a link with the same seed reproduces the same data.
//!
//! Values are chosen so that exact references are exact in f64:
//! - fp32: `k / 2^23`, `k` in `[-2^23, 2^23)` (24 significant bits);
//! - fp16: `k / 2^10`, `k` in `[-2^10, 2^10)`;
//! - bf16: `k / 2^7`, `k` in `[-2^7, 2^7)`;
//! - int32: `[-1024, 1024)`; int8: `[-16, 16)` (sums of up to 8 ranks do
//!   not overflow; products do, and wrap; see [`super::dtype`]).
//!
//! Sums of up to 2^29 such values are exact in f64, so the "exact" result of
//! a sum, max or min is exact; a product is within 2^-53 relative.

use super::dtype::DType;
use std::ops::Range;

/// SplitMix64 finaliser.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline]
fn rank_key(seed: u64, rank: usize) -> u64 {
    mix(seed
        .wrapping_add(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((rank as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)))
}

#[inline]
fn hash(seed: u64, rank: usize, index: usize) -> u64 {
    mix(rank_key(seed, rank) ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The integer `k` behind element `index` of rank `rank` (see module docs).
#[inline]
fn raw(dtype: DType, seed: u64, rank: usize, index: usize) -> i64 {
    let h = hash(seed, rank, index);
    match dtype {
        DType::Fp32 => (h >> 40) as i64 - (1 << 23),
        DType::Fp16 => (h >> 53) as i64 - (1 << 10),
        DType::Bf16 => (h >> 56) as i64 - (1 << 7),
        DType::Int32 => (h >> 53) as i64 - 1024,
        DType::Int8 => (h >> 59) as i64 - 16,
    }
}

/// The value of element `index` of rank `rank`'s input, exactly, as f64.
#[inline]
pub fn value(dtype: DType, seed: u64, rank: usize, index: usize) -> f64 {
    let k = raw(dtype, seed, rank, index) as f64;
    match dtype {
        DType::Fp32 => k / (1u64 << 23) as f64,
        DType::Fp16 => k / (1u64 << 10) as f64,
        DType::Bf16 => k / (1u64 << 7) as f64,
        DType::Int32 | DType::Int8 => k,
    }
}

/// Writes rank `rank`'s input elements `elems` into `out` (little-endian).
/// Equal to [`value`] element by element (a test asserts it); written as one
/// loop per dtype because workers fill up to 128 MiB with it.
///
/// Shape: `out.len() == elems.len() * dtype.size_bytes()`; else panics
/// (a caller bug).
pub fn fill(dtype: DType, seed: u64, rank: usize, elems: Range<usize>, out: &mut [u8]) {
    let s = dtype.size_bytes();
    assert_eq!(
        out.len(),
        elems.len() * s,
        "input::fill: wrong output length"
    );
    let a = rank_key(seed, rank);
    let h = move |i: usize| mix(a ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let pairs = elems.zip(out.chunks_exact_mut(s));
    match dtype {
        DType::Fp32 => pairs.for_each(|(i, o)| {
            let k = (h(i) >> 40) as i32 - (1 << 23);
            o.copy_from_slice(&(k as f32 / (1u32 << 23) as f32).to_le_bytes())
        }),
        DType::Fp16 => pairs.for_each(|(i, o)| {
            let k = (h(i) >> 53) as i32 - (1 << 10);
            o.copy_from_slice(&half::f16::from_f32(k as f32 / 1024.0).to_le_bytes())
        }),
        DType::Bf16 => pairs.for_each(|(i, o)| {
            let k = (h(i) >> 56) as i32 - (1 << 7);
            o.copy_from_slice(&half::bf16::from_f32(k as f32 / 128.0).to_le_bytes())
        }),
        DType::Int32 => {
            pairs.for_each(|(i, o)| o.copy_from_slice(&((h(i) >> 53) as i32 - 1024).to_le_bytes()))
        }
        DType::Int8 => pairs.for_each(|(i, o)| o[0] = ((h(i) >> 59) as i32 - 16) as i8 as u8),
    }
}

/// Rank `rank`'s input elements `elems` as exact f64 values (equal to
/// [`value`] element by element; one loop per dtype, for the checker).
pub fn values(dtype: DType, seed: u64, rank: usize, elems: Range<usize>) -> Vec<f64> {
    let a = rank_key(seed, rank);
    let h = move |i: usize| mix(a ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    match dtype {
        DType::Fp32 => elems
            .map(|i| ((h(i) >> 40) as i64 - (1 << 23)) as f64 / (1u64 << 23) as f64)
            .collect(),
        DType::Fp16 => elems
            .map(|i| ((h(i) >> 53) as i64 - (1 << 10)) as f64 / 1024.0)
            .collect(),
        DType::Bf16 => elems
            .map(|i| ((h(i) >> 56) as i64 - (1 << 7)) as f64 / 128.0)
            .collect(),
        DType::Int32 => elems.map(|i| ((h(i) >> 53) as i64 - 1024) as f64).collect(),
        DType::Int8 => elems.map(|i| ((h(i) >> 59) as i64 - 16) as f64).collect(),
    }
}

/// Rank `rank`'s whole input buffer of `elems` elements.
pub fn buffer(dtype: DType, seed: u64, rank: usize, elems: usize) -> Vec<u8> {
    let mut out = vec![0u8; elems * dtype.size_bytes()];
    fill(dtype, seed, rank, 0..elems, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_rank_dependent() {
        let a = buffer(DType::Fp32, 7, 0, 64);
        assert_eq!(a, buffer(DType::Fp32, 7, 0, 64));
        assert_ne!(a, buffer(DType::Fp32, 7, 1, 64));
        assert_ne!(a, buffer(DType::Fp32, 8, 0, 64));
    }

    #[test]
    fn stored_values_are_exact() {
        for d in DType::ALL {
            let b = buffer(d, 42, 3, 500);
            for i in 0..500 {
                assert_eq!(d.read_f64(&b, i), value(d, 42, 3, i), "{d} element {i}");
            }
        }
    }

    #[test]
    fn ranges_are_as_documented() {
        for i in 0..2000 {
            let v = value(DType::Int8, 1, 2, i);
            assert!((-16.0..16.0).contains(&v));
            let v = value(DType::Fp16, 1, 2, i);
            assert!((-1.0..1.0).contains(&v));
            let v = value(DType::Int32, 1, 2, i);
            assert!((-1024.0..1024.0).contains(&v));
        }
    }

    #[test]
    fn values_equal_value() {
        for d in DType::ALL {
            let v = values(d, 11, 4, 90..140);
            for (j, i) in (90..140).enumerate() {
                assert_eq!(v[j], value(d, 11, 4, i), "{d} {i}");
            }
        }
    }

    #[test]
    fn fill_of_a_subrange_matches_the_whole() {
        let whole = buffer(DType::Bf16, 9, 5, 100);
        let mut part = vec![0u8; 30 * 2];
        fill(DType::Bf16, 9, 5, 40..70, &mut part);
        assert_eq!(&whole[80..140], &part[..]);
    }
}
