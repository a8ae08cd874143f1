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
//!   order: every ring step of a phase) is **reused**, not re-simulated;
//!   a step its source says repeats the previous step's traffic
//!   ([`crate::engine::schedule::Next::Repeat`]) is reused without being
//!   made or compared when the loop's chunks all have one size
//!   ([`Run::repeat`]).
//!   The shift differs from the reference's absolute times by rounding
//!   only (~1e-16 relative).
//! - **Contention by levels**: max-min fair rates are filled level by
//!   level: every link whose fair share is within 1e-13 (relative) of the
//!   smallest is frozen in the same round at its own current share, so a
//!   symmetric step (every rank's flow alike) takes one round, not one per
//!   link. Running flows are a list (not a scan of every flow), starts
//!   come from a sorted list.
//! - **Contention by groups**: the flows of a contended step are split
//!   into groups joined by shared links (union-find over the links), and
//!   each group is its own event loop: max-min rates in a group depend on
//!   its flows alone, so an event of one group (a finish) does not
//!   re-share the others. A Bruck step on 1024 ranks whose wrapped ranks
//!   send two messages of different sizes down one route is ~500 groups
//!   of one or two flows, not one loop of ~500 events over 1 500 flows.
//!   Only the reference's rounding differs: a flow of another group that
//!   finishes within 1e-12 of an event is no longer ended at that event.
//!   A group of one class (alone on its links: every flow of `hier-nhr`'s
//!   level1 shifts) is timed directly, as its event loop would time it.
//! - **Flow classes**: a run of consecutive transfers with equal keys
//!   (route, receiver, kind, bytes: NHR's strided blocks to one peer) is
//!   one class ([`Class`]), collected as the keys are computed (that pass
//!   and the route look-up stay per transfer); the reuse test, the link
//!   counts, the event loop and the ordering of the receivers' serial
//!   reduces work per class (each class's reduces are then chained one by
//!   one, for the same bits), and per-transfer times are written only
//!   when recording. In a contended step a class is one flow of weight
//!   `w`: it counts `w` flows on each of its links and takes `w` equal
//!   shares, which is what max-min fair sharing gives `w` identical
//!   flows. A receiver's reduces run in arrival order, ties by index: a
//!   class's transfers arrive together and classes do not interleave, so
//!   classes in (end, first) order, each chained transfer by transfer,
//!   are that order exactly. `hier-nhr` on 1024 ranks (steps of 65 536
//!   transfers in runs of 64) simulates 1 024 classes a step. Only
//!   rounding differs (`w` shares taken in one subtraction).
//! - **Routes searched without allocating** ([`Topology::route_in`]: the
//!   breadth-first search's scratch is kept across routes; a route up the
//!   sender's first switch port and down to the receiver is read off the
//!   two devices' links, not searched through a 1024-port switch).
//! - **Chunk ranges once per loop**: a table of every chunk's element
//!   range instead of two 128-bit divisions per transfer.
//! - **Recording on demand**: per-transfer timings and link intervals are
//!   built only when asked ([`super::Record::Full`]).

use super::{LinkBusy, StepTiming, Timeline, TransferTiming};
use crate::engine::schedule::{Schedule, Step, TransferKind};
use crate::engine::topology::{Route, RouteScratch, Topology, TopologyError};
use std::collections::HashMap;

/// Most ranks for the dense `src × dst` route table (4 bytes a pair: 16 MiB
/// at 2048 ranks); above, each sender's routes in a list sorted by receiver
/// (memory grows with the distinct pairs used, not ranks²).
pub const DENSE_RANKS: usize = 2048;

const NONE: u32 = u32::MAX;

/// Shares within this relative distance of a round's smallest share are
/// frozen in the same round (module doc).
const LEVEL_TOL: f64 = 1e-13;

/// Where a pair's route index is found.
enum RouteIndex {
    /// `table[src · n + dst]` (`NONE`: not resolved yet).
    Pair { n: usize, table: Vec<u32> },
    /// Per sender: `(receiver, route)` sorted by receiver.
    Sparse(Vec<Vec<(u32, u32)>>),
}

