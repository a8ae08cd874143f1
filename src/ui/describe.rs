//! Steps described in words, in the page's language: what happens ("NPU3
//! sends chunk 5, which already holds ranks 1–3, to NPU4, which adds it
//! into its own copy (now ranks 1–4)") and why the step exists in its
//! algorithm. "Holds ranks 1–3" comes from the verifier's trace; the device
//! word (NPU, GPU, rank) from the machine's library.

use crate::engine::collective::Primitive;
use crate::engine::dtype::ReduceOp;
use crate::engine::plan::Plan;
use crate::engine::schedule::TransferKind;
use crate::engine::verify::RankSet;
use crate::i18n::tr_args;
use crate::t;

/// A step in words: a heading, one sentence per group of transfers, and
/// why this step exists.
#[derive(Clone, Debug, PartialEq)]
pub struct StepText {
    /// `Step 3 of 14 — ReduceScatter:`
    pub heading: String,
    /// One sentence per sender (copies) or receiver (reduces).
    pub sentences: Vec<String>,
    /// Why the algorithm has this step (empty for the initial state).
    pub why: String,
}

/// The device word of the plan's machine: NPU (HCCL), GPU (NCCL), rank.
pub fn device_word(plan: &Plan) -> &'static str {
    plan.library.device_word()
}

/// A device's label (`NPU3`), or `rank 3` past the topology's devices.
pub fn label(plan: &Plan, r: usize) -> String {
    plan.topology
        .devices
        .get(r)
        .map_or_else(|| format!("rank {r}"), |d| d.label.clone())
}

/// Joins words as a list in the page's language: `a`, `a and b`,
/// `a, b and c` (`a、b 和 c`).
pub fn list(parts: Vec<String>) -> String {
    let mut parts = parts;
    match parts.len() {
        0 => String::new(),
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().unwrap_or_default();
            let head = parts.join(&t!("list-sep"));
            t!("list-two", a = head, b = last)
        }
    }
}

/// Device labels as compact runs: `NPU0`, `NPU0 and NPU3`, `NPU0, NPU2–NPU7`.
pub fn devices(plan: &Plan, ranks: &[usize]) -> String {
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
            0 => parts.push(label(plan, v[i])),
            1 => {
                parts.push(label(plan, v[i]));
                parts.push(label(plan, v[j]));
            }
            _ => parts.push(format!("{}–{}", label(plan, v[i]), label(plan, v[j]))),
        }
        i = j + 1;
    }
    list(parts)
}

/// Rank numbers as runs in ring order from `start`: `1–3`, `6, 7, 0–2`.
pub fn rank_runs(set: &RankSet, start: usize, n: usize) -> String {
    let n = n.max(1);
    let mut v: Vec<usize> = set.iter().collect();
    v.sort_by_key(|&r| (r + n - start % n) % n);
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => v[i].to_string(),
            1 => format!("{}{}{}", v[i], t!("list-sep"), v[j]),
            _ => format!("{}–{}", v[i], v[j]),
        });
        i = j + 1;
    }
    parts.join(&t!("list-sep"))
}

fn chunk_words(first: usize, count: usize) -> String {
    if count <= 1 {
        t!("chunk-one", first = first)
    } else {
        t!("chunk-range", first = first, last = first + count - 1)
    }
}

fn reduce_verb(op: ReduceOp) -> String {
    match op {
        ReduceOp::Sum => t!("verb-sum"),
        ReduceOp::Prod => t!("verb-prod"),
        ReduceOp::Max => t!("verb-max"),
        ReduceOp::Min => t!("verb-min"),
        ReduceOp::Avg => t!("verb-avg"),
    }
}

/// What `rank`'s `chunk` holds after `after` steps, in words: "every
/// rank's contribution", "rank 3's contribution", "ranks 1–3".
fn holds(plan: &Plan, after: usize, rank: usize, chunk: usize) -> String {
    let Some(set) = plan
        .verified
        .as_ref()
        .and_then(|v| v.trace.get(after))
        .and_then(|s| s.get(rank))
        .and_then(|r| r.get(chunk))
    else {
        return t!("holds-nothing");
    };
    let n = plan.config.ranks;
    match set.len() {
        0 => t!("holds-nothing"),
        1 => t!("holds-one", r = set.iter().next().unwrap_or(0)),
        k if k == n => t!("holds-every"),
        _ => t!("holds-ranks", ranks = rank_runs(set, (rank + 1) % n, n)),
    }
}

/// A phase name in the page's language ("intra-server AllGather" →
/// "Server内 AllGather"); primitive names stay as HCCL writes them.
pub fn phase_words(phase: &str) -> String {
    phase
        .replace("intra-server", &t!("phase-intra"))
        .replace("inter-server", &t!("phase-inter"))
        .replace("(chain)", &t!("phase-chain"))
        .replace("(binomial)", &t!("phase-binomial"))
}

