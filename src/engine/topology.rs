//! Topologies: devices, the links between them (GB/s per direction, µs per
//! message), and the presets.
//!
//! Links are full duplex: each direction has the link's whole bandwidth.
//! Rank `r` of a run is placed on device `r`.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Kind of a link, named as the field does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    /// Huawei Cache Coherence System, Ascend's intra-server NPU link.
    Hccs,
    /// PCIe.
    Pcie,
    /// RDMA over Converged Ethernet (inter-server).
    Roce,
    /// NVIDIA NVLink.
    Nvlink,
}

impl LinkKind {
    /// Display name (`HCCS`, ...).
    pub fn title(self) -> &'static str {
        match self {
            LinkKind::Hccs => "HCCS",
            LinkKind::Pcie => "PCIe",
            LinkKind::Roce => "RoCE",
            LinkKind::Nvlink => "NVLink",
        }
    }
}

/// A device (an NPU or GPU) that hosts one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Label shown in the drawing (`NPU0`).
    pub label: String,
    /// Server index (level0 = within a server, level1 = between servers).
    pub server: usize,
}

/// A full-duplex link between devices `a` and `b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// One end (device index).
    pub a: usize,
    /// Other end (device index).
    pub b: usize,
    /// Link kind.
    pub kind: LinkKind,
    /// Bandwidth per direction, GB/s (1e9 bytes/s): the model's `1/β`.
    pub bandwidth_gbps: f64,
    /// Per-message latency, µs: the model's `α`.
    pub latency_us: f64,
}

/// A machine: devices, links and the model's figures with their sources.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// URL name (`910b-8`).
    pub name: String,
    /// One-line description.
    pub title: String,
    /// Devices; rank `r` runs on device `r`.
    pub devices: Vec<Device>,
    /// Links.
    pub links: Vec<Link>,
    /// Reduction throughput per device, GB/s of reduced bytes (the model's
    /// `1/γ`); `None` = reductions cost no extra time (done inline by the
    /// transfer engine).
    pub reduce_gbps: Option<f64>,
    /// Where each figure comes from, for the UI.
    pub sources: Vec<String>,
}

/// Why a topology name or rank count was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TopologyError {
    /// No preset of that name.
    #[error("unknown topology `{0}`; known: 910b-8")]
    Unknown(String),
    /// Too many or too few ranks for the topology.
    #[error("topology `{topo}` has {devices} devices; ranks must be 2..={devices}, got {ranks}")]
    Ranks {
        topo: String,
        devices: usize,
        ranks: usize,
    },
    /// Two ranks have no link between them.
    #[error("topology `{topo}` has no link between device {a} and device {b}")]
    NoLink { topo: String, a: usize, b: usize },
}

/// HCCS bandwidth the model uses for Ascend 910B, GB/s per direction per
/// peer link: HCCL's own planning constant `BANDWIDTH_HCCS_910B = 18.3`
/// (hcomm `src/platform/common/device_capacity.cc`). With it, mesh AllGather
/// of 8 NPUs predicts algbw 8 × 18.3 = 146 GB/s and mesh AllReduce 73 GB/s,
/// matching the 149 / 72 GB/s measured with torch_npu on 8 cards
/// (gameofdimension/limulidae README). The HCCS line rate is 56 GB/s per peer
/// (ArthurChiao's GPU data sheets, 2023-10-25), which no public measurement
/// reaches.
pub const HCCS_910B_GBPS: f64 = 18.3;

/// Per-message latency assumed for an HCCS transfer, µs. HCCL publishes no
/// intra-server figure (its `LATENCY = 60` µs in `coll_alg_operator.cc` is
/// the inter-server planning constant); we borrow NCCL's NVLink per-hop
/// latency for the Simple protocol, 3.4 µs (nccl `src/graph/tuning.cc`).
/// An assumption, labelled as such in the UI.
pub const HCCS_910B_LATENCY_US: f64 = 3.4;

