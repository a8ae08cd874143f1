//! Determinism on real data (engine::determinism): ulp distances in closed
//! form, ring vs mesh on fp16 differing, a fixed order making them equal.

use ccl_playground::engine::algorithm::Algorithm;
use ccl_playground::engine::config::Config;
use ccl_playground::engine::determinism::{compare, ulps, Versus};
use ccl_playground::engine::dtype::DType;
use ccl_playground::engine::plan::Plan;

fn h(x: f32) -> [u8; 2] {
    half::f16::from_f32(x).to_le_bytes()
}

fn config(q: &str) -> Config {
    let (c, errors) = Config::from_query(q);
    assert!(errors.is_empty(), "{errors:?}");
    c
}

#[test]
fn ulps_are_steps_on_the_bit_line() {
    // fp16 spacing at 1 is 2^-10: 1 + 3·2^-10 is 3 ulps from 1.
    assert_eq!(ulps(DType::Fp16, &h(1.0), &h(1.0 + 3.0 / 1024.0)), 3);
    // +0 and -0 are equal; the smallest subnormals either side are 2 apart.
    assert_eq!(ulps(DType::Fp16, &h(0.0), &h(-0.0)), 0);
    let tiny = 2f32.powi(-24);
    assert_eq!(ulps(DType::Fp16, &h(tiny), &h(-tiny)), 2);
    // Across a binade: 2 - 2^-10 (spacing 2^-10 below 2) and 2 + 2^-9.
    assert_eq!(
        ulps(DType::Fp16, &h(2.0 - 1.0 / 1024.0), &h(2.0 + 1.0 / 512.0)),
        2
    );
    assert_eq!(
        ulps(
            DType::Fp32,
            &1.0f32.to_le_bytes(),
            &f32::from_bits(0x3f80_0005).to_le_bytes()
        ),
        5
    );
    assert_eq!(
        ulps(DType::Int32, &7i32.to_le_bytes(), &(-2i32).to_le_bytes()),
        9
    );
}

#[test]
fn ring_and_mesh_differ_on_fp16_and_a_fixed_order_makes_them_equal() {
    let c = config("v=1&op=allreduce&algo=ring&topo=910b-8&dtype=fp16&bytes=64KiB&seed=1");
    let r = compare(
        &c,
        Algorithm::Ring,
        Versus::Algorithm(Algorithm::Mesh),
        false,
        0,
    )
    .unwrap();
    assert_eq!(r.elements, 32768);
    assert!(r.differing > 0);
    assert_eq!(r.histogram[0].2, r.elements - r.differing);
    assert_eq!(r.histogram.iter().map(|x| x.2).sum::<usize>(), r.elements);
    // Element 0 is in chunk 0: the ring reduces it along 1 -> 2 -> ... -> 7
    // -> 0; mesh adds every rank's piece at rank 0 in rank order.
    assert_eq!(
        r.orders[0],
        "(r0 + (r7 + (r6 + (r5 + (r4 + (r3 + (r2 + r1)))))))"
    );
    assert_eq!(
        r.orders[1],
        "(((((((r0 + r1) + r2) + r3) + r4) + r5) + r6) + r7)"
    );
    let f = compare(
        &c,
        Algorithm::Ring,
        Versus::Algorithm(Algorithm::Mesh),
        true,
        0,
    )
    .unwrap();
    assert_eq!((f.differing, f.max_ulps), (0, 0));
    assert_eq!(f.orders[0], f.orders[1]);
    // Its cost: the ring (chain) Reduce and Broadcast as the plan models them.
    let cost = f.fixed.unwrap();
    let at = |q: &str| Plan::headline(&config(q)).unwrap().estimate.time_us;
    let base = "v=1&algo=ring&topo=910b-8&dtype=fp16&bytes=64KiB&seed=1&root=0";
    assert_eq!(cost.reduce_us, at(&format!("{base}&op=reduce")));
    assert_eq!(cost.broadcast_us, at(&format!("{base}&op=broadcast")));
    assert_eq!(cost.allreduce_us, at(&format!("{base}&op=allreduce")));
    assert!(cost.reduce_us + cost.broadcast_us > cost.allreduce_us);
}

#[test]
fn fp16_against_fp32_of_the_same_inputs() {
    let c = config("v=1&op=allreduce&algo=ring&topo=910b-8&dtype=fp16&bytes=64KiB&seed=1");
    let r = compare(&c, Algorithm::Ring, Versus::Fp32, false, 5).unwrap();
    assert!(r.differing > 0 && r.differing < r.elements);
    assert_eq!(r.sides, ["ring fp16".to_string(), "ring fp32".to_string()]);
    // Same schedule, same order: only the precision differs.
    assert_eq!(r.orders[0], r.orders[1]);
}

