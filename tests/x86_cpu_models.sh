# x86_cpu_models.sh — run by tests/run_x86.sh only (make test-x86
# CPU=NAME): the CLI under `qemu-x86_64-static -cpu $RF_X86_CPU` ($ROFORMER)
# chooses its kernels from what that model has, as Intel documents it:
#   Haswell (AVX2 and FMA, no AVX-512): OpenBLAS's Haswell core, the int8
#     product's avx2 build; bf16 compute refused (no AVX512_BF16, and not
#     an AMD CPU, whose f32fma build would serve it)
#   Nehalem (SSE4.2, no AVX): OpenBLAS's Nehalem core; f32 runs, int8 and
#     bf16 compute are refused with one line and exit status 1, nothing on
#     stdout
# On another model nothing is known to expect: one skip says so.
. tests/check.sh
MODEL=models/sentiment-zh-small.gguf
case ${RF_X86_CPU:-} in
Haswell*) core=Haswell int8=avx2 ;;
Nehalem*) core=Nehalem int8=none ;;
*)
    check_skip "no expectations for the CPU model '${RF_X86_CPU:-}' (Haswell*, Nehalem*)"
    check_done; exit ;;
esac

$ROFORMER version >"$TMP/version" 2>"$TMP/version.err"
check "$RF_X86_CPU: version exits 0, nothing on stderr" \
    sh -c "[ $? -eq 0 ] && [ ! -s '$TMP/version.err' ]"
check "$RF_X86_CPU: OpenBLAS runs its $core core" grep -q "^blas: core $core," "$TMP/version"
$ROFORMER info -m $MODEL >"$TMP/info" 2>&1
check "$RF_X86_CPU: info names the int8 kernel $int8" grep -q "^int8 kernel: *$int8 " "$TMP/info"
check "$RF_X86_CPU: info names no bf16 kernel" grep -q "^bf16 kernel: *none " "$TMP/info"

printf '今天天气很好\n这部电影太难看了，浪费时间\n' >"$TMP/texts"
check "$RF_X86_CPU: embed --compute f32, one embedding per text" \
    sh -c "$ROFORMER embed -m $MODEL --compute f32 <'$TMP/texts' >'$TMP/f32' &&
           [ \$(grep -c embedding '$TMP/f32') -eq 2 ]"

# refused COMPUTE MESSAGE: exit 1, the one line, nothing on stdout
refused() {
    $ROFORMER embed -m $MODEL --compute "$1" <"$TMP/texts" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    check "$RF_X86_CPU: --compute $1 exits 1" [ "$rc" -eq 1 ]
    check "$RF_X86_CPU: --compute $1 says '$2'" grep -qxF "roformer: error: context: $2" "$TMP/err"
    check "$RF_X86_CPU: --compute $1 error is one line, nothing on stdout" \
        sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && [ ! -s '$TMP/out' ]"
}
refused bf16 "bf16 compute needs a CPU with AVX512_BF16, which this one lacks"
if [ "$int8" = none ]; then
    refused int8 "int8 compute needs a CPU with AVX2, which this one lacks"
else
    check "$RF_X86_CPU: embed --compute int8, one embedding per text" \
        sh -c "$ROFORMER embed -m $MODEL --compute int8 <'$TMP/texts' >'$TMP/int8' &&
               [ \$(grep -c embedding '$TMP/int8') -eq 2 ]"
fi
check_done
