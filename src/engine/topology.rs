//! Topologies: devices, switches, the links between them (GB/s per
//! direction, µs per message), routes, and the presets.
//!
//! Links are full duplex: each direction has the link's whole bandwidth.
//! Rank `r` of a run is placed on device `r`.
//!
//! ## Nodes
//! A link joins two *nodes*. Node `i < devices.len()` is device `i` (an NPU
//! or GPU that hosts a rank); node `devices.len() + k` is switch `k` (an
//! NVSwitch, a PCIe switch / host bridge, a RoCE fabric) that forwards
//! traffic but hosts no rank. Devices never forward traffic for others: a
//! route is a direct device-device link, or a path through switches only
//! ([`Topology::route`]). Topologies without switches (the 910B full mesh)
//! are exactly what they were before switches existed.

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

/// A switch node: forwards traffic, hosts no rank. Node index
/// `devices.len() + k` for switch `k`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Switch {
    /// Label shown in the drawing (`NVSwitch`, `PCIe0`, `RoCE fabric`).
    pub label: String,
    /// Server index (`usize::MAX` for a fabric between servers).
    pub server: usize,
}

/// One hop of a [`Route`]: a link and the direction it is crossed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hop {
    /// Index into [`Topology::links`].
    pub link: usize,
    /// `true` if crossed from `links[link].a` to `links[link].b`.
    pub forward: bool,
}

/// Reusable scratch of [`Topology::route_in`]'s breadth-first search:
/// per node its predecessor and the stamp of the last search that saw it.
#[derive(Debug, Default)]
pub struct RouteScratch {
    prev: Vec<(usize, usize)>,
    seen: Vec<u32>,
    mark: u32,
    queue: std::collections::VecDeque<usize>,
}

/// The path a message takes from one device to another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Route {
    /// Links crossed, in order (1 for a direct link).
    pub hops: Vec<Hop>,
    /// Sum of the hops' latencies, µs: the transfer's `α`.
    pub latency_us: f64,
    /// Smallest bandwidth along the path, GB/s.
    pub bandwidth_gbps: f64,
}

impl Route {
    /// A rank's route to itself: a local copy or reduce (MSCCL's `cpy` /
    /// `re`) crosses no link and pays no `α`; the model charges only its
    /// reduce work (the topology's `reduce_gbps`), like any reduce.
    pub fn local() -> Route {
        Route {
            hops: Vec::new(),
            latency_us: 0.0,
            bandwidth_gbps: f64::INFINITY,
        }
    }
}

impl LinkKind {
    /// Every kind.
    pub const ALL: [LinkKind; 4] = [
        LinkKind::Hccs,
        LinkKind::Pcie,
        LinkKind::Roce,
        LinkKind::Nvlink,
    ];

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
    /// One end (node index: a device, or `devices.len() + k` for switch `k`).
    pub a: usize,
    /// Other end (node index).
    pub b: usize,
    /// Link kind.
    pub kind: LinkKind,
    /// Bandwidth per direction, GB/s (1e9 bytes/s): the model's `1/β`.
    pub bandwidth_gbps: f64,
    /// Per-message latency, µs: the model's `α`.
    pub latency_us: f64,
}

/// A collective library whose algorithm choices a machine follows (its
/// names, the algorithms it runs and its own rule: [`super::library`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Library {
    /// Huawei's HCCL (Ascend NPUs).
    Hccl,
    /// NVIDIA's NCCL (and AMD's RCCL, which keeps NCCL's algorithms).
    Nccl,
    /// An MPI library (Open MPI's `coll/tuned` fixed decision rules).
    Mpi,
    /// No library: `auto` is the cost model's fastest algorithm.
    #[default]
    Model,
}

/// A machine: devices, links and the model's figures with their sources.
/// The default is the empty machine (no devices, no links).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Switch nodes (node `devices.len() + k` is `switches[k]`); empty for a
    /// direct-wired machine.
    #[serde(default)]
    pub switches: Vec<Switch>,
    /// The communication library's staging buffer, bytes: messages larger
    /// than this run as `ceil(S / buffer)` back-to-back loops, each paying
    /// every step's `α` again (HCCL: `HCCL_BUFFSIZE`, default 200 MB =
    /// 200 × 2^20 bytes, hccl docs `HCCL_BUFFSIZE.md`). `None` = one loop
    /// (NCCL pipelines through its buffers within one launch).
    #[serde(default)]
    pub ccl_buffer_bytes: Option<u64>,
    /// Whose collective library the machine models: `auto` takes that
    /// library's choice ([`super::library`]). Presets: HCCL on Ascend,
    /// NCCL on NVIDIA.
    #[serde(default)]
    pub library: Library,
    /// With [`Library::Model`]: the algorithms `auto` ranks (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub algorithms: Vec<super::algorithm::Algorithm>,
    /// Slow devices and failed links of a degraded machine (the what-if
    /// of [`super::degrade`]); empty for a healthy one.
    #[serde(default, skip_serializing_if = "Impairment::is_none")]
    pub impairment: Impairment,
    /// The machine as link classes, for the library tuning models and
    /// the calibrated prediction ([`super::hardware`]); `None`: derived
    /// from the links when needed ([`super::library::nccl::hardware_of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<super::hardware::Hardware>,
}

