//! Log reading and profile fitting at 1 000 / 10 000 / 100 000 rows: an
//! nccl-tests table stepping the size by a constant (`-i`), so every row
//! is a distinct size (the worst case: repeated sizes are averaged before
//! the fit), two regimes (`20 µs + S / 50 GB/s` below 64 MiB, `60 µs +
//! S / 150 GB/s` above) with a ±1 % deterministic wobble.
//! Run: `cargo bench --bench fit`.

use ccl_playground::engine::calibrate::Profile;
use ccl_playground::engine::formats::parse_log;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::fmt::Write;
use std::hint::black_box;

/// An nccl-tests log of `rows` rows, sizes `step × 1..=rows`.
fn log(rows: u64, step: u64) -> String {
    let mut s = format!(
        "$ mpirun -np 8 ./build/all_reduce_perf -b {step} -e {} -i {step} -g 1\n\
#                                                              out-of-place                       in-place\n\
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n\
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n",
        step * rows
    );
    for k in 1..=rows {
        let b = k * step;
        let t = if b < 64 << 20 {
            20.0 + b as f64 / 50e3
        } else {
            60.0 + b as f64 / 150e3
        } * (1.0 + 0.01 * (((k * 7919) % 13) as f64 / 6.0 - 1.0));
        let alg = b as f64 / t / 1e3;
        let _ = writeln!(
            s,
            "{b:>12}  {:>12}     float     sum      -1  {t:7.2}  {alg:6.2}  {:6.2}       0  {t:7.2}  {alg:6.2}  {:6.2}       0",
            b / 4,
            alg * 1.75,
            alg * 1.75
        );
    }
    s.push_str("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 100\n");
    s
}

fn fit(c: &mut Criterion) {
    let mut g = c.benchmark_group("log");
    g.sample_size(10);
    for (rows, step) in [
        (1_000u64, 1u64 << 20),
        (10_000, 128 << 10),
        (100_000, 16 << 10),
    ] {
        let text = log(rows, step);
        g.bench_with_input(BenchmarkId::new("parse", rows), &text, |b, t| {
            b.iter(|| parse_log(black_box(t)).unwrap())
        });
        let parsed = parse_log(&text).unwrap();
        let table = &parsed.tables[0];
        assert_eq!(table.rows.len() as u64, rows);
        g.bench_with_input(BenchmarkId::new("fit", rows), table, |b, t| {
            b.iter(|| Profile::fit_table(black_box(t), None, "bench").unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, fit);
criterion_main!(benches);
