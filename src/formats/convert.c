/*
 * convert.c — HuggingFace RoFormer checkpoint directory -> one GGUF file.
 *
 * Reads config.json, tokenizer_config.json (optional), vocab.txt, the
 * weights (model.safetensors, else pytorch_model.bin), for word-level
 * (wobert) models the jieba dictionary and, in a sentence-transformers
 * folder (modules.json present), its module files (st_config.c); writes
 * metadata, vocab, dictionary
 * and tensors in the fixed order of tensor_map.c. Nothing that names or
 * dates the source goes into the file, so the same weights always give the
 * same bytes, whichever checkpoint format they came in.
 *
 * HF details handled here (transformers v4.40):
 *  - the MLM decoder is tied to the word embeddings unless the checkpoint
 *    carries a cls.predictions.decoder.weight that differs from them;
 *    cls.predictions.decoder.bias is the same parameter as cls.predictions.bias;
 *  - encoder.embed_positions.weight is the fixed sinusoidal table, rebuilt
 *    by the engine, so it is not stored;
 *  - RoFormerModel checkpoints name base tensors without "roformer.".
 * RoFormer-v2 checkpoints (config.json norm_type other than "layer_norm";
 * JunnYu/RoFormer_pytorch's `roformer` package) have no norm tensors, no
 * encoder biases when use_bias is false, and an MLM head that is the
 * decoder weight alone, tied to the word embeddings like v1's: absent from
 * model.safetensors, a copy of them in pytorch_model.bin.
 */
#include "formats/convert.h"

#include "formats/checkpoint_open.h"
#include "base/error.h"
#include "kernels/fp16.h"
#include "kernels/widen.h"
#include "formats/hf_config.h"
#include "formats/st_config.h"
#include "formats/tensor_map.h"
#include "kernels/gemm_int8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utf8proc.h>

#define MAX_JSON_FILE (16u << 20)
#define MAX_VOCAB_FILE (256u << 20)
#define MAX_DICT_FILE (1u << 30)

rf_convert_params rf_convert_default_params(void)
{
    rf_convert_params p = {RF_DTYPE_F32, NULL, RF_TOKENIZER_AUTO, RF_POOLER_ACT_AUTO};
    return p;
}

/* ==== Reading the text files ==== */

/* Reads a whole file, NUL-terminated. A missing file is RF_ERR_IO with
 * *missing set (when `missing` is not NULL). */
static rf_status read_text(const char *path, size_t max, char **out, size_t *len, bool *missing,
                           rf_error *err)
{
    FILE *f = fopen(path, "rb");
    struct stat sb;
    rf_status st = RF_OK;
    *out = NULL;
    if (missing)
        *missing = !f && errno == ENOENT;
    if (!f)
        return rf_fail(err, RF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = rf_fail(err, RF_ERR_IO, "%s: not a regular file", path);
        goto done;
    }
    if ((uint64_t)sb.st_size > max) {
        st = rf_fail(err, RF_ERR_LIMIT, "%s: %lld bytes exceeds the limit of %zu", path,
                     (long long)sb.st_size, max);
        goto done;
    }
    size_t n = (size_t)sb.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        st = rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    if (fread(buf, 1, n, f) != n) {
        free(buf);
        st = rf_fail(err, RF_ERR_IO, "%s: read failed", path);
        goto done;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
done:
    fclose(f);
    return st;
}

static bool valid_utf8(const char *s, size_t n)
{
    utf8proc_int32_t cp;
    for (size_t i = 0; i < n;) {
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0)
            return false;
        i += (size_t)k;
    }
    return true;
}

typedef struct {
    const char **ptr;
    uint32_t *len;
    uint32_t *freq; /* jieba dictionary only */
    int32_t n, cap;
} str_list;

static bool list_push(str_list *l, const char *p, size_t n, uint32_t freq, bool with_freq)
{
    if (l->n == l->cap) {
        int32_t cap = l->cap ? 2 * l->cap : 1024;
        const char **ptr = realloc(l->ptr, (size_t)cap * sizeof *ptr);
        if (ptr)
            l->ptr = ptr;
        uint32_t *len = realloc(l->len, (size_t)cap * sizeof *len);
        if (len)
            l->len = len;
        uint32_t *fr = with_freq ? realloc(l->freq, (size_t)cap * sizeof *fr) : NULL;
        if (fr)
            l->freq = fr;
        if (!ptr || !len || (with_freq && !fr))
            return false;
        l->cap = cap;
    }
    l->ptr[l->n] = p;
    l->len[l->n] = (uint32_t)n;
    if (with_freq)
        l->freq[l->n] = freq;
    l->n++;
    return true;
}

