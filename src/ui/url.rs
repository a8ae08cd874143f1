//! The configuration in the address bar: read on load, written with
//! `history.replaceState` on every change (`pushState` for a lesson stop,
//! so Back and Forward walk the stops), and the share link.
//!
//! Besides the engine's `Config` keys the page has its own keys, kept out
//! of `Config`: `lang` (`en`, `zh`; default: the browser's language),
//! `lesson` (a lesson id, `lessons/*.json`), `stop` (1-based) and the
//! training step's `step*` keys ([`crate::engine::step::link`]).

use crate::engine::config::{Config, ConfigError, Severity};
use crate::engine::step::{self, StepInput};
use crate::i18n::Lang;
use crate::lessons;
use crate::runtime::fault::{Fault, FaultSyntaxError};

/// The test-only URL key that injects a fault into the page's first run
/// (`fault=throw:rank=2:step=1`, see [`Fault::parse`]). Never written to a
/// link: the address bar drops it once the page has read it, and the page
/// shows a "fault injected" banner.
pub const FAULT_KEY: &str = "fault";

/// The page's current query string (with the leading `?`, or empty).
pub fn current_query() -> String {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// Decodes the current query string: the configuration (defaults for bad
/// keys) and one error per bad key.
pub fn load() -> (Config, Vec<ConfigError>) {
    let q = current_query();
    let (config, mut errors) = Config::from_query(&q);
    errors.retain(|e| e.key != FAULT_KEY && !is_ui_key(&e.key));
    if let Some((value, Err(e))) = fault_in(&q) {
        let value = if value.chars().count() > 80 {
            format!("{}…", value.chars().take(80).collect::<String>())
        } else {
            value
        };
        errors.push(ConfigError {
            key: FAULT_KEY.into(),
            value,
            allowed: e.to_string(),
            severity: Severity::Error,
        });
    }
    (config, errors)
}

/// The page's own link keys (not part of the engine's `Config`), besides
/// the step's ([`step::link::KEYS`]).
pub const UI_KEYS: [&str; 3] = ["lang", "lesson", "stop"];

/// Is `key` one of the page's own link keys?
pub fn is_ui_key(key: &str) -> bool {
    UI_KEYS.contains(&key) || step::link::KEYS.contains(&key) || key == step::link::VS_KEY
}

/// The page's own state in a link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UiState {
    /// The language (`lang=`), or the browser's.
    pub lang: Lang,
    /// The open lesson and its stop (1-based), if any.
    pub lesson: Option<(&'static lessons::Lesson, usize)>,
    /// The training step card's inputs, once the user or a link set them.
    pub step: Option<StepInput>,
    /// The pinned step compared beside it: its whole query (`step_vs`).
    pub vs: Option<String>,
}

/// The browser's preferred languages (`navigator.languages`).
fn browser_lang() -> Lang {
    let Some(w) = web_sys::window() else {
        return Lang::En;
    };
    let langs: Vec<String> = w
        .navigator()
        .languages()
        .iter()
        .filter_map(|v| v.as_string())
        .chain(w.navigator().language())
        .collect();
    Lang::from_browser(langs.iter().map(String::as_str))
}

/// Reads the page's own keys from `query`; a bad value is an error that
/// names what was used instead (never a panic).
pub fn load_ui(query: &str) -> (UiState, Vec<ConfigError>) {
    let q = query.strip_prefix('?').unwrap_or(query);
    let pairs: Vec<(String, String)> = form_urlencoded::parse(q.as_bytes()).into_owned().collect();
    let get = |k: &str| {
        pairs
            .iter()
            .rev()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.trim().to_string())
    };
    let mut errors = Vec::new();
    let mut bad = |key: &str, value: &str, allowed: String| {
        errors.push(ConfigError {
            key: key.into(),
            value: value.chars().take(80).collect(),
            allowed,
            severity: Severity::Error,
        })
    };
    let lang = match get("lang") {
        None => browser_lang(),
        Some(v) => match Lang::parse(&v) {
            Some(l) => l,
            None => {
                let used = browser_lang();
                bad(
                    "lang",
                    &v,
                    format!(
                        "{}; {}",
                        crate::t!("ui-lang-bad"),
                        crate::t!("banner-used", used = format!("lang={}", used.code()))
                    ),
                );
                used
            }
        },
    };
    let lesson = match get("lesson") {
        None => None,
        Some(id) => match lessons::find(&id) {
            Some(l) => {
                let stop = match get("stop") {
                    None => 1,
                    Some(v) => match v.parse::<usize>() {
                        Ok(k) if (1..=l.stops.len()).contains(&k) => k,
                        _ => {
                            bad(
                                "stop",
                                &v,
                                format!(
                                    "{}; {}",
                                    crate::t!("ui-stop-bad", max = l.stops.len()),
                                    crate::t!("banner-used", used = "stop=1")
                                ),
                            );
                            1
                        }
                    },
                };
                Some((l, stop))
            }
            None => {
                let ids: Vec<&str> = lessons::all().iter().map(|l| l.id.as_str()).collect();
                bad(
                    "lesson",
                    &id,
                    format!(
                        "{}; {}",
                        crate::t!("ui-lesson-bad", ids = ids.join(", ")),
                        crate::t!("banner-used", used = "no lesson")
                    ),
                );
                None
            }
        },
    };
    let (step, step_errors) = step::link::from_pairs(&pairs);
    for e in step_errors {
        bad(e.key, &e.value, e.allowed);
    }
    // The pinned step is read when the card compares (an error there names
    // the key inside it and leaves the current step as it is).
    let vs = get(step::link::VS_KEY).filter(|v| !v.is_empty());
    (
        UiState {
            lang,
            lesson,
            step,
            vs,
        },
        errors,
    )
}

