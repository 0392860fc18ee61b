/*
 * hf_config.c — config.json / tokenizer_config.json to rf_hparams.
 *
 * Defaults are HF RoFormerConfig's (transformers v4.40): vocab_size 50000,
 * embedding_size = hidden_size, hidden_size 768, 12 layers, 12 heads,
 * intermediate_size 3072, hidden_act "gelu", max_position_embeddings 1536,
 * type_vocab_size 2, layer_norm_eps 1e-12, rotary_value false; and the two
 * keys of RoFormer-v2's config (JunnYu/RoFormer_pytorch, the `roformer`
 * package): norm_type "layer_norm" (any other value is v2's parameter-free
 * RMS norm, as that code decides) and use_bias true. A key that is present
 * must have the right JSON type and a sane value; anything else is a
 * one-line error naming the file and the key.
 */
#include "formats/hf_config.h"

#include "base/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIM (1 << 24)   /* any vocab or width; keeps every product in 64 bits */
#define MAX_LAYERS 1024
#define MAX_LABELS 65536
#define MAX_LABEL_LEN 4096

/* ==== Names ==== */

static const struct {
    const char *name;
    rf_activation act;
} activations[] = {
    {"gelu", RF_ACT_GELU}, {"gelu_new", RF_ACT_GELU_NEW}, {"relu", RF_ACT_RELU},
    {"silu", RF_ACT_SILU}, {"swish", RF_ACT_SILU},        {"tanh", RF_ACT_TANH},
    {"linear", RF_ACT_LINEAR},
};

bool rf_activation_from_name(const char *name, rf_activation *out)
{
    for (size_t i = 0; i < sizeof activations / sizeof activations[0]; i++)
        if (!strcmp(name, activations[i].name)) {
            *out = activations[i].act;
            return true;
        }
    return false;
}

const char *rf_activation_name(rf_activation a)
{
    for (size_t i = 0; i < sizeof activations / sizeof activations[0]; i++)
        if (activations[i].act == a)
            return activations[i].name;
    return "unknown";
}

static const char *const head_names[] = {
    [RF_HEAD_NONE] = "none", [RF_HEAD_MLM] = "mlm", [RF_HEAD_SEQ_CLS] = "cls",
    [RF_HEAD_TOKEN_CLS] = "token", [RF_HEAD_QA] = "qa",
};

bool rf_head_from_name(const char *name, rf_head_kind *out)
{
    for (size_t i = 0; i < sizeof head_names / sizeof head_names[0]; i++)
        if (!strcmp(name, head_names[i])) {
            *out = (rf_head_kind)i;
            return true;
        }
    return false;
}

const char *rf_head_name(rf_head_kind h)
{
    return (unsigned)h < sizeof head_names / sizeof head_names[0] ? head_names[h] : "unknown";
}

bool rf_tokenizer_mode_from_name(const char *name, rf_tokenizer_mode *out)
{
    if (!strcmp(name, "wobert"))
        *out = RF_TOKENIZER_WOBERT;
    else if (!strcmp(name, "bert"))
        *out = RF_TOKENIZER_BERT;
    else
        return false;
    return true;
}

const char *rf_tokenizer_mode_name(rf_tokenizer_mode m)
{
    return m == RF_TOKENIZER_BERT ? "bert" : "wobert";
}

bool rf_norm_type_from_name(const char *name, rf_norm_type *out)
{
    if (!strcmp(name, "layer_norm"))
        *out = RF_NORM_LAYER;
    else if (!strcmp(name, "rms_norm"))
        *out = RF_NORM_RMS;
    else
        return false;
    return true;
}

const char *rf_norm_type_name(rf_norm_type n)
{
    return n == RF_NORM_RMS ? "rms_norm" : "layer_norm";
}

bool rf_rope_scaling_from_name(const char *name, rf_rope_scaling *out)
{
    if (!strcmp(name, "none"))
        *out = RF_ROPE_SCALING_NONE;
    else if (!strcmp(name, "linear"))
        *out = RF_ROPE_SCALING_LINEAR;
    else if (!strcmp(name, "ntk"))
        *out = RF_ROPE_SCALING_NTK;
    else
        return false;
    return true;
}

