//! Each rank's buffer as a row of chunk cells. A cell's colour says which
//! ranks' contributions the chunk holds (the symbolic trace of
//! `engine::verify`); its label is the real value of the chunk's first
//! element as the workers computed it.

use super::buffer_canvas::BufferCanvas;
use super::colors;
use super::describe;
use super::format;
use super::lang::use_lang;
use super::run::RunView;
use crate::engine::plan::Plan;
use crate::engine::schedule::TransferKind;
use crate::engine::verify::RankSet;
use crate::i18n::Lang;
use crate::t;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`Buffers`].
#[derive(Properties, PartialEq)]
pub struct BuffersProps {
    /// The plan.
    pub plan: Rc<Plan>,
    /// The run (for sampled values).
    pub run: Rc<RunView>,
    /// Which state to show: after this many steps (index into the trace).
    pub shown: usize,
    /// The step whose transfers are marked (1-based; 0 = none).
    pub step: usize,
    /// A lesson's highlighted cell `(rank, chunk)`.
    #[prop_or_default]
    pub look_cell: Option<(usize, usize)>,
    /// A lesson highlights the whole grid.
    #[prop_or_default]
    pub look_panel: bool,
}

/// What the marked step does to one cell.
#[derive(Clone, Copy, Default)]
pub(super) struct Marks {
    /// Receives a copy / a reduction.
    pub copy: bool,
    pub reduce: bool,
    /// The (last listed) transfer it receives: sender and kind.
    pub from: Option<(usize, TransferKind)>,
    /// Is sent.
    pub send: bool,
}

/// Props of [`Cell`]: everything one chunk cell shows, so a step
/// re-renders only the cells whose state or marks changed.
#[derive(Properties, PartialEq)]
struct CellProps {
    /// The page's language (the tooltip's words).
    lang: Lang,
    /// Rank count.
    n: usize,
    /// The rank's device label.
    device: AttrValue,
    chunk: usize,
    /// Whose contributions the chunk holds.
    set: RankSet,
    /// The workers' value of its first element: `None` not arrived yet,
    /// `Some(None)` no value.
    sample: Option<Option<f64>>,
    /// Received in the marked step: from whom (label), how.
    from: Option<(AttrValue, TransferKind)>,
    copy: bool,
    reduce: bool,
    send: bool,
    /// Part of the collective's output.
    is_output: bool,
    /// Faded: scratch, once the collective is done.
    scratch: bool,
    /// A lesson's highlighted cell.
    look: bool,
}

/// One chunk cell. Its colour and tooltip are made only when what it
/// holds, its value, its receive or the language change.
#[function_component(Cell)]
fn cell(p: &CellProps) -> Html {
    let looks = use_memo(
        (
            p.lang,
            p.n,
            p.device.clone(),
            p.chunk,
            p.set.clone(),
            p.sample,
            p.from.clone(),
            p.is_output,
        ),
        |(_, n, device, chunk, set, sample, from, is_output)| {
            let (n, chunk) = (*n, *chunk);
            let colour = colors::cell(set, n);
            let style = colour
                .as_ref()
                .map(|(bg, fg)| format!("background:{bg};color:{fg};"))
                .unwrap_or_default();
            CellLooks {
                empty: colour.is_none(),
                complete: colour.is_some() && set.len() == n && n > 1,
                style: AttrValue::from(style),
                title: AttrValue::from(cell_title(
                    n,
                    device,
                    chunk,
                    set,
                    *sample,
                    from.as_ref(),
                    *is_output,
                )),
                ranks: AttrValue::from(format::ranks(set.iter())),
            }
        },
    );
    let n = p.n;
    let label = match p.sample {
        Some(Some(v)) => format::sample(v),
        Some(None) => "–".to_string(),
        None => "…".to_string(),
    };
    let class = classes!(
        "cell",
        looks.empty.then_some("empty"),
        looks.complete.then_some("complete"),
        p.copy.then_some("recv-copy"),
        p.reduce.then_some("recv-reduce"),
        p.send.then_some("send"),
        p.scratch.then_some("scratch"),
        p.look.then_some("lesson-look")
    );
    // One pip per rank (a cell is drawn for small grids only; larger
    // ones are a canvas: [`compact`], [`BufferCanvas`]).
    let pips = (0..n).map(|q| {
        let on = p.set.contains(q);
        html! { <span class={classes!("pip", on.then_some("on"))} title={format!("rank {q}")}></span> }
    });
    html! {
        <div class={class} style={looks.style.clone()} title={looks.title.clone()} data-ranks={looks.ranks.clone()} data-chunk={p.chunk.to_string()}>
            <span class="val">{label}</span>
            <span class="pips">{ for pips }</span>
        </div>
    }
}

