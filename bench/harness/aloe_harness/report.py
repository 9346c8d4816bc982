"""`report DIR`: one self-contained HTML page (DIR/report.html) from a results folder.

It reads what `bench` wrote (command.txt, machine.json, noise-*.json, runs.jsonl, sweep.csv,
problems.txt, plots/*.png) and shows the machine, the command, the measured noise, the
failures, the adaptive schedule's section (with aloe:adaptive runs), the interposer's section
(with aloe-run runs), the MPI section (with MPI workloads, or skipped ones: how they were
launched, per-rank slack tables), the summary tables and the plots. The PNGs are linked, everything else
is inline.
"""
from __future__ import annotations

import gzip
import html
import json
import re
from pathlib import Path

from . import adaptive, interposer, mpi, summary, sweep
from .provenance import describe_noise
from . import files

_STYLE = """
body { font-family: sans-serif; max-width: 72em; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: .5em 0; font-size: 90%; }
th, td { border: 1px solid #bbb; padding: .2em .6em; text-align: right; }
td:nth-child(2), th:nth-child(2) { text-align: left; font-family: monospace; }
pre { background: #f4f4f4; padding: .6em; overflow-x: auto; font-size: 85%; }
.fail { color: #b00; font-weight: bold; }
.verdict { font-weight: bold; }
figure { display: inline-block; margin: .5em; }
figure img { max-width: 34em; border: 1px solid #ddd; }
"""
_PLOT_KINDS = [("hist", "Timestep histograms"), ("bars", "Median time per run and regime"),
               ("sweep", "fs sweep"),
               ("adaptive", "Adaptive: the staggered fs sweep per regime, adaptive's choice"),
               ("convergence", "Adaptive: convergence of the loop site"),
               ("rankhist", "MPI: step times per rank"),
               ("timeline", "Per-thread timelines")]


def runs_file(folder: Path) -> Path | None:
    """runs.jsonl, or runs.jsonl.gz (how committed results keep it small); None if neither."""
    for name in ("runs.jsonl", "runs.jsonl.gz"):
        if (folder / name).exists():
            return folder / name
    return None


def read_entries(folder: Path) -> list[dict]:
    path = runs_file(folder)
    if path is None:
        return []
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        return {"error": f"{path.name}: {e}"} if path.exists() else None


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def write(folder: str | Path) -> Path:
    """Writes folder/report.html and returns its path."""
    folder = Path(folder)
    e = html.escape
    entries = read_entries(folder)
    rows = summary.summarize(entries)
    machine = _json(folder / "machine.json") or {}
    before, after = _json(folder / "noise-before.json"), _json(folder / "noise-after.json")
    problems = [p for p in _text(folder / "problems.txt").splitlines() if p.strip()]

    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
           f"<title>aloe benchmark: {e(folder.name)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>aloe benchmark: {e(folder.name)}</h1>"]
    out += ["<h2>Machine</h2>", _machine(machine)]
    out += ["<h2>Command</h2>", f"<pre>{e(_text(folder / 'command.txt').strip())}</pre>"]
    out += ["<h2>Measured noise</h2><ul>"]
    for when, data in (("before", before), ("after", after)):
        out += [f"<li>{when} the runs: {e(describe_noise(data))}"
                f"<details><summary>noise-{when}.json</summary>"
                f"<pre>{e(json.dumps(data, indent=2))}</pre></details></li>"]
    out += ["</ul>"]
    if problems:
        out += [f"<h2 class='fail'>Failures ({len(problems)})</h2><ul>"]
        out += [f"<li class='fail'>{e(p)}</li>" for p in problems] + ["</ul>"]
    out += _adaptive(adaptive.rows(entries, rows))
    out += _interposer(interposer.rows(rows))
    skipped = [x for x in _text(folder / "skipped.txt").splitlines() if x.strip()]
    out += _mpi(mpi.rank_rows(entries), entries, skipped)
    out += ["<h2>Results</h2>",
            "<p>Ratios: median total time over the repetitions divided by the best peer's "
            "(libgomp, libomp, oneTBB) median in the same workload, regime and threads. "
            "Efficiency: serial time / (threads × median). Spread: (p75−p25)/median. "
            "Absolute times: <a href='results.csv'>results.csv</a>.</p>"]
    for t in summary.tables(rows):
        out += [f"<h3>{e(t.title)}</h3>", "<table><tr>"
                + "".join(f"<th>{e(h)}</th>" for h in t.header) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in t.body]
        out += ["</table>", f"<p class='verdict'>{e(t.verdict)}</p>"]
    if (folder / "sweep.csv").exists():
        out += ["<h2>fs sweep</h2><ul>"]
        out += [f"<li>{e(line[2:])}</li>" for line in sweep.markdown(
            sweep.read_csv(folder / "sweep.csv")) if line.startswith("- ")]
        out += ["</ul><p>The curve: <a href='sweep.csv'>sweep.csv</a>.</p>"]
    out += ["<h2>Repeatability</h2><ul>"]
    out += [f"<li>{e(x)}</li>" for x in summary.repeatability(rows, before, after)] + ["</ul>"]
    out += _plots(folder)
    out += ["<h2>Files</h2><ul>"] + [f"<li><a href='{n}'>{n}</a></li>" for n in (
        "results.csv", "adaptive.csv", "interposer.csv", "mpi.csv", "summary.md", "runs.jsonl",
        "runs.jsonl.gz",
        "machine.json", "command.txt")
        if (folder / n).exists()] + ["</ul></body></html>"]
    path = folder / "report.html"
    files.write_text(path, "\n".join(out) + "\n")
    return path


