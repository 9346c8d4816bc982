# aloe: the commands a newcomer needs. See README.md.
#
#   make demo        install what is missing, build, run the demo
#   make test        release tests, then the same under TSan and ASan+UBSan, then pytest
#   make test-quick  release tests only
#   make bench       build, then scripts/bench.sh
#   make install     cmake --install build/release (PREFIX=/usr/local by default)
#   make docs        the public headers' reference (Doxygen) in build/docs/html
#
# Build folders are configured once; after that `cmake --build` re-runs CMake by itself
# when a CMakeLists.txt changes. `make clean` removes them.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build
# The steps share 2 cores through ninja; running them side by side would only thrash.
.NOTPARALLEL:

PREFIX ?= /usr/local
CMAKE ?= cmake
CTEST ?= ctest
JOBS ?= $(shell nproc)
PYTHON ?= .venv/bin/python
BUILD_TYPE ?= RelWithDebInfo
SUMMARY := build/test-summary.txt

# Per suite: build folder, extra CMake options, environment for ctest, per-test timeout (s).
# (Tests registered by gtest_discover_tests carry their own TIMEOUT; this covers the rest.)
DIR_release := build/release
DIR_tsan    := build/tsan
DIR_asan    := build/asan
# Sanitizer builds keep line tables only (-g1: all a sanitizer report needs). TSan compiles at
# -O1. ASan+UBSan at -O0: the tree's compile took 828 -> 550 CPU-s on the 2-core VM and its
# tests 280 -> 397 test-s (ctest 140 -> 199 s), most of that the simulator's, which keeps -O1
# (tools/sim/CMakeLists.txt); the tests' own code is -O0 in both (tests/CMakeLists.txt).
# Set TSAN_OPT= or ASAN_OPT= to keep CMake's RelWithDebInfo flags. Read when a folder is configured.
ifneq ($(origin SAN_OPT),undefined)
$(error SAN_OPT is now two settings, TSAN_OPT and ASAN_OPT (the trees' flags differ): set those instead)
endif
TSAN_OPT ?= -O1 -g1 -DNDEBUG
ASAN_OPT ?= -O0 -g1 -DNDEBUG
opt_flags = $(if $(1),-DCMAKE_CXX_FLAGS_RELWITHDEBINFO='$(1)' -DCMAKE_C_FLAGS_RELWITHDEBINFO='$(1)')
# The release folder: -O2 with line tables only (-g1: function names and source lines for perf
# and backtraces; a third less compile time than -g). Set REL_OPT= for CMake's -O2 -g.
REL_OPT ?= -O2 -g1 -DNDEBUG
# Unity builds: each target's sources are compiled 16 to a translation unit, so the headers
# (the standard library's, hwloc's, GoogleTest's) are parsed once per batch instead of once
# per file. From a fresh clone on the 2-core VM the three builds took 533, 362 and 648 s per
# file, and take 324, 178 and 381 s so (with the sanitizer trees' leaner scope, below);
# `make test` went from 2053 to 1360 s; with the test code at -O1 in the release tree and the
# ASan+UBSan tree at -O0, 1291 s from a fresh clone (1482 s in a slower hour of the VM); with
# the test code at -O0 in every tree, the release build 381 -> 307 s in one hour (over the
# 15-minute budget still: CHANGELOG).
# A file whose anonymous-namespace names clash with a neighbour's is kept apart
# (SKIP_UNITY_BUILD_INCLUSION, e.g. aloe_test_sources_apart in tests/). UNITY=OFF for
# per-file builds (quicker to rebuild after editing one file). Read when a folder is configured.
UNITY ?= ON
UNITY_FLAGS := $(if $(filter ON,$(UNITY)),-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
# The sanitizer trees leave out the benchmarks and the workloads (apps/, and their tests): they
# check the runtime's threads and memory, which the workloads only use; the release tree runs
# the workloads' tests. They leave out libaloe-mpi too: its tests run under mpirun in the
# release tree only (the MPI library is not built with a sanitizer). The TSan tree also leaves
# out the unit test files that start no thread (SINGLE_THREADED in tests/CMakeLists.txt).
SAN_SCOPE    := -DALOE_BUILD_BENCH=OFF -DALOE_BUILD_APPS=OFF -DALOE_WITH_MPI=OFF
OPTS_release := $(call opt_flags,$(REL_OPT)) $(UNITY_FLAGS)
OPTS_tsan    := -DALOE_SANITIZER=thread $(SAN_SCOPE) $(call opt_flags,$(TSAN_OPT)) $(UNITY_FLAGS)
OPTS_asan    := -DALOE_SANITIZER=address $(SAN_SCOPE) $(call opt_flags,$(ASAN_OPT)) $(UNITY_FLAGS)
ENV_release :=
ENV_tsan    := TSAN_OPTIONS='halt_on_error=1 second_deadlock_stack=1'
ENV_asan    := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Tests run at once: many of the release and TSan trees' tests wait (on programs they start,
# on a daemon, on sleeps) and left a quarter of the CPU idle at -j2; at -j3 their ctest took
# 113 -> 87 s and 131 -> 103 s on the 2-core VM (-j4: 94 s). The ASan+UBSan tree's tests
# keep the CPU busy (5% idle): -j2.
CTEST_JOBS_release := 3
CTEST_JOBS_tsan    := 3
CTEST_JOBS_asan    := 2
TIMEOUT_release := 300
TIMEOUT_tsan    := 600
TIMEOUT_asan    := 600
# GCC 12's TSan cannot map its shadow memory when the kernel randomises mmap with more than
# 28 bits (vm.mmap_rnd_bits=32 on newer kernels): run the TSan build and tests with ASLR off.
# The build needs it too, since gtest_discover_tests runs the test binaries.
WRAP_tsan := $(shell r=$$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0); \
               [ "$$r" -gt 28 ] && command -v setarch >/dev/null && echo "setarch $$(uname -m) -R")

.PHONY: deps build test test-quick demo bench install docs clean distclean \
        suite-release suite-tsan suite-asan suite-python

deps:
	@bash scripts/install-deps.sh

# configure <suite>: once, when the folder has no build.ninja yet.
configure = [ -f $(DIR_$(1))/build.ninja ] || \
	$(CMAKE) -S . -B $(DIR_$(1)) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(OPTS_$(1))

build:
	@$(call configure,release)
	$(CMAKE) --build $(DIR_release) -j $(JOBS)

# One suite: configure, build, ctest. Appends one line to $(SUMMARY) and fails when a part fails.
define run_suite
s=$(1); t0=$$SECONDS; build=FAIL; tests=skipped; tb=0; tt=0; \
if [ -n "$(SKIP_IF_RELEASE_BROKEN)" ] && grep -q '^FAIL  release  build FAIL' $(SUMMARY) 2>/dev/null; then \
  echo "$$s: skipped, the release build failed"; build=skipped; \
elif { $(call configure,$(1)); } && $(WRAP_$(1)) $(CMAKE) --build $(DIR_$(1)) -j $(JOBS); then \
  build=ok; tb=$$((SECONDS - t0)); t1=$$SECONDS; \
  if env $(ENV_$(1)) $(WRAP_$(1)) $(CTEST) --test-dir $(DIR_$(1)) --output-on-failure -j$(CTEST_JOBS_$(1)) \
       --timeout $(TIMEOUT_$(1)); then tests=ok; else tests=FAIL; fi; \
  tt=$$((SECONDS - t1)); \
else tb=$$((SECONDS - t0)); fi; \
if [ $$build = ok ] && [ $$tests = ok ]; then r=PASS; else r=FAIL; fi; \
mkdir -p build; \
printf '%-4s  %-7s  build %-4s %4ss   ctest %-7s %4ss   (%s)\n' $$r $$s $$build $$tb $$tests $$tt \
  "$(DIR_$(1))" >> $(SUMMARY); \
[ $$r = PASS ]
endef

suite-release suite-tsan suite-asan: suite-%:
	@echo "== $* =="
	@$(call run_suite,$*)

# pytest over tests/python, two at a time (pytest-xdist: most tests wait on the programs they
# start; 109 -> 58 s on the 2-core VM); exit 5 (no tests collected) counts as a pass.
PYTEST_JOBS ?= 2
suite-python:
	@echo "== python =="
	@t0=$$SECONDS; r=PASS; note=ok; \
	if [ -d tests/python ]; then \
	  rc=0; $(PYTHON) -m pytest -q -n $(PYTEST_JOBS) tests/python || rc=$$?; \
	  if [ $$rc -eq 5 ]; then note="no tests"; elif [ $$rc -ne 0 ]; then r=FAIL; note="pytest exit $$rc"; fi; \
	else note="no tests/python"; fi; \
	mkdir -p build; \
	printf '%-4s  %-7s  %-34s %4ss\n' $$r python "$$note" $$((SECONDS - t0)) >> $(SUMMARY); \
	[ $$r = PASS ]

# Every suite runs even when an earlier one fails (-k), except that a release build that does
# not compile skips the sanitizer builds (they would fail the same way). The summary lists all.
test: deps
	@mkdir -p build && rm -f $(SUMMARY)
	@t0=$$SECONDS; rc=0; \
	$(MAKE) --no-print-directory -k SKIP_IF_RELEASE_BROKEN=1 \
	  suite-release suite-tsan suite-asan suite-python || rc=$$?; \
	echo "== summary ($$((SECONDS - t0))s) =="; cat $(SUMMARY); exit $$rc

test-quick: deps
	@mkdir -p build && rm -f $(SUMMARY)
	@rc=0; $(MAKE) --no-print-directory suite-release || rc=$$?; \
	echo "== summary =="; cat $(SUMMARY); exit $$rc

# The demo: `aloe info`, then scripts/demo.sh when it exists (the hook for the full demo).
demo: deps build
	$(DIR_release)/tools/aloe/aloe info
	@if [ -f scripts/demo.sh ]; then \
	  echo "== scripts/demo.sh =="; bash scripts/demo.sh; \
	else echo "demo: scripts/demo.sh not written yet; 'aloe info' above is the demo for now"; fi

bench: deps build
	@if [ -f scripts/bench.sh ]; then bash scripts/bench.sh; \
	else echo "bench: no scripts/bench.sh yet; the benchmark binaries are in $(DIR_release)/bench"; fi

install: build
	$(CMAKE) --install $(DIR_release) --prefix $(PREFIX)

# The reference of include/aloe (docs/Doxyfile). Doxygen's warnings (undocumented members
# and the like) are listed, never fatal.
docs:
	@command -v doxygen >/dev/null || { echo "docs: doxygen is missing: run 'make deps'" >&2; exit 1; }
	@mkdir -p build/docs
	@ALOE_VERSION=$$(sed -n 's/^project(aloe VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt) doxygen docs/Doxyfile
	@n=$$(grep -c 'warning:' build/docs/warnings.txt || true); \
	if [ "$$n" -gt 0 ]; then cat build/docs/warnings.txt; fi; \
	echo "docs: HTML in build/docs/html/index.html; $$n doxygen warnings (build/docs/warnings.txt)"

clean:
	rm -rf build

# Also removes the project venv (make deps recreates it).
distclean: clean
	rm -rf .venv
