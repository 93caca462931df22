"""Outputs beyond id lists: numpy arrays, batch decoding, and the stream decoder (issue 3).

Oracles: tiktoken's ``encode_to_numpy`` and ``decode`` (encodings built offline from the
shared rank files, ``oracles.py``), and ``Tokenizer.decode`` of the whole id list.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import tiktoken_encoding

import bytepair

EOT = "<|endoftext|>"


@pytest.fixture(autouse=True)
def _local_files_only(local_encodings: None) -> None:
    """Every test here reads rank files from the shared data only (conftest)."""


def corpus_text(data_dir: Path) -> str:
    parts = []
    for rel, chars in [
        ("corpora/english_gutenberg.txt", 200_000),
        ("corpora/python_stdlib.txt", 200_000),
        ("corpora/multilingual/ja.txt", 50_000),
        ("corpora/multilingual/emoji-test.txt", 50_000),
    ]:
        with open(data_dir / rel, encoding="utf-8", newline="") as f:
            parts.append(f.read(chars))
    return EOT.join(parts)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_encode_to_numpy_equals_tiktoken(data_dir: Path, name: str) -> None:
    tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
    text = corpus_text(data_dir)
    arr = tok.encode_to_numpy(text, allowed_special="all")
    expected = enc.encode_to_numpy(text, allowed_special="all")
    assert arr.dtype == np.uint32 and arr.shape == expected.shape
    assert np.array_equal(arr, expected)
    assert arr.tolist() == tok.encode(text, allowed_special="all")
    assert not arr.flags.writeable  # a view of the core's buffer, as in tiktoken
    ordinary = tok.encode_to_numpy(text, disallowed_special=())
    assert ordinary.tolist() == enc.encode_ordinary(text)


def test_encode_to_numpy_policy_and_edges(data_dir: Path) -> None:
    tok = bytepair.get_encoding("cl100k_base")
    assert tok.encode_to_numpy("").shape == (0,)
    with pytest.raises(ValueError, match="<|endoftext|>"):
        tok.encode_to_numpy("a" + EOT)
    assert tok.encode_to_numpy(EOT, allowed_special={EOT}).tolist() == [100257]
    # a lone surrogate encodes like U+FFFD, as in encode
    assert tok.encode_to_numpy("\ud800x").tolist() == tok.encode("\ufffdx")
    # ids above 65535 survive (o200k has 200k ids)
    o200k = bytepair.get_encoding("o200k_base")
    assert o200k.encode_to_numpy(EOT, allowed_special="all").tolist() == [199999]


@pytest.mark.parametrize("num_threads", [None, 1, 2])
def test_decode_batch_equals_decode(data_dir: Path, num_threads: int | None) -> None:
    tok, enc = bytepair.get_encoding("cl100k_base"), tiktoken_encoding(data_dir, "cl100k_base")
    lines = corpus_text(data_dir).splitlines(keepends=True)
    batch = [enc.encode_ordinary(t) for t in lines]
    # split some lists inside a character so that "replace" matters
    batch += [ids[: len(ids) // 2] for ids in batch[:200]]
    expected = [enc.decode(ids) for ids in batch]
    assert tok.decode_batch(batch, num_threads=num_threads) == expected
    assert tok.decode_bytes_batch(batch, num_threads=num_threads) == [
        enc.decode_bytes(ids) for ids in batch
    ]


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_every_token_decodes_to_its_bytes(data_dir: Path, name: str) -> None:
    # tokens of every length (up to 16 bytes one block is copied, then each its own way),
    # in id order and reversed, against tiktoken's bytes of each token
    tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
    ids = [i for i in range(enc.n_vocab) if i not in enc._special_tokens.values()]
    ids = [i for i in ids if i < 100256 or i > 100276]  # (cl100k's unused ids)
    ids = [i for i in ids if name != "o200k_base" or i < 199998]
    for order in (ids, ids[::-1]):
        want = b"".join(enc.decode_single_token_bytes(i) for i in order)
        assert tok.decode_bytes(order) == want
        assert b"".join(tok.decode_bytes_batch([[i] for i in order], num_threads=2)) == want


def test_decode_reads_every_kind_of_int(data_dir: Path) -> None:
    # the core reads a list or tuple of ints itself: its own ints (of any tokenizer) by
    # their address, other ints by value; anything else goes PyO3's way, as do its errors
    tok, enc = bytepair.get_encoding("cl100k_base"), tiktoken_encoding(data_dir, "cl100k_base")
    text = "Ünïcode text, 12345 and \U0001f600 emoji, 鉴 too"
    own = tok.encode(text)  # ints of the core's block
    want = enc.decode_bytes(own)

    class Id(int):
        pass

    kinds = {
        "own": own,
        "made": [int(str(i)) for i in own],  # new int objects, not the core's
        "tuple": tuple(own),
        "numpy": [np.int64(i) for i in own],
        "subclass": [Id(i) for i in own],
        "mixed": [own[0], int(str(own[1])), np.uint32(own[2]), *own[3:]],
    }
    for kind, ids in kinds.items():
        assert tok.decode_bytes(ids) == want, kind
        assert tok.decode_bytes_batch([ids, ids[:3]]) == [want, enc.decode_bytes(own[:3])], kind
    gpt2 = bytepair.get_encoding("gpt2")
    theirs = gpt2.encode("hello world")  # another tokenizer's ints: the same block
    assert tok.decode_bytes(theirs) == enc.decode_bytes(theirs)
    assert tok.decode_bytes([True, False]) == enc.decode_bytes([1, 0])
    for bad in (-1, 2**32, 2**63, 2**80, 100256):
        for ids in ([own[0], bad], (own[0], bad), [Id(own[0]), bad]):
            with pytest.raises(KeyError, match=f"^'unknown token id {bad}'$"):
                tok.decode_bytes(ids)
        with pytest.raises(KeyError, match=rf"^'unknown token id {bad} \(batch\[1\]\)'$"):
            tok.decode_batch([own, [own[0], bad]])
    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
        tok.decode_bytes([own[0], "x"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^'float' object .* integer \(batch\[1\]\)$"):
        tok.decode_batch([own, [own[0], 1.5]])  # type: ignore[list-item]

    class Index:  # not an int, but has __index__ (as numpy's ints)
        def __init__(self, value: int) -> None:
            self.value = value

        def __index__(self) -> int:
            return self.value

    assert tok.decode_bytes([Index(i) for i in own]) == want  # type: ignore[misc]
    for bad in (-3, 2**40):  # (QA: a TypeError of '<=' between int and Index)
        with pytest.raises(KeyError, match=f"^'unknown token id {bad}'$"):
            tok.decode([Index(own[0]), Index(bad)])  # type: ignore[list-item]


def test_decode_batch_errors_as_bytes_decode(data_dir: Path) -> None:
    # decode_batch makes each text itself, as bytes.decode("utf-8", errors) would
    tok = bytepair.get_encoding("cl100k_base")
    ids = tok.encode("a\U0001f600b\u9274")
    cut = [ids[: i + 1] for i in range(len(ids))]  # some end inside a character
    assert any(b"\xf0" in tok.decode_bytes(c)[-3:] for c in cut)
    for errors in ("replace", "ignore", "surrogateescape", "backslashreplace"):
        want = [tok.decode_bytes(c).decode("utf-8", errors) for c in cut]
        assert tok.decode_batch(cut, errors=errors) == want, errors
        assert tok.decode_batch(cut, errors=errors, num_threads=1) == want, errors
        assert [tok.decode(c, errors) for c in cut] == want, errors  # (made in the core too)
        assert [tok.decode(tuple(c), errors) for c in cut] == want, errors
    with pytest.raises(UnicodeDecodeError):
        tok.decode_batch(cut, errors="strict")
    assert tok.decode_batch(cut[-1:], errors="strict") == ["a\U0001f600b\u9274"]
    with pytest.raises(TypeError, match="^decode\\(\\) argument 'errors' must be str, not int$"):
        tok.decode_batch(cut, errors=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="embedded null character"):
        tok.decode_batch(cut, errors="a\0b")
    # a failed decoding is not done twice: an error handler is called once (QA)
    calls = []

    def counting(e: UnicodeError) -> tuple[str, int]:
        calls.append(1)
        raise ValueError("from the handler")

    codecs.register_error("bytepair-test-counting", counting)
    for decode in (tok.decode, lambda ids, errors: tok.decode_batch([ids], errors=errors)):
        calls.clear()
        with pytest.raises(ValueError, match="from the handler"):
            decode(cut[1], "bytepair-test-counting")
        assert calls == [1]
    for c in cut:  # decode raises what bytes.decode raises
        for errors in ("strict", "no-such-handler", "a\0b", 5):
            try:
                want_error = None
                tok.decode_bytes(c).decode("utf-8", errors)  # type: ignore[arg-type]
            except (UnicodeDecodeError, LookupError, ValueError, TypeError) as e:
                want_error = e
            if want_error is None:
                assert tok.decode(c, errors) == tok.decode_bytes(c).decode()  # type: ignore[arg-type]
            else:
                with pytest.raises(type(want_error)) as got:
                    tok.decode(c, errors)  # type: ignore[arg-type]
                assert str(got.value) == str(want_error)


def test_decode_batch_bad_input(data_dir: Path) -> None:
    tok = bytepair.get_encoding("gpt2")
    assert tok.decode_batch([]) == []
    assert tok.decode_batch([[], [31373]]) == ["", "hello"]
    with pytest.raises(KeyError, match="50257"):
        tok.decode_batch([[1], [50257]])
    with pytest.raises(KeyError, match="-1"):
        tok.decode_batch([[1], [-1]])
    with pytest.raises(TypeError):
        tok.decode_batch("abc")  # type: ignore[arg-type]
    with pytest.raises(UnicodeDecodeError):
        tok.decode_batch([[tok.encode("鉴")[0]]], errors="strict")
    with pytest.raises(ValueError, match="num_threads"):
        tok.decode_batch([[1]], num_threads=-1)


@settings(deadline=None)
@given(
    text=st.text(max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=8),
)
def test_stream_decoder_equals_decode(data_dir: Path, text: str, cuts: list[int]) -> None:
    tok = bytepair.get_encoding("cl100k_base")
    ids = tok.encode_ordinary(text)
    # cutting after every id in some runs, anywhere in others
    pieces, last = [], 0
    for c in sorted({min(c, len(ids)) for c in cuts}) + [len(ids)]:
        pieces.append(ids[last:c])
        last = c
    dec = tok.stream_decoder()
    out = "".join(dec.decode(p) for p in pieces) + dec.flush()
    assert out == text == tok.decode(ids)  # st.text() has no lone surrogates
    one_by_one = tok.stream_decoder()
    assert "".join(one_by_one.decode([i]) for i in ids) + one_by_one.flush() == tok.decode(ids)


def test_stream_decoder_holds_incomplete_characters(data_dir: Path) -> None:
    tok = bytepair.get_encoding("gpt2")
    ids = tok.encode("鉴")  # one character, several tokens in GPT-2
    assert len(ids) > 1
    dec = tok.stream_decoder()
    assert dec.decode(ids[:1]) == ""
    assert dec.pending == tok.decode_single_token_bytes(ids[0])
    assert dec.decode(ids[1:]) == "鉴"
    assert dec.pending == b""
    # a stream that ends mid-character: flush gives U+FFFD under "replace"...
    assert dec.decode(ids[:1]) == "" and dec.flush() == "\ufffd" and dec.pending == b""
    # ... and raises under "strict"
    strict = tok.stream_decoder(errors="strict")
    strict.decode(ids[:1])
    with pytest.raises(UnicodeDecodeError):
        strict.flush()
    with pytest.raises(KeyError, match="99999999"):
        tok.stream_decoder().decode([99999999])
