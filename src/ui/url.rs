//! The configuration in the address bar: read on load, written with
//! `history.replaceState` on every change, and the share link.

use crate::engine::config::{Config, ConfigError};

/// The page's current query string (with the leading `?`, or empty).
pub fn current_query() -> String {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// Decodes the current query string: the configuration (defaults for bad
/// keys) and one error per bad key.
pub fn load() -> (Config, Vec<ConfigError>) {
    Config::from_query(&current_query())
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
