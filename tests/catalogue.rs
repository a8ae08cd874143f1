//! The whole catalogue: every algorithm × primitive it claims, proven by the
//! verifier for 2..=64 ranks (hier for 8·S, S = 1..=8), checked against
//! exact results computed from the collective's definition alone, timed
//! against its closed form, and "auto" on a multi-server cluster.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use ccl_playground::engine::algorithm::{self, build_with_root, Algorithm, AlgorithmError};
use ccl_playground::engine::check::Checker;
use ccl_playground::engine::collective::{moe_weight, Expect, Primitive};
use ccl_playground::engine::config::{AlgoChoice, Config};
use ccl_playground::engine::cost::{closed_form, estimate};
use ccl_playground::engine::dtype::{DType, ReduceOp};
use ccl_playground::engine::execute::reference_run;
use ccl_playground::engine::input;
use ccl_playground::engine::plan::{Decision, Plan};
use ccl_playground::engine::schedule::{Schedule, TransferKind};
use ccl_playground::engine::topology::Topology;
use ccl_playground::engine::verify::{verify, VerifyError};
use common::full_mesh;

/// Roots worth trying for `n` ranks (one for unrooted primitives).
fn roots(p: Primitive, n: usize) -> Vec<usize> {
    if p.rooted() {
        let mut v = vec![0, n - 1, n / 2];
        v.dedup();
        v
    } else {
        vec![0]
    }
}

#[test]
fn verifier_proves_every_claimed_combination_for_2_to_64_ranks() {
    let mut proven = 0;
    for a in Algorithm::ALL {
        for p in Primitive::ALL {
            for n in 2..=64 {
                if !a.supports(p, n) {
                    continue;
                }
                for root in roots(p, n) {
                    let s = build_with_root(a, p, n, root).unwrap();
                    assert_eq!(s.root, root);
                    verify(&s).unwrap_or_else(|e| panic!("{a} {p} n={n} root={root}: {e}"));
                    proven += 1;
                }
            }
        }
    }
    // Every primitive has at least one algorithm at every rank count it can run.
    for p in Primitive::ALL {
        for n in 2..=64 {
            let any = Algorithm::ALL.iter().any(|a| a.supports(p, n));
            assert_eq!(any, p != Primitive::AlltoAllV || n <= 16, "{p} n={n}");
        }
    }
    assert!(proven > 1500, "{proven}");
}

#[test]
fn hier_and_pipeline_are_proven_for_1_to_8_servers() {
    let mut proven = 0;
    for servers in 1..=8 {
        let n = 8 * servers;
        for (a, ps) in [
            (
                Algorithm::Hier,
                &[
                    Primitive::AllReduce,
                    Primitive::ReduceScatter,
                    Primitive::AllGather,
                    Primitive::Broadcast,
                    Primitive::Reduce,
                    Primitive::Scatter,
                    Primitive::Gather,
                ][..],
            ),
            (
                Algorithm::Pipeline,
                &[
                    Primitive::AllReduce,
                    Primitive::ReduceScatter,
                    Primitive::AllGather,
                ][..],
            ),
        ] {
            for &p in ps {
                // Every root for the rooted ones.
                let roots: Vec<usize> = if p.rooted() {
                    (0..n).collect()
                } else {
                    vec![0]
                };
                for root in roots {
                    let s = build_with_root(a, p, n, root).unwrap();
                    verify(&s).unwrap_or_else(|e| panic!("{a} {p} S={servers} root={root}: {e}"));
                    proven += 1;
                }
            }
        }
    }
    assert_eq!(
        proven,
        8 * 3 + 4 * (8 + 16 + 24 + 32 + 40 + 48 + 56 + 64) + 8 * 3
    );
    for a in [Algorithm::Hier, Algorithm::Pipeline] {
        assert!(!a.supports(Primitive::AllReduce, 12));
        assert!(!a.supports(Primitive::AlltoAll, 16));
    }
}

