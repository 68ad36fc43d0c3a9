#!/bin/sh
# stagediff.sh FROM TO [SIDE]: what changed between two stages.
#
# Diffs each source file (*.c, *.h) of stage FROM against the same file of
# stage TO: unified, or side by side when SIDE is 1. A file present in only
# one of them shows as added or removed. Run by `make diff from=N to=M`.
set -u

STAGES="v1-setnx v2-expire v3-set-nx-px v4-owner-check v5-lua-unlock v6-reentrant-watchdog"
cd "$(dirname "$0")/.." || exit 2

valid() {
    n=0
    for d in $STAGES; do
        n=$((n + 1))
        printf ' %d (%s)' "$n" "$d"
    done
}

# The folder of stage $1 (a number 1..6), or nothing.
stage_dir() {
    case "$1" in
    [1-6]) set -- "$1" $STAGES; shift "$1"; echo "$1" ;;
    esac
}

from=${1:-}
to=${2:-}
side=${3:-}
if [ -z "$from" ] || [ -z "$to" ]; then
    echo "usage: make diff from=N to=M [side=1]; stages:$(valid)" >&2
    exit 2
fi
a=$(stage_dir "$from")
b=$(stage_dir "$to")
for arg in "from=$from=$a" "to=$to=$b"; do
    case "$arg" in
    *=) name=${arg%%=*}; value=${arg#*=}; value=${value%=}
        echo "$name='$value' is not a stage; valid:$(valid)" >&2
        exit 2 ;;
    esac
done

color=""
if [ -t 1 ] && diff --color=auto /dev/null /dev/null >/dev/null 2>&1; then
    color="--color=auto"
fi
if [ "$side" = 1 ]; then
    width=${COLUMNS:-$(tput cols 2>/dev/null || echo 160)}
    mode="--side-by-side --width=$width"
else
    mode="--unified"
fi

files=$( (cd "$a" && ls -- *.c *.h; cd "../$b" && ls -- *.c *.h) 2>/dev/null | sort -u)
for f in $files; do
    # -N: a file missing on one side diffs as empty (added or removed).
    # shellcheck disable=SC2086
    diff $mode $color -N --label "$a/$f" --label "$b/$f" "$a/$f" "$b/$f"
    [ $? -gt 1 ] && exit 2
done
exit 0
