//! Symbolic verification: proves that a [`Schedule`] implements its
//! collective, for symbolic inputs.
//!
//! Every (rank, chunk) carries the set of ranks whose contribution it holds
//! (a [`RankSet`]), its *origin* (which input chunk those contributions are
//! of: data moved from AlltoAll's send block `j` to a receive block keeps
//! origin `j`) and the expression tree that computes it (an [`Expr`] in an
//! arena, e.g. `((x0[c] + x1[c]) + x2[c])`), following the step semantics in
//! [`super::schedule`]. The schedule is valid iff
//! - every transfer names existing ranks and chunks (scratch chunks
//!   included, [`Schedule::scratch`]) and moves every chunk into a chunk of
//!   the same shape ([`Schedule::same_shape`]); a transfer with `src == dst`
//!   is a local copy or reduce on that rank (MSCCL's `cpy` / `re`);
//! - no transfer sends a chunk that holds nothing yet;
//! - no reduce combines two values that share a contribution (that would
//!   count a rank twice) or that come from different input chunks;
//! - no chunk receives twice in one step when one of them is a copy (the
//!   result would depend on message order), except a rank's own local copy
//!   listed first and reduces after it (MSCCL's `rrc` / `rrs` with a
//!   separate source: the local operand is read while the message arrives);
//! - at the end every output chunk holds exactly the contributions and the
//!   origin [`Primitive::expected_after`] requires (so AlltoAll and Scatter
//!   are proven to deliver the right rank's right piece, not just "one
//!   rank's data").
//!
//! The trace of sets after every step is what the UI colours chunk cells
//! with; the expressions give the exact reduction order the checker
//! reproduces ([`super::check`]).

use super::collective::Primitive;
use super::schedule::{BadTransfer, Schedule, Step, TransferKind};
use thiserror::Error;

/// A set of ranks (bitset), for any rank count.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RankSet {
    words: Vec<u64>,
}

impl RankSet {
    /// The empty set.
    pub fn empty() -> Self {
        RankSet { words: Vec::new() }
    }

    /// `{rank}`.
    pub fn single(rank: usize) -> Self {
        let mut s = RankSet::empty();
        s.insert(rank);
        s
    }

    /// `{0, ..., n-1}`.
    pub fn all(n: usize) -> Self {
        let mut s = RankSet::empty();
        for r in 0..n {
            s.insert(r);
        }
        s
    }

    /// Adds `rank`.
    pub fn insert(&mut self, rank: usize) {
        let w = rank / 64;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (rank % 64);
    }

    /// Is `rank` in the set?
    pub fn contains(&self, rank: usize) -> bool {
        self.words
            .get(rank / 64)
            .is_some_and(|w| w & (1 << (rank % 64)) != 0)
    }

