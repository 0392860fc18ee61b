/*
 * st_config.c — sentence-transformers' module files to rf_sentence_config,
 * and its GGUF keys.
 *
 * What sentence-transformers (v3) does with them, and so what is kept:
 *   modules.json        [{"idx", "name", "path", "type"}, ...] run in list
 *                       order: Transformer (path "": the HF files at the
 *                       top), Pooling (path "1_Pooling"), optionally
 *                       Normalize. Other modules (Dense, ...) change the
 *                       vectors with weights of their own and are refused.
 *   1_Pooling/config.json  word_embedding_dimension and one
 *                       pooling_mode_* flag true: cls_token, mean_tokens,
 *                       max_tokens or lasttoken (mean_sqrt_len_tokens,
 *                       weightedmean_tokens and several flags at once,
 *                       whose outputs are concatenated, are refused);
 *                       include_prompt false (prompt tokens left out of the
 *                       pooling) is refused.
 *   sentence_bert_config.json  max_seq_length (inputs truncated to it),
 *                       do_lower_case (texts lower-cased first).
 *   config_sentence_transformers.json  prompts {name: text} and
 *                       default_prompt_name (a name, or null).
 * Every key present must have the right JSON type and a sane value;
 * anything else is a one-line error naming the file and the key.
 */
#include "formats/st_config.h"

#include "base/error.h"
#include "formats/hf_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODULES 64
#define MAX_PROMPTS 1024
#define MAX_PROMPT_LEN 65536
#define MAX_DIR_LEN 256

static const char *const type_prefix = "sentence_transformers.models.";

/* ==== modules.json ==== */

/* A folder name sentence-transformers would join to the model folder,
 * kept inside it: no ".." anywhere (as the hub's revision names), no
 * absolute path, no backslash, no control character. */
static bool safe_dir(const char *p)
{
    size_t n = strlen(p);
    if (n == 0 || n >= MAX_DIR_LEN || p[0] == '/' || strchr(p, '\\') || strstr(p, ".."))
        return false;
    for (const char *s = p; *s; s++)
        if ((unsigned char)*s < 0x20)
            return false;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t k = e ? (size_t)(e - s) : strlen(s);
        if (k == 0 || (k == 1 && *s == '.'))
            return false;
        s += k + (e != NULL);
    }
    return true;
}

rf_status rf_st_modules_parse(const rf_json_text *modules, char **pooling_dir, bool *normalize,
                              rf_error *err)
{
    const char *what = modules->what;
    cJSON *root = cJSON_ParseWithLength(modules->text, modules->len);
    rf_status st = RF_OK;
    int n, stage = 0; /* 0: Transformer next, 1: Pooling next, 2: Normalize may follow, 3: done */
    *pooling_dir = NULL;
    *normalize = false;
    if (!root || !cJSON_IsArray(root)) {
        st = rf_fail(err, RF_ERR_FORMAT, "%s: not a JSON list of modules", what);
        goto done;
    }
    n = cJSON_GetArraySize(root);
    if (n > MAX_MODULES) {
        st = rf_fail(err, RF_ERR_LIMIT, "%s: %d modules, more than %d", what, n, MAX_MODULES);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *m = cJSON_GetArrayItem(root, i);
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(m, "type");
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(m, "path");
        if (!cJSON_IsObject(m) || !cJSON_IsString(type) || !cJSON_IsString(path)) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: module %d needs string 'type' and 'path'", what, i);
            goto done;
        }
        const char *t = type->valuestring, *p = path->valuestring;
        size_t np = strlen(type_prefix);
        const char *kind = strncmp(t, type_prefix, np) ? "" : t + np;
        if (stage == 0 && !strcmp(kind, "Transformer")) {
            if (*p) {
                st = rf_fail(err, RF_ERR_UNSUPPORTED,
                             "%s: the Transformer module is in the folder '%s', not at the top "
                             "(convert a folder with config.json at its top)", what, p);
                goto done;
            }
            stage = 1;
        } else if (stage == 1 && !strcmp(kind, "Pooling")) {
            if (!safe_dir(p)) {
                st = rf_fail(err, RF_ERR_FORMAT, "%s: the Pooling module's path '%s' is not a folder "
                             "inside the model's", what, p);
                goto done;
            }
            if (!(*pooling_dir = strdup(p))) {
                st = rf_fail(err, RF_ERR_NOMEM, "out of memory");
                goto done;
            }
            stage = 2;
        } else if (stage == 2 && !strcmp(kind, "Normalize")) {
            *normalize = true;
            stage = 3;
        } else {
            st = rf_fail(err, RF_ERR_UNSUPPORTED,
                         "%s: module %d '%s' is not supported here (supported: Transformer, "
                         "Pooling, then Normalize)", what, i, t);
            goto done;
        }
    }
    if (stage < 2)
        st = rf_fail(err, RF_ERR_UNSUPPORTED, "%s: no %s module", what,
                     stage == 0 ? "Transformer" : "Pooling");
