//! Slicing in the cost model (`engine::cost::estimate_sliced`): one slice is
//! today's step-synchronous model exactly; `k` slices pipeline through the
//! steps and equal the pipelined closed forms on uncontended links; the
//! `auto` rule follows NCCL's Simple-protocol slice and HCCL's buffer.

mod common;

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::cost::{
    closed_form_us, estimate, estimate_sliced, estimate_sliced_reference, SliceCap, SliceRule,
    SliceWhy, Slices, MAX_SLICES, SLICE_BUDGET, SLICE_WORK_BUDGET,
};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::schedule::{Schedule, Step, Transfer};
use ccl_playground::engine::topology::Topology;
use common::full_mesh;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

const ALPHA: f64 = 2.0;
const BW: f64 = 10.0; // GB/s: β = 1e-4 µs per byte

fn beta() -> f64 {
    1.0 / (BW * 1e3)
}

/// The full mesh with an HCCL-like staging buffer (too large to loop):
/// one slice in flight per connection (`W = 1`).
fn hccl_mesh(n: usize) -> Topology {
    Topology {
        ccl_buffer_bytes: Some(1 << 40),
        ..full_mesh(n, BW, ALPHA, None)
    }
}

#[test]
fn one_slice_is_exactly_the_unsliced_model() {
    let cases: Vec<(Topology, Algorithm, Primitive, usize, u64)> = vec![
        (
            full_mesh(8, BW, ALPHA, Some(50.0)),
            Algorithm::Ring,
            Primitive::AllReduce,
            8,
            8 << 20,
        ),
        (
            full_mesh(8, BW, ALPHA, None),
            Algorithm::Tree,
            Primitive::Broadcast,
            8,
            4 << 20,
        ),
        (
            Topology::preset("910a-8").unwrap(),
            Algorithm::Mesh,
            Primitive::AllGather,
            8,
            8 << 20,
        ),
        (
            Topology::preset("910b-2x8").unwrap(),
            Algorithm::Hier,
            Primitive::AllReduce,
            16,
            1 << 30,
        ),
        (
            Topology::preset("h100-8").unwrap(),
            Algorithm::Ring,
            Primitive::AllReduce,
            8,
            64 << 20,
        ),
    ];
    for (topo, a, p, n, bytes) in cases {
        let s = algorithm::build(a, p, n).unwrap();
        let e1 = estimate(&s, &topo, bytes, DType::Fp32).unwrap();
        let es = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(1)).unwrap();
        assert_eq!(e1, es, "{a} {p:?} on {}", topo.name);
        assert_eq!(es.slicing.slices, 1);
        // And the uncontended ones still equal the closed forms.
        if topo.name == "test" {
            let cf = closed_form_us(a, p, n, bytes as f64, ALPHA, BW, topo.reduce_gbps);
            assert!(close(e1.time_us, cf), "{a}: {} vs {cf}", e1.time_us);
        }
    }
}

/// A chain broadcast 0 -> 1 -> ... -> p-1, the whole message per hop.
fn chain_broadcast(p: usize) -> Schedule {
    Schedule {
        primitive: Primitive::Broadcast,
        algorithm: "chain".into(),
        ranks: p,
        chunks: p,
        root: 0,
        scratch: 0,
        steps: (0..p - 1)
            .map(|i| Step {
                phase: format!("hop {i}"),
                transfers: vec![Transfer::copy(i, i + 1, 0, p)],
            })
            .collect(),
    }
}

#[test]
fn pipelined_chain_broadcast_equals_its_closed_form() {
    // (k + p - 2)(α + S/k·β): the first slice crosses p-1 hops, the other
    // k-1 follow one slice-time apart.
    let bytes = 4u64 << 20;
    for (p, k) in [(6usize, 4u32), (8, 16), (3, 2), (5, 1)] {
        let topo = hccl_mesh(p);
        let s = chain_broadcast(p);
        let e = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(k)).unwrap();
        let kf = k as f64;
        let want = (kf + p as f64 - 2.0) * (ALPHA + bytes as f64 / kf * beta());
        assert!(
            close(e.time_us, want),
            "p={p} k={k}: {} vs {want}",
            e.time_us
        );
        assert_eq!(e.slicing.slices, k);
    }
}

