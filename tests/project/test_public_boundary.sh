# test_public_boundary.sh — the front ends are built on include/roformer.h
# alone: every #include "..." in tools/ names roformer.h or one of the
# tools' own headers, every C file of tools/ compiles without src/ on the
# include path, and every function the Python package calls through ctypes
# is one roformer.h declares.
. tests/check.sh
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

# 1. the includes, by name
grep -rn '#include "' tools/ | while IFS= read -r line; do
    name=$(echo "$line" | sed 's/.*#include "\([^"]*\)".*/\1/')
    case "$name" in
        roformer.h) continue ;;
        serve/*) [ -f "tools/roformer/$name" ] && continue ;;
        *) [ -f "tools/roformer/$name" ] && continue ;;
    esac
    echo "$line"
done >"$TMP/foreign"
check "tools/ includes only roformer.h and its own headers ($(head -n 3 "$TMP/foreign" | tr '\n' ' '))" \
    [ ! -s "$TMP/foreign" ]

# 2. the sources compile with include/ and the tools' own folders only (as the
#    Makefile builds them; this also covers a file no rule builds yet)
flags="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-psabi -fsyntax-only -Iinclude -Itools/roformer"
flags="$flags $($PKG_CONFIG --cflags libcjson libmicrohttpd 2>/dev/null)"
: >"$TMP/cc"
for f in tools/roformer/*.c tools/roformer/serve/*.c tools/examples/*.c; do
    ${CC:-cc} $flags "$f" 2>>"$TMP/cc" || echo "$f" >>"$TMP/failed"
done
check "every C file of tools/ compiles without src/ on the include path ($(cat "$TMP/failed" 2>/dev/null | tr '\n' ' '))" \
    [ ! -s "$TMP/failed" ]
[ -s "$TMP/failed" ] && head -n 5 "$TMP/cc"

# 3. Python's ctypes declarations against the header's functions
grep -o '_declare("rf_[a-z0-9_]*"' tools/python/roformer/_capi.py | sed 's/_declare("//; s/"//' |
    sort -u >"$TMP/py"
missing=""
while IFS= read -r fn; do
    grep -Eq "[ *]$fn\(" include/roformer.h || missing="$missing $fn"
done <"$TMP/py"
check "the $(wc -l <"$TMP/py") functions _capi.py declares are all in roformer.h ($missing)" \
    [ -s "$TMP/py" -a -z "$missing" ]
check_done
