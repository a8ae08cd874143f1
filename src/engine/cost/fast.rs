//! The fast step-synchronous (unsliced) simulator: the model of
//! [`super`]'s module doc, computed so that its cost grows with what is
//! distinct in a schedule rather than with ranks × steps. It equals
//! [`super::reference`] to 1e-9 relative (`tests/sim_reference.rs`).
//!
//! How it differs from the reference (never in the model):
//! - **Routes resolved once per rank pair**: a dense `src × dst` table of
//!   route indices (up to [`DENSE_RANKS`] ranks; above, one index per
//!   transfer), each route's directed-link ids, latency and bottleneck
//!   capacity in flat arrays. Routes are numbered in order of first use,
//!   as the reference numbers them, so [`TransferTiming::route`] agrees.
//! - **Per-link state in flat arrays** indexed by directed-link id
//!   (`2·link + forward`), reset through the list of ids a step touched;
//!   no map and no allocation per transfer in the loop.
//! - **Steps simulated from 0**: a step's times are computed relative to
//!   its start and shifted, so a step whose transfers are those of the
//!   previous simulated step (same routes, bytes, receivers and kinds, in
//!   order: every ring step of a phase) is **reused**, not re-simulated.
//!   The shift differs from the reference's absolute times by rounding
//!   only (~1e-16 relative).
//! - **Contention by levels**: max-min fair rates are filled level by
//!   level: every link whose fair share is within 1e-13 (relative) of the
//!   smallest is frozen in the same round at its own current share, so a
//!   symmetric step (every rank's flow alike) takes one round, not one per
//!   link. Running flows are a list (not a scan of every flow), starts
//!   come from a sorted list.
//! - **Chunk ranges once per loop**: a table of every chunk's element
//!   range instead of two 128-bit divisions per transfer.
//! - **Recording on demand**: per-transfer timings and link intervals are
//!   built only when asked ([`super::Record::Full`]).

use super::{LinkBusy, StepTiming, Timeline, TransferTiming};
use crate::engine::schedule::{Schedule, TransferKind};
use crate::engine::topology::{Route, Topology, TopologyError};
use std::collections::HashMap;

/// Most ranks for the dense `src × dst` route table (4 bytes a pair: 16 MiB
/// at 2048 ranks); above, one route index per transfer.
pub const DENSE_RANKS: usize = 2048;

const NONE: u32 = u32::MAX;

/// Shares within this relative distance of a round's smallest share are
/// frozen in the same round (module doc).
const LEVEL_TOL: f64 = 1e-13;

/// Where a transfer's route index is found.
enum RouteIndex {
    /// `table[src · n + dst]`.
    Pair { n: usize, table: Vec<u32> },
    /// One index per transfer, in schedule order.
    PerTransfer(Vec<u32>),
}

/// The fast simulator of one schedule on one topology (module doc).
pub(super) struct Fast<'a> {
    schedule: &'a Schedule,
    gamma: Option<f64>,
    index: RouteIndex,
    /// Distinct routes in order of first use (the timeline's routes).
    routes: Vec<Route>,
    /// Directed-link ids of route `r`: `hops[start[r]..start[r + 1]]`.
    hops: Vec<u32>,
    start: Vec<u32>,
    /// Route latency, µs.
    lat: Vec<f64>,
    /// Route bottleneck capacity, bytes/µs (`INFINITY` for a local copy).
    bw: Vec<f64>,
    /// Capacity of every directed link, bytes/µs.
    cap: Vec<f64>,
}

/// One transfer of a step as the model sees it: route, bytes, receiver
/// and whether it reduces. Two steps with equal keys take equal times.
#[derive(Clone, Copy, PartialEq)]
struct Key {
    route: u32,
    /// Receiver `<< 1 | reduces`.
    tag: u32,
    bytes: u64,
}

