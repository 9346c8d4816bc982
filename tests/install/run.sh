#!/usr/bin/env bash
# Installs an aloe build into a temporary prefix and builds and runs a consumer against it:
#   consumer         C++, find_package(aloe) -> aloe::aloe (shared)
#   consumer_static  C++, aloe::aloe_static (checks that hwloc reaches the link line)
#   c_consumer       C, pkg-config --cflags --libs aloe (shared)
#   c_consumer_static  C, pkg-config --static (checks Libs.private)
# The temporary prefix and build are removed on exit.
#
# usage: run.sh <aloe build dir> [cmake] [generator] [c compiler] [c++ compiler]
set -euo pipefail

build=$(cd "$1" && pwd)
cmake=${2:-cmake}
generator=${3:-}
cc=${4:-cc}
cxx=${5:-c++}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/consumer" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aloe-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { printf '== install.consumer: %s\n' "$*"; }

step "install $build into a temporary prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }

config=$(find "$prefix" -name aloeConfig.cmake -print -quit)
pcfile=$(find "$prefix" -name aloe.pc -print -quit)
[[ -n $config ]] || { echo "no aloeConfig.cmake installed"; exit 1; }
[[ -n $pcfile ]] || { echo "no aloe.pc installed"; exit 1; }

step "C++ consumer through find_package(aloe)"
"$cmake" -S "$here" -B "$tmp/build" ${generator:+-G "$generator"} -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
found=$(sed -n 's/^aloe_DIR:PATH=//p' "$tmp/build/CMakeCache.txt")
[[ $found == "$(dirname "$config")" ]] || { echo "found aloe in '$found', not in the temporary prefix"; exit 1; }
"$cmake" --build "$tmp/build"
"$tmp/build/consumer"
"$tmp/build/consumer_static"
if readelf -d "$tmp/build/consumer_static" | grep -q 'NEEDED.*libaloe'; then
    echo "consumer_static depends on libaloe.so; it should have linked libaloe.a"; exit 1
fi

step "C consumer through pkg-config"
export PKG_CONFIG_PATH=$(dirname "$pcfile")
libdir=$(pkg-config --variable=libdir aloe)
# shellcheck disable=SC2046  # word splitting of pkg-config's flags is intended
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$here/main.c" $(pkg-config --cflags --libs aloe) \
    -o "$tmp/c_consumer"
LD_LIBRARY_PATH=$libdir "$tmp/c_consumer"
# Statically: -l:libaloe.a picks the archive; the rest of the line must come from Libs.private.
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$here/main.c" $(pkg-config --static --cflags aloe) \
    $(pkg-config --static --libs aloe | sed 's/-laloe\b/-l:libaloe.a/') -o "$tmp/c_consumer_static"
"$tmp/c_consumer_static"

# The installed `aloe run`: its interposer finds the installed libaloe.so beside it ($ORIGIN),
# with no library path set, and takes an OpenMP program's dynamic loop.
if [[ -x $prefix/bin/aloe ]] && printf '#include <omp.h>\nint main(void){long s=0;\n#pragma omp parallel for schedule(dynamic,4) reduction(+:s)\nfor(long i=0;i<1000;++i)s+=i;\nreturn s==499500?0:3;}\n' >"$tmp/omp_program.c" \
   && "$cc" -fopenmp "$tmp/omp_program.c" -o "$tmp/omp_program" 2>/dev/null; then
    step "installed aloe run on an OpenMP program"
    out=$(env -u LD_LIBRARY_PATH "$prefix/bin/aloe" run --threads 2 --summary - -- "$tmp/omp_program" 2>&1) ||
        { echo "$out"; echo "the installed aloe run failed"; exit 1; }
    grep -q "aloe dynamic,chunk=4" <<<"$out" || { echo "$out"; echo "the loop was not taken by aloe"; exit 1; }
    readelf -d "$(find "$prefix" -name libaloe-gomp.so -print -quit)" | grep -q 'R.*PATH.*\$ORIGIN' ||
        { echo "libaloe-gomp.so does not look for libaloe.so beside itself"; exit 1; }
fi

step "ok"
