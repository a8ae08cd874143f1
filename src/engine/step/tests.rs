//! Worked by hand: the volumes of each layout on a small made-up model,
//! the groups, a step composed from the engine's own per-call times, the
//! errors, and the seed story's 70B on 8 × 910B.

use super::model::{ModelShape, MIXTRAL_8X7B};
use super::traffic::{issued, Group, Issued, Overlap};
use super::*;
use crate::engine::collective::Primitive;
use crate::engine::plan::Plan;
use crate::engine::quantization::Scheme;

/// hidden 64, intermediate 128, 4 layers, 4 heads, 2 KV heads (a KV
/// projection is 64 × 32), vocab 100, untied. Parameters: embedding
/// 6 400; a layer q 4 096 + k 2 048 + v 2 048 + o 4 096 + MLP 3·64·128 =
/// 24 576 + norms 128 = 36 992, × 4 = 147 968; norm 64; head 6 400:
/// Ψ = 160 832 (321 664 bytes in bf16).
const SMALL: ModelShape = ModelShape {
    hidden: 64,
    intermediate: 128,
    layers: 4,
    heads: 4,
    kv_heads: 2,
    vocab: 100,
    experts: 0,
    top_k: 0,
    tied: false,
    moe_intermediate: 0,
    shared_experts: 0,
    dense_layers: 0,
    mla: None,
};

/// The small model with 4 experts, top-2: a layer's MLP becomes a router
/// 64·4 = 256 and 4 experts of 24 576.
const SMALL_MOE: ModelShape = ModelShape {
    experts: 4,
    top_k: 2,
    ..SMALL
};

fn layout(dp: usize, tp: usize, pp: usize, zero: u8, micro: usize) -> StepInput {
    StepInput {
        model: "small".into(),
        dp,
        tp,
        pp,
        zero,
        microbatches: micro,
        seq: 8,
        batch: 4,
        ..StepInput::default()
    }
}

fn of(rows: &[Issued], p: Primitive) -> Vec<&Issued> {
    rows.iter().filter(|i| i.primitive == p).collect()
}

/// Per-rank bytes sent per step, nccl-tests' busbw factor × S × calls.
fn wire(rows: &[Issued]) -> f64 {
    rows.iter()
        .map(|i| i.calls as f64 * i.bytes as f64 * i.primitive.busbw_factor(i.group.size))
        .sum()
}

#[test]
fn the_small_model_has_the_parameters_counted_by_hand() {
    assert_eq!(SMALL.params(), 160_832);
    // + per layer a router and 4 experts instead of one MLP:
    // 256 + 4·24 576 − 24 576 = 73 984, × 4.
    assert_eq!(SMALL_MOE.params(), 160_832 + 4 * 73_984);
    assert_eq!(SMALL_MOE.active_params(), 160_832 + 4 * (256 + 24_576));
}

#[test]
fn zero_0_allreduces_the_gradient_once_2_psi_on_the_wire() {
    // 321 664 bytes is under DDP's 1 MiB first bucket: one bucket, the
    // last (edge) one. A ring AllReduce sends 2·(n−1)/n·S per rank.
    let r = issued(&layout(4, 1, 1, 0, 1), &SMALL);
    assert_eq!(r.len(), 1);
    let ar = &r[0];
    assert_eq!(
        (ar.primitive, ar.bytes, ar.calls, ar.edge_calls),
        (Primitive::AllReduce, 321_664, 1, 1)
    );
    assert_eq!(ar.group, Group { size: 4, stride: 1 });
    assert_eq!(ar.overlap, Overlap::LastBackward);
    assert_eq!(wire(&r), 2.0 * 0.75 * 321_664.0);
}

#[test]
fn zero_1_reduce_scatters_and_all_gathers_the_same_2_psi() {
    let r = issued(&layout(4, 1, 1, 1, 1), &SMALL);
    let rs = of(&r, Primitive::ReduceScatter);
    let ag = of(&r, Primitive::AllGather);
    assert_eq!((rs.len(), ag.len()), (1, 1));
    // S of both is the whole array (nccl-tests): 321 664 bytes.
    assert_eq!((rs[0].bytes, ag[0].bytes), (321_664, 321_664));
    assert_eq!(
        (rs[0].overlap, ag[0].overlap),
        (Overlap::LastBackward, Overlap::FirstForward)
    );
    // (n−1)/n·S each: 2·0.75·321 664, the same as DDP (the ZeRO paper).
    assert_eq!(wire(&r), 2.0 * 0.75 * 321_664.0);
}

