# grade_tap.awk: Check's TAP log of a stage's suite as the grader's lines
# (tests/grade.sh).
#
#   awk -v stage=N -f grade_tap.awk checks.tap
#
# Prints one line per check, "ok|FAIL<TAB>CHECK<TAB>message", CHECK the
# test's function name, or matrix/<scenario> for a cell of the fault
# matrix. A message is made one line; what errstr held after a result
# that is no error comes after the check's words. A cell's message loses
# the "vN scenario: " the check's name already says, and its evidence leads with
# the anomalies the stage must not have: "found ME MD LU, v4 expects ME LU:
# MD: client A's release deleted client B's lock at 909 ms; ...". A check
# that crashed or ran out of time says so in words a student can act on.

function anomaly_set(s,   a, n, i, set) {
    n = split(s, a, " ")
    set = " "
    for (i = 1; i <= n; i++)
        set = set a[i] " "
    return set
}

# The evidence "ME: ...; MD: ...; LU: ..." with the items of kinds that
# the key does not expect first; those alone when there are some.
function lead_with_unexpected(evidence, expects,   items, n, i, kind, extra, rest, want) {
    gsub(/; (ME|MD|DL|LU|ST): /, "\001&", evidence)
    n = split(evidence, items, "\001; ")
    want = anomaly_set(expects)
    extra = ""
    rest = ""
    for (i = 1; i <= n; i++) {
        kind = substr(items[i], 1, 2)
        if (items[i] ~ /^(ME|MD|DL|LU|ST): / && index(want, " " kind " ") == 0)
            extra = extra (extra == "" ? "" : "; ") items[i]
        else
            rest = rest (rest == "" ? "" : "; ") items[i]
    }
    return extra != "" ? extra : rest
}

function cell_message(scenario, msg,   found, expects, evidence, p) {
    p = "v" stage " " scenario ": "
    if (index(msg, p) == 1)
        msg = substr(msg, length(p) + 1)
    if (match(msg, /^the checker found [^;]*; the answer key expects [^.]*\. /)) {
        found = msg
        sub(/^the checker found /, "", found)
        sub(/;.*/, "", found)
        expects = msg
        sub(/^[^;]*; the answer key expects /, "", expects)
        sub(/\..*/, "", expects)
        evidence = substr(msg, RLENGTH + 1)
        return "found " found ", v" stage " expects " expects ": " \
            lead_with_unexpected(evidence, expects)
    }
    return msg
}

# A result that is no error comes with no reason: the contract's errstr is
# the last failed call's. The suite's "got OK (<errstr>)" put one there, so
# that a reason left behind (a NOSCRIPT the fallback answered) read as
# the cause; the check's own words come first, then what errstr still
# said, said as such, and an empty one not at all.
function errstr_last(msg,   at, i, depth, c, said) {
    if (!match(msg, /got (OK|BUSY|NOT_OWNER) \(/))
        return msg
    at = RSTART + RLENGTH
    depth = 1
    for (i = at; i <= length(msg) && depth > 0; i++) {
        c = substr(msg, i, 1)
        depth += c == "(" ? 1 : c == ")" ? -1 : 0
    }
    if (depth > 0)
        return msg
    said = substr(msg, at, i - 1 - at)
    msg = substr(msg, 1, at - 3) substr(msg, i)
    if (said == "")
        return msg
    return msg "; dlock_errstr said \"" said "\", though the call returned no ERR"
}

# Check's own words for a crash or a timeout, said for a student.
function explain(msg) {
    if (msg ~ /Test timeout expired/)
        return "did not finish within its time limit: a call of your lock hangs, or waits far " \
            "longer than its budget (" msg ")"
    if (msg ~ /Received signal/)
        return "the test's process crashed in your lock (" msg "): make grade SANITIZE=1 " \
            "says where"
    if (msg ~ /Early exit/)
        return "the test's process ended in the middle of the check (" msg "): a sanitizer " \
            "stopped it, or the lock called exit, which it must never do"
    return msg
}

function flush(   id) {
    if (state == "")
        return
    gsub(/[ \t]+/, " ", msg)
    sub(/ $/, "", msg)
    id = test == "test_matrix_cell" ? "matrix/" tcase : test
    if (state == "FAIL")
        msg = test == "test_matrix_cell" ? cell_message(tcase, explain(msg)) : errstr_last(explain(msg))
    printf "%s\t%s\t%s\n", state, id, msg
    state = ""
}

# "ok 3 - tests/test_lock.c:basics:test_lock_ttl: Passed", "not ok ..."
/^(not )?ok [0-9]+ - / {
    flush()
    state = /^ok/ ? "ok" : "FAIL"
    line = $0
    sub(/^(not )?ok [0-9]+ - [^:]*:/, "", line)
    tcase = substr(line, 1, index(line, ":") - 1)
    line = substr(line, index(line, ":") + 1)
    test = substr(line, 1, index(line, ":") - 1)
    msg = substr(line, index(line, ":") + 2)
    next
}

/^1\.\.[0-9]+$/ { next }

# A message of several lines goes on.
state != "" { msg = msg " " $0 }

END { flush() }
