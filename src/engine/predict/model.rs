//! The calibrated model: NCCL's own tuning formulas with a few physical
//! corrections a measurement can fit.
//!
//! NCCL's tuning model ([`crate::engine::library::nccl`]) decides what
//! runs; its constants are NCCL's beliefs, not the machine's. The
//! calibrated time of the same (algorithm, protocol) keeps NCCL's
//! structure (latency = base + in-node hops + network hops, bandwidth =
//! channels × per-channel bandwidth refined per protocol) and multiplies
//! each part by a correction ([`Param`]): with every correction at its
//! neutral value the calibrated time is NCCL's own. Two terms NCCL's
//! model lacks, because its chooser does not need them:
//!
//! - **Pipeline fill of a tree.** A tree AllReduce pushes each channel's
//!   data through `depth` hops in chunks; below a chunk the whole message
//!   crosses every hop one after the other, so the bandwidth term is paid
//!   `depth` times. Chunks: LL 32 KiB (`DEFAULT_LL_BUFFSIZE` / 8 steps /
//!   2, half of each 16-byte line is flags), LL128 600 KiB (120 of 128
//!   bytes of `DEFAULT_LL128_BUFFSIZE` / 8 steps), Simple 512 KiB
//!   (`NCCL_BUFFSIZE` 4 MiB / 8 steps); nccl `src/include/device.h`.
//! - **Pipeline fill of NVLS.** NVLS AllReduce keeps `ops` chunks in
//!   flight ([`Tuning::nvls_chunk`]: NCCL's chunk, which it shrinks for
//!   mid-size messages); the first chunk of each is reduced through the
//!   switch and multicast back before anything overlaps it, two chunk
//!   times at the bandwidth one of the `ops` gets. Without it the model
//!   is 25–34 % fast from 2 to 32 MiB on 8 × H100 against the public p5
//!   log; with it within 10 % there and on the 32 MiB–16 GiB log of
//!   NCCL 2.29 (both in `tests/fixtures/nccl-tests`).
//! - **Network taper.** The network may carry less per node between many
//!   nodes than between the few that were measured (a fat tree's or a
//!   dragonfly's global links): bandwidth over the network is multiplied
//!   by `exp(-taper · log2(nodes / measured nodes))`.
//!
//! AlltoAll, Scatter, Gather and Send/Recv are NCCL's grouped
//! point-to-point sends ([`p2p_time_us`]): one operation per peer (a peer
//! on another node also pays network hops) plus the bytes over the
//! busiest port class.

use crate::engine::collective::Primitive;
use crate::engine::hardware::Hardware;
use crate::engine::library::log2i;
use crate::engine::library::nccl::{Entry, Func, NcclAlgo, Protocol, Tuning};
use serde::{Deserialize, Serialize};

/// The corrections, each a natural logarithm (0 = NCCL's own figure)
/// except where said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// Base latency (`baseLatencies`) multiplier.
    Base,
    /// In-node hop latency multiplier.
    IntraLat,
    /// Network hop latency multiplier.
    NetLat,
    /// A multi-node ring's per-step overhead, ln µs (NCCL: 1 µs on Intel
    /// CPUs, ×3 for Simple; `getNetOverhead`).
    RingOverhead,
    /// In-node bandwidth multiplier.
    IntraBw,
    /// Network bandwidth multiplier.
    NetBw,
    /// NVLS bandwidth multiplier (NVLink SHARP: the switch reduces, so
    /// its bus bandwidth is not the wire's).
    NvlsBw,
    /// LL bandwidth multiplier (beyond NCCL's ×0.5).
    LlBw,
    /// LL128 bandwidth multiplier (beyond NCCL's ×0.92).
    Ll128Bw,
    /// Point-to-point cost every peer pays (an in-node peer's whole
    /// cost), ln µs.
    PeerLat,
    /// Bandwidth multiplier of point-to-point sends over the network
    /// (beyond the fitted network bandwidth; in-node sends use the in-node
    /// figure as collectives do).
    P2pBw,
    /// Network taper per doubling of the node count beyond the measured
    /// count (not a logarithm: the exponent's rate).
    Taper,
    /// Growth of the network hop latency per doubling of the node count
    /// beyond the measured count (more switch levels between far nodes).
    LatGrowth,
    /// What a peer on another node costs beyond [`Param::PeerLat`], as a
    /// multiple of the calibrated network hop ([`NET_PEER_HOP_US`] ×
    /// the [`Param::NetLat`] correction), ln.
    NetPeer,
}

