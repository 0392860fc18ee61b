/*
 * backend.c — the kernels' one table of builds and the choice among them
 * (backend.h).
 *
 * The int8 builds give the same exact sums, so their rule is their needs:
 * the fastest the CPU runs. The bf16 builds differ in the order of their
 * f32 sums, so their rule is fixed per CPU model (gemm_bf16.h). The
 * element-wise builds take the widest vectors the CPU has.
 */
#include "kernels/backend.h"
#include "kernels/elementwise_ops.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/gemm_int8_backend.h"
#include "kernels/simd.h"

#include <string.h>

#define NEEDS RF_CPU_NEEDS

/* A row of each op, every field given, so that a row missing one does not
 * compile. The int8 and element-wise rows' rule is their needs (the
 * fastest, the widest they run), never for the tests' own; only the bf16
 * rows name a rule of their own. */
#define INT8_ROW(NAME, CPU_NEEDS, WHY, TESTS_ONLY, OPS)                                            \
    {(NAME), RF_OP_INT8, (CPU_NEEDS), (TESTS_ONLY) ? RF_RULE_NEVER : (CPU_NEEDS), (WHY),          \
     (TESTS_ONLY), &(OPS), NULL, NULL}
#define BF16_ROW(NAME, CPU_NEEDS, RULE, WHY, TESTS_ONLY, OPS)                                      \
    {(NAME), RF_OP_BF16, (CPU_NEEDS), (RULE), (WHY), (TESTS_ONLY), NULL, &(OPS), NULL}
#define ELEMENTWISE_ROW(NAME, CPU_NEEDS, WHY, OPS)                                                 \
    {(NAME), RF_OP_ELEMENTWISE, (CPU_NEEDS), (CPU_NEEDS), (WHY), false, NULL, NULL, &(OPS)}

#define SAME_SUMS "; every int8 build gives the same sums"

const rf_backend rf_backends[] = {
#if RF_SIMD_X86
    INT8_ROW("amx", NEEDS(RF_CPU_AMX_INT8) | NEEDS(RF_CPU_AVX512_VNNI),
             "AMX-INT8: TDPBSSD tiles, the fastest" SAME_SUMS, false, rf_int8_ops_amx),
    INT8_ROW("vnni", NEEDS(RF_CPU_AVX512_VNNI),
             "AVX512-VNNI: VPDPBUSD, the fastest here" SAME_SUMS, false, rf_int8_ops_vnni),
    INT8_ROW("avx2", NEEDS(RF_CPU_AVX2),
             "AVX2: VPMADDUBSW and VPMADDWD, the fastest here" SAME_SUMS, false,
             rf_int8_ops_avx2),
    INT8_ROW("amx-model", NEEDS(RF_CPU_AVX2), "the AMX loops on the C emulator of the tiles",
             true, rf_int8_ops_amx_emulated),
    BF16_ROW("amx", NEEDS(RF_CPU_AMX_BF16) | NEEDS(RF_CPU_AVX512) | NEEDS(RF_CPU_AVX512_BF16),
             NEEDS(RF_CPU_AMX_BF16) | NEEDS(RF_CPU_AVX512) | NEEDS(RF_CPU_AVX512_BF16),
             "AMX-BF16 in use", false, rf_bf16_ops_amx),
    BF16_ROW("avx512bf16", NEEDS(RF_CPU_AVX512_BF16),
             NEEDS(RF_CPU_AVX512_BF16) | NEEDS(RF_CPU_AMD),
             "AVX512_BF16 on AMD (VDPBF16PS at twice the f32 FMA rate)", false,
             rf_bf16_ops_avx512bf16),
    BF16_ROW("f32fma", NEEDS(RF_CPU_AVX512) | NEEDS(RF_CPU_AVX512_BF16),
             NEEDS(RF_CPU_AVX512_BF16),
             "AVX512_BF16 without AMX-BF16, not AMD: VDPBF16PS is slower than f32 FMA here, so "
             "f32 FMA on bf16 operands",
             false, rf_bf16_ops_f32fma),
    BF16_ROW("amx-model", NEEDS(RF_CPU_AVX2), RF_RULE_NEVER,
             "the AMX loops on the C emulator of the tiles", true, rf_bf16_ops_amx_emulated),
    ELEMENTWISE_ROW("avx512", NEEDS(RF_CPU_AVX512), "AVX-512: the widest vectors here",
                    rf_elementwise_avx512),
    ELEMENTWISE_ROW("avx2", NEEDS(RF_CPU_AVX2), "AVX2 with FMA: the widest vectors here",
                    rf_elementwise_avx2),
    ELEMENTWISE_ROW("baseline", 0, "SSE2: every x86-64 CPU has it", rf_elementwise_baseline),
#elif RF_SIMD_ARM64
    INT8_ROW("i8mm", NEEDS(RF_CPU_ARM_I8MM), "I8MM: SMMLA, the fastest here" SAME_SUMS, false,
             rf_int8_ops_i8mm),
    INT8_ROW("sdot", NEEDS(RF_CPU_ARM_DOTPROD), "dot product: SDOT, the fastest here" SAME_SUMS,
             false, rf_int8_ops_sdot),
    INT8_ROW("neon", NEEDS(RF_CPU_NEON), "NEON: every ARMv8-A CPU has it" SAME_SUMS, false,
             rf_int8_ops_neon),
    BF16_ROW("bfmmla", NEEDS(RF_CPU_ARM_BF16), NEEDS(RF_CPU_ARM_BF16), "BF16: BFMMLA", false,
             rf_bf16_ops_bfmmla),
    BF16_ROW("bfdot", NEEDS(RF_CPU_ARM_BF16), RF_RULE_NEVER, "BF16: BFDOT, chosen only by name",
             false, rf_bf16_ops_bfdot),
    ELEMENTWISE_ROW("baseline", 0, "NEON: every ARMv8-A CPU has it", rf_elementwise_baseline),
#else
    ELEMENTWISE_ROW("baseline", 0, "portable C", rf_elementwise_baseline),
#endif
};
const int rf_backend_count = (int)(sizeof rf_backends / sizeof rf_backends[0]);

