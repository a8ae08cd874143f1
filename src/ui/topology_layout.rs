//! Where the topology view draws each node: a circle for one small server,
//! two HCCS groups with their PCIe bridge for `910a-8`, server boxes around
//! a RoCE fabric bar for multi-server topologies, and one box per server
//! when there are too many servers to draw NPU by NPU.

use crate::engine::topology::Topology;

/// Most servers drawn NPU by NPU; more are collapsed to one box each.
pub const MAX_EXPANDED_SERVERS: usize = 8;

/// Devices per server of `topo` when its devices are numbered server by
/// server in servers of one size (the last one may be partial): 8 for the
/// 910B clusters, the measured machine's GPUs per node for a fitted one.
fn per_server(topo: &Topology) -> Option<usize> {
    let g = topo.devices.iter().filter(|d| d.server == 0).count();
    (g > 0
        && topo
            .devices
            .iter()
            .enumerate()
            .all(|(i, d)| d.server == i / g))
    .then_some(g)
}

/// A server's caption word: NCCL's machines (a fitted one's) have nodes.
pub fn server_word(topo: &Topology) -> &'static str {
    if topo.library == crate::engine::library::Library::Nccl {
        "node"
    } else {
        "server"
    }
}

/// A rectangle, px (top-left corner and size).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// Centre.
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

/// What a box holds, worded by the view in the page's language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoxName {
    /// 910A's HCCS group `g` (NPU 4g–4g+3).
    HccsGroup(usize),
    /// Server `s` of a 910B cluster.
    Server(usize),
    /// Node `n` of a measured (fitted) machine.
    Node(usize),
}

impl BoxName {
    /// The short code of a collapsed box: `S3`, `N3` (`G1` for a group).
    pub fn code(self) -> String {
        match self {
            BoxName::HccsGroup(g) => format!("G{g}"),
            BoxName::Server(s) => format!("S{s}"),
            BoxName::Node(n) => format!("N{n}"),
        }
    }
}

/// Box `i` of a multi-server machine: a node of a measured machine, else
/// a server.
fn box_name(topo: &Topology, i: usize) -> BoxName {
    if server_word(topo) == "node" {
        BoxName::Node(i)
    } else {
        BoxName::Server(i)
    }
}

/// A box drawn around a group of devices (a server, an HCCS group).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupBox {
    /// Where.
    pub rect: Rect,
    /// What it holds.
    pub name: BoxName,
    /// Devices inside (node indices).
    pub devices: std::ops::Range<usize>,
}

/// The drawing plan of one topology.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// viewBox width.
    pub w: f64,
    /// viewBox height.
    pub h: f64,
    /// Centre of every node (devices, then switches).
    pub pos: Vec<(f64, f64)>,
    /// Device circle radius (0 when servers are collapsed).
    pub node_r: f64,
    /// Group / server boxes.
    pub boxes: Vec<GroupBox>,
    /// Switches drawn as a wide bar (links attach vertically at the
    /// device's x): index into `Topology::switches` -> bar.
    pub bars: Vec<Option<Rect>>,
    /// Servers drawn as one box each (devices not drawn).
    pub collapsed: bool,
    /// More than one server.
    pub multi_server: bool,
    /// Link index by its (smaller, larger) end nodes.
    pub pairs: std::collections::HashMap<(usize, usize), usize>,
}

fn servers(topo: &Topology) -> usize {
    topo.devices.iter().map(|d| d.server + 1).max().unwrap_or(1)
}

impl Layout {
    /// Is link `l` drawn under the server boxes (a port to a bar switch)?
    pub fn under(&self, topo: &Topology, l: usize) -> bool {
        let n_dev = topo.devices.len();
        let k = &topo.links[l];
        [k.a, k.b]
            .iter()
            .any(|&x| x >= n_dev && self.bars.get(x - n_dev).copied().flatten().is_some())
    }

