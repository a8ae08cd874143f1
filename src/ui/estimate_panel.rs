//! The cost model's prediction: time, algbw, busbw, the ranking of the
//! applicable algorithms and why the winner wins, and the link figures the
//! model uses with their sources.

use super::format;
use super::lang::use_lang;
use super::term::Term;
use crate::engine::cost::Estimate;
use crate::engine::library::Library;
use crate::engine::plan::{Candidate, Decision, Method, Plan, Ranked};
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

/// The ranking and its words the panel says, and the table it draws.
///
/// A drawn plan's come from the planner worker. While they are being made
/// the plan's own words are said (they do not name the other algorithms),
/// and the previous configuration's table stays, dimmed, so that the panel
/// does not shrink and grow again at every control change.
struct Shown<'a> {
    ranking: &'a [Candidate],
    decision: &'a Decision,
    verdict_en: &'a String,
    details: &'a [String],
    /// The rows drawn: `ranking`, or the previous configuration's.
    table: &'a [Candidate],
    /// `table` is the previous configuration's (dimmed, nothing marked).
    table_stale: bool,
}

impl<'a> Shown<'a> {
    fn of(p: &'a EstimateProps) -> Self {
        let plan = &p.plan;
        let (ranking, decision, verdict_en, details) = match (&p.ranked, p.pending) {
            (Some(r), false) => (&r.ranking, &r.decision, &r.verdict, &r.details),
            _ => (&plan.ranking, &plan.decision, &plan.verdict, &plan.details),
        };
        let (table, table_stale) = match (&p.ranked, p.pending) {
            (Some(r), true) => (&r.ranking, true),
            _ => (ranking, false),
        };
        Shown {
            ranking,
            decision,
            verdict_en,
            details,
            table,
            table_stale,
        }
    }
}

/// The estimate panel.
///
/// Only the hook and the section's frame live here; the words and each
/// part of the panel are made by their own functions so each can be read
/// alone.
#[function_component(EstimatePanel)]
pub fn estimate_panel(p: &EstimateProps) -> Html {
    let lang = use_lang();
    let plan = &p.plan;
    let shown = Shown::of(p);
    let chosen_by = chosen_by(shown.decision, plan);
    let verdict = verdict(lang, &shown, plan, &chosen_by);
    // The calibrated model's answer is the headline's only when the
    // headline is predicted (a fixed algorithm is simulated).
    let prediction = plan
        .prediction
        .clone()
        .filter(|_| plan.method == Method::Predicted);
    html! {
        <section class={classes!("card", "estimate", p.look_panel.then_some("lesson-look"), p.stale.then_some("stale"))} id="estimate" aria-label={t!("estimate-label")} aria-busy={p.stale.to_string()}>
            <div class="card-head">
                <h2>{t!("estimate")}</h2>
                <span class="muted">{ if plan.method == Method::Predicted { t!("estimate-sub-calibrated") } else { t!("estimate-sub") } }</span>
            </div>
            if p.stale {
                <p class="hint" id="estimate-updating" role="status">{t!("estimate-updating")}</p>
            }
            {metrics_view(plan, prediction.is_some())}
            {algo_line(plan, &chosen_by)}
            {prediction_view(plan, prediction)}
            {what_if_lines(plan)}
            {slices_line(&plan.estimate)}
            {ranking_view(p, &shown)}
            <p class="reason" id="auto-reason">{verdict}</p>
            {details_view(lang, &shown)}
            {sources_view(plan)}
        </section>
    }
}

/// Who chose the plan's algorithm, in words that fit into the algorithm
/// line and the verdict.
fn chosen_by(decision: &Decision, plan: &Plan) -> String {
    let lib = plan.library;
    match decision {
        Decision::Library { .. } => t!("chosen-library", lib = lib.title()),
        Decision::Measured { .. } => t!("chosen-measured", lib = lib.title()),
        Decision::Model { .. } => t!("chosen-model"),
        Decision::Fixed {
            auto_would: Some((a, _)),
        } if *a != plan.algorithm => t!("chosen-fixed-other", algo = a.name()),
        Decision::Fixed { .. } => t!("chosen-fixed-same"),
    }
}

/// The verdict under the ranking. The engine's verdict is English; in
/// another language it is said from the plan's figures, and the English
/// stays in the details.
fn verdict(lang: Lang, shown: &Shown, plan: &Plan, chosen_by: &str) -> String {
    let ranking = shown.ranking;
    let rank_of = ranking
        .iter()
        .position(|x| x.algorithm == plan.algorithm)
        .map_or(0, |i| i + 1);
    if lang == Lang::En {
        shown.verdict_en.clone()
    } else if ranking.is_empty() {
        t!(
            "verdict-short-unranked",
            chosen = chosen_by.to_string(),
            algo = plan.algorithm.name(),
            t = format::us(plan.estimate.time_us)
        )
    } else {
        t!(
            "verdict-short",
            chosen = chosen_by.to_string(),
            algo = plan.algorithm.name(),
            t = format::us(plan.estimate.time_us),
            rank = rank_of,
            count = ranking.len()
        )
    }
}