#[test]
fn zero_3_gathers_twice_and_scatters_once_per_layer_3_psi() {
    // 160 832 / 4 layers = 40 208 elements = 80 416 bytes per layer;
    // 4 calls of each of the three per step (one microbatch).
    let r = issued(&layout(4, 1, 1, 3, 1), &SMALL);
    assert_eq!(r.len(), 3);
    for i in &r {
        assert_eq!((i.bytes, i.calls, i.edge_calls), (80_416, 4, 1));
    }
    assert_eq!(of(&r, Primitive::AllGather).len(), 2);
    // 3 · 4 · 80 416 = 964 992 = 3 · 321 664: the ZeRO paper's 3Ψ.
    assert_eq!(wire(&r), 3.0 * 0.75 * 321_664.0);
    // Two microbatches: every call twice.
    let r2 = issued(&layout(2, 1, 1, 3, 2), &SMALL);
    assert!(r2.iter().all(|i| i.calls == 8));
}

#[test]
fn tensor_parallel_allreduces_b_s_h_four_times_per_layer() {
    // dp 2, tp 2, batch 4, one microbatch: b = 4/2 = 2 sequences of 8
    // tokens, 2·8·64 = 1 024 elements = 2 048 bytes; 4 calls × 4 layers.
    let r = issued(&layout(2, 2, 1, 0, 1), &SMALL);
    let tp = r.iter().find(|i| i.overlap == Overlap::None).unwrap();
    assert_eq!(
        (tp.primitive, tp.bytes, tp.calls),
        (Primitive::AllReduce, 2_048, 16)
    );
    assert_eq!(tp.group, Group { size: 2, stride: 1 });
    // Every tensor of the small model has an even size: the DP gradient
    // is exactly half, 160 832 bytes, over ranks 2 apart.
    let dp = r
        .iter()
        .find(|i| i.overlap == Overlap::LastBackward)
        .unwrap();
    assert_eq!(
        (dp.bytes, dp.group),
        (160_832, Group { size: 2, stride: 2 })
    );
}

#[test]
fn pipeline_sends_each_microbatch_forward_and_back() {
    // dp 2, pp 2, 2 microbatches of b = 4/(2·2) = 1 sequence: 8·64·2 =
    // 1 024 bytes, 2 sends per microbatch; the neighbour is tp = 1 away;
    // DP groups are tp·pp = 2 apart.
    let r = issued(&layout(2, 1, 2, 0, 2), &SMALL);
    let pp = of(&r, Primitive::SendRecv);
    assert_eq!((pp[0].bytes, pp[0].calls), (1_024, 4));
    assert_eq!(pp[0].group, Group { size: 2, stride: 1 });
    let dp = of(&r, Primitive::AllReduce);
    assert_eq!(dp[0].group, Group { size: 2, stride: 2 });
    // No tensor parallelism: no TP row.
    assert!(dp.iter().all(|i| i.overlap == Overlap::LastBackward));
}

#[test]
fn expert_parallel_alltoalls_tokens_times_top_k() {
    // dp 4, ep 2: b = 4/4 = 1 sequence of 8 tokens, each sent to 2
    // experts: 8·2·64·2 = 2 048 bytes; 4 per layer × 4 layers.
    let mut l = layout(4, 1, 1, 0, 1);
    l.ep = 2;
    let r = issued(&l, &SMALL_MOE);
    let a2a = of(&r, Primitive::AlltoAll);
    assert_eq!((a2a[0].bytes, a2a[0].calls), (2_048, 16));
    assert_eq!(a2a[0].group, Group { size: 2, stride: 1 });
    // The experts' gradients (4·4·24 576 / ep 2 = 196 608 elements, 393 216
    // bytes) reduce over dp/ep = 2 ranks ep = 2 apart; the dense ones
    // (the small model without its 4 MLPs, with 4 routers: 160 832 −
    // 4·24 576 + 4·256 = 63 552 elements) over all 4.
    let ar = of(&r, Primitive::AllReduce);
    let expert: u64 = ar
        .iter()
        .filter(|i| i.group.size == 2)
        .map(|i| i.bytes * i.calls)
        .sum();
    let dense: u64 = ar
        .iter()
        .filter(|i| i.group.size == 4)
        .map(|i| i.bytes * i.calls)
        .sum();
    assert_eq!(expert, 393_216);
    assert_eq!(dense, 2 * 63_552);
    assert!(ar
        .iter()
        .filter(|i| i.group.size == 2)
        .all(|i| i.group.stride == 2));
}

