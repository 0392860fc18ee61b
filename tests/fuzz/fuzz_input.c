/*
 * fuzz_input.c — the record reader of the job commands
 * (tools/roformer/input.c): lines of arbitrary bytes, JSON objects with
 * named fields, TAB-separated plain text, the line-length cap.
 *
 * The input's first byte picks the field spec (one field "text" + optional
 * "text_pair", or three TAB-separated fields as scm reads them) and a small
 * line cap (bits 2..7, in units of 16 bytes; 0 = 1 MiB), so that the
 * too-long path is reached; the rest is fed as the file. Every record must
 * have either an error or its required fields, each NUL-terminated at its
 * length and valid UTF-8.
 */
#include "fuzz.h"
#include "input.h"
#include "utf8.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static const cli_input_spec specs[2] = {
        {.names = {"text", "text_pair"}, .n_fields = 2, .n_required = 1, .tab_fields = 1},
        {.names = {"A", "B", "C", "label"}, .n_fields = 4, .n_required = 3, .tab_fields = 3},
    };
    cli_input_spec spec = specs[data[0] & 1];
    spec.max_line = (data[0] >> 2) ? (size_t)(data[0] >> 2) * 16 : (size_t)1 << 20;
    int fd = memfd_create("fuzz-input", 0);
    FUZZ_ASSERT(fd >= 0);
    FUZZ_ASSERT(write(fd, data + 1, size - 1) == (ssize_t)(size - 1));
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    cli_reader *in = cli_reader_open(&spec, path, NULL, 0);
    FUZZ_ASSERT(in);
    cli_record rec;
    long line = 0;
    while (cli_reader_next(in, &rec) == 1) {
        FUZZ_ASSERT(rec.line == ++line);
        if (!rec.error) {
            for (int k = 0; k < spec.n_required; k++)
                FUZZ_ASSERT(rec.field[k] != NULL);
            for (int k = 0; k < CLI_MAX_FIELDS; k++) {
                if (!rec.field[k])
                    continue;
                FUZZ_ASSERT(rec.field[k][rec.len[k]] == '\0');
                FUZZ_ASSERT(rf_utf8_validate(rec.field[k], rec.len[k], NULL));
                FUZZ_ASSERT(rec.len[k] <= spec.max_line);
            }
        }
        cli_record_free(&rec);
    }
    cli_reader_close(in);
    close(fd);
    return 0;
}
