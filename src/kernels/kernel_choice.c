/*
 * kernel_choice.c — the user's choice of kernels (kernel_choice.h): the
 * words of ROFORMER_KERNEL / `--kernel`, a comma-separated list of
 * TYPE=NAME, e.g. "int8=vnni,attention=f32":
 *   int8=NAME        an int8 backend's name (gemm_int8_backend.h's table)
 *   bf16=NAME        a bf16 backend's name (gemm_bf16_backend.h's table)
 *   attention=bf16|f32  bf16 and int8 compute's attention products
 * The tests' own backends are no words. A backend the CPU lacks, or an
 * unknown word, is an error naming what was asked and what there is.
 * Also what is in use and why (rf_kernels_get_info), and every build of
 * the tables with whether this CPU runs it (rf_kernels_list).
 */
#include "kernels/kernel_choice.h"
#include "base/error.h"
#include "kernels/cpu.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_bf16_backend.h"
#include "kernels/gemm_int8.h"
#include "kernels/gemm_int8_backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -1: by the CPU rule; else 0 (f32) or 1 (bf16). */
static int attention_choice = -1;
static const char *int8_source = "the CPU", *bf16_source = NULL;

bool rf_attention_in_bf16(void)
{
    int c = __atomic_load_n(&attention_choice, __ATOMIC_RELAXED);
    return c < 0 ? rf_bf16_attention_fast() : c == 1;
}

/* The names of the backends of a table (count rows of `names` entries
 * each `stride` bytes apart, NULL at the end) for which `runs`, for
 * messages: "avx2, vnni". */
#define RUNNING(table, count, runs, out)                                                          \
    do {                                                                                           \
        size_t n_ = 0;                                                                             \
        (out)[0] = '\0';                                                                           \
        for (int i_ = 0; i_ < (count); i_++)                                                       \
            if (!(table)[i_]->tests_only && runs((table)[i_]))                                     \
                n_ += (size_t)snprintf((out) + n_, n_ < sizeof(out) ? sizeof(out) - n_ : 0, "%s%s", \
                                       n_ ? ", " : "", (table)[i_]->name);                          \
    } while (0)

static rf_status select_one(const char *type, const char *name, const char *source, rf_error *err)
{
    char builds[96];
    if (!strcmp(type, "int8")) {
        const rf_int8_backend *b = rf_int8_backend_find(name);
        if (b && !b->tests_only && rf_int8_backend_set(b)) {
            int8_source = source;
            return RF_OK;
        }
        RUNNING(rf_int8_backends, rf_int8_backend_count, rf_int8_backend_runs, builds);
        return rf_fail(err, RF_ERR_UNSUPPORTED, "%s: no int8 build '%s' on this CPU (it runs: %s%s%s)",
                       source, name, builds[0] ? builds : "none",
                       !strcmp(name, "amx") ? "; AMX: " : "",
                       !strcmp(name, "amx") ? rf_cpu_amx_reason() : "");
    }
    if (!strcmp(type, "bf16")) {
        const rf_bf16_backend *b = rf_bf16_backend_find(name);
        if (b && !b->tests_only && rf_bf16_backend_set(b)) {
            bf16_source = source;
            return RF_OK;
        }
        RUNNING(rf_bf16_backends, rf_bf16_backend_count, rf_bf16_backend_runs, builds);
        return rf_fail(err, RF_ERR_UNSUPPORTED, "%s: no bf16 kernel '%s' on this CPU (it runs: %s)",
                       source, name, builds[0] ? builds : "none");
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
                   "%s: unknown product '%s' (expected int8=, bf16= or attention=)", source, type);
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

rf_kernel_info rf_kernels_get_info(void)
{
    rf_kernel_info info;
    /* what a context would run: ROFORMER_KERNEL applied first (its error,
       if any, is the context's to report) */
    rf_kernels_from_env(NULL);
    info.int8 = rf_int8_supported() ? rf_int8_backend_name() : "none";
    info.int8_chosen_by = int8_source;
    info.attention = rf_attention_in_bf16() ? "bf16" : "f32";
    info.bf16 = rf_bf16_supported() ? rf_bf16_backend_name() : "none";
    info.bf16_chosen_by = bf16_source ? bf16_source : rf_bf16_backend_reason();
    info.amx = rf_cpu_amx_reason();
    return info;
}

/* The rows of one product's table into out[n, cap), `used` marked in
 * use only where the product runs at all; adds the rows to n. */
#define LIST(product, table, count, runs_fn, used, supported)                                   \
    do {                                                                                       \
        for (int i_ = 0; i_ < (count); i_++, n++)                                              \
            if (n < cap)                                                                       \
                out[n] = (rf_kernel_build){(product), (table)[i_]->name, runs_fn((table)[i_]), \
                                           (table)[i_]->tests_only,                            \
                                           (supported) && (table)[i_] == (used)};              \
    } while (0)

int32_t rf_kernels_list(rf_kernel_build *out, int32_t cap)
{
    rf_kernels_from_env(NULL); /* as rf_kernels_get_info: what a context would run */
    int32_t n = 0;
    LIST("int8", rf_int8_backends, rf_int8_backend_count, rf_int8_backend_runs,
         rf_int8_backend_get(), rf_int8_supported());
    LIST("bf16", rf_bf16_backends, rf_bf16_backend_count, rf_bf16_backend_runs,
         rf_bf16_backend_get(), rf_bf16_supported());
    return n;
}
