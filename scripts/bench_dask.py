#!/usr/bin/python3
"""bench_dask.py — sentence embeddings of a corpus by one `roformer embed`
process, and by roformer.dask on a LocalCluster of 2 worker processes; both
1 compute thread per process. Prints throughput and what the scheduler
costs.

    PYTHONPATH=tools/python /usr/bin/python3 scripts/bench_dask.py \\
        [--model DIR|GGUF] [--corpus FILE] [--n N] [--partitions P] [--rounds R]

Defaults: the reference model small-fp16 (2 layers, hidden 256), the first
200 CJRC court-judgment paragraphs, 16 partitions, 3 rounds (CLI and Dask
interleaved; medians). --max-length 512, batch size 8 on both sides.

Scheduler overhead: the CPU time the Dask job spent (workers, and this
process, where LocalCluster runs the scheduler) beyond the single process's
CPU time, per task; the time the tasks spent computing (task stream)
against 2 x the wall time; and the wall time of the same graph with tasks
that do nothing. CPU times hold up better than wall times on a shared
machine.
"""

import argparse
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import dask.bag as db  # noqa: E402
import distributed  # noqa: E402

import roformer  # noqa: E402
import roformer.dask as rd  # noqa: E402


def load_model(path, max_length):
    rd.worker_model(path, threads=1, max_length=max_length)
    return os.getpid()


def process_cpu():
    t = os.times()
    return t.user + t.system


def cli_embed(cli, model, texts_path, max_length, batch_size):
    """Wall and CPU seconds of one `roformer embed` process."""
    with tempfile.NamedTemporaryFile(suffix=".npy") as out, open(texts_path, "rb") as stdin:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([cli, "embed", "-m", model, "--threads", "1", "--max-length",
                        str(max_length), "--batch-size", str(batch_size), "--format", "npy",
                        "-o", out.name], stdin=stdin, check=True)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def dask_embed(client, model, texts, partitions, max_length, batch_size):
    """Wall seconds, CPU seconds of the workers, of this process (scheduler
    and client), seconds the tasks spent computing, and the task count."""
    bag = db.from_sequence(texts, npartitions=partitions)
    job = rd.encode(bag, model, max_length=max_length, batch_size=batch_size)
    w0, p0 = sum(client.run(process_cpu).values()), process_cpu()
    with distributed.get_task_stream(client) as ts:
        t0 = time.perf_counter()
        vecs = client.compute(job).result()
        wall = time.perf_counter() - t0
    w1, p1 = sum(client.run(process_cpu).values()), process_cpu()
    compute = sum(s["stop"] - s["start"] for task in ts.data for s in task["startstops"]
                  if s["action"] == "compute")
    assert len(vecs) == len(texts)
    return wall, w1 - w0, p1 - p0, compute, len(ts.data)


def empty_graph(client, texts, partitions):
    bag = db.from_sequence(texts, npartitions=partitions).map_partitions(list)
    t0 = time.perf_counter()
    client.compute(bag).result()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "..", "shared", "reference", "models",
                                                    "small-fp16"))
    ap.add_argument("--corpus", default=os.path.join(
        ROOT, "..", "shared", "data", "cail2019_cjrc_legal_paragraphs", "paragraphs.txt"))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "roformer"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=8)
    a = ap.parse_args()
    os.environ.setdefault("ROFORMER_BLAS_CORE", "none")  # the same kernels in every process

    with open(a.corpus, encoding="utf-8") as f:
        texts = [line.rstrip("\n") for _, line in zip(range(a.n), f)]
    with roformer.Model(a.model, max_length=a.max_length) as m:
        tokens = sum(len(ids) for ids in m.tokenize(texts)["input_ids"])
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(texts) + "\n")
        texts_path = f.name

    t0 = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    start = time.perf_counter() - t0
    t0 = time.perf_counter()
    client.run(load_model, a.model, a.max_length)  # once per worker, before the timed runs
    load = time.perf_counter() - t0

    cli_runs, dask_runs, empty_s = [], [], []
    for _ in range(a.rounds):  # interleaved: the machine's load hits both alike
        cli_runs.append(cli_embed(a.cli, a.model, texts_path, a.max_length, a.batch_size))
        dask_runs.append(dask_embed(client, a.model, texts, a.partitions, a.max_length,
                                    a.batch_size))
        empty_s.append(empty_graph(client, texts, a.partitions))
    client.close()
    cluster.close()
    os.unlink(texts_path)

    def med(runs, i):
        return statistics.median(r[i] for r in runs)

    cli, cli_cpu = med(cli_runs, 0), med(cli_runs, 1)
    dk, w_cpu, s_cpu, busy, n_tasks = (med(dask_runs, i) for i in range(5))
    empty = statistics.median(empty_s)
    print("corpus: %d paragraphs, %d tokens (max length %d); model %s; %d rounds, medians"
          % (len(texts), tokens, a.max_length, os.path.basename(os.path.normpath(a.model)),
             a.rounds))
    print("roformer embed, 1 process x 1 thread:  %7.2f s  %6.1f texts/s  %7.0f tokens/s  "
          "CPU %.2f s" % (cli, len(texts) / cli, tokens / cli, cli_cpu))
    print("roformer.dask, 2 workers x 1 thread:   %7.2f s  %6.1f texts/s  %7.0f tokens/s  "
          "CPU %.2f s workers + %.2f s scheduler/client  (%.2fx the single process's throughput)"
          % (dk, len(texts) / dk, tokens / dk, w_cpu, s_cpu, cli / dk))
    print("cluster start %.2f s, model load on the workers %.3f s (once, not in the times above)"
          % (start, load))
    print("scheduler overhead: %d tasks, %d partitions; CPU beyond the single process's "
          "%.2f s (%.1f ms per task); tasks computing %.2f s of 2 x %.2f s wall; "
          "an empty graph of the same shape %.3f s"
          % (n_tasks, a.partitions, w_cpu + s_cpu - cli_cpu,
             1e3 * (w_cpu + s_cpu - cli_cpu) / max(n_tasks, 1), busy, dk, empty))
    print("runs (wall s): cli %s; dask %s" % (" ".join("%.2f" % r[0] for r in cli_runs),
                                             " ".join("%.2f" % r[0] for r in dask_runs)))


if __name__ == "__main__":
    main()
