//! The log parsers on every real fixture (tests/fixtures/nccl-tests), on
//! the log variants (tests/fixtures/logs: real logs 01-03, samples 04-11
//! made from the tools' print code) and on the synthetic hccl_test
//! fixture: exact parsed numbers, every quirk.

use ccl_playground::engine::calibrate::{CalibrateError, Profile};
use ccl_playground::engine::formats::{
    parse_log, Collective, FormatError, Halves, Log, Row, Table, Tool,
};
use ccl_playground::engine::plan::holdout::holdout;
use proptest::prelude::*;

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/nccl-tests/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn logs(name: &str) -> String {
    let p = format!("{}/tests/fixtures/logs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A file of tests/fixtures/readers (real files users already have).
fn readers(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/readers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn read(name: &str) -> Log {
    parse_log(&logs(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn names(log: &Log) -> Vec<&str> {
    log.tables
        .iter()
        .map(|t| t.collective.as_ref().map_or("?", |c| c.name()))
        .collect()
}

/// `(bytes, out-of-place µs, in-place µs)` of a row.
fn times(r: &Row) -> (u64, f64, Option<f64>) {
    (
        r.bytes,
        r.out_of_place.time_us,
        r.in_place.as_ref().map(|m| m.time_us),
    )
}

/// A table's measurements without line numbers (to compare extracts).
fn values(t: &Table) -> Vec<Row> {
    t.rows
        .iter()
        .map(|r| Row {
            line: 0,
            ..r.clone()
        })
        .collect()
}

/// The same fit: segments and every row's fitted time.
fn same_fit(a: &Table, b: &Table) {
    let (p, q) = (
        Profile::fit_table(a, None, "x").unwrap(),
        Profile::fit_table(b, None, "x").unwrap(),
    );
    assert_eq!(p.segments, q.segments);
    let f = |p: &Profile| {
        p.rows
            .iter()
            .map(|r| (r.bytes, r.fitted_us))
            .collect::<Vec<_>>()
    };
    assert_eq!(f(&p), f(&q));
    assert_eq!((p.ranks, &p.collective), (q.ranks, &q.collective));
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
    // The user's path: fit the even sizes, predict the odd ones with auto
    // (the log does not name its collective: `cclsim fit --op all_reduce`).
    let a = holdout(t, Some(8), Some(&Collective::AllReduce), 64 << 10).unwrap();
    assert_eq!(a.rows.len(), 10);
    assert!(a.median() < 0.05, "{a:?}");
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
    fn no_variant_panics_when_cut_or_mixed(
        file in 0usize..7,
        cut in 0usize..9000,
        junk in "[0-9 .#a-zA-Z|:\\[\\]<>{},\"/\n-]{0,80}",
    ) {
        let name = [
            "01-hccl-test-pipe-rows.log",
            "02-srun-label-prefix.log",
            "05b-per-iteration-columns.log",
            "06c-mixed-timestamps-and-mpirun-tags.log",
            "08a-interleaved-ranks-same-output.log",
            "10-nccl-tests-json.json",
            "11b-osu-four-collectives.log",
        ][file];
        let real = logs(name);
        let at = real.char_indices().map(|(i, _)| i).find(|&i| i >= cut).unwrap_or(real.len());
        let mixed = format!("{}{}{}", &real[..at], junk, &real[at..]);
        if let Ok(log) = parse_log(&mixed) {
            for t in log.usable() {
                let _ = Profile::fit_table(t, Some(8), "prop");
            }
        }
        let _ = parse_log(&real[..at]);
    }

    /// The readers of other files, and the tuner reader, on real files
    /// cut and mixed with junk: a log, a table's rejection or an error,
    /// never a panic; what they read fits or says why not.
    #[test]
    fn other_files_never_panic_when_cut_or_mixed(
        file in 0usize..9,
        cut in 0usize..6000,
        junk in "[0-9 .#a-zA-Z|:\\[\\]{},\"/\n-]{0,80}",
    ) {
        let name = [
            "nccl_gb200_4gpu_ring_allreduce_busbw_azure.md",
            "rccl_tests_output_file_json_fragments_4gpu.jsonl",
            "rccl_tests_csv_mpi_header_13cols_row_14fields.csv",
            "nccl_a100_1node_8gpu_alltoall_empty_redop_na.txt",
            "osu_alltoall_36rank_allreduce_144rank_ompi5_oci.txt",
            "osu_allreduce_ompi5_ring_8node_tcp.txt",
            "nccl_tuner_sample_performance_data.csv",
            "hccl_tuner_config.json",
            "osu_allreduce_ompi403_ucx_64rank_2node_ib.txt",
        ][file];
        let real = readers(name);
        let at = real.char_indices().map(|(i, _)| i).find(|&i| i >= cut).unwrap_or(real.len());
        let mixed = format!("{}{}{}", &real[..at], junk, &real[at..]);
        for text in [&mixed, &real[..at].to_string()] {
            if let Ok(mut log) = parse_log(text) {
                log.assume(Some(8), Some(&Collective::AllReduce));
                for t in log.usable() {
                    let _ = Profile::fit_table(t, None, "prop");
                }
            }
            if let Ok(t) = ccl_playground::engine::formats::tuner::parse(text) {
                let _ = t.render();
            }
        }
    }

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

#[test]
fn hccl_test_rows_with_pipes_read_and_fit_like_the_documented_layout() {
    let log = read("01-hccl-test-pipe-rows.log");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.tool, t.collective.clone(), t.ranks, t.rows.len()),
        (Tool::HcclTest, Some(Collective::AllReduce), Some(8), 4)
    );
    assert_eq!(times(&t.rows[0]), (8192, 764.55, None));
    assert_eq!(times(&t.rows[3]), (67108864, 2630.20, None));
    assert_eq!(t.rows[1].out_of_place.algbw_gbps, 0.54916);
    assert_eq!(t.rows[3].out_of_place.check, "success");
    let control = read("01-control-no-pipes.log");
    assert_eq!(values(&control.tables[0]), values(t));
    same_fit(t, &control.tables[0]);
}

#[test]
fn srun_labels_are_stripped_and_the_collective_inferred() {
    let log = read("02-srun-label-prefix.log");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len(), t.line),
        (Some(Collective::AllReduce), Some(16), 11, 23)
    );
    assert_eq!(times(&t.rows[0]), (8 << 20, 215.3, Some(180.0)));
    assert_eq!(times(&t.rows[10]), (8 << 30, 103530.0, Some(103538.0)));
    assert_eq!(t.rows[0].out_of_place.check, "N/A");
    assert_eq!(
        t.notes,
        ["the log names no collective; all_reduce inferred from busbw / algbw = 1.875 on 16 ranks with redop sum and root -1 (nccl-tests doc/PERFORMANCE.md)"]
    );
    let control = read("02-control-labels-stripped.log");
    assert_eq!(values(&control.tables[0]), values(t));
    same_fit(t, &control.tables[0]);
}

#[test]
fn old_nccl_tests_columns_differ_per_test() {
    let log = read("03-old-per-test-columns.log");
    assert_eq!(
        names(&log),
        [
            "all_reduce",
            "all_gather",
            "broadcast",
            "reduce",
            "reduce_scatter"
        ]
    );
    assert!(log
        .tables
        .iter()
        .all(|t| t.rows.len() == 25 && t.ranks == Some(2) && t.rejected.is_none()));
    // all_gather: no redop, no root (11 tokens a row).
    let ag = &log.tables[1];
    let last = &ag.rows[24];
    assert_eq!((last.redop.as_deref(), last.root), (None, None));
    assert_eq!(times(last), (134217728, 87825.0, Some(85704.0)));
    assert_eq!(last.out_of_place.check, "0e+00");
    // size / time at the largest size; the printed algbw (0.76) is per rank.
    assert_eq!(
        (last.bytes as f64 / last.out_of_place.time_us / 1e3 * 100.0).round(),
        153.0
    );
    let p = Profile::fit_table(ag, None, "03").unwrap();
    assert!((p.algbw_gbps - 1.53).abs() < 0.02, "{}", p.describe());
    // broadcast: root but no redop (12 tokens); reduce: both (13).
    let bc = &log.tables[2];
    assert_eq!(
        (bc.rows[0].redop.as_deref(), bc.rows[0].root),
        (None, Some(0))
    );
    assert_eq!(times(&bc.rows[24]), (134217728, 91250.0, Some(91248.0)));
    let p = Profile::fit_table(bc, None, "03").unwrap();
    assert!((p.algbw_gbps - 1.47).abs() < 0.03, "{}", p.describe());
    let rd = &log.tables[3];
    assert_eq!(
        (rd.rows[0].redop.as_deref(), rd.rows[0].root),
        (Some("sum"), Some(0))
    );
    assert_eq!(times(&rd.rows[24]), (134217728, 87680.0, Some(90443.0)));
    // The single-test extracts read exactly like their table.
    for (file, k) in [
        ("03b-old-broadcast-only.log", 2),
        ("03c-old-allgather-only.log", 1),
        ("03d-old-reduce-only.log", 3),
    ] {
        let one = read(file);
        assert_eq!(one.tables.len(), 1, "{file}");
        assert_eq!(values(&one.tables[0]), values(&log.tables[k]), "{file}");
        assert_eq!(one.tables[0].collective, log.tables[k].collective, "{file}");
    }
}

#[test]
fn cputime_header() {
    let log = read("04-cputime-column.log");
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len(), t.halves),
        (Some(Collective::AllReduce), Some(8), 25, Halves::Both)
    );
    assert_eq!(times(&t.rows[0]), (8, 13.09, Some(13.33)));
    let last = &t.rows[24];
    assert_eq!(times(last), (134217728, 497.93, Some(497.06)));
    assert_eq!(
        (last.out_of_place.algbw_gbps, last.out_of_place.busbw_gbps),
        (269.55, Some(471.71))
    );
}

#[test]
fn timestamp_and_per_iteration_columns_are_skipped() {
    let log = read("05a-timestamp-column.log");
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len()),
        (Some(Collective::AllGather), Some(8), 11)
    );
    assert_eq!(times(&t.rows[0]), (1048576, 13.73, Some(13.77)));
    assert_eq!(
        (t.rows[0].count, t.rows[0].redop.as_deref()),
        (Some(32768), Some("none"))
    );
    assert_eq!(times(&t.rows[10]), (1 << 30, 3033.03, Some(3004.23)));
    assert_eq!(t.rows[10].in_place.as_ref().unwrap().check, "0");

    let log = read("05b-per-iteration-columns.log");
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len()),
        (Some(Collective::ReduceScatter), Some(8), 9)
    );
    // In-place time 14.97, not the out-of-place i_min 14.59 before it.
    assert_eq!(times(&t.rows[0]), (1048576, 15.05, Some(14.97)));
    assert_eq!(t.rows[0].in_place.as_ref().unwrap().algbw_gbps, 70.02);
    assert_eq!(times(&t.rows[8]), (256 << 20, 733.50, Some(746.05)));
}

