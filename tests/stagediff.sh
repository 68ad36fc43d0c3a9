#!/bin/sh
# stagediff.sh FROM TO SIDE STAGE...: what changed between two stages.
#
# Run by `make diff from=N to=M`, which passes every stage of
# sim/stages.def as N:FOLDER:BASE. Diffs each source file (*.c, *.h) of
# stage FROM against the same file of stage TO: unified, or side by side
# when SIDE is 1. Without FROM, stage TO is diffed against its base, the
# stage it is built on. A file present in only one of them shows as added
# or removed.
set -u
cd "$(dirname "$0")/.." || exit 2

from=${1:-}
to=${2:-}
side=${3:-}
if [ $# -ge 3 ]; then shift 3; else set --; fi
stages="$*"

valid() {
    for line in $stages; do
        rest=${line#*:}
        printf ' %s (%s)' "${line%%:*}" "${rest%%:*}"
    done
}

# Field $2 (2: the folder, 3: the base) of stage $1's line, or nothing.
field() {
    case "$1" in
    '' | *[!0-9]*) return ;;
    esac
    for line in $stages; do
        case "$line" in
        "$1":*) echo "$line" | cut -d: -f"$2"; return ;;
        esac
    done
}

if [ -z "$stages" ]; then
    echo "stagediff.sh: no stages given: run it as make diff from=N to=M" >&2
    exit 2
fi
if [ -z "$to" ]; then
    echo "usage: make diff from=N to=M [side=1], or make diff to=M (M against its base); stages:$(valid)" >&2
    exit 2
fi
b=$(field "$to" 2)
if [ -z "$b" ]; then
    echo "to='$to' is not a stage; valid:$(valid)" >&2
    exit 2
fi
if [ -z "$from" ]; then
    from=$(field "$to" 3)
    if [ "$from" = 0 ]; then
        echo "$b is built on no other stage: give from=N; stages:$(valid)" >&2
        exit 2
    fi
fi
a=$(field "$from" 2)
if [ -z "$a" ]; then
    echo "from='$from' is not a stage; valid:$(valid)" >&2
    exit 2
fi

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
