//! Stage 3 of the plan import: the ops as a [`Graph`]. Data ops become
//! actions; the executor's waits (thread-block order per kind of op,
//! `nop`, `barrier`, signal → wait, packet written → packet read) become
//! edges (module doc, "How it runs").

use super::{OpKind, Plan, PlanOp, Ref};
use crate::engine::formats::msccl::error::{err, MscclError};
use crate::engine::formats::msccl::graph::{Action, Graph, Loc, Part, Side};
use crate::engine::formats::msccl::layout::Layout;
use crate::engine::formats::msccl::model::Buf;
use crate::engine::formats::msccl::protocol::Protocol;
use crate::engine::schedule::TransferKind;
use std::collections::{BTreeMap, HashMap};

/// The executor's device plan holds this many ops per thread block
/// (microsoft/mscclpp `src/core/include/execution_common.hpp`,
/// `MAX_OPERATION`).
const MAX_OPERATION: usize = 64;

/// `n` as words: never, once, twice, 3 times.
fn times(n: usize) -> String {
    match n {
        0 => "never".into(),
        1 => "once".into(),
        2 => "twice".into(),
        _ => format!("{n} times"),
    }
}

/// The graph and the remarks on the plan.
pub(super) struct Built {
    pub graph: Graph,
    pub notes: Vec<String>,
}

/// Where a thread block's next op starts: after the last data op's sides
/// (all threads), or after the last signal / wait (the first threads);
/// a `nop` or `barrier` joins both.
#[derive(Default)]
struct Tails {
    data: Vec<usize>,
    sync: Vec<usize>,
}

/// A reference and whether the op reads or writes it as LL packets.
#[derive(Clone, Copy)]
struct At {
    r: Ref,
    packet: bool,
}

/// One action of a data op: its transfers and the packets it writes and
/// reads (gpu, chunks).
#[derive(Default)]
struct Planned {
    parts: Vec<Part>,
    packet_writes: Vec<(usize, std::ops::Range<usize>)>,
    packet_reads: Vec<(usize, std::ops::Range<usize>)>,
}

struct Builder<'a> {
    plan: &'a Plan,
    layout: &'a Layout,
    g: Graph,
    /// Per (gpu, memory channel): signal and wait nodes with their thread
    /// blocks, in order.
    signals: BTreeMap<(usize, usize), Vec<(usize, usize)>>,
    waits: BTreeMap<(usize, usize), Vec<(usize, usize)>>,
    /// Per (gpu, barrier id, occurrence): the node and the thread blocks
    /// that reach it with the count they state.
    barriers: BTreeMap<(usize, usize, usize), (usize, Vec<usize>)>,
    /// Packet chunk (gpu, chunk) -> the side that writes it.
    packets: HashMap<(usize, usize), usize>,
    /// (gpu, chunks, the side that reads them as packets).
    packet_reads: Vec<(usize, std::ops::Range<usize>, usize)>,
    /// Scratch chunks read or written as plain data and as packets, per
    /// gpu, with the first op that does.
    plain_scratch: BTreeMap<(usize, usize), usize>,
    packet_scratch: BTreeMap<(usize, usize), usize>,
    notes: Vec<String>,
}

/// Builds the graph of a parsed plan laid out by `layout`.
///
/// Errors: [`MscclError`] at the op: a form of an op the executor does
/// not run as the plan says, a wait no signal meets, packets nobody
/// writes, a barrier fewer thread blocks reach than it waits for.
pub(super) fn build(plan: &Plan, layout: &Layout) -> Result<Built, MscclError> {
    let mut b = Builder {
        plan,
        layout,
        g: Graph::default(),
        signals: BTreeMap::new(),
        waits: BTreeMap::new(),
        barriers: BTreeMap::new(),
        packets: HashMap::new(),
        packet_reads: Vec::new(),
        plain_scratch: BTreeMap::new(),
        packet_scratch: BTreeMap::new(),
        notes: Vec::new(),
    };
    for gpu in &plan.gpus {
        for tb in &gpu.threadblocks {
            if tb.ops.len() > MAX_OPERATION {
                b.notes.push(format!("gpu {} / threadblock {} has {} ops; the executor's device plan holds {MAX_OPERATION} per thread block (execution_common.hpp MAX_OPERATION)", gpu.id, tb.id, tb.ops.len()));
            }
            let mut tails = Tails::default();
            let mut seen: HashMap<usize, usize> = HashMap::new();
            for (i, op) in tb.ops.iter().enumerate() {
                let id = b.g.ops.len();
                b.g.ops
                    .push(format!("gpu {} / threadblock {} / op {i}", gpu.id, tb.id));
                b.op(gpu.id, tb.id, id, op, &mut tails, &mut seen)?;
            }
        }
    }
    b.pair_signals()?;
    b.check_barriers()?;
    b.link_packets()?;
    b.check_scratch()?;
    Ok(Built {
        graph: b.g,
        notes: b.notes,
    })
}

