//! NCCL's choices: its tuning model (which algorithm and protocol it runs
//! for each collective, size, rank and node count, and the time it
//! believes that takes), and what it runs for the collectives the model
//! does not tune.
//!
//! Source: NVIDIA/nccl 2.30.7 (commit `5067397`). `src/graph/tuning.cc`
//! `ncclTopoTuneModel` fills a latency and a bandwidth per function ×
//! algorithm × protocol; `ncclTopoGetAlgoTime` turns them into `time = lat
//! + bytes / (1000 · bw)` (µs, GB/s) with the tree correction factors and
//! the ring "plateau"; `src/enqueue.cc` `topoGetAlgoInfo` takes the
//! argmin. The graph figures the model starts from (`nChannels`, `bwIntra`,
//! `bwInter`) come from NCCL's topology search (`src/graph/search.cc`
//! `ncclTopoCompute`), which [`graph`] approximates from the machine's link
//! classes ([`Hardware`]): the first speed of NCCL's speed array that the
//! pair (one node) or the NIC (several nodes) can carry, as many channels
//! as the GPU's links (or the node's NICs) hold at that speed, then
//! `ncclTopoDupChannels`. Left out: CollNet (needs `NCCL_COLLNET_ENABLE`
//! and a SHARP plugin), tuner plugins, `NCCL_ALGO` / `NCCL_PROTO`.
//!
//! AlltoAll, Scatter, Gather and Send/Recv are not tuned: they are grouped
//! point-to-point sends to every peer at once (`enqueue.cc`). NCCL has no
//! Barrier: a tiny AllReduce stands in.

use super::{log2i, Call, Choice};
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use crate::engine::dtype::{DType, ReduceOp};
use crate::engine::hardware::{Arch, Cpu, Fabric, Hardware, NicPath};
use crate::engine::topology::{LinkKind, Topology};
use serde::{Deserialize, Serialize};

/// NCCL's protocols (`src/include/device.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Protocol {
    /// Low-latency: 8-byte stores with a flag each (half the bytes are flags).
    Ll,
    /// Low-latency over 128-byte lines (120 of 128 bytes are data).
    Ll128,
    /// Bulk copies with fences.
    Simple,
}

impl Protocol {
    /// All three, in NCCL's order.
    pub const ALL: [Protocol; 3] = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];

    /// NCCL's name (`LL`, `LL128`, `Simple`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Ll => "LL",
            Protocol::Ll128 => "LL128",
            Protocol::Simple => "Simple",
        }
    }

    /// Index into NCCL's tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// NCCL's algorithms (`src/include/plugin/nccl_tuner.h` order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NcclAlgo {
    /// Double binary tree over nodes, a chain inside each node.
    Tree,
    /// Ring.
    Ring,
    /// NVLink SHARP: the reduction runs in the NVSwitch (Hopper and later).
    Nvls,
    /// NVLS inside nodes, a tree between them.
    NvlsTree,
    /// Parallel aggregated trees (AllGather / ReduceScatter, one GPU per node).
    Pat,
}

impl NcclAlgo {
    /// Index into NCCL's tables (CollNet Direct / Chain are 2 and 3).
    fn index(self) -> usize {
        match self {
            NcclAlgo::Tree => 0,
            NcclAlgo::Ring => 1,
            NcclAlgo::Nvls => 4,
            NcclAlgo::NvlsTree => 5,
            NcclAlgo::Pat => 6,
        }
    }

    /// NCCL's name (`Tree`, `Ring`, `NVLS`, `NVLSTree`, `PAT`).
    pub fn name(self) -> &'static str {
        match self {
            NcclAlgo::Tree => "Tree",
            NcclAlgo::Ring => "Ring",
            NcclAlgo::Nvls => "NVLS",
            NcclAlgo::NvlsTree => "NVLSTree",
            NcclAlgo::Pat => "PAT",
        }
    }

    /// The tuner plugin CSV's spelling (`tree`, `ring`, `nvls`,
    /// `nvls_tree`, `pat`; NVIDIA/nccl `plugins/tuner/example` README).
    pub fn csv_name(self) -> &'static str {
        match self {
            NcclAlgo::Tree => "tree",
            NcclAlgo::Ring => "ring",
            NcclAlgo::Nvls => "nvls",
            NcclAlgo::NvlsTree => "nvls_tree",
            NcclAlgo::Pat => "pat",
        }
    }

    /// The schedule of ours that draws it: ring; NCCL's tree ([`Algorithm::Dbtree`]);
    /// PAT as Bruck ([`Algorithm::Nb`]); NVLS, whose reduction happens in
    /// the switch, as every GPU exchanging with every other at once
    /// ([`Algorithm::Mesh`]: the traffic pattern, not NVLS's data path).
    pub fn drawn_as(self) -> Algorithm {
        match self {
            NcclAlgo::Tree | NcclAlgo::NvlsTree => Algorithm::Dbtree,
            NcclAlgo::Ring => Algorithm::Ring,
            NcclAlgo::Nvls => Algorithm::Mesh,
            NcclAlgo::Pat => Algorithm::Nb,
        }
    }
}

/// The functions NCCL's tuning model covers (`ncclFunc_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Func {
    /// Broadcast.
    Broadcast,
    /// Reduce.
    Reduce,
    /// AllGather.
    AllGather,
    /// ReduceScatter.
    ReduceScatter,
    /// AllReduce.
    AllReduce,
}

impl Func {
    /// The tuned function of a primitive (`None`: not tuned).
    pub fn of(p: Primitive) -> Option<Func> {
        match p {
            Primitive::Broadcast => Some(Func::Broadcast),
            Primitive::Reduce => Some(Func::Reduce),
            Primitive::AllGather => Some(Func::AllGather),
            Primitive::ReduceScatter => Some(Func::ReduceScatter),
            Primitive::AllReduce | Primitive::Barrier => Some(Func::AllReduce),
            _ => None,
        }
    }

