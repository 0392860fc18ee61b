"""The C library through ctypes: finding libroformer.so, and the structs and
functions of include/roformer.h declared for ctypes.

This module mirrors the header and nothing more: no Python conveniences
(those are in model.py). Every struct here must have the C layout exactly;
tests/python/test_robustness.py compiles the header and compares each field's
offset, each struct's size and each RF_ constant's value with these
declarations.

ctypes.CDLL releases the GIL for the duration of every foreign call, so
calls into the library from several Python threads run in parallel.
"""

import ctypes
import os
from ctypes import (POINTER, Structure, c_bool, c_char, c_char_p, c_double, c_float, c_int,
                    c_int32, c_int64, c_size_t, c_uint8, c_void_p)

# ==== Finding the library ====


def _candidates():
    """Where libroformer.so may be, in the order tried."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("ROFORMER_LIBRARY")
    if env:
        yield env
    yield os.path.join(here, "libroformer.so")                          # beside the package
    yield os.path.join(here, "..", "..", "..", "build", "libroformer.so")  # tools/python/roformer in a build tree
    yield os.path.join(here, "..", "..", "..", "libroformer.so")        # PREFIX/lib/python3/dist-packages/roformer
    yield "libroformer.so"                                              # the dynamic loader's search path


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path), os.path.normpath(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("roformer: libroformer.so not found; set ROFORMER_LIBRARY to its path "
                      "(tried: %s)" % "; ".join(tried))


lib, library_path = _load()

# ==== Enums (values as in roformer.h) ====

# The header version these bindings mirror: the library loaded must have the
# same MAJOR and at least this MINOR (rf_version_matches, checked below).
RF_VERSION_MAJOR, RF_VERSION_MINOR = 2, 1
RF_OK = 0
RF_ERR_INPUT = 5
RF_ERR_NOMEM = 7

RF_HEAD_NONE, RF_HEAD_MLM, RF_HEAD_SEQ_CLS, RF_HEAD_TOKEN_CLS, RF_HEAD_QA = range(5)
RF_POOLING_DEFAULT = -1
RF_POOLING_CLS, RF_POOLING_MEAN, RF_POOLING_POOLER, RF_POOLING_MAX, RF_POOLING_LAST = range(5)
RF_SCM_FAILED, RF_SCM_B, RF_SCM_C = 0, ord("B"), ord("C")
RF_RERANK_CLASSIFIER, RF_RERANK_COSINE = range(2)
RF_TRUNCATE_RIGHT, RF_TRUNCATE_LEFT = range(2)
RF_COMPUTE_F32, RF_COMPUTE_BF16, RF_COMPUTE_INT8 = range(3)
RF_SCM_EMBED, RF_SCM_PAIR = range(2)
RF_SCM_CHUNK = 64
RF_MAX_LENGTH_MODEL = -1
RF_STRIDE_DEFAULT = -1
RF_MAX_THREADS = 256
RF_QA_MAX_ANSWER_TOKENS = 15
RF_ROPE_SCALING_DEFAULT, RF_ROPE_SCALING_NONE, RF_ROPE_SCALING_LINEAR, RF_ROPE_SCALING_NTK = range(4)

# ==== Structs ====


class rf_error(Structure):
    _fields_ = [("message", c_char * 512)]


class rf_hparams(Structure):
    _fields_ = [
        ("vocab_size", c_int32),
        ("embedding_size", c_int32),
        ("hidden_size", c_int32),
        ("num_layers", c_int32),
        ("num_heads", c_int32),
        ("intermediate_size", c_int32),
        ("max_position", c_int32),
        ("type_vocab_size", c_int32),
        ("layer_norm_eps", c_float),
        ("norm_type", c_int),       # rf_norm_type
        ("use_bias", c_bool),
        ("hidden_act", c_int),      # rf_activation
        ("rotary_value", c_bool),
        ("head", c_int),            # rf_head_kind
        ("num_labels", c_int32),
        ("has_pooler", c_bool),
        ("pooler_act", c_int),      # rf_activation
        ("tokenizer", c_int),       # rf_tokenizer_mode
        ("do_lower_case", c_bool),
        ("pad_id", c_int32),
        ("unk_id", c_int32),
        ("cls_id", c_int32),
        ("sep_id", c_int32),
        ("mask_id", c_int32),
        ("dtype", c_int),           # rf_dtype
        ("rope_scaling", c_int),    # rf_rope_scaling
        ("rope_factor", c_float),
    ]


class rf_encoding(Structure):
    _fields_ = [
        ("ids", POINTER(c_int32)),
        ("type_ids", POINTER(c_int32)),
        ("mask", POINTER(c_int32)),
        ("start", POINTER(c_int32)),
        ("end", POINTER(c_int32)),
        ("n", c_int32),
        ("cap", c_int32),
        ("scratch", c_void_p),
    ]


class rf_context_params(Structure):
    _fields_ = [
        ("max_batch", c_int32),
        ("max_seq_len", c_int32),
        ("n_threads", c_int32),
        ("skip_padding", c_bool),
        ("compute", c_int32),
        ("extend_positions", c_bool),
        ("rope_scaling", c_int32),  # rf_rope_scaling
        ("rope_factor", c_float),
    ]


class rf_batch(Structure):
    _fields_ = [
        ("batch", c_int32),
        ("seq_len", c_int32),
        ("input_ids", POINTER(c_int32)),
        ("token_type_ids", POINTER(c_int32)),
        ("attention_mask", POINTER(c_int32)),
    ]


class rf_outputs(Structure):
    _fields_ = [
        ("last_hidden_state", POINTER(c_float)),
        ("hidden_states", POINTER(c_float)),
        ("pooled", POINTER(c_float)),
        ("logits", POINTER(c_float)),
        ("start_logits", POINTER(c_float)),
        ("end_logits", POINTER(c_float)),
        ("mlm_positions", POINTER(c_int32)),
        ("n_mlm_positions", c_int32),
    ]


class rf_text(Structure):
    _fields_ = [
        ("text", c_char_p),
        ("text_len", c_size_t),
        ("pair", c_char_p),
        ("pair_len", c_size_t),
    ]


class rf_item_status(Structure):
    _fields_ = [("status", c_int), ("error", rf_error)]


class rf_pipeline_params(Structure):
    _fields_ = [
        ("context", rf_context_params),  # n_threads, compute, the positions
        ("max_length", c_int32),
        ("batch_size", c_int32),
        ("window", c_int32),
        ("stride", c_int32),
        ("truncation_side", c_int32),
    ]


class rf_rerank_params(Structure):
    _fields_ = [
        ("raw_scores", c_bool),
        ("positive_label", c_int32),
        ("pooling", c_int),       # rf_pooling
    ]


class rf_rerank_hit(Structure):
    _fields_ = [("index", c_int32), ("score", c_float)]


class rf_pipeline_stats(Structure):
    _fields_ = [
        ("inputs", c_int64),
        ("tokens", c_int64),
        ("batches", c_int64),
        ("tokenize_seconds", c_double),
        ("forward_seconds", c_double),
        ("windows", c_int64),
        ("windowed_inputs", c_int64),
    ]


class rf_fill_mask_result(Structure):
    _fields_ = [
        ("n_masks", c_int32),
        ("top_k", c_int32),
        ("positions", POINTER(c_int32)),
        ("ids", POINTER(c_int32)),
        ("scores", POINTER(c_float)),
        ("sequence", c_char_p),
    ]


class rf_token_tag(Structure):
    _fields_ = [
        ("id", c_int32),
        ("label", c_int32),
        ("score", c_float),
        ("start", c_int32),
        ("end", c_int32),
    ]


class rf_entity(Structure):
    _fields_ = [
        ("type", c_void_p),  # not NUL-terminated: type_len bytes
        ("type_len", c_int32),
        ("first", c_int32),
        ("last", c_int32),
        ("score", c_float),
        ("start", c_int32),
        ("end", c_int32),
    ]


class rf_ner_result(Structure):
    _fields_ = [
        ("n_tokens", c_int32),
        ("tokens", POINTER(rf_token_tag)),
        ("n_entities", c_int32),
        ("entities", POINTER(rf_entity)),
    ]


class rf_qa_result(Structure):
    _fields_ = [
        ("score", c_float),
        ("start", c_int32),
        ("end", c_int32),
        ("byte_start", c_int32),
        ("byte_end", c_int32),
        ("start_token", c_int32),
        ("end_token", c_int32),
    ]


class rf_triplet(Structure):
    _fields_ = [("doc", c_char_p * 3), ("len", c_size_t * 3)]


class rf_scm_result(Structure):
    _fields_ = [("prediction", c_int),  # rf_scm_prediction: 0, or the letter 'B' / 'C'
                ("sim_ab", c_float), ("sim_ac", c_float)]


rf_progress_fn = ctypes.CFUNCTYPE(None, c_void_p, c_int64, c_int64)


class rf_scm_params(Structure):
    _fields_ = [
        ("mode", c_int),      # rf_scm_mode
        ("pooling", c_int),   # rf_pooling
        ("progress", rf_progress_fn),
        ("progress_user", c_void_p),
    ]


class rf_sentence_config(Structure):
    _fields_ = [
        ("present", c_bool),
        ("pooling", c_int32),      # rf_pooling
        ("normalize", c_bool),
        ("max_seq_length", c_int32),
        ("do_lower_case", c_bool),
        ("n_prompts", c_int32),
        ("prompt_names", POINTER(c_char_p)),
        ("prompts", POINTER(c_char_p)),
        ("default_prompt_name", c_char_p),
    ]


class rf_blas_info(Structure):
    _fields_ = [
        ("core", c_char_p),
        ("config", c_char_p),
        ("threads", c_int32),
        ("cpu_count", c_int32),
    ]


# Every struct above, by its C name, for the layout test.
STRUCTS = [rf_error, rf_hparams, rf_encoding, rf_context_params, rf_batch, rf_outputs, rf_text,
           rf_item_status, rf_pipeline_params, rf_pipeline_stats, rf_fill_mask_result,
           rf_token_tag, rf_entity, rf_ner_result, rf_qa_result, rf_triplet, rf_scm_result,
           rf_scm_params, rf_sentence_config, rf_blas_info]

# ==== Functions ====

_model_p = c_void_p
_err_p = POINTER(rf_error)
_items_p = POINTER(rf_item_status)
_texts_p = POINTER(rf_text)
_f32_p = POINTER(c_float)


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


rf_version = _declare("rf_version", c_char_p)
rf_version_matches = _declare("rf_version_matches", c_bool, c_int32, c_int32)
if not rf_version_matches(RF_VERSION_MAJOR, RF_VERSION_MINOR):
    raise ImportError("roformer: %s is version %s; this package needs %d.%d or a later %d.x"
                      % (library_path, rf_version().decode(), RF_VERSION_MAJOR, RF_VERSION_MINOR,
                         RF_VERSION_MAJOR))

rf_status_string = _declare("rf_status_string", c_char_p, c_int)
rf_activation_name = _declare("rf_activation_name", c_char_p, c_int)
rf_norm_type_name = _declare("rf_norm_type_name", c_char_p, c_int)
rf_rope_scaling_name = _declare("rf_rope_scaling_name", c_char_p, c_int)
rf_head_name = _declare("rf_head_name", c_char_p, c_int)
rf_tokenizer_mode_name = _declare("rf_tokenizer_mode_name", c_char_p, c_int)
rf_dtype_name = _declare("rf_dtype_name", c_char_p, c_int)

rf_model_load = _declare("rf_model_load", c_int, c_char_p, POINTER(_model_p), _err_p)
rf_model_free = _declare("rf_model_free", None, _model_p)
rf_model_hparams = _declare("rf_model_hparams", POINTER(rf_hparams), _model_p)
rf_model_label = _declare("rf_model_label", c_char_p, _model_p, c_int32)
rf_model_token = _declare("rf_model_token", c_char_p, _model_p, c_int32)
rf_model_tensor_count = _declare("rf_model_tensor_count", c_int32, _model_p)
rf_model_sentence_config = _declare("rf_model_sentence_config", POINTER(rf_sentence_config),
                                    _model_p)
rf_pooling_name = _declare("rf_pooling_name", c_char_p, c_int)

rf_tokenize = _declare("rf_tokenize", c_int, _model_p, c_char_p, c_size_t, c_char_p, c_size_t,
                       c_int32, POINTER(rf_encoding), _err_p)
rf_encoding_free = _declare("rf_encoding_free", None, POINTER(rf_encoding))
rf_tokenize_truncated = _declare("rf_tokenize_truncated", c_int, _model_p, c_char_p, c_size_t,
                                 c_char_p, c_size_t, c_int32, c_int, POINTER(rf_encoding), _err_p)

rf_context_default_params = _declare("rf_context_default_params", rf_context_params)
rf_context_create = _declare("rf_context_create", c_int, _model_p, POINTER(rf_context_params),
                             POINTER(c_void_p), _err_p)
rf_context_length_limit = _declare("rf_context_length_limit", c_int32, _model_p,
                                   POINTER(rf_context_params))
rf_context_resize = _declare("rf_context_resize", c_int, c_void_p, c_int32, c_int32, _err_p)
rf_context_free = _declare("rf_context_free", None, c_void_p)
rf_forward = _declare("rf_forward", c_int, c_void_p, POINTER(rf_batch), POINTER(rf_outputs), _err_p)

rf_pipeline_default_params = _declare("rf_pipeline_default_params", rf_pipeline_params)
rf_pipeline_create = _declare("rf_pipeline_create", c_int, _model_p, POINTER(rf_pipeline_params),
                              POINTER(c_void_p), _err_p)
rf_pipeline_free = _declare("rf_pipeline_free", None, c_void_p)
rf_pipeline_get_stats = _declare("rf_pipeline_get_stats", None, c_void_p,
                                 POINTER(rf_pipeline_stats))

rf_embed = _declare("rf_embed", c_int, c_void_p, _texts_p, c_int32, c_int, c_bool, _f32_p,
                    _items_p, _err_p)
rf_similarity = _declare("rf_similarity", c_int, c_void_p, _texts_p, c_int32, c_int, _f32_p,
                         _items_p, _err_p)
rf_classify = _declare("rf_classify", c_int, c_void_p, _texts_p, c_int32, _f32_p, _items_p, _err_p)
rf_classify_logits = _declare("rf_classify_logits", c_int, c_void_p, _texts_p, c_int32, _f32_p,
                              _items_p, _err_p)
rf_rerank_default_params = _declare("rf_rerank_default_params", rf_rerank_params)
rf_rerank_scoring_of = _declare("rf_rerank_scoring_of", c_int, _model_p)
rf_rerank_score = _declare("rf_rerank_score", c_int, c_void_p, _texts_p, c_int32,
                           POINTER(rf_rerank_params), _f32_p, _items_p, _err_p)
rf_rerank_sort = _declare("rf_rerank_sort", c_int, _f32_p, c_int32, c_int32,
                          POINTER(rf_rerank_hit), POINTER(c_int32), _err_p)
rf_fill_mask = _declare("rf_fill_mask", c_int, c_void_p, _texts_p, c_int32, c_int32,
                        POINTER(rf_fill_mask_result), _items_p, _err_p)
rf_fill_mask_result_free = _declare("rf_fill_mask_result_free", None, POINTER(rf_fill_mask_result))
rf_token_classify = _declare("rf_token_classify", c_int, c_void_p, _texts_p, c_int32,
                             POINTER(rf_ner_result), _items_p, _err_p)
rf_ner_result_free = _declare("rf_ner_result_free", None, POINTER(rf_ner_result))
rf_qa = _declare("rf_qa", c_int, c_void_p, _texts_p, c_int32, c_int32, c_int32,
                 POINTER(rf_qa_result), _items_p, _err_p)
rf_scm_default_params = _declare("rf_scm_default_params", rf_scm_params)
rf_scm = _declare("rf_scm", c_int, c_void_p, POINTER(rf_triplet), c_int32, POINTER(rf_scm_params),
                  POINTER(rf_scm_result), POINTER(c_int32), _items_p, _err_p)
rf_scm_embed_documents = _declare("rf_scm_embed_documents", c_int, c_void_p, _texts_p, c_int32,
                                  c_int, _f32_p, _items_p, _err_p)
rf_scm_score = _declare("rf_scm_score", c_int, _f32_p, c_int32, _items_p, POINTER(c_int32),
                        c_int32, POINTER(rf_scm_result), _items_p, _err_p)

# the jobs on the caller's encodings (roformer.h: each after its text form, in "Jobs"):
# each gives the bits of its text twin above when the encodings are what the
# pipeline makes of the texts
_encs_p = POINTER(rf_encoding)
rf_embed_encodings = _declare("rf_embed_encodings", c_int, c_void_p, _encs_p, c_int32, c_int,
                              c_bool, _f32_p, _items_p, _err_p)
rf_token_embeddings = _declare("rf_token_embeddings", c_int, c_void_p, _encs_p, c_int32, _f32_p,
                               _items_p, _err_p)
rf_embed_windowed_encodings = _declare("rf_embed_windowed_encodings", c_int, c_void_p, _encs_p,
                                       c_int32, c_int, c_bool, _f32_p, _items_p, _err_p)
rf_classify_encodings = _declare("rf_classify_encodings", c_int, c_void_p, _encs_p, c_int32,
                                 _f32_p, _items_p, _err_p)
rf_classify_logits_encodings = _declare("rf_classify_logits_encodings", c_int, c_void_p, _encs_p,
                                        c_int32, _f32_p, _items_p, _err_p)
rf_fill_mask_encodings = _declare("rf_fill_mask_encodings", c_int, c_void_p, _texts_p, _encs_p,
                                  c_int32, c_int32, POINTER(rf_fill_mask_result), _items_p, _err_p)
rf_token_classify_encodings = _declare("rf_token_classify_encodings", c_int, c_void_p, _texts_p,
                                       _encs_p, c_int32, POINTER(rf_ner_result), _items_p, _err_p)
rf_qa_encodings = _declare("rf_qa_encodings", c_int, c_void_p, _texts_p, _encs_p, c_int32, c_int32,
                           c_int32, POINTER(rf_qa_result), _items_p, _err_p)
rf_rerank_score_encodings = _declare("rf_rerank_score_encodings", c_int, c_void_p, _encs_p,
                                     c_int32, POINTER(rf_rerank_params), _f32_p, _items_p, _err_p)
rf_similarity_encodings = _declare("rf_similarity_encodings", c_int, c_void_p, _encs_p, c_int32,
                                   c_int, _f32_p, _items_p, _err_p)
rf_scm_encodings = _declare("rf_scm_encodings", c_int, c_void_p, POINTER(rf_triplet), _encs_p,
                            c_int32, POINTER(rf_scm_params), POINTER(rf_scm_result),
                            POINTER(c_int32), _items_p, _err_p)

# the defaults every front end asks for (roformer.h, "Defaults")
rf_model_default_pooling = _declare("rf_model_default_pooling", c_int, _model_p)
rf_model_check_pooling = _declare("rf_model_check_pooling", c_int, _model_p, c_int, _err_p)
rf_model_default_max_length = _declare("rf_model_default_max_length", c_int32, _model_p)
rf_model_max_input_length = _declare("rf_model_max_input_length", c_int32, _model_p)
rf_window_default_stride = _declare("rf_window_default_stride", c_int32, c_int32)
rf_model_rerank_label = _declare("rf_model_rerank_label", c_int32, _model_p)

rf_top_k = _declare("rf_top_k", c_int32, _f32_p, c_int32, c_int32, POINTER(c_int32))
rf_cosine = _declare("rf_cosine", c_float, _f32_p, _f32_p, c_int32)
rf_blas_get_info = _declare("rf_blas_get_info", rf_blas_info)

# Pointer types the model code builds arguments with.
c_int32_p = POINTER(c_int32)
c_float_p = _f32_p
c_uint8_p = POINTER(c_uint8)
