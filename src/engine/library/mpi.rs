//! MPI's choices: MPICH's default algorithm selection (the `MPIR_CVAR_*`
//! thresholds of `src/mpi/coll/*`, Thakur, Rabenseifner & Gropp 2005),
//! mapped onto our catalogue. Open MPI's `tuned` component decides by
//! other tables; MPICH's are the documented textbook ones.
//!
//! - Allreduce: recursive doubling up to 2 KiB
//!   (`ALLREDUCE_SHORT_MSG_SIZE` 2048), Rabenseifner (reduce-scatter +
//!   allgather) above; both are halving-doubling exchanges: `rhd`.
//! - Allgather: recursive doubling for power-of-2 sizes below 512 KiB
//!   (`ALLGATHER_LONG_MSG_SIZE`), Bruck below 80 KiB
//!   (`ALLGATHER_SHORT_MSG_SIZE`), else ring.
//! - Reduce_scatter: recursive halving below 512 KiB for power-of-2 sizes,
//!   else (pairwise in MPICH) ring.
//! - Bcast: binomial tree below 12 KiB or 8 ranks (`BCAST_SHORT_MSG_SIZE`,
//!   `BCAST_MIN_PROCS`), else scatter + allgather (`nhr` Broadcast:
//!   binomial scatter, then an allgather).
//! - Reduce, Scatter, Gather: binomial tree. Alltoall: Bruck up to 256 B
//!   with ≥ 8 ranks, all pairs at once up to 32 KiB, pairwise above.
//!   Barrier: dissemination (`nb`).

use super::{Call, Choice};
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;

/// MPICH's algorithm for `call` (module doc).
pub fn choose(call: &Call) -> Option<Choice> {
    use Primitive::*;
    let n = call.ranks;
    let s = call.bytes;
    let pow2 = n.is_power_of_two();
    let (a, why) = match call.primitive {
        AllReduce => (
            Algorithm::Rhd,
            if s <= 2048 {
                "MPICH: recursive doubling up to 2 KiB (ALLREDUCE_SHORT_MSG_SIZE)"
            } else {
                "MPICH: Rabenseifner's reduce-scatter + allgather above 2 KiB"
            },
        ),
        AllGather if pow2 && s < 512 << 10 => (
            Algorithm::Rhd,
            "MPICH: recursive doubling (power-of-2 ranks, < 512 KiB)",
        ),
        AllGather if s < 80 << 10 => (
            Algorithm::Nb,
            "MPICH: Bruck below 80 KiB (ALLGATHER_SHORT_MSG_SIZE)",
        ),
        AllGather => (Algorithm::Ring, "MPICH: ring for long messages"),
        ReduceScatter if pow2 && s < 512 << 10 => {
            (Algorithm::Rhd, "MPICH: recursive halving (< 512 KiB)")
        }
        ReduceScatter => (
            Algorithm::Ring,
            "MPICH: pairwise exchange for long messages (ring stands in)",
        ),
        Broadcast if s < 12 << 10 || n < 8 => (
            Algorithm::Tree,
            "MPICH: binomial tree (< 12 KiB or < 8 ranks)",
        ),
        Broadcast => (
            Algorithm::Nhr,
            "MPICH: scatter + allgather for long messages",
        ),
        Reduce | Scatter | Gather => (Algorithm::Tree, "MPICH: binomial tree"),
        AlltoAll if s <= 256 && n >= 8 => {
            (Algorithm::Nb, "MPICH: Bruck for ≤ 256 B with ≥ 8 ranks")
        }
        AlltoAll | AlltoAllV if s <= 32 << 10 => (
            Algorithm::Mesh,
            "MPICH: all isend/irecv at once up to 32 KiB",
        ),
        AlltoAll | AlltoAllV => (
            Algorithm::Pairwise,
            "MPICH: pairwise exchange for long messages",
        ),
        Barrier => (Algorithm::Nb, "MPICH: dissemination barrier"),
        SendRecv => (Algorithm::Ring, "point to point, to the next rank"),
    };
    Some(Choice {
        algorithm: a,
        why: why.to_string(),
    })
}