/// Number of parameters.
pub const N_PARAMS: usize = 14;

impl Param {
    /// Every parameter, in vector order.
    pub const ALL: [Param; N_PARAMS] = [
        Param::Base,
        Param::IntraLat,
        Param::NetLat,
        Param::RingOverhead,
        Param::IntraBw,
        Param::NetBw,
        Param::NvlsBw,
        Param::LlBw,
        Param::Ll128Bw,
        Param::PeerLat,
        Param::P2pBw,
        Param::Taper,
        Param::LatGrowth,
        Param::NetPeer,
    ];

    /// Short name (`base`, `intra_lat`, ...), as in profiles and tables.
    pub fn name(self) -> &'static str {
        match self {
            Param::Base => "base",
            Param::IntraLat => "intra_lat",
            Param::NetLat => "net_lat",
            Param::RingOverhead => "ring_overhead",
            Param::IntraBw => "intra_bw",
            Param::NetBw => "net_bw",
            Param::NvlsBw => "nvls_bw",
            Param::LlBw => "ll_bw",
            Param::Ll128Bw => "ll128_bw",
            Param::PeerLat => "peer_lat",
            Param::P2pBw => "p2p_bw",
            Param::Taper => "taper",
            Param::LatGrowth => "lat_growth",
            Param::NetPeer => "net_peer",
        }
    }

    /// The prior `(mean, sd)` a fit starts from and falls back to where
    /// the data says nothing (see the module doc of [`super`]):
    /// - latencies: NCCL's constants, within a factor ~1.35 for the base
    ///   and ~1.65 for an in-node hop, ~2.7 for a network hop (networks
    ///   differ the most);
    /// - the ring overhead: NCCL's 1 µs, within a factor ~7;
    /// - bandwidths: NCCL's graph figures, within ~1.65; protocol factors
    ///   NCCL's own, within 10 %;
    /// - the cost every peer pays: 2 µs within a factor ~2; a peer on
    ///   another node pays 1.3 network hops more, within ~1.35. Measured,
    ///   not NCCL's (its tuning model has no figure for grouped sends):
    ///   the small-size AlltoAll of the public Polaris NCCL 2.18 sets
    ///   (argonne-lcf/alcf-nccl-tests) grows by 9.4 µs (Slingshot-11) and
    ///   16.3 µs (TCP sockets) per network peer from 2 to 8 nodes, and
    ///   Sophia's (DGX A100, InfiniBand) 2-node AlltoAll leaves ~2.5 µs
    ///   per network peer: 1.0–1.6 of each machine's network hop as its
    ///   own 2-node AllReduce fit calibrates it, so an AllReduce fit
    ///   predicts an AlltoAll's latency;
    /// - grouped sends over the network: 0.55 of the network bandwidth an
    ///   AllReduce fit finds, within ~1.35. Measured, not NCCL's: AlltoAll
    ///   of 1 GiB reaches 0.57 of it on Sophia (DGX A100, InfiniBand) and
    ///   0.51–0.53 on Polaris (Slingshot-11, NCCL 2.18 and 2.21), each
    ///   fitted from its own 2-node AllReduce (NCCL's tuning model has no
    ///   figure for grouped sends to derive it from);
    /// - the taper: 0.04 per doubling (a mild taper), sd 0.05: the public
    ///   Polaris NCCL 2.18 sets (argonne-lcf/alcf-nccl-tests) lose 0.04–0.12
    ///   of their 2-node bandwidth per doubling up to 540 nodes;
    /// - the latency growth: 0.03 per doubling, sd 0.03 (the same sets' tree
    ///   AllReduce pays 1.0–1.5× the 2-node network hop at 540 nodes).
    pub fn prior(self) -> (f64, f64) {
        match self {
            Param::Base => (0.0, 0.3),
            Param::IntraLat => (0.0, 0.5),
            Param::NetLat => (0.0, 1.0),
            Param::RingOverhead => (0.0, 1.0),
            Param::IntraBw | Param::NetBw => (0.0, 0.5),
            Param::NvlsBw => (0.0, 0.3),
            Param::LlBw | Param::Ll128Bw => (0.0, 0.1),
            Param::PeerLat => (2f64.ln(), 0.7),
            Param::NetPeer => (1.3f64.ln(), 0.3),
            Param::P2pBw => (0.55f64.ln(), 0.3),
            Param::Taper => (0.04, 0.05),
            Param::LatGrowth => (0.03, 0.03),
        }
    }
}

