//! Algorithms: one file per family, each turning (primitive, ranks, root)
//! into a [`Schedule`], with its source and closed form in its doc comment
//! (the closed forms themselves live in [`super::cost::closed_form`]).
//!
//! | name | file | primitives | source |
//! |---|---|---|---|
//! | `ring` | [`ring`] | AllReduce, ReduceScatter, AllGather, Broadcast, Reduce (chains along the ring), Barrier, SendRecv | Patarasuk & Yuan 2009; NCCL ring (`ncclPatternPipelineFrom/To`); HCCL `Ring.md` |
//! | `mesh` | [`mesh`] | AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, AlltoAll, AlltoAllV, Barrier | HCCL `Mesh.md` (full mesh, one shot per phase) |
//! | `rhd` | [`rhd`] | AllReduce (any n, fold for non-powers of 2); ReduceScatter, AllGather (n = 2^k) | Thakur, Rabenseifner & Gropp 2005; HCCL H-D_R (`RHD.md`) |
//! | `tree` | [`tree`] | Broadcast, Reduce, Scatter, Gather | binomial trees, MPICH `src/mpi/coll/*/..._binomial.c` |
//! | `star` | [`star`] | Broadcast, Reduce, Scatter, Gather | HCCL `Star.md` (rooted, one step) |
//! | `pairwise` | [`pairwise`] | AlltoAll, AlltoAllV | HCCL `Pairwise.md`; MPICH `alltoall_intra_pairwise.c` |
//! | `nb` | [`nb`] | AllGather, ReduceScatter, AllReduce, Barrier, AlltoAll | Bruck et al. 1997; HCCL NB (`NB.md`); MPICH `alltoall_intra_brucks.c` |
//! | `dbtree` | [`dbtree`] | AllReduce | NCCL's double binary tree over nodes with a chain inside each node (Sanders, Speck & Träff 2009; NCCL `trees.cc`, `connect.cc`) |
//! | `hier` | [`hier`] | AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, Scatter, Gather on `8·S` ranks | HCCL A2 level0 Mesh + level1 ring / binomial decomposition |
//! | `hier-nhr` | [`hier`] | AllReduce, ReduceScatter, AllGather on `8·S` ranks | HCCL A2 level0 Mesh + level1 NHR (HCCL's default level1 from 4 servers) |
//! | `nhr` | [`nhr`] | AllReduce, ReduceScatter, AllGather, Broadcast | HCCL NHR (`NHR.md`, nonuniform hierarchical ring) |
//! | `pipeline` | [`pipeline`] | AllReduce, ReduceScatter, AllGather on `8·S` ranks | HCCL Pipeline (`Pipeline.md`: inter-server ring overlapped with intra-server mesh) |
//!
//! `build` refuses a combination the algorithm does not implement with an
//! error listing the algorithms that do ([`AlgorithmError::Unsupported`]).

pub mod dbtree;
pub mod hier;
pub mod mesh;
pub mod nb;
pub mod nhr;
pub mod pairwise;
pub mod pipeline;
pub mod rhd;
pub mod ring;
pub mod star;
pub mod tree;

use super::collective::{Primitive, MAX_ALLTOALLV_RANKS};
use super::schedule::{Next, Schedule, Step, StepSource, Transfer, TransferKind};
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// The terms of an uncontended alpha-beta-gamma closed form: `n` ranks,
/// message `s` bytes (nccl-tests' size, [`super::collective`]), per-message
/// latency `α` (µs), `β` (µs per byte, `1 / bandwidth`) and `γ` (µs per
/// reduced byte, 0 when reductions are free). Each algorithm's file holds
/// its own `closed_form` over these terms; [`closed_form`] dispatches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostTerms {
    /// Ranks.
    pub n: usize,
    /// Message size S, bytes.
    pub s: f64,
    /// `α`, µs.
    pub alpha_us: f64,
    /// `β`, µs per byte.
    pub beta: f64,
    /// `γ`, µs per reduced byte.
    pub gamma: f64,
}

