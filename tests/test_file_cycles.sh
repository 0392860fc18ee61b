#!/bin/sh
# test_file_cycles.sh — no two files of src/ depend on each other, even
# through others: no header includes itself back, no .c file calls back
# into one that calls it (scripts/file_cycles.py over the sources and the
# build's object files). The checker itself is shown a small tree with one
# include cycle and one call cycle, which it must report.
. tests/check.sh

PY=/usr/bin/python3
OBJ=$(dirname "$ROFORMER")/obj/src
if ! command -v nm >/dev/null 2>&1 || [ ! -x "$PY" ] || [ ! -d "$OBJ" ]; then
    check_skip "nm, $PY or the objects in $OBJ absent: the file cycle check"
    check_done; exit
fi

$PY scripts/file_cycles.py src "$OBJ" >"$TMP/out" 2>&1
check "no include or call cycle between the files of src/ ($(cat "$TMP/out"))" \
    grep -q '^no cycles between' "$TMP/out"

# a tree with a.h <-> b.h included both ways, and c.c <-> d.c calling each other
mkdir -p "$TMP/src" "$TMP/obj"
printf '#include "b.h"\n' >"$TMP/src/a.h"
printf '#include "a.h"\n' >"$TMP/src/b.h"
printf 'int d(int);\nint c(int x) { return x ? d(x - 1) : 0; }\n' >"$TMP/src/c.c"
printf 'int c(int);\nint d(int x) { return x ? c(x - 1) : 1; }\n' >"$TMP/src/d.c"
printf 'int c(int);\nint e(void) { return c(1); }\n' >"$TMP/src/e.c"
for f in c d e; do cc -c "$TMP/src/$f.c" -o "$TMP/obj/$f.o"; done
$PY scripts/file_cycles.py "$TMP/src" "$TMP/obj" >"$TMP/bad" 2>&1; rc=$?
check "a tree with cycles: exit 1" [ "$rc" -eq 1 ]
check "the include cycle is reported" grep -qx 'cycle: a.h, b.h' "$TMP/bad"
check "the call cycle is reported, without the file that only calls in" \
    grep -qx 'cycle: c.c, d.c' "$TMP/bad"
check "each edge of a cycle is named" grep -qx '  c.c calls d.c' "$TMP/bad"

check_done
