"""Model.predict and Model.rank, sentence-transformers' CrossEncoder calls,
over the library's rf_rerank_score and rf_rerank_sort: a classifier's
score of (query, document) pairs, or the cosine of their embeddings for a
model without one. A mixin of roformer.Model (model.py), whose state it
reads.
"""

from ctypes import byref

import numpy as np

from . import _capi as C
from ._errors import Error, _check_errors, _raise
from ._progress import _Progress


class _CrossEncoderMethods:
    """Model's cross-encoder methods."""

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
