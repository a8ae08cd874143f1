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
    let item = |k: usize, head: Html, body: Html| {
        let cb = p.on_goto.clone();
        let current = k == p.step;
        html! {
            <li class={classes!("log-step", current.then_some("current"))} data-step={k.to_string()}
                aria-current={current.then_some("step")}>
                <button class="log-button" onclick={Callback::from(move |_: MouseEvent| cb.emit(k))}>
                    {head}{body}
                </button>
            </li>
        }
    };
    let initial = item(
        0,
        html! { <span class="log-head"><span class="log-k">{"0"}</span>{t!("initial-state")}<span class="log-t">{"t = 0"}</span></span> },
        html! {},
    );
    let steps = plan.drawn_schedule().steps.iter().enumerate().map(|(i, s)| {
        let timing = &plan.estimate.timeline.steps[i];
        let sharing = if timing.max_link_sharing > 1 { format!(" · {}", t!("log-share", n = timing.max_link_sharing)) } else { String::new() };
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
        item(i + 1, head, html! { <span class="xfers">{ for chips }</span> })
    });
    html! {
        <section class="card step-log" aria-label={t!("step-log-label")}>
            <div class="card-head">
                <h2>{t!("step-log")}</h2>
                <span class="muted">{t!("step-log-count", steps = plan.steps(), transfers = plan.drawn_schedule().transfer_count())}</span>
            </div>
            <p class="hint">{t!("step-log-hint")}</p>
            <ol id="step-log" class="log" ref={list}>
                {initial}
                { for steps }
            </ol>
        </section>
    }
}