/// A point in parameter space.
pub type Params = [f64; N_PARAMS];

/// Every parameter at its prior mean.
pub fn prior_means() -> Params {
    Param::ALL.map(|p| p.prior().0)
}

/// The call being timed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// The primitive.
    pub primitive: Primitive,
    /// Ranks.
    pub ranks: usize,
    /// Nodes they run on.
    pub nodes: usize,
    /// Can NCCL run it on NVLS (its data type and reduce op)?
    #[serde(default = "yes")]
    pub nvls_ok: bool,
}

fn yes() -> bool {
    true
}

impl Shape {
    /// `ranks` ranks placed node by node on `hw`.
    pub fn on(hw: &Hardware, primitive: Primitive, ranks: usize) -> Shape {
        Shape {
            primitive,
            ranks,
            nodes: hw.nodes_for(ranks).min(ranks.max(1)),
            nvls_ok: true,
        }
    }

    /// Ranks per node (rounded down, at least 1).
    pub fn ppn(&self) -> usize {
        (self.ranks / self.nodes.max(1)).max(1)
    }
}

/// What runs and its calibrated time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Run {
    /// A tuned function: NCCL's entry.
    Tuned(Entry),
    /// Grouped point-to-point sends.
    P2p,
}

/// NVLS AllReduce's fill: the first chunk's reduce and its multicast
/// (module doc).
const NVLS_FILL_CHUNKS: f64 = 2.0;

/// Pipeline chunk per protocol, bytes (module doc).
const TREE_CHUNK_BYTES: [f64; 3] = [32768.0, 614400.0, 524288.0];

/// The taper's bandwidth factor at `nodes` when `measured_nodes` were
/// measured (1 on one node or at the measured scale or below).
pub fn taper_factor(p: &Params, nodes: usize, measured_nodes: usize) -> f64 {
    if nodes <= 1 || nodes <= measured_nodes {
        return 1.0;
    }
    let octaves = (nodes as f64 / measured_nodes.max(1) as f64).log2();
    (-p[Param::Taper as usize] * octaves).exp()
}

/// The network hop latency's factor at `nodes` when `measured_nodes` were
/// measured (1 at the measured scale or below).
pub fn latency_growth(p: &Params, nodes: usize, measured_nodes: usize) -> f64 {
    if nodes <= measured_nodes.max(1) {
        return 1.0;
    }
    let octaves = (nodes as f64 / measured_nodes.max(1) as f64).log2();
    (p[Param::LatGrowth as usize] * octaves).exp()
}

