# An MPI program without OpenMP under `aloe run --mpi --lend MODE` with a private aloed
# (lending_pure.c): it runs to the end with the right sum (it used to stop in MPI_Init), and
# no rank warns that it could not lend while the daemon answers (W604: the waits before any
# region never read the daemon's answer).
cmake_minimum_required(VERSION 3.20)
set(required MPIEXEC PROGRAM ALOED ALOE WORK MODE)
include(${CMAKE_CURRENT_LIST_DIR}/private_daemon.cmake)
# With ARGS no-daemon the ranks are pointed at a socket nobody serves: the job still runs,
# and its rank 0 says once at MPI_Init that both ranks could not reach a daemon (W606; before,
# only a rank that waited said so, and a job whose waiting rank was not the first said it at
# info level only).
if(ARGS STREQUAL "no-daemon")
  set(socket ${WORK}/nobody-serves.sock)
endif()
execute_process(
  COMMAND ${MPIEXEC} ${flags} -np 2 --bind-to core -x ALOE_DAEMON_SOCKET=${socket}
          ${ALOE} run --mpi --lend ${MODE} --summary none --mpi-stats ${WORK}/mpi.json -- ${PROGRAM}
  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
stop_private_daemon()
if(NOT out MATCHES "sum 200 check 1" OR NOT out MATCHES "collectives ok")
  message(FATAL_ERROR "wrong or missing result:\n${out}\n${err}")
endif()
if(ARGS STREQUAL "no-daemon")
  string(REGEX MATCHALL "W606" said "${err}")
  list(LENGTH said times)
  if(NOT times EQUAL 1 OR NOT err MATCHES "W606[^\n]*ALOE_LEND=${MODE}, but 2 ranks of the job could not reach a node daemon")
    message(FATAL_ERROR "expected one W606 naming 2 ranks, got ${times}:\n${err}")
  endif()
elseif(err MATCHES "fatal|W604")
  message(FATAL_ERROR "the job warned or stopped:\n${err}")
endif()
file(READ ${WORK}/mpi.rank1.json mpi1)
string(JSON waits GET "${mpi1}" lending polite_waits)
message(STATUS "${MODE}: rank 1 waited ${waits} times")
