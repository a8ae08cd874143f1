//! Each kind of call timed on the machine through the plan `cclsim predict`
//! prints ([`Plan::headline`]: the machine's library's `auto`, its
//! schedule simulated, or on NCCL machines the calibrated prediction with
//! its 80 % range), then what of it the compute hides.
//!
//! ## Where a group runs (an approximation, said in each row)
//! - A group inside one node, or of consecutive ranks (stride 1), is timed
//!   as the first `g` ranks of the machine. On the presets a node is a full
//!   mesh (910B's HCCS) or a switch (H100's NVSwitch), so any `g` devices
//!   of a node are alike.
//! - A strided group across nodes (a DP group when TP·PP fills a node) is
//!   timed on a machine of its own: its nodes, with its members of each
//!   node joined by the machine's in-node link and each member by its own
//!   network port (the link from device 0 to the machine's switch) to one
//!   switch, with the machine's library and staging buffer. Up to 64
//!   ranks (a custom topology's cap).
//! - Groups of one kind run at the same time (every DP group at once); the
//!   presets give each device its own links (HCCS pairs, NVSwitch ports,
//!   one RoCE port per NPU into a non-blocking fabric), so each is timed
//!   alone.
//!
//! ## Overlap (simple, written down)
//! Forward is a third of the compute, backward two thirds (6Ψ per token:
//! 2Ψ forward, 4Ψ backward; Kaplan et al. 2020, §2.1). Calls that run
//! during a phase hide behind its compute, except their edge calls (DDP's
//! last bucket, ZeRO-3's first AllGather): exposed = max(edge calls,
//! Σ calls − the phase's compute). Once-per-step calls (DDP's buckets,
//! ZeRO-1/2) have one microbatch's phase to hide in, per-microbatch calls
//! (ZeRO-3) every microbatch's ([`Overlap::window_us`]). TP, PP and EP
//! calls are all exposed.

use super::link;
use super::traffic::{Group, Issued, Overlap};
use crate::engine::config::{Config, MAX_COMPRESSED_BYTES};
use crate::engine::custom_topology::{CustomTopology, LinkSpec, NodeSpec, CUSTOM};
use crate::engine::plan::{self, Plan};
use crate::engine::quantization::Scheme;
use crate::engine::topology::Topology;
use crate::engine::units::format_bytes;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Largest strided group timed on a machine of its own (a custom
/// topology's device cap).
pub const MAX_STRIDED_RANKS: usize = 64;

/// One call's time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timed {
    /// µs.
    pub time_us: f64,
    /// The 80 % range of a calibrated prediction, µs.
    pub range_us: Option<(f64, f64)>,
    /// The algorithm the plan runs.
    pub algorithm: String,
    /// How the group was placed for timing.
    pub placement: String,
    /// With compression asked for: the scheme it was timed with, or why
    /// it was sent uncompressed; empty otherwise.
    #[serde(default)]
    pub compression: String,
}

/// Times calls on one machine, each distinct call once.
pub struct Timer<'a> {
    machine: &'a Config,
    topo: Topology,
    /// The gradient reductions' compression.
    compress: Scheme,
    memo: HashMap<(u8, u64, u8, usize, usize, bool), Timed>,
}

impl<'a> Timer<'a> {
    /// A timer on `machine` (its topology, profile, faults; its own
    /// collective, size and ranks are replaced per call).
    ///
    /// Errors: the machine's [`plan::PlanError`] as text.
    pub fn new(machine: &'a Config) -> Result<Timer<'a>, String> {
        let topo = plan::machine(machine).map_err(|e| e.to_string())?;
        Ok(Timer {
            machine,
            topo,
            compress: Scheme::None,
            memo: HashMap::new(),
        })
    }

    /// The timer with the gradient reductions compressed by `scheme`.
    pub fn compressing(self, scheme: Scheme) -> Timer<'a> {
        Timer {
            compress: scheme,
            ..self
        }
    }

    /// The machine as modelled.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Devices in the node of device 0.
    pub fn node_size(&self) -> usize {
        let s0 = self.topo.devices.first().map_or(0, |d| d.server);
        self.topo.devices.iter().filter(|d| d.server == s0).count()
    }

    /// The time of one call of `i`.
    ///
    /// Errors: the plan's error, as text naming the call.
    pub fn time(&mut self, i: &Issued) -> Result<Timed, String> {
        let compress = i.gradient && self.compress != Scheme::None;
        let key = (
            i.primitive as u8,
            i.bytes,
            i.dtype as u8,
            i.group.size,
            i.group.stride,
            compress,
        );
        if let Some(t) = self.memo.get(&key) {
            return Ok(t.clone());
        }
        let (mut c, placement) = self.group_config(i.group)?;
        c.primitive = i.primitive;
        c.dtype = i.dtype;
        let es = i.dtype.size_bytes() as u64;
        c.bytes = (i.bytes - i.bytes % es).max(es);
        let (p, compression) = if compress {
            self.compressed(&c)?
        } else {
            (
                Plan::headline(&c).map_err(|e| e.to_string())?,
                String::new(),
            )
        };
        let t = Timed {
            time_us: p.estimate.time_us,
            range_us: p.prediction.as_ref().map(|a| (a.low_us, a.high_us)),
            // On an NCCL machine what the library runs, in its words.
            algorithm: match &p.prediction {
                Some(a) => a.runs.clone(),
                None => p.algorithm.name().to_string(),
            },
            placement,
            compression,
        };
        self.memo.insert(key, t.clone());
        Ok(t)
    }

