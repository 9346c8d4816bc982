"""Rewrites an NPB 3.4 OpenMP source tree so that its worksharing loops reach the runtime:
schedule(runtime), wherever the program stays correct under any schedule (issue 14: the
`npb` and `persistence` subcommands run the result).

    python -m aloe_harness.npb_variant NPB3.4-OMP   (a copy of the sources, outside this
                                                     repository; then make MG CLASS=A, …)

A loop with schedule(static[,n]) or no schedule clause becomes schedule(runtime) (loops that
already ask for dynamic or guided reach the runtime as they are), except where the program
depends on which thread runs which iterations:
- `ordered` loops: MG's zran3 resets its shared maxima in a `master` block with no barrier
  before the ordered loop, which is safe only when thread 0 runs the first iteration;
- a loop that ends `nowait` while more of its parallel region follows before a barrier, and
  the loops after it up to one: BT's and SP's compute_rhs read, with no barrier, what the
  same thread wrote in the loop before, which holds only for the same static blocks (with
  them rewritten, BT and SP fail their verification on plain libgomp with OMP_SCHEDULE=dynamic,
  and MG dies of SIGSEGV);
- all of LU (its pipelined sweeps pass blocks between threads by flags over static blocks).
Fortran: `!$omp do` and `!$omp parallel do` with their `!$omp&` continuation lines, closed by
`!$omp end do [nowait]`; C (IS, DC): `#pragma omp for` and `#pragma omp parallel for`, nowait
in the pragma. Prints per file how many loops it rewrote and kept, and why.
"""
from __future__ import annotations

import collections
import os
import re
import sys
from pathlib import Path

SKIPPED_BENCHMARKS = ("LU",)
_F_DIRECTIVE = re.compile(r"^[!cC*]\$omp\s", re.I)
_F_CONTINUATION = re.compile(r"^[!cC*]\$omp&", re.I)
_F_DO = re.compile(r"^[!cC*]\$omp\s+(parallel\s+)?do\b", re.I)
_F_END = re.compile(r"^[!cC*]\$omp\s+end\s+(parallel\s+do|do|single|sections|workshare)\b"
                    r"(\s+nowait)?", re.I)
_F_BARRIER = re.compile(r"^[!cC*]\$omp\s+(barrier|end\s+parallel\s*$|end\s+parallel\s+[^d]|"
                        r"parallel(?!\s+do))", re.I)
_C_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+omp[ \t]+(.*)$")
_STATIC = re.compile(r"schedule\s*\(\s*static\s*(,[^)]*)?\)", re.I)
_SCHEDULE = re.compile(r"schedule\s*\(", re.I)
_ORDERED = re.compile(r"\bordered\b", re.I)
_NOWAIT = re.compile(r"\bnowait\b", re.I)


def _c_runtime(line: str) -> str:
    """A `for` pragma with schedule(static…) replaced, or schedule(runtime) added after `for`."""
    if _SCHEDULE.search(line):
        return _STATIC.sub("schedule(runtime)", line)
    return re.sub(r"\bfor\b", "for schedule(runtime)", line, count=1)


def _decide(text: str, after_nowait: bool, ends_nowait: bool) -> str:
    """'rewritten', 'kept: …' or 'asks for the runtime already'."""
    if _ORDERED.search(text):
        return "kept: ordered"
    if ends_nowait:
        return "kept: ends nowait"
    if after_nowait:
        return "kept: follows a nowait loop"
    if _SCHEDULE.search(text) and not _STATIC.search(text):
        return "not static"
    return "rewritten"


