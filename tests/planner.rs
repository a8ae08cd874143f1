//! The planner worker's jobs (`runtime::planner`), natively: every answer
//! is the engine's own (the same figures `Plan::headline`, `Plan::new`,
//! `plan::sweep_curves`, `tune::text` and `determinism::compare` give,
//! which `cclsim` prints), it survives the CBOR trip to the page bit for
//! bit, a model-only plan reaches the page without what the page does not
//! show, and a configuration that cannot be planned is an answer with the
//! engine's words, never a panic.

use ccl_playground::engine::algorithm::Algorithm;
use ccl_playground::engine::config::{AlgoChoice, Config};
use ccl_playground::engine::determinism::{self, Versus};
use ccl_playground::engine::import::Import;
use ccl_playground::engine::plan::{self, Plan};
use ccl_playground::engine::tune::{self, Format};
use ccl_playground::runtime::planner::{
    answer, decode, encode, for_page, Answer, Carried, Job, Lane, Request, Response, WORKERS,
};
use std::process::Command;

fn config(q: &str) -> Config {
    let (c, errors) = Config::from_query(q);
    assert!(errors.is_empty(), "{q}: {errors:?}");
    c
}

/// Every response to `job` about `q`, each through encode / decode (the
/// page's view of it).
fn ask(q: &str, job: Job) -> Vec<Response> {
    ask_about(config(q), job)
}

/// [`ask`] about a configuration the link codec would not give.
fn ask_about(config: Config, job: Job) -> Vec<Response> {
    let req = Request { id: 7, config, job };
    // The request crosses to the worker too.
    let req: Request = decode(&encode(&req)).unwrap();
    let mut out = Vec::new();
    answer(&req, &mut |r| {
        let bytes = encode(&r);
        assert!(!bytes.is_empty());
        let back: Response = decode(&bytes).unwrap();
        // Nothing is lost on the way: the bytes of what arrives are the
        // bytes of what left.
        assert_eq!(encode(&back), bytes);
        out.push(back);
    });
    assert!(out.iter().all(|r| r.id == 7));
    assert!(out.last().unwrap().last, "the last response says so");
    assert!(out[..out.len() - 1].iter().all(|r| !r.last));
    out
}

#[test]
fn a_model_only_plan_comes_as_its_headline_and_its_full_plan() {
    let q = "topo=910b-16x8&ranks=128&bytes=1GiB&op=allreduce";
    let (rh, rf) = (ask(q, Job::Headline), ask(q, Job::Full));
    assert_eq!((rh.len(), rf.len()), (1, 1));
    let (h, f) = match (&rh[0].answer, &rf[0].answer) {
        (Ok(Answer::Headline(h)), Ok(Answer::Full(f))) => (h, f),
        other => panic!("{other:?}"),
    };
    let (h, f) = (
        (**h).clone().arrive(None).unwrap(),
        (**f).clone().arrive(None).unwrap(),
    );
    let c = config(q);
    let (want_h, want_f) = (Plan::headline(&c).unwrap(), Plan::new(&c).unwrap());
    // The machine is made again on arrival: the same one.
    assert_eq!(f.topology, want_f.topology);
    assert_eq!(h.topology, want_h.topology);
    // The same decision and figures, to the bit.
    assert_eq!(h.algorithm, want_h.algorithm);
    assert_eq!(
        h.estimate.time_us.to_bits(),
        want_h.estimate.time_us.to_bits()
    );
    assert_eq!(h.verdict, want_h.verdict);
    assert!(h.ranking.is_empty());
    assert_eq!(f.algorithm, want_f.algorithm);
    // The ranking's figures; its rows' timelines stay behind.
    assert_eq!(f.ranking.len(), want_f.ranking.len());
    for (a, b) in f.ranking.iter().zip(&want_f.ranking) {
        assert_eq!(
            (a.algorithm, a.method, a.steps),
            (b.algorithm, b.method, b.steps)
        );
        assert_eq!(a.time_us().to_bits(), b.time_us().to_bits());
        let (x, y) = (a.estimate.as_ref(), b.estimate.as_ref());
        assert_eq!(x.map(|e| e.busbw_gbps), y.map(|e| e.busbw_gbps));
        assert!(x.is_none_or(|e| e.timeline.steps.is_empty() && e.timeline.transfers.is_empty()));
    }
    assert_eq!(f.verdict, want_f.verdict);
    assert_eq!(f.details, want_f.details);
    assert_eq!(f.estimate.timeline.steps, want_f.estimate.timeline.steps);
    // The drawing's load per link: what the page colours links by.
    assert_eq!(f.link_loads, want_f.link_loads);
    assert!(f
        .link_loads
        .iter()
        .flatten()
        .any(|l| l.flows > 0 && l.busy_us > 0.0));
    assert_eq!(f.estimate.time_us, h.estimate.time_us);
    // What the page does not show above the drawn ranks stays behind; the
    // schedule's shape comes along.
    assert!(f.schedule.is_none() && f.verified.is_none());
    assert!(f.estimate.timeline.transfers.is_empty());
    assert!(f.estimate.timeline.routes.is_empty());
    assert!(f.estimate.timeline.link_busy.is_empty());
    assert!(!want_f.estimate.timeline.link_busy.is_empty());
    assert_eq!(f.schedule_steps, want_f.drawn_schedule().steps.len());
    assert_eq!(f.schedule_chunks, want_f.drawn_schedule().chunks);
    assert!(f.schedule_steps > 0 && f.schedule_chunks > 0);
}

