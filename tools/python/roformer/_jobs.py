"""The text jobs that map one input to one result: classify, similarity,
fill_mask, ner and qa, each the library's rf_* job run chunk by chunk by
the batch runner (Model._run), its results shaped as the CLI's JSON (and HF
pipelines' dicts). A mixin of roformer.Model (model.py), whose state it
reads.
"""

from ctypes import byref, string_at

import numpy as np

from . import _capi as C
from ._errors import Error, _check_errors, _settle
from ._inputs import _as_str, _is_single, _text_pair


class _JobMethods:
    """Model's classify, similarity, fill-mask, NER and QA methods."""

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