    /// `nsteps` of `ncclTopoTuneModel`: AllReduce `2(n-1)`, AllGather /
    /// ReduceScatter `n-1`, else `n`.
    pub fn steps(self, ranks: usize) -> f64 {
        let n = ranks as f64;
        match self {
            Func::AllReduce => 2.0 * (n - 1.0),
            Func::AllGather | Func::ReduceScatter => n - 1.0,
            _ => n,
        }
    }
}

/// `baseLatencies` (µs) per algorithm index × protocol.
const BASE_LAT: [[f64; 3]; 7] = [
    [6.8, 14.0, 8.4],
    [6.6, 14.0, 8.4],
    [0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0],
    [8.0, 8.0, 8.0],
];
/// `hwLatencies[NVLINK]` (µs).
const HW_NVLINK: [[f64; 3]; 7] = [
    [0.6, 1.25, 4.0],
    [0.6, 1.9, 3.4],
    [0.0, 0.0, 3.7],
    [0.0, 0.0, 2.8],
    [0.0, 0.0, 25.0],
    [0.0, 0.0, 25.0],
    [0.0, 0.0, 4.0],
];
/// `hwLatencies[PCI]` (µs).
const HW_PCI: [[f64; 3]; 7] = [
    [1.0, 1.9, 4.0],
    [1.0, 2.5, 5.7],
    [0.0, 0.0, 3.7],
    [0.0, 0.0, 2.8],
    [0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0],
    [0.0, 0.0, 4.0],
];
/// `hwLatencies[NET]` (µs).
const HW_NET: [[f64; 3]; 7] = [
    [5.0, 8.5, 14.0],
    [2.7, 4.0, 14.0],
    [0.0, 0.0, 31.0],
    [0.0, 0.0, 30.0],
    [0.0, 0.0, 18.0],
    [0.0, 0.0, 20.9],
    [0.0, 0.0, 14.0],
];
/// `llMaxBws[row][nodes 1 / 2 / more]` (GB/s): rows are the GPU
/// generation on one node, Intel (0) or AMD (1) CPUs on several.
const LL_MAX_BW: [[f64; 3]; 4] = [
    [39.0, 39.0, 20.4],
    [87.7, 22.5, 19.0],
    [141.0, 45.0, 35.0],
    [282.0, 90.0, 70.0],
];
/// `perChMaxRingLL128Bws[arch][nodes]` (GB/s).
const PER_CH_RING_LL128: [[f64; 3]; 4] = [
    [20.0, 20.0, 20.0],
    [20.0, 20.0, 20.0],
    [36.7, 36.7, 36.7],
    [40.0, 40.0, 40.0],
];
/// `perChMaxTreeLL128Bws[arch][nodes]` (GB/s).
const PER_CH_TREE_LL128: [[f64; 3]; 4] = [
    [20.0, 20.0, 20.0],
    [20.0, 20.0, 20.0],
    [36.7, 36.7, 29.0],
    [55.6, 31.67, 20.0],
];
/// `perChMaxTreeBws[arch][nodes]` (GB/s).
const PER_CH_TREE: [[f64; 3]; 4] = [
    [26.5, 18.5, 10.0],
    [24.0, 23.6, 17.8],
    [38.7, 41.4, 36.0],
    [70.0, 42.8, 24.0],
];
/// `perChMaxNVLSTreeBws[arch][nodes]` (GB/s).
const PER_CH_NVLS_TREE: [[f64; 3]; 4] = [
    [26.5, 18.5, 10.0],
    [24.0, 23.6, 17.8],
    [0.0, 57.7, 45.5],
    [0.0, 96.0, 80.0],
];
/// `nvlsEfficiency[arch]`.
const NVLS_EFFICIENCY: [f64; 4] = [0.0, 0.0, 0.85, 0.74];
/// `treeCorrectionFactor[protocol][log2(bytes / 64)]`, 64 B … 256 MB.
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9,
        0.9, 0.9, 0.9, 1.0, 1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8,
        0.7, 0.7, 0.8, 0.9, 0.9, 0.9,
    ],
];
/// `speedArrayIntra` / `sm90SpeedArrayIntra` / `sm100SpeedArrayIntra` (GB/s).
const SPEEDS_INTRA: [&[f64]; 3] = [
    &[
        40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0,
    ],
    &[
        60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0,
    ],
    &[
        90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0,
    ],
];
/// `speedArrayInter` / `sm90SpeedArrayInter` / `sm100SpeedArrayInter` (GB/s).
const SPEEDS_INTER: [&[f64]; 3] = [
    &[
        48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4,
        1.2, 0.24, 0.12,
    ],
    &[
        48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
        0.12,
    ],
    &[
        96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
        3.0, 2.4, 1.2, 0.24, 0.12,
    ],
];
/// `MAXCHANNELS / 2`, the ring graph's channel cap (`src/init.cc`).
const MAX_RING_CHANNELS: usize = 32;
/// `NCCL_NVLS_CHUNKSIZE`'s default (`src/transport/nvls.cc`).
const NVLS_CHUNK_BYTES: u64 = 128 * 1024;
/// `NCCL_MAX_NVLS_ARITY` (`src/include/device.h`).
const MAX_NVLS_ARITY: usize = 32;

/// What NCCL's topology search found for one pattern (`ncclTopoGraph`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Graph {
    /// `nChannels`.
    pub channels: usize,
    /// `bwIntra`, GB/s per channel.
    pub bw_intra: f64,
    /// `bwInter`, GB/s per channel.
    pub bw_inter: f64,
}

