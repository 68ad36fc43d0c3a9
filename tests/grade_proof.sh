#!/bin/sh
# grade_proof.sh build=DIR jobs=N light=0|1 [taps=DIR] -- STAGE...: the
# grader's proof (make course-test, part of make test).
#
# For every stage N of sim/stages.def, the grader (tools/grade.sh) must
#
#   - give full marks to N's own lock.c;
#   - fail the workspace make exercise hands out for N (its base's lock.c,
#     unpacked from make handout's tarball) on exactly the checks and
#     cells that tell N from its base, and on nothing else: the checks of
#     N's suite whose line in tools/grade.checks names a capability N
#     adds (sim/stages.def), or says nodes when N's lock talks to other
#     servers than its base's; the cells build/grade_key lists for N;
#   - and the TASK.md of that handout names no check outside those.
#
# And a lock that crashes, or hangs, fails its checks with words that say
# so, and leaves no temp dir and no process behind (the runs get a TMPDIR
# of their own, which must be empty at the end).
#
# Gradings run jobs=N at a time (3 by default: they mostly wait for
# leases); the table, a line per stage, goes to stdout. light=1 (make test SANITIZE=1): the table's key
# only, every stage's cells from build/grade_key and every handout, no
# grading: the full proof runs once, in make test. Exit 1 when anything
# differs, with a line saying what.
#
# taps=DIR (make test): a stage's own lock.c has just run its own suite
# in this make test, which left Check's TAP log in DIR/vN.tap and
# DIR/vN.done when it ended (tests/run_suites.sh). Grading it again would
# run the very same tests on the very same objects: its marks are read
# from that log instead, by the grader's own reader (tools/grade_tap.awk),
# and must be full. The first stage alone is graded again whole: the
# grader's copy, compile, link and run of a lock.c in place of the
# stage's own must give it full marks, score line and all. Every
# exercise's start is graded as before, a Redis stage's and a ZooKeeper
# stage's among them: each must pass every check that does not tell its
# stage from its base, and fail the others. So a grader that builds,
# links, runs or reads a lock.c wrongly still fails the proof: an
# exercise's start then fails other checks than those, or passes some of
# them, or the first stage loses marks; and a reader that miscounts
# fails it on the stages' own logs too.
#
# Internally, "grade_proof.sh --stage JOB" runs one job: own:N:DIR:BASE,
# fresh:N:DIR:BASE or robust (see below).
set -u
cd "$(dirname "$0")/.." || exit 2

build=build jobs=3 light=0 taps='' worker=''
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case "$1" in
    build=*) build=${1#build=} ;;
    jobs=*) jobs=${1#jobs=} ;;
    light=*) light=${1#light=} ;;
    taps=*) taps=${1#taps=} ;;
    --stage) worker=$2; shift ;;
    *) echo "grade_proof.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ $# -gt 0 ] && shift
stages="$*"
[ -n "$jobs" ] || jobs=3
case "$jobs" in
'' | *[!0-9]* | 0*) echo "jobs=$jobs is not a number of gradings at a time: give 1 to 16" >&2; exit 2 ;;
esac
[ "$jobs" -le 16 ] || { echo "jobs=$jobs is above the maximum of 16 gradings at a time" >&2; exit 2; }
P=$build/proof

# Stage $1's line of sim/stages.def, field $2: 3 server, 4 masters, 5 adds.
fld() {
    sed -n "s/^SIM_STAGE($1, *\(.*\))[ \t]*$/\1/p" sim/stages.def |
        awk -F, -v f="$2" '{ gsub(/^[ \t"]+|[ \t"]+$/, "", $f); print $f }'
}

