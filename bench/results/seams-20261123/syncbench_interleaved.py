"""EPCC syncbench's PARALLEL, FOR, PARALLEL_FOR and REDUCTION overheads, interleaved: libgomp,
`aloe run` of a build before issue 13 (795e053) and after. Paths from the environment:
EPCC_SYNCBENCH (the syncbench binary, built outside the repository), BEFORE_ALOE and AFTER_ALOE
(the two `aloe` tools). Argument: repetitions (default 4)."""
import subprocess, re, statistics, json, sys, os
B=os.environ["EPCC_SYNCBENCH"]
V={"plain":["env","OMP_NUM_THREADS=2","OMP_PROC_BIND=close",B],
   "base":[os.environ["BEFORE_ALOE"],"run","--summary","none","--threads","2","--","env","OMP_PROC_BIND=close",B],
   "main":[os.environ["AFTER_ALOE"],"run","--summary","none","--threads","2","--","env","OMP_PROC_BIND=close",B]}
M=["PARALLEL","FOR","PARALLEL_FOR","REDUCTION"]
names={"PARALLEL_FOR":"PARALLEL FOR"}
res={(v,m):[] for v in V for m in M}
reps=int(sys.argv[1]) if len(sys.argv)>1 else 4
order=list(V)
for r in range(reps):
    rot=order[r%3:]+order[:r%3]
    for m in M:
        for v in rot:
            out=subprocess.run(V[v]+["--measureonly",m,"--outer-repetitions","20","--test-time","2000"],capture_output=True,text=True).stdout
            mm=re.search(re.escape(names.get(m,m))+r" overhead\s*=\s*([0-9.]+)",out)
            if mm: res[(v,m)].append(float(mm.group(1)))
print("| measure | libgomp µs (median [min, max]) | base 795e053 | main | main / libgomp | main / base |")
print("|---|---:|---:|---:|---:|---:|")
for m in M:
    def f(v):
        x=res[(v,m)]; return statistics.median(x) if x else float('nan'), (min(x) if x else 0), (max(x) if x else 0)
    p,b,n=f("plain"),f("base"),f("main")
    print(f"| {names.get(m,m)} | {p[0]:.3f} [{p[1]:.3f}, {p[2]:.3f}] | {b[0]:.3f} [{b[1]:.3f}, {b[2]:.3f}] | {n[0]:.3f} [{n[1]:.3f}, {n[2]:.3f}] | {n[0]/p[0]:.2f} | {n[0]/b[0]:.2f} |")
json.dump({f"{v}/{m}":x for (v,m),x in res.items()}, open("syncbench.json","w"))