fn speeds(arch: Arch, inter: bool) -> &'static [f64] {
    let i = match arch {
        Arch::Volta | Arch::Ampere => 0,
        Arch::Hopper => 1,
        Arch::Blackwell => 2,
    };
    if inter {
        SPEEDS_INTER[i]
    } else {
        SPEEDS_INTRA[i]
    }
}

/// The first speed of `list` at most `cap` (the last one if none is).
fn first_speed(list: &[f64], cap: f64) -> f64 {
    list.iter()
        .copied()
        .find(|&s| s <= cap)
        .unwrap_or_else(|| list.last().copied().unwrap_or(0.12))
}

/// The ring / tree graph NCCL's search finds on `nodes` nodes (module doc):
/// one node: the fastest speed a GPU pair carries, `gpu_gbps / speed`
/// channels; several: the fastest speed a NIC carries, one channel per
/// NIC per speed it holds; then `ncclTopoDupChannels` (double the
/// channels at half the speed when `bwIntra ≥ 25`, except on SM90+ below
/// 50 GB/s with more than 4 channels).
pub fn graph(hw: &Hardware, nodes: usize) -> Graph {
    let cc = hw.arch.compute_capability();
    let (mut ch, mut s) = if nodes <= 1 {
        let s = first_speed(speeds(hw.arch, false), hw.pair_gbps.min(hw.gpu_gbps));
        ((hw.gpu_gbps / s).floor() as usize, s)
    } else {
        let s = first_speed(speeds(hw.arch, true), hw.nic_gbps.min(hw.pair_gbps));
        let per_nic = (hw.nic_gbps / s).floor() as usize;
        let by_links = (hw.gpu_gbps / s).floor() as usize;
        ((hw.nics_per_node * per_nic).min(by_links.max(1)), s)
    };
    ch = ch.clamp(1, MAX_RING_CHANNELS);
    if s >= 25.0 && !(cc > 80 && s < 50.0 && ch > 4) {
        let dup = (ch * 2).min(MAX_RING_CHANNELS);
        s /= dup.div_ceil(ch) as f64;
        ch = dup;
    }
    Graph {
        channels: ch,
        bw_intra: s,
        bw_inter: s,
    }
}

/// The NVLS graph (NVSwitch and SM90+ only): one channel per GPU of the
/// node (`NCCL_MAX_NVLS_ARITY` at most), at the fastest intra speed that
/// many channels fit in `gpu_gbps × g / (g − 1)` (search.cc lifts the
/// total for non-ring patterns); between nodes, the node's NICs shared by
/// the channels.
pub fn nvls_graph(hw: &Hardware, nodes: usize, ppn: usize) -> Option<Graph> {
    // The communicator's GPUs of a node, not the node's (search.cc sizes
    // the NVLS graph by the system it searched).
    let g = ppn.min(hw.gpus_per_node);
    if !hw.nvswitch || hw.arch.compute_capability() < 90 || g < 2 {
        return None;
    }
    let ch = g.min(MAX_NVLS_ARITY);
    let total = hw.gpu_gbps * g as f64 / (g - 1) as f64;
    let s = speeds(hw.arch, false)
        .iter()
        .copied()
        .find(|&s| s <= hw.pair_gbps && s * ch as f64 <= total)?;
    let inter = if nodes > 1 {
        s.min(hw.nics_per_node as f64 * hw.nic_gbps / ch as f64)
    } else {
        s
    };
    Some(Graph {
        channels: ch,
        bw_intra: s,
        bw_inter: inter,
    })
}

/// How an entry's latency is made, so that a calibration can scale each
/// part: `base + intra_hops · max(intra_us, ring_overhead_us) + inter_hops ·
/// inter_us + extra_us`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// `baseLatencies[a][p]`, µs.
    pub base_us: f64,
    /// Hops paid at the in-node latency.
    pub intra_hops: f64,
    /// The in-node hop latency, µs (`hwLatencies[intraHw]`).
    pub intra_us: f64,
    /// The floor a multi-node ring puts under every in-node step, µs
    /// (`netOverhead`: 1 µs on Intel, 2 on AMD, ×3 for Simple); 0 elsewhere.
    pub ring_overhead_us: f64,
    /// Hops paid at the network latency.
    pub inter_hops: f64,
    /// The network hop latency, µs.
    pub inter_us: f64,
    /// A part linear in the rank count (PAT's `nRanks · 2.8`), µs.
    pub extra_us: f64,
}

impl Latency {
    /// The sum, µs.
    pub fn total_us(&self) -> f64 {
        self.base_us
            + self.intra_hops * self.intra_us.max(self.ring_overhead_us)
            + self.inter_hops * self.inter_us
            + self.extra_us
    }
}

/// One (algorithm, protocol) of the tuning table.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Algorithm.
    pub algo: NcclAlgo,
    /// Protocol.
    pub protocol: Protocol,
    /// `comm->latencies[f][a][p]`, in parts.
    pub latency: Latency,
    /// `comm->bandwidths[f][a][p]`: algorithm bandwidth, GB/s.
    pub bw_gbps: f64,
    /// Channels of the algorithm's graph.
    pub channels: usize,
}

/// The call as NCCL's tuning model sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuning {
    /// The machine.
    pub hw: Hardware,
    /// The function.
    pub func: Func,
    /// Ranks.
    pub ranks: usize,
    /// Nodes.
    pub nodes: usize,
    /// Every enabled (algorithm, protocol), with latency and bandwidth.
    pub entries: Vec<Entry>,
    /// `comm->nChannels` (the ring graph's, for the plateau rule).
    pub channels: usize,
}

