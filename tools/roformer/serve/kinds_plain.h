/*
 * kinds_plain.h — the job kinds whose results are plain bytes, to be
 * copied as they are: vectors and scores (floats), QA's spans and scm's
 * verdicts (structs that point nowhere). Rows of kinds.c's table.
 */
#ifndef RF_SERVE_KINDS_PLAIN_H
#define RF_SERVE_KINDS_PLAIN_H

#include "serve/kind.h"

extern const serve_kind_ops serve_kind_embed, serve_kind_embed_ids, serve_kind_embed_all,
    serve_kind_classify, serve_kind_logits, serve_kind_rerank, serve_kind_rerank_cosine,
    serve_kind_qa, serve_kind_scm;

#endif
