# test_pip_install.sh — `pip install ./tools/python` as a user runs it: into
# a fresh virtual environment (Debian's python3 -m venv --system-site-packages,
# for numpy), offline with --no-build-isolation (the system's setuptools);
# the build runs make and bundles libroformer.so, and the installed package,
# imported from outside the tree, embeds as the CLI does. Skipped, saying
# why, without python3-venv / python3-pip, and for sanitizer builds (whose
# library Python cannot load on its own; the plain build is the one shipped).
. tests/check.sh
PY=/usr/bin/python3
build=$(dirname "$ROFORMER")
case "$build" in
*asan*|*fuzz*)
    check_skip "pip install is tested on the plain build, not $build"
    check_done; exit ;;
esac
if ! $PY -m venv --system-site-packages "$TMP/venv" >"$TMP/venv.log" 2>&1 ||
    [ ! -x "$TMP/venv/bin/pip" ]; then
    check_skip "python3-venv or python3-pip absent: pip install ./tools/python not tested"
    check_done; exit
fi
if ! "$TMP/venv/bin/python" -c 'import numpy' 2>/dev/null; then
    check_skip "python3-numpy absent: pip install ./tools/python not tested"
    check_done; exit
fi
unset ROFORMER_LIBRARY PYTHONPATH
# The make the package's build runs must find the library built and build
# nothing (make -q): tests/run.sh runs tests two at a time, and
# test_install.sh reads the same build. A stale build fails here instead.
if ! make -s -q BUILD="$build" "$build/libroformer.so" >/dev/null 2>&1; then
    check "$build/libroformer.so is up to date with its sources (make -q)" false
    check_done; exit
fi
ROFORMER_BUILD=$build MAKEFLAGS=q PIP_NO_CACHE_DIR=1 "$TMP/venv/bin/pip" install --no-build-isolation \
    --no-index ./tools/python >"$TMP/pip.log" 2>&1
rc=$?
check "pip install --no-build-isolation ./tools/python exits 0" test $rc -eq 0
[ $rc -eq 0 ] || tail -n 20 "$TMP/pip.log" >&2
check "... and leaves no build files in the source tree" \
    test ! -e tools/python/build -a -z "$(ls -d tools/python/*.egg-info 2>/dev/null)"
site=$("$TMP/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
check "the library is installed inside the package" test -f "$site/roformer/libroformer.so"
(cd "$TMP" && "$TMP/venv/bin/python" -c 'import roformer; print(roformer.library_path)') \
    >"$TMP/path" 2>"$TMP/err"
check "the installed package imports from outside the tree" test -s "$TMP/path"
check "... loading its own copy of the library" grep -qx "$site/roformer/libroformer.so" "$TMP/path"
if [ -n "$REF" ]; then
    M=$(cd "$REF/models/tiny-word-cls" && pwd)
    printf '今天天气很好\n北京是中国的首都\n' >"$TMP/in"
    "$ROFORMER" embed -m "$M" <"$TMP/in" >"$TMP/cli.jsonl"
    (cd "$TMP" && "$TMP/venv/bin/python" - "$M" <<'PY') >"$TMP/py.out" 2>"$TMP/err"
import json, sys
import numpy as np
import roformer, roformer.util
with roformer.Model(sys.argv[1]) as m:
    got = m.encode(["今天天气很好", "北京是中国的首都"])
want = np.float32([json.loads(l)["embedding"] for l in open("cli.jsonl")])
print("same" if np.array_equal(got, want) else "differ")
print(roformer.util.cos_sim(got, got).shape)
PY
    check "the installed package embeds as the CLI does" grep -qx same "$TMP/py.out"
    check "... and has roformer.util" grep -qx "(2, 2)" "$TMP/py.out"
    [ -s "$TMP/err" ] && cat "$TMP/err" >&2
else
    check_skip "reference fixtures absent: the installed package's embeddings not compared"
fi
check_done
