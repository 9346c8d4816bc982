#!/usr/bin/env bash
# The demo `make demo` runs after `aloe info`: aloe against GNU libgomp, LLVM libomp and oneTBB
# on three workloads, quiet and with injected noise, and jacobi3d over 2 MPI ranks, interleaved
# (bench/matrices/demo.toml; a few minutes on 2 cores). Prints the summary table and the MPI
# section and says where the plots and the HTML report are. Builds must exist (make build).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/demo-results
rm -rf "$out"
echo "== aloe vs libgomp, libomp and oneTBB: bench/matrices/demo.toml =="
build/release/tools/aloe/aloe bench --matrix bench/matrices/demo.toml --out "$out" "$@"
echo
# The headline table; every run's table is in summary.md.
awk '/^## Headline/ { on = 1 } on && /^## / && !/Headline/ { exit } on' "$out/summary.md"
# The MPI row (jacobi3d over 2 ranks): how mpirun ran it and each rank's compute, wait, time in
# MPI and slack; or why it was skipped (no mpirun, or aloe-app-jacobi3d-mpi not built).
awk '/^## MPI$/ { on = 1 } on && /^## / && !/^## MPI$/ { exit } on' "$out/summary.md"
echo "Every run, per workload and regime: $out/summary.md"
echo "Plots:  $out/plots/*.png"
echo "Report: $out/report.html (open it in a browser; 'aloe report $out' rebuilds it)"
echo "More:   make bench (overheads, then the full matrix: ~45 min), docs/benchmarking.md, examples/ (API)"
