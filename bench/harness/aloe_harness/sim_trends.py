"""`sim_trends`: the published scaling trends of Kale & Gropp and of Kale's thesis, simulated
with `aloe sim` on profiles set to those papers' machines (issue 16, part 6).

    PYTHONPATH=bench/harness .venv/bin/python -m aloe_harness.sim_trends \\
        [--aloe build/release/tools/aloe/aloe] [--profiles tools/sim/profiles] \\
        [--threads 2] [--quick] [--only TREND ...] [--out bench/results/sim-trends-<date>]

Trends (each one `aloe sim ... --out <out>/<trend>`; TRENDS below lists the commands):
  kg-jacobi        power575-16core: static vs hybrid fs=0.5 (Kale & Gropp's 50/50), 100%
                   dynamic and the 64-tasklet case, 1..1024 nodes, 1000 steps: static's loss
                   with node count, the step histograms at 1 and 64 nodes (Fig 2.18-2.25)
  cab-best-fs      cab-16core: the oracle fs (hybrid, fs swept 0..1 by 0.05) against node
                   count (Fig 4.11b), with static, dynamic, hybrid fs=0.9 and its slack twin
  cab-best-fs-2ms, cab-best-fs-6ms
                   the same with a 4x and a 12.5x longer loop step (--iteration-us): the fs
                   trend's dependence on the one cab figure the references lack
  cab-slack        cab-16core: static, hybrid fs=0.8 and fs=0.5 with and without slack=on,
                   adaptive (Fig 4.12/4.14)
  cab-imb-slack    the same on cab-16core with a persistent slow-node fraction (imbalance
                   between ranks, the case where slack persists from step to step)
  cab-imb-best-fs  its oracle fs, for slack against the oracle (Fig 4.11c)
  bgq              bgq-16core, noise-free: hybrid and slack should lose a little (Fig 4.12)

Results: <out>/<trend>/ (aloe sim's summary.csv, steps.csv, best_fs.csv, table.md, ...),
<out>/profiles/ (the derived imbalanced profile), <out>/trends.csv (every computed figure),
<out>/plots/*.png, <out>/summary.md, <out>/command.txt.

Figures: "gain of A over B" is t_B / t_A - 1 (the thesis's speedup minus one: +30% means B
takes 1.3x as long); static's loss at P nodes is t_static(P) / t_static(1) - 1.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import gzip
import json
import math
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
HIST_BIN_S = 0.25e-3  # the bin of the papers' histograms (thesis sec 2.3.4: 0.25 ms)

# The persistent imbalance of the cab-imb-* trends: a fraction of nodes slower by a factor.
# From the thesis's only cross-node imbalance figure on cab (Tab 1.1-1.2, N-body, with ideal
# balance inside each node): max/avg load 1.26 at 16,384 cores = 1,024 nodes. With 10% of
# the nodes slow by F, max/avg = F / (1 + 0.1 (F - 1)) = 1.26 gives F = 1.30.
IMBALANCE_FRACTION = 0.1
IMBALANCE_FACTOR = 1.30


@dataclass
class Trend:
    name: str
    profile: str                 # file in --profiles, or one this script derives (DERIVED)
    nodes: list[int]
    schedules: str
    steps: int
    best_fs: str = "off"
    extra: list[str] = field(default_factory=list)

    def argv(self, aloe: str, profile_path: Path, out: Path, threads: int,
             quick: bool = False) -> list[str]:
        nodes = [n for n in self.nodes if n <= 64] if quick else self.nodes
        steps = min(self.steps, 100) if quick else self.steps
        return [aloe, "sim", "--profile", str(profile_path), "--nodes", ",".join(map(str, nodes)),
                "--schedules", self.schedules, "--steps", str(steps), "--best-fs", self.best_fs,
                *self.extra, "--threads", str(threads), "--quiet", "--out", str(out)]


CAB_NODES = [1, 4, 16, 64, 256, 1024]
TRENDS = [
    Trend("kg-jacobi", "power575-16core.json", [1, 2, 4, 8, 16, 32, 64, 256, 1024],
          "static,hybrid,fs=0.5,dynamic,tasklets,n=64,fs=0.5,locality=1", 1000),
    Trend("cab-best-fs", "cab-16core.json", CAB_NODES,
          "static,dynamic,hybrid,fs=0.9,hybrid,fs=0.9,slack=on", 500, "0:1:0.05"),
    Trend("cab-best-fs-2ms", "cab-16core.json", CAB_NODES, "static,hybrid,fs=0.9", 500, "0:1:0.05",
          ["--iteration-us", "60.64"]),
    Trend("cab-best-fs-6ms", "cab-16core.json", CAB_NODES, "static,hybrid,fs=0.9", 500, "0:1:0.05",
          ["--iteration-us", "189.5"]),
    Trend("cab-slack", "cab-16core.json", CAB_NODES,
          "static,hybrid,fs=0.8,hybrid,fs=0.8,slack=on,hybrid,fs=0.5,hybrid,fs=0.5,slack=on,adaptive", 500),
    Trend("cab-imb-slack", "cab-16core-imbalanced.json", CAB_NODES,
          "static,hybrid,fs=0.8,hybrid,fs=0.8,slack=on,hybrid,fs=0.5,hybrid,fs=0.5,slack=on,adaptive", 500),
    Trend("cab-imb-best-fs", "cab-16core-imbalanced.json", CAB_NODES, "static,hybrid,fs=0.9", 500, "0:1:0.05"),
    Trend("bgq", "bgq-16core.json", [1, 16, 64, 512],
          "static,dynamic,hybrid,fs=0.9,hybrid,fs=0.9,slack=on,adaptive", 500, "0:1:0.1"),
]
DERIVED = {"cab-16core-imbalanced.json"}


# ---------------------------------------------------------------- parsing (pure) ----------

def _number(text: str):
    try:
        x = float(text)
    except ValueError:
        return text
    return int(x) if x.is_integer() and "." not in text and "e" not in text.lower() else x


def read_summary(path: Path) -> list[dict]:
    """aloe sim's summary.csv: one dict per run, numbers as int/float, `sweep` as bool."""
    with open(path, newline="") as f:
        rows = [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(f)]
    for r in rows:
        r["schedule"] = str(r["schedule"])
        r["sweep"] = bool(r["sweep"])
    return rows


