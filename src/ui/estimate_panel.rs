//! The cost model's prediction: time, algbw, busbw, the ranking of the
//! applicable algorithms and why the winner wins, and the link figures the
//! model uses with their sources.

use super::format;
use super::lang::use_lang;
use crate::engine::library::Library;
use crate::engine::plan::{Decision, Method, Plan, Ranked};
use crate::engine::units::format_bytes;
use crate::i18n::Lang;
use crate::t;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`EstimatePanel`].
#[derive(Properties, PartialEq)]
pub struct EstimateProps {
    /// The plan.
    pub plan: Rc<Plan>,
    /// A lesson's highlighted ranking row (algorithm URL name).
    #[prop_or_default]
    pub look_row: Option<AttrValue>,
    /// A lesson highlights the whole panel.
    #[prop_or_default]
    pub look_panel: bool,
    /// A drawn plan's ranking and its words ([`Plan::unranked`] has
    /// none); while `pending`, the previous configuration's (dimmed).
    #[prop_or_default]
    pub ranked: Option<Rc<Ranked>>,
    /// Why a drawn plan's ranking could not be made (said in its place).
    #[prop_or_default]
    pub ranking_error: Option<String>,
    /// The ranking is being made (the plan is the headline only, or a
    /// drawn plan without its ranking).
    #[prop_or_default]
    pub pending: bool,
    /// The plan is the previous configuration's: the new one is being
    /// made in the planner worker (the figures are dimmed and say so).
    #[prop_or_default]
    pub stale: bool,
}

