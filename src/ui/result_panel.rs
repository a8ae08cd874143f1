//! The run's outcome. The panel is `#run-result`, whose `data-*`
//! attributes are the stable hook for tooling (e2e tests, scripts):
//! `data-state` (idle | running | verified | mismatch | error | model-only),
//! `data-op`, `data-algorithm` (concrete, never "auto"), `data-topo`,
//! `data-ranks`, `data-bytes`, `data-dtype`, `data-estimate-us`,
//! `data-algbw-gbps`, `data-busbw-gbps`, `data-max-abs-error`, `data-wall-ms`
//! (numbers in plain decimal; empty when not known).

use super::format;
use super::plan::Plan;
use super::run::{RunState, RunView};
use crate::engine::config::Config;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`ResultPanel`].
#[derive(Properties, PartialEq)]
pub struct ResultProps {
    /// The configuration run.
    pub config: Config,
    /// Its plan, if it could be made.
    pub plan: Option<Rc<Plan>>,
    /// The run.
    pub run: Rc<RunView>,
    /// Run the same configuration again.
    pub on_rerun: Callback<()>,
}

/// The result panel (`#run-result`).
#[function_component(ResultPanel)]
pub fn result_panel(p: &ResultProps) -> Html {
    let c = &p.config;
    let run = &p.run;
    let num = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let est = p.plan.as_ref().map(|pl| &pl.estimate);
    let max_err = run.max_abs_error();
    let (title, blurb) = match run.state {
        RunState::Idle => ("Idle", "Nothing has run yet.".to_string()),
        RunState::Running => (
            "Running…",
            format!("{} rank workers are executing the schedule on real {} data; each output is checked as it arrives ({} of {} so far).", c.ranks, c.dtype, run.reports.len(), c.ranks),
        ),
        RunState::Verified => (
            "Verified",
            format!("All {} ranks' outputs are bit-identical to the reference executor (same reduction order) and within the {} tolerance of the exact result.", c.ranks, c.dtype),
        ),
        RunState::Mismatch => ("Mismatch", "Some rank outputs differ from the reference:".to_string()),
        RunState::Error => ("Error", "The run did not complete:".to_string()),
        RunState::ModelOnly => (
            "Model only",
            format!(
                "Not executed: {}. {}",
                c.model_only_reason().unwrap_or_else(|| "too large for the browser".into()),
                if p.plan.as_ref().is_some_and(|pl| pl.drawn()) {
                    "The estimate and the animation still apply."
                } else {
                    "The estimate and the algorithm ranking still apply; nothing is animated at this rank count."
                }
            ),
        ),
    };
    let on_rerun = {
        let cb = p.on_rerun.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let checked: usize = run.reports.iter().map(|r| r.checked_elements).sum();
    html! {
        <section id="run-result" class={classes!("card", "result", run.state.name())}
            data-state={run.state.name()}
            data-op={c.op.name()}
            data-algorithm={p.plan.as_ref().map(|pl| pl.algorithm.name()).unwrap_or("")}
            data-topo={c.topo.clone()}
            data-ranks={c.ranks.to_string()}
            data-bytes={c.bytes.to_string()}
            data-dtype={c.dtype.name()}
            data-estimate-us={num(est.map(|e| e.time_us))}
            data-algbw-gbps={num(est.map(|e| e.algbw_gbps))}
            data-busbw-gbps={num(est.map(|e| e.busbw_gbps))}
            data-max-abs-error={num(max_err)}
            data-wall-ms={num(run.wall_ms)}
            aria-live="polite">
            <div class="card-head">
                <h2>{"Result"}</h2>
                <span class={classes!("state-pill", run.state.name())}>{title}</span>
            </div>
            <p class="result-blurb">{blurb}</p>
            if let Some(err) = &run.error {
                <p class="result-error" id="run-error">{err.clone()}</p>
            }
            <dl class="facts">
                <dt>{"max |error|"}</dt>
                <dd>{ max_err.map(format::error).unwrap_or_else(|| "—".into()) }
                    <span class="muted">{ if checked > 0 { format!(" vs exact, over {checked} elements") } else { String::new() } }</span></dd>
                <dt>{"worker wall time"}</dt>
                <dd>{ run.wall_ms.map(|w| format!("{} ms", format::ms(w))).unwrap_or_else(|| "—".into()) }
                    <span class="muted">{" (this browser, not the modelled hardware)"}</span></dd>
                <dt>{"ranks checked"}</dt>
                <dd>{format!("{} of {}", run.reports.len(), c.ranks)}</dd>
            </dl>
            <div class="result-actions">
                <button id="rerun" onclick={on_rerun}>{"Run again"}</button>
                <span class="muted">{"Real data on one web worker per rank; checked bit for bit."}</span>
            </div>
        </section>
    }
}
