//! Every transfer of every step; the current step highlighted; a click
//! jumps there.

use super::deferred::{hovered, use_drawn_pieces, Sliced};
use super::describe;
use super::format;
use super::lang::use_lang;
use crate::engine::plan::Plan;
use crate::engine::schedule::TransferKind;
use crate::t;
use std::rc::Rc;
use yew::prelude::*;

/// About how many transfer chips the log draws in one event-loop task.
const CHIPS_PER_TASK: usize = 1500;

/// Props of [`StepLog`].
#[derive(Properties, PartialEq)]
pub struct StepLogProps {
    /// The plan.
    pub plan: Rc<Plan>,
    /// Current step (1-based; 0 = initial state).
    pub step: usize,
    /// Jump to a step.
    pub on_goto: Callback<usize>,
}

/// Props of [`Entry`].
#[derive(Properties, PartialEq)]
struct EntryProps {
    plan: Rc<Plan>,
    /// The step (0 = the initial state).
    k: usize,
    /// It is the current step.
    current: bool,
    /// How many of its transfers' chips are drawn (the first ones; drawn
    /// over tasks at [`CHIPS_PER_TASK`] a piece).
    drawn: usize,
    on_goto: Callback<usize>,
}

/// Props of [`Chips`].
#[derive(Properties, PartialEq)]
struct ChipsProps {
    plan: Rc<Plan>,
    /// The step (0-based).
    i: usize,
    /// Which of its transfers.
    transfers: std::ops::Range<usize>,
}

/// The chips of transfers `transfers` of step `i`, drawn into the step's
/// chip list: a piece drawn in one task, never re-rendered after.
#[function_component(Chips)]
fn chips(p: &ChipsProps) -> Html {
    let Some(s) = p.plan.drawn_schedule().steps.get(p.i) else {
        return html! {};
    };
    let chips = s.transfers[p.transfers.clone()].iter().map(|t| {
        let (cls, sym) = match t.kind {
            TransferKind::Copy => ("xfer copy", "→"),
            TransferKind::Reduce => ("xfer reduce", "⇒"),
        };
        html! {
            <span class={cls}>{format!("{}{sym}{} {}", t.src, t.dst, format::chunks(t.first, t.count))}</span>
        }
    });
    html! { <>{ for chips }</> }
}

/// One step of the log: re-rendered only when it becomes or stops being
/// the current step, when more of its chips are drawn (its [`Chips`]
/// pieces drawn before are not), or when the plan or the language
/// changes.
#[function_component(Entry)]
fn entry(p: &EntryProps) -> Html {
    let _lang = use_lang();
    let plan = &p.plan;
    let k = p.k;
    let (head, body) = match k
        .checked_sub(1)
        .and_then(|i| plan.drawn_schedule().steps.get(i).map(|s| (i, s)))
    {
        None => (
            html! { <span class="log-head"><span class="log-k">{"0"}</span>{t!("initial-state")}<span class="log-t">{"t = 0"}</span></span> },
            html! {},
        ),
        Some((i, s)) => {
            let timing = &plan.estimate.timeline.steps[i];
            let sharing = if timing.max_link_sharing > 1 {
                format!(" · {}", t!("log-share", n = timing.max_link_sharing))
            } else {
                String::new()
            };
            let head = html! {
                <span class="log-head">
                    <span class="log-k">{i + 1}</span>
                    <span class="log-phase">{describe::phase_words(&s.phase)}</span>
                    <span class="log-t">{format!("{}–{} µs{sharing}", format::us(timing.start_us), format::us(timing.end_us))}</span>
                </span>
            };
            // A chip's tooltip (its transfer in words) is made when it is
            // hovered: 64 ranks have ~8 000 chips, and a translated title
            // on each was most of the log's first drawing. The chips come
            // in pieces, keyed, so a piece drawn later appends.
            let drawn = p.drawn.min(s.transfers.len());
            let chips = (0..drawn).step_by(CHIPS_PER_TASK).map(|from| {
                let to = (from + CHIPS_PER_TASK).min(drawn);
                html! { <Chips key={from} plan={plan.clone()} i={i} transfers={from..to} /> }
            });
            let onmouseover = {
                let plan = plan.clone();
                Callback::from(move |e: MouseEvent| chip_title(&plan, i, &e))
            };
            (
                head,
                html! { <span class="xfers" {onmouseover}>{ for chips }</span> },
            )
        }
    };
    let cb = p.on_goto.clone();
    html! {
        <li class={classes!("log-step", p.current.then_some("current"))} data-step={k.to_string()}
            aria-current={p.current.then_some("step")}>
            <button class="log-button" onclick={Callback::from(move |_: MouseEvent| cb.emit(k))}>
                {head}{body}
            </button>
        </li>
    }
}