/// `topo=custom&topology=…`: three devices on one switch, no library.
fn three_on_a_switch() -> String {
    let custom = r#"{"devices":[{"id":"g0"},{"id":"g1"},{"id":"g2"}],"switches":[{"id":"sw"}],"links":[{"a":"g0","b":"sw","bandwidth_gbps":50,"latency_us":1},{"a":"g1","b":"sw","bandwidth_gbps":50,"latency_us":1},{"a":"g2","b":"sw","bandwidth_gbps":50,"latency_us":1}]}"#;
    format!(
        "topo=custom&topology={}",
        form_urlencoded::byte_serialize(custom.as_bytes()).collect::<String>()
    )
}

#[test]
fn a_plan_arrives_on_the_machine_it_was_made_on() {
    // A fitted profile's link figures at this size, a degraded machine, a
    // custom topology: the machine made again on the page is the plan's.
    let custom = three_on_a_switch();
    for q in [
        "topo=910b-16x8&ranks=128&bytes=1MiB&slow=3:0.5&down=0-1",
        "topo=910b-8&ranks=8&bytes=4MiB&late=2:30",
        custom.as_str(),
    ] {
        let p = Plan::new(&config(q)).unwrap();
        let back: Carried = decode(&encode(&Carried::new(p.clone()))).unwrap();
        let back = back.arrive(None).unwrap();
        assert_eq!(back.topology, p.topology, "{q}");
        assert_eq!(
            back.estimate.time_us.to_bits(),
            p.estimate.time_us.to_bits()
        );
    }
}

