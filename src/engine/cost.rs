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
//!   `S` bytes runs as `ceil(S / L)` back-to-back loops of at most `L`
//!   bytes (whole elements), each a full run of the schedule; `L` is the
//!   buffer, or what HCCL's executor of the algorithm fits in it
//!   ([`loop_capacity`]).
//!
//! With one flow per link direction this reduces to `α + bytes / B` per
//! transfer and equals the closed forms of Thakur, Rabenseifner & Gropp
//! (2005) and HCCL's `Mesh.md` exactly ([`closed_form_us`]; tests assert
//! it). With `k` equal flows on one link direction each ends after
//! `α + k·bytes / B`.
//!
//! Reported like nccl-tests (`doc/PERFORMANCE.md`): `algbw = S / t` in GB/s
//! (1e9 bytes), `busbw = algbw × factor` ([`Primitive::busbw_factor`]).

use super::algorithm::{Algorithm, CostTerms};
use super::collective::Primitive;
use super::dtype::DType;
use super::schedule::{Schedule, Step};
use super::topology::{Route, Topology, TopologyError};
use serde::{Deserialize, Serialize};

mod fast;
#[doc(hidden)]
pub mod reference;
mod sliced;
#[doc(hidden)]
pub use sliced::{
    choose as choose_slices, nccl_slice_bytes, unsliced_by_rule, SliceCap, SliceRule, SliceWhy,
    Slices, Slicing, MAX_SLICES, NCCL_STEP_BYTES, SLICE_BUDGET, SLICE_WORK_BUDGET,
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

/// The load of one link direction over one buffer loop
/// ([`Timeline::link_loads`]): what the topology drawing colours a link by
/// before the first step, and all a model-only plan's drawing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkLoad {
    /// Most flows that crossed it in one step.
    pub flows: usize,
    /// Time it carried data, summed over the loop's steps, µs.
    pub busy_us: f64,
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

impl Timeline {
    /// Per link of a topology with `links` links, `[a -> b, b -> a]`: the
    /// most flows of any one step and the busy time summed over the
    /// recorded loop's [`Timeline::link_busy`] (all zero when it was not
    /// recorded, [`Record::Steps`]).
    pub fn link_loads(&self, links: usize) -> Vec<[LinkLoad; 2]> {
        let mut v = vec![[LinkLoad::default(); 2]; links];
        for b in &self.link_busy {
            if let Some(l) = v.get_mut(b.link) {
                let d = &mut l[usize::from(!b.forward)];
                d.flows = d.flows.max(b.flows);
                d.busy_us += b.end_us - b.start_us;
            }
        }
        v
    }

    /// The timeline of one buffer loop as a simulator records it: its
    /// steps, transfers and link intervals, and the routes when recorded
    /// (`None`: not asked for). `loops` and `loop_bytes` are set by the
    /// caller that knows the message.
    pub(crate) fn of_loop(
        steps: Vec<StepTiming>,
        transfers: Vec<TransferTiming>,
        link_busy: Vec<LinkBusy>,
        routes: Option<Vec<Route>>,
    ) -> Timeline {
        Timeline {
            steps,
            transfers,
            routes: routes.unwrap_or_default(),
            link_busy,
            loops: 1,
            loop_bytes: 0,
        }
    }
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

impl Estimate {
    /// The estimate of a collective of `bytes` bytes that takes `time_us`
    /// µs, with nccl-tests' bandwidths: algbw `S / t` GB/s (0 for a Barrier,
    /// which moves no payload, and for `t = 0`) and busbw `algbw ×`
    /// [`Primitive::busbw_factor`] (nccl-tests' `doc/PERFORMANCE.md`).
    pub fn new(
        bytes: u64,
        time_us: f64,
        primitive: Primitive,
        ranks: usize,
        timeline: Timeline,
        slicing: Slicing,
    ) -> Estimate {
        let algbw_gbps = if time_us > 0.0 && primitive != Primitive::Barrier {
            bytes as f64 / (time_us * 1e3)
        } else {
            0.0
        };
        Estimate {
            bytes,
            time_us,
            algbw_gbps,
            busbw_gbps: algbw_gbps * primitive.busbw_factor(ranks),
            timeline,
            slicing,
        }
    }
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

/// How much of the [`Timeline`] an estimate records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Record {
    /// Every step, transfer, route and link interval (what the page draws
    /// and animates).
    #[default]
    Full,
    /// The steps only ([`Timeline::transfers`], `routes` and `link_busy`
    /// left empty): what a total needs, with no memory per transfer
    /// (`cclsim predict`, the ranking, sweeps).
    Steps,
}

/// [`estimate`] with every transfer cut into slices that pipeline through
/// the steps (`slices`: `auto` = like the real library, or a count; the
/// rule, the caps and the pipelined model are in [`sliced`]'s doc,
/// `src/engine/cost/sliced.rs`). One slice is exactly [`estimate`]; the
/// count used and why are in [`Estimate::slicing`]. With buffer loops each
/// loop is sliced. Records the whole [`Timeline`] ([`Record::Full`]).
///
/// Errors: as [`estimate`].
pub fn estimate_sliced(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
) -> Result<Estimate, TopologyError> {
    estimate_recorded(schedule, topo, bytes, dtype, slices, Record::Full)
}

/// [`estimate_sliced`], recording as much of the [`Timeline`] as `record`
/// asks (times are the same either way). Unsliced (`k = 1`) loops run on
/// the fast step-synchronous simulator ([`fast`]: flat per-link arrays,
/// routes resolved once per rank pair, a step identical to the previous
/// one reused, max-min fair rates filled level by level); sliced ones on
/// the pipelined simulator ([`sliced`]). Both equal
/// [`estimate_sliced_reference`] to 1e-9 relative
/// (`tests/sim_reference.rs`).
///
/// Errors: as [`estimate`].
pub fn estimate_recorded(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
    record: Record,
) -> Result<Estimate, TopologyError> {
    topo.check_ranks(schedule.ranks)?;
    topo.validate()?;
    let full = record == Record::Full;
    let es = dtype.size_bytes() as u64;
    let elems = bytes / es;
    // Buffer loops: whole elements per loop.
    let (loops, loop_elems) = loops_of(schedule, topo, bytes, es);
    let mut slicing = slicing(schedule, topo, bytes, dtype, slices);
    // The last step ends last when steps are synchronous; sliced steps
    // overlap, so take the latest end.
    let total = |t: &Timeline| t.steps.iter().map(|s| s.end_us).fold(0.0, f64::max);
    let sliced_run = if slicing.slices > 1 {
        let sim = reference::Simulator::new(schedule, topo)?;
        let (k, w) = (slicing.slices as usize, slicing.window as usize);
        let run = |e: u64, rec: bool| sim.run_sliced(e, es, k, w, slicing.slice_elems, rec);
        let first = run(loop_elems, full);
        let last = match &first {
            Some(_) => last_loop(elems, loops, loop_elems).map(|e| run(e, false)),
            None => None,
        };
        match (first, last) {
            (Some(first), None) => Some((first, None)),
            (Some(first), Some(Some(last))) => Some((first, Some(total(&last)))),
            _ => {
                sliced::over_budget(&mut slicing);
                None
            }
        }
    } else {
        None
    };
    let (mut timeline, last_us) = if let Some(run) = sliced_run {
        run
    } else if !topo.impairment.is_timed() {
        let mut run =
            Streaming::with_slicing(schedule, topo, bytes, es, slicing.clone(), record, None);
        for st in &schedule.steps {
            run.step(st)?;
        }
        // No budget: every step is simulated.
        return Ok(run.estimate());
    } else {
        // Slow or late devices (`engine::degrade`): the reference
        // simulator, which models them (a late start breaks the fast
        // path's reuse of a step shifted in time).
        let mut sim = reference::Simulator::new(schedule, topo)?;
        let first = sim.run(loop_elems, es, full)?;
        let last = match last_loop(elems, loops, loop_elems) {
            Some(e) => Some(total(&sim.run(e, es, false)?)),
            None => None,
        };
        (first, last)
    };
    let first_us = total(&timeline);
    let mut time_us = first_us;
    if loops > 1 {
        time_us = (loops - 1) as f64 * first_us + last_us.unwrap_or(first_us);
    }
    timeline.loops = loops;
    timeline.loop_bytes = loop_elems * es;
    Ok(Estimate::new(
        bytes,
        time_us,
        schedule.primitive,
        schedule.ranks,
        timeline,
        slicing,
    ))
}

/// The reference of [`estimate_sliced`]: the same model and result,
/// simulated the straightforward way ([`reference`]'s module doc), always
/// recording the whole [`Timeline`]. Arguments (`bytes` in bytes, times in
/// µs), result and errors ([`TopologyError`]) as
/// [`estimate_sliced`].
#[doc(hidden)]
pub fn estimate_sliced_reference(
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
    let (loops, loop_elems) = loops_of(schedule, topo, bytes, es);
    let mut sim = reference::Simulator::new(schedule, topo)?;
    let mut slicing = sliced::choose(schedule, topo, loop_elems, es, slices);
    let (k, w) = (slicing.slices as usize, slicing.window as usize);
    // The last step ends last when steps are synchronous; sliced steps
    // overlap, so take the latest end.
    let total = |t: &Timeline| t.steps.iter().map(|s| s.end_us).fold(0.0, f64::max);
    let last_elems = elems - (loops - 1) * loop_elems;
    let repeats = loops == 1 || last_elems == loop_elems;
    // Sliced: both loops within the work budget, or neither sliced.
    let mut sliced_run = None;
    if k > 1 {
        let first = sim.run_sliced(loop_elems, es, k, w, slicing.slice_elems, true);
        let last = match (&first, repeats) {
            (Some(_), false) => {
                Some(sim.run_sliced(last_elems, es, k, w, slicing.slice_elems, false))
            }
            _ => None,
        };
        sliced_run = match (first, last) {
            (Some(first), None) => Some((first, None)),
            (Some(first), Some(Some(last))) => Some((first, Some(total(&last)))),
            _ => {
                sliced::over_budget(&mut slicing);
                None
            }
        };
    }
    let (mut timeline, sliced_last) = match sliced_run {
        Some((t, last)) => (t, last),
        None => (sim.run(loop_elems, es, true)?, None),
    };
    let first_us = total(&timeline);
    let mut time_us = first_us;
    if loops > 1 {
        let last_us = if last_elems == loop_elems {
            first_us
        } else if let Some(l) = sliced_last {
            l
        } else {
            total(&sim.run(last_elems, es, false)?)
        };
        time_us = (loops - 1) as f64 * first_us + last_us;
    }
    timeline.loops = loops;
    timeline.loop_bytes = loop_elems * es;
    Ok(Estimate::new(
        bytes,
        time_us,
        schedule.primitive,
        schedule.ranks,
        timeline,
        slicing,
    ))
}

/// The most a streamed simulation ([`Streaming`]) simulates event by
/// event before it gives up: `transfers` over the steps it simulates (a
/// step whose transfers are those of the previous one, to the model, is
/// reused and not counted) and `step_transfers` in any one of them. The
/// walk over every transfer to recognise repeated steps is not counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimBudget {
    /// Transfers of the simulated steps of one loop (the larger of the
    /// first and the last loop).
    pub transfers: usize,
    /// Transfers of the widest simulated step.
    pub step_transfers: usize,
}

/// The fast step-synchronous simulation ([`fast`]) fed one step at a time
/// ([`Streaming::step`]), so that a schedule never has to be held whole
/// (a streamed algorithm, [`super::algorithm::Streamed`]): its memory
/// grows with one step and the distinct routes, its time with the walk
/// over the transfers plus the steps that differ from their predecessor.
/// The first buffer loop and the last (when it differs) are simulated in
/// the same pass. Equal to [`estimate_recorded`] (which runs it over a
/// built schedule) for the same steps.
pub struct Streaming<'a> {
    header: &'a Schedule,
    fast: fast::Fast<'a>,
    first: fast::Run<'a>,
    last: Option<fast::Run<'a>>,
    bytes: u64,
    loops: u64,
    loop_bytes: u64,
    slicing: Slicing,
    budget: Option<SimBudget>,
    over: bool,
}

