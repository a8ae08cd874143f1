//! The cost model: alpha-beta-gamma per transfer, with link contention,
//! simulated event by event.
//!
//! ## The model
//! - A transfer from rank `s` to rank `d` follows its [`Route`] (the direct
//!   link, or a path through switches, [`Topology::route`]). It starts at
//!   its step's start, pays the route's latency `α` (sum of the hops'
//!   latencies), then moves its bytes through every hop of the route at the
//!   same rate.
//! - Links are full duplex: each direction of a link is its own resource of
//!   `B_l` GB/s (`β = 1/B`).
//! - Rates are **max-min fair** (progressive filling, Bertsekas & Gallager,
//!   *Data Networks*, §6.5.2): every flow gets the largest rate such that no
//!   link direction is over capacity and no flow could get more without
//!   taking from a flow that has less. Rates are recomputed at every event
//!   (a flow starting after its `α`, a flow finishing), which makes the
//!   simulation exact for piecewise-constant rates.
//! - A receiver reduces its arrivals one after another in arrival order at
//!   `G` GB/s (`γ = 1/G`; none if the topology reduces inline).
//! - Steps are synchronous: a step starts when the previous one has ended on
//!   every rank, which is how the closed forms count.
//! - Buffer loops: if the topology has a staging buffer
//!   ([`Topology::ccl_buffer_bytes`], HCCL's `HCCL_BUFFSIZE`), a message of
//!   `S` bytes runs as `ceil(S / buffer)` back-to-back loops of at most
//!   `buffer` bytes (whole elements), each a full run of the schedule.
//!
//! With one flow per link direction this reduces to `α + bytes / B` per
//! transfer and equals the closed forms of Thakur, Rabenseifner & Gropp
//! (2005) and HCCL's `Mesh.md` exactly ([`closed_form_us`]; tests assert
//! it). With `k` equal flows on one link direction each ends after
//! `α + k·bytes / B`.
//!
//! Reported like nccl-tests (`doc/PERFORMANCE.md`): `algbw = S / t` in GB/s
//! (1e9 bytes), `busbw = algbw × factor` ([`Primitive::busbw_factor`]).

use super::algorithm::Algorithm;
use super::collective::Primitive;
use super::dtype::DType;
use super::schedule::{Schedule, TransferKind};
use super::topology::{Route, Topology, TopologyError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

mod sliced;
pub use sliced::{
    choose as choose_slices, nccl_slice_bytes, Slices, Slicing, MAX_SLICES, NCCL_STEP_BYTES,
    SLICE_BUDGET,
};

/// When one transfer runs on the modelled hardware.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransferTiming {
    /// Step index.
    pub step: usize,
    /// Index within the step's transfers.
    pub index: usize,
    /// Bytes moved.
    pub bytes: u64,
    /// The link it crosses (index into [`Topology::links`]); for a route
    /// through switches, its first hop (see `route`); `usize::MAX` for a
    /// local copy or reduce (`src == dst`, no link).
    pub link: usize,
    /// Start, µs from the collective's start.
    pub start_us: f64,
    /// Arrival of the last byte, µs.
    pub end_us: f64,
    /// End of the receiver's reduce of this data (== `end_us` for a copy), µs.
    pub done_us: f64,
    /// Index into [`Timeline::routes`]: every link the transfer crosses.
    #[serde(default)]
    pub route: usize,
}

/// When one step runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepTiming {
    /// Start, µs.
    pub start_us: f64,
    /// End (every rank done), µs.
    pub end_us: f64,
    /// Most flows sharing one link direction in this step (1 = uncontended).
    pub max_link_sharing: usize,
}

/// One interval during which one direction of a link carries data.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkBusy {
    /// Index into [`Topology::links`].
    pub link: usize,
    /// `true` for the direction `a -> b`.
    pub forward: bool,
    /// Step index.
    pub step: usize,
    /// First byte enters the link, µs.
    pub start_us: f64,
    /// Last byte leaves the link, µs.
    pub end_us: f64,
    /// Flows that crossed it in this interval.
    pub flows: usize,
}