#[test]
fn pdsh_kubectl_and_mixed_prefixes() {
    for (file, first, last) in [
        (
            "06a-pdsh-host-prefix.log",
            (45.87, 45.85),
            (11606.8, 11767.6),
        ),
        (
            "06b-kubectl-timestamps.log",
            (44.81, 45.68),
            (11502.1, 11244.6),
        ),
    ] {
        let log = read(file);
        assert_eq!(log.tables.len(), 1, "{file}");
        let t = &log.tables[0];
        assert_eq!(
            (t.collective.clone(), t.ranks, t.rows.len(), t.line),
            (Some(Collective::AllReduce), Some(16), 11, 27),
            "{file}"
        );
        assert_eq!(
            times(&t.rows[0]),
            (1 << 20, first.0, Some(first.1)),
            "{file}"
        );
        assert_eq!(
            times(&t.rows[10]),
            (1 << 30, last.0, Some(last.1)),
            "{file}"
        );
        assert!(Profile::fit_table(t, None, file).is_ok());
    }
    let log = read("06c-mixed-timestamps-and-mpirun-tags.log");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len()),
        (Some(Collective::Broadcast), Some(8), 10)
    );
    assert_eq!(
        (t.rows[0].root, t.rows[0].redop.as_deref()),
        (Some(0), Some("none"))
    );
    assert_eq!(times(&t.rows[0]), (1 << 20, 18.41, Some(18.06)));
    assert_eq!(times(&t.rows[9]), (512 << 20, 1628.17, Some(1653.68)));
}

