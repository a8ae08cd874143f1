//! Stage 4: one order in which the runtime can run the program. A cycle of
//! waits is a deadlock of the runtime and an error.

use super::graph::Graph;
use super::{err, MscclError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A causal order of the sides.
pub(super) struct Ordered {
    /// Each side's position.
    pub pos: Vec<usize>,
    /// The sides by position.
    pub by_pos: Vec<usize>,
}

/// Orders the sides so that every side comes after the sides it waits for
/// (the lowest index first among those free to go, so the order is
/// deterministic).
///
/// Errors: [`MscclError`] at a side on a cycle of waits.
pub(super) fn order(g: &Graph) -> Result<Ordered, MscclError> {
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
            "waits in a cycle (thread-block order, depid waits and receives that wait for sends that come after them): the program deadlocks",
        );
    }
    Ok(Ordered { pos, by_pos })
}
