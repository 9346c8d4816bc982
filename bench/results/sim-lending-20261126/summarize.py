"""Writes table.md of this folder from the runs' summary.csv files (aloe sim --ranks-per-node).

    python3 bench/results/sim-lending-20261126/summarize.py

Per run folder, one row per case (work, injected noise) and k: `off`'s simulated time, the
ideal's ratio to it, every policy's ratio to `off`, predictive's efficiency (ideal / time)
and its ratio to the better LeWI. The 2-rank folders are also set beside the 2-core VM's
measured ratios (bench/results/core-lending-20261126/result.json).
"""
import csv
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURED = HERE.parent / "core-lending-20261126" / "result.json"
POLICIES = ["lewi", "lewi,mpi=busy", "reactive", "predictive", "predictive,sizing=off", "predictive,sizing=renew",
            "predictive,ask=all"]
SHORT = {"lewi": "lewi", "lewi,mpi=busy": "lewi busy", "reactive": "reactive", "predictive": "predictive",
         "predictive,sizing=off": "pred. no sizing", "predictive,sizing=renew": "pred. renew",
         "predictive,ask=all": "pred. ask all"}


def runs(folder):
    with open(folder / "summary.csv", newline="") as f:
        return list(csv.DictReader(f))


def runs_with_extra(folder):
    """The folder's runs and those of FOLDER-askall (the same cases run later with the
    what-if policy; its `off` runs are the same bits and are dropped)."""
    rows = runs(folder)
    extra = folder.parent / (folder.name + "-askall")
    if (extra / "summary.csv").exists():
        rows += [r for r in runs(extra) if r["policy"] != "off"]
    return rows


def case_of(row):
    return row["rank_work"] if not row["rank_noise"] else f"{row['rank_work']} noise {row['rank_noise']}"


def table(folder, title):
    rows = runs_with_extra(folder)
    cases = []
    for r in rows:
        key = (case_of(r), int(r["regions"]))
        if key not in cases:
            cases.append(key)
    present = [p for p in POLICIES if any(r["policy"] == p for r in rows)]
    first = rows[0]
    out = [f"### {title}", "",
           f"`{folder.name}/`: {first['nodes']} node{'' if first['nodes'] == '1' else 's'} × {first['cores']} cores, {first['ranks']} ranks per node, "
           f"{first['steps']} steps. Ratios to `off` (lower is better); efficiency = ideal / time"
           f"{' (pred. ask all: `' + folder.name + '-askall/`)' if (folder.parent / (folder.name + '-askall')).exists() else ''}.", "",
           "| case | k | off (s) | ideal / off | " + " | ".join(SHORT[p] for p in present) +
           " | predictive efficiency | predictive / best lewi |",
           "|---|---:|---:|---:|" + "---:|" * len(present) + "---:|---:|"]
    for case, k in cases:
        sel = {r["policy"]: r for r in rows if case_of(r) == case and int(r["regions"]) == k}
        off = float(sel["off"]["total_s"])
        ideal = float(sel["off"]["ideal_s"])
        cells = [f"{float(sel[p]['total_s']) / off:.3f}" if p in sel else "-" for p in present]
        pred = sel.get("predictive")
        lewis = [float(sel[p]["total_s"]) for p in ("lewi", "lewi,mpi=busy") if p in sel]
        eff = f"{float(pred['efficiency']):.3f}" if pred else "-"
        vs_lewi = f"{float(pred['total_s']) / min(lewis):.3f}" if pred and lewis else "-"
        out.append(f"| {case} | {k} | {off:.3f} | {ideal / off:.3f} | " + " | ".join(cells) + f" | {eff} | {vs_lewi} |")
    return "\n".join(out) + "\n"


def vm_comparison():
    measured = json.loads(MEASURED.read_text())
    by = {(s["case"], s["k"], s["variant"]): s["ratio_to_off"] for s in measured["summary"]}
    dyn = {(r["rank_work"], r["rank_noise"], int(r["regions"]), r["policy"]): r for r in runs(HERE / "vm-2x1")}
    dyn.update({(r["rank_work"], r["rank_noise"], int(r["regions"]), r["policy"]): r for r in runs(HERE / "vm-2x1-noise")})
    sta = {(r["rank_work"], int(r["regions"]), r["policy"]): r for r in runs(HERE / "vm-2x1-static")}
    cases = [("heavy2", "1:2", ""), ("heavy3", "1:3", ""), ("noise", "1", "0:0.5"), ("balanced", "1", "")]
    out = ["### The 2-rank case against the 2-core VM's measurement", "",
           "Each cell: measured / modelled ratio to `off`. Measured: bench/results/core-lending-20261126 (median of 3, "
           "jacobi3d-mpi n = 192, 2 ranks × 1 core). Modelled: `vm-2x1/` (aloe's policies and lewi on "
           "`dynamic,chunk=1`), `vm-2x1-static/` (lewi on `static`, as DLB ran libomp's static: used for 1:2 and 1:3), "
           "`vm-2x1-noise/`.", "",
           "| case | k | predictive | reactive | DLB yield / lewi | DLB busy / lewi busy |",
           "|---|---:|---|---|---|---|"]
    for case, work, noise in cases:
        for k in (1, 4, 20):
            def model(policy, static=False):
                if static:
                    r = sta.get((work, k, policy))
                    base = sta.get((work, k, "off"))
                else:
                    r = dyn.get((work, noise, k, policy))
                    base = dyn.get((work, noise, k, "off"))
                return float(r["total_s"]) / float(base["total_s"]) if r and base else None

            def cell(variant, policy, static=False):
                m = by.get((case, k, variant))
                s = model(policy, static)
                return f"{m:.3f} / {s:.3f}" if m is not None and s is not None else (f"{m:.3f} / -" if m is not None else "-")

            has_static = (work, k, "off") in sta and not noise
            out.append(f"| {case} ({work}{', rank 1 noise' if noise else ''}) | {k} | {cell('predictive', 'predictive')} | "
                       f"{cell('reactive', 'reactive')} | {cell('dlb-yield', 'lewi', has_static)} | "
                       f"{cell('dlb-busy', 'lewi,mpi=busy', has_static)} |")
    return "\n".join(out) + "\n"


def main():
    parts = ["# `aloe sim`: ranks that lend cores (issue 19), 2026-11-26", "",
             "Written by summarize.py from the runs' summary.csv (command.txt has the commands). "
             "docs/sim.md, \"Ranks that lend cores (issue 19)\", describes the model.", ""]
    for name, title in [("cab-1000x16", "1,000 nodes × 16 cores, cab's noise (published), imbalance and balanced"),
                        ("cab-1000x16-noise", "1,000 nodes × 16 cores, cab's noise, per-rank injected noise"),
                        ("vmnoise-1000x16", "1,000 nodes × 16 cores, the 2-core VM's measured noise (trace replay)"),
                        ("vm-2x1", "1 node × 2 cores, 2 ranks of 1 core (the VM's case), the VM's measured noise"),
                        ("vm-2x1-noise", "1 node × 2 cores, 2 ranks, rank 1 loses 3 ms in half the steps")]:
        if (HERE / name / "summary.csv").exists():
            parts.append(table(HERE / name, title))
    if MEASURED.exists() and (HERE / "vm-2x1" / "summary.csv").exists():
        parts.append(vm_comparison())
    (HERE / "table.md").write_text("\n".join(parts))


if __name__ == "__main__":
    main()
