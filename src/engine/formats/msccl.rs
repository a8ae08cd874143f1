//! MSCCL algorithm XML in and out.
//!
//! ## The format (what the MSCCL runtime reads)
//! The runtime's parser (Azure/msccl-executor-nccl
//! `src/misc/msccl/msccl_parser.cc`, `mscclGetAlgoFromXmlFile`) and
//! interpreter (`src/device/msccl_kernel.cu`, `mscclRunInterpreter`) define
//! it; msccl-tools writes it (microsoft/msccl-tools
//! `msccl/language/ir.py`, `ir_to_xml` with `old_format=True`):
//!
//! ```text
//! <algo name proto nchannels nchunksperloop ngpus coll inplace [outofplace minBytes maxBytes]>
//!   <gpu id i_chunks o_chunks s_chunks>
//!     <tb id send recv chan>
//!       <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>
//! ```
//!
//! Every buffer (`i` input, `o` output, `s` scratch) is cut into chunks of
//! `count · sizeMultiplier / nchunksperloop` elements (the runtime only
//! picks the algorithm when that divides evenly, `msccl_lifecycle.cc`). A
//! thread block runs its steps in order; a step with `depid = b, deps = d`
//! first waits until thread block `b` has finished a step `>= d` that has
//! `hasdep = 1` (the flag it sets); `nop` steps only add such waits. A send
//! on thread block `(gpu a, send = b, chan c)` is received, in order, by
//! the thread block `(gpu b, recv = a, chan c)`. Step types: `s` send src;
//! `r` receive into dst; `rcs` receive into dst and send it on; `rrs`
//! receive, reduce with src, send the result on (nothing stored); `rrc`
//! receive, reduce with src, store in dst; `rrcs` both; `cpy` local copy;
//! `re` local reduce of src into dst; `nop`.
//!
//! ## Mapping onto the Schedule IR
//! - **Chunks.** Each MSCCL chunk becomes `m` consecutive IR chunks, the
//!   fewest that make the collective's buffer a whole number of its blocks.
//!   The collective's buffer is the in-place one: `i` for AllReduce,
//!   Broadcast, Reduce, ReduceScatter, Scatter; `o` for AllGather, Gather;
//!   `i` then `o` for AlltoAll (our send and receive areas). In place, the
//!   other buffer aliases its part of it (`o` of rank r = block r of `i` for
//!   ReduceScatter, as the runtime's in-place test says). Out of place, the
//!   extra buffer lives in scratch chunks ([`Schedule::scratch`]) and a last
//!   local step copies it into place (an in-place AlltoAll: a first local
//!   step copies the send area into the receive area, where the program
//!   then works). MSCCL's `s` buffer and one temporary per `rrs` in flight
//!   are scratch chunks too.
//! - **Operations.** A send and its matching receive are one IR transfer.
//!   `rcs` / `rrs` / `rrcs` forward in a later step what they stored (`rrs`
//!   into a temporary); `rrc` with a separate source is a local copy of the
//!   source then the reduce, in one step; `cpy` / `re` are local transfers
//!   (`src == dst`).
//! - **Steps.** Operations are placed as early as their order allows
//!   (thread-block order, `depid` waits, the matching send): an operation
//!   goes in the same step as one it waits for when the step semantics
//!   already order them (it sends nothing the other writes and their writes
//!   are reduces, applied in listed order), else in a later step. A cycle
//!   is a deadlock and an error. A file written by [`export`] carries each
//!   step's IR step and position (`ccl_step`, `ccl_seq`, attributes the
//!   runtime ignores: its parser keeps up to 16 attributes per element)
//!   and the schedule's phases on `<algo>`; those are used when every
//!   operation has them and they respect the order, so a schedule
//!   round-trips exactly.
//!
//! The IR is verified like any schedule; a racy program (two unordered
//! operations on one chunk) has several outcomes and one legal
//! interleaving is what is verified.
//!
//! Errors name the element (`gpu 3 / tb 1 / step 4`), the attribute, the
//! value and what is allowed.

use crate::engine::collective::Primitive;
use crate::engine::schedule::{Schedule, Step, Transfer, TransferKind};
use quick_xml::events::Event;
use quick_xml::Reader;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fmt;

/// Most GPUs an imported program may have (the page's drawn-rank limit).
pub const MAX_GPUS: usize = 64;
/// Most `<step>` elements in a file.
pub const MAX_STEPS: usize = 200_000;
/// Most chunks per buffer (`nchunksperloop`, `i/o/s_chunks`).
pub const MAX_CHUNKS: usize = 65_536;
/// The runtime's limits (msccl_struct.h): `cnt < MSCCL_MAX_COUNT`.
pub const MSCCL_MAX_COUNT: usize = 72;
/// Thread blocks per channel with a send (or a receive) peer
/// (`MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL`).
pub const MSCCL_MAX_TBS_PER_CHANNEL: usize = 32;

/// An import or export error: where (`gpu 3 / tb 1 / step 4`, `algo`) and
/// what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MscclError {
    /// The element, e.g. `gpu 3 / tb 1 / step 4`.
    pub at: String,
    /// What is wrong, with the value and what is allowed.
    pub what: String,
}

impl fmt::Display for MscclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.what)
    }
}

impl std::error::Error for MscclError {}

fn err<T>(at: impl Into<String>, what: impl Into<String>) -> Result<T, MscclError> {
    Err(MscclError {
        at: at.into(),
        what: what.into(),
    })
}

/// An MSCCL buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Buf {
    /// `i`: the input.
    Input,
    /// `o`: the output.
    Output,
    /// `s`: scratch.
    Scratch,
}

impl Buf {
    fn parse(s: &str) -> Option<Buf> {
        match s {
            "i" => Some(Buf::Input),
            "o" => Some(Buf::Output),
            "s" => Some(Buf::Scratch),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Buf::Input => "i",
            Buf::Output => "o",
            Buf::Scratch => "s",
        }
    }
}

/// A step type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `s`
    Send,
    /// `r`
    Recv,
    /// `rcs`
    RecvCopySend,
    /// `rrs`
    RecvReduceSend,
    /// `rrc`
    RecvReduceCopy,
    /// `rrcs`
    RecvReduceCopySend,
    /// `cpy`
    Copy,
    /// `re`
    Reduce,
    /// `nop`
    Nop,
}