/// What faults did to a machine ([`super::degrade::Degradation::apply`]):
/// per-device speed factors and start offsets, and the links taken out.
/// Empty (the default) = healthy.
///
/// - A device with speed `f` (0 < f <= 1) sends at `f` times the capacity
///   of every link direction leaving it, and reduces at `f` times the
///   topology's `reduce_gbps` (its `α` is unchanged).
/// - A device late by `d` µs starts no transfer, as sender or receiver,
///   before `d` µs.
/// - With links down, a device may forward traffic for others when no
///   direct link and no path through switches remains
///   ([`Topology::route_with`]: the route goes through a third NPU, or
///   through another NPU's port).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Impairment {
    /// Speed factor per device (index = device), empty = all 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speed: Vec<f64>,
    /// Start offset per device, µs, empty = all 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late_us: Vec<f64>,
    /// The links taken out of [`Topology::links`], as they were (for the
    /// drawing; node indices are unchanged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub down: Vec<Link>,
}

impl Impairment {
    /// True for a healthy machine.
    pub fn is_none(&self) -> bool {
        self.speed.iter().all(|&f| f == 1.0)
            && self.late_us.iter().all(|&d| d == 0.0)
            && self.down.is_empty()
    }

    /// Does any device run slower or start late (timing the simulator must
    /// model per device)? A machine with only failed links is not: its
    /// links are gone and its routes relay.
    pub fn is_timed(&self) -> bool {
        self.speed.iter().any(|&f| f != 1.0) || self.late_us.iter().any(|&d| d != 0.0)
    }

    /// Speed factor of device `d` (1 if not slowed).
    pub fn speed_of(&self, d: usize) -> f64 {
        self.speed.get(d).copied().unwrap_or(1.0)
    }

    /// Start offset of device `d`, µs (0 if not late).
    pub fn late_of(&self, d: usize) -> f64 {
        self.late_us.get(d).copied().unwrap_or(0.0)
    }

    /// May devices forward traffic for others (some link is down)?
    pub fn relay(&self) -> bool {
        !self.down.is_empty()
    }
}

/// Why a topology name or rank count was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TopologyError {
    /// No preset of that name.
    #[error(
        "unknown topology `{0}`; known: 910b-8, 910a-8, h100-8, 910b-{{S}}x8 (S = 2..=1024 servers)"
    )]
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
    /// A link names a node that does not exist, or has a bandwidth that is
    /// not a positive finite number, or a negative latency.
    #[error("topology `{topo}` link {link}: {why}")]
    BadLink {
        topo: String,
        link: usize,
        why: String,
    },
    /// No algorithm implements the primitive on that many ranks (raised by
    /// [`super::select`]).
    #[error("no algorithm implements {primitive} on {ranks} ranks")]
    NoAlgorithm { primitive: String, ranks: usize },
}

/// HCCL's staging buffer default, bytes: `HCCL_BUFFSIZE` = 200 (MB, read as
/// 200 × 2^20 bytes) (hccl docs `HCCL_BUFFSIZE.md`, `hccl_types.h`).
pub const HCCL_BUFFSIZE_DEFAULT_BYTES: u64 = 200 << 20;

/// RoCE bandwidth per 910B NPU port, GB/s per direction: HCCL's planning
/// constant `BANDWIDTH_RDMA_910B = 25.0 * 0.8` (200 Gb/s line rate × 0.8;
/// hcomm `src/platform/common/device_capacity.cc`).
pub const ROCE_910B_GBPS: f64 = 25.0 * 0.8;

/// Inter-server latency per step HCCL plans with, µs: `LATENCY = 60`
/// (hccl `coll_alg_operator.cc`). The model splits it over the two RoCE hops
/// of a route (NPU -> fabric -> NPU), 30 µs each.
pub const ROCE_910B_LATENCY_US: f64 = 60.0;

/// HCCS bandwidth for Ascend 910 (910A), GB/s per direction per link:
/// `BANDWIDTH_HCCS_910A = 10.0` (hcomm `device_capacity.cc`).
pub const HCCS_910A_GBPS: f64 = 10.0;

/// PCIe Gen4 x16 bandwidth HCCL plans with, GB/s per direction:
/// `BANDWIDTH_PCIE_GEN4 = 32.0 * 0.85` (hcomm `device_capacity.cc`).
pub const PCIE_GEN4_GBPS: f64 = 32.0 * 0.85;

/// Latency per PCIe link, µs: an assumption (no public HCCL figure); half of
/// the NVLink Simple-protocol hop latency 3.4 µs (nccl `src/graph/tuning.cc`)
/// per link, so NPU -> PCIe switch -> NPU costs 3.4 µs like one HCCS hop and
/// crossing the inter-group bridge adds 1.7 µs.
pub const PCIE_LATENCY_US: f64 = 1.7;

/// The label of a 910B cluster's RoCE switch (the page words it per
/// language).
pub const ROCE_FABRIC_LABEL: &str = "RoCE fabric";

