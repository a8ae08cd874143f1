//! The page's words in English and Chinese (Project Fluent, `fluent-bundle`).
//!
//! Every visible string lives in `locales/<lang>/*.ftl` (one file per
//! concern, the same files in every language); code names a message by id,
//! `t!("initial-state")`, with named arguments, `t!("step-head", step = 3, total = 14)`.
//! Pure Rust, no web crates: the page (`ui`) sets the language, native tests
//! (`tests/i18n.rs`) check that both languages have the same messages and
//! that every id the code names exists.
//!
//! Chinese terms follow HCCL's Chinese documentation (集合通信, 通信算法,
//! 带宽, 时延, 通信域, 归约, Server内/Server间, 环(Ring)算法, …).
//!
//! A missing message never panics: [`tr`] returns its id.

use fluent_bundle::{FluentArgs, FluentBundle, FluentResource, FluentValue};
use std::cell::{Cell, RefCell};

/// A language of the page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Every language, in the switch's order.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The `lang=` link value and the locale folder: `en`, `zh`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// The HTML `lang` attribute: `en`, `zh-CN`.
    pub fn html_lang(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// The language's own name, for the switch: `English`, `中文`.
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "中文",
        }
    }

    /// A `lang=` value or a browser language tag (`en`, `en-US`, `zh`,
    /// `zh-CN`, `zh-Hans-CN`, any case); `None` for anything else.
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }

    /// The first supported language of the browser's list, else English.
    pub fn from_browser<'a>(tags: impl IntoIterator<Item = &'a str>) -> Lang {
        tags.into_iter().find_map(Lang::parse).unwrap_or_default()
    }
}

/// The resource files of one language, in the order they are added.
pub fn sources(lang: Lang) -> &'static [(&'static str, &'static str)] {
    match lang {
        Lang::En => &[
            ("page.ftl", include_str!("../locales/en/page.ftl")),
            ("narration.ftl", include_str!("../locales/en/narration.ftl")),
            ("lessons.ftl", include_str!("../locales/en/lessons.ftl")),
            ("tuner.ftl", include_str!("../locales/en/tuner.ftl")),
        ],
        Lang::Zh => &[
            ("page.ftl", include_str!("../locales/zh/page.ftl")),
            ("narration.ftl", include_str!("../locales/zh/narration.ftl")),
            ("lessons.ftl", include_str!("../locales/zh/lessons.ftl")),
            ("tuner.ftl", include_str!("../locales/zh/tuner.ftl")),
        ],
    }
}

/// The bundle of `lang`: every resource added; a resource error (a syntax
/// error, a message defined twice) is reported by `tests/i18n.rs`, and the
/// messages that did parse still apply.
fn bundle(lang: Lang) -> FluentBundle<FluentResource> {
    let id: unic_langid::LanguageIdentifier = lang.html_lang().parse().unwrap_or_default();
    let mut b = FluentBundle::new(vec![id]);
    // No Unicode isolation marks around arguments: the page has no
    // right-to-left text, and the marks would end up in copied text.
    b.set_use_isolating(false);
    for (_, text) in sources(lang) {
        let res = FluentResource::try_new(text.to_string()).unwrap_or_else(|(r, _)| r);
        let _ = b.add_resource(res);
    }
    b
}

thread_local! {
    static CURRENT: Cell<Lang> = const { Cell::new(Lang::En) };
    static BUNDLES: RefCell<Vec<(Lang, FluentBundle<FluentResource>)>> = const { RefCell::new(Vec::new()) };
}

/// Sets the language [`tr`] uses on this thread.
pub fn set_lang(lang: Lang) {
    CURRENT.with(|c| c.set(lang));
}

/// The language [`tr`] uses on this thread.
pub fn lang() -> Lang {
    CURRENT.with(|c| c.get())
}

/// Whether message `id` (or `id.attribute`) exists in `lang`.
pub fn has(lang: Lang, id: &str) -> bool {
    with_bundle(lang, |b| {
        let (msg, attr) = split(id);
        b.get_message(msg)
            .is_some_and(|m| attr.map_or(m.value().is_some(), |a| m.get_attribute(a).is_some()))
    })
}

fn split(id: &str) -> (&str, Option<&str>) {
    match id.split_once('.') {
        Some((m, a)) => (m, Some(a)),
        None => (id, None),
    }
}

fn with_bundle<R>(lang: Lang, f: impl FnOnce(&FluentBundle<FluentResource>) -> R) -> R {
    BUNDLES.with(|cell| {
        let mut v = cell.borrow_mut();
        if !v.iter().any(|(l, _)| *l == lang) {
            v.push((lang, bundle(lang)));
        }
        let b = &v.iter().find(|(l, _)| *l == lang).expect("just added").1;
        f(b)
    })
}

/// Message `id` (`msg` or `msg.attribute`) in `lang` with `args`; the id
/// itself if the message is missing (never panics).
pub fn tr_in(lang: Lang, id: &str, args: Option<&FluentArgs>) -> String {
    with_bundle(lang, |b| {
        let (msg, attr) = split(id);
        let Some(m) = b.get_message(msg) else {
            return id.to_string();
        };
        let pattern = match attr {
            Some(a) => m.get_attribute(a).map(|a| a.value()),
            None => m.value(),
        };
        let Some(pattern) = pattern else {
            return id.to_string();
        };
        let mut errors = Vec::new();
        b.format_pattern(pattern, args, &mut errors).into_owned()
    })
}

/// Message `id` in the current language.
pub fn tr(id: &str) -> String {
    tr_in(lang(), id, None)
}

/// Message `id` in the current language with named arguments.
pub fn tr_args(id: &str, args: Vec<(&'static str, FluentValue<'static>)>) -> String {
    let mut a = FluentArgs::new();
    for (k, v) in args {
        a.set(k, v);
    }
    tr_in(lang(), id, Some(&a))
}

/// An argument value: text or a number (numbers select plural forms).
pub fn arg<T: Into<FluentValue<'static>>>(v: T) -> FluentValue<'static> {
    v.into()
}

/// `t!("copy-link")` or `t!("step-of", step = 3, total = 14)`: the message in the current
/// language. Values are anything `Into<FluentValue>` (`String`, `&'static
/// str`, integers, floats). `tests/i18n.rs` finds every `t!` id in
/// the sources and checks it exists in every language.
#[macro_export]
macro_rules! t {
    ($id:literal) => {
        $crate::i18n::tr($id)
    };
    ($id:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::i18n::tr_args($id, vec![$((stringify!($name), $crate::i18n::arg($value))),+])
    };
}
