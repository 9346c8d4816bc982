"""A stand-in for apps/aloe-app-<workload>: same flags, one JSON record, no real work.

Times are synthetic and deterministic: a base step time (--base-ms, default 10, divided by
the threads) times a per-schedule factor, plus the injected delay (--noise-us) on the steps a
fixed pattern picks with probability --noise-p, plus a share of a --background duty. Its
first argument, --fake-workload NAME, is set by the wrapper scripts the tests write.

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
               "--base-ms", "--fake-workload", "--bind", "--check"}
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
    step_s = []
    for i in range(steps):
        hit = (i * 37 % 100) / 100 < p  # a fixed pattern, hit in about p of the steps
        step_s.append(step * (1 + duty / 2) + (us / 1e6 if hit else 0))
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
    if "--timeline" in f:
        t, loops = 0.0, []
        for i, s in enumerate(step_s):
            loops.append({"step": i, "start_s": t, "end_s": t + s,
                          "busy_s": [s * (1 - 0.1 * k) for k in range(threads)]})
            t += s
        record["timeline"] = loops
    if f.get("--json") == "-":
        print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
