//! Runtime tests in headless Chromium (wasm-bindgen-test):
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//! cargo test --target wasm32-unknown-unknown --test wasm_runtime`.
//!
//! - the JS codec round-trips (chunks, init with real ports, done/failed);
//! - every rank's [`RankMachine`] driven through the real JS wire format (no
//!   workers) equals `reference_run` bit for bit;
//! - the pool's fault paths with stand-in workers (`data:` URL scripts): a
//!   worker that throws, one that reports failure, one that never finishes
//!   (timeout), a script that does not exist; and that a run after a failed
//!   run still works.
//!
//! Real rank workers need trunk's `worker.js`; see the report for the
//! end-to-end runs.

#![cfg(target_arch = "wasm32")]

use ccl_playground::engine::algorithm::{build, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::dtype::{DType, ReduceOp};
use ccl_playground::engine::execute::reference_run;
use ccl_playground::runtime::machine::{ChunkHeader, RankMachine};
use ccl_playground::runtime::pool::run_with_script;
use ccl_playground::runtime::protocol::*;
use js_sys::{Object, Reflect, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn chunk_codec_round_trips_and_transfers() {
    let bytes: Vec<u8> = (0..=255).collect();
    let h = ChunkHeader {
        step: 3,
        first: 4,
        count: 2,
    };
    let w = encode_chunk(h, &bytes);
    assert_eq!(w.transfer.length(), 1, "the ArrayBuffer is transferred");
    let (back, data) = decode_chunk(&w.message).unwrap();
    assert_eq!(back, h);
    assert_eq!(data.to_vec(), bytes);
}

#[wasm_bindgen_test]
fn init_codec_carries_ports() {
    let request = RunRequest {
        schedule: build(Algorithm::Mesh, Primitive::AllReduce, 3).unwrap(),
        dtype: DType::Fp16,
        op: ReduceOp::Prod,
        seed: 9,
        elems: 100,
        timeout_ms: 1000,
    };
    let a = web_sys::MessageChannel::new().unwrap();
    let b = web_sys::MessageChannel::new().unwrap();
    let init = ToWorker::Init {
        rank: 1,
        request,
        peers: vec![0, 2],
        fault: None,
    };
    let w = encode_to_worker(&init, &[a.port1(), b.port2()]);
    assert_eq!(w.transfer.length(), 2);
    let (back, ports) = decode_to_worker(&w.message).unwrap();
    assert_eq!(back, init);
    assert_eq!(ports.len(), 2);

    // Ports missing for the listed peers.
    let w = encode_to_worker(&init, &[a.port1()]);
    assert_eq!(
        decode_to_worker(&w.message).unwrap_err(),
        CodecError::Ports { ports: 1, peers: 2 }
    );
}

#[wasm_bindgen_test]
fn page_codec_round_trips() {
    let samples = vec![
        vec![Some(1.25), None],
        vec![Some(f64::NEG_INFINITY), Some(-0.0)],
    ];
    let done = ToPage::Done {
        rank: 2,
        samples: samples_to_bits(&samples),
        finished_ms: Some(12.5),
    };
    let w = encode_to_page(&done, Some(&[1, 2, 3]));
    match decode_to_page(&w.message).unwrap() {
        PageEvent::Done(out, finished_ms) => {
            assert_eq!(finished_ms, Some(12.5));
            assert_eq!(out.rank, 2);
            assert_eq!(out.buffer, vec![1, 2, 3]);
            assert_eq!(samples_to_bits(&out.samples), samples_to_bits(&samples));
        }
        other => panic!("{other:?}"),
    }
    let w = encode_to_page(
        &ToPage::Failed {
            rank: Some(1),
            message: "x".into(),
        },
        None,
    );
    assert!(matches!(
        decode_to_page(&w.message).unwrap(),
        PageEvent::Failed { rank: Some(1), .. }
    ));
    let w = encode_to_page(&ToPage::Ready, None);
    assert!(matches!(
        decode_to_page(&w.message).unwrap(),
        PageEvent::Ready
    ));
}

#[wasm_bindgen_test]
fn bad_messages_are_codec_errors() {
    assert_eq!(
        decode_chunk(&JsValue::from(5)).unwrap_err(),
        CodecError::NoHeader
    );
    assert_eq!(
        decode_chunk(&Object::new().into()).unwrap_err(),
        CodecError::NoHeader
    );
    let o = Object::new();
    Reflect::set(&o, &"h".into(), &r#"{"step":0,"first":0,"count":1}"#.into()).unwrap();
    assert_eq!(
        decode_chunk(&o.clone().into()).unwrap_err(),
        CodecError::NoBytes { what: "chunk" }
    );
    Reflect::set(&o, &"h".into(), &"[1,2".into()).unwrap();
    assert!(matches!(
        decode_chunk(&o.into()),
        Err(CodecError::BadHeader { what: "chunk", .. })
    ));
    let o = Object::new();
    Reflect::set(
        &o,
        &"h".into(),
        &r#"{"kind":"done","rank":0,"samples":[]}"#.into(),
    )
    .unwrap();
    assert_eq!(
        decode_to_page(&o.into()).unwrap_err(),
        CodecError::NoBytes { what: "done" }
    );
}

/// Every rank's machine, messages passed through the JS wire format in a
/// scrambled (but per-pair FIFO) order, equals the reference executor.
#[wasm_bindgen_test]
fn machines_over_the_wire_equal_reference() {
    for (alg, p, n, dtype, op) in [
        (
            Algorithm::Ring,
            Primitive::AllReduce,
            8,
            DType::Fp32,
            ReduceOp::Sum,
        ),
        (
            Algorithm::Mesh,
            Primitive::AllReduce,
            4,
            DType::Bf16,
            ReduceOp::Prod,
        ),
        (
            Algorithm::Ring,
            Primitive::ReduceScatter,
            5,
            DType::Fp16,
            ReduceOp::Sum,
        ),
        (
            Algorithm::Mesh,
            Primitive::AllGather,
            3,
            DType::Int8,
            ReduceOp::Max,
        ),
    ] {
        let s = build(alg, p, n).unwrap();
        let elems = 4099;
        let want = reference_run(&s, dtype, op, 42, elems);
        let mut ms: Vec<RankMachine<Uint8Array>> = (0..n)
            .map(|r| RankMachine::new(&s, r, dtype, op, 42, elems).unwrap())
            .collect();
        let mut pending: Vec<(usize, usize, JsValue)> = Vec::new();
        for (r, m) in ms.iter_mut().enumerate() {
            m.advance(|to, h, b| pending.push((r, to, encode_chunk(h, b).message)))
                .unwrap();
        }
        let mut k = 0usize;
        while !pending.is_empty() {
            // Deliver the newest message whose pair has nothing older pending.
            k += 1;
            let heads: Vec<usize> = (0..pending.len())
                .filter(|&i| {
                    !pending[..i]
                        .iter()
                        .any(|q| q.0 == pending[i].0 && q.1 == pending[i].1)
                })
                .collect();
            let (from, to, msg) = pending.remove(heads[(k * 7) % heads.len()]);
            let (h, data) = decode_chunk(&msg).unwrap();
            ms[to].deliver(from, h, data);
            ms[to]
                .advance(|t, h, b| pending.push((to, t, encode_chunk(h, b).message)))
                .unwrap();
        }
        for (r, m) in ms.into_iter().enumerate() {
            assert!(m.is_done());
            let (buf, samples) = m.into_output();
            assert_eq!(buf, want[r], "{alg:?} {p:?} n={n} rank {r}");
            assert_eq!(samples.len(), s.steps.len() + 1);
        }
    }
}

fn request(n: usize, timeout_ms: u32) -> RunRequest {
    RunRequest {
        schedule: build(Algorithm::Ring, Primitive::AllReduce, n).unwrap(),
        dtype: DType::Fp32,
        op: ReduceOp::Sum,
        seed: 1,
        elems: 64,
        timeout_ms,
    }
}

/// A stand-in worker script: says ready, then runs `on_init` on the init message.
fn fake_worker(on_init: &str) -> String {
    let js = format!(
        "onmessage = function (e) {{ {on_init} }}; postMessage({{ h: JSON.stringify({{ kind: 'ready' }}) }});"
    );
    format!(
        "data:text/javascript,{}",
        String::from(js_sys::encode_uri_component(&js))
    )
}

#[wasm_bindgen_test]
async fn a_throwing_worker_fails_the_run() {
    let outputs = Rc::new(RefCell::new(0));
    let o = outputs.clone();
    let url = fake_worker("throw new Error('boom');");
    let err = run_with_script(&url, request(3, 10_000), move |_| *o.borrow_mut() += 1)
        .await
        .unwrap_err();
    match err {
        RunError::Worker { rank, message } => {
            assert!(rank < 3);
            assert!(message.contains("boom"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(*outputs.borrow(), 0);
}

#[wasm_bindgen_test]
async fn a_reported_failure_names_the_rank() {
    let url = fake_worker(
        "var r = JSON.parse(e.data.h).rank; if (r === 1) postMessage({ h: JSON.stringify({ kind: 'failed', rank: r, message: 'bad chunk' }) });",
    );
    let err = run_with_script(&url, request(2, 10_000), |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err,
        RunError::Worker {
            rank: 1,
            message: "bad chunk".into()
        }
    );
}

#[wasm_bindgen_test]
async fn a_stuck_run_times_out_then_the_next_run_works() {
    // Rank 0 finishes (an empty buffer is fine for the pool), the others hang.
    let url = fake_worker(
        "var r = JSON.parse(e.data.h).rank; if (r === 0) { var b = new ArrayBuffer(8); \
         postMessage({ h: JSON.stringify({ kind: 'done', rank: 0, samples: [[null]] }), b: b }, [b]); }",
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let err = run_with_script(&url, request(3, 300), move |o| s.borrow_mut().push(o.rank))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        RunError::Timeout {
            ms: 300,
            waiting: vec![1, 2]
        }
    );
    assert_eq!(*seen.borrow(), vec![0]);

    // Every rank finishes: Ok, one output per rank.
    let url = fake_worker(
        "var r = JSON.parse(e.data.h).rank; var b = new ArrayBuffer(8); \
         postMessage({ h: JSON.stringify({ kind: 'done', rank: r, samples: [] }), b: b }, [b]);",
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let summary = run_with_script(&url, request(4, 10_000), move |o| {
        s.borrow_mut().push((o.rank, o.buffer.len()))
    })
    .await
    .unwrap();
    assert!(summary.wall_ms >= 0.0);
    let mut got = seen.borrow().clone();
    got.sort();
    assert_eq!(got, vec![(0, 8), (1, 8), (2, 8), (3, 8)]);
}

#[wasm_bindgen_test]
async fn a_missing_worker_script_is_a_worker_error() {
    let err = run_with_script("./no-such-worker.js", request(2, 10_000), |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, RunError::Worker { .. } | RunError::Spawn(_)),
        "{err:?}"
    );
}
