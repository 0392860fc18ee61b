#!/bin/sh
# run.sh BUILD_DIR TEST_BINARY... — runs the given test binaries (the ones
# the Makefile built from the current sources, so a stale binary left in
# BUILD_DIR is never run) and every tests/test_*.sh, adds up their "<name>: P ok, F failed, S skipped" lines
# and prints the one summary line. A test that crashes or prints no summary
# counts as one failure. Exit status 1 on any failure. RF_TEST_SCRIPTS, when
# set, lists the shell tests to run instead of all (tests/run_arm64.sh).
build=${1:-build}
shift
export ROFORMER="$build/roformer"
passed=0; failed=0; skipped=0
out=$(mktemp)
for t in "$@" ${RF_TEST_SCRIPTS-tests/test_*.sh}; do
    [ -f "$t" ] || continue
    case "$t" in *.sh) sh "$t" >"$out" 2>&1 ;; *) "$t" >"$out" 2>&1 ;; esac
    rc=$?
    line=$(grep -E '^[A-Za-z0-9_]+: [0-9]+ ok, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
    grep -E '^(FAIL|SKIP) ' "$out"
    if [ -z "$line" ]; then
        echo "CRASH $t (exit $rc, no summary):"; tail -n 20 "$out"
        failed=$((failed + 1)); continue
    fi
    echo "$line"
    set -- $(echo "$line" | sed -E 's/^[^:]*: ([0-9]+) ok, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
    passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + $3))
    if [ "$rc" -ne 0 ] && [ "$2" -eq 0 ]; then
        echo "FAIL $t exited $rc"; tail -n 20 "$out"; failed=$((failed + 1))
    fi
done
rm -f "$out"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
