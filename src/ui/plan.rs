//! Everything the page derives from a [`Config`] without running workers:
//! topology preset (optionally with a fitted profile's link figures) ->
//! algorithm (auto = [`select::select`]) -> schedule -> symbolic
//! verification -> cost estimate. Cheap (microseconds to a few
//! milliseconds), so it is recomputed on every control change.
//!
//! Above [`MAX_DRAWN_RANKS`] ranks the plan is **model-only**: every
//! applicable algorithm is still estimated and ranked, but there is no
//! symbolic trace (steps × ranks × chunks sets) and nothing to animate.
//! Schedules too large to simulate link by link in the page
//! ([`SIM_BUDGET_TRANSFERS`]) get the per-step bottleneck bound
//! ([`Bound`]) instead of the event simulation.

use crate::engine::algorithm::{self, Algorithm};
use crate::engine::calibrate::Profile;
use crate::engine::collective::Primitive;
use crate::engine::compress::Scheme;
use crate::engine::compressed::{self, CompressedEstimate, CompressedSetup, Placement};
use crate::engine::config::{AlgoChoice, Config};
use crate::engine::cost::{self, Estimate, Timeline};
use crate::engine::dtype::DType;
use crate::engine::fusion::{self, FusionPlan, Tensor};
use crate::engine::schedule::Schedule;
use crate::engine::select::{self, Candidate, Selection};
use crate::engine::topology::Topology;
use crate::engine::verify::{self, Verified};
use std::rc::Rc;

/// Most ranks the page verifies symbolically, draws NPU by NPU and
/// animates (the symbolic trace holds steps × ranks × chunks sets). More
/// ranks give a model-only plan.
pub const MAX_DRAWN_RANKS: usize = 64;

/// Most transfers (all steps) of a schedule the page simulates event by
/// event; larger schedules get [`Bound`] (the simulation costs
/// about a second natively per two million transfers, more in wasm).
pub const SIM_BUDGET_TRANSFERS: usize = 150_000;
/// Most transfers of one step the page simulates (max-min fair rates are
/// recomputed over every flow of a step at each event).
pub const SIM_BUDGET_STEP_TRANSFERS: usize = 20_000;

/// How an estimate was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// [`cost::estimate`]: event-driven, link-level, max-min fair.
    Simulated,
    /// [`Bound`]: per step, largest route α + busiest link
    /// direction's bytes / bandwidth (no event simulation).
    Bound,
}

/// The model's view of one configuration.
#[derive(Debug)]
pub struct Plan {
    /// The configuration it was made from.
    pub config: Config,
    /// The topology (the preset, or the preset with a fitted profile's
    /// link figures).
    pub topology: Topology,
    /// Every applicable algorithm ranked by predicted time, with the reason.
    pub selection: Selection,
    /// How each entry of `selection.ranking` was estimated (same order).
    pub methods: Vec<Method>,
    /// The concrete algorithm run (the user's choice, or auto's).
    pub algorithm: Algorithm,
    /// The schedule of `algorithm`.
    pub schedule: Schedule,
    /// Its symbolic trace (`trace[s][rank][chunk]`); `None` for a
    /// model-only plan (more than [`MAX_DRAWN_RANKS`] ranks).
    pub verified: Option<Verified>,
    /// The cost model's prediction for `schedule`.
    pub estimate: Estimate,
    /// How `estimate` was made.
    pub method: Method,
    /// The fitted profile in use, described in one line.
    pub profile: Option<String>,
    /// The compression what-if, when `compress` is on (with
    /// `placement=once`, `schedule` / `verified` are the AllGather of the
    /// compressed inputs and `estimate` the compressed run's).
    pub compressed: Option<Rc<CompressedPlan>>,
    /// The fusion what-if, when `fusion` is set.
    pub fusion: Option<Rc<FusionView>>,
}

/// The compression what-if of a plan.
#[derive(Debug)]
pub struct CompressedPlan {
    /// Codec, placement, inputs.
    pub setup: CompressedSetup,
    /// The uncompressed collective's schedule (defines outputs and the
    /// uncompressed bytes; equal to the plan's schedule for `hop`).
    pub collective: Schedule,
    /// The AllGather algorithm of `placement=once`.
    pub gather_algorithm: Option<Algorithm>,
    /// The modelled times and bytes.
    pub estimate: CompressedEstimate,
}

