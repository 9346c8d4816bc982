#!/usr/bin/env bash
# Packs what the task benchmarks need onto a machine with no packages (a lent many-core
# machine): the binaries built here, every shared library they load (glibc's loader too, so
# they run whatever the other machine's libraries are), one wrapper per program that starts it
# through that loader, and the Python drivers (standard library only).
#
#   bench/tasks/make_device_kit.sh BUILD_DIR KIT_DIR [TASKFLOW_BUILD_DIR]
#
# On the other machine: KIT_DIR/bin/<program> runs as the program; LD_LIBRARY_PATH is still
# honoured first (the libomp shim of tasks_bench.py).
set -euo pipefail
build=${1:?usage: make_device_kit.sh BUILD_DIR KIT_DIR [TASKFLOW_BUILD_DIR]}
kit=${2:?usage: make_device_kit.sh BUILD_DIR KIT_DIR [TASKFLOW_BUILD_DIR]}
taskflow_build=${3:-}
# Replaces only an earlier kit (its marker file) or an empty folder, never anything else.
if [ -e "$kit" ] && [ ! -f "$kit/.aloe-kit" ] && [ -n "$(ls -A "$kit" 2>/dev/null)" ]; then
  echo "make_device_kit: $kit exists and is not a kit made here: give a new folder" >&2
  exit 2
fi
rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/real" "$kit/lib" "$kit/drivers"
touch "$kit/.aloe-kit"

programs=("$build/bench/tasks/aloe-bench-tasks")
for app in stencil1d-tasks fib uts sort nqueens; do
  [ -x "$build/apps/aloe-app-$app" ] && programs+=("$build/apps/aloe-app-$app")
done
for p in "$build"/bench/taskflow_ports/*; do [ -x "$p" ] && [ -f "$p" ] && programs+=("$p"); done

copy_libs() {  # every library the program loads, and the loader
  ldd "$1" | awk '/=>/ {print $3} /ld-linux/ {print $1}' | while read -r lib; do
    [ -f "$lib" ] && cp -Ln "$lib" "$kit/lib/" 2>/dev/null || true
  done
}
for p in "${programs[@]}"; do
  name=$(basename "$p")
  cp "$p" "$kit/real/$name"
  copy_libs "$p"
  cat > "$kit/bin/$name" <<WRAP
#!/usr/bin/env bash
here=\$(cd "\$(dirname "\$0")/.." && pwd)
export ALOE_APPS_SELF="\$here/bin/$name"  # a workload's re-exec comes back through here
exec "\$here/lib/ld-linux-x86-64.so.2" --library-path "\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}\$here/lib" "\$here/real/$name" "\$@"
WRAP
  chmod +x "$kit/bin/$name"
done
# Taskflow's own benchmark programs, laid out as its build folder (taskflow_ports/compare.py).
if [ -n "$taskflow_build" ]; then
  mkdir -p "$kit/taskflow-build/benchmarks"
  for p in "$taskflow_build"/benchmarks/bench_*; do
    [ -x "$p" ] || continue
    name=$(basename "$p")
    cp "$p" "$kit/real/$name"
    copy_libs "$p"
    cat > "$kit/taskflow-build/benchmarks/$name" <<WRAP
#!/usr/bin/env bash
here=\$(cd "\$(dirname "\$0")/../.." && pwd)
exec "\$here/lib/ld-linux-x86-64.so.2" --library-path "\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}\$here/lib" "\$here/real/$name" "\$@"
WRAP
    chmod +x "$kit/taskflow-build/benchmarks/$name"
  done
fi
# libomp for the OpenMP runs on LLVM's runtime (tasks_bench.py looks under lib/llvm-*/lib).
for v in $(seq 20 -1 11); do
  if [ -f "/usr/lib/llvm-$v/lib/libomp.so.5" ]; then
    mkdir -p "$kit/llvm/lib" && cp -L "/usr/lib/llvm-$v/lib/libomp.so.5" "$kit/llvm/lib/"; break
  fi
done
here=$(cd "$(dirname "$0")" && pwd)
cp "$here/tasks_bench.py" "$here/grain_tuning.py" "$kit/drivers/" 2>/dev/null || cp "$here/tasks_bench.py" "$kit/drivers/"
[ -f "$here/../taskflow_ports/compare.py" ] && cp "$here/../taskflow_ports/compare.py" "$kit/drivers/"
# Debug information stays here: this kit and the lending kit together must fit the device's
# 64 MiB transfer (42 MB of the programs here were debug information).
find "$kit/real" "$kit/lib" "$kit/llvm" -type f ! -name 'ld-linux*' -exec strip --strip-debug {} + 2>/dev/null || true
du -sh "$kit"
