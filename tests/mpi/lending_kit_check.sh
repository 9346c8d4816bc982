#!/usr/bin/env bash
# bench/micro/make_lending_kit.sh packs the lending benchmark for a machine without packages:
# the kit's own mpirun, loader and libraries run a short balanced case with and without
# lending, and libaloe-mpi reaches the ranks through the kit's loader (ALOE_KIT_PRELOAD), not
# through LD_PRELOAD, which the shells in between would load too.
#   lending_kit_check.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
rm -rf "$work"
# The kit knows Debian's Open MPI layout (the install script's); another MPI is said, not failed.
if ! mpirun --version 2>/dev/null | grep -q "Open MPI\|OpenRTE" || [ ! -d /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 ]; then
  echo "SKIPPED: make_lending_kit.sh packs Debian's Open MPI, and this mpirun is not it"
  exit 0
fi
"$src/bench/micro/make_lending_kit.sh" "$build" "$work/kit" > "$work.log" 2>&1 || { cat "$work.log"; exit 1; }
kit=$work/kit
fail() { echo "lending kit: $*" >&2; exit 1; }
grep -q -- '--preload "$ALOE_KIT_PRELOAD"' "$kit/build/release/apps/aloe-app-jacobi3d-mpi" || fail "the app's wrapper does not preload"
[ -f "$kit/build/release/lib/libaloe-mpi.so" ] || fail "libaloe-mpi.so is missing"
"$kit/bin/mpirun" --version | grep -q "Open MPI\|OpenRTE" || fail "the kit's mpirun does not run"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$kit/run_lending.sh" --cases balanced --variants off,predictive --ks 1 --reps 1 --steps 4 --warmup 1 --n 32 \
  --quiet-wait 0 --out "$work/out" > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "run_lending.sh failed"; }
python3 - "$work/out/runs.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
variants = sorted(r["variant"] for r in rows)
assert variants == ["off", "predictive"], variants
bad = [r for r in rows if not r["ok"]]
assert not bad, [(r["variant"], r["rc"]) for r in bad]
# The preload went through the kit's variable, and the predictive run's ranks lend politely.
pred = next(r for r in rows if r["variant"] == "predictive")
assert "ALOE_KIT_PRELOAD=" in pred["command"] and "LD_PRELOAD=" not in pred["command"], pred["command"]
assert all(rank["mode"] == "predictive" for rank in pred["lending"]), pred["lending"]
print("lending kit: both runs ok")
PY