static void list_free(str_list *l)
{
    free(l->ptr);
    free(l->len);
    free(l->freq);
}

/* vocab.txt: one token per line, as HF's load_vocab reads it (text mode,
 * so "\r\n" and "\r" end lines too; the line break is removed, nothing else). */
static rf_status parse_vocab(const char *text, size_t n, const char *path, str_list *out,
                             rf_error *err)
{
    size_t i = 0;
    int32_t line = 1;
    while (i < n) {
        size_t j = i;
        while (j < n && text[j] != '\n' && text[j] != '\r')
            j++;
        if (!valid_utf8(text + i, j - i))
            return rf_fail(err, RF_ERR_FORMAT, "%s:%d: invalid UTF-8", path, line);
        if (j - i > 65535)
            return rf_fail(err, RF_ERR_LIMIT, "%s:%d: token longer than 65535 bytes", path, line);
        if (!list_push(out, text + i, j - i, 0, false))
            return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", path);
        if (j < n && text[j] == '\r' && j + 1 < n && text[j + 1] == '\n')
            j++;
        i = j + 1;
        line++;
    }
    return RF_OK;
}

/* jieba dict.txt: "word freq [tag]" per line, as jieba's gen_pfdict reads
 * it (line stripped of surrounding whitespace, split on ' '). Empty lines
 * are skipped. */
static rf_status parse_dict(const char *text, size_t n, const char *path, str_list *out,
                            rf_error *err)
{
    size_t i = 0;
    int32_t line = 0;
    if (n >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) /* BOM */
        i = 3;
    while (i < n) {
        size_t j = i;
        line++;
        while (j < n && text[j] != '\n')
            j++;
        size_t next = j + 1, a = i, b = j;
        while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r'))
            a++;
        while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r'))
            b--;
        i = next;
        if (a == b)
            continue;
        size_t w = a;
        while (w < b && text[w] != ' ')
            w++;
        size_t f = w + 1;
        uint64_t freq = 0;
        size_t k = f;
        while (k < b && text[k] >= '0' && text[k] <= '9' && freq <= UINT32_MAX)
            freq = freq * 10 + (uint64_t)(text[k++] - '0');
        if (w >= b || k == f || (k < b && text[k] != ' ') || freq > UINT32_MAX)
            return rf_fail(err, RF_ERR_FORMAT, "%s:%d: expected 'word frequency [tag]'", path, line);
        if (!valid_utf8(text + a, w - a))
            return rf_fail(err, RF_ERR_FORMAT, "%s:%d: invalid UTF-8", path, line);
        if (w - a > 65535)
            return rf_fail(err, RF_ERR_LIMIT, "%s:%d: word longer than 65535 bytes", path, line);
        if (!list_push(out, text + a, w - a, (uint32_t)freq, true))
            return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", path);
    }
    return RF_OK;
}

/* ==== The conversion ==== */

typedef struct {
    const char *dir;
    const rf_convert_params *params;
    rf_hf_config cfg;
    rf_sentence_config sentence; /* present: a sentence-transformers folder */
    char *config_text, *tok_text, *vocab_text, *dict_text;
    str_list vocab, dict;
    char *ck_path;
    rf_checkpoint *ck;
    const char *prefix;   /* "roformer." or "" */
    bool *used;           /* [ck->n]: consumed checkpoint tensors */
    rf_gguf_writer *w;
    rf_error *err;
} converter;

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* Reads DIR/name; *text stays NULL when the file is optional and absent. */
static rf_status read_dir_file(converter *c, const char *name, size_t max, bool optional,
                               char **text, size_t *len)
{
    char *path = join(c->dir, name);
    bool missing = false;
    rf_error why;
    rf_status st;
    if (!path)
        return rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
    /* an optional file's absence is no failure: the caller's rf_error is
       written only when the call fails */
    st = read_text(path, max, text, len, &missing, &why);
    if (st && missing && optional)
        st = RF_OK;
    else if (st && c->err)
        *c->err = why;
    free(path);
    return st;
}

