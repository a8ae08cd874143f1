//! The run's outcome. The panel is `#run-result`, whose `data-*`
//! attributes are the stable hook for tooling (e2e tests, scripts):
//! `data-state` (idle | running | verified | mismatch | error | model-only),
//! `data-op`, `data-algorithm` (concrete, never "auto"), `data-topo`,
//! `data-ranks`, `data-bytes`, `data-dtype`, `data-estimate-us`,
//! `data-algbw-gbps`, `data-busbw-gbps`, `data-max-abs-error`, `data-wall-ms`
//! (numbers in plain decimal; empty when not known).
//!
//! The what-ifs add `data-compression` (the scheme, `none` when off),
//! `data-placement`, `data-wire-bytes` and `data-uncompressed-bytes` (all
//! transfers of the compressed run and of the same collective
//! uncompressed), `data-rel-error`, `data-flushed-fraction` (of the real
//! run against the uncompressed exact result, once checked) and, with
//! fusion, `data-buckets`, `data-unfused-us`, `data-fused-us` and
//! `data-fusion-bucket` (the bucket the workers run, if the message is one).

use super::format;
use super::run::{RunState, RunView};
use crate::engine::config::Config;
use crate::engine::plan::Plan;
use crate::t;
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
    /// The configuration's drawn plan is being made in the planner worker
    /// (`Plan::on_page`'s offload); the run starts when it comes.
    #[prop_or_default]
    pub waiting: bool,
    /// Run the same configuration again.
    pub on_rerun: Callback<()>,
}

/// The result panel (`#run-result`).
#[function_component(ResultPanel)]
pub fn result_panel(p: &ResultProps) -> Html {
    let _lang = super::lang::use_lang();
    let c = &p.config;
    let run = &p.run;
    let num = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let est = p.plan.as_ref().map(|pl| &pl.estimate);
    let max_err = run.max_abs_error();
    let (title, blurb) = match run.state {
        RunState::Idle if p.waiting => (t!("res-waiting"), t!("res-waiting-text")),
        RunState::Idle => (t!("res-idle"), t!("res-idle-text")),
        RunState::Running => (
            t!("res-running"),
            t!(
                "res-running-text",
                ranks = c.ranks,
                dtype = c.dtype.name(),
                done = run.reports.len()
            ),
        ),
        RunState::Verified if run.compressed.is_some() => (
            t!("res-verified"),
            t!("res-verified-compressed", ranks = c.ranks),
        ),
        RunState::Verified => (
            t!("res-verified"),
            t!("res-verified-text", ranks = c.ranks, dtype = c.dtype.name()),
        ),
        RunState::Mismatch => (t!("res-mismatch"), t!("res-mismatch-text")),
        RunState::Error => (t!("res-error"), t!("res-error-text")),
        RunState::ModelOnly => (
            t!("res-model-only"),
            format!(
                "{} {}",
                t!(
                    "res-model-only-text",
                    why = c
                        .model_only()
                        .map(super::format::model_only)
                        .unwrap_or_else(|| t!("res-too-large"))
                ),
                if p.plan.as_ref().is_some_and(|pl| pl.drawn()) {
                    t!("res-model-only-drawn")
                } else {
                    t!("res-model-only-undrawn")
                }
            ),
        ),
    };
    let on_rerun = {
        let cb = p.on_rerun.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let checked: usize = run.reports.iter().map(|r| r.checked_elements).sum();
    let cp = p.plan.as_ref().and_then(|pl| pl.compressed.clone());
    let fv = p.plan.as_ref().and_then(|pl| pl.fusion.clone());
    let int = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    html! {
        <section id="run-result" class={classes!("card", "result", run.state.name())}
            data-state={run.state.name()}
            data-op={c.primitive.name()}
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
            data-collective-ms={num(run.collective_ms)}
            data-kernels={run.kernels.unwrap_or("")}
            data-compression={c.compress.scheme.name()}
            data-placement={cp.as_ref().map(|x| x.setup.placement.name()).unwrap_or("")}
            data-wire-bytes={int(cp.as_ref().map(|x| x.estimate.wire_bytes))}
            data-uncompressed-bytes={int(cp.as_ref().map(|x| x.estimate.uncompressed_bytes))}
            data-rel-error={num(run.compressed.as_ref().map(|r| r.stats.rel_l2_error))}
            data-flushed-fraction={num(run.compressed.as_ref().map(|r| r.stats.flushed_fraction))}
            data-buckets={int(fv.as_ref().map(|f| f.plan.buckets.len() as u64))}
            data-unfused-us={num(fv.as_ref().map(|f| f.plan.unfused_us))}
            data-fused-us={num(fv.as_ref().map(|f| f.plan.fused_us))}
            data-fusion-bucket={int(fv.as_ref().and_then(|f| f.running).map(|i| i as u64))}
            aria-label={t!("result")}>
            <div class="card-head">
                <h2>{t!("result")}</h2>
                <span class={classes!("state-pill", run.state.name())} aria-hidden="true">{title.clone()}</span>
            </div>
            <p class="result-blurb" role="status"><span class="sr-only">{format!("{title}: ")}</span>{blurb}</p>
            if let Some(err) = &run.error {
                <p class="result-error" id="run-error">{err.clone()}</p>
            }
            <dl class="facts">
                <dt>{t!("res-max-error")}</dt>
                <dd>{ max_err.map(format::error).unwrap_or_else(|| "—".into()) }
                    <span class="muted">{ if checked > 0 { format!(" {}", t!("res-vs-exact", n = checked)) } else { String::new() } }</span></dd>
                <dt>{t!("res-wall")}</dt>
                <dd>{ run.wall_ms.map(|w| format!("{} ms", format::ms(w))).unwrap_or_else(|| "—".into()) }
                    <span class="muted">{" "}{t!("res-wall-note")}</span></dd>
                if let Some(c) = run.collective_ms {
                    <dt>{t!("res-collective")}</dt>
                    <dd>{format!("{} ms", format::ms(c))}
                        <span class="muted">{" "}{t!("res-collective-note", kernels = run.kernels.unwrap_or("scalar"))}</span></dd>
                }
                <dt>{t!("res-checked")}</dt>
                <dd>{t!("res-checked-of", done = run.reports.len(), ranks = c.ranks)}</dd>
            </dl>
            <div class="result-actions">
                <button id="rerun" onclick={on_rerun}>{t!("rerun")}</button>
                <span class="muted">{t!("res-real")}</span>
            </div>
        </section>
    }
}