impl Builder<'_> {
    /// A node that synchronizes and moves no data.
    fn node(&mut self, gpu: usize, op: usize) -> usize {
        self.g.side(Side {
            action: None,
            gpu,
            op,
            reads: Vec::new(),
            writes: Vec::new(),
            local: false,
        })
    }

    fn link(&mut self, from: &[usize], to: &[usize]) {
        for &y in from {
            for &x in to {
                self.g.edge(y, x, 0, false);
            }
        }
    }

    /// One op of thread block `tb` on `gpu` (op index `id`).
    fn op(
        &mut self,
        gpu: usize,
        tb: usize,
        id: usize,
        op: &PlanOp,
        tails: &mut Tails,
        barriers_seen: &mut HashMap<usize, usize>,
    ) -> Result<(), MscclError> {
        match op.kind {
            OpKind::Nop => {
                let n = self.node(gpu, id);
                self.join(tails, n);
            }
            OpKind::Barrier => {
                let Some((bid, count)) = op.barrier else {
                    return err(&self.g.ops[id], "barrier without barrier_id");
                };
                let occ = barriers_seen.entry(bid).or_insert(0);
                let key = (gpu, bid, *occ);
                *occ += 1;
                let n = match self.barriers.get(&key) {
                    Some(&(n, _)) => n,
                    None => self.node(gpu, id),
                };
                self.barriers
                    .entry(key)
                    .or_insert((n, Vec::new()))
                    .1
                    .push(count);
                self.join(tails, n);
            }
            OpKind::Signal | OpKind::RelaxedSignal | OpKind::Wait | OpKind::RelaxedWait => {
                let n = self.node(gpu, id);
                let to = if matches!(op.kind, OpKind::Signal | OpKind::RelaxedSignal) {
                    &mut self.signals
                } else {
                    &mut self.waits
                };
                for &ch in &op.channels {
                    to.entry((gpu, ch)).or_default().push((n, tb));
                }
                let from = std::mem::replace(&mut tails.sync, vec![n]);
                self.link(&from, &[n]);
            }
            _ => {
                let steps = self.data(id, op)?;
                let mut from = std::mem::take(&mut tails.data);
                for step in steps {
                    let sides = self.action(step.parts, id);
                    self.packets_of(&step.packet_writes, &step.packet_reads, &sides, id)?;
                    self.link(&from, &sides);
                    from = sides;
                }
                tails.data = from;
            }
        }
        Ok(())
    }

    /// A node every thread of the block reaches: after both tails.
    fn join(&mut self, tails: &mut Tails, n: usize) {
        let from: Vec<usize> = tails.data.drain(..).chain(tails.sync.drain(..)).collect();
        self.link(&from, &[n]);
        tails.data = vec![n];
        tails.sync = vec![n];
    }

    /// The IR location of a reference.
    fn loc(&mut self, a: At, op: usize) -> Result<(usize, Loc), MscclError> {
        let r = a.r;
        if a.packet {
            if r.buf != Buf::Scratch {
                return err(
                    &self.g.ops[op],
                    format!("packets in buffer {}: the executor reads and writes LL packets at scratch offsets (execution_kernel.hpp)", r.buf.name()),
                );
            }
            for u in r.index..r.index + r.size {
                self.packet_scratch.entry((r.gpu, u)).or_insert(op);
            }
            return Ok((r.gpu, Loc::Chunk(self.layout.packet_chunk(r.index))));
        }
        if r.buf == Buf::Scratch {
            for u in r.index..r.index + r.size {
                self.plain_scratch.entry((r.gpu, u)).or_insert(op);
            }
        }
        Ok((r.gpu, Loc::Chunk(self.layout.chunk(r.gpu, r.buf, r.index))))
    }

    /// A transfer part from `a` to `b`.
    fn part(&mut self, a: At, b: At, kind: TransferKind, op: usize) -> Result<Part, MscclError> {
        let (src, from) = self.loc(a, op)?;
        let (dst, to) = self.loc(b, op)?;
        Ok(Part {
            src,
            dst,
            from,
            to,
            count: a.r.size * self.layout.m,
            kind,
        })
    }

    /// Adds an action and its sides (one per GPU whose memory it touches;
    /// a write that a copy makes counts as a copy) and returns the sides.
    fn action(&mut self, parts: Vec<Part>, op: usize) -> Vec<usize> {
        let a = self.g.action(Action {
            parts: parts.clone(),
            origin: op,
            hint: None,
            buffered: false,
        });
        let local = parts.iter().all(|p| p.src == p.dst);
        let mut gpus: Vec<usize> = Vec::new();
        for p in &parts {
            for x in [p.src, p.dst] {
                if !gpus.contains(&x) {
                    gpus.push(x);
                }
            }
        }
        let range = |l: Loc, n: usize| match l {
            Loc::Chunk(c) => Some((c, c + n)),
            Loc::Temp(_) => None,
        };
        let mut sides = Vec::new();
        for gpu in gpus {
            let reads = parts
                .iter()
                .filter(|p| p.src == gpu)
                .filter_map(|p| range(p.from, p.count))
                .collect();
            let mut writes: Vec<(usize, usize, TransferKind)> = Vec::new();
            for p in parts.iter().filter(|p| p.dst == gpu) {
                let Some((s, e)) = range(p.to, p.count) else {
                    continue;
                };
                match writes.iter_mut().find(|w| (w.0, w.1) == (s, e)) {
                    Some(w) if p.kind == TransferKind::Copy => w.2 = TransferKind::Copy,
                    Some(_) => {}
                    None => writes.push((s, e, p.kind)),
                }
            }
            sides.push(self.g.side(Side {
                action: Some(a),
                gpu,
                op,
                reads,
                writes,
                local,
            }));
        }
        sides
    }
}

