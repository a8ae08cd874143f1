//! Stage 1 of the XML import: the text into a [`Program`], every attribute
//! checked against what the runtime's parser accepts
//! (Azure/msccl-executor-nccl `src/misc/msccl/msccl_parser.cc`,
//! `mscclGetAlgoFromXmlFile`).

use super::error::{err, MscclError};
use super::model::{Buf, CclAttrs, Gpu, Kind, Program, Tb, XStep, MAX_CHUNKS, MAX_GPUS, MAX_STEPS};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// An element's attributes, with where it is for the errors.
struct Attrs {
    at: String,
    map: Vec<(String, String)>,
}

impl Attrs {
    fn of(e: &BytesStart, at: String) -> Result<Attrs, MscclError> {
        let mut map = Vec::new();
        for a in e.attributes() {
            let a = match a {
                Ok(a) => a,
                Err(x) => return err(at, format!("malformed attribute: {x}")),
            };
            let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
            let value = match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
                Ok(v) => v.into_owned(),
                Err(x) => return err(at, format!("attribute {key}: {x}")),
            };
            map.push((key, value));
        }
        Ok(Attrs { at, map })
    }
    fn get(&self, key: &str) -> Option<&str> {
        self.map
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    fn str(&self, key: &str) -> Result<&str, MscclError> {
        match self.get(key) {
            Some(v) => Ok(v),
            None => err(&self.at, format!("missing attribute {key}")),
        }
    }
    fn int(&self, key: &str, lo: i64, hi: i64) -> Result<i64, MscclError> {
        let v = self.str(key)?;
        match v.trim().parse::<i64>() {
            Ok(x) if (lo..=hi).contains(&x) => Ok(x),
            _ => err(
                &self.at,
                format!("{key}=\"{v}\": expected an integer in {lo}..={hi}"),
            ),
        }
    }
    fn opt_int(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, MscclError> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.int(key, lo, hi).map(Some),
        }
    }
    fn flag(&self, key: &str) -> Result<bool, MscclError> {
        Ok(self.int(key, 0, 1)? == 1)
    }
}

/// Parses an MSCCL algorithm XML file (the runtime's format, see the module
/// doc). Comments, the XML declaration and unknown elements outside
/// `<gpu>` are skipped, as the runtime does.
///
/// Errors: [`MscclError`] naming the element, attribute, value and what is
/// allowed.
pub fn parse(xml: &str) -> Result<Program, MscclError> {
    let mut reader = Reader::from_str(xml);
    let mut b = Builder::default();
    loop {
        let ev = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => {
                return err(
                    format!("byte {}", reader.error_position()),
                    format!("not well-formed XML: {e}"),
                )
            }
        };
        match ev {
            Event::Start(e) => b.open(&e, false)?,
            Event::Empty(e) => b.open(&e, true)?,
            Event::End(e) => b.close(e.name().as_ref()),
            Event::Eof => break,
            _ => {}
        }
    }
    let Some(p) = b.program else {
        return err("file", "no <algo> element: not an MSCCL algorithm file");
    };
    check_structure(p)
}

/// The elements open while the text is read.
#[derive(Default)]
struct Builder {
    program: Option<Program>,
    gpu: Option<Gpu>,
    tb: Option<Tb>,
    steps_total: usize,
    /// Depth inside an unknown element (its content is skipped).
    depth_unknown: usize,
    /// `</algo>` was read.
    closed: bool,
}

