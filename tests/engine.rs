//! Native tests of the engine: every algorithm × primitive × dtype × op
//! against the reference executor and exact results, the verifier against
//! broken schedules, and the cost model against the closed forms.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::check::Checker;
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::config::Config;
use ccl_playground::engine::cost::{closed_form_us, estimate};
use ccl_playground::engine::dtype::{DType, ReduceOp};
use ccl_playground::engine::execute::{execute, initial_buffer, reference_run};
use ccl_playground::engine::input;
use ccl_playground::engine::plan::{Decision, Plan};
use ccl_playground::engine::schedule::TransferKind;
use ccl_playground::engine::topology::Topology;
use ccl_playground::engine::verify::{verify, VerifyError};
use common::full_mesh as mesh_topology;
use proptest::prelude::*;

#[test]
fn verifier_proves_every_algorithm_for_2_to_64_ranks() {
    for a in Algorithm::ALL {
        for p in Primitive::ALL {
            for n in 2..=64 {
                if !a.supports(p, n) {
                    continue;
                }
                let s = algorithm::build(a, p, n).unwrap();
                let v = verify(&s).unwrap_or_else(|e| panic!("{a} {p} n={n}: {e}"));
                assert_eq!(v.trace.len(), s.steps.len() + 1);
            }
        }
    }
}

#[test]
fn step_counts_are_the_textbook_ones() {
    for n in 2..=16 {
        let ring = |p| algorithm::build(Algorithm::Ring, p, n).unwrap().steps.len();
        let mesh = |p| algorithm::build(Algorithm::Mesh, p, n).unwrap().steps.len();
        assert_eq!(ring(Primitive::AllReduce), 2 * (n - 1));
        assert_eq!(ring(Primitive::ReduceScatter), n - 1);
        assert_eq!(ring(Primitive::AllGather), n - 1);
        assert_eq!(mesh(Primitive::AllReduce), 2);
        assert_eq!(mesh(Primitive::AllGather), 1);
    }
    assert!(algorithm::build(Algorithm::Ring, Primitive::AllReduce, 1).is_err());
}

/// The exact result of element `i` for the given contributors (f64; wrapping for integers).
fn exact(dtype: DType, op: ReduceOp, seed: u64, ranks: &[usize], i: usize) -> f64 {
    let mut acc = input::value(dtype, seed, ranks[0], i);
    for &r in &ranks[1..] {
        acc = op.exact(dtype, acc, input::value(dtype, seed, r, i));
    }
    op.exact_finish(dtype, acc, ranks.len())
}

