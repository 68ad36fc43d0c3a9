#!/bin/sh
# deps.sh check|ensure|install|browser: what lockstep needs to build and test.
#
#   check    says exactly what is missing and how to install it; exit 1 then.
#   ensure   says nothing when all is there, else installs what is missing.
#            make test, demo, sim and bench run it first, so a fresh
#            machine needs no command before them.
#   install  the same, and says so when all is there; then the browser
#            (make deps).
#   libs     the libraries the simulator plays through their drivers
#            (drivers/<name>/driver.conf names each one's packages; make
#            deps libs=1): installed when a driver's check fails, without
#            their recommendations. Neither make demo nor the stages' tests
#            need them.
#   browser  a headless Chromium, which only the report's browser test
#            and make report's PDF use, and pdftotext (poppler-utils), with
#            which the test reads that PDF: installed when missing and
#            apt-get can; else one line, exit 1 (make report-test then
#            skips that test; CI fails).
#
# lockstep runs on Linux only: on another system check and ensure say so,
# with the container command that works there, and exit 1.
#
# Installing uses apt-get (Debian/Ubuntu), with sudo when not root: one
# apt-get update, then one line per package as it installs. Without
# apt-get, or without root and sudo, it prints the exact packages to
# install and stops.
#
# Needed: a C compiler, make, pkg-config, check (found by pkg-config),
# hiredis and cJSON headers and libraries, cmark-gfm and its extensions
# (the report's Markdown), redis-server; for the ZooKeeper
# stages, a Java runtime without a desktop (default-jre-headless), the
# ZooKeeper server's jar (libzookeeper-java) and its C client
# (libzookeeper-mt-dev). Debian's `zookeeper` package is not used: it
# depends on the desktop JRE (default-jre) and only adds scripts and a
# service that lockstep does not run; the tests and the simulator start
# the server from its jar. The Java packages are installed without their
# recommendations (fonts, sound, X libraries).
# For the MariaDB stages: mariadb-server-core (mariadbd, and
# mariadb-install-db, which makes a server's data dir), its C client
# libmariadb-dev (Connector/C) and mariadb-client-core, which
# mariadb-install-db runs for its my_print_defaults (it stops without). Not
# mariadb-server: it adds a system service, galera-4 and the full client
# that lockstep does not run; the tests and the simulator start mariadbd
# themselves. They come without their recommendations too.
set -u

CC=${CC:-cc}
missing_pkgs=""   # Debian package names

# What a package is for, in the lines that name it.
describe() {
    case "$1" in
    gcc) echo "a C compiler ($CC)" ;;
    make) echo "make" ;;
    pkg-config) echo "pkg-config, which finds the Check library" ;;
    check) echo "the Check unit test library" ;;
    libhiredis-dev) echo "the hiredis C client: headers and library" ;;
    libcjson-dev) echo "the cJSON library, which reads saved histories" ;;
    redis-server) echo "the Redis server that the tests and the simulator start" ;;
    default-jre-headless) echo "a Java runtime without a desktop, for the ZooKeeper servers" ;;
    libzookeeper-java) echo "the ZooKeeper server (its jar) that the tests and the simulator start" ;;
    libzookeeper-mt-dev) echo "the ZooKeeper C client: headers and library" ;;
    mariadb-server-core) echo "the MariaDB server (mariadbd, mariadb-install-db) that the tests and the simulator start" ;;
    mariadb-client-core) echo "the MariaDB tools mariadb-install-db calls" ;;
    libmariadb-dev) echo "the MariaDB C client (Connector/C): headers and library" ;;
    chromium) echo "a headless browser, for the report's browser test and its PDF" ;;
    poppler-utils) echo "pdftotext, with which the report's browser test reads its PDF" ;;
    libcmark-gfm-dev) echo "cmark-gfm, GitHub's Markdown renderer, with which the report's site shows the READMEs" ;;
    libcmark-gfm-extensions-dev) echo "cmark-gfm's extensions: the READMEs' tables on the report's site" ;;
    *) echo "a library's driver needs it (drivers/*/driver.conf)" ;;
    esac
}

need() {
    missing_pkgs="$missing_pkgs $1"
}