impl CostTerms {
    /// Terms from a link's figures: `bw_gbps` GB/s (β = 1/bw) and
    /// `reduce_gbps` GB/s of reduced bytes (γ = 1/G; `None` = 0).
    pub fn new(n: usize, s: f64, alpha_us: f64, bw_gbps: f64, reduce_gbps: Option<f64>) -> Self {
        CostTerms {
            n,
            s,
            alpha_us,
            beta: 1.0 / (bw_gbps * 1e3),
            gamma: reduce_gbps.map_or(0.0, |g| 1.0 / (g * 1e3)),
        }
    }

    /// `n` as a float.
    pub fn nf(&self) -> f64 {
        self.n as f64
    }

    /// `(n-1)/n`.
    pub fn frac(&self) -> f64 {
        (self.nf() - 1.0) / self.nf()
    }

    /// The reduction term of a full reduce, `(n-1)/n·Sγ`.
    pub fn red(&self) -> f64 {
        self.frac() * self.s * self.gamma
    }

    /// `L = ceil(log2 n)`.
    pub fn log2_ceil(&self) -> f64 {
        self.n.next_power_of_two().trailing_zeros() as f64
    }

    /// AlltoAllV's bytes from rank `i` to rank `j`: `c_ij = w(i,j)·S/Σw`
    /// ([`super::collective::moe_weight`]).
    pub fn moe_bytes(&self) -> impl Fn(usize, usize) -> f64 {
        let n = self.n;
        let w_total: u64 = (0..n)
            .flat_map(|i| (0..n).map(move |j| super::collective::moe_weight(i, j)))
            .sum();
        let s = self.s;
        move |i, j| super::collective::moe_weight(i, j) as f64 * s / w_total as f64
    }
}

/// The uncontended closed form of `algorithm` for `primitive`, µs: each
/// algorithm's own (`ring::closed_form`, `mesh::closed_form`, ...; the
/// formula and its source are in that function's doc). `None` where the
/// algorithm does not implement the primitive on `t.n` ranks.
pub fn closed_form(algorithm: Algorithm, primitive: Primitive, t: &CostTerms) -> Option<f64> {
    if !algorithm.supports(primitive, t.n) {
        return None;
    }
    match algorithm {
        Algorithm::Ring => ring::closed_form(primitive, t),
        Algorithm::Mesh => mesh::closed_form(primitive, t),
        Algorithm::Rhd => rhd::closed_form(primitive, t),
        Algorithm::Tree => tree::closed_form(primitive, t),
        Algorithm::Star => star::closed_form(primitive, t),
        Algorithm::Pairwise => pairwise::closed_form(primitive, t),
        Algorithm::Nb => nb::closed_form(primitive, t),
        Algorithm::Nhr => nhr::closed_form(primitive, t),
        Algorithm::Pipeline => pipeline::closed_form(primitive, t),
        Algorithm::Hier => hier::closed_form(primitive, t, hier::Level1::Ring),
        Algorithm::HierNhr => hier::closed_form(primitive, t, hier::Level1::Nhr),
        Algorithm::Dbtree => dbtree::closed_form(primitive, t),
    }
}

/// A concrete algorithm (never "auto": see [`super::select`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Ring: n-1 steps per phase, one chunk per step to the next rank.
    Ring,
    /// Full mesh: every rank exchanges with every peer at once, one step per phase.
    Mesh,
    /// Recursive halving-doubling (Rabenseifner; HCCL H-D_R).
    Rhd,
    /// Binomial tree (rooted primitives).
    Tree,
    /// Star: the root exchanges with everyone in one step.
    Star,
    /// Pairwise exchange (AlltoAll): n-1 steps, one peer per step.
    Pairwise,
    /// Bruck (HCCL NB): ceil(log2 n) steps for any n.
    Nb,
    /// NCCL's double binary tree (AllReduce).
    Dbtree,
    /// HCCL A2 hierarchy: intra-server Mesh, inter-server ring (8·S ranks).
    Hier,
    /// HCCL A2 hierarchy with NHR between the servers (8·S ranks).
    HierNhr,
    /// HCCL's nonuniform hierarchical ring: ceil(log2 n) steps, any n.
    Nhr,
    /// HCCL's Pipeline: inter-server ring overlapped with intra-server mesh (8·S ranks).
    Pipeline,
}

