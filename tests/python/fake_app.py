"""A stand-in for apps/aloe-app-<workload>: same flags, one JSON record, no real work.

Times are synthetic and deterministic: a base step time (--base-ms, default 10, divided by
the threads) times a per-schedule factor, plus the injected delay (--noise-us) on the steps a
fixed pattern picks with probability --noise-p, plus a share of a --background duty. Its
first argument, --fake-workload NAME, is set by the wrapper scripts the tests write.

`--runtime aloe --schedule adaptive[,search=…]` acts like the adaptive schedule: probes
static, then dynamic, walks fs up from 0.5 in 0.1 steps through the staggered bowl (minimum
at fs=0.9) and converges on fs=0.9 at invocation 8; its record gains a `tuning` list. Each
invocation costs what a fixed run at that fs costs, so the timed steps include the search's
cost when warmup + steps is short.

`--runtime libgomp|libomp --schedule runtime` reads OMP_SCHEDULE (default dynamic,1) as the
run-sched-var and records it (`runtime_schedule`); under the fake `aloe run`
(FAKE_ALOE_INTERPOSER set) the record names the interposer and ALOE_OMP_SCHEDULE, and a `forward`
run costs 0.4% more than the same run-sched-var on plain libgomp.

`--fake-workload jacobi3d-mpi` (under fake_mpirun.py, which sets FAKE_MPI_RANKS=R) plays all R
ranks of the MPI workload: the record gains `mpi` and `ranks` (per rank compute_s, wait_s and
step_s per timed step; `--heavy-rank R:F` makes rank R's compute F times longer, the others
wait for it), step_s is the slowest rank's, and with FAKE_LD_PRELOAD=…/libaloe-mpi.so and
ALOE_MPI_STATS=PATTERN every rank writes its statistics file (%r: the rank) with slack,
communication and predictor fields (FAKE_MPI_OLD_STATS=1: only today's call rows;
FAKE_MPI_NO_STATS_RANK=R: rank R writes none; FAKE_MPI_WRONG_RANKS=1: the record's mpi.ranks
is one too many). `--json FILE` writes the record there. With `--runtime aloe` and
ALOE_STATS=PATTERN every rank also writes its loop statistics (write_loop_stats: a per-step
site and a once-only one; with one thread every loop is serial, as aloe's are; a `slack` policy
where the schedule asks for slack and libaloe-mpi is "preloaded", lowering the fraction on the
ranks that wait; FAKE_NO_LOOP_STATS_RANK=R: rank R writes none).

Environment (each names runs as "runtime:schedule", several separated by ';'):
  FAKE_APP_FAIL          exit 1 with a message      FAKE_APP_BAD_CHECKSUM  wrong checksum_bits
  FAKE_APP_WRONG_LIB     report the other OpenMP library
  FAKE_APP_INTERRUPT     send SIGINT to the parent (as Ctrl-C would) and hang until killed
  FAKE_APP_LOG           append this call's arguments (JSON, one line) to that file
"""
import json
import os
import signal
import sys
import time
import zlib

VALUE_FLAGS = {"--runtime", "--schedule", "--threads", "--json", "--noise-p", "--noise-us",
               "--noise-core", "--noise-seed", "--background", "--steps", "--warmup",
               "--base-ms", "--fake-workload", "--bind", "--check", "--heavy-rank", "--n",
               "--decomp", "--mode"}
FACTORS = {"libgomp:static": 1.00, "libgomp:guided": 0.96, "libgomp:dynamic,1": 1.30,
           "libomp:guided": 0.98, "tbb:affinity": 1.02, "aloe:static": 1.00}


def flags(argv):
    out, i = {}, 0
    while i < len(argv):
        word = argv[i]
        if word in VALUE_FLAGS:
            out[word] = argv[i + 1]
            i += 2
        elif word.startswith("--") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            out[word] = argv[i + 1]  # a workload flag
            i += 2
        else:
            out[word] = True
            i += 1
    return out


def listed(variable, label):
    return label in os.environ.get(variable, "").split(";")


def factor(runtime, schedule):
    label = f"{runtime}:{schedule}"
    if label in FACTORS:
        return FACTORS[label]
    if schedule.startswith(("hybrid", "staggered")) and "fs=" in schedule:
        fs = float(schedule.split("fs=")[1].split(",")[0])
        # a bowl with its minimum at fs=0.8 for hybrid, 0.9 for staggered
        centre = 0.8 if schedule.startswith("hybrid") else 0.9
        return 0.90 + 0.5 * (fs - centre) ** 2
    return 1.0 + (zlib.crc32(label.encode()) % 100) / 1000


