#!/usr/bin/env bash
# Builds the page as a static site into DIR: copy DIR to any host, at its
# root or under a sub-path (https://user.example.io/ccl-playground/), and
# it works with no server configuration. Installs what building needs first
# (scripts/install-serve.sh). The release build reuses target/, so after a
# `trunk serve --release` it is incremental. See docs/site.md.
#   bash scripts/site.sh DIR
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: bash scripts/site.sh DIR   (DIR: where the site goes, e.g. _site)" >&2
  exit 2
fi
# trunk replaces everything in its dist folder: refuse a folder that holds
# anything but a previous site, so a typo cannot wipe a home or a checkout.
mkdir -p "$1"
DIR="$(cd "$1" && pwd)"
if [ -n "$(ls -A "$DIR")" ] && [ ! -f "$DIR/index.html" ]; then
  echo "site: $DIR is neither empty nor a previous site (no index.html); not replacing it" >&2
  exit 1
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$DIR" = "$ROOT" ] || [ "$DIR" = / ]; then
  echo "site: refusing to build into $DIR" >&2
  exit 1
fi
source "$ROOT/scripts/install-serve.sh"
cd "$ROOT"

# --public-url ./ : every asset trunk links (the app's JS and wasm, the CSS,
# the preloads) at a URL relative to index.html. The workers' scripts are
# resolved against the page's own URL at run time (src/runtime/browser/pool.rs).
trunk build --release --public-url ./ --dist "$DIR"

# The CSP that `trunk serve` sends as a header, as a <meta> element, with a
# hash of trunk's inline loader for its nonce.
node scripts/site-csp.mjs "$DIR/index.html" Trunk.toml

# Offline after the first visit: a service worker that precaches every file
# of this build (its cache named by their content hash), and the small
# script that registers it. Last: it hashes the final files.
node scripts/site-sw.mjs "$DIR"

for f in index.html sw.js sw-register.js worker.js worker_bg.wasm worker_simd.js worker_simd_bg.wasm planner.js planner_bg.wasm; do
  [ -s "$DIR/$f" ] || { echo "site: $DIR/$f is missing after the build" >&2; exit 1; }
done
echo "[site] $DIR ($(du -sh "$DIR" | cut -f1)):"
ls -l "$DIR" | tail -n +2