#[test]
fn a_plan_keeps_the_previous_plans_machine_only_when_it_is_the_same() {
    // The log's fitted profile makes link figures that depend on the size.
    let log = ccl_playground::engine::formats::parse_log(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/hccl_test_910b_8_allreduce_synthetic.txt"
        ))
        .unwrap(),
    )
    .unwrap();
    let profile =
        ccl_playground::engine::calibrate::Profile::fit_table(&log.tables[0], None, "x").unwrap();
    let with_profile = |bytes: &str| {
        let mut c = config(&format!("topo=910b-8&ranks=8&bytes={bytes}"));
        c.profile = Some(profile.clone());
        c
    };
    let same = |a: &str, b: &str| (config(a), config(b));
    let cases = [
        // (previous, next, same machine)
        (
            same(
                "topo=910b-16x8&ranks=128&bytes=1GiB",
                "topo=910b-16x8&ranks=128&bytes=1MiB&algo=ring",
            ),
            true,
        ),
        (
            same(
                "topo=910b-16x8&ranks=128&bytes=1GiB&slow=3:0.5",
                "topo=910b-16x8&ranks=128&bytes=2GiB&slow=3:0.5",
            ),
            true,
        ),
        (
            same(
                "topo=910b-16x8&ranks=128&bytes=1GiB&slow=3:0.5",
                "topo=910b-16x8&ranks=128&bytes=1GiB",
            ),
            false,
        ),
        (
            same(
                "topo=910b-16x8&ranks=96&bytes=1GiB&down=0-1",
                "topo=910b-16x8&ranks=128&bytes=1GiB&down=0-1",
            ),
            false,
        ),
        (
            same(
                "topo=910b-16x8&ranks=128&bytes=1GiB",
                "topo=910b-32x8&ranks=128&bytes=1GiB",
            ),
            false,
        ),
        ((with_profile("1MiB"), with_profile("1MiB")), true),
        ((with_profile("1MiB"), with_profile("64MiB")), false),
    ];
    for ((a, b), want) in cases {
        assert_eq!(
            ccl_playground::engine::plan::same_machine(&a, &b),
            want,
            "{a:?} -> {b:?}"
        );
        let prev = Plan::headline(&a).unwrap();
        let next = Plan::headline(&b).unwrap();
        let back: Carried = decode(&encode(&Carried::new(next.clone()))).unwrap();
        // Whether kept or made again, the machine is the next plan's own.
        assert_eq!(
            back.arrive(Some(&prev)).unwrap().topology,
            next.topology,
            "{:?}",
            b.to_query()
        );
    }
}

#[test]
fn at_1024_ranks_the_schedule_is_streamed_not_held() {
    // pipeline on 128 servers holds 2.6 M transfers; the plan walks them
    // and keeps the shape only.
    let c = config("topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce");
    let p = Plan::new(&c).unwrap();
    assert_eq!(p.algorithm, Algorithm::Pipeline);
    assert!(p.schedule.is_none());
    assert_eq!(p.schedule_chunks, 1024);
    let row = p
        .ranking
        .iter()
        .find(|r| r.algorithm == p.algorithm)
        .unwrap();
    assert_eq!(p.schedule_steps, row.steps);
    assert!(p.schedule_steps > 0);
    // for_page keeps a drawn plan as it is.
    let drawn = Plan::new(&config("ranks=8")).unwrap();
    let kept = for_page(drawn.clone());
    assert_eq!(kept.schedule, drawn.schedule);
    assert_eq!(kept.estimate, drawn.estimate);
}

#[test]
fn the_chart_tuning_and_determinism_answers_are_the_engines() {
    let q = "topo=910b-8&ranks=8&op=allreduce&bytes=1MiB&dtype=fp16";
    let c = config(q);
    let sizes = plan::chart_sizes();
    let r = ask(
        q,
        Job::Curves {
            sizes: sizes.clone(),
        },
    );
    let Ok(Answer::Curves(curves)) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    let want: Vec<_> = plan::sweep_curves(&c, &sizes)
        .unwrap()
        .into_iter()
        .filter(|c| c.skipped.is_none())
        .collect();
    assert_eq!(*curves, want);
    assert!(curves.len() >= 3);

    let tune_sizes: Vec<u64> = (0..11).map(|i| 1024u64 << (2 * i)).collect();
    let r = ask(
        "topo=h100-8&ranks=8&op=allreduce",
        Job::Tune {
            format: Format::NcclTunerCsv,
            sizes: tune_sizes.clone(),
        },
    );
    let Ok(Answer::Tune(text)) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    assert_eq!(
        *text,
        tune::text(
            &config("topo=h100-8&ranks=8&op=allreduce"),
            Format::NcclTunerCsv,
            &tune_sizes
        )
        .unwrap()
    );
    assert!(text.contains("allreduce,"), "{text}");

    let job = Job::Determinism {
        algorithm: Algorithm::Mesh,
        versus: Versus::Algorithm(Algorithm::Ring),
        fixed: true,
        element: 3,
    };
    let r = ask(q, job);
    let Ok(Answer::Determinism(d)) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    let want = determinism::compare(
        &c,
        Algorithm::Mesh,
        Versus::Algorithm(Algorithm::Ring),
        true,
        3,
    )
    .unwrap();
    assert_eq!(**d, want);
}

