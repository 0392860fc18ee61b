"""quantize_embeddings: float32 embeddings to int8, uint8 or packed bits,
computed as sentence-transformers' sentence_transformers.quantization
.quantize_embeddings computes them, so that vectors stored by either match.

    int8 / uint8   per dimension, the range [min, max] over the calibration
                   embeddings (default: the embeddings themselves) cut into
                   255 steps: uint8 = trunc((x - min) / step), int8 the same
                   minus 128 (then truncated toward zero as numpy's astype).
    binary         one bit per dimension (x > 0), packed 8 to a byte with
                   numpy.packbits (first dimension in the high bit), minus 128
                   as int8.
    ubinary        the same bytes as uint8.

A dimension whose range is empty (every embedding equal there, as for one
embedding alone) has step 0: as in sentence-transformers, its value is
then not meaningful.
"""

import numpy as np

PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")


def quantize_embeddings(embeddings, precision, ranges=None, calibration_embeddings=None):
    """embeddings (n, D) float (numpy array, list of vectors or torch
    tensor) in `precision` (one of PRECISIONS). ranges: a (2, D) array of
    per-dimension minima and maxima for int8/uint8; else the ranges of
    calibration_embeddings; else those of `embeddings`."""
    if precision not in PRECISIONS:
        raise ValueError("precision must be one of %s, not %r"
                         % (", ".join('"%s"' % p for p in PRECISIONS), precision))
    if hasattr(embeddings, "detach"):  # a torch tensor
        embeddings = embeddings.detach().cpu().numpy()
    embeddings = np.asarray(embeddings)
    if embeddings.dtype in (np.int8, np.uint8):
        raise ValueError("embeddings to quantize must be float, not %s" % embeddings.dtype)
    if embeddings.ndim != 2:
        raise ValueError("embeddings must be 2-D (n, dimensions), not of shape %s"
                         % (embeddings.shape,))
    if precision == "float32":
        return embeddings.astype(np.float32)
    if precision in ("int8", "uint8"):
        if ranges is None:
            cal = embeddings if calibration_embeddings is None else np.asarray(calibration_embeddings)
            ranges = np.vstack((np.min(cal, axis=0), np.max(cal, axis=0)))
        ranges = np.asarray(ranges)
        if ranges.shape != (2, embeddings.shape[1]):
            raise ValueError("ranges must have shape (2, %d), not %s"
                             % (embeddings.shape[1], ranges.shape))
        starts = ranges[0, :]
        steps = (ranges[1, :] - ranges[0, :]) / 255
        with np.errstate(divide="ignore", invalid="ignore"):
            if precision == "uint8":
                return ((embeddings - starts) / steps).astype(np.uint8)
            return ((embeddings - starts) / steps - 128).astype(np.int8)
    bits = np.packbits(embeddings > 0).reshape(embeddings.shape[0], -1)
    if precision == "binary":
        return (bits - 128).astype(np.int8)
    return bits


__all__ = ["quantize_embeddings", "PRECISIONS"]
