//! `cclsim`: the planning pipeline on the command line (native only). Every
//! figure comes from `engine::plan`, the same function the page calls, on
//! the configuration the same link would give (`--json` prints that link).
//!
//! - `cclsim predict --topo T --op OP --algo A|auto --bytes B [--ranks N]
//!   [--profile P.json] [--topology C.json] [--slices auto|K] [--dtype D]
//!   [--root R] [--redop sum|prod|max|min|avg] [--slow R:F] [--late R:US]
//!   [--down A-B|A-port] [--json | --format table|jsonl|csv] [--trace FILE]`:
//!   with slow ranks or failed links (`engine::degrade`), also the healthy
//!   machine's time and the ratio
//! - `cclsim sweep ... -b 8 -e 1G -f 2 [--format table|jsonl|csv]`:
//!   nccl-tests' table (which `cclsim fit` reads back), JSON lines or CSV.
//! - `cclsim fit LOG --out P.json [--ranks N] [--op NAME] [--json]`: fit a
//!   profile; per-row measured vs fitted.
//! - `cclsim accuracy [DIR]`: the user's path on every log in DIR (default:
//!   the real logs in `tests/fixtures/nccl-tests`): fit the even-indexed
//!   sizes of each table, then predict each odd one with `--profile --algo
//!   auto`, and print the hold-out error.
//! - `cclsim fusion --topo T --ranks N --fusion llama3-8b|30x4MiB [--bucket
//!   25MiB] [--dtype D] [--json]`: DDP-style bucketing (without `--bucket`:
//!   DDP's default, with its small first bucket), fused vs unfused.
//! - `cclsim compress --scheme int8|fp8e4m3|fp8e5m2 ...`: the error and wire
//!   size of one quantisation round trip (a what-if: HCCL and NCCL have no
//!   gradient compression).
//!
//! Bad input exits with status 2 and one line on stderr.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(cli::main());
}

#[cfg(not(target_arch = "wasm32"))]
mod cli;
