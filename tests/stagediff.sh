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

# One line on stderr, exit 2: what make diff prints for a bad argument.
fail() {
    echo "$*" >&2
    exit 2
}

[ -n "$stages" ] || fail "stagediff.sh: no stages given: run it as make diff from=N to=M"
[ -n "$to" ] || fail "usage: make diff from=N to=M [side=1], or make diff to=M (M against its base); stages:$(valid)"
b=$(field "$to" 2)
[ -n "$b" ] || fail "to='$to' is not a stage; valid:$(valid)"
if [ -z "$from" ]; then
    from=$(field "$to" 3)
    [ "$from" != 0 ] || fail "$b is built on no other stage: give from=N; stages:$(valid)"
fi
a=$(field "$from" 2)
[ -n "$a" ] || fail "from='$from' is not a stage; valid:$(valid)"

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