    /// Number of ranks in the set.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// True if the set holds no rank.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// Do the sets share a rank?
    pub fn intersects(&self, other: &RankSet) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &RankSet) -> RankSet {
        let n = self.words.len().max(other.words.len());
        let words = (0..n)
            .map(|i| {
                self.words.get(i).copied().unwrap_or(0) | other.words.get(i).copied().unwrap_or(0)
            })
            .collect();
        RankSet { words }
    }

    /// The ranks, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, bits)| {
            (0..64)
                .filter(move |b| bits & (1u64 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }

    /// Compact text: `{}`, `{3}`, `{0,1,2}`, `{0..7}` for a full run.
    pub fn describe(&self) -> String {
        let v: Vec<usize> = self.iter().collect();
        match v.as_slice() {
            [] => "{}".into(),
            [a, .., b] if v.len() > 2 && b - a + 1 == v.len() => format!("{{{a}..{b}}}"),
            _ => format!(
                "{{{}}}",
                v.iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }
}

/// Index of an expression in [`Verified::exprs`].
pub type ExprId = u32;

/// How a chunk value is computed from the inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// Rank `rank`'s input chunk `chunk`.
    Input {
        /// Whose input.
        rank: usize,
        /// Which chunk of its initial buffer.
        chunk: usize,
    },
    /// `op(a, b)`: `a` the receiver's value, `b` the arriving one.
    Reduce(ExprId, ExprId),
}

/// The result of a successful verification.
#[derive(Clone, Debug)]
pub struct Verified {
    /// `trace[s][rank][chunk]`: contributions held after `s` steps
    /// (`trace[0]` is the initial state; `trace.len() == steps + 1`).
    pub trace: Vec<Vec<Vec<RankSet>>>,
    /// Expression arena.
    pub exprs: Vec<Expr>,
    /// `final_exprs[rank][chunk]`: the expression of every chunk at the end
    /// (`None` if the chunk never held anything).
    pub final_exprs: Vec<Vec<Option<ExprId>>>,
}

/// Why a schedule does not implement its collective. Step and transfer
/// indices are 0-based.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VerifyError {
    /// The schedule's shape is wrong.
    #[error("schedule has {ranks} ranks and {chunks} chunks; chunks must be a positive multiple of the {blocks} blocks of {primitive} and ranks >= 1 (root {root} must be a rank)")]
    BadShape {
        primitive: Primitive,
        ranks: usize,
        chunks: usize,
        blocks: usize,
        root: usize,
    },
    /// A transfer names a rank or chunk that does not exist, moves no
    /// chunk, or changes chunk size ([`Schedule::check_transfer`]).
    #[error(transparent)]
    BadTransfer(#[from] BadTransfer),
    /// A transfer sends a chunk that holds nothing.
    #[error(
        "step {step}, transfer {transfer}: rank {src} sends chunk {chunk}, which holds nothing yet"
    )]
    SendsNothing {
        step: usize,
        transfer: usize,
        src: usize,
        chunk: usize,
    },
    /// A reduce would count a contribution twice.
    #[error("step {step}, transfer {transfer}: rank {dst} reduces chunk {chunk} {incoming} into {held}: contributions {overlap} would be counted twice")]
    DuplicateContribution {
        step: usize,
        transfer: usize,
        dst: usize,
        chunk: usize,
        incoming: String,
        held: String,
        overlap: String,
    },
    /// A reduce combines data of different input chunks.
    #[error("step {step}, transfer {transfer}: rank {dst} reduces data of input chunk {incoming} into chunk {chunk}, which holds data of input chunk {held}")]
    MixedOrigins {
        step: usize,
        transfer: usize,
        dst: usize,
        chunk: usize,
        incoming: usize,
        held: usize,
    },
    /// A chunk is written twice in one step and one write is a copy.
    #[error("step {step}: rank {dst} chunk {chunk} is written by transfers {first} and {second} in the same step, and one is a copy")]
    WriteConflict {
        step: usize,
        dst: usize,
        chunk: usize,
        first: usize,
        second: usize,
    },
    /// The final state is wrong.
    #[error("after the last step rank {rank} chunk {chunk} holds {got}, but {primitive} requires {want}")]
    WrongResult {
        primitive: Primitive,
        rank: usize,
        chunk: usize,
        got: String,
        want: String,
    },
}

#[derive(Clone)]
struct Cell {
    set: RankSet,
    origin: usize,
    expr: Option<ExprId>,
}

fn describe(set: &RankSet, origin: usize, chunk: usize) -> String {
    if set.is_empty() || origin == chunk {
        set.describe()
    } else {
        format!("{} of chunk {origin}", set.describe())
    }
}

/// Verifies `schedule`; on success returns the per-step trace and the final
/// expressions.
///
/// Errors: the first [`VerifyError`] found, in step order.
pub fn verify(schedule: &Schedule) -> Result<Verified, VerifyError> {
    check_shape(schedule)?;
    let mut exprs: Vec<Expr> = Vec::new();
    let mut state = initial_state(schedule, &mut exprs);
    let mut trace: Vec<Vec<Vec<RankSet>>> = vec![snapshot(&state)];
    for (si, step) in schedule.steps.iter().enumerate() {
        let reads = read_sources(schedule, si, &state)?;
        apply_receives(step, si, reads, &mut state, &mut exprs)?;
        trace.push(snapshot(&state));
    }
    check_result(schedule, &state)?;
    let final_exprs = state
        .iter()
        .map(|row| row.iter().map(|x| x.expr).collect())
        .collect();
    Ok(Verified {
        trace,
        exprs,
        final_exprs,
    })
}

