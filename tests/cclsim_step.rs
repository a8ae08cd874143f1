//! `cclsim step`: its JSON's fields, a composed step time, and one-line
//! errors naming the flag.

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

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

#[test]
fn step_json_has_the_documented_fields_and_adds_up() {
    let (code, out, err) = cclsim(&[
        "step",
        "--model",
        "llama3-8b",
        "--dp",
        "4",
        "--tp",
        "2",
        "--zero",
        "1",
        "--seq",
        "2048",
        "--batch",
        "8",
        "--topo",
        "h100-8",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
    let (compute, exposed, step) = (f("compute_us"), f("exposed_comm_us"), f("step_time_us"));
    // No pipeline: no bubble; step = compute + exposed communication.
    assert_eq!(f("bubble_us"), 0.0);
    assert!((step - (compute + exposed)).abs() < 1e-9 * step);
    // H100's cited peak: 6 · 8 030 261 248 · (8 · 2048) / 8 ranks /
    // (989e12 · 0.4) s.
    let want = 6.0 * 8_030_261_248.0 * 16_384.0 / 8.0 / (989e12 * 0.4) * 1e6;
    assert!((compute - want).abs() < 1e-6 * want);
    let cs = v["collectives"].as_array().unwrap();
    let kinds: Vec<&str> = cs
        .iter()
        .map(|c| c["primitive"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"reducescatter") && kinds.contains(&"allgather"));
    for c in cs {
        for k in [
            "primitive",
            "bytes",
            "group_ranks",
            "calls",
            "time_us",
            "purpose",
        ] {
            assert!(!c[k].is_null(), "{k} missing in {c}");
        }
        let calls = c["calls"].as_f64().unwrap();
        let total = c["total_us"].as_f64().unwrap();
        assert!((total - calls * c["time_us"].as_f64().unwrap()).abs() < 1e-6 * total);
    }
    // TP: 4 AllReduces per layer of b·s·h = 2·2048·4096 bf16 = 32 MiB.
    let tp = cs.iter().find(|c| c["group_ranks"] == 2).unwrap();
    assert_eq!(tp["bytes"], 32 << 20);
    assert_eq!(tp["calls"], 4 * 32);
    assert_eq!(tp["ranks"], serde_json::json!([0, 1]));
    // DP groups of 4 are tp = 2 apart.
    let dp = cs.iter().find(|c| c["group_ranks"] == 4).unwrap();
    assert_eq!(dp["ranks"], serde_json::json!([0, 2, 4, 6]));
}

#[test]
fn step_text_prints_the_table_and_the_share() {
    let (code, out, err) = cclsim(&[
        "step",
        "--model",
        "llama3-70b",
        "--dp",
        "8",
        "--batch",
        "8",
        "--topo",
        "910b-8",
        "--peak-tflops",
        "300",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("AllReduce") && out.contains("DDP bucket"),
        "{out}"
    );
    assert!(
        out.contains("exposed communication") && out.contains("tokens/s"),
        "{out}"
    );
}

#[test]
fn step_errors_name_the_flag_and_value() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "step",
            "--model",
            "llama3-70b",
            "--topo",
            "910b-8",
            "--peak-tflops",
            "300",
        ];
        a.extend_from_slice(extra);
        cclsim(&a)
    };
    let (code, _, err) = run(&["--dp", "2", "--tp", "3", "--batch", "8"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("cclsim: --tp 3: must divide"), "{err}");
    let (_, _, err) = run(&["--dp", "4", "--batch", "8"]);
    assert!(
        err.contains("--dp 4: dp·tp·pp·cp = 4·1·1·1 = 4 must equal the machine's 8 ranks"),
        "{err}"
    );
    // Context parallelism's ring hides behind attention: it must be counted.
    let (code, _, err) = run(&["--dp", "4", "--cp", "2", "--batch", "8"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "cclsim: --cp 2: 1 unless attention's FLOPs are counted (cclsim step --attention-flops"
        ),
        "{err}"
    );
    let (_, _, err) = run(&["--dp", "8", "--batch", "12"]);
    assert!(err.contains("--batch 12:"), "{err}");
    let (_, _, err) = cclsim(&[
        "step",
        "--model",
        "llama3-8b",
        "--dp",
        "8",
        "--batch",
        "8",
        "--topo",
        "910b-8",
    ]);
    assert!(err.contains("--peak-tflops none:"), "{err}");
}

#[test]
fn step_reads_a_model_from_its_config_json() {
    let dir = std::env::temp_dir().join(format!("cclsim-step-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    // mistralai/Mixtral-8x7B-v0.1's shape fields: the preset's figures.
    std::fs::write(
        &path,
        r#"{"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
            "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": false}"#,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let common = [
        "--dp", "8", "--ep", "4", "--batch", "8", "--topo", "h100-8", "--json",
    ];
    let mut a = vec!["step", "--config", p];
    a.extend_from_slice(&common);
    let (code, from_file, err) = cclsim(&a);
    assert_eq!(code, 0, "{err}");
    let mut b = vec!["step", "--model", "mixtral-8x7b"];
    b.extend_from_slice(&common);
    let (_, preset, _) = cclsim(&b);
    let (f, q) = (json(&from_file), json(&preset));
    assert_eq!(f["params"], 46_702_792_704u64);
    assert_eq!(f["step_time_us"], q["step_time_us"]);
    std::fs::write(&path, r#"{"hidden_size": 4096}"#).unwrap();
    let (code, _, err) = cclsim(&a);
    assert_eq!(code, 2);
    assert!(err.contains("intermediate_size missing"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cclsim step` of llama3-8b on h100-8 with a global batch of 8 and the
/// layout and other flags of `args`.
fn llama_8b_on_h100(args: &[&str]) -> (i32, String, String) {
    let mut all = vec![
        "step",
        "--model",
        "llama3-8b",
        "--batch",
        "8",
        "--topo",
        "h100-8",
    ];
    all.extend_from_slice(args);
    cclsim(&all)
}

/// `--vs`: the same step with link keys written over it, both reports and
/// each figure's pair; the pinned side (`a`) is the flags' own step.
#[test]
fn step_vs_sets_two_steps_side_by_side() {
    let (code, alone, err) = llama_8b_on_h100(&["--dp", "8", "--json"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) =
        llama_8b_on_h100(&["--dp", "8", "--json", "--vs", "step_tp=2&step_dp=4"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["a"], json(&alone));
    // TP 2 adds its AllReduces; the compute is the same FLOPs on 8 ranks.
    let prims: Vec<&str> = v["b"]["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["primitive"].as_str().unwrap())
        .collect();
    assert!(prims.iter().filter(|p| **p == "allreduce").count() >= 2);
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes[0]["figure"], "step_time_us");
    assert_eq!(changes[0]["a"], v["a"]["step_time_us"]);
    assert_eq!(changes[0]["b"], v["b"]["step_time_us"]);
    assert_eq!(changes[1]["a"], changes[1]["b"]);
    // A key that is not a link key is refused with the flag.
    let (code, _, err) = llama_8b_on_h100(&["--dp", "8", "--vs", "step_tpp=2"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--vs \"step_tpp=2\": step_tpp=2: unknown key"),
        "{err}"
    );
}

/// `--compress int8`: the gradient reductions say how they were timed;
/// the others say nothing.
#[test]
fn step_compress_marks_the_gradient_reductions() {
    let (code, out, err) =
        llama_8b_on_h100(&["--dp", "4", "--tp", "2", "--compress", "int8", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    for c in v["collectives"].as_array().unwrap() {
        let grad = c["purpose"].as_str().unwrap().contains("gradient");
        assert_eq!(c["compression"] == "int8", grad, "{c}");
    }
    let (code, _, err) = llama_8b_on_h100(&["--dp", "8", "--compress", "int4"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--compress \"int4\": none, int8, fp8e4m3 or fp8e5m2"),
        "{err}"
    );
}
