#!/bin/bash
# Same ports program built at two commits, interleaved, one process per run: prints
# "benchmark threads build rep ms" (the largest size's row).
# usage: before_after.sh BEFORE_PORTS AFTER_PORTS REPS
before=$1; after=$2; reps=$3
run() { # bench args... -> ms of the last row
  "$@" 2>&1 | tail -1 | awk '{print $2}'
}
for spec in "graph_traversal 1" "graph_traversal 2" "wavefront 1" "wavefront 2" "binary_tree -l 20 2" "fibonacci -f 30 2"; do
  set -- $spec; t=${!#}; args=${spec% *}
  for r in $(seq $reps); do
    if (( r % 2 )); then order="before after"; else order="after before"; fi
    for b in $order; do
      prog=$before; [ $b = after ] && prog=$after
      echo "${args// /_} $t $b $r $(run $prog $args -t $t)"
    done
  done
done