/// A cell's tooltip: its device and chunk, whose contributions it holds,
/// its first value, what it receives in the marked step, and whether it
/// is part of the output.
fn cell_title(
    n: usize,
    device: &AttrValue,
    chunk: usize,
    set: &RankSet,
    sample: Option<Option<f64>>,
    from: Option<&(AttrValue, TransferKind)>,
    is_output: bool,
) -> String {
    let role = from
        .map(|(src, kind)| {
            format!(
                " · {}",
                t!(
                    "buf-receives",
                    src = src.to_string(),
                    kind = if *kind == TransferKind::Copy {
                        t!("kind-copy")
                    } else {
                        t!("kind-reduce")
                    }
                )
            )
        })
        .unwrap_or_default();
    format!(
        "{}{}{}{}",
        t!(
            "buf-holds",
            device = device.to_string(),
            chunk = chunk,
            ranks = holds_words(set, n)
        ),
        match sample {
            Some(Some(v)) => format!(" · {}", t!("buf-first", value = v.to_string())),
            _ => String::new(),
        },
        role,
        if is_output {
            String::new()
        } else {
            format!(" · {}", t!("buf-not-output"))
        }
    )
}

/// A cell's colour and words, made once per content ([`Cell`]).
struct CellLooks {
    empty: bool,
    complete: bool,
    style: AttrValue,
    /// Tooltip and `data-ranks`.
    title: AttrValue,
    ranks: AttrValue,
}

/// Most cells (ranks × chunks) the grid draws as DOM cells, each with its
/// value and a pip per rank.
///
/// Above it the DOM grid costs more than the page's 100 ms task budget
/// and no longer fits its panel: AlltoAllV at 8 ranks has 128
/// chunks a rank, 1 024 cells and 12 363 elements as DOM cells, made in a
/// 179 ms task and laid out in a 129 ms one, 128 columns overflowing the panel; at 16
/// ranks (512 chunks) 159 007 elements, 828 ms and 1.5 s. The default
/// page's grid (8 ranks × 8 chunks) stays well below it.
pub const MAX_DOM_CELLS: usize = 256;

/// Whether the grid of `n` ranks × `chunks` chunks is compact: colour
/// only, painted on one canvas ([`BufferCanvas`]) instead of drawn as
/// cells. True above 16 ranks (a pip per rank no longer fits a cell) or
/// above [`MAX_DOM_CELLS`] cells.
pub fn compact(n: usize, chunks: usize) -> bool {
    n > 16 || n.saturating_mul(chunks) > MAX_DOM_CELLS
}