impl<'a> Streaming<'a> {
    /// A streamed simulation of the schedule `header` describes (its
    /// `steps` are not read: they come through [`Streaming::step`]) for
    /// `bytes` of `dtype` on `topo`, recording as `record` asks, giving up
    /// beyond `budget` (`None`: no limit). `Ok(None)` where the unsliced
    /// fast path does not apply without seeing every step: `slices` asks
    /// for (or `auto` may choose) more than one slice, or devices are slow
    /// or late ([`Topology::impairment`]); then simulate the whole
    /// schedule ([`estimate_recorded`]).
    ///
    /// Errors: [`TopologyError`] if the ranks do not fit or a link is
    /// malformed.
    pub fn new(
        header: &'a Schedule,
        topo: &'a Topology,
        bytes: u64,
        dtype: DType,
        slices: Slices,
        record: Record,
        budget: Option<SimBudget>,
    ) -> Result<Option<Self>, TopologyError> {
        topo.check_ranks(header.ranks)?;
        topo.validate()?;
        if topo.impairment.is_timed() || !sliced::unsliced_by_rule(topo, slices) {
            return Ok(None);
        }
        let es = dtype.size_bytes() as u64;
        let (_, loop_elems) = loops_of(header, topo, bytes, es);
        let slicing = sliced::choose(header, topo, loop_elems, es, slices);
        Ok(Some(Streaming::with_slicing(
            header, topo, bytes, es, slicing, record, budget,
        )))
    }

