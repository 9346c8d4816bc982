#!/usr/bin/env bash
# Packs what the task benchmarks need onto a machine with no packages (a lent many-core
# machine): the binaries built here, every shared library they load (glibc's loader too, so
# they run whatever the other machine's libraries are), one wrapper per program that starts it
# through that loader, and the Python drivers (standard library only).
#
#   bench/tasks/make_device_kit.sh BUILD_DIR KIT_DIR [TASKFLOW_BUILD_DIR]
#
# On the other machine: KIT_DIR/bin/<program> runs as the program; LD_LIBRARY_PATH is still
# honoured first (the libomp shim of tasks_bench.py).
set -euo pipefail
build=${1:?usage: make_device_kit.sh BUILD_DIR KIT_DIR [TASKFLOW_BUILD_DIR]}
kit=${2:?usage: make_device_kit.sh BUILD_DIR KIT_DIR [TASKFLOW_BUILD_DIR]}
taskflow_build=${3:-}
source "$(cd "$(dirname "$0")/.." && pwd)/kit_common.sh"
kit_start make_device_kit "$kit"
mkdir -p "$kit/bin" "$kit/drivers"

programs=("$build/bench/tasks/aloe-bench-tasks")
for app in stencil1d-tasks fib uts sort nqueens; do
  [ -x "$build/apps/aloe-app-$app" ] && programs+=("$build/apps/aloe-app-$app")
done
for p in "$build"/bench/taskflow_ports/*; do [ -x "$p" ] && [ -f "$p" ] && programs+=("$p"); done

for p in "${programs[@]}"; do kit_wrap "$p" "bin/$(basename "$p")"; done
# Taskflow's own benchmark programs, laid out as its build folder (taskflow_ports/compare.py).
if [ -n "$taskflow_build" ]; then
  for p in "$taskflow_build"/benchmarks/bench_*; do
    [ -x "$p" ] && kit_wrap "$p" "taskflow-build/benchmarks/$(basename "$p")"
  done
fi
# libomp for the OpenMP runs on LLVM's runtime (tasks_bench.py looks under lib/llvm-*/lib).
for v in $(seq 20 -1 11); do
  if [ -f "/usr/lib/llvm-$v/lib/libomp.so.5" ]; then
    mkdir -p "$kit/llvm/lib" && cp -L "/usr/lib/llvm-$v/lib/libomp.so.5" "$kit/llvm/lib/"; break
  fi
done
here=$(cd "$(dirname "$0")" && pwd)
cp "$here/tasks_bench.py" "$here/grain_tuning.py" "$kit/drivers/" 2>/dev/null || cp "$here/tasks_bench.py" "$kit/drivers/"
[ -f "$here/../taskflow_ports/compare.py" ] && cp "$here/../taskflow_ports/compare.py" "$kit/drivers/"
# Debug information stays here: this kit and the lending kit together must fit the device's
# 64 MiB transfer (42 MB of the programs here were debug information).
kit_strip "$kit/real" "$kit/lib" "$kit/llvm"
du -sh "$kit"
