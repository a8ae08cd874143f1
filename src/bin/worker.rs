//! The rank worker's entry point (built for wasm32 by trunk as `worker.js`).

#[cfg(target_arch = "wasm32")]
fn main() {
    ccl_playground::runtime::browser::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the rank worker runs only in a browser (wasm32)");
}