/// Where the headline and the ranking row of the same algorithm differ
/// (a compressed or a measured headline), the words said next to the
/// number.
fn headline_note(plan: &Plan) -> Option<String> {
    if plan.compressed.is_some() {
        Some(t!("note-compressed"))
    } else if matches!(plan.method, Method::Measured { .. }) {
        Some(t!("note-measured"))
    } else {
        None
    }
}

/// The headline figures: time, algbw and busbw. A predicted headline shows
/// its bandwidths finer, as the calibrated model's answer is that precise.
fn metrics_view(plan: &Plan, predicted: bool) -> Html {
    let e = &plan.estimate;
    let c = &plan.config;
    let factor = c.primitive.busbw_factor(c.ranks);
    let gbps = |x: f64| {
        if predicted {
            super::prediction::gbps_fine(x)
        } else {
            format::gbps(x)
        }
    };
    html! {
        <div class="metrics">
            <div class="metric"><span class="metric-v" id="estimate-us">{format::us(e.time_us)}</span><span class="metric-u">{"µs"}</span><span class="metric-k">{ headline_note(plan).map_or(t!("predicted"), |n| t!("predicted-note", note = n)) }</span>
            </div>
            <div class="metric"><span class="metric-v">{gbps(e.algbw_gbps)}</span><span class="metric-u">{"GB/s"}</span><span class="metric-k"><Term tip={t!("algbw-title")}>{"algbw = S / t"}</Term></span></div>
            <div class="metric"><span class="metric-v">{gbps(e.busbw_gbps)}</span><span class="metric-u">{"GB/s"}</span><span class="metric-k"><Term tip={t!("busbw-title", factor = format!("{factor:.3}"), op = c.primitive.title(), ranks = c.ranks)}>{format!("busbw = algbw × {factor:.2}")}</Term></span>
            </div>
        </div>
    }
}

/// The algorithm shown and who chose it, for what collective and machine.
fn algo_line(plan: &Plan, chosen_by: &str) -> Html {
    let c = &plan.config;
    let dev = plan.library.device_word();
    html! {
        <p class="algo-line"><strong>{plan.algorithm.name()}</strong>{" "}{ if c.primitive == crate::engine::collective::Primitive::Barrier {
            t!("algo-line-barrier", chosen = chosen_by.to_string(), ranks = c.ranks, device = dev)
        } else {
            t!("algo-line", chosen = chosen_by.to_string(), op = c.primitive.title(), bytes = format_bytes(c.bytes), ranks = c.ranks, device = dev)
        } }</p>
    }
}

/// The calibrated model's answer with the calibration it rests on, when
/// the headline is predicted.
fn prediction_view(plan: &Plan, prediction: Option<crate::engine::predict::Answer>) -> Html {
    let c = &plan.config;
    let basis = prediction
        .as_ref()
        .and_then(|_| crate::engine::plan::calibration(c, &plan.topology))
        .map(|cal| cal.basis);
    match prediction {
        Some(a) => html! {
            <super::prediction::Prediction answer={a} profile={c.profile.clone().filter(|_| c.topo == crate::engine::config::MEASURED)} basis={basis} />
        },
        None => html! {},
    }
}

/// The what-if lines: the headline with compression beside the plain one,
/// and the faulty machine's time beside the healthy one's.
fn what_if_lines(plan: &Plan) -> Html {
    let e = &plan.estimate;
    let c = &plan.config;
    html! {
        <>
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
        </>
    }
}

/// How the message is sliced into pipelined pieces, and why.
fn slices_line(e: &Estimate) -> Html {
    html! {
        <p class="hint" id="estimate-slices" title={t!("slices-title")}>
            {t!("slices-line", n = e.slicing.slices, window = if e.slicing.window > 1 && e.slicing.slices > 1 { e.slicing.window } else { 0 })}
            {" — "}{format::slice_why(&e.slicing.why)}
        </p>
    }
}

/// The ranking table, or in its place why it could not be made or that it
/// is being made (unless the previous one stays, dimmed).
fn ranking_view(p: &EstimateProps, shown: &Shown) -> Html {
    let table_stale = shown.table_stale;
    if let Some(err) = &p.ranking_error {
        html! { <p class="hint error" id="ranking-error" role="status">{t!("ranking-error", error = err.clone())}</p> }
    } else if p.pending && !table_stale {
        html! { <p class="hint" id="ranking-pending" role="status">{t!("ranking-pending")}</p> }
    } else {
        let slowest = shown
            .table
            .iter()
            .map(|x| x.time_us())
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max);
        let row = RowContext {
            plan: &p.plan,
            slowest,
            table_stale,
            look_row: p.look_row.as_deref(),
        };
        html! {
            <table class={classes!("ranking", table_stale.then_some("stale"))} aria-busy={table_stale.to_string()}>
                <caption class="sr-only">{t!("ranking-caption")}</caption>
                <thead><tr><th scope="col">{"#"}</th><th scope="col">{t!("th-algorithm")}</th><th scope="col" class="num">{t!("th-steps")}</th><th scope="col" class="num">{t!("th-time")}</th><th scope="col" class="num">{t!("th-busbw")}</th></tr></thead>
                <tbody>{ for shown.table.iter().enumerate().map(|(i, cand)| ranking_row(&row, i, cand)) }</tbody>
            </table>
        }
    }
}

