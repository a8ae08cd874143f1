#!/usr/bin/env bash
# Installs whatever is missing, then runs every test:
#   1. native:  cargo fmt --check, cargo clippy --lib (the engine's no-panic
#               rule, src/engine/mod.rs), cargo test (engine, verifier, cost model)
#      mpi:     cargo test --features mpi --test mpi (cclrun under mpirun -np 4)
#   2. fuzz:    a short cargo-fuzz run of each target in fuzz/
#   3. wasm:    wasm-bindgen-test in headless Chromium (codec, worker protocol)
#   4. e2e:     trunk serve --release + Playwright in Chromium (tests/e2e),
#               and the static site (scripts/site.sh) served from a sub-path
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/install-test.sh"
cd "$ROOT"
step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

step "native: format"
cargo fmt --all -- --check

step "native: clippy (no unwrap, expect or panic! in the engine outside tests)"
# Only the lints src/engine/mod.rs denies fail this; the rest are silenced.
cargo clippy --lib --quiet -- -A clippy::all

step "native: cargo test"
cargo test --all-targets

step "mpi: cclrun under mpirun -np 4 (every primitive, two algorithms and the library, faults)"
# Root on 2 cores in CI: the test passes --allow-run-as-root --oversubscribe.
cargo test --features mpi --test mpi

step "fuzz: a short run of each target (cargo-fuzz, libFuzzer)"
# Stable Rust: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags; -s none
# (no sanitizer). New inputs go to a scratch dir, the checked-in corpus stays.
for t in url_query log_parser topology_json msccl_import; do
  scratch="$(mktemp -d)"; flog="$(mktemp)"
  if ! (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -s none -O "$t" "$scratch" "corpus/$t" -- \
      -runs="${FUZZ_RUNS:-20000}" -max_len=8192 >"$flog" 2>&1); then
    tail -40 "$flog"; echo "fuzz target $t failed (crash inputs: fuzz/artifacts/$t)"; exit 1
  fi
  echo "$t: $(grep -E '^Done' "$flog")"
  rm -rf "$scratch" "$flog"
done

step "wasm: wasm-bindgen-test in headless Chromium"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --features simd --test wasm_runtime

step "e2e: release build served by trunk, and the static site, driven by Playwright"
PORT="${E2E_PORT:-8091}"
LOG="$(mktemp)"
SERVER=""
# The static site once, before trunk serve: the same release profile and
# target/, so the served build after it only reruns the wasm steps.
# tests/e2e/site.test.mjs serves it from a sub-path.
SITE_TMP=""
if [ -z "${SITE_DIR:-}" ]; then SITE_TMP="$(mktemp -d)"; SITE_DIR="$SITE_TMP"; fi
export SITE_DIR
trap 'if [ -n "$SERVER" ]; then kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; fi
      if [ -n "$SITE_TMP" ]; then rm -rf "$SITE_TMP"; fi' EXIT
bash scripts/site.sh "$SITE_DIR"
# Start trunk serve and wait for the worker script; one retry, because trunk
# 0.21.14's file watcher has been seen to panic while cargo builds.
serve_up() {
  trunk serve --release --address 127.0.0.1 --port "$PORT" --no-autoreload >"$LOG" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 900); do
    if curl -sf "http://127.0.0.1:$PORT/worker.js" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 $SERVER 2>/dev/null; then cat "$LOG"; echo "trunk serve exited"; return 1; fi
    sleep 1
  done
  cat "$LOG"; echo "trunk serve did not come up"; return 1
}
# Another server already on the port would answer in trunk's place (trunk
# then exits with "Address already in use" and the tests run against
# whatever that server holds): refuse instead.
if curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$PORT/"; then
  echo "port $PORT already answers: the e2e tests would run against that server, not this build."
  echo "Stop it, or set E2E_PORT to a free port."
  exit 1
fi
serve_up || { echo "retrying trunk serve once"; serve_up; }
rm -f tests/e2e/out/measurements.txt
BASE_URL="http://127.0.0.1:$PORT" node --test --test-concurrency=1 tests/e2e/
echo "e2e measurements (tests/e2e/out/measurements.txt):"; cat tests/e2e/out/measurements.txt 2>/dev/null || true
