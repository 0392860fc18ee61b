"""roformer.dask.to_npy leaves nothing half-written under a final name
(reliability.md): a write that fails part-way leaves the shard's final name
absent, or, when an earlier complete shard is there, that shard as it was.
The failure is a numpy.save that writes some bytes, then raises, as a full
disk would."""

import os

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="python3-dask absent")
import dask.bag as db  # noqa: E402

import roformer.dask as rd  # noqa: E402


def test_a_failed_write_leaves_no_shard_under_its_name(tmp_path, monkeypatch):
    vectors = db.from_sequence([np.ones(4, np.float32), np.zeros(4, np.float32)], npartitions=1)
    out = tmp_path / "emb"
    with dask.config.set(scheduler="synchronous"):
        first = rd.to_npy(vectors, str(out))
        assert [os.path.basename(p) for p in first] == ["part-00000.npy"]
        before = (out / "part-00000.npy").read_bytes()

        def save_then_fail(f, array):
            f.write(b"\x93NUMPY\x01\x00")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(rd.np, "save", save_then_fail)
        with pytest.raises(OSError, match="No space left"):
            rd.to_npy(vectors.map(lambda v: v + 1), str(out))
        assert (out / "part-00000.npy").read_bytes() == before   # the complete shard kept
        with pytest.raises(OSError, match="No space left"):
            rd.to_npy(vectors, str(tmp_path / "fresh"))
        assert not (tmp_path / "fresh" / "part-00000.npy").exists()
    assert np.array_equal(np.load(out / "part-00000.npy"), np.stack([np.ones(4), np.zeros(4)]))
