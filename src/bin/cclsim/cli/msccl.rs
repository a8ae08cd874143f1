//! `cclsim msccl` and `cclsim msccl-export`: MSCCL XML and MSCCL++ plans in
//! and out.

use super::*;

/// Most bytes of an MSCCL file.
pub(super) const MAX_MSCCL_FILE_BYTES: u64 = 64 << 20;

pub(super) fn msccl_cmd(
    file: &Path,
    topo: Option<&str>,
    bytes: &str,
    dtype: &str,
    json: bool,
) -> Res<()> {
    use ccl_playground::engine::cost::Slices;
    use ccl_playground::engine::formats::msccl;
    use ccl_playground::engine::plan;
    use ccl_playground::engine::verify::verify;
    let text = read_capped(file, MAX_MSCCL_FILE_BYTES as usize, "MSCCL file")?;
    let imp = msccl::import(&text).map_err(|e| format!("msccl {}: {e}", file.display()))?;
    let s = &imp.schedule;
    verify(s).map_err(|e| format!("msccl {}: {}", file.display(), imp.explain(&e)))?;
    let dtype = DType::from_name(&dtype.to_ascii_lowercase())
        .ok_or_else(|| format!("--dtype {dtype:?}: expected fp32, fp16, bf16, int32 or int8"))?;
    let b = parse_bytes(bytes).map_err(|e| format!("--bytes {bytes:?}: {e}"))?;
    let topo_name = match topo {
        Some(t) => t.to_string(),
        None if s.ranks <= 8 => "h100-8".into(),
        None => format!("910b-{}x8", s.ranks.div_ceil(8).max(2)),
    };
    let machine = Topology::preset(&topo_name).map_err(|e| format!("--topo {topo_name:?}: {e}"))?;
    // The file's data moves with its protocol (LL: packets with flags).
    let wire = msccl::protocol_topology(&machine, imp.protocol);
    let (e, method, _) = plan::estimate(s, &wire, b, dtype, Slices::Auto)
        .map_err(|e| format!("--topo {topo_name:?}: {e}"))?;
    // The machine's own choice for the same call, for comparison.
    let q = format!(
        "v=1&op={}&algo=auto&ranks={}&topo={}&bytes={b}&dtype={}",
        s.primitive.name(),
        s.ranks,
        topo_name,
        dtype.name()
    );
    let (cfg, errs) = Config::from_query(&q);
    let auto = if errs.iter().any(|x| !x.is_notice()) {
        None
    } else {
        Plan::headline(&cfg).ok()
    };
    let net = s.network_transfer_count();
    let local = s.transfer_count() - net;
    let p = &imp.program;
    let in_range = p.bytes_range.map(|(lo, hi)| lo <= b && b <= hi);
    if json {
        let v = serde_json::json!({
            "name": p.name, "coll": p.coll, "proto": p.proto, "ngpus": p.ngpus,
            "nchannels": p.nchannels, "nchunksperloop": p.nchunksperloop,
            "format": match imp.format { msccl::Format::Xml => "msccl-xml", msccl::Format::MscclppPlan => "mscclpp-plan" },
            "thread_blocks": imp.thread_blocks, "xml_steps": imp.xml_steps,
            "verified": true, "primitive": s.primitive.name(), "chunks": s.chunks,
            "chunk_factor": imp.chunk_factor, "scratch_chunks": s.scratch,
            "steps": s.steps.len(), "transfers": net, "local_transfers": local,
            "granule_elems": s.granule(),
            "topo": topo_name, "bytes": b, "dtype": dtype.name(),
            "time_us": e.time_us, "algbw_gbps": e.algbw_gbps, "busbw_gbps": e.busbw_gbps,
            "method": method.name(),
            "bytes_range": p.bytes_range, "in_bytes_range": in_range,
            "auto": auto.as_ref().map(|a| serde_json::json!({"algorithm": a.algorithm.name(), "time_us": a.estimate.time_us})),
            "notes": imp.notes,
        });
        return out(&format!("{v}\n"));
    }
    let mut t = String::new();
    let (kind, steps) = match imp.format {
        msccl::Format::Xml => ("", "steps in the file"),
        msccl::Format::MscclppPlan => ("MSCCL++ plan, ", "ops in the plan"),
    };
    t.push_str(&format!(
        "{} ({}, {kind}{} on {} GPUs, proto {}, {} channels, {} thread blocks, {} {steps})\n",
        if p.name.is_empty() {
            "(unnamed)"
        } else {
            &p.name
        },
        file.display(),
        p.coll,
        p.ngpus,
        p.proto,
        p.nchannels,
        imp.thread_blocks,
        imp.xml_steps
    ));
    t.push_str(&format!(
        "schedule: {} on {} ranks, {} chunks ({} per MSCCL chunk) + {} scratch, {} steps, {} transfers + {} local copies/reduces\n",
        s.primitive.title(),
        s.ranks,
        s.chunks,
        imp.chunk_factor,
        s.scratch,
        s.steps.len(),
        net,
        local
    ));
    t.push_str(&format!(
        "verified: every output chunk holds what {} requires\n",
        s.primitive.title()
    ));
    t.push_str(&format!(
        "predicted on {topo_name}{} at {} {}: {:.2} us, algbw {:.2} GB/s, busbw {:.2} GB/s ({})\n",
        if imp.protocol == msccl::Protocol::Simple {
            String::new()
        } else {
            format!(" with {}", imp.protocol.name())
        },
        format_bytes(b),
        dtype.name(),
        e.time_us,
        e.algbw_gbps,
        e.busbw_gbps,
        method.name()
    ));
    if let Some(a) = &auto {
        t.push_str(&format!(
            "the machine's own choice (auto): {} {:.2} us\n",
            a.algorithm.name(),
            a.estimate.time_us
        ));
    }
    if let (Some(false), Some((lo, hi))) = (in_range, p.bytes_range) {
        let who = match imp.format {
            msccl::Format::Xml => "the MSCCL runtime would not pick it",
            msccl::Format::MscclppPlan => "the MSCCL++ executor refuses it",
        };
        t.push_str(&format!(
            "note: the file is for {lo}..={hi} bytes; {who} at {b}\n"
        ));
    }
    for n in &imp.notes {
        t.push_str(&format!("note: {n}\n"));
    }
    out(&t)
}

pub(super) fn msccl_export_cmd(m: &Machine, bytes: &str) -> Res<()> {
    use ccl_playground::engine::formats::msccl;
    let c = config(m, bytes, "--bytes")?;
    let p = Plan::new(&c).map_err(|e| e.to_string())?;
    // Above the drawn ranks a large schedule is streamed, never held.
    let s = p.schedule.as_ref().ok_or_else(|| {
        format!(
            "{} ranks: MSCCL export takes 1..=64 (the schedule of {} on {} ranks is {} steps, streamed through the estimate, not held)",
            c.ranks, p.algorithm, c.ranks, p.schedule_steps
        )
    })?;
    let xml = msccl::export(s).map_err(|e| e.to_string())?;
    out(&xml)
}
