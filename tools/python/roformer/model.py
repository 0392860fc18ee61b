"""roformer.Model: a loaded model and the jobs (encode, classify, similarity,
predict and rank as a cross-encoder, scm, fill-mask, NER, QA, tokenize,
forward) in the conventions Python users know (sentence-transformers'
encode, HF pipelines' result dicts, HF tokenizers' dict of lists).

This file is the class itself: loading and its options, lifetime, each
thread's library objects, what the model is, and the batch runner that
every job goes through. The jobs are mixins beside it, one file per kind:
_encode.py (encode, prompts), _jobs.py (classify, similarity, fill_mask,
ner, qa), _cross_encoder.py (predict, rank), _scm.py (scm) and _forward.py
(tokenize, forward); _inputs.py turns the callers' inputs into the
library's, _errors.py holds Error and the errors= policy, _state.py the
handle and the per-thread objects that close() frees, _progress.py the
progress bars.

What it does not do: no computation of its own. Every number comes from the
C library (see _capi.py), called the way the `roformer` CLI calls it, so
results are the CLI's float32 values exactly: inputs go to the library in
the CLI's chunks (max(64, 8 x batch_size) inputs per call), because the
engine's numbers for one input may differ in the last bits with the other
inputs of its batch.

Threads: the model is loaded once and shared; each Python thread that calls
a method gets its own pipelines and context (thread-local), freed when the
thread ends or the model is closed. The GIL is released inside every C call
(ctypes does that), so threads run the model in parallel.
"""

import os
import threading
import weakref
from ctypes import byref, c_void_p

from . import _capi as C
from ._cross_encoder import _CrossEncoderMethods
from ._encode import _EncodeMethods
from ._errors import Error, _raise, _status_name
from ._forward import _ForwardMethods
from ._inputs import _Texts
from ._jobs import _JobMethods
from ._scm import _ScmMethods
from ._state import _Call, _Slots, _State, _Ticket

# The names this module defined before the jobs moved beside it, kept
# importable from here for code that imports them from roformer.model.
from ._encode import _OUTPUT_VALUES, _prefixed, _torch  # noqa: F401
from ._errors import _ERRORS, _check_errors, _settle, _status_code  # noqa: F401
from ._forward import _HEADS  # noqa: F401
from ._inputs import _as_str, _c_array, _is_single, _text_pair, _triplet, _utf8  # noqa: F401
from ._progress import _Progress, _tqdm  # noqa: F401
from ._scm import _scm_results, _scm_score  # noqa: F401

_POOLINGS = {"cls": C.RF_POOLING_CLS, "mean": C.RF_POOLING_MEAN, "max": C.RF_POOLING_MAX,
             "last": C.RF_POOLING_LAST, "pooler": C.RF_POOLING_POOLER}
_COMPUTES = {"f32": C.RF_COMPUTE_F32, "bf16": C.RF_COMPUTE_BF16, "int8": C.RF_COMPUTE_INT8}
_TRUNCATION_SIDES = {"right": C.RF_TRUNCATE_RIGHT, "left": C.RF_TRUNCATE_LEFT}
_ROPE_SCALINGS = {None: C.RF_ROPE_SCALING_DEFAULT, "none": C.RF_ROPE_SCALING_NONE,
                  "linear": C.RF_ROPE_SCALING_LINEAR, "ntk": C.RF_ROPE_SCALING_NTK}
_PIPELINES_PER_THREAD = 4  # distinct (batch_size, max_length) kept per thread


def _chunks(n, batch_size):
    """The CLI's chunks: max(64, 8 x batch_size) inputs per library call."""
    step = max(64, 8 * batch_size)
    return [(i, min(n, i + step)) for i in range(0, n, step)]