static rf_status load_config(converter *c)
{
    size_t config_len = 0, tok_len = 0;
    rf_status st;
    char *config_path = join(c->dir, "config.json"), *tok_path = join(c->dir, "tokenizer_config.json");
    if (!config_path || !tok_path) {
        st = rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = read_dir_file(c, "config.json", MAX_JSON_FILE, false, &c->config_text, &config_len)) ||
        (st = read_dir_file(c, "tokenizer_config.json", MAX_JSON_FILE, true, &c->tok_text, &tok_len)))
        goto done;
    st = rf_hf_config_parse(c->config_text, config_len, config_path, c->tok_text, tok_len, tok_path,
                            c->params->tokenizer, &c->cfg, c->err);
done:
    free(config_path);
    free(tok_path);
    return st;
}

/* modules.json and the files it leads to, when the folder has it. */
static rf_status load_sentence_config(converter *c)
{
    static const char *const names[] = {"modules.json", NULL, "sentence_bert_config.json",
                                        "config_sentence_transformers.json"};
    char *text[4] = {NULL}, *path[4] = {NULL}, *pooling_dir = NULL;
    size_t len[4] = {0};
    bool normalize = false;
    rf_status st = RF_OK;
    if ((st = read_dir_file(c, names[0], MAX_JSON_FILE, true, &text[0], &len[0])) || !text[0])
        goto done;
    if (!(path[0] = join(c->dir, names[0]))) {
        st = rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
        goto done;
    }
    rf_json_text modules = {text[0], len[0], path[0]};
    if ((st = rf_st_modules_parse(&modules, &pooling_dir, &normalize, c->err)))
        goto done;
    char pooling_name[300];
    snprintf(pooling_name, sizeof pooling_name, "%s/config.json", pooling_dir);
    for (int i = 1; i < 4; i++) {
        const char *name = i == 1 ? pooling_name : names[i];
        if (!(path[i] = join(c->dir, name))) {
            st = rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
            goto done;
        }
        if ((st = read_dir_file(c, name, MAX_JSON_FILE, i > 1, &text[i], &len[i])))
            goto done;
    }
    rf_json_text pooling = {text[1], len[1], path[1]}, sbert = {text[2], len[2], path[2]},
                 prompts = {text[3], len[3], path[3]};
    const rf_hparams *hp = &c->cfg.hp;
    if ((st = rf_st_config_parse(&pooling, &sbert, &prompts, normalize, hp->hidden_size,
                                 hp->max_position, &c->sentence, c->err)))
        goto done;
    if (c->sentence.do_lower_case && !hp->do_lower_case)
        st = rf_fail(c->err, RF_ERR_UNSUPPORTED,
                     "%s: do_lower_case true, but the tokenizer keeps case (tokenizer_config.json); "
                     "lower-casing before a cased tokenizer is not supported", path[2]);
done:
    for (int i = 0; i < 4; i++) {
        free(text[i]);
        free(path[i]);
    }
    free(pooling_dir);
    return st;
}

static rf_status load_vocab(converter *c)
{
    size_t len;
    char *path = join(c->dir, "vocab.txt");
    rf_hparams *hp = &c->cfg.hp;
    int32_t *ids[RF_SPECIAL_COUNT] = {&hp->pad_id, &hp->unk_id, &hp->cls_id, &hp->sep_id,
                                      &hp->mask_id};
    rf_status st;
    if (!path)
        return rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
    if ((st = read_text(path, MAX_VOCAB_FILE, &c->vocab_text, &len, NULL, c->err)) ||
        (st = parse_vocab(c->vocab_text, len, path, &c->vocab, c->err)))
        goto done;
    if (c->vocab.n == 0 || c->vocab.n > hp->vocab_size) {
        st = rf_fail(c->err, RF_ERR_SHAPE, "%s: %d tokens, but config.json says vocab_size %d", path,
                     c->vocab.n, hp->vocab_size);
        goto done;
    }
    /* HF's vocab dict keeps the last line of a repeated token */
    for (int s = 0; s < RF_SPECIAL_COUNT; s++) {
        const char *tok = c->cfg.special[s];
        size_t n = strlen(tok);
        *ids[s] = -1;
        for (int32_t i = c->vocab.n - 1; i >= 0 && *ids[s] < 0; i--)
            if (c->vocab.len[i] == n && !memcmp(c->vocab.ptr[i], tok, n))
                *ids[s] = i;
        if (*ids[s] < 0) {
            st = rf_fail(c->err, RF_ERR_FORMAT, "%s: special token '%s' is not in the vocab", path, tok);
            goto done;
        }
    }
done:
    free(path);
    return st;
}

