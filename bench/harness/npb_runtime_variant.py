#!/usr/bin/env python3
"""Usage: python3 npb_runtime_variant.py NPB3.4-OMP   (a copy of the NPB 3.4 OpenMP sources,
outside this repository; then build it there: make mg CLASS=W, ...)

Rewrites an NPB3.4-OMP tree in place so that its worksharing loops reach the runtime:
schedule(static[,n]) -> schedule(runtime), and schedule(runtime) added to '$omp do' /
'$omp parallel do' / '#pragma omp for' / '#pragma omp parallel for' directives without a
schedule clause. LU is left alone (its pipelined sweeps rely on static blocks), and so are
ordered loops (MG's zran3 hands one iteration to each thread and crashes otherwise)."""
import os, re, sys
root = sys.argv[1]
changed = 0
for d, _, files in os.walk(root):
    if "/LU" in d or "/sys" in d or "/common" in d:
        continue
    for f in files:
        p = os.path.join(d, f)
        if f.endswith(".f"):
            lines = open(p).read().split("\n")
            out = []
            i = 0
            while i < len(lines):
                l = lines[i]
                m = re.match(r"^([!cC*]\$omp\s+(end\s+)?)(parallel\s+)?do\b", l, re.I)
                if m and not m.group(2):
                    block = [l]
                    j = i + 1
                    while j < len(lines) and re.match(r"^[!cC*]\$omp&", lines[j], re.I):
                        block.append(lines[j]); j += 1
                    text = "\n".join(block)
                    if re.search(r"\bordered\b", text, re.I):
                        # An ordered loop over the threads (MG's zran3: do i2=1,num_threads)
                        # relies on static mapping, one iteration per thread: left alone.
                        pass
                    elif re.search(r"schedule\s*\(", text, re.I):
                        text = re.sub(r"schedule\s*\(\s*static\s*(,\s*\w+)?\s*\)", "schedule(runtime)", text, flags=re.I)
                    else:
                        text = re.sub(r"^([!cC*]\$omp\s+(parallel\s+)?do)\b", r"\1 schedule(runtime)", text, count=1, flags=re.I)
                    if text != "\n".join(block):
                        changed += 1
                    out += text.split("\n"); i = j
                    continue
                out.append(l); i += 1
            open(p, "w").write("\n".join(out))
        elif f.endswith(".c"):
            s = open(p).read()
            def fix(m):
                t = m.group(0)
                if t.rstrip().endswith("\\"):
                    return t
                if re.search(r"\bordered\b", t):
                    return t
                if re.search(r"schedule\s*\(", t):
                    return re.sub(r"schedule\s*\(\s*static\s*(,\s*\w+)?\s*\)", "schedule(runtime)", t)
                return re.sub(r"\bfor\b", "for schedule(runtime)", t, count=1)
            s2 = re.sub(r"^[ \t]*#[ \t]*pragma[ \t]+omp[ \t]+(parallel[ \t]+)?for\b.*$", fix, s, flags=re.M)
            if s2 != s:
                changed += 1
                open(p, "w").write(s2)
print(f"{changed} directives/files changed")
