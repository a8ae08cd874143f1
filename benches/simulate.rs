//! Simulation speed: ring AllReduce of 1 GiB on `910b-128x8` (1024 ranks,
//! 2046 steps × 1024 transfers, HCCS inside servers, RoCE between them,
//! 6 HCCL buffer loops), and on `h100-8` for scale, each with the default
//! slicing (`slices=auto`: 1 slice on the HCCL presets; 128 slices of 1 MiB
//! on `h100-8`, NCCL's rule, which runs the pipelined simulator) and, on
//! `h100-8`, unsliced. Run: `cargo bench --bench simulate`. The wasm figure:
//! `tests/wasm_bench.rs`.
//!
//! `allreduce_1GiB_at_scale`: the scale table, `cclsim predict
//! --topo 910b-128x8 --op allreduce --bytes 1GiB --ranks 1024 --algo X`
//! by the path cclsim takes (`Plan::headline`: build, bound, estimate) for
//! ring, mesh, nhr, nb, pipeline, hier, hier-nhr (what `auto` runs there
//! below 1 MiB a rank), rhd, dbtree, and ring and hier on
//! `910b-1024x8` (8192 ranks); before timing, each
//! case runs once and prints its method (simulated or bound), its time and
//! its peak heap (a counting allocator: bytes allocated at once, not RSS;
//! `/usr/bin/time -v cclsim predict ...` gives the RSS).

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::config::{AlgoChoice, Config};
use ccl_playground::engine::cost::{estimate, estimate_sliced, Slices};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::plan::Plan;
use ccl_playground::engine::topology::Topology;
use criterion::{criterion_group, criterion_main, Criterion};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live now and at most.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                let now = LIVE.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The scale table (module doc): time per case by criterion, method,
/// modelled time and peak heap printed once per case.
fn scale_table(c: &mut Criterion) {
    let mut g = c.benchmark_group("allreduce_1GiB_at_scale");
    g.sample_size(10);
    let cases = [
        "ring", "mesh", "nhr", "nb", "pipeline", "hier", "hier-nhr", "rhd", "dbtree",
    ]
    .map(|a| (a, "910b-128x8", 1024usize))
    .into_iter()
    .chain([("ring", "910b-1024x8", 8192), ("hier", "910b-1024x8", 8192)]);
    for (algo, topo, ranks) in cases {
        let name = format!("{algo}/{ranks}ranks");
        let a = Algorithm::from_name(algo).expect("algorithm");
        let config = Config {
            topo: topo.into(),
            ranks,
            bytes: 1 << 30,
            primitive: Primitive::AllReduce,
            algo: AlgoChoice::Fixed(a),
            ..Config::default()
        };
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let t = std::time::Instant::now();
        let p = Plan::headline(&config).expect("plan");
        let wall = t.elapsed();
        let peak = PEAK.load(Ordering::Relaxed) - base;
        println!(
            "scale {name}: {} {:.2} µs modelled; first run {:.3} s, peak heap {:.1} MiB",
            p.method.name(),
            p.estimate.time_us,
            wall.as_secs_f64(),
            peak as f64 / (1 << 20) as f64
        );
        drop(p);
        g.bench_function(&name, |b| {
            b.iter(|| Plan::headline(black_box(&config)).expect("plan"))
        });
    }
    g.finish();
}

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

criterion_group!(benches, ring_allreduce, scale_table);
criterion_main!(benches);
