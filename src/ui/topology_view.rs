//! The topology as SVG ([`Layout`]: a circle for one server, HCCS groups
//! for 910a-8, server boxes around the RoCE fabric, one box per server when
//! there are many), every link with its bandwidth and current load on
//! hover, and the current step's transfers as directed lanes with chunk
//! tokens moving from sender to receiver.

use super::colors;
use super::deferred::{use_drawn_pieces, Piece, Sliced};
use super::format::{self, coord as f};
use super::motion::use_progress;
use super::term::Term;
use super::topology_layout::{along, trim, BoxName, GroupBox, Layout};
use crate::engine::plan::Plan;
use crate::engine::schedule::{Step, Transfer, TransferKind};
use crate::engine::topology::{Device, LinkKind, Switch, Topology, ROCE_FABRIC_LABEL};
use crate::t;
use std::rc::Rc;
use yew::prelude::*;

/// Offset of a direction's lane from the link's centre line, px.
const LANE: f64 = 4.5;
/// Most transfers of one step drawn as lanes and tokens (more: the busy
/// links are highlighted instead).
pub const MAX_DRAWN_TRANSFERS: usize = 64;
/// Servers of a collapsed drawing (one box each) drawn per event-loop
/// task: at 1 024 servers (8 192 ranks) the whole drawing, 9 232 SVG
/// elements, in one task took 140–230 ms, over the page's bound of 100 ms
/// a task.
const SERVERS_PER_TASK: usize = 128;

/// Props of [`TopologyView`].
#[derive(Properties, PartialEq)]
pub struct TopologyProps {
    /// The plan shown.
    pub plan: Rc<Plan>,
    /// Current step, 1-based (0 = before the first step: nothing moves).
    pub step: usize,
    /// A lesson's highlighted link: the route between two ranks.
    #[prop_or_default]
    pub look_link: Option<(usize, usize)>,
}

/// Load of one link direction: flows, busy µs.
#[derive(Clone, Copy, Default, PartialEq)]
struct Load {
    flows: usize,
    busy_us: f64,
}

fn kind_class(k: LinkKind) -> &'static str {
    match k {
        LinkKind::Hccs => "hccs",
        LinkKind::Pcie => "pcie",
        LinkKind::Roce => "roce",
        LinkKind::Nvlink => "nvlink",
    }
}

/// Did the plan record its links' load? A large plan's simulation keeps
/// its steps but not every link interval; its links then say the load is
/// not known rather than show zero flows.
fn link_level(plan: &Plan) -> bool {
    !plan.estimate.timeline.link_busy.is_empty() || !plan.link_loads.is_empty()
}

/// Per link, `[forward, backward]` load in step `step` (1-based) or, for
/// step 0, over one whole loop ([`Plan::link_loads`]: all a model-only
/// plan carries to the page).
fn loads(plan: &Plan, step: usize) -> Vec<[Load; 2]> {
    if step == 0 {
        let load = |l: &crate::engine::cost::LinkLoad| Load {
            flows: l.flows,
            busy_us: l.busy_us,
        };
        let mut v: Vec<[Load; 2]> = plan
            .link_loads
            .iter()
            .map(|[f, b]| [load(f), load(b)])
            .collect();
        v.resize(plan.topology.links.len(), [Load::default(); 2]);
        return v;
    }
    let mut v = vec![[Load::default(); 2]; plan.topology.links.len()];
    for b in &plan.estimate.timeline.link_busy {
        if step > 0 && b.step + 1 != step {
            continue;
        }
        if let Some(l) = v.get_mut(b.link) {
            let d = &mut l[usize::from(!b.forward)];
            d.flows = if step > 0 {
                d.flows + b.flows
            } else {
                d.flows.max(b.flows)
            };
            d.busy_us += b.end_us - b.start_us;
        }
    }
    v
}

fn load_text(topo: &Topology, link: usize, l: &[Load; 2], window_us: f64, scope: &str) -> String {
    let lk = &topo.links[link];
    let dir = |d: &Load, a: usize, b: usize| {
        let (from, to) = (
            switch_label(topo.node_label(a)),
            switch_label(topo.node_label(b)),
        );
        if d.flows == 0 {
            t!("topo-dir-idle", from = from, to = to)
        } else {
            let percent = if window_us > 0.0 {
                d.busy_us / window_us * 100.0
            } else {
                0.0
            };
            t!(
                "topo-dir-busy",
                from = from,
                to = to,
                flows = d.flows,
                busy = format::us(d.busy_us),
                window = format::us(window_us),
                percent = format!("{percent:.0}")
            )
        }
    };
    t!(
        "topo-link-load",
        link = link_head(topo, link),
        scope = scope.to_string(),
        there = dir(&l[0], lk.a, lk.b),
        back = dir(&l[1], lk.b, lk.a)
    )
}