static rf_status load_dict(converter *c)
{
    const char *path = c->params->jieba_dict ? c->params->jieba_dict : RF_DEFAULT_JIEBA_DICT;
    size_t len;
    rf_status st;
    if (c->cfg.hp.tokenizer != RF_TOKENIZER_WOBERT)
        return RF_OK;
    if ((st = read_text(path, MAX_DICT_FILE, &c->dict_text, &len, NULL, c->err)))
        return st;
    if ((st = parse_dict(c->dict_text, len, path, &c->dict, c->err)))
        return st;
    if (c->dict.n == 0)
        return rf_fail(c->err, RF_ERR_FORMAT, "%s: empty jieba dictionary", path);
    return RF_OK;
}

static rf_status open_checkpoint(converter *c)
{
    static const char *const names[] = {"model.safetensors", "pytorch_model.bin"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct stat sb;
        char *path = join(c->dir, names[i]);
        if (!path)
            return rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
        if (stat(path, &sb) == 0) {
            c->ck_path = path;
            rf_status st = rf_checkpoint_open(path, &c->ck, c->err);
            if (!st && !(c->used = calloc((size_t)c->ck->n + 1, sizeof *c->used)))
                st = rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
            return st;
        }
        free(path);
    }
    static const char *const indexes[] = {"model.safetensors.index.json",
                                          "pytorch_model.bin.index.json"};
    for (size_t i = 0; i < sizeof indexes / sizeof indexes[0]; i++) {
        struct stat sb;
        char *path = join(c->dir, indexes[i]);
        bool sharded = path && stat(path, &sb) == 0;
        free(path);
        if (sharded)
            return rf_fail(c->err, RF_ERR_UNSUPPORTED,
                           "%s: sharded checkpoints (%s) are not supported; save the model as one file",
                           c->dir, indexes[i]);
    }
    return rf_fail(c->err, RF_ERR_IO, "%s: no model.safetensors or pytorch_model.bin", c->dir);
}

/* Looks up an HF tensor, with the base-model prefix when `base`. */
static const rf_ck_tensor *find(converter *c, const char *hf, bool base)
{
    char name[160];
    snprintf(name, sizeof name, "%s%s", base ? c->prefix : "", hf);
    return rf_checkpoint_find(c->ck, name);
}

static void mark_used(converter *c, const rf_ck_tensor *t)
{
    if (t)
        c->used[t - c->ck->tensors] = true;
}

/* Without "architectures" in config.json, the head is the one whose
 * tensors the checkpoint carries; classification heads then get as many
 * LABEL_i labels as the classifier has rows. */
static rf_status infer_head(converter *c)
{
    rf_hparams *hp = &c->cfg.hp;
    const rf_ck_tensor *t = NULL;
    if (c->cfg.has_architecture)
        return RF_OK;
    if (find(c, "cls.predictions.bias", false) || find(c, "cls.predictions.decoder.weight", false))
        hp->head = RF_HEAD_MLM;
    else if (find(c, "qa_outputs.weight", false))
        hp->head = RF_HEAD_QA;
    else if ((t = find(c, "classifier.out_proj.weight", false)))
        hp->head = RF_HEAD_SEQ_CLS;
    else if ((t = find(c, "classifier.weight", false)))
        hp->head = RF_HEAD_TOKEN_CLS;
    if (!t || hp->num_labels > 0)
        return RF_OK;
    if (t->n_dims != 2 || t->shape[0] < 1 || t->shape[0] > 65536)
        return rf_fail(c->err, RF_ERR_SHAPE, "%s: tensor '%s' is not a classifier matrix", c->ck_path,
                       t->name);
    int32_t n = (int32_t)t->shape[0];
    if (!(c->cfg.labels = calloc((size_t)n, sizeof *c->cfg.labels)))
        return rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
    c->cfg.hp.num_labels = n;
    for (int32_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "LABEL_%d", i);
        if (!(c->cfg.labels[i] = strdup(name)))
            return rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
    }
    return RF_OK;
}