#[test]
fn rccl_in_place_only_table() {
    let log = read("07-rccl-in-place-only.log");
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len(), t.halves),
        (Some(Collective::AllReduce), Some(8), 24, Halves::InPlace)
    );
    // The one timing is the in-place one, in `out_of_place` (the row's first).
    assert_eq!(times(&t.rows[0]), (8, 18.12, None));
    let last = &t.rows[23];
    assert_eq!(times(last), (64 << 20, 435.6, None));
    assert_eq!(
        (last.out_of_place.algbw_gbps, last.out_of_place.busbw_gbps),
        (154.07, Some(269.62))
    );
    let p = Profile::fit_table(t, None, "rccl").unwrap();
    assert!((p.algbw_gbps - 160.0).abs() < 3.0, "{}", p.describe());
}

#[test]
fn interleaved_ranks_keep_one_table_per_run() {
    // Ranks 0 and 1 print the same output, tagged: one table, noted.
    let log = read("08a-interleaved-ranks-same-output.log");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len(), t.line),
        (Some(Collective::AllReduce), Some(8), 9, 34)
    );
    assert_eq!(times(&t.rows[0]), (1 << 20, 17.16, Some(16.76)));
    assert_eq!(t.rows[0].line, 38);
    assert_eq!(
        t.notes,
        [
            "from the lines prefixed `[1,0]`",
            "printed again at line 35 (kept once)"
        ]
    );
    // Two independent 4-GPU runs, srun labels: two tables.
    let log = read("08b-interleaved-ranks-two-runs.log");
    assert_eq!(log.tables.len(), 2);
    for (t, label, first, last) in [
        (&log.tables[0], "0", 16.98, 1281.31),
        (&log.tables[1], "1", 17.40, 1310.39),
    ] {
        assert_eq!((t.ranks, t.rows.len()), (Some(4), 9));
        assert_eq!(
            (t.rows[0].bytes, t.rows[0].out_of_place.time_us),
            (1 << 20, first)
        );
        assert_eq!(
            (t.rows[8].bytes, t.rows[8].out_of_place.time_us),
            (256 << 20, last)
        );
        assert_eq!(t.notes, [format!("from the lines prefixed `{label}`")]);
    }
    // Unlabelled, every line twice: one table of 9 rows.
    let log = read("08c-unlabelled-duplicated-lines.log");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len()),
        (Some(Collective::AllGather), Some(8), 9)
    );
    assert_eq!(times(&t.rows[0]), (1 << 20, 13.91, Some(13.91)));
    assert_eq!(times(&t.rows[8]), (256 << 20, 754.51, Some(749.52)));
    assert_eq!(
        t.notes,
        ["every row printed 2 times (output of several ranks interleaved); kept once"]
    );
}