/// Can NCCL run `primitive` of `dtype` with `op` on NVLS? `enqueue.cc`
/// enables NVLS for AllGather always, and for the reductions only where
/// `ncclNvlsSupported` (`src/include/device.h`) holds: sum of 32/64-bit
/// integers, fp16, bf16, fp32, fp64; min and max of the integers, fp16 and
/// bf16. Never for 8-bit types, products or averages (`ncclAvg` is a
/// pre-multiplied sum NVLS does not run).
pub fn nvls_supported(primitive: Primitive, dtype: DType, op: ReduceOp) -> bool {
    if primitive == Primitive::AllGather {
        return true;
    }
    match op {
        ReduceOp::Sum => matches!(
            dtype,
            DType::Int32 | DType::Fp16 | DType::Bf16 | DType::Fp32
        ),
        ReduceOp::Max | ReduceOp::Min => matches!(dtype, DType::Int32 | DType::Fp16 | DType::Bf16),
        ReduceOp::Prod | ReduceOp::Avg => false,
    }
}

/// The LL128 rule of `ncclTopoTuneModel`: on by default over NVLink inside
/// the node (`typeIntra <= PATH_NVB`) on SM70+, never over PCIe; across
/// nodes only where the NIC sits behind the GPU's own PCIe switches
/// (`typeInter <= PATH_PXB`, [`NicPath`]).
pub fn ll128_enabled(hw: &Hardware, nodes: usize) -> bool {
    hw.fabric == Fabric::Nvlink
        && hw.arch.compute_capability() >= 70
        && (nodes == 1 || hw.nic_path == NicPath::Switch)
}

/// PAT is enabled with one GPU per node (`ncclPatEnable`).
fn pat_enabled(ranks: usize, nodes: usize) -> bool {
    nodes == ranks
}

impl Tuning {
    /// `ncclTopoTuneModel` for one function on `ranks` ranks over `nodes`
    /// nodes (module doc). NVLS runs on one node only (on several it needs
    /// CollNet, disabled by default); NVLSTree on several.
    pub fn new(hw: &Hardware, func: Func, ranks: usize, nodes: usize) -> Tuning {
        Tuning::with(hw, func, ranks, nodes, true)
    }

    /// [`Tuning::new`], without NVLS / NVLSTree when `nvls_ok` is false
    /// (a data type or reduce op NVLS does not run, [`nvls_supported`]).
    pub fn with(hw: &Hardware, func: Func, ranks: usize, nodes: usize, nvls_ok: bool) -> Tuning {
        let nodes = nodes.clamp(1, ranks.max(1));
        let ring = graph(hw, nodes);
        let ppn = (ranks / nodes).max(1);
        let nvls = nvls_graph(hw, nodes, ppn).filter(|_| nvls_ok);
        let mut entries = Vec::new();
        for algo in [
            NcclAlgo::Tree,
            NcclAlgo::Ring,
            NcclAlgo::Nvls,
            NcclAlgo::NvlsTree,
            NcclAlgo::Pat,
        ] {
            let allowed = match (func, algo) {
                (Func::Broadcast | Func::Reduce, a) => a == NcclAlgo::Ring,
                (Func::AllGather | Func::ReduceScatter, a) => {
                    matches!(a, NcclAlgo::Ring | NcclAlgo::Pat)
                        || (a == NcclAlgo::Nvls && nodes == 1)
                }
                (Func::AllReduce, NcclAlgo::Pat) => false,
                (Func::AllReduce, NcclAlgo::Nvls) => nodes == 1,
                (Func::AllReduce, NcclAlgo::NvlsTree) => nodes > 1,
                (Func::AllReduce, _) => true,
            };
            if !allowed || ranks < 2 {
                continue;
            }
            if algo == NcclAlgo::Pat && !pat_enabled(ranks, nodes) {
                continue;
            }
            let g = match algo {
                NcclAlgo::Nvls | NcclAlgo::NvlsTree => match nvls {
                    Some(g) => g,
                    None => continue,
                },
                _ => ring,
            };
            for p in Protocol::ALL {
                if matches!(algo, NcclAlgo::Nvls | NcclAlgo::NvlsTree | NcclAlgo::Pat)
                    && p != Protocol::Simple
                {
                    continue;
                }
                if p == Protocol::Ll128 && !ll128_enabled(hw, nodes) {
                    continue;
                }
                let bw = bandwidth(hw, func, algo, p, g, ranks, nodes);
                if bw <= 0.0 {
                    continue;
                }
                entries.push(Entry {
                    algo,
                    protocol: p,
                    latency: latency(hw, func, algo, p, ranks, nodes),
                    bw_gbps: bw,
                    channels: g.channels,
                });
            }
        }
        Tuning {
            hw: hw.clone(),
            func,
            ranks,
            nodes,
            entries,
            channels: ring.channels,
        }
    }

    /// `ncclTopoGetAlgoTime` of `e` for `bytes` (one operation), µs: the
    /// tree correction on the bandwidth and the ring plateau on the latency.
    pub fn time_us(&self, e: &Entry, bytes: u64) -> f64 {
        let bw = e.bw_gbps * self.bw_correction(e, bytes);
        e.latency.total_us() * self.latency_factor(e, bytes) + bytes as f64 / (1000.0 * bw)
    }

    /// `treeCorrectionFactor` for a tree AllReduce of `bytes` (1 otherwise).
    pub fn bw_correction(&self, e: &Entry, bytes: u64) -> f64 {
        let log = (bytes >> 6).checked_ilog2();
        let nvls_tree = e.algo == NcclAlgo::NvlsTree && self.hw.arch.compute_capability() >= 100;
        match log {
            Some(k) if k < 23 && e.algo == NcclAlgo::Tree && self.func == Func::AllReduce => {
                TREE_CORRECTION[e.protocol.index()][k as usize]
            }
            // NVLSTree on SM100+ (x86), up to log 23 (tuning.cc).
            Some(k) if k < 24 && nvls_tree && self.func == Func::AllReduce => {
                TREE_CORRECTION[e.protocol.index()][k as usize]
            }
            _ => 1.0,
        }
    }

