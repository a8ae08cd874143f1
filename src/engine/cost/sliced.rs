//! Slicing: a step's transfer cut into `k` slices that pipeline through the
//! steps, and the rule that picks `k` like the real libraries do.
//!
//! ## The pipelined model (`k ≥ 2`)
//! - Every transfer of the schedule is cut into slices of `q` elements and
//!   a shorter last one (`q` = NCCL's fixed slice with `auto`, else
//!   `⌈c/k⌉` for a transfer of `c` elements), placed in `k` slots by the
//!   fraction of the transfer they complete (details at `slice_bytes` in
//!   `run_sliced`); each pays its route's `α` and then moves its bytes at
//!   the max-min fair rate, as in the unsliced model.
//! - A transfer sends its slices in order through a FIFO of `W` slots:
//!   slice `j` is released when slice `j − W` of the same transfer has
//!   arrived, so up to `W` slices are in flight per connection: their `α`
//!   overlaps, their data goes in order (only the earliest slice of a
//!   connection moves data; the next follows when it has left). NCCL (a topology without a CCL staging buffer): `W =
//!   NCCL_STEPS / SLICESTEPS` (8 / 2 = 4 for AllReduce, AllGather,
//!   ReduceScatter; 8 / 1 = 8 otherwise: the connection's FIFO of
//!   `NCCL_STEPS` buffer steps, `src/include/device.h`). HCCL (a topology
//!   with a staging buffer): `W = 1`, one slice at a time (an
//!   **assumption**: HCCL does not slice, so it publishes no depth).
//! - There is no barrier per step: slice `j` of a transfer at step `s` is
//!   released once slice `j` of everything its sender and its receiver did
//!   at their previous step (their last step before `s` with a transfer) is
//!   done (arrived, and reduced if the receiver reduces). Data dependencies
//!   are therefore met per slice, which is how a ring or a tree pipelines.
//! - Receives are reduced one after another per receiver, in arrival order,
//!   at `G` GB/s, as in the unsliced model.
//!
//! Closed forms this gives on uncontended links (tests assert them): a
//! single-step algorithm of `k` slices of `d = S/k·β` takes `α + k·d +
//! ⌊(k−1)/W⌋·max(0, α − (W−1)·d)` (the unsliced closed form when the window
//! hides `α`, plus a stall per window otherwise); with `W = 1` a chain
//! broadcast over `p` ranks `(k + p − 2)(α + S/k·β)` and a binomial-tree
//! broadcast on a full mesh `(k + ⌈log2 p⌉ − 1)(α + S/k·β)`.
//!
//! Known limit: in this asynchronous pipeline, flows of different steps
//! overlap on a port, so a schedule whose transfers differ in size (rhd,
//! nb, nhr) or a pipelined tree can finish a few % sooner when a message
//! grows past a slice boundary (tests/plan.rs checks monotonicity where it
//! holds: unsliced everywhere, sliced for ring, chains, mesh, star,
//! pairwise).
//!
//! `k = 1` is not simulated here: it is the step-synchronous model of
//! [`super::estimate`] (equal to the textbook closed forms), unchanged.
//!
//! ## The default (`slices=auto`)
//! - **NCCL** (a topology without a CCL staging buffer): NCCL's Simple
//!   protocol moves data through a buffer of `NCCL_BUFFSIZE` = 4 MiB cut
//!   into `NCCL_STEPS` = 8 steps (`src/init.cc` `DEFAULT_BUFFSIZE`,
//!   `src/include/device.h` `NCCL_STEPS`), i.e. 512 KiB per step; a slice is
//!   `SLICESTEPS` steps (`src/include/collectives.h`: `ALLREDUCE_SLICESTEPS`
//!   = `ALLGATHER_SLICESTEPS` = `REDUCESCATTER_SLICESTEPS` = `NCCL_STEPS/4` =
//!   2, `BROADCAST_SLICESTEPS` = `REDUCE_SLICESTEPS` = 1): 1 MiB slices for
//!   AllReduce, AllGather and ReduceScatter, 512 KiB for the others. `k` is
//!   the largest transfer of the schedule divided by that slice, rounded up.
//! - **HCCL** (a topology with a staging buffer, `HCCL_BUFFSIZE`, default
//!   200 MB): HCCL does not slice inside a step; it pipelines a large message
//!   by its CCL buffer, i.e. `⌈S / buffer⌉` loops of the whole schedule
//!   (hccl docs `HCCL_BUFFSIZE.md`), already modelled as buffer loops. So
//!   `k = 1` (an explicit `slices=k` on HCCL is a what-if).
//! - **A fitted profile** (`cclsim fit`, a pasted log): `k = 1`; the fit
//!   measured the library as a whole, so its pipelining is already in the
//!   fitted `α` and `β` (and the hold-out accuracy figures stay those of
//!   the fit).
//!
//! `k` is at most [`MAX_SLICES`], and `k ×` transfers at most
//! [`SLICE_BUDGET`] (so the page stays interactive); a larger request is
//! capped and the [`Slicing`] says so.

