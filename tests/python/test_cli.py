"""Tests of the ``bytepair`` command line (``bytepair.cli``) and ``bytepair demo``.

Most tests call ``main([...])`` in-process; a few run ``python -m bytepair`` and the console
script as real processes joined by pipes. Expected ids come from the pure-Python oracle
(``bytepair.reference``) or, for the GPT-2 vocabulary, from tiktoken.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bytepair
from bytepair import demo
from bytepair.cli import main
from bytepair.reference import ReferenceTokenizer, train_bpe, train_bpe_file

EOT = "<|endoftext|>"

# text of our own for round trips: CRLF, NUL, tabs, accents, CJK, emoji, a special token
TRICKY = (
    "Hello, world!\r\nSecond line\twith a tab and a NUL \x00 byte.\r\n"
    "café naïve Straße — 日本語 👍🏽 👨‍👩‍👧\n"
    f"end of one story.{EOT}Start of the next.\n\n   trailing spaces   "
)


@pytest.fixture(scope="module")
def story_file(data_dir: Path) -> Path:
    return data_dir / "cs336" / "tinystories_sample.txt"


@pytest.fixture(scope="module")
def story_tok(story_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tokenizer trained by the CLI on the TinyStories sample (vocab 400, <|endoftext|>)."""
    out = tmp_path_factory.mktemp("tok") / "tok.json"
    code = main(
        [
            "train",
            str(story_file),
            "--vocab-size",
            "400",
            "--special-token",
            EOT,
            "--no-progress",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    return out


@pytest.fixture(scope="module")
def story_ref(story_file: Path) -> ReferenceTokenizer:
    vocab, merges = train_bpe_file(story_file, 400, [EOT])
    return ReferenceTokenizer(vocab, merges, [EOT])


def ids_of(stdout: str) -> list[int]:
    assert stdout.endswith("\n") and stdout.count("\n") == 1, "ids must be one line"
    return [int(x) for x in stdout.split()]


def set_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def one_error_line(stderr: str) -> str:
    """The single ``bytepair: error: ...`` line of stderr (asserts there is nothing else)."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("bytepair: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


# ----------------------------------------------------------------------------------- train


def test_train_equals_reference(
    story_tok: Path, story_ref: ReferenceTokenizer, capsys: pytest.CaptureFixture[str]
) -> None:
    tok = bytepair.load(story_tok)
    assert tok.vocab == story_ref.vocab
    assert tok.merges == story_ref.merges
    assert tok.special_tokens == {EOT: 256}
    assert len(tok.merges) == 400 - 256 - 1


def test_train_summary(story_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "t.json"
    args = ["train", str(story_file), "--vocab-size", "300", "--special-token", EOT]
    assert main([*args, "--special-token", "<|pad|>", "--threads", "1", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    # 300 = 256 bytes + 2 specials + 42 merges
    assert re.fullmatch(
        rf"bytepair: wrote {re.escape(str(out))}: n_vocab 300 = 256 bytes \+ 2 special tokens "
        r"\+ 42 merges, trained in \d+\.\d\d s\n",
        captured.err,
    ), captured.err
    assert bytepair.load(out).special_tokens == {EOT: 256, "<|pad|>": 257}


def test_train_several_files_and_pattern(data_dir: Path, tmp_path: Path) -> None:
    files = [data_dir / "cs336" / "german.txt", data_dir / "cs336" / "address.txt"]
    out = tmp_path / "t.json"
    args = ["train", *map(str, files), "--vocab-size", "300", "--pattern", "cl100k"]
    assert main([*args, "--no-progress", "-o", str(out)]) == 0
    # each file is a separate text: no pre-token spans two files
    texts = [f.read_bytes().decode("utf-8") for f in files]
    vocab, merges = train_bpe(texts, 300, pattern="cl100k")
    tok = bytepair.load(out)
    assert tok.merges == merges
    assert tok.vocab == vocab
    assert tok.pattern == bytepair.reference.CL100K_PATTERN


def test_train_long_pretokens_needs_a_limit(tmp_path: Path, capsys) -> None:
    # without --max-pretoken-length nothing is long: the flag did nothing (found by QA)
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world", encoding="utf-8")
    args = ["train", str(corpus), "--vocab-size", "260", "--long-pretokens", "skip"]
    assert main([*args, "-o", str(tmp_path / "t.json")]) == 1
    assert one_error_line(capsys.readouterr().err) == (
        "bytepair: error: --long-pretokens skip needs --max-pretoken-length BYTES (the length "
        "above which a pre-token is long)"
    )


@pytest.mark.parametrize("mode,done", [("truncate", "truncated to 100 bytes"), ("skip", "skipped")])
def test_train_long_pretokens_warning_is_one_cli_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, done: str
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("a" * 300 + " hello world" * 50, encoding="utf-8")
    args = ["train", str(corpus), "--vocab-size", "270", "--max-pretoken-length", "100"]
    assert main([*args, "--long-pretokens", mode, "-o", str(tmp_path / "t.json")]) == 0
    warning, wrote = capsys.readouterr().err.strip().splitlines()
    assert warning == (
        "bytepair: warning: 1 pre-token(s) longer than --max-pretoken-length 100 bytes "
        f"(the longest 300 bytes) were {done}"
    )
    assert wrote.startswith(f"bytepair: wrote {tmp_path / 't.json'}: n_vocab ")


def test_train_megabyte_token_warning_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # merge 20 of a 3 MB run of one letter learns a token of 2^20 bytes (test_train_scale.py)
    corpus = tmp_path / "c.txt"
    corpus.write_text("a" * 3_000_000, encoding="utf-8")
    args = ["train", str(corpus), "--vocab-size", "276", "-o", str(tmp_path / "t.json")]
    assert main(args) == 0
    warning, wrote = capsys.readouterr().err.strip().splitlines()
    assert warning.startswith("bytepair: warning: a learned token is 1048576 bytes long (")
    assert warning.endswith(". --max-token-length BYTES caps the length of learned tokens")
    assert main([*args, "--max-token-length", "65536"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_train_stops_early_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("aaab", encoding="utf-8")  # pairs: aa, ab -> at most 3 merges ("aaab")
    out = tmp_path / "t.json"
    assert main(["train", str(corpus), "--vocab-size", "1000", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    vocab, merges = train_bpe("aaab", 1000)
    assert f"n_vocab {256 + len(merges)} " in err
    assert "stopped before 1000: no pair left to merge" in err
    assert bytepair.load(out).merges == merges


# ---------------------------------------------------------------------------------- encode


def test_encode_file_equals_reference(
    story_tok: Path,
    story_file: Path,
    story_ref: ReferenceTokenizer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = story_file.read_bytes().decode("utf-8")
    assert EOT in text
    assert main(["encode", "-t", str(story_tok), str(story_file)]) == 0
    # default: special-token text is ordinary text
    assert ids_of(capsys.readouterr().out) == story_ref.encode_ordinary(text)
    assert main(["encode", "-t", str(story_tok), "--allow-special", str(story_file)]) == 0
    ids = ids_of(capsys.readouterr().out)
    assert ids == story_ref.encode(text, allowed_special="all")
    assert ids.count(256) == text.count(EOT)


def test_encode_stdin_is_exact(
    story_tok: Path,
    story_ref: ReferenceTokenizer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # no newline translation: "\r\n" must reach the tokenizer as two characters
    set_stdin(monkeypatch, TRICKY.encode("utf-8"))
    assert main(["encode", "-t", str(story_tok)]) == 0
    ids = ids_of(capsys.readouterr().out)
    assert ids == story_ref.encode_ordinary(TRICKY)
    assert 13 in ids  # "\r"
    set_stdin(monkeypatch, TRICKY.encode("utf-8"))
    assert main(["encode", "-t", str(story_tok), "--allow-special", "-"]) == 0
    assert ids_of(capsys.readouterr().out) == story_ref.encode(TRICKY, allowed_special="all")


def test_encode_empty_input(
    story_tok: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_stdin(monkeypatch, b"")
    assert main(["encode", "-t", str(story_tok)]) == 0
    assert capsys.readouterr().out == "\n"


def test_encode_large_input_in_chunks(
    story_tok: Path,
    story_file: Path,
    story_ref: ReferenceTokenizer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the reader takes 64 KiB at a time: put an emoji across the first boundary, and make
    # the file several chunks long; the ids must be those of the whole text at once
    story = story_file.read_bytes().decode("utf-8")
    text = "x" * 65535 + "🐍 " + (story + "日本語 🐍\r\n") * 40
    assert len(text.encode("utf-8")) > 3 * 65536
    path = tmp_path / "big.txt"
    path.write_bytes(text.encode("utf-8"))
    assert main(["encode", "-t", str(story_tok), str(path)]) == 0
    ids = ids_of(capsys.readouterr().out)
    assert ids == bytepair.load(story_tok).encode_ordinary(text)
    # and the library agrees with the oracle on a piece that straddles the boundary
    assert ids[:10] == story_ref.encode_ordinary("x" * 65535 + "🐍 ")[:10]


def test_encode_with_gpt2_folder_equals_tiktoken(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    import base64
    import json

    ranks = {}
    for line in (data_dir / "tiktoken" / "r50k_base.tiktoken").read_bytes().splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    spec = json.loads((data_dir / "tiktoken" / "encodings.json").read_text())["r50k_base"]
    enc = tiktoken.Encoding(
        "r50k", pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens={EOT: 50256}
    )
    path = tmp_path / "in.txt"
    path.write_bytes(TRICKY.encode("utf-8"))
    assert main(["encode", "-t", str(data_dir / "gpt2"), str(path)]) == 0
    assert ids_of(capsys.readouterr().out) == enc.encode(TRICKY, disallowed_special=())


# ---------------------------------------------------------------------------------- decode


def test_decode_is_byte_exact(
    story_tok: Path,
    story_ref: ReferenceTokenizer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    ids = story_ref.encode(TRICKY, allowed_special="all")
    path = tmp_path / "ids.txt"
    path.write_text(" ".join(map(str, ids)) + "\n", encoding="ascii")
    assert main(["decode", "-t", str(story_tok), str(path)]) == 0
    assert capsysbinary.readouterr().out == TRICKY.encode("utf-8")
    # from stdin, with any whitespace between ids
    set_stdin(monkeypatch, ("\n\t ".join(map(str, ids))).encode("ascii"))
    assert main(["decode", "-t", str(story_tok)]) == 0
    assert capsysbinary.readouterr().out == TRICKY.encode("utf-8")


@pytest.mark.parametrize("name", ["ids.npy", "ids.bin"])
def test_decode_reads_the_id_files_encode_writes(
    story_tok: Path,
    tmp_path: Path,
    name: str,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_text(TRICKY, encoding="utf-8")
    out = tmp_path / name
    assert main(["encode", "-t", str(story_tok), str(doc), "-o", str(out), "--no-progress"]) == 0
    capsysbinary.readouterr()
    assert main(["decode", "-t", str(story_tok), str(out)]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == TRICKY.encode("utf-8")
    assert b"warning" not in captured.err
    # another tokenizer: decoded all the same, with a warning
    other = tmp_path / "other.json"
    bytepair.train(iter([TRICKY]), 300).save(other)
    assert main(["decode", "-t", str(other), str(out)]) in (0, 1)
    assert b"written with another tokenizer" in capsysbinary.readouterr().err
    # a damaged id file is one error line
    out.write_bytes(out.read_bytes()[:-1])
    assert main(["decode", "-t", str(story_tok), str(out)]) == 1
    err = capsysbinary.readouterr().err.decode()
    assert err.startswith("bytepair: error: ") and name in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["ids.txt", "IDS.CSV", "ids.json", "ids.jsonl"])
def test_encode_output_named_as_text_is_refused(
    story_tok: Path, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # -o writes binary ids: a name that promises text is refused before anything is written
    doc = tmp_path / "doc.txt"
    doc.write_text(TRICKY, encoding="utf-8")
    out = tmp_path / name
    assert main(["encode", "-t", str(story_tok), str(doc), "-o", str(out), "--no-progress"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"bytepair: error: {out}: -o writes binary ids (name it .npy or .bin); for ids as "
        f"text, leave out -o and redirect: bytepair encode -t ... > {out}"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.txt"]
    # one plain-text file is one document, and the summary says so in the singular
    assert main(["encode", "-t", str(story_tok), str(doc), "-o", str(tmp_path / "i.npy")]) == 0
    n = len(bytepair.load(story_tok).encode(TRICKY, disallowed_special=()))
    assert f"wrote {tmp_path / 'i.npy'}: {n} tokens (uint16) of 1 document, " in (
        capsys.readouterr().err
    )


def test_encode_output_guards(
    story_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    # found by QA on a fresh clone: each was data loss or a file nobody can read back
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "doc.txt"
    doc.write_text(TRICKY, encoding="utf-8")
    run = ["encode", "-t", str(story_tok), str(doc), "--no-progress", "-o"]
    # "-o out" has the sidecar out.json: a file there that bytepair did not write is kept
    (tmp_path / "out.json").write_text("keep me", encoding="utf-8")
    assert main([*run, "out"]) == 1
    assert one_error_line(capsys.readouterr().err) == (
        "bytepair: error: out.json: the sidecar of out would replace this file, which "
        "bytepair did not write; name the output otherwise (ids.npy, ids.bin)"
    )
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == "keep me"
    assert not (tmp_path / "out").exists()
    # its own sidecar is replaced on a second run
    assert main([*run, "again"]) == 0 and main([*run, "again"]) == 0
    # ".NPY" is a NumPy file, as open_ids reads it
    assert main([*run, "ids.NPY"]) == 0
    want = bytepair.load(story_tok).encode(TRICKY, disallowed_special=())
    assert bytepair.open_ids("ids.NPY").tolist() == want
    capsys.readouterr()
    # names of other formats, and "-" (stdout), are refused before any work
    for name, why in [
        ("ids.npz", "-o writes a .npy file or raw ids (.bin), not .npz"),
        ("ids.tar.gz", "-o writes a .npy file or raw ids (.bin), not .gz"),
        ("-", "-o writes binary ids (name it .npy or .bin)"),
    ]:
        assert main([*run, name]) == 1
        assert why in one_error_line(capsys.readouterr().err)
        assert not (tmp_path / name).exists()
    # /dev/stdout: a pipe, or a file (the sidecar would be /dev/stdout.json): refused either way
    for dev in ("/dev/stdout", "/dev/null"):
        assert main([*run, dev]) == 1
        assert one_error_line(capsys.readouterr().err) == (
            f"bytepair: error: {dev}: -o writes an id file and its sidecar; to print ids, "
            "leave out -o"
        )
    # a big sidecar of its own (one that lists 30,000 inputs) is still recognised as ours
    assert main([*run, "big.bin"]) == 0
    side = json.loads((tmp_path / "big.bin.json").read_text(encoding="utf-8"))
    side["inputs"] = [f"/data/some/long/folder/name/file-{k:06d}.txt" for k in range(30_000)]
    (tmp_path / "big.bin.json").write_text(json.dumps(side, indent=1), encoding="utf-8")
    assert (tmp_path / "big.bin.json").stat().st_size > 1 << 20
    assert main([*run, "big.bin"]) == 0


def test_decode_partial_utf8_tokens_kept_raw(
    story_tok: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    # ids 0..255 are single bytes: 0xE6 alone is not UTF-8 but must be written as it is
    set_stdin(monkeypatch, b"230 104 105")
    assert main(["decode", "-t", str(story_tok)]) == 0
    assert capsysbinary.readouterr().out == b"\xe6hi"


def test_decode_many_ids_across_read_chunks(
    story_tok: Path,
    story_ref: ReferenceTokenizer,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    text = TRICKY * 700
    ids = story_ref.encode_ordinary(TRICKY) * 700
    data = " ".join(map(str, ids)).encode("ascii")
    assert len(data) > 2 * 65536  # numbers get cut by the 64 KiB reads
    path = tmp_path / "ids.txt"
    path.write_bytes(data)
    assert main(["decode", "-t", str(story_tok), str(path)]) == 0
    assert capsysbinary.readouterr().out == text.encode("utf-8")


def test_decode_empty_input(
    story_tok: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    set_stdin(monkeypatch, b"  \n")
    assert main(["decode", "-t", str(story_tok)]) == 0
    assert capsysbinary.readouterr().out == b""


# ------------------------------------------------------------------------- real processes


def run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, capture_output=True, timeout=120, check=False, **kwargs)  # type: ignore[call-overload]


def test_pipeline_in_real_processes(story_file: Path, tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "bytepair"]
    out = tmp_path / "tok.json"
    trained = run(
        [*cli, "train", str(story_file), "--vocab-size", "400"]
        + ["--special-token", EOT, "-o", str(out)]
    )
    assert trained.returncode == 0, trained.stderr
    assert b"n_vocab 400" in trained.stderr

    data = story_file.read_bytes() + "\r\nCRLF line ✓\r\n".encode()
    text = data.decode("utf-8")
    vocab, merges = train_bpe_file(story_file, 400, [EOT])
    expected = ReferenceTokenizer(vocab, merges, [EOT]).encode(text, allowed_special="all")

    # encode | decode through a real pipe, stdin and stdout as the shell gives them
    enc = subprocess.Popen(
        [*cli, "encode", "-t", str(out), "--allow-special"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    ids_bytes, enc_err = enc.communicate(data, timeout=120)
    assert enc.returncode == 0, enc_err
    assert ids_of(ids_bytes.decode("ascii")) == expected
    dec = run([*cli, "decode", "-t", str(out)], input=ids_bytes)
    assert dec.returncode == 0, dec.stderr
    assert dec.stdout == data


def test_console_script(story_file: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("bytepair.exe" if os.name == "nt" else "bytepair")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    version = run([str(script), "--version"])
    assert version.stdout.decode().strip() == f"bytepair {bytepair.__version__}"
    missing = run([str(script), "encode", "-t", str(tmp_path / "no.json"), str(story_file)])
    assert missing.returncode == 1
    assert one_error_line(missing.stderr.decode()).endswith(
        f"{tmp_path / 'no.json'}: No such file or directory (the tokenizer, -t; or the name "
        f"of an OpenAI encoding: {', '.join(bytepair.list_encoding_names())})"
    )


# ------------------------------------------------------------------------------------ demo


def demo_sections(output: str) -> dict[int, dict[str, str]]:
    """vocab_size -> {"tokens": ..., "ids": ..., "round trip": ...} parsed from the demo."""
    sections: dict[int, dict[str, str]] = {}
    current: dict[str, str] | None = None
    key = ""
    for line in output.splitlines():
        m = re.match(r"── vocab_size (\d+): ", line)
        if m:
            current = sections[int(m.group(1))] = {}
            continue
        if current is None:
            continue
        if not line.strip() or line.startswith("How the encoding"):
            current = None
            continue
        m = re.match(r"(tokens|ids|round trip)[^:]*:\s+(.*)", line)
        if m:
            key = m.group(1)
            current[key] = m.group(2)
        elif line.startswith(" " * 15) and key == "tokens":  # "|a|b|" + "|c|" -> "|a|b|c|"
            current[key] = current[key][:-1] + line.lstrip()
        elif line.startswith(" " * 15) and key:
            current[key] += " " + line.strip()
    return sections


def demo_table(output: str) -> dict[str, tuple[int, int, int]]:
    """Row label -> (merges, sentence tokens, held-out tokens) from the demo's table."""
    block = output.split("How the encoding shrinks")[1].split("\n\n")[0]
    rows = {}
    for line in block.splitlines()[2:]:
        m = re.match(r"\s+(\d+(?: \(bytes\))?)\s+([\d,]+)\s+([\d,]+)\s+\S+\s+([\d,]+)\s", line)
        if m:
            rows[m.group(1)] = tuple(int(g.replace(",", "")) for g in m.groups()[1:])
    return rows  # type: ignore[return-value]


def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert demo.HELD_OUT_SENTENCE in out.replace("\n           ", " ")
    assert "pydoc_data.topics" in out
    sections = demo_sections(out)
    assert sorted(sections) == [300, 600]

    table = demo_table(out)
    data = demo.corpus()
    assert demo.HELD_OUT_SENTENCE not in data.train_text
    for size, section in sections.items():
        vocab, merges = train_bpe(data.train_text, size, demo.SPECIAL_TOKENS)
        ref = ReferenceTokenizer(vocab, merges, demo.SPECIAL_TOKENS)
        expected = ref.encode(demo.HELD_OUT_SENTENCE)
        assert [int(x) for x in section["ids"].split()] == expected
        assert len(section["tokens"].strip("|").split("|")) == len(expected)
        assert section["round trip"] == (
            "decode(encode(sentence)) == sentence: yes, byte for byte "
            f"({len(demo.HELD_OUT_SENTENCE.encode())} bytes)"
        )
        held_tokens = sum(len(ref.encode_ordinary(t)) for t in data.held_out_texts())
        assert table[str(size)] == (len(merges), len(expected), held_tokens)
    # one token per byte without merges; fewer tokens as the vocabulary grows
    assert list(table) == ["256 (bytes)", "300", "600"]
    held_bytes = sum(len(t.encode("utf-8")) for t in data.held_out_texts())
    assert table["256 (bytes)"] == (0, len(demo.HELD_OUT_SENTENCE.encode("utf-8")), held_bytes)
    for column in (1, 2):
        lengths = [row[column] for row in table.values()]
        assert lengths == sorted(lengths, reverse=True) and lengths[0] > lengths[-1]


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="not run in a virtual environment")
def test_demo_says_how_to_activate(monkeypatch: pytest.MonkeyPatch) -> None:
    # `make demo` runs .venv/bin/bytepair without activating the venv: the commands it then
    # suggests need `. .venv/bin/activate` first (QA), unless the venv's bin is on PATH
    bin_dir = os.path.dirname(sys.executable)
    if not os.path.exists(os.path.join(bin_dir, "activate")):
        pytest.skip("no activate script beside the interpreter")
    monkeypatch.setenv("PATH", os.defpath)
    hint = demo._activate_hint()
    assert hint is not None and hint.startswith(". ")
    assert os.path.samefile(hint[2:], os.path.join(bin_dir, "activate"))
    if os.path.exists(os.path.join(bin_dir, "bytepair")):
        monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.defpath)
        assert demo._activate_hint() is None


