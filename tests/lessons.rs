//! The guided lessons (`lessons/*.json`): every file parses, every lesson
//! has 3..=6 stops, every stop's link decodes without an error or a notice
//! and plans, its step exists, its highlight exists in that plan, and its
//! words exist in every language; every model figure the words quote is
//! the model's, in both languages (`every_figure_a_lesson_quotes_is_the_models`).
//! `LESSONS_PRINT=1` prints each stop's plan (algorithm, times, ranking) —
//! what the narration's numbers rest on.

use ccl_playground::engine::compressed::CompressedCheck;
use ccl_playground::engine::config::Config;
use ccl_playground::engine::plan::Plan;
use ccl_playground::i18n::{self, Lang};
use ccl_playground::lessons::{self, Look, PANELS};

#[test]
fn every_lesson_file_parses_and_ids_are_unique() {
    let parsed = lessons::parse_all();
    for (i, p) in parsed.iter().enumerate() {
        assert!(p.is_ok(), "lesson file {i}: {:?}", p.as_ref().err());
    }
    let all = lessons::all();
    assert!(all.len() >= 8, "at least eight lessons");
    let mut ids: Vec<&str> = all.iter().map(|l| l.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "duplicate lesson ids");
    for l in all {
        assert!(
            (3..=6).contains(&l.stops.len()),
            "{}: {} stops",
            l.id,
            l.stops.len()
        );
    }
}

#[test]
fn every_stop_decodes_cleanly_plans_and_its_highlight_exists() {
    let print = std::env::var_os("LESSONS_PRINT").is_some();
    for l in lessons::all() {
        for (k, s) in l.stops.iter().enumerate() {
            let at = format!("{} stop {}", l.id, k + 1);
            let (config, errors) = Config::from_query(&s.query);
            assert!(errors.is_empty(), "{at}: {errors:?}");
            let plan = Plan::new(&config).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(plan.drawn(), "{at}: not drawn");
            assert!(
                s.step <= plan.steps(),
                "{at}: step {} of {}",
                s.step,
                plan.steps()
            );
            match &s.look {
                Look::Cell { rank, chunk } => {
                    assert!(*rank < config.ranks, "{at}: rank {rank}");
                    assert!(*chunk < plan.drawn_schedule().chunks, "{at}: chunk {chunk}");
                }
                Look::Ranking(a) => assert!(
                    plan.ranking.iter().any(|c| c.algorithm.name() == a),
                    "{at}: {a} not in the ranking"
                ),
                Look::Chart { algorithm, bytes } => {
                    assert!(
                        plan.ranking.iter().any(|c| c.algorithm.name() == algorithm),
                        "{at}: {algorithm} has no curve"
                    );
                    assert!(
                        bytes.is_power_of_two() && (1024..=1 << 30).contains(bytes),
                        "{at}: {bytes} is not a chart size"
                    );
                }
                Look::Link(a, b) => {
                    assert!(*a < config.ranks && *b < config.ranks && a != b, "{at}");
                    assert!(plan.topology.route(*a, *b).is_ok(), "{at}: no route");
                }
                Look::Panel(p) => {
                    assert!(PANELS.contains(&p.as_str()), "{at}: panel {p}");
                    if ["compression", "claim"].contains(&p.as_str()) {
                        assert!(plan.compressed.is_some(), "{at}: no compression");
                    }
                    if p == "fusion" {
                        assert!(plan.fusion.is_some(), "{at}: no fusion");
                    }
                }
            }
            if print {
                println!(
                    "{at}: {} {} on {} ranks, {} steps, {:.1} us, chosen {} ({:?})",
                    config.primitive.title(),
                    config.bytes,
                    config.ranks,
                    plan.steps(),
                    plan.estimate.time_us,
                    plan.algorithm,
                    plan.decision
                );
                for c in &plan.ranking {
                    println!(
                        "    {:>9} {:>10.1} us busbw {:>7.1} lib={} steps={}",
                        c.algorithm.name(),
                        c.time_us(),
                        c.estimate.as_ref().map_or(0.0, |e| e.busbw_gbps),
                        c.runs_in_library,
                        c.steps
                    );
                }
                println!("    verdict: {}", plan.verdict);
                if let Some(cp) = &plan.compressed {
                    println!(
                        "    compressed {:.1} us vs {:.1} us",
                        cp.estimate.time_us, cp.estimate.uncompressed_us
                    );
                }
                if let Look::Cell { rank, chunk } = &s.look {
                    let v = plan.verified.as_ref().unwrap();
                    let set = &v.trace[s.step][*rank][*chunk];
                    println!(
                        "    cell r{rank} c{chunk} after {}: {:?}",
                        s.step,
                        set.iter().collect::<Vec<_>>()
                    );
                }
                if s.step > 0 {
                    let st = &plan.drawn_schedule().steps[s.step - 1];
                    println!(
                        "    step {} phase {}: {} transfers, first {:?}",
                        s.step,
                        st.phase,
                        st.transfers.len(),
                        st.transfers.first()
                    );
                }
            }
        }
    }
}