#[test]
fn what_cannot_be_planned_is_an_answer_in_the_engines_words() {
    // ring does not implement AlltoAll (a link falls back to auto; a
    // configuration made otherwise must not panic): the plan's own error,
    // one response.
    let mut c = config("topo=910b-16x8&ranks=128&op=alltoall");
    c.algo = AlgoChoice::Fixed(Algorithm::Ring);
    let want = Plan::headline(&c).unwrap_err().to_string();
    for job in [Job::Headline, Job::Full, Job::Ranked] {
        let r = ask_about(c.clone(), job);
        assert_eq!(r.len(), 1);
        let Err(e) = &r[0].answer else {
            panic!("{:?}", r[0].answer)
        };
        // One sentence from both (the page says it once).
        assert_eq!(*e, want);
        assert!(e.contains("ring"), "{e}");
    }
    // The determinism card's refusal above the compared ranks.
    let r = ask(
        "topo=910b-128x8&ranks=1024&bytes=1GiB&op=allreduce",
        Job::Determinism {
            algorithm: Algorithm::Pipeline,
            versus: Versus::Algorithm(Algorithm::Ring),
            fixed: false,
            element: 0,
        },
    );
    let Err(e) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    assert!(
        e.starts_with("ranks=1024: the determinism comparison runs on 2..=64 ranks"),
        "{e}"
    );
    // Bytes that are not a request: an error, no panic.
    assert!(decode::<Request>(&[0xff, 0x00, 0x13]).is_err());
    assert!(decode::<Request>(&[]).is_err());
}

#[test]
fn every_f64_crosses_bit_for_bit() {
    // JSON would turn these into null (and fail to read them back).
    for x in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        5e-324,
        0.1,
    ] {
        let back: f64 = decode(&encode(&x)).unwrap();
        assert_eq!(back.to_bits(), x.to_bits(), "{x}");
    }
}

#[test]
fn the_lanes_go_headline_first_and_the_headline_has_a_worker_of_its_own() {
    let mut lanes = vec![
        Job::Determinism {
            algorithm: Algorithm::Ring,
            versus: Versus::Fp32,
            fixed: false,
            element: 0,
        }
        .lane(),
        Job::Tune {
            format: Format::Hccl,
            sizes: vec![],
        }
        .lane(),
        Job::Curves { sizes: vec![] }.lane(),
        Job::Full.lane(),
        Job::Headline.lane(),
    ];
    lanes.sort();
    assert_eq!(
        lanes,
        [
            Lane::Headline,
            Lane::Full,
            Lane::Curves,
            Lane::Tune,
            Lane::Determinism
        ]
    );
    // No slow job shares the headline's worker, so none delays it.
    let workers: Vec<usize> = lanes.iter().map(|l| l.worker()).collect();
    assert_eq!(workers, [0, 1, 1, 1, 1]);
    assert!(workers.iter().all(|&w| w < WORKERS));
}