/// The fusion what-if of a plan.
#[derive(Debug)]
pub struct FusionView {
    /// The tensors AllReduced after a backward pass.
    pub tensors: Vec<Tensor>,
    /// Buckets (DDP's assignment) with their predicted costs; unfused and
    /// fused totals; the crossover.
    pub plan: FusionPlan,
    /// The bucket the page runs for real by default.
    pub run_bucket: Option<usize>,
    /// The bucket whose size is this plan's message size (the real run is
    /// that fused bucket), if any.
    pub running: Option<usize>,
}

/// Two plans of the same configuration and profile are the same plan.
impl PartialEq for Plan {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config && self.profile == other.profile
    }
}

/// Does `s` fit the page's simulation budget?
pub fn fits_budget(s: &Schedule) -> bool {
    let total: usize = s.steps.iter().map(|x| x.transfers.len()).sum();
    let widest = s.steps.iter().map(|x| x.transfers.len()).max().unwrap_or(0);
    total <= SIM_BUDGET_TRANSFERS && widest <= SIM_BUDGET_STEP_TRANSFERS
}

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
    primitive: crate::engine::collective::Primitive,
    ranks: usize,
    buffer: Option<u64>,
}

impl Bound {
    /// Walks every transfer of `schedule` once.
    ///
    /// Errors: a sentence if two communicating ranks have no route.
    pub fn of(schedule: &Schedule, topo: &Topology) -> Result<Bound, String> {
        let mut pairs = std::collections::HashMap::with_capacity(topo.links.len());
        let mut uplink: Vec<Option<usize>> = vec![None; topo.devices.len()];
        for (i, l) in topo.links.iter().enumerate() {
            pairs.insert((l.a.min(l.b), l.a.max(l.b)), i);
            for (d, other) in [(l.a, l.b), (l.b, l.a)] {
                if topo.is_device(d) && !topo.is_device(other) && uplink[d].is_none() {
                    uplink[d] = Some(i);
                }
            }
        }
        let mut load = vec![0.0f64; 2 * topo.links.len()];
        let mut total = vec![0.0f64; 2 * topo.links.len()];
        let mut touched: Vec<usize> = Vec::new();
        let mut hops: Vec<usize> = Vec::with_capacity(4);
        let mut steps = Vec::with_capacity(schedule.steps.len());
        let dir = |link: usize, from: usize| 2 * link + usize::from(topo.links[link].a == from);
        for step in &schedule.steps {
            let mut alpha = 0.0f64;
            for t in &step.transfers {
                hops.clear();
                if let Some(&l) = pairs.get(&(t.src.min(t.dst), t.src.max(t.dst))) {
                    hops.push(dir(l, t.src));
                } else if let (Some(u), Some(v)) = (
                    uplink.get(t.src).copied().flatten(),
                    uplink.get(t.dst).copied().flatten(),
                ) {
                    let (su, sv) = (&topo.links[u], &topo.links[v]);
                    let sw_u = if su.a == t.src { su.b } else { su.a };
                    let sw_v = if sv.a == t.dst { sv.b } else { sv.a };
                    if sw_u == sw_v {
                        hops.push(dir(u, t.src));
                        hops.push(dir(v, sw_v));
                    }
                }
                if hops.is_empty() {
                    let r = topo.route(t.src, t.dst).map_err(|e| e.to_string())?;
                    hops.extend(r.hops.iter().map(|h| 2 * h.link + usize::from(h.forward)));
                }
                let a: f64 = hops.iter().map(|h| topo.links[h / 2].latency_us).sum();
                alpha = alpha.max(a);
                for &h in &hops {
                    if load[h] == 0.0 {
                        touched.push(h);
                    }
                    load[h] += t.count as f64;
                }
            }
            let mut per_byte = 0.0f64;
            for &h in &touched {
                per_byte = per_byte.max(load[h] / (topo.links[h / 2].bandwidth_gbps * 1e3));
                total[h] += load[h];
                load[h] = 0.0;
            }
            touched.clear();
            steps.push((alpha, per_byte));
        }
        Ok(Bound {
            steps,
            busiest_chunks: total.iter().copied().fold(0.0, f64::max),
            chunks: schedule.chunks.max(1),
            primitive: schedule.primitive,
            ranks: schedule.ranks,
            buffer: topo.ccl_buffer_bytes,
        })
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
        let buffer_bytes =
            self.primitive
                .buffer_elems(self.ranks, (loop_bytes / es.max(1)) as usize) as f64
                * es as f64;
        let chunk_bytes = buffer_bytes / self.chunks as f64;
        let alpha: f64 = self.steps.iter().map(|s| s.0).sum();
        let data: f64 = self.steps.iter().map(|s| s.1 * chunk_bytes).sum();
        let time_us = (alpha + data) * loops as f64;
        let algbw_gbps = if time_us > 0.0 {
            bytes as f64 / (time_us * 1e3)
        } else {
            0.0
        };
        (
            Estimate {
                bytes,
                time_us,
                algbw_gbps,
                busbw_gbps: algbw_gbps * self.primitive.busbw_factor(self.ranks),
                timeline: Timeline {
                    steps: Vec::new(),
                    transfers: Vec::new(),
                    routes: Vec::new(),
                    link_busy: Vec::new(),
                    loops,
                    loop_bytes,
                },
                // The bound is unsliced (schedules this large exceed the
                // slicing budget anyway, `cost::SLICE_BUDGET`).
                slicing: Default::default(),
            },
            alpha * loops as f64,
            (self.busiest_chunks * chunk_bytes * loops as f64) as u64,
        )
    }
}

