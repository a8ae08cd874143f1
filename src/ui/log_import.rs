//! Measurements in: paste or drop an nccl-tests / rccl-tests (text or `-J`
//! JSON), hccl_test or OSU micro-benchmarks log ([`parse_log`]); every table
//! is listed, the ones that cannot be used with the reason (the line, the
//! value and what was expected, or why the numbers are impossible); the
//! chosen table is fitted ([`Profile::fit_table`]), its rows shown with
//! their fit error (the first [`MAX_SHOWN_ROWS`]), and the page can switch
//! the model to the fitted profile ([`Profile::apply`]). The pasted text
//! lives in the [`App`](super::app::App), so it is never lost while the
//! page re-plans; it is read and fitted in the planner worker
//! ([`Import`], `Job::Import`), since a log can be megabytes, and the card
//! says so while it is.

use super::chart::Overlay;
use super::format;
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

pub use crate::engine::import::Import;

/// Largest log kept across a reload. Browsers give a site about 5 MB of
/// local storage, as UTF-16 (Chromium and Firefox: 5 MiB of characters
/// counted twice for the key and value), and the page keeps other things.
pub const MAX_KEPT_LOG_BYTES: usize = 2 << 20;

/// The local-storage key of the pasted log.
const KEPT_LOG_KEY: &str = "ccl-playground.log";

/// Keeps `text` for the next visit (an empty text forgets the last one);
/// false when it is above [`MAX_KEPT_LOG_BYTES`] or the browser refuses
/// (private windows, a full store): then nothing is kept.
pub fn keep(text: &str) -> bool {
    let Some(store) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) else {
        return false;
    };
    if text.is_empty() || text.len() > MAX_KEPT_LOG_BYTES {
        // A stale log must not come back instead of this one.
        let forgot = store.remove_item(KEPT_LOG_KEY).is_ok();
        return forgot && text.is_empty();
    }
    store.set_item(KEPT_LOG_KEY, text).is_ok()
}

/// The log kept by [`keep`], or an empty text.
pub fn kept() -> String {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(KEPT_LOG_KEY).ok().flatten())
        .unwrap_or_default()
}

/// The chart overlay of an import: the fitted table's measured busbw per
/// size (printed, or algbw × the collective's factor) and the fitted curve.
pub fn overlay(imp: &Import) -> Option<Overlay> {
    let log = imp.parsed.as_ref()?.as_ref().ok()?;
    let t = log.tables.get(imp.table)?;
    let ranks = t.ranks.or(imp.assumed_ranks).unwrap_or(2);
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
    let fitted = match &imp.fit {
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

/// Largest log the textarea holds whole. Chromium lays a textarea's text
/// out on the main thread: 1.3 s for 5 MB, 230 ms for 1 MB, 16 ms for
/// 64 KB (measured in headless Chromium 156); a longer log is held whole
/// by the page and the box shows its beginning, read-only.
pub const MAX_EDITED_LOG_BYTES: usize = 128 << 10;

/// What the box shows of `text`: all of it, or its first
/// [`MAX_EDITED_LOG_BYTES`] / 2 (cut at a line) and an ellipsis.
fn shown(text: &str) -> String {
    if text.len() <= MAX_EDITED_LOG_BYTES {
        return text.to_string();
    }
    let mut cut = MAX_EDITED_LOG_BYTES / 2;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let head = head.rfind('\n').map_or(head, |i| &head[..i]);
    format!("{head}\n…")
}

/// The log's textarea and what it shows now.
struct SyncedText {
    node: NodeRef,
    showing: Rc<std::cell::RefCell<String>>,
}

/// The textarea shows [`shown`] of `text` without being a controlled
/// input: handing the browser a value it already holds makes it lay the
/// text out again, so the value is written only when the box does not
/// show it already (a kept log after a reload, Clear, a drop, a long
/// paste cut to its beginning).
#[hook]
fn use_synced_text(text: &AttrValue) -> SyncedText {
    let node = use_node_ref();
    let showing = use_mut_ref(String::new);
    {
        let (node, showing) = (node.clone(), showing.clone());
        use_effect_with(text.clone(), move |text| {
            let want = shown(text);
            if *showing.borrow() != want {
                if let Some(el) = node.cast::<web_sys::HtmlTextAreaElement>() {
                    el.set_value(&want);
                }
                *showing.borrow_mut() = want;
            }
        });
    }
    SyncedText { node, showing }
}

/// Props of [`LogImport`].
#[derive(Properties, PartialEq)]
pub struct LogImportProps {
    /// The pasted text.
    pub text: AttrValue,
    /// Its parse and fit.
    pub import: Rc<Import>,
    /// Bytes of a text being read in the planner worker (its parse and fit
    /// not back yet); `None`: `import` is the text's.
    pub reading: Option<usize>,
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
    let input = use_synced_text(&p.text);
    let on_input = {
        let (cb, showing) = (p.on_text.clone(), input.showing.clone());
        Callback::from(move |e: InputEvent| {
            let el = e.target_unchecked_into::<web_sys::HtmlTextAreaElement>();
            let text = el.value();
            // Cut a long paste before the browser lays it out (this
            // handler runs before the next frame's layout).
            let show = shown(&text);
            if show.len() != text.len() {
                el.set_value(&show);
            }
            *showing.borrow_mut() = show;
            cb.emit(text)
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
    let status = match (&imp.parsed, p.reading) {
        (_, Some(bytes)) => html! {
            <p class="hint" id="log-reading" role="status" aria-busy="true">
                {t!("li-reading", size = format_bytes(bytes as u64))}</p>
        },
        (None, None) => {
            html! { <p class="hint" id="log-status">{t!("li-paste")}</p> }
        }
        (Some(Err(e)), None) => html! {
            <p class="inline-error" id="log-error" role="alert">{t!("li-unreadable")}{" "}<span lang="en">{e.to_string()}</span></p>
        },
        (Some(Ok(log)), None) => {
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
                ref={input.node} rows="7" spellcheck="false" oninput={on_input}
                readonly={p.text.len() > MAX_EDITED_LOG_BYTES}
                ondragover={on_dragover} ondragleave={on_dragleave} ondrop={on_drop}
                placeholder="#       size         count      type   redop    root     time   algbw   busbw #wrong …\n        8388608       2097152     float     sum      -1    84.29   99.52  174.16      0 …\n(paste here, or drop a .txt / .log file)"
                aria-label={t!("li-text")} />
            if !p.text.is_empty() {
                <p class="log-keep">
                    <button id="log-clear" onclick={let cb = p.on_text.clone(); Callback::from(move |_: MouseEvent| cb.emit(String::new()))}>{t!("li-clear")}</button>
                    if p.text.len() > MAX_EDITED_LOG_BYTES {
                        <span class="hint" id="log-held">{t!("li-held", size = format_bytes(p.text.len() as u64),
                            shown = format_bytes((MAX_EDITED_LOG_BYTES / 2) as u64))}{" "}</span>
                    }
                    <span class="hint" id="log-kept">{if p.text.len() > MAX_KEPT_LOG_BYTES {
                        t!("li-not-kept", size = format_bytes(MAX_KEPT_LOG_BYTES as u64))
                    } else {
                        t!("li-kept")
                    }}</span>
                </p>
            }
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
