//! The "Tuner file" card: paste, drop or load a tuner file someone
//! already has (NCCL's example tuner config or the performance CSV its
//! optimizer reads, HCCL's tuner-plugin rules) and see what it makes the
//! library run at each size of the chart, for the page's collective,
//! ranks, machine and element type, beside the model's recommendation
//! ([`tune::compare_tuner`], what `cclsim tuner --op --topo` prints).
//!
//! The file's side is cheap (matching its rules) and is shown at once;
//! the model's side is a sweep of headline plans (seconds at thousands of
//! ranks), made in the planner worker ([`Job::Tuner`]). The text stays in
//! the card while the page re-plans, and a file that cannot be read
//! leaves it in place with the reader's words. Self-contained; the app
//! passes only the current plan.

use super::planned::use_planned;
use crate::engine::config::Config;
use crate::engine::formats::tuner::{Bounds, Rule, Source, TunerError};
use crate::engine::plan::{chart_sizes, sweep_key, Plan};
use crate::engine::topology::Library;
use crate::engine::tune::{self, Apart, CompareError, TunerComparison, TunerQuery, TunerRow};
use crate::engine::units::format_bytes;
use crate::runtime::planner::{Answer, Job};
use crate::t;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Props of [`TunerCard`].
#[derive(Properties, PartialEq)]
pub struct TunerCardProps {
    /// The page's current plan (its configuration is what the file is
    /// asked about).
    pub plan: Option<Rc<Plan>>,
}

/// A library's name as the page says it.
fn library(l: Library) -> String {
    match l {
        Library::Model => t!("tn-lib-model"),
        l => l.title().to_string(),
    }
}

/// A file kind's name as the page says it.
fn source(s: Source) -> String {
    match s {
        Source::NcclConfig => t!("tn-source-nccl-config"),
        Source::NcclPerformance => t!("tn-source-nccl-perf"),
        Source::HcclRules => t!("tn-source-hccl"),
    }
}

/// A count's bounds: `8`, `8–16`, `≥ 8`, `≤ 16`, or "any"; `u32::MAX`
/// (HCCL's 4294967295, "every count" in practice) as open.
fn bounds(b: &Bounds) -> String {
    let max = b.max.filter(|m| *m < u32::MAX as u64);
    let min = b.min.filter(|m| *m > 0);
    match (min, max) {
        (None, None) => t!("tn-any"),
        (Some(a), Some(z)) if a == z => a.to_string(),
        (Some(a), Some(z)) => format!("{a}–{z}"),
        (Some(a), None) => format!("≥ {a}"),
        (None, Some(z)) => format!("≤ {z}"),
    }
}

/// `name/with/slashes` with a line-break chance after each slash, for a
/// narrow column.
fn breakable(name: &str) -> Html {
    let parts: Vec<&str> = name.split('/').collect();
    let last = parts.len().saturating_sub(1);
    html! {
        <>{ for parts.iter().enumerate().map(|(i, p)| html! {
            <>{*p}if i < last {{"/"}<wbr />}</>
        }) }</>
    }
}

/// The tooltip of a rule: where it applies and what else it sets.
fn rule_title(r: &Rule, hccl: bool) -> String {
    let bytes = format!(
        "{}–{}",
        r.bytes.min.unwrap_or(0),
        r.bytes.max.map_or("∞".to_string(), |m| m.to_string())
    );
    let (ranks, nodes) = (bounds(&r.ranks), bounds(&r.nodes));
    let line = r.line;
    let mut t = if hccl {
        t!(
            "tn-rule-title-hccl",
            line = line,
            bytes = bytes,
            ranks = ranks,
            nodes = nodes
        )
    } else {
        t!(
            "tn-rule-title",
            line = line,
            bytes = bytes,
            ranks = ranks,
            nodes = nodes
        )
    };
    if let Some(d) = &r.dtype {
        t.push_str(&format!(", {d}"));
    }
    if let Some(c) = r.channels {
        t.push_str(&format!(", {}", t!("tn-channels", n = c)));
    }
    for c in &r.conditions {
        t.push_str(&format!(", {c}"));
    }
    t
}

