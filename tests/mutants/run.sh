#!/bin/sh
# run.sh [--check] [LIST] — the mutation run (make mutants): each mutation of
# LIST (default tests/mutants/list.tsv) is applied alone to a copy of the
# tree, the targets its tests need are rebuilt (incrementally: the copy
# holds the built build/), its named tests are run, and it is reported
# "caught" (a named test failed, crashed or timed out) or "survived" (they
# all passed: a promise no test holds). Run from the repository root after
# `make` (the Makefile's mutants target does both).
#
# A mutation is one line of LIST, six fields separated by tabs:
#   ID  FILE  PATTERN  REPLACEMENT  TESTS  WHY
# PATTERN is exact text (no regular expression) that must occur exactly
# once in FILE; it is replaced by REPLACEMENT. A pattern found nowhere or
# more than once, a FILE that is not there and a mutant that does not
# build (it would test the compiler, not the tests) are errors of the
# list, reported "error" and counted apart. TESTS are space-separated:
# build/tests/test_NAME (a C test), tests/FOLDER/test_NAME.sh (a shell test on
# build/roformer), or tests/python/FILE.py[::TEST] (that part of the
# Python package's tests, run by tests/python/test_python.sh on
# build/libroformer.so and build/roformer). WHY is the promise a user sees
# broken. Lines starting with # and empty lines are skipped. The named
# tests must pass on the unmutated tree first: if one fails, nothing runs.
#
# --check only checks every pattern against the sources (no build, no
# test: tests/project/test_mutants.sh runs it, so that a drifted source shows in
# make test). MUTANTS_PICK=N runs N mutations chosen by MUTANTS_SEED (CI
# gives the commit's hash, so each commit runs its own three); MUTANTS_ONLY
# names the IDs to run. MUTANTS_JOBS is make's -j and tests/run.sh's
# (default 2), MUTANTS_TEST_TIMEOUT each test's limit in seconds (default
# 300: a mutant that hangs is caught when its test is killed). The log of
# each mutation goes to build/mutants/ID.log.
#
# Prints one line per mutation, then "N caught, N survived" (", N list
# errors" when there are some); exit status 1 on any survivor or error.
set -u
check_only=0
if [ "${1:-}" = --check ]; then check_only=1; shift; fi
list=${1:-tests/mutants/list.tsv}
[ -f "$list" ] || { echo "mutants: no list $list" >&2; exit 2; }
build=build
tab=$(printf '\t')

# ==== The list: fields, pick, checks ====
# field N LINE: the Nth tab-separated field (cut keeps empty fields).
field() { printf '%s\n' "$2" | cut -f "$1"; }

# occurrences FILE PATTERN: how many times PATTERN occurs in FILE (lines
# holding it twice count twice). The pattern goes through the environment:
# awk -v would read its backslashes as escapes.
occurrences() {
    P=$2 awk 'BEGIN { p = ENVIRON["P"] }
        { s = $0; while ((i = index(s, p)) > 0) { n++; s = substr(s, i + length(p)) } }
        END { print n + 0 }' "$1"
}

# apply FILE PATTERN REPLACEMENT: writes FILE with its one occurrence
# replaced, to stdout.
apply() {
    P=$2 R=$3 awk 'BEGIN { p = ENVIRON["P"]; r = ENVIRON["R"] }
        (i = index($0, p)) > 0 { $0 = substr($0, 1, i - 1) r substr($0, i + length(p)) }
        { print }' "$1"
}

lines=$(grep -v -e '^#' -e '^[[:space:]]*$' "$list")
if [ -n "${MUTANTS_ONLY:-}" ]; then
    lines=$(printf '%s\n' "$lines" | awk -F'\t' -v only=" $MUTANTS_ONLY " 'index(only, " " $1 " ")')
fi
if [ -n "${MUTANTS_PICK:-}" ]; then
    case $MUTANTS_PICK in
    *[!0-9]*) echo "mutants: MUTANTS_PICK wants a number, not '$MUTANTS_PICK'" >&2; exit 2 ;;
    esac
    # each ID ranked by the hash of the seed and the ID: a stable draw per seed
    lines=$(printf '%s\n' "$lines" | while IFS= read -r l; do
        rank=$(printf '%s:%s' "${MUTANTS_SEED:-}" "$(field 1 "$l")" | sha256sum | cut -c1-16)
        echo "$rank$tab$l"
    done | sort | head -n "$MUTANTS_PICK" | cut -f2-)
fi

caught=0 survived=0 errors=0
valid=""   # the lines whose pattern matched once
report() { # report VERDICT ID FILE DETAIL
    printf '%-8s %-8s %-38s %s\n' "$1" "$2" "$3" "$4"
}
while IFS= read -r l; do
    [ -n "$l" ] || continue
    id=$(field 1 "$l") file=$(field 2 "$l") pat=$(field 3 "$l") tests=$(field 5 "$l")
    n_fields=$(printf '%s\n' "$l" | awk -F'\t' '{ print NF }')
    if [ "$n_fields" -ne 6 ] || [ -z "$pat" ] || [ -z "$tests" ]; then
        report error "$id" "$file" "wants 6 tab-separated fields, a pattern and tests"
        errors=$((errors + 1)); continue
    fi
    if [ ! -f "$file" ]; then
        report error "$id" "$file" "no such file"
        errors=$((errors + 1)); continue
    fi
    n=$(occurrences "$file" "$pat")
    if [ "$n" -ne 1 ]; then
        report error "$id" "$file" "the pattern occurs $n times, not once: $pat"
        errors=$((errors + 1)); continue
    fi
    [ "$check_only" = 1 ] && report found "$id" "$file" ""
    valid="$valid$l
