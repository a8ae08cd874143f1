//! What each primitive means: the layout of every rank's buffer, its
//! contents before and after, nccl-tests' message size `S` and bus-bandwidth
//! factor.
//!
//! ## Buffer model
//! Every rank holds one buffer cut into *blocks*; the collective defines how
//! many, how large, which ones hold input before and what every block must
//! hold after ([`Primitive::block_range`], [`Primitive::holds_input`],
//! [`Primitive::expected_after`]). A [`super::schedule::Schedule`] cuts each
//! block into equal numbers of chunks. `S` is the size nccl-tests reports
//! (`doc/PERFORMANCE.md`); `x_r[b]` is rank `r`'s input in block `b` (element
//! `i` of it a pure function of `(seed, r, i)`, [`super::input`]); `root`
//! is the root of a rooted primitive (URL key `root`, default 0).
//!
//! | primitive | blocks (size) | before (rank r) | after (rank r) |
//! |---|---|---|---|
//! | AllReduce | n (S/n, uneven by ≤ 1 element) | every block `b` holds `x_r[b]` | every block `b` holds `op_q(x_q[b])` |
//! | ReduceScatter | n (S/n) | every block holds `x_r[b]` | block `r` holds `op_q(x_q[r])`; the rest is scratch |
//! | AllGather | n (S/n) | block `r` holds `x_r[r]` | block `b` holds `x_b[b]` |
//! | Broadcast | n (S/n) | root: every block `x_root[b]`; others nothing | block `b` holds `x_root[b]` |
//! | Reduce | n (S/n) | every block holds `x_r[b]` | root: block `b` holds `op_q(x_q[b])`; others scratch |
//! | Scatter | n (S/n) | root: every block `x_root[b]` | block `r` holds `x_root[r]` |
//! | Gather | n (S/n) | block `r` holds `x_r[r]` | root: block `b` holds `x_b[b]`; others scratch |
//! | AlltoAll | 2n (S/n each, exact; a tail `< n` elements unused) | send area: block `j < n` holds `x_r[j]`, the piece for rank `j` | receive area: block `n + j` holds `x_j[r]` for `j != r`; rank r's own piece stays in send block `r` |
//! | AlltoAllV | 2n² (weighted, [`moe_weight`]) | send block `r·n + j` holds `x_r[r·n + j]` (weight `w(r,j)`) | receive block `n² + j·n + r` holds `x_j[j·n + r]` for `j != r`; own piece stays in send block `r·n + r` |
//! | Barrier | n (0 elements) | block `r`: rank r's token | every block `b`: rank b's token (everyone has heard from everyone) |
//! | SendRecv | 2 (S each) | block 0 holds `x_r[0]` | block 1 holds `x_{r-1 mod n}[0]` (rank r sends to r+1) |
//!
//! AlltoAll needs separate send and receive areas: in place, a receive would
//! overwrite a piece not sent yet. A piece moves from the sender's block `j`
//! to the receiver's block `n + r`, which is why a transfer has a
//! destination chunk of its own ([`super::schedule::Transfer::dst_first`])
//! and why these layouts give every block exactly `weight × unit` elements
//! (a piece and its receive slot always have the same size). Rank r's own
//! AlltoAll piece is not moved: NCCL copies it locally, and nccl-tests'
//! busbw factor `(n-1)/n` does not count it.
//!
//! Sizes, as nccl-tests reports them: `S` is the AllReduce / Broadcast /
//! Reduce buffer; the whole gathered (scattered) array for AllGather,
//! ReduceScatter, Gather, Scatter; each rank's send buffer for AlltoAll and
//! SendRecv (so a rank's buffer here is `2S`); for AlltoAllV (no nccl-tests
//! counterpart) the whole count matrix, all ranks' sends together; Barrier
//! moves no data.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Range;

