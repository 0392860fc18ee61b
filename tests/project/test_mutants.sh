#!/bin/sh
# test_mutants.sh — the mutation runner (tests/mutants/run.sh) itself, on a
# small tree of its own, and the shipped list against today's sources:
#   - every pattern of tests/mutants/list.tsv occurs exactly once in its
#     file (a drifted source fails here, in make test, not at the next
#     make mutants);
#   - a pattern found nowhere, one found twice, a missing file and a line
#     without its six fields are list errors, and --check exits non-zero;
#   - a full run on a toy tree (a Makefile and one "test" built from a
#     file): a mutation its test fails on is caught, one no test reads
#     survives, one that does not build is an error, with the summary line
#     and exit status 1;
#   - MUTANTS_PICK draws the same mutations for the same seed.
# No compiler and no model: it runs in a second or two.
. tests/check.sh
runner=$(pwd)/tests/mutants/run.sh

sh "$runner" --check >"$TMP/shipped" 2>&1
rc=$?
check "every pattern of the shipped list occurs once in its file" [ $rc -eq 0 ]
[ $rc -eq 0 ] || grep -v '^found' "$TMP/shipped" | head -n 5 >&2

# ==== A toy tree: src/value.txt is read by its one test ====
toy=$TMP/toy
mkdir -p "$toy/src" "$toy/tests"
cp tests/run.sh "$toy/tests/run.sh"
printf 'value 1\n' >"$toy/src/value.txt"
printf 'a note no test reads\ndup\ndup\n' >"$toy/src/notes.txt"
# the test passes while value.txt says "value 1"; "broken" does not build
cat >"$toy/Makefile" <<'EOF'
build/tests/test_value: src/value.txt
	@mkdir -p build/tests
	@! grep -q broken src/value.txt
	@if grep -qx 'value 1' src/value.txt; then r='1 ok, 0 failed'; else r='0 ok, 1 failed'; fi; \
	    printf '#!/bin/sh\necho "test_value: %s, 0 skipped"\n' "$$r" >$@; chmod +x $@
EOF
tab=$(printf '\t')
row() { printf '%s\n' "$1$tab$2$tab$3$tab$4${tab}build/tests/test_value$tab$5"; }
{
    echo "# a comment line, then an empty one"
    echo
    row none src/value.txt "value 7" "value 8" "a pattern found nowhere"
    row twice src/notes.txt "dup" "dip" "a pattern found twice"
    row nofile src/absent.txt "x" "y" "a file that is not there"
    printf 'short\tsrc/value.txt\tvalue 1\n'
    row value src/value.txt "value 1" "value 2" "the test reads it"
    row note src/notes.txt "a note" "one note" "no test reads it"
    row build src/value.txt "value 1" "broken" "the mutant does not build"
} >"$toy/list.tsv"

(cd "$toy" && sh "$runner" --check list.tsv) >"$TMP/check" 2>&1
rc=$?
check "--check: exit status 1 on list errors" [ $rc -eq 1 ]
has() { grep -q "$1" "$2" || { echo "  no line '$1' in:" >&2; cat "$2" >&2; return 1; }; }
check "--check: a pattern found nowhere is an error" \
    has '^error *none .*occurs 0 times' "$TMP/check"
check "--check: a pattern found twice is an error" has '^error *twice .*occurs 2 times' "$TMP/check"
check "--check: a missing file is an error" has '^error *nofile .*no such file' "$TMP/check"
check "--check: a line without six fields is an error" \
    has '^error *short .*6 tab-separated' "$TMP/check"
check "--check: the three good patterns are found, four errors counted" \
    has '^3 patterns found once, 4 list errors$' "$TMP/check"
check "--check: the working tree is left as it was" \
    sh -c "[ \"\$(cat '$toy/src/value.txt')\" = 'value 1' ] && [ ! -d '$toy/build' ]"

# the toy tree has no reference fixtures: CI's requirement of them is not
# the toy's
(cd "$toy" && ROFORMER_REQUIRE_REFERENCE= timeout 120 sh "$runner" list.tsv) >"$TMP/run" 2>&1
rc=$?
check "run: exit status 1 (a survivor and errors)" [ $rc -eq 1 ]
check "run: the mutation its test fails on is caught" has '^caught *value ' "$TMP/run"
check "run: the mutation no test reads survives" has '^survived *note ' "$TMP/run"
check "run: a mutant that does not build is an error, not caught" \
    has '^error *build .*does not build' "$TMP/run"
check "run: the summary line" has '^1 caught, 1 survived, 5 list errors$' "$TMP/run"
check "run: the working tree's source is not mutated" \
    sh -c "[ \"\$(cat '$toy/src/value.txt')\" = 'value 1' ] &&
           grep -q '^a note' '$toy/src/notes.txt'"
check "run: one log per mutation run" test -s "$toy/build/mutants/value.log"

# ==== The draw: the same seed, the same mutations ====
# check_draw N SEED: the IDs --check lists with MUTANTS_PICK=N, one a line
check_draw() {
    (cd "$toy" && MUTANTS_PICK=$1 MUTANTS_SEED=$2 sh "$runner" --check list.tsv 2>&1) |
        awk '/^(found|error) / { print $2 }'
}
check "MUTANTS_PICK=2 draws two mutations" [ "$(check_draw 2 abc | wc -l)" -eq 2 ]
check "the same seed draws the same mutations" [ "$(check_draw 3 1234)" = "$(check_draw 3 1234)" ]
check "MUTANTS_ONLY runs the IDs named" \
    sh -c "cd '$toy' && MUTANTS_ONLY='value note' sh '$runner' --check list.tsv |
           grep -q '^2 patterns found once, 0 list errors$'"
check_done