def test_demo_more_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--vocab-sizes", "1000", "300", "600"]) == 0
    out = capsys.readouterr().out
    assert sorted(demo_sections(out)) == [300, 600, 1000]
    assert list(demo_table(out)) == ["256 (bytes)", "300", "600", "1000"]
    assert out.count("decode(encode(sentence)) == sentence: yes") == 3


def test_demo_rejects_too_small_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--vocab-sizes", "257"]) == 2
    assert "257 is below 258" in capsys.readouterr().err


def test_demo_falls_back_to_docstrings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # as on distributions that strip pydoc_data: importing it fails
    monkeypatch.setitem(sys.modules, "pydoc_data", None)
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)
    data = demo.corpus()
    assert "docstrings" in data.source
    names = [n for n, _ in data.documents]
    assert "json" in names and "textwrap" in names
    if sys.flags.optimize < 2:  # -OO strips docstrings
        assert len(data.train_text) > 50_000
    assert main(["demo", "--vocab-sizes", "300"]) == 0
    out = capsys.readouterr().out
    assert "docstrings of Python standard-library modules" in out
    assert "decode(encode(sentence)) == sentence: yes" in out


# ---------------------------------------------------------------------------------- errors


def test_train_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-corpus.txt"
    out = tmp_path / "t.json"
    assert main(["train", str(missing), "--vocab-size", "300", "-o", str(out)]) == 1
    assert one_error_line(capsys.readouterr().err) == (
        f"bytepair: error: {missing}: No such file or directory"
    )
    assert not out.exists()


