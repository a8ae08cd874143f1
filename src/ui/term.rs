//! A term of the field explained where it appears: hovering it, or
//! focusing it from the keyboard (it is in the tab order), shows its
//! explanation in a tooltip, and a screen reader reads the explanation
//! after the term. One look for every term, so a reader learns it once.

use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Props of [`Term`].
#[derive(Properties, PartialEq)]
pub struct TermProps {
    /// What is shown.
    pub children: Html,
    /// The explanation, in the page's language.
    pub tip: AttrValue,
}

/// The tooltip's widest, CSS px, and as a share of the window
/// (`.term::after`'s `max-width: min(320px, 80vw)`).
const TIP_MAX_PX: f64 = 320.0;
const TIP_MAX_SHARE: f64 = 0.8;

/// `children`, explained by `tip` on hover and on focus. The tooltip
/// opens rightwards, or leftwards from the term's right edge where the
/// window has no room for it on the right.
#[function_component]
pub fn Term(p: &TermProps) -> Html {
    let leftwards = use_state(|| false);
    let place = {
        let leftwards = leftwards.clone();
        move |target: Option<web_sys::EventTarget>| {
            let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else {
                return;
            };
            let width = web_sys::window()
                .and_then(|w| w.inner_width().ok())
                .and_then(|v| v.as_f64())
                .unwrap_or(f64::MAX);
            let rect = el.get_bounding_client_rect();
            let tip = TIP_MAX_PX.min(TIP_MAX_SHARE * width);
            leftwards.set(rect.left() + tip > width && rect.right() >= tip);
        }
    };
    let on_focus = {
        let place = place.clone();
        Callback::from(move |e: FocusEvent| place(e.target()))
    };
    let on_enter = Callback::from(move |e: MouseEvent| place(e.target()));
    html! {
        <span class={classes!("term", (*leftwards).then_some("tip-left"))} tabindex="0" data-tip={p.tip.clone()}
            onfocus={on_focus} onmouseenter={on_enter}>
            {p.children.clone()}
            <span class="sr-only">{": "}{p.tip.clone()}</span>
        </span>
    }
}
