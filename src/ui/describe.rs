//! Steps described in words, e.g. "Step 3 of 14 — ReduceScatter: NPU0 sends
//! chunk 6 to NPU1, which adds it into its own copy (now holds ranks
//! {0,5..7})".

use super::format;
use crate::engine::collective::Primitive;
use crate::engine::dtype::ReduceOp;
use crate::engine::plan::Plan;
use crate::engine::schedule::TransferKind;

/// A step in words: a heading and one sentence per group of transfers.
#[derive(Clone, Debug, PartialEq)]
pub struct StepText {
    /// `Step 3 of 14 — ReduceScatter:`
    pub heading: String,
    /// One sentence per sender (copies) or receiver (reduces).
    pub sentences: Vec<String>,
}

/// Device labels as compact runs: `NPU0`, `NPU0 and NPU3`, `NPU0, NPU2–NPU7`.
pub fn devices(plan: &Plan, ranks: &[usize]) -> String {
    let label = |r: usize| {
        plan.topology
            .devices
            .get(r)
            .map_or_else(|| format!("rank {r}"), |d| d.label.clone())
    };
    let mut v = ranks.to_vec();
    v.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        match j - i {
            0 => parts.push(label(v[i])),
            1 => {
                parts.push(label(v[i]));
                parts.push(label(v[j]));
            }
            _ => parts.push(format!("{}–{}", label(v[i]), label(v[j]))),
        }
        i = j + 1;
    }
    match parts.len() {
        0 => String::new(),
        1 => parts.remove(0),
        2 => format!("{} and {}", parts[0], parts[1]),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last}", parts.join(", "))
        }
    }
}

fn chunk_words(first: usize, count: usize) -> String {
    if count <= 1 {
        format!("chunk {first}")
    } else {
        format!("chunks {first}–{}", first + count - 1)
    }
}

/// What a receiver does with a reduce: "adds it into its own copy".
fn reduce_verb(op: ReduceOp, many: bool) -> String {
    let it = if many { "them" } else { "it" };
    match op {
        ReduceOp::Sum => format!("adds {it} into its own copy"),
        ReduceOp::Prod => format!("multiplies {it} into its own copy"),
        ReduceOp::Max => format!("keeps the element-wise maximum of {it} and its own copy"),
        ReduceOp::Min => format!("keeps the element-wise minimum of {it} and its own copy"),
    }
}

fn holds(plan: &Plan, step: usize, rank: usize, chunk: usize) -> String {
    let Some(set) = plan
        .verified
        .as_ref()
        .and_then(|v| v.trace.get(step))
        .and_then(|s| s.get(rank))
        .and_then(|r| r.get(chunk))
    else {
        return String::new();
    };
    if set.len() == plan.config.ranks {
        "now holds every rank's contribution".into()
    } else if set.len() == 1 {
        format!(
            "now holds rank {}'s contribution",
            set.iter().next().unwrap_or(0)
        )
    } else {
        let n = plan.config.ranks;
        format!(
            "now holds ranks {}",
            format::ranks_cyclic(set.iter(), (rank + 1) % n, n)
        )
    }
}