/// The estimate of `schedule`: simulated if it fits the budget, else the
/// bound.
///
/// Errors: a sentence naming what failed.
pub fn model(
    schedule: &Schedule,
    topo: &Topology,
    bytes: u64,
    dtype: DType,
) -> Result<(Estimate, Method), String> {
    if fits_budget(schedule) {
        cost::estimate(schedule, topo, bytes, dtype)
            .map(|e| (e, Method::Simulated))
            .map_err(|e| e.to_string())
    } else {
        Bound::of(schedule, topo).map(|b| (b.estimate(bytes, dtype).0, Method::Bound))
    }
}

/// The compression what-if of `config` on the chosen `algorithm`: with
/// `placement=once`, the AllGather of the compressed inputs (the same
/// algorithm if it implements AllGather, else auto's AllGather) replaces the
/// schedule the page draws and runs.
///
/// Errors: a sentence (a dtype or primitive compression does not apply to,
/// a topology error).
fn compressed_plan(
    config: &Config,
    topology: &Topology,
    algorithm: Algorithm,
    schedule: Schedule,
    verified: Verified,
) -> Result<(CompressedPlan, Schedule, Verified), String> {
    let setup = CompressedSetup {
        compression: config.compress,
        placement: config.placement,
        shape: config.grad,
    };
    compressed::check_applies(&setup, config.op, config.dtype).map_err(|e| e.to_string())?;
    let (run, run_verified, gather_algorithm) = match setup.placement {
        Placement::Hop => (schedule.clone(), verified, None),
        Placement::Once => {
            let elems = config.elems();
            let w = compressed::wire_len(&setup.compression, elems) as u64;
            let gather = if algorithm.supports(Primitive::AllGather, config.ranks) {
                algorithm
            } else {
                select::select(
                    Primitive::AllGather,
                    topology,
                    config.ranks,
                    (config.ranks as u64 * w).max(1),
                    crate::engine::dtype::DType::Int8,
                )
                .map_err(|e| e.to_string())?
                .chosen()
            };
            let s = algorithm::build(gather, Primitive::AllGather, config.ranks)
                .map_err(|e| e.to_string())?;
            let v = verify::verify(&s).map_err(|e| {
                format!("the {gather} AllGather schedule failed symbolic verification: {e}")
            })?;
            (s, v, Some(gather))
        }
    };
    let estimate = compressed::estimate(
        &schedule,
        &run,
        &setup,
        topology,
        config.bytes,
        config.dtype,
        config.slices,
    )
    .map_err(|e| e.to_string())?;
    Ok((
        CompressedPlan {
            setup,
            collective: schedule,
            gather_algorithm,
            estimate,
        },
        run,
        run_verified,
    ))
}

