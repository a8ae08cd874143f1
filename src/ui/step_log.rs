//! Every transfer of every step; the current step highlighted; a click
//! jumps there.

use super::describe;
use super::format;
use super::lang::use_lang;
use crate::engine::plan::Plan;
use crate::engine::schedule::TransferKind;
use crate::t;
use std::rc::Rc;
use yew::prelude::*;

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
    on_goto: Callback<usize>,
}

/// One step of the log: re-rendered only when it becomes or stops being
/// the current step (or the plan or the language changes).
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
            let chips = s.transfers.iter().map(|t| {
                let (cls, sym, word) = match t.kind {
                    TransferKind::Copy => ("xfer copy", "→", t!("kind-copy")),
                    TransferKind::Reduce => ("xfer reduce", "⇒", t!("kind-reduce")),
                };
                html! {
                    <span class={cls} title={t!("log-xfer", src = describe::label(plan, t.src), chunks = format::chunks(t.first, t.count), dst = describe::label(plan, t.dst), kind = word)}>
                        {format!("{}{sym}{} {}", t.src, t.dst, format::chunks(t.first, t.count))}
                    </span>
                }
            });
            (head, html! { <span class="xfers">{ for chips }</span> })
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

/// The step log.
#[function_component(StepLog)]
pub fn step_log(p: &StepLogProps) -> Html {
    let _lang = use_lang();
    let plan = &p.plan;
    let list = use_node_ref();
    {
        // Keep the current step in view inside the scrolling list.
        let list = list.clone();
        use_effect_with(p.step, move |step| {
            if let Some(el) = list.cast::<web_sys::HtmlElement>() {
                if let Ok(Some(item)) = el.query_selector(&format!("[data-step=\"{step}\"]")) {
                    if let Ok(item) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(item) {
                        let (top, h) = (item.offset_top(), item.offset_height());
                        let (st, vh) = (el.scroll_top(), el.client_height());
                        if top < st {
                            el.set_scroll_top(top - 4);
                        } else if top + h > st + vh {
                            el.set_scroll_top(top + h - vh + 4);
                        }
                    }
                }
            }
        });
    }
    let entries = (0..=plan.steps()).map(|k| {
        html! { <Entry plan={plan.clone()} k={k} current={k == p.step} on_goto={p.on_goto.clone()} /> }
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