#[test]
fn cclsim_tune_prints_the_text_the_card_shows() {
    let out = Command::new(env!("CARGO_BIN_EXE_cclsim"))
        .args([
            "tune",
            "--topo",
            "h100-8",
            "--op",
            "allreduce",
            "-b",
            "1K",
            "-e",
            "1G",
            "-f",
            "4",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sizes: Vec<u64> = (0..11).map(|i| 1024u64 << (2 * i)).collect();
    let want = tune::text(
        &config("topo=h100-8&op=allreduce&bytes=1K"),
        Format::NcclTunerCsv,
        &sizes,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        want.trim_end()
    );
}

/// A drawn page makes its plan without the ranking (`Plan::unranked`)
/// and asks the worker for it (`Job::Ranked`, on the headline's lane:
/// never held behind a run). Together they are `Plan::new`: the unranked
/// plan is the full plan in every field but the ranking and its words,
/// and the answer is the full plan's ranking (rows without timelines) and
/// words. The cases are the ones whose ranking was a main-thread task of
/// 170–430 ms: NCCL's h100-8 at 1 GiB, 64 ranks with slices=8, and a
/// fixed algorithm (its decision says what auto would pick).
#[test]
fn a_drawn_plan_and_its_ranking_from_the_worker_are_the_full_plan() {
    for q in [
        "topo=h100-8&bytes=1GiB",
        "topo=910b-8x8&ranks=64&slices=8",
        "topo=910b-8&ranks=8&algo=ring&bytes=256MiB",
        "ranks=8&slow=3:0.5",
    ] {
        let c = config(q);
        let full = Plan::new(&c).unwrap();
        let unranked = Plan::unranked(&c).unwrap();
        assert!(unranked.ranking.is_empty(), "{q}");
        assert!(full.ranking.len() > 1, "{q}");
        // Every other field equal (the ranking's words aside).
        let strip = |p: &Plan| {
            let mut v = serde_json::to_value(p).unwrap();
            let o = v.as_object_mut().unwrap();
            // The decision too is the same: these machines' libraries have
            // a rule, so what auto would pick needs no ranking.
            for k in ["ranking", "verdict", "details"] {
                assert!(o.remove(k).is_some(), "{k}");
            }
            v
        };
        assert_eq!(strip(&unranked), strip(&full), "{q}");
        assert_eq!(
            unranked.verified.as_ref().map(|v| format!("{:?}", v.trace)),
            full.verified.as_ref().map(|v| format!("{:?}", v.trace)),
            "{q}"
        );
        let r = ask(q, Job::Ranked);
        assert_eq!(r.len(), 1);
        assert_is_the_ranking_of(q, &r[0].answer, &full);
    }
    assert_eq!(Job::Ranked.lane(), Lane::Headline);
}

/// `answer` is [`Answer::Ranked`] with `full`'s ranking (rows without
/// timelines, times to the bit) and words.
fn assert_is_the_ranking_of(q: &str, answer: &Result<Answer, String>, full: &Plan) {
    let Ok(Answer::Ranked(got)) = answer else {
        panic!("{q}: {answer:?}");
    };
    let want = full.ranked();
    assert_eq!(
        (&got.decision, &got.verdict, &got.details),
        (&want.decision, &want.verdict, &want.details),
        "{q}"
    );
    assert_eq!(got.ranking.len(), want.ranking.len(), "{q}");
    for (g, w) in got.ranking.iter().zip(&want.ranking) {
        assert_eq!(
            (g.algorithm, g.steps, g.method),
            (w.algorithm, w.steps, w.method),
            "{q}"
        );
        assert_eq!(
            g.time_us().to_bits(),
            w.time_us().to_bits(),
            "{q} {}",
            g.algorithm
        );
        if let Some(e) = &g.estimate {
            assert!(e.timeline.transfers.is_empty() && e.timeline.steps.is_empty());
        }
    }
}

/// What the drawn page makes on its main thread and what it leaves to the
/// planner worker ([`Plan::on_page`]): a pipelined (sliced) simulation, a
/// fusion view on a machine that slices, `auto` by the model's fastest
/// and a model-only plan go to the worker; the rest is [`Plan::unranked`]'s
/// plan. The worker's answer ([`Job::Drawn`], on the headline's lane) is
/// that plan, which the page verifies again (the same trace as the full
/// plan's, the same estimate to the bit), then the full plan's ranking
/// and words. The pipelined
/// cases were main-thread tasks of 100–507 ms (h100-8 at 1 GiB, 64 ranks
/// with `slices=8`, `slices=256&algo=nb`: 0.1–0.5 s natively).
#[test]
fn a_costly_drawn_plan_is_made_in_the_worker_and_verified_on_the_page() {
    use plan::{Offload, OnPage};
    let custom = format!("{}&ranks=3&bytes=1MiB", three_on_a_switch());
    let custom_ring = format!("{custom}&algo=ring&bytes=256KiB");
    // `None`: made on the page.
    let cases = [
        ("", None),
        ("topo=910b-8x8&ranks=64&algo=mesh", None),
        // HCCL does not slice; slices=1 is the unsliced model.
        ("topo=910b-8&ranks=8&bytes=1GiB", None),
        ("topo=h100-8&bytes=1GiB&slices=1", None),
        // 256 KiB / 8 ranks: every transfer within one of NCCL's 1 MiB slices.
        ("topo=h100-8&bytes=256KiB", None),
        // A ring's 128 MiB transfers in NCCL's 1 MiB slices.
        (
            "topo=h100-8&bytes=1GiB&algo=ring",
            Some(Offload::Pipelined { slices: 128 }),
        ),
        (
            "topo=910b-8x8&ranks=64&slices=8",
            Some(Offload::Pipelined { slices: 8 }),
        ),
        (
            "topo=h100-8&bytes=1MiB&fusion=llama3-8b",
            Some(Offload::Fusion),
        ),
        // Compression on a machine that slices: its own schedule's slices.
        (
            "topo=h100-8&bytes=64MiB&algo=ring&compress=int8&placement=once",
            Some(Offload::CompressedPipelined),
        ),
        // HCCL's fusion view: each bucket by HCCL's rule, unsliced.
        ("topo=910b-8&bytes=1MiB&fusion=llama3-8b", None),
        (custom.as_str(), Some(Offload::ModelsFastest)),
        ("topo=910b-16x8&ranks=128", Some(Offload::ModelOnly)),
    ];
    for (q, want) in cases {
        let c = config(q);
        match (Plan::on_page(&c).unwrap(), want) {
            (OnPage::Made(p), None) => {
                let unranked = Plan::unranked(&c).unwrap();
                assert_eq!(
                    serde_json::to_value(&*p).unwrap(),
                    serde_json::to_value(&unranked).unwrap(),
                    "{q}"
                );
                assert!(p.verified.is_some(), "{q}");
            }
            (OnPage::Offload(got), Some(want)) => assert_eq!(got, want, "{q}"),
            (OnPage::Made(_), Some(w)) => panic!("{q}: made on the page, not {w:?}"),
            (OnPage::Offload(w), None) => panic!("{q}: offloaded ({w:?})"),
        }
    }
    // A fixed algorithm on the custom machine needs no ranking to decide;
    // its fusion view does (each bucket's auto is the model's fastest).
    assert!(matches!(
        Plan::on_page(&config(&custom_ring)).unwrap(),
        OnPage::Made(_)
    ));
    assert!(matches!(
        Plan::on_page(&config(&format!("{custom_ring}&slices=1&fusion=llama3-8b"))).unwrap(),
        OnPage::Offload(Offload::Fusion)
    ));
    assert_eq!(Job::Drawn.lane(), Lane::Headline);
    for q in [
        "topo=h100-8&bytes=1GiB",
        "topo=910b-8x8&ranks=64&slices=8",
        "topo=910b-8x8&ranks=64&slices=256&algo=nb",
        custom.as_str(),
    ] {
        let c = config(q);
        assert!(
            matches!(Plan::on_page(&c).unwrap(), OnPage::Offload(_)),
            "{q}"
        );
        let full = Plan::new(&c).unwrap();
        let unranked = Plan::unranked(&c).unwrap();
        let r = ask(q, Job::Drawn);
        assert_eq!(r.len(), 2, "{q}: the plan, then its ranking");
        assert!(!r[0].last && r[1].last);
        let Ok(Answer::Drawn(carried)) = r[0].answer.clone() else {
            panic!("{q}: {:?}", r[0].answer);
        };
        let got = carried.arrive(None).unwrap();
        assert!(got.verified.is_none(), "{q}: the trace does not cross");
        let got = got.with_verification().unwrap();
        assert_eq!(
            got.verified.as_ref().map(|v| format!("{:?}", v.trace)),
            full.verified.as_ref().map(|v| format!("{:?}", v.trace)),
            "{q}"
        );
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&unranked).unwrap(),
            "{q}: the unranked plan crosses whole, its machine made again"
        );
        assert_eq!(
            serde_json::to_value(&got.estimate).unwrap(),
            serde_json::to_value(&full.estimate).unwrap(),
            "{q}: the full plan's estimate and drawn timeline"
        );
        assert_eq!(got.schedule, full.schedule, "{q}");
        assert_is_the_ranking_of(q, &r[1].answer, &full);
    }
}