/// Selects line `line` (1-based) of the text box holding `text` and
/// scrolls it into the box's view, without taking the focus: the line
/// an error names is the one in sight.
fn show_line(text: &str, line: usize) {
    let Some(ta) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("tuner-input"))
        .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
    else {
        return;
    };
    // Selection offsets count UTF-16 code units.
    let mut start = 0u32;
    let mut len = 0u32;
    for (i, l) in text.split('\n').enumerate() {
        let n = l.encode_utf16().count() as u32;
        if i + 1 == line {
            len = n;
            break;
        }
        start += n + 1;
    }
    let _ = ta.set_selection_range(start, start + len);
    let lines = text.split('\n').count().max(1) as i32;
    let per = ta.scroll_height() / lines;
    ta.set_scroll_top((per * (line as i32 - 1) - ta.client_height() / 3).max(0));
}

/// What the model's column holds now.
enum ModelSide {
    /// The worker's comparison is the one shown.
    Ready,
    /// Being made in the worker.
    Pending,
    /// The model could not recommend (the engine's words).
    Failed(String),
}

/// One run of sizes as a table row.
fn run_row(t: &TunerComparison, first: usize, last: usize, model: &ModelSide) -> Html {
    let r: &TunerRow = &t.rows[first];
    let to = t.rows[last].bytes;
    let lib = tune::tuner_library(t.table.source);
    let compared = t.apart.is_none();
    let size = if first == last {
        format_bytes(r.bytes)
    } else {
        format!("{} – {}", format_bytes(r.bytes), format_bytes(to))
    };
    let hccl = t.table.source == Source::HcclRules;
    let (file, file_title) = match &r.rule {
        Some(rule) => (
            html! {
                <>
                    <code class="tn-choice">{breakable(&rule.choice)}</code>
                    <span class="tn-line">{t!("tn-line", line = rule.line)}</span>
                </>
            },
            rule_title(rule, hccl),
        ),
        None => (
            html! { <span class="tn-none">{t!("tn-no-rule", library = library(lib))}</span> },
            String::new(),
        ),
    };
    // A verdict only where the file decides and both name the same kind
    // of thing; where no rule matches the library's own choice runs, which
    // is what the model predicts.
    let verdict = match (compared && r.rule.is_some(), r.same) {
        (true, Some(true)) => Some(true),
        (true, Some(false)) => Some(false),
        _ => None,
    };
    // Our algorithm's words where the model's choice is ours, not one
    // NCCL's tuner names.
    let model_title = r
        .model
        .as_ref()
        .filter(|c| r.model_name.as_deref() == Some(c.algorithm.name()))
        .map(|c| crate::i18n::tr(&format!("algo-{}", c.algorithm.name())))
        .unwrap_or_default();
    let model_cell = match (model, &r.model_name) {
        (ModelSide::Ready, Some(name)) => html! {
            <>
                <code class="tn-choice">{breakable(name)}</code>
                { match verdict {
                    Some(true) => html! { <span class="tn-mark same" title={t!("tn-same")}>{"="}<span class="sr-only">{t!("tn-same")}</span></span> },
                    Some(false) => html! { <span class="tn-mark differs" title={t!("tn-differs")}>{"≠"}<span class="sr-only">{t!("tn-differs")}</span></span> },
                    None => html! {},
                } }
            </>
        },
        (ModelSide::Pending, _) => html! { <span class="tn-none">{"…"}</span> },
        _ => html! { <span class="tn-none">{"—"}</span> },
    };
    let state = match verdict {
        Some(true) => "same",
        Some(false) => "differs",
        None if r.rule.is_none() => "none",
        None => "apart",
    };
    html! {
        <tr class={classes!("tn-row", state)} key={first}
            data-from={r.bytes.to_string()} data-to={to.to_string()}
            data-file={r.rule.as_ref().map(|x| x.choice.clone()).unwrap_or_default()}
            data-line={r.rule.as_ref().map(|x| x.line.to_string()).unwrap_or_default()}
            data-model={r.model_name.clone().unwrap_or_default()}
            data-state={state}>
            <td class="tn-size">{size}</td>
            <td class="tn-file" title={file_title}>{file}</td>
            <td class="tn-model" title={model_title}>{model_cell}</td>
        </tr>
    }
}

