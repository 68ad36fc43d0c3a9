#!/usr/bin/env bash
# run_suites.sh build=DIR jobs=N -- SUITE...: make test's suites, N at a
# time, and where the time went.
#
# Each SUITE is NAME or NAME:RESOURCE,...: vN runs make stage-test
# stage=N, any other NAME runs make NAME. Two suites that name the same
# resource never run at once: "zk" for the suites that start ZooKeeper
# servers (their JVMs' start is most of a 2-core machine's CPU for a
# second or two), "report" for the two that write build/report. Suites
# start in the order given (the longest first), each as soon as a slot
# and its resources are free.
#
# Every suite's output goes to DIR/test-logs/NAME.log and is printed
# whole when the suite ends, so the output of suites that ran at once
# does not interleave (Check's "N%: Checks: N, Failures: N, Errors: N"
# line of each is in it). A stage's suite also writes Check's TAP log,
# DIR/test-logs/vN.tap, and DIR/test-logs/vN.done when it has ended: the
# grader's proof reads them (tests/grade_proof.sh taps=DIR). A suite that
# runs past its limit is stopped (timeout: its whole process group) and
# fails. At the end: a line per suite, the slowest first, with its
# seconds, when it started (seconds after the first) and whether it
# passed, then the wall time and the load average;
# the table stays in DIR/test-logs/times.txt (make test-times prints it).
# Exit 1 when any suite failed, 130 on Ctrl-C (every suite stopped).
set -u
cd "$(dirname "$0")/.." || exit 2

build=build jobs=''
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case "$1" in
    build=*) build=${1#build=} ;;
    jobs=*) jobs=${1#jobs=} ;;
    *) echo "run_suites.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || { echo "run_suites.sh: no suites given: run it as make test" >&2; exit 2; }
# Two suites at a time per CPU: most of a suite's time is spent waiting
# out leases and sessions, not computing.
[ -n "$jobs" ] || jobs=$(( $(nproc 2>/dev/null || echo 1) * 2 ))
case "$jobs" in
'' | *[!0-9]* | 0*) echo "jobs=$jobs is not a number of suites at a time: give 1 to 16" >&2; exit 2 ;;
esac
[ "$jobs" -le 16 ] || { echo "jobs=$jobs is above the maximum of 16 suites at a time" >&2; exit 2; }

LOGS=$build/test-logs
LIMIT=1200        # seconds a suite may take (Check's own limits end a hung test sooner)
COURSE_LIMIT=2400 # the grader's proof: its gradings' own limits, and waiting for the stages
rm -rf "$LOGS"
mkdir -p "$LOGS" || exit 2

declare -A res pid_of started
pending=()
for s in "$@"; do
    name=${s%%:*}
    pending+=("$name")
    res[$name]=$([ "$name" = "$s" ] || echo "${s#*:}" | tr ',' ' ')
done
running=()
busy=' '    # the resources in use, space-separated
failed=''
t0=$(date +%s)

# A suite's command, run in the background under timeout with its log.
run_one() {
    name=$1
    limit=$LIMIT
    # jobs= empty: make test's jobs=N counts suites, not the cells that
    # make report plays or the gradings of the proof at a time.
    case "$name" in
    v[0-9]*) cmd=(make --no-print-directory stage-test "stage=${name#v}")
             export CK_TAP_LOG_FILE_NAME=$PWD/$LOGS/$name.tap ;;
    course-test) cmd=(make --no-print-directory course-test jobs= "taps=$LOGS"); limit=$COURSE_LIMIT ;;
    *) cmd=(make --no-print-directory "$name" jobs=) ;;
    esac
    timeout -k 30 "$limit" "${cmd[@]}" >"$LOGS/$name.log" 2>&1 </dev/null
    rc=$?
    [ $rc -eq 124 ] && echo "$name: stopped after its limit of $limit s" >>"$LOGS/$name.log"
    echo $rc >"$LOGS/$name.rc"
    [ "${name#v}" = "$name" ] || : >"$LOGS/$name.done"
}

free() {
    for r in ${res[$1]}; do
        case "$busy" in *" $r "*) return 1 ;; esac
    done
}

start_ready() {
    local i name
    for i in "${!pending[@]}"; do
        [ ${#running[@]} -lt "$jobs" ] || return
        name=${pending[$i]}
        free "$name" || continue
        unset 'pending[i]'
        for r in ${res[$name]}; do busy="$busy$r "; done
        started[$name]=$(date +%s)
        run_one "$name" &
        pid_of[$name]=$!
        running+=("$name")
    done
    pending=("${pending[@]}")
}

# A suite that has ended: its log, whole, and a line; its slot freed.
finish() {
    local name=$1 rc secs i
    rc=$(cat "$LOGS/$name.rc")
    secs=$(( $(date +%s) - started[$name] ))
    wait "${pid_of[$name]}" 2>/dev/null
    cat "$LOGS/$name.log"
    if [ "$rc" = 0 ]; then word=passed; else word="FAILED (exit $rc)"; failed="$failed $name"; fi
    echo "-- $name: $word in $secs s (log: $LOGS/$name.log)"
    printf '%-14s %6d  %+6d s  %s\n' "$name" "$secs" $(( started[$name] - t0 )) "$word" >>"$LOGS/table"
    for r in ${res[$name]}; do busy=${busy/ $r / }; done
    for i in "${!running[@]}"; do
        [ "${running[$i]}" = "$name" ] && unset 'running[i]'
    done
    running=("${running[@]}")
}

# Ctrl-C or a kill: every suite is stopped (timeout passes the signal on
# to its suite's whole process group), then waited for.
stop_all() {
    trap '' INT TERM HUP
    # A suite's timeout is the only child of its runner subshell, which
    # then records its end as usual.
    for name in "${running[@]}"; do
        pkill -TERM -P "${pid_of[$name]}" 2>/dev/null
    done
    wait
    echo "make test: stopped; the suites' logs are in $LOGS"
    exit 130
}
trap stop_all INT TERM HUP

echo "== make test: ${#pending[@]} suites, $jobs at a time, each one's output when it ends;" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg) at the start =="
while [ ${#pending[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
    start_ready
    wait -n 2>/dev/null
    for name in "${running[@]}"; do
        [ -f "$LOGS/$name.rc" ] && finish "$name"
    done
done

secs=$(( $(date +%s) - t0 ))
{
    echo "== where the time went: a line per suite, the slowest first (jobs=$jobs) =="
    printf '%-14s %6s  %8s  %s\n' suite seconds started result
    sort -k2,2nr "$LOGS/table"
    printf '%s\n' "-- $# suites in $secs s on $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
} >"$LOGS/times.txt"
cat "$LOGS/times.txt"
if [ -n "$failed" ]; then
    echo "FAILED:$failed"
    exit 1
fi
echo "== all suites passed =="
