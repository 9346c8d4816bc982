"""Native parallel_for loops, before (795e053) and after issue 13, interleaved: native.cpp built
against each libaloe.so as ./native-base and ./native-main, 100,000 loops of 4096 iterations,
2 threads bound close, 7 repetitions alternating the order."""
import subprocess, time, statistics, os
env=dict(os.environ, ALOE_NUM_THREADS="2", ALOE_PROC_BIND="close")
res={}
for r in range(7):
    for s in ("static","dynamic,chunk=16","guided"):
        order=("base","main") if r%2==0 else ("main","base")
        for v in order:
            t=time.perf_counter(); subprocess.run([f"./native-{v}","100000",s,"4096"],env=env,stdout=subprocess.DEVNULL,check=True); res.setdefault((s,v),[]).append(time.perf_counter()-t)
print("| schedule | before (795e053) s, median [min, max] | after s | after / before (medians) |")
print("|---|---:|---:|---:|")
for s in ("static","dynamic,chunk=16","guided"):
    b=res[(s,"base")]; m=res[(s,"main")]
    print(f"| {s} | {statistics.median(b):.4f} [{min(b):.4f}, {max(b):.4f}] | {statistics.median(m):.4f} [{min(m):.4f}, {max(m):.4f}] | {statistics.median(m)/statistics.median(b):.3f} |")
