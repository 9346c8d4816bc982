"""The node daemon as its users meet it, with the real binaries.

    python3 daemon_scenarios.py <aloe tool> <OpenMP program> [scenario ...] [--native-tasks PATH]

The program is region_team_sizes (this folder): it runs short regions for N seconds and
prints the team sizes it saw. Every scenario uses a daemon socket of its own in a fresh
folder (ALOE_DAEMON_SOCKET), so scenarios and test runs never meet. Waits are for markers
or states with a deadline, never fixed sleeps that decide a result: a slow machine is slower,
not a failure. Exit status 0 when every check holds; each failure is printed.

Scenarios: cli, old_daemon, share, fallback, run_daemon, daemon_dies, client_killed, top, shrink_mid_loop,
native_tasks (needs --native-tasks PATH).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE_S = 30
ALOE, PROGRAM = sys.argv[1], sys.argv[2]
NATIVE_TASKS = None  # --native-tasks PATH: the aloe-native task program (native_tasks.cpp)
if "--native-tasks" in sys.argv:
    at = sys.argv.index("--native-tasks")
    NATIVE_TASKS = sys.argv[at + 1]
    del sys.argv[at:at + 2]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what, flush=True)


def wait_until(predicate, what, deadline=DEADLINE_S):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    check(False, "timed out waiting for " + what)
    return None


class Scene:
    """A fresh folder, its daemon socket, and the environment that points at it."""

    def __init__(self, name):
        self.dir = tempfile.mkdtemp(prefix=f"aloe-coord-{name}-")
        self.socket = os.path.join(self.dir, "aloed.sock")
        self.env = dict(os.environ, ALOE_DAEMON_SOCKET=self.socket)
        self.env.pop("ALOE_DAEMON", None)

    def aloe(self, *args, env=None, timeout=DEADLINE_S):
        return subprocess.run([ALOE, *args], env=env or self.env, capture_output=True, text=True,
                              timeout=timeout)

    def status(self):
        r = self.aloe("daemon", "status", "--json")
        return json.loads(r.stdout) if r.returncode == 0 else None

    def program(self, seconds, threads, env=None, announce=True):
        e = dict(env or self.env, OMP_NUM_THREADS=str(threads))
        args = [ALOE, "run", "--summary", "none", "--", PROGRAM, str(seconds)] + (["announce"] if announce else [])
        p = subprocess.Popen(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if announce:
            line = p.stdout.readline()
            check(line.strip() == "running", f"the program announces its first region (got {line!r})")
        return p

    def close(self):
        if os.path.exists(self.socket):
            self.aloe("daemon", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)


def team_sizes(output):
    """{size: count} from the program's last line."""
    line = [l for l in output.splitlines() if l.startswith("team sizes:")]
    if not line:
        return {}
    return {int(k): int(v) for k, v in (w.split(":") for w in line[-1].split()[2:])}