/// The modelled run: every step and transfer with start and end.
///
/// With buffer loops (`loops > 1`) the steps, transfers and link intervals
/// are those of the first loop (of `loop_bytes` bytes); the collective runs
/// `loops` such loops back to back (the last one possibly smaller), and
/// [`Estimate::time_us`] is their total.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// One entry per schedule step.
    pub steps: Vec<StepTiming>,
    /// One entry per transfer, in schedule order.
    pub transfers: Vec<TransferTiming>,
    /// The distinct routes the transfers take ([`TransferTiming::route`]).
    #[serde(default)]
    pub routes: Vec<Route>,
    /// Busy intervals of every link direction, per step, in step order.
    #[serde(default)]
    pub link_busy: Vec<LinkBusy>,
    /// Number of buffer loops (1 if the message fits the buffer).
    #[serde(default = "one")]
    pub loops: u64,
    /// Bytes of the first loop (== the message size if `loops == 1`).
    #[serde(default)]
    pub loop_bytes: u64,
}

fn one() -> u64 {
    1
}

/// The prediction for one collective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Message size S in bytes (nccl-tests' "size").
    pub bytes: u64,
    /// Predicted time, µs.
    pub time_us: f64,
    /// `S / t`, GB/s.
    pub algbw_gbps: f64,
    /// `algbw × factor`, GB/s.
    pub busbw_gbps: f64,
    /// The step-by-step timeline.
    pub timeline: Timeline,
    /// How many slices per transfer were simulated, and why
    /// ([`estimate_sliced`]).
    #[serde(default)]
    pub slicing: Slicing,
}

/// Predicts how long `schedule` takes for a message of `bytes` bytes of
/// `dtype` on `topo` (rank `r` on device `r`), by the event-driven
/// simulation described in the module doc, including buffer loops,
/// unsliced (`slices=1`: step-synchronous, equal to the closed forms).
///
/// Errors: [`TopologyError`] if the ranks do not fit, a link is malformed,
/// or two communicating ranks have no route.
pub fn estimate(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
) -> Result<Estimate, TopologyError> {
    estimate_sliced(schedule, topo, bytes, dtype, Slices::Fixed(1))
}

/// [`estimate`] with every transfer cut into slices that pipeline through
/// the steps (`slices`: `auto` = like the real library, or a count; the
/// rule, the caps and the pipelined model are in [`sliced`]'s doc,
/// `src/engine/cost/sliced.rs`). One slice is exactly [`estimate`]; the
/// count used and why are in [`Estimate::slicing`]. With buffer loops each
/// loop is sliced.
///
/// Errors: as [`estimate`].
pub fn estimate_sliced(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
) -> Result<Estimate, TopologyError> {
    topo.check_ranks(schedule.ranks)?;
    topo.validate()?;
    let es = dtype.size_bytes() as u64;
    let elems = bytes / es;
    // Buffer loops: whole elements per loop.
    let (loops, loop_elems) = match topo.ccl_buffer_bytes {
        Some(buf) if bytes > buf && buf >= es => {
            let per = buf / es;
            (elems.div_ceil(per), per)
        }
        _ => (1, elems),
    };
    let mut sim = Simulator::new(schedule, topo)?;
    let slicing = sliced::choose(schedule, topo, loop_elems, es, slices);
    let (k, w) = (slicing.slices as usize, slicing.window as usize);
    // The last step ends last when steps are synchronous; sliced steps
    // overlap, so take the latest end.
    let total = |t: &Timeline| t.steps.iter().map(|s| s.end_us).fold(0.0, f64::max);
    let mut timeline = if k > 1 {
        sim.run_sliced(loop_elems, es, k, w, slicing.slice_elems, true)
    } else {
        sim.run(loop_elems, es, true)?
    };
    let first_us = total(&timeline);
    let mut time_us = first_us;
    if loops > 1 {
        let last_elems = elems - (loops - 1) * loop_elems;
        let last_us = if last_elems == loop_elems {
            first_us
        } else if k > 1 {
            total(&sim.run_sliced(last_elems, es, k, w, slicing.slice_elems, false))
        } else {
            total(&sim.run(last_elems, es, false)?)
        };
        time_us = (loops - 1) as f64 * first_us + last_us;
    }
    timeline.loops = loops;
    timeline.loop_bytes = loop_elems * es;
    // A Barrier moves no payload: nccl-tests-style bandwidths are 0 for it.
    let algbw_gbps = if time_us > 0.0 && schedule.primitive != Primitive::Barrier {
        bytes as f64 / (time_us * 1e3)
    } else {
        0.0
    };
    Ok(Estimate {
        bytes,
        time_us,
        algbw_gbps,
        busbw_gbps: algbw_gbps * schedule.primitive.busbw_factor(schedule.ranks),
        timeline,
        slicing,
    })
}

