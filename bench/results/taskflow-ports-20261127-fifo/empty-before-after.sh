#!/bin/bash
# Empty tasks from one thread (400,000) and fib(27), the same benchmark program built at two
# commits, interleaved; prints "bench threads build rep ns_per_task" (median of 4 reps in a process).
before=$1; after=$2; rounds=$3
for r in $(seq $rounds); do
  for t in 1 2; do
    for bench in "empty 400000" "fib 27"; do
      set -- $bench
      for b in before after; do
        prog=$before; [ $b = after ] && prog=$after
        ns=$(ALOE_NUM_THREADS=$t taskset -c 0-$((t-1)) $prog --runtime aloe --bench $1 --threads $t --n $2 --reps 4 2>&1 |
             python3 -c 'import sys,json
v=sorted((json.loads(l)["wall_s"], json.loads(l)["tasks"]) for l in sys.stdin if l.startswith("{"))
w,n=v[len(v)//2]; print(round(w/n*1e9,1))')
        echo "$1 $t $b $r $ns"
      done
    done
  done
done