#[test]
fn one_bad_table_is_reported_and_the_good_ones_fit() {
    let log = read("09-one-bad-table-among-good.log");
    assert_eq!(names(&log), ["all_reduce", "all_gather", "reduce_scatter"]);
    let bad = &log.tables[1];
    assert_eq!(bad.label(), "all_gather, 8 ranks, 8 rows (line 52)");
    assert_eq!(
        bad.rejected.as_deref(),
        Some("line 58: expected a row `size count type redop root time algbw busbw #wrong time algbw busbw #wrong` (13 columns), found `16777216        524288     float    none      -1    57.33  292.65  256.07` (and 1 more bad row(s))")
    );
    assert_eq!(log.rejected().len(), 1);
    assert_eq!(log.usable().len(), 2);
    assert_eq!(
        times(&log.tables[0].rows[4]),
        (16 << 20, 73.15, Some(74.25))
    );
    assert_eq!(
        times(&log.tables[2].rows[4]),
        (16 << 20, 56.79, Some(57.50))
    );
    for c in [Collective::AllReduce, Collective::ReduceScatter] {
        let p = Profile::fit_log(&log, Some(&c), None, "09").unwrap();
        assert_eq!((p.ranks, p.rows.len()), (8, 9));
    }
    match Profile::fit_log(&log, Some(&Collective::AllGather), None, "09") {
        Err(CalibrateError::NoUsableTable(why)) => {
            assert!(
                why.contains("all_gather, 8 ranks, 8 rows (line 52): line 58: expected a row"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nccl_tests_json_output() {
    let log = read("10-nccl-tests-json.json");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.tool, t.collective.clone(), t.ranks, t.rows.len(), t.line),
        (Tool::NcclTests, Some(Collective::AllReduce), Some(8), 24, 4)
    );
    let r = &t.rows[0];
    assert_eq!(
        (r.line, r.bytes, r.count, r.root),
        (4, 8, Some(2), Some(-1))
    );
    assert_eq!(
        (r.dtype.as_deref(), r.redop.as_deref()),
        (Some("float"), Some("sum"))
    );
    assert_eq!(times(r), (8, 14.116007, Some(13.980691)));
    assert_eq!(
        (r.out_of_place.algbw_gbps, r.out_of_place.busbw_gbps),
        (0.000567, Some(0.000992))
    );
    assert_eq!(r.out_of_place.check, "0");
    assert_eq!(times(&t.rows[23]).0, 64 << 20);
    assert_eq!(t.rows[23].out_of_place.time_us, 270.836667);
    // Every row is on line 4; the fit still tells held-out rows apart.
    let a = holdout(t, None, None, 64 << 10).unwrap();
    assert_eq!(a.rows.len(), 6);
    let p = Profile::fit_table_with(t, None, "json", |i| i % 2 == 0).unwrap();
    assert_eq!(p.rows.iter().filter(|r| r.used).count(), 12);
}

#[test]
fn osu_micro_benchmarks() {
    let log = read("11a-osu-allreduce-full.log");
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (
            t.tool,
            t.collective.clone(),
            t.ranks,
            t.rows.len(),
            t.halves
        ),
        (
            Tool::Osu,
            Some(Collective::AllReduce),
            Some(16),
            19,
            Halves::OutOfPlace
        )
    );
    let r = &t.rows[0];
    assert_eq!(times(r), (4, 5.99, None));
    assert_eq!(
        (
            r.dtype.as_deref(),
            r.out_of_place.busbw_gbps,
            r.out_of_place.check.as_str()
        ),
        (Some("MPI_CHAR"), None, "N/A")
    );
    assert_eq!(r.out_of_place.algbw_gbps, 4.0 / 5.99 / 1e3);
    assert_eq!(times(&t.rows[18]), (1 << 20, 175.40, None));

    let log = read("11b-osu-four-collectives.log");
    assert_eq!(
        names(&log),
        ["all_gather", "alltoall", "broadcast", "reduce_scatter"]
    );
    // osu_allgather prints one rank's part, osu_alltoall one peer's:
    // nccl-tests' size is 16 ranks × that.
    for (t, scale, (first, last)) in log
        .tables
        .iter()
        .zip([16, 16, 1, 1])
        .zip([
            (5.94, 1765.51),
            (8.07, 2123.17),
            (3.47, 157.77),
            (7.49, 143.49),
        ])
        .map(|((t, s), v)| (t, s, v))
    {
        assert_eq!((t.ranks, t.rows.len(), t.pending), (Some(16), 21, None));
        assert_eq!(times(&t.rows[0]), (scale, first, None));
        assert_eq!(times(&t.rows[20]), (scale << 20, last, None));
    }

    // Without the launch line OSU prints no rank count: the caller's.
    let text = logs("11a-osu-allreduce-full.log").replace(
        "$ mpirun -np 16 --map-by ppr:8:node ./osu_allreduce -f -m 4:1048576\n",
        "",
    );
    let t = parse_log(&text).unwrap().tables.remove(0);
    assert_eq!(t.ranks, None);
    assert!(matches!(
        Profile::fit_table(&t, None, "osu"),
        Err(CalibrateError::NoRanks { line: 6 })
    ));
    assert_eq!(Profile::fit_table(&t, Some(16), "osu").unwrap().ranks, 16);
}

#[test]
fn na_cells_are_missing_values() {
    let text = "\
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    17.16     N/A     N/A    N/A    16.76   62.56  109.47    N/A
     2097152        524288     float     sum      -1      N/A     N/A     N/A    N/A      N/A     N/A     N/A    N/A
     4194304       1048576     float     sum      -1    25.00  167.77  293.60      0      nan     nan     nan    N/A
";
    let log = parse_log(text).unwrap();
    let t = &log.tables[0];
    assert_eq!(t.rows.len(), 2);
    let m = &t.rows[0].out_of_place;
    assert_eq!(
        (m.time_us, m.algbw_gbps, m.busbw_gbps),
        (17.16, 1048576.0 / 17.16 / 1e3, None)
    );
    assert_eq!(t.rows[1].in_place, None);
    assert_eq!(t.notes, ["1 row(s) without a time (N/A) left out (line 3)"]);
    assert_eq!(t.rejected, None);
    assert_eq!(
        parse_log("# size only\nnothing").unwrap_err(),
        FormatError::NoTable
    );
}

#[test]
fn empty_redop_cells_are_read_by_name_never_one_column_off() {
    // Older nccl-tests print an empty op for alltoall: 11 tokens under a
    // 12-name header, `N/A` errors, five 0-byte rows.
    let text = readers("nccl_a100_1node_8gpu_alltoall_empty_redop_na.txt");
    let log = parse_log(&text).unwrap();
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.ranks, t.rows.len(), t.rejected.clone(), t.halves),
        (Some(8), 34, None, Halves::Both)
    );
    assert_eq!(t.rows.iter().filter(|r| r.is_empty()).count(), 5);
    let last = &t.rows[33];
    // `count` is elements per peer: 8 GiB / 4 B / 8 ranks.
    assert_eq!(
        (
            last.bytes,
            last.count,
            last.dtype.as_deref(),
            last.redop.clone()
        ),
        (8589934592, Some(268435456), Some("float"), None)
    );
    assert_eq!(times(last), (8589934592, 33508.0, Some(33234.0)));
    let m = &last.out_of_place;
    assert_eq!(
        (m.algbw_gbps, m.busbw_gbps, m.check.as_str()),
        (256.36, Some(224.31), "N/A")
    );
    assert_eq!(times(&t.rows[5]), (32, 89.00, Some(85.13)));
    assert_eq!(
        t.notes,
        ["34 row(s) print nothing under `redop` (older nccl-tests print an empty op for non-reducing collectives); their later cells are read by the header's names"]
    );
    let p = Profile::fit_log(&log, Some(&Collective::AllToAll), None, "a2a").unwrap();
    assert_eq!((p.ranks, p.rows.len()), (8, 34));
    // A row that lost its `type` cell instead shows a number there: it is
    // reported, not read one column off.
    assert!(text.contains("        1024            32   float            88.17"));
    let lost = text.replace(
        "        1024            32   float            88.17",
        "        1024            32                   88.17",
    );
    let t = parse_log(&lost).unwrap().tables.remove(0);
    assert_eq!(
        t.rejected.as_deref(),
        Some("line 30: expected a row `size count type redop time algbw busbw error time algbw busbw error` (12 columns), found `1024            32                   88.17    0.01    0.01    N/A    88.98    0.01    0.01    N/A`")
    );
}