/// A collective primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Primitive {
    /// Every rank ends with the reduction of all inputs.
    AllReduce,
    /// Rank r ends with block r of the reduction.
    ReduceScatter,
    /// Every rank ends with every rank's block.
    AllGather,
    /// Every rank ends with the root's buffer.
    Broadcast,
    /// The root ends with the reduction of all inputs.
    Reduce,
    /// Rank r ends with block r of the root's buffer.
    Scatter,
    /// The root ends with every rank's block.
    Gather,
    /// Rank r ends with piece r of every rank's send area.
    AlltoAll,
    /// AlltoAll with per-pair sizes ([`moe_weight`]).
    AlltoAllV,
    /// Nobody leaves before everyone has arrived (no data).
    Barrier,
    /// Rank r sends its buffer to rank r+1 (nccl-tests `sendrecv`).
    SendRecv,
}

/// Most ranks AlltoAllV supports: its layout has `2n²` blocks, and every
/// rank's buffer holds the whole count matrix.
pub const MAX_ALLTOALLV_RANKS: usize = 16;

/// AlltoAllV's per-pair weight (an MoE-style skew, assumption for
/// illustration, no measured source): rank `i` sends `w(i, j)` units to rank
/// `j`, `w(i, j) = 1 + 7·[j ≡ 0 mod 4] + ((i + j) mod 3)`: every fourth rank
/// hosts a "hot" expert that receives about 5× the tokens of the others,
/// with some per-pair variation. Range 1..=10.
pub fn moe_weight(i: usize, j: usize) -> u64 {
    1 + if j % 4 == 0 { 7 } else { 0 } + ((i + j) % 3) as u64
}

impl Primitive {
    /// Every primitive, in UI order.
    pub const ALL: [Primitive; 11] = [
        Primitive::AllReduce,
        Primitive::ReduceScatter,
        Primitive::AllGather,
        Primitive::Broadcast,
        Primitive::Reduce,
        Primitive::Scatter,
        Primitive::Gather,
        Primitive::AlltoAll,
        Primitive::AlltoAllV,
        Primitive::Barrier,
        Primitive::SendRecv,
    ];

