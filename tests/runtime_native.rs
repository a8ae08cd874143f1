//! Native tests of the runtime's pure parts: rank machines hosted on
//! simulated workers (several ranks per worker, local and remote delivery),
//! bit for bit against the executor.

use ccl_playground::engine::algorithm::{build, Algorithm};
use ccl_playground::engine::collective::Primitive;
use ccl_playground::engine::compressed::{CompressedCheck, CompressedSetup};
use ccl_playground::engine::dtype::{DType, ReduceOp};
use ccl_playground::engine::execute::reference_run;
use ccl_playground::engine::quantization::{Compression, GradientShape, ScaleType, Scheme};
use ccl_playground::runtime::host::{self, Bytes, Host, Report, Sent};
use ccl_playground::runtime::machine::{self, RankMachine};
use ccl_playground::runtime::placement::{Route, WorkerLayout};
use ccl_playground::runtime::protocol::Routed;
use std::collections::VecDeque;

/// Outputs of every rank and (local, remote) message counts of a run of `s`
/// on `workers` simulated workers: local sends delivered by the host, remote
/// ones through one FIFO queue per (sender worker, receiver worker), the
/// queue served next chosen by `pick`.
#[allow(clippy::type_complexity)]
fn run_hosted(
    s: &ccl_playground::engine::schedule::Schedule,
    workers: usize,
    dtype: DType,
    elems: usize,
    compressed: Option<&CompressedSetup>,
    mut pick: impl FnMut(usize) -> usize,
) -> (Vec<Option<Vec<u8>>>, usize, usize) {
    let p = WorkerLayout::new(s.ranks, workers).unwrap();
    let mut hosts: Vec<Host<Vec<u8>>> = (0..workers)
        .map(|w| {
            Host::new(p.clone(), w, |r| match compressed {
                None => RankMachine::new(s, r, dtype, ReduceOp::Sum, 5, elems),
                Some(c) => RankMachine::compressed(s, r, dtype, ReduceOp::Sum, 5, elems, c),
            })
            .unwrap()
        })
        .collect();
    let mut wires: Vec<VecDeque<(Routed, Vec<u8>)>> =
        (0..workers * workers).map(|_| VecDeque::new()).collect();
    let mut out: Vec<Option<Vec<u8>>> = vec![None; s.ranks];
    let (mut local, mut remote) = (0, 0);
    let mut settle = |w: usize,
                      host: &mut Host<Vec<u8>>,
                      wires: &mut Vec<VecDeque<(Routed, Vec<u8>)>>,
                      out: &mut Vec<Option<Vec<u8>>>| {
        let reports = host.drain(|msg, route, bytes| {
            Ok(match route {
                Route::Local => {
                    local += 1;
                    Sent::Local
                }
                Route::Remote(to) => {
                    remote += 1;
                    wires[w * workers + to].push_back((msg, bytes.to_vec()));
                    Sent::Handled
                }
            })
        });
        for r in reports {
            match r {
                Report::Done { rank, buffer, .. } => {
                    assert!(
                        out[rank].replace(buffer).is_none(),
                        "rank {rank} done twice"
                    )
                }
                Report::Waiting { rank, .. } => assert!(p.worker_of(rank) == Some(w)),
                other => panic!("{other:?}"),
            }
        }
    };
    for (w, h) in hosts.iter_mut().enumerate() {
        settle(w, h, &mut wires, &mut out);
    }
    loop {
        let busy: Vec<usize> = (0..wires.len()).filter(|&i| !wires[i].is_empty()).collect();
        if busy.is_empty() {
            break;
        }
        let q = busy[pick(busy.len()) % busy.len()];
        let (msg, bytes) = wires[q].pop_front().unwrap();
        let to = q % workers;
        hosts[to].deliver(msg, Bytes::Wire(bytes)).unwrap();
        settle(to, &mut hosts[to], &mut wires, &mut out);
    }
    assert!(hosts.iter().all(|h| h.is_finished()));
    (out, local, remote)
}

