//! The fast simulator (`cost::estimate_sliced`, `cost::estimate_recorded`)
//! equals the straightforward one kept as the reference
//! (`cost::reference::estimate_sliced_reference`) to 1e-9 relative: total
//! time, every step's start, end and sharing, every transfer's timing and
//! every link interval, over the algorithm catalogue (every algorithm ×
//! primitive that builds) at small rank counts on the presets (one HCCS
//! server, four servers over RoCE, H100 NVSwitch, the contended 910A PCIe
//! bridge), unsliced and sliced, at sizes that fit one buffer loop, that
//! do not divide evenly, and that need several loops.
#![cfg(not(target_arch = "wasm32"))]

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::cost::{
    estimate_recorded, estimate_sliced, estimate_sliced_reference, Estimate, Record, Slices,
};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::schedule::Schedule;
use ccl_playground::engine::topology::Topology;

const REL: f64 = 1e-9;

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= REL * a.abs().max(b.abs()) + 1e-12
}

/// Compares `fast` with `reference` field by field; the first difference,
/// named, or `None`.
fn difference(fast: &Estimate, reference: &Estimate) -> Option<String> {
    if !close(fast.time_us, reference.time_us) {
        return Some(format!("time {} vs {}", fast.time_us, reference.time_us));
    }
    if fast.slicing != reference.slicing {
        return Some("slicing".into());
    }
    let (f, r) = (&fast.timeline, &reference.timeline);
    if (f.loops, f.loop_bytes) != (r.loops, r.loop_bytes) {
        return Some("loops".into());
    }
    if f.steps.len() != r.steps.len() {
        return Some("step count".into());
    }
    for (i, (a, b)) in f.steps.iter().zip(&r.steps).enumerate() {
        if !close(a.start_us, b.start_us)
            || !close(a.end_us, b.end_us)
            || a.max_link_sharing != b.max_link_sharing
        {
            return Some(format!("step {i}: {a:?} vs {b:?}"));
        }
    }
    if f.routes != r.routes {
        return Some("routes".into());
    }
    if f.transfers.len() != r.transfers.len() {
        return Some("transfer count".into());
    }
    for (a, b) in f.transfers.iter().zip(&r.transfers) {
        if (a.step, a.index, a.bytes, a.link, a.route)
            != (b.step, b.index, b.bytes, b.link, b.route)
            || !close(a.start_us, b.start_us)
            || !close(a.end_us, b.end_us)
            || !close(a.done_us, b.done_us)
        {
            return Some(format!("transfer {a:?} vs {b:?}"));
        }
    }
    if f.link_busy.len() != r.link_busy.len() {
        return Some("link interval count".into());
    }
    for (a, b) in f.link_busy.iter().zip(&r.link_busy) {
        if (a.link, a.forward, a.step, a.flows) != (b.link, b.forward, b.step, b.flows)
            || !close(a.start_us, b.start_us)
            || !close(a.end_us, b.end_us)
        {
            return Some(format!("link interval {a:?} vs {b:?}"));
        }
    }
    None
}

