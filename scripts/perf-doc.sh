#!/usr/bin/env bash
# Regenerates docs/performance.md from the benchmarks: each section is
# re-measured by the command it names and rewritten in place, between its
# markers (<!-- perf:NAME:begin --> ... <!-- perf:NAME:end -->), with the
# machine it ran on; a section that is not run keeps its last figures.
# History lives in git, not in the page.
#
#   bash scripts/perf-doc.sh                 # every section (~40 min on 2 cores)
#   bash scripts/perf-doc.sh sim fit         # only these sections
#   OUT=/tmp/perf.md bash scripts/perf-doc.sh sim   # write elsewhere
#
# Sections and what they need (scripts/install-test.sh installs all of it):
#   sim    cargo bench --bench simulate -- allreduce_1GiB_at_scale    (cargo)
#   wasm   the same cases in headless Chromium (tests/wasm_bench.rs)  (wasm-bindgen-test-runner, chromedriver)
#   plan   cargo bench --bench plan -- headline_1024ranks             (cargo)
#   fit    cargo bench --bench fit                                    (cargo)
#   size   trunk build --release: the three wasm files                (trunk, wasm-opt)
#   exec   bash scripts/bench-exec.sh: the browser vs MPI_Allreduce    (trunk, Chromium, Open MPI)
#   page   node scripts/measure-page.mjs: page responsiveness          (trunk, Chromium, playwright-core)
#   mpi    bash scripts/bench-mpi.sh: cclrun vs MPI_Allreduce          (Open MPI)
# A section whose tools are missing is skipped with a message.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH" TRUNK_SKIP_VERSION_CHECK=true
DOC="${OUT:-docs/performance.md}"
ALL=(sim wasm plan fit size exec page mpi)
SECTIONS=("$@")
[ ${#SECTIONS[@]} -gt 0 ] || SECTIONS=("${ALL[@]}")
for s in "${SECTIONS[@]}"; do
  case " ${ALL[*]} " in *" $s "*) ;; *) echo "unknown section $s (one of: ${ALL[*]})"; exit 2 ;; esac
