//! The Schedule IR: plain data that says which chunk moves where, and when.
//!
//! Chunk-oriented, like MSCCL-IR. Every rank's buffer (see
//! [`super::collective`]) is cut into `chunks` chunks, `chunks / ranks` per
//! block. A [`Step`] is a set of [`Transfer`]s that may run concurrently.
//!
//! ## Semantics (the reference executor, the workers and the verifier agree)
//! Within a step every transfer reads its source chunks as they were at the
//! start of the step; then the receives are applied in the order the
//! transfers are listed (`Copy` overwrites, `Reduce` computes
//! `dst = op(dst, src)`). The listed order is therefore the reduction order,
//! which makes floating-point results reproducible bit for bit. A transfer
//! moves chunk range `[first, first + count)` of the sender into the same
//! range of the receiver.

use super::collective::{part_range, Primitive};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// What the receiver does with the chunks it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransferKind {
    /// Overwrite the receiver's chunks.
    Copy,
    /// Combine into the receiver's chunks with the reduce op.
    Reduce,
}

/// One message: `src` sends chunks `[first, first + count)` to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Transfer {
    /// Sending rank.
    pub src: usize,
    /// Receiving rank.
    pub dst: usize,
    /// First chunk index.
    pub first: usize,
    /// Number of consecutive chunks.
    pub count: usize,
    /// Copy or reduce at the receiver.
    pub kind: TransferKind,
}

impl Transfer {
    /// The chunk indices this transfer moves.
    pub fn chunks(&self) -> Range<usize> {
        self.first..self.first + self.count
    }
}

/// A set of concurrent transfers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Which phase of the algorithm this step belongs to (e.g. "ReduceScatter").
    pub phase: String,
    /// The transfers, in reduction order.
    pub transfers: Vec<Transfer>,
}

/// A complete algorithm instance for one primitive and rank count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// The collective it implements.
    pub primitive: Primitive,
    /// The algorithm's URL name (`ring`, `mesh`).
    pub algorithm: String,
    /// Number of ranks `n`.
    pub ranks: usize,
    /// Chunks per rank buffer; a multiple of `ranks`.
    pub chunks: usize,
    /// Steps in order.
    pub steps: Vec<Step>,
}

/// One rank's part of a step, in the order a rank performs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankOp {
    /// Send these chunks (as they were at the start of the step) to `to`.
    Send {
        step: usize,
        to: usize,
        first: usize,
        count: usize,
    },
    /// Wait for chunks from `from` and apply them.
    Recv {
        step: usize,
        from: usize,
        first: usize,
        count: usize,
        kind: TransferKind,
    },
}

impl Schedule {
    /// Chunks per block (`chunks / ranks`).
    pub fn chunks_per_block(&self) -> usize {
        self.chunks / self.ranks.max(1)
    }

    /// The block a chunk belongs to.
    pub fn block_of(&self, chunk: usize) -> usize {
        chunk / self.chunks_per_block().max(1)
    }

    /// Element range of `chunk` in a buffer of `elems` elements: blocks are
    /// [`part_range`]s of the buffer, chunks are `part_range`s of their block.
    pub fn chunk_elems(&self, elems: usize, chunk: usize) -> Range<usize> {
        let k = self.chunks_per_block().max(1);
        let block = part_range(elems, self.ranks, chunk / k);
        let inner = part_range(block.len(), k, chunk % k);
        block.start + inner.start..block.start + inner.end
    }

    /// Element range of chunks `[first, first + count)`.
    pub fn range_elems(&self, elems: usize, first: usize, count: usize) -> Range<usize> {
        let a = self.chunk_elems(elems, first).start;
        let b = if count == 0 {
            a
        } else {
            self.chunk_elems(elems, first + count - 1).end
        };
        a..b
    }

    /// Total number of transfers.
    pub fn transfer_count(&self) -> usize {
        self.steps.iter().map(|s| s.transfers.len()).sum()
    }

    /// What `rank` does, in order: per step, first all its sends (in listed
    /// order), then all its receives (in listed order). A worker that runs
    /// these in order, with sends never blocking, cannot deadlock on a schedule
    /// whose steps only depend on earlier steps.
    pub fn rank_ops(&self, rank: usize) -> Vec<RankOp> {
        let mut ops = Vec::new();
        for (step, s) in self.steps.iter().enumerate() {
            for t in s.transfers.iter().filter(|t| t.src == rank) {
                ops.push(RankOp::Send {
                    step,
                    to: t.dst,
                    first: t.first,
                    count: t.count,
                });
            }
            for t in s.transfers.iter().filter(|t| t.dst == rank) {
                ops.push(RankOp::Recv {
                    step,
                    from: t.src,
                    first: t.first,
                    count: t.count,
                    kind: t.kind,
                });
            }
        }
        ops
    }

    /// Pairs of ranks that exchange at least one message (`a < b`), sorted.
    pub fn peer_pairs(&self) -> Vec<(usize, usize)> {
        let mut v: Vec<(usize, usize)> = self
            .steps
            .iter()
            .flat_map(|s| s.transfers.iter())
            .map(|t| (t.src.min(t.dst), t.src.max(t.dst)))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Schedule {
        Schedule {
            primitive: Primitive::AllGather,
            algorithm: "test".into(),
            ranks: 2,
            chunks: 4,
            steps: vec![Step {
                phase: "AllGather".into(),
                transfers: vec![
                    Transfer {
                        src: 0,
                        dst: 1,
                        first: 0,
                        count: 2,
                        kind: TransferKind::Copy,
                    },
                    Transfer {
                        src: 1,
                        dst: 0,
                        first: 2,
                        count: 2,
                        kind: TransferKind::Copy,
                    },
                ],
            }],
        }
    }

    #[test]
    fn chunk_ranges_respect_blocks() {
        let s = tiny();
        // 10 elements: blocks [0,5) [5,10); chunks [0,2) [2,5) [5,7) [7,10).
        assert_eq!(s.chunk_elems(10, 0), 0..2);
        assert_eq!(s.chunk_elems(10, 1), 2..5);
        assert_eq!(s.chunk_elems(10, 2), 5..7);
        assert_eq!(s.chunk_elems(10, 3), 7..10);
        assert_eq!(s.range_elems(10, 2, 2), 5..10);
        assert_eq!(s.block_of(3), 1);
    }

    #[test]
    fn rank_ops_send_before_receive() {
        let s = tiny();
        assert_eq!(
            s.rank_ops(0),
            vec![
                RankOp::Send {
                    step: 0,
                    to: 1,
                    first: 0,
                    count: 2
                },
                RankOp::Recv {
                    step: 0,
                    from: 1,
                    first: 2,
                    count: 2,
                    kind: TransferKind::Copy
                },
            ]
        );
        assert_eq!(s.peer_pairs(), vec![(0, 1)]);
    }

    #[test]
    fn schedule_is_serde_data() {
        let s = tiny();
        let json = serde_json::to_string(&s).unwrap();
        let back: Schedule = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
    }
}
