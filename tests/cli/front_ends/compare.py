"""The server, Python and Dask sides of tests/cli/test_front_ends.sh.

    compare.py server JOB MODEL TMP   asks the server at TMP/url.JOB, prints
                                      its answer as JSON
    compare.py python all MODELS TMP ST
                                      runs Python and Dask, compares them and
                                      the server's answers with the CLI's
                                      lines in TMP/cli.JOB: "ok ...",
                                      "FAIL ...: detail" or "skip ..." lines

Every job runs with the front end's defaults; values are compared exactly,
as float32 (the CLI and the server print the shortest text that reads back
as the same float32).
"""

import json
import os
import sys
import urllib.request

import numpy as np

DOC_STRIDE = 128
WINDOW = 128


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def inputs(tmp):
    qa = [json.loads(l) for l in lines(os.path.join(tmp, "qa.jsonl"))]
    scm_path = os.path.join(tmp, "scm.jsonl")
    scm = [json.loads(l) for l in lines(scm_path)] if os.path.getsize(scm_path) else []
    return {"texts": lines(os.path.join(tmp, "embed.txt")),
            "query": lines(os.path.join(tmp, "query.txt"))[0],
            "docs": lines(os.path.join(tmp, "docs.txt")),
            "qa": qa,
            "triplets": [{k: t[k] for k in "ABC"} for t in scm]}


# ==== each front end's answers, in one shape per job ====
#   embed: [[floats]]; rerank: [[index, score]] best first;
#   qa: [{answer, score, start, end}]; scm: [{prediction, sim_ab, sim_ac}]

def cli_answers(tmp, job):
    rows = [json.loads(l) for l in lines(os.path.join(tmp, "cli." + job))]
    if job == "embed":
        return [r["embedding"] for r in rows]
    if job == "rerank":
        return [[r["index"], r["score"]] for r in rows]
    return rows


def server_answer(tmp, job):
    url = lines(os.path.join(tmp, "url." + job))[0]
    inp = inputs(tmp)
    route, body = {
        "embed": ("/embed", {"inputs": inp["texts"], "truncate": True}),
        "rerank": ("/rerank", {"query": inp["query"], "texts": inp["docs"]}),
        "qa": ("/qa", {"inputs": inp["qa"], "doc_stride": DOC_STRIDE}),
        "scm": ("/scm", {"inputs": inp["triplets"], "window": WINDOW}),
    }[job]
    req = urllib.request.Request(url + route, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        got = json.loads(r.read())
    if job == "rerank":
        return [[h["index"], h["score"]] for h in got]
    return got


def python_answers(models, inp, st):
    import roformer
    out = {}
    with roformer.Model(st) as m:
        out["embed"] = m.encode(inp["texts"]).tolist()
    with roformer.Model(os.path.join(models, "tiny-word-cls")) as m:
        out["rerank"] = [[h["corpus_id"], h["score"]] for h in m.rank(inp["query"], inp["docs"])]
    with roformer.Model(os.path.join(models, "tiny-qa")) as m:
        out["qa"] = [m.qa(q["question"], q["context"], doc_stride=DOC_STRIDE) for q in inp["qa"]]
    if inp["triplets"]:
        with roformer.Model(os.path.join(models, "tiny-word-mlm"), window=WINDOW) as m:
            out["scm"] = m.scm(inp["triplets"])
    return out


def dask_answers(models, inp, st):
    import dask.bag as db
    import roformer.dask as rd
    out = {}
    # one partition: the same batch as the other front ends' single call
    bag = db.from_sequence(inp["texts"], npartitions=1)
    out["embed"] = [v.tolist() for v in rd.encode(bag, st).compute(scheduler="sync")]
    if inp["triplets"]:
        bag = db.from_sequence(inp["triplets"], npartitions=2)
        out["scm"] = rd.scm(bag, os.path.join(models, "tiny-word-mlm"),
                            window=WINDOW).compute(scheduler="sync")
    return out


# ==== comparing ====

def same(a, b):
    """a == b, numbers compared as float32."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b)
    return a == b


def main():
    if sys.argv[1] == "server":
        print(json.dumps(server_answer(sys.argv[4], sys.argv[2])))
        return
    models, tmp, st = sys.argv[3], sys.argv[4], sys.argv[5]
    inp = inputs(tmp)
    sides = {"python": python_answers(models, inp, st)}
    try:
        import dask.bag  # noqa: F401
        sides["dask"] = dask_answers(models, inp, st)
    except ImportError:
        print("skip python3-dask absent: Dask's side of embed and scm")
    for job in ("embed", "rerank", "qa", "scm"):
        if job == "scm" and not inp["triplets"]:
            continue
        cli = cli_answers(tmp, job)
        if not cli:
            print("FAIL cli %s: no lines to compare with" % job)
            continue
        path = os.path.join(tmp, "server." + job)
        if os.path.exists(path) and os.path.getsize(path):
            with open(path, encoding="utf-8") as f:
                sides["server"] = dict(sides.get("server", {}), **{job: json.load(f)})
        for side in ("server", "python", "dask"):
            got = sides.get(side, {}).get(job)
            if got is None:
                if side != "dask" or job in ("embed", "scm"):
                    if side != "dask" or "dask" in sides:
                        print("FAIL %s %s: no answer" % (side, job))
                continue
            if same(cli, got):
                print("ok %s %s equals the CLI's (%d results)" % (side, job, len(cli)))
            else:
                print("FAIL %s %s equals the CLI's: cli %s, %s %s"
                      % (side, job, json.dumps(cli)[:300], side, json.dumps(got)[:300]))


if __name__ == "__main__":
    main()
