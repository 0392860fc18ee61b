#!/bin/sh
# compare_outputs.sh OLD NEW MODEL INPUT — whether two builds of the CLI give
# the same bytes: `embed` and `forward` of INPUT (one input per line) on
# MODEL, with --compute f32, bf16, and int8 under every int8 build that NEW's
# `info` says this CPU runs (ROFORMER_KERNEL=int8=NAME; the tests' own
# builds left out). One line per run, "same" or "DIFF", then a count; exit
# status 1 when any differs or fails. For a change that must not move a bit
# (a kernel reorganised, a refactor): OLD is a build from before it.
old=$1 new=$2 model=$3 input=$4
if [ $# -ne 4 ] || [ ! -x "$old" ] || [ ! -x "$new" ] || [ ! -f "$model" ] || [ ! -f "$input" ]; then
    echo "usage: sh scripts/compare_outputs.sh OLD_ROFORMER NEW_ROFORMER MODEL INPUT" >&2
    exit 2
fi
unset ROFORMER_KERNEL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
int8=$("$new" info -m "$model" | awk '$1 == "int8" && $2 == "build:" && $4 ~ /^runs/ && !/tests only/ { print $3 }')
same=0 differ=0
run() { # NAME KERNEL COMMAND COMPUTE: both builds, outputs compared
    for b in old new; do
        eval bin=\$$b
        env ${2:+ROFORMER_KERNEL=$2} "$bin" "$3" -m "$model" --compute "$4" <"$input" >"$tmp/$b" 2>"$tmp/$b.err"
        echo $? >"$tmp/$b.rc"
    done
    if [ "$(cat "$tmp/old.rc")" = 0 ] && [ "$(cat "$tmp/new.rc")" = 0 ] && cmp -s "$tmp/old" "$tmp/new"; then
        echo "same  $1 ($(wc -c <"$tmp/new") bytes)"
        same=$((same + 1))
    else
        echo "DIFF  $1 (exit $(cat "$tmp/old.rc") and $(cat "$tmp/new.rc"))"
        differ=$((differ + 1))
    fi
}
for cmd in embed forward; do
    run "$cmd --compute f32" "" $cmd f32
    run "$cmd --compute bf16" "" $cmd bf16
    for k in $int8; do
        run "$cmd --compute int8, int8=$k" "int8=$k" $cmd int8
    done
done
echo "$same same, $differ different"
[ "$differ" -eq 0 ]
