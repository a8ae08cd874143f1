//! MSCCL XML in and out: the three real files in tests/fixtures/msccl
//! import, verify, run bit for bit and estimate; malformed files fail with
//! the element named; every catalogue schedule exports and re-imports to
//! the same Schedule.
#![cfg(not(target_arch = "wasm32"))]

use ccl_playground::engine::algorithm::{build_with_root, Algorithm};
use ccl_playground::engine::check::Checker;
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::cost::Slices;
use ccl_playground::engine::dtype::{DType, ReduceOp};
use ccl_playground::engine::execute::reference_run;
use ccl_playground::engine::formats::msccl::{self, Kind};
use ccl_playground::engine::plan;
use ccl_playground::engine::schedule::{Schedule, TransferKind};
use ccl_playground::engine::topology::Topology;
use ccl_playground::engine::verify::verify;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/msccl/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

const FIXTURES: [&str; 3] = [
    "msccl_allreduce_binarytree_4gpu_simple.xml",
    "msccl_allreduce_ring_4gpu_4ch_simple.xml",
    "msccl_ndv4_alltoall_allpairs_8gpu_ll_2ch.xml",
];

/// Runs `s` with the reference executor and checks every rank bit for bit
/// against its own reduction order and against the exact result.
fn run_and_check(s: &Schedule, dtype: DType, op: ReduceOp, elems: usize) {
    let v = verify(s).unwrap_or_else(|e| panic!("{}: {e}", s.algorithm));
    let out = reference_run(s, dtype, op, 7, elems).unwrap();
    let mut checker = Checker::new(s, &v, dtype, op, 7, elems);
    for (r, buf) in out.iter().enumerate() {
        let rep = checker.check_rank(r, buf);
        assert!(rep.ok(), "{} rank {r}: {rep:?}", s.algorithm);
    }
}

/// Network transfers and local copies / reduces of a schedule.
fn net_and_local(s: &Schedule) -> (usize, usize) {
    let all: Vec<_> = s.steps.iter().flat_map(|x| &x.transfers).collect();
    let net = all.iter().filter(|t| t.src != t.dst).count();
    (net, all.len() - net)
}

/// `depid`, `deps` of a step that waits for nothing.
const NO_DEP: &str = r#"depid="-1" deps="-1""#;

/// A `<step>` moving chunk `off` of the input (`dep`: its depid / deps).
fn xstep(s: usize, ty: &str, off: usize, dep: &str, hasdep: u8) -> String {
    format!(
        r#"<step s="{s}" type="{ty}" srcbuf="i" srcoff="{off}" dstbuf="i" dstoff="{off}" cnt="1" {dep} hasdep="{hasdep}"/>"#
    )
}