#[test]
fn hosted_ranks_equal_reference_with_local_delivery() {
    let mut x = 99u64;
    let mut rng = move |k: usize| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as usize % k
    };
    for (alg, prim, n, workers, dtype) in [
        (Algorithm::Ring, Primitive::AllReduce, 64, 4, DType::Fp32),
        (Algorithm::Ring, Primitive::AllReduce, 64, 16, DType::Bf16),
        (Algorithm::Mesh, Primitive::AllReduce, 8, 3, DType::Fp16),
        (Algorithm::Rhd, Primitive::AllReduce, 12, 4, DType::Fp32),
        (Algorithm::Ring, Primitive::AllGather, 10, 4, DType::Int8),
        (Algorithm::Mesh, Primitive::AlltoAll, 9, 4, DType::Int32),
        (Algorithm::Ring, Primitive::AllReduce, 5, 1, DType::Fp32),
    ] {
        let s = build(alg, prim, n).unwrap();
        let elems = 1031;
        let want = reference_run(&s, dtype, ReduceOp::Sum, 5, elems).unwrap();
        let (out, local, remote) = run_hosted(&s, workers, dtype, elems, None, &mut rng);
        for r in 0..n {
            assert_eq!(
                out[r].as_deref(),
                Some(&want[r][..]),
                "{alg:?} {prim:?} n={n} on {workers} workers, rank {r}"
            );
        }
        // Every transfer went exactly one way: locally iff both ends share a worker.
        let p = WorkerLayout::new(n, workers).unwrap();
        let (mut want_local, mut want_remote) = (0, 0);
        for t in s.steps.iter().flat_map(|st| &st.transfers) {
            if p.worker_of(t.src) == p.worker_of(t.dst) {
                want_local += 1;
            } else {
                want_remote += 1;
            }
        }
        assert_eq!((local, remote), (want_local, want_remote), "{alg:?} n={n}");
        if workers < n {
            assert!(local > 0, "co-hosted ranks talk locally");
        }
    }
    // 64-rank ring on 4 workers: only the 4 block boundaries cross workers,
    // 2·63 steps each.
    let s = build(Algorithm::Ring, Primitive::AllReduce, 64).unwrap();
    let (_, local, remote) = run_hosted(&s, 4, DType::Fp32, 64, None, |_| 0);
    assert_eq!(remote, 4 * 2 * 63);
    assert_eq!(local, 60 * 2 * 63);
}

/// Compressed runs through hosts (co-hosted ranks exchange encoded payloads
/// in memory, the others over simulated ports) equal the compressed
/// reference bit for bit, for both placements.
#[test]
fn hosted_compressed_runs_equal_the_compressed_reference() {
    use ccl_playground::engine::compressed::Placement as Where;
    for (placement, scheme, n, workers) in [
        (Where::Hop, Scheme::Int8, 16, 4),
        (Where::Hop, Scheme::Fp8e5m2, 12, 5),
        (Where::Once, Scheme::Int8, 16, 4),
        (Where::Once, Scheme::Fp8e4m3, 6, 4),
    ] {
        let setup = CompressedSetup {
            compression: Compression {
                scheme,
                block: 128,
                scale: ScaleType::Fp16,
            },
            placement,
            shape: GradientShape::Layered,
        };
        let ar = build(Algorithm::Ring, Primitive::AllReduce, n).unwrap();
        let run = match placement {
            Where::Hop => ar.clone(),
            Where::Once => build(Algorithm::Ring, Primitive::AllGather, n).unwrap(),
        };
        let elems = 3001;
        let chk = CompressedCheck::prepare(&ar, &run, &setup, DType::Fp16, ReduceOp::Sum, 5, elems)
            .unwrap();
        let (out, local, _) =
            run_hosted(&run, workers, DType::Fp16, elems, Some(&setup), |k| k - 1);
        assert!(local > 0);
        for r in 0..n {
            let o = out[r].as_deref().unwrap();
            assert_eq!(chk.compare(r, o).0, 0, "{placement:?} {scheme:?} rank {r}");
        }
    }
}

#[test]
fn hosts_report_failures_halts_and_strays() {
    let s = build(Algorithm::Ring, Primitive::AllReduce, 4).unwrap();
    let p = WorkerLayout::new(4, 2).unwrap(); // ranks 0,1 | 2,3
    let mk = |w| {
        Host::<Vec<u8>>::new(p.clone(), w, |r| {
            RankMachine::new(&s, r, DType::Fp32, ReduceOp::Sum, 1, 8)
        })
        .unwrap()
    };
    // First drain: rank 0 sends to 1 locally, rank 1 to 2 remotely; both wait.
    let mut h = mk(0);
    assert_eq!(h.ranks(), vec![0, 1]);
    let mut sent = Vec::new();
    let reports = h.drain(|m, route, _| {
        sent.push((m.from, m.to, route));
        Ok(if route == Route::Local {
            Sent::Local
        } else {
            Sent::Handled
        })
    });
    // Rank 1 reduces rank 0's local step-0 chunk in the same drain and
    // sends on: its step-1 chunk also goes to rank 2.
    assert_eq!(
        sent,
        vec![
            (0, 1, Route::Local),
            (1, 2, Route::Remote(1)),
            (1, 2, Route::Remote(1))
        ]
    );
    assert_eq!(
        reports,
        vec![
            Report::Waiting {
                rank: 0,
                from: 3,
                step: 0
            },
            Report::Waiting {
                rank: 1,
                from: 0,
                step: 1
            }
        ]
    );
    // A chunk for a rank hosted elsewhere is a typed error.
    let stray = Routed {
        from: 1,
        to: 2,
        chunk: machine::ChunkHeader {
            step: 0,
            first: 1,
            count: 1,
        },
    };
    assert_eq!(
        h.deliver(stray, Bytes::Local(vec![0; 8])),
        Err(host::HostError::NotHosted {
            from: 1,
            to: 2,
            worker: 0
        })
    );
    // A wrong chunk fails its rank and stops the host.
    let wrong = Routed {
        from: 3,
        to: 0,
        chunk: machine::ChunkHeader {
            step: 4,
            first: 0,
            count: 1,
        },
    };
    h.deliver(wrong, Bytes::Wire(vec![0; 8])).unwrap();
    let reports = h.drain(|_, _, _| Ok(Sent::Handled));
    assert!(
        matches!(&reports[..], [Report::Failed { rank: 0, message }] if message.contains("expected step 0")),
        "{reports:?}"
    );
    assert!(h.is_finished());
    // A halt (test-only kill) stops every hosted rank at once.
    let mut h = mk(1);
    let reports = h.drain(|_, _, _| Ok(Sent::Halt));
    assert_eq!(reports, vec![Report::Halted]);
    assert!(h.is_finished());
    // A failed post fails the sending rank.
    let mut h = mk(1);
    let reports = h.drain(|m, _, _| Err(format!("no port to rank {}", m.to)));
    assert_eq!(
        reports,
        vec![Report::Failed {
            rank: 2,
            message: "no port to rank 3".into()
        }]
    );
    // A worker the placement leaves empty cannot host.
    assert!(matches!(
        Host::<Vec<u8>>::new(p.clone(), 2, |r| RankMachine::new(
            &s,
            r,
            DType::Fp32,
            ReduceOp::Sum,
            1,
            8
        )),
        Err(host::HostError::NoRanks { worker: 2 })
    ));
}

