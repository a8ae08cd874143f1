//! Results out, as the tools print them: nccl-tests' table (so a
//! prediction can be diffed against a real run and read back by `cclsim
//! fit`), JSON lines and CSV.
//!
//! The table follows nccl-tests 2.17's print code (`src/common.cu`,
//! `printHeader`/`printRows`, as in the real logs of `tests/fixtures`): a
//! `# Collective test starting: X_perf` line, the `# Using devices` list
//! (one `#  Rank` line per rank, which is how readers count ranks), the
//! two-line column header with out-of-place and in-place halves, rows of
//! size, count, type, redop, root, then time (µs), algbw and busbw (GB/s)
//! and `#wrong` per half, `# Avg bus bandwidth`, and `# Collective test
//! concluded`. A model checks nothing, so `#wrong` is `N/A` (what
//! nccl-tests prints with `-c 0`) unless a run checked it; the in-place
//! half repeats the out-of-place figures of a model.

use crate::engine::collective::Primitive;
use crate::engine::dtype::{DType, ReduceOp};
use std::fmt::Write as _;

/// One row of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportRow {
    /// Message size S, bytes.
    pub bytes: u64,
    /// Time, µs.
    pub time_us: f64,
    /// algbw, GB/s.
    pub algbw_gbps: f64,
    /// busbw, GB/s.
    pub busbw_gbps: f64,
    /// Wrong elements (`None`: not checked, printed `N/A`).
    pub wrong: Option<u64>,
    /// Extra columns for JSON lines and CSV (`algorithm`, `method`, ...),
    /// in order.
    pub extra: Vec<(String, String)>,
}

/// What the table's header says.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportHeader {
    /// The collective.
    pub primitive: Primitive,
    /// Element type.
    pub dtype: DType,
    /// Reduce op.
    pub redop: ReduceOp,
    /// Root of a rooted primitive.
    pub root: usize,
    /// One label per rank (its device), in rank order.
    pub devices: Vec<String>,
    /// Who produced it (`cclsim predict (model)`, `cclrun`), printed on
    /// the `# Using devices` lines where nccl-tests prints the host.
    pub producer: String,
    /// Comment lines printed first (without `# `).
    pub notes: Vec<String>,
    /// `(pid, host)` of each rank of a real run (`cclrun`), printed on the
    /// `# Using devices` lines as nccl-tests prints them; empty for a
    /// model (Pid 0, `[model]`).
    pub processes: Vec<(u32, String)>,
}

/// nccl-tests' name of a collective's program (`all_reduce_perf`).
pub fn perf_name(p: Primitive) -> &'static str {
    match p {
        Primitive::AllReduce => "all_reduce_perf",
        Primitive::ReduceScatter => "reduce_scatter_perf",
        Primitive::AllGather => "all_gather_perf",
        Primitive::Broadcast => "broadcast_perf",
        Primitive::Reduce => "reduce_perf",
        Primitive::Scatter => "scatter_perf",
        Primitive::Gather => "gather_perf",
        Primitive::AlltoAll | Primitive::AlltoAllV => "alltoall_perf",
        Primitive::Barrier => "barrier_perf",
        Primitive::SendRecv => "sendrecv_perf",
    }
}

/// nccl-tests' type name (`-d`): float, half, bfloat16, int32, int8.
pub fn type_name(d: DType) -> &'static str {
    match d {
        DType::Fp32 => "float",
        DType::Fp16 => "half",
        DType::Bf16 => "bfloat16",
        DType::Int32 => "int32",
        DType::Int8 => "int8",
    }
}

/// A time as nccl-tests prints it in 7 characters: 2 decimals below
/// 10 000 µs, 1 below 100 000, none above.
pub fn time_field(us: f64) -> String {
    if us < 10_000.0 {
        format!("{us:7.2}")
    } else if us < 100_000.0 {
        format!("{us:7.1}")
    } else {
        format!("{us:7.0}")
    }
}

