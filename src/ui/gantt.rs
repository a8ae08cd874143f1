//! The modelled run as a Gantt chart: one row per link direction (or per
//! sending rank), one bar per busy interval (or transfer), the current
//! animation time as a cursor. Clicking the chart goes to the step at that
//! time. With HCCL buffer loops the chart shows loop 1 (what the steps
//! cover).

use super::colors;
use super::deferred::{hovered, use_drawn_pieces, Piece, Sliced};
use super::format::{self, coord as f};
use super::motion::use_progress;
use super::playback::model_time;
use crate::engine::cost::{LinkBusy, TransferTiming};
use crate::engine::degrade::{self, StepWait};
use crate::engine::formats::trace::chrome_trace;
use crate::engine::plan::Plan;
use crate::engine::schedule::Transfer;
use crate::t;
use std::collections::BTreeSet;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`Gantt`].
#[derive(Properties, PartialEq)]
pub struct GanttProps {
    /// The plan (with a simulated timeline).
    pub plan: Rc<Plan>,
    /// Current step, 1-based (0 = initial state).
    pub step: usize,
    /// Go to a step.
    pub on_goto: Callback<usize>,
}

const LABEL_W: f64 = 118.0;
const PLOT_W: f64 = 640.0;
const ROW_H: f64 = 13.0;
const AXIS_H: f64 = 22.0;
/// Most steps listed under "who waits for whom".
const MAX_WAIT_LINES: usize = 8;

/// Rows: links or ranks.
#[derive(Clone, Copy, PartialEq)]
enum By {
    Link,
    Rank,
}

/// What the chart needs of a plan beyond its timeline, made once per
/// plan (not per frame or step).
#[derive(PartialEq)]
struct Shape {
    /// The link directions that carry traffic, in row order (sorted).
    links: Vec<(usize, bool)>,
    /// Who waits for whom on a degraded machine.
    waits: Vec<StepWait>,
}

impl Shape {
    fn of(plan: &Plan) -> Shape {
        let links: BTreeSet<(usize, bool)> = plan
            .estimate
            .timeline
            .link_busy
            .iter()
            .map(|b| (b.link, b.forward))
            .collect();
        Shape {
            links: links.into_iter().collect(),
            waits: fault_waits(plan),
        }
    }

    /// Number of rows of the chart by `by`.
    fn rows(&self, plan: &Plan, by: By) -> usize {
        match by {
            By::Link => self.links.len(),
            By::Rank => plan.config.ranks,
        }
    }
}

/// Bars of the chart drawn per event-loop task ([`GanttRows`]).
const BARS_PER_TASK: usize = 400;

/// Props of [`GanttRows`].
#[derive(Properties, PartialEq)]
struct RowsProps {
    plan: Rc<Plan>,
    shape: Rc<Shape>,
    step: usize,
    by: By,
}

/// Who waits for whom on a degraded machine ([`degrade::waits`]); empty
/// on a healthy one, or when the timeline is not the drawn schedule's.
fn fault_waits(plan: &Plan) -> Vec<StepWait> {
    if plan.config.faults.is_none() || plan.compressed.is_some() || !plan.drawn() {
        return Vec::new();
    }
    degrade::waits(
        plan.drawn_schedule(),
        &plan.estimate.timeline,
        &plan.config.faults,
    )
}

