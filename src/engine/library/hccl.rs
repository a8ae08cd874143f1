//! HCCL's choices on Atlas A2 (910B) and Atlas training (910A) machines.
//!
//! Source: HCCL's A2 operators (hicann/hcomm `src/legacy/ascend910/
//! algorithm/impl/operator/*_operator.cc`, `SelectAlgfor910B`, read at
//! libochao-huawei/hcomm `8958adb`, the same code as upstream hicann/hcomm
//! `48493ec`), `alg_configurator.cc` and `coll_alg_operator.cc`, and
//! hicann/hccl `docs/zh/user_guide/hccl_env/HCCL_ALGO.md` (`09300b7`).
//! Single-operator (op-base) mode, PyTorch's eager default, RDMA-Lite
//! available, deterministic mode off, AIV mode off (both defaults).
//!
//! - **level0** (inside a server) follows the hardware: a 910B server whose
//!   NPUs are pairwise linked by HCCS is a mesh (`ALG_LEVEL0_NP_MESH`);
//!   other servers a ring (`GetDefaultAlgoLevel0Module`: `8P_RING`).
//!   Users cannot configure it.
//! - **One server**: mesh for AllReduce, ReduceScatter, AllGather,
//!   Broadcast, Reduce, AlltoAll(V) and Barrier (`AllReduceMeshExecutor`,
//!   `BroadCastMeshExecutor`, `ReduceMeshExecutor`, AlltoAll
//!   `DirectFullmesh`); on a ring server the ring executors
//!   (`AllReduceRingExecutor`, `BroadCastRingExecutor`, `ReduceRingPlusHd`)
//!   and pairwise AlltoAll. Scatter / Gather: the root talks to every
//!   peer at once (star).
//! - **Several servers** (level1, `AutoSelectAlgTypeLevel1`): AllReduce
//!   runs HCCL's pipeline when `S / ranks ≥ 1 MiB`
//!   (`PIPELINE_ALLREDUCE_MIN_SIZE`), AllGather / ReduceScatter when the
//!   per-rank data `≥ 32 KiB` (`PIPELINE_MIN_SIZE`); below, HCCL's α-β
//!   cost model (60 µs per step) compares ring, NHR and H-D_R between the
//!   servers with ties broken ring > NHR > HD, which picks ring for 2 or 3
//!   servers and NHR from 4 (their data terms are equal; H-D_R's never
//!   smaller): level0 mesh + level1 ring = `hier`, + level1 NHR =
//!   `hier-nhr`. Broadcast: level1 H-D_R (the default ring is "reset to
//!   HD"); our `hier` Broadcast uses a binomial tree between servers, the
//!   same latency form. Reduce: ring below 8 servers when their count is
//!   not a power of 2, else HD: `hier`. AlltoAll: HCCL's default is a staged
//!   two-level AlltoAll (not in our catalogue); `pairwise` is its one-level
//!   alternative (`HCCL_ALGO=level1:pairwise`). Scatter / Gather: `hier`.
//!   Barrier: dissemination (`nb`) stands in.
//! - **The pipeline's task budget.** The pipeline is chosen only while its
//!   task graph fits one FFTS+ graph (`CalcContextNumForPipeline` ≤
//!   `HCCL_FFTS_CAPACITY` = 65535, `coll_alg_operator.cc`): 43 contexts per
//!   server step with 8 NPUs a server, twice for AllReduce, so AllReduce
//!   stops using it above 761 servers and AllGather / ReduceScatter above
//!   1523; the cost model above decides instead.
//! - **Buffer loops** (`CalcLoopMaxCount` of each executor): a message
//!   larger than the CCL buffer (`HCCL_BUFFSIZE`) runs in loops of at most
//!   one buffer, except in the pipeline executors, whose loops hold one
//!   buffer *per rank* (AllReduce, AllGather; ReduceScatter a third of it,
//!   `PIPELINE_DEPTH` 3): [`crate::engine::algorithm::pipeline::loop_bytes`].

use super::{Call, Choice};
use crate::engine::algorithm::{hier, Algorithm};
use crate::engine::collective::Primitive;

