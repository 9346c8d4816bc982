# Shared by the lending checks: checks that the variables `required` names were given, makes
# an empty WORK folder and starts a private aloed there (its socket in `socket`, its process
# id in `daemon`; stop_private_daemon() stops it).
foreach(v IN LISTS required)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: ${v} not given")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(socket ${WORK}/aloed.sock)
execute_process(COMMAND sh -c "'${ALOED}' --socket '${socket}' >/dev/null 2>'${WORK}/aloed.log' & echo $!"
                OUTPUT_VARIABLE daemon OUTPUT_STRIP_TRAILING_WHITESPACE)
foreach(i RANGE 100)
  if(EXISTS ${socket})
    break()
  endif()
  execute_process(COMMAND sleep 0.05)
endforeach()
separate_arguments(flags UNIX_COMMAND "${MPIEXEC_FLAGS}")

# After the job: the daemon's status (in `status`), the daemon stopped, a failed job fails.
macro(stop_private_daemon)
  execute_process(COMMAND env ALOE_DAEMON_SOCKET=${socket} ${ALOE} daemon status --json OUTPUT_VARIABLE status)
  execute_process(COMMAND kill ${daemon})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit status ${rc}\n${out}\n${err}")
  endif()
endmacro()