const char *rf_rope_scaling_name(rf_rope_scaling s)
{
    switch (s) {
    case RF_ROPE_SCALING_NONE: return "none";
    case RF_ROPE_SCALING_LINEAR: return "linear";
    case RF_ROPE_SCALING_NTK: return "ntk";
    case RF_ROPE_SCALING_DEFAULT: break;
    }
    return "default";
}

/* As sentence-transformers' 1_Pooling/config.json and the CLI's --pooling
 * spell them. */
const char *rf_pooling_name(rf_pooling pooling)
{
    static const char *const names[] = {
        [RF_POOLING_CLS] = "cls", [RF_POOLING_MEAN] = "mean", [RF_POOLING_POOLER] = "pooler",
        [RF_POOLING_MAX] = "max", [RF_POOLING_LAST] = "last",
    };
    if (pooling == RF_POOLING_DEFAULT)
        return "default";
    return (unsigned)pooling < sizeof names / sizeof names[0] ? names[pooling] : "unknown";
}

/* "rope_scaling": {"type" (or "rope_type"): "linear" | "ntk", "factor": F}
 * as HF configs write it; absent or null: none. */
static rf_status parse_rope_scaling(const cJSON *root, rf_hparams *hp, const char *what,
                                    rf_error *err)
{
    hp->rope_scaling = RF_ROPE_SCALING_NONE;
    hp->rope_factor = 1.0f;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    if (!rs || cJSON_IsNull(rs))
        return RF_OK;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(rs, "type");
    if (!type)
        type = cJSON_GetObjectItemCaseSensitive(rs, "rope_type");
    const cJSON *factor = cJSON_GetObjectItemCaseSensitive(rs, "factor");
    if (!cJSON_IsObject(rs) || !cJSON_IsString(type) || !cJSON_IsNumber(factor))
        return rf_fail(err, RF_ERR_FORMAT,
                       "%s: 'rope_scaling' must be an object with a string 'type' and a number "
                       "'factor'", what);
    if (!rf_rope_scaling_from_name(type->valuestring, &hp->rope_scaling))
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "%s: rope_scaling type '%.40s' is not supported (none, linear, ntk)", what,
                       type->valuestring);
    if (!(factor->valuedouble > 0 && factor->valuedouble <= RF_MAX_ROPE_FACTOR))
        return rf_fail(err, RF_ERR_FORMAT, "%s: rope_scaling factor must be in (0, %d]", what,
                       RF_MAX_ROPE_FACTOR);
    hp->rope_factor = (float)factor->valuedouble;
    return RF_OK;
}

/* ==== config.json ==== */

/* HF architecture class -> head. RoFormerForCausalLM carries the same
 * cls.predictions head as the masked LM. */
static const struct {
    const char *arch;
    rf_head_kind head;
} architectures[] = {
    {"RoFormerModel", RF_HEAD_NONE},
    {"RoFormerForMaskedLM", RF_HEAD_MLM},
    {"RoFormerForCausalLM", RF_HEAD_MLM},
    {"RoFormerForSequenceClassification", RF_HEAD_SEQ_CLS},
    {"RoFormerForTokenClassification", RF_HEAD_TOKEN_CLS},
    {"RoFormerForQuestionAnswering", RF_HEAD_QA},
};

/* Reads an optional integer key into *v (left at its default when absent). */
static rf_status get_int(const cJSON *root, const char *key, int32_t lo, int32_t hi, int32_t *v,
                         const char *what, rf_error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!j || cJSON_IsNull(j))
        return RF_OK;
    double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
    if (!(d >= lo && d <= hi) || floor(d) != d)
        return rf_fail(err, RF_ERR_FORMAT, "%s: '%s' must be an integer in [%d, %d]", what, key,
                       lo, hi);
    *v = (int32_t)d;
    return RF_OK;
}

rf_status rf_json_bool(const cJSON *root, const char *key, bool *v, const char *what,
                       rf_error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!j || cJSON_IsNull(j))
        return RF_OK;
    if (!cJSON_IsBool(j))
        return rf_fail(err, RF_ERR_FORMAT, "%s: '%s' must be true or false", what, key);
    *v = cJSON_IsTrue(j);
    return RF_OK;
}

