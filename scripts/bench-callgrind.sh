#!/usr/bin/env bash
# Instructions per loop, aloe against libgomp, counted by callgrind: a figure that does not
# move with the machine's noise, to set beside the wall-clock results of scripts/bench.sh.
#
#   scripts/bench-callgrind.sh [--threads N] [--loops K] [variant…]
#
# Each variant (see `aloe_overhead --help`, --callgrind-probe) runs twice under callgrind,
# with 1000 and 1000+K loops (K = 20000 by default); the difference over K is the cost of one
# loop, with start-up and thread creation cancelled out.
#
# Both runtimes wait passively here (OMP_WAIT_POLICY and ALOE_WAIT_POLICY = passive):
# valgrind runs one thread at a time, so a spinning waiter would add instructions that depend
# on valgrind's scheduling, not on the runtime. The counts are the work of fork, chunk
# hand-out and join without the spin loops; they repeat to within a few percent (which
# thread reaches a futex first still varies from run to run).
# Environment: BUILD_DIR (default build/release).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

threads=2
loops=20000
variants=()
while (($#)); do
    case $1 in
        --threads) threads=${2:?--threads needs a value}; shift 2 ;;
        --loops) loops=${2:?--loops needs a value}; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        -*) echo "bench-callgrind.sh: unknown flag '$1'" >&2; exit 2 ;;
        *) variants+=("$1"); shift ;;
    esac
done
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "bench-callgrind.sh: --threads needs a positive integer, got '$threads'" >&2; exit 2; }
[[ $loops =~ ^[1-9][0-9]*$ ]] || { echo "bench-callgrind.sh: --loops needs a positive integer, got '$loops'" >&2; exit 2; }
((${#variants[@]})) || variants=(serial gomp-parallel gomp-static aloe-static gomp-dynamic aloe-dynamic
                                  gomp-guided aloe-guided aloe-staggered aloe-staggered-mutex)

build=${BUILD_DIR:-build/release}
bin=$build/bench/micro/aloe_overhead
[[ -x $bin ]] || { echo "bench-callgrind.sh: $bin is missing; build first" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "bench-callgrind.sh: valgrind is not installed (scripts/install-deps.sh)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions (Ir) of one run of `variant` with `k` loops.
count() {
    local variant=$1 k=$2 file=$tmp/$1.$2.out
    OMP_WAIT_POLICY=passive ALOE_WAIT_POLICY=passive \
        valgrind --tool=callgrind --callgrind-out-file="$file" \
        "$bin" --callgrind-probe "$variant" --threads "$threads" --probe-loops "$k" >/dev/null 2>"$tmp/log"
    awk '/^(summary|totals):/ { print $2; exit }' "$file"
}

iters=$((64 * threads))
base=1000
echo "instructions per loop: $threads threads, $iters iterations (empty body), $loops loops, passive waiting"
printf '%-22s %14s %16s %14s\n' variant "Ir/loop" "Ir/loop - body" "Ir/iteration"
body=
for v in "${variants[@]}"; do
    if ! a=$(count "$v" "$base") || ! b=$(count "$v" $((base + loops))) || [[ -z $a || -z $b ]]; then
        echo "bench-callgrind.sh: the probe '$v' failed:" >&2
        cat "$tmp/log" >&2
        exit 1
    fi
    per=$(awk -v a="$a" -v b="$b" -v k="$loops" 'BEGIN { printf "%.0f", (b - a) / k }')
    [[ $v == serial ]] && body=$per
    net=$(awk -v p="$per" -v s="${body:-0}" 'BEGIN { printf "%.0f", p - s }')
    perit=$(awk -v p="$per" -v s="${body:-0}" -v n="$iters" 'BEGIN { printf "%.1f", (p - s) / n }')
    [[ -n $body ]] || { net="(no serial)"; perit="(no serial)"; }
    # gomp-parallel runs one body call per thread, not the loop: the serial loop does not apply.
    [[ $v == gomp-parallel ]] && { net="n/a"; perit="n/a"; }
    printf '%-22s %14s %16s %14s\n' "$v" "$per" "$net" "$perit"
done
echo "(\"- body\": minus the serial loop of the same iterations; per iteration: that over $iters)"