/// One flow of the current step.
struct Flow {
    /// Directed-link ids (`2·link + forward`) crossed.
    hops: std::ops::Range<usize>,
    /// Bytes still to move.
    remaining: f64,
    /// Start (the step's start, or a late device's offset), µs.
    start: f64,
    /// Data phase starts (after `α`), µs.
    active_from: f64,
    /// Current rate, bytes/µs.
    rate: f64,
    /// Last byte arrived, µs (NaN while running).
    end: f64,
}

/// The event-driven simulator: routes resolved once per schedule.
struct Simulator<'a> {
    schedule: &'a Schedule,
    topo: &'a Topology,
    /// Route index of every transfer, in schedule order.
    route_of: Vec<usize>,
    routes: Vec<Route>,
    /// Capacity of every directed link, bytes/µs.
    cap: Vec<f64>,
}

impl<'a> Simulator<'a> {
    fn new(schedule: &'a Schedule, topo: &'a Topology) -> Result<Self, TopologyError> {
        let adj = topo.adjacency();
        let mut index: HashMap<(usize, usize), usize> = HashMap::new();
        let mut routes = Vec::new();
        let mut route_of = Vec::with_capacity(schedule.transfer_count());
        for t in schedule.steps.iter().flat_map(|s| s.transfers.iter()) {
            let i = match index.get(&(t.src, t.dst)) {
                Some(&i) => i,
                None => {
                    let r = if t.src == t.dst {
                        Route::local()
                    } else {
                        topo.route_with(&adj, t.src, t.dst)?
                    };
                    routes.push(r);
                    index.insert((t.src, t.dst), routes.len() - 1);
                    routes.len() - 1
                }
            };
            route_of.push(i);
        }
        // Direction `2·link` is b -> a, `2·link + 1` is a -> b; a slow
        // device sends at its speed factor ([`Topology::impairment`]).
        let slow = |from: usize| topo.impairment.speed_of(from);
        let cap = topo
            .links
            .iter()
            .flat_map(|l| {
                let c = l.bandwidth_gbps * 1e3;
                [c * slow(l.b), c * slow(l.a)]
            })
            .collect();
        Ok(Simulator {
            schedule,
            topo,
            route_of,
            routes,
            cap,
        })
    }

