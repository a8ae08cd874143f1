//! The Chrome / Perfetto trace export (`engine::formats::trace`): a valid
//! trace-event file whose events are the Timeline's, from the engine (what
//! the page downloads) and from `cclsim predict --trace FILE`.

use ccl_playground::engine::config::Config;
use ccl_playground::engine::cost::Timeline;
use ccl_playground::engine::formats::trace::{chrome_trace, LINKS_PID, SCHEDULE_PID};
use ccl_playground::engine::plan::Plan;
use ccl_playground::engine::schedule::TransferKind;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

fn plan(query: &str) -> Plan {
    let (c, errors) = Config::from_query(query);
    assert!(errors.is_empty(), "{errors:?}");
    Plan::new(&c).unwrap()
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"]
        .as_array()
        .expect("traceEvents is an array")
}

/// The trace-event format's rules for the phases we write: every event has
/// a phase, a numeric pid and a name; timed ones a finite `ts ≥ 0`; async
/// begin and end events pair up by (category, id) with end ≥ begin.
fn assert_valid(v: &Value) {
    let mut open: HashMap<(String, u64), f64> = HashMap::new();
    for e in events(v) {
        let ph = e["ph"].as_str().expect("ph");
        assert!(["M", "b", "e", "C"].contains(&ph), "{e}");
        assert!(e["pid"].is_u64(), "{e}");
        assert!(e["name"].is_string(), "{e}");
        if ph == "M" {
            continue;
        }
        let ts = e["ts"].as_f64().expect("ts");
        assert!(ts.is_finite() && ts >= 0.0, "{e}");
        if ph == "C" {
            assert!(e["args"]["flows"].is_u64(), "{e}");
            continue;
        }
        let key = (
            e["cat"].as_str().expect("cat").to_string(),
            e["id"].as_u64().expect("id"),
        );
        if ph == "b" {
            assert!(open.insert(key, ts).is_none(), "two begins: {e}");
        } else {
            let begin = open.remove(&key).expect("an end without its begin");
            assert!(ts >= begin, "{e}");
        }
    }
    assert!(open.is_empty(), "begins without end: {open:?}");
}

/// Begin and end times of the async slices of one category, by id.
fn slices(v: &Value, cat: &str) -> BTreeMap<u64, (u64, f64, f64)> {
    let mut out: BTreeMap<u64, (u64, f64, f64)> = BTreeMap::new();
    for e in events(v).iter().filter(|e| e["cat"] == cat) {
        let id = e["id"].as_u64().unwrap();
        let ts = e["ts"].as_f64().unwrap();
        let pid = e["pid"].as_u64().unwrap();
        let s = out.entry(id).or_insert((pid, f64::NAN, f64::NAN));
        if e["ph"] == "b" {
            s.1 = ts;
        } else {
            s.2 = ts;
        }
    }
    out
}

fn assert_matches(v: &Value, p: &Plan) {
    let t: &Timeline = &p.estimate.timeline;
    let s = p.drawn_schedule();
    assert!(!t.transfers.is_empty());
    // Steps.
    let steps = slices(v, "step");
    assert_eq!(steps.len(), t.steps.len());
    for (i, st) in t.steps.iter().enumerate() {
        assert_eq!(
            steps[&(i as u64)],
            (SCHEDULE_PID as u64, st.start_us, st.end_us)
        );
    }
    // Sends on the sender's track, reduces on the receiver's.
    let sends = slices(v, "send");
    let reduces = slices(v, "reduce");
    assert_eq!(sends.len(), t.transfers.len());
    let mut n_reduce = 0;
    for (k, tt) in t.transfers.iter().enumerate() {
        let tr = &s.steps[tt.step].transfers[tt.index];
        assert_eq!(sends[&(k as u64)], (tr.src as u64, tt.start_us, tt.end_us));
        if tt.done_us > tt.end_us {
            assert_eq!(tr.kind, TransferKind::Reduce);
            assert_eq!(reduces[&(k as u64)], (tr.dst as u64, tt.end_us, tt.done_us));
            n_reduce += 1;
        }
    }
    assert_eq!(reduces.len(), n_reduce);
    // One process name per rank, plus the steps and the links.
    let names = events(v)
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .count();
    assert_eq!(names, s.ranks + 2);
}