    /// URL name (`allreduce`, `reducescatter`, `allgather`, `broadcast`,
    /// `reduce`, `scatter`, `gather`, `alltoall`, `alltoallv`, `barrier`,
    /// `sendrecv`).
    pub fn name(self) -> &'static str {
        match self {
            Primitive::AllReduce => "allreduce",
            Primitive::ReduceScatter => "reducescatter",
            Primitive::AllGather => "allgather",
            Primitive::Broadcast => "broadcast",
            Primitive::Reduce => "reduce",
            Primitive::Scatter => "scatter",
            Primitive::Gather => "gather",
            Primitive::AlltoAll => "alltoall",
            Primitive::AlltoAllV => "alltoallv",
            Primitive::Barrier => "barrier",
            Primitive::SendRecv => "sendrecv",
        }
    }

    /// Display name (`AllReduce`, ...).
    pub fn title(self) -> &'static str {
        match self {
            Primitive::AllReduce => "AllReduce",
            Primitive::ReduceScatter => "ReduceScatter",
            Primitive::AllGather => "AllGather",
            Primitive::Broadcast => "Broadcast",
            Primitive::Reduce => "Reduce",
            Primitive::Scatter => "Scatter",
            Primitive::Gather => "Gather",
            Primitive::AlltoAll => "AlltoAll",
            Primitive::AlltoAllV => "AlltoAllV",
            Primitive::Barrier => "Barrier",
            Primitive::SendRecv => "Send/Recv",
        }
    }

    /// Parses a collective's name as any of its users write it: ours
    /// ([`Primitive::name`], `allgather`), nccl-tests' program names
    /// without `_perf` (`all_gather`, `reduce_scatter`, `alltoall`,
    /// `sendrecv`; nccl-tests `src/*.cu`), NCCL's and HCCL's API spellings
    /// (`AllGather`, `ReduceScatter`, `AlltoAll`), MPI's `bcast` and
    /// `all_to_all`: case, `_`, `-`, `/` and spaces do not matter. One vocabulary for
    /// every command, URL key and importer.
    pub fn from_name(s: &str) -> Option<Primitive> {
        if s.len() > 32 {
            return None;
        }
        let key: String = s
            .chars()
            .filter(|c| !matches!(c, '_' | '-' | '/' | ' '))
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match key.as_str() {
            "bcast" => Some(Primitive::Broadcast),
            k => Primitive::ALL.into_iter().find(|p| p.name() == k),
        }
    }

    /// nccl-tests' name of the collective (its program without `_perf`:
    /// `all_reduce`, `reduce_scatter`, `alltoall`); AlltoAllV and Barrier,
    /// which nccl-tests runs as `alltoallv` / no program, by our name.
    pub fn nccl_tests_name(self) -> &'static str {
        match self {
            Primitive::AllReduce => "all_reduce",
            Primitive::ReduceScatter => "reduce_scatter",
            Primitive::AllGather => "all_gather",
            other => other.name(),
        }
    }

    /// True if the primitive combines data with a reduce op.
    pub fn reduces(self) -> bool {
        matches!(
            self,
            Primitive::AllReduce | Primitive::ReduceScatter | Primitive::Reduce
        )
    }

    /// True if the primitive has a root (URL key `root`).
    pub fn rooted(self) -> bool {
        matches!(
            self,
            Primitive::Broadcast | Primitive::Reduce | Primitive::Scatter | Primitive::Gather
        )
    }

    /// Why HCCL cannot run this primitive, if it cannot. HCCL's API list
    /// (hicann/hccl `docs/api/context/index.md`) has AllReduce, Broadcast,
    /// AllGather(V), ReduceScatter(V), Reduce, AlltoAll, AlltoAllV(C),
    /// Scatter, Send, Recv, BatchSendRecv (and `HcclBarrier`), but no
    /// Gather.
    pub fn hccl_note(self) -> Option<&'static str> {
        match self {
            Primitive::Gather => Some("HCCL has no Gather (hccl.h); NCCL and MPI have it"),
            _ => None,
        }
    }

    /// nccl-tests' busbw factor for `n` ranks (`doc/PERFORMANCE.md` and the
    /// tests' `*BusBw` functions): AllReduce `2(n-1)/n`; ReduceScatter,
    /// AllGather, Scatter, Gather, AlltoAll, AlltoAllV `(n-1)/n`; Broadcast,
    /// Reduce, SendRecv 1; Barrier 0 (it moves no data).
    pub fn busbw_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Primitive::AllReduce => 2.0 * (n - 1.0) / n,
            Primitive::ReduceScatter
            | Primitive::AllGather
            | Primitive::Scatter
            | Primitive::Gather
            | Primitive::AlltoAll
            | Primitive::AlltoAllV => (n - 1.0) / n,
            Primitive::Broadcast | Primitive::Reduce | Primitive::SendRecv => 1.0,
            Primitive::Barrier => 0.0,
        }
    }

    /// Number of blocks in a rank's buffer for `n` ranks (see the module
    /// table): `n`, `2n` (AlltoAll), `2n²` (AlltoAllV), 2 (SendRecv).
    pub fn blocks(self, n: usize) -> usize {
        match self {
            Primitive::AlltoAll => 2 * n,
            Primitive::AlltoAllV => 2 * n * n,
            Primitive::SendRecv => 2,
            _ => n,
        }
    }

    /// The weight of block `b` in the weighted layouts (AlltoAll: 1;
    /// AlltoAllV: [`moe_weight`] of its pair; SendRecv 1; Barrier 0); `None`
    /// for the even layouts, which cut `S` into `n` near-equal
    /// [`part_range`]s. Blocks of equal weight have equal sizes.
    pub fn block_weight(self, n: usize, b: usize) -> Option<u64> {
        match self {
            Primitive::AlltoAll | Primitive::SendRecv => Some(1),
            Primitive::Barrier => Some(0),
            Primitive::AlltoAllV => {
                let p = b % (n * n).max(1);
                Some(moe_weight(p / n.max(1), p % n.max(1)))
            }
            _ => None,
        }
    }

    /// Elements per weight unit in the weighted layouts, for `s_elems`
    /// elements of message size `S`: AlltoAll `floor(S/n)`, SendRecv `S`,
    /// AlltoAllV `floor(S / Σ w)`, Barrier 0; `None` for the even layouts.
    pub fn unit_elems(self, n: usize, s_elems: usize) -> Option<usize> {
        self.unit_elems_u64(n, s_elems as u64).map(|u| u as usize)
    }

    /// [`Primitive::unit_elems`] in 64 bits (the cost model's sizes exceed
    /// `usize` on wasm32).
    pub fn unit_elems_u64(self, n: usize, s_elems: u64) -> Option<u64> {
        match self {
            Primitive::AlltoAll => Some(s_elems / n.max(1) as u64),
            Primitive::SendRecv => Some(s_elems),
            Primitive::Barrier => Some(0),
            Primitive::AlltoAllV => {
                let total: u64 = (0..n)
                    .flat_map(|i| (0..n).map(move |j| moe_weight(i, j)))
                    .sum();
                Some(s_elems / total.max(1))
            }
            _ => None,
        }
    }

    /// Element range of block `b` in a rank's buffer, for `n` ranks and a
    /// message of `s_elems` elements. Even layouts: `part_range(S, n, b)`;
    /// weighted layouts: consecutive blocks of `weight × unit` elements.
    pub fn block_range(self, n: usize, s_elems: usize, b: usize) -> Range<usize> {
        let r = self.block_range_u64(n, s_elems as u64, b);
        r.start as usize..r.end as usize
    }

    /// [`Primitive::block_range`] in 64 bits.
    pub fn block_range_u64(self, n: usize, s_elems: u64, b: usize) -> Range<u64> {
        match self.unit_elems_u64(n, s_elems) {
            None => part_range_u64(s_elems, n, b),
            Some(unit) => match self {
                Primitive::AlltoAllV => {
                    let start: u64 = (0..b).map(|x| self.block_weight(n, x).unwrap_or(0)).sum();
                    let w = self.block_weight(n, b).unwrap_or(0);
                    start * unit..(start + w) * unit
                }
                _ => {
                    let w = self.block_weight(n, b).unwrap_or(0);
                    b as u64 * w * unit..(b as u64 + 1) * w * unit
                }
            },
        }
    }

    /// Elements in a rank's whole buffer for a message of `s_elems`
    /// elements: `S` for the even layouts, `2·n·floor(S/n)` for AlltoAll,
    /// `2S` for SendRecv, `2·Σw·floor(S/Σw)` for AlltoAllV, 0 for Barrier.
    pub fn buffer_elems(self, n: usize, s_elems: usize) -> usize {
        self.buffer_elems_u64(n, s_elems as u64) as usize
    }

    /// [`Primitive::buffer_elems`] in 64 bits.
    pub fn buffer_elems_u64(self, n: usize, s_elems: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.block_range_u64(n, s_elems, self.blocks(n) - 1).end
    }

    /// Does rank `rank` hold input in block `block` before the collective
    /// (`n` ranks, root `root`)? See the module table.
    pub fn holds_input(self, n: usize, root: usize, rank: usize, block: usize) -> bool {
        match self {
            Primitive::AllReduce | Primitive::ReduceScatter | Primitive::Reduce => true,
            Primitive::AllGather | Primitive::Gather | Primitive::Barrier => rank == block,
            Primitive::Broadcast | Primitive::Scatter => rank == root,
            Primitive::AlltoAll => block < n,
            Primitive::AlltoAllV => block < n * n && block / n == rank,
            Primitive::SendRecv => block == 0,
        }
    }

    /// What block `block` of rank `rank` must hold after the collective
    /// (`n` ranks, root `root`), or `None` if it is scratch (not output).
    pub fn expected_after(
        self,
        n: usize,
        root: usize,
        rank: usize,
        block: usize,
    ) -> Option<Expect> {
        let only = |rank, block| Some(Expect::Only { rank, block });
        match self {
            Primitive::AllReduce => Some(Expect::All),
            Primitive::ReduceScatter => (rank == block).then_some(Expect::All),
            Primitive::Reduce => (rank == root).then_some(Expect::All),
            Primitive::AllGather | Primitive::Barrier => only(block, block),
            Primitive::Broadcast => only(root, block),
            Primitive::Scatter => (block == rank).then_some(Expect::Only { rank: root, block }),
            Primitive::Gather => (rank == root).then_some(Expect::Only { rank: block, block }),
            Primitive::AlltoAll => {
                if block == rank {
                    only(rank, rank)
                } else if block >= n && block - n != rank {
                    only(block - n, rank)
                } else {
                    None
                }
            }
            Primitive::AlltoAllV => {
                let nn = n * n;
                if block == rank * n + rank {
                    only(rank, block)
                } else if block >= nn && (block - nn) % n == rank && (block - nn) / n != rank {
                    only((block - nn) / n, block - nn)
                } else {
                    None
                }
            }
            Primitive::SendRecv => (block == 1).then(|| Expect::Only {
                rank: (rank + n - 1) % n.max(1),
                block: 0,
            }),
        }
    }
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

