//! Simulation speed: ring AllReduce of 1 GiB on `910b-128x8` (1024 ranks,
//! 2046 steps × 1024 transfers, HCCS inside servers, RoCE between them,
//! 6 HCCL buffer loops), and on `h100-8` for scale. Run: `cargo bench --bench simulate`.

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::cost::estimate;
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
            b.iter(|| estimate(black_box(&s), black_box(&t), 1 << 30, DType::Fp32).unwrap())
        });
    }
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