/// NVLink bandwidth per H100 SXM GPU, GB/s per direction: NCCL's planning
/// constant `SM90_NVLINK_BW = 20.6` GB/s per link × 18 NVLink4 links
/// (nccl `src/graph/topo.h`) = 370.8 GB/s, matching the "~370 GB/s effective
/// after protocol overhead" of the 450 GB/s line rate (a maintainer in
/// github.com/NVIDIA/nccl-tests/issues/212) and the measured ring AllReduce busbw 365–370 GB/s
/// (github.com/NVIDIA/nccl/issues/1455).
pub const NVLINK_H100_GBPS: f64 = 20.6 * 18.0;

/// Latency of one GPU -> GPU NVLink hop through NVSwitch, µs: NCCL's NVLink
/// hop latency for the Simple protocol, 3.4 µs (nccl `src/graph/tuning.cc`,
/// `hwLat[NCCL_HW_NVLINK][ring][simple]`). The model puts half on each of
/// the two GPU <-> NVSwitch links of a route.
pub const NVLINK_H100_HOP_LATENCY_US: f64 = 3.4;

/// HCCS bandwidth the model uses for Ascend 910B, GB/s per direction per
/// peer link: HCCL's own planning constant `BANDWIDTH_HCCS_910B = 18.3`
/// (hcomm `src/platform/common/device_capacity.cc`). With it, mesh AllGather
/// of 8 NPUs predicts algbw 8 × 18.3 = 146 GB/s and mesh AllReduce 73 GB/s,
/// matching the 149 / 72 GB/s measured with torch_npu on 8 cards
/// (gameofdimension/limulidae README). The HCCS line rate is 56 GB/s per peer
/// (ArthurChiao's GPU data sheets), which no public measurement
/// reaches.
pub const HCCS_910B_GBPS: f64 = 18.3;

/// Per-message latency assumed for an HCCS transfer, µs. HCCL publishes no
/// intra-server figure (its `LATENCY = 60` µs in `coll_alg_operator.cc` is
/// the inter-server planning constant); we borrow NCCL's NVLink per-hop
/// latency for the Simple protocol, 3.4 µs (nccl `src/graph/tuning.cc`).
/// An assumption, labelled as such in the UI.
pub const HCCS_910B_LATENCY_US: f64 = 3.4;

/// The server count `S` of a `910b-{S}x8` name (S = 2..=1024, written
/// without leading zeros), else `None`.
fn cluster_servers(name: &str) -> Option<usize> {
    name.strip_prefix("910b-")
        .and_then(|r| r.strip_suffix("x8"))
        .filter(|d| {
            !d.is_empty()
                && d.len() <= 4
                && !d.starts_with('0')
                && d.bytes().all(|c| c.is_ascii_digit())
        })
        .and_then(|d| d.parse::<usize>().ok())
        .filter(|s| (2..=Topology::MAX_910B_SERVERS).contains(s))
}

