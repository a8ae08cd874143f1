//! Degraded machines: slow ranks and failed links, a what-if on the
//! model's clock ("why did one slow card slow everyone?", "what if the link
//! between NPU 0 and NPU 1 is down?").
//!
//! Not to be confused with `runtime::fault`, the test-only worker failures
//! (a worker that throws, a lost message) of the page's `fault=` key: a
//! degradation changes only *when* things happen in the model. The schedule
//! is the same, so the real run on the workers moves the same data and
//! still verifies.
//!
//! ## Keys (URL, and `cclsim predict` flags of the same name)
//! - `slow=R:F[,R:F...]`: rank `R` computes and sends at factor `F` of its
//!   speed (`0.01..=1`; `3:0.5` = half speed): every link direction leaving
//!   its device carries `F` times its bandwidth, and its reductions run at
//!   `F` times the machine's reduce throughput. Its `α` is unchanged.
//! - `late=R:D[,R:D...]`: rank `R` starts `D` µs late (`0..=1000000`): no
//!   transfer to or from it starts before `D`.
//! - `down=A-B[,...]`: the link between devices `A` and `B` is down;
//!   `down=A-port`: device `A`'s link(s) to a switch are down (on
//!   `910b-{S}x8` its RoCE port; on `h100-8` its NVLink port).
//!
//! At most [`MAX_ENTRIES`] entries per key, one per rank or link.
//!
//! ## The model ([`Degradation::apply`])
//! A degradation turns the machine into another [`Topology`]: the down
//! links are removed (kept in [`super::topology::Impairment::down`] for the drawing), and
//! the per-device speed factors and start offsets are recorded in
//! [`Topology::impairment`], which the simulator reads
//! ([`super::cost`]). A pair of devices that lost its direct link routes
//! around it over the remaining links: on the 910B full mesh through a
//! third NPU (two HCCS hops, `2α`, sharing both links with that NPU's own
//! traffic), across servers through another NPU's RoCE port (an HCCS hop
//! to it first). When a rank has no route left at all, no algorithm can
//! run, and [`Degradation::apply`] says which rank is cut off.
//!
//! [`waits`] reads a timeline for who waits for whom: per step, the
//! transfer that ends it, and how long every other rank idles.

use super::cost::Timeline;
use super::schedule::Schedule;
use super::topology::Topology;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Most entries of one key (`slow`, `late`, `down`).
pub const MAX_ENTRIES: usize = 16;
/// Smallest speed factor of `slow`.
pub const MIN_SPEED: f64 = 0.01;
/// Largest start offset of `late`, µs (1 s).
pub const MAX_LATE_US: f64 = 1e6;
/// The URL keys (and `cclsim predict` flags) of a degradation.
pub const KEYS: [&str; 3] = ["slow", "late", "down"];

/// A failed link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Down {
    /// The direct link between two devices (`A-B`, written with the
    /// smaller first).
    Link(usize, usize),
    /// A device's links to switches (`A-port`: its RoCE or NVLink port).
    Port(usize),
}

impl std::fmt::Display for Down {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Down::Link(a, b) => write!(f, "{a}-{b}"),
            Down::Port(a) => write!(f, "{a}-port"),
        }
    }
}

/// Slow ranks, late ranks and failed links: the what-if of one
/// configuration ([`super::config::Config::faults`]). Empty = healthy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Degradation {
    /// `(rank, speed factor)`, in the order given.
    #[serde(default)]
    pub slow: Vec<(usize, f64)>,
    /// `(rank, start offset in µs)`, in the order given.
    #[serde(default)]
    pub late: Vec<(usize, f64)>,
    /// Failed links, in the order given.
    #[serde(default)]
    pub down: Vec<Down>,
}

/// `x` parsed as a finite number in `lo..=hi`.
fn number_in(x: &str, lo: f64, hi: f64) -> Option<f64> {
    x.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= lo && *v <= hi)
}