    /// The layout of `topo`.
    pub fn of(topo: &Topology) -> Layout {
        let mut l = Layout::place(topo);
        l.pairs = topo
            .links
            .iter()
            .enumerate()
            .map(|(i, k)| ((k.a.min(k.b), k.a.max(k.b)), i))
            .collect();
        l
    }

    fn place(topo: &Topology) -> Layout {
        let s = servers(topo);
        match per_server(topo) {
            Some(g) if s > 1 && g <= 8 && topo.switches.len() == 1 => {
                if s > MAX_EXPANDED_SERVERS {
                    return Layout::collapsed(topo, s, g);
                }
                return Layout::servers(topo, s, g);
            }
            _ => {}
        }
        if topo.name.starts_with("910a-8") && topo.devices.len() == 8 && topo.switches.len() == 2 {
            return Layout::groups_910a(topo);
        }
        Layout::circle(topo)
    }

    /// Devices on a circle, switches in a row across the centre.
    fn circle(topo: &Topology) -> Layout {
        let (w, h, cx, cy, r) = (440.0, 440.0, 220.0, 220.0, 176.0);
        let n_dev = topo.devices.len();
        let n_sw = topo.switches.len();
        let pos = (0..topo.nodes())
            .map(|i| {
                if i < n_dev {
                    let a = -std::f64::consts::FRAC_PI_2
                        + i as f64 * std::f64::consts::TAU / n_dev.max(1) as f64;
                    (cx + r * a.cos(), cy + r * a.sin())
                } else {
                    let k = (i - n_dev) as f64;
                    (cx + (k - (n_sw as f64 - 1.0) / 2.0) * 90.0, cy)
                }
            })
            .collect();
        Layout {
            w,
            h,
            pos,
            node_r: if n_dev > 12 { 18.0 } else { 31.0 },
            boxes: Vec::new(),
            bars: vec![None; n_sw],
            collapsed: false,
            multi_server: false,
            pairs: Default::default(),
        }
    }

    /// 910a-8: two squares of 4 (HCCS full mesh), each over its PCIe
    /// switch, the bridge between the switches.
    fn groups_910a(topo: &Topology) -> Layout {
        // Ring order around each square: 0 TL, 1 TR, 2 BR, 3 BL.
        let corner = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
        let mut pos = Vec::with_capacity(10);
        for g in 0..2 {
            let x0 = 75.0 + g as f64 * 250.0;
            for c in corner {
                pos.push((x0 + c.0 * 120.0, 95.0 + c.1 * 120.0));
            }
        }
        pos.push((135.0, 330.0));
        pos.push((385.0, 330.0));
        let boxes = (0..2)
            .map(|g| GroupBox {
                rect: Rect {
                    x: 28.0 + g as f64 * 250.0,
                    y: 30.0,
                    w: 214.0,
                    h: 232.0,
                },
                name: BoxName::HccsGroup(g),
                devices: 4 * g..4 * g + 4,
            })
            .collect();
        let _ = topo;
        Layout {
            w: 520.0,
            h: 370.0,
            pos,
            node_r: 28.0,
            boxes,
            bars: vec![None, None],
            collapsed: false,
            multi_server: false,
            pairs: Default::default(),
        }
    }

