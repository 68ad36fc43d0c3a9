#!/bin/sh
# cli.sh: the commands a user types, as the README gives them (make test
# runs it as make cli-test). Nearly no Redis: every command here fails on
# its arguments before a run starts, or only reads files, but for a
# make report stopped with Ctrl-C and two gradings of one tcase each.
#
# Bad arguments: each make variable, given a bad value, gets an error
# that names it as typed ("lease=50 is below the minimum of 100 ms") and
# a non-zero exit. make diff: side by side keeps every line whole at any
# terminal width and shows only the changed regions unless full=1; a
# stage cut into parts (tools/stagediff.parts) shows each part, the
# speed-only code apart, and a table that leaves a line out is refused.
set -u
cd "$(dirname "$0")/.." || exit 2

failed=0
out=$(mktemp) || exit 2
trap 'rm -rf "$out" "$out.parts" "$out.bin" "$out.ex" "$out.task" "$out.kit" "$out.v5.c" "$out.docs" "$out.cmds"' EXIT

fail() {
    echo "cli-test: $*"
    failed=$((failed + 1))
}

# errs "WANT" make ARGS...: the command fails and says WANT.
errs() {
    want=$1
    shift
    "$@" >"$out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        fail "'$*' succeeded; expected it to fail and say \"$want\""
    elif ! grep -qF -- "$want" "$out"; then
        fail "'$*' failed (exit $rc) without saying \"$want\"; it said: $(tail -3 "$out")"
    fi
}

# says "WANT" make ARGS...: the command succeeds and says WANT.
says() {
    want=$1
    shift
    if ! "$@" >"$out" 2>&1; then
        fail "'$*' failed; expected it to say \"$want\": $(tail -3 "$out")"
    elif ! grep -qF -- "$want" "$out"; then
        fail "'$*' does not say \"$want\""
    fi
}

M="make --no-print-directory"

# ---- another system than Linux ---------------------------------------------
# A uname that answers Darwin: deps.sh says Linux only and how to run it.
mkdir "$out.bin" && printf '#!/bin/sh\necho Darwin\n' >"$out.bin/uname" && chmod +x "$out.bin/uname"
errs "lockstep runs on Linux only" env PATH="$out.bin:$PATH" sh tools/deps.sh ensure
errs "which Darwin does not have" env PATH="$out.bin:$PATH" sh tools/deps.sh check
errs "docker run --rm -it" env PATH="$out.bin:$PATH" sh tools/deps.sh ensure

# ---- make variables, named as typed ---------------------------------------
errs "lease=50 is below the minimum of 100 ms" $M sim stage=3 scenario=slow-holder lease=50
errs "lease=20000 is above the maximum of 10000 ms" $M sim stage=3 scenario=slow-holder lease=20000
errs "lease=abc is not a whole number" $M sim stage=3 scenario=slow-holder lease=abc
errs "seed=-1 is below the minimum of 0" $M sim stage=3 scenario=slow-holder seed=-1
errs "seed=x is not a whole number" $M sim stage=3 scenario=slow-holder seed=x
errs "scenario=nope is not a scenario; valid: baseline" $M sim stage=3 scenario=nope
errs "sentinel=2 is neither 1 nor 0" $M sim stage=3 scenario=failover sentinel=2
errs "html=2 is neither 1 nor 0" $M sim stage=3 scenario=slow-holder html=2
errs "jobs=0 is below the minimum of 1" $M report jobs=0
# ... and leaves the last site where it was.
had_site=0; [ -d build/report ] && had_site=1
mkdir -p build/report && : >build/report/cli-test.mark
errs "lease=50 is below the minimum of 100 ms" $M report lease=50
[ -f build/report/cli-test.mark ] || fail "'make report lease=50' deleted the last site"
# A Ctrl-C in the middle of the matrix leaves it too. timeout runs make in
# a process group of its own, the one a terminal's Ctrl-C signals; the
# signal goes once the last site is set aside, so the matrix is playing.
timeout 900 $M report >"$out" 2>&1 &
job=$!
waited=0
while [ ! -d build/report.old ] && [ $waited -lt 6000 ] && kill -0 $job 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
done
sleep 1
kill -s INT -- "-$job" 2>/dev/null
wait $job
[ -f build/report/cli-test.mark ] ||
    fail "a Ctrl-C during 'make report' left no last site in build/report: $(tail -2 "$out")"