fn machine(topo: &str, ranks: usize) -> Config {
    Config {
        topo: topo.into(),
        ranks,
        ..Config::default()
    }
}

#[test]
fn groups_are_placed_tp_inside_a_node_and_dp_across() {
    // 910b-2x8, tp 8 × dp 2: the TP group is ranks 0..8 of node 0; the DP
    // group ranks 0 and 8, one per server, timed on its own two nodes.
    let input = StepInput {
        model: "llama3-8b".into(),
        dp: 2,
        tp: 8,
        batch: 2,
        peak_tflops: Some(100.0),
        ..StepInput::default()
    };
    let r = step(&input, &machine("910b-2x8", 16)).unwrap();
    let tp = r.collectives.iter().find(|c| c.overlap == "none").unwrap();
    assert_eq!(tp.ranks, (0..8).collect::<Vec<_>>());
    assert_eq!(tp.placement, "the first 8 ranks of 910b-2x8");
    let dp = r
        .collectives
        .iter()
        .find(|c| c.overlap == "last backward")
        .unwrap();
    assert_eq!(dp.ranks, vec![0, 8]);
    assert!(
        dp.placement
            .starts_with("2 nodes × 1 of 910b-2x8 (ranks 8 apart)"),
        "{}",
        dp.placement
    );
}

#[test]
fn a_tiny_step_is_compute_plus_bubble_plus_what_does_not_hide() {
    // The small model, dp 4 × pp 2 on 910b-8, 2 microbatches of one
    // sequence (batch 8), at 0.001 TFLOPS and MFU 0.5 so that compute
    // dominates: FLOPs 6 · 160 832 · (8·8 tokens) = 61 759 488; per rank
    // / 8 = 7 719 936; / (1e9 · 0.5) s = 15 439.872 µs.
    let mut input = layout(4, 1, 2, 0, 2);
    input.batch = 8;
    input.peak_tflops = Some(0.001);
    input.mfu = 0.5;
    let r = timed(&input, &SMALL, &Config::default()).unwrap();
    assert!((r.compute_us - 15_439.872).abs() < 1e-6);
    // Bubble (pp−1)/m = 1/2 of the compute.
    assert!((r.bubble_us - 7_719.936).abs() < 1e-6);
    // The gradient (half the model per stage, 160 832 bytes, one bucket)
    // hides behind the last microbatch's backward (2/3 · 15 439.872 / 2 =
    // 5 146.624 µs) but is the edge bucket: its one call is exposed. The Send/Recv (4 calls) is exposed whole.
    let row = |p: &str| r.collectives.iter().find(|c| c.primitive == p).unwrap();
    let (ar, sr) = (row("allreduce"), row("sendrecv"));
    assert_eq!((ar.bytes, ar.calls, sr.calls), (160_832, 1, 4));
    let want_exposed = ar.time_us + 4.0 * sr.time_us;
    assert!((r.exposed_comm_us - want_exposed).abs() < 1e-9);
    let want = 15_439.872 + 7_719.936 + want_exposed;
    assert!((r.step_time_us - want).abs() < 1e-6);
    assert!((r.tokens_per_s - 64.0 / (want * 1e-6)).abs() < 1e-6);
}

#[test]
fn communication_longer_than_the_backward_pass_is_exposed_beyond_it() {
    // At a peak of 10⁶ TFLOPS the compute is a few ns: each phase's calls
    // are exposed beyond it, Σ calls − (forward + backward compute) with
    // ZeRO-3 (its calls run every microbatch).
    let mut input = layout(8, 1, 1, 3, 1);
    input.batch = 8;
    input.peak_tflops = Some(1e6);
    let r = timed(&input, &SMALL, &Config::default()).unwrap();
    let all: f64 = r.collectives.iter().map(|c| c.total_us).sum();
    let window = r.compute_us; // forward 1/3 + backward 2/3
    assert!((r.exposed_comm_us - (all - window)).abs() < 1e-6 * all);
}

fn field(e: StepError) -> (&'static str, String, String) {
    match e {
        StepError::Invalid {
            field,
            value,
            allowed,
        } => (field, value, allowed),
        other => panic!("not an input error: {other}"),
    }
}