/// The routes of one schedule on one topology, resolved when a transfer
/// first uses them (module doc), shared by the loops simulated in one
/// pass ([`Run`]).
pub(super) struct Fast<'a> {
    topo: &'a Topology,
    adj: Vec<Vec<(usize, usize)>>,
    scratch: RouteScratch,
    gamma: Option<f64>,
    index: RouteIndex,
    /// Distinct routes in order of first use (the timeline's routes), kept
    /// only when a timeline is recorded (`keep_routes`): an AlltoAll on
    /// 1024 ranks resolves all 1 047 552 pairs, ~120 B each as `Route`s
    /// against ~24 B in the flat arrays below.
    routes: Vec<Route>,
    keep_routes: bool,
    /// Directed-link ids of route `r`: `hops[start[r]..start[r + 1]]`.
    hops: Vec<u32>,
    start: Vec<u32>,
    /// Route `r`'s `(latency µs, bottleneck capacity bytes/µs)` is
    /// `kinds[kind[r]]` (capacity `INFINITY` for a local copy): a machine
    /// has few distinct pairs, so 4 bytes a route instead of 16.
    kind: Vec<u32>,
    kinds: Vec<(f64, f64)>,
    /// `kinds` by the bits of its two figures.
    kind_of: HashMap<(u64, u64), u32>,
    /// Capacity of every directed link, bytes/µs.
    cap: Vec<f64>,
    /// The last step's `(src, dst)` pairs and their routes: a step between
    /// the same pairs (every ring step) finds its routes by one sequential
    /// comparison, not one table look-up per transfer.
    last_pairs: Vec<(u32, u32)>,
    last_routes: Vec<u32>,
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

/// A flow class: a run of `w` consecutive transfers of a step with equal
/// [`Key`]s (a zero-byte transfer is a class of its own). They
/// share every rate, end and receiver, so the simulator works per class
/// (module doc); two steps with equal classes have equal keys, transfer
/// by transfer.
#[derive(Clone, Copy, PartialEq)]
struct Class {
    key: Key,
    w: u32,
}

impl<'a> Fast<'a> {
    /// The route tables of a schedule on `ranks` ranks of `topo` (empty:
    /// routes are resolved as transfers use them); `keep_routes` when a
    /// [`Run`] sharing it records its timeline (which lists the routes).
    pub(super) fn new(ranks: usize, topo: &'a Topology, keep_routes: bool) -> Self {
        let cap: Vec<f64> = topo
            .links
            .iter()
            .flat_map(|l| [l.bandwidth_gbps * 1e3, l.bandwidth_gbps * 1e3])
            .collect();
        let index = if ranks <= DENSE_RANKS {
            RouteIndex::Pair {
                n: ranks,
                table: vec![NONE; ranks * ranks],
            }
        } else {
            RouteIndex::Sparse(vec![Vec::new(); ranks])
        };
        Fast {
            topo,
            adj: topo.adjacency(),
            scratch: RouteScratch::default(),
            gamma: topo.reduce_gbps,
            index,
            routes: Vec::new(),
            keep_routes,
            hops: Vec::new(),
            start: vec![0],
            kind: Vec::new(),
            kinds: Vec::new(),
            kind_of: HashMap::new(),
            cap,
            last_pairs: Vec::new(),
            last_routes: Vec::new(),
        }
    }

    /// The route index of every transfer of `step`, in order (module doc:
    /// resolved on first use; the previous step's pairs reused).
    ///
    /// Errors: [`TopologyError`] if two communicating ranks have no route.
    fn step_routes(&mut self, step: &Step) -> Result<&[u32], TopologyError> {
        let m = step.transfers.len();
        let same = m == self.last_pairs.len()
            && step
                .transfers
                .iter()
                .zip(&self.last_pairs)
                .all(|(t, &(a, b))| t.src as u32 == a && t.dst as u32 == b);
        if !same {
            let mut pairs = std::mem::take(&mut self.last_pairs);
            let mut routes = std::mem::take(&mut self.last_routes);
            pairs.clear();
            routes.clear();
            // A run of transfers to one peer (NHR's strided blocks) looks
            // its route up once.
            let mut last: Option<((u32, u32), u32)> = None;
            for t in &step.transfers {
                let pair = (t.src as u32, t.dst as u32);
                let route = match last {
                    Some((p, r)) if p == pair => r,
                    _ => self.route(t.src, t.dst)?,
                };
                last = Some((pair, route));
                pairs.push(pair);
                routes.push(route);
            }
            self.last_pairs = pairs;
            self.last_routes = routes;
        }
        Ok(&self.last_routes)
    }

