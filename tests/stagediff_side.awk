# stagediff_side.awk: a unified diff (diff -u) drawn side by side, for
# make diff side=1 (stagediff.sh). Every line is printed whole, however
# long: the left column is as wide as its longest line, and a terminal
# narrower than both wraps rather than cuts. Between the columns, "|"
# marks a changed line, "<" a line only on the left, ">" one only on the
# right. Each hunk opens with the line numbers it starts at.

function expand(s,   out, i, c) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\t")
            do out = out " "; while (length(out) % 8 != 0)
        else
            out = out c
    }
    return out
}

function row(l, m, r) {
    rows++
    left[rows] = l
    sep[rows] = m
    right[rows] = r
    if (length(l) > width)
        width = length(l)
}

# The pending "-" and "+" lines of a change, paired off in order.
function flush(   i) {
    for (i = 1; i <= nminus || i <= nplus; i++)
        if (i <= nminus && i <= nplus)
            row(minus[i], "|", plus[i])
        else if (i <= nminus)
            row(minus[i], "<", "")
        else
            row("", ">", plus[i])
    nminus = nplus = 0
}

/^--- / && !inhunk { flush(); row(substr($0, 5), "", ""); next }
/^\+\+\+ / && !inhunk { right[rows] = substr($0, 5); sep[rows] = "H"; next }
/^@@ / {
    flush()
    split($2, a, ","); split($3, b, ",")
    row("@@ line " substr(a[1], 2), "@", "@@ line " substr(b[1], 2))
    inhunk = 1
    next
}
/^\\/ { next }
{
    m = substr($0, 1, 1)
    t = expand(substr($0, 2))
    if (m == "-") {
        minus[++nminus] = t
    } else if (m == "+") {
        plus[++nplus] = t
    } else if (m == " ") {
        flush()
        row(t, " ", t)
    } else {
        flush()
        inhunk = 0
        row($0, "", "")
    }
}

END {
    flush()
    for (i = 1; i <= rows; i++) {
        if (sep[i] == "")
            printf "%s\n", left[i]
        else if (sep[i] == "H" || sep[i] == "@")
            printf "%-*s   %s\n", width, left[i], right[i]
        else if (right[i] == "")
            printf "%-*s %s\n", width, left[i], sep[i]
        else
            printf "%-*s %s %s\n", width, left[i], sep[i], right[i]
    }
}
