//! The "Tuning you can paste" card: the model's choice over a size sweep
//! (1 KiB to 1 GiB, ×4) for the page's collective and machine, written as
//! the machine's library's own settings ([`crate::engine::tune`]), with a
//! copy button. Self-contained; the app passes only the current plan.

use super::planned::use_planned;
use crate::engine::library::Library;
use crate::engine::plan::Plan;
use crate::engine::tune::{Format, LABEL};
use crate::runtime::planner::{Answer, Job};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`TuneCard`].
#[derive(Properties, PartialEq)]
pub struct TuneCardProps {
    /// The page's current plan.
    pub plan: Option<Rc<Plan>>,
}

fn sizes() -> Vec<u64> {
    (0..11).map(|i| 1024u64 << (2 * i)).collect()
}

/// The syntax the card writes for `library` (`csv`: NCCL's tuner plugin
/// CSV rather than `NCCL_ALGO` / `NCCL_PROTO`), or why there is none.
fn format_of(plan: &Plan, csv: bool) -> Result<Format, String> {
    match plan.topology.library {
        Library::Hccl => Ok(Format::Hccl),
        Library::Nccl if csv => Ok(Format::NcclTunerCsv),
        Library::Nccl => Ok(Format::NcclEnv),
        lib => Err(format!(
            "{} has no tuning variables to write ({} machine)",
            lib.title(),
            plan.config.topo
        )),
    }
}

/// The tuning card.
#[function_component(TuneCard)]
pub fn tune_card(p: &TuneCardProps) -> Html {
    let nccl_csv = use_state(|| true);
    let copied = use_state(|| None::<String>);
    // Eleven headline plans, in the planner worker: only when what the
    // sweep reads changes (the configuration but its size and algorithm,
    // which it sets itself; the machine's library; the format), not on a
    // size change.
    let csv = *nccl_csv;
    let key = p.plan.as_ref().map(|plan| {
        let mut c = plan.config.clone();
        c.bytes = 0;
        c.algo = crate::engine::config::AlgoChoice::Auto;
        (c, plan.topology.library, csv)
    });
    let format = p.plan.as_ref().map(|plan| format_of(plan, csv));
    let ask = match (&p.plan, &format) {
        (Some(plan), Some(Ok(f))) => Some((
            plan.config.clone(),
            Job::Tune {
                format: *f,
                sizes: sizes(),
            },
        )),
        _ => None,
    };
    let answer = use_planned(key, ask);
    let text: Option<Result<String, String>> = match (format, answer.as_deref()) {
        (None, _) => None,
        (Some(Err(e)), _) => Some(Err(e)),
        (Some(Ok(_)), Some(Ok(Answer::Tune(t)))) => Some(Ok(t.clone())),
        (Some(Ok(_)), Some(Err(e))) => Some(Err(e.clone())),
        (Some(Ok(_)), _) => None,
    };
    let Some(plan) = p.plan.clone() else {
        return html! {};
    };
    let lib = plan.topology.library;
    let Some(text) = text else {
        return html! {
            <section class="card tune" id="tune" aria-label="Tuning you can paste">
                <div class="card-head">
                    <h2>{"Tuning you can paste"}</h2>
                    <span class="muted">{LABEL}</span>
                </div>
                <p class="hint" id="tune-pending" role="status">{"Sweeping 11 sizes in the planner worker…"}</p>
            </section>
        };
    };
    let on_toggle = {
        let v = nccl_csv.clone();
        Callback::from(move |_: MouseEvent| v.set(!*v))
    };
    let on_copy = {
        let (copied, t) = (copied.clone(), text.clone().unwrap_or_default());
        Callback::from(move |_: MouseEvent| {
            let (copied, t) = (copied.clone(), t.clone());
            wasm_bindgen_futures::spawn_local(async move {
                copied.set(Some(match super::url::copy_to_clipboard(t).await {
                    Ok(()) => "Copied.".into(),
                    Err(e) => e,
                }));
            });
        })
    };
    html! {
        <section class="card tune" id="tune" aria-label="Tuning you can paste">
            <div class="card-head">
                <h2>{"Tuning you can paste"}</h2>
                <span class="muted">{LABEL}</span>
            </div>
            { match &text {
                Ok(t) => html! { <pre id="tune-text" class="tune-text">{t.clone()}</pre> },
                Err(e) => html! { <p class="hint" id="tune-error">{e.clone()}</p> },
            } }
            <div class="fit-actions">
                <button id="tune-copy" class="secondary-button" onclick={on_copy} disabled={text.is_err()}>{"Copy"}</button>
                if lib == Library::Nccl {
                    <button id="tune-format" class="secondary-button" onclick={on_toggle}>
                        { if *nccl_csv { "Show NCCL_ALGO / NCCL_PROTO" } else { "Show tuner plugin CSV" } }
                    </button>
                }
                { copied.as_ref().map(|m| html! { <span class="hint" id="tune-copied">{m.clone()}</span> }).unwrap_or_default() }
            </div>
        </section>
    }
}
