#!/bin/sh
# test_kernel_choice.sh — which build of the int8 product runs, and that it
# makes no difference (and that the bf16 and element-wise builds can be
# chosen too): every int8 build this CPU runs (ROFORMER_KERNEL=int8=NAME)
# gives byte-identical outputs on the default model (the sums are exact
# and one epilogue serves them all), `bench --kernel` and `info` report
# the build, and a build the CPU lacks or a malformed choice is a
# one-line error with exit status 1.
. tests/check.sh

MODEL=models/sentiment-zh-small.gguf
# 65 tokens and 3: the products' rows run above the AMX build's 16-row floor
LONG='这家酒店的服务很好，房间干净，早餐丰富，位置也方便，前台的工作人员非常热情，下次出差还会再来住。这家酒店的服务很好，房间干净，早餐丰富，位置也方便，前台的工作人员非常热情，下次出差还会再来住。'
printf '%s\n%s\n' "$LONG" '很好' >"$TMP/in.txt"
ran=""
# The int8 builds of the library's table, but the tests' own, as info lists
# them (test_info_kernels checks that list against the table). info reports
# the build a context would run: the one chosen, or, when the CPU lacks it,
# the CPU's own choice; then a job says which builds it runs.
$ROFORMER info -m $MODEL >"$TMP/info" 2>&1
builds=$(awk '$1 == "int8" && $2 == "build:" && !/tests only/ { print $3 }' "$TMP/info")
check "info lists the int8 builds ($(echo $builds))" [ -n "$builds" ]
for k in $builds; do
    ROFORMER_KERNEL=int8=$k $ROFORMER info -m $MODEL >"$TMP/info.$k" 2>&1; rc=$?
    if [ $rc -ne 0 ]; then
        check "info with ROFORMER_KERNEL=int8=$k exits 0 ($(tail -n 1 "$TMP/info.$k"))" false
        continue
    fi
    if ! grep -q "^int8 kernel: *$k (chosen by ROFORMER_KERNEL)" "$TMP/info.$k"; then
        ROFORMER_KERNEL=int8=$k $ROFORMER classify -m $MODEL 好 >/dev/null 2>"$TMP/err.$k"
        if grep -q "no int8 build '$k' on this CPU" "$TMP/err.$k"; then
            check_skip "int8 build $k: this CPU does not run it ($(cat "$TMP/err.$k"))"
        else
            check "ROFORMER_KERNEL=int8=$k: info names it, or a job says the CPU lacks it" false
        fi
        continue
    fi
    check "forward --compute int8 with int8=$k" \
        sh -c "ROFORMER_KERNEL=int8=$k,attention=f32 $ROFORMER forward -m $MODEL --compute int8 \
               <'$TMP/in.txt' >'$TMP/out.$k'"
    ran="$ran $k"
done
set -- $ran
first=$1
for k in "$@"; do
    [ "$k" = "$first" ] && continue
    check "int8 outputs of $k byte-identical to those of $first" same "$TMP/out.$first" "$TMP/out.$k"
