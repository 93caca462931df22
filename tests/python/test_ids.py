"""Corpus to ids (``bytepair.encode_to_file``, ``bytepair.open_ids``, ``bytepair encode -o``).

Oracle: ``Tokenizer.encode`` of each whole document (itself equal to tiktoken, test_encode.py)
and ``bytepair.reference.pretokenize`` for the exact-cut rule. Small unit sizes are patched
in so that short real texts are cut into many pieces, streamed, and batched.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import tiktoken_encoding

import bytepair
from bytepair import ids as ids_mod
from bytepair.cli import main
from bytepair.reference import pretokenize

EOT = "<|endoftext|>"
PRESETS = ["gpt2", "cl100k", "o200k"]


@pytest.fixture
def small_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of ~300 characters, streaming after 3000 without a cut, tiny batches."""
    monkeypatch.setattr(ids_mod, "_UNIT_CHARS", 300)
    monkeypatch.setattr(ids_mod, "_STREAM_AFTER", 3000)
    monkeypatch.setattr(ids_mod, "_BATCH_DOCS", 3)


@pytest.fixture(scope="module")
def story_tok(data_dir: Path) -> bytepair.Tokenizer:
    return bytepair.train(data_dir / "cs336" / "tinystories_sample.txt", 400, special_tokens=[EOT])


def encoding(data_dir: Path, name: str) -> bytepair.Tokenizer:
    return bytepair.get_encoding(name, path=data_dir / "tiktoken" / f"{name}.tiktoken")


def expected(tok: bytepair.Tokenizer, docs: list[str], eot: bool, allowed: object = ()) -> list:
    out: list[int] = []
    for d in docs:
        out += tok.encode(d, allowed_special=allowed, disallowed_special=())  # type: ignore
        if eot:
            out.append(tok.eot_token)
    return out


def mixed_text(data_dir: Path) -> str:
    """Real text with every kind of line end: prose, code, CJK, Arabic, emoji, CRLF."""
    parts = []
    for rel, n in [
        ("corpora/english_gutenberg.txt", 6000),
        ("corpora/python_stdlib.txt", 6000),
        ("corpora/multilingual/zh.txt", 2000),
        ("corpora/multilingual/ar.txt", 2000),
        ("corpora/multilingual/emoji_cldr.txt", 2000),
    ]:
        with open(data_dir / rel, encoding="utf-8", newline="") as f:
            parts.append(f.read(n))
    return "".join(parts) + "end!\r\n\r\nfin.\n\n\n   \n" + "é" * 5000 + "\n"


# ------------------------------------------------------------------------- exact cut points


@pytest.mark.parametrize("name", PRESETS)
@given(text=st.text(alphabet="ab Z1'.!\n\r\t/é😀字　", max_size=40))
def test_exact_cuts_do_not_change_pretokens(name: str, text: str) -> None:
    pattern = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern=name).pattern
    cut = ids_mod._exact_cut(pattern)
    whole = pretokenize(text, pattern)
    for m in cut.finditer(text):  # (?r): from the end
        if m.start() == 0:
            continue
        left, right = text[: m.start()], text[m.start() :]
        assert pretokenize(left, pattern) + pretokenize(right, pattern) == whole, (
            left,
            right,
        )


@pytest.mark.parametrize("name", PRESETS)
def test_exact_cuts_on_real_text(data_dir: Path, name: str) -> None:
    pattern = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern=name).pattern
    text = mixed_text(data_dir)[::7][:3000] + mixed_text(data_dir)[:4000]
    whole = pretokenize(text, pattern)
    cuts = sorted(m.start() for m in ids_mod._exact_cut(pattern).finditer(text) if m.start())
    assert len(cuts) > 20
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    assert [p for piece in pieces for p in pretokenize(piece, pattern)] == whole


