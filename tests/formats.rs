//! The log parsers on every real fixture (tests/fixtures/nccl-tests) and
//! on the synthetic hccl_test fixture: real numbers, every quirk.

use ccl_playground::engine::calibrate::{holdout_accuracy, Profile};
use ccl_playground::engine::formats::{parse_log, Collective, Tool};
use proptest::prelude::*;

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/nccl-tests/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn hccl_fixture() -> String {
    let p = format!(
        "{}/tests/fixtures/hccl_test_910b_8_allreduce_synthetic.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn six_tables_with_shell_prompts_and_the_impossible_one_gpu_run() {
    let log = parse_log(&fixture("nccl_2080ti_1node_pcie_nop2p_6runs_19.txt")).unwrap();
    let names: Vec<&str> = log
        .tables
        .iter()
        .map(|t| t.collective.as_ref().unwrap().name())
        .collect();
    assert_eq!(
        names,
        [
            "all_reduce",
            "all_gather",
            "broadcast",
            "reduce",
            "reduce",
            "alltoall"
        ]
    );
    let ranks: Vec<Option<usize>> = log.tables.iter().map(|t| t.ranks).collect();
    assert_eq!(
        ranks,
        [Some(2), Some(2), Some(2), Some(2), Some(1), Some(2)]
    );
    let ar = &log.tables[0];
    assert_eq!(ar.rows.len(), 28);
    assert_eq!(
        (ar.rows[0].bytes, ar.rows[0].count, ar.rows[0].root),
        (8, Some(2), Some(-1))
    );
    assert_eq!(ar.rows[0].out_of_place.time_us, 12.25);
    assert_eq!(ar.rows[0].in_place.as_ref().unwrap().time_us, 12.00);
    assert_eq!(ar.rows[27].bytes, 1073741824);
    assert_eq!(ar.rows[27].out_of_place.time_us, 268588.0);
    assert_eq!(ar.rows[27].out_of_place.busbw_gbps, Some(4.00));
    // all_gather: two `count 0` rows, kept and flagged.
    let ag = &log.tables[1];
    assert!(ag.rows[0].is_empty() && ag.rows[1].is_empty() && !ag.rows[2].is_empty());
    assert_eq!(ag.fittable_rows().len(), 26);
    assert_eq!(log.tables[2].rows[0].root, Some(0));
    // The 1-GPU reduce: rejected, with the reason.
    let bad = log.tables[4].rejected.as_deref().unwrap();
    assert!(
        bad.starts_with("1 rank: a collective on one device moves no data"),
        "{bad}"
    );
    assert!(
        bad.contains("0.19 µs for 1073741824 bytes") && bad.contains("5706839.35 GB/s"),
        "{bad}"
    );
    assert!(log.tables[4].fittable_rows().is_empty());
    assert_eq!(
        log.tables[5].rows[0].in_place.as_ref().unwrap().check,
        "N/A"
    );
    assert_eq!(log.usable().len(), 5);
}

#[test]
fn old_format_with_error_column_and_nccl_info_lines() {
    let log = parse_log(&fixture("nccl_v100_2node_p3dn_efa_allreduce_6.txt")).unwrap();
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(t.collective, Some(Collective::AllReduce));
    assert_eq!(t.ranks, Some(16));
    assert_eq!(t.rows.len(), 21);
    let r = t.rows.iter().find(|r| r.bytes == 262144).unwrap();
    assert_eq!(r.root, None);
    assert_eq!(r.out_of_place.time_us, 488.8);
    assert_eq!(r.out_of_place.check, "5e-07");
    assert_eq!(t.rows[0].out_of_place.check, "2e-07");
}

#[test]
fn five_collectives_in_one_file() {
    let log = parse_log(&fixture("nccl_h100_1node_5colls_16.txt")).unwrap();
    let names: Vec<&str> = log
        .tables
        .iter()
        .map(|t| t.collective.as_ref().unwrap().name())
        .collect();
    assert_eq!(
        names,
        [
            "all_reduce",
            "all_gather",
            "reduce_scatter",
            "alltoall",
            "sendrecv"
        ]
    );
    assert!(log
        .tables
        .iter()
        .all(|t| t.ranks == Some(8) && t.rows.len() == 10 && t.rejected.is_none()));
    let r = &log.tables[0].rows[0];
    assert_eq!((r.bytes, r.dtype.as_deref()), (33554432, Some("double")));
    assert_eq!(r.out_of_place.time_us, 182.87);
    assert_eq!(r.out_of_place.busbw_gbps, Some(321.10));
    assert_eq!(log.tables[4].rows[9].out_of_place.busbw_gbps, Some(367.25));
}

#[test]
fn mpirun_tag_prefixes_and_no_device_list() {
    let log = parse_log(&fixture("nccl_h100_1node_p5_allreduce_7.txt")).unwrap();
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!((t.ranks, t.collective.clone()), (None, None));
    assert_eq!(t.rows.len(), 32);
    assert_eq!(t.rows[0].out_of_place.time_us, 12.90);
    let last = t.rows.last().unwrap();
    assert_eq!(
        (last.bytes, last.out_of_place.time_us),
        (17179869184, 62239.0)
    );
}

#[test]
fn rccl_and_a_count_zero_prologue() {
    let log = parse_log(&fixture("nccl_rccl_mi300x_1node_allreduce_1.txt")).unwrap();
    let t = &log.tables[0];
    assert_eq!(
        (t.ranks, t.collective.clone()),
        (Some(8), Some(Collective::AllReduce))
    );
    let last = t.rows.last().unwrap();
    assert_eq!(
        (last.bytes, last.out_of_place.time_us),
        (8589934592, 47617.0)
    );

    let log = parse_log(&fixture("nccl_a100_2node_dgx_ib_allgather_12.txt")).unwrap();
    let t = &log.tables[0];
    assert_eq!(t.ranks, Some(16));
    assert_eq!(t.rows.len(), 29);
    assert_eq!(t.rows.iter().filter(|r| r.is_empty()).count(), 6);
    assert_eq!(t.rows[6].out_of_place.time_us, 37.29);
}

#[test]
fn hccl_test_synthetic_fixture() {
    let log = parse_log(&hccl_fixture()).unwrap();
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(t.tool, Tool::HcclTest);
    assert_eq!(
        (t.ranks, t.collective.clone()),
        (Some(8), Some(Collective::AllReduce))
    );
    assert_eq!(t.rows.len(), 21);
    assert_eq!(
        (t.rows[0].bytes, t.rows[0].out_of_place.time_us),
        (1024, 28.38)
    );
    assert_eq!(t.rows[0].out_of_place.busbw_gbps, None);
    assert_eq!(t.rows[20].out_of_place.check, "NULL");
    // The fit recovers the synthetic generator's 28 µs and 73.2 GB/s within the wobble.
    let p = Profile::fit_table(t, None, "synthetic").unwrap();
    assert!((p.alpha_us - 28.0).abs() < 1.5, "{}", p.describe());
    assert!((p.algbw_gbps - 73.2).abs() < 2.0, "{}", p.describe());
    assert!(p.median_rel_err < 0.02);
}

#[test]
fn fits_report_every_row_and_hold_out_accuracy() {
    let log = parse_log(&fixture("nccl_h100_1node_p5_allreduce_7.txt")).unwrap();
    let t = &log.tables[0];
    assert!(Profile::fit_table(t, None, "p5").is_err());
    let p = Profile::fit_table(t, Some(8), "p5").unwrap();
    assert_eq!(p.rows.len(), 32);
    assert_eq!(p.rows[0].measured_us, 12.90);
    assert!(p.median_rel_err < 0.05, "{}", p.describe());
    let a = holdout_accuracy(t, Some(8), 64 << 10).unwrap();
    assert_eq!(a.rows, 10);
    assert!(a.median_rel_err < 0.05, "{a:?}");
    // A fitted profile is JSON and comes back equal.
    let json = serde_json::to_string(&p).unwrap();
    let back: Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (back.ranks, back.segments.len(), back.rows.len()),
        (8, p.segments.len(), 32)
    );
    assert!((back.alpha_us - p.alpha_us).abs() <= 1e-12 * p.alpha_us);
    assert!(
        (back.predict_us(1 << 30) - p.predict_us(1 << 30)).abs() <= 1e-9 * p.predict_us(1 << 30)
    );
}

