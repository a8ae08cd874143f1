//! Stage 1 of the plan import: the JSON into a [`Plan`], every field
//! checked against what the executor's parser reads (microsoft/mscclpp
//! `src/core/executor/execution_plan.cc`), every reference resolved to the
//! GPU and buffer it names.

use super::{Channel, OpKind, Plan, PlanGpu, PlanOp, PlanTb, Ref};
use crate::engine::formats::msccl::error::{err, MscclError};
use crate::engine::formats::msccl::model::{Buf, MAX_CHUNKS, MAX_GPUS, MAX_STEPS};
use crate::engine::formats::msccl::protocol::protocol_of;
use crate::engine::formats::msccl::protocol::Protocol;
use serde_json::{Map, Value};

/// A JSON object with where it is, for the errors.
struct Obj<'a> {
    at: String,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    fn of(v: &'a Value, at: String) -> Result<Obj<'a>, MscclError> {
        match v.as_object() {
            Some(map) => Ok(Obj { at, map }),
            None => err(at, format!("expected an object, found {}", kind(v))),
        }
    }
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }
    fn need(&self, key: &str) -> Result<&'a Value, MscclError> {
        match self.map.get(key) {
            Some(v) => Ok(v),
            None => err(&self.at, format!("missing field {key}")),
        }
    }
    fn str(&self, key: &str) -> Result<&'a str, MscclError> {
        let v = self.need(key)?;
        match v.as_str() {
            Some(s) => Ok(s),
            None => err(
                &self.at,
                format!("{key}: expected a string, found {}", kind(v)),
            ),
        }
    }
    fn uint(&self, key: &str, hi: usize) -> Result<usize, MscclError> {
        let v = self.need(key)?;
        uint_of(v, hi).ok_or_else(|| MscclError {
            at: self.at.clone(),
            what: format!("{key}={v}: expected an integer in 0..={hi}"),
        })
    }
    fn bool(&self, key: &str) -> Result<bool, MscclError> {
        let v = self.need(key)?;
        match v.as_bool() {
            Some(b) => Ok(b),
            None => err(&self.at, format!("{key}={v}: expected true or false")),
        }
    }
    fn arr(&self, key: &str) -> Result<&'a [Value], MscclError> {
        let v = self.need(key)?;
        self.arr_of(key, v)
    }
    /// An array that may be left out (the executor iterates a missing one
    /// as empty).
    fn opt_arr(&self, key: &str) -> Result<&'a [Value], MscclError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(v) => self.arr_of(key, v),
        }
    }
    fn arr_of(&self, key: &str, v: &'a Value) -> Result<&'a [Value], MscclError> {
        match v.as_array() {
            Some(a) => Ok(a.as_slice()),
            None => err(
                &self.at,
                format!("{key}: expected an array, found {}", kind(v)),
            ),
        }
    }
    /// An array of integers in `0..=hi`.
    fn uints(&self, key: &str, hi: usize) -> Result<Vec<usize>, MscclError> {
        self.arr(key)?
            .iter()
            .map(|v| {
                uint_of(v, hi).ok_or_else(|| MscclError {
                    at: self.at.clone(),
                    what: format!("{key}: {v} is not an integer in 0..={hi}"),
                })
            })
            .collect()
    }
}