/// A link's first tooltip line: its kind, ends, bandwidth and latency.
fn link_head(topo: &Topology, link: usize) -> String {
    let lk = &topo.links[link];
    t!(
        "topo-link-head",
        kind = lk.kind.title().to_string(),
        a = switch_label(topo.node_label(lk.a)),
        b = switch_label(topo.node_label(lk.b)),
        gbps = format::gbps(lk.bandwidth_gbps),
        us = format::us(lk.latency_us)
    )
}

/// One chunk token of the current step: its lane and looks.
#[derive(Clone, PartialEq)]
struct Token {
    /// The lane it moves along.
    pts: Vec<(f64, f64)>,
    /// Fill and text colour: what the chunk holds.
    fill: String,
    text: &'static str,
    /// Copy or reduce colour.
    stroke: &'static str,
    /// The chunks it carries, drawn as a label (up to 8 ranks; else a dot).
    label: Option<String>,
}

/// Props of [`Tokens`].
#[derive(Properties, PartialEq)]
struct TokensProps {
    tokens: Rc<Vec<Token>>,
}

/// The current step's tokens where they are now: the one part of the
/// drawing that changes every frame ([`use_progress`]).
#[function_component(Tokens)]
fn tokens(p: &TokensProps) -> Html {
    let t = use_progress().clamp(0.0, 1.0);
    let ease = t * t * (3.0 - 2.0 * t);
    let tokens = p.tokens.iter().enumerate().map(|(ti, tok)| {
        let (tx, ty) = along(&tok.pts, 0.12 + 0.76 * ease);
        match &tok.label {
            Some(label) => {
                let w = 8.0 + 6.2 * label.chars().count() as f64;
                html! {
                    <g class="token" key={format!("tok{ti}")} transform={format!("translate({},{})", f(tx), f(ty))}>
                        <rect x={f(-w / 2.0)} y="-8" width={f(w)} height="16" rx="4" fill={tok.fill.clone()} stroke={tok.stroke} stroke-width="1.5" />
                        <text y="4" text-anchor="middle" fill={tok.text}>{label.clone()}</text>
                    </g>
                }
            }
            None => html! {
                <circle class="token dot" key={format!("tok{ti}")} cx={f(tx)} cy={f(ty)} r="5"
                    fill={tok.fill.clone()} stroke={tok.stroke} stroke-width="1.5" />
            },
        }
    });
    html! { <g class="tokens">{ for tokens }</g> }
}

/// Each collapsed server box's RoCE ports (its links to the switch), in
/// link order, in one pass over the links (not one per box: 128 × 5 632
/// at 1 024 ranks).
fn ports_of(topo: &Topology, layout: &Layout) -> Vec<Vec<usize>> {
    let n_dev = topo.devices.len();
    let mut box_of = vec![usize::MAX; n_dev];
    for (bi, b) in layout.boxes.iter().enumerate() {
        for d in b.devices.clone().filter(|&d| d < n_dev) {
            box_of[d] = bi;
        }
    }
    let mut ports: Vec<Vec<usize>> = vec![Vec::new(); layout.boxes.len()];
    for (i, l) in topo.links.iter().enumerate() {
        for (d, other) in [(l.a, l.b), (l.b, l.a)] {
            if let (Some(&bi), false) = (box_of.get(d), topo.is_device(other)) {
                if let Some(v) = ports.get_mut(bi) {
                    if v.last() != Some(&i) {
                        v.push(i);
                    }
                }
            }
        }
    }
    ports
}

/// Which layer of a collapsed drawing a [`ServerPiece`] draws.
#[derive(Clone, Copy, PartialEq)]
enum Layer {
    /// The servers' trunks to the fabric bar (under the boxes).
    Trunks,
    /// The server boxes.
    Boxes,
}

/// Props of [`ServerPiece`].
#[derive(Properties, PartialEq)]
struct ServerPieceProps {
    plan: Rc<Plan>,
    layout: Rc<Layout>,
    /// Each box's RoCE ports ([`ports_of`]).
    ports: Rc<Vec<Vec<usize>>>,
    /// Per link, the load shown ([`loads`]).
    load: Rc<Vec<[Load; 2]>>,
    /// The length of the window the load is over, µs, and its words
    /// ("in step 3").
    window: Rc<(f64, String)>,
    /// The boxes drawn (indices into the layout's boxes).
    boxes: std::ops::Range<usize>,
    layer: Layer,
}