use super::reference::Simulator;
use super::{LinkBusy, StepTiming, Timeline, TransferTiming};
use crate::engine::collective::Primitive;
use crate::engine::schedule::{Schedule, TransferKind};
use crate::engine::topology::Topology;
use crate::engine::units::format_bytes;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Most slices per transfer (`slices=1..=256`).
pub const MAX_SLICES: u32 = 256;

/// Most sub-transfers (`slices × transfers`) one simulated loop may have;
/// above it the slice count is capped (to 1 for schedules of more than
/// `SLICE_BUDGET / 2` transfers, e.g. ring AllReduce on 1024 ranks).
pub const SLICE_BUDGET: usize = 1 << 16;

/// Most flow updates (the sum, over the events of one simulated loop, of
/// the sub-transfers in flight at that event) a sliced simulation may do;
/// above it the loop is estimated unsliced and the [`Slicing`] says so
/// ([`over_budget`]). A work count, not a clock, so the page, `cclsim` and
/// the tests cap the same runs. About 0.3–0.5 s on one core: rhd and
/// dbtree on 1024 ranks with `slices=2` need far less (their transfers
/// finish together), Bruck (nb) far more (its transfers of different sizes
/// finish one at a time, and every finish re-shares the links).
pub const SLICE_WORK_BUDGET: usize = 2_000_000;

/// Caps `slicing` to one slice after the sliced simulation (`run_sliced`) went over
/// [`SLICE_WORK_BUDGET`], saying so in its `why`.
pub fn over_budget(slicing: &mut Slicing) {
    if slicing.slices > 1 {
        // The window no longer applies to one slice.
        slicing.why.window = None;
        slicing.why.caps.push(SliceCap::FlowUpdates {
            slices: slicing.slices,
            budget: SLICE_WORK_BUDGET,
        });
    }
    slicing.slices = 1;
    slicing.slice_elems = None;
}

/// NCCL's Simple-protocol step: `NCCL_BUFFSIZE` (4 MiB, `src/init.cc`
/// `DEFAULT_BUFFSIZE`) / `NCCL_STEPS` (8, `src/include/device.h`), bytes.
pub const NCCL_STEP_BYTES: u64 = (4 << 20) / 8;

/// The slice count asked for: `auto` (like the real library) or a number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Slices {
    /// NCCL's slice size on NCCL-like machines, 1 on HCCL ones (module doc).
    #[default]
    Auto,
    /// Exactly this many slices per transfer, `1..=MAX_SLICES`.
    Fixed(u32),
}

impl Slices {
    /// The URL / CLI value: `auto` or the number.
    pub fn name(self) -> String {
        match self {
            Slices::Auto => "auto".into(),
            Slices::Fixed(k) => k.to_string(),
        }
    }

    /// Parses `auto` or an integer `1..=MAX_SLICES`.
    ///
    /// Errors: what is allowed (`auto or an integer 1..=256`).
    pub fn parse(s: &str) -> Result<Slices, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Slices::Auto);
        }
        match s.parse::<u32>() {
            Ok(k) if (1..=MAX_SLICES).contains(&k) => Ok(Slices::Fixed(k)),
            _ => Err(format!("auto or an integer 1..={MAX_SLICES}")),
        }
    }
}

/// The slice count a prediction used, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slicing {
    /// What was asked for.
    pub requested: Slices,
    /// Slices per transfer actually simulated (1 = unsliced).
    pub slices: u32,
    /// Slices in flight per connection (the FIFO depth `W`, module doc).
    #[serde(default = "one")]
    pub window: u32,
    /// Why: the library rule or the request, then any cap (data, so each
    /// front end words it in its language; `Display` is the English).
    pub why: SliceWhy,
    /// Elements per slice when the library cuts by a fixed slice (NCCL's
    /// `auto`): every transfer is cut into full slices of this many
    /// elements and a shorter last one; `None`: each transfer of `c`
    /// elements into slices of `ceil(c / slices)`.
    #[serde(default)]
    pub slice_elems: Option<u64>,
}

fn one() -> u32 {
    1
}

impl Default for Slicing {
    fn default() -> Self {
        Slicing {
            requested: Slices::Fixed(1),
            slices: 1,
            window: 1,
            why: SliceWhy::of(SliceRule::Unsliced),
            slice_elems: None,
        }
    }
}

/// NCCL's Simple-protocol slice for `p`, bytes: `SLICESTEPS ×`
/// [`NCCL_STEP_BYTES`] (`src/include/collectives.h`; module doc).
pub fn nccl_slice_bytes(p: Primitive) -> u64 {
    match p {
        Primitive::AllReduce | Primitive::AllGather | Primitive::ReduceScatter => {
            2 * NCCL_STEP_BYTES
        }
        _ => NCCL_STEP_BYTES,
    }
}

/// Is `topo` built from a fitted profile (`calibrate::Profile::apply` /
/// `topology_at` name it `profile` or `<preset>+profile`)?
fn is_profile(topo: &Topology) -> bool {
    topo.name == "profile" || topo.name.ends_with("+profile")
}

