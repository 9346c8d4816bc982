# An MPI program without OpenMP under `aloe run --mpi --lend MODE` with a private aloed
# (lending_pure.c): it runs to the end with the right sum (it used to stop in MPI_Init), and
# no rank warns that it could not lend while the daemon answers (W604: the waits before any
# region never read the daemon's answer).
cmake_minimum_required(VERSION 3.20)
set(required MPIEXEC PROGRAM ALOED ALOE WORK MODE)
include(${CMAKE_CURRENT_LIST_DIR}/private_daemon.cmake)
execute_process(
  COMMAND ${MPIEXEC} ${flags} -np 2 --bind-to core -x ALOE_DAEMON_SOCKET=${socket}
          ${ALOE} run --mpi --lend ${MODE} --summary none --mpi-stats ${WORK}/mpi.json -- ${PROGRAM}
  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
stop_private_daemon()
if(NOT out MATCHES "sum 200 check 1")
  message(FATAL_ERROR "wrong or missing result:\n${out}\n${err}")
endif()
if(err MATCHES "fatal|W604")
  message(FATAL_ERROR "the job warned or stopped:\n${err}")
endif()
file(READ ${WORK}/mpi.rank1.json mpi1)
string(JSON waits GET "${mpi1}" lending polite_waits)
message(STATUS "${MODE}: rank 1 waited ${waits} times")
