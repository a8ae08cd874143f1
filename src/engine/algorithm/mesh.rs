//! Full-mesh algorithms: HCCL's intra-server "Mesh" (hccl
//! `docs/en/user_guide/coll_algo_intro/Mesh.md`): on a server where every
//! pair of NPUs has its own HCCS link, every rank exchanges with all `n - 1`
//! peers at once, so each phase is a single step with every link busy.
//!
//! - ReduceScatter: one step; rank `r` sends chunk `j` to rank `j` for every
//!   `j != r`; rank `j` reduces the `n - 1` arrivals in ascending sender order.
//! - AllGather: one step; rank `r` sends chunk `r` to every peer.
//! - AllReduce: ReduceScatter then AllGather (2 steps).
//!
//! Cost (uncontended full mesh, HCCL `Mesh.md`): AllReduce
//! `2α + 2·S/n·β + (n-1)/n·Sγ`; RS `α + S/n·β + (n-1)/n·Sγ`; AG `α + S/n·β`.

use crate::engine::collective::Primitive;
use crate::engine::schedule::{Schedule, Step, Transfer, TransferKind};

fn reduce_scatter(n: usize) -> Step {
    // Ordered by receiver, then by sender: the receiver reduces in rank order.
    let transfers = (0..n)
        .flat_map(|dst| {
            (0..n)
                .filter(move |&src| src != dst)
                .map(move |src| Transfer {
                    src,
                    dst,
                    first: dst,
                    count: 1,
                    kind: TransferKind::Reduce,
                })
        })
        .collect();
    Step {
        phase: "ReduceScatter".into(),
        transfers,
    }
}

fn all_gather(n: usize) -> Step {
    let transfers = (0..n)
        .flat_map(|src| {
            (0..n)
                .filter(move |&dst| dst != src)
                .map(move |dst| Transfer {
                    src,
                    dst,
                    first: src,
                    count: 1,
                    kind: TransferKind::Copy,
                })
        })
        .collect();
    Step {
        phase: "AllGather".into(),
        transfers,
    }
}

/// The mesh schedule for `primitive` on `n >= 2` ranks.
pub fn schedule(primitive: Primitive, n: usize) -> Schedule {
    let steps = match primitive {
        Primitive::ReduceScatter => vec![reduce_scatter(n)],
        Primitive::AllGather => vec![all_gather(n)],
        Primitive::AllReduce => vec![reduce_scatter(n), all_gather(n)],
    };
    Schedule {
        primitive,
        algorithm: "mesh".into(),
        ranks: n,
        chunks: n,
        steps,
    }
}