/// The calibrated time of NCCL's entry `e` of `t` for `bytes`, µs.
pub fn tuned_time_us(t: &Tuning, e: &Entry, bytes: u64, p: &Params, measured_nodes: usize) -> f64 {
    let x = |q: Param| p[q as usize].exp();
    let lat = &e.latency;
    // A multi-node ring step costs at least the calibrated network
    // overhead (×3 for Simple, as NCCL's `netOverhead`).
    let overhead = if lat.ring_overhead_us > 0.0 {
        x(Param::RingOverhead) * overhead_scale(e.protocol)
    } else {
        0.0
    };
    let intra_us = (lat.intra_us * x(Param::IntraLat)).max(overhead);
    let latency = (lat.base_us * x(Param::Base)
        + lat.intra_hops * intra_us
        + (lat.inter_hops * lat.inter_us + lat.extra_us)
            * x(Param::NetLat)
            * latency_growth(p, t.nodes, measured_nodes))
        * t.latency_factor(e, bytes);
    let nvls = matches!(e.algo, NcclAlgo::Nvls | NcclAlgo::NvlsTree);
    // NVLS has its own in-node correction: the switch reduces, so its bus
    // bandwidth is not the links'.
    let in_node = if nvls {
        x(Param::NvlsBw)
    } else {
        x(Param::IntraBw)
    };
    // A small message runs on fewer channels than the graph has.
    let launched = t.channels_at(e, bytes) as f64 / e.channels.max(1) as f64;
    let mut bw = e.bw_gbps
        * launched
        * t.bw_correction(e, bytes)
        * if t.nodes <= 1 {
            in_node
        } else {
            x(Param::NetBw) * taper_factor(p, t.nodes, measured_nodes)
        };
    match e.protocol {
        Protocol::Ll => bw *= x(Param::LlBw),
        Protocol::Ll128 => bw *= x(Param::Ll128Bw),
        Protocol::Simple => {}
    }
    let mut time = latency + bytes as f64 / (1000.0 * bw);
    if let (Some((chunk, ops)), Func::AllReduce) = (t.nvls_chunk(e, bytes), t.func) {
        time += NVLS_FILL_CHUNKS * chunk as f64 * ops as f64 / (1000.0 * bw);
    }
    if e.algo == NcclAlgo::Tree && t.func == Func::AllReduce {
        let ppn = (t.ranks / t.nodes.max(1)).max(1);
        let depth = 2 * log2i(t.nodes) + 2 * (ppn - 1);
        if depth > 1 {
            let per_channel = bytes as f64 / e.channels.max(1) as f64;
            let chunk = per_channel.min(TREE_CHUNK_BYTES[e.protocol.index()]);
            // One channel's hop carries twice its share of the algorithm
            // bandwidth (a tree's algbw is half its bus bandwidth).
            let hop_gbps = 2.0 * bw / e.channels.max(1) as f64;
            time += (depth - 1) as f64 * chunk / (1000.0 * hop_gbps);
        }
    }
    time
}

/// NCCL multiplies a multi-node ring's network overhead by 3 for Simple.
fn overhead_scale(p: Protocol) -> f64 {
    if p == Protocol::Simple {
        3.0
    } else {
        1.0
    }
}

/// NCCL's network hop latency for LL (`hwLat[NET][Ring][LL]`, 2.7 µs,
/// nccl `src/graph/tuning.cc`): a small grouped send goes by LL
/// (`NCCL_P2P_LL_THRESHOLD` 16 KiB per channel, `src/enqueue.cc`), so a
/// network peer's cost is counted in these hops ([`Param::NetPeer`]).
pub const NET_PEER_HOP_US: f64 = 2.7;

