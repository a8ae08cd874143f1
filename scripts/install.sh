#!/usr/bin/env bash
# Installs whatever is missing to build, serve and test ccl-playground on a
# fresh Debian machine that has only the Rust toolchain (rustup). Idempotent:
# each step checks first and does nothing when the tool is already there.
# Sourced by scripts/serve.sh and scripts/test.sh (it exports PATH).
# Facts behind the pins: docs/toolchain.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
TRUNK_VERSION=0.21.14   # 0.22 needs a newer rustc than stable here
say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }

SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
apt_updated=0
apt_install() {
  if [ $apt_updated = 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

# 1. The wasm32 target.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# 1b. clippy (scripts/test.sh checks the engine's no-panic rule with it).
if ! cargo clippy --version >/dev/null 2>&1; then
  say "adding the clippy component"
  rustup component add clippy
fi

# 2. trunk (builds and serves the page). ~12 min to compile the first time.
if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (cargo install, ~12 min)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
fi

# 3. wasm-bindgen-cli, exactly the wasm-bindgen version in Cargo.lock
#    (also brings wasm-bindgen-test-runner). Without --locked: see toolchain.md.
WB_VERSION="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)"
if ! wasm-bindgen --version 2>/dev/null | grep -q "$WB_VERSION"; then
  say "installing wasm-bindgen-cli $WB_VERSION (~3 min)"
  cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi

# 4. Node.js and npm (for wasm-opt and playwright-core).
if ! command -v npm >/dev/null; then
  say "installing nodejs and npm (apt)"
  apt_install nodejs npm
fi

# 5. wasm-opt (npm binaryen 132; Debian's 108 cannot read current wasm) and
#    playwright-core (drives Debian's Chromium; never downloads a browser).
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ]; then
  say "installing npm tools (binaryen, playwright-core)"
  npm install --no-audit --no-fund --silent
fi

# 6. Chromium and its driver (end-to-end and wasm-bindgen tests).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "installing chromium and chromium-driver (apt, ~1 min)"
  apt_install chromium chromium-driver
fi

# 6b. A CJK font, so that the Chinese page renders in headless Chromium's
#     screenshots (tests/e2e/screens.test.mjs) instead of empty boxes.
if ! fc-list 2>/dev/null | grep -qi "wqy\|noto sans cjk"; then
  say "installing a CJK font (apt fonts-wqy-microhei)"
  apt_install fonts-wqy-microhei
fi

# 7. curl (the test script polls the server with it).
if ! command -v curl >/dev/null; then apt_install curl; fi

# 8. Open MPI and libclang (cclrun, the `mpi` feature: rsmpi's bindgen
#    needs libclang; Debian 12 gives Open MPI 4.1). See docs/toolchain.md.
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null \
   || ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  say "installing Open MPI and libclang (apt: openmpi-bin libopenmpi-dev libclang-dev)"
  apt_install openmpi-bin libopenmpi-dev libclang-dev
fi

# 9. Crates, so that trunk's offline build finds them.
cargo fetch --quiet

# 10. cargo-fuzz (the fuzz targets in fuzz/; run on stable Rust with
#    RUSTC_BOOTSTRAP=1, see README "Fuzzing"). ~2 min to compile.
if ! command -v cargo-fuzz >/dev/null; then
  say "installing cargo-fuzz (~2 min)"
  cargo install cargo-fuzz --locked
fi
(cd fuzz && cargo fetch --quiet)
