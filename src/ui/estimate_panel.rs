//! The cost model's prediction: time, algbw, busbw, the ranking of the
//! applicable algorithms and why the winner wins, and the link figures the
//! model uses with their sources.

use super::format;
use super::plan::Plan;
use crate::engine::select::format_bytes;
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
        .selection
        .ranking
        .iter()
        .map(|x| x.estimate.time_us)
        .fold(0.0, f64::max);
    let rows = plan.selection.ranking.iter().enumerate().map(|(i, cand)| {
        let chosen = cand.algorithm == plan.algorithm;
        // Bar length proportional to the predicted time (slowest = full width).
        let width = if slowest > 0.0 { (cand.estimate.time_us / slowest * 100.0).clamp(1.5, 100.0) } else { 100.0 };
        html! {
            <tr class={classes!(chosen.then_some("chosen"))}>
                <td>{i + 1}</td>
                <td><strong>{cand.algorithm.name()}</strong>{ if chosen { html!{<span class="badge">{"shown"}</span>} } else { html!{} } }</td>
                <td class="num">{cand.steps}</td>
                <td class="num">{format::us(cand.estimate.time_us)}
                    <div class="bar"><span style={format!("width:{width:.1}%")}></span></div>
                </td>
                <td class="num">{format::gbps(cand.estimate.busbw_gbps)}</td>
            </tr>
        }
    });
    let chosen_by = if plan.auto() {
        "chosen by auto (fastest predicted)".to_string()
    } else if plan.selection.chosen() == plan.algorithm {
        "your choice — also auto's".to_string()
    } else {
        format!("your choice — auto would pick {}", plan.selection.chosen())
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
                <div class="metric"><span class="metric-v" id="estimate-us">{format::us(e.time_us)}</span><span class="metric-u">{"µs"}</span><span class="metric-k">{"predicted time"}</span></div>
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
                    if e.slicing.slices > 1 { ". The ranking below is unsliced." } else { "." }
                )
            }</p>
            <table class="ranking">
                <thead><tr><th>{"#"}</th><th>{"algorithm"}</th><th class="num">{"steps"}</th><th class="num">{"time (µs)"}</th><th class="num">{"busbw (GB/s)"}</th></tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
            <p class="reason" id="auto-reason">{plan.selection.reason.clone()}</p>
            <ul class="summaries">
                { for plan.selection.ranking.iter().map(|cand| html! { <li>{cand.algorithm.summary()}</li> }) }
            </ul>
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
