//! What an import gives: the schedule and what the summary says about it.

use super::model::Program;
use super::protocol::Protocol;
use crate::engine::schedule::Schedule;

/// Which format a file was read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// MSCCL algorithm XML.
    Xml,
    /// An MSCCL++ execution plan (JSON, [`super::mscclpp`]).
    MscclppPlan,
}

/// An imported program: the schedule and what the summary says about it.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The schedule (verify it with [`crate::engine::verify::verify`]).
    pub schedule: Schedule,
    /// The format read.
    pub format: Format,
    /// The protocol the file names: how its data moves on the wire
    /// ([`super::protocol_topology`] costs it).
    pub protocol: Protocol,
    /// The parsed file (for an MSCCL++ plan, its header in MSCCL's terms
    /// and no `gpus`: `nchannels` is the most memory channels a GPU has,
    /// `nchunksperloop` the collective buffer's chunks).
    pub program: Program,
    /// `origins[step][transfer]`: the `<step>` each IR transfer comes from
    /// (`gpu 3 / tb 1 / step 4`; the receiving side of a message).
    pub origins: Vec<Vec<String>>,
    /// IR chunks per MSCCL chunk.
    pub chunk_factor: usize,
    /// Thread blocks over all GPUs.
    pub thread_blocks: usize,
    /// `<step>` elements (nops included); for an MSCCL++ plan, its
    /// operations.
    pub xml_steps: usize,
    /// Remarks: out-of-place copies, the runtime's limits, hints ignored.
    pub notes: Vec<String>,
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
