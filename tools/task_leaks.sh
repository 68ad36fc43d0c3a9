#!/bin/sh
# task_leaks.sh TASK.md NEW.c START.c: whether an exercise's TASK.md
# quotes the solution (tools/exercise.sh checks every TASK.md it writes).
#
# A line of NEW.c (the stage's own lock.c) that START.c (the lock.c the
# student starts from) does not have is the solution's; TASK.md may hold
# none of them, of 16 characters or more once trimmed (shorter ones are
# words like "return rc;"). Prints each one it finds, exit 1; exit 0 when
# there is none.
set -u
[ $# -eq 3 ] || { echo "usage: tools/task_leaks.sh TASK.md NEW.c START.c" >&2; exit 2; }
awk 'FILENAME == ARGV[1] { t = $0; gsub(/^[ \t]+|[ \t]+$/, "", t); start[t] = 1; next }
     FILENAME == ARGV[2] { t = $0; gsub(/^[ \t]+|[ \t]+$/, "", t)
                           if (length(t) >= 16 && !(t in start)) code[t] = 1; next }
     { for (c in code) if (index($0, c) > 0) { printf "TASK.md quotes the solution: %s\n", c; found = 1 } }
     END { exit found }' "$3" "$2" "$1"