def steps_file(folder: Path) -> Path | None:
    """A trend folder's steps.csv, or the steps.csv.gz a results folder keeps; None if neither."""
    for name in ("steps.csv", "steps.csv.gz"):
        if (folder / name).exists():
            return folder / name
    return None


def read_steps(path: Path) -> dict[tuple[int, str], list[float]]:
    """steps.csv (or .csv.gz): (nodes, schedule) -> the per-step times in step order (seconds)."""
    out: dict[tuple[int, str], list[tuple[int, float]]] = {}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            out.setdefault((int(r["nodes"]), r["schedule"]), []).append((int(r["step"]), float(r["step_s"])))
    return {k: [s for _, s in sorted(v)] for k, v in out.items()}


def read_best_fs(path: Path) -> dict[int, tuple[float, float]]:
    """best_fs.csv: nodes -> (best fs, its total time), fs rounded to 3 digits."""
    with open(path, newline="") as f:
        return {int(r["nodes"]): (round(float(r["best_fs"]), 3), float(r["best_total_s"])) for r in csv.DictReader(f)}


# ---------------------------------------------------------------- arithmetic (pure) -------

def gain(t_base: float, t_new: float) -> float:
    """How much faster t_new is than t_base: t_base / t_new - 1 (0.3: the base takes 1.3x)."""
    return t_base / t_new - 1


def total(rows: list[dict], nodes: int, schedule: str, sweep: bool = False) -> float:
    for r in rows:
        if r["nodes"] == nodes and r["schedule"] == schedule and r["sweep"] == sweep:
            return float(r["total_s"])
    raise KeyError(f"no run of {schedule!r} on {nodes} nodes")


def node_counts(rows: list[dict]) -> list[int]:
    return sorted({int(r["nodes"]) for r in rows})


def loss_vs_nodes(rows: list[dict], schedule: str) -> dict[int, float]:
    """schedule's time at each node count over its time at the fewest nodes, minus one."""
    counts = node_counts(rows)
    base = total(rows, counts[0], schedule)
    return {n: total(rows, n, schedule) / base - 1 for n in counts}