#[test]
fn pipelined_binomial_broadcast_equals_its_closed_form() {
    // On a full mesh a binomial tree of L = ceil(log2 p) levels pipelines
    // like a chain of L hops: (k + L - 1)(α + S/k·β).
    let bytes = 8u64 << 20;
    for (p, k) in [(8usize, 8u32), (16, 4), (5, 2)] {
        let topo = hccl_mesh(p);
        let s = algorithm::build(Algorithm::Tree, Primitive::Broadcast, p).unwrap();
        let e = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(k)).unwrap();
        let l = p.next_power_of_two().trailing_zeros() as f64;
        let kf = k as f64;
        let want = (kf + l - 1.0) * (ALPHA + bytes as f64 / kf * beta());
        assert!(
            close(e.time_us, want),
            "p={p} k={k}: {} vs {want}",
            e.time_us
        );
        // Much faster than unsliced L(α + Sβ) for a large message.
        let unsliced = l * (ALPHA + bytes as f64 * beta());
        assert!(e.time_us < unsliced);
    }
}

#[test]
fn single_step_algorithms_pay_only_k_alpha_more() {
    // One step, every flow alone on its link: k slices of d = bytes/k·β,
    // W in flight (their α overlaps), data in order: α + k·d +
    // ⌊(k−1)/W⌋·max(0, α − (W−1)·d). HCCL-like W = 1; NCCL-like W = 8 /
    // SLICESTEPS.
    let n = 8;
    let bytes = 8u64 << 20;
    for (topo, a, p, w) in [
        (hccl_mesh(n), Algorithm::Mesh, Primitive::AllGather, 1u32),
        (hccl_mesh(n), Algorithm::Star, Primitive::Broadcast, 1),
        (hccl_mesh(n), Algorithm::Star, Primitive::Scatter, 1),
        (hccl_mesh(n), Algorithm::Mesh, Primitive::AlltoAll, 1),
        (
            full_mesh(n, BW, ALPHA, None),
            Algorithm::Mesh,
            Primitive::AllGather,
            4,
        ),
        (
            full_mesh(n, BW, ALPHA, None),
            Algorithm::Star,
            Primitive::Broadcast,
            8,
        ),
    ] {
        let s = algorithm::build(a, p, n).unwrap();
        assert_eq!(s.steps.len(), 1, "{a} {p:?}");
        let cf = closed_form_us(a, p, n, bytes as f64, ALPHA, BW, None);
        for k in [2u32, 8, 64] {
            let e = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(k)).unwrap();
            assert_eq!(e.slicing.window, w);
            // A transfer's own slices in flight together are not contention.
            assert_eq!(e.timeline.steps[0].max_link_sharing, 1);
            // The single transfer of the busiest link: cf = α + k·d.
            let d = (cf - ALPHA) / k as f64;
            let stall = (ALPHA - (w as f64 - 1.0) * d).max(0.0);
            let want = cf + ((k - 1) / w) as f64 * stall;
            assert!(
                close(e.time_us, want),
                "{a} {p:?} k={k} W={w}: {} vs {want}",
                e.time_us
            );
            assert!(e.time_us <= cf + k as f64 * ALPHA);
        }
    }
}

#[test]
fn sliced_ring_keeps_the_bandwidth_term_and_removes_the_step_barrier() {
    // Every step of a ring uses the same link r -> r+1: pipelining cannot
    // beat the link's bytes, 2(n-1)/n·S·β, but each slice pays α.
    let n = 8;
    let bytes = 64u64 << 20;
    let topo = full_mesh(n, BW, ALPHA, None);
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
    let link_bytes = 2.0 * (n as f64 - 1.0) / n as f64 * bytes as f64 * beta();
    let unsliced = closed_form_us(
        Algorithm::Ring,
        Primitive::AllReduce,
        n,
        bytes as f64,
        ALPHA,
        BW,
        None,
    );
    // k <= W = 4: every slice of a step released at once, sent in order:
    // the next step starts on the first slice, so the ring beats the
    // unsliced one by the fill it overlaps, but never the link's bytes.
    for k in [2u32, 4] {
        let e = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(k)).unwrap();
        assert!(
            e.time_us <= unsliced && e.time_us >= link_bytes,
            "k={k}: {} vs {unsliced}",
            e.time_us
        );
    }
    for k in [8u32, 32] {
        let e = estimate_sliced(&s, &topo, bytes, DType::Fp32, Slices::Fixed(k)).unwrap();
        assert!(
            e.time_us >= link_bytes,
            "k={k}: {} < {link_bytes}",
            e.time_us
        );
        // At most every sub-transfer's α serialised on top of the unsliced time.
        assert!(
            e.time_us <= unsliced + 2.0 * (n as f64 - 1.0) * (k as f64 - 1.0) * ALPHA + 1e-6,
            "k={k}: {} vs {unsliced}",
            e.time_us
        );
        // Steps overlap: step 1 starts before step 0 has ended.
        let st = &e.timeline.steps;
        assert!(st[1].start_us < st[0].end_us, "k={k}: {:?}", &st[..2]);
        // The timeline folds slices: one entry per transfer, all bytes.
        assert_eq!(e.timeline.transfers.len(), s.transfer_count());
        assert_eq!(e.timeline.transfers[0].bytes, bytes / n as u64);
    }
}