impl Builder {
    /// A start tag (`empty`: a self-closing one).
    fn open(&mut self, e: &BytesStart, empty: bool) -> Result<(), MscclError> {
        let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
        if self.depth_unknown > 0 {
            if !empty {
                self.depth_unknown += 1;
            }
            return Ok(());
        }
        // Mutable bindings: an arm pushes into what it matched, so no
        // re-borrow of `program` / `gpu` / `tb` can find it missing.
        match (
            name.as_str(),
            &mut self.program,
            &mut self.gpu,
            &mut self.tb,
        ) {
            ("algo", None, _, _) if !self.closed => {
                let a = Attrs::of(e, "algo".into())?;
                self.program = Some(parse_algo(&a)?);
            }
            ("gpu", Some(p), None, _) => {
                let g = parse_gpu(e, p)?;
                if empty {
                    p.gpus.push(g);
                } else {
                    self.gpu = Some(g);
                }
            }
            ("tb", Some(p), Some(g), None) => {
                let t = parse_tb(e, p, g.id)?;
                if empty {
                    g.tbs.push(t);
                } else {
                    self.tb = Some(t);
                }
            }
            ("step", Some(_), Some(g), Some(t)) => {
                self.steps_total += 1;
                if self.steps_total > MAX_STEPS {
                    return err("algo", format!("more than {MAX_STEPS} steps"));
                }
                let at = format!("gpu {} / tb {} / step {}", g.id, t.id, t.steps.len());
                let a = Attrs::of(e, at)?;
                let s = parse_step(&a, g, t)?;
                t.steps.push(s);
            }
            ("op", Some(_), Some(g), Some(t)) => {
                return err(
                    format!("gpu {} / tb {}", g.id, t.id),
                    "an <op> element: this is msccl-tools' newer format, which the MSCCL runtime does not read; export with ir_to_xml(old_format=True) to get <step> elements",
                );
            }
            _ => self.unknown(&name, empty)?,
        }
        Ok(())
    }

    /// An element the runtime's parser skips with its content, unless it
    /// is one of ours out of place.
    fn unknown(&mut self, name: &str, empty: bool) -> Result<(), MscclError> {
        let inside_tb = self.program.is_some() && self.gpu.is_some() && self.tb.is_some();
        if !inside_tb && matches!(name, "gpu" | "tb" | "step" | "algo") {
            let at = match (&self.gpu, &self.tb) {
                (Some(g), Some(t)) => format!("gpu {} / tb {}", g.id, t.id),
                (Some(g), None) => format!("gpu {}", g.id),
                _ => "algo".into(),
            };
            return err(
                at,
                format!("<{name}> is not allowed here (the nesting is <algo> <gpu> <tb> <step>)"),
            );
        }
        if !empty {
            self.depth_unknown = 1;
        }
        Ok(())
    }

    /// An end tag.
    fn close(&mut self, name: &[u8]) {
        if self.depth_unknown > 0 {
            self.depth_unknown -= 1;
            return;
        }
        match name {
            b"tb" => {
                if let (Some(g), Some(t)) = (self.gpu.as_mut(), self.tb.take()) {
                    g.tbs.push(t);
                }
            }
            b"gpu" => {
                if let (Some(p), Some(g)) = (self.program.as_mut(), self.gpu.take()) {
                    p.gpus.push(g);
                }
            }
            b"algo" => self.closed = true,
            _ => {}
        }
    }
}

/// GPUs `0..ngpus` once each, thread blocks `0..` without gaps, as the
/// runtime requires.
fn check_structure(mut p: Program) -> Result<Program, MscclError> {
    p.gpus.sort_by_key(|g| g.id);
    for w in p.gpus.windows(2) {
        if w[0].id == w[1].id {
            return err(format!("gpu {}", w[0].id), "appears twice");
        }
    }
    if p.gpus.len() != p.ngpus {
        let missing = (0..p.ngpus)
            .find(|i| p.gpus.get(*i).is_none_or(|g| g.id != *i))
            .unwrap_or(0);
        return err(
            "algo",
            format!(
                "ngpus=\"{}\" but there are {} <gpu> elements (gpu {missing} is missing)",
                p.ngpus,
                p.gpus.len()
            ),
        );
    }
    for g in &mut p.gpus {
        g.tbs.sort_by_key(|t| t.id);
        for (i, t) in g.tbs.iter().enumerate() {
            if t.id != i {
                return err(
                    format!("gpu {} / tb {}", g.id, t.id),
                    format!(
                        "thread block ids must be 0..{} without gaps or repeats (the runtime refuses a missing or duplicate id)",
                        g.tbs.len()
                    ),
                );
            }
        }
    }
    Ok(p)
}