ADAPTIVE_CHUNK = 4
# (schedule, fs, chunk) of the adaptive fake's invocations 1, 2, …; after the walk it stays.
ADAPTIVE_WALK = ([("static", 1.0, 0), (f"dynamic,chunk={ADAPTIVE_CHUNK}", 0.0, ADAPTIVE_CHUNK)]
                 + [(f"staggered,fs={fs:g},chunk={ADAPTIVE_CHUNK}", fs, ADAPTIVE_CHUNK)
                    for fs in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)])
ADAPTIVE_CHOSEN = 6  # index into ADAPTIVE_WALK: fs=0.9, the bowl's minimum
MAX_TUNING_STEPS = 256


def adaptive_plan(invocations):
    """The schedule of each invocation and the tuning object's summary fields."""
    walk = [ADAPTIVE_WALK[i] if i < len(ADAPTIVE_WALK) else ADAPTIVE_WALK[ADAPTIVE_CHOSEN]
            for i in range(invocations)]
    converged = invocations >= len(ADAPTIVE_WALK)
    state = "converged" if converged else "probing" if invocations <= 2 else "searching"
    return walk, {"state": state, "chosen": walk[-1][0] if not converged
                  else ADAPTIVE_WALK[ADAPTIVE_CHOSEN][0],
                  "converged_at": len(ADAPTIVE_WALK) if converged else -1}


def main(argv):
    if os.environ.get("FAKE_APP_LOG"):
        with open(os.environ["FAKE_APP_LOG"], "a") as f:
            f.write(json.dumps(argv) + "\n")
    f = flags(argv)
    workload = f.get("--fake-workload", "fake")
    runtime, schedule = f.get("--runtime", "aloe"), f.get("--schedule", "static")
    threads = int(f.get("--threads", 2))
    label = f"{runtime}:{schedule}"
    if listed("FAKE_APP_FAIL", label):
        print(f"fake app: told to fail ({label})", file=sys.stderr)
        return 1
    if listed("FAKE_APP_INTERRUPT", label):
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(30)
    steps, warmup = int(f.get("--steps", 20)), int(f.get("--warmup", 2))
    base = float(f.get("--base-ms", 10)) / 1e3
    step = base if runtime == "serial" else base / threads * factor(runtime, schedule)
    p, us = float(f.get("--noise-p", 0)), float(f.get("--noise-us", 0))
    duty = float(f["--background"].split(":")[1]) if "--background" in f else 0.0
    openmp = runtime in ("libgomp", "libomp")
    interposer = os.environ.get("FAKE_ALOE_INTERPOSER") if openmp else None
    aloe_schedule = os.environ.get("ALOE_OMP_SCHEDULE")
    sched_var = os.environ.get("OMP_SCHEDULE") or "dynamic,1"
    if openmp and schedule == "runtime":
        kind, _, chunk = sched_var.removeprefix("nonmonotonic:").partition(",")
        runtime_schedule = {"value": sched_var, "kind": kind,
                            "chunk": int(chunk) if chunk else int(kind != "static"),
                            "source": "OMP_SCHEDULE" if "OMP_SCHEDULE" in os.environ
                            else "default", "OMP_SCHEDULE": os.environ.get("OMP_SCHEDULE")}
        if not interposer or aloe_schedule in ("forward", "program"):
            step = base / threads * factor(runtime, sched_var)
            step *= 1.004 if interposer and aloe_schedule == "forward" else 1
            step *= 0.99 if interposer and aloe_schedule == "program" else 1
        else:
            step = base / threads * factor("aloe-run", aloe_schedule or "program")
    adaptive = runtime == "aloe" and schedule.split(",")[0] == "adaptive"
    walk, tuning = adaptive_plan(warmup + steps) if adaptive else (None, None)
    step_s, loop_s = [], []
    for i in range(warmup + steps):
        if adaptive:
            step = base / threads * factor(runtime, walk[i][0])
        hit = i >= warmup and ((i - warmup) * 37 % 100) / 100 < p  # about p of the steps
        loop_s.append(step * (1 + duty / 2) + (us / 1e6 if hit else 0))
    step_s = loop_s[warmup:]
    bits = format(zlib.crc32(workload.encode()), "016x")
    if listed("FAKE_APP_BAD_CHECKSUM", label):
        bits = "deadbeefdeadbeef"
    library = {"serial": None, "libomp": "libomp.so.5"}.get(runtime, "libgomp.so.1")
    if listed("FAKE_APP_WRONG_LIB", label):
        library = "libgomp.so.1" if runtime == "libomp" else "libomp.so.5"
    record = {
        "workload": workload, "runtime": runtime, "schedule": schedule, "threads": threads,
        "bind": "close", "cpus": list(range(threads)), "openmp_library": library,
        "steps": steps, "warmup": warmup, "total_s": sum(step_s), "step_s": step_s,
        "params": {}, "checksum": 1.0, "checksum_bits": bits,
        "checks": [{"what": "fake", "ok": True, "value": 0, "reference": 0}], "ok": True,
        "noise": {"p": p, "us": us, "core": f.get("--noise-core", "random"),
                  "seed": int(f.get("--noise-seed", 1)), "priority": "normal",
                  "events": 0, "injected_s": 0.0, "background": f.get("--background")},
    }
    if adaptive:
        mode = dict(kv.split("=", 1) for kv in schedule.split(",")[1:]).get("search", "local")
        done = tuning["state"] == "converged"
        record["tuning"] = [{"site": f"{workload}/loop", "mode": mode} | tuning | {
            "reason": "fake: neither neighbour helps" if done else "fake: still searching",
            "searches": 1, "trials": min(len(walk), len(ADAPTIVE_WALK)), "model_fs": 0.9,
            "weighted": False,
            "steps": [{"invocation": i + 1, "schedule": w[0], "fs": w[1], "chunk": w[2],
                       "seconds": s} for i, (w, s) in enumerate(zip(walk, loop_s))
                      ][:MAX_TUNING_STEPS]}]
    if openmp:
        record["interposer"] = ({"library": interposer, "ALOE_OMP_SCHEDULE": aloe_schedule}
                                if interposer else None)
        if schedule == "runtime":
            record["runtime_schedule"] = runtime_schedule
    if "--timeline" in f:
        t, loops = 0.0, []
        for i, s in enumerate(step_s):
            loops.append({"step": i, "start_s": t, "end_s": t + s,
                          "busy_s": [s * (1 - 0.1 * k) for k in range(threads)]})
            t += s
        record["timeline"] = loops
    if os.environ.get("FAKE_MPI_RANKS"):
        add_mpi(record, f, step_s, warmup, int(os.environ["FAKE_MPI_RANKS"]))
    if f.get("--json") == "-":
        print(json.dumps(record))
    elif f.get("--json"):
        with open(f["--json"], "w") as out:
            json.dump(record, out)
    return 0