    /// Resolves the route from `src` to `dst` as route number `routes.len()`.
    fn add(&mut self, src: usize, dst: usize) -> Result<u32, TopologyError> {
        let r = if src == dst {
            Route::local()
        } else {
            self.topo.route_in(&self.adj, &mut self.scratch, src, dst)?
        };
        let mut rate = f64::INFINITY;
        for h in &r.hops {
            let id = 2 * h.link + usize::from(h.forward);
            self.hops.push(id as u32);
            rate = rate.min(self.cap[id]);
        }
        self.start.push(self.hops.len() as u32);
        let kinds = &mut self.kinds;
        let k = *self
            .kind_of
            .entry((r.latency_us.to_bits(), rate.to_bits()))
            .or_insert_with(|| {
                kinds.push((r.latency_us, rate));
                (kinds.len() - 1) as u32
            });
        self.kind.push(k);
        if self.keep_routes {
            self.routes.push(r);
        }
        Ok((self.kind.len() - 1) as u32)
    }

    /// Route `r`'s latency, µs.
    #[inline]
    fn lat(&self, r: usize) -> f64 {
        self.kinds[self.kind[r] as usize].0
    }

    /// Route index from `src` to `dst`, resolved on first use.
    ///
    /// Errors: [`TopologyError`] if the two ranks have no route.
    #[inline]
    fn route(&mut self, src: usize, dst: usize) -> Result<u32, TopologyError> {
        match &mut self.index {
            RouteIndex::Pair { n, table } => {
                let slot = src * *n + dst;
                match table.get(slot) {
                    Some(&r) if r != NONE => Ok(r),
                    _ => {
                        let r = self.add(src, dst)?;
                        if let RouteIndex::Pair { table, .. } = &mut self.index {
                            if let Some(x) = table.get_mut(slot) {
                                *x = r;
                            }
                        }
                        Ok(r)
                    }
                }
            }
            RouteIndex::Sparse(per) => {
                let Some(list) = per.get(src) else {
                    return self.add(src, dst);
                };
                let d = dst as u32;
                let at = list.partition_point(|&(x, _)| x < d);
                if let Some(&(x, r)) = list.get(at) {
                    if x == d {
                        return Ok(r);
                    }
                }
                let r = self.add(src, dst)?;
                if let RouteIndex::Sparse(per) = &mut self.index {
                    per[src].insert(at, (d, r));
                }
                Ok(r)
            }
        }
    }

    #[inline]
    fn route_hops(&self, r: u32) -> &[u32] {
        let r = r as usize;
        &self.hops[self.start[r] as usize..self.start[r + 1] as usize]
    }

    /// The first link route `r` crosses (`usize::MAX` for a local copy).
    fn first_link(&self, r: u32) -> usize {
        self.route_hops(r)
            .first()
            .map_or(usize::MAX, |&id| id as usize / 2)
    }
}

/// The simulation of one buffer loop of `elems` elements, fed one step at
/// a time ([`Run::step`]); several runs (the first and the last loop) can
/// share one [`Fast`] and one pass over the steps.
pub(super) struct Run<'h> {
    header: &'h Schedule,
    elems: u64,
    es: u64,
    record: bool,
    /// Every chunk's element range (the ranges cost 128-bit divisions; a
    /// transfer reads two of them).
    chunk: Vec<std::ops::Range<u64>>,
    /// Do all chunks have one size? Then a step with the previous step's
    /// traffic ([`crate::engine::schedule::Next::Repeat`]) moves the same
    /// bytes and takes the same time ([`Run::repeat`]).
    uniform: bool,
    steps: Vec<StepTiming>,
    transfers: Vec<TransferTiming>,
    link_busy: Vec<LinkBusy>,
    st: StepSim,
    /// The step's flow classes, and those of the last simulated step.
    key: Vec<Class>,
    prev_key: Vec<Class>,
    /// Duration and sharing of the last simulated step.
    prev: Option<(f64, usize)>,
    t0: f64,
    /// Transfers of the steps simulated (not reused), and the widest.
    pub(super) simulated: usize,
    pub(super) widest: usize,
}

impl<'h> Run<'h> {
    /// A run of one loop of `elems` elements of `es` bytes of the schedule
    /// `header` describes; records every transfer and link interval if
    /// `record` (else the steps only).
    pub(super) fn new(
        fast: &Fast,
        header: &'h Schedule,
        elems: u64,
        es: u64,
        record: bool,
    ) -> Self {
        let chunk: Vec<std::ops::Range<u64>> = (0..header.chunks + header.scratch)
            .map(|c| header.chunk_elems_u64(elems, c))
            .collect();
        let uniform = chunk
            .windows(2)
            .all(|w| w[0].end - w[0].start == w[1].end - w[1].start);
        Run {
            header,
            elems,
            es,
            record,
            chunk,
            uniform,
            steps: Vec::new(),
            transfers: Vec::new(),
            link_busy: Vec::new(),
            st: StepSim::new(fast.cap.len(), header.ranks),
            key: Vec::new(),
            prev_key: Vec::new(),
            prev: None,
            t0: 0.0,
            simulated: 0,
            widest: 0,
        }
    }

