"""Where results came from: the command line, the machine, and its measured noise.

Writes command.txt, machine.json and noise-{before,after}.json into a results folder. Nothing
here may stop a benchmark: a probe that fails records its error text instead.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import subprocess
from pathlib import Path
from . import files

# The source tree holds this file at bench/harness/aloe_harness/; an installed tree at
# <prefix>/share/aloe/harness/aloe_harness/, with no repository around it (REPO_ROOT None).
_TOP = Path(__file__).resolve().parents[3]
REPO_ROOT = _TOP if (_TOP / "bench" / "harness" / "aloe_harness").is_dir() else None
# Matrix files: bench/matrices/ in the source tree, <prefix>/share/aloe/matrices/ installed.
MATRICES_DIR = Path(__file__).resolve().parents[2] / "matrices"
PROBE_TIMEOUT_S = 300  # `aloe noise --quick` should take seconds; this only stops a hang


def display_path(path: str | Path) -> str:
    """`path` relative to the repository when it lies inside it, else as given."""
    p = Path(path)
    if REPO_ROOT is None or not p.is_absolute():
        return str(p)
    try:
        return str(p.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(p)


def display_command(argv: list[str]) -> str:
    """A shell-quoted command line with repository paths made relative (also in --flag=PATH)."""
    words = []
    for word in argv:
        flag, eq, value = word.partition("=")
        if eq and flag.startswith("-") and value.startswith("/"):
            words.append(f"{flag}={display_path(value)}")
        else:
            words.append(display_path(word) if word.startswith("/") else word)
    return shlex.join(words)


def write_command(out_dir: Path, argv: list[str]) -> None:
    """command.txt: the harness command line, and the outer command when a wrapper set
    ALOE_COMMAND_LINE (e.g. `aloe bench …`)."""
    lines = []
    outer = os.environ.get("ALOE_COMMAND_LINE")
    if outer:
        lines.append(f"# invoked as: {outer}")
    cwd = display_path(Path.cwd())
    if cwd != ".":
        lines.append(f"# in: {cwd}")
    pythonpath = display_path(Path(__file__).resolve().parents[1])
    lines.append(f"PYTHONPATH={shlex.quote(pythonpath)} "
                 + display_command(["python", "-m", "aloe_harness"] + argv))
    files.write_text(out_dir / "command.txt", "\n".join(lines) + "\n")


def _probe(argv: list[str], timeout: float = 60) -> tuple[int | None, str, str]:
    """Runs argv; returns (exit status or None, stdout, stderr/error text)."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "", str(e)


def machine_description(aloe: str) -> dict:
    """`aloe info --json`, uname -a, lscpu, the date and the git commit (errors recorded)."""
    rc, out, err = _probe([aloe, "info", "--json"])
    try:
        info = json.loads(out) if rc == 0 else {"error": err.strip() or f"exit status {rc}"}
    except json.JSONDecodeError as e:
        info = {"error": f"output is not JSON: {e}"}
    rc, uname, err = _probe(["uname", "-a"])
    rc_l, lscpu, err_l = _probe(["lscpu"])
    root = str(REPO_ROOT or Path(aloe).resolve().parent)
    commit = _probe(["git", "-C", root, "rev-parse", "HEAD"])
    dirty = _probe(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"])
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "aloe": display_path(aloe),
        "aloe_info": info,
        "uname": uname.strip() if rc == 0 else f"error: {err.strip()}",
        "lscpu": lscpu if rc_l == 0 else f"error: {err_l.strip()}",
        "git_commit": commit[1].strip() if commit[0] == 0 else None,
        "git_dirty": bool(dirty[1].strip()) if dirty[0] == 0 else None,
        "cpus_allowed": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else None,
        "loadavg": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
    }


def write_machine(out_dir: Path, aloe: str) -> None:
    files.write_text(out_dir / "machine.json", json.dumps(machine_description(aloe), indent=2) + "\n")


def measure_noise(aloe: str) -> dict:
    """`aloe noise --json --quick`; on any failure {"error": …} so the run goes on."""
    argv = [aloe, "noise", "--json", "--quick"]
    rc, out, err = _probe(argv, timeout=PROBE_TIMEOUT_S)
    base = {"command": display_command(argv)}
    if rc != 0:
        return base | {"error": err.strip() or f"exit status {rc}", "exit_status": rc}
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        return base | {"error": f"output is not JSON: {e}", "output": out[:2000]}


def write_noise(out_dir: Path, aloe: str, when: str, skip_reason: str | None = None) -> dict:
    """noise-<when>.json (or the reason it was not measured); returns what was written."""
    data = {"error": skip_reason} if skip_reason else measure_noise(aloe)
    files.write_text(out_dir / f"noise-{when}.json", json.dumps(data, indent=2) + "\n")
    return data


def describe_noise(data: dict | None) -> str:
    """One line for tables: the error, or per CPU and method the time lost and the tail."""
    if data is None:
        return "not measured"
    if "error" in data:
        return f"not measured ({data['error']})"
    cpus = [c for c in data.get("cpus", []) if isinstance(c, dict) and "lost_fraction" in c]
    if cpus:  # `aloe noise --json`: one entry per method and CPU
        return "; ".join(
            f"{c.get('method', '?')} cpu {c.get('cpu', '?')}: lost {c['lost_fraction']:.1%}"
            + (f", p99 {_us(c['p99_us'])}" if "p99_us" in c else "")
            + (f", max {_us(c['max_us'])}" if "max_us" in c else "") for c in cpus)
    flat = _numbers(data)
    return ", ".join(f"{k} {v:.4g}" for k, v in list(flat.items())[:8]) or json.dumps(data)[:200]


def most_lost(data: dict | None) -> float | None:
    """The largest fraction of a CPU the machine lost to its own noise, if measured."""
    if not data or "error" in data:
        return None
    values = [c["lost_fraction"] for c in data.get("cpus", []) if isinstance(c, dict)
              and isinstance(c.get("lost_fraction"), (int, float))]
    if isinstance(data.get("lost_fraction"), (int, float)):
        values.append(data["lost_fraction"])
    return max(values) if values else None


def _us(value: float) -> str:
    return f"{value / 1000:.1f} ms" if value >= 1000 else f"{value:.3g} µs"


def _numbers(data: dict, prefix: str = "") -> dict[str, float]:
    out = {}
    for key, value in data.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            out[prefix + key] = value
        elif isinstance(value, dict) and not prefix:
            out |= _numbers(value, f"{key}.")
    return out
