"""bench/tasks/grain_tuning.py against a fake stencil1d-tasks: the sweep's best, the tuned
runs' table and the same-process check of each settled size against the best."""
import csv
import json
import math
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[1] / "bench" / "tasks" / "grain_tuning.py"

# Epoch time = a U in log(partition) with its minimum at 1000 points. `auto` walks from the
# start to 500 (4% slower than 1000 on this curve) and stays; every call is logged.
FAKE = r'''
import json, math, sys
args = sys.argv[1:]
def flag(name, default=None):
    return args[args.index(name) + 1] if name in args else default
with open(LOG, "a") as f:
    f.write(json.dumps(args) + "\n")
def cost(p):
    return 0.1 * (1 + 0.12 * math.log(p / 1000) ** 2)
grain, steps, warmup = flag("--grain"), int(flag("--steps")), int(flag("--warmup", "0"))
if grain.startswith("list:"):
    sizes = [int(x) for x in grain[5:].split(",")]
    parts = [sizes[e % len(sizes)] for e in range(warmup + steps)]
else:
    parts = [int(flag("--partition"))] + [500] * (warmup + steps - 1)
epochs = [{"epoch": e, "partition": p, "wall_s": cost(p), "timed": e >= warmup} for e, p in enumerate(parts)]
print(json.dumps({"epochs": epochs}))
'''


def cost(p: int) -> float:
    return 0.1 * (1 + 0.12 * math.log(p / 1000) ** 2)


def fake_app(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "calls.jsonl"
    app = tmp_path / "aloe-app-stencil1d-tasks"
    app.write_text(f"#!{sys.executable}\nLOG = {str(log)!r}\n" + FAKE)
    app.chmod(0o755)
    return app, log


def run(app: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--app", str(app), "--nx", "200000", "--threads", "2",
                           "--sizes", "8", "--sweep-reps", "1", "--epochs", "12", "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=120)


def test_settled_size_checked_against_best_in_one_process(tmp_path):
    app, log = fake_app(tmp_path)
    r = run(app, tmp_path / "out", "--verify-pairs", "3")
    assert r.returncode == 0, r.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    checks = [c for c in calls if c[c.index("--grain") + 1].startswith("list:500,")]
    # One check for size 500 (every tuned run settled there), 3 alternating pairs.
    assert len(checks) == 1
    check = checks[0]
    best = int(check[check.index("--grain") + 1].split(",")[1])
    sweep = {int(row["partition"]): float(row["median_epoch_s"]) for row in csv.DictReader(open(tmp_path / "out" / "sweep.csv"))}
    assert best == min(sweep, key=sweep.get) and best != 500
    assert check[check.index("--steps") + 1] == "6"
    rows = list(csv.DictReader(open(tmp_path / "out" / "verify.csv")))
    assert len(rows) == 3
    ratio = cost(500) / cost(best)
    assert all(abs(float(row["ratio"]) - ratio) < 1e-9 for row in rows)
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"| {ratio:.3f} [{ratio:.3f}, {ratio:.3f}] |" in summary
    assert "within 3% of the best in the same-process check: 0 of 10" in summary


def test_no_check_asked_and_bad_count_refused(tmp_path):
    app, log = fake_app(tmp_path)
    r = run(app, tmp_path / "out", "--verify-pairs", "0")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "out" / "verify.csv").exists()
    assert "| not run |" in (tmp_path / "out" / "summary.md").read_text()
    bad = run(app, tmp_path / "bad", "--verify-pairs", "-1")
    assert bad.returncode == 2
    assert "--verify-pairs must be >= 0" in bad.stderr
    assert not (tmp_path / "bad").exists()
    bad = run(app, tmp_path / "bad", "--objectives", "overall,speed")
    assert bad.returncode == 2
    assert "--objectives: unknown speed" in bad.stderr


def test_objectives_chosen_and_settling_epoch_reported(tmp_path):
    app, log = fake_app(tmp_path)
    r = run(app, tmp_path / "out", "--objectives", "overall", "--verify-pairs", "1")
    assert r.returncode == 0, r.stderr
    tuned = [c for c in map(json.loads, log.read_text().splitlines()) if "--partition" in c]
    assert [c[c.index("--grain") + 1] for c in tuned] == ["auto:objective=overall,search=golden"] * 2
    rows = [line for line in (tmp_path / "out" / "summary.md").read_text().splitlines() if line.startswith("| overall")]
    # The fake runs its start once, then 500 from the second epoch on.
    assert len(rows) == 2 and all(row.split("|")[5].strip() == "2" for row in rows)