/// Does the rule pick one slice (the unsliced step-synchronous model)
/// without looking at the schedule's steps? `slices=1`, or `auto` on a
/// fitted profile or a machine with a CCL buffer (HCCL).
pub fn unsliced_by_rule(topo: &Topology, requested: Slices) -> bool {
    match requested {
        Slices::Fixed(k) => k.clamp(1, MAX_SLICES) == 1,
        Slices::Auto => is_profile(topo) || topo.ccl_buffer_bytes.is_some(),
    }
}

/// Picks the slice count for one loop of `loop_elems` elements of `es`
/// bytes of `schedule` on `topo` (module doc: the auto rule and the caps).
pub fn choose(
    schedule: &Schedule,
    topo: &Topology,
    loop_elems: u64,
    es: u64,
    requested: Slices,
) -> Slicing {
    // NCCL's fixed slice, in elements, when the transfers are cut by it
    // (not capped): full slices and a shorter last one.
    let mut fixed_slice: Option<u64> = None;
    let (k, rule) = match requested {
        Slices::Fixed(k) => {
            let k = k.clamp(1, MAX_SLICES);
            (k, SliceRule::Set { slices: k })
        }
        Slices::Auto if is_profile(topo) => (1, SliceRule::AutoProfile),
        Slices::Auto => match topo.ccl_buffer_bytes {
            Some(buffer_bytes) => (1, SliceRule::AutoHccl { buffer_bytes }),
            None => {
                let slice = nccl_slice_bytes(schedule.primitive);
                let largest = schedule
                    .steps
                    .iter()
                    .flat_map(|s| s.transfers.iter())
                    .map(|t| {
                        let r = schedule.range_elems_u64(loop_elems, t.first, t.count);
                        (r.end - r.start) * es
                    })
                    .max()
                    .unwrap_or(0);
                let unclamped = largest.div_ceil(slice);
                let k = unclamped.clamp(1, MAX_SLICES as u64) as u32;
                if unclamped == k as u64 {
                    fixed_slice = Some((slice / es).max(1));
                }
                let rule = SliceRule::AutoNccl {
                    slices: k,
                    slice_bytes: slice,
                    largest_bytes: largest,
                };
                (k, rule)
            }
        },
    };
    let mut why = SliceWhy::of(rule);
    let transfers = schedule.transfer_count().max(1);
    let mut slices = k;
    if k > 1 && k as usize * transfers > SLICE_BUDGET {
        slices = (SLICE_BUDGET / transfers).max(1) as u32;
        fixed_slice = None;
        why.caps.push(SliceCap::Transfers {
            slices,
            transfers,
            budget: SLICE_BUDGET,
        });
    }
    // The FIFO depth: NCCL keeps NCCL_STEPS buffer steps per connection,
    // SLICESTEPS of them per slice; HCCL one slice at a time.
    let window = match topo.ccl_buffer_bytes {
        Some(_) => 1,
        None => (8 * NCCL_STEP_BYTES / nccl_slice_bytes(schedule.primitive)) as u32,
    };
    if slices > 1 {
        why.window = Some(window);
    }
    Slicing {
        requested,
        slices,
        window,
        why,
        slice_elems: fixed_slice.filter(|_| slices > 1),
    }
}

/// The rule that gave a [`Slicing`] its first slice count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SliceRule {
    /// The step-synchronous default of a plan that was never sliced.
    Unsliced,
    /// `slices=k` asked for.
    Set { slices: u32 },
    /// `auto` on a fitted profile: its pipelining is in the fitted α and β.
    AutoProfile,
    /// `auto` on HCCL: whole steps, a large message in buffer loops.
    AutoHccl { buffer_bytes: u64 },
    /// `auto` on NCCL: the largest transfer over NCCL's Simple slice.
    AutoNccl {
        slices: u32,
        slice_bytes: u64,
        largest_bytes: u64,
    },
}

/// A cap put on the rule's slice count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SliceCap {
    /// `slices × transfers` would pass `budget` simulated sub-transfers.
    Transfers {
        slices: u32,
        transfers: usize,
        budget: usize,
    },
    /// The pipelined simulation of `slices` slices needed more than
    /// `budget` flow updates ([`SLICE_WORK_BUDGET`]): estimated unsliced.
    FlowUpdates { slices: u32, budget: usize },
}

/// Why a prediction used its slice count, as data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceWhy {
    /// The rule or the request.
    pub rule: SliceRule,
    /// The caps applied after it, in order.
    pub caps: Vec<SliceCap>,
    /// Slices in flight per connection, when more than one slice runs.
    pub window: Option<u32>,
}

impl SliceWhy {
    /// The rule alone, uncapped.
    pub fn of(rule: SliceRule) -> SliceWhy {
        SliceWhy {
            rule,
            caps: Vec::new(),
            window: None,
        }
    }
}

