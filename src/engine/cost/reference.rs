//! The reference simulator: the straightforward event-driven simulation
//! the fast path in [`super::fast`] must equal (to 1e-9 relative in total
//! and per-step times, and in every transfer's timing;
//! `tests/sim_reference.rs` enumerates the catalogue). It keeps one
//! route index per transfer, recomputes every flow's max-min fair rate at
//! each event by scanning every link, and records the whole [`Timeline`].
//! The pipelined (sliced) simulation (`run_sliced`, in `sliced.rs`) runs on
//! this simulator in both paths, so for `k ≥ 2` there is no second
//! implementation to compare against: its checks are the pipelined closed
//! forms (`tests/slicing.rs`). Its max-min sharing takes the bottleneck
//! link off a heap (same choice, ties included, as a scan of every link;
//! checked bit for bit against the scan on 1 320 cclsim cases when it was
//! introduced, not by a test). Do not optimise the unsliced `run` here:
//! its value is that it is obviously the model of the module doc of
//! [`super`]. Its entry, [`super::estimate_sliced_reference`] (buffer
//! loops, the slicing choice, the runs), sits beside the production
//! entry in `cost.rs`, so this file uses nothing of `sliced.rs`, which
//! extends [`Simulator`] with the pipelined run.

use super::{LinkBusy, StepTiming, Timeline, TransferTiming};
use crate::engine::schedule::{Schedule, Step, TransferKind};
use crate::engine::topology::{Route, Topology, TopologyError};
use std::collections::HashMap;

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
pub(super) struct Simulator<'a> {
    pub(super) schedule: &'a Schedule,
    pub(super) topo: &'a Topology,
    /// Route index of every transfer, in schedule order.
    pub(super) route_of: Vec<usize>,
    pub(super) routes: Vec<Route>,
    /// Capacity of every directed link, bytes/µs.
    pub(super) cap: Vec<f64>,
}