/// Every (algorithm, primitive, ranks, root) that builds on `topo` for the
/// given rank counts, with its schedule.
fn catalogue(topo: &Topology, ranks: &[usize]) -> Vec<(String, Schedule)> {
    let mut out = Vec::new();
    for &n in ranks {
        if n > topo.devices.len() {
            continue;
        }
        let nodes = topo.nodes_of(n);
        for a in Algorithm::ALL {
            for p in Primitive::ALL {
                if !a.supports(p, n) {
                    continue;
                }
                let roots: Vec<usize> = if p.rooted() { vec![0, n - 1] } else { vec![0] };
                for root in roots {
                    if let Ok(s) = algorithm::build_on(a, p, n, root, &nodes) {
                        out.push((format!("{} {} n={n} root={root}", a.name(), p.name()), s));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn fast_simulator_equals_the_reference_over_the_catalogue() {
    let presets: [(&str, &[usize]); 6] = [
        ("910b-8", &[2, 3, 4, 8]),
        ("910b-2x8", &[16]),
        ("910b-4x8", &[3, 8, 16, 32]),
        ("h100-8", &[2, 3, 4, 8]),
        ("910a-8", &[2, 4, 8]),
        ("910b-16x8", &[128]),
    ];
    // One loop; uneven chunks; several HCCL buffer loops (200 MiB).
    let sizes: [u64; 3] = [4096, (1 << 20) + 12, 300 << 20];
    let slicings = [Slices::Fixed(1), Slices::Auto, Slices::Fixed(4)];
    // 128 ranks: unsliced only (the reference's contended mesh steps are
    // slow there, and the sliced path is covered at the smaller counts).
    let big = |name: &str| name == "910b-16x8";
    let mut compared = 0;
    let mut failures = Vec::new();
    for (name, ranks) in presets {
        let topo = Topology::preset(name).unwrap();
        let cases = catalogue(&topo, ranks);
        assert!(!cases.is_empty(), "{name}: nothing builds");
        for (what, s) in &cases {
            for bytes in sizes {
                for slices in slicings {
                    if big(name) && slices != Slices::Fixed(1) {
                        continue;
                    }
                    let f = estimate_sliced(s, &topo, bytes, DType::Fp32, slices).unwrap();
                    let r =
                        estimate_sliced_reference(s, &topo, bytes, DType::Fp32, slices).unwrap();
                    compared += 1;
                    if let Some(d) = difference(&f, &r) {
                        failures.push(format!("{name} {what} {bytes} B {slices:?}: {d}"));
                    }
                    // Steps only: the same times, nothing per transfer.
                    let q = estimate_recorded(s, &topo, bytes, DType::Fp32, slices, Record::Steps)
                        .unwrap();
                    assert_eq!(q.time_us, f.time_us, "{name} {what}");
                    assert_eq!(q.timeline.steps, f.timeline.steps, "{name} {what}");
                    assert!(q.timeline.transfers.is_empty() && q.timeline.link_busy.is_empty());
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    assert!(compared > 2000, "only {compared} estimates compared");
}

/// The contended 910A bridge: the fast path's level-by-level rates give the
/// reference's figures (16 flows over the PCIe bridge in mesh AllGather).
#[test]
fn contended_mesh_allgather_on_910a_equals_the_reference() {
    let topo = Topology::preset("910a-8").unwrap();
    let s = algorithm::build(Algorithm::Mesh, Primitive::AllGather, 8).unwrap();
    let f = estimate_sliced(&s, &topo, 1 << 30, DType::Fp32, Slices::Fixed(1)).unwrap();
    let r = estimate_sliced_reference(&s, &topo, 1 << 30, DType::Fp32, Slices::Fixed(1)).unwrap();
    assert_eq!(difference(&f, &r), None);
    assert!(f.timeline.steps[0].max_link_sharing > 1);
    assert!(f.time_us > 0.0);
}

/// Bruck (NB) on 256 ranks of 32 servers: the wrapped ranks send two
/// messages of different sizes down one route, so most steps are
/// contended, in hundreds of separate groups of flows (`cost::fast`'s
/// contention by groups); the figures are the reference's.
#[test]
fn contended_bruck_at_256_ranks_equals_the_reference() {
    let topo = Topology::preset("910b-32x8").unwrap();
    let s = algorithm::build(Algorithm::Nb, Primitive::AllReduce, 256).unwrap();
    for bytes in [1 << 20, 1 << 30] {
        let f = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(1)).unwrap();
        let r = estimate_sliced_reference(&s, &topo, bytes, DType::Fp32, Slices::Fixed(1)).unwrap();
        assert_eq!(difference(&f, &r), None, "{bytes} B");
        let contended = f
            .timeline
            .steps
            .iter()
            .filter(|s| s.max_link_sharing > 1)
            .count();
        assert!(contended >= 8, "{contended} contended steps");
    }
}

/// HCCL's hierarchy with NHR between servers on 256 ranks of 32 servers:
/// each NHR step sends a rank's strided blocks to its peer as runs of
/// equal transfers down one route, which the fast simulator shares as one
/// flow class of that many flows (`cost::fast`); every figure, each
/// transfer's too, is the reference's, where each run is its own flows.
#[test]
fn nhr_runs_as_flow_classes_equal_the_reference() {
    let topo = Topology::preset("910b-32x8").unwrap();
    let nodes = topo.nodes_of(256);
    let s = algorithm::build_on(Algorithm::HierNhr, Primitive::AllReduce, 256, 0, &nodes).unwrap();
    // Runs of equal consecutive transfers between one pair: what makes a
    // class of more than one flow.
    let runs = s
        .steps
        .iter()
        .flat_map(|st| st.transfers.windows(2))
        .filter(|w| (w[0].src, w[0].dst, w[0].count) == (w[1].src, w[1].dst, w[1].count))
        .count();
    assert!(runs > 1000, "{runs} repeated transfers");
    for bytes in [1 << 20, (1 << 30) + 12] {
        let f = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(1)).unwrap();
        let r = estimate_sliced_reference(&s, &topo, bytes, DType::Fp32, Slices::Fixed(1)).unwrap();
        assert_eq!(difference(&f, &r), None, "{bytes} B");
        assert!(f.timeline.steps.iter().any(|s| s.max_link_sharing > 1));
    }
}
