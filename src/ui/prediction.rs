//! The calibrated library model's answer beside the estimate
//! ([`crate::engine::predict::Answer`], on an NCCL machine): what NCCL
//! runs and what its own model believes, what was measured and what is
//! predicted, and the assumption behind the 80 % range. Every sentence is
//! said in the page's language from the answer's values (its reach, its
//! dominant assumption, its runners-up); the engine's English note stays
//! in the details, as the model's own words.
//!
//! Hooks for tooling: `#prediction` with `data-runs`, `data-channels`,
//! `data-low-us`, `data-high-us`, `data-library-us`, `data-reach`.

use super::format;
use crate::engine::calibrate::Profile;
use crate::engine::predict::{Answer, Assumption, Measured, Reach};
use crate::engine::units::format_bytes;
use crate::t;
use yew::prelude::*;

/// A bandwidth with at least three significant digits (the busbw of a
/// 1 KiB AllReduce on 2 160 ranks is 0.0204 GB/s; two decimals say 0.02).
pub fn gbps_fine(v: f64) -> String {
    if v.is_finite() && v.abs() > 0.0 && v.abs() < 1.0 {
        let digits = (2 - v.abs().log10().floor() as i32).clamp(2, 6) as usize;
        format!("{v:.digits$}")
    } else {
        format::gbps(v)
    }
}

/// `232.4–371.0 µs`.
fn time_range(a: &Answer) -> String {
    format!("{}–{} µs", format::us(a.low_us), format::us(a.high_us))
}

/// `0.0174–0.0252 GB/s`: the busbw of the range's longest and shortest
/// times.
fn busbw_range(a: &Answer) -> String {
    let bw = |us: f64| a.busbw_gbps * a.time_us / us;
    format!(
        "{}–{} GB/s",
        gbps_fine(bw(a.high_us)),
        gbps_fine(bw(a.low_us))
    )
}

/// One measured table, in words.
fn measured_item(m: &Measured) -> String {
    t!(
        "pred-measured-item",
        op = m.primitive.title(),
        nodes = m.nodes,
        g = m.ranks.div_ceil(m.nodes.max(1)),
        ranks = m.ranks,
        from = format_bytes(m.min_bytes),
        to = format_bytes(m.max_bytes)
    )
}

/// How the question stands to what was measured, in words.
fn reach_words(r: Reach) -> String {
    match r {
        Reach::NotMeasured => t!("reach-not-measured"),
        Reach::Within => t!("reach-within"),
        Reach::OtherSize => t!("reach-other-size"),
        Reach::OtherScale => t!("reach-other-scale"),
        Reach::OtherCollective => t!("reach-other-collective"),
        Reach::OtherCollectiveAndScale => t!("reach-other-both"),
    }
}

/// The dominant assumption: a short phrase for the summary and the
/// whole sentence.
fn assumption_words(a: &Assumption) -> (String, String) {
    match a {
        Assumption::Taper {
            nodes,
            measured_nodes,
        } => (
            t!(
                "assume-taper-short",
                nodes = *nodes,
                measured = *measured_nodes
            ),
            t!("assume-taper", nodes = *nodes, measured = *measured_nodes),
        ),
        Assumption::PeerCost => (t!("assume-peer-short"), t!("assume-peer")),
        Assumption::NetLatency => (t!("assume-net-lat-short"), t!("assume-net-lat")),
        Assumption::LatencyGrowth {
            nodes,
            measured_nodes,
        } => (
            t!(
                "assume-lat-growth-short",
                nodes = *nodes,
                measured = *measured_nodes
            ),
            t!(
                "assume-lat-growth",
                nodes = *nodes,
                measured = *measured_nodes
            ),
        ),
        Assumption::NetBandwidth => (t!("assume-net-bw-short"), t!("assume-net-bw")),
        Assumption::RingOverhead => (t!("assume-ring-short"), t!("assume-ring")),
        Assumption::IntraBandwidth => (t!("assume-intra-short"), t!("assume-intra")),
        Assumption::LatencyConstants => (t!("assume-lat-const-short"), t!("assume-lat-const")),
        Assumption::ProtocolEfficiency => (t!("assume-proto-short"), t!("assume-proto")),
        Assumption::UnmeasuredCollective {
            primitive,
            measured,
        } => {
            let mut names: Vec<&str> = measured.iter().map(|m| m.title()).collect();
            names.dedup();
            (
                t!("assume-unmeasured-short", op = primitive.title()),
                t!(
                    "assume-unmeasured",
                    op = primitive.title(),
                    measured = names.join(", ")
                ),
            )
        }
        Assumption::Scatter { percent } => {
            let pct = format!("{percent:.0}");
            (
                t!("assume-scatter-short", pct = pct.clone()),
                t!("assume-scatter", pct = pct),
            )
        }
    }
}