impl Algorithm {
    /// Every algorithm, in UI order.
    pub const ALL: [Algorithm; 12] = [
        Algorithm::Ring,
        Algorithm::Mesh,
        Algorithm::Rhd,
        Algorithm::Tree,
        Algorithm::Star,
        Algorithm::Pairwise,
        Algorithm::Nb,
        Algorithm::Dbtree,
        Algorithm::Hier,
        Algorithm::HierNhr,
        Algorithm::Nhr,
        Algorithm::Pipeline,
    ];

    /// URL name (`ring`, `mesh`, `rhd`, `tree`, `star`, `pairwise`, `nb`,
    /// `dbtree`, `hier`, `hier-nhr`, `nhr`, `pipeline`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Mesh => "mesh",
            Algorithm::Rhd => "rhd",
            Algorithm::Tree => "tree",
            Algorithm::Star => "star",
            Algorithm::Pairwise => "pairwise",
            Algorithm::Nb => "nb",
            Algorithm::Dbtree => "dbtree",
            Algorithm::Hier => "hier",
            Algorithm::HierNhr => "hier-nhr",
            Algorithm::Nhr => "nhr",
            Algorithm::Pipeline => "pipeline",
        }
    }

    /// Parses a [`Algorithm::name`].
    pub fn from_name(s: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == s)
    }

    /// One sentence for the UI.
    pub fn summary(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring: each rank talks only to its successor; n-1 steps per phase, 1/n of the data per step (Broadcast / Reduce: a chain from / to the root, pipelined in slices)",
            Algorithm::Mesh => "mesh (HCCL's full-mesh algorithm): every rank talks to every peer at once; one step per phase",
            Algorithm::Rhd => "recursive halving-doubling (HCCL H-D_R, Rabenseifner): log2 n steps per phase, halving then doubling the data exchanged with a partner at distance 2^k",
            Algorithm::Tree => "binomial tree: the root's data fans out (or in) along a tree, ceil(log2 n) steps",
            Algorithm::Star => "star (HCCL Star): the root exchanges with every rank at once, one step",
            Algorithm::Pairwise => "pairwise exchange (HCCL Pairwise): in step k every rank sends to rank r+k, n-1 steps",
            Algorithm::Nb => "Bruck (HCCL NB): ceil(log2 n) steps for any n, each rank forwarding what it has to the rank 2^k away (AlltoAll: the pieces whose distance has bit k set)",
            Algorithm::Dbtree => "double binary tree (NCCL): two binary trees over the nodes, a chain of GPUs inside each node; each tree reduces then broadcasts half of the data",
            Algorithm::Hier => "hierarchical (HCCL on A2): mesh inside each 8-NPU server, ring (rooted: binomial tree) between servers on 1/8 of the data, mesh again",
            Algorithm::HierNhr => "hierarchical with NHR (HCCL on A2 from 4 servers): mesh inside each server, NHR between servers (ceil(log2 servers) steps) on 1/8 of the data, mesh again",
            Algorithm::Nhr => "nonuniform hierarchical ring (HCCL NHR): ceil(log2 n) steps for any n, the first step moving half the data to the ring neighbour, each later step half as much twice as far",
            Algorithm::Pipeline => "pipeline (HCCL): the inter-server ring runs while each server's mesh forwards the block that arrived in the previous step; 8-NPU servers",
        }
    }

    /// Does this algorithm implement `primitive` on `ranks` ranks? (Any
    /// root `0..ranks` for the rooted primitives.)
    pub fn supports(self, primitive: Primitive, ranks: usize) -> bool {
        use Primitive::*;
        if ranks < 2 {
            return false;
        }
        let pow2 = ranks.is_power_of_two();
        match self {
            Algorithm::Ring => matches!(
                primitive,
                AllReduce | ReduceScatter | AllGather | Broadcast | Reduce | Barrier | SendRecv
            ),
            Algorithm::Mesh => match primitive {
                AlltoAllV => ranks <= MAX_ALLTOALLV_RANKS,
                _ => matches!(
                    primitive,
                    AllReduce | ReduceScatter | AllGather | Broadcast | Reduce | AlltoAll | Barrier
                ),
            },
            Algorithm::Rhd => match primitive {
                AllReduce => true,
                ReduceScatter | AllGather => pow2,
                _ => false,
            },
            Algorithm::Tree | Algorithm::Star => {
                matches!(primitive, Broadcast | Reduce | Scatter | Gather)
            }
            Algorithm::Pairwise => match primitive {
                AlltoAll => true,
                AlltoAllV => ranks <= MAX_ALLTOALLV_RANKS,
                _ => false,
            },
            Algorithm::Nb => matches!(
                primitive,
                AllGather | ReduceScatter | AllReduce | Barrier | AlltoAll
            ),
            Algorithm::Dbtree => primitive == AllReduce,
            Algorithm::HierNhr => {
                ranks % hier::PER_SERVER == 0
                    && matches!(primitive, AllReduce | ReduceScatter | AllGather)
            }
            Algorithm::Hier => {
                ranks % hier::PER_SERVER == 0
                    && matches!(
                        primitive,
                        AllReduce
                            | ReduceScatter
                            | AllGather
                            | Broadcast
                            | Reduce
                            | Scatter
                            | Gather
                    )
            }
            Algorithm::Nhr => {
                matches!(primitive, AllReduce | ReduceScatter | AllGather | Broadcast)
            }
            Algorithm::Pipeline => {
                ranks % hier::PER_SERVER == 0
                    && matches!(primitive, AllReduce | ReduceScatter | AllGather)
            }
        }
    }

    /// The algorithms that implement `primitive` on `ranks` ranks, in UI order.
    pub fn applicable(primitive: Primitive, ranks: usize) -> Vec<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .filter(|a| a.supports(primitive, ranks))
            .collect()
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a schedule could not be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AlgorithmError {
    /// The algorithm does not apply.
    #[error("algo={algorithm}: {algorithm} does not implement {primitive} on {ranks} ranks; applicable: {applicable}")]
    Unsupported {
        /// The algorithm asked for.
        algorithm: &'static str,
        /// The primitive.
        primitive: Primitive,
        /// The rank count.
        ranks: usize,
        /// The algorithms that do apply, comma-separated (`none` if none).
        applicable: String,
    },
    /// The root is not a rank.
    #[error("root={root}: the root must be a rank 0..={max}")]
    BadRoot {
        /// The root asked for.
        root: usize,
        /// The largest rank.
        max: usize,
    },
}

