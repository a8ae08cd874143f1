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
    /// Per action whose send runs ahead, the first IR chunk of the
    /// temporary that holds its data until the receive.
    pub ahead: Vec<Option<usize>>,
    /// MSCCL chunks of scratch they take, after [`Layout::temp_base`].
    pub size: usize,
}

/// Gives every temporary a slot.
pub(super) fn assign(g: &Graph, placed: &Placed, layout: &Layout) -> Temps {
    let mut at = vec![0usize; g.temps.len()];
    let mut size_all = 0usize;
    let nt = g.temps.len();
    // (temp, from level, to level); a send that runs ahead is temporary
    // `nt + action`, on the sender's GPU, of the message's size.
    let mut live: Vec<(usize, usize, usize)> = g
        .temps
        .iter()
        .enumerate()
        .map(|(i, t)| (i, placed.level[t.write], placed.level[t.read]))
        .collect();
    let mut held: Vec<(usize, usize)> = vec![(0, 0); placed.ahead.len()];
    for (a, l) in placed.ahead.iter().enumerate() {
        let (Some(l), Some(net)) = (l, g.actions[a].parts.last()) else {
            continue;
        };
        held[a] = (net.src, net.count / layout.m.max(1));
        live.push((nt + a, *l, placed.level[a]));
    }
    live.sort_by_key(|x| (x.1, x.0));
    let mut ahead = vec![None; placed.ahead.len()];
    // Per rank: slots (offset, size, busy until level).
    let mut slots: HashMap<usize, Vec<(usize, usize, usize)>> = HashMap::new();
    for (t, from, to) in live {
        let (gpu, size) = match g.temps.get(t) {
            Some(temp) => (temp.gpu, temp.size),
            None => held[t - nt],
        };
        let v = slots.entry(gpu).or_default();
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
        let chunk = (layout.primary + layout.temp_base + off) * layout.m;
        match at.get_mut(t) {
            Some(x) => *x = chunk,
            None => ahead[t - nt] = Some(chunk),
        }
    }
    Temps {
        at,
        ahead,
        size: size_all,
    }
}
