//! Messages between the page, the rank workers and each other.
//!
//! CONTRACT (the UI relies on these types; the runtime helper fills in the
//! codec): see `RunRequest`, `RankOutput`, `RunSummary`, `RunError`.

use crate::engine::dtype::{DType, ReduceOp};
use crate::engine::schedule::Schedule;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Everything needed to run one collective on the workers. Plain serde data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The (verified) schedule; one worker per rank.
    pub schedule: Schedule,
    /// Element type.
    pub dtype: DType,
    /// Reduce op.
    pub op: ReduceOp,
    /// Input seed (each worker makes its own input with `engine::input`).
    pub seed: u64,
    /// Elements per rank buffer.
    pub elems: usize,
    /// The run fails with `RunError::Timeout` if not done by then, ms.
    pub timeout_ms: u32,
}

/// One rank's result.
#[derive(Clone, Debug, PartialEq)]
pub struct RankOutput {
    /// The rank.
    pub rank: usize,
    /// Its whole final buffer (little-endian elements).
    pub buffer: Vec<u8>,
    /// `samples[s][chunk]`: the value of the first element of each chunk
    /// after `s` steps (`s = 0` is the initial buffer; `steps + 1` rows);
    /// `None` for an empty chunk or one that holds nothing yet.
    pub samples: Vec<Vec<Option<f64>>>,
}

/// The run as a whole.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Browser wall time from starting the workers to the last output, ms.
    pub wall_ms: f64,
}

/// Why a run failed. Messages are shown on the page as they are.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum RunError {
    /// Workers could not be created or wired.
    #[error("could not start the rank workers: {0}")]
    Spawn(String),
    /// A worker threw or reported an error.
    #[error("rank {rank}'s worker failed: {message}")]
    Worker { rank: usize, message: String },
    /// Not every rank finished in time.
    #[error("timed out after {ms} ms waiting for ranks {waiting:?}")]
    Timeout { ms: u32, waiting: Vec<usize> },
}
