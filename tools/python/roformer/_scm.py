"""Model.scm: CAIL2019 similar case matching (which of B and C is closer to
A) through the library's rf_scm, and the two pieces roformer.dask builds
it from across a cluster: embed_documents (rf_scm_embed_documents) and
_scm_score (rf_scm_score on vectors embedded elsewhere). A mixin of
roformer.Model (model.py), whose state it reads.
"""

from ctypes import byref

import numpy as np

from . import _capi as C
from ._errors import Error, _check_errors, _raise, _settle, _status_code, _status_name
from ._inputs import _c_array, _triplet, _utf8
from ._state import _Call


class _ScmMethods:
    """Model's scm methods."""

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