/// "s" after a count other than one.
fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl std::fmt::Display for SliceRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            SliceRule::Unsliced => {
                f.write_str("unsliced: each step's transfers move whole, steps are synchronous")
            }
            SliceRule::Set { slices } => write!(f, "slices={slices}, as set"),
            SliceRule::AutoProfile => f.write_str(
                "auto: 1 slice; a fitted profile measured the library as a whole, its pipelining is already in the fitted α and β",
            ),
            SliceRule::AutoHccl { buffer_bytes } => write!(
                f,
                "auto: 1 slice; HCCL moves each step whole and pipelines a large message by its CCL buffer (HCCL_BUFFSIZE {}: buffer loops)",
                format_bytes(buffer_bytes)
            ),
            SliceRule::AutoNccl {
                slices,
                slice_bytes,
                largest_bytes,
            } => write!(
                f,
                "auto: {slices} slice{} of at most {}, NCCL's Simple-protocol slice ({} steps of NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8); largest transfer {}",
                plural(slices),
                format_bytes(slice_bytes),
                slice_bytes / NCCL_STEP_BYTES,
                format_bytes(largest_bytes)
            ),
        }
    }
}

impl std::fmt::Display for SliceCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            SliceCap::Transfers {
                slices,
                transfers,
                budget,
            } => write!(
                f,
                "capped to {slices} so that slices × {transfers} transfers stay within {budget} simulated sub-transfers"
            ),
            SliceCap::FlowUpdates { slices, budget } => write!(
                f,
                "capped to 1: the pipelined simulation of {slices} slices needs more than {budget} flow updates (transfers that finish at different times re-share the links at every finish), so the loop is estimated unsliced"
            ),
        }
    }
}

impl std::fmt::Display for SliceWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.rule)?;
        for cap in &self.caps {
            write!(f, "; {cap}")?;
        }
        if let Some(w) = self.window {
            let by = if w == 1 {
                "HCCL: one at a time"
            } else {
                "NCCL: NCCL_STEPS 8 / SLICESTEPS"
            };
            write!(
                f,
                "; up to {w} slice{} in flight per connection ({by})",
                plural(w)
            )?;
        }
        Ok(())
    }
}

/// A key and an index, ordered least key first, then least index, in a
/// [`BinaryHeap`] (a min-heap): a pending sub-transfer start (time, id), or
/// a link's fair share in the progressive filling (share, local link index).
#[derive(PartialEq)]
struct Least(f64, usize);

impl Eq for Least {}

impl Ord for Least {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

impl PartialOrd for Least {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// One transfer of the schedule, flattened.
struct Tr {
    step: usize,
    src: usize,
    dst: usize,
    reduce: bool,
    route: usize,
    /// Element count.
    count: u64,
    /// Group (rank, step) of the sender and of the receiver at this step.
    groups: [usize; 2],
    /// Groups released before this one may start (sender's and receiver's
    /// previous step).
    preds: u32,
}

/// The schedule's transfers in order, and the (rank, step) groups that
/// order them: a group is what one rank does at one step; the transfers
/// of a rank's next step wait for its group.
struct Flat {
    trs: Vec<Tr>,
    /// Transfers per group.
    group_members: Vec<u32>,
    /// The transfers that wait for each group.
    dependents: Vec<Vec<usize>>,
}

/// A transfer of `c` elements is cut into `m = ceil(c / q)` slices of `q`
/// elements, the last one shorter (`q = ceil(c / k)`, or NCCL's fixed
/// slice): full slices and a shorter last one, as NCCL cuts a buffer into
/// fixed-size chunks (near-equal slices would make one more element cost
/// less time: one more slice shortens the pipeline's fill). The `m ≤ k`
/// slices sit in `k` slots by the fraction of the transfer they complete:
/// slot `j` holds slice `i` iff `floor(j·m/k) ≤ i < floor((j+1)·m/k)`, so
/// slot `j` of every transfer ends at the same fraction `(j+1)/k` of its
/// data and the slot-by-slot dependencies between steps follow the data (a
/// transfer half the size of its predecessor sends its first slice after
/// the predecessor's second). Empty slots cost nothing. Bytes of slot `j`.
fn slot_bytes(count: u64, j: usize, k: usize, slice_elems: Option<u64>, es: u64) -> f64 {
    let kk = k as u64;
    let q = slice_elems.unwrap_or_else(|| count.div_ceil(kk)).max(1);
    let m = count.div_ceil(q);
    let first = j as u64 * m / kk;
    let last = (j as u64 + 1) * m / kk;
    let lo = (q * first).min(count);
    let hi = (q * last).min(count);
    ((hi - lo) * es) as f64
}

/// Every slot's state in the event simulation (slot `id` is slot
/// `id % k` of transfer `id / k`), and every (group, slot)'s.
struct Slots {
    k: usize,
    /// Dependencies not yet met.
    wait: Vec<u32>,
    /// When the slot may start (its dependencies and a late device).
    release: Vec<f64>,
    /// Bytes still to move.
    remaining: Vec<f64>,
    /// The slot's current max-min fair rate.
    rate: Vec<f64>,
    /// When its data starts to move (release + α).
    active_from: Vec<f64>,
    /// When its last byte arrived.
    end: Vec<f64>,
    /// When it is done (arrived, and reduced if the receiver reduces).
    done: Vec<f64>,
    /// No bytes: it pays no α.
    empty: Vec<bool>,
    /// Slots of each (group, slot) not yet done.
    pending: Vec<u32>,
    /// When each (group, slot) is done.
    ready: Vec<f64>,
    /// Until when each rank's reduce unit is busy.
    busy_until: Vec<f64>,
    /// Slots whose data will start to move, by time.
    starts: BinaryHeap<Least>,
}

/// Scratch for the max-min fair rates, one entry per directed link,
/// kept between events so that an event allocates nothing.
struct Fair {
    cnt: Vec<u32>,
    flows: Vec<u32>,
    last_t: Vec<usize>,
    capl: Vec<f64>,
    local: Vec<usize>,
    touched: Vec<usize>,
    on_link: Vec<Vec<usize>>,
    frozen: Vec<bool>,
    held: Vec<bool>,
    fill: BinaryHeap<Least>,
}

impl Fair {
    fn new(links: usize) -> Fair {
        Fair {
            cnt: vec![0; links],
            flows: vec![0; links],
            last_t: vec![usize::MAX; links],
            capl: vec![0.0; links],
            local: vec![usize::MAX; links],
            touched: Vec::new(),
            on_link: Vec::new(),
            frozen: Vec::new(),
            held: Vec::new(),
            fill: BinaryHeap::new(),
        }
    }

