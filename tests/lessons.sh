#!/bin/sh
# lessons.sh: each stage's lock.c holds its lesson, and what every stage
# of one kind of server shares is in its plumbing (tools/plumbing.sh's
# files: plumbing/<server>.c and its kin; make test runs
# it in make layout-test). No compiler checks this: a lock.c that takes
# plumbing back in still builds and passes its tests.
#
#   lines   a lock.c has at most its ceiling of lines: the first Redis
#           stage (v1) 90, v2 to v5 150, the first ZooKeeper stage (v10)
#           250, any other 500
#   shared  a stage's lock.c shares at most 40 code lines with its kind's
#           first stage's (v1's for Redis, v10's for ZooKeeper): the lines
#           diff finds unchanged, less blank lines, comments, #include
#           lines and lone braces
#
# With -v it prints each stage's figures.
set -u
cd "$(dirname "$0")/.." || exit 2
verbose=0
[ "${1:-}" = -v ] && verbose=1

SHARED_MAX=40
failed=0
checks=0
fail() {
    echo "lessons-test: $*"
    failed=$((failed + 1))
}

# ceiling N: the most lines stage N's lock.c may have.
ceiling() {
    case $1 in
        1) echo 90 ;;
        2|3|4|5) echo 150 ;;
        10) echo 250 ;;
        *) echo 500 ;;
    esac
}

# shared FIRST FILE: the code lines FILE shares with FIRST, as diff pairs
# them.
shared() {
    diff --unchanged-line-format='%L' --old-line-format='' --new-line-format='' "$1" "$2" |
        grep -vE '^[[:space:]]*$|^[[:space:]]*(/\*|\*/|\*$|\* |//)|^[[:space:]]*#include|^[[:space:]]*[{}];?[[:space:]]*$' |
        wc -l
}

# The stages as stages.def lists them: number, folder, kind of server.
stages=$(sed -n 's/^SIM_STAGE(\([0-9]*\), *"\([^"]*\)", *[0-9]*, *\([a-z]*\),.*/\1 \2 \3/p' sim/stages.def)
[ -n "$stages" ] || { echo "lessons-test: no stage in sim/stages.def"; exit 2; }

echo "$stages" | {
    firsts=""
    while read -r n dir kind; do
        f=$dir/lock.c
        [ -f "$f" ] || continue
        checks=$((checks + 1))
        lines=$(wc -l <"$f")
        max=$(ceiling "$n")
        [ "$lines" -le "$max" ] ||
            fail "$f has $lines lines, over its $max: move what every $kind stage shares to its plumbing ($(tools/plumbing.sh "$kind" | paste -sd ' ' -)), keep the lesson"
        first=$(echo "$firsts" | sed -n "s/^$kind //p")
        if [ -z "$first" ]; then
            firsts="$firsts
$kind $f"
            [ $verbose = 1 ] && echo "  $dir: $lines lines (of $max), the first $kind stage"
            continue
        fi
        checks=$((checks + 1))
        same=$(shared "$first" "$f")
        [ "$same" -le $SHARED_MAX ] ||
            fail "$f shares $same code lines with $first, over $SHARED_MAX: what both repeat belongs in the $kind plumbing"
        [ $verbose = 1 ] && echo "  $dir: $lines lines (of $max), $same code lines shared with $first"
    done
    echo "lessons-test: $((checks - failed)) passed, $failed failed"
    [ $failed -eq 0 ]
}