/// Describes the state after `step` steps (0 = before the first step).
pub fn step_text(plan: &Plan, step: usize) -> StepText {
    let n = plan.config.ranks;
    let total = plan.steps();
    let op = plan.config.op;
    if step == 0 || step > total {
        let what = match op {
            Primitive::AllReduce | Primitive::ReduceScatter => format!(
                "every NPU holds its own input in all {} chunks; chunk b is the block that rank b {}.",
                plan.drawn_schedule().chunks,
                if op == Primitive::AllReduce { "reduces first" } else { "ends up owning" }
            ),
            Primitive::AllGather | Primitive::Barrier => "each NPU holds only its own chunk (chunk r on NPU r); the other chunks are empty.".into(),
            Primitive::Reduce => format!("every NPU holds its own input in all {} chunks.", plan.drawn_schedule().chunks),
            Primitive::Broadcast | Primitive::Scatter => format!("only the root NPU{} holds data; the others are empty.", plan.drawn_schedule().root),
            Primitive::Gather => "each NPU holds only its own chunk (chunk r on NPU r).".into(),
            Primitive::AlltoAll | Primitive::AlltoAllV => "each NPU holds its send area: one piece for every rank (left half); the receive area (right half) is empty.".into(),
            Primitive::SendRecv => "each NPU holds its send block; its receive block is empty.".into(),
        };
        let goal = match op {
            Primitive::AllReduce => {
                "Goal: every NPU ends with every chunk reduced over all ranks.".to_string()
            }
            Primitive::ReduceScatter => {
                "Goal: NPU r ends with chunk r reduced over all ranks.".to_string()
            }
            Primitive::AllGather => "Goal: every NPU ends with every rank's chunk.".to_string(),
            Primitive::Barrier => "Goal: no NPU leaves before every NPU has arrived (every NPU hears from every other; no data).".to_string(),
            Primitive::Broadcast => format!("Goal: every NPU ends with NPU{}'s buffer.", plan.drawn_schedule().root),
            Primitive::Reduce => format!("Goal: NPU{} ends with every chunk reduced over all ranks.", plan.drawn_schedule().root),
            Primitive::Scatter => format!("Goal: NPU r ends with chunk r of NPU{}'s buffer.", plan.drawn_schedule().root),
            Primitive::Gather => format!("Goal: NPU{} ends with every rank's chunk.", plan.drawn_schedule().root),
            Primitive::AlltoAll | Primitive::AlltoAllV => "Goal: NPU r ends with every rank's piece for r in its receive area.".to_string(),
            Primitive::SendRecv => "Goal: NPU r ends with NPU r-1's send block in its receive block.".to_string(),
        };
        return StepText {
            heading: format!("Before step 1 of {total} — {}:", op.title()),
            sentences: vec![
                format!(
                    "{} on {n} ranks with {}: {what}",
                    op.title(),
                    plan.algorithm
                ),
                goal,
            ],
        };
    }
    let s = &plan.drawn_schedule().steps[step - 1];
    // Group: reduces by receiver (and chunk range), copies by sender.
    let mut groups: Vec<(TransferKind, usize, usize, usize, Vec<usize>)> = Vec::new();
    for t in &s.transfers {
        let (key, other) = match t.kind {
            TransferKind::Reduce => (t.dst, t.src),
            TransferKind::Copy => (t.src, t.dst),
        };
        match groups
            .iter_mut()
            .find(|g| g.0 == t.kind && g.1 == key && g.2 == t.first && g.3 == t.count)
        {
            Some(g) => g.4.push(other),
            None => groups.push((t.kind, key, t.first, t.count, vec![other])),
        }
    }
    // "all 7 other NPUs" reads better than a list that skips one.
    let others_words = |key: usize, others: &Vec<usize>| {
        if n > 2 && others.len() == n - 1 && !others.contains(&key) {
            format!("all {} other NPUs", n - 1)
        } else {
            devices(plan, others)
        }
    };
    let sentences: Vec<String> = groups
        .iter()
        .map(|(kind, key, first, count, others)| {
            let chunk = chunk_words(*first, *count);
            match kind {
                TransferKind::Reduce => {
                    let many = others.len() > 1;
                    format!(
                        "{} {} {chunk} to {}, which {}{} ({}).",
                        capitalise(&others_words(*key, others)),
                        if many { "send" } else { "sends" },
                        devices(plan, &[*key]),
                        reduce_verb(plan.config.redop, many),
                        match (many, others.windows(2).all(|w| w[0] < w[1])) {
                            (false, _) => "",
                            (true, true) => " one after another, in rank order",
                            (true, false) => " one after another",
                        },
                        holds(plan, step, *key, *first)
                    )
                }
                TransferKind::Copy => {
                    let many = others.len() > 1;
                    let after = if many {
                        format!(
                            "which each store it ({})",
                            holds(plan, step, others[0], *first)
                                .replace("now holds", "each now holds")
                        )
                    } else {
                        format!("which stores it ({})", holds(plan, step, others[0], *first))
                    };
                    format!(
                        "{} sends {chunk} to {}, {after}.",
                        devices(plan, &[*key]),
                        others_words(*key, others)
                    )
                }
            }
        })
        .collect();
    let mut sentences: Vec<String> = sentences;
    if step == total {
        sentences.push(match op {
            Primitive::AllReduce => {
                "Done: every NPU holds every chunk reduced over all ranks.".into()
            }
            Primitive::ReduceScatter => {
                "Done: NPU r holds chunk r reduced over all ranks (the other chunks are scratch)."
                    .into()
            }
            Primitive::AllGather => "Done: every NPU holds every rank's chunk.".into(),
            _ => format!("Done: {} complete.", op.title()),
        });
    }
    StepText {
        heading: format!("Step {step} of {total} — {}:", s.phase),
        sentences,
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
