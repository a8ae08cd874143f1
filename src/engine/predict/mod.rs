//! Prediction beyond what was measured: any collective, size, rank and
//! node count on a machine described by its link classes, as the machine's
//! library runs it, with a range that says how sure the answer is.
//!
//! Three parts:
//! - **What runs**: the library's own choice at that scale. For NCCL, its
//!   tuning model with its own constants
//!   ([`crate::engine::library::nccl::Tuning`]); its own predicted time is
//!   kept beside ours as the baseline ("what NCCL believes").
//! - **How long it takes**: the same formulas with corrections fitted to
//!   measurements of the machine ([`model`], [`fit`]); without
//!   measurements, the corrections' priors (a preset may set them from
//!   cited measurements, [`Calibration::preset`]).
//! - **How sure**: an 80 % range from the fit's residual scale and the
//!   corrections' posterior uncertainty, propagated to the question
//!   (linearised); a correction the measurements did not constrain (the
//!   taper beyond the measured node count, the per-peer cost when no
//!   AlltoAll was measured) keeps its prior's spread, so the range widens
//!   the further the question is from what was measured. The note names
//!   the assumption that contributes most.
//!
//! Only NCCL machines are predicted here; HCCL and MPI machines are timed
//! by the schedule simulation ([`crate::engine::plan`]).

pub mod fit;
pub mod model;

use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use crate::engine::hardware::Hardware;
use crate::engine::library::nccl::{Func, NcclAlgo, Protocol};
use crate::engine::units::format_bytes;
use fit::{Fitted, Observation};
use model::{Param, Params, Run, Shape, N_PARAMS};
use serde::{Deserialize, Serialize};

/// The spread (ln units) added to a prediction of a collective the
/// calibration never saw: what the fitted corrections of one collective
/// cannot say about another one's protocol switches and per-step costs.
/// Sized on the public sets in `tests/fixtures` (`cclsim validate`, cross
/// collective): 89 % of their held-out rows fall in the 80 % range with
/// it, 91 % with 0.5.
pub const UNMEASURED_COLLECTIVE_SD: f64 = 0.4;

/// The normal quantile of an 80 % two-sided range.
pub const Z80: f64 = 1.281_551_565_545;

/// One measured table a calibration was fitted to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Where it comes from.
    pub source: String,
    /// The collective.
    pub primitive: Primitive,
    /// Ranks.
    pub ranks: usize,
    /// Nodes.
    pub nodes: usize,
    /// Smallest size, bytes.
    pub min_bytes: u64,
    /// Largest size, bytes.
    pub max_bytes: u64,
    /// Rows.
    pub rows: usize,
}

impl Measured {
    /// `allreduce on 8 ranks (2 nodes), 4 B–1 GiB`.
    pub fn describe(&self) -> String {
        format!(
            "{} on {} ranks ({} node{}), {}–{}",
            self.primitive.name(),
            self.ranks,
            self.nodes,
            if self.nodes == 1 { "" } else { "s" },
            format_bytes(self.min_bytes),
            format_bytes(self.max_bytes)
        )
    }
}

/// A machine's link classes and the fitted corrections of its library's
/// model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The machine.
    pub hardware: Hardware,
    /// The corrections.
    pub fitted: Fitted,
    /// What they were fitted to (empty for a preset).
    pub measured: Vec<Measured>,
    /// Where the corrections come from, in words.
    pub basis: String,
}

/// A table of measured rows for [`Calibration::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredTable {
    /// Where it comes from.
    pub source: String,
    /// The collective.
    pub primitive: Primitive,
    /// Ranks.
    pub ranks: usize,
    /// Nodes.
    pub nodes: usize,
    /// `(bytes, µs)` rows.
    pub rows: Vec<(u64, f64)>,
}

/// How much lower (a fraction) the robust cost without LL128 must be
/// before the rows overrule NCCL's default: a tie or noise keeps it.
const NIC_PATH_MARGIN: f64 = 0.02;