def gain_vs_nodes(rows: list[dict], base: str, new: str) -> dict[int, float]:
    return {n: gain(total(rows, n, base), total(rows, n, new)) for n in node_counts(rows)}


def sweep_curve(rows: list[dict], nodes: int) -> list[tuple[float, float]]:
    """The fs sweep at `nodes`: (fs, total time), by fs."""
    return sorted((round(float(r["mean_fs"]), 3), float(r["total_s"])) for r in rows
                  if r["sweep"] and r["nodes"] == nodes)


def near_best_range(curve: list[tuple[float, float]], tolerance: float = 0.01) -> tuple[float, float]:
    """The lowest and highest fs whose time is within `tolerance` of the best: how flat the
    bottom is (a best fs is only as sharp as this range)."""
    best = min(t for _, t in curve)
    inside = [fs for fs, t in curve if t <= best * (1 + tolerance)]
    return min(inside), max(inside)


def histogram(values: list[float], bin_s: float = HIST_BIN_S) -> dict[float, int]:
    """Counts per bin; a bin is keyed by its lower edge (multiples of bin_s, in seconds)."""
    out: dict[float, int] = {}
    for v in values:
        k = round(math.floor(v / bin_s + 1e-9) * bin_s, 12)
        out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items()))


def modes(hist: dict[float, int], bin_s: float = HIST_BIN_S, min_share: float = 0.1) -> list[float]:
    """The peaks of a histogram of bin_s bins: bins higher than their neighbours and not lower
    than any bin two away (empty bins count as 0), holding at least min_share of all values.
    Two peaks: bimodal."""
    if not hist:
        return []
    n = sum(hist.values())
    width = bin_s
    peaks = []
    for edge, count in hist.items():
        if count < min_share * n:
            continue
        around = [hist.get(round(edge + d * width, 12), 0) for d in (-2, -1, 1, 2)]
        if all(count > c for c in around[1:3]) and all(count >= c for c in around):
            peaks.append(edge)
    return peaks


def mode_centre(hist: dict[float, int], bin_s: float = HIST_BIN_S) -> float:
    """The centre of the tallest bin (seconds)."""
    edge = max(hist, key=lambda k: (hist[k], -k))
    return edge + bin_s / 2


# ---------------------------------------------------------------- derived profile ---------

def imbalanced_profile(cab: dict) -> dict:
    """cab-16core with the persistent slow-node imbalance (IMBALANCE_* above) added."""
    p = json.loads(json.dumps(cab))
    p["name"] = cab["name"] + ", plus persistent imbalance between nodes"
    p["made_by"] = (cab["made_by"] + f" PLUS (bench/harness/aloe_harness/sim_trends.py): slow-node "
                    f"fraction {IMBALANCE_FRACTION}, factor {IMBALANCE_FACTOR}: thesis Tab 1.1-1.2, N-body on "
                    f"cab with ideal balance inside nodes, max/avg load 1.26 at 16,384 cores; "
                    f"F / (1 + {IMBALANCE_FRACTION} (F - 1)) = 1.26 gives F = {IMBALANCE_FACTOR}.")
    p["noise"] = list(p["noise"]) + [{"kind": "slow-node", "fraction": IMBALANCE_FRACTION, "factor": IMBALANCE_FACTOR}]
    return p


# ---------------------------------------------------------------- the figures -------------