/// The comparison: who runs what, the table, why not compared, the notes.
fn comparison_view(t: &TunerComparison, model: &ModelSide) -> Html {
    let lib = tune::tuner_library(t.table.source);
    let hccl = lib == Library::Hccl;
    let at = match (hccl, t.nodes) {
        (true, Some(n)) => t!("tn-servers", n = n),
        (false, Some(n)) => t!("tn-nodes", n = n),
        (_, None) => t!("tn-nodes-unknown"),
    };
    let matched = t.rows.iter().filter(|r| r.rule.is_some()).count();
    let differs = t
        .rows
        .iter()
        .filter(|r| t.apart.is_none() && r.rule.is_some() && r.same == Some(false))
        .count();
    let apart = match (&t.apart, model) {
        (Some(Apart::HcclNames), ModelSide::Ready) => {
            html! { <p class="hint tn-apart" id="tuner-apart">{t!("tn-apart-hccl")}</p> }
        }
        (Some(Apart::OtherLibrary { file, machine }), ModelSide::Ready) => html! {
            <p class="note tn-apart" id="tuner-apart">{t!(
                "tn-apart-library",
                file = library(*file),
                machine = library(*machine),
                topo = t.machine.as_ref().map(|m| m.0.clone()).unwrap_or_default()
            )}</p>
        },
        _ => html! {},
    };
    let case = match (matched, differs) {
        (1, 0) => "one-same",
        (1, _) => "one-differs",
        (_, 0) => "same",
        (m, d) if m == d => "all",
        _ => "some",
    };
    let summary = match model {
        ModelSide::Ready if t.apart.is_none() && matched > 0 => html! {
            <p class={classes!("tn-summary", (differs > 0).then_some("differs"))} id="tuner-summary">
                {t!("tn-summary", case = case, differs = differs, matched = matched, sizes = t.rows.len())}
            </p>
        },
        _ => html! {},
    };
    let none_match = if matched == 0 {
        html! {
            <div class="tn-scopes" id="tuner-none">
                <p class="note">{t!(
                    "tn-none-match",
                    op = t.op.title(),
                    ranks = t.ranks,
                    at = at.clone(),
                    library = library(lib)
                )}</p>
                <ul>
                    { for t.scopes().iter().map(|(op, ranks, nodes)| {
                        let (op, ranks, nodes) = (op.title(), bounds(ranks), bounds(nodes));
                        html! { <li>{ if hccl {
                            t!("tn-scope-hccl", op = op, ranks = ranks, nodes = nodes)
                        } else {
                            t!("tn-scope", op = op, ranks = ranks, nodes = nodes)
                        } }</li> }
                    }) }
                </ul>
            </div>
        }
    } else {
        html! {}
    };
    let model_note = match model {
        ModelSide::Pending => {
            html! { <p class="hint" id="tuner-pending" role="status">{t!("tn-pending")}</p> }
        }
        ModelSide::Failed(e) => html! {
            <p class="hint" id="tuner-model-error">{t!("tn-model-failed")}{" "}<span lang="en">{e.clone()}</span></p>
        },
        ModelSide::Ready => html! {},
    };
    let runs = t.runs();
    html! {
        <div class="tn-result">
            <p class="tn-kind" id="tuner-kind" data-source={format!("{:?}", t.table.source)}>
                <strong>{source(t.table.source)}</strong>{" · "}{t!("tn-rules", n = t.table.rules.len())}
            </p>
            <p class="tn-for" id="tuner-for">{t!(
                "tn-for",
                library = library(lib),
                op = t.op.title(),
                ranks = t.ranks,
                at = at,
                dtype = t.dtype.clone()
            )}</p>
            {apart}
            {none_match}
            <div class="tn-rows">
                <table class="ranking tn-table" id="tuner-rows" aria-describedby="tuner-for">
                    <thead><tr>
                        <th>{t!("tn-col-size")}</th>
                        <th>{t!("tn-col-file", library = library(lib))}</th>
                        <th>{t!("tn-col-model")}</th>
                    </tr></thead>
                    <tbody>{ for runs.iter().map(|run| run_row(t, run.first, run.last, model)) }</tbody>
                </table>
            </div>
            {summary}
            {model_note}
            if !t.table.notes.is_empty() {
                <details class="tn-notes" id="tuner-notes">
                    <summary>{t!("tn-notes", n = t.table.notes.len())}</summary>
                    <ul lang="en">{ for t.table.notes.iter().map(|n| html! { <li>{n.clone()}</li> }) }</ul>
                </details>
            }
        </div>
    }
}