    /// Simulates one loop of `elems` elements of `es` bytes.
    fn run(&mut self, elems: u64, es: u64, record: bool) -> Result<Timeline, TopologyError> {
        let schedule = self.schedule;
        let gamma = self.topo.reduce_gbps;
        let mut t0 = 0.0f64;
        let mut steps = Vec::with_capacity(schedule.steps.len());
        let mut transfers = Vec::with_capacity(if record { schedule.transfer_count() } else { 0 });
        let mut link_busy = Vec::new();
        // Scratch, reused across steps.
        // Per link direction (`2·link + forward`) and per rank, with the
        // touched entries listed so a step resets only what it used.
        let directions = 2 * self.topo.links.len();
        let mut hop_ids: Vec<usize> = Vec::new();
        let mut flows: Vec<Flow> = Vec::new();
        let mut users: Vec<usize> = vec![0; directions];
        let mut used: Vec<usize> = Vec::new();
        let mut busy: Vec<Option<(f64, f64, usize)>> = vec![None; directions];
        let mut busy_until: Vec<f64> = vec![f64::NAN; schedule.ranks];
        let mut reducing: Vec<usize> = Vec::new();
        let mut ti = 0usize;
        for (si, step) in schedule.steps.iter().enumerate() {
            hop_ids.clear();
            flows.clear();
            for id in used.drain(..) {
                users[id] = 0;
            }
            let mut sizes = Vec::with_capacity(step.transfers.len());
            for (k, t) in step.transfers.iter().enumerate() {
                let route = &self.routes[self.route_of[ti + k]];
                let r = schedule.range_elems_u64(elems, t.first, t.count);
                let b = (r.end - r.start) * es;
                sizes.push(b);
                let first = hop_ids.len();
                for h in &route.hops {
                    let id = 2 * h.link + usize::from(h.forward);
                    hop_ids.push(id);
                    if users[id] == 0 {
                        used.push(id);
                    }
                    users[id] += 1;
                }
                // A late device starts nothing before its offset.
                let imp = &self.topo.impairment;
                let start = t0.max(imp.late_of(t.src)).max(imp.late_of(t.dst));
                flows.push(Flow {
                    hops: first..hop_ids.len(),
                    remaining: b as f64,
                    start,
                    active_from: start + route.latency_us,
                    rate: 0.0,
                    end: f64::NAN,
                });
            }
            let max_link_sharing = used.iter().map(|&id| users[id]).max().unwrap_or(0);
            if max_link_sharing <= 1 {
                // Uncontended: every flow at its route's bottleneck bandwidth.
                for f in flows.iter_mut() {
                    let rate = hop_ids[f.hops.clone()]
                        .iter()
                        .map(|&id| self.cap[id])
                        .fold(f64::INFINITY, f64::min);
                    f.rate = rate;
                    f.end = if f.remaining > 0.0 {
                        f.active_from + f.remaining / rate
                    } else {
                        f.active_from
                    };
                }
            } else {
                self.contended(&mut flows, &hop_ids);
            }
            // Arrival order, then serial reduces per receiver.
            let mut order: Vec<usize> = (0..flows.len()).collect();
            order.sort_by(|&x, &y| flows[x].end.total_cmp(&flows[y].end).then(x.cmp(&y)));
            for r in reducing.drain(..) {
                busy_until[r] = f64::NAN;
            }
            let mut done = vec![0.0; flows.len()];
            for i in order {
                let t = &step.transfers[i];
                let arrive = flows[i].end;
                done[i] = match (t.kind, gamma) {
                    (TransferKind::Reduce, Some(g)) => {
                        let prev = busy_until[t.dst];
                        if prev.is_nan() {
                            reducing.push(t.dst);
                        }
                        let start = if prev.is_nan() { t0 } else { prev }.max(arrive);
                        let g = g * self.topo.impairment.speed_of(t.dst);
                        let end = start + sizes[i] as f64 / (g * 1e3);
                        busy_until[t.dst] = end;
                        end
                    }
                    _ => arrive,
                };
            }
            let end = done.iter().copied().fold(t0, f64::max);
            if record {
                for (i, f) in flows.iter().enumerate() {
                    for &id in &hop_ids[f.hops.clone()] {
                        let e = busy[id].get_or_insert((f.active_from, f.end, 0));
                        e.0 = e.0.min(f.active_from);
                        e.1 = e.1.max(f.end);
                        e.2 += 1;
                    }
                    let route = self.route_of[ti + i];
                    transfers.push(TransferTiming {
                        step: si,
                        index: i,
                        bytes: sizes[i],
                        link: self.routes[route]
                            .hops
                            .first()
                            .map_or(usize::MAX, |h| h.link),
                        start_us: f.start,
                        end_us: f.end,
                        done_us: done[i],
                        route,
                    });
                }
                let mut ids = used.clone();
                ids.sort_unstable();
                link_busy.extend(ids.into_iter().filter_map(|id| {
                    busy[id].take().map(|(a, b, n)| LinkBusy {
                        link: id / 2,
                        forward: id % 2 == 1,
                        step: si,
                        start_us: a,
                        end_us: b,
                        flows: n,
                    })
                }));
            }
            steps.push(StepTiming {
                start_us: t0,
                end_us: end,
                max_link_sharing,
            });
            ti += step.transfers.len();
            t0 = end;
        }
        Ok(Timeline {
            steps,
            transfers,
            routes: if record {
                self.routes.clone()
            } else {
                Vec::new()
            },
            link_busy,
            loops: 1,
            loop_bytes: 0,
        })
    }