def _fortran_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line ranges of every directive with its continuation lines."""
    blocks, i = [], 0
    while i < len(lines):
        if _F_DIRECTIVE.match(lines[i]):
            j = i + 1
            while j < len(lines) and _F_CONTINUATION.match(lines[j]):
                j += 1
            blocks.append((i, j))
            i = j
        else:
            i += 1
    return blocks


def rewrite_fortran(text: str) -> tuple[str, collections.Counter]:
    """The rewritten source and a count of the decisions (see the module's comment)."""
    lines = text.split("\n")
    blocks = _fortran_blocks(lines)
    heads = [lines[a] for a, _ in blocks]
    counts: collections.Counter = collections.Counter()
    rewritten: dict[int, list[str]] = {}  # first line of a block -> its new lines
    after_nowait = False
    for n, (a, b) in enumerate(blocks):
        head = heads[n]
        if _F_DO.match(head):
            combined = bool(_F_DO.match(head).group(1))
            ends_nowait = not combined and _ends_nowait_mid_region(heads, n)
            decision = _decide("\n".join(lines[a:b]), after_nowait and not combined, ends_nowait)
            counts[decision] += 1
            if decision == "rewritten":
                rewritten[a] = _fortran_runtime(lines[a:b])
            if not combined and _explicit_end(heads, n) is None:
                after_nowait = False  # the loop's implied barrier
        elif _F_END.match(head):
            after_nowait = bool(_F_END.match(head).group(2))
        elif _F_BARRIER.match(head):
            after_nowait = False
    out, ends = [], {a: b for a, b in blocks}
    i = 0
    while i < len(lines):
        if i in rewritten:
            out += rewritten[i]
            i = ends[i]
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out), counts


def _fortran_runtime(block: list[str]) -> list[str]:
    """A loop directive's lines with schedule(static…) taken out and a continuation line
    `!$omp& schedule(runtime)` added: fixed-form source ends at column 72, and a clause added
    to a full line would be cut off."""
    sentinel = block[0][:5]  # !$omp, c$omp or *$omp, as the directive spells it
    return [_STATIC.sub("", line) for line in block] + [f"{sentinel}& schedule(runtime)"]


def _explicit_end(heads: list[str], n: int) -> int | None:
    """Index of the `end do` closing loop n, if it has one (before the next loop)."""
    for k in range(n + 1, len(heads)):
        if _F_DO.match(heads[k]):
            return None
        end = _F_END.match(heads[k])
        if end and end.group(1).lower().replace(" ", "") in ("do", "paralleldo"):
            return k
    return None


def _ends_nowait_mid_region(heads: list[str], n: int) -> bool:
    """Loop n ends `nowait` and the region goes on before a barrier (a nowait loop right
    before `end parallel` or a barrier changes nothing)."""
    k = _explicit_end(heads, n)
    if k is None or not _F_END.match(heads[k]).group(2):
        return False
    return k + 1 >= len(heads) or not _F_BARRIER.match(heads[k + 1]) or \
        _F_DO.match(heads[k + 1]) is not None


def rewrite_c(text: str) -> tuple[str, collections.Counter]:
    """The C counterpart: `for` pragmas, nowait in the pragma itself."""
    counts: collections.Counter = collections.Counter()
    out, after_nowait = [], False
    for line in text.split("\n"):
        m = _C_PRAGMA.match(line)
        words = m.group(1) if m else ""
        if m and re.match(r"(parallel\s+)?for\b", words) and not line.rstrip().endswith("\\"):
            combined = words.startswith("parallel")
            ends_nowait = bool(_NOWAIT.search(words))
            decision = _decide(words, after_nowait and not combined, ends_nowait)
            counts[decision] += 1
            if decision == "rewritten":
                line = _c_runtime(line)
            after_nowait = ends_nowait if not combined else after_nowait
        elif m and re.match(r"(barrier|parallel)\b", words):
            after_nowait = False
        out.append(line)
    return "\n".join(out), counts


def rewrite_tree(root: Path) -> dict[str, collections.Counter]:
    """Rewrites every benchmark's .f and .c files in place (not LU, sys, common, config)."""
    report = {}
    for folder, _, names in os.walk(root):
        parts = Path(folder).relative_to(root).parts
        if not parts or parts[0] in SKIPPED_BENCHMARKS + ("sys", "common", "config", "bin"):
            continue
        for name in sorted(names):
            path = Path(folder) / name
            rewrite = {".f": rewrite_fortran, ".c": rewrite_c}.get(path.suffix)
            if rewrite is None:
                continue
            text, counts = rewrite(path.read_text())
            if counts:
                path.write_text(text)
                report[str(path.relative_to(root))] = counts
    return report


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help") or not Path(argv[0]).is_dir():
        print(__doc__, file=sys.stderr)
        return 2
    report = rewrite_tree(Path(argv[0]))
    total: collections.Counter = collections.Counter()
    for path, counts in sorted(report.items()):
        total.update(counts)
        print(f"{path}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("all: " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
