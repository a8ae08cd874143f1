#!/usr/bin/env bash
# Installs whatever is missing, then serves the playground (release build) on
# http://127.0.0.1:8080. Stop with Ctrl-C.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/install-serve.sh"
cd "$ROOT"
echo "[serve] building and serving on http://127.0.0.1:${PORT:-8080} ..."
exec trunk serve --release --address 127.0.0.1 --port "${PORT:-8080}"
