#!/usr/bin/env bash
# The demo `make demo` runs after `aloe info`: one imbalanced, noisy timestepped loop under
# each schedule, then the FORALL (OpenMP loop handle) example. Builds must exist
# (make build); the results go to the terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/examples
echo "== an imbalanced loop with injected noise, each schedule (examples/imbalance.cpp) =="
"$bin/aloe_example_imbalance" "$@"
echo
echo "== an OpenMP region adopting an aloe schedule (examples/forall.c) =="
"$bin/aloe_example_forall" "staggered,fs=0.8,chunk=64"
"$bin/aloe_example_forall" "tasklets,n=32,fs=0.5,skew=4"
echo
echo "Per-loop statistics: run any program with ALOE_STATS=stats.json; see docs/schedules.md."
