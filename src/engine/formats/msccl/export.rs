//! A [`Schedule`] out as MSCCL algorithm XML that [`super::import`] reads
//! back to the same schedule.

use super::error::{err, MscclError};
use super::layout::{shape_of, Shape, SUPPORTED};
use super::model::{Buf, Kind, MAX_GPUS, MSCCL_MAX_TBS_PER_CHANNEL};
use crate::engine::schedule::{Schedule, TransferKind};
use std::collections::{BTreeMap, HashMap};

/// A thread block of the exported file: one per peer and direction, one
/// for local copies and reduces.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
enum TbKey {
    Send(usize),
    Recv(usize),
    Local,
}

/// One `<step>` to write (before its waits are known).
#[derive(Clone, Debug)]
struct XOp {
    step: usize,
    seq: usize,
    tb: TbKey,
    kind: Kind,
    src: (Buf, usize),
    dst: (Buf, usize),
    cnt: usize,
    /// The chunk range read at the step's start.
    reads: Option<(usize, usize)>,
    /// The chunk range written when the step applies.
    writes: Option<(usize, usize)>,
}

/// Writes `schedule` as an MSCCL algorithm file the runtime can read
/// (in place except AlltoAll; one MSCCL chunk per IR chunk; a thread block
/// per peer and direction, plus one for local copies and reduces; `depid`
/// waits (extra ones as `nop` steps, as msccl-tools does) wherever two
/// thread blocks of a GPU touch the same chunk, in the order the step
/// semantics give), with `ccl_step` / `ccl_seq` on every step and
/// `ccl_algorithm`, `ccl_root`, `ccl_phases` on `<algo>` so that
/// [`super::import`] gives back exactly `schedule`.
///
/// Errors: [`MscclError`] at `algo` for a primitive MSCCL has no layout for
/// (AlltoAllV, Barrier, SendRecv), more than [`MAX_GPUS`] ranks, or an
/// order no set of waits can express (a cycle).
pub fn export(schedule: &Schedule) -> Result<String, MscclError> {
    let n = schedule.ranks;
    let Some(shape) = shape_of(schedule.primitive) else {
        return err(
            "algo",
            format!(
                "{}: MSCCL XML has no layout for it (exportable: {SUPPORTED})",
                schedule.primitive.title()
            ),
        );
    };
    if n == 0 || n > MAX_GPUS {
        return err(
            "algo",
            format!("{n} ranks: MSCCL export takes 1..={MAX_GPUS}"),
        );
    }
    let chunks = schedule.chunks;
    let c = if shape == Shape::Pairs {
        chunks / 2
    } else {
        chunks
    };
    let per = c / n.max(1);
    let nch = (n.saturating_sub(1))
        .div_ceil(MSCCL_MAX_TBS_PER_CHANNEL)
        .max(1);
    let mut per_rank = rank_ops(schedule, shape, c)?;
    let mut out = algo_line(schedule, shape, nch, c);
    let (i_chunks, o_chunks) = match shape {
        Shape::Full => (c, 0),
        Shape::Pairs => (c, c),
        Shape::Gathered => (per, c),
        Shape::Scattered => (c, 0),
    };
    for (rank, xops) in per_rank.iter_mut().enumerate() {
        xops.sort_by_key(|x| (x.step, x.seq, x.tb));
        out.push_str(&format!(
            "  <gpu id=\"{rank}\" i_chunks=\"{i_chunks}\" o_chunks=\"{o_chunks}\" s_chunks=\"{}\">\n",
            schedule.scratch
        ));
        write_tbs(&mut out, rank, xops, nch)?;
        out.push_str("  </gpu>\n");
    }
    out.push_str("</algo>\n");
    Ok(out)
}