/// Fits `rows` on `hw` and decides, where NCCL's LL128 rule turns on the
/// NIC path, how the GPUs reach their NICs ([`NicPath`]). A log rarely
/// says; its mid sizes do, since without LL128 NCCL goes from LL straight
/// to Simple. So a multi-node table of a function NCCL tunes is fitted
/// both ways, and the bridged path is kept only when it fits clearly
/// better. A node with a NIC per GPU is not asked: that is the DGX/HGX
/// design, which pairs each NIC with a GPU under one PCIe switch (NVIDIA
/// DGX A100 System Architecture, WP-10083-001), and 2-node mid sizes are
/// too noisy to overrule it. Every outcome is said in the sources.
fn fit_nic_path(
    mut hw: Hardware,
    rows: &[Observation],
    measured_nodes: usize,
) -> (Hardware, Fitted) {
    use crate::engine::hardware::NicPath;
    use crate::engine::library::nccl::ll128_enabled;
    let (fitted, cost) = fit::fit_scored(&hw, rows, measured_nodes);
    let mut bridged = hw.clone();
    bridged.nic_path = NicPath::HostBridge;
    let path_matters = ll128_enabled(&hw, 2) && !ll128_enabled(&bridged, 2);
    if !path_matters || !rows.iter().any(|o| o.shape.nodes > 1) {
        return (hw, fitted);
    }
    if hw.nics_per_node >= hw.gpus_per_node {
        hw.sources.push(
            "LL128 across nodes: assumption, a NIC per GPU as DGX/HGX boards pair them under one PCIe switch (the rows were not asked)".into(),
        );
        return (hw, fitted);
    }
    let tuned_across_nodes = rows
        .iter()
        .any(|o| o.shape.nodes > 1 && Func::of(o.shape.primitive).is_some());
    if !tuned_across_nodes {
        hw.sources.push(
            "LL128 across nodes: assumption, NCCL's default; no measured collective across nodes uses a protocol the NIC path changes".into(),
        );
        return (hw, fitted);
    }
    let (fitted_bridged, cost_bridged) = fit::fit_scored(&bridged, rows, measured_nodes);
    if cost_bridged < cost * (1.0 - NIC_PATH_MARGIN) {
        bridged.sources.push(format!(
            "no LL128 across nodes: the rows fit better without it (robust cost {cost_bridged:.3} against {cost:.3}), as when each GPU reaches its NIC through the CPU (PHB/SYS), where NCCL turns LL128 off (tuning.cc, typeInter > PATH_PXB)"
        ));
        return (bridged, fitted_bridged);
    }
    hw.sources.push(format!(
        "LL128 across nodes: the rows do not fit clearly better without it (robust cost {cost:.3} with, {cost_bridged:.3} without), as when each GPU shares a PCIe switch with its NIC (PXB)"
    ));
    (hw, fitted)
}

impl Calibration {
    /// Fits the corrections on `hw` to every row of `tables` (rows of
    /// non-positive size or time are left out); on several nodes the
    /// hardware's NIC path is decided by the same rows
    /// ([`fit_nic_path`]), so the calibration's hardware may differ from
    /// `hw` in [`Hardware::nic_path`] and its sources.
    pub fn fit(hw: Hardware, tables: &[MeasuredTable]) -> Calibration {
        let measured_nodes = tables.iter().map(|t| t.nodes).max().unwrap_or(1).max(1);
        let mut rows = Vec::new();
        let mut measured = Vec::new();
        for t in tables {
            let shape = Shape {
                primitive: t.primitive,
                ranks: t.ranks,
                nodes: t.nodes.clamp(1, t.ranks.max(1)),
                nvls_ok: true,
            };
            let used: Vec<&(u64, f64)> = t
                .rows
                .iter()
                .filter(|(b, us)| *b > 0 && *us > 0.0 && us.is_finite())
                .collect();
            rows.extend(used.iter().map(|&&(bytes, time_us)| Observation {
                shape,
                bytes,
                time_us,
            }));
            measured.push(Measured {
                source: t.source.clone(),
                primitive: t.primitive,
                ranks: t.ranks,
                nodes: shape.nodes,
                min_bytes: used.iter().map(|r| r.0).min().unwrap_or(0),
                max_bytes: used.iter().map(|r| r.0).max().unwrap_or(0),
                rows: used.len(),
            });
        }
        let (hw, fitted) = fit_nic_path(hw, &rows, measured_nodes);
        let basis = format!(
            "fitted to {} row{} of {} table{} (median |error| {:.1} %)",
            fitted.rows,
            if fitted.rows == 1 { "" } else { "s" },
            measured.len(),
            if measured.len() == 1 { "" } else { "s" },
            fitted.median_abs_err * 100.0
        );
        Calibration {
            hardware: hw,
            fitted,
            measured,
            basis,
        }
    }

