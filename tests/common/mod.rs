//! Helpers shared by the integration tests.

use ccl_playground::engine::topology::{Device, Link, LinkKind, Topology};

/// A full mesh of `n` devices (8 per server), every link `bw` GB/s and `lat`
/// µs, reduce throughput `reduce` GB/s (`None` = inline): an uncontended
/// topology on which the cost model must equal the closed forms.
pub fn full_mesh(n: usize, bw: f64, lat: f64, reduce: Option<f64>) -> Topology {
    let mut links = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            links.push(Link {
                a,
                b,
                kind: LinkKind::Hccs,
                bandwidth_gbps: bw,
                latency_us: lat,
            });
        }
    }
    Topology {
        name: "test".into(),
        title: "test".into(),
        devices: (0..n)
            .map(|i| Device {
                label: format!("D{i}"),
                server: i / 8,
            })
            .collect(),
        links,
        reduce_gbps: reduce,
        sources: vec![],
        switches: vec![],
        ccl_buffer_bytes: None,
        library: Default::default(),
        algorithms: vec![],
        impairment: Default::default(),
        hardware: None,
    }
}
