//! `cclsim predict` and `cclsim sweep`: one plan, or one per size, printed
//! as text, JSON, nccl-tests' table, JSON lines or CSV.

use super::*;

pub(super) fn decision_name(d: &Decision) -> &'static str {
    match d {
        Decision::Library { .. } => "library",
        Decision::Measured { .. } => "measured",
        Decision::Model { .. } => "model",
        Decision::Fixed { .. } => "fixed",
    }
}

/// The report header of a configuration.
pub(super) fn header(c: &Config, topo: &Topology, notes: Vec<String>) -> ReportHeader {
    ReportHeader {
        primitive: c.primitive,
        dtype: c.dtype,
        redop: c.redop,
        root: c.root,
        devices: (0..c.ranks)
            .map(|r| topo.node_label(r).to_string())
            .collect(),
        producer: "cclsim".into(),
        notes,
        processes: vec![],
    }
}

/// Writes `p`'s timeline as a trace-event file (`--trace`).
pub(super) fn write_trace(p: &Plan, path: &Path) -> Res<()> {
    if p.estimate.timeline.transfers.is_empty() {
        return Err(format!(
            "--trace {}: this plan has no modelled timeline to export (method: {}); {}",
            path.display(),
            p.method.name(),
            p.verdict
        ));
    }
    let trace = formats::trace::chrome_trace(p.drawn_schedule(), &p.estimate.timeline, &p.topology);
    std::fs::write(path, trace.to_string())
        .map_err(|e| format!("--trace {}: cannot write: {e}", path.display()))
}

pub(super) fn row(p: &Plan) -> ReportRow {
    let e = &p.estimate;
    ReportRow {
        bytes: e.bytes,
        time_us: e.time_us,
        algbw_gbps: e.algbw_gbps,
        busbw_gbps: e.busbw_gbps,
        wrong: None,
        extra: vec![
            ("algorithm".into(), p.algorithm.name().into()),
            ("library".into(), p.library.name().into()),
            ("decision".into(), decision_name(&p.decision).into()),
            ("method".into(), p.method.name().into()),
        ],
    }
}

pub(super) fn print_report(c: &Config, topo: &Topology, rows: &[ReportRow], f: Format) -> Res<()> {
    let notes = vec![
        "cclsim: a model, not a measurement (ccl-playground). The page link of the same configuration:".into(),
        format!("?{}", c.to_query()),
    ];
    let h = header(c, topo, notes);
    let text = match f {
        Format::Table => report::nccl_tests_table(&h, rows),
        Format::Jsonl => report::json_lines(&h, rows),
        Format::Csv => report::csv(&h, rows),
    };
    out(&text)
}

pub(super) fn predict(
    m: &Machine,
    bytes: &str,
    json: bool,
    format: Option<Format>,
    trace: Option<&Path>,
) -> Res<()> {
    let c = config(m, bytes, "--bytes")?;
    let p = match trace {
        // The page's plan: the drawn schedule's timeline, even on a
        // measured curve.
        Some(_) => Plan::new(&c).map_err(|e| e.to_string())?,
        None => plan(&c)?,
    };
    if let Some(path) = trace {
        write_trace(&p, path)?;
    }
    let e = &p.estimate;
    if let Some(f) = format {
        return print_report(&c, &p.topology, &[row(&p)], f);
    }
    if json {
        let runs = p.library.runs(p.algorithm, c.primitive);
        let v = serde_json::json!({
            "time_us": e.time_us,
            "algbw_gbps": e.algbw_gbps,
            "busbw_gbps": e.busbw_gbps,
            "algorithm": p.algorithm.name(),
            "library": p.library.name(),
            "decision": decision_name(&p.decision),
            "runs_in_library": runs,
            "method": p.method.name(),
            "verdict": p.verdict,
            "op": c.primitive.name(),
            "redop": c.redop.name(),
            "redop_note": p.library.redop_note(c.primitive, c.redop),
            "bytes": c.bytes,
            "ranks": c.ranks,
            "topology": p.topology.name,
            "loops": e.timeline.loops,
            "slices": e.slicing.slices,
            "slices_why": e.slicing.why.to_string(),
            "max_link_sharing": e.timeline.steps.iter().map(|x| x.max_link_sharing).max().unwrap_or(0),
            "link": format!("?{}", c.to_query()),
            "faults": faults_json(&c),
            "healthy_time_us": p.healthy.as_ref().map(|h| h.time_us),
            "slowdown": p.slowdown(),
            "prediction": p.prediction.as_ref().map(|a| serde_json::json!({
                "low_us": a.low_us,
                "high_us": a.high_us,
                "runs": a.runs,
                "channels": a.channels,
                "library_us": a.library_us,
                "nodes": a.shape.nodes,
                "why": a.why,
                "note": a.note,
            })),
        });
        return out(&format!("{v}\n"));
    }
    if let Some(n) = p.library.redop_note(c.primitive, c.redop) {
        out(&format!("note: {n}\n"))?;
    }
    out(&format!(
        "{} {} of {} on {} ranks of {}: {:.2} µs, algbw {:.2} GB/s, busbw {:.2} GB/s\n{}\n",
        p.algorithm.name(),
        c.primitive.title(),
        format_bytes(c.bytes),
        c.ranks,
        p.topology.name,
        e.time_us,
        e.algbw_gbps,
        e.busbw_gbps,
        p.verdict,
    ))?;
    match &p.prediction {
        // The calibrated model: no slices of ours, a range and its reach.
        Some(a) => out(&format!("{}\n", a.note)),
        None => out(&format!(
            "slices: {} ({})\n",
            e.slicing.slices, e.slicing.why
        )),
    }
}

/// The degradation of `c` as JSON (`null` when healthy): each key's
/// value as the page's link writes it.
pub(super) fn faults_json(c: &Config) -> serde_json::Value {
    if c.faults.is_none() {
        return serde_json::Value::Null;
    }
    let f = &c.faults;
    serde_json::json!({
        "slow": f.slow.iter().map(|&(r, x)| serde_json::json!({"rank": r, "speed": x})).collect::<Vec<_>>(),
        "late": f.late.iter().map(|&(r, d)| serde_json::json!({"rank": r, "late_us": d})).collect::<Vec<_>>(),
        "down": f.down.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
    })
}

pub(super) fn sweep(m: &Machine, min: &str, max: &str, factor: u64, format: Format) -> Res<()> {
    let lo = config(m, min, "-b")?;
    let hi = config(m, max, "-b")?.bytes;
    let hi = message_bytes(max, lo.dtype)
        .map_err(|(e, _)| format!("-e {max:?}: {e}"))
        .map(|_| hi)?;
    if lo.bytes > hi {
        return Err(format!("-b {min} is larger than -e {max}"));
    }
    if factor < 2 {
        return Err(format!("-f {factor}: a factor of at least 2"));
    }
    let es = lo.dtype.size_bytes() as u64;
    let mut rows = Vec::new();
    let mut topo = None;
    let mut b = lo.bytes;
    loop {
        let bytes = b - b % es;
        if bytes > 0 {
            let mut c = lo.clone();
            c.bytes = bytes;
            let p = plan(&c)?;
            rows.push(row(&p));
            topo.get_or_insert(p.topology);
        }
        match b.checked_mul(factor) {
            Some(n) if n <= hi => b = n,
            _ => break,
        }
    }
    match topo {
        Some(t) => print_report(&lo, &t, &rows, format),
        None => Ok(()),
    }
}
