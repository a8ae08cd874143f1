//! The browser adapter of the runtime (wasm only): web workers host the
//! ranks ([`super::host::Host`]), `MessageChannel`s carry their chunks.
//!
//! - [`pool`]: the page side: spawns and wires the workers, collects each
//!   rank's output, the timeout and the stall watchdog ([`run`]).
//! - [`worker`]: the worker side: a host of rank machines on ports.
//! - [`codec`]: the JS wrapping of the [`super::protocol`] headers
//!   (`{h, b, p}` objects, transferred `ArrayBuffer`s and ports).
//! - [`planner`]: the planner worker (the engine's slow answers off the
//!   page's main thread, [`super::planner`]) and the page's handle on it.

pub mod codec;
pub mod planner;
pub mod pool;
pub mod worker;

pub use pool::run;