/// Every transfer as the steps of the ranks that take part: a send and a
/// receive (`r` or `rrc`), or a local `cpy` / `re`.
fn rank_ops(schedule: &Schedule, shape: Shape, c: usize) -> Result<Vec<Vec<XOp>>, MscclError> {
    let n = schedule.ranks;
    let chunks = schedule.chunks;
    // IR chunk -> (buffer, offset).
    let loc = |chunk: usize| -> (Buf, usize) {
        if chunk >= chunks {
            return (Buf::Scratch, chunk - chunks);
        }
        match shape {
            Shape::Full | Shape::Scattered => (Buf::Input, chunk),
            Shape::Gathered => (Buf::Output, chunk),
            Shape::Pairs if chunk < c => (Buf::Input, chunk),
            Shape::Pairs => (Buf::Output, chunk - c),
        }
    };
    let mut per_rank: Vec<Vec<XOp>> = vec![Vec::new(); n];
    for (si, st) in schedule.steps.iter().enumerate() {
        for (ti, t) in st.transfers.iter().enumerate() {
            if t.src >= n || t.dst >= n {
                return err(
                    "algo",
                    format!("step {si}, transfer {ti}: rank out of range"),
                );
            }
            let src = loc(t.first);
            let dst = loc(t.dst_first);
            let reduce = t.kind == TransferKind::Reduce;
            let op = |tb, kind, src, reads, writes| XOp {
                step: si,
                seq: ti,
                tb,
                kind,
                src,
                dst,
                cnt: t.count,
                reads,
                writes,
            };
            let read = Some((t.first, t.first + t.count));
            let write = Some((t.dst_first, t.dst_first + t.count));
            if t.src == t.dst {
                let kind = if reduce { Kind::Reduce } else { Kind::Copy };
                per_rank[t.src].push(op(TbKey::Local, kind, src, read, write));
                continue;
            }
            per_rank[t.src].push(op(TbKey::Send(t.dst), Kind::Send, src, read, None));
            let (kind, rsrc) = if reduce {
                (Kind::RecvReduceCopy, dst)
            } else {
                (Kind::Recv, src)
            };
            per_rank[t.dst].push(op(TbKey::Recv(t.src), kind, rsrc, None, write));
        }
    }
    Ok(per_rank)
}

/// The `<algo>` line, with this project's attributes.
fn algo_line(schedule: &Schedule, shape: Shape, nch: usize, c: usize) -> String {
    let n = schedule.ranks;
    let phases = {
        let mut v: Vec<(String, usize)> = Vec::new();
        for s in &schedule.steps {
            match v.last_mut() {
                Some((p, k)) if *p == s.phase => *k += 1,
                _ => v.push((s.phase.clone(), 1)),
            }
        }
        serde_json::to_string(&v).unwrap_or_else(|_| "[]".into())
    };
    let esc = |s: &str| quick_xml::escape::escape(s).into_owned();
    let (inplace, outofplace) = if shape == Shape::Pairs {
        (0, 1)
    } else {
        (1, 0)
    };
    format!(
        "<algo name=\"{}\" proto=\"Simple\" nchannels=\"{nch}\" nchunksperloop=\"{c}\" ngpus=\"{n}\" coll=\"{}\" inplace=\"{inplace}\" outofplace=\"{outofplace}\" minBytes=\"0\" maxBytes=\"1099511627776\" ccl_algorithm=\"{}\" ccl_root=\"{}\" ccl_phases=\"{}\">\n",
        esc(&schedule.algorithm),
        schedule.primitive.name(),
        esc(&schedule.algorithm),
        schedule.root,
        esc(&phases),
    )
}

/// The waits of one rank's ops: per op, the ops of other thread blocks it
/// must wait for (the latest of each), from the conflicting accesses in
/// the order the step semantics give.
fn rank_waits(
    rank: usize,
    xops: &[XOp],
    idx_in_tb: &[usize],
) -> Result<Vec<Vec<usize>>, MscclError> {
    // Accesses ordered by (step, phase, seq): phase 0 = read at the
    // step's start, 1 = apply.
    let mut acc: Vec<((usize, usize, usize), usize, bool, (usize, usize))> = Vec::new();
    for (i, x) in xops.iter().enumerate() {
        if let Some(r) = x.reads {
            acc.push(((x.step, 0, x.seq), i, false, r));
        }
        if let Some(w) = x.writes {
            acc.push(((x.step, 1, x.seq), i, true, w));
        }
    }
    acc.sort_by_key(|a| (a.0, a.1));
    // Per chunk: last writer, readers since.
    let mut last_w: HashMap<usize, usize> = HashMap::new();
    let mut readers: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut waits: Vec<Vec<usize>> = vec![Vec::new(); xops.len()];
    for (_, i, is_w, (a, b)) in &acc {
        for ch in *a..*b {
            if let Some(&w) = last_w.get(&ch) {
                if w != *i {
                    waits[*i].push(w);
                }
            }
            if *is_w {
                for &r in readers.get(&ch).map(|v| v.as_slice()).unwrap_or(&[]) {
                    if r != *i {
                        waits[*i].push(r);
                    }
                }
                readers.remove(&ch);
                last_w.insert(ch, *i);
            } else {
                readers.entry(ch).or_default().push(*i);
            }
        }
    }
    // Keep, per other thread block, the latest op waited for.
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); xops.len()];
    for (i, w) in waits.iter().enumerate() {
        let mut best: BTreeMap<TbKey, usize> = BTreeMap::new();
        for &j in w {
            if xops[j].tb == xops[i].tb {
                if idx_in_tb[j] > idx_in_tb[i] {
                    return err(
                        format!("gpu {rank}"),
                        format!("step {}: the step semantics order two operations of one thread block against its own order", xops[i].step),
                    );
                }
                continue;
            }
            let e = best.entry(xops[j].tb).or_insert(j);
            if idx_in_tb[j] > idx_in_tb[*e] {
                *e = j;
            }
        }
        deps[i] = best.into_values().collect();
    }
    Ok(deps)
}

