"""roformer.Model: a loaded model and the jobs (encode, classify, similarity,
predict and rank as a cross-encoder, scm, fill-mask, NER, QA, tokenize, forward) in the conventions Python users
know (sentence-transformers' encode, HF pipelines' result dicts, HF
tokenizers' dict of lists).

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

import collections
import os
import sys
import threading
import weakref
from ctypes import byref, c_void_p, string_at

import numpy as np

from . import _capi as C
from . import quantization, util

_POOLINGS = {"cls": C.RF_POOLING_CLS, "mean": C.RF_POOLING_MEAN, "max": C.RF_POOLING_MAX,
             "last": C.RF_POOLING_LAST, "pooler": C.RF_POOLING_POOLER}
_COMPUTES = {"f32": C.RF_COMPUTE_F32, "bf16": C.RF_COMPUTE_BF16, "int8": C.RF_COMPUTE_INT8}
_TRUNCATION_SIDES = {"right": C.RF_TRUNCATE_RIGHT, "left": C.RF_TRUNCATE_LEFT}
_ROPE_SCALINGS = {None: C.RF_ROPE_SCALING_DEFAULT, "none": C.RF_ROPE_SCALING_NONE,
                  "linear": C.RF_ROPE_SCALING_LINEAR, "ntk": C.RF_ROPE_SCALING_NTK}
_HEADS = {"none": C.RF_HEAD_NONE, "mlm": C.RF_HEAD_MLM, "cls": C.RF_HEAD_SEQ_CLS,
          "token": C.RF_HEAD_TOKEN_CLS, "qa": C.RF_HEAD_QA}
_ERRORS = ("raise", "skip")
_OUTPUT_VALUES = ("sentence_embedding", "token_embeddings", None)
_PIPELINES_PER_THREAD = 4  # distinct (batch_size, max_length) kept per thread


class Error(Exception):
    """A failure reported by the library. `message` is the library's own
    one-line message; `status` its rf_status name (e.g. "bad input");
    `index` the position of the failing input in a batch call (else None)."""

    def __init__(self, message, status=None, index=None):
        self.message = message
        self.status = status
        self.index = index
        super().__init__(message if index is None else "inputs[%d]: %s" % (index, message))


def _status_name(status):
    s = C.rf_status_string(status)
    return s.decode() if s else str(status)


def _raise(status, err):
    raise Error(err.message.decode("utf-8", "replace"), _status_name(status))


def _utf8(s, what="text"):
    """str (lone surrogates kept, so the library reports them as invalid
    UTF-8 as it does for the CLI's input) or bytes, to bytes."""
    if isinstance(s, bytes):
        return s
    if isinstance(s, str):
        return s.encode("utf-8", "surrogatepass")
    raise TypeError("%s must be str or bytes, not %s" % (what, type(s).__name__))


def _as_str(s):
    return s.decode("utf-8", "replace") if isinstance(s, bytes) else s


def _is_single(x):
    return isinstance(x, (str, bytes, tuple, dict))


def _text_pair(x):
    """One input of a text job: a text, an (a, b) tuple, or a dict with
    "text" and optional "text_pair" (HF's form)."""
    if isinstance(x, dict):
        if "text" not in x:
            raise TypeError('an input dict needs "text" (and optionally "text_pair")')
        return x["text"], x.get("text_pair")
    if isinstance(x, tuple):
        if len(x) != 2:
            raise TypeError("a text pair is a tuple of two texts, not %d" % len(x))
        return x
    return x, None


class _Texts:
    """An rf_text array over UTF-8 copies that live as long as it does."""

    def __init__(self, pairs):
        self.keep = []
        self.array = (C.rf_text * max(len(pairs), 1))()
        for i, (a, b) in enumerate(pairs):
            ab = _utf8(a)
            self.keep.append(ab)
            self.array[i].text = ab
            self.array[i].text_len = len(ab)
            if b is not None:
                bb = _utf8(b, "text pair")
                self.keep.append(bb)
                self.array[i].pair = bb
                self.array[i].pair_len = len(bb)
        self.n = len(pairs)


class _Slots:
    """One thread's library objects: pipelines by (batch_size, max_length),
    a context for forward, an encoding for tokenize."""

    def __init__(self):
        self.pipelines = collections.OrderedDict()
        self.ctx = None
        self.ctx_batch = self.ctx_len = 0
        self.encoding = C.rf_encoding()

    def free(self):
        for pl in self.pipelines.values():
            C.rf_pipeline_free(pl)
        self.pipelines.clear()
        if self.ctx:
            C.rf_context_free(self.ctx)
            self.ctx = None
        C.rf_encoding_free(byref(self.encoding))


class _Ticket:
    """Lives in one thread's threading.local; when the thread ends it goes,
    and its finalizer hands that thread's _Slots back to the model."""


class _State:
    """The model handle and every thread's slots; what close() frees. Kept
    apart from Model so that finalizers can hold it without holding the
    Model."""

    def __init__(self, handle):
        self.handle = handle
        self.cond = threading.Condition()
        self.active = 0
        self.closed = False
        self.slots = set()

    def enter(self):
        with self.cond:
            if self.closed:
                raise Error("the model is closed")
            self.active += 1

    def leave(self):
        with self.cond:
            self.active -= 1
            self.cond.notify_all()

    def release(self, slot):
        with self.cond:
            if slot in self.slots:
                self.slots.discard(slot)
                slot.free()

    def close(self):
        with self.cond:
            if self.closed:
                return
            self.closed = True
            while self.active:
                self.cond.wait()
            for slot in self.slots:
                slot.free()
            self.slots.clear()
            C.rf_model_free(self.handle)
            self.handle = None


class _Call:
    """`with _Call(model) as slots:` the current thread's slots, the model
    kept open (close() waits) for the duration."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.model._state.enter()
        return self.model._thread_slots()

    def __exit__(self, *exc):
        self.model._state.leave()
        return False


def _tqdm():
    """tqdm.tqdm when tqdm is installed, else None."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class _Progress:
    """Inputs done out of `total` on stderr: a tqdm bar when tqdm is
    installed, else a "\rWHAT: done/total" counter."""

    def __init__(self, show, what, total):
        self.show, self.what, self.total = show, what, total
        self.done = 0
        self.bar = None
        if show:
            tqdm = _tqdm()
            if tqdm is not None and total > 0:
                self.bar = tqdm(total=total, desc=what, unit="input", file=sys.stderr)

    def update(self, done):
        if self.bar is not None:
            self.bar.update(done - self.done)
            if done >= self.total:
                self.bar.close()
        elif self.show:
            sys.stderr.write("\r%s: %d/%d" % (self.what, done, self.total))
            if done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
        self.done = done


def _chunks(n, batch_size):
    """The CLI's chunks: max(64, 8 x batch_size) inputs per library call."""
    step = max(64, 8 * batch_size)
    return [(i, min(n, i + step)) for i in range(0, n, step)]


def _torch():
    """The torch module, or a clear error where it is not installed."""
    try:
        import torch
    except ImportError:
        raise ImportError("convert_to_tensor=True needs PyTorch (Debian: python3-torch); "
                          "without it use convert_to_numpy=True") from None
    return torch


def _prefixed(prefix, x):
    """A prompt put before an input (before the first text of a pair)."""
    if isinstance(x, bytes):
        return _utf8(prefix) + x
    if isinstance(x, tuple) and len(x) == 2:
        return (_prefixed(prefix, x[0]), x[1])
    if isinstance(x, dict) and "text" in x:
        return dict(x, text=_prefixed(prefix, x["text"]))
    if isinstance(x, str):
        return prefix + x
    return x  # not a text: encode reports it


def _check_errors(errors):
    if errors not in _ERRORS:
        raise ValueError('errors must be "raise" or "skip", not %r' % (errors,))


def _settle(results, errs, errors, single):
    """Applies errors="raise"|"skip" to a batch's results (None where an
    input failed) and unwraps a single input."""
    for i, e in enumerate(errs):
        if e is not None and (errors == "raise" or single):
            raise Error(e[1], e[0], None if single else i)
    return results[0] if single else results


class Model:
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

    # ==== Jobs ====

    def encode_items(self, texts, batch_size=32, pooling=None, normalize_embeddings=False,
                     show_progress_bar=False, max_length=None):
        """encode() without the error policy: (array (n, hidden) with NaN rows
        where an input failed, [None or (status, message) per input]). A
        sentence-transformers model with a Normalize module always
        normalizes, as that module does."""
        pairs = [_text_pair(t) for t in texts]
        use = self._pooling(pooling)
        out = np.full((len(pairs), self.hidden_size), np.nan, dtype=np.float32)
        norm = bool(normalize_embeddings) or bool(self.sentence_config
                                                  and self.sentence_config["normalize"])

        def call(pl, t, items, lo, hi, err):
            return C.rf_embed(pl, t.array, t.n, use, norm,
                              out[lo:hi].ctypes.data_as(C.c_float_p), items, byref(err))

        errs = self._run(pairs, batch_size, max_length or self.max_length, call,
                         _Progress(show_progress_bar, "encode", len(pairs)))
        return out, errs

    def encode(self, sentences=None, prompt_name=None, prompt=None, batch_size=32,
               show_progress_bar=None, output_value="sentence_embedding", precision="float32",
               convert_to_numpy=True, convert_to_tensor=False, device=None,
               normalize_embeddings=False, truncate_dim=None, pooling=None, errors="raise",
               texts=None):
        """Sentence embeddings, with sentence-transformers' encode signature:
        a float32 array (n, hidden_size), or (hidden_size,) for one text.

        prompt_name: a key of self.prompts, whose text goes before each
        sentence; prompt: that text itself (it wins over prompt_name); with
        neither, self.prompts[self.default_prompt_name] when a default is
        set. output_value: "sentence_embedding"; "token_embeddings" (per
        sentence a float32 array (tokens, hidden_size) of the last hidden
        states, [CLS] and [SEP] included); None (per sentence a dict of
        "sentence_embedding", "token_embeddings", "input_ids",
        "token_type_ids", "attention_mask"). precision: "float32", "int8",
        "uint8", "binary", "ubinary" (roformer.quantization
        .quantize_embeddings over the whole call's embeddings).
        convert_to_tensor: a torch tensor (needs torch); convert_to_numpy
        False: a list of one array per sentence. device: "cpu" or None.
        normalize_embeddings: unit L2 norm (after truncate_dim; a model with
        a sentence-transformers Normalize module is normalized before it
        anyway). truncate_dim: keep the first that many dimensions
        (Matryoshka-trained models).
        pooling: "cls", "mean", "max", "last", "pooler" or None (the
        model's own: its sentence-transformers pooling when it has one, else
        the CLI's default). A text pair is an (a, b) tuple. errors="skip"
        leaves a NaN row where an input fails (float32 only). texts: the
        earlier name of `sentences`, still taken."""
        _check_errors(errors)
        if (sentences is None) == (texts is None):
            raise TypeError("encode() takes the texts once: sentences (or texts=)")
        if sentences is None:
            sentences = texts
        if isinstance(prompt_name, int) and not isinstance(prompt_name, bool):
            raise TypeError("encode()'s second argument is prompt_name, in sentence-transformers' "
                            "order; give batch_size=%d by name" % prompt_name)
        if device is not None and str(device) != "cpu":
            raise ValueError('device must be "cpu" or None (roformer runs on the CPU), not %r'
                             % (device,))
        if output_value not in _OUTPUT_VALUES:
            raise ValueError('output_value must be "sentence_embedding", "token_embeddings" or '
                             'None, not %r' % (output_value,))
        if precision not in quantization.PRECISIONS:
            raise ValueError("precision must be one of %s, not %r" % (
                ", ".join('"%s"' % p for p in quantization.PRECISIONS), precision))
        if truncate_dim is not None and (not isinstance(truncate_dim, int) or isinstance(
                truncate_dim, bool) or not 1 <= truncate_dim <= self.hidden_size):
            raise ValueError("truncate_dim must be an integer from 1 to the hidden size %d, "
                             "or None, not %r" % (self.hidden_size, truncate_dim))
        if precision != "float32" and errors == "skip":
            raise ValueError('precision %r cannot hold the NaN rows of errors="skip"'
                             % (precision,))
        if convert_to_tensor:
            torch = _torch()
        if show_progress_bar is None:
            show_progress_bar = False
        single = _is_single(sentences)
        items = [sentences] if single else list(sentences)
        prefix = self._prompt(prompt_name, prompt)
        if prefix:
            items = [_prefixed(prefix, x) for x in items]
        if output_value != "sentence_embedding":
            return self._encode_tokens(items, single, output_value, batch_size, pooling,
                                       normalize_embeddings, truncate_dim, show_progress_bar,
                                       errors)
        # normalize after truncating: the library normalizes the full vector
        c_norm = bool(normalize_embeddings) and truncate_dim is None
        out, errs = self.encode_items(items, batch_size, pooling, c_norm, show_progress_bar)
        for i, e in enumerate(errs):
            if e is not None and (errors == "raise" or single):
                raise Error(e[1], e[0], None if single else i)
        if truncate_dim is not None:
            out = np.ascontiguousarray(out[:, :truncate_dim])
            if normalize_embeddings:
                out = util._normalize(out)
        if precision != "float32":
            out = quantization.quantize_embeddings(out, precision)
        if convert_to_tensor:
            t = torch.from_numpy(out)
            return t[0] if single else t
        if not convert_to_numpy:
            return out[0] if single else list(out)
        return out[0] if single else out

    @property
    def prompts(self):
        """Prompt name -> text prepended by encode(prompt_name=...): the
        model's sentence-transformers prompts, which may be changed."""
        return self._prompts

    @prompts.setter
    def prompts(self, value):
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise TypeError("prompts must be a dict of str to str")
        self._prompts = dict(value)

    def _prompt(self, prompt_name, prompt):
        """The text encode() puts before each sentence ("" for none)."""
        if prompt is not None:
            if not isinstance(prompt, str):
                raise TypeError("prompt must be a str, not %s" % type(prompt).__name__)
            return prompt
        if prompt_name is not None:
            if prompt_name not in self._prompts:
                raise ValueError("prompt_name %r is not one of the model's prompts (%s)" % (
                    prompt_name, ", ".join(map(repr, sorted(self._prompts))) or "it has none"))
            return self._prompts[prompt_name]
        if self.default_prompt_name is not None:
            return self._prompts.get(self.default_prompt_name, "")
        return ""

    def _encode_tokens(self, items, single, output_value, batch_size, pooling, normalize,
                       truncate_dim, show_progress_bar, errors):
        """encode() with output_value "token_embeddings" or None: the token
        vectors from forward() on each input's tokens (as tokenize() gives
        them, truncated at max_length), batch_size inputs per pass."""
        if not isinstance(batch_size, int) or not 1 <= batch_size <= 4096:
            raise ValueError("batch_size must be an integer from 1 to 4096, not %r" % (batch_size,))
        pairs = [_text_pair(x) for x in items]
        results = [None] * len(pairs)
        errs = [None] * len(pairs)
        toks = [None] * len(pairs)
        for i, p in enumerate(pairs):
            try:
                toks[i] = self.tokenize(p if p[1] is not None else p[0])
            except Error as e:
                errs[i] = (e.status, e.message)
                continue
            if self.max_length is None and len(toks[i]["input_ids"]) > self._hp.max_position:
                errs[i] = ("bad input", "%d tokens exceeds the model's maximum of %d"
                           % (len(toks[i]["input_ids"]), self._hp.max_position))
        ok = [i for i in range(len(pairs)) if errs[i] is None]
        progress = _Progress(show_progress_bar, "encode", len(pairs))
        for b0 in range(0, len(ok), batch_size):
            group = ok[b0:b0 + batch_size]
            L = max(len(toks[i]["input_ids"]) for i in group)
            ids = np.full((len(group), L), self._hp.pad_id, np.int32)
            types = np.zeros((len(group), L), np.int32)
            mask = np.zeros((len(group), L), np.int32)
            for r, i in enumerate(group):
                n = len(toks[i]["input_ids"])
                ids[r, :n], types[r, :n], mask[r, :n] = (toks[i]["input_ids"],
                                                         toks[i]["token_type_ids"], 1)
            hidden = self.forward(ids, types, mask, head="none")["last_hidden_state"]
            for r, i in enumerate(group):
                n = len(toks[i]["input_ids"])
                results[i] = {"token_embeddings": np.array(hidden[r, :n])}
            progress.update(min(len(ok), b0 + batch_size))
        if output_value is None:
            vecs, verrs = self.encode_items(items, batch_size, pooling, False, False)
            if truncate_dim is not None:
                vecs = np.ascontiguousarray(vecs[:, :truncate_dim])
            if normalize:
                vecs = util._normalize(vecs)
            for i in range(len(pairs)):
                if errs[i] is None and verrs[i] is not None:
                    errs[i] = verrs[i]
                if errs[i] is None:
                    t = toks[i]
                    results[i].update(
                        sentence_embedding=vecs[i],
                        input_ids=np.array(t["input_ids"], np.int32),
                        token_type_ids=np.array(t["token_type_ids"], np.int32),
                        attention_mask=np.array(t["attention_mask"], np.int32))
        for i in range(len(pairs)):
            if errs[i] is not None:
                results[i] = None
        r = _settle(results, errs, errors, single)
        if output_value == "token_embeddings":
            return r["token_embeddings"] if single else [
                None if x is None else x["token_embeddings"] for x in r]
        return r

    def _classify_probs(self, pairs, batch_size, max_length=None, whole=False):
        if self._hp.head != C.RF_HEAD_SEQ_CLS:
            raise Error("the model has no sequence-classification head (its head is %s)"
                        % self.info["head"], "unsupported")
        N = max(self._hp.num_labels, 1)
        probs = np.zeros((len(pairs), N), dtype=np.float32)

        def call(pl, t, items, lo, hi, err):
            return C.rf_classify(pl, t.array, t.n, probs[lo:hi].ctypes.data_as(C.c_float_p),
                                 items, byref(err))

        errs = self._run(pairs, batch_size, max_length or self.max_length, call, whole=whole)
        return probs, errs

    def classify_items(self, texts, top_k=1, batch_size=8):
        """classify() without the error policy: ([result or None], [None or
        (status, message)])."""
        if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise ValueError("top_k must be a positive integer or None (all labels)")
        pairs = [_text_pair(t) for t in texts]
        probs, errs = self._classify_probs(pairs, batch_size)
        results = []
        for i, p in enumerate(probs):
            if errs[i] is not None:
                results.append(None)
                continue
            order = np.argsort(-p, kind="stable")  # as rf_top_k: ties to the lower index
            ranked = [{"label": self.labels[j], "score": float(p[j])} for j in order]
            results.append(ranked[0] if top_k == 1 else ranked[:top_k])
        return results, errs

    def classify(self, texts, top_k=1, batch_size=8, errors="raise"):
        """Sequence classification, shaped as HF's
        pipeline("text-classification"): for one text [{"label", "score"}]
        (the top_k best with top_k > 1, every label with top_k=None); for a
        list, one {"label", "score"} per text, or a list of them per text
        with top_k != 1. A text pair is an (a, b) tuple or {"text",
        "text_pair"}. errors="skip" puts None where an input fails."""
        _check_errors(errors)
        single = _is_single(texts)
        results, errs = self.classify_items([texts] if single else list(texts), top_k, batch_size)
        r = _settle(results, errs, errors, single)
        return [r] if single and top_k == 1 else r

    def similarity(self, a, b, pooling=None, batch_size=8, errors="raise"):
        """Cosine similarity of the embeddings of a and b (each embedded on
        its own), as `roformer similarity`: a float for two texts, a float32
        array for two lists (NaN where an input fails with errors="skip")."""
        _check_errors(errors)
        single = isinstance(a, (str, bytes))
        if single:
            pairs = [(a, b)]
        else:
            a, b = list(a), list(b)
            if len(a) != len(b):
                raise ValueError("similarity: a and b must have the same length")
            pairs = list(zip(a, b))
        use = self._pooling(pooling)
        out = np.full(len(pairs), np.nan, dtype=np.float32)

        def call(pl, t, items, lo, hi, err):
            return C.rf_similarity(pl, t.array, t.n, use, out[lo:hi].ctypes.data_as(C.c_float_p),
                                   items, byref(err))

        errs = self._run(pairs, batch_size, self.max_length, call)
        for i, e in enumerate(errs):
            if e is not None and (errors == "raise" or single):
                raise Error(e[1], e[0], None if single else i)
        return float(out[0]) if single else out

    # ==== Cross-encoder: predict and rank (sentence-transformers' CrossEncoder) ====

    def _pair_scores(self, pairs, batch_size, raw_scores, pooling, show_progress_bar, what):
        """rf_rerank_score of (query, document) pairs: a float32 array, and
        errs as _run gives them."""
        params = C.rf_rerank_default_params()
        params.raw_scores = bool(raw_scores)
        params.pooling = self._pooling(pooling)
        out = np.full(len(pairs), np.nan, dtype=np.float32)

        def call(pl, t, items, lo, hi, err):
            return C.rf_rerank_score(pl, t.array, t.n, byref(params),
                                     out[lo:hi].ctypes.data_as(C.c_float_p), items, byref(err))

        errs = self._run(pairs, batch_size, self.max_length, call,
                         _Progress(show_progress_bar, what, len(pairs)))
        return out, errs

    @property
    def rerank_scoring(self):
        """How predict and rank score a pair: "classifier" (a
        sequence-classification model) or "cosine" (any other model: the
        cosine of the two pooled embeddings, RoFormer-Sim's use)."""
        scoring = C.rf_rerank_scoring_of(self._state.handle)
        return "classifier" if scoring == C.RF_RERANK_CLASSIFIER else "cosine"

    def predict(self, pairs, batch_size=32, show_progress_bar=False, apply_softmax=False,
                raw_scores=False, pooling=None, errors="raise"):
        """Scores of (text, text_pair) pairs, as sentence-transformers'
        CrossEncoder.predict: with one label the sigmoid of its logit
        (raw_scores=True: the logit), shape (n,); with more labels every
        label's logit, shape (n, num_labels) (apply_softmax=True: their
        softmax probabilities). A model without a classifier gives the
        cosine of the two pooled embeddings (pooling as encode's), shape (n,).
        One pair (a tuple) gives a float (or a row). errors="skip" leaves NaN
        where a pair fails."""
        _check_errors(errors)
        single = isinstance(pairs, tuple)
        pairs = [pairs] if single else [tuple(p) for p in pairs]
        for i, p in enumerate(pairs):
            if len(p) != 2:
                raise TypeError("pairs[%d]: a pair is two texts, not %d" % (i, len(p)))
        if self.rerank_scoring == "classifier" and self._hp.num_labels > 1:
            out, errs = self._label_scores(pairs, batch_size, apply_softmax)
        else:
            out, errs = self._pair_scores(pairs, batch_size, raw_scores, pooling,
                                          show_progress_bar, "predict")
        for i, e in enumerate(errs):
            if e is not None and (errors == "raise" or single):
                raise Error(e[1], e[0], None if single else i)
        if single:
            return float(out[0]) if out.ndim == 1 else out[0]
        return out

    def _label_scores(self, pairs, batch_size, apply_softmax):
        """Every label's logit (or softmax probability) of each pair."""
        if apply_softmax:
            return self._classify_probs(pairs, batch_size)
        N = self._hp.num_labels
        logits = np.full((len(pairs), N), np.nan, dtype=np.float32)

        def call(pl, t, items, lo, hi, err):
            return C.rf_classify_logits(pl, t.array, t.n,
                                        logits[lo:hi].ctypes.data_as(C.c_float_p), items,
                                        byref(err))

        return logits, self._run(pairs, batch_size, self.max_length, call)

    def rank(self, query, documents, top_k=None, return_documents=False, batch_size=32,
             show_progress_bar=False, raw_scores=False, pooling=None, errors="raise"):
        """The documents ranked for the query, best first, as
        sentence-transformers' CrossEncoder.rank: [{"corpus_id": index into
        documents, "score": float, "text": the document (with
        return_documents)}], the top_k best (None: all). Scores as
        rf_rerank: a one-label classifier's sigmoid (raw_scores: its logit),
        else the probability of the positive label (the label named
        positive/pos/entailment/relevant/yes/true/1, else the last), or for a
        model without a classifier the cosine of the pooled embeddings. Equal
        scores keep document order. errors="skip" leaves failed documents
        out."""
        _check_errors(errors)
        if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise ValueError("top_k must be a positive integer or None (all documents)")
        documents = list(documents)
        scores, errs = self._pair_scores([(query, d) for d in documents], batch_size, raw_scores,
                                         pooling, show_progress_bar, "rank")
        for i, e in enumerate(errs):
            if e is not None and errors == "raise":
                raise Error(e[1], e[0], i)
        hits = (C.rf_rerank_hit * max(len(documents), 1))()
        n, err = C.c_int32(0), C.rf_error()
        st = C.rf_rerank_sort(scores.ctypes.data_as(C.c_float_p), len(documents), top_k or 0, hits,
                              byref(n), byref(err))
        if st == C.RF_ERR_NOMEM:
            raise MemoryError("rank: " + err.message.decode("utf-8", "replace"))
        if st != C.RF_OK:
            _raise(st, err)
        out = []
        for h in hits[:n.value]:
            hit = {"corpus_id": int(h.index), "score": float(h.score)}
            if return_documents:
                hit["text"] = documents[h.index]
            out.append(hit)
        return out

    def scm_items(self, triplets, mode="embed", pooling=None, max_length=None, batch_size=8):
        """scm() without the error policy: rf_scm, as the CLI calls it."""
        if mode not in ("embed", "pair"):
            raise ValueError('mode must be "embed" or "pair", not %r' % (mode,))
        if max_length is None:
            max_length = self._document_max_length()
        params = C.rf_scm_default_params()
        if mode == "embed":
            params.mode, params.pooling = C.RF_SCM_EMBED, self._pooling(pooling)
        elif self._hp.head != C.RF_HEAD_SEQ_CLS:
            raise Error("the model has no sequence-classification head (its head is %s)"
                        % self.info["head"], "unsupported")
        else:
            params.mode = C.RF_SCM_PAIR
        n = len(triplets)
        errs = [None] * n
        array = (C.rf_triplet * max(n, 1))()
        keep = []  # the UTF-8 copies the array points into
        for k, t in enumerate(triplets):
            docs, errs[k] = _triplet(t)
            if errs[k] is None:  # a failed triplet goes in without documents, keeping its place
                for s, d in enumerate(docs):
                    b = _utf8(d)
                    keep.append(b)
                    array[k].doc[s], array[k].len[s] = b, len(b)
        out = (C.rf_scm_result * max(n, 1))()
        items = (C.rf_item_status * max(n, 1))()
        n_documents = C.c_int32(0)
        err = C.rf_error()
        with _Call(self) as slots:
            pl = self._pipeline(slots, batch_size, max_length)
            st = C.rf_scm(pl, array, n, byref(params), out, byref(n_documents), items, byref(err))
        if st != C.RF_OK:
            _raise(st, err)
        if mode == "embed":
            self.last_scm_documents = n_documents.value
        return _scm_results(out, items, errs)

    def embed_documents(self, docs, pooling, max_length, batch_size=8):
        """Embeds documents as scm does (rf_scm_embed_documents: chunks of
        64, not normalised): (array (n, hidden), errs). pooling is an
        RF_POOLING_* value. The building block of scm on Dask."""
        out = np.full((len(docs), self.hidden_size), np.nan, dtype=np.float32)

        def call(pl, t, items, lo, hi, err):
            return C.rf_scm_embed_documents(pl, t.array, t.n, pooling,
                                            out.ctypes.data_as(C.c_float_p), items, byref(err))

        errs = self._run([(d, None) for d in docs], batch_size, max_length, call, whole=True)
        return out, errs

    def scm(self, triplets, mode="embed", pooling=None, max_length=None, batch_size=8,
            errors="raise"):
        """CAIL2019 similar case matching, as `roformer scm`: for each triplet
        ({"A", "B", "C"} or an (A, B, C) tuple) {"prediction": "B"|"C",
        "sim_ab", "sim_ac"}. mode="embed": cosines of document embeddings,
        each distinct document embedded once; mode="pair": a
        sequence-classification model's probability of its last label for
        (A, B) and (A, C). Documents are truncated at max_length (default:
        the model's maximum). Afterwards m.last_scm_documents is the number
        of distinct documents embedded (what the CLI reports on stderr)."""
        _check_errors(errors)
        single = isinstance(triplets, dict)
        results, errs = self.scm_items([triplets] if single else list(triplets), mode, pooling,
                                       max_length, batch_size)
        return _settle(results, errs, errors, single)

    def fill_mask(self, texts, top_k=5, batch_size=8, errors="raise"):
        """The top_k tokens for each [MASK], as `roformer fill-mask`: per text
        {"sequence": the text with the best tokens filled in, "masks":
        [[{"token", "id", "score"}, ...] per [MASK]]}."""
        _check_errors(errors)
        if self._hp.head != C.RF_HEAD_MLM:
            raise Error("the model has no masked-LM head (its head is %s)" % self.info["head"],
                        "unsupported")
        if not isinstance(top_k, int) or top_k < 1:
            raise ValueError("top_k must be a positive integer")
        single = _is_single(texts)
        items = [texts] if single else list(texts)
        results = [None] * len(items)

        def call(pl, t, st, lo, hi, err):
            res = (C.rf_fill_mask_result * (hi - lo))()
            rc = C.rf_fill_mask(pl, t.array, t.n, top_k, res, st, byref(err))
            for j in range(hi - lo):
                r = res[j]
                if rc == C.RF_OK and st[j].status == C.RF_OK:
                    K = r.top_k
                    masks = [[{"token": self._token(r.ids[m * K + k]), "id": r.ids[m * K + k],
                               "score": float(r.scores[m * K + k])} for k in range(K)]
                             for m in range(r.n_masks)]
                    results[lo + j] = {"sequence": r.sequence.decode("utf-8", "replace"),
                                       "masks": masks}
                C.rf_fill_mask_result_free(byref(r))
            return rc

        errs = self._run([(x, None) for x in items], batch_size, self.max_length, call)
        return _settle(results, errs, errors, single)

    def ner(self, texts, batch_size=8, errors="raise"):
        """Token classification, as `roformer ner`: per text {"tokens":
        [{"token", "label", "score", "start", "end"}], "entities":
        [{"entity", "text", "score", "start", "end"}]}; start/end are
        character offsets into the text (Python string indices)."""
        _check_errors(errors)
        if self._hp.head != C.RF_HEAD_TOKEN_CLS:
            raise Error("the model has no token-classification head (its head is %s)"
                        % self.info["head"], "unsupported")
        single = _is_single(texts)
        items = [texts] if single else list(texts)
        results = [None] * len(items)

        def call(pl, t, st, lo, hi, err):
            res = (C.rf_ner_result * (hi - lo))()
            rc = C.rf_token_classify(pl, t.array, t.n, res, st, byref(err))
            for j in range(hi - lo):
                r = res[j]
                if rc == C.RF_OK and st[j].status == C.RF_OK:
                    text = _as_str(items[lo + j])
                    tokens = [{"token": self._token(g.id), "label": self.labels[g.label]
                               if 0 <= g.label < len(self.labels) else "",
                               "score": float(g.score), "start": g.start, "end": g.end}
                              for g in r.tokens[:r.n_tokens]]
                    entities = [{"entity": string_at(e.type, e.type_len).decode(),
                                 "text": text[e.start:e.end], "score": float(e.score),
                                 "start": e.start, "end": e.end}
                                for e in r.entities[:r.n_entities]]
                    results[lo + j] = {"tokens": tokens, "entities": entities}
                C.rf_ner_result_free(byref(r))
            return rc

        errs = self._run([(x, None) for x in items], batch_size, self.max_length, call)
        return _settle(results, errs, errors, single)

    def qa(self, question, context, doc_stride=None, max_answer_tokens=None, batch_size=8,
           errors="raise"):
        """Extractive question answering, as `roformer qa`: {"answer",
        "score", "start", "end"} (character offsets into the context) for a
        question and a context, or a list of them for two lists.
        doc_stride: read a long context in windows (HF's pipeline uses 128);
        None: one window (the input must fit, or max_length truncates it).
        max_answer_tokens: the longest answer, in tokens (None: the
        library's RF_QA_MAX_ANSWER_TOKENS, 15 as HF's)."""
        _check_errors(errors)
        if self._hp.head != C.RF_HEAD_QA:
            raise Error("the model has no question-answering head (its head is %s)"
                        % self.info["head"], "unsupported")
        if doc_stride is not None and (not isinstance(doc_stride, int) or doc_stride < 0):
            raise ValueError("doc_stride must be a non-negative integer or None")
        if max_answer_tokens is not None and (not isinstance(max_answer_tokens, int)
                                              or max_answer_tokens < 1):
            raise ValueError("max_answer_tokens must be a positive integer or None")
        single = isinstance(question, (str, bytes))
        if single:
            pairs = [(question, context)]
        else:
            question, context = list(question), list(context)
            if len(question) != len(context):
                raise ValueError("qa: question and context must have the same length")
            pairs = list(zip(question, context))
        results = [None] * len(pairs)

        def call(pl, t, st, lo, hi, err):
            res = (C.rf_qa_result * (hi - lo))()
            rc = C.rf_qa(pl, t.array, t.n, max_answer_tokens or 0,
                         -1 if doc_stride is None else doc_stride, res, st, byref(err))
            for j in range(hi - lo):
                if rc == C.RF_OK and st[j].status == C.RF_OK:
                    r, ctx = res[j], _as_str(pairs[lo + j][1])
                    results[lo + j] = {"answer": ctx[r.start:r.end], "score": float(r.score),
                                       "start": r.start, "end": r.end}
            return rc

        errs = self._run(pairs, batch_size, self.max_length, call)
        return _settle(results, errs, errors, single)

    # ==== Tokenizer and encoder ====

    def tokenize(self, texts, max_length=None, padding=False, return_tokens=False):
        """The model's tokenizer, as HF's tok(texts, truncation=True,
        max_length=max_length): {"input_ids", "token_type_ids",
        "attention_mask"} as lists (lists of lists for a list of texts; a
        pair is an (a, b) tuple). padding=True right-pads a batch ([PAD],
        type 0, mask 0) so it can go to forward(); return_tokens=True adds
        "tokens", the vocab entries. Raises Error for a text that cannot be
        tokenized (invalid UTF-8)."""
        single = _is_single(texts)
        items = [texts] if single else list(texts)
        if max_length is None:
            max_length = self.max_length or 0
        out = {"input_ids": [], "token_type_ids": [], "attention_mask": []}
        if return_tokens:
            out["tokens"] = []
        with _Call(self) as slots:
            enc = slots.encoding
            err = C.rf_error()
            for i, x in enumerate(items):
                a, b = _text_pair(x)
                ab = _utf8(a)
                bb = None if b is None else _utf8(b, "text pair")
                st = C.rf_tokenize(self._state.handle, ab, len(ab), bb, 0 if bb is None else len(bb),
                                   max_length, byref(enc), byref(err))
                if st != C.RF_OK:
                    raise Error(err.message.decode("utf-8", "replace"), _status_name(st),
                                None if single else i)
                ids = enc.ids[:enc.n]
                out["input_ids"].append(ids)
                out["token_type_ids"].append(enc.type_ids[:enc.n])
                out["attention_mask"].append(enc.mask[:enc.n])
                if return_tokens:
                    out["tokens"].append([self._token(t) for t in ids])
        if padding and not single:
            L = max((len(r) for r in out["input_ids"]), default=0)
            pad = {"input_ids": self._hp.pad_id, "token_type_ids": 0, "attention_mask": 0,
                   "tokens": "[PAD]"}
            for key, rows in out.items():
                for r in rows:
                    r.extend([pad[key]] * (L - len(r)))
        return {k: v[0] for k, v in out.items()} if single else out

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

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, head="auto",
                hidden_states=False, output_positions=None):
        """The encoder and the model's head on token ids, as `roformer
        forward`: a dict of float32 arrays, "last_hidden_state" [B, L, D],
        then as the head gives "logits" (MLM [B, L, V]; sequence
        classification [B, labels]; token classification [B, L, labels]) or
        "logits_at" [B, P, V] (MLM at output_positions only), "start_logits"
        and "end_logits" [B, L], "pooled" [B, D] (models with a pooler), and
        with hidden_states=True "hidden_states" [layers + 1, B, L, D].
        input_ids [L] (outputs then have no batch dimension) or [B, L],
        right-padded. head: "auto" (the model's), "none", or the model's own
        head by name ("mlm", "cls", "token", "qa")."""
        hp = self._hp
        ids = _c_array(input_ids, np.int32)
        flat = ids.ndim == 1
        ids = ids.reshape(1, -1) if flat else ids
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError("input_ids must be [L] or [B, L] with L > 0")
        B, L = ids.shape

        def same_shape(x, name):
            if x is None:
                return None
            a = _c_array(x, np.int32)
            a = a.reshape(1, -1) if flat and a.ndim == 1 else a
            if a.shape != ids.shape:
                raise ValueError("%s has shape %s, input_ids %s" % (name, a.shape, ids.shape))
            return a

        types = same_shape(token_type_ids, "token_type_ids")
        mask = same_shape(attention_mask, "attention_mask")
        if head == "auto":
            kind = hp.head
        elif head in _HEADS and (head == "none" or _HEADS[head] == hp.head):
            kind = _HEADS[head]
        else:
            raise Error("head %r, but the model's head is %s" % (head, self.info["head"]),
                        "unsupported")
        positions = None
        if output_positions is not None:
            if kind != C.RF_HEAD_MLM:
                raise Error("output_positions needs a masked-LM head", "bad input")
            positions = _c_array(output_positions, np.int32).reshape(-1)
        D, V, N = hp.hidden_size, hp.vocab_size, hp.num_labels
        res = {"last_hidden_state": np.empty((B, L, D), np.float32)}
        if kind == C.RF_HEAD_MLM and positions is not None:
            res["logits_at"] = np.empty((B, len(positions), V), np.float32)
        elif kind == C.RF_HEAD_MLM:
            res["logits"] = np.empty((B, L, V), np.float32)
        elif kind == C.RF_HEAD_TOKEN_CLS:
            res["logits"] = np.empty((B, L, N), np.float32)
        elif kind == C.RF_HEAD_SEQ_CLS:
            res["logits"] = np.empty((B, N), np.float32)
        elif kind == C.RF_HEAD_QA:
            res["start_logits"] = np.empty((B, L), np.float32)
            res["end_logits"] = np.empty((B, L), np.float32)
        if kind != C.RF_HEAD_NONE and hp.has_pooler:
            res["pooled"] = np.empty((B, D), np.float32)
        if hidden_states:
            res["hidden_states"] = np.empty((hp.num_layers + 1, B, L, D), np.float32)

        def ptr(name):
            a = res.get(name)
            return None if a is None else a.ctypes.data_as(C.c_float_p)

        def iptr(a):
            return None if a is None else a.ctypes.data_as(C.c_int32_p)

        out = C.rf_outputs(last_hidden_state=ptr("last_hidden_state"),
                           hidden_states=ptr("hidden_states"), pooled=ptr("pooled"),
                           logits=ptr("logits") or ptr("logits_at"),
                           start_logits=ptr("start_logits"), end_logits=ptr("end_logits"),
                           mlm_positions=iptr(positions),
                           n_mlm_positions=0 if positions is None else len(positions))
        batch = C.rf_batch(batch=B, seq_len=L, input_ids=iptr(ids), token_type_ids=iptr(types),
                           attention_mask=iptr(mask))
        with _Call(self) as slots:
            ctx = self._context(slots, B, L)
            err = C.rf_error()
            st = C.rf_forward(ctx, byref(batch), byref(out), byref(err))
        if st != C.RF_OK:
            _raise(st, err)
        if flat:
            res = {k: (v[:, 0] if k == "hidden_states" else v[0]) for k, v in res.items()}
        return res

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


