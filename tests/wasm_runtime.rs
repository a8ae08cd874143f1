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
//!   run still works;
//! - several ranks per worker: stand-in workers hosting blocks of ranks (the
//!   pool's placement, a throwing worker naming all its ranks, a worker
//!   that dies silently reported as lost, a plain stall), and real
//!   [`Host`]s (several ranks each) exchanging chunks over real
//!   `MessageChannel`s, equal to `reference_run` bit for bit.
//!
//! Real rank workers need trunk's `worker.js`; see the report for the
//! end-to-end runs.

#![cfg(target_arch = "wasm32")]

use ccl_playground::engine::algorithm::{build, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::dtype::{DType, ReduceOp};
use ccl_playground::engine::execute::reference_run;
use ccl_playground::runtime::browser::codec::*;
use ccl_playground::runtime::browser::pool::{run_on_workers, run_with_script};
use ccl_playground::runtime::host::{Bytes, Host, Report, Sent};
use ccl_playground::runtime::machine::{ChunkHeader, RankMachine};
use ccl_playground::runtime::placement::{Route, WorkerLayout};
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
    let h = Routed {
        from: 17,
        to: 40,
        chunk: ChunkHeader {
            step: 3,
            first: 4,
            count: 2,
        },
    };
    let w = encode_chunk(h, &bytes);
    assert_eq!(w.transfer.length(), 1, "the ArrayBuffer is transferred");
    let (back, data) = decode_chunk(&w.message).unwrap();
    assert_eq!(back, h);
    assert_eq!(data.to_vec(), bytes);
}

/// A chunk encoded into a returned buffer of its length is carried in that
/// very buffer; one of another length is left alone for a fresh one. The
/// pool hands out only exact lengths and keeps at most `CAP` buffers.
#[wasm_bindgen_test]
fn chunks_reuse_returned_buffers_of_their_length() {
    let h = routed(
        1,
        2,
        ChunkHeader {
            step: 0,
            first: 1,
            count: 1,
        },
    );
    let bytes: Vec<u8> = (0..64).collect();
    let same = js_sys::ArrayBuffer::new(64);
    let w = encode_chunk_in(h, &bytes, Some(same.clone()));
    let b = Reflect::get(&w.message, &"b".into()).unwrap();
    assert_eq!(
        b,
        JsValue::from(same.clone()),
        "the returned buffer carries it"
    );
    assert_eq!(Uint8Array::new(&same).to_vec(), bytes);
    let other = js_sys::ArrayBuffer::new(65);
    let w = encode_chunk_in(h, &bytes, Some(other.clone()));
    let b = Reflect::get(&w.message, &"b".into()).unwrap();
    assert_ne!(
        b,
        JsValue::from(other),
        "a buffer of another length is not used"
    );
    let (back, data) = decode_chunk(&w.message).unwrap();
    assert_eq!((back, data.to_vec()), (h, bytes.clone()));
    match decode_port(&w.message).unwrap() {
        PortMessage::Chunk(back, data) => assert_eq!((back, data.to_vec()), (h, bytes)),
        other => panic!("{other:?}"),
    }
    let r = encode_returned(&same);
    assert_eq!(r.transfer.length(), 1, "a returned buffer is transferred");
    match decode_port(&r.message).unwrap() {
        PortMessage::Returned(b) => assert_eq!(JsValue::from(b), JsValue::from(same)),
        other => panic!("{other:?}"),
    }
    let mut pool = BufferPool::default();
    assert!(pool.take(64).is_none());
    for len in 0..BufferPool::CAP + 2 {
        pool.put(js_sys::ArrayBuffer::new(100 + len as u32));
    }
    assert_eq!(pool.len(), BufferPool::CAP);
    assert!(
        pool.take(100).is_none() && pool.take(101).is_none(),
        "the oldest went"
    );
    assert_eq!(pool.take(102).map(|b| b.byte_length()), Some(102));
    assert!(pool.take(102).is_none());
}

