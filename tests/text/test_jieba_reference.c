/*
 * test_jieba_reference.c — jieba segmentation against jieba-rs 0.10.3
 * `cut(text, false)` on every text of ../shared/reference/jieba/cases.jsonl,
 * with the jieba dictionary python3-jieba installs (the same entries as
 * jieba-rs's). Also reports how long building the dictionary takes.
 */
#include "../check.h"
#include "text/jieba_cut.h"
#include "../tokenizer_fixture.h"

#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    const char *ref = check_reference();
    const char *dict_path = fixture_jieba_dict();
    if (!ref || !dict_path) {
        SKIP("%s not found", ref ? "jieba dict.txt (python3-jieba or $ROFORMER_JIEBA_DICT)"
                                 : "../shared/reference (or $ROFORMER_REFERENCE)");
        return check_done();
    }
    fixture fx;
    memset(&fx, 0, sizeof fx);
    size_t dlen;
    fx.dict_buf = fixture_read(dict_path, &dlen);
    CHECK(fx.dict_buf && fixture_split_dict(&fx, dlen) == 0, "read %s", dict_path);
    rf_jieba_dict dict;
    rf_error err;
    double t0 = now();
    rf_status st = rf_jieba_dict_init(&dict, fx.words, fx.word_len, fx.freq, fx.n_words, &err);
    double ms = (now() - t0) * 1e3;
    CHECK(st == RF_OK, "dictionary: %s", err.message);
    printf("jieba dictionary: %d entries, %d distinct, total %llu, built in %.1f ms\n", fx.n_words,
           dict.n_words, (unsigned long long)dict.total, ms);
    CHECK(dict.n_words == 349045, "distinct words %d", dict.n_words);

    char path[4096];
    snprintf(path, sizeof path, "%s/jieba/cases.jsonl", ref);
    size_t len;
    char *data = fixture_read(path, &len);
    CHECK(data != NULL, "read %s", path);
    int cases = 0, failed = 0;
    rf_jieba_words words = {0};
    for (char *line = data, *nl; data && line < data + len; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            nl = data + len;
        *nl = '\0';
        cJSON *c = fixture_parse(line);
        if (!c)
            continue;
        cases++;
        size_t tlen = 0;
        const char *text = fixture_text(cJSON_GetObjectItem(c, "text"), &tlen);
        cJSON *want = cJSON_GetObjectItem(c, "words");
        words.n = 0;
        int ok = text && rf_jieba_cut(&dict, text, tlen, &words, &err) == RF_OK &&
                 (size_t)cJSON_GetArraySize(want) == words.n;
        for (size_t i = 0; ok && i < words.n; i++) {
            size_t wlen = 0;
            const char *w = fixture_text(cJSON_GetArrayItem(want, (int)i), &wlen);
            ok = w && wlen == words.words[i].len && !memcmp(w, text + words.words[i].off, wlen);
        }
        if (!ok && failed++ < 5)
            fprintf(stderr, "  %s differs\n", cJSON_GetObjectItem(c, "id")->valuestring);
        CHECK(ok, "jieba case %s", cJSON_GetObjectItem(c, "id")->valuestring);
        cJSON_Delete(c);
    }
    printf("%s: %d/%d cases identical\n", path, cases - failed, cases);
    CHECK(cases == 791, "read %d cases", cases);
    rf_jieba_words_release(&words);
    rf_jieba_dict_release(&dict);
    free(data);
    fixture_free(&fx);
    return check_done();
}