    /// A machine nobody measured here: the corrections' priors, except
    /// where the preset's own sources give a measured figure. On an
    /// NVSwitch Hopper node: NVLS AllReduce reaches ~480 GB/s busbw where
    /// NCCL's model says 400 (github.com/NVIDIA/nccl-tests/issues/212): NVLS
    /// bandwidth ×1.2; a ring reaches ~365–370 GB/s busbw where NCCL's
    /// graph says 360 (github.com/NVIDIA/nccl/issues/1455): in-node bandwidth ×1.02.
    pub fn preset(hw: Hardware) -> Calibration {
        let mut fitted = Fitted::prior();
        let mut basis =
            "no measurement of this machine: NCCL's constants, ranges from the corrections' priors"
                .to_string();
        if hw.nvswitch && hw.arch == crate::engine::hardware::Arch::Hopper {
            fitted.params[Param::NvlsBw as usize] = (480.0f64 / 400.0).ln();
            fitted.params[Param::IntraBw as usize] = (367.5f64 / 360.0).ln();
            // The two figures are measured: their spread is small.
            let i = Param::NvlsBw as usize;
            fitted.covariance[i * N_PARAMS + i] = 0.05f64.powi(2);
            let i = Param::IntraBw as usize;
            fitted.covariance[i * N_PARAMS + i] = 0.05f64.powi(2);
            basis = "no measurement of this machine: NCCL's constants, with NVLS busbw ~480 GB/s (nccl-tests issue 212) and ring busbw ~367 GB/s (nccl issue 1455) as measured elsewhere".to_string();
        }
        Calibration {
            hardware: hw,
            fitted,
            measured: Vec::new(),
            basis,
        }
    }

    /// The largest node count measured (1 for a preset).
    pub fn measured_nodes(&self) -> usize {
        self.measured
            .iter()
            .map(|m| m.nodes)
            .max()
            .unwrap_or(1)
            .max(1)
    }

    /// The prediction for `primitive` of `bytes` on `ranks` ranks placed
    /// node by node.
    pub fn answer(&self, primitive: Primitive, ranks: usize, bytes: u64) -> Answer {
        answer(self, Shape::on(&self.hardware, primitive, ranks), bytes)
    }

    /// [`Calibration::answer`] for a call NCCL may not run on NVLS
    /// (`nvls_ok` false: its data type or reduce op,
    /// [`crate::engine::library::nccl::nvls_supported`]).
    pub fn answer_with(
        &self,
        primitive: Primitive,
        ranks: usize,
        bytes: u64,
        nvls_ok: bool,
    ) -> Answer {
        let mut s = Shape::on(&self.hardware, primitive, ranks);
        s.nvls_ok = nvls_ok;
        answer(self, s, bytes)
    }
}