# ------------------------------------------------------------------- ids equal encode()


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_one_long_document_equals_encode(
    data_dir: Path, tmp_path: Path, small_units: None, name: str
) -> None:
    tok = encoding(data_dir, name)
    text = mixed_text(data_dir)
    src = tmp_path / "corpus.txt"
    src.write_bytes(text.encode("utf-8"))
    out = tmp_path / "ids.npy"
    info = bytepair.encode_to_file(tok, src, out, eot=True, progress=False)
    arr = bytepair.open_ids(out)
    assert arr.dtype == (np.uint16 if tok.n_vocab <= 65536 else np.uint32)
    assert arr.tolist() == expected(tok, [text], eot=True)
    assert np.array_equal(np.load(out), arr)  # a plain .npy file for numpy too
    assert info["n_tokens"] == len(arr)
    assert info["n_documents"] == 1
    assert info["dtype"] == arr.dtype.name


def test_many_documents_and_inputs(
    story_tok: bytepair.Tokenizer, data_dir: Path, tmp_path: Path, small_units: None
) -> None:
    texts = [data_dir / "cs336" / n for n in ("tinystories_sample.txt", "german.txt")]
    rows = ["first <|endoftext|> row", "", "zweite Zeile ✓\r\n", "x" * 1000]
    jsonl = tmp_path / "rows.jsonl.gz"
    with gzip.open(jsonl, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"body": r}) + "\n" for r in rows)
    docs = [p.read_text(encoding="utf-8") for p in texts] + rows
    for allowed in ((), "all"):
        out = tmp_path / "ids.bin"
        info = bytepair.encode_to_file(
            story_tok,
            [*texts, jsonl],
            out,
            eot=True,
            allowed_special=allowed if allowed else frozenset(),  # type: ignore[arg-type]
            text_field="body",
            progress=False,
        )
        arr = bytepair.open_ids(out)
        assert arr.dtype == np.uint16
        assert arr.tolist() == expected(story_tok, docs, eot=True, allowed=allowed)
        assert info["n_documents"] == 6
        assert info["inputs"] == [str(p) for p in [*texts, jsonl]]
    assert EOT in docs[0]  # so the two runs differ


def test_iterable_of_texts_without_eot(story_tok: bytepair.Tokenizer, tmp_path: Path) -> None:
    docs = ["Once upon a time", "there was a dog.", ""]
    out = tmp_path / "ids.npy"
    info = bytepair.encode_to_file(story_tok, iter(docs), out, progress=False)
    assert bytepair.open_ids(out).tolist() == expected(story_tok, docs, eot=False)
    assert info["inputs"] == "<iterable of str>"
    assert info["eot_token"] is None
    assert info["n_documents"] == 3