/// Rejects a schedule whose ranks, chunks or root cannot describe its
/// primitive, before anything indexes chunks by block or rank by root.
fn check_shape(schedule: &Schedule) -> Result<(), VerifyError> {
    let n = schedule.ranks;
    let blocks = schedule.blocks();
    if n == 0
        || schedule.chunks == 0
        || blocks == 0
        || schedule.chunks % blocks != 0
        || schedule.root >= n
    {
        return Err(VerifyError::BadShape {
            primitive: schedule.primitive,
            ranks: n,
            chunks: schedule.chunks,
            blocks,
            root: schedule.root,
        });
    }
    Ok(())
}

/// Every (rank, chunk) before the first step: the rank's own input where
/// the primitive gives it one (an [`Expr::Input`] in `exprs`), empty
/// elsewhere (scratch chunks included). Every cell's origin is its own
/// chunk, so that data that never moves is of the right input chunk.
fn initial_state(schedule: &Schedule, exprs: &mut Vec<Expr>) -> Vec<Vec<Cell>> {
    let c = schedule.total_chunks();
    (0..schedule.ranks)
        .map(|r| {
            (0..c)
                .map(|ch| {
                    if ch < schedule.chunks && schedule.holds_input(r, ch) {
                        exprs.push(Expr::Input { rank: r, chunk: ch });
                        Cell {
                            set: RankSet::single(r),
                            origin: ch,
                            expr: Some((exprs.len() - 1) as ExprId),
                        }
                    } else {
                        Cell {
                            set: RankSet::empty(),
                            origin: ch,
                            expr: None,
                        }
                    }
                })
                .collect()
        })
        .collect()
}

/// The contributions every cell holds, as the trace records them.
fn snapshot(state: &[Vec<Cell>]) -> Vec<Vec<RankSet>> {
    state
        .iter()
        .map(|row| row.iter().map(|x| x.set.clone()).collect())
        .collect()
}

/// Checks the shape of every transfer of step `si` and reads its source
/// cells, all before any receive applies: a step's sends see the state at
/// the start of the step, whatever order its transfers are listed in.
fn read_sources(
    schedule: &Schedule,
    si: usize,
    state: &[Vec<Cell>],
) -> Result<Vec<Vec<Cell>>, VerifyError> {
    let step = &schedule.steps[si];
    let mut reads = Vec::with_capacity(step.transfers.len());
    for (ti, t) in step.transfers.iter().enumerate() {
        schedule.check_transfer(si, ti, None)?;
        let mut cells = Vec::with_capacity(t.count);
        for ch in t.chunks() {
            let cell = &state[t.src][ch];
            if cell.set.is_empty() {
                return Err(VerifyError::SendsNothing {
                    step: si,
                    transfer: ti,
                    src: t.src,
                    chunk: ch,
                });
            }
            cells.push(cell.clone());
        }
        reads.push(cells);
    }
    Ok(reads)
}

/// Which transfer first wrote each (rank, chunk) in a step, and how.
type Writes = std::collections::HashMap<(usize, usize), (usize, TransferKind)>;

/// Applies step `si`'s receives (`reads`, from [`read_sources`]) in listed
/// order, which is the reduction order. Each chunk's write is checked
/// against the step's earlier writes before the receive applies, so a
/// write conflict is the error reported even when the value it would
/// bring is also wrong.
fn apply_receives(
    step: &Step,
    si: usize,
    reads: Vec<Vec<Cell>>,
    state: &mut [Vec<Cell>],
    exprs: &mut Vec<Expr>,
) -> Result<(), VerifyError> {
    let mut written = Writes::default();
    for (ti, (t, cells)) in step.transfers.iter().zip(reads).enumerate() {
        for (ch, incoming) in t.dst_chunks().zip(cells) {
            note_write(&mut written, step, si, ti, ch)?;
            let held = &mut state[t.dst][ch];
            match t.kind {
                TransferKind::Copy => *held = incoming,
                TransferKind::Reduce => reduce_into(held, incoming, si, ti, t.dst, ch, exprs)?,
            }
        }
    }
    Ok(())
}