impl<'a> Simulator<'a> {
    pub(super) fn new(schedule: &'a Schedule, topo: &'a Topology) -> Result<Self, TopologyError> {
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

    /// Simulates one loop of `elems` elements of `es` bytes. Steps are
    /// synchronous: each starts when the previous one's last transfer is
    /// done (its last byte arrived and, with a reduce bandwidth, reduced).
    pub(super) fn run(
        &mut self,
        elems: u64,
        es: u64,
        record: bool,
    ) -> Result<Timeline, TopologyError> {
        let schedule = self.schedule;
        let mut t0 = 0.0f64;
        let mut steps = Vec::with_capacity(schedule.steps.len());
        let mut rec = Recorded {
            transfers: Vec::with_capacity(if record { schedule.transfer_count() } else { 0 }),
            link_busy: Vec::new(),
        };
        let mut s = Scratch::new(2 * self.topo.links.len(), schedule.ranks);
        let mut ti = 0usize;
        for (si, step) in schedule.steps.iter().enumerate() {
            let sizes = self.start_flows(&mut s, step, ti, t0, elems, es);
            let max_link_sharing = s.used.iter().map(|&id| s.users[id]).max().unwrap_or(0);
            if max_link_sharing <= 1 {
                self.uncontended(&mut s.flows, &s.hop_ids);
            } else {
                self.contended(&mut s.flows, &s.hop_ids);
            }
            let done = self.done_times(&mut s, step, &sizes, t0);
            let end = done.iter().copied().fold(t0, f64::max);
            if record {
                self.record_transfers(&mut s, &mut rec, si, ti, &sizes, &done);
                record_link_busy(&mut s, &mut rec, si);
            }
            steps.push(StepTiming {
                start_us: t0,
                end_us: end,
                max_link_sharing,
            });
            ti += step.transfers.len();
            t0 = end;
        }
        Ok(Timeline::of_loop(
            steps,
            rec.transfers,
            rec.link_busy,
            record.then(|| self.routes.clone()),
        ))
    }

    /// Resets the scratch the previous step used and makes one flow per
    /// transfer of `step` (its transfers start at index `ti` of the
    /// schedule), counting the flows on each link direction. Returns each
    /// transfer's bytes.
    fn start_flows(
        &self,
        s: &mut Scratch,
        step: &Step,
        ti: usize,
        t0: f64,
        elems: u64,
        es: u64,
    ) -> Vec<u64> {
        s.hop_ids.clear();
        s.flows.clear();
        for id in s.used.drain(..) {
            s.users[id] = 0;
        }
        let mut sizes = Vec::with_capacity(step.transfers.len());
        for (k, t) in step.transfers.iter().enumerate() {
            let route = &self.routes[self.route_of[ti + k]];
            let r = self.schedule.range_elems_u64(elems, t.first, t.count);
            let b = (r.end - r.start) * es;
            sizes.push(b);
            let first = s.hop_ids.len();
            for h in &route.hops {
                let id = 2 * h.link + usize::from(h.forward);
                s.hop_ids.push(id);
                if s.users[id] == 0 {
                    s.used.push(id);
                }
                s.users[id] += 1;
            }
            // A late device starts nothing before its offset.
            let imp = &self.topo.impairment;
            let start = t0.max(imp.late_of(t.src)).max(imp.late_of(t.dst));
            s.flows.push(Flow {
                hops: first..s.hop_ids.len(),
                remaining: b as f64,
                start,
                active_from: start + route.latency_us,
                rate: 0.0,
                end: f64::NAN,
            });
        }
        sizes
    }

    /// Rates and ends for a step where no link direction carries two
    /// flows: each flow runs at its route's bottleneck bandwidth from its
    /// start to its end, with no event to wait for.
    fn uncontended(&self, flows: &mut [Flow], hop_ids: &[usize]) {
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
    }

    /// When each transfer of `step` is done: its arrival, or, for a reduce
    /// with a reduce bandwidth, the end of its reduce. A receiver reduces
    /// one arrival at a time, in arrival order (ties by schedule order), so
    /// a reduce waits for the receiver's previous one.
    fn done_times(&self, s: &mut Scratch, step: &Step, sizes: &[u64], t0: f64) -> Vec<f64> {
        let flows = &s.flows;
        let mut order: Vec<usize> = (0..flows.len()).collect();
        order.sort_by(|&x, &y| flows[x].end.total_cmp(&flows[y].end).then(x.cmp(&y)));
        for r in s.reducing.drain(..) {
            s.busy_until[r] = f64::NAN;
        }
        let mut done = vec![0.0; flows.len()];
        for i in order {
            let t = &step.transfers[i];
            let arrive = flows[i].end;
            done[i] = match (t.kind, self.topo.reduce_gbps) {
                (TransferKind::Reduce, Some(g)) => {
                    let prev = s.busy_until[t.dst];
                    if prev.is_nan() {
                        s.reducing.push(t.dst);
                    }
                    let start = if prev.is_nan() { t0 } else { prev }.max(arrive);
                    let g = g * self.topo.impairment.speed_of(t.dst);
                    let end = start + sizes[i] as f64 / (g * 1e3);
                    s.busy_until[t.dst] = end;
                    end
                }
                _ => arrive,
            };
        }
        done
    }

    /// Records step `si`'s transfers (their timing and first link) and
    /// widens each link direction's busy interval over the flows on it.
    fn record_transfers(
        &self,
        s: &mut Scratch,
        rec: &mut Recorded,
        si: usize,
        ti: usize,
        sizes: &[u64],
        done: &[f64],
    ) {
        for (i, f) in s.flows.iter().enumerate() {
            for &id in &s.hop_ids[f.hops.clone()] {
                let e = s.busy[id].get_or_insert((f.active_from, f.end, 0));
                e.0 = e.0.min(f.active_from);
                e.1 = e.1.max(f.end);
                e.2 += 1;
            }
            let route = self.route_of[ti + i];
            rec.transfers.push(TransferTiming {
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

/// Per-step working state of [`Simulator::run`], reused across steps: per
/// link direction (`2·link + forward`) and per rank, with the touched
/// entries listed so a step resets only what it used.
struct Scratch {
    /// Every flow's directed-link ids, concatenated ([`Flow::hops`]).
    hop_ids: Vec<usize>,
    flows: Vec<Flow>,
    /// Flows on each link direction this step.
    users: Vec<usize>,
    /// The link directions with a flow this step.
    used: Vec<usize>,
    /// Each link direction's busy interval and flow count this step.
    busy: Vec<Option<(f64, f64, usize)>>,
    /// Until when each rank's reduce unit is busy (NaN: idle this step).
    busy_until: Vec<f64>,
    /// The ranks with a reduce this step.
    reducing: Vec<usize>,
}

impl Scratch {
    fn new(directions: usize, ranks: usize) -> Scratch {
        Scratch {
            hop_ids: Vec::new(),
            flows: Vec::new(),
            users: vec![0; directions],
            used: Vec::new(),
            busy: vec![None; directions],
            busy_until: vec![f64::NAN; ranks],
            reducing: Vec::new(),
        }
    }
}

/// What a recording [`Simulator::run`] keeps beyond the step times.
struct Recorded {
    transfers: Vec<TransferTiming>,
    link_busy: Vec<LinkBusy>,
}

/// Appends step `si`'s busy link directions, in id order, and clears
/// their intervals for the next step.
fn record_link_busy(s: &mut Scratch, rec: &mut Recorded, si: usize) {
    let mut ids = s.used.clone();
    ids.sort_unstable();
    rec.link_busy.extend(ids.into_iter().filter_map(|id| {
        s.busy[id].take().map(|(a, b, n)| LinkBusy {
            link: id / 2,
            forward: id % 2 == 1,
            step: si,
            start_us: a,
            end_us: b,
            flows: n,
        })
    }));
}
