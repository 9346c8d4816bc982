# `aloe run`'s private report folder and the temporary directory it lives in, one scenario per
# CTest test:
#   cmake -DALOE=<aloe> -DEXIT_PROGRAM=<exit_without_handlers> -DPROGRAM=<summary_program>
#         -DCASE=<name> -DWORK=<dir> -P report_folder_check.cmake
# Some cases fail with the implementation reviewed for issue 12; each says so and why.
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/run_helpers.cmake)

if(CASE STREQUAL "tmp_cleaned")
  # before: no report folder; the summary went through an aloe-run-summary-* file in TMPDIR
  # that an aloe run killed by a signal left behind, and nothing removed such leftovers.
  run(r -- /bin/true)
  expect("ok: 0 (got ${r_rc})" r_rc EQUAL 0)
  run(r -- sh -c "exit 5")
  expect("failing program: 5 (got ${r_rc})" r_rc EQUAL 5)
  run(r -- sh -c "kill -KILL $$")
  expect("killed program: 137 (got ${r_rc})" r_rc EQUAL 137)
  run(r -- ./no-such-program)
  expect("exec failure: 127 (got ${r_rc})" r_rc EQUAL 127)
  run(r --threads 0 -- /bin/true)
  expect("usage error: 2 (got ${r_rc})" r_rc EQUAL 2)
  report_folders(left)
  expect("no report folder is left (${left})" NOT left)
  # A folder whose aloe run is gone (its lock is free) is swept by the next run.
  file(MAKE_DIRECTORY "${WORK}/tmp/aloe-run-1-AbCdEf")
  file(TOUCH "${WORK}/tmp/aloe-run-1-AbCdEf/.lock" "${WORK}/tmp/aloe-run-1-AbCdEf/00000000000000000001-1.json")
  run(r --summary none -- /bin/true)
  expect("runs (got ${r_rc})" r_rc EQUAL 0)
  expect("an abandoned folder is swept" NOT EXISTS "${WORK}/tmp/aloe-run-1-AbCdEf")
  # One whose lock is held (an aloe run still running) is kept; a lock-less one is kept while
  # it may still be being created.
  file(MAKE_DIRECTORY "${WORK}/tmp/aloe-run-2-AbCdEf" "${WORK}/tmp/aloe-run-3-AbCdEf")
  file(TOUCH "${WORK}/tmp/aloe-run-2-AbCdEf/.lock")
  set(hold [=[
lock=$1 pidfile=$2 aloe=$3
flock -o "$lock" sh -c 'echo $$ > "$0"; exec sleep 60' "$pidfile" &
holder=$!
i=0
while flock -n "$lock" true; do   # until the holder has it
  i=$((i + 1)); [ $i -gt 1200 ] && { kill $holder; exit 90; }
  sleep 0.05
done
"$aloe" run --summary none -- /bin/true; rc=$?
while [ ! -s "$pidfile" ]; do sleep 0.05; done
kill "$(cat "$pidfile")" $holder
wait
exit $rc
]=])
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean_env} "TMPDIR=${WORK}/tmp" sh -c "${hold}" sh
                          "${WORK}/tmp/aloe-run-2-AbCdEf/.lock" "${WORK}/holder.pid" ${ALOE}
                  RESULT_VARIABLE r_rc OUTPUT_VARIABLE r_out ERROR_VARIABLE r_err TIMEOUT 120)
  expect("run beside a held lock (got ${r_rc})" r_rc EQUAL 0)
  expect("a folder whose lock is held is kept" EXISTS "${WORK}/tmp/aloe-run-2-AbCdEf/.lock")
  expect("a fresh folder without a lock is kept" IS_DIRECTORY "${WORK}/tmp/aloe-run-3-AbCdEf")
  # Once the lock is free, the next run sweeps it.
  run(r --summary none -- /bin/true)
  expect("the released folder is swept" NOT EXISTS "${WORK}/tmp/aloe-run-2-AbCdEf")
  file(REMOVE_RECURSE "${WORK}/tmp/aloe-run-3-AbCdEf")
  # Not swept: a link named like a folder, and (as root) a folder of another user.
  file(MAKE_DIRECTORY "${WORK}/elsewhere")
  file(TOUCH "${WORK}/elsewhere/.lock")
  file(CREATE_LINK "${WORK}/elsewhere" "${WORK}/tmp/aloe-run-4-AbCdEf" SYMBOLIC)
  run(r --summary none -- /bin/true)
  expect("a link is not followed" EXISTS "${WORK}/elsewhere/.lock")
  file(REMOVE "${WORK}/tmp/aloe-run-4-AbCdEf")
  execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(uid STREQUAL "0")
    file(MAKE_DIRECTORY "${WORK}/tmp/aloe-run-5-AbCdEf")
    file(TOUCH "${WORK}/tmp/aloe-run-5-AbCdEf/.lock")
    execute_process(COMMAND chown -R nobody "${WORK}/tmp/aloe-run-5-AbCdEf")
    run(r --summary none -- /bin/true)
    expect("another user's folder is kept" EXISTS "${WORK}/tmp/aloe-run-5-AbCdEf/.lock")
    file(REMOVE_RECURSE "${WORK}/tmp/aloe-run-5-AbCdEf")
  else()
    message(STATUS "tmp_cleaned: not root, so the other-user folder part is not checked")
  endif()
