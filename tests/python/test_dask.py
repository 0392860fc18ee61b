"""roformer.dask on a distributed.LocalCluster: two worker processes of one
thread each, loopback only, every wait bounded. Results equal the
single-process ones exactly; a bad input gives its error record in place;
a worker killed mid-job is replaced and its task retried, nothing lost or
duplicated; scm embeds each distinct document once across the cluster."""

import json
import logging
import os

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
import dask.bag as db  # noqa: E402

import roformer  # noqa: E402
import roformer.dask as rd  # noqa: E402
from conftest import cpu_has, data_lines, model_dir, run_cli  # noqa: E402

TIMEOUT = 90
BAD = b"bad \xff"


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=logging.ERROR)
    c = distributed.Client(cluster, timeout=TIMEOUT)
    yield c
    c.close()
    cluster.close()


def run(client, collection):
    return client.compute(collection).result(timeout=TIMEOUT)


def partitions(bag):
    with dask.config.set(scheduler="sync"):  # just the items, in this process
        return [list(p) for p in dask.compute(*bag.to_delayed())]


def stats(client):
    return list(client.run(rd.worker_stats, wait=True).values())


@pytest.fixture(scope="module")
def texts():
    t = [line.split("\t")[0] for line in data_lines("thucnews_titles/dev.txt", 200)]
    t[57] = BAD
    return t


def test_encode_equals_single_process(client, texts):
    M = model_dir("tiny-word-mlm")
    bag = db.from_sequence(texts, npartitions=6)
    got = run(client, rd.encode(bag, M, batch_size=8, pooling="mean"))
    assert len(got) == len(texts)
    with roformer.Model(M, threads=1) as m:
        want = []
        for part in partitions(bag):
            want += list(m.encode(part, batch_size=8, pooling="mean", errors="skip"))
        cli, _ = run_cli(["embed", "-m", M, "--threads", "1"], [BAD], ok=False)
    assert got[57] == {"error": cli[0]["error"]}  # the error record, in place
    for i, (g, w) in enumerate(zip(got, want)):
        if i != 57:
            assert g.dtype == np.float32 and np.array_equal(g, w), i
    # batch_size=1: each input's numbers are its own, so the whole corpus in
    # one process (here the CLI) gives the same vectors
    got1 = run(client, rd.encode(bag, M, batch_size=1, errors="skip"))
    cli1, _ = run_cli(["embed", "-m", M, "--threads", "1", "--batch-size", "1"], texts, ok=False)
    assert got1[57] is None
    for i, (g, c) in enumerate(zip(got1, cli1)):
        if i != 57:
            assert np.array_equal(g, np.array(c["embedding"], np.float32)), i
    # one model per worker process, loaded once whatever the task count
    loaded = [s["models_loaded"] for s in stats(client)]
    run(client, rd.encode(bag, M, batch_size=8, pooling="mean"))
    assert [s["models_loaded"] for s in stats(client)] == loaded and max(loaded) == 1


def test_partitions_change_no_bits(client, texts):
    """Any partitioning and batch size gives each text the vector it has
    alone (docs/compute.md, "Reproducibility"): 7 partitions of batches of 8
    on the cluster equal one process embedding each text on its own."""
    M = model_dir("tiny-char-proj")  # an embedding projection: f32 products under int8 too
    good = [t for t in texts if t != BAD][:120]
    for compute in ["f32"] + (["int8"] if cpu_has("avx2") else []):
        got = run(client, rd.encode(db.from_sequence(good, npartitions=7), M, compute=compute,
                                    batch_size=8, pooling="mean"))
        with roformer.Model(M, threads=1, compute=compute) as m:
            want = [m.encode([t], batch_size=1, pooling="mean")[0] for t in good]
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), compute


def test_encode_takes_a_dataframe_column(client, texts):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    M = model_dir("tiny-word-mlm")
    column = dd.from_pandas(pd.Series(texts[:50]), npartitions=3)
    got = run(client, rd.encode(column, M, batch_size=1))
    with roformer.Model(M, threads=1) as m:
        want = m.encode(texts[:50], batch_size=1)
    assert len(got) == 50 and all(np.array_equal(g, w) for g, w in zip(got, want))