#[test]
fn errors_name_the_field_the_value_and_what_is_allowed() {
    let base = StepInput {
        model: "llama3-70b".into(),
        ..StepInput::default()
    };
    let bad = |f: &dyn Fn(&mut StepInput), ranks| {
        let mut i = base.clone();
        f(&mut i);
        field(validate(&i, ranks).unwrap_err())
    };
    let (f, v, a) = bad(&|i| i.tp = 3, 24);
    assert_eq!((f, v.as_str()), ("tp", "3"));
    assert!(
        a.contains("64 attention heads and 8 KV heads (allowed: 1, 2, 4, 8)"),
        "{a}"
    );
    let (f, v, a) = bad(&|i| i.dp = 16, 8);
    assert_eq!((f, v.as_str()), ("dp", "16"));
    assert!(a.contains("= 16 must equal the machine's 8 ranks"), "{a}");
    let (f, _, a) = bad(&|i| i.ep = 2, 8);
    assert_eq!(f, "ep");
    assert!(a.contains("no experts"), "{a}");
    let (f, v, a) = bad(
        &|i| {
            i.pp = 3;
            i.dp = 1;
            i.tp = 8
        },
        24,
    );
    assert_eq!((f, v.as_str()), ("pp", "3"));
    assert!(a.contains("80 layers"), "{a}");
    let (f, v, _) = bad(
        &|i| {
            i.pp = 2;
            i.dp = 4
        },
        8,
    );
    assert_eq!((f, v.as_str()), ("microbatches", "1"));
    let (f, v, a) = bad(&|i| i.batch = 12, 8);
    assert_eq!((f, v.as_str()), ("batch", "12"));
    assert!(a.contains("dp·microbatches = 8"), "{a}");
    let (f, v, _) = bad(&|i| i.model = "gpt-9".into(), 8);
    assert_eq!((f, v.as_str()), ("model", "gpt-9"));
    let (f, _, _) = bad(&|i| i.zero = 4, 8);
    assert_eq!(f, "zero");
    let (f, _, _) = bad(&|i| i.mfu = 0.0, 8);
    assert_eq!(f, "mfu");
    // Mixtral: ep must divide dp (Megatron-LM's convention).
    let mut m = base.clone();
    m.model = "mixtral-8x7b".into();
    m.dp = 4;
    m.tp = 2;
    m.ep = 8;
    let (f, v, a) = field(validate(&m, 8).unwrap_err());
    assert_eq!((f, v.as_str()), ("ep", "8"));
    assert!(a.contains("dp·cp = 4"), "{a}");
    m.ep = 4;
    assert_eq!(validate(&m, 8).unwrap(), MIXTRAL_8X7B);
    // 910B has no cited peak: the step asks for one.
    let (f, _, a) = field(step(&base, &Config::default()).unwrap_err());
    assert_eq!(f, "peak_tflops");
    assert!(a.contains("910b-8"), "{a}");
}