done
[ $# -ge 2 ] || check_skip "fewer than two int8 builds on this CPU: nothing to compare"

ROFORMER_KERNEL=int8=nosuch $ROFORMER classify -m $MODEL 好 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "an unknown int8 build: exit 1" [ "$rc" -eq 1 ]
check "... one line naming it and the builds there are" \
    sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q \"ROFORMER_KERNEL: no int8 build 'nosuch' on this CPU (it runs: \" '$TMP/err'"
# the tests' own builds are no user's word, on any CPU
for t in $(awk '$2 == "build:" && /tests only/ { print $1 "=" $3 }' "$TMP/info"); do
    ROFORMER_KERNEL=$t $ROFORMER classify -m $MODEL 好 >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "ROFORMER_KERNEL=$t, a tests-only build: exit 1, refused by name" \
        sh -c "[ $rc -eq 1 ] && grep -q \"no ${t%%=*} build '${t#*=}' on this CPU\" '$TMP/err'"
done
ROFORMER_KERNEL=int8 $ROFORMER classify -m $MODEL 好 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "a choice without '=': exit 1, saying so" \
    sh -c "[ $rc -eq 1 ] && grep -q \"'int8' is not TYPE=NAME\" '$TMP/err'"
$ROFORMER bench -m $MODEL --kernel gpu=fast --runs 1 --warmup 0 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "bench --kernel with an unknown product: exit 1" \
    sh -c "[ $rc -eq 1 ] && grep -q \"unknown product 'gpu'\" '$TMP/err'"
ROFORMER_KERNEL=bf16=nosuch $ROFORMER classify -m $MODEL 好 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "an unknown bf16 kernel: exit 1, naming it" \
    sh -c "[ $rc -eq 1 ] && grep -q \"ROFORMER_KERNEL: no bf16 build 'nosuch' on this CPU\" '$TMP/err'"
$ROFORMER info -m $MODEL >"$TMP/info" 2>&1; rc=$?
bf16=$(sed -n 's/^bf16 kernel: *\([a-z0-9-]*\) .*/\1/p' "$TMP/info")
check "info exits 0 and names a bf16 kernel, or none ($bf16)" [ $rc -eq 0 -a -n "$bf16" ]
if [ -n "$bf16" ] && [ "$bf16" != none ]; then
    ROFORMER_KERNEL=bf16=$bf16 $ROFORMER info -m $MODEL >"$TMP/info" 2>&1; rc=$?
    check "ROFORMER_KERNEL=bf16=$bf16: info exits 0 and says the choice is the user's" \
        sh -c "[ $rc -eq 0 ] && grep -q '^bf16 kernel: *$bf16 (ROFORMER_KERNEL)' '$TMP/info'"
elif [ "$bf16" = none ]; then
    check_skip "no bf16 kernel on this CPU: its choice"
fi
# The element-wise kernels' builds are chosen the same way: each one the
# CPU runs is named in info and bench, and one it lacks is refused.
ew=$(awk '$1 == "elementwise" && $2 == "build:" && / runs/ { print $3 }' "$TMP/info")
check "info lists the element-wise builds this CPU runs ($(echo $ew))" [ -n "$ew" ]
for k in $ew; do
    ROFORMER_KERNEL=elementwise=$k $ROFORMER info -m $MODEL >"$TMP/info.ew" 2>&1; rc=$?
    check "ROFORMER_KERNEL=elementwise=$k: info shows it in use, chosen so" \
        sh -c "[ $rc -eq 0 ] && grep -q '^elementwise build: *$k  *runs, in use (ROFORMER_KERNEL)' '$TMP/info.ew'"
    $ROFORMER bench -m $MODEL --kernel elementwise=$k --runs 1 --warmup 0 --batch 1 \
        --seq-len 16 >"$TMP/bench" 2>&1; rc=$?
    check "bench --kernel elementwise=$k exits 0 and reports it in its JSON" \
        sh -c "[ $rc -eq 0 ] && grep -q '\"elementwise_kernel\":\"$k\"' '$TMP/bench'"
done
ROFORMER_KERNEL=elementwise=nosuch $ROFORMER classify -m $MODEL 好 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "an unknown element-wise build: exit 1, one line naming it and those there are" \
    sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q \"ROFORMER_KERNEL: no elementwise build 'nosuch' on this CPU (it runs: .*baseline\" '$TMP/err'"
if [ -n "$first" ]; then
    $ROFORMER bench -m $MODEL --kernel int8=$first --compute int8 --runs 1 --warmup 0 --batch 1 \
        --seq-len 16 >"$TMP/bench" 2>&1; rc=$?
    check "bench --kernel int8=$first exits 0 and reports it in its JSON" \
        sh -c "[ $rc -eq 0 ] && grep -q '\"int8_kernel\":\"$first\"' '$TMP/bench'"
fi
check_done
