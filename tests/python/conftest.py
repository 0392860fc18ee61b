"""Shared fixtures of the Python package's tests: the reference models (and
the mlm / cls models loaded once per test module), the
CLI to compare with, and a reader for expected.safetensors.

The package under test is tools/python/roformer (PYTHONPATH, set by
tests/python/test_python.sh) over $ROFORMER_LIBRARY; the CLI is $ROFORMER. Both run
with ROFORMER_BLAS_CORE=none and the same thread count, so they compute with
the same OpenBLAS kernels."""

import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

os.environ.setdefault("ROFORMER_BLAS_CORE", "none")
REF = os.environ.get("ROFORMER_REFERENCE", "../shared/reference")
DATA = os.path.join(os.path.dirname(os.path.abspath(REF)), "data")
CLI = os.environ.get("ROFORMER", "build/roformer")
MODELS = ["tiny-word-mlm", "tiny-word-cls", "tiny-char-proj", "tiny-qa", "small-fp16",
          "tiny-v2-mlm", "tiny-v2-cls"]


def model_dir(name):
    path = os.path.join(REF, "models", name)
    if not os.path.isdir(path):
        pytest.skip("reference fixtures absent (%s)" % REF)
    return path


@pytest.fixture(scope="module")
def mlm():
    """tiny-word-mlm, one thread (as the CLI it is compared with)."""
    import roformer
    with roformer.Model(model_dir("tiny-word-mlm"), threads=1) as m:
        yield m


@pytest.fixture(scope="module")
def cls():
    """tiny-word-cls, one thread."""
    import roformer
    with roformer.Model(model_dir("tiny-word-cls"), threads=1) as m:
        yield m


def cpu_has(flag):
    """Whether the CPU has `flag` (a /proc/cpuinfo name such as "avx2"), as
    the shell tests decide what the library must accept."""
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and flag in line.split() for line in f)


def data_lines(rel, n):
    path = os.path.join(DATA, rel)
    if not os.path.exists(path):
        pytest.skip("data set absent (%s)" % path)
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(n), f)]


def cases(name):
    with open(os.path.join(model_dir(name), "cases.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def run_cli(args, lines=(), ok=True):
    """Runs the CLI with `lines` on stdin (a regular file, so it reads its
    chunks whole); returns (parsed JSON lines, stderr)."""
    with tempfile.TemporaryFile("w+b") as f:
        for line in lines:
            if not isinstance(line, (str, bytes)):
                line = json.dumps(line, ensure_ascii=False)
            if isinstance(line, str):
                line = line.encode("utf-8", "surrogatepass")
            f.write(line + b"\n")
        f.seek(0)
        p = subprocess.run([CLI] + list(args), stdin=f, capture_output=True, timeout=120)
    if ok and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (args, p.returncode, p.stderr.decode()))
    out = [json.loads(l) for l in p.stdout.decode().splitlines()]
    return out, p.stderr.decode()


def read_safetensors(path):
    """name -> numpy array, read with numpy alone (8-byte header length,
    JSON header, raw little-endian data)."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    return out


def f32(x):
    """A CLI JSON number as the float32 it stands for."""
    return np.float32(x)
