"""vectors.py — what the shell tests' Python checks share about embeddings
(check.sh puts tests/ on PYTHONPATH), in float64 and without numpy:

  embeddings(path)   the "embedding" of each JSON line of a file, None for
                     an error line ({"error": ..., "line": N})
  cosine(a, b)       the cosine of two vectors

Run as a script, `vectors.py close MIN A B [--differ]` exits 0 when A and B
have as many lines, error lines in the same places, every other pair within
cosine MIN of each other and, with --differ, none identical (the compute
type under test was in effect); it prints what failed otherwise.
"""
import json
import math
import sys


def embeddings(path):
    """One vector (or None for an error line) per line of a JSON-lines file."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            out.append(None if "error" in obj else [float(x) for x in obj["embedding"]])
    return out


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def close(min_cosine, path_a, path_b, differ):
    a, b = embeddings(path_a), embeddings(path_b)
    if len(a) != len(b):
        return "%d lines against %d" % (len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b), 1):
        if (x is None) != (y is None):
            return "line %d: an error in one file only" % i
        if x is None:
            continue
        if differ and x == y:
            return "line %d: the same numbers in both (not in effect)" % i
        c = cosine(x, y)
        if not c >= min_cosine:
            return "line %d: cosine %.6f < %g" % (i, c, min_cosine)
    return None


def main(argv):
    if len(argv) < 4 or argv[0] != "close" or argv[4:] not in ([], ["--differ"]):
        sys.exit("usage: vectors.py close MIN A B [--differ]")
    problem = close(float(argv[1]), argv[2], argv[3], argv[4:] == ["--differ"])
    if problem:
        print("vectors.py close: %s" % problem, file=sys.stderr)
    sys.exit(1 if problem else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
