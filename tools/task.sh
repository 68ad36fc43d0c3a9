#!/bin/sh
# task.sh N K BUILD STAGE...: the TASK.md of stage N's exercise (of its
# part K, when K is not empty), on stdout (tools/exercise.sh).
#
# Made from what the repository already says, never quoting stage N's
# lock.c: the stage's title, goal and bug from its README.md
# (tools/task_readme.awk leaves the solution out), the owner token the
# tests read (a stage whose lock checks the owner), the calls of the
# kind's plumbing (tools/plumbing.sh's files; the declarations of its
# header plumbing/<server>.h, when there is one, each with the first sentence of its comment), the failpoints
# stage N's lock.c calls, named with the function and the commands they
# sit between, the capabilities it adds from sim/stages.def, said as
# sim/base/stage.h says them, the checks that judge them
# (tools/grade.checks), the cells of the matrix where its answer key or
# its story differs from its base's (BUILD/grade_key), and the commands
# to run. PLUMBING=DIR in the environment reads the plumbing from DIR
# instead of plumbing/ (for tests).
set -u
cd "$(dirname "$0")/.." || exit 2

stage=$1 part=$2 build=$3
shift 3

for line in "$@"; do
    case "$line" in
    "$stage":*) rest=${line#*:}; dir=${rest%%:*}; base=${rest#*:} ;;
    esac
done
for line in "$@"; do
    case "$line" in
    "$base":*) rest=${line#*:}; bdir=${rest%%:*} ;;
    esac
done

# Stage $1's line of sim/stages.def, its fields split by commas.
def() {
    sed -n "s/^SIM_STAGE($1, *\(.*\))[ \t]*$/\1/p" sim/stages.def
}
fld() {
    def "$1" | awk -F, -v f="$2" '{ gsub(/^[ \t"]+|[ \t"]+$/, "", $f); print $f }'
}

adds=$(def "$stage" | sed -n 's/.*,//p' | grep -o 'CAP([A-Z_]*)' | sed 's/CAP(\(.*\))/\1/')

# Whether stage $1 has capability $2, its bases' included.
has_cap() {
    _n=$1
    while [ -n "$_n" ] && [ "$_n" != 0 ]; do
        def "$_n" | sed -n 's/.*,//p' | grep -q "CAP($2)" && return 0
        _n=$(fld "$_n" 2)
    done
    return 1
}

# The failpoints a lock.c calls, a line each: the name, the function it
# sits in, the server command before it and the command (or the call
# on the handle) after it in that function, separated by "|", either
# empty. A command is a format string that starts with one in capitals
# ("GET %s"), whichever function sends it.
failpoints() {
    awk '/^[A-Za-z_].*\(/ && !/^(typedef|struct|#)/ && !/[;,=][ \t]*$/ {
            fn = $0; sub(/\(.*/, "", fn); sub(/.*[ *]/, "", fn); prev = ""; pend = ""; next }
         /^}/ { if (pend != "") print pend "|"; pend = ""; next }
         match($0, /dlock_failpoint\("[^"]*"\)/) {
            pend = substr($0, RSTART + 17, RLENGTH - 19) "|" fn "|" prev; next }
         match($0, /"[A-Z][A-Z]+ %/) {
            w = substr($0, RSTART + 1, RLENGTH - 3)
            if (pend != "") { print pend "|the " w; pend = "" } else prev = "the " w; next }
         pend != "" && match($0, /[a-z_]+\(l\)/) {
            print pend "|`" substr($0, RSTART, RLENGTH - 3) "()`"; pend = "" }' "$1"
}

# bullet WORDS: a list item of Markdown, wrapped at 78 columns.
bullet() {
    echo "- $*" | awk '{ n = split($0, w, " "); line = w[1]
        for (i = 2; i <= n; i++) {
            if (length(line) + 1 + length(w[i]) > 78) { print line; line = " " }
            line = line " " w[i] }
        print line }'
}
masters=$(fld "$stage" 4) bmasters=$(fld "$base" 4)
server=$(fld "$stage" 3) bserver=$(fld "$base" 3)
title=$(sed -n '1s/^# //p' "$dir/README.md")
n=v$stage b=v$base
ws=exercises/v$stage${part:+-part$part}
grade="make grade stage=$stage${part:+ part=$part}"

echo "# Exercise: $title"
echo
if [ -n "$part" ]; then
    nparts=$(awk -v s="$stage" '$1 == "title" && $2 == s' tools/stagediff.parts | grep -c .)
    awk -v s="$stage" -v k="$part" -v b="$bdir" -v n="$n" '$1 == "title" && $2 == s {
        t = $0; sub(/^[ \t]*title[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+/, "", t)
        if ($3 < k) done = done sprintf("- part %d, in your lock.c already: %s\n", $3, t)
        if ($3 == k) mine = sprintf("- **part %d, yours: %s**\n", $3, t)
        if ($3 > k) later = later sprintf("- part %d, after it: %s\n", $3, t) }
        END { start = k > 1 ? "'\''s with the parts before yours in it" : "'\''s, the stage " n " is built on"
              printf "%s brings several ideas; this exercise is one of them. ", n
              printf "Your `lock.c` is %s%s.\n\n", b, start
              printf "%s%s%s", done, mine, later }' tools/stagediff.parts
    echo
    if [ "$part" -lt "$nparts" ]; then
        echo "The grader judges $n whole: the checks of the parts after yours fail until"
        echo "they are written too. \`make exercise stage=$stage part=$((part + 1))\` starts the next part"
        echo "from the course's own version of the ones before it."
    else
        echo "It is the last part: with it, your lock.c is $n, and the grader, which"
        echo "judges $n whole, gives full marks."
    fi
