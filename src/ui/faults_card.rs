//! The "Slow ranks and broken links" card: the `slow`, `late` and `down`
//! keys ([`crate::engine::degrade`]) as three text fields with the link's
//! and `cclsim predict`'s syntax (one parser: [`Degradation::set`]), two
//! examples and "healthy". The estimate panel compares against the healthy
//! machine, the Gantt chart and the drawing show the waits and the faults.

use super::format;
use super::lang::use_lang;
use super::what_if::WhatIfProps;
use crate::engine::degrade::{Degradation, KEYS};
use crate::t;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// The faults card.
#[function_component(FaultsCard)]
pub fn faults_card(p: &WhatIfProps) -> Html {
    let _lang = use_lang();
    let c = &p.config;
    let latest = super::latest::use_latest(c);
    let error = use_state(|| None::<String>);
    let on_key = |key: &'static str| {
        let (c, cb, err) = (latest.clone(), p.on_change.clone(), error.clone());
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value();
            let mut next = c.get();
            match next.faults.set(key, &v, next.ranks) {
                Ok(()) => {
                    err.set(None);
                    cb.emit(next);
                }
                Err(allowed) => err.set(Some(format!("{key}={}: {allowed}", v.trim()))),
            }
        })
    };
    let set_all = |f: Degradation| {
        let (c, cb, err) = (latest.clone(), p.on_change.clone(), error.clone());
        Callback::from(move |_: MouseEvent| {
            let mut next = c.get();
            next.faults = f.clone();
            err.set(None);
            cb.emit(next);
        })
    };
    let example = |key: &str, v: &str| {
        let mut f = Degradation::default();
        let _ = f.set(key, v, c.ranks);
        f
    };
    let labels = [t!("faults-slow"), t!("faults-late"), t!("faults-down")];
    let placeholders = ["3:0.5", "3:200", "0-1"];
    let summary = p.plan.as_ref().and_then(|plan| {
        let h = plan.healthy.as_ref()?;
        Some(html! {
            <p class="hint what-if-line" id="faults-summary">{t!(
                "estimate-faults",
                faults = plan.config.faults.describe(),
                t = format::us(plan.estimate.time_us),
                h = format::us(h.time_us),
                x = format!("{:.2}", plan.slowdown().unwrap_or(1.0))
            )}</p>
        })
    });
    html! {
        <section class="card what-if" id="faults" aria-label={t!("faults-title")}>
            <div class="card-head">
                <h2>{t!("faults-title")}</h2>
                <span class="muted">{t!("faults-sub")}</span>
            </div>
            <p class="hint what-if-note">{t!("faults-note")}</p>
            <div class="bar what-if-bar">
                { for KEYS.iter().enumerate().map(|(i, &k)| html! {
                    <div class="field"><label for={format!("fault-{k}")}>{labels[i].clone()}</label>
                        <input id={format!("fault-{k}")} type="text" placeholder={placeholders[i]} class="narrow"
                            value={c.faults.value(k).unwrap_or_default()} onchange={on_key(k)} /></div>
                }) }
            </div>
            <div class="bar">
                <button type="button" id="fault-example-slow" onclick={set_all(example("slow", "3:0.5"))}>{t!("faults-example-slow")}</button>
                <button type="button" id="fault-example-down" onclick={set_all(example("down", "0-1"))}>{t!("faults-example-down")}</button>
                <button type="button" id="fault-clear" onclick={set_all(Degradation::default())} disabled={c.faults.is_none()}>{t!("faults-clear")}</button>
            </div>
            if let Some(e) = &*error {
                <p class="inline-error" role="alert">{e.clone()}</p>
            }
            {summary.unwrap_or_default()}
        </section>
    }
}