    /// Simulates the next step (or reuses the previous one's times when
    /// its transfers are the same to the model). With a `limit` of
    /// (transfers simulated in all, transfers of one simulated step), a
    /// step that would exceed it is not simulated and `Ok(false)` says so
    /// (the run is then unfinished).
    ///
    /// Errors: [`TopologyError`] if two communicating ranks have no route.
    pub(super) fn step(
        &mut self,
        fast: &mut Fast,
        step: &Step,
        limit: Option<(usize, usize)>,
    ) -> Result<bool, TopologyError> {
        let reduce_matters = fast.gamma.is_some();
        self.key.clear();
        let routes = fast.step_routes(step)?;
        for (t, &route) in step.transfers.iter().zip(routes) {
            let r = match t.count {
                0 => self.chunk.get(t.first).map(|r| r.start..r.start),
                _ => self
                    .chunk
                    .get(t.first + t.count - 1)
                    .map(|last| self.chunk[t.first].start..last.end),
            }
            .unwrap_or_else(|| self.header.range_elems_u64(self.elems, t.first, t.count));
            let reduces = reduce_matters && t.kind == TransferKind::Reduce;
            let k = Key {
                route,
                tag: ((t.dst as u32) << 1) | u32::from(reduces),
                bytes: (r.end - r.start) * self.es,
            };
            match self.key.last_mut() {
                Some(c) if k.bytes > 0 && c.key == k => c.w += 1,
                _ => self.key.push(Class { key: k, w: 1 }),
            }
        }
        let p = match self.prev {
            Some(p) if self.key == self.prev_key => p,
            _ => {
                let m = step.transfers.len();
                if let Some((all, one)) = limit {
                    if m > one || self.simulated + m > all {
                        return Ok(false);
                    }
                }
                self.simulated += m;
                self.widest = self.widest.max(m);
                let p = self.st.simulate(fast, &self.key, self.record);
                std::mem::swap(&mut self.key, &mut self.prev_key);
                self.prev = Some(p);
                p
            }
        };
        self.push(fast, p);
        Ok(true)
    }

    /// The next step, which repeats the previous step's traffic (same
    /// `src`, `dst`, `count` and `kind` per transfer, in order), reused
    /// without being made when all chunks have one size (then its keys
    /// are the previous step's): `true`. `false` (nothing done) when it
    /// has to be made and fed to [`Run::step`].
    pub(super) fn repeat(&mut self, fast: &Fast) -> bool {
        match self.prev {
            Some(p) if self.uniform && !self.steps.is_empty() => {
                self.push(fast, p);
                true
            }
            _ => false,
        }
    }

    /// Records a step of the last simulated step's keys that took
    /// `(duration, sharing)`, starting where the previous step ended.
    fn push(&mut self, fast: &Fast, (dur, sharing): (f64, usize)) {
        let (si, t0) = (self.steps.len(), self.t0);
        if self.record {
            let keys = self
                .prev_key
                .iter()
                .flat_map(|c| std::iter::repeat_n(c.key, c.w as usize));
            for (i, k) in keys.enumerate() {
                let route = k.route as usize;
                self.transfers.push(TransferTiming {
                    step: si,
                    index: i,
                    bytes: k.bytes,
                    link: fast.first_link(k.route),
                    start_us: t0,
                    end_us: t0 + self.st.end[i],
                    done_us: t0 + self.st.done[i],
                    route,
                });
            }
            self.link_busy
                .extend(self.st.busy.iter().map(|&(id, a, b, n)| LinkBusy {
                    link: id as usize / 2,
                    forward: id % 2 == 1,
                    step: si,
                    start_us: t0 + a,
                    end_us: t0 + b,
                    flows: n as usize,
                }));
        }
        let end = t0 + dur;
        self.steps.push(StepTiming {
            start_us: t0,
            end_us: end,
            max_link_sharing: sharing,
        });
        self.t0 = end;
    }

