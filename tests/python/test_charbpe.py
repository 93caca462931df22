"""Tests of ``bytepair.charbpe``, the character-level BPE of the first course notes.

Oracles: the notes' own result on UD English EWT (1108 tokens after 1000 merges on the first
10000 sentences), a naive trainer below that recounts every pair from scratch at each merge
(the notes' loop, with ``max`` over a dict filled in corpus order), and small cases by hand.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import charbpe
from bytepair.charbpe import CharBPE, pretokenize, train


def naive_train(sentences: list[str], num_merges: int) -> list[tuple[str, str]]:
    """The notes' loop, written the slow obvious way: recount all pairs before each merge."""
    words = Counter(w for s in sentences for w in pretokenize(s))
    splits = {w: list(w) for w in words}
    merges = []
    for _ in range(num_merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for w, n in words.items():  # corpus order: first appearance of each word
            for pair in zip(splits[w], splits[w][1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = max(pairs, key=pairs.__getitem__)  # the first one seen wins a tie
        merges.append(best)
        splits = {w: charbpe._merge(s, best) for w, s in splits.items()}
    return merges


@pytest.fixture(scope="module")
def ewt_sentences(data_dir: Path) -> list[str]:
    # en_ewt.train.txt holds one sentence per line (the `# text = ` lines of the treebank)
    text = (data_dir / "en_ewt" / "en_ewt.train.txt").read_text(encoding="utf-8")
    return text.split("\n")[:10000]


@pytest.fixture(scope="module")
def ewt_bpe(ewt_sentences: list[str]) -> CharBPE:
    return train(ewt_sentences, 1000)


def test_course_notes_result_1108_tokens(ewt_bpe: CharBPE) -> None:
    assert len(ewt_bpe.merge_rules) == 1000
    assert len(ewt_bpe.vocab) == 1108
    for token in [
        "the",
        "Ġthe",
        "ing",
        "ation",
        "ĠAmerican",
        "ĠIraq",
        "ĠUnited",
        "ĠStates",
        "Ġpeople",
        "Ġbecause",
    ]:
        assert token in ewt_bpe.vocab, token
    # ids follow the sorted order of the tokens
    assert list(ewt_bpe.vocab) == sorted(ewt_bpe.vocab)
    assert list(ewt_bpe.vocab.values()) == list(range(1108))
    # 108 distinct characters (Ġ among them) + 1000 distinct merge products
    assert sum(len(t) == 1 for t in ewt_bpe.vocab) == 108


def test_incremental_counts_equal_naive_recount(ewt_sentences: list[str]) -> None:
    sentences = ewt_sentences[:300]
    assert train(sentences, 200).merge_rules == naive_train(sentences, 200)


@given(st.lists(st.text(alphabet="ab c'.\n", max_size=30), max_size=6), st.integers(0, 30))
def test_equals_naive_on_random_corpora(sentences: list[str], n: int) -> None:
    if not any(pretokenize(s) for s in sentences):  # no word at all: nothing to learn from
        with pytest.raises(ValueError, match="no words to learn from"):
            train(sentences, n)
        return
    assert train(sentences, n).merge_rules == naive_train(sentences, n)


def test_tie_goes_to_the_pair_seen_first() -> None:
    # counts: aa 2, ab 2, Ġa 1, Ġc 2, cd 2: the tie at 2 goes to (a, a), seen first.
    # After it, (aa, b) is a new pair but occurs first in the corpus, so it beats (Ġ, c),
    # which a dict updated in place would have met first (and a byte-order rule would take).
    bpe = train(["aab aab cd cd"], 10)
    assert bpe.merge_rules == [("a", "a"), ("aa", "b"), ("Ġ", "c"), ("Ġc", "d"), ("Ġ", "aab")]
    assert bpe.tokenize("aab cd") == ["aab", "Ġcd"]


def test_pretokenize_marks_words_after_whitespace() -> None:
    assert pretokenize("The cat's  toy, isn't it?\tYes") == [
        "The",
        "Ġcat's",
        "Ġtoy",
        ",",
        "Ġisn't",
        "Ġit",
        "?",
        "ĠYes",
    ]
    assert pretokenize(" leading") == ["Ġleading"]


def test_encode_decode_and_save_load(ewt_bpe: CharBPE, tmp_path: Path) -> None:
    text = "The United States said people in Iraq would vote."
    tokens = ewt_bpe.tokenize(text)
    assert "ĠUnited" in tokens and "ĠStates" in tokens
    ids = ewt_bpe.encode(text)
    assert ids == [ewt_bpe.vocab[t] for t in tokens]
    assert ewt_bpe.decode(ids) == text  # single spaces only: nothing lost

    path = tmp_path / "bpe.json"
    ewt_bpe.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc) == {"merge_rules", "vocab"}
    assert doc["merge_rules"][0] == list(ewt_bpe.merge_rules[0])
    loaded = CharBPE.load(path)
    assert loaded.merge_rules == ewt_bpe.merge_rules
    assert loaded.vocab == ewt_bpe.vocab
    assert loaded.encode(text) == ids


def test_merge_rules_apply_in_learned_order() -> None:
    # (b, c) was learned before (a, b): "abc" becomes a + bc, not ab + c
    bpe = CharBPE([("b", "c"), ("a", "b")], {t: i for i, t in enumerate("a ab b bc c".split())})
    assert bpe.tokenize("abc") == ["a", "bc"]
    assert bpe.tokenize("abab") == ["ab", "ab"]


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: not a JSON file"):
        CharBPE.load(bad)
    bad.write_text(json.dumps({"merge_rules": [["a"]], "vocab": {"a": 0}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r'bad.json: "merge_rules"\[0\]'):
        CharBPE.load(bad)
    bad.write_text(json.dumps({"merge_rules": [["a", "b"]], "vocab": {"a": 0}}), encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: merge rule 0 .* 'b' is not in vocab"):
        CharBPE.load(bad)
    with pytest.raises(FileNotFoundError):
        CharBPE.load(tmp_path / "missing.json")
    # an int of over 4300 digits: Python's bare "Exceeds the limit" named no file (QA)
    bad.write_text('{"merge_rules": [], "vocab": {"a": ' + "9" * 5000 + "}}", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: not a JSON file: .*4300"):
        CharBPE.load(bad)


def test_save_is_atomic_and_checks_its_path(tmp_path: Path, monkeypatch) -> None:
    # as Tokenizer.save: an interrupted save keeps the old file and leaves no temporary one
    small = CharBPE([("a", "b")], {"a": 0, "b": 1, "ab": 2})
    other = CharBPE([("b", "a")], {"a": 0, "b": 1, "ba": 2})
    path = tmp_path / "bpe.json"
    small.save(path)
    before = path.read_bytes()

    def fail(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(KeyboardInterrupt):
        other.save(path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["bpe.json"] and path.read_bytes() == before
    other.save(str(path))  # a str path too
    assert CharBPE.load(str(path)).merge_rules == [("b", "a")]
    for bad in (bytes(path), None, 3):
        with pytest.raises(TypeError, match="CharBPE.save takes the path to write"):
            small.save(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="CharBPE.load takes the path"):
            CharBPE.load(bad)  # type: ignore[arg-type]
    with pytest.raises(IsADirectoryError):
        small.save(tmp_path)
    with pytest.raises(FileNotFoundError):
        small.save(tmp_path / "no such folder" / "bpe.json")


# ----------------------------------------------- the limits, and how byte-level BPE lifts them


def test_limit_unseen_character_cannot_be_encoded(ewt_bpe: CharBPE, ewt_sentences) -> None:
    text = "Smile 😀 in 東京"
    with pytest.raises(ValueError, match=r"cannot encode '😀' \(U\+1F600\)"):
        ewt_bpe.encode(text)
    # byte-level BPE trained on the same sentences: every string is some bytes
    tok = bytepair.train(iter(ewt_sentences), 256 + 300)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert set(tok.encode("😀")) <= set(range(256))  # unseen: falls back to its 4 bytes


def test_limit_whitespace_runs_collapse(ewt_bpe: CharBPE, ewt_sentences) -> None:
    text = "The  people\tsaid:\n\n  yes ."
    assert ewt_bpe.decode(ewt_bpe.encode(text)) == "The people said: yes ."
    # the same words in a different layout encode alike: the layout is lost
    assert ewt_bpe.encode(text) == ewt_bpe.encode("The people said: yes .")
    tok = bytepair.train(iter(ewt_sentences), 256 + 300)
    assert tok.decode(tok.encode(text)) == text
    assert tok.encode(text) != tok.encode("The people said: yes .")


def test_train_rejects_negative_merges() -> None:
    with pytest.raises(ValueError, match="num_merges"):
        train(["a"], -1)
    bpe = train(["a b"], 5)  # one pair, (Ġ, b), then nothing left to merge
    assert bpe.merge_rules == [("Ġ", "b")]
    assert bpe.vocab == {"a": 0, "b": 1, "Ġ": 2, "Ġb": 3}


@pytest.mark.parametrize(
    "sentences, num_merges, error, message",
    [
        # one string would be taken character by character, each a sentence of its own
        ("low low lower", 2, TypeError, r"not one str \(write \[text\]"),
        (b"low low", 2, TypeError, "not one bytes"),
        (Path("corpus.txt"), 2, TypeError, "not the path 'corpus.txt' .*splitlines"),
        (42, 2, TypeError, "iterable of str, got int"),
        (["low", 3, "lower"], 2, TypeError, "sentence 1 is a int, not a str"),
        (["low", b"lower"], 2, TypeError, "sentence 1 is a bytes"),
        (["low low"], "2", TypeError, "num_merges must be an int, got '2'"),
        (["low low"], 2.5, TypeError, "num_merges must be an int, got 2.5"),
        (["low low"], True, TypeError, "num_merges must be an int, got True"),
        (["low low"], None, TypeError, "num_merges must be an int, got None"),
        (["low low"], -1, ValueError, "num_merges must be >= 0, got -1"),
        ([], 5, ValueError, "no words to learn from"),
        (iter(["", "  \t", "\n"]), 5, ValueError, "empty or only whitespace"),
    ],
)
def test_train_argument_errors(sentences, num_merges, error, message: str) -> None:
    with pytest.raises(error, match=message):
        train(sentences, num_merges)


def test_train_takes_any_iterable_and_integer() -> None:
    numpy = pytest.importorskip("numpy")
    lines = ["low low lower lowest"]
    expected = [("l", "o"), ("lo", "w")]
    assert train(iter(lines), numpy.int64(2)).merge_rules == expected
    assert train((s for s in lines), 2).merge_rules == expected
    assert train(lines, 0).vocab == {c: i for i, c in enumerate("elorstwĠ")}


def test_charbpe_rejects_inconsistent_vocab_and_rules(tmp_path: Path) -> None:
    vocab = {"a": 0, "b": 1, "ab": 2}
    with pytest.raises(ValueError, match="tokens 'a' and 'b' share the id 0"):
        CharBPE([], {"a": 0, "b": 0})  # decode would give back only one of them
    with pytest.raises(TypeError, match="str tokens to int ids, got 'a': '0'"):
        CharBPE([], {"a": "0"})
    with pytest.raises(TypeError, match="vocab must be a dict"):
        CharBPE([], [("a", 0)])
    for rule in (("a",), ("a", "b", "c"), "ab", ("a", 1), ("", "ab")):
        with pytest.raises(ValueError, match="merge rule 0 must be a .*pair"):
            CharBPE([rule], vocab)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"merge_rules": [], "vocab": {"a": 0, "b": 0}}), encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: vocab: tokens 'a' and 'b' share the id 0"):
        CharBPE.load(bad)
