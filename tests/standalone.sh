#!/bin/sh
# standalone.sh [N...]: each stage builds from its own folder and its kind's
# plumbing, and nothing else (make test runs it in make cli-test). The
# stage's folder and its kind's plumbing (tools/plumbing.sh) are copied to
# an empty directory, built there with cc against the server's client library, and
# linked with tests/standalone.c, which checks the handle without a server.
# No stage may include another stage, or a file of sim/ or tests/.
set -u
cd "$(dirname "$0")/.." || exit 2

failed=0
checks=0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "standalone-test: $*"
    failed=$((failed + 1))
}

CC=${CC:-cc}
CFLAGS="-std=c11 -Wall -Wextra -Wstrict-prototypes -Wwrite-strings -Werror -pthread"

# The stages as stages.def lists them: number, folder, kind of server.
stages=$(sed -n 's/^SIM_STAGE(\([0-9]*\), *"\([^"]*\)", *[0-9]*, *\([a-z]*\),.*/\1 \2 \3/p' sim/stages.def)
[ -n "$stages" ] || { echo "standalone-test: no stage in sim/stages.def"; exit 2; }

# build N DIR KIND: the stage alone in $tmp/N, built and run.
build() {
    n=$1 dir=$2 kind=$3
    w=$tmp/$n
    mkdir -p "$w/plumbing" && cp -R "$dir" "$w/" && cp tests/standalone.c "$w/" || exit 2
    plumb=""
    for f in $(tools/plumbing.sh "$kind"); do
        cp "$f" "$w/plumbing/" || exit 2
        case $f in *.c) plumb="$plumb $f" ;; esac
    done
    case $kind in
        redis) flags="-DREDIS_PLUMBING" libs="-lhiredis" ;;
        zookeeper) flags="-DTHREADED" libs="-lzookeeper_mt" ;;
        mariadb) flags=$(pkg-config --cflags libmariadb 2>/dev/null)
                 libs=$(pkg-config --libs libmariadb 2>/dev/null || echo -lmariadb) ;;
        *) fail "$dir: its server, $kind, is not one this test knows: add its flags here"; return ;;
    esac
    # shellcheck disable=SC2086 # flags and libs are lists of words
    if ! (cd "$w" && $CC $CFLAGS $flags -I"$dir" -Iplumbing -o check "$dir"/*.c \
              $plumb standalone.c $libs) >"$w/build.log" 2>&1; then
        fail "$dir does not build from its folder and its plumbing ($(tools/plumbing.sh "$kind" | paste -sd ' ' -)) alone: $(head -3 "$w/build.log")"
        return
    fi
    if ! (cd "$w" && timeout 60 ./check) >"$w/run.log" 2>&1; then
        fail "$dir, built apart: $(head -3 "$w/run.log")"
    fi
}

echo "$stages" | {
    while read -r n dir kind; do
        [ $# -eq 0 ] || echo " $* " | grep -q " $n " || continue
        [ -d "$dir" ] || continue
        checks=$((checks + 1))
        build "$n" "$dir" "$kind"
    done
    echo "standalone-test: $((checks - failed)) passed, $failed failed"
    [ $failed -eq 0 ]
}
