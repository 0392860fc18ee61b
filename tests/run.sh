#!/bin/sh
# run.sh [-j N] BUILD_DIR TEST_BINARY... — runs the given test binaries (the
# ones the Makefile built from the current sources, so a stale binary left
# in BUILD_DIR is never run) and every tests/*/test_*.sh, N at a time
# (default 1; `make test` passes TEST_JOBS), adds up their
# "<name>: P ok, F failed, S skipped" lines and prints the one summary line.
# A test that crashes or prints no summary counts as one failure. Exit
# status 1 on any failure. RF_TEST_SCRIPTS, when set, lists the shell tests
# to run instead of all (tests/run_arm64.sh).
#
# Each test writes into a file of its own; when it ends, its FAIL and SKIP
# lines and its summary line are printed together, so the lines of two
# tests never mix. Tests start longest first, by the wall times of the last
# run kept in BUILD_DIR/test-times (a test not timed yet starts first, shell
# tests before binaries), so that no long test starts last and runs alone.
#
# Each test has TEST_TIMEOUT seconds (default 900): one still running then is
# killed with every process it started, named on a TIMEOUT line, and counted
# as a failure, so a hang fails the run instead of stopping it. With
# ROFORMER_REQUIRE_REFERENCE=1 (CI sets it) an absent reference directory is
# a failure, not the skips of the tests that need it.
#
# RF_TEST_EXCLUDE names tests (file names, as test_no_alloc or
# test_pip_install.sh) that this build does not run, because what they
# measure is not there (make asan: the sanitizers' allocator and shadow
# memory); one NOT RUN line names them, and the plain build runs them.
jobs=1
case $1 in
-j) jobs=$2; shift 2 ;;
-j*) jobs=${1#-j}; shift ;;
esac
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: -j wants a positive number, not '$jobs'" >&2; exit 2 ;; esac
limit=${TEST_TIMEOUT:-900}
case $limit in '' | *[!0-9]* | 0) echo "run.sh: TEST_TIMEOUT wants a positive number of seconds, not '$limit'" >&2; exit 2 ;; esac
build=${1:-build}
shift
export ROFORMER="$build/roformer"
work=$(mktemp -d)
pids=""
trap 'rm -rf "$work"' EXIT
trap '[ -n "$pids" ] && kill $pids 2>/dev/null; exit 130' INT TERM

# ==== The order: longest first ====
# $work/list: "seconds index path" per test, index in the order given.
i=0
for t in "$@" ${RF_TEST_SCRIPTS-tests/*/test_*.sh}; do
    [ -f "$t" ] || continue
    case " ${RF_TEST_EXCLUDE-} " in *" $(basename "$t") "*) continue ;; esac
    i=$((i + 1))
    case "$t" in *.sh) untimed=1000000 ;; *) untimed=999999 ;; esac
    s=$(awk -v t="$t" -v u="$untimed" '$2 == t { s = $1 } END { print s == "" ? u : s }' \
        "$build/test-times" 2>/dev/null || echo "$untimed")
    echo "$s $i $t"
done | sort -k1,1nr -k2,2n >"$work/list"

[ -n "${RF_TEST_EXCLUDE-}" ] && echo "NOT RUN in $build (RF_TEST_EXCLUDE; the plain build runs them): $RF_TEST_EXCLUDE"

# ==== Running, N at a time ====
passed=0; failed=0; skipped=0
reference=${ROFORMER_REFERENCE:-../shared/reference}
if [ "${ROFORMER_REQUIRE_REFERENCE:-0}" = 1 ] && [ ! -d "$reference" ]; then
    echo "FAIL run.sh: the reference directory $reference is absent, and ROFORMER_REQUIRE_REFERENCE=1 requires it"
    failed=1
fi
running=""   # indexes started and not yet reported

start() { # start INDEX TEST: runs it in the background into $work/INDEX.*
    (
        t0=$(date +%s)
        # timeout puts the test in a process group of its own and kills the
        # whole group: a server the test started goes with it.
        case "$2" in *.sh) timeout -k 10 "$limit" sh "$2" ;; *) timeout -k 10 "$limit" "$2" ;; esac \
            >"$work/$1.out" 2>&1 </dev/null 3<&-
        rc=$?
        echo "$rc $(($(date +%s) - t0)) $2" >"$work/$1.tmp"
        mv "$work/$1.tmp" "$work/$1.end"
    ) &
    pids="$pids $!"
    running="$running $1"
}

report() { # report INDEX: prints one finished test's lines, adds up its counts
    set -- "$1" $(cat "$work/$1.end")
    out=$work/$1.out t=$4 rc=$2
    echo "$3 $t" >>"$work/times"
    line=$(grep -E '^[A-Za-z0-9_]+: [0-9]+ ok, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
    grep -E '^(FAIL|SKIP|NOT RUN) ' "$out"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "TIMEOUT $t: still running after $limit s (TEST_TIMEOUT), killed; its last lines:"
        tail -n 20 "$out"
        failed=$((failed + 1)); return
    fi
    if [ -z "$line" ]; then
        echo "CRASH $t (exit $rc, no summary):"; tail -n 20 "$out"
        failed=$((failed + 1)); return
    fi
    echo "$line"
    set -- $(echo "$line" | sed -E 's/^[^:]*: ([0-9]+) ok, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
    passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + $3))
    if [ "$rc" -ne 0 ] && [ "$2" -eq 0 ]; then
        echo "FAIL $t exited $rc"; tail -n 20 "$out"; failed=$((failed + 1))
    fi
}

reap() { # reports every test that has ended; $n_running is how many still run
    still=""; n_running=0
    for r in $running; do
        if [ -f "$work/$r.end" ]; then report "$r"
        else still="$still $r"; n_running=$((n_running + 1)); fi
    done
    running=$still
}

n_running=0
while read -r _ index test <&3; do
    while [ "$n_running" -ge "$jobs" ]; do
        reap
        [ "$n_running" -ge "$jobs" ] && sleep 0.1
    done
    start "$index" "$test"
    n_running=$((n_running + 1))
done 3<"$work/list"
while [ -n "$running" ]; do
    reap
    [ -n "$running" ] && sleep 0.1
done
wait
cp "$work/times" "$build/test-times" 2>/dev/null
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