/// Builds the schedule of `algorithm` for `primitive` on `ranks` ranks with
/// root 0 (see [`build_with_root`]).
///
/// Errors: [`AlgorithmError::Unsupported`] if `!algorithm.supports(primitive, ranks)`.
pub fn build(
    algorithm: Algorithm,
    primitive: Primitive,
    ranks: usize,
) -> Result<Schedule, AlgorithmError> {
    build_with_root(algorithm, primitive, ranks, 0)
}

/// Builds the schedule of `algorithm` for `primitive` on `ranks` ranks of
/// one node; a rooted primitive ([`Primitive::rooted`]) uses `root`, the
/// others ignore it (their schedule has root 0). See [`build_on`].
///
/// Errors: as [`build_on`].
pub fn build_with_root(
    algorithm: Algorithm,
    primitive: Primitive,
    ranks: usize,
    root: usize,
) -> Result<Schedule, AlgorithmError> {
    build_on(algorithm, primitive, ranks, root, &[ranks])
}

/// Builds the schedule of `algorithm` for `primitive` on `ranks` ranks laid
/// out on nodes (servers) of `nodes[i]` consecutive ranks each
/// ([`super::topology::Topology::nodes_of`]); only NCCL's `dbtree` depends
/// on the nodes (its trees span nodes, a chain runs inside each). A
/// `nodes` that does not sum to `ranks` is read as one node.
///
/// Errors: [`AlgorithmError::Unsupported`] (listing the applicable
/// algorithms) if `!algorithm.supports(primitive, ranks)`;
/// [`AlgorithmError::BadRoot`] if a rooted primitive's `root >= ranks`.
pub fn build_on(
    algorithm: Algorithm,
    primitive: Primitive,
    ranks: usize,
    root: usize,
    nodes: &[usize],
) -> Result<Schedule, AlgorithmError> {
    Ok(stream_on(algorithm, primitive, ranks, root, nodes)?.build())
}