/// The calibrated time of grouped point-to-point sends, µs: a base
/// latency, one operation per peer ([`Param::PeerLat`]; a peer on another
/// node also pays [`Param::NetPeer`] network hops, its sends go through
/// the network proxy), and the bytes over the busiest port class: per
/// node, `ppn · S · (n − ppn) / n` bytes leave through the node's NICs;
/// per GPU, `S · (ppn − 1) / n` go over the in-node fabric (`S` is
/// nccl-tests' size: a rank's whole send buffer for AlltoAll, the one
/// buffer for Send/Recv, the root's for Scatter / Gather).
pub fn p2p_time_us(hw: &Hardware, s: &Shape, bytes: u64, p: &Params, measured_nodes: usize) -> f64 {
    let x = |q: Param| p[q as usize].exp();
    let n = s.ranks.max(1) as f64;
    let ppn = s.ppn() as f64;
    let bytes = bytes as f64;
    let crosses = s.nodes > 1;
    let (peers, net_peers, per_node_out, per_gpu_intra) = match s.primitive {
        // nccl-tests' sendrecv: rank r to r + 1; across nodes only the last
        // rank of a node sends off the node, the others stay inside.
        Primitive::SendRecv => (
            1.0,
            if crosses { 1.0 } else { 0.0 },
            if crosses { bytes } else { 0.0 },
            bytes,
        ),
        Primitive::Scatter | Primitive::Gather => (
            n - 1.0,
            n - ppn,
            bytes * (n - ppn) / n,
            bytes * (ppn - 1.0) / n,
        ),
        _ => (
            n - 1.0,
            n - ppn,
            ppn * bytes * (n - ppn) / n,
            bytes * (ppn - 1.0) / n,
        ),
    };
    let net = hw.nics_per_node as f64
        * hw.nic_gbps
        * x(Param::NetBw)
        * x(Param::P2pBw)
        * taper_factor(p, s.nodes, measured_nodes);
    let intra = hw.gpu_gbps * x(Param::IntraBw);
    let wire = if crosses {
        (per_node_out / (1000.0 * net)).max(per_gpu_intra / (1000.0 * intra))
    } else {
        per_gpu_intra / (1000.0 * intra)
    };
    let net_peer_us = x(Param::NetPeer) * x(Param::NetLat) * NET_PEER_HOP_US;
    8.4 * x(Param::Base) + peers * x(Param::PeerLat) + net_peers * net_peer_us + wire
}

/// What NCCL runs for `s` (its tuning model's argmin; grouped sends for
/// the untuned primitives), with NCCL's own predicted time (`None` for
/// grouped sends: NCCL has no model of them).
pub fn what_runs(hw: &Hardware, s: &Shape, bytes: u64) -> (Run, Option<(Tuning, f64)>) {
    let bytes = if s.primitive == Primitive::Barrier {
        4
    } else {
        bytes
    };
    match Func::of(s.primitive) {
        Some(f) => {
            let t = Tuning::with(hw, f, s.ranks, s.nodes, s.nvls_ok);
            match t.pick(bytes) {
                Some((e, own)) => (Run::Tuned(e), Some((t, own))),
                None => (Run::P2p, None),
            }
        }
        None => (Run::P2p, None),
    }
}

/// How far, by NCCL's own model, another (algorithm, protocol) may be from
/// NCCL's pick and still be what a real run used: NCCL versions, tuner
/// plugins and `NCCL_ALGO` / `NCCL_PROTO` move the crossovers (2.18,
/// 2.21 and 2.30 differ in their NVLS and tree constants, tuning.cc), so
/// within this factor of the pick the choice itself is uncertain.
pub const CHOICE_SPREAD: f64 = 1.5;

/// NCCL's pick for `s` and the other entries whose time by NCCL's own
/// model is within `spread` of it (the pick first; grouped sends: just
/// that).
pub fn alternatives(
    hw: &Hardware,
    s: &Shape,
    bytes: u64,
    spread: f64,
) -> (Vec<Run>, Option<Tuning>) {
    let (run, tuned) = what_runs(hw, s, bytes);
    let Some((t, own)) = tuned else {
        return (vec![run], None);
    };
    let bytes = if s.primitive == Primitive::Barrier {
        4
    } else {
        bytes
    };
    let mut runs = vec![run];
    for e in &t.entries {
        let r = Run::Tuned(*e);
        if r != run && t.time_us(e, bytes) <= spread * own {
            runs.push(r);
        }
    }
    (runs, Some(t))
}

