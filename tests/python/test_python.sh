# test_python.sh — the Python package (tools/python/roformer) and its Dask
# jobs: pytest over tests/python, its result mapped to this suite's summary
# line (each pytest test is one check). Debian's /usr/bin/python3 with
# python3-numpy and python3-pytest; without them, or without the reference
# fixtures, the tests are counted as skipped and say why. RF_PYTEST_SELECT,
# when set, names the test files (or FILE::TEST) to run instead of all
# (tests/mutants/run.sh).
. tests/check.sh
build=$(dirname "$ROFORMER")
PY=/usr/bin/python3
require_python "numpy, pytest" "the Python package's tests"
# An ASan build's library needs the sanitizer runtimes loaded first; Python
# itself is not instrumented, so leak reports would be about the interpreter.
# The leak test measures malloc's heap and RSS, which are the sanitizer's
# there: the plain build runs it.
not_run=""
case "$build" in
*asan*)
    export LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0
    not_run="tests/python/test_robustness.py::test_no_leak_over_12000_calls"
    echo "NOT RUN in $build (the plain build runs it): $not_run" ;;
esac
export ROFORMER_LIBRARY="$build/libroformer.so" PYTHONPATH="tools/python:tests/python"
export ROFORMER_REFERENCE="${REF:-../shared/reference}" TMPDIR="$TMP"
timeout 840 $PY -m pytest -q -rfEs -p no:cacheprovider ${not_run:+--deselect "$not_run"} \
    ${RF_PYTEST_SELECT:-tests/python} >"$TMP/pytest.log" 2>&1
rc=$?
sed -n 's/^FAILED /FAIL test_python: /p; s/^ERROR /FAIL test_python: /p; s/^SKIPPED \[[0-9]*\] /SKIP test_python: /p' \
    "$TMP/pytest.log"
summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$TMP/pytest.log" | tail -n 1)
count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }
check_passed=$(count passed)
check_failed=$(( $(count failed) + $(count error) ))
check_skipped=$(count skipped)
if [ "$rc" -ne 0 ] && [ "$check_failed" -eq 0 ]; then
    echo "FAIL test_python: pytest exited $rc" >&2; tail -n 30 "$TMP/pytest.log" >&2
    check_failed=1
fi
[ "$check_failed" -eq 0 ] || tail -n 60 "$TMP/pytest.log" >&2
check_done
