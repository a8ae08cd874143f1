//! The topology as SVG: devices on a circle, every link, and the current
//! step's transfers as directed lanes with chunk tokens ("c3") moving from
//! sender to receiver.

use super::colors;
use super::format;
use super::plan::Plan;
use crate::engine::schedule::TransferKind;
use std::rc::Rc;
use yew::prelude::*;

const W: f64 = 440.0;
const H: f64 = 440.0;
const CX: f64 = 220.0;
const CY: f64 = 220.0;
const R: f64 = 176.0;
const NODE_R: f64 = 31.0;
/// Offset of a direction's lane from the link's centre line, px.
const LANE: f64 = 4.5;

/// Props of [`TopologyView`].
#[derive(Properties, PartialEq)]
pub struct TopologyProps {
    /// The plan shown.
    pub plan: Rc<Plan>,
    /// Current step, 1-based (0 = before the first step: nothing moves).
    pub step: usize,
    /// Progress of the current step's transfers, 0..=1.
    pub t: f64,
}

/// Position of device `i` of `n` on the circle (device 0 at the top, clockwise).
pub fn position(i: usize, n: usize) -> (f64, f64) {
    let a = -std::f64::consts::FRAC_PI_2 + i as f64 * std::f64::consts::TAU / n.max(1) as f64;
    (CX + R * a.cos(), CY + R * a.sin())
}

