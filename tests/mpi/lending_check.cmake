# Lending end to end (issue 19): a private aloed, jacobi3d-mpi on 2 ranks bound one per core
# with rank 1 three times as heavy, ALOE_LEND=MODE. Checks: the run is correct (the app's
# own check), rank 0 lent its core (its ALOE_MPI_STATS `lending` counts lends), rank 1's
# loops ran iterations on a participant beyond its one own thread (a borrowed core joined
# them), and after the job the daemon holds no client (the cores went back). The grid makes
# the light rank wait several milliseconds a step (the heavy rank's 144 planes of 128 x 128
# against 48): far beyond the 1 ms a prediction needs and the 0.5 ms the borrower takes to
# notice, in each of 30 steps; on a tiny grid no wait is worth lending and none happens.
cmake_minimum_required(VERSION 3.20)
set(required MPIEXEC APP ALOED ALOE MPI_LIB WORK MODE)
include(${CMAKE_CURRENT_LIST_DIR}/private_daemon.cmake)
execute_process(
  COMMAND ${MPIEXEC} ${flags} -np 2 --bind-to core -x ALOE_LEND=${MODE} -x ALOE_DAEMON_SOCKET=${socket}
          -x ALOE_MPI_STATS=${WORK}/mpi.json -x ALOE_STATS=${WORK}/loops.json -x LD_PRELOAD=${MPI_LIB}
          ${APP} --threads 1 --nx 128 --ny 128 --nz 192 --steps 30 --warmup 2 --heavy-rank 1:3 --runtime aloe
          --schedule dynamic,chunk=1 --regions-per-step 2 --json ${WORK}/run.json
  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
stop_private_daemon()
file(READ ${WORK}/run.json run)
string(JSON ok GET "${run}" ok)
if(NOT ok)
  message(FATAL_ERROR "the run's check failed:\n${run}")
endif()
file(READ ${WORK}/mpi.rank0.json mpi0)
string(JSON lends GET "${mpi0}" lending lends)
string(JSON mode GET "${mpi0}" lending mode)
if(NOT mode STREQUAL MODE OR lends LESS 1)
  message(FATAL_ERROR "rank 0 did not lend (mode ${mode}, lends ${lends}):\n${mpi0}\n${err}")
endif()
# Where the lends happened: reactive lends only after waiting; predictive, on a slack of
# several ms a step, at the entry of its waits once the path has a prediction.
string(JSON at_entry GET "${mpi0}" lending lends_at_entry)
if(at_entry GREATER lends OR (MODE STREQUAL "reactive" AND at_entry GREATER 0) OR
   (MODE STREQUAL "predictive" AND at_entry LESS 1))
  message(FATAL_ERROR "rank 0's lends at a wait's entry (${at_entry} of ${lends}) do not fit ${MODE}:\n${mpi0}")
endif()
file(READ ${WORK}/loops.rank1.json loops1)
string(JSON sites LENGTH "${loops1}" sites)
set(guest 0)
math(EXPR last "${sites} - 1")
foreach(s RANGE ${last})
  string(JSON threads LENGTH "${loops1}" sites ${s} total)
  math(EXPR tl "${threads} - 1")
  foreach(t RANGE ${tl})
    string(JSON id GET "${loops1}" sites ${s} total ${t} thread)
    string(JSON its GET "${loops1}" sites ${s} total ${t} iterations)
    if(id GREATER 0)
      math(EXPR guest "${guest} + ${its}")
    endif()
  endforeach()
endforeach()
if(guest LESS 1)
  message(FATAL_ERROR "rank 1's loops ran nothing on a borrowed core:\n${loops1}")
endif()
if(NOT status MATCHES "\"clients\": \\[\\]")
  message(FATAL_ERROR "the daemon still holds clients after the job: ${status}")
endif()
message(STATUS "rank 0 lent ${lends} times (${at_entry} at a wait's entry); rank 1 ran ${guest} iterations on borrowed cores")
