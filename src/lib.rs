//! ccl-playground: see and understand collective communication.
//!
//! Layers (dependencies point down only, see ARCHITECTURE.md):
//! - [`ui`] (wasm only): the yew page.
//! - [`runtime`] (wasm only): rank workers, message channels, run control.
//! - [`engine`]: pure Rust, no web crates; compiles natively and to wasm32.

pub mod engine;

#[cfg(target_arch = "wasm32")]
pub mod runtime;

#[cfg(target_arch = "wasm32")]
pub mod ui;
