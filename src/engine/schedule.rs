//! The Schedule IR: plain data that says which chunk moves where, and when.
//!
//! Chunk-oriented, like MSCCL-IR. Every rank's buffer is cut into blocks by
//! the collective ([`super::collective`]: `n` blocks for most primitives,
//! `2n` for AlltoAll's send and receive areas, ...) and every block into
//! `chunks / blocks` chunks ([`part_range`](super::collective::part_range)s of the block), so chunk `c`
//! lies in block `c / (chunks / blocks)`. A [`Step`] is a set of
//! [`Transfer`]s that may run concurrently. Rooted primitives carry their
//! root ([`Schedule::root`]).
//!
//! ## Semantics (the reference executor, the workers and the verifier agree)
//! Within a step every transfer reads its source chunks as they were at the
//! start of the step; then the receives are applied in the order the
//! transfers are listed (`Copy` overwrites, `Reduce` computes
//! `dst = op(dst, src)`). The listed order is therefore the reduction order,
//! which makes floating-point results reproducible bit for bit. A transfer
//! moves chunk range `[first, first + count)` of the sender into chunk range
//! `[dst_first, dst_first + count)` of the receiver; `dst_first == first`
//! except where a collective moves data between blocks (AlltoAll's send
//! area to the receive area), and then the two ranges always have the same
//! size ([`Schedule::same_shape`], checked by the verifier).

use super::collective::{part_range_u64, Expect, Primitive};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use thiserror::Error;

/// A transfer its schedule cannot carry out ([`Schedule::check_transfer`]):
/// a rank or chunk outside the schedule, no chunk at all, or chunks that
/// change size. The verifier, the executor and the rank workers all report
/// this one type.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("step {step}, transfer {index} (rank {src} -> {dst}, chunks {first}+{count} to chunk {dst_first}): {why}")]
pub struct BadTransfer {
    /// Step index.
    pub step: usize,
    /// Index of the transfer within its step.
    pub index: usize,
    /// Sending rank.
    pub src: usize,
    /// Receiving rank.
    pub dst: usize,
    /// First chunk read.
    pub first: usize,
    /// Chunks moved.
    pub count: usize,
    /// First chunk written.
    pub dst_first: usize,
    /// What is wrong, in words.
    pub why: String,
}

/// What the receiver does with the chunks it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransferKind {
    /// Overwrite the receiver's chunks.
    Copy,
    /// Combine into the receiver's chunks with the reduce op.
    Reduce,
}

/// One message: `src` sends its chunks `[first, first + count)` to `dst`,
/// which applies them to its chunks `[dst_first, dst_first + count)`.
///
/// Serde: `dst_first` may be omitted and then equals `first` (schedules
/// written before it existed keep their meaning).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "TransferWire")]
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
    /// First chunk index at the receiver (usually `first`).
    pub dst_first: usize,
}

#[derive(Deserialize)]
struct TransferWire {
    src: usize,
    dst: usize,
    first: usize,
    count: usize,
    kind: TransferKind,
    #[serde(default)]
    dst_first: Option<usize>,
}

impl From<TransferWire> for Transfer {
    fn from(w: TransferWire) -> Self {
        Transfer {
            src: w.src,
            dst: w.dst,
            first: w.first,
            count: w.count,
            kind: w.kind,
            dst_first: w.dst_first.unwrap_or(w.first),
        }
    }
}

impl Transfer {
    /// A copy of chunks `[first, first + count)` into the same chunks of `dst`.
    pub fn copy(src: usize, dst: usize, first: usize, count: usize) -> Transfer {
        Transfer {
            src,
            dst,
            first,
            count,
            kind: TransferKind::Copy,
            dst_first: first,
        }
    }

    /// A reduce of chunks `[first, first + count)` into the same chunks of `dst`.
    pub fn reduce(src: usize, dst: usize, first: usize, count: usize) -> Transfer {
        Transfer {
            kind: TransferKind::Reduce,
            ..Transfer::copy(src, dst, first, count)
        }
    }

    /// The same transfer, landing at chunk `dst_first` of the receiver.
    pub fn to_chunk(self, dst_first: usize) -> Transfer {
        Transfer { dst_first, ..self }
    }

    /// The sender's chunk indices this transfer moves.
    pub fn chunks(&self) -> Range<usize> {
        self.first..self.first + self.count
    }

