# Shared by aloe_run_check.cmake and report_folder_check.cmake (CTest runs one case per
# process): the case's folder, `run` and the checks. Every run gets TMPDIR=<WORK>/tmp and runs
# in <WORK> (relative names land there); after each case no report folder (aloe-run-*) may be
# left in that TMPDIR unless the case sets folders_may_remain (finish_case).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}" "${WORK}/tmp")
set(RUN_ENV "")  # VAR=value words a case sets for the runs that follow
# What a developer's shell or a batch job may have set and aloe run would read: a launcher's
# rank (which renames outputs) and aloe run's defaults. Unset for every run, before RUN_ENV.
set(clean_env "")
foreach(var OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID ALOE_SCHEDULE ALOE_OMP_SCHEDULE ALOE_OMP_RULES
            ALOE_OMP_STATS ALOE_OMP_SUMMARY ALOE_TRACE ALOE_NUM_THREADS OMP_NUM_THREADS)
  list(APPEND clean_env --unset=${var})
endforeach()

# run_tool(<result prefix> subcommand args...): runs `aloe subcommand args...` in WORK with
# RUN_ENV; sets <prefix>_rc, _out, _err.
function(run_tool prefix)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean_env} "TMPDIR=${WORK}/tmp" ${RUN_ENV} ${ALOE} ${ARGN}
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()

# run(<result prefix> args...): run_tool for `aloe run args...`. The arguments pass through a
# CMake list: a ';' inside one would split it (shell commands in the cases separate their
# parts with newlines), and an empty one would vanish.
function(run prefix)
  run_tool(${prefix} run ${ARGN})
  set(${prefix}_rc "${${prefix}_rc}" PARENT_SCOPE)
  set(${prefix}_out "${${prefix}_out}" PARENT_SCOPE)
  set(${prefix}_err "${${prefix}_err}" PARENT_SCOPE)
endfunction()

# expect(<message> <condition words...>)
function(expect what)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "aloe run ${CASE}: ${what}\n--- stdout:\n${r_out}\n--- stderr:\n${r_err}")
  endif()
endfunction()

function(expect_contains what haystack needle)
  string(FIND "${haystack}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "aloe run ${CASE}: ${what}: '${needle}' not found in:\n${haystack}")
  endif()
endfunction()

function(expect_not_contains what haystack needle)
  string(FIND "${haystack}" "${needle}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "aloe run ${CASE}: ${what}: '${needle}' found in:\n${haystack}")
  endif()
endfunction()

# expect_usage_error(<label> args...): `aloe run args... -- echo ran` exits 2 before the program
# starts; `r_err` names what is wrong (checked by the caller).
macro(expect_usage_error label)
  run(r ${ARGN} -- echo ran)
  expect("${label}: a usage error (got ${r_rc})" r_rc EQUAL 2)
  expect("${label}: the program did not run" NOT r_out MATCHES "ran")
endmacro()

# The report folders aloe run left in WORK/tmp.
function(report_folders out)
  file(GLOB left LIST_DIRECTORIES true "${WORK}/tmp/aloe-run-*")
  set(${out} "${left}" PARENT_SCOPE)
endfunction()

# json_rows_of_pid(<out> <json> <member> <pid>): indices of `member`'s rows whose pid is <pid>.
function(json_rows_of_pid out json member pid)
  set(rows "")
  string(JSON n LENGTH "${json}" ${member})
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON p GET "${json}" ${member} ${i} pid)
      if(p EQUAL pid)
        list(APPEND rows ${i})
      endif()
    endforeach()
  endif()
  set(${out} "${rows}" PARENT_SCOPE)
endfunction()

# expect_full_loops(<stats json> <pid>): that process ran summary_program's four loops in full.
function(expect_full_loops stats pid)
  json_rows_of_pid(rows "${stats}" loops ${pid})
  list(LENGTH rows n)
  expect("process ${pid} has 4 loop rows (got ${n})" n EQUAL 4)
  foreach(i ${rows})
    string(JSON asked GET "${stats}" loops ${i} asked)
    if(asked STREQUAL "ordered")
      string(JSON fw GET "${stats}" loops ${i} forwarded)
      expect("process ${pid}: the ordered loop was forwarded 5 times (got ${fw})" fw EQUAL 5)
    else()
      string(JSON taken GET "${stats}" loops ${i} taken)
      string(JSON it GET "${stats}" loops ${i} iterations)
      expect("process ${pid}: loop ${asked} taken 5 times (got ${taken})" taken EQUAL 5)
      expect("process ${pid}: loop ${asked} ran 5 x 20000 iterations (got ${it})" it EQUAL 100000)
    endif()
  endforeach()
endfunction()

# The pids of the processes in a stats document that ran at least one loop.
function(pids_with_loops out stats)
  set(pids "")
  string(JSON n LENGTH "${stats}" processes)
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON loops GET "${stats}" processes ${i} loops)
      if(loops GREATER 0)
        string(JSON pid GET "${stats}" processes ${i} pid)
        list(APPEND pids ${pid})
      endif()
    endforeach()
  endif()
  set(${out} "${pids}" PARENT_SCOPE)
endfunction()

set(folders_may_remain FALSE)

# Ends a case: no report folder left behind unless the case said so.
macro(finish_case)
  if(NOT folders_may_remain)
    report_folders(left)
    expect("no report folder is left in TMPDIR (${left})" NOT left)
  endif()
endmacro()
