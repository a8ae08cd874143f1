//! ccl-playground: see and understand collective communication.
//!
//! Layers (dependencies point down only, see ARCHITECTURE.md):
//! - [`ui`] (wasm only): the yew page.
//! - [`runtime`]: how ranks run for real: the rank state machine, its
//!   hosts and the message types on every target; its `browser` adapter
//!   (the pool of web workers) wasm only.
//! - [`engine`]: pure Rust, no web crates; compiles natively and to wasm32.
//! - [`i18n`], [`lessons`]: the page's words (English, Chinese) and its
//!   guided lessons as data; pure Rust, tested natively.
//! - [`flags`]: the machine flags `cclsim` and `cclrun` share, read from
//!   files with caps and turned into a [`engine::config::Config`] as a
//!   link would be; beside the engine, which never reads files.

pub mod engine;
pub mod flags;
pub mod i18n;
pub mod lessons;

pub mod runtime;

#[cfg(target_arch = "wasm32")]
pub mod ui;
