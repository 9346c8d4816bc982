"""Result files written whole or not at all (the Python side of src/runtime/output_file.hpp).

The text goes into a new file in the target's folder, which is then renamed over the target:
a reader (or `aloe report` running while `aloe bench` is) sees the old file or the new one,
never a half-written one, and a symbolic link at the target is replaced, never written
through. The append-only runs.jsonl log is the one file written in place.
"""
from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path
from typing import Callable, TextIO


def write_with(path: Path, write: Callable[[TextIO], None], newline: str | None = None) -> None:
    """Calls `write(f)` on a temporary file in `path`'s folder, then renames it to `path`."""
    path = Path(path)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:100]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline=newline) as f:
            write(f)
        os.chmod(temp, 0o644 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: Path, text: str) -> None:
    """`path.write_text(text)`, whole or not at all."""
    write_with(path, lambda f: f.write(text))


def write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    """A CSV file with a header row, whole or not at all."""
    def write(f: TextIO) -> None:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    write_with(path, write, newline="")


def _umask() -> int:
    # os.umask can only be read by setting it; the harness is single-threaded.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
