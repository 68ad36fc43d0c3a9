# task_readme.awk: the parts of a stage's README.md that an exercise's
# TASK.md may tell (tools/exercise.sh), none of which gives the solution.
#
#   awk -v want=goal|bug|layout -f task_readme.awk vN-<idea>/README.md
#
#   goal    the text between the title and the first section: the goal
#   bug     the section "The bug it fixes"
#   layout  the README's `redis>` examples: the keys as the tests read them
#
# Left out everywhere: "What changed" (the solution, as prose and diffs),
# "The flaw it keeps" and "Try it" (they describe the solution's
# behaviour), every fenced block but the `redis>` examples, a paragraph
# that points to the stage's diff, and the closing "Next:" line. Links to
# other stages' folders are rewritten for a file two folders down
# (exercises/vN/TASK.md).

function emit_paragraph() {
    if (para != "" && para !~ /make diff|the diff/)
        out = out (out == "" ? "" : "\n\n") para
    para = ""
}

function add_line(line) {
    gsub(/\]\(\.\.\//, "](../../", line)
    if (line ~ /^[ \t]*$/) {
        emit_paragraph()
        return
    }
    para = para (para == "" ? "" : "\n") line
}

NR == 1 && /^# / { section = "goal"; next }

/^```/ {
    if (!fence) {
        fence = 1
        block = ""
        first = ""
        next
    }
    fence = 0
    if (want == "layout" && first ~ /^redis> /)
        layout = layout (layout == "" ? "" : "\n") "```\n" block "```\n"
    next
}

fence {
    if (first == "")
        first = $0
    block = block $0 "\n"
    next
}

/^## / {
    emit_paragraph()
    section = $0 == "## The bug it fixes" ? "bug" : "other"
    next
}

/^### / { if (section == "goal") section = "other"; next }

section == want && !/^Next: / { add_line($0); next }

END {
    emit_paragraph()
    if (want == "layout")
        printf "%s", layout
    else if (out != "")
        print out
}
