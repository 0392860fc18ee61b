"""Model.encode and its kin, in sentence-transformers' conventions: encode()
with SentenceTransformer.encode's arguments (prompts, output_value,
precision, tensors, truncate_dim), encode_items() without the error policy,
and the model's prompts.

Sentence embeddings are rf_embed's, through the batch runner (Model._run);
token embeddings are forward()'s on tokenize()'s ids, so that both are the
CLI's numbers. A mixin of roformer.Model (model.py), whose state it reads.
"""

from ctypes import byref

import numpy as np

from . import _capi as C
from . import quantization, util
from ._errors import Error, _check_errors, _settle
from ._inputs import _is_single, _text_pair, _utf8
from ._progress import _Progress

_OUTPUT_VALUES = ("sentence_embedding", "token_embeddings", None)


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


class _EncodeMethods:
    """Model's sentence-embedding methods."""

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
