//! A tuner file read as what it makes the library run at each size of the
//! page's chart, beside the model's recommendation
//! (`tune::compare_tuner`, the one function `cclsim tuner --op` and the
//! page's tuner card call), on the public files in tests/fixtures/readers
//! and on what `cclsim tune` writes.

use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::config::Config;
use ccl_playground::engine::formats::tuner::Bounds;
use ccl_playground::engine::plan::{self, chart_sizes};
use ccl_playground::engine::topology::Library;
use ccl_playground::engine::tune::{
    self, compare_tuner, Apart, CompareError, Format, Run, TunerComparison, TunerQuery,
};
use ccl_playground::runtime::planner::{answer, decode, encode, Answer, Job, Lane, Request};

fn readers(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/readers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn config(q: &str) -> Config {
    let (c, errors) = Config::from_query(q);
    assert!(errors.iter().all(|e| e.is_notice()), "{q}: {errors:?}");
    c
}

/// `compare_tuner` of `text` for the page at `q`, with the model.
fn modelled(text: &str, q: &str) -> TunerComparison {
    let c = config(q);
    compare_tuner(text, &TunerQuery::modelled(&c), &chart_sizes()).unwrap()
}

/// Each run of sizes as `(first, last, file's choice and line, model's)`.
fn runs(t: &TunerComparison) -> Vec<(u64, u64, Option<(String, usize)>, Option<String>)> {
    t.runs()
        .into_iter()
        .map(|Run { first, last }| {
            let r = &t.rows[first];
            (
                r.bytes,
                t.rows[last].bytes,
                r.rule.as_ref().map(|x| (x.choice.clone(), x.line)),
                r.model_name.clone(),
            )
        })
        .collect()
}

fn s(x: &str) -> Option<String> {
    Some(x.to_string())
}

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

#[test]
fn nccls_sample_performance_data_beside_the_model_on_h100() {
    let csv = readers("nccl_tuner_sample_performance_data.csv");
    let t = modelled(&csv, "v=1&topo=h100-8&op=allreduce");
    assert_eq!((t.ranks, t.nodes, t.dtype.as_str()), (8, Some(1), "fp32"));
    assert_eq!(t.machine, Some(("h100-8".to_string(), Library::Nccl)));
    assert_eq!(t.apart, None);
    assert_eq!(t.rows.len(), 21);
    // optimize_config.py's ranges for 1 node × 8 ranks: up to 16896 B
    // ring/simple (10.8 µs at 1 KiB), to 540672 B ring/ll128, to 1 MiB
    // nvls/simple; above the largest measured size no line matches.
    assert_eq!(
        runs(&t),
        [
            (KIB, 16 * KIB, Some(("ring/simple".into(), 3)), s("ring/ll")),
            (
                32 * KIB,
                512 * KIB,
                Some(("ring/ll128".into(), 8)),
                s("ring/ll")
            ),
            (MIB, MIB, Some(("nvls/simple".into(), 11)), s("ring/ll")),
            (2 * MIB, GIB, None, s("nvls/simple")),
        ]
    );
    let mib = &t.rows[10];
    assert_eq!(mib.bytes, MIB);
    let rule = mib.rule.as_ref().unwrap();
    assert_eq!((rule.channels, rule.cost), (Some(16), Some(32.1)));
    assert_eq!(mib.same, Some(false));
    // Where no line matches, NCCL's own choice runs: no verdict is "same".
    assert!(t.rows.iter().all(|r| r.same == Some(false)));
    // Broadcast has lines of its own: the fastest row of each size
    // (tree/simple 8.2 µs at 1 KiB; ring/ll128 on 4 channels, 15.2 µs at
    // 32 KiB, and on 8, 28.3 µs at 1 MiB: two lines, not merged).
    let b = modelled(&csv, "v=1&topo=h100-8&op=broadcast");
    assert_eq!(
        runs(&b)
            .iter()
            .map(|r| (r.0, r.2.clone()))
            .collect::<Vec<_>>(),
        [
            (KIB, Some(("tree/simple".into(), 12))),
            (32 * KIB, Some(("ring/ll128".into(), 15))),
            (MIB, Some(("ring/ll128".into(), 17))),
            (2 * MIB, None),
        ]
    );
}

#[test]
fn hccls_tuner_plugin_rules_beside_the_model_on_910b() {
    let json = readers("hccl_tuner_config.json");
    // AllGather: every rank count up to 2^32 - 1, sizes up to 1 MiB.
    let t = modelled(&json, "v=1&topo=910b-8&op=allgather");
    assert_eq!(t.apart, Some(Apart::HcclNames));
    assert_eq!(t.machine, Some(("910b-8".to_string(), Library::Hccl)));
    assert_eq!(
        runs(&t),
        [
            (KIB, MIB, Some(("aicpu/sole/mesh".into(), 36)), s("mesh")),
            (2 * MIB, GIB, None, s("mesh")),
        ]
    );
    // AllReduce: fp16 up to 64 KiB (inclusive) on 8 to 16 ranks is NHR;
    // exactly 8 ranks from 64 KiB meshoneshot, first match first.
    let fp16 = modelled(&json, "v=1&topo=910b-8&op=allreduce&dtype=fp16");
    assert_eq!(
        runs(&fp16)
            .iter()
            .map(|r| (r.0, r.1, r.2.clone()))
            .collect::<Vec<_>>(),
        [
            (KIB, 64 * KIB, Some(("aicpu/sole/nhr".into(), 7))),
            (128 * KIB, GIB, Some(("aicpu/sole/meshoneshot".into(), 20))),
        ]
    );
    // fp32 matches no data_type rule: below 64 KiB HCCL chooses itself.
    let fp32 = modelled(&json, "v=1&topo=910b-8&op=allreduce");
    assert_eq!(
        runs(&fp32)
            .iter()
            .map(|r| (r.0, r.1, r.2.clone()))
            .collect::<Vec<_>>(),
        [
            (KIB, 32 * KIB, None),
            (64 * KIB, GIB, Some(("aicpu/sole/meshoneshot".into(), 20))),
        ]
    );
    // Our bf16 is HCCL's bfloat16 / bfp16 (plugin.cpp g_dataTypeMap).
    let bf = json.replace("\"data_type\": \"fp16\"", "\"data_type\": \"bfp16\"");
    let bf16 = modelled(&bf, "v=1&topo=910b-8&op=allreduce&dtype=bf16");
    assert_eq!(bf16.dtype, "bf16");
    assert_eq!(
        bf16.rows[0].rule.as_ref().map(|r| r.line),
        Some(7),
        "{:?}",
        bf16.rows[0]
    );
    // 16 ranks on two servers: the fp16 rule holds (8..=16 ranks), the
    // meshoneshot one (exactly 8) does not; a run ends where the model's
    // choice changes too (HCCL's pipeline from 1 MiB per rank).
    let two = modelled(&json, "v=1&topo=910b-2x8&op=allreduce&dtype=fp16");
    assert_eq!((two.ranks, two.nodes), (16, Some(2)));
    assert_eq!(
        runs(&two),
        [
            (KIB, 64 * KIB, Some(("aicpu/sole/nhr".into(), 7)), s("hier")),
            (128 * KIB, 8 * MIB, None, s("hier")),
            (16 * MIB, GIB, None, s("pipeline")),
        ]
    );
    // The file's communicators, for a page that matches none.
    let b = |lo, hi| Bounds {
        min: Some(lo),
        max: Some(hi),
    };
    assert_eq!(
        t.scopes(),
        [
            (Primitive::AllReduce, b(8, 16), Bounds::ANY),
            (Primitive::AllReduce, b(8, 8), Bounds::ANY),
            (Primitive::AllGather, b(0, 4294967295), Bounds::ANY),
        ]
    );
}

/// What `cclsim tune --format nccl-tuner-csv` writes makes NCCL run, at
/// every size of the chart, exactly what the model recommends.
#[test]
fn the_config_cclsim_tune_writes_agrees_with_the_model_at_every_size() {
    for op in ["allreduce", "allgather", "reducescatter", "broadcast"] {
        let q = format!("v=1&topo=h100-8&op={op}");
        let c = config(&q);
        let text = tune::text(&c, Format::NcclTunerCsv, &chart_sizes()).unwrap();
        let t = modelled(&text, &q);
        assert_eq!(t.apart, None, "{op}");
        assert!(
            t.rows.iter().all(|r| r.same == Some(true)),
            "{op}: {}",
            t.render()
        );
        assert!(
            t.rows.iter().all(|r| r.rule.as_ref().unwrap().line >= 4),
            "{op}"
        );
    }
    // The same file on HCCL's machine: what NCCL would run, shown beside
    // HCCL's choice, not compared.
    let c = config("v=1&topo=h100-8&op=allreduce");
    let text = tune::text(&c, Format::NcclTunerCsv, &chart_sizes()).unwrap();
    let t = modelled(&text, "v=1&topo=910b-8&op=allreduce");
    assert_eq!(
        t.apart,
        Some(Apart::OtherLibrary {
            file: Library::Nccl,
            machine: Library::Hccl
        })
    );
    assert!(t
        .rows
        .iter()
        .all(|r| r.rule.is_some() && r.same == Some(false)));
}

#[test]
fn without_the_model_the_files_side_alone() {
    let csv = readers("nccl_tuner_sample_performance_data.csv");
    let c = config("v=1&topo=h100-8&op=allreduce");
    let machine = plan::machine(&c).unwrap();
    let t = compare_tuner(&csv, &TunerQuery::file_only(&c, &machine), &chart_sizes()).unwrap();
    assert_eq!(
        (t.ranks, t.nodes, t.apart),
        (8, Some(1), Some(Apart::NoModel))
    );
    assert!(t.rows.iter().all(|r| r.model.is_none() && r.same.is_none()));
    // The same file's side as with the model.
    let m = modelled(&csv, "v=1&topo=h100-8&op=allreduce");
    assert_eq!(
        t.rows.iter().map(|r| r.rule.clone()).collect::<Vec<_>>(),
        m.rows.iter().map(|r| r.rule.clone()).collect::<Vec<_>>()
    );
    // The CLI's wording of the view.
    let text = t.render();
    assert!(
        text.starts_with("# per size: allreduce on 8 ranks (1 node(s)), fp32: the file's rule\n"),
        "{text}"
    );
    assert!(
        text.contains("\n       1 MiB  nvls/simple (line 11) "),
        "{text}"
    );
    // 128 ranks on 16 servers: no line of the file matches.
    let c = config("v=1&topo=910b-16x8&op=allreduce");
    let machine = plan::machine(&c).unwrap();
    let t = compare_tuner(&csv, &TunerQuery::file_only(&c, &machine), &chart_sizes()).unwrap();
    assert_eq!((t.ranks, t.nodes), (128, Some(16)));
    assert!(t.rows.iter().all(|r| r.rule.is_none()));
    let no_ranks = TunerQuery {
        ranks: None,
        ..TunerQuery::file_only(&c, &machine)
    };
    assert_eq!(
        compare_tuner(&csv, &no_ranks, &[KIB]).unwrap_err(),
        CompareError::NoRanks
    );
}

#[test]
fn a_file_that_cannot_be_read_says_where_what_and_what_is_allowed() {
    let c = config("v=1&topo=h100-8&op=allreduce");
    let q = TunerQuery::modelled(&c);
    let err = |text: &str| compare_tuner(text, &q, &[KIB]).unwrap_err().to_string();
    let csv = readers("nccl_tuner_sample_performance_data.csv");
    assert_eq!(
        err(&csv.replacen(
            "allreduce,32768,ring,simple,4",
            "allreduce,32768,ring,simple,four",
            1
        )),
        "line 7: channels is `four`; expected an integer (-1 for any)"
    );
    assert_eq!(
        err(&readers("hccl_tuner_config.json").replacen("\"nhr\"", "\"nhrr\"", 1)),
        "HCCL's tuner plugin ignores this whole file (any schema error and plugin.cpp does not intervene): op_types.allreduce.rules[0]: invalid template 'nhrr' (expected one of mesh, mesh2die, meshoneshot, meshtwoshot, meshconcur, meshmultilink, meshchunk, meshchunktwoshot, nhr, nhrmultilink)"
    );
    assert_eq!(
        err("{\"version\": 1, \"op_types\": {\n  \"allreduce\": [\n}"),
        "line 3, column 1: not valid JSON (expected value)"
    );
    assert!(
        err("hello, world").starts_with("not a tuner file: expected NCCL's example tuner config")
    );
    // Never a panic: every prefix of every file is an answer or an error.
    for text in [csv, readers("hccl_tuner_config.json")] {
        for cut in (0..text.len()).step_by(7) {
            if text.is_char_boundary(cut) {
                let _ = compare_tuner(&text[..cut], &q, &[KIB, MIB]);
            }
        }
    }
}

/// The page asks the planner worker (the model's side is a sweep: seconds
/// at thousands of ranks); the answer crosses to the page whole.
#[test]
fn the_planner_worker_answers_with_the_same_comparison() {
    let json = readers("hccl_tuner_config.json");
    let q = "v=1&topo=910b-8&op=allgather";
    let job = Job::Tuner {
        text: json.clone(),
        sizes: chart_sizes(),
    };
    assert_eq!(job.lane(), Lane::Tuner);
    assert_eq!(job.lane().worker(), 1);
    let req: Request = decode(&encode(&Request {
        id: 3,
        config: config(q),
        job,
    }))
    .unwrap();
    let mut got = Vec::new();
    answer(&req, &mut |r| got.push(encode(&r)));
    assert_eq!(got.len(), 1);
    let r: ccl_playground::runtime::planner::Response = decode(&got[0]).unwrap();
    let Ok(Answer::Tuner(t)) = r.answer else {
        panic!("{:?}", r.answer)
    };
    assert_eq!(*t, modelled(&json, q));
    // A file that cannot be read: the engine's words.
    let mut got = Vec::new();
    let bad = Request {
        id: 4,
        config: config(q),
        job: Job::Tuner {
            text: "allreduce,0".into(),
            sizes: chart_sizes(),
        },
    };
    answer(&bad, &mut |r| got.push(r));
    assert!(matches!(&got[0].answer, Err(e) if e.starts_with("not a tuner file")));
}
