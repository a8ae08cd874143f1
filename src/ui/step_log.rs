//! Every transfer of every step; the current step highlighted; a click
//! jumps there.

use super::format;
use crate::engine::plan::Plan;
use crate::engine::schedule::TransferKind;
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
        html! { <span class="log-head"><span class="log-k">{"0"}</span>{"Initial state"}<span class="log-t">{"t = 0"}</span></span> },
        html! {},
    );
    let steps = plan.drawn_schedule().steps.iter().enumerate().map(|(i, s)| {
        let timing = &plan.estimate.timeline.steps[i];
        let sharing = if timing.max_link_sharing > 1 { format!(" · {} flows share a link", timing.max_link_sharing) } else { String::new() };
        let head = html! {
            <span class="log-head">
                <span class="log-k">{i + 1}</span>
                <span class="log-phase">{s.phase.clone()}</span>
                <span class="log-t">{format!("{}–{} µs{sharing}", format::us(timing.start_us), format::us(timing.end_us))}</span>
            </span>
        };
        let chips = s.transfers.iter().map(|t| {
            let (cls, sym, word) = match t.kind {
                TransferKind::Copy => ("xfer copy", "→", "copy"),
                TransferKind::Reduce => ("xfer reduce", "⇒", "reduce"),
            };
            html! {
                <span class={cls} title={format!("NPU{} sends {} to NPU{} ({word})", t.src, format::chunks(t.first, t.count), t.dst)}>
                    {format!("{}{sym}{} {}", t.src, t.dst, format::chunks(t.first, t.count))}
                </span>
            }
        });
        item(i + 1, head, html! { <span class="xfers">{ for chips }</span> })
    });
    html! {
        <section class="card step-log" aria-label="Step log">
            <div class="card-head">
                <h2>{"Step log"}</h2>
                <span class="muted">{format!("{} steps · {} transfers", plan.steps(), plan.drawn_schedule().transfer_count())}</span>
            </div>
            <p class="hint">{"a→b c3: rank a sends chunk 3 to rank b; → copy, ⇒ reduce. Times are the model's. Click a step to see it; keys: Space play/pause, ←/→ step, Home/End."}</p>
            <ol id="step-log" class="log" ref={list}>
                {initial}
                { for steps }
            </ol>
        </section>
    }
}
