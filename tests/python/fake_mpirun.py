"""A stand-in for OpenMPI's mpirun: `mpirun -np R [options] [-x K=V …] PROG ARGS`.

It checks the options the harness builds as OpenMPI 4 would: without --oversubscribe, R ranks
of PE=T cores each must fit FAKE_MPIRUN_SLOTS (default 2) slots, and `--bind-to core` (not
overload-allowed) needs R × T ≤ slots; as root it wants --allow-run-as-root (FAKE_MPIRUN_ROOT=1
plays root). Then it runs PROG once with FAKE_MPI_RANKS=R (fake_app.py plays every rank), the
-x variables exported (LD_PRELOAD as FAKE_LD_PRELOAD: nothing is really preloaded), and passes
its exit status on. FAKE_MPIRUN_LOG: append its argv (JSON, one line) to that file.
"""
import json
import os
import subprocess
import sys


def main(argv):
    if os.environ.get("FAKE_MPIRUN_LOG"):
        with open(os.environ["FAKE_MPIRUN_LOG"], "a") as f:
            f.write(json.dumps(argv) + "\n")
    opts, env, i = {}, {}, 0
    while i < len(argv) and argv[i].startswith("-"):
        word = argv[i]
        if word in ("--oversubscribe", "--allow-run-as-root"):
            opts[word] = True
            i += 1
        elif word == "-x":
            key, _, value = argv[i + 1].partition("=")
            env["FAKE_LD_PRELOAD" if key == "LD_PRELOAD" else key] = value
            i += 2
        elif word in ("-np", "--map-by", "--bind-to"):
            opts[word] = argv[i + 1]
            i += 2
        else:
            print(f"fake mpirun: unknown option {word}", file=sys.stderr)
            return 1
    program = argv[i:]
    if "-np" not in opts or not program:
        print("fake mpirun: usage: mpirun -np R [options] PROG ARGS", file=sys.stderr)
        return 1
    ranks, slots = int(opts["-np"]), int(os.environ.get("FAKE_MPIRUN_SLOTS", 2))
    pe = int(opts.get("--map-by", "slot:PE=1").partition("PE=")[2] or 1)
    if os.environ.get("FAKE_MPIRUN_ROOT") and "--allow-run-as-root" not in opts:
        print("mpirun has detected an attempt to run as root.", file=sys.stderr)
        return 1
    if "--oversubscribe" not in opts and ranks * pe > slots:
        print(f"There are not enough slots available in the system to satisfy the {ranks} "
              "slots that were requested by the application", file=sys.stderr)
        return 1
    if opts.get("--bind-to") == "core" and ranks * pe > slots:
        print("A request was made to bind to that would result in binding more processes "
              "than cpus on a resource", file=sys.stderr)
        return 1
    p = subprocess.run(program, env=os.environ | env | {"FAKE_MPI_RANKS": str(ranks)})
    return p.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