fn uint_of(v: &Value, hi: usize) -> Option<usize> {
    v.as_u64()
        .and_then(|x| usize::try_from(x).ok())
        .filter(|&x| x <= hi)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn buf_of(o: &Obj<'_>, key: &str) -> Result<Buf, MscclError> {
    let v = o.str(key)?;
    match v {
        "i" => Ok(Buf::Input),
        "o" => Ok(Buf::Output),
        "s" => Ok(Buf::Scratch),
        _ => err(&o.at, format!("{key}=\"{v}\": expected i, o or s")),
    }
}

/// Parses an MSCCL++ execution plan (the current schema, module doc).
///
/// Errors: [`MscclError`] naming the element (`plan`, `gpu 1`, `gpu 1 /
/// threadblock 3 / op 5`), the field, its value and what is allowed.
pub fn parse(json: &str) -> Result<Plan, MscclError> {
    let v: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => return err("file", format!("not valid JSON: {e}")),
    };
    let top = Obj::of(&v, "plan".into())?;
    if top.get("gpus").is_none() {
        return err(
            "plan",
            "no gpus field: not an MSCCL++ execution plan (name, collective, protocol, inplace, gpus)",
        );
    }
    let protocol = match top.str("protocol")? {
        p @ ("Simple" | "LL") => protocol_of(p).unwrap_or(Protocol::Simple),
        p => return err("plan", format!("protocol=\"{p}\": expected Simple or LL")),
    };
    let gpus_v = top.arr("gpus")?;
    let n = gpus_v.len();
    if n == 0 || n > MAX_GPUS {
        return err(
            "plan",
            format!("gpus: {n} GPUs; the importer reads 1..={MAX_GPUS}"),
        );
    }
    let message_sizes = match (top.get("min_message_size"), top.get("max_message_size")) {
        (Some(lo), Some(hi)) => lo.as_u64().zip(hi.as_u64()),
        _ => None,
    };
    // First the GPUs' channels and buffers: a thread block's references
    // name other GPUs' buffers.
    let mut gpus = Vec::with_capacity(n);
    for (k, g) in gpus_v.iter().enumerate() {
        gpus.push(parse_gpu(g, k, n)?);
    }
    let mut total_ops = 0usize;
    for (k, g) in gpus_v.iter().enumerate() {
        let o = Obj::of(g, format!("gpu {k}"))?;
        let mut tbs = Vec::new();
        for (t, tb) in o.arr("threadblocks")?.iter().enumerate() {
            let tb = parse_tb(tb, k, t, &gpus)?;
            total_ops += tb.ops.len();
            if total_ops > MAX_STEPS {
                return err("plan", format!("more than {MAX_STEPS} ops"));
            }
            tbs.push(tb);
        }
        gpus[k].threadblocks = tbs;
    }
    Ok(Plan {
        name: top.str("name")?.to_string(),
        collective: top.str("collective")?.to_string(),
        protocol,
        inplace: top.bool("inplace")?,
        message_sizes,
        gpus,
    })
}

/// A GPU's header, channels and remote buffers (its thread blocks come
/// once every GPU's buffers are known).
fn parse_gpu(g: &Value, k: usize, n: usize) -> Result<PlanGpu, MscclError> {
    let o = Obj::of(g, format!("gpu {k}"))?;
    if o.get("inputChunks").is_some() || o.get("chunkGroups").is_some() {
        return err(
            &o.at,
            "inputChunks / chunkGroups: the older MSCCL++ plan schema; the importer reads the current one (input_chunks, threadblocks with src_buff / dst_buff / channel_type), as mscclpp's execution_plan.cc does",
        );
    }
    let id = o.uint("id", MAX_GPUS)?;
    if id != k {
        return err(
            &o.at,
            format!("id={id}: the executor reads gpus[{k}] as gpu {k} (its id must be {k})"),
        );
    }
    let mut chunks = [0usize; 3];
    for (i, key) in ["input_chunks", "output_chunks", "scratch_chunks"]
        .iter()
        .enumerate()
    {
        chunks[i] = o.uint(key, MAX_CHUNKS)?;
    }
    let mut channels = Vec::new();
    let mut port_channels = 0;
    let mut per_peer = vec![0usize; n];
    for (ci, c) in o.opt_arr("channels")?.iter().enumerate() {
        let c = Obj::of(c, format!("gpu {k} / channels[{ci}]"))?;
        match c.str("channel_type")? {
            "memory" => {
                for peer in c.uints("connected_to", n.saturating_sub(1))? {
                    if peer == k {
                        return err(&c.at, format!("connected_to: {peer} is the GPU itself"));
                    }
                    channels.push(Channel {
                        peer,
                        tag: per_peer[peer],
                    });
                    per_peer[peer] += 1;
                }
            }
            "port" => port_channels += c.arr("connected_to")?.len(),
            "switch" => {}
            t => {
                return err(
                    &c.at,
                    format!("channel_type=\"{t}\": expected memory, port or switch"),
                )
            }
        }
    }
    let mut remote_buffers = Vec::new();
    for (bi, b) in o.opt_arr("remote_buffers")?.iter().enumerate() {
        let b = Obj::of(b, format!("gpu {k} / remote_buffers[{bi}]"))?;
        let rank = b.uint("rank", n.saturating_sub(1))?;
        let buf = buf_of(&b, "type")?;
        let memory = b
            .arr("access_channel_types")?
            .iter()
            .any(|t| t.as_str() == Some("memory"));
        remote_buffers.push((rank, buf, memory));
    }
    Ok(PlanGpu {
        id,
        chunks,
        channels,
        port_channels,
        remote_buffers,
        threadblocks: Vec::new(),
    })
}