else
    echo "Your \`lock.c\` is $bdir's, the stage $n is built on. Make it $n: change it"
    echo "until \`$grade\` gives full marks."
fi
echo
echo "\`lock.h\` is the contract, the same in every stage: the grader builds your"
echo "\`lock.c\` against its own copy, so change \`lock.c\` only."
echo
awk -v want=goal -f tools/task_readme.awk "$dir/README.md"
echo
echo "## The bug to fix"
echo
awk -v want=bug -f tools/task_readme.awk "$dir/README.md"
layout=$(awk -v want=layout -f tools/task_readme.awk "$dir/README.md")
if [ -n "$layout" ]; then
    echo
    echo "## The keys, as the tests read them"
    echo
    printf '%s\n' "$layout"
fi

if [ "$server" = redis ] && has_cap "$stage" OWNER; then
    echo
    echo "## The owner token"
    echo
    echo "The value your lock writes as its owner, which the tests read and take apart:"
    echo "32 lowercase hex digits, the 128 random bits a handle draws once from the OS"
    echo "random source (never \`rand()\`, which another client could guess or draw"
    echo "too), then \`:\` and the acquiring thread's id (\`gettid()\`, in decimal):"
    echo "\`9f86d081884c7d659a2feaa0c55ad015:48213\`."
fi

