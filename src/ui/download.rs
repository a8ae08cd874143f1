//! Saving text the page made as a file (the browser's download): an MSCCL
//! XML export, a Perfetto trace.

use wasm_bindgen::JsCast;

/// Offers `text` as a file named `name` of MIME type `mime` for download.
///
/// Errors: a sentence saying which browser object could not be made.
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), String> {
    let win = web_sys::window().ok_or("no window")?;
    let doc = win.document().ok_or("no document")?;
    let parts = js_sys::Array::of1(&text.into());
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)
        .map_err(|_| "cannot make the file")?;
    let url =
        web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| "cannot link the file")?;
    let a = doc.create_element("a").map_err(|_| "no link element")?;
    let _ = a.set_attribute("href", &url);
    let _ = a.set_attribute("download", name);
    if let Ok(a) = a.dyn_into::<web_sys::HtmlElement>() {
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}
