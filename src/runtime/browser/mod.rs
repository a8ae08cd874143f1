//! The browser adapter of the runtime (wasm only): web workers host the
//! ranks ([`super::host::Host`]), `MessageChannel`s carry their chunks.
//!
//! - [`pool`]: the page side: spawns and wires the workers, collects each
//!   rank's output, the timeout and the stall watchdog ([`run`]).
//! - [`worker`]: the worker side: a host of rank machines on ports.
//! - [`codec`]: the JS wrapping of the [`super::protocol`] headers
//!   (`{h, b, p}` objects, transferred `ArrayBuffer`s and ports).

pub mod codec;
pub mod pool;
pub mod worker;

pub use pool::run;
