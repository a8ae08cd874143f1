//! The "Determinism" card: the current AllReduce on the current inputs
//! against another algorithm or fp32 (fp16 / bf16 data), through the
//! reference executor ([`crate::engine::determinism::compare`]): how many
//! elements differ, the ulp histogram, one element's two reduction orders,
//! and a fixed-order switch with its modelled cost. Self-contained; the
//! app passes only the current plan.

use super::planned::use_planned;
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use crate::engine::determinism::{Comparison, Versus};
use crate::engine::plan::Plan;
use crate::runtime::planner::{Answer, Job};
use crate::t;
use std::rc::Rc;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Props of [`DeterminismCard`].
#[derive(Properties, PartialEq)]
pub struct DeterminismCardProps {
    /// The page's current plan.
    pub plan: Option<Rc<Plan>>,
}

/// The AllReduce algorithms other than the plan's.
fn others(plan: &Plan) -> Vec<Algorithm> {
    Algorithm::applicable(Primitive::AllReduce, plan.config.ranks)
        .into_iter()
        .filter(|a| *a != plan.algorithm)
        .collect()
}

/// The other side: the user's choice, else the first other algorithm,
/// else fp32.
fn chosen_of(plan: &Plan, versus: &Option<String>) -> String {
    versus
        .clone()
        .or_else(|| others(plan).first().map(|a| a.name().to_string()))
        .unwrap_or_else(|| "fp32".into())
}

/// The determinism card.
#[function_component(DeterminismCard)]
pub fn determinism_card(p: &DeterminismCardProps) -> Html {
    let _lang = super::lang::use_lang();
    let versus = use_state(|| None::<String>);
    let fixed = use_state(|| false);
    let element = use_state(|| 0usize);
    // Two executor runs (a second at 64 ranks), in the planner worker:
    // only when the configuration or a choice changes. Hooks before any
    // return.
    let allreduce = p
        .plan
        .as_ref()
        .filter(|plan| plan.config.primitive == Primitive::AllReduce);
    let side = allreduce.map(|plan| Versus::from_name(&chosen_of(plan, &versus)));
    let key = allreduce.map(|plan| {
        (
            plan.config.clone(),
            plan.algorithm,
            chosen_of(plan, &versus),
            *fixed,
            *element,
        )
    });
    let ask = match (allreduce, &side) {
        (Some(plan), Some(Ok(v))) => Some((
            plan.config.clone(),
            Job::Determinism {
                algorithm: plan.algorithm,
                versus: *v,
                fixed: *fixed,
                element: *element,
            },
        )),
        _ => None,
    };
    let answer = use_planned(key, ask);
    let Some(plan) = allreduce.cloned() else {
        return html! {};
    };
    // `None`: being compared.
    let result: Option<Result<Comparison, String>> = match (side, answer.as_deref()) {
        (Some(Err(e)), _) => Some(Err(e)),
        (_, Some(Ok(Answer::Determinism(r)))) => Some(Ok((**r).clone())),
        (_, Some(Err(e))) => Some(Err(e.clone())),
        _ => None,
    };
    let c = &plan.config;
    let others = others(&plan);
    let half = matches!(
        c.dtype,
        crate::engine::dtype::DType::Fp16 | crate::engine::dtype::DType::Bf16
    );
    let chosen = chosen_of(&plan, &versus);
    let on_versus = {
        let v = versus.clone();
        Callback::from(move |e: Event| {
            v.set(Some(
                e.target_unchecked_into::<web_sys::HtmlSelectElement>()
                    .value(),
            ))
        })
    };
    let on_fixed = {
        let f = fixed.clone();
        Callback::from(move |e: Event| {
            f.set(e.target_unchecked_into::<HtmlInputElement>().checked())
        })
    };
    let on_element = {
        let el = element.clone();
        Callback::from(move |e: Event| {
            if let Ok(i) = e
                .target_unchecked_into::<HtmlInputElement>()
                .value()
                .trim()
                .parse()
            {
                el.set(i)
            }
        })
    };
    let body = match &result {
        None => html! { <p class="hint" id="det-pending" role="status">{t!("det-pending")}</p> },
        Some(Err(e)) => html! { <p class="inline-error" id="det-error" lang="en">{e.clone()}</p> },
        Some(Ok(r)) => {
            let top = r.histogram.iter().map(|h| h.2).max().unwrap_or(1).max(1) as f64;
            html! {
                <>
                    <p id="det-count">{t!("det-count", differ = r.differing, n = r.elements, ulps = r.max_ulps, a = r.sides[0].clone(), b = r.sides[1].clone())}
                        // A large message is compared on its first elements only.
                        if r.elements < c.elems() {
                            {" "}<span id="det-sampled">{t!("det-count-first", n = r.elements, total = c.elems())}</span>
                        }
                    </p>
                    <table class="det-hist" id="det-hist">
                        <tr><th>{"ulps"}</th><th>{t!("det-elements")}</th><th></th></tr>
                        { for r.histogram.iter().map(|(lo, hi, k)| {
                            let label = if lo == hi { lo.to_string() } else if *hi == u64::MAX { format!("≥{lo}") } else { format!("{lo}–{hi}") };
                            let w = if *k == 0 { 0.0 } else { (100.0 * (*k as f64).ln_1p() / top.ln_1p()).max(1.0) };
                            html! { <tr><td>{label}</td><td>{k}</td><td class="bar"><span style={format!("width:{w:.1}%")}></span></td></tr> }
                        }) }
                    </table>
                    <dl class="facts" id="det-orders">
                        <dt>{r.sides[0].clone()}</dt><dd><code>{format!("{} = {}", r.orders[0], r.values[0])}</code></dd>
                        <dt>{r.sides[1].clone()}</dt><dd><code>{format!("{} = {}", r.orders[1], r.values[1])}</code></dd>
                    </dl>
                    if let Some(f) = &r.fixed {
                        <p class="hint" id="det-cost">{t!("det-cost", reduce = format!("{:.2}", f.reduce_us), bcast = format!("{:.2}", f.broadcast_us), total = format!("{:.2}", f.reduce_us + f.broadcast_us), ar = format!("{:.2}", f.allreduce_us), algo = plan.algorithm.name())}</p>
                    }
                </>
            }
        }
    };
    html! {
        <section class="card determinism" id="determinism" aria-label={t!("det-title")}>
            <div class="card-head">
                <h2>{t!("det-title")}</h2>
                <span class="muted">{t!("det-sub", algo = plan.algorithm.name(), dtype = c.dtype.name())}</span>
            </div>
            <div class="what-if-controls">
                <div class="field"><label for="det-versus">{t!("det-versus")}</label>
                    <select id="det-versus" onchange={on_versus}>
                        { for others.iter().map(|a| html! { <option value={a.name()} selected={chosen == a.name()}>{a.name()}</option> }) }
                        if half { <option value="fp32" selected={chosen == "fp32"}>{t!("det-fp32")}</option> }
                        { for (2..c.ranks).filter(|m| c.ranks % m == 0).map(|m| html! {
                            <option value={m.to_string()} selected={chosen == m.to_string()}>{t!("det-ranks", m = m)}</option>
                        }) }
                    </select></div>
                <div class="field"><label for="det-element">{t!("det-element")}</label>
                    <input id="det-element" type="number" min="0" class="narrow" value={element.to_string()} onchange={on_element} /></div>
                <div class="field"><label for="det-fixed">
                    <input id="det-fixed" type="checkbox" checked={*fixed} onchange={on_fixed} />{" "}{t!("det-fixed")}</label></div>
            </div>
            {body}
            <p class="hint sources">{t!("det-source")}</p>
        </section>
    }
}
