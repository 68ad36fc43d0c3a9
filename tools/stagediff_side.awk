# stagediff_side.awk: a unified diff (diff -u) drawn side by side, for
# make diff side=1 (stagediff.sh). Every line is printed whole, however
# long: the left column is as wide as its longest line, and a terminal
# narrower than both wraps rather than cuts. Between the columns, "|"
# marks a changed line, "<" a line only on the left, ">" one only on the
# right. Each hunk opens with the line numbers it starts at.
#
# With -v rows_out=1 the same pairing is printed for a program to draw (the
# report's stage pages, sim/html/html_diff.c), one row a line, fields
# apart by tabs: "H", the two files' labels; "@", the line numbers a
# hunk starts at on each side; a mark (" ", "|", "<", ">"), then each
# side's line number and text (empty on the side a line is missing
# from). So the terminal and the page pair the lines the same way.

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

function row(l, m, r, ln, rn) {
    rows++
    left[rows] = l
    sep[rows] = m
    right[rows] = r
    lnum[rows] = ln
    rnum[rows] = rn
    if (length(l) > width)
        width = length(l)
}

# The pending "-" and "+" lines of a change, paired off in order.
function flush(   i) {
    for (i = 1; i <= nminus || i <= nplus; i++)
        if (i <= nminus && i <= nplus)
            row(minus[i], "|", plus[i], mline[i], pline[i])
        else if (i <= nminus)
            row(minus[i], "<", "", mline[i], "")
        else
            row("", ">", plus[i], "", pline[i])
    nminus = nplus = 0
}

/^--- / && !inhunk { flush(); row(substr($0, 5), "", ""); next }
/^\+\+\+ / && !inhunk { right[rows] = substr($0, 5); sep[rows] = "H"; next }
/^@@ / {
    flush()
    split($2, a, ","); split($3, b, ",")
    ln = substr(a[1], 2) + 0; rn = substr(b[1], 2) + 0
    # A side with no lines (",0") starts after the line it names.
    row("@@ line " substr(a[1], 2), "@", "@@ line " substr(b[1], 2),
        ln + (a[2] == "0"), rn + (b[2] == "0"))
    ln += a[2] == "0"; rn += b[2] == "0"
    inhunk = 1
    next
}
/^\\/ { next }
{
    m = substr($0, 1, 1)
    t = expand(substr($0, 2))
    if (m == "-") {
        minus[++nminus] = t
        mline[nminus] = ln++
    } else if (m == "+") {
        plus[++nplus] = t
        pline[nplus] = rn++
    } else if (m == " ") {
        flush()
        row(t, " ", t, ln++, rn++)
    } else {
        flush()
        inhunk = 0
        row($0, "", "")
    }
}

END {
    flush()
    for (i = 1; rows_out && i <= rows; i++) {
        if (sep[i] == "")
            printf "%s\n", left[i]
        else if (sep[i] == "H" || sep[i] == "@")
            printf "%s\t%s\t%s\n", sep[i], sep[i] == "@" ? lnum[i] : left[i],
                   sep[i] == "@" ? rnum[i] : right[i]
        else
            printf "%s\t%s\t%s\t%s\t%s\n", sep[i], lnum[i], left[i], rnum[i], right[i]
    }
    for (i = 1; !rows_out && i <= rows; i++) {
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
