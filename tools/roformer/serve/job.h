/*
 * job.h — one request's work for the engine, as the batcher queues it and
 * the runner fills it in: the kind of library call, the texts, their real
 * token count, and the results (owned by whoever made the job).
 */
#ifndef RF_SERVE_JOB_H
#define RF_SERVE_JOB_H

#include "roformer.h"

#include <stdatomic.h>
#include <stdbool.h>

/* What became of a queued job. */
typedef enum {
    SERVE_JOB_RAN,           /* its batch ran: the results are set */
    SERVE_JOB_CLIENT_GONE,   /* dropped unrun: its client had hung up */
    SERVE_JOB_QUEUE_TIMEOUT, /* dropped unrun: it waited longer than --queue-timeout */
} serve_job_outcome;

struct serve_job;
/* Called once from a batcher thread when the job ran or was dropped; the
 * batcher does not touch the job afterwards. */
typedef void (*serve_job_done_fn)(struct serve_job *job, void *arg);
/* Whether the job's client has hung up (asked before the job is taken into
 * a batch); NULL: never asked. */
typedef bool (*serve_job_gone_fn)(void *arg);

/* The library call a job needs; jobs of one kind can share a run. */
typedef enum {
    SERVE_KIND_EMBED,     /* rf_embed_windowed_encodings, not normalized (each request
                             normalizes its own) */
    SERVE_KIND_CLASSIFY,  /* rf_classify_encodings */
    SERVE_KIND_LOGITS,    /* rf_classify_logits_encodings ("raw_scores") */
    SERVE_KIND_FILL_MASK, /* rf_fill_mask_encodings */
    SERVE_KIND_NER,       /* rf_token_classify_encodings */
    SERVE_KIND_QA,        /* rf_qa_encodings */
    SERVE_KIND_EMBED_IDS, /* rf_embed_encodings: embeddings of token ids as given */
    SERVE_KIND_EMBED_ALL, /* rf_token_embeddings: every token's last hidden state */
    SERVE_KIND_RERANK,    /* rf_rerank_score_encodings of (query, document) pairs */
    SERVE_KIND_RERANK_COSINE, /* rf_similarity_encodings of query and document, each
                                 tokenized apart: a model without a classifier */
    SERVE_KIND_SCM,       /* rf_scm_encodings, embed mode: the texts are A, B, C of
                             each triplet */
    SERVE_KIND_COUNT
} serve_kind;

struct serve_kind_ops;

/* Results of a job or of a batch: one per unit (an input; scm: a
 * triplet), each unit's rows back to back in `rows`, laid out as its kind
 * says (kind.h): floats or one of the library's result structs. */
typedef struct {
    const struct serve_kind_ops *kind;
    int32_t units;
    rf_item_status *items;  /* [units] each unit's outcome */
    int32_t *first, *count; /* [units] each unit's first row and its rows */
    int32_t n_rows;         /* all units' */
    size_t row_bytes;
    void *rows;             /* [n_rows] rows of row_bytes */
} serve_results;

typedef struct serve_job {
    serve_kind kind;
    const rf_text *texts;
    int32_t n;          /* texts */
    int32_t tokens;     /* their real tokens, for --max-batch-tokens */
    const int32_t *input_tokens; /* [n] each text's (rerank: pair's) share of `tokens`;
                                    NULL: not counted */
    int32_t top_k;      /* fill-mask */
    int32_t max_answer_tokens, doc_stride; /* qa: rf_qa's arguments */
    const rf_encoding *encs;      /* [n] what runs: the texts as the request tokenized
                                     them to count them (embed_ids: the ids as given);
                                     rerank_cosine: [2n], each pair's query then its
                                     document */
    int32_t window, stride; /* embed, classify: the pipeline's windows (window 0: none) */
    bool raw_scores;    /* rerank: logits, not probabilities */
    int32_t truncation_side; /* rf_truncation_side of the inputs the request lets be cut */

    serve_results out;            /* one per input (scm: per triplet); results.h */
    int32_t ran_tokens;           /* of input_tokens, those that ran: not answered from
                                     the cache, nor copied from an equal input of the
                                     batch */
    rf_status status;             /* RF_OK unless the whole run failed */
    rf_error error;

    /* the submitter's: how the batcher reports back */
    serve_job_done_fn on_done;
    serve_job_gone_fn client_gone;
    void *waiter;                 /* on_done's and client_gone's argument */
    atomic_bool abandoned;        /* set by anyone: nobody waits for the answer */

    /* the batcher's */
    serve_job_outcome outcome;
    double queued_at;             /* monotonic seconds: submitted */
    double started_at;            /* its batch started */
    double forward_seconds;       /* its batch's forward passes */
    struct serve_job *next;
} serve_job;

/* Whether a and b can run in one library call: the same kind and
 * truncation side and windows and, for QA, the same rf_qa arguments, for
 * rerank the same raw_scores (fill-mask runs the largest top_k asked and
 * trims it per job). */
static inline bool serve_jobs_share_call(const serve_job *a, const serve_job *b)
{
    return a->kind == b->kind && a->truncation_side == b->truncation_side &&
           a->window == b->window && a->stride == b->stride &&
           (a->kind != SERVE_KIND_QA || (a->max_answer_tokens == b->max_answer_tokens &&
                                         a->doc_stride == b->doc_stride)) &&
           (a->kind != SERVE_KIND_RERANK || a->raw_scores == b->raw_scores);
}

#endif