/// A consumed `Incoming` joins its worker's pool while the pool keeps
/// fewer than `BufferPool::KEEP` of its length and the worker sends chunks
/// of that length, and goes back to its sender on its port otherwise.
#[wasm_bindgen_test]
async fn a_consumed_chunk_is_kept_or_goes_back_to_its_sender() {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let ch = web_sys::MessageChannel::new().unwrap();
    let got: Rc<RefCell<Vec<u32>>> = Rc::default();
    let g = got.clone();
    let h = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
        match decode_port(&ev.data()).unwrap() {
            PortMessage::Returned(b) => g.borrow_mut().push(b.byte_length()),
            other => panic!("{other:?}"),
        }
    });
    ch.port2().set_onmessage(Some(h.as_ref().unchecked_ref()));
    let pool: Rc<RefCell<BufferPool>> = Rc::default();
    // This worker sends chunks of 40 and 48 bytes (a send asks the pool).
    assert!(pool.borrow_mut().take(40).is_none() && pool.borrow_mut().take(48).is_none());
    let incoming = |buf: &js_sys::ArrayBuffer| {
        Incoming::new(Uint8Array::new(buf), Some(ch.port1()), Some(pool.clone()))
    };
    // Kept: the pool has fewer than KEEP of 48 bytes (another length does
    // not count).
    drop(incoming(&js_sys::ArrayBuffer::new(40)));
    for _ in 0..BufferPool::KEEP {
        drop(incoming(&js_sys::ArrayBuffer::new(48)));
    }
    assert_eq!(pool.borrow().len(), BufferPool::KEEP + 1, "kept here");
    // Handed back, so detached here: a 48-byte buffer (the pool has KEEP
    // of them), then one of a length this worker never sent (however
    // empty the pool).
    for (len, why) in [(48, "KEEP of it kept"), (56, "never sent")] {
        let buf = js_sys::ArrayBuffer::new(len);
        drop(incoming(&buf));
        assert_eq!(buf.byte_length(), 0, "{len} bytes ({why}) go back");
        assert_eq!(pool.borrow().len(), BufferPool::KEEP + 1);
    }
    // Neither pool nor port: dropped.
    let kept = js_sys::ArrayBuffer::new(48);
    drop(Incoming::new(Uint8Array::new(&kept), None, None));
    assert_eq!(kept.byte_length(), 48);
    for _ in 0..200 {
        if got.borrow().len() == 2 {
            break;
        }
        sleep(5).await;
    }
    assert_eq!(*got.borrow(), vec![48, 56]);
    assert_eq!(
        pool.borrow_mut().take(48).map(|b| b.byte_length()),
        Some(48)
    );
    ch.port1().close();
    ch.port2().close();
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
        compressed: None,
    };
    let a = web_sys::MessageChannel::new().unwrap();
    let b = web_sys::MessageChannel::new().unwrap();
    let init = ToWorker::Init {
        worker: 1,
        worker_of: vec![0, 1, 1, 2],
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
        started_ms: Some(2.5),
    };
    let w = encode_to_page(&done, Some(&[1, 2, 3]));
    match decode_to_page(&w.message).unwrap() {
        PageEvent::Done(out, stamps, bytes) => {
            assert_eq!(stamps, (Some(2.5), Some(12.5)));
            assert_eq!(out.rank, 2);
            // The buffer stays in JS memory until the pool takes it in.
            assert!(out.buffer.is_empty());
            assert_eq!(bytes.len(), 3);
            assert_eq!(bytes.to_vec(), vec![1, 2, 3]);
            let mut part = [0u8; 2];
            bytes.copy_part(1, &mut part);
            assert_eq!(part, [2, 3]);
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
    Reflect::set(
        &o,
        &"h".into(),
        &r#"{"from":0,"to":1,"step":0,"first":0,"count":1}"#.into(),
    )
    .unwrap();
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
        let want = reference_run(&s, dtype, op, 42, elems).unwrap();
        let mut ms: Vec<RankMachine<Uint8Array>> = (0..n)
            .map(|r| RankMachine::new(&s, r, dtype, op, 42, elems).unwrap())
            .collect();
        let mut pending: Vec<(usize, usize, JsValue)> = Vec::new();
        for (r, m) in ms.iter_mut().enumerate() {
            m.advance(|to, h, b| pending.push((r, to, encode_chunk(routed(r, to, h), b).message)))
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
            assert_eq!((h.from, h.to), (from, to));
            ms[to].deliver(from, h.chunk, data);
            ms[to]
                .advance(|t, h, b| pending.push((to, t, encode_chunk(routed(to, t, h), b).message)))
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

fn routed(from: usize, to: usize, chunk: ChunkHeader) -> Routed {
    Routed { from, to, chunk }
}

fn request(n: usize, timeout_ms: u32) -> RunRequest {
    RunRequest {
        schedule: build(Algorithm::Ring, Primitive::AllReduce, n).unwrap(),
        dtype: DType::Fp32,
        op: ReduceOp::Sum,
        seed: 1,
        elems: 64,
        timeout_ms,
        compressed: None,
    }
}

/// A stand-in worker script: says ready, then runs `on_init` on the init
/// message with `h` (the header), `w` (its worker index) and `mine` (the
/// ranks it hosts) in scope; `on_ping` on each ping.
fn fake_worker_pinged(on_init: &str, on_ping: &str) -> String {
    let js = format!(
        "onmessage = function (e) {{ var h = JSON.parse(e.data.h); \
         if (h.kind === 'ping') {{ {on_ping} return; }} \
         var w = h.worker, mine = []; h.worker_of.forEach(function (x, r) {{ if (x === w) mine.push(r); }}); \
         {on_init} }}; postMessage({{ h: JSON.stringify({{ kind: 'ready' }}) }});"
    );
    format!(
        "data:text/javascript,{}",
        String::from(js_sys::encode_uri_component(&js))
    )
}

/// [`fake_worker_pinged`] that ignores pings.
fn fake_worker(on_init: &str) -> String {
    fake_worker_pinged(on_init, "")
}

/// JS: post `done` for rank `r` with an 8-byte buffer.
const DONE: &str = "function done(r) { var b = new ArrayBuffer(8);      postMessage({ h: JSON.stringify({ kind: 'done', rank: r, samples: [] }), b: b }, [b]); }";

#[wasm_bindgen_test]
async fn a_throwing_worker_fails_the_run() {
    let outputs = Rc::new(RefCell::new(0));
    let o = outputs.clone();
    let url = fake_worker("throw new Error('boom');");
    let err = run_with_script(&url, request(3, 10_000), move |_, _| *o.borrow_mut() += 1)
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
        "if (mine.indexOf(1) >= 0) postMessage({ h: JSON.stringify({ kind: 'failed', rank: 1, message: 'bad chunk' }) });",
    );
    let err = run_with_script(&url, request(2, 10_000), |_, _| {})
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
        "if (mine.indexOf(0) >= 0) { var b = new ArrayBuffer(8); \
         postMessage({ h: JSON.stringify({ kind: 'done', rank: 0, samples: [[null]] }), b: b }, [b]); }",
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let err = run_with_script(&url, request(3, 300), move |o, _| {
        s.borrow_mut().push(o.rank)
    })
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
    let url = fake_worker(&format!("{DONE} mine.forEach(done);"));
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let summary = run_with_script(&url, request(4, 10_000), move |o, b| {
        s.borrow_mut().push((o.rank, b.len()))
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
    let err = run_with_script("./no-such-worker.js", request(2, 10_000), |_, _| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, RunError::Worker { .. } | RunError::Spawn(_)),
        "{err:?}"
    );
}

#[wasm_bindgen_test]
async fn stand_in_workers_host_blocks_of_ranks() {
    // 10 ranks on 3 workers: ranks 0–3, 4–6, 7–9; each worker reports its own.
    let url = fake_worker(&format!("{DONE} mine.forEach(done);"));
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    run_on_workers(&url, request(10, 10_000), 3, move |o, _| {
        s.borrow_mut().push(o.rank)
    })
    .await
    .unwrap();
    let mut got = seen.borrow().clone();
    got.sort();
    assert_eq!(got, (0..10).collect::<Vec<_>>());

    // A worker reporting a rank it does not host fails the run, naming its ranks.
    let url = fake_worker(&format!(
        "{DONE} if (w === 1) done(0); else mine.forEach(done);"
    ));
    let err = run_on_workers(&url, request(10, 10_000), 3, |_, _| {})
        .await
        .unwrap_err();
    assert_eq!(
        err,
        RunError::Worker {
            rank: 4,
            message: "reported a result for rank 0, which it does not host (worker 1 hosted ranks 4–6; all of them failed)".into()
        }
    );

    // A worker that throws takes all of its ranks down, and says so.
    let url = fake_worker(&format!(
        "{DONE} if (w === 1) throw new Error('boom'); mine.forEach(done);"
    ));
    match run_on_workers(&url, request(8, 10_000), 2, |_, _| {})
        .await
        .unwrap_err()
    {
        RunError::Worker { rank, message } => {
            assert_eq!(rank, 4);
            assert!(message.contains("boom"), "{message}");
            assert!(
                message.ends_with("(worker 1 hosted ranks 4–7; all of them failed)"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // More workers than ranks is refused before anything starts.
    assert!(matches!(
        run_on_workers(&url, request(2, 10_000), 3, |_, _| {}).await,
        Err(RunError::Spawn(_))
    ));
}

/// JS: runs `first`, then every hosted rank `r` of `n` reports that it
/// waits for rank `(r + n - 1) % n` at step 0, then `then`; pings are
/// answered.
fn waiting_worker(first: &str, then: &str) -> String {
    fake_worker_pinged(
        &format!(
            "self.w = w; {first} var n = h.worker_of.length; mine.forEach(function (r) {{ \
             postMessage({{ h: JSON.stringify({{ kind: 'waiting', rank: r, from: (r + n - 1) % n, step: 0 }}) }}); }}); {then}"
        ),
        "postMessage({ h: JSON.stringify({ kind: 'pong', worker: self.w }) });",
    )
}

#[wasm_bindgen_test]
async fn a_silently_dead_worker_is_reported_lost_with_all_its_ranks() {
    // 6 ranks on 3 workers (0–1, 2–3, 4–5); worker 1 closes itself (as the
    // test-only `kill` does) after its ranks said they wait.
    let url = waiting_worker("", "if (w === 1) close();");
    let t0 = js_sys::Date::now();
    let err = run_on_workers(&url, request(6, 20_000), 3, |_, _| {})
        .await
        .unwrap_err();
    let ms = js_sys::Date::now() - t0;
    assert_eq!(
        err,
        RunError::WorkerLost {
            ms: 1000,
            worker: 1,
            ranks: vec![2, 3],
            waits: vec![(0, 5, 0), (1, 0, 0), (4, 3, 0), (5, 4, 0)],
        }
    );
    assert!(
        err.to_string().starts_with(
            "no progress for 1000 ms: the worker hosting ranks 2–3 stopped answering (terminated or crashed), so all its ranks failed with it; rank 0 waits for rank 5 (step 0)"
        ),
        "{err}"
    );
    assert!((1000.0..5000.0).contains(&ms), "{ms} ms");

    // A worker that dies before any of its ranks said anything (as a
    // `kill` in its first drain does) is reported the same way.
    let url = waiting_worker("if (w === 2) { close(); return; }", "");
    let err = run_on_workers(&url, request(6, 20_000), 3, |_, _| {})
        .await
        .unwrap_err();
    assert_eq!(
        err,
        RunError::WorkerLost {
            ms: 1000,
            worker: 2,
            ranks: vec![4, 5],
            waits: vec![(0, 5, 0), (1, 0, 0), (2, 1, 0), (3, 2, 0)],
        }
    );

    // Every worker alive but every rank waiting: a plain stall.
    let url = waiting_worker("", "");
    let err = run_on_workers(&url, request(6, 20_000), 3, |_, _| {})
        .await
        .unwrap_err();
    assert_eq!(
        err,
        RunError::Stalled {
            ms: 1000,
            waits: (0..6).map(|r| (r, (r + 5) % 6, 0)).collect(),
        }
    );
}

/// Waits `ms` ms (a `setTimeout` promise).
async fn sleep(ms: i32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
}

type Hosts = Rc<RefCell<Vec<Host<Incoming>>>>;
type Outs = Rc<RefCell<Vec<Option<Vec<u8>>>>>;
type Pools = Rc<Vec<Rc<RefCell<BufferPool>>>>;

/// Drains host `w`, posting remote chunks on `ports[w][peer]` (in a buffer
/// from `pools[w]` when one was kept or handed back), recording finished ranks;
/// counts local and remote sends, and remote sends in a reused buffer.
fn drain_host(
    hosts: &Hosts,
    ports: &[Vec<Option<web_sys::MessagePort>>],
    outs: &Outs,
    counts: &Rc<RefCell<(usize, usize, usize)>>,
    pools: &Pools,
    w: usize,
) {
    let reports = hosts.borrow_mut()[w].drain(|msg, route, bytes| match route {
        Route::Local => {
            counts.borrow_mut().0 += 1;
            Ok(Sent::Local)
        }
        Route::Remote(to) => {
            counts.borrow_mut().1 += 1;
            let reuse = pools[w].borrow_mut().take(bytes.len());
            counts.borrow_mut().2 += usize::from(reuse.is_some());
            let wire = encode_chunk_in(msg, bytes, reuse);
            ports[w][to]
                .as_ref()
                .ok_or_else(|| format!("no port {w}->{to}"))?
                .post_message_with_transferable(&wire.message, &wire.transfer)
                .map_err(|e| format!("{e:?}"))?;
            Ok(Sent::Handled)
        }
    });
    for r in reports {
        match r {
            Report::Done { rank, buffer, .. } => outs.borrow_mut()[rank] = Some(buffer),
            Report::Waiting { .. } => {}
            other => panic!("host {w}: {other:?}"),
        }
    }
}

/// Several ranks per host, hosts wired by real `MessageChannel`s (one per
/// worker pair, chunks in the real wire format, transferred, and kept or
/// handed back to be reused as the workers do): every rank's output equals
/// the reference executor bit for bit, co-hosted ranks never touch a port,
/// and most of the ring's chunks travel in buffers the receiving host kept
/// (few are handed back).
#[wasm_bindgen_test]
async fn hosts_over_message_channels_equal_reference() {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    for (alg, p, n, workers, dtype) in [
        (Algorithm::Ring, Primitive::AllReduce, 64, 4, DType::Fp32),
        (Algorithm::Mesh, Primitive::AllReduce, 8, 3, DType::Bf16),
        (
            Algorithm::Ring,
            Primitive::ReduceScatter,
            12,
            5,
            DType::Fp16,
        ),
    ] {
        let s = build(alg, p, n).unwrap();
        let elems = 2053;
        let want = reference_run(&s, dtype, ReduceOp::Sum, 42, elems).unwrap();
        let req = RunRequest {
            dtype,
            seed: 42,
            elems,
            ..request(n, 10_000)
        };
        let req = RunRequest {
            schedule: s.clone(),
            ..req
        };
        let placement = WorkerLayout::new(n, workers).unwrap();
        let hosts: Hosts = Rc::new(RefCell::new(
            (0..workers)
                .map(|w| Host::new(placement.clone(), w, |r| req.rank_machine(r)).unwrap())
                .collect(),
        ));
        let mut ports: Vec<Vec<Option<web_sys::MessagePort>>> =
            (0..workers).map(|_| vec![None; workers]).collect();
        let mut inbound: Vec<(usize, web_sys::MessagePort)> = Vec::new();
        for (a, b) in placement.worker_pairs(&s.peer_pairs()) {
            let ch = web_sys::MessageChannel::new().unwrap();
            ports[a][b] = Some(ch.port1());
            ports[b][a] = Some(ch.port2());
            inbound.push((a, ch.port1()));
            inbound.push((b, ch.port2()));
        }
        let ports = Rc::new(ports);
        let outs: Outs = Rc::new(RefCell::new(vec![None; n]));
        let counts = Rc::new(RefCell::new((0usize, 0usize, 0usize)));
        let returned = Rc::new(std::cell::Cell::new(0usize));
        let pools: Pools = Rc::new((0..workers).map(|_| Rc::default()).collect());
        let mut handlers = Vec::new();
        for (w, port) in inbound {
            let (hosts, ports, outs, counts, pools, returned) = (
                hosts.clone(),
                ports.clone(),
                outs.clone(),
                counts.clone(),
                pools.clone(),
                returned.clone(),
            );
            let back = port.clone();
            let h = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |ev: web_sys::MessageEvent| match decode_port(&ev.data()).unwrap() {
                    PortMessage::Chunk(msg, data) => {
                        let data = Incoming::new(data, Some(back.clone()), Some(pools[w].clone()));
                        hosts.borrow_mut()[w]
                            .deliver(msg, Bytes::Wire(data))
                            .unwrap();
                        drain_host(&hosts, &ports, &outs, &counts, &pools, w);
                    }
                    PortMessage::Returned(b) => {
                        returned.set(returned.get() + 1);
                        pools[w].borrow_mut().put(b)
                    }
                },
            );
            port.set_onmessage(Some(h.as_ref().unchecked_ref()));
            handlers.push(h);
        }
        for w in 0..workers {
            drain_host(&hosts, &ports, &outs, &counts, &pools, w);
        }
        for _ in 0..2000 {
            if outs.borrow().iter().all(Option::is_some) {
                break;
            }
            sleep(5).await;
        }
        for (r, want) in want.iter().enumerate() {
            assert_eq!(
                outs.borrow()[r].as_deref(),
                Some(&want[..]),
                "{alg:?} {p:?} n={n} on {workers} workers, rank {r}"
            );
        }
        let transfers: Vec<_> = s.steps.iter().flat_map(|st| &st.transfers).collect();
        let remote = transfers
            .iter()
            .filter(|t| placement.worker_of(t.src) != placement.worker_of(t.dst))
            .count();
        let (local, sent, reused) = *counts.borrow();
        assert_eq!((local, sent), (transfers.len() - remote, remote));
        if alg == Algorithm::Ring && p == Primitive::AllReduce {
            let back = returned.get();
            console_log!(
                "ring: {reused} of {sent} remote chunks in reused buffers, {back} handed back"
            );
            // Measured: 440 of 504 reused, 3-51 handed back by the time
            // the outputs are in (a length a host receives before it has
            // sent one goes back). With the pool ignored on receipt: 136
            // reused, 504 handed back.
            assert!(
                reused > sent / 2 && reused < sent && back < sent / 4,
                "{reused} of {sent} remote chunks in reused buffers, {back} handed back"
            );
        }
        for row in ports.iter() {
            for p in row.iter().flatten() {
                p.close();
            }
        }
        drop(handlers);
    }
}

#[wasm_bindgen_test]
async fn a_busy_worker_with_heartbeats_is_not_taken_for_dead() {
    // Worker 1 computes for 2.5 s without answering pings (a busy event
    // loop) but posts `working` every 200 ms, then finishes its ranks.
    let url = fake_worker_pinged(
        &format!(
            "{DONE} if (w === 1) {{ var t0 = Date.now(), last = t0; \
             while (Date.now() - t0 < 2500) {{ if (Date.now() - last >= 200) {{ last = Date.now(); \
             postMessage({{ h: JSON.stringify({{ kind: 'working', worker: 1 }}) }}); }} }} }} \
             mine.forEach(done);"
        ),
        "",
    );
    let seen = Rc::new(RefCell::new(0));
    let s = seen.clone();
    let t0 = js_sys::Date::now();
    run_on_workers(&url, request(6, 20_000), 3, move |_, _| {
        *s.borrow_mut() += 1
    })
    .await
    .unwrap();
    assert_eq!(*seen.borrow(), 6);
    assert!(js_sys::Date::now() - t0 >= 2500.0);
}

/// The SIMD128 reduce kernels (`--features simd`, as `worker_simd` is
/// built) give the bits of the scalar loops, for every dtype and op, over
/// pseudo-random bytes (with ±0, ±inf, extremes and the wrap-around of the
/// integers among them), a length that leaves a scalar tail, and a
/// misaligned start.
#[cfg(feature = "simd")]
#[wasm_bindgen_test]
fn simd_kernels_match_scalar_bits() {
    use ccl_playground::engine::dtype::{reduce_into, reduce_into_scalar};
    assert!(ccl_playground::runtime::browser::pool::simd_supported());
    // xorshift64*: deterministic bytes.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let specials: [f32; 8] = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        1e-45,
        -1.5,
    ];
    for dtype in DType::ALL {
        for op in ReduceOp::ALL {
            let len = 4 * 1037 + 3 * dtype.size_bytes(); // whole elements, a scalar tail
            let len = len / dtype.size_bytes() * dtype.size_bytes();
            let mut a: Vec<u8> = (0..len + 1).map(|_| next() as u8).collect();
            let mut b: Vec<u8> = (0..len + 1).map(|_| next() as u8).collect();
            if dtype == DType::Fp32 {
                // Finite floats everywhere (inputs never hold NaN), specials in front.
                for (i, c) in a[1..].chunks_exact_mut(4).enumerate() {
                    let v = specials
                        .get(i)
                        .copied()
                        .unwrap_or(((next() % 2001) as f32 - 1000.0) / 7.0);
                    c.copy_from_slice(&v.to_le_bytes());
                }
                for (i, c) in b[1..].chunks_exact_mut(4).enumerate() {
                    let v = if i < 8 {
                        specials[7 - i]
                    } else {
                        ((next() % 2001) as f32 - 1000.0) / 3.0
                    };
                    c.copy_from_slice(&v.to_le_bytes());
                }
            }
            let mut simd = a.clone();
            let mut scalar = a.clone();
            // Start at byte 1: unaligned loads and stores.
            reduce_into(dtype, op, &mut simd[1..], &b[1..]);
            reduce_into_scalar(dtype, op, &mut scalar[1..], &b[1..]);
            assert_eq!(simd, scalar, "{dtype} {op}");
            assert_ne!(simd, a, "{dtype} {op} changed nothing");
        }
    }
}

/// The drawing's coordinates (`ui::format::coord`) read as
/// `format!("{v:.1}")` writes them, away from ties.
#[wasm_bindgen_test]
fn svg_coordinates_have_one_decimal() {
    use ccl_playground::ui::format::coord;
    for (v, s) in [
        (0.0, "0.0"),
        (12.34, "12.3"),
        (12.36, "12.4"),
        (-3.96, "-4.0"),
        (-0.54, "-0.5"),
        (1399.99, "1400.0"),
        (7.0, "7.0"),
        (1e20, "100000000000000000000.0"),
    ] {
        assert_eq!(coord(v), s, "{v}");
    }
    for i in 0..2000 {
        let v = (i as f64 - 1000.0) * 0.731 + 0.013;
        // Ties (-711.25) round away from zero here, to even there.
        if ((v * 10.0).fract().abs() - 0.5).abs() < 1e-6 {
            continue;
        }
        assert_eq!(coord(v), format!("{v:.1}"), "{v}");
    }
}

/// The page's pure helpers, run where the page runs (`ui` is wasm only:
/// a `#[cfg(test)]` module inside it would never be built by
/// `cargo test`).
#[wasm_bindgen_test]
fn rank_choices_offer_every_count_up_to_16_then_powers_of_two() {
    use ccl_playground::ui::topologies::rank_choices;
    assert_eq!(rank_choices(8, 8), (2..=8).collect::<Vec<_>>());
    let big = rank_choices(1024, 1024);
    assert!(big.contains(&16) && big.contains(&64) && big.contains(&1024));
    assert!(!big.contains(&17) && big.contains(&128));
    assert!(rank_choices(1024, 100).contains(&100));
}

#[wasm_bindgen_test]
fn custom_topologies_are_selected_and_dropped_like_presets() {
    use ccl_playground::engine::config::Config;
    use ccl_playground::engine::custom_topology::{CustomTopology, CUSTOM};
    use ccl_playground::ui::topologies::{with_custom, with_topology};
    let t = CustomTopology::parse(CustomTopology::EXAMPLE).unwrap();
    let c = Config {
        primitive: Primitive::Reduce,
        root: 7,
        ..Config::default()
    };
    let on = with_custom(&c, t.clone());
    assert_eq!((on.topo.as_str(), on.ranks, on.root), ("custom", 4, 3));
    assert_eq!(on.custom.as_ref(), Some(&t));
    assert_eq!(with_topology(&on, CUSTOM), on);
    let off = with_topology(&on, "h100-8");
    assert_eq!(
        (off.topo.as_str(), off.ranks, off.custom.is_none()),
        ("h100-8", 8, true)
    );
    let three = with_custom(
        &Config {
            ranks: 3,
            ..Config::default()
        },
        t,
    );
    assert_eq!(three.ranks, 3);
}

#[wasm_bindgen_test]
fn a_profile_moves_the_page_to_the_measured_machine_and_back() {
    use ccl_playground::engine::calibrate::Profile;
    use ccl_playground::engine::config::{Config, MEASURED};
    use ccl_playground::engine::formats::parse_log;
    use ccl_playground::ui::topologies::{with_profile, with_topology, without_profile};
    let log = parse_log(include_str!("fixtures/polaris-2.18/n2_all_reduce.txt")).unwrap();
    let p = Profile::fit_log(&log, None, None, "pasted log").unwrap();
    let c = Config {
        topo: "910b-2x8".into(),
        ranks: 12,
        root: 11,
        primitive: Primitive::Reduce,
        ..Config::default()
    };
    let on = with_profile(&c, &p);
    assert_eq!((on.topo.as_str(), on.ranks, on.root), (MEASURED, 8, 7));
    let used = on.profile.as_ref().unwrap();
    assert!(used.rows.is_empty() && used.physical.is_some());
    // At 540 nodes, then off: the topology and ranks from before.
    let far = Config {
        ranks: 2160,
        ..on.clone()
    };
    let off = without_profile(&far, Some(&c));
    assert_eq!(
        (off.topo.as_str(), off.ranks, off.root),
        ("910b-2x8", 12, 7)
    );
    assert!(off.profile.is_none());
    // A linked profile has no "before": the default machine, all of it.
    let fresh = without_profile(&far, None);
    assert_eq!((fresh.topo.as_str(), fresh.ranks), ("910b-8", 8));
    // Choosing a preset leaves the measured machine's profile behind.
    let h = with_topology(&far, "h100-8");
    assert_eq!((h.topo.as_str(), h.profile.is_none()), ("h100-8", true));
}

#[wasm_bindgen_test]
fn claims_parse_as_relative_time_changes() {
    use ccl_playground::ui::what_if::parse_claim;
    assert_eq!(parse_claim("−73 %"), Ok(-0.73));
    assert_eq!(parse_claim("73%"), Ok(-0.73));
    assert_eq!(parse_claim("-73"), Ok(-0.73));
    assert_eq!(parse_claim("+20%"), Ok(0.2));
    assert!(parse_claim("lots").is_err());
    assert!(parse_claim("150%").is_err());
}

/// The canvas buffer grid (`ui::buffer_canvas`): a point on it is the
/// cell under it (64 chunks on 639 px: 9 px cells, 1 px gaps; rows at a
/// 10 px pitch), and the keys move the cursor within the grid.
#[wasm_bindgen_test]
fn a_point_on_the_canvas_grid_is_the_cell_under_it() {
    use ccl_playground::ui::buffer_canvas::{cell_at, moved, pitch_and_gap};
    assert_eq!(pitch_and_gap(639.0, 64), (10.0, 1.0));
    // 128 chunks on 300 px: a 2.35 px pitch, no gap (cells would be 1.35).
    assert_eq!(pitch_and_gap(300.0, 128), (300.0 / 128.0, 0.0));
    assert_eq!(cell_at(299.0, 0.0, 300.0, 64, 128), Some((0, 127)));
    assert_eq!(cell_at(2.4, 0.0, 300.0, 64, 128), Some((0, 1)));
    assert_eq!(cell_at(0.0, 0.0, 639.0, 64, 64), Some((0, 0)));
    assert_eq!(cell_at(9.5, 0.0, 639.0, 64, 64), Some((0, 0)));
    assert_eq!(cell_at(10.0, 25.0, 639.0, 64, 64), Some((2, 1)));
    assert_eq!(cell_at(638.9, 638.9, 639.0, 64, 64), Some((63, 63)));
    assert_eq!(cell_at(640.5, 0.0, 639.0, 64, 64), None);
    assert_eq!(cell_at(0.0, 640.0, 639.0, 64, 64), None);
    assert_eq!(cell_at(-1.0, 0.0, 639.0, 64, 64), None);
    assert_eq!(moved("ArrowRight", None, 4, 8), Some((0, 0)));
    assert_eq!(moved("x", None, 4, 8), None);
    assert_eq!(moved("ArrowRight", Some((1, 7)), 4, 8), Some((1, 7)));
    assert_eq!(moved("ArrowDown", Some((3, 2)), 4, 8), Some((3, 2)));
    assert_eq!(moved("ArrowUp", Some((0, 2)), 4, 8), Some((0, 2)));
    assert_eq!(moved("ArrowLeft", Some((2, 2)), 4, 8), Some((2, 1)));
    assert_eq!(moved("End", Some((2, 2)), 4, 8), Some((2, 7)));
    assert_eq!(moved("Home", Some((2, 5)), 4, 8), Some((2, 0)));
    assert_eq!(moved("Enter", Some((2, 5)), 4, 8), None);
}

/// Lists drawn over tasks (`ui::deferred::Sliced`): a group larger than
/// the budget is cut into pieces (a 64-rank mesh step: 4 032 transfers),
/// small groups share a task, a piece never splits across tasks, an empty
/// group keeps its place, and every item is in exactly one piece.
#[wasm_bindgen_test]
fn a_sliced_list_cuts_big_groups_and_packs_small_ones() {
    use ccl_playground::ui::deferred::{Piece, Sliced};
    let piece = |group, items| Piece { group, items };
    // The step log of a 64-rank mesh: the initial state, then 2 steps of
    // 4 032 chips, 1 500 a task.
    let s = Sliced::of([0, 4032, 4032], 1500);
    assert_eq!(
        s.pieces,
        vec![
            piece(0, 0..0),
            piece(1, 0..1500),
            piece(1, 1500..3000),
            piece(1, 3000..4032),
            piece(2, 0..1500),
            piece(2, 1500..3000),
            piece(2, 3000..4032),
        ]
    );
    // The empty initial state rides with the first piece.
    assert_eq!(s.ends, vec![2, 3, 4, 5, 6, 7]);
    assert_eq!(
        (s.drawn(0), s.drawn(1), s.drawn(6), s.drawn(99)),
        (0, 2, 7, 7)
    );
    // A 64-rank ring's 126 steps of 64 bars, 400 a task: 6 steps a task.
    let s = Sliced::of(std::iter::repeat_n(64, 126), 400);
    assert_eq!(s.pieces.len(), 126);
    assert_eq!(s.ends.len(), 21);
    assert!(s.ends.iter().all(|e| e % 6 == 0));
    // Uneven groups: no task over the budget unless one piece is alone.
    let sizes = [3, 0, 7, 1, 10, 2, 2, 9];
    let s = Sliced::of(sizes, 4);
    let mut from = 0;
    for &end in &s.ends {
        let items: usize = s.pieces[from..end].iter().map(|p| p.items.len()).sum();
        assert!(items <= 4, "{:?}", &s.pieces[from..end]);
        from = end;
    }
    for (g, &n) in sizes.iter().enumerate() {
        let mine: Vec<_> = s.pieces.iter().filter(|p| p.group == g).collect();
        assert_eq!(mine.iter().map(|p| p.items.len()).sum::<usize>(), n);
        assert!(mine.windows(2).all(|w| w[0].items.end == w[1].items.start));
        assert_eq!(mine[0].items.start, 0);
    }
    assert_eq!(
        Sliced::of([], 4),
        Sliced {
            pieces: vec![],
            ends: vec![]
        }
    );
    assert_eq!(Sliced::of([], 4).drawn(3), 0);
}

/// `ui::deferred::when_idle`, which starts a run's workers: its function
/// runs exactly once, by its timeout at the latest, and not before the
/// call returns (it is queued, never run in the caller's task); the same
/// where the browser has no `requestIdleCallback` (set to `undefined`
/// here, then put back).
#[wasm_bindgen_test]
async fn when_idle_runs_its_function_once_and_later() {
    use ccl_playground::ui::deferred::when_idle;
    let window: wasm_bindgen::JsValue = web_sys::window().unwrap().into();
    let key = wasm_bindgen::JsValue::from_str("requestIdleCallback");
    let original = js_sys::Reflect::get(&window, &key).unwrap();
    assert!(original.is_function());
    let calls = Rc::new(std::cell::Cell::new(0));
    for idle_callback in [true, false] {
        if !idle_callback {
            js_sys::Reflect::set(&window, &key, &wasm_bindgen::JsValue::UNDEFINED).unwrap();
        }
        for timeout_ms in [1, 50] {
            calls.set(0);
            let c = calls.clone();
            when_idle(timeout_ms, move || c.set(c.get() + 1));
            let case = format!("requestIdleCallback {idle_callback}, timeout {timeout_ms} ms");
            assert_eq!(calls.get(), 0, "{case}: ran in the caller's task");
            sleep(timeout_ms as i32 + 200).await;
            assert_eq!(calls.get(), 1, "{case}");
        }
    }
    js_sys::Reflect::set(&window, &key, &original).unwrap();
}
