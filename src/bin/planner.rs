//! The planner worker's entry point (built for wasm32 by trunk as
//! `planner.js`): the engine's slow answers off the page's main thread
//! (`runtime::browser::planner`).

#[cfg(target_arch = "wasm32")]
fn main() {
    ccl_playground::runtime::browser::planner::serve();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the planner worker runs only in a browser (wasm32)");
}
