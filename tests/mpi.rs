//! `cclrun` under `mpirun` (cargo feature `mpi`; needs Open MPI:
//! scripts/install-test.sh): every primitive runs and checks with at least two
//! of our algorithms (and the library's own collective where MPI has one),
//! the nccl-tests table reads back in `cclsim fit`, `--compare` puts the
//! library beside us, and faults end the job with a message naming the
//! rank, never a hang.
//!
//! Each test spawns `mpirun -np 4 --oversubscribe --allow-run-as-root`
//! (CI runs as root on 2 cores) with small sizes and few iterations.

#![cfg(feature = "mpi")]

use ccl_playground::engine::algorithm::Algorithm;
use ccl_playground::engine::collective::Primitive;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const CCLRUN: &str = env!("CARGO_BIN_EXE_cclrun");
const CCLSIM: &str = env!("CARGO_BIN_EXE_cclsim");

/// `mpirun -np n cclrun args...`, with a generous outer bound.
fn mpirun(n: usize, args: &[&str]) -> Output {
    let out = Command::new("mpirun")
        .args([
            "-np",
            &n.to_string(),
            "--oversubscribe",
            "--allow-run-as-root",
        ])
        .arg(CCLRUN)
        .args(args)
        .output()
        .expect("mpirun runs (install Open MPI: scripts/install-test.sh)");
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The JSON lines of a `--json` run.
fn rows(out: &Output) -> Vec<serde_json::Value> {
    text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn every_primitive_runs_and_checks_with_two_algorithms_and_the_library() {
    let dtypes = ["fp32", "bf16", "int32", "fp16", "int8"];
    let n = 4;
    for (i, p) in Primitive::ALL.into_iter().enumerate() {
        let ours: Vec<&str> = Algorithm::applicable(p, n)
            .into_iter()
            .map(|a| a.name())
            .take(2)
            .collect();
        // Two runs of different algorithms at least: two of ours, or (for
        // SendRecv, whose only schedule is ring) ours and MPI_Sendrecv.
        let library = p != Primitive::AlltoAllV;
        assert!(
            ours.len() + library as usize >= 2,
            "{p:?}: {ours:?} on {n} ranks"
        );
        // Reductions in half precision have no MPI baseline: fp32 there.
        let dtype = match dtypes[i % dtypes.len()] {
            "bf16" | "fp16" if p.reduces() => "fp32",
            d => d,
        };
        let mut algos = ours.join(",");
        algos.push_str(",auto");
        if library {
            algos.push_str(",library");
        }
        let out = mpirun(
            n,
            &[
                "--op",
                p.name(),
                "--algo",
                &algos,
                "--dtype",
                dtype,
                "--root",
                "1",
                "-b",
                "1K",
                "-e",
                "32K",
                "-f",
                "32",
                "-w",
                "0",
                "-n",
                "1",
                "--json",
            ],
        );
        let err = text(&out.stderr);
        assert!(out.status.success(), "{p:?} {algos} {dtype}: {err}");
        let rows = rows(&out);
        let per_choice = 2; // 1K and 32K
        assert_eq!(
            rows.len(),
            per_choice * algos.split(',').count(),
            "{p:?}: {}",
            text(&out.stdout)
        );
        for r in &rows {
            assert_eq!(r["wrong"], 0, "{p:?} {r}");
            assert_eq!(r["ranks"], 4);
            assert!(r["time_us"].as_f64().unwrap() > 0.0, "{r}");
            if r["choice"] != "library" && r["choice"] != "auto" {
                assert_eq!(r["algorithm"], r["choice"]);
            }
        }
        let bytes: Vec<u64> = rows
            .iter()
            .take(2)
            .map(|r| r["bytes"].as_u64().unwrap())
            .collect();
        // The block primitives round the element count down to a multiple of 4.
        let es = [
            ("fp32", 4),
            ("bf16", 2),
            ("int32", 4),
            ("fp16", 2),
            ("int8", 1),
        ]
        .iter()
        .find(|(d, _)| *d == dtype)
        .unwrap()
        .1;
        for b in bytes {
            assert_eq!(b % es, 0);
            assert!(b == 1024 || b == 32768, "{p:?} {b}");
        }
    }
}

#[test]
fn the_ring_table_has_no_wrong_rows_and_reads_back_in_cclsim_fit() {
    let out = mpirun(
        4,
        &[
            "--op",
            "allreduce",
            "--algo",
            "ring",
            "-b",
            "1K",
            "-e",
            "16M",
            "-f",
            "4",
            "-w",
            "1",
            "-n",
            "2",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let data: Vec<&str> = table.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(data.len(), 8, "1K..16M by 4: {table}");
    for l in &data {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.len(), 13, "{l}");
        assert_eq!((f[8], f[12]), ("0", "0"), "#wrong 0: {l}");
    }
    assert!(table.contains("# Out of bounds values : 0 OK"), "{table}");
    assert!(table.contains("[process]"), "{table}");
    let log = ccl_playground::engine::formats::parse_log(&table).unwrap();
    assert_eq!(log.tables[0].ranks, Some(4));
    assert_eq!(log.tables[0].rows.len(), 8);
    let path = std::env::temp_dir().join(format!("cclrun-ring-{}.txt", std::process::id()));
    std::fs::write(&path, &table).unwrap();
    let fit = Command::new(CCLSIM).arg("fit").arg(&path).output().unwrap();
    let _ = std::fs::remove_file(&path);
    let fitted = text(&fit.stdout);
    assert!(fit.status.success(), "{}", text(&fit.stderr));
    assert!(fitted.contains("# segment 0:"), "{fitted}");
    assert!(fitted.contains("(all_reduce, 4 ranks)"), "{fitted}");
    // One fitted row per measured size.
    let fitted_rows = fitted.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(fitted_rows, 8, "{fitted}");
}

#[test]
fn compare_puts_the_library_beside_ours_with_the_ratio() {
    let out = mpirun(
        2,
        &[
            "--op",
            "allreduce",
            "--algo",
            "ring,rhd,auto,library",
            "--compare",
            "-b",
            "4K",
            "-e",
            "64K",
            "-f",
            "16",
            "-w",
            "1",
            "-n",
            "2",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(
        t.contains("ring") && t.contains("library") && t.contains("ratio"),
        "{t}"
    );
    let data: Vec<Vec<&str>> = t
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(data.len(), 2, "{t}");
    for f in &data {
        // size, 4 × (time, busbw), best, ratio, auto, #wrong
        assert_eq!(f.len(), 13, "{f:?}");
        assert!(["ring", "rhd"].contains(&f[9]), "{f:?}");
        assert!(f[10].parse::<f64>().unwrap() > 0.0);
        assert_eq!(f[12], "0");
    }
}

#[test]
fn a_corrupted_chunk_names_the_rank_chunk_and_element() {
    let out = mpirun(
        4,
        &[
            "--op",
            "allreduce",
            "--algo",
            "ring",
            "-b",
            "4K",
            "-e",
            "4K",
            "-w",
            "0",
            "-n",
            "1",
            "--fault",
            "corrupt:rank=1:step=2",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // Rank 1 corrupts its step-2 chunk (chunk 3 of the ring's allgather
    // phase); every rank that ends with it says so.
    assert!(
        err.contains("wrong element(s) of 1024; first: chunk") && err.contains("bit for bit"),
        "{err}"
    );
    let table = text(&out.stdout);
    assert!(table.contains("FAILED"), "{table}");
}

#[test]
fn a_lost_message_or_a_dead_rank_ends_the_job_with_a_message_never_a_hang() {
    let t = Instant::now();
    let out = mpirun(
        4,
        &[
            "--op",
            "allreduce",
            "--algo",
            "ring",
            "-b",
            "4K",
            "-e",
            "4K",
            "-w",
            "0",
            "-n",
            "1",
            "--timeout-ms",
            "1500",
            "--fault",
            "drop:rank=1:step=2",
        ],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("no progress for 1500 ms at step"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(60));
    let out = mpirun(
        4,
        &[
            "--op",
            "allgather",
            "--algo",
            "mesh",
            "-b",
            "4K",
            "-e",
            "4K",
            "-w",
            "0",
            "-n",
            "1",
            "--fault",
            "kill:rank=2:step=0",
        ],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("rank 2 exits at step 0"), "{err}");
    assert!(err.contains("mpirun"), "mpirun says the job ended: {err}");
}

#[test]
fn bad_arguments_are_one_line_from_rank_0_and_exit_2() {
    for (args, want) in [
        (
            vec!["--op", "allreduce", "--algo", "fast"],
            "--algo \"fast\": one of auto, library",
        ),
        (vec!["--op", "allreduce", "-b", "1Q"], "-b \"1Q\""),
        (
            vec!["--op", "allreduce", "--algo", "library", "--dtype", "bf16"],
            "no half-precision reduction",
        ),
        (vec!["--op", "nope"], "--op \"nope\""),
    ] {
        let out = mpirun(2, &args);
        let err = text(&out.stderr);
        // stderr in the message: mpirun has exited with 1 here under load,
        // and what it printed is what tells why.
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("cclrun:")).collect();
        assert_eq!(ours.len(), 1, "{args:?}: {err}");
        assert!(ours[0].contains(want), "{args:?}: {err}");
    }
}
