//! The planning pipeline: one question, one answer. The page's plan
//! (`Plan::new`) and `cclsim predict --json` agree on algorithm and time
//! over a grid of configurations; each machine runs its own library's
//! algorithms, built the way that library builds them (NCCL's tree);
//! modelled time never drops when the message grows; auto at scale costs
//! one estimate.

use ccl_playground::engine::algorithm::{self, build_on, Algorithm};
use ccl_playground::engine::calibrate::Profile;
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::config::{AlgoChoice, Config, MEASURED};
use ccl_playground::engine::cost::{self, Slices};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::formats::{parse_log, Collective};
use ccl_playground::engine::library::Library;
use ccl_playground::engine::plan::{self, Decision, Method, Plan};
use ccl_playground::engine::topology::Topology;
use std::process::Command;

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/nccl-tests/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The profile `cclsim fit` makes of the H100 log's all_reduce table.
fn h100_profile() -> Profile {
    let log = parse_log(&fixture("nccl_h100_1node_5colls_16.txt")).unwrap();
    Profile::fit_log(&log, Some(&Collective::AllReduce), None, "h100").unwrap()
}

fn config(topo: &str, op: Primitive, ranks: usize, bytes: u64) -> Config {
    Config {
        topo: topo.into(),
        primitive: op,
        ranks,
        bytes,
        algo: AlgoChoice::Auto,
        ..Config::default()
    }
}

// ---- NCCL's tree, as NCCL builds it ----

#[test]
fn nccl_tree_on_one_node_is_a_chain_of_fourteen_hops() {
    // h100-8, AllReduce, dbtree, 8 B, 8 ranks, one slice: 14 hops at the
    // preset's 3.4 µs = 47.6 µs (a binary tree over GPUs gave 20.4).
    let c = Config {
        algo: AlgoChoice::Fixed(Algorithm::Dbtree),
        slices: Slices::Fixed(1),
        dtype: DType::Fp32,
        ..config("h100-8", Primitive::AllReduce, 8, 8)
    };
    let p = Plan::new(&c).unwrap();
    assert_eq!(p.drawn_schedule().steps.len(), 14);
    assert!(
        (p.estimate.time_us - 47.6).abs() < 0.01,
        "{}",
        p.estimate.time_us
    );
    // NCCL's own tree latency 2·((nRanks/nNodes − 1)·intra + log2(nNodes)·inter)
    // with one node and the preset's hop latency.
    assert!((2.0 * 7.0 * 3.4 - 47.6f64).abs() < 1e-9);
    // The chain: every step sends between neighbours g(i) and g(i+1).
    for s in &p.drawn_schedule().steps {
        for t in &s.transfers {
            assert_eq!(t.src.abs_diff(t.dst), 1, "{t:?}");
        }
    }
}

#[test]
fn nccl_tree_spans_nodes_with_chains_inside() {
    // Two nodes of 8 (a custom two-server NVSwitch machine): chains of 8,
    // one inter-node edge per tree.
    let nodes = [8usize, 8];
    let s = build_on(Algorithm::Dbtree, Primitive::AllReduce, 16, 0, &nodes).unwrap();
    ccl_playground::engine::verify::verify(&s).unwrap();
    let cross: std::collections::HashSet<(usize, usize)> = s
        .steps
        .iter()
        .flat_map(|st| st.transfers.iter())
        .filter(|t| t.src / 8 != t.dst / 8)
        .map(|t| (t.src.min(t.dst), t.src.max(t.dst)))
        .collect();
    // Tree 0: node 1's g0 hangs off node 0's g0 (child 1); tree 1 mirrored:
    // node 0's g0 off node 1's g0: the same pair, both directions.
    assert_eq!(cross.into_iter().collect::<Vec<_>>(), [(0, 8)]);
    // Depth 8: node 1's chain of 7 below the node edge; up and down.
    assert_eq!(s.steps.len(), 2 * 8);
}

#[test]
fn auto_on_h100_runs_what_nccl_runs() {
    // h100-8, AllReduce, auto, 8 B: an algorithm NCCL runs (ring: NCCL's
    // tuning model picks ring/LL on one NVLink node), never HCCL's mesh.
    let p = Plan::new(&config("h100-8", Primitive::AllReduce, 8, 8)).unwrap();
    assert_eq!(p.library, Library::Nccl);
    assert_eq!(p.algorithm, Algorithm::Ring);
    assert!(matches!(p.decision, Decision::Library { .. }));
    assert!(p.verdict.contains("NCCL's tuning model"), "{}", p.verdict);
    // Every primitive at every size: auto picks only what NCCL runs (NVLS,
    // whose reduction runs in the NVSwitch, is drawn as the all-pairs
    // exchange it replaces), and the ranking labels HCCL's mesh AllReduce
    // as not NCCL's.
    for op in Primitive::ALL {
        for bytes in [8u64, 1 << 20, 1 << 30] {
            let p = Plan::new(&config("h100-8", op, 8, bytes)).unwrap();
            let nvls = p.prediction.as_ref().is_some_and(|a| {
                a.algo == Some(ccl_playground::engine::library::nccl::NcclAlgo::Nvls)
            });
            assert!(
                Library::Nccl.runs(p.algorithm, op) || (nvls && p.algorithm == Algorithm::Mesh),
                "{op} {bytes}: {}",
                p.algorithm
            );
        }
    }
    let big = Plan::new(&config("h100-8", Primitive::AllReduce, 8, 1 << 30)).unwrap();
    assert_eq!(big.prediction.as_ref().unwrap().runs, "NVLS/Simple");
    let p = Plan::new(&config("h100-8", Primitive::AllReduce, 8, 1 << 20)).unwrap();
    let mesh = p
        .ranking
        .iter()
        .find(|r| r.algorithm == Algorithm::Mesh)
        .unwrap();
    assert!(!mesh.runs_in_library);
    assert!(p
        .details
        .iter()
        .any(|d| d.starts_with("mesh:") && d.contains("not what NCCL runs")));
}