#[test]
fn every_lesson_has_its_words_in_every_language() {
    for l in lessons::all() {
        for id in l.message_ids() {
            for lang in Lang::ALL {
                assert!(i18n::has(lang, &id), "{id} missing in {}", lang.code());
            }
        }
    }
}

/// The plan of a lesson's stop (1-based), made as the page makes it
/// (`Plan::new`: the page's `Plan::unranked` plus the planner worker's
/// ranking).
fn stop_plan(lesson: &str, stop: usize) -> Plan {
    let l = lessons::all()
        .iter()
        .find(|l| l.id == lesson)
        .unwrap_or_else(|| panic!("no lesson {lesson}"));
    let (config, errors) = Config::from_query(&l.stops[stop - 1].query);
    assert!(errors.is_empty(), "{lesson} {stop}: {errors:?}");
    Plan::new(&config).unwrap_or_else(|e| panic!("{lesson} {stop}: {e}"))
}

/// The time of `algorithm`'s row in the plan's ranking, µs.
fn row_us(plan: &Plan, algorithm: &str) -> f64 {
    plan.ranking
        .iter()
        .find(|c| c.algorithm.name() == algorithm)
        .unwrap_or_else(|| panic!("{algorithm} not ranked"))
        .time_us()
}

/// The bandwidth of the plan's link between devices `a` and `b`, GB/s.
fn link_gbps(plan: &Plan, a: usize, b: usize) -> f64 {
    plan.topology
        .links
        .iter()
        .find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
        .unwrap_or_else(|| panic!("no link {a}-{b}"))
        .bandwidth_gbps
}