def _triplet(t):
    """(A, B, C) of one scm input, and its error (as the CLI words them)."""
    if isinstance(t, dict):
        for f in ("A", "B", "C"):
            if f not in t:
                return None, ("bad input", 'missing "%s"' % f)
            if not isinstance(t[f], (str, bytes)):
                return None, ("bad input", '"%s" is not a string' % f)
        label = t.get("label")
        if label is not None and label not in ("B", "C"):
            return None, ("bad input", 'field "label" must be "B" or "C"')
        return (t["A"], t["B"], t["C"]), None
    if isinstance(t, (tuple, list)) and len(t) == 3 and all(isinstance(x, (str, bytes)) for x in t):
        return tuple(t), None
    return None, ("bad input", "a triplet is {\"A\", \"B\", \"C\"} or a tuple of three texts")


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


def _c_array(x, dtype):
    """x as an array C may read: contiguous and aligned for its type (an
    array unpickled from a byte stream, as Dask hands them over, may start
    at any byte)."""
    return np.require(x, dtype, ["C_CONTIGUOUS", "ALIGNED"])


def _scm_results(out, items, errs):
    """scm records from rf_scm_result[n] and rf_item_status[n]; errs[n]
    (None, or a failure found before the call) receives the items' failures."""
    results = []
    for k in range(len(errs)):
        if errs[k] is None and items[k].status != C.RF_OK:
            errs[k] = (_status_name(items[k].status),
                       items[k].error.message.decode("utf-8", "replace"))
        if errs[k] is not None:
            results.append(None)
            continue
        r = out[k]
        results.append({"prediction": chr(r.prediction), "sim_ab": float(r.sim_ab),
                        "sim_ac": float(r.sim_ac)})
    return results, errs


