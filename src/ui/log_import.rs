//! Measurements in: paste or drop an nccl-tests / rccl-tests (text or `-J`
//! JSON), hccl_test or OSU micro-benchmarks log ([`parse_log`]); every table
//! is listed, the ones that cannot be used with the reason (the line, the
//! value and what was expected, or why the numbers are impossible); the
//! chosen table is fitted ([`Profile::fit_table`]), its rows shown with
//! their fit error (the first [`MAX_SHOWN_ROWS`]), and the page can switch
//! the model to the fitted profile ([`Profile::apply`]). The pasted text
//! lives in the [`App`](super::app::App), so it is never lost while the
//! page re-plans.

use super::chart::Overlay;
use super::format;
use crate::engine::calibrate::Profile;
use crate::engine::collective::Primitive;
use crate::engine::formats::{parse_log, FormatError, Log};
use crate::engine::units::format_bytes;
use crate::t;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Most fitted rows the card draws (a pasted log may have 100 000; the
/// summary counts them all).
pub const MAX_SHOWN_ROWS: usize = 500;
/// Most measured points drawn on the chart (evenly thinned above).
pub const MAX_CHART_POINTS: usize = 1000;

/// The parsed log and its fit (recomputed when the text or the chosen
/// table changes).
#[derive(Debug, PartialEq)]
pub struct Import {
    /// `None` for an empty text.
    pub parsed: Option<Result<Log, FormatError>>,
    /// Index of the fitted table in `log.tables`.
    pub table: usize,
    /// The fit of that table.
    pub fit: Option<Result<Profile, String>>,
    /// The table printed no rank count; this one (the page's) was assumed.
    pub assumed_ranks: Option<usize>,
}

impl Import {
    /// Parses `text`; fits table `choice` (else the first usable one of
    /// primitive `op`, else the first usable one); `ranks` if the table
    /// prints none.
    pub fn new(text: &str, choice: Option<usize>, op: Primitive, ranks: usize) -> Import {
        if text.trim().is_empty() {
            return Import {
                parsed: None,
                table: 0,
                fit: None,
                assumed_ranks: None,
            };
        }
        // Which tables print their rank count, before the page's fills
        // the others (OSU's per-rank sizes and busbw-only tables convert
        // with it, and a table naming no collective takes the page's).
        let mut printed: Vec<bool> = Vec::new();
        let parsed = parse_log(text).map(|mut log| {
            printed = log.tables.iter().map(|t| t.ranks.is_some()).collect();
            let op = crate::engine::formats::Collective::from_tool_name(op.name());
            log.assume(Some(ranks), Some(&op));
            log
        });
        let (table, fit, assumed_ranks) = match &parsed {
            Err(_) => (0, None, None),
            Ok(log) => {
                let usable = |i: &usize| {
                    let t = &log.tables[*i];
                    t.rejected.is_none() && !t.fittable_rows().is_empty()
                };
                let table = choice
                    .filter(|i| *i < log.tables.len())
                    .or_else(|| {
                        (0..log.tables.len()).filter(usable).find(|i| {
                            log.tables[*i]
                                .collective
                                .as_ref()
                                .and_then(|c| c.primitive())
                                == Some(op)
                        })
                    })
                    .or_else(|| (0..log.tables.len()).find(usable))
                    .unwrap_or(0);
                match log.tables.get(table) {
                    None => (0, None, None),
                    Some(t) => {
                        let fit = Profile::fit_table(t, Some(ranks), "pasted log")
                            .map_err(|e| e.to_string());
                        let assumed = !printed.get(table).copied().unwrap_or(false);
                        (table, Some(fit), assumed.then_some(ranks))
                    }
                }
            }
        };
        Import {
            parsed: Some(parsed),
            table,
            fit,
            assumed_ranks,
        }
    }

    /// The chart overlay: the table's measured busbw per size (printed, or
    /// algbw × the collective's factor) and the fitted curve.
    pub fn overlay(&self) -> Option<Overlay> {
        let log = self.parsed.as_ref()?.as_ref().ok()?;
        let t = log.tables.get(self.table)?;
        let ranks = t.ranks.or(self.assumed_ranks).unwrap_or(2);
        let coll = t
            .collective
            .clone()
            .unwrap_or(crate::engine::formats::Collective::AllReduce);
        let factor = coll.busbw_factor(ranks);
        let all: Vec<(u64, f64)> = t
            .rows
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| {
                let m = &r.out_of_place;
                (r.bytes, m.busbw_gbps.unwrap_or(m.algbw_gbps * factor))
            })
            .filter(|p| p.1 > 0.0 && p.1.is_finite())
            .collect();
        let step = all.len().div_ceil(MAX_CHART_POINTS).max(1);
        let measured: Vec<(u64, f64)> = all.into_iter().step_by(step).collect();
        let fitted = match &self.fit {
            Some(Ok(p)) => measured
                .iter()
                .map(|&(b, _)| {
                    let us = p.predict_us(b);
                    (
                        b,
                        if us > 0.0 {
                            b as f64 / (us * 1e3) * factor
                        } else {
                            0.0
                        },
                    )
                })
                .collect(),
            _ => Vec::new(),
        };
        (!measured.is_empty()).then_some(Overlay {
            measured,
            fitted,
            ranks,
        })
    }
}

