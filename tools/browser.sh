#!/bin/sh
# browser.sh: a headless Chromium for the report's test and screenshots.
#
#   browser.sh find                    the browser's path; exit 1 when none
#   browser.sh dom URL OUT LOG         the page's DOM after it loaded into OUT,
#                                      the browser's log (console messages) into LOG
#   browser.sh shot URL PNG W H        a W x H screenshot of the page into PNG
#   browser.sh pdf URL PDF             the page printed into PDF (its own print
#                                      style: paper, margins), without the
#                                      browser's header and footer
#
# The flags keep it from the network (no updates, no sync, no background
# requests: without them Chromium tries to reach Google and waits for it),
# from the sandbox (it runs as root in CI) and from any profile (a fresh
# one, removed afterwards). --allow-file-access-from-files lets the test's
# own page read the site's pages, which it loads from the file system.
set -u

TIMEOUT=${BROWSER_TIMEOUT:-180}  # seconds a page may take; then it has hung

find_browser() {
    for b in chromium chromium-headless-shell chrome-headless-shell \
             google-chrome-stable google-chrome; do
        p=$(command -v "$b" 2>/dev/null) && { echo "$p"; return 0; }
    done
    for p in /usr/lib/chromium/chromium-headless-shell /usr/lib/chromium/chromium; do
        [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}

# run ARGS...: the browser headless with a throwaway profile.
run() {
    b=$(find_browser) || { echo "browser.sh: no headless Chromium: run make deps" >&2; exit 1; }
    profile=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-browser.XXXXXX") || exit 1
    timeout "$TIMEOUT" "$b" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-default-apps --disable-extensions --mute-audio --hide-scrollbars \
        --user-data-dir="$profile" "$@"
    rc=$?
    rm -rf "$profile"
    return $rc
}

case "${1:-}" in
find)
    find_browser
    ;;
dom)
    [ $# -eq 4 ] || { echo "usage: $0 dom URL OUT LOG" >&2; exit 2; }
    run --allow-file-access-from-files --enable-logging=stderr --v=0 \
        --dump-dom "$2" >"$3" 2>"$4"
    ;;
shot)
    [ $# -eq 5 ] || { echo "usage: $0 shot URL PNG W H" >&2; exit 2; }
    run --window-size="$4,$5" --screenshot="$3" "$2" >/dev/null 2>&1
    ;;
pdf)
    [ $# -eq 3 ] || { echo "usage: $0 pdf URL PDF" >&2; exit 2; }
    rm -f "$3"
    run --no-pdf-header-footer --generate-pdf-document-outline \
        --print-to-pdf="$3" "$2" >/dev/null 2>&1 || exit $?
    [ -s "$3" ]
    ;;
*)
    echo "usage: $0 find | dom URL OUT LOG | shot URL PNG W H | pdf URL PDF" >&2
    exit 2
    ;;
esac