/// The fusion what-if of `config` (`None` without `fusion`).
///
/// Errors: a topology error.
fn fusion_view(config: &Config, topology: &Topology) -> Result<Option<Rc<FusionView>>, String> {
    if config.op != Primitive::AllReduce {
        return Ok(None);
    }
    let Some((tensors, buckets, run_bucket)) = config.fusion_buckets() else {
        return Ok(None);
    };
    let plan = fusion::plan(
        &tensors,
        config.dtype,
        config.bucket,
        topology,
        config.ranks,
    )
    .map_err(|e| e.to_string())?;
    debug_assert_eq!(plan.buckets.len(), buckets.len());
    let running = run_bucket
        .filter(|&i| buckets[i].bytes == config.bytes)
        .or_else(|| buckets.iter().position(|b| b.bytes == config.bytes));
    Ok(Some(Rc::new(FusionView {
        tensors,
        plan,
        run_bucket,
        running,
    })))
}

/// The topology of `config` (a preset or the user-defined one,
/// [`Config::topology`]) with `profile`'s link figures, if any.
///
/// Errors: a sentence (unknown topology, a profile that does not apply).
pub fn topology_of(config: &Config, profile: Option<&Profile>) -> Result<Topology, String> {
    let preset = config.topology()?;
    match profile {
        Some(p) => p.apply(&preset).map_err(|e| e.to_string()),
        None => Ok(preset),
    }
}

impl Plan {
    /// Builds the plan of `config` (with `profile`'s link figures if given).
    ///
    /// Errors: a sentence naming what failed (unknown topology, rank count,
    /// an algorithm that does not apply, a schedule that fails verification).
    pub fn new(config: &Config, profile: Option<&Profile>) -> Result<Plan, String> {
        let topology = topology_of(config, profile)?;
        topology
            .check_ranks(config.ranks)
            .map_err(|e| e.to_string())?;
        if config.ranks > MAX_DRAWN_RANKS {
            return Plan::model_only(config, topology, profile);
        }
        let selection = select::select_with_root(
            config.op,
            &topology,
            config.ranks,
            config.root,
            config.bytes,
            config.dtype,
        )
        .map_err(|e| e.to_string())?;
        let algorithm = match config.algo {
            AlgoChoice::Auto => selection.chosen(),
            AlgoChoice::Fixed(a) => a,
        };
        let schedule = algorithm::build_with_root(algorithm, config.op, config.ranks, config.root)
            .map_err(|e| e.to_string())?;
        let verified = verify::verify(&schedule)
            .map_err(|e| format!("the {algorithm} schedule failed symbolic verification: {e}"))?;
        // The chosen algorithm with the configured slicing (`slices`; the
        // ranking above is unsliced).
        let estimate = cost::estimate_sliced(
            &schedule,
            &topology,
            config.bytes,
            config.dtype,
            config.slices,
        )
        .map_err(|e| e.to_string())?;
        let fusion = fusion_view(config, &topology)?;
        let (compressed, schedule, verified, estimate) = if config.compress.scheme == Scheme::None {
            (None, schedule, verified, estimate)
        } else {
            let (c, s, v) = compressed_plan(config, &topology, algorithm, schedule, verified)?;
            let e = c.estimate.estimate.clone();
            (Some(Rc::new(c)), s, v, e)
        };
        Ok(Plan {
            config: config.clone(),
            topology,
            methods: vec![Method::Simulated; selection.ranking.len()],
            selection,
            algorithm,
            schedule,
            compressed,
            fusion,
            verified: Some(verified),
            estimate,
            method: Method::Simulated,
            profile: profile.map(Profile::describe),
        })
    }

