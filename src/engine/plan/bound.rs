//! The per-step bottleneck bound: an estimate that costs one walk over the
//! transfers, for schedules too large to simulate event by event.

use crate::engine::collective::Primitive;
use crate::engine::cost::{Estimate, Timeline};
use crate::engine::dtype::DType;
use crate::engine::schedule::{Schedule, Step};
use crate::engine::topology::Topology;

/// The per-step bottleneck bound of a schedule, precomputed once so that
/// any message size costs O(steps): for each step, the largest route
/// latency of its transfers plus the most bytes any one link direction
/// carries in it divided by that link's bandwidth; steps add up; HCCL
/// buffer loops repeat it. Equals the closed forms on uncontended
/// topologies and the simulation whenever the flows of a step start
/// together and the busiest link stays busiest (max-min fair sharing
/// cannot beat it). Routes: the direct link, else up the sender's switch
/// port and down the receiver's (a non-blocking switch), else
/// [`Topology::route`].
#[derive(Clone, Debug)]
pub struct Bound {
    /// Per step: (largest route α µs, busiest link direction's µs per chunk byte).
    steps: Vec<(f64, f64)>,
    /// Busiest link direction over the collective, in chunks.
    busiest_chunks: f64,
    chunks: usize,
    primitive: Primitive,
    ranks: usize,
    buffer: Option<u64>,
}

/// Widest step whose transfers the walk keeps to recognise the next step
/// as equal (24 bytes a transfer).
const LAST_STEP_CACHE: usize = 1 << 16;

/// The bound's walk, fed one step at a time ([`BoundWalk::step`]): what
/// [`Bound::of`] does over a built schedule, and the plan over a streamed
/// one ([`crate::engine::algorithm::Streamed`]) in the same pass as the
/// simulation. Memory: per link direction, not per transfer.
pub struct BoundWalk<'t> {
    topo: &'t Topology,
    /// Per node, the devices it has a direct link to, each once, with the
    /// link direction leaving this node and the link's α (a pair joined
    /// by several links uses the last one).
    near: Vec<Vec<Near>>,
    /// Per node, the smallest and largest device of `near` (a transfer to
    /// a device outside them skips the scan: a server's NPUs are numbered
    /// together).
    near_span: Vec<(usize, usize)>,
    /// Per device, its first link to a switch.
    port: Vec<Option<Port>>,
    load: Vec<f64>,
    total: Vec<f64>,
    touched: Vec<usize>,
    hops: Vec<usize>,
    steps: Vec<(f64, f64)>,
    /// The last step's transfers as `(src, dst, count)` and its load per
    /// link direction: a step equal to it (every ring step) adds the same
    /// loads without routing a transfer again.
    last: Vec<(usize, usize, usize)>,
    last_load: Vec<(usize, f64)>,
    /// Steps equal to the last one walked whose `last_load` is not yet in
    /// `total` (added once, multiplied, when the next different step or
    /// the end comes: a ring phase costs O(links), not O(links × steps)).
    pending: usize,
}

/// A direct neighbour of a node ([`BoundWalk`]).
#[derive(Clone, Copy, Debug)]
struct Near {
    node: usize,
    /// The link direction from the node to `node`.
    dir: usize,
    latency_us: f64,
}

/// A device's port into a switch ([`BoundWalk`]).
#[derive(Clone, Copy, Debug)]
struct Port {
    switch: usize,
    /// The direction device → switch.
    up: usize,
    /// The direction switch → device.
    down: usize,
    latency_us: f64,
}

impl<'t> BoundWalk<'t> {
    /// A walk on `topo`, before any step.
    pub fn new(topo: &'t Topology) -> Self {
        let nodes = topo.nodes();
        let mut near: Vec<Vec<Near>> = vec![Vec::new(); nodes];
        let mut port: Vec<Option<Port>> = vec![None; topo.devices.len()];
        // Direction `2·link + 1` runs a → b, `2·link` b → a.
        for (i, l) in topo.links.iter().enumerate() {
            for (from, to, dir) in [(l.a, l.b, 2 * i + 1), (l.b, l.a, 2 * i)] {
                // Transfers run between ranks, i.e. devices: a switch's
                // list is never read, and listing its thousands of ports
                // (8 192 at 1 024 servers) with a scan per entry was
                // quadratic: 137 ms a walk for 64 ranks on 910b-1024x8.
                if (from == to && dir % 2 == 0) || !topo.is_device(to) || !topo.is_device(from) {
                    continue;
                }
                if let Some(v) = near.get_mut(from) {
                    let n = Near {
                        node: to,
                        dir,
                        latency_us: l.latency_us,
                    };
                    match v.iter_mut().find(|x| x.node == to) {
                        Some(x) => *x = n,
                        None => v.push(n),
                    }
                }
            }
            for (d, other, up, down) in [(l.a, l.b, 2 * i + 1, 2 * i), (l.b, l.a, 2 * i, 2 * i + 1)]
            {
                if topo.is_device(d) && !topo.is_device(other) && port[d].is_none() {
                    port[d] = Some(Port {
                        switch: other,
                        up,
                        down,
                        latency_us: l.latency_us,
                    });
                }
            }
        }
        let near_span = near
            .iter()
            .map(|v| {
                v.iter().fold((usize::MAX, 0), |(lo, hi), x| {
                    (lo.min(x.node), hi.max(x.node))
                })
            })
            .collect();
        BoundWalk {
            topo,
            near,
            near_span,
            port,
            load: vec![0.0f64; 2 * topo.links.len()],
            total: vec![0.0f64; 2 * topo.links.len()],
            touched: Vec::new(),
            hops: Vec::with_capacity(4),
            steps: Vec::new(),
            last: Vec::new(),
            last_load: Vec::new(),
            pending: 0,
        }
    }