#[test]
fn ring_allreduce_trace_is_its_timeline() {
    let p = plan("topo=910b-8&op=allreduce&algo=ring&bytes=1MiB&dtype=fp32");
    let v = chrome_trace(p.drawn_schedule(), &p.estimate.timeline, &p.topology);
    assert_valid(&v);
    assert_matches(&v, &p);
    // Ring on 8 ranks: 14 steps of 8 transfers, each rank sending one a
    // step on its own track.
    assert_eq!(p.estimate.timeline.steps.len(), 14);
    let sends = slices(&v, "send");
    assert_eq!(sends.len(), 14 * 8);
    for r in 0..8u64 {
        assert_eq!(sends.values().filter(|s| s.0 == r).count(), 14);
    }
    // A ring step loads each of its 8 link directions with one flow: each
    // direction's counter goes 1 then 0, 14 times (one interval a step).
    let counters: Vec<&Value> = events(&v).iter().filter(|e| e["ph"] == "C").collect();
    assert!(counters.iter().all(|e| e["pid"] == LINKS_PID as u64));
    let mut by_link: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in &counters {
        by_link
            .entry(e["name"].as_str().unwrap())
            .or_default()
            .push(e["args"]["flows"].as_u64().unwrap());
    }
    assert_eq!(by_link.len(), 8, "{:?}", by_link.keys());
    assert!(
        by_link.contains_key("HCCS NPU0→NPU1"),
        "{:?}",
        by_link.keys()
    );
    for (name, flows) in &by_link {
        assert_eq!(flows.len(), 2 * 14, "{name}");
        assert!(flows.chunks(2).all(|w| w == [1, 0]), "{name}: {flows:?}");
    }
}

#[test]
fn contended_link_counter_counts_its_flows() {
    // 910a-8's mesh AllGather shares the PCIe bridge between the two
    // 4-NPU groups: the bridge's counter shows more than one flow.
    let p = plan("topo=910a-8&op=allgather&algo=mesh&bytes=1MiB");
    let v = chrome_trace(p.drawn_schedule(), &p.estimate.timeline, &p.topology);
    assert_valid(&v);
    assert_matches(&v, &p);
    let most = p
        .estimate
        .timeline
        .link_busy
        .iter()
        .map(|b| b.flows as u64)
        .max()
        .unwrap();
    assert!(most > 1);
    let peak = events(&v)
        .iter()
        .filter(|e| e["ph"] == "C")
        .map(|e| e["args"]["flows"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(peak >= most, "peak {peak} < {most}");
}

#[test]
fn cclsim_predict_trace_writes_the_pages_trace() {
    let dir = std::env::temp_dir().join(format!("ccl-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cclsim"))
        .args([
            "predict",
            "--topo",
            "910b-4x8",
            "--op",
            "allgather",
            "--algo",
            "hier",
            "--bytes",
            "4MiB",
            "--trace",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_valid(&v);
    let p = plan("topo=910b-4x8&op=allgather&algo=hier&bytes=4MiB");
    assert_matches(&v, &p);
    assert_eq!(
        v,
        chrome_trace(p.drawn_schedule(), &p.estimate.timeline, &p.topology)
    );
    // An unwritable path is an error naming the flag, not a panic.
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_cclsim"))
        .args([
            "predict",
            "--topo",
            "910b-8",
            "--op",
            "allreduce",
            "--bytes",
            "1MiB",
        ])
        .args(["--trace", "/nonexistent-dir/t.json"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("--trace /nonexistent-dir/t.json"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reduces_show_on_the_receivers_track() {
    // With a reduce throughput (γ), each reduce-scatter transfer of a ring
    // ends with a reduce on the receiver: 7 steps × 8 ranks of them.
    let p = plan("topo=910b-8&op=allreduce&algo=ring&bytes=1MiB&dtype=fp32");
    let mut topo = p.topology.clone();
    topo.reduce_gbps = Some(100.0);
    let e = ccl_playground::engine::cost::estimate(
        p.drawn_schedule(),
        &topo,
        1 << 20,
        ccl_playground::engine::dtype::DType::Fp32,
    )
    .unwrap();
    let v = chrome_trace(p.drawn_schedule(), &e.timeline, &topo);
    assert_valid(&v);
    let reduces = slices(&v, "reduce");
    assert_eq!(reduces.len(), 7 * 8);
    // 1 MiB / 8 chunks = 131072 B reduced at 100 GB/s: 1.31072 µs each.
    for (k, (pid, b, end)) in &reduces {
        let t = &e.timeline.transfers[*k as usize];
        let tr = &p.drawn_schedule().steps[t.step].transfers[t.index];
        assert_eq!(*pid, tr.dst as u64);
        assert!((end - b - 1.31072).abs() < 1e-9, "{k}: {}", end - b);
    }
}
