//! Stage 3 of the XML import: the `<step>`s as a [`Graph`]. Each non-nop
//! step is an operation; a send and the receive it meets on its connection
//! are one message; each message and local copy / reduce is an action with
//! its sides; thread-block order, `depid` waits and messages are the edges.

use super::error::{err, MscclError};
use super::graph::{Action, Graph, Loc, Part, Side, Temp};
use super::layout::Layout;
use super::model::{Buf, Kind, Program, Tb};
use crate::engine::schedule::TransferKind;
use std::collections::{BTreeMap, HashMap};

/// The graph and the counts the summary shows.
pub(super) struct Built {
    pub graph: Graph,
    /// Thread blocks over all GPUs.
    pub thread_blocks: usize,
    /// `<step>` elements (nops included).
    pub xml_steps: usize,
}

/// One non-nop step.
struct Op {
    gpu: usize,
    tb: usize,
    s: usize,
    /// Its actions: the message it receives, then the one it sends (or its
    /// local copy / reduce).
    actions: Vec<usize>,
}

/// A connection `(from gpu, to gpu, channel)`.
type Conn = (usize, usize, usize);
/// A pending send: (op, location read, cnt).
type PendingSend = (usize, Loc, usize);
/// A pending receive: (op, location written, kind, pre-copy source, cnt).
type PendingRecv = (usize, Loc, TransferKind, Option<Loc>, usize);

/// The operations found, before sends meet receives.
#[derive(Default)]
struct Collected {
    ops: Vec<Op>,
    /// Op index of (gpu, tb, s) (None for nops).
    op_at: Vec<Vec<Vec<Option<usize>>>>,
    /// Per connection: the sending thread block and its sends in order.
    sends: BTreeMap<Conn, (usize, Vec<PendingSend>)>,
    /// Per connection: the receiving thread block and its receives.
    recvs: BTreeMap<Conn, (usize, Vec<PendingRecv>)>,
    thread_blocks: usize,
    xml_steps: usize,
    /// rrs steps so far: the next one's temporary.
    temps: usize,
    /// The sending op of each message action.
    senders: HashMap<usize, usize>,
    /// Per connection, its message actions in order.
    conn_actions: Vec<Vec<usize>>,
}

/// Builds the graph of a parsed program laid out by `layout`.
///
/// Errors: [`MscclError`] naming the element: two thread blocks on one
/// connection, unmatched sends and receives, dependencies on steps that
/// never signal.
pub(super) fn build(p: &Program, layout: &Layout) -> Result<Built, MscclError> {
    let mut g = Graph::default();
    let mut c = collect(p, layout, &mut g)?;
    connect(p, layout, &mut g, &mut c)?;
    for (i, o) in c.ops.iter().enumerate() {
        let st = &p.gpus[o.gpu].tbs[o.tb].steps[o.s];
        if st.kind == Kind::RecvReduceSend {
            // Matched above: its receive, then its send.
            let [write, read] = o.actions[..] else {
                return err(
                    &g.ops[i],
                    "an rrs without its two messages (an importer bug)",
                );
            };
            g.temps.push(Temp {
                gpu: o.gpu,
                size: st.cnt,
                write,
                read,
            });
        }
    }
    let op_sides = add_sides(&mut g, &c.ops, &c.senders);
    add_waits(p, &mut g, &c, &op_sides)?;
    Ok(Built {
        graph: g,
        thread_blocks: c.thread_blocks,
        xml_steps: c.xml_steps,
    })
}

