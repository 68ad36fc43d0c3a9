#!/bin/sh
# grade.sh stage=N src=FILE part=K build=DIR into=DIR -- STAGE...: make grade.
#
# Grades a lock.c as stage N: builds it in place of the stage's own, into
# DIR/vN (the Makefile's GRADE_DIR; nothing is written into a stage
# folder), against the stage's contract lock.h, its contract suite and its
# row of the fault matrix (the test objects and the client side that make
# stage=N test links), runs them, and prints one line per check: ok, or
# FAIL with the check's own message; for a cell of the matrix, the
# sentences of the story that show the anomalies the stage must not have.
# Then the score. Exit 0 when every check passed, 1 when one did not or
# the file does not compile, 2 on a bad argument.
#
# Without src=, the workspace of make exercise: exercises/vN/lock.c, or
# exercises/vN-partK/lock.c with part=K (EXERCISES=DIR in the environment:
# DIR instead of exercises/, as for make exercise). The make variables come as they
# were given (empty when not), then every stage of sim/stages.def as
# N:FOLDER:BASE.
#
# Besides the lines printed: DIR/vN/run.log (every line the suite
# printed), DIR/vN/checks.tap (Check's TAP log) and DIR/vN/checks.txt, a
# line per check, "ok|FAIL<TAB>CHECK<TAB>message", CHECK the test's
# function name or matrix/<scenario> (tests/grade_proof.sh reads it).
#
# The suite runs as make stage=N test runs it: each check in a process of
# its own, which Check kills at its tcase's time limit (a lock that hangs
# fails that check), servers and temp dirs removed by the test program
# whether a check passes, fails, crashes or times out. Check's
# environment variables (CK_RUN_CASE, CK_TIMEOUT_MULTIPLIER) work as they
# do there; CK_FORK=no does not, the grader needs the fork.
set -u
cd "$(dirname "$0")/.." || exit 2

LIMIT=1800   # seconds for the whole suite: a safety net under Check's own limits

. tools/stagelist.sh
take_args grade.sh stage src part build into -- "$@"
[ -n "$build" ] || build=build
[ -n "$into" ] || into=$build/grade

[ -n "$stages" ] || fail "grade.sh: no stages given: run it as make grade stage=N"
[ -n "$stage" ] || fail "usage: make grade stage=N [src=FILE] [part=K]; stages:$(valid)"
dir=$(field "$stage" 2)
[ -n "$dir" ] || fail "stage=$stage is not a stage; valid:$(valid)"
check_part "$stage" "$dir" "$part" "grade it whole: make grade stage=$stage"
if [ -z "$src" ]; then
    src=${EXERCISES:-exercises}/v$stage${part:+-part$part}/lock.c
    [ -f "$src" ] || fail "grade: $src does not exist: \
make exercise stage=$stage${part:+ part=$part} writes it, or give src=FILE"
fi
[ -f "$src" ] || fail "src=$src is not a file: give the path of a lock.c"
[ -r "$src" ] || fail "src=$src cannot be read: check its permissions"

out=$into/v$stage
mkdir -p "$out" || exit 2
rm -f "$out/checks.tap" "$out/checks.txt" "$out/run.log"

# The copy names the student's file, so that the compiler's errors do;
# it sits next to the stage's lock.h, which it includes whatever sits
# next to the original.
{ printf '#line 1 "%s"\n' "$(printf '%s' "$src" | sed 's/[\\"]/\\&/g')"; cat "$src"; } >"$out/lock.c.new"
cmp -s "$out/lock.c.new" "$out/lock.c" && rm "$out/lock.c.new" || mv "$out/lock.c.new" "$out/lock.c"
cmp -s "$dir/lock.h" "$out/lock.h" || cp "$dir/lock.h" "$out/lock.h"

M="make --no-print-directory GRADE_DIR=$into"
echo "grade: $src as $dir (its contract suite and its row of the fault matrix)"
if ! $M "grade-prereqs-v$stage" >"$out/build.log" 2>&1; then
    tail -n 20 "$out/build.log" >&2
    echo "grade: the tests of $dir do not build (above; all of it in $out/build.log): \
not your lock.c's doing" >&2
    exit 2
fi
if ! $M "$out/lock.o" >"$out/build.log" 2>&1; then
    grep -v '^cc \|^gcc \|^make' "$out/build.log"
    echo "grade: $src does not compile (the errors above): no check ran; score 0"
    exit 1
fi
if ! $M "$out/tests" >"$out/build.log" 2>&1; then
    grep -v '^cc \|^gcc \|^make' "$out/build.log"
    echo "grade: $src does not link with the tests (above): it must define every function of lock.h; score 0"
    exit 1
fi

echo "grade: running (a stage takes 15 to 70 s; every line the tests print goes to $out/run.log)"
CK_TAP_LOG_FILE_NAME=$out/checks.tap CK_VERBOSITY=normal CK_FORK=yes \
    timeout -k 30 "$LIMIT" "$out/tests" >"$out/run.log" 2>&1
status=$?
[ $status -eq 124 ] && echo "grade: the suite did not end within $LIMIT s and was stopped; \
the checks it did not reach count as not run"

awk -v stage="$stage" -f tools/grade_tap.awk "$out/checks.tap" >"$out/checks.txt" 2>/dev/null
if [ ! -s "$out/checks.txt" ]; then
    tail -n 5 "$out/run.log"
    echo "grade: the suite ran no check (exit $status; $out/run.log above): score 0"
    exit 1
fi
awk -F'\t' '$1 == "ok" { printf "  ok    %s\n", $2 }
            $1 != "ok" { printf "  FAIL  %s: %s\n", $2, $3 }' "$out/checks.txt"
# Under SANITIZE=1 a sanitizer's report is the reason: its first line.
said=$(grep -m1 -E 'runtime error:|ERROR: (Address|Leak|Thread)Sanitizer' "$out/run.log")
[ -n "$said" ] && echo "grade: the sanitizers found: $said (all they said: $out/run.log)"
total=$(grep -c . "$out/checks.txt")
passed=$(grep -c '^ok' "$out/checks.txt")
if [ "$passed" -eq "$total" ] && [ $status -eq 0 ]; then
    echo "score: $passed/$total checks: $src passes as $dir"
    exit 0
fi
echo "score: $passed/$total checks ($((total - passed)) failed; every line of the run: $out/run.log)"
exit 1