    /// Event loop for a step where some link direction carries several
    /// flows: max-min fair rates, recomputed at every start and finish.
    fn contended(&self, flows: &mut [Flow], hop_ids: &[usize]) {
        // Compact ids of the link directions used in this step.
        let mut local: HashMap<usize, usize> = HashMap::new();
        let mut cap0 = Vec::new();
        let hops: Vec<usize> = hop_ids
            .iter()
            .map(|&id| {
                *local.entry(id).or_insert_with(|| {
                    cap0.push(self.cap[id]);
                    cap0.len() - 1
                })
            })
            .collect();
        let nl = cap0.len();
        let mut on_link: Vec<Vec<usize>> = vec![Vec::new(); nl];
        for (i, f) in flows.iter().enumerate() {
            for &l in &hops[f.hops.clone()] {
                on_link[l].push(i);
            }
        }
        // Zero-byte flows end as soon as they start.
        for f in flows.iter_mut() {
            if f.remaining <= 0.0 {
                f.end = f.active_from;
            }
        }
        let mut now = flows
            .iter()
            .map(|f| f.active_from)
            .fold(f64::INFINITY, f64::min);
        let mut cap = vec![0.0; nl];
        let mut cnt = vec![0usize; nl];
        let mut frozen = vec![false; flows.len()];
        loop {
            let running: Vec<usize> = (0..flows.len())
                .filter(|&i| flows[i].end.is_nan() && flows[i].active_from <= now)
                .collect();
            let next_start = flows
                .iter()
                .filter(|f| f.end.is_nan() && f.active_from > now)
                .map(|f| f.active_from)
                .fold(f64::INFINITY, f64::min);
            if running.is_empty() {
                if next_start.is_finite() {
                    now = next_start;
                    continue;
                }
                break;
            }
            // Progressive filling over the running flows.
            cap.copy_from_slice(&cap0);
            cnt.iter_mut().for_each(|c| *c = 0);
            for &i in &running {
                frozen[i] = false;
                for &l in &hops[flows[i].hops.clone()] {
                    cnt[l] += 1;
                }
            }
            let mut left = running.len();
            while left > 0 {
                let mut best = usize::MAX;
                let mut share = f64::INFINITY;
                for l in 0..nl {
                    if cnt[l] > 0 {
                        let s = cap[l] / cnt[l] as f64;
                        if s < share {
                            share = s;
                            best = l;
                        }
                    }
                }
                if best == usize::MAX {
                    break;
                }
                for &i in &on_link[best] {
                    if frozen[i] || !flows[i].end.is_nan() || flows[i].active_from > now {
                        continue;
                    }
                    frozen[i] = true;
                    left -= 1;
                    flows[i].rate = share;
                    for &l in &hops[flows[i].hops.clone()] {
                        cap[l] -= share;
                        cnt[l] -= 1;
                    }
                }
            }
            // Next event: a finish or a start.
            let next_finish = running
                .iter()
                .map(|&i| now + flows[i].remaining / flows[i].rate)
                .fold(f64::INFINITY, f64::min);
            let next = next_finish.min(next_start);
            if !next.is_finite() {
                // No progress possible (cannot happen with positive
                // capacities); end the running flows now rather than loop.
                for &i in &running {
                    flows[i].end = now;
                }
                break;
            }
            let dt = next - now;
            let tol = 1e-12 * next.abs().max(1.0);
            for &i in &running {
                let f = &mut flows[i];
                let finish = now + f.remaining / f.rate;
                if finish <= next + tol {
                    f.remaining = 0.0;
                    f.end = finish;
                } else {
                    f.remaining -= f.rate * dt;
                }
            }
            now = next;
        }
    }
}

/// The uncontended closed form of `algorithm` for `primitive` on `n` ranks,
/// message `s` bytes, per-message latency `alpha_us`, link bandwidth
/// `bw_gbps` (β = 1/bw) and reduce throughput `reduce_gbps` (γ = 1/G, `None`
/// = 0). µs. `NaN` where the algorithm does not implement the primitive
/// (see [`closed_form`]).
pub fn closed_form_us(
    algorithm: Algorithm,
    primitive: Primitive,
    n: usize,
    s: f64,
    alpha_us: f64,
    bw_gbps: f64,
    reduce_gbps: Option<f64>,
) -> f64 {
    closed_form(algorithm, primitive, n, s, alpha_us, bw_gbps, reduce_gbps).unwrap_or(f64::NAN)
}