#[test]
fn osu_four_and_two_column_layouts_read_the_avg_column() {
    // OSU 7.0 `-f` (Avg, Min, Max, Iterations), Open MPI 5 ring forced on
    // 8 hosts; the file starts with an empty line and has no launch line.
    let mut log = parse_log(&readers("osu_allreduce_ompi5_ring_8node_tcp.txt")).unwrap();
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (t.tool, t.collective.clone(), t.ranks, t.rows.len()),
        (Tool::Osu, Some(Collective::AllReduce), None, 19)
    );
    assert_eq!(times(&t.rows[0]), (4, 85.16, None));
    // Ring falls back to recursive doubling below count = ranks: the jump.
    assert_eq!(times(&t.rows[2]), (16, 57.90, None));
    assert_eq!(times(&t.rows[3]), (32, 360.04, None));
    assert_eq!(times(&t.rows[18]), (1 << 20, 5700.06, None));
    log.assume(Some(8), None);
    assert_eq!(
        log.tables[0].notes,
        ["8 ranks as given (the input prints no rank count)"]
    );
    let p = Profile::fit_log(&log, None, None, "osu").unwrap();
    assert_eq!((p.ranks, p.rows.len()), (8, 19));

    // OSU 5.6.2, two columns, 64 ranks on 2 nodes (srun in a job script
    // not in the file).
    let log = parse_log(&readers("osu_allreduce_ompi403_ucx_64rank_2node_ib.txt")).unwrap();
    let t = &log.tables[0];
    assert_eq!(
        (t.collective.clone(), t.ranks, t.rows.len()),
        (Some(Collective::AllReduce), None, 19)
    );
    assert_eq!(times(&t.rows[0]), (4, 5.47, None));
    let last = &t.rows[18];
    assert_eq!(times(last), (1 << 20, 3730.69, None));
    assert_eq!((last.out_of_place.algbw_gbps * 1000.0).round(), 281.0);
    let p = Profile::fit_log(&log, None, Some(64), "osu").unwrap();
    assert_eq!(p.ranks, 64);
}

