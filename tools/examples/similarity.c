/*
 * similarity.c — roformer.c from a program of your own: load a model,
 * embed two sentences, print their cosine similarity, and, when the model
 * is a classifier, the label of the first.
 *
 * Build against an installed roformer (make install PREFIX=...):
 *     cc similarity.c $(pkg-config --cflags --libs roformer) -o similarity
 * Run:
 *     ./similarity MODEL.gguf 今天天气很好 今天天气不错
 */
#include <roformer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODEL TEXT_A TEXT_B\n", argv[0]);
        return 2;
    }
    rf_error err;
    rf_model *model = NULL;
    rf_pipeline *pl = NULL;
    float *vecs = NULL;
    int rc = 1;
    if (rf_model_load(argv[1], &model, &err) != RF_OK ||
        rf_pipeline_create(model, NULL, &pl, &err) != RF_OK)
        goto done;

    /* Embed both texts in one call: one row of hidden_size floats each. */
    const rf_hparams *hp = rf_model_hparams(model);
    rf_text texts[2] = {{argv[2], strlen(argv[2]), NULL, 0}, {argv[3], strlen(argv[3]), NULL, 0}};
    vecs = malloc(sizeof(float) * 2 * (size_t)hp->hidden_size);
    /* the pooling `roformer similarity` uses when not told otherwise */
    rf_pooling pooling = rf_model_default_pooling(model);
    if (!vecs || rf_embed(pl, texts, 2, pooling, true, vecs, NULL, &err) != RF_OK)
        goto done;
    printf("cosine %.6f\n", rf_cosine(vecs, vecs + hp->hidden_size, hp->hidden_size));

    if (hp->head == RF_HEAD_SEQ_CLS) {
        float probs[64];
        int32_t best;
        if (hp->num_labels > 64 || rf_classify(pl, texts, 1, probs, NULL, &err) != RF_OK)
            goto done;
        rf_top_k(probs, hp->num_labels, 1, &best);
        printf("label %s %.6f\n", rf_model_label(model, best), probs[best]);
    }
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "error: %s\n", err.message);
    free(vecs);
    rf_pipeline_free(pl);
    rf_model_free(model);
    return rc;
}