    /// The ring "plateau" on multi-node Simple AllReduce once each channel
    /// and rank gets 64 bytes: ×1.9 before SM80, ×1.4 from SM80 on.
    pub fn latency_factor(&self, e: &Entry, bytes: u64) -> f64 {
        let per = bytes as f64 / (self.channels.max(1) * self.ranks.max(1)) as f64;
        if e.algo == NcclAlgo::Ring
            && e.protocol == Protocol::Simple
            && self.nodes > 1
            && self.func == Func::AllReduce
            && per >= 64.0
        {
            if self.hw.arch.compute_capability() < 80 {
                1.9
            } else {
                1.4
            }
        } else {
            1.0
        }
    }

    /// Channels NCCL launches for `e` at `bytes` (`src/enqueue.cc`, the
    /// ring/tree "channel tuning" after the choice): from `comm->nChannels`,
    /// one fewer while `bytes < nc · nt · threadThreshold` (`nt` the
    /// protocol's thread count: LL 512, LL128 640, Simple 512, from
    /// `src/include/device.h`; thresholds LL 8 × nRanks for a ring, else
    /// 8, LL128 8, Simple 64, `src/include/comm.h`); NVLS keeps all its
    /// channels. The tuning model's time ignores it (it ran before); the
    /// calibrated time does not: a small message runs on fewer channels.
    pub fn channels_at(&self, e: &Entry, bytes: u64) -> usize {
        if matches!(e.algo, NcclAlgo::Nvls | NcclAlgo::NvlsTree) {
            return e.channels;
        }
        let nt = match e.protocol {
            Protocol::Ll => 512.0,
            Protocol::Ll128 => 640.0,
            Protocol::Simple => 512.0,
        };
        let threshold = match e.protocol {
            Protocol::Ll if e.algo == NcclAlgo::Ring => 8.0 * self.ranks as f64,
            Protocol::Ll | Protocol::Ll128 => 8.0,
            Protocol::Simple => 64.0,
        };
        let mut nc = self.channels.max(e.channels).max(1);
        while nc >= 2 && (bytes as f64) < nc as f64 * nt * threshold {
            nc -= 1;
        }
        nc.min(e.channels.max(1))
    }

    /// NVLS's chunk and how many chunks are in flight at once, for
    /// `bytes` on `e` (`None` off NVLS). `calcCollChunking`
    /// (`src/enqueue.cc`): from `NCCL_NVLS_CHUNKSIZE` (128 KiB), 64 KiB
    /// below 64 × the in-flight bytes, 32 KiB below 8 ×, 16 KiB below 2 ×;
    /// in flight: `nvlsChannels` (`src/transport/nvls.cc`: 16 on SM90, 24
    /// on one SM100 node, 32 on several) × the NVLS heads (one per NVLS
    /// graph channel, `src/graph/connect.cc`). Multi-node NVLS capped at
    /// 32 KiB below 150 GB/s is not modelled: NVLS here is one node.
    pub fn nvls_chunk(&self, e: &Entry, bytes: u64) -> Option<(u64, u64)> {
        if e.algo != NcclAlgo::Nvls {
            return None;
        }
        let channels: u64 = if self.hw.arch.compute_capability() >= 100 {
            if self.nodes > 1 {
                32
            } else {
                24
            }
        } else {
            16
        };
        let ops = channels * e.channels.max(1) as u64;
        let mut chunk: u64 = NVLS_CHUNK_BYTES;
        for (times, to) in [(64, 65536), (8, 32768), (2, 16384)] {
            if bytes < times * ops * chunk && chunk > to {
                chunk = to;
            }
        }
        Some((chunk, ops))
    }