/// Walks the steps: an op per non-nop step, an action per local copy /
/// reduce, sends and receives queued per connection.
fn collect(p: &Program, layout: &Layout, g: &mut Graph) -> Result<Collected, MscclError> {
    let mut c = Collected::default();
    let m = layout.m;
    for gpu in &p.gpus {
        let mut per_tb = Vec::new();
        for t in &gpu.tbs {
            c.thread_blocks += 1;
            open_connections(&mut c, gpu.id, t)?;
            let mut per_step = Vec::new();
            for st in &t.steps {
                c.xml_steps += 1;
                if st.kind == Kind::Nop {
                    per_step.push(None);
                    continue;
                }
                let id = c.ops.len();
                let chunk =
                    |(b, off): (Buf, i64)| Loc::Chunk(layout.chunk(gpu.id, b, off as usize));
                g.ops
                    .push(format!("gpu {} / tb {} / step {}", gpu.id, t.id, st.s));
                let mut op = Op {
                    gpu: gpu.id,
                    tb: t.id,
                    s: st.s,
                    actions: Vec::new(),
                };
                if matches!(st.kind, Kind::Copy | Kind::Reduce) {
                    let kind = if st.kind == Kind::Copy {
                        TransferKind::Copy
                    } else {
                        TransferKind::Reduce
                    };
                    op.actions.push(g.action(Action {
                        parts: vec![Part {
                            src: gpu.id,
                            dst: gpu.id,
                            from: chunk(st.src),
                            to: chunk(st.dst),
                            count: st.cnt * m,
                            kind,
                        }],
                        origin: id,
                        hint: st.hint,
                        buffered: false,
                    }));
                } else {
                    // An rrs holds its reduced data in a temporary, made
                    // once its messages are matched, in op order.
                    let temp = Loc::Temp(c.temps);
                    if st.kind == Kind::RecvReduceSend {
                        c.temps += 1;
                    }
                    if st.kind.recvs() {
                        let (to, kind, pre) = match st.kind {
                            Kind::Recv | Kind::RecvCopySend => {
                                (chunk(st.dst), TransferKind::Copy, None)
                            }
                            Kind::RecvReduceSend => {
                                (temp, TransferKind::Reduce, Some(chunk(st.src)))
                            }
                            _ => {
                                let (s, d) = (chunk(st.src), chunk(st.dst));
                                (d, TransferKind::Reduce, (s != d).then_some(s))
                            }
                        };
                        let conn = t.recv.map(|peer| (peer, gpu.id, t.chan));
                        let at = g.ops[id].clone();
                        let what = ("receive", "recv");
                        queue(&mut c.recvs, conn, at, what, (id, to, kind, pre, st.cnt))?;
                    }
                    if st.kind.sends() {
                        let from = match st.kind {
                            Kind::Send => chunk(st.src),
                            Kind::RecvReduceSend => temp,
                            _ => chunk(st.dst),
                        };
                        let conn = t.send.map(|peer| (gpu.id, peer, t.chan));
                        let at = g.ops[id].clone();
                        queue(&mut c.sends, conn, at, ("send", "send"), (id, from, st.cnt))?;
                    }
                }
                per_step.push(Some(id));
                c.ops.push(op);
            }
            per_tb.push(per_step);
        }
        c.op_at.push(per_tb);
    }
    Ok(c)
}

/// Registers a thread block's connections: each (peer, channel) pair is one
/// connection with one thread block on each side.
fn open_connections(c: &mut Collected, gpu: usize, t: &Tb) -> Result<(), MscclError> {
    if let Some(peer) = t.send {
        if let Some((other, _)) = c.sends.get(&(gpu, peer, t.chan)) {
            return err(
                format!("gpu {gpu} / tb {}", t.id),
                format!("tb {other} also sends to gpu {peer} on channel {}: each (peer, channel) pair is one connection and needs its own channel", t.chan),
            );
        }
        c.sends.insert((gpu, peer, t.chan), (t.id, Vec::new()));
    }
    if let Some(peer) = t.recv {
        if let Some((other, _)) = c.recvs.get(&(peer, gpu, t.chan)) {
            return err(
                format!("gpu {gpu} / tb {}", t.id),
                format!("tb {other} also receives from gpu {peer} on channel {}: each (peer, channel) pair is one connection and needs its own channel", t.chan),
            );
        }
        c.recvs.insert((peer, gpu, t.chan), (t.id, Vec::new()));
    }
    Ok(())
}

