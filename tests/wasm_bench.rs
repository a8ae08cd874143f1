//! The simulation-speed figure in wasm (issue 4: "simulating ring AllReduce
//! of 1 GiB on `910b-128x8` (1024 ranks) with contention; report the wasm
//! figure too"), timed with `performance.now()` in headless Chromium and
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