#[test]
fn hccl_runs_mesh_on_one_server_and_its_hierarchy_on_clusters() {
    let one = Plan::new(&config("910b-8", Primitive::AllReduce, 8, 64 << 20)).unwrap();
    assert_eq!(one.algorithm, Algorithm::Mesh);
    // 2 servers, 1 MiB: 32 KiB per rank < 1 MiB: level1 ring between servers.
    let two = Plan::new(&config("910b-2x8", Primitive::AllReduce, 16, 1 << 20)).unwrap();
    assert_eq!(two.algorithm, Algorithm::Hier);
    // 16 servers: NHR between servers (HCCL's level1 cost model).
    let many = Plan::new(&config("910b-16x8", Primitive::AllReduce, 128, 1 << 20)).unwrap();
    assert_eq!(many.algorithm, Algorithm::HierNhr);
    // Large: the pipeline.
    let big = Plan::new(&config("910b-16x8", Primitive::AllReduce, 128, 1 << 30)).unwrap();
    assert_eq!(big.algorithm, Algorithm::Pipeline);
    // AllGather's pipeline threshold is 32 KiB per rank.
    let ag = Plan::new(&config("910b-2x8", Primitive::AllGather, 16, 16 << 20)).unwrap();
    assert_eq!(ag.algorithm, Algorithm::Pipeline);
}

#[test]
fn a_custom_topology_follows_what_its_json_says() {
    let json = r#"{"devices":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"}],"switches":[{"id":"s"}],
      "links":[{"a":"a","b":"s","bandwidth_gbps":50,"latency_us":1},{"a":"b","b":"s","bandwidth_gbps":50,"latency_us":1},
               {"a":"c","b":"s","bandwidth_gbps":50,"latency_us":1},{"a":"d","b":"s","bandwidth_gbps":50,"latency_us":1}],
      "library":"model","algorithms":["ring","rhd"]}"#;
    let custom = ccl_playground::engine::custom_topology::CustomTopology::parse(json).unwrap();
    let c = Config {
        topo: "custom".into(),
        custom: Some(custom),
        ..config("custom", Primitive::AllReduce, 4, 1 << 20)
    };
    let p = Plan::new(&c).unwrap();
    assert!(matches!(p.decision, Decision::Model { .. }));
    assert!([Algorithm::Ring, Algorithm::Rhd].contains(&p.algorithm));
    assert!(p.verdict.contains("ring, rhd"), "{}", p.verdict);
    // The model's fastest of the two, by the same estimates as the rows.
    let best = p
        .ranking
        .iter()
        .filter(|r| [Algorithm::Ring, Algorithm::Rhd].contains(&r.algorithm))
        .min_by(|a, b| a.time_us().total_cmp(&b.time_us()))
        .unwrap();
    assert_eq!(best.algorithm, p.algorithm);
}

// ---- A fitted profile predicts what it measured ----

#[test]
fn auto_on_a_profile_is_the_measured_curve() {
    let prof = h100_profile();
    let c = Config {
        profile: Some(prof.clone()),
        ..config(MEASURED, Primitive::AllReduce, 8, 256 << 20)
    };
    let p = Plan::new(&c).unwrap();
    assert_eq!(p.library, Library::Nccl);
    assert!(matches!(p.decision, Decision::Measured { .. }));
    assert!(matches!(p.method, Method::Measured { .. }));
    assert!((p.estimate.time_us - prof.predict_us(256 << 20)).abs() < 1e-9);
    assert!(p.verdict.contains("as measured"), "{}", p.verdict);
    // An explicit algorithm is derived from the profile's link figures, and says so.
    let fixed = Plan::new(&Config {
        algo: AlgoChoice::Fixed(Algorithm::Ring),
        ..c.clone()
    })
    .unwrap();
    assert_eq!(fixed.method, Method::Simulated);
    assert!(
        fixed
            .verdict
            .contains("Derived from the profile's link figures"),
        "{}",
        fixed.verdict
    );
    // Another collective than the measured one: the library's rule on the
    // profile's machine, not the curve.
    let ag = Plan::new(&Config {
        primitive: Primitive::AllGather,
        ..c.clone()
    })
    .unwrap();
    assert!(matches!(ag.decision, Decision::Library { .. }));
}

