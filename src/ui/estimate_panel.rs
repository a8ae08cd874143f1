//! The cost model's prediction: time, algbw, busbw, the ranking of the
//! applicable algorithms and why the winner wins, and the link figures the
//! model uses with their sources.

use super::format;
use crate::engine::library::Library;
use crate::engine::plan::{Decision, Method, Plan};
use crate::engine::units::format_bytes;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`EstimatePanel`].
#[derive(Properties, PartialEq)]
pub struct EstimateProps {
    /// The plan.
    pub plan: Rc<Plan>,
}

/// The estimate panel.
#[function_component(EstimatePanel)]
pub fn estimate_panel(p: &EstimateProps) -> Html {
    let plan = &p.plan;
    let e = &plan.estimate;
    let c = &plan.config;
    let factor = c.op.busbw_factor(c.ranks);
    let slowest = plan
        .ranking
        .iter()
        .map(|x| x.time_us())
        .filter(|t| t.is_finite())
        .fold(0.0, f64::max);
    let lib = plan.library;
    let rows = plan.ranking.iter().enumerate().map(|(i, cand)| {
        let chosen = cand.algorithm == plan.algorithm;
        let t = cand.time_us();
        // Bar length proportional to the predicted time (slowest = full width).
        let width = if slowest > 0.0 && t.is_finite() { (t / slowest * 100.0).clamp(1.5, 100.0) } else { 0.0 };
        let not_lib = !cand.runs_in_library && lib != Library::Model;
        html! {
            <tr class={classes!(chosen.then_some("chosen"), not_lib.then_some("not-library"))}>
                <td>{i + 1}</td>
                <td><strong>{cand.algorithm.name()}</strong>
                    { if chosen { html!{<span class="badge">{"shown"}</span>} } else { html!{} } }
                    { if not_lib { html!{<span class="badge muted-badge" title={format!("{} does not run {} for {}", lib.title(), cand.algorithm, c.op.title())}>{format!("not {}", lib.title())}</span>} } else { html!{} } }
                </td>
                <td class="num">{if cand.steps > 0 { cand.steps.to_string() } else { "–".into() }}</td>
                <td class="num">{ match &cand.estimate {
                    Some(e) => html!{<>{format::us(e.time_us)}{ if cand.method == Method::Bound { html!{<span class="muted" title="per-step bottleneck bound: the schedule is larger than the model simulates link by link">{" (bound)"}</span>} } else { html!{} } }
                        <div class="bar"><span style={format!("width:{width:.1}%")}></span></div></>},
                    None => html!{<span class="muted" title="its schedule is too large to build here">{"too large"}</span>},
                } }</td>
                <td class="num">{cand.estimate.as_ref().map_or("–".to_string(), |e| format::gbps(e.busbw_gbps))}</td>
            </tr>
        }
    });
    let chosen_by = match &plan.decision {
        Decision::Library { .. } => format!("auto: what {} runs", lib.title()),
        Decision::Measured { .. } => format!("auto: {} as measured (fitted curve)", lib.title()),
        Decision::Model { .. } => "auto: the model's fastest".to_string(),
        Decision::Fixed {
            auto_would: Some((a, _)),
        } if *a != plan.algorithm => {
            format!("your choice — auto would run {a}")
        }
        Decision::Fixed { .. } => "your choice — also auto's".to_string(),
    };
    // Where the headline and the ranking row of the same algorithm differ,
    // say so next to the number.
    let headline_note = if plan.compressed.is_some() {
        Some("includes compression; the ranking row is uncompressed")
    } else if matches!(plan.method, Method::Measured { .. }) {
        Some("the fitted curve; the ranking rows are modelled from the profile's link figures")
    } else {
        None
    };
    let contended = e
        .timeline
        .steps
        .iter()
        .map(|s| s.max_link_sharing)
        .max()
        .unwrap_or(1);
    html! {
        <section class="card estimate" id="estimate" aria-label="Cost model estimate">
            <div class="card-head">
                <h2>{"Estimate"}</h2>
                <span class="muted">{"α-β model, no workers needed"}</span>
            </div>
            <div class="metrics">
                <div class="metric"><span class="metric-v" id="estimate-us">{format::us(e.time_us)}</span><span class="metric-u">{"µs"}</span><span class="metric-k">{ headline_note.map_or("predicted time".to_string(), |n| format!("predicted time ({n})")) }</span></div>
                <div class="metric" title="algbw = S / t (nccl-tests), GB = 1e9 bytes"><span class="metric-v">{format::gbps(e.algbw_gbps)}</span><span class="metric-u">{"GB/s"}</span><span class="metric-k">{"algbw = S / t"}</span></div>
                <div class="metric" title={format!("busbw = algbw × {factor:.3} for {} on {} ranks (nccl-tests PERFORMANCE.md)", c.op.title(), c.ranks)}><span class="metric-v">{format::gbps(e.busbw_gbps)}</span><span class="metric-u">{"GB/s"}</span><span class="metric-k">{format!("busbw = algbw × {factor:.2}")}</span></div>
            </div>
            <p class="algo-line"><strong>{plan.algorithm.name()}</strong>{ if c.op == crate::engine::collective::Primitive::Barrier {
                format!(" · {chosen_by} · Barrier (no payload: the message size does not apply) on {} ranks", c.ranks)
            } else {
                format!(" · {chosen_by} · {} of {} on {} ranks", c.op.title(), format_bytes(c.bytes), c.ranks)
            } }</p>
            if let Some(cp) = &plan.compressed {
                <p class="hint what-if-line" id="estimate-compressed">{format!(
                    "With {} compression ({}; a what-if, see below): {} µs vs {} µs uncompressed. The ranking below is uncompressed.",
                    cp.setup.compression.scheme.name(),
                    cp.setup.placement.name(),
                    format::us(cp.estimate.time_us),
                    format::us(cp.estimate.uncompressed_us)
                )}</p>
            }
            <p class="hint" id="estimate-slices" title="URL key slices: auto or 1..=256">{
                format!(
                    "{} slice{} per transfer{} — {}{}",
                    e.slicing.slices,
                    if e.slicing.slices == 1 { "" } else { "s" },
                    if e.slicing.window > 1 && e.slicing.slices > 1 {
                        format!(", up to {} in flight", e.slicing.window)
                    } else {
                        String::new()
                    },
                    e.slicing.why,
                    "."
                )
            }</p>
            <table class="ranking">
                <thead><tr><th>{"#"}</th><th>{"algorithm"}</th><th class="num">{"steps"}</th><th class="num">{"time (µs)"}</th><th class="num">{"busbw (GB/s)"}</th></tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
            <p class="reason" id="auto-reason">{plan.verdict.clone()}</p>
            <details class="why" id="estimate-details">
                <summary>{"Why: every candidate in numbers"}</summary>
                <ul class="details">
                    { for plan.details.iter().map(|d| html! { <li>{d.clone()}</li> }) }
                </ul>
                <ul class="summaries">
                    { for plan.ranking.iter().map(|cand| html! { <li>{cand.algorithm.summary()}</li> }) }
                </ul>
            </details>
            <details class="sources" open={true}>
                <summary>{"Link figures the model uses"}</summary>
                <p class="hint">{plan.topology.title.clone()}</p>
                <ul>
                    { for plan.topology.sources.iter().map(|s| {
                        let assumption = s.contains("assumption");
                        html! { <li class={classes!(assumption.then_some("assumption"))}>
                            { if assumption { html!{<span class="badge warn">{"assumption"}</span>} } else { html!{} } }
                            {s.clone()}
                        </li> }
                    }) }
                </ul>
                <p class="hint">
                    {"Modelled, not measured: per transfer α + bytes/B; "}
                    { if e.slicing.slices > 1 { "slices pipeline through the steps (no barrier per step)" } else { "steps are synchronous" } }
                    {"; flows on the same link direction share its bandwidth"}
                    { if contended > 1 { format!(" (up to {contended} here)") } else { " (none share one here)".to_string() } }
                    {". Real HCCL also splits messages above HCCL_BUFFSIZE (200 MB) into loops, pipelines slices and pays kernel-launch and synchronisation costs that the model leaves out. busbw follows nccl-tests' definition; hccl_test prints only algbw."}
                </p>
            </details>
        </section>
    }
}