/// A piece of a collapsed drawing (more than
/// [`super::topology_layout::MAX_EXPANDED_SERVERS`] servers): the trunks or
/// the boxes of servers `boxes`, drawn in a task of their own
/// ([`SERVERS_PER_TASK`]).
#[function_component(ServerPiece)]
fn server_piece(p: &ServerPieceProps) -> Html {
    let plan = &p.plan;
    let topo = &plan.topology;
    let layout = &p.layout;
    let ranks = plan.config.ranks;
    let simulated = link_level(plan);
    let (window_us, scope) = (p.window.0, &p.window.1);
    let boxes = layout.boxes.get(p.boxes.clone()).unwrap_or_default();
    let items = boxes.iter().zip(p.boxes.clone()).map(|(b, bi)| {
        let active = b.devices.start < ranks;
        match p.layer {
            Layer::Trunks => trunk(plan, layout, &p.ports, &p.load, window_us, scope, simulated, bi),
            Layer::Boxes => {
                let (cx, cy) = b.rect.centre();
                let last = b.devices.end.min(ranks).saturating_sub(1);
                let sub = if !active {
                    t!("topo-idle")
                } else if b.devices.end <= ranks {
                    format!("r{}–{}", b.devices.start, b.devices.end - 1)
                } else {
                    format!("r{}–{last}", b.devices.start)
                };
                html! {
                    <g class={classes!("server-box", "collapsed", active.then_some("active"), (!active).then_some("idle"))}>
                        <rect x={f(b.rect.x)} y={f(b.rect.y)} width={f(b.rect.w)} height={f(b.rect.h)} rx="5" />
                        <text class="box-label" x={f(cx)} y={f(cy - 1.0)} text-anchor="middle">{b.name.code()}</text>
                        <text class="box-sub" x={f(cx)} y={f(cy + 10.0)} text-anchor="middle">{sub}</text>
                        <title>{box_title(b, ranks, topo.links.first().map_or(0.0, |l| l.bandwidth_gbps))}</title>
                    </g>
                }
            }
        }
    });
    html! { <>{ for items }</> }
}

/// A box's caption in the page's language: `server 3`, `node 3`, `HCCS
/// group 1 (NPU4–7)`.
fn box_caption(name: BoxName) -> String {
    match name {
        BoxName::Server(n) => t!("topo-box-server", n = n),
        BoxName::Node(n) => t!("topo-box-node", n = n),
        BoxName::HccsGroup(g) => t!("topo-box-group", g = g, a = 4 * g, b = 4 * g + 3),
    }
}

/// A collapsed box's tooltip: what it holds and its ranks in this run
/// (`gbps`: a 910B server's HCCS link bandwidth).
fn box_title(b: &GroupBox, ranks: usize, gbps: f64) -> String {
    let (a, z) = (b.devices.start, b.devices.end.saturating_sub(1));
    let run = if a < ranks {
        t!("topo-box-ranks", a = a, b = b.devices.end.min(ranks) - 1)
    } else {
        t!("topo-box-idle")
    };
    match b.name {
        BoxName::Node(n) => t!(
            "topo-box-node-title",
            n = n,
            gpus = b.devices.len(),
            a = a,
            b = z,
            run = run
        ),
        BoxName::Server(n) | BoxName::HccsGroup(n) => t!(
            "topo-box-server-title",
            n = n,
            a = a,
            b = z,
            gbps = format::gbps(gbps),
            run = run
        ),
    }
}

/// A switch's label in the page's language: the engine's RoCE fabric
/// translated, a custom topology's own label as the user wrote it.
fn switch_label(label: &str) -> String {
    if label == ROCE_FABRIC_LABEL {
        t!("topo-switch-roce")
    } else {
        label.to_string()
    }
}

/// Collapsed server box `bi`'s trunk: its RoCE ports aggregated into one
/// line to the fabric bar, with their load. Trunks of the servers of one
/// column run side by side (offset by their distance from the fabric).
#[allow(clippy::too_many_arguments)]
fn trunk(
    plan: &Plan,
    layout: &Layout,
    ports_of: &[Vec<usize>],
    load: &[[Load; 2]],
    window_us: f64,
    scope: &str,
    simulated: bool,
    bi: usize,
) -> Html {
    let topo = &plan.topology;
    let ranks = plan.config.ranks;
    let (Some(b), Some(ports)) = (layout.boxes.get(bi), ports_of.get(bi)) else {
        return html! {};
    };
    let Some(&first) = ports.first() else {
        return html! {};
    };
    let top = layout.boxes.first().map_or(0.0, |b| b.rect.y);
    let cols = layout
        .boxes
        .iter()
        .take_while(|b| b.rect.y == top)
        .count()
        .max(1);
    let rows = layout.boxes.len().div_ceil(cols);
    let top_rows = rows.div_ceil(2);
    let row = bi / cols;
    let k = if row < top_rows {
        top_rows - 1 - row
    } else {
        row - top_rows
    };
    let dx = (k as f64 - (top_rows as f64 - 1.0) / 2.0) * 6.0;
    let bar = layout.bars.iter().flatten().next().copied();
    let (cx, cy) = b.rect.centre();
    let cx = cx + dx;
    let (y0, y1) = match bar {
        Some(bar) if cy < bar.y => (b.rect.y + b.rect.h, bar.y),
        Some(bar) => (b.rect.y, bar.y + bar.h),
        None => (cy, cy),
    };
    let (mut fl, mut busy_us, mut n_busy) = (0usize, 0.0f64, 0usize);
    for &i in ports {
        for d in load.get(i).into_iter().flatten() {
            fl += d.flows;
            busy_us = busy_us.max(d.busy_us);
            n_busy += usize::from(d.flows > 0);
        }
    }
    let lk = &topo.links[first];
    let active = b.devices.start < ranks;
    let load = if simulated {
        t!(
            "topo-trunk-load",
            scope = scope.to_string(),
            flows = fl,
            dirs = n_busy,
            busy = format::us(busy_us),
            window = format::us(window_us)
        )
    } else {
        t!("topo-trunk-unsimulated")
    };
    let title = t!(
        "topo-trunk-title",
        code = b.name.code(),
        fabric = t!("topo-switch-roce"),
        ports = ports.len(),
        gbps = format::gbps(lk.bandwidth_gbps),
        us = format::us(lk.latency_us),
        load = load
    );
    html! {
        <g class={classes!("link-g", "roce", active.then_some("active"), (fl > 0).then_some("busy"))}>
            <line class="link trunk" x1={f(cx)} y1={f(y0)} x2={f(cx)} y2={f(y1)} />
            <line class="link-hit" x1={f(cx)} y1={f(y0)} x2={f(cx)} y2={f(y1)} />
            <title>{title}</title>
        </g>
    }
}

