//! MSCCL algorithm XML (`engine::formats::msccl::import`, the path the
//! page's MSCCL card and `cclsim msccl` take): any text is either refused
//! with an error naming the element and what is wrong, or imported; an
//! imported schedule verifies or is refused with a typed error, and a
//! verified one exports to XML that imports back to the same schedule.
#![no_main]
use ccl_playground::engine::formats::msccl;
use ccl_playground::engine::verify;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let imported = match msccl::import(&text) {
        Err(e) => {
            assert!(!e.at.is_empty() && !e.what.is_empty(), "{e:?}");
            return;
        }
        Ok(i) => i,
    };
    let s = imported.schedule;
    if verify::verify(&s).is_err() {
        return;
    }
    if let Ok(xml) = msccl::export(&s) {
        let back = msccl::import(&xml).expect("an exported schedule imports");
        assert_eq!(back.schedule, s, "export then import changed the schedule");
    }
});