COMM_S = 0.0002  # the fake's communication per step


def add_mpi(record, f, step_s, warmup, ranks):
    """Plays R ranks: per-rank compute, wait and step times, and each rank's stats file."""
    heavy, _, factor = str(f.get("--heavy-rank", "")).partition(":")
    heavy = int(heavy) if heavy else -1
    factor = float(factor or 1.5) if heavy >= 0 else 1.0
    compute = [[s * (factor if r == heavy else 1.0) * (1 + 0.01 * r) for s in step_s]
               for r in range(ranks)]
    slowest = [max(c[i] for c in compute) for i in range(len(step_s))]
    per_rank = []
    for r in range(ranks):
        wait = [slowest[i] - compute[r][i] + COMM_S for i in range(len(step_s))]
        per_rank.append({"rank": r, "host": "fakehost", "cpus": [r], "threads":
                         record["threads"], "block": [0, 0, r], "compute_s": compute[r],
                         "wait_s": wait, "step_s": [s + COMM_S for s in slowest]})
    record["step_s"] = [s + COMM_S for s in slowest]
    record["total_s"] = sum(record["step_s"])
    record["mpi"] = {"ranks": ranks, "mode": f.get("--mode", "thread0"),
                     "decomposition": f.get("--decomp", "z"), "process_grid": [1, 1, ranks],
                     "heavy_rank": heavy, "heavy_factor": factor, "library": "Fake MPI 1.0",
                     "thread_level": "funneled"}
    record["ranks"] = per_rank
    if os.environ.get("FAKE_MPI_WRONG_RANKS"):
        record["mpi"]["ranks"] = ranks + 1
    if os.environ.get("ALOE_STATS") and record["runtime"] == "aloe":
        write_loop_stats(os.environ["ALOE_STATS"], record, per_rank, warmup)
    pattern = os.environ.get("ALOE_MPI_STATS")
    if not pattern or not os.environ.get("FAKE_LD_PRELOAD", "").endswith("libaloe-mpi.so"):
        return
    for r, rank in enumerate(per_rank):
        if os.environ.get("FAKE_MPI_NO_STATS_RANK") == str(r):
            continue
        wait = sum(rank["wait_s"])
        row = {"call": "MPI_Allreduce", "kind": "collective", "site": "app+0x1234",
               "calls": len(rank["wait_s"]) + warmup, "time_s": wait,
               "max_s": max(rank["wait_s"])}
        if not os.environ.get("FAKE_MPI_OLD_STATS"):
            comm = COMM_S * len(rank["wait_s"])
            row |= {"path": "9e3779b9", "slack_s": wait - comm, "comm_s": comm,
                    "predictors": {p: {"predictions": len(rank["wait_s"]),
                                       "error_of_slack": e, "error_of_interval": e / 10}
                                   for p, e in (("last", 0.1 * (r + 1)), ("median", 0.05),
                                                ("type", 0.2), ("naive", -1))}}
        init = {"call": "MPI_Init", "kind": "lifetime", "site": "app+0x10", "calls": 1,
                "time_s": 5.0, "max_s": 5.0}
        data = {"tool": "libaloe-mpi", "pid": 1000 + r, "rank": r, "size": ranks,
                "mpi_library": "Fake MPI 1.0", "calibration": {}, "calls": [init, row]}
        with open(pattern.replace("%r", str(r)), "w") as out:
            json.dump(data, out)