/// The estimate panel.
#[function_component(EstimatePanel)]
pub fn estimate_panel(p: &EstimateProps) -> Html {
    let lang = use_lang();
    let plan = &p.plan;
    let e = &plan.estimate;
    let c = &plan.config;
    let factor = c.primitive.busbw_factor(c.ranks);
    // The ranking and its words: a drawn plan's come from the planner
    // worker. While they are being made the plan's own words are said
    // (they do not name the other algorithms), and the previous
    // configuration's table stays, dimmed, so that the panel does not
    // shrink and grow again at every control change.
    let (ranking, decision, verdict_en, details) = match (&p.ranked, p.pending) {
        (Some(r), false) => (&r.ranking, &r.decision, &r.verdict, &r.details),
        _ => (&plan.ranking, &plan.decision, &plan.verdict, &plan.details),
    };
    let (table, table_stale) = match (&p.ranked, p.pending) {
        (Some(r), true) => (&r.ranking, true),
        _ => (ranking, false),
    };
    let slowest = table
        .iter()
        .map(|x| x.time_us())
        .filter(|t| t.is_finite())
        .fold(0.0, f64::max);
    let lib = plan.library;
    let dev = plan.library.device_word();
    let rows = table.iter().enumerate().map(|(i, cand)| {
        // A dimmed table is the previous configuration's: nothing in it is
        // marked against this plan (its algorithm, library, a lesson's row).
        let chosen = !table_stale && cand.algorithm == plan.algorithm;
        let t = cand.time_us();
        // Bar length proportional to the predicted time (slowest = full width).
        let width = if slowest > 0.0 && t.is_finite() { (t / slowest * 100.0).clamp(1.5, 100.0) } else { 0.0 };
        let not_lib = !table_stale && !cand.runs_in_library && lib != Library::Model;
        html! {
            <tr class={classes!(chosen.then_some("chosen"), not_lib.then_some("not-library"), (!table_stale && p.look_row.as_deref() == Some(cand.algorithm.name())).then_some("lesson-look"))}
                data-algorithm={cand.algorithm.name()}>
                <td>{i + 1}</td>
                <td><strong>{cand.algorithm.name()}</strong>
                    { if chosen { html!{<span class="badge">{t!("badge-shown")}</span>} } else { html!{} } }
                    { if not_lib { html!{<span class="badge muted-badge" title={t!("not-lib-title", lib = lib.title(), algo = cand.algorithm.name(), op = c.primitive.title())}>{t!("badge-not-lib", lib = lib.title())}</span>} } else { html!{} } }
                </td>
                <td class="num">{if cand.steps > 0 { cand.steps.to_string() } else { "–".into() }}</td>
                <td class="num">{ match &cand.estimate {
                    Some(e) => html!{<>{format::us(e.time_us)}{ if cand.method == Method::Bound { html!{<span class="muted" title={t!("bound-title")}>{" "}{t!("bound")}</span>} } else { html!{} } }
                        <div class="bar"><span style={format!("width:{width:.1}%")}></span></div></>},
                    None => html!{<span class="muted" title={t!("too-large-title")}>{t!("too-large")}</span>},
                } }</td>
                <td class="num">{cand.estimate.as_ref().map_or("–".to_string(), |e| format::gbps(e.busbw_gbps))}</td>
            </tr>
        }
    });
    let chosen_by = match decision {
        Decision::Library { .. } => t!("chosen-library", lib = lib.title()),
        Decision::Measured { .. } => t!("chosen-measured", lib = lib.title()),
        Decision::Model { .. } => t!("chosen-model"),
        Decision::Fixed {
            auto_would: Some((a, _)),
        } if *a != plan.algorithm => t!("chosen-fixed-other", algo = a.name()),
        Decision::Fixed { .. } => t!("chosen-fixed-same"),
    };
    // Where the headline and the ranking row of the same algorithm differ,
    // say so next to the number.
    let headline_note = if plan.compressed.is_some() {
        Some(t!("note-compressed"))
    } else if matches!(plan.method, Method::Measured { .. }) {
        Some(t!("note-measured"))
    } else {
        None
    };
    // The engine's verdict and details are English; in another language
    // the verdict is said from the plan's figures, the English stays in
    // the details.
    let rank_of = ranking
        .iter()
        .position(|x| x.algorithm == plan.algorithm)
        .map_or(0, |i| i + 1);
    let verdict = if lang == Lang::En {
        verdict_en.clone()
    } else if ranking.is_empty() {
        t!(
            "verdict-short-unranked",
            chosen = chosen_by.clone(),
            algo = plan.algorithm.name(),
            t = format::us(e.time_us)
        )
    } else {
        t!(
            "verdict-short",
            chosen = chosen_by.clone(),
            algo = plan.algorithm.name(),
            t = format::us(e.time_us),
            rank = rank_of,
            count = ranking.len()
        )
    };
    // The calibrated model's answer is the headline's only when the
    // headline is predicted (a fixed algorithm is simulated).
    let prediction = plan
        .prediction
        .clone()
        .filter(|_| plan.method == Method::Predicted);
    let basis = prediction
        .as_ref()
        .and_then(|_| crate::engine::plan::calibration(c, &plan.topology))
        .map(|cal| cal.basis);
    let contended = e
        .timeline
        .steps
        .iter()
        .map(|s| s.max_link_sharing)
        .max()
        .unwrap_or(1);
    html! {
        <section class={classes!("card", "estimate", p.look_panel.then_some("lesson-look"), p.stale.then_some("stale"))} id="estimate" aria-label={t!("estimate-label")} aria-busy={p.stale.to_string()}>
            <div class="card-head">
                <h2>{t!("estimate")}</h2>
                <span class="muted">{ if plan.method == Method::Predicted { t!("estimate-sub-calibrated") } else { t!("estimate-sub") } }</span>
            </div>
            if p.stale {
                <p class="hint" id="estimate-updating" role="status">{t!("estimate-updating")}</p>
            }
            <div class="metrics">
                <div class="metric"><span class="metric-v" id="estimate-us">{format::us(e.time_us)}</span><span class="metric-u">{"µs"}</span><span class="metric-k">{ headline_note.map_or(t!("predicted"), |n| t!("predicted-note", note = n)) }</span>
                </div>
                <div class="metric" title={t!("algbw-title")}><span class="metric-v">{prediction.as_ref().map_or_else(|| format::gbps(e.algbw_gbps), |_| super::prediction::gbps_fine(e.algbw_gbps))}</span><span class="metric-u">{"GB/s"}</span><span class="metric-k">{"algbw = S / t"}</span></div>
                <div class="metric" title={t!("busbw-title", factor = format!("{factor:.3}"), op = c.primitive.title(), ranks = c.ranks)}><span class="metric-v">{prediction.as_ref().map_or_else(|| format::gbps(e.busbw_gbps), |_| super::prediction::gbps_fine(e.busbw_gbps))}</span><span class="metric-u">{"GB/s"}</span><span class="metric-k">{format!("busbw = algbw × {factor:.2}")}</span>
                </div>
            </div>
            <p class="algo-line"><strong>{plan.algorithm.name()}</strong>{" "}{ if c.primitive == crate::engine::collective::Primitive::Barrier {
                t!("algo-line-barrier", chosen = chosen_by.clone(), ranks = c.ranks, device = dev)
            } else {
                t!("algo-line", chosen = chosen_by.clone(), op = c.primitive.title(), bytes = format_bytes(c.bytes), ranks = c.ranks, device = dev)
            } }</p>
            if let Some(a) = &prediction {
                <super::prediction::Prediction answer={a.clone()} profile={c.profile.clone().filter(|_| c.topo == crate::engine::config::MEASURED)} basis={basis.clone()} />
            }
            if let Some(cp) = &plan.compressed {
                <p class="hint what-if-line" id="estimate-compressed">{t!(
                    "estimate-compressed",
                    scheme = cp.setup.compression.scheme.name(),
                    placement = cp.setup.placement.name(),
                    t = format::us(cp.estimate.time_us),
                    u = format::us(cp.estimate.uncompressed_us)
                )}</p>
            }
            if let (Some(h), Some(x)) = (&plan.healthy, plan.slowdown()) {
                <p class="hint what-if-line fault-line" id="estimate-faults">{t!(
                    "estimate-faults",
                    faults = c.faults.describe(),
                    t = format::us(e.time_us),
                    h = format::us(h.time_us),
                    x = format!("{x:.2}")
                )}</p>
            }
            <p class="hint" id="estimate-slices" title={t!("slices-title")}>
                {t!("slices-line", n = e.slicing.slices, window = if e.slicing.window > 1 && e.slicing.slices > 1 { e.slicing.window } else { 0 })}
                {" — "}{format::slice_why(&e.slicing.why)}
            </p>
            if let Some(err) = &p.ranking_error {
                <p class="hint error" id="ranking-error" role="status">{t!("ranking-error", error = err.clone())}</p>
            } else if p.pending && !table_stale {
                <p class="hint" id="ranking-pending" role="status">{t!("ranking-pending")}</p>
            } else {
                <table class={classes!("ranking", table_stale.then_some("stale"))} aria-busy={table_stale.to_string()}>
                    <caption class="sr-only">{t!("ranking-caption")}</caption>
                    <thead><tr><th scope="col">{"#"}</th><th scope="col">{t!("th-algorithm")}</th><th scope="col" class="num">{t!("th-steps")}</th><th scope="col" class="num">{t!("th-time")}</th><th scope="col" class="num">{t!("th-busbw")}</th></tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            }
            <p class="reason" id="auto-reason">{verdict}</p>
            <details class="why" id="estimate-details">
                <summary>{t!("why-details")}</summary>
                if lang != Lang::En {
                    <p class="hint" lang="en">{verdict_en.clone()}</p>
                }
                <ul class="details" lang="en">
                    { for details.iter().map(|d| html! { <li>{d.clone()}</li> }) }
                </ul>
                <ul class="summaries">
                    { for ranking.iter().map(|cand| html! { <li>{crate::i18n::tr(&format!("algo-{}", cand.algorithm.name()))}</li> }) }
                </ul>
            </details>
            <details class="sources" open={true}>
                <summary>{t!("link-figures")}</summary>
                <p class="hint" lang="en">{plan.topology.title.clone()}</p>
                <ul lang="en">
                    { for plan.topology.sources.iter().map(|s| {
                        let assumption = s.contains("assumption");
                        html! { <li class={classes!(assumption.then_some("assumption"))}>
                            { if assumption { html!{<span class="badge warn">{t!("assumption")}</span>} } else { html!{} } }
                            {s.clone()}
                        </li> }
                    }) }
                </ul>
                <p class="hint">
                    {t!("model-note-a")}{" "}
                    { if e.slicing.slices > 1 { t!("model-note-sliced") } else { t!("model-note-sync") } }
                    {t!("model-note-share")}{" "}
                    { if contended > 1 { t!("model-note-up-to", n = contended) } else { t!("model-note-none") } }
                    {t!("model-note-b")}
                </p>
            </details>
        </section>
    }
}