/// The axis, labels and step lines, and the bars step by step
/// ([`StepBars`]): a step change re-renders the lines and the bars of
/// the two steps whose highlight changed.
#[function_component(GanttRows)]
fn gantt_rows(p: &RowsProps) -> Html {
    let plan = &p.plan;
    let tl = &plan.estimate.timeline;
    let span = plan.loop_us().max(1e-9);
    let x = |us: f64| LABEL_W + us / span * PLOT_W;
    let labels = use_memo((plan.clone(), p.by), |(plan, by)| {
        let topo = &plan.topology;
        match by {
            By::Link => p
                .shape
                .links
                .iter()
                .map(|&(l, fwd)| {
                    let lk = &topo.links[l];
                    let (a, b) = if fwd { (lk.a, lk.b) } else { (lk.b, lk.a) };
                    format!("{}→{}", topo.node_label(a), topo.node_label(b))
                })
                .collect::<Vec<String>>(),
            By::Rank => (0..plan.config.ranks)
                .map(|r| {
                    if plan.config.faults.impairs(r) {
                        format!("{} rank {r} sends", t!("gantt-slow-mark"))
                    } else {
                        format!("rank {r} sends")
                    }
                })
                .collect(),
        }
    });
    let h = AXIS_H + labels.len() as f64 * ROW_H + 6.0;
    let steps = tl.steps.iter().enumerate().map(|(i, s)| {
        html! {
            <line class={classes!("gstep", (i + 1 == p.step).then_some("current"))} x1={f(x(s.start_us))} x2={f(x(s.start_us))} y1={f(AXIS_H - 4.0)} y2={f(h)} />
        }
    });
    let ticks = (0..=4).map(|k| {
        let us = span * k as f64 / 4.0;
        html! { <text class="gtick" x={f(x(us))} y="12" text-anchor={if k == 4 { "end" } else if k == 0 { "start" } else { "middle" }}>{format!("{} µs", format::us(us))}</text> }
    });
    let label_rows = labels.iter().enumerate().map(|(i, l)| {
        html! { <text class="glabel" x={f(LABEL_W - 6.0)} y={f(AXIS_H + i as f64 * ROW_H + ROW_H - 3.0)} text-anchor="end">{l.clone()}</text> }
    });
    // Many bars (64 ranks: ~1 800 rects; a 64-rank mesh step alone 4 032)
    // are drawn at most BARS_PER_TASK in an event-loop task, in pieces of
    // steps; a new plan or view starts again.
    let sliced = use_memo(
        (plan.clone(), p.shape.clone(), p.by),
        |(plan, shape, by)| {
            Sliced::of(
                (0..plan.estimate.timeline.steps.len())
                    .map(|i| step_bars_of(plan, shape, *by, i).len()),
                BARS_PER_TASK,
            )
        },
    );
    let drawn = use_drawn_pieces((Rc::as_ptr(plan) as usize, p.by), &sliced);
    // Keyed by piece, so a slice appends (see `use_drawn_in_tasks`). The
    // current step is its pieces' groups' class: a step change patches
    // those, not every bar of the two steps.
    let bars = drawn.iter().enumerate().map(|(k, piece)| {
        let (plan, shape, by, Piece { group, items }) = (plan.clone(), p.shape.clone(), p.by, piece.clone());
        let from = items.start;
        let onmouseover = Callback::from(move |e: MouseEvent| hover_title(&plan, &shape, by, group, from, &e));
        html! {
            <g key={k} class={classes!("gstep-bars", (group + 1 == p.step).then_some("current"))} {onmouseover}>
                <StepBars plan={p.plan.clone()} shape={p.shape.clone()} by={p.by} piece={piece.clone()} />
            </g>
        }
    });
    html! {
        <g class="grows">
            <g class="gsteps">{ for steps }</g>
            { for ticks }
            { for label_rows }
            <g class="gbars">{ for bars }</g>
        </g>
    }
}

/// Props of [`StepBars`].
#[derive(Properties, PartialEq)]
struct StepBarsProps {
    plan: Rc<Plan>,
    shape: Rc<Shape>,
    by: By,
    /// The step (0-based) and which of its bars ([`step_bars_of`]).
    piece: Piece,
}