def scenario_cli():
    s = Scene("cli")
    try:
        r = s.aloe("daemon", "start", "--cores", "4", "--no-background-load")
        check(r.returncode == 0 and "aloed started" in r.stdout, f"start: {r.stdout} {r.stderr}")
        st = s.status()
        check(st is not None and st["cores"] == 4 and st["clients"] == [], f"status of a fresh daemon: {st}")
        r = s.aloe("daemon", "start")
        check(r.returncode == 0 and "already serves" in r.stdout, f"start twice: {r.stdout} {r.stderr}")
        r = s.aloe("daemon", "policy", "equipartition")
        check(r.returncode == 0 and s.status()["policy"] == "equipartition", f"policy: {r.stdout} {r.stderr}")
        for bad, code, words in [(("daemon", "policy", "fastest"), 2, "unknown policy"),
                                 (("daemon", "start", "--cores", "0"), 2, "--cores"),
                                 (("daemon", "steer", "1", "2"), 1, "no client with pid 1"),
                                 (("daemon", "steer", "x", "2"), 2, "PID"),
                                 (("daemon", "frobnicate"), 2, "unknown daemon command"),
                                 (("top", "--interval", "0"), 2, "--interval")]:
            r = s.aloe(*bad)
            check(r.returncode == code and words in r.stderr, f"{bad}: exit {r.returncode}, {r.stderr!r}")
        r = s.aloe("top", "--once")
        check(r.returncode == 0 and "4 cores" in r.stdout, f"top --once: {r.stdout} {r.stderr}")
        r = s.aloe("daemon", "stop")
        check(r.returncode == 0 and not os.path.exists(s.socket), f"stop: {r.stdout} {r.stderr}")
        r = s.aloe("daemon", "status")
        check(r.returncode == 1 and "no aloed answers" in r.stderr, f"status without a daemon: {r.stderr}")
        # A daemon killed with SIGKILL leaves its socket; the next start replaces it.
        s.aloe("daemon", "start")
        pid = s.status()["pid"]
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode != 0, "aloed to die")
        check(os.path.exists(s.socket), "a killed daemon leaves its socket file")
        r = s.aloe("daemon", "start")
        check(r.returncode == 0 and "aloed started" in r.stdout, f"start over a stale socket: {r.stdout} {r.stderr}")
        # A socket path longer than a Unix socket allows is refused with the reason.
        r = s.aloe("daemon", "start", "--socket", "/tmp/" + "x" * 120)
        check(r.returncode == 1 and "longer than a Unix socket allows" in r.stderr, f"long path: {r.stderr}")
    finally:
        s.close()


def scenario_share():
    """Two programs that would each run 4 threads share a daemon's 4 cores: 2 each while
    both run; one alone runs 4."""
    s = Scene("share")
    try:
        s.aloe("daemon", "start", "--cores", "4", "--no-background-load")
        a = s.program(6, 4)
        wait_until(lambda: (st := s.status()) and len(st["clients"]) == 1, "the first program to register")
        b = s.program(3, 4)
        st = wait_until(lambda: (st := s.status()) and len(st["clients"]) == 2 and st, "both to register")
        if st:
            check(sorted(c["threads"] for c in st["clients"]) == [2, 2], f"two programs on 4 cores: {st['clients']}")
            check(all(c["kind"] == "openmp" and c["own_threads"] == 4 for c in st["clients"]), f"kinds: {st['clients']}")
        out_b, err_b = b.communicate(timeout=DEADLINE_S)
        out_a, err_a = a.communicate(timeout=DEADLINE_S)
        sizes_a, sizes_b = team_sizes(out_a), team_sizes(out_b)
        check(sizes_b.get(2, 0) > 0, f"the second program ran regions of 2 threads: {sizes_b} {err_b}")
        check(sizes_a.get(4, 0) > 0 and sizes_a.get(2, 0) > 0,
              f"the first ran 4 alone and 2 while sharing: {sizes_a} {err_a}")
        check(max(sizes_a) <= 4 and max(sizes_b) <= 4, "no program ran more threads than it asked for")
        check(s.status()["clients"] == [], "both programs left the daemon's table")
    finally:
        s.close()


