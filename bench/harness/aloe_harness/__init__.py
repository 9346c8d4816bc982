"""aloe's benchmark harness: runs the workload programs (apps/) over a matrix of runtimes,
schedules, noise regimes and thread counts, interleaved, and turns the records into
results.csv, summary.md, plots and report.html.

  PYTHONPATH=bench/harness python -m aloe_harness bench --help
  PYTHONPATH=bench/harness python -m aloe_harness report DIR

Modules, one concept each: matrix (what to run), regimes (noise specs), runner (running and
validating), summary (statistics and tables), sweep (the fs sweep), plots, report (HTML),
provenance (command, machine and noise records).
"""