/// The project's seed story: "AllReduce takes 35 % of training time" for
/// Llama-3 70B with DDP on 8 Ascend 910B. Our model, under stated
/// assumptions: ZeRO 0, bf16 gradients in DDP's default buckets, seq 4096,
/// one sequence per rank (batch 8), MFU 0.4, and a peak of 300 TFLOPS
/// (an assumption: no Huawei datasheet figure for 910B is cited here).
#[test]
fn seed_story_70b_ddp_on_8_910b() {
    let input = StepInput {
        model: "llama3-70b".into(),
        dp: 8,
        batch: 8,
        seq: 4096,
        peak_tflops: Some(300.0),
        ..StepInput::default()
    };
    let r = step(&input, &Config::default()).unwrap();
    // Compute: 6 · 70 553 706 496 · 32 768 / 8 / (300e12 · 0.4) s
    // = 14.449 s.
    let compute = 6.0 * 70_553_706_496.0 * 32_768.0 / 8.0 / (300e12 * 0.4) * 1e6;
    assert!((r.compute_us - compute).abs() < 1e-6 * compute);
    // Every byte of the gradient is AllReduced once: 2 · Ψ bytes.
    let bytes: u64 = r.collectives.iter().map(|c| c.bytes * c.calls).sum();
    assert_eq!(bytes, 2 * 70_553_706_496);
    // The AllReduces (Σ, timed on 910b-8 as predict times them) fit in
    // the backward pass (2/3 of the compute, 9.6 s): only the last bucket,
    // the 1.96 GiB embedding gradient, is exposed.
    let last = r
        .collectives
        .iter()
        .find(|c| c.bytes == 2 * 128_256 * 8192)
        .unwrap();
    assert!(r.comm_us < compute * 2.0 / 3.0);
    assert!((r.exposed_comm_us - last.time_us).abs() < 1e-9);
    let share = r.exposed_comm_us / (compute + r.exposed_comm_us);
    assert!((r.comm_share - share).abs() < 1e-12);
    let serial = r.comm_us / (compute + r.comm_us);
    assert!((r.comm_share_serial - serial).abs() < 1e-12);
    println!(
        "70B DDP on 8 × 910B: AllReduce {:.3} s per step, compute {:.3} s; exposed {:.2} % of the step, {:.1} % if nothing overlapped",
        r.comm_us / 1e6,
        compute / 1e6,
        100.0 * r.comm_share,
        100.0 * r.comm_share_serial
    );
    // The values this model gives (not the seed's 35 %): 0.2 % exposed,
    // 11.8 % if the AllReduce did not overlap the backward pass at all.
    assert!((r.comm_share - 0.00199).abs() < 0.00005, "{}", r.comm_share);
    assert!(
        (r.comm_share_serial - 0.118).abs() < 0.0005,
        "{}",
        r.comm_share_serial
    );
    // A quarter of the tokens (seq 1024) quarters the compute and keeps the
    // AllReduce: 34.9 % if nothing overlapped, 0.8 % exposed with DDP's
    // overlap. The seed's 35 % reads like the first.
    let short = StepInput {
        seq: 1024,
        ..input.clone()
    };
    let s = step(&short, &Config::default()).unwrap();
    assert!((s.comm_us - r.comm_us).abs() < 1e-9 * r.comm_us);
    assert!(
        (s.comm_share_serial - 0.349).abs() < 0.0005,
        "{}",
        s.comm_share_serial
    );
    assert!((s.comm_share - 0.0079).abs() < 0.00005, "{}", s.comm_share);
    // INT8 gradients beside it: every bucket's AllReduce is slower on the
    // mesh (×1.140 in all: the codec's assumed 400 GB/s costs more than
    // the halved HCCS bytes save), and the step does not move: its exposed
    // bucket, 2 · 128 256 · 8 192 bytes = 1.96 GiB, is above the what-if's
    // 1 GiB and goes uncompressed.
    let q = link::full_query(
        &Config::default(),
        &StepInput {
            compress: Scheme::Int8,
            ..input.clone()
        },
    );
    let (now, pinned) = step_vs(&input, &Config::default(), Some(&q)).unwrap();
    let p = pinned.unwrap().unwrap();
    let [step_time, _, _, comm, exposed, _, _] = &p.changes[..] else {
        panic!("{:?}", p.changes)
    };
    assert_eq!((comm.a, comm.b), (p.report.comm_us, now.comm_us));
    assert!(
        (1.0 / comm.ratio() - 1.140).abs() < 0.0005,
        "{}",
        comm.ratio()
    );
    assert_eq!(exposed.a, exposed.b);
    assert_eq!(step_time.ratio(), 1.0);
    assert_eq!(
        p.differs,
        [(
            "step_compress".to_string(),
            "int8".to_string(),
            String::new()
        )]
    );
}

#[test]
fn once_per_step_calls_hide_in_one_microbatch_only() {
    // 900 µs of compute in 3 microbatches: forward 300, backward 600; one
    // microbatch's forward 100, backward 200; 90 µs of it attention's,
    // forward 30, backward 60.
    let w = |o: Overlap| o.window_us(900.0, 90.0, 3);
    assert_eq!(w(Overlap::AttentionForward), 30.0);
    assert_eq!(w(Overlap::AttentionBackward), 60.0);
    assert_eq!(w(Overlap::Forward), 300.0);
    assert_eq!(w(Overlap::Backward), 600.0);
    assert_eq!(w(Overlap::FirstForward), 100.0);
    assert_eq!(w(Overlap::LastBackward), 200.0);
    assert_eq!(w(Overlap::None), 0.0);
    // Three buckets of 100 µs, the last an edge: 300 − 200 = 100 = the
    // edge; behind 50 µs, 250 µs show.
    let mut rows = issued(&layout(4, 1, 1, 0, 1), &SMALL);
    rows[0].calls = 3;
    let timed = [(&rows[0], 100.0)];
    assert_eq!(time::exposed(&timed, Overlap::LastBackward, 200.0), 100.0);
    assert_eq!(time::exposed(&timed, Overlap::LastBackward, 50.0), 250.0);
    assert_eq!(time::exposed(&timed, Overlap::Forward, 0.0), 0.0);
}