[ -d build/report.old ] && fail "a Ctrl-C during 'make report' left build/report.old behind"
rm -f build/report/cli-test.mark
[ $had_site -eq 1 ] || rmdir build/report 2>/dev/null
errs "stage=99 is not a stage; valid: 1 (v1-setnx)" $M sim stage=99 scenario=baseline
errs "jobs=0 is below the minimum of 1" $M demo jobs=0
errs "jobs=many is not a whole number" $M demo jobs=many
errs "runs=0 is below the minimum of 1" $M bench runs=0
errs "runs=abc is not a whole number" $M bench runs=abc
errs "from=3 and to=3 are the same stage" $M diff from=3 to=3
errs "to=99 is not a stage" $M diff to=99
errs "from=x is not a stage" $M diff from=x to=2
errs "side=2 is neither 1 nor 0" $M diff from=3 to=4 side=2
errs "full=yes is neither 1 nor 0" $M diff from=3 to=4 full=yes
errs "part=9 is not a part of v6-reentrant-watchdog's diff: give part=1 to 3" $M diff to=6 part=9
errs "part=1: v4-owner-check's diff is not cut into parts" $M diff to=4 part=1
errs "part=1 cuts v6-reentrant-watchdog's diff on its base, v5" $M diff from=4 to=6 part=1

# ---- make diff side=1: whole lines, changed regions -----------------------
set_line='r = redis_command(l, "SET %s %s NX PX %ld", l->r.key, token, l->r.cfg.lease_ms);'
says "$set_line" env COLUMNS=40 $M diff from=3 to=4 side=1
narrow=$(COLUMNS=40 $M diff from=3 to=4 side=1 2>&1 | cksum)
wide=$(COLUMNS=300 $M diff from=3 to=4 side=1 2>&1 | cksum)
[ "$narrow" = "$wide" ] ||
    fail "make diff side=1 draws differently at 40 and 300 columns; expected whole lines at any width"
lines=$($M diff from=3 to=4 side=1 | wc -l)
file=$(wc -l <v4-owner-check/lock.c)
[ "$lines" -lt "$file" ] ||
    fail "make diff from=3 to=4 side=1 printed $lines lines for a file of $file; expected the changed regions only"
says "@@ line " $M diff from=3 to=4 side=1
lines=$($M diff from=3 to=4 side=1 full=1 | wc -l)
[ "$lines" -ge "$file" ] ||
    fail "make diff from=3 to=4 side=1 full=1 printed $lines lines for a file of $file; expected the whole file"
lines=$($M diff from=3 to=4 full=1 | grep -c '^[ +]')
[ "$lines" -ge "$file" ] ||
    fail "make diff from=3 to=4 full=1 shows $lines lines of v4's $file; expected all of them"

# ---- parts ----------------------------------------------------------------
says "make diff to=6 part=1" $M diff to=6
for k in 1 2 3; do
    says "part $k of 3 of v5-lua-unlock -> v6-reentrant-watchdog" $M diff to=6 part=$k
    [ "$(grep -c '^[-+][^-+]' "$out")" -gt 0 ] || fail "make diff to=6 part=$k changes no line"
done
$M diff to=6 part=1 >"$out" 2>&1
grep -q '^[-+].*redis_poll' "$out" &&
    fail "part 1 (hold counts) changes v5's polling (redis_poll), which part 3 replaces"
$M diff to=6 part=3 >"$out" 2>&1
grep -q '^-.*redis_poll(l, try_acquire)' "$out" ||
    fail "part 3 (no polling) does not take out v5's polling (redis_poll)"