done:
    if (st) {
        free(*pooling_dir);
        *pooling_dir = NULL;
    }
    cJSON_Delete(root);
    return st;
}

/* ==== The other three files ==== */

static rf_status json_object(const rf_json_text *f, cJSON **out, rf_error *err)
{
    *out = NULL;
    if (!f || !f->text)
        return RF_OK;
    *out = cJSON_ParseWithLength(f->text, f->len);
    if (!*out || !cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return rf_fail(err, RF_ERR_FORMAT, "%s: not a JSON object", f->what);
    }
    return RF_OK;
}

static rf_status parse_pooling(const cJSON *root, const char *what, int32_t hidden_size,
                               rf_sentence_config *out, rf_error *err)
{
    static const struct {
        const char *key;
        int pooling; /* -1: refused */
    } modes[] = {
        {"pooling_mode_cls_token", RF_POOLING_CLS},    {"pooling_mode_mean_tokens", RF_POOLING_MEAN},
        {"pooling_mode_max_tokens", RF_POOLING_MAX},   {"pooling_mode_lasttoken", RF_POOLING_LAST},
        {"pooling_mode_mean_sqrt_len_tokens", -1},     {"pooling_mode_weightedmean_tokens", -1},
    };
    const cJSON *dim = cJSON_GetObjectItemCaseSensitive(root, "word_embedding_dimension");
    int on = 0, chosen = -1;
    const char *chosen_key = NULL;
    bool include_prompt = true;
    rf_status st;
    if (dim && !(cJSON_IsNumber(dim) && dim->valuedouble == hidden_size))
        return rf_fail(err, RF_ERR_SHAPE, "%s: 'word_embedding_dimension' must be the hidden size %d",
                       what, hidden_size);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        bool v = false;
        if ((st = rf_json_bool(root, modes[i].key, &v, what, err)))
            return st;
        if (v) {
            on++;
            chosen = modes[i].pooling;
            chosen_key = modes[i].key;
        }
    }
    if (on != 1)
        return rf_fail(err, on ? RF_ERR_UNSUPPORTED : RF_ERR_FORMAT,
                       "%s: %d pooling modes are true; one of pooling_mode_cls_token, "
                       "_mean_tokens, _max_tokens, _lasttoken is supported", what, on);
    if (chosen < 0)
        return rf_fail(err, RF_ERR_UNSUPPORTED, "%s: '%s' is not supported (cls_token, mean_tokens, "
                       "max_tokens, lasttoken are)", what, chosen_key);
    if ((st = rf_json_bool(root, "include_prompt", &include_prompt, what, err)))
        return st;
    if (!include_prompt)
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "%s: 'include_prompt' false (prompt tokens left out of the pooling) is not "
                       "supported", what);
    out->pooling = chosen;
    return RF_OK;
}