#[test]
fn step_counts_are_logarithmic_where_the_textbook_says_so() {
    for n in 2..=64usize {
        let l = n.next_power_of_two().trailing_zeros() as usize;
        let steps = |a, p| algorithm::build(a, p, n).unwrap().steps.len();
        assert_eq!(steps(Algorithm::Nb, Primitive::AllGather), l);
        assert_eq!(steps(Algorithm::Nb, Primitive::AllReduce), 2 * l);
        assert_eq!(steps(Algorithm::Nb, Primitive::AlltoAll), l);
        assert_eq!(steps(Algorithm::Nhr, Primitive::ReduceScatter), l);
        assert_eq!(steps(Algorithm::Nhr, Primitive::AllReduce), 2 * l);
        assert_eq!(steps(Algorithm::Nhr, Primitive::Broadcast), 2 * l);
        if n % 8 == 0 {
            let m = n / 8;
            let d = m.next_power_of_two().trailing_zeros() as usize;
            assert_eq!(steps(Algorithm::Pipeline, Primitive::AllGather), m);
            assert_eq!(steps(Algorithm::Pipeline, Primitive::AllReduce), 2 * m);
            assert_eq!(steps(Algorithm::Hier, Primitive::Broadcast), 2 + d);
            // HCCL's level1 NHR: ceil(log2 m) steps per phase between servers.
            assert_eq!(steps(Algorithm::HierNhr, Primitive::AllReduce), 2 + 2 * d);
            assert_eq!(steps(Algorithm::HierNhr, Primitive::AllGather), 1 + d);
            assert_eq!(steps(Algorithm::Hier, Primitive::Reduce), 2 + d);
            assert_eq!(
                steps(Algorithm::Hier, Primitive::Scatter),
                1 + (m > 1) as usize
            );
        }
        assert_eq!(steps(Algorithm::Tree, Primitive::Broadcast), l);
        assert_eq!(steps(Algorithm::Star, Primitive::Gather), 1);
        assert_eq!(steps(Algorithm::Pairwise, Primitive::AlltoAll), n - 1);
        let p2 = if n.is_power_of_two() {
            n
        } else {
            n.next_power_of_two() / 2
        };
        let extra = if n.is_power_of_two() { 0 } else { 2 };
        assert_eq!(
            steps(Algorithm::Rhd, Primitive::AllReduce),
            2 * p2.trailing_zeros() as usize + extra
        );
        // NCCL's tree on one node is the chain of its n GPUs: n - 1 hops
        // up, n - 1 down.
        assert_eq!(steps(Algorithm::Dbtree, Primitive::AllReduce), 2 * (n - 1));
        // Ring Broadcast / Reduce: the chain from / to the root.
        assert_eq!(steps(Algorithm::Ring, Primitive::Broadcast), n - 1);
        assert_eq!(steps(Algorithm::Ring, Primitive::Reduce), n - 1);
    }
}

#[test]
fn unsupported_combinations_are_refused_with_the_applicable_ones() {
    let e = algorithm::build(Algorithm::Pairwise, Primitive::Broadcast, 8).unwrap_err();
    assert_eq!(
        e,
        AlgorithmError::Unsupported {
            algorithm: "pairwise",
            primitive: Primitive::Broadcast,
            ranks: 8,
            applicable: "ring, mesh, tree, star, hier, nhr".into()
        }
    );
    assert!(
        e.to_string()
            .contains("applicable: ring, mesh, tree, star, hier, nhr"),
        "{e}"
    );
    let e = algorithm::build(Algorithm::Rhd, Primitive::AllGather, 6).unwrap_err();
    assert!(
        e.to_string().ends_with("applicable: ring, mesh, nb, nhr"),
        "{e}"
    );
    let e = algorithm::build(Algorithm::Pipeline, Primitive::AllGather, 12).unwrap_err();
    assert!(
        e.to_string().ends_with("applicable: ring, mesh, nb, nhr"),
        "{e}"
    );
    let e = build_with_root(Algorithm::Hier, Primitive::Scatter, 12, 3).unwrap_err();
    assert!(e.to_string().ends_with("applicable: tree, star"), "{e}");
    let e = algorithm::build(Algorithm::Ring, Primitive::AlltoAll, 5).unwrap_err();
    assert!(
        e.to_string().ends_with("applicable: mesh, pairwise, nb"),
        "{e}"
    );
    assert_eq!(
        build_with_root(Algorithm::Tree, Primitive::Reduce, 4, 4).unwrap_err(),
        AlgorithmError::BadRoot { root: 4, max: 3 }
    );
    let e = algorithm::build(Algorithm::Pairwise, Primitive::AlltoAllV, 17).unwrap_err();
    assert!(e.to_string().contains("applicable: none"), "{e}");
}