kit=${PLUMBING:-plumbing}
if [ -f "$kit/$server.h" ]; then
    # Its files, named as a list: "`redis.h`, `redis.c` and `redis_wait.c`".
    kitfiles=$(sh tools/plumbing.sh "$server" "$kit" | sed 's|.*/||; s|.*|`&`|' |
        awk '{ a[NR] = $0 } END { for (i = 1; i <= NR; i++)
                printf "%s%s", a[i], i == NR ? "" : i == NR - 1 ? " and " : ", " }')
    echo
    echo "## The plumbing you may call"
    echo
    echo "$kitfiles, beside your lock.c, are what every $server stage shares; the"
    echo "grader compiles and links its own copy, so change none of them. Your lock.c"
    echo "may call:"
    echo
    # Each declaration of the header, with the first sentence of the
    # comment above it.
    awk '/^[ \t]*\/\*/ { incom = 1; com = "" }
         incom { t = $0; gsub(/^[ \t]*\/?\*+\/?|\*+\/[ \t]*$/, "", t); com = com " " t
                 if ($0 ~ /\*\//) incom = 0; next }
         /^[ \t]*$/ { com = ""; next }
         /^#/ || /^[ \t]*(typedef|struct|enum|union|})/ { com = ""; decl = ""; next }
         decl != "" || /\(/ {
             decl = decl " " $0
             if (decl !~ /;[ \t]*$/) next
             gsub(/[ \t]+/, " ", decl); sub(/^ /, "", decl); sub(/ *;$/, "", decl)
             gsub(/[ \t]+/, " ", com); sub(/^ /, "", com); sub(/ $/, "", com)
             if (match(com, /\. /)) com = substr(com, 1, RSTART)
             printf "- `%s`%s\n", decl, com == "" ? "" : ": " com
             decl = ""; com = "" }' "$kit/$server.h"
fi

fps=$(failpoints "$dir/lock.c")
gone=$(failpoints "$bdir/lock.c" | cut -d'|' -f1 | while read -r fp; do
    printf '%s\n' "$fps" | cut -d'|' -f1 | grep -qxF "$fp" || echo "$fp"; done)
if [ -n "$fps$gone" ]; then
    "$build/grade_key" -f "$stage" >/dev/null || exit 2
    echo
    echo "## The failpoints"
    echo
    echo "The matrix's faults strike at named steps of the protocol: $n's lock calls"
    echo "\`dlock_failpoint(\"name\")\` there (a no-op but in the simulator), and the"
    echo "grader checks that each fires where $n has the step, and nowhere else."
    echo
    printf '%s\n' "$fps" | while IFS='|' read -r fp fn before after; do
        [ -n "$fp" ] || continue
        at=
        [ -n "$before" ] && [ -n "$after" ] && at=", between $before and $after"
        [ -n "$before" ] && [ -z "$after" ] && at=", after $before"
        [ -z "$before" ] && [ -n "$after" ] && at=", before $after"
        arms=$("$build/grade_key" -f "$stage" | awk -F'\t' -v f="$fp" '$1 == f { print $2 "\t" $4; exit }')
        if [ -n "$arms" ]; then
            bullet "\`$fp\`: call it in \`$fn()\`$at. The matrix's \`${arms%%	*}\` arms it:" \
                "the answer key judges $n's own ${arms#*	} with the fault there," \
                "so a lock that never calls it fails \`matrix/${arms%%	*}\`."
        else
            bullet "\`$fp\`: call it in \`$fn()\`$at (no scenario of the matrix arms it yet)."
        fi
    done
    for fp in $gone; do
        arms=$("$build/grade_key" -f "$stage" | awk -F'\t' -v f="$fp" '$1 == f && $3 == 0 { print $2 "\t" $4; exit }')
        [ -n "$arms" ] || continue
        bullet "\`$fp\`: your lock.c calls it; $n has no ${arms#*	}, so the call goes" \
            "with that step: \`matrix/${arms%%	*}\` fails a lock that still calls it."
    done
fi

echo
echo "## What grades it"
echo
echo "\`$grade\` builds \`$ws/lock.c\` in place of $dir's own and"
echo "runs what \`make stage=$stage test\` runs: $n's contract suite and $n's row of the"
echo "fault matrix. It prints one line per check, passed or failed with the reason,"
if [ -n "$part" ]; then
    echo "then the score. These checks judge what $n adds to $b; those of the parts"
    echo "already in your lock.c pass:"
else
    echo "then the score. As you got it, your lock fails these checks, which judge what"
    echo "$n adds to $b:"
fi
echo
for cap in $adds; do
    what=$(sed -n "s|^#define SIM_CAP_$cap .*/\* \(.*\) \*/.*|\1|p" sim/base/stage.h | sed 's/ *([^)]*)$//')
    # A stage on ZooKeeper runs the test_zk_ checks of the contract, one
    # on MariaDB the test_mariadb_ ones, a stage on Redis the others.
    awk -v cap="$cap" -v what="$what" -v kind="$server" '
        !/^#/ && NF > 1 {
            z = $1 ~ /^test_zk_/; m = $1 ~ /^test_mariadb_/
            if (kind == "zookeeper" ? z : kind == "mariadb" ? m : !z && !m)
                for (i = 2; i <= NF; i++)
                    if ($i == cap) { list = list (list == "" ? "" : ", ") "`" $1 "`"; break } }
        END { printf "- %s (%s): %s\n", cap, what, list == "" ? "no check of its own" : list }' \
        tools/grade.checks
done
if [ "$masters" != "$bmasters" ] || [ "$server" != "$bserver" ]; then
    echo "- and every check that takes the lock: $n's lock talks to $masters independent"
    echo "  $server masters where $b's talks to $bmasters, and the suite gives it $masters."
fi
echo
key=$("$build/grade_key" "$stage") || exit 2
if [ -n "$key" ]; then
    echo "and these cells of the matrix (the grader names them matrix/<scenario>),"
    echo "where what $n must show differs from what $b shows:"
    echo
    echo "| scenario | what it shows | $b shows | $n must show |"
    echo "|---|---|---|---|"
    printf '%s\n' "$key" | awk -F'\t' -v n="$n" '{
        why = $2 == "story" ? " (the story of the row in docs/matrix.md says more of " n "'\''s cell: the test checks it)" : \
              $2 == "servers" ? " (on " n "'\''s servers)" : ""
        printf "| %s | %s | %s | %s%s |\n", $1, $5, $3, $4, why }'
    if printf '%s\n' "$key" | cut -f3,4 | grep -q '('; then
        echo
        echo "A cell in parentheses, as \`make demo\` draws it: the scenario's fault cannot"
        echo "reach that stage, whose lock has no such step; its failpoint never fires there."
    fi
    # Up to three cells where the base shows an anomaly that N must not.
    watch=$(printf '%s\n' "$key" | awk -F'\t' -v b="$base" '
        function has(set, k) { return index(" " set " ", " " k " ") > 0 }
        $2 == "key" && shown < 3 {
            gsub(/[()]/, "", $3)
            n = split($3, a, " ")
            for (i = 1; i <= n; i++)
                if (a[i] != "-" && a[i] != "(-)" && !has($4, a[i])) {
                    printf "    make sim stage=%s scenario=%s\n", b, $1
                    shown++
                    break
                } }')
    if [ -n "$watch" ]; then
        echo
        echo "To watch the bug, play one of them against the stage you start from:"
        echo
        printf '%s\n' "$watch"
    fi
fi
echo
echo "Every other check passes already: keep it passing."
echo
echo "## Commands"
echo
printf '    %-34s %s\n' "$grade" "grade $ws/lock.c: a line per check, the score" \
    "make stage=$base test" "$b's own tests, which your starting lock passes" \
    "make sim stage=$base scenario=S" "one run of $b, told and drawn as a timeline" \
    "make sim" "the names of the scenarios"
echo
echo "The course's own answer is $dir/ (and \`make diff to=$stage\`): look at it after."