    /// Sets `rate` of every slot in `active` (sorted here) to its max-min
    /// fair share of `cap` (progressive filling) and raises `step_share`
    /// to the most transfers sharing a link at each step. Sorted by id, a
    /// transfer's slots are adjacent: `flows` counts distinct transfers per
    /// link (the reported sharing; a transfer's own slots are not
    /// contention). A connection sends its slices in order (FIFO): only the
    /// earliest active slot of each transfer moves data; the later ones
    /// have paid their α and wait for the wire.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn rates(
        &mut self,
        cap: &[f64],
        active: &mut [usize],
        k: usize,
        trs: &[Tr],
        route_hops: &[Vec<usize>],
        rate: &mut [f64],
        step_share: &mut [usize],
    ) {
        // Borrowed apart, so that the hot loops keep each vector's pointer
        // in a register instead of reloading it through `self`.
        let Fair {
            cnt,
            flows,
            last_t,
            capl,
            local,
            touched,
            held,
            ..
        } = self;
        active.sort_unstable();
        held.clear();
        held.resize(active.len(), false);
        for a in 1..active.len() {
            held[a] = active[a] / k == active[a - 1] / k;
        }
        for (a, &id) in active.iter().enumerate() {
            if held[a] {
                rate[id] = 0.0;
                continue;
            }
            let t = id / k;
            for &h in &route_hops[trs[t].route] {
                if cnt[h] == 0 {
                    local[h] = touched.len();
                    touched.push(h);
                    capl[h] = cap[h];
                    last_t[h] = usize::MAX;
                }
                cnt[h] += 1;
                if last_t[h] != t {
                    last_t[h] = t;
                    flows[h] += 1;
                }
            }
        }
        let shared = touched.iter().any(|&h| cnt[h] > 1);
        for (a, &id) in active.iter().enumerate() {
            if held[a] {
                continue;
            }
            let hops = &route_hops[trs[id / k].route];
            let most = hops.iter().map(|&h| flows[h] as usize).max().unwrap_or(1);
            let st = &mut step_share[trs[id / k].step];
            *st = (*st).max(most);
            if !shared {
                rate[id] = hops.iter().map(|&h| cap[h]).fold(f64::INFINITY, f64::min);
            }
        }
        if shared {
            self.fill_shares(active, k, trs, route_hops, rate);
        }
        let Fair {
            cnt,
            flows,
            local,
            touched,
            ..
        } = self;
        for &h in touched.iter() {
            cnt[h] = 0;
            flows[h] = 0;
            local[h] = usize::MAX;
        }
        touched.clear();
    }