class Model(_EncodeMethods, _JobMethods, _CrossEncoderMethods, _ScmMethods,
            _ForwardMethods):
    """A RoFormer model: a converted .gguf file or a HuggingFace checkpoint
    directory (converted in memory).

        m = roformer.Model("model.gguf", threads=None, compute="f32", max_length=None,
                           truncation_direction="right")

    threads: compute threads per call (None: all cores); compute: the
    encoder layers' arithmetic, "f32", "bf16" (CPUs with AVX512_BF16) or
    "int8" (CPUs with AVX2: the four Linear products of every layer in 8-bit
    integers, as the CLI's --compute int8); on a CPU without the instructions
    the constructor raises Error with the library's message. max_length:
    truncate every input to that many tokens (None: no truncation; an input
    longer than the model's maximum then fails); truncation_direction:
    which end max_length cuts, "right" (keep the first tokens) or "left"
    (keep the last), as the CLI's --truncation-direction. A context manager;
    close() frees it.

    Long inputs (docs/long-inputs.md): extend_positions=True accepts inputs
    longer than the model's max_position, the rotary angles computed past
    it (what the model makes of them depends on the checkpoint);
    rope_scaling "none", "linear" or "ntk" with rope_factor F stretches the
    trained positions instead (None: the model's own); window=N, stride=S
    cut a text longer than N tokens into overlapping windows that encode(),
    classify(), similarity() and scm() pool into one result (the mean of
    the window vectors or logits); stats()["windows"] counts them.
    """

    def __init__(self, path, threads=None, compute="f32", max_length=None,
                 truncation_direction="right", extend_positions=False,
                 rope_scaling=None, rope_factor=None, window=None, stride=None):
        if truncation_direction not in _TRUNCATION_SIDES:
            raise ValueError('truncation_direction must be "right" or "left", not %r'
                             % (truncation_direction,))
        if compute not in _COMPUTES:
            raise ValueError('compute must be "f32", "bf16" or "int8", not %r' % (compute,))
        if threads is not None and (not isinstance(threads, int)
                                    or not 1 <= threads <= C.RF_MAX_THREADS):
            raise ValueError("threads must be an integer from 1 to %d or None, not %r"
                             % (C.RF_MAX_THREADS, threads))
        if rope_scaling not in _ROPE_SCALINGS:
            raise ValueError('rope_scaling must be None, "none", "linear" or "ntk", not %r'
                             % (rope_scaling,))
        if rope_factor is not None and not (isinstance(rope_factor, (int, float))
                                            and 0 < rope_factor <= 1024):
            raise ValueError("rope_factor must be a number above 0 and at most 1024, not %r"
                             % (rope_factor,))
        if window is not None and (not isinstance(window, int) or window <= 2):
            raise ValueError("window must be an integer above 2, not %r" % (window,))
        if stride is not None and (window is None or not isinstance(stride, int)
                                   or not 0 <= stride < window - 2):
            raise ValueError("stride must be an integer from 0 to window - 3 with a window, not %r"
                             % (stride,))
        self.path = os.fsdecode(path)
        self.threads = threads
        self.compute = compute
        self.truncation_direction = truncation_direction
        self.extend_positions = bool(extend_positions)
        self.rope_scaling, self.rope_factor = rope_scaling, rope_factor
        self.window = window
        if window and stride is None:  # the library's default
            stride = C.rf_window_default_stride(window)
        self.stride = stride if window else None
        handle = c_void_p()
        err = C.rf_error()
        st = C.rf_model_load(os.fsencode(self.path), byref(handle), byref(err))
        if st != C.RF_OK:
            _raise(st, err)
        self._state = _State(handle)
        self._finalizer = weakref.finalize(self, _State.close, self._state)
        self._local = threading.local()
        # a copy: the model's own struct goes with the model at close()
        hp = C.rf_hparams.from_buffer_copy(C.rf_model_hparams(handle).contents)
        self._hp = hp
        self.sentence_config = _sentence_config(handle)
        if max_length is None and not window:  # the library's default
            max_length = C.rf_model_default_max_length(handle) or None
        cp = self._positions(C.rf_context_default_params())
        self._limit = C.rf_context_length_limit(handle, byref(cp))
        if max_length is not None and not 2 <= max_length <= self._limit:
            self.close()
            raise ValueError("max_length must be from 2 to the model's maximum of %d, not %r%s"
                             % (self._limit, max_length,
                                " (extend_positions=True allows more)"
                                if self._limit == hp.max_position else ""))
        if window is not None and window > self._limit:
            self.close()
            raise ValueError("window %d is over the model's maximum of %d" % (window, self._limit))
        self.max_length = max_length
        if compute != "f32":
            self._check_compute()
        self.hidden_size = hp.hidden_size
        self.labels = [self._label(i) for i in range(hp.num_labels)]
        self.info = self._info()
        self.last_scm_documents = None  # distinct documents the last scm() embedded
        sc = self.sentence_config or {}
        self._prompts = dict(sc.get("prompts", {}))
        # a key of prompts that encode() uses by default
        self.default_prompt_name = sc.get("default_prompt_name")

    # ==== Lifetime ====

    def close(self):
        """Frees the model and every thread's contexts; waits for calls in
        progress in other threads to end. Later calls raise Error."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __reduce__(self):
        raise TypeError("a roformer.Model holds a loaded library model and is not picklable; "
                        "send its path (roformer.dask loads one model per worker process)")

    def __repr__(self):
        return "roformer.Model(%r, head=%r, hidden_size=%d)" % (
            self.path, self.info["head"], self.hidden_size)

    def _positions(self, params):
        """params (an rf_context_params, a pipeline's .context too) with the
        model's position options."""
        params.extend_positions = int(self.extend_positions)
        params.rope_scaling = _ROPE_SCALINGS[self.rope_scaling]
        params.rope_factor = float(self.rope_factor or 0.0)
        return params

    def _check_compute(self):
        """Creates and frees a one-token context, so that a CPU without the
        compute type's instructions fails at load, with the library's
        message, rather than at the first call. (The model's packed weights,
        made by the first context, stay for the later ones.)"""
        cp = C.rf_context_default_params()
        cp.max_seq_len, cp.n_threads, cp.compute = 1, 1, _COMPUTES[self.compute]
        ctx = c_void_p()
        err = C.rf_error()
        st = C.rf_context_create(self._state.handle, byref(cp), byref(ctx), byref(err))
        if st != C.RF_OK:
            self.close()
            _raise(st, err)
        C.rf_context_free(ctx)

    # ==== Each thread's library objects ====

    def _thread_slots(self):
        ticket = getattr(self._local, "ticket", None)
        if ticket is None:
            slot = _Slots()
            ticket = _Ticket()
            ticket.slot = slot
            with self._state.cond:
                self._state.slots.add(slot)
            weakref.finalize(ticket, self._state.release, slot)
            self._local.ticket = ticket
        return ticket.slot

    def _pipeline(self, slots, batch_size, max_length):
        if not isinstance(batch_size, int) or not 1 <= batch_size <= 4096:
            raise ValueError("batch_size must be an integer from 1 to 4096, not %r" % (batch_size,))
        key = (batch_size, max_length or 0)
        pl = slots.pipelines.get(key)
        if pl is not None:
            slots.pipelines.move_to_end(key)
            return pl
        params = C.rf_pipeline_default_params()
        self._positions(params.context)
        params.context.n_threads = self.threads or 0
        params.context.compute = _COMPUTES[self.compute]
        params.window, params.stride = self.window or 0, self.stride or 0
        params.max_length = max_length or 0
        params.batch_size = batch_size
        params.truncation_side = _TRUNCATION_SIDES[self.truncation_direction]
        pl = c_void_p()
        err = C.rf_error()
        st = C.rf_pipeline_create(self._state.handle, byref(params), byref(pl), byref(err))
        if st != C.RF_OK:
            _raise(st, err)
        slots.pipelines[key] = pl
        if len(slots.pipelines) > _PIPELINES_PER_THREAD:
            C.rf_pipeline_free(slots.pipelines.popitem(last=False)[1])
        return pl

    def _context(self, slots, B, L):
        """The thread's forward context, grown to hold B x L tokens."""
        if slots.ctx and B <= slots.ctx_batch and (L <= slots.ctx_len
                                                   or slots.ctx_len == self._limit):
            return slots.ctx
        nb, nl = max(B, slots.ctx_batch), min(max(L, slots.ctx_len), self._limit)
        err = C.rf_error()
        if slots.ctx:
            st = C.rf_context_resize(slots.ctx, nb, nl, byref(err))
        else:
            cp = self._positions(C.rf_context_default_params())
            cp.max_batch, cp.max_seq_len = nb, nl
            cp.n_threads = self.threads or 0
            cp.compute = _COMPUTES[self.compute]
            ctx = c_void_p()
            st = C.rf_context_create(self._state.handle, byref(cp), byref(ctx), byref(err))
            if st == C.RF_OK:
                slots.ctx = ctx
        if st != C.RF_OK:
            _raise(st, err)
        slots.ctx_batch, slots.ctx_len = nb, nl
        return slots.ctx

    # ==== What the model is ====

    def _label(self, i):
        s = C.rf_model_label(self._state.handle, i)
        return s.decode() if s else "LABEL_%d" % i

    def _token(self, token_id):
        s = C.rf_model_token(self._state.handle, token_id)
        return s.decode("utf-8", "replace") if s else ""

    def _info(self):
        hp, h = self._hp, self._state.handle

        def name(fn, v):
            return fn(v).decode()

        return {
            "file": self.path,
            "architecture": "roformer",
            "head": name(C.rf_head_name, hp.head),
            "labels": list(self.labels),
            "vocab_size": hp.vocab_size,
            "embedding_size": hp.embedding_size,
            "hidden_size": hp.hidden_size,
            "num_layers": hp.num_layers,
            "num_heads": hp.num_heads,
            "intermediate_size": hp.intermediate_size,
            "max_position": hp.max_position,
            "type_vocab_size": hp.type_vocab_size,
            "layer_norm_eps": hp.layer_norm_eps,
            "norm_type": name(C.rf_norm_type_name, hp.norm_type),
            "use_bias": bool(hp.use_bias),
            "hidden_act": name(C.rf_activation_name, hp.hidden_act),
            "rotary_value": bool(hp.rotary_value),
            "pooler": name(C.rf_activation_name, hp.pooler_act) if hp.has_pooler else None,
            "sentence_transformers": self.sentence_config,
            "tokenizer": {
                "mode": name(C.rf_tokenizer_mode_name, hp.tokenizer),
                "do_lower_case": bool(hp.do_lower_case),
                "special_tokens": {"[PAD]": hp.pad_id, "[UNK]": hp.unk_id, "[CLS]": hp.cls_id,
                                   "[SEP]": hp.sep_id, "[MASK]": hp.mask_id},
            },
            "dtype": name(C.rf_dtype_name, hp.dtype),
            "rope_scaling": name(C.rf_rope_scaling_name, hp.rope_scaling),
            "rope_factor": hp.rope_factor,
            "long_inputs": {"extend_positions": self.extend_positions,
                            "rope_scaling": self.rope_scaling, "rope_factor": self.rope_factor,
                            "window": self.window, "stride": self.stride,
                            "max_input_length": self._limit},
            "tensors": C.rf_model_tensor_count(h),
            "blas_core": (C.rf_blas_get_info().core or b"").decode(),
        }

    def _pooling(self, pooling):
        """The RF_POOLING_* value of `pooling`: the library's default for
        the model when None, else the name, checked by the library."""
        if pooling is None:
            return C.rf_model_default_pooling(self._state.handle)
        if pooling not in _POOLINGS:
            raise ValueError('pooling must be "cls", "mean", "max", "last" or "pooler", not %r'
                             % (pooling,))
        err = C.rf_error()
        if C.rf_model_check_pooling(self._state.handle, _POOLINGS[pooling], byref(err)) != C.RF_OK:
            raise ValueError('pooling="%s": %s' % (pooling, err.message.decode("utf-8", "replace")))
        return _POOLINGS[pooling]

    def _document_max_length(self):
        """Where scm truncates documents when not told: nowhere with windows,
        else max_length, else the library's rf_model_max_input_length."""
        if self.window:
            return None
        return self.max_length or C.rf_model_max_input_length(self._state.handle)

    # ==== The batch runner ====

    def _run(self, pairs, batch_size, max_length, call, progress=None, whole=False):
        """Runs `pairs` through call(pipeline, texts, items, lo, hi, err)
        chunk by chunk (the CLI's chunks; with `whole`, in one call).
        Returns errs: per input None or (status name, message)."""
        errs = [None] * len(pairs)
        with _Call(self) as slots:
            pl = self._pipeline(slots, batch_size, max_length)
            chunks = [(0, len(pairs))] if whole and pairs else _chunks(len(pairs), batch_size)
            for lo, hi in chunks:
                texts = _Texts(pairs[lo:hi])
                items = (C.rf_item_status * (hi - lo))()
                err = C.rf_error()
                st = call(pl, texts, items, lo, hi, err)
                if st != C.RF_OK:
                    _raise(st, err)
                for j in range(hi - lo):
                    if items[j].status != C.RF_OK:
                        errs[lo + j] = (_status_name(items[j].status),
                                        items[j].error.message.decode("utf-8", "replace"))
                if progress:
                    progress.update(hi)
        return errs

    def stats(self):
        """Where the current thread's pipelines spent their time: inputs,
        tokens, batches, tokenize_seconds, forward_seconds, and with a window
        windows (run for texts longer than it) and windowed_inputs (texts
        cut), summed."""
        total = dict.fromkeys(("inputs", "tokens", "batches", "tokenize_seconds",
                               "forward_seconds", "windows", "windowed_inputs"), 0)
        with _Call(self) as slots:
            for pl in slots.pipelines.values():
                s = C.rf_pipeline_stats()
                C.rf_pipeline_get_stats(pl, byref(s))
                for k in total:
                    total[k] += getattr(s, k)
        return total


def _sentence_config(handle):
    """The model's sentence-transformers settings as a dict ("pooling",
    "normalize", "max_seq_length" (None: not given), "do_lower_case",
    "prompts", "default_prompt_name"), or None for a plain checkpoint."""
    sc = C.rf_model_sentence_config(handle).contents
    if not sc.present:
        return None
    return {
        "pooling": C.rf_pooling_name(sc.pooling).decode(),
        "normalize": bool(sc.normalize),
        "max_seq_length": sc.max_seq_length or None,
        "do_lower_case": bool(sc.do_lower_case),
        "prompts": {sc.prompt_names[i].decode(): sc.prompts[i].decode()
                    for i in range(sc.n_prompts)},
        "default_prompt_name": (sc.default_prompt_name.decode()
                                if sc.default_prompt_name else None),
    }


__all__ = ["Model", "Error"]
