//! The page's language as a yew context: [`App`](super::app::App) provides
//! it and sets [`crate::i18n`]'s current language before rendering; a
//! component that shows words calls [`use_lang`], so a language switch
//! re-renders it even when its other props are unchanged.

use crate::i18n::Lang;
use yew::prelude::*;

/// Subscribes the calling component to the page's language.
#[hook]
pub fn use_lang() -> Lang {
    use_context::<Lang>().unwrap_or_default()
}