    /// Adds the next step, which the source says repeats the previous
    /// step's traffic ([`crate::engine::schedule::Next::Repeat`]: same
    /// `src`, `dst` and `count` per transfer), without making it: the
    /// previous step's α, per-byte time and loads. `make` is called only
    /// if there is no previous step.
    ///
    /// Errors: as [`BoundWalk::step`].
    pub fn repeat(&mut self, make: &mut dyn FnMut() -> Step) -> Result<(), String> {
        match self.steps.last() {
            Some(&prev) => {
                self.pending += 1;
                self.steps.push(prev);
                Ok(())
            }
            None => self.step(&make()),
        }
    }

    /// Adds the loads of the pending repeats of the last step to `total`.
    fn flush(&mut self) {
        if self.pending > 0 {
            let times = self.pending as f64;
            for &(h, l) in &self.last_load {
                self.total[h] += l * times;
            }
            self.pending = 0;
        }
    }

    /// Adds the next step: its largest route α and its busiest link
    /// direction's µs per chunk byte.
    ///
    /// Errors: a sentence if two communicating ranks have no route.
    pub fn step(&mut self, step: &Step) -> Result<(), String> {
        if let (Some(&prev), false) = (self.steps.last(), self.last.is_empty()) {
            let same = step.transfers.len() == self.last.len()
                && step
                    .transfers
                    .iter()
                    .zip(&self.last)
                    .all(|(t, &(a, b, c))| t.src == a && t.dst == b && t.count == c);
            if same {
                self.pending += 1;
                self.steps.push(prev);
                return Ok(());
            }
        }
        self.flush();
        self.last.clear();
        if step.transfers.len() <= LAST_STEP_CACHE {
            self.last
                .extend(step.transfers.iter().map(|t| (t.src, t.dst, t.count)));
        }
        self.last_load.clear();
        let mut alpha = 0.0f64;
        // The pair `hops` routes: the runs of one message (NHR's strided
        // blocks, a wrapped range) follow one another.
        let mut pair = (usize::MAX, usize::MAX);
        for t in step.transfers.iter().filter(|t| t.src != t.dst) {
            // Local copies and reduces (src == dst) cross no link.
            if (t.src, t.dst) != pair {
                pair = (t.src, t.dst);
                alpha = alpha.max(self.route_pair(t.src, t.dst)?);
            }
            self.load_hops(t.count as f64);
        }
        self.finish_step(alpha);
        Ok(())
    }

    /// Routes `src → dst` into `hops` and returns the route's α (µs): the
    /// direct link, else up the sender's switch port and down the
    /// receiver's (a non-blocking switch), else [`Topology::route`].
    ///
    /// Errors: a sentence if the two have no route.
    fn route_pair(&mut self, src: usize, dst: usize) -> Result<f64, String> {
        let hops = &mut self.hops;
        hops.clear();
        let a = match self.near_span.get(src) {
            Some(&(lo, hi)) if (lo..=hi).contains(&dst) => {
                self.near[src].iter().find(|x| x.node == dst).map(|x| {
                    hops.push(x.dir);
                    x.latency_us
                })
            }
            _ => None,
        };
        let a = a.or_else(|| {
            match (
                self.port.get(src).copied().flatten(),
                self.port.get(dst).copied().flatten(),
            ) {
                (Some(u), Some(v)) if u.switch == v.switch => {
                    hops.push(u.up);
                    hops.push(v.down);
                    Some(u.latency_us + v.latency_us)
                }
                _ => None,
            }
        });
        Ok(match a {
            Some(a) => a,
            None => {
                let topo = self.topo;
                let r = topo.route(src, dst).map_err(|e| e.to_string())?;
                hops.extend(r.hops.iter().map(|h| 2 * h.link + usize::from(h.forward)));
                hops.iter().map(|h| topo.links[h / 2].latency_us).sum()
            }
        })
    }

