//! `auto` at scale, by the path `cclsim predict --algo auto` takes
//! (`Plan::headline`): 1024 ranks of `910b-128x8` at 1 GiB (HCCL's rule
//! decides, then one estimate), and 2160 ranks of a fitted profile (the
//! measured curve decides and answers: no simulation). Goals: under 1 s
//! and under 2 s. Run: `cargo bench --bench plan`.
//!
//! The 2160-rank profile is the fit of the real A100 2×8 all_gather log
//! (tests/fixtures) with its rank count set to 2160 (540 nodes × 4, the
//! size of a real 540-node job whose log is not in the repository): only
//! the rank count matters for the plan's cost.

use ccl_playground::engine::algorithm::Algorithm;
use ccl_playground::engine::calibrate::Profile;
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::config::{AlgoChoice, Config, MEASURED};
use ccl_playground::engine::formats::{parse_log, Collective};
use ccl_playground::engine::plan::Plan;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn profile_2160() -> Profile {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/nccl-tests/nccl_a100_2node_dgx_ib_allgather_12.txt"
    ))
    .expect("fixture");
    let log = parse_log(&text).expect("log");
    let mut p = Profile::fit_log(&log, Some(&Collective::AllGather), None, "a100").expect("fit");
    p.ranks = 2160;
    p.rows.clear();
    p
}

fn auto_at_scale(c: &mut Criterion) {
    let mut g = c.benchmark_group("auto_at_scale");
    g.sample_size(10);
    let cluster = Config {
        topo: "910b-128x8".into(),
        ranks: 1024,
        bytes: 1 << 30,
        primitive: Primitive::AllReduce,
        algo: AlgoChoice::Auto,
        ..Config::default()
    };
    g.bench_function("910b-128x8/1024ranks/allreduce/1GiB", |b| {
        b.iter(|| Plan::headline(black_box(&cluster)).expect("plan"))
    });
    let fitted = Config {
        topo: MEASURED.into(),
        ranks: 2160,
        bytes: 1 << 30,
        primitive: Primitive::AllGather,
        algo: AlgoChoice::Auto,
        profile: Some(profile_2160()),
        ..Config::default()
    };
    g.bench_function("profile/2160ranks/allgather/1GiB", |b| {
        b.iter(|| Plan::headline(black_box(&fitted)).expect("plan"))
    });
    g.finish();
}

/// The plans the page makes on its main thread at load (`Plan::new` of a
/// drawn configuration, up to 64 ranks): the default link, the 64-rank
/// one of scripts/measure-page.mjs, and 64 ranks on the largest
/// preset (1 024 servers: the bound's walk once listed every port of its
/// switch with a scan per port, 137 ms a plan natively, 360 ms on the
/// page).
fn page_start(c: &mut Criterion) {
    let mut g = c.benchmark_group("page_start");
    g.sample_size(10);
    let cases = [
        ("default", Config::default()),
        (
            "910b-8x8/64ranks",
            Config {
                topo: "910b-8x8".into(),
                ranks: 64,
                ..Config::default()
            },
        ),
        (
            "910b-1024x8/64ranks",
            Config {
                topo: "910b-1024x8".into(),
                ranks: 64,
                ..Config::default()
            },
        ),
    ];
    for (name, config) in cases {
        g.bench_function(name, |b| {
            b.iter(|| Plan::new(black_box(&config)).expect("plan"))
        });
    }
    g.finish();
}

/// What a control change at 1024 ranks waits for in the planner worker
/// (the page's goal: the estimate within 50 ms of a change): `Plan::headline` of
/// `910b-128x8`, 1 GiB AllReduce, with `#algo` set to each algorithm the
/// page's 1024-rank select offers.
fn headline_at_scale(c: &mut Criterion) {
    let mut g = c.benchmark_group("headline_1024ranks");
    g.sample_size(20);
    for algo in [
        "ring", "mesh", "nhr", "nb", "pipeline", "hier", "hier-nhr", "rhd", "dbtree",
    ] {
        let config = Config {
            topo: "910b-128x8".into(),
            ranks: 1024,
            bytes: 1 << 30,
            primitive: Primitive::AllReduce,
            algo: AlgoChoice::Fixed(Algorithm::from_name(algo).expect("algorithm")),
            ..Config::default()
        };
        g.bench_function(algo, |b| {
            b.iter(|| Plan::headline(black_box(&config)).expect("plan"))
        });
    }
    g.finish();
}

criterion_group!(benches, auto_at_scale, page_start, headline_at_scale);
criterion_main!(benches);
