"""The refusals docs/python.md lists, each with its exception type and a
message naming the argument: Model's threads (1 to 256), max_length and
truncation_direction; batch_size (1 to 4096); prompts that are not a dict of
str to str; similarity and qa on lists of different lengths; scm's unknown
mode; qa's negative doc_stride and max_answer_tokens below 1; encode's
device, output_value, truncate_dim, precision and errors; util's cos_sim and
semantic_search, quantize_embeddings, and roformer.dask's errors. Each range
is held at both ends: the last value accepted and the first refused.

And the import: an ImportError naming every place the library was looked
for when none has it, and naming both versions when the library found is of
another version than the package needs (a stand-in library that reports
2.0.0 and forwards everything else to the real one)."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import model_dir

import roformer


@pytest.fixture(scope="module")
def qa_model():
    with roformer.Model(model_dir("tiny-qa"), threads=1) as m:
        yield m


# ==== Model(...) ====

@pytest.mark.parametrize("threads", [0, 257, -1, 2.0, "2"])
def test_threads_outside_1_to_256_is_a_value_error(threads):
    with pytest.raises(ValueError, match=r"^threads must be an integer from 1 to 256 or None, not "):
        roformer.Model(model_dir("tiny-word-mlm"), threads=threads)


@pytest.mark.parametrize("threads", [1, 256])
def test_threads_1_and_256_are_accepted(threads):
    with roformer.Model(model_dir("tiny-word-mlm"), threads=threads) as m:
        assert m.threads == threads


def test_max_length_outside_2_to_the_maximum_is_a_value_error():
    path = model_dir("tiny-word-mlm")
    top = roformer.Model(path).info["max_position"]
    for bad in (1, top + 1):
        with pytest.raises(ValueError, match=r"^max_length must be from 2 to the model's maximum of %d, not %d"
                           % (top, bad)):
            roformer.Model(path, max_length=bad)
    for good in (2, top):
        with roformer.Model(path, max_length=good) as m:
            assert m.max_length == good


def test_truncation_direction_other_than_right_or_left_is_a_value_error():
    with pytest.raises(ValueError, match=r'^truncation_direction must be "right" or "left", not \'up\''):
        roformer.Model(model_dir("tiny-word-mlm"), truncation_direction="up")


# ==== batch_size: 1 to 4096 ====

@pytest.mark.parametrize("batch_size", [0, 4097, -3, 8.0])
def test_batch_size_outside_1_to_4096_is_a_value_error(mlm, batch_size):
    with pytest.raises(ValueError, match=r"^batch_size must be an integer from 1 to 4096, not "):
        mlm.encode(["今天天气很好"], batch_size=batch_size)
    with pytest.raises(ValueError, match=r"^batch_size must be an integer from 1 to 4096, not "):
        mlm.similarity("今天", "明天", batch_size=batch_size)


def test_batch_size_1_and_4096_are_accepted(mlm):
    one = mlm.encode(["今天天气很好", "今天天气不错"], batch_size=1)
    most = mlm.encode(["今天天气很好", "今天天气不错"], batch_size=4096)
    assert one.shape == most.shape == (2, mlm.hidden_size)


# ==== prompts ====

@pytest.mark.parametrize("prompts", [["query: "], {"query": 1}, {1: "query: "}, "query: "])
def test_prompts_not_a_dict_of_str_to_str_is_a_type_error(mlm, prompts):
    before = dict(mlm.prompts)
    with pytest.raises(TypeError, match=r"^prompts must be a dict of str to str"):
        mlm.prompts = prompts
    assert mlm.prompts == before


def test_prompts_may_be_replaced_with_a_dict(mlm):
    before = mlm.prompts
    try:
        mlm.prompts = {"query": "查询："}
        assert mlm.prompts == {"query": "查询："}
    finally:
        mlm.prompts = before


# ==== similarity, scm, qa ====

def test_similarity_of_lists_of_different_lengths_is_a_value_error(mlm):
    with pytest.raises(ValueError, match=r"^similarity: a and b must have the same length"):
        mlm.similarity(["今天", "明天"], ["后天"])


def test_scm_unknown_mode_is_a_value_error(mlm):
    with pytest.raises(ValueError, match=r'^mode must be "embed" or "pair", not \'bogus\''):
        mlm.scm([{"A": "甲", "B": "乙", "C": "丙"}], mode="bogus")


def test_qa_lists_of_different_lengths_is_a_value_error(qa_model):
    with pytest.raises(ValueError, match=r"^qa: question and context must have the same length"):
        qa_model.qa(["谁？", "哪里？"], ["张三在北京"])


@pytest.mark.parametrize("doc_stride", [-1, -128])
def test_qa_negative_doc_stride_is_a_value_error(qa_model, doc_stride):
    with pytest.raises(ValueError, match=r"^doc_stride must be a non-negative integer or None"):
        qa_model.qa("谁？", "张三在北京", doc_stride=doc_stride)


@pytest.mark.parametrize("max_answer_tokens", [0, -1])
def test_qa_max_answer_tokens_below_1_is_a_value_error(qa_model, max_answer_tokens):
    with pytest.raises(ValueError, match=r"^max_answer_tokens must be a positive integer or None"):
        qa_model.qa("谁？", "张三在北京", max_answer_tokens=max_answer_tokens)


def test_qa_edge_values_are_accepted(qa_model):
    answer = qa_model.qa("谁？", "张三在北京工作", doc_stride=0, max_answer_tokens=1)
    assert len(answer["answer"]) == 1, answer   # one token of a character-level context


# ==== encode's own refusals ====

@pytest.mark.parametrize("kwargs, message", [
    ({"device": "cuda"}, r'^device must be "cpu" or None'),
    ({"output_value": "x"}, r'^output_value must be "sentence_embedding", "token_embeddings" or None'),
    ({"truncate_dim": 0}, r"^truncate_dim must be an integer from 1 to the hidden size 64"),
    ({"truncate_dim": 65}, r"^truncate_dim must be an integer from 1 to the hidden size 64"),
    ({"precision": "x"}, r'^precision must be one of "float32", "int8"'),
    ({"errors": "x"}, r'^errors must be "raise" or "skip"'),
])
def test_encode_refusals_are_value_errors(mlm, kwargs, message):
    with pytest.raises(ValueError, match=message):
        mlm.encode(["今天天气很好"], **kwargs)


# ==== the import ====

def _import_error(env):
    """The ImportError's message of `import roformer` in a fresh interpreter
    with `env` added; fails when the import succeeds."""
    p = subprocess.run([sys.executable, "-c", "import roformer"], env=dict(os.environ, **env),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0, "import roformer succeeded"
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: "), p.stderr
    return last


def test_import_without_the_library_names_every_place_tried(tmp_path):
    # The package copied alone: nothing beside it, no build tree above it.
    pkg = tmp_path / "site" / "roformer"
    shutil.copytree(os.path.dirname(roformer.__file__), pkg,
                    ignore=shutil.ignore_patterns("libroformer.so*", "__pycache__"))
    missing = str(tmp_path / "nowhere" / "libroformer.so")
    last = _import_error({"ROFORMER_LIBRARY": missing, "PYTHONPATH": str(pkg.parent),
                          "LD_LIBRARY_PATH": ""})
    assert "libroformer.so not found; set ROFORMER_LIBRARY" in last
    here = str(pkg)
    for place in (missing,                                                      # $ROFORMER_LIBRARY
                  os.path.join(here, "libroformer.so"),                         # beside the package
                  os.path.join(here, "..", "..", "..", "build", "libroformer.so"),  # the build tree
                  os.path.join(here, "..", "..", "..", "libroformer.so")):      # the installed prefix
        assert place in last, (place, last)
    assert "; libroformer.so (" in last, last                                   # the dynamic loader


STAND_IN = r"""
/* A library of another version (MAJOR.0.0, one above the package's):
 * rf_version and rf_version_matches of its own, every other symbol from the
 * real library it links. */
