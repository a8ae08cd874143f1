//! NCCL's choices: what it runs for each primitive, and for AllReduce its
//! tuning model, which picks ring or tree by predicted time.
//!
//! Source: NVIDIA/nccl 2.30.7 (commit `5067397`), `src/graph/tuning.cc`
//! `ncclTopoTuneModel` (latency and bandwidth per collective × algorithm ×
//! protocol) and `ncclTopoGetAlgoTime` (`time = lat · latCount + bytes /
//! (1000 · bw)`), `src/enqueue.cc` `topoGetAlgoInfo` (the argmin over
//! algorithm and protocol). What runs (the filter in `ncclTopoTuneModel`):
//! AllReduce ring or tree (NVLS / CollNet need NVLink SHARP / SHARP, not
//! modelled); AllGather / ReduceScatter ring (PAT, a Bruck variant, only
//! with one GPU per node); Broadcast / Reduce ring only (a pipeline from /
//! to the root); AlltoAll, Scatter, Gather and Send/Recv are grouped
//! point-to-point sends to every peer (`enqueue.cc`), i.e. all pairs at
//! once. NCCL has no Barrier: a tiny AllReduce stands in.
//!
//! The tuning model here takes NCCL's tables as they are; from our
//! topology it takes the node count, whether the intra-node links are
//! NVLink or PCIe, and the bandwidth a GPU can push to its ring neighbour
//! (inside a node) or to another node (`busBw`, the product `nChannels ×
//! bw` of NCCL's graph search). Left out: the per-channel bandwidth caps
//! (`perChMax*`, which need NCCL's channel count), NVLS, CollNet, PAT's
//! own cost, tuner plugins. The `llMaxBw` cap uses the Hopper row (the
//! preset is H100).

use super::{log2i, Call, Choice};
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use crate::engine::topology::LinkKind;

/// NCCL's protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Low-latency (8-byte stores with flags).
    Ll,
    /// Low-latency 128-byte lines.
    Ll128,
    /// Simple (bulk copies with fences).
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

    fn index(self) -> usize {
        self as usize
    }
}

/// `baseLatencies` (µs) of Tree and Ring, per protocol (LL, LL128, Simple).
const BASE_LAT_TREE: [f64; 3] = [6.8, 14.0, 8.4];
const BASE_LAT_RING: [f64; 3] = [6.6, 14.0, 8.4];
/// `hwLatencies` (µs): NVLink, PCI, network × Tree / Ring × protocol.
const HW_LAT_TREE: [[f64; 3]; 3] = [[0.6, 1.25, 4.0], [1.0, 1.9, 4.0], [5.0, 8.5, 14.0]];
const HW_LAT_RING: [[f64; 3]; 3] = [[0.6, 1.9, 3.4], [1.0, 2.5, 5.7], [2.7, 4.0, 14.0]];
/// `llMaxBws`, Hopper row, by `nNodes` 1 / 2 / more (GB/s).
const LL_MAX_BW_HOPPER: [f64; 3] = [141.0, 45.0, 35.0];
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
/// NCCL's network overhead added to a ring's intra-node latency on
/// multi-node runs (`getNetOverhead`: 1 µs on Intel CPUs, ×3 for Simple).
const NET_OVERHEAD_US: f64 = 1.0;

/// NCCL's predicted time of AllReduce with `ring` (else tree) and `p`, µs,
/// and the inputs in words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuned {
    /// Ring (true) or tree.
    pub ring: bool,
    /// The protocol.
    pub protocol: Protocol,
    /// `lat`, µs.
    pub latency_us: f64,
    /// `bw` (algorithm bandwidth), GB/s.
    pub bw_gbps: f64,
    /// `lat + bytes / (1000 · bw)`, µs.
    pub time_us: f64,
}

/// The machine as NCCL's tuning model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Ranks.
    pub ranks: usize,
    /// Nodes (servers) among them.
    pub nodes: usize,
    /// Intra-node links are NVLink (else PCIe).
    pub nvlink: bool,
    /// Bandwidth a GPU pushes to its ring neighbour inside a node, GB/s.
    pub bw_intra_gbps: f64,
    /// Bandwidth a GPU pushes to another node, GB/s (= intra on one node).
    pub bw_inter_gbps: f64,
}