def test_int8_equals_single_process(client, texts):
    """compute="int8" reaches the workers' models: the single-process int8
    numbers exactly, not the f32 ones."""
    if not cpu_has("avx2"):
        pytest.skip('this CPU has no AVX2: compute="int8" on the cluster not run')
    M, MC = model_dir("tiny-word-mlm"), model_dir("tiny-word-cls")
    bag = db.from_sequence(texts, npartitions=4)
    got = run(client, rd.encode(bag, M, compute="int8", batch_size=8, errors="skip"))
    labels = run(client, rd.classify(bag, MC, compute="int8", top_k=None, errors="skip"))
    want, f32, want_labels = [], [], []
    with roformer.Model(M, threads=1, compute="int8") as m, roformer.Model(M, threads=1) as m32, \
            roformer.Model(MC, threads=1, compute="int8") as mc:
        for part in partitions(bag):
            want += list(m.encode(part, batch_size=8, errors="skip"))
            f32 += list(m32.encode(part, batch_size=8, errors="skip"))
            want_labels += mc.classify(part, top_k=None, errors="skip")
    assert got[57] is None and labels[57] is None
    ok = [i for i in range(len(texts)) if i != 57]
    assert all(np.array_equal(got[i], want[i]) for i in ok)
    assert any(not np.array_equal(got[i], f32[i]) for i in ok), "int8 not in effect"
    assert labels == want_labels


def test_classify_equals_single_process(client, texts):
    M = model_dir("tiny-word-cls")
    bag = db.from_sequence(texts, npartitions=4)
    got = run(client, rd.classify(bag, M, top_k=2))
    with roformer.Model(M, threads=1) as m:
        want = []
        for part in partitions(bag):
            want += m.classify(part, top_k=2, errors="skip")
    assert "error" in got[57] and want[57] is None
    assert got[:57] + got[58:] == want[:57] + want[58:]


def test_scm_embeds_each_document_once_across_the_cluster(client):
    M = model_dir("tiny-word-mlm")
    triplets = [json.loads(l) for l in data_lines("cail2019_scm/stage1_train.jsonl", 40)]
    triplets.insert(5, {"A": "x", "B": "y"})
    before = sum(s["documents"] for s in stats(client))
    got = run(client, rd.scm(db.from_sequence(triplets, npartitions=4), M, max_length=512))
    embedded = sum(s["documents"] for s in stats(client)) - before
    cli, err = run_cli(["scm", "-m", M, "--threads", "1", "--max-length", "512", "-"], triplets,
                       ok=False)
    assert got[5] == {"error": cli[5]["error"]}
    with roformer.Model(M, threads=1) as m:
        want = m.scm(triplets, max_length=512, errors="skip")
        distinct = m.last_scm_documents
    assert got[:5] + got[6:] == want[:5] + want[6:]
    assert "%d distinct documents embedded" % distinct in err
    assert embedded == distinct, "the cluster embedded %d documents, %d distinct" % (
        embedded, distinct)
    # the records are the CLI's numbers too
    for g, c in zip(got[:5] + got[6:], cli[:5] + cli[6:]):
        assert g["prediction"] == c["prediction"]
        assert np.float32(g["sim_ab"]) == np.float32(c["sim_ab"])
        assert np.float32(g["sim_ac"]) == np.float32(c["sim_ac"])


def test_to_npy_writes_one_shard_per_partition_in_order(client, texts, tmp_path):
    M = model_dir("tiny-word-mlm")
    bag = db.from_sequence(texts, npartitions=5)
    vecs = rd.encode(bag, M, batch_size=8)
    paths = rd.to_npy(vecs, str(tmp_path / "emb"))
    assert [os.path.basename(p) for p in paths] == ["part-%05d.npy" % i for i in range(5)]
    assert sorted(os.listdir(tmp_path / "emb")) == sorted(os.path.basename(p) for p in paths)
    shards = np.concatenate([np.load(p) for p in paths])
    want = run(client, vecs)
    assert shards.shape == (len(texts), 64) and shards.dtype == np.float32
    assert np.isnan(shards[57]).all()
    assert all(np.array_equal(shards[i], want[i]) for i in range(len(texts)) if i != 57)


def _die_once(text, marker, victim):
    """Kills its worker process the first time it meets `victim`."""
    if text == victim and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return text


def test_killed_worker_is_recovered(client, texts, tmp_path):
    M = model_dir("tiny-word-mlm")
    marker = str(tmp_path / "killed")
    bag = db.from_sequence(texts, npartitions=8)
    pids = {s["pid"] for s in stats(client)}
    got = run(client, rd.encode(bag.map(_die_once, marker, texts[130]), M, batch_size=8,
                                errors="skip"))
    assert os.path.exists(marker), "no worker was killed"
    client.wait_for_workers(2, timeout=TIMEOUT)
    assert {s["pid"] for s in stats(client)} != pids  # a new process took the dead one's place
    want = run(client, rd.encode(bag, M, batch_size=8, errors="skip"))
    assert len(got) == len(want) == len(texts)
    assert all((g is None and w is None) or np.array_equal(g, w) for g, w in zip(got, want))