    /// The receiver's chunk indices it writes.
    pub fn dst_chunks(&self) -> Range<usize> {
        self.dst_first..self.dst_first + self.count
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
    /// The algorithm's URL name (`ring`, `mesh`, ...).
    pub algorithm: String,
    /// Number of ranks `n`.
    pub ranks: usize,
    /// Chunks per rank buffer; a positive multiple of
    /// [`Primitive::blocks`]`(ranks)`.
    pub chunks: usize,
    /// Root rank of a rooted primitive (0 otherwise; serde default 0).
    #[serde(default)]
    pub root: usize,
    /// Scratch chunks per rank after the collective's `chunks` (serde
    /// default 0): no input before, no requirement after. Chunk
    /// `chunks + j` has the size of chunk 0 and lies after the collective's
    /// buffer. An imported MSCCL program keeps its scratch buffer, an
    /// out-of-place output and per-operation temporaries there
    /// ([`super::formats::msccl`]). A transfer into or out of a scratch chunk
    /// is of the same shape by definition: such a schedule runs where all
    /// chunks have one size (MSCCL's own rule: the message divides into its
    /// chunks; [`Schedule::granule`]), and the executor and the workers
    /// refuse other sizes ([`Schedule::check_transfer`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scratch: usize,
    /// Steps in order.
    pub steps: Vec<Step>,
}

fn is_zero(x: &usize) -> bool {
    *x == 0
}

/// Where the steps of a schedule come from, in order: a built [`Schedule`]
/// (its `steps`), or an algorithm's steps made on demand
/// ([`super::algorithm::Streamed`]) so that a consumer that needs one step
/// at a time (the cost model above the drawn rank counts) never holds them
/// all. Either way the steps are the algorithm's one definition.
pub trait StepSource {
    /// Everything but the steps: primitive, algorithm, ranks, chunks,
    /// root, scratch (`steps` may be empty).
    fn header(&self) -> &Schedule;

    /// Calls `f` on every step in order until it returns `false`.
    fn each_step(&self, f: &mut dyn FnMut(&Step) -> bool);

    /// [`StepSource::each_step`], except that a step the source knows to
    /// repeat the previous step's traffic comes as [`Next::Repeat`], not
    /// made unless the consumer asks (every step of a ring phase after
    /// the first), a complete exchange as [`Next::Exchange`] (a mesh
    /// step) and a shift as [`Next::Shift`] (an NHR step). By default
    /// every step is [`Next::Step`].
    fn each_next(&self, f: &mut dyn FnMut(Next<'_>) -> bool) {
        self.each_step(&mut |s| f(Next::Step(s)));
    }

    /// The whole schedule (borrowed when it is one already).
    fn to_schedule(&self) -> std::borrow::Cow<'_, Schedule>;
}

/// A step as [`StepSource::each_next`] hands it out.
pub enum Next<'a> {
    /// The step.
    Step(&'a Step),
    /// A step whose traffic is the previous step's: as many transfers,
    /// with the same `src`, `dst`, `count` and `kind`, in order (only the
    /// chunks they move differ), so a cost that depends on traffic alone
    /// is the previous step's when all chunks have one size. Never the
    /// first step. Calling the closure makes the step (again at each
    /// call) for a consumer that needs it; a test
    /// (`tests/plan.rs`, `repeat_claims_hold`) streams every algorithm ×
    /// primitive and checks each claim against the made step.
    Repeat(&'a mut dyn FnMut() -> Step),
    /// A complete exchange: every ordered pair `(src, dst)` of distinct
    /// ranks in `0..ranks` has exactly one transfer of `count` chunks, and
    /// no other transfer has `src != dst` (a mesh step: ReduceScatter,
    /// AllGather, AlltoAll on all ranks). Its `ranks · (ranks - 1)`
    /// transfers are not made unless the consumer asks: the per-link
    /// loads of such a step follow from the topology in O(ranks + links)
    /// ([`crate::engine::plan::BoundWalk::exchange`]). The same test as
    /// for [`Next::Repeat`] checks every claim against the made step.
    Exchange {
        /// Ranks `0..ranks` take part.
        ranks: usize,
        /// Chunks per transfer.
        count: usize,
        /// Makes the step (again at each call).
        make: &'a mut dyn FnMut() -> Step,
    },
    /// A shift: every rank `r` in `0..ranks` sends `count` chunks in all
    /// (in one or more transfers) to rank `(r + shift) % ranks`, and no
    /// other transfer has `src != dst` (an NHR step: the blocks of one
    /// step go to one peer as runs of consecutive indices). Its `width`
    /// transfers are not made unless the consumer asks: the bound needs
    /// one route per rank ([`crate::engine::plan::BoundWalk::shift`]).
    /// Checked against the made step like [`Next::Repeat`].
    Shift {
        /// Ranks `0..ranks` take part.
        ranks: usize,
        /// Each rank's peer is `shift` ranks on (`1..ranks`).
        shift: usize,
        /// Chunks each rank sends in all.
        count: usize,
        /// Transfers of the made step.
        width: usize,
        /// Makes the step (again at each call).
        make: &'a mut dyn FnMut() -> Step,
    },
}

impl StepSource for Schedule {
    fn header(&self) -> &Schedule {
        self
    }

    fn each_step(&self, f: &mut dyn FnMut(&Step) -> bool) {
        for s in &self.steps {
            if !f(s) {
                break;
            }
        }
    }

    fn to_schedule(&self) -> std::borrow::Cow<'_, Schedule> {
        std::borrow::Cow::Borrowed(self)
    }
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
    /// Wait for chunks `[first, first + count)` of `from` and apply them to
    /// this rank's chunks `[at, at + count)`.
    Recv {
        step: usize,
        from: usize,
        first: usize,
        count: usize,
        kind: TransferKind,
        at: usize,
    },
}

impl Schedule {
    /// Blocks per rank buffer ([`Primitive::blocks`]).
    pub fn blocks(&self) -> usize {
        self.primitive.blocks(self.ranks)
    }