impl Topology {
    /// Names of the presets.
    pub const PRESETS: [&'static str; 1] = ["910b-8"];

    /// A preset by URL name.
    ///
    /// Errors: [`TopologyError::Unknown`].
    pub fn preset(name: &str) -> Result<Topology, TopologyError> {
        match name {
            "910b-8" => Ok(Topology::ascend_910b_8()),
            _ => Err(TopologyError::Unknown(name.to_string())),
        }
    }

    /// One Atlas 800T A2-class server: 8 Ascend 910B NPUs, an HCCS link
    /// between every pair (28 links, full mesh, no switch; `npu-smi info -t
    /// topo` in ArthurChiao's GPU notes, 2023-09-16). Link figures:
    /// [`HCCS_910B_GBPS`], [`HCCS_910B_LATENCY_US`]. Reductions are inline:
    /// HCCL on 910B reduces in the transfer itself (its `INLINE_REDUCE` path),
    /// so the model charges no separate γ.
    pub fn ascend_910b_8() -> Topology {
        let devices = (0..8)
            .map(|i| Device {
                label: format!("NPU{i}"),
                server: 0,
            })
            .collect();
        let mut links = Vec::new();
        for a in 0..8 {
            for b in a + 1..8 {
                links.push(Link {
                    a,
                    b,
                    kind: LinkKind::Hccs,
                    bandwidth_gbps: HCCS_910B_GBPS,
                    latency_us: HCCS_910B_LATENCY_US,
                });
            }
        }
        Topology {
            name: "910b-8".into(),
            title: "1 server × 8 Ascend 910B, HCCS full mesh (28 links)".into(),
            devices,
            links,
            reduce_gbps: None,
            sources: vec![
                format!("HCCS β: {HCCS_910B_GBPS} GB/s per direction per link = HCCL's planning constant BANDWIDTH_HCCS_910B (hcomm device_capacity.cc); line rate 56 GB/s (ArthurChiao, secondary). It reproduces the measured 8-card torch_npu figures (all_gather 149, all_reduce 72 GB/s; gameofdimension/limulidae)."),
                format!("HCCS α: {HCCS_910B_LATENCY_US} µs per message — an assumption: HCCL publishes no intra-server latency; borrowed from NCCL's NVLink Simple-protocol hop latency (nccl tuning.cc)."),
                "γ: reductions are inline in the transfer on 910B (HCCL INLINE_REDUCE), so no separate reduce time.".into(),
                "Wiring: HCCS between every pair of the 8 NPUs (npu-smi info -t topo, ArthurChiao, secondary).".into(),
            ],
        }
    }

    /// Checks that `ranks` ranks fit on this topology (`2..=devices`).
    ///
    /// Errors: [`TopologyError::Ranks`].
    pub fn check_ranks(&self, ranks: usize) -> Result<(), TopologyError> {
        if ranks < 2 || ranks > self.devices.len() {
            return Err(TopologyError::Ranks {
                topo: self.name.clone(),
                devices: self.devices.len(),
                ranks,
            });
        }
        Ok(())
    }

    /// The index of the link joining devices `a` and `b` (either direction).
    pub fn link_between(&self, a: usize, b: usize) -> Option<usize> {
        self.links
            .iter()
            .position(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
    }

    /// Like [`Topology::link_between`], as an error.
    ///
    /// Errors: [`TopologyError::NoLink`].
    pub fn require_link(&self, a: usize, b: usize) -> Result<usize, TopologyError> {
        self.link_between(a, b)
            .ok_or_else(|| TopologyError::NoLink {
                topo: self.name.clone(),
                a,
                b,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascend_910b_8_is_a_full_mesh() {
        let t = Topology::preset("910b-8").unwrap();
        assert_eq!(t.devices.len(), 8);
        assert_eq!(t.links.len(), 28);
        for a in 0..8 {
            for b in 0..8 {
                if a != b {
                    assert!(t.link_between(a, b).is_some(), "{a}-{b}");
                }
            }
        }
        assert!(t
            .links
            .iter()
            .all(|l| l.kind == LinkKind::Hccs && l.bandwidth_gbps == 18.3));
    }

    #[test]
    fn rank_limits_and_unknown_names() {
        let t = Topology::ascend_910b_8();
        assert!(t.check_ranks(2).is_ok() && t.check_ranks(8).is_ok());
        assert_eq!(
            t.check_ranks(9).unwrap_err().to_string(),
            "topology `910b-8` has 8 devices; ranks must be 2..=8, got 9"
        );
        assert!(Topology::preset("dgx").is_err());
    }
}
