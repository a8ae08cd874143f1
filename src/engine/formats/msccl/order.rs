//! Stage 4: one order in which the runtime can run the program, and the
//! data dependences along it. A cycle of waits is a deadlock of the
//! runtime and an error.
//!
//! The waits of the runtime ([`super::ops`]) say what runs after what. In
//! the Schedule IR a step's sends read the state at its start and its
//! receives apply in listed order, so "after" needs a later step exactly
//! where data flows: a read after a write of the same chunk, or two writes
//! the verifier does not allow in one step. Those pairs are found chunk by
//! chunk along the causal order, so a dependence that runs through other
//! operations (a thread block receives chunk 1, then chunk 2, then sends
//! chunk 1) still puts the send after the receive it reads.

use super::error::{err, MscclError};
use super::graph::Graph;
use crate::engine::schedule::TransferKind;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A causal order of the sides.
pub(super) struct Ordered {
    /// Each side's position.
    pub pos: Vec<usize>,
    /// The sides by position.
    pub by_pos: Vec<usize>,
}

/// Orders the sides so that every side comes after the sides it waits for
/// (the lowest index first among those free to go, so the order is
/// deterministic), then adds the data dependences along that order. Chunk
/// ranges are counted in units of `unit` IR chunks (an MSCCL chunk).
///
/// Errors: [`MscclError`] at a side on a cycle of waits.
pub(super) fn order(g: &mut Graph, unit: usize) -> Result<Ordered, MscclError> {
    let o = causal(g)?;
    dependences(g, &o, unit.max(1));
    Ok(o)
}

/// A causal order of the sides.
fn causal(g: &Graph) -> Result<Ordered, MscclError> {
    let ns = g.sides.len();
    let mut pos = vec![usize::MAX; ns];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); ns];
    let mut indeg = vec![0usize; ns];
    for (x, ps) in g.preds.iter().enumerate() {
        for e in ps {
            succ[e.from].push(x);
            indeg[x] += 1;
        }
    }
    let mut heap: BinaryHeap<Reverse<usize>> =
        (0..ns).filter(|&i| indeg[i] == 0).map(Reverse).collect();
    let mut by_pos = Vec::with_capacity(ns);
    while let Some(Reverse(i)) = heap.pop() {
        pos[i] = by_pos.len();
        by_pos.push(i);
        for &x in &succ[i] {
            indeg[x] -= 1;
            if indeg[x] == 0 {
                heap.push(Reverse(x));
            }
        }
    }
    if by_pos.len() < ns {
        let stuck = (0..ns).find(|&i| indeg[i] > 0).unwrap_or(0);
        return err(
            g.describe(stuck),
            "waits in a cycle (thread-block order, depid waits, receives that wait for sends that come after them, sends that wait for room in a connection's buffer): the program deadlocks",
        );
    }
    Ok(Ordered { pos, by_pos })
}

/// What has been done to one chunk so far, along the causal order.
#[derive(Default)]
struct Chunk {
    /// The last side that wrote it: (side, kind, a local copy / reduce).
    writer: Option<(usize, TransferKind, bool)>,
    /// The sides that read it since.
    readers: Vec<usize>,
}

/// Adds an edge for every pair of accesses to one chunk of one GPU that
/// the order puts one after the other: a read after a write needs a later
/// step; a write after a read the same step or later; a write after a
/// write a later step when the verifier allows no two such writes in one
/// step (a copy into a chunk stands alone in its step, except a local copy
/// listed before reduces), else the same step, listed after. A race (two
/// accesses no wait orders) is resolved as the order runs it.
fn dependences(g: &mut Graph, o: &Ordered, unit: usize) {
    let mut state: HashMap<(usize, usize), Chunk> = HashMap::new();
    let units = |s: usize, e: usize| s / unit..e.div_ceil(unit);
    for &x in &o.by_pos {
        let side = &g.sides[x];
        let gpu = side.gpu;
        // (from, weight, ordered)
        let mut new: Vec<(usize, usize, bool)> = Vec::new();
        for &(s, e) in &side.reads {
            for u in units(s, e) {
                let c = state.entry((gpu, u)).or_default();
                if let Some((w, _, _)) = c.writer.filter(|w| w.0 != x) {
                    new.push((w, 1, false));
                }
                c.readers.push(x);
            }
        }
        for &(s, e, kind) in &side.writes {
            for u in units(s, e) {
                let c = state.entry((gpu, u)).or_default();
                if let Some((w, wk, wlocal)) = c.writer.filter(|w| w.0 != x) {
                    let apart = kind == TransferKind::Copy || (wk == TransferKind::Copy && !wlocal);
                    new.push((w, usize::from(apart), true));
                }
                new.extend(
                    c.readers
                        .drain(..)
                        .filter(|&r| r != x)
                        .map(|r| (r, 0, false)),
                );
                c.writer = Some((x, kind, side.local));
            }
        }
        new.sort_unstable();
        let mut last: Option<(usize, usize, bool)> = None;
        for e in new.into_iter().rev() {
            // Per predecessor, the heaviest edge (sorted last).
            if last.is_some_and(|l| l.0 == e.0) {
                continue;
            }
            last = Some(e);
            g.edge(e.0, x, e.1, e.2);
        }
    }
}
