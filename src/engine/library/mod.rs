//! Whose collective library a machine models, which algorithms that
//! library runs for each primitive, and how it chooses among them.
//!
//! A [`Topology`] says whose library it models ([`Topology::library`]):
//! HCCL on the Ascend presets, NCCL on the NVIDIA preset, the measured
//! library for a fitted profile (nccl-tests / rccl-tests → NCCL, hccl_test
//! → HCCL), and for a custom topology what its JSON says (`"library"`;
//! default: no library, "the model", with an optional list of algorithms).
//! `auto` takes the library's own choice ([`Library::choose`]: HCCL's
//! documented selection by level and size in [`hccl`], NCCL's tuning model
//! in [`nccl`], Open MPI's `coll/tuned` fixed decision rules in [`mpi`]);
//! only "the model" ranks algorithms by the cost model's predicted time.
//! Every other algorithm stays selectable by hand and is labelled "not
//! what <library> runs" ([`Library::runs`]).

pub mod hccl;
pub mod mpi;
pub mod nccl;

use super::algorithm::Algorithm;
use super::collective::Primitive;
use super::dtype::ReduceOp;
pub use super::topology::Library;
use super::topology::Topology;

/// A library's choice for one call: the algorithm and why, in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The algorithm the library runs.
    pub algorithm: Algorithm,
    /// Why, one sentence with the rule and its source.
    pub why: String,
}

/// What a library's rule needs to know about the call.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The machine (rank `r` on device `r`).
    pub topology: &'a Topology,
    /// The primitive.
    pub primitive: Primitive,
    /// Ranks taking part.
    pub ranks: usize,
    /// Message size S, bytes (nccl-tests' size).
    pub bytes: u64,
    /// Can NCCL run it on NVLS (its data type and reduce op,
    /// [`nccl::nvls_supported`])?
    pub nvls_ok: bool,
    /// Bytes per element of its data type: Open MPI's ring Allreduce
    /// switches to recursive doubling when the element count is below the
    /// rank count ([`mpi`]).
    pub elem_bytes: u64,
}

impl Call<'_> {
    /// Ranks per server, in rank order ([`Topology::nodes_of`]).
    pub fn nodes(&self) -> Vec<usize> {
        self.topology.nodes_of(self.ranks)
    }
}

impl Library {
    /// True if the library has reduce op `op`: HCCL's `HcclReduceOp` has
    /// no average ([`ReduceOp::in_hccl`]), MPI's predefined `MPI_Op`s have
    /// none either (MPI-4.0 §6.9.2: MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD and
    /// logical / bitwise ops); NCCL has `ncclAvg` (since 2.10); the model
    /// has every op.
    pub fn has_redop(self, op: ReduceOp) -> bool {
        match self {
            Library::Hccl => op.in_hccl(),
            Library::Mpi => op != ReduceOp::Avg,
            Library::Nccl | Library::Model => true,
        }
    }

    /// The sentence `cclsim` and the plan's details print when the
    /// library lacks `op` on a reducing `primitive` (`None` otherwise):
    /// the run is then NCCL's `ncclAvg` arithmetic on this machine.
    pub fn redop_note(self, primitive: Primitive, op: ReduceOp) -> Option<String> {
        (primitive.reduces() && !self.has_redop(op)).then(|| {
            let has = match self {
                Library::Hccl => "HcclReduceOp has SUM, PROD, MAX and MIN",
                _ => "MPI_Op has MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN",
            };
            format!(
                "{} has no {} ({has}); this run computes NCCL's ncclAvg (each contribution times 1/n in the dtype, then summed; integers summed, then divided by n toward zero)",
                self.title(),
                op.name()
            )
        })
    }

    /// Every library, in UI order.
    pub const ALL: [Library; 4] = [Library::Hccl, Library::Nccl, Library::Mpi, Library::Model];

