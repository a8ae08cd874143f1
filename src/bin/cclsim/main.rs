//! `cclsim`: the planning pipeline on the command line (native only). Every
//! figure comes from `engine::plan`, the same function the page calls, on
//! the configuration the same link would give (`--json` prints that link).
//! `cclsim help SUBCOMMAND` lists the flags; docs/cli.md has examples.
//!
//! | subcommand | what it does | file |
//! |---|---|---|
//! | `predict` | time, algbw and busbw of one collective (with faults, also the healthy machine's) | `cli/predict.rs` |
//! | `sweep` | the same over sizes: nccl-tests' table, JSON lines or CSV | `cli/predict.rs` |
//! | `fit` | a profile from one or several logs, the library model's corrections | `cli/fit.rs` |
//! | `validate` | same-scale, cross-scale, cross-collective and preset accuracy on the public logs | `cli/validate.rs` |
//! | `accuracy` | hold-out accuracy of the curve fit on a directory of logs | `cli/validate.rs` |
//! | `step` | one training step: the collectives a layout issues, timed, beside the compute | `cli/step.rs` |
//! | `fusion` | DDP's buckets, fused against unfused | `cli/fusion.rs` |
//! | `compress` | the error and wire size of one quantisation round trip (a what-if) | `cli/compress.rs` |
//! | `determinism` | one AllReduce against another algorithm or fp32 on the same inputs | `cli/determinism.rs` |
//! | `msccl`, `msccl-export` | MSCCL XML and MSCCL++ plans in, our schedules out | `cli/msccl.rs` |
//! | `tune`, `tuner` | the model's recommendation in NCCL / HCCL syntax; what a tuner file makes the library run | `cli/tune.rs` |
//!
//! Bad input exits with status 2 and one line on stderr.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(cli::main());
}

#[cfg(not(target_arch = "wasm32"))]
mod cli;
