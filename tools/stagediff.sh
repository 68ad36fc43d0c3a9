#!/bin/sh
# stagediff.sh from=N to=M side=S part=K full=F -- STAGE...: what changed
# between two stages.
#
# Run by `make diff`, which passes its variables as they were given (empty
# when not) and then every stage of sim/stages.def as N:FOLDER:BASE.
# Diffs each source file (*.c, *.h) of stage FROM against the same file
# of stage TO: unified, or side by side with side=1 (stagediff_side.awk:
# whole lines, however long). Only the changed regions and a few lines
# around them, unless full=1. Without from=, stage TO is diffed against
# its base, the stage it is built on. A file present in only one of them
# shows as added or removed.
#
# A stage whose diff on its base brings several ideas at once is cut into
# parts by tools/stagediff.parts: part=K shows the K-th alone, as the
# change from the base with parts 1 to K-1 to the base with parts 1 to K.
#
# apply=K out=DIR: no diff; writes each source file of TO's base, with
# parts 1 to K of TO's diff applied, into DIR (apply=0: the base's files
# as they are). make exercise starts a stage's part K+1 from there.
#
# A bad argument gets one line on stderr naming it as typed, and exit 2.
set -u
cd "$(dirname "$0")/.." || exit 2

PARTS=${STAGEDIFF_PARTS:-tools/stagediff.parts}  # another table: for tests
CONTEXT=3   # lines around each change

. tools/stagelist.sh
take_args stagediff.sh from to side part full apply out -- "$@"

# A switch: empty, 0 or 1.
switch() {
    case "$2" in
    '' | 0 | 1) ;;
    *) fail "$1=$2 is neither 1 nor 0: $1=1 $3, or leave it out" ;;
    esac
}

# The parts of stage $1's diff: "K<TAB>title" a line, none for most.
parts_of() {
    awk -v s="$1" '$1 == "title" && $2 == s {
        k = $3; sub(/^[ \t]*title[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+/, "")
        printf "%s\t%s\n", k, $0 }' "$PARTS"
}

[ -n "$stages" ] || fail "stagediff.sh: no stages given: run it as make diff from=N to=M"
[ -n "$to" ] || fail "usage: make diff from=N to=M [side=1] [full=1], or make diff to=M (M against its base) [part=K]; stages:$(valid)"
b=$(field "$to" 2)
[ -n "$b" ] || fail "to=$to is not a stage; valid:$(valid)"
base=$(field "$to" 3)
if [ -z "$from" ]; then
    from=$base
    [ "$from" != 0 ] || fail "$b is built on no other stage: give from=N; stages:$(valid)"
fi
a=$(field "$from" 2)
[ -n "$a" ] || fail "from=$from is not a stage; valid:$(valid)"
if [ "$from" = "$to" ]; then
    [ "$base" = 0 ] && fail "from=$from and to=$to are the same stage ($a): nothing to compare; give two different stages"
    fail "from=$from and to=$to are the same stage ($a): nothing to compare; give two different stages, or make diff to=$to for what it changed on its base"
fi
# side=rows: the side-by-side pairing as rows for the report's pages
# (stagediff_side.awk says how); not for people.
[ "$side" = rows ] || switch side "$side" "shows the two stages side by side"
switch full "$full" "shows whole files"

parts=$(parts_of "$to")
nparts=$(printf '%s' "$parts" | grep -c .)
if [ -n "$part" ]; then
    [ "$nparts" -gt 0 ] || fail "part=$part: $b's diff is not cut into parts; stages with parts:$(awk '$1 == "title" && !seen[$2]++ { printf " %s", $2 }' "$PARTS")"
    case "$part" in
    '' | *[!0-9]*) fail "part=$part is not a part of $b's diff: give part=1 to $nparts" ;;
    esac
    [ "$part" -ge 1 ] && [ "$part" -le "$nparts" ] ||
        fail "part=$part is not a part of $b's diff: give part=1 to $nparts"
    [ "$from" = "$base" ] || fail "part=$part cuts $b's diff on its base, v$base: give from=$base, or leave from= out"
fi

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

color=""
if [ -t 1 ] && [ "$side" != 1 ] && diff --color=auto /dev/null /dev/null >/dev/null 2>&1; then
    color="--color=auto"
fi

# Shows the difference of files $1 and $2, labelled $3 and $4.
show() {
    context=$CONTEXT
    if [ "$full" = 1 ]; then
        context=$(cat "$1" "$2" 2>/dev/null | wc -l)
    fi
    if [ "$side" = 1 ] || [ "$side" = rows ]; then
        diff -N -U "$context" --label "$3" --label "$4" "$1" "$2" >"$tmp/diff"
        [ $? -gt 1 ] && exit 2
        awk -v rows_out="$([ "$side" = rows ] && echo 1)" -f tools/stagediff_side.awk "$tmp/diff"
    else
        # shellcheck disable=SC2086
        diff $color -N -U "$context" --label "$3" --label "$4" "$1" "$2"
        [ $? -gt 1 ] && exit 2
    fi
    return 0
}

