//! MSCCL algorithm XML and MSCCL++ execution plans
//! (`engine::formats::msccl::import`, the path the page's MSCCL card and
//! `cclsim msccl` take, which reads a JSON object as a plan): any text is
//! either refused with an error naming the element and what is wrong, or
//! imported; an imported schedule verifies or is refused with a typed
//! error, and a verified one exports to XML that imports back to the same
//! schedule. The plan importer is also run on every input directly, so
//! text that is not JSON reaches its error path too.
#![no_main]
use ccl_playground::engine::formats::msccl;
use ccl_playground::engine::verify;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Err(e) = msccl::mscclpp::import(&text) {
        assert!(!e.at.is_empty() && !e.what.is_empty(), "{e:?}");
    }
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
