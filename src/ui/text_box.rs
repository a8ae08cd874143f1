//! The glue every card with a text box and a file picker shares (MSCCL
//! import, tuner file, custom topology): the box's text kept in state, and
//! the file a picker chose.

use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Keeps a text box's contents in `text`, so a button reads what the user
/// typed.
pub fn text_into(text: UseStateHandle<String>) -> Callback<InputEvent> {
    Callback::from(move |e: InputEvent| {
        text.set(
            e.target_unchecked_into::<web_sys::HtmlTextAreaElement>()
                .value(),
        )
    })
}

/// The file a file input's change chose. The input is cleared, so that
/// choosing the same file again fires another change.
pub fn chosen_file(e: &Event) -> Option<web_sys::File> {
    let input = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())?;
    let file = input.files().and_then(|f| f.get(0))?;
    input.set_value("");
    Some(file)
}
