#!/usr/bin/env bash
# Issues 17 and 19 on the lent 16-core machine in one call (a session's device time is 15
# minutes in all, starts included): the lending benchmark at 4 ranks x 4 threads, then the task
# runtimes at 16 threads. Both come from kits built here, which together fit the 64 MiB the
# device takes:
#
#   bench/tasks/make_device_kit.sh build/release build/task-kit <taskflow-build>
#   bench/micro/make_lending_kit.sh build/release build/lending-kit <dlb-prefix>
#   # device: bench/device_evidence.sh build/task-kit build/lending-kit   (carry both kits)
#
# Everything lands in one archive under $OUT (or ./device-results): few files come back. On a
# machine with fewer than 16 CPUs it runs the same steps smaller (2 ranks x 1 thread, all CPUs),
# which is how it is checked here.
set -uo pipefail
task_kit=${1:?usage: device_evidence.sh TASK_KIT LENDING_KIT}
lending_kit=${2:?usage: device_evidence.sh TASK_KIT LENDING_KIT}
final=${OUT:-device-results}
out=$(mktemp -d)
export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cpus=$(nproc)
nproc > "$out/nproc.txt"
lscpu > "$out/lscpu.txt" 2>&1
if [ "$cpus" -ge 16 ]; then ranks=4 threads=4 p=16; else ranks=2 threads=1 p=$cpus; fi
label="lent ${cpus}-CPU machine"

# 1. Lending between ranks (issue 19): the 1:3 imbalanced and the balanced case, k = 1 and 20,
#    no lending, aloe predictive, DLB LeWI with a yielding MPI; about 2 minutes on 16 cores.
timeout 220 "$lending_kit/run_lending.sh" --ranks "$ranks" --threads "$threads" --cases heavy3,balanced \
  --variants off,predictive,dlb-yield --ks 1,20 --reps 3 --quiet-wait 1 \
  --out "$out/core-lending-${ranks}x${threads}" > "$out/lending.log" 2>&1
echo "lending: exit $?" >> "$out/status.txt"

# 2. Task runtimes (issue 17): spawn costs and efficiency against task duration at p threads.
timeout 240 python3 "$task_kit/drivers/tasks_bench.py" --binary "$task_kit/bin/aloe-bench-tasks" \
  --libomp "$task_kit/llvm/lib/libomp.so.5" --threads "$p" --rounds 1 --skip counters,idle \
  --machine-label "$label" --out "$out/tasks-${p}t" > "$out/tasks.log" 2>&1
echo "tasks: exit $?" >> "$out/status.txt"

cat "$out/status.txt"
tail -n 8 "$out/lending.log"
grep -A 12 "Efficiency" "$out/tasks-${p}t/summary.md" 2>/dev/null
mkdir -p "$final" && tar -czf "$final/device-evidence.tgz" -C "$out" . && rm -rf "$out"
