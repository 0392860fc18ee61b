"""Input normalisation: what a caller passes to a job (str or bytes, an
(a, b) pair, HF's {"text", "text_pair"} dict, an scm triplet, array-likes)
turned into what the C library reads (UTF-8 bytes in rf_text arrays,
contiguous aligned numpy arrays). Refusals are TypeError before anything
runs; what only the library can judge (invalid UTF-8, too many tokens) it
reports per input.
"""

import numpy as np

from . import _capi as C


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


def _c_array(x, dtype):
    """x as an array C may read: contiguous and aligned for its type (an
    array unpickled from a byte stream, as Dask hands them over, may start
    at any byte)."""
    return np.require(x, dtype, ["C_CONTIGUOUS", "ALIGNED"])