    /// Adds `chunks` to the load of every link direction in `hops`.
    fn load_hops(&mut self, chunks: f64) {
        for &h in self.hops.iter() {
            if self.load[h] == 0.0 {
                self.touched.push(h);
            }
            self.load[h] += chunks;
        }
    }

    /// Adds the next step, a shift among ranks `0..ranks`
    /// ([`crate::engine::schedule::Next::Shift`]: rank `r` sends `count`
    /// chunks in all to `(r + shift) % ranks`), without making its
    /// transfers: one route per rank, each carrying `count` chunks. Equal,
    /// to the bit, to [`BoundWalk::step`] on the made step (its runs of
    /// integer chunk counts add exactly, in any order).
    ///
    /// Errors: as [`BoundWalk::step`].
    pub fn shift(&mut self, ranks: usize, shift: usize, count: usize) -> Result<(), String> {
        self.flush();
        self.last.clear();
        self.last_load.clear();
        let mut alpha = 0.0f64;
        if ranks > 0 && shift % ranks != 0 {
            for r in 0..ranks {
                alpha = alpha.max(self.route_pair(r, (r + shift) % ranks)?);
                self.load_hops(count as f64);
            }
        }
        self.finish_step(alpha);
        Ok(())
    }

    /// Adds the next step, a complete exchange among ranks `0..ranks`
    /// ([`crate::engine::schedule::Next::Exchange`]: one transfer of
    /// `count` chunks for every ordered pair of distinct ranks), without
    /// making its `ranks · (ranks - 1)` transfers where every pair's route
    /// is one the walk reads off the devices' links: the direct link,
    /// else up the sender's switch port and down the receiver's on one
    /// switch. Then a direct link carries `count` chunks, a device's port
    /// up `count` times the ranks it has no direct link to, and its port
    /// down as many (links join both ways); α is the largest route's.
    /// O(ranks · direct links + links). Equal, to the bit, to
    /// [`BoundWalk::step`] on the made step (integer chunk counts add
    /// exactly; maxima do not depend on order). A pair with any other
    /// route (a machine of several switches, a link down) makes the step
    /// and walks it. Returns whether it made the step.
    ///
    /// Errors: as [`BoundWalk::step`].
    pub fn exchange(
        &mut self,
        ranks: usize,
        count: usize,
        make: &mut dyn FnMut() -> Step,
    ) -> Result<bool, String> {
        // Per rank, its direct neighbours among the ranks (each once).
        fn among(near: &[Vec<Near>], s: usize, ranks: usize) -> impl Iterator<Item = &Near> {
            near.get(s)
                .into_iter()
                .flatten()
                .filter(move |x| x.node < ranks && x.node != s)
        }
        let near = std::mem::take(&mut self.near);
        let near_ranks = |s: usize| among(&near, s, ranks);
        // Ranks per switch port, and per switch the ranks on it by
        // falling port latency (α of a switch route is the largest one
        // among the receivers the sender has no direct link to).
        let mut on_switch: Vec<Vec<(f64, usize)>> = Vec::new();
        for r in 0..ranks {
            if let Some(Some(p)) = self.port.get(r) {
                if on_switch.len() <= p.switch {
                    on_switch.resize_with(p.switch + 1, Vec::new);
                }
                on_switch[p.switch].push((p.latency_us, r));
            }
        }
        for v in &mut on_switch {
            v.sort_by(|a, b| b.0.total_cmp(&a.0));
        }
        // Every pair routed as the walk would, else walk the made step.
        let mut direct = vec![0usize; ranks];
        let mut fast = true;
        for (s, d) in direct.iter_mut().enumerate() {
            *d = near_ranks(s).count();
            let rest = ranks - 1 - *d;
            if rest == 0 {
                continue;
            }
            // The ranks on s's switch, less s and its direct neighbours
            // there, must be all the rest.
            let switch_peers = match self.port.get(s).copied().flatten() {
                Some(u) => {
                    let here = on_switch.get(u.switch).map_or(0, Vec::len);
                    let near_here = near_ranks(s)
                        .filter(|x| {
                            matches!(self.port.get(x.node), Some(Some(p)) if p.switch == u.switch)
                        })
                        .count();
                    here - 1 - near_here
                }
                None => 0,
            };
            if switch_peers != rest {
                fast = false;
                break;
            }
        }
        if !fast {
            self.near = near;
            return self.step(&make()).map(|()| true);
        }
        self.flush();
        self.last.clear();
        self.last_load.clear();
        let c = count as f64;
        let (load, touched) = (&mut self.load, &mut self.touched);
        let mut add = |h: usize, x: f64| {
            if load[h] == 0.0 {
                touched.push(h);
            }
            load[h] += x;
        };
        let mut alpha = 0.0f64;
        for (s, &d) in direct.iter().enumerate() {
            for x in near_ranks(s) {
                add(x.dir, c);
                alpha = alpha.max(x.latency_us);
            }
            let rest = ranks - 1 - d;
            if rest == 0 {
                continue;
            }
            if let Some(u) = self.port.get(s).copied().flatten() {
                // `rest` transfers up s's port, and (links join both
                // ways) `rest` arrive down it.
                add(u.up, c * rest as f64);
                add(u.down, c * rest as f64);
                let farthest = on_switch[u.switch]
                    .iter()
                    .find(|&&(_, r)| r != s && !near_ranks(s).any(|x| x.node == r))
                    .map_or(0.0, |&(l, _)| l);
                alpha = alpha.max(u.latency_us + farthest);
            }
        }
        self.near = near;
        self.finish_step(alpha);
        Ok(false)
    }

