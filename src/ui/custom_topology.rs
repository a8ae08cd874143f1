//! The "Custom topology" card: paste a topology as JSON (schema in
//! [`crate::engine::custom_topology`]) or load a `.json` file, see the first
//! error (field, value, what is allowed) under the text, which the page never
//! rewrites; "Use this topology" selects it like a preset (drawn, estimated,
//! run, carried by the share link as `topo=custom&topology=…`).

use crate::engine::custom_topology::{CustomTopology, SpecError, MAX_DEVICES};
use crate::t;
use yew::prelude::*;

/// Props of [`CustomTopologyPanel`].
#[derive(Properties, PartialEq)]
pub struct CustomTopologyProps {
    /// The text in the box, as typed, pasted or loaded.
    pub text: AttrValue,
    /// Why the last "use" was refused.
    pub error: Option<SpecError>,
    /// The custom topology in use (None: a preset is in use).
    pub in_use: Option<CustomTopology>,
    /// New text (typed or pasted).
    pub on_text: Callback<String>,
    /// A file was loaded: its text (applied at once).
    pub on_file: Callback<String>,
    /// Parse and use the text.
    pub on_use: Callback<()>,
}

/// The "Custom topology" card.
#[function_component(CustomTopologyPanel)]
pub fn custom_topology_panel(p: &CustomTopologyProps) -> Html {
    let on_input = {
        let cb = p.on_text.clone();
        Callback::from(move |e: InputEvent| {
            cb.emit(
                e.target_unchecked_into::<web_sys::HtmlTextAreaElement>()
                    .value(),
            )
        })
    };
    let on_file = {
        let cb = p.on_file.clone();
        Callback::from(move |e: Event| {
            let Some(file) = super::text_box::chosen_file(&e) else {
                return;
            };
            let cb = cb.clone();
            let promise = file.text();
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(v) = wasm_bindgen_futures::JsFuture::from(promise).await {
                    cb.emit(v.as_string().unwrap_or_default());
                }
            });
        })
    };
    let on_use = {
        let cb = p.on_use.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let on_example = {
        let cb = p.on_text.clone();
        Callback::from(move |_: MouseEvent| cb.emit(CustomTopology::EXAMPLE.to_string()))
    };
    let _lang = super::lang::use_lang();
    let status = match (&p.error, &p.in_use) {
        (Some(e), _) => html! {
            <p class="inline-error topo-error" id="topology-error" role="alert" data-field={e.field.clone()}>
                {t!("ct-not-used")}{" "}<code>{e.field.clone()}</code>{" "}{t!("ct-is")}{" "}<code>{e.value.clone()}</code>
                <span lang="en">{format!("; allowed: {}.", e.allowed)}</span>
            </p>
        },
        (None, Some(t)) => html! {
            <p class="hint topo-status" id="topology-status" role="status">
                {t!("ct-in-use")}{" "}<strong>{t.name.clone().unwrap_or_else(|| "custom".into())}</strong>
                <span lang="en">{format!(" — {}.", t.summary())}</span>{" "}{t!("ct-share")}
            </p>
        },
        (None, None) => html! {
            <p class="hint topo-status" id="topology-status">
                {t!("ct-schema", max = MAX_DEVICES)}
            </p>
        },
    };
    html! {
        <section class="card custom-topology" id="custom-topology" aria-label={t!("ct-label")}>
            <div class="card-head">
                <h2>{t!("ct-title")}</h2>
                <span class="muted">{"JSON · GB/s · µs"}</span>
            </div>
            <label class="sr-only" for="topology-input">{t!("ct-input")}</label>
            <textarea id="topology-input" class={classes!("log-input", "topo-input", p.error.is_some().then_some("invalid"))}
                rows="9" spellcheck="false" value={p.text.clone()} oninput={on_input}
                placeholder={"{\"devices\": [{\"id\": \"g0\"}, {\"id\": \"g1\"}],\n \"links\": [{\"a\": \"g0\", \"b\": \"g1\",\n            \"bandwidth_gbps\": 50, \"latency_us\": 2}]}"}
                aria-describedby="topology-status topology-error" />
            {status}
            <div class="fit-actions topo-actions">
                <button id="use-topology" class="primary" onclick={on_use}
                    title={t!("ct-use-title")}>{t!("ct-use")}</button>
                <input id="topology-file" class="sr-only" type="file" accept=".json,application/json" onchange={on_file} />
                <label class="secondary-button" for="topology-file" title={t!("ct-load-title")}>{t!("ct-load")}</label>
                <button id="topology-example" class="secondary-button" onclick={on_example}
                    title={t!("ct-example-title")}>{t!("ct-example")}</button>
            </div>
            <p class="hint">{t!("ct-readme")}</p>
        </section>
    }
}