impl<'a> Fast<'a> {
    /// Resolves every route of `schedule` on `topo`.
    ///
    /// Errors: [`TopologyError`] if two communicating ranks have no route.
    pub(super) fn new(schedule: &'a Schedule, topo: &'a Topology) -> Result<Self, TopologyError> {
        let adj = topo.adjacency();
        let n = schedule.ranks;
        let cap: Vec<f64> = topo
            .links
            .iter()
            .flat_map(|l| [l.bandwidth_gbps * 1e3, l.bandwidth_gbps * 1e3])
            .collect();
        let mut sim = Fast {
            schedule,
            gamma: topo.reduce_gbps,
            index: RouteIndex::PerTransfer(Vec::new()),
            routes: Vec::new(),
            hops: Vec::new(),
            start: vec![0],
            lat: Vec::new(),
            bw: Vec::new(),
            cap,
        };
        let add = |sim: &mut Fast, src: usize, dst: usize| -> Result<u32, TopologyError> {
            let r = if src == dst {
                Route::local()
            } else {
                topo.route_with(&adj, src, dst)?
            };
            let mut rate = f64::INFINITY;
            for h in &r.hops {
                let id = 2 * h.link + usize::from(h.forward);
                sim.hops.push(id as u32);
                rate = rate.min(sim.cap[id]);
            }
            sim.start.push(sim.hops.len() as u32);
            sim.lat.push(r.latency_us);
            sim.bw.push(rate);
            sim.routes.push(r);
            Ok((sim.routes.len() - 1) as u32)
        };
        let all = schedule.steps.iter().flat_map(|s| s.transfers.iter());
        if n <= DENSE_RANKS {
            let mut table = vec![NONE; n * n];
            for t in all {
                let slot = t.src * n + t.dst;
                if table[slot] == NONE {
                    table[slot] = add(&mut sim, t.src, t.dst)?;
                }
            }
            sim.index = RouteIndex::Pair { n, table };
        } else {
            let mut seen: HashMap<(usize, usize), u32> = HashMap::new();
            let mut per = Vec::with_capacity(schedule.transfer_count());
            for t in all {
                let i = match seen.get(&(t.src, t.dst)) {
                    Some(&i) => i,
                    None => {
                        let i = add(&mut sim, t.src, t.dst)?;
                        seen.insert((t.src, t.dst), i);
                        i
                    }
                };
                per.push(i);
            }
            sim.index = RouteIndex::PerTransfer(per);
        }
        Ok(sim)
    }

    /// Route index of transfer number `ti` (schedule order) from `src` to
    /// `dst`.
    #[inline]
    fn route(&self, ti: usize, src: usize, dst: usize) -> u32 {
        match &self.index {
            RouteIndex::Pair { n, table } => table[src * n + dst],
            RouteIndex::PerTransfer(v) => v[ti],
        }
    }

    #[inline]
    fn route_hops(&self, r: u32) -> &[u32] {
        let r = r as usize;
        &self.hops[self.start[r] as usize..self.start[r + 1] as usize]
    }

    /// Simulates one loop of `elems` elements of `es` bytes; records every
    /// transfer and link interval if `record` (else the steps only).
    pub(super) fn run(&self, elems: u64, es: u64, record: bool) -> Timeline {
        let schedule = self.schedule;
        let mut steps = Vec::with_capacity(schedule.steps.len());
        let mut transfers = Vec::with_capacity(if record { schedule.transfer_count() } else { 0 });
        let mut link_busy = Vec::new();
        let mut st = StepSim::new(self.cap.len(), schedule.ranks);
        let mut key: Vec<Key> = Vec::new();
        let mut prev_key: Vec<Key> = Vec::new();
        // Duration and sharing of the last simulated step.
        let mut prev: Option<(f64, usize)> = None;
        let reduce_matters = self.gamma.is_some();
        // Every chunk's element range, once per loop (the ranges cost
        // 128-bit divisions; a transfer reads two of them).
        let chunk: Vec<std::ops::Range<u64>> = (0..schedule.chunks + schedule.scratch)
            .map(|c| schedule.chunk_elems_u64(elems, c))
            .collect();
        let range = |first: usize, count: usize| match count {
            0 => chunk.get(first).map(|r| r.start..r.start),
            _ => chunk
                .get(first + count - 1)
                .map(|last| chunk[first].start..last.end),
        };
        let mut t0 = 0.0f64;
        let mut ti = 0usize;
        for (si, step) in schedule.steps.iter().enumerate() {
            key.clear();
            for (k, t) in step.transfers.iter().enumerate() {
                let r = range(t.first, t.count)
                    .unwrap_or_else(|| schedule.range_elems_u64(elems, t.first, t.count));
                let reduces = reduce_matters && t.kind == TransferKind::Reduce;
                key.push(Key {
                    route: self.route(ti + k, t.src, t.dst),
                    tag: ((t.dst as u32) << 1) | u32::from(reduces),
                    bytes: (r.end - r.start) * es,
                });
            }
            let (dur, sharing) = match prev {
                Some(p) if key == prev_key => p,
                _ => {
                    let p = st.simulate(self, &key, record);
                    std::mem::swap(&mut key, &mut prev_key);
                    prev = Some(p);
                    p
                }
            };
            if record {
                for (i, k) in prev_key.iter().enumerate() {
                    let route = k.route as usize;
                    transfers.push(TransferTiming {
                        step: si,
                        index: i,
                        bytes: k.bytes,
                        link: self.routes[route]
                            .hops
                            .first()
                            .map_or(usize::MAX, |h| h.link),
                        start_us: t0,
                        end_us: t0 + st.end[i],
                        done_us: t0 + st.done[i],
                        route,
                    });
                }
                link_busy.extend(st.busy.iter().map(|&(id, a, b, n)| LinkBusy {
                    link: id as usize / 2,
                    forward: id % 2 == 1,
                    step: si,
                    start_us: t0 + a,
                    end_us: t0 + b,
                    flows: n as usize,
                }));
            }
            let end = t0 + dur;
            steps.push(StepTiming {
                start_us: t0,
                end_us: end,
                max_link_sharing: sharing,
            });
            ti += step.transfers.len();
            t0 = end;
        }
        Timeline::of_loop(
            steps,
            transfers,
            link_busy,
            record.then(|| self.routes.clone()),
        )
    }
}