    /// S ≤ 8 servers of `g` ≤ 8: a polygon of NPUs per server box (an
    /// octagon for 8), the fabric as a bar between two rows of servers (or
    /// under one row).
    fn servers(topo: &Topology, s: usize, g: usize) -> Layout {
        let n = topo.devices.len();
        let (bw, bh, gap) = (200.0, 196.0, 22.0);
        let cols = s.min(4);
        let rows = s.div_ceil(cols);
        let w = cols as f64 * (bw + gap) + gap;
        let bar_h = 30.0;
        let row_y = |r: usize| {
            if r == 0 {
                16.0
            } else {
                16.0 + bh + 60.0 + bar_h + 60.0
            }
        };
        let fabric_y = 16.0 + bh + 60.0;
        let h = if rows == 1 {
            fabric_y + bar_h + 16.0
        } else {
            row_y(1) + bh + 16.0
        };
        let mut pos = Vec::with_capacity(topo.nodes());
        let mut boxes = Vec::new();
        for sv in 0..s {
            let (r, c) = (sv / cols, sv % cols);
            // Centre a short last row.
            let in_row = if r + 1 == rows { s - r * cols } else { cols };
            let offset = (cols - in_row) as f64 * (bw + gap) / 2.0;
            let rect = Rect {
                x: gap + offset + c as f64 * (bw + gap),
                y: row_y(r),
                w: bw,
                h: bh,
            };
            let (cx, cy) = (rect.x + bw / 2.0, rect.y + bh / 2.0 + 8.0);
            let devices = g * sv..(g * sv + g).min(n);
            for i in 0..devices.len() {
                let a = -std::f64::consts::FRAC_PI_2 + i as f64 * std::f64::consts::TAU / g as f64;
                pos.push((cx + 64.0 * a.cos(), cy + 64.0 * a.sin()));
            }
            boxes.push(GroupBox {
                rect,
                name: box_name(topo, sv),
                devices,
            });
        }
        let bar = Rect {
            x: gap,
            y: fabric_y,
            w: w - 2.0 * gap,
            h: bar_h,
        };
        pos.push(bar.centre());
        Layout {
            w,
            h,
            pos,
            node_r: 16.0,
            boxes,
            bars: vec![Some(bar)],
            collapsed: false,
            multi_server: true,
            pairs: Default::default(),
        }
    }

    /// Many servers: one small box per server, half above the fabric bar,
    /// half below, one trunk (its `g` network ports) each.
    fn collapsed(topo: &Topology, s: usize, g: usize) -> Layout {
        let n = topo.devices.len();
        let (bw, bh, gx, gy) = (54.0, 30.0, 10.0, 12.0);
        let cols = if s <= 16 { s.div_ceil(2) } else { 16 };
        let rows = s.div_ceil(cols);
        let top_rows = rows.div_ceil(2);
        let w = cols as f64 * (bw + gx) + gx;
        let bar_h = 30.0;
        let fabric_y = 14.0 + top_rows as f64 * (bh + gy) + 40.0;
        let row_y = |r: usize| {
            if r < top_rows {
                14.0 + r as f64 * (bh + gy)
            } else {
                fabric_y + bar_h + 40.0 + (r - top_rows) as f64 * (bh + gy)
            }
        };
        let h = row_y(rows - 1) + bh + 14.0;
        let mut pos = Vec::with_capacity(topo.nodes());
        let mut boxes = Vec::new();
        for sv in 0..s {
            let (r, c) = (sv / cols, sv % cols);
            let rect = Rect {
                x: gx + c as f64 * (bw + gx),
                y: row_y(r),
                w: bw,
                h: bh,
            };
            let devices = g * sv..(g * sv + g).min(n);
            for _ in devices.clone() {
                pos.push(rect.centre());
            }
            boxes.push(GroupBox {
                rect,
                name: box_name(topo, sv),
                devices,
            });
        }
        let bar = Rect {
            x: gx,
            y: fabric_y,
            w: w - 2.0 * gx,
            h: bar_h,
        };
        pos.push(bar.centre());
        Layout {
            w,
            h,
            pos,
            node_r: 0.0,
            boxes,
            bars: vec![Some(bar)],
            collapsed: true,
            multi_server: true,
            pairs: Default::default(),
        }
    }