/// Props of [`LogImport`].
#[derive(Properties, PartialEq)]
pub struct LogImportProps {
    /// The pasted text.
    pub text: AttrValue,
    /// Its parse and fit.
    pub import: Rc<Import>,
    /// The profile the model uses now, described (None: the preset's figures).
    pub in_use: Option<AttrValue>,
    /// New text (typed, pasted, dropped).
    pub on_text: Callback<String>,
    /// Fit another table.
    pub on_table: Callback<usize>,
    /// Use the fitted profile (true) or go back to the preset (false).
    pub on_use: Callback<bool>,
}

/// The "measurements in" card.
#[function_component(LogImport)]
pub fn log_import(p: &LogImportProps) -> Html {
    let dragging = use_state(|| false);
    let on_input = {
        let cb = p.on_text.clone();
        Callback::from(move |e: InputEvent| {
            cb.emit(
                e.target_unchecked_into::<web_sys::HtmlTextAreaElement>()
                    .value(),
            )
        })
    };
    let on_dragover = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(true);
        })
    };
    let on_dragleave = {
        let dragging = dragging.clone();
        Callback::from(move |_: DragEvent| dragging.set(false))
    };
    let on_drop = {
        let (cb, dragging) = (p.on_text.clone(), dragging.clone());
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(false);
            let Some(dt) = e.data_transfer() else { return };
            if let Some(file) = dt.files().and_then(|f| f.get(0)) {
                let cb = cb.clone();
                let promise = file.text();
                wasm_bindgen_futures::spawn_local(async move {
                    match wasm_bindgen_futures::JsFuture::from(promise).await {
                        Ok(v) => cb.emit(v.as_string().unwrap_or_default()),
                        Err(_) => cb.emit(String::new()),
                    }
                });
            } else if let Ok(text) = dt.get_data("text/plain") {
                if !text.is_empty() {
                    cb.emit(text);
                }
            }
        })
    };
    let on_table = {
        let cb = p.on_table.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
            {
                if let Ok(i) = s.value().parse() {
                    cb.emit(i);
                }
            }
        })
    };
    let _lang = super::lang::use_lang();
    let imp = &p.import;
    let status = match &imp.parsed {
        None => {
            html! { <p class="hint" id="log-status">{t!("li-paste")}</p> }
        }
        Some(Err(e)) => html! {
            <p class="inline-error" id="log-error" role="alert">{t!("li-unreadable")}{" "}<span lang="en">{e.to_string()}</span></p>
        },
        Some(Ok(log)) => {
            let bad = log.rejected().len();
            html! {
                <p class="hint" id="log-status" data-tables={log.tables.len().to_string()} data-rejected={bad.to_string()}>
                    {t!("li-tables", n = log.tables.len())}
                    {if bad > 0 { format!(" {}", t!("li-unusable", n = bad)) } else { String::new() }}
                </p>
            }
        }
    };
    // Every table with what happened to it: the bad ones with their reason,
    // the good ones with the reader's notes.
    let list = match &imp.parsed {
        Some(Ok(log))
            if log.tables.len() > 1
                || !log.rejected().is_empty()
                || log.tables.iter().any(|t| !t.notes.is_empty()) =>
        {
            html! {
                <ul class="log-tables" id="log-tables">
                    { for log.tables.iter().enumerate().map(|(i, t)| {
                        let fitted = i == imp.table && matches!(imp.fit, Some(Ok(_)));
                        let state = if t.rejected.is_some() { "bad" } else if fitted { "fitted" } else { "ok" };
                        html! {
                            <li class={classes!("log-table-item", state)} data-state={state} data-line={t.line.to_string()}>
                                <span class="log-table-label">{format!("{} · {}", t.label(), t.tool)}</span>
                                { match &t.rejected {
                                    Some(r) => html! { <span class="log-table-why">{format!(" — {} ", t!("li-not-used"))}<span lang="en">{r.clone()}</span></span> },
                                    None if fitted => html! { <span class="log-table-why">{format!(" — {}", t!("li-fitted-below"))}</span> },
                                    None => html! {},
                                } }
                                { for t.notes.iter().map(|n| html! { <span class="log-table-note" lang="en">{n.clone()}</span> }) }
                            </li>
                        }
                    }) }
                </ul>
            }
        }
        _ => html! {},
    };
    let tables = match &imp.parsed {
        Some(Ok(log)) if log.tables.len() > 1 => html! {
            <label class="log-table">{t!("li-fit-table")}{" "}
                <select id="log-table" onchange={on_table}>
                    { for log.tables.iter().enumerate().map(|(i, t)| html! {
                        <option value={i.to_string()} selected={i == imp.table}>
                            {format!("{}{}", t.label(), if t.rejected.is_some() { " — not usable" } else { "" })}
                        </option>
                    }) }
                </select>
            </label>
        },
        _ => html! {},
    };
    let rejected = match &imp.parsed {
        Some(Ok(log)) => log.tables.get(imp.table).and_then(|t| t.rejected.clone()),
        _ => None,
    };
    let fit = match &imp.fit {
        None => html! {},
        Some(Err(e)) => {
            html! { <p class="inline-error" id="fit-error" role="alert">{t!("li-no-fit")}{" "}<span lang="en">{e.to_string()}</span></p> }
        }
        Some(Ok(prof)) => {
            let use_cb = p.on_use.clone();
            let back_cb = p.on_use.clone();
            let hidden = prof.rows.len().saturating_sub(MAX_SHOWN_ROWS);
            let rows = prof.rows.iter().take(MAX_SHOWN_ROWS).map(|r| {
                let err = r.rel_err * 100.0;
                let class = classes!("num", if !r.used { "muted" } else if err.abs() > 10.0 { "bad" } else if err.abs() > 5.0 { "warn" } else { "ok" });
                html! {
                    <tr class={classes!((!r.used).then_some("unused"))}>
                        <td class="num">{r.line}</td>
                        <td class="num">{format_bytes(r.bytes)}</td>
                        <td class="num">{format::us(r.measured_us)}</td>
                        <td class="num">{format::us(r.fitted_us)}</td>
                        <td class={class}>{ if r.used { format!("{err:+.1} %") } else { "not fitted".to_string() } }</td>
                    </tr>
                }
            });
            html! {
                <>
                    <p class="fit-summary" id="fit-summary" lang="en">
                        {format!("Fitted: α {} µs, algbw {} GB/s (largest sizes), {} segment{}; median |error| {:.1} %, max {:.1} % over {} rows.",
                            format::us(prof.alpha_us), format::gbps(prof.algbw_gbps), prof.segments.len(),
                            if prof.segments.len() == 1 { "" } else { "s" },
                            prof.median_rel_err * 100.0, prof.max_rel_err * 100.0,
                            prof.rows.iter().filter(|r| r.used).count())}
                        { imp.assumed_ranks.map(|n| format!(" The log prints no rank count: {n} ranks (the page's) assumed.")).unwrap_or_default() }
                    </p>
                    <div class="fit-actions">
                        <button id="use-profile" class="primary" onclick={Callback::from(move |_: MouseEvent| use_cb.emit(true))}
                            title={t!("li-use-title")}>
                            {t!("li-use")}
                        </button>
                        if p.in_use.is_some() {
                            <button id="drop-profile" onclick={Callback::from(move |_: MouseEvent| back_cb.emit(false))}>{t!("li-back-preset")}</button>
                        }
                    </div>
                    <div class="fit-rows">
                        <table class="ranking fit-table" id="fit-rows">
                            <thead><tr><th class="num">{t!("li-line")}</th><th class="num">{t!("li-size")}</th><th class="num">{t!("li-measured")}</th><th class="num">{t!("li-fitted")}</th><th class="num">{t!("li-error")}</th></tr></thead>
                            <tbody>{ for rows }</tbody>
                        </table>
                    </div>
                    if hidden > 0 {
                        <p class="hint" id="fit-rows-hidden">{format!("{hidden} more rows not shown (cclsim fit prints them all).")}</p>
                    }
                </>
            }
        }
    };
    html! {
        <section class="card log-import" id="log-import" aria-label={t!("li-label")}>
            <div class="card-head">
                <h2>{t!("li-title")}</h2>
                <span class="muted">{"nccl-tests · rccl-tests · hccl_test · OSU"}</span>
            </div>
            if let Some(desc) = &p.in_use {
                <p class="profile-in-use" id="profile-in-use">{t!("li-model-uses")}{" "}<span lang="en">{desc.clone()}</span></p>
                // A profile from a share link has no fit in this card: offer the way back here.
                if !matches!(imp.fit, Some(Ok(_))) {
                    <div class="fit-actions">
                        <button id="drop-profile" onclick={let cb = p.on_use.clone(); Callback::from(move |_: MouseEvent| cb.emit(false))}>{t!("li-back-topology")}</button>
                    </div>
                }
            }
            <textarea id="log-input" class={classes!("log-input", (*dragging).then_some("dragging"))}
                rows="7" spellcheck="false" value={p.text.clone()} oninput={on_input}
                ondragover={on_dragover} ondragleave={on_dragleave} ondrop={on_drop}
                placeholder="#       size         count      type   redop    root     time   algbw   busbw #wrong …\n        8388608       2097152     float     sum      -1    84.29   99.52  174.16      0 …\n(paste here, or drop a .txt / .log file)"
                aria-label={t!("li-text")} />
            {status}
            {list}
            {tables}
            if let Some(r) = rejected {
                <p class="inline-error" role="alert">{t!("li-rejected")}{" "}<span lang="en">{r.to_string()}</span></p>
            }
            {fit}
        </section>
    }
}
