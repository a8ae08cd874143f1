//! The `avg` reduce op as NCCL's `ncclAvg` computes it (engine::dtype's
//! module doc): exact buffers worked out by hand, and the executor, the
//! checker and the rank machine agreeing bit for bit.

use ccl_playground::engine::algorithm::{self, Algorithm};
use ccl_playground::engine::check::Checker;
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::dtype::{avg_scalar, DType, ReduceOp};
use ccl_playground::engine::execute::{execute, reference_run};
use ccl_playground::engine::library::Library;
use ccl_playground::engine::verify::verify;
use ccl_playground::runtime::machine::{Progress, RankMachine};

fn f16s(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
        .collect()
}

fn read(dtype: DType, b: &[u8]) -> Vec<f64> {
    (0..b.len() / dtype.size_bytes())
        .map(|i| dtype.read_f64(b, i))
        .collect()
}

#[test]
fn the_scalar_is_one_over_n_rounded_to_the_dtype() {
    // float(1/3) = 0x3eaaaaab; fp16 0x3555 = 1365/4096; bf16 0x3eab = 171/512.
    assert_eq!(avg_scalar(DType::Fp32, 3), 0.3333333432674408);
    assert_eq!(avg_scalar(DType::Fp16, 3), 1365.0 / 4096.0);
    assert_eq!(avg_scalar(DType::Bf16, 3), 171.0 / 512.0);
    assert_eq!(avg_scalar(DType::Fp16, 8), 0.125);
    assert_eq!(avg_scalar(DType::Int32, 3), 1.0);
}

#[test]
fn fp16_avg_pre_multiplies_then_sums() {
    // 3 ranks each holding 100 (fp16): 100 · 1365/4096 = 33.325..., rounded
    // to fp16 (spacing 1/32 in [32, 64)) = 33.3125; 33.3125 + 33.3125 =
    // 66.625; + 33.3125 = 99.9375 (spacing 1/16 in [64, 128), exact). The
    // exact average is 100: NCCL's avg is not sum / n.
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 3).unwrap();
    let mut bufs = vec![f16s(&[100.0, 100.0, 100.0]); 3];
    execute(&s, DType::Fp16, ReduceOp::Avg, &mut bufs).unwrap();
    for b in &bufs {
        assert_eq!(read(DType::Fp16, b), vec![99.9375; 3]);
    }
    // Sum then divide would give 300 / 3 = 100 exactly.
    let mut bufs = vec![f16s(&[100.0, 100.0, 100.0]); 3];
    execute(&s, DType::Fp16, ReduceOp::Sum, &mut bufs).unwrap();
    assert_eq!(read(DType::Fp16, &bufs[0]), vec![300.0; 3]);
}

#[test]
fn integer_avg_wraps_then_divides_toward_zero() {
    // int32 on 3 ranks: [7, -7, MAX] + [7, -7, MAX] + [7, -8, 1]:
    // 21 / 3 = 7; -22 / 3 = -7 (toward zero, not -8); MAX + MAX + 1 wraps
    // to -1, and -1 / 3 = 0.
    let row = |v: [i32; 3]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let s = algorithm::build(Algorithm::Ring, Primitive::AllReduce, 3).unwrap();
    let mut bufs = vec![
        row([7, -7, i32::MAX]),
        row([7, -7, i32::MAX]),
        row([7, -8, 1]),
    ];
    execute(&s, DType::Int32, ReduceOp::Avg, &mut bufs).unwrap();
    for b in &bufs {
        assert_eq!(b, &row([7, -7, 0]));
    }
    // int8 on 2 ranks (mesh): 100 + 100 wraps to -56; / 2 = -28.
    let s = algorithm::build(Algorithm::Mesh, Primitive::AllReduce, 2).unwrap();
    let mut bufs = vec![vec![100u8, 3], vec![100u8, 0]];
    execute(&s, DType::Int8, ReduceOp::Avg, &mut bufs).unwrap();
    assert_eq!(bufs, vec![vec![(-28i8) as u8, 1]; 2]);
}

#[test]
fn reduce_scatter_divides_only_its_own_block() {
    // ReduceScatter int32 on 2 ranks: rank r's output is block r; the other
    // block keeps whatever the schedule left there (not divided).
    let s = algorithm::build(Algorithm::Ring, Primitive::ReduceScatter, 2).unwrap();
    let mut bufs = vec![
        [10i32, 20].iter().flat_map(|x| x.to_le_bytes()).collect(),
        [30i32, 40]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    ];
    execute(&s, DType::Int32, ReduceOp::Avg, &mut bufs).unwrap();
    let v = |b: &Vec<u8>, i: usize| i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
    assert_eq!(v(&bufs[0], 0), 20); // (10 + 30) / 2
    assert_eq!(v(&bufs[1], 1), 30); // (20 + 40) / 2
}

#[test]
fn machines_and_checker_equal_the_executor_bit_for_bit() {
    for (a, p, n) in [
        (Algorithm::Ring, Primitive::AllReduce, 5),
        (Algorithm::Mesh, Primitive::AllReduce, 4),
        (Algorithm::Rhd, Primitive::AllReduce, 6),
        (Algorithm::Ring, Primitive::ReduceScatter, 3),
        (Algorithm::Tree, Primitive::Reduce, 5),
    ] {
        let s = algorithm::build(a, p, n).unwrap();
        let v = verify(&s).unwrap();
        for dtype in DType::ALL {
            let elems = 4 * n + 3;
            let want = reference_run(&s, dtype, ReduceOp::Avg, 11, elems).unwrap();
            let mut checker = Checker::new(&s, &v, dtype, ReduceOp::Avg, 11, elems);
            let mut ms: Vec<RankMachine<Vec<u8>>> = (0..n)
                .map(|r| RankMachine::new(&s, r, dtype, ReduceOp::Avg, 11, elems).unwrap())
                .collect();
            // Drive every machine until all are done (messages delivered in order).
            loop {
                let mut mail = Vec::new();
                let mut done = 0;
                for (r, m) in ms.iter_mut().enumerate() {
                    let pr = m
                        .advance(|to, h, bytes: &[u8]| mail.push((r, to, h, bytes.to_vec())))
                        .unwrap();
                    done += (pr == Progress::Done) as usize;
                }
                if done == n && mail.is_empty() {
                    break;
                }
                for (from, to, h, b) in mail {
                    ms[to].deliver(from, h, b);
                }
            }
            for (r, m) in ms.into_iter().enumerate() {
                let (out, _) = m.into_output();
                assert_eq!(out, want[r], "{a} {p} n={n} {dtype} rank {r}");
                let rep = checker.check_rank(r, &out);
                assert!(rep.ok(), "{a} {p} n={n} {dtype} rank {r}: {rep:?}");
            }
        }
    }
}

#[test]
fn hccl_and_mpi_have_no_avg_nccl_has() {
    assert!(!Library::Hccl.has_redop(ReduceOp::Avg));
    assert!(!Library::Mpi.has_redop(ReduceOp::Avg));
    assert!(Library::Nccl.has_redop(ReduceOp::Avg));
    assert!(Library::Hccl.has_redop(ReduceOp::Sum));
    let note = Library::Hccl
        .redop_note(Primitive::AllReduce, ReduceOp::Avg)
        .unwrap();
    assert!(note.starts_with("HCCL has no avg (HcclReduceOp has SUM, PROD, MAX and MIN)"));
    assert_eq!(
        Library::Hccl.redop_note(Primitive::AllGather, ReduceOp::Avg),
        None
    );
}
