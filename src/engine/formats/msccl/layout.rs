//! Stage 2: where each MSCCL buffer (`i`, `o`, `s`) of each GPU lies in the
//! Schedule's chunks, and how many IR chunks one MSCCL chunk is (module
//! doc, "Chunks"). Shared by the XML and the MSCCL++ plan import: both
//! cut input, output and scratch into chunks of one size.

use super::error::{err, MscclError};
use super::model::Buf;
use crate::engine::collective::Primitive;

/// How the collective's MSCCL buffers map onto the IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// i and o are the whole buffer (AllReduce, Broadcast, Reduce).
    Full,
    /// i is one block of o (AllGather, Gather).
    Gathered,
    /// o is one block of i (ReduceScatter, Scatter).
    Scattered,
    /// i is the send area, o the receive area (AlltoAll).
    Pairs,
}

pub(super) fn shape_of(p: Primitive) -> Option<Shape> {
    match p {
        Primitive::AllReduce | Primitive::Broadcast | Primitive::Reduce => Some(Shape::Full),
        Primitive::AllGather | Primitive::Gather => Some(Shape::Gathered),
        Primitive::ReduceScatter | Primitive::Scatter => Some(Shape::Scattered),
        Primitive::AlltoAll => Some(Shape::Pairs),
        _ => None,
    }
}

/// The collectives both importers read.
pub(super) const SUPPORTED: &str =
    "allreduce, reducescatter, allgather, broadcast, reduce, scatter, gather, alltoall";

/// Where an MSCCL buffer lives in the IR, in MSCCL chunks.
#[derive(Clone, Copy, Debug)]
pub(super) enum Region {
    /// At MSCCL chunk `base` of the collective's buffer (plus `rank ·
    /// per_rank`).
    Primary { base: usize, per_rank: usize },
    /// At MSCCL chunk `base` of the scratch area.
    Extra { base: usize },
}

/// The words a format uses for the figures the layout checks, so that an
/// error names the file's own attribute.
pub(super) struct Terms {
    /// The collective's name (`coll`).
    pub coll: &'static str,
    /// The collective buffer's chunk count (`nchunksperloop`).
    pub chunks: &'static str,
    /// The input, output and scratch chunk counts (`i_chunks`, ...).
    pub bufs: [&'static str; 3],
}

/// MSCCL XML's words.
pub(super) const XML_TERMS: Terms = Terms {
    coll: "coll",
    chunks: "nchunksperloop",
    bufs: ["i_chunks", "o_chunks", "s_chunks"],
};

/// What the import needs of a file to lay out its buffers.
pub(super) struct Declared<'a> {
    /// `ngpus`.
    pub n: usize,
    /// The collective's name.
    pub coll: &'a str,
    /// MSCCL chunks of the collective's buffer (`nchunksperloop`).
    pub c: usize,
    /// In place.
    pub in_place: bool,
    /// Per GPU: its id and its `i`, `o`, `s` chunk counts.
    pub gpus: Vec<(usize, [usize; 3])>,
    /// MSCCL chunks of a packet area kept apart from scratch (MSCCL++ LL
    /// packets; 0 for MSCCL XML).
    pub packet_chunks: usize,
}

/// The buffers laid out.
pub(super) struct Layout {
    pub primitive: Primitive,
    pub shape: Shape,
    /// Ranks.
    pub n: usize,
    /// MSCCL chunks of the collective's buffer (`nchunksperloop`).
    pub c: usize,
    /// `c / n`: a rank's part of a gathered or scattered buffer.
    pub per: usize,
    /// MSCCL chunks of the IR buffer (`2c` for AlltoAll's two areas).
    pub primary: usize,
    /// IR chunks per MSCCL chunk.
    pub m: usize,
    /// `i`, `o`, `s`.
    pub regions: [Region; 3],
    /// MSCCL chunk of the scratch area where the packet area starts.
    pub packet_base: usize,
    /// MSCCL chunk of the scratch area where the temporaries start.
    pub temp_base: usize,
    /// A first local step copies the send area into the receive area.
    pub pre_copy: bool,
    /// A last local step copies the output out of scratch into place.
    pub post_copy: bool,
    /// Remarks for the summary.
    pub notes: Vec<String>,
}

impl Layout {
    /// The IR chunk of MSCCL chunk `off` of `buf` on `rank`.
    pub fn chunk(&self, rank: usize, buf: Buf, off: usize) -> usize {
        self.region_chunk(self.regions[buf as usize], rank, off)
    }

    /// The IR chunk of MSCCL chunk `off` of the packet area.
    pub fn packet_chunk(&self, off: usize) -> usize {
        self.region_chunk(
            Region::Extra {
                base: self.packet_base,
            },
            0,
            off,
        )
    }

    fn region_chunk(&self, r: Region, rank: usize, off: usize) -> usize {
        match r {
            Region::Primary { base, per_rank } => (base + rank * per_rank + off) * self.m,
            Region::Extra { base } => self.primary * self.m + (base + off) * self.m,
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Lays out the declared buffers (module doc, "Chunks").
///
/// Errors: [`MscclError`] at `algo` for a collective the importer does not
/// read or a chunk count the collective cannot split, at `gpu N` for a
/// buffer larger than the collective's.
pub(super) fn of(d: &Declared<'_>, t: &Terms) -> Result<Layout, MscclError> {
    let n = d.n;
    let coll = d.coll;
    let unsupported = || {
        err(
            "algo",
            format!("{}=\"{coll}\": the importer reads {SUPPORTED}", t.coll),
        )
    };
    let Some(primitive) = Primitive::from_name(coll) else {
        return unsupported();
    };
    let Some(shape) = shape_of(primitive) else {
        return unsupported();
    };
    let c = d.c;
    let per = c / n;
    if matches!(shape, Shape::Gathered | Shape::Scattered) && c % n != 0 {
        return err(
            "algo",
            format!(
                "{}=\"{c}\": {coll} needs a multiple of ngpus ({n}): each rank's part is {} / ngpus chunks",
                t.chunks, t.chunks
            ),
        );
    }
    // MSCCL chunks of the collective's buffer, and its blocks.
    let primary = if shape == Shape::Pairs { 2 * c } else { c };
    let blocks = primitive.blocks(n);
    let m = blocks / gcd(primary, blocks);
    let mut notes = Vec::new();
    let (i_size, o_size) = match shape {
        Shape::Full | Shape::Pairs => (c, c),
        Shape::Gathered => (per, c),
        Shape::Scattered => (c, per),
    };
    let s_size = d.gpus.iter().map(|g| g.1[2]).max().unwrap_or(0);
    let mut extra = 0usize;
    let prim = |base, per_rank| Region::Primary { base, per_rank };
    let (ri, ro, pre_copy, post_copy) = match (shape, d.in_place) {
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
    let packet_base = extra;
    extra += d.packet_chunks;
    // Declared sizes must fit the collective's buffers.
    for &(id, chunks) in &d.gpus {
        for (b, want) in [(Buf::Input, i_size), (Buf::Output, o_size)] {
            let got = chunks[b as usize];
            if got > want {
                return err(
                    format!("gpu {id}"),
                    format!(
                        "{}=\"{got}\": {coll} with {}=\"{c}\" on {n} gpus has {want} {} chunks",
                        t.bufs[b as usize],
                        t.chunks,
                        if b == Buf::Input { "input" } else { "output" }
                    ),
                );
            }
        }
    }
    Ok(Layout {
        primitive,
        shape,
        n,
        c,
        per,
        primary,
        m,
        regions: [ri, ro, rs],
        packet_base,
        temp_base: extra,
        pre_copy,
        post_copy,
        notes,
    })
}