/// What every layer of one drawing reads, gathered so that each layer's
/// function takes one argument rather than the same eight.
struct Scene<'a> {
    plan: &'a Rc<Plan>,
    layout: &'a Rc<Layout>,
    /// The measured machine's nodes (a fitted NCCL machine), not 910B
    /// servers: the note and the fabric bar speak of them.
    of_nodes: bool,
    /// The current step (`None` before the first step: nothing moves).
    step: Option<&'a Step>,
    /// Its number, 1-based ([`TopologyProps::step`]).
    step_no: usize,
    /// Per link, the load shown ([`loads`]).
    load: &'a Rc<Vec<[Load; 2]>>,
    /// The length of the window the load is over, µs, and its words
    /// ([`load_window`]).
    window: &'a Rc<(f64, String)>,
    /// A lesson's highlighted link ([`TopologyProps::look_link`]).
    look_link: Option<(usize, usize)>,
}

/// The SVG of the topology and the current step. The body holds the hooks
/// (the layout and a collapsed drawing's slicing are kept per topology)
/// and hands what they give to [`drawing`].
#[function_component(TopologyView)]
pub fn topology_view(p: &TopologyProps) -> Html {
    let _lang = super::lang::use_lang();
    let plan = &p.plan;
    let topo = &plan.topology;
    // Link indices shift when a link is down: key on the link count too.
    let layout = use_memo((topo.name.clone(), topo.links.len()), |_| Layout::of(topo));
    let step =
        (p.step > 0 && p.step <= plan.steps()).then(|| &plan.drawn_schedule().steps[p.step - 1]);
    let load = Rc::new(loads(plan, if step.is_some() { p.step } else { 0 }));
    let window = Rc::new(load_window(plan, p.step, step.is_some()));
    // A collapsed drawing's servers come [`SERVERS_PER_TASK`] a task, in
    // keyed pieces, so a slice appends; a new plan on the same topology
    // keeps what is drawn.
    let topo_key = (topo.name.clone(), topo.links.len());
    let ports = use_memo(topo_key.clone(), |_| {
        if layout.collapsed {
            ports_of(topo, &layout)
        } else {
            Vec::new()
        }
    });
    let sliced = use_memo((topo_key.clone(), layout.collapsed), |_| {
        Sliced::of(
            [if layout.collapsed {
                layout.boxes.len()
            } else {
                0
            }],
            SERVERS_PER_TASK,
        )
    });
    let pieces = use_drawn_pieces(topo_key, &sliced);
    let scene = Scene {
        plan,
        layout: &layout,
        // The measured machine's nodes (a fitted NCCL machine), not 910B servers.
        of_nodes: super::topology_layout::server_word(topo) == "node",
        step,
        step_no: p.step,
        load: &load,
        window: &window,
        look_link: p.look_link,
    };
    drawing(&scene, &ports, pieces)
}

/// The window the links' load is over, µs, and its words: the step shown,
/// else one loop or the whole run; nothing when the plan was not
/// simulated, as it then has no load to put in a window.
fn load_window(plan: &Plan, step_no: usize, stepping: bool) -> (f64, String) {
    let tl = &plan.estimate.timeline;
    let simulated = !tl.steps.is_empty();
    match (stepping, simulated) {
        (true, true) => {
            let s = &tl.steps[step_no - 1];
            (s.end_us - s.start_us, t!("topo-scope-step", step = step_no))
        }
        (false, true) => (
            plan.loop_us(),
            if plan.loops() > 1 {
                t!("topo-scope-loop", loops = plan.loops())
            } else {
                t!("topo-scope-run")
            },
        ),
        _ => (0.0, String::new()),
    }
}