/* A string key, NULL when absent; an error when present but not a string. */
static rf_status get_str(const cJSON *root, const char *key, const char **v, const char *what,
                         rf_error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    *v = NULL;
    if (!j || cJSON_IsNull(j))
        return RF_OK;
    if (!cJSON_IsString(j))
        return rf_fail(err, RF_ERR_FORMAT, "%s: '%s' must be a string", what, key);
    *v = j->valuestring;
    return RF_OK;
}

static rf_status get_activation(const cJSON *root, const char *key, rf_activation *v,
                                const char *what, rf_error *err)
{
    const char *s;
    rf_status st = get_str(root, key, &s, what, err);
    if (st || !s)
        return st;
    if (!rf_activation_from_name(s, v))
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "%s: %s '%s' is not supported (gelu, gelu_new, relu, silu, swish, tanh, linear)",
                       what, key, s);
    return RF_OK;
}

static rf_status parse_head(const cJSON *root, rf_hf_config *c, const char *what, rf_error *err)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    rf_head_kind *head = &c->hp.head;
    *head = RF_HEAD_NONE;
    if (!arch || cJSON_IsNull(arch))
        return RF_OK;
    c->has_architecture = true;
    const cJSON *first = cJSON_IsArray(arch) ? cJSON_GetArrayItem(arch, 0) : NULL;
    if (!cJSON_IsString(first))
        return rf_fail(err, RF_ERR_FORMAT, "%s: 'architectures' must be a list of class names", what);
    for (size_t i = 0; i < sizeof architectures / sizeof architectures[0]; i++)
        if (!strcmp(first->valuestring, architectures[i].arch)) {
            *head = architectures[i].head;
            return RF_OK;
        }
    return rf_fail(err, RF_ERR_UNSUPPORTED, "%s: architecture '%s' is not a RoFormer class", what,
                   first->valuestring);
}

/* id2label {"0": "negative", ...} -> labels[0..n); keys must be 0..n-1. With
 * no id2label, HF's default for classification heads is 2 labels
 * LABEL_0, LABEL_1 (or num_labels of them when that key is given). */
static rf_status parse_labels(const cJSON *root, rf_hf_config *c, const char *what, rf_error *err)
{
    const cJSON *id2label = cJSON_GetObjectItemCaseSensitive(root, "id2label");
    int32_t n = 0;
    rf_status st = RF_OK;
    if (id2label && !cJSON_IsNull(id2label)) {
        if (!cJSON_IsObject(id2label))
            return rf_fail(err, RF_ERR_FORMAT, "%s: 'id2label' must be an object", what);
        n = cJSON_GetArraySize(id2label);
        if (n > MAX_LABELS)
            return rf_fail(err, RF_ERR_LIMIT, "%s: more than %d labels", what, MAX_LABELS);
    } else if (c->hp.head == RF_HEAD_SEQ_CLS || c->hp.head == RF_HEAD_TOKEN_CLS) {
        n = 2;
        if ((st = get_int(root, "num_labels", 1, MAX_LABELS, &n, what, err)))
            return st;
    }
    if (n == 0)
        return RF_OK;
    c->labels = calloc((size_t)n, sizeof *c->labels);
    if (!c->labels)
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
    c->hp.num_labels = n;
    if (!id2label || cJSON_IsNull(id2label)) {
        for (int32_t i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "LABEL_%d", i);
            if (!(c->labels[i] = strdup(name)))
                return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
        }
        return RF_OK;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, id2label) {
        char *end;
        long id = strtol(e->string, &end, 10);
        if (end == e->string || *end || id < 0 || id >= n)
            return rf_fail(err, RF_ERR_FORMAT, "%s: id2label key '%s' is not a label id 0..%d",
                           what, e->string, n - 1);
        if (!cJSON_IsString(e))
            return rf_fail(err, RF_ERR_FORMAT, "%s: id2label['%s'] must be a string", what, e->string);
        if (strlen(e->valuestring) > MAX_LABEL_LEN)
            return rf_fail(err, RF_ERR_LIMIT, "%s: id2label['%s'] is longer than %d bytes", what,
                           e->string, MAX_LABEL_LEN);
        if (c->labels[id])
            return rf_fail(err, RF_ERR_FORMAT, "%s: id2label has label %ld twice", what, id);
        if (!(c->labels[id] = strdup(e->valuestring)))
            return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
    }
    return RF_OK;
}