    /// Chunks per block (`chunks / blocks`).
    pub fn chunks_per_block(&self) -> usize {
        self.chunks / self.blocks().max(1)
    }

    /// The block a chunk belongs to.
    pub fn block_of(&self, chunk: usize) -> usize {
        chunk / self.chunks_per_block().max(1)
    }

    /// Elements in each rank's buffer for a message of `elems` elements
    /// ([`Primitive::buffer_elems`]; `elems` for most primitives, about
    /// `2·elems` where there are send and receive areas).
    /// Scratch chunks ([`Schedule::scratch`]) come after it.
    pub fn buffer_elems(&self, elems: usize) -> usize {
        self.buffer_elems_u64(elems as u64) as usize
    }

    /// [`Schedule::buffer_elems`] in 64 bits.
    pub fn buffer_elems_u64(&self, elems: u64) -> u64 {
        let base = self.primitive.buffer_elems_u64(self.ranks, elems);
        if self.scratch == 0 || self.chunks == 0 {
            return base;
        }
        let c0 = self.chunk_elems_u64(elems, 0);
        base + self.scratch as u64 * (c0.end - c0.start)
    }

    /// Chunks per rank including scratch (`chunks + scratch`).
    pub fn total_chunks(&self) -> usize {
        self.chunks + self.scratch
    }

    /// Is `chunk` a scratch chunk ([`Schedule::scratch`])?
    pub fn is_scratch(&self, chunk: usize) -> bool {
        chunk >= self.chunks
    }

    /// The message sizes (elements of `S`) at which every chunk of this
    /// layout has the same size are the multiples of this number: `chunks`
    /// for the even layouts (n blocks of `S/n`), `chunks / 2` for AlltoAll
    /// (each send block is `S/n`), `chunks / 2` for SendRecv. A schedule
    /// with scratch chunks runs at these sizes only.
    pub fn granule(&self) -> usize {
        match self.primitive {
            Primitive::AlltoAll | Primitive::SendRecv => (self.chunks / 2).max(1),
            _ => self.chunks.max(1),
        }
    }

    /// Do all chunks (scratch included) have the same size for a message of
    /// `elems` elements?
    pub fn uniform_at(&self, elems: usize) -> bool {
        let len = |c| {
            let r = self.chunk_elems_u64(elems as u64, c);
            r.end - r.start
        };
        let l0 = len(0);
        (1..self.chunks).all(|c| len(c) == l0)
    }

    /// Element range of `chunk` in a rank's buffer for a message of `elems`
    /// elements (nccl-tests' `S` in elements): blocks are laid out by
    /// [`Primitive::block_range`], chunks are [`part_range`](super::collective::part_range)s of their block.
    pub fn chunk_elems(&self, elems: usize, chunk: usize) -> Range<usize> {
        let r = self.chunk_elems_u64(elems as u64, chunk);
        r.start as usize..r.end as usize
    }