impl Kind {
    const ALL: [(&'static str, Kind); 9] = [
        ("s", Kind::Send),
        ("r", Kind::Recv),
        ("rcs", Kind::RecvCopySend),
        ("rrs", Kind::RecvReduceSend),
        ("rrc", Kind::RecvReduceCopy),
        ("rrcs", Kind::RecvReduceCopySend),
        ("cpy", Kind::Copy),
        ("re", Kind::Reduce),
        ("nop", Kind::Nop),
    ];
    fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.iter().find(|(n, _)| *n == s).map(|&(_, k)| k)
    }
    /// The XML name (`s`, `rrcs`, ...).
    pub fn name(self) -> &'static str {
        Kind::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }
    fn sends(self) -> bool {
        matches!(
            self,
            Kind::Send | Kind::RecvCopySend | Kind::RecvReduceSend | Kind::RecvReduceCopySend
        )
    }
    fn recvs(self) -> bool {
        matches!(
            self,
            Kind::Recv
                | Kind::RecvCopySend
                | Kind::RecvReduceSend
                | Kind::RecvReduceCopy
                | Kind::RecvReduceCopySend
        )
    }
}

/// One `<step>`.
#[derive(Clone, Debug, PartialEq)]
pub struct XStep {
    /// `s`: its index in the thread block.
    pub s: usize,
    /// `type`.
    pub kind: Kind,
    /// `srcbuf`, `srcoff`.
    pub src: (Buf, i64),
    /// `dstbuf`, `dstoff`.
    pub dst: (Buf, i64),
    /// `cnt`.
    pub cnt: usize,
    /// `depid`, `deps` (-1 for none).
    pub dep: Option<(usize, usize)>,
    /// `hasdep`.
    pub hasdep: bool,
    /// `ccl_step`, `ccl_seq` (written by [`export`]).
    pub hint: Option<(usize, usize)>,
}

/// One `<tb>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Tb {
    /// `id`.
    pub id: usize,
    /// `send` peer.
    pub send: Option<usize>,
    /// `recv` peer.
    pub recv: Option<usize>,
    /// `chan`.
    pub chan: usize,
    /// Its steps, in order.
    pub steps: Vec<XStep>,
}

/// One `<gpu>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpu {
    /// `id`.
    pub id: usize,
    /// `i_chunks`, `o_chunks`, `s_chunks`.
    pub chunks: [usize; 3],
    /// Its thread blocks, by id.
    pub tbs: Vec<Tb>,
}

/// A parsed `<algo>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// `name`.
    pub name: String,
    /// `proto` (Simple, LL, LL128).
    pub proto: String,
    /// `nchannels`.
    pub nchannels: usize,
    /// `nchunksperloop`.
    pub nchunksperloop: usize,
    /// `ngpus`.
    pub ngpus: usize,
    /// `coll`.
    pub coll: String,
    /// `inplace`.
    pub inplace: bool,
    /// `outofplace` (absent in older files).
    pub outofplace: Option<bool>,
    /// `minBytes`, `maxBytes` (absent in older files).
    pub bytes_range: Option<(u64, u64)>,
    /// `ccl_algorithm`, `ccl_root`, `ccl_phases` (written by [`export`]).
    pub ccl: CclAttrs,
    /// The GPUs, by id.
    pub gpus: Vec<Gpu>,
}

/// This project's extra `<algo>` attributes (the runtime ignores them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CclAttrs {
    /// `ccl_algorithm`: the schedule's algorithm name.
    pub algorithm: Option<String>,
    /// `ccl_root`: the root of a rooted collective.
    pub root: Option<usize>,
    /// `ccl_phases`: JSON `[[phase, steps], ...]`.
    pub phases: Option<Vec<(String, usize)>>,
}

/// An imported program: the schedule and what the summary says about it.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The schedule (verify it with [`crate::engine::verify::verify`]).
    pub schedule: Schedule,
    /// The parsed file.
    pub program: Program,
    /// `origins[step][transfer]`: the `<step>` each IR transfer comes from
    /// (`gpu 3 / tb 1 / step 4`; the receiving side of a message).
    pub origins: Vec<Vec<String>>,
    /// IR chunks per MSCCL chunk.
    pub chunk_factor: usize,
    /// Thread blocks over all GPUs.
    pub thread_blocks: usize,
    /// `<step>` elements (nops included).
    pub xml_steps: usize,
    /// Remarks: out-of-place copies, the runtime's limits, hints ignored.
    pub notes: Vec<String>,
}

// ---------------------------------------------------------------- parsing

struct Attrs {
    at: String,
    map: Vec<(String, String)>,
}

