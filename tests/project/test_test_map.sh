#!/bin/sh
# test_test_map.sh — tests/README.md, the map from each feature to its
# tests, is whole and true: it names every test file (each test_* of a
# folder of tests/, by its path from tests/), every test file it names
# exists, and no test lies at the top of tests/, outside the folders. The
# check is also shown a small tree with a file left out, a name of none
# and a test at the top.
. tests/check.sh

# test_map DIR: "unlisted: NAME" for each test file of DIR's folders that
# DIR/README.md does not name, "absent: NAME" for each name there that DIR
# lacks, "at the top: NAME" for each test file of DIR itself. A name is a
# test file's path from DIR in backquotes: `kernels/test_x.c`,
# `python/test_y.py`.
test_map() {
    grep -oE '`[a-z_]+/test_[A-Za-z0-9_]+\.[a-z]+`' "$1/README.md" | tr -d '`' | sort -u \
        >"$TMP/named"
    (cd "$1" && for f in */test_*; do [ -f "$f" ] && echo "$f"; done) | sort -u >"$TMP/present"
    comm -23 "$TMP/present" "$TMP/named" | sed 's/^/unlisted: /'
    comm -13 "$TMP/present" "$TMP/named" | sed 's/^/absent: /'
    (cd "$1" && for f in test_*; do [ -f "$f" ] && echo "at the top: $f"; done)
}

test_map tests >"$TMP/out"
check "tests/README.md names every test file and no other ($(tr '\n' ' ' <"$TMP/out"))" \
    [ ! -s "$TMP/out" ]
check "tests/README.md names this test's own files (project/test_test_map.sh, python/test_model.py)" \
    sh -c "grep -q '\`project/test_test_map.sh\`' tests/README.md && grep -q '\`python/test_model.py\`' tests/README.md"

# ==== The check on a small tree ====
# kernels/test_a.c is named, cli/test_b.sh is not, python/test_p.py is
# named, model/test_gone.c is named and does not exist, test_top.c lies at
# the top; check.h, kernels/helper.py and python/conftest.py are no tests.
T=$TMP/tree
mkdir -p "$T/kernels" "$T/cli" "$T/python"
touch "$T/kernels/test_a.c" "$T/cli/test_b.sh" "$T/check.h" "$T/kernels/helper.py" \
    "$T/python/test_p.py" "$T/python/conftest.py" "$T/test_top.c"
printf '| `kernels/test_a.c` | a |\n| `python/test_p.py` | p |\n| `model/test_gone.c` | gone |\n' \
    >"$T/README.md"
test_map "$T" >"$TMP/small"
check "a test file the README leaves out is reported" grep -qx 'unlisted: cli/test_b.sh' "$TMP/small"
check "a name in the README of no file is reported" grep -qx 'absent: model/test_gone.c' "$TMP/small"
check "a test at the top of tests/ is reported" grep -qx 'at the top: test_top.c' "$TMP/small"
check "nothing else is reported ($(tr '\n' ' ' <"$TMP/small"))" [ "$(wc -l <"$TMP/small")" -eq 3 ]
printf '| `cli/test_b.sh` | b |\n' >>"$T/README.md"
rm "$T/kernels/test_a.c" "$T/test_top.c"
test_map "$T" >"$TMP/small"
check "the README's name of a removed file is reported" grep -qx 'absent: kernels/test_a.c' "$TMP/small"
check "the top and the new row are clean ($(tr '\n' ' ' <"$TMP/small"))" [ "$(wc -l <"$TMP/small")" -eq 2 ]

check_done
