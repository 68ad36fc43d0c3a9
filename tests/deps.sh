#!/bin/sh
# deps.sh check|install: what lockstep needs to build and test.
#
#   check    says exactly what is missing and how to install it; exit 1 then.
#   install  installs what is missing with apt-get (sudo when not root);
#            does nothing when all is there; elsewhere prints what to install.
#
# Needed: a C compiler, make, pkg-config, check (found by pkg-config),
# hiredis and cJSON headers and libraries, redis-server.
set -u

CC=${CC:-cc}
missing_pkgs=""   # Debian package names
missing_what=""   # the same, in words

need() {
    missing_pkgs="$missing_pkgs $1"
    missing_what="$missing_what
  - $2 (Debian/Ubuntu package: $1)"
}

# have_lib HEADER CALL LIB: compiles and links a one-line program that
# includes HEADER and makes CALL: proves headers and library.
have_lib() {
    command -v "$CC" >/dev/null 2>&1 || {
        [ -f "/usr/include/$1" ]
        return
    }
    dir=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-deps.XXXXXX") || return 1
    printf '#include <%s>\nint main(void) { %s; return 0; }\n' "$1" "$2" >"$dir/t.c"
    "$CC" "$dir/t.c" -o "$dir/t" "$3" >/dev/null 2>&1
    rc=$?
    rm -rf "$dir"
    return $rc
}

probe() {
    command -v "$CC" >/dev/null 2>&1 || need gcc "a C compiler ($CC)"
    command -v make >/dev/null 2>&1 || need make "make"
    command -v pkg-config >/dev/null 2>&1 || need pkg-config "pkg-config"
    pkg-config --exists check 2>/dev/null || need check "the Check unit test library (pkg-config: check)"
    have_lib hiredis/hiredis.h 'redisFree(0)' -lhiredis ||
        need libhiredis-dev "hiredis headers and library (-lhiredis)"
    have_lib cjson/cJSON.h 'cJSON_Delete(0)' -lcjson ||
        need libcjson-dev "the cJSON library, which reads saved histories (-lcjson)"
    command -v redis-server >/dev/null 2>&1 || need redis-server "redis-server"
}

sudo_prefix() {
    if [ "$(id -u)" -eq 0 ]; then
        echo ""
    elif command -v sudo >/dev/null 2>&1; then
        echo "sudo"
    else
        echo "NO-SUDO"
    fi
}

print_elsewhere() {
    cat >&2 <<EOF
Install them with your system's package manager, for example:
  Fedora/RHEL: sudo dnf install gcc make pkgconf-pkg-config check-devel hiredis-devel cjson-devel redis
  macOS:       brew install pkg-config check hiredis cjson redis
EOF
}

check() {
    probe
    [ -z "$missing_pkgs" ] && return 0
    echo "lockstep cannot build or test yet; missing:$missing_what" >&2
    if command -v apt-get >/dev/null 2>&1; then
        sudo=$(sudo_prefix)
        [ "$sudo" = "NO-SUDO" ] && sudo=""
        echo "Install them with:  make deps   (or: ${sudo:+$sudo }apt-get install -y$missing_pkgs)" >&2
    else
        print_elsewhere
    fi
    return 1
}

# The Debian redis-server package starts a system service on 6379 when it
# is installed. lockstep never uses it (tests start their own servers on
# free ports), and in CI or a container it must not be left running: a
# policy-rc.d that says "no" keeps it stopped, for this install only.
apt_install() {
    sudo=$(sudo_prefix)
    if [ "$sudo" = "NO-SUDO" ]; then
        echo "not root and no sudo: run as root:  apt-get install -y$missing_pkgs" >&2
        return 1
    fi
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy"
    fi
    echo "installing:$missing_pkgs"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -q &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q$missing_pkgs
    rc=$?
    [ -n "$policy" ] && $sudo rm -f "$policy"
    return $rc
}

install() {
    probe
    if [ -z "$missing_pkgs" ]; then
        echo "all dependencies are installed"
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "lockstep is missing:$missing_what" >&2
        print_elsewhere
        return 1
    fi
    apt_install || return 1
    missing_pkgs=""
    missing_what=""
    check && echo "all dependencies are installed"
}

case "${1:-}" in
check) check ;;
install) install ;;
*) echo "usage: $0 check|install" >&2; exit 2 ;;
esac