/// Props of [`Prediction`].
#[derive(Properties, PartialEq)]
pub struct PredictionProps {
    /// The answer.
    pub answer: Answer,
    /// The fitted profile of the measured machine, if the answer is from
    /// one (its measured tables are said; a preset has none).
    pub profile: Option<Profile>,
    /// Where the model's corrections come from, in the engine's words.
    pub basis: Option<String>,
}

/// What NCCL runs, what it believes, what was measured and what the range
/// rests on (`#prediction`).
#[function_component(Prediction)]
pub fn prediction(p: &PredictionProps) -> Html {
    let _lang = super::lang::use_lang();
    let a = &p.answer;
    let s = &a.shape;
    let measured: Vec<String> = p
        .profile
        .as_ref()
        .and_then(|x| x.physical.as_ref())
        .map(|c| c.measured.iter().map(measured_item).collect())
        .unwrap_or_default();
    let predicted_for = t!(
        "pred-for",
        op = s.primitive.title(),
        nodes = s.nodes,
        ranks = s.ranks,
        bytes = format_bytes(a.bytes),
        reach = reach_words(a.reach)
    );
    let (short, sentence) = assumption_words(&a.assumption);
    let runs = match (a.algo, a.channels) {
        (Some(_), Some(ch)) => html! {
            <>{t!("pred-runs")}{" "}<strong>{a.runs.clone()}</strong>{" "}{t!("pred-channels", n = ch)}</>
        },
        _ => html! { <>{t!("pred-runs")}{" "}<strong>{t!("pred-p2p")}</strong></> },
    };
    html! {
        <div class="prediction" id="prediction"
            data-runs={a.runs.clone()}
            data-channels={a.channels.map(|c| c.to_string()).unwrap_or_default()}
            data-low-us={a.low_us.to_string()}
            data-high-us={a.high_us.to_string()}
            data-library-us={a.library_us.map(|x| x.to_string()).unwrap_or_default()}
            data-reach={format!("{:?}", a.reach)}>
            <p class="pred-range" title={t!("pred-range-title")}>
                <span class="pred-tag">{t!("pred-range-tag")}</span>{" "}
                <strong id="estimate-range">{time_range(a)}</strong>
                {" · "}{t!("pred-busbw")}{" "}<span id="estimate-busbw-range">{busbw_range(a)}</span>
            </p>
            <p class="pred-runs" id="prediction-runs">
                {runs}
                if let Some(own) = a.library_us {
                    {" "}
                    <span class="pred-own" id="prediction-own" title={t!("pred-own-title")}>
                        {t!("pred-own")}{" "}<strong>{format!("{} µs", format::us(own))}</strong>
                    </span>
                }
            </p>
            <p class="pred-reach" id="prediction-reach">
                if measured.is_empty() {
                    <span class="pred-tag">{t!("pred-basis-tag")}</span>{" "}{t!("pred-not-measured")}
                } else {
                    <span class="pred-tag">{t!("pred-measured-tag")}</span>{" "}{measured.join("; ")}
                }
                <br />
                <span class="pred-tag predicted">{t!("pred-for-tag")}</span>{" "}{predicted_for}
            </p>
            <details class="pred-why" id="prediction-why">
                <summary>{t!("pred-dominated", what = short)}</summary>
                <p>{sentence}</p>
                { for a.runners_up.iter().map(|(r, us)| html! {
                    <p>{t!("pred-runner-up", runs = r.clone(), x = crate::engine::predict::model::CHOICE_SPREAD, t = format::us(*us))}</p>
                }) }
                <p class="hint">{t!("pred-engine-words")}</p>
                <p class="hint" lang="en">{a.why.clone()}{". "}{a.note.clone()}</p>
                if let Some(b) = &p.basis {
                    <p class="hint" lang="en">{b.clone()}</p>
                }
            </details>
        </div>
    }
}
