//! Compression what-if speed: the page's compressed reference and error
//! report (`CompressedCheck::prepare`: 8 ranks' gradient inputs, the ring
//! AllReduce with every transfer encoded and decoded, the exact result and
//! the statistics) and one encode + decode of 1 Mi fp16 elements, int8
//! and fp8 (what a worker does per transfer at 16 MiB / 8 ranks).
//! Run: `cargo bench --bench compress`.

use ccl_playground::engine::algorithm::{build, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::compressed::{self, CompressedCheck, CompressedSetup, Placement};
use ccl_playground::engine::dtype::{DType, ReduceOp};
use ccl_playground::engine::quantization::{Compression, GradientShape, ScaleType, Scheme};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn setup() -> CompressedSetup {
    CompressedSetup {
        compression: Compression {
            scheme: Scheme::Int8,
            block: 256,
            scale: ScaleType::Fp16,
        },
        placement: Placement::Hop,
        shape: GradientShape::Normal,
    }
}

fn reference(c: &mut Criterion) {
    let mut g = c.benchmark_group("compressed");
    g.sample_size(10);
    let ring = build(Algorithm::Ring, Primitive::AllReduce, 8).unwrap();
    // 2 MiB of fp16 per rank (the page's 16 MiB case is 8× this).
    g.bench_function("check_prepare_8ranks_2MiB_fp16_int8_hop", |b| {
        b.iter(|| {
            CompressedCheck::prepare(
                black_box(&ring),
                &ring,
                &setup(),
                DType::Fp16,
                ReduceOp::Sum,
                1,
                1 << 20,
            )
            .unwrap()
        })
    });
    let mut payload = vec![0u8; 2 << 20];
    compressed::fill_gradients(
        GradientShape::Normal,
        DType::Fp16,
        1,
        0,
        0..1 << 20,
        &mut payload,
    );
    let c = setup().compression;
    g.bench_function("encode_decode_1Mi_fp16_int8", |b| {
        let mut out = vec![0u8; 2 << 20];
        b.iter(|| {
            let w = compressed::encode(&c, DType::Fp16, black_box(&payload)).unwrap();
            compressed::decode(&c, DType::Fp16, &w, &mut out).unwrap();
        })
    });
    // The fp8 link's codec (`compress=fp8e4m3&block=32&scale=fp32`): the
    // encode is the f32 → E4M3 rounding of every element.
    let fp8 = Compression {
        scheme: Scheme::Fp8e4m3,
        block: 32,
        scale: ScaleType::Fp32,
    };
    g.bench_function("encode_decode_1Mi_fp16_fp8e4m3", |b| {
        let mut out = vec![0u8; 2 << 20];
        b.iter(|| {
            let w = compressed::encode(&fp8, DType::Fp16, black_box(&payload)).unwrap();
            compressed::decode(&fp8, DType::Fp16, &w, &mut out).unwrap();
        })
    });
    g.bench_function("gradients_1Mi_normal", |b| {
        let mut out = vec![0u8; 2 << 20];
        b.iter(|| {
            compressed::fill_gradients(
                GradientShape::Normal,
                DType::Fp16,
                1,
                0,
                0..1 << 20,
                &mut out,
            )
        })
    });
    g.finish();
}

criterion_group!(benches, reference);
criterion_main!(benches);
