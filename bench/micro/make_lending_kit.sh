#!/usr/bin/env bash
# Packs issue 19's lending benchmark (core_lending.py on jacobi3d-mpi) for a machine with no
# packages, such as the lent 16-core device: the programs built here, OpenMPI's launcher with
# its libraries, plugins and help files, DLB and LLVM's libomp when given, every shared
# library they load (glibc's loader too) and one wrapper per program that starts it through
# that loader. The kit keeps the repository's layout for what the driver runs, so its copy of
# core_lending.py finds the programs where it looks for them.
#
#   bench/micro/make_lending_kit.sh BUILD_DIR KIT_DIR [DLB_PREFIX [LIBOMP]]
#   KIT_DIR/run_lending.sh [core_lending.py options]      (on the other machine)
#
# OpenMPI is relocated with OPAL_PREFIX and PMIx with PMIX_PREFIX; their system-wide defaults files
# (/etc/openmpi, PMIx's share/) are not carried. Only a single node's launch is supported (no orted, no ssh).
set -euo pipefail
build=${1:?usage: make_lending_kit.sh BUILD_DIR KIT_DIR [DLB_PREFIX [LIBOMP]]}
kit=${2:?usage: make_lending_kit.sh BUILD_DIR KIT_DIR [DLB_PREFIX [LIBOMP]]}
dlb=${3:-}
libomp=${4:-/usr/lib/x86_64-linux-gnu/libomp.so.5}
repo=$(cd "$(dirname "$0")/../.." && pwd)
ompi_lib=/usr/lib/x86_64-linux-gnu/openmpi/lib
pmix_lib=/usr/lib/x86_64-linux-gnu/pmix2/lib
orterun=$(readlink -f "$(command -v mpirun)")
for need in "$build/apps/aloe-app-jacobi3d-mpi" "$build/lib/libaloe-mpi.so" "$build/tools/aloed/aloed" \
            "$ompi_lib/openmpi3" "$orterun"; do
  [ -e "$need" ] || { echo "make_lending_kit: $need is missing (build the release tree; install OpenMPI)" >&2; exit 2; }
done
if [ -n "$dlb" ]; then
  for need in "$dlb/lib/libdlb.so" "$dlb/lib/libdlb_mpi.so" "$dlb/bin/dlb_run" "$libomp"; do
    [ -e "$need" ] || { echo "make_lending_kit: $need is missing (DLB's install prefix; LLVM's libomp for its variants)" >&2; exit 2; }
  done
fi
source "$repo/bench/kit_common.sh"
kit_start make_lending_kit "$kit"
mkdir -p "$kit"/{bin,llvm,bench/micro,build/release/lib}
mpi_libs=("${ompi_lib#/}" "${pmix_lib#/}")  # the wrappers' library folders beside lib/

# The programs, where core_lending.py looks for them.
kit_wrap "$build/apps/aloe-app-jacobi3d-mpi" build/release/apps/aloe-app-jacobi3d-mpi "${mpi_libs[@]}"
kit_wrap "$build/tools/aloed/aloed" build/release/tools/aloed/aloed "${mpi_libs[@]}"
cp -L "$build/lib/libaloe-mpi.so" "$kit/build/release/lib/"  # preloaded: a real library
kit_copy_libs "$build/lib/libaloe-mpi.so"
[ -e "$build/libaloe.so.0" ] && cp -L "$build/libaloe.so.0" "$kit/build/release/"
cp "$repo/bench/micro/core_lending.py" "$repo/bench/micro/dlb_lewi.py" "$kit/bench/micro/"

# OpenMPI: the launcher, its libraries, its plugins and their libraries, its help texts.
mkdir -p "$kit$ompi_lib" "$kit/usr/share"
cp -a "$ompi_lib"/. "$kit$ompi_lib/"
[ -d /usr/share/openmpi ] && cp -a /usr/share/openmpi "$kit/usr/share/"
if [ -d "$pmix_lib" ]; then
  mkdir -p "$kit$pmix_lib"
  cp -a "$pmix_lib"/. "$kit$pmix_lib/"
  [ -d /usr/share/pmix ] && cp -a /usr/share/pmix "$kit/usr/share/"
