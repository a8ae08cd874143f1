//! The page's entry point (built for wasm32 by trunk).

#[cfg(target_arch = "wasm32")]
fn main() {
    ccl_playground::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("ccl-playground is a web page: run `scripts/serve.sh` (or `trunk serve`) and open http://127.0.0.1:8080");
}
