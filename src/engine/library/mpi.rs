//! MPI's choices: Open MPI's `coll/tuned` fixed decision rules, the MPI
//! that `cclrun` runs under (its `mpirun`), transcribed from Open MPI main
//! `ompi/mca/coll/tuned/coll_tuned_decision_fixed.c` (commit 8efebee;
//! the `*_intra_dec_fixed` functions, commutative branches:
//! MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN commute) and mapped onto our
//! catalogue. Tag v4.1.4, the Open MPI of the measured machine
//! (`docs/performance.md`), has the same tables.
//!
//! Each rule reads the rank count and a byte count Open MPI calls
//! `total_dsize`, which is not always nccl-tests' size `S`
//! ([`crate::engine::collective`]): the whole buffer `S` for Allreduce,
//! Bcast and Reduce; one rank's block `S/n` for Allgather (`scount`),
//! Reduce_scatter_block (`rcount`), Gather and Scatter; one peer's block
//! `S/n` for Alltoall (`scount`); nothing for Barrier and Alltoallv.
//! ReduceScatter is `MPI_Reduce_scatter_block`, the call `cclrun` makes
//! (its MPI baseline, `src/runtime/mpi/library.rs`); `osu_reduce_scatter` calls
//! `MPI_Reduce_scatter`, whose table (by the whole `S`) is not modelled.
//!
//! | Open MPI algorithm | ours |
//! |---|---|
//! | Allreduce Rabenseifner; recursive doubling, nonoverlapping (Reduce + Bcast) | `rhd` (a stand-in for the last two) |
//! | Allreduce ring, segmented ring (no segment size: the plain ring) | `ring`; `rhd` when count < ranks (the ring's own fallback to recursive doubling) |
//! | Allgather recursive doubling | `rhd` for 2^k ranks, else `nb` (its own fallback to Bruck) |
//! | Allgather Bruck / ring / neighbor exchange / two-process | `nb` / `ring` / `ring` (stand-in) / `ring` |
//! | Reduce_scatter_block recursive doubling, recursive halving, butterfly | `rhd` for 2^k ranks, else `nb` (stand-in) |
//! | Reduce_scatter_block basic linear (Reduce to 0 + Scatter) | `mesh` (stand-in) |
//! | Bcast / Reduce basic linear | `star` |
//! | Bcast / Reduce chain, pipeline | `ring` (a chain from / to the root) |
//! | Bcast / Reduce binomial; binary, split binary, in-order binary, k-nomial trees | `tree` (binomial; the others stand-ins) |
//! | Bcast scatter + allgather | `nhr` (binomial scatter, then an allgather) |
//! | Reduce Rabenseifner (reduce-scatter + gather) | `mesh` (reduce-scatter, then blocks to the root; stand-in) |
//! | Gather / Scatter basic linear, linear sync, linear nonblocking | `star` |
//! | Gather / Scatter binomial | `tree` |
//! | Alltoall linear, linear sync (all requests at once by default) / pairwise, two-process / modified Bruck | `mesh` / `pairwise` / `nb` |
//! | Alltoallv basic linear / pairwise | `mesh` / `pairwise` |
//! | Barrier Bruck, recursive doubling, tree / double ring / linear | `nb` (dissemination; stand-in for the last two) / `ring` / `mesh` (stand-in) |
//!
//! Not modelled: segment sizes and tree fan-outs (the fixed rules pass 0,
//! Open MPI's defaults); the non-commutative branches; the `disjoint`
//! Allreduce / Bcast rules (used on communicators with one rank per node,
//! such as `coll/han`'s); `coll/han`, which outranks `tuned` (priority 35
//! to 30) on communicators spanning several nodes; and
//! `coll_tuned_use_dynamic_rules` with its forced algorithms and rule files.

use super::{Call, Choice};
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use crate::engine::units::format_bytes;

/// Where the rules come from, the start of every `why`.
const SOURCE: &str = "Open MPI coll_tuned (fixed decision, main 8efebee)";