static void format_shape(char *buf, size_t size, int n, const int64_t *shape)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, size - k, "[");
    for (int i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

static float load_elem(const rf_ck_tensor *t, int64_t i)
{
    const uint8_t *p = t->data;
    uint16_t h;
    float f;
    switch (t->dtype) {
    case RF_CK_F16: memcpy(&h, p + 2 * i, 2); return rf_f16_to_f32(h);
    case RF_CK_BF16: memcpy(&h, p + 2 * i, 2); return rf_bf16_to_f32(h);
    default: memcpy(&f, p + 4 * i, 4); return f;
    }
}

/* A matrix stored as q8: each row quantized (rf_int8_quantize_rows), the
 * int8 values under the entry's name ("X.weight") and the rows' scales as
 * the f32 tensor "X.scale" right after it. */
static rf_status put_q8_tensor(converter *c, const rf_tensor_entry *e, const rf_ck_tensor *src)
{
    int64_t rows = e->shape[0], cols = e->shape[1];
    float *f = malloc((size_t)src->count * sizeof *f + 1);
    int8_t *q = malloc((size_t)src->count + 1);
    float *scale = malloc((size_t)rows * sizeof *scale + 1);
    if (!f || !q || !scale) {
        free(f);
        free(q);
        free(scale);
        return rf_fail(c->err, RF_ERR_NOMEM, "out of memory for tensor '%s'", src->name);
    }
    for (int64_t i = 0; i < src->count; i++)
        f[i] = load_elem(src, i);
    rf_int8_quantize_rows(f, (int)rows, (int)cols, (size_t)cols, q, scale);
    free(f);
    char name[sizeof e->gguf + 8];
    size_t stem = strlen(e->gguf) - strlen(".weight");
    snprintf(name, sizeof name, "%.*s.scale", (int)stem, e->gguf);
    uint64_t ne[2] = {(uint64_t)cols, (uint64_t)rows};
    rf_status st = rf_gguf_add_tensor(c->w, e->gguf, RF_DTYPE_Q8, 2, ne, q);
    if (!st)
        st = rf_gguf_add_tensor(c->w, name, RF_DTYPE_F32, 1, &ne[1], scale);
    else
        free(scale);
    return st ? rf_fail(c->err, st, "out of memory") : RF_OK;
}

/* Converts one checkpoint tensor to `type` and hands it to the writer. */
static rf_status put_tensor(converter *c, const rf_tensor_entry *e, const rf_ck_tensor *src,
                            rf_dtype type)
{
    char got[96], want[96];
    if (src->dtype != RF_CK_F32 && src->dtype != RF_CK_F16 && src->dtype != RF_CK_BF16)
        return rf_fail(c->err, RF_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s, expected F32, F16 or BF16",
                       c->ck_path, src->name, rf_ck_dtype_name(src->dtype));
    if (src->n_dims != e->n_dims || src->shape[0] != e->shape[0] ||
        (e->n_dims == 2 && src->shape[1] != e->shape[1])) {
        format_shape(got, sizeof got, src->n_dims, src->shape);
        format_shape(want, sizeof want, e->n_dims, e->shape);
        return rf_fail(c->err, RF_ERR_SHAPE, "%s: tensor '%s' has shape %s, expected %s", c->ck_path,
                       src->name, got, want);
    }
    int64_t n = src->count;
    if (type == RF_DTYPE_Q8)
        return put_q8_tensor(c, e, src);
    void *data = malloc((size_t)n * rf_dtype_size(type) + 1);
    if (!data)
        return rf_fail(c->err, RF_ERR_NOMEM, "out of memory for tensor '%s'", src->name);
    bool same = (type == RF_DTYPE_F32 && src->dtype == RF_CK_F32) ||
                (type == RF_DTYPE_F16 && src->dtype == RF_CK_F16) ||
                (type == RF_DTYPE_BF16 && src->dtype == RF_CK_BF16);
    if (same) {
        memcpy(data, src->data, src->nbytes);
    } else if (type == RF_DTYPE_F32) {
        if (src->dtype == RF_CK_F16)
            rf_widen_f16(src->data, data, (size_t)n);
        else
            rf_widen_bf16(src->data, data, (size_t)n);
    } else {
        uint16_t *d = data;
        for (int64_t i = 0; i < n; i++)
            d[i] = type == RF_DTYPE_F16 ? rf_f32_to_f16(load_elem(src, i))
                                        : rf_f32_to_bf16(load_elem(src, i));
    }
    uint64_t ne[2] = {(uint64_t)e->shape[e->n_dims - 1], (uint64_t)e->shape[0]};
    rf_status st = rf_gguf_add_tensor(c->w, e->gguf, type, (uint32_t)e->n_dims, ne, data);
    if (st)
        return rf_fail(c->err, st, "out of memory");
    return RF_OK;
}

/* The MLM decoder: tied unless the checkpoint's decoder weight differs
 * from the word embeddings. Returns the tensor to store, or NULL when tied. */
static const rf_ck_tensor *untied_decoder(converter *c)
{
    const rf_ck_tensor *dec = find(c, "cls.predictions.decoder.weight", false);
    const rf_ck_tensor *emb = find(c, "embeddings.word_embeddings.weight", true);
    mark_used(c, dec);
    if (!dec || (emb && dec->dtype == emb->dtype && dec->nbytes == emb->nbytes &&
                 dec->n_dims == emb->n_dims && !memcmp(dec->data, emb->data, dec->nbytes)))
        return NULL;
    return dec;
}

/* Which RoFormer the tensor set is that of, for messages. */
static const char *family(const rf_hparams *hp)
{
    if (hp->norm_type == RF_NORM_LAYER)
        return hp->use_bias ? "RoFormer" : "RoFormer without encoder biases (use_bias false)";
    return hp->use_bias ? "RoFormer-v2 (rms_norm) with encoder biases (use_bias true)"
                        : "RoFormer-v2 (rms_norm, no encoder biases)";
}

static rf_status write_metadata(converter *c)
{
    const rf_hparams *hp = &c->cfg.hp;
    rf_gguf_writer *w = c->w;
    rf_gguf_set_str(w, "general.architecture", "roformer");
    rf_gguf_set_u32(w, "general.alignment", RF_GGUF_ALIGNMENT);
    rf_gguf_set_u32(w, "roformer.vocab_size", (uint32_t)hp->vocab_size);
    rf_gguf_set_u32(w, "roformer.embedding_length", (uint32_t)hp->hidden_size);
    rf_gguf_set_u32(w, "roformer.token_embedding_length", (uint32_t)hp->embedding_size);
    rf_gguf_set_u32(w, "roformer.block_count", (uint32_t)hp->num_layers);
    rf_gguf_set_u32(w, "roformer.feed_forward_length", (uint32_t)hp->intermediate_size);
    rf_gguf_set_u32(w, "roformer.attention.head_count", (uint32_t)hp->num_heads);
    rf_gguf_set_f32(w, "roformer.attention.layer_norm_epsilon", hp->layer_norm_eps);
    rf_gguf_set_str(w, "roformer.norm_type", rf_norm_type_name(hp->norm_type));
    rf_gguf_set_bool(w, "roformer.use_bias", hp->use_bias);
    rf_gguf_set_u32(w, "roformer.context_length", (uint32_t)hp->max_position);
    rf_gguf_set_u32(w, "roformer.token_type_count", (uint32_t)hp->type_vocab_size);
    rf_gguf_set_str(w, "roformer.hidden_act", rf_activation_name(hp->hidden_act));
    rf_gguf_set_bool(w, "roformer.rotary_value", hp->rotary_value);
    rf_gguf_set_f32(w, "roformer.rope.freq_base", 10000.0f);
    if (hp->rope_scaling == RF_ROPE_SCALING_LINEAR || hp->rope_scaling == RF_ROPE_SCALING_NTK) {
        rf_gguf_set_str(w, "roformer.rope.scaling.type", rf_rope_scaling_name(hp->rope_scaling));
        rf_gguf_set_f32(w, "roformer.rope.scaling.factor", hp->rope_factor);
    }
    rf_gguf_set_str(w, "roformer.head", rf_head_name(hp->head));
    if (hp->num_labels > 0)
        rf_gguf_set_arr_str(w, "roformer.labels", (const char *const *)c->cfg.labels, NULL,
                            (uint64_t)hp->num_labels);
    rf_gguf_set_bool(w, "roformer.pooler", hp->has_pooler);
    if (hp->has_pooler)
        rf_gguf_set_str(w, "roformer.pooler.activation", rf_activation_name(hp->pooler_act));
    rf_st_config_write(w, &c->sentence);
    rf_gguf_set_str(w, "tokenizer.roformer.mode", rf_tokenizer_mode_name(hp->tokenizer));
    rf_gguf_set_bool(w, "tokenizer.do_lower_case", hp->do_lower_case);
    rf_gguf_set_arr_str(w, "tokenizer.ggml.tokens", c->vocab.ptr, c->vocab.len, (uint64_t)c->vocab.n);
    rf_gguf_set_u32(w, "tokenizer.ggml.padding_token_id", (uint32_t)hp->pad_id);
    rf_gguf_set_u32(w, "tokenizer.ggml.unknown_token_id", (uint32_t)hp->unk_id);
    rf_gguf_set_u32(w, "tokenizer.ggml.cls_token_id", (uint32_t)hp->cls_id);
    rf_gguf_set_u32(w, "tokenizer.ggml.seperator_token_id", (uint32_t)hp->sep_id);
    rf_gguf_set_u32(w, "tokenizer.ggml.mask_token_id", (uint32_t)hp->mask_id);
    if (hp->tokenizer == RF_TOKENIZER_WOBERT) {
        rf_gguf_set_arr_str(w, "tokenizer.jieba.words", c->dict.ptr, c->dict.len, (uint64_t)c->dict.n);
        rf_gguf_set_arr_u32(w, "tokenizer.jieba.freqs", c->dict.freq, (uint64_t)c->dict.n);
    }
    rf_status st = rf_gguf_writer_status(w);
    return st ? rf_fail(c->err, st, "out of memory") : RF_OK;
}

static rf_status write_tensors(converter *c)
{
    rf_hparams *hp = &c->cfg.hp;
    rf_tensor_entry *table = NULL;
    rf_status st = RF_OK;
    int n = rf_tensor_map(hp, NULL, &table);
    if (n < 0)
        return rf_fail(c->err, RF_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && !st; i++) {
        const rf_tensor_entry *e = &table[i];
        rf_dtype type = e->n_dims == 2 ? c->params->dtype : RF_DTYPE_F32;
        const rf_ck_tensor *src;
        if (!strcmp(e->gguf, "mlm.decoder.weight")) {
            src = untied_decoder(c);
            if (src)
                st = put_tensor(c, e, src, type);
            continue;
        }
        src = find(c, e->hf, e->base);
        if (!strcmp(e->gguf, "mlm.decoder.bias")) {
            /* the same parameter under two names; either may be stored */
            const rf_ck_tensor *alias = find(c, "cls.predictions.decoder.bias", false);
            mark_used(c, alias);
            if (!src)
                src = alias;
        }
        if (!src) {
            st = rf_fail(c->err, RF_ERR_SHAPE, "%s: missing tensor '%s%s' (needed by a %s with a %s head)",
                         c->ck_path, e->base ? c->prefix : "", e->hf, family(hp),
                         rf_head_name(hp->head));
            break;
        }
        mark_used(c, src);
        st = put_tensor(c, e, src, type);
    }
    mark_used(c, find(c, "encoder.embed_positions.weight", true));
    for (int32_t i = 0; i < c->ck->n && !st; i++)
        if (!c->used[i])
            st = rf_fail(c->err, RF_ERR_SHAPE, "%s: unexpected tensor '%s' (not part of a %s with a %s head)",
                         c->ck_path, c->ck->tensors[i].name, family(hp), rf_head_name(hp->head));
    free(table);
    return st;
}

static void converter_free(converter *c)
{
    rf_hf_config_free(&c->cfg);
    rf_st_config_free(&c->sentence);
    free(c->config_text);
    free(c->tok_text);
    free(c->vocab_text);
    free(c->dict_text);
    list_free(&c->vocab);
    list_free(&c->dict);
    rf_checkpoint_free(c->ck);
    free(c->ck_path);
    free(c->used);
    rf_gguf_writer_free(c->w);
}

rf_status rf_convert_build(const char *hf_dir, const rf_convert_params *params,
                           rf_gguf_writer **out, rf_error *err)
{
    rf_convert_params defaults = rf_convert_default_params();
    converter c = {.dir = hf_dir, .params = params ? params : &defaults, .err = err};
    rf_status st = RF_OK;
    *out = NULL;
    if (rf_dtype_size(c.params->dtype) == 0 ||
        (c.params->tokenizer != RF_TOKENIZER_AUTO && c.params->tokenizer != RF_TOKENIZER_WOBERT &&
         c.params->tokenizer != RF_TOKENIZER_BERT) ||
        (c.params->pooler_activation != RF_POOLER_ACT_AUTO &&
         c.params->pooler_activation != RF_POOLER_ACT_TANH &&
         c.params->pooler_activation != RF_POOLER_ACT_LINEAR)) {
        st = rf_fail(err, RF_ERR_INPUT,
                     "bad conversion parameters (dtype %d, tokenizer %d, pooler activation %d)",
                     (int)c.params->dtype, c.params->tokenizer, c.params->pooler_activation);
        goto done;
    }
    if ((st = load_config(&c)) || (st = load_sentence_config(&c)) || (st = load_vocab(&c)) ||
        (st = load_dict(&c)) ||
        (st = open_checkpoint(&c)))
        goto done;
    if (find(&c, "roformer.embeddings.word_embeddings.weight", false))
        c.prefix = "roformer.";
    else if (find(&c, "embeddings.word_embeddings.weight", false))
        c.prefix = "";
    else {
        st = rf_fail(err, RF_ERR_SHAPE, "%s: missing tensor 'roformer.embeddings.word_embeddings.weight'",
                     c.ck_path);
        goto done;
    }
    if ((st = infer_head(&c)))
        goto done;
    c.cfg.hp.has_pooler = find(&c, "pooler.dense.weight", true) || find(&c, "pooler.dense.bias", true);
    if (c.params->pooler_activation != RF_POOLER_ACT_AUTO) {
        if (!c.cfg.hp.has_pooler) {
            st = rf_fail(err, RF_ERR_INPUT,
                         "%s: a pooler activation was chosen, but the checkpoint has no pooler (%spooler.dense.*)",
                         c.ck_path, c.prefix);
            goto done;
        }
        c.cfg.hp.pooler_act = (rf_activation)c.params->pooler_activation;
    }
    if (c.cfg.hp.norm_type == RF_NORM_RMS && c.cfg.hp.head == RF_HEAD_MLM &&
        c.cfg.hp.embedding_size != c.cfg.hp.hidden_size) {
        /* the v2 decoder (vocab x embedding_size) reads the hidden states directly */
        st = rf_fail(err, RF_ERR_UNSUPPORTED,
                     "%s: a RoFormer-v2 MLM head needs embedding_size (%d) == hidden_size (%d)",
                     c.ck_path, c.cfg.hp.embedding_size, c.cfg.hp.hidden_size);
        goto done;
    }
    c.cfg.hp.dtype = c.params->dtype;
    if (!(c.w = rf_gguf_writer_new())) {
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = write_metadata(&c)) || (st = write_tensors(&c)))
        goto done;
    *out = c.w;
    c.w = NULL;
done:
    converter_free(&c);
    return st;
}

rf_status rf_convert_to_buffer(const char *hf_dir, const rf_convert_params *params, void **out,
                               size_t *size, rf_error *err)
{
    rf_gguf_writer *w;
    rf_status st = rf_convert_build(hf_dir, params, &w, err);
    if (st)
        return st;
    st = rf_gguf_write_buffer(w, out, size, err);
    rf_gguf_writer_free(w);
    return st;
}

rf_status rf_convert(const char *hf_dir, const char *out_path, const rf_convert_params *params,
                     rf_error *err)
{
    rf_gguf_writer *w;
    rf_status st = rf_convert_build(hf_dir, params, &w, err);
    if (st)
        return st;
    st = rf_gguf_write_file(w, out_path, err);
    rf_gguf_writer_free(w);
    return st;
}