static const char *const op_names[RF_OP_COUNT] = {
    [RF_OP_INT8] = "int8",
    [RF_OP_BF16] = "bf16",
    [RF_OP_ELEMENTWISE] = "elementwise",
};

/* Why an op has no row in use. */
static const char *const unavailable[RF_OP_COUNT] = {
    [RF_OP_INT8] = "no int8 build runs on this CPU: int8 compute unavailable",
    [RF_OP_BF16] = "no bf16 build runs on this CPU: bf16 compute unavailable",
    [RF_OP_ELEMENTWISE] = "no element-wise build runs on this CPU",
};

const char *rf_op_name(rf_op op)
{
    return (unsigned)op < RF_OP_COUNT ? op_names[op] : NULL;
}

rf_op rf_op_find(const char *name)
{
    for (int op = 0; op < RF_OP_COUNT; op++)
        if (!strcmp(name, op_names[op]))
            return (rf_op)op;
    return RF_OP_COUNT;
}

bool rf_backend_runs(const rf_backend *b)
{
    return b && rf_cpu_has_all(b->needs);
}

/* The CPU's choice: the op's first row whose rule set the CPU has (and
 * runs it), NULL where none does. */
static const rf_backend *by_rule(rf_op op)
{
    for (int i = 0; i < rf_backend_count; i++) {
        const rf_backend *b = &rf_backends[i];
        if (b->op == op && !b->tests_only && rf_cpu_has_all(b->rule) && rf_backend_runs(b))
            return b;
    }
    return NULL;
}

bool rf_backend_supported(rf_op op)
{
    return by_rule(op) != NULL;
}

/* Per op, NULL until chosen. A pointer read and written whole: the first
 * callers may race to store the same answer. */
static const rf_backend *chosen[RF_OP_COUNT];

const rf_backend *rf_backend_get(rf_op op)
{
    const rf_backend *b = __atomic_load_n(&chosen[op], __ATOMIC_RELAXED);
    if (!b) {
        b = by_rule(op);
        for (int i = 0; !b && i < rf_backend_count; i++)
            if (rf_backends[i].op == op)
                b = &rf_backends[i];
        __atomic_store_n(&chosen[op], b, __ATOMIC_RELAXED);
    }
    return b;
}

bool rf_backend_set(const rf_backend *b)
{
    if (!rf_backend_runs(b))
        return false;
    __atomic_store_n(&chosen[b->op], b, __ATOMIC_RELAXED);
    return true;
}

const rf_backend *rf_backend_find(rf_op op, const char *name)
{
    for (int i = 0; i < rf_backend_count; i++)
        if (rf_backends[i].op == op && !strcmp(name, rf_backends[i].name))
            return &rf_backends[i];
    return NULL;
}

const char *rf_backend_reason(rf_op op)
{
    const rf_backend *rule = by_rule(op);
    if (!rule)
        return unavailable[op];
    return rf_backend_get(op) == rule ? rule->why : "set by the caller";
}
