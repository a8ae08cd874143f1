//! The "Tuning you can paste" card: the model's choice over a size sweep
//! (1 KiB to 1 GiB, ×4) for the page's collective and machine, written as
//! the machine's library's own settings ([`crate::engine::tune`]), with a
//! copy button. Self-contained; the app passes only the current plan.

use crate::engine::library::Library;
use crate::engine::plan::Plan;
use crate::engine::tune::{self, Format, LABEL};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`TuneCard`].
#[derive(Properties, PartialEq)]
pub struct TuneCardProps {
    /// The page's current plan.
    pub plan: Option<Rc<Plan>>,
    /// The plan is a headline being completed: show only a text already
    /// made for this key, never make one now (the full plan's render will).
    #[prop_or_default]
    pub defer: bool,
}

fn sizes() -> Vec<u64> {
    (0..11).map(|i| 1024u64 << (2 * i)).collect()
}

fn text_for(plan: &Plan, format: Format) -> Result<String, String> {
    let c = &plan.config;
    let choices = tune::sweep(c, &sizes())?;
    let nodes = plan.topology.nodes_of(c.ranks).len();
    tune::render(format, c, plan.topology.library, nodes, &choices)
}

/// What the tuning text depends on: the configuration without its size
/// and algorithm, the machine's library, the NCCL format (CSV or env).
type TuneKey = (Option<(crate::engine::config::Config, Library)>, bool);

/// The tuning card.
#[function_component(TuneCard)]
pub fn tune_card(p: &TuneCardProps) -> Html {
    let nccl_csv = use_state(|| true);
    let copied = use_state(|| None::<String>);
    // Eleven headline plans: only when what the sweep reads changes (the
    // configuration but its size and algorithm, which it sets itself; the
    // machine's library), not on every re-render (playback redraws the
    // page) nor on a size change.
    let key = p.plan.as_ref().map(|plan| {
        let mut c = plan.config.clone();
        c.bytes = 0;
        c.algo = crate::engine::config::AlgoChoice::Auto;
        (c, plan.topology.library)
    });
    let plan = p.plan.clone();
    let csv = *nccl_csv;
    let key = (key, csv);
    let cache = use_mut_ref(|| None::<(TuneKey, Option<Result<String, String>>)>);
    let hit = cache
        .borrow()
        .as_ref()
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v.clone());
    if hit.is_none() && p.defer {
        return html! {};
    }
    let make = move || {
        let plan = plan.as_ref()?;
        let lib = plan.topology.library;
        let format = match lib {
            Library::Hccl => Some(Format::Hccl),
            Library::Nccl if csv => Some(Format::NcclTunerCsv),
            Library::Nccl => Some(Format::NcclEnv),
            _ => None,
        };
        Some(match format {
            Some(f) => text_for(plan, f),
            None => Err(format!(
                "{} has no tuning variables to write ({} machine)",
                lib.title(),
                plan.config.topo
            )),
        })
    };
    let text = match hit {
        Some(v) => v,
        None => {
            let v = make();
            *cache.borrow_mut() = Some((key, v.clone()));
            v
        }
    };
    let Some(plan) = p.plan.clone() else {
        return html! {};
    };
    let lib = plan.topology.library;
    let Some(text) = text else {
        return html! {};
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
