//! The log readers (nccl-tests / rccl-tests text and `-J` JSON, hccl_test,
//! OSU; every launcher prefix) and the fit: any bytes give a `Log` or a
//! `FormatError`, and every usable table a profile or a `CalibrateError`,
//! never a panic. The corpus (corpus/log_parser/) holds one file of each
//! format and variant.
#![no_main]
use ccl_playground::engine::calibrate::Profile;
use ccl_playground::engine::plan::holdout::holdout;
use ccl_playground::engine::formats::parse_log;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_log(&text) {
        Ok(log) => {
            for t in &log.tables {
                let _ = t.label();
                let _ = t.fittable_rows();
            }
            for t in log.usable() {
                if let Ok(p) = Profile::fit_table(t, Some(8), "fuzz") {
                    let _ = p.predict_us(1 << 20);
                    let _ = p.validate();
                }
                let _ = holdout(t, Some(8), None, 0);
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
