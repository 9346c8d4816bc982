"""A stand-in for the aloe tool: fixed `info --json` and `noise --json --quick` output.

FAKE_ALOE_NO_NOISE=1 makes `noise` fail as a tool without that subcommand would.
"""
import json
import os
import sys

INFO = {"version": "0.0.0-fake",
        "topology": {"description": "fake: 1 package, 2 cores\n", "cores": 2},
        "capabilities": [{"name": "hardware counters", "available": False}]}
NOISE = {"tool": "aloe noise", "mode": "all-cpus-at-once", "quantum_us": 10, "seconds": 0.5,
         "cpus": [{"method": "fwq", "cpu": 0, "p50_us": 9.6, "p99_us": 15.0, "max_us": 1200.0,
                   "lost_fraction": 0.026},
                  {"method": "fwq", "cpu": 1, "p50_us": 9.7, "p99_us": 14.0, "max_us": 900.0,
                   "lost_fraction": 0.031}]}


def main(argv):
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