/// The query of `config` with the page's own keys.
pub fn query_with(config: &Config, ui: &UiState, on_stop: bool) -> String {
    let mut q = config.to_query();
    q.push_str(&format!("&lang={}", ui.lang.code()));
    if let Some((l, k)) = ui.lesson {
        q.push_str(&format!("&lesson={}", l.id));
        if on_stop {
            q.push_str(&format!("&stop={k}"));
        }
    }
    if let Some(s) = &ui.step {
        q.push('&');
        q.push_str(&step::link::to_query(s));
    }
    if let Some(vs) = &ui.vs {
        q.push('&');
        q.push_str(
            &form_urlencoded::Serializer::new(String::new())
                .append_pair(step::link::VS_KEY, vs)
                .finish(),
        );
    }
    q
}

/// Writes `query` to the address bar: a new history entry (`push`) or in
/// place.
pub fn store_query(query: &str, push: bool) {
    let Some(w) = web_sys::window() else { return };
    let Ok(history) = w.history() else { return };
    let path = w.location().pathname().unwrap_or_else(|_| "/".into());
    let url = format!("{path}?{query}");
    let _ = if push {
        history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
    } else {
        history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
    };
}

/// The absolute link of `query`.
pub fn link_of(query: &str) -> String {
    let (origin, path) = web_sys::window()
        .map(|w| {
            let l = w.location();
            (
                l.origin().unwrap_or_default(),
                l.pathname().unwrap_or_else(|_| "/".into()),
            )
        })
        .unwrap_or_default();
    format!("{origin}{path}?{query}")
}

/// The test-only fault of the current link, if it has a valid `fault` key.
pub fn load_fault() -> Option<Fault> {
    fault_in(&current_query()).and_then(|(_, f)| f.ok())
}

/// The first `fault` value of `query` and what it parses to.
fn fault_in(query: &str) -> Option<(String, Result<Fault, FaultSyntaxError>)> {
    let q = query.strip_prefix('?').unwrap_or(query);
    form_urlencoded::parse(q.as_bytes())
        .find(|(k, _)| k == FAULT_KEY)
        .map(|(_, v)| {
            let f = Fault::parse(&v);
            (v.into_owned(), f)
        })
}

/// Copies `text` to the clipboard with `navigator.clipboard.writeText`.
///
/// Errors: a sentence if the clipboard API is missing (insecure context,
/// old browser) or the browser refused.
pub async fn copy_to_clipboard(text: String) -> Result<(), String> {
    let w = web_sys::window().ok_or("no window")?;
    let nav = w.navigator();
    let has = js_sys::Reflect::get(&nav, &"clipboard".into())
        .map(|v| !v.is_undefined() && !v.is_null())
        .unwrap_or(false);
    if !has {
        return Err(crate::t!("clipboard-missing"));
    }
    let promise = nav.clipboard().write_text(&text);
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(|e| {
            crate::t!(
                "clipboard-refused",
                why = e.as_string().unwrap_or_else(|| "permission denied".into())
            )
        })
}