impl Degradation {
    /// True when nothing is degraded.
    pub fn is_none(&self) -> bool {
        self.slow.is_empty() && self.late.is_empty() && self.down.is_empty()
    }

    /// Sets `key` (one of [`KEYS`]) from its value, for a run on `ranks`
    /// ranks (`slow=3:0.5,5:0.8`, `late=3:200`, `down=0-1,9-port`); an
    /// empty value or `none` clears it. The one parser of the URL keys
    /// and of `cclsim predict --slow/--late/--down`.
    ///
    /// Errors: what is allowed, in words (the caller names key and value);
    /// the key keeps its previous value.
    pub fn set(&mut self, key: &str, value: &str, ranks: usize) -> Result<(), String> {
        let value = value.trim();
        let items: Vec<&str> = if value.is_empty() || value == "none" {
            Vec::new()
        } else {
            value.split(',').map(str::trim).collect()
        };
        if items.len() > MAX_ENTRIES {
            return Err(format!(
                "at most {MAX_ENTRIES} comma-separated entries (got {})",
                items.len()
            ));
        }
        let last = ranks.saturating_sub(1);
        let rank = |r: &str| r.trim().parse::<usize>().ok().filter(|&r| r < ranks);
        match key {
            "slow" | "late" => {
                let (lo, hi, what) = if key == "slow" {
                    (MIN_SPEED, 1.0, "a speed factor 0.01..=1 (0.5 = half speed)")
                } else {
                    (0.0, MAX_LATE_US, "a start offset in µs, 0..=1000000")
                };
                let example = if key == "slow" { "3:0.5" } else { "3:200" };
                let mut out: Vec<(usize, f64)> = Vec::new();
                for it in &items {
                    let parsed = it
                        .split_once(':')
                        .and_then(|(r, v)| Some((rank(r)?, number_in(v, lo, hi)?)));
                    match parsed {
                        Some((r, _)) if out.iter().any(|&(q, _)| q == r) => {
                            return Err(format!("rank {r} is given twice; one entry per rank"))
                        }
                        Some(x) => out.push(x),
                        None => {
                            return Err(format!(
                                "RANK:VALUE[,RANK:VALUE...] with RANK 0..={last} (ranks={ranks}) and VALUE {what}, e.g. {example}; `{it}` is not"
                            ))
                        }
                    }
                }
                if key == "slow" {
                    self.slow = out;
                } else {
                    self.late = out;
                }
                Ok(())
            }
            "down" => {
                let mut out: Vec<Down> = Vec::new();
                for it in &items {
                    let parsed = it.split_once('-').and_then(|(a, b)| {
                        let a = a.trim().parse::<usize>().ok()?;
                        match b.trim() {
                            "port" => Some(Down::Port(a)),
                            b => {
                                let b = b.parse::<usize>().ok()?;
                                (a != b).then_some(Down::Link(a.min(b), a.max(b)))
                            }
                        }
                    });
                    match parsed {
                        Some(d) if out.contains(&d) => {
                            return Err(format!("{d} is given twice; one entry per link"))
                        }
                        Some(d) => out.push(d),
                        None => {
                            return Err(format!(
                                "A-B (the link between devices A and B, e.g. 0-1) or A-port (device A's link to its switch: its RoCE port), comma-separated; `{it}` is not"
                            ))
                        }
                    }
                }
                self.down = out;
                Ok(())
            }
            _ => Err(format!("one of {}", KEYS.join(", "))),
        }
    }

    /// The value of `key` as [`Degradation::set`] reads it (`None` when
    /// that part is healthy).
    pub fn value(&self, key: &str) -> Option<String> {
        let pairs = |v: &[(usize, f64)]| {
            let mut s = String::new();
            for (i, (r, x)) in v.iter().enumerate() {
                let _ = write!(s, "{}{r}:{x}", if i > 0 { "," } else { "" });
            }
            s
        };
        let s = match key {
            "slow" => pairs(&self.slow),
            "late" => pairs(&self.late),
            "down" => self
                .down
                .iter()
                .map(Down::to_string)
                .collect::<Vec<_>>()
                .join(","),
            _ => String::new(),
        };
        (!s.is_empty()).then_some(s)
    }

