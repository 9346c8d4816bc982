# Runs one workload under one runtime with several schedules and compares each run's checksum
# bit for bit with a serial run of the same size; also checks each run's own verdict ("ok").
#   cmake -DAPP=<binary> -DRUNTIME=<runtime> -DSCHEDULES=<a;b;c> -DARGS=<workload flags>
#         [-DTHREADS=3] -P workload_check.cmake
# With -DEXPECT_CORRUPT=1 the run must fail its own check (exit 3) instead.
cmake_minimum_required(VERSION 3.22)
if(NOT DEFINED THREADS)
  set(THREADS 3)
endif()
separate_arguments(args UNIX_COMMAND "${ARGS}")

function(run_once runtime schedule out_checksum)
  execute_process(COMMAND ${APP} ${args} --runtime ${runtime} --schedule ${schedule}
                          --threads ${THREADS} --json -
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(EXPECT_CORRUPT)
    if(NOT rc EQUAL 3)
      message(FATAL_ERROR "${runtime} '${schedule}' with --corrupt-result exited ${rc}, expected 3 "
                          "(the workload's check did not catch a spoiled result)\n${err}")
    endif()
    set(${out_checksum} "" PARENT_SCOPE)
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${runtime} '${schedule}' exited ${rc}\n${err}")
  endif()
  string(JSON ok GET "${out}" ok)
  if(NOT ok)
    message(FATAL_ERROR "${runtime} '${schedule}': record says ok=false\n${out}")
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
  message(STATUS "${RUNTIME} '${schedule}': ok ${bits}")
endforeach()
