//! Native tests of the runtime's pure parts: the rank state machine and the
//! JSON side of the codec. `src/runtime` is wasm-only in the library, so the
//! two pure files are compiled here directly; `crate::engine` resolves to the
//! library's engine through the re-export below.

#![allow(dead_code)]

mod engine {
    pub use ccl_playground::engine::*;
}

#[path = "../src/runtime/machine.rs"]
mod machine;

#[path = "../src/runtime/protocol.rs"]
mod protocol;
