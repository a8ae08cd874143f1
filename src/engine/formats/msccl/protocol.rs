//! What a file's protocol does to its cost: the machine as the protocol's
//! data sees it. The Schedule says which chunks move; how they move (bulk
//! copies with fences, or packets that carry their own flags) changes the
//! bandwidth each byte of data gets and the latency of each message.

use crate::engine::topology::{LinkKind, Topology};

/// How a file's data moves: NCCL's protocols, which MSCCL runs
/// (Azure/msccl-executor-nccl `msccl_kernel.cu`, one interpreter per
/// protocol) and of which MSCCL++ plans name Simple and LL (microsoft/mscclpp
/// `execution_plan.cc`: LL means packets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Bulk copies with fences.
    Simple,
    /// Low-latency: 8-byte stores of 4 bytes of data and a flag.
    Ll,
    /// Low-latency 128-byte lines.
    Ll128,
}

impl Protocol {
    /// All three.
    pub const ALL: [Protocol; 3] = [Protocol::Simple, Protocol::Ll, Protocol::Ll128];

    /// The files' name (`Simple`, `LL`, `LL128`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "Simple",
            Protocol::Ll => "LL",
            Protocol::Ll128 => "LL128",
        }
    }
}

/// The share of each LL store that is data: NCCL's LL line holds two
/// 4-byte words of data, each beside a 4-byte flag (NVIDIA/nccl
/// `src/device/prims_ll.h`, `union ncclLLFifoLine`); MSCCL++'s LL packets
/// likewise (microsoft/mscclpp `include/mscclpp/packet_device.hpp`,
/// `LL16Packet`: data1, flag1, data2, flag2; `LL8Packet`: data, flag), and
/// its executor sizes an LL plan's scratch at twice the data
/// (`src/core/executor/execution_plan.cc`, `calScratchBufferSize`: "data
/// + flag").
pub const LL_PAYLOAD: f64 = 0.5;

/// The share of each LL128 line that is data: 120 of its 128 bytes
/// (NVIDIA/nccl `src/device/prims_ll128.h`: `NCCL_LL128_DATAELEMS` of
/// `NCCL_LL128_LINEELEMS` 8-byte words).
pub const LL128_PAYLOAD: f64 = 120.0 / 128.0;

/// NCCL's per-hop latency of each protocol, µs, ring column of `hwLat`
/// (NVIDIA/nccl 2.30.7 `src/graph/tuning.cc`), rows NVLink, PCIe,
/// network; columns LL, LL128, Simple. The machines' link latencies are
/// Simple's ([`crate::engine::topology`] cites the same table), so a
/// protocol scales them by its ratio to Simple.
const HW_LAT_RING: [[f64; 3]; 3] = [[0.6, 1.9, 3.4], [1.0, 2.5, 5.7], [2.7, 4.0, 14.0]];

/// The protocol a file names (`Simple`, `LL`, `LL128`).
pub fn protocol_of(name: &str) -> Option<Protocol> {
    Protocol::ALL.into_iter().find(|p| p.name() == name)
}

/// `topo` as data sent with `protocol` sees it: each link's bandwidth
/// times the protocol's data share and its latency times the protocol's
/// ratio to Simple for the link's kind (HCCS as NVLink, RoCE as network).
/// Simple gives `topo` back unchanged.
pub fn protocol_topology(topo: &Topology, protocol: Protocol) -> Topology {
    let (payload, col) = match protocol {
        Protocol::Simple => return topo.clone(),
        Protocol::Ll => (LL_PAYLOAD, 0),
        Protocol::Ll128 => (LL128_PAYLOAD, 1),
    };
    let mut t = topo.clone();
    for l in &mut t.links {
        let row = match l.kind {
            LinkKind::Nvlink | LinkKind::Hccs => 0,
            LinkKind::Pcie => 1,
            LinkKind::Roce => 2,
        };
        l.bandwidth_gbps *= payload;
        l.latency_us *= HW_LAT_RING[row][col] / HW_LAT_RING[row][2];
    }
    t.sources.push(format!(
        "{}: links carry {:.0}% data (flags in the rest) at NCCL's {} / Simple hop latency (nccl src/graph/tuning.cc hwLat)",
        protocol.name(),
        payload * 100.0,
        protocol.name()
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ll_halves_bandwidth_and_scales_latency_per_link_kind() {
        let h = Topology::preset("h100-8").unwrap();
        let ll = protocol_topology(&h, Protocol::Ll);
        for (a, b) in h.links.iter().zip(&ll.links) {
            assert_eq!(b.bandwidth_gbps, a.bandwidth_gbps * 0.5);
            assert!((b.latency_us - a.latency_us * 0.6 / 3.4).abs() < 1e-12);
        }
        assert_eq!(protocol_topology(&h, Protocol::Simple), h);
        let ll128 = protocol_topology(&h, Protocol::Ll128);
        assert_eq!(
            ll128.links[0].bandwidth_gbps,
            h.links[0].bandwidth_gbps * 120.0 / 128.0
        );
        assert_eq!(protocol_of("LL"), Some(Protocol::Ll));
        assert_eq!(protocol_of("ll"), None);
    }
}
