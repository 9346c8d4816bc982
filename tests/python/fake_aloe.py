"""A stand-in for the aloe tool: fixed `info --json` and `noise --json --quick` output, and
`run [--schedule S] [--threads N] [--summary …] -- PROG ARGS` as `aloe run` does it
(ALOE_OMP_SCHEDULE, ALOE_NUM_THREADS and OMP_NUM_THREADS set, the exit status passed through),
with the preloaded interposer faked by FAKE_ALOE_INTERPOSER=libaloe-gomp.so (fake_app.py
reports it).

FAKE_ALOE_NO_NOISE=1 makes `noise` fail as a tool without that subcommand would;
FAKE_ALOE_NO_RUN=1 the same for `run`; FAKE_ALOE_NO_PRELOAD=1 runs PROG without the interposer.
"""
import json
import os
import subprocess
import sys

INFO = {"version": "0.0.0-fake",
        "topology": {"description": "fake: 1 package, 2 cores\n", "cores": 2},
        "capabilities": [{"name": "hardware counters", "available": False}]}
NOISE = {"tool": "aloe noise", "mode": "all-cpus-at-once", "quantum_us": 10, "seconds": 0.5,
         "cpus": [{"method": "fwq", "cpu": 0, "p50_us": 9.6, "p99_us": 15.0, "max_us": 1200.0,
                   "lost_fraction": 0.026},
                  {"method": "fwq", "cpu": 1, "p50_us": 9.7, "p99_us": 14.0, "max_us": 900.0,
                   "lost_fraction": 0.031}]}


def run(argv):
    options, i = {"--schedule": "program", "--threads": None, "--summary": "-"}, 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] in ("--help", "-h"):
            print("usage: aloe run [--schedule S] [--threads N] [--summary FILE|-|none] -- PROG")
            return 0
        if argv[i] not in options and argv[i] not in ("--stats", "--trace"):
            print(f"aloe run: unknown option '{argv[i]}'", file=sys.stderr)
            return 2
        options[argv[i]] = argv[i + 1]
        i += 2
    program = argv[i + 1:]
    if not program:
        print("aloe run: no program after --", file=sys.stderr)
        return 2
    env = dict(os.environ, ALOE_OMP_SCHEDULE=options["--schedule"])
    if options["--threads"]:
        env |= {"ALOE_NUM_THREADS": options["--threads"], "OMP_NUM_THREADS": options["--threads"]}
    if not os.environ.get("FAKE_ALOE_NO_PRELOAD"):
        env["FAKE_ALOE_INTERPOSER"] = "libaloe-gomp.so"
    status = subprocess.run(program, env=env).returncode
    if options["--summary"] != "none":
        print("aloe run: fake summary", file=sys.stderr)
    return status


def main(argv):
    if argv[:1] == ["run"] and not os.environ.get("FAKE_ALOE_NO_RUN"):
        return run(argv[1:])
    if argv[:1] == ["info"]:
        print(json.dumps(INFO))
        return 0
    if argv[:1] == ["noise"] and not os.environ.get("FAKE_ALOE_NO_NOISE"):
        print(json.dumps(NOISE))
        return 0
    print(f"aloe: unknown subcommand '{argv[0] if argv else ''}' (see 'aloe --help')",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
