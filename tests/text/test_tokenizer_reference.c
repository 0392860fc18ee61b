/*
 * test_tokenizer_reference.c — the tokenizer against HF's own output:
 * ../shared/reference/tokenizer/cases.jsonl (RoFormerTokenizer, WoBERT
 * vocab + jieba) and cases_bert_char.jsonl (BertTokenizer, char vocab).
 * For every case: the full tokens of each text, and input_ids /
 * token_type_ids / attention_mask with truncation when max_length is given.
 * Token spans are checked to lie inside their text, in order. Cases with
 * max_length are also truncated on the left (HF truncation_side="left"):
 * each text keeps the same number of tokens as HF kept, from its end.
 */
#include "../check.h"
#include "../tokenizer_fixture.h"


/* The tokens of `type` in e are the last `keep` of HF's full token list
 * `want`: what truncation_side="left" keeps. */
static int tail_equal(const fixture *fx, const rf_encoding *e, int32_t type, const cJSON *want,
                      int keep)
{
    int n = cJSON_GetArraySize(want), i = n - keep, seen = 0;
    for (int32_t k = 0; k < e->n; k++) {
        if (e->type_ids[k] != type || e->start[k] < 0)
            continue;
        const cJSON *w = cJSON_GetArrayItem(want, i++);
        uint32_t len;
        const char *s = rf_tokenizer_token(fx->tok, e->ids[k], &len);
        seen++;
        if (!cJSON_IsString(w) || !s || strlen(w->valuestring) != len || memcmp(s, w->valuestring, len))
            return 0;
    }
    return seen == keep;
}

static int tokens_equal(const fixture *fx, const rf_encoding *e, int32_t type, const cJSON *want)
{
    return tail_equal(fx, e, type, want, cJSON_GetArraySize(want));
}

static int ints_equal(const int32_t *got, int32_t n, const cJSON *want)
{
    if (cJSON_GetArraySize(want) != n)
        return 0;
    for (int32_t i = 0; i < n; i++)
        if (cJSON_GetArrayItem(want, i)->valueint != got[i])
            return 0;
    return 1;
}

/* Spans lie inside their text, in order; and where a token's source text
 * is printable ASCII or CJK (no normalisation at play), the token is that
 * text, or that text lower-cased (without "##"). */
static int spans_ok(const fixture *fx, const rf_encoding *e, const char *a, size_t la, const char *b,
                    size_t lb)
{
    int32_t last[2] = {0, 0};
    for (int32_t k = 0; k < e->n; k++) {
        if (e->start[k] < 0)
            continue;
        int32_t t = e->type_ids[k];
        size_t len = t ? lb : la;
        const char *text = t ? b : a;
        if (e->start[k] < last[t] || e->end[k] <= e->start[k] || (size_t)e->end[k] > len)
            return 0;
        last[t] = e->start[k];
        uint32_t n;
        const char *tok = rf_tokenizer_token(fx->tok, e->ids[k], &n);
        if (n >= 2 && !memcmp(tok, "##", 2)) {
            tok += 2;
            n -= 2;
        }
        const unsigned char *src = (const unsigned char *)text + e->start[k];
        size_t sn = (size_t)(e->end[k] - e->start[k]);
        bool plain = true;
        for (size_t i = 0; i < sn && plain; i++)
            plain = (src[i] >= 0x21 && src[i] < 0x7F) || (src[i] >= 0xE4 && src[i] <= 0xE9) ||
                    (src[i] >= 0x80 && src[i] < 0xC0 && i > 0 && src[0] >= 0xE4 && src[0] <= 0xE9);
        if (!plain || e->ids[k] == fx->unk_id || (sn == n && !memcmp(src, tok, n)))
            continue; /* (literal special tokens keep their case) */
        if (sn != n)
            return 0;
        for (size_t i = 0; i < sn; i++) {
            unsigned char c = src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i];
            if (c != (unsigned char)tok[i])
                return 0;
        }
    }
    return 1;
}

/* Left truncation of a case HF truncated on the right: each text keeps as
 * many tokens as HF's input_ids hold of it (type 0 less [CLS] and [SEP],
 * type 1 less its [SEP]), taken from the end of HF's full token list. */