#[test]
fn hosted_msccl_imports_with_local_copies_and_scratch_equal_the_reference() {
    use ccl_playground::engine::formats::msccl;
    for f in [
        "msccl_allreduce_binarytree_4gpu_simple.xml",
        "msccl_allreduce_ring_4gpu_4ch_simple.xml",
        "msccl_ndv4_alltoall_allpairs_8gpu_ll_2ch.xml",
    ] {
        let xml = std::fs::read_to_string(format!(
            "{}/tests/fixtures/msccl/{f}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let s = msccl::import(&xml).unwrap().schedule;
        let local = s
            .steps
            .iter()
            .flat_map(|x| &x.transfers)
            .any(|t| t.src == t.dst);
        // The ring's rrs pre-copies, the tree's too, the AlltoAll's own-piece cpy.
        assert!(local, "{f}");
        let elems = s.granule() * 5;
        for workers in [1, 2] {
            let mut k = 0usize;
            let (out, _, _) = run_hosted(&s, workers, DType::Fp32, elems, None, |n| {
                k += 1;
                k % n
            });
            let want = reference_run(&s, DType::Fp32, ReduceOp::Sum, 5, elems).unwrap();
            for (r, o) in out.iter().enumerate() {
                assert_eq!(
                    o.as_ref().unwrap(),
                    &want[r],
                    "{f} rank {r} on {workers} workers"
                );
            }
        }
    }
}

/// The compressed reference of a schedule with a transfer it cannot carry
/// out (a rank outside it) is an error naming the transfer, not a panic
/// (it was `panic!("compressed reference: …")`).
#[test]
fn compressed_reference_of_a_bad_transfer_is_an_error() {
    use ccl_playground::engine::compressed::Placement;
    use ccl_playground::engine::execute::ExecuteError;
    let setup = CompressedSetup {
        compression: Compression {
            scheme: Scheme::Int8,
            block: 128,
            scale: ScaleType::Fp16,
        },
        placement: Placement::Hop,
        shape: GradientShape::Layered,
    };
    let ar = build(Algorithm::Ring, Primitive::AllReduce, 4).unwrap();
    let prepare = |run: &ccl_playground::engine::schedule::Schedule| {
        CompressedCheck::prepare(&ar, run, &setup, DType::Fp16, ReduceOp::Sum, 5, 1000)
    };
    let mut bad = ar.clone();
    bad.steps[2].transfers[1].dst = 9;
    match prepare(&bad) {
        Err(ExecuteError::BadTransfer(e)) => assert!(e.to_string().contains('9'), "{e}"),
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("a transfer to rank 9 of 4 was carried out"),
    }
    // A run of more ranks than the collective's buffers.
    bad.ranks = 16;
    match prepare(&bad) {
        Err(ExecuteError::RankCount { want: 16, got: 4 }) => {}
        other => panic!("{:?}", other.err()),
    }
    // A run with a larger layout (more scratch chunks).
    let mut bad = ar.clone();
    bad.scratch = 2;
    match prepare(&bad) {
        Err(ExecuteError::BufferLength { .. }) => {}
        other => panic!("{:?}", other.err()),
    }
    assert!(prepare(&ar).is_ok());
}
