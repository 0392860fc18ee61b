#!/bin/sh
# test_file_cycles.sh — the library's folders and the tools are layers,
# each using only its own and those below (docs/architecture.md, "Layers";
# two folders of one layer never use each other), and no two modules (a .c
# file with its .h) need each other, even through others: no header
# includes its way back, no .c file calls back into one that calls it
# (scripts/file_cycles.py over the sources and the build's objects, x86-64
# and, when built, ARM64). The checker itself is shown a small tree with
# each kind of fault.
. tests/check.sh

PY=/usr/bin/python3
# The layers, lowest first. A module may use its own layer and those below;
# the two folders of one layer (text, kernels) never use each other.
#   base     the error writer, zeroed pages, the version: used everywhere
#   leaves   the tokenizer; the kernels (the number conversions included)
#   formats  files in and out: widens f16/bf16 and quantizes with the kernels
#   hub      downloads, then converts a checkpoint (formats)
#   model    loading (a file, a directory, or a hub name), contexts, forward
#   jobs     the pipelines over the model
#   tools    the CLI, the server, the examples: above the whole library
LAYERS="--layer base=src/base/ --layer leaves=src/text/,src/kernels/
        --layer formats=src/formats/ --layer hub=src/hub/
        --layer model=src/model/ --layer jobs=src/jobs/ --layer tools=tools/"
DIRS="src tools/roformer tools/examples"
# run_check WHAT OBJ_DIR NM: one check over the sources with OBJ_DIR's
# objects.
run_check() {
    $PY scripts/file_cycles.py $LAYERS --nm "$3" "$2" $DIRS >"$TMP/out" 2>&1
    rc=$?
    check "$1: no cycle, no upward or sideways dependency ($(grep -v '^  ' "$TMP/out" | tr '\n' ' '))" \
        [ "$rc" -eq 0 ]
}

OBJ=$(dirname "$ROFORMER")/obj
if ! command -v nm >/dev/null 2>&1 || [ ! -x "$PY" ]; then
    check_skip "nm or $PY absent: the layer and cycle check"
    check_done; exit
elif [ ! -d "$OBJ/src" ]; then
    # Without objects the includes alone are judged.
    run_check "x86-64 includes" "$OBJ" nm
    check_skip "the objects in $OBJ absent: the layer and cycle check of the calls"
else
    run_check "x86-64" "$OBJ" nm
fi

# The ARM64 objects (make ARCH=aarch64 into build-arm64/) have the NEON
# kernels' calls, which the x86-64 objects lack.
ARM_OBJ=build-arm64/obj
ARM_NM=aarch64-linux-gnu-nm
command -v $ARM_NM >/dev/null 2>&1 || ARM_NM=nm
# Objects older than the sources (a build from before the last change)
# would be judged instead of the code: then the check is skipped, saying so.
if [ -d "$ARM_OBJ/src" ] && ! make -q ARCH=aarch64 BUILD=build-arm64 build-arm64/libroformer.a \
        >/dev/null 2>&1; then
    check_skip "ARM64 objects in $ARM_OBJ older than the sources: make ARCH=aarch64 first, for the ARM64 layer and cycle check"
elif [ -d "$ARM_OBJ/src" ]; then
    run_check "ARM64" "$ARM_OBJ" $ARM_NM
elif command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
    check_skip "ARM64 objects absent ($ARM_OBJ): make ARCH=aarch64 first, for the ARM64 layer and cycle check"
else
    check_skip "no aarch64-linux-gnu-gcc (sh scripts/setup.sh --arm64): the ARM64 layer and cycle check"
fi

# ==== The checker on a small tree ====
# lo/ and k/ below hi/; a.c includes b.h and b.c calls a.c (a module cycle
# with no file cycle); lo/x.c includes hi/y.h (upward); k/ holds a header
# cycle; k/s.h includes lo/b.h (sideways: lo/ and k/ are one layer).
T=$TMP/tree
mkdir -p "$T/src/lo" "$T/src/hi" "$T/src/k" "$T/obj/src/lo" "$T/obj/src/hi" "$T/obj/src/k"
printf 'int b(int);\n' >"$T/src/lo/b.h"
printf '#include "lo/b.h"\nint a(int x) { return b(x); }\n' >"$T/src/lo/a.c"
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 0; }\n' >"$T/src/lo/b.c"
printf '#include "hi/y.h"\nint x(void) { return 0; }\n' >"$T/src/lo/x.c"
printf 'int y(void);\n' >"$T/src/hi/y.h"
printf '#include "k/m.h"\n' >"$T/src/k/n.h"
printf '#include "k/n.h"\n' >"$T/src/k/m.h"
printf '#include "lo/b.h"\n' >"$T/src/k/s.h"
for f in lo/a lo/b lo/x; do cc -I"$T/src" -c "$T/src/$f.c" -o "$T/obj/src/$f.o"; done
checker() {
    (cd "$T" && $PY "$OLDPWD/scripts/file_cycles.py" --layer low=src/lo/,src/k/ --layer high=src/hi/ "$@" obj src)
}
checker >"$TMP/bad" 2>&1; rc=$?
check "a tree with a cycle and an upward include: exit 1" [ "$rc" -eq 1 ]
check "the module cycle (a.c with b.h, b.c calling a.c) is reported" grep -qx 'cycle: src/lo/a, src/lo/b' "$TMP/bad"
check "each edge of it is named" \
    sh -c "grep -qx '  src/lo/a.c includes src/lo/b.h' '$TMP/bad' && grep -qx '  src/lo/b.c calls src/lo/a.c' '$TMP/bad'"
check "the upward include is reported with its layers" \
    grep -qx 'upward: src/lo/x.c (low) includes src/hi/y.h (high)' "$TMP/bad"
check "the cycle of k/ is reported too" grep -qx 'cycle: src/k/m, src/k/n' "$TMP/bad"
check "the include between the two folders of one layer is reported" \
    grep -qx 'sideways: src/k/s.h (src/k/) includes src/lo/b.h (src/lo/)' "$TMP/bad"
rm "$T/src/lo/x.c" "$T/obj/src/lo/x.o" "$T/src/lo/b.c" "$T/obj/src/lo/b.o" "$T/src/k/n.h" \
    "$T/src/k/s.h"
checker >"$TMP/good" 2>&1; rc=$?
check "without them: exit 0 ($(tail -n 1 "$TMP/good"))" \
    sh -c "[ $rc -eq 0 ] && grep -qx 'no cycles, upward or sideways dependencies between 4 modules' '$TMP/good'"
mkdir -p "$T/src/new"; printf 'int z;\n' >"$T/src/new/z.h"
checker >"$TMP/nolayer" 2>&1; rc=$?
check "a module in no layer is reported, exit 1" sh -c "[ $rc -eq 1 ] && grep -qx 'no layer: src/new/z' '$TMP/nolayer'"

check_done