def scenario_shrink_mid_loop():
    """A program inside one long dynamic loop (NPB EP's shape) gives a core back while the
    loop runs: its second thread leaves after its chunk once a second program joins, instead
    of at the loop's end (SCAF waited for the region to end)."""
    s = Scene("shrink")
    try:
        s.aloe("daemon", "start", "--cores", "2", "--no-background-load")
        e = dict(s.env, OMP_NUM_THREADS="2")
        a = subprocess.Popen([ALOE, "run", "--summary", "none", "--", PROGRAM, "4", "long"], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = a.stdout.readline()
        check(line.strip() == "running", f"the long loop started (got {line!r})")
        wait_until(lambda: (st := s.status()) and len(st["clients"]) == 1, "the long loop's program to register")
        joined_at = time.clock_gettime(time.CLOCK_MONOTONIC)
        b = s.program(2, 2)
        wait_until(lambda: (st := s.status()) and sorted(c["threads"] for c in st["clients"]) == [1, 1],
                   "one core each")
        out_b, _ = b.communicate(timeout=DEADLINE_S)
        out_a, err_a = a.communicate(timeout=DEADLINE_S)
        threads = {}
        for l in out_a.splitlines():
            if l.startswith("thread "):
                t, rest = l[len("thread "):].split(":", 1)
                threads[int(t)] = (int(rest.split()[0]), float(rest.rsplit(" ", 1)[1]))
        ended = [float(l.split()[-1]) for l in out_a.splitlines() if l.startswith("ended at")]
        check(len(threads) == 2 and ended, f"the long loop's report: {out_a} {err_a}")
        if len(threads) == 2 and ended:
            print(f"thread 1 left {threads[1][1] - joined_at:+.3f} s after the second program started; "
                  f"the loop ended {ended[0] - joined_at:+.3f} s after it", flush=True)
            check(threads[1][0] > 0, f"both threads worked before the second program came: {threads}")
            check(threads[1][1] < joined_at + 1.0,
                  f"thread 1 left the running loop within 1 s of the second program's start "
                  f"(last iteration {threads[1][1] - joined_at:+.3f} s after it): {threads}")
            check(threads[0][1] > joined_at + 1.5 and ended[0] > joined_at + 1.5,
                  f"thread 0 went on with the loop alone: {threads}, ended {ended[0] - joined_at:+.3f} s")
        check(team_sizes(out_b).get(1, 0) > 0, f"the second program ran on the core given back: {out_b}")
    finally:
        s.close()


def scenario_native_tasks():
    """An aloe-native task program (no aloe run) joins a daemon running when it starts, and its
    task pool runs on the share it is given: one slot while an OpenMP program shares 2 cores."""
    check(NATIVE_TASKS is not None, "--native-tasks names the task program")
    if NATIVE_TASKS is None:
        return
    s = Scene("tasks")
    try:
        s.aloe("daemon", "start", "--cores", "2", "--no-background-load")
        a = subprocess.Popen([NATIVE_TASKS, "4"], env=dict(s.env, ALOE_NUM_THREADS="2"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = a.stdout.readline()
        check(line.strip() == "running", f"the task program started (got {line!r})")
        st = wait_until(lambda: (st := s.status()) and len(st["clients"]) == 1 and st, "the task program to register")
        if st:
            c = st["clients"][0]
            check(c["kind"].startswith("aloe") and c["own_threads"] == 2, f"a native client of 2 threads: {c}")
        b = s.program(2, 2)
        wait_until(lambda: (st := s.status()) and sorted(c["threads"] for c in st["clients"]) == [1, 1],
                   "one core each")
        b.communicate(timeout=DEADLINE_S)
        out_a, err_a = a.communicate(timeout=DEADLINE_S)
        line = [l for l in out_a.splitlines() if l.startswith("concurrency seen:")]
        seen = {int(k): int(v) for k, v in (w.split(":") for w in line[-1].split()[2:])} if line else {}
        check(seen.get(2, 0) > 0 and seen.get(1, 0) > 0,
              f"the task pool ran 2 slots alone and 1 while sharing: {seen} {err_a}")
        check(a.returncode == 0, f"the task program exits 0: {a.returncode} {err_a}")
    finally:
        s.close()


def scenario_fallback():
    """No daemon: ALOE_DAEMON=on says so once and runs the program's own count; auto is silent."""
    s = Scene("fallback")
    try:
        on = dict(s.env, ALOE_DAEMON="on")
        p = s.program(0.3, 2, env=on, announce=False)
        out, err = p.communicate(timeout=DEADLINE_S)
        check(p.returncode == 0 and team_sizes(out) and max(team_sizes(out)) == 2, f"own count: {out}")
        check(err.count("W701") == 1 and "no node daemon" in err, f"W701 once: {err!r}")
        p = s.program(0.3, 2, announce=False)
        out, err = p.communicate(timeout=DEADLINE_S)
        check("W70" not in err, f"auto is silent without a daemon: {err!r}")
        # ... unless asked: an info line under its own id (I711), not the warning's.
        p = s.program(0.3, 2, env=dict(s.env, ALOE_VERBOSE="coord"), announce=False)
        out, err = p.communicate(timeout=DEADLINE_S)
        check(err.count("I711") == 1 and "info" in err and "W70" not in err,
              f"auto says I711 once with ALOE_VERBOSE=coord: {err!r}")
        # A socket file nobody serves (a crashed daemon's) is the same as none.
        import socket as sk
        stale = sk.socket(sk.AF_UNIX, sk.SOCK_SEQPACKET)
        stale.bind(s.socket)
        stale.close()
        p = s.program(0.3, 2, env=on, announce=False)
        out, err = p.communicate(timeout=DEADLINE_S)
        check(p.returncode == 0 and "stale" in err, f"a stale socket: {err!r}")
        os.unlink(s.socket)
        r = subprocess.run([ALOE, "run", "--", PROGRAM, "0.1"], env=dict(s.env, ALOE_DAEMON="sometimes"),
                           capture_output=True, text=True, timeout=DEADLINE_S)
        check("W125" in r.stderr, f"a bad ALOE_DAEMON is named: {r.stderr!r}")
    finally:
        s.close()


def scenario_run_daemon():
    """aloe run --daemon starts this user's daemon when none serves, and joins it."""
    s = Scene("rundaemon")
    try:
        e = dict(s.env, OMP_NUM_THREADS="2")
        r = subprocess.run([ALOE, "run", "--daemon", "--summary", "none", "--", PROGRAM, "0.2"], env=e,
                           capture_output=True, text=True, timeout=DEADLINE_S)
        check(r.returncode == 0 and "W70" not in r.stderr and r.stdout.startswith("team sizes:"),
              f"run --daemon: {r.returncode} {r.stdout!r} {r.stderr!r}")
        st = s.status()
        check(st is not None and st["clients"] == [], f"the daemon it started serves on: {st}")
        r = subprocess.run([ALOE, "run", "--daemon", "--daemon", "--", PROGRAM, "0.1"], env=e,
                           capture_output=True, text=True, timeout=DEADLINE_S)
        check(r.returncode == 2 and "given twice" in r.stderr, f"--daemon twice: {r.stderr!r}")
    finally:
        s.close()


def scenario_daemon_dies():
    """The daemon stops while a program shares the node: the program goes back to its own
    count and says so once."""
    s = Scene("dies")
    try:
        s.aloe("daemon", "start", "--cores", "2", "--no-background-load")
        on = dict(s.env, ALOE_DAEMON="on")
        a = s.program(4, 4, env=on)
        wait_until(lambda: (st := s.status()) and len(st["clients"]) == 1, "the program to register")
        # The program reads the daemon's answer at its next poll (every 10 ms from its regions):
        # stopped at once, it could read the answer and the hang-up in one look and never run
        # a region with 2 (it failed so in 6 of 7 runs on a quick VM). Half a second is 50 polls.
        time.sleep(0.5)
        s.aloe("daemon", "stop")
        out, err = a.communicate(timeout=DEADLINE_S)
        sizes = team_sizes(out)
        check(sizes.get(2, 0) > 0 and sizes.get(4, 0) > 0, f"2 under the daemon, then its own 4: {sizes}")
        check(err.count("W703") == 1 and "went away" in err, f"W703 once: {err!r}")
    finally:
        s.close()


def scenario_client_killed():
    """A client killed with SIGKILL has its cores back with the other client at once."""
    s = Scene("killed")
    try:
        s.aloe("daemon", "start", "--cores", "4", "--no-background-load")
        a = s.program(30, 4)
        b = s.program(30, 4)
        wait_until(lambda: (st := s.status()) and sorted(c["threads"] for c in st["clients"]) == [2, 2], "a 2/2 split")
        pids = [c["pid"] for c in s.status()["clients"]]
        os.kill(max(pids), signal.SIGKILL)  # the program itself, not aloe run
        st = wait_until(lambda: (st := s.status()) and len(st["clients"]) == 1 and st["clients"][0]["threads"] == 4 and st,
                        "the survivor to get all 4 cores")
        check(bool(st), "reclaimed after SIGKILL")
        for p in (a, b):
            p.kill()
            p.communicate(timeout=DEADLINE_S)
    finally:
        s.close()


def scenario_top():
    """aloe top in a real terminal (tmux): the client's pid and name appear; q quits."""
    if shutil.which("tmux") is None:
        check(False, "tmux is not installed (scripts/install-deps.sh installs it)")
        return
    s = Scene("top")
    session = "aloe-top-" + str(os.getpid())
    try:
        s.aloe("daemon", "start", "--cores", "2", "--no-background-load")
        a = s.program(20, 2)
        pid = wait_until(lambda: (st := s.status()) and st["clients"] and st["clients"][0]["pid"], "the program to register")
        cmd = f"ALOE_DAEMON_SOCKET={s.socket} {ALOE} top"
        subprocess.run(["tmux", "-L", session, "new-session", "-d", "-s", session, "-x", "140", "-y", "20", cmd], check=True)

        def screen():
            return subprocess.run(["tmux", "-L", session, "capture-pane", "-p", "-t", session],
                                  capture_output=True, text=True).stdout

        # The name is the kernel's (/proc/<pid>/comm): the first 15 bytes of the program's.
        name = os.path.basename(PROGRAM)[:15]
        shown = wait_until(lambda: (t := screen()) and str(pid) in t and name in t and t, "top to show the program")
        check(bool(shown) and "aloe top" in shown and "openmp" in shown, f"top's screen: {shown!r}")
        subprocess.run(["tmux", "-L", session, "send-keys", "-t", session, "q"], check=True)
        wait_until(lambda: subprocess.run(["tmux", "-L", session, "has-session", "-t", session],
                                          capture_output=True).returncode != 0, "q to end aloe top")
        a.kill()
        a.communicate(timeout=DEADLINE_S)
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)
        s.close()


# A daemon of the previous protocol (version 2), as an upgrade leaves one running: it answers
# every record with a version-2 error, as aloed does to a version it does not speak, and
# removes its socket on SIGTERM.
OLD_DAEMON = r"""
import os, signal, socket, struct, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(path)
s.listen(4)
def bye(*_):
    os.unlink(path)
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.recv(256)
    body = struct.pack("=HH96s", 2, 0, b"protocol version 3, this aloed speaks 2")
    c.send(struct.pack("=IHHII", 0x454F4C41, 2, 67, 16 + len(body), 1) + body)
    c.close()
"""


def scenario_old_daemon():
    """status names the two versions; stop stops an older daemon by its process."""
    s = Scene("old_daemon")
    try:
        old = subprocess.Popen([sys.executable, "-c", OLD_DAEMON, s.socket], stdout=subprocess.PIPE, text=True)
        check(old.stdout.readline().strip() == "listening", "the old daemon listens")
        r = s.aloe("daemon", "status")
        check(r.returncode == 1 and "speaks protocol version 2" in r.stderr and "restart" in r.stderr,
              f"status against an old daemon: {r.stderr!r}")
        r = s.aloe("daemon", "stop")
        check(r.returncode == 0 and "sent it SIGTERM" in r.stderr, f"stop an old daemon: {r.returncode} {r.stderr!r}")
        check(old.wait(timeout=DEADLINE_S) == 0 and not os.path.exists(s.socket), "the old daemon ended on SIGTERM")
    finally:
        s.close()


SCENARIOS = {"cli": scenario_cli, "old_daemon": scenario_old_daemon, "share": scenario_share, "fallback": scenario_fallback, "run_daemon": scenario_run_daemon,
             "daemon_dies": scenario_daemon_dies, "client_killed": scenario_client_killed, "top": scenario_top,
             "shrink_mid_loop": scenario_shrink_mid_loop, "native_tasks": scenario_native_tasks}

if __name__ == "__main__":
    for name in sys.argv[3:] or SCENARIOS:
        print("==", name, flush=True)
        SCENARIOS[name]()
    print("FAILED" if failures else "OK", len(failures), "failures")
    sys.exit(1 if failures else 0)
