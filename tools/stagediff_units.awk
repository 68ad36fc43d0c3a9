# stagediff_units.awk: the top-level item each line of a C file belongs
# to, for make diff's parts (stagediff.sh). Prints "LINE<TAB>UNIT" for
# every line. UNIT: "header" (the file's opening comment, #include
# lines), the name of a #define, "struct-NAME", or the name of a
# function or of a static object; "" for a blank line between items. A
# comment between items belongs to the item after it.

# Braces that open minus braces that close, outside string and char
# literals.
function braces(s,   t, o, c) {
    gsub(/"([^"\\]|\\.)*"|'([^'\\]|\\.)*'/, "", s)
    t = s; o = gsub(/[{]/, "", t); t = s; c = gsub(/[}]/, "", t)
    return o - c
}

# The comment lines waiting for the item after them get its name.
function name_pending(name,   k) {
    for (k = pending; k < NR; k++)
        if (unit[k] == "\001")
            unit[k] = name
    pending = 0
}

function item_name(s,   name) {
    sub(/^__attribute__[(][(][^)]*[)][)] */, "", s)
    name = s
    if (s ~ /^#define[ \t]+[A-Za-z_0-9]+/) {
        sub(/^#define[ \t]+/, "", name); sub(/[^A-Za-z_0-9].*/, "", name)
    } else if (s ~ /^#/) {
        name = "header"
    } else if (s ~ /^struct [A-Za-z_0-9]+ *[{]/) {
        sub(/^struct /, "", name); sub(/[^A-Za-z_0-9].*/, "", name)
        name = "struct-" name
    } else if (s ~ /[(]/ && s !~ /=/) {
        sub(/[(].*/, "", name); sub(/.*[^A-Za-z_0-9]/, "", name)
    } else {
        sub(/ *[=;].*/, "", name); sub(/.*[^A-Za-z_0-9]/, "", name)
    }
    return name
}

{
    if (depth > 0 || cont) {                  # inside an item
        unit[NR] = cur
        if (cont)
            cont = ($0 ~ /\\$/)
        else
            depth += braces($0)
        next
    }
    if (incomment) {
        unit[NR] = seen ? "\001" : "header"
        if ($0 ~ /\*\//)
            incomment = 0
        next
    }
    if ($0 ~ /^[ \t]*$/) {
        unit[NR] = ""
        next
    }
    if ($0 ~ /^\/\*/) {
        if (seen && !pending)
            pending = NR
        unit[NR] = seen ? "\001" : "header"
        if ($0 !~ /\*\//)
            incomment = 1
        next
    }
    if ($0 ~ /^[ \t{]/) {                     # a signature's next line, its {
        unit[NR] = cur
        depth += braces($0)
        next
    }
    seen = 1
    cur = item_name($0)
    cont = ($0 ~ /^#define/ && $0 ~ /\\$/)
    if (pending)
        name_pending(cur)
    unit[NR] = cur
    depth += braces($0)
}

END {
    if (pending)
        name_pending("")
    for (i = 1; i <= NR; i++)
        printf "%d\t%s\n", i, unit[i]
}
