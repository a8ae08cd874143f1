//! Stage 5: each action's IR step. With the file's `ccl_step` / `ccl_seq`
//! when every action has them and they respect every edge (an exported
//! schedule comes back exactly), else as early as the edges allow: a
//! message in the step of its send and its receive when one step can hold
//! both, else (a send the runtime buffers while its sender goes on to
//! what the receive waits for) its send a step or more ahead, holding the
//! data in a temporary until the receive.

use super::error::{err, MscclError};
use super::graph::Graph;
use super::order::Ordered;

/// Each action's step and the order of the actions.
pub(super) struct Placed {
    /// Per action, its IR step.
    pub level: Vec<usize>,
    /// The actions in the order their transfers are listed.
    pub order: Vec<usize>,
    /// Per action, the earlier step of its send when the send runs ahead
    /// of its receive.
    pub ahead: Vec<Option<usize>>,
}

/// Places the actions; a remark goes to `notes` when hints are ignored.
///
/// Errors: [`MscclError`] at a side whose waits no placement satisfies (a
/// send that must wait for its own receive's later step).
pub(super) fn place(g: &Graph, o: &Ordered, notes: &mut Vec<String>) -> Result<Placed, MscclError> {
    let na = g.actions.len();
    // Every action's hint, when every action has one.
    let all_hinted: Option<Vec<(usize, usize)>> = if na > 0 {
        g.actions.iter().map(|a| a.hint).collect()
    } else {
        None
    };
    if let Some(h) = all_hinted {
        match hint_violation(g, &h) {
            None => {
                let mut order: Vec<usize> = (0..na).collect();
                order.sort_by_key(|&i| h[i]);
                let level = h.iter().map(|x| x.0).collect();
                let ahead = vec![None; na];
                return Ok(Placed {
                    level,
                    order,
                    ahead,
                });
            }
            Some((x, y)) => notes.push(format!(
                "ccl_step/ccl_seq ignored: {} would run before {}, which it waits for",
                g.describe(x),
                g.describe(y)
            )),
        }
    } else if g.actions.iter().any(|a| a.hint.is_some()) {
        notes.push("ccl_step/ccl_seq ignored: only some steps have them".into());
    }
    let (level, ahead) = match earliest(g, o, false) {
        Ok(level) => (level[..na].to_vec(), vec![None; na]),
        Err(e) => {
            let Ok(level) = earliest(g, o, true) else {
                return Err(e);
            };
            let ahead: Vec<Option<usize>> = (0..na)
                .map(|a| {
                    let send = *g.action_sides[a].first()?;
                    let l = level[na + send];
                    (g.actions[a].buffered && l < level[a]).then_some(l)
                })
                .collect();
            let n = ahead.iter().flatten().count();
            notes.push(format!("{n} message(s) wait in their connection's buffer: each send runs in an earlier step than its receive (a local copy into a temporary), as the runtime lets it while the sender goes on"));
            (level[..na].to_vec(), ahead)
        }
    };
    // Every action has a side (one per part).
    let last_pos = |a: usize| g.action_sides[a].last().map_or(0, |&x| o.pos[x]);
    let mut order: Vec<usize> = (0..na).collect();
    order.sort_by_key(|&a| (level[a], last_pos(a)));
    Ok(Placed {
        level,
        order,
        ahead,
    })
}

/// The first edge `(x, y)` (x waits for y) the hints break, if any.
fn hint_violation(g: &Graph, h: &[(usize, usize)]) -> Option<(usize, usize)> {
    for (x, ps) in g.preds.iter().enumerate() {
        for e in ps {
            let (Some(ax), Some(ay)) = (g.sides[x].action, g.sides[e.from].action) else {
                continue;
            };
            if ax == ay {
                continue;
            }
            let fine = h[ax].0 > h[ay].0
                || (h[ax].0 == h[ay].0 && e.weight == 0 && (!e.ordered || h[ax].1 > h[ay].1));
            if !fine {
                return Some((x, e.from));
            }
        }
    }
    None
}

/// The earliest step of each action (then of each side that has a step of
/// its own): the longest path over the edges' weights. A message's two
/// sides share a step, unless `apart`, when a buffered message's send has
/// its own (at most its receive's, by the edge between them); so this
/// relaxes in causal order until nothing moves. A synchronization point
/// (a side with no action) has a step of its own that nothing is emitted
/// at.
fn earliest(g: &Graph, o: &Ordered, apart: bool) -> Result<Vec<usize>, MscclError> {
    let na = g.actions.len();
    let ns = g.sides.len();
    let unit = |x: usize| match g.sides[x].action {
        Some(a) if apart && g.actions[a].buffered && g.action_sides[a].first() == Some(&x) => {
            na + x
        }
        Some(a) => a,
        None => na + x,
    };
    let mut level = vec![0usize; na + ns];
    let mut changed = true;
    let mut passes = 0usize;
    while changed {
        changed = false;
        passes += 1;
        for &x in &o.by_pos {
            let ux = unit(x);
            for e in &g.preds[x] {
                let uy = unit(e.from);
                if ux == uy {
                    continue;
                }
                let want = level[uy] + e.weight;
                if want > level[ux] {
                    if want > ns {
                        return err(
                            g.describe(x),
                            "its waits cannot be placed in steps (a send must wait for its own receive's later step): the program deadlocks",
                        );
                    }
                    level[ux] = want;
                    changed = true;
                }
            }
        }
        if passes > ns + 2 {
            return err(g.describe(0), "its waits cannot be placed in steps");
        }
    }
    Ok(level)
}