/// The training-step card's job: the engine's own report (what `cclsim
/// step` prints), on the slow worker; a machine without a cited peak is
/// an answer naming `peak_tflops`.
#[test]
fn step_job_is_the_engines_step() {
    use ccl_playground::engine::step::{self, StepInput};
    let c = config("v=1&topo=h100-8&ranks=8");
    let input = StepInput::default();
    let job = Job::Step {
        input: input.clone(),
        vs: None,
    };
    assert_eq!(job.lane(), Lane::Step);
    assert_eq!(Lane::Step.worker(), 1);
    let r = ask_about(c.clone(), job);
    assert_eq!(r.len(), 1);
    assert!(r[0].last);
    let Ok(Answer::Step(s, None)) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    assert_eq!(**s, step::step(&input, &c).unwrap());

    // Pinned beside it: the same step with int8 gradients; the answer is
    // the engine's comparison.
    let z = StepInput {
        compress: ccl_playground::engine::quantization::Scheme::Int8,
        ..input.clone()
    };
    let vs = step::link::full_query(&c, &z);
    let r = ask_about(
        c.clone(),
        Job::Step {
            input: input.clone(),
            vs: Some(vs.clone()),
        },
    );
    let Ok(Answer::Step(s, Some(pinned))) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    let want = step::step_vs(&input, &c, Some(&vs)).unwrap();
    assert_eq!(**s, want.0);
    let p = pinned.as_ref().as_ref().unwrap();
    assert_eq!(Some(Ok(p.clone())), want.1);
    assert_eq!(p.report, step::step(&z, &c).unwrap());
    assert_eq!(
        p.differs,
        [(
            "step_compress".to_string(),
            "int8".to_string(),
            String::new()
        )]
    );
    // A pinned step that cannot be made is said beside the current one.
    let r = ask_about(
        c.clone(),
        Job::Step {
            input: input.clone(),
            vs: Some("v=1&topo=h100-8&step_tp=3".into()),
        },
    );
    let Ok(Answer::Step(_, Some(bad))) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    assert!(
        bad.as_ref().as_ref().unwrap_err().contains("tp=3"),
        "{bad:?}"
    );

    let r = ask("v=1", Job::Step { input, vs: None });
    let Err(e) = &r[0].answer else {
        panic!("{:?}", r[0].answer)
    };
    assert!(e.contains("peak_tflops"), "{e}");
}