    fn with_slicing(
        header: &'a Schedule,
        topo: &'a Topology,
        bytes: u64,
        es: u64,
        slicing: Slicing,
        record: Record,
        budget: Option<SimBudget>,
    ) -> Self {
        let elems = bytes / es;
        let (loops, loop_elems) = loops_of(header, topo, bytes, es);
        let fast = fast::Fast::new(header.ranks, topo, record == Record::Full);
        let first = fast::Run::new(&fast, header, loop_elems, es, record == Record::Full);
        let last = last_loop(elems, loops, loop_elems)
            .map(|e| fast::Run::new(&fast, header, e, es, false));
        Streaming {
            header,
            fast,
            first,
            last,
            bytes,
            loops,
            loop_bytes: loop_elems * es,
            slicing,
            budget,
            over: false,
        }
    }

    /// Simulates the next step in every loop. `Ok(false)` once the budget
    /// is exceeded (the remaining steps need not be fed).
    ///
    /// Errors: [`TopologyError`] if two communicating ranks have no route.
    pub fn step(&mut self, step: &Step) -> Result<bool, TopologyError> {
        if self.over {
            return Ok(false);
        }
        let limit = self.budget.map(|b| (b.transfers, b.step_transfers));
        if limit.is_some_and(|(_, one)| step.transfers.len() > one) {
            // Wider than any step it may simulate: it would have to be
            // simulated (a step equal to its predecessor was simulated
            // once), so stop before making its keys.
            self.over = true;
            return Ok(false);
        }
        let mut ok = self.first.step(&mut self.fast, step, limit)?;
        if let (true, Some(last)) = (ok, &mut self.last) {
            ok = last.step(&mut self.fast, step, limit)?;
        }
        self.over = !ok;
        Ok(ok)
    }

