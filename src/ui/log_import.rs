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
use crate::engine::calibrate::{FitRow, Profile};
use crate::engine::formats::Table;
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
    /// The browser kept the text for the next visit ([`keep`]).
    pub kept: bool,
    /// The profile the model uses now, described (None: the preset's figures).
    pub in_use: Option<AttrValue>,
    /// New text (typed, pasted, dropped).
    pub on_text: Callback<String>,
    /// Fit another table.
    pub on_table: Callback<usize>,
    /// Use the fitted profile (true) or go back to the preset (false).
    pub on_use: Callback<bool>,
}

/// The "measurements in" card. Its hooks stay here in a fixed order; each
/// part of the card is drawn by its own function below, so the card reads
/// as the layout it is.
#[function_component(LogImport)]
pub fn log_import(p: &LogImportProps) -> Html {
    let dragging = use_state(|| false);
    let input = use_synced_text(&p.text);
    let on_input = on_log_input(p.on_text.clone(), input.showing.clone());
    let on_dragover = on_drag_over(dragging.clone());
    let on_dragleave = {
        let dragging = dragging.clone();
        Callback::from(move |_: DragEvent| dragging.set(false))
    };
    let on_drop = on_log_drop(p.on_text.clone(), dragging.clone());
    let on_table = on_table_change(p.on_table.clone());
    let _lang = super::lang::use_lang();
    let imp = &p.import;
    let status = status_line(imp, p.reading);
    let list = table_list(imp);
    let tables = table_picker(imp, on_table);
    let rejected = match &imp.parsed {
        Some(Ok(log)) => log.tables.get(imp.table).and_then(|t| t.rejected.clone()),
        _ => None,
    };
    let fit = fit_view(imp, p.in_use.is_some(), &p.on_use);
    html! {
        <section class="card log-import" id="log-import" aria-label={t!("li-label")}>
            <div class="card-head">
                <h2>{t!("li-title")}</h2>
                <span class="muted">{"nccl-tests · rccl-tests · hccl_test · OSU"}</span>
            </div>
            {profile_in_use(p.in_use.as_ref(), imp, &p.on_use)}
            <textarea id="log-input" class={classes!("log-input", (*dragging).then_some("dragging"))}
                ref={input.node} rows="7" spellcheck="false" oninput={on_input}
                readonly={p.text.len() > MAX_EDITED_LOG_BYTES}
                ondragover={on_dragover} ondragleave={on_dragleave} ondrop={on_drop}
                placeholder="#       size         count      type   redop    root     time   algbw   busbw #wrong …\n        8388608       2097152     float     sum      -1    84.29   99.52  174.16      0 …\n(paste here, or drop a .txt / .log file)"
                aria-label={t!("li-text")} />
            {keep_line(&p.text, p.kept, &p.on_text)}
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

/// The textarea's input: the page gets the whole text, while the box keeps
/// only [`shown`] of it, cut here because this handler runs before the
/// browser lays a long paste out.
fn on_log_input(
    cb: Callback<String>,
    showing: Rc<std::cell::RefCell<String>>,
) -> Callback<InputEvent> {
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
}

/// A drag over the box: the browser only allows a drop where dragover's
/// default is prevented, and the box is marked so the user sees where to
/// let go.
fn on_drag_over(dragging: UseStateHandle<bool>) -> Callback<DragEvent> {
    Callback::from(move |e: DragEvent| {
        e.prevent_default();
        dragging.set(true);
    })
}

/// A drop on the box: a dropped file is read whole (asynchronously, so a
/// large log does not block the page), else dropped plain text is taken;
/// the browser must not open the file itself, hence the prevented default.
fn on_log_drop(cb: Callback<String>, dragging: UseStateHandle<bool>) -> Callback<DragEvent> {
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
}

/// The table picker's change: the option values are table indexes, so a
/// value that does not parse is ignored rather than fitting a wrong table.
fn on_table_change(cb: Callback<usize>) -> Callback<Event> {
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
}

/// The profile the model uses now, above the box; a profile from a share
/// link has no fit in this card, so the way back to the topology's figures
/// is offered here rather than beside a fit.
fn profile_in_use(in_use: Option<&AttrValue>, imp: &Import, on_use: &Callback<bool>) -> Html {
    let Some(desc) = in_use else {
        return html! {};
    };
    html! {
        <>
            <p class="profile-in-use" id="profile-in-use">{t!("li-model-uses")}{" "}<span lang="en">{desc.clone()}</span></p>
            // A profile from a share link has no fit in this card: offer the way back here.
            if !matches!(imp.fit, Some(Ok(_))) {
                <div class="fit-actions">
                    <button id="drop-profile" onclick={let cb = on_use.clone(); Callback::from(move |_: MouseEvent| cb.emit(false))}>{t!("li-back-topology")}</button>
                </div>
            }
        </>
    }
}

/// Under the box, once there is a text: Clear, whether the box shows only
/// the beginning of a long log, and whether the log survives a reload
/// (local storage is small, so a large log is not kept).
fn keep_line(text: &AttrValue, kept: bool, on_text: &Callback<String>) -> Html {
    if text.is_empty() {
        return html! {};
    }
    html! {
        <p class="log-keep">
            <button id="log-clear" onclick={let cb = on_text.clone(); Callback::from(move |_: MouseEvent| cb.emit(String::new()))}>{t!("li-clear")}</button>
            if text.len() > MAX_EDITED_LOG_BYTES {
                <span class="hint" id="log-held">{t!("li-held", size = format_bytes(text.len() as u64),
                    shown = format_bytes((MAX_EDITED_LOG_BYTES / 2) as u64))}{" "}</span>
            }
            <span class="hint" id="log-kept">{if text.len() > MAX_KEPT_LOG_BYTES {
                t!("li-not-kept", size = format_bytes(MAX_KEPT_LOG_BYTES as u64))
            } else if kept {
                t!("li-kept")
            } else {
                t!("li-not-stored")
            }}</span>
        </p>
    }
}

/// One line on where the text stands: being read in the worker (a long log
/// takes a while, so the card says so), nothing pasted, unreadable, or how
/// many tables were found and how many of them cannot be used.
fn status_line(imp: &Import, reading: Option<usize>) -> Html {
    match (&imp.parsed, reading) {
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
    }
}

/// Every table with what happened to it: the bad ones with their reason,
/// the good ones with the reader's notes. Drawn only when there is
/// something to tell beyond the one table that was fitted.
fn table_list(imp: &Import) -> Html {
    match &imp.parsed {
        Some(Ok(log))
            if log.tables.len() > 1
                || !log.rejected().is_empty()
                || log.tables.iter().any(|t| !t.notes.is_empty()) =>
        {
            html! {
                <ul class="log-tables" id="log-tables">
                    { for log.tables.iter().enumerate().map(|(i, t)| table_item(imp, i, t)) }
                </ul>
            }
        }
        _ => html! {},
    }
}

/// Table `i` of the list: its state (bad, fitted, ok) as a class and a
/// data attribute so it can be styled and tested, its reason or notes.
fn table_item(imp: &Import, i: usize, t: &Table) -> Html {
    let fitted = i == imp.table && matches!(imp.fit, Some(Ok(_)));
    let state = if t.rejected.is_some() {
        "bad"
    } else if fitted {
        "fitted"
    } else {
        "ok"
    };
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
}

/// The choice of table to fit, only when the log has more than one.
fn table_picker(imp: &Import, on_table: Callback<Event>) -> Html {
    match &imp.parsed {
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
    }
}

/// The fit of the chosen table: nothing yet, why it failed, or the fitted
/// profile.
fn fit_view(imp: &Import, in_use: bool, on_use: &Callback<bool>) -> Html {
    match &imp.fit {
        None => html! {},
        Some(Err(e)) => {
            html! { <p class="inline-error" id="fit-error" role="alert">{t!("li-no-fit")}{" "}<span lang="en">{e.to_string()}</span></p> }
        }
        Some(Ok(prof)) => fitted_profile(prof, imp.assumed_ranks, in_use, on_use),
    }
}

/// A fitted profile: its figures in one sentence, the buttons to use it
/// (or go back to the preset), and its rows with their fit error, only the
/// first [`MAX_SHOWN_ROWS`] since a log may have far more rows than a page
/// can draw.
fn fitted_profile(
    prof: &Profile,
    assumed_ranks: Option<usize>,
    in_use: bool,
    on_use: &Callback<bool>,
) -> Html {
    let use_cb = on_use.clone();
    let back_cb = on_use.clone();
    let hidden = prof.rows.len().saturating_sub(MAX_SHOWN_ROWS);
    let rows = prof.rows.iter().take(MAX_SHOWN_ROWS).map(fit_row);
    html! {
        <>
            <p class="fit-summary" id="fit-summary" lang="en">
                {format!("Fitted: α {} µs, algbw {} GB/s (largest sizes), {} segment{}; median |error| {:.1} %, max {:.1} % over {} rows.",
                    format::us(prof.alpha_us), format::gbps(prof.algbw_gbps), prof.segments.len(),
                    if prof.segments.len() == 1 { "" } else { "s" },
                    prof.median_rel_err * 100.0, prof.max_rel_err * 100.0,
                    prof.rows.iter().filter(|r| r.used).count())}
                { assumed_ranks.map(|n| format!(" The log prints no rank count: {n} ranks (the page's) assumed.")).unwrap_or_default() }
            </p>
            <div class="fit-actions">
                <button id="use-profile" class="primary" onclick={Callback::from(move |_: MouseEvent| use_cb.emit(true))}
                    title={t!("li-use-title")}>
                    {t!("li-use")}
                </button>
                if in_use {
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

/// One fitted row: its error coloured by size (over 5 % a warning, over
/// 10 % bad) so a poor fit stands out; a row the fit left out is muted and
/// says so instead of an error.
fn fit_row(r: &FitRow) -> Html {
    let err = r.rel_err * 100.0;
    let class = classes!(
        "num",
        if !r.used {
            "muted"
        } else if err.abs() > 10.0 {
            "bad"
        } else if err.abs() > 5.0 {
            "warn"
        } else {
            "ok"
        }
    );
    html! {
        <tr class={classes!((!r.used).then_some("unused"))}>
            <td class="num">{r.line}</td>
            <td class="num">{format_bytes(r.bytes)}</td>
            <td class="num">{format::us(r.measured_us)}</td>
            <td class="num">{format::us(r.fitted_us)}</td>
            <td class={class}>{ if r.used { format!("{err:+.1} %") } else { "not fitted".to_string() } }</td>
        </tr>
    }
}