impl Attrs {
    fn of(e: &quick_xml::events::BytesStart, at: String) -> Result<Attrs, MscclError> {
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
    let mut program: Option<Program> = None;
    let mut gpu: Option<Gpu> = None;
    let mut tb: Option<Tb> = None;
    let mut steps_total = 0usize;
    let mut depth_unknown = 0usize;
    let mut closed = false;
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
        let (start, empty) = match &ev {
            Event::Start(e) => (Some(e.clone()), false),
            Event::Empty(e) => (Some(e.clone()), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
            if depth_unknown > 0 {
                if !empty {
                    depth_unknown += 1;
                }
                continue;
            }
            // Mutable bindings: an arm pushes into what it matched, so no
            // re-borrow of `program` / `gpu` / `tb` can find it missing.
            match (name.as_str(), &mut program, &mut gpu, &mut tb) {
                ("algo", None, _, _) if !closed => {
                    let a = Attrs::of(&e, "algo".into())?;
                    program = Some(parse_algo(&a)?);
                }
                ("gpu", Some(p), None, _) => {
                    let a = Attrs::of(&e, "gpu".into())?;
                    let id = a.int("id", 0, p.ngpus as i64 - 1)? as usize;
                    let at = format!("gpu {id}");
                    let a = Attrs { at, ..a };
                    let mut chunks = [0usize; 3];
                    for (i, k) in ["i_chunks", "o_chunks", "s_chunks"].iter().enumerate() {
                        chunks[i] = a.int(k, 0, MAX_CHUNKS as i64)? as usize;
                    }
                    let g = Gpu {
                        id,
                        chunks,
                        tbs: Vec::new(),
                    };
                    if empty {
                        p.gpus.push(g);
                    } else {
                        gpu = Some(g);
                    }
                }
                ("tb", Some(p), Some(g), None) => {
                    let gpu_id = g.id;
                    let a = Attrs::of(&e, format!("gpu {gpu_id}"))?;
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
                                format!(
                                    "{key}=\"{v}\": a thread block's peer cannot be its own gpu"
                                ),
                            );
                        }
                        Ok((v >= 0).then_some(v as usize))
                    };
                    let send = peer("send")?;
                    let recv = peer("recv")?;
                    let chan = a.int("chan", 0, p.nchannels.max(1) as i64 - 1)? as usize;
                    let t = Tb {
                        id,
                        send,
                        recv,
                        chan,
                        steps: Vec::new(),
                    };
                    if empty {
                        g.tbs.push(t);
                    } else {
                        tb = Some(t);
                    }
                }
                ("step", Some(p), Some(g), Some(t)) => {
                    steps_total += 1;
                    if steps_total > MAX_STEPS {
                        return err("algo", format!("more than {MAX_STEPS} steps"));
                    }
                    let at = format!("gpu {} / tb {} / step {}", g.id, t.id, t.steps.len());
                    let a = Attrs::of(&e, at.clone())?;
                    let s = parse_step(&a, p, g, t)?;
                    t.steps.push(s);
                    if !empty {
                        depth_unknown = 0;
                    }
                }
                ("op", Some(_), Some(g), Some(t)) => {
                    return err(
                        format!("gpu {} / tb {}", g.id, t.id),
                        "an <op> element: this is msccl-tools' newer format, which the MSCCL runtime does not read; export with ir_to_xml(old_format=True) to get <step> elements",
                    );
                }
                _ => {
                    // Unknown elements are skipped with their content, as the
                    // runtime's parser does.
                    if program.is_none() || gpu.is_none() || tb.is_none() {
                        if matches!(name.as_str(), "gpu" | "tb" | "step" | "algo") {
                            let at = match (&gpu, &tb) {
                                (Some(g), Some(t)) => format!("gpu {} / tb {}", g.id, t.id),
                                (Some(g), None) => format!("gpu {}", g.id),
                                _ => "algo".into(),
                            };
                            return err(at, format!("<{name}> is not allowed here (the nesting is <algo> <gpu> <tb> <step>)"));
                        }
                    }
                    if !empty {
                        depth_unknown = 1;
                    }
                }
            }
            continue;
        }
        match ev {
            Event::End(e) => {
                if depth_unknown > 0 {
                    depth_unknown -= 1;
                    continue;
                }
                match e.name().as_ref() {
                    b"tb" => {
                        if let (Some(g), Some(t)) = (gpu.as_mut(), tb.take()) {
                            g.tbs.push(t);
                        }
                    }
                    b"gpu" => {
                        if let (Some(p), Some(g)) = (program.as_mut(), gpu.take()) {
                            p.gpus.push(g);
                        }
                    }
                    b"algo" => closed = true,
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let Some(mut p) = program else {
        return err("file", "no <algo> element: not an MSCCL algorithm file");
    };
    // Structure checks.
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

fn parse_step(a: &Attrs, p: &Program, g: &Gpu, t: &Tb) -> Result<XStep, MscclError> {
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
    let _ = p;
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

// ---------------------------------------------------------------- import

/// How the collective's MSCCL buffers map onto the IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// i and o are the whole buffer (AllReduce, Broadcast, Reduce).
    Full,
    /// i is one block of o (AllGather, Gather).
    Gathered,
    /// o is one block of i (ReduceScatter, Scatter).
    Scattered,
    /// i is the send area, o the receive area (AlltoAll).
    Pairs,
}

fn shape_of(p: Primitive) -> Option<Shape> {
    match p {
        Primitive::AllReduce | Primitive::Broadcast | Primitive::Reduce => Some(Shape::Full),
        Primitive::AllGather | Primitive::Gather => Some(Shape::Gathered),
        Primitive::ReduceScatter | Primitive::Scatter => Some(Shape::Scattered),
        Primitive::AlltoAll => Some(Shape::Pairs),
        _ => None,
    }
}

const SUPPORTED: &str =
    "allreduce, reducescatter, allgather, broadcast, reduce, scatter, gather, alltoall";

/// Where an MSCCL buffer lives in the IR, in MSCCL chunks.
#[derive(Clone, Copy, Debug)]
enum Region {
    /// At MSCCL chunk `base` of the collective's buffer (plus `rank ·
    /// per_rank`).
    Primary { base: usize, per_rank: usize },
    /// At MSCCL chunk `base` of the scratch area.
    Extra { base: usize },
}

/// A location in the IR: an IR chunk, or the temporary of op `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Loc {
    Chunk(usize),
    Temp(usize),
}

/// One IR transfer of an action.
#[derive(Clone, Copy, Debug)]
struct Part {
    src: usize,
    dst: usize,
    from: Loc,
    to: Loc,
    count: usize,
    kind: TransferKind,
}

/// What happens in one IR step: a local copy / reduce, or a message (with
/// the receiver's local pre-copy first).
#[derive(Clone, Debug)]
struct Action {
    parts: Vec<Part>,
    /// The ops it belongs to (for messages).
    ops: Vec<usize>,
}

/// What one GPU does in an action.
#[derive(Clone, Debug)]
struct Side {
    action: usize,
    /// IR chunk ranges read when the step starts.
    reads: Vec<(usize, usize)>,
    /// IR chunk ranges written when the step applies, with the kind.
    writes: Vec<(usize, usize, TransferKind)>,
    /// A local copy / reduce (`cpy`, `re`).
    local: bool,
}

/// The edge `y -> x` between two sides on one GPU (x waits for y): its
/// weight (1: x needs a later step; 0: the same step will do, sends read
/// the state at the start and receives apply in listed order) and whether
/// x must be listed after y in that step (both write the same chunk).
fn side_weight(y: &Side, x: &Side) -> (usize, bool) {
    if y.writes.is_empty() {
        return (0, false);
    }
    let ov = |a: (usize, usize), b: (usize, usize)| a.0 < b.1 && b.0 < a.1;
    let raw = x
        .reads
        .iter()
        .any(|&r| y.writes.iter().any(|&(s, e, _)| ov(r, (s, e))));
    let mut ordered = false;
    let mut conflict = false;
    for &(s, e, k) in &y.writes {
        for &(s2, e2, k2) in &x.writes {
            if ov((s, e), (s2, e2)) {
                ordered = true;
                // As the verifier: a chunk receives a copy alone in a step,
                // except a local copy listed before reduces.
                if k2 == TransferKind::Copy || (k == TransferKind::Copy && !y.local) {
                    conflict = true;
                }
            }
        }
    }
    (usize::from(raw || conflict), ordered)
}

/// One non-nop step of the program.
#[derive(Clone, Debug)]
struct Op {
    gpu: usize,
    tb: usize,
    s: usize,
    actions: Vec<usize>,
}

struct Mapper {
    n: usize,
    m: usize,
    regions: [Region; 3],
    c: usize,
}

impl Mapper {
    /// The IR chunk of MSCCL chunk `off` of `buf` on `rank`.
    fn chunk(&self, rank: usize, buf: Buf, off: usize) -> usize {
        match self.regions[buf as usize] {
            Region::Primary { base, per_rank } => (base + rank * per_rank + off) * self.m,
            Region::Extra { base } => self.c * self.m + (base + off) * self.m,
        }
    }
}

/// Parses and imports an MSCCL algorithm file ([`parse`] then
/// [`to_schedule`]).
///
/// Errors: [`MscclError`].
pub fn import(xml: &str) -> Result<Imported, MscclError> {
    to_schedule(parse(xml)?)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Turns a parsed program into a Schedule (see the module doc).
///
/// Errors: [`MscclError`] naming the element: an unsupported collective,
/// buffers that do not fit it, unmatched sends and receives, dependencies
/// on steps that never signal, a deadlock, hints that contradict the order.
pub fn to_schedule(p: Program) -> Result<Imported, MscclError> {
    let n = p.ngpus;
    let Some(primitive) = Primitive::from_name(&p.coll) else {
        return err(
            "algo",
            format!("coll=\"{}\": the importer reads {SUPPORTED}", p.coll),
        );
    };
    let Some(shape) = shape_of(primitive) else {
        return err(
            "algo",
            format!("coll=\"{}\": the importer reads {SUPPORTED}", p.coll),
        );
    };
    let c = p.nchunksperloop;
    let per = c / n;
    if matches!(shape, Shape::Gathered | Shape::Scattered) && c % n != 0 {
        return err(
            "algo",
            format!(
                "nchunksperloop=\"{c}\": {} needs a multiple of ngpus ({n}): each rank's part is nchunksperloop / ngpus chunks",
                p.coll
            ),
        );
    }
    // MSCCL chunks of the collective's buffer, and its blocks.
    let primary = if shape == Shape::Pairs { 2 * c } else { c };
    let blocks = primitive.blocks(n);
    let m = blocks / gcd(primary, blocks);
    // In place unless the file says it is out-of-place only (or inplace=0).
    let in_place = p.inplace;
    let mut notes = Vec::new();
    let (i_size, o_size) = match shape {
        Shape::Full | Shape::Pairs => (c, c),
        Shape::Gathered => (per, c),
        Shape::Scattered => (c, per),
    };
    let s_size = p.gpus.iter().map(|g| g.chunks[2]).max().unwrap_or(0);
    let mut extra = 0usize;
    let prim = |base, per_rank| Region::Primary { base, per_rank };
    let (ri, ro, pre_copy, post_copy) = match (shape, in_place) {
        (Shape::Full, true) => (prim(0, 0), prim(0, 0), false, false),
        (Shape::Gathered, true) => (prim(0, per), prim(0, 0), false, false),
        (Shape::Scattered, true) => (prim(0, 0), prim(0, per), false, false),
        (Shape::Pairs, true) => (prim(c, 0), prim(c, 0), true, false),
        (Shape::Full, false) | (Shape::Scattered, false) | (Shape::Gathered, false) => {
            let ri = if shape == Shape::Gathered {
                prim(0, per)
            } else {
                prim(0, 0)
            };
            extra = o_size;
            (ri, Region::Extra { base: 0 }, false, true)
        }
        (Shape::Pairs, false) => (prim(0, 0), prim(c, 0), false, false),
    };
    if pre_copy {
        notes.push("in-place AlltoAll: a first local step copies each rank's send area into its receive area, where the program works".into());
    }
    if post_copy {
        notes.push("out-of-place: the output buffer is kept in scratch chunks and a last local step copies it into place (no link, no modelled time)".into());
    }
    let rs = Region::Extra { base: extra };
    extra += s_size;
    let temp_base = extra;
    // Declared sizes must fit the collective's buffers.
    for g in &p.gpus {
        for (b, want) in [(Buf::Input, i_size), (Buf::Output, o_size)] {
            let got = g.chunks[b as usize];
            let ok = got <= want;
            if !ok {
                return err(
                    format!("gpu {}", g.id),
                    format!(
                        "{}_chunks=\"{got}\": {} with nchunksperloop=\"{c}\" on {n} gpus has {want} {} chunks",
                        b.name(),
                        p.coll,
                        if b == Buf::Input { "input" } else { "output" }
                    ),
                );
            }
        }
    }
    let mapper = Mapper {
        n,
        m,
        regions: [ri, ro, rs],
        c: primary,
    };
    let _ = mapper.n;

    // Ops and actions.
    let mut ops: Vec<Op> = Vec::new();
    let mut actions: Vec<Action> = Vec::new();
    let mut hints: Vec<Option<(usize, usize)>> = Vec::new();
    // op index of (gpu, tb, s) (None for nops).
    let mut op_at: Vec<Vec<Vec<Option<usize>>>> = Vec::new();
    // Per connection (from, to, chan): the sender's pending sends (op,
    // loc) and the receiver's pending receives (op, part template).
    type Pending = Vec<(usize, Loc, usize)>;
    let mut sends: BTreeMap<(usize, usize, usize), (usize, Pending)> = BTreeMap::new();
    let mut recvs: BTreeMap<
        (usize, usize, usize),
        (usize, Vec<(usize, Loc, TransferKind, Option<Loc>, usize)>),
    > = BTreeMap::new();
    let mut thread_blocks = 0usize;
    let mut xml_steps = 0usize;
    for g in &p.gpus {
        let mut per_tb = Vec::new();
        for t in &g.tbs {
            thread_blocks += 1;
            let at = |s: usize| format!("gpu {} / tb {} / step {s}", g.id, t.id);
            if let Some(peer) = t.send {
                if let Some((other, _)) = sends.get(&(g.id, peer, t.chan)) {
                    return err(
                        format!("gpu {} / tb {}", g.id, t.id),
                        format!("tb {other} also sends to gpu {peer} on channel {}: each (peer, channel) pair is one connection and needs its own channel", t.chan),
                    );
                }
                sends.insert((g.id, peer, t.chan), (t.id, Vec::new()));
            }
            if let Some(peer) = t.recv {
                if let Some((other, _)) = recvs.get(&(peer, g.id, t.chan)) {
                    return err(
                        format!("gpu {} / tb {}", g.id, t.id),
                        format!("tb {other} also receives from gpu {peer} on channel {}: each (peer, channel) pair is one connection and needs its own channel", t.chan),
                    );
                }
                recvs.insert((peer, g.id, t.chan), (t.id, Vec::new()));
            }
            let mut per_step = Vec::new();
            for st in &t.steps {
                xml_steps += 1;
                if st.kind == Kind::Nop {
                    per_step.push(None);
                    continue;
                }
                let id = ops.len();
                let chunk = |(b, off): (Buf, i64)| Loc::Chunk(mapper.chunk(g.id, b, off as usize));
                let count = st.cnt * m;
                let mut op = Op {
                    gpu: g.id,
                    tb: t.id,
                    s: st.s,
                    actions: Vec::new(),
                };
                match st.kind {
                    Kind::Copy | Kind::Reduce => {
                        let kind = if st.kind == Kind::Copy {
                            TransferKind::Copy
                        } else {
                            TransferKind::Reduce
                        };
                        op.actions.push(actions.len());
                        actions.push(Action {
                            parts: vec![Part {
                                src: g.id,
                                dst: g.id,
                                from: chunk(st.src),
                                to: chunk(st.dst),
                                count,
                                kind,
                            }],
                            ops: vec![id],
                        });
                        hints.push(st.hint);
                    }
                    _ => {
                        if st.kind.recvs() {
                            let Some(peer) = t.recv else {
                                return err(
                                    at(st.s),
                                    "a receiving step in a thread block with no recv peer",
                                );
                            };
                            let (to, kind, pre) = match st.kind {
                                Kind::Recv | Kind::RecvCopySend => {
                                    (chunk(st.dst), TransferKind::Copy, None)
                                }
                                Kind::RecvReduceSend => {
                                    (Loc::Temp(id), TransferKind::Reduce, Some(chunk(st.src)))
                                }
                                _ => {
                                    let (s, d) = (chunk(st.src), chunk(st.dst));
                                    (d, TransferKind::Reduce, (s != d).then_some(s))
                                }
                            };
                            // Inserted above for every thread block with a recv peer.
                            let Some((_, q)) = recvs.get_mut(&(peer, g.id, t.chan)) else {
                                return err(
                                    at(st.s),
                                    "a receive with no connection (an importer bug)",
                                );
                            };
                            q.push((id, to, kind, pre, st.cnt));
                        }
                        if st.kind.sends() {
                            let Some(peer) = t.send else {
                                return err(
                                    at(st.s),
                                    "a sending step in a thread block with no send peer",
                                );
                            };
                            let from = match st.kind {
                                Kind::Send => chunk(st.src),
                                Kind::RecvReduceSend => Loc::Temp(id),
                                _ => chunk(st.dst),
                            };
                            // Inserted above for every thread block with a send peer.
                            let Some((_, q)) = sends.get_mut(&(g.id, peer, t.chan)) else {
                                return err(
                                    at(st.s),
                                    "a send with no connection (an importer bug)",
                                );
                            };
                            q.push((id, from, st.cnt));
                        }
                    }
                }
                per_step.push(Some(id));
                ops.push(op);
                let _ = at;
            }
            per_tb.push(per_step);
        }
        op_at.push(per_tb);
    }
    let hint_of_op = |o: &Op| -> Option<(usize, usize)> { p.gpus[o.gpu].tbs[o.tb].steps[o.s].hint };
    // Match sends with receives, connection by connection.
    let mut recv_action: HashMap<usize, usize> = HashMap::new();
    let mut send_action: HashMap<usize, usize> = HashMap::new();
    for (&(a, b, ch), (tb_a, list)) in &sends {
        let Some((tb_b, rl)) = recvs.get(&(a, b, ch)) else {
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
        for (&(sop, from, scnt), &(rop, to, kind, pre, rcnt)) in list.iter().zip(rl) {
            if scnt != rcnt {
                let o = &ops[rop];
                return err(
                    format!("gpu {} / tb {} / step {}", o.gpu, o.tb, o.s),
                    format!(
                        "cnt=\"{rcnt}\" but the matching send (gpu {a} / tb {tb_a} / step {}) has cnt=\"{scnt}\"",
                        ops[sop].s
                    ),
                );
            }
            let count = scnt * m;
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
            let id = actions.len();
            actions.push(Action {
                parts,
                ops: vec![sop, rop],
            });
            let (hs, hr) = (hint_of_op(&ops[sop]), hint_of_op(&ops[rop]));
            if let (Some(x), Some(y)) = (hs, hr) {
                if x != y {
                    let o = &ops[rop];
                    return err(
                        format!("gpu {} / tb {} / step {}", o.gpu, o.tb, o.s),
                        format!("ccl_step/ccl_seq {y:?} differ from the matching send's {x:?}"),
                    );
                }
            }
            hints.push(hs.or(hr));
            send_action.insert(sop, id);
            recv_action.insert(rop, id);
        }
    }
    for (&(a, b, ch), (tb_b, rl)) in &recvs {
        if !sends.contains_key(&(a, b, ch)) && !rl.is_empty() {
            return err(
                format!("gpu {b} / tb {tb_b}"),
                format!("receives from gpu {a} on channel {ch}, but gpu {a} has no thread block with send=\"{b}\" chan=\"{ch}\""),
            );
        }
    }
    for (i, o) in ops.iter_mut().enumerate() {
        if let Some(&x) = recv_action.get(&i) {
            o.actions.push(x);
        }
        if let Some(&x) = send_action.get(&i) {
            o.actions.push(x);
        }
    }

    // Sides: what one GPU does in an action. A message has a send side
    // (reads at the step's start) and a receive side (writes when it
    // applies; a pre-copy reads at the start too); a local op has one.
    let mut sides: Vec<Side> = Vec::new();
    let mut action_sides: Vec<Vec<usize>> = vec![Vec::new(); actions.len()];
    for (ai, a) in actions.iter().enumerate() {
        let chunk_range = |l: Loc, count: usize| match l {
            Loc::Chunk(c) => Some((c, c + count)),
            Loc::Temp(_) => None,
        };
        // Every action is made with one part or more (an error, not a
        // skip: its sides are indexed below).
        let Some(net) = a.parts.last() else {
            return err(
                "algo",
                format!("action {ai} has no transfer (an importer bug)"),
            );
        };
        if net.src == net.dst {
            action_sides[ai].push(sides.len());
            sides.push(Side {
                action: ai,
                reads: chunk_range(net.from, net.count).into_iter().collect(),
                writes: chunk_range(net.to, net.count)
                    .map(|(x, y)| (x, y, net.kind))
                    .into_iter()
                    .collect(),
                local: true,
            });
            continue;
        }
        action_sides[ai].push(sides.len());
        sides.push(Side {
            action: ai,
            reads: chunk_range(net.from, net.count).into_iter().collect(),
            writes: Vec::new(),
            local: false,
        });
        let pre = (a.parts.len() == 2).then(|| a.parts[0]);
        action_sides[ai].push(sides.len());
        sides.push(Side {
            action: ai,
            reads: pre
                .and_then(|p| chunk_range(p.from, p.count))
                .into_iter()
                .collect(),
            writes: chunk_range(net.to, net.count)
                .map(|(x, y)| {
                    let k = if pre.is_some() {
                        TransferKind::Copy
                    } else {
                        net.kind
                    };
                    (x, y, k)
                })
                .into_iter()
                .collect(),
            local: false,
        });
    }
    // The sides of each op, in its order (receive, then forward).
    let op_sides: Vec<Vec<usize>> = ops
        .iter()
        .enumerate()
        .map(|(i, o)| {
            o.actions
                .iter()
                .map(|&a| {
                    let v = &action_sides[a];
                    if v.len() == 1 {
                        v[0]
                    } else if actions[a].ops.first() == Some(&i) {
                        v[0]
                    } else {
                        v[1]
                    }
                })
                .collect()
        })
        .collect();
    // Side edges y -> x: (y, weight, order matters).
    let mut preds: Vec<Vec<(usize, usize, bool)>> = vec![Vec::new(); sides.len()];
    for v in &action_sides {
        if v.len() == 2 {
            // The message: the send is read before the receive applies.
            preds[v[1]].push((v[0], 0, false));
        }
    }
    for o in &op_sides {
        if o.len() == 2 {
            preds[o[1]].push((o[0], 1, true));
        }
    }
    let after = |preds: &mut Vec<Vec<(usize, usize, bool)>>, y: usize, x: usize| {
        for &ys in &op_sides[y] {
            for &xs in &op_sides[x] {
                let (w, o) = side_weight(&sides[ys], &sides[xs]);
                preds[xs].push((ys, w, o));
            }
        }
    };
    for (gi, g) in p.gpus.iter().enumerate() {
        for (ti, t) in g.tbs.iter().enumerate() {
            let mut last: Option<usize> = None;
            let mut waits: Vec<(usize, usize, usize)> = Vec::new();
            for st in &t.steps {
                if let Some((b, d)) = st.dep {
                    waits.push((b, d, st.s));
                }
                let Some(cur) = op_at[gi][ti][st.s] else {
                    continue;
                };
                if let Some(prev) = last {
                    after(&mut preds, prev, cur);
                }
                for (b, d, s_at) in waits.drain(..) {
                    let here = format!("gpu {} / tb {} / step {s_at}", g.id, t.id);
                    let Some(tb) = g.tbs.get(b) else {
                        return err(
                            here,
                            format!(
                                "depid=\"{b}\": gpu {} has thread blocks 0..{}",
                                g.id,
                                g.tbs.len()
                            ),
                        );
                    };
                    if b == t.id {
                        return err(here, format!("depid=\"{b}\" is its own thread block"));
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
                    let Some(target) = op_at[gi][b][sig.s] else {
                        continue;
                    };
                    after(&mut preds, target, cur);
                }
                last = Some(cur);
            }
        }
    }
    let describe_side = |x: usize| -> String {
        let a = &actions[sides[x].action];
        let o = if a.ops.len() == 2 && action_sides[sides[x].action][1] == x {
            a.ops[1]
        } else {
            a.ops[0]
        };
        format!("gpu {} / tb {} / step {}", ops[o].gpu, ops[o].tb, ops[o].s)
    };
    // Causality: a cycle of waits is a deadlock of the runtime.
    let ns = sides.len();
    let mut pos = vec![usize::MAX; ns];
    {
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); ns];
        let mut indeg = vec![0usize; ns];
        for (x, ps) in preds.iter().enumerate() {
            for &(y, _, _) in ps {
                succ[y].push(x);
                indeg[x] += 1;
            }
        }
        let mut heap: BinaryHeap<std::cmp::Reverse<usize>> = (0..ns)
            .filter(|&i| indeg[i] == 0)
            .map(std::cmp::Reverse)
            .collect();
        let mut k = 0;
        while let Some(std::cmp::Reverse(i)) = heap.pop() {
            pos[i] = k;
            k += 1;
            for &x in &succ[i] {
                indeg[x] -= 1;
                if indeg[x] == 0 {
                    heap.push(std::cmp::Reverse(x));
                }
            }
        }
        if k < ns {
            let stuck = (0..ns).find(|&i| indeg[i] > 0).unwrap_or(0);
            return err(
                describe_side(stuck),
                "waits in a cycle (thread-block order, depid waits and receives that wait for sends that come after them): the program deadlocks",
            );
        }
    }
    let na = actions.len();
    let mut by_pos: Vec<usize> = (0..ns).collect();
    by_pos.sort_by_key(|&i| pos[i]);
    // Place: with the hints when every action has one and they respect
    // every edge, else as early as possible.
    // Every action's hint, when every action has one.
    let all_hinted: Option<Vec<(usize, usize)>> = if na > 0 {
        hints.iter().copied().collect()
    } else {
        None
    };
    let mut level = vec![0usize; na];
    let mut order: Vec<usize> = Vec::with_capacity(na);
    let mut placed = false;
    if let Some(h) = all_hinted {
        let mut bad = None;
        'check: for x in 0..ns {
            for &(y, w, o) in &preds[x] {
                let (ax, ay) = (sides[x].action, sides[y].action);
                if ax == ay {
                    continue;
                }
                let fine = h[ax].0 > h[ay].0
                    || (h[ax].0 == h[ay].0 && w == 0 && (!o || h[ax].1 > h[ay].1));
                if !fine {
                    bad = Some((x, y));
                    break 'check;
                }
            }
        }
        match bad {
            None => {
                order = (0..na).collect();
                order.sort_by_key(|&i| h[i]);
                for i in 0..na {
                    level[i] = h[i].0;
                }
                placed = true;
            }
            Some((x, y)) => notes.push(format!(
                "ccl_step/ccl_seq ignored: {} would run before {}, which it waits for",
                describe_side(x),
                describe_side(y)
            )),
        }
    } else if hints.iter().any(Option::is_some) {
        notes.push("ccl_step/ccl_seq ignored: only some steps have them".into());
    }
    if !placed {
        // Longest path; a message's two sides share a step, so relax in
        // causal order until nothing moves.
        let mut changed = true;
        let mut passes = 0usize;
        while changed {
            changed = false;
            passes += 1;
            for &x in &by_pos {
                let ax = sides[x].action;
                for &(y, w, _) in &preds[x] {
                    let ay = sides[y].action;
                    if ax == ay {
                        continue;
                    }
                    let want = level[ay] + w;
                    if want > level[ax] {
                        if want > ns {
                            return err(
                                describe_side(x),
                                "its waits cannot be placed in steps (a send must wait for its own receive's later step): the program deadlocks",
                            );
                        }
                        level[ax] = want;
                        changed = true;
                    }
                }
            }
            if passes > ns + 2 {
                return err(describe_side(0), "its waits cannot be placed in steps");
            }
        }
        // Every action has a side (one per part, pushed above).
        let last_pos = |a: usize| action_sides[a].last().map_or(0, |&x| pos[x]);
        order = (0..na).collect();
        order.sort_by_key(|&a| (level[a], last_pos(a)));
    }
    // Temporaries: one slot of cnt·m IR chunks per rrs while it holds data.
    let mut temp_at: HashMap<usize, usize> = HashMap::new();
    let mut temp_size = 0usize;
    {
        let mut live: Vec<(usize, usize, usize)> = Vec::new(); // (op, from level, to level)
        for (i, o) in ops.iter().enumerate() {
            if p.gpus[o.gpu].tbs[o.tb].steps[o.s].kind == Kind::RecvReduceSend {
                live.push((i, level[o.actions[0]], level[o.actions[1]]));
            }
        }
        live.sort_by_key(|x| (x.1, x.0));
        // Per rank: slots (offset, size, busy until level).
        let mut slots: HashMap<usize, Vec<(usize, usize, usize)>> = HashMap::new();
        for (op, from, to) in live {
            let o = &ops[op];
            let size = p.gpus[o.gpu].tbs[o.tb].steps[o.s].cnt;
            let v = slots.entry(o.gpu).or_default();
            let slot = v.iter_mut().find(|s| s.1 == size && s.2 <= from);
            let off = match slot {
                Some(s) => {
                    s.2 = to;
                    s.0
                }
                None => {
                    let off = v.iter().map(|s| s.0 + s.1).max().unwrap_or(0);
                    v.push((off, size, to));
                    off
                }
            };
            temp_size = temp_size.max(off + size);
            temp_at.insert(op, (primary + temp_base + off) * m);
        }
    }
    let scratch_msccl = temp_base + temp_size;
    let chunks = primary * m;
    let resolve = |l: Loc| -> usize {
        match l {
            Loc::Chunk(c) => c,
            Loc::Temp(op) => temp_at[&op],
        }
    };
    let steps_n = level.iter().copied().max().map_or(0, |x| x + 1);
    let mut steps: Vec<Step> = (0..steps_n)
        .map(|_| Step {
            phase: "MSCCL".into(),
            transfers: Vec::new(),
        })
        .collect();
    let mut origins: Vec<Vec<String>> = vec![Vec::new(); steps_n];
    for &i in &order {
        let label = match actions[i].ops.last() {
            Some(&o) => format!("gpu {} / tb {} / step {}", ops[o].gpu, ops[o].tb, ops[o].s),
            None => "algo".into(),
        };
        for pt in &actions[i].parts {
            origins[level[i]].push(label.clone());
            steps[level[i]].transfers.push(Transfer {
                src: pt.src,
                dst: pt.dst,
                first: resolve(pt.from),
                count: pt.count,
                kind: pt.kind,
                dst_first: resolve(pt.to),
            });
        }
    }
    if let Some(ph) = &p.ccl.phases {
        let total: usize = ph.iter().map(|x| x.1).sum();
        if total == steps.len() {
            let mut k = 0;
            for (name, cnt) in ph {
                for _ in 0..*cnt {
                    steps[k].phase = name.clone();
                    k += 1;
                }
            }
        } else {
            notes.push(format!(
                "ccl_phases ignored: it names {total} steps, the program has {}",
                steps.len()
            ));
        }
    }
    if pre_copy {
        let send_area = c * m;
        origins.insert(0, vec!["in-place copy".into(); n]);
        steps.insert(
            0,
            Step {
                phase: "in-place copy".into(),
                transfers: (0..n)
                    .map(|r| Transfer {
                        src: r,
                        dst: r,
                        first: 0,
                        count: send_area,
                        kind: TransferKind::Copy,
                        dst_first: send_area,
                    })
                    .collect(),
            },
        );
    }
    if post_copy {
        origins.push(vec!["output copy".into(); n]);
        let (count, at_rank) = match shape {
            Shape::Scattered => (per * m, per * m),
            _ => (c * m, 0),
        };
        steps.push(Step {
            phase: "output copy".into(),
            transfers: (0..n)
                .map(|r| Transfer {
                    src: r,
                    dst: r,
                    first: chunks,
                    count,
                    kind: TransferKind::Copy,
                    dst_first: r * at_rank,
                })
                .collect(),
        });
    }
    let max_cnt = p
        .gpus
        .iter()
        .flat_map(|g| g.tbs.iter().flat_map(|t| t.steps.iter().map(|s| s.cnt)))
        .max()
        .unwrap_or(0);
    if max_cnt >= MSCCL_MAX_COUNT {
        notes.push(format!("a step moves cnt={max_cnt} chunks; the MSCCL runtime allows cnt < {MSCCL_MAX_COUNT} (msccl_struct.h MSCCL_MAX_COUNT)"));
    }
    let schedule = Schedule {
        primitive,
        algorithm: p
            .ccl
            .algorithm
            .clone()
            .unwrap_or_else(|| format!("msccl:{}", p.name)),
        ranks: n,
        chunks,
        root: p.ccl.root.unwrap_or(0),
        scratch: scratch_msccl * m,
        steps,
    };
    if primitive.rooted() && p.ccl.root.is_none() {
        notes.push(
            "a rooted collective without ccl_root: the MSCCL file does not say its root; root 0 is assumed".into(),
        );
    }
    Ok(Imported {
        schedule,
        origins,
        chunk_factor: m,
        thread_blocks,
        xml_steps,
        notes,
        program: p,
    })
}

impl Imported {
    /// A verifier error in the file's terms: the `<step>` that made the
    /// failing IR transfer, or the GPU and output chunk that ends wrong.
    pub fn explain(&self, e: &crate::engine::verify::VerifyError) -> String {
        use crate::engine::verify::VerifyError as V;
        let at = |step: usize, transfer: usize| {
            self.origins
                .get(step)
                .and_then(|v| v.get(transfer))
                .cloned()
                .unwrap_or_else(|| format!("step {step}"))
        };
        let m = self.chunk_factor.max(1);
        match e {
            V::BadTransfer(b) => format!("{}: {e}", at(b.step, b.index)),
            V::SendsNothing { step, transfer, .. }
            | V::DuplicateContribution { step, transfer, .. }
            | V::MixedOrigins { step, transfer, .. } => format!("{}: {e}", at(*step, *transfer)),
            V::WriteConflict { step, second, .. } => format!("{}: {e}", at(*step, *second)),
            V::WrongResult { rank, chunk, .. } => format!(
                "gpu {rank} / output chunk {} (MSCCL chunk {}): {e}",
                chunk,
                chunk / m
            ),
            V::BadShape { .. } => format!("algo: {e}"),
        }
    }
}

// ---------------------------------------------------------------- export

/// Writes `schedule` as an MSCCL algorithm file the runtime can read
/// (in place except AlltoAll; one MSCCL chunk per IR chunk; a thread block
/// per peer and direction, plus one for local copies and reduces; `depid`
/// waits (extra ones as `nop` steps, as msccl-tools does) wherever two
/// thread blocks of a GPU touch the same chunk, in the order the step
/// semantics give), with `ccl_step` / `ccl_seq` on every step and
/// `ccl_algorithm`, `ccl_root`, `ccl_phases` on `<algo>` so that
/// [`import`] gives back exactly `schedule`.
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
    // IR chunk -> (buffer, offset), per rank.
    let loc = |_rank: usize, chunk: usize| -> (Buf, usize) {
        if chunk >= chunks {
            return (Buf::Scratch, chunk - chunks);
        }
        match shape {
            Shape::Full | Shape::Scattered => (Buf::Input, chunk),
            Shape::Gathered => (Buf::Output, chunk),
            Shape::Pairs => {
                if chunk < c {
                    (Buf::Input, chunk)
                } else {
                    (Buf::Output, chunk - c)
                }
            }
        }
    };
    let _ = per;
    let nch = (n.saturating_sub(1))
        .div_ceil(MSCCL_MAX_TBS_PER_CHANNEL)
        .max(1);
    let chan = |a: usize, b: usize| (a + b) % nch;
    // Ops per rank: (step, seq, tb key, kind, src loc, dst loc, count).
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
    enum TbKey {
        Send(usize),
        Recv(usize),
        Local,
    }
    #[derive(Clone, Debug)]
    struct XOp {
        step: usize,
        seq: usize,
        tb: TbKey,
        kind: Kind,
        src: (Buf, usize),
        dst: (Buf, usize),
        cnt: usize,
        /// Accesses: (chunk range, is write, phase) where phase 0 = read at
        /// the step's start, 1 = apply.
        reads: Option<(usize, usize)>,
        writes: Option<(usize, usize)>,
    }
    let mut per_rank: Vec<Vec<XOp>> = vec![Vec::new(); n];
    for (si, st) in schedule.steps.iter().enumerate() {
        for (ti, t) in st.transfers.iter().enumerate() {
            if t.src >= n || t.dst >= n {
                return err(
                    "algo",
                    format!("step {si}, transfer {ti}: rank out of range"),
                );
            }
            let src = loc(t.src, t.first);
            let dst = loc(t.dst, t.dst_first);
            let reduce = t.kind == TransferKind::Reduce;
            if t.src == t.dst {
                per_rank[t.src].push(XOp {
                    step: si,
                    seq: ti,
                    tb: TbKey::Local,
                    kind: if reduce { Kind::Reduce } else { Kind::Copy },
                    src,
                    dst,
                    cnt: t.count,
                    reads: Some((t.first, t.first + t.count)),
                    writes: Some((t.dst_first, t.dst_first + t.count)),
                });
                continue;
            }
            per_rank[t.src].push(XOp {
                step: si,
                seq: ti,
                tb: TbKey::Send(t.dst),
                kind: Kind::Send,
                src,
                dst,
                cnt: t.count,
                reads: Some((t.first, t.first + t.count)),
                writes: None,
            });
            per_rank[t.dst].push(XOp {
                step: si,
                seq: ti,
                tb: TbKey::Recv(t.src),
                kind: if reduce {
                    Kind::RecvReduceCopy
                } else {
                    Kind::Recv
                },
                src: if reduce { dst } else { src },
                dst,
                cnt: t.count,
                reads: None,
                writes: Some((t.dst_first, t.dst_first + t.count)),
            });
        }
    }
    let mut out = String::new();
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
    out.push_str(&format!(
        "<algo name=\"{}\" proto=\"Simple\" nchannels=\"{nch}\" nchunksperloop=\"{c}\" ngpus=\"{n}\" coll=\"{}\" inplace=\"{inplace}\" outofplace=\"{outofplace}\" minBytes=\"0\" maxBytes=\"1099511627776\" ccl_algorithm=\"{}\" ccl_root=\"{}\" ccl_phases=\"{}\">\n",
        esc(&schedule.algorithm),
        schedule.primitive.name(),
        esc(&schedule.algorithm),
        schedule.root,
        esc(&phases),
    ));
    let (i_chunks, o_chunks) = match shape {
        Shape::Full | Shape::Pairs => (c, if shape == Shape::Pairs { c } else { 0 }),
        Shape::Gathered => (per, c),
        Shape::Scattered => (c, 0),
    };
    for (rank, xops) in per_rank.iter_mut().enumerate() {
        xops.sort_by_key(|x| (x.step, x.seq, x.tb));
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
        // Waits: conflicting accesses ordered by (step, phase, seq).
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
        // Cycles among waits would deadlock the runtime.
        {
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
            if seen < m {
                return err(
                    format!("gpu {rank}"),
                    "the schedule's local reads and writes need waits that form a cycle; MSCCL would deadlock",
                );
            }
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
        let s_chunks = schedule.scratch;
        out.push_str(&format!(
            "  <gpu id=\"{rank}\" i_chunks=\"{i_chunks}\" o_chunks=\"{o_chunks}\" s_chunks=\"{s_chunks}\">\n"
        ));
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
        out.push_str("  </gpu>\n");
    }
    out.push_str("</algo>\n");
    Ok(out)
}
