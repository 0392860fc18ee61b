# test_install.sh — `make install` into a temporary prefix, then the example
# program built the way a user builds it: only through the installed
# pkg-config file (cc ... $(pkg-config --cflags --libs roformer)).
. tests/check.sh
build=$(dirname "$ROFORMER")
san=""
case "$build" in *asan*) san="-fsanitize=address,undefined" ;; esac
prefix=$TMP/prefix
# The build under test is complete before the tests run, and tests/run.sh
# runs them two at a time (test_pip_install.sh's make reads the same build):
# make install must only copy. A build older than its sources is a failure
# here, not rebuilt under the feet of the tests running beside this one.
if ! make -s -q BUILD="$build" all >/dev/null 2>&1; then
    check "the build in $build is up to date with its sources (make -q all)" false
    check_done; exit
fi
make -s install PREFIX="$prefix" BUILD="$build" >"$TMP/install.log" 2>&1
check "make install PREFIX=<temp dir>" [ $? -eq 0 ]
check "installed: binary, libraries, header, pkg-config file" test -x "$prefix/bin/roformer" \
    -a -f "$prefix/lib/libroformer.a" -a -f "$prefix/lib/libroformer.so" \
    -a -f "$prefix/include/roformer.h" -a -f "$prefix/lib/pkgconfig/roformer.pc"
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs roformer)
check "pkg-config knows roformer" [ -n "$flags" ]
# the shared library as a distribution installs one: the file, named by
# its version, and the SONAME and development symlinks
version=$(sed -n 's/^#define RF_VERSION "\(.*\)"$/\1/p' include/roformer.h)
major=${version%%.*}
check "installed: libroformer.so.$version, libroformer.so.$major -> it, libroformer.so -> that" \
    sh -c "test -f '$prefix/lib/libroformer.so.$version' -a ! -L '$prefix/lib/libroformer.so.$version' &&
           [ \"\$(readlink '$prefix/lib/libroformer.so.$major')\" = libroformer.so.$version ] &&
           [ \"\$(readlink '$prefix/lib/libroformer.so')\" = libroformer.so.$major ]"
modversion=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion roformer)
check "pkg-config --modversion roformer is the header's RF_VERSION ($modversion, $version)" \
    [ -n "$version" -a "$modversion" = "$version" ]
cc $san tools/examples/similarity.c $flags -o "$TMP/similarity" 2>"$TMP/cc.log"
check "the example compiles and links with -lroformer from pkg-config" [ -x "$TMP/similarity" ]
check "the installed CLI runs" sh -c "LD_LIBRARY_PATH='$prefix/lib' '$prefix/bin/roformer' --version | grep -q roformer"
check "the default model is installed" cmp -s models/sentiment-zh-small.gguf "$prefix/share/roformer/sentiment-zh-small.gguf"
# The installed binary finds the installed copy: it runs from a directory
# with no models/, and the copy in the tree is out of its reach.
(cd "$TMP" && "$prefix/bin/roformer" classify '房间又小又脏，再也不来了' >"$TMP/installed.out" 2>&1)
check "the installed classify uses the installed default model (exit $?)" \
    sh -c "[ $? -eq 0 ] && grep -q '^{\"label\":\"negative\",' '$TMP/installed.out'"
rm "$prefix/share/roformer/sentiment-zh-small.gguf"
(cd "$TMP" && "$prefix/bin/roformer" classify 好 >/dev/null 2>"$TMP/installed.err")
check "... and without it there is no default: a usage error (exit $?)" \
    sh -c "[ $? -eq 2 ] && grep -q 'no default model' '$TMP/installed.err'"
if [ -n "$REF" ]; then
    M=$REF/models/tiny-word-mlm
    check "the example linked to the installed library runs" \
        run_ok "$TMP/a.out" env LD_LIBRARY_PATH="$prefix/lib" "$TMP/similarity" "$M" 今天天气很好 今天天气不错
    check "the built example runs" run_ok "$TMP/b.out" "$build/examples/similarity" "$M" 今天天气很好 今天天气不错
    check "the example linked to the installed library gives the built one's answer" \
        sh -c "grep -q '^cosine ' '$TMP/a.out' && cmp -s '$TMP/a.out' '$TMP/b.out'"
else
    check_skip "reference fixtures absent: running the installed example"
fi
# The Python package, installed beside the library: found by Python through
# the install's dist-packages, it finds the installed libroformer.so.
py=$prefix/lib/python3/dist-packages
check "installed: the Python package" test -f "$py/roformer/__init__.py" -a -f "$py/roformer/dask.py"
preload=""
[ -n "$san" ] && preload="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
pyrun() {
    (cd "$TMP" && env -u ROFORMER_LIBRARY PYTHONPATH="$py" LD_PRELOAD="$preload" \
        ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 -c "$@")
}
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    pyrun 'import roformer; print(roformer.library_path)' >"$TMP/py.out" 2>"$TMP/py.err"
    check "the installed package loads the installed library" grep -qx "$prefix/lib/libroformer.so" "$TMP/py.out"
    if [ -n "$REF" ]; then
        M=$(cd "$REF/models/tiny-word-cls" && pwd)
        check "the CLI classifies" run_ok "$TMP/cls.cli" "$build/roformer" classify -m "$M" 这家酒店服务很好
        check "the installed package classifies as the CLI does" pyrun '
import json, sys, numpy, roformer
got = roformer.Model(sys.argv[1]).classify("这家酒店服务很好")[0]
want = json.load(open(sys.argv[2]))
sys.exit(not (got["label"] == want["label"] and numpy.float32(got["score"]) == numpy.float32(want["score"])))
' "$M" "$TMP/cls.cli"
    else
        check_skip "reference fixtures absent: the installed Python package on a model"
    fi
else
    check_skip "python3-numpy absent: the installed Python package"
fi
check_done
