//! Algorithms: one file per family, each turning (primitive, ranks) into a
//! [`Schedule`].
//!
//! | name | file | primitives | source |
//! |---|---|---|---|
//! | `ring` | [`ring`] | AllReduce, ReduceScatter, AllGather | Patarasuk & Yuan 2009; NCCL ring; HCCL `Ring.md` |
//! | `mesh` | [`mesh`] | AllReduce, ReduceScatter, AllGather | HCCL `Mesh.md` (full-mesh, one shot per phase) |

pub mod mesh;
pub mod ring;

use super::collective::Primitive;
use super::schedule::Schedule;
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// A concrete algorithm (never "auto": see [`super::select`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Ring: n-1 steps per phase, one chunk per step to the next rank.
    Ring,
    /// Full mesh: every rank exchanges with every peer at once, one step per phase.
    Mesh,
}

impl Algorithm {
    /// Every algorithm, in UI order.
    pub const ALL: [Algorithm; 2] = [Algorithm::Ring, Algorithm::Mesh];

    /// URL name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Mesh => "mesh",
        }
    }

    /// Parses a [`Algorithm::name`].
    pub fn from_name(s: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == s)
    }

    /// One sentence for the UI.
    pub fn summary(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring: each rank talks only to its successor; n-1 steps per phase, 1/n of the data per step",
            Algorithm::Mesh => "mesh (HCCL's full-mesh algorithm): every rank talks to every peer at once; one step per phase",
        }
    }

    /// Does this algorithm implement `primitive` on `ranks` ranks?
    pub fn supports(self, primitive: Primitive, ranks: usize) -> bool {
        let _ = primitive;
        ranks >= 2
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a schedule could not be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AlgorithmError {
    /// The algorithm does not apply.
    #[error("algorithm `{algorithm}` does not implement {primitive} on {ranks} ranks (it needs at least 2 ranks)")]
    Unsupported {
        algorithm: &'static str,
        primitive: Primitive,
        ranks: usize,
    },
}

/// Builds the schedule of `algorithm` for `primitive` on `ranks` ranks.
///
/// Errors: [`AlgorithmError::Unsupported`] if `!algorithm.supports(primitive, ranks)`.
pub fn build(
    algorithm: Algorithm,
    primitive: Primitive,
    ranks: usize,
) -> Result<Schedule, AlgorithmError> {
    if !algorithm.supports(primitive, ranks) {
        return Err(AlgorithmError::Unsupported {
            algorithm: algorithm.name(),
            primitive,
            ranks,
        });
    }
    Ok(match algorithm {
        Algorithm::Ring => ring::schedule(primitive, ranks),
        Algorithm::Mesh => mesh::schedule(primitive, ranks),
    })
}
