//! The guided lessons (`lessons/*.json`): every file parses, every lesson
//! has 3..=6 stops, every stop's link decodes without an error or a notice
//! and plans, its step exists, its highlight exists in that plan, and its
//! words exist in every language. `LESSONS_PRINT=1` prints each stop's plan
//! (algorithm, times, ranking) — what the narration's numbers rest on.

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
