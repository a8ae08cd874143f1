//! The simulation-speed figures in wasm (ring AllReduce of 1 GiB on
//! `910b-128x8`, 1024 ranks, with contention, and the scale table below),
//! timed with `performance.now()` in headless Chromium and
//! printed, not asserted (a timing depends on the machine). The same case
//! natively: `cargo bench --bench simulate`.
//!
//! Run (opt-level 3 like the page's engine, `[profile.bench]`):
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//! cargo test --release --target wasm32-unknown-unknown --test wasm_bench -- --nocapture`.

#![cfg(target_arch = "wasm32")]

use ccl_playground::engine::algorithm::{build, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::cost::{estimate_sliced, Slices};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::topology::Topology;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

#[wasm_bindgen_test]
fn ring_allreduce_1gib_on_1024_ranks_in_wasm() {
    let t0 = now_ms();
    let topo = Topology::preset("910b-128x8").unwrap();
    let s = build(Algorithm::Ring, Primitive::AllReduce, 1024).unwrap();
    let built = now_ms() - t0;
    let mut runs = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let t = now_ms();
        let e = estimate_sliced(&s, &topo, 1 << 30, DType::Fp32, Slices::Auto).unwrap();
        runs.push(now_ms() - t);
        last = Some(e);
    }
    let e = last.unwrap();
    // What was simulated: HCCL's auto is one slice, 6 buffer loops of the
    // 2046-step ring, with the RoCE links between servers.
    assert_eq!(e.slicing.slices, 1);
    assert_eq!(e.timeline.loops, 6);
    assert_eq!(e.timeline.steps.len(), 2046);
    assert_eq!(e.timeline.transfers.len(), 2046 * 1024);
    runs.sort_by(f64::total_cmp);
    console_log!(
        "wasm (headless Chromium): topology + ring schedule {:.0} ms; estimate of ring AllReduce 1 GiB on 910b-128x8 (1024 ranks, 6 loops): min {:.0} ms, median {:.0} ms, max {:.0} ms over 3 runs; predicted {:.1} µs",
        built,
        runs[0],
        runs[1],
        runs[2],
        e.time_us
    );
}

/// The scale table in wasm (1 GiB AllReduce at 1024 and 8192 ranks) by the
/// path `cclsim predict` and the bench take (`Plan::headline`; natively:
/// `cargo bench --bench simulate`, group `allreduce_1GiB_at_scale`): each case's answer equals the
/// native one (printed by `cclsim predict --format jsonl` on x86-64, to
/// 1e-9 relative), and its time in wasm is printed (min / median / max
/// over [`RUNS`] runs: most cases take a few ms, where three runs gave a
/// median at the mercy of one collection or memory growth), not asserted.
/// Like criterion's natively, the timed runs come after a warm-up (at
/// least [`WARM_MS`] ms and 3 runs of the case after its first): V8 runs a wasm function
/// first as Liftoff's baseline code and compiles it with TurboFan only once
/// it is hot, in the background, so the first runs of the first case (the
/// ring, 2 ms a run) were timed on baseline code. The first run's time is
/// printed too (`cold`): for the first case, what an estimate costs on
/// code V8 has not optimized yet; later cases share much of their code
/// with the cases before them.
#[wasm_bindgen_test]
fn scale_table_in_wasm() {
    const RUNS: usize = 11;
    const WARM_MS: f64 = 200.0;
    use ccl_playground::engine::config::{AlgoChoice, Config};
    use ccl_playground::engine::plan::Plan;
    let cases: [(&str, &str, usize, &str, f64); 11] = [
        ("ring", "910b-128x8", 1024, "simulated", 843829.3248000089),
        ("mesh", "910b-128x8", 1024, "bound", 125566.08),
        ("nhr", "910b-128x8", 1024, "bound", 143134.15344262295),
        ("nb", "910b-128x8", 1024, "simulated", 114469.32480000006),
        (
            "pipeline",
            "910b-128x8",
            1024,
            "simulated",
            28678.313669945488,
        ),
        ("hier", "910b-128x8", 1024, "simulated", 119466.31935300567),
        (
            "hier-nhr",
            "910b-128x8",
            1024,
            "simulated",
            33066.31935300546,
        ),
        ("rhd", "910b-128x8", 1024, "simulated", 112499.91088961749),
        ("dbtree", "910b-128x8", 1024, "simulated", 1174304.332240437),
        ("ring", "910b-1024x8", 8192, "simulated", 6004881.075201442),
        ("hier", "910b-1024x8", 8192, "simulated", 764678.0697529993),
    ];
    for (algo, topo, ranks, method, native_us) in cases {
        let config = Config {
            topo: topo.into(),
            ranks,
            bytes: 1 << 30,
            primitive: Primitive::AllReduce,
            algo: AlgoChoice::Fixed(Algorithm::from_name(algo).unwrap()),
            ..Config::default()
        };
        let run = || {
            let t = now_ms();
            let p = Plan::headline(&config).unwrap();
            let ms = now_ms() - t;
            assert_eq!(p.method.name(), method, "{algo} on {ranks} ranks");
            let rel = (p.estimate.time_us - native_us).abs() / native_us;
            assert!(
                rel <= 1e-9,
                "{algo} on {ranks} ranks: wasm {} µs, native {native_us} µs",
                p.estimate.time_us
            );
            ms
        };
        let cold = run();
        let (warm0, mut warm_runs) = (now_ms(), 0);
        while warm_runs < 3 || now_ms() - warm0 < WARM_MS {
            run();
            warm_runs += 1;
        }
        let mut runs: Vec<f64> = (0..RUNS).map(|_| run()).collect();
        runs.sort_by(f64::total_cmp);
        console_log!(
            "wasm scale {algo}/{ranks}ranks ({method}): min {:.1} ms, median {:.1} ms, max {:.1} ms over {RUNS} runs after the first run ({cold:.1} ms) and {warm_runs} warm-up runs",
            runs[0],
            runs[RUNS / 2],
            runs[RUNS - 1]
        );
    }
}
