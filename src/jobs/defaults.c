/*
 * defaults.c — what every front end (the CLI, the server, Python, Dask)
 * uses when it is not told otherwise: the pooling of a sentence vector, the
 * truncation, the stride of windows and the label a rerank score reads.
 * Decided here once, so the same inputs give the same output everywhere.
 */
#include "base/error.h"
#include "roformer.h"

rf_pooling rf_model_default_pooling(const rf_model *model)
{
    const rf_sentence_config *sc = rf_model_sentence_config(model);
    if (sc->present)
        return sc->pooling;
    return rf_model_hparams(model)->has_pooler ? RF_POOLING_POOLER : RF_POOLING_CLS;
}

rf_status rf_model_check_pooling(const rf_model *model, rf_pooling pooling, rf_error *err)
{
    if (pooling != RF_POOLING_CLS && pooling != RF_POOLING_MEAN && pooling != RF_POOLING_POOLER &&
        pooling != RF_POOLING_MAX && pooling != RF_POOLING_LAST)
        return rf_fail(err, RF_ERR_INPUT, "unknown pooling %d", (int)pooling);
    if (pooling == RF_POOLING_POOLER && !rf_model_hparams(model)->has_pooler)
        return rf_fail(err, RF_ERR_UNSUPPORTED, "the model has no pooler; use cls or mean pooling");
    return RF_OK;
}

int32_t rf_model_default_max_length(const rf_model *model)
{
    int32_t n = rf_model_sentence_config(model)->max_seq_length;
    return n > 0 ? n : 0;
}

int32_t rf_model_max_input_length(const rf_model *model)
{
    int32_t n = rf_model_default_max_length(model);
    return n > 0 ? n : rf_model_hparams(model)->max_position;
}

int32_t rf_window_default_stride(int32_t window)
{
    return window > 0 ? window / 4 : 0;
}
