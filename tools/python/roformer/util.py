"""cos_sim and semantic_search with sentence-transformers' signatures
(sentence_transformers.util): what retrieval code written for it calls on
the embeddings Model.encode gives.

Arrays in, arrays out: numpy float32 arrays, or torch tensors when an input
is a torch tensor (as sentence-transformers returns them).
"""

import numpy as np


def _is_tensor(x):
    return hasattr(x, "detach") and hasattr(x, "numpy")


def _matrix(x, what):
    """x as a 2-D float array: a list of vectors, a numpy array or a torch
    tensor; one vector is one row."""
    if _is_tensor(x):
        x = x.detach().cpu().numpy()
    a = np.asarray(x)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.floating)
                                  or np.issubdtype(a.dtype, np.integer)):
        raise TypeError("%s must be numbers (a vector or a matrix of embeddings)" % what)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError("%s must be a vector or a matrix, not of shape %s" % (what, a.shape))
    return a.astype(np.float32, copy=False)


def _normalize(a):
    """Rows to unit L2 norm; a zero row stays zero (the norm is clamped at
    1e-12, as torch.nn.functional.normalize does)."""
    n = np.linalg.norm(a, axis=1, keepdims=True)
    return a / np.maximum(n, np.float32(1e-12))


def cos_sim(a, b):
    """Cosine similarity of every row of a with every row of b: an array
    (len(a), len(b)) (a vector counts as one row). A torch tensor when a or
    b is one."""
    ta = _is_tensor(a) or _is_tensor(b)
    x, y = _matrix(a, "a"), _matrix(b, "b")
    if x.shape[1] != y.shape[1]:
        raise ValueError("a has %d dimensions, b %d" % (x.shape[1], y.shape[1]))
    out = (_normalize(x) @ _normalize(y).T).astype(np.float32)
    if ta:
        import torch
        return torch.from_numpy(out)
    return out


def semantic_search(query_embeddings, corpus_embeddings, query_chunk_size=100,
                    corpus_chunk_size=500000, top_k=10, score_function=cos_sim):
    """For each query, the top_k corpus entries by score_function (default
    cos_sim): a list (one per query) of lists of {"corpus_id", "score"},
    best first (equal scores: lower corpus_id first). Queries and corpus
    are processed in chunks of query_chunk_size x corpus_chunk_size scores."""
    for name, v in (("query_chunk_size", query_chunk_size),
                    ("corpus_chunk_size", corpus_chunk_size), ("top_k", top_k)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError("%s must be a positive integer, not %r" % (name, v))
    q, c = _matrix(query_embeddings, "query_embeddings"), _matrix(corpus_embeddings,
                                                                   "corpus_embeddings")
    results = [[] for _ in range(len(q))]
    for q0 in range(0, len(q), query_chunk_size):
        for c0 in range(0, len(c), corpus_chunk_size):
            scores = score_function(q[q0:q0 + query_chunk_size], c[c0:c0 + corpus_chunk_size])
            if _is_tensor(scores):
                scores = scores.detach().cpu().numpy()
            scores = np.asarray(scores)
            k = min(top_k, scores.shape[1])
            for i, row in enumerate(scores):
                best = np.argsort(-row, kind="stable")[:k]
                results[q0 + i].extend((float(row[j]), c0 + int(j)) for j in best)
    out = []
    for hits in results:
        hits.sort(key=lambda h: (-h[0], h[1]))
        out.append([{"corpus_id": cid, "score": s} for s, cid in hits[:top_k]])
    return out


__all__ = ["cos_sim", "semantic_search"]
