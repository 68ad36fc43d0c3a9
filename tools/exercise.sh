#!/bin/sh
# exercise.sh exercise|handout stage=N part=K build=DIR -- STAGE...: make
# exercise and make handout.
#
# exercise  writes the workspace of stage N: exercises/vN/ (with part=K,
#           exercises/vN-partK/), outside the stage folders and ignored by
#           git: lock.c as the stage N is built on has it (with part=K,
#           that stage with parts 1 to K-1 of N's diff, the table of
#           tools/stagediff.parts), the contract lock.h, the plumbing
#           its kind of server shares (tools/plumbing.sh), when
#           there is one, and TASK.md (tools/task.sh): what to do and
#           what grades it, without the solution. A workspace whose
#           files differ from what it would write (the student's work)
#           is left alone: one line says how to start over, exit 2.
# handout   the same workspace, fresh, as a tarball to hand out:
#           DIR/handout/vN[-partK].tar.gz (out=OUT: OUT/vN[-partK].tar.gz),
#           which unpacks as exercises/vN/.
#
# The make variables come as they were given (empty when not), then every
# stage of sim/stages.def as N:FOLDER:BASE. A bad argument: one line on
# stderr, exit 2. EXERCISES=DIR in the environment puts the workspaces in
# DIR instead of exercises/, PLUMBING=DIR takes the plumbing from DIR
# instead of plumbing/ (for tests).
set -u
cd "$(dirname "$0")/.." || exit 2

mode=${1:-}
[ $# -gt 0 ] && shift
. tools/stagelist.sh
take_args exercise.sh stage part build out -- "$@"
[ -n "$build" ] || build=build

case "$mode" in
exercise | handout) ;;
*) fail "usage: tools/exercise.sh exercise|handout stage=N [part=K] -- STAGE..." ;;
esac
[ -n "$stages" ] || fail "exercise.sh: no stages given: run it as make $mode stage=N"
[ -n "$stage" ] || fail "usage: make $mode stage=N [part=K]; stages:$(valid)"
case "$stage" in
*[!0-9]*) fail "stage=$stage is not a stage; valid:$(valid)" ;;
esac
dir=$(field "$stage" 2)
[ -n "$dir" ] || fail "stage=$stage is not a stage; valid:$(valid)"
base=$(field "$stage" 3)
first=$(printf '%s\n' $stages | awk -F: '$3 != 0 { print $1; exit }')
[ "$base" != 0 ] || fail "stage=$stage: $dir is built on no other stage, so there is nothing \
to start it from; exercises start at a stage with a base: make $mode stage=$first"
bdir=$(field "$base" 2)

check_part "$stage" "$dir" "$part" "take it whole: make $mode stage=$stage"
name=v$stage${part:+-part$part}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM
mkdir "$tmp/$name"

# The start: the base's files, with the parts before this one.
done_parts=0
[ -n "$part" ] && done_parts=$((part - 1))
upto="parts 1 to $done_parts"
[ "$done_parts" = 1 ] && upto="part 1"
tools/stagediff.sh "to=$stage" "apply=$done_parts" "out=$tmp/$name" -- $stages >/dev/null ||
    fail "exercise: cannot cut $dir's diff into its parts (make diff to=$stage part=1 says why)"
find "$tmp/$name" -type f ! -name lock.c -delete
cp "$dir/lock.h" "$tmp/$name/lock.h"
# The kind's plumbing, which the lock.c calls: the student builds with it.
server=$(sed -n "s/^SIM_STAGE($stage, *[^,]*, *[^,]*, *\([a-z]*\),.*/\1/p" sim/stages.def)
kit=${PLUMBING:-plumbing}
files="lock.c lock.h"
for f in $(sh tools/plumbing.sh "$server" "$kit"); do
    cp "$f" "$tmp/$name/" || exit 2
    files="$files ${f##*/}"
done
files="$files TASK.md"

# A part's start is a cut of two files: it must still compile.
if [ "$done_parts" -gt 0 ]; then
    check=$build/exercise/v$stage
    mkdir -p "$check" && cp "$tmp/$name/lock.c" "$tmp/$name/lock.h" "$check/" || exit 2
    make --no-print-directory "GRADE_DIR=$build/exercise" "$check/lock.o" >"$check/build.log" 2>&1 ||
        fail "part=$part: $bdir with $upto of $dir does not compile ($check/build.log): \
its parts are steps for reading here; take it whole: make $mode stage=$stage"
fi

make --no-print-directory "$build/grade_key" >"$tmp/key.log" 2>&1 ||
    { cat "$tmp/key.log" >&2; fail "exercise: $build/grade_key does not build (above)"; }
sh tools/task.sh "$stage" "$part" "$build" $stages >"$tmp/$name/TASK.md" || exit 2
# Never the solution: no line of the stage's lock.c that the start lacks.
sh tools/task_leaks.sh "$tmp/$name/TASK.md" "$dir/lock.c" "$tmp/$name/lock.c" >&2 ||
    fail "exercise: TASK.md would quote $dir/lock.c (above): tools/task_readme.awk must leave that out"

if [ "$mode" = handout ]; then
    out=${out:-$build/handout}
    mkdir -p "$out" "$tmp/tar/exercises" || exit 2
    mv "$tmp/$name" "$tmp/tar/exercises/$name"
    tar -czf "$out/$name.tar.gz" -C "$tmp/tar" "exercises/$name" || exit 2
    echo "handout: $out/$name.tar.gz: exercises/$name/ ($(echo $files | sed 's/ /, /g'));"
    echo "  a student unpacks it at the top of a clone (tar xzf $name.tar.gz), reads TASK.md, \
runs make grade stage=$stage${part:+ part=$part}"
    exit 0
fi

ws=${EXERCISES:-exercises}/$name
for f in $files; do
    if [ -e "$ws/$f" ] && ! cmp -s "$ws/$f" "$tmp/$name/$f"; then
        fail "exercise: $ws/$f has changes of yours, left as they are; to start over, \
move $ws away (or rm -r $ws) and run make exercise stage=$stage${part:+ part=$part} again"
    fi
done
mkdir -p "$ws" || exit 2
for f in $files; do
    cp "$tmp/$name/$f" "$ws/" || exit 2
done
if [ -n "$part" ]; then
    from="$bdir's lock.c with $upto of $dir's diff"
    [ "$done_parts" = 0 ] && from="$bdir's lock.c"
else
    from="$bdir's lock.c"
fi
kitfiles=$(echo $files | sed 's/^lock.c lock.h *//; s/ *TASK.md$//; s/ /, /g')
echo "exercise: $ws/: lock.c ($from), lock.h (the contract),${kitfiles:+ $kitfiles (the plumbing),} TASK.md"
echo "  read $ws/TASK.md, change $ws/lock.c, then: make grade stage=$stage${part:+ part=$part}"
