#!/usr/bin/env bash
# `make bench`: the overhead micro-benchmark (bench/micro/README.md), the interposer's taken
# loops against libgomp for chunk sizes 1 to 128 (EPCC schedbench's sweep,
# bench/micro/taken_loops.py), then the workload comparison (bench/matrices/full.toml,
# docs/benchmarking.md): aloe against libgomp, libomp and oneTBB, interleaved. About 60
# minutes on the 2-core VM.
#
#   scripts/bench.sh                 all three
#   BENCH=overhead scripts/bench.sh [aloe_overhead flags…]   e.g. --quick, --only chunk
#   BENCH=taken scripts/bench.sh [taken_loops.py flags…]     e.g. --chunks 1,16,128 --reps 3
#   BENCH=apps scripts/bench.sh [aloe bench flags…]          e.g. --quick, --matrix demo
#
# Results go to bench/results/overhead-YYYYMMDD/ and bench/results/apps-YYYYMMDD-HHMMSS/
# unless --out is given. Measure on a quiet machine: the script warns when the load average
# says other work is running. Environment: BUILD_DIR (default build/release).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build/release}
which=${BENCH:-all}
case $which in overhead|taken|apps|all) ;; *)
    echo "bench.sh: BENCH='$which': expected overhead, taken, apps or all" >&2; exit 2 ;;
esac
overhead=$build/bench/micro/aloe_overhead
aloe=$build/tools/aloe/aloe
for bin in "$overhead" "$aloe"; do
    if [[ ! -x $bin ]]; then
        echo "bench.sh: $bin is missing; build first (make build, or cmake --build $build)" >&2
        exit 1
    fi
done

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
    echo "bench.sh: load average $load: other work is running; the figures will be noisy" >&2
fi

if [[ $which == overhead || $which == all ]]; then
    out=(--out "bench/results/overhead-$(date +%Y%m%d)")
    for arg in "$@"; do [[ $arg == --out ]] && out=(); done
    args=("$@"); [[ $which == all ]] && args=()
    "$overhead" "${out[@]}" "${args[@]}"
fi
if [[ $which == taken || $which == all ]]; then
    python=.venv/bin/python; [[ -x $python ]] || python=python3
    args=("$@"); [[ $which == all ]] && args=()
    "$python" bench/micro/taken_loops.py --build "$build" "${args[@]}"
fi
if [[ $which == apps || $which == all ]]; then
    args=("$@"); [[ $which == all ]] && args=(--matrix full)
    "$aloe" bench "${args[@]}"
fi