impl Shape {
    /// From a call's topology: node count from the devices' servers, link
    /// kind and bottleneck bandwidth of the routes rank `r → r+1` inside a
    /// node and between nodes.
    pub fn of(call: &Call) -> Shape {
        let topo = call.topology;
        let nodes = call.nodes();
        let mut intra = f64::INFINITY;
        let mut inter = f64::INFINITY;
        let mut nvlink = true;
        for r in 0..call.ranks {
            let d = (r + 1) % call.ranks;
            if d == r {
                continue;
            }
            let Ok(route) = topo.route(r, d) else {
                continue;
            };
            let same = topo.devices[r].server == topo.devices[d].server;
            if same {
                intra = intra.min(route.bandwidth_gbps);
                nvlink &= route
                    .hops
                    .iter()
                    .all(|h| topo.links[h.link].kind == LinkKind::Nvlink);
            } else {
                inter = inter.min(route.bandwidth_gbps);
            }
        }
        if !intra.is_finite() {
            intra = inter;
            nvlink = false;
        }
        if !inter.is_finite() {
            inter = intra;
        }
        Shape {
            ranks: call.ranks,
            nodes: nodes.len().max(1),
            nvlink,
            bw_intra_gbps: intra,
            bw_inter_gbps: inter,
        }
    }

    /// NCCL's tuning-model time of AllReduce of `bytes` with ring (`true`)
    /// or tree and `p` (module doc; `tuning.cc` lines quoted there).
    pub fn allreduce(&self, ring: bool, p: Protocol, bytes: u64) -> Tuned {
        let (n, nodes) = (self.ranks as f64, self.nodes);
        let pi = p.index();
        let nsteps = 2.0 * (n - 1.0);
        let bw0 = if nodes <= 2 {
            self.bw_intra_gbps
        } else {
            self.bw_inter_gbps
        };
        let ll_max = LL_MAX_BW_HOPPER[if nodes <= 2 { nodes - 1 } else { 2 }];
        let mut bus = bw0;
        if ring {
            match p {
                Protocol::Ll => bus = ll_max.min(bus * 0.5),
                Protocol::Ll128 => bus *= 0.92,
                Protocol::Simple => {}
            }
        } else {
            bus *= 0.92;
            match p {
                Protocol::Ll => bus = (bus / 3.8).min(ll_max),
                Protocol::Ll128 => bus *= if nodes == 1 { 7.0 / 9.0 } else { 120.0 / 128.0 },
                Protocol::Simple => {}
            }
        }
        let ratio = if ring { n / nsteps } else { 0.5 };
        let mut bw = bus * ratio;
        let hw_intra = if self.nvlink { 0 } else { 1 };
        let table = if ring { &HW_LAT_RING } else { &HW_LAT_TREE };
        let mut intra_lat = table[hw_intra][pi];
        let ppn = self.ranks / nodes.max(1);
        let inter_lat = if ppn == 1 {
            HW_LAT_TREE[2][pi]
        } else {
            table[2][pi]
        };
        let mut lat;
        if ring {
            lat = BASE_LAT_RING[pi];
            if nodes > 1 {
                let overhead = NET_OVERHEAD_US * if p == Protocol::Simple { 3.0 } else { 1.0 };
                intra_lat = intra_lat.max(overhead);
            }
            let inter_steps = if nodes == 1 {
                0.0
            } else {
                2.0 * (nodes as f64 - 1.0)
            };
            lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
        } else {
            lat = BASE_LAT_TREE[pi];
            lat += 2.0
                * ((n / nodes as f64 - 1.0).floor() * intra_lat + log2i(nodes) as f64 * inter_lat);
            let log_size = (bytes >> 6).checked_ilog2();
            if let Some(k) = log_size.filter(|&k| k < 23) {
                bw *= TREE_CORRECTION[pi][k as usize];
            }
        }
        if ring && p == Protocol::Simple && nodes > 1 {
            // "Plateau effect of ring" (sm80+), when the per-channel,
            // per-rank share is at least 64 B (16 channels assumed).
            if bytes as f64 / (16.0 * n) >= 64.0 {
                lat *= 1.4;
            }
        }
        Tuned {
            ring,
            protocol: p,
            latency_us: lat,
            bw_gbps: bw,
            time_us: lat + bytes as f64 / (1000.0 * bw),
        }
    }

    /// The argmin over {ring, tree} × protocols of [`Shape::allreduce`]
    /// (`topoGetAlgoInfo`), with the best of each algorithm.
    pub fn pick_allreduce(&self, bytes: u64) -> (Tuned, Tuned, Tuned) {
        let best = |ring: bool| {
            let [first, rest @ ..] = Protocol::ALL.map(|p| self.allreduce(ring, p, bytes));
            rest.into_iter().fold(first, |best, t| {
                if t.time_us.total_cmp(&best.time_us).is_lt() {
                    t
                } else {
                    best
                }
            })
        };
        let (r, t) = (best(true), best(false));
        let pick = if t.time_us < r.time_us { t } else { r };
        (pick, r, t)
    }
}