/// The steps [`build_on`] would collect, made on demand ([`Streamed`]).
///
/// Errors: as [`build_on`].
pub fn stream_on(
    algorithm: Algorithm,
    primitive: Primitive,
    ranks: usize,
    root: usize,
    nodes: &[usize],
) -> Result<Streamed, AlgorithmError> {
    if !algorithm.supports(primitive, ranks) {
        let list: Vec<&str> = Algorithm::applicable(primitive, ranks)
            .into_iter()
            .map(|a| a.name())
            .collect();
        return Err(AlgorithmError::Unsupported {
            algorithm: algorithm.name(),
            primitive,
            ranks,
            applicable: if list.is_empty() {
                "none".into()
            } else {
                list.join(", ")
            },
        });
    }
    let root = if primitive.rooted() { root } else { 0 };
    if root >= ranks {
        return Err(AlgorithmError::BadRoot {
            root,
            max: ranks - 1,
        });
    }
    Ok(Streamed {
        header: Schedule {
            primitive,
            algorithm: algorithm.name().into(),
            ranks,
            chunks: 0,
            root,
            scratch: 0,
            steps: Vec::new(),
        },
        algorithm,
        nodes: nodes.to_vec(),
    }
    .with_chunks())
}

/// The steps of `algorithm` made on demand, one at a time
/// ([`StepSource`]): what [`build_on`] collects into a [`Schedule`], for
/// consumers that need one step at a time (the cost model above the drawn
/// rank counts: a ring AllReduce on 1024 ranks has 2 095 104 transfers,
/// 96 MiB as a `Schedule`, one step of them 48 KiB). Ring, mesh, NHR,
/// pipeline and the hierarchical algorithms make each step when it is
/// asked for; the others build their (small) step list and hand it out.
#[derive(Clone, Debug)]
pub struct Streamed {
    header: Schedule,
    algorithm: Algorithm,
    nodes: Vec<usize>,
}

/// Steps in order, made on demand.
pub type StepIter = Box<dyn Iterator<Item = Step>>;

/// A streamed step: made, a repeat of the previous step's traffic
/// ([`Next::Repeat`]), a complete exchange ([`Next::Exchange`]) or a
/// shift ([`Next::Shift`]), the last three made only if asked
/// ([`Lazy::make`]).
pub enum Lazy {
    /// The step.
    Made(Step),
    /// Same `src`, `dst`, `count` and `kind` per transfer, in order, as
    /// the previous step; the closure makes the step.
    Repeat(Box<dyn Fn() -> Step>),
    /// One transfer of `count` chunks for every ordered pair of distinct
    /// ranks in `0..ranks`, no other transfer between two ranks; the
    /// closure makes the step.
    Exchange {
        /// Ranks `0..ranks` take part.
        ranks: usize,
        /// Chunks per transfer.
        count: usize,
        /// Makes the step.
        make: Box<dyn Fn() -> Step>,
    },
    /// Every rank `r` in `0..ranks` sends `count` chunks in all to
    /// `(r + shift) % ranks`, in `width` transfers, no other transfer
    /// between two ranks; the closure makes the step.
    Shift {
        /// Ranks `0..ranks` take part.
        ranks: usize,
        /// Each rank's peer is `shift` ranks on.
        shift: usize,
        /// Chunks each rank sends in all.
        count: usize,
        /// Transfers of the made step.
        width: usize,
        /// Makes the step.
        make: Box<dyn Fn() -> Step>,
    },
}

