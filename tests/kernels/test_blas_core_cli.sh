# test_blas_core_cli.sh — the roformer CLI reports its OpenBLAS core and
# re-executes itself at most once to change it (tools/roformer/blas_core.c).
. tests/check.sh

detected=$(ROFORMER_BLAS_CORE=none "$ROFORMER" version | sed -n 's/^blas: core \([^,]*\),.*/\1/p')
check "version names the detected core" test -n "$detected"
forced=Nehalem; [ "$detected" = Nehalem ] && forced=Sandybridge

ROFORMER_BLAS_CORE=$forced timeout 20 "$ROFORMER" version >"$TMP/out"
check "ROFORMER_BLAS_CORE=$forced: version exits 0 and uses it" \
    sh -c "[ $? -eq 0 ] && grep -q '^blas: core $forced,' '$TMP/out'"
OPENBLAS_CORETYPE=$forced ROFORMER_BLAS_CORE=none timeout 20 "$ROFORMER" version >"$TMP/out"
check "a user-set OPENBLAS_CORETYPE: version exits 0 and it wins" \
    sh -c "[ $? -eq 0 ] && grep -q '^blas: core $forced,' '$TMP/out'"

# argv survives the re-execution: the unknown command is named, usage exit 2
ROFORMER_BLAS_CORE=$forced timeout 20 "$ROFORMER" 'no such command' 2>"$TMP/err"
check "exit status 2 after re-execution" test $? -eq 2
check "argv kept across re-execution" grep -q "unknown command 'no such command'" "$TMP/err"
check_done
