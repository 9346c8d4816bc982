#!/usr/bin/env bash
# The task benchmarks on a lent many-core machine, from a kit made by make_device_kit.sh
# (no packages needed there). Results go to $OUT (or ./device-results).
#   bench/tasks/device_run.sh KIT_DIR THREADS
set -uo pipefail
kit=${1:?usage: device_run.sh KIT_DIR THREADS}
p=${2:?usage: device_run.sh KIT_DIR THREADS}
final=${OUT:-device-results}
out=$(mktemp -d)  # everything, packed into one archive at the end (few files come back)
export PYTHONUNBUFFERED=1
nproc; lscpu | head -20 > "$out/lscpu.txt"
# 1. Efficiency against task duration, spawn costs, idle CPU: every runtime, interleaved.
timeout 240 python3 "$kit/drivers/tasks_bench.py" --binary "$kit/bin/aloe-bench-tasks" \
  --libomp "$kit/llvm/lib/libomp.so.5" --threads "$p" --rounds 2 --skip counters,idle \
  --machine-label "lent ${p}-core machine" --out "$out/tasks" > "$out/tasks.log" 2>&1
# 2. fib at 1..p threads (spawn + sync scaling).
for t in 1 2 4 8 16; do
  [ "$t" -le "$p" ] || continue
  for rt in aloe tbb omp taskflow; do
    ALOE_NUM_THREADS=$t OMP_NUM_THREADS=$t timeout 60 taskset -c 0-$((t - 1)) "$kit/bin/aloe-bench-tasks" \
      --runtime $rt --bench fib --n 30 --reps 4 --threads $t
  done
done > "$out/fib-scaling.jsonl" 2>&1
# 3. In-run grain tuning against the sweep.
timeout 150 python3 "$kit/drivers/grain_tuning.py" --app "$kit/bin/aloe-app-stencil1d-tasks" --threads "$p" \
  --nx 8000000 --epoch-steps 20 --sizes 14 --sweep-reps 3 --epochs 16 \
  --machine-label "lent ${p}-core machine" --out "$out/grain" > "$out/grain.log" 2>&1
# 4. Taskflow's benchmark programs and their aloe ports.
timeout 150 python3 "$kit/drivers/compare.py" --taskflow-build "$kit/taskflow-build" \
  --ports "$kit/bin/aloe_taskflow_ports" --threads "$p" --reps 3 --out "$out/tfports" > "$out/tfports.log" 2>&1
tail -3 "$out"/*.log
cat "$out/tasks/summary.md" "$out/grain/summary.md" 2>/dev/null | head -80
mkdir -p "$final" && tar -czf "$final/device-results.tgz" -C "$out" .
