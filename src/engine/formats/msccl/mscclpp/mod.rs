//! MSCCL++ execution plans (the JSON that replaced MSCCL's XML) in.
//!
//! ## The format (what the MSCCL++ executor reads)
//! The executor's plan parser (microsoft/mscclpp
//! `src/core/executor/execution_plan.cc`) and kernel
//! (`src/core/include/execution_kernel.hpp`) define it; the Python DSL
//! writes it (`python/mscclpp/language/internal/operations.py`, the
//! operations' `to_dict`):
//!
//! ```text
//! {name, collective, protocol: Simple|LL, inplace, [min_message_size, max_message_size, ...],
//!  gpus: [{id, input_chunks, output_chunks, scratch_chunks,
//!          channels: [{channel_type: memory|port|switch, connected_to: [peer, ...]}],
//!          remote_buffers: [{rank, type: i|o|s, access_channel_types: [...]}],
//!          threadblocks: [{id, channels: [{channel_type, channel_ids}],
//!                          remote_buffer_refs: [{access_channel_type, remote_buffer_ids}],
//!                          ops: [{name, src_buff, dst_buff, channel_ids, channel_type, ...}]}]}]}
//! ```
//!
//! Input, output and scratch are cut into chunks of one size (the input's
//! or output's size over its chunk count, `getOffset`). A buffer reference
//! is `{type, index, size}` (local) or `{buffer_id, index, size}` (remote:
//! the thread block's `buffer_id`-th remote buffer reachable over the op's
//! `channel_type`, one of the GPU's `remote_buffers`). An op's
//! `channel_ids` index the thread block's channels of that type, which
//! index the GPU's (`channels` flattened in order, one per `connected_to`
//! entry).
//!
//! ## How it runs (execution_kernel.hpp)
//! Each thread block runs its ops in order. Data ops (`copy`, `put`,
//! `get`, `re`, `res`, `rre`, `rres` and the packet ops) are run by all its
//! threads, each on its share of the elements; `signal`, `wait` and their
//! relaxed forms by the first threads only (`handleSignal`, `handleWait`:
//! `tid < nChannels`); `nop` is `__syncthreads()`. So a wait orders the
//! data ops after it only through a `nop` (or `barrier`) between them,
//! and a data op is ordered before a signal the same way; ops of one kind
//! are ordered among themselves. The k-th `wait` on a memory channel ends
//! after the k-th `signal` on the channel it is paired with: the peer's
//! channel of the same rank among those between the two GPUs (the
//! executor connects them with one tag counter per peer, `executor.cc`
//! `setupConnections`). `barrier` (a `DeviceSyncer` over
//! `num_threadblocks`) orders everything before it in each of those
//! thread blocks before everything after it in any. LL packets carry
//! their own flags: a packet read waits until the packet written in this
//! call arrives (`PacketType::read(flag)`), so a packet op that reads
//! scratch waits for the op that wrote those packets.
//!
//! ## Mapping onto the Schedule IR
//! The buffers are laid out as MSCCL XML's are (module
//! [`super`], "Chunks"); LL packets get a scratch area of their own. Data
//! ops become actions: `rres` on gpu g is a reduce of the remote sources
//! into the local destination (a local copy first when the destination
//! is not the local source), then a step later a copy of the result to
//! each remote destination; `put` / `get` copies; `re` / `res` local
//! reduces; packet ops the same with their packets in the packet area.
//! The shared stages order, place and emit them; the schedule is verified
//! like any other. `rlxsignal` / `rlxwait` are read as ordering like
//! `signal` / `wait`: MSCCL++'s relaxed signal skips the memory fence, so
//! a plan that makes data visible with a relaxed pair alone is a race the
//! import does not catch.
//!
//! Not read, and named with their position when a plan uses them: port
//! channels (the proxy's asynchronous puts), switch channels (`glres`,
//! `gstore`, `gstorepkt`), `pipeline`, semaphores (`sem_acquire`,
//! `sem_release`), thread-block groups (`tbg_info`), a plan whose GPUs cut
//! their buffers into different chunk counts, and the older plan schema
//! (`i_buff`, `ctype`).

mod ops;
mod parse;

use super::emit::{self, Header};
use super::error::MscclError;
use super::imported::{Format, Imported};
use super::layout::{self, Layout, Shape, Terms};
use super::model::{by_name, name_of, CclAttrs, Program};
use super::{order, place, temps};
use crate::engine::formats::msccl::protocol::Protocol;

pub use parse::parse;

/// An MSCCL++ buffer kind (`type`): input, output, scratch.
pub use super::model::Buf;

/// A parsed execution plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// `name`.
    pub name: String,
    /// `collective`.
    pub collective: String,
    /// `protocol` (`Simple` or `LL`).
    pub protocol: Protocol,
    /// `inplace`.
    pub inplace: bool,
    /// `min_message_size`, `max_message_size`, when given.
    pub message_sizes: Option<(u64, u64)>,
    /// The GPUs, `id` = index.
    pub gpus: Vec<PlanGpu>,
}

