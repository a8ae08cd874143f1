//! URL decoding: `Config::from_query` on any bytes never panics, every error
//! names a key and a truncated value, and what it decodes re-encodes to a
//! link that decodes to the same configuration without errors.
#![no_main]
use ccl_playground::engine::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let q = String::from_utf8_lossy(data);
    let (c, errors) = Config::from_query(&q);
    for e in &errors {
        assert!(e.value.chars().count() <= 81, "value not truncated: {e:?}");
        let _ = e.to_string();
    }
    let (again, errs) = Config::from_query(&c.to_query());
    assert_eq!(again, c, "round trip of {:?}", c.to_query());
    assert!(errs.is_empty(), "re-encoded link has errors: {errs:?}");
});