    /// Simulates the next step, which the source says repeats the
    /// previous step's traffic ([`super::schedule::Next::Repeat`]): a loop whose chunks
    /// all have one size reuses the previous step's times without making
    /// it (a ring phase costs one simulated step, not `n - 1` made and
    /// compared); otherwise `make` makes it once and it is simulated as
    /// [`Streaming::step`] does. `Ok(false)` once the budget is exceeded.
    ///
    /// Errors: as [`Streaming::step`].
    pub fn repeat(&mut self, make: &mut dyn FnMut() -> Step) -> Result<bool, TopologyError> {
        if self.over {
            return Ok(false);
        }
        let limit = self.budget.map(|b| (b.transfers, b.step_transfers));
        let mut made: Option<Step> = None;
        let mut ok = true;
        for run in std::iter::once(&mut self.first).chain(self.last.as_mut()) {
            if run.repeat(&self.fast) {
                continue;
            }
            let st = made.get_or_insert_with(&mut *make);
            if limit.is_some_and(|(_, one)| st.transfers.len() > one) {
                ok = false;
                break;
            }
            ok = run.step(&mut self.fast, st, limit)?;
            if !ok {
                break;
            }
        }
        self.over = !ok;
        Ok(ok)
    }

    /// Would the next step, of `width` transfers, be simulated? `false`
    /// once the budget is exceeded or when the step is wider than the
    /// budget allows one step ([`Streaming::step`] would give up on it).
    pub fn takes(&self, width: usize) -> bool {
        !self.over && self.budget.is_none_or(|b| width <= b.step_transfers)
    }

