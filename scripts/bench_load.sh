#!/bin/sh
# bench_load.sh [REFERENCE_DIR] [RUNS] — converts every reference model and
# prints, per model and storage type: conversion time, GGUF size, and the
# median model load time over RUNS loads (`roformer info`'s "load time").
# Run from the repository root after `make`.
set -e
ref=${1:-${ROFORMER_REFERENCE:-../shared/reference}}
runs=${2:-7}
bin=${ROFORMER:-build/roformer}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now_ms() { date +%s%N | awk '{printf "%.1f", $1 / 1e6}'; }
printf '%-16s %-5s %10s %12s %13s\n' model dtype convert_ms size_bytes load_ms_median
for dir in "$ref"/models/*/; do
    name=$(basename "$dir")
    for dtype in f32 f16 bf16; do
        out="$tmp/$name.$dtype.gguf"
        t0=$(now_ms)
        "$bin" convert "$dir" -o "$out" --dtype "$dtype"
        t1=$(now_ms)
        size=$(wc -c <"$out")
        i=0
        : >"$tmp/times"
        while [ "$i" -lt "$runs" ]; do
            "$bin" info -m "$out" | sed -n 's/^load time: *\([0-9.]*\) ms$/\1/p' >>"$tmp/times"
            i=$((i + 1))
        done
        median=$(sort -n "$tmp/times" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
        printf '%-16s %-5s %10.1f %12d %13s\n' "$name" "$dtype" "$(echo "$t1 $t0" | awk '{print $1 - $2}')" \
            "$size" "$median"
    done
done
