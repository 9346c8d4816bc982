# Runs one OpenMP test program twice, plainly on GNU libgomp and under `aloe run`, and
# requires both runs to exit 0 with byte-identical stdout (tests/omp/).
#
#   cmake -DALOE=<aloe binary> -DPROGRAM=<test program> -DSCHEDULE=<S> -DTHREADS=<n>
#         [-DEXTRA_ENV=VAR=value|VAR=value] [-DRUN_TIMEOUT=<seconds, default 120>]
#         [-DEXPECT_SUMMARY=1] -P compare_with_libgomp.cmake
#
# Both runs get OMP_NUM_THREADS=n and OMP_SCHEDULE=dynamic,2 (so schedule(runtime) loops do
# something non-trivial on libgomp); every other OMP_*, GOMP_* and ALOE_* variable and
# LD_PRELOAD are removed first, so the developer's own settings cannot change a result. Then
# EXTRA_ENV's assignments apply to both runs (an ASan build passes LD_PRELOAD=<libasan.so>
# there: `aloe run` puts its interposer in front of an LD_PRELOAD it finds).
#
# The second run is `ALOE run --schedule S --threads n --summary none -- PROGRAM`. With
# EXPECT_SUMMARY=1 it is `--summary - --stats <file>` instead, and the stats file must exist
# and be non-empty and the summary on stderr must mention "forwarded" (for programs with
# ordered or doacross loops, which the interposer hands to libgomp).
#
# Each run is killed after RUN_TIMEOUT seconds; a timeout is a failure that says so.
cmake_minimum_required(VERSION 3.22)