#[test]
fn a_bad_row_rejects_its_table_and_the_others_are_still_read() {
    let text = fixture("nccl_h100_1node_5colls_16.txt").replace("313.66", "3l3.66");
    let log = parse_log(&text).unwrap();
    assert_eq!(log.tables.len(), 5);
    assert_eq!(
        log.tables[0].rejected.as_deref(),
        Some(
            "line 28: out-of-place time is `3l3.66`; expected a time in µs (a number ≥ 0, or N/A)"
        )
    );
    assert!(log.tables[0].fittable_rows().is_empty());
    assert_eq!(log.usable().len(), 4);
    let p = Profile::fit_log(&log, Some(&Collective::AllGather), None, "bad row").unwrap();
    assert_eq!(p.rows.len(), 10);
    let e = Profile::fit_log(&log, Some(&Collective::AllReduce), None, "bad row").unwrap_err();
    assert!(
        e.to_string()
            .contains("line 28: out-of-place time is `3l3.66`"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn parsing_never_panics(s in "\\PC{0,400}", cut in 0usize..6000, junk in "[0-9 .#a-z\\[\\]<>:,\n-]{0,80}") {
        let _ = parse_log(&s);
        let real = fixture("nccl_2080ti_1node_pcie_nop2p_6runs_19.txt");
        let at = real.char_indices().map(|(i, _)| i).find(|&i| i >= cut).unwrap_or(real.len());
        let mixed = format!("{}{}{}", &real[..at], junk, &real[at..]);
        let _ = parse_log(&mixed);
        let _ = parse_log(&format!("data_size aveg_time\n{junk}"));
    }
}
