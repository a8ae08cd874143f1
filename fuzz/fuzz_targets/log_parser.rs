//! The log readers (nccl-tests / rccl-tests text, `-J` JSON and output
//! files, hccl_test, OSU, CSV and markdown tables, JSON records; every
//! launcher prefix), the tuner-file reader and the fit: any bytes give a
//! `Log` or a `FormatError` (a `TunerTable` or a `TunerError`), and every
//! usable table a profile or a `CalibrateError`, also after the caller
//! supplies a rank count and a collective, never a panic. The corpus
//! (corpus/log_parser/) holds one file of each format and variant.
#![no_main]
use ccl_playground::engine::calibrate::Profile;
use ccl_playground::engine::formats::{parse_log, tuner, Collective};
use ccl_playground::engine::plan::holdout::holdout;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_log(&text) {
        Ok(mut log) => {
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
            log.assume(Some(8), Some(&Collective::AllToAll));
            for t in log.usable() {
                let _ = Profile::fit_table(t, None, "fuzz");
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    match tuner::parse(&text) {
        Ok(t) => {
            let _ = t.render();
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