static rf_status parse_config(const cJSON *root, rf_hf_config *c, const char *what, rf_error *err)
{
    rf_hparams *hp = &c->hp;
    const char *model_type, *norm_type;
    rf_status st;
    if (!cJSON_IsObject(root))
        return rf_fail(err, RF_ERR_FORMAT, "%s: not a JSON object", what);
    if ((st = get_str(root, "model_type", &model_type, what, err)))
        return st;
    if (model_type && strcmp(model_type, "roformer"))
        return rf_fail(err, RF_ERR_UNSUPPORTED, "%s: model_type '%s' is not roformer", what,
                       model_type);
    hp->vocab_size = 50000;
    hp->hidden_size = 768;
    hp->num_layers = 12;
    hp->num_heads = 12;
    hp->intermediate_size = 3072;
    hp->max_position = 1536;
    hp->type_vocab_size = 2;
    hp->layer_norm_eps = 1e-12f;
    hp->hidden_act = RF_ACT_GELU;
    hp->pooler_act = RF_ACT_TANH;
    hp->norm_type = RF_NORM_LAYER;
    hp->use_bias = true;
    hp->embedding_size = 0;
    if ((st = get_int(root, "vocab_size", 1, MAX_DIM, &hp->vocab_size, what, err)) ||
        (st = get_int(root, "hidden_size", 1, MAX_DIM, &hp->hidden_size, what, err)) ||
        (st = get_int(root, "embedding_size", 1, MAX_DIM, &hp->embedding_size, what, err)) ||
        (st = get_int(root, "num_hidden_layers", 1, MAX_LAYERS, &hp->num_layers, what, err)) ||
        (st = get_int(root, "num_attention_heads", 1, MAX_DIM, &hp->num_heads, what, err)) ||
        (st = get_int(root, "intermediate_size", 1, MAX_DIM, &hp->intermediate_size, what, err)) ||
        (st = get_int(root, "max_position_embeddings", 1, RF_MAX_POSITION, &hp->max_position, what, err)) ||
        (st = get_int(root, "type_vocab_size", 1, MAX_DIM, &hp->type_vocab_size, what, err)) ||
        (st = rf_json_bool(root, "rotary_value", &hp->rotary_value, what, err)) ||
        (st = get_activation(root, "hidden_act", &hp->hidden_act, what, err)) ||
        (st = get_activation(root, "pooler_activation", &hp->pooler_act, what, err)) ||
        (st = rf_json_bool(root, "use_bias", &hp->use_bias, what, err)) ||
        (st = get_str(root, "norm_type", &norm_type, what, err)) ||
        (st = parse_head(root, c, what, err)))
        return st;
    if (norm_type && strcmp(norm_type, "layer_norm"))
        hp->norm_type = RF_NORM_RMS;
    if (!hp->embedding_size)
        hp->embedding_size = hp->hidden_size;
    if ((st = parse_rope_scaling(root, hp, what, err)))
        return st;
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(root, "layer_norm_eps");
    if (eps && !cJSON_IsNull(eps)) {
        /* checked as the float32 it is stored as: 1e-112 would become 0 */
        if (!cJSON_IsNumber(eps) || !((float)eps->valuedouble > 0 && (float)eps->valuedouble < 1))
            return rf_fail(err, RF_ERR_FORMAT, "%s: 'layer_norm_eps' must be a number in (0, 1)", what);
        hp->layer_norm_eps = (float)eps->valuedouble;
    }
    /* RoPE rotates pairs within each head: the head size must be even */
    if (hp->hidden_size % hp->num_heads || (hp->hidden_size / hp->num_heads) % 2)
        return rf_fail(err, RF_ERR_FORMAT,
                       "%s: hidden_size %d is not num_attention_heads %d times an even head size",
                       what, hp->hidden_size, hp->num_heads);
    return parse_labels(root, c, what, err);
}

/* ==== tokenizer_config.json ==== */