    /// Closes a step whose loads are in `load` (listed in `touched`): its
    /// busiest link direction's µs per chunk byte, the loads into `total`
    /// and `last_load`, and the step with α `alpha`.
    fn finish_step(&mut self, alpha: f64) {
        let topo = self.topo;
        let mut per_byte = 0.0f64;
        for &h in self.touched.iter() {
            // A slow device sends at its speed factor; the bound
            // ignores late starts (`late`), which only the simulation
            // models.
            let l = &topo.links[h / 2];
            let from = if h % 2 == 1 { l.a } else { l.b };
            let bw = l.bandwidth_gbps * topo.impairment.speed_of(from);
            let load = self.load[h];
            per_byte = per_byte.max(load / (bw * 1e3));
            self.total[h] += load;
            self.last_load.push((h, load));
            self.load[h] = 0.0;
        }
        self.touched.clear();
        self.steps.push((alpha, per_byte));
    }

    /// The bound of the steps walked, for the schedule `header` describes.
    pub fn finish(mut self, header: &Schedule) -> Bound {
        self.flush();
        Bound {
            steps: self.steps,
            busiest_chunks: self.total.iter().copied().fold(0.0, f64::max),
            chunks: header.chunks.max(1),
            primitive: header.primitive,
            ranks: header.ranks,
            buffer: crate::engine::cost::loop_capacity(header, self.topo),
        }
    }
}

impl Bound {
    /// Walks every transfer of `schedule` once ([`BoundWalk`]).
    ///
    /// Errors: a sentence if two communicating ranks have no route.
    pub fn of(schedule: &Schedule, topo: &Topology) -> Result<Bound, String> {
        let mut walk = BoundWalk::new(topo);
        for step in &schedule.steps {
            walk.step(step)?;
        }
        Ok(walk.finish(schedule))
    }

    /// The estimate for `bytes` of `dtype` (no timeline), the sum of the
    /// steps' α (µs), and the busiest link direction's bytes.
    pub fn estimate(&self, bytes: u64, dtype: DType) -> (Estimate, f64, u64) {
        let es = dtype.size_bytes() as u64;
        let (loops, loop_bytes) = match self.buffer {
            Some(buf) if bytes > buf && buf >= es => {
                let per = buf - buf % es;
                (bytes.div_ceil(per), per)
            }
            _ => (1, bytes),
        };
        // The buffer is the message for most primitives, about twice it with
        // send and receive areas (AlltoAll, SendRecv), empty for Barrier.
        let buffer_bytes = self
            .primitive
            .buffer_elems_u64(self.ranks, loop_bytes / es.max(1)) as f64
            * es as f64;
        let chunk_bytes = buffer_bytes / self.chunks as f64;
        let alpha: f64 = self.steps.iter().map(|s| s.0).sum();
        let data: f64 = self.steps.iter().map(|s| s.1 * chunk_bytes).sum();
        let time_us = (alpha + data) * loops as f64;
        (
            Estimate::new(
                bytes,
                time_us,
                self.primitive,
                self.ranks,
                Timeline {
                    steps: Vec::new(),
                    transfers: Vec::new(),
                    routes: Vec::new(),
                    link_busy: Vec::new(),
                    loops,
                    loop_bytes,
                },
                // The bound is unsliced (schedules this large exceed the
                // slicing budget anyway, `cost::SLICE_BUDGET`).
                Default::default(),
            ),
            alpha * loops as f64,
            (self.busiest_chunks * chunk_bytes * loops as f64) as u64,
        )
    }
}