/// Records that transfer `ti` of step `si` writes chunk `ch` of its
/// receiver. Two writes to one chunk in a step are only well defined when
/// both reduce, or when the rank's own local copy comes first and reduces
/// follow it (the local operand is read while the messages arrive);
/// otherwise the result would depend on message order.
fn note_write(
    written: &mut Writes,
    step: &Step,
    si: usize,
    ti: usize,
    ch: usize,
) -> Result<(), VerifyError> {
    let t = &step.transfers[ti];
    if let Some(&(first, kind)) = written.get(&(t.dst, ch)) {
        let local_copy_first = kind == TransferKind::Copy
            && step.transfers[first].src == t.dst
            && t.kind == TransferKind::Reduce;
        if local_copy_first {
            // The reduces after a local copy apply in listed order.
            written.insert((t.dst, ch), (first, TransferKind::Reduce));
        } else if kind == TransferKind::Copy || t.kind == TransferKind::Copy {
            return Err(VerifyError::WriteConflict {
                step: si,
                dst: t.dst,
                chunk: ch,
                first,
                second: ti,
            });
        }
    } else {
        written.insert((t.dst, ch), (ti, t.kind));
    }
    Ok(())
}

/// Reduces `incoming` into `held` (rank `dst`'s chunk `ch`, by transfer
/// `ti` of step `si`), refusing what would make the result wrong whatever
/// the data: values of different input chunks, or a contribution counted
/// twice. The new expression is `op(held, incoming)`, in that order,
/// because the checker reproduces the reduction order exactly.
fn reduce_into(
    held: &mut Cell,
    incoming: Cell,
    si: usize,
    ti: usize,
    dst: usize,
    ch: usize,
    exprs: &mut Vec<Expr>,
) -> Result<(), VerifyError> {
    if !held.set.is_empty() && held.origin != incoming.origin {
        return Err(VerifyError::MixedOrigins {
            step: si,
            transfer: ti,
            dst,
            chunk: ch,
            incoming: incoming.origin,
            held: held.origin,
        });
    }
    if held.set.intersects(&incoming.set) {
        let overlap: RankSet = {
            let mut o = RankSet::empty();
            incoming
                .set
                .iter()
                .filter(|r| held.set.contains(*r))
                .for_each(|r| o.insert(r));
            o
        };
        return Err(VerifyError::DuplicateContribution {
            step: si,
            transfer: ti,
            dst,
            chunk: ch,
            incoming: incoming.set.describe(),
            held: held.set.describe(),
            overlap: overlap.describe(),
        });
    }
    held.set = held.set.union(&incoming.set);
    held.origin = incoming.origin;
    held.expr = match (held.expr, incoming.expr) {
        (Some(a), Some(b)) => {
            exprs.push(Expr::Reduce(a, b));
            Some((exprs.len() - 1) as ExprId)
        }
        (None, b) => b,
        (a, None) => a,
    };
    Ok(())
}

/// Checks that every output chunk ends with exactly the contributions and
/// origin [`Schedule::expected_after`] requires (scratch chunks have no
/// requirement), so a schedule is proven to deliver the right rank's
/// right piece, not just some data.
fn check_result(schedule: &Schedule, state: &[Vec<Cell>]) -> Result<(), VerifyError> {
    for (r, row) in state.iter().enumerate() {
        for (ch, cell) in row.iter().enumerate().take(schedule.chunks) {
            let Some((ranks, origin)) = schedule.expected_after(r, ch) else {
                continue;
            };
            let mut want = RankSet::empty();
            ranks.iter().for_each(|&q| want.insert(q));
            if cell.set != want || (!want.is_empty() && cell.origin != origin) {
                return Err(VerifyError::WrongResult {
                    primitive: schedule.primitive,
                    rank: r,
                    chunk: ch,
                    got: describe(&cell.set, cell.origin, ch),
                    want: describe(&want, origin, ch),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_set_basics() {
        let mut s = RankSet::single(3);
        s.insert(70);
        assert!(s.contains(3) && s.contains(70) && !s.contains(4));
        assert_eq!(s.len(), 2);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 70]);
        assert_eq!(RankSet::all(8).describe(), "{0..7}");
        assert_eq!(s.describe(), "{3,70}");
        assert_eq!(RankSet::empty().describe(), "{}");
        assert!(s.intersects(&RankSet::single(70)));
        assert!(!s.intersects(&RankSet::single(5)));
    }
}