fn parse_algo(a: &Attrs) -> Result<Program, MscclError> {
    let ngpus = a.int("ngpus", 1, MAX_GPUS as i64)? as usize;
    let proto = a.str("proto")?.to_string();
    if !["Simple", "LL", "LL128"].contains(&proto.as_str()) {
        return err(
            "algo",
            format!("proto=\"{proto}\": expected Simple, LL or LL128"),
        );
    }
    let bytes_range = match (
        a.opt_int("minBytes", 0, i64::MAX)?,
        a.opt_int("maxBytes", 0, i64::MAX)?,
    ) {
        (Some(x), Some(y)) => Some((x as u64, y as u64)),
        _ => None,
    };
    let phases = match a.get("ccl_phases") {
        None => None,
        Some(v) => match serde_json::from_str::<Vec<(String, usize)>>(v) {
            Ok(x) => Some(x),
            Err(_) => {
                return err(
                    "algo",
                    format!("ccl_phases=\"{v}\": expected JSON [[phase, steps], ...]"),
                )
            }
        },
    };
    Ok(Program {
        name: a.get("name").unwrap_or("").to_string(),
        proto,
        nchannels: a.int("nchannels", 1, 32)? as usize,
        nchunksperloop: a.int("nchunksperloop", 1, MAX_CHUNKS as i64)? as usize,
        ngpus,
        coll: a.str("coll")?.to_string(),
        inplace: a.flag("inplace")?,
        outofplace: match a.get("outofplace") {
            None => None,
            Some(_) => Some(a.flag("outofplace")?),
        },
        bytes_range,
        ccl: CclAttrs {
            algorithm: a.get("ccl_algorithm").map(str::to_string),
            root: a
                .opt_int("ccl_root", 0, ngpus as i64 - 1)?
                .map(|x| x as usize),
            phases,
        },
        gpus: Vec::new(),
    })
}

fn parse_gpu(e: &BytesStart, p: &Program) -> Result<Gpu, MscclError> {
    let a = Attrs::of(e, "gpu".into())?;
    let id = a.int("id", 0, p.ngpus as i64 - 1)? as usize;
    let a = Attrs {
        at: format!("gpu {id}"),
        ..a
    };
    let mut chunks = [0usize; 3];
    for (i, k) in ["i_chunks", "o_chunks", "s_chunks"].iter().enumerate() {
        chunks[i] = a.int(k, 0, MAX_CHUNKS as i64)? as usize;
    }
    Ok(Gpu {
        id,
        chunks,
        tbs: Vec::new(),
    })
}

fn parse_tb(e: &BytesStart, p: &Program, gpu_id: usize) -> Result<Tb, MscclError> {
    let a = Attrs::of(e, format!("gpu {gpu_id}"))?;
    let id = a.int("id", 0, 65_535)? as usize;
    let a = Attrs {
        at: format!("gpu {gpu_id} / tb {id}"),
        ..a
    };
    let n = p.ngpus as i64;
    let peer = |key: &str| -> Result<Option<usize>, MscclError> {
        let v = a.int(key, -1, n - 1)?;
        if v == gpu_id as i64 {
            return err(
                &a.at,
                format!("{key}=\"{v}\": a thread block's peer cannot be its own gpu"),
            );
        }
        Ok((v >= 0).then_some(v as usize))
    };
    let send = peer("send")?;
    let recv = peer("recv")?;
    let chan = a.int("chan", 0, p.nchannels.max(1) as i64 - 1)? as usize;
    Ok(Tb {
        id,
        send,
        recv,
        chan,
        steps: Vec::new(),
    })
}