#[test]
fn every_algorithm_primitive_dtype_and_op_is_correct_for_2_to_8_ranks() {
    let seed = 2024;
    for a in Algorithm::ALL {
        for p in [
            Primitive::AllReduce,
            Primitive::ReduceScatter,
            Primitive::AllGather,
        ] {
            for n in 2..=8 {
                if !a.supports(p, n) {
                    continue;
                }
                let s = algorithm::build(a, p, n).unwrap();
                let v = verify(&s).unwrap();
                for dtype in DType::ALL {
                    let ops: &[ReduceOp] = if p.reduces() {
                        &ReduceOp::ALL
                    } else {
                        &[ReduceOp::Sum]
                    };
                    for &op in ops {
                        // An element count that does not divide by n: uneven chunks.
                        let elems = 8 * n + 3;
                        let out = reference_run(&s, dtype, op, seed, elems).unwrap();
                        let mut checker = Checker::new(&s, &v, dtype, op, seed, elems);
                        let all: Vec<usize> = (0..n).collect();
                        for (r, buf) in out.iter().enumerate() {
                            let rep = checker.check_rank(r, buf);
                            assert!(rep.ok(), "{a} {p} n={n} {dtype} {op} rank {r}: {rep:?}");
                            // Independent check of the values.
                            for b in 0..n {
                                let range = s.range_elems(
                                    elems,
                                    b * s.chunks_per_block(),
                                    s.chunks_per_block(),
                                );
                                for i in range {
                                    let got = dtype.read_f64(buf, i);
                                    let want = match p {
                                        Primitive::AllGather => input::value(dtype, seed, b, i),
                                        Primitive::ReduceScatter if b != r => continue,
                                        _ => exact(dtype, op, seed, &all, i),
                                    };
                                    let exact_expected = !dtype.is_float()
                                        || matches!(op, ReduceOp::Max | ReduceOp::Min)
                                        || p == Primitive::AllGather;
                                    if exact_expected {
                                        assert_eq!(
                                            got, want,
                                            "{a} {p} n={n} {dtype} {op} rank {r} elem {i}"
                                        );
                                    } else {
                                        let tol =
                                            (n as f64) * dtype.unit_roundoff() * (n as f64) + 1e-30;
                                        assert!((got - want).abs() <= tol, "{a} {p} n={n} {dtype} {op} rank {r} elem {i}: {got} vs {want}");
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

#[test]
fn int8_prod_wraps_exactly_as_documented() {
    // 4 ranks, one element each rank: the reference must equal the wrapping product.
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 4).unwrap();
    let out = reference_run(&s, DType::Int8, ReduceOp::Prod, 7, 64).unwrap();
    let mut wrapped_somewhere = false;
    for i in 0..64 {
        let xs: Vec<i64> = (0..4)
            .map(|r| input::value(DType::Int8, 7, r, i) as i64)
            .collect();
        let true_prod: i64 = xs.iter().product();
        let want = xs.iter().fold(1i8, |acc, &x| acc.wrapping_mul(x as i8));
        wrapped_somewhere |= true_prod != want as i64;
        assert_eq!(out[0][i] as i8, want, "element {i}");
    }
    assert!(
        wrapped_somewhere,
        "inputs in [-16,16) over 4 ranks must overflow int8 somewhere"
    );
}

#[test]
fn allreduce_known_buffers() {
    // Hand-made inputs: rank r holds [r+1, 10(r+1), 100(r+1), 1000(r+1)] as int32.
    let n = 4;
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
    let mut bufs: Vec<Vec<u8>> = (0..n)
        .map(|r| {
            [1, 10, 100, 1000]
                .iter()
                .flat_map(|m| ((r as i32 + 1) * m).to_le_bytes())
                .collect()
        })
        .collect();
    execute(&s, DType::Int32, ReduceOp::Sum, &mut bufs).unwrap();
    let want: Vec<u8> = [10i32, 100, 1000, 10000]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    for b in &bufs {
        assert_eq!(b, &want);
    }
    // Max on the mesh.
    let s = algorithm::build(Algorithm::Mesh, Primitive::AllReduce, n).unwrap();
    let mut bufs: Vec<Vec<u8>> = (0..n)
        .map(|r| {
            [1i32, -1, 5, 0]
                .iter()
                .flat_map(|m| (m * (r as i32 - 1)).to_le_bytes())
                .collect()
        })
        .collect();
    execute(&s, DType::Int32, ReduceOp::Max, &mut bufs).unwrap();
    let want: Vec<u8> = [2i32, 1, 10, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert!(bufs.iter().all(|b| b == &want));
}

#[test]
fn ring_and_mesh_reduce_in_different_orders() {
    // Same inputs, fp16 sum: the two algorithms round differently somewhere,
    // which is why the checker follows each schedule's own order.
    let seed = 5;
    let elems = 4096;
    let ring = reference_run(
        &algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8).unwrap(),
        DType::Fp16,
        ReduceOp::Sum,
        seed,
        elems,
    )
    .unwrap();
    let mesh = reference_run(
        &algorithm::build(Algorithm::Mesh, Primitive::AllReduce, 8).unwrap(),
        DType::Fp16,
        ReduceOp::Sum,
        seed,
        elems,
    )
    .unwrap();
    assert_ne!(ring[0], mesh[0]);
}

#[test]
fn checker_catches_a_corrupted_element() {
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8).unwrap();
    let v = verify(&s).unwrap();
    let mut out = reference_run(&s, DType::Fp32, ReduceOp::Sum, 1, 1000).unwrap();
    out[3][4 * 500] ^= 1; // flip a mantissa bit of element 500 of rank 3
    let mut c = Checker::new(&s, &v, DType::Fp32, ReduceOp::Sum, 1, 1000);
    assert!(c.check_rank(0, &out[0]).ok());
    let rep = c.check_rank(3, &out[3]);
    assert_eq!(rep.mismatched_elements, 1);
    assert_eq!(rep.first_mismatch.as_ref().unwrap().element, 500);
    // A truncated buffer fails every element.
    let rep = c.check_rank(2, &out[2][..100]);
    assert_eq!(rep.mismatched_elements, 1000);
}

#[test]
fn reduce_scatter_checks_only_the_owned_block() {
    let s = algorithm::build(Algorithm::Ring, Primitive::ReduceScatter, 4).unwrap();
    let v = verify(&s).unwrap();
    let mut out = reference_run(&s, DType::Int32, ReduceOp::Sum, 3, 40).unwrap();
    // Scribble on rank 1's block 0 (scratch for rank 1): still ok.
    out[1][0..4].copy_from_slice(&12345i32.to_le_bytes());
    let mut c = Checker::new(&s, &v, DType::Int32, ReduceOp::Sum, 3, 40);
    let rep = c.check_rank(1, &out[1]);
    assert!(rep.ok());
    assert_eq!(rep.checked_elements, 10);
}

#[test]
fn verifier_rejects_a_dropped_transfer() {
    let mut s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 4).unwrap();
    s.steps[1].transfers.remove(2);
    let e = verify(&s).unwrap_err();
    assert!(matches!(e, VerifyError::WrongResult { .. }), "{e}");
}

#[test]
fn verifier_rejects_a_wrong_chunk() {
    let mut s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 4).unwrap();
    let t = &mut s.steps[0].transfers[0];
    t.first = (t.first + 1) % 4;
    assert!(verify(&s).is_err());
    // In AllGather a wrong chunk sends data the rank does not have yet.
    let mut s = algorithm::build(Algorithm::Ring, Primitive::AllGather, 4).unwrap();
    s.steps[0].transfers[0].first = 2;
    s.steps[0].transfers[0].dst_first = 2;
    assert_eq!(
        verify(&s).unwrap_err(),
        VerifyError::SendsNothing {
            step: 0,
            transfer: 0,
            src: 0,
            chunk: 2
        }
    );
}

#[test]
fn verifier_rejects_a_duplicated_reduce() {
    let mut s = algorithm::build(Algorithm::Ring, Primitive::ReduceScatter, 4).unwrap();
    let dup = s.steps[0].transfers[0];
    s.steps[1].transfers.push(dup);
    let e = verify(&s).unwrap_err();
    assert!(
        matches!(e, VerifyError::DuplicateContribution { step: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("counted twice"));
}

#[test]
fn verifier_rejects_a_copy_race_and_bad_ranks() {
    let mut s = algorithm::build(Algorithm::Mesh, Primitive::AllGather, 4).unwrap();
    // Rank 2 also sends its chunk 2 ... to rank 1 a second time in the same step.
    let mut t = s.steps[0].transfers[0];
    t.kind = TransferKind::Copy;
    s.steps[0].transfers.push(t);
    assert!(matches!(
        verify(&s).unwrap_err(),
        VerifyError::WriteConflict { .. }
    ));
    let mut s = algorithm::build(Algorithm::Ring, Primitive::AllGather, 4).unwrap();
    s.steps[0].transfers[0].dst = 9;
    assert!(matches!(
        verify(&s).unwrap_err(),
        VerifyError::BadTransfer(_)
    ));
}

#[test]
fn uncontended_times_equal_the_closed_forms() {
    let cases = [
        (Topology::ascend_910b_8(), 3.4, 18.3, None),
        (
            mesh_topology(8, 25.0, 7.0, Some(100.0)),
            7.0,
            25.0,
            Some(100.0),
        ),
    ];
    for (topo, alpha, bw, gamma) in cases {
        for a in Algorithm::ALL {
            for p in [
                Primitive::AllReduce,
                Primitive::ReduceScatter,
                Primitive::AllGather,
            ] {
                for n in 2..=8 {
                    if !matches!(a, Algorithm::Ring | Algorithm::Mesh) {
                        continue;
                    }
                    let s = algorithm::build(a, p, n).unwrap();
                    for bytes in [8 * 840u64, 1 << 20, 64 << 20, 3 * 5 * 7 * 8 * 1024] {
                        if bytes % (4 * n as u64) != 0 {
                            continue;
                        }
                        let e = estimate(&s, &topo, bytes, DType::Fp32).unwrap();
                        let want = closed_form_us(a, p, n, bytes as f64, alpha, bw, gamma);
                        assert!(
                            (e.time_us - want).abs() <= 1e-9 * want,
                            "{a} {p} n={n} bytes={bytes}: model {} vs closed form {want}",
                            e.time_us
                        );
                        assert!(e.timeline.steps.iter().all(|st| st.max_link_sharing == 1));
                    }
                }
            }
        }
    }
}

#[test]
fn reported_bandwidths_follow_nccl_tests() {
    let topo = Topology::ascend_910b_8();
    let s = algorithm::build(Algorithm::Mesh, Primitive::AllGather, 8).unwrap();
    let bytes = 1u64 << 30;
    let e = estimate(&s, &topo, bytes, DType::Fp32).unwrap();
    // 1 GiB exceeds HCCL_BUFFSIZE (200 MiB): 6 loops (5 × 200 MiB + 24 MiB),
    // each paying α once: t = 6 × 3.4 + (S/8)/18.3e3 µs; algbw = S/t;
    // busbw = algbw * 7/8.
    assert_eq!(e.timeline.loops, 6);
    assert_eq!(e.timeline.loop_bytes, 200 << 20);
    let t = 6.0 * 3.4 + (bytes as f64 / 8.0) / 18.3e3;
    assert!((e.time_us - t).abs() < 1e-6);
    assert!((e.algbw_gbps - bytes as f64 / (t * 1e3)).abs() < 1e-9);
    assert!((e.busbw_gbps - e.algbw_gbps * 0.875).abs() < 1e-9);
    // Close to the measured 8-card all_gather 149 GB/s (limulidae): 146.0
    // (146.4 at the limit without loops).
    assert!((e.algbw_gbps - 146.0).abs() < 0.1, "{}", e.algbw_gbps);
}

#[test]
fn contention_shows_when_flows_share_a_link() {
    // A 3-device line 0-1-2 is not a full mesh: put two flows on one link by
    // a topology whose only link between 0 and 1 carries both directions of
    // the mesh exchange, and check sharing doubles the data term.
    let topo = mesh_topology(2, 10.0, 1.0, None);
    let mut s = algorithm::build(Algorithm::Ring, Primitive::AllGather, 2).unwrap();
    let one = estimate(&s, &topo, 2000, DType::Int8).unwrap().time_us;
    // Duplicate the transfer 0->1 as a second concurrent flow on the same direction.
    let mut extra = s.steps[0].transfers[0];
    extra.kind = TransferKind::Copy;
    s.steps[0].transfers.push(extra);
    let e = estimate(&s, &topo, 2000, DType::Int8).unwrap();
    assert_eq!(e.timeline.steps[0].max_link_sharing, 2);
    assert!((one - (1.0 + 1000.0 / 10e3)).abs() < 1e-12);
    assert!((e.time_us - (1.0 + 2000.0 / 10e3)).abs() < 1e-12);
}

#[test]
fn auto_runs_hccls_mesh_on_the_910b_full_mesh_and_explains() {
    for (bytes, bound) in [
        (4u64 << 10, "latency-bound"),
        (256 << 20, "bandwidth-bound"),
    ] {
        let c = Config {
            bytes,
            ..Config::default()
        };
        let p = Plan::new(&c).unwrap();
        assert_eq!(p.algorithm, Algorithm::Mesh);
        assert!(matches!(p.decision, Decision::Library { .. }));
        assert_eq!(
            p.ranking.len(),
            Algorithm::applicable(Primitive::AllReduce, 8).len()
        );
        assert!(p.ranking[0].time_us() <= p.ranking[1].time_us());
        assert!(
            p.verdict.starts_with("HCCL runs mesh here"),
            "{}",
            p.verdict
        );
        assert!(p.verdict.contains(bound), "{}", p.verdict);
    }
}

#[test]
fn initial_buffers_follow_the_primitive() {
    let s = algorithm::build(Algorithm::Ring, Primitive::AllGather, 4).unwrap();
    let b = initial_buffer(&s, DType::Int32, 1, 2, 16);
    // Rank 2 holds block 2 (elements 8..12) only.
    for i in 0..16 {
        let v = DType::Int32.read_f64(&b, i);
        if (8..12).contains(&i) {
            assert_eq!(v, input::value(DType::Int32, 1, 2, i));
        } else {
            assert_eq!(v, 0.0);
        }
    }
}

#[test]
fn an_input_built_piece_by_piece_is_the_input() {
    // 3 ranks of ring AllGather: each rank's block is 2 pieces and a
    // remainder ([`FILL_PIECE_ELEMS`] at a time), the last block one
    // element longer (the chunking's rounding), all of them cut in pieces.
    use ccl_playground::engine::execute::{initial_buffer_with, FILL_PIECE_ELEMS};
    let s = algorithm::build(Algorithm::Ring, Primitive::AllGather, 3).unwrap();
    let elems = 3 * (2 * FILL_PIECE_ELEMS + 7) + 1;
    for dtype in DType::ALL {
        for rank in 0..3 {
            let mut pieces = Vec::new();
            let b = initial_buffer_with(&s, dtype, rank, elems, |r, out| {
                pieces.push(r.clone());
                input::fill(dtype, 5, rank, r, out)
            });
            let block = s.range_elems(elems, rank, 1);
            let want: Vec<std::ops::Range<usize>> = block
                .clone()
                .step_by(FILL_PIECE_ELEMS)
                .map(|a| a..(a + FILL_PIECE_ELEMS).min(block.end))
                .collect();
            assert_eq!(pieces, want, "{dtype:?} rank {rank}");
            assert_eq!(pieces.len(), 3);
            assert_eq!(b, initial_buffer(&s, dtype, 5, rank, elems));
            for i in (0..elems).filter(|i| i % 997 == 0 || block.contains(i) && i % 64 == 63) {
                let v = dtype.read_f64(&b, i);
                let want = if block.contains(&i) {
                    input::value(dtype, 5, rank, i)
                } else {
                    0.0
                };
                assert_eq!(v, want, "{dtype:?} rank {rank} element {i}");
            }
            let whole = input::buffer(dtype, 5, rank, block.end);
            let es = dtype.size_bytes();
            assert_eq!(
                b[block.start * es..block.end * es],
                whole[block.start * es..],
                "{dtype:?} rank {rank}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn checker_agrees_with_the_reference_executor(
        n in 2usize..=9, extra in 0usize..50, seed in any::<u64>(),
        alg in 0usize..2, prim in 0usize..3, dt in 0usize..5, op in 0usize..5,
    ) {
        let (a, p, d, o) = (Algorithm::ALL[alg], Primitive::ALL[prim], DType::ALL[dt], ReduceOp::ALL[op]);
        let s = algorithm::build(a, p, n).unwrap();
        let v = verify(&s).unwrap();
        let elems = n + extra;
        let out = reference_run(&s, d, o, seed, elems).unwrap();
        let mut c = Checker::new(&s, &v, d, o, seed, elems);
        for (r, b) in out.iter().enumerate() {
            let rep = c.check_rank(r, b);
            prop_assert!(rep.ok(), "{:?}", rep);
        }
    }
}
