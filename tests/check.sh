# check.sh — the shell twin of check.h, sourced by tests/*/test_*.sh.
#   check "what" COMMAND...     passes when COMMAND exits 0
#   check_skip "why"            counts a skip
#   check_done                  prints "<name>: P ok, F failed, S skipped", exits 1 on failure
#   require_reference "what"    without $REF: one skip naming what goes untested, then exits
#   require_python MODULES "what"  without $PY (default /usr/bin/python3) importing MODULES
#                               ("numpy" or "numpy, pytest"): the same
#   run_ok OUT COMMAND...       runs COMMAND (stdin as given), stdout into OUT, stderr into
#                               OUT.err; true when it exits 0 and OUT is not empty, else says
#                               why on stderr (a failed command prints nothing, and two empty
#                               outputs compare equal: this fails on both)
#   run_rc RC OUT COMMAND...    the same for a command that must exit RC
#   same A B                    A and B are byte-identical and not empty
# $ROFORMER is the CLI under test; $REF the reference dir ("" when absent).
check_passed=0; check_failed=0; check_skipped=0
# Each test runs the CLI in the environment it tests, not the caller's: the
# variables that change what the CLI does are unset here, and a test of one
# sets it on the command it runs.
unset OPENBLAS_CORETYPE ROFORMER_BLAS_CORE ROFORMER_BLAS_REEXEC ROFORMER_MODEL
ROFORMER=${ROFORMER:-build/roformer}
# The tests' Python checks import the helpers of tests/ (vectors.py).
export PYTHONPATH="tests${PYTHONPATH:+:$PYTHONPATH}"
REF=${ROFORMER_REFERENCE:-../shared/reference}
[ -d "$REF" ] || REF=""
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

check() {
    what=$1; shift
    if "$@"; then check_passed=$((check_passed + 1))
    else check_failed=$((check_failed + 1)); echo "FAIL $(basename "$0"): $what" >&2; fi
}
check_skip() { check_skipped=$((check_skipped + 1)); echo "SKIP $(basename "$0"): $1" >&2; }
check_done() {
    echo "$(basename "$0" .sh): $check_passed ok, $check_failed failed, $check_skipped skipped"
    [ "$check_failed" -eq 0 ]
}
require_reference() {
    [ -n "$REF" ] && return 0
    check_skip "reference fixtures absent (../shared/reference or \$ROFORMER_REFERENCE): $1"
    check_done; exit
}
require_python() {
    ${PY:-/usr/bin/python3} -c "import $1" 2>/dev/null && return 0
    check_skip "${PY:-/usr/bin/python3} with $1 absent: $2"
    check_done; exit
}
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
