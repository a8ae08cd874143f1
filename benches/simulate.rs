//! Simulation speed: ring AllReduce of 1 GiB on `910b-128x8` (1024 ranks,
//! 2046 steps × 1024 transfers, HCCS inside servers, RoCE between them,
//! 6 HCCL buffer loops), and on `h100-8` for scale, each with the default
//! slicing (`slices=auto`: 1 slice on the HCCL presets; 128 slices of 1 MiB
//! on `h100-8`, NCCL's rule, which runs the pipelined simulator) and, on
//! `h100-8`, unsliced. Run: `cargo bench --bench simulate`. The wasm figure:
//! `tests/wasm_bench.rs`.

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::cost::{estimate, estimate_sliced, Slices};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::topology::Topology;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn ring_allreduce(c: &mut Criterion) {
    let mut g = c.benchmark_group("ring_allreduce_1GiB");
    g.sample_size(10);
    for (topo, ranks) in [("910b-128x8", 1024usize), ("910b-8", 8), ("h100-8", 8)] {
        let t = Topology::preset(topo).unwrap();
        let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, ranks).unwrap();
        g.bench_function(format!("{topo}/{ranks}ranks"), |b| {
            b.iter(|| {
                estimate_sliced(
                    black_box(&s),
                    black_box(&t),
                    1 << 30,
                    DType::Fp32,
                    Slices::Auto,
                )
                .unwrap()
            })
        });
    }
    let t = Topology::preset("h100-8").unwrap();
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8).unwrap();
    g.bench_function("h100-8/8ranks_unsliced", |b| {
        b.iter(|| estimate(black_box(&s), black_box(&t), 1 << 30, DType::Fp32).unwrap())
    });
    // Contended: mesh AllGather on 910a-8 (16 flows on the PCIe bridge).
    let t = Topology::preset("910a-8").unwrap();
    let s = algorithm::build(Algorithm::Mesh, Primitive::AllGather, 8).unwrap();
    g.bench_function("910a-8/mesh_allgather_contended", |b| {
        b.iter(|| estimate(black_box(&s), black_box(&t), 1 << 30, DType::Fp32).unwrap())
    });
    g.finish();
}

criterion_group!(benches, ring_allreduce);
criterion_main!(benches);
