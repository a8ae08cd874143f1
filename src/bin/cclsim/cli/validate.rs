//! `cclsim validate` and `cclsim accuracy`: the accuracy tables on the
//! public logs, by the user's own path.

use super::*;

/// H100 logs the h100-8 preset is checked against (in `nccl-tests/`).
pub(super) const PRESET_LOGS: [&str; 2] = [
    "nccl_h100_1node_p5_allreduce_7.txt",
    "nccl_h100_1node_5colls_16.txt",
];

pub(super) fn validate(dir: &Path, rows: bool, summary: bool) -> Res<()> {
    use ccl_playground::engine::plan::validate::{self as v, Set};
    let mut lines = Vec::new();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for f in &folders {
        let mut files: Vec<PathBuf> = std::fs::read_dir(f)
            .map_err(|e| format!("cannot read directory {}: {e}", f.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        files.sort();
        let mut tables = Vec::new();
        for p in &files {
            let name = p
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            let Ok(text) = std::fs::read_to_string(p) else {
                continue;
            };
            if let Some(t) = v::set_table(&name, &text) {
                tables.push(t?);
            }
        }
        if tables.is_empty() {
            continue;
        }
        let name = f
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        lines.extend(v::check_set(&Set { name, tables })?);
    }
    for name in PRESET_LOGS {
        let p = dir.join("nccl-tests").join(name);
        if let Ok(log) = read_log(&p) {
            lines.extend(v::check_preset("h100-8", &log, name)?);
        }
    }
    if summary {
        print!("{}", v::render_summary(&lines));
        return Ok(());
    }
    let default = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"));
    let place = if dir == default {
        "tests/fixtures".to_string()
    } else {
        dir.display().to_string()
    };
    println!(
        "# Accuracy on the public logs in {place} (cclsim validate): |predicted / measured - 1| over sizes >= 1 KiB; \"in 80 % range\": measured values inside the prediction's range."
    );
    print!("{}", v::render(&lines));
    if rows {
        print!("{}", v::render_rows(&lines));
    }
    Ok(())
}

pub(super) fn accuracy(dir: &Path, ranks: usize, min_bytes: &str) -> Res<()> {
    use ccl_playground::engine::plan::holdout::holdout;
    let min = parse_bytes(min_bytes).map_err(|e| format!("--min-bytes {min_bytes:?}: {e}"))?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == "txt" || x == "log" || x == "json")
        })
        .collect();
    files.sort();
    let mut text = format!(
        "# Hold-out accuracy by the user's path: `cclsim fit` on the even-indexed sizes of each table, then `cclsim predict --profile P --algo auto` on each odd one (>= {}); |relative time error|\n",
        format_bytes(min)
    );
    text.push_str(&format!(
        "{:<46} {:<44} {:>4} {:>5} {:>8} {:>8}\n",
        "log", "table", "segs", "rows", "median%", "max%"
    ));
    let mut medians = Vec::new();
    let mut all = Vec::new();
    for f in &files {
        let name = f
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        // One unreadable file is reported; the others are still measured.
        let log = match read_log(f) {
            Ok(mut log) => {
                log.assume(Some(ranks), None);
                log
            }
            Err(e) => {
                println!("{name:<46} unreadable: {e}");
                continue;
            }
        };
        for t in &log.tables {
            if let Some(r) = &t.rejected {
                text.push_str(&format!(
                    "{:<46} {:<44} rejected: {}\n",
                    name,
                    t.label(),
                    r.chars().take(90).collect::<String>()
                ));
                continue;
            }
            // A log that does not name its collective: what its file
            // name says, as the user's `cclsim fit --op` would.
            let hint = [
                "all_reduce",
                "allreduce",
                "all_gather",
                "allgather",
                "reduce_scatter",
                "alltoall",
                "broadcast",
                "sendrecv",
            ]
            .into_iter()
            .find(|k| name.contains(k))
            .map(Collective::from_tool_name);
            match holdout(t, Some(ranks), hint.as_ref(), min) {
                Ok(h) if !h.rows.is_empty() => {
                    medians.push(h.median());
                    all.extend(h.errors());
                    text.push_str(&format!(
                        "{:<46} {:<44} {:>4} {:>5} {:>8.2} {:>8.2}{}\n",
                        name,
                        h.table,
                        h.segments,
                        h.rows.len(),
                        h.median() * 100.0,
                        h.max() * 100.0,
                        if h.beyond_limit > 0 {
                            format!(
                                "  ({} held-out rows above 16 GiB not predicted)",
                                h.beyond_limit
                            )
                        } else {
                            String::new()
                        }
                    ));
                }
                Ok(h) => text.push_str(&format!(
                    "{:<46} {:<44} no held-out rows >= {}\n",
                    name,
                    h.table,
                    format_bytes(min)
                )),
                Err(e) => text.push_str(&format!("{:<46} {:<44} {e}\n", name, t.label())),
            }
        }
    }
    medians.sort_by(f64::total_cmp);
    all.sort_by(f64::total_cmp);
    if !medians.is_empty() {
        let within = medians.iter().filter(|&&m| m <= 0.05).count();
        let within10 = medians.iter().filter(|&&m| m <= 0.10).count();
        text.push_str(&format!(
            "# {} tables: median of the table medians {:.2} %, median over all {} held-out rows {:.2} %; {} tables <= 5 %, {} <= 10 %; worst table median {:.2} %\n",
            medians.len(),
            medians[medians.len() / 2] * 100.0,
            all.len(),
            all[all.len() / 2] * 100.0,
            within,
            within10,
            medians[medians.len() - 1] * 100.0
        ));
    }
    // Built-in h100-8, no fit, ring AllReduce busbw vs measured.
    text.push_str("\n# Built-in h100-8 (no fit), ring AllReduce on 8 GPUs, busbw vs the measured 365-370 GB/s (NVIDIA/nccl issue 1455); default slices (auto), and unsliced\n");
    text.push_str(&format!(
        "{:>13} {:>12} {:>12} {:>10} {:>7} {:>12} {:>10}\n",
        "size(B)", "time(us)", "busbw(GB/s)", "vs 367.5", "slices", "unsliced bw", "vs 367.5"
    ));
    let topo = Topology::h100_8();
    let s =
        algorithm::build(Algorithm::Ring, Primitive::AllReduce, 8).map_err(|e| e.to_string())?;
    let mut b: u64 = 64 << 20;
    while b <= 16 << 30 {
        let e = cost::estimate_sliced(&s, &topo, b, DType::Fp32, Slices::Auto)
            .map_err(|e| e.to_string())?;
        let u = cost::estimate(&s, &topo, b, DType::Fp32).map_err(|e| e.to_string())?;
        text.push_str(&format!(
            "{:>13} {:>12.2} {:>12.2} {:>+9.2}% {:>7} {:>12.2} {:>+9.2}%\n",
            b,
            e.time_us,
            e.busbw_gbps,
            (e.busbw_gbps - 367.5) / 367.5 * 100.0,
            e.slicing.slices,
            u.busbw_gbps,
            (u.busbw_gbps - 367.5) / 367.5 * 100.0
        ));
        b *= 2;
    }
    out(&text)
}