static rf_status parse_sbert(const cJSON *root, const char *what, int32_t max_position,
                             rf_sentence_config *out, rf_error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "max_seq_length");
    if (j && !cJSON_IsNull(j)) {
        double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
        if (!(d >= 2 && d <= max_position) || floor(d) != d)
            return rf_fail(err, RF_ERR_FORMAT,
                           "%s: 'max_seq_length' must be an integer from 2 to the model's "
                           "maximum of %d", what, max_position);
        out->max_seq_length = (int32_t)d;
    }
    return rf_json_bool(root, "do_lower_case", &out->do_lower_case, what, err);
}

static rf_status parse_prompts(const cJSON *root, const char *what, rf_sentence_config *out,
                               rf_error *err)
{
    const cJSON *prompts = cJSON_GetObjectItemCaseSensitive(root, "prompts");
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(root, "default_prompt_name");
    char **names = NULL, **texts = NULL;
    int n = 0;
    if (prompts && !cJSON_IsNull(prompts)) {
        if (!cJSON_IsObject(prompts))
            return rf_fail(err, RF_ERR_FORMAT, "%s: 'prompts' must be an object of name: text",
                           what);
        n = cJSON_GetArraySize(prompts);
        if (n > MAX_PROMPTS)
            return rf_fail(err, RF_ERR_LIMIT, "%s: %d prompts, more than %d", what, n, MAX_PROMPTS);
        names = calloc((size_t)n + 1, sizeof *names);
        texts = calloc((size_t)n + 1, sizeof *texts);
        out->prompt_names = (const char *const *)names;
        out->prompts = (const char *const *)texts;
        if (!names || !texts)
            return rf_fail(err, RF_ERR_NOMEM, "out of memory");
        const cJSON *p;
        int i = 0;
        cJSON_ArrayForEach(p, prompts) {
            if (!cJSON_IsString(p) || strlen(p->valuestring) > MAX_PROMPT_LEN)
                return rf_fail(err, RF_ERR_FORMAT, "%s: prompt '%s' must be a string of at most "
                               "%d bytes", what, p->string, MAX_PROMPT_LEN);
            if (!(names[i] = strdup(p->string)) || !(texts[i] = strdup(p->valuestring)))
                return rf_fail(err, RF_ERR_NOMEM, "out of memory");
            out->n_prompts = ++i;
        }
    }
    if (def && !cJSON_IsNull(def)) {
        if (!cJSON_IsString(def))
            return rf_fail(err, RF_ERR_FORMAT, "%s: 'default_prompt_name' must be a string or null",
                           what);
        for (int i = 0; i < n; i++)
            if (!strcmp(names[i], def->valuestring))
                out->default_prompt_name = names[i];
        if (!out->default_prompt_name)
            return rf_fail(err, RF_ERR_FORMAT, "%s: 'default_prompt_name' '%s' is not one of "
                           "'prompts'", what, def->valuestring);
    }
    return RF_OK;
}

rf_status rf_st_config_parse(const rf_json_text *pooling, const rf_json_text *sbert,
                             const rf_json_text *prompts, bool normalize, int32_t hidden_size,
                             int32_t max_position, rf_sentence_config *out, rf_error *err)
{
    cJSON *pj = NULL, *sj = NULL, *cj = NULL;
    rf_status st;
    memset(out, 0, sizeof *out);
    out->present = true;
    out->normalize = normalize;
    if ((st = json_object(pooling, &pj, err)) || (st = json_object(sbert, &sj, err)) ||
        (st = json_object(prompts, &cj, err)))
        goto done;
    if (!pj) {
        st = rf_fail(err, RF_ERR_IO, "%s: missing", pooling->what);
        goto done;
    }
    if ((st = parse_pooling(pj, pooling->what, hidden_size, out, err)) ||
        (sj && (st = parse_sbert(sj, sbert->what, max_position, out, err))) ||
        (cj && (st = parse_prompts(cj, prompts->what, out, err))))
        goto done;
done:
    if (st)
        rf_st_config_free(out);
    cJSON_Delete(pj);
    cJSON_Delete(sj);
    cJSON_Delete(cj);
    return st;
}

