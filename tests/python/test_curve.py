"""The compression curve (``bytepair.curve``, ``bytepair curve``).

Oracles: training again to each smaller size gives exactly the first-k tokenizer; a
tokenizer rebuilt from the first k merges encodes the held-out text to the curve's count;
the pure-Python ``ReferenceTokenizer`` for GPT-2's first merges; a case worked by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bytepair
from bytepair import curve
from bytepair.cli import main
from bytepair.reference import ReferenceTokenizer

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def corpus(data_dir: Path) -> Path:
    return data_dir / "cs336" / "corpus.en"


@pytest.fixture(scope="module")
def tok(corpus: Path) -> bytepair.Tokenizer:
    return bytepair.train(corpus, 500, special_tokens=[EOT])


def test_hand_worked_low_lower_lowest() -> None:
    tok = bytepair.train(iter(["low low lower lowest"]), 259)
    assert tok.merges == [(b"o", b"w"), (b"l", b"ow"), (b" ", b"low")]
    points = curve.compression_curve(tok, iter(["low lowest", "low"]))
    # "low lowest" + "low", 13 bytes: no merge: 13 tokens; "ow": l ow | ␠ l ow e s t | l ow
    # = 2 + 6 + 2; "low": 1 + 5 + 1; "␠low": 1 + 4 + 1
    assert [(p.vocab_size, p.n_merges, p.n_tokens) for p in points] == [
        (256, 0, 13),
        (257, 1, 10),
        (258, 2, 7),
        (259, 3, 6),
    ]
    assert points[0].bytes_per_token == 1.0
    assert points[-1].tokens_per_document == 3.0
    assert points[-1].n_bytes == 13 and points[-1].n_documents == 2


def test_first_merges_is_training_to_that_size(tok: bytepair.Tokenizer, corpus: Path) -> None:
    for k in (0, 1, 37, 243):
        small = curve.first_merges(tok, k)
        again = bytepair.train(corpus, 257 + k, special_tokens=[EOT])
        assert small.vocab == again.vocab
        assert small.merges == again.merges
        assert small.special_tokens == {EOT: 256}
    with pytest.raises(ValueError, match="between 0 and 243"):
        curve.first_merges(tok, 244)


def test_counts_equal_encoding_with_each_size(tok: bytepair.Tokenizer, data_dir: Path) -> None:
    held_out = [data_dir / "cs336" / n for n in ("tinystories_sample.txt", "address.txt")]
    texts = [p.read_text(encoding="utf-8") for p in held_out]
    points = curve.compression_curve(tok, held_out)
    assert [p.n_merges for p in points] == curve.default_sizes(tok)
    assert [p.n_merges for p in points] == [
        0,
        1,
        2,
        3,
        6,
        11,
        21,
        39,
        72,
        132,
        243,
    ]  # 243 ** (j / 9)
    for p in points:
        small = curve.first_merges(tok, p.n_merges)
        assert small.n_vocab == p.vocab_size
        # special-token text counts as ordinary text
        assert p.n_tokens == sum(len(small.encode_ordinary(t)) for t in texts)
        assert p.n_bytes == sum(len(t.encode("utf-8")) for t in texts)
        assert p.n_documents == 2
    # more merges never lengthen the encoding
    assert all(a.n_tokens >= b.n_tokens for a, b in zip(points, points[1:]))


def test_gpt2_first_merges_equal_reference(data_dir: Path) -> None:
    gpt2 = bytepair.get_encoding("gpt2", path=data_dir / "tiktoken" / "r50k_base.tiktoken")
    text = (data_dir / "cs336" / "address.txt").read_text(encoding="utf-8")
    points = curve.compression_curve(gpt2, iter([text]), [0, 100, 1000])
    merges = gpt2.merges
    for p in points:
        vocab = {i: bytes([i]) for i in range(256)}
        vocab.update({256 + i: a + b for i, (a, b) in enumerate(merges[: p.n_merges])})
        ref = ReferenceTokenizer(vocab, merges[: p.n_merges])
        assert p.n_tokens == len(ref.encode_ordinary(text))
        assert p.vocab_size == 257 + p.n_merges  # GPT-2 has one special token
    assert points[0].n_tokens == len(text.encode("utf-8"))


def test_cli_curve_table_and_plot(
    tok: bytepair.Tokenizer, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    held = data_dir / "cs336" / "address.txt"
    png = tmp_path / "curve.png"
    args = ["curve", "-t", str(tok_path), "--text", str(held)]
    assert main([*args, "--sizes", "257", "300", "500", "-o", str(png)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["vocab", "size", "merges", "tokens", "bytes/token", "tokens/doc"]
    rows = [line.split() for line in out[2:]]
    points = curve.compression_curve(tok, [held], [0, 43, 243])
    assert rows == [
        [
            str(p.vocab_size),
            str(p.n_merges),
            str(p.n_tokens),
            f"{p.bytes_per_token:.3f}",
            f"{p.tokens_per_document:.1f}",
        ]
        for p in points
    ]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main([*args, "--sizes", "501"]) == 1
    assert "makes vocabularies of 257 to 500 tokens" in capsys.readouterr().err


def test_cli_curve_bad_image_target_fails_before_the_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the tokenizer does not even exist: the image name is checked first (found by QA)
    args = ["curve", "-t", str(tmp_path / "missing.json"), "--text", str(tmp_path / "x.txt")]
    assert main([*args, "-o", str(tmp_path / "curve.json")]) == 1
    err = capsys.readouterr().err
    assert "curve.json: the image format comes from the file name; use one of .png" in err
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    assert main([*args, "-o", str(tmp_path / "curve.png")]) == 1
    assert "plotting needs matplotlib: pip install 'bytepair[plot]'" in capsys.readouterr().err


def test_held_out_jsonl_is_one_document_per_line(tok: bytepair.Tokenizer, tmp_path: Path) -> None:
    rows = ["The first row.", "A second, longer row of text!", "x"]
    path = tmp_path / "held.jsonl"
    path.write_text("".join(json.dumps({"text": r}) + "\n" for r in rows), encoding="utf-8")
    from_file = curve.compression_curve(tok, path, [0, 100, 243])
    assert from_file == curve.compression_curve(tok, iter(rows), [0, 100, 243])
    assert [p.n_documents for p in from_file] == [3, 3, 3]
    assert from_file[1].n_tokens == sum(len(curve.first_merges(tok, 100).encode(r)) for r in rows)


def test_empty_held_out_text_is_an_error(
    tok: bytepair.Tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # bytes per token would be 0 / 0 (the table showed nan): a clear error instead
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    for texts in (empty, iter([]), iter(["", ""])):
        with pytest.raises(ValueError, match="the held-out text is empty"):
            curve.compression_curve(tok, texts)  # type: ignore[arg-type]
    saved = tmp_path / "tok.json"
    tok.save(saved)
    assert main(["curve", "-t", str(saved), "--text", str(empty)]) == 1
    assert capsys.readouterr().err == (
        "bytepair: error: the held-out text is empty: no bytes to measure the curve on\n"
    )
