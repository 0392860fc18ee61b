# test_nan_checks.sh — the tests' comparisons let no NaN through. fmaxf,
# fmax, fminf and fmin return the other operand when one is NaN, so a
# difference merged with them drops a NaN output and the check passes: no
# test's .c or .h calls them (check.h's check_max_nan is the merge that
# keeps a NaN, test_check_helpers proves it). The Python tests likewise use
# no NaN-dropping numpy form (nanmax, nanmin, fmax, fmin, nan_to_num,
# equal_nan).
. tests/check.sh

grep -nE '(^|[^A-Za-z0-9_])f(max|min)f?[[:space:]]*\(' tests/*.h tests/*/*.c tests/*/*.h >"$TMP/c"
check "no fmax/fmin merge in the tests' .c and .h files ($(head -n 3 "$TMP/c" | tr '\n' ' '))" [ ! -s "$TMP/c" ]

grep -nE 'nanmax|nanmin|np\.fmax|np\.fmin|nan_to_num|equal_nan' tests/*.py tests/*/*.py tests/*/*/*.py >"$TMP/py"
check "no NaN-dropping numpy form in the Python tests ($(head -n 3 "$TMP/py" | tr '\n' ' '))" \
    [ ! -s "$TMP/py" ]
check_done
