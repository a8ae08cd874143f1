//! The page's words: both languages define the same messages with the same
//! attributes, every resource parses with no duplicate ids, every `t!("…")`
//! id named in `src/` exists, and every id the code builds at run time
//! (per algorithm, primitive, phase) exists.

use ccl_playground::engine::algorithm::Algorithm;
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::topology::LinkKind;
use ccl_playground::i18n::{self, Lang};
use fluent_syntax::ast::Entry;
use std::collections::BTreeSet;

/// `msg` and `msg.attr` ids of one language, with the files they come from;
/// panics on a syntax error or a duplicate id.
fn ids(lang: Lang) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (file, text) in i18n::sources(lang) {
        let res = fluent_syntax::parser::parse(*text)
            .unwrap_or_else(|(_, errs)| panic!("locales/{}/{file}: {errs:?}", lang.code()));
        for e in res.body {
            if let Entry::Message(m) = e {
                let id = m.id.name.to_string();
                assert!(
                    out.insert(id.clone()),
                    "locales/{}/{file}: {id} defined twice",
                    lang.code()
                );
                for a in m.attributes {
                    out.insert(format!("{id}.{}", a.id.name));
                }
            }
        }
    }
    out
}

#[test]
fn both_languages_have_the_same_messages() {
    let en = ids(Lang::En);
    let zh = ids(Lang::Zh);
    assert!(en.len() > 100, "{} messages", en.len());
    let only_en: Vec<_> = en.difference(&zh).collect();
    let only_zh: Vec<_> = zh.difference(&en).collect();
    assert!(only_en.is_empty(), "only in English: {only_en:?}");
    assert!(only_zh.is_empty(), "only in Chinese: {only_zh:?}");
}

/// Every `t!("id"` in the Rust sources under `dir`.
fn used_ids(dir: &std::path::Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("src readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            used_ids(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("utf-8 source");
            // `t!("` not preceded by an identifier character (`format!("`).
            let mut from = 0;
            while let Some(i) = text[from..].find("t!(\"") {
                let at = from + i;
                from = at + 4;
                let prev = text[..at].chars().next_back();
                if prev.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if let Some(end) = text[from..].find('"') {
                    out.insert(text[from..from + end].to_string());
                }
            }
        }
    }
}

#[test]
fn every_id_the_code_names_exists() {
    let mut used = BTreeSet::new();
    used_ids(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut used,
    );
    assert!(used.len() > 50, "found only {} t! ids", used.len());
    // The ids the code builds from enums.
    for a in Algorithm::ALL {
        used.insert(format!("why-{}", a.name()));
        used.insert(format!("algo-{}", a.name()));
    }
    for k in LinkKind::ALL {
        used.insert(format!("link-{}-tip", k.title().to_ascii_lowercase()));
    }
    for p in Primitive::ALL {
        used.insert(format!("goal-{}", p.name()));
        used.insert(format!("start-{}", p.name()));
    }
    let en = ids(Lang::En);
    let missing: Vec<_> = used.iter().filter(|id| !en.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "named in code, missing in locales: {missing:?}"
    );
}

#[test]
fn every_message_formats_in_both_languages_without_panicking() {
    for lang in Lang::ALL {
        for id in ids(lang) {
            let s = i18n::tr_in(lang, &id, None);
            assert!(!s.is_empty() || id.ends_with("-empty"), "{id} is empty");
        }
    }
}

#[test]
fn language_tags_parse() {
    assert_eq!(Lang::parse("zh-CN"), Some(Lang::Zh));
    assert_eq!(Lang::parse("zh_Hant_TW"), Some(Lang::Zh));
    assert_eq!(Lang::parse("EN-us"), Some(Lang::En));
    assert_eq!(Lang::parse("fr"), None);
    assert_eq!(Lang::parse(""), None);
    assert_eq!(Lang::from_browser(["fr-FR", "zh-CN", "en"]), Lang::Zh);
    assert_eq!(Lang::from_browser(["de"]), Lang::En);
    assert_eq!(
        i18n::tr_in(Lang::Zh, "no-such-message", None),
        "no-such-message"
    );
}