    /// [`Schedule::chunk_elems`] in 64 bits (the cost model's messages
    /// exceed `usize` on wasm32).
    pub fn chunk_elems_u64(&self, elems: u64, chunk: usize) -> Range<u64> {
        if chunk >= self.chunks && self.chunks > 0 {
            let base = self.primitive.buffer_elems_u64(self.ranks, elems);
            let len = self.chunk_elems_u64(elems, 0);
            let len = len.end - len.start;
            let j = (chunk - self.chunks) as u64;
            return base + j * len..base + (j + 1) * len;
        }
        let k = self.chunks_per_block().max(1);
        let block = self.primitive.block_range_u64(self.ranks, elems, chunk / k);
        let inner = part_range_u64(block.end - block.start, k, chunk % k);
        block.start + inner.start..block.start + inner.end
    }

    /// Does `rank` hold input in `chunk` before the collective?
    pub fn holds_input(&self, rank: usize, chunk: usize) -> bool {
        self.primitive
            .holds_input(self.ranks, self.root, rank, self.block_of(chunk))
    }

    /// What `chunk` of `rank` must hold at the end: `Some((contributors,
    /// origin chunk))` — the reduction over the ranks `contributors` (one
    /// rank for a plain copy) of their input chunk `origin` — or `None` for a
    /// scratch chunk.
    pub fn expected_after(&self, rank: usize, chunk: usize) -> Option<(Vec<usize>, usize)> {
        let k = self.chunks_per_block().max(1);
        match self
            .primitive
            .expected_after(self.ranks, self.root, rank, chunk / k)?
        {
            Expect::All => Some(((0..self.ranks).collect(), chunk)),
            Expect::Only { rank, block } => Some((vec![rank], block * k + chunk % k)),
        }
    }

    /// True if `chunk` of `rank` must end as the reduction over every rank
    /// (AllReduce's chunks, ReduceScatter's own block, Reduce's root).
    pub fn is_reduced_output(&self, rank: usize, chunk: usize) -> bool {
        let k = self.chunks_per_block().max(1);
        chunk < self.chunks
            && self.primitive.reduces()
            && matches!(
                self.primitive
                    .expected_after(self.ranks, self.root, rank, chunk / k),
                Some(Expect::All)
            )
    }

    /// Do chunks `a` and `b` have the same size for every message size? True
    /// iff `a == b`, or the layout is weighted and they have the same block
    /// weight and the same index within their blocks. A transfer may only
    /// move a chunk into a chunk of the same shape.
    pub fn same_shape(&self, a: usize, b: usize) -> bool {
        if a == b || self.is_scratch(a) || self.is_scratch(b) {
            return true;
        }
        let k = self.chunks_per_block().max(1);
        let (n, p) = (self.ranks, self.primitive);
        match (p.block_weight(n, a / k), p.block_weight(n, b / k)) {
            (Some(x), Some(y)) => x == y && a % k == b % k,
            _ => false,
        }
    }

    /// Element range of chunks `[first, first + count)`.
    pub fn range_elems(&self, elems: usize, first: usize, count: usize) -> Range<usize> {
        let r = self.range_elems_u64(elems as u64, first, count);
        r.start as usize..r.end as usize
    }

    /// [`Schedule::range_elems`] in 64 bits.
    pub fn range_elems_u64(&self, elems: u64, first: usize, count: usize) -> Range<u64> {
        let a = self.chunk_elems_u64(elems, first).start;
        let b = if count == 0 {
            a
        } else {
            self.chunk_elems_u64(elems, first + count - 1).end
        };
        a..b
    }