#include <stdbool.h>
#include <stdint.h>
const char *rf_version(void) { return "MAJOR.0.0"; }
bool rf_version_matches(int32_t major, int32_t minor) { (void)minor; return major == MAJOR; }
"""


def test_import_of_another_library_version_names_both(tmp_path):
    real = os.path.abspath(roformer.library_path)
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler to build the stand-in library")
    src = tmp_path / "stand_in.c"
    other = roformer._capi.RF_VERSION_MAJOR + 1
    src.write_text(STAND_IN.replace("MAJOR", str(other)))
    lib = tmp_path / "libroformer.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src), real,
                    "-Wl,-rpath," + os.path.dirname(real), "-Wl,--no-as-needed"],
                   check=True, timeout=60)
    last = _import_error({"ROFORMER_LIBRARY": str(lib)})
    want = "roformer: %s is version %d.0.0; this package needs %d.%d or a later %d.x" % (
        os.path.normpath(str(lib)), other, roformer._capi.RF_VERSION_MAJOR,
        roformer._capi.RF_VERSION_MINOR, roformer._capi.RF_VERSION_MAJOR)
    assert last == "ImportError: " + want, last


# ==== roformer.util, roformer.quantization, roformer.dask ====

def test_cos_sim_of_rows_of_different_lengths_is_a_value_error():
    from roformer import util
    with pytest.raises(ValueError, match=r"^a has 4 dimensions, b 5"):
        util.cos_sim(np.ones((2, 4), np.float32), np.ones((3, 5), np.float32))


@pytest.mark.parametrize("kwargs, name", [({"query_chunk_size": 0}, "query_chunk_size"),
                                          ({"corpus_chunk_size": -1}, "corpus_chunk_size"),
                                          ({"top_k": 1.5}, "top_k")])
def test_semantic_search_sizes_not_positive_integers_are_value_errors(kwargs, name):
    from roformer import util
    e = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match=r"^%s must be a positive integer" % name):
        util.semantic_search(e, e, **kwargs)


def test_quantize_embeddings_refusals():
    from roformer.quantization import quantize_embeddings
    e = np.arange(24, dtype=np.float32).reshape(3, 8)
    with pytest.raises(ValueError, match=r"^precision must be one of"):
        quantize_embeddings(e, "float16")
    with pytest.raises(ValueError, match=r"^embeddings must be 2-D"):
        quantize_embeddings(e[0], "int8")
    with pytest.raises(ValueError, match=r"^ranges must have shape \(2, 8\), not \(3, 8\)"):
        quantize_embeddings(e, "int8", ranges=np.ones((3, 8)))
    for dtype in (np.int8, np.uint8):
        with pytest.raises(ValueError, match=r"^embeddings to quantize must be float"):
            quantize_embeddings(e.astype(dtype), "uint8")


def test_dask_errors_other_than_record_skip_raise_is_a_value_error():
    pytest.importorskip("dask.bag", reason="python3-dask absent")
    import dask.bag as db
    import roformer.dask as rd
    bag = db.from_sequence(["今天"])
    for job in (rd.encode, rd.classify):
        with pytest.raises(ValueError, match=r'^errors must be "record", "skip" or "raise"'):
            job(bag, model_dir("tiny-word-cls"), errors="x")