def _status_code(name):
    """The rf_status whose rf_status_string is `name`."""
    for code in range(64):
        if _status_name(code) == name:
            return code
    raise ValueError("unknown status %r" % (name,))


def _scm_score(vecs, doc_errs, doc_of):
    """rf_scm_score: triplets scored from their documents' vectors as
    Model.scm's embed mode scores them. vecs (m, D) float32, doc_errs[m]
    None or (status, message) per document, doc_of (n, 3) its rows for A, B
    and C. Returns (results, errs) as scm_items does."""
    vecs, doc_of = _c_array(vecs, np.float32), _c_array(doc_of, np.int32)
    n = len(doc_of)
    doc_items = (C.rf_item_status * max(len(doc_errs), 1))()
    for i, e in enumerate(doc_errs):
        if e is not None:
            doc_items[i].status = _status_code(e[0])
            doc_items[i].error.message = e[1].encode("utf-8")[:511]
    out = (C.rf_scm_result * max(n, 1))()
    items = (C.rf_item_status * max(n, 1))()
    err = C.rf_error()
    st = C.rf_scm_score(vecs.ctypes.data_as(C.c_float_p), vecs.shape[1], doc_items,
                        doc_of.ctypes.data_as(C.c_int32_p), n, out, items, byref(err))
    if st != C.RF_OK:
        _raise(st, err)
    return _scm_results(out, items, [None] * n)


__all__ = ["Model", "Error"]