/// Scratch of one step's simulation, reused across steps; times relative
/// to the step's start.
struct StepSim {
    /// Flows per directed link this step, and the ids touched.
    users: Vec<u32>,
    used: Vec<u32>,
    /// Per flow: arrival of the last byte, end of its reduce, bytes left,
    /// data start, rate, state (0 idle, 1 running unfrozen, 2 frozen).
    end: Vec<f64>,
    done: Vec<f64>,
    rem: Vec<f64>,
    from: Vec<f64>,
    rate: Vec<f64>,
    state: Vec<u8>,
    /// Per receiver: reduces this step, end of its last reduce.
    reduces: Vec<u32>,
    busy_until: Vec<f64>,
    receivers: Vec<u32>,
    serial: Vec<u32>,
    /// Link intervals of the last simulated step: (id, first start, last
    /// end, flows), by id.
    busy: Vec<(u32, f64, f64, u32)>,
    /// Contention: compact id of a directed link (NONE if unused), its
    /// capacity left and unfrozen flows, the flows on it (CSR).
    local: Vec<u32>,
    lcap0: Vec<f64>,
    lcap: Vec<f64>,
    lcnt: Vec<u32>,
    on_start: Vec<u32>,
    on_flow: Vec<u32>,
    live_links: Vec<u32>,
    running: Vec<u32>,
    pending: Vec<u32>,
}

