//! What each primitive means: the contents of every rank's buffer before and
//! after, and nccl-tests' bus-bandwidth factor.
//!
//! ## Buffer model
//! Every rank holds one buffer of `S` bytes, where `S` is the size nccl-tests
//! reports (`doc/PERFORMANCE.md`): the AllReduce buffer; for AllGather and
//! ReduceScatter the whole gathered array. The buffer is cut into `n` equal
//! *blocks*, block `b` belonging to rank `b`:
//!
//! | primitive | before (rank r) | after (rank r) |
//! |---|---|---|
//! | AllReduce | every block holds `x_r` | every block holds `op(x_0..x_{n-1})` |
//! | ReduceScatter | every block holds `x_r` | block `r` holds `op(x_0..x_{n-1})` |
//! | AllGather | block `r` holds `x_r`, the rest nothing | block `b` holds `x_b` |

use serde::{Deserialize, Serialize};
use std::fmt;

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
}

impl Primitive {
    /// Every primitive, in UI order.
    pub const ALL: [Primitive; 3] = [
        Primitive::AllReduce,
        Primitive::ReduceScatter,
        Primitive::AllGather,
    ];

    /// URL name (`allreduce`, `reducescatter`, `allgather`).
    pub fn name(self) -> &'static str {
        match self {
            Primitive::AllReduce => "allreduce",
            Primitive::ReduceScatter => "reducescatter",
            Primitive::AllGather => "allgather",
        }
    }

    /// Display name (`AllReduce`, ...).
    pub fn title(self) -> &'static str {
        match self {
            Primitive::AllReduce => "AllReduce",
            Primitive::ReduceScatter => "ReduceScatter",
            Primitive::AllGather => "AllGather",
        }
    }

    /// Parses a [`Primitive::name`].
    pub fn from_name(s: &str) -> Option<Primitive> {
        Primitive::ALL.into_iter().find(|p| p.name() == s)
    }

    /// True if the primitive combines data with a reduce op.
    pub fn reduces(self) -> bool {
        matches!(self, Primitive::AllReduce | Primitive::ReduceScatter)
    }

    /// nccl-tests' busbw factor for `n` ranks (`doc/PERFORMANCE.md`):
    /// AllReduce `2(n-1)/n`; ReduceScatter, AllGather `(n-1)/n`.
    pub fn busbw_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Primitive::AllReduce => 2.0 * (n - 1.0) / n,
            Primitive::ReduceScatter | Primitive::AllGather => (n - 1.0) / n,
        }
    }

    /// Does rank `rank` hold block `block` of its input before the collective?
    pub fn holds_input(self, rank: usize, block: usize) -> bool {
        match self {
            Primitive::AllReduce | Primitive::ReduceScatter => true,
            Primitive::AllGather => rank == block,
        }
    }

    /// Which ranks' contributions block `block` of rank `rank` must hold
    /// after the collective: `Some(All)`, `Some(Only(b))`, or `None` if the
    /// block is scratch (not part of the output).
    pub fn expected_after(self, rank: usize, block: usize) -> Option<Expect> {
        match self {
            Primitive::AllReduce => Some(Expect::All),
            Primitive::ReduceScatter => (rank == block).then_some(Expect::All),
            Primitive::AllGather => Some(Expect::Only(block)),
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
    /// The reduction of every rank's contribution.
    All,
    /// Exactly rank `b`'s contribution.
    Only(usize),
}

/// Element range `[start, end)` of part `i` when `total` elements are cut into
/// `parts` near-equal parts (`floor(i*total/parts)`), as NCCL and HCCL cut a
/// buffer into chunks. Parts differ in size by at most one element.
pub fn part_range(total: usize, parts: usize, i: usize) -> std::ops::Range<usize> {
    let at = |k: usize| ((k as u128 * total as u128) / parts as u128) as usize;
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