/// One number a lesson's words quote about the model.
struct Figure {
    /// The lesson and stop (1-based) whose plan the number is about.
    stop: (&'static str, usize),
    /// The message that quotes it.
    id: &'static str,
    /// The quote, as it stands in English and in Chinese.
    en: &'static str,
    zh: &'static str,
    /// The number quoted, and the step it is rounded to.
    quoted: f64,
    step: f64,
    /// The model's value, in the quoted unit.
    model: fn(&Plan) -> f64,
}

const FIGURES: &[Figure] = &[
    Figure {
        stop: ("collective", 4),
        id: "lesson-collective-5-ask",
        en: "the estimate there said about 26 µs",
        zh: "那里的预估约为 26 µs",
        quoted: 26.0,
        step: 1.0,
        model: |p| p.estimate.time_us,
    },
    Figure {
        stop: ("collective", 5),
        id: "lesson-collective-5-answer",
        en: "so about 13 µs",
        zh: "所以约 13 µs",
        quoted: 13.0,
        step: 1.0,
        model: |p| p.estimate.time_us,
    },
    Figure {
        stop: ("ring", 2),
        id: "lesson-ring-2-ask",
        en: "Ring's busbw here is about 370 GB/s",
        zh: "ring 的 busbw 约为 370 GB/s",
        quoted: 370.0,
        step: 1.0,
        model: |p| p.estimate.busbw_gbps,
    },
    Figure {
        stop: ("ring", 2),
        id: "lesson-ring-2-answer",
        en: "about 370 of the 371 GB/s",
        zh: "371 GB/s 中的 370 GB/s",
        quoted: 371.0,
        step: 1.0,
        // h100-8: each GPU's one link to the NVSwitch fabric.
        model: |p| {
            p.topology
                .links
                .iter()
                .map(|l| l.bandwidth_gbps)
                .fold(0.0, f64::max)
        },
    },
    Figure {
        stop: ("rhd", 3),
        id: "lesson-rhd-3-ask",
        en: "rhd predicts about 27 µs",
        zh: "rhd 预测约 27 µs",
        quoted: 27.0,
        step: 1.0,
        model: |p| p.estimate.time_us,
    },
    Figure {
        stop: ("rhd", 3),
        id: "lesson-rhd-3-ask",
        en: "ring about 54 µs",
        zh: "ring 约 54 µs",
        quoted: 54.0,
        step: 1.0,
        model: |p| row_us(p, "ring"),
    },
    Figure {
        stop: ("mesh", 1),
        id: "lesson-mesh-1-answer",
        en: "18.3 GB/s per direction",
        zh: "每方向 18.3 GB/s",
        quoted: 18.3,
        step: 0.1,
        model: |p| link_gbps(p, 0, 1),
    },
    Figure {
        stop: ("mesh", 3),
        id: "lesson-mesh-3-say",
        en: "mesh predicts about 3.7 ms",
        zh: "mesh 预测约 3.7 ms",
        quoted: 3.7,
        step: 0.1,
        model: |p| p.estimate.time_us / 1000.0,
    },
    Figure {
        stop: ("mesh", 3),
        id: "lesson-mesh-3-say",
        en: "ring about 25.8 ms",
        zh: "ring 约 25.8 ms",
        quoted: 25.8,
        step: 0.1,
        model: |p| row_us(p, "ring") / 1000.0,
    },
    Figure {
        stop: ("mesh", 3),
        id: "lesson-mesh-3-ask",
        en: "The gap is about 7×",
        zh: "差距约为 7 倍",
        quoted: 7.0,
        step: 1.0,
        model: |p| row_us(p, "ring") / p.estimate.time_us,
    },
    Figure {
        stop: ("hier", 5),
        id: "lesson-hier-5-ask",
        en: "pipeline about 3.8 ms",
        zh: "pipeline 约 3.8 ms",
        quoted: 3.8,
        step: 0.1,
        model: |p| p.estimate.time_us / 1000.0,
    },
    Figure {
        stop: ("hier", 5),
        id: "lesson-hier-5-ask",
        en: "hier about 6.9 ms",
        zh: "hier 约 6.9 ms",
        quoted: 6.9,
        step: 0.1,
        model: |p| row_us(p, "hier") / 1000.0,
    },
    Figure {
        stop: ("alltoall", 3),
        id: "lesson-alltoall-3-ask",
        en: "mesh about 7× faster than pairwise",
        zh: "mesh 比 pairwise 快约 7 倍",
        quoted: 7.0,
        step: 1.0,
        model: |p| p.estimate.time_us / row_us(p, "mesh"),
    },
    Figure {
        stop: ("int8", 1),
        id: "lesson-int8-1-look",
        en: "about 236 µs",
        zh: "约 236 µs",
        quoted: 236.0,
        step: 1.0,
        model: |p| p.estimate.time_us,
    },
    Figure {
        stop: ("int8", 1),
        id: "lesson-int8-1-answer",
        en: "97% of its time is moving data",
        zh: "97% 的时间在搬运数据",
        quoted: 97.0,
        step: 1.0,
        model: |p| 100.0 * (1.0 - p.latency_us / p.estimate.time_us),
    },
    Figure {
        stop: ("int8", 2),
        id: "lesson-int8-2-ask",
        en: "about half the bytes",
        zh: "约一半的字节",
        quoted: 0.5,
        step: 0.1,
        model: |p| {
            let e = &p.compressed.as_ref().expect("compressed").estimate;
            e.wire_bytes as f64 / e.uncompressed_bytes as f64
        },
    },
    Figure {
        stop: ("int8", 2),
        id: "lesson-int8-2-ask",
        en: "about 269 µs",
        zh: "约 269 µs",
        quoted: 269.0,
        step: 1.0,
        model: |p| p.compressed.as_ref().expect("compressed").estimate.time_us,
    },
    Figure {
        stop: ("int8", 2),
        id: "lesson-int8-2-ask",
        en: "against 236 µs",
        zh: "不压缩是 236 µs",
        quoted: 236.0,
        step: 1.0,
        model: |p| {
            p.compressed
                .as_ref()
                .expect("compressed")
                .estimate
                .uncompressed_us
        },
    },
    Figure {
        stop: ("int8", 4),
        id: "lesson-int8-4-ask",
        en: "about 1.1 ms",
        zh: "约 1.1 ms",
        quoted: 1.1,
        step: 0.1,
        model: |p| p.compressed.as_ref().expect("compressed").estimate.time_us / 1000.0,
    },
    Figure {
        stop: ("fusion", 1),
        id: "lesson-fusion-1-look",
        en: "30 buckets",
        zh: "30 个桶",
        quoted: 30.0,
        step: 1.0,
        model: |p| p.fusion.as_ref().expect("fusion").plan.buckets.len() as f64,
    },
    Figure {
        stop: ("fusion", 1),
        id: "lesson-fusion-1-ask",
        en: "predicted at about 7.7 µs",
        zh: "预测约 7.7 µs",
        quoted: 7.7,
        step: 0.1,
        model: |p| p.estimate.time_us,
    },
    Figure {
        stop: ("fusion", 1),
        id: "lesson-fusion-1-answer",
        en: "30 × 7.7 ≈ 230 µs",
        zh: "30 × 7.7 ≈ 230 µs",
        quoted: 230.0,
        step: 10.0,
        model: |p| p.fusion.as_ref().expect("fusion").plan.unfused_us,
    },
    Figure {
        stop: ("fusion", 2),
        id: "lesson-fusion-2-say",
        en: "one AllReduce of 1.88 MiB",
        zh: "一次 1.88 MiB 的 AllReduce",
        quoted: 1.88,
        step: 0.01,
        model: |p| {
            let f = &p.fusion.as_ref().expect("fusion").plan;
            assert_eq!(f.buckets.len(), 1, "one bucket");
            f.buckets[0].0.bytes as f64 / (1u64 << 20) as f64
        },
    },
];

/// Every model figure a lesson's words quote, in English and Chinese,
/// rounds to the model's value for its stop: a model change that moves one
/// fails here, naming the message to re-word in both languages.
#[test]
fn every_figure_a_lesson_quotes_is_the_models() {
    for f in FIGURES {
        for (lang, quote) in [(Lang::En, f.en), (Lang::Zh, f.zh)] {
            let text = i18n::tr_in(lang, f.id, None);
            assert!(
                text.contains(quote),
                "{} ({}) no longer says {quote:?}: {text}",
                f.id,
                lang.code()
            );
        }
        let (lesson, stop) = f.stop;
        let value = (f.model)(&stop_plan(lesson, stop));
        assert!(
            (value - f.quoted).abs() <= f.step / 2.0 + 1e-9,
            "{}: the model gives {value} for {lesson} stop {stop}, the words say {} (rounded to {})",
            f.id,
            f.quoted,
            f.step
        );
    }
}

/// The one quoted figure that comes from the real run rather than the
/// estimate: the int8 card's relative L2 error. The run is checked bit for
/// bit against the compressed reference, so the reference's report is the
/// run's.
#[test]
fn the_int8_lesson_quotes_the_runs_error() {
    for (lang, quote) in [(Lang::En, "about 0.1–1 %"), (Lang::Zh, "约为 0.1–1%")] {
        let text = i18n::tr_in(lang, "lesson-int8-3-answer", None);
        assert!(text.contains(quote), "{}: {text}", lang.code());
    }
    let plan = stop_plan("int8", 3);
    let cp = plan.compressed.as_ref().expect("compressed");
    let c = &plan.config;
    let check = CompressedCheck::prepare(
        &cp.collective,
        plan.drawn_schedule(),
        &cp.setup,
        c.dtype,
        c.redop,
        c.seed,
        c.elems(),
    )
    .expect("the compressed reference");
    let e = check.report.stats.rel_l2_error;
    assert!((0.001..=0.01).contains(&e), "relative L2 error {e}");
}