foreach(var ALOE PROGRAM SCHEDULE THREADS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "compare_with_libgomp.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED RUN_TIMEOUT)
  set(RUN_TIMEOUT 120)
endif()
get_filename_component(program_name "${PROGRAM}" NAME)
set(what "${program_name} with --schedule ${SCHEDULE} --threads ${THREADS}")

# Prints `details` as they are (program output keeps its lines), then fails with `summary`.
function(fail summary details)
  message(NOTICE "${details}")
  message(FATAL_ERROR "omp conformance: ${what}: ${summary}")
endfunction()

# --- environment ---------------------------------------------------------------------------
execute_process(COMMAND "${CMAKE_COMMAND}" -E environment OUTPUT_VARIABLE environment)
string(REGEX MATCHALL "(^|\n)(OMP|GOMP|ALOE)_[A-Za-z0-9_]*=" inherited "${environment}")
foreach(assignment IN LISTS inherited)
  string(REGEX REPLACE "^\n?([A-Za-z0-9_]+)=$" "\\1" name "${assignment}")
  unset(ENV{${name}})
endforeach()
unset(ENV{LD_PRELOAD})
set(ENV{OMP_NUM_THREADS} "${THREADS}")
set(ENV{OMP_SCHEDULE} "dynamic,2")
if(DEFINED EXTRA_ENV AND NOT EXTRA_ENV STREQUAL "")
  string(REPLACE "|" ";" assignments "${EXTRA_ENV}")
  foreach(a IN LISTS assignments)
    string(FIND "${a}" "=" eq)
    if(eq LESS 1)
      message(FATAL_ERROR "compare_with_libgomp.cmake: EXTRA_ENV entry '${a}' is not VAR=value")
    endif()
    string(SUBSTRING "${a}" 0 ${eq} name)
    math(EXPR value_at "${eq} + 1")
    string(SUBSTRING "${a}" ${value_at} -1 value)
    set(ENV{${name}} "${value}")
  endforeach()
endif()

# --- the two runs --------------------------------------------------------------------------
# A run's result: <prefix>_out, <prefix>_err, <prefix>_rc; a timeout fails at once.
function(run_one prefix description)
  execute_process(COMMAND ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc
                  TIMEOUT ${RUN_TIMEOUT})
  if(rc MATCHES "timeout")
    fail("${description} did not finish within ${RUN_TIMEOUT} s (killed)"
         "--- its stdout so far:\n${out}\n--- its stderr so far:\n${err}")
  endif()
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
endfunction()

run_one(plain "the plain run on libgomp" "${PROGRAM}")
if(NOT plain_rc STREQUAL "0")
  fail("the program fails on plain libgomp (exit status ${plain_rc}): the test program or libgomp is wrong, not aloe"
       "--- stdout with libgomp:\n${plain_out}\n--- stderr with libgomp:\n${plain_err}")
endif()

set(aloe_args run --schedule "${SCHEDULE}" --threads "${THREADS}")
if(EXPECT_SUMMARY)
  string(REGEX REPLACE "[^A-Za-z0-9_.]" "_" stats_tag "${program_name}.${SCHEDULE}.t${THREADS}")
  set(stats_file "${CMAKE_CURRENT_BINARY_DIR}/stats-${stats_tag}.json")
  file(REMOVE "${stats_file}")
  list(APPEND aloe_args --summary - --stats "${stats_file}")
else()
  list(APPEND aloe_args --summary none)
endif()
string(REPLACE ";" " " aloe_command "${ALOE} ${aloe_args} -- ${PROGRAM}")
run_one(aloe "`${aloe_command}`" "${ALOE}" ${aloe_args} -- "${PROGRAM}")

# --- verdict -------------------------------------------------------------------------------
string(CONCAT both "--- stdout with libgomp:\n${plain_out}\n--- stdout under aloe run:\n${aloe_out}\n"
                  "--- stderr under aloe run:\n${aloe_err}")

if(NOT aloe_rc STREQUAL "0")
  fail("`${aloe_command}` exited with status ${aloe_rc} (0 on plain libgomp)" "${both}")
endif()

if(NOT aloe_out STREQUAL plain_out)
  # A few lines around the first difference, - libgomp, + aloe. Lines are compared as list
  # items, so ';' and brackets are neutralised first.
  foreach(side plain aloe)
    string(REGEX REPLACE "\n$" "" text "${${side}_out}") # no empty line after the last one
    string(REPLACE ";" "<semicolon>" text "${text}")
    string(REPLACE "[" "<" text "${text}")
    string(REPLACE "]" ">" text "${text}")
    string(REPLACE "\n" ";" ${side}_lines "${text}")
    list(LENGTH ${side}_lines ${side}_count)
  endforeach()
  set(first 0)
  while(first LESS plain_count AND first LESS aloe_count)
    list(GET plain_lines ${first} p)
    list(GET aloe_lines ${first} a)
    if(NOT p STREQUAL a)
      break()
    endif()
    math(EXPR first "${first} + 1")
  endwhile()
  math(EXPR from "${first} - 2")
  if(from LESS 0)
    set(from 0)
  endif()
  math(EXPR to "${first} + 5")
  set(longest ${plain_count})
  if(aloe_count GREATER longest)
    set(longest ${aloe_count})
  endif()
  if(to GREATER_EQUAL longest)
    math(EXPR to "${longest} - 1")
  endif()
  math(EXPR line "${first} + 1")
  set(diff "--- first difference at line ${line} (- libgomp, ${plain_count} lines; + aloe run, ${aloe_count} lines):\n")
  set(k ${from})
  while(k LESS_EQUAL to)
    math(EXPR shown "${k} + 1")
    if(k LESS plain_count)
      list(GET plain_lines ${k} p)
    else()
      set(p "<no line>")
    endif()
    if(k LESS aloe_count)
      list(GET aloe_lines ${k} a)
    else()
      set(a "<no line>")
    endif()
    if(p STREQUAL a)
      string(APPEND diff "  ${shown}:  ${p}\n")
    else()
      string(APPEND diff "  ${shown}: -${p}\n  ${shown}: +${a}\n")
    endif()
    math(EXPR k "${k} + 1")
  endwhile()
  fail("stdout under aloe run differs from plain libgomp (first difference at line ${line})" "${both}\n${diff}")
endif()

if(EXPECT_SUMMARY)
  if(NOT EXISTS "${stats_file}")
    fail("--stats ${stats_file} was not written" "${both}")
  endif()
  file(SIZE "${stats_file}" stats_size)
  if(stats_size EQUAL 0)
    fail("--stats ${stats_file} is empty" "${both}")
  endif()
  if(NOT aloe_err MATCHES "forwarded")
    fail("the summary on stderr does not mention forwarded loops" "${both}")
  endif()
endif()

string(LENGTH "${plain_out}" bytes)
message(STATUS "omp conformance: ${what}: same ${bytes} bytes of stdout as plain libgomp")
