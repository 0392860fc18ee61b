/*
 * fuzz.h — what the fuzz targets share: the libFuzzer entry points and
 * fuzz_touch(), which reads every byte of a region a parser handed back so
 * that AddressSanitizer sees any pointer or size that strays outside the
 * input.
 *
 * Each tests/fuzz/fuzz_<target>.c defines LLVMFuzzerTestOneInput (and
 * LLVMFuzzerInitialize when it needs set-up). It is linked either with
 * libFuzzer (`make fuzz`, clang) or with replay.c, a plain main that runs
 * the committed corpus and regression inputs in `make test`.
 */
#ifndef RF_FUZZ_H
#define RF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Broken invariant: stop the way a sanitizer would, so the input is kept. */
#define FUZZ_ASSERT(cond)      \
    do {                       \
        if (!(cond))           \
            abort();           \
    } while (0)

static inline void fuzz_touch(const void *p, size_t n)
{
    const volatile uint8_t *b = p;
    uint8_t x = 0;
    for (size_t i = 0; i < n; i++)
        x ^= b[i];
    (void)x;
}

#endif
