#!/usr/bin/env bash
# Installs what aloe needs to build, test and benchmark, and nothing that is already there.
#
#   scripts/install-deps.sh            Debian packages (apt) and the project venv .venv (pip)
#
# Idempotent: when everything is present it prints "all dependencies present" and changes
# nothing. Needs root or sudo only when a Debian package is missing.
# Environment: ALOE_PYTHON picks the interpreter the venv is made from (default python3).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Debian bookworm package names, one purpose per line.
debian_packages=(
    cmake ninja-build make g++ pkg-config git ca-certificates  # build
    mold                                                         # fast linking (ALOE_LINKER)
    libgtest-dev                                                 # unit and conformance tests
    nlohmann-json3-dev                                           # aloe run reads its processes' reports
    libhwloc-dev hwloc                                           # topology and binding
    libnlopt-dev libnlopt-cxx-dev                                # derivative-free search
    libbenchmark-dev                                             # micro-benchmarks
    libomp-dev libtbb-dev                                        # peers in benchmarks
    libopenmpi-dev openmpi-bin                                   # MPI slack layer
    gfortran                                                     # Fortran API and tests
    valgrind                                                     # memory checks
    tmux                                                         # aloe top's test drives a real terminal
    doxygen                                                      # API reference (make docs)
    python3 python3-venv                                         # analysis and plots (.venv)
)
venv=.venv
requirements=requirements.txt
python=${ALOE_PYTHON:-python3}

log() { printf 'install-deps: %s\n' "$*"; }
die() { printf 'install-deps: error: %s\n' "$*" >&2; exit 1; }

is_installed() {
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root or sudo to run: $*"
    fi
}

apt_install() {
    log "installing Debian packages: $*"
    if [[ $(id -u) -ne 0 ]] && ! command -v sudo >/dev/null 2>&1; then
        die "missing Debian packages ($*), and this is neither root nor has sudo; as root run: apt-get install $*"
    fi
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

changed=0

# 1. Debian packages.
command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script expects Debian (bookworm)"
missing=()
for pkg in "${debian_packages[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    apt_install "${missing[@]}"
    changed=1
fi

# 2. The project venv.
command -v "$python" >/dev/null 2>&1 || die "$python not found"
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c '' >/dev/null 2>&1; then
    if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        # Debian splits venv's pip bootstrap into python3-venv.
        apt_install python3-venv
    fi
    log "creating $venv with $("$python" --version 2>&1)"
    "$python" -m venv --clear "$venv"
    changed=1
fi

# Satisfied when every requirement is installed at an allowed version, the packages import,
# and pip check finds nothing broken. Checks metadata first: that is the fast part.
requirements_met() {
    "$venv/bin/python" - "$requirements" <<'PY' >/dev/null 2>&1 || return 1
import sys
from importlib import metadata
from pip._vendor.packaging.requirements import Requirement
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    req = Requirement(line)
    if metadata.version(req.name) not in req.specifier:  # raises when not installed
        sys.exit(1)
import numpy, matplotlib, pytest  # noqa: E401,F401  (import test)
PY
    "$venv/bin/python" -m pip check >/dev/null 2>&1
}

if ! requirements_met; then
    log "installing Python packages into $venv: $(grep -v '^\s*#' "$requirements" | grep -v '^\s*$' | tr '\n' ' ')"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    requirements_met || die "Python requirements still unmet after pip install (see $requirements)"
    changed=1
fi

if ((changed)); then
    log "done: dependencies installed"
else
    log "all dependencies present"
fi