/* The prompt arrays are NULL-terminated (one more slot than prompts), so a
 * config left half-filled by a failure frees the same way. */
static void free_list(const char *const *list)
{
    char **l = (char **)list;
    for (size_t i = 0; l && l[i]; i++)
        free(l[i]);
    free(l);
}

void rf_st_config_free(rf_sentence_config *c)
{
    free_list(c->prompt_names);
    free_list(c->prompts);
    memset(c, 0, sizeof *c);
}

/* ==== GGUF keys ==== */

void rf_st_config_write(rf_gguf_writer *w, const rf_sentence_config *c)
{
    if (!c->present)
        return;
    rf_gguf_set_str(w, "roformer.sentence.pooling", rf_pooling_name((rf_pooling)c->pooling));
    rf_gguf_set_bool(w, "roformer.sentence.normalize", c->normalize);
    if (c->max_seq_length > 0)
        rf_gguf_set_u32(w, "roformer.sentence.max_seq_length", (uint32_t)c->max_seq_length);
    rf_gguf_set_bool(w, "roformer.sentence.do_lower_case", c->do_lower_case);
    if (c->n_prompts > 0) {
        rf_gguf_set_arr_str(w, "roformer.sentence.prompt_names", c->prompt_names, NULL,
                            (uint64_t)c->n_prompts);
        rf_gguf_set_arr_str(w, "roformer.sentence.prompts", c->prompts, NULL, (uint64_t)c->n_prompts);
    }
    if (c->default_prompt_name)
        rf_gguf_set_str(w, "roformer.sentence.default_prompt_name", c->default_prompt_name);
}

static const rf_gguf_kv *key_of(const rf_gguf *g, const char *key, rf_gguf_type type,
                                const char *what, rf_status *st, rf_error *err)
{
    const rf_gguf_kv *kv = rf_gguf_find_kv(g, key);
    if (kv && (kv->type != type || (type == RF_GGUF_ARRAY && kv->arr_type != RF_GGUF_STRING))) {
        *st = rf_fail(err, RF_ERR_FORMAT, "%s: key '%s' is %s, expected %s", what, key,
                      rf_gguf_type_name(kv->type),
                      type == RF_GGUF_ARRAY ? "an array of strings" : rf_gguf_type_name(type));
        return NULL;
    }
    return kv;
}

static char *copy_str(const rf_gguf_str *s)
{
    if (memchr(s->ptr, '\0', s->len))
        return NULL;
    char *p = malloc(s->len + 1);
    if (p) {
        memcpy(p, s->ptr, s->len);
        p[s->len] = '\0';
    }
    return p;
}

/* The two prompt arrays, of equal length, into out. */
static rf_status read_prompts(const rf_gguf_kv *names, const rf_gguf_kv *texts, const char *what,
                              rf_sentence_config *out, rf_error *err)
{
    uint64_t n = names->arr_n;
    if (n != texts->arr_n || n > MAX_PROMPTS)
        return rf_fail(err, RF_ERR_FORMAT, "%s: roformer.sentence.prompt_names and .prompts must "
                       "be two lists of the same length, at most %d", what, MAX_PROMPTS);
    const char **p[2] = {malloc((n + 1) * sizeof **p), NULL};
    uint32_t *lens = malloc((n + 1) * sizeof *lens);
    char **dst[2] = {calloc(n + 1, sizeof **dst), calloc(n + 1, sizeof **dst)};
    rf_status st = RF_OK;
    p[1] = malloc((n + 1) * sizeof **p);
    out->prompt_names = (const char *const *)dst[0];
    out->prompts = (const char *const *)dst[1];
    if (!p[0] || !p[1] || !lens || !dst[0] || !dst[1]) {
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < 2; k++) {
        rf_gguf_array_strings(k ? texts : names, p[k], lens);
        for (uint64_t i = 0; i < n; i++) {
            rf_gguf_str s = {p[k][i], lens[i]};
            if (!(dst[k][i] = copy_str(&s))) {
                st = rf_fail(err, RF_ERR_FORMAT, "%s: a prompt holds a NUL byte", what);
                goto done;
            }
        }
    }
    out->n_prompts = (int32_t)n;
done:
    free(p[0]);
    free(p[1]);
    free(lens);
    return st;
}