impl Lazy {
    /// The step, made if it was not.
    pub fn make(self) -> Step {
        match self {
            Lazy::Made(s) => s,
            Lazy::Repeat(f) | Lazy::Exchange { make: f, .. } | Lazy::Shift { make: f, .. } => f(),
        }
    }
}

/// [`Lazy`] steps in order.
pub type LazyIter = Box<dyn Iterator<Item = Lazy>>;

impl Streamed {
    fn with_chunks(mut self) -> Self {
        self.header.chunks = self.make().0;
        self
    }

    /// The chunk count and the step iterator, by algorithm (the ring and
    /// HCCL's pipeline say which steps repeat their predecessor's traffic,
    /// mesh which steps are complete exchanges, NHR, Bruck's AlltoAll and
    /// the hierarchical algorithms' level1 which are shifts).
    fn make(&self) -> (usize, LazyIter) {
        let (c, it) = match self.algorithm {
            Algorithm::Ring => {
                let h = &self.header;
                return ring::stream_lazy(h.primitive, h.ranks, h.root);
            }
            Algorithm::Pipeline => {
                return pipeline::stream_lazy(self.header.primitive, self.header.ranks)
            }
            Algorithm::Mesh => {
                let h = &self.header;
                return mesh::stream_lazy(h.primitive, h.ranks, h.root);
            }
            Algorithm::Nhr => {
                let h = &self.header;
                return nhr::stream_lazy(h.primitive, h.ranks, h.root);
            }
            Algorithm::Nb => return nb::stream_lazy(self.header.primitive, self.header.ranks),
            Algorithm::Hier | Algorithm::HierNhr => {
                let h = &self.header;
                let level1 = if self.algorithm == Algorithm::Hier {
                    hier::Level1::Ring
                } else {
                    hier::Level1::Nhr
                };
                return hier::stream_lazy(h.primitive, h.ranks, h.root, level1);
            }
            _ => self.make_made(),
        };
        (c, Box::new(it.map(Lazy::Made)))
    }

    /// The chunk count and the step iterator of an algorithm whose steps
    /// are all made.
    fn make_made(&self) -> (usize, StepIter) {
        let h = &self.header;
        let (primitive, ranks, root) = (h.primitive, h.ranks, h.root);
        let boxed =
            |(c, v): (usize, Vec<Step>)| -> (usize, StepIter) { (c, Box::new(v.into_iter())) };
        match self.algorithm {
            Algorithm::Ring => ring::stream(primitive, ranks, root),
            Algorithm::Mesh => mesh::stream(primitive, ranks, root),
            Algorithm::Rhd => boxed(rhd::steps(primitive, ranks)),
            Algorithm::Tree => boxed(tree::steps(primitive, ranks, root)),
            Algorithm::Star => boxed(star::steps(primitive, ranks, root)),
            Algorithm::Pairwise => boxed(pairwise::steps(primitive, ranks)),
            Algorithm::Nb => boxed(nb::steps(primitive, ranks)),
            Algorithm::Dbtree => {
                let one = [ranks];
                let nodes = &self.nodes;
                let nodes = if nodes.iter().sum::<usize>() == ranks && !nodes.contains(&0) {
                    &nodes[..]
                } else {
                    &one[..]
                };
                boxed(dbtree::steps(primitive, ranks, nodes))
            }
            Algorithm::Hier => hier::stream(primitive, ranks, root, hier::Level1::Ring),
            Algorithm::HierNhr => hier::stream(primitive, ranks, root, hier::Level1::Nhr),
            Algorithm::Nhr => nhr::stream(primitive, ranks, root),
            Algorithm::Pipeline => {
                let (c, s) = pipeline::stream_lazy(primitive, ranks);
                (c, Box::new(s.map(Lazy::make)))
            }
        }
    }