/// One bar of a step: what [`StepBars`] draws and what its tooltip
/// says ([`bar_title`]), in one order.
enum Bar<'a> {
    /// A link direction busy (by link): its row.
    Busy(&'a LinkBusy, usize),
    /// A transfer (by rank) and the schedule's transfer it times.
    Transfer(&'a TransferTiming, &'a Transfer),
    /// A waiting rank's idle time before the step ends (by rank, on a
    /// degraded machine): the wait, the rank, µs.
    Wait(&'a StepWait, usize, f64),
}

/// Step `index`'s bars by `by`, in drawing order: by link, the step's
/// busy intervals; by rank, its transfers, then who waits for whom.
fn step_bars_of<'a>(plan: &'a Plan, shape: &'a Shape, by: By, index: usize) -> Vec<Bar<'a>> {
    let tl = &plan.estimate.timeline;
    match by {
        By::Link => of_step(&tl.link_busy, index, |b| b.step)
            .iter()
            .map(|b| {
                let row = shape.links.binary_search(&(b.link, b.forward)).unwrap_or(0);
                Bar::Busy(b, row)
            })
            .collect(),
        By::Rank => {
            let steps = &plan.drawn_schedule().steps;
            let transfers = of_step(&tl.transfers, index, |t| t.step)
                .iter()
                .filter_map(|t| {
                    let tr = steps.get(t.step)?.transfers.get(t.index)?;
                    Some(Bar::Transfer(t, tr))
                });
            let waits = shape
                .waits
                .iter()
                .filter(|w| w.step == index)
                .flat_map(|w| w.waits.iter().map(move |&(r, us)| Bar::Wait(w, r, us)));
            transfers.chain(waits).collect()
        }
    }
}

/// The entries of step `index` of `xs`, a list in step order (the
/// timeline's transfers and link busy intervals are: [`crate::engine::cost::Timeline`]).
fn of_step<T>(xs: &[T], index: usize, step: impl Fn(&T) -> usize) -> &[T] {
    let from = xs.partition_point(|x| step(x) < index);
    let to = from + xs[from..].partition_point(|x| step(x) == index);
    &xs[from..to]
}

/// The tooltip of `bar` (made when it is hovered, [`GanttRows`]).
fn bar_title(bar: &Bar) -> String {
    match bar {
        Bar::Busy(b, _) => format!(
            "step {}: {} flow{} · {}–{} µs",
            b.step + 1,
            b.flows,
            if b.flows == 1 { "" } else { "s" },
            format::us(b.start_us),
            format::us(b.end_us)
        ),
        Bar::Transfer(t, tr) => format!(
            "step {}: rank {} → rank {}, {} · {}–{} µs",
            t.step + 1,
            tr.src,
            tr.dst,
            crate::engine::units::format_bytes(t.bytes),
            format::us(t.start_us),
            format::us(t.done_us)
        ),
        Bar::Wait(w, r, us) => {
            t!(
                "gantt-wait-title",
                step = w.step + 1,
                r = *r,
                us = format::us(*us),
                b = w.blame
            )
        }
    }
}

/// Gives the hovered bar of a piece of step `index` (its bars from
/// `from` on, [`Piece`]) its tooltip, an SVG
/// `<title>`, made again on every hover: yew reuses a rect for another
/// bar (a new plan, the by-link/by-rank toggle) and never touches a child
/// it did not make, so a title kept from an earlier hover could name the
/// wrong bar. The bar is `from` plus the rect's place among its piece's
/// rects, and [`step_bars_of`]'s bar at that place. Made on hover, not drawn: at 64
/// ranks the titles were two of every three nodes of the chart (1 800
/// bars), and their text most of its drawing.
fn hover_title(plan: &Plan, shape: &Shape, by: By, index: usize, from: usize, e: &MouseEvent) {
    let Some((rect, k)) = hovered(e, |el| el.tag_name() == "rect") else {
        return;
    };
    let bars = step_bars_of(plan, shape, by, index);
    let Some(bar) = bars.get(from + k) else {
        return;
    };
    let text = bar_title(bar);
    if let Some(title) = rect.first_element_child() {
        if title.text_content().as_deref() != Some(text.as_str()) {
            title.set_text_content(Some(&text));
        }
        return;
    }
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(title) = doc.create_element_ns(Some("http://www.w3.org/2000/svg"), "title") {
        title.set_text_content(Some(&text));
        let _ = rect.append_child(&title);
    }
}

/// A piece of a step's bars (and, by rank, its waits), drawn into the
/// piece's group in [`GanttRows`], which also has the current step's
/// class and the listener that makes their tooltips on hover
/// ([`hover_title`]).
#[function_component(StepBars)]
fn step_bars(p: &StepBarsProps) -> Html {
    let plan = &p.plan;
    let tl = &plan.estimate.timeline;
    let span = plan.loop_us().max(1e-9);
    let x = |us: f64| LABEL_W + us / span * PLOT_W;
    let y = |row: usize| f(AXIS_H + row as f64 * ROW_H + 2.0);
    let w = |from: f64, to: f64| f((x(to) - x(from)).max(1.0));
    let faults = &plan.config.faults;
    let Piece { group, items } = &p.piece;
    let bars = step_bars_of(plan, &p.shape, p.by, *group)
        .into_iter()
        .skip(items.start)
        .take(items.len())
        .map(|bar| match bar {
            Bar::Busy(b, row) => html! {
                <rect class={classes!("gbar", (b.flows > 1).then_some("shared"))}
                    x={f(x(b.start_us))} y={y(row)} width={w(b.start_us, b.end_us)} height={f(ROW_H - 4.0)} />
            },
            Bar::Transfer(t, tr) => html! {
                <rect class={classes!("gbar", "rank", faults.impairs(tr.src).then_some("slow"))} fill={colors::rank(tr.src)}
                    x={f(x(t.start_us))} y={y(tr.src)} width={w(t.start_us, t.done_us)} height={f(ROW_H - 4.0)} />
            },
            Bar::Wait(wt, r, us) => {
                let end = tl.steps.get(wt.step).map_or(0.0, |s| s.end_us);
                html! {
                    <rect class="gwait" x={f(x(end - us))} y={y(r)}
                        width={w(end - us, end)} height={f(ROW_H - 4.0)} />
                }
            }
        });
    html! { <>{ for bars }</> }
}

/// Props of [`GanttCursor`].
#[derive(Properties, PartialEq)]
struct CursorProps {
    plan: Rc<Plan>,
    step: usize,
    /// The chart's height.
    h: f64,
}

/// The current animation time as a vertical line: the one part of the
/// chart that changes every frame ([`use_progress`]).
#[function_component(GanttCursor)]
fn gantt_cursor(p: &CursorProps) -> Html {
    let t = use_progress();
    let span = p.plan.loop_us().max(1e-9);
    let x = LABEL_W + model_time(&p.plan, p.step, t) / span * PLOT_W;
    html! {
        <line class="gcursor" x1={f(x)} x2={f(x)} y1={f(AXIS_H - 6.0)} y2={f(p.h)} />
    }
}

/// The Gantt card.
#[function_component(Gantt)]
pub fn gantt(p: &GanttProps) -> Html {
    let _lang = super::lang::use_lang();
    let plan = &p.plan;
    let tl = &plan.estimate.timeline;
    let by = use_state(|| None::<By>);
    let shape = use_memo(plan.clone(), |plan| Shape::of(plan));
    // A degraded machine shows ranks first: that is where the waits are.
    let by_now = by.unwrap_or(if !plan.config.faults.is_none() {
        By::Rank
    } else if shape.links.len() <= 40 {
        By::Link
    } else {
        By::Rank
    });
    let span = plan.loop_us().max(1e-9);
    let rows = shape.rows(plan, by_now);
    let h = AXIS_H + rows as f64 * ROW_H + 6.0;
    let w = LABEL_W + PLOT_W + 10.0;
    let view_box = format!("0 0 {} {}", f(w), f(h));
    let max_height = format!("max-height:{}px", (h * 1.2).min(520.0));
    let on_click = {
        let (cb, starts) = (
            p.on_goto.clone(),
            tl.steps.iter().map(|s| s.start_us).collect::<Vec<_>>(),
        );
        Callback::from(move |e: MouseEvent| {
            let Some(el) = e
                .current_target()
                .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            else {
                return;
            };
            let r = el.get_bounding_client_rect();
            if r.width() <= 0.0 {
                return;
            }
            let vx = (e.client_x() as f64 - r.left()) / r.width() * w;
            let us = (vx - LABEL_W) / PLOT_W * span;
            if us < 0.0 {
                return;
            }
            let k = starts.iter().take_while(|s| **s <= us).count();
            cb.emit(k.max(1));
        })
    };
    let toggle = |b: By, text: String| {
        let by = by.clone();
        html! {
            <button class={classes!("seg-btn", (by_now == b).then_some("on"))} aria-pressed={(by_now == b).to_string()}
                onclick={Callback::from(move |_: MouseEvent| by.set(Some(b)))}>{text}</button>
        }
    };
    let loops = plan.loops();
    let trace_error = use_state(|| None::<String>);
    let on_trace = {
        let (plan, trace_error) = (plan.clone(), trace_error.clone());
        Callback::from(move |_: MouseEvent| {
            let s = plan.drawn_schedule();
            let trace = chrome_trace(s, &plan.estimate.timeline, &plan.topology);
            let name = format!(
                "ccl_{}_{}_{}ranks_{}.trace.json",
                s.primitive.name(),
                s.algorithm.replace([':', '/', '\\', ' '], "_"),
                s.ranks,
                plan.config.bytes
            );
            trace_error.set(
                super::download::download(&name, "application/json", &trace.to_string()).err(),
            );
        })
    };
    let waits: Vec<&StepWait> = shape.waits.iter().filter(|w| !w.waits.is_empty()).collect();
    html! {
        <section class="card gantt-card" id="gantt" aria-label={t!("gantt-label")}>
            <div class="card-head">
                <h2>{t!("gantt")}</h2>
                <span class="muted">
                    { if loops > 1 { t!("gantt-loops", loops = loops, us = format::us(span), all = format::us(plan.estimate.time_us)) } else { t!("gantt-us", us = format::us(span)) } }
                </span>
                <span class="gantt-by">{toggle(By::Link, t!("gantt-by-link-btn"))}{toggle(By::Rank, t!("gantt-by-rank-btn"))}</span>
                <button id="trace-download" class="seg-btn" title={t!("gantt-trace-title")} onclick={on_trace}>{t!("gantt-trace")}</button>
            </div>
            { for trace_error.as_ref().map(|e| html! { <p class="error" role="alert">{e.clone()}</p> }) }
            <div class="gantt-scroll">
                // The cursor moves every frame: a layer of its own (an SVG
                // with the same box and viewBox over the chart), so a frame
                // repaints one line, not the bars.
                <div class="gantt-layers">
                <svg class="gantt" viewBox={view_box.clone()} style={max_height.clone()}
                    onclick={on_click} data-rows={rows.to_string()} role="img"
                    aria-label={t!("gantt-rows", rows = rows)}>
                    <GanttRows plan={plan.clone()} shape={shape.clone()} step={p.step} by={by_now} />
                    </svg>
                <svg class="gantt-cursor" viewBox={view_box} style={max_height} aria-hidden="true" focusable="false">
                    <GanttCursor plan={plan.clone()} step={p.step} h={h} />
                </svg>
                </div>
            </div>
            <p class="hint">
                { match by_now {
                    By::Link => t!("gantt-by-link"),
                    By::Rank => t!("gantt-by-rank"),
                } }
                {" "}{t!("gantt-follow")}
            </p>
            if !waits.is_empty() {
                <div id="fault-waits">
                    <h3>{t!("waits-heading")}</h3>
                    <ol class="waits">
                        { for waits.iter().take(MAX_WAIT_LINES).map(|w| html! {
                            <li data-step={(w.step + 1).to_string()} data-blame={w.blame.to_string()}>{t!(
                                "waits-line",
                                step = w.step + 1,
                                n = w.waits.len(),
                                us = format::us(w.longest_us()),
                                b = w.blame,
                                src = w.src,
                                dst = w.dst
                            )}</li>
                        }) }
                    </ol>
                    if waits.len() > MAX_WAIT_LINES {
                        <p class="hint">{t!("waits-more", n = waits.len() - MAX_WAIT_LINES)}</p>
                    }
                </div>
            }
        </section>
    }
}
