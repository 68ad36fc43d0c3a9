# stagelist.sh: what the scripts that make runs with the stage list share
# (stagediff.sh, exercise.sh, grade.sh); sourced, not run.
#
# Make passes each script its variables as they were given, name=value
# (empty when not), then "--" and every stage of sim/stages.def as
# N:FOLDER:BASE.
#
#   take_args SCRIPT NAME... -- ARG...   sets each NAME from ARG's NAME=value
#                                        (empty when not given), and $stages
#                                        from what follows ARG's "--"; any
#                                        other ARG: one line, exit 2
#   fail WORDS...                        one line on stderr, exit 2
#   valid                                " 1 (v1-setnx) 2 (v2-expire) ..."
#   field N K                            field K (2: folder, 3: base) of
#                                        stage N's line, or nothing
#   check_part N DIR PART WHOLE          sets $nparts, how many parts
#                                        tools/stagediff.parts cuts stage N
#                                        (folder DIR) into; a PART given
#                                        that is not one of them: one line
#                                        (WHOLE: how to take N whole when
#                                        it has none), exit 2

take_args() {
    _script=$1 _known=''
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        _known="$_known $1"
        eval "$1=''"
        shift
    done
    [ $# -gt 0 ] && shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        _name=${1%%=*}
        case " $_known " in
        *" $_name "*) [ "$_name" != "$1" ] || _name='' ;;
        *) _name='' ;;
        esac
        [ -n "$_name" ] || { echo "$_script: unknown argument '$1'" >&2; exit 2; }
        eval "$_name=\${1#*=}"
        shift
    done
    [ $# -gt 0 ] && shift
    stages="$*"
}

fail() {
    echo "$*" >&2
    exit 2
}

valid() {
    for line in $stages; do
        rest=${line#*:}
        printf ' %s (%s)' "${line%%:*}" "${rest%%:*}"
    done
}

field() {
    case "$1" in
    '' | *[!0-9]*) return ;;
    esac
    for line in $stages; do
        case "$line" in
        "$1":*) echo "$line" | cut -d: -f"$2"; return ;;
        esac
    done
}

check_part() {
    nparts=$(awk -v s="$1" '$1 == "title" && $2 == s' tools/stagediff.parts | grep -c .)
    [ -n "$3" ] || return 0
    [ "$nparts" -gt 0 ] || fail "part=$3: $2 is not told in parts; $4"
    case "$3" in
    *[!0-9]* | 0*) fail "part=$3 is not a part of $2: give part=1 to $nparts" ;;
    esac
    [ "$3" -le "$nparts" ] || fail "part=$3 is not a part of $2: give part=1 to $nparts"
}