/// The tuner-file card.
///
/// Only the hooks and the page layout live here; what the worker is asked,
/// each callback and the body under the buttons are built by their own
/// functions so each can be read alone.
#[function_component(TunerCard)]
pub fn tuner_card(p: &TunerCardProps) -> Html {
    let _lang = super::lang::use_lang();
    let text = use_state(String::new);
    // The text last read (button, file, drop); `None` before the first.
    let read = use_state(|| None::<Rc<String>>);
    let dragging = use_state(|| false);
    // What the file is asked about: the configuration but its size and
    // algorithm (the comparison sweeps the chart's sizes with auto).
    let config = p.plan.as_ref().map(|plan| sweep_key(&plan.config));
    // The file's side, at once: its rules matched on the page's machine.
    let file_side = {
        let plan = p.plan.clone();
        use_memo(((*read).clone(), config.clone()), move |(read, _)| {
            file_side_of(read.as_deref(), plan.as_deref())
        })
    };
    // The model's side, in the planner worker, once the file reads.
    let readable = matches!(&*file_side, Some(Ok(_)));
    let key = ((*read).clone(), config.clone());
    let ask = model_job(read.as_deref(), config.as_ref(), readable);
    let answer = use_planned(key, ask);
    // A file that cannot be read: its line in sight.
    let error_line = error_line((*file_side).as_ref());
    use_effect_with(((*read).clone(), error_line), |(read, line)| {
        if let (Some(text), Some(line)) = (read, line) {
            show_line(text, *line);
        }
    });

    let commit = committer(read.clone());
    let on_input = super::text_box::text_into(text.clone());
    let on_read = {
        let (text, commit) = (text.clone(), commit.clone());
        Callback::from(move |_: MouseEvent| commit((*text).clone()))
    };
    let take_file = file_taker(text.clone(), commit.clone());
    let on_file = file_callback(take_file.clone());
    let (on_dragover, on_dragleave) = drag_callbacks(dragging.clone());
    let on_drop = drop_callback(dragging.clone(), text.clone(), commit, take_file);

    let (state, body) = status_view((*file_side).as_ref(), read.is_some(), answer.as_deref());
    html! {
        <section class="card tuner" id="tuner" aria-label={t!("tn-label")} data-state={state}>
            <div class="card-head">
                <h2>{t!("tn-title")}</h2>
                <span class="muted">{t!("tn-formats")}</span>
            </div>
            <textarea id="tuner-input" class={classes!("log-input", "tn-input", (*dragging).then_some("dragging"))}
                rows="6" spellcheck="false" value={(*text).clone()} oninput={on_input}
                ondragover={on_dragover} ondragleave={on_dragleave} ondrop={on_drop}
                placeholder={t!("tn-placeholder")} aria-label={t!("tn-text")} />
            <div class="fit-actions">
                <button id="tuner-read" class="primary" onclick={on_read} title={t!("tn-read-title")}>{t!("tn-read")}</button>
                <input id="tuner-file" class="sr-only" type="file" accept=".conf,.csv,.json,.txt,text/csv,application/json,text/plain" onchange={on_file} />
                <label class="secondary-button" for="tuner-file" title={t!("tn-load-title")}>{t!("tn-load")}</label>
            </div>
            {body}
        </section>
    }
}

/// The file's side of the comparison: its rules matched on the page's
/// machine. Cheap, so it is made at once rather than in the worker; `None`
/// until there is both a text and a plan to ask about.
fn file_side_of(
    read: Option<&String>,
    plan: Option<&Plan>,
) -> Option<Result<TunerComparison, CompareError>> {
    let (Some(text), Some(plan)) = (read, plan) else {
        return None;
    };
    let q = TunerQuery::file_only(&plan.config, &plan.topology);
    Some(tune::compare_tuner(text, &q, &chart_sizes()))
}

/// The planner-worker job for the model's side. Only asked once the file
/// reads: an unreadable file has nothing to compare against.
fn model_job(
    read: Option<&String>,
    config: Option<&Config>,
    readable: bool,
) -> Option<(Config, Job)> {
    match (read, config) {
        (Some(text), Some(c)) if readable => Some((
            c.clone(),
            Job::Tuner {
                text: text.to_string(),
                sizes: chart_sizes(),
            },
        )),
        _ => None,
    }
}

/// The line a file that cannot be read names, if the reader named one, so
/// the text box can bring it into sight.
fn error_line(file_side: Option<&Result<TunerComparison, CompareError>>) -> Option<usize> {
    match file_side {
        Some(Err(CompareError::File(TunerError::Line { line, .. })))
        | Some(Err(CompareError::File(TunerError::Json { line, .. }))) => Some(*line),
        _ => None,
    }
}

