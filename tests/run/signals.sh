#!/usr/bin/env bash
# Signals and `aloe run`: bash signals.sh <aloe> <case> <work folder>
#
#   usr1 usr2 term hup alrm winch: the signal, sent with kill to aloe run's pid (as timeout,
#       Slurm or a user's script would), reaches the program; the program's trap prints what
#       it got and exits with its own code, which aloe run passes through.
#   int_once: SIGINT sent with kill to aloe run reaches the program exactly once.
#   group_once: a signal sent to aloe run's process group reaches the program exactly once.
#   sigkill: SIGKILL to aloe run kills the program too (PR_SET_PDEATHSIG); the report folder
#       it could not remove is swept by the next aloe run.
#
# Before issue 12, aloe run forwarded only TERM and HUP (term and hup guard that): USR1, USR2,
# ALRM killed aloe run (the default action) and left the program running alone; WINCH was
# dropped; INT was ignored by aloe run and never reached the program; after a SIGKILL the
# program ran on, orphaned.
#
# No timing assertions: every wait polls for a condition, with a generous limit.
set -u
aloe=$1 case=$2 work=$3
rm -rf "$work"
mkdir -p "$work/tmp"
cd "$work" || exit 1
export TMPDIR=$work/tmp
# What a developer's shell or a batch job may have set and aloe run would read or check.
unset OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID ALOE_SCHEDULE ALOE_OMP_SCHEDULE ALOE_OMP_RULES \
    ALOE_OMP_STATS ALOE_OMP_SUMMARY ALOE_TRACE ALOE_NUM_THREADS OMP_NUM_THREADS
# Background jobs of a script get SIGINT and SIGQUIT ignored unless job control is on; with it
# they keep the dispositions a program started from a terminal has.
set -m
# These are the cases of a batch job: no terminal on any standard descriptor, even when the
# suite is run from one (ctest passes its terminal on as standard input). With a terminal the
# program shares aloe run's process group instead (terminal_jobs.py checks that case).
exec </dev/null

# A process is gone when /proc has no entry for it or it is a zombie nobody reaped yet.
alive() {
    [ -r "/proc/$1/stat" ] || return 1
    local state
    state=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

runner='' program=''
# Whatever happens, leave no process of ours behind (by pid: only those this script started).
cleanup() {
    for p in $program $runner; do
        alive "$p" && kill -KILL "$p" 2>/dev/null
    done
}
trap cleanup EXIT

fail() {
    echo "signals.sh $case: $*" >&2
    for f in out err; do [ -s "$f" ] && { echo "--- $f:" >&2; cat "$f" >&2; }; done
    exit 1
}

# wait_for <description> <command...>: polls up to 30 s.
wait_for() {
    local what=$1
    shift
    for _ in $(seq 600); do
        "$@" && return 0
        sleep 0.05
    done
    fail "timed out waiting for $what"
}

gone() { ! alive "$1"; }

# pgid <pid>: the process group, from /proc (field 5 of stat, counted after the command name,
# which is in parentheses and may hold blanks): no external tool, so nothing the test
# environment preloads (the ASan runtime) can get in the way.
pgid() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    set -- $stat
    echo "$3"
}

# ends <pid>: waits (30 s at most) for aloe run to end and sets rc to its exit status.
ends() {
    wait_for "aloe run to end" gone "$1"
    wait "$1"
    rc=$?
}

case $case in
usr1 | usr2 | term | hup | alrm | winch)
    sig=$(echo "$case" | tr a-z A-Z)
    # The program writes its pid once its trap is set (that is when it is ready).
    "$aloe" run --summary none -- bash -c \
        "trap 'echo got $sig; exit 42' $sig; echo \$\$ > ready; while :; do sleep 0.05; done" >out 2>err &
    runner=$!
    wait_for "the program to start" test -s ready
    program=$(cat ready)
    kill -"$sig" "$runner" || fail "kill -$sig $runner"
    ends "$runner"
    [ "$rc" -eq 42 ] || fail "aloe run should pass the program's exit code 42 through, got $rc"
    grep -qx "got $sig" out || fail "the program did not get SIG$sig"
    ;;
