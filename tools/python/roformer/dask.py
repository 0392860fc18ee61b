"""roformer.dask — the jobs over a dask.bag, on one machine or a cluster.

    import dask.bag as db, roformer.dask
    texts = db.read_text("corpus-*.txt").map(str.rstrip)
    vecs = roformer.dask.encode(texts, "model.gguf", pooling="mean")
    roformer.dask.to_npy(vecs, "out/")            # out/part-00000.npy, ...

Tasks carry the model's path, never the model: each worker process loads a
model once, on its first task, and keeps it (worker_model(), a per-process
cache keyed by path and load options); every thread of the worker shares
it, each with its own context. Models load with threads=1 by default: run
one Dask worker thread per core and let Dask spread the work. threads,
compute ("f32", "bf16" or "int8", as Model's) and max_length are those load
options; a worker whose CPU lacks the compute type's instructions fails its
tasks with the library's message.

Each partition is one call of the single-process method on its items
(Model.encode, Model.classify), so results equal those calls exactly. (The
engine's last bits for an input may depend on the other inputs of its
batch; batch_size=1 makes every input's numbers its own.) scm embeds each
distinct document once across the cluster, in the library's chunks of
RF_SCM_CHUNK in first-appearance order, and scores the triplets with the
library's rf_scm_score, so its numbers equal Model.scm's and the CLI's.

A bad input gives its error record, {"error": message}, in its place
(errors="record", the default); errors="skip" gives None, errors="raise"
fails the task.
"""

import functools
import os
import threading

import dask
import dask.bag
import numpy as np

from . import _capi as C
from ._errors import Error
from ._inputs import _triplet, _utf8
from ._scm import _scm_score
from .model import Model

_cache = {}
_cache_lock = threading.Lock()
_counts = {"models_loaded": 0, "texts": 0, "documents": 0}
_ERRORS = ("record", "skip", "raise")


def worker_model(model_path, threads=1, compute="f32", max_length=None, window=None,
                 stride=None):
    """This process's Model for these load options, loaded on first use."""
    key = (os.path.abspath(model_path), threads, compute, max_length, window, stride)
    with _cache_lock:
        m = _cache.get(key)
        if m is None:
            m = Model(model_path, threads=threads, compute=compute, max_length=max_length,
                      window=window, stride=stride)
            _cache[key] = m
            _counts["models_loaded"] += 1
        return m


def worker_stats():
    """What this process did: {"pid", "models_loaded", "texts" (inputs run
    by encode and classify), "documents" (documents scm embedded)}. On a
    cluster: client.run(roformer.dask.worker_stats)."""
    with _cache_lock:
        return dict(_counts, pid=os.getpid())


def _count(what, n):
    with _cache_lock:
        _counts[what] += n


def _as_bag(items):
    """A dask.bag.Bag as is; a dask.dataframe Series (a column of texts) as
    the Bag of its values, partition for partition."""
    if isinstance(items, dask.bag.Bag):
        return items
    if hasattr(items, "to_bag"):
        return items.to_bag()
    raise TypeError("expected a dask.bag.Bag or a dask.dataframe Series, not %s"
                    % type(items).__name__)


def _model_kw(threads, compute, max_length):
    return {"threads": threads, "compute": compute, "max_length": max_length}


def _check(errors):
    if errors not in _ERRORS:
        raise ValueError('errors must be "record", "skip" or "raise", not %r' % (errors,))


def _place(results, errs, errors):
    """Puts each failed input's error record (or None) in its place."""
    out = []
    for r, e in zip(results, errs):
        if e is None:
            out.append(r)
        elif errors == "raise":
            raise Error(e[1], e[0])
        else:
            out.append({"error": e[1]} if errors == "record" else None)
    return out


# ==== encode ====

def _encode_partition(texts, model_path, model_kw, kwargs, errors):
    texts = list(texts)
    m = worker_model(model_path, **model_kw)
    vecs, errs = m.encode_items(texts, **kwargs)
    _count("texts", len(texts))
    return _place([v.copy() for v in vecs], errs, errors)


def encode(bag, model_path, threads=1, compute="f32", max_length=None, errors="record",
           **encode_kwargs):
    """A Bag of float32 vectors (hidden_size,), in the order of `bag`'s
    texts (a Bag, or a dask.dataframe column); encode_kwargs as
    Model.encode (batch_size, pooling, normalize_embeddings)."""
    _check(errors)
    fn = functools.partial(_encode_partition, model_path=model_path,
                           model_kw=_model_kw(threads, compute, max_length),
                           kwargs=encode_kwargs, errors=errors)
    return _as_bag(bag).map_partitions(fn)


# ==== classify ====

def _classify_partition(texts, model_path, model_kw, kwargs, errors):
    texts = list(texts)
    m = worker_model(model_path, **model_kw)
    results, errs = m.classify_items(texts, **kwargs)
    _count("texts", len(texts))
    return _place(results, errs, errors)


def classify(bag, model_path, top_k=1, batch_size=8, threads=1, compute="f32", max_length=None,
             errors="record"):
    """A Bag of Model.classify results, one per text (a {"label", "score"}
    dict, or a list of them with top_k != 1)."""
    _check(errors)
    fn = functools.partial(_classify_partition, model_path=model_path,
                           model_kw=_model_kw(threads, compute, max_length),
                           kwargs={"top_k": top_k, "batch_size": batch_size}, errors=errors)
    return _as_bag(bag).map_partitions(fn)


