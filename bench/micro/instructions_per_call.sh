#!/usr/bin/env bash
# Instructions one call of something costs, counted by callgrind and freed of start-up: runs a
# command twice, with a count N1 and N2 substituted for every `@N` in its arguments, and
# prints (instructions at N2 − instructions at N1) / (N2 − N1). The process with the most
# instructions is counted (the program, not `aloe run` around it). Threads wait passively
# (ALOE_WAIT_POLICY, OMP_WAIT_POLICY) so spinning does not count.
#
#   bench/micro/instructions_per_call.sh LABEL N1 N2 command args… (@N where the count goes)
#   e.g. bench/micro/instructions_per_call.sh "region, aloe run" 1000 3000 \
#            build/release/tools/aloe/aloe run --summary none --threads 2 -- ./regions @N
set -euo pipefail
if [[ $# -lt 4 ]]; then
    echo "usage: $0 LABEL N1 N2 command [args…]  (@N in the arguments is replaced by the count)" >&2
    exit 2
fi
label=$1 n1=$2 n2=$3
shift 3
[[ $n1 =~ ^[0-9]+$ && $n2 =~ ^[0-9]+$ && $n2 -gt $n1 ]] || { echo "$0: N1 < N2 must be counts" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "$0: valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/aloe-ipc.XXXXXX")
trap 'rm -rf "$work"' EXIT
total() {
    local best=0 t f
    for f in "$work"/cg."$1".*; do
        t=$(grep -h '^summary:\|^totals:' "$f" | head -1 | awk '{print $2}')
        [[ ${t:-0} -gt $best ]] && best=$t
    done
    echo "$best"
}
for n in "$n1" "$n2"; do
    args=()
    for a in "$@"; do args+=("${a//@N/$n}"); done
    ALOE_WAIT_POLICY=passive OMP_WAIT_POLICY=passive valgrind --tool=callgrind \
        --callgrind-out-file="$work/cg.$n.%p" --trace-children=yes -q "${args[@]}" >/dev/null 2>&1 || {
        echo "$0: the run with $n failed: ${args[*]}" >&2; exit 1; }
done
a=$(total "$n1") b=$(total "$n2")
echo "$label: $(( (b - a) / (n2 - n1) )) instructions per call"