#[test]
fn osu_alltoall_sizes_are_per_peer_and_become_nccl_tests_sizes() {
    // `mpirun -n 36 osu_alltoall`, `mpirun -n 144 -N 36 osu_allreduce`,
    // and the point-to-point osu_latency / osu_bw between them.
    let text = readers("osu_alltoall_36rank_allreduce_144rank_ompi5_oci.txt");
    let log = parse_log(&text).unwrap();
    assert_eq!(names(&log), ["alltoall", "latency", "all_reduce"]);
    let a2a = &log.tables[0];
    assert_eq!(
        (a2a.ranks, a2a.rows.len(), a2a.rejected.clone()),
        (Some(36), 27, None)
    );
    // 1 byte per peer is a 36-byte send buffer, nccl-tests' size.
    assert_eq!(times(&a2a.rows[0]), (36, 10.29, None));
    let last = &a2a.rows[26];
    assert_eq!(times(last), (67108864 * 36, 747888.64, None));
    assert_eq!(
        last.out_of_place.algbw_gbps,
        (67108864u64 * 36) as f64 / 747888.64 / 1e3
    );
    assert_eq!(
        a2a.notes,
        ["sizes are × 36 ranks: the tool prints one peer's part (alltoall), nccl-tests' size is the whole buffer"]
    );
    assert_eq!(
        log.tables[1].rejected.as_deref(),
        Some("osu_latency is a point-to-point test (one pair of ranks), not a collective")
    );
    let ar = &log.tables[2];
    assert_eq!((ar.ranks, ar.rows.len()), (Some(144), 27));
    assert_eq!(times(&ar.rows[0]), (4, 11.69, None));
    assert_eq!(times(&ar.rows[26]), (256 << 20, 496306.98, None));
    let p = Profile::fit_log(&log, Some(&Collective::AllToAll), None, "a2a").unwrap();
    assert!((p.algbw_gbps - 3.2).abs() < 0.3, "{}", p.describe());

    // Without the launch line the per-peer sizes wait for the rank count:
    // the table says what to pass, and nothing fits per-peer sizes.
    let bare = text.replace(
        "$ mpirun -n 36 osu_alltoall -x 10 -i 10 -m 1:67108864\n",
        "",
    );
    let mut log = parse_log(&bare).unwrap();
    let t = &log.tables[0];
    assert_eq!((t.ranks, t.rows[0].bytes), (None, 1));
    assert_eq!(
        t.rejected.as_deref(),
        Some("each size is one rank's part (one peer's for alltoall) and nccl-tests' size is ranks × that; the input prints no rank count: pass it (--ranks N)")
    );
    match Profile::fit_log(&log, Some(&Collective::AllToAll), Some(36), "a2a") {
        Err(CalibrateError::NoUsableTable(why)) => {
            assert!(why.contains("pass it (--ranks N)"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    log.assume(Some(36), None);
    let launched = parse_log(&text).unwrap().tables.remove(0);
    assert_eq!(values(&log.tables[0]), values(&launched));
    assert_eq!(log.tables[0].rejected, None);
}

#[test]
fn rccl_tests_json_records_pair_their_halves() {
    // `-Z json`, one object per line: `#wrong` a string, in- and
    // out-of-place as separate records, 4 GPUs in one process.
    let text = readers("rccl_tests_output_file_json_fragments_4gpu.jsonl");
    let log = parse_log(&text).unwrap();
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (
            t.tool,
            t.collective.clone(),
            t.ranks,
            t.rows.len(),
            t.halves
        ),
        (
            Tool::NcclTests,
            Some(Collective::AllReduce),
            Some(4),
            3,
            Halves::Both
        )
    );
    let r = &t.rows[0];
    assert_eq!(
        (r.line, r.bytes, r.dtype.as_deref(), r.redop.as_deref()),
        (1, 1024, Some("float"), Some("sum"))
    );
    assert_eq!(
        times(r),
        (1024, 19.184150000000002, Some(19.897650000000002))
    );
    let m = &r.out_of_place;
    assert_eq!(
        (m.algbw_gbps, m.busbw_gbps, m.check.as_str()),
        (0.05337739748698796, Some(0.08006609623048194), "0")
    );
    // busBw / algBw = 2(n-1)/n on 4 GPUs.
    assert!((m.busbw_gbps.unwrap() / m.algbw_gbps - 1.5).abs() < 1e-12);
    // The 4096-byte in-place record is not in the file.
    assert_eq!(times(&t.rows[2]), (4096, 19.961650000000002, None));
    // The same records as the list rccl-tests writes now (`[`, `},` per
    // line, `]`) read the same.
    let records: Vec<&str> = text.lines().filter(|l| l.starts_with('{')).collect();
    let list = format!("[\n{}\n]\n", records.join(",\n"));
    assert_eq!(values(&parse_log(&list).unwrap().tables[0]), values(t));
    let p = Profile::fit_log(&log, None, None, "rccl").unwrap();
    assert_eq!((p.ranks, p.rows.len()), (4, 3));
}

#[test]
fn csv_is_read_by_column_name_and_a_short_header_is_an_error() {
    // rccl-tests built with MPI: 13 names, 14 fields (a `nodes` value the
    // header does not name). Read by name, the row would be a 1-byte
    // AllReduce: it is an error naming both counts and the line.
    let text = readers("rccl_tests_csv_mpi_header_13cols_row_14fields.csv");
    let log = parse_log(&text).unwrap();
    assert_eq!(log.tables.len(), 1);
    assert!(log.usable().is_empty());
    assert_eq!(
        log.tables[0].rejected.as_deref(),
        Some("line 2: 14 fields, but the header (line 1) names 13 columns (numCycle, collective, ranks, rankspernode, gpusperrank, size, type, redop, inplace, time, algbw, bus…) (rccl-tests built with MPI writes a `nodes` value after the collective that its header does not name); a row is read by the header's names, so this one cannot be read without shifting its cells: `0,\"AllReduce\",1,8,8,1,1048576,\"float\",\"sum\",0,55.66,18.84,32.97,\"0\"`")
    );
    // With the missing name, the same row reads by name: 8 processes ×
    // 1 GPU, 1 MiB out-of-place in 55.66 µs.
    let named = text.replace("numCycle,collective,", "numCycle,collective,nodes,");
    let t = parse_log(&named).unwrap().tables.remove(0);
    assert_eq!(
        (
            t.collective.clone(),
            t.ranks,
            t.rows.len(),
            t.rejected.clone()
        ),
        (Some(Collective::AllReduce), Some(8), 1, None)
    );
    let r = &t.rows[0];
    assert_eq!(
        (r.bytes, r.dtype.as_deref(), r.redop.as_deref()),
        (1048576, Some("float"), Some("sum"))
    );
    let m = &r.out_of_place;
    assert_eq!(
        (m.time_us, m.algbw_gbps, m.busbw_gbps, m.check.as_str()),
        (55.66, 18.84, Some(32.97), "0")
    );
}

#[test]
fn a_pasted_markdown_table_of_size_labels_and_busbw() {
    // 4× GB200, AllReduce in-place busbw, sizes `1K` … `8G` (65K = 2^16);
    // the collective and "bus bandwidth" are in the text above the table,
    // the GPU count is not: the times wait for it.
    let text = readers("nccl_gb200_4gpu_ring_allreduce_busbw_azure.md");
    let mut log = parse_log(&text).unwrap();
    assert_eq!(log.tables.len(), 1);
    let t = &log.tables[0];
    assert_eq!(
        (
            t.collective.clone(),
            t.ranks,
            t.rows.len(),
            t.halves,
            t.line
        ),
        (Some(Collective::AllReduce), None, 24, Halves::InPlace, 25)
    );
    assert_eq!(
        t.rejected.as_deref(),
        Some("only busbw is given: the time needs the collective and the rank count (algbw = busbw / the collective's busbw factor): pass them (--op NAME --ranks N)")
    );
    let sizes: Vec<u64> = t.rows.iter().map(|r| r.bytes).collect();
    assert_eq!(sizes, (10..34).map(|k| 1u64 << k).collect::<Vec<_>>());
    log.assume(Some(4), None);
    let t = &log.tables[0];
    assert_eq!(t.rejected, None);
    let last = &t.rows[23];
    let m = &last.out_of_place;
    assert_eq!((last.bytes, m.busbw_gbps), (8 << 30, Some(679.61)));
    // algbw = busbw / (2·3/4): 453.1 GB/s; time = 8 GiB / algbw: 18.96 ms.
    assert_eq!((m.algbw_gbps * 10.0).round(), 4531.0);
    assert_eq!((m.time_us / 10.0).round(), 1896.0);
    assert_eq!(m.time_us, (8u64 << 30) as f64 / (679.61 / 1.5 * 1e3));
    assert_eq!(
        t.notes,
        [
            "in-place runs (the text above the table says so)",
            "all_reduce from the text above the table",
            "sizes read from labels: `65K` is 65536 (a label names the power of two it rounds)",
            "busbw: column `ND GB200 v6 (GB/s)` (the text above the table says so)",
            "4 ranks as given (the input prints no rank count)",
            "times from busbw: algbw = busbw / 1.5 (all_reduce on 4 ranks), time = size / algbw",
        ]
    );
    let p = Profile::fit_log(&log, None, None, "md").unwrap();
    assert_eq!((p.ranks, p.rows.len()), (4, 24));
    // The same table whose text does not say which bandwidth: refused,
    // never guessed.
    let vague = text.replace("are the bus bandwidth values", "are the values");
    let t = parse_log(&vague).unwrap().tables.remove(0);
    assert_eq!(
        t.rejected.as_deref(),
        Some("line 25: column `ND GB200 v6 (GB/s)` is a bandwidth, but neither its name nor the text above the table says whether it is bus bandwidth (busbw) or algorithm bandwidth (algbw)")
    );
}

#[test]
fn tuner_files_are_not_measurements() {
    let csv = readers("nccl_tuner_sample_performance_data.csv");
    let log = parse_log(&csv).unwrap();
    assert_eq!(
        log.tables[0].rejected.as_deref(),
        Some("line 1: a tuner's table (algorithm, protocol and channels per size and rank count, as NCCL's example tuner reads): choices, not one run's measurements; read it with `cclsim tuner FILE`")
    );
    assert_eq!(
        parse_log(&readers("hccl_tuner_config.json")).unwrap_err().to_string(),
        "this is HCCL tuner-plugin rules (HCCL_TUNER_CONFIG_FILE): a table of what the library runs at each size, not measurements; read it with `cclsim tuner FILE`"
    );
}

#[test]
fn the_tuner_config_cclsim_tune_writes_reads_back_to_the_models_ranges() {
    use ccl_playground::engine::collective::Primitive;
    use ccl_playground::engine::config::Config;
    use ccl_playground::engine::formats::tuner;
    use ccl_playground::engine::tune::{self, Format};
    let (c, errors) = Config::from_query("v=1&topo=h100-8&op=allreduce&algo=auto");
    assert!(errors.iter().all(|e| e.is_notice()), "{errors:?}");
    let sizes: Vec<u64> = (0..11).map(|k| 1024u64 << (2 * k)).collect();
    let text = tune::text(&c, Format::NcclTunerCsv, &sizes).unwrap();
    let table = tuner::parse(&text).unwrap();
    assert_eq!(table.source, tuner::Source::NcclConfig);
    let choices = tune::sweep(&c, &sizes).unwrap();
    let want: Vec<(u64, u64, String)> = tune::ranges(&choices)
        .into_iter()
        .map(|(lo, hi, ch)| (lo, hi, ch.tuner_name().unwrap()))
        .collect();
    assert_eq!(tuner::ranges(&table, Primitive::AllReduce), want);
    for ch in &choices {
        let call = tuner::Call {
            op: Primitive::AllReduce,
            bytes: ch.bytes,
            ranks: 8,
            nodes: Some(1),
            dtype: None,
        };
        let rule = table.choice(&call).unwrap();
        assert_eq!(rule.algorithm(), Some(ch.algorithm), "{}", ch.bytes);
    }
}

#[test]
fn tuner_files_read_as_tables_of_choices() {
    use ccl_playground::engine::collective::Primitive;
    use ccl_playground::engine::formats::tuner::{self, Bounds, Call, Source, TunerError};
    let call = |op, bytes, ranks, dtype| Call {
        op,
        bytes,
        ranks,
        nodes: Some(1),
        dtype,
    };
    // HCCL: the first matching rule of its op wins; 4294967295 is a bound.
    let hccl = readers("hccl_tuner_config.json");
    let t = tuner::parse(&hccl).unwrap();
    assert_eq!(t.source, Source::HcclRules);
    let rows: Vec<(usize, Primitive, Bounds, Bounds, Option<&str>, &str)> = t
        .rules
        .iter()
        .map(|r| {
            (
                r.line,
                r.op,
                r.ranks,
                r.bytes,
                r.dtype.as_deref(),
                r.choice.as_str(),
            )
        })
        .collect();
    let b = |lo: u64, hi: u64| Bounds {
        min: Some(lo),
        max: Some(hi),
    };
    assert_eq!(
        rows,
        [
            (
                7,
                Primitive::AllReduce,
                b(8, 16),
                b(0, 65536),
                Some("fp16"),
                "aicpu/sole/nhr"
            ),
            (
                20,
                Primitive::AllReduce,
                b(8, 8),
                b(65536, 4294967295),
                None,
                "aicpu/sole/meshoneshot"
            ),
            (
                36,
                Primitive::AllGather,
                b(0, 4294967295),
                b(0, 1048576),
                None,
                "aicpu/sole/mesh"
            ),
        ]
    );
    let line = |c: Call| t.choice(&c).map(|r| r.line);
    assert_eq!(
        line(call(Primitive::AllReduce, 65536, 8, Some("fp16"))),
        Some(7)
    );
    assert_eq!(
        line(call(Primitive::AllReduce, 65536, 8, Some("float16"))),
        Some(7)
    );
    assert_eq!(
        line(call(Primitive::AllReduce, 65536, 8, Some("fp32"))),
        Some(20)
    );
    assert_eq!(
        line(call(Primitive::AllReduce, 1024, 8, Some("fp32"))),
        None
    );
    assert_eq!(
        line(call(Primitive::AllReduce, (4u64 << 30) - 1, 8, None)),
        Some(20)
    );
    assert_eq!(line(call(Primitive::AllReduce, 4u64 << 30, 8, None)), None);
    assert_eq!(
        line(call(Primitive::AllGather, 1 << 20, 4096, None)),
        Some(36)
    );
    assert_eq!(
        line(call(Primitive::AllGather, (1 << 20) + 1, 8, None)),
        None
    );
    // One schema error and the plugin changes nothing: named, not half read.
    let broken = hccl.replacen("\"cost\": 0.0", "\"costs\": 0.0", 1);
    assert_eq!(
        tuner::parse(&broken).unwrap_err(),
        TunerError::Schema(vec![
            "op_types.allreduce.rules[0]: rule missing required field 'cost' (a number)".into()
        ])
    );

    // NCCL's performance data: the config optimize_config.py writes.
    let t = tuner::parse(&readers("nccl_tuner_sample_performance_data.csv")).unwrap();
    assert_eq!(t.source, Source::NcclPerformance);
    let rows: Vec<(Primitive, Bounds, Bounds, &str, Option<i64>)> = t
        .rules
        .iter()
        .map(|r| (r.op, r.ranks, r.bytes, r.choice.as_str(), r.channels))
        .collect();
    let ar = Primitive::AllReduce;
    assert_eq!(
        rows[..3],
        [
            (ar, b(8, 8), b(0, 16896), "ring/simple", Some(4)),
            (ar, b(8, 8), b(16897, 540672), "ring/ll128", Some(8)),
            (ar, b(8, 8), b(540673, 1048576), "nvls/simple", Some(16)),
        ]
    );
    assert_eq!(t.rules.len(), 9);
    let pick = |bytes| {
        t.choice(&call(ar, bytes, 8, None))
            .map(|r| r.choice.as_str())
    };
    assert_eq!(
        [pick(1024), pick(32768), pick(1 << 20), pick((1 << 20) + 1)],
        [
            Some("ring/simple"),
            Some("ring/ll128"),
            Some("nvls/simple"),
            None
        ]
    );
}

#[test]
fn nccl_tests_json_of_every_file_version_and_both_key_spellings() {
    // Version 3 (the fixture), and what versions 1 and 2 of nccl-tests'
    // `src/util.cu` print instead: version 1 (from @00f5281 until the
    // spelling fix @85ca91d) spells `average_bus_bandwidith` / `bandwidith`;
    // version 2 (@0fdb00a) adds `per_iter_timing` to `config` and, with
    // `-I 1`, an `out_of_place_per_iter` / `in_place_per_iter` object after
    // each half.
    let v3 = logs("10-nccl-tests-json.json");
    assert!(v3.contains("\"average_bus_bandwidth\":{\"bandwidth\":91.429717"));
    let v1 = v3
        .replace("\"version\":3", "\"version\":1")
        .replace("average_bus_bandwidth", "average_bus_bandwidith")
        .replace("\"bandwidth\":", "\"bandwidith\":");
    let per_iter = ",\"out_of_place_per_iter\":{\"min_us\":12.0,\"max_us\":14.0,\"avg_us\":13.0,\"p50_us\":13.0,\"p95_us\":14.0,\"p99_us\":14.0,\"stdev_us\":0.5,\"cv_pct\":3.8,\"times_us\":[12.0,14.0]},\"in_place\":{";
    let v2 = v3
        .replace("\"version\":3", "\"version\":2")
        .replace(
            "\"blocking_collectives\":",
            "\"per_iter_timing\":\"true\",\"blocking_collectives\":",
        )
        .replace(",\"in_place\":{", per_iter);
    assert!(v1.contains("\"bandwidith\":91.429717") && v2.contains("\"cv_pct\":3.8"));
    assert!(v2.contains("\"per_iter_timing\":\"true\",\"blocking_collectives\""));
    let want = parse_log(&v3).unwrap().tables.remove(0);
    assert_eq!((want.rows.len(), want.ranks), (24, Some(8)));
    for (name, text) in [("v1", &v1), ("v2", &v2)] {
        let t = parse_log(text).unwrap().tables.remove(0);
        assert_eq!(values(&t), values(&want), "{name}");
        assert_eq!(
            (t.ranks, t.collective.clone(), t.rejected.clone()),
            (Some(8), Some(Collective::AllReduce), None),
            "{name}"
        );
    }
}

#[test]
fn several_pasted_tables_keep_the_good_ones_and_name_the_bad() {
    // The results page's table twice, the second with an unreadable cell.
    let text = readers("nccl_gb200_4gpu_ring_allreduce_busbw_azure.md");
    let start = text.find("### NCCL Bandwidth").unwrap();
    let second = text[start..].replace(
        "| 8G          | 679.61          |",
        "| 8G          | fast            |",
    );
    let both = format!("{text}\n{second}");
    let mut log = parse_log(&both).unwrap();
    log.assume(Some(4), None);
    assert_eq!(log.tables.len(), 2);
    assert_eq!(log.usable().len(), 1);
    assert_eq!((log.tables[0].line, log.tables[1].line), (25, 56));
    assert_eq!(
        log.tables[1].rejected.as_deref(),
        Some("line 81: ND GB200 v6 (GB/s) is `fast`; expected a bandwidth (a number ≥ 0, or N/A)")
    );
    // JSON records of two runs: a bad record rejects its own run only.
    let jsonl = readers("rccl_tests_output_file_json_fragments_4gpu.jsonl");
    let other = jsonl.replace("\"gpus\":4", "\"gpus\":2");
    let bad = other.replacen("\"time\":19.184150000000002", "\"time\":\"slow\"", 1);
    let log = parse_log(&format!("{jsonl}{bad}")).unwrap();
    assert_eq!(log.tables.len(), 2);
    assert_eq!(
        (log.tables[0].ranks, log.tables[0].rejected.clone()),
        (Some(4), None)
    );
    assert_eq!(
        log.tables[1].rejected.as_deref(),
        Some("line 6: time is `slow`; expected a time (a number ≥ 0, or N/A)")
    );
}
