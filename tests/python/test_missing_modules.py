"""A Python without numpy or matplotlib gets one line naming the module, not a traceback."""
import os
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "bench" / "harness"


def test_a_python_without_numpy_is_told_what_to_install():
    # -S leaves out every site-packages folder, where pip and Debian put numpy; the standard
    # library (argparse, tomllib) is still there.
    env = dict(os.environ, PYTHONPATH=str(HARNESS))
    r = subprocess.run([sys.executable, "-S", "-m", "aloe_harness", "bench", "--help"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "needs the Python module 'numpy'" in r.stderr
    assert "scripts/install-deps.sh" in r.stderr
    assert "Traceback" not in r.stderr