    /// Every non-empty key as `key=value`, space-separated (`slow=3:0.5
    /// down=0-1`), for labels and messages.
    pub fn describe(&self) -> String {
        KEYS.iter()
            .filter_map(|k| self.value(k).map(|v| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Is rank `r` slowed or late?
    pub fn impairs(&self, r: usize) -> bool {
        self.slow.iter().any(|&(q, _)| q == r) || self.late.iter().any(|&(q, _)| q == r)
    }

    /// The machine `topo` under this degradation, for a run on `ranks`
    /// ranks: down links removed (kept in [`super::topology::Impairment::down`]), speed
    /// factors and start offsets recorded ([`Topology::impairment`]). A
    /// healthy degradation returns `topo` unchanged.
    ///
    /// Errors: a sentence naming the key and value: a `down` link that
    /// does not exist on this machine (and what does), or a rank left with
    /// no route to the others (then no algorithm can run).
    pub fn apply(&self, topo: &Topology, ranks: usize) -> Result<Topology, String> {
        if self.is_none() {
            return Ok(topo.clone());
        }
        let n = topo.devices.len();
        let mut t = topo.clone();
        let mut gone: Vec<usize> = Vec::new();
        for d in &self.down {
            let found: Vec<usize> = match *d {
                Down::Link(a, b) => {
                    if a >= n || b >= n {
                        return Err(format!(
                            "down={d}: {} has devices 0..={}; allowed: A-B or A-port with A and B among them",
                            topo.name,
                            n.saturating_sub(1)
                        ));
                    }
                    match topo.link_between(a, b) {
                        Some(l) => vec![l],
                        None => {
                            return Err(format!(
                                "down={d}: {} has no direct link between {} and {}; allowed: two devices joined by a link (e.g. 0-1{}), or A-port for a device's link to its switch",
                                topo.name,
                                topo.node_label(a),
                                topo.node_label(b),
                                match topo.links.iter().find(|l| l.a < n && l.b < n) {
                                    Some(l) => format!(": {}-{} is one", l.a, l.b),
                                    None => ": this machine has none, its devices connect through switches".into(),
                                }
                            ))
                        }
                    }
                }
                Down::Port(a) => {
                    if a >= n {
                        return Err(format!(
                            "down={d}: {} has devices 0..={}; allowed: A-B or A-port with A and B among them",
                            topo.name,
                            n.saturating_sub(1)
                        ));
                    }
                    let ports: Vec<usize> = topo
                        .links
                        .iter()
                        .enumerate()
                        .filter(|(_, l)| {
                            (l.a == a && !topo.is_device(l.b)) || (l.b == a && !topo.is_device(l.a))
                        })
                        .map(|(i, _)| i)
                        .collect();
                    if ports.is_empty() {
                        return Err(format!(
                            "down={d}: {} has no link to a switch on {}; allowed: A-B for a direct link",
                            topo.node_label(a),
                            topo.name
                        ));
                    }
                    ports
                }
            };
            gone.extend(found);
        }
        gone.sort_unstable();
        gone.dedup();
        for &l in gone.iter().rev() {
            t.impairment.down.insert(0, t.links.remove(l));
        }
        for &(r, f) in &self.slow {
            if r < n {
                t.impairment.speed.resize(n, 1.0);
                t.impairment.speed[r] = f;
            }
        }
        for &(r, d) in &self.late {
            if r < n {
                t.impairment.late_us.resize(n, 0.0);
                t.impairment.late_us[r] = d;
            }
        }
        // Every rank must still reach rank 0 (links are full duplex, so
        // that connects every pair).
        let adj = t.adjacency();
        for r in 1..ranks.min(n) {
            if t.route_with(&adj, 0, r).is_err() {
                return Err(format!(
                    "down={}: no route is left between rank 0 ({}) and rank {r} ({}); no algorithm can run (every collective on {ranks} ranks connects all of them): bring a link back",
                    self.value("down").unwrap_or_default(),
                    t.node_label(0),
                    t.node_label(r)
                ));
            }
        }
        Ok(t)
    }
}

/// Who waits for whom in one step of a timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepWait {
    /// Step index.
    pub step: usize,
    /// The transfer that ends the step (index within the step).
    pub critical: usize,
    /// Its sender and receiver.
    pub src: usize,
    /// Its receiver.
    pub dst: usize,
    /// The rank the others wait for: the critical transfer's sender, or
    /// its receiver if only the receiver is degraded.
    pub blame: usize,
    /// Every other rank's idle time at the end of the step, µs, as
    /// `(rank, µs)` for waits above 0.
    pub waits: Vec<(usize, f64)>,
}

impl StepWait {
    /// The longest wait of the step, µs (0 if none).
    pub fn longest_us(&self) -> f64 {
        self.waits.iter().map(|w| w.1).fold(0.0, f64::max)
    }
}

/// Per step of `timeline` (of `schedule`): the transfer that ends it, the
/// rank the others wait for, and each rank's idle time before the step
/// ends (the step's end minus the end of that rank's own last transfer in
/// the step, as sender or receiver; the whole step for a rank with none).
/// `degraded` names the slowed or late ranks, for the blame. Steps
/// without transfers are left out.
pub fn waits(schedule: &Schedule, timeline: &Timeline, degraded: &Degradation) -> Vec<StepWait> {
    let ranks = schedule.ranks;
    let mut out = Vec::new();
    let mut own = vec![f64::NAN; ranks];
    let mut at = 0usize;
    for (si, st) in timeline.steps.iter().enumerate() {
        let begin = at;
        while at < timeline.transfers.len() && timeline.transfers[at].step == si {
            at += 1;
        }
        let trs = &timeline.transfers[begin..at];
        let Some(crit) = trs.iter().max_by(|x, y| x.done_us.total_cmp(&y.done_us)) else {
            continue;
        };
        let Some(t) = schedule
            .steps
            .get(si)
            .and_then(|s| s.transfers.get(crit.index))
        else {
            continue;
        };
        own.iter_mut().for_each(|x| *x = st.start_us);
        for x in trs {
            if let Some(tr) = schedule.steps[si].transfers.get(x.index) {
                for r in [tr.src, tr.dst] {
                    if r < ranks {
                        own[r] = own[r].max(x.done_us);
                    }
                }
            }
        }
        let blame = if degraded.impairs(t.dst) && !degraded.impairs(t.src) {
            t.dst
        } else {
            t.src
        };
        let waits = (0..ranks)
            .filter(|&r| r != blame)
            .map(|r| (r, crit.done_us - own[r]))
            .filter(|&(_, w)| w > 1e-9)
            .collect();
        out.push(StepWait {
            step: si,
            critical: crit.index,
            src: t.src,
            dst: t.dst,
            blame,
            waits,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_errors_say_what_is_allowed() {
        let mut d = Degradation::default();
        d.set("slow", "3:0.5, 5:0.8", 8).unwrap();
        d.set("late", "3:200", 8).unwrap();
        d.set("down", "1-0,9-port", 16).unwrap();
        assert_eq!(d.slow, vec![(3, 0.5), (5, 0.8)]);
        assert_eq!(d.late, vec![(3, 200.0)]);
        assert_eq!(d.down, vec![Down::Link(0, 1), Down::Port(9)]);
        assert_eq!(d.value("slow").as_deref(), Some("3:0.5,5:0.8"));
        assert_eq!(d.value("late").as_deref(), Some("3:200"));
        assert_eq!(d.value("down").as_deref(), Some("0-1,9-port"));
        assert_eq!(d.describe(), "slow=3:0.5,5:0.8 late=3:200 down=0-1,9-port");
        for (k, v) in [
            ("slow", "8:0.5"),
            ("slow", "3:0"),
            ("slow", "3:1.5"),
            ("slow", "3:NaN"),
            ("slow", "3"),
            ("slow", "3:0.5,3:0.6"),
            ("late", "2:-1"),
            ("late", "2:1e7"),
            ("down", "0-0"),
            ("down", "0+1"),
            ("down", "0-1,1-0"),
            ("down", "x-port"),
        ] {
            let before = d.clone();
            let e = d.set(k, v, 8).unwrap_err();
            assert_eq!(d, before, "{k}={v} changed the value");
            assert!(e.contains("e.g.") || e.contains("twice"), "{k}={v}: {e}");
        }
        let many = (0..17)
            .map(|r| format!("{r}:0.5"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(d.set("slow", &many, 64).unwrap_err().contains("at most 16"));
        d.set("slow", "none", 8).unwrap();
        assert!(d.slow.is_empty());
    }

    #[test]
    fn a_down_link_on_the_mesh_routes_through_a_third_npu() {
        let t = Topology::preset("910b-8").unwrap();
        let mut d = Degradation::default();
        d.set("down", "0-1", 8).unwrap();
        let f = d.apply(&t, 8).unwrap();
        assert_eq!(f.links.len(), 27);
        assert_eq!(f.impairment.down.len(), 1);
        assert_eq!((f.impairment.down[0].a, f.impairment.down[0].b), (0, 1));
        let r = f.route(0, 1).unwrap();
        assert_eq!(r.hops.len(), 2);
        assert!((r.latency_us - 6.8).abs() < 1e-12);
        let via = |h: &super::super::topology::Hop| {
            let l = &f.links[h.link];
            if h.forward {
                l.b
            } else {
                l.a
            }
        };
        assert_eq!(via(&r.hops[0]), 2, "through NPU2, the first in link order");
        assert_eq!(f.route(0, 2).unwrap().hops.len(), 1);
        // The healthy machine never relays.
        assert!(t.route(0, 1).unwrap().hops.len() == 1);
    }

    #[test]
    fn a_roce_port_down_goes_out_through_another_npu() {
        let t = Topology::preset("910b-2x8").unwrap();
        let mut d = Degradation::default();
        d.set("down", "3-port", 16).unwrap();
        let f = d.apply(&t, 16).unwrap();
        let r = f.route(3, 11).unwrap();
        assert_eq!(r.hops.len(), 3, "HCCS to a neighbour, then its RoCE port");
        assert!((r.latency_us - (3.4 + 60.0)).abs() < 1e-9);
        assert!((r.bandwidth_gbps - 18.3).abs() < 1e-12);
    }

    #[test]
    fn bad_links_and_cut_off_ranks_are_named() {
        let h = Topology::preset("h100-8").unwrap();
        let mut d = Degradation::default();
        d.set("down", "0-1", 8).unwrap();
        let e = d.apply(&h, 8).unwrap_err();
        assert!(
            e.starts_with("down=0-1: h100-8 has no direct link between GPU0 and GPU1"),
            "{e}"
        );
        d.set("down", "0-port", 8).unwrap();
        let e = d.apply(&h, 8).unwrap_err();
        assert!(e.contains("between rank 0 (GPU0) and rank 1 (GPU1)"), "{e}");
        assert!(e.contains("no algorithm can run"), "{e}");
        d.set("down", "0-9", 16).unwrap();
        assert!(d
            .apply(&Topology::preset("910b-8").unwrap(), 8)
            .unwrap_err()
            .contains("devices 0..=7"));
    }
}