    /// The argmin over the entries (`topoGetAlgoInfo`), with its time, µs.
    pub fn pick(&self, bytes: u64) -> Option<(Entry, f64)> {
        self.entries
            .iter()
            .map(|e| (*e, self.time_us(e, bytes)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Bandwidth of one entry (`ncclTopoTuneModel`'s refinements, then bus
/// to algorithm bandwidth), GB/s; 0 = disabled.
fn bandwidth(
    hw: &Hardware,
    func: Func,
    algo: NcclAlgo,
    p: Protocol,
    g: Graph,
    ranks: usize,
    nodes: usize,
) -> f64 {
    let arch = hw.arch.index();
    let i2 = if nodes <= 2 { nodes - 1 } else { 2 };
    let i1 = if nodes == 1 {
        arch
    } else if hw.cpu == Cpu::Amd {
        1
    } else {
        0
    };
    let ll_max = LL_MAX_BW[i1][i2];
    let ppn = ranks as f64 / nodes as f64;
    let ch = g.channels as f64;
    let mut bw = if nodes <= 2 { g.bw_intra } else { g.bw_inter };
    if matches!(algo, NcclAlgo::Nvls | NcclAlgo::NvlsTree) {
        if g.channels < 2 {
            return 0.0;
        }
        let mut intra = g.bw_intra * NVLS_EFFICIENCY[arch] * (ch - 1.0) / ch;
        intra *= if func == Func::AllReduce {
            2.0
        } else {
            (ppn - 1.0) / ppn
        };
        let inter = g.bw_inter
            * if nodes <= 2 && algo == NcclAlgo::NvlsTree {
                2.0
            } else {
                1.0
            };
        let cap = if algo == NcclAlgo::NvlsTree {
            PER_CH_NVLS_TREE[arch][i2]
        } else {
            f64::MAX
        };
        bw = intra.min(inter).min(cap);
    }
    let mut bus = ch * bw;
    match (algo, p) {
        (NcclAlgo::Ring, Protocol::Ll) => bus = ll_max.min(bus * 0.5),
        (NcclAlgo::Ring, Protocol::Ll128) => {
            bus = (bus * 0.92).min(ch * PER_CH_RING_LL128[arch][i2])
        }
        _ => {}
    }
    if algo == NcclAlgo::Tree {
        if func == Func::AllReduce {
            bus = (bus * 0.92).min(ch * PER_CH_TREE[arch][i2]);
        }
        match p {
            Protocol::Ll => bus = (bus / 3.8).min(ll_max),
            Protocol::Ll128 => {
                let f = if nodes == 1 { 7.0 / 9.0 } else { 120.0 / 128.0 };
                bus = (bus * f).min(ch * PER_CH_TREE_LL128[arch][i2]);
            }
            Protocol::Simple => {}
        }
    }
    // One GPU per node: the search's pattern is TREE (search.cc), and
    // tuning.cc takes 15 % off a tree's bandwidth for it.
    if algo == NcclAlgo::Tree && ppn <= 1.0 {
        bus *= 0.85;
    }
    if algo == NcclAlgo::Pat {
        bus *= 0.75;
    }
    let gathers = matches!(func, Func::AllGather | Func::ReduceScatter);
    if !(algo != NcclAlgo::Ring && gathers) {
        let ratio = match algo {
            NcclAlgo::Ring | NcclAlgo::Nvls | NcclAlgo::NvlsTree => {
                ranks as f64 / func.steps(ranks)
            }
            _ => 0.5,
        };
        bus *= ratio;
    }
    bus
}

/// Latency of one entry, in parts (`ncclTopoTuneModel`).
fn latency(
    hw: &Hardware,
    func: Func,
    algo: NcclAlgo,
    p: Protocol,
    ranks: usize,
    nodes: usize,
) -> Latency {
    let (a, pi) = (algo.index(), p.index());
    let intra_table = if hw.fabric == Fabric::Nvlink {
        &HW_NVLINK
    } else {
        &HW_PCI
    };
    let ppn = ranks / nodes.max(1);
    let intra = intra_table[a][pi];
    let inter = if ppn == 1 {
        HW_NET[0][pi]
    } else {
        HW_NET[a][pi]
    };
    let base = BASE_LAT[a][pi];
    let zero = Latency {
        base_us: base,
        intra_hops: 0.0,
        intra_us: intra,
        ring_overhead_us: 0.0,
        inter_hops: 0.0,
        inter_us: inter,
        extra_us: 0.0,
    };
    let log_nodes = log2i(nodes) as f64;
    match algo {
        NcclAlgo::Ring if matches!(func, Func::Broadcast | Func::Reduce) => {
            // `graphs[a]->sameChannels` is the search's default: one hop,
            // a network hop across nodes, an in-node one on one node.
            if nodes > 1 {
                Latency {
                    inter_hops: 1.0,
                    inter_us: HW_NET[a][pi],
                    ..zero
                }
            } else {
                Latency {
                    intra_hops: 1.0,
                    ..zero
                }
            }
        }
        NcclAlgo::Ring => {
            let overhead = if nodes > 1 {
                let o = if hw.cpu == Cpu::Amd { 2.0 } else { 1.0 };
                if p == Protocol::Simple {
                    3.0 * o
                } else {
                    o
                }
            } else {
                0.0
            };
            let steps = func.steps(ranks);
            let inter_steps = match (nodes, func) {
                (1, _) => 0.0,
                (n, Func::AllReduce) => 2.0 * (n as f64 - 1.0),
                (n, _) => n as f64 - 1.0,
            };
            Latency {
                intra_hops: steps - inter_steps,
                ring_overhead_us: overhead,
                inter_hops: inter_steps,
                ..zero
            }
        }
        NcclAlgo::Tree if func == Func::AllReduce => Latency {
            intra_hops: 2.0 * (ppn as f64 - 1.0),
            inter_hops: 2.0 * log_nodes,
            ..zero
        },
        NcclAlgo::Tree => zero,
        NcclAlgo::Nvls => Latency {
            base_us: 0.0,
            intra_hops: 1.0,
            inter_hops: if nodes > 1 { 1.0 } else { 0.0 },
            ..zero
        },
        NcclAlgo::NvlsTree => Latency {
            intra_hops: 1.0,
            inter_hops: 2.0 * log_nodes,
            ..zero
        },
        NcclAlgo::Pat => Latency {
            inter_hops: log_nodes,
            inter_us: inter / 3.5,
            extra_us: ranks as f64 * 2.8,
            ..zero
        },
    }
}

/// The machine of a call as link classes: the topology's own
/// [`Topology::hardware`] if it has one, else one derived from its links
/// ([`hardware_of`]).
pub fn hardware_of_call(call: &Call) -> Hardware {
    call.topology
        .hardware
        .clone()
        .unwrap_or_else(|| hardware_of(call.topology))
}

/// Link classes of a topology without a [`Topology::hardware`]: devices
/// per node from its servers; the fabric NVLink unless every in-node link
/// is PCIe; a GPU's bandwidth the sum of its in-node links (its switch
/// port, through a switch); one NIC per device at its network link's
/// bandwidth; Hopper if NVLink through a switch, else Ampere.
pub fn hardware_of(topo: &Topology) -> Hardware {
    let per_node = topo.nodes_of(topo.devices.len());
    let g = per_node.iter().copied().max().unwrap_or(1).max(1);
    let mut gpu = 0.0f64;
    let mut nic = 0.0f64;
    let mut nvlink = false;
    let mut through_switch = false;
    for l in &topo.links {
        if l.a != 0 && l.b != 0 {
            continue;
        }
        match l.kind {
            LinkKind::Roce => nic = nic.max(l.bandwidth_gbps),
            LinkKind::Nvlink | LinkKind::Hccs => {
                nvlink = true;
                gpu += l.bandwidth_gbps;
                through_switch |= !topo.is_device(l.a.max(l.b));
            }
            LinkKind::Pcie => gpu += l.bandwidth_gbps,
        }
    }
    let arch = if nvlink && through_switch {
        Arch::Hopper
    } else {
        Arch::Ampere
    };
    let pair = if through_switch {
        gpu
    } else {
        gpu / (g.saturating_sub(1).max(1)) as f64
    };
    Hardware {
        accelerator: topo.title.clone(),
        arch,
        gpus_per_node: g,
        fabric: if nvlink { Fabric::Nvlink } else { Fabric::Pcie },
        gpu_gbps: gpu.max(1e-3),
        pair_gbps: pair.max(1e-3),
        nvswitch: nvlink && through_switch && g >= 2,
        nics_per_node: g,
        nic_gbps: if nic > 0.0 { nic } else { 25.0 },
        cpu: Cpu::Intel,
        nic_path: NicPath::Switch,
        sources: vec![format!("link classes read from the topology {}", topo.name)],
    }
}

/// NCCL's algorithm for `call` (module doc): the tuning model's argmin for
/// the tuned functions, drawn by [`NcclAlgo::drawn_as`].
pub fn choose(call: &Call) -> Option<Choice> {
    use Primitive::*;
    let hw = hardware_of_call(call);
    let nodes = call.nodes().len().max(1);
    let (algorithm, why) = match Func::of(call.primitive) {
        Some(func) => {
            let t = Tuning::with(&hw, func, call.ranks, nodes, call.nvls_ok);
            // A Barrier is a tiny AllReduce standing in.
            let bytes = if call.primitive == Barrier { 4 } else { call.bytes };
            let (e, time) = t.pick(bytes)?;
            // Our schedules have no Barrier tree: a ring stands in.
            let drawn = if call.primitive == Barrier {
                Algorithm::Ring
            } else {
                e.algo.drawn_as()
            };
            (
                drawn,
                format!(
                    "NCCL's tuning model (2.30.7 tuning.cc) picks {}/{} ({:.1} µs by its own constants; {} node{}, {} channels){}",
                    e.algo.name(),
                    e.protocol.name(),
                    time,
                    nodes,
                    if nodes == 1 { "" } else { "s" },
                    e.channels,
                    match e.algo {
                        NcclAlgo::Nvls => "; drawn as every GPU to every GPU, the reduction itself runs in the NVSwitch",
                        NcclAlgo::Pat => "; drawn as its Bruck schedule",
                        _ => "",
                    }
                ),
            )
        }
        None => match call.primitive {
            AlltoAll | AlltoAllV => (
                Algorithm::Mesh,
                "NCCL's AlltoAll is grouped send/recv to every peer at once (enqueue.cc), i.e. all pairs in one step".to_string(),
            ),
            Scatter | Gather => (
                Algorithm::Star,
                "NCCL's Scatter / Gather is grouped send/recv between the root and every peer (enqueue.cc), i.e. one step".to_string(),
            ),
            _ => (
                Algorithm::Ring,
                "nccl-tests' sendrecv sends to the next rank and receives from the previous one".to_string(),
            ),
        },
    };
    Some(Choice { algorithm, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Hardware {
        Hardware::h100_node()
    }

    fn entry(t: &Tuning, a: NcclAlgo, p: Protocol) -> Entry {
        *t.entries
            .iter()
            .find(|e| e.algo == a && e.protocol == p)
            .unwrap()
    }

    #[test]
    fn h100_graph_is_twelve_channels_of_30_and_nvls_eight_of_50() {
        // Intra speeds (SM90) 60, 50, ...: 60 fits the 370.8 GB/s pair;
        // 6 channels, doubled to 12 at 30 (DupChannels: 60 >= 50).
        let g = graph(&h100(), 1);
        assert_eq!((g.channels, g.bw_intra), (12, 30.0));
        // NVLS: 8 channels; 60 × 8 = 480 > 370.8 × 8/7 = 423.8, 50 × 8 = 400 fits.
        let n = nvls_graph(&h100(), 1, 8).unwrap();
        assert_eq!((n.channels, n.bw_intra), (8, 50.0));
    }

    #[test]
    fn h100_latencies_and_bandwidths_are_tuning_cc_by_hand() {
        let t = Tuning::new(&h100(), Func::AllReduce, 8, 1);
        // Ring: 14 steps. LL 6.6 + 14·0.6 = 15.0; LL128 14 + 14·1.9 = 40.6;
        // Simple 8.4 + 14·3.4 = 56.0.
        let ll = entry(&t, NcclAlgo::Ring, Protocol::Ll);
        assert!((ll.latency.total_us() - 15.0).abs() < 1e-9);
        assert!(
            (entry(&t, NcclAlgo::Ring, Protocol::Ll128)
                .latency
                .total_us()
                - 40.6)
                .abs()
                < 1e-9
        );
        let simple = entry(&t, NcclAlgo::Ring, Protocol::Simple);
        assert!((simple.latency.total_us() - 56.0).abs() < 1e-9);
        // Ring Simple bus 12 × 30 = 360, × 8/14 = 205.714...
        assert!((simple.bw_gbps - 360.0 * 8.0 / 14.0).abs() < 1e-9);
        // Ring LL: min(llMaxBw 141, 360 / 2) = 141, × 8/14 = 80.571...
        assert!((ll.bw_gbps - 141.0 * 8.0 / 14.0).abs() < 1e-9);
        // NVLS: min(50 × 0.85 × 7/8 × 2, 50) = 50 per channel, × 8 = 400, × 8/14.
        let nvls = entry(&t, NcclAlgo::Nvls, Protocol::Simple);
        assert!((nvls.bw_gbps - 400.0 * 8.0 / 14.0).abs() < 1e-9);
        assert!((nvls.latency.total_us() - 25.0).abs() < 1e-9);
        // Tree LL on one node: 6.8 + 2·7·0.6 = 15.2.
        assert!((entry(&t, NcclAlgo::Tree, Protocol::Ll).latency.total_us() - 15.2).abs() < 1e-9);
    }

    #[test]
    fn h100_picks_ring_ll_small_and_nvls_large() {
        let t = Tuning::new(&h100(), Func::AllReduce, 8, 1);
        let (e, time) = t.pick(1024).unwrap();
        assert_eq!((e.algo, e.protocol), (NcclAlgo::Ring, Protocol::Ll));
        // 15.0 + 1024 / (1000 · 80.571) = 15.0127
        assert!((time - (15.0 + 1024.0 / (1000.0 * 141.0 * 8.0 / 14.0))).abs() < 1e-9);
        let (e, time) = t.pick(16 << 20).unwrap();
        assert_eq!(e.algo, NcclAlgo::Nvls);
        // 25 + 16 MiB / (1000 · 228.571) = 98.40
        assert!(
            (time - (25.0 + (16u64 << 20) as f64 / (1000.0 * 400.0 * 8.0 / 14.0))).abs() < 1e-9
        );
    }

    #[test]
    fn polaris_like_two_nodes_tree_small_ring_large_and_540_nodes_tree() {
        // 4 A100 per node, 2 NICs of 25 GB/s: inter speed 24 (SM80 list 48,
        // 30, 28, 24), one channel per NIC, no dup (24 < 25): 2 × 24 = 48.
        let hw = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        let g = graph(&hw, 2);
        assert_eq!((g.channels, g.bw_inter), (2, 24.0));
        let t = Tuning::new(&hw, Func::AllReduce, 8, 2);
        // Tree LL on 2 nodes: 6.8 + 2·(3·0.6 + 1·5.0) = 20.4 µs.
        let tl = entry(&t, NcclAlgo::Tree, Protocol::Ll);
        assert!((tl.latency.total_us() - 20.4).abs() < 1e-9);
        assert_eq!(t.pick(1024).unwrap().0.algo, NcclAlgo::Tree);
        assert_eq!(t.pick(1 << 30).unwrap().0.algo, NcclAlgo::Ring);
        // Ring Simple, 2 nodes: intra max(3.4, 3·1.0) = 3.4 for 12 steps,
        // 2 network steps at 14: 8.4 + 40.8 + 28 = 77.2 µs (× 1.4 plateau).
        let rs = entry(&t, NcclAlgo::Ring, Protocol::Simple);
        assert!((rs.latency.total_us() - 77.2).abs() < 1e-9);
        assert!((t.latency_factor(&rs, 1 << 20) - 1.4).abs() < 1e-12);
        let big = Tuning::new(&hw, Func::AllReduce, 2160, 540);
        assert_eq!(big.pick(1024).unwrap().0.algo, NcclAlgo::Tree);
    }

    #[test]
    fn no_ll128_across_nodes_when_the_nic_is_behind_the_host_bridge() {
        use crate::engine::hardware::NicPath;
        let ll128 = |hw: &Hardware, ranks, nodes| {
            Tuning::new(hw, Func::AllReduce, ranks, nodes)
                .entries
                .iter()
                .any(|e| e.protocol == Protocol::Ll128)
        };
        let switch = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        let mut bridged = switch.clone();
        bridged.nic_path = NicPath::HostBridge;
        // typeInter <= PATH_PXB: LL128 on; PHB: off across nodes, and on
        // inside one node, where no NIC is on the path.
        assert!(ll128(&switch, 8, 2));
        assert!(!ll128(&bridged, 8, 2));
        assert!(ll128(&bridged, 4, 1));
        // Size by size (1 KiB..1 GiB), 2-node AllReduce: with LL128 some
        // mid sizes run it; without, each size runs LL or Simple, LL below
        // Simple.
        let by_size = |hw: &Hardware| -> Vec<Protocol> {
            let t = Tuning::new(hw, Func::AllReduce, 8, 2);
            (10..31)
                .map(|k| t.pick(1u64 << k).unwrap().0.protocol)
                .collect()
        };
        assert!(by_size(&switch).contains(&Protocol::Ll128));
        let bridged_protocols = by_size(&bridged);
        let first_simple = bridged_protocols
            .iter()
            .position(|&p| p == Protocol::Simple)
            .unwrap();
        assert!(first_simple > 0);
        assert!(bridged_protocols[..first_simple]
            .iter()
            .all(|&p| p == Protocol::Ll));
        assert!(bridged_protocols[first_simple..]
            .iter()
            .all(|&p| p == Protocol::Simple));
    }

    #[test]
    fn pat_only_with_one_gpu_per_node() {
        let hw = Hardware::of_accelerator("NVIDIA H100 80GB HBM3", 1, 1, 48.0);
        let t = Tuning::new(&hw, Func::AllGather, 16, 16);
        assert!(t.entries.iter().any(|e| e.algo == NcclAlgo::Pat));
        let hw8 = h100();
        let t = Tuning::new(&hw8, Func::AllGather, 16, 2);
        assert!(t.entries.iter().all(|e| e.algo != NcclAlgo::Pat));
    }
}
