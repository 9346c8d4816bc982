# Runs one workload under one runtime with several schedules and compares each run's checksum
# bit for bit with a serial run of the same size; also checks each run's own verdict ("ok").
#   cmake -DAPP=<binary> -DRUNTIME=<runtime> -DSCHEDULES=<a;b;c> -DARGS=<workload flags>
#         [-DTHREADS=3] -P workload_check.cmake
# With -DEXPECT_CORRUPT=1 the run must fail its own check (exit 3) instead.
#
# Under `aloe run` (the libgomp interposer): -DALOE=<aloe tool> -DALOE_SCHEDULE=<S> runs every
# non-serial run as `aloe run --schedule S --threads THREADS --summary none -- APP …`, and
# checks besides that the record saw the interposer loaded with ALOE_OMP_SCHEDULE=S (both must
# survive the app's re-execution of itself), that libgomp was the OpenMP library, and, for
# `--schedule runtime`, that the record names the run-sched-var it ran under.
cmake_minimum_required(VERSION 3.22)
if(NOT DEFINED THREADS)
  set(THREADS 3)
endif()
separate_arguments(args UNIX_COMMAND "${ARGS}")

function(run_once runtime schedule out_checksum)
  set(wrap "")
  if(DEFINED ALOE AND NOT runtime STREQUAL "serial")
    set(wrap ${ALOE} run --schedule ${ALOE_SCHEDULE} --threads ${THREADS} --summary none --)
  endif()
  execute_process(COMMAND ${wrap} ${APP} ${args} --runtime ${runtime} --schedule ${schedule}
                          --threads ${THREADS} --json -
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(what "${runtime} '${schedule}'")
  if(wrap)
    set(what "aloe run --schedule ${ALOE_SCHEDULE} -- ${what}")
  endif()
  if(EXPECT_CORRUPT)
    if(NOT rc EQUAL 3)
      message(FATAL_ERROR "${runtime} '${schedule}' with --corrupt-result exited ${rc}, expected 3 "
                          "(the workload's check did not catch a spoiled result)\n${err}")
    endif()
    set(${out_checksum} "" PARENT_SCOPE)
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} exited ${rc}\n${err}")
  endif()
  string(JSON ok GET "${out}" ok)
  if(NOT ok)
    message(FATAL_ERROR "${what}: record says ok=false\n${out}")
  endif()
  if(wrap)
    string(JSON library ERROR_VARIABLE no GET "${out}" openmp_library)
    string(JSON interposer ERROR_VARIABLE no GET "${out}" interposer library)
    string(JSON told ERROR_VARIABLE no GET "${out}" interposer ALOE_OMP_SCHEDULE)
    if(NOT library MATCHES "^libgomp")
      message(FATAL_ERROR "${what}: the OpenMP library was '${library}', not libgomp\n${out}")
    endif()
    if(NOT interposer MATCHES "^libaloe-gomp")
      message(FATAL_ERROR "${what}: the record saw no libaloe-gomp loaded (did LD_PRELOAD "
                          "survive the app's re-execution?)\n${out}\n${err}")
    endif()
    if(NOT told STREQUAL ALOE_SCHEDULE)
      message(FATAL_ERROR "${what}: the app saw ALOE_OMP_SCHEDULE='${told}'\n${out}")
    endif()
    if(schedule MATCHES "^runtime")
      string(JSON value ERROR_VARIABLE no GET "${out}" runtime_schedule value)
      if(value STREQUAL "" OR value MATCHES "NOTFOUND$")
        message(FATAL_ERROR "${what}: the record has no runtime_schedule value\n${out}")
      endif()
      set(what "${what} (run-sched-var ${value})")
    endif()
  endif()
  string(JSON bits GET "${out}" checksum_bits)
  set(${out_checksum} "${bits}" PARENT_SCOPE)
endfunction()

run_once(serial serial reference)
foreach(schedule IN LISTS SCHEDULES)
  run_once(${RUNTIME} "${schedule}" bits)
  if(NOT EXPECT_CORRUPT AND NOT bits STREQUAL reference)
    message(FATAL_ERROR "${RUNTIME} '${schedule}': checksum ${bits} differs from serial ${reference}")
  endif()
  if(DEFINED ALOE)
    message(STATUS "aloe run --schedule ${ALOE_SCHEDULE} -- ${RUNTIME} '${schedule}': ok ${bits}")
  else()
    message(STATUS "${RUNTIME} '${schedule}': ok ${bits}")
  endif()
endforeach()