/// Makes a text the one compared. The button, the file picker and a drop
/// all end here, so they read a text the same way.
fn committer(read: UseStateHandle<Option<Rc<String>>>) -> impl Fn(String) + Clone + 'static {
    move |s: String| read.set(Some(Rc::new(s)))
}

/// A file's text replaces the box's and is read at once; shared by the
/// file picker and a dropped file.
fn file_taker(
    text: UseStateHandle<String>,
    commit: impl Fn(String) + Clone + 'static,
) -> impl Fn(web_sys::File) + Clone + 'static {
    move |file: web_sys::File| {
        let (text, commit) = (text.clone(), commit.clone());
        let promise = file.text();
        wasm_bindgen_futures::spawn_local(async move {
            if let Ok(v) = wasm_bindgen_futures::JsFuture::from(promise).await {
                let s = v.as_string().unwrap_or_default();
                text.set(s.clone());
                commit(s);
            }
        });
    }
}

/// Takes the chosen file.
fn file_callback(take_file: impl Fn(web_sys::File) + 'static) -> Callback<Event> {
    Callback::from(move |e: Event| {
        if let Some(file) = super::text_box::chosen_file(&e) {
            take_file(file);
        }
    })
}

/// Drag-over and drag-leave: mark the box while something is held over
/// it; drag-over must be cancelled for the browser to allow a drop.
fn drag_callbacks(dragging: UseStateHandle<bool>) -> (Callback<DragEvent>, Callback<DragEvent>) {
    let on_dragover = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(true);
        })
    };
    let on_dragleave = Callback::from(move |_: DragEvent| dragging.set(false));
    (on_dragover, on_dragleave)
}

/// A drop: a dropped file is taken like a chosen one, dropped text is put
/// in the box and read at once.
fn drop_callback(
    dragging: UseStateHandle<bool>,
    text: UseStateHandle<String>,
    commit: impl Fn(String) + 'static,
    take_file: impl Fn(web_sys::File) + 'static,
) -> Callback<DragEvent> {
    Callback::from(move |e: DragEvent| {
        e.prevent_default();
        dragging.set(false);
        let Some(dt) = e.data_transfer() else { return };
        if let Some(file) = dt.files().and_then(|f| f.get(0)) {
            take_file(file);
        } else if let Ok(s) = dt.get_data("text/plain") {
            if !s.is_empty() {
                text.set(s.clone());
                commit(s);
            }
        }
    })
}

/// The card's `data-state` and the body under the buttons: a hint before a
/// text is read or while there is no plan, the reader's error, or the
/// comparison with as much of the model's side as the worker has answered.
fn status_view(
    file_side: Option<&Result<TunerComparison, CompareError>>,
    has_read: bool,
    answer: Option<&Result<Answer, String>>,
) -> (&'static str, Html) {
    match file_side {
        None if !has_read => (
            "idle",
            html! { <p class="hint" id="tuner-status">{t!("tn-paste")}</p> },
        ),
        None => (
            "idle",
            html! { <p class="hint" id="tuner-status">{t!("tn-no-plan")}</p> },
        ),
        Some(Err(e)) => (
            "error",
            html! {
                <p class="inline-error" id="tuner-error" role="alert">
                    { match e {
                        CompareError::File(_) => t!("tn-unreadable"),
                        _ => t!("tn-not-compared"),
                    } }
                    {" "}<span lang="en">{e.to_string()}</span>
                </p>
            },
        ),
        Some(Ok(file_only)) => comparison_state(file_only, answer),
    }
}

/// The comparison to show and its state: the worker's when it has
/// answered, else the file's side alone with the model's column pending or
/// failed.
fn comparison_state(
    file_only: &TunerComparison,
    answer: Option<&Result<Answer, String>>,
) -> (&'static str, Html) {
    let (shown, model) = match answer {
        Some(Ok(Answer::Tuner(t))) => (&**t, ModelSide::Ready),
        Some(Ok(_)) => (file_only, ModelSide::Pending),
        Some(Err(e)) => (file_only, ModelSide::Failed(e.clone())),
        None => (file_only, ModelSide::Pending),
    };
    let state = match model {
        ModelSide::Ready => "ready",
        ModelSide::Pending => "pending",
        ModelSide::Failed(_) => "file-only",
    };
    (state, comparison_view(shown, &model))
}