/// A thread block: its channels and remote buffers, then its ops.
fn parse_tb(tb: &Value, k: usize, t: usize, gpus: &[PlanGpu]) -> Result<PlanTb, MscclError> {
    let o = Obj::of(tb, format!("gpu {k} / threadblock {t}"))?;
    let gpu = &gpus[k];
    let id = o.uint("id", 65_535)?;
    if id != t {
        return err(
            &o.at,
            format!("id={id}: the executor indexes thread blocks by their place in the array (its id must be {t})"),
        );
    }
    let mut channels = Vec::new();
    for c in o.opt_arr("channels")? {
        let c = Obj::of(c, o.at.clone())?;
        if c.str("channel_type")? == "memory" {
            for ch in c.uints("channel_ids", 65_535)? {
                if ch >= gpu.channels.len() {
                    return err(
                        &c.at,
                        format!(
                            "channel_ids: memory channel {ch} but gpu {k} has {}",
                            gpu.channels.len()
                        ),
                    );
                }
                channels.push(ch);
            }
        }
    }
    let mut buffers = Vec::new();
    for r in o.opt_arr("remote_buffer_refs")? {
        let r = Obj::of(r, o.at.clone())?;
        if r.str("access_channel_type")? != "memory" {
            continue;
        }
        for b in r.uints("remote_buffer_ids", 65_535)? {
            match gpu.remote_buffers.get(b) {
                Some(&(_, _, true)) => buffers.push(b),
                Some(_) => {
                    return err(
                        &r.at,
                        format!("remote_buffer_ids: buffer {b} of gpu {k} is not reachable over memory channels (its access_channel_types)"),
                    )
                }
                None => {
                    return err(
                        &r.at,
                        format!(
                            "remote_buffer_ids: buffer {b} but gpu {k} has {} remote_buffers",
                            gpu.remote_buffers.len()
                        ),
                    )
                }
            }
        }
    }
    let mut tb = PlanTb {
        id,
        channels,
        buffers,
        ops: Vec::new(),
    };
    for (i, op) in o.arr("ops")?.iter().enumerate() {
        let op = parse_op(
            op,
            format!("gpu {k} / threadblock {t} / op {i}"),
            k,
            &tb,
            gpus,
        )?;
        tb.ops.push(op);
    }
    Ok(tb)
}

fn parse_op(
    v: &Value,
    at: String,
    k: usize,
    tb: &PlanTb,
    gpus: &[PlanGpu],
) -> Result<PlanOp, MscclError> {
    let o = Obj::of(v, at)?;
    if ["i_buff", "o_buff", "ctype", "srcs", "dsts"]
        .iter()
        .any(|f| o.get(f).is_some())
    {
        return err(
            &o.at,
            "i_buff / o_buff / ctype: the older MSCCL++ plan schema; the importer reads the current one (src_buff, dst_buff, channel_type), as mscclpp's execution_plan.cc does",
        );
    }
    let name = o.str("name")?;
    let Some(kind) = OpKind::parse(name) else {
        let names: Vec<&str> = OpKind::ALL.iter().map(|x| x.0).collect();
        return err(
            &o.at,
            format!(
                "name=\"{name}\": not an executor operation (execution_plan.cc getOpType: {})",
                names.join(", ")
            ),
        );
    };
    not_read(&o, kind)?;
    let mut src = Vec::new();
    for (i, r) in o.opt_arr("src_buff")?.iter().enumerate() {
        src.push(parse_ref(r, &o, &format!("src_buff[{i}]"), k, tb, gpus)?);
    }
    let mut dst = Vec::new();
    for (i, r) in o.opt_arr("dst_buff")?.iter().enumerate() {
        dst.push(parse_ref(r, &o, &format!("dst_buff[{i}]"), k, tb, gpus)?);
    }
    let mut channels = Vec::new();
    if o.get("channel_ids").is_some() {
        for c in o.uints("channel_ids", 65_535)? {
            match tb.channels.get(c) {
                Some(&ch) => channels.push(ch),
                None => {
                    return err(
                        &o.at,
                        format!(
                            "channel_ids: {c} but the thread block has {} memory channels",
                            tb.channels.len()
                        ),
                    )
                }
            }
        }
    }
    let barrier = match o.get("barrier_id") {
        None => None,
        Some(_) => Some((
            o.uint("barrier_id", 65_535)?,
            o.uint("num_threadblocks", 65_535)?,
        )),
    };
    Ok(PlanOp {
        kind,
        src,
        dst,
        channels,
        barrier,
    })
}