/// The SVG of the topology and the current step.
#[function_component(TopologyView)]
pub fn topology_view(p: &TopologyProps) -> Html {
    let plan = &p.plan;
    let topo = &plan.topology;
    let n_dev = topo.devices.len();
    let ranks = plan.config.ranks;
    // Devices on the circle; switches (NVSwitch, PCIe bridges, RoCE fabric)
    // in a row across the centre.
    let n_sw = topo.nodes() - n_dev;
    let pos: Vec<(f64, f64)> = (0..topo.nodes())
        .map(|i| {
            if i < n_dev {
                position(i, n_dev)
            } else {
                let k = (i - n_dev) as f64;
                (CX + (k - (n_sw as f64 - 1.0) / 2.0) * 90.0, CY)
            }
        })
        .collect();
    let step = (p.step > 0 && p.step <= plan.steps()).then(|| &plan.schedule.steps[p.step - 1]);
    let mut busy = vec![false; topo.links.len()];
    if let Some(s) = step {
        for t in &s.transfers {
            if let Some(l) = topo.link_between(t.src, t.dst) {
                busy[l] = true;
            }
        }
    }
    let links = topo.links.iter().enumerate().map(|(i, l)| {
        let (a, b) = (pos[l.a], pos[l.b]);
        let active = l.a < ranks && l.b < ranks;
        let class = classes!("link", active.then_some("active"), busy[i].then_some("busy"));
        html! {
            <line class={class} x1={f(a.0)} y1={f(a.1)} x2={f(b.0)} y2={f(b.1)}>
                <title>{format!("{} {}–{}: {} GB/s per direction, α {} µs", l.kind.title(), topo.node_label(l.a), topo.node_label(l.b), l.bandwidth_gbps, l.latency_us)}</title>
            </line>
        }
    });
    // Lanes and tokens of the current step.
    let t = p.t.clamp(0.0, 1.0);
    let ease = t * t * (3.0 - 2.0 * t);
    let mut lanes = Vec::new();
    let mut tokens = Vec::new();
    if let Some(s) = step {
        for (ti, tr) in s.transfers.iter().enumerate() {
            let (a, b) = (pos[tr.src], pos[tr.dst]);
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (ux, uy) = (dx / len, dy / len);
            let (nx, ny) = (-uy * LANE, ux * LANE);
            let start = (
                a.0 + ux * (NODE_R + 2.0) + nx,
                a.1 + uy * (NODE_R + 2.0) + ny,
            );
            let end = (
                b.0 - ux * (NODE_R + 5.0) + nx,
                b.1 - uy * (NODE_R + 5.0) + ny,
            );
            let (colour, marker) = match tr.kind {
                TransferKind::Copy => (colors::COPY, "url(#arrow-copy)"),
                TransferKind::Reduce => (colors::REDUCE, "url(#arrow-reduce)"),
            };
            lanes.push(html! {
                <line class="lane" key={format!("lane{ti}")} x1={f(start.0)} y1={f(start.1)} x2={f(end.0)} y2={f(end.1)}
                    stroke={colour} marker-end={marker} />
            });
            // Token: travels the lane; rests next to the receiver when done.
            let travel = (end.0 - start.0, end.1 - start.1);
            let (tx, ty) = (
                start.0 + travel.0 * (0.12 + 0.76 * ease),
                start.1 + travel.1 * (0.12 + 0.76 * ease),
            );
            let set = &plan.verified.trace[p.step - 1][tr.src][tr.first];
            let (fill, text) =
                colors::cell(set, ranks).unwrap_or_else(|| ("#cccccc".into(), "#222"));
            let label = format::chunks(tr.first, tr.count);
            let w = 8.0 + 6.2 * label.chars().count() as f64;
            tokens.push(html! {
                <g class="token" key={format!("tok{ti}")} transform={format!("translate({:.1},{:.1})", tx, ty)}>
                    <rect x={f(-w / 2.0)} y="-8" width={f(w)} height="16" rx="4" fill={fill} stroke={colour} stroke-width="1.5" />
                    <text y="4" text-anchor="middle" fill={text}>{label}</text>
                </g>
            });
        }
    }
    let nodes = topo.devices.iter().enumerate().map(|(i, d)| {
        let (x, y) = pos[i];
        let active = i < ranks;
        let involved = step.is_some_and(|s| s.transfers.iter().any(|t| t.src == i || t.dst == i));
        let class = classes!("node", active.then_some("active"), (!active).then_some("idle"), involved.then_some("involved"));
        html! {
            <g class={class} transform={format!("translate({x:.1},{y:.1})")}>
                <circle r={f(NODE_R)} stroke={if active { colors::rank(i) } else { "#c3c7cf" }} />
                <text class="node-label" y="-1" text-anchor="middle">{d.label.clone()}</text>
                <text class="node-sub" y="12" text-anchor="middle">{ if active { format!("rank {i}") } else { "idle".to_string() } }</text>
                <title>{ if active { format!("{}: rank {i}", d.label) } else { format!("{}: not in this run (ranks = {ranks})", d.label) } }</title>
            </g>
        }
    });
    let switches = topo.switches.iter().enumerate().map(|(k, sw)| {
        let (x, y) = pos[n_dev + k];
        html! {
            <g class="node switch" transform={format!("translate({x:.1},{y:.1})")}>
                <rect x="-40" y="-14" width="80" height="28" rx="6" />
                <text class="node-label" y="4" text-anchor="middle">{sw.label.clone()}</text>
                <title>{format!("{}: a switch (hosts no rank)", sw.label)}</title>
            </g>
        }
    });
    let arrow = |id: &'static str, colour: &'static str| {
        html! {
            <marker id={id} viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse">
                <path d="M0,0 L10,5 L0,10 z" fill={colour} />
            </marker>
        }
    };
    let op_symbol = if plan.config.op.reduces() {
        plan.config.redop.symbol()
    } else {
        "—"
    };
    html! {
        <div class="topology-wrap">
        <svg id="topology" class="topology" viewBox={format!("0 0 {W} {H}")} role="img"
            aria-label={format!("{}: {} of {} devices active", topo.title, ranks, n_dev)}>
            <defs>
                {arrow("arrow-copy", colors::COPY)}
                {arrow("arrow-reduce", colors::REDUCE)}
            </defs>
            <g class="links">{ for links }</g>
            <g class="lanes">{ for lanes }</g>
            { for switches }
            { for nodes }
            <g class="tokens">{ for tokens }</g>
        </svg>
        <div class="topo-legend">
            <span><svg width="26" height="10"><line x1="1" y1="5" x2="20" y2="5" stroke={colors::COPY} stroke-width="2.5" marker-end="url(#arrow-copy)" /></svg>{"copy: the receiver stores the chunk"}</span>
            <span><svg width="26" height="10"><line x1="1" y1="5" x2="20" y2="5" stroke={colors::REDUCE} stroke-width="2.5" marker-end="url(#arrow-reduce)" /></svg>{format!("reduce: the receiver combines it into its own (op {op_symbol})")}</span>
            <span class="muted">{"token = chunk in flight, coloured by what it holds"}</span>
        </div>
        </div>
    }
}

fn f(v: f64) -> String {
    format!("{v:.1}")
}
