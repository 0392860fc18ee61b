"""CAIL2019-SCM has one implementation, rf_scm: `roformer scm`, Model.scm
and rf_scm called directly through ctypes give the same float32 bits and
the same failures on the shared CAIL2019-SCM triplets, with bad lines
among them (each keeps its place in rf_scm's chunks)."""

import json
from ctypes import byref

import pytest

import roformer
from conftest import data_lines, model_dir, run_cli
from roformer import _capi as C
from test_model import same

BAD = {3: {"A": "x", "B": "y"},                       # missing "C"
       70: {"A": "甲", "B": "乙", "C": "丙", "label": "D"},  # a bad label
       130: {"A": "x", "B": 5, "C": "z"}}               # not a string


def triplets():
    """The first 200 triplets of the data set, with BAD lines put in."""
    lines = [json.loads(l) for l in data_lines("cail2019_scm/stage1_train.jsonl", 200)]
    for i in sorted(BAD):
        lines.insert(i, BAD[i])
    return lines


def library_scm(m, lines, mode, pooling, max_length, batch_size):
    """rf_scm on its own pipeline, the bad lines given as triplets without
    documents: ([result or None], distinct documents)."""
    params = C.rf_scm_default_params()
    params.mode, params.pooling = mode, pooling
    array = (C.rf_triplet * len(lines))()
    keep = []
    for k, t in enumerate(lines):
        if k in BAD:
            continue
        for s, side in enumerate("ABC"):
            b = t[side].encode()
            keep.append(b)
            array[k].doc[s], array[k].len[s] = b, len(b)
    pp = C.rf_pipeline_default_params()
    pp.max_length, pp.batch_size, pp.context.n_threads = max_length, batch_size, 1
    pl = C.c_void_p()
    err = C.rf_error()
    assert C.rf_pipeline_create(m._state.handle, byref(pp), byref(pl), byref(err)) == C.RF_OK
    out = (C.rf_scm_result * len(lines))()
    items = (C.rf_item_status * len(lines))()
    n_docs = C.c_int32()
    try:
        st = C.rf_scm(pl, array, len(lines), byref(params), out, byref(n_docs), items, byref(err))
    finally:
        C.rf_pipeline_free(pl)
    assert st == C.RF_OK, err.message
    results = []
    for k, r in enumerate(out):
        if k in BAD:
            assert items[k].status == C.RF_ERR_INPUT  # its own message comes from the caller
            results.append(None)
        else:
            assert items[k].status == C.RF_OK, items[k].error.message
            results.append({"prediction": chr(r.prediction), "sim_ab": float(r.sim_ab),
                            "sim_ac": float(r.sim_ac)})
    return results, n_docs.value


@pytest.mark.parametrize("mode,model,pooling,max_length,batch_size", [
    ("embed", "tiny-word-mlm", "mean", 256, 3),
    ("pair", "tiny-word-cls", None, 256, 8),
])
def test_cli_python_and_library_agree(mode, model, pooling, max_length, batch_size):
    lines = triplets()
    with roformer.Model(model_dir(model), threads=1) as m:
        args = ["scm", "-m", m.path, "--threads", "1", "--mode", mode, "--max-length",
                str(max_length), "--batch-size", str(batch_size)]
        if pooling:
            args += ["--pooling", pooling]
        cli, err = run_cli(args + ["-"], lines, ok=False)
        py = m.scm(lines, mode=mode, pooling=pooling, max_length=max_length,
                   batch_size=batch_size, errors="skip")
        c_mode = C.RF_SCM_EMBED if mode == "embed" else C.RF_SCM_PAIR
        c_pooling = m._pooling(pooling) if mode == "embed" else C.RF_POOLING_CLS
        lib, n_docs = library_scm(m, lines, c_mode, c_pooling, max_length, batch_size)
    assert len(cli) == len(py) == len(lib) == len(lines)
    for k in BAD:
        assert "error" in cli[k] and py[k] is None and lib[k] is None
    good = [k for k in range(len(lines)) if k not in BAD]
    same([py[k] for k in good], [cli[k] for k in good])
    same([lib[k] for k in good], [cli[k] for k in good])
    if mode == "embed":
        assert "%d distinct documents embedded" % n_docs in err
        assert m.last_scm_documents == n_docs
