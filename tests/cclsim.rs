//! The `cclsim` binary on the fixtures: parsed and predicted numbers, and
//! one-line errors.

use std::process::Command;

fn cclsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cclsim"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/nccl-tests/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

#[test]
fn predict_json_has_the_documented_keys_and_the_closed_form() {
    let (code, out, _) = cclsim(&[
        "predict",
        "--topo",
        "h100-8",
        "--op",
        "allreduce",
        "--algo",
        "ring",
        "--bytes",
        "1G",
        "--ranks",
        "8",
        "--slices",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(v["slices"], 1);
    // Unsliced: 14 × 3.4 µs + 2·7/8 · 2^30 B / 370.8 GB/s.
    let want = 14.0 * 3.4 + 1.75 * (1u64 << 30) as f64 / 370.8e3;
    assert!((v["time_us"].as_f64().unwrap() - want).abs() < 1e-6 * want);
    assert_eq!(v["algorithm"], "ring");
    assert!((v["busbw_gbps"].as_f64().unwrap() - 367.35).abs() < 0.01);
    assert!(v["algbw_gbps"].as_f64().is_some());
}

#[test]
fn auto_on_910b_picks_mesh() {
    let (code, out, _) = cclsim(&[
        "predict",
        "--topo",
        "910b-8",
        "--op",
        "allgather",
        "--algo",
        "auto",
        "--bytes",
        "64MiB",
        "--ranks",
        "8",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(v["algorithm"], "mesh");
    // α + (S/8)/18.3e3.
    let want = 3.4 + (64u64 << 20) as f64 / 8.0 / 18.3e3;
    assert!((v["time_us"].as_f64().unwrap() - want).abs() < 1e-6 * want);
}

#[test]
fn fit_reads_ranks_from_the_log_or_asks_for_them() {
    let dir = std::env::temp_dir().join(format!("cclsim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("p5.json");
    let p5 = fixture("nccl_h100_1node_p5_allreduce_7.txt");
    let (code, _, err) = cclsim(&["fit", &p5, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("pass it (--ranks N)"), "{err}");
    let (code, stdout, _) = cclsim(&[
        "fit",
        &p5,
        "--out",
        out.to_str().unwrap(),
        "--ranks",
        "8",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v = json(&stdout);
    assert_eq!(v["ranks"], 8);
    assert_eq!(v["rows"].as_array().unwrap().len(), 32);
    assert_eq!(v["rows"][0]["measured_us"], 12.9);
    assert_eq!(v["rows"][31]["bytes"], 17179869184u64);
    assert!(v["median_rel_err"].as_f64().unwrap() < 0.05);
    let file = json(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(file, v);
    // The profile describes the machine: --topo may be left out.
    let (code, stdout, err) = cclsim(&[
        "predict",
        "--profile",
        out.to_str().unwrap(),
        "--op",
        "allreduce",
        "--algo",
        "ring",
        "--bytes",
        "64MiB",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&stdout);
    let t = v["time_us"].as_f64().unwrap();
    // Measured 326.6 µs at 64 MiB (a held-in size): the ring on the fitted links is within 5 %.
    assert!((t - 326.6).abs() / 326.6 < 0.05, "{t}");

    // The 2080 Ti log: ranks from `-g2`; the 1-GPU table is reported as skipped.
    let (code, stdout, _) = cclsim(&[
        "fit",
        &fixture("nccl_2080ti_1node_pcie_nop2p_6runs_19.txt"),
        "--op",
        "reduce",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("# skipped reduce, 1 ranks, 28 rows (line 184): 1 rank"),
        "{stdout}"
    );
    assert!(stdout.contains("(reduce, 2 ranks)"), "{stdout}");
    let row = stdout
        .lines()
        .rfind(|l| l.contains(" 1073741824 "))
        .unwrap();
    assert!(
        row.trim_start().starts_with("172 ") && row.contains("96427.00"),
        "{row}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sweep_prints_an_nccl_tests_table() {
    let (code, out, _) = cclsim(&[
        "sweep",
        "--topo",
        "910b-8",
        "--op",
        "allreduce",
        "-b",
        "8",
        "-e",
        "1G",
        "-f",
        "2",
        "--algo",
        "ring",
    ]);
    assert_eq!(code, 0);
    let rows: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 28);
    let first: Vec<&str> = rows[0].split_whitespace().collect();
    // nccl-tests' columns: size, count, type, redop, root, time, algbw,
    // busbw, #wrong, then the in-place half.
    assert_eq!(&first[..5], ["8", "2", "float", "sum", "-1"]);
    // 8 B on ring: 14 α = 47.6 µs plus 4 bytes per step.
    assert!(first[5].starts_with("47.6"), "{}", rows[0]);
    assert_eq!(first[8], "N/A");
    assert!(out.contains("# Collective test starting: all_reduce_perf"));
    assert!(out.contains("#  Rank  7 Group  0"), "{out}");
    // `cclsim fit` reads it back: 8 ranks, every row.
    let dir = std::env::temp_dir().join(format!("cclsim-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("sweep.txt");
    std::fs::write(&log, &out).unwrap();
    let (code, fit, err) = cclsim(&["fit", log.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let p = json(&fit);
    assert_eq!(p["ranks"], 8);
    assert_eq!(p["rows"].as_array().unwrap().len(), 28);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sweep_writes_json_lines_and_csv() {
    let args = |f: &'static str| {
        vec![
            "sweep",
            "--topo",
            "h100-8",
            "--op",
            "allgather",
            "-b",
            "1K",
            "-e",
            "4K",
            "--format",
            f,
        ]
    };
    let (code, out, _) = cclsim(&args("jsonl"));
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out.lines().map(json).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["bytes"], 4096);
    assert_eq!(lines[2]["algorithm"], "ring");
    assert_eq!(lines[2]["library"], "nccl");
    let (code, out, _) = cclsim(&args("csv"));
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 4);
    assert!(out.starts_with("collective,bytes,count,type"), "{out}");
}

#[test]
fn bad_input_exits_non_zero_with_one_line() {
    for args in [
        vec![
            "predict",
            "--topo",
            "dgx-9",
            "--op",
            "allreduce",
            "--bytes",
            "1G",
        ],
        vec![
            "predict",
            "--topo",
            "910b-8",
            "--op",
            "allreduce",
            "--bytes",
            "lots",
        ],
        vec![
            "predict",
            "--topo",
            "910b-8",
            "--op",
            "allscatter",
            "--bytes",
            "1G",
        ],
        vec![
            "predict",
            "--topo",
            "910b-8",
            "--op",
            "allreduce",
            "--bytes",
            "1G",
            "--ranks",
            "9",
        ],
        vec!["predict", "--op", "allreduce", "--bytes", "1G"],
        vec![
            "sweep",
            "--topo",
            "910b-8",
            "--op",
            "allreduce",
            "-b",
            "1G",
            "-e",
            "8",
        ],
        vec!["fit", "/nonexistent/log.txt"],
        vec!["predict", "--frobnicate"],
    ] {
        let (code, out, err) = cclsim(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("cclsim: "), "{err}");
    }
}

/// PyTorch DDP's `compute_bucket_assignment_by_size` on 30 tensors of
/// 4 MiB: "cap not given" and "cap = 25 MiB" are different invocations.
#[test]
fn ddp_buckets_as_pytorch_makes_them() {
    for (cap, sizes) in [
        (None, vec![1, 7, 7, 7, 7, 1]),
        (Some("25MiB"), vec![7, 7, 7, 7, 2]),
        (Some("50MiB"), vec![13, 13, 4]),
        (Some("0"), vec![1; 30]),
    ] {
        let mut args = vec!["fusion", "--fusion", "30x4MiB", "--dtype", "fp32", "--json"];
        if let Some(c) = cap {
            args.extend(["--bucket", c]);
        }
        let (code, out, err) = cclsim(&args);
        assert_eq!(code, 0, "{err}");
        let v = json(&out);
        let got: Vec<u64> = v["bucket_sizes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(
            got,
            sizes.iter().map(|&x| x as u64).collect::<Vec<_>>(),
            "{cap:?}"
        );
        // The page link says the same: bucket only when given.
        let link = v["link"].as_str().unwrap();
        assert_eq!(link.contains("bucket="), cap.is_some(), "{link}");
    }
}

#[test]
fn fusion_of_small_tensors_pays_and_zero_cap_does_not_fuse() {
    let (code, out, _) = cclsim(&["fusion", "--fusion", "30x64KiB", "--json"]);
    assert_eq!(code, 0);
    let v = json(&out);
    // 30 × 64 KiB of bf16, no cap given (DDP's default): the first bucket
    // closes at 1 MiB (16 tensors), the rest (14) stay below 25 MiB.
    assert_eq!(v["tensors"], 30);
    assert_eq!(v["buckets"], 2);
    assert_eq!(v["total_bytes"], 30 * 65536);
    assert!(v["unfused_us"].as_f64().unwrap() > 5.0 * v["fused_us"].as_f64().unwrap());
    let (_, out, _) = cclsim(&["fusion", "--fusion", "30x64KiB", "--bucket", "0", "--json"]);
    assert_eq!(json(&out)["buckets"], 30);
    // A given cap of 25 MiB makes no small first bucket: one bucket.
    let (_, out, _) = cclsim(&[
        "fusion", "--fusion", "30x64KiB", "--bucket", "25MiB", "--json",
    ]);
    assert_eq!(json(&out)["buckets"], 1);
    let (code, _, err) = cclsim(&["fusion", "--fusion", "llama4"]);
    assert_eq!(code, 2);
    assert!(err.contains("llama3-8b, llama3-70b"), "{err}");
}

#[test]
fn compress_reports_wire_ratio_and_error() {
    let (code, out, _) = cclsim(&["compress", "--scheme", "int8", "--block", "256", "--json"]);
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(
        v["wire_ratio_vs_fp16"].as_f64().unwrap(),
        (1.0 + 2.0 / 256.0) / 2.0
    );
    let rel = v["stats"]["rel_l2_error"].as_f64().unwrap();
    assert!(rel > 1e-3 && rel < 5e-2, "{rel}");
}

#[test]
fn slices_flag_defaults_to_the_library_rule_and_rejects_bad_values() {
    let args = |slices: Option<&str>, topo: &str| {
        let mut a = vec![
            "predict",
            "--topo",
            topo,
            "--op",
            "allreduce",
            "--algo",
            "ring",
            "--bytes",
            "1G",
            "--ranks",
            "8",
            "--json",
        ];
        if let Some(k) = slices {
            a.extend(["--slices", k]);
        }
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        let r: Vec<&str> = a.iter().map(String::as_str).collect();
        cclsim(&r)
    };
    // NCCL (h100-8): 1 MiB slices, the ring's transfers are 128 MiB.
    let (code, out, _) = run(args(None, "h100-8"));
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(v["slices"], 128);
    assert!(v["slices_why"].as_str().unwrap().contains("NCCL"), "{v}");
    let t = v["time_us"].as_f64().unwrap();
    // Pipelined: not below the link bytes, within 3 % of the unsliced ring.
    let unsliced = 14.0 * 3.4 + 1.75 * (1u64 << 30) as f64 / 370.8e3;
    assert!(
        t >= 1.75 * (1u64 << 30) as f64 / 370.8e3 && (t - unsliced).abs() < 0.03 * unsliced,
        "{t}"
    );
    // HCCL (910b-8): auto is one slice, the buffer loops pipeline.
    let (code, out, _) = run(args(None, "910b-8"));
    assert_eq!(code, 0);
    assert_eq!(json(&out)["slices"], 1);
    let (code, out, _) = run(args(Some("4"), "910b-8"));
    assert_eq!(code, 0);
    assert_eq!(json(&out)["slices"], 4);
    for bad in ["0", "300", "lots"] {
        let (code, _, err) = run(args(Some(bad), "h100-8"));
        assert_eq!(code, 2, "{bad}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--slices") && err.contains(bad) && err.contains("1..=256"),
            "{err}"
        );
    }
}

#[cfg(unix)]
#[test]
fn files_have_a_size_cap_and_must_be_text() {
    // /dev/zero and /dev/urandom never end: read at most cap + 1 bytes.
    for (args, what) in [
        (
            vec![
                "predict",
                "--profile",
                "/dev/zero",
                "--op",
                "allreduce",
                "--bytes",
                "1G",
            ],
            "/dev/zero is larger than 67108864 bytes (the cap for a profile)",
        ),
        (
            vec![
                "predict",
                "--profile",
                "/dev/urandom",
                "--op",
                "allreduce",
                "--bytes",
                "1G",
            ],
            "/dev/urandom is larger than 67108864 bytes (the cap for a profile)",
        ),
        (
            vec!["fit", "/dev/zero"],
            "/dev/zero is larger than 67108864 bytes (the cap for a log)",
        ),
    ] {
        let (code, out, err) = cclsim(&args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert_eq!(err.trim_end(), format!("cclsim: {what}"), "{args:?}");
    }
    let dir = std::env::temp_dir().join(format!("cclsim-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("latin1.log");
    std::fs::write(&bad, b"# host caf\xe9\n").unwrap();
    let (code, _, err) = cclsim(&["fit", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        format!(
            "cclsim: {} is not UTF-8 text (the byte at offset 10 is not valid UTF-8); a log is text",
            bad.display()
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_closed_stdout_ends_the_sweep_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclsim"))
        .args([
            "sweep",
            "--topo",
            "h100-8",
            "--op",
            "allreduce",
            "-b",
            "8",
            "-e",
            "1G",
            "-f",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Like `| head -2`: read two lines, then close the pipe.
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    for _ in 0..2 {
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with('#'), "{line}");
    }
    drop(reader);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn fit_reads_every_log_format_and_reports_bad_tables() {
    let logs = |name: &str| format!("{}/tests/fixtures/logs/{name}", env!("CARGO_MANIFEST_DIR"));
    // hccl_test rows with pipes: ranks from `mpirun -n 8`.
    let (code, out, err) = cclsim(&["fit", &logs("01-hccl-test-pipe-rows.log"), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(
        (v["tool"].as_str(), v["ranks"].as_u64()),
        (Some("hccl_test"), Some(8))
    );
    assert_eq!(v["rows"][3]["measured_us"], 2630.2);
}

#[test]
fn msccl_imports_verifies_predicts_and_names_the_broken_element() {
    for f in [
        "../msccl/msccl_allreduce_binarytree_4gpu_simple.xml",
        "../msccl/msccl_allreduce_ring_4gpu_4ch_simple.xml",
        "../msccl/msccl_ndv4_alltoall_allpairs_8gpu_ll_2ch.xml",
    ] {
        let (code, out, err) = cclsim(&["msccl", &fixture(f), "--json"]);
        assert_eq!(code, 0, "{f}: {err}");
        let v = json(&out);
        assert_eq!(v["verified"], true);
        assert!(v["time_us"].as_f64().unwrap() > 0.0);
        assert_eq!(v["topo"], "h100-8");
    }
    // The MSCCL ring on 4 H100s simulates exactly as our ring (same
    // transfers); auto is NCCL's own pick there (Ring at 1 MiB), timed by
    // the calibrated model.
    let (_, out, _) = cclsim(&[
        "msccl",
        &fixture("../msccl/msccl_allreduce_ring_4gpu_4ch_simple.xml"),
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["auto"]["algorithm"], "ring");
    let (code, ring, err) = cclsim(&[
        "predict",
        "--topo",
        "h100-8",
        "--op",
        "allreduce",
        "--algo",
        "ring",
        "--ranks",
        "4",
        "--bytes",
        "1MiB",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let ring = json(&ring);
    assert!((v["time_us"].as_f64().unwrap() - ring["time_us"].as_f64().unwrap()).abs() < 1e-9);
    // Text summary.
    let (code, out, _) = cclsim(&[
        "msccl",
        &fixture("../msccl/msccl_ndv4_alltoall_allpairs_8gpu_ll_2ch.xml"),
        "--bytes",
        "1MiB",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("verified: every output chunk holds what AlltoAll requires"),
        "{out}"
    );
    assert!(
        out.contains("the MSCCL runtime would not pick it at 1048576"),
        "{out}"
    );
    // A broken file: exit 2 naming gpu / tb / step.
    let dir = std::env::temp_dir().join(format!("cclsim-msccl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = std::fs::read_to_string(fixture("../msccl/msccl_allreduce_ring_4gpu_4ch_simple.xml"))
        .unwrap()
        .replacen(r#"type="rrs""#, r#"type="rrx""#, 1);
    let p = dir.join("bad.xml");
    std::fs::write(&p, bad).unwrap();
    let (code, _, err) = cclsim(&["msccl", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("gpu 0 / tb 2 / step 0: type=\"rrx\""), "{err}");
    // One that parses but computes the wrong thing: a reduce turned into a copy.
    let wrong =
        std::fs::read_to_string(fixture("../msccl/msccl_allreduce_ring_4gpu_4ch_simple.xml"))
            .unwrap()
            .replacen(r#"type="rrcs""#, r#"type="rcs""#, 1);
    std::fs::write(&p, wrong).unwrap();
    let (code, _, err) = cclsim(&["msccl", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("gpu "), "{err}");
    // Export: re-import gives a verified schedule.
    let (code, xml, err) = cclsim(&[
        "msccl-export",
        "--topo",
        "910b-8",
        "--op",
        "allgather",
        "--algo",
        "mesh",
    ]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(&p, &xml).unwrap();
    let (code, out, _) = cclsim(&["msccl", p.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(json(&out)["coll"], "allgather");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn msccl_reads_mscclpp_plans_by_content_and_costs_ll_as_ll() {
    let (code, out, err) = cclsim(&[
        "msccl",
        &fixture("../msccl/mscclpp_plan_allreduce_2gpu_simple.json"),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(
        (
            &v["format"],
            &v["proto"],
            &v["verified"],
            &v["steps"],
            &v["transfers"]
        ),
        (
            &serde_json::json!("mscclpp-plan"),
            &serde_json::json!("Simple"),
            &serde_json::json!(true),
            &serde_json::json!(2),
            &serde_json::json!(32)
        )
    );
    assert_eq!(
        (&v["thread_blocks"], &v["xml_steps"]),
        (&16.into(), &112.into())
    );
    let (code, out, err) = cclsim(&[
        "msccl",
        &fixture("../msccl/mscclpp_plan_allreduce_packet_2gpu_ll.json"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("MSCCL++ plan, allreduce on 2 GPUs, proto LL"),
        "{out}"
    );
    assert!(out.contains("8 ops in the plan"), "{out}");
    assert!(
        out.contains("predicted on h100-8 with LL at 1 MiB fp32"),
        "{out}"
    );
}

#[test]
fn tune_outputs_parse_as_each_librarys_documented_syntax() {
    use ccl_playground::engine::tune::{parse_hccl_algo, parse_nccl_list, parse_tuner_csv, LABEL};
    let (code, out, err) = cclsim(&[
        "tune",
        "--topo",
        "h100-8",
        "--op",
        "allreduce",
        "--format",
        "nccl-env",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(LABEL));
    let algo = out
        .lines()
        .find_map(|l| l.strip_prefix("NCCL_ALGO="))
        .unwrap();
    let proto = out
        .lines()
        .find_map(|l| l.strip_prefix("NCCL_PROTO="))
        .unwrap();
    assert_eq!(
        parse_nccl_list(algo, true).unwrap()[0].0.as_deref(),
        Some("AllReduce")
    );
    let protos = &parse_nccl_list(proto, false).unwrap()[0].2;
    // NCCL's tuning model on one H100 node: Ring/LL for small sizes, NVLS
    // (Simple only) from a few MiB (tuning.cc: NVLS 25 µs + bytes / 228.6
    // GB/s beats the ring's protocols there).
    assert_eq!(protos, &["LL", "Simple"]);
    assert_eq!(parse_nccl_list(algo, true).unwrap()[0].2, &["Ring", "NVLS"]);
    // The CSV: contiguous ranges from 0 covering everything.
    let (code, out, _) = cclsim(&[
        "tune",
        "--topo",
        "h100-8",
        "--op",
        "allreduce",
        "--format",
        "nccl-tuner-csv",
    ]);
    assert_eq!(code, 0);
    let rows = parse_tuner_csv(&out).unwrap();
    assert_eq!(rows[0].1, 0);
    assert!(rows.windows(2).all(|w| w[1].1 == w[0].2 + 1));
    // The last line holds every larger size (size_t), not 2^32 − 1.
    assert_eq!(rows.last().unwrap().2, u64::MAX);
    assert_eq!(
        rows.iter()
            .map(|r| (r.3.as_str(), r.4.as_str()))
            .collect::<Vec<_>>(),
        [("ring", "ll"), ("nvls", "simple")]
    );
    // HCCL on 4 servers: one per-op line.
    let (code, out, _) = cclsim(&["tune", "--topo", "910b-4x8", "--op", "allreduce"]);
    assert_eq!(code, 0);
    let v = out
        .lines()
        .find_map(|l| l.strip_prefix("HCCL_ALGO="))
        .unwrap()
        .trim_matches('"');
    assert_eq!(
        parse_hccl_algo(v).unwrap(),
        vec![(Some("allreduce".to_string()), "NHR".to_string())]
    );
    // Wrong library, or a collective the variables cannot set: exit 2.
    let (code, _, err) = cclsim(&[
        "tune",
        "--topo",
        "910b-8",
        "--op",
        "allgather",
        "--format",
        "nccl-env",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("runs HCCL, not NCCL"), "{err}");
    let (code, _, err) = cclsim(&[
        "tune",
        "--topo",
        "h100-8",
        "--op",
        "alltoall",
        "--format",
        "nccl-tuner-csv",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("point-to-point"), "{err}");
}

#[test]
fn redop_avg_is_noted_on_hccl_and_refused_when_unknown() {
    let args = |topo: &'static str, op: &'static str| {
        vec![
            "predict",
            "--topo",
            topo,
            "--op",
            "allreduce",
            "--algo",
            "auto",
            "--bytes",
            "1MiB",
            "--redop",
            op,
        ]
    };
    let (code, out, _) = cclsim(&args("910b-8", "avg"));
    assert_eq!(code, 0);
    assert!(
        out.starts_with("note: HCCL has no avg (HcclReduceOp has SUM, PROD, MAX and MIN)"),
        "{out}"
    );
    let (code, out, _) = cclsim(&args("h100-8", "avg"));
    assert_eq!(code, 0);
    assert!(!out.contains("note:"), "{out}");
    let (code, _, err) = cclsim(&args("910b-8", "mean"));
    assert_eq!(code, 2);
    assert!(
        err.contains("--redop \"mean\": one of sum, prod, max, min, avg"),
        "{err}"
    );
}

#[test]
fn fusion_compresses_only_buckets_above_compress_min() {
    // 30 × 4 MiB fp16 on 910b-8, DDP's default buckets: [4 MiB] (the 1 MiB
    // first bucket, crossed by one tensor), 4 × [7 tensors = 28 MiB],
    // [4 MiB]. auto = mesh: 2·8·7 = 112 transfers of S/8 each.
    // int8, block 256, fp16 scales: a transfer of e elements is
    // e + 2·ceil(e/256) bytes. 28 MiB: e = 1 835 008 -> 1 849 344 B;
    // uncompressed 3 670 016 B. 4 MiB uncompressed: 524 288 B.
    let (code, out, err) = cclsim(&[
        "fusion",
        "--fusion",
        "30x4MiB",
        "--dtype",
        "fp16",
        "--compress",
        "int8",
        "--compress-min",
        "8MiB",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    let z = &v["compression"];
    let flags: Vec<bool> = z["compressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_bool().unwrap())
        .collect();
    assert_eq!(flags, vec![false, true, true, true, true, false]);
    assert_eq!(z["min_bytes"], 8 << 20);
    assert_eq!(
        z["wire_bytes"],
        4 * 112 * 1_849_344u64 + 2 * 112 * 524_288u64
    );
    assert_eq!(
        z["uncompressed_wire_bytes"],
        4 * 112 * 3_670_016u64 + 2 * 112 * 524_288u64
    );
    let frac = z["compressed_fraction"].as_f64().unwrap();
    assert_eq!(frac, 28.0 / 30.0);
    let (codec, err) = (
        z["codec_rel_l2"].as_f64().unwrap(),
        z["rel_l2_error"].as_f64().unwrap(),
    );
    assert_eq!(err, codec * frac.sqrt());
    // int8 with 256-element blocks: max error half a step of max/127 per
    // block, so the relative L2 error is well under 1 %.
    assert!(codec > 1e-3 && codec < 1e-2, "{codec}");
    assert!(v["link"].as_str().unwrap().contains("compress_min=8388608"));
    // Threshold 0: every bucket compressed.
    let (_, out, _) = cclsim(&[
        "fusion",
        "--fusion",
        "30x4MiB",
        "--dtype",
        "fp16",
        "--compress",
        "int8",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["compression"]["compressed_fraction"], 1.0);
    assert_eq!(
        v["compression"]["wire_bytes"],
        4 * 112 * 1_849_344u64 + 2 * 112 * (262_144 + 2 * 1024u64)
    );
    // A bad threshold names the flag, the value and what is allowed.
    let (code, _, err) = cclsim(&[
        "fusion",
        "--fusion",
        "30x4MiB",
        "--compress",
        "int8",
        "--compress-min",
        "lots",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--compress-min \"lots\": a size from 0"),
        "{err}"
    );
}

/// One vocabulary: every command takes nccl-tests' collective names
/// (`all_gather`, `reduce_scatter`, ...) and ours, and gives the same
/// answer for both; an unknown name is refused with the list.
#[test]
fn every_command_takes_nccl_tests_names_and_ours() {
    let predict = |op: &str| {
        let (code, out, err) = cclsim(&[
            "predict", "--topo", "h100-8", "--op", op, "--bytes", "64MiB", "--json",
        ]);
        assert_eq!(code, 0, "{op}: {err}");
        json(&out)["time_us"].as_f64().unwrap()
    };
    for (ours, theirs) in [
        ("allgather", "all_gather"),
        ("reducescatter", "reduce_scatter"),
        ("allreduce", "all_reduce"),
        ("alltoall", "AlltoAll"),
        ("broadcast", "bcast"),
    ] {
        assert_eq!(predict(ours), predict(theirs), "{ours} / {theirs}");
    }
    let (code, a, _) = cclsim(&[
        "sweep",
        "--topo",
        "h100-8",
        "--op",
        "reduce_scatter",
        "-b",
        "1K",
        "-e",
        "4K",
    ]);
    assert_eq!(code, 0);
    let (_, b, _) = cclsim(&[
        "sweep",
        "--topo",
        "h100-8",
        "--op",
        "reducescatter",
        "-b",
        "1K",
        "-e",
        "4K",
    ]);
    assert_eq!(a, b);
    let (code, _, err) = cclsim(&[
        "tune",
        "--topo",
        "h100-8",
        "--op",
        "all_reduce",
        "-b",
        "1K",
        "-e",
        "1M",
    ]);
    assert_eq!(code, 0, "{err}");
    let log = fixture("nccl_h100_1node_5colls_16.txt");
    let fitted = |op: &str| {
        let (code, out, err) = cclsim(&["fit", &log, "--op", op, "--json"]);
        assert_eq!(code, 0, "{op}: {err}");
        json(&out)["alpha_us"].as_f64().unwrap()
    };
    assert_eq!(fitted("reduce_scatter"), fitted("reducescatter"));
    assert_eq!(fitted("all_gather"), fitted("AllGather"));
    let (code, _, err) = cclsim(&["fit", &log, "--op", "allscatter"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--op \"allscatter\": expected one of allreduce, reducescatter"),
        "{err}"
    );
    // The page's link key too.
    use ccl_playground::engine::collective::Primitive;
    use ccl_playground::engine::config::Config;
    let (c, errors) = Config::from_query("v=1&op=all_gather&topo=h100-8");
    assert!(errors.iter().all(|e| e.is_notice()), "{errors:?}");
    assert_eq!(c.primitive, Primitive::AllGather);
    let (_, errors) = Config::from_query("v=1&op=allscatter&topo=h100-8");
    let errors: Vec<_> = errors.into_iter().filter(|e| !e.is_notice()).collect();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].allowed.contains("nccl-tests' all_reduce"),
        "{:?}",
        errors[0]
    );
}

/// `cclsim sweep` in each of its formats reads back through `cclsim fit`
/// to the same rows: the table by nccl-tests' layout, JSON lines and CSV
/// by their column names.
#[test]
fn every_sweep_format_reads_back_to_the_same_fit() {
    let dir = std::env::temp_dir().join(format!("cclsim-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut fits = Vec::new();
    for format in ["table", "jsonl", "csv"] {
        let (code, out, _) = cclsim(&[
            "sweep",
            "--topo",
            "h100-8",
            "--op",
            "reduce_scatter",
            "-b",
            "1K",
            "-e",
            "256M",
            "-f",
            "4",
            "--format",
            format,
        ]);
        assert_eq!(code, 0);
        let file = dir.join(format!("sweep.{format}"));
        std::fs::write(&file, &out).unwrap();
        let (code, fit, err) = cclsim(&["fit", file.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{format}: {err}");
        let p = json(&fit);
        assert_eq!(
            (p["ranks"].as_u64(), p["collective"].as_str()),
            (Some(8), Some("reduce_scatter")),
            "{format}"
        );
        let rows: Vec<(u64, f64)> = p["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["bytes"].as_u64().unwrap(),
                    r["measured_us"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(rows.len(), 10, "{format}");
        fits.push(rows);
    }
    // The table prints 2 decimals; JSON lines and CSV every digit.
    assert_eq!(fits[1], fits[2]);
    for (a, b) in fits[0].iter().zip(&fits[1]) {
        assert_eq!(a.0, b.0);
        assert!((a.1 - b.1).abs() <= 0.005 + 1e-9, "{a:?} {b:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn readers(name: &str) -> String {
    format!(
        "{}/tests/fixtures/readers/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Files without a rank count or collective take them from the flags;
/// OSU's per-peer alltoall sizes become nccl-tests' sizes.
#[test]
fn fit_takes_what_a_file_does_not_say_from_the_flags() {
    let md = readers("nccl_gb200_4gpu_ring_allreduce_busbw_azure.md");
    let (code, _, err) = cclsim(&["fit", &md]);
    assert_eq!(code, 2);
    assert!(err.contains("pass them (--op NAME --ranks N)"), "{err}");
    let (code, out, err) = cclsim(&["fit", &md, "--ranks", "4", "--json"]);
    assert_eq!(code, 0, "{err}");
    let p = json(&out);
    assert_eq!(
        (p["ranks"].as_u64(), p["collective"].as_str()),
        (Some(4), Some("all_reduce"))
    );
    let last = &p["rows"][23];
    assert_eq!(last["bytes"], 8589934592u64);
    assert_eq!(
        (last["measured_us"].as_f64().unwrap() / 10.0).round(),
        1896.0
    );

    let osu = readers("osu_allreduce_ompi403_ucx_64rank_2node_ib.txt");
    let (code, _, err) = cclsim(&["fit", &osu]);
    assert_eq!(code, 2);
    assert!(err.contains("pass it (--ranks N)"), "{err}");
    let (code, out, _) = cclsim(&["fit", &osu, "--ranks", "64", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(json(&out)["rows"][18]["measured_us"], 3730.69);

    // The older alltoall layout names no collective: --op gives it, and
    // with it busbw's factor.
    let a2a = readers("nccl_a100_1node_8gpu_alltoall_empty_redop_na.txt");
    let (code, out, err) = cclsim(&["fit", &a2a, "--op", "alltoall", "--json"]);
    assert_eq!(code, 0, "{err}");
    let p = json(&out);
    assert_eq!(
        (p["ranks"].as_u64(), p["rows"].as_array().unwrap().len()),
        (Some(8), 34)
    );
    let ratio = p["busbw_gbps"].as_f64().unwrap() / p["algbw_gbps"].as_f64().unwrap();
    assert!((ratio - 0.875).abs() < 1e-12, "{ratio}");

    let oci = readers("osu_alltoall_36rank_allreduce_144rank_ompi5_oci.txt");
    let (code, out, _) = cclsim(&["fit", &oci, "--json"]);
    assert_eq!(code, 0);
    let p = json(&out);
    assert_eq!(
        (p["ranks"].as_u64(), p["collective"].as_str()),
        (Some(36), Some("all_to_all"))
    );
    assert_eq!(p["rows"][26]["bytes"], 67108864u64 * 36);
}

/// The per-size lines of `cclsim tuner --op` (after their header).
fn per_size(out: &str) -> Vec<&str> {
    out.lines()
        .skip_while(|l| !l.starts_with("#       size"))
        .skip(1)
        .collect()
}

/// `cclsim tuner`: each tuner file as the table of what it makes the
/// library run, and per size.
#[test]
fn tuner_files_read_as_what_the_library_runs() {
    let perf = readers("nccl_tuner_sample_performance_data.csv");
    let (code, out, err) = cclsim(&[
        "tuner",
        &perf,
        "--op",
        "allreduce",
        "--ranks",
        "8",
        "--nodes",
        "1",
        "-b",
        "1K",
        "-e",
        "1M",
        "-f",
        "32",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = per_size(&out)
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    // allreduce 1×8: ring/simple at 1 KiB, ring/ll128 at 32 KiB, nvls/simple at 1 MiB.
    assert_eq!(
        rows.iter().map(|r| (r[0], r[1], r[2])).collect::<Vec<_>>(),
        [
            ("1", "KiB", "ring/simple"),
            ("32", "KiB", "ring/ll128"),
            ("1", "MiB", "nvls/simple")
        ]
    );
    assert!(
        out.contains("      3 allreduce      8              1              0..16896                 any     ring/simple                     4     10.8"),
        "{out}"
    );
    let hccl = readers("hccl_tuner_config.json");
    let (code, out, err) = cclsim(&[
        "tuner",
        &hccl,
        "--op",
        "all_reduce",
        "--ranks",
        "8",
        "--dtype",
        "fp16",
        "-b",
        "64K",
        "-e",
        "4G",
        "-f",
        "65536",
    ]);
    assert_eq!(code, 0, "{err}");
    let tail: Vec<&str> = out.lines().rev().take(2).collect();
    // 64 KiB (the first rule's upper bound, inclusive): nhr; 4 GiB is one
    // byte above 4294967295: no rule.
    assert!(tail[1].contains("64 KiB  aicpu/sole/nhr (line 7)"), "{out}");
    assert!(
        tail[0].contains("4 GiB  no rule: the library's own choice"),
        "{out}"
    );
    assert!(
        out.contains("max_bytes 4294967295 is 2^32 − 1 (4 GiB − 1 B)"),
        "{out}"
    );
    let (code, _, err) = cclsim(&["tuner", &readers("osu_allreduce_ompi5_ring_8node_tcp.txt")]);
    assert_eq!(code, 2);
    assert!(err.contains("not a tuner file"), "{err}");
}

/// What `cclsim tune` writes reads back as the same table: every size of
/// the sweep runs what the model recommended.
#[test]
fn tune_output_reads_back_as_the_same_table() {
    let dir = std::env::temp_dir().join(format!("cclsim-tuner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for op in ["allreduce", "allgather", "reduce_scatter"] {
        let sweep = [
            "--topo", "h100-8", "--op", op, "-b", "1K", "-e", "1G", "-f", "4",
        ];
        let (code, conf, err) =
            cclsim(&[&["tune"], &sweep[..], &["--format", "nccl-tuner-csv"]].concat());
        assert_eq!(code, 0, "{op}: {err}");
        let file = dir.join(format!("{op}.conf"));
        std::fs::write(&file, &conf).unwrap();
        let (code, out, err) = cclsim(&[&["tuner", file.to_str().unwrap()], &sweep[..]].concat());
        assert_eq!(code, 0, "{op}: {err}");
        let rows = per_size(&out);
        assert_eq!(rows.len(), 11, "{out}");
        assert!(rows.iter().all(|r| r.ends_with(" yes")), "{op}: {out}");
        // The model's per-size comment lines and the file's ranges agree.
        let commented = conf.lines().filter(|l| l.starts_with("#   ")).count();
        assert_eq!(commented, 11);
        // Above the sweep, the last line still holds: 16 GiB is a size.
        let (_, out, _) = cclsim(
            &[
                &["tuner", file.to_str().unwrap()],
                &sweep[..4],
                &["-b", "16G", "-e", "16G"],
            ]
            .concat(),
        );
        assert!(!per_size(&out)[0].contains("no rule"), "{op}: {out}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The user's path end to end: fit two public 2-node Polaris logs (they
/// name no collective: the rows tell), then ask the binary about 540 nodes.
#[test]
fn a_fit_of_two_logs_predicts_540_nodes_through_the_binary() {
    let dir = std::env::temp_dir().join(format!("cclsim-polaris-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prof = dir.join("polaris.json");
    let polaris = |f: &str| {
        format!(
            "{}/tests/fixtures/polaris-2.18/{f}",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    let (code, out, err) = cclsim(&[
        "fit",
        &polaris("n2_all_reduce.txt"),
        &polaris("n2_all_gather.txt"),
        "--out",
        prof.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("2 node(s) of 4 × NVIDIA A100-SXM4-40GB"),
        "{out}"
    );
    assert!(out.contains("2 NIC(s) of 25 GB/s per node"), "{out}");
    let (code, out, err) = cclsim(&[
        "predict",
        "--profile",
        prof.to_str().unwrap(),
        "--op",
        "allreduce",
        "--ranks",
        "2160",
        "--bytes",
        "1KiB",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["method"], "predicted");
    assert_eq!(v["prediction"]["runs"], "Tree/LL");
    assert_eq!(v["prediction"]["nodes"], 540);
    let (t, lo, hi) = (
        v["time_us"].as_f64().unwrap(),
        v["prediction"]["low_us"].as_f64().unwrap(),
        v["prediction"]["high_us"].as_f64().unwrap(),
    );
    assert!(lo < t && t < hi, "{v}");
    // Measured at 540 nodes (n540_all_reduce.txt): 280.4 µs.
    assert!(lo < 280.4 && 280.4 < hi, "{v}");
    assert!(
        v["prediction"]["note"]
            .as_str()
            .unwrap()
            .contains("540 nodes"),
        "{v}"
    );
    // The text output carries the note.
    let (_, text, _) = cclsim(&[
        "predict",
        "--profile",
        prof.to_str().unwrap(),
        "--op",
        "all_gather",
        "--ranks",
        "2160",
        "--bytes",
        "64MiB",
    ]);
    assert!(
        text.contains("measured at allreduce on 8 ranks (2 nodes)"),
        "{text}"
    );
}