#[test]
fn sequence_parallelism_splits_each_allreduce_into_its_two_halves() {
    // The same 2 048-byte array, 16 calls each: RS + AG move what the
    // AllReduce moved, (n−1)/n·S twice = 2·(n−1)/n·S.
    let mut l = layout(2, 2, 1, 0, 1);
    let plain = issued(&l, &SMALL);
    l.sequence_parallel = true;
    let sp = issued(&l, &SMALL);
    let tp = |r: &[Issued]| -> Vec<Issued> {
        r.iter()
            .filter(|i| i.overlap == Overlap::None)
            .cloned()
            .collect()
    };
    let (a, b) = (tp(&plain), tp(&sp));
    assert_eq!(a.len(), 1);
    assert_eq!(
        b.iter()
            .map(|i| (i.primitive, i.bytes, i.calls))
            .collect::<Vec<_>>(),
        vec![
            (Primitive::ReduceScatter, 2_048, 16),
            (Primitive::AllGather, 2_048, 16)
        ]
    );
    assert_eq!(wire(&a), wire(&b));
}

#[test]
fn the_attention_term_adds_12_l_h_s_per_token() {
    // 12 · 4 layers · 64 · seq 8 = 24 576 FLOPs per token beside
    // 6 · 160 832 = 964 992.
    let mut l = layout(4, 1, 1, 0, 1);
    assert_eq!(flops_per_token(&l, &SMALL), 964_992.0);
    l.attention_flops = true;
    assert_eq!(flops_per_token(&l, &SMALL), 964_992.0 + 24_576.0);
}

/// The gradient reductions are timed as the playground's compression
/// what-if times the same call (the plan `predict` makes with
/// `compress=int8`); nothing else changes.
#[test]
fn compression_times_only_the_gradient_reductions_compressed() {
    // dp 4 × tp 2 on 910b-8: DDP's bucket AllReduce over 4 ranks, TP's
    // AllReduces over 2.
    let mut input = layout(4, 2, 1, 0, 1);
    input.peak_tflops = Some(100.0);
    let plain = timed(&input, &SMALL, &Config::default()).unwrap();
    input.compress = Scheme::Int8;
    let z = timed(&input, &SMALL, &Config::default()).unwrap();
    assert_eq!(plain.collectives.len(), z.collectives.len());
    let mut compressed = 0;
    for (p, c) in plain.collectives.iter().zip(&z.collectives) {
        if p.purpose.contains("gradient AllReduce") {
            compressed += 1;
            assert_eq!(c.compression, "int8");
            let want = Plan::headline(&Config {
                primitive: Primitive::AllReduce,
                bytes: c.bytes,
                dtype: DType::Bf16,
                ranks: 4,
                compress: crate::engine::quantization::Compression {
                    scheme: Scheme::Int8,
                    ..Default::default()
                },
                ..Config::default()
            })
            .unwrap()
            .estimate
            .time_us;
            assert_eq!(c.time_us, want);
            assert_ne!(c.time_us, p.time_us);
        } else {
            assert_eq!(c.compression, "");
            assert_eq!(c.time_us, p.time_us);
        }
    }
    assert!(compressed > 0);
    assert!(plain.collectives.iter().all(|c| c.compression.is_empty()));
}

/// Above the compression what-if's 1 GiB a gradient call goes as it is,
/// and the row says why.
#[test]
fn a_gradient_call_above_the_compression_cap_goes_uncompressed() {
    let machine = Config::default();
    let call = Issued {
        purpose: "gradient AllReduce, a DDP bucket".into(),
        primitive: Primitive::AllReduce,
        bytes: 2 << 30,
        dtype: DType::Bf16,
        group: Group { size: 8, stride: 1 },
        calls: 1,
        overlap: Overlap::LastBackward,
        edge_calls: 1,
        gradient: true,
    };
    let plain = time::Timer::new(&machine).unwrap().time(&call).unwrap();
    let z = time::Timer::new(&machine)
        .unwrap()
        .compressing(Scheme::Int8)
        .time(&call)
        .unwrap();
    assert_eq!(z.time_us, plain.time_us);
    assert_eq!(
        z.compression,
        "uncompressed: above 1 GiB, the largest message the compression what-if models"
    );
}