    /// Progressive filling over links some slots share. The bottleneck
    /// link (least share, the first touched on a tie) comes off a min-heap
    /// of shares instead of a scan of every touched link per level: a
    /// link's share changes only when a flow through it is frozen, and then
    /// it is pushed again (the old entry is stale: its share is no longer
    /// the link's). Shares only grow while filling, so the least valid
    /// entry is the bottleneck. O((links + hops) log links) per event
    /// instead of O(links²): nb on 1024 ranks with slices=2 went from
    /// minutes to seconds.
    #[inline]
    fn fill_shares(
        &mut self,
        active: &[usize],
        k: usize,
        trs: &[Tr],
        route_hops: &[Vec<usize>],
        rate: &mut [f64],
    ) {
        let Fair {
            cnt,
            capl,
            local,
            touched,
            on_link,
            frozen,
            held,
            fill,
            ..
        } = self;
        on_link.resize_with(touched.len(), Vec::new);
        on_link.iter_mut().for_each(Vec::clear);
        frozen.clear();
        frozen.extend(held.iter().copied());
        for (a, &id) in active.iter().enumerate() {
            if held[a] {
                continue;
            }
            for &h in &route_hops[trs[id / k].route] {
                on_link[local[h]].push(a);
            }
        }
        fill.clear();
        for &h in touched.iter() {
            if cnt[h] > 0 {
                fill.push(Least(capl[h] / cnt[h] as f64, local[h]));
            }
        }
        let mut left = held.iter().filter(|h| !**h).count();
        while left > 0 {
            let Some(Least(share, l)) = fill.pop() else {
                break;
            };
            let best = touched[l];
            if cnt[best] == 0 || capl[best] / cnt[best] as f64 != share {
                continue;
            }
            for &a in &on_link[l] {
                if frozen[a] {
                    continue;
                }
                frozen[a] = true;
                left -= 1;
                let id = active[a];
                rate[id] = share;
                for &h in &route_hops[trs[id / k].route] {
                    capl[h] -= share;
                    cnt[h] -= 1;
                    if cnt[h] > 0 && h != best {
                        fill.push(Least(capl[h] / cnt[h] as f64, local[h]));
                    }
                }
            }
        }
    }
}

impl Simulator<'_> {
    /// Simulates one loop of `elems` elements of `es` bytes with `k ≥ 2`
    /// slices per transfer, `window` of them in flight per transfer (module
    /// doc). Same [`Timeline`] shape as the
    /// unsliced run: a step's interval is from its first slice's release to
    /// its last slice's done, so steps overlap.
    ///
    /// `None` when the run needs more than [`SLICE_WORK_BUDGET`] flow
    /// updates (the caller falls back to the unsliced model and says so:
    /// [`over_budget`]).
    pub(super) fn run_sliced(
        &self,
        elems: u64,
        es: u64,
        k: usize,
        window: usize,
        slice_elems: Option<u64>,
        record: bool,
    ) -> Option<Timeline> {
        let window = window.max(1);
        // Directed-link ids of every route.
        let route_hops: Vec<Vec<usize>> = self
            .routes
            .iter()
            .map(|r| {
                r.hops
                    .iter()
                    .map(|h| 2 * h.link + usize::from(h.forward))
                    .collect()
            })
            .collect();
        let flat = self.flatten(elems);
        let mut slots = self.slots(&flat, k, window, slice_elems, es);
        let mut fair = Fair::new(self.cap.len());
        let mut step_share = vec![0usize; self.schedule.steps.len()];
        let mut active: Vec<usize> = Vec::new();
        let mut finished: Vec<(f64, usize)> = Vec::new();
        let mut now = 0.0f64;
        let mut work = 0usize;
        loop {
            if active.is_empty() {
                match slots.starts.peek() {
                    Some(s) => now = now.max(s.0),
                    None => break,
                }
            }
            let tol = 1e-12 * now.abs().max(1.0);
            while slots.starts.peek().is_some_and(|s| s.0 <= now + tol) {
                let Some(Least(at, id)) = slots.starts.pop() else {
                    break;
                };
                if slots.remaining[id] <= 0.0 {
                    finished.push((at, id));
                } else {
                    active.push(id);
                }
            }
            if active.is_empty() && finished.is_empty() {
                continue;
            }
            let mut next = f64::INFINITY;
            work += active.len();
            if work > SLICE_WORK_BUDGET {
                return None;
            }
            if !active.is_empty() {
                fair.rates(
                    &self.cap,
                    &mut active,
                    k,
                    &flat.trs,
                    &route_hops,
                    &mut slots.rate,
                    &mut step_share,
                );
                next = slots.advance(now, &mut active, &mut finished);
            }
            // Arrivals in time order: reduce, then release what waited.
            finished.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
            for (at, id) in finished.drain(..) {
                self.arrive(&mut slots, &flat, at, id, window, slice_elems, es);
            }
            if next.is_finite() {
                now = next;
            }
        }
        Some(self.timeline(&flat, &slots, &step_share, &route_hops, es, record))
    }