    /// A plan without trace: every applicable algorithm estimated
    /// ([`model`]) and ranked.
    fn model_only(
        config: &Config,
        topology: Topology,
        profile: Option<&Profile>,
    ) -> Result<Plan, String> {
        let mut scored: Vec<(Candidate, Method)> = Vec::new();
        let mut kept: Option<(Algorithm, Schedule, f64)> = None;
        let mut refusal = None;
        for a in Algorithm::ALL {
            let schedule = match algorithm::build_with_root(a, config.op, config.ranks, config.root)
            {
                Ok(s) => s,
                Err(e) => {
                    if config.algo == AlgoChoice::Fixed(a) {
                        refusal = Some(e.to_string());
                    }
                    continue;
                }
            };
            let (bound, latency_us, busiest) =
                Bound::of(&schedule, &topology)?.estimate(config.bytes, config.dtype);
            let (estimate, method) = if fits_budget(&schedule) {
                let e = cost::estimate_sliced(
                    &schedule,
                    &topology,
                    config.bytes,
                    config.dtype,
                    config.slices,
                )
                .map_err(|e| e.to_string())?;
                (e, Method::Simulated)
            } else {
                (bound, Method::Bound)
            };
            let t = estimate.time_us;
            let keep = match config.algo {
                AlgoChoice::Fixed(f) => f == a,
                AlgoChoice::Auto => kept.as_ref().is_none_or(|k| t < k.2),
            };
            scored.push((
                Candidate {
                    algorithm: a,
                    steps: schedule.steps.len(),
                    latency_us,
                    busiest_link_bytes: busiest,
                    // The bound does not track per-link bandwidth.
                    slowest_link_bytes: busiest,
                    slowest_link_gbps: 0.0,
                    slowest_link_us: 0.0,
                    estimate,
                },
                method,
            ));
            if keep {
                kept = Some((a, schedule, t));
            }
        }
        if let Some(why) = refusal {
            return Err(why);
        }
        let Some((algorithm, schedule, _)) = kept else {
            return Err(format!(
                "no algorithm implements {} on {} ranks",
                config.op.title(),
                config.ranks
            ));
        };
        scored.sort_by(|x, y| x.0.estimate.time_us.total_cmp(&y.0.estimate.time_us));
        let best = &scored[0].0;
        let parts: Vec<String> = scored
            .iter()
            .map(|(c, m)| {
                format!(
                    "{}: {} steps ({:.1} µs of latency), busiest link carries {} in all → {:.2} µs{}",
                    c.algorithm,
                    c.steps,
                    c.latency_us,
                    select::format_bytes(c.busiest_link_bytes),
                    c.estimate.time_us,
                    if *m == Method::Bound { " (bottleneck bound)" } else { "" }
                )
            })
            .collect();
        let share = if best.estimate.time_us > 0.0 {
            best.latency_us / best.estimate.time_us
        } else {
            1.0
        };
        let reason = format!(
            "{} wins at {} on {} ranks ({}). {}.",
            best.algorithm,
            select::format_bytes(config.bytes),
            config.ranks,
            select::bound_phrase(share),
            parts.join("; ")
        );
        let (ranking, methods): (Vec<Candidate>, Vec<Method>) = scored.into_iter().unzip();
        let i = ranking
            .iter()
            .position(|c| c.algorithm == algorithm)
            .unwrap_or(0);
        Ok(Plan {
            config: config.clone(),
            topology,
            estimate: ranking[i].estimate.clone(),
            method: methods[i],
            selection: Selection { ranking, reason },
            methods,
            algorithm,
            schedule,
            verified: None,
            profile: profile.map(Profile::describe),
            compressed: None,
            fusion: None,
        })
    }

    /// Number of steps the page can show (0 for a model-only plan).
    pub fn steps(&self) -> usize {
        if self.verified.is_some() {
            self.schedule.steps.len()
        } else {
            0
        }
    }

    /// Is this plan drawn step by step (it has a symbolic trace)?
    pub fn drawn(&self) -> bool {
        self.verified.is_some()
    }

    /// Was the algorithm chosen by "auto"?
    pub fn auto(&self) -> bool {
        self.config.algo == AlgoChoice::Auto
    }

    /// Buffer loops of the run (1 if the message fits HCCL's buffer).
    pub fn loops(&self) -> u64 {
        self.estimate.timeline.loops.max(1)
    }

    /// Modelled time of one loop (what the steps cover), µs.
    pub fn loop_us(&self) -> f64 {
        self.estimate
            .timeline
            .steps
            .last()
            .map_or(self.estimate.time_us, |s| s.end_us)
    }
}