/// Refuses what the importer does not read, naming it.
fn not_read(o: &Obj<'_>, kind: OpKind) -> Result<(), MscclError> {
    let why = match kind {
        OpKind::Pipeline => Some("a pipelined loop over inner ops (iter_context)"),
        OpKind::MultiLoadReduceStore | OpKind::MultiStore | OpKind::MultiStorePackets => {
            Some("multimem loads and stores through an NVLink switch (switch channels)")
        }
        OpKind::SemAcquire | OpKind::SemRelease => Some("device semaphores"),
        OpKind::Flush => Some("port channels (the proxy's asynchronous puts and signals)"),
        _ => None,
    };
    if let Some(why) = why {
        return err(
            &o.at,
            format!(
                "op \"{}\" ({why}): the importer does not read it",
                kind.name()
            ),
        );
    }
    if o.get("tbg_info").is_some() {
        return err(
            &o.at,
            format!("op \"{}\" with tbg_info (an operation split across a group of thread blocks): the importer does not read it", kind.name()),
        );
    }
    match o.get("channel_type").and_then(Value::as_str) {
        Some(t @ ("port" | "switch")) => err(
            &o.at,
            format!(
                "op \"{}\" over channel_type \"{t}\" ({} channels): the importer does not read it",
                kind.name(),
                if t == "port" {
                    "port (the proxy's asynchronous puts and signals)"
                } else {
                    "switch (NVLink multimem)"
                }
            ),
        ),
        Some("memory" | "none") | None => Ok(()),
        Some(t) => err(
            &o.at,
            format!("channel_type=\"{t}\": expected memory, port, switch or none"),
        ),
    }
}

/// A buffer reference: `{type, index, size}` on the GPU itself or
/// `{buffer_id, index, size}` on another, with its chunks in the buffer.
fn parse_ref(
    v: &Value,
    op: &Obj<'_>,
    field: &str,
    k: usize,
    tb: &PlanTb,
    gpus: &[PlanGpu],
) -> Result<Ref, MscclError> {
    let o = Obj::of(v, format!("{} / {field}", op.at))?;
    let index = o.uint("index", MAX_CHUNKS)?;
    let size = o.uint("size", MAX_CHUNKS)?;
    let (gpu, buf, remote) = if o.get("buffer_id").is_some() {
        let b = o.uint("buffer_id", 65_535)?;
        let Some(&gb) = tb.buffers.get(b) else {
            return err(
                &o.at,
                format!(
                    "buffer_id={b}: the thread block has {} remote buffers over memory channels (remote_buffer_refs)",
                    tb.buffers.len()
                ),
            );
        };
        let (rank, buf, _) = gpus[k].remote_buffers[gb];
        (rank, buf, true)
    } else if o.get("switch_channel_id").is_some() {
        return err(
            &o.at,
            "switch_channel_id (an NVLink multimem buffer): the importer does not read it",
        );
    } else {
        (k, buf_of(&o, "type")?, false)
    };
    let have = gpus[gpu].chunks[buf as usize];
    if size == 0 || index + size > have {
        let what = ["input_chunks", "output_chunks", "scratch_chunks"][buf as usize];
        return err(
            &o.at,
            format!(
                "index={index} size={size}: chunks {index}..{} but gpu {gpu} declares {what}={have} (and a reference moves at least one chunk)",
                index + size
            ),
        );
    }
    Ok(Ref {
        gpu,
        buf,
        index,
        size,
        remote,
    })
}