# The checks of a stage's suite that its base's lock must fail:
# expected N BASE CHECKS.txt, one id a line; "missing ID" for a check
# that tools/grade.checks does not know.
expected() {
    adds=$(fld "$1" 5 | grep -o 'CAP([A-Z_]*)' | sed 's/CAP(\(.*\))/\1/' | tr '\n' ' ')
    moved=0
    if [ "$(fld "$1" 4)" != "$(fld "$2" 4)" ] || [ "$(fld "$1" 3)" != "$(fld "$2" 3)" ]; then
        moved=1
    fi
    cut -f2 "$3" | grep -v '^matrix/' | awk -v adds=" $adds " -v moved=$moved '
        FILENAME == ARGV[1] {
            if (!/^#/ && NF > 1) { seen[$1] = 1; for (i = 2; i <= NF; i++) w[$1] = w[$1] " " $i " " }
            next }
        !($1 in seen) { print "missing " $1; next }
        { n = split(w[$1], word, " ")
          for (i = 1; i <= n; i++)
              if (index(adds, " " word[i] " ") > 0 || (moved && word[i] == "nodes")) { print $1; break } }' \
        tools/grade.checks -
    "$build/grade_key" "$1" | cut -f1 | sed 's|^|matrix/|'
}

# The jobs, one grading each: "own:LINE" grades the stage's own lock.c
# into P/own, "fresh:LINE" unpacks its handout in P/ws and grades that.
grade_own() {
    n=${1%%:*} rest=${1#*:}
    sh tools/grade.sh "stage=$n" "src=${rest%%:*}/lock.c" "build=$build" "into=$P/own" -- $stages \
        >"$P/v$n.own.log" 2>&1
}

grade_fresh() {
    n=${1%%:*}
    mkdir -p "$P/handout" "$P/ws"
    sh tools/exercise.sh handout "stage=$n" "build=$build" "out=$P/handout" -- $stages \
        >"$P/v$n.handout.log" 2>&1 && tar -xzf "$P/handout/v$n.tar.gz" -C "$P/ws" &&
        sh tools/grade.sh "stage=$n" "src=$P/ws/exercises/v$n/lock.c" "build=$build" \
            "into=$P/fresh" -- $stages >"$P/v$n.fresh.log" 2>&1
}

# A stage's own lock.c, read from its suite's run in this make test
# (taps=DIR): its checks.txt as a grading of it would write it, once the
# suite has ended (it may still run when the gradings are done).
TAP_WAIT=1800
own_from_tap() {
    n=${1%%:*}
    waited=0
    while [ ! -f "$taps/v$n.done" ] && [ $waited -lt $TAP_WAIT ]; do
        sleep 1
        waited=$((waited + 1))
    done
    mkdir -p "$P/own/v$n"
    if [ -f "$taps/v$n.done" ] && [ -s "$taps/v$n.tap" ]; then
        awk -v stage="$n" -f tools/grade_tap.awk "$taps/v$n.tap" >"$P/own/v$n/checks.txt"
    fi
    echo "its suite's log in this make test: $taps/v$n.tap" >"$P/v$n.own.log"
}

# A stage's results, once its jobs are done: its line of the table in
# P/vN.line, what differs from the proof's claims in P/vN.errors.
judge() {
    n=${1%%:*} rest=${1#*:}
    base=${rest#*:}
    err=$P/v$n.errors
    : >"$err"
    judge_stage "$@" >"$P/v$n.line"
}

judge_stage() {
    own=$P/own/v$n/checks.txt
    total=$(grep -c . "$own" 2>/dev/null)
    ok=$(grep -c '^ok' "$own" 2>/dev/null)
    if [ "${total:-0}" -eq 0 ] || [ "$ok" -ne "$total" ]; then
        first=$(grep '^FAIL' "$own" 2>/dev/null | head -3 | cut -f2,3 | tr '\t\n' ': ')
        echo "v$n: its own lock.c gets ${ok:-0}/${total:-0}: $first($P/v$n.own.log)" >>"$err"
    fi
    if [ "$base" = 0 ]; then
        printf 'v%-3s own %s/%s   no base: nothing to start from\n' "$n" "${ok:-0}" "${total:-0}"
        return
    fi
    fresh=$P/fresh/v$n/checks.txt
    if [ ! -s "$fresh" ]; then
        echo "v$n: its handout was not graded: \
$(tail -1 "$P/v$n.handout.log" "$P/v$n.fresh.log" 2>/dev/null | tr '\n' ' ')" >>"$err"
        return
    fi
    [ -s "$own" ] || own=$fresh
    expected "$n" "$base" "$own" | sort >"$P/v$n.want"
    grep '^missing ' "$P/v$n.want" | while read -r _ id; do
        echo "v$n: tools/grade.checks has no line for $id: \
add one saying which capabilities it judges" >>"$err"
    done
    grep -v '^missing ' "$P/v$n.want" >"$P/v$n.want.ids"
    grep '^FAIL' "$fresh" | cut -f2 | sort >"$P/v$n.got"
    comm -23 "$P/v$n.want.ids" "$P/v$n.got" | while read -r id; do
        echo "v$n: the fresh workspace (v$base's lock.c) passes $id, \
which should tell v$n from v$base" >>"$err"
    done
    comm -13 "$P/v$n.want.ids" "$P/v$n.got" | while read -r id; do
        echo "v$n: the fresh workspace (v$base's lock.c) fails $id, which nothing v$n adds \
explains: $(grep "	$id	" "$fresh" | cut -f3 | cut -c1-300)" >>"$err"
    done
    # TASK.md names only checks that the fresh workspace fails.
    grep -o '`test_[a-z_]*`' "$P/ws/exercises/v$n/TASK.md" | tr -d '`' | sort -u | comm -23 - "$P/v$n.got" |
        while read -r id; do
            echo "v$n: TASK.md names $id, which the fresh workspace passes" >>"$err"
        done
    checks=$(grep -v '^matrix/' "$P/v$n.got" | sed 's/^test_lock_//; s/^test_//' | tr '\n' ' ')
    cells=$(grep '^matrix/' "$P/v$n.got" | sed 's|^matrix/||' | tr '\n' ' ')
    printf 'v%-3s own %s/%s   v%s'"'"'s lock.c %s/%s, failing %s check(s): %s; %s cell(s): %s\n' \
        "$n" "$ok" "$total" "$base" "$(grep -c '^ok' "$fresh")" "$(grep -c . "$fresh")" \
        "$(echo $checks | wc -w)" "$(echo ${checks:-none})" "$(echo $cells | wc -w)" "$(echo ${cells:-none})"
}

# A lock that crashes or hangs: robust LINE LABEL CODE [VAR=VALUE...]
# grades the stage's lock.c with CODE at the top of dlock_acquire, into
# P/LABEL, with the variables in its environment.
robust() {
    n=${1%%:*} rest=${1#*:}
    dir=${rest%%:*} label=$2 code=$3
    shift 3
    mkdir -p "$P/bad"
    awk -v code="$code" '{ print } /^int dlock_acquire\(dlock \*l\)$/ { getline; print; print code }' \
        "$dir/lock.c" >"$P/bad/$label.c"
    env "$@" sh tools/grade.sh "stage=$n" "src=$P/bad/$label.c" "build=$build" "into=$P/$label" \
        -- $stages >"$P/$label.log" 2>&1
}

# The checks that use no lock (grade.checks says "-": lock.h's bytes, the
# faults' own machinery): any lock passes them.
lockless=$(awk '!/^#/ && NF == 2 && $2 == "-" { print $1 }' tools/grade.checks)

# robust_check LABEL WHAT WORDS: every check that uses the lock failed,
# and one of them says WORDS.
robust_check() {
    label=$1
    txt=$P/$label/v${robust_stage%%:*}/checks.txt
    passed=$(grep -v "^FAIL" "$txt" 2>/dev/null | cut -f2 | grep -vxF "$lockless")
    if [ ! -s "$txt" ]; then
        echo "a lock that $2: the grader ran no check ($P/$label.log)" >>"$P/robust.errors"
    elif [ -n "$passed" ]; then
        echo "a lock that $2 passes $(echo "$passed" | tr '\n' ' ')($P/$label.log)" >>"$P/robust.errors"
    elif ! grep -q "$3" "$txt"; then
        echo "a lock that $2: no check says \"$3\" ($P/$label.log)" >>"$P/robust.errors"
    fi
}

# The whole suite for a crash; for a hang, whose checks each wait for
# their time limit, the basics and one cell, the limits cut to a tenth.
robust_all() {
    hang='    for (;;) nanosleep(&(struct timespec){ 1, 0 }, NULL);'
    robust "$robust_stage" crash '    __builtin_trap();'
    robust "$robust_stage" hang "$hang" CK_RUN_CASE=basics CK_TIMEOUT_MULTIPLIER=0.1
    robust "$robust_stage" hangcell "$hang" CK_RUN_CASE=slow-holder CK_TIMEOUT_MULTIPLIER=0.1
    : >"$P/robust.errors"
    robust_check crash "crashes in dlock_acquire" "crashed in your lock"
    robust_check hang "hangs in dlock_acquire" "did not finish within its time limit"
    robust_check hangcell "hangs in dlock_acquire, in a cell of the matrix" \
        "did not finish within its time limit"
}

[ -n "$stages" ] || { echo "grade_proof.sh: no stages given: run it as make course-test" >&2; exit 2; }
robust_stage=${stages%% *}
# A job's seconds go to P/times, "SECONDS vN KIND" a line, for the table
# of where the proof's time went.
if [ -n "$worker" ]; then
    t=$(date +%s)
    case "$worker" in
    robust) robust_all; what="v${robust_stage%%:*} robust" ;;
    own:*) grade_own "${worker#own:}"; what="v${worker#own:}" what="${what%%:*} own" ;;
    fresh:*) grade_fresh "${worker#fresh:}"; what="v${worker#fresh:}" what="${what%%:*} fresh" ;;
    *) echo "grade_proof.sh: unknown job '$worker'" >&2; exit 2 ;;
    esac
    echo "$(( $(date +%s) - t )) $what" >>"$P/times"
    exit 0
fi

rm -rf "$P"
mkdir -p "$P/tmp" || exit 2
echo "== course mode: the grader against every stage's own lock.c and its exercise's start =="
for line in $stages; do
    if ! make --no-print-directory "grade-prereqs-v${line%%:*}" "$build/grade_key" >"$P/build.log" 2>&1; then
        tail -n 20 "$P/build.log"
        echo "course-test: the tests do not build (above)"
        exit 1
    fi
done

if [ "$light" = 1 ]; then
    failed=0
    for line in $stages; do
        n=${line%%:*} base=${line##*:}
        [ "$base" = 0 ] && continue
        cells=$("$build/grade_key" "$n" | cut -f1 | tr '\n' ' ') || failed=1
        if sh tools/exercise.sh handout "stage=$n" "build=$build" "out=$P/handout" -- $stages \
            >"$P/v$n.handout.log" 2>&1; then
            echo "v$n: handout ok; the cells that tell it from v$base: ${cells:-none}"
        else
            echo "v$n: make handout stage=$n failed: $(tail -1 "$P/v$n.handout.log")"
            failed=1
        fi
    done
    echo "course-test: the grading itself runs in make test without SANITIZE=1"
    exit $failed
fi

# The runs' temp dirs all go in here, which must be empty at the end.
TMPDIR=$(cd "$P/tmp" && pwd)
export TMPDIR
start=$(date +%s)

# jobs_of LINE...: the jobs of these stages, the longest first: a stage's
# handout fails slowly (v8's baseline waits for its run's limit), and the
# later stages have the most checks.
jobs_of() {
    printf '%s\n' "$@" | sort -t: -k1,1nr |
        awk -F: -v taps="$taps" -v first="${stages%% *}" \
            '$3 != 0 { print "fresh:" $0 } taps == "" || $0 == first { print "own:" $0 }'
}
{ echo robust; jobs_of $stages; } |
    xargs -P "$jobs" -I{} sh tests/grade_proof.sh "build=$build" --stage {} -- $stages
for line in $stages; do
    [ -z "$taps" ] || [ "$line" = "${stages%% *}" ] || own_from_tap "$line"
    judge "$line"
done

for line in $stages; do
    cat "$P/v${line%%:*}.line"
done
# docs/course.md quotes lines of this table and, in its example of make
# grade, the score of v4's start: both must be this run's.
grep '^ *v[0-9]* *own ' docs/course.md | sed 's/^ *//' | while IFS= read -r quoted; do
    n=$(echo "$quoted" | sed 's/^v\([0-9]*\) .*/\1/')
    [ -f "$P/v$n.line" ] || continue
    [ "$quoted" = "$(cat "$P/v$n.line" 2>/dev/null)" ] ||
        echo "docs/course.md quotes \"$quoted\"; this run printed \"$(cat "$P/v$n.line" 2>/dev/null)\"" \
            >>"$P/v$n.errors"
done
score=$(sed -n 's/^v4 .*v3.s lock\.c \([0-9]*\)\/\([0-9]*\),.*/\1 \2/p' "$P/v4.line" 2>/dev/null)
[ -z "$score" ] || score=$(echo "$score" | awk '{ printf "score: %d/%d checks (%d failed;", $1, $2, $2 - $1 }')
[ -z "$score" ] || grep -qF "$score" docs/course.md ||
    echo "docs/course.md's example of make grade stage=4 does not show v4's start's \"$score\"" >>"$P/v4.errors"
echo "the gradings' seconds, the slowest first: $(sort -nr "$P/times" |
    awk '{ printf "%s%s %s %d s", (NR > 1 ? ", " : ""), $2, $3, $1 }')"
cat "$P"/v*.errors "$P/robust.errors" >"$P/errors" 2>/dev/null
left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 | head -3)
[ -z "$left" ] || echo "the runs left $left behind in their TMPDIR" >>"$P/errors"
for cwd in /proc/[0-9]*/cwd; do
    case "$(readlink "$cwd" 2>/dev/null)" in
    "$TMPDIR"/*) echo "process ${cwd#/proc/} still runs in $(readlink "$cwd")" >>"$P/errors" ;;
    esac
done
echo "a lock that crashes or hangs in dlock_acquire: every check fails, saying so; nothing left behind"
if [ -s "$P/errors" ]; then
    sed 's/^/course-test: /' "$P/errors"
    echo "course-test: FAILED ($(( $(date +%s) - start )) s, jobs=$jobs; the runs in $P)"
    exit 1
fi
echo "course-test: every stage's own lock.c passes, its exercise's start fails exactly on \
what tells it from its base ($(( $(date +%s) - start )) s, jobs=$jobs)"
