#!/usr/bin/env python3
"""Runs the peers of `aloe sim` (issue 16, part 5) on one bulk-synchronous pattern.

The pattern: P ranks of one core each run S timesteps; a step is W seconds of compute on every
rank, then MPI_Allreduce of one double (8 bytes) by recursive doubling (MPICH's algorithm,
with its extra step before and after for a P that is not a power of two). Noise comes from a
per-rank trace (aloe-noise-trace/1, generated here, seeded: Poisson events per rank, fixed
length): an event that starts while its rank computes delays that compute by its length, and
the compute phase grows as events land in it; an event that starts while the rank is in the
collective costs nothing. The network is LogGP: L, o, g, G.

Peers (built outside the repository, see bench/results/sim-peers-*/README.md):
  smpi              SimGrid SMPI: bench/micro/sim_peers_smpi.c under smpirun, smpi/allreduce:rdb,
                    a flat cluster with link latency L/2 and bandwidth 1/G, smpi/os, ois, or = o;
                    compute by smpi_execute_flops, the noise applied by the program on the
                    simulated clock.
  loggopsim         LogGOPSim (spcl/LogGOPSim) with the per-rank noise patch
                    (--noise-trace-per-rank): the noise is applied by the simulator to each calc.
  loggopsim-static  unpatched LogGOPSim: the noise is folded into each rank's calc lengths in
                    the GOAL file, computed from the trace at the step start times of the
                    analytic model below (all ranks start a step together).
  analytic          sum over steps of (max over ranks of compute + noise) + ceil(log2 P) rounds
                    of L + 2o, step starts synchronous.

Writes into --out: trace.json, pattern.json, peers.csv, per_round.csv (noise-free calibration
of each peer's cost of one recursive-doubling round), command.txt, and per-peer working
folders (GOAL files are deleted after use unless --keep-goal).

    python3 bench/micro/sim_peers.py --smpi-install /usr \\
        --loggopsim-dir <ext>/sim-peers/LogGOPSim/src/LogGOPSim \\
        --loggopsim-pr-dir <ext>/sim-peers/LogGOPSim-pr/src/LogGOPSim \\
        --ranks 1024,2048,4096,8192,10000 --steps 100 --out bench/results/sim-peers-YYYYMMDD
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import re
import shlex
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PS = 10**12  # LogGOPSim and the analytic model count in picoseconds (integers)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smpi-install", default="/usr", help="prefix holding bin/smpicc and bin/smpirun")
    p.add_argument("--loggopsim-dir", help="folder of the unpatched LogGOPSim and txt2bin binaries")
    p.add_argument("--loggopsim-pr-dir", help="folder of LogGOPSim built with the per-rank noise patch")
    p.add_argument("--ranks", default="1024,2048,4096,8192", help="comma-separated rank counts")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--smpi-steps", type=int, help="steps for SMPI if fewer than --steps (slow at scale)")
    p.add_argument("--out", required=True)
    p.add_argument("--peers", default="analytic,smpi,loggopsim,loggopsim-static")
    p.add_argument("--compute-s", type=float, default=1e-3, help="W, compute per step and rank")
    p.add_argument("--noise-rate", type=float, default=1.0, help="Poisson events per second per rank")
    p.add_argument("--noise-len-us", type=float, default=200.0, help="length of every event")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--trace-s", type=float, default=0.25,
                   help="length of the trace (measured_s); keep it fixed across runs that must share a trace")
    p.add_argument("--L-s", type=float, default=1.5e-6)
    p.add_argument("--o-s", type=float, default=0.5e-6)
    p.add_argument("--g-s", type=float, default=1.0e-6)
    p.add_argument("--G-s-per-byte", type=float, default=0.1e-9)
    p.add_argument("--calibrate-ranks", type=int, default=1024, help="noise-free run for per_round.csv (0: none)")
    p.add_argument("--calibrate-steps", type=int, default=10)
    p.add_argument("--timeout", type=int, default=3600, help="seconds per simulator run")
    p.add_argument("--keep-goal", action="store_true")
    a = p.parse_args(argv)
    a.ranks = [int(x) for x in a.ranks.split(",") if x]
    a.peers = [x for x in a.peers.split(",") if x]
    return a


# ---------------------------------------------------------------------------------------------
# trace

def make_trace(ncpus, rate, len_us, measured_s, seed):
    """Poisson events per cpu from one seeded stream, cpu 0 first: the events of cpu r do not
    depend on how many cpus follow, so a trace for the largest P serves every smaller P."""
    rng = random.Random(seed)
    cpus = []
    for c in range(ncpus):
        ev, t = [], 0.0
        while True:
            t += rng.expovariate(rate)
            if t >= measured_s:
                break
            ev.append([round(t * 1e6, 3), len_us])
        cpus.append({"cpu": c, "measured_s": measured_s, "events_us": ev})
    return {"format": "aloe-noise-trace/1", "cpus": cpus}


def events_ps(trace, p):
    return [[(round(s * 1e6), round(l * 1e6)) for s, l in c["events_us"]] for c in trace["cpus"][:p]]


# ---------------------------------------------------------------------------------------------
# analytic model (also gives loggopsim-static its per-step noise)

def calc_noise(ev, cur, start, length):
    """(noise, new cursor) of a compute phase [start, start+length) on one rank."""
    i = cur
    while i < len(ev) and ev[i][0] < start:
        i += 1
    end, noise = start + length, 0
    while i < len(ev) and ev[i][0] < end:
        noise += ev[i][1]
        end += ev[i][1]
        i += 1
    return noise, i


def analytic(evs, steps, w_ps, round_ps, rounds):
    p = len(evs)
    cur = [0] * p
    t, hit_steps = 0, 0
    static = {}  # (rank, step) -> noise ps
    for k in range(steps):
        worst = 0
        for r in range(p):
            e = evs[r]
            if cur[r] < len(e) and e[cur[r]][0] < t + w_ps:  # else no event can land this step
                n, cur[r] = calc_noise(e, cur[r], t, w_ps)
                if n:
                    static[(r, k)] = n
                    worst = max(worst, n)
        hit_steps += worst > 0
        t += w_ps + worst + rounds * round_ps
    return t, hit_steps, static


# ---------------------------------------------------------------------------------------------
# helpers

def timed(cmd, cwd, log, timeout):
    """Runs cmd under nice and /usr/bin/time -v; returns (rc, stdout, wall_s, max_rss_mb, cpu_s)."""
    full = ["nice", "-n", "10", "/usr/bin/time", "-v"] + cmd
    t0 = time.monotonic()
    try:
        pr = subprocess.run(full, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        rc, out, err = pr.returncode, pr.stdout, pr.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), ""
    wall = time.monotonic() - t0
    Path(log).write_text("$ " + shlex.join(full) + "\n--- stdout\n" + out + "\n--- stderr\n" + err)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    rss = int(m.group(1)) / 1024 if m else float("nan")
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", err)
    if m:
        wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", err))
    return rc, out, wall, rss, cpu


def rdb_plan(p):
    """MPICH recursive doubling (SimGrid allreduce__rdb): per rank, the list of phases
    ('send'|'recv'|'sendrecv', peer)."""
    pof2 = 1 << (p.bit_length() - 1)
    rem = p - pof2
    plans = []
    for r in range(p):
        ph = []
        if r < 2 * rem:
            if r % 2 == 0:
                ph.append(("send", r + 1))
                newrank = -1
            else:
                ph.append(("recv", r - 1))
                newrank = r // 2
        else:
            newrank = r - rem
        if newrank != -1:
            mask = 1
            while mask < pof2:
                nd = newrank ^ mask
                ph.append(("sendrecv", nd * 2 + 1 if nd < rem else nd + rem))
                mask <<= 1
        if r < 2 * rem:
            ph.append(("send", r - 1) if r % 2 else ("recv", r + 1))
        plans.append(ph)
    return plans


def write_goal(path, p, steps, w_ps, static=None):
    """GOAL text: per step a calc, then the rdb phases; every op requires the completion of
    the previous phase, both halves of a sendrecv (MPI_Sendrecv waits for both: requiring only
    the recv lets a recv matched from the unexpected queue start the next calc before the send
    was issued). Tags are unique per step and phase."""
    plans = rdb_plan(p)
    with open(path, "w", buffering=1 << 22) as f:
        f.write(f"num_ranks {p}\n\n")
        for r in range(p):
            out = [f"rank {r} {{\n"]
            prev = []
            ph = plans[r]
            for k in range(steps):
                c = w_ps + (static.get((r, k), 0) if static else 0)
                out.append(f"c{k}: calc {c}\n")
                out.extend(f"c{k} requires {q}\n" for q in prev)
                prev = [f"c{k}"]
                base = k * 64
                rnd = 0
                for j, (kind, peer) in enumerate(ph):
                    if kind == "sendrecv":
                        rnd += 1
                        tag = base + rnd  # the round number: the same on both partners
                        out.append(f"s{k}_{j}: send 8b to {peer} tag {tag}\n"
                                   f"r{k}_{j}: recv 8b from {peer} tag {tag}\n")
                        out.extend(f"{x}{k}_{j} requires {q}\n" for x in "sr" for q in prev)
                        prev = [f"s{k}_{j}", f"r{k}_{j}"]
                    else:
                        # the pre/post step of a non-power-of-two P: the tag is the
                        # sender's phase index, which is 0 (pre) or last (post) on both sides
                        t = base + (0 if j == 0 else 63)
                        if kind == "send":
                            out.append(f"x{k}_{j}: send 8b to {peer} tag {t}\n")
                        else:
                            out.append(f"x{k}_{j}: recv 8b from {peer} tag {t}\n")
                        out.extend(f"x{k}_{j} requires {q}\n" for q in prev)
                        prev = [f"x{k}_{j}"]
            out.append("}\n\n")
            f.write("".join(out))


# ---------------------------------------------------------------------------------------------
# peers

def run_smpi(a, outdir, p, steps, trace_bin, noise=True, eager=True):
    prefix = Path(a.smpi_install)
    d = outdir / "smpi"
    d.mkdir(exist_ok=True)
    exe = d / "sim_peers_smpi"
    if not exe.exists():
        subprocess.run([str(prefix / "bin" / "smpicc"), "-O2", "-o", str(exe), str(HERE / "sim_peers_smpi.c")],
                       check=True, capture_output=True)
    plat = d / f"cluster-{p}.xml"
    # route between two hosts = two private links: latency L/2 each; bandwidth 1/G; a flat
    # cluster, split duplex (one message each way per round, no sharing), free loopback
    plat.write_text(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n"
        f"  <cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-{p - 1}\" speed=\"1Gf\" "
        f"bw=\"{1 / a.G_s_per_byte:.6g}Bps\" lat=\"{a.L_s / 2:.6g}s\" sharing_policy=\"SPLITDUPLEX\" "
        "loopback_bw=\"1e15Bps\" loopback_lat=\"0s\"/>\n</platform>\n")
    hosts = d / f"hosts-{p}"
    hosts.write_text("".join(f"n{i}\n" for i in range(p)))
    o = f"0:{a.o_s:.6g}:0"
    cfg = ["--cfg=smpi/privatization:no", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
           "--cfg=smpi/allreduce:rdb", "--cfg=smpi/simulate-computation:no", "--cfg=smpi/wtime:0",
           f"--cfg=smpi/os:{o}", f"--cfg=smpi/ois:{o}", f"--cfg=smpi/or:{o}",
           "--cfg=contexts/stack-size:128", "--log=root.thres:warning"]
    if eager:
        # messages under 64 KiB go to the receiver's permanent mailbox at once, so the
        # transfer overlaps whatever the receiver does (MPI eager protocol, LogGOPSim's S);
        # SimGrid's default (0) starts an 8-byte transfer only once the receive is posted
        cfg += ["--cfg=smpi/async-small-thresh:65536"]
    cmd = [str(prefix / "bin" / "smpirun"), "-np", str(p), "-platform", str(plat), "-hostfile", str(hosts)] + cfg + \
          [str(exe), str(steps), repr(a.compute_s), "1e9", str(trace_bin)]
    tag = f"{p}" + ("" if noise else "-nonoise") + ("" if eager else "-rdv")
    rc, out, wall, rss, cpu = timed(cmd, d, d / f"run-{tag}.log", a.timeout)
    m = re.search(r"SIMPEERS total_s=([\d.eE+-]+) noise_s=([\d.eE+-]+) hits=(\d+)", out)
    if rc != 0 or not m:
        return None, wall, rss, f"failed rc={rc}, see smpi/run-{tag}.log"
    return float(m.group(1)), wall, rss, f"cpu {cpu:.1f} s; noise injected {float(m.group(2)):.6f} s in {m.group(3)} hits"


def run_loggopsim(a, outdir, p, steps, evs, static, patched):
    d = outdir / ("loggopsim" if patched else "loggopsim-static")
    d.mkdir(exist_ok=True)
    bindir = Path(a.loggopsim_pr_dir if patched else a.loggopsim_dir)
    txt2bin = Path(a.loggopsim_dir or a.loggopsim_pr_dir) / "txt2bin"
    w_ps = round(a.compute_s * PS)
    tag = f"{p}" + ("" if evs is not None or static is not None else "-nonoise")
    goal, gbin = d / f"pattern-{tag}.goal", d / f"pattern-{tag}.bin"
    t0 = time.monotonic()
    write_goal(goal, p, steps, w_ps, static)
    t_goal = time.monotonic() - t0
    rc, _, t_bin, _, _ = timed([str(txt2bin), "-i", str(goal), "-o", str(gbin)], d, d / f"txt2bin-{tag}.log", a.timeout)
    if rc != 0:
        return None, 0, 0, f"txt2bin failed rc={rc}"
    if not a.keep_goal:
        goal.unlink()
    cmd = [str(bindir / "LogGOPSim"), "-f", str(gbin), "-b",
           "-L", str(round(a.L_s * PS)), "-o", str(round(a.o_s * PS)), "-g", str(round(a.g_s * PS)),
           "-G", str(round(a.G_s_per_byte * PS)), "-S", "65535"]
    if patched and evs is not None:
        nf = d / f"noise-{p}.txt"
        with open(nf, "w") as f:
            for r, e in enumerate(evs):
                f.writelines(f"{r} {s} {l}\n" for s, l in e)
        cmd += ["--noise-trace-per-rank", str(nf)]
    rc, out, wall, rss, cpu = timed(cmd, d, d / f"run-{tag}.log", a.timeout)
    if not a.keep_goal:
        gbin.unlink()
    m = re.search(r"Maximum finishing time at host \d+: (\d+)", out)
    if rc != 0 or not m:
        return None, wall, rss, f"failed rc={rc}, see {d.name}/run-{tag}.log"
    return int(m.group(1)) / PS, wall, rss, f"cpu {cpu:.1f} s; GOAL written in {t_goal:.0f} s, txt2bin {t_bin:.0f} s (not in wall_s)"


# ---------------------------------------------------------------------------------------------

def main(argv):
    a = parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "command.txt").write_text(
        "cd " + str(Path.cwd()) + "\n" + shlex.join([sys.executable] + [str(Path(__file__))] + argv) + "\n")

    pmax = max(a.ranks + [a.calibrate_ranks])
    w_ps = round(a.compute_s * PS)
    round_ps = round((a.L_s + 2 * a.o_s) * PS)  # LogGP per-round cost of an 8-byte sendrecv
    # the trace must cover the run (S steps of W plus noise and communication); it does not
    # depend on --steps, so runs with fewer steps read the same trace
    measured_s = a.trace_s
    if measured_s < 1.5 * a.steps * a.compute_s:
        sys.exit(f"--trace-s {measured_s} is too short for {a.steps} steps of {a.compute_s} s")
    trace = make_trace(pmax, a.noise_rate, a.noise_len_us, measured_s, a.seed)
    (out / "trace.json").write_text(json.dumps(trace, separators=(",", ":")))
    pattern = {"ranks": a.ranks, "steps": a.steps, "compute_s": a.compute_s, "bytes": 8,
               "L_s": a.L_s, "o_s": a.o_s, "g_s": a.g_s, "G_s_per_byte": a.G_s_per_byte,
               "algorithm": "recursive-doubling",
               "noise": {"trace": "trace.json", "generator": "poisson", "rate_per_s": a.noise_rate,
                         "length_us": a.noise_len_us, "seed": a.seed, "cpus": pmax,
                         "rank_r_uses_cpu": "r (the first P entries)",
                         "semantics": "an event starting in [t0, end) of a compute phase extends end by its "
                                      "length (cascading); events starting while the rank is in the "
                                      "collective cost nothing"}}
    if a.smpi_steps:
        pattern["smpi_steps"] = a.smpi_steps
    (out / "pattern.json").write_text(json.dumps(pattern, indent=2) + "\n")

    # binary copy of the same trace for the SMPI program (seconds)
    trace_bin = out / "smpi-trace.bin"
    with open(trace_bin, "wb") as f:
        f.write(struct.pack("<q", pmax))
        first, n = [], 0
        for c in trace["cpus"]:
            first.append(n)
            n += len(c["events_us"])
        first.append(n)
        f.write(struct.pack(f"<{pmax + 1}q", *first))
        for c in trace["cpus"]:
            for s, l in c["events_us"]:
                f.write(struct.pack("<dd", s * 1e-6, l * 1e-6))

    rows, per_round = [], []

    def row(sim, p, steps, total, wall, rss, notes):
        rows.append({"simulator": sim, "ranks": p, "steps": steps,
                     "total_s": "" if total is None else f"{total:.9f}",
                     "mean_step_s": "" if total is None else f"{total / steps:.9f}",
                     "wall_s": f"{wall:.2f}", "max_rss_mb": "" if rss != rss else f"{rss:.1f}", "notes": notes})
        print(rows[-1], flush=True)
        with open(out / "peers.csv", "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)

    # noise-free calibration: cost of one round as each peer sees it
    cp, cs = a.calibrate_ranks, a.calibrate_steps
    if cp:
        rounds = math.ceil(math.log2(cp))
        empty = out / "smpi-trace-empty.bin"
        empty.write_bytes(struct.pack("<q", cp) + struct.pack(f"<{cp + 1}q", *([0] * (cp + 1))))
        res = {"analytic": (cs * (w_ps + rounds * round_ps)) / PS}
        if "smpi" in a.peers:
            res["smpi"] = run_smpi(a, out, cp, cs, empty, noise=False)[0]
        if "smpi-rdv" in a.peers:
            res["smpi-rdv"] = run_smpi(a, out, cp, cs, empty, noise=False, eager=False)[0]
        if "loggopsim" in a.peers or "loggopsim-static" in a.peers:
            a_dir = a.loggopsim_dir or a.loggopsim_pr_dir
            save, a.loggopsim_dir = a.loggopsim_dir, a_dir
            res["loggopsim"] = run_loggopsim(a, out, cp, cs, None, None, patched=False)[0]
            a.loggopsim_dir = save
        for sim, tot in res.items():
            per_round.append({"simulator": sim, "ranks": cp, "steps": cs, "rounds_per_step": rounds,
                              "total_s": "" if tot is None else f"{tot:.12f}",
                              "per_round_us": "" if tot is None else f"{(tot - cs * a.compute_s) / (cs * rounds) * 1e6:.6f}"})
        with open(out / "per_round.csv", "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(per_round[0]))
            wr.writeheader()
            wr.writerows(per_round)
        print(per_round, flush=True)

    for p in a.ranks:
        evs = events_ps(trace, p)
        rounds = math.ceil(math.log2(p))
        t0 = time.monotonic()
        total, hits, static = analytic(evs, a.steps, w_ps, round_ps, rounds)
        t_an = time.monotonic() - t0
        pof2 = p & (p - 1) == 0
        if "analytic" in a.peers:
            note = f"{hits}/{a.steps} steps hit; {rounds} rounds of L+2o={round_ps / 1e6:.4f} us"
            if not pof2:
                note += f" (MPICH rdb takes {p.bit_length() - 1}+2 rounds on its critical path)"
            row("analytic", p, a.steps, total / PS, t_an, float("nan"), note)
        if "smpi" in a.peers:
            s = a.smpi_steps or a.steps
            tot, wall, rss, note = run_smpi(a, out, p, s, trace_bin)
            row("smpi", p, s, tot, wall, rss, "eager below 64 KiB (smpi/async-small-thresh:65536); " + note)
        if "smpi-rdv" in a.peers:
            s = a.smpi_steps or a.steps
            tot, wall, rss, note = run_smpi(a, out, p, s, trace_bin, eager=False)
            row("smpi-rdv", p, s, tot, wall, rss, "SimGrid default: a small transfer starts when the recv is posted; " + note)
        if "loggopsim" in a.peers:
            tot, wall, rss, note = run_loggopsim(a, out, p, a.steps, evs, None, patched=True)
            row("loggopsim", p, a.steps, tot, wall, rss, "per-rank noise patch (--noise-trace-per-rank); " + note)
        if "loggopsim-static" in a.peers:
            tot, wall, rss, note = run_loggopsim(a, out, p, a.steps, None, static, patched=False)
            row("loggopsim-static", p, a.steps, tot, wall, rss,
                "upstream; noise folded into calc at the analytic step starts; " + note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