done
[ -f "$DOC" ] || cp docs/performance.md "$DOC"
WORK="$(mktemp -d)"
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
say() { printf '\033[1m[perf-doc]\033[0m %s\n' "$*" >&2; }
has() { command -v "$1" >/dev/null 2>&1; }
wanted() { case " ${SECTIONS[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# The machine a section ran on, one line.
machine() {
  local cpu mem os
  cpu="$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)"
  mem="$(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null || true)"
  os="$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || uname -s)"
  echo "Machine: $(nproc) cores (${cpu:-unknown CPU}), ${mem:-? GiB} memory, $os, $(rustc --version | cut -d' ' -f1-2); load average $1 before, $(cut -d' ' -f1-3 /proc/loadavg) after."
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# Replaces section $1 of $DOC with the contents of file $2.
put() {
  local name="$1" body="$2" tmp="$WORK/doc.md"
  if ! grep -q "^<!-- perf:$name:begin -->$" "$DOC"; then
    echo "$DOC has no section $name (<!-- perf:$name:begin -->)"; exit 1
  fi
  awk -v name="$name" -v body="$body" '
    $0 == "<!-- perf:" name ":begin -->" { print; while ((getline line < body) > 0) print line; skip = 1; next }
    $0 == "<!-- perf:" name ":end -->" { skip = 0 }
    !skip { print }' "$DOC" > "$tmp"
  mv "$tmp" "$DOC"
  say "rewrote section $name of $DOC"
}

# Criterion's medians from `cargo bench` output: "id<TAB>median<TAB>unit" per
# benchmark (criterion prints the id alone on a line when it is long).
medians() {
  awk '
    /time:[ \t]+\[/ {
      id = $0; sub(/[ \t]*time:.*/, "", id); gsub(/^[ \t]+|[ \t]+$/, "", id)
      if (id == "") id = last
      line = $0; sub(/.*\[/, "", line); split(line, v, /[ \t]+/)
      print id "\t" v[3] "\t" v[4]; next }
    /^[A-Za-z0-9_]/ && !/^(Benchmarking|Found|Gnuplot|Running|Warning|change|Performance|No change|Compiling|Finished)/ { last = $0; gsub(/[ \t]+$/, "", last) }
  ' "$1"
}

# Milliseconds from a criterion value and unit.
to_ms() { awk -v x="$1" -v u="$2" 'BEGIN { f = (u == "s") ? 1000 : (u == "ms") ? 1 : (u == "µs" || u == "us") ? 0.001 : (u == "ns") ? 1e-6 : 0; printf "%.3g", x * f }'; }

# Serves a release build once, for the sections that load the page.
BASE_URL="${BASE_URL:-}"
serve() {
  [ -n "$BASE_URL" ] && return 0
  local port="${PERF_PORT:-8094}" log="$WORK/trunk.log"
  say "trunk serve --release on port $port (the first build takes minutes)"
  trunk serve --release --address 127.0.0.1 --port "$port" --no-autoreload >"$log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 1800); do
    curl -sf "http://127.0.0.1:$port/worker_simd.js" >/dev/null 2>&1 && { BASE_URL="http://127.0.0.1:$port"; return 0; }
    kill -0 "$SERVER" 2>/dev/null || { cat "$log"; echo "trunk serve exited"; exit 1; }
    sleep 1
  done
  cat "$log"; echo "trunk serve did not come up"; exit 1
}

# ---- sim (and wasm): the 1 GiB AllReduce at 1024 and 8192 ranks ----
if wanted sim || wanted wasm; then
  la="$(loadavg)"
  say "cargo bench --bench simulate -- allreduce_1GiB_at_scale"
  cargo bench --bench simulate -- allreduce_1GiB_at_scale >"$WORK/sim.txt" 2>"$WORK/sim.err" \
    || { cat "$WORK/sim.err"; exit 1; }
  medians "$WORK/sim.txt" > "$WORK/sim.medians"
  have_wasm=0
  if wanted wasm; then
    if has wasm-bindgen-test-runner && has chromedriver; then
      say "tests/wasm_bench.rs in headless Chromium (release)"
      CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
        cargo test --release --target wasm32-unknown-unknown --test wasm_bench -- --nocapture \
        >"$WORK/wasm.txt" 2>&1 || { tail -40 "$WORK/wasm.txt"; exit 1; }
      have_wasm=1
    else
      say "skipping wasm: wasm-bindgen-test-runner or chromedriver missing (scripts/install-test.sh)"
    fi
  fi
  {
    echo
    echo "\`cargo bench --bench simulate -- allreduce_1GiB_at_scale\`: \`Plan::headline\` of a 1 GiB"
    echo "fp32 AllReduce, the path \`cclsim predict\` takes, criterion's median; the modelled time and"
    echo "the peak heap (a counting allocator) printed by the bench."
    if [ $have_wasm = 1 ]; then
      echo "wasm: the same cases in headless Chromium after a warm-up, median of 11"
      echo "(\`tests/wasm_bench.rs\`, \`scale_table_in_wasm\`, which also asserts the native answers to 1e-9)."
    fi
    echo
    if [ $have_wasm = 1 ]; then
      echo "| case | method | modelled time | native | peak heap | wasm | wasm / native |"
      echo "|---|---|---:|---:|---:|---:|---:|"
    else
      echo "| case | method | modelled time | native | peak heap |"
      echo "|---|---|---:|---:|---:|"
    fi
    # "scale ring/1024ranks: simulated 843829.32 µs modelled; first run 0.001 s, peak heap 5.5 MiB"
    sed -nE 's/^scale ([^:]+): ([a-z]+) ([0-9.]+) µs modelled; first run [0-9.]+ s, peak heap ([0-9.]+) MiB.*/\1 \2 \3 \4/p' \
      "$WORK/sim.txt" | while read -r name method us heap; do
      read -r v u < <(awk -F'\t' -v id="allreduce_1GiB_at_scale/$name" '$1 == id { print $2, $3 }' "$WORK/sim.medians")
      native="$(to_ms "${v:-0}" "${u:-ms}")"
      case="${name%ranks}"
      row="| ${case/\// } | $method | $(awk -v x="$us" 'BEGIN { printf "%.2f ms", x / 1000 }') | $native ms | $heap MiB |"
      if [ $have_wasm = 1 ]; then
        # "wasm scale ring/1024ranks (simulated): min 0.7 ms, median 0.8 ms, ..."
        w="$(grep -F "wasm scale $name " "$WORK/wasm.txt" | sed -nE 's/.*median ([0-9.]+) ms.*/\1/p' | head -1)"
        row="$row ${w:-–} ms | $(awk -v w="${w:-0}" -v n="$native" 'BEGIN { if (w > 0 && n > 0) printf "%.2f", w / n; else printf "–" }') |"
      fi
      echo "$row"
    done
    echo
    machine "$la"
    echo
  } > "$WORK/sim.md"
  put sim "$WORK/sim.md"
fi

# ---- plan: what a control change at 1024 ranks waits for ----
if wanted plan; then
  la="$(loadavg)"
  say "cargo bench --bench plan -- headline_1024ranks"
  cargo bench --bench plan -- headline_1024ranks >"$WORK/plan.txt" 2>"$WORK/plan.err" \
    || { cat "$WORK/plan.err"; exit 1; }
  {
    echo
    echo "\`cargo bench --bench plan -- headline_1024ranks\`: \`Plan::headline\` of a 1 GiB AllReduce on"
    echo "\`910b-128x8\` (1024 ranks) for each algorithm the page's 1024-rank select offers: what the"
    echo "planner worker computes after an \`#algo\` change. Criterion's median."
    echo
    echo "| algorithm | native |"
    echo "|---|---:|"
    medians "$WORK/plan.txt" | awk -F'\t' '$1 ~ /^headline_1024ranks\// { print $1 "\t" $2 "\t" $3 }' \
      | while IFS=$'\t' read -r id v u; do echo "| ${id#headline_1024ranks/} | $(to_ms "$v" "$u") ms |"; done
    echo
    machine "$la"
    echo
  } > "$WORK/plan.md"
  put plan "$WORK/plan.md"
fi

# ---- fit: reading and fitting logs ----
if wanted fit; then
  la="$(loadavg)"
  say "cargo bench --bench fit"
  cargo bench --bench fit >"$WORK/fit.txt" 2>"$WORK/fit.err" || { cat "$WORK/fit.err"; exit 1; }
  {
    echo
    echo "\`cargo bench --bench fit\`: an nccl-tests log of distinct sizes parsed"
    echo "(\`formats::parse_log\`) and fitted (\`calibrate::fit\`), criterion's median."
    echo
    echo "| benchmark | rows | native |"
    echo "|---|---:|---:|"
    medians "$WORK/fit.txt" | while IFS=$'\t' read -r id v u; do
      IFS=/ read -r _ what rows <<< "$id"
      echo "| $what | $rows | $(to_ms "$v" "$u") ms |"
    done
    echo
    machine "$la"
    echo
  } > "$WORK/fit.md"
  put fit "$WORK/fit.md"
fi

# ---- size: the page's wasm files ----
if wanted size; then
  if has trunk && has wasm-opt; then
    la="$(loadavg)"
    say "trunk build --release"
    trunk build --release >"$WORK/build.txt" 2>&1 || { tail -40 "$WORK/build.txt"; exit 1; }
    {
      echo
      echo "\`trunk build --release\` (wasm-opt \`-Oz\`, the engine's hot loops at opt-level 3), the files in \`dist/\`:"
      echo
      echo "| file | bytes | gzip -9 |"
      echo "|---|---:|---:|"
      for f in dist/*.wasm; do
        echo "| \`$(basename "$f")\` | $(wc -c < "$f") | $(gzip -9 -c "$f" | wc -c) |"
      done
      echo
      machine "$la"
      echo
    } > "$WORK/size.md"
    put size "$WORK/size.md"
  else
    say "skipping size: trunk or wasm-opt missing (scripts/install-serve.sh)"
  fi
fi

# ---- exec: a real run in the browser against MPI_Allreduce ----
if wanted exec; then
  if has trunk && has chromium && has mpirun && [ -d node_modules/playwright-core ]; then
    serve
    la="$(loadavg)"
    say "bash scripts/bench-exec.sh"
    BASE_URL="$BASE_URL" bash scripts/bench-exec.sh >"$WORK/exec.txt" 2>&1 || { cat "$WORK/exec.txt"; exit 1; }
    {
      echo
      echo "\`bash scripts/bench-exec.sh\`: a ring AllReduce of 64 MiB fp32 on 8 ranks, first as 8 Open MPI"
      echo "processes (\`cclrun --compare\`, the library's \`MPI_Allreduce\`, median of the slowest rank),"
      echo "then on the page (8 ranks on web workers in headless Chromium, 5 page loads): the collective"
      echo "(every rank's input built → last rank done, the span \`MPI_Allreduce\` covers), spawn to done,"
      echo "and the renderer's peak resident memory against the run's rank data."
      echo
      echo '```'
      grep -E '^(# [123]\.|browser |rep )' "$WORK/exec.txt"
      echo '```'
      echo
      machine "$la"
      echo
    } > "$WORK/exec.md"
    put exec "$WORK/exec.md"
  else
    say "skipping exec: trunk, chromium, mpirun or playwright-core missing (scripts/install-test.sh)"
  fi
fi

# ---- page: responsiveness ----
if wanted page; then
  if has trunk && has chromium && [ -d node_modules/playwright-core ]; then
    serve
    la="$(loadavg)"
    say "node scripts/measure-page.mjs --base $BASE_URL"
    node scripts/measure-page.mjs --base "$BASE_URL" >"$WORK/page.txt" 2>"$WORK/page.err" \
      || { tail -40 "$WORK/page.err"; exit 1; }
    {
      echo
      echo "\`node scripts/measure-page.mjs --base URL\` against \`trunk serve --release\`: per link, when"
      echo "the estimate shows and when the run is done (ms after navigation), and the longest main-thread"
      echo "task (\`longtask\`, over 50 ms; – for none) while loading and while running and checking; at"
      echo "128 and 1024 ranks the estimate's latency after each control change; at 64 ranks the"
      echo "animation's frame times."
      # The script's first line is its timestamp: history lives in git.
      sed '1{/^Measured /d}' "$WORK/page.txt"
      echo
      machine "$la"
      echo
    } > "$WORK/page.md"
    put page "$WORK/page.md"
  else
    say "skipping page: trunk, chromium or playwright-core missing (scripts/install-test.sh)"
  fi
fi

# ---- mpi: cclrun against the MPI library ----
if wanted mpi; then
  if has mpirun; then
    la="$(loadavg)"
    say "bash scripts/bench-mpi.sh"
    OUT="$WORK/mpi" bash scripts/bench-mpi.sh >"$WORK/mpi.txt" 2>&1 || { tail -40 "$WORK/mpi.txt"; exit 1; }
    cp "$WORK/mpi.txt" "$(dirname "$DOC")/cclrun-bench.txt"
    {
      echo
      echo "\`bash scripts/bench-mpi.sh\` (its whole output: [cclrun-bench.txt](cclrun-bench.txt)): our"
      echo "ring / rhd / mesh / auto AllReduce under \`mpirun\` against the library's \`MPI_Allreduce\`"
      echo "(\`cclrun --compare\`, median of 30 iterations of the slowest rank; \`ratio\` = our best /"
      echo "the library's time, below 1 ours is faster), then the loop: a cclrun sweep, \`cclsim fit\` on"
      echo "the even-indexed sizes, \`cclsim predict --profile\` on the odd ones."
      for np in 2 4; do
        echo
        echo "np = $np:"
        echo
        echo '```'
        grep -vE '^# (page link|cclrun: our schedules)' "$WORK/mpi/compare-np$np.txt"
        echo '```'
      done
      echo
      grep -E '^# held-out' "$WORK/mpi.txt" | sed 's/^# //'
      echo
      machine "$la"
      echo
    } > "$WORK/mpi.md"
    put mpi "$WORK/mpi.md"
  else
    say "skipping mpi: mpirun missing (scripts/install-test.sh)"
  fi
fi
say "done: $DOC"