"
done <<EOF
$lines
EOF
if [ "$check_only" = 1 ]; then
    echo "$(printf '%s' "$valid" | grep -c .) patterns found once, $errors list errors"
    [ "$errors" -eq 0 ]; exit
fi

# ==== The build: what the named tests need, in the working tree ====
# targets TESTS: the make targets the tests need.
targets() {
    for t in $1; do
        case $t in
        tests/python/*.py*) echo "$build/libroformer.so $build/roformer" ;; # the tests run the CLI too
        *.sh) echo "$build/roformer" ;;
        *) echo "$t" ;;
        esac
    done | tr ' ' '\n' | sort -u
}
jobs=${MUTANTS_JOBS:-2}
all_tests=$(printf '%s' "$valid" | cut -f5 | tr ' ' '\n' | sort -u | tr '\n' ' ')
logs=$build/mutants
mkdir -p "$logs"
if ! make -j"$jobs" $(targets "$all_tests") >"$logs/build.log" 2>&1; then
    echo "mutants: the unmutated tree does not build ($logs/build.log)"
    exit 1
fi

# ==== The copy ====
# The tree (with its built build/, times kept so make rebuilds only what a
# mutation touches) goes into a scratch folder, beside a link to ../shared
# so that the tests find the reference fixtures where they look for them.
# The working tree is never written again, but for build/mutants/ (the
# logs).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
[ -d ../shared ] && ln -s "$(cd ../shared && pwd)" "$scratch/shared"
mkdir "$scratch/tree"
for f in * .[!.]*; do
    case $f in .git | build-* | '.[!.]*' | '*') continue ;; esac
    cp -a "$f" "$scratch/tree/" || exit 2
done
rm -rf "$scratch/tree/$build/mutants"
here=$(pwd)
# a reference or data folder named relative to the tree: the same folder
# from the copy
for v in ROFORMER_REFERENCE ROFORMER_DATA; do
    eval "p=\${$v:-}"
    case $p in '' | /*) ;; *) [ -d "$p" ] && export "$v=$(cd "$p" && pwd)" ;; esac
done
cd "$scratch/tree" || exit 2

# run_tests TESTS: runs them (tests/run.sh), exit status 0 when all passed.
run_tests() {
    bins="" scripts="" py=""
    for t in $1; do
        case $t in
        tests/python/*.py*) py="$py $t"; scripts="$scripts tests/python/test_python.sh" ;;
        *.sh) scripts="$scripts $t" ;;
        *) bins="$bins $t" ;;
        esac
    done
    scripts=$(echo $scripts | tr ' ' '\n' | sort -u | tr '\n' ' ')
    RF_PYTEST_SELECT="${py# }" RF_TEST_SCRIPTS="$scripts" \
        TEST_TIMEOUT="${MUTANTS_TEST_TIMEOUT:-300}" sh tests/run.sh -j "$jobs" "$build" $bins
}

# ==== The unmutated tree: every named test must pass on it ====
start=$(date +%s)
if ! run_tests "$all_tests" >"$here/$logs/unmutated.log" 2>&1; then
    echo "mutants: the named tests fail on the unmutated tree (first fix that):"
    grep -E '^(FAIL|CRASH|TIMEOUT)' "$here/$logs/unmutated.log" | head -n 20
    exit 1
fi
echo "unmutated tree: the named tests pass ($(($(date +%s) - start)) s)"

# ==== One mutation at a time ====
while IFS= read -r l; do
    [ -n "$l" ] || continue
    id=$(field 1 "$l") file=$(field 2 "$l") pat=$(field 3 "$l") rep=$(field 4 "$l")
    tests=$(field 5 "$l") why=$(field 6 "$l")
    log=$here/$logs/$id.log
    t0=$(date +%s)
    apply "$here/$file" "$pat" "$rep" >"$file"
    { echo "$id $file: '$pat' -> '$rep'"; echo "why: $why"; echo "tests: $tests"; } >"$log"
    if ! make -j"$jobs" $(targets "$tests") >>"$log" 2>&1; then
        verdict=error detail="the mutant does not build ($logs/$id.log)"
        errors=$((errors + 1))
    elif run_tests "$tests" >>"$log" 2>&1; then
        verdict=survived detail="$why"
        survived=$((survived + 1))
    else
        verdict=caught detail=$(grep -a -m 1 -E '^(FAIL|CRASH|TIMEOUT) ' "$log" | cut -c1-60)
        caught=$((caught + 1))
    fi
    # the original back, newer than what the mutant built: the next make
    # rebuilds it
    cp "$here/$file" "$file"
    report "$verdict" "$id" "$file" "$(($(date +%s) - t0)) s  $detail"
done <<EOF
$valid
EOF
tail=""
[ "$errors" -gt 0 ] && tail=", $errors list errors"
echo "$caught caught, $survived survived$tail"
[ "$survived" -eq 0 ] && [ "$errors" -eq 0 ]