/// Whether thread-block order and `deps` leave every op able to run.
fn acyclic(xops: &[XOp], deps: &[Vec<usize>]) -> bool {
    let m = xops.len();
    let mut indeg = vec![0usize; m];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut by_tb: HashMap<TbKey, Vec<usize>> = HashMap::new();
    for (i, x) in xops.iter().enumerate() {
        by_tb.entry(x.tb).or_default().push(i);
    }
    for v in by_tb.values() {
        for w in v.windows(2) {
            succ[w[0]].push(w[1]);
            indeg[w[1]] += 1;
        }
    }
    for (i, d) in deps.iter().enumerate() {
        for &j in d {
            succ[j].push(i);
            indeg[i] += 1;
        }
    }
    let mut q: Vec<usize> = (0..m).filter(|&i| indeg[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = q.pop() {
        seen += 1;
        for &b in &succ[i] {
            indeg[b] -= 1;
            if indeg[b] == 0 {
                q.push(b);
            }
        }
    }
    seen == m
}

/// Writes one rank's thread blocks (its ops sorted by step and position).
fn write_tbs(out: &mut String, rank: usize, xops: &[XOp], nch: usize) -> Result<(), MscclError> {
    let chan = |a: usize, b: usize| (a + b) % nch;
    // Thread blocks: sends by peer, receives by peer, then local.
    let mut keys: Vec<TbKey> = xops.iter().map(|x| x.tb).collect();
    keys.sort();
    keys.dedup();
    let tb_of: HashMap<TbKey, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    // Index of each op within its thread block.
    let mut idx_in_tb = vec![0usize; xops.len()];
    let mut count_in: HashMap<TbKey, usize> = HashMap::new();
    for (i, x) in xops.iter().enumerate() {
        let e = count_in.entry(x.tb).or_insert(0);
        idx_in_tb[i] = *e;
        *e += 1;
    }
    let deps = rank_waits(rank, xops, &idx_in_tb)?;
    // Cycles among waits would deadlock the runtime.
    if !acyclic(xops, &deps) {
        return err(
            format!("gpu {rank}"),
            "the schedule's local reads and writes need waits that form a cycle; MSCCL would deadlock",
        );
    }
    // XML step numbers (nops for extra waits come first).
    let mut s_of = vec![0usize; xops.len()];
    let mut next_s: HashMap<TbKey, usize> = HashMap::new();
    for (i, x) in xops.iter().enumerate() {
        let e = next_s.entry(x.tb).or_insert(0);
        *e += deps[i].len().saturating_sub(1);
        s_of[i] = *e;
        *e += 1;
    }
    let mut hasdep = vec![false; xops.len()];
    for d in &deps {
        for &j in d {
            hasdep[j] = true;
        }
    }
    for (tbi, key) in keys.iter().enumerate() {
        let (send, recv, ch) = match *key {
            TbKey::Send(p) => (p as i64, -1i64, chan(rank, p)),
            TbKey::Recv(p) => (-1, p as i64, chan(p, rank)),
            TbKey::Local => (-1, -1, 0),
        };
        out.push_str(&format!(
            "    <tb id=\"{tbi}\" send=\"{send}\" recv=\"{recv}\" chan=\"{ch}\">\n"
        ));
        for (i, x) in xops.iter().enumerate().filter(|(_, x)| x.tb == *key) {
            let mut ds = deps[i].clone();
            ds.sort_by_key(|&j| (tb_of[&xops[j].tb], s_of[j]));
            let first = ds.first().copied();
            let mut s = s_of[i] + 1 - ds.len().max(1);
            for &j in ds.iter().skip(1) {
                out.push_str(&format!(
                    "      <step s=\"{s}\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" depid=\"{}\" deps=\"{}\" hasdep=\"0\" ccl_step=\"{}\" ccl_seq=\"{}\"/>\n",
                    tb_of[&xops[j].tb], s_of[j], x.step, x.seq
                ));
                s += 1;
            }
            let (depid, depstep) = match first {
                Some(j) => (tb_of[&xops[j].tb] as i64, s_of[j] as i64),
                None => (-1, -1),
            };
            out.push_str(&format!(
                "      <step s=\"{}\" type=\"{}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" dstoff=\"{}\" cnt=\"{}\" depid=\"{depid}\" deps=\"{depstep}\" hasdep=\"{}\" ccl_step=\"{}\" ccl_seq=\"{}\"/>\n",
                s_of[i],
                x.kind.name(),
                x.src.0.name(),
                x.src.1,
                x.dst.0.name(),
                x.dst.1,
                x.cnt,
                u8::from(hasdep[i]),
                x.step,
                x.seq
            ));
        }
        out.push_str("    </tb>\n");
    }
    Ok(())
}
