//! The nccl-tests / rccl-tests / hccl_test log parsers: any text gives a
//! `Log` or a `FormatError`, never a panic.
#![no_main]
use ccl_playground::engine::formats::parse_log;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_log(&text) {
        Ok(log) => {
            for t in log.usable() {
                let _ = t.fittable_rows();
                let _ = t.label();
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
