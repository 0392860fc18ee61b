/*
 * fuzz_cli_input.c — the CLI's record reader (tools/roformer/input.c):
 * arbitrary bytes as the input stream, split into lines, JSON objects
 * parsed with their "\u0000" escapes kept, plain lines split at TABs, a
 * small line cap. Records must be numbered in order; a failed record has
 * an error and no fields; every field comes back NUL-terminated at its
 * length and no longer than the input.
 */
#include "fuzz.h"
#include "input.h"

#include <stdio.h>
#include <string.h>

static void read_all(const uint8_t *data, size_t size, const cli_input_spec *spec)
{
    FILE *f = fmemopen((void *)data, size, "r");
    FUZZ_ASSERT(f);
    cli_reader *in = cli_reader_open_stream(spec, f, "<fuzz>");
    FUZZ_ASSERT(in);
    cli_record rec;
    long lines = 0;
    int got;
    while ((got = cli_reader_next(in, &rec)) == 1) {
        FUZZ_ASSERT(rec.line == ++lines);
        if (rec.error) {
            FUZZ_ASSERT(rec.error[0] && !rec.json && !rec.field[0]);
        } else {
            for (int k = 0; k < spec->n_fields; k++) {
                if (!rec.field[k])
                    continue;
                FUZZ_ASSERT(rec.len[k] <= size && rec.field[k][rec.len[k]] == '\0');
                fuzz_touch(rec.field[k], rec.len[k]);
            }
            for (int k = 0; k < spec->n_required; k++)
                FUZZ_ASSERT(rec.field[k]);
        }
        cli_record_free(&rec);
    }
    FUZZ_ASSERT(got == 0);
    cli_reader_close(in);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer */
    /* One text (classify, embed, tokenize) and two TAB-separated ones (qa). */
    static const cli_input_spec text = {.names = {"text", "text_pair"}, .n_fields = 2,
                                        .n_required = 1, .tab_fields = 1, .max_line = 4096};
    static const cli_input_spec pair = {.names = {"question", "context"}, .n_fields = 2,
                                        .n_required = 2, .tab_fields = 2, .max_line = 4096};
    read_all(data, size, &text);
    read_all(data, size, &pair);
    return 0;
}