#[test]
fn the_three_real_files_import_verify_run_and_estimate() {
    let want = [
        // (primitive, ranks, IR chunks, chunk factor, steps, transfers)
        (Primitive::AllReduce, 4, 4, 2),
        (Primitive::AllReduce, 4, 4, 1),
        (Primitive::AlltoAll, 8, 32, 1),
    ];
    for (f, (p, n, chunks, m)) in FIXTURES.iter().zip(want) {
        let imp = msccl::import(&fixture(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let s = &imp.schedule;
        assert_eq!(
            (s.primitive, s.ranks, s.chunks, imp.chunk_factor),
            (p, n, chunks, m),
            "{f}"
        );
        assert!(s.algorithm.starts_with("msccl:"), "{}", s.algorithm);
        verify(s).unwrap_or_else(|e| panic!("{f}: {e}"));
        for dtype in [DType::Fp32, DType::Fp16, DType::Int32] {
            for op in [ReduceOp::Sum, ReduceOp::Max] {
                run_and_check(s, dtype, op, s.granule() * 6);
            }
        }
        let topo = Topology::h100_8();
        let (e, _, _) = plan::estimate(s, &topo, 1 << 20, DType::Fp32, Slices::Fixed(1)).unwrap();
        assert!(
            e.time_us > 0.0 && e.time_us.is_finite(),
            "{f}: {}",
            e.time_us
        );
        let (e2, _, _) = plan::estimate(s, &topo, 1 << 20, DType::Fp32, Slices::Auto).unwrap();
        assert!(
            e2.time_us > 0.0 && e2.time_us.is_finite(),
            "{f}: {}",
            e2.time_us
        );
    }
}

#[test]
fn the_ring_file_is_a_ring_and_the_alltoall_one_step() {
    // allreduce_ring_4channelsperring: 4 chunks, each goes round the ring
    // reducing (rrs, 2 hops after the first send) and then copying (rcs).
    let imp = msccl::import(&fixture(FIXTURES[1])).unwrap();
    let s = &imp.schedule;
    assert_eq!(imp.thread_blocks, 16);
    assert_eq!(imp.xml_steps, 28);
    // Every transfer goes to the next rank or is local (rrs's pre-copy).
    for st in &s.steps {
        for t in &st.transfers {
            assert!(t.dst == (t.src + 1) % 4 || t.dst == t.src, "{t:?}");
        }
    }
    let net = |s: &Schedule| {
        s.steps
            .iter()
            .flat_map(|x| &x.transfers)
            .filter(|t| t.src != t.dst)
            .count()
    };
    // 4 chunks × (3 reduce hops + 3 copy hops).
    assert_eq!(net(s), 24);
    assert_eq!(s.steps.len(), 6);
    // All-pairs AlltoAll: every receive is a plain r from a peer, one step.
    let a2a = msccl::import(&fixture(FIXTURES[2])).unwrap();
    assert_eq!(a2a.schedule.steps.len(), 1);
    assert_eq!(net(&a2a.schedule), 8 * 7 * 2);
    assert_eq!(a2a.program.bytes_range, Some((0, 40959)));
    assert_eq!(a2a.program.proto, "LL");
}

#[test]
fn rrs_uses_a_temporary_and_leaves_its_source_alone() {
    // gpu 1 / tb 3 of the binary tree: rrs of input chunk 1.
    let imp = msccl::import(&fixture(FIXTURES[0])).unwrap();
    let s = &imp.schedule;
    assert!(s.scratch > 0);
    let local: Vec<_> = s
        .steps
        .iter()
        .flat_map(|x| &x.transfers)
        .filter(|t| t.src == t.dst)
        .collect();
    assert!(!local.is_empty());
    assert!(local
        .iter()
        .all(|t| t.kind == TransferKind::Copy && t.dst_first >= s.chunks));
    assert_eq!(s.granule(), 4);
}

fn tiny(steps: &str) -> String {
    format!(
        r#"<algo name="t" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">{steps}</tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>"#
    )
}

#[test]
fn errors_name_the_element_the_value_and_what_is_allowed() {
    let cases: [(String, &str, &str); 8] = [
        (tiny(r#"<step s="0" type="x" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#),
            "gpu 0 / tb 0 / step 0", "type=\"x\": expected one of s, r"),
        (tiny(r#"<step s="0" type="s" srcbuf="i" srcoff="5" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#),
            "gpu 0 / tb 0 / step 0", "i_chunks=\"2\""),
        (tiny(r#"<step s="0" type="s" srcbuf="q" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#),
            "gpu 0 / tb 0 / step 0", "srcbuf=\"q\": expected i, o or s"),
        (tiny(r#"<step s="3" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#),
            "gpu 0 / tb 0 / step 0", "numbered 0, 1, 2"),
        (tiny(r#"<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>"#),
            "gpu 1 / tb 0 / step 0", "cnt=\"1\" but the matching send"),
        (tiny(r#"<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/><step s="1" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#),
            "gpu 0 / tb 0", "sends 2 messages to gpu 1 on channel 0 but gpu 1 / tb 0 receives 1"),
        (tiny(r#"<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="4" deps="0" hasdep="0"/>"#),
            "gpu 0 / tb 0 / step 0", "depid=\"4\""),
        (tiny(r#"<step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/><step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>"#)
            .replace(r#"hasdep="0"/>
    </tb>
  </gpu>
</algo>"#, r#"hasdep="0"/><step s="1" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>"#),
            "gpu", "deadlocks"),
    ];
    for (xml, at, what) in cases {
        let e = msccl::import(&xml)
            .err()
            .unwrap_or_else(|| panic!("accepted: {what}"));
        assert!(e.at.contains(at), "{e}");
        assert!(e.to_string().contains(what), "{e}");
    }
    for bad in [
        "",
        "<algo",
        "not xml at all",
        r#"<algo name="x" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="99" coll="allreduce" inplace="1"></algo>"#,
        r#"<algo name="x" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" coll="allreduce" inplace="1"><gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0"/></algo>"#,
        r#"<algo name="x" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="1" coll="custom" inplace="1"><gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0"/></algo>"#,
    ] {
        let e = msccl::import(bad).unwrap_err();
        assert!(!e.what.is_empty());
    }
    // ngpus names its limit.
    let e = msccl::import(r#"<algo name="x" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="99" coll="allreduce" inplace="1"></algo>"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "algo: ngpus=\"99\": expected an integer in 1..=64"
    );
}

#[test]
fn scratch_cpy_re_and_out_of_place_import_and_verify() {
    // A 2-GPU allreduce, out of place, through scratch: each GPU sends its
    // input chunk 0 and 1 to the peer's scratch, reduces the scratch into a
    // copy of its input in o, with a nop joining two waits.
    let xml = r#"<algo name="scr" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="0" outofplace="1">
  <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="2">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="2" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="1" deps="0" hasdep="0"/>
      <step s="2" type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="2">
    <tb id="0" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="2" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="1" deps="0" hasdep="0"/>
    </tb>
  </gpu>
</algo>"#;
    let imp = msccl::import(xml).unwrap();
    let s = &imp.schedule;
    // 2 chunks of output + 2 of scratch.
    assert_eq!((s.chunks, s.scratch), (2, 4));
    assert_eq!(s.steps.last().unwrap().phase, "output copy");
    verify(s).unwrap();
    run_and_check(s, DType::Fp32, ReduceOp::Sum, 10);
    // Without the wait, the re may run before the data arrives.
    let racy = xml.replace(
        r#"depid="1" deps="0" hasdep="0"/>
    </tb>
  </gpu>
</algo>"#,
        r#"depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>"#,
    );
    let s2 = msccl::import(&racy).unwrap().schedule;
    assert!(verify(&s2).is_err());
    assert_eq!(Kind::Reduce.name(), "re");
}

#[test]
fn every_catalogue_schedule_round_trips_through_msccl_xml() {
    let mut done = 0;
    for a in Algorithm::ALL {
        for p in Primitive::ALL {
            for n in [2usize, 3, 4, 5, 8, 16] {
                if !a.supports(p, n) {
                    continue;
                }
                let root = if p.rooted() { n - 1 } else { 0 };
                let s = build_with_root(a, p, n, root).unwrap();
                match msccl::export(&s) {
                    Err(e) => {
                        assert!(
                            matches!(
                                p,
                                Primitive::AlltoAllV | Primitive::Barrier | Primitive::SendRecv
                            ),
                            "{a} {p} n={n}: {e}"
                        );
                        assert!(e.what.contains("no layout"), "{e}");
                        continue;
                    }
                    Ok(xml) => {
                        let back =
                            msccl::import(&xml).unwrap_or_else(|e| panic!("{a} {p} n={n}: {e}"));
                        assert!(
                            back.notes.iter().all(|x| !x.contains("ignored")),
                            "{a} {p} n={n}: {:?}",
                            back.notes
                        );
                        assert_eq!(back.schedule, s, "{a} {p} n={n}");
                        done += 1;
                        // Without the hints the file still imports, verifies and
                        // gives the same bits (the waits keep every reduction order).
                        if n <= 5 {
                            let plain: String = xml
                                .split('\n')
                                .map(|l| strip_hints(l))
                                .collect::<Vec<_>>()
                                .join("\n");
                            let asap = msccl::import(&plain)
                                .unwrap_or_else(|e| panic!("{a} {p} n={n}: {e}"));
                            assert!(
                                asap.schedule.steps.len() <= s.steps.len() + 1,
                                "{a} {p} n={n}"
                            );
                            let elems = s.granule() * 3;
                            verify(&asap.schedule)
                                .unwrap_or_else(|e| panic!("{a} {p} n={n} asap: {e}"));
                            let x =
                                reference_run(&s, DType::Fp16, ReduceOp::Sum, 3, elems).unwrap();
                            let y =
                                reference_run(&asap.schedule, DType::Fp16, ReduceOp::Sum, 3, elems)
                                    .unwrap();
                            assert_eq!(x, y, "{a} {p} n={n}");
                        }
                    }
                }
            }
        }
    }
    assert!(done > 150, "{done}");
}

fn strip_hints(line: &str) -> String {
    let mut out = line.to_string();
    for key in ["ccl_step", "ccl_seq", "ccl_phases"] {
        while let Some(i) = out.find(&format!(" {key}=\"")) {
            let rest = &out[i + key.len() + 3..];
            let j = rest.find('"').unwrap();
            out = format!("{}{}", &out[..i], &rest[j + 1..]);
        }
    }
    out
}

#[test]
fn imported_schedules_export_and_come_back() {
    for f in FIXTURES {
        let s = msccl::import(&fixture(f)).unwrap().schedule;
        let xml = msccl::export(&s).unwrap();
        let back = msccl::import(&xml).unwrap();
        assert_eq!(back.schedule, s, "{f}");
    }
    // 64 ranks: ring AllReduce exports within MSCCL's per-channel limit.
    let s = build_with_root(Algorithm::Ring, Primitive::AllReduce, 64, 0).unwrap();
    let xml = msccl::export(&s).unwrap();
    assert!(xml.contains("nchannels=\"2\""));
    assert_eq!(msccl::import(&xml).unwrap().schedule, s);
}

/// The public 64-GPU hierarchical binary-tree AllReduce: in thread block 3
/// of gpu 11 a receive of chunk 1 is followed by a receive of chunk 2 and
/// then the send of chunk 1, so the send reads what the receive two steps
/// earlier wrote. The interpreter runs a thread block's steps in order,
/// each to its end, so that send carries the reduced chunk.
#[test]
fn the_64_gpu_hierarchical_tree_imports_and_runs_right() {
    let imp = msccl::import(&fixture(
        "msccl_allreduce_binarytree_hierarchical_64gpu_4ch_simple.xml",
    ))
    .unwrap();
    let s = &imp.schedule;
    assert_eq!(
        (s.primitive, s.ranks, s.chunks, imp.chunk_factor, s.scratch),
        (Primitive::AllReduce, 64, 64, 16, 16)
    );
    assert_eq!((imp.thread_blocks, imp.xml_steps), (440, 792));
    assert_eq!(imp.program.nchannels, 4);
    assert_eq!((s.steps.len(), net_and_local(s)), (17, (504, 188)));
    verify(s).unwrap_or_else(|e| panic!("{}", imp.explain(&e)));
    run_and_check(s, DType::Fp32, ReduceOp::Sum, s.granule() * 2);
}

/// Two GPUs, two chunks: gpu 0 sends both, gpu 1 reduces both and sends
/// them back. `back` is gpu 1's thread block after its two receives.
fn reduce_then_send_back(back: &str) -> String {
    let step = |s: usize, ty: &str, off: usize| xstep(s, ty, off, NO_DEP, 0);
    format!(
        r#"<algo name="back" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">{}{}{}{}</tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">{back}</tb>
  </gpu>
</algo>"#,
        step(0, "s", 0),
        step(1, "s", 1),
        step(2, "r", 0),
        step(3, "r", 1),
    )
}

#[test]
fn a_send_after_another_receive_reads_the_earlier_receive() {
    // gpu 1's thread block: (type, chunk) per step.
    let back = |steps: [(&str, usize); 4]| {
        let xml: String = steps
            .iter()
            .enumerate()
            .map(|(s, &(ty, off))| xstep(s, ty, off, NO_DEP, 0))
            .collect();
        reduce_then_send_back(&xml)
    };
    // gpu 1 reduces chunk 0, reduces chunk 1, then sends chunk 0: right.
    let right = back([("rrc", 0), ("rrc", 1), ("s", 0), ("s", 1)]);
    let imp = msccl::import(&right).unwrap();
    verify(&imp.schedule).unwrap_or_else(|e| panic!("{}", imp.explain(&e)));
    // The send of chunk 0 comes a step after the receive it reads.
    assert_eq!(imp.schedule.steps.len(), 2);
    run_and_check(&imp.schedule, DType::Fp32, ReduceOp::Sum, 8);
    // gpu 1 sends chunk 1 before it has reduced it: gpu 0 ends with gpu
    // 1's part alone, and the error names gpu 0's chunk 1.
    let wrong = back([("rrc", 0), ("s", 0), ("s", 1), ("rrc", 1)]);
    let imp = msccl::import(&wrong).unwrap();
    let e = verify(&imp.schedule).unwrap_err();
    assert_eq!(
        imp.explain(&e),
        "gpu 0 / output chunk 1 (MSCCL chunk 1): after the last step rank 0 chunk 1 holds {1}, but AllReduce requires {0,1}"
    );
}

#[test]
fn a_wait_on_its_own_thread_block_is_met_by_its_earlier_steps_or_never() {
    let (step, none) = (xstep, NO_DEP);
    // Step 1 waits for its own step 0, which set the flag: already met.
    let met = reduce_then_send_back(&format!(
        "{}{}{}{}",
        step(0, "rrc", 0, none, 1),
        step(1, "rrc", 1, r#"depid="0" deps="0""#, 0),
        step(2, "s", 0, none, 0),
        step(3, "s", 1, none, 0)
    ));
    let imp = msccl::import(&met).unwrap();
    verify(&imp.schedule).unwrap();
    // Step 0 waits for its own step >= 0: nothing before it sets the flag.
    let never = tiny(&step(0, "s", 0, r#"depid="0" deps="0""#, 1));
    let e = msccl::import(&never).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"gpu 0 / tb 0 / step 0: depid="0" deps="0": its own thread block has run no step >= 0 with hasdep="1" before this one, so the wait never ends"#
    );
}

const PLAN_SIMPLE: &str = "mscclpp_plan_allreduce_2gpu_simple.json";
const PLAN_LL: &str = "mscclpp_plan_allreduce_packet_2gpu_ll.json";

#[test]
fn the_mscclpp_allreduce_plan_imports_op_for_op_and_verifies() {
    use ccl_playground::engine::formats::msccl::mscclpp;
    let text = fixture(PLAN_SIMPLE);
    let plan = mscclpp::parse(&text).unwrap();
    assert_eq!(plan.gpus.len(), 2);
    for g in &plan.gpus {
        assert_eq!(g.threadblocks.len(), 8);
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        for t in &g.threadblocks {
            for o in &t.ops {
                *counts.entry(o.kind.name()).or_default() += 1;
            }
        }
        assert_eq!(
            counts.into_iter().collect::<Vec<_>>(),
            [
                ("nop", 16),
                ("rlxsignal", 8),
                ("rlxwait", 8),
                ("rres", 8),
                ("signal", 8),
                ("wait", 8)
            ],
            "gpu {}",
            g.id
        );
    }
    // The page and cclsim read it through the same entry as MSCCL XML.
    let imp = msccl::import(&text).unwrap();
    assert_eq!(imp.format, msccl::Format::MscclppPlan);
    assert_eq!(imp.protocol, msccl::Protocol::Simple);
    assert_eq!((imp.thread_blocks, imp.xml_steps), (16, 112));
    let s = &imp.schedule;
    assert_eq!(
        (s.primitive, s.ranks, s.chunks, imp.chunk_factor, s.scratch),
        (Primitive::AllReduce, 2, 16, 1, 0)
    );
    assert_eq!(s.algorithm, "mscclpp:allreduce");
    // Each rres: the peer's chunk reduced in, then a step later the sum
    // written back to the peer: 16 reduces, then 16 copies.
    assert_eq!(s.steps.len(), 2);
    assert_eq!(net_and_local(s), (32, 0));
    assert!(s.steps[0]
        .transfers
        .iter()
        .all(|t| t.kind == TransferKind::Reduce && t.first == t.dst_first));
    assert!(s.steps[1]
        .transfers
        .iter()
        .all(|t| t.kind == TransferKind::Copy));
    assert_eq!(
        imp.origins[1][0], "gpu 0 / threadblock 0 / op 3",
        "{:?}",
        imp.origins
    );
    verify(s).unwrap_or_else(|e| panic!("{}", imp.explain(&e)));
    for dtype in [DType::Fp32, DType::Fp16] {
        run_and_check(s, dtype, ReduceOp::Sum, s.granule() * 4);
    }
}

#[test]
fn the_ll_packet_plan_verifies_and_costs_as_ll() {
    let imp = msccl::import(&fixture(PLAN_LL)).unwrap();
    assert_eq!(imp.protocol, msccl::Protocol::Ll);
    let s = &imp.schedule;
    assert_eq!((s.ranks, s.chunks, s.scratch), (2, 4, 8));
    assert_eq!((s.steps.len(), net_and_local(s)), (4, (6, 6)));
    verify(s).unwrap_or_else(|e| panic!("{}", imp.explain(&e)));
    run_and_check(s, DType::Fp32, ReduceOp::Sum, s.granule() * 4);
    // The same transfers with LL: half the bandwidth, NCCL's lower hop
    // latency; slower for a large message, faster for a small one.
    let topo = Topology::h100_8();
    let ll = msccl::protocol_topology(&topo, imp.protocol);
    let t = |m: &Topology, b: u64| {
        plan::estimate(s, m, b, DType::Fp32, Slices::Fixed(1))
            .unwrap()
            .0
            .time_us
    };
    assert!(t(&ll, 256 << 20) > t(&topo, 256 << 20));
    assert!(t(&ll, 1 << 10) < t(&topo, 1 << 10));
}

/// The Simple plan's JSON with `f` applied.
fn plan_with(f: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&fixture(PLAN_SIMPLE)).unwrap();
    f(&mut v);
    v.to_string()
}

#[test]
fn plan_errors_name_the_op_its_position_and_what_is_read() {
    let op = |v: &mut serde_json::Value, g: usize, t: usize, i: usize| -> serde_json::Value {
        v["gpus"][g]["threadblocks"][t]["ops"][i].clone()
    };
    let cases: Vec<(String, &str)> = vec![
        (
            plan_with(|v| v["gpus"][1]["threadblocks"][2]["ops"][3]["name"] = "pipeline".into()),
            "gpu 1 / threadblock 2 / op 3: op \"pipeline\" (a pipelined loop over inner ops (iter_context)): the importer does not read it",
        ),
        (
            plan_with(|v| v["gpus"][0]["threadblocks"][5]["ops"][0]["channel_type"] = "port".into()),
            "gpu 0 / threadblock 5 / op 0: op \"rlxsignal\" over channel_type \"port\" (port (the proxy's asynchronous puts and signals) channels): the importer does not read it",
        ),
        (
            plan_with(|v| {
                v["gpus"][0]["threadblocks"][1]["ops"][3]["tbg_info"] =
                    serde_json::json!({"tb_id": 0, "tbg_size": 2})
            }),
            "gpu 0 / threadblock 1 / op 3: op \"rres\" with tbg_info (an operation split across a group of thread blocks): the importer does not read it",
        ),
        (
            plan_with(|v| v["gpus"][0]["threadblocks"][0]["ops"][3]["name"] = "mystery".into()),
            "gpu 0 / threadblock 0 / op 3: name=\"mystery\": not an executor operation",
        ),
        (
            plan_with(|v| v["gpus"][0]["threadblocks"][0]["ops"][3]["src_buff"][1]["index"] = 16.into()),
            "gpu 0 / threadblock 0 / op 3 / src_buff[1]: index=16 size=1: chunks 16..17 but gpu 1 declares input_chunks=16",
        ),
        (
            plan_with(|v| v["protocol"] = "LL128".into()),
            "plan: protocol=\"LL128\": expected Simple or LL",
        ),
        (
            // Every signal gone: the rlxsignal meets the first wait (one
            // semaphore), nothing meets the second.
            plan_with(|v| {
                for g in 0..2 {
                    for t in 0..8 {
                        let o = op(v, g, t, 5);
                        assert_eq!(o["name"], "signal");
                        v["gpus"][g]["threadblocks"][t]["ops"][5]["name"] = "nop".into();
                    }
                }
            }),
            "gpu 0 / threadblock 0 / op 6: wait 2 on memory channel 0 (to gpu 1) is never met: gpu 1 signals its paired channel 0 once (signal and rlxsignal count alike: one semaphore)",
        ),
        (
            r#"{"name": "x", "colletive": "allreduce", "protocol": "Simple", "inplace": true, "gpus": [{"id": 0, "inputChunks": 1, "outputChunks": 1, "scratchChunks": 0}]}"#.into(),
            "gpu 0: inputChunks / chunkGroups: the older MSCCL++ plan schema",
        ),
        ("{\"gpus\": [".into(), "file: not valid JSON"),
    ];
    for (json, want) in cases {
        let e = msccl::import(&json)
            .err()
            .unwrap_or_else(|| panic!("accepted: {want}"));
        assert!(e.to_string().starts_with(want), "{e}\nwant: {want}");
    }
}

#[test]
fn a_wrong_plan_is_refused_naming_the_chunk_or_the_op() {
    // gpu 0's thread block 0 keeps the sum of chunk 0 to itself: its rres
    // no longer writes it back to gpu 1.
    let json = plan_with(|v| {
        let dst = v["gpus"][0]["threadblocks"][0]["ops"][3]["dst_buff"]
            .as_array_mut()
            .unwrap();
        dst.truncate(1);
    });
    let imp = msccl::import(&json).unwrap();
    let e = verify(&imp.schedule).unwrap_err();
    assert_eq!(
        imp.explain(&e),
        "gpu 1 / output chunk 0 (MSCCL chunk 0): after the last step rank 1 chunk 0 holds {1}, but AllReduce requires {0,1}"
    );
    // It reads the peer's chunk 1 into its chunk 0.
    let json =
        plan_with(|v| v["gpus"][0]["threadblocks"][0]["ops"][3]["src_buff"][1]["index"] = 1.into());
    let imp = msccl::import(&json).unwrap();
    let e = verify(&imp.schedule).unwrap_err();
    assert!(
        imp.explain(&e).starts_with(
            "gpu 0 / threadblock 0 / op 3: step 0, transfer 0 (rank 1 -> 0, chunks 1+1 to chunk 0)"
        ),
        "{}",
        imp.explain(&e)
    );
}

/// gpu 0 sends chunk 0 on channel 0, then reduces gpu 1's chunk 1 into its
/// own and sends the sum on channel 1; gpu 1 receives chunk 0 only after
/// that sum (a depid wait), then sends its sum of chunk 0 back. The first
/// send has to wait in the connection's buffer while gpu 0 goes on.
const RUN_AHEAD: &str = r#"<algo name="ahead" proto="Simple" nchannels="2" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
      <step s="2" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="1" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="0" deps="1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="0" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
  </gpu>
</algo>"#;

#[test]
fn a_send_waits_in_its_connections_buffer_while_its_sender_goes_on() {
    let imp = msccl::import(RUN_AHEAD).unwrap();
    let s = &imp.schedule;
    assert_eq!(
        imp.notes,
        ["1 message(s) wait in their connection's buffer: each send runs in an earlier step than its receive (a local copy into a temporary), as the runtime lets it while the sender goes on"]
    );
    // The early send is a local copy of gpu 0's chunk 0 into scratch.
    assert_eq!((s.steps.len(), net_and_local(s), s.scratch), (3, (4, 1), 1));
    assert_eq!(
        s.steps[0]
            .transfers
            .last()
            .map(|t| (t.src, t.dst, t.first, t.dst_first)),
        Some((0, 0, 0, 2))
    );
    verify(s).unwrap_or_else(|e| panic!("{}", imp.explain(&e)));
    run_and_check(s, DType::Fp32, ReduceOp::Sum, 8);
    // gpu 0 sends the sum only after gpu 1's answer, which waits for it.
    let dead = RUN_AHEAD.replace(r#"depid="0" deps="1""#, r#"depid="0" deps="2""#);
    assert_eq!(
        msccl::import(&dead).unwrap_err().to_string(),
        "gpu 1 / tb 0 / step 1: waits in a cycle (thread-block order, depid waits, receives that wait for sends that come after them, sends that wait for room in a connection's buffer): the program deadlocks"
    );
}

/// gpu 0 sends three messages on one connection; gpu 1 takes the first
/// only after a message gpu 0 sends after the third.
const THREE_IN_FLIGHT: &str = r#"<algo name="fifo" proto="Simple" nchannels="2" nchunksperloop="3" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="3" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="1" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="1" depid="0" deps="2" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="3" o_chunks="0" s_chunks="1">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="0" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
  </gpu>
</algo>"#;

#[test]
fn a_connection_holds_two_simple_messages_and_eight_ll_ones() {
    assert_eq!(
        msccl::import(THREE_IN_FLIGHT).unwrap_err().to_string(),
        "gpu 1 / tb 0 / step 0: waits in a cycle (thread-block order, depid waits, receives that wait for sends that come after them, sends that wait for room in a connection's buffer): the program deadlocks"
    );
    let ll = THREE_IN_FLIGHT.replace(r#"proto="Simple""#, r#"proto="LL""#);
    assert_eq!(msccl::import(&ll).unwrap().schedule.steps.len(), 1);
}