    /// The schedule's transfers for `elems` elements, with their groups
    /// ([`Flat`]).
    fn flatten(&self, elems: u64) -> Flat {
        let schedule = self.schedule;
        let ranks = schedule.ranks;
        let mut trs: Vec<Tr> = Vec::with_capacity(schedule.transfer_count());
        let mut group_members: Vec<u32> = Vec::new();
        let mut dependents: Vec<Vec<usize>> = Vec::new();
        let mut last_group: Vec<Option<usize>> = vec![None; ranks];
        let mut cur: Vec<(usize, usize)> = vec![(usize::MAX, 0); ranks]; // (step, group)
        let mut ti = 0usize;
        for (si, step) in schedule.steps.iter().enumerate() {
            let base = trs.len();
            for t in &step.transfers {
                let r = schedule.range_elems_u64(elems, t.first, t.count);
                let mut preds = 0;
                for rank in [t.src, t.dst] {
                    if let Some(g) = last_group[rank] {
                        dependents[g].push(trs.len());
                        preds += 1;
                    }
                }
                trs.push(Tr {
                    step: si,
                    src: t.src,
                    dst: t.dst,
                    reduce: t.kind == TransferKind::Reduce,
                    route: self.route_of[ti],
                    count: r.end - r.start,
                    groups: [0, 0],
                    preds,
                });
                ti += 1;
            }
            for (i, t) in step.transfers.iter().enumerate() {
                for (w, rank) in [t.src, t.dst].into_iter().enumerate() {
                    if cur[rank].0 != si {
                        group_members.push(0);
                        dependents.push(Vec::new());
                        cur[rank] = (si, group_members.len() - 1);
                    }
                    let g = cur[rank].1;
                    group_members[g] += 1;
                    trs[base + i].groups[w] = g;
                }
            }
            for t in &step.transfers {
                last_group[t.src] = Some(cur[t.src].1);
                last_group[t.dst] = Some(cur[t.dst].1);
            }
        }
        Flat {
            trs,
            group_members,
            dependents,
        }
    }

    /// Every slot before the first event: what it waits for (its
    /// transfer's predecessors, and slot `j − window` of its own transfer),
    /// its bytes, and the slots that start at once.
    fn slots(
        &self,
        flat: &Flat,
        k: usize,
        window: usize,
        slice_elems: Option<u64>,
        es: u64,
    ) -> Slots {
        let n = flat.trs.len() * k;
        let tr = |id: usize| &flat.trs[id / k];
        // A late device ([`Topology::impairment`]) releases nothing before
        // its offset.
        let imp = &self.topo.impairment;
        let remaining: Vec<f64> = (0..n)
            .map(|id| slot_bytes(tr(id).count, id % k, k, slice_elems, es))
            .collect();
        let pending: Vec<u32> = flat
            .group_members
            .iter()
            .flat_map(|&m| std::iter::repeat_n(m, k))
            .collect();
        let mut slots = Slots {
            k,
            wait: (0..n)
                .map(|id| tr(id).preds + u32::from(id % k >= window))
                .collect(),
            release: (0..n)
                .map(|id| imp.late_of(tr(id).src).max(imp.late_of(tr(id).dst)))
                .collect(),
            empty: remaining.iter().map(|&r| r <= 0.0).collect(),
            remaining,
            rate: vec![0.0; n],
            active_from: vec![0.0; n],
            end: vec![f64::NAN; n],
            done: vec![f64::NAN; n],
            ready: vec![0.0; pending.len()],
            pending,
            busy_until: vec![0.0; self.schedule.ranks],
            starts: BinaryHeap::new(),
        };
        for id in 0..n {
            if slots.wait[id] == 0 {
                slots.active_from[id] = slots.release[id] + self.alpha(&slots, flat, id);
                slots.starts.push(Least(slots.active_from[id], id));
            }
        }
        slots
    }

    /// The α slot `id` pays: its route's latency, none for an empty slot.
    #[inline]
    fn alpha(&self, slots: &Slots, flat: &Flat, id: usize) -> f64 {
        if slots.empty[id] {
            0.0
        } else {
            self.routes[flat.trs[id / slots.k].route].latency_us
        }
    }