/// The kind of a step, for its "why": `rs`, `ag`, `fold`, `unfold`,
/// `spread`, `collect`, `a2a`, `barrier`, `inter`, `intra`, `sendrecv`,
/// `other`.
pub fn phase_kind(phase: &str) -> &'static str {
    let p = phase.to_ascii_lowercase();
    if p.starts_with("inter-server") {
        "inter"
    } else if p.starts_with("intra-server") {
        "intra"
    } else if p.starts_with("unfold") {
        "unfold"
    } else if p.starts_with("fold") {
        "fold"
    } else if p.contains("reducescatter") {
        "rs"
    } else if p.contains("allgather") {
        "ag"
    } else if p.contains("alltoall") {
        "a2a"
    } else if p.contains("barrier") {
        "barrier"
    } else if p.contains("sendrecv") {
        "sendrecv"
    } else if p.contains("broadcast") || p.contains("scatter") {
        "spread"
    } else if p.contains("reduce") || p.contains("gather") {
        "collect"
    } else {
        "other"
    }
}

/// Why step `step` (1-based) of the plan exists, in words.
pub fn why(plan: &Plan, step: usize) -> String {
    let Some(s) = plan.drawn_schedule().steps.get(step.wrapping_sub(1)) else {
        return String::new();
    };
    let id = format!("why-{}", plan.algorithm.name());
    tr_args(
        &id,
        vec![
            ("phase", phase_kind(&s.phase).into()),
            ("n", plan.config.ranks.into()),
            ("device", device_word(plan).into()),
        ],
    )
}

fn start_words(plan: &Plan) -> String {
    tr_args(
        &format!("start-{}", plan.config.primitive.name()),
        vec![
            ("device", device_word(plan).into()),
            ("chunks", plan.drawn_schedule().chunks.into()),
            ("root", plan.drawn_schedule().root.into()),
        ],
    )
}

fn goal_words(plan: &Plan) -> String {
    tr_args(
        &format!("goal-{}", plan.config.primitive.name()),
        vec![
            ("device", device_word(plan).into()),
            ("root", plan.drawn_schedule().root.into()),
        ],
    )
}

/// Describes the state after `step` steps (0 = before the first step).
pub fn step_text(plan: &Plan, step: usize) -> StepText {
    let n = plan.config.ranks;
    let total = plan.steps();
    let op = plan.config.primitive;
    let dev = device_word(plan);
    if step == 0 || step > total {
        return StepText {
            heading: t!("step-before-head", total = total, op = op.title()),
            sentences: vec![
                t!(
                    "step-intro",
                    op = op.title(),
                    n = n,
                    device = dev,
                    algo = plan.algorithm.name(),
                    what = start_words(plan)
                ),
                goal_words(plan),
            ],
            why: String::new(),
        };
    }
    let s = &plan.drawn_schedule().steps[step - 1];
    // Group: reduces by receiver (and chunk range), copies by sender.
    let mut groups: Vec<(TransferKind, usize, usize, usize, Vec<usize>)> = Vec::new();
    for tr in &s.transfers {
        let (key, other) = match tr.kind {
            TransferKind::Reduce => (tr.dst, tr.src),
            TransferKind::Copy => (tr.src, tr.dst),
        };
        match groups
            .iter_mut()
            .find(|g| g.0 == tr.kind && g.1 == key && g.2 == tr.first && g.3 == tr.count)
        {
            Some(g) => g.4.push(other),
            None => groups.push((tr.kind, key, tr.first, tr.count, vec![other])),
        }
    }
    // "all 7 other NPUs" reads better than a list that skips one.
    let others_words = |key: usize, others: &Vec<usize>| {
        if n > 2 && others.len() == n - 1 && !others.contains(&key) {
            t!("others-all", n = n - 1, device = dev)
        } else {
            devices(plan, others)
        }
    };
    let mut sentences: Vec<String> = groups
        .iter()
        .map(|(kind, key, first, count, others)| {
            let chunks = chunk_words(*first, *count);
            match kind {
                TransferKind::Reduce if others.len() == 1 => t!(
                    "say-reduce",
                    src = label(plan, others[0]),
                    chunks = chunks,
                    before = holds(plan, step - 1, others[0], *first),
                    dst = label(plan, *key),
                    verb = reduce_verb(plan.config.redop),
                    after = holds(plan, step, *key, *first)
                ),
                TransferKind::Reduce => t!(
                    "say-reduce-many",
                    srcs = others_words(*key, others),
                    chunks = chunks,
                    dst = label(plan, *key),
                    inorder = if others.windows(2).all(|w| w[0] < w[1]) {
                        t!("in-rank-order")
                    } else {
                        String::new()
                    },
                    verb = reduce_verb(plan.config.redop),
                    after = holds(plan, step, *key, *first)
                ),
                TransferKind::Copy if others.len() == 1 => t!(
                    "say-copy",
                    src = label(plan, *key),
                    chunks = chunks,
                    before = holds(plan, step - 1, *key, *first),
                    dst = label(plan, others[0])
                ),
                TransferKind::Copy => t!(
                    "say-copy-many",
                    src = label(plan, *key),
                    chunks = chunks,
                    before = holds(plan, step - 1, *key, *first),
                    dsts = others_words(*key, others)
                ),
            }
        })
        .collect();
    if step == total {
        let done = match op {
            Primitive::AllReduce => t!("done-allreduce", device = dev),
            Primitive::ReduceScatter => t!("done-reducescatter", device = dev),
            Primitive::AllGather => t!("done-allgather", device = dev),
            _ => t!("done-other", op = op.title()),
        };
        sentences.push(done);
    }
    StepText {
        heading: t!(
            "step-head",
            step = step,
            total = total,
            phase = phase_words(&s.phase)
        ),
        sentences,
        why: why(plan, step),
    }
}