    /// Gives up: the estimate is the bound's (a step too wide to simulate
    /// came, and was not made: [`super::schedule::Next::Exchange`]).
    pub fn give_up(&mut self) {
        self.over = true;
    }

    /// The estimate, or `None` if the budget was exceeded.
    pub fn finish(self) -> Option<Estimate> {
        (!self.over).then(|| self.estimate())
    }

    /// The estimate of the steps fed, budget or not.
    fn estimate(self) -> Estimate {
        let total = |t: &Timeline| t.steps.iter().map(|s| s.end_us).fold(0.0, f64::max);
        let mut timeline = self.first.finish(&self.fast);
        let first_us = total(&timeline);
        let last_us = self.last.map(|r| total(&r.finish(&self.fast)));
        let mut time_us = first_us;
        if self.loops > 1 {
            time_us = (self.loops - 1) as f64 * first_us + last_us.unwrap_or(first_us);
        }
        timeline.loops = self.loops;
        timeline.loop_bytes = self.loop_bytes;
        Estimate::new(
            self.bytes,
            time_us,
            self.header.primitive,
            self.header.ranks,
            timeline,
            self.slicing,
        )
    }
}

/// The slice count [`estimate_recorded`] simulates `schedule` with for a
/// message of `bytes` bytes of `dtype` on `topo` (before the work budget
/// may cap it to 1: [`sliced::over_budget`]): `slices` resolved by
/// [`sliced::choose`] for one buffer loop. Cheap (one pass over the
/// transfers where `auto` looks at their sizes, none where the rule
/// decides alone); what the page asks before it simulates on its main
/// thread (`Plan::on_page`).
pub fn slicing(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
    slices: Slices,
) -> Slicing {
    let es = dtype.size_bytes() as u64;
    let (_, loop_elems) = loops_of(schedule, topo, bytes, es);
    sliced::choose(schedule, topo, loop_elems, es, slices)
}

/// Buffer loops of a message of `bytes` bytes of `es`-byte elements on
/// `topo`, and the elements of each full loop (whole elements per loop).
fn loops_of(schedule: &Schedule, topo: &Topology, bytes: u64, es: u64) -> (u64, u64) {
    let elems = bytes / es;
    match loop_capacity(schedule, topo) {
        Some(buf) if bytes > buf && buf >= es => {
            let per = buf / es;
            (elems.div_ceil(per), per)
        }
        _ => (1, elems),
    }
}

/// Bytes one buffer loop of `schedule` holds on `topo` (`None`: no
/// buffer, one loop): HCCL's executors fit one CCL buffer a loop, its
/// pipeline executors one buffer per rank
/// ([`super::algorithm::pipeline::loop_bytes`]).
pub fn loop_capacity(schedule: &Schedule, topo: &Topology) -> Option<u64> {
    topo.ccl_buffer_bytes.map(|buf| {
        super::algorithm::pipeline::loop_bytes(
            &schedule.algorithm,
            schedule.primitive,
            schedule.ranks,
            buf,
        )
    })
}

/// Elements of the last buffer loop when it differs from the others.
fn last_loop(elems: u64, loops: u64, loop_elems: u64) -> Option<u64> {
    (loops > 1)
        .then(|| elems - (loops - 1) * loop_elems)
        .filter(|&e| e != loop_elems)
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
/// chunks. Each formula lives with its algorithm
/// (`algorithm/<name>.rs`, `closed_form`, with its source:
/// `docs/hardware-and-algorithms.md`; Thakur, Rabenseifner & Gropp 2005;
/// HCCL `coll_algo_intro/*.md`); this is [`super::algorithm::closed_form`]
/// over [`CostTerms::new`].
pub fn closed_form(
    algorithm: Algorithm,
    primitive: Primitive,
    n: usize,
    s: f64,
    alpha_us: f64,
    bw_gbps: f64,
    reduce_gbps: Option<f64>,
) -> Option<f64> {
    let t = CostTerms::new(n, s, alpha_us, bw_gbps, reduce_gbps);
    super::algorithm::closed_form(algorithm, primitive, &t)
}