impl Builder<'_> {
    /// Records the packets an action writes and reads at its sides.
    fn packets_of(
        &mut self,
        writes: &[(usize, std::ops::Range<usize>)],
        reads: &[(usize, std::ops::Range<usize>)],
        sides: &[usize],
        op: usize,
    ) -> Result<(), MscclError> {
        let side_on =
            |g: &Graph, gpu: usize| sides.iter().copied().find(|&s| g.sides[s].gpu == gpu);
        for (gpu, units) in writes {
            let Some(side) = side_on(&self.g, *gpu) else {
                continue;
            };
            for u in units.clone() {
                if let Some(prev) = self.packets.insert((*gpu, u), side) {
                    return err(
                        &self.g.ops[op],
                        format!("writes the packets of gpu {gpu} scratch chunk {u}, which {} wrote already: a reader cannot tell the two apart (both carry the call's flag)", self.g.describe(prev)),
                    );
                }
            }
        }
        for (gpu, units) in reads {
            if let Some(side) = side_on(&self.g, *gpu) {
                self.packet_reads.push((*gpu, units.clone(), side));
            }
        }
        Ok(())
    }

    /// A data op as its actions, in order.
    fn data(&mut self, id: usize, op: &PlanOp) -> Result<Vec<Planned>, MscclError> {
        use OpKind as K;
        let packet_op = matches!(
            op.kind,
            K::PutPackets
                | K::ReadPutPackets
                | K::ReduceSendPackets
                | K::CopyPackets
                | K::UnpackPackets
                | K::ReducePackets
                | K::ReduceCopyPackets
                | K::ReduceCopySendPackets
        );
        if packet_op && self.plan.protocol != Protocol::Ll {
            return err(
                &self.g.ops[id],
                format!("op \"{}\" in a Simple plan: the executor sizes scratch for packets only when protocol is LL (execution_plan.cc calScratchBufferSize)", op.kind.name()),
            );
        }
        self.check_shape(id, op)?;
        let (src, dst) = (&op.src, &op.dst);
        let plain = |r: Ref| At { r, packet: false };
        let pkt = |r: Ref| At { r, packet: true };
        let copies = |b: &mut Self, pairs: Vec<(At, At)>| -> Result<Planned, MscclError> {
            let mut p = Planned::default();
            for (x, y) in pairs {
                p.parts.push(b.part(x, y, TransferKind::Copy, id)?);
                if x.packet {
                    p.packet_reads
                        .push((x.r.gpu, x.r.index..x.r.index + x.r.size));
                }
                if y.packet {
                    p.packet_writes
                        .push((y.r.gpu, y.r.index..y.r.index + y.r.size));
                }
            }
            Ok(p)
        };
        // The executor reads each source of a put at its own offset in
        // src_buff[0]'s buffer (handlePut, handlePutPackets).
        let first_buf = |r: Ref| Ref {
            buf: src[0].buf,
            ..r
        };
        let steps = match op.kind {
            K::Copy => vec![copies(self, vec![(plain(src[0]), plain(dst[0]))])?],
            K::CopyPackets => vec![copies(self, vec![(plain(src[0]), pkt(dst[0]))])?],
            K::UnpackPackets => vec![copies(self, vec![(pkt(src[0]), plain(dst[0]))])?],
            K::Put | K::PutWithSignal | K::PutWithSignalAndFlush | K::PutPackets => {
                let to = if op.kind == K::PutPackets { pkt } else { plain };
                let pairs = src
                    .iter()
                    .zip(dst)
                    .map(|(s, d)| (plain(first_buf(*s)), to(*d)));
                vec![copies(self, pairs.collect())?]
            }
            K::Get => {
                let pairs = src.iter().zip(dst).map(|(s, d)| (plain(*s), plain(*d)));
                vec![copies(self, pairs.collect())?]
            }
            K::ReadPutPackets => {
                let pairs = dst.iter().map(|d| (pkt(src[0]), pkt(*d)));
                vec![copies(self, pairs.collect())?]
            }
            _ => {
                // A reduction into dst_buff[0], then its result on to the
                // rest of dst_buff.
                let from_packets = matches!(
                    op.kind,
                    K::ReducePackets
                        | K::ReduceSendPackets
                        | K::ReduceCopyPackets
                        | K::ReduceCopySendPackets
                );
                let others: Vec<At> = src[1..]
                    .iter()
                    .map(|&r| At {
                        r,
                        packet: from_packets,
                    })
                    .collect();
                let mut steps = vec![self.reduce_into(id, dst[0], src[0], &others)?];
                // The packet reductions write their result on as packets
                // (recpkt / recspkt: dst_buff[1] a local copy), the others
                // as data.
                let on: Vec<(At, At)> = dst[1..]
                    .iter()
                    .map(|&d| {
                        (
                            plain(dst[0]),
                            At {
                                r: d,
                                packet: from_packets,
                            },
                        )
                    })
                    .collect();
                if !on.is_empty() {
                    steps.push(copies(self, on)?);
                }
                steps
            }
        };
        Ok(steps)
    }

    /// `dst = base ⊕ others` as transfers: into `base` itself when `dst`
    /// is `base` (or one of `others`, taken as the base), else a local copy
    /// of `base` first.
    fn reduce_into(
        &mut self,
        id: usize,
        dst: Ref,
        base: Ref,
        others: &[At],
    ) -> Result<Planned, MscclError> {
        let same = |a: &Ref, b: &Ref| (a.gpu, a.buf, a.index) == (b.gpu, b.buf, b.index);
        let overlap = |a: &Ref, b: &Ref| {
            a.gpu == b.gpu
                && a.buf == b.buf
                && a.index < b.index + b.size
                && b.index < a.index + a.size
        };
        let plain = |r: Ref| At { r, packet: false };
        let mut all: Vec<At> = vec![plain(base)];
        all.extend_from_slice(others);
        let pos = all.iter().position(|a| !a.packet && same(&a.r, &dst));
        for a in &all {
            if !a.packet && overlap(&a.r, &dst) && !same(&a.r, &dst) {
                return err(
                    &self.g.ops[id],
                    "a source and the destination overlap in part: the reduction reads and writes the same chunks at different offsets",
                );
            }
        }
        let mut p = Planned::default();
        match pos {
            Some(i) => {
                all.remove(i);
            }
            None => {
                p.parts
                    .push(self.part(plain(base), plain(dst), TransferKind::Copy, id)?);
                all.remove(0);
            }
        }
        for a in all {
            p.parts
                .push(self.part(a, plain(dst), TransferKind::Reduce, id)?);
            if a.packet {
                p.packet_reads
                    .push((a.r.gpu, a.r.index..a.r.index + a.r.size));
            }
        }
        Ok(p)
    }

    /// Checks an op's references against what the executor does with
    /// them: enough of them, one size, local and remote where its handler
    /// reads them.
    fn check_shape(&self, id: usize, op: &PlanOp) -> Result<(), MscclError> {
        use OpKind as K;
        let at = &self.g.ops[id];
        let (src, dst) = (&op.src, &op.dst);
        let name = op.kind.name();
        if src.is_empty() || dst.is_empty() {
            return err(
                at,
                format!(
                    "op \"{name}\" needs src_buff and dst_buff, it has {} and {} entries",
                    src.len(),
                    dst.len()
                ),
            );
        }
        let size = src[0].size;
        for (field, list) in [("src_buff", src), ("dst_buff", dst)] {
            if let Some((i, r)) = list.iter().enumerate().find(|(_, r)| r.size != size) {
                return err(
                    at,
                    format!("{field}[{i}] has size {} but src_buff[0] has {size}: the executor moves src_buff[0]'s size", r.size),
                );
            }
        }
        // Which references the handler takes as remote (buffer_id).
        // Per position in src_buff / dst_buff: whether the handler takes it
        // as remote.
        type Remote = fn(usize) -> bool;
        let (src_remote, dst_remote): (Remote, Remote) = match op.kind {
            K::Copy | K::CopyPackets | K::UnpackPackets | K::Reduce | K::ReducePackets => {
                (|_| false, |_| false)
            }
            K::Put
            | K::PutWithSignal
            | K::PutWithSignalAndFlush
            | K::PutPackets
            | K::ReadPutPackets => (|_| false, |_| true),
            K::Get => (|_| true, |_| false),
            K::ReduceSend | K::ReduceSendPackets => (|_| false, |i| i > 0),
            K::ReadReduce => (|i| i > 0, |_| false),
            K::ReadReduceSend => (|i| i > 0, |i| i > 0),
            K::ReduceCopyPackets => (|_| false, |_| false),
            K::ReduceCopySendPackets => (|_| false, |i| i > 1),
            _ => (|_| false, |_| false),
        };
        for (field, list, want) in [("src_buff", src, src_remote), ("dst_buff", dst, dst_remote)] {
            for (i, r) in list.iter().enumerate() {
                if r.remote != want(i) {
                    return err(
                        at,
                        format!(
                            "{field}[{i}] names {} buffer; op \"{name}\" takes it as {} ({})",
                            if r.remote {
                                "a remote (buffer_id)"
                            } else {
                                "a local (type)"
                            },
                            if want(i) {
                                "a remote one, by buffer_id"
                            } else {
                                "a local one, by type"
                            },
                            "execution_kernel.hpp"
                        ),
                    );
                }
            }
        }
        let pairwise = matches!(
            op.kind,
            K::Put | K::PutWithSignal | K::PutWithSignalAndFlush | K::PutPackets | K::Get
        );
        if pairwise && src.len() != dst.len() {
            return err(
                at,
                format!("op \"{name}\" has {} src_buff and {} dst_buff entries: the executor pairs them one to one", src.len(), dst.len()),
            );
        }
        if op.kind == K::Get {
            if let Some((i, _)) = src
                .iter()
                .zip(dst)
                .enumerate()
                .find(|(_, (s, d))| s.index != d.index)
            {
                return err(
                    at,
                    format!("get with src_buff[{i}].index {} and dst_buff[{i}].index {}: the executor's handleGet reads at the destination's offset and writes at the source's, so the two must be equal", src[i].index, dst[i].index),
                );
            }
        }
        if matches!(op.kind, K::ReduceCopyPackets | K::ReduceCopySendPackets) && dst.len() < 2 {
            return err(
                at,
                format!("op \"{name}\" needs dst_buff[1], the local packet copy"),
            );
        }
        Ok(())
    }
}