# The missing packages, one per line, with what each is for.
missing_list() {
    for pkg in $missing_pkgs; do
        echo "  - $pkg: $(describe "$pkg")"
    done
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
    missing_pkgs=""
    command -v "$CC" >/dev/null 2>&1 || need gcc
    command -v make >/dev/null 2>&1 || need make
    command -v pkg-config >/dev/null 2>&1 || need pkg-config
    pkg-config --exists check 2>/dev/null || need check
    have_lib hiredis/hiredis.h 'redisFree(0)' -lhiredis || need libhiredis-dev
    have_lib cjson/cJSON.h 'cJSON_Delete(0)' -lcjson || need libcjson-dev
    command -v redis-server >/dev/null 2>&1 || need redis-server
    command -v java >/dev/null 2>&1 || need default-jre-headless
    [ -r /usr/share/java/zookeeper.jar ] || need libzookeeper-java
    have_lib zookeeper/zookeeper.h 'zookeeper_close(0)' -lzookeeper_mt || need libzookeeper-mt-dev
    have_lib cmark-gfm.h 'cmark_version()' -lcmark-gfm || need libcmark-gfm-dev
    have_lib cmark-gfm-core-extensions.h 'cmark_gfm_core_extensions_ensure_registered()' \
        -lcmark-gfm-extensions || need libcmark-gfm-extensions-dev
    [ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null 2>&1 || need mariadb-server-core
    command -v my_print_defaults >/dev/null 2>&1 || need mariadb-client-core
    have_lib mariadb/mysql.h 'mysql_close(0)' -lmariadb || need libmariadb-dev
}

# Packages that come without their recommendations: a headless JRE and
# jars need no fonts, sound or X libraries.
install_flags() {
    case "$1" in
    default-jre-headless | libzookeeper-java | libzookeeper-mt-dev | mariadb-* | libmariadb-dev)
        echo "--no-install-recommends" ;;
    *) case " $driver_pkgs " in *" $1 "*) echo "--no-install-recommends" ;; esac ;;
    esac
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
This system has no apt-get: install them with its package manager, e.g.
  Fedora/RHEL: sudo dnf install gcc make pkgconf-pkg-config check-devel hiredis-devel cjson-devel redis
and, for the ZooKeeper stages, a Java runtime, ZooKeeper's jar at
/usr/share/java/zookeeper.jar and its C client library (libzookeeper_mt);
then run make again.
EOF
}

# The stages and the simulator call prctl(PR_SET_PDEATHSIG),
# sched_setaffinity, gettid and getrandom: Linux only. Elsewhere no
# package helps, so say that first, with the way that works.
linux_only() {
    system=$(uname -s 2>/dev/null)
    [ "$system" = Linux ] && return 0
    cat >&2 <<EOF
lockstep runs on Linux only: it calls prctl, sched_setaffinity, gettid and
getrandom, which ${system:-this system} does not have. Run it in a Linux container or VM;
with Docker, from this folder:
  docker run --rm -it -v "\$PWD":/lockstep -w /lockstep debian:bookworm \\
      sh -c 'apt-get update && apt-get install -y gcc make && make demo'
On Windows, WSL's Ubuntu works too. README.md, "Where it runs", says more.
EOF
    return 1
}

check() {
    linux_only || return 1
    probe
    [ -z "$missing_pkgs" ] && return 0
    echo "lockstep cannot build or test yet; missing:" >&2
    missing_list >&2
    if command -v apt-get >/dev/null 2>&1; then
        sudo=$(sudo_prefix)
        [ "$sudo" = "NO-SUDO" ] && sudo=""
        echo "Install them with:  make deps   (or: ${sudo:+$sudo }apt-get install -y$missing_pkgs)" >&2
    else
        print_elsewhere
    fi
    return 1
}

# Runs apt-get quietly (its output goes to $log, shown if it fails). It
# waits up to five minutes for another apt-get (an unattended upgrade, a
# second make in another terminal) to let go of the package database,
# rather than failing at once.
run_apt() {
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -q -o DPkg::Lock::Timeout=300 "$@" >>"$log" 2>&1
}

