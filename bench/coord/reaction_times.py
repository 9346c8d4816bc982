"""How fast aloed reacts (issue 18's targets: each under 1 s).

    python3 bench/coord/reaction_times.py --aloe build/release/tools/aloe/aloe \
        --program build/release/tests/coord/aloe_coord_region_team_sizes --reps 20 --out DIR

Three reactions, each measured N times on a daemon of its own (a private socket):
- join: a new client's hello to its first allocation (a client speaking the protocol from
  here, so the time is the daemon's and the socket's, nothing else);
- reclaim: SIGKILL of one of two clients to the survivor receiving its whole share
  (pushed by the daemon; the victim says no goodbye);
- fallback: the daemon killed (SIGKILL) under a real OpenMP program under `aloe run` to that
  program's first region at its own thread count again (the program logs each change of
  team size with CLOCK_MONOTONIC, the clock time.monotonic() reads).
Writes times.csv (one row per measurement) and result.md (median, p90, max per reaction).
"""
import argparse
import csv
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from protocol import connect, hello
from protocol import next_allocation as allocation


class Daemon:
    def __init__(self, aloe, cores):
        self.dir = tempfile.mkdtemp(prefix="aloe-reaction-")
        self.socket = os.path.join(self.dir, "aloed.sock")
        self.env = dict(os.environ, ALOE_DAEMON_SOCKET=self.socket)
        self.aloe = aloe
        r = subprocess.run([aloe, "daemon", "start", "--cores", str(cores), "--no-background-load"],
                           env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"cannot start aloed: {r.stderr}")
        self.pid = int(open(self.socket + ".pid").read())

    def stop(self):
        subprocess.run([self.aloe, "daemon", "stop"], env=self.env, capture_output=True)


def measure_join(aloe):
    d = Daemon(aloe, 4)
    try:
        s = connect(d.socket)
        t0 = time.monotonic()
        s.send(hello(4))
        got = allocation(s, 5)
        t1 = time.monotonic()
        s.close()
        return t1 - t0 if got else None
    finally:
        d.stop()


def measure_reclaim(aloe):
    d = Daemon(aloe, 4)
    try:
        a = connect(d.socket)
        a.send(hello(4))
        allocation(a, 5)
        # The victim is another process: the daemon must see a pid exit, not a socket close.
        victim = subprocess.Popen([sys.executable, __file__, "--victim", d.socket], stdout=subprocess.PIPE)
        victim.stdout.readline()  # "ready": registered
        while allocation(a, 5) != 2:
            pass
        t0 = time.monotonic()
        os.kill(victim.pid, signal.SIGKILL)
        while (n := allocation(a, 5)) not in (4, None):
            pass
        t1 = time.monotonic()
        victim.wait()
        a.close()
        return t1 - t0 if n == 4 else None
    finally:
        d.stop()


def measure_fallback(aloe, program):
    d = Daemon(aloe, 2)
    try:
        env = dict(d.env, OMP_NUM_THREADS="4", ALOE_DAEMON="on")
        p = subprocess.Popen([aloe, "run", "--summary", "none", "--", program, "6", "log"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        # The program logs "size <n> at <t>" at each change: wait until it runs 2 (the daemon's).
        for line in p.stdout:
            if line.startswith("size 2 "):
                break
        t0 = time.monotonic()
        os.kill(d.pid, signal.SIGKILL)
        back = None
        for line in p.stdout:
            if line.startswith("size 4 "):
                back = float(line.split()[3])
                break
        p.kill()
        p.communicate()
        return back - t0 if back is not None else None
    finally:
        subprocess.run(["rm", "-rf", d.dir])


def victim(path):
    s = connect(path)
    s.send(hello(4))
    allocation(s, 5)
    print("ready", flush=True)
    time.sleep(60)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--victim":
        return victim(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aloe", required=True)
    ap.add_argument("--program", required=True, help="tests/coord's region_team_sizes")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine-label", default="")
    a = ap.parse_args()
    if a.reps < 1:
        sys.exit("--reps must be at least 1")
    out = Path(a.out)
    if out.exists() and any(out.iterdir()):
        sys.exit(f"{out} is not empty; not overwriting it")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for rep in range(a.reps):  # interleaved: one of each per repetition
        for name, fn in (("join", lambda: measure_join(a.aloe)), ("reclaim", lambda: measure_reclaim(a.aloe)),
                         ("fallback", lambda: measure_fallback(a.aloe, a.program))):
            t = fn()
            rows.append({"reaction": name, "rep": rep, "seconds": "" if t is None else f"{t:.6f}"})
    with open(out / "times.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["reaction", "rep", "seconds"])
        w.writeheader()
        w.writerows(rows)
    lines = ["# aloed reaction times", "",
             f"Command: `python {' '.join(sys.argv)}`  ", f"Machine: {a.machine_label or os.uname().nodename}, "
             f"{len(os.sched_getaffinity(0))} CPUs, Linux {os.uname().release}", "",
             "| reaction | n | failed | median ms | p90 ms | max ms | target |", "|---|---:|---:|---:|---:|---:|---|"]
    for name in ("join", "reclaim", "fallback"):
        ok = sorted(float(r["seconds"]) for r in rows if r["reaction"] == name and r["seconds"])
        failed = sum(1 for r in rows if r["reaction"] == name and not r["seconds"])
        if ok:
            p90 = ok[min(len(ok) - 1, int(0.9 * len(ok)))]
            lines.append(f"| {name} | {len(ok)} | {failed} | {statistics.median(ok) * 1e3:.2f} | {p90 * 1e3:.2f} | "
                         f"{ok[-1] * 1e3:.2f} | < 1000 ms: {'met' if ok[-1] < 1 and not failed else 'NOT met'} |")
        else:
            lines.append(f"| {name} | 0 | {failed} | | | | NOT met |")
    (out / "result.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