/// The buffer view with its legend.
#[function_component(Buffers)]
pub fn buffers(p: &BuffersProps) -> Html {
    let lang = use_lang();
    let plan = &p.plan;
    let n = plan.config.ranks;
    let chunks = plan.drawn_schedule().chunks;
    let shown = p.shown.min(plan.steps());
    // A large grid is compact: colour only, on a canvas ([`compact`],
    // [`BufferCanvas`]: what a cell holds is in words under the grid for
    // the cell under the pointer or the keyboard cursor, and in the text
    // summary below).
    let compact = compact(n, chunks);
    let Some(state) = plan.verified.as_ref().and_then(|v| v.trace.get(shown)) else {
        return html! {};
    };
    let have_samples = p.run.samples.iter().any(Option::is_some);
    let lesson_cell = p.look_cell;

    let header = html! {
        <div class="buf-row buf-head">
            <div class="buf-label"></div>
            { for (0..chunks).map(|c| {
                let b = plan.drawn_schedule().block_of(c);
                let what = match plan.config.primitive {
                    crate::engine::collective::Primitive::AlltoAll if b >= n => t!("buf-recv-slot", b = b - n),
                    crate::engine::collective::Primitive::AlltoAll => t!("buf-send-piece", b = b),
                    crate::engine::collective::Primitive::AlltoAllV if b >= n * n => t!("buf-v-recv", a = (b - n * n) / n, b = (b - n * n) % n),
                    crate::engine::collective::Primitive::AlltoAllV => t!("buf-v-send", a = b / n, b = b % n),
                    crate::engine::collective::Primitive::SendRecv => if b == 0 { t!("buf-send-block") } else { t!("buf-recv-block") },
                    _ => t!("buf-block", b = b),
                };
                // Above 16 chunks the columns are too narrow for every label:
                // about eight are labelled, every 8th, 16th, ... chunk (all
                // keep their tooltip; "c104c112" ran together at 128).
                let every = if chunks <= 16 { 1 } else { (chunks / 8).next_power_of_two().max(8) };
                let label = if c % every == 0 { format!("c{c}") } else { String::new() };
                html! { <div class="buf-col" title={t!("buf-col", c = c, what = what)}>{label}</div> }
            }) }
        </div>
    };
    let at = |r: usize, c: usize| r * chunks + c;
    let marks = if compact {
        Vec::new()
    } else {
        step_marks(plan, p.step)
    };
    let labels: Vec<AttrValue> = if compact {
        Vec::new()
    } else {
        (0..plan.topology.devices.len().max(n))
            .map(|r| AttrValue::from(plan.topology.node_label(r).to_string()))
            .collect()
    };
    let done = shown == plan.steps();
    let rows = (0..if compact { 0 } else { n }).map(|r| {
        let cells = (0..chunks).map(|c| {
            let sample = p.run.samples.get(r).and_then(|s| s.as_ref()).and_then(|s| s.get(shown)).and_then(|row| row.get(c).copied());
            let m = &marks[at(r, c)];
            let is_output = plan.drawn_schedule().expected_after(r, c).is_some();
            html! {
                <Cell lang={lang} n={n} device={labels[r].clone()} chunk={c} set={state[r][c].clone()}
                    sample={sample}
                    from={m.from.map(|(src, k)| (labels[src].clone(), k))}
                    copy={m.copy} reduce={m.reduce} send={m.send} is_output={is_output}
                    // Scratch blocks carry partial results mid-run; fade
                    // them only once the collective is done.
                    scratch={!is_output && done}
                    look={lesson_cell == Some((r, c))} />
            }
        });
        html! {
            <div class="buf-row" data-rank={r.to_string()}>
                <div class="buf-label"><span class="swatch" style={format!("background:{}", colors::rank(r))}></span>{labels[r].clone()}</div>
                { for cells }
            </div>
        }
    });
    // Many ranks: every few counts of the ramp (the chips would not fit).
    let ramp_step = if n > 16 { n.div_ceil(16) } else { 1 };
    let ramp = (2..n).filter(|k| (k - 2) % ramp_step == 0).map(|k| {
        let mut s = crate::engine::verify::RankSet::empty();
        for q in 0..k {
            s.insert(q);
        }
        let (bg, fg) = colors::cell(&s, n).unwrap_or_default();
        html! { <span class="chip" style={format!("background:{bg};color:{fg}")} title={t!("legend-partial-chip", k = k, n = n)}>{k}</span> }
    });
    let summary = grid_summary(plan, state);
    html! {
        <section class={classes!("buffers", (p.look_panel).then_some("lesson-look"))} id="buffers" aria-label={t!("buffers-label")} tabindex="0">
            <div class="card-head">
                <h2>{t!("buffers")}</h2>
                <span class="muted">
                    { if shown == 0 { t!("buf-before") } else { t!("buf-after", step = shown, total = plan.steps()) } }
                    {" · "}{t!("buf-chunks", chunks = chunks, size = crate::engine::units::format_bytes(plan.config.bytes / chunks.max(1) as u64))}
                </span>
            </div>
            <div class={classes!("buf-grid", compact.then_some("compact"))} style={format!("--chunks:{chunks}")}
                role="group" aria-label={t!("buf-table-caption")} aria-describedby="buf-summary">
                {header}
                if compact {
                    <BufferCanvas plan={plan.clone()} run={p.run.clone()} shown={shown} step={p.step} look_cell={lesson_cell} />
                } else {
                    { for rows }
                }
            </div>
            <p id="buf-summary" class="sr-only">{summary}</p>
            <div class="legend" role="group" aria-label={t!("legend")}>
                <span class="legend-item">{t!("legend-one")}{" "}
                    { for (0..n.min(16)).map(|r| html! { <span class="chip" style={format!("background:{};color:{}", colors::rank(r), colors::rank_text(r))}>{r}</span> }) }
                    { if n > 16 { "…" } else { "" } }
                </span>
                if n > 2 {
                    <span class="legend-item">{t!("legend-partial")}{" "}{ for ramp }</span>
                }
                <span class="legend-item"><span class="chip" style={format!("background:{};color:#fff", colors::COMPLETE)}>{t!("legend-all")}</span>{" "}{t!("legend-full")}</span>
                <span class="legend-item"><span class="chip empty"></span>{" "}{t!("legend-empty")}</span>
                <span class="legend-item"><span class="chip outline-reduce"></span>{" "}{t!("legend-recv-reduce")}{" "}<span class="chip outline-copy"></span>{" "}{t!("legend-recv-copy")}{" "}<span class="chip outline-send"></span>{" "}{t!("legend-send")}</span>
            </div>
            <p class="hint">
                { if compact { t!("buf-hint-compact", n = n, chunks = chunks) + " " } else { String::new() } }
                { if have_samples { t!("buf-hint-values") } else { t!("buf-hint-waiting") } }
                { if (0..plan.config.ranks).any(|r| (0..plan.drawn_schedule().chunks).any(|c| plan.drawn_schedule().expected_after(r, c).is_none())) { format!(" {}", t!("buf-hint-scratch")) } else { String::new() } }
                { if matches!(plan.config.primitive, crate::engine::collective::Primitive::AlltoAll | crate::engine::collective::Primitive::AlltoAllV) { format!(" {}", t!("buf-hint-alltoall")) } else { String::new() } }
            </p>
        </section>
    }
}