impl Builder<'_> {
    /// Pairs each wait with the signal it meets: the k-th wait on a memory
    /// channel with the k-th signal on the peer's paired channel.
    fn pair_signals(&mut self) -> Result<(), MscclError> {
        let waits = std::mem::take(&mut self.waits);
        let signals = std::mem::take(&mut self.signals);
        let single_tb = |g: &Graph, list: &[(usize, usize)], what: &str, gpu: usize, ch: usize| {
            match list.iter().find(|x| x.1 != list[0].1) {
                Some(x) => err(
                    g.describe(x.0),
                    format!("memory channel {ch} of gpu {gpu} {what} from threadblocks {} and {}: which of them a wait meets depends on timing, which the importer does not read", list[0].1, x.1),
                ),
                None => Ok(()),
            }
        };
        let mut met: Vec<(usize, usize)> = Vec::new();
        for (&(b, j), ws) in &waits {
            single_tb(&self.g, ws, "is waited on", b, j)?;
            let ch = self.plan.gpus[b].channels[j];
            let a = ch.peer;
            let paired = self.plan.gpus[a]
                .channels
                .iter()
                .position(|c| c.peer == b && c.tag == ch.tag);
            let Some(i) = paired else {
                return err(
                    self.g.describe(ws[0].0),
                    format!("waits on memory channel {j} (to gpu {a}), but gpu {a} has no memory channel to gpu {b} paired with it (its channels to gpu {b}: {}), so no signal reaches it", self.plan.gpus[a].channels.iter().filter(|c| c.peer == b).count()),
                );
            };
            let ss = signals.get(&(a, i)).map(Vec::as_slice).unwrap_or(&[]);
            single_tb(&self.g, ss, "is signalled", a, i)?;
            if ws.len() > ss.len() {
                return err(
                    self.g.describe(ws[ss.len()].0),
                    format!("wait {} on memory channel {j} (to gpu {a}) is never met: gpu {a} signals its paired channel {i} {} (signal and rlxsignal count alike: one semaphore)", ss.len() + 1, times(ss.len())),
                );
            }
            for (w, s) in ws.iter().zip(ss) {
                self.g.edge(s.0, w.0, 0, false);
            }
            met.push((a, i));
            if ss.len() > ws.len() {
                self.notes.push(format!("gpu {a} signals memory channel {i} {}, gpu {b} waits on its side {}: the semaphore is left {} ahead for the next call", times(ss.len()), times(ws.len()), ss.len() - ws.len()));
            }
        }
        for ((a, i), ss) in &signals {
            if !met.contains(&(*a, *i)) {
                self.notes.push(format!("gpu {a} signals memory channel {i} {} and nothing waits on it: the semaphore is left {} ahead for the next call", times(ss.len()), ss.len()));
            }
        }
        Ok(())
    }

    /// Every barrier is reached by as many thread blocks as it waits for.
    fn check_barriers(&self) -> Result<(), MscclError> {
        for (&(gpu, bid, occ), (n, counts)) in &self.barriers {
            let want = counts[0];
            if counts.iter().any(|&c| c != want) || counts.len() != want {
                return err(
                    self.g.describe(*n),
                    format!("barrier {bid} of gpu {gpu} (its use number {}): {} thread blocks reach it, stating num_threadblocks {:?}; a DeviceSyncer opens when exactly that many arrive", occ + 1, counts.len(), counts),
                );
            }
        }
        Ok(())
    }

    /// Each packet read after the write of those packets.
    fn link_packets(&mut self) -> Result<(), MscclError> {
        let reads = std::mem::take(&mut self.packet_reads);
        for (gpu, units, side) in reads {
            let mut from: Vec<usize> = Vec::new();
            for u in units {
                let Some(&w) = self.packets.get(&(gpu, u)) else {
                    return err(
                        self.g.describe(side),
                        format!("reads the packets of gpu {gpu} scratch chunk {u}, which no op writes: the read waits for them forever (LL packets spin on their flag)"),
                    );
                };
                if !from.contains(&w) {
                    from.push(w);
                }
            }
            for w in from {
                self.g.edge(w, side, 0, false);
            }
        }
        Ok(())
    }

    /// Plain and packet use of scratch stay apart: packet chunk c takes the
    /// bytes of plain chunks 2c and 2c + 1 (execution_kernel.hpp shifts
    /// packet offsets left by one).
    fn check_scratch(&self) -> Result<(), MscclError> {
        for (&(gpu, c), &op) in &self.packet_scratch {
            for p in [2 * c, 2 * c + 1] {
                if let Some(&other) = self.plain_scratch.get(&(gpu, p)) {
                    return err(
                        &self.g.ops[op],
                        format!("packet chunk {c} of gpu {gpu} scratch lies on plain scratch chunk {p}, which {} uses as plain data", self.g.ops[other]),
                    );
                }
            }
        }
        Ok(())
    }
}
