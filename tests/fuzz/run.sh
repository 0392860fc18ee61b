#!/bin/sh
# run.sh BUILD_DIR SECONDS JOBS TARGET... — runs each libFuzzer target for
# SECONDS, JOBS at a time, on the committed seeds (tests/fuzz/corpus/,
# tests/fuzz/regressions/) and seeds made from the reference files
# (seeds.sh). New inputs go to BUILD_DIR/corpus/<target>/, crash inputs to
# BUILD_DIR/artifacts/<target>/, logs to BUILD_DIR/logs/<target>.log.
# Prints one line per target (executions, coverage) and fails when any
# target found a crash, leak, timeout or out-of-memory.
build=$1; seconds=$2; jobs=$3; shift 3
sh tests/fuzz/seeds.sh build "$build/seeds"
mkdir -p "$build/logs"

run_one() {
    t=$1
    case $t in
        tokenizer) max_len=4096 ;;
        hf_config|input) max_len=16384 ;;
        *) max_len=65536 ;;
    esac
    mkdir -p "$build/corpus/$t" "$build/artifacts/$t" "$build/seeds/$t" "tests/fuzz/regressions/$t"
    "$build/fuzz_$t" -max_total_time="$seconds" -max_len=$max_len -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t/" \
        "$build/corpus/$t" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" "$build/seeds/$t" \
        >"$build/logs/$t.log" 2>&1
    echo $? >"$build/logs/$t.rc"
}

set -- "$@"
while [ $# -gt 0 ]; do
    batch=""
    i=0
    while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
        run_one "$1" &
        batch="$batch $1"; i=$((i + 1)); shift
    done
    wait
    for t in $batch; do done_targets="$done_targets $t"; done
done

failed=0
for t in $done_targets; do
    rc=$(cat "$build/logs/$t.rc")
    stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$build/logs/$t.log" | tail -n 1 |
            sed -E 's/^#([0-9]+)[[:space:]]+DONE[[:space:]]+cov: ([0-9]+) ft: ([0-9]+).*/\1 executions, cov \2, ft \3/')
    if [ "$rc" -eq 0 ]; then
        echo "fuzz $t: ok (${seconds}s: $stats)"
    else
        failed=$((failed + 1))
        echo "fuzz $t: FAILED (exit $rc), log $build/logs/$t.log, inputs in $build/artifacts/$t/"
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$build/logs/$t.log" | head -n 5
    fi
done
[ "$failed" -eq 0 ]