#[test]
fn auto_follows_hccl_buffer_and_nccl_slice() {
    // HCCL (910B): one slice; the CCL buffer loops do the pipelining.
    let t = Topology::preset("910b-8").unwrap();
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8).unwrap();
    let e = estimate_sliced(&s, &t, 1 << 30, DType::Fp32, Slices::Auto).unwrap();
    assert_eq!(e.slicing.slices, 1);
    assert_eq!(
        e.slicing.why,
        SliceWhy::of(SliceRule::AutoHccl {
            buffer_bytes: 200 << 20
        })
    );
    assert!(
        e.slicing.why.to_string().contains("HCCL_BUFFSIZE"),
        "{}",
        e.slicing.why
    );
    assert_eq!(
        e,
        estimate(&s, &t, 1 << 30, DType::Fp32)
            .map(|mut x| {
                x.slicing = e.slicing.clone();
                x
            })
            .unwrap()
    );
    // NCCL (h100-8): 1 MiB slices for AllReduce; ring transfers are S/8.
    let h = Topology::preset("h100-8").unwrap();
    let e = estimate_sliced(&s, &h, 1 << 30, DType::Fp32, Slices::Auto).unwrap();
    assert_eq!(e.slicing.slices, 128);
    assert_eq!(
        e.slicing.why.rule,
        SliceRule::AutoNccl {
            slices: 128,
            slice_bytes: 1 << 20,
            largest_bytes: 128 << 20
        }
    );
    // NCCL_STEPS 8 / SLICESTEPS 2.
    assert_eq!(e.slicing.why.window, Some(4));
    assert!(
        e.slicing.why.to_string().contains("1.00 MiB")
            || e.slicing.why.to_string().contains("1 MiB"),
        "{}",
        e.slicing.why
    );
    let small = estimate_sliced(&s, &h, 64 << 10, DType::Fp32, Slices::Auto).unwrap();
    assert_eq!(small.slicing.slices, 1);
    // 512 KiB slices for Broadcast: a 64 MiB tree broadcast moves S per hop.
    let b = algorithm::build(Algorithm::Tree, Primitive::Broadcast, 8).unwrap();
    let e = estimate_sliced(&b, &h, 64 << 20, DType::Fp32, Slices::Auto).unwrap();
    assert_eq!(e.slicing.slices, 128);
    assert_eq!(e.slicing.window, 8);
    // On NVSwitch the root's one uplink carries the message once per tree
    // level, so pipelining cannot beat L·S·β (it only adds ⌈k/W⌉·α per hop).
    let uplink = 3.0 * (64u64 << 20) as f64 / (370.8 * 1e3);
    assert!(e.time_us >= uplink, "{} vs {uplink}", e.time_us);
    // On a full mesh the same tree pipelines: far below unsliced L(α + Sβ).
    let mesh = full_mesh(8, BW, ALPHA, None);
    let e = estimate_sliced(&b, &mesh, 64 << 20, DType::Fp32, Slices::Auto).unwrap();
    let one = estimate(&b, &mesh, 64 << 20, DType::Fp32).unwrap();
    assert_eq!(e.slicing.slices, 128);
    assert!(
        e.time_us < one.time_us / 2.0,
        "{} vs {}",
        e.time_us,
        one.time_us
    );
}