/// The calibrated time of `run` for `s`, µs.
pub fn time_us(
    hw: &Hardware,
    s: &Shape,
    run: &Run,
    tuning: Option<&Tuning>,
    bytes: u64,
    p: &Params,
    measured_nodes: usize,
) -> f64 {
    // A Barrier is a tiny AllReduce ([`what_runs`]): its size is not moved.
    let bytes = if s.primitive == Primitive::Barrier {
        4
    } else {
        bytes
    };
    match (run, tuning) {
        (Run::Tuned(e), Some(t)) => tuned_time_us(t, e, bytes, p, measured_nodes),
        _ => p2p_time_us(hw, s, bytes, p, measured_nodes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neutral_corrections_give_nccls_own_time_where_the_model_adds_nothing() {
        // One H100 node: a ring has no pipeline-fill term and no taper, so
        // with every correction neutral the calibrated time is NCCL's own;
        // NVLS adds its fill. At 1 GiB NVLS keeps 128 KiB chunks (it is
        // not below 64 × 16 channels × 8 heads × 128 KiB = 1 GiB), 128 in
        // flight at 400 × 8/14 GB/s: 2 × 128 KiB × 128 / 228.57 GB/s =
        // 146.80 µs.
        let hw = Hardware::h100_node();
        let s = Shape::on(&hw, Primitive::AllReduce, 8);
        let mut p = [0.0; N_PARAMS];
        p[Param::Taper as usize] = 0.04;
        for (bytes, fill) in [(1u64 << 20, 0.0), (1 << 30, 146.800_640)] {
            let (run, t) = what_runs(&hw, &s, bytes);
            let (t, own) = t.unwrap();
            let cal = time_us(&hw, &s, &run, Some(&t), bytes, &p, 1);
            assert!(
                (cal - own - fill).abs() < 1e-5,
                "{bytes}: {cal} vs {own} + {fill}"
            );
        }
    }

    #[test]
    fn nvls_fill_follows_nccls_shrinking_chunk() {
        // 8 × H100, neutral corrections: NVLS AllReduce's fill is
        // 2 · chunk · 128 / 228.57 GB/s. Each shrink compares with the
        // chunk already shrunk: 64 KiB below 1 GiB (64 × 128 × 128 KiB),
        // 32 KiB below 64 MiB (8 × 128 × 64 KiB), 16 KiB below 8 MiB
        // (2 × 128 × 32 KiB).
        let hw = Hardware::h100_node();
        let t = Tuning::with(&hw, Func::AllReduce, 8, 1, true);
        let nvls = *t.entries.iter().find(|e| e.algo == NcclAlgo::Nvls).unwrap();
        for (bytes, chunk) in [
            (2u64 << 20, 16384u64),
            (4 << 20, 16384),
            (8 << 20, 32768),
            (32 << 20, 32768),
            (64 << 20, 65536),
            (512 << 20, 65536),
            (1 << 30, 131072),
        ] {
            assert_eq!(t.nvls_chunk(&nvls, bytes), Some((chunk, 128)), "{bytes}");
            let p = [0.0; N_PARAMS];
            let cal = tuned_time_us(&t, &nvls, bytes, &p, 1);
            let fill = 2.0 * chunk as f64 * 128.0 / (1000.0 * 400.0 * 8.0 / 14.0);
            assert!(
                (cal - t.time_us(&nvls, bytes) - fill).abs() < 1e-6,
                "{bytes}"
            );
        }
        let ring = *t.entries.iter().find(|e| e.algo == NcclAlgo::Ring).unwrap();
        assert_eq!(t.nvls_chunk(&ring, 1 << 30), None);
    }

    #[test]
    fn a_small_message_runs_on_fewer_channels() {
        // 1 KiB on one H100 node: NCCL picks Ring/LL (12 channels); the
        // channel tuning (enqueue.cc) drops to 1 since 1024 < nc · 512 ·
        // (8 · 8) for every nc ≥ 1: 15.0 µs + 1024 B / (80.571 GB/s / 12).
        let hw = Hardware::h100_node();
        let s = Shape::on(&hw, Primitive::AllReduce, 8);
        let p = [0.0; N_PARAMS];
        let (run, t) = what_runs(&hw, &s, 1024);
        let t = t.unwrap().0;
        let cal = time_us(&hw, &s, &run, Some(&t), 1024, &p, 1);
        let want = 15.0 + 1024.0 / (1000.0 * 141.0 * 8.0 / 14.0 / 12.0);
        assert!((cal - want).abs() < 1e-9, "{cal} vs {want}");
    }

    #[test]
    fn alltoall_is_a_peer_cost_per_peer_plus_the_nic_bytes() {
        // 2 nodes × 4 GPUs, 2 NICs of 25 GB/s; 1 GiB per rank: per node
        // 4 · 2^30 · 4/8 bytes leave over 50 GB/s = 42 949.67 µs; 7 peers at
        // 5 µs, the 4 on the other node 1.5 × 2 × 2.7 = 8.1 µs more (network
        // latency correction 2), base 8.4: 42 958.07 + 35 + 32.4 µs.
        let hw = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        let s = Shape::on(&hw, Primitive::AlltoAll, 8);
        let mut p = [0.0; N_PARAMS];
        p[Param::PeerLat as usize] = 5f64.ln();
        p[Param::NetPeer as usize] = 1.5f64.ln();
        p[Param::NetLat as usize] = 2f64.ln();
        let t = p2p_time_us(&hw, &s, 1 << 30, &p, 2);
        let want = 8.4 + 7.0 * 5.0 + 4.0 * 8.1 + 4.0 * (1u64 << 30) as f64 * 0.5 / (1000.0 * 50.0);
        assert!((t - want).abs() < 1e-6, "{t} vs {want}");
        // On one node no peer is across the network: 3 peers at 5 µs.
        let one = Shape::on(&hw, Primitive::AlltoAll, 4);
        let t = p2p_time_us(&hw, &one, 4096, &p, 1);
        let want = 8.4 + 3.0 * 5.0 + 4096.0 * 0.75 / (1000.0 * 240.0);
        assert!((t - want).abs() < 1e-9, "{t} vs {want}");
    }

    #[test]
    fn a_network_peer_costs_more_as_the_nodes_grow_and_an_in_node_peer_does_not() {
        // Small AlltoAll (the bytes negligible): 8 ranks on 2 nodes have
        // 3 in-node and 4 network peers; 32 ranks on 8 nodes 3 and 28. At
        // the priors (2 µs a peer, 1.3 × 2.7 µs more across the network):
        // 8.4 + 7 · 2 + 4 · 3.51 = 36.44 µs and 8.4 + 31 · 2 + 28 · 3.51 =
        // 168.68 µs.
        let hw = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        let p = prior_means();
        let t2 = p2p_time_us(&hw, &Shape::on(&hw, Primitive::AlltoAll, 8), 8, &p, 2);
        let t8 = p2p_time_us(&hw, &Shape::on(&hw, Primitive::AlltoAll, 32), 32, &p, 2);
        assert!((t2 - 36.44).abs() < 0.01, "{t2}");
        assert!((t8 - 168.68).abs() < 0.01, "{t8}");
    }

    #[test]
    fn the_taper_lowers_network_bandwidth_per_doubling_beyond_the_measured_nodes() {
        let mut p = [0.0; N_PARAMS];
        p[Param::Taper as usize] = 0.1;
        assert_eq!(taper_factor(&p, 2, 2), 1.0);
        assert!((taper_factor(&p, 8, 2) - (-0.2f64).exp()).abs() < 1e-12);
    }
}
