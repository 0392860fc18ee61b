"""Malformed inputs raise the exceptions docs/python.md promises: a text
pair that is not two texts is a TypeError (a two-tuple is one input, a
pair), qa's question and context lists of different lengths a ValueError,
and a failing input a roformer.Error whose index is its position in a
list, None for an input given alone."""

import pytest
import roformer

from conftest import model_dir


def test_a_text_pair_is_two_texts(cls):
    for bad in [("a", "b", "c"), ("a",)]:
        with pytest.raises(TypeError, match="two texts, not %d" % len(bad)):
            cls.classify([bad])
    top = cls.classify(("今天", "天气很好"))  # one input: its top label
    assert len(top) == 1 and top[0]["label"] in cls.info["labels"]


def test_qa_lists_of_different_lengths():
    with roformer.Model(model_dir("tiny-qa"), threads=1) as m:
        for questions, contexts in [(["q1", "q2"], ["c1"]), (["q1"], ["c1", "c2"])]:
            with pytest.raises(ValueError, match="same length"):
                m.qa(questions, contexts)
        assert len(m.qa(["谁？"], ["张三在北京。"])) == 1


def test_the_index_of_a_failing_input(mlm):
    with pytest.raises(roformer.Error) as e:
        mlm.fill_mask("no mask here")
    assert e.value.index is None and not str(e.value).startswith("inputs[")
    with pytest.raises(roformer.Error) as e:
        mlm.fill_mask(["[MASK]好", "no mask here"])
    assert e.value.index == 1 and str(e.value).startswith("inputs[1]: ")
