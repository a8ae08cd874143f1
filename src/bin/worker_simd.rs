//! The rank worker with the SIMD128 reduce kernels (feature `simd`; built
//! by trunk as `worker_simd.js`). Same entry point as `worker`; the pool
//! picks this one where the browser validates WebAssembly SIMD.

#[cfg(target_arch = "wasm32")]
fn main() {
    ccl_playground::runtime::browser::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the rank worker runs only in a browser (wasm32)");
}