/// HCCL enables its AllReduce pipeline from this many bytes per rank
/// (`PIPELINE_ALLREDUCE_MIN_SIZE`, `coll_alg_operator.cc`).
pub const PIPELINE_ALLREDUCE_MIN_BYTES: u64 = 1 << 20;
/// ... its AllGather / ReduceScatter pipeline from this many bytes per
/// rank (`PIPELINE_MIN_SIZE`, with RDMA-Lite).
pub const PIPELINE_MIN_BYTES: u64 = 32 << 10;
/// HCCL's level1 planning latency, µs per step (`LATENCY`).
pub const LEVEL1_STEP_US: f64 = 60.0;
/// The most contexts one FFTS+ task graph holds (`HCCL_FFTS_CAPACITY`).
pub const FFTS_CAPACITY: u64 = 65535;
/// HCCL's conservative count of the FFTS+ contexts its pipeline needs on
/// `m` servers of 8 NPUs (`CalcContextNumForPipeline`): per server step
/// 5 per HCCS peer (35), 7 for RDMA, 1 for the local copy; 4 for the
/// closing barrier and 1 copy; AllReduce runs two such pipelines.
pub fn pipeline_contexts(primitive: Primitive, m: usize) -> u64 {
    let per_step = 5 * (hier::PER_SERVER as u64 - 1) + 7 + 1;
    let one = m as u64 * per_step + 4 + 1;
    if primitive == Primitive::AllReduce {
        2 * one
    } else {
        one
    }
}

/// Is every pair of devices inside each server of `call` linked directly
/// (HCCL's level0 mesh)?
fn level0_mesh(call: &Call) -> bool {
    let t = call.topology;
    let mut start = 0;
    for size in call.nodes() {
        for a in start..start + size {
            for b in a + 1..start + size {
                if t.link_between(a, b).is_none() {
                    return false;
                }
            }
        }
        start += size;
    }
    true
}

/// HCCL's level1 algorithm for AllReduce / AllGather / ReduceScatter on
/// `m` servers below the pipeline threshold: the cost model of
/// `GetDefaultAlgoLevel1V2` (ring `(m-1)·α`, NHR `⌈log2 m⌉·α`, H-D_R
/// `⌈log2 m⌉·α` with a larger data term when `m` is not a power of 2; the
/// ring's and NHR's data terms are equal; ties ring > NHR > HD).
fn level1(m: usize) -> (Algorithm, &'static str) {
    let ring = (m as f64 - 1.0) * LEVEL1_STEP_US;
    let nhr = (m.next_power_of_two().trailing_zeros() as f64) * LEVEL1_STEP_US;
    if nhr < ring {
        (Algorithm::HierNhr, "NHR")
    } else {
        (Algorithm::Hier, "ring")
    }
}