/// A prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The call.
    pub shape: Shape,
    /// nccl-tests' size, bytes.
    pub bytes: u64,
    /// Predicted time, µs.
    pub time_us: f64,
    /// Its per-message latency part (the same run with no bytes), µs.
    pub latency_us: f64,
    /// Lower end of the 80 % range, µs.
    pub low_us: f64,
    /// Upper end of the 80 % range, µs.
    pub high_us: f64,
    /// `bytes / time`, GB/s.
    pub algbw_gbps: f64,
    /// algbw × the collective's busbw factor, GB/s.
    pub busbw_gbps: f64,
    /// What runs, in NCCL's words (`Ring/LL`, `NVLS/Simple`, `grouped
    /// send/recv`).
    pub runs: String,
    /// NCCL's algorithm, for a tuned collective.
    pub algo: Option<NcclAlgo>,
    /// NCCL's protocol, for a tuned collective.
    pub protocol: Option<Protocol>,
    /// Channels of its graph, for a tuned collective.
    pub channels: Option<usize>,
    /// Our schedule that draws it.
    pub drawn: Algorithm,
    /// NCCL's own predicted time (its tuning model with its constants), µs.
    pub library_us: Option<f64>,
    /// Why this runs, one sentence.
    pub why: String,
    /// Measured at / predicted for, and the assumption that dominates the
    /// range, in words ([`Answer::reach`], [`Answer::assumption`] and
    /// [`Answer::runners_up`] said in English).
    pub note: String,
    /// How the question stands to what was measured.
    pub reach: Reach,
    /// The assumption behind the largest share of the range.
    pub assumption: Assumption,
    /// Other runs NCCL's own model puts within [`model::CHOICE_SPREAD`]×
    /// of its pick (another version or a tuner plugin may run them),
    /// with their calibrated times, µs: the range includes them.
    pub runners_up: Vec<(String, f64)>,
}

/// `ln t` of `run` for `s` at corrections `p`.
fn ln_time(
    cal: &Calibration,
    s: &Shape,
    run: &Run,
    tuning: Option<&crate::engine::library::nccl::Tuning>,
    bytes: u64,
    p: &Params,
) -> f64 {
    model::time_us(
        &cal.hardware,
        s,
        run,
        tuning,
        bytes,
        p,
        cal.measured_nodes(),
    )
    .ln()
}

/// How the question stands to what was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reach {
    /// Nothing of this machine was measured (a preset).
    NotMeasured,
    /// A measured collective, scale and size range.
    Within,
    /// The measured collective and scale, another size.
    OtherSize,
    /// The measured collective at another scale.
    OtherScale,
    /// Another collective at a measured node count.
    OtherCollective,
    /// Another collective at another scale.
    OtherCollectiveAndScale,
}

impl Reach {
    /// In words (`the measured collective at another scale`).
    pub fn describe(self) -> &'static str {
        match self {
            Reach::NotMeasured => "not measured",
            Reach::Within => "within what was measured",
            Reach::OtherSize => "the measured collective and scale, another size",
            Reach::OtherScale => "the measured collective at another scale",
            Reach::OtherCollective => "another collective at a measured scale",
            Reach::OtherCollectiveAndScale => "another collective at another scale",
        }
    }
}

/// What the question has in common with the measurements.
fn reach_of(cal: &Calibration, s: &Shape, bytes: u64) -> Reach {
    if cal.measured.is_empty() {
        return Reach::NotMeasured;
    }
    let same = cal
        .measured
        .iter()
        .any(|m| m.primitive == s.primitive && m.ranks == s.ranks);
    let inside = cal.measured.iter().any(|m| {
        m.primitive == s.primitive
            && m.ranks == s.ranks
            && (m.min_bytes..=m.max_bytes).contains(&bytes)
    });
    if inside {
        Reach::Within
    } else if same {
        Reach::OtherSize
    } else if cal.measured.iter().any(|m| m.primitive == s.primitive) {
        Reach::OtherScale
    } else if cal.measured.iter().any(|m| m.nodes == s.nodes) {
        Reach::OtherCollective
    } else {
        Reach::OtherCollectiveAndScale
    }
}

