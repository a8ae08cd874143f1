//! The modelled [`Timeline`] as a Chrome / Perfetto trace: the JSON
//! trace-event format ("Trace Event Format", Google, the format
//! `chrome://tracing` and <https://ui.perfetto.dev> open), so the steps of
//! the Gantt can be browsed, zoomed and measured in Perfetto's UI.
//!
//! Layout (all times `ts` / `dur` in µs from the collective's start, as the
//! format defines them):
//! - **one process per rank** (`pid` = rank, named `rank r · <device>`):
//!   every transfer the rank sends is an async slice (`ph: "b"` / `"e"`,
//!   category `send`) from its start to the arrival of its last byte, and
//!   every reduce it does on received data an async slice (category
//!   `reduce`) from that arrival to the end of the reduce. Async slices,
//!   because one rank's transfers overlap in time (a mesh step sends to
//!   every peer at once), which complete (`"X"`) slices on one thread
//!   may not;
//! - **one process for the schedule** (`pid` = [`SCHEDULE_PID`]): one async
//!   slice per step, from its start to its end, with the step's most
//!   contended link in its arguments;
//! - **one process for the links** (`pid` = [`LINKS_PID`]): one counter
//!   track per link direction (`ph: "C"`, named `HCCS NPU0→NPU1`) whose
//!   value is the number of flows on it, from the timeline's busy
//!   intervals (a link's load over time).
//!
//! With buffer loops (`loops > 1`) the trace is the first loop, as the
//! Timeline is; `otherData` says how many loops the whole collective runs.

use crate::engine::cost::Timeline;
use crate::engine::schedule::{Schedule, TransferKind};
use crate::engine::topology::Topology;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// `pid` of the schedule's step track (above any rank count the engine
/// accepts).
pub const SCHEDULE_PID: usize = 1_000_000;
/// `pid` of the link counter tracks.
pub const LINKS_PID: usize = 1_000_001;

/// The trace of `timeline`, the modelled run of `schedule` on `topo` (rank
/// `r` on device `r`), as a trace-event JSON object (`traceEvents`,
/// `displayTimeUnit`, `otherData`). Serialise it with `to_string`.
///
/// Transfers whose step or index is outside `schedule` (a timeline of
/// another schedule) are left out rather than guessed.
pub fn chrome_trace(schedule: &Schedule, timeline: &Timeline, topo: &Topology) -> Value {
    let mut events: Vec<Value> = Vec::new();
    let meta = |pid: usize, name: String, sort: usize| {
        [
            json!({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}),
            json!({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": sort}}),
        ]
    };
    for r in 0..schedule.ranks {
        let device = topo.devices.get(r).map_or("?", |d| d.label.as_str());
        events.extend(meta(r, format!("rank {r} · {device}"), r));
    }
    events.extend(meta(SCHEDULE_PID, "schedule steps".into(), schedule.ranks));
    events.extend(meta(LINKS_PID, "links (flows)".into(), schedule.ranks + 1));

    for (i, s) in timeline.steps.iter().enumerate() {
        let args = json!({"step": i, "max_link_sharing": s.max_link_sharing});
        let name = format!("step {i}");
        events.push(
            json!({"ph": "b", "cat": "step", "id": i, "pid": SCHEDULE_PID, "tid": 0,
            "name": name, "ts": s.start_us, "args": args}),
        );
        events.push(
            json!({"ph": "e", "cat": "step", "id": i, "pid": SCHEDULE_PID, "tid": 0,
            "name": name, "ts": s.end_us}),
        );
    }

    let link_name = |link: usize, forward: bool| -> String {
        match topo.links.get(link) {
            Some(l) => {
                let (a, b) = if forward { (l.a, l.b) } else { (l.b, l.a) };
                format!(
                    "{} {}→{}",
                    l.kind.title(),
                    topo.node_label(a),
                    topo.node_label(b)
                )
            }
            None => "local".into(),
        }
    };
    for (k, t) in timeline.transfers.iter().enumerate() {
        let Some(tr) = schedule
            .steps
            .get(t.step)
            .and_then(|s| s.transfers.get(t.index))
        else {
            continue;
        };
        let route: Vec<String> = timeline
            .routes
            .get(t.route)
            .map(|r| {
                r.hops
                    .iter()
                    .map(|h| link_name(h.link, h.forward))
                    .collect()
            })
            .unwrap_or_default();
        let chunks = if tr.count == 1 {
            format!("chunk {}", tr.first)
        } else {
            format!("chunks {}..{}", tr.first, tr.first + tr.count)
        };
        let reduce = tr.kind == TransferKind::Reduce;
        let name = format!("{chunks} → rank {}", tr.dst);
        let args = json!({
            "step": t.step, "src": tr.src, "dst": tr.dst, "bytes": t.bytes,
            "first_chunk": tr.first, "chunks": tr.count,
            "kind": if reduce { "reduce" } else { "copy" }, "route": route,
        });
        events.push(
            json!({"ph": "b", "cat": "send", "id": k, "pid": tr.src, "tid": tr.src,
            "name": name, "ts": t.start_us, "args": args}),
        );
        events.push(
            json!({"ph": "e", "cat": "send", "id": k, "pid": tr.src, "tid": tr.src,
            "name": name, "ts": t.end_us}),
        );
        if t.done_us > t.end_us {
            let name = format!("reduce {chunks} from rank {}", tr.src);
            events.push(
                json!({"ph": "b", "cat": "reduce", "id": k, "pid": tr.dst, "tid": tr.dst,
                "name": name, "ts": t.end_us, "args": {"step": t.step, "bytes": t.bytes}}),
            );
            events.push(
                json!({"ph": "e", "cat": "reduce", "id": k, "pid": tr.dst, "tid": tr.dst,
                "name": name, "ts": t.done_us}),
            );
        }
    }

    // A link direction's load: +flows at each busy interval's start,
    // -flows at its end, summed in time order (intervals of pipelined steps
    // may overlap).
    let mut deltas: BTreeMap<(usize, bool), Vec<(f64, i64)>> = BTreeMap::new();
    for b in &timeline.link_busy {
        let d = deltas.entry((b.link, b.forward)).or_default();
        d.push((b.start_us, b.flows as i64));
        d.push((b.end_us, -(b.flows as i64)));
    }
    for ((link, forward), mut d) in deltas {
        // Ends before starts at the same instant: back-to-back intervals do
        // not add up.
        d.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let name = link_name(link, forward);
        let mut flows = 0i64;
        let mut i = 0;
        while i < d.len() {
            let ts = d[i].0;
            while i < d.len() && d[i].0 == ts {
                flows += d[i].1;
                i += 1;
            }
            events.push(json!({"ph": "C", "pid": LINKS_PID, "tid": 0, "name": name,
                "ts": ts, "args": {"flows": flows.max(0)}}));
        }
    }

    json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "source": "ccl-playground: a model, not a measurement",
            "algorithm": schedule.algorithm,
            "primitive": schedule.primitive.name(),
            "ranks": schedule.ranks,
            "topology": topo.name,
            "loops": timeline.loops,
            "loop_bytes": timeline.loop_bytes,
        },
    })
}
