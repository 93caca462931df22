"""``bytepair convert`` and ``bytepair inspect``: every format in and out, and what inspect
prints, checked against the tokenizer's own values (and tiktoken / HF tokenizers for the
converted files)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from oracles import tiktoken_encoding

import bytepair
from bytepair.cli import main

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def tok_file(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tok") / "tok.json"
    tok = bytepair.train(data_dir / "cs336" / "corpus.en", 400, special_tokens=[EOT, "<|pad|>"])
    tok.save(out)
    return out


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: error: "), stderr
    return lines[0]


@pytest.mark.parametrize("fmt", ["native", "gpt2", "tiktoken", "hf"])
def test_convert_every_format_and_back(tok_file: Path, fmt: str, tmp_path: Path, capsys) -> None:
    tok = bytepair.load(tok_file)
    out = tmp_path / f"out-{fmt}"
    assert main(["convert", str(tok_file), str(out), "--to", fmt]) == 0
    # (a rank file holds no special tokens: the summary says so)
    note = " (not stored in a rank file: name them again when loading it)"
    specials = "2 special tokens" + (note if fmt == "tiktoken" else "")
    assert f"wrote {out} ({fmt}): n_vocab 400, {specials}, 142 merges" in capsys.readouterr().err
    back = tmp_path / "back.json"
    extra = []
    if fmt == "tiktoken":  # the rank file lost pattern and specials: name them again
        extra = [
            "--pattern",
            "gpt2",
            "--special-token",
            f"{EOT}=256",
            "--special-token",
            "<|pad|>=257",
        ]
    assert main(["convert", str(out), str(back), "--to", "native", *extra]) == 0
    again = bytepair.load(back)
    assert again.vocab == tok.vocab and again.merges == tok.merges
    assert again.special_tokens == tok.special_tokens and again.pattern == tok.pattern


def test_convert_to_hf_is_read_by_tokenizers(tok_file: Path, data_dir: Path, tmp_path: Path):
    tokenizers = pytest.importorskip("tokenizers")
    out = tmp_path / "tokenizer.json"
    assert main(["convert", str(tok_file), str(out), "--to", "hf"]) == 0
    hf = tokenizers.Tokenizer.from_file(str(out))
    tok = bytepair.load(tok_file)
    text = (data_dir / "cs336" / "address.txt").read_text(encoding="utf-8") + EOT + "<|pad|>"
    assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text, allowed_special="all")


@pytest.mark.usefixtures("local_encodings")
def test_convert_and_inspect_take_an_encoding_name(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as -t does: the name of an OpenAI encoding, with tiktoken's pattern and special tokens
    tokenizers = pytest.importorskip("tokenizers")
    out = tmp_path / "tokenizer.json"
    assert main(["convert", "cl100k_base", str(out), "--to", "hf"]) == 0
    assert "n_vocab 100277, 5 special tokens, 100000 merges" in capsys.readouterr().err
    tt = tiktoken_encoding(data_dir, "cl100k_base")
    text = (data_dir / "cs336" / "address.txt").read_text(encoding="utf-8") + " I'M  a\r\n1234"
    hf = tokenizers.Tokenizer.from_file(str(out))
    assert hf.encode(text, add_special_tokens=False).ids == tt.encode_ordinary(text)
    assert main(["inspect", "o200k_harmony", "--top", "1"]) == 0  # 1091 special tokens
    (specials,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("special")]
    assert specials.endswith(", ... (1091 in all)") and specials.count("=") == 12
    assert main(["inspect", "o200k_base", "--top", "1"]) == 0
    shown = capsys.readouterr().out
    assert "format:         OpenAI encoding o200k_base" in shown
    assert "n_vocab 200019 (256 bytes, 2 special, 199742 merges)" in shown
    # --pattern / --special-token are for rank files: refused, not ignored
    assert main(["inspect", "gpt2", "--pattern", "o200k"]) == 1
    assert "--pattern and --special-token are for .tiktoken rank files" in one_error_line(
        capsys.readouterr().err
    )


def test_convert_rank_file_needs_pattern(tok_file: Path, tmp_path: Path, capsys) -> None:
    ranks = tmp_path / "r.tiktoken"
    bytepair.load(tok_file).save(ranks, format="tiktoken")
    capsys.readouterr()
    assert main(["convert", str(ranks), str(tmp_path / "x.json"), "--to", "native"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "r.tiktoken: a .tiktoken rank file does not store its pattern; pass --pattern" in line
    # the gap at 256 and 257 (the special tokens) must be filled, as tiktoken's p50k is
    assert main(
        ["convert", str(ranks), str(tmp_path / "x.json"), "--to", "hf", "--pattern", "gpt2"]
    )
    assert "ids are not dense: id 256 is missing" in one_error_line(capsys.readouterr().err)


def test_convert_errors(tok_file: Path, tmp_path: Path, capsys) -> None:
    mixed = ["--pattern", "gpt2", "--special-token", "a=1", "--special-token", "b"]
    assert main(["convert", str(tok_file), "x", "--to", "hf", *mixed]) == 1
    assert "give every --special-token an =ID, or none" in one_error_line(capsys.readouterr().err)
    assert main(["convert", str(tmp_path / "missing.json"), "x", "--to", "hf"]) == 1
    assert "missing.json: No such file or directory" in one_error_line(capsys.readouterr().err)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "bytepair", "version": 1, "pattern": "gpt2"', encoding="utf-8")
    assert main(["convert", str(bad), str(tmp_path / "o.json"), "--to", "hf"]) == 1
    assert "bad.json: not valid JSON" in one_error_line(capsys.readouterr().err)
    assert main(["convert", str(tok_file), str(tmp_path), "--to", "hf"]) == 1
    assert "is a folder; --to hf writes a file" in one_error_line(capsys.readouterr().err)
    assert main(["convert", str(tok_file), "x", "--to", "sentencepiece"]) == 2
    capsys.readouterr()
    assert main(["convert", str(tok_file), "", "--to", "hf"]) == 2
    assert "the output's name is empty" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("fmt", ["native", "gpt2", "tiktoken", "hf"])
def test_convert_never_overwrites_its_input(tok_file: Path, fmt: str, tmp_path: Path, capsys):
    # (QA: `convert t.json t.json --to tiktoken` replaced the tokenizer with a rank file,
    # losing its pattern and special tokens): the same file, through a symlink or another
    # spelling, and a GPT-2 folder onto itself, are refused, the input left as it was
    own = tmp_path / "t.json"
    own.write_bytes(tok_file.read_bytes())
    link = tmp_path / "link.json"
    link.symlink_to(own)
    folder = tmp_path / "g"
    assert main(["convert", str(own), str(folder), "--to", "gpt2"]) == 0
    capsys.readouterr()
    before = {p: p.read_bytes() for p in (own, folder / "vocab.json", folder / "merges.txt")}
    sidecar = folder / "bytepair.json"  # (QA: it was written over, and the folder unreadable)
    before[sidecar] = sidecar.read_bytes()
    source, outs = (
        (folder, [folder]) if fmt == "gpt2" else (own, [own, link, tmp_path / "./t.json"])
    )
    if fmt != "gpt2":
        assert main(["convert", str(folder), str(sidecar), "--to", fmt]) == 1
        assert "is the input tokenizer's file" in one_error_line(capsys.readouterr().err)
    for out in outs:
        assert main(["convert", str(source), str(out), "--to", fmt]) == 1
        assert "is the input tokenizer's file; not overwriting it" in one_error_line(
            capsys.readouterr().err
        )
    assert {p: p.read_bytes() for p in before} == before
    # into another file it goes
    assert main(["convert", str(own), str(tmp_path / "other"), "--to", fmt]) == 0


def test_inspect(tok_file: Path, data_dir: Path, capsys) -> None:
    tok = bytepair.load(tok_file)
    sample = data_dir / "cs336" / "address.txt"
    assert main(["inspect", str(tok_file), "--text", str(sample), "--top", "3"]) == 0
    out = capsys.readouterr().out
    fields = dict(re.findall(r"^([a-z ]+):\s+(.*)$", out, re.M))
    assert fields["format"] == "native"
    assert fields["pattern"].startswith("gpt2: ")
    assert fields["vocab size"] == "400 tokens, n_vocab 400 (256 bytes, 2 special, 142 merges)"
    assert fields["special tokens"] == "'<|endoftext|>'=256, '<|pad|>'=257"
    ordinary = [(i, b) for i, b in tok.vocab.items() if i >= 258]
    longest = sorted(ordinary, key=lambda item: (-len(item[1]), item[0]))[:3]
    assert fields["longest tokens"] == ", ".join(f"{i} {b!r} ({len(b)} bytes)" for i, b in longest)
    first = ", ".join(f"{a!r}+{b!r}" for a, b in tok.merges[:3])
    last = ", ".join(f"{a!r}+{b!r}" for a, b in tok.merges[-3:])
    assert fields["first merges"] == first and fields["last merges"] == last
    text = sample.read_text(encoding="utf-8")
    n_ids = len(tok.encode(text))
    n_bytes = len(text.encode())
    assert fields["sample"] == (
        f"{sample}: {n_bytes} bytes, {n_ids} tokens, {n_bytes / n_ids:.2f} bytes per token"
    )
    corpus_bytes = (data_dir / "cs336" / "corpus.en").stat().st_size
    assert f"training:       corpus_bytes {corpus_bytes}" in out


def test_inspect_text_file_with_invalid_utf8(tok_file: Path, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good\xff bad")
    assert main(["inspect", str(tok_file), "--text", str(bad)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line == (
        f"bytepair: error: {bad}: invalid UTF-8 at byte offset 4 (byte 0xff): invalid start byte"
    )


def test_inspect_text_named_like_a_missing_file_warns(tok_file: Path, tmp_path: Path, capsys):
    # --text is a file, or else the text itself: a missing file's name is measured as text,
    # and the CLI says so (a typo in a file name would otherwise pass unnoticed)
    missing = str(tmp_path / "smaple.txt")
    assert main(["inspect", str(tok_file), "--text", missing]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"bytepair: warning: no file named {missing!r}: the sample is this text itself\n"
    )
    n = len(missing.encode())
    assert f"sample:         the text: {n} bytes, " in captured.out
    assert main(["inspect", str(tok_file), "--text", "hello world. Bye."]) == 0
    assert capsys.readouterr().err == ""  # prose: no warning
    assert main(["inspect", str(tok_file), "--text", f".{os.sep}x"]) == 0  # a path, no file
    assert "no file named" in capsys.readouterr().err
    # glob characters in plain text: measured as text (a glob only if it matches files)
    for text in ("what is this?", "a*b", "x[0]"):
        assert main(["inspect", str(tok_file), "--text", text]) == 0
        n = len(text.encode())
        assert f"sample:         the text: {n} bytes, " in capsys.readouterr().out


def test_inspect_text_folder_and_glob_are_documents(tok_file: Path, tmp_path: Path, capsys):
    # a folder or glob is read as curve reads held-out text (it measured the name itself)
    tok = bytepair.load(tok_file)
    docs = {"a.txt": "The first document.\n", "b.txt": "And the second, longer one!\n"}
    for name, text in docs.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    n_ids = sum(len(tok.encode(t, disallowed_special=())) for t in docs.values())
    n_bytes = sum(len(t.encode()) for t in docs.values())
    for sample in (str(tmp_path), str(tmp_path / "*.txt")):
        assert main(["inspect", str(tok_file), "--text", sample]) == 0
        out = capsys.readouterr().out
        assert f"sample:         {sample}: {n_bytes} bytes, {n_ids} tokens, " in out


def test_inspect_every_format(tok_file: Path, data_dir: Path, tmp_path: Path, capsys) -> None:
    tok = bytepair.load(tok_file)
    for fmt in ("gpt2", "hf"):
        out = tmp_path / fmt
        tok.save(out, format=fmt)
        assert main(["inspect", str(out), "--text", "hello world"]) == 0
        printed = capsys.readouterr().out
        assert f"format:         {fmt}\n" in printed
        n_ids = len(tok.encode("hello world"))
        assert f"sample:         the text: 11 bytes, {n_ids} tokens" in printed
    # GPT-2's own folder and the o200k rank file (with its pattern named)
    assert main(["inspect", str(data_dir / "gpt2")]) == 0
    printed = capsys.readouterr().out
    assert "vocab size:     50257 tokens" in printed and "'<|endoftext|>'=50256" in printed
    ranks = data_dir / "tiktoken" / "o200k_base.tiktoken"
    assert main(["inspect", str(ranks), "--pattern", "o200k", "--top", "1"]) == 0
    printed = capsys.readouterr().out
    assert "format:         tiktoken" in printed and "pattern:        o200k" in printed
    assert "special tokens: (none)" in printed


def test_inspect_sidecar_names_the_folder(tok_file: Path, tmp_path: Path, capsys) -> None:
    bytepair.load(tok_file).save(tmp_path / "m", format="gpt2")
    sidecar = tmp_path / "m" / "bytepair.json"
    assert json.loads(sidecar.read_text(encoding="utf-8"))["special_tokens"] == {
        EOT: 256,
        "<|pad|>": 257,
    }
    assert main(["inspect", str(sidecar)]) == 1
    assert "the note beside GPT-2 files; load their folder" in one_error_line(
        capsys.readouterr().err
    )


@pytest.mark.usefixtures("local_encodings")
def test_a_local_folder_named_like_an_encoding_comes_first_and_is_said(
    tok_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # `-t gpt2` where ./gpt2 exists (the shared data folder has one): the folder is read, and
    # stderr says so; elsewhere the name is the OpenAI encoding, with no note
    text = tmp_path / "in.txt"
    text.write_text("Hello world", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["encode", "-t", "gpt2", str(text)]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["15496", "995"] and "note" not in err
    monkeypatch.chdir(tmp_path)
    assert main(["convert", str(tok_file), "gpt2", "--to", "gpt2"]) == 0
    capsys.readouterr()
    assert main(["encode", "-t", "gpt2", str(text)]) == 0
    out, err = capsys.readouterr()
    local = bytepair.load(tok_file).encode("Hello world")
    assert [int(i) for i in out.split()] == local != [15496, 995]
    assert err == (
        f"bytepair: note: -t gpt2 is the folder {tmp_path / 'gpt2'}, not the OpenAI encoding "
        "(for that, run from another folder)\n"
    )
    # inspect and convert take the same names, and say the same
    assert main(["inspect", "gpt2"]) == 0
    out, err = capsys.readouterr()
    assert "n_vocab 50257" not in out
    assert err.startswith(f"bytepair: note: gpt2 is the folder {tmp_path / 'gpt2'}, not")