/// [`reach_of`] in words, with what was measured and what is asked.
fn reach(cal: &Calibration, s: &Shape, bytes: u64, how: Reach) -> String {
    if how == Reach::NotMeasured {
        return format!("not measured: {}", cal.basis);
    }
    let at: Vec<String> = cal.measured.iter().map(Measured::describe).collect();
    format!(
        "measured at {}; predicted for {} on {} ranks ({} node{}), {}: {}",
        at.join("; "),
        s.primitive.name(),
        s.ranks,
        s.nodes,
        if s.nodes == 1 { "" } else { "s" },
        format_bytes(bytes),
        how.describe()
    )
}

/// The assumption behind the largest share of a prediction's range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Assumption {
    /// The network's bandwidth per node beyond the measured node count.
    Taper {
        /// Nodes asked.
        nodes: usize,
        /// Most nodes measured.
        measured_nodes: usize,
    },
    /// No grouped send/recv measured: its per-peer cost and bandwidth.
    PeerCost,
    /// The network hop latency.
    NetLatency,
    /// The network latency's growth beyond the measured node count.
    LatencyGrowth {
        /// Nodes asked.
        nodes: usize,
        /// Most nodes measured.
        measured_nodes: usize,
    },
    /// The network bandwidth (NCCL's NIC figure).
    NetBandwidth,
    /// A multi-node ring's per-step overhead.
    RingOverhead,
    /// The in-node bandwidth.
    IntraBandwidth,
    /// NCCL's latency constants.
    LatencyConstants,
    /// NCCL's protocol efficiencies.
    ProtocolEfficiency,
    /// The collective was not measured on this machine: the corrections
    /// come from the ones that were.
    UnmeasuredCollective {
        /// The collective asked.
        primitive: Primitive,
        /// The collectives measured.
        measured: Vec<Primitive>,
    },
    /// The measurements' own scatter around the model.
    Scatter {
        /// Half the 80 % range, percent.
        percent: f64,
    },
}

impl Assumption {
    /// In words.
    pub fn describe(&self) -> String {
        match self {
            Assumption::Taper { nodes, measured_nodes } => format!(
                "the network between {nodes} nodes was not measured (up to {measured_nodes} were): its bandwidth per node is assumed to fall by about 4 % per doubling of the nodes (0 to 9 % in the range)"
            ),
            Assumption::PeerCost => "no grouped send/recv (AlltoAll) was measured: its per-peer cost and bandwidth are priors (5 µs a peer)".into(),
            Assumption::NetLatency => "the network hop latency is not pinned down by the measurements".into(),
            Assumption::LatencyGrowth { nodes, measured_nodes } => format!(
                "the network latency between {nodes} nodes was not measured (up to {measured_nodes} were): a hop is assumed to cost about 3 % more per doubling of the nodes (up to 7 % in the range)"
            ),
            Assumption::NetBandwidth => "the network bandwidth is not pinned down by the measurements (assumed NCCL's NIC figure)".into(),
            Assumption::RingOverhead => "a multi-node ring's per-step overhead is not pinned down by the measurements".into(),
            Assumption::IntraBandwidth => "the in-node bandwidth is not pinned down by the measurements".into(),
            Assumption::LatencyConstants => "NCCL's latency constants are assumed for what was not measured".into(),
            Assumption::ProtocolEfficiency => "NCCL's protocol efficiencies are assumed".into(),
            Assumption::UnmeasuredCollective { primitive, measured } => format!(
                "{} was not measured on this machine: the corrections come from {}",
                primitive.name(),
                measured.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
            ),
            Assumption::Scatter { percent } => format!(
                "the measurements' own scatter around the model (±{percent:.0} %)"
            ),
        }
    }
}