impl Topology {
    /// Names of the presets (single-server ones; [`Topology::preset`] also
    /// accepts the multi-server `910b-{S}x8`, S = 2..=1024, model-only).
    pub const PRESETS: [&'static str; 3] = ["910b-8", "910a-8", "h100-8"];

    /// Largest server count of `910b-{S}x8`.
    pub const MAX_910B_SERVERS: usize = 1024;

    /// A preset by URL name: `910b-8`, `910a-8`, `h100-8`, or `910b-{S}x8`
    /// (S servers of 8 910B NPUs, S = 2..=1024, e.g. `910b-128x8` = 1024 NPUs, `910b-1024x8` = 8192).
    ///
    /// Errors: [`TopologyError::Unknown`].
    pub fn preset(name: &str) -> Result<Topology, TopologyError> {
        match name {
            "910b-8" => Ok(Topology::ascend_910b_8()),
            "910a-8" => Ok(Topology::ascend_910a_8()),
            "h100-8" => Ok(Topology::h100_8()),
            _ => match cluster_servers(name) {
                Some(s) => Ok(Topology::ascend_910b_cluster(s)),
                None => Err(TopologyError::Unknown(name.to_string())),
            },
        }
    }

    /// The device count of [`Topology::preset`]`(name)` without building
    /// it (at `910b-1024x8`, 8192 labelled devices and 15 360 links);
    /// `None` for a name it refuses.
    pub fn preset_devices(name: &str) -> Option<usize> {
        match name {
            "910b-8" | "910a-8" | "h100-8" => Some(8),
            _ => cluster_servers(name).map(|s| 8 * s),
        }
    }

    /// The title preset `name` is built with (what a front end translates
    /// when a topology still carries it), `None` for a name that is no
    /// preset.
    pub fn preset_title(name: &str) -> Option<String> {
        Some(match name {
            "910b-8" => "1 server × 8 Ascend 910B, HCCS full mesh (28 links)".into(),
            "910a-8" => {
                "1 server × 8 Ascend 910 (910A): 2 groups of 4 on HCCS, PCIe between groups".into()
            }
            "h100-8" => "1 server × 8 NVIDIA H100 SXM, NVLink4 through NVSwitch".into(),
            _ => format!(
                "{} servers × 8 Ascend 910B: HCCS full mesh inside, one RoCE port per NPU",
                cluster_servers(name)?
            ),
        })
    }

    /// One Atlas 800T A2-class server: 8 Ascend 910B NPUs, an HCCS link
    /// between every pair (28 links, full mesh, no switch; `npu-smi info -t
    /// topo` in ArthurChiao's GPU notes). Link figures:
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
            title: Topology::preset_title("910b-8").unwrap_or_default(),
            devices,
            links,
            reduce_gbps: None,
            switches: vec![],
            ccl_buffer_bytes: Some(HCCL_BUFFSIZE_DEFAULT_BYTES),
            library: Library::Hccl,
            algorithms: Vec::new(),
            impairment: Default::default(),
            hardware: None,
            sources: vec![
                format!("HCCS β: {HCCS_910B_GBPS} GB/s per direction per link = HCCL's planning constant BANDWIDTH_HCCS_910B (hcomm device_capacity.cc); line rate 56 GB/s (ArthurChiao, secondary). It reproduces the measured 8-card torch_npu figures (all_gather 149, all_reduce 72 GB/s; gameofdimension/limulidae)."),
                format!("HCCS α: {HCCS_910B_LATENCY_US} µs per message — an assumption: HCCL publishes no intra-server latency; borrowed from NCCL's NVLink Simple-protocol hop latency (nccl tuning.cc)."),
                "γ: reductions are inline in the transfer on 910B (HCCL INLINE_REDUCE), so no separate reduce time.".into(),
                "Wiring: HCCS between every pair of the 8 NPUs (npu-smi info -t topo, ArthurChiao, secondary).".into(),
                "Buffer loops: messages above HCCL_BUFFSIZE (default 200 MB) run in loops (hccl docs HCCL_BUFFSIZE.md).".into(),
            ],
        }
    }

    fn hccs_mesh(links: &mut Vec<Link>, devices: std::ops::Range<usize>, bw: f64, lat: f64) {
        for a in devices.clone() {
            for b in a + 1..devices.end {
                links.push(Link {
                    a,
                    b,
                    kind: LinkKind::Hccs,
                    bandwidth_gbps: bw,
                    latency_us: lat,
                });
            }
        }
    }

    /// One Atlas 800 9000-class server: 8 Ascend 910 (910A) NPUs in two
    /// groups of 4; HCCS full mesh inside a group, PCIe between groups
    /// (Huawei Cloud CCE GPU topology docs). Modelled as: 6 HCCS links per
    /// group at [`HCCS_910A_GBPS`] with [`HCCS_910B_LATENCY_US`] (the same
    /// borrowed assumption); every NPU has a PCIe Gen4 x16 link
    /// ([`PCIE_GEN4_GBPS`], [`PCIE_LATENCY_US`]) to its group's PCIe switch
    /// (`PCIe0` = node 8, `PCIe1` = node 9); the two switches are joined by
    /// one bridge link of the same figures (an assumption: the inter-socket
    /// path carries at most one x16's worth). A message from group 0 to
    /// group 1 takes NPU -> PCIe0 -> PCIe1 -> NPU, so ring traffic and mesh
    /// traffic across the groups share the bridge.
    pub fn ascend_910a_8() -> Topology {
        let devices = (0..8)
            .map(|i| Device {
                label: format!("NPU{i}"),
                server: 0,
            })
            .collect();
        let mut links = Vec::new();
        Topology::hccs_mesh(&mut links, 0..4, HCCS_910A_GBPS, HCCS_910B_LATENCY_US);
        Topology::hccs_mesh(&mut links, 4..8, HCCS_910A_GBPS, HCCS_910B_LATENCY_US);
        for d in 0..8 {
            links.push(Link {
                a: d,
                b: 8 + d / 4,
                kind: LinkKind::Pcie,
                bandwidth_gbps: PCIE_GEN4_GBPS,
                latency_us: PCIE_LATENCY_US,
            });
        }
        links.push(Link {
            a: 8,
            b: 9,
            kind: LinkKind::Pcie,
            bandwidth_gbps: PCIE_GEN4_GBPS,
            latency_us: PCIE_LATENCY_US,
        });
        Topology {
            name: "910a-8".into(),
            title: Topology::preset_title("910a-8").unwrap_or_default(),
            devices,
            links,
            reduce_gbps: None,
            switches: vec![
                Switch { label: "PCIe0".into(), server: 0 },
                Switch { label: "PCIe1".into(), server: 0 },
            ],
            ccl_buffer_bytes: Some(HCCL_BUFFSIZE_DEFAULT_BYTES),
            library: Library::Hccl,
            algorithms: Vec::new(),
            impairment: Default::default(),
            hardware: None,
            sources: vec![
                "Wiring: two groups of 4 NPUs, HCCS full mesh inside a group, PCIe between groups (Huawei Cloud CCE GPU topology docs).".into(),
                format!("HCCS β: {HCCS_910A_GBPS} GB/s = HCCL's BANDWIDTH_HCCS_910A (hcomm device_capacity.cc)."),
                format!("PCIe β: {PCIE_GEN4_GBPS:.1} GB/s = HCCL's BANDWIDTH_PCIE_GEN4 = 32 × 0.85 (hcomm device_capacity.cc); one bridge link of that bandwidth between the groups is an assumption."),
                format!("α: HCCS {HCCS_910B_LATENCY_US} µs and PCIe {PCIE_LATENCY_US} µs per link are assumptions (NCCL's NVLink Simple hop latency, nccl tuning.cc)."),
                "Buffer loops: messages above HCCL_BUFFSIZE (default 200 MB) run in loops (hccl docs HCCL_BUFFSIZE.md).".into(),
            ],
        }
    }

    /// One 8 × H100 SXM server (HGX/DGX H100): every GPU has 18 NVLink4
    /// links into the NVSwitch fabric. Modelled as one non-blocking switch
    /// node (`NVSwitch` = node 8) and one link per GPU to it with NCCL's
    /// per-GPU figure [`NVLINK_H100_GBPS`] (370.8 GB/s per direction) and
    /// half of [`NVLINK_H100_HOP_LATENCY_US`] each. Any GPU pair therefore
    /// gets the full 370.8 GB/s, while flows from or to one GPU share its
    /// port. Reductions inline (NCCL reduces in the copy kernel). Its
    /// [`Topology::hardware`] is [`super::hardware::Hardware::h100_node`]:
    /// NCCL's tuning model (NVLS included) decides `auto` and the
    /// calibrated prediction times it.
    pub fn h100_8() -> Topology {
        let devices = (0..8)
            .map(|i| Device {
                label: format!("GPU{i}"),
                server: 0,
            })
            .collect();
        let links = (0..8)
            .map(|d| Link {
                a: d,
                b: 8,
                kind: LinkKind::Nvlink,
                bandwidth_gbps: NVLINK_H100_GBPS,
                latency_us: NVLINK_H100_HOP_LATENCY_US / 2.0,
            })
            .collect();
        Topology {
            name: "h100-8".into(),
            title: Topology::preset_title("h100-8").unwrap_or_default(),
            devices,
            links,
            reduce_gbps: None,
            switches: vec![Switch { label: "NVSwitch".into(), server: 0 }],
            ccl_buffer_bytes: None,
            library: Library::Nccl,
            algorithms: Vec::new(),
            impairment: Default::default(),
            hardware: Some(super::hardware::Hardware::h100_node()),
            sources: vec![
                format!("NVLink β: {NVLINK_H100_GBPS:.1} GB/s per GPU per direction = NCCL's SM90_NVLINK_BW 20.6 GB/s × 18 links (nccl src/graph/topo.h); the line rate is 450 GB/s, ~370 effective (nccl-tests issue 212, maintainer)."),
                format!("NVLink α: {NVLINK_H100_HOP_LATENCY_US} µs per GPU→GPU hop = NCCL's NVLink Simple-protocol hop latency (nccl src/graph/tuning.cc), half on each GPU↔NVSwitch link."),
                "Wiring: the 4 NVSwitch chips are drawn as one non-blocking switch; flows share a GPU's port, not the switch.".into(),
                "Measured: ring AllReduce busbw about 365–370 GB/s for 2–8 GPUs (NVIDIA/nccl issue 1455); NVLS AllReduce ~480 GB/s busbw (nccl-tests issue 212). auto follows NCCL's tuning model, NVLS included (library::nccl); the drawn links carry the ring figures.".into(),
            ],
        }
    }

    /// `servers` Atlas 800T A2-class servers (8 Ascend 910B each, HCCS full
    /// mesh inside as in [`Topology::ascend_910b_8`]); device `8s + i` is NPU
    /// `i` of server `s`. Every NPU has one RoCE port ([`ROCE_910B_GBPS`]) to
    /// a non-blocking fabric (one switch node, node `8·servers`); each RoCE
    /// link carries half of [`ROCE_910B_LATENCY_US`], so an inter-server
    /// message pays HCCL's 60 µs. Flows contend on NPU ports, not in the
    /// fabric (an assumption: a rail-optimised, non-blocking Clos).
    pub fn ascend_910b_cluster(servers: usize) -> Topology {
        let n = 8 * servers;
        let devices = (0..n)
            .map(|i| Device {
                label: format!("S{}-NPU{}", i / 8, i % 8),
                server: i / 8,
            })
            .collect();
        let mut links = Vec::with_capacity(servers * 36);
        for s in 0..servers {
            Topology::hccs_mesh(
                &mut links,
                8 * s..8 * s + 8,
                HCCS_910B_GBPS,
                HCCS_910B_LATENCY_US,
            );
        }
        for d in 0..n {
            links.push(Link {
                a: d,
                b: n,
                kind: LinkKind::Roce,
                bandwidth_gbps: ROCE_910B_GBPS,
                latency_us: ROCE_910B_LATENCY_US / 2.0,
            });
        }
        Topology {
            name: format!("910b-{servers}x8"),
            title: Topology::preset_title(&format!("910b-{servers}x8")).unwrap_or_default(),
            devices,
            links,
            reduce_gbps: None,
            switches: vec![Switch { label: ROCE_FABRIC_LABEL.into(), server: usize::MAX }],
            ccl_buffer_bytes: Some(HCCL_BUFFSIZE_DEFAULT_BYTES),
            library: Library::Hccl,
            algorithms: Vec::new(),
            impairment: Default::default(),
            hardware: None,
            sources: vec![
                format!("HCCS inside a server: as 910b-8 ({HCCS_910B_GBPS} GB/s, {HCCS_910B_LATENCY_US} µs)."),
                format!("RoCE β: {ROCE_910B_GBPS} GB/s per NPU port = HCCL's BANDWIDTH_RDMA_910B = 25.0 × 0.8 (hcomm device_capacity.cc)."),
                format!("RoCE α: {ROCE_910B_LATENCY_US} µs per inter-server message = HCCL's LATENCY planning constant (hccl coll_alg_operator.cc)."),
                "Fabric: one non-blocking switch (an assumption); contention at the NPU ports only.".into(),
                "Buffer loops: messages above HCCL_BUFFSIZE (default 200 MB) run in loops (hccl docs HCCL_BUFFSIZE.md).".into(),
            ],
        }
    }

    /// How `ranks` ranks (rank `r` on device `r`) fall on servers: the
    /// sizes of the runs of consecutive ranks on the same server, in rank
    /// order (`[8, 8]` for 16 ranks of `910b-2x8`, `[8, 4]` for 12).
    pub fn nodes_of(&self, ranks: usize) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        let mut last = None;
        for d in self.devices.iter().take(ranks) {
            if last == Some(d.server) {
                if let Some(k) = out.last_mut() {
                    *k += 1;
                }
            } else {
                out.push(1);
                last = Some(d.server);
            }
        }
        out
    }

    /// Number of nodes (devices + switches).
    pub fn nodes(&self) -> usize {
        self.devices.len() + self.switches.len()
    }

    /// Is node `i` a device (hosts a rank) rather than a switch?
    pub fn is_device(&self, node: usize) -> bool {
        node < self.devices.len()
    }

    /// Label of node `i` (device label or switch label; `?` if out of range).
    pub fn node_label(&self, node: usize) -> &str {
        if node < self.devices.len() {
            &self.devices[node].label
        } else {
            self.switches
                .get(node - self.devices.len())
                .map_or("?", |s| s.label.as_str())
        }
    }

    /// Checks every link: endpoints are nodes, bandwidth positive and
    /// finite, latency non-negative and finite.
    ///
    /// Errors: [`TopologyError::BadLink`].
    pub fn validate(&self) -> Result<(), TopologyError> {
        let nodes = self.nodes();
        for (i, l) in self.links.iter().enumerate() {
            let why = if l.a >= nodes || l.b >= nodes {
                Some(format!(
                    "joins node {} and {}, but there are {nodes} nodes",
                    l.a, l.b
                ))
            } else if l.a == l.b {
                Some(format!("joins node {} to itself", l.a))
            } else if !(l.bandwidth_gbps.is_finite() && l.bandwidth_gbps > 0.0) {
                Some(format!(
                    "bandwidth {} GB/s; must be a positive number",
                    l.bandwidth_gbps
                ))
            } else if !(l.latency_us.is_finite() && l.latency_us >= 0.0) {
                Some(format!("latency {} µs; must be 0 or more", l.latency_us))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(TopologyError::BadLink {
                    topo: self.name.clone(),
                    link: i,
                    why,
                });
            }
        }
        Ok(())
    }

    /// Adjacency list of every node: `(neighbour, link index)`, in link order.
    pub fn adjacency(&self) -> Vec<Vec<(usize, usize)>> {
        let mut adj = vec![Vec::new(); self.nodes()];
        for (i, l) in self.links.iter().enumerate() {
            if l.a < adj.len() && l.b < adj.len() {
                adj[l.a].push((l.b, i));
                adj[l.b].push((l.a, i));
            }
        }
        adj
    }

    /// The route from device `src` to device `dst`: the direct link if there
    /// is one, else the path with the fewest hops whose intermediate nodes
    /// are all switches (breadth-first search in link order, so routes are
    /// deterministic); on a machine with links down ([`Impairment::relay`])
    /// and no such path, the path with the fewest hops through any nodes
    /// (a third NPU forwards, as HCCL would have to route around a failed
    /// link). `adj` is [`Topology::adjacency`] (pass it to avoid
    /// recomputing it per route).
    ///
    /// Errors: [`TopologyError::NoLink`] if no such path exists.
    pub fn route_with(
        &self,
        adj: &[Vec<(usize, usize)>],
        src: usize,
        dst: usize,
    ) -> Result<Route, TopologyError> {
        self.route_in(adj, &mut RouteScratch::default(), src, dst)
    }

    /// [`Topology::route_with`] with the search's scratch kept by the
    /// caller, so that resolving many routes (the cost model: up to one per
    /// communicating pair) allocates nothing per route. Same routes.
    ///
    /// Errors: [`TopologyError::NoLink`] if no such path exists.
    pub fn route_in(
        &self,
        adj: &[Vec<(usize, usize)>],
        scratch: &mut RouteScratch,
        src: usize,
        dst: usize,
    ) -> Result<Route, TopologyError> {
        let no_link = || TopologyError::NoLink {
            topo: self.name.clone(),
            a: src,
            b: dst,
        };
        if src >= self.devices.len() || dst >= self.devices.len() || src == dst {
            return Err(no_link());
        }
        let mk = |hops: Vec<Hop>| {
            let latency_us = hops.iter().map(|h| self.links[h.link].latency_us).sum();
            let bandwidth_gbps = hops
                .iter()
                .map(|h| self.links[h.link].bandwidth_gbps)
                .fold(f64::INFINITY, f64::min);
            Route {
                hops,
                latency_us,
                bandwidth_gbps,
            }
        };
        if let Some(&(_, l)) = adj[src].iter().find(|&&(nb, _)| nb == dst) {
            return Ok(mk(vec![Hop {
                link: l,
                forward: self.links[l].a == src,
            }]));
        }
        // The search's answer when it is up the sender's first switch
        // port and down to the receiver: the first switch the search
        // takes from `src` (`adj` is in link order) is the first one it
        // expands, so if that switch has a link to `dst`, the route ends
        // with its first such link (the first in `adj[dst]` too). Costs
        // the two devices' degrees, not a search through the fabric (a
        // switch of 1024 ports).
        let first_switch = adj[src].iter().find(|&&(nb, _)| !self.is_device(nb));
        if let Some(&(sw, up)) = first_switch {
            if let Some(&(_, down)) = adj[dst].iter().find(|&&(nb, _)| nb == sw) {
                return Ok(mk(vec![
                    Hop {
                        link: up,
                        forward: self.links[up].a == src,
                    },
                    Hop {
                        link: down,
                        forward: self.links[down].a == sw,
                    },
                ]));
            }
        }
        // BFS through switches only; then, with links down, through any node.
        self.bfs(adj, scratch, src, dst, false)
            .or_else(|| {
                self.impairment
                    .relay()
                    .then(|| self.bfs(adj, scratch, src, dst, true))
                    .flatten()
            })
            .map(mk)
            .ok_or_else(no_link)
    }

    /// Fewest-hop path from `src` to `dst` in link order, through switches
    /// only unless `relay`.
    fn bfs(
        &self,
        adj: &[Vec<(usize, usize)>],
        scratch: &mut RouteScratch,
        src: usize,
        dst: usize,
        relay: bool,
    ) -> Option<Vec<Hop>> {
        let RouteScratch {
            prev,
            seen,
            mark,
            queue,
        } = scratch;
        if seen.len() != adj.len() || *mark == u32::MAX {
            *seen = vec![0; adj.len()];
            *prev = vec![(0, 0); adj.len()];
            *mark = 0;
        }
        // A node is seen in this search when its stamp is this search's.
        *mark += 1;
        let mark = *mark;
        seen[src] = mark;
        queue.clear();
        queue.push_back(src);
        while let Some(u) = queue.pop_front() {
            for &(v, l) in &adj[u] {
                if seen[v] == mark || (!relay && v != dst && self.is_device(v)) {
                    continue;
                }
                seen[v] = mark;
                prev[v] = (u, l);
                if v == dst {
                    let mut hops = Vec::new();
                    let mut at = dst;
                    while at != src {
                        let (p, l) = prev[at];
                        hops.push(Hop {
                            link: l,
                            forward: self.links[l].a == p,
                        });
                        at = p;
                    }
                    hops.reverse();
                    return Some(hops);
                }
                queue.push_back(v);
            }
        }
        None
    }

    /// [`Topology::route_with`] computing the adjacency itself.
    ///
    /// Errors: [`TopologyError::NoLink`].
    pub fn route(&self, src: usize, dst: usize) -> Result<Route, TopologyError> {
        self.route_with(&self.adjacency(), src, dst)
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
    fn presets_carry_their_preset_title() {
        for name in ["910b-8", "910a-8", "h100-8", "910b-2x8"] {
            let t = Topology::preset(name).unwrap();
            assert_eq!(Some(t.title), Topology::preset_title(name), "{name}");
        }
        assert_eq!(
            Topology::preset_title("910b-2x8").as_deref(),
            Some("2 servers × 8 Ascend 910B: HCCS full mesh inside, one RoCE port per NPU")
        );
        assert_eq!(Topology::preset_title("custom"), None);
    }

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
    fn h100_routes_through_the_nvswitch_with_nccl_figures() {
        let t = Topology::preset("h100-8").unwrap();
        assert_eq!(t.devices.len(), 8);
        assert_eq!(t.nodes(), 9);
        let r = t.route(2, 5).unwrap();
        assert_eq!(r.hops.len(), 2);
        assert_eq!(
            r.hops[0],
            Hop {
                link: 2,
                forward: true
            }
        );
        assert_eq!(
            r.hops[1],
            Hop {
                link: 5,
                forward: false
            }
        );
        assert!((r.bandwidth_gbps - 370.8).abs() < 1e-9);
        assert!((r.latency_us - 3.4).abs() < 1e-12);
        assert!(t.validate().is_ok());
    }

    #[test]
    fn ascend_910a_crosses_groups_over_the_pcie_bridge() {
        let t = Topology::preset("910a-8").unwrap();
        assert_eq!(t.links.len(), 12 + 8 + 1);
        let inside = t.route(0, 3).unwrap();
        assert_eq!(inside.hops.len(), 1);
        assert_eq!(t.links[inside.hops[0].link].kind, LinkKind::Hccs);
        let across = t.route(3, 4).unwrap();
        let names: Vec<&str> = across
            .hops
            .iter()
            .map(|h| {
                let l = &t.links[h.link];
                t.node_label(if h.forward { l.b } else { l.a })
            })
            .collect();
        assert_eq!(names, vec!["PCIe0", "PCIe1", "NPU4"]);
        assert!((across.bandwidth_gbps - 27.2).abs() < 1e-9);
    }

    #[test]
    fn cluster_presets_parse_and_route_over_roce() {
        let t = Topology::preset("910b-128x8").unwrap();
        assert_eq!(t.devices.len(), 1024);
        assert_eq!(t.links.len(), 128 * 28 + 1024);
        let r = t.route(7, 8).unwrap();
        assert_eq!(r.hops.len(), 2);
        assert!((r.latency_us - 60.0).abs() < 1e-12);
        assert_eq!(t.route(8, 9).unwrap().hops.len(), 1);
        for name in [
            "910b-8",
            "910a-8",
            "h100-8",
            "910b-2x8",
            "910b-128x8",
            "910b-1024x8",
        ] {
            assert_eq!(
                Topology::preset_devices(name),
                Some(Topology::preset(name).unwrap().devices.len()),
                "{name}"
            );
        }
        for bad in [
            "910b-1x8",
            "910b-1025x8",
            "910b-0128x8",
            "910b-x8",
            "910b-0008x8",
            "910b--2x8",
        ] {
            assert!(Topology::preset(bad).is_err(), "{bad}");
            assert_eq!(Topology::preset_devices(bad), None, "{bad}");
        }
    }

    /// The route as the search alone finds it (before the switch-port
    /// shortcut of `route_in`): the direct link, else the search through
    /// switches, else with links down through any node.
    fn searched(t: &Topology, src: usize, dst: usize) -> Option<Vec<Hop>> {
        let adj = t.adjacency();
        if let Some(&(_, l)) = adj[src].iter().find(|&&(nb, _)| nb == dst) {
            return Some(vec![Hop {
                link: l,
                forward: t.links[l].a == src,
            }]);
        }
        let mut s = RouteScratch::default();
        t.bfs(&adj, &mut s, src, dst, false).or_else(|| {
            t.impairment
                .relay()
                .then(|| t.bfs(&adj, &mut s, src, dst, true))
                .flatten()
        })
    }

    #[test]
    fn switch_port_routes_are_the_searchs_routes() {
        let link = |a: usize, b: usize| Link {
            a,
            b,
            kind: LinkKind::Roce,
            bandwidth_gbps: 1.0 + (a * 7 + b) as f64,
            latency_us: 0.5 + a as f64,
        };
        // Devices 0..6; switch A = node 6, B = node 7. Device 0 reaches A
        // first, 1 reaches B first, 2 and 3 only B, 4 has two links to A,
        // 5 only A; A and B are joined; 0–1 direct. So some pairs go
        // up the first port and down, some need A–B, some the second port.
        let mut custom = Topology::ascend_910b_8();
        custom.name = "two-switches".into();
        custom.devices.truncate(6);
        custom.switches = vec![
            Switch {
                label: "A".into(),
                server: usize::MAX,
            },
            Switch {
                label: "B".into(),
                server: usize::MAX,
            },
        ];
        custom.links = vec![
            link(0, 6),
            link(1, 7),
            link(0, 7),
            link(2, 7),
            link(1, 6),
            link(4, 6),
            link(3, 7),
            link(6, 4),
            link(5, 6),
            link(6, 7),
            link(0, 1),
        ];
        let mut broken = Topology::preset("910b-2x8").unwrap();
        broken.impairment.down.push(broken.links.remove(3));
        broken.impairment.down.push(broken.links.remove(40));
        let mut tops: Vec<Topology> = ["910b-8", "910a-8", "h100-8", "910b-4x8"]
            .iter()
            .map(|n| Topology::preset(n).unwrap())
            .collect();
        tops.push(custom);
        tops.push(broken);
        for t in &tops {
            let adj = t.adjacency();
            let mut scratch = RouteScratch::default();
            let mut shortcuts = 0;
            for src in 0..t.devices.len() {
                for dst in (0..t.devices.len()).filter(|&d| d != src) {
                    let got = t
                        .route_in(&adj, &mut scratch, src, dst)
                        .ok()
                        .map(|r| r.hops);
                    assert_eq!(got, searched(t, src, dst), "{} {src}->{dst}", t.name);
                    shortcuts += usize::from(got.is_some_and(|h| h.len() == 2));
                }
            }
            if ["h100-8", "910b-4x8", "two-switches", "910b-2x8"].contains(&t.name.as_str()) {
                assert!(shortcuts > 0, "{}", t.name);
            }
        }
    }

    #[test]
    fn rank_limits_and_unknown_names() {
        let t = Topology::ascend_910b_8();
        assert!(t.check_ranks(2).is_ok() && t.check_ranks(8).is_ok());
        assert_eq!(
            t.check_ranks(9).unwrap_err().to_string(),
            "topology `910b-8` has 8 devices; ranks must be 2..=8, got 9"
        );
        assert_eq!(
            Topology::preset("dgx").unwrap_err().to_string(),
            "unknown topology `dgx`; known: 910b-8, 910a-8, h100-8, 910b-{S}x8 (S = 2..=1024 servers)"
        );
    }
}