def figures(out: Path) -> list[dict]:
    """Every figure the trend folders give: rows of trend, figure, nodes, value."""
    rows: list[dict] = []

    def add(trend, figure, nodes, value):
        rows.append({"trend": trend, "figure": figure, "nodes": nodes, "value": value})

    def have(name):
        return (out / name / "summary.csv").exists()

    if have("kg-jacobi"):
        s = read_summary(out / "kg-jacobi" / "summary.csv")
        steps = read_steps(steps_file(out / "kg-jacobi"))
        for sched in ("static", "hybrid,fs=0.5,chunk=1", "dynamic,chunk=1"):
            for n, v in loss_vs_nodes(s, sched).items():
                add("kg-jacobi", f"loss vs 1 node: {sched}", n, v)
        for n, v in gain_vs_nodes(s, "static", "hybrid,fs=0.5,chunk=1").items():
            add("kg-jacobi", "gain of hybrid fs=0.5 over static", n, v)
        for n in node_counts(s):
            add("kg-jacobi", "mean step (ms): static", n, total(s, n, "static") / _steps(s) * 1e3)
            add("kg-jacobi", "mean step (ms): hybrid fs=0.5", n, total(s, n, "hybrid,fs=0.5,chunk=1") / _steps(s) * 1e3)
        for (n, sched), v in steps.items():
            h = histogram(v)
            add("kg-jacobi", f"modes (ms): {sched}", n, " ".join(f"{(m + HIST_BIN_S / 2) * 1e3:.3f}" for m in modes(h)))
            add("kg-jacobi", f"tallest bin centre (ms): {sched}", n, mode_centre(h) * 1e3)
            add("kg-jacobi", f"max step (ms): {sched}", n, max(v) * 1e3)
    for name in ("cab-best-fs", "cab-best-fs-2ms", "cab-best-fs-6ms", "cab-imb-best-fs", "bgq"):
        if not have(name):
            continue
        s = read_summary(out / name / "summary.csv")
        best = read_best_fs(out / name / "best_fs.csv")
        for n, (fs, t) in best.items():
            lo, hi = near_best_range(sweep_curve(s, n))
            add(name, "oracle best fs", n, fs)
            add(name, "fs within 1% of the best", n, f"{lo:.2f}-{hi:.2f}")
            add(name, "gain of the oracle fs over static", n, gain(total(s, n, "static"), t))
        for n, v in loss_vs_nodes(s, "static").items():
            add(name, "loss vs 1 node: static", n, v)
        for sched in ("dynamic,chunk=1", "hybrid,fs=0.9,chunk=1", "hybrid,fs=0.9,chunk=1,slack=on",
                      "adaptive,search=race,chunk=auto,delay=optimistic"):
            if any(r["schedule"] == sched and not r["sweep"] for r in s):
                for n, v in gain_vs_nodes(s, "static", sched).items():
                    add(name, f"gain over static: {sched}", n, v)
    for name, oracle in (("cab-slack", "cab-best-fs"), ("cab-imb-slack", "cab-imb-best-fs")):
        if not have(name):
            continue
        s = read_summary(out / name / "summary.csv")
        best = read_best_fs(out / oracle / "best_fs.csv") if have(oracle) else {}
        for fs in ("0.8", "0.5"):
            plain, slack = f"hybrid,fs={fs},chunk=1", f"hybrid,fs={fs},chunk=1,slack=on"
            for n in node_counts(s):
                add(name, f"gain over static: {plain}", n, gain(total(s, n, "static"), total(s, n, plain)))
                add(name, f"gain over static: {slack}", n, gain(total(s, n, "static"), total(s, n, slack)))
                add(name, f"gain of slack=on over plain fs={fs}", n, gain(total(s, n, plain), total(s, n, slack)))
                if n in best:
                    add(name, f"gain of fs={fs} slack=on over the oracle fs", n, gain(best[n][1], total(s, n, slack)))
                for r in s:
                    if r["nodes"] == n and r["schedule"] == slack:
                        add(name, f"slack spent (share of node-steps): fs={fs}", n, r["slack_spent_fraction"])
                        add(name, f"mean fs run: fs={fs} slack=on", n, r["mean_fs"])
        for n in node_counts(s):
            add(name, "gain over static: adaptive", n,
                gain(total(s, n, "static"), total(s, n, "adaptive,search=race,chunk=auto,delay=optimistic")))
    return rows


def _steps(rows: list[dict]) -> int:
    return int(rows[0]["steps"])


