#!/usr/bin/env bash
# Runs the overhead benchmark (bench/micro/README.md): aloe against libgomp, interleaved.
#
#   scripts/bench.sh [aloe_overhead flags…]     e.g. --quick, --threads 2, --only chunk
#
# Results go to bench/results/overhead-YYYYMMDD/ unless --out is given. Measure on a quiet
# machine: the script warns when the load average says other work is running.
# Environment: BUILD_DIR (default build/release), the build `make build` makes.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build/release}
bin=$build/bench/micro/aloe_overhead
if [[ ! -x $bin ]]; then
    echo "bench.sh: $bin is missing; build first (make build, or cmake --build $build)" >&2
    exit 1
fi

out=(--out "bench/results/overhead-$(date +%Y%m%d)")
for arg in "$@"; do
    [[ $arg == --out ]] && out=()
done

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
    echo "bench.sh: load average $load: other work is running; the figures will be noisy" >&2
fi

exec "$bin" "${out[@]}" "$@"
