"""bench/harness/aloe_harness/files.py: result files whole or not at all, never written
through a symbolic link."""
from __future__ import annotations

import os
import stat

import pytest

from aloe_harness import files


def test_writes_text_with_the_shared_mode(tmp_path):
    target = tmp_path / "summary.md"
    old = os.umask(0o022)
    try:
        files.write_text(target, "hello\n")
    finally:
        os.umask(old)
    assert target.read_text() == "hello\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.md"]


def test_a_symlink_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "results.csv"
    link.symlink_to(victim)
    files.write_csv(link, ["a", "b"], [{"a": 1, "b": 2}])
    assert victim.read_text() == "precious"
    assert not link.is_symlink()
    assert link.read_text().splitlines() == ["a,b", "1,2"]


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "machine.json"
    target.write_text("old")

    def fail(f):
        f.write("half of it")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        files.write_with(target, fail)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["machine.json"]


def test_replacing_changes_the_inode_so_readers_keep_the_old_text(tmp_path):
    target = tmp_path / "runs.jsonl"
    target.write_text("first\n")
    with open(target) as reader:
        files.write_text(target, "second\n")
        assert reader.read() == "first\n"
    assert target.read_text() == "second\n"
