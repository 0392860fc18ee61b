"""Model.tokenize and Model.forward: the model's tokenizer as HF tokenizers
give it (a dict of lists), and the encoder with its head on token ids as
`roformer forward` runs it (a dict of float32 arrays), on the calling
thread's own encoding and context. A mixin of roformer.Model (model.py),
whose state it reads.
"""

from ctypes import byref

import numpy as np

from . import _capi as C
from ._errors import Error, _raise, _status_name
from ._inputs import _c_array, _is_single, _text_pair, _utf8
from ._state import _Call

_HEADS = {"none": C.RF_HEAD_NONE, "mlm": C.RF_HEAD_MLM, "cls": C.RF_HEAD_SEQ_CLS,
          "token": C.RF_HEAD_TOKEN_CLS, "qa": C.RF_HEAD_QA}


class _ForwardMethods:
    """Model's tokenize and forward."""

    def tokenize(self, texts, max_length=None, padding=False, return_tokens=False):
        """The model's tokenizer, as HF's tok(texts, truncation=True,
        max_length=max_length) with the model's truncation_direction as its
        truncation_side: {"input_ids", "token_type_ids",
        "attention_mask"} as lists (lists of lists for a list of texts; a
        pair is an (a, b) tuple). padding=True right-pads a batch ([PAD],
        type 0, mask 0) so it can go to forward(); return_tokens=True adds
        "tokens", the vocab entries. Raises Error for a text that cannot be
        tokenized (invalid UTF-8)."""
        single = _is_single(texts)
        items = [texts] if single else list(texts)
        if max_length is None:
            max_length = self.max_length or 0
        # the end the model's truncation_direction cuts, as its jobs
        side = C.RF_TRUNCATE_LEFT if self.truncation_direction == "left" else C.RF_TRUNCATE_RIGHT
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
                st = C.rf_tokenize_truncated(self._state.handle, ab, len(ab), bb,
                                             0 if bb is None else len(bb), max_length, side,
                                             byref(enc), byref(err))
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
