//! busbw vs message size (log x) for every applicable algorithm on the
//! current topology and rank count, the current size marked, with a pasted
//! log's measured points and fitted curve overlaid. On a machine with a
//! calibrated NCCL model, that model's prediction and its 80 % band
//! ([`plan::prediction_curve_on`]) and NCCL's own belief (dashed). Drawn by `plotters`
//! into an SVG string (its SVG backend), injected as markup: the string is
//! generated here from numbers and fixed labels only, never from user text.

use super::planned::use_planned;
use crate::engine::algorithm::Algorithm;
use crate::engine::plan::{self, Curve, Plan, PredictedPoint};
use crate::engine::units::format_bytes;
use crate::runtime::planner::{Answer, Job};
use crate::t;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::rc::Rc;
use yew::prelude::*;

/// A pasted log's points: `(bytes, busbw GB/s)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    /// Measured (the log's out-of-place busbw).
    pub measured: Vec<(u64, f64)>,
    /// The fitted profile at the same sizes.
    pub fitted: Vec<(u64, f64)>,
    /// The rank count the log measured (the chart may be of another one).
    pub ranks: usize,
}

/// Props of [`Chart`].
#[derive(Properties, PartialEq)]
pub struct ChartProps {
    /// The plan (topology, primitive, ranks, dtype, current size).
    pub plan: Rc<Plan>,
    /// A pasted log's points, if any.
    pub overlay: Option<Rc<Overlay>>,
    /// A lesson's highlighted point: an algorithm's curve at a size.
    #[prop_or_default]
    pub look: Option<(Algorithm, u64)>,
}

/// One colour per algorithm, in [`Algorithm::ALL`] order.
const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(188, 189, 34),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(0, 0, 128),
    RGBColor(128, 64, 0),
];

const _: () = assert!(
    PALETTE.len() >= Algorithm::ALL.len(),
    "one chart colour per algorithm"
);

/// The colour of algorithm `a` in the chart (its index in [`Algorithm::ALL`]).
fn colour(a: Algorithm) -> RGBColor {
    let i = Algorithm::ALL.iter().position(|x| *x == a).unwrap_or(0);
    PALETTE[i.min(PALETTE.len() - 1)]
}

/// The x coordinate of a size: log2 of the bytes (the axis is labelled in
/// bytes at every other power of two).
fn lg(b: u64) -> f64 {
    (b.max(1) as f64).log2()
}

/// For each curve, the earlier curve it coincides with (every point within
/// 0.5 %), if any: such a curve is drawn dashed over the other and the
/// legend says they coincide.
fn coincides(curves: &[Curve]) -> Vec<Option<usize>> {
    let same = |a: &Curve, b: &Curve| {
        a.points.len() == b.points.len()
            && !a.points.is_empty()
            && a.points.iter().zip(&b.points).all(|(p, q)| {
                p.0 == q.0 && (p.1 - q.1).abs() <= 0.005 * p.1.abs().max(q.1.abs()).max(1e-9)
            })
    };
    (0..curves.len())
        .map(|i| (0..i).find(|&j| same(&curves[i], &curves[j])))
        .map(|j| {
            j.map(|mut j| {
                // Point at the first curve of the group.
                while let Some(k) = (0..j).find(|&k| same(&curves[j], &curves[k])) {
                    j = k;
                }
                j
            })
        })
        .collect()
}

/// The calibrated prediction's colour (its line, and its band lighter):
/// none of the algorithms' [`PALETTE`].
const PREDICTED: RGBColor = RGBColor(0, 105, 110);
/// Opacity of the 80 % band.
const BAND_ALPHA: f64 = 0.16;

