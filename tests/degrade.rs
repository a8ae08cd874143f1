//! Slow ranks and failed links (`engine::degrade`): the simulator against
//! closed forms of the alpha-beta model, the plan's healthy comparison and
//! re-ranking, and `cclsim predict` agreeing with the page's plan.

use ccl_playground::engine::algorithm::Algorithm;
use ccl_playground::engine::config::{AlgoChoice, Config};
use ccl_playground::engine::degrade;
use ccl_playground::engine::plan::Plan;
use ccl_playground::engine::topology::{HCCS_910B_GBPS, HCCS_910B_LATENCY_US};
use std::process::Command;

/// The page's plan of a link.
fn plan(query: &str) -> Plan {
    let (c, errors) = Config::from_query(query);
    assert!(errors.is_empty(), "{query}: {errors:?}");
    Plan::new(&c).unwrap_or_else(|e| panic!("{query}: {e}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

const S: f64 = (16u64 << 20) as f64;
const A: f64 = HCCS_910B_LATENCY_US;
/// HCCS bandwidth in bytes per µs.
const B: f64 = HCCS_910B_GBPS * 1e3;

#[test]
fn ring_with_a_half_speed_rank_is_bound_by_its_link_every_step() {
    // Ring AllReduce, 8 ranks, 16 MiB fp32: 14 steps, each rank sends S/8
    // to the next. Rank 3's link 3->4 runs at B/2, and every step waits for
    // it: t = 2(n-1)(α + (S/n) / (B/2)).
    let p = plan("v=1&op=allreduce&algo=ring&topo=910b-8&bytes=16MiB&ranks=8&slow=3:0.5");
    let want = 14.0 * (A + (S / 8.0) / (0.5 * B));
    assert!(
        close(p.estimate.time_us, want),
        "{} vs {want}",
        p.estimate.time_us
    );
    let healthy = 14.0 * (A + (S / 8.0) / B);
    let h = p.healthy.as_ref().unwrap();
    assert!(close(h.time_us, healthy), "{} vs {healthy}", h.time_us);
    assert!(close(p.slowdown().unwrap(), want / healthy));
    // Who waits for whom: in every step the others wait for rank 3.
    let w = degrade::waits(p.drawn_schedule(), &p.estimate.timeline, &p.config.faults);
    assert_eq!(w.len(), 14);
    for s in &w {
        assert_eq!((s.src, s.dst, s.blame), (3, 4, 3), "step {}", s.step);
        // Every other sender finished its S/8 at B; rank 3 at B/2.
        let idle = (S / 8.0) / (0.5 * B) - (S / 8.0) / B;
        assert!(close(s.longest_us(), idle), "{} vs {idle}", s.longest_us());
        // Ranks 0, 1, 5, 6, 7 idle that long; 2 (sends to 3), 3 and 4 not.
        let waiting: Vec<usize> = s.waits.iter().map(|x| x.0).collect();
        assert_eq!(waiting, vec![0, 1, 2, 5, 6, 7]);
    }
    assert!(p.verdict.contains("slow=3:0.5"), "{}", p.verdict);
}

#[test]
fn a_late_rank_delays_the_whole_ring_by_its_offset() {
    let p = plan("v=1&op=allreduce&algo=ring&topo=910b-8&bytes=16MiB&ranks=8&late=3:200");
    let healthy = 14.0 * (A + (S / 8.0) / B);
    assert!(
        close(p.estimate.time_us, healthy + 200.0),
        "{}",
        p.estimate.time_us
    );
    let first = &p.estimate.timeline.transfers;
    // Rank 3's first send starts at 200 µs, the others at 0.
    let t3 = first.iter().find(|t| t.step == 0 && t.index == 3).unwrap();
    assert!(close(t3.start_us, 200.0));
    assert!(close(first[0].start_us, 0.0));
}

#[test]
fn a_down_link_on_the_mesh_takes_two_hops_and_shares_links() {
    // Mesh AllReduce (HCCL's choice on 910b-8), link 0-1 down: 0 <-> 1
    // goes through NPU2 (2α), sharing 0->2 and 2->1 with those pairs' own
    // chunk c = S/8. Max-min fair: the direct flows run alone for α, then
    // at B/2 with the relay until they end at 2c/B; the relay then runs
    // alone and ends at α + 2c/B. Two such steps.
    let p = plan("v=1&op=allreduce&algo=mesh&topo=910b-8&bytes=16MiB&ranks=8&down=0-1");
    let c = S / 8.0;
    let want = 2.0 * (A + 2.0 * c / B);
    assert!(
        close(p.estimate.time_us, want),
        "{} vs {want}",
        p.estimate.time_us
    );
    let healthy = 2.0 * (A + c / B);
    assert!(close(p.healthy.as_ref().unwrap().time_us, healthy));
    let tl = &p.estimate.timeline;
    assert!(tl.steps.iter().all(|s| s.max_link_sharing == 2));
    let relayed = tl.routes.iter().filter(|r| r.hops.len() == 2).count();
    assert_eq!(relayed, 2, "0->1 and 1->0");
    // The ranking is made on the faulty machine: mesh's row is the headline.
    let mesh = p
        .ranking
        .iter()
        .find(|r| r.algorithm == Algorithm::Mesh)
        .unwrap();
    assert!(close(mesh.time_us(), want));
}

#[test]
fn auto_re_ranks_on_the_degraded_machine() {
    // HCCL's rule sees level0 is no longer a full mesh and runs ring; the
    // model's ranking (made on the degraded machine) still puts mesh,
    // routed around the failed links, first. Four links down (0-4, 1-5,
    // 2-6, 3-7) cost rhd and nb their direct partners: ring overtakes them.
    let healthy = plan("v=1&op=allreduce&algo=auto&topo=910b-8&bytes=16MiB&ranks=8");
    let slow =
        plan("v=1&op=allreduce&algo=auto&topo=910b-8&bytes=16MiB&ranks=8&down=0-4,1-5,2-6,3-7");
    assert_eq!(healthy.algorithm, Algorithm::Mesh);
    assert_eq!(slow.algorithm, Algorithm::Ring);
    assert_eq!(slow.ranking[0].algorithm, Algorithm::Mesh);
    assert!(
        slow.verdict.contains("the model's fastest is mesh"),
        "{}",
        slow.verdict
    );
    let pos = |p: &Plan, a| p.ranking.iter().position(|r| r.algorithm == a).unwrap();
    assert!(pos(&slow, Algorithm::Ring) < pos(&slow, Algorithm::Rhd));
    assert!(pos(&healthy, Algorithm::Ring) > pos(&healthy, Algorithm::Rhd));
    let order = |p: &Plan| -> Vec<Algorithm> { p.ranking.iter().map(|r| r.algorithm).collect() };
    assert_ne!(order(&healthy), order(&slow));
    assert!(slow
        .ranking
        .windows(2)
        .all(|w| w[0].time_us() <= w[1].time_us()));
    // Every row is slower than (or as fast as) on the healthy machine.
    for r in &slow.ranking {
        let h = healthy
            .ranking
            .iter()
            .find(|x| x.algorithm == r.algorithm)
            .unwrap();
        assert!(r.time_us() >= h.time_us() - 1e-9, "{}", r.algorithm);
    }
}

#[test]
fn a_roce_port_down_goes_out_through_a_neighbour() {
    let h = plan("v=1&op=allreduce&algo=hier&topo=910b-2x8&bytes=16MiB&ranks=16");
    let p = plan("v=1&op=allreduce&algo=hier&topo=910b-2x8&bytes=16MiB&ranks=16&down=3-port");
    assert!(p.estimate.time_us > h.estimate.time_us);
    assert!(close(
        p.healthy.as_ref().unwrap().time_us,
        h.estimate.time_us
    ));
    assert!(p.estimate.timeline.routes.iter().any(|r| r.hops.len() == 3));
}

#[test]
fn errors_name_key_value_and_what_is_allowed() {
    let (c, e) = Config::from_query("v=1&ranks=8&slow=9:0.5&down=0-1");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].key, "slow");
    assert_eq!(e[0].value, "9:0.5");
    assert!(e[0].allowed.contains("RANK 0..=7"), "{}", e[0].allowed);
    assert!(c.faults.slow.is_empty());
    assert_eq!(c.faults.down, vec![degrade::Down::Link(0, 1)]);
    // A link that does not exist is the plan's error, naming it.
    let (c, _) = Config::from_query("v=1&topo=h100-8&ranks=8&down=0-1");
    let e = Plan::new(&c).unwrap_err().to_string();
    assert!(e.starts_with("down=0-1: h100-8 has no direct link"), "{e}");
    let (c, _) = Config::from_query("v=1&topo=h100-8&ranks=8&down=0-port");
    let e = Plan::new(&c).unwrap_err().to_string();
    assert!(e.contains("no algorithm can run"), "{e}");
    // Round trip.
    let (c, e) = Config::from_query("v=1&slow=3:0.5&late=2:150&down=1-0,5-port");
    assert!(e.is_empty(), "{e:?}");
    let (again, e) = Config::from_query(&c.to_query());
    assert!(e.is_empty());
    assert_eq!(again, c);
    assert!(
        c.to_query()
            .contains("slow=3%3A0.5&late=2%3A150&down=0-1%2C5-port"),
        "{}",
        c.to_query()
    );
}

#[test]
fn cclsim_predict_reports_the_fault_and_agrees_with_the_page() {
    for (flag, value, key) in [
        ("--slow", "3:0.5", "slow"),
        ("--late", "3:200", "late"),
        ("--down", "0-1", "down"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cclsim"))
            .args([
                "predict",
                "--topo",
                "910b-8",
                "--op",
                "allreduce",
                "--algo",
                "auto",
                "--bytes",
                "16MiB",
                flag,
                value,
                "--json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut c = Config::default();
        c.algo = AlgoChoice::Auto;
        c.faults.set(key, value, 8).unwrap();
        let p = Plan::new(&c).unwrap();
        assert_eq!(v["time_us"].as_f64().unwrap(), p.estimate.time_us, "{flag}");
        assert_eq!(
            v["healthy_time_us"].as_f64().unwrap(),
            p.healthy.as_ref().unwrap().time_us
        );
        assert_eq!(v["slowdown"].as_f64().unwrap(), p.slowdown().unwrap());
        assert_eq!(v["algorithm"], p.algorithm.name());
        assert!(v["link"].as_str().unwrap().contains(&format!("{key}=")));
        assert!(!v["faults"].is_null());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_cclsim"))
        .args([
            "predict",
            "--topo",
            "910b-8",
            "--op",
            "allreduce",
            "--bytes",
            "1MiB",
            "--slow",
            "3:2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--slow \"3:2\": RANK:VALUE"), "{err}");
}

#[test]
fn a_slow_gpu_sends_at_its_factor_through_the_nvswitch() {
    // h100-8, unsliced ring AllReduce: every flow crosses its sender's
    // uplink and its receiver's downlink, one flow each; GPU 3's uplink
    // runs at half of 370.8 GB/s. t = 14 (α + (S/8) / (B/2)).
    use ccl_playground::engine::topology::{NVLINK_H100_GBPS, NVLINK_H100_HOP_LATENCY_US};
    let p = plan("v=1&op=allreduce&algo=ring&topo=h100-8&bytes=16MiB&ranks=8&slices=1&slow=3:0.5");
    let want = 14.0 * (NVLINK_H100_HOP_LATENCY_US + (S / 8.0) / (0.5 * NVLINK_H100_GBPS * 1e3));
    assert!(
        close(p.estimate.time_us, want),
        "{} vs {want}",
        p.estimate.time_us
    );
}

#[test]
fn a_late_rank_holds_back_the_pipelined_model_too() {
    // h100-8 with NCCL's slices (auto): nothing to or from rank 3 starts
    // before 200 µs, and the ring's dependencies carry the delay on.
    let p = plan("v=1&op=allreduce&algo=ring&topo=h100-8&bytes=16MiB&ranks=8&late=3:200");
    assert!(p.estimate.slicing.slices > 1);
    let h = p.healthy.as_ref().unwrap().time_us;
    assert!(
        p.estimate.time_us > h + 100.0,
        "{} vs {h}",
        p.estimate.time_us
    );
    assert!(
        p.estimate.time_us <= h + 200.0 + 1e-6,
        "{} vs {h}",
        p.estimate.time_us
    );
    let sched = p.drawn_schedule();
    for t in &p.estimate.timeline.transfers {
        let tr = &sched.steps[t.step].transfers[t.index];
        if tr.src == 3 || tr.dst == 3 {
            assert!(t.start_us >= 200.0 - 1e-9, "{t:?}");
        }
    }
}

#[test]
fn degraded_machines_simulate_as_the_reference_does() {
    // Down links run on the fast simulator (relayed routes), slow and late
    // devices on the reference one: both must give the reference's figures.
    use ccl_playground::engine::cost::{estimate_sliced, estimate_sliced_reference, Slices};
    for q in [
        "v=1&op=allreduce&algo=mesh&topo=910b-8&bytes=16MiB&down=0-1,2-5",
        "v=1&op=allgather&algo=ring&topo=910b-4x8&bytes=4MiB&down=3-port",
        "v=1&op=allreduce&algo=ring&topo=910b-8&bytes=16MiB&slow=3:0.5&late=5:20",
        "v=1&op=reducescatter&algo=nhr&topo=910b-8&bytes=1MiB&slow=1:0.25",
    ] {
        let p = plan(q);
        let (s, t) = (p.drawn_schedule(), &p.topology);
        let (c, _) = Config::from_query(q);
        for slices in [Slices::Fixed(1), Slices::Fixed(4)] {
            let fast = estimate_sliced(s, t, c.bytes, c.dtype, slices).unwrap();
            let reference = estimate_sliced_reference(s, t, c.bytes, c.dtype, slices).unwrap();
            assert!(close(fast.time_us, reference.time_us), "{q} {slices:?}");
            for (a, b) in fast.timeline.steps.iter().zip(&reference.timeline.steps) {
                assert!(close(a.end_us, b.end_us), "{q} {slices:?}");
            }
        }
    }
}
