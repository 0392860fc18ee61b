/*
 * kernel_choice.c — the user's choice of kernels (kernel_choice.h): the
 * words of ROFORMER_KERNEL / `--kernel`, a comma-separated list of
 * TYPE=NAME, e.g. "int8=vnni,attention=f32":
 *   int8=NAME        an int8 build's name (backend.c's table)
 *   bf16=NAME        a bf16 build's name
 *   elementwise=NAME the element-wise kernels' build
 *   attention=bf16|f32  bf16 and int8 compute's attention products
 * The tests' own builds are no words. A build the CPU lacks, or an
 * unknown word, is an error naming what was asked and what there is.
 * Also what is in use and why (rf_kernels_get_info), and every row of the
 * table with whether this CPU runs it (rf_kernels_list).
 */
#include "kernels/kernel_choice.h"
#include "base/error.h"
#include "kernels/backend.h"
#include "kernels/cpu.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -1: by the CPU rule; else 0 (f32) or 1 (bf16). */
static int attention_choice = -1;
/* Per op: who chose its build, NULL for the CPU. */
static const char *sources[RF_OP_COUNT];

bool rf_attention_in_bf16(void)
{
    int c = __atomic_load_n(&attention_choice, __ATOMIC_RELAXED);
    return c < 0 ? rf_bf16_attention_fast() : c == 1;
}

/* The names of the op's rows this CPU runs, for messages: "avx2, vnni". */
static void running(rf_op op, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < rf_backend_count; i++) {
        const rf_backend *b = &rf_backends[i];
        if (b->op == op && !b->tests_only && rf_backend_runs(b))
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", b->name);
    }
}

static rf_status select_one(const char *type, const char *name, const char *source, rf_error *err)
{
    rf_op op = rf_op_find(type);
    if (op != RF_OP_COUNT) {
        const rf_backend *b = rf_backend_find(op, name);
        if (b && !b->tests_only && rf_backend_set(b)) {
            __atomic_store_n(&sources[op], source, __ATOMIC_RELAXED);
            return RF_OK;
        }
        char builds[96];
        running(op, builds, sizeof builds);
        bool amx = !strcmp(name, "amx");
        return rf_fail(err, RF_ERR_UNSUPPORTED, "%s: no %s build '%s' on this CPU (it runs: %s%s%s)",
                       source, type, name, builds[0] ? builds : "none", amx ? "; AMX: " : "",
                       amx ? rf_cpu_amx_reason() : "");
    }
    if (!strcmp(type, "attention")) {
        if (strcmp(name, "bf16") && strcmp(name, "f32"))
            return rf_fail(err, RF_ERR_INPUT, "%s: attention=%s: expected bf16 or f32", source, name);
        if (!strcmp(name, "bf16") && !rf_bf16_supported())
            return rf_fail(err, RF_ERR_UNSUPPORTED,
                           "%s: attention=bf16 needs the bf16 kernel (" RF_BF16_CPU_NEEDS
                           "), which this CPU lacks", source);
        __atomic_store_n(&attention_choice, !strcmp(name, "bf16"), __ATOMIC_RELAXED);
        return RF_OK;
    }
    return rf_fail(err, RF_ERR_INPUT,
                   "%s: unknown product '%s' (expected int8=, bf16=, elementwise= or attention=)",
                   source, type);
}

static rf_status select_from(const char *spec, const char *source, rf_error *err)
{
    if (!spec || !*spec)
        return rf_fail(err, RF_ERR_INPUT, "%s: empty kernel choice", source);
    char buf[256];
    if (strlen(spec) >= sizeof buf)
        return rf_fail(err, RF_ERR_INPUT, "%s: kernel choice longer than %zu bytes", source,
                       sizeof buf - 1);
    strcpy(buf, spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || eq == item || !eq[1])
            return rf_fail(err, RF_ERR_INPUT, "%s: '%s' is not TYPE=NAME (e.g. int8=vnni)", source,
                           item);
        *eq = '\0';
        rf_status st = select_one(item, eq + 1, source, err);
        if (st != RF_OK)
            return st;
    }
    return RF_OK;
}

rf_status rf_kernels_select(const char *spec, rf_error *err)
{
    return select_from(spec, "--kernel", err);
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static rf_status env_status = RF_OK;
static rf_error env_error;

static void read_env(void)
{
    const char *spec = getenv("ROFORMER_KERNEL");
    if (spec)
        env_status = select_from(spec, "ROFORMER_KERNEL", &env_error);
}

rf_status rf_kernels_from_env(rf_error *err)
{
    pthread_once(&env_once, read_env);
    if (env_status != RF_OK && err)
        *err = env_error;
    return env_status;
}

/* Who chose the op's build: the user's source, else the CPU rule's
 * reason (or the CPU, where all builds give the same result: int8). */
static const char *chosen_by(rf_op op)
{
    const char *source = __atomic_load_n(&sources[op], __ATOMIC_RELAXED);
    if (source)
        return source;
    return op == RF_OP_INT8 ? "the CPU" : rf_backend_reason(op);
}

const char *rf_kernels_chosen_by(const char *product)
{
    rf_kernels_from_env(NULL); /* as rf_kernels_get_info: what a context would run */
    rf_op op = product ? rf_op_find(product) : RF_OP_COUNT;
    return op == RF_OP_COUNT ? NULL : chosen_by(op);
}

rf_kernel_info rf_kernels_get_info(void)
{
    rf_kernel_info info;
    /* what a context would run: ROFORMER_KERNEL applied first (its error,
       if any, is the context's to report) */
    rf_kernels_from_env(NULL);
    info.int8 = rf_int8_supported() ? rf_backend_get(RF_OP_INT8)->name : "none";
    info.int8_chosen_by = chosen_by(RF_OP_INT8);
    info.attention = rf_attention_in_bf16() ? "bf16" : "f32";
    info.bf16 = rf_bf16_supported() ? rf_backend_get(RF_OP_BF16)->name : "none";
    info.bf16_chosen_by = chosen_by(RF_OP_BF16);
    info.amx = rf_cpu_amx_reason();
    return info;
}

int32_t rf_kernels_list(rf_kernel_build *out, int32_t cap)
{
    rf_kernels_from_env(NULL); /* as rf_kernels_get_info: what a context would run */
    for (int32_t i = 0; i < rf_backend_count && i < cap; i++) {
        const rf_backend *b = &rf_backends[i];
        out[i] = (rf_kernel_build){rf_op_name(b->op), b->name, rf_backend_runs(b), b->tests_only,
                                   rf_backend_supported(b->op) && rf_backend_get(b->op) == b};
    }
    return rf_backend_count;
}
