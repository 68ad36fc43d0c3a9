#!/bin/sh
# layout.sh LAYER...: the repository's shape, which no compiler checks
# (make test runs it as make layout-test, with the Makefile's SIM_LAYERS).
#
#   layers  sim/ has a folder per role, LAYER... lowest first. A file
#           includes headers from its own folder, from a folder before
#           it, or from sim/ itself (the stage list), never from a
#           folder after it: the checker cannot reach into the runner,
#           nor the history into the report. lock.h is the stage's own
#           header, which the client side is built against, and so is a
#           plumbing header (plumbing/redis.h: a Redis stage's provider).
#   size    no file in sim/, tests/, tools/ or plumbing/ is over 600 lines.
#   tools   nothing in sim/ runs a file of tests/: the scripts a user
#           runs through make are in tools/.
#   links   every relative link of README.md, docs/ and the stages'
#           READMEs leads to a file of the repository, and its #anchor
#           to a heading of that file (as GitHub names headings).
set -u
cd "$(dirname "$0")/.." || exit 2
[ $# -gt 0 ] || { echo "usage: tests/layout.sh LAYER... (lowest first)" >&2; exit 2; }

failed=0
checks=0
fail() {
    echo "layout-test: $*"
    failed=$((failed + 1))
}

# rank FOLDER: its place in the layer list (1 is the lowest), 0 if none.
rank() {
    i=0
    for l in $LAYERS; do
        i=$((i + 1))
        [ "$l" = "$1" ] && { echo $i; return; }
    done
    echo 0
}
LAYERS="$*"

for dir in sim/*/; do
    dir=${dir%/}
    [ "$(rank "${dir#sim/}")" -gt 0 ] || fail "$dir is not in the layer list ($LAYERS): add it to SIM_LAYERS in the Makefile, in its place"
done

for layer in $LAYERS; do
    mine=$(rank "$layer")
    for f in sim/"$layer"/*.c sim/"$layer"/*.h; do
        [ -f "$f" ] || continue
        for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
            checks=$((checks + 1))
            [ -f "sim/$layer/$h" ] && continue
            [ -f "sim/$h" ] && continue
            [ "$h" = lock.h ] && [ "$layer" = client ] && continue
            # The clients build with a stage, and give its lock a provider
            # of its kind's plumbing (plumbing/redis.h, plumbing/mariadb.h).
            [ -f "plumbing/$h" ] && [ "$layer" = client ] && continue
            found=""
            for l in $LAYERS; do
                [ -f "sim/$l/$h" ] && found=$l
            done
            if [ -z "$found" ]; then
                fail "$f includes \"$h\", which is in no folder of sim/"
            elif [ "$(rank "$found")" -gt "$mine" ]; then
                fail "$f includes \"$h\" from sim/$found, a layer above sim/$layer: move the code it needs down, or the file up"
            fi
        done
    done
done

for f in $(git ls-files 'sim/*' 'tests/*' 'tools/*' 'plumbing/*' 2>/dev/null) \
         $(git ls-files -o --exclude-standard 'sim/*' 'tests/*' 'tools/*' 'plumbing/*' 2>/dev/null); do
    [ -f "$f" ] || continue
    checks=$((checks + 1))
    n=$(wc -l <"$f")
    [ "$n" -le 600 ] || fail "$f has $n lines; keep every file of sim/, tests/, tools/ and plumbing/ under 600: split it by role"
done

checks=$((checks + 1))
grep -rnE 'tests/[A-Za-z0-9_.-]+\.(sh|awk|checks|parts)' sim/ >/dev/null 2>&1 &&
    fail "sim/ runs a script of tests/: $(grep -rnE 'tests/[A-Za-z0-9_.-]+\.(sh|awk|checks|parts)' sim/ | head -1); a script a user runs through make belongs in tools/"

# anchors FILE: the anchors of its headings, as GitHub makes them.
anchors() {
    awk '/^ *```/ { fence = !fence; next }
         !fence && /^#+ / { sub(/^#+ +/, ""); s = tolower($0); gsub(/[^a-z0-9 _-]/, "", s);
                            gsub(/ /, "-", s); print s }' "$1"
}
for page in README.md docs/*.md v*/README.md; do
    [ -f "$page" ] || continue
    for link in $(awk '/^ *```/ { fence = !fence; next }
                       !fence { s = $0; gsub(/`[^`]*`/, "", s)
                                while (match(s, /\]\([^) ]+\)/)) {
                                    print substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH) } }' "$page"); do
        case "$link" in http://* | https://* | mailto:*) continue ;; esac
        checks=$((checks + 1))
        file=${link%%#*} anchor=
        case "$link" in *'#'*) anchor=${link#*#} ;; esac
        if [ -z "$file" ]; then
            target=$page
        else
            target=$(dirname "$page")/$file
        fi
        if [ ! -e "$target" ]; then
            fail "$page links to $link, but there is no $target"
        elif [ -n "$anchor" ] && ! anchors "$target" | grep -qxF "$anchor"; then
            fail "$page links to $link, but $target has no heading whose anchor is #$anchor"
        fi
    done
done

echo "layout-test: $((checks - failed)) passed, $failed failed"
[ $failed -eq 0 ]
