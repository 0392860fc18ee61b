#!/bin/sh
# test_shared_library.sh — libroformer.so is a library a program can link
# and check: it exports exactly the functions include/roformer.h declares
# (nm -D beside tests/project/public_symbols.py's reading of the header), it is
# named libroformer.so.MAJOR inside (its SONAME) with the symlinks beside
# it, and rf_version() gives the version of the header it was built from.
. tests/check.sh
build=$(dirname "$ROFORMER")
PY=/usr/bin/python3
so=$build/libroformer.so
san=""
case "$build" in *asan*) san="-fsanitize=address,undefined" ;; esac

# The header's version macros, read as text: MAJOR.MINOR.PATCH and RF_VERSION.
macro() { sed -n "s/^#define $1 \\(.*\\)\$/\\1/p" include/roformer.h; }
major=$(macro RF_VERSION_MAJOR); minor=$(macro RF_VERSION_MINOR); patch=$(macro RF_VERSION_PATCH)
version=$(macro RF_VERSION | tr -d '"')
check "RF_VERSION \"$version\" is RF_VERSION_MAJOR.MINOR.PATCH ($major.$minor.$patch)" \
    [ "$version" = "$major.$minor.$patch" ]

# ==== The files ====
check "$so is a symlink to libroformer.so.$major" [ "$(readlink "$so")" = "libroformer.so.$major" ]
check "libroformer.so.$major is a symlink to libroformer.so.$version" \
    [ "$(readlink "$build/libroformer.so.$major")" = "libroformer.so.$version" ]
check "libroformer.so.$version is a file" test -f "$build/libroformer.so.$version" -a ! -L "$build/libroformer.so.$version"
readelf -d "$so" >"$TMP/dynamic" 2>&1
check "readelf -d: SONAME libroformer.so.$major ($(grep SONAME "$TMP/dynamic"))" \
    grep -q "(SONAME) *Library soname: \\[libroformer.so.$major\\]" "$TMP/dynamic"

# ==== The exports: exactly the header's functions ====
if [ -x "$PY" ] && command -v nm >/dev/null 2>&1; then
    $PY tests/project/public_symbols.py include/roformer.h >"$TMP/header"
    check "public_symbols.py reads include/roformer.h" [ $? -eq 0 ]
    nm -D --defined-only "$so" >"$TMP/nm"
    check "nm -D reads $so" [ $? -eq 0 ]
    awk '{ print $NF }' "$TMP/nm" | sort >"$TMP/exported"
    n_header=$(wc -l <"$TMP/header"); n_exported=$(wc -l <"$TMP/exported")
    check "the header declares functions ($n_header)" [ "$n_header" -gt 50 ]
    # lines only in the header: declared but not exported (a missing RF_API);
    # only in the library: an internal symbol that leaked
    comm -3 "$TMP/header" "$TMP/exported" >"$TMP/differ"
    check "nm -D lists exactly the header's $n_header functions (it lists $n_exported; differing: $(tr '\n' ' ' <"$TMP/differ"))" \
        [ ! -s "$TMP/differ" ]
    # the reader of the header is itself checked: it finds a declaration
    # split over lines and leaves out a function-pointer typedef and comments
    printf '%s\n' '/* rf_in_comment(void); */' 'typedef void (*rf_fn)(int);' \
        'RF_API rf_status rf_two_lines(int a,' '                        int b);' \
        'RF_API const char *rf_one(void); /* rf_after(x) */' >"$TMP/h.h"
    check "public_symbols.py reads declarations, not comments or typedefs" \
        [ "$($PY tests/project/public_symbols.py "$TMP/h.h" | tr '\n' ' ')" = "rf_one rf_two_lines " ]
else
    check_skip "nm or $PY absent: the exported symbols"
fi

# ==== A program linked to it checks the version it got ====
cat >"$TMP/version.c" <<'C'
#include <roformer.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    char built[32];
    snprintf(built, sizeof built, "%d.%d.%d", RF_VERSION_MAJOR, RF_VERSION_MINOR, RF_VERSION_PATCH);
    printf("%s %s %s %d %d %d\n", rf_version(), RF_VERSION, built,
           rf_version_matches(RF_VERSION_MAJOR, RF_VERSION_MINOR),
           rf_version_matches(RF_VERSION_MAJOR + 1, 0),
           rf_version_matches(RF_VERSION_MAJOR, RF_VERSION_MINOR + 1));
    return strcmp(rf_version(), RF_VERSION) != 0;
}
C
cc $san -std=c11 -Wall -Werror -Iinclude "$TMP/version.c" -L"$build" -lroformer -o "$TMP/version" \
    2>"$TMP/cc.log"
check "a program links with -lroformer ($(cat "$TMP/cc.log"))" [ -x "$TMP/version" ]
readelf -d "$TMP/version" >"$TMP/needed" 2>&1
check "it needs libroformer.so.$major, the SONAME" \
    grep -q "(NEEDED) *Shared library: \\[libroformer.so.$major\\]" "$TMP/needed"
LD_LIBRARY_PATH=$build "$TMP/version" >"$TMP/version.out" 2>&1; rc=$?
check "rf_version() is \"$version\", as RF_VERSION and the macros ($(cat "$TMP/version.out")), exit $rc" \
    [ $rc -eq 0 -a "$(cat "$TMP/version.out")" = "$version $version $version 1 0 0" ]
check_done