#[test]
fn a_comparison_sets_each_figure_beside_its_twin() {
    let mut input = layout(8, 1, 1, 0, 1);
    input.peak_tflops = Some(100.0);
    let a = timed(&input, &SMALL, &Config::default()).unwrap();
    input.peak_tflops = Some(50.0);
    let b = timed(&input, &SMALL, &Config::default()).unwrap();
    let c = compare(&a, &b);
    let names: Vec<&str> = c.iter().map(|x| x.figure.as_str()).collect();
    assert_eq!(
        names,
        [
            "step_time_us",
            "compute_us",
            "bubble_us",
            "comm_us",
            "exposed_comm_us",
            "comm_share",
            "tokens_per_s"
        ]
    );
    // Half the peak: twice the compute, the same communication.
    assert_eq!((c[1].a, c[1].b), (a.compute_us, b.compute_us));
    assert!((c[1].ratio() - 2.0).abs() < 1e-12);
    assert_eq!(c[3].ratio(), 1.0);
    // No bubble on either side: 0 / 0 reads as no change.
    assert_eq!((c[2].a, c[2].b, c[2].ratio()), (0.0, 0.0, 1.0));
    assert_eq!(c[6].b, b.tokens_per_s);
}

/// What the page's own collective and what-ifs hold (a size, a reduce op,
/// compression settings left from its card) is not the step's: the same
/// step on that page times and compares as on a plain one.
#[test]
fn the_pages_own_settings_do_not_reach_the_step() {
    use crate::engine::compressed::Placement;
    use crate::engine::dtype::ReduceOp;
    use crate::engine::quantization::{Compression, ScaleType};
    let page = Config {
        bytes: 3 << 20,
        redop: ReduceOp::Max,
        compress: Compression {
            scheme: Scheme::None,
            block: 32,
            scale: ScaleType::Fp32,
        },
        placement: Placement::Once,
        compress_min: 1 << 30,
        ..Config::default()
    };
    let mut input = layout(4, 2, 1, 0, 1);
    input.peak_tflops = Some(100.0);
    input.compress = Scheme::Int8;
    let plain = timed(&input, &SMALL, &Config::default()).unwrap();
    assert_eq!(timed(&input, &SMALL, &page).unwrap(), plain);
    assert!(plain.collectives.iter().any(|c| c.compression == "int8"));
    // Pinned on the plain page, compared on this one: nothing differs.
    let shape = StepInput {
        shape: Some(SMALL),
        ..input
    };
    let q = link::full_query(&Config::default(), &shape);
    let (_, pinned) = step_vs(&shape, &page, Some(&q)).unwrap();
    let p = pinned.unwrap().unwrap();
    assert_eq!(p.differs, vec![]);
    assert!(p.changes.iter().all(|c| c.a == c.b), "{:?}", p.changes);
}

fn with_cp(dp: usize, tp: usize, cp: usize) -> StepInput {
    StepInput {
        cp,
        attention_flops: true,
        ..layout(dp, tp, 1, 0, 1)
    }
}

#[test]
fn context_parallelism_rings_keys_and_values_and_shrinks_the_activations() {
    // dp 2 × cp 2 × tp 2 = 8 ranks; seq 8, batch 4: b = 4 / 2 = 2
    // sequences, s/cp = 4 tokens a rank. A token's keys and values: 2 KV
    // heads × 16 × 2 = 64 elements, / tp = 32.
    let rows = issued(&with_cp(2, 2, 2), &SMALL);
    let ring = of(&rows, Primitive::SendRecv);
    assert_eq!(ring.len(), 2);
    // Forward: 2 · 4 · 32 · 2 B = 512 B, cp − 1 = 1 per layer: 4 calls;
    // backward with the gradients, 1 024 B. Timed on the pair closing
    // the ring: rank 0 and rank (cp − 1)·tp·pp = 2.
    assert_eq!((ring[0].bytes, ring[0].calls), (512, 4));
    assert_eq!((ring[1].bytes, ring[1].calls), (1024, 4));
    assert_eq!(ring[0].group, Group { size: 2, stride: 2 });
    assert_eq!(
        (ring[0].overlap, ring[1].overlap),
        (Overlap::AttentionForward, Overlap::AttentionBackward)
    );
    // TP's AllReduce carries b·(s/cp)·h = 2·4·64 elements, 1 024 B.
    let tp = of(&rows, Primitive::AllReduce)
        .into_iter()
        .find(|i| i.group.size == 2)
        .unwrap();
    assert_eq!((tp.bytes, tp.group.stride), (1024, 1));
    // The gradients reduce over dp·cp = 4 ranks, tp = 2 apart.
    let dp = of(&rows, Primitive::AllReduce)
        .into_iter()
        .find(|i| i.gradient)
        .unwrap();
    assert_eq!(dp.group, Group { size: 4, stride: 2 });
    // Four context-parallel ranks: the ring closes 3·tp apart, 3 passes.
    let rows = issued(&with_cp(1, 2, 4), &SMALL);
    let ring = of(&rows, Primitive::SendRecv);
    // b = 4 sequences, s/cp = 2 tokens: 4·2·32·2 B = 512 B; 3 · 4 layers.
    assert_eq!((ring[0].bytes, ring[0].calls), (512, 12));
    assert_eq!(ring[0].group, Group { size: 2, stride: 6 });
}