/// The required contents of an output block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The reduction of every rank's input in this same block.
    All,
    /// Exactly rank `rank`'s input block `block` (same chunk within it).
    Only {
        /// Whose input.
        rank: usize,
        /// Which input block.
        block: usize,
    },
}

/// Element range `[start, end)` of part `i` when `total` elements are cut into
/// `parts` near-equal parts (`floor(i*total/parts)`), as NCCL and HCCL cut a
/// buffer into chunks. Parts differ in size by at most one element.
pub fn part_range(total: usize, parts: usize, i: usize) -> std::ops::Range<usize> {
    let r = part_range_u64(total as u64, parts, i);
    r.start as usize..r.end as usize
}

/// [`part_range`] in 64 bits.
pub fn part_range_u64(total: u64, parts: usize, i: usize) -> std::ops::Range<u64> {
    if parts == 0 {
        return 0..0;
    }
    let at = |k: usize| ((k as u128 * total as u128) / parts as u128) as u64;
    at(i)..at(i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busbw_factors_match_nccl_tests() {
        assert_eq!(Primitive::AllReduce.busbw_factor(8), 1.75);
        assert_eq!(Primitive::AllGather.busbw_factor(8), 0.875);
        assert_eq!(Primitive::ReduceScatter.busbw_factor(4), 0.75);
        assert_eq!(Primitive::AlltoAll.busbw_factor(4), 0.75);
        assert_eq!(Primitive::Broadcast.busbw_factor(8), 1.0);
        assert_eq!(Primitive::Reduce.busbw_factor(8), 1.0);
    }

    #[test]
    fn names_round_trip() {
        for p in Primitive::ALL {
            assert_eq!(Primitive::from_name(p.name()), Some(p));
            assert_eq!(Primitive::from_name(p.nccl_tests_name()), Some(p));
            assert_eq!(Primitive::from_name(p.title()), Some(p), "{}", p.title());
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
        }
    }

    #[test]
    fn layouts_tile_the_buffer_and_pair_equal_slots() {
        for p in Primitive::ALL {
            for n in [2usize, 3, 5, 8] {
                for s in [0usize, 7, 1000, 4099] {
                    let mut next = 0;
                    for b in 0..p.blocks(n) {
                        let r = p.block_range(n, s, b);
                        assert_eq!(r.start, next, "{p} n={n} s={s} b={b}");
                        next = r.end;
                    }
                    assert_eq!(next, p.buffer_elems(n, s));
                    assert!(p.buffer_elems(n, s) <= 2 * s);
                }
            }
        }
        // AlltoAll: a piece and its receive slot have the same size.
        let p = Primitive::AlltoAll;
        assert_eq!(
            p.block_range(4, 1003, 1).len(),
            p.block_range(4, 1003, 6).len()
        );
        assert_eq!(p.buffer_elems(4, 1003), 2 * 4 * 250);
    }

    #[test]
    fn part_ranges_tile_the_buffer() {
        for total in [0usize, 1, 7, 8, 1000, 1001] {
            for parts in 1..=16 {
                let mut next = 0;
                for i in 0..parts {
                    let r = part_range(total, parts, i);
                    assert_eq!(r.start, next);
                    assert!(r.len() <= total / parts + 1);
                    next = r.end;
                }
                assert_eq!(next, total);
            }
        }
    }
}
