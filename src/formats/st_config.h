/*
 * st_config.h — a sentence-transformers folder's own files to
 * rf_sentence_config: modules.json (which modules run, in order),
 * 1_Pooling/config.json (the pooling mode), sentence_bert_config.json
 * (max_seq_length, do_lower_case) and config_sentence_transformers.json
 * (prompts, default_prompt_name), as sentence-transformers v3 writes them.
 * Their GGUF keys (roformer.sentence.*) are written and read here too.
 */
#ifndef RF_ST_CONFIG_H
#define RF_ST_CONFIG_H

#include "formats/gguf.h"
#include "roformer.h"

/* One JSON file's bytes (text NULL: the file is absent) and its name for
 * messages. */
typedef struct {
    const char *text;
    size_t len;
    const char *what;
} rf_json_text;

/* modules.json: the pooling module's folder (relative, checked: no "..",
 * no leading '/'; owned by the caller) and whether a Normalize module
 * follows it. Only Transformer (folder ""), Pooling, then optionally
 * Normalize are supported; any other module is RF_ERR_UNSUPPORTED, named. */
rf_status rf_st_modules_parse(const rf_json_text *modules, char **pooling_dir, bool *normalize,
                              rf_error *err);

/* The pooling config (required), sentence_bert_config.json and
 * config_sentence_transformers.json (both optional) into *out (present,
 * pooling, max_seq_length, do_lower_case, prompts; `normalize` as given).
 * hidden_size and max_position are the model's, checked against
 * word_embedding_dimension and max_seq_length. On failure *out holds
 * nothing to free. */
rf_status rf_st_config_parse(const rf_json_text *pooling, const rf_json_text *sbert,
                             const rf_json_text *prompts, bool normalize, int32_t hidden_size,
                             int32_t max_position, rf_sentence_config *out, rf_error *err);

/* Frees the strings of a config made by rf_st_config_parse or
 * rf_st_config_read; leaves it zeroed. */
void rf_st_config_free(rf_sentence_config *c);
/* The text of prompt `name` of c (name NULL: its default prompt), or NULL
 * when there is none (rf_model_prompt). */
const char *rf_st_config_prompt(const rf_sentence_config *c, const char *name);

/* Sets the roformer.sentence.* keys (nothing when !c->present). */
void rf_st_config_write(rf_gguf_writer *w, const rf_sentence_config *c);

/* Reads the roformer.sentence.* keys of a GGUF file (absent: present =
 * false), checking types and values; `what` names the file. */
rf_status rf_st_config_read(const rf_gguf *g, const char *what, int32_t max_position,
                            rf_sentence_config *out, rf_error *err);

#endif
