# stagediff_parts.awk: puts each changed line of a stage diff in a part,
# for make diff part=N (stagediff.sh).
#
#   awk -v stage=N -f stagediff_parts.awk PARTS OLD_UNITS NEW_UNITS LINES
#
# PARTS is the table (stagediff.parts); OLD_UNITS and NEW_UNITS are what
# stagediff_units.awk says of the two files; LINES lists both files as
# diff merges them, each line after its mark: ' ' in both, '-' only in
# the old, '+' only in the new. Prints each line of LINES after its part
# and a tab (0 for a line in both). A changed line gets the part of the
# first row of its unit that matches it; a blank one that of the line
# before it on its side in the same run of changes (an item and the
# blank after it go together), or else of the line after it. A changed
# line that no row takes is an error: one line on stderr, exit 3.

function fail(msg) {
    print "stagediff.parts: " msg > "/dev/stderr"
    failed = 1
    exit 3
}

function add_row(   re, n) {
    rows++
    part[rows] = $2
    unit_of[rows] = $3
    re = $0
    sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]*/, "", re)
    kind[rows] = 0
    if (re == "")
        return
    if (re ~ /^\/.*\/,\/.*\/$/) {
        n = index(re, "/,/")
        first[rows] = substr(re, 2, n - 2)
        last[rows] = substr(re, n + 3, length(re) - n - 3)
        kind[rows] = 2
    } else if (re ~ /^\/.*\/$/) {
        first[rows] = substr(re, 2, length(re) - 2)
        kind[rows] = 1
    } else {
        fail("row \"" $0 "\": a pattern is /RE/ or /RE/,/RE/")
    }
}

# The part of a changed line: the first row of its unit that takes it. A
# range row takes the lines of one side from one that matches its first
# pattern to the next that matches its last.
function part_of(u, side, text,   r) {
    for (r = 1; r <= rows; r++) {
        if (unit_of[r] != u)
            continue
        if (kind[r] == 0)
            return part[r]
        if (kind[r] == 1 && text ~ first[r])
            return part[r]
        if (kind[r] == 2 && (open[r, side] || text ~ first[r])) {
            open[r, side] = text !~ last[r]
            return part[r]
        }
    }
    return ""
}

FNR == 1 { file++ }

file == 1 {
    if ($1 == stage && $2 ~ /^[0-9]+$/)
        add_row()
    next
}

file == 2 || file == 3 {
    tab = index($0, "\t")
    units[file, substr($0, 1, tab - 1)] = substr($0, tab + 1)
    next
}

# One changed line of a side: its part, or "" for a blank one (decided
# at the end).
function changed(m, t, where) {
    n++
    mark[n] = m
    text[n] = t
    if (t ~ /^[ \t]*$/) {
        p[n] = ""
        return
    }
    p[n] = part_of(where, m, t)
    if (p[n] == "")
        fail(sprintf("line %d of the %s file (%s) is in no part: \"%s\"",
                     m == "-" ? old : new, m == "-" ? "old" : "new",
                     where == "" ? "between items" : where, t))
}

{
    m = substr($0, 1, 1)
    t = substr($0, 2)
    if (m == "-") {
        changed("-", t, units[2, ++old])
    } else if (m == "+") {
        changed("+", t, units[3, ++new])
    } else if (units[2, old + 1] != units[3, new + 1]) {
        # One line in both files, but in two different items (diff
        # matched a line that moved): it leaves with the one and comes
        # with the other.
        old++
        new++
        changed("-", t, units[2, old])
        changed("+", t, units[3, new])
    } else {
        old++
        new++
        n++
        mark[n] = " "
        text[n] = t
        p[n] = 0
    }
}

END {
    if (failed)
        exit 3
    for (i = 1; i <= n; i++) {
        if (p[i] != "")
            continue
        for (j = i - 1; j >= 1 && mark[j] != " " && p[i] == ""; j--)
            if (mark[j] == mark[i] && p[j] != "")
                p[i] = p[j]
        for (j = i + 1; j <= n && mark[j] != " " && p[i] == ""; j++)
            if (mark[j] == mark[i] && p[j] != "")
                p[i] = p[j]
        if (p[i] == "")
            p[i] = 1
    }
    for (i = 1; i <= n; i++)
        printf "%s\t%s%s\n", p[i], mark[i], text[i]
}