fi
for so in "$kit$ompi_lib"/openmpi3/*.so "$kit$pmix_lib"/pmix/*.so; do
  [ -f "$so" ] && kit_copy_libs "$so"
done
kit_wrap "$orterun" real-bin/mpirun "${mpi_libs[@]}"
cat > "$kit/bin/mpirun" <<'MPIRUN'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")/.." && pwd)
export OPAL_PREFIX="$here/usr" PMIX_PREFIX="$here/usr/lib/x86_64-linux-gnu/pmix2"
export PMIX_PKGLIBDIR="$PMIX_PREFIX/lib/pmix"  # an absolute path in the build, not under its prefix
# Plugins whose libraries are not in the kit (fabrics this node does not have) stay quiet.
export OMPI_MCA_mca_base_component_show_load_errors=0 PMIX_MCA_mca_base_component_show_load_errors=0
exec "$here/real-bin/mpirun" "$@"
MPIRUN
chmod +x "$kit/bin/mpirun"

# DLB LeWI and LLVM's libomp (the DLB variants).
if [ -n "$dlb" ]; then
  mkdir -p "$kit/dlb/lib" "$kit/dlb/share/doc/dlb/scripts"
  cp -L "$dlb"/lib/libdlb.so "$dlb"/lib/libdlb_mpi.so "$kit/dlb/lib/"  # LeWI's two (not dbg, instr)
  for so in "$kit"/dlb/lib/*.so; do kit_copy_libs "$so"; done
  # LeWI for an OpenMP program with the settings of DLB's lewi_omp.sh, its preload handed
  # to the kit's loader.
  cat > "$kit/dlb/share/doc/dlb/scripts/lewi_omp.sh" <<'LEWI'
#!/usr/bin/env bash
export DLB_ARGS="$DLB_ARGS --lewi --ompt-thread-manager=omp5"
export OMP_PROC_BIND=true OMP_PLACES=threads OMP_WAIT_POLICY=passive
exec "$DLB_HOME/bin/dlb_run" env ALOE_KIT_PRELOAD="${ALOE_KIT_PRELOAD:+$ALOE_KIT_PRELOAD:}$DLB_HOME/lib/libdlb_mpi.so" "$@"
LEWI
  chmod +x "$kit/dlb/share/doc/dlb/scripts/lewi_omp.sh"
  for tool in dlb dlb_run dlb_shm; do kit_wrap "$dlb/bin/$tool" "dlb/bin/$tool" "${mpi_libs[@]}"; done
fi
if [ -f "$libomp" ]; then
  cp -L "$libomp" "$kit/llvm/libomp.so.5"
  kit_copy_libs "$libomp"
  ln -s ../llvm/libomp.so.5 "$kit/lib/libiomp5.so"  # the name DLB's OMPT support opens
fi

# Debug information stays here: the kit must fit a 64 MiB transfer.
kit_strip "$kit/real" "$kit/lib" "$kit/build" "$kit/dlb" "$kit/llvm"

cat > "$kit/run_lending.sh" <<'RUN'
#!/usr/bin/env bash
# core_lending.py from this kit: its mpirun first on PATH, DLB_HOME and libomp from the kit.
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$here/bin:$PATH" DLB_HOME="$here/dlb"
dlb=(); [ -d "$here/dlb/lib" ] && dlb=(--dlb-prefix "$here/dlb")
exec python3 "$here/bench/micro/core_lending.py" --libomp "$here/llvm/libomp.so.5" --preload-variable ALOE_KIT_PRELOAD \
  "${dlb[@]}" "$@"
RUN
chmod +x "$kit/run_lending.sh"
echo "make_lending_kit: $(du -sh "$kit" | cut -f1) in $kit"