/// The whole nccl-tests table of `rows`.
pub fn nccl_tests_table(h: &ReportHeader, rows: &[ReportRow]) -> String {
    let mut s = String::new();
    let perf = perf_name(h.primitive);
    for n in &h.notes {
        let _ = writeln!(s, "# {n}");
    }
    let _ = writeln!(s, "# Collective test starting: {perf}");
    let (lo, hi) = (
        rows.first().map_or(0, |r| r.bytes),
        rows.last().map_or(0, |r| r.bytes),
    );
    let _ = writeln!(
        s,
        "# nThread 1 nGpus 1 minBytes {lo} maxBytes {hi} step: 2(factor) warmup iters: 0 iters: 0 agg iters: 1 validation: 0 graph: 0"
    );
    s.push_str("#\n# Using devices\n");
    for (r, d) in h.devices.iter().enumerate() {
        match h.processes.get(r) {
            Some((pid, host)) => writeln!(
                s,
                "#  Rank {r:2} Group  0 Pid {pid:>6} on {host:>10} device {r:2} [process] {d}"
            ),
            None => writeln!(
                s,
                "#  Rank {r:2} Group  0 Pid {:>6} on {:>10} device {r:2} [model] {d}",
                0, h.producer
            ),
        }
        .ok();
    }
    s.push_str("#\n");
    s.push_str("#                                                              out-of-place                       in-place\n");
    s.push_str("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n");
    s.push_str("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n");
    let es = h.dtype.size_bytes() as u64;
    let rooted = h.primitive.rooted();
    let redop = if matches!(
        h.primitive,
        Primitive::AllReduce | Primitive::ReduceScatter | Primitive::Reduce
    ) {
        h.redop.name()
    } else {
        "none"
    };
    let root = if rooted { h.root as i64 } else { -1 };
    let mut bus_sum = 0.0;
    for r in rows {
        let wrong = r.wrong.map_or("N/A".to_string(), |w| w.to_string());
        let half = format!(
            "{}  {:6.2}  {:6.2}  {:>6}",
            time_field(r.time_us),
            r.algbw_gbps,
            r.busbw_gbps,
            wrong
        );
        let _ = writeln!(
            s,
            "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {half}  {half}",
            r.bytes,
            r.bytes / es,
            type_name(h.dtype),
            redop,
            root
        );
        bus_sum += r.busbw_gbps;
    }
    let checked = rows.iter().all(|r| r.wrong.is_some());
    let wrong: u64 = rows.iter().filter_map(|r| r.wrong).sum();
    if checked {
        let _ = writeln!(
            s,
            "# Out of bounds values : {wrong} {}",
            if wrong == 0 { "OK" } else { "FAILED" }
        );
    }
    let _ = writeln!(
        s,
        "# Avg bus bandwidth    : {:.3}",
        if rows.is_empty() {
            0.0
        } else {
            bus_sum / rows.len() as f64
        }
    );
    s.push_str("#\n");
    let _ = writeln!(s, "# Collective test concluded: {perf}");
    s
}

/// JSON lines: one object per row with `bytes`, `count`, `type`,
/// `redop`, `root`, `time_us`, `algbw_gbps`, `busbw_gbps`, `wrong` (null
/// if unchecked) and the row's extra columns.
pub fn json_lines(h: &ReportHeader, rows: &[ReportRow]) -> String {
    let es = h.dtype.size_bytes() as u64;
    let mut s = String::new();
    for r in rows {
        let mut m = serde_json::Map::new();
        m.insert("collective".into(), h.primitive.name().into());
        m.insert("bytes".into(), r.bytes.into());
        m.insert("count".into(), (r.bytes / es).into());
        m.insert("type".into(), type_name(h.dtype).into());
        m.insert("redop".into(), h.redop.name().into());
        m.insert("root".into(), (h.root as u64).into());
        m.insert("ranks".into(), (h.devices.len() as u64).into());
        m.insert("time_us".into(), r.time_us.into());
        m.insert("algbw_gbps".into(), r.algbw_gbps.into());
        m.insert("busbw_gbps".into(), r.busbw_gbps.into());
        m.insert(
            "wrong".into(),
            r.wrong.map_or(serde_json::Value::Null, |w| w.into()),
        );
        for (k, v) in &r.extra {
            m.insert(k.clone(), v.clone().into());
        }
        let _ = writeln!(s, "{}", serde_json::Value::Object(m));
    }
    s
}