#[test]
fn bad_requests_name_the_field_value_and_what_is_allowed() {
    let c = config("v=1&op=allreduce&algo=ring&topo=910b-8&dtype=int32&bytes=4KiB");
    let e = compare(&c, Algorithm::Ring, Versus::Fp32, false, 0).unwrap_err();
    assert!(
        e.starts_with("versus fp32 with dtype int32: fp32 is compared with fp16 or bf16"),
        "{e}"
    );
    let e = compare(
        &c,
        Algorithm::Ring,
        Versus::Algorithm(Algorithm::Mesh),
        false,
        5000,
    )
    .unwrap_err();
    assert!(e.starts_with("element 5000: an index 0..=1023"), "{e}");
    let c = config("v=1&op=allgather&algo=ring&topo=910b-8&bytes=4KiB");
    let e = compare(
        &c,
        Algorithm::Ring,
        Versus::Algorithm(Algorithm::Mesh),
        false,
        0,
    )
    .unwrap_err();
    assert!(e.contains("op=allreduce"), "{e}");
    assert!(Versus::from_name("fp64")
        .unwrap_err()
        .contains("fp32, a smaller rank count dividing the ranks (e.g. 4), or an algorithm name"));
    // Integers are order-independent (wrapping add is associative).
    let c = config("v=1&op=allreduce&algo=ring&topo=910b-8&dtype=int32&bytes=4KiB");
    let r = compare(
        &c,
        Algorithm::Ring,
        Versus::Algorithm(Algorithm::Mesh),
        false,
        0,
    )
    .unwrap();
    assert_eq!(r.differing, 0);
}

#[test]
fn the_same_contributions_on_fewer_ranks_regroup_the_sums() {
    let c = config("v=1&op=allreduce&algo=ring&topo=910b-8&dtype=fp16&bytes=64KiB&seed=1");
    let r = compare(&c, Algorithm::Ring, Versus::Ranks(4), false, 0).unwrap();
    assert_eq!(
        r.sides,
        ["ring fp16".to_string(), "ring fp16, 4 ranks".to_string()]
    );
    assert!(r.differing > 0);
    // On 4 ranks the leaves are the local sums of contributions 2j, 2j+1.
    assert_eq!(r.orders[1], "(r0 + (r3 + (r2 + r1)))");
    // A fixed order does not undo the regrouping: still different.
    let f = compare(&c, Algorithm::Ring, Versus::Ranks(4), true, 0).unwrap();
    assert!(f.differing > 0);
    // Integers: every grouping gives the same wrapped sum.
    let c = config("v=1&op=allreduce&algo=ring&topo=910b-8&dtype=int32&bytes=4KiB");
    assert_eq!(
        compare(&c, Algorithm::Ring, Versus::Ranks(2), false, 0)
            .unwrap()
            .differing,
        0
    );
    let e = compare(&c, Algorithm::Ring, Versus::Ranks(3), false, 0).unwrap_err();
    assert!(
        e.starts_with("versus 3 ranks: a rank count 2..8 that divides the 8 ranks"),
        "{e}"
    );
}

/// Above the verified ranks the comparison is refused with the field, the
/// value and the allowed range, before any schedule is built (at 1024
/// ranks it once took the page's whole wasm memory).
#[test]
fn more_ranks_than_the_page_verifies_are_refused() {
    use ccl_playground::engine::determinism::MAX_COMPARED_RANKS;
    let c = config("v=1&op=allreduce&topo=910b-128x8&ranks=1024&bytes=1GiB");
    let e = compare(
        &c,
        Algorithm::Ring,
        Versus::Algorithm(Algorithm::Mesh),
        false,
        0,
    )
    .unwrap_err();
    assert_eq!(
        e,
        format!("ranks=1024: the determinism comparison runs on 2..={MAX_COMPARED_RANKS} ranks (it verifies and runs both schedules on real data, as the page does up to {MAX_COMPARED_RANKS} ranks)")
    );
    let c = config("v=1&op=allreduce&topo=910b-8x8&ranks=64&dtype=fp16&bytes=64KiB");
    assert!(compare(&c, Algorithm::Ring, Versus::Fp32, false, 0).is_ok());
}