    /// The plan of `c` with its payload compressed, and what was done:
    /// the scheme, or why the call went uncompressed (above the what-if's
    /// size cap, or a plan the compressed model cannot simulate).
    fn compressed(&self, c: &Config) -> Result<(Plan, String), String> {
        let plain = |why: String| -> Result<(Plan, String), String> {
            let p = Plan::headline(c).map_err(|e| e.to_string())?;
            Ok((p, format!("uncompressed: {why}")))
        };
        if c.bytes > MAX_COMPRESSED_BYTES {
            return plain(format!(
                "above {}, the largest message the compression what-if models",
                format_bytes(MAX_COMPRESSED_BYTES)
            ));
        }
        let mut z = c.clone();
        z.compress.scheme = self.compress;
        match Plan::headline(&z) {
            // A measured curve that covers the call is the library as
            // measured, uncompressed.
            Ok(p) if p.compressed.is_none() => Ok((
                p,
                "uncompressed: the fitted curve times the library as measured".to_string(),
            )),
            Ok(p) => Ok((p, self.compress.name().to_string())),
            Err(e) => plain(e.to_string()),
        }
    }

    /// The configuration a group is timed with, and how it was placed.
    fn group_config(&self, g: Group) -> Result<(Config, String), String> {
        let mut c = link::step_machine(self.machine);
        c.ranks = g.size;
        let n = self.node_size().max(1);
        let one_node = g.stride * (g.size - 1) < n;
        if g.stride == 1 || one_node || self.topo.devices.len() <= n {
            let how = format!("the first {} ranks of {}", g.size, self.topo.name);
            return Ok((c, how));
        }
        let per_node = if g.stride < n { n / g.stride } else { 1 };
        if g.size % per_node != 0 || g.size > MAX_STRIDED_RANKS {
            return Err(format!(
                "a group of {} ranks {} apart: groups across nodes are timed on their own nodes up to {MAX_STRIDED_RANKS} ranks, with a whole number of members per node",
                g.size, g.stride
            ));
        }
        let custom = self.nodes_of(g.size / per_node, per_node)?;
        let how = format!(
            "{} nodes × {per_node} of {} (ranks {} apart), one network port each",
            g.size / per_node,
            self.topo.name,
            g.stride
        );
        c.topo = CUSTOM.into();
        c.custom = Some(custom);
        c.profile = None;
        Ok((c, how))
    }

    /// `nodes` nodes of `per_node` devices of this machine: the in-node
    /// link between devices 0 and 1, each device's port to the switch.
    fn nodes_of(&self, nodes: usize, per_node: usize) -> Result<CustomTopology, String> {
        let t = &self.topo;
        let devices = t.devices.len();
        let port = t
            .links
            .iter()
            .find(|l| (l.a == 0 && l.b >= devices) || (l.b == 0 && l.a >= devices))
            .ok_or_else(|| {
                format!(
                    "{}: no network port on device 0 to place a group across nodes on",
                    t.name
                )
            })?;
        let inside = t.link_between(0, 1).and_then(|k| t.links.get(k));
        let id = |s: usize, i: usize| format!("n{s}d{i}");
        let mut spec = CustomTopology {
            name: Some(
                format!("{}-{nodes}x{per_node}", t.name)
                    .chars()
                    .take(40)
                    .collect(),
            ),
            title: None,
            devices: vec![],
            switches: vec![NodeSpec {
                id: "net".into(),
                server: 0,
            }],
            links: vec![],
            reduce_gbps: t.reduce_gbps,
            ccl_buffer_bytes: t.ccl_buffer_bytes,
            library: Some(t.library),
            algorithms: vec![],
        };
        for s in 0..nodes {
            for i in 0..per_node {
                spec.devices.push(NodeSpec {
                    id: id(s, i),
                    server: s,
                });
                spec.links.push(LinkSpec {
                    a: id(s, i),
                    b: "net".into(),
                    kind: port.kind,
                    bandwidth_gbps: port.bandwidth_gbps,
                    latency_us: port.latency_us,
                });
                for j in 0..i {
                    if let Some(l) = inside {
                        spec.links.push(LinkSpec {
                            a: id(s, j),
                            b: id(s, i),
                            kind: l.kind,
                            bandwidth_gbps: l.bandwidth_gbps,
                            latency_us: l.latency_us,
                        });
                    }
                }
            }
        }
        spec.validate().map_err(|e| e.to_string())?;
        Ok(spec)
    }
}

/// Exposed time of the calls of `rows` (with their per-call times) that
/// run during a phase of `window_us` compute (module doc).
pub fn exposed(rows: &[(&Issued, f64)], phase: Overlap, window_us: f64) -> f64 {
    let inphase = rows.iter().filter(|(i, _)| i.overlap == phase);
    let (mut all, mut edge) = (0.0, 0.0);
    for (i, t) in inphase {
        all += i.calls as f64 * t;
        edge += i.edge_calls as f64 * t;
    }
    match phase {
        Overlap::None => all,
        _ => edge.max(all - window_us),
    }
}