/// The uncontended closed form of every algorithm × primitive it
/// implements, in µs; `None` for a combination it does not implement.
/// Arguments as [`closed_form_us`]; `s` is nccl-tests' size
/// ([`super::collective`]), assumed to divide evenly into the schedule's
/// chunks. `L = ceil(log2 n)`.
///
/// Sources (`docs/hardware-and-algorithms.md`; Thakur,
/// Rabenseifner & Gropp 2005; HCCL `coll_algo_intro/*.md`), each also in
/// its algorithm's doc comment:
/// - ring AllReduce `2(n-1)α + 2(n-1)/n·Sβ + (n-1)/n·Sγ`; RS
///   `(n-1)α + (n-1)/n·S(β + γ)`; AG `(n-1)α + (n-1)/n·Sβ`; Barrier
///   `(n-1)α`; SendRecv `α + Sβ`;
/// - mesh AllReduce `2α + 2·S/n·β + (n-1)/n·Sγ`; RS `α + S/n·β +
///   (n-1)/n·Sγ`; AG `α + S/n·β`; Barrier `α`; Broadcast `2α + 2·S/n·β`;
///   Reduce `2α + 2·S/n·β + (n-1)/n·Sγ`; AlltoAll `α + S/n·β`; AlltoAllV
///   `α + max_{i≠j} c_ij·β`;
/// - rhd (`n = 2^L`) AllReduce `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`, RS
///   `Lα + (n-1)/n·S(β + γ)`, AG `Lα + (n-1)/n·Sβ`; other `n`, AllReduce
///   with `p' = 2^L'` the largest power of 2 below `n`: `(2L' + 2)α +
///   (2(p'-1)/p' + 2)·Sβ + ((p'-1)/p' + 1)·Sγ`;
/// - tree Broadcast `L(α + Sβ)`, Reduce `L(α + Sβ + Sγ)`, Scatter / Gather
///   `Σ_{m=2^j<n} (α + min(m, n-m)·S/n·β)`;
/// - star Broadcast `α + Sβ`, Reduce `α + Sβ + (n-1)·Sγ`, Scatter / Gather
///   `α + S/n·β`;
/// - pairwise AlltoAll `(n-1)(α + S/n·β)`, AlltoAllV `Σ_{k=1}^{n-1} (α +
///   max_r c_{r,r+k}·β)`;
/// - nb AG `Lα + (n-1)/n·Sβ`, RS `Lα + (n-1)/n·S(β + γ)`, AllReduce
///   `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`, Barrier `Lα`; AlltoAll (Bruck)
///   `Σ_{k<L} (α + c_k·S/n·β)`, `c_k = #{1 <= i < n : bit k of i set}`
///   (`Lα + L·S/2·β` for `n = 2^L`, the textbook form);
/// - nhr (HCCL `NHR.md`) as nb: AG `Lα + (n-1)/n·Sβ`, RS `Lα +
///   (n-1)/n·S(β + γ)`, AllReduce `2Lα + 2(n-1)/n·Sβ + (n-1)/n·Sγ`,
///   Broadcast `2Lα + 2(n-1)/n·Sβ`;
/// - pipeline (HCCL `Pipeline.md` with one α and β, `S'` servers): AG
///   `S'(α + S/n·β)`, RS `S'(α + S/n·β) + (n-1)/n·Sγ`, AllReduce
///   `2S'(α + S/n·β) + (n-1)/n·Sγ`;
/// - dbtree AllReduce (one node: the chain) `2D·α + Σ_s m_s·S/2·β + Σ_s
///   k_s·S/2·γ` (tree depth `D`, per-step pair multiplicity `m_s` and
///   fan-in `k_s`, [`super::algorithm::dbtree::shape`]);
/// - ring Broadcast `(n-1)(α + Sβ)`, Reduce `(n-1)(α + Sβ + Sγ)` (chains);
/// - hier-nhr as hier with `ceil(log2 S')` instead of `S' - 1` inter-server
///   latencies per phase (same data terms);
/// - hier (`n = 8·S'` ranks, `S'` servers) AllReduce `2α + 2·S/8·β +
///   7/8·Sγ + 2(S'-1)(α + S/n·β) + (S'-1)·S/n·γ`, RS `α + S/8·β + 7/8·Sγ +
///   (S'-1)(α + S/n·(β + γ))`, AG `α + S/8·β + (S'-1)(α + S/n·β)`; with
///   `D = ceil(log2 S')`: Broadcast `(2 + D)(α + S/8·β)`, Reduce `(2 +
///   D)(α + S/8·β) + (7 + D)·S/8·γ`, Scatter / Gather `α + S/8·β + [S' >
///   1](α + S/n·β)`.
///
/// AlltoAllV's `c_ij = w(i,j)·S/Σw` bytes ([`super::collective::moe_weight`]).
pub fn closed_form(
    algorithm: Algorithm,
    primitive: Primitive,
    n: usize,
    s: f64,
    alpha_us: f64,
    bw_gbps: f64,
    reduce_gbps: Option<f64>,
) -> Option<f64> {
    use Primitive::*;
    if !algorithm.supports(primitive, n) {
        return None;
    }
    let nf = n as f64;
    let a = alpha_us;
    let beta = 1.0 / (bw_gbps * 1e3); // µs per byte
    let gamma = reduce_gbps.map_or(0.0, |g| 1.0 / (g * 1e3));
    let frac = (nf - 1.0) / nf;
    let red = frac * s * gamma;
    let l = (n.next_power_of_two().trailing_zeros()) as f64;
    let w_total: u64 = (0..n)
        .flat_map(|i| (0..n).map(move |j| super::collective::moe_weight(i, j)))
        .sum();
    let c = |i: usize, j: usize| super::collective::moe_weight(i, j) as f64 * s / w_total as f64;
    Some(match (algorithm, primitive) {
        (Algorithm::Ring, AllReduce) => 2.0 * (nf - 1.0) * a + 2.0 * frac * s * beta + red,
        (Algorithm::Ring, ReduceScatter) => (nf - 1.0) * a + frac * s * beta + red,
        (Algorithm::Ring, AllGather) => (nf - 1.0) * a + frac * s * beta,
        (Algorithm::Ring, Barrier) => (nf - 1.0) * a,
        (Algorithm::Ring, SendRecv) => a + s * beta,
        (Algorithm::Ring, Broadcast) => (nf - 1.0) * (a + s * beta),
        (Algorithm::Ring, Reduce) => (nf - 1.0) * (a + s * beta + s * gamma),
        (Algorithm::Mesh, AllReduce) => 2.0 * a + 2.0 * s / nf * beta + red,
        (Algorithm::Mesh, ReduceScatter) => a + s / nf * beta + red,
        (Algorithm::Mesh, AllGather) | (Algorithm::Mesh, AlltoAll) => a + s / nf * beta,
        (Algorithm::Mesh, Barrier) => a,
        (Algorithm::Mesh, Broadcast) => 2.0 * a + 2.0 * s / nf * beta,
        (Algorithm::Mesh, Reduce) => 2.0 * a + 2.0 * s / nf * beta + red,
        (Algorithm::Mesh, AlltoAllV) => {
            let max = (0..n)
                .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
                .map(|(i, j)| c(i, j))
                .fold(0.0, f64::max);
            a + max * beta
        }
        (Algorithm::Rhd, p) if n.is_power_of_two() => match p {
            AllReduce => 2.0 * l * a + 2.0 * frac * s * beta + red,
            ReduceScatter => l * a + frac * s * beta + red,
            _ => l * a + frac * s * beta,
        },
        (Algorithm::Rhd, _) => {
            let p = (n.next_power_of_two() / 2) as f64;
            let lp = p.log2();
            let pf = (p - 1.0) / p;
            (2.0 * lp + 2.0) * a + (2.0 * pf + 2.0) * s * beta + (pf + 1.0) * s * gamma
        }
        (Algorithm::Tree, Broadcast) => l * (a + s * beta),
        (Algorithm::Tree, Reduce) => l * (a + s * beta + s * gamma),
        (Algorithm::Tree, _) => {
            let mut t = 0.0;
            let mut m = 1;
            while m < n {
                t += a + m.min(n - m) as f64 * s / nf * beta;
                m *= 2;
            }
            t
        }
        (Algorithm::Star, Broadcast) => a + s * beta,
        (Algorithm::Star, Reduce) => a + s * beta + (nf - 1.0) * s * gamma,
        (Algorithm::Star, _) => a + s / nf * beta,
        (Algorithm::Pairwise, AlltoAll) => (nf - 1.0) * (a + s / nf * beta),
        (Algorithm::Pairwise, _) => (1..n)
            .map(|k| {
                let max = (0..n).map(|r| c(r, (r + k) % n)).fold(0.0, f64::max);
                a + max * beta
            })
            .sum(),
        (Algorithm::Nb, AllGather) => l * a + frac * s * beta,
        (Algorithm::Nb, ReduceScatter) => l * a + frac * s * beta + red,
        (Algorithm::Nb, Barrier) => l * a,
        (Algorithm::Nb, AlltoAll) => (0..l as usize)
            .map(|k| a + super::algorithm::nb::alltoall_blocks_at(n, k) as f64 * s / nf * beta)
            .sum(),
        (Algorithm::Nb, _) => 2.0 * l * a + 2.0 * frac * s * beta + red,
        (Algorithm::HierNhr, p) => {
            // As hier, with ceil(log2 S') inter-server steps per phase.
            let m = n / 8;
            let steps = m.next_power_of_two().trailing_zeros() as f64;
            let srv = (m as f64) - 1.0;
            let (intra, inter) = (s / 8.0, s / nf);
            match p {
                AllReduce => {
                    2.0 * a
                        + 2.0 * intra * beta
                        + 7.0 * intra * gamma
                        + 2.0 * steps * a
                        + srv * (2.0 * inter * beta + inter * gamma)
                }
                ReduceScatter => {
                    a + intra * beta
                        + 7.0 * intra * gamma
                        + steps * a
                        + srv * inter * (beta + gamma)
                }
                _ => a + intra * beta + steps * a + srv * inter * beta,
            }
        }
        (Algorithm::Hier, p) => {
            let srv = (n / 8) as f64 - 1.0;
            let (intra, inter) = (s / 8.0, s / nf);
            match p {
                AllReduce => {
                    2.0 * a
                        + 2.0 * intra * beta
                        + 7.0 * intra * gamma
                        + srv * (2.0 * a + 2.0 * inter * beta + inter * gamma)
                }
                ReduceScatter => {
                    a + intra * beta + 7.0 * intra * gamma + srv * (a + inter * (beta + gamma))
                }
                AllGather => a + intra * beta + srv * (a + inter * beta),
                Broadcast | Reduce => {
                    let d = super::algorithm::hier::tree_depth(n / 8) as f64;
                    let red = if p == Reduce {
                        (7.0 + d) * intra * gamma
                    } else {
                        0.0
                    };
                    (2.0 + d) * (a + intra * beta) + red
                }
                // Scatter, Gather.
                _ => a + intra * beta + if srv > 0.0 { a + inter * beta } else { 0.0 },
            }
        }
        (Algorithm::Nhr, p) => match p {
            AllGather => l * a + frac * s * beta,
            ReduceScatter => l * a + frac * s * beta + red,
            Broadcast => 2.0 * l * a + 2.0 * frac * s * beta,
            _ => 2.0 * l * a + 2.0 * frac * s * beta + red,
        },
        (Algorithm::Pipeline, p) => {
            let step = (n / 8) as f64 * (a + s / nf * beta);
            match p {
                AllGather => step,
                ReduceScatter => step + red,
                _ => 2.0 * step + red,
            }
        }
        (Algorithm::Dbtree, _) => {
            let (_, per) = super::algorithm::dbtree::shape(&[n]);
            per.iter()
                .map(|&(m, k)| a + m as f64 * s / 2.0 * beta + k as f64 * s / 2.0 * gamma)
                .sum()
        }
        // Unreachable: `supports` was checked above.
        (Algorithm::Ring, _) | (Algorithm::Mesh, _) => return None,
    })
}
