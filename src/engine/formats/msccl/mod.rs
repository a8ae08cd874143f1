//! MSCCL algorithm XML in and out; MSCCL++ execution plans in
//! ([`mscclpp`]), through the same stages after their own parse.
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
//! - **Steps.** The runtime's waits say what runs after what: a thread
//!   block's steps run in order, each to its end (`mscclRunInterpreter`
//!   loops over them; a step's dependencies are waited for at its start),
//!   a `depid` wait orders steps of two thread blocks of one GPU, a
//!   receive waits for its send, and a send waits for room in its
//!   connection's buffer (two Simple messages, eight LL or LL128 ones).
//!   Data decides which of those orders need
//!   a later IR step: along one causal order, every read of a chunk after
//!   the write it reads, however many other operations lie between them,
//!   and two writes the verifier does not allow in one step. Every other
//!   operation goes in the same step as what it waits for (sends read the
//!   state at the step's start, receives apply in listed order), so
//!   operations are placed as early as that allows, a message in one
//!   step; where its receive must come later than its send (the sender
//!   goes on to what the receive waits for), the send copies into a
//!   temporary in its own step, as the buffer holds it. A cycle of waits
//!   is a deadlock and an error. A file written by [`export`] carries each
//!   step's IR step and position (`ccl_step`, `ccl_seq`, attributes the
//!   runtime ignores: its parser keeps up to 16 attributes per element)
//!   and the schedule's phases on `<algo>`; those are used when every
//!   operation has them and they respect the order, so a schedule
//!   round-trips exactly.
//!
//! ## Stages
//! One file each: [`parse`] the text; `layout` the buffers onto IR
//! chunks; `ops`: the steps as a graph of actions, the sides each GPU's
//! memory sees, and the runtime's waits; `order` them causally and find
//! the data dependences; `place` each action in a step; give the `temps`
//! their scratch chunks; `emit` the schedule. [`export`] is the way back.
//!
//! The IR is verified like any schedule; a racy program (two unordered
//! operations on one chunk) has several outcomes and one legal
//! interleaving is what is verified.
//!
//! Errors name the element (`gpu 3 / tb 1 / step 4`), the attribute, the
//! value and what is allowed.

mod emit;
mod error;
mod export;
mod graph;
mod imported;
mod layout;
mod model;
pub mod mscclpp;
mod ops;
mod order;
mod parse;
mod place;
mod protocol;
mod temps;

pub use error::MscclError;
pub use export::export;
pub use imported::{Format, Imported};
pub use model::{
    Buf, CclAttrs, Gpu, Kind, Program, Tb, XStep, MAX_CHUNKS, MAX_GPUS, MAX_STEPS, MSCCL_MAX_COUNT,
    MSCCL_MAX_TBS_PER_CHANNEL,
};
pub use parse::parse;
pub use protocol::{protocol_of, protocol_topology, Protocol, LL128_PAYLOAD, LL_PAYLOAD};

/// Parses and imports an MSCCL algorithm file ([`parse`] then
/// [`to_schedule`]) or, when the text is a JSON object, an MSCCL++
/// execution plan ([`mscclpp::import`]).
///
/// Errors: [`MscclError`].
pub fn import(text: &str) -> Result<Imported, MscclError> {
    if is_json(text) {
        mscclpp::import(text)
    } else {
        to_schedule(parse(text)?)
    }
}

/// The text is a JSON object (an XML file starts with `<`).
fn is_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
}

/// Turns a parsed program into a Schedule, stage by stage (module doc,
/// "Stages").
///
/// Errors: [`MscclError`] naming the element: an unsupported collective,
/// buffers that do not fit it, unmatched sends and receives, dependencies
/// on steps that never signal, a deadlock, hints that contradict the order.
pub fn to_schedule(p: Program) -> Result<Imported, MscclError> {
    let declared = layout::Declared {
        n: p.ngpus,
        coll: &p.coll,
        c: p.nchunksperloop,
        in_place: p.inplace,
        gpus: p.gpus.iter().map(|g| (g.id, g.chunks)).collect(),
        packet_chunks: 0,
    };
    let layout = layout::of(&declared, &layout::XML_TERMS)?;
    let mut notes = layout.notes.clone();
    let mut built = ops::build(&p, &layout)?;
    let ordered = order::order(&mut built.graph, layout.m)?;
    let g = &built.graph;
    let placed = place::place(g, &ordered, &mut notes)?;
    let temps = temps::assign(g, &placed, &layout);
    let max_cnt = p
        .gpus
        .iter()
        .flat_map(|g| g.tbs.iter().flat_map(|t| t.steps.iter().map(|s| s.cnt)))
        .max()
        .unwrap_or(0);
    let mut limits = Vec::new();
    if max_cnt >= MSCCL_MAX_COUNT {
        limits.push(format!("a step moves cnt={max_cnt} chunks; the MSCCL runtime allows cnt < {MSCCL_MAX_COUNT} (msccl_struct.h MSCCL_MAX_COUNT)"));
    }
    let header = emit::Header {
        algorithm: p
            .ccl
            .algorithm
            .clone()
            .unwrap_or_else(|| format!("msccl:{}", p.name)),
        root: p.ccl.root,
        phases: p.ccl.phases.as_deref(),
    };
    let e = emit::emit(g, &layout, &placed, &temps, header, limits, &mut notes);
    Ok(Imported {
        schedule: e.schedule,
        format: Format::Xml,
        // The parser accepts only the three names.
        protocol: protocol_of(&p.proto).unwrap_or(Protocol::Simple),
        origins: e.origins,
        chunk_factor: layout.m,
        thread_blocks: built.thread_blocks,
        xml_steps: built.xml_steps,
        notes,
        program: p,
    })
}