    /// The steps, made one at a time as the iterator is advanced.
    pub fn steps(&self) -> StepIter {
        Box::new(self.make().1.map(Lazy::make))
    }

    /// The steps as [`Lazy`]: a repeat of its predecessor's traffic is
    /// made only if asked.
    pub fn lazy_steps(&self) -> LazyIter {
        self.make().1
    }

    /// The transfers of the whole schedule, counted without holding it: a
    /// made step by its length, a repeat as its predecessor, a complete
    /// exchange as `ranks·(ranks - 1)`, a shift by its width (each claim
    /// checked against the made step by `tests/plan.rs`). Makes only the
    /// steps that come made.
    pub fn transfer_count(&self) -> usize {
        let (mut total, mut last) = (0usize, 0usize);
        for s in self.lazy_steps() {
            last = match s {
                Lazy::Made(st) => st.transfers.len(),
                Lazy::Repeat(_) => last,
                Lazy::Exchange { ranks, .. } => ranks * ranks.saturating_sub(1),
                Lazy::Shift { width, .. } => width,
            };
            total += last;
        }
        total
    }

    /// The whole schedule.
    pub fn build(&self) -> Schedule {
        Schedule {
            steps: self.steps().collect(),
            ..self.header.clone()
        }
    }
}

impl StepSource for Streamed {
    fn header(&self) -> &Schedule {
        &self.header
    }

    fn each_step(&self, f: &mut dyn FnMut(&Step) -> bool) {
        for s in self.steps() {
            if !f(&s) {
                break;
            }
        }
    }

    fn each_next(&self, f: &mut dyn FnMut(Next<'_>) -> bool) {
        for s in self.lazy_steps() {
            let go = match s {
                Lazy::Made(s) => f(Next::Step(&s)),
                Lazy::Repeat(make) => f(Next::Repeat(&mut || make())),
                Lazy::Exchange { ranks, count, make } => f(Next::Exchange {
                    ranks,
                    count,
                    make: &mut || make(),
                }),
                Lazy::Shift {
                    ranks,
                    shift,
                    count,
                    width,
                    make,
                } => f(Next::Shift {
                    ranks,
                    shift,
                    count,
                    width,
                    make: &mut || make(),
                }),
            };
            if !go {
                break;
            }
        }
    }

    fn to_schedule(&self) -> std::borrow::Cow<'_, Schedule> {
        std::borrow::Cow::Owned(self.build())
    }
}

/// Transfers moving the blocks `start, start+1, …, start+len-1` (mod `n`,
/// `k` chunks per block) from `src` to `dst` in place: one transfer, or two
/// if the range wraps past block `n-1`.
pub(crate) fn span(
    src: usize,
    dst: usize,
    start: usize,
    len: usize,
    n: usize,
    k: usize,
    kind: TransferKind,
) -> Vec<Transfer> {
    let start = start % n;
    let mk = |first: usize, blocks: usize| Transfer {
        src,
        dst,
        first: first * k,
        count: blocks * k,
        kind,
        dst_first: first * k,
    };
    if len == 0 {
        Vec::new()
    } else if start + len <= n {
        vec![mk(start, len)]
    } else {
        vec![mk(start, n - start), mk(0, start + len - n)]
    }
}

/// A step named `phase` with `transfers`.
pub(crate) fn step(phase: &str, transfers: Vec<Transfer>) -> Step {
    Step {
        phase: phase.to_string(),
        transfers,
    }
}