/// What every ranking row is drawn against.
struct RowContext<'a> {
    plan: &'a Plan,
    /// The slowest finite time in the table: its bar is full width.
    slowest: f64,
    /// The table is the previous configuration's.
    table_stale: bool,
    /// A lesson's highlighted row (algorithm URL name).
    look_row: Option<&'a str>,
}

/// One algorithm's row of the ranking: its place, badges, steps, time with
/// a bar and busbw.
fn ranking_row(row: &RowContext, i: usize, cand: &Candidate) -> Html {
    let (plan, table_stale) = (row.plan, row.table_stale);
    let lib = plan.library;
    let c = &plan.config;
    // A dimmed table is the previous configuration's: nothing in it is
    // marked against this plan (its algorithm, library, a lesson's row).
    let chosen = !table_stale && cand.algorithm == plan.algorithm;
    let t = cand.time_us();
    // Bar length proportional to the predicted time (slowest = full width).
    let width = if row.slowest > 0.0 && t.is_finite() {
        (t / row.slowest * 100.0).clamp(1.5, 100.0)
    } else {
        0.0
    };
    let not_lib = !table_stale && !cand.runs_in_library && lib != Library::Model;
    html! {
        <tr class={classes!(chosen.then_some("chosen"), not_lib.then_some("not-library"), (!table_stale && row.look_row == Some(cand.algorithm.name())).then_some("lesson-look"))}
            data-algorithm={cand.algorithm.name()}>
            <td>{i + 1}</td>
            <td><Term tip={crate::i18n::tr(&format!("algo-{}", cand.algorithm.name()))}><strong>{cand.algorithm.name()}</strong></Term>
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
}

/// "Why": the engine's English verdict (when the page speaks another
/// language), its details and a line about every ranked algorithm.
fn details_view(lang: Lang, shown: &Shown) -> Html {
    html! {
        <details class="why" id="estimate-details">
            <summary>{t!("why-details")}</summary>
            if lang != Lang::En {
                <p class="hint" lang="en">{shown.verdict_en.clone()}</p>
            }
            <ul class="details" lang="en">
                { for shown.details.iter().map(|d| html! { <li>{d.clone()}</li> }) }
            </ul>
            <ul class="summaries">
                { for shown.ranking.iter().map(|cand| html! { <li>{crate::i18n::tr(&format!("algo-{}", cand.algorithm.name()))}</li> }) }
            </ul>
        </details>
    }
}

/// The figures behind the headline with their sources (assumptions
/// marked), and what the model does and does not account for: on a
/// measured machine where NCCL's calibrated model answers, its link
/// classes and what the fit found; elsewhere the topology's own figures
/// (a preset's or the user's, with their sources and assumptions).
fn sources_view(plan: &Plan) -> Html {
    let measured = plan.config.topo == crate::engine::config::MEASURED;
    let calibrated = plan
        .prediction
        .as_ref()
        .filter(|_| measured)
        .and_then(|_| crate::engine::plan::calibration(&plan.config, &plan.topology));
    match calibrated {
        Some(cal) => calibrated_sources_view(&cal),
        None => link_sources_view(plan),
    }
}

/// One source line, an assumption badged.
fn source_item(s: &str) -> Html {
    let assumption = s.contains("assumption");
    html! { <li class={classes!(assumption.then_some("assumption"))}>
        { if assumption { html!{<span class="badge warn">{t!("assumption")}</span>} } else { html!{} } }
        {s.to_string()}
    </li> }
}

fn calibrated_sources_view(cal: &crate::engine::predict::Calibration) -> Html {
    html! {
        <details class="sources" open={true} id="calibrated-sources">
            <summary>{t!("machine-figures")}</summary>
            <ul lang="en">
                { for cal.hardware.sources.iter().map(|s| source_item(s)) }
                { source_item(&format!("corrections to NCCL's constants: {}", cal.basis)) }
            </ul>
            <p class="hint">{t!("model-note-nccl")}</p>
        </details>
    }
}

fn link_sources_view(plan: &Plan) -> Html {
    let e = &plan.estimate;
    let contended = e
        .timeline
        .steps
        .iter()
        .map(|s| s.max_link_sharing)
        .max()
        .unwrap_or(1);
    html! {
        <details class="sources" open={true}>
            <summary>{t!("link-figures")}</summary>
            <p class="hint" lang="en">{plan.topology.title.clone()}</p>
            <ul lang="en">
                { for plan.topology.sources.iter().map(|s| source_item(s)) }
            </ul>
            <p class="hint">
                {t!("model-note-a")}{" "}
                { if e.slicing.slices > 1 { t!("model-note-sliced") } else { t!("model-note-sync") } }
                {t!("model-note-share")}{" "}
                { if contended > 1 { t!("model-note-up-to", n = contended) } else { t!("model-note-none") } }
                {t!("model-note-b")}
            </p>
        </details>
    }
}
