#!/usr/bin/env bash
# Installs what building and serving the page needs, on a Debian machine
# that has only the Rust toolchain (rustup): the wasm32 target, trunk,
# wasm-bindgen-cli, and wasm-opt (npm binaryen, with Node.js from apt).
# Idempotent: each step checks first and does nothing when the tool is there.
# Sourced by scripts/serve.sh and scripts/install-test.sh (it exports PATH).
# Facts behind the pins: docs/toolchain.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
TRUNK_VERSION=0.21.14   # 0.22 needs a newer rustc than current stable
say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }

SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
apt_updated=0
apt_install() {
  if [ $apt_updated = 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

# The wasm32 target.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# trunk (builds and serves the page). ~12 min to compile the first time.
if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (cargo install, ~12 min)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
fi

# wasm-bindgen-cli, exactly the wasm-bindgen version in Cargo.lock (also
# brings wasm-bindgen-test-runner). Without --locked: see toolchain.md.
WB_VERSION="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)"
if ! wasm-bindgen --version 2>/dev/null | grep -q "$WB_VERSION"; then
  say "installing wasm-bindgen-cli $WB_VERSION (~3 min)"
  cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi

# Node.js and npm (wasm-opt comes from npm).
if ! command -v npm >/dev/null; then
  say "installing nodejs and npm (apt)"
  apt_install nodejs npm
fi

# wasm-opt: npm binaryen (Debian's binaryen 108 cannot read current wasm).
# It is package.json's one runtime dependency; the test tools are its
# devDependencies, which scripts/install-test.sh adds. Where those are
# already installed, a plain install keeps them (--omit=dev would remove
# them from node_modules).
if [ ! -x node_modules/.bin/wasm-opt ]; then
  if [ -d node_modules/playwright-core ]; then
    say "installing npm tools (binaryen)"
    npm install --no-audit --no-fund --silent
  else
    say "installing wasm-opt (npm binaryen)"
    npm install --omit=dev --no-audit --no-fund --silent
  fi
fi

# Crates, so that trunk's offline build (Trunk.toml) finds them.
cargo fetch --quiet