/// The assumption behind the largest share of the range.
fn dominant(cal: &Calibration, shares: &[(Param, f64)], sigma2: f64, s: &Shape) -> Assumption {
    let best = shares.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
    let measured_nodes = cal.measured_nodes();
    let unmeasured =
        !cal.measured.is_empty() && cal.measured.iter().all(|m| m.primitive != s.primitive);
    let floor = if unmeasured {
        sigma2 + UNMEASURED_COLLECTIVE_SD.powi(2)
    } else {
        sigma2
    };
    let nodes = s.nodes;
    match best {
        Some((p, v)) if v > floor => match p {
            Param::Taper => Assumption::Taper {
                nodes,
                measured_nodes,
            },
            Param::PeerLat | Param::NetPeer | Param::P2pBw => Assumption::PeerCost,
            Param::NetLat => Assumption::NetLatency,
            Param::LatGrowth => Assumption::LatencyGrowth {
                nodes,
                measured_nodes,
            },
            Param::NetBw => Assumption::NetBandwidth,
            Param::RingOverhead => Assumption::RingOverhead,
            Param::IntraBw | Param::NvlsBw => Assumption::IntraBandwidth,
            Param::IntraLat | Param::Base => Assumption::LatencyConstants,
            Param::LlBw | Param::Ll128Bw => Assumption::ProtocolEfficiency,
        },
        _ if unmeasured => Assumption::UnmeasuredCollective {
            primitive: s.primitive,
            measured: cal.measured.iter().map(|m| m.primitive).collect(),
        },
        _ => Assumption::Scatter {
            percent: (sigma2.sqrt() * Z80).exp_m1() * 100.0,
        },
    }
}

