/*
 * jobs_embed.c — sentence embeddings and the cosine similarity of pairs
 * (the jobs of sentence-transformers' encode() and RoFormer-Sim): [CLS],
 * mask-aware mean, max or last-token, or pooler pooling, optional L2
 * normalisation. A text cut into windows (rf_pipeline_params.window) is
 * the mean of its windows' vectors, normalized after.
 */
#include "jobs/pipeline.h"

#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    rf_pooling pooling;
    bool normalize;
    int32_t D;
} embed_job;

void rf_pool_row(const rf_row *row, const rf_encoding *enc, rf_pooling pooling, int32_t D,
                 float *out)
{
    if (pooling == RF_POOLING_POOLER)
        memcpy(out, row->pooled, sizeof(float) * (size_t)D);
    else /* the row's own tokens only: padding never enters the pooling */
        rf_pool_hidden(row->hidden, NULL, enc->n, D, pooling, out);
}

/* One window's (or input's) embedding, before normalization. */
static rf_status embed_vector(void *job_arg, const rf_encoding *enc, const rf_row *row,
                              float *vec, rf_error *err)
{
    (void)err;
    embed_job *job = job_arg;
    rf_pool_row(row, enc, job->pooling, job->D, vec);
    return RF_OK;
}

/* After the mean of the windows: the L2 normalization when asked. */
static void embed_finish(void *job_arg, float *vec)
{
    embed_job *job = job_arg;
    if (job->normalize)
        rf_l2_normalize(vec, job->D);
}

/* inputs, or the caller's encodings of them (given, not NULL). */
static rf_status embed(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                       int32_t n, rf_pooling pooling, bool normalize, float *out,
                       rf_item_status *items, rf_error *err)
{
    const rf_hparams *hp = rf_model_hparams(rf_pipeline_model(pl));
    rf_status st = rf_model_check_pooling(rf_pipeline_model(pl), pooling, err);
    if (st != RF_OK)
        return st;
    rf_fill_nan(out, (int64_t)n * hp->hidden_size);
    embed_job job = {.pooling = pooling, .normalize = normalize, .D = hp->hidden_size};
    rf_run_needs needs = {.hidden = pooling != RF_POOLING_POOLER,
                          .pooled = pooling == RF_POOLING_POOLER};
    return rf_pipeline_run_pooled(pl, inputs, given, n, &needs, hp->hidden_size, embed_vector,
                                  embed_finish, &job, out, items, err);
}

rf_status rf_embed(rf_pipeline *pl, const rf_text *inputs, int32_t n, rf_pooling pooling,
                   bool normalize, float *out, rf_item_status *items, rf_error *err)
{
    return embed(pl, inputs, NULL, n, pooling, normalize, out, items, err);
}

rf_status rf_embed_windowed_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                      rf_pooling pooling, bool normalize, float *out,
                                      rf_item_status *items, rf_error *err)
{
    return embed(pl, NULL, encs, n, pooling, normalize, out, items, err);
}

/* The pairs inputs[n], or the caller's encodings of their sides (given,
 * not NULL: given[2i] is pair i's text, given[2i+1] its second text). */
static rf_status similarity(rf_pipeline *pl, const rf_text *inputs, const rf_encoding *given,
                            int32_t n, rf_pooling pooling, float *cosine, rf_item_status *items,
                            rf_error *err)
{
    if (n <= 0)
        return n < 0 ? rf_fail(err, RF_ERR_INPUT, "negative input count %d", n) : RF_OK;
    int32_t D = rf_model_hparams(rf_pipeline_model(pl))->hidden_size;
    /* Both sides of every pair are embedded in one run: 2i is a, 2i+1 is b. */
    rf_text *sides = given ? NULL : calloc((size_t)2 * n, sizeof *sides);
    float *vecs = malloc(sizeof(float) * (size_t)2 * n * D);
    rf_item_status *side_items = malloc(sizeof *side_items * (size_t)2 * n);
    rf_status st = RF_OK;
    if ((!given && !sides) || !vecs || !side_items) {
        st = rf_fail(err, RF_ERR_NOMEM, "out of memory for %d pairs", n);
        goto done;
    }
    for (int32_t i = 0; sides && i < n; i++) {
        sides[2 * i] = (rf_text){.text = inputs[i].text, .text_len = inputs[i].text_len};
        sides[2 * i + 1] = (rf_text){.text = inputs[i].pair, .text_len = inputs[i].pair_len};
    }
    st = embed(pl, sides, given, 2 * n, pooling, false, vecs, side_items, err);
    if (st != RF_OK)
        goto done;
    if (items)
        for (int32_t i = 0; i < n; i++)
            items[i] = (rf_item_status){.status = RF_OK};
    for (int32_t i = 0; i < n; i++) {
        cosine[i] = NAN;
        for (int side = 0; side < 2; side++) {
            const rf_item_status *s = &side_items[2 * i + side];
            if (s->status == RF_OK)
                continue;
            char msg[sizeof s->error.message];
            snprintf(msg, sizeof msg, "%s: %.480s", side ? "text_b" : "text_a", s->error.message);
            if ((st = rf_item_fail(items, i, s->status, msg, err)) != RF_OK)
                goto done;
            break;
        }
        if (side_items[2 * i].status == RF_OK && side_items[2 * i + 1].status == RF_OK)
            cosine[i] = rf_cosine(vecs + (size_t)2 * i * D, vecs + (size_t)(2 * i + 1) * D, D);
    }
done:
    free(sides);
    free(vecs);
    free(side_items);
    return st;
}

rf_status rf_similarity(rf_pipeline *pl, const rf_text *inputs, int32_t n, rf_pooling pooling,
                        float *cosine, rf_item_status *items, rf_error *err)
{
    return similarity(pl, inputs, NULL, n, pooling, cosine, items, err);
}

rf_status rf_similarity_encodings(rf_pipeline *pl, const rf_encoding *encs, int32_t n,
                                  rf_pooling pooling, float *cosine, rf_item_status *items,
                                  rf_error *err)
{
    return similarity(pl, NULL, encs, n, pooling, cosine, items, err);
}