/// The exact value of element `j` of (rank, block) by the collective's
/// definition, or `None` for scratch.
#[allow(clippy::too_many_arguments)]
fn expected(
    s: &Schedule,
    dtype: DType,
    op: ReduceOp,
    seed: u64,
    elems: usize,
    rank: usize,
    block: usize,
    j: usize,
) -> Option<f64> {
    let (n, p) = (s.ranks, s.primitive);
    let here = p.block_range(n, elems, block);
    match p.expected_after(n, s.root, rank, block)? {
        Expect::All => {
            let i = here.start + j;
            let mut acc = input::value(dtype, seed, 0, i);
            for q in 1..n {
                acc = op.exact(dtype, acc, input::value(dtype, seed, q, i));
            }
            Some(op.exact_finish(dtype, acc, n))
        }
        Expect::Only { rank: q, block: b } => {
            let from = p.block_range(n, elems, b);
            assert_eq!(from.len(), here.len());
            Some(input::value(dtype, seed, q, from.start + j))
        }
    }
}

#[test]
fn every_combination_computes_the_exact_result_for_2_to_8_ranks() {
    let seed = 77;
    for a in Algorithm::ALL {
        for p in Primitive::ALL {
            for n in 2..=8 {
                if !a.supports(p, n) {
                    continue;
                }
                for root in roots(p, n) {
                    let s = build_with_root(a, p, n, root).unwrap();
                    let v = verify(&s).unwrap();
                    let dtypes: &[DType] = if p.reduces() {
                        &DType::ALL
                    } else {
                        &[DType::Fp16, DType::Int8]
                    };
                    for &dtype in dtypes {
                        let ops: &[ReduceOp] = if p.reduces() {
                            &ReduceOp::ALL
                        } else {
                            &[ReduceOp::Sum]
                        };
                        for &op in ops {
                            // Uneven for the even layouts; a whole weighted layout plus a tail otherwise.
                            let elems = 12 * n + 5;
                            let out = reference_run(&s, dtype, op, seed, elems).unwrap();
                            let mut checker = Checker::new(&s, &v, dtype, op, seed, elems);
                            for (r, buf) in out.iter().enumerate() {
                                assert_eq!(buf.len(), s.buffer_elems(elems) * dtype.size_bytes());
                                let rep = checker.check_rank(r, buf);
                                assert!(
                                    rep.ok(),
                                    "{a} {p} n={n} root={root} {dtype} {op} rank {r}: {rep:?}"
                                );
                                for b in 0..s.blocks() {
                                    let range = p.block_range(n, elems, b);
                                    for (j, i) in range.enumerate() {
                                        let Some(want) =
                                            expected(&s, dtype, op, seed, elems, r, b, j)
                                        else {
                                            continue;
                                        };
                                        let got = dtype.read_f64(buf, i);
                                        let exact = !dtype.is_float()
                                            || !p.reduces()
                                            || matches!(op, ReduceOp::Max | ReduceOp::Min);
                                        let tol = if exact {
                                            0.0
                                        } else {
                                            (n * n) as f64
                                                * dtype.unit_roundoff()
                                                * want.abs().max(16.0)
                                                * 16.0
                                        };
                                        assert!(
                                            (got - want).abs() <= tol,
                                            "{a} {p} n={n} root={root} {dtype} {op} rank {r} block {b} elem {i}: {got} vs {want}"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[test]
fn every_uncontended_time_equals_its_closed_form() {
    let (alpha, bw) = (5.0, 25.0);
    let mut checked_with_gamma = 0;
    for n in (2..=16).chain([24, 32]) {
        let plain = full_mesh(n, bw, alpha, None);
        let reducing = full_mesh(n, bw, alpha, Some(40.0));
        for a in Algorithm::ALL {
            for p in Primitive::ALL {
                if !a.supports(p, n) {
                    continue;
                }
                for root in roots(p, n) {
                    let s = build_with_root(a, p, n, root).unwrap();
                    // S divides evenly into every chunk (and AlltoAllV's weight units).
                    let w: u64 = (0..n)
                        .flat_map(|i| (0..n).map(move |j| moe_weight(i, j)))
                        .sum();
                    let mut unit = s.chunks;
                    if p == Primitive::AlltoAllV {
                        unit = unit / gcd(unit, w as usize) * w as usize;
                    }
                    for mult in [1usize, 1000] {
                        let elems = unit * mult * 3;
                        let bytes = (elems * 4) as u64;
                        let e = estimate(&s, &plain, bytes, DType::Fp32).unwrap();
                        let want = closed_form(a, p, n, bytes as f64, alpha, bw, None).unwrap();
                        assert!(
                            (e.time_us - want).abs() <= 1e-9 * want.max(1.0),
                            "{a} {p} n={n} root={root} bytes={bytes}: model {} vs closed form {want}",
                            e.time_us
                        );
                        // With a reduce cost: exact where no link is shared
                        // (with shared links a reduce may start before the
                        // last message of the step arrived).
                        if e.timeline.steps.iter().all(|st| st.max_link_sharing <= 1) {
                            let e = estimate(&s, &reducing, bytes, DType::Fp32).unwrap();
                            let want =
                                closed_form(a, p, n, bytes as f64, alpha, bw, Some(40.0)).unwrap();
                            assert!(
                                (e.time_us - want).abs() <= 1e-9 * want.max(1.0),
                                "{a} {p} n={n} root={root} bytes={bytes} with γ: model {} vs closed form {want}",
                                e.time_us
                            );
                            checked_with_gamma += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked_with_gamma > 300, "{checked_with_gamma}");
}

#[test]
fn closed_forms_are_the_textbook_ones_at_a_glance() {
    // n = 8, S = 8 MB, α = 1 µs, 1 GB/s (β = 1e-3 µs/B), no γ.
    let cf = |a, p| closed_form(a, p, 8, 8e6, 1.0, 1.0, None).unwrap();
    let close = |x: f64, y: f64| (x - y).abs() < 1e-6 * y;
    assert!(close(
        cf(Algorithm::Rhd, Primitive::AllReduce),
        6.0 + 2.0 * 7e3
    ));
    assert!(close(
        cf(Algorithm::Tree, Primitive::Broadcast),
        3.0 * (1.0 + 8e3)
    ));
    assert!(close(cf(Algorithm::Nb, Primitive::AllGather), 3.0 + 7e3));
    assert!(close(
        cf(Algorithm::Pairwise, Primitive::AlltoAll),
        7.0 * (1.0 + 1e3)
    ));
    assert!(close(cf(Algorithm::Star, Primitive::Scatter), 1.0 + 1e3));
    assert!(close(cf(Algorithm::Tree, Primitive::Gather), 3.0 + 7e3));
    // NHR.md: ceil(log2 p)α + (p-1)/p·nβ; Bruck AlltoAll: log p·α + (n/2)·log p·β.
    assert!(close(cf(Algorithm::Nhr, Primitive::AllGather), 3.0 + 7e3));
    assert!(close(
        cf(Algorithm::Nhr, Primitive::Broadcast),
        6.0 + 2.0 * 7e3
    ));
    assert!(close(
        cf(Algorithm::Nhr, Primitive::AllReduce),
        6.0 + 2.0 * 7e3
    ));
    assert!(close(
        cf(Algorithm::Nb, Primitive::AlltoAll),
        3.0 * (1.0 + 4e3)
    ));
    // 5 ranks: positions with bit 0 set {1, 3}, bit 1 {2, 3}, bit 2 {4}.
    assert!(close(
        closed_form(Algorithm::Nb, Primitive::AlltoAll, 5, 5e6, 1.0, 1.0, None).unwrap(),
        3.0 + 5.0 * 1e3
    ));
    // 16 ranks = 2 servers: Pipeline.md with one α, β: 2·(α + S/16·β);
    // hier Broadcast (2 + 1)(α + S/8·β), Scatter α + S/8·β + α + S/16·β.
    let cf16 = |a, p| closed_form(a, p, 16, 16e6, 1.0, 1.0, None).unwrap();
    assert!(close(
        cf16(Algorithm::Pipeline, Primitive::AllGather),
        2.0 * (1.0 + 1e3)
    ));
    assert!(close(
        cf16(Algorithm::Pipeline, Primitive::AllReduce),
        4.0 * (1.0 + 1e3)
    ));
    assert!(close(
        cf16(Algorithm::Hier, Primitive::Broadcast),
        3.0 * (1.0 + 2e3)
    ));
    assert!(close(
        cf16(Algorithm::Hier, Primitive::Scatter),
        2.0 + 2e3 + 1e3
    ));
    // Ring Broadcast: the chain, (n-1)(α + Sβ) unsliced.
    assert!(close(
        closed_form(
            Algorithm::Ring,
            Primitive::Broadcast,
            8,
            8e6,
            1.0,
            1.0,
            None
        )
        .unwrap(),
        7.0 * (1.0 + 8e3)
    ));
    assert!(closed_form(
        Algorithm::Pairwise,
        Primitive::Broadcast,
        8,
        1.0,
        1.0,
        1.0,
        None
    )
    .is_none());
}

#[test]
fn broken_catalogue_schedules_are_rejected() {
    // AlltoAll: rank 0 delivers its piece for rank 2 into rank 1's slot for 0.
    let mut s = algorithm::build(Algorithm::Pairwise, Primitive::AlltoAll, 4).unwrap();
    let t = &mut s.steps[0].transfers[0];
    assert_eq!((t.src, t.dst, t.first, t.dst_first), (0, 1, 1, 4));
    t.first = 2;
    let e = verify(&s).unwrap_err();
    assert!(
        matches!(
            e,
            VerifyError::WrongResult {
                rank: 1,
                chunk: 4,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("of chunk 2"), "{e}");
    // A piece may not land in a slot of another size (AlltoAllV weights).
    let mut s = algorithm::build(Algorithm::Pairwise, Primitive::AlltoAllV, 4).unwrap();
    s.steps[0].transfers[0].dst_first += 1;
    assert!(matches!(
        verify(&s).unwrap_err(),
        VerifyError::BadTransfer(_) | VerifyError::WrongResult { .. }
    ));
    // Reducing AlltoAll pieces of different origins.
    let mut s = algorithm::build(Algorithm::Mesh, Primitive::AlltoAll, 3).unwrap();
    let mut extra = s.steps[0].transfers[0];
    extra.first = (extra.first + 1) % 3;
    if extra.first == extra.src {
        extra.first = (extra.first + 1) % 3;
    }
    extra.kind = TransferKind::Reduce;
    s.steps.push(ccl_playground::engine::schedule::Step {
        phase: "bad".into(),
        transfers: vec![extra],
    });
    assert!(matches!(
        verify(&s).unwrap_err(),
        VerifyError::MixedOrigins { .. }
    ));
    // Scatter that forgets a rank; Broadcast from the wrong root.
    let mut s = build_with_root(Algorithm::Star, Primitive::Scatter, 4, 2).unwrap();
    s.steps[0].transfers.pop();
    assert!(matches!(
        verify(&s).unwrap_err(),
        VerifyError::WrongResult { .. }
    ));
    let mut s = build_with_root(Algorithm::Tree, Primitive::Broadcast, 5, 1).unwrap();
    s.root = 0;
    assert!(verify(&s).is_err());
    // Reduce that counts the root twice.
    let mut s = build_with_root(Algorithm::Tree, Primitive::Reduce, 4, 0).unwrap();
    let dup = s.steps[0].transfers[0];
    s.steps[1].transfers.push(dup);
    assert!(matches!(
        verify(&s).unwrap_err(),
        VerifyError::DuplicateContribution { .. } | VerifyError::WriteConflict { .. }
    ));
}

#[test]
fn auto_on_4_servers_follows_hccl_nhr_small_and_pipeline_large() {
    let c = |bytes: u64| Config {
        topo: "910b-4x8".into(),
        ranks: 32,
        bytes,
        ..Config::default()
    };
    // 4 KiB: 128 B per rank, below HCCL's 1 MiB pipeline threshold; 4
    // servers: NHR between them (HCCL's level1 cost model).
    let small = Plan::new(&c(4 << 10)).unwrap();
    assert_eq!(small.algorithm, Algorithm::HierNhr, "{}", small.verdict);
    assert!(matches!(small.decision, Decision::Library { .. }));
    assert!(small.verdict.contains("NHR"), "{}", small.verdict);
    // 256 MiB: 8 MiB per rank: HCCL's pipeline, which the model also ranks
    // first (its mesh steps run while the ring is on RoCE).
    let big = Plan::new(&c(256 << 20)).unwrap();
    assert_eq!(big.algorithm, Algorithm::Pipeline, "{}", big.verdict);
    assert_eq!(big.ranking[0].algorithm, Algorithm::Pipeline);
    assert!(big.verdict.contains("bandwidth-bound"), "{}", big.verdict);
    // Every ranking row names its steps and time.
    assert!(
        big.details.iter().any(|d| d.starts_with("hier: ")),
        "{:?}",
        big.details
    );
}

#[test]
fn auto_handles_every_primitive_on_the_presets() {
    for (topo, n) in [
        ("910b-8", 8),
        ("910a-8", 8),
        ("h100-8", 8),
        ("910b-4x8", 32),
    ] {
        for p in Primitive::ALL {
            let c = Config {
                topo: topo.into(),
                ranks: n,
                primitive: p,
                bytes: 1 << 20,
                algo: AlgoChoice::Auto,
                ..Config::default()
            };
            if p == Primitive::AlltoAllV && n > 16 {
                let e = Plan::new(&c).unwrap_err().to_string();
                assert!(e.contains("AlltoAllV runs on 2..=16 ranks"), "{e}");
                continue;
            }
            let plan = Plan::new(&c).unwrap_or_else(|e| panic!("{topo} {p}: {e}"));
            assert!(!plan.ranking.is_empty());
            assert!(
                plan.library.runs(plan.algorithm, p),
                "{topo} {p}: auto chose {}, which {} does not run",
                plan.algorithm,
                plan.library.title()
            );
        }
    }
}

#[test]
fn bruck_alltoall_forwards_the_pieces_with_bit_k_set() {
    // 5 ranks, step 0 (distance 1): rank 0 sends positions 1 and 3. Position
    // 1 (its piece for rank 1) arrives: receive block 5 + 0. Position 3
    // (its piece for rank 3) goes on: rank 1's position 3 = send block 4.
    let s = algorithm::build(Algorithm::Nb, Primitive::AlltoAll, 5).unwrap();
    assert_eq!(s.chunks, 10);
    let from0: Vec<_> = s.steps[0]
        .transfers
        .iter()
        .filter(|t| t.src == 0)
        .map(|t| (t.dst, t.first, t.count, t.dst_first))
        .collect();
    assert_eq!(from0, [(1, 1, 1, 5), (1, 3, 1, 4)]);
    // Step 2 (distance 4): position 4 only, which always arrives: rank 0
    // sends its block 4, now holding rank 0's own piece for rank 4, to rank
    // 4's receive block 5 + 0.
    let from0: Vec<_> = s.steps[2]
        .transfers
        .iter()
        .filter(|t| t.src == 0)
        .map(|t| (t.dst, t.first, t.count, t.dst_first))
        .collect();
    assert_eq!(from0, [(4, 4, 1, 5)]);
    // Every rank sends c_k blocks per step: 2, 2, 1.
    for (k, want) in [(0, 2), (1, 2), (2, 1)] {
        let blocks: usize = s.steps[k]
            .transfers
            .iter()
            .filter(|t| t.src == 3)
            .map(|t| t.count)
            .sum();
        assert_eq!(blocks, want, "step {k}");
    }
}

#[test]
fn pipeline_on_a_910b_cluster_equals_pipeline_md_with_two_levels() {
    // Pipeline.md Table 1: (m - 1)·max(s/p·β_inter + α_inter, s/p·β_intra +
    // α_intra) + s/p·β_intra + α_intra, with the cluster's own HCCS and RoCE
    // figures (uncontended: one ring flow per RoCE port direction, one mesh
    // flow per HCCS link).
    for servers in [2, 4] {
        let topo = Topology::preset(&format!("910b-{servers}x8")).unwrap();
        let n = 8 * servers;
        let (intra, inter) = (topo.route(0, 1).unwrap(), topo.route(0, 8).unwrap());
        assert!(inter.hops.len() > 1 && intra.hops.len() == 1);
        let bytes = (n * 4096 * 4) as u64;
        let per = bytes as f64 / n as f64;
        let t = |r: &ccl_playground::engine::topology::Route| {
            r.latency_us + per / (r.bandwidth_gbps * 1e3)
        };
        let want = (servers - 1) as f64 * t(&inter).max(t(&intra)) + t(&intra);
        let s = algorithm::build(Algorithm::Pipeline, Primitive::AllGather, n).unwrap();
        let e = estimate(&s, &topo, bytes, DType::Fp32).unwrap();
        assert!(
            (e.time_us - want).abs() <= 1e-9 * want,
            "S={servers}: model {} vs Pipeline.md {want}",
            e.time_us
        );
        assert!(e.timeline.steps.iter().all(|st| st.max_link_sharing == 1));
        // hier moves the same bytes but does not overlap the levels.
        let h = algorithm::build(Algorithm::Hier, Primitive::AllGather, n).unwrap();
        let eh = estimate(&h, &topo, bytes, DType::Fp32).unwrap();
        assert!(
            e.time_us < eh.time_us,
            "{} vs hier {}",
            e.time_us,
            eh.time_us
        );
    }
}

#[test]
fn new_algorithms_match_the_exact_result_beyond_8_ranks() {
    // The reference executor, checked bit for bit by the checker and
    // element by element against the collective's definition, on a few
    // sizes (uneven ones included) for ranks the 2..=8 sweep cannot reach.
    let seed = 5;
    let mut cases: Vec<(Algorithm, Primitive, usize, usize)> = Vec::new();
    for n in [16, 24] {
        for p in [
            Primitive::AllReduce,
            Primitive::ReduceScatter,
            Primitive::AllGather,
        ] {
            cases.push((Algorithm::Pipeline, p, n, 0));
            cases.push((Algorithm::Nhr, p, n, 0));
        }
        for p in [
            Primitive::Broadcast,
            Primitive::Reduce,
            Primitive::Scatter,
            Primitive::Gather,
        ] {
            cases.push((Algorithm::Hier, p, n, n - 3));
        }
    }
    for n in [11, 13, 16] {
        cases.push((Algorithm::Nb, Primitive::AlltoAll, n, 0));
        cases.push((Algorithm::Nhr, Primitive::AllReduce, n, 0));
        cases.push((Algorithm::Nhr, Primitive::Broadcast, n, n / 2));
    }
    for (a, p, n, root) in cases {
        let s = build_with_root(a, p, n, root).unwrap();
        let v = verify(&s).unwrap();
        for elems in [n, 7 * n + 3, 64 * n] {
            for (dtype, op) in [
                (DType::Fp32, ReduceOp::Sum),
                (DType::Bf16, ReduceOp::Max),
                (DType::Int32, ReduceOp::Prod),
            ] {
                let out = reference_run(&s, dtype, op, seed, elems).unwrap();
                let mut checker = Checker::new(&s, &v, dtype, op, seed, elems);
                for (r, buf) in out.iter().enumerate() {
                    let rep = checker.check_rank(r, buf);
                    assert!(
                        rep.ok(),
                        "{a} {p} n={n} {dtype} {op} elems={elems} rank {r}: {rep:?}"
                    );
                    for b in 0..s.blocks() {
                        for (j, i) in p.block_range(n, elems, b).enumerate() {
                            let Some(want) = expected(&s, dtype, op, seed, elems, r, b, j) else {
                                continue;
                            };
                            let got = dtype.read_f64(buf, i);
                            let tol = if dtype == DType::Fp32 && p.reduces() {
                                (n * n) as f64 * dtype.unit_roundoff() * want.abs().max(16.0) * 16.0
                            } else {
                                0.0
                            };
                            assert!(
                                (got - want).abs() <= tol,
                                "{a} {p} n={n} {dtype} {op} rank {r} elem {i}: {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }
}