/// NCCL's algorithm for `call` (module doc).
pub fn choose(call: &Call) -> Option<Choice> {
    use Primitive::*;
    let nodes = call.nodes();
    let one_per_node = nodes.iter().all(|&k| k == 1) && nodes.len() > 1;
    let (algorithm, why) = match call.primitive {
        AllReduce => {
            let shape = Shape::of(call);
            let (pick, r, t) = shape.pick_allreduce(call.bytes);
            let a = if pick.ring {
                Algorithm::Ring
            } else {
                Algorithm::Dbtree
            };
            (
                a,
                format!(
                    "NCCL's tuning model (tuning.cc) picks {}/{}: ring/{} {:.1} µs vs tree/{} {:.1} µs ({} node{}, {:.0} GB/s per GPU)",
                    if pick.ring { "ring" } else { "tree" },
                    pick.protocol.name(),
                    r.protocol.name(),
                    r.time_us,
                    t.protocol.name(),
                    t.time_us,
                    shape.nodes,
                    if shape.nodes == 1 { "" } else { "s" },
                    if shape.nodes <= 2 { shape.bw_intra_gbps } else { shape.bw_inter_gbps }
                ),
            )
        }
        AllGather | ReduceScatter if one_per_node => (
            Algorithm::Nb,
            "NCCL runs PAT, a Bruck variant, with one GPU per node (NCCL_PAT_ENABLE default); nb is its Bruck schedule".to_string(),
        ),
        AllGather | ReduceScatter => (
            Algorithm::Ring,
            "NCCL runs AllGather and ReduceScatter on its ring (PAT only with one GPU per node; NVLS/CollNet not modelled)".to_string(),
        ),
        Broadcast | Reduce => (
            Algorithm::Ring,
            "NCCL runs Broadcast and Reduce only on its ring: a pipeline from (to) the root (tuning.cc)".to_string(),
        ),
        AlltoAll | AlltoAllV => (
            Algorithm::Mesh,
            "NCCL's AlltoAll is grouped send/recv to every peer at once (enqueue.cc), i.e. all pairs in one step".to_string(),
        ),
        Scatter | Gather => (
            Algorithm::Star,
            "NCCL's Scatter / Gather is grouped send/recv between the root and every peer (enqueue.cc), i.e. one step".to_string(),
        ),
        SendRecv => (
            Algorithm::Ring,
            "nccl-tests' sendrecv sends to the next rank and receives from the previous one".to_string(),
        ),
        Barrier => (
            Algorithm::Ring,
            "NCCL has no Barrier; a tiny ring AllReduce stands in".to_string(),
        ),
    };
    Some(Choice { algorithm, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Shape {
        Shape {
            ranks: 8,
            nodes: 1,
            nvlink: true,
            bw_intra_gbps: 370.8,
            bw_inter_gbps: 370.8,
        }
    }

    #[test]
    fn latencies_are_nccls_tables() {
        // One NVLink node of 8: ring Simple 8.4 + 14·3.4 = 56.0; tree
        // Simple 8.4 + 2·7·4.0 = 64.4; tree LL128 14 + 14·1.25 = 31.5;
        // ring LL128 14 + 14·1.9 = 40.6 (the research notes' arithmetic).
        let s = h100();
        assert!((s.allreduce(true, Protocol::Simple, 8).latency_us - 56.0).abs() < 1e-9);
        assert!((s.allreduce(false, Protocol::Simple, 8).latency_us - 64.4).abs() < 1e-9);
        assert!((s.allreduce(false, Protocol::Ll128, 8).latency_us - 31.5).abs() < 1e-9);
        assert!((s.allreduce(true, Protocol::Ll128, 8).latency_us - 40.6).abs() < 1e-9);
        assert!((s.allreduce(true, Protocol::Ll, 8).latency_us - 15.0).abs() < 1e-9);
    }

    #[test]
    fn one_nvlink_node_picks_the_ring_small_and_large() {
        let s = h100();
        for b in [8u64, 1 << 20, 1 << 30] {
            let (pick, _, _) = s.pick_allreduce(b);
            assert!(pick.ring, "{b}: {pick:?}");
        }
        assert_eq!(s.pick_allreduce(8).0.protocol, Protocol::Ll);
        assert_eq!(s.pick_allreduce(1 << 30).0.protocol, Protocol::Simple);
    }

    #[test]
    fn many_nodes_of_one_gpu_pick_the_tree_for_small_messages() {
        // 16 nodes × 1 GPU over a 25 GB/s network: ring pays 30 network
        // hops, tree 2·log2(16) = 8.
        let s = Shape {
            ranks: 16,
            nodes: 16,
            nvlink: false,
            bw_intra_gbps: 25.0,
            bw_inter_gbps: 25.0,
        };
        assert!(!s.pick_allreduce(4096).0.ring);
    }
}