def test_unwritable_folder_names_the_output(
    story_tok: bytepair.Tokenizer, tmp_path: Path, monkeypatch
) -> None:
    # QA: a read-only folder gave "/ro/x.npy.9elv6ic3.tmp: Read-only file system", naming
    # the temporary file (as root, a chmod'ed folder is writable: the failure is simulated)
    def read_only(prefix: str, suffix: str, dir: str) -> tuple[int, str]:
        raise OSError(30, "Read-only file system", os.path.join(dir, prefix + "x1y2.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    out = tmp_path / "ids.npy"
    with pytest.raises(OSError) as e:
        bytepair.encode_to_file(story_tok, iter(["a story"]), out, progress=False)
    assert (e.value.errno, e.value.filename) == (30, str(out))
    assert str(e.value) == f"[Errno 30] Read-only file system: {str(out)!r}"


def test_output_ending_in_a_separator(story_tok: bytepair.Tokenizer, tmp_path: Path) -> None:
    # as every save: a path that names a folder is refused, naming it (QA: the error named
    # the sidecar, "ids.npy/.json")
    out = f"{tmp_path}{os.sep}ids.npy{os.sep}"
    with pytest.raises(IsADirectoryError, match="ends with a path separator") as e:
        bytepair.encode_to_file(story_tok, iter(["a story"]), out, progress=False)
    assert e.value.filename == out and os.listdir(tmp_path) == []


def test_custom_pattern_streams_long_documents(tmp_path: Path, small_units: None) -> None:
    text = ("word, word; number 12345!\n" * 400) + "tail"
    tok = bytepair.train(iter([text]), 300, pattern=r"\w+|[^\w]", special_tokens=[EOT])
    out = tmp_path / "ids.npy"
    bytepair.encode_to_file(tok, iter([text, "short"]), out, eot=True, progress=False)
    assert bytepair.open_ids(out).tolist() == expected(tok, [text, "short"], eot=True)


def test_uncuttable_text_is_streamed(tmp_path: Path, small_units: None) -> None:
    # no newline at all: no exact cut
    text = "1234. " * 2000
    tok = bytepair.train(iter([text]), 270, pattern="cl100k")
    chunks = iter([(text[:4000], False), (text[4000:8000], False), (text[8000:], True)])
    got = [p if isinstance(p, tuple) else "".join(p) for p in ids_mod._pieces(chunks, None)]
    assert got == [text]  # one stream, which must be read to its end before the next piece
    out = tmp_path / "ids.bin"
    bytepair.encode_to_file(tok, iter([text]), out, progress=False)
    assert bytepair.open_ids(out).tolist() == tok.encode(text)


def test_pieces_are_bounded(data_dir: Path, small_units: None) -> None:
    text = mixed_text(data_dir)
    chunks = [(text[i : i + 100], i + 100 >= len(text)) for i in range(0, len(text), 100)]
    pieces = []
    for p in ids_mod._pieces(iter(chunks), ids_mod._exact_cut(bytepair._core.GPT2_PATTERN)):
        pieces.append(p if isinstance(p, tuple) else ("".join(p), "streamed"))
    assert "".join(p[0] for p in pieces) == text
    assert len(pieces) > 50
    # a piece holds less than _STREAM_AFTER + one chunk (here a Chinese paragraph of 1596
    # characters on one line); the run of 5000 "é" with no cut in it is streamed
    assert max(len(p[0]) for p in pieces if p[1] != "streamed") < 3000 + 100
    assert [p[1] for p in pieces].count("streamed") == 1
    assert pieces[-1][0].endswith("é" * 5000 + "\n")


def test_uint32_when_the_vocabulary_does_not_fit(data_dir: Path, tmp_path: Path) -> None:
    tok = encoding(data_dir, "cl100k_base")
    text = "Unicode ✓ and a rare token: 🌍 " * 20
    out = tmp_path / "ids.bin"
    bytepair.encode_to_file(tok, iter([text]), out, progress=False)
    arr = bytepair.open_ids(out)
    assert arr.dtype == np.uint32
    assert arr.tolist() == tok.encode(text)
    assert out.stat().st_size == 4 * len(arr)
    assert max(arr) > 65535 or max(tok.encode("Unicode ✓")) < 65536
    assert bytepair.ids.ids_dtype(65536) == np.uint16
    assert bytepair.ids.ids_dtype(65537) == np.uint32


# --------------------------------------------------------------------- sidecar, open_ids


def test_sidecar_records_tokenizer_hash(story_tok: bytepair.Tokenizer, tmp_path: Path) -> None:
    out = tmp_path / "ids.bin"
    info = bytepair.encode_to_file(story_tok, iter(["a b c"]), out, progress=False)
    side = json.loads((tmp_path / "ids.bin.json").read_text(encoding="utf-8"))
    assert side == info
    # the hash of the native file's content without its metadata: same after save + load
    saved = tmp_path / "tok.json"
    story_tok.save(saved)
    assert bytepair.ids.tokenizer_sha256(bytepair.load(saved)) == side["tokenizer_sha256"]
    other = bytepair.train(iter(["a b c"]), 260)
    assert bytepair.ids.tokenizer_sha256(other) != side["tokenizer_sha256"]
    assert len(side["tokenizer_sha256"]) == 64
    assert side["dtype"] == "uint16" and side["n_tokens"] == len(story_tok.encode("a b c"))


def test_open_ids_is_read_only_and_checked(story_tok: bytepair.Tokenizer, tmp_path: Path) -> None:
    out = tmp_path / "ids.bin"
    bytepair.encode_to_file(story_tok, iter(["some text here"]), out, progress=False)
    arr = bytepair.open_ids(out)
    assert isinstance(arr, np.memmap)
    with pytest.raises(ValueError, match="read-only"):
        arr[0] = 1
    # a truncated file no longer matches its sidecar
    out.write_bytes(out.read_bytes()[:-2])
    with pytest.raises(ValueError, match="ids.bin: holds .* ids but its sidecar"):
        bytepair.open_ids(out)
    (tmp_path / "ids.bin.json").unlink()
    with pytest.raises(FileNotFoundError, match="sidecar"):
        bytepair.open_ids(out)
    with pytest.raises(FileNotFoundError):
        bytepair.open_ids(tmp_path / "missing.npy")
    # an empty corpus gives an empty, still readable array
    empty = tmp_path / "empty.npy"
    bytepair.encode_to_file(story_tok, iter([]), empty, progress=False)
    assert bytepair.open_ids(empty).shape == (0,)
    np.save(tmp_path / "two_d.npy", np.zeros((2, 2), np.uint16))
    with pytest.raises(ValueError, match="not a 1-D"):
        bytepair.open_ids(tmp_path / "two_d.npy")
    # a .npy cut inside its header or its data names the file (numpy's message does not)
    np.save(tmp_path / "whole.npy", np.arange(100, dtype=np.uint16))
    whole = (tmp_path / "whole.npy").read_bytes()
    for cut in (60, len(whole) - 3):
        (tmp_path / "cut.npy").write_bytes(whole[:cut])
        with pytest.raises(ValueError, match=r"cut.npy: not a readable .npy id file"):
            bytepair.open_ids(tmp_path / "cut.npy")


def test_open_ids_refuses_what_is_not_an_id_array(tmp_path: Path) -> None:
    def refused(name: str, message: str, exc: type[Exception] = ValueError) -> None:
        with pytest.raises(exc, match=message):
            bytepair.open_ids(tmp_path / name)

    np.save(tmp_path / "whole.npy", np.arange(100, dtype=np.uint16))
    whole = (tmp_path / "whole.npy").read_bytes()
    # not a .npy at all, whatever its name: no talk of pickles
    (tmp_path / "text.npy").write_text("hello")
    (tmp_path / "short.npy").write_bytes(whole[:5])
    (tmp_path / "empty.npy").write_bytes(b"")
    np.savez(tmp_path / "z.npz", a=np.arange(3))
    (tmp_path / "z.npz").rename(tmp_path / "z.npy")
    for name in ("text.npy", "short.npy", "z.npy"):
        refused(name, rf"{name}: not a .npy file \(no NumPy header\)")
    refused("empty.npy", "empty.npy: empty")
    # arrays of something other than unsigned integers
    for dtype in (np.float32, np.int64, np.bool_, np.complex64, "U3", [("a", np.uint16)]):
        np.save(tmp_path / "odd.npy", np.zeros(3, dtype))
        refused("odd.npy", "odd.npy: holds .* values, not unsigned integer ids")
    # a sidecar whose dtype or count the .npy does not match
    np.save(tmp_path / "ids.npy", np.arange(5, dtype=np.uint16))
    (tmp_path / "ids.npy.json").write_text('{"dtype": "uint32", "n_tokens": 5}')
    refused("ids.npy", "ids.npy: holds uint16 ids but its sidecar .* says uint32")
    for bad in ("true", "-3"):
        (tmp_path / "ids.npy.json").write_text(f'{{"dtype": "uint16", "n_tokens": {bad}}}')
        refused("ids.npy", "ids.npy.json: (key 'n_tokens' is missing or not a int|n_tokens -3)")
    # an upper-case name is a .npy too, a folder or a fifo is not a file (a fifo would block)
    np.save(tmp_path / "UP.npy", np.arange(4, dtype=np.uint32))
    (tmp_path / "UP.npy").rename(tmp_path / "UP.NPY")
    assert bytepair.open_ids(tmp_path / "UP.NPY").tolist() == [0, 1, 2, 3]
    (tmp_path / "folder.npy").mkdir()
    refused("folder.npy", "folder.npy: not a regular file")
    os.mkfifo(tmp_path / "fifo.npy")
    refused("fifo.npy", "fifo.npy: not a regular file")
    with pytest.raises(TypeError, match="str or os.PathLike"):
        bytepair.open_ids(os.fsencode(tmp_path / "whole.npy"))  # type: ignore[arg-type]


def test_a_failed_run_leaves_no_file(story_tok: bytepair.Tokenizer, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good text\n" * 10 + b"\xff bad byte")
    out = tmp_path / "ids.npy"
    with pytest.raises(ValueError, match=r"bad.txt: invalid UTF-8 at byte offset 100"):
        bytepair.encode_to_file(story_tok, bad, out, progress=False)
    assert list(tmp_path.iterdir()) == [bad]
    with pytest.raises(ValueError, match="no special token '<|endoftext|>'"):
        bytepair.encode_to_file(bytepair.train(iter(["ab"]), 257), bad, out, eot=True)


def test_eot_types(story_tok, tmp_path: Path) -> None:
    # None is False (no id between documents); another type is a TypeError naming what
    # is taken (QA: eot=5 and eot=None were "'int' object has no attribute 'encode'")
    src = tmp_path / "docs.jsonl"
    src.write_text('{"text": "one"}\n{"text": "two"}\n', encoding="utf-8")
    out = tmp_path / "ids.npy"
    bytepair.encode_to_file(story_tok, src, out, eot=None, progress=False)
    assert bytepair.open_ids(out).tolist() == expected(story_tok, ["one", "two"], eot=False)
    for bad in (5, 1.0, b"<|endoftext|>", ["<|endoftext|>"]):
        with pytest.raises(TypeError, match="eot must be True, False or the name of a special"):
            bytepair.encode_to_file(story_tok, src, tmp_path / "x.npy", eot=bad, progress=False)
    with pytest.raises(ValueError, match=r"special_tokens=\['<\|x\|>'\]\), CLI --special-token"):
        bytepair.encode_to_file(story_tok, src, tmp_path / "x.npy", eot="<|x|>", progress=False)
    with pytest.raises(ValueError, match="the output's name is empty"):
        bytepair.encode_to_file(story_tok, src, "", progress=False)
    with pytest.raises(TypeError, match="tok must be a bytepair Tokenizer, got int"):
        bytepair.encode_to_file(5, src, tmp_path / "x.npy", progress=False)  # type: ignore
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "ids.npy", "ids.npy.json"]


def test_progress_bar_shows_bytes_and_tokens(
    story_tok: bytepair.Tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "c.txt"
    src.write_text("Once upon a time.\n" * 100, encoding="utf-8")
    bytepair.encode_to_file(story_tok, src, tmp_path / "ids.npy", progress=True)
    err = capsys.readouterr().err
    assert "1.80k/1.80k" in err and "B/s" in err and "1,200 tokens" in err and "tokens/s" in err


# -------------------------------------------------------------------------------- the CLI


def test_cli_encode_to_file(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    story = data_dir / "cs336" / "tinystories_sample.txt"
    tok_path = tmp_path / "tok.json"
    train_args = ["train", str(story), "--vocab-size", "300", "--special-token", EOT]
    assert main([*train_args, "--no-progress", "-o", str(tok_path)]) == 0
    tok = bytepair.load(tok_path)
    files = [story, data_dir / "cs336" / "address.txt"]
    out = tmp_path / "ids.npy"
    args = ["encode", "-t", str(tok_path), "--eot", *map(str, files), "-o", str(out)]
    assert main([*args, "--no-progress", "--threads", "2"]) == 0
    err = capsys.readouterr().err
    docs = [f.read_text(encoding="utf-8") for f in files]
    arr = bytepair.open_ids(out)
    assert arr.tolist() == expected(tok, docs, eot=True)
    assert f"wrote {out}: {len(arr)} tokens (uint16) of 2 documents" in err
    # without -o: one line of ids per document
    assert main(["encode", "-t", str(tok_path), *map(str, files), "--eot"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [list(map(int, line.split())) for line in lines] == [
        expected(tok, [d], eot=True) for d in docs
    ]


def test_cli_encode_errors(
    story_tok: bytepair.Tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok_path = tmp_path / "tok.json"
    bytepair.train(iter(["abc"]), 258).save(tok_path)
    src = tmp_path / "c.txt"
    src.write_text("abc", encoding="utf-8")
    out = tmp_path / "ids.bin"
    assert main(["encode", "-t", str(tok_path), str(src), "-o", str(out), "--eot"]) == 1
    assert "no special token '<|endoftext|>'" in capsys.readouterr().err
    args = ["encode", "-t", str(tok_path), str(src), "-o", str(out), "--eot-token", "<|x|>"]
    assert main([*args, "--eot"]) == 1
    assert "no special token '<|x|>'" in capsys.readouterr().err
    assert main(["encode", "-t", str(tok_path), str(src), "-o", "/nonexistent/x.bin"]) == 1
    assert "folder /nonexistent does not exist" in capsys.readouterr().err
    assert main(["encode", "-t", str(tok_path), str(tmp_path / "no.txt"), "-o", str(out)]) == 1
    assert "no.txt: No such file or directory" in capsys.readouterr().err
    assert not out.exists()


def test_output_checks_and_permissions(story_tok: bytepair.Tokenizer, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="No such folder for the output"):
        bytepair.encode_to_file(story_tok, iter(["a"]), tmp_path / "no" / "ids.bin")
    with pytest.raises(ValueError, match=r"not special tokens of this tokenizer: \['<\|x\|>'\]"):
        bytepair.encode_to_file(
            story_tok, iter(["a"]), tmp_path / "i.bin", allowed_special={"<|x|>"}
        )
    assert list(tmp_path.iterdir()) == []
    out = tmp_path / "ids.npy"
    old = os.umask(0o022)
    try:
        bytepair.encode_to_file(story_tok, iter(["a"]), out, progress=False)
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644  # as open() makes it, not mkstemp's 0600
    assert (tmp_path / "ids.npy.json").stat().st_mode & 0o777 == 0o644


def test_cli_gpt2_folder_eot_is_its_endoftext_token(data_dir: Path, tmp_path: Path) -> None:
    # GPT-2's vocab.json has <|endoftext|> (50256) without declaring it special
    files = [data_dir / "cs336" / n for n in ("german.txt", "address.txt")]
    out = tmp_path / "ids.bin"
    args = ["encode", "-t", str(data_dir / "gpt2"), *map(str, files), "-o", str(out), "--eot"]
    assert main([*args, "--no-progress"]) == 0
    r50k = encoding(data_dir, "r50k_base")  # tiktoken's ids for GPT-2
    docs = [f.read_text(encoding="utf-8") for f in files]
    assert bytepair.open_ids(out).tolist() == expected(r50k, docs, eot=True)
    assert expected(r50k, docs, eot=True).count(50256) == 2


def peak_rss_mb(data_dir: Path, corpus: Path, out: Path) -> float:
    """Peak RSS of a fresh process that encodes ``corpus`` with GPT-2 into ``out``."""
    code = (
        "import resource, sys, bytepair\n"
        "tok = bytepair.get_encoding('r50k_base', path=sys.argv[1])\n"
        "bytepair.encode_to_file(tok, sys.argv[2], sys.argv[3], eot=True, progress=False)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"  # KiB on Linux
    )
    rank_file = data_dir / "tiktoken" / "r50k_base.tiktoken"
    args = [sys.executable, "-c", code, str(rank_file), str(corpus), str(out)]
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=600)
    return int(done.stdout.split()[-1]) / 1024


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
def test_memory_is_bounded_on_the_largest_corpus(data_dir: Path, tmp_path: Path) -> None:
    big = data_dir / "corpora" / "english_gutenberg.txt"  # 45 MB, 12.2 M GPT-2 tokens
    small = tmp_path / "small.txt"
    with open(big, "rb") as f:
        small.write_bytes(f.read(1 << 20).rsplit(b"\n", 1)[0])
    base = peak_rss_mb(data_dir, small, tmp_path / "small.bin")
    peak = peak_rss_mb(data_dir, big, tmp_path / "big.bin")
    n = len(bytepair.open_ids(tmp_path / "big.bin"))
    assert n == 12162280 + 1  # tiktoken's count (shared data README) + the eot token
    # holding the text (45 MB) and the ids as a list (12 M ints, ~440 MB) would cost far more
    assert peak - base < 150, f"peak RSS {peak:.0f} MB vs {base:.0f} MB for 1 MB of text"


@pytest.fixture(scope="module")
def preset_toks() -> dict[str, bytepair.Tokenizer]:
    corpus = "Hello world.\nHello\n\nworld!\n  ab ab.\n\n\nAB 12 12.\r\n" * 20
    return {
        p: bytepair.train(iter([corpus]), 320, pattern=p, special_tokens=[EOT]) for p in PRESETS
    }


@pytest.mark.parametrize("name", PRESETS)
@given(docs=st.lists(st.text(alphabet="Helo wrd.!\n\r AB12é字", max_size=60), max_size=4))
def test_any_chunking_gives_encode_ids(
    preset_toks: dict[str, bytepair.Tokenizer], name: str, docs: list[str]
) -> None:
    # tiny chunks, pieces and streaming thresholds: every cut and stream path is taken
    tok = preset_toks[name]
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as folder:
        mp.setattr(bytepair.inputs, "CHUNK_CHARS", 3)
        mp.setattr(ids_mod, "_UNIT_CHARS", 5)
        mp.setattr(ids_mod, "_STREAM_AFTER", 25)
        mp.setattr(ids_mod, "_BATCH_DOCS", 2)
        out = os.path.join(folder, "ids.bin")
        info = bytepair.encode_to_file(tok, iter(docs), out, eot=True, progress=False)
        assert bytepair.open_ids(out).tolist() == expected(tok, docs, eot=True)
        assert info["n_documents"] == len(docs)


def test_cli_eot_token_names_another_special(tmp_path: Path) -> None:
    tok = bytepair.train(
        iter(["some text, some more text"]), 270, special_tokens=["<|a|>", "<|b|>"]
    )
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    src = tmp_path / "c.txt"
    src.write_text("some text", encoding="utf-8")
    out = tmp_path / "ids.bin"
    args = ["encode", "-t", str(tok_path), str(src), "-o", str(out), "--no-progress"]
    assert main([*args, "--eot", "--eot-token", "<|b|>"]) == 0
    assert bytepair.open_ids(out).tolist() == tok.encode("some text") + [257]


def test_cuts_agree_with_tiktoken_where_unicode_tables_differ(
    data_dir: Path, tmp_path: Path
) -> None:
    # U+10955 is a letter to Python's `regex`, not to tiktoken's regex tables: o200k keeps
    # " \U00010955\n\n" as one pre-token, so no cut may fall before its newlines (found by QA)
    tt = tiktoken_encoding(data_dir, "o200k_base")
    tok = encoding(data_dir, "o200k_base")
    text = " \U00010955\n\n1" * 300_000
    path = tmp_path / "u.txt"
    path.write_text(text, encoding="utf-8", newline="")
    out = tmp_path / "u.npy"
    bytepair.encode_to_file(tok, path, out, progress=False)
    assert bytepair.open_ids(out).tolist() == tt.encode_ordinary(text)