/// CSV with a header line: the columns of [`json_lines`] (RFC 4180
/// quoting where a value needs it).
pub fn csv(h: &ReportHeader, rows: &[ReportRow]) -> String {
    let es = h.dtype.size_bytes() as u64;
    let quote = |v: &str| {
        if v.contains([',', '"', '\n']) {
            format!("\"{}\"", v.replace('"', "\"\""))
        } else {
            v.to_string()
        }
    };
    let mut s = String::from(
        "collective,bytes,count,type,redop,root,ranks,time_us,algbw_gbps,busbw_gbps,wrong",
    );
    if let Some(r) = rows.first() {
        for (k, _) in &r.extra {
            s.push(',');
            s.push_str(&quote(k));
        }
    }
    s.push('\n');
    for r in rows {
        let _ = write!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{}",
            h.primitive.name(),
            r.bytes,
            r.bytes / es,
            type_name(h.dtype),
            h.redop.name(),
            h.root,
            h.devices.len(),
            r.time_us,
            r.algbw_gbps,
            r.busbw_gbps,
            r.wrong.map_or(String::new(), |w| w.to_string())
        );
        for (_, v) in &r.extra {
            s.push(',');
            s.push_str(&quote(v));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> ReportHeader {
        ReportHeader {
            primitive: Primitive::AllReduce,
            dtype: DType::Fp32,
            redop: ReduceOp::Sum,
            root: 0,
            devices: (0..8).map(|i| format!("GPU{i}")).collect(),
            producer: "cclsim".into(),
            notes: vec!["a model".into()],
            processes: vec![],
        }
    }

    #[test]
    fn the_table_reads_back_as_nccl_tests() {
        let rows: Vec<ReportRow> = [(8u64, 15.0), (1 << 20, 40.25), (1 << 30, 12345.6)]
            .iter()
            .map(|&(b, t)| ReportRow {
                bytes: b,
                time_us: t,
                algbw_gbps: b as f64 / (t * 1e3),
                busbw_gbps: b as f64 / (t * 1e3) * 1.75,
                wrong: Some(0),
                extra: vec![],
            })
            .collect();
        let text = nccl_tests_table(&header(), &rows);
        assert!(
            text.contains("     1048576        262144     float     sum      -1    40.25"),
            "{text}"
        );
        assert!(text.contains("12345.6"), "{text}");
        let log = crate::engine::formats::parse_log(&text).unwrap();
        assert_eq!(log.tables.len(), 1);
        let t = &log.tables[0];
        assert_eq!(t.ranks, Some(8));
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[1].bytes, 1 << 20);
        assert!((t.rows[1].out_of_place.time_us - 40.25).abs() < 1e-9);
    }

    #[test]
    fn json_lines_and_csv_carry_every_row() {
        let rows = vec![ReportRow {
            bytes: 4096,
            time_us: 10.0,
            algbw_gbps: 0.4096,
            busbw_gbps: 0.7168,
            wrong: None,
            extra: vec![("algorithm".into(), "ring".into())],
        }];
        let j = json_lines(&header(), &rows);
        let v: serde_json::Value = serde_json::from_str(j.trim()).unwrap();
        assert_eq!(v["bytes"], 4096);
        assert_eq!(v["count"], 1024);
        assert_eq!(v["algorithm"], "ring");
        assert!(v["wrong"].is_null());
        let c = csv(&header(), &rows);
        assert_eq!(c.lines().count(), 2);
        assert!(c.starts_with("collective,bytes,count,type,redop,root,ranks,time_us,algbw_gbps,busbw_gbps,wrong,algorithm\n"));
        assert!(c.contains("allreduce,4096,1024,float,sum,0,8,10,0.4096,0.7168,,ring"));
    }
}
