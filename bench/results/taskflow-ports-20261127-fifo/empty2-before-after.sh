#!/bin/bash
# Empty tasks from one thread on 2 threads (400,000 a run, the median of 4 repetitions in a
# process, per task), the benchmark built at two commits, alternating; prints
# "empty 2 build round ns_per_task".  usage: empty2-before-after.sh BEFORE AFTER ROUNDS
before=$1; after=$2; rounds=$3
for r in $(seq $rounds); do
  for b in before after; do
    prog=$before; [ $b = after ] && prog=$after
    ns=$(ALOE_NUM_THREADS=2 taskset -c 0-1 $prog --runtime aloe --bench empty --threads 2 --n 400000 --reps 4 2>&1 |
         python3 -c 'import sys,json
v=sorted(json.loads(l)["wall_s"] for l in sys.stdin if l.startswith("{"))
print(round(v[len(v)//2]/400000*1e9,1))')
    echo "empty 2 $b $r $ns"
  done
done
