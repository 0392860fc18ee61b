# test_docs.sh — the commands README.md and docs/*.md show run as written
# and print what they show (tests/project/doc_commands.py: the blocks marked
# `<!-- runnable -->`, each one check named FILE:LINE); README.md stays a
# short document that still holds the setup and test commands, its C
# example compiles against include/roformer.h; every relative link and
# #anchor of README.md, docs/*.md and models/README.md resolves
# (tests/project/doc_links.py); and both checkers fail on what they must catch.
#
# The blocks run in a scratch copy of the places they name: build/ (the
# build under test), models/, tools/, scripts/, include/, the reference
# models converted to tiny-*.gguf, and ../shared beside it when the
# fixtures are present.
. tests/check.sh
PY=/usr/bin/python3
DATA=${ROFORMER_DATA:-../shared/data}
README_LIMIT=15000

# ==== README.md: short, and still the entry point ====
size=$(wc -c <README.md)
check "README.md is $size bytes, at most $README_LIMIT" [ "$size" -le $README_LIMIT ]
check "README.md shows the setup command" grep -q 'sh scripts/setup.sh' README.md
check "README.md shows the test command" grep -q '^make test' README.md

# README's C example compiles against the public header, as the body of main.
{
    printf '#include <roformer.h>\n#include <stdio.h>\n#include <stdlib.h>\nint main(void)\n{\n'
    awk '/^```c$/ { f = 1; next } /^```$/ { f = 0 } f' README.md
    printf '    return 0;\n}\n'
} >"$TMP/readme_example.c"
check "README.md's C example compiles" \
    ${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude -fsyntax-only "$TMP/readme_example.c"

# ==== Links: the file exists, the #anchor is one of its headings ====
for f in README.md docs/*.md models/README.md; do
    $PY tests/project/doc_links.py "$f" >"$TMP/links" 2>&1
    rc=$?
    check "$f: every relative link and #anchor resolves ($(sed -n 's/^links .*: //p' "$TMP/links"))" \
        [ $rc -eq 0 ]
    grep -v '^links ' "$TMP/links" | sed 's/^/    /' >&2
done
# The checker on links it must pass and links it must fail.
mkdir -p "$TMP/links.d/sub"
cat >"$TMP/links.d/a.md" <<'EOF'
# Serving: load test
## Serving: load test
See [b](sub/b.md#the-section), [here](#serving-load-test), [again](#serving-load-test-1),
[c](sub/c.md), [anchor](sub/b.md#the-sectionx), [web](https://example.com/x.md),
`[code](nowhere.md)`.
```
[fenced](nowhere.md)
```
[def]: sub/missing.md#x
EOF
printf '## The section\n' >"$TMP/links.d/sub/b.md"
$PY tests/project/doc_links.py "$TMP/links.d/a.md" >"$TMP/links" 2>&1
check "doc_links: links and anchors that resolve pass" \
    sh -c "! grep -q -e 'sub/b.md#the-section:' -e '#serving-load-test' '$TMP/links'"
check "doc_links: a missing file fails, naming FILE:LINE" \
    grep -q "^FAIL $TMP/links.d/a.md:4: sub/c.md: no such file" "$TMP/links"
check "doc_links: a missing anchor fails" \
    grep -q "^FAIL $TMP/links.d/a.md:4: sub/b.md#the-sectionx: no heading" "$TMP/links"
check "doc_links: a reference definition is checked" \
    grep -q "^FAIL $TMP/links.d/a.md:9: sub/missing.md#x: no such file" "$TMP/links"
check "doc_links: URLs and code are not links" \
    sh -c "! grep -q -e example.com -e nowhere.md '$TMP/links'"
check "doc_links: exit status 1 on a failure" \
    sh -c "! $PY tests/project/doc_links.py '$TMP/links.d/a.md' >/dev/null"

require_python "numpy" "the documents' commands"

# ==== The scratch tree the blocks run in ====
W=$TMP/roformer.c
mkdir -p "$W"
here=$(pwd)
build=$(cd "$(dirname "$ROFORMER")" && pwd)
ln -s "$build" "$W/build"
for d in models tools scripts include; do ln -s "$here/$d" "$W/$d"; done
if [ -n "$REF" ]; then
    mkdir -p "$TMP/shared"
    ln -s "$(cd "$REF" && pwd)" "$TMP/shared/reference"
    [ -d "$DATA" ] && ln -s "$(cd "$DATA" && pwd)" "$TMP/shared/data"
    for m in tiny-word-cls tiny-word-mlm tiny-char-proj tiny-qa; do
        $ROFORMER convert "$REF/models/$m" -o "$W/$m.gguf" >/dev/null 2>"$TMP/err" ||
            { echo "FAIL test_docs: converting $m: $(cat "$TMP/err")" >&2; check_failed=$((check_failed + 1)); }
    done
else
    check_skip "reference fixtures absent (../shared/reference or \$ROFORMER_REFERENCE): blocks that read ../shared"
fi
# The Python examples load the library of the build under test; an ASan
# build's needs the sanitizer runtimes first (as in test_python.sh).
export ROFORMER_LIBRARY="$build/libroformer.so"
case "$build" in
*asan*)
    export LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0 ;;
esac

# run_docs FILE...: one check per block, from doc_commands.py's lines; and
# one more that it answered for every marked block and exited 0, or 1 with
# a FAIL line (a crash part-way would leave the blocks after it unrun).
run_docs() {
    $PY "$here/tests/project/doc_commands.py" --dir "$W" "$@" >"$TMP/result" 2>&1
    rc=$?
    answered=0; failed_blocks=0
    while IFS= read -r line; do
        case "$line" in
        "ok "*) check_passed=$((check_passed + 1)); answered=$((answered + 1)) ;;
        "SKIP "*) check_skip "${line#SKIP }"; answered=$((answered + 1)) ;;
        "FAIL "*) check_failed=$((check_failed + 1)); answered=$((answered + 1))
                  failed_blocks=$((failed_blocks + 1)); echo "FAIL test_docs: ${line#FAIL }" >&2 ;;
        *) echo "$line" >&2 ;;
        esac
    done <"$TMP/result"
    marks=$(cat "$@" | grep -cE '^[[:space:]]*<!-- runnable -->[[:space:]]*$')
    check "doc_commands.py answers all $marks marked blocks (it answered $answered, exit $rc)" \
        [ "$answered" -eq "$marks" -a \( "$rc" -eq 0 -a "$failed_blocks" -eq 0 -o "$rc" -eq 1 -a "$failed_blocks" -gt 0 \) ]
}
docs=README.md
for f in docs/*.md; do [ -f "$f" ] && docs="$docs $f"; done
run_docs $docs

# ==== The checker fails on a changed output ====
# A copy of a block with one shown digit changed must fail, naming its line.
cat >"$TMP/altered.md" <<'EOF'
# altered

<!-- runnable -->
```console
$ echo '{"score":0.7904681}'
{"score":0.7904681}
```

<!-- runnable -->
```console
$ echo '{"score":0.7904681}'
{"score":0.7914681}
```

<!-- runnable -->
```sh
false
```

<!-- runnable -->
```console
$ echo '[0.7904681, 12, -1.5e-3, 0.25, 0.5, 0.75]'
[0.790, 12, -1.5e-3, ...]
```

<!-- runnable -->
```console
$ echo '[0.7904681, 13]'
[0.790, 12]
```

<!-- runnable -->
```console
0.7904681
```

<!-- runnable -->
```sh
false | head -c 100
```

<!-- runnable -->
```console
$ sh -c 'echo "{}"; exit 3' | head -c 100
{}
```
EOF
$PY tests/project/doc_commands.py --dir "$TMP" "$TMP/altered.md" >"$TMP/self" 2>&1
check "checker: the unchanged block passes" grep -q "^ok $TMP/altered.md:4\$" "$TMP/self"
check "checker: a changed digit fails, naming FILE:LINE" grep -q "^FAIL $TMP/altered.md:10: " "$TMP/self"
check "checker: a failing sh block fails" grep -q "^FAIL $TMP/altered.md:16: exit 1" "$TMP/self"
check "checker: fewer decimals and ... match" grep -q "^ok $TMP/altered.md:21\$" "$TMP/self"
check "checker: integers match exactly" grep -q "^FAIL $TMP/altered.md:27: " "$TMP/self"
check "checker: a console block needs a command" grep -q "^FAIL $TMP/altered.md:33: a console block with no" "$TMP/self"
# A command that fails into a pipe fails its block, though the pipe's last
# command (head) exits 0.
check "checker: a sh block whose piped command fails fails" grep -q "^FAIL $TMP/altered.md:38: exit 1" "$TMP/self"
check "checker: a console command whose piped command fails fails" \
    grep -q "^FAIL $TMP/altered.md:43: .* exit 3" "$TMP/self"
check "checker: exit status 1 on a failure" sh -c "! $PY tests/project/doc_commands.py --dir '$TMP' '$TMP/altered.md' >/dev/null"
check_done