    /// Slot `id`'s data arrived at `at`: it is reduced (one receive after
    /// another per receiver, at the device's reduce speed), then releases
    /// slot `j + window` of its transfer and, once its groups are done,
    /// slot `j` of every transfer waiting for them.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &self,
        slots: &mut Slots,
        flat: &Flat,
        at: f64,
        id: usize,
        window: usize,
        slice_elems: Option<u64>,
        es: u64,
    ) {
        let k = slots.k;
        let t = &flat.trs[id / k];
        let j = id % k;
        slots.end[id] = at;
        slots.done[id] = match (t.reduce, self.topo.reduce_gbps) {
            (true, Some(g)) => {
                let s = slots.busy_until[t.dst].max(at);
                let g = g * self.topo.impairment.speed_of(t.dst);
                let e = s + slot_bytes(t.count, j, k, slice_elems, es) / (g * 1e3);
                slots.busy_until[t.dst] = e;
                e
            }
            _ => at,
        };
        if j + window < k {
            self.notify(slots, flat, id + window, at);
        }
        for g in t.groups {
            let gi = g * k + j;
            slots.ready[gi] = slots.ready[gi].max(slots.done[id]);
            slots.pending[gi] -= 1;
            if slots.pending[gi] == 0 {
                let when = slots.ready[gi];
                for &d in &flat.dependents[g] {
                    self.notify(slots, flat, d * k + j, when);
                }
            }
        }
    }

    /// One dependency of slot `id` is met at `when`; the last one puts it
    /// on the start heap.
    #[inline]
    fn notify(&self, slots: &mut Slots, flat: &Flat, id: usize, when: f64) {
        slots.release[id] = slots.release[id].max(when);
        slots.wait[id] -= 1;
        if slots.wait[id] == 0 {
            slots.active_from[id] = slots.release[id] + self.alpha(slots, flat, id);
            slots.starts.push(Least(slots.active_from[id], id));
        }
    }

    /// The timeline, per step and per transfer (slots folded).
    fn timeline(
        &self,
        flat: &Flat,
        slots: &Slots,
        step_share: &[usize],
        route_hops: &[Vec<usize>],
        es: u64,
        record: bool,
    ) -> Timeline {
        let k = slots.k;
        let nsteps = self.schedule.steps.len();
        let mut steps = Vec::with_capacity(nsteps);
        let mut transfers = Vec::new();
        let mut link_busy = Vec::new();
        let mut prev_end = 0.0f64;
        let mut ti = 0usize;
        for (si, step) in self.schedule.steps.iter().enumerate() {
            let m = step.transfers.len();
            let ids = ti * k..(ti + m) * k;
            let (start, fin) = if m == 0 {
                (prev_end, prev_end)
            } else {
                (
                    ids.clone()
                        .map(|id| slots.release[id])
                        .fold(f64::INFINITY, f64::min),
                    ids.clone()
                        .map(|id| slots.done[id])
                        .fold(f64::NEG_INFINITY, f64::max),
                )
            };
            steps.push(StepTiming {
                start_us: start,
                end_us: fin,
                max_link_sharing: step_share[si],
            });
            prev_end = fin;
            if record {
                self.record_step(
                    flat,
                    slots,
                    route_hops,
                    es,
                    si,
                    ti..ti + m,
                    &mut transfers,
                    &mut link_busy,
                );
            }
            ti += m;
        }
        Timeline::of_loop(
            steps,
            transfers,
            link_busy,
            record.then(|| self.routes.clone()),
        )
    }

    /// Step `si`'s transfers (`range` of the flattened ones) and its links'
    /// busy intervals, for the drawn timeline.
    #[allow(clippy::too_many_arguments)]
    fn record_step(
        &self,
        flat: &Flat,
        slots: &Slots,
        route_hops: &[Vec<usize>],
        es: u64,
        si: usize,
        range: std::ops::Range<usize>,
        transfers: &mut Vec<TransferTiming>,
        link_busy: &mut Vec<LinkBusy>,
    ) {
        let k = slots.k;
        let first = range.start;
        let mut busy: HashMap<usize, (f64, f64, usize)> = HashMap::new();
        for t in range {
            let ids = t * k..(t + 1) * k;
            let route = flat.trs[t].route;
            let first_from = ids
                .clone()
                .map(|id| slots.active_from[id])
                .fold(f64::INFINITY, f64::min);
            let last_end = ids
                .clone()
                .map(|id| slots.end[id])
                .fold(f64::NEG_INFINITY, f64::max);
            for &h in &route_hops[route] {
                let e = busy.entry(h).or_insert((first_from, last_end, 0));
                e.0 = e.0.min(first_from);
                e.1 = e.1.max(last_end);
                e.2 += 1;
            }
            transfers.push(TransferTiming {
                step: si,
                index: t - first,
                bytes: flat.trs[t].count * es,
                link: self.routes[route]
                    .hops
                    .first()
                    .map_or(usize::MAX, |h| h.link),
                start_us: slots.release[t * k],
                end_us: last_end,
                done_us: ids
                    .map(|id| slots.done[id])
                    .fold(f64::NEG_INFINITY, f64::max),
                route,
            });
        }
        let mut v: Vec<_> = busy.into_iter().collect();
        v.sort_unstable_by_key(|(id, _)| *id);
        link_busy.extend(v.into_iter().map(|(id, (a, b, f))| LinkBusy {
            link: id / 2,
            forward: id % 2 == 1,
            step: si,
            start_us: a,
            end_us: b,
            flows: f,
        }));
    }
}

impl Slots {
    /// Moves every active slot at its rate from `now` to the next event
    /// (a slot finishing or one starting) and returns its time; slots that
    /// finish by then go to `finished`.
    #[inline]
    fn advance(
        &mut self,
        now: f64,
        active: &mut Vec<usize>,
        finished: &mut Vec<(f64, usize)>,
    ) -> f64 {
        let next_finish = active
            .iter()
            .filter(|&&id| self.rate[id] > 0.0)
            .map(|&id| now + self.remaining[id] / self.rate[id])
            .fold(f64::INFINITY, f64::min);
        let next_start = self.starts.peek().map_or(f64::INFINITY, |s| s.0);
        let next = next_finish.min(next_start);
        let dt = next - now;
        let tol = 1e-12 * next.abs().max(1.0);
        let (rate, remaining) = (&self.rate, &mut self.remaining);
        active.retain(|&id| {
            if rate[id] <= 0.0 {
                return true;
            }
            let fin = now + remaining[id] / rate[id];
            if fin <= next + tol {
                remaining[id] = 0.0;
                finished.push((fin, id));
                false
            } else {
                remaining[id] -= rate[id] * dt;
                true
            }
        });
        next
    }
}