    /// The loop's timeline (with the routes when recorded).
    pub(super) fn finish(self, fast: &Fast) -> Timeline {
        Timeline::of_loop(
            self.steps,
            self.transfers,
            self.link_busy,
            self.record.then(|| fast.routes.clone()),
        )
    }
}

/// Scratch of one step's simulation, reused across steps; times relative
/// to the step's start.
struct StepSim {
    /// Flows per directed link this step, and the ids touched.
    users: Vec<u32>,
    used: Vec<u32>,
    /// Per transfer, filled only when recording: arrival of the last
    /// byte, end of its reduce.
    end: Vec<f64>,
    done: Vec<f64>,
    /// Per flow class: bytes left, data start, rate, state (0 idle, 1
    /// running unfrozen, 2 frozen).
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
    /// Links a filling round reset; groups of flows joined by shared links
    /// (union-find `parent` over links, group per root link, group per
    /// flow, the groups' flows as CSR).
    touched: Vec<u32>,
    parent: Vec<u32>,
    group_of: Vec<u32>,
    flow_group: Vec<u32>,
    group_start: Vec<u32>,
    group_fill: Vec<u32>,
    group_flow: Vec<u32>,
    /// The step's flow classes ([`Class`]: NHR's strided blocks to one
    /// peer, 64 transfers, are one class; in a contended step one flow of
    /// weight 64). Per class: its first transfer, its transfers, its
    /// route, its end.
    cls_first: Vec<u32>,
    cls_w: Vec<u32>,
    cls_route: Vec<u32>,
    cls_end: Vec<f64>,
    /// Per class: the end of its last reduce (its latest done), or its
    /// end if it does not reduce.
    cls_done: Vec<f64>,
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
            touched: Vec::new(),
            parent: Vec::new(),
            group_of: Vec::new(),
            flow_group: Vec::new(),
            group_start: Vec::new(),
            group_fill: Vec::new(),
            group_flow: Vec::new(),
            cls_first: Vec::new(),
            cls_w: Vec::new(),
            cls_route: Vec::new(),
            cls_end: Vec::new(),
            cls_done: Vec::new(),
        }
    }

    /// Simulates one step from time 0; returns the step's duration and
    /// its most flows on one link direction. Works per flow class (runs
    /// of consecutive transfers with equal keys: they share every rate,
    /// end and receiver), so a step of `hier-nhr`'s level1 (65 536
    /// transfers in runs of 64 at 1024 ranks) costs its 1 024 classes,
    /// not its transfers; only `record` fills `end`, `done` (per
    /// transfer) and `busy`.
    fn simulate(&mut self, sim: &Fast, key: &[Class], record: bool) -> (f64, usize) {
        self.classes(key);
        let nc = self.cls_first.len();
        for &id in &self.used {
            self.users[id as usize] = 0;
        }
        self.used.clear();
        let mut sharing = 0u32;
        for (&r, &w) in self.cls_route.iter().zip(&self.cls_w) {
            for &h in sim.route_hops(r) {
                let u = &mut self.users[h as usize];
                if *u == 0 {
                    self.used.push(h);
                }
                *u += w;
                sharing = sharing.max(*u);
            }
        }
        if sharing <= 1 {
            // Uncontended: every flow at its route's bottleneck bandwidth.
            self.cls_end.clear();
            for c in key {
                let k = &c.key;
                let r = k.route as usize;
                let (lat, bw) = sim.kinds[sim.kind[r] as usize];
                self.cls_end.push(if k.bytes > 0 {
                    lat + k.bytes as f64 / bw
                } else {
                    lat
                });
            }
        } else {
            self.contended(sim, key);
        }
        if record {
            // Every transfer of a class ends with it.
            self.end.clear();
            let m = self.cls_first.last().map_or(0, |&f| f as usize)
                + self.cls_w.last().map_or(0, |&w| w as usize);
            self.end.resize(m, f64::NAN);
            for (c, (&f, &w)) in self.cls_first.iter().zip(&self.cls_w).enumerate() {
                let f = f as usize;
                self.end[f..f + w as usize].fill(self.cls_end[c]);
            }
            self.done.clear();
            self.done.extend_from_slice(&self.end);
        }
        // Serial reduces per receiver, in arrival order (ties by index):
        // a class's transfers arrive together and in index order, and
        // classes do not interleave, so classes sorted by (end, first) and
        // each class's transfers in turn are the transfers in that order.
        // `cls_done`: the last reduce's end of each class (its latest).
        self.cls_done.clear();
        self.cls_done.extend_from_slice(&self.cls_end);
        if let Some(g) = sim.gamma {
            for c in key {
                let (k, w) = (&c.key, c.w);
                if k.tag & 1 == 1 {
                    let d = (k.tag >> 1) as usize;
                    if self.reduces[d] == 0 {
                        self.receivers.push(d as u32);
                    }
                    self.reduces[d] += w;
                }
            }
            self.serial.clear();
            for c in 0..nc {
                let f = self.cls_first[c] as usize;
                let k = &key[c].key;
                if k.tag & 1 == 1 {
                    let d = (k.tag >> 1) as usize;
                    if self.reduces[d] == 1 {
                        // The only reduce of its receiver this step.
                        let e = self.cls_end[c].max(0.0) + k.bytes as f64 / (g * 1e3);
                        self.cls_done[c] = e;
                        if record {
                            self.done[f] = e;
                        }
                    } else {
                        self.serial.push(c as u32);
                    }
                }
            }
            if !self.serial.is_empty() {
                let end = &self.cls_end;
                self.serial.sort_unstable_by(|&x, &y| {
                    end[x as usize].total_cmp(&end[y as usize]).then(x.cmp(&y))
                });
                for &d in &self.receivers {
                    self.busy_until[d as usize] = 0.0;
                }
                for &c in &self.serial {
                    let c = c as usize;
                    let f = self.cls_first[c] as usize;
                    let k = &key[c].key;
                    let d = (k.tag >> 1) as usize;
                    let arrive = self.cls_end[c];
                    let mut busy = self.busy_until[d];
                    for i in f..f + self.cls_w[c] as usize {
                        busy = busy.max(arrive) + k.bytes as f64 / (g * 1e3);
                        if record {
                            self.done[i] = busy;
                        }
                    }
                    self.busy_until[d] = busy;
                    self.cls_done[c] = busy;
                }
            }
            for &d in &self.receivers {
                self.reduces[d as usize] = 0;
            }
            self.receivers.clear();
        }
        let dur = self.cls_done.iter().copied().fold(0.0, f64::max);
        if record {
            self.busy.clear();
            let mut ids = self.used.clone();
            ids.sort_unstable();
            // Compact slot per used id, in id order.
            for (slot, &id) in ids.iter().enumerate() {
                self.local[id as usize] = slot as u32;
                self.busy.push((id, f64::INFINITY, f64::NEG_INFINITY, 0));
            }
            for c in 0..nc {
                let r = self.cls_route[c];
                let from = sim.lat(r as usize);
                for &h in sim.route_hops(r) {
                    let e = &mut self.busy[self.local[h as usize] as usize];
                    e.1 = e.1.min(from);
                    e.2 = e.2.max(self.cls_end[c]);
                    e.3 += self.cls_w[c];
                }
            }
            for &id in &ids {
                self.local[id as usize] = NONE;
            }
        }
        (dur, sharing as usize)
    }

    /// The flow classes `key` as the simulator's flat arrays: each
    /// class's first transfer, transfers and route.
    fn classes(&mut self, key: &[Class]) {
        self.cls_first.clear();
        self.cls_w.clear();
        self.cls_route.clear();
        let mut first = 0u32;
        for c in key {
            self.cls_first.push(first);
            self.cls_w.push(c.w);
            self.cls_route.push(c.key.route);
            first += c.w;
        }
    }

    /// Event loop of a step where some link direction carries several
    /// flows: max-min fair rates by levels, recomputed at every start and
    /// finish (module doc), separately for each set of flows joined by
    /// shared links. Fills `cls_end`.
    fn contended(&mut self, sim: &Fast, key: &[Class]) {
        // A class of `w` transfers counts `w` flows on each of its links
        // and takes `w` shares ([`StepSim::classes`]).
        self.index_links(sim);
        let local_data = self.reset_flows(sim, key);
        self.group_start.clear();
        self.group_flow.clear();
        if local_data {
            // A local copy with data (no link) ends, as in the reference,
            // at the step's last event: then the step is one group.
            let m = self.cls_first.len();
            self.group_start.extend([0, m as u32]);
            self.group_flow.extend(0..m as u32);
        } else {
            self.join_links(sim);
            let groups = self.number_groups(sim, key);
            self.fill_groups(groups);
        }
        self.run_groups(sim);
        for &id in &self.used {
            self.local[id as usize] = NONE;
        }
    }

    /// Gives the link directions this step uses compact ids (`local`, in
    /// `used` order) with their capacities (`lcap0`), and lists the
    /// classes on each (CSR `on_start` / `on_flow`, in class order), so
    /// the event loop works on arrays sized by the step, not the machine.
    fn index_links(&mut self, sim: &Fast) {
        self.lcap0.clear();
        for &id in &self.used {
            self.local[id as usize] = self.lcap0.len() as u32;
            self.lcap0.push(sim.cap[id as usize]);
        }
        let nl = self.lcap0.len();
        self.on_start.clear();
        self.on_start.resize(nl + 1, 0);
        for &r in &self.cls_route {
            for &h in sim.route_hops(r) {
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
        for (c, &r) in self.cls_route.iter().enumerate() {
            for &h in sim.route_hops(r) {
                let l = self.local[h as usize] as usize;
                self.on_flow[(self.on_start[l] + self.lcnt[l]) as usize] = c as u32;
                self.lcnt[l] += 1;
            }
        }
        self.lcnt.iter_mut().for_each(|c| *c = 0);
    }

    /// Resets every class's bytes left, data start (its route's latency),
    /// rate and state, and its end (unknown, except a zero-byte class,
    /// which ends as soon as it starts). `true` if some class copies data
    /// locally (bytes on a route of no link), which keeps the step one
    /// group.
    fn reset_flows(&mut self, sim: &Fast, key: &[Class]) -> bool {
        let (m, nl) = (self.cls_first.len(), self.lcap0.len());
        self.rem.clear();
        self.from.clear();
        self.rate.clear();
        self.rate.resize(m, 0.0);
        self.state.clear();
        self.state.resize(m, 0);
        self.lcap.clear();
        self.lcap.resize(nl, 0.0);
        self.cls_end.clear();
        self.cls_end.resize(m, f64::NAN);
        let mut local_data = false;
        for (c, cl) in key.iter().enumerate() {
            let k = &cl.key;
            let from = sim.lat(k.route as usize);
            self.rem.push(k.bytes as f64);
            self.from.push(from);
            if k.bytes == 0 {
                self.cls_end[c] = from;
            } else if sim.route_hops(k.route).is_empty() {
                local_data = true;
            }
        }
        local_data
    }

    /// Joins the links of every class's route in the union-find forest
    /// `parent` (over compact link ids), so that links sharing a flow end
    /// in one tree: max-min rates in one tree's flows depend on those
    /// flows alone.
    fn join_links(&mut self, sim: &Fast) {
        self.parent.clear();
        self.parent.extend(0..self.lcap0.len() as u32);
        for &r in &self.cls_route {
            let hops = sim.route_hops(r);
            if let Some((&h0, rest)) = hops.split_first() {
                let a = self.local[h0 as usize];
                for &h in rest {
                    let b = self.local[h as usize];
                    let (ra, rb) = (find(&mut self.parent, a), find(&mut self.parent, b));
                    if ra != rb {
                        self.parent[ra.max(rb) as usize] = ra.min(rb);
                    }
                }
            }
        }
    }

    /// Numbers the groups in order of their first class (`group_of` per
    /// root link) and records each class's group in `flow_group` (`NONE`
    /// for a class with no bytes or no link: nothing to share); returns
    /// the number of groups. Numbering by first class keeps the groups,
    /// and so the event loops, in class order.
    fn number_groups(&mut self, sim: &Fast, key: &[Class]) -> u32 {
        self.group_of.clear();
        self.group_of.resize(self.lcap0.len(), NONE);
        self.flow_group.clear();
        let mut groups = 0u32;
        for cl in key {
            let k = &cl.key;
            let g = match sim.route_hops(k.route).first() {
                Some(&h) if k.bytes > 0 => {
                    let root = find(&mut self.parent, self.local[h as usize]) as usize;
                    if self.group_of[root] == NONE {
                        self.group_of[root] = groups;
                        groups += 1;
                    }
                    self.group_of[root]
                }
                _ => NONE,
            };
            self.flow_group.push(g);
        }
        groups
    }

    /// Lists each of the `groups` groups' classes, in class order, as CSR
    /// (`group_start` / `group_flow`), so each group's loop reads its own
    /// classes only.
    fn fill_groups(&mut self, groups: u32) {
        self.group_start.resize(groups as usize + 1, 0);
        for &g in &self.flow_group {
            if g != NONE {
                self.group_start[g as usize + 1] += 1;
            }
        }
        for g in 0..groups as usize {
            self.group_start[g + 1] += self.group_start[g];
        }
        self.group_flow
            .resize(self.group_start[groups as usize] as usize, 0);
        self.group_fill.clear();
        self.group_fill
            .extend_from_slice(&self.group_start[..groups as usize]);
        for (c, &g) in self.flow_group.iter().enumerate() {
            if g != NONE {
                let at = &mut self.group_fill[g as usize];
                self.group_flow[*at as usize] = c as u32;
                *at += 1;
            }
        }
    }

    /// Times every group: a class alone on its links directly
    /// ([`StepSim::alone`]: hier-nhr's level1 shifts are 1 024 such groups
    /// a step at 1024 ranks), any other group by its own event loop over
    /// its classes with bytes left.
    fn run_groups(&mut self, sim: &Fast) {
        for g in 0..self.group_start.len().saturating_sub(1) {
            let (a, b) = (
                self.group_start[g] as usize,
                self.group_start[g + 1] as usize,
            );
            if b - a == 1 {
                let c = self.group_flow[a] as usize;
                if let Some(end) = self.alone(sim, c) {
                    self.cls_end[c] = end;
                    continue;
                }
            }
            self.pending.clear();
            for j in a..b {
                let c = self.group_flow[j];
                if self.rem[c as usize] > 0.0 {
                    self.pending.push(c);
                }
            }
            self.events(sim);
        }
    }

    /// The end of class `c` when it is the only class on its links, as
    /// [`StepSim::events`] computes it for a group of that one class, to
    /// the bit: it starts at its route's latency, and its `w` flows are
    /// frozen at once at the share `capacity / w` of the first of its links
    /// (in route order) within [`LEVEL_TOL`] of the smallest, then run to
    /// the end. `None` (use the event loop) if it has no bytes left or its
    /// route crosses a link direction twice.
    fn alone(&self, sim: &Fast, c: usize) -> Option<f64> {
        let hops = sim.route_hops(self.cls_route[c]);
        if self.rem[c] <= 0.0 || hops.is_empty() {
            return None;
        }
        if hops.iter().enumerate().any(|(i, h)| hops[..i].contains(h)) {
            return None;
        }
        let w = self.cls_w[c] as f64;
        let cur = |h: &u32| self.lcap0[self.local[*h as usize] as usize] / w;
        let share = hops.iter().map(cur).fold(f64::INFINITY, f64::min);
        let level = share + share.abs() * LEVEL_TOL;
        let rate = hops.iter().map(cur).find(|&x| x <= level)?;
        Some(self.from[c] + self.rem[c] / rate)
    }

    /// The event loop of one group of flow classes (`pending`, in class
    /// order): max-min fair rates by levels, recomputed at every start and
    /// finish of one of them; a class of `w` transfers is `w` flows.
    /// Fills their `cls_end`.
    fn events(&mut self, sim: &Fast) {
        let mut now = f64::INFINITY;
        for &i in &self.pending {
            now = now.min(self.from[i as usize]);
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
            // Progressive filling over the running flows, by levels; only
            // the links they cross are reset and read.
            self.live_links.clear();
            for &i in &self.running {
                self.state[i as usize] = 1;
                let w = self.cls_w[i as usize];
                for &h in sim.route_hops(self.cls_route[i as usize]) {
                    let l = self.local[h as usize] as usize;
                    if self.lcnt[l] == 0 {
                        self.live_links.push(l as u32);
                        self.lcap[l] = self.lcap0[l];
                    }
                    self.lcnt[l] += w;
                }
            }
            self.touched.clear();
            self.touched.extend_from_slice(&self.live_links);
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
                        let w = self.cls_w[i];
                        for &h in sim.route_hops(self.cls_route[i]) {
                            let l2 = self.local[h as usize] as usize;
                            self.lcap[l2] -= cur * w as f64;
                            self.lcnt[l2] -= w;
                        }
                    }
                }
                let lcnt = &self.lcnt;
                self.live_links.retain(|&l| lcnt[l as usize] > 0);
                if !froze {
                    break;
                }
            }
            for &l in &self.touched {
                self.lcnt[l as usize] = 0;
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
                    self.cls_end[i as usize] = now;
                }
                self.running.clear();
                break;
            }
            let dt = next - now;
            let tol = 1e-12 * next.abs().max(1.0);
            let (rem, rate, end) = (&mut self.rem, &self.rate, &mut self.cls_end);
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
    }
}

/// The root of `x` in the union-find forest `parent` (path halving).
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[parent[x as usize] as usize];
        parent[x as usize] = p;
        x = p;
    }
    x
}
