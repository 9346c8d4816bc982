# Lending to an unmodified MPI+OpenMP program (issue 19): a private aloed, lending_omp.c on
# 2 ranks bound one per core under `aloe run --mpi --lend MODE`. With MODE reactive or
# predictive, rank 1's regions must have taken a thread on the core rank 0 lent (a team of
# 2, a thread on a CPU outside its own mask), every loop iteration ran once, and after
# MPI_Finalize every thread is back on the rank's own CPUs; with off, with auto (regions
# borrow only where lending is asked for by name), or when the program has read
# omp_get_max_threads() or omp_get_num_procs() (ARGS reads-...), its teams keep their one thread. The
# daemon holds no client after the job.
cmake_minimum_required(VERSION 3.20)
set(required MPIEXEC PROGRAM ALOED ALOE WORK MODE)
include(${CMAKE_CURRENT_LIST_DIR}/private_daemon.cmake)
execute_process(
  COMMAND ${MPIEXEC} ${flags} -np 2 --bind-to core -x ALOE_DAEMON_SOCKET=${socket} -x OMP_NUM_THREADS=1
          ${ALOE} run --mpi --lend ${MODE} --schedule dynamic,chunk=4 --summary ${WORK}/summary.txt
          --trace ${WORK}/trace.json --mpi-stats ${WORK}/mpi.json
          -- ${PROGRAM} ${ARGS}
  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
stop_private_daemon()
foreach(key widest foreign lost astray)
  if(NOT out MATCHES "${key} (-?[0-9]+)")
    message(FATAL_ERROR "no '${key}' in the output:\n${out}\n${err}")
  endif()
  set(${key} ${CMAKE_MATCH_1})
endforeach()
set(seen "widest ${widest}, foreign ${foreign}, lost ${lost}, astray ${astray}")
if(NOT lost EQUAL 0 OR NOT astray EQUAL 0)
  message(FATAL_ERROR "wrong: ${seen}\n${err}")
endif()
if(MODE STREQUAL "off" OR MODE STREQUAL "auto" OR ARGS MATCHES "^reads-")
  if(NOT widest EQUAL 1 OR NOT foreign EQUAL 0)
    message(FATAL_ERROR "${MODE} ${ARGS}: a region took a borrowed core: ${seen}\n${err}")
  endif()
elseif(widest LESS 2 OR foreign LESS 1)
  file(READ ${WORK}/mpi.rank0.json mpi0)
  message(FATAL_ERROR "rank 1 never took the core rank 0 lent: ${seen}\nrank 0: ${mpi0}\n${err}")
endif()
# The per-step report: rank 1's summary lines, its trace's step slices and its statistics'
# steps (one per MPI_Allreduce cycle, from its second: 28 of the 30; lending off reports none).
file(READ ${WORK}/summary.rank1.txt summary)
file(READ ${WORK}/trace.rank1.json trace)
file(READ ${WORK}/mpi.rank1.json mpi1)
string(JSON steps LENGTH "${mpi1}" lending steps)
# auto: no rank of this job can take a core (its regions borrow only by name), so the job
# does not lend at all (I607): no step report either.
if(MODE STREQUAL "off" OR MODE STREQUAL "auto")
  if(summary MATCHES "lending, rank" OR trace MATCHES "mpi_step" OR NOT steps EQUAL 0)
    message(FATAL_ERROR "lending ${MODE}, yet a step report: ${steps} steps\n${summary}")
  endif()
  string(JSON lends GET "${mpi1}" lending lends)
  if(NOT lends EQUAL 0)
    message(FATAL_ERROR "lending ${MODE}, yet rank 1 lent ${lends} times")
  endif()
else()
  if(NOT summary MATCHES "lending, rank 1 \\(${MODE}\\): 28 steps" OR NOT trace MATCHES "\"cat\":\"mpi_step\"" OR
     NOT steps EQUAL 28)
    message(FATAL_ERROR "no step report for rank 1 (${steps} steps in its statistics):\n${summary}")
  endif()
  string(JSON borrowed GET "${mpi1}" lending steps 20 borrowed_core_s)
  message(STATUS "rank 1's step 20 borrowed ${borrowed} core-s")
endif()
if(NOT status MATCHES "\"clients\": \\[\\]")
  message(FATAL_ERROR "the daemon still holds clients after the job: ${status}")
endif()
message(STATUS "${MODE}: ${seen}")