// ---- One question, one answer: the page's plan and cclsim agree ----

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

#[test]
fn the_page_plan_and_cclsim_predict_agree_on_a_grid() {
    let dir = std::env::temp_dir().join(format!("plan-grid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prof_path = dir.join("h100.json");
    let prof = h100_profile();
    std::fs::write(&prof_path, serde_json::to_string(&prof).unwrap()).unwrap();
    let machines: [(&str, [usize; 2]); 4] = [
        ("910b-8", [5, 8]),
        ("910b-4x8", [16, 32]),
        ("h100-8", [3, 8]),
        ("profile", [8, 16]),
    ];
    let sizes = [8u64, 64 << 10, 16 << 20, 1 << 30];
    let mut compared = 0;
    for (machine, ranks) in machines {
        for op in Primitive::ALL {
            for &n in &ranks {
                for &bytes in &sizes {
                    let mut c = config(machine, op, n, bytes);
                    let mut args: Vec<String> = vec!["predict".into(), "--json".into()];
                    if machine == "profile" {
                        c.topo = MEASURED.into();
                        let mut lean = prof.clone();
                        lean.rows.clear();
                        c.profile = Some(lean);
                        args.extend(["--profile".into(), prof_path.display().to_string()]);
                    } else {
                        args.extend(["--topo".into(), machine.into()]);
                    }
                    args.extend([
                        "--op".into(),
                        op.name().into(),
                        "--ranks".into(),
                        n.to_string(),
                        "--bytes".into(),
                        bytes.to_string(),
                    ]);
                    let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
                    let (code, out, err) = cclsim(&argv);
                    // The configuration as a link would give it.
                    let (lc, lerr) = Config::from_query(&c.to_query());
                    let refused = lerr.iter().any(|e| !e.is_notice());
                    match (refused, Plan::new(&lc)) {
                        (false, Ok(p)) => {
                            assert_eq!(code, 0, "{argv:?}: {err}");
                            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                            assert_eq!(v["algorithm"], p.algorithm.name(), "{argv:?}");
                            let t = v["time_us"].as_f64().unwrap();
                            assert!(
                                (t - p.estimate.time_us).abs() <= 1e-9 * t.max(1.0),
                                "{argv:?}: cclsim {t} vs page {}",
                                p.estimate.time_us
                            );
                            assert_eq!(v["method"], p.method.name());
                            assert_eq!(v["library"], p.library.name());
                            compared += 1;
                        }
                        // Refused alike (AlltoAllV above 16 ranks; 8 B of
                        // AlltoAll below one element per rank...).
                        (true, _) | (_, Err(_)) => {
                            assert_eq!(code, 2, "{argv:?}: {out}");
                        }
                    }
                }
            }
        }
    }
    assert!(compared > 300, "{compared}");
    std::fs::remove_dir_all(&dir).ok();
}

// ---- Time never drops when bytes grow ----

/// Sizes for the monotonicity checks: a geometric ladder with the
/// neighbours of NCCL's slice boundaries (k MiB ± one element).
fn ladder() -> Vec<u64> {
    let mut v: Vec<u64> = (0..40)
        .map(|i| (1024.0 * 1.35f64.powi(i)) as u64 & !3)
        .collect();
    for k in 1..=8u64 {
        v.extend([(k << 20) - 4, k << 20, (k << 20) + 4, (k << 20) + (1 << 18)]);
    }
    v.extend([5 << 20, 5_505_024]);
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn unsliced_time_never_drops_when_bytes_grow() {
    // Every algorithm × primitive on every single-server preset and a
    // two-server cluster, step-synchronous (slices=1).
    let sizes = ladder();
    for topo in ["910b-8", "910a-8", "h100-8", "910b-2x8"] {
        let t = Topology::preset(topo).unwrap();
        let n = t.devices.len();
        for a in Algorithm::ALL {
            for p in Primitive::ALL {
                for ranks in [n, n - 1, 5.min(n)] {
                    if !a.supports(p, ranks) {
                        continue;
                    }
                    let s = build_on(a, p, ranks, 0, &t.nodes_of(ranks)).unwrap();
                    let mut last = 0.0f64;
                    for &b in &sizes {
                        let e = cost::estimate(&s, &t, b, DType::Fp32).unwrap().time_us;
                        assert!(
                            e >= last * (1.0 - 1e-5),
                            "{topo} {a} {p} n={ranks}: {b} B {e} < {last}"
                        );
                        last = e;
                    }
                }
            }
        }
    }
}

#[test]
fn sliced_time_never_drops_for_what_the_library_runs() {
    // auto slicing (NCCL's fixed slices + a shorter last one; HCCL one
    // slice) for every algorithm the machine's library runs.
    let sizes = ladder();
    for topo in ["910b-8", "h100-8", "910b-2x8"] {
        let t = Topology::preset(topo).unwrap();
        let n = t.devices.len();
        for a in Algorithm::ALL {
            for p in Primitive::ALL {
                // Ring, chains, mesh, star, pairwise. The pipelined tree
                // and the halving schedules (dbtree, nb, rhd, nhr) can
                // still lose a few % at a slice boundary: ARCHITECTURE,
                // "Known limits".
                if !t.library.runs(a, p)
                    || matches!(
                        a,
                        Algorithm::Nb | Algorithm::Rhd | Algorithm::Nhr | Algorithm::Dbtree
                    )
                {
                    continue;
                }
                for ranks in [n, 5.min(n)] {
                    if !a.supports(p, ranks) {
                        continue;
                    }
                    let s = build_on(a, p, ranks, 0, &t.nodes_of(ranks)).unwrap();
                    let mut last = 0.0f64;
                    for &b in &sizes {
                        let e = cost::estimate_sliced(&s, &t, b, DType::Fp32, Slices::Auto)
                            .unwrap()
                            .time_us;
                        assert!(
                            e >= last * (1.0 - 1e-5),
                            "{topo} {a} {p} n={ranks}: {b} B {e} < {last}"
                        );
                        last = e;
                    }
                }
            }
        }
    }
}

// ---- The plan's guards ----

#[test]
fn transfer_upper_bounds_hold_for_every_built_schedule() {
    for a in Algorithm::ALL {
        for p in Primitive::ALL {
            for n in 2..=64 {
                if !a.supports(p, n) {
                    continue;
                }
                let s = algorithm::build(a, p, n).unwrap();
                let upper = plan::transfers_upper(a, p, n);
                assert!(
                    s.transfer_count() <= upper,
                    "{a} {p} n={n}: {} > {upper}",
                    s.transfer_count()
                );
                let widest = s.steps.iter().map(|x| x.transfers.len()).max().unwrap_or(0);
                let step_upper = plan::step_transfers_upper(a, p, n);
                assert!(
                    widest <= step_upper,
                    "{a} {p} n={n}: step {widest} > {step_upper}"
                );
            }
        }
    }
}

/// A streamed schedule (steps made on demand, estimated in one pass) gives
/// the same estimate, method and latency as the built one, including
/// buffer loops whose last loop differs and above the dense route table.
#[test]
fn streamed_estimates_equal_built_ones() {
    use ccl_playground::engine::cost::{Record, Slices};
    use ccl_playground::engine::dtype::DType;
    use ccl_playground::engine::topology::Topology;
    let topo = Topology::preset("910b-4x8").unwrap();
    for a in Algorithm::ALL {
        for p in Primitive::ALL {
            if !a.supports(p, 32) {
                continue;
            }
            let st = algorithm::stream_on(a, p, 32, 0, &topo.nodes_of(32)).unwrap();
            let built = st.build();
            // 1 MiB: equal chunks (repeats reused unmade); 1 GiB + 12:
            // unequal ones in the last loop (repeats made and compared).
            for bytes in [1u64 << 20, (1 << 30) + 12] {
                let x = plan::estimate_source(
                    &st,
                    &topo,
                    bytes,
                    DType::Fp32,
                    Slices::Auto,
                    Record::Steps,
                )
                .unwrap();
                let y = plan::estimate_recorded(
                    &built,
                    &topo,
                    bytes,
                    DType::Fp32,
                    Slices::Auto,
                    Record::Steps,
                )
                .unwrap();
                assert_eq!(
                    (x.0.time_us, x.1, x.2, x.3),
                    (y.0.time_us, y.1, y.2, built.steps.len()),
                    "{a} {p}"
                );
            }
        }
    }
    // 4096 ranks: sparse route lists; ring simulated despite 33 M transfers.
    let topo = Topology::preset("910b-512x8").unwrap();
    let st = algorithm::stream_on(Algorithm::Ring, Primitive::AllReduce, 4096, 0, &[4096]).unwrap();
    let (e, m, _, steps) = plan::estimate_source(
        &st,
        &topo,
        1 << 30,
        DType::Fp32,
        Slices::Auto,
        Record::Steps,
    )
    .unwrap();
    assert_eq!((m, steps), (plan::Method::Simulated, 2 * 4095));
    assert!(e.time_us > 0.0);
}

/// Every step a streamed algorithm hands out as a repeat of its
/// predecessor's traffic (`Next::Repeat`, which the cost model reuses
/// without making it) really has the previous step's `src`, `dst`,
/// `count` and `kind` per transfer, in order; no first step is a repeat;
/// and the lazy steps made are the built schedule's.
#[test]
fn repeat_claims_hold() {
    use ccl_playground::engine::algorithm::Lazy;
    let traffic = |s: &ccl_playground::engine::schedule::Step| -> Vec<_> {
        s.transfers
            .iter()
            .map(|t| (t.src, t.dst, t.count, t.kind))
            .collect()
    };
    let (mut repeats, mut exchanges, mut shifts) = (0usize, 0usize, 0usize);
    for n in (2..=17).chain([24, 32, 40]) {
        for a in Algorithm::ALL {
            for p in Primitive::ALL {
                if !a.supports(p, n) {
                    continue;
                }
                for root in [0, n - 1] {
                    let st = algorithm::stream_on(a, p, n, root, &[n]).unwrap();
                    let built = st.build();
                    let mut prev: Option<ccl_playground::engine::schedule::Step> = None;
                    let mut count = 0usize;
                    for (i, l) in st.lazy_steps().enumerate() {
                        let claimed = matches!(l, Lazy::Repeat(_));
                        let exchange = match &l {
                            Lazy::Exchange { ranks, count, .. } => Some((*ranks, *count)),
                            _ => None,
                        };
                        let shift = match &l {
                            Lazy::Shift {
                                ranks,
                                shift,
                                count,
                                width,
                                ..
                            } => Some((*ranks, *shift, *count, *width)),
                            _ => None,
                        };
                        let step = l.make();
                        if let Some((ranks, d, c, width)) = shift {
                            shifts += 1;
                            // Rank r sends c chunks in all to r + d, in
                            // `width` transfers, nothing else between ranks.
                            assert_eq!(
                                step.transfers.len(),
                                width,
                                "{a} {p} n={n}: step {i} width"
                            );
                            let mut sent = vec![0usize; ranks];
                            for t in step.transfers.iter().filter(|t| t.src != t.dst) {
                                assert_eq!(
                                    t.dst,
                                    (t.src + d) % ranks,
                                    "{a} {p} n={n}: step {i} peer"
                                );
                                sent[t.src] += t.count;
                            }
                            assert!(
                                sent.iter().all(|&x| x == c),
                                "{a} {p} n={n}: step {i} sends {sent:?}, claimed {c}"
                            );
                        }
                        if let Some((ranks, c)) = exchange {
                            exchanges += 1;
                            // One transfer of `c` chunks per ordered pair
                            // of distinct ranks, nothing else between ranks.
                            let mut pairs: Vec<(usize, usize)> = step
                                .transfers
                                .iter()
                                .filter(|t| t.src != t.dst)
                                .inspect(|t| {
                                    assert_eq!(t.count, c, "{a} {p} n={n}: step {i} count")
                                })
                                .map(|t| (t.src, t.dst))
                                .collect();
                            pairs.sort_unstable();
                            let all: Vec<(usize, usize)> = (0..ranks)
                                .flat_map(|s| {
                                    (0..ranks).filter(move |&d| d != s).map(move |d| (s, d))
                                })
                                .collect();
                            assert_eq!(pairs, all, "{a} {p} n={n}: step {i} is no exchange");
                        }
                        if claimed {
                            repeats += 1;
                            let prev = prev
                                .as_ref()
                                .unwrap_or_else(|| panic!("{a} {p} n={n}: step 0 a repeat"));
                            assert_eq!(
                                traffic(&step),
                                traffic(prev),
                                "{a} {p} n={n} root={root}: step {i} is no repeat"
                            );
                        }
                        assert_eq!(step, built.steps[i], "{a} {p} n={n}: step {i}");
                        prev = Some(step);
                        count += 1;
                    }
                    assert_eq!(count, built.steps.len(), "{a} {p} n={n}");
                    assert_eq!(
                        st.transfer_count(),
                        built.steps.iter().map(|s| s.transfers.len()).sum::<usize>(),
                        "{a} {p} n={n}: transfer_count"
                    );
                }
            }
        }
    }
    assert!(repeats > 0, "no algorithm claims a repeat");
    assert!(exchanges > 0, "no algorithm claims an exchange");
    assert!(shifts > 0, "no algorithm claims a shift");
}

/// The bound's walk over steps it does not make, mesh's complete
/// exchanges (`BoundWalk::exchange`), NHR's and the level1 NHR's shifts
/// (`BoundWalk::shift`) and the level1 ring's repeats,
/// equals, to the bit, the walk over the made steps (`Bound::of` the built
/// schedule): on one 910B server (direct links), on clusters (switch
/// ports), on machines where some pairs take other routes (910A's two
/// rings, h100-8's switches, a link or a port down, where an exchange
/// makes the step), and with a slow rank.
#[test]
fn unmade_steps_bound_equals_the_walked_steps() {
    use ccl_playground::engine::plan::{Bound, BoundWalk};
    use ccl_playground::engine::schedule::Next;
    use ccl_playground::engine::schedule::StepSource;
    let cases: &[(&str, usize)] = &[
        ("topo=910b-8", 8),
        ("topo=910b-8", 5),
        ("topo=910b-4x8", 32),
        ("topo=910b-4x8", 20),
        ("topo=910b-16x8", 128),
        ("topo=910a-8", 8),
        ("topo=h100-8", 8),
        ("topo=910b-8&down=0-1", 8),
        ("topo=910b-4x8&down=3-port", 32),
        ("topo=910b-4x8&down=9-10", 32),
        ("topo=910b-4x8&slow=3:0.5", 32),
    ];
    let mut unmade = 0usize;
    for &(q, n) in cases {
        let (mut c, errors) = Config::from_query(q);
        assert!(errors.is_empty(), "{q}: {errors:?}");
        c.ranks = n;
        let topo = plan::machine(&c).unwrap_or_else(|e| panic!("{q}: {e}"));
        for (a, p) in [
            Algorithm::Mesh,
            Algorithm::Nhr,
            Algorithm::Hier,
            Algorithm::HierNhr,
        ]
        .into_iter()
        .flat_map(|a| Primitive::ALL.into_iter().map(move |p| (a, p)))
        {
            if !a.supports(p, n) {
                continue;
            }
            let st = algorithm::stream_on(a, p, n, n - 1, &[n]).unwrap();
            let mut walk = BoundWalk::new(&topo);
            st.each_next(&mut |next| {
                match next {
                    Next::Exchange { ranks, count, make } => {
                        let made = walk.exchange(ranks, count, make).unwrap();
                        unmade += usize::from(!made);
                    }
                    Next::Shift {
                        ranks,
                        shift,
                        count,
                        ..
                    } => {
                        walk.shift(ranks, shift, count).unwrap();
                        unmade += 1;
                    }
                    Next::Step(s) => walk.step(s).unwrap(),
                    Next::Repeat(make) => {
                        walk.repeat(make).unwrap();
                        unmade += 1;
                    }
                }
                true
            });
            let fast = walk.finish(st.header());
            let built = Bound::of(&st.build(), &topo).unwrap();
            for bytes in [8u64, 1 << 20, (1 << 30) + 12] {
                for dtype in [DType::Fp32, DType::Fp16] {
                    let (x, xa, xb) = fast.estimate(bytes, dtype);
                    let (y, ya, yb) = built.estimate(bytes, dtype);
                    assert_eq!(
                        (x.time_us.to_bits(), xa.to_bits(), xb),
                        (y.time_us.to_bits(), ya.to_bits(), yb),
                        "{q} n={n} {a} {p} {bytes} B {dtype:?}"
                    );
                }
            }
        }
    }
    // Most cases take the unmade path (the rest make the step).
    assert!(unmade >= 100, "only {unmade} steps were walked unmade");
}

#[test]
fn auto_at_1024_ranks_estimates_only_what_it_runs() {
    // 910b-128x8, 1 GiB: HCCL's rule decides (pipeline), then one estimate.
    let c = config("910b-128x8", Primitive::AllReduce, 1024, 1 << 30);
    let p = Plan::headline(&c).unwrap();
    assert_eq!(p.algorithm, Algorithm::Pipeline);
    assert!(p.ranking.is_empty());
    assert!(p.estimate.time_us > 0.0);
    // The full plan lists every algorithm; the ones too large to build here
    // say so instead of a figure.
    let full = Plan::new(&c).unwrap();
    assert_eq!(
        full.ranking.len(),
        Algorithm::applicable(Primitive::AllReduce, 1024).len()
    );
    let row = full
        .ranking
        .iter()
        .find(|r| r.algorithm == Algorithm::Pipeline)
        .unwrap();
    assert_eq!(row.time_us(), p.estimate.time_us);
}

/// The chart's curves are the plan's headline estimates: at 8 ranks every
/// schedule is within the sweep's simulation budget, and each point is
/// what `Plan::at` (the same algorithm, at that size) says.
#[test]
fn sweep_curves_are_the_plans_estimates() {
    let sizes = plan::chart_sizes();
    for (topo, op) in [
        ("910b-8", Primitive::AllReduce),
        ("910b-8", Primitive::Broadcast),
        ("h100-8", Primitive::AllGather),
    ] {
        let c = config(topo, op, 8, 1 << 20);
        let curves = plan::sweep_curves(&c, &sizes).unwrap();
        let want: Vec<Algorithm> = Algorithm::applicable(op, 8);
        assert_eq!(
            curves.iter().map(|x| x.algorithm).collect::<Vec<_>>(),
            want.iter()
                .copied()
                .filter(|&a| curves.iter().any(|x| x.algorithm == a))
                .collect::<Vec<_>>()
        );
        assert!(curves.len() >= 3, "{topo} {op:?}: {}", curves.len());
        for curve in &curves {
            assert!(!curve.bound && curve.skipped.is_none(), "{curve:?}");
            assert_eq!(curve.points.len(), sizes.len());
            assert_eq!(curve.passes, sizes.len());
            for &(b, busbw) in &curve.points {
                let p = Plan::at(&c, AlgoChoice::Fixed(curve.algorithm), b).unwrap();
                assert_eq!(p.method, Method::Simulated);
                let rel = (busbw - p.estimate.busbw_gbps).abs() / p.estimate.busbw_gbps;
                assert!(
                    rel < 1e-9,
                    "{topo} {op:?} {} at {b}: sweep {busbw} vs plan {}",
                    curve.algorithm,
                    p.estimate.busbw_gbps
                );
            }
        }
    }
}

/// At 1024 ranks the sweep stays within the plan's budgets: schedules
/// above the sweep's simulation budget are walked once for all 21 sizes
/// (their bound), never built whole per size; every curve it draws has a
/// positive busbw at every size, and the bound curves' points are the
/// plan's bound at that size.
#[test]
fn sweep_curves_at_1024_ranks_are_bounded() {
    let sizes = plan::chart_sizes();
    let c = config("910b-128x8", Primitive::AllReduce, 1024, 1 << 30);
    let curves = plan::sweep_curves(&c, &sizes).unwrap();
    assert!(curves.iter().any(|x| x.algorithm == Algorithm::Ring));
    assert!(curves.iter().any(|x| x.algorithm == Algorithm::Mesh));
    for curve in &curves {
        if let Some(why) = &curve.skipped {
            assert!(curve.points.is_empty(), "{why}");
            assert!(
                plan::transfers_upper(curve.algorithm, c.primitive, c.ranks)
                    > plan::BUILD_BUDGET_TRANSFERS
                    || why.contains("not modelled"),
                "{why}"
            );
            continue;
        }
        assert_eq!(curve.points.len(), sizes.len(), "{curve:?}");
        assert!(curve.points.iter().all(|p| p.1 > 0.0 && p.1.is_finite()));
        // A schedule too large to walk per size is walked once on the one
        // machine (no profile: it does not change with the size).
        let upper = plan::transfers_upper(curve.algorithm, c.primitive, c.ranks);
        assert!(
            curve.walked <= upper + sizes.len() * plan::SWEEP_REWALK_TRANSFERS,
            "{:?} walked {}",
            curve.algorithm,
            curve.walked
        );
        assert!(
            curve.passes == 1 || curve.passes == sizes.len(),
            "{curve:?}"
        );
    }
    // Mesh on 1024 ranks (a million transfers a step) is a bound; its
    // complete exchanges are never made (the bound reads them off the
    // machine), so it is walked at every size at no cost; its 1 GiB point
    // is the plan's own estimate there (the plan bounds it too).
    let mesh = curves
        .iter()
        .find(|x| x.algorithm == Algorithm::Mesh)
        .unwrap();
    assert!(mesh.bound);
    assert_eq!((mesh.passes, mesh.walked), (sizes.len(), 0));
    let p = Plan::at(&c, AlgoChoice::Fixed(Algorithm::Mesh), 1 << 30).unwrap();
    assert_eq!(p.method, Method::Bound);
    let last = mesh.points.last().unwrap();
    assert!((last.1 - p.estimate.busbw_gbps).abs() <= 1e-9 * last.1);
    // Ring's repeated steps are reused, so it is simulated where its chunks
    // have one size (not 1 KiB over 1024 ranks), and at 1 GiB equals the
    // plan's estimate.
    let ring = curves
        .iter()
        .find(|x| x.algorithm == Algorithm::Ring)
        .unwrap();
    assert_eq!(ring.passes, sizes.len());
    let p = Plan::at(&c, AlgoChoice::Fixed(Algorithm::Ring), 1 << 30).unwrap();
    let last = ring.points.last().unwrap();
    assert!((last.1 - p.estimate.busbw_gbps).abs() <= 1e-9 * last.1);
}

/// The curves depend on the configuration without its size, algorithm,
/// seed and what-ifs: the page sweeps again only when this key changes.
#[test]
fn sweep_key_ignores_what_the_curves_do_not_depend_on() {
    let a = config("910b-16x8", Primitive::AllReduce, 128, 1 << 20);
    let mut b = a.clone();
    b.bytes = 1 << 28;
    b.algo = AlgoChoice::Fixed(Algorithm::Ring);
    b.seed = 7;
    assert_eq!(plan::sweep_key(&a), plan::sweep_key(&b));
    let mut c = a.clone();
    c.ranks = 64;
    assert_ne!(plan::sweep_key(&a), plan::sweep_key(&c));
    let mut d = a.clone();
    d.slices = Slices::Fixed(2);
    assert_ne!(plan::sweep_key(&a), plan::sweep_key(&d));
}

/// A compressed plan simulates its whole schedule; one too large to hold
/// is refused with the field named (ring AllReduce on 8192 ranks has
/// 134 M transfers: building it took more than 6 GB and aborted), and
/// the same link without compression is estimated.
#[test]
fn compression_refuses_a_schedule_too_large_to_hold() {
    let q = "topo=910b-1024x8&ranks=8192&algo=ring&bytes=1GiB&compress=int8";
    let (c, errors) = Config::from_query(q);
    assert!(errors.is_empty(), "{errors:?}");
    for r in [Plan::new(&c), Plan::headline(&c)] {
        match r {
            Err(plan::PlanError::Model(why)) => {
                assert!(why.starts_with("compress=int8: "), "{why}");
                assert!(why.contains("has 134201344 transfers"), "{why}");
                assert!(why.contains("allowed here: compress=none"), "{why}");
            }
            other => panic!("{q}: {other:?}"),
        }
    }
    let mut c = c;
    c.compress.scheme = ccl_playground::engine::quantization::Scheme::None;
    let p = Plan::headline(&c).unwrap();
    assert!(p.estimate.time_us > 0.0);
    // The count, not the (loose) upper bound, decides: hier's AllReduce
    // on 2048 ranks has ~1.07 M transfers though its bound is 8.5 M.
    let q = "topo=910b-256x8&ranks=2048&algo=hier&op=allreduce&bytes=64MiB&compress=int8";
    let (c, errors) = Config::from_query(q);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        plan::transfers_upper(Algorithm::Hier, Primitive::AllReduce, 2048)
            > plan::BUILD_BUDGET_TRANSFERS
    );
    let st = algorithm::stream_on(Algorithm::Hier, Primitive::AllReduce, 2048, 0, &[2048]).unwrap();
    assert_eq!(
        st.transfer_count(),
        st.build()
            .steps
            .iter()
            .map(|s| s.transfers.len())
            .sum::<usize>()
    );
    let p = Plan::headline(&c).unwrap_or_else(|e| panic!("{q}: {e}"));
    assert!(p.compressed.is_some(), "{q}");
}

/// HCCL's `auto` at 8192 ranks (1024 servers, below its pipeline
/// threshold) is hier-nhr, whose level1 steps of up to 4.2 M transfers
/// are shifts the bound never makes: the plan is made (it was refused as
/// "not modelled here" by the steps' upper bound), and equals the fixed
/// choice's.
#[test]
fn auto_at_8192_ranks_is_hier_nhr_and_estimated() {
    let c = config("910b-1024x8", Primitive::AllReduce, 8192, 1 << 30);
    let p = Plan::headline(&c).unwrap();
    assert_eq!((p.algorithm, p.method), (Algorithm::HierNhr, Method::Bound));
    let mut fixed = c.clone();
    fixed.algo = AlgoChoice::Fixed(Algorithm::HierNhr);
    let q = Plan::headline(&fixed).unwrap();
    assert_eq!(p.estimate.time_us, q.estimate.time_us);
    // NHR's 2·ceil(log2 1024) = 20 level1 steps and the two mesh steps.
    assert_eq!(p.schedule_steps, 22);
    assert!(p.estimate.time_us > 0.0);
}

/// HCCL stops choosing its pipeline when the task graph outgrows one FFTS+
/// graph (`CalcContextNumForPipeline` > `HCCL_FFTS_CAPACITY` 65535,
/// `coll_alg_operator.cc`): on 1024 servers an AllReduce needs
/// 2 × (1024 × 43 + 5) = 88 074 contexts, so 16 GiB on 8192 ranks (2 MiB
/// a rank, above the 1 MiB pipeline threshold) runs hier-nhr, as the
/// cost model picks for 4 servers and more. On 761 servers it fits
/// (65 456) and the pipeline runs.
#[test]
fn auto_leaves_the_pipeline_when_its_task_graph_outgrows_ffts() {
    let big = Plan::headline(&config("910b-1024x8", Primitive::AllReduce, 8192, 16 << 30)).unwrap();
    assert_eq!(big.algorithm, Algorithm::HierNhr);
    let Decision::Library { why } = &big.decision else {
        panic!("{:?}", big.decision)
    };
    assert!(
        why.contains("88074 FFTS+ task contexts") && why.contains("65535"),
        "{why}"
    );
    let fits = Plan::headline(&config("910b-761x8", Primitive::AllReduce, 6088, 16 << 30)).unwrap();
    assert_eq!(fits.algorithm, Algorithm::Pipeline);
}

/// HCCL's pipeline executor loops by one CCL buffer *per rank*
/// (`CollAllReduceMeshOpbasePipelineExecutor::CalcLoopMaxCount`:
/// `(cclBuffSize - align) / unitSize * userRankSize`): 16 GiB on 1024
/// ranks is one loop (the buffer holds 1024 × 200 MiB), where an executor
/// of one buffer a loop (hier-nhr) runs ceil(16 GiB / 200 MiB) = 82.
#[test]
fn the_pipeline_loops_by_a_buffer_per_rank() {
    let c = config("910b-128x8", Primitive::AllReduce, 1024, 16 << 30);
    let pipe = Plan::headline(&c).unwrap();
    assert_eq!((pipe.algorithm, pipe.loops()), (Algorithm::Pipeline, 1));
    let mut nhr = c.clone();
    nhr.algo = AlgoChoice::Fixed(Algorithm::HierNhr);
    let nhr = Plan::headline(&nhr).unwrap();
    assert_eq!(nhr.loops(), 82);
    // Overlapping HCCS with RoCE is why HCCL prefers it here.
    assert!(pipe.estimate.time_us < nhr.estimate.time_us);
}