    /// The two end points of the line drawn for a link between nodes `a`
    /// and `b` (a link to a bar attaches at the device's x).
    pub fn link_ends(&self, topo: &Topology, a: usize, b: usize) -> ((f64, f64), (f64, f64)) {
        let n_dev = topo.devices.len();
        let end = |dev: usize, sw: usize| -> Option<((f64, f64), (f64, f64))> {
            let bar = (*self.bars.get(sw.checked_sub(n_dev)?)?)?;
            let p = self.pos[dev];
            let above = p.1 < bar.y;
            let y = if above { bar.y } else { bar.y + bar.h };
            // A port leaves its server box at the NPU's x (nudged so that
            // NPUs above one another get distinct ports); the part inside
            // the box is hidden under it.
            match self.boxes.iter().find(|b| b.devices.contains(&dev)) {
                Some(b) if !self.collapsed => {
                    let nudge = if (dev - b.devices.start) < 4 {
                        5.0
                    } else {
                        -5.0
                    };
                    let x = p.0 + nudge;
                    let y0 = if above { b.rect.y + b.rect.h } else { b.rect.y };
                    Some(((x, y0), (x, y)))
                }
                _ => Some((p, (p.0, y))),
            }
        };
        if let Some((p, q)) = end(a, b) {
            return (p, q);
        }
        if let Some((p, q)) = end(b, a) {
            return (q, p);
        }
        (self.pos[a], self.pos[b])
    }

    /// The polyline a transfer from device `src` to device `dst` follows:
    /// straight over a direct link, else up to the bar and along it.
    pub fn path(&self, topo: &Topology, src: usize, dst: usize) -> Vec<(f64, f64)> {
        let (a, b) = (self.pos[src], self.pos[dst]);
        if self.pairs.contains_key(&(src.min(dst), src.max(dst))) {
            return vec![a, b];
        }
        if let Some(bar) = self.bars.iter().flatten().next() {
            let edge = |p: (f64, f64)| if p.1 < bar.y { bar.y } else { bar.y + bar.h };
            let mid = bar.y + bar.h / 2.0;
            return vec![a, (a.0, edge(a)), (a.0, mid), (b.0, mid), (b.0, edge(b)), b];
        }
        // Through the switches of the route (910a-8's PCIe bridge, NVSwitch).
        match topo.route(src, dst) {
            Ok(r) => {
                let mut pts = vec![a];
                let mut at = src;
                for h in &r.hops {
                    let l = &topo.links[h.link];
                    at = if l.a == at { l.b } else { l.a };
                    pts.push(self.pos[at]);
                }
                pts
            }
            Err(_) => vec![a, b],
        }
    }
}

/// The point at fraction `t` (0..=1) of the length of `pts`.
pub fn along(pts: &[(f64, f64)], t: f64) -> (f64, f64) {
    let seg = |i: usize| {
        let (p, q) = (pts[i], pts[i + 1]);
        ((q.0 - p.0).powi(2) + (q.1 - p.1).powi(2)).sqrt()
    };
    if pts.len() < 2 {
        return pts.first().copied().unwrap_or((0.0, 0.0));
    }
    let total: f64 = (0..pts.len() - 1).map(seg).sum();
    let mut d = total * t.clamp(0.0, 1.0);
    for i in 0..pts.len() - 1 {
        let l = seg(i);
        if d <= l || i + 2 == pts.len() {
            let f = if l > 0.0 { (d / l).min(1.0) } else { 0.0 };
            let (p, q) = (pts[i], pts[i + 1]);
            return (p.0 + (q.0 - p.0) * f, p.1 + (q.1 - p.1) * f);
        }
        d -= l;
    }
    pts[pts.len() - 1]
}

/// `pts` with its ends pulled in by `r0` at the start and `r1` at the end
/// (to stop at a node's rim).
pub fn trim(pts: &[(f64, f64)], r0: f64, r1: f64) -> Vec<(f64, f64)> {
    let mut v = pts.to_vec();
    let n = v.len();
    if n < 2 {
        return v;
    }
    let pull = |p: (f64, f64), toward: (f64, f64), r: f64| {
        let (dx, dy) = (toward.0 - p.0, toward.1 - p.1);
        let len = (dx * dx + dy * dy).sqrt();
        if len <= r || len == 0.0 {
            p
        } else {
            (p.0 + dx / len * r, p.1 + dy / len * r)
        }
    };
    v[0] = pull(pts[0], pts[1], r0);
    v[n - 1] = pull(pts[n - 1], pts[n - 2], r1);
    v
}