def test_file_named_as_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # "c.txt/" or "c.txt/x" name a file as a folder: the system's words, "Not a directory",
    # as cat says (QA: "No such file or directory", though c.txt is there)
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world hello\n", encoding="utf-8")
    out = tmp_path / "t.json"
    with pytest.raises(NotADirectoryError) as ref:
        os.stat(f"{corpus}/")
    for path in (f"{corpus}/", f"{corpus}/x"):
        assert main(["train", path, "--vocab-size", "300", "-o", str(out)]) == 1
        assert one_error_line(capsys.readouterr().err) == (
            f"bytepair: error: {path}: {ref.value.strerror}"
        )
        assert not out.exists()
    assert main(["train", str(corpus), "--vocab-size", "300", "-o", str(out)]) == 0
    capsys.readouterr()
    for flag in (["-t", f"{out}/"], ["-t", f"{out}/x"]):
        assert main(["encode", *flag, str(corpus)]) == 1
        assert f"{flag[1]}: {ref.value.strerror} (the tokenizer, -t" in one_error_line(
            capsys.readouterr().err
        )
    # the output's folder is a file: said so, nothing written
    assert main(["train", str(corpus), "--vocab-size", "300", "-o", f"{corpus}/t.json"]) == 1
    assert one_error_line(capsys.readouterr().err) == (
        f"bytepair: error: {corpus}/t.json: cannot write there, {corpus} is a file, not a folder"
    )
    tok = bytepair.load(out)
    with pytest.raises(NotADirectoryError, match="is a file, not a folder for the output"):
        bytepair.encode_to_file(tok, corpus, corpus / "ids.bin")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder for 't2.json'"):
        tok.save(corpus / "t2.json")
    assert corpus.read_text(encoding="utf-8") == "hello world hello\n"