#[test]
fn context_parallelism_is_checked_by_name() {
    let err = |input: &StepInput, ranks| match validate(input, ranks) {
        Err(StepError::Invalid {
            field,
            value,
            allowed,
        }) => (field, value, allowed),
        other => panic!("{other:?}"),
    };
    let llama = |dp, cp| StepInput {
        model: "llama3-8b".into(),
        ..with_cp(dp, 1, cp)
    };
    // 2·tp·pp·cp = 4 ranks, not 8.
    let (f, _, why) = err(&llama(2, 2), 8);
    assert_eq!(f, "dp");
    assert!(why.contains("dp·tp·pp·cp = 2·1·1·2 = 4"), "{why}");
    // seq 8 in 2·cp = 6 chunks: no.
    let (f, v, why) = err(&llama(1, 3), 3);
    assert_eq!((f, v.as_str()), ("cp", "3"));
    assert!(
        why.contains("2·cp must divide the sequence length 8"),
        "{why}"
    );
    // Without attention's FLOPs the ring would have nothing to hide behind.
    let no_attention = StepInput {
        attention_flops: false,
        ..llama(2, 2)
    };
    let (f, _, why) = err(&no_attention, 4);
    assert_eq!(f, "cp");
    assert!(why.contains("attention"), "{why}");
}

#[test]
fn a_context_parallel_ring_hides_behind_attention() {
    // llama3-8b, dp 1 × cp 8 on h100-8, seq 32 768, batch 1, MFU 0.4,
    // attention counted: the ring's exposed time is Σ calls × time minus
    // attention's forward (a third) and backward (two thirds) compute,
    // each floored at zero, worked from the report's own figures.
    let input = StepInput {
        model: "llama3-8b".into(),
        dp: 1,
        cp: 8,
        seq: 32_768,
        batch: 1,
        attention_flops: true,
        ..StepInput::default()
    };
    let r = step(&input, &machine("h100-8", 8)).unwrap();
    // Attention per token: 6 · 32 layers · 32 768 · 8 192 = 51 539 607 552
    // FLOPs; dense 6 · 8 030 261 248 = 48 181 567 488.
    let attn_share = 51_539_607_552.0 / (51_539_607_552.0 + 48_181_567_488.0);
    let attention_us = r.compute_us * attn_share;
    let ring: Vec<&StepCollective> = r
        .collectives
        .iter()
        .filter(|c| c.primitive == "sendrecv")
        .collect();
    assert_eq!(ring.len(), 2);
    // b = 1, s/cp = 4 096 tokens, 2·8·128 = 2 048 KV elements in bf16:
    // 16 MiB forward, 32 MiB backward; 7 passes × 32 layers = 224 calls.
    assert_eq!((ring[0].bytes, ring[0].calls), (16 << 20, 224));
    assert_eq!((ring[1].bytes, ring[1].calls), (32 << 20, 224));
    let fwd = (ring[0].total_us - attention_us / 3.0).max(0.0);
    let bwd = (ring[1].total_us - attention_us * 2.0 / 3.0).max(0.0);
    // The gradients' AllReduce over the 8 CP ranks hides in the last
    // backward but for its last bucket: what is left is one call.
    let grads = r.exposed_comm_us - fwd - bwd;
    let one_bucket = r
        .collectives
        .iter()
        .filter(|c| c.primitive == "allreduce" && c.group_ranks == 8)
        .any(|c| (c.time_us - grads).abs() < 1e-6);
    assert!(one_bucket, "{grads} µs exposed beside the ring: {r:#?}");
    assert!((r.step_time_us - r.compute_us - r.exposed_comm_us).abs() < 1e-6);
}
