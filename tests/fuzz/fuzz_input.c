/*
 * fuzz_input.c — the CLI's record reader (tools/roformer/input.c), which
 * every command that reads lines goes through: arbitrary bytes as the
 * input stream, split into lines, JSON objects parsed with their "\u0000"
 * escapes kept, plain lines split at TABs, the line-length cap.
 *
 * The first byte picks the field spec (bits 0..1: one text with an
 * optional pair as tokenize/classify/embed read it, question<TAB>context
 * as qa does, or A<TAB>B<TAB>C as scm does) and the line cap (bits 2..7,
 * in units of 16 bytes; 0 = the 1 MiB default), so that the too-long path
 * is reached; the rest is the stream. Records must be numbered in order;
 * a failed record has an error and no fields; every field comes back
 * NUL-terminated at its length, valid UTF-8, and no longer than the cap.
 */
#include "fuzz.h"
#include "input.h"
#include "roformer.h" /* rf_utf8_validate */

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0; /* fmemopen refuses an empty buffer */
    static const cli_input_spec specs[4] = {
        {.names = {"text", "text_pair"}, .n_fields = 2, .n_required = 1, .tab_fields = 1},
        {.names = {"question", "context"}, .n_fields = 2, .n_required = 2, .tab_fields = 2},
        {.names = {"A", "B", "C", "label"}, .n_fields = 4, .n_required = 3, .tab_fields = 3},
        {.names = {"text", "text_pair"}, .n_fields = 2, .n_required = 1, .tab_fields = 1},
    };
    cli_input_spec spec = specs[data[0] & 3];
    spec.max_line = (data[0] >> 2) ? (size_t)(data[0] >> 2) * 16 : CLI_DEFAULT_MAX_LINE;
    FILE *f = fmemopen((void *)(data + 1), size - 1, "r");
    FUZZ_ASSERT(f);
    cli_reader *in = cli_reader_open_stream(&spec, f, "<fuzz>");
    FUZZ_ASSERT(in);
    cli_record rec;
    long lines = 0;
    int got;
    while ((got = cli_reader_next(in, &rec)) == 1) {
        FUZZ_ASSERT(rec.line == ++lines);
        if (rec.error) {
            FUZZ_ASSERT(rec.error[0] && !rec.json && !rec.field[0]);
        } else {
            for (int k = 0; k < spec.n_required; k++)
                FUZZ_ASSERT(rec.field[k] != NULL);
            for (int k = 0; k < CLI_MAX_FIELDS; k++) {
                if (!rec.field[k])
                    continue;
                FUZZ_ASSERT(rec.len[k] <= spec.max_line && rec.field[k][rec.len[k]] == '\0');
                FUZZ_ASSERT(rf_utf8_validate(rec.field[k], rec.len[k], NULL));
            }
        }
        cli_record_free(&rec);
    }
    FUZZ_ASSERT(got == 0);
    cli_reader_close(in);
    fclose(f);
    return 0;
}