/// Queues a send or receive of step `s` on its thread block's connection
/// (`conn`: None when the thread block has no peer that way).
fn queue<T>(
    q: &mut BTreeMap<Conn, (usize, Vec<T>)>,
    conn: Option<Conn>,
    at: String,
    (what, peer): (&str, &str),
    item: T,
) -> Result<(), MscclError> {
    let Some(conn) = conn else {
        return err(
            at,
            format!("a {what} step in a thread block with no {peer} peer"),
        );
    };
    // Inserted by `open_connections` for every thread block with that peer.
    let Some((_, list)) = q.get_mut(&conn) else {
        return err(at, format!("a {what} with no connection (an importer bug)"));
    };
    list.push(item);
    Ok(())
}

/// Matches sends with receives, connection by connection and in order:
/// each pair is one message action.
fn connect(
    p: &Program,
    layout: &Layout,
    g: &mut Graph,
    c: &mut Collected,
) -> Result<(), MscclError> {
    let hint_of_op = |o: &Op| p.gpus[o.gpu].tbs[o.tb].steps[o.s].hint;
    let mut recv_action: HashMap<usize, usize> = HashMap::new();
    let mut send_action: HashMap<usize, usize> = HashMap::new();
    let mut senders: HashMap<usize, usize> = HashMap::new();
    let mut conn_actions = Vec::new();
    for (&(a, b, ch), (tb_a, list)) in &c.sends {
        let Some((tb_b, rl)) = c.recvs.get(&(a, b, ch)) else {
            return err(
                format!("gpu {a} / tb {tb_a}"),
                format!("sends to gpu {b} on channel {ch}, but gpu {b} has no thread block with recv=\"{a}\" chan=\"{ch}\""),
            );
        };
        if list.len() != rl.len() {
            return err(
                format!("gpu {a} / tb {tb_a}"),
                format!(
                    "sends {} messages to gpu {b} on channel {ch} but gpu {b} / tb {tb_b} receives {}",
                    list.len(),
                    rl.len()
                ),
            );
        }
        let mut on_conn = Vec::with_capacity(list.len());
        for (&(sop, from, scnt), &(rop, to, kind, pre, rcnt)) in list.iter().zip(rl) {
            if scnt != rcnt {
                return err(
                    &g.ops[rop],
                    format!(
                        "cnt=\"{rcnt}\" but the matching send (gpu {a} / tb {tb_a} / step {}) has cnt=\"{scnt}\"",
                        c.ops[sop].s
                    ),
                );
            }
            let count = scnt * layout.m;
            let mut parts = Vec::new();
            if let Some(pre) = pre {
                parts.push(Part {
                    src: b,
                    dst: b,
                    from: pre,
                    to,
                    count,
                    kind: TransferKind::Copy,
                });
            }
            parts.push(Part {
                src: a,
                dst: b,
                from,
                to,
                count,
                kind,
            });
            let (hs, hr) = (hint_of_op(&c.ops[sop]), hint_of_op(&c.ops[rop]));
            if let (Some(x), Some(y)) = (hs, hr) {
                if x != y {
                    return err(
                        &g.ops[rop],
                        format!("ccl_step/ccl_seq {y:?} differ from the matching send's {x:?}"),
                    );
                }
            }
            let id = g.action(Action {
                parts,
                origin: rop,
                hint: hs.or(hr),
                buffered: true,
            });
            send_action.insert(sop, id);
            recv_action.insert(rop, id);
            senders.insert(id, sop);
            on_conn.push(id);
        }
        conn_actions.push(on_conn);
    }
    for (&(a, b, ch), (tb_b, rl)) in &c.recvs {
        if !c.sends.contains_key(&(a, b, ch)) && !rl.is_empty() {
            return err(
                format!("gpu {b} / tb {tb_b}"),
                format!("receives from gpu {a} on channel {ch}, but gpu {a} has no thread block with send=\"{b}\" chan=\"{ch}\""),
            );
        }
    }
    c.senders = senders;
    c.conn_actions = conn_actions;
    for (i, o) in c.ops.iter_mut().enumerate() {
        if let Some(&x) = recv_action.get(&i) {
            o.actions.push(x);
        }
        if let Some(&x) = send_action.get(&i) {
            o.actions.push(x);
        }
    }
    Ok(())
}

