# check_cmd.sh — a command's exit status and output as checks, sourced after
# tests/check.sh by the tests that compare outputs. A command that fails
# prints nothing, and two empty outputs compare equal: these fail on both.
#   run_ok OUT COMMAND...     runs COMMAND (stdin as given), stdout into OUT,
#                             stderr into OUT.err; true when it exits 0 and
#                             OUT is not empty, else says why on stderr
#   run_rc RC OUT COMMAND...  the same for a command that must exit RC
#   same A B                  A and B are byte-identical and not empty
run_rc() {
    want_rc=$1; run_out=$2; shift 2
    "$@" >"$run_out" 2>"$run_out.err"
    got_rc=$?
    if [ "$got_rc" -ne "$want_rc" ]; then
        echo "  $1 ${2:-} ...: exit $got_rc, not $want_rc: $(tail -n 3 "$run_out.err")" >&2
        return 1
    fi
    [ -s "$run_out" ] && return 0
    echo "  $1 ${2:-} ...: exit $got_rc with nothing on stdout" >&2
    return 1
}
run_ok() { run_rc 0 "$@"; }
same() {
    for f in "$1" "$2"; do
        [ -s "$f" ] || { echo "  $f: empty or absent" >&2; return 1; }
    done
    cmp -s "$1" "$2" || { echo "  $1 and $2 differ" >&2; return 1; }
}
