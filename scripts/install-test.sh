#!/usr/bin/env bash
# Installs what the whole test suite needs on top of what serving needs
# (scripts/install-serve.sh, sourced first): clippy, Chromium and its
# driver, a CJK font, curl, Open MPI and libclang, cargo-fuzz, and the npm
# test tools (playwright-core, axe-core). Idempotent: each step checks
# first and does nothing when the tool is already there.
# Sourced by scripts/test.sh (it exports PATH). Facts: docs/toolchain.md.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/install-serve.sh"

# clippy (scripts/test.sh checks the engine's no-panic rule with it).
if ! cargo clippy --version >/dev/null 2>&1; then
  say "adding the clippy component"
  rustup component add clippy
fi

# playwright-core (drives Debian's Chromium; never downloads a browser) and
# axe-core (the accessibility test): package.json's devDependencies.
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  say "installing npm test tools (playwright-core, axe-core)"
  npm install --no-audit --no-fund --silent
fi

# Chromium and its driver (end-to-end and wasm-bindgen tests).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "installing chromium and chromium-driver (apt, ~1 min)"
  apt_install chromium chromium-driver
fi

# A CJK font, so that the Chinese page renders in headless Chromium's
# screenshots (tests/e2e/screens.test.mjs) instead of empty boxes.
if ! fc-list 2>/dev/null | grep -qi "wqy\|noto sans cjk"; then
  say "installing a CJK font (apt fonts-wqy-microhei)"
  apt_install fonts-wqy-microhei
fi

# curl (scripts/test.sh polls the server with it).
if ! command -v curl >/dev/null; then apt_install curl; fi

# Open MPI and libclang (cclrun, the `mpi` feature: rsmpi's bindgen needs
# libclang; Debian 12 gives Open MPI 4.1). See docs/toolchain.md.
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null \
   || ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  say "installing Open MPI and libclang (apt: openmpi-bin libopenmpi-dev libclang-dev)"
  apt_install openmpi-bin libopenmpi-dev libclang-dev
fi

# cargo-fuzz (the targets in fuzz/; run on stable Rust with
# RUSTC_BOOTSTRAP=1, see CONTRIBUTING.md). ~2 min to compile.
if ! command -v cargo-fuzz >/dev/null; then
  say "installing cargo-fuzz (~2 min)"
  cargo install cargo-fuzz --locked
fi
(cd fuzz && cargo fetch --quiet)
