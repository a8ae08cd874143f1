//! The event-driven cost model on contended topologies: max-min fair sharing,
//! routes through switches, link busy intervals, buffer loops.

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::cost::{closed_form_us, estimate};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::schedule::{Schedule, Step, Transfer, TransferKind};
use ccl_playground::engine::topology::{Device, Link, LinkKind, Topology};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn mesh_on_910a_shows_contention_on_the_pcie_bridge() {
    let topo = Topology::preset("910a-8").unwrap();
    let s = algorithm::build(Algorithm::Mesh, Primitive::AllGather, 8).unwrap();
    let bytes = 8u64 << 20;
    let e = estimate(&s, &topo, bytes, DType::Fp32).unwrap();
    // 16 flows (4 senders × 4 receivers) cross the bridge PCIe0 -> PCIe1 and
    // share its 27.2 GB/s; each pays α = 3 PCIe hops × 1.7 µs.
    let chunk = (bytes / 8) as f64;
    let across = 3.0 * 1.7 + 16.0 * chunk / 27.2e3;
    let inside = 3.4 + chunk / 10e3;
    assert_eq!(e.timeline.steps[0].max_link_sharing, 16);
    assert!(close(e.time_us, across), "{} vs {across}", e.time_us);
    assert!(across > 5.0 * inside);
    // The bridge's busy interval, both directions, 16 flows each.
    let bridge = topo.links.len() - 1;
    let busy: Vec<_> = e
        .timeline
        .link_busy
        .iter()
        .filter(|b| b.link == bridge)
        .collect();
    assert_eq!(busy.len(), 2);
    for b in busy {
        assert_eq!(b.flows, 16);
        assert!(close(b.start_us, 5.1) && close(b.end_us, across));
    }
    // An intra-group transfer is not slowed by the bridge.
    let t01 = e
        .timeline
        .transfers
        .iter()
        .find(|t| s.steps[0].transfers[t.index].src == 0 && s.steps[0].transfers[t.index].dst == 1)
        .unwrap();
    assert!(close(t01.end_us, inside));
}

#[test]
fn ring_on_910a_uses_each_bridge_direction_once() {
    // Ring traffic 3 -> 4 and 7 -> 0 crosses the bridge in opposite
    // directions: full duplex, no sharing; the HCCS hops (10 GB/s) dominate.
    let topo = Topology::preset("910a-8").unwrap();
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8).unwrap();
    let bytes = 64u64 << 20;
    let e = estimate(&s, &topo, bytes, DType::Fp32).unwrap();
    assert!(e.timeline.steps.iter().all(|st| st.max_link_sharing == 1));
    let want = closed_form_us(
        Algorithm::Ring,
        Primitive::AllReduce,
        8,
        bytes as f64,
        3.4,
        10.0,
        None,
    );
    assert!(close(e.time_us, want), "{} vs {want}", e.time_us);
}

#[test]
fn many_flows_on_one_roce_port() {
    // 2 servers × 8: in mesh AllGather every NPU sends 8 chunks over its one
    // RoCE port (20 GB/s, α 60 µs) and receives 8 over its other direction.
    let topo = Topology::preset("910b-2x8").unwrap();
    let s = algorithm::build(Algorithm::Mesh, Primitive::AllGather, 16).unwrap();
    let bytes = 16u64 << 20;
    let e = estimate(&s, &topo, bytes, DType::Fp32).unwrap();
    let chunk = (bytes / 16) as f64;
    assert_eq!(e.timeline.steps[0].max_link_sharing, 8);
    assert!(close(e.time_us, 60.0 + 8.0 * chunk / 20e3), "{}", e.time_us);
}

fn line(n: usize, bw: f64, lat: f64) -> Topology {
    Topology {
        name: "pair".into(),
        title: "pair".into(),
        devices: (0..n)
            .map(|i| Device {
                label: format!("D{i}"),
                server: 0,
            })
            .collect(),
        links: vec![Link {
            a: 0,
            b: 1,
            kind: LinkKind::Pcie,
            bandwidth_gbps: bw,
            latency_us: lat,
        }],
        reduce_gbps: None,
        sources: vec![],
        switches: vec![],
        ccl_buffer_bytes: None,
        library: Default::default(),
        algorithms: vec![],
        impairment: Default::default(),
        hardware: None,
    }
}

#[test]
fn unequal_flows_share_fairly_then_the_survivor_speeds_up() {
    // Two flows 0 -> 1 on a 10 GB/s link: 1000 and 3000 bytes. Both run at
    // 5 GB/s until the small one ends at 1 + 1000/5e3 = 1.2 µs; the large one
    // then has the link alone: 1.2 + 2000/10e3 = 1.4 µs.
    let topo = line(2, 10.0, 1.0);
    let t = |first, count| Transfer {
        src: 0,
        dst: 1,
        first,
        count,
        kind: TransferKind::Copy,
        dst_first: first,
    };
    let s = Schedule {
        primitive: Primitive::AllGather,
        algorithm: "test".into(),
        ranks: 2,
        chunks: 4,
        root: 0,
        scratch: 0,
        steps: vec![Step {
            phase: "AllGather".into(),
            transfers: vec![t(0, 1), t(1, 3)],
        }],
    };
    let e = estimate(&s, &topo, 4000, DType::Int8).unwrap();
    let ends: Vec<f64> = e.timeline.transfers.iter().map(|t| t.end_us).collect();
    assert!(close(ends[0], 1.2) && close(ends[1], 1.4), "{ends:?}");
    assert!(close(e.time_us, 1.4));
}

#[test]
fn h100_ring_allreduce_busbw_approaches_nccls_figure() {
    let topo = Topology::preset("h100-8").unwrap();
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8).unwrap();
    let e = estimate(&s, &topo, 1 << 30, DType::Fp32).unwrap();
    // 2(n-1) = 14 steps of α = 3.4 µs; data at 370.8 GB/s per direction.
    let want = closed_form_us(
        Algorithm::Ring,
        Primitive::AllReduce,
        8,
        (1u64 << 30) as f64,
        3.4,
        370.8,
        None,
    );
    assert!(close(e.time_us, want));
    // t = 47.6 + 5068.1 µs -> busbw 367.3 GB/s, inside the measured 365–370.
    assert!((e.busbw_gbps - 367.3).abs() < 0.1, "{}", e.busbw_gbps);
}