/// A memory channel of a GPU: its peer and its rank among the GPU's
/// channels to that peer (the tag that pairs it with the peer's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channel {
    /// `connected_to`.
    pub peer: usize,
    /// Its rank among the GPU's channels to `peer`.
    pub tag: usize,
}

/// One GPU of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanGpu {
    /// `id`.
    pub id: usize,
    /// `input_chunks`, `output_chunks`, `scratch_chunks`.
    pub chunks: [usize; 3],
    /// Its memory channels, flattened in order.
    pub channels: Vec<Channel>,
    /// Port channels it declares (not read; counted for the error).
    pub port_channels: usize,
    /// `remote_buffers`: (rank, buffer, reachable over memory channels).
    pub remote_buffers: Vec<(usize, Buf, bool)>,
    /// `threadblocks`, `id` = index.
    pub threadblocks: Vec<PlanTb>,
}

/// One thread block of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanTb {
    /// `id`.
    pub id: usize,
    /// Its memory channels: indexes into the GPU's.
    pub channels: Vec<usize>,
    /// Its remote buffers over memory channels: indexes into the GPU's
    /// `remote_buffers`.
    pub buffers: Vec<usize>,
    /// `ops`, in order.
    pub ops: Vec<PlanOp>,
}

/// An operation's name (`getOpType` in execution_plan.cc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `nop`: `__syncthreads()`.
    Nop,
    /// `barrier`: a barrier across thread blocks of the GPU.
    Barrier,
    /// `put`: local source to remote destinations.
    Put,
    /// `pws`: put with signal (port channels).
    PutWithSignal,
    /// `pwsf`: put with signal and flush (port channels).
    PutWithSignalAndFlush,
    /// `get`: remote sources to local destinations.
    Get,
    /// `copy`: local copy.
    Copy,
    /// `signal`.
    Signal,
    /// `wait`.
    Wait,
    /// `flush` (port channels).
    Flush,
    /// `re`: local reduce.
    Reduce,
    /// `res`: local reduce, result also to remote destinations.
    ReduceSend,
    /// `rre`: reduce remote sources into a local destination.
    ReadReduce,
    /// `rres`: `rre`, result also to remote destinations.
    ReadReduceSend,
    /// `ppkt`: local data to remote packets.
    PutPackets,
    /// `rppkt`: local packets on to remote packets.
    ReadPutPackets,
    /// `respkt`: reduce packets, result to remote packets.
    ReduceSendPackets,
    /// `cpkt`: local data to local packets.
    CopyPackets,
    /// `upkt`: local packets to local data.
    UnpackPackets,
    /// `repkt`: reduce packets into local data.
    ReducePackets,
    /// `recpkt`: `repkt`, result also to local packets.
    ReduceCopyPackets,
    /// `recspkt`: `recpkt`, result also to remote packets.
    ReduceCopySendPackets,
    /// `glres`: multimem load-reduce-store (switch channels).
    MultiLoadReduceStore,
    /// `gstore`: multimem store (switch channels).
    MultiStore,
    /// `gstorepkt`: multimem packet store (switch channels).
    MultiStorePackets,
    /// `rlxsignal`: signal without a memory fence.
    RelaxedSignal,
    /// `rlxwait`: its wait.
    RelaxedWait,
    /// `pipeline`: a loop over inner ops.
    Pipeline,
    /// `sem_acquire`.
    SemAcquire,
    /// `sem_release`.
    SemRelease,
}

impl OpKind {
    const ALL: [(&'static str, OpKind); 30] = [
        ("nop", OpKind::Nop),
        ("barrier", OpKind::Barrier),
        ("put", OpKind::Put),
        ("pws", OpKind::PutWithSignal),
        ("pwsf", OpKind::PutWithSignalAndFlush),
        ("get", OpKind::Get),
        ("copy", OpKind::Copy),
        ("signal", OpKind::Signal),
        ("wait", OpKind::Wait),
        ("flush", OpKind::Flush),
        ("re", OpKind::Reduce),
        ("res", OpKind::ReduceSend),
        ("rre", OpKind::ReadReduce),
        ("rres", OpKind::ReadReduceSend),
        ("ppkt", OpKind::PutPackets),
        ("rppkt", OpKind::ReadPutPackets),
        ("respkt", OpKind::ReduceSendPackets),
        ("cpkt", OpKind::CopyPackets),
        ("upkt", OpKind::UnpackPackets),
        ("repkt", OpKind::ReducePackets),
        ("recpkt", OpKind::ReduceCopyPackets),
        ("recspkt", OpKind::ReduceCopySendPackets),
        ("glres", OpKind::MultiLoadReduceStore),
        ("gstore", OpKind::MultiStore),
        ("gstorepkt", OpKind::MultiStorePackets),
        ("rlxsignal", OpKind::RelaxedSignal),
        ("rlxwait", OpKind::RelaxedWait),
        ("pipeline", OpKind::Pipeline),
        ("sem_acquire", OpKind::SemAcquire),
        ("sem_release", OpKind::SemRelease),
    ];

    /// The plan's name for it.
    pub fn name(self) -> &'static str {
        name_of(&OpKind::ALL, self)
    }

