#!/usr/bin/env bash
# The cclrun figures of docs/performance.md, on the machine it runs on:
#   1. side by side: our ring / rhd / mesh / auto AllReduce against the MPI
#      library's MPI_Allreduce (cclrun --compare), np = 2 and 4, 1 KiB..64 MiB;
#   2. the loop: a cclrun sweep (nccl-tests table) -> `cclsim fit` on the
#      even-indexed sizes -> `cclsim predict --profile --algo auto` on the odd
#      ones, with the held-out error.
# Output: bench-out/ (tables, profile) and a summary on stdout. The machine's
# load average is printed with each table: other processes on the cores
# distort the times (Open MPI busy-polls).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-bench-out}"
ITERS="${ITERS:-30}"
# The median of the timed iterations: on a shared machine (other builds) a
# mean is at the mercy of one descheduled iteration.
STAT="${STAT:-median}"
WARMUP="${WARMUP:-5}"
mkdir -p "$OUT"
cargo build --release --features mpi --bin cclrun --bin cclsim
RUN=(mpirun --oversubscribe --allow-run-as-root)
CCLRUN=target/release/cclrun
CCLSIM=target/release/cclsim

for np in 2 4; do
  echo "# np=$np, load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
  "${RUN[@]}" -np "$np" "$CCLRUN" --op allreduce --algo ring,rhd,mesh,auto,library --compare \
    -b 1K -e 64M -f 4 -w "$WARMUP" -n "$ITERS" --stat "$STAT" | tee "$OUT/compare-np$np.txt"
  echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
done

# The loop on np=2: sweep with factor 2 (so even/odd indices interleave),
# fit the even-indexed rows, predict the odd ones.
np=2
"${RUN[@]}" -np "$np" "$CCLRUN" --op allreduce --algo ring -b 1K -e 64M -f 2 \
  -w "$WARMUP" -n "$ITERS" --stat "$STAT" > "$OUT/sweep-ring-np$np.txt"
echo "# load average after the sweep: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '/^#/ {print; next} {n++; if (n % 2 == 1) print}' "$OUT/sweep-ring-np$np.txt" > "$OUT/sweep-even.txt"
"$CCLSIM" fit "$OUT/sweep-even.txt" --out "$OUT/profile.json" > "$OUT/fit.txt"
cat "$OUT/fit.txt"
echo
echo "# held out (odd-indexed sizes): measured vs cclsim predict --profile --algo auto"
printf '%12s %12s %12s %8s\n' "size(B)" "measured" "predicted" "error%"
awk '!/^#/ {n++; if (n % 2 == 0) print $1, $6}' "$OUT/sweep-ring-np$np.txt" | while read -r bytes measured; do
  pred="$("$CCLSIM" predict --profile "$OUT/profile.json" --op allreduce --algo auto --bytes "$bytes" --json \
    | sed -E 's/.*"time_us":([0-9.eE+-]+).*/\1/')"
  awk -v b="$bytes" -v m="$measured" -v p="$pred" 'BEGIN { printf "%12d %12.2f %12.2f %+8.1f\n", b, m, p, (p - m) / m * 100 }'
done | tee "$OUT/holdout.txt"
awk '{e = $4; if (e < 0) e = -e; print e}' "$OUT/holdout.txt" | sort -g \
  | awk '{a[NR] = $1} END { if (NR) printf "# held-out |error|: median %.1f %%, max %.1f %% over %d sizes\n", a[int((NR + 1) / 2)], a[NR], NR }'