grep -q 'redis_subscribe(l, l->channel' "$out" || fail "part 3 (no polling) does not show the waiter subscribing"
$M diff to=9 part=3 >"$out" 2>&1
grep -q '^+.*stay_subscribed' "$out" || fail "v9's part 3 (speed only) does not keep the waiter subscribed (stay_subscribed)"
grep '^[-+][^-+]' "$out" | grep -v '^.[[:space:]]*\(/[*]\|[*]\)' |
    grep -q 'watchdog\|hincrby\|holds\|lpop\|queue\|leave' &&
    fail "v9's part 3 (speed only) changes code of the lesson (the watchdog, the hold count or the queue)"
grep -v '^9 3 init' tools/stagediff.parts >"$out.parts"
errs "is in no part" env STAGEDIFF_PARTS="$out.parts" $M diff to=9 part=1

# ---- course mode: make exercise, make handout, make grade -----------------
# The workspaces go to a folder of the test's own (EXERCISES), never to
# the user's exercises/.
export EXERCISES="$out.ex"
errs "usage: make exercise stage=N [part=K]" $M exercise
errs "v1-setnx is built on no other stage" $M exercise stage=1
errs "part=9 is not a part of v6-reentrant-watchdog: give part=1 to 3" $M exercise stage=6 part=9
errs "part=x is not a part of v6-reentrant-watchdog" $M handout stage=6 part=x
errs "part=1: v4-owner-check is not told in parts" $M exercise stage=4 part=1
errs "usage: make grade stage=N [src=FILE] [part=K]" $M grade
errs "src=$out.none is not a file" $M grade stage=4 src="$out.none"
errs "$EXERCISES/v4/lock.c does not exist: make exercise stage=4 writes it" $M grade stage=4
says "exercise: $EXERCISES/v4/: lock.c (v3-set-nx-px's lock.c)" $M exercise stage=4
cmp -s "$EXERCISES/v4/lock.c" v3-set-nx-px/lock.c || fail "make exercise stage=4: lock.c is not v3's"
cmp -s "$EXERCISES/v4/lock.h" v4-owner-check/lock.h || fail "make exercise stage=4: lock.h is not the contract"
grep -q 'What changed\|```diff' "$EXERCISES/v4/TASK.md" && fail "make exercise stage=4: TASK.md tells what changed"
grep -q 'test_lock_owner_token' "$EXERCISES/v4/TASK.md" || fail "make exercise stage=4: TASK.md names no check of OWNER"
grep -q '| stranger-unlock |.*| ME MD LU | - |' "$EXERCISES/v4/TASK.md" ||
    fail "make exercise stage=4: TASK.md lacks the stranger-unlock cell, v3's ME MD LU against v4's -"
says "exercise: $EXERCISES/v4/" $M exercise stage=4
echo '/* mine */' >>"$EXERCISES/v4/lock.c"
errs "$EXERCISES/v4/lock.c has changes of yours, left as they are; to start over, move $EXERCISES/v4 away" \
    $M exercise stage=4
grep -q 'mine' "$EXERCISES/v4/lock.c" || fail "make exercise stage=4 wrote over the student's lock.c"
# A file that does not compile: the compiler's errors name it, and no check runs.
printf 'this is not C;\n' >"$EXERCISES/v4/lock.c"
errs "$EXERCISES/v4/lock.c:1:1: error" $M grade stage=4
errs "does not compile (the errors above): no check ran; score 0" $M grade stage=4
# Every part of a stage told in parts starts from a lock.c that compiles
# (make exercise compiles it), or the part is refused.
for k in 1 2 3; do
    says "/handout/v6-part$k.tar.gz: exercises/v6-part$k/" $M handout stage=6 part=$k
done
says "exercise: $EXERCISES/v6-part2/: lock.c (v5-lua-unlock's lock.c with part 1" $M exercise stage=6 part=2
grep -q 'part 2, yours: the watchdog' "$EXERCISES/v6-part2/TASK.md" || fail "v6 part 2's TASK.md does not name its part"
for k in 1 2 3; do
    says "exercise: $EXERCISES/v9-part$k/" $M exercise stage=9 part=$k
done
# A table whose cut leaves a part's start uncompilable (v9's acquire calls
# leave() in part 1, which part 2 defines): that part is refused.
sed 's/^9 2 dlock_acquire/9 1 dlock_acquire/' tools/stagediff.parts >"$out.parts"
errs "part=2: v6-reentrant-watchdog with part 1 of v9-fair-queue does not compile" \
    env STAGEDIFF_PARTS="$out.parts" $M exercise stage=9 part=2