def write_figures(out: Path, rows: list[dict]) -> None:
    with open(out / "trends.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["trend", "figure", "nodes", "value"])
        w.writeheader()
        for r in rows:
            v = r["value"]
            w.writerow({**r, "value": f"{v:.6g}" if isinstance(v, float) else v})


def _cell(figure: str, v) -> str:
    """Gains and losses as signed percentages, other numbers to 3 digits, text as is."""
    if not isinstance(v, float):
        return str(v)
    return f"{v:+.1%}" if figure.startswith(("gain", "loss")) else f"{v:.3g}"


def write_summary(out: Path, rows: list[dict], commands: list[str], wall: float) -> None:
    """summary.md: the figures as one table per trend and figure (node counts across)."""
    lines = ["# Published trends, simulated (issue 16, part 6)", "",
             "Made by `bench/harness/aloe_harness/sim_trends.py`; the side-by-side table with the "
             "papers' figures and verdicts is docs/sim-published-trends.md. Gains are t_base / t - 1; "
             "losses t(P) / t(1) - 1; fs values plain numbers. One seed (1) per run.", "",
             f"Simulation wall time: {wall:.0f} s.", ""]
    by_trend: dict[str, dict[str, dict[int, object]]] = {}
    for r in rows:
        by_trend.setdefault(r["trend"], {}).setdefault(r["figure"], {})[r["nodes"]] = r["value"]
    for trend, figs in by_trend.items():
        counts = sorted({n for f in figs.values() for n in f})
        lines += [f"## {trend}", "", "| figure | " + " | ".join(str(n) for n in counts) + " |",
                  "|---|" + "---:|" * len(counts)]
        for fig, vals in figs.items():
            cells = []
            for n in counts:
                v = vals.get(n, "")
                cells.append(_cell(fig, v))
            lines.append(f"| {fig} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Commands", "", "```"] + commands + ["```", ""]
    (out / "summary.md").write_text("\n".join(lines))


# ---------------------------------------------------------------- plots -------------------

def make_plots(out: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = out / "plots"
    plots.mkdir(exist_ok=True)
    written = []

    def save(fig, name):
        fig.tight_layout()
        fig.savefig(plots / name, dpi=100)
        plt.close(fig)
        written.append(plots / name)

    if steps_file(out / "kg-jacobi") is not None:
        steps = read_steps(steps_file(out / "kg-jacobi"))
        fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
        for ax, n in zip(axes, (1, 64)):
            for sched, colour in (("static", "tab:red"), ("hybrid,fs=0.5,chunk=1", "tab:blue")):
                v = [x * 1e3 for x in steps.get((n, sched), [])]
                if v:
                    lo, hi = math.floor(min(v) * 4) / 4, math.ceil(max(v) * 4) / 4 + 0.25
                    ax.hist(v, bins=[lo + 0.25 * k for k in range(int((hi - lo) / 0.25) + 1)], alpha=0.55,
                            color=colour, label=sched)
            ax.set_title(f"Kale & Gropp Jacobi on power575-16core: {n} node{'s' if n > 1 else ''}")
            ax.set_ylabel("steps")
            ax.legend()
        axes[-1].set_xlabel("step time (ms), 0.25 ms bins")
        save(fig, "kg-step-histograms.png")
        s = read_summary(out / "kg-jacobi" / "summary.csv")
        fig, ax = plt.subplots(figsize=(7, 4))
        for sched in sorted({r["schedule"] for r in s}):
            ns = node_counts(s)
            ax.plot(ns, [total(s, n, sched) for n in ns], marker="o", label=sched)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes")
        ax.set_ylabel(f"time for {_steps(s)} steps (s)")
        ax.set_title("Kale & Gropp Jacobi (power575-16core): time vs nodes")
        ax.legend(fontsize=8)
        save(fig, "kg-time-vs-nodes.png")
    fs_runs = [n for n in ("cab-best-fs", "cab-best-fs-2ms", "cab-best-fs-6ms", "cab-imb-best-fs")
               if (out / n / "best_fs.csv").exists()]
    if fs_runs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for name in fs_runs:
            best = read_best_fs(out / name / "best_fs.csv")
            ax.plot(list(best), [b[0] for b in best.values()], marker="o", label=name)
        ax.axhspan(0.8, 0.9, color="grey", alpha=0.2, label="thesis Fig 4.11: 0.8-0.9 at 1,024 nodes")
        ax.set_xscale("log", base=2)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("nodes")
        ax.set_ylabel("oracle best fs")
        ax.set_title("Best static fraction vs nodes (cab-16core)")
        ax.legend(fontsize=8)
        save(fig, "best-fs-vs-nodes.png")
        for name in fs_runs:
            s = read_summary(out / name / "summary.csv")
            fig, ax = plt.subplots(figsize=(7, 4))
            for n in node_counts(s):
                c = sweep_curve(s, n)
                t1 = dict(c).get(1.0, c[-1][1])
                ax.plot([x for x, _ in c], [t / t1 for _, t in c], marker=".", label=f"{n} nodes")
            ax.set_xlabel("fs")
            ax.set_ylabel("time / time at fs = 1")
            ax.set_title(f"fs sweep ({name}), as thesis Fig 4.11a")
            ax.legend(fontsize=8)
            save(fig, f"fs-sweep-{name}.png")
    slack_runs = [n for n in ("cab-slack", "cab-imb-slack") if (out / n / "summary.csv").exists()]
    if slack_runs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for name in slack_runs:
            s = read_summary(out / name / "summary.csv")
            for sched, style in (("hybrid,fs=0.8,chunk=1,slack=on", "-"), ("hybrid,fs=0.8,chunk=1", ":"),
                                 ("hybrid,fs=0.5,chunk=1,slack=on", "--")):
                g = gain_vs_nodes(s, "static", sched)
                ax.plot(list(g), [100 * v for v in g.values()], style, marker="o", label=f"{name}: {sched}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes")
        ax.set_ylabel("gain over static (%)")
        ax.set_title("Slack-conscious and plain hybrid vs static (cab-16core)")
        ax.axhline(0, color="black", lw=0.5)
        ax.legend(fontsize=7)
        save(fig, "slack-gain-vs-nodes.png")
    return written


# ---------------------------------------------------------------- running -----------------

def run(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "profiles").mkdir(exist_ok=True)
    profiles = Path(args.profiles)
    cab = json.loads((profiles / "cab-16core.json").read_text())
    (out / "profiles" / "cab-16core-imbalanced.json").write_text(json.dumps(imbalanced_profile(cab), indent=2) + "\n")
    commands = ["python -m aloe_harness.sim_trends " + " ".join(shlex.quote(a) for a in sys.argv[1:])]
    started = time.monotonic()
    for t in TRENDS:
        if args.only and t.name not in args.only:
            continue
        profile = (out / "profiles" / t.profile) if t.profile in DERIVED else profiles / t.profile
        argv = t.argv(args.aloe, profile, out / t.name, args.threads, args.quick)
        shown = " ".join(shlex.quote(_rel(a)) for a in argv)
        commands.append(shown)
        print(f"[{time.monotonic() - started:6.0f} s] {t.name}", file=sys.stderr, flush=True)
        done = subprocess.run(argv, capture_output=True, text=True)
        (out / t.name).mkdir(exist_ok=True)
        (out / t.name / "stdout.txt").write_text(done.stdout + done.stderr)
        if done.returncode != 0:
            print(f"sim_trends: {t.name} failed ({done.returncode}): {done.stderr.strip()}", file=sys.stderr)
            return 1
    wall = time.monotonic() - started
    (out / "command.txt").write_text("\n".join(commands) + "\n" + f"# {datetime.datetime.now().isoformat(timespec='seconds')}\n")
    rows = figures(out)
    write_figures(out, rows)
    write_summary(out, rows, commands, wall)
    if args.plots:
        make_plots(out)
    print(f"sim_trends: {out}/summary.md ({wall:.0f} s of simulation)", file=sys.stderr)
    return 0


def _rel(a: str) -> str:
    try:
        return str(Path(a).resolve().relative_to(REPO)) if "/" in a else a
    except ValueError:
        return a


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="sim_trends", description=__doc__.splitlines()[0])
    p.add_argument("--aloe", default=str(REPO / "build/release/tools/aloe/aloe"))
    p.add_argument("--profiles", default=str(REPO / "tools/sim/profiles"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="at most 64 nodes and 100 steps")
    p.add_argument("--only", nargs="+", metavar="TREND", help="run only these trends (figures from all present)")
    p.add_argument("--plots", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--figures-only", action="store_true", help="recompute figures and plots from --out, run nothing")
    p.add_argument("--out", default=str(REPO / "bench/results" / f"sim-trends-{datetime.date.today():%Y%m%d}"))
    args = p.parse_args(argv)
    if args.figures_only:
        out = Path(args.out)
        rows = figures(out)
        write_figures(out, rows)
        cmds = (out / "command.txt").read_text().splitlines() if (out / "command.txt").exists() else []
        write_summary(out, rows, [c for c in cmds if not c.startswith("#")], 0)
        if args.plots:
            make_plots(out)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