elseif(CASE STREQUAL "no_report_stale_outputs")
  # The program ran and ended 0, but no process reported (it ended with _exit): the files asked
  # for must not keep an earlier run's text while aloe run says 0. Either they are replaced (an
  # empty document) or the run ends 1. (Left stale, exit 0, by the implementation reviewed for
  # issue 12: see the report.)
  file(WRITE "${WORK}/s.json" "stale statistics\n")
  file(WRITE "${WORK}/summary.txt" "stale summary\n")
  run(r --stats s.json --summary summary.txt -- ${EXIT_PROGRAM})
  file(READ "${WORK}/s.json" stats)
  file(READ "${WORK}/summary.txt" summary)
  expect("the statistics are this run's, or the run says 1 (got ${r_rc}, '${stats}')"
         r_rc EQUAL 1 OR NOT stats STREQUAL "stale statistics\n")
  expect("the summary is this run's, or the run says 1 (got ${r_rc}, '${summary}')"
         r_rc EQUAL 1 OR NOT summary STREQUAL "stale summary\n")
elseif(CASE STREQUAL "concurrent_runs")
  # mpirun starting many ranks on one node: their aloe runs share TMPDIR and sweep it at the same
  # moment; none may take another's folder for abandoned. A stress test: it cannot fail on a
  # correct implementation, and failed in about half of its rounds on the one reviewed for issue
  # 12 (a sweep can lock a new .lock between its creation and its owner's flock; see the report).
  set(burst [=[
aloe=$1 rounds=$2 width=$3
r=0
while [ $r -lt $rounds ]; do
  i=0
  while [ $i -lt $width ]; do
    "$aloe" run --summary none --stats "s$r-$i.json" -- /bin/true 2> "e$r-$i" &
    i=$((i + 1))
  done
  wait
  r=$((r + 1))
done
]=])
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean_env} "TMPDIR=${WORK}/tmp" sh -c "${burst}" sh ${ALOE} 5 32
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE r_rc OUTPUT_VARIABLE r_out ERROR_VARIABLE r_err
                  TIMEOUT 200)
  expect("the runs ended (got ${r_rc})" r_rc EQUAL 0)
  file(GLOB written RELATIVE "${WORK}" "${WORK}/s*.json")
  list(LENGTH written n)
  set(lost "")
  foreach(r RANGE 4)
    foreach(i RANGE 31)
      if(NOT EXISTS "${WORK}/s${r}-${i}.json")
        file(READ "${WORK}/e${r}-${i}" why)
        string(APPEND lost "run ${r}-${i}: ${why}")
      endif()
    endforeach()
  endforeach()
  expect("every one of 160 concurrent runs wrote its statistics (${n} did):\n${lost}" n EQUAL 160)
elseif(CASE STREQUAL "tmp_user_folder_kept")
  # A folder of the user's that merely starts with aloe-run- (no lock, not aloe run's name
  # pattern) must survive the sweep however old it is. (Removed by the implementation
  # reviewed for issue 12: see the report.)
  file(MAKE_DIRECTORY "${WORK}/tmp/aloe-run-results")
  file(WRITE "${WORK}/tmp/aloe-run-results/precious.txt" "keep me\n")
  string(TIMESTAMP now "%s" UTC)
  math(EXPR old "${now} - 3 * 86400")
  execute_process(COMMAND touch -d "@${old}" "${WORK}/tmp/aloe-run-results")
  run(r --summary none -- /bin/true)
  expect("runs (got ${r_rc})" r_rc EQUAL 0)
  expect("the user's folder is kept" EXISTS "${WORK}/tmp/aloe-run-results/precious.txt")
  set(folders_may_remain TRUE)
elseif(CASE STREQUAL "relative_tmpdir")
  # TMPDIR=. and a program that changes folder: the reports must still reach aloe run.
  # (Lost with the implementation reviewed for issue 12: see the report.)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean_env} TMPDIR=. ${ALOE} run --summary none --stats s.json
                          -- sh -c "cd / && exec \"$1\"" sh ${PROGRAM}
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE r_rc OUTPUT_VARIABLE r_out ERROR_VARIABLE r_err
                  TIMEOUT 120)
  expect("runs (got ${r_rc})" r_rc EQUAL 0)
  expect_not_contains("no report is lost" "${r_err}" "W503")
  expect("the statistics are written" EXISTS "${WORK}/s.json")
  file(GLOB left LIST_DIRECTORIES true "${WORK}/aloe-run-*")
  expect("no report folder is left in ." NOT left)
elseif(CASE STREQUAL "unusable_tmpdir")
  # TMPDIR names a folder where none can be made: the outputs asked for cannot be written, so
  # the run must not end 0 as if they were. (Ends 0 with the implementation reviewed for
  # issue 12: see the report.)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean_env} TMPDIR=/proc ${ALOE} run --summary none --stats s.json -- /bin/true
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE r_rc OUTPUT_VARIABLE r_out ERROR_VARIABLE r_err
                  TIMEOUT 120)
  expect("the statistics are written, or the run says 1 (got ${r_rc})"
         EXISTS "${WORK}/s.json" OR r_rc EQUAL 1)
  # TMPDIR names nothing at all: /tmp is used, and said (before: silently).
  file(REMOVE "${WORK}/s.json")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean_env} TMPDIR=${WORK}/no-such-folder ${ALOE} run --summary none
                          --stats s.json -- /bin/true
                  WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE r_rc OUTPUT_VARIABLE r_out ERROR_VARIABLE r_err
                  TIMEOUT 120)
  expect("a TMPDIR that names no folder: the run goes on through /tmp (got ${r_rc})" r_rc EQUAL 0)
  expect("the statistics are written" EXISTS "${WORK}/s.json")
  expect_contains("says which TMPDIR it left" "${r_err}" "no-such-folder")
else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
finish_case()