    fn parse(s: &str) -> Option<OpKind> {
        by_name(&OpKind::ALL, s)
    }
}

/// A buffer reference, resolved to the GPU whose memory it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ref {
    /// The GPU whose buffer it is.
    pub gpu: usize,
    /// The buffer.
    pub buf: Buf,
    /// `index`: its first chunk.
    pub index: usize,
    /// `size`: its chunks.
    pub size: usize,
    /// Given by `buffer_id` (another GPU's buffer) rather than `type`.
    pub remote: bool,
}

/// One operation of a thread block.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanOp {
    /// `name`.
    pub kind: OpKind,
    /// `src_buff`, resolved.
    pub src: Vec<Ref>,
    /// `dst_buff`, resolved.
    pub dst: Vec<Ref>,
    /// `channel_ids`, as indexes into the GPU's memory channels.
    pub channels: Vec<usize>,
    /// `barrier_id`, `num_threadblocks`.
    pub barrier: Option<(usize, usize)>,
}

/// Words of a plan for the shared layout's errors: the collective
/// buffer's chunk count is `output_chunks` for a gathered one.
fn plan_terms(shape: Shape) -> Terms {
    Terms {
        coll: "collective",
        chunks: if shape == Shape::Gathered {
            "output_chunks"
        } else {
            "input_chunks"
        },
        bufs: ["input_chunks", "output_chunks", "scratch_chunks"],
    }
}

/// Parses and imports an MSCCL++ execution plan ([`parse`] then
/// [`to_schedule`]).
///
/// Errors: [`MscclError`] naming the element (`gpu 0 / threadblock 3 / op
/// 5`), the field, the value and what is allowed.
pub fn import(json: &str) -> Result<Imported, MscclError> {
    to_schedule(parse(json)?)
}

/// The collective buffer's chunk count of a plan laid out as `shape`.
fn collective_chunks(p: &Plan, shape: Shape) -> usize {
    let g = p.gpus.first().map_or([0; 3], |g| g.chunks);
    match shape {
        Shape::Gathered => g[1],
        _ => g[0],
    }
}

/// Turns a parsed plan into a Schedule: the layout, the plan's ops as a
/// graph of actions and waits (`ops`), then the stages MSCCL XML shares.
///
/// Errors: [`MscclError`] naming the element: an op the importer does not
/// read, a wait no signal meets, packets nobody writes, a deadlock.
pub fn to_schedule(p: Plan) -> Result<Imported, MscclError> {
    let shape = crate::engine::collective::Primitive::from_name(&p.collective)
        .and_then(layout::shape_of)
        .unwrap_or(Shape::Full);
    let packets = p.protocol == Protocol::Ll;
    let declared = layout::Declared {
        n: p.gpus.len(),
        coll: &p.collective,
        c: collective_chunks(&p, shape),
        in_place: p.inplace,
        gpus: p.gpus.iter().map(|g| (g.id, g.chunks)).collect(),
        packet_chunks: if packets {
            p.gpus.iter().map(|g| g.chunks[2]).max().unwrap_or(0)
        } else {
            0
        },
    };
    let layout: Layout = layout::of(&declared, &plan_terms(shape))?;
    if layout.c == 0 {
        return Err(MscclError {
            at: "gpu 0".into(),
            what: "input_chunks and output_chunks are 0: the executor needs one of them to cut the buffers into chunks".into(),
        });
    }
    let mut notes = layout.notes.clone();
    let mut built = ops::build(&p, &layout)?;
    notes.append(&mut built.notes);
    let ordered = order::order(&mut built.graph, layout.m)?;
    let g = &built.graph;
    let placed = place::place(g, &ordered, &mut notes)?;
    let temps = temps::assign(g, &placed, &layout);
    let header = Header {
        algorithm: format!("mscclpp:{}", p.name),
        root: None,
        phases: None,
    };
    let e = emit::emit(g, &layout, &placed, &temps, header, Vec::new(), &mut notes);
    let thread_blocks = p.gpus.iter().map(|g| g.threadblocks.len()).sum();
    let op_count = p
        .gpus
        .iter()
        .flat_map(|g| &g.threadblocks)
        .map(|t| t.ops.len())
        .sum();
    let program = Program {
        name: p.name.clone(),
        proto: p.protocol.name().into(),
        nchannels: p.gpus.iter().map(|g| g.channels.len()).max().unwrap_or(0),
        nchunksperloop: layout.c,
        ngpus: p.gpus.len(),
        coll: p.collective.clone(),
        inplace: p.inplace,
        outofplace: Some(!p.inplace),
        bytes_range: p.message_sizes,
        ccl: CclAttrs::default(),
        gpus: Vec::new(),
    };
    Ok(Imported {
        schedule: e.schedule,
        format: Format::MscclppPlan,
        protocol: p.protocol,
        program,
        origins: e.origins,
        chunk_factor: layout.m,
        thread_blocks,
        xml_steps: op_count,
        notes,
    })
}