/// Sets the title of the hovered chip of step `i` (0-based) to its
/// transfer in words. Made at every hover, never kept: yew reuses a chip's
/// element for another plan's transfer (or another language), and a kept
/// title set outside the vdom would describe the old one.
fn chip_title(plan: &Plan, i: usize, e: &MouseEvent) {
    // The chip's place among its siblings is its transfer's index.
    let Some((chip, k)) = hovered(e, |el| el.class_list().contains("xfer")) else {
        return;
    };
    let Some(t) = plan
        .drawn_schedule()
        .steps
        .get(i)
        .and_then(|s| s.transfers.get(k))
    else {
        return;
    };
    let word = match t.kind {
        TransferKind::Copy => t!("kind-copy"),
        TransferKind::Reduce => t!("kind-reduce"),
    };
    let title = t!(
        "log-xfer",
        src = describe::label(plan, t.src),
        chunks = format::chunks(t.first, t.count),
        dst = describe::label(plan, t.dst),
        kind = word
    );
    let _ = chip.set_attribute("title", &title);
}

/// Scrolls the list `list` so that step `step`'s entry is in view (only
/// the list, never the page).
fn scroll_to_step(list: &NodeRef, step: usize) {
    let Some(el) = list.cast::<web_sys::HtmlElement>() else {
        return;
    };
    let Ok(Some(item)) = el.query_selector(&format!("[data-step=\"{step}\"]")) else {
        return;
    };
    let Ok(item) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(item) else {
        return;
    };
    let (top, h) = (item.offset_top(), item.offset_height());
    let (st, vh) = (el.scroll_top(), el.client_height());
    if top < st {
        el.set_scroll_top(top - 4);
    } else if top + h > st + vh {
        el.set_scroll_top(top + h - vh + 4);
    }
}

/// The step log.
#[function_component(StepLog)]
pub fn step_log(p: &StepLogProps) -> Html {
    let _lang = use_lang();
    let plan = &p.plan;
    let list = use_node_ref();
    {
        // Keep the current step in view inside the scrolling list. Reading
        // an item's offset forces a layout; read in the next animation
        // frame (whose layout it is anyway), not in the render's task: at
        // 64 ranks a layout forced here was ~170 ms of the step log's
        // first task.
        let list = list.clone();
        use_effect_with(p.step, move |step| {
            let step = *step;
            let scroll =
                wasm_bindgen::closure::Closure::once_into_js(move || scroll_to_step(&list, step));
            if let Some(w) = web_sys::window() {
                let _ = w.request_animation_frame(wasm_bindgen::JsCast::unchecked_ref(&scroll));
            }
        });
    }
    // Many transfers (64 ranks: ~8 000 chips; a 64-rank mesh step alone
    // 4 032) are drawn at most CHIPS_PER_TASK in an event-loop task, in
    // pieces of steps; a new plan starts again. Item 0 is the initial
    // state.
    let sliced = use_memo(plan.clone(), |plan| {
        let steps = &plan.drawn_schedule().steps;
        Sliced::of(
            std::iter::once(0).chain(steps.iter().map(|s| s.transfers.len())),
            CHIPS_PER_TASK,
        )
    });
    let pieces = use_drawn_pieces(Rc::as_ptr(plan) as usize, &sliced);
    // Keyed by step, so a slice appends (see `use_drawn_in_tasks`); a
    // step partly drawn is drawn again with more of its chips.
    let entries = pieces.iter().enumerate().filter(|(j, piece)| {
        pieces.get(j + 1).is_none_or(|next| next.group != piece.group)
    }).map(|(_, piece)| {
        let k = piece.group;
        html! { <Entry key={k} plan={plan.clone()} k={k} current={k == p.step} drawn={piece.items.end} on_goto={p.on_goto.clone()} /> }
    });
    html! {
        <section class="card step-log" aria-label={t!("step-log-label")}>
            <div class="card-head">
                <h2>{t!("step-log")}</h2>
                <span class="muted">{t!("step-log-count", steps = plan.steps(), transfers = plan.drawn_schedule().transfer_count())}</span>
            </div>
            <p class="hint">{t!("step-log-hint")}</p>
            <ol id="step-log" class="log" ref={list}>
                { for entries }
            </ol>
        </section>
    }
}