/// One row of a decision function: for `ranks < below` (`usize::MAX`: the
/// `else`), the first `(bound, alg)` with `total_dsize < bound` (`u64::MAX`:
/// the `else`) names Open MPI's algorithm number.
type Row = (usize, &'static [(u64, u8)]);

const MAX: u64 = u64::MAX;
const ANY: usize = usize::MAX;

/// `ompi_coll_tuned_allreduce_intra_dec_fixed`, commutative branch:
/// 2 nonoverlapping, 3 recursive doubling, 4 ring, 5 segmented ring,
/// 6 Rabenseifner. `total_dsize` = S.
const ALLREDUCE: &[Row] = &[
    (
        4,
        &[
            (8, 4),
            (4096, 3),
            (8192, 4),
            (16384, 3),
            (65536, 4),
            (262144, 5),
            (MAX, 6),
        ],
    ),
    (8, &[(16, 4), (8192, 3), (MAX, 6)]),
    (16, &[(8192, 3), (MAX, 6)]),
    (32, &[(64, 5), (4096, 3), (MAX, 6)]),
    (64, &[(128, 5), (MAX, 6)]),
    (128, &[(262144, 3), (MAX, 6)]),
    (256, &[(131072, 2), (262144, 3), (MAX, 6)]),
    (512, &[(4096, 2), (MAX, 6)]),
    (2048, &[(2048, 2), (16384, 3), (MAX, 6)]),
    (4096, &[(2048, 2), (4096, 5), (16384, 3), (MAX, 6)]),
    (ANY, &[(2048, 2), (16384, 5), (32768, 3), (MAX, 6)]),
];

/// `ompi_coll_tuned_alltoall_intra_dec_fixed`: 1 linear, 2 pairwise,
/// 3 modified Bruck, 4 linear sync, 5 two-process. `total_dsize` = one
/// peer's block, S/n. (`communicator_size == 2` is the row `ranks < 3`.)
const ALLTOALL: &[Row] = &[
    (
        3,
        &[
            (2, 2),
            (4, 5),
            (16, 2),
            (64, 5),
            (256, 2),
            (4096, 5),
            (32768, 2),
            (262144, 4),
            (1048576, 5),
            (MAX, 2),
        ],
    ),
    (
        8,
        &[
            (8192, 4),
            (16384, 1),
            (65536, 4),
            (524288, 1),
            (1048576, 2),
            (MAX, 1),
        ],
    ),
    (16, &[(262144, 4), (MAX, 1)]),
    (
        32,
        &[
            (4, 4),
            (512, 3),
            (8192, 4),
            (32768, 1),
            (262144, 4),
            (524288, 1),
            (MAX, 4),
        ],
    ),
    (64, &[(512, 3), (524288, 1), (MAX, 4)]),
    (
        128,
        &[(1024, 3), (2048, 1), (4096, 4), (262144, 1), (MAX, 2)],
    ),
    (256, &[(1024, 3), (2048, 4), (262144, 1), (MAX, 2)]),
    (512, &[(1024, 3), (8192, 4), (32768, 1), (MAX, 2)]),
    (
        1024,
        &[
            (512, 3),
            (8192, 4),
            (16384, 1),
            (131072, 4),
            (262144, 1),
            (MAX, 2),
        ],
    ),
    (
        2048,
        &[
            (512, 3),
            (1024, 4),
            (2048, 1),
            (16384, 4),
            (262144, 1),
            (MAX, 4),
        ],
    ),
    (
        4096,
        &[(1024, 3), (4096, 4), (8192, 1), (131072, 4), (MAX, 1)],
    ),
    (
        ANY,
        &[
            (2048, 3),
            (8192, 4),
            (16384, 1),
            (32768, 4),
            (65536, 1),
            (MAX, 4),
        ],
    ),
];

/// `ompi_coll_tuned_alltoallv_intra_dec_fixed` (by rank count only):
/// 1 basic linear, 2 pairwise.
const ALLTOALLV: &[Row] = &[
    (4, &[(MAX, 2)]),
    (64, &[(MAX, 1)]),
    (128, &[(MAX, 2)]),
    (256, &[(MAX, 1)]),
    (1024, &[(MAX, 2)]),
    (ANY, &[(MAX, 1)]),
];

/// `ompi_coll_tuned_barrier_intra_dec_fixed` (by rank count only):
/// 1 linear, 3 recursive doubling, 4 Bruck, 6 tree.
const BARRIER: &[Row] = &[
    (4, &[(MAX, 3)]),
    (8, &[(MAX, 1)]),
    (64, &[(MAX, 3)]),
    (256, &[(MAX, 4)]),
    (512, &[(MAX, 6)]),
    (1024, &[(MAX, 4)]),
    (4096, &[(MAX, 6)]),
    (ANY, &[(MAX, 4)]),
];

/// `ompi_coll_tuned_bcast_intra_dec_fixed`: 1 basic linear, 2 chain,
/// 3 pipeline, 4 split binary tree, 5 binary tree, 6 binomial, 7 k-nomial,
/// 8 scatter + allgather. `total_dsize` = S.
const BCAST: &[Row] = &[
    (
        4,
        &[
            (32, 3),
            (256, 5),
            (512, 3),
            (1024, 7),
            (32768, 1),
            (131072, 5),
            (262144, 2),
            (524288, 1),
            (1048576, 6),
            (MAX, 5),
        ],
    ),
    (
        8,
        &[
            (64, 5),
            (128, 6),
            (2048, 5),
            (8192, 6),
            (1048576, 1),
            (MAX, 2),
        ],
    ),
    (
        16,
        &[(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6), (MAX, 1)],
    ),
    (32, &[(4096, 7), (1048576, 6), (MAX, 8)]),
    (64, &[(2048, 6), (MAX, 7)]),
    (128, &[(MAX, 7)]),
    (256, &[(2, 6), (16384, 5), (32768, 1), (65536, 5), (MAX, 7)]),
    (1024, &[(16384, 7), (32768, 4), (MAX, 7)]),
    (2048, &[(524288, 7), (MAX, 8)]),
    (4096, &[(262144, 7), (MAX, 8)]),
    (ANY, &[(8192, 7), (16384, 5), (262144, 7), (MAX, 8)]),
];

/// `ompi_coll_tuned_reduce_intra_dec_fixed`, commutative branch: 1 linear,
/// 2 chain, 3 pipeline, 4 binary, 5 binomial, 6 in-order binary,
/// 7 Rabenseifner. `total_dsize` = S.
const REDUCE: &[Row] = &[
    (
        4,
        &[
            (8, 7),
            (16, 4),
            (32, 3),
            (262144, 1),
            (524288, 3),
            (1048576, 2),
            (MAX, 3),
        ],
    ),
    (
        8,
        &[
            (4096, 4),
            (65536, 2),
            (262144, 5),
            (524288, 1),
            (1048576, 5),
            (MAX, 1),
        ],
    ),
    (16, &[(8192, 4), (MAX, 5)]),
    (32, &[(4096, 4), (MAX, 5)]),
    (256, &[(MAX, 5)]),
    (512, &[(8192, 5), (16384, 6), (MAX, 5)]),
    (2048, &[(MAX, 5)]),
    (
        4096,
        &[(512, 5), (1024, 6), (8192, 5), (16384, 6), (MAX, 5)],
    ),
    (
        ANY,
        &[
            (16, 5),
            (32, 6),
            (1024, 5),
            (2048, 6),
            (8192, 5),
            (16384, 6),
            (MAX, 5),
        ],
    ),
];

/// `ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed`, commutative
/// branch: 1 basic linear, 2 recursive doubling, 3 recursive halving,
/// 4 butterfly. `total_dsize` = one rank's block, S/n.
const REDUCE_SCATTER_BLOCK: &[Row] = &[
    (
        4,
        &[
            (4, 2),
            (8, 4),
            (16, 3),
            (128, 4),
            (256, 3),
            (4096, 4),
            (8192, 3),
            (131072, 4),
            (MAX, 1),
        ],
    ),
    (
        8,
        &[
            (8, 3),
            (32, 2),
            (256, 4),
            (8192, 3),
            (16384, 4),
            (1048576, 3),
            (MAX, 1),
        ],
    ),
    (
        16,
        &[
            (4, 1),
            (32, 3),
            (128, 4),
            (524288, 3),
            (4194304, 1),
            (MAX, 4),
        ],
    ),
    (
        32,
        &[(32, 1), (524288, 3), (2097152, 1), (4194304, 3), (MAX, 4)],
    ),
    (ANY, &[(4, 3), (16, 1), (65536, 4), (262144, 1), (MAX, 4)]),
];

/// `ompi_coll_tuned_allgather_intra_dec_fixed`: 2 Bruck, 3 recursive
/// doubling, 4 ring, 5 neighbor exchange, 6 two-process. `total_dsize` =
/// one rank's block, S/n. (`communicator_size == 2` is the row `ranks < 3`.)
const ALLGATHER: &[Row] = &[
    (3, &[(MAX, 6)]),
    (32, &[(MAX, 3)]),
    (64, &[(1024, 3), (65536, 5), (MAX, 4)]),
    (128, &[(512, 3), (65536, 5), (MAX, 4)]),
    (
        256,
        &[(512, 3), (131072, 5), (524288, 4), (1048576, 5), (MAX, 4)],
    ),
    (
        512,
        &[
            (32, 3),
            (128, 2),
            (1024, 3),
            (131072, 5),
            (524288, 4),
            (1048576, 5),
            (MAX, 4),
        ],
    ),
    (1024, &[(64, 3), (256, 2), (2048, 3), (MAX, 5)]),
    (
        2048,
        &[
            (4, 3),
            (8, 2),
            (16, 3),
            (32, 2),
            (256, 3),
            (512, 2),
            (4096, 3),
            (MAX, 5),
        ],
    ),
    (4096, &[(32, 2), (128, 3), (512, 2), (4096, 3), (MAX, 5)]),
    (
        ANY,
        &[(2, 3), (8, 2), (16, 3), (512, 2), (4096, 3), (MAX, 5)],
    ),
];

/// `ompi_coll_tuned_gather_intra_dec_fixed`: 1 basic linear, 2 binomial,
/// 3 linear sync. `total_dsize` = one rank's block, S/n.
const GATHER: &[Row] = &[
    (
        4,
        &[
            (2, 3),
            (4, 1),
            (32768, 2),
            (65536, 1),
            (131072, 2),
            (MAX, 3),
        ],
    ),
    (
        8,
        &[(1024, 2), (8192, 1), (32768, 2), (262144, 1), (MAX, 3)],
    ),
    (256, &[(MAX, 2)]),
    (512, &[(2048, 2), (8192, 1), (MAX, 2)]),
    (ANY, &[(MAX, 2)]),
];

/// `ompi_coll_tuned_scatter_intra_dec_fixed`: 1 basic linear, 2 binomial,
/// 3 linear nonblocking. `total_dsize` = one rank's block, S/n.
const SCATTER: &[Row] = &[
    (4, &[(2, 3), (131072, 1), (262144, 3), (MAX, 1)]),
    (
        8,
        &[
            (2048, 2),
            (4096, 1),
            (8192, 2),
            (32768, 1),
            (1048576, 3),
            (MAX, 1),
        ],
    ),
    (16, &[(16384, 2), (1048576, 3), (MAX, 1)]),
    (32, &[(16384, 2), (32768, 1), (MAX, 3)]),
    (64, &[(512, 2), (8192, 3), (16384, 2), (MAX, 3)]),
    (ANY, &[(512, 2), (MAX, 3)]),
];

/// The algorithm number `table` gives for `n` ranks and `total` bytes, and
/// the rule in words (`16 ≤ ranks < 32, 4 KiB ≤ S`), `what` naming the
/// byte count (`S`, `S/n`).
fn decide(table: &[Row], n: usize, total: u64, what: &str) -> Option<(u8, String)> {
    let i = table.iter().position(|&(below, _)| n < below)?;
    let lo = if i == 0 { 0 } else { table[i - 1].0 };
    let (hi, cuts) = table[i];
    let ranks = match (lo, hi) {
        (0, 3) => "2 ranks".to_string(),
        (0, h) => format!("ranks < {h}"),
        (l, ANY) => format!("ranks ≥ {l}"),
        (l, h) => format!("{l} ≤ ranks < {h}"),
    };
    let j = cuts.iter().position(|&(bound, _)| total < bound)?;
    let blo = if j == 0 { 0 } else { cuts[j - 1].0 };
    let (bhi, alg) = cuts[j];
    let size = match (blo, bhi) {
        (0, MAX) => None,
        (0, h) => Some(format!("{what} < {}", format_bytes(h))),
        (l, MAX) => Some(format!("{what} ≥ {}", format_bytes(l))),
        (l, h) => Some(format!(
            "{} ≤ {what} < {}",
            format_bytes(l),
            format_bytes(h)
        )),
    };
    let rule = match size {
        Some(s) => format!("{ranks}, {s}"),
        None => ranks,
    };
    Some((alg, rule))
}

/// Open MPI's algorithm `alg` for `primitive` as ours, and its name (with
/// "X stands in" where ours is not the same algorithm). `count` is the
/// element count (the Allreduce ring's fallback reads it).
fn ours(primitive: Primitive, alg: u8, n: usize, count: u64) -> Option<(Algorithm, String)> {
    use Algorithm::*;
    use Primitive::*;
    let pow2 = n.is_power_of_two();
    let halving = |name: &str| {
        if pow2 {
            (Rhd, name.to_string())
        } else {
            (
                Nb,
                format!("{name}; nb (Bruck) stands in, rhd needing 2^k ranks"),
            )
        }
    };
    let (a, name): (Algorithm, String) = match (primitive, alg) {
        (AllReduce, 2) => (
            Rhd,
            "nonoverlapping (MPI_Reduce, then MPI_Bcast); rhd stands in".into(),
        ),
        (AllReduce, 3) => (
            Rhd,
            "recursive doubling (the whole buffer at every step); rhd, which halves it, stands in"
                .into(),
        ),
        (AllReduce, 4 | 5) if count < n as u64 => (
            Rhd,
            "ring, which falls back to recursive doubling when count < ranks; rhd stands in".into(),
        ),
        (AllReduce, 4) => (Ring, "ring".into()),
        (AllReduce, 5) => (
            Ring,
            "segmented ring (no segment size given: the plain ring)".into(),
        ),
        (AllReduce, 6) => (Rhd, "Rabenseifner (reduce-scatter + allgather)".into()),
        (AllGather, 2) => (Nb, "Bruck".into()),
        (AllGather, 3) if pow2 => (Rhd, "recursive doubling".into()),
        (AllGather, 3) => (
            Nb,
            "recursive doubling, which falls back to Bruck off powers of 2".into(),
        ),
        (AllGather, 4) => (Ring, "ring".into()),
        (AllGather, 5) => (Ring, "neighbor exchange; ring stands in".into()),
        (AllGather, 6) => (
            Ring,
            "two-process exchange (on 2 ranks the ring's one step)".into(),
        ),
        (ReduceScatter, 1) => (
            Mesh,
            "basic linear (MPI_Reduce to rank 0, then MPI_Scatter); mesh stands in".into(),
        ),
        (ReduceScatter, 2) => halving("recursive doubling"),
        (ReduceScatter, 3) => halving("recursive halving"),
        (ReduceScatter, 4) => halving("butterfly"),
        (Broadcast | Reduce, 1) => (Star, "basic linear".into()),
        (Broadcast | Reduce, 2) => (Ring, "chain".into()),
        (Broadcast | Reduce, 3) => (Ring, "pipeline (a segmented chain)".into()),
        (Broadcast, 4) => (
            Tree,
            "split binary tree; tree (binomial) stands in".into(),
        ),
        (Broadcast, 5) | (Reduce, 4) => (Tree, "binary tree; tree (binomial) stands in".into()),
        (Broadcast, 6) | (Reduce, 5) => (Tree, "binomial tree".into()),
        (Broadcast, 7) => (Tree, "4-nomial tree; tree (binomial) stands in".into()),
        (Broadcast, 8) => (
            Nhr,
            "scatter + allgather; nhr (binomial scatter, then an allgather) stands in".into(),
        ),
        (Reduce, 6) => (
            Tree,
            "in-order binary tree; tree (binomial) stands in".into(),
        ),
        (Reduce, 7) => (
            Mesh,
            "Rabenseifner (reduce-scatter + gather); mesh (reduce-scatter, then every block to the root) stands in"
                .into(),
        ),
        (Gather | Scatter, 1) => (Star, "basic linear".into()),
        (Gather | Scatter, 2) => (Tree, "binomial tree".into()),
        (Gather, 3) => (Star, "linear sync; star stands in".into()),
        (Scatter, 3) => (Star, "linear nonblocking; star stands in".into()),
        (AlltoAll | AlltoAllV, 1) => (Mesh, "linear (every isend / irecv at once)".into()),
        (AlltoAll | AlltoAllV, 2) => (Pairwise, "pairwise exchange".into()),
        (AlltoAll, 3) => (Nb, "modified Bruck".into()),
        (AlltoAll, 4) => (
            Mesh,
            "linear sync (alltoall_algorithm_max_requests 0: every request at once)".into(),
        ),
        (AlltoAll, 5) => (
            Pairwise,
            "two-process exchange (on 2 ranks pairwise's one step)".into(),
        ),
        (Barrier, 1) => (
            Mesh,
            "linear (all to rank 0, then rank 0 to all); mesh stands in".into(),
        ),
        (Barrier, 2) => (Ring, "double ring".into()),
        (Barrier, 3) => (
            Nb,
            "recursive doubling; nb (the dissemination barrier) stands in".into(),
        ),
        (Barrier, 4) => (Nb, "Bruck (dissemination)".into()),
        (Barrier, 6) => (
            Nb,
            "tree; nb (the dissemination barrier) stands in".into(),
        ),
        _ => return None,
    };
    Some((a, name))
}

/// Open MPI's algorithm for `call` (module doc), or `None` where its rules
/// name no algorithm (SendRecv is point to point: `ring`'s one step).
pub fn choose(call: &Call) -> Option<Choice> {
    use Primitive::*;
    let n = call.ranks;
    let s = call.bytes;
    let block = s / n.max(1) as u64;
    let count = s / call.elem_bytes.max(1);
    let (table, total, what) = match call.primitive {
        AllReduce => (ALLREDUCE, s, "S"),
        Broadcast => (BCAST, s, "S"),
        Reduce => (REDUCE, s, "S"),
        AllGather => (ALLGATHER, block, "S/n"),
        ReduceScatter => (REDUCE_SCATTER_BLOCK, block, "S/n"),
        Gather => (GATHER, block, "S/n"),
        Scatter => (SCATTER, block, "S/n"),
        AlltoAll => (ALLTOALL, block, "S/n"),
        AlltoAllV => (ALLTOALLV, s, "S"),
        Barrier => (BARRIER, 0, "S"),
        SendRecv => {
            return Some(Choice {
                algorithm: Algorithm::Ring,
                why: "point to point, to the next rank".to_string(),
            })
        }
    };
    let (alg, rule) = decide(table, n, total, what)?;
    let (algorithm, name) = ours(call.primitive, alg, n, count)?;
    Some(Choice {
        algorithm,
        why: format!("{SOURCE}: {rule}: {name}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::library::Library;
    use crate::engine::topology::Topology;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;

    /// The choice for `p` on `n` ranks and `s` bytes of 4-byte elements.
    fn pick(p: Primitive, n: usize, s: u64) -> Choice {
        pick_elem(p, n, s, 4)
    }

    fn pick_elem(p: Primitive, n: usize, s: u64, elem_bytes: u64) -> Choice {
        let topo = Topology::default();
        let call = Call {
            topology: &topo,
            primitive: p,
            ranks: n,
            bytes: s,
            nvls_ok: false,
            elem_bytes,
        };
        choose(&call).unwrap_or_else(|| panic!("no choice for {p:?} n={n} s={s}"))
    }

    fn alg(p: Primitive, n: usize, s: u64) -> Algorithm {
        pick(p, n, s).algorithm
    }

    #[test]
    fn allreduce() {
        use Primitive::AllReduce as P;
        // comm 8..16: total < 8192 → 3 recursive doubling; else 6 Rabenseifner.
        assert_eq!(alg(P, 8, 8 * KIB - 4), Algorithm::Rhd);
        let c = pick(P, 8, 8 * KIB - 4);
        assert!(c
            .why
            .contains("8 ≤ ranks < 16, S < 8 KiB: recursive doubling"));
        assert!(c.why.starts_with(SOURCE));
        let c = pick(P, 8, 8 * KIB);
        assert_eq!(c.algorithm, Algorithm::Rhd);
        assert!(c.why.contains("S ≥ 8 KiB: Rabenseifner"), "{}", c.why);
        // comm < 4: 4 KiB ≤ total < 8 KiB → 4 ring; 8 KiB ≤ total < 16 KiB → 3.
        assert_eq!(alg(P, 2, 4 * KIB), Algorithm::Ring);
        assert_eq!(alg(P, 2, 8 * KIB - 4), Algorithm::Ring);
        assert_eq!(alg(P, 2, 8 * KIB), Algorithm::Rhd);
        // comm < 4: 64 KiB ≤ total < 256 KiB → 5 segmented ring (the plain ring).
        let c = pick(P, 3, 64 * KIB);
        assert_eq!(c.algorithm, Algorithm::Ring);
        assert!(c.why.contains("segmented ring"));
        // comm < 4: total < 8 → 4 ring; with 4-byte elements count 1 < ranks:
        // the ring's own fallback to recursive doubling.
        assert_eq!(alg(P, 2, 4), Algorithm::Rhd);
        assert!(pick(P, 2, 4).why.contains("falls back"));
        // ... with 1-byte elements count 7 ≥ 3 ranks: the ring.
        assert_eq!(pick_elem(P, 3, 7, 1).algorithm, Algorithm::Ring);
        // comm 32..64: total < 128 → 5 segmented ring; 16 fp32 elements < 32 ranks.
        assert_eq!(alg(P, 32, 64), Algorithm::Rhd);
        assert_eq!(pick_elem(P, 32, 64, 1).algorithm, Algorithm::Ring);
        // comm 128..256: total < 128 KiB → 2 nonoverlapping (rhd stands in).
        let c = pick(P, 128, 64 * KIB);
        assert_eq!(c.algorithm, Algorithm::Rhd);
        assert!(c
            .why
            .contains("128 ≤ ranks < 256, S < 128 KiB: nonoverlapping"));
        // comm ≥ 4096: total ≥ 32 KiB → 6 Rabenseifner.
        assert!(pick(P, 4096, 32 * KIB)
            .why
            .contains("ranks ≥ 4096, S ≥ 32 KiB: Rabenseifner"));
    }

    #[test]
    fn allgather() {
        use Primitive::AllGather as P;
        // comm == 2 → 6 two-process.
        assert_eq!(alg(P, 2, MIB), Algorithm::Ring);
        assert!(pick(P, 2, MIB).why.contains("2 ranks: two-process"));
        // comm 3..32 → 3 recursive doubling; Bruck off powers of 2.
        assert_eq!(alg(P, 16, 64 * MIB), Algorithm::Rhd);
        assert_eq!(alg(P, 12, 64 * KIB), Algorithm::Nb);
        assert_eq!(alg(P, 31, 64 * KIB), Algorithm::Nb);
        // comm 32..64: per-rank total < 1024 → 3; < 65536 → 5 neighbor; else 4 ring.
        // The bound is on S/n: 32 ranks × 1 KiB = 32 KiB.
        assert_eq!(alg(P, 32, 32 * KIB - 32), Algorithm::Rhd);
        let c = pick(P, 32, 32 * KIB);
        assert_eq!(c.algorithm, Algorithm::Ring);
        assert!(c
            .why
            .contains("32 ≤ ranks < 64, 1 KiB ≤ S/n < 64 KiB: neighbor exchange"));
        let c = pick(P, 32, 32 * 64 * KIB);
        assert!(c.why.contains("S/n ≥ 64 KiB: ring"), "{}", c.why);
        // comm 256..512: 32 ≤ per-rank < 128 → 2 Bruck.
        assert_eq!(alg(P, 256, 256 * 64), Algorithm::Nb);
        assert_eq!(alg(P, 256, 256 * 16), Algorithm::Rhd);
    }

    #[test]
    fn reduce_scatter_block() {
        use Primitive::ReduceScatter as P;
        // comm 4..8: per-rank 256 ≤ total < 8192 → 3 recursive halving.
        let c = pick(P, 4, 4 * KIB);
        assert_eq!(c.algorithm, Algorithm::Rhd);
        assert!(c
            .why
            .contains("4 ≤ ranks < 8, 256 B ≤ S/n < 8 KiB: recursive halving"));
        // ... on 6 ranks nb stands in.
        assert_eq!(alg(P, 6, 6 * KIB), Algorithm::Nb);
        // comm 4..8: per-rank ≥ 1 MiB → 1 basic linear (mesh stands in);
        // just below → 3.
        assert_eq!(alg(P, 4, 4 * MIB), Algorithm::Mesh);
        assert_eq!(alg(P, 4, 4 * MIB - 16), Algorithm::Rhd);
        // comm 8..16: 128 ≤ per-rank < 512 KiB → 3; [512 KiB, 4 MiB) → 1; ≥ 4 MiB → 4 butterfly.
        assert_eq!(alg(P, 8, 8 * 512 * KIB - 32), Algorithm::Rhd);
        assert_eq!(alg(P, 8, 8 * 512 * KIB), Algorithm::Mesh);
        let c = pick(P, 8, 8 * 4 * MIB);
        assert_eq!(c.algorithm, Algorithm::Rhd);
        assert!(c.why.contains("butterfly"));
    }

    #[test]
    fn bcast() {
        use Primitive::Broadcast as P;
        // comm 4..8: 8192 ≤ total < 1 MiB → 1 basic linear; ≥ 1 MiB → 2 chain.
        assert_eq!(alg(P, 4, 8 * KIB - 4), Algorithm::Tree);
        assert_eq!(alg(P, 4, 8 * KIB), Algorithm::Star);
        assert_eq!(alg(P, 4, MIB - 4), Algorithm::Star);
        assert_eq!(alg(P, 4, MIB), Algorithm::Ring);
        // comm 16..32: total < 4096 → 7 knomial; < 1 MiB → 6 binomial; else 8 scatter-allgather.
        assert!(pick(P, 16, 4 * KIB - 4).why.contains("4-nomial"));
        let c = pick(P, 16, 4 * KIB);
        assert_eq!(c.algorithm, Algorithm::Tree);
        assert!(c
            .why
            .contains("16 ≤ ranks < 32, 4 KiB ≤ S < 1 MiB: binomial tree"));
        assert_eq!(alg(P, 16, MIB), Algorithm::Nhr);
        // comm < 4: 256 KiB ≤ total < 512 KiB → 1 basic linear.
        assert_eq!(alg(P, 2, 256 * KIB), Algorithm::Star);
    }

    #[test]
    fn reduce() {
        use Primitive::Reduce as P;
        // comm 8..16: total < 8192 → 4 binary; else 5 binomial.
        assert!(pick(P, 8, 8 * KIB - 4)
            .why
            .contains("binary tree; tree (binomial) stands in"));
        let c = pick(P, 8, 8 * KIB);
        assert_eq!(c.algorithm, Algorithm::Tree);
        assert!(c.why.contains("8 ≤ ranks < 16, S ≥ 8 KiB: binomial tree"));
        // comm < 4: 32 ≤ total < 256 KiB → 1 linear; < 512 KiB → 3 pipeline.
        assert_eq!(alg(P, 2, 256 * KIB - 4), Algorithm::Star);
        assert_eq!(alg(P, 2, 256 * KIB), Algorithm::Ring);
        // comm < 4: total < 8 → 7 Rabenseifner (mesh stands in).
        assert_eq!(alg(P, 2, 4), Algorithm::Mesh);
        // comm 4..8: 4096 ≤ total < 65536 → 2 chain.
        assert_eq!(alg(P, 4, 4 * KIB), Algorithm::Ring);
    }

    #[test]
    fn alltoall() {
        use Primitive::AlltoAll as P;
        // comm 8..16: per-peer total < 256 KiB → 4 linear sync; else 1 linear.
        let c = pick(P, 8, 8 * (256 * KIB - 4));
        assert_eq!(c.algorithm, Algorithm::Mesh);
        assert!(c.why.contains("8 ≤ ranks < 16, S/n < 256 KiB: linear sync"));
        assert!(pick(P, 8, 8 * 256 * KIB)
            .why
            .contains("S/n ≥ 256 KiB: linear (every"));
        // comm 32..64: per-peer < 512 → 3 modified Bruck.
        assert_eq!(alg(P, 32, 32 * 508), Algorithm::Nb);
        assert_eq!(alg(P, 32, 32 * 512), Algorithm::Mesh);
        // comm 64..128: per-peer ≥ 256 KiB → 2 pairwise.
        assert_eq!(alg(P, 64, 64 * 256 * KIB), Algorithm::Pairwise);
        assert_eq!(alg(P, 64, 64 * (256 * KIB - 4)), Algorithm::Mesh);
        // comm == 2: 256 ≤ per-peer < 4096 → 5 two-process.
        assert_eq!(alg(P, 2, 2 * 256), Algorithm::Pairwise);
        assert!(pick(P, 2, 2 * 256).why.contains("two-process"));
        // Alltoallv by ranks: comm < 4 → 2 pairwise; 4..64 → 1 basic linear.
        assert_eq!(alg(Primitive::AlltoAllV, 3, MIB), Algorithm::Pairwise);
        assert_eq!(alg(Primitive::AlltoAllV, 4, MIB), Algorithm::Mesh);
    }

    #[test]
    fn barrier() {
        use Primitive::Barrier as P;
        // comm < 4 → 3 recursive doubling; 4..8 → 1 linear; 8..64 → 3; 64..256 → 4 Bruck.
        let c = pick(P, 3, 0);
        assert_eq!(c.algorithm, Algorithm::Nb);
        assert!(c.why.contains("ranks < 4: recursive doubling"));
        assert_eq!(alg(P, 4, 0), Algorithm::Mesh);
        assert_eq!(alg(P, 7, 0), Algorithm::Mesh);
        assert_eq!(alg(P, 8, 0), Algorithm::Nb);
        assert!(pick(P, 64, 0).why.contains("64 ≤ ranks < 256: Bruck"));
    }

    #[test]
    fn gather_scatter() {
        // Gather comm 4..8: per-rank < 1024 → 2 binomial; < 8192 → 1 basic linear.
        assert_eq!(alg(Primitive::Gather, 4, 4 * (KIB - 4)), Algorithm::Tree);
        assert_eq!(alg(Primitive::Gather, 4, 4 * KIB), Algorithm::Star);
        // Gather comm 8..256 → 2 binomial.
        assert_eq!(alg(Primitive::Gather, 8, 64 * MIB), Algorithm::Tree);
        // Scatter comm 8..16: per-rank < 16 KiB → 2 binomial; < 1 MiB → 3 linear nb.
        assert_eq!(
            alg(Primitive::Scatter, 8, 8 * (16 * KIB - 4)),
            Algorithm::Tree
        );
        let c = pick(Primitive::Scatter, 8, 8 * 16 * KIB);
        assert_eq!(c.algorithm, Algorithm::Star);
        assert!(c
            .why
            .contains("8 ≤ ranks < 16, 16 KiB ≤ S/n < 1 MiB: linear nonblocking"));
    }

    /// Every choice is an algorithm that implements the call and that
    /// `Library::runs` lists for MPI.
    #[test]
    fn choices_run() {
        for p in Primitive::ALL {
            for n in [
                2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 100, 128, 200, 256, 384, 512, 1000,
                1024, 1500, 2048, 3000, 4096, 5000,
            ] {
                let mut s = 1u64;
                while s <= 1 << 34 {
                    let c = pick(p, n, s);
                    assert!(
                        c.algorithm.supports(p, n) || (p == Primitive::AlltoAllV && n > 16),
                        "{p:?} n={n} s={s}: {c:?}"
                    );
                    assert!(
                        Library::Mpi.runs(c.algorithm, p),
                        "{p:?} n={n} s={s}: {c:?}"
                    );
                    s *= 2;
                }
            }
        }
    }
}
