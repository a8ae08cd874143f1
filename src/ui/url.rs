//! The configuration in the address bar: read on load, written with
//! `history.replaceState` on every change, and the share link.

use crate::engine::config::{Config, ConfigError, Severity};
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
    errors.retain(|e| e.key != FAULT_KEY);
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

/// Replaces the address bar's query with `config` (no new history entry).
pub fn store(config: &Config) {
    let Some(w) = web_sys::window() else { return };
    let Ok(history) = w.history() else { return };
    let path = w.location().pathname().unwrap_or_else(|_| "/".into());
    let url = format!("{path}?{}", config.to_query());
    let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
}

/// The absolute link that reproduces `config`.
pub fn share_link(config: &Config) -> String {
    let (origin, path) = web_sys::window()
        .map(|w| {
            let l = w.location();
            (
                l.origin().unwrap_or_default(),
                l.pathname().unwrap_or_else(|_| "/".into()),
            )
        })
        .unwrap_or_default();
    format!("{origin}{path}?{}", config.to_query())
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
        return Err(
            "this browser offers no clipboard here; select the link below and copy it".into(),
        );
    }
    let promise = nav.clipboard().write_text(&text);
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(|e| {
            format!(
                "the browser refused to copy ({}); select the link below and copy it",
                e.as_string().unwrap_or_else(|| "permission denied".into())
            )
        })
}