def slack_asked(schedule):
    """Whether aloe would give this schedule a slack policy (docs/mpi.md)."""
    keys = schedule.split(",")
    return "slack=on" in keys or (keys[0] == "adaptive" and "slack=off" not in keys)


def fake_fd(schedule):
    """The dynamic fraction a schedule (or the fake adaptive's choice) runs."""
    kind = schedule.split(",")[0]
    if "fs=" in schedule:
        return round(1 - float(schedule.split("fs=")[1].split(",")[0]), 6)
    return {"static": 0.0, "adaptive": 0.1}.get(kind, 1.0)


def write_loop_stats(pattern, record, per_rank, warmup):
    """Every rank's ALOE_STATS file (the fields of src/loop/loop_stats.cpp): the per-step site
    `jacobi3d-mpi/planes` and a once-only `jacobi3d-mpi/init` (5 chunks). A rank that waits
    (not the slowest) and has a slack policy lowers fd to a quarter after the first
    invocation; chunks per invocation are 100 × the fraction that ran."""
    schedule, threads = record["schedule"], record["threads"]
    n = warmup + len(per_rank[0]["wait_s"])
    policy = slack_asked(schedule) and os.environ.get("FAKE_LD_PRELOAD", "").endswith(
        "libaloe-mpi.so")
    for r, rank in enumerate(per_rank):
        if os.environ.get("FAKE_NO_LOOP_STATS_RANK") == str(r):
            continue
        slack = sum(w - COMM_S for w in rank["wait_s"]) / len(rank["wait_s"])
        waits = slack > 1e-9
        before = fake_fd(schedule)
        after = before / 4 if policy and waits else before
        chunks = (0 if threads == 1 else
                  round(100 * before) + (n - 1) * round(100 * (after if policy else before)))

        def site(name, invocations, chunks, total_s):
            each = [chunks // threads + (chunks % threads if t == 0 else 0)
                    for t in range(threads)]
            parallel = threads > 1
            return {"site": name, "schedule": schedule,
                    "invocations": invocations if parallel else 0,
                    "serial_invocations": 0 if parallel else invocations,
                    "empty_invocations": 0, "iterations": 48 * invocations,
                    "total_s": total_s if parallel else 0, "last_s": 0.001,
                    "imbalance_last": 1.0, "imbalance_mean": 1.0, "last": [],
                    "total": [{"thread": t, "static_s": 0.001, "dynamic_s": 0.0001,
                               "wait_s": 0.0, "iterations": 48, "chunks": c,
                               "steals": c // 10} for t, c in enumerate(each)]
                    if parallel else []}

        planes = site("jacobi3d-mpi/planes", n, chunks, sum(rank["compute_s"]))
        if policy and threads > 1:
            fd_mean = (before + (n - 1) * after) / n
            planes["policies"] = [{"name": "slack", "state": "acting", "choice": schedule,
                                   "threads": threads, "slack": {
                "call": "MPI_Allreduce at app+0x1234", "planned": n,
                "lowered": n - 1 if waits and before > 0 else 0,
                "predicted_s": slack * 0.9, "actual_s": slack,
                "predicted_mean_s": slack * 0.9, "actual_mean_s": slack,
                "fd_before": before, "fd_after": after, "fd_before_mean": before,
                "fd_after_mean": fd_mean,
                "guard": "Eq. 4.11: fake" if waits else "no slack predicted"}}]
        init = site("jacobi3d-mpi/init", 1, 5 if threads > 1 else 0, 1e-5)
        data = {"aloe_version": "fake", "sites": [init, planes], "counters": {},
                "counter_samples": []}
        with open(pattern.replace("%r", str(r)), "w") as out:
            json.dump(data, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
