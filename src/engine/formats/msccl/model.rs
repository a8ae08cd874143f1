//! A parsed MSCCL algorithm file, element by element, and the limits the
//! import keeps to.

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
    pub(super) fn parse(s: &str) -> Option<Buf> {
        match s {
            "i" => Some(Buf::Input),
            "o" => Some(Buf::Output),
            "s" => Some(Buf::Scratch),
            _ => None,
        }
    }
    pub(super) fn name(self) -> &'static str {
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
    pub(super) fn parse(s: &str) -> Option<Kind> {
        by_name(&Kind::ALL, s)
    }
    /// The XML name (`s`, `rrcs`, ...).
    pub fn name(self) -> &'static str {
        name_of(&Kind::ALL, self)
    }
    pub(super) fn sends(self) -> bool {
        matches!(
            self,
            Kind::Send | Kind::RecvCopySend | Kind::RecvReduceSend | Kind::RecvReduceCopySend
        )
    }
    pub(super) fn recvs(self) -> bool {
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
    /// `ccl_step`, `ccl_seq` (written by [`super::export`]).
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
    /// `ccl_algorithm`, `ccl_root`, `ccl_phases` (written by [`super::export`]).
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

/// The value a name table gives `s`.
pub(super) fn by_name<K: Copy>(table: &[(&'static str, K)], s: &str) -> Option<K> {
    table.iter().find(|(n, _)| *n == s).map(|&(_, k)| k)
}

/// The name a table gives `k` (`?` if none).
pub(super) fn name_of<K: PartialEq>(table: &[(&'static str, K)], k: K) -> &'static str {
    table.iter().find(|(_, x)| *x == k).map_or("?", |(n, _)| n)
}