impl StepSim {
    fn new(directions: usize, ranks: usize) -> Self {
        StepSim {
            users: vec![0; directions],
            used: Vec::new(),
            end: Vec::new(),
            done: Vec::new(),
            rem: Vec::new(),
            from: Vec::new(),
            rate: Vec::new(),
            state: Vec::new(),
            reduces: vec![0; ranks],
            busy_until: vec![0.0; ranks],
            receivers: Vec::new(),
            serial: Vec::new(),
            busy: Vec::new(),
            local: vec![NONE; directions],
            lcap0: Vec::new(),
            lcap: Vec::new(),
            lcnt: Vec::new(),
            on_start: Vec::new(),
            on_flow: Vec::new(),
            live_links: Vec::new(),
            running: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Simulates one step from time 0: fills `end` and `done` per
    /// transfer (and `busy` if `record`); returns the step's duration and
    /// its most flows on one link direction.
    fn simulate(&mut self, sim: &Fast, key: &[Key], record: bool) -> (f64, usize) {
        let m = key.len();
        for &id in &self.used {
            self.users[id as usize] = 0;
        }
        self.used.clear();
        let mut sharing = 0u32;
        for k in key {
            for &h in sim.route_hops(k.route) {
                let u = &mut self.users[h as usize];
                if *u == 0 {
                    self.used.push(h);
                }
                *u += 1;
                sharing = sharing.max(*u);
            }
        }
        self.end.clear();
        self.end.resize(m, f64::NAN);
        if sharing <= 1 {
            // Uncontended: every flow at its route's bottleneck bandwidth.
            for (i, k) in key.iter().enumerate() {
                let r = k.route as usize;
                let lat = sim.lat[r];
                self.end[i] = if k.bytes > 0 {
                    lat + k.bytes as f64 / sim.bw[r]
                } else {
                    lat
                };
            }
        } else {
            self.contended(sim, key);
        }
        // Serial reduces per receiver, in arrival order (ties by index).
        self.done.clear();
        self.done.extend_from_slice(&self.end);
        if let Some(g) = sim.gamma {
            for k in key {
                if k.tag & 1 == 1 {
                    let d = (k.tag >> 1) as usize;
                    if self.reduces[d] == 0 {
                        self.receivers.push(d as u32);
                    }
                    self.reduces[d] += 1;
                }
            }
            self.serial.clear();
            for (i, k) in key.iter().enumerate() {
                if k.tag & 1 == 1 {
                    let d = (k.tag >> 1) as usize;
                    if self.reduces[d] == 1 {
                        // The only reduce of its receiver this step.
                        self.done[i] = self.end[i].max(0.0) + k.bytes as f64 / (g * 1e3);
                    } else {
                        self.serial.push(i as u32);
                    }
                }
            }
            if !self.serial.is_empty() {
                let end = &self.end;
                self.serial.sort_unstable_by(|&x, &y| {
                    end[x as usize].total_cmp(&end[y as usize]).then(x.cmp(&y))
                });
                for &d in &self.receivers {
                    self.busy_until[d as usize] = 0.0;
                }
                for &i in &self.serial {
                    let i = i as usize;
                    let d = (key[i].tag >> 1) as usize;
                    let s = self.busy_until[d].max(self.end[i]);
                    let e = s + key[i].bytes as f64 / (g * 1e3);
                    self.busy_until[d] = e;
                    self.done[i] = e;
                }
            }
            for &d in &self.receivers {
                self.reduces[d as usize] = 0;
            }
            self.receivers.clear();
        }
        let dur = self.done.iter().copied().fold(0.0, f64::max);
        if record {
            self.busy.clear();
            let mut ids = self.used.clone();
            ids.sort_unstable();
            // Compact slot per used id, in id order.
            for (slot, &id) in ids.iter().enumerate() {
                self.local[id as usize] = slot as u32;
                self.busy.push((id, f64::INFINITY, f64::NEG_INFINITY, 0));
            }
            for (i, k) in key.iter().enumerate() {
                let from = sim.lat[k.route as usize];
                for &h in sim.route_hops(k.route) {
                    let e = &mut self.busy[self.local[h as usize] as usize];
                    e.1 = e.1.min(from);
                    e.2 = e.2.max(self.end[i]);
                    e.3 += 1;
                }
            }
            for &id in &ids {
                self.local[id as usize] = NONE;
            }
        }
        (dur, sharing as usize)
    }

    /// Event loop of a step where some link direction carries several
    /// flows: max-min fair rates by levels, recomputed at every start and
    /// finish (module doc). Fills `end`.
    fn contended(&mut self, sim: &Fast, key: &[Key]) {
        let m = key.len();
        // Compact ids of the link directions used in this step.
        self.lcap0.clear();
        for &id in &self.used {
            self.local[id as usize] = self.lcap0.len() as u32;
            self.lcap0.push(sim.cap[id as usize]);
        }
        let nl = self.lcap0.len();
        // Flows on each link (CSR), in flow order.
        self.on_start.clear();
        self.on_start.resize(nl + 1, 0);
        for k in key {
            for &h in sim.route_hops(k.route) {
                self.on_start[self.local[h as usize] as usize + 1] += 1;
            }
        }
        for l in 0..nl {
            self.on_start[l + 1] += self.on_start[l];
        }
        self.on_flow.clear();
        self.on_flow.resize(self.on_start[nl] as usize, 0);
        self.lcnt.clear();
        self.lcnt.resize(nl, 0);
        for (i, k) in key.iter().enumerate() {
            for &h in sim.route_hops(k.route) {
                let l = self.local[h as usize] as usize;
                self.on_flow[(self.on_start[l] + self.lcnt[l]) as usize] = i as u32;
                self.lcnt[l] += 1;
            }
        }
        self.rem.clear();
        self.from.clear();
        self.rate.clear();
        self.rate.resize(m, 0.0);
        self.state.clear();
        self.state.resize(m, 0);
        self.pending.clear();
        let mut now = f64::INFINITY;
        for (i, k) in key.iter().enumerate() {
            let from = sim.lat[k.route as usize];
            self.rem.push(k.bytes as f64);
            self.from.push(from);
            now = now.min(from);
            if k.bytes == 0 {
                // Zero-byte flows end as soon as they start.
                self.end[i] = from;
            } else {
                self.pending.push(i as u32);
            }
        }
        {
            let from = &self.from;
            self.pending.sort_unstable_by(|&x, &y| {
                from[x as usize]
                    .total_cmp(&from[y as usize])
                    .then(x.cmp(&y))
            });
        }
        self.pending.reverse(); // Pop from the back: earliest first.
        self.running.clear();
        self.lcap.clear();
        self.lcap.resize(nl, 0.0);
        loop {
            while let Some(&i) = self.pending.last() {
                if self.from[i as usize] <= now {
                    self.running.push(i);
                    self.pending.pop();
                } else {
                    break;
                }
            }
            let next_start = self
                .pending
                .last()
                .map_or(f64::INFINITY, |&i| self.from[i as usize]);
            if self.running.is_empty() {
                if next_start.is_finite() {
                    now = next_start;
                    continue;
                }
                break;
            }
            // Progressive filling over the running flows, by levels.
            self.lcap.copy_from_slice(&self.lcap0);
            self.lcnt.iter_mut().for_each(|c| *c = 0);
            self.live_links.clear();
            for &i in &self.running {
                self.state[i as usize] = 1;
                for &h in sim.route_hops(key[i as usize].route) {
                    let l = self.local[h as usize] as usize;
                    if self.lcnt[l] == 0 {
                        self.live_links.push(l as u32);
                    }
                    self.lcnt[l] += 1;
                }
            }
            let mut left = self.running.len();
            while left > 0 {
                let mut share = f64::INFINITY;
                for &l in &self.live_links {
                    let c = self.lcnt[l as usize];
                    if c > 0 {
                        share = share.min(self.lcap[l as usize] / c as f64);
                    }
                }
                if share == f64::INFINITY {
                    // Only flows that cross no link are left (local
                    // copies): their rate stays 0, as in the reference.
                    break;
                }
                let level = share + share.abs() * LEVEL_TOL;
                let mut froze = false;
                for li in 0..self.live_links.len() {
                    let l = self.live_links[li] as usize;
                    let c = self.lcnt[l];
                    if c == 0 {
                        continue;
                    }
                    let cur = self.lcap[l] / c as f64;
                    if cur > level {
                        continue;
                    }
                    for j in self.on_start[l]..self.on_start[l + 1] {
                        let i = self.on_flow[j as usize] as usize;
                        if self.state[i] != 1 {
                            continue;
                        }
                        self.state[i] = 2;
                        left -= 1;
                        froze = true;
                        self.rate[i] = cur;
                        for &h in sim.route_hops(key[i].route) {
                            let l2 = self.local[h as usize] as usize;
                            self.lcap[l2] -= cur;
                            self.lcnt[l2] -= 1;
                        }
                    }
                }
                let lcnt = &self.lcnt;
                self.live_links.retain(|&l| lcnt[l as usize] > 0);
                if !froze {
                    break;
                }
            }
            // Next event: a finish or a start.
            let mut next_finish = f64::INFINITY;
            for &i in &self.running {
                let i = i as usize;
                self.state[i] = 0;
                next_finish = next_finish.min(now + self.rem[i] / self.rate[i]);
            }
            let next = next_finish.min(next_start);
            if !next.is_finite() {
                // No progress possible (cannot happen with positive
                // capacities); end the running flows now rather than loop.
                for &i in &self.running {
                    self.end[i as usize] = now;
                }
                self.running.clear();
                break;
            }
            let dt = next - now;
            let tol = 1e-12 * next.abs().max(1.0);
            let (rem, rate, end) = (&mut self.rem, &self.rate, &mut self.end);
            self.running.retain(|&i| {
                let i = i as usize;
                let finish = now + rem[i] / rate[i];
                if finish <= next + tol {
                    rem[i] = 0.0;
                    end[i] = finish;
                    false
                } else {
                    rem[i] -= rate[i] * dt;
                    true
                }
            });
            now = next;
        }
        for &id in &self.used {
            self.local[id as usize] = NONE;
        }
    }
}
