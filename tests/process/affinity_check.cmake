# Runs aloe under a narrowed affinity mask (taskset -c CPU) and checks that the team is sized
# and bound within it (tests/process/, issue 12). CPU is the last CPU this test may use, so
# on a machine with two or more CPUs the mask excludes CPU 0, where an unaware runtime would
# bind worker 0.
#
#   cmake -DTASKSET=<taskset> -DALOE=<aloe tool> -DMODE=info|probe|openmp [-DPROBE=<program>]
#         -P affinity_check.cmake
#
# info:   `aloe info --json`: team size 1 from "allowed cores (affinity mask)", allowed CPUs
#         [CPU], and with ALOE_NUM_THREADS=3 ALOE_PROC_BIND=close every worker on [CPU] and
#         the team marked oversubscribed.
# probe:  PROBE (team_probe.cpp) starts the team: size 1, and with ALOE_NUM_THREADS=2
#         ALOE_PROC_BIND=close every worker ran under the mask [CPU].
# openmp: PROBE built with -fopenmp, under OMP_PROC_BIND=true (libgomp binds the initial
#         thread before aloe's constructor runs): under taskset the same as probe; without
#         taskset the team is as large as `aloe info` says, not the one CPU libgomp left.
cmake_minimum_required(VERSION 3.22)

if(NOT TASKSET)
  message(FATAL_ERROR "taskset (util-linux) was not found when the build was configured: install it")
endif()

# Settings that would change the result, cleared before each run.
set(cleared ALOE_NUM_THREADS OMP_NUM_THREADS ALOE_PROC_BIND OMP_PROC_BIND OMP_PLACES ALOE_VERBOSE
    ALOE_DISPLAY_ENV ALOE_WAIT_POLICY GOMP_CPU_AFFINITY)
set(unset_args "")
foreach(v IN LISTS cleared)
  list(APPEND unset_args --unset=${v})
endforeach()

# run(<out var> <VAR=value>... -- <command>...): runs the command with a clean environment;
# fails the test on a non-zero exit.
function(run out_var)
  set(env "")
  set(cmd "")
  set(in_cmd FALSE)
  foreach(a IN LISTS ARGN)
    if(a STREQUAL "--")
      set(in_cmd TRUE)
    elseif(in_cmd)
      list(APPEND cmd "${a}")
    else()
      list(APPEND env "${a}")
    endif()
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${unset_args} ${env} ${cmd}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${cmd}' (${env}) failed: ${rc}\n--- stdout:\n${out}\n--- stderr:\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(last_run "${env} ${cmd}\n--- stdout:\n${out}\n--- stderr:\n${err}" PARENT_SCOPE)
endfunction()

function(expect what actual expected)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what} is '${actual}', not '${expected}'\n--- run: ${last_run}")
  endif()
endfunction()

# The CPUs this test may use, from the kernel's own list for this process.
file(READ /proc/self/status status)
if(NOT status MATCHES "Cpus_allowed_list:[ \t]*([0-9,-]+)")
  message(FATAL_ERROR "no Cpus_allowed_list in /proc/self/status")
endif()
set(allowed "${CMAKE_MATCH_1}")
string(REGEX MATCH "([0-9]+)$" cpu "${allowed}")
set(several_cpus TRUE)
if(allowed STREQUAL cpu)
  set(several_cpus FALSE)
endif()
set(pin ${TASKSET} -c ${cpu})

if(MODE STREQUAL "info")
  run(out ALOE_PROC_BIND=close -- ${pin} ${ALOE} info --json)
  string(JSON size GET "${out}" team size)
  expect("team.size under taskset -c ${cpu}" "${size}" 1)
  if(several_cpus)
    string(JSON source GET "${out}" team size_source)
    expect("team.size_source" "${source}" "allowed cores (affinity mask)")
    string(JSON limit GET "${out}" topology allowed limited_by 0)
    expect("topology.allowed.limited_by" "${limit}" "affinity mask")
  endif()
  string(JSON allowed_cpus GET "${out}" topology allowed cpus)
  expect("topology.allowed.cpus" "${allowed_cpus}" "${cpu}")
  string(JSON worker_cpu GET "${out}" team workers 0 cpus 0)
  expect("team.workers.0.cpus" "${worker_cpu}" "${cpu}")

  run(out ALOE_PROC_BIND=close ALOE_NUM_THREADS=3 -- ${pin} ${ALOE} info --json)
  string(JSON size GET "${out}" team size)
  expect("team.size with ALOE_NUM_THREADS=3" "${size}" 3)
  string(JSON over GET "${out}" team oversubscribed)
  expect("team.oversubscribed" "${over}" "ON")
  foreach(w RANGE 2)
    string(JSON n LENGTH "${out}" team workers ${w} cpus)
    string(JSON c GET "${out}" team workers ${w} cpus 0)
    expect("team.workers.${w}.cpus" "${n}:${c}" "1:${cpu}")
  endforeach()
elseif(MODE STREQUAL "probe" OR MODE STREQUAL "openmp")
  set(omp_env "")
  if(MODE STREQUAL "openmp")
    set(omp_env OMP_PROC_BIND=true)
  endif()
  run(out ${omp_env} ALOE_PROC_BIND=close -- ${pin} ${PROBE})
  string(JSON size GET "${out}" team_size)
  expect("team_size under taskset -c ${cpu}" "${size}" 1)
  run(out ${omp_env} ALOE_PROC_BIND=close ALOE_NUM_THREADS=2 -- ${pin} ${PROBE})
  string(JSON size GET "${out}" team_size)
  expect("team_size with ALOE_NUM_THREADS=2" "${size}" 2)
  foreach(w RANGE 1)
    string(JSON n LENGTH "${out}" worker_masks ${w})
    string(JSON c GET "${out}" worker_masks ${w} 0)
    expect("worker ${w}'s mask" "${n}:${c}" "1:${cpu}")
  endforeach()
  if(MODE STREQUAL "openmp")
    # No taskset: libgomp binds the initial thread to its first place before aloe's
    # constructor runs; aloe must still size the team from the whole mask.
    run(info -- ${ALOE} info --json)
    string(JSON expected GET "${info}" team size)
    run(out OMP_PROC_BIND=true -- ${PROBE})
    string(JSON size GET "${out}" team_size)
    expect("team_size under OMP_PROC_BIND=true" "${size}" "${expected}")
  endif()
else()
  message(FATAL_ERROR "MODE '${MODE}' is not info, probe or openmp")
endif()
