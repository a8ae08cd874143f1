#!/usr/bin/env bash
# Real runs against the MPI library, back to back on one machine:
#   1. the baseline: Open MPI's own MPI_Allreduce (and our ring over MPI),
#      8 processes, 64 MiB fp32, `cclrun --compare` (median of the slowest
#      rank over ITERS timed iterations);
#   2. the browser: the same AllReduce on the page, 8 ranks on web workers in
#      headless Chromium (scripts/bench-exec.mjs, REPS fresh page loads):
#      the workers' spawn-to-done wall and the collective's own wall (every
#      rank's input built -> last rank done, the span MPI_Allreduce covers);
#   3. the ratio browser collective / MPI_Allreduce.
# Needs what scripts/install-test.sh installs (Open MPI, trunk, Chromium,
# node_modules). Serves a release build with trunk on PORT unless BASE_URL
# points at a running one. Output: a summary on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH" TRUNK_SKIP_VERSION_CHECK=true
ITERS="${ITERS:-10}"
REPS="${REPS:-5}"
PORT="${PORT:-8093}"
LINK='?v=1&op=allreduce&algo=ring&topo=910b-8&bytes=64MiB&dtype=fp32&seed=1'

cargo build --release --features mpi --bin cclrun
SERVER=""
trap 'if [ -n "$SERVER" ]; then kill $SERVER 2>/dev/null || true; fi' EXIT
if [ -z "${BASE_URL:-}" ]; then
  LOG="$(mktemp)"
  trunk serve --release --address 127.0.0.1 --port "$PORT" --no-autoreload >"$LOG" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 1800); do
    curl -sf "http://127.0.0.1:$PORT/worker_simd.js" >/dev/null 2>&1 && break
    kill -0 $SERVER 2>/dev/null || { cat "$LOG"; echo "trunk serve exited"; exit 1; }
    sleep 1
  done
  BASE_URL="http://127.0.0.1:$PORT"
fi

echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# 1. MPI: mpirun -np 8 cclrun --op allreduce --algo ring,library --compare -b 64M -e 64M (-n $ITERS)"
MPI_OUT="$(mpirun --oversubscribe --allow-run-as-root -np 8 target/release/cclrun --op allreduce \
  --algo ring,library --compare -b 64M -e 64M -w 2 -n "$ITERS" --stat median)"
echo "$MPI_OUT" | grep -E '^#  +size|^ +67108864' || echo "$MPI_OUT"
# Columns: size, ring time, ring busbw, library time, library busbw, ...
MPI_US="$(echo "$MPI_OUT" | awk '$1 == 67108864 { print $4 }')"
echo "# 2. browser: $BASE_URL/$LINK ($REPS page loads)"
BROWSER_OUT="$(node scripts/bench-exec.mjs --base "$BASE_URL" --link "$LINK" --reps "$REPS")"
echo "$BROWSER_OUT"
COLL_MS="$(echo "$BROWSER_OUT" | sed -nE 's/.*collective median ([0-9.]+) ms.*/\1/p')"
WALL_MS="$(echo "$BROWSER_OUT" | sed -nE 's/.*wall median ([0-9.]+) ms.*/\1/p')"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v mpi="$MPI_US" -v coll="$COLL_MS" -v wall="$WALL_MS" 'BEGIN {
  printf "# 3. MPI_Allreduce %.1f ms; browser collective %.1f ms (ratio %.2f), spawn-to-done %.1f ms (ratio %.2f); goal: collective ratio <= 1.5\n",
    mpi / 1000, coll, coll / (mpi / 1000), wall, wall / (mpi / 1000) }'