fn parse_step(a: &Attrs, g: &Gpu, t: &Tb) -> Result<XStep, MscclError> {
    let s = a.int("s", 0, 65_535)? as usize;
    if s != t.steps.len() {
        return err(
            &a.at,
            format!(
                "s=\"{s}\": steps must be numbered 0, 1, 2, ... in order (expected {})",
                t.steps.len()
            ),
        );
    }
    let ty = a.str("type")?;
    let Some(kind) = Kind::parse(ty) else {
        return err(
            &a.at,
            format!("type=\"{ty}\": expected one of s, r, rcs, rrs, rrc, rrcs, cpy, re, nop"),
        );
    };
    let buf = |key: &str| -> Result<Buf, MscclError> {
        let v = a.str(key)?;
        Buf::parse(v).ok_or_else(|| MscclError {
            at: a.at.clone(),
            what: format!("{key}=\"{v}\": expected i, o or s"),
        })
    };
    let src = (buf("srcbuf")?, a.int("srcoff", -1, MAX_CHUNKS as i64)?);
    let dst = (buf("dstbuf")?, a.int("dstoff", -1, MAX_CHUNKS as i64)?);
    let cnt = a.int("cnt", 0, MAX_CHUNKS as i64)? as usize;
    let depid = a.int("depid", -1, 65_535)?;
    let deps = a.int("deps", -1, 65_535)?;
    let hasdep = a.flag("hasdep")?;
    if kind != Kind::Nop && cnt == 0 {
        return err(&a.at, "cnt=\"0\": a transfer moves at least one chunk");
    }
    check_bounds(a, g, kind, src, dst, cnt)?;
    if kind.sends() && t.send.is_none() {
        return err(
            &a.at,
            format!("type=\"{ty}\" sends but the thread block has send=\"-1\""),
        );
    }
    if kind.recvs() && t.recv.is_none() {
        return err(
            &a.at,
            format!("type=\"{ty}\" receives but the thread block has recv=\"-1\""),
        );
    }
    let dep = match (depid, deps) {
        (-1, _) => None,
        (b, d) if b >= 0 && d >= 0 => Some((b as usize, d as usize)),
        _ => {
            return err(
                &a.at,
                format!(
                    "depid=\"{depid}\" deps=\"{deps}\": a dependency needs both (or depid=\"-1\")"
                ),
            )
        }
    };
    let hint = match (
        a.opt_int("ccl_step", 0, i64::MAX)?,
        a.opt_int("ccl_seq", 0, i64::MAX)?,
    ) {
        (Some(x), Some(y)) => Some((x as usize, y as usize)),
        _ => None,
    };
    Ok(XStep {
        s,
        kind,
        src,
        dst,
        cnt,
        dep,
        hasdep,
        hint,
    })
}

/// The chunks a step reads and writes lie in the buffers its GPU declares
/// (the runtime's `mscclCheckBufferBounds`).
fn check_bounds(
    a: &Attrs,
    g: &Gpu,
    kind: Kind,
    src: (Buf, i64),
    dst: (Buf, i64),
    cnt: usize,
) -> Result<(), MscclError> {
    let uses_src = matches!(
        kind,
        Kind::Send
            | Kind::RecvReduceSend
            | Kind::RecvReduceCopy
            | Kind::RecvReduceCopySend
            | Kind::Copy
            | Kind::Reduce
    );
    let uses_dst = matches!(
        kind,
        Kind::Recv
            | Kind::RecvCopySend
            | Kind::RecvReduceCopy
            | Kind::RecvReduceCopySend
            | Kind::Copy
            | Kind::Reduce
    );
    for (used, (b, off), what) in [(uses_src, src, "src"), (uses_dst, dst, "dst")] {
        if !used {
            continue;
        }
        let size = g.chunks[b as usize];
        if off < 0 || off as usize + cnt > size {
            return err(
                &a.at,
                format!(
                    "{what}buf=\"{}\" {what}off=\"{off}\" cnt=\"{cnt}\": chunks {off}..{} but gpu {} declares {}_chunks=\"{size}\"",
                    b.name(),
                    off + cnt as i64,
                    g.id,
                    b.name()
                ),
            );
        }
    }
    Ok(())
}