# Files $tmp/k0 .. $tmp/kP: file $1 of the base with parts 1 to k of
# the stage's diff applied, for file $2 of the stage.
cut_parts() {
    awk -f tools/stagediff_units.awk "$1" >"$tmp/old.units" 2>/dev/null || : >"$tmp/old.units"
    awk -f tools/stagediff_units.awk "$2" >"$tmp/new.units" 2>/dev/null || : >"$tmp/new.units"
    diff --old-line-format='-%l
' --new-line-format='+%l
' --unchanged-line-format=' %l
' "$1" "$2" >"$tmp/lines"
    [ $? -gt 1 ] && exit 2
    awk -v stage="$to" -f tools/stagediff_parts.awk "$PARTS" "$tmp/old.units" \
        "$tmp/new.units" "$tmp/lines" >"$tmp/parts" || exit 2
    k=0
    while [ "$k" -le "$nparts" ]; do
        # Between parts, an item gone may leave two blank lines: one stays.
        awk -v k="$k" '{ t = index($0, "\t"); p = substr($0, 1, t - 1) + 0
            m = substr($0, t + 1, 1)
            if (m == " " || (m == "-" && p > k) || (m == "+" && p <= k))
                print substr($0, t + 2) }' "$tmp/parts" | cat -s >"$tmp/k$k"
        k=$((k + 1))
    done
    # The parts add up to the whole diff, or the table is wrong.
    cmp -s "$tmp/k0" "$1" && cmp -s "$tmp/k$nparts" "$2" ||
        fail "$PARTS: the parts of $b/$(basename "$2") do not add up to its diff on $a"
}

# "v5-lua-unlock/lock.c + parts 1-2", the base with parts 1 to $1.
with_parts() {
    case "$1" in
    0) echo "$a/$f" ;;
    "$nparts") echo "$b/$f" ;;
    1) echo "$a/$f + part 1" ;;
    *) echo "$a/$f + parts 1-$1" ;;
    esac
}

files=$( (cd "$a" && ls -- *.c *.h; cd "../$b" && ls -- *.c *.h) 2>/dev/null | sort -u)

# The base with parts 1 to $apply, file by file, into $out.
if [ -n "$apply" ]; then
    [ -n "$out" ] && [ -d "$out" ] || fail "stagediff.sh: apply=$apply needs out=DIR, an existing folder"
    [ "$from" = "$base" ] || fail "apply=$apply cuts $b's diff on its base, v$base: leave from= out"
    [ "$apply" = 0 ] || [ "$nparts" -gt 0 ] || fail "apply=$apply: $b's diff is not cut into parts; give apply=0"
    case "$apply" in
    '' | *[!0-9]*) fail "apply=$apply is not a number of parts: give 0 to $nparts" ;;
    esac
    [ "$apply" -le "$nparts" ] || fail "apply=$apply is not a number of parts: give 0 to $nparts"
    for f in $files; do
        [ -f "$a/$f" ] || [ "$apply" -gt 0 ] || continue
        old="$a/$f" new="$b/$f"
        [ -f "$old" ] || old=/dev/null
        [ -f "$new" ] || new=/dev/null
        if [ "$apply" = 0 ] || cmp -s "$old" "$new"; then
            cp "$old" "$out/$f"
        else
            cut_parts "$old" "$new"
            cp "$tmp/k$apply" "$out/$f"
        fi
        [ -s "$out/$f" ] || rm -f "$out/$f"
    done
    exit 0
fi

if [ "$nparts" -gt 0 ] && [ "$from" = "$base" ]; then
    if [ -n "$part" ]; then
        printf '%s\n' "$parts" | awk -F'\t' -v k="$part" -v n="$nparts" -v a="$a" -v b="$b" \
            '$1 == k { printf "part %d of %d of %s -> %s: %s\n\n", k, n, a, b, $2 }'
    else
        echo "$a -> $b brings several ideas at once; one at a time:"
        printf '%s\n' "$parts" | awk -F'\t' -v to="$to" \
            '{ printf "  make diff to=%s part=%s   %s\n", to, $1, $2 }'
        echo
    fi
fi

for f in $files; do
    old="$a/$f" new="$b/$f"
    [ -f "$old" ] || old=/dev/null
    [ -f "$new" ] || new=/dev/null
    if [ -n "$part" ]; then
        cmp -s "$old" "$new" && continue
        cut_parts "$old" "$new"
        show "$tmp/k$((part - 1))" "$tmp/k$part" "$(with_parts $((part - 1)))" "$(with_parts "$part")"
    else
        show "$old" "$new" "$a/$f" "$b/$f"
    fi
done
exit 0