# ==== scm ====
#
# embed mode, as a graph:
#   triplet partitions ──► distinct documents of each ──► one ordered list of
#   every distinct document (first appearance) ──► embed tasks (chunks of
#   RF_SCM_CHUNK, chunk c to task c % n) ──► document -> vector table ──►
#   each triplet partition scored from the table (rf_scm_score).
# The ordered list and the table are single tasks: their size is the
# corpus's distinct documents (texts, then one vector each).

def _triplet_docs(t):
    docs, err = _triplet(t)
    return (None, err) if err else (tuple(_utf8(d) for d in docs), None)


def _partition_docs(triplets):
    seen = {}
    for t in triplets:
        docs, _ = _triplet_docs(t)  # a bad triplet has none; its error comes at scoring
        for d in docs or ():
            seen.setdefault(d, None)
    return [list(seen)]


def _merge_docs(per_partition):
    seen = {}
    for docs in per_partition:
        for d in docs[0]:
            seen.setdefault(d, None)
    return list(seen)


def _embed_chunks(docs, task, n_tasks, model_path, model_kw, pooling, max_length, batch_size):
    m = worker_model(model_path, **model_kw)
    if max_length is None:
        max_length = m._document_max_length()  # as Model.scm
    use = m._pooling(pooling)
    out = {}
    size = C.RF_SCM_CHUNK
    for c in range(task, (len(docs) + size - 1) // size, n_tasks):
        chunk = docs[size * c:size * c + size]
        vecs, errs = m.embed_documents(chunk, use, max_length, batch_size)
        _count("documents", len(chunk))
        for d, v, e in zip(chunk, vecs, errs):
            out[d] = (v.copy(), e)
    return out


def _merge_tables(tables):
    table = {}
    for t in tables:
        table.update(t)
    return table


def _score_partition(triplets, table, errors):
    read = [_triplet_docs(t) for t in triplets]
    rows = {}  # the partition's distinct documents: row of each
    doc_of = []
    for docs, err in read:
        if err is None:
            doc_of.append([rows.setdefault(d, len(rows)) for d in docs])
    results, errs = [None] * len(read), [err for _, err in read]
    if rows:
        vecs = np.stack([table[d][0] for d in rows])
        scored, scored_errs = _scm_score(vecs, [table[d][1] for d in rows],
                                         np.array(doc_of, dtype=np.int32))
        ok = [k for k, e in enumerate(errs) if e is None]
        for k, r, e in zip(ok, scored, scored_errs):
            results[k], errs[k] = r, e
    return _place(results, errs, errors)



def _pair_partition(triplets, model_path, model_kw, kwargs, errors):
    m = worker_model(model_path, **model_kw)
    results, errs = m.scm_items(list(triplets), mode="pair", **kwargs)
    return _place(results, errs, errors)


def scm(bag, model_path, mode="embed", pooling=None, max_length=None, batch_size=8, threads=1,
        compute="f32", errors="record", embed_tasks=None, window=None, stride=None):
    """A Bag of Model.scm records ({"prediction", "sim_ab", "sim_ac"}), one
    per triplet ({"A", "B", "C"} or an (A, B, C) tuple), in order.
    mode="embed" embeds each distinct document once across the cluster, in
    embed_tasks tasks (default: the bag's partition count); mode="pair"
    scores each partition's pairs with a classification model. Documents
    are truncated at max_length (default: the library's
    rf_model_max_input_length), or with window=N (and stride) read in
    windows, as Model(window=N).scm reads them."""
    _check(errors)
    bag = _as_bag(bag)
    model_kw = dict(_model_kw(threads, compute, None), window=window, stride=stride)
    if mode == "pair":
        fn = functools.partial(_pair_partition, model_path=model_path, model_kw=model_kw,
                               kwargs={"max_length": max_length, "batch_size": batch_size},
                               errors=errors)
        return bag.map_partitions(fn)
    if mode != "embed":
        raise ValueError('mode must be "embed" or "pair", not %r' % (mode,))
    n_tasks = embed_tasks or bag.npartitions
    docs = dask.delayed(_merge_docs, pure=True)(bag.map_partitions(_partition_docs).to_delayed())
    tables = [dask.delayed(_embed_chunks, pure=True)(docs, i, n_tasks, model_path, model_kw,
                                                     pooling, max_length, batch_size)
              for i in range(n_tasks)]
    table = dask.delayed(_merge_tables, pure=True)(tables)
    return bag.map_partitions(_score_partition, table, errors)


# ==== .npy shards ====

def _write_npy(items, path, dim):
    rows = list(items)
    if dim is None:
        dim = next((len(r) for r in rows if isinstance(r, np.ndarray)), None)
    if dim is None and rows:
        raise ValueError("%s: no vector in this partition to take the width from; pass dim="
                         % path)
    out = np.full((len(rows), dim or 0), np.nan, dtype=np.float32)
    for i, r in enumerate(rows):
        if isinstance(r, np.ndarray):
            out[i] = r
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        np.save(f, out)
    os.replace(tmp, path)  # nothing half-written under the final name
    return path


def to_npy(bag, directory, dim=None, compute=True):
    """Writes a Bag of vectors as one float32 .npy matrix per partition,
    DIRECTORY/part-00000.npy, ... in order; a failed input (an error record
    or None) is a row of NaN. Returns the paths (or, with compute=False,
    the delayed writes)."""
    os.makedirs(directory, exist_ok=True)
    writes = [dask.delayed(_write_npy)(part, os.path.join(directory, "part-%05d.npy" % i), dim)
              for i, part in enumerate(bag.to_delayed())]
    return list(dask.compute(*writes)) if compute else writes


__all__ = ["encode", "classify", "scm", "to_npy", "worker_model", "worker_stats"]
