//! `cclsim fit`: a profile from one or several logs, and the fitted
//! library model's corrections.

use super::*;

pub(super) fn read_log(p: &Path) -> Res<formats::Log> {
    let text = read_capped(p, formats::MAX_LOG_BYTES, "log")?;
    formats::parse_log(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// `--op` of `fit`: a collective in the one vocabulary
/// ([`Primitive::from_name`]: ours and nccl-tests' names), or
/// `hypercube` (nccl-tests' `hypercube_perf`).
pub(super) fn op_collective(op: &str) -> Res<Collective> {
    match Collective::from_tool_name(op) {
        Collective::Other(_) => Err(format!(
            "--op {op:?}: expected one of {} (nccl-tests' all_reduce, all_gather, reduce_scatter, ... too), or hypercube",
            Primitive::ALL.map(|p| p.name()).join(", ")
        )),
        c => Ok(c),
    }
}

pub(super) fn fit(
    logs: &[PathBuf],
    out: Option<&Path>,
    ranks: Option<usize>,
    op: Option<&str>,
    json: bool,
) -> Res<()> {
    let coll = op.map(op_collective).transpose()?;
    let mut read = Vec::new();
    for l in logs {
        let name = l
            .file_name()
            .map_or("log".to_string(), |n| n.to_string_lossy().into_owned());
        let mut parsed = read_log(l)?;
        // What the log does not print, the flags give: OSU's per-rank
        // sizes and busbw-only tables convert once they are known.
        parsed.assume(ranks, coll.as_ref());
        read.push((parsed, name));
    }
    let log = logs.first().ok_or("give at least one log")?;
    let parsed = read[0].0.clone();
    let p = Profile::fit_logs(&read, coll.as_ref(), ranks)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let text = serde_json::to_string_pretty(&p).map_err(|e| e.to_string())?;
    if let Some(out) = out {
        std::fs::write(out, &text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    }
    if json {
        println!("{text}");
        return Ok(());
    }
    for t in &parsed.tables {
        if let Some(r) = &t.rejected {
            println!("# skipped {}: {r}", t.label());
        }
    }
    if let Some(t) = parsed
        .tables
        .iter()
        .find(|t| p.source.ends_with(&format!("(table at line {})", t.line)))
    {
        for n in &t.notes {
            println!("# note: {n}");
        }
    }
    println!("# {}", p.describe());
    if let Some(c) = &p.physical {
        let hw = &c.hardware;
        println!(
            "# library model (NCCL's tuning model, corrections {}): {} node(s) of {} × {} ({} GB/s in the node), {} NIC(s) of {} GB/s per node",
            c.basis,
            c.measured.iter().map(|m| m.nodes).max().unwrap_or(1),
            hw.gpus_per_node,
            hw.accelerator,
            hw.gpu_gbps,
            hw.nics_per_node,
            hw.nic_gbps
        );
        let names: Vec<String> = ccl_playground::engine::predict::model::Param::ALL
            .iter()
            .zip(c.fitted.params())
            .map(|(q, v)| format!("{} {v:+.2}", q.name()))
            .collect();
        println!(
            "# corrections (ln of NCCL's figure; 0 = NCCL's own): {}",
            names.join(", ")
        );
    }
    for (k, s) in p.segments.iter().enumerate() {
        println!(
            "# segment {k}: {}..{}: α {:.2} µs, algbw {:.2} GB/s",
            s.first_bytes, s.last_bytes, s.alpha_us, s.algbw_gbps
        );
    }
    println!(
        "# per link (ring): α {:.3} µs per step, {:.2} GB/s",
        p.link_alpha_us, p.busbw_gbps
    );
    println!(
        "#{:>5} {:>13} {:>12} {:>12} {:>8} {:>5}",
        "line", "size", "measured", "fitted", "error", "used"
    );
    println!(
        "#{:>5} {:>13} {:>12} {:>12} {:>8} {:>5}",
        "", "(B)", "(us)", "(us)", "(%)", ""
    );
    for r in &p.rows {
        println!(
            "{:>6} {:>13} {:>12.2} {:>12.2} {:>+8.2} {:>5}",
            r.line,
            r.bytes,
            r.measured_us,
            r.fitted_us,
            r.rel_err * 100.0,
            if r.used { "yes" } else { "no" }
        );
    }
    Ok(())
}
