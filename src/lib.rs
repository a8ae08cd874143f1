//! ccl-playground: see and understand collective communication.
//!
//! Layers (dependencies point down only, see ARCHITECTURE.md):
//! - [`ui`] (wasm only): the yew page.
//! - [`runtime`]: how ranks run for real: the rank state machine, its
//!   hosts and the message types on every target; its `browser` adapter
//!   (the pool of web workers) wasm only.
//! - [`engine`]: pure Rust, no web crates; compiles natively and to wasm32.

pub mod engine;

pub mod runtime;

#[cfg(target_arch = "wasm32")]
pub mod ui;
