//! Stage 6: the temporaries' scratch chunks. Each holds data from the step
//! of the action that writes it to the step of the action that reads it;
//! a slot of the same size is reused once it is free.

use super::graph::Graph;
use super::layout::Layout;
use super::place::Placed;
use std::collections::HashMap;

/// Where the temporaries are.
pub(super) struct Temps {
    /// Per temporary, its first IR chunk.
    pub at: Vec<usize>,
    /// MSCCL chunks of scratch they take, after [`Layout::temp_base`].
    pub size: usize,
}

/// Gives every temporary a slot.
pub(super) fn assign(g: &Graph, placed: &Placed, layout: &Layout) -> Temps {
    let mut at = vec![0usize; g.temps.len()];
    let mut size_all = 0usize;
    // (temp, from level, to level)
    let mut live: Vec<(usize, usize, usize)> = g
        .temps
        .iter()
        .enumerate()
        .map(|(i, t)| (i, placed.level[t.write], placed.level[t.read]))
        .collect();
    live.sort_by_key(|x| (x.1, x.0));
    // Per rank: slots (offset, size, busy until level).
    let mut slots: HashMap<usize, Vec<(usize, usize, usize)>> = HashMap::new();
    for (t, from, to) in live {
        let temp = g.temps[t];
        let size = temp.size;
        let v = slots.entry(temp.gpu).or_default();
        let off = match v.iter_mut().find(|s| s.1 == size && s.2 <= from) {
            Some(s) => {
                s.2 = to;
                s.0
            }
            None => {
                let off = v.iter().map(|s| s.0 + s.1).max().unwrap_or(0);
                v.push((off, size, to));
                off
            }
        };
        size_all = size_all.max(off + size);
        at[t] = (layout.primary + layout.temp_base + off) * layout.m;
    }
    Temps { at, size: size_all }
}