/// The drawing: its layers in the order that keeps later ones on top
/// (ports and trunks under the server boxes, links over them, then
/// switches, lanes and devices), the moving tokens in an SVG of their own,
/// a note on what the drawing leaves out, and the legend.
fn drawing(s: &Scene, ports: &Rc<Vec<Vec<usize>>>, pieces: &[Piece]) -> Html {
    let (plan, layout) = (s.plan, s.layout);
    let topo = &plan.topology;
    let ranks = plan.config.ranks;
    let (under, links) = link_layers(s, ports, pieces);
    let too_many = s
        .step
        .is_some_and(|st| st.transfers.len() > MAX_DRAWN_TRANSFERS);
    let (lanes, tokens) = lanes_and_tokens(s, too_many);
    let boxes = server_boxes(s, ports, pieces);
    let nodes = device_nodes(s);
    let switches = topo
        .switches
        .iter()
        .enumerate()
        .map(|(k, sw)| switch_node(s, k, sw));
    let note = topo_note(s, too_many);
    let max_width = layout
        .multi_server
        .then(|| format!("max-width:{:.0}px", layout.w * 1.35));
    let view_box = format!("0 0 {} {}", f(layout.w), f(layout.h));
    html! {
        <div class={classes!("topology-wrap", layout.multi_server.then_some("wide"))}>
        // The tokens move every frame: they are a layer of their own (an
        // SVG with the same box and viewBox over the drawing), so a frame
        // repaints them, not the drawing's links, nodes and shadows.
        <div class={classes!("topo-layers", layout.multi_server.then_some("wide"))} style={max_width.clone()}>
        <svg id="topology" class={classes!("topology", layout.multi_server.then_some("wide"))}
            style={max_width} viewBox={view_box.clone()} role="img"
            data-layout={if layout.collapsed { "collapsed" } else if layout.multi_server { "servers" } else { "single" }}
            aria-label={t!("drawing-label", title = topo.name.clone(), devices = ranks, device = plan.library.device_word())}
            aria-describedby="drawing-text">
            <defs>
                {arrow_marker("arrow-copy", colors::COPY)}
                {arrow_marker("arrow-reduce", colors::REDUCE)}
            </defs>
            <g class="ports">{ for under }</g>
            <g class="boxes">{ boxes }</g>
            <g class="links">{ for links }</g>
            { for switches }
            <g class="lanes">{ for lanes }</g>
            { nodes.unwrap_or_default() }
        </svg>
        <svg class="topology-tokens" viewBox={view_box} aria-hidden="true" focusable="false">
            <Tokens tokens={Rc::new(tokens)} />
        </svg>
        </div>
        if let Some(n) = note {
            <p class="hint topo-note">{n}</p>
        }
        { legend(plan) }
        </div>
    }
}

/// The links in two layers: those under the server boxes (ports to a bar
/// switch, or a collapsed drawing's trunks) and those over them, failed
/// links last. A collapsed drawing has no links of its own to draw over
/// the boxes.
fn link_layers(s: &Scene, ports: &Rc<Vec<Vec<usize>>>, pieces: &[Piece]) -> (Vec<Html>, Vec<Html>) {
    if s.layout.collapsed {
        // One trunk per server under the boxes ([`ServerPiece`]).
        return (server_pieces(s, ports, pieces, Layer::Trunks), Vec::new());
    }
    let (under, mut links) = working_links(s);
    links.extend(down_links(s));
    (under, links)
}

/// A collapsed drawing's servers, one keyed [`ServerPiece`] per piece of
/// [`SERVERS_PER_TASK`], so that a new slice appends to what is drawn
/// rather than redrawing it.
fn server_pieces(
    s: &Scene,
    ports: &Rc<Vec<Vec<usize>>>,
    pieces: &[Piece],
    layer: Layer,
) -> Vec<Html> {
    pieces
        .iter()
        .enumerate()
        .map(|(k, piece)| {
            html! {
                <ServerPiece key={k} plan={s.plan.clone()} layout={s.layout.clone()} ports={ports.clone()}
                    load={s.load.clone()} window={s.window.clone()} boxes={piece.items.clone()} layer={layer} />
            }
        })
        .collect()
}

