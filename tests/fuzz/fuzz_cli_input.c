/*
 * fuzz_cli_input.c — the CLI's line reader (tools/roformer/cli_input.c):
 * arbitrary bytes as stdin, split into lines, JSON objects parsed with
 * their "\u0000" escapes kept, the fields "text" and "text_pair" read
 * back. Every line must come back NUL-terminated at its length, and no
 * field may be longer than its line.
 */
#include "cli_input.h"
#include "fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer */
    FILE *f = fmemopen((void *)data, size, "r");
    FUZZ_ASSERT(f);
    cli_input in = {0};
    long lines = 0;
    while (cli_input_next(&in, f)) {
        FUZZ_ASSERT(in.line_no == ++lines);
        FUZZ_ASSERT(in.line[in.len] == '\0' && in.len <= size);
        if (in.bad)
            FUZZ_ASSERT(in.error[0] && !in.json);
        if (!in.is_json || in.bad)
            continue;
        static const char *const names[] = {"text", "text_pair"};
        for (int k = 0; k < 2; k++) {
            const char *text;
            size_t len;
            if (cli_input_field(&in, names[k], &text, &len) == 1) {
                FUZZ_ASSERT(len <= in.len);
                fuzz_touch(text, len);
            }
        }
    }
    cli_input_free(&in);
    fclose(f);
    return 0;
}
