"""Model(truncation_direction=...) is HF's truncation_side for every call
that truncates, tokenize included: "left" keeps a text's last tokens, the
same count "right" keeps of its first; a pair loses from each text what
"right" takes from it (longest_first), from the other end. Expected ids
are cut here from the untruncated tokenization."""

import pytest

from conftest import model_dir

import roformer

TEXT = "一二三四五六七八九十"
PAIR = ("一二三四五六七八九十", "甲乙丙丁戊己")


@pytest.fixture(scope="module")
def models():
    path = model_dir("tiny-char-proj")
    with roformer.Model(path, threads=1) as right, \
            roformer.Model(path, threads=1, truncation_direction="left") as left:
        yield right, left


def test_left_keeps_a_texts_last_tokens(models):
    right, left = models
    whole = right.tokenize(TEXT)["input_ids"]
    cls, body, sep = whole[0], whole[1:-1], whole[-1]
    assert len(body) == 10
    assert right.tokenize(TEXT, max_length=6)["input_ids"] == [cls] + body[:4] + [sep]
    assert left.tokenize(TEXT, max_length=6)["input_ids"] == [cls] + body[-4:] + [sep]


def test_left_cuts_each_text_of_a_pair_by_rights_counts(models):
    right, left = models
    whole = right.tokenize(PAIR)
    sep_at = whole["input_ids"].index(whole["input_ids"][-1])
    a, b = whole["input_ids"][1:sep_at], whole["input_ids"][sep_at + 1:-1]
    kept = right.tokenize(PAIR, max_length=10)
    types = kept["token_type_ids"]
    na, nb = types.count(0) - 2, types.count(1) - 1   # [CLS] a [SEP] | b [SEP]
    assert na + nb == 7 and na < len(a) and nb < len(b)
    assert kept["input_ids"][1:1 + na] == a[:na]
    cls, sep = whole["input_ids"][0], whole["input_ids"][-1]
    got = left.tokenize(PAIR, max_length=10)["input_ids"]
    assert got == [cls] + a[len(a) - na:] + [sep] + b[len(b) - nb:] + [sep]