# The Debian redis-server package starts a system service on 6379 when it
# is installed. lockstep never uses it (tests start their own servers on
# free ports), and in CI or a container it must not be left running: a
# policy-rc.d that says "no" keeps it stopped, for this install only.
apt_install() {
    sudo=$(sudo_prefix)
    if [ "$sudo" = "NO-SUDO" ]; then
        echo "lockstep: not root and no sudo; as root, run:  apt-get update && apt-get install -y$missing_pkgs" >&2
        return 1
    fi
    log=$(mktemp "${TMPDIR:-/tmp}/lockstep-apt.XXXXXX") || return 1
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy"
    fi
    echo "lockstep: updating the package lists (${sudo:+$sudo }apt-get update)"
    run_apt update
    rc=$?
    for pkg in $missing_pkgs; do
        [ $rc -eq 0 ] || break
        echo "lockstep: installing $pkg: $(describe "$pkg")"
        run_apt install -y $(install_flags "$pkg") "$pkg"
        rc=$?
    done
    [ -n "$policy" ] && $sudo rm -f "$policy"
    if [ $rc -ne 0 ]; then
        echo "lockstep: apt-get failed; the end of its output:" >&2
        tail -n 15 "$log" >&2
        echo "lockstep: install them yourself, then run make again:  ${sudo:+$sudo }apt-get install -y$missing_pkgs" >&2
    fi
    rm -f "$log"
    return $rc
}

# Installs what is missing; quiet (says nothing) when all is there.
ensure() {
    linux_only || return 1
    probe
    [ -z "$missing_pkgs" ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "lockstep cannot build or test yet; missing:" >&2
        missing_list >&2
        print_elsewhere
        return 1
    fi
    echo "lockstep: missing:$missing_pkgs; installing them with apt-get"
    apt_install || return 1
    probe
    [ -z "$missing_pkgs" ] && return 0
    echo "lockstep: still missing after the install:" >&2
    missing_list >&2
    return 1
}

install() {
    probe
    if [ -n "$missing_pkgs" ]; then
        ensure || return 1
    fi
    echo "all dependencies are installed"
    browser || true
}

# The browser is optional: nothing builds with it, one test and the
# report's PDF use it; the test reads the PDF with pdftotext.
have_browser() {
    sh "$(dirname "$0")/browser.sh" find >/dev/null 2>&1
}

browser() {
    missing_pkgs=""
    have_browser || need chromium
    command -v pdftotext >/dev/null 2>&1 || need poppler-utils
    [ -z "$missing_pkgs" ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "lockstep: no apt-get to install$missing_pkgs: install them for the report's browser test" >&2
        return 1
    fi
    echo "lockstep: missing:$missing_pkgs, for the report's browser test; installing with apt-get"
    apt_install
    if ! have_browser; then
        echo "lockstep: no headless Chromium could be installed: the report's browser test will be skipped" >&2
        return 1
    fi
    command -v pdftotext >/dev/null 2>&1 && return 0
    echo "lockstep: pdftotext could not be installed: the report's browser test will not read its PDF" >&2
    return 1
}

# The packages of every driver whose check fails (its driver.conf's
# check: and package: lines), installed.
driver_pkgs=""
libs() {
    missing_pkgs=""
    for conf in "$(dirname "$0")"/../drivers/*/driver.conf; do
        [ -f "$conf" ] || continue
        check=$(sed -n 's/^check: *//p' "$conf")
        (cd "$(dirname "$conf")" && sh -c "$check") >/dev/null 2>&1 && continue
        for pkg in $(sed -n 's/^package: *//p' "$conf"); do
            need "$pkg"
            driver_pkgs="$driver_pkgs $pkg"
        done
    done
    if [ -z "$missing_pkgs" ]; then
        echo "lockstep: every library's driver has its packages"
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "lockstep: no apt-get to install$missing_pkgs: install them for the libraries' drivers" >&2
        return 1
    fi
    echo "lockstep: missing:$missing_pkgs, for the libraries' drivers; installing with apt-get"
    apt_install
}

case "${1:-}" in
check) check ;;
ensure) ensure ;;
install) install; [ "${2:-}" != libs ] || libs ;;
libs) libs ;;
browser) browser ;;
*) echo "usage: $0 check|ensure|install [libs]|libs|browser" >&2; exit 2 ;;
esac