/// HCCL's algorithm for `call` (module doc).
pub fn choose(call: &Call) -> Option<Choice> {
    use Primitive::*;
    let nodes = call.nodes();
    let m = nodes.len();
    let mesh = level0_mesh(call);
    let even = nodes.iter().all(|&k| k == hier::PER_SERVER);
    let per_rank = call.bytes / call.ranks.max(1) as u64;
    let (algorithm, why): (Algorithm, String) = if m <= 1 {
        match (call.primitive, mesh) {
            (Scatter | Gather, _) => (
                Algorithm::Star,
                "HCCL: the root exchanges with every NPU of the server at once".into(),
            ),
            (SendRecv, _) => (Algorithm::Ring, "point to point, to the next rank".into()),
            (_, true) => (
                Algorithm::Mesh,
                "HCCL on one 910B server: level0 is a mesh (every NPU pair has an HCCS link), so its Mesh executors run".into(),
            ),
            (AlltoAll | AlltoAllV, false) => (
                Algorithm::Pairwise,
                "HCCL on a server whose NPUs are not all linked: pairwise AlltoAll".into(),
            ),
            (_, false) => (
                Algorithm::Ring,
                "HCCL on a server whose NPUs are not all linked: level0 is a ring (8P_RING), so its Ring executors run".into(),
            ),
        }
    } else if !(mesh && even) {
        // Not an A2 cluster of 8-NPU mesh servers: HCCL's hierarchical
        // executors (and our hier / pipeline) do not apply.
        match call.primitive {
            AllReduce | ReduceScatter | AllGather | Barrier | SendRecv => (
                Algorithm::Ring,
                "HCCL on servers that are not 8-NPU meshes: one ring over every NPU".into(),
            ),
            AlltoAll | AlltoAllV => (Algorithm::Pairwise, "HCCL: pairwise AlltoAll".into()),
            Broadcast | Reduce => (Algorithm::Nhr, "HCCL: NHR between every NPU".into()),
            Scatter | Gather => (Algorithm::Star, "HCCL: the root talks to every NPU".into()),
        }
    } else {
        let contexts = pipeline_contexts(call.primitive, m);
        let pipeline_size = match call.primitive {
            AllReduce => per_rank >= PIPELINE_ALLREDUCE_MIN_BYTES,
            AllGather | ReduceScatter => per_rank >= PIPELINE_MIN_BYTES,
            _ => false,
        };
        match call.primitive {
            AllReduce | AllGather | ReduceScatter if pipeline_size && contexts > FFTS_CAPACITY => {
                let (a, name) = level1(m);
                (
                    a,
                    format!(
                        "HCCL on {m} servers: its pipeline would need {contexts} FFTS+ task contexts, more than one graph holds (HCCL_FFTS_CAPACITY {FFTS_CAPACITY}), so its α-β level1 cost model decides: mesh inside each server, {name} between servers"
                    ),
                )
            }
            AllReduce if pipeline_size => (
                Algorithm::Pipeline,
                format!(
                    "HCCL on {m} servers: {} per rank ≥ 1 MiB, so its AllReduce pipeline (PIPELINE_ALLREDUCE_MIN_SIZE)",
                    crate::engine::units::format_bytes(per_rank)
                ),
            ),
            AllGather | ReduceScatter if pipeline_size => (
                Algorithm::Pipeline,
                format!(
                    "HCCL on {m} servers: {} per rank ≥ 32 KiB, so its pipeline (PIPELINE_MIN_SIZE)",
                    crate::engine::units::format_bytes(per_rank)
                ),
            ),
            AllReduce | AllGather | ReduceScatter => {
                let (a, name) = level1(m);
                (
                    a,
                    format!(
                        "HCCL on {m} servers below its pipeline threshold: mesh inside each server, {name} between servers (its α-β level1 cost model, 60 µs per step: ring for 2–3 servers, NHR from 4)"
                    ),
                )
            }
            Broadcast | Reduce | Scatter | Gather => (
                Algorithm::Hier,
                format!("HCCL on {m} servers: intra-server mesh, inter-server tree (H-D_R), intra-server mesh"),
            ),
            AlltoAll | AlltoAllV => (
                Algorithm::Pairwise,
                "HCCL's default multi-server AlltoAll is staged (intra, then inter); pairwise is its one-level form (HCCL_ALGO level1:pairwise)".into(),
            ),
            Barrier => (
                Algorithm::Nb,
                "HCCL's Barrier is a tiny AllReduce; the dissemination barrier (nb) stands in".into(),
            ),
            SendRecv => (Algorithm::Ring, "point to point, to the next rank".into()),
        }
    };
    Some(Choice { algorithm, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level1_is_ring_for_two_and_three_servers_nhr_from_four() {
        assert_eq!(level1(2).0, Algorithm::Hier);
        assert_eq!(level1(3).0, Algorithm::Hier);
        assert_eq!(level1(4).0, Algorithm::HierNhr);
        assert_eq!(level1(128).0, Algorithm::HierNhr);
    }

    /// `CalcContextNumForPipeline` by hand: 761 servers, AllReduce:
    /// 2 × (761 × (35 + 7 + 1) + 4 + 1) = 2 × 32 728 = 65 456 ≤ 65 535;
    /// 762: 2 × 32 771 = 65 542 > 65 535. AllGather on 1523 servers:
    /// 1523 × 43 + 5 = 65 494; on 1524: 65 537.
    #[test]
    fn pipeline_fits_one_ffts_graph_up_to_761_servers_for_allreduce() {
        assert_eq!(pipeline_contexts(Primitive::AllReduce, 761), 65_456);
        assert_eq!(pipeline_contexts(Primitive::AllReduce, 762), 65_542);
        assert_eq!(pipeline_contexts(Primitive::AllGather, 1523), 65_494);
        assert_eq!(pipeline_contexts(Primitive::ReduceScatter, 1524), 65_537);
    }
}