/// The prediction for `s` (module doc).
pub fn answer(cal: &Calibration, s: Shape, bytes: u64) -> Answer {
    let hw = &cal.hardware;
    // A Barrier is a tiny AllReduce standing in (NCCL has none).
    let bytes = if s.primitive == Primitive::Barrier {
        4
    } else {
        bytes
    };
    let (run, tuned) = model::what_runs(hw, &s, bytes);
    let tuning = tuned.as_ref().map(|(t, _)| t);
    let p = cal.fitted.params();
    let ln_t = ln_time(cal, &s, &run, tuning, bytes, &p);
    let time_us = ln_t.exp();
    let latency_us = model::time_us(hw, &s, &run, tuning, 0, &p, cal.measured_nodes()).min(time_us);
    // Gradient of ln t over the corrections, and each one's share of the
    // variance (its own term of gᵀΣg).
    let mut g = [0.0; N_PARAMS];
    for (i, gi) in g.iter_mut().enumerate() {
        let mut q = p;
        q[i] += 1e-5;
        *gi = (ln_time(cal, &s, &run, tuning, bytes, &q) - ln_t) / 1e-5;
    }
    let mut var = 0.0;
    for i in 0..N_PARAMS {
        for k in 0..N_PARAMS {
            var += g[i] * cal.fitted.cov(i, k) * g[k];
        }
    }
    let sigma2 = cal.fitted.sigma.powi(2);
    let shares: Vec<(Param, f64)> = Param::ALL
        .iter()
        .enumerate()
        .map(|(i, &q)| (q, g[i] * g[i] * cal.fitted.cov(i, i)))
        .collect();
    // A collective nobody measured on this machine also carries what the
    // corrections cannot say about it (its own protocol switches, its own
    // per-step costs).
    let unmeasured =
        !cal.measured.is_empty() && !cal.measured.iter().any(|m| m.primitive == s.primitive);
    let other = if unmeasured {
        UNMEASURED_COLLECTIVE_SD.powi(2)
    } else {
        0.0
    };
    let total = (var.max(0.0) + sigma2 + other).sqrt();
    let mut low_us = time_us * (-Z80 * total).exp();
    let mut high_us = time_us * (Z80 * total).exp();
    // Near a crossover another NCCL version or a tuner plugin may run the
    // runner-up: the range includes its calibrated time.
    let (alts, alt_tuning) = model::alternatives(hw, &s, bytes, model::CHOICE_SPREAD);
    let mut near = Vec::new();
    for alt in alts.iter().skip(1) {
        let t = model::time_us(
            hw,
            &s,
            alt,
            alt_tuning.as_ref(),
            bytes,
            &p,
            cal.measured_nodes(),
        );
        low_us = low_us.min(t);
        high_us = high_us.max(t);
        if let Run::Tuned(e) = alt {
            near.push((format!("{}/{}", e.algo.name(), e.protocol.name()), t));
        }
    }
    let algbw = bytes as f64 / (time_us * 1e3);
    let how = reach_of(cal, &s, bytes);
    let assumption = dominant(cal, &shares, sigma2, &s);
    let (runs, protocol, channels, drawn, why) = match run {
        Run::Tuned(e) => (
            format!("{}/{}", e.algo.name(), e.protocol.name()),
            Some(e.protocol),
            Some(e.channels),
            e.algo.drawn_as(),
            format!(
                "NCCL's tuning model (2.30.7 tuning.cc) picks {}/{} on {} node{} × {} ({} channels)",
                e.algo.name(),
                e.protocol.name(),
                s.nodes,
                if s.nodes == 1 { "" } else { "s" },
                s.ppn(),
                e.channels
            ),
        ),
        Run::P2p => (
            "grouped send/recv".to_string(),
            None,
            None,
            match s.primitive {
                Primitive::Scatter | Primitive::Gather => Algorithm::Star,
                Primitive::SendRecv => Algorithm::Ring,
                _ => Algorithm::Mesh,
            },
            "NCCL runs it as grouped send/recv to every peer at once (enqueue.cc); it has no tuning model for it".to_string(),
        ),
    };
    Answer {
        shape: s,
        bytes,
        time_us,
        latency_us,
        low_us,
        high_us,
        algbw_gbps: algbw,
        busbw_gbps: algbw * s.primitive.busbw_factor(s.ranks),
        runs,
        algo: match run {
            Run::Tuned(e) => Some(e.algo),
            Run::P2p => None,
        },
        protocol,
        channels,
        drawn,
        library_us: tuned.as_ref().map(|(_, own)| *own),
        why,
        note: format!(
            "{}. Range: 80 %, dominated by: {}.{}",
            reach(cal, &s, bytes, how),
            assumption.describe(),
            if near.is_empty() {
                String::new()
            } else {
                format!(
                    " By NCCL's own model the runner-up is within {}× of its pick, so another version or a tuner plugin may run it; the range includes {}.",
                    model::CHOICE_SPREAD,
                    near.iter()
                        .map(|(r, t)| format!("{r} {t:.1} µs"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ),
        reach: how,
        assumption,
        runners_up: near,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2-node AllReduce table of 1 KiB..1 GiB made by the model on `hw`
    /// with a 2× network latency.
    fn made_on(hw: &Hardware) -> MeasuredTable {
        let mut truth = model::prior_means();
        truth[Param::NetLat as usize] = 2f64.ln();
        let shape = Shape::on(hw, Primitive::AllReduce, 8);
        let rows = (10..31)
            .map(|k| {
                let bytes = 1u64 << k;
                let (run, t) = model::what_runs(hw, &shape, bytes);
                let us =
                    model::time_us(hw, &shape, &run, t.as_ref().map(|x| &x.0), bytes, &truth, 2);
                (bytes, us)
            })
            .collect();
        MeasuredTable {
            source: "made by the model".into(),
            primitive: Primitive::AllReduce,
            ranks: 8,
            nodes: 2,
            rows,
        }
    }

    #[test]
    fn the_rows_tell_whether_ll128_crosses_nodes() {
        use crate::engine::hardware::NicPath;
        let switch = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        let mut bridged = switch.clone();
        bridged.nic_path = NicPath::HostBridge;
        // Fitted on the default (switch) guess either way: the rows decide.
        let from_bridged = Calibration::fit(switch.clone(), &[made_on(&bridged)]);
        assert_eq!(from_bridged.hardware.nic_path, NicPath::HostBridge);
        assert!(from_bridged
            .hardware
            .sources
            .iter()
            .any(|s| s.starts_with("no LL128 across nodes")));
        let from_switch = Calibration::fit(switch.clone(), &[made_on(&switch)]);
        assert_eq!(from_switch.hardware.nic_path, NicPath::Switch);
        // One node has no NIC on its path: nothing to decide.
        let one = MeasuredTable {
            ranks: 4,
            nodes: 1,
            primitive: Primitive::AllReduce,
            source: "one node".into(),
            rows: vec![(1 << 20, 30.0), (1 << 26, 500.0)],
        };
        let cal = Calibration::fit(switch, &[one]);
        assert_eq!(cal.hardware.nic_path, NicPath::Switch);
        assert!(!cal.hardware.sources.iter().any(|s| s.contains("LL128")));
    }

    #[test]
    fn a_preset_h100_answers_nvls_with_the_measured_bandwidth() {
        let cal = Calibration::preset(Hardware::h100_node());
        let a = cal.answer(Primitive::AllReduce, 8, 16 << 30);
        assert_eq!(a.runs, "NVLS/Simple");
        // NCCL: 25 µs + 16 GiB / (400 × 8/14 GB/s); ours: × 1.2 on the
        // bandwidth, plus NVLS's fill: 2 × 128 KiB × 128 in flight over
        // that bandwidth (122.33 µs).
        let bw = 400.0 * 8.0 / 14.0 * 1.2;
        let fill = 2.0 * 131072.0 * 128.0 / (1000.0 * bw);
        let want = 25.0 + (16u64 << 30) as f64 / (1000.0 * bw) + fill;
        assert!(
            (a.time_us - want).abs() < 1e-6 * want,
            "{} vs {want}",
            a.time_us
        );
        assert!(a.low_us < a.time_us && a.time_us < a.high_us);
        // busbw = 16 GiB / want × 14/8: 480 GB/s less the latency's and
        // the fill's 0.2 %.
        let busbw = (16u64 << 30) as f64 / (want * 1e3) * 1.75;
        assert!((busbw - 478.87).abs() < 0.01, "{busbw}");
        assert!((a.busbw_gbps - busbw).abs() < 1e-6, "{}", a.busbw_gbps);
        assert_eq!(a.reach, Reach::NotMeasured);
        // A Barrier is NCCL's tiny AllReduce at any size the call names.
        let b1 = cal.answer(Primitive::Barrier, 8, 1 << 20);
        let b2 = cal.answer(Primitive::Barrier, 8, 1 << 30);
        assert_eq!(
            (b1.runs.as_str(), b1.time_us),
            (b2.runs.as_str(), b2.time_us)
        );
        assert!(b2.time_us < 50.0, "{}", b2.time_us);
        assert!(a
            .note
            .starts_with("not measured: no measurement of this machine"));
    }

    #[test]
    fn the_range_widens_with_the_nodes_beyond_the_measured_ones() {
        let hw = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        let rows: Vec<(u64, f64)> = (10..31)
            .map(|k| (1u64 << k, 30.0 + (1u64 << k) as f64 / 21e3))
            .collect();
        let cal = Calibration::fit(
            hw,
            &[MeasuredTable {
                source: "synthetic".into(),
                primitive: Primitive::AllReduce,
                ranks: 8,
                nodes: 2,
                rows,
            }],
        );
        let near = cal.answer(Primitive::AllReduce, 8, 1 << 30);
        let far = cal.answer(Primitive::AllReduce, 2160, 1 << 30);
        let width = |a: &Answer| (a.high_us / a.low_us).ln();
        assert!(
            width(&far) > 2.0 * width(&near),
            "{} {}",
            width(&near),
            width(&far)
        );
        assert!(far.note.contains("540 nodes"), "{}", far.note);
        // The same, structured, for a page that says it in another language.
        assert_eq!(near.reach, Reach::Within);
        assert_eq!(far.reach, Reach::OtherScale);
        assert!(
            matches!(
                far.assumption,
                Assumption::Taper {
                    nodes: 540,
                    measured_nodes: 2
                } | Assumption::LatencyGrowth {
                    nodes: 540,
                    measured_nodes: 2
                }
            ),
            "{:?}",
            far.assumption
        );
        assert!(far.note.contains(&far.assumption.describe()));
        assert!(far.note.contains(far.reach.describe()));
    }
}
