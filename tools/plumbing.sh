#!/bin/sh
# plumbing.sh KIND [DIR]: the files of KIND's plumbing, one a line, the
# header first. The one rule, which the Makefile, the exercises, TASK.md,
# the grader and the tests all read from here: a kind's plumbing is its
# header DIR/KIND.h, which declares all of it, DIR/KIND.c, and every
# DIR/KIND_*.c that has no header of its own (KIND.h declares what it
# defines). A file with a header of its own is a module apart that no
# stage links (redis_cluster.c and .h, the flash sale's cluster client).
# DIR (plumbing/ unless given) is read from the current directory, the
# repository's top. Prints nothing for a kind without a header.
set -u
kind=${1:?usage: tools/plumbing.sh KIND [DIR]}
dir=${2:-plumbing}
[ -f "$dir/$kind.h" ] || exit 0
echo "$dir/$kind.h"
[ -f "$dir/$kind.c" ] && echo "$dir/$kind.c"
for f in "$dir/$kind"_*.c; do
    [ -f "$f" ] && [ ! -f "${f%.c}.h" ] && echo "$f"
done
exit 0