/// Adds each action's sides: a message has a send side (reads at the
/// step's start) and a receive side (writes when it applies; a pre-copy
/// reads at the start too); a local op has one. Returns each op's sides
/// in its order (receive, then forward).
fn add_sides(g: &mut Graph, ops: &[Op], senders: &HashMap<usize, usize>) -> Vec<Vec<usize>> {
    let chunk_range = |l: Loc, count: usize| match l {
        Loc::Chunk(c) => Some((c, c + count)),
        Loc::Temp(_) => None,
    };
    for ai in 0..g.actions.len() {
        let a = g.actions[ai].clone();
        let Some(net) = a.parts.last().copied() else {
            continue;
        };
        if net.src == net.dst {
            g.side(Side {
                action: Some(ai),
                gpu: net.src,
                op: a.origin,
                reads: chunk_range(net.from, net.count).into_iter().collect(),
                writes: chunk_range(net.to, net.count)
                    .map(|(x, y)| (x, y, net.kind))
                    .into_iter()
                    .collect(),
                local: true,
            });
            continue;
        }
        g.side(Side {
            action: Some(ai),
            gpu: net.src,
            op: senders.get(&ai).copied().unwrap_or(a.origin),
            reads: chunk_range(net.from, net.count).into_iter().collect(),
            writes: Vec::new(),
            local: false,
        });
        let pre = (a.parts.len() == 2).then(|| a.parts[0]);
        let k = if pre.is_some() {
            TransferKind::Copy
        } else {
            net.kind
        };
        g.side(Side {
            action: Some(ai),
            gpu: net.dst,
            op: a.origin,
            reads: pre
                .and_then(|p| chunk_range(p.from, p.count))
                .into_iter()
                .collect(),
            writes: chunk_range(net.to, net.count)
                .map(|(x, y)| (x, y, k))
                .into_iter()
                .collect(),
            local: false,
        });
    }
    ops.iter()
        .enumerate()
        .map(|(i, o)| {
            o.actions
                .iter()
                .filter_map(|&a| {
                    let v = &g.action_sides[a];
                    match v.as_slice() {
                        [only] => Some(*only),
                        [send, recv] => Some(if g.actions[a].origin == i {
                            *recv
                        } else {
                            *send
                        }),
                        _ => None,
                    }
                })
                .collect()
        })
        .collect()
}

/// Messages a connection holds between a send and its receive: the
/// interpreter moves a Simple chunk as `MSCCL_CHUNKSTEPS` (`NCCL_STEPS` /
/// 2) of the connection's `NCCL_STEPS` (8) slots and an LL or LL128 chunk
/// as one (Azure/msccl-executor-nccl `src/device/msccl_kernel.cu`,
/// `chunkSize`; `src/include/msccl/msccl_struct.h`; `src/include/device.h`),
/// and a send waits for a free slot.
fn fifo_messages(proto: &str) -> usize {
    const NCCL_STEPS: usize = 8;
    if proto == "Simple" {
        NCCL_STEPS / (NCCL_STEPS / 2)
    } else {
        NCCL_STEPS
    }
}