    /// The one shape check of transfer `index` of step `step`, shared by
    /// the verifier, the reference executor and the rank workers: it names
    /// existing ranks, moves at least one chunk, reads and writes chunk
    /// ranges inside the buffer (`first + count` and `dst_first + count`
    /// within [`Schedule::total_chunks`], without overflow), and lands in
    /// chunks of the same size as the ones it reads: by the collective's
    /// block shapes ([`Schedule::same_shape`]) when `elems` is `None` (the
    /// symbolic check), by element counts for a buffer of `elems` elements
    /// otherwise.
    ///
    /// Errors: [`BadTransfer`] naming the step, the transfer and why.
    /// Panics if `step` or `index` is out of range (a caller bug).
    pub fn check_transfer(
        &self,
        step: usize,
        index: usize,
        elems: Option<usize>,
    ) -> Result<(), BadTransfer> {
        let t = &self.steps[step].transfers[index];
        let bad = |why: String| BadTransfer {
            step,
            index,
            src: t.src,
            dst: t.dst,
            first: t.first,
            count: t.count,
            dst_first: t.dst_first,
            why,
        };
        let n = self.ranks;
        if t.src >= n || t.dst >= n {
            return Err(bad(format!("there are {n} ranks")));
        }
        let total = self.total_chunks();
        let fits = |first: usize| first.checked_add(t.count).is_some_and(|e| e <= total);
        if t.count == 0 || !fits(t.first) || !fits(t.dst_first) {
            return Err(bad(format!(
                "it must move at least one chunk, and the buffer has {total} chunks"
            )));
        }
        match elems {
            None => {
                if let Some((a, b)) = t
                    .chunks()
                    .zip(t.dst_chunks())
                    .find(|&(a, b)| !self.same_shape(a, b))
                {
                    return Err(bad(format!(
                        "it moves chunk {a} into chunk {b}, which has a different size in {}",
                        self.primitive
                    )));
                }
            }
            Some(e) => {
                let (read, write) = (
                    self.range_elems(e, t.first, t.count).len(),
                    self.range_elems(e, t.dst_first, t.count).len(),
                );
                if read != write {
                    return Err(bad(format!(
                        "it reads {read} elements and writes {write} (a buffer of {e} elements)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Total number of transfers.
    pub fn transfer_count(&self) -> usize {
        self.steps.iter().map(|s| s.transfers.len()).sum()
    }

    /// Transfers between two ranks; the rest (`transfer_count` minus
    /// these) are local copies or reductions (`src == dst`, an MSCCL `cpy`
    /// or `re`), which cross no link.
    pub fn network_transfer_count(&self) -> usize {
        self.steps
            .iter()
            .flat_map(|x| &x.transfers)
            .filter(|t| t.src != t.dst)
            .count()
    }

    /// What `rank` does, in order: per step, first all its sends (in listed
    /// order), then all its receives (in listed order). A local transfer
    /// (`src == dst`, an MSCCL `cpy` / `re`) is a send to itself and a
    /// receive from itself. A worker that runs
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
                    at: t.dst_first,
                });
            }
        }
        ops
    }

    /// Pairs of distinct ranks that exchange at least one message
    /// (`a < b`), sorted. A local transfer (`src == dst`, an MSCCL copy
    /// within one rank's buffers) is no message and names no pair.
    pub fn peer_pairs(&self) -> Vec<(usize, usize)> {
        let mut v: Vec<(usize, usize)> = self
            .steps
            .iter()
            .flat_map(|s| s.transfers.iter())
            .filter(|t| t.src != t.dst)
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
            root: 0,
            scratch: 0,
            steps: vec![Step {
                phase: "AllGather".into(),
                transfers: vec![Transfer::copy(0, 1, 0, 2), Transfer::copy(1, 0, 2, 2)],
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
                    kind: TransferKind::Copy,
                    at: 2
                },
            ]
        );
        assert_eq!(s.peer_pairs(), vec![(0, 1)]);
    }

    #[test]
    fn local_transfers_name_no_peer_pair() {
        let mut s = tiny();
        let mut local = s.steps[0].transfers[0].clone();
        local.dst = local.src;
        s.steps[0].transfers.push(local);
        assert_eq!(s.peer_pairs(), vec![(0, 1)]);
    }

    #[test]
    fn schedule_is_serde_data() {
        let s = tiny();
        let json = serde_json::to_string(&s).unwrap();
        let back: Schedule = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        // Old JSON without `dst_first` / `root` keeps its meaning.
        let old = r#"{"primitive":"allgather","algorithm":"x","ranks":2,"chunks":2,
            "steps":[{"phase":"p","transfers":[{"src":0,"dst":1,"first":0,"count":1,"kind":"copy"}]}]}"#;
        let old: Schedule = serde_json::from_str(old).unwrap();
        assert_eq!(old.root, 0);
        assert_eq!(old.steps[0].transfers[0], Transfer::copy(0, 1, 0, 1));
    }
}
