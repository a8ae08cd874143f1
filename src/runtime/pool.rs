//! Placeholder: the worker pool (see runtime/mod.rs contract).
use super::protocol::{RankOutput, RunError, RunRequest, RunSummary};

/// Runs `req` on one web worker per rank.
pub async fn run(req: RunRequest, on_output: impl FnMut(RankOutput) + 'static) -> Result<RunSummary, RunError> {
    let _ = (req, on_output);
    Err(RunError::Spawn("not implemented yet".into()))
}
