"""Long inputs through the Python package: Model(extend_positions=True,
rope_scaling=..., rope_factor=..., window=..., stride=...) gives what the
CLI gives with the same options (the numbers themselves are checked by
tests/model/test_long_positions.sh and tests/jobs/test_windows.c), and stats() counts
the windows."""
import json
import subprocess

import numpy as np
import pytest
import roformer

from conftest import CLI, model_dir

LONG = "今天天气很好，我们去公园散步。" * 60  # 902 tokens on the char-level v2 vocab


def cli_embed(model, *opts):
    out = subprocess.run([CLI, "embed", "-m", model, "--threads", "1", *opts, LONG],
                         capture_output=True, text=True, check=True).stdout
    return np.array(json.loads(out)["embedding"], dtype=np.float32)


def test_too_long_without_options_names_them():
    with roformer.Model(model_dir("tiny-v2-mlm"), threads=1) as m:
        with pytest.raises(roformer.Error, match="extend_positions or a window allow more"):
            m.encode([LONG])
        with pytest.raises(ValueError, match="extend_positions=True allows more"):
            roformer.Model(model_dir("tiny-v2-mlm"), max_length=1024)


@pytest.mark.parametrize("opts,kw", [
    (["--extend-positions"], {"extend_positions": True}),
    (["--rope-scaling", "linear", "--rope-factor", "2"], {"rope_scaling": "linear", "rope_factor": 2}),
    (["--extend-positions", "--rope-scaling", "ntk", "--rope-factor", "4"],
     {"extend_positions": True, "rope_scaling": "ntk", "rope_factor": 4.0}),
    (["--window", "256", "--stride", "64"], {"window": 256, "stride": 64}),
])
def test_same_as_cli(opts, kw):
    model = model_dir("tiny-v2-mlm")
    with roformer.Model(model, threads=1, **kw) as m:
        got = m.encode([LONG])[0]
        # float32 rounding of the same products in another batch layout: 1e-5 on unit-scale values
        assert np.abs(got - cli_embed(model, *opts)).max() < 1e-5
        stats = m.stats()
        if "window" in kw:
            assert stats["windowed_inputs"] == 1 and stats["windows"] >= 4
            assert m.info["long_inputs"]["window"] == 256
        else:
            assert stats["windows"] == 0


def test_window_classify_and_scm():
    with roformer.Model(model_dir("tiny-v2-cls"), threads=1, window=128) as m:
        probs = m.classify([LONG], top_k=None)
        assert len(probs) == 1
        assert m.stats()["windows"] > 1
    with roformer.Model(model_dir("tiny-v2-mlm"), threads=1, window=128, stride=16) as m:
        res = m.scm([{"A": LONG, "B": LONG, "C": "短句子"}])
        assert res[0]["prediction"] == "B"


@pytest.mark.parametrize("kw", [{"rope_factor": 0}, {"rope_scaling": "yarn"}, {"window": 2},
                                {"window": 64, "stride": 62}, {"stride": 4}, {"window": 513}])
def test_bad_options(kw):
    with pytest.raises(ValueError):
        roformer.Model(model_dir("tiny-v2-mlm"), **kw)
