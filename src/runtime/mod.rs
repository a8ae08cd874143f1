//! The runtime (wasm only): rank workers, message channels between them, run
//! control. Depends on the engine; the UI depends on it.
//!
//! CONTRACT used by the UI (keep these signatures):
//! ```ignore
//! pub async fn run(req: RunRequest, on_output: impl FnMut(RankOutput) + 'static) -> Result<RunSummary, RunError>
//! ```

/// The ranks one worker hosts: machines, local delivery (pure; tested natively).
pub mod host;
/// One rank's part of a schedule as a pure state machine (no web types;
/// also compiled natively by `tests/runtime_native.rs`).
pub mod machine;
/// Rank -> worker assignment and message routes (pure; tested natively).
pub mod placement;
pub mod pool;
pub mod protocol;
pub mod worker;

pub use pool::run;
pub use protocol::{RankOutput, RunError, RunRequest, RunSummary};