#[test]
fn a_pasted_log_is_read_and_fitted_in_the_worker_as_on_the_page() {
    // The public 8×H100 five-collective log (tests/fixtures/nccl-tests):
    // five tables; on an AllGather page the AllGather table is fitted.
    let text = include_str!("fixtures/nccl-tests/nccl_h100_1node_5colls_16.txt");
    let q = "v=1&topo=h100-8&ranks=8&op=allgather";
    let r = ask(
        q,
        Job::Import {
            text: text.to_string(),
            table: None,
        },
    );
    assert_eq!(r.len(), 1);
    let Ok(Answer::Import(got)) = &r[0].answer else {
        panic!("{:?}", r[0].answer.as_ref().err())
    };
    let c = config(q);
    let here = Import::new(text, None, c.primitive, c.ranks);
    assert_eq!(**got, here);
    let log = here.parsed.as_ref().unwrap().as_ref().unwrap();
    assert_eq!(log.tables.len(), 5);
    let t = &log.tables[here.table];
    assert_eq!(
        t.collective.as_ref().and_then(|c| c.primitive()),
        Some(c.primitive)
    );
    assert!(matches!(here.fit, Some(Ok(_))));
    // A chosen table is the one fitted; an empty text is nothing.
    let r = ask(
        q,
        Job::Import {
            text: text.to_string(),
            table: Some(0),
        },
    );
    let Ok(Answer::Import(first)) = &r[0].answer else {
        panic!()
    };
    assert_eq!(first.table, 0);
    let r = ask(
        q,
        Job::Import {
            text: " \n".into(),
            table: None,
        },
    );
    let Ok(Answer::Import(none)) = &r[0].answer else {
        panic!()
    };
    assert_eq!(**none, Import::empty());
    assert_eq!(
        Job::Import {
            text: String::new(),
            table: None
        }
        .lane(),
        Lane::Import
    );
    assert_eq!(Lane::Import.worker(), 1);
}
