/*
 * kernel_choice.c — the user's choice of kernels (kernel_choice.h): the
 * words of ROFORMER_KERNEL / `--kernel`, a comma-separated list of
 * TYPE=NAME, e.g. "int8=vnni,attention=f32":
 *   int8=amx|vnni|avx2|i8mm|sdot|neon          the int8 product's build
 *   bf16=amx|avx512bf16|f32fma|bfmmla|bfdot    the bf16 product's kernel
 *   attention=bf16|f32                         bf16 and int8 compute's attention products
 * A build the CPU lacks, or an unknown word, is an error naming what was
 * asked and what there is.
 */
#include "kernels/kernel_choice.h"
#include "error.h"
#include "kernels/amx.h"
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_int8.h"

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

/* The int8 builds this CPU runs, for messages. */
static void int8_builds(char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int k = 0; k <= RF_INT8_AMX; k++) {
        rf_int8_kernel kernel = (rf_int8_kernel)k, was = rf_int8_kernel_get();
        if (!rf_int8_kernel_set(kernel))
            continue;
        rf_int8_kernel_set(was);
        n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s", n ? ", " : "",
                              rf_int8_kernel_name(kernel));
    }
}

static rf_status select_one(const char *type, const char *name, const char *source, rf_error *err)
{
    if (!strcmp(type, "int8")) {
        rf_int8_kernel kernel;
        char builds[96];
        if (rf_int8_kernel_parse(name, &kernel) && kernel != RF_INT8_AMX_MODEL &&
            rf_int8_kernel_set(kernel)) {
            int8_source = source;
            return RF_OK;
        }
        int8_builds(builds, sizeof builds);
        return rf_fail(err, RF_ERR_UNSUPPORTED, "%s: no int8 build '%s' on this CPU (it runs: %s%s%s)",
                       source, name, builds[0] ? builds : "none",
                       !strcmp(name, "amx") ? "; AMX: " : "", !strcmp(name, "amx") ? rf_amx_reason() : "");
    }
    if (!strcmp(type, "bf16")) {
        rf_bf16_kernel kernel;
        if (rf_bf16_kernel_parse(name, &kernel) && kernel != RF_BF16_AMX_MODEL &&
            rf_bf16_kernel_set(kernel)) {
            bf16_source = source;
            return RF_OK;
        }
        char builds[96];
        size_t n = 0;
        builds[0] = '\0';
        for (int k = 0; k < RF_BF16_KERNEL_COUNT; k++)
            if (k != RF_BF16_AMX_MODEL && rf_bf16_kernel_runs((rf_bf16_kernel)k))
                n += (size_t)snprintf(builds + n, n < sizeof builds ? sizeof builds - n : 0, "%s%s",
                                      n ? ", " : "", rf_bf16_kernel_name((rf_bf16_kernel)k));
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
    info.int8 = rf_int8_supported() ? rf_int8_kernel_name(rf_int8_kernel_get()) : "none";
    info.int8_chosen_by = int8_source;
    info.attention = rf_attention_in_bf16() ? "bf16" : "f32";
    info.bf16 = rf_bf16_supported() ? rf_bf16_kernel_name(rf_bf16_kernel_get()) : "none";
    info.bf16_chosen_by = bf16_source ? bf16_source : rf_bf16_kernel_reason();
    info.amx = rf_amx_reason();
    return info;
}
