//! The runtime: how the ranks of a verified schedule run for real. Depends
//! on the engine; the UI and `cclrun` depend on it.
//!
//! What compiles on every target (pure Rust, tested natively by
//! `tests/runtime_native.rs` and the unit tests):
//! - [`machine`]: one rank's part of a schedule as a sans-IO state machine
//!   ([`machine::RankMachine`]), the one every backend drives: the browser's
//!   workers and `cclrun`'s MPI processes alike;
//! - [`host`]: several rank machines hosted by one worker, local delivery;
//! - [`placement`]: which worker hosts which rank ([`placement::WorkerLayout`]);
//! - [`protocol`]: the run's request and results, the JSON message headers;
//! - [`fault`]: the test-only fault mini-language (`KIND:rank=R:step=K`);
//! - [`planner`]: the planner worker's jobs and answers (the engine's slow
//!   answers made off the page's main thread) and their CBOR encoding.
//!
//! The adapters that move the chunks:
//! - `browser` (wasm only): the worker pool, the worker and the JS side of
//!   the codec (web-sys, js-sys);
//! - `mpi` (native, cargo feature `mpi`): one MPI process per rank,
//!   nonblocking point-to-point per step (`cclrun`), and the MPI
//!   library's own collectives as the baseline.
//!
//! CONTRACT used by the UI (keep these signatures):
//! ```ignore
//! pub async fn run(req: RunRequest, on_output: impl FnMut(RankOutput) + 'static) -> Result<RunSummary, RunError>
//! ```

pub mod fault;
pub mod host;
pub mod machine;
pub mod placement;
pub mod planner;
pub mod protocol;

#[cfg(target_arch = "wasm32")]
pub mod browser;

#[cfg(all(feature = "mpi", not(target_arch = "wasm32")))]
pub mod mpi;

#[cfg(target_arch = "wasm32")]
pub use browser::run;
pub use protocol::{RankOutput, RunError, RunRequest, RunSummary};