/* A special token is a string, or an object {"content": "..."} (AddedToken). */
static rf_status get_special(const cJSON *root, const char *key, const char *fallback, char **out,
                             const char *what, rf_error *err)
{
    const cJSON *j = root ? cJSON_GetObjectItemCaseSensitive(root, key) : NULL;
    const char *s = fallback;
    if (cJSON_IsObject(j))
        j = cJSON_GetObjectItemCaseSensitive(j, "content");
    if (j && !cJSON_IsNull(j)) {
        if (!cJSON_IsString(j))
            return rf_fail(err, RF_ERR_FORMAT, "%s: '%s' must be a string", what, key);
        s = j->valuestring;
    }
    if (!(*out = strdup(s)))
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", what);
    return RF_OK;
}

static rf_status parse_tokenizer_config(const cJSON *root, int choice, rf_hf_config *c,
                                        const char *what, rf_error *err)
{
    static const char *const keys[RF_SPECIAL_COUNT] = {"pad_token", "unk_token", "cls_token",
                                                       "sep_token", "mask_token"};
    static const char *const defaults[RF_SPECIAL_COUNT] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                           "[MASK]"};
    const char *cls = NULL;
    rf_status st;
    c->hp.do_lower_case = true;
    c->hp.tokenizer = RF_TOKENIZER_WOBERT;
    if (root) {
        if (!cJSON_IsObject(root))
            return rf_fail(err, RF_ERR_FORMAT, "%s: not a JSON object", what);
        if ((st = rf_json_bool(root, "do_lower_case", &c->hp.do_lower_case, what, err)) ||
            (st = get_str(root, "tokenizer_class", &cls, what, err)))
            return st;
    }
    for (int i = 0; i < RF_SPECIAL_COUNT; i++)
        if ((st = get_special(root, keys[i], defaults[i], &c->special[i], what, err)))
            return st;
    if (choice != RF_TOKENIZER_AUTO) {
        c->hp.tokenizer = (rf_tokenizer_mode)choice;
        return RF_OK;
    }
    if (!cls || !strcmp(cls, "RoFormerTokenizer") || !strcmp(cls, "RoFormerTokenizerFast"))
        c->hp.tokenizer = RF_TOKENIZER_WOBERT;
    else if (!strcmp(cls, "BertTokenizer") || !strcmp(cls, "BertTokenizerFast"))
        c->hp.tokenizer = RF_TOKENIZER_BERT;
    else
        return rf_fail(err, RF_ERR_UNSUPPORTED,
                       "%s: tokenizer_class '%s' is not supported (choose one with --tokenizer wobert|bert)",
                       what, cls);
    return RF_OK;
}

rf_status rf_hf_config_parse(const char *config, size_t config_len, const char *config_what,
                             const char *tok_config, size_t tok_config_len,
                             const char *tok_config_what, int tokenizer_choice,
                             rf_hf_config *out, rf_error *err)
{
    cJSON *root = cJSON_ParseWithLength(config, config_len);
    cJSON *tok = NULL;
    rf_status st;
    memset(out, 0, sizeof *out);
    if (!root) {
        st = rf_fail(err, RF_ERR_FORMAT, "%s: bad JSON near byte %ld", config_what,
                     (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - config : 0));
        goto done;
    }
    if ((st = parse_config(root, out, config_what, err)))
        goto done;
    if (tok_config) {
        tok = cJSON_ParseWithLength(tok_config, tok_config_len);
        if (!tok) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: bad JSON near byte %ld", tok_config_what,
                         (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - tok_config : 0));
            goto done;
        }
    }
    st = parse_tokenizer_config(tok, tokenizer_choice, out, tok_config_what, err);
done:
    cJSON_Delete(root);
    cJSON_Delete(tok);
    if (st)
        rf_hf_config_free(out);
    return st;
}

void rf_hf_config_free(rf_hf_config *c)
{
    if (c->labels)
        for (int32_t i = 0; i < c->hp.num_labels; i++)
            free(c->labels[i]);
    free(c->labels);
    for (int i = 0; i < RF_SPECIAL_COUNT; i++)
        free(c->special[i]);
    memset(c, 0, sizeof *c);
}