# The handout carries the kind's plumbing beside lock.c, and TASK.md names
# each call of its header (a plumbing of the test's own: PLUMBING), the
# failpoints the stage's steps call and where, and the owner token.
mkdir -p "$out.kit" && printf '%s\n' '/* kit: what every Redis stage shares. */' '#include "lock.h"' '' \
    '/* A connection of its own. */' 'typedef struct kit_link { int fd; } kit_link;' '' \
    '/* Sends one command. Returns its reply, or NULL with errstr set. */' \
    'redisReply *kit_command(kit_link *k, char *errstr,' '                        const char *fmt, ...);' \
    >"$out.kit/redis.h" && echo '#include "redis.h"' >"$out.kit/redis.c"
rm -rf "$EXERCISES/v5"
says "lock.h (the contract), redis.h, redis.c (the plumbing), TASK.md" env PLUMBING="$out.kit" $M exercise stage=5
cmp -s "$EXERCISES/v5/redis.h" "$out.kit/redis.h" && cmp -s "$EXERCISES/v5/redis.c" "$out.kit/redis.c" ||
    fail "make exercise stage=5: the workspace lacks the plumbing (redis.h, redis.c)"
grep -qF -- '- `redisReply *kit_command(kit_link *k, char *errstr, const char *fmt, ...)`: Sends one command.' \
    "$EXERCISES/v5/TASK.md" || fail "make exercise stage=5: TASK.md does not name the plumbing's kit_command"
says "exercises/v5/ (lock.c, lock.h, redis.h, redis.c, TASK.md)" env PLUMBING="$out.kit" $M handout stage=5
tar -tzf build/handout/v5.tar.gz | grep -qx 'exercises/v5/redis.h' || fail "make handout stage=5: no redis.h in the tarball"
if [ -f plumbing/redis.h ]; then
    cmp -s "$EXERCISES/v4/redis.h" plumbing/redis.h || fail "make exercise stage=4: no plumbing/redis.h beside lock.c"
else
    grep -qi plumbing "$EXERCISES/v4/TASK.md" && fail "make exercise stage=4: TASK.md speaks of a plumbing that does not exist"
fi
grep -q '^- `release.after_get`: call it in `release()`, between the GET and the DEL\.' "$EXERCISES/v4/TASK.md" ||
    fail "make exercise stage=4: TASK.md does not say where release.after_get goes (between the GET and the DEL)"
grep -q '^- `release.after_get`: your lock.c calls it; v5 has no two-step release' "$EXERCISES/v5/TASK.md" ||
    fail "make exercise stage=5: TASK.md does not say that release.after_get goes with v4's two-step release"
tr '\n' ' ' <"$EXERCISES/v4/TASK.md" | grep -q '32 lowercase hex digits, the 128 random bits a handle draws.*`:` and the acquiring thread' ||
    fail "make exercise stage=4: TASK.md does not give the owner token's format"
# The cells in parentheses, as the simulator draws a fault the stage cannot reach.
grep -q '| pause-in-release |.*| (-) | ME MD LU |' "$EXERCISES/v4/TASK.md" ||
    fail "make exercise stage=4: TASK.md does not show v3's pause-in-release as (-), as make demo does"
grep -q '| pause-in-release |.*| ME MD LU | (-) |' "$EXERCISES/v5/TASK.md" ||
    fail "make exercise stage=5: TASK.md does not show v5's pause-in-release as (-), as make demo does"
# A reason that errstr still held after a result that is no error comes
# after the check's own words, said as such.
printf 'not ok 1 - tests/t.c:ownership:test_lock_release_by_non_owner: expected NOT_OWNER, got OK (server error: NOSCRIPT x)\n' |
    awk -v stage=5 -f tools/grade_tap.awk >"$out"
grep -qF 'expected NOT_OWNER, got OK; dlock_errstr said "server error: NOSCRIPT x", though the call returned no ERR' "$out" ||
    fail "tools/grade_tap.awk ends a check's line with the lock's stale errstr: $(cat "$out")"