rf_status rf_st_config_read(const rf_gguf *g, const char *what, int32_t max_position,
                            rf_sentence_config *out, rf_error *err)
{
    rf_status st = RF_OK;
    const rf_gguf_kv *pool, *norm, *len, *lower, *names, *texts, *def;
    memset(out, 0, sizeof *out);
    pool = key_of(g, "roformer.sentence.pooling", RF_GGUF_STRING, what, &st, err);
    norm = key_of(g, "roformer.sentence.normalize", RF_GGUF_BOOL, what, &st, err);
    len = key_of(g, "roformer.sentence.max_seq_length", RF_GGUF_UINT32, what, &st, err);
    lower = key_of(g, "roformer.sentence.do_lower_case", RF_GGUF_BOOL, what, &st, err);
    names = key_of(g, "roformer.sentence.prompt_names", RF_GGUF_ARRAY, what, &st, err);
    texts = key_of(g, "roformer.sentence.prompts", RF_GGUF_ARRAY, what, &st, err);
    def = key_of(g, "roformer.sentence.default_prompt_name", RF_GGUF_STRING, what, &st, err);
    if (st || !pool)
        return st;
    out->present = true;
    out->pooling = -1;
    for (int p = RF_POOLING_CLS; p <= RF_POOLING_LAST; p++) {
        const char *name = rf_pooling_name((rf_pooling)p);
        if (p != RF_POOLING_POOLER && pool->v.str.len == strlen(name) &&
            !memcmp(pool->v.str.ptr, name, pool->v.str.len))
            out->pooling = p;
    }
    if (out->pooling < 0) {
        st = rf_fail(err, RF_ERR_UNSUPPORTED,
                     "%s: roformer.sentence.pooling is not cls, mean, max or last", what);
        goto done;
    }
    out->normalize = norm && norm->v.u;
    out->do_lower_case = lower && lower->v.u;
    if (len) {
        if (len->v.u < 2 || len->v.u > (uint64_t)max_position) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: roformer.sentence.max_seq_length %llu is outside "
                         "[2, %d]", what, (unsigned long long)len->v.u, max_position);
            goto done;
        }
        out->max_seq_length = (int32_t)len->v.u;
    }
    if ((names || texts) && (!names || !texts)) {
        st = rf_fail(err, RF_ERR_FORMAT, "%s: roformer.sentence.prompt_names and .prompts go "
                     "together", what);
        goto done;
    }
    if (names && (st = read_prompts(names, texts, what, out, err)))
        goto done;
    if (def) {
        for (int32_t i = 0; i < out->n_prompts; i++)
            if (strlen(out->prompt_names[i]) == def->v.str.len &&
                !memcmp(out->prompt_names[i], def->v.str.ptr, def->v.str.len))
                out->default_prompt_name = out->prompt_names[i];
        if (!out->default_prompt_name)
            st = rf_fail(err, RF_ERR_FORMAT, "%s: roformer.sentence.default_prompt_name is not "
                         "one of roformer.sentence.prompt_names", what);
    }
done:
    if (st)
        rf_st_config_free(out);
    return st;
}

/* ==== Prompts ==== */

const char *rf_st_config_prompt(const rf_sentence_config *c, const char *name)
{
    if (!name)
        name = c->default_prompt_name;
    for (int32_t i = 0; name && i < c->n_prompts; i++)
        if (!strcmp(c->prompt_names[i], name))
            return c->prompts[i];
    return NULL;
}