static int left_truncation_ok(const fixture *fx, const cJSON *c, const char *text, size_t la,
                              const char *pair, size_t lb, int32_t max_length, rf_encoding *enc)
{
    rf_error err;
    int count[2] = {0, 0};
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(c, "token_type_ids")) count[t->valueint != 0]++;
    if (rf_tokenizer_encode_side(fx->tok, text, la, pair, lb, max_length, RF_TRUNCATE_LEFT, enc,
                                 &err) != RF_OK)
        return 0;
    return enc->n == count[0] + count[1] &&
           tail_equal(fx, enc, 0, cJSON_GetObjectItem(c, "tokens"), count[0] - 2) &&
           (!pair || tail_equal(fx, enc, 1, cJSON_GetObjectItem(c, "tokens_pair"), count[1] - 1)) &&
           spans_ok(fx, enc, text, la, pair, lb);
}

static void run_cases(const fixture *fx, const char *path)
{
    size_t len;
    char *data = fixture_read(path, &len);
    if (!data) { /* the reference directory is there: a fixture missing from it fails */
        CHECK(0, "%s not readable", path);
        return;
    }
    int cases = 0, failed = 0, left = 0;
    rf_encoding full = {0}, enc = {0};
    rf_error err;
    for (char *line = data, *nl; line < data + len; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            nl = data + len;
        *nl = '\0';
        cJSON *c = fixture_parse(line);
        if (!c)
            continue;
        cases++;
        const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
        size_t la = 0, lb = 0;
        const char *text = fixture_text(cJSON_GetObjectItem(c, "text"), &la);
        const char *pair = fixture_text(cJSON_GetObjectItem(c, "text_pair"), &lb);
        const cJSON *ml = cJSON_GetObjectItem(c, "max_length");
        int32_t max_length = cJSON_IsNumber(ml) ? ml->valueint : 0;

        rf_status st = rf_tokenizer_encode(fx->tok, text, la, pair, lb, 0, &full, &err);
        int ok = st == RF_OK && tokens_equal(fx, &full, 0, cJSON_GetObjectItem(c, "tokens")) &&
                 (!pair || tokens_equal(fx, &full, 1, cJSON_GetObjectItem(c, "tokens_pair"))) &&
                 spans_ok(fx, &full, text, la, pair, lb);
        if (ok && max_length) {
            st = rf_tokenizer_encode(fx->tok, text, la, pair, lb, max_length, &enc, &err);
            ok = st == RF_OK;
        } else if (ok) {
            enc.n = 0; /* the untruncated encoding is the expected one */
        }
        const rf_encoding *e = max_length ? &enc : &full;
        ok = ok && ints_equal(e->ids, e->n, cJSON_GetObjectItem(c, "input_ids")) &&
             ints_equal(e->type_ids, e->n, cJSON_GetObjectItem(c, "token_type_ids")) &&
             ints_equal(e->mask, e->n, cJSON_GetObjectItem(c, "attention_mask"));
        if (!ok) {
            if (failed++ < 5)
                fprintf(stderr, "  %s: case %s differs (status %d)\n", path, id, st);
        }
        CHECK(ok, "%s case %s", path, id);
        if (max_length) {
            left++;
            CHECK(left_truncation_ok(fx, c, text, la, pair, lb, max_length, &enc),
                  "%s case %s truncated on the left", path, id);
        }
        cJSON_Delete(c);
    }
    printf("%s: %d/%d cases exact, %d of them also truncated on the left\n", path,
           cases - failed, cases, left);
    CHECK(cases > 600, "%s: only %d cases read", path, cases);
    rf_encoding_free(&full);
    rf_encoding_free(&enc);
    free(data);
}

int main(void)
{
    const char *ref = check_reference();
    const char *dict = fixture_jieba_dict();
    if (!ref) {
        SKIP("../shared/reference (or $ROFORMER_REFERENCE) not found");
        return check_done();
    }
    char path[4096], vocab[4096];
    if (!dict) {
        SKIP("jieba dict.txt not found (install python3-jieba or set ROFORMER_JIEBA_DICT)");
    } else {
        fixture fx;
        snprintf(vocab, sizeof vocab, "%s/vocab/wobert_vocab.txt", ref);
        CHECK(fixture_load(&fx, vocab, dict, RF_TOKENIZER_WOBERT) == 0, "load %s", vocab);
        if (fx.tok) {
            snprintf(path, sizeof path, "%s/tokenizer/cases.jsonl", ref);
            run_cases(&fx, path);
        }
        fixture_free(&fx);
    }
    fixture fx;
    snprintf(vocab, sizeof vocab, "%s/models/tiny-char-proj/vocab.txt", ref);
    CHECK(fixture_load(&fx, vocab, NULL, RF_TOKENIZER_BERT) == 0, "load %s", vocab);
    if (fx.tok) {
        snprintf(path, sizeof path, "%s/tokenizer/cases_bert_char.jsonl", ref);
        run_cases(&fx, path);
    }
    fixture_free(&fx);
    return check_done();
}