def test_train_vocab_size_too_small(
    story_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["train", str(story_file), "--special-token", EOT, "-o", str(tmp_path / "t.json")]
    assert main([*args, "--vocab-size", "256"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "vocab_size 256" in line and "257" in line  # 256 bytes + 1 special token
    assert main([*args, "--vocab-size", "lots"]) == 2  # not a number: a usage error
    assert "'lots' is not an integer" in capsys.readouterr().err
    assert main([*args, "--vocab-size", "0"]) == 2
    assert not (tmp_path / "t.json").exists()


def test_train_output_folder_missing(
    story_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "no" / "t.json"
    assert main(["train", str(story_file), "--vocab-size", "300", "-o", str(out)]) == 1
    assert f"folder {tmp_path / 'no'} does not exist" in one_error_line(capsys.readouterr().err)


def test_every_output_in_a_folder_that_cannot_hold_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # train -o, encode -o and show --html say the same thing, before any work, for a folder
    # that does not exist and for a file named as a folder (QA: show --html said "No such
    # file or directory" after printing the tokens)
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world hello\n", encoding="utf-8")
    tok = tmp_path / "t.json"
    assert main(["train", str(corpus), "--vocab-size", "260", "-o", str(tok)]) == 0
    capsys.readouterr()
    for folder, why in (
        (tmp_path / "no", f"folder {tmp_path / 'no'} does not exist"),
        (corpus, f"{corpus} is a file, not a folder"),
    ):
        for args, out in (
            (["train", str(corpus), "--vocab-size", "260", "-o"], folder / "t2.json"),
            (["encode", "-t", str(tok), str(corpus), "-o"], folder / "ids.npy"),
            (["show", "-t", str(tok), "hello", "--html"], folder / "page.html"),
        ):
            assert main([*args, str(out)]) == 1
            captured = capsys.readouterr()
            assert captured.out == ""
            assert one_error_line(captured.err) == (
                f"bytepair: error: {out}: cannot write there, {why}"
            )
    # the page named as a folder, or not named: refused before any work (QA: an existing
    # folder printed the tokens, then "Is a directory"; --html "" wrote nothing, said nothing)
    for page, why in (
        (str(tmp_path), f"{tmp_path}: is a folder; give a file name for the page"),
        (
            f"{tmp_path}/new.html/",
            f"{tmp_path}/new.html/: is a folder; give a file name for the page",
        ),
        ("", "the page's name is empty (--html)"),
    ):
        assert main(["show", "-t", str(tok), "hello", "--html", page]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert one_error_line(captured.err) == f"bytepair: error: {why}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "t.json"]


def test_train_bad_pattern(story_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = str(tmp_path / "t.json")
    args = ["train", str(story_file), "--vocab-size", "300", "--pattern", "(?<", "-o", out]
    assert main(args) == 1
    assert "pattern" in one_error_line(capsys.readouterr().err)


def test_train_base_keeps_its_pattern(
    story_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base.json"
    args = ["train", str(story_file), "--vocab-size", "300", "--pattern", "cl100k"]
    assert main([*args, "--no-progress", "-o", str(base)]) == 0
    # without --pattern, --base's own; --pattern gpt2 with a cl100k base is an error
    more = tmp_path / "more.json"
    args = ["train", str(story_file), "--vocab-size", "320", "--base", str(base), "-o", str(more)]
    assert main([*args, "--no-progress"]) == 0
    assert bytepair.load(more).pattern == bytepair.reference.CL100K_PATTERN
    capsys.readouterr()
    assert main([*args, "--no-progress", "--pattern", "gpt2"]) == 1
    assert "pattern='gpt2' differs from the base" in one_error_line(capsys.readouterr().err)


def test_train_invalid_utf8_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "bad.txt"
    corpus.write_bytes(b"hello world\n\xff\xfe more")  # the bad byte is at offset 12
    assert main(["train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "t.json")]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert str(corpus) in line and "UTF-8" in line and "12" in line


def test_encode_invalid_utf8_input(
    story_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the first 64 KiB read ends inside "é" (c3 | a9); the bad byte follows in the second
    # read, so its offset must add up across reads and count the held-back byte once
    path = tmp_path / "bad.txt"
    path.write_bytes(b"a" * 65535 + "é".encode() + b"\xc3(")
    assert main(["encode", "-t", str(story_tok), str(path)]) == 1
    captured = capsys.readouterr()
    assert one_error_line(captured.err) == (
        f"bytepair: error: {path}: invalid UTF-8 at byte offset 65537 (byte 0xc3): "
        "invalid continuation byte; "
        "pass --errors replace or --errors skip to read it anyway"
    )


@pytest.mark.parametrize("errors", ["skip", "ignore"])
def test_encode_invalid_utf8_skipped(
    story_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], errors: str
) -> None:
    # --errors ignore (Python's name, as train takes it) drops the bad bytes like skip
    path = tmp_path / "bad.txt"
    path.write_bytes(b"hello \xff\xfeworld\n")
    assert main(["encode", "-t", str(story_tok), str(path), "--errors", errors]) == 0
    ids = bytepair.load(story_tok).encode("hello world\n", disallowed_special=())
    assert capsys.readouterr().out.split() == [str(i) for i in ids]


def test_encode_missing_input_and_tokenizer(
    story_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing.txt"
    assert main(["encode", "-t", str(story_tok), str(missing)]) == 1
    assert one_error_line(capsys.readouterr().err) == (
        f"bytepair: error: {missing}: No such file or directory"
    )
    assert main(["decode", "-t", str(tmp_path / "no.json"), str(missing)]) == 1
    assert str(tmp_path / "no.json") in one_error_line(capsys.readouterr().err)
    # a folder is read as documents (test_hostile.py); an empty one says so
    assert main(["encode", "-t", str(story_tok), str(tmp_path)]) == 1
    assert one_error_line(capsys.readouterr().err).endswith(
        f"{tmp_path}: the folder holds no files"
    )


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b.replace(b'"merges"', b'"merged"'), id="no-merges"),
        pytest.param(lambda b: b"\x89PNG\r\n\x1a\n" + b, id="not-json"),
        pytest.param(lambda b: b"", id="empty"),
    ],
)
def test_corrupt_tokenizer_file(
    damage, story_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(damage(story_tok.read_bytes()))
    for command in ("encode", "decode"):
        set_input = tmp_path / "in.txt"
        set_input.write_text("1 2 3", encoding="utf-8")
        assert main([command, "-t", str(bad), str(set_input)]) == 1
        line = one_error_line(capsys.readouterr().err)
        assert line.startswith(f"bytepair: error: {bad}: ")


def test_decode_unknown_id(
    story_tok: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_stdin(monkeypatch, b"104 105 400 105")  # ids are 0..399
    assert main(["decode", "-t", str(story_tok)]) == 1
    assert one_error_line(capsys.readouterr().err) == (
        f"bytepair: error: <stdin>: word 3: unknown token id 400 "
        f"(the tokenizer {story_tok} has ids 0 to 399)"
    )


def test_decode_names_where_an_unknown_id_is_past_the_first_chunk(
    story_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ids are decoded 65,536 at a time; the word (text) or index (id file) counts from the
    # start of the input, not of the chunk (QA: the word of an unknown id was not named)
    from bytepair.cli import _DECODE_IDS

    at = _DECODE_IDS + 7  # 0-based
    ids = [104] * at + [400, 105]
    text = tmp_path / "ids.txt"
    text.write_text(" ".join(map(str, ids)), encoding="utf-8")
    array = tmp_path / "ids.npy"
    np.save(array, np.array(ids, dtype=np.uint16))
    for path, where in ((text, f"word {at + 1}"), (array, f"ids[{at}]")):
        assert main(["decode", "-t", str(story_tok), str(path)]) == 1
        assert one_error_line(capsys.readouterr().err) == (
            f"bytepair: error: {path}: {where}: unknown token id 400 "
            f"(the tokenizer {story_tok} has ids 0 to 399)"
        )


def test_decode_of_a_raw_id_file_without_its_sidecar_says_it_is_missing(
    story_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # QA: a .bin whose sidecar was lost was read as text, and the error named a word of
    # binary noise only; the hint comes for a .bin name or control bytes in the word
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello there, hello", encoding="utf-8")
    for name in ("ids.bin", "ids.raw"):
        out = tmp_path / name
        assert main(["encode", "-t", str(story_tok), str(corpus), "-o", str(out)]) == 0
        side = Path(f"{out}.json")
        side.unlink()
        capsys.readouterr()
        assert main(["decode", "-t", str(story_tok), str(out)]) == 1
        line = one_error_line(capsys.readouterr().err)
        assert line.startswith(f"bytepair: error: {out}: word 1 is "), line
        assert line.endswith(
            f"not a token id (an integer >= 0); if {out} is an id file of `bytepair encode "
            f"-o`, its sidecar {side} (dtype and counts) is missing"
        ), line


@pytest.mark.usefixtures("local_encodings")
def test_decode_unknown_id_names_the_ids_that_are_no_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # QA: "cl100k_base has ids 0 to 100276", yet 100256 is none: the gaps are named too
    # (cl100k_base: tokens 0..100255, special tokens 100257..100260 and 100276)
    for word in ("100256", "100270", "100277"):
        set_stdin(monkeypatch, f"9906 {word}".encode())
        assert main(["decode", "-t", "cl100k_base"]) == 1
        assert one_error_line(capsys.readouterr().err) == (
            f"bytepair: error: <stdin>: word 2: unknown token id {word} (the tokenizer cl100k_base "
            "has ids 0 to 100276, but 16 of them are no token: 100256, 100261-100275)"
        )


@pytest.mark.parametrize(
    ("data", "word"),
    [(b"104 hi 105", "word 2 is 'hi'"), (b"1\n-5", "word 2 is '-5'"), (b"1.0", "word 1 is '1.0'")],
)
def test_decode_not_an_id(
    data: bytes,
    word: str,
    story_tok: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "ids.txt"
    path.write_bytes(data)
    assert main(["decode", "-t", str(story_tok), str(path)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line == f"bytepair: error: {path}: {word}, not a token id (an integer >= 0)"
    assert "sidecar" not in line  # (text: no hint of an id file)


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: bytepair" in capsys.readouterr().err
    assert main(["encode"]) == 2  # -t is required
    assert "-t/--tokenizer" in capsys.readouterr().err
    assert main(["frobnicate"]) == 2
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"bytepair {bytepair.__version__}"
    assert main(["encode", "--help"]) == 0
    assert "--allow-special" in capsys.readouterr().out


def test_decode_zero_padded_ids(
    story_tok: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # leading zeros do not make an id unknown, however many (QA: over 10 digits they did)
    set_stdin(monkeypatch, b"104 0000000000105 00000000000000000000000104")
    assert main(["decode", "-t", str(story_tok)]) == 0
    out = capsys.readouterr().out
    set_stdin(monkeypatch, b"104 105 104")
    assert main(["decode", "-t", str(story_tok)]) == 0
    assert capsys.readouterr().out == out


def test_decode_id_with_thousands_of_digits(
    story_tok: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # longer than Python's int-parsing limit: still an "unknown token id" error, naming it
    set_stdin(monkeypatch, b"104 " + b"9" * 5000)
    assert main(["decode", "-t", str(story_tok)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("bytepair: error: <stdin>: word 2: unknown token id 9999")
    assert "has ids 0 to 399" in line


def test_train_invalid_utf8_corpus_replace_or_ignore(tmp_path: Path) -> None:
    corpus = tmp_path / "bad.txt"
    corpus.write_bytes(b"hello world\n\xff\xfe more hello\n")
    for errors, text in [
        ("replace", "hello world\n\ufffd\ufffd more hello\n"),
        ("ignore", "hello world\n more hello\n"),
    ]:
        out = tmp_path / f"{errors}.json"
        args = ["train", str(corpus), "--vocab-size", "270", "--errors", errors, "-o", str(out)]
        assert main(args) == 0
        expected = train_bpe(text, 270)
        tok = bytepair.load(out)
        assert (tok.vocab, tok.merges) == expected


def test_train_output_not_writable_names_the_output(
    story_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "/proc/version"  # a folder nobody can create files in, even root
    assert main(["train", str(story_file), "--vocab-size", "300", "-o", target]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert target in line and ".tmp" not in line