/// An expanded drawing's working links, split into those under the server
/// boxes and those over them. Each is classed by its kind, whether its
/// ends are in the run, whether it is busy or shared in the step shown and
/// whether a lesson points at it, so the page's style can tell them apart.
fn working_links(s: &Scene) -> (Vec<Html>, Vec<Html>) {
    let (layout, load) = (s.layout, s.load);
    let topo = &s.plan.topology;
    let (n_dev, ranks) = (topo.devices.len(), s.plan.config.ranks);
    let mut busy = vec![false; topo.links.len()];
    if s.step.is_some() {
        for (i, l) in load.iter().enumerate() {
            busy[i] = l[0].flows + l[1].flows > 0;
        }
    }
    let active_node = |i: usize| i >= n_dev || i < ranks;
    let looked: Vec<usize> = s
        .look_link
        .and_then(|(a, b)| topo.route(a, b).ok())
        .map(|r| r.hops.iter().map(|h| h.link).collect())
        .unwrap_or_default();
    let mut links: Vec<Html> = Vec::new();
    let mut under: Vec<Html> = Vec::new();
    for (i, l) in topo.links.iter().enumerate() {
        let (a, b) = layout.link_ends(topo, l.a, l.b);
        let active = active_node(l.a) && active_node(l.b);
        let shared = load[i][0].flows.max(load[i][1].flows) > 1 && s.step.is_some();
        let class = classes!(
            "link-g",
            kind_class(l.kind),
            active.then_some("active"),
            busy[i].then_some("busy"),
            shared.then_some("shared"),
            looked.contains(&i).then_some("lesson-look-link")
        );
        let target = if layout.under(topo, i) {
            &mut under
        } else {
            &mut links
        };
        target.push(html! {
            <g class={class}>
                <line class="link" x1={f(a.0)} y1={f(a.1)} x2={f(b.0)} y2={f(b.1)} />
                <line class="link-hit" x1={f(a.0)} y1={f(a.1)} x2={f(b.0)} y2={f(b.1)} />
                <title>{link_title(s, i)}</title>
            </g>
        });
    }
    (under, links)
}

/// A link's tooltip: its load each way when the plan recorded its links'
/// load ([`link_level`]), else its figures and that the load is not known.
fn link_title(s: &Scene, i: usize) -> String {
    let topo = &s.plan.topology;
    if link_level(s.plan) {
        load_text(topo, i, &s.load[i], s.window.0, &s.window.1)
    } else {
        t!("topo-link-unsimulated", link = link_head(topo, i))
    }
}

/// Failed links (`down=`): dashed red, with their own text, so that a link
/// taken out of the topology still shows where it was.
fn down_links(s: &Scene) -> Vec<Html> {
    let (topo, layout) = (&s.plan.topology, s.layout);
    topo.impairment
        .down
        .iter()
        .map(|l| {
            let (a, b) = layout.link_ends(topo, l.a, l.b);
            let text = t!(
                "topo-down-title",
                a = topo.node_label(l.a).to_string(),
                b = topo.node_label(l.b).to_string()
            );
            html! {
                <g class="link-g down" role="img" aria-label={text.clone()}>
                    <line class="link down" x1={f(a.0)} y1={f(a.1)} x2={f(b.0)} y2={f(b.1)} />
                    <line class="link-hit" x1={f(a.0)} y1={f(a.1)} x2={f(b.0)} y2={f(b.1)} />
                    <title>{text}</title>
                </g>
            }
        })
        .collect()
}

/// Lanes and tokens of the current step: the lanes and where each token
/// goes are made here, once per step; where the tokens are now is
/// [`Tokens`]'s, once per frame. A step with too many transfers, or a
/// collapsed drawing (no devices to run between), has none.
fn lanes_and_tokens(s: &Scene, too_many: bool) -> (Vec<Html>, Vec<Token>) {
    let (plan, layout) = (s.plan, s.layout);
    let ranks = plan.config.ranks;
    let mut lanes = Vec::new();
    let mut tokens = Vec::new();
    let (Some(st), Some(v), false) = (s.step, plan.verified.as_ref(), too_many || layout.collapsed)
    else {
        return (lanes, tokens);
    };
    for (ti, tr) in st.transfers.iter().enumerate() {
        let pts = lane_points(layout, &plan.topology, tr);
        let (colour, marker) = match tr.kind {
            TransferKind::Copy => (colors::COPY, "url(#arrow-copy)"),
            TransferKind::Reduce => (colors::REDUCE, "url(#arrow-reduce)"),
        };
        let d = pts
            .iter()
            .map(|q| format!("{},{}", f(q.0), f(q.1)))
            .collect::<Vec<_>>()
            .join(" ");
        lanes.push(html! {
            <polyline class="lane" key={format!("lane{ti}")} points={d} fill="none"
                stroke={colour} marker-end={marker} />
        });
        let set = &v.trace[s.step_no - 1][tr.src][tr.first];
        let (fill, text) = colors::cell(set, ranks).unwrap_or_else(|| ("#cccccc".into(), "#222"));
        tokens.push(Token {
            pts,
            fill,
            text,
            stroke: colour,
            label: (ranks <= 8).then(|| format::chunks(tr.first, tr.count)),
        });
    }
    (lanes, tokens)
}

