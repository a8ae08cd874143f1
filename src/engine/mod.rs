//! The engine: what collectives mean, how algorithms implement them, how long
//! they take. Pure Rust: no web-sys, js-sys, wasm-bindgen, gloo or yew.
//!
//! Data flow of one run: [`config::Config`] -> [`plan::Plan::new`]
//! (machine, `auto` by the machine's [`library`], [`algorithm::build_on`],
//! [`verify::verify`], [`cost::estimate_sliced`], the ranking) -> (workers
//! or [`execute::execute`]) -> [`check::Checker`].
//!
//! No `unwrap`, `expect` or `panic!` outside tests: user input reaches the
//! engine (controls, links, pasted logs, imported files) and must come back
//! as an error naming the field, never as a panic. `scripts/test.sh` runs
//! `cargo clippy --lib`, which the attribute below makes fail on one.
//! (Indexing and arithmetic are not covered: the fuzz targets and proptests
//! look for those.)
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod algorithm;
pub mod calibrate;
pub mod check;
pub mod collective;
pub mod compressed;
pub mod config;
pub mod cost;
pub mod custom_topology;
pub mod degrade;
pub mod determinism;
pub mod dtype;
pub mod execute;
pub mod formats;
pub mod fusion;
pub mod hardware;
pub mod import;
pub mod input;
pub mod library;
pub mod plan;
pub mod predict;
pub mod quantization;
pub mod schedule;
#[cfg(all(target_arch = "wasm32", feature = "simd"))]
pub mod simd128;
pub mod stats;
pub mod step;
pub mod topology;
pub mod transformer;
pub mod tune;
pub mod units;
pub mod verify;
pub mod wire;