#[test]
fn slices_are_capped_by_the_simulation_budget() {
    let t = Topology::preset("910b-16x8").unwrap();
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 128).unwrap();
    let n = s.transfer_count();
    assert_eq!(n, 254 * 128);
    let e = estimate_sliced(&s, &t, 64 << 20, DType::Fp32, Slices::Fixed(8)).unwrap();
    assert_eq!(e.slicing.slices as usize, SLICE_BUDGET / n);
    // 65 536 sub-transfers / 32 512 transfers = 2 slices.
    assert_eq!(
        e.slicing.why.caps,
        [SliceCap::Transfers {
            slices: 2,
            transfers: n,
            budget: SLICE_BUDGET
        }]
    );
    assert!(
        e.slicing.why.to_string().contains("capped to 2"),
        "{}",
        e.slicing.why
    );
    let t = Topology::preset("910b-128x8").unwrap();
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 1024).unwrap();
    let sl = ccl_playground::engine::cost::choose_slices(&s, &t, 1 << 20, 4, Slices::Fixed(4));
    assert_eq!(sl.slices, 1);
    assert!(sl.why.to_string().contains("capped to 1"), "{}", sl.why);
    // One slice: no window remark.
    assert_eq!(sl.why.window, None);
}

/// Bruck (nb) on 512 ranks with 2 slices: its transfers of different sizes
/// finish one at a time, so the pipelined simulation needs more than
/// [`SLICE_WORK_BUDGET`] flow updates; both simulators then estimate the
/// loop unsliced, to the microsecond of `slices=1`, and say why. rhd, whose
/// transfers finish together, stays sliced on the same machine.
#[test]
fn slices_are_capped_by_the_work_budget() {
    let t = Topology::preset("910b-64x8").unwrap();
    let s = algorithm::build(Algorithm::Nb, Primitive::AllReduce, 512).unwrap();
    let one = estimate_sliced(&s, &t, 1 << 30, DType::Fp32, Slices::Fixed(1)).unwrap();
    for e in [
        estimate_sliced(&s, &t, 1 << 30, DType::Fp32, Slices::Fixed(2)).unwrap(),
        estimate_sliced_reference(&s, &t, 1 << 30, DType::Fp32, Slices::Fixed(2)).unwrap(),
    ] {
        assert_eq!(e.slicing.slices, 1);
        assert_eq!(e.slicing.why.rule, SliceRule::Set { slices: 2 });
        assert_eq!(
            e.slicing.why.caps,
            [SliceCap::FlowUpdates {
                slices: 2,
                budget: SLICE_WORK_BUDGET
            }]
        );
        assert_eq!(e.slicing.why.window, None);
        assert!(
            e.slicing.why.to_string().starts_with("slices=2, as set; capped to 1: the pipelined simulation of 2 slices needs more than 2000000 flow updates"),
            "{}",
            e.slicing.why
        );
        assert!(
            close(e.time_us, one.time_us),
            "{} vs {}",
            e.time_us,
            one.time_us
        );
    }
    assert_eq!(SLICE_WORK_BUDGET, 2_000_000);
    let s = algorithm::build(Algorithm::Rhd, Primitive::AllReduce, 512).unwrap();
    let e = estimate_sliced(&s, &t, 1 << 30, DType::Fp32, Slices::Fixed(2)).unwrap();
    assert_eq!(e.slicing.slices, 2, "{}", e.slicing.why);
}

#[test]
fn slices_parse_and_name() {
    assert_eq!(Slices::parse("auto"), Ok(Slices::Auto));
    assert_eq!(Slices::parse(" 8 "), Ok(Slices::Fixed(8)));
    assert_eq!(Slices::parse("256"), Ok(Slices::Fixed(MAX_SLICES)));
    for bad in ["0", "257", "-1", "x", "", "1.5"] {
        assert_eq!(
            Slices::parse(bad),
            Err("auto or an integer 1..=256".to_string()),
            "{bad}"
        );
    }
    assert_eq!(Slices::Auto.name(), "auto");
    assert_eq!(Slices::Fixed(16).name(), "16");
}

#[test]
fn slicing_pipelines_chained_rings_across_servers() {
    // hier on 2 servers: intra-server mesh, then the inter-server ring; with
    // slices the phases overlap per slice.
    let t = Topology::preset("910b-4x8").unwrap();
    let s = algorithm::build(Algorithm::Hier, Primitive::AllReduce, 32).unwrap();
    let one = estimate(&s, &t, 128 << 20, DType::Fp32).unwrap();
    let eight = estimate_sliced(&s, &t, 128 << 20, DType::Fp32, Slices::Fixed(8)).unwrap();
    assert_eq!(eight.slicing.slices, 8);
    assert!(
        eight.time_us < one.time_us,
        "{} vs {}",
        eight.time_us,
        one.time_us
    );
}