    /// Its name in text (`HCCL`, `NCCL`, `MPI`, `the model`).
    pub fn title(self) -> &'static str {
        match self {
            Library::Hccl => "HCCL",
            Library::Nccl => "NCCL",
            Library::Mpi => "MPI",
            Library::Model => "the model",
        }
    }

    /// The JSON / CLI name (`hccl`, `nccl`, `mpi`, `model`).
    pub fn name(self) -> &'static str {
        match self {
            Library::Hccl => "hccl",
            Library::Nccl => "nccl",
            Library::Mpi => "mpi",
            Library::Model => "model",
        }
    }

    /// Parses a [`Library::name`].
    pub fn from_name(s: &str) -> Option<Library> {
        Library::ALL.into_iter().find(|l| l.name() == s)
    }

    /// What the devices are called on machines of this library (`NPU` for
    /// HCCL, `GPU` for NCCL, `rank` otherwise).
    pub fn device_word(self) -> &'static str {
        match self {
            Library::Hccl => "NPU",
            Library::Nccl => "GPU",
            Library::Mpi | Library::Model => "rank",
        }
    }

    /// The library's own choice for `call`, or `None` for [`Library::Model`]
    /// (whose `auto` ranks by predicted time) and when the library has no
    /// algorithm in our catalogue for the call (then `auto` falls back to
    /// the model's ranking and says so).
    pub fn choose(self, call: &Call) -> Option<Choice> {
        let c = match self {
            Library::Hccl => hccl::choose(call),
            Library::Nccl => nccl::choose(call),
            Library::Mpi => mpi::choose(call),
            Library::Model => return None,
        };
        c.filter(|c| c.algorithm.supports(call.primitive, call.ranks))
    }

    /// Does the library run `algorithm` for `primitive` at all (for some
    /// size)? The UI labels the others "not what <library> runs".
    /// [`Library::Model`] runs everything.
    pub fn runs(self, algorithm: Algorithm, primitive: Primitive) -> bool {
        use Algorithm::*;
        use Primitive::*;
        match self {
            Library::Model => true,
            Library::Hccl => match primitive {
                AllReduce | ReduceScatter | AllGather => {
                    matches!(
                        algorithm,
                        Mesh | Ring | Hier | HierNhr | Pipeline | Nhr | Rhd | Nb
                    )
                }
                Broadcast | Reduce => matches!(algorithm, Mesh | Ring | Hier | Nhr | Rhd | Star),
                Scatter | Gather => matches!(algorithm, Star | Hier),
                AlltoAll | AlltoAllV => matches!(algorithm, Mesh | Pairwise),
                Barrier => matches!(algorithm, Mesh | Ring | Nb),
                SendRecv => algorithm == Ring,
            },
            Library::Nccl => match primitive {
                AllReduce => matches!(algorithm, Ring | Dbtree),
                ReduceScatter | AllGather => matches!(algorithm, Ring | Nb),
                Broadcast | Reduce | SendRecv | Barrier => algorithm == Ring,
                Scatter | Gather => algorithm == Star,
                AlltoAll | AlltoAllV => algorithm == Mesh,
            },
            Library::Mpi => match primitive {
                AllReduce => matches!(algorithm, Rhd | Ring),
                ReduceScatter => matches!(algorithm, Rhd | Nb | Mesh),
                AllGather => matches!(algorithm, Rhd | Nb | Ring),
                Broadcast => matches!(algorithm, Star | Ring | Tree | Nhr),
                Reduce => matches!(algorithm, Star | Ring | Tree | Mesh),
                Scatter | Gather => matches!(algorithm, Star | Tree),
                AlltoAll => matches!(algorithm, Nb | Mesh | Pairwise),
                AlltoAllV => matches!(algorithm, Mesh | Pairwise),
                Barrier => matches!(algorithm, Mesh | Ring | Nb),
                SendRecv => algorithm == Ring,
            },
        }
    }

    /// The library a log's tool measured (nccl-tests / rccl-tests: NCCL;
    /// hccl_test: HCCL; an MPI benchmark: MPI).
    pub fn of_tool(tool: super::formats::Tool) -> Library {
        use super::formats::Tool;
        match tool {
            Tool::NcclTests => Library::Nccl,
            Tool::HcclTest => Library::Hccl,
            Tool::Osu => Library::Mpi,
        }
    }
}

/// `floor(log2 x)` for `x ≥ 1` (NCCL's `log2i`, `src/include/utils.h`), 0 for 0.
pub(crate) fn log2i(x: usize) -> usize {
    if x == 0 {
        0
    } else {
        (usize::BITS - 1 - x.leading_zeros()) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in Library::ALL {
            assert_eq!(Library::from_name(l.name()), Some(l));
        }
        assert_eq!(log2i(1), 0);
        assert_eq!(log2i(8), 3);
        assert_eq!(log2i(9), 3);
    }
}