int_once)
    # Counts every SIGINT; USR1 (sent after the first INT has been seen) prints the count.
    "$aloe" run --summary none -- bash -c \
        "n=0; trap 'n=\$((n + 1)); echo int >> ints' INT; trap 'echo ints=\$n; exit 43' USR1;
         echo \$\$ > ready; while :; do sleep 0.05; done" >out 2>err &
    runner=$!
    wait_for "the program to start" test -s ready
    program=$(cat ready)
    kill -INT "$runner" || fail "kill -INT $runner"
    wait_for "the program to see SIGINT" test -s ints
    # aloe run is still there: SIGINT sent to it alone does not end it.
    alive "$runner" || fail "aloe run ended on SIGINT instead of waiting for the program"
    kill -USR1 "$runner" || fail "kill -USR1 $runner"
    ends "$runner"
    [ "$rc" -eq 43 ] || fail "aloe run should pass the program's exit code 43 through, got $rc"
    grep -qx "ints=1" out || fail "the program should have seen SIGINT exactly once: $(cat out)"
    ;;
group_once)
    # A signal sent to aloe run's whole process group (kill -SIG -pgid; timeout and batch
    # systems do this) reaches the program once: the program has a process group of its own,
    # so only aloe run gets it and passes it on. Before: both got it, and aloe run passed it on
    # as well, so the program saw it twice. USR2, passed on after, ends the count (aloe run
    # forwards in order, and a pending USR1 is delivered before USR2).
    "$aloe" run --summary none -- bash -c \
        "n=0; trap 'n=\$((n + 1)); echo usr1 >> seen' USR1; trap 'echo usr1=\$n; exit 44' USR2;
         echo \$\$ > ready; while :; do sleep 0.05; done" >out 2>err &
    runner=$!
    wait_for "the program to start" test -s ready
    program=$(cat ready)
    group=$(pgid "$runner")
    [ -n "$group" ] || fail "no process group for aloe run ($runner)"
    [ "$(pgid "$program")" != "$group" ] || fail "the program shares aloe run's process group $group"
    kill -USR1 -- "-$group" || fail "kill -USR1 -$group"
    wait_for "the program to see SIGUSR1" test -s seen
    kill -USR2 "$runner" || fail "kill -USR2 $runner"
    ends "$runner"
    [ "$rc" -eq 44 ] || fail "aloe run should pass the program's exit code 44 through, got $rc"
    grep -qx "usr1=1" out || fail "the program should have seen SIGUSR1 exactly once: $(cat out)"
    ;;
sigkill)
    # --stats: with an output asked for, aloe run has a report folder to leave behind.
    "$aloe" run --summary none --stats s.json -- bash -c 'echo $$ > ready; while :; do sleep 0.05; done' >out 2>err &
    runner=$!
    wait_for "the program to start" test -s ready
    program=$(cat ready)
    alive "$program" || fail "the program $program is not running"
    kill -KILL "$runner"
    wait "$runner" 2>/dev/null
    for _ in $(seq 200); do # 10 s
        alive "$program" || break
        sleep 0.05
    done
    alive "$program" && fail "the program (pid $program) outlived aloe run by 10 s"
    left=$(ls -d "$TMPDIR"/aloe-run-* 2>/dev/null | wc -l)
    [ "$left" -eq 1 ] || fail "aloe run killed by SIGKILL should leave its report folder (found $left)"
    "$aloe" run --summary none --stats s.json -- /bin/true >out 2>err || fail "the next aloe run failed"
    left=$(ls -d "$TMPDIR"/aloe-run-* 2>/dev/null | wc -l)
    [ "$left" -eq 0 ] || fail "the next aloe run should sweep the abandoned folder (found $left)"
    ;;
*)
    fail "unknown case"
    ;;
esac
left=$(ls -d "$TMPDIR"/aloe-run-* 2>/dev/null | wc -l)
[ "$left" -eq 0 ] || fail "$left report folder(s) left in TMPDIR"
echo "signals.sh $case: ok"