/// The runtime's waits as edges: a message's receive after its send, an
/// op's forward after what it received, each op after the previous one of
/// its thread block (the interpreter runs a thread block's steps in order,
/// each to its end: Azure/msccl-executor-nccl `src/device/msccl_kernel.cu`,
/// `mscclRunInterpreter`), after the step each `depid` names, and a send
/// after the receive that frees its slot in the connection's buffer. These
/// say only what runs after what; which of them carry data, and so need a
/// later step, [`super::order`] finds chunk by chunk.
fn add_waits(
    p: &Program,
    g: &mut Graph,
    c: &Collected,
    op_sides: &[Vec<usize>],
) -> Result<(), MscclError> {
    for v in g.action_sides.clone() {
        if let [send, recv] = v.as_slice() {
            // The message: the send is read before the receive applies.
            g.edge(*send, *recv, 0, false);
        }
    }
    // A step that sends starts once its connection's buffer has room: the
    // receive `slots` messages earlier has emptied it. A step that also
    // receives holds what it receives until then (the primitives wait for
    // the receive and the send slot together, slice by slice).
    let slots = fifo_messages(&p.proto);
    for acts in &c.conn_actions {
        for (k, &a) in acts.iter().enumerate().skip(slots) {
            let freed = g.action_sides[acts[k - slots]].get(1).copied();
            let start = c
                .senders
                .get(&a)
                .and_then(|&op| op_sides.get(op))
                .and_then(|v| v.first().copied());
            if let (Some(freed), Some(start)) = (freed, start) {
                g.edge(freed, start, 0, false);
            }
        }
    }
    for o in op_sides {
        if let [first, second] = o.as_slice() {
            g.edge(*first, *second, 1, true);
        }
    }
    // Op x starts once op y has ended: y's last side before x's first.
    let after = |g: &mut Graph, y: usize, x: usize| {
        if let (Some(&ys), Some(&xs)) = (op_sides[y].last(), op_sides[x].first()) {
            g.edge(ys, xs, 0, false);
        }
    };
    for (gi, gpu) in p.gpus.iter().enumerate() {
        for (ti, t) in gpu.tbs.iter().enumerate() {
            let mut last: Option<usize> = None;
            let mut waits: Vec<(usize, usize, usize)> = Vec::new();
            for st in &t.steps {
                if let Some((b, d)) = st.dep {
                    waits.push((b, d, st.s));
                }
                let Some(cur) = c.op_at[gi][ti][st.s] else {
                    continue;
                };
                if let Some(prev) = last {
                    after(g, prev, cur);
                }
                for (b, d, s_at) in waits.drain(..) {
                    let here = format!("gpu {} / tb {} / step {s_at}", gpu.id, t.id);
                    let Some(tb) = gpu.tbs.get(b) else {
                        return err(
                            here,
                            format!(
                                "depid=\"{b}\": gpu {} has thread blocks 0..{}",
                                gpu.id,
                                gpu.tbs.len()
                            ),
                        );
                    };
                    if b == t.id {
                        // Its own flag: set by its own steps before this one,
                        // or never (the interpreter waits for the flag of
                        // `dependentBid`, whichever thread block that is).
                        let done = t.steps[d.min(s_at)..s_at]
                            .iter()
                            .any(|x| x.hasdep && x.kind != Kind::Nop);
                        if done {
                            continue;
                        }
                        return err(
                            here,
                            format!("depid=\"{b}\" deps=\"{d}\": its own thread block has run no step >= {d} with hasdep=\"1\" before this one, so the wait never ends"),
                        );
                    }
                    let signal = tb
                        .steps
                        .iter()
                        .skip(d)
                        .find(|x| x.hasdep && x.kind != Kind::Nop);
                    let Some(sig) = signal else {
                        return err(
                            here,
                            format!("depid=\"{b}\" deps=\"{d}\": tb {b} has no step >= {d} with hasdep=\"1\", so the wait never ends"),
                        );
                    };
                    // `signal` skips nops, and every other step has an op.
                    let Some(target) = c.op_at[gi][b][sig.s] else {
                        continue;
                    };
                    after(g, target, cur);
                }
                last = Some(cur);
            }
        }
    }
    Ok(())
}