# TASK.md never quotes a line of the stage's lock.c that the start lacks.
printf 'A hint:\n    r = redis_command(l, "GET %%s", l->r.key);\n' >"$out.task"
sh tools/task_leaks.sh "$out.task" v4-owner-check/lock.c v3-set-nx-px/lock.c >"$out" 2>&1 &&
    fail "tools/task_leaks.sh passes a TASK.md that quotes v4's GET"
grep -q 'quotes the solution: r = redis_command(l, "GET %s", l->r.key);' "$out" ||
    fail "tools/task_leaks.sh does not name the quoted line: $(cat "$out")"

# ---- every make command the pages show ---------------------------------------
# Each `make ...` line of a ```sh block, and each `$ make ...` line of any
# block, in README.md, docs/ and the stages' READMEs, runs here and exits
# 0, but for those that play runs against real servers or run whole
# suites: too long for this test, each is named with what runs it.
too_long() {
    case "$1" in
    "make demo" | "make report" | "make report-test") echo "make report-test plays the matrix" ;;
    "make test" | "make test "* | "make stage="*" test" | "make servers-test" | "make course-test")
        echo "a suite of make test, which .ci/run runs" ;;
    "make bench") echo "make bench-test runs the bench" ;;
    "make sim "*) echo "a run against real servers: its stage's matrix row plays it" ;;
    "make grade "*) echo "a stage's whole suite: make course-test grades every stage" ;;
    *) return 1 ;;
    esac
}
for f in README.md docs/*.md v*/README.md; do
    awk '/^ *```/ { sh = !fence && /```sh/; fence = !fence; next }
         fence && (/^ *\$ make( |$)/ || sh && /^ *make( |$)/) {
             sub(/^[ $]*/, ""); sub(/ *#.*/, ""); gsub(/  +/, " "); print }' "$f"
done | sort -u >"$out.cmds"
[ -s "$out.cmds" ] || fail "found no make command in the pages' code blocks"
export EXERCISES="$out.docs"
while IFS= read -r cmd; do
    too_long "$cmd" >/dev/null && continue
    # shellcheck disable=SC2086 # the command's words, as the page gives them
    $M ${cmd#make } >"$out" 2>&1 </dev/null || fail "'$cmd', as the pages show it, failed: $(tail -2 "$out")"
done <"$out.cmds"

# The grader, on a cell and a tcase of real servers each: a lock better
# than the stage asks for (v5's one-script release as v4) is told which
# release the answer key judges; a v5 whose NOSCRIPT fallback leaves
# errstr set after a call that worked loses the check of the fallback.
errs "the failpoint release.after_get never fired: the answer key judges v4's own two-step release (GET, then DEL)" \
    env CK_RUN_CASE=pause-in-release $M grade stage=4 src=v5-lua-unlock/lock.c
# The broken lock: its own fallback, EVALSHA then EVAL through
# redis_command, which leaves the NOSCRIPT reply's text in errstr.
call='r = redis_eval(l, &unlock_script, "1 %s %s", l->r.key, token);'
own='r = redis_command(l, "EVALSHA %s 1 %s %s", unlock_script.sha, l->r.key, token);\
    if (r == NULL)\
        r = redis_command(l, "EVAL %s 1 %s %s", unlock_script.text, l->r.key, token);'
sed "s/$(printf '%s' "$call" | sed 's/[][\\/.*^$&]/\\&/g')/$own/" v5-lua-unlock/lock.c >"$out.v5.c"
if cmp -s v5-lua-unlock/lock.c "$out.v5.c"; then
    fail "v5-lua-unlock/lock.c no longer sends its unlock script as this test expects ($call): break the fallback where it is now"
else
    errs "FAIL  test_lock_noscript_fallback: dlock_release succeeded after SCRIPT FLUSH" \
        env CK_RUN_CASE=ownership $M grade stage=5 src="$out.v5.c"
fi

if [ $failed -gt 0 ]; then
    echo "cli-test: $failed failed"
    exit 1
fi
echo "cli-test: bad arguments named as typed, make diff's lines, regions and parts, make exercise's and make grade's, every make command the pages show: ok"
