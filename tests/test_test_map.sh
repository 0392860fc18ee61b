#!/bin/sh
# test_test_map.sh — tests/README.md, the map from each feature to its
# tests, is whole and true: it names every test file (test_* of tests/,
# python/test_*.py), and every test file it names exists. The check is
# also shown a small folder with a file left out and a name of none.
. tests/check.sh

# test_map DIR: "unlisted: NAME" for each test file of DIR that DIR/README.md
# does not name, "absent: NAME" for each name there that DIR lacks. A name
# is a test file's path from DIR in backquotes: `test_x.c`, `python/test_y.py`.
test_map() {
    grep -oE '`(python/)?test_[A-Za-z0-9_]+\.[a-z]+`' "$1/README.md" | tr -d '`' | sort -u \
        >"$TMP/named"
    (cd "$1" && for f in test_* python/test_*.py; do [ -f "$f" ] && echo "$f"; done) | sort -u \
        >"$TMP/present"
    comm -23 "$TMP/present" "$TMP/named" | sed 's/^/unlisted: /'
    comm -13 "$TMP/present" "$TMP/named" | sed 's/^/absent: /'
}

test_map tests >"$TMP/out"
check "tests/README.md names every test file and no other ($(tr '\n' ' ' <"$TMP/out"))" \
    [ ! -s "$TMP/out" ]
check "tests/README.md names this test's own files (test_test_map.sh, python/test_model.py)" \
    sh -c "grep -q '\`test_test_map.sh\`' tests/README.md && grep -q '\`python/test_model.py\`' tests/README.md"

# ==== The check on a small folder ====
# a.c is named, b.sh is not, python/test_p.py is named, test_gone.c is named
# and does not exist; check.h and python/conftest.py are no tests.
T=$TMP/tree
mkdir -p "$T/python"
touch "$T/test_a.c" "$T/test_b.sh" "$T/check.h" "$T/python/test_p.py" "$T/python/conftest.py"
printf '| `test_a.c` | a |\n| `python/test_p.py` | p |\n| `test_gone.c` | gone |\n' >"$T/README.md"
test_map "$T" >"$TMP/small"
check "a test file the README leaves out is reported" grep -qx 'unlisted: test_b.sh' "$TMP/small"
check "a name in the README of no file is reported" grep -qx 'absent: test_gone.c' "$TMP/small"
check "nothing else is reported ($(tr '\n' ' ' <"$TMP/small"))" [ "$(wc -l <"$TMP/small")" -eq 2 ]
printf '| `test_b.sh` | b |\n' >>"$T/README.md"
rm "$T/test_a.c"
test_map "$T" >"$TMP/small"
check "the README's name of a removed file is reported" grep -qx 'absent: test_a.c' "$TMP/small"

check_done