/// The path a transfer's lane follows: sender to receiver, trimmed clear of
/// both circles; a straight lane is moved off the link's centre line
/// ([`LANE`]) so that the two directions of one link lie side by side.
fn lane_points(layout: &Layout, topo: &Topology, tr: &Transfer) -> Vec<(f64, f64)> {
    let r = layout.node_r;
    let mut pts = trim(&layout.path(topo, tr.src, tr.dst), r + 2.0, r + 5.0);
    if pts.len() == 2 {
        let (a, b) = (pts[0], pts[1]);
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        let (nx, ny) = (-dy / len * LANE, dx / len * LANE);
        pts = vec![(a.0 + nx, a.1 + ny), (b.0 + nx, b.1 + ny)];
    }
    pts
}

/// The server boxes: a collapsed drawing's in keyed pieces
/// ([`ServerPiece`]), else one captioned box per server or HCCS group,
/// idle when none of its devices is in the run.
fn server_boxes(s: &Scene, ports: &Rc<Vec<Vec<usize>>>, pieces: &[Piece]) -> Html {
    if s.layout.collapsed {
        return server_pieces(s, ports, pieces, Layer::Boxes)
            .into_iter()
            .collect();
    }
    let ranks = s.plan.config.ranks;
    s.layout
        .boxes
        .iter()
        .map(|b| {
            let active = b.devices.start < ranks;
            let caption_y = b.rect.y + 15.0;
            html! {
                <g class={classes!("server-box", active.then_some("active"), (!active).then_some("idle"))}>
                    <rect x={f(b.rect.x)} y={f(b.rect.y)} width={f(b.rect.w)} height={f(b.rect.h)} rx="10" />
                    <text class="box-label" x={f(b.rect.x + 10.0)} y={f(caption_y)}>{box_caption(b.name)}</text>
                </g>
            }
        })
        .collect()
}

/// The devices of an expanded drawing; a collapsed one draws its servers'
/// boxes instead.
fn device_nodes(s: &Scene) -> Option<Html> {
    (!s.layout.collapsed).then(|| {
        s.plan
            .topology
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| device_node(s, i, d))
            .collect::<Html>()
    })
}

/// Device `i`: a circle in its rank's colour, classed by whether it is in
/// the run, in the step's transfers and impaired, with a badge saying how
/// it is impaired. Many servers make the circles small, so they then hold
/// only the rank; one server's hold the device's name and its rank.
fn device_node(s: &Scene, i: usize, d: &Device) -> Html {
    let layout = s.layout;
    let ranks = s.plan.config.ranks;
    let (x, y) = layout.pos[i];
    let active = i < ranks;
    let involved = s
        .step
        .is_some_and(|st| st.transfers.iter().any(|t| t.src == i || t.dst == i));
    let class = classes!(
        "node",
        active.then_some("active"),
        (!active).then_some("idle"),
        involved.then_some("involved"),
        layout.multi_server.then_some("small")
    );
    let imp = &s.plan.topology.impairment;
    let (speed, late) = (imp.speed_of(i), imp.late_of(i));
    let degraded = active && (speed < 1.0 || late > 0.0);
    let class = classes!(class, degraded.then_some("slow"));
    let (tip, mark) = device_tip(d, i, ranks, speed, late);
    let badge = degraded.then(|| html! {
        <text class="slow-mark" y={f(-layout.node_r - 4.0)} text-anchor="middle">{mark.join(" ")}</text>
    });
    if layout.multi_server {
        html! {
            <g class={class} transform={format!("translate({},{})", f(x), f(y))}>
                <circle r={f(layout.node_r)} stroke={if active { colors::rank(i) } else { "#c3c7cf" }} />
                <text class="node-label" y="4" text-anchor="middle">{ if active { i.to_string() } else { "–".to_string() } }</text>
                {badge.clone().unwrap_or_default()}
                <title>{tip}</title>
            </g>
        }
    } else {
        html! {
            <g class={class} transform={format!("translate({},{})", f(x), f(y))}>
                <circle r={f(layout.node_r)} stroke={if active { colors::rank(i) } else { "#c3c7cf" }} />
                <text class="node-label" y="-1" text-anchor="middle">{d.label.clone()}</text>
                <text class="node-sub" y="12" text-anchor="middle">{ if active { format!("rank {i}") } else { t!("topo-idle") } }</text>
                {badge.unwrap_or_default()}
                <title>{tip}</title>
            </g>
        }
    }
}

/// Device `i`'s tooltip (its rank, or that it is not in this run) and its
/// badge's marks: how much slower or later an impaired rank runs, said on
/// hover and at a glance.
fn device_tip(d: &Device, i: usize, ranks: usize, speed: f64, late: f64) -> (String, Vec<String>) {
    let active = i < ranks;
    let mut tip = if active {
        format!("{}: rank {i}", d.label)
    } else {
        format!("{}: not in this run (ranks = {ranks})", d.label)
    };
    let mut mark = Vec::new();
    if active && speed < 1.0 {
        tip.push_str(&format!(
            "\n{}",
            t!("topo-slow-title", r = i, f = format!("{speed}"))
        ));
        mark.push(format!("×{speed}"));
    }
    if active && late > 0.0 {
        tip.push_str(&format!(
            "\n{}",
            t!("topo-late-title", r = i, us = format::us(late))
        ));
        mark.push(format!("+{}µs", format::us(late)));
    }
    (tip, mark)
}

