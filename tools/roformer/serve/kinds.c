/*
 * kinds.c — the table of job kinds (see kinds.h). Adding a kind: its
 * serve_kind (job.h), its row written with SERVE_KIND_ROW beside the
 * others of its family (kinds_plain.c, kinds_owned.c), and its line here.
 * The compiler refuses a row missing a function and a table shorter than
 * the kinds; tests/serve/test_serve_kinds.c refuses a hole in it.
 */
#include "serve/kinds.h"

#include "serve/kinds_owned.h"
#include "serve/kinds_plain.h"

#include <stddef.h>

static const serve_kind_ops *const kinds[] = {
    [SERVE_KIND_EMBED] = &serve_kind_embed,
    [SERVE_KIND_CLASSIFY] = &serve_kind_classify,
    [SERVE_KIND_LOGITS] = &serve_kind_logits,
    [SERVE_KIND_FILL_MASK] = &serve_kind_fill_mask,
    [SERVE_KIND_NER] = &serve_kind_ner,
    [SERVE_KIND_QA] = &serve_kind_qa,
    [SERVE_KIND_EMBED_IDS] = &serve_kind_embed_ids,
    [SERVE_KIND_EMBED_ALL] = &serve_kind_embed_all,
    [SERVE_KIND_RERANK] = &serve_kind_rerank,
    [SERVE_KIND_RERANK_COSINE] = &serve_kind_rerank_cosine,
    [SERVE_KIND_SCM] = &serve_kind_scm,
};
_Static_assert(sizeof kinds / sizeof kinds[0] == SERVE_KIND_COUNT,
               "every serve_kind needs its row in kinds[]");

const serve_kind_ops *serve_kind_ops_of(serve_kind kind)
{
    return (unsigned)kind < SERVE_KIND_COUNT ? kinds[kind] : NULL;
}