/// The chart's plotting area: log2 bytes across, busbw GB/s up.
type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws the chart into an SVG string. Each layer is drawn by its own
/// function, in this order so that later layers lie on top: the current
/// size, the calibrated prediction, the algorithms' curves, the headline
/// and a lesson's point, and a pasted log's points.
fn render(
    plan: &Plan,
    curves: &[Curve],
    predicted: &[PredictedPoint],
    overlay: Option<&Overlay>,
    look: Option<(Algorithm, u64)>,
) -> Result<String, String> {
    let (w, h) = (680u32, 300u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (x0, x1, y1) = extent(curves, predicted, overlay);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(52)
            .build_cartesian_2d(lg(x0)..lg(x1), 0f64..y1 * 1.12)
            .map_err(|e| e.to_string())?;
        draw_mesh(&mut chart, x0, x1)?;
        // The current size.
        let cur = lg(plan.config.bytes);
        chart
            .draw_series(LineSeries::new(
                vec![(cur, 0.0), (cur, y1 * 1.12)],
                ShapeStyle::from(RGBColor(150, 156, 170)).stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
        draw_prediction(&mut chart, predicted)?;
        draw_curves(&mut chart, plan, curves)?;
        draw_headline(&mut chart, plan, predicted, cur)?;
        draw_look(&mut chart, curves, look)?;
        if let Some(o) = overlay {
            draw_overlay(&mut chart, o)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The axes' extent: the smallest and largest size and the highest busbw
/// of everything drawn, at least 1 KiB to 1 GiB and 1 GB/s so that a
/// sparse chart keeps a readable scale.
fn extent(
    curves: &[Curve],
    predicted: &[PredictedPoint],
    overlay: Option<&Overlay>,
) -> (u64, u64, f64) {
    let all = curves
        .iter()
        .flat_map(|c| c.points.iter().copied())
        .chain(
            overlay
                .into_iter()
                .flat_map(|o| o.measured.iter().chain(&o.fitted).copied()),
        )
        .chain(predicted.iter().flat_map(|p| {
            [
                (p.bytes, p.high_gbps),
                (p.bytes, p.library_gbps.unwrap_or(0.0)),
            ]
        }));
    let (mut x0, mut x1, mut y1) = (1u64 << 10, 1u64 << 30, 1.0f64);
    for (b, v) in all {
        if b > 0 {
            x0 = x0.min(b);
            x1 = x1.max(b);
        }
        if v.is_finite() {
            y1 = y1.max(v);
        }
    }
    (x0, x1, y1)
}

/// The grid and axes: sizes in bytes at every other power of two, busbw
/// in whole GB/s.
fn draw_mesh(chart: &mut Plot, x0: u64, x1: u64) -> Result<(), String> {
    chart
        .configure_mesh()
        .x_desc(t!("chart-x"))
        .y_desc(t!("chart-y"))
        .x_label_formatter(&|v| format_bytes(2f64.powf(v.round()) as u64))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_labels(((lg(x1) - lg(x0)) / 2.0).round() as usize + 1)
        .y_labels(6)
        .light_line_style(RGBColor(240, 241, 245))
        .bold_line_style(RGBColor(226, 228, 234))
        .axis_desc_style(("sans-serif", 13))
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(|e| e.to_string())
}

/// The calibrated prediction, drawn under the curves: its band, NCCL's
/// own belief dashed, its line. Nothing without a calibrated model.
fn draw_prediction(chart: &mut Plot, predicted: &[PredictedPoint]) -> Result<(), String> {
    if predicted.is_empty() {
        return Ok(());
    }
    let band: Vec<(f64, f64)> = predicted
        .iter()
        .map(|p| (lg(p.bytes), p.high_gbps))
        .chain(predicted.iter().rev().map(|p| (lg(p.bytes), p.low_gbps)))
        .collect();
    chart
        .draw_series(std::iter::once(Polygon::new(
            band,
            PREDICTED.mix(BAND_ALPHA).filled(),
        )))
        .map_err(|e| e.to_string())?;
    let own: Vec<(f64, f64)> = predicted
        .iter()
        .filter_map(|p| p.library_gbps.map(|g| (lg(p.bytes), g)))
        .collect();
    if !own.is_empty() {
        chart
            .draw_series(DashedLineSeries::new(
                own,
                5,
                4,
                ShapeStyle::from(PREDICTED.mix(0.8)).stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
    }
    chart
        .draw_series(LineSeries::new(
            predicted.iter().map(|p| (lg(p.bytes), p.busbw_gbps)),
            ShapeStyle::from(PREDICTED).stroke_width(3),
        ))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// One line per algorithm in its colour, the shown one thicker. A curve
/// that coincides with an earlier one is dashed over it, so both stay
/// visible.
fn draw_curves(chart: &mut Plot, plan: &Plan, curves: &[Curve]) -> Result<(), String> {
    let same = coincides(curves);
    for (i, c) in curves.iter().enumerate() {
        let col = colour(c.algorithm);
        let width = if c.algorithm == plan.algorithm { 3 } else { 2 };
        let line = c.points.iter().map(|p| (lg(p.0), p.1));
        if same[i].is_some() {
            // Drawn dashed over the curve it coincides with.
            chart
                .draw_series(DashedLineSeries::new(
                    line,
                    7,
                    7,
                    ShapeStyle::from(col).stroke_width(width),
                ))
                .map_err(|e| e.to_string())?;
        } else {
            chart
                .draw_series(LineSeries::new(
                    line,
                    ShapeStyle::from(col).stroke_width(width),
                ))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The headline at the current size `cur`: in the shown algorithm's
/// colour, or the calibrated prediction's when the headline is predicted.
fn draw_headline(
    chart: &mut Plot,
    plan: &Plan,
    predicted: &[PredictedPoint],
    cur: f64,
) -> Result<(), String> {
    let col = if plan.method == plan::Method::Predicted && !predicted.is_empty() {
        PREDICTED
    } else {
        colour(plan.algorithm)
    };
    chart
        .draw_series(std::iter::once(Circle::new(
            (cur, plan.estimate.busbw_gbps),
            6,
            ShapeStyle::from(col).filled(),
        )))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// A lesson's point: a ring around it, if its algorithm's curve has that
/// size.
fn draw_look(
    chart: &mut Plot,
    curves: &[Curve],
    look: Option<(Algorithm, u64)>,
) -> Result<(), String> {
    let Some((a, b)) = look else {
        return Ok(());
    };
    let point = curves
        .iter()
        .find(|c| c.algorithm == a)
        .and_then(|c| c.points.iter().find(|p| p.0 == b));
    if let Some(p) = point {
        chart
            .draw_series(std::iter::once(Circle::new(
                (lg(p.0), p.1),
                11,
                ShapeStyle::from(RGBColor(230, 0, 110)).stroke_width(3),
            )))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A pasted log on top of everything: its fitted curve thin and grey, its
/// measured points as crosses.
fn draw_overlay(chart: &mut Plot, o: &Overlay) -> Result<(), String> {
    if !o.fitted.is_empty() {
        chart
            .draw_series(LineSeries::new(
                o.fitted.iter().map(|p| (lg(p.0), p.1)),
                ShapeStyle::from(RGBColor(90, 90, 90)).stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
    }
    chart
        .draw_series(
            o.measured
                .iter()
                .map(|p| Cross::new((lg(p.0), p.1), 4, ShapeStyle::from(BLACK).stroke_width(2))),
        )
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The busbw chart card: the SVG, then its legend as HTML below it (so it
/// never covers a curve), coinciding curves named.
#[function_component(Chart)]
pub fn chart(p: &ChartProps) -> Html {
    let _lang = super::lang::use_lang();
    let c = &p.plan.config;
    // The curves depend on the configuration without its size, algorithm
    // and what-ifs (`plan::sweep_key`): a size or algorithm change does not
    // sweep again. The planner worker sweeps (up to seconds at 1024 ranks),
    // leaving out the curves the plan's budgets skip.
    // The calibrated prediction: microseconds a size, made here from the
    // plan's machine (its library and hardware are all it needs), again
    // only when the curves' key changes.
    let predicted = {
        let plan = p.plan.clone();
        use_memo(plan::sweep_key(c), move |key| {
            plan::prediction_curve_on(key, &plan.topology, &plan::chart_sizes()).unwrap_or_default()
        })
    };
    let answer = use_planned(
        plan::sweep_key(c),
        Some((
            c.clone(),
            Job::Curves {
                sizes: plan::chart_sizes(),
            },
        )),
    );
    let curves: Rc<Vec<Curve>> = match answer.as_deref() {
        Some(Ok(Answer::Curves(v))) => Rc::new(v.clone()),
        Some(Err(e)) => {
            return html! {
                <section class="card chart-card" id="busbw-chart" aria-label={t!("chart-label")}>
                    <div class="card-head"><h2>{t!("chart")}</h2></div>
                    <p class="inline-error">{t!("chart-not-drawn", why = e.clone())}</p>
                </section>
            }
        }
        _ => {
            return html! {
                <section class="card chart-card" id="busbw-chart" aria-label={t!("chart-label")}>
                    <div class="card-head"><h2>{t!("chart")}</h2></div>
                    <p class="hint" id="chart-pending" role="status">{t!("chart-pending")}</p>
                </section>
            }
        }
    };
    let svg = render(&p.plan, &curves, &predicted, p.overlay.as_deref(), p.look);
    let has_own = predicted.iter().any(|x| x.library_gbps.is_some());
    let any_bound = curves.iter().any(|c| c.bound);
    let same = coincides(&curves);
    let ranked: Vec<String> = curves
        .iter()
        .map(|c| {
            let peak = c.points.iter().map(|p| p.1).fold(0.0, f64::max);
            t!(
                "chart-peaks",
                algo = c.algorithm.name(),
                gbps = format!("{peak:.1}")
            )
        })
        .collect();
    // Groups of coinciding curves: "mesh = hier = pipeline".
    let groups: Vec<String> = (0..curves.len())
        .filter(|&i| same[i].is_none() && same.iter().any(|s| *s == Some(i)))
        .map(|i| {
            std::iter::once(curves[i].algorithm.name())
                .chain(
                    (0..curves.len())
                        .filter(|&k| same[k] == Some(i))
                        .map(|k| curves[k].algorithm.name()),
                )
                .collect::<Vec<_>>()
                .join(" = ")
        })
        .collect();
    let legend = curves.iter().enumerate().map(|(i, curve)| {
        let (a, bound) = (&curve.algorithm, &curve.bound);
        let RGBColor(r, g, b) = colour(*a);
        let style = format!(
            "border-top:{}px {} rgb({r},{g},{b})",
            if *a == p.plan.algorithm { 4 } else { 3 },
            if same[i].is_some() { "dashed" } else { "solid" }
        );
        html! {
            <li class={classes!((*a == p.plan.algorithm).then_some("shown"))}>
                <span class="swatch-line" style={style}></span>
                {a.name()}{ if *bound { format!(" {}", t!("bound")) } else { String::new() } }
                { if let Some(j) = same[i] { format!(" = {}", curves[j].algorithm.name()) } else { String::new() } }
            </li>
        }
    });
    html! {
        <section class={classes!("card", "chart-card", p.look.is_some().then_some("lesson-look-card"))} id="busbw-chart" aria-label={t!("chart-label")}>
            <div class="card-head">
                <h2>{t!("chart")}</h2>
                <span class="muted">{t!("chart-sub", op = c.primitive.title(), ranks = c.ranks, topo = p.plan.topology.name.clone(), dtype = c.dtype.name())}</span>
            </div>
            {match svg {
                // Trusted: generated above from numbers and fixed labels.
                Ok(s) => html! { <div class="chart-svg" role="img" aria-label={format!("{}. {}", t!("chart-label"), ranked.join(" · "))} data-curves={curves.len().to_string()} data-predicted={predicted.len().to_string()}>{Html::from_html_unchecked(AttrValue::from(s))}</div> },
                Err(e) => html! { <p class="inline-error">{t!("chart-not-drawn", why = e)}</p> },
            }}
            <ul class="chart-legend" aria-label={t!("chart-legend")}>
                <li><span class="swatch-line current-size"></span>{t!("chart-current", bytes = format_bytes(c.bytes))}</li>
                if !predicted.is_empty() {
                    <li class="predicted" id="chart-predicted"><span class="swatch-band"></span>{t!("chart-pred")}</li>
                    if has_own {
                        <li class="predicted-own"><span class="swatch-line predicted-own"></span>{t!("chart-pred-own")}</li>
                    }
                }
                { for legend }
                if let Some(o) = &p.overlay {
                    if o.ranks == c.ranks {
                        <li><span class="swatch-line fitted"></span>{t!("chart-fitted")}</li>
                        <li><span class="swatch-cross">{"×"}</span>{t!("chart-measured")}</li>
                    } else {
                        // Another scale than the chart's: say which.
                        <li><span class="swatch-line fitted"></span>{t!("chart-fitted-at", ranks = o.ranks)}</li>
                        <li id="chart-measured-other"><span class="swatch-cross">{"×"}</span>{t!("chart-measured-at", ranks = o.ranks)}</li>
                    }
                }
                if let Some((a, b)) = p.look {
                    <li class="lesson-look-item"><span class="swatch-ring"></span>{t!("chart-look", algo = a.name(), bytes = format_bytes(b))}</li>
                }
            </ul>
            if !groups.is_empty() {
                <p class="hint" id="chart-coincide">{t!("chart-same", algos = groups.join("; "))}</p>
            }
            <p class="hint">
                if !predicted.is_empty() {
                    {t!("chart-pred-hint")}{" "}
                }
                {t!("chart-hint")}{" "}
                {ranked.join(" · ")}{". "}
                { if any_bound { t!("chart-bound-hint") } else { String::new() } }
            </p>
        </section>
    }
}
