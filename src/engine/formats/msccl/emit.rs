//! Stage 7: the [`Schedule`]. The placed actions' transfers step by step,
//! each labelled with the element it comes from, then the layout's
//! in-place and out-of-place copies.

use super::graph::{Graph, Loc};
use super::layout::{Layout, Shape};
use super::place::Placed;
use super::temps::Temps;
use crate::engine::schedule::{Schedule, Step, Transfer, TransferKind};

/// What the file says about the schedule beyond its operations.
pub(super) struct Header<'a> {
    /// The schedule's algorithm name.
    pub algorithm: String,
    /// The root of a rooted collective, if the file says.
    pub root: Option<usize>,
    /// The steps' phases, if the file says (`[(phase, steps)]`).
    pub phases: Option<&'a [(String, usize)]>,
}

/// The schedule and, per step and transfer, the element it comes from.
pub(super) struct Emitted {
    pub schedule: Schedule,
    pub origins: Vec<Vec<String>>,
}

/// Emits the schedule. `limits` are remarks on the runtime's limits,
/// noted after the phases.
pub(super) fn emit(
    g: &Graph,
    layout: &Layout,
    placed: &Placed,
    temps: &Temps,
    header: Header<'_>,
    limits: Vec<String>,
    notes: &mut Vec<String>,
) -> Emitted {
    let (n, m) = (layout.n, layout.m);
    let chunks = layout.primary * m;
    let resolve = |l: Loc| -> usize {
        match l {
            Loc::Chunk(c) => c,
            Loc::Temp(t) => temps.at.get(t).copied().unwrap_or(0),
        }
    };
    let steps_n = placed.level.iter().copied().max().map_or(0, |x| x + 1);
    let mut steps: Vec<Step> = (0..steps_n)
        .map(|_| Step {
            phase: "MSCCL".into(),
            transfers: Vec::new(),
        })
        .collect();
    let mut origins: Vec<Vec<String>> = vec![Vec::new(); steps_n];
    // Sends that run ahead: a local copy into their temporary, in their
    // own step, after that step's actions (it touches nothing else).
    let mut early: Vec<(usize, String, Transfer)> = Vec::new();
    for &i in &placed.order {
        let a = &g.actions[i];
        let label = g
            .ops
            .get(a.origin)
            .cloned()
            .unwrap_or_else(|| "algo".into());
        let l = placed.level[i];
        let held = placed.ahead[i].zip(temps.ahead[i]);
        let last = a.parts.len().saturating_sub(1);
        for (k, pt) in a.parts.iter().enumerate() {
            let mut first = resolve(pt.from);
            if let (Some((ls, temp)), true) = (held, k == last) {
                let send = g.action_sides[i].first().copied().unwrap_or(0);
                early.push((
                    ls,
                    g.describe(send),
                    Transfer {
                        src: pt.src,
                        dst: pt.src,
                        first,
                        count: pt.count,
                        kind: TransferKind::Copy,
                        dst_first: temp,
                    },
                ));
                first = temp;
            }
            origins[l].push(label.clone());
            steps[l].transfers.push(Transfer {
                src: pt.src,
                dst: pt.dst,
                first,
                count: pt.count,
                kind: pt.kind,
                dst_first: resolve(pt.to),
            });
        }
    }
    for (ls, label, t) in early {
        origins[ls].push(label);
        steps[ls].transfers.push(t);
    }
    if let Some(ph) = header.phases {
        name_phases(&mut steps, ph, notes);
    }
    if layout.pre_copy {
        let send_area = layout.c * m;
        origins.insert(0, vec!["in-place copy".into(); n]);
        steps.insert(
            0,
            local_step("in-place copy", n, 0, send_area, |_| send_area),
        );
    }
    if layout.post_copy {
        origins.push(vec!["output copy".into(); n]);
        let (count, at_rank) = match layout.shape {
            Shape::Scattered => (layout.per * m, layout.per * m),
            _ => (layout.c * m, 0),
        };
        steps.push(local_step("output copy", n, chunks, count, |r| r * at_rank));
    }
    notes.extend(limits);
    let schedule = Schedule {
        primitive: layout.primitive,
        algorithm: header.algorithm,
        ranks: n,
        chunks,
        root: header.root.unwrap_or(0),
        scratch: (layout.temp_base + temps.size) * m,
        steps,
    };
    if layout.primitive.rooted() && header.root.is_none() {
        notes.push(
            "a rooted collective without ccl_root: the MSCCL file does not say its root; root 0 is assumed".into(),
        );
    }
    Emitted { schedule, origins }
}

/// Names the steps' phases when the file's phases cover every step.
fn name_phases(steps: &mut [Step], ph: &[(String, usize)], notes: &mut Vec<String>) {
    let total: usize = ph.iter().map(|x| x.1).sum();
    if total != steps.len() {
        notes.push(format!(
            "ccl_phases ignored: it names {total} steps, the program has {}",
            steps.len()
        ));
        return;
    }
    let mut k = 0;
    for (name, cnt) in ph {
        for _ in 0..*cnt {
            steps[k].phase = name.clone();
            k += 1;
        }
    }
}

/// A step in which every rank copies `count` chunks from `first` to
/// `dst_first(rank)` of its own buffer.
fn local_step(
    phase: &str,
    n: usize,
    first: usize,
    count: usize,
    dst_first: impl Fn(usize) -> usize,
) -> Step {
    Step {
        phase: phase.into(),
        transfers: (0..n)
            .map(|r| Transfer {
                src: r,
                dst: r,
                first,
                count,
                kind: TransferKind::Copy,
                dst_first: dst_first(r),
            })
            .collect(),
    }
}
