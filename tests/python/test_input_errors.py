"""Malformed inputs raise the exceptions docs/python.md promises, before
anything runs: a text pair that is not two texts is a TypeError (a
two-tuple is one input, a pair), and qa's question and context lists of
different lengths a ValueError."""

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