/// Switch `k`: a fabric bar across the servers when the layout gives it
/// one, else a small box with its label.
fn switch_node(s: &Scene, k: usize, sw: &Switch) -> Html {
    let (plan, layout) = (s.plan, s.layout);
    let (x, y) = layout.pos[plan.topology.devices.len() + k];
    match layout.bars.get(k).copied().flatten() {
        Some(bar) => html! {
            <g class="node switch bar">
                <rect x={f(bar.x)} y={f(bar.y)} width={f(bar.w)} height={f(bar.h)} rx="6" />
                <text class="node-label" x={f(x)} y={f(y + 4.0)} text-anchor="middle">
                    { bar_label(s, sw) }
                </text>
                <title>{t!("topo-bar-title", label = switch_label(&sw.label), device = plan.library.device_word())}</title>
            </g>
        },
        None => html! {
            <g class="node switch" transform={format!("translate({},{})", f(x), f(y))}>
                <rect x="-40" y="-14" width="80" height="28" rx="6" />
                <text class="node-label" y="4" text-anchor="middle">{switch_label(&sw.label)}</text>
                <title>{t!("topo-switch-title", label = switch_label(&sw.label))}</title>
            </g>
        },
    }
}

/// A fabric bar's words: the switch and its RoCE bandwidth or, on a
/// measured machine, the fitted figures that every rank's link carries.
fn bar_label(s: &Scene, sw: &Switch) -> String {
    let topo = &s.plan.topology;
    if s.of_nodes {
        // The measured machine: every rank's link carries the fitted figures.
        let l = topo.links.first();
        t!(
            "topo-bar-fitted",
            gbps = l.map_or("–".into(), |l| format::gbps(l.bandwidth_gbps)),
            us = l.map_or("–".into(), |l| format::us(l.latency_us))
        )
    } else {
        t!(
            "topo-bar-switch",
            label = switch_label(&sw.label),
            gbps = format::gbps(
                topo.links
                    .iter()
                    .find(|l| l.kind == LinkKind::Roce)
                    .map_or(0.0, |l| l.bandwidth_gbps)
            )
        )
    }
}

/// An arrowhead for a lane's end, in its transfer kind's colour.
fn arrow_marker(id: &'static str, colour: &'static str) -> Html {
    html! {
        <marker id={id} viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" fill={colour} />
        </marker>
    }
}

/// The note under the drawing: what it leaves out (servers collapsed to
/// boxes, a step with too many transfers to draw) or what its boxes are
/// (servers or a measured machine's nodes).
fn topo_note(s: &Scene, too_many: bool) -> Option<String> {
    let layout = s.layout;
    if layout.collapsed && s.of_nodes {
        Some(t!(
            "topo-collapsed-nodes",
            servers = layout.boxes.len(),
            g = layout.boxes.first().map_or(0, |b| b.devices.len())
        ))
    } else if layout.collapsed {
        Some(t!("topo-collapsed", servers = layout.boxes.len()))
    } else if too_many {
        Some(t!(
            "topo-too-many",
            n = s.step.map_or(0, |st| st.transfers.len())
        ))
    } else if layout.multi_server && s.of_nodes {
        Some(t!("topo-nodes"))
    } else if layout.multi_server {
        Some(t!("topo-servers"))
    } else {
        None
    }
}

/// The legend: a copy's and a reduction's arrow (with the plan's reduction
/// operator, or a dash when the primitive does not reduce), what a token
/// is, and each kind of link drawn, explained on hover and focus.
fn legend(plan: &Plan) -> Html {
    let mut kinds: Vec<LinkKind> = Vec::new();
    for l in &plan.topology.links {
        if !kinds.contains(&l.kind) {
            kinds.push(l.kind);
        }
    }
    let op_symbol = if plan.config.primitive.reduces() {
        plan.config.redop.symbol()
    } else {
        "—"
    };
    html! {
        <div class="topo-legend">
            <span><svg width="26" height="10"><line x1="1" y1="5" x2="20" y2="5" stroke={colors::COPY} stroke-width="2.5" marker-end="url(#arrow-copy)" /></svg>{t!("topo-copy")}</span>
            <span><svg width="26" height="10"><line x1="1" y1="5" x2="20" y2="5" stroke={colors::REDUCE} stroke-width="2.5" marker-end="url(#arrow-reduce)" /></svg>{t!("topo-reduce", op = op_symbol)}</span>
            <span class="muted">{t!("topo-token")}</span>
            { for kinds.into_iter().map(|k| html! {
                <span class="link-kind"><Term tip={crate::i18n::tr(&format!("link-{}-tip", k.title().to_ascii_lowercase()))}>{k.title()}</Term></span>
            }) }
        </div>
    }
}