def _adaptive(arows: list[dict]) -> list[str]:
    """The Adaptive section of summary.md (adaptive.py): ratios, targets, counts."""
    if not arows:
        return []
    e = html.escape
    text = re.sub(r"`([^`]*)`", r"<code>\1</code>", e(adaptive.intro(arows)))
    out = ["<h2>Adaptive</h2>", f"<p>{text} "
           "<a href='adaptive.csv'>adaptive.csv</a>.</p>"]
    for t in adaptive.tables(arows):
        out += [f"<h3>{e(t.title)}</h3>"] if t.title else []
        out += ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in t.header) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in t.body]
        out += ["</table>"]
    return out + ["<ul>"] + [f"<li class='verdict'>{e(x)}</li>"
                             for x in adaptive.counts(arows)] + ["</ul>"]


def _interposer(irows: list[dict]) -> list[str]:
    """The Interposer section of summary.md (interposer.py): ratios, forwarded loops."""
    if not irows:
        return []
    e = html.escape
    text = re.sub(r"`([^`]*)`", r"<code>\1</code>", e(interposer.INTRO))
    out = ["<h2>Interposer</h2>", f"<p>{text} <a href='interposer.csv'>interposer.csv</a>.</p>"]
    for title, header, body in interposer.tables(irows):
        out += [f"<h3>{e(title)}</h3>"] if title else []
        out += ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in body]
        out += ["</table>"]
    return out + ["<ul>"] + [f"<li class='verdict'>{e(x)}</li>"
                             for x in interposer.counts(irows)] + ["</ul>"]


def _mpi(mrows: list[dict], entries: list[dict], skipped: list[str]) -> list[str]:
    """The MPI section of summary.md (mpi.py): skipped workloads, launches, slack tables."""
    launched = mpi.launches(entries)
    if not mrows and not skipped and not launched:
        return []
    e = html.escape
    out = ["<h2>MPI</h2>"]
    if skipped:
        out += ["<p class='fail'>Skipped:</p><ul>"] + [f"<li>{e(x)}</li>" for x in skipped]
        out += ["</ul>"]
    if launched:
        out += ["<p>Launched as:</p><ul>"] + [f"<li>{e(x)}</li>" for x in launched] + ["</ul>"]
    if mrows:
        text = re.sub(r"`([^`]*)`", r"<code>\1</code>", e(mpi.INTRO))
        out += [f"<p>{text} <a href='mpi.csv'>mpi.csv</a>.</p>"]
    for title, header, body in mpi.tables(mrows):
        out += [f"<h3>{e(title)}</h3>", "<table><tr>"
                + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in body]
        out += ["</table>"]
    return out


def _machine(m: dict) -> str:
    e = html.escape
    info = m.get("aloe_info") or {}
    topology = (info.get("topology") or {}).get("description") or info.get("error") or ""
    model = next((line.split(":", 1)[1].strip() for line in (m.get("lscpu") or "").splitlines()
                  if line.startswith("Model name:")), None)
    items = [("date", m.get("date")), ("CPU", model), ("uname", m.get("uname")),
             ("git commit", f"{m.get('git_commit')}"
                            + (" (uncommitted changes)" if m.get("git_dirty") else "")),
             ("aloe", f"{m.get('aloe')} {info.get('version', '')}"),
             ("topology", topology.strip()), ("CPUs allowed", m.get("cpus_allowed")),
             ("load average", m.get("loadavg"))]
    out = ["<table>"] + [f"<tr><th>{e(k)}</th><td style='text-align:left'>{e(str(v))}</td></tr>"
                         for k, v in items if v not in (None, "")] + ["</table>"]
    caps = info.get("capabilities") or []
    if caps:
        out += ["<p>Capabilities: " + "; ".join(
            e(f"{c.get('name')}: {'yes' if c.get('available') else 'no'}") for c in caps) + "</p>"]
    if m.get("lscpu"):
        out += [f"<details><summary>lscpu</summary><pre>{e(m['lscpu'])}</pre></details>"]
    return "\n".join(out)


def _plots(folder: Path) -> list[str]:
    pngs = sorted((folder / "plots").glob("*.png")) if (folder / "plots").is_dir() else []
    if not pngs:
        return []
    out = ["<h2>Plots</h2>"]
    kinds = dict(_PLOT_KINDS)
    groups: dict[str, list[Path]] = {}
    for p in pngs:
        prefix = p.name.split("-", 1)[0]
        groups.setdefault(prefix if prefix in kinds else "other", []).append(p)
    for prefix in [k for k, _ in _PLOT_KINDS] + ["other"]:
        if prefix in groups:
            out.append(f"<h3>{html.escape(kinds.get(prefix, 'Other plots'))}</h3>")
            for p in groups[prefix]:
                src = html.escape(f"plots/{p.name}", quote=True)
                out.append(f"<figure><a href='{src}'><img src='{src}' alt='{src}'></a>"
                           f"<figcaption>{html.escape(p.stem)}</figcaption></figure>")
    return out