/// What step `step` (1-based; 0 or past the end: none) does to each cell,
/// indexed `rank * chunks + chunk` (`ranks × chunks` entries): once per
/// render, not once per cell.
pub(super) fn step_marks(plan: &Plan, step: usize) -> Vec<Marks> {
    let schedule = plan.drawn_schedule();
    let (n, chunks) = (plan.config.ranks, schedule.chunks);
    let at = |r: usize, c: usize| r * chunks + c;
    let mut marks = vec![Marks::default(); n * chunks];
    let Some(s) = (step > 0).then(|| schedule.steps.get(step - 1)).flatten() else {
        return marks;
    };
    for t in &s.transfers {
        if t.dst < n {
            for c in t.dst_chunks().filter(|&c| c < chunks) {
                let m = &mut marks[at(t.dst, c)];
                match t.kind {
                    TransferKind::Copy => m.copy = true,
                    TransferKind::Reduce => m.reduce = true,
                }
                m.from = Some((t.src, t.kind));
            }
        }
        if t.src < n {
            for c in t.chunks().filter(|&c| c < chunks) {
                marks[at(t.src, c)].send = true;
            }
        }
    }
    marks
}

/// What rank `r`'s chunk `c` holds after `shown` steps with step `step`
/// marked, in words ([`cell_title`]: the canvas grid's cell under the
/// cursor); `None` if there is no such cell.
pub(super) fn cell_words(
    plan: &Plan,
    run: &RunView,
    shown: usize,
    step: usize,
    r: usize,
    c: usize,
) -> Option<String> {
    let schedule = plan.drawn_schedule();
    let set = plan.verified.as_ref()?.trace.get(shown)?.get(r)?.get(c)?;
    let sample = run
        .samples
        .get(r)
        .and_then(|s| s.as_ref())
        .and_then(|s| s.get(shown))
        .and_then(|row| row.get(c).copied());
    let label = |q: usize| AttrValue::from(plan.topology.node_label(q).to_string());
    // The last listed transfer into the cell, as the grid marks it.
    let from = (step > 0)
        .then(|| schedule.steps.get(step - 1))
        .flatten()
        .and_then(|s| {
            s.transfers
                .iter()
                .rev()
                .find(|t| t.dst == r && t.dst_chunks().any(|x| x == c))
        })
        .map(|t| (label(t.src), t.kind));
    let n = plan.config.ranks;
    Some(cell_title(
        n,
        &label(r),
        c,
        set,
        sample,
        from.as_ref(),
        schedule.expected_after(r, c).is_some(),
    ))
}

/// What a chunk holds, in words ("ranks 1–3", "every rank's contribution").
fn holds_words(set: &crate::engine::verify::RankSet, n: usize) -> String {
    match set.len() {
        0 => t!("legend-empty"),
        1 => t!("holds-one", r = set.iter().next().unwrap_or(0)),
        k if k == n => t!("holds-every"),
        _ => t!("holds-ranks", ranks = describe::rank_runs(set, 0, n)),
    }
}

/// The grid in words for screen readers: per rank, its chunks grouped by
/// what they hold (up to 16 ranks), else how many chunks are complete.
fn grid_summary(plan: &Plan, state: &[Vec<crate::engine::verify::RankSet>]) -> String {
    let n = plan.config.ranks;
    state
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let label = plan.topology.node_label(r).to_string();
            if n > 16 {
                let full = row.iter().filter(|s| s.len() == n).count();
                return format!("{label}: {full}/{} {}", row.len(), t!("legend-full"));
            }
            let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
            for (c, set) in row.iter().enumerate() {
                let w = holds_words(set, n);
                match groups.iter_mut().find(|g| g.0 == w) {
                    Some(g) => g.1.push(c),
                    None => groups.push((w, vec![c])),
                }
            }
            let parts: Vec<String> = groups
                .into_iter()
                .map(|(w, cs)| {
                    format!(
                        "{} {w}",
                        cs.iter()
                            .map(|c| format!("c{c}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    )
                })
                .collect();
            format!("{label}: {}", parts.join("; "))
        })
        .collect::<Vec<_>>()
        .join(". ")
}
