"""Regressions from a hostile-input review of the encoding API and CLI (issue 3 QA): each
case is one kind of misuse, with the behaviour a user should get. Oracles: tiktoken's
behaviour where it defines one, else the value worked out here."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from corpus import read_text
from oracles import tiktoken_encoding

import bytepair
from bytepair import charbpe, cli
from bytepair.curve import compression_curve
from bytepair.inputs import iter_chunks

BYTES = {i: bytes([i]) for i in range(256)}
EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def gpt2(data_dir: Path) -> bytepair.Tokenizer:
    return bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt", special_tokens=[EOT]
    )


def test_numpy_ids_decode_like_ints(data_dir: Path, gpt2: bytepair.Tokenizer) -> None:
    enc = tiktoken_encoding(data_dir, "r50k_base")
    arr = gpt2.encode_to_numpy("hello world")
    assert gpt2.decode_tokens_bytes(arr) == enc.decode_tokens_bytes(arr.tolist())
    assert gpt2.decode_single_token_bytes(np.int64(31373)) == b"hello"
    assert gpt2.decode(arr) == "hello world"
    with pytest.raises(TypeError, match="float"):
        gpt2.decode_single_token_bytes(1.0)  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="-3"):
        gpt2.decode_single_token_bytes(-3)


def test_decoding_a_sequence_of_impossible_length_is_a_memory_error(
    gpt2: bytepair.Tokenizer,
) -> None:
    # PyO3 sized its vector of ids by len() unchecked: decode(range(10**12)) ended the
    # process ("memory allocation of 4000000000000 bytes failed", QA). 2**61 ids are more
    # bytes than any address space, whatever the system's overcommit policy.
    huge = range(2**61)
    for call in (gpt2.decode, gpt2.decode_bytes, lambda ids: gpt2.decode_batch([[1], ids])):
        with pytest.raises(MemoryError, match="no memory for the ids"):
            call(huge)


@pytest.mark.parametrize(
    "dtype", ["uint32", "int32", "int64", "uint64", "uint16", ">u4", ">i8", "intp"]
)
def test_numpy_arrays_decode_like_lists(
    data_dir: Path, gpt2: bytepair.Tokenizer, dtype: str
) -> None:
    # a one-dimensional array of integers goes to the core as uint32 bytes at once (read
    # id by id it took 0.17 s for 2.5M ids with the GIL held): same bytes and errors as a
    # list, whatever the dtype (big-endian too), strides and length
    enc = tiktoken_encoding(data_dir, "r50k_base")
    text = read_text(data_dir / "corpora" / "multilingual" / "ru.txt")[:100_000]
    text += read_text(data_dir / "cs336" / "tinystories_sample.txt")[:100_000]
    ids = enc.encode(text, allowed_special="all")
    if dtype == "uint16":  # (ids of gpt2 fit in 16 bits)
        assert max(ids) < 2**16
    arr = np.array(ids, dtype=dtype)
    want = enc.decode_bytes(ids)
    assert gpt2.decode_bytes(arr) == want
    assert gpt2.decode(arr) == enc.decode(ids)
    assert gpt2.decode_bytes(arr[::-1][::-1]) == want
    assert gpt2.decode_bytes(arr[1::3]) == enc.decode_bytes(ids[1::3])
    assert gpt2.decode_bytes(arr[:0]) == b""
    # a masked array is no plain array of ids: its masked place is refused, not decoded
    masked = np.ma.masked_array(arr[:5], mask=[False, True, False, False, False])
    with pytest.raises(TypeError):
        gpt2.decode_bytes(masked.tolist())
    with pytest.raises(TypeError):
        gpt2.decode_bytes(masked)
    for bad in (50257, 2**31 + 5):
        if np.can_cast(np.min_scalar_type(bad), arr.dtype):
            with pytest.raises(KeyError, match=f"^'unknown token id {bad}'$"):
                gpt2.decode_bytes(np.concatenate([arr[:10], np.array([bad], dtype=dtype)]))


def test_one_string_is_not_a_list_of_special_tokens(data_dir: Path) -> None:
    with pytest.raises(TypeError, match=r"\['<\|eot\|>'\]"):
        bytepair.Tokenizer(BYTES, [], special_tokens="<|eot|>")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="special_tokens"):
        bytepair.Tokenizer.from_files(
            data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt", special_tokens=EOT
        )


def test_policy_arguments(gpt2: bytepair.Tokenizer) -> None:
    text = "a" + EOT
    # disallowed_special=None is an empty collection, as tiktoken reads it; allowed_special
    # None a TypeError, as tiktoken's (test_special.py: test_none_policies_as_in_tiktoken)
    assert gpt2.encode(text, disallowed_special=None) == gpt2.encode(text, disallowed_special=())
    with pytest.raises(ValueError, match=r"allowed_special .*\{'<\|endoftext\|>'\}"):
        gpt2.encode(text, allowed_special=EOT)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="disallowed_special"):
        gpt2.encode(text, disallowed_special=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("vocab", "merges", "kind"),
    [
        (None, [], "vocab must be a dict"),
        # (None was "'NoneType' object is not iterable", naming no argument)
        (BYTES, None, r"merges must be a list of .* pairs, got NoneType \(no merges: \[\]\)$"),
        (BYTES, 5, r"merges must be a list of \(left bytes, right bytes\) pairs, got int$"),
        ({**BYTES, 256: 5}, [], r"vocab\[256\] must be bytes"),
        # str merges (GPT-2's merges.txt read as text): say so, not "string argument without
        # an encoding"
        (
            {**BYTES, 256: b"ab"},
            [("a", "b")],
            r"merge 0 is \('a', 'b'\): merges are pairs of bytes",
        ),
    ],
)
def test_bad_vocab_types(vocab: object, merges: list, kind: str) -> None:
    with pytest.raises(TypeError, match=kind):
        bytepair.Tokenizer(vocab, merges)  # type: ignore[arg-type]


def test_merges_from_an_iterator_are_kept() -> None:
    # merges were read twice: an iterator gave the encoder its merges and tok.merges none,
    # so a save wrote a tokenizer without merges
    vocab = {**BYTES, 256: b"ab", 257: b"abc"}
    merges = [(b"a", b"b"), (b"ab", b"c")]
    tok = bytepair.Tokenizer(vocab, iter(merges))
    assert tok.merges == merges and tok.encode("abc ab") == [257, 32, 256]


def test_strict_stream_decoder_recovers_after_flush(gpt2: bytepair.Tokenizer) -> None:
    dec = gpt2.stream_decoder(errors="strict")
    dec.decode(gpt2.encode("🐍")[:1])
    with pytest.raises(UnicodeDecodeError):
        dec.flush()
    assert dec.pending == b""
    assert dec.decode(gpt2.encode("hello")) == "hello"
    with pytest.raises(ValueError, match="bogus"):
        gpt2.stream_decoder(errors="bogus")


def test_stream_decoder_takes_only_ids(gpt2: bytepair.Tokenizer) -> None:
    # decode(5) said "'int' object is not iterable"; decode(b"ab") read the bytes as the ids
    # 97, 98 and gave "bc" (GPT-2's ids are no byte values): a TypeError naming ids, as
    # Tokenizer.decode refuses bytes too; the stream goes on as if the call never was
    dec = gpt2.stream_decoder()
    dec.decode(gpt2.encode("🐍")[:1])
    for bad, shown in [
        (5, "int (one id: [5])"),
        (np.int64(5), "int64"),
        (b"ab", "bytes"),
        ("ab", "str"),
        (None, "NoneType"),
    ]:
        with pytest.raises(TypeError) as e:
            dec.decode(bad)  # type: ignore[arg-type]
        assert str(e.value).startswith(f"ids must be an iterable of token ids (ints), not {shown}")
    assert dec.pending != b""
    rest = gpt2.encode("🐍")[1:]
    assert dec.decode(np.array(rest)) + dec.decode(iter(gpt2.encode(" ab"))) == "🐍 ab"
    with pytest.raises(TypeError, match=r"ids must be a sequence of token ids \(ints\), not bytes"):
        gpt2.decode(b"ab")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text", ["ab", b"ab", bytearray(b"ab"), memoryview(b"ab")], ids=lambda t: type(t).__name__
)
def test_no_method_reads_text_as_ids(gpt2: bytepair.Tokenizer, text: object) -> None:
    # decode_bytes and decode_tokens_bytes read a bytearray's bytes as the ids 97, 98 where
    # the stream decoder refused it: one rule for every method that takes ids
    shown = type(text).__name__
    for call, name, kind in [
        (gpt2.decode, "ids", "a sequence"),
        (gpt2.decode_bytes, "ids", "a sequence"),
        (gpt2.decode_with_offsets, "ids", "an iterable"),
        (lambda ids: gpt2.decode_batch([[31373], ids]), "batch[1]", "a sequence"),
        (lambda ids: gpt2.decode_bytes_batch([[31373], ids]), "batch[1]", "a sequence"),
        (gpt2.decode_tokens_bytes, "ids", "an iterable"),
        (gpt2.stream_decoder().decode, "ids", "an iterable"),
    ]:
        with pytest.raises(TypeError) as e:
            call(text)
        assert str(e.value) == f"{name} must be {kind} of token ids (ints), not {shown}", call
    with pytest.raises(TypeError, match=f"^batch must be a sequence of id lists, not {shown}$"):
        gpt2.decode_batch(text)  # type: ignore[arg-type]


def test_ids_in_a_memoryview_of_ints_or_an_iterable_but_not_a_dict(
    gpt2: bytepair.Tokenizer,
) -> None:
    # a memoryview of an int array holds ids (only one of bytes is text); a dict's keys are
    # no ids for the iterable-taking methods either, as decode refuses it (QA)
    import array

    ids = gpt2.encode("hello world")
    held = memoryview(array.array("I", ids))
    assert gpt2.decode(held) == gpt2.decode_bytes(held).decode() == "hello world"
    assert b"".join(gpt2.decode_tokens_bytes(held)) == b"hello world"
    assert gpt2.stream_decoder().decode(held) == "hello world"
    for call in (gpt2.decode_tokens_bytes, gpt2.decode_with_offsets, gpt2.stream_decoder().decode):
        with pytest.raises(TypeError, match="^ids must be an iterable of token ids .*, not dict$"):
            call({ids[0]: 1})


def test_decode_of_no_id_sequence_names_ids(data_dir: Path, gpt2: bytepair.Tokenizer) -> None:
    # decode(5) said pyo3's "'int' object is not an instance of 'Sequence'", naming no
    # argument: a TypeError worded as the stream decoder's. tiktoken refuses the same values
    # with a TypeError; the sequences it takes decode here too, to its text
    enc = tiktoken_encoding(data_dir, "r50k_base")
    for bad, shown in [
        (5, "int (one id: [5])"),
        (np.int64(5), "int64 (one id: [np.int64(5)])"),
        (np.array(5), "ndarray (one id: [array(5)])"),
        (None, "NoneType"),
        (5.0, "float"),
        ({31373: 1}, "dict"),
        ({31373}, "set"),
        (iter([31373]), "list_iterator"),
    ]:
        with pytest.raises(TypeError):
            enc.decode(bad)  # type: ignore[arg-type]
        for call, name in [
            (gpt2.decode, "ids"),
            (gpt2.decode_bytes, "ids"),
            (lambda ids: gpt2.decode_batch([[31373], ids]), "batch[1]"),
            (lambda ids: gpt2.decode_bytes_batch([[31373], ids]), "batch[1]"),
        ]:
            with pytest.raises(TypeError) as e:
                call(bad)
            assert str(e.value) == f"{name} must be a sequence of token ids (ints), not {shown}"
    with pytest.raises(TypeError) as e:
        gpt2.decode_tokens_bytes(5)  # type: ignore[arg-type]
    assert str(e.value) == "ids must be an iterable of token ids (ints), not int (one id: [5])"
    with pytest.raises(TypeError, match="^batch must be a sequence of id lists, not int$"):
        gpt2.decode_batch(5)  # type: ignore[arg-type]
    # an item that is no int keeps the message that names its type
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        gpt2.decode([31373, 1.0])  # type: ignore[list-item]
    ids = [31373, 995]
    for good in (
        ids,
        tuple(ids),
        np.array(ids),
        np.array(ids, dtype=np.uint32),
        range(31373, 31374),
    ):
        assert gpt2.decode(good) == enc.decode(good), good  # type: ignore[arg-type]
    assert gpt2.decode(ids) == "hello world"
    assert gpt2.decode_batch([ids, np.array(ids)]) == ["hello world"] * 2


def test_saved_files_get_the_usual_mode(tmp_path: Path, gpt2: bytepair.Tokenizer) -> None:
    old = os.umask(0o022)
    try:
        gpt2.save(tmp_path / "tok.json")
        counts = bytepair.count(iter(["hello world"]))
        counts.save(tmp_path / "c.bpcounts")
        gpt2.save(tmp_path / "gpt2", format="gpt2")
    finally:
        os.umask(old)
    for p in [tmp_path / "tok.json", tmp_path / "c.bpcounts", tmp_path / "gpt2" / "vocab.json"]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p


def test_cli_encode_errors_option_on_one_file(
    tmp_path: Path, gpt2: bytepair.Tokenizer, capsys: pytest.CaptureFixture[str]
) -> None:
    gpt2.save(tmp_path / "tok.json")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff\n")
    assert cli.main(["encode", "-t", str(tmp_path / "tok.json"), str(bad)]) == 1
    assert "byte offset 3" in capsys.readouterr().err
    assert (
        cli.main(["encode", "-t", str(tmp_path / "tok.json"), "--errors", "replace", str(bad)]) == 0
    )
    assert capsys.readouterr().out.split() == [str(i) for i in gpt2.encode("ok \ufffd\n")]
    assert cli.main(["encode", "-t", str(tmp_path / "tok.json"), "--errors", "skip", str(bad)]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in gpt2.encode("ok \n")]


def test_cli_train_refuses_to_overwrite_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low low lower lowest " * 20, encoding="utf-8")
    before = corpus.read_bytes()
    code = cli.main(["train", str(corpus), "--vocab-size", "260", "-o", str(corpus)])
    assert code != 0 and "training inputs" in capsys.readouterr().err
    assert corpus.read_bytes() == before


def test_damaged_compressed_corpora_are_errors_naming_the_file(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    import gzip

    text = b"The quick brown fox jumps over the lazy dog.\n" * 20000
    z = zstandard.ZstdCompressor().compress(text)
    two = tmp_path / "two.txt.zst"  # two frames: both read
    two.write_bytes(z + zstandard.ZstdCompressor().compress(b"second frame\n"))
    plain = tmp_path / "plain.txt"
    plain.write_bytes(text + b"second frame\n")
    assert bytepair.count(two) == bytepair.count(plain)
    bad: dict[str, bytes] = {
        "cut.txt.zst": z[: len(z) // 2],  # zstandard's reader returns the half silently
        "magic.txt.zst": z[:4],
        "flip.txt.zst": z[: len(z) // 2] + bytes([z[len(z) // 2] ^ 0xFF]) + z[len(z) // 2 + 1 :],
        "flip.txt.gz": (lambda g: g[:20] + bytes([g[20] ^ 0xFF]) + g[21:])(gzip.compress(text)),
        "cut.txt.gz": gzip.compress(text)[:100],
    }
    for name, data in bad.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(OSError, match=name):
            bytepair.count(tmp_path / name)
    # plain text that starts like a bz2 header is plain text
    bzh = tmp_path / "bzh.txt"
    bzh.write_text("BZh is how a bz2 file starts\n", encoding="utf-8")
    assert bytepair.count(bzh) == bytepair.count(iter(["BZh is how a bz2 file starts\n"]))


def test_encode_output_is_never_an_input(tmp_path: Path, gpt2: bytepair.Tokenizer) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("hello world\n", encoding="utf-8")
    with pytest.raises(ValueError, match="one of the inputs"):
        bytepair.encode_to_file(gpt2, victim, victim, progress=False)
    assert victim.read_text(encoding="utf-8") == "hello world\n"
    # a second run over a folder does not read the first run's output back
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("hello world\n", encoding="utf-8")
    for _ in range(2):
        bytepair.encode_to_file(gpt2, folder, folder / "ids.npy", progress=False)
        assert bytepair.open_ids(folder / "ids.npy").tolist() == gpt2.encode("hello world\n")


def test_encode_output_never_replaces_a_document_of_its_inputs(
    tmp_path: Path, gpt2: bytepair.Tokenizer
) -> None:
    # found in a folder or glob, by a symlink, or named as the sidecar: refused, file kept
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("hello world\n", encoding="utf-8")
    doc = folder / "b.txt"
    doc.write_text("a document\n", encoding="utf-8")
    link = tmp_path / "link.bin"
    link.symlink_to(doc)
    side = tmp_path / "out.bin.json"
    side.symlink_to(tmp_path / "named.txt")
    (tmp_path / "named.txt").write_text("named\n", encoding="utf-8")
    cases = [
        (folder, doc, "which is not an id file written by bytepair"),
        (str(folder / "*.txt"), doc, "which is not an id file written by bytepair"),
        (folder, link, "which is not an id file written by bytepair"),
        ([folder, tmp_path / "named.txt"], tmp_path / "out.bin", "its sidecar is one of the"),
    ]
    for inputs, out, message in cases:
        with pytest.raises(ValueError, match=message):
            bytepair.encode_to_file(gpt2, inputs, out, progress=False)
        assert doc.read_text(encoding="utf-8") == "a document\n"
        assert (tmp_path / "named.txt").read_text(encoding="utf-8") == "named\n"


def test_show_escapes_control_characters() -> None:
    from bytepair.show import render_terminal

    tok = bytepair.Tokenizer(BYTES, [])
    for color in (False, True):
        shown = render_terminal(tok, "a\x1b[2Jb\x07\r\x9bz", color=color)
        body = shown.replace("\x1b[0m", "").replace("\x1b[4m", "")
        body = __import__("re").sub(r"\x1b\[(?:48|38);5;\d+m", "", body)
        assert "\x1b" not in body and "\x07" not in body and "\r" not in body and "\x9b" not in body
        assert "\\x1b" in body and "\\x07" in body and "\\x0d" in body and "\\x9b" in body


def test_special_token_with_a_newline_is_never_cut_when_counting(tmp_path: Path) -> None:
    # Files are counted in parallel chunks cut at newlines; a special token holding "\n"
    # must not be cut apart (its text is never counted). Oracle: the text split on the
    # special token by hand, each part counted on its own.
    special = "<|a\nb|>"
    line = "word " + special + " filler text here\n"
    text = line * 150_000  # ~4 MB: several chunks
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    got = dict(bytepair.count(path, special_tokens=[special], threads=2).items())
    expected = dict(bytepair.count(iter(text.split(special))).items())
    assert got == expected
    assert not any(b"<|" in k or b"|>" in k for k in got)


def test_no_cut_splits_the_whitespace_before_a_special_token() -> None:
    # (QA) cl100k's `\s++$` takes a newline and the spaces after it whole when a special
    # token that is split out follows. Long texts are cut into parts (for threads, stream
    # pieces, file blocks); where a part's window ended inside that special token, the cut
    # went after the newline, and the parts gave "\n" and "  " apart
    eot = "<|endoftext|>"
    snippet = "x\n  " + eot
    # counting: a stream is taken in pieces of 2^20 characters; the snippet across the end
    # of the first piece, at every offset (oracle: the pre-tokens of the text, worked out
    # by hand: the letters and x, the newline with its spaces, " tail")
    piece = 1 << 20
    for k in range(1, len(snippet)):
        doc = "a" * (piece - k) + snippet + " tail"
        got = dict(bytepair.count(iter([doc]), pattern="cl100k", special_tokens=[eot]).items())
        want = {b"a" * (piece - k) + b"x": 1, b"\n  ": 1, b" tail": 1}
        assert got == want, k
    # encoding: one call cuts a long text into parts of len / (4 x threads) bytes for its
    # threads; the snippet across the end of the first part's window (oracle: tiktoken,
    # from to_tiktoken, which encodes the text whole)
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"\n ", 257: b"\n  "}
    tok = bytepair.Tokenizer(
        vocab, [(b"\n", b" "), (b"\n ", b" ")], special_tokens=[eot], pattern="cl100k"
    )
    tt = tok.to_tiktoken()
    n = 400_000
    target = max(n // (4 * len(os.sched_getaffinity(0))), 1 << 15)
    for pos in range(target - len(snippet) - 2, target + 3):
        text = ("ab " * n)[:pos] + snippet
        text += "c" * (n - len(text))
        ids = tok.encode(text, allowed_special="all")
        assert ids == tt.encode(text, allowed_special="all"), pos
        assert 257 in ids


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGTERM"), reason="POSIX signals")
def test_sigterm_during_encode_leaves_no_temporary_file(
    tmp_path: Path, data_dir: Path, gpt2: bytepair.Tokenizer
) -> None:
    # timeout, Slurm and `docker stop` end jobs with SIGTERM: the output folder must not keep
    # a partial temporary file (Ctrl-C already cleaned up)
    import signal
    import subprocess
    import sys
    import time

    gpt2.save(tmp_path / "tok.json")
    corpus = str(data_dir / "corpora" / "english_gutenberg.txt")
    out = tmp_path / "out" / "ids.npy"
    out.parent.mkdir()
    cmd = [sys.executable, "-m", "bytepair", "encode", "-t", str(tmp_path / "tok.json")]
    cmd += [corpus, corpus, corpus, "-o", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not any(out.parent.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the temporary file exists
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert b"terminated by signal" in err
    assert list(out.parent.iterdir()) == []


def test_repr_names_a_preset_pattern_however_given(data_dir: Path) -> None:
    regex = bytepair.get_encoding(
        "cl100k_base", path=data_dir / "tiktoken" / "cl100k_base.tiktoken"
    )
    assert "pattern='cl100k'" in repr(regex)
    tok = bytepair.Tokenizer(BYTES, [], pattern=regex.pattern)
    assert repr(tok) == "<bytepair.Tokenizer n_vocab=256 special_tokens=0 pattern='cl100k'>"
    custom = bytepair.Tokenizer(BYTES, [], pattern=r"\w+|\W")
    assert repr(custom).endswith("pattern='\\\\w+|\\\\W'>")


def test_encode_output_never_overwrites_the_tokenizer(tmp_path: Path) -> None:
    tok = bytepair.train(iter(["hello world " * 50]), 270)
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    before = tok_path.read_bytes()
    (tmp_path / "in.txt").write_text("hello world\n", encoding="utf-8")
    for out in [tok_path, tmp_path / "tok"]:  # the file itself, or the name of its sidecar
        argv = ["encode", "-t", str(tok_path), str(tmp_path / "in.txt"), "-o", str(out)]
        assert cli.main(argv) == 1
    assert tok_path.read_bytes() == before


@pytest.mark.parametrize("denied", ["", "sub"])  # the folder given, or one under it
def test_an_unreadable_folder_is_a_permission_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, denied: str
) -> None:
    # an unreadable subfolder was skipped silently, an unreadable top folder "held no files"
    # (as root every folder is readable: the refusal is simulated at os.scandir)
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.txt").write_text("hello world\n", encoding="utf-8")
    (corpus / "sub" / "b.txt").write_text("other words\n", encoding="utf-8")
    refused = str(corpus / denied)
    real = os.scandir

    def scandir(path: object) -> object:
        if os.fspath(path) == refused:  # type: ignore[call-overload]
            raise PermissionError(13, "Permission denied", os.fspath(path))  # type: ignore[call-overload]
        return real(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", scandir)
    for call in (bytepair.count, lambda p: bytepair.train(p, 260)):
        with pytest.raises(PermissionError) as info:
            call(str(corpus))
        assert info.value.filename == refused


def test_save_goes_through_symlinks_and_never_replaces_a_fifo(tmp_path: Path) -> None:
    tok = bytepair.Tokenizer(BYTES, [], special_tokens=[EOT])
    target, link = tmp_path / "target.json", tmp_path / "link.json"
    target.write_text("old", encoding="utf-8")
    link.symlink_to(target)
    tok.save(link)
    assert link.is_symlink() and bytepair.load(target).special_tokens == {EOT: 256}
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        tok.save(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_encode_output_goes_through_symlinks_and_never_replaces_a_fifo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the rule of the tokenizer writers (test above) holds for `encode -o` too
    tok = bytepair.Tokenizer(BYTES, [])
    tok.save(tmp_path / "tok.json")
    (tmp_path / "in.txt").write_text("hi\n", encoding="utf-8")
    encode = ["encode", "-t", str(tmp_path / "tok.json"), str(tmp_path / "in.txt"), "-o"]
    target, link = tmp_path / "target.bin", tmp_path / "link.bin"
    target.write_bytes(b"old")
    link.symlink_to(target)
    assert cli.main([*encode, str(link), "--no-progress"]) == 0
    assert link.is_symlink()
    assert np.fromfile(target, dtype="<u2").tolist() == [104, 105, 10]
    assert bytepair.open_ids(link).tolist() == [104, 105, 10]
    fifo = tmp_path / "fifo.bin"
    os.mkfifo(fifo)
    assert cli.main([*encode, str(fifo), "--no-progress"]) == 1
    assert "fifo.bin: is not a regular file (a device or fifo)" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # a folder at the sidecar's name is refused before any work, not after
    (tmp_path / "ids.bin.json").mkdir()
    assert cli.main([*encode, str(tmp_path / "ids.bin"), "--no-progress"]) == 1
    assert "ids.bin.json: is a folder; not replacing it" in capsys.readouterr().err
    assert not (tmp_path / "ids.bin").exists()


def test_cli_encode_one_folder_or_glob_like_several_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok = bytepair.train(iter(["hello world, hello there"] * 5), 270)
    tok.save(tmp_path / "tok.json")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("hello world\n", encoding="utf-8")
    (docs / "b.txt").write_text("hello there", encoding="utf-8")
    # one line of ids per document (file), as two inputs give
    expected = [
        " ".join(map(str, tok.encode("hello world\n"))),
        " ".join(map(str, tok.encode("hello there"))),
    ]
    for inputs in ([str(docs)], [str(docs / "*.txt")], [str(docs / "a.txt"), str(docs / "b.txt")]):
        assert cli.main(["encode", "-t", str(tmp_path / "tok.json"), *inputs]) == 0
        assert capsys.readouterr().out.splitlines() == expected
    # a glob matching nothing says so
    assert cli.main(["encode", "-t", str(tmp_path / "tok.json"), str(docs / "*.md")]) == 1
    assert "*.md: No file matches the glob pattern" in capsys.readouterr().err


def test_cli_errors_name_cli_flags_not_python_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok = bytepair.Tokenizer(BYTES, [])
    tok.save(tmp_path / "tok.json")
    (tmp_path / "bad.txt").write_bytes(b"ok \xff\n")
    (tmp_path / "d.jsonl").write_text('{"body": "hello"}\n', encoding="utf-8")
    t = ["-t", str(tmp_path / "tok.json")]
    cases = [
        (
            ["encode", *t, str(tmp_path / "bad.txt"), str(tmp_path / "bad.txt")],
            "bad.txt: invalid UTF-8 at byte offset 3 (byte 0xff): invalid start byte; "
            "pass --errors replace or --errors skip to read it anyway",
        ),
        (
            ["encode", *t, str(tmp_path / "d.jsonl")],
            "d.jsonl, line 1: no key 'text' (keys: 'body'); pass --text-field KEY to pick another",
        ),
        (
            ["train", str(tmp_path / "none*.txt"), "--vocab-size", "260", "-o", "x.json"],
            "none*.txt: No file matches the glob pattern",
        ),
        # curve has neither flag: no hint rather than a Python one
        (["curve", *t, "--text", str(tmp_path / "bad.txt")], "invalid start byte"),
        # one file read by the CLI itself, and a plain-text file read by the Rust counter:
        # the same words as a file read in Python (above)
        (
            ["encode", *t, str(tmp_path / "bad.txt")],
            "bad.txt: invalid UTF-8 at byte offset 3 (byte 0xff): invalid start byte; "
            "pass --errors replace or --errors skip to read it anyway",
        ),
        (
            ["train", str(tmp_path / "bad.txt"), "--vocab-size", "260", "-o", "x.json"],
            "bad.txt: invalid UTF-8 at byte offset 3 (byte 0xff): invalid start byte; "
            "pass --errors replace or --errors skip to read it anyway",
        ),
    ]
    for argv, message in cases:
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert message in err
        assert "errors=" not in err and "text_field=" not in err and "iter(" not in err
    # a rank file given as -t: the flag cannot pass pattern=, so say how to convert it
    rank_file = tmp_path / "r.tiktoken"
    tok.save(rank_file, format="tiktoken")
    assert cli.main(["encode", "-t", str(rank_file), str(tmp_path / "bad.txt")]) == 1
    err = capsys.readouterr().err
    assert f"bytepair convert {rank_file} tok.json --to native --pattern P" in err
    assert "bytepair.load(" not in err
    # the library keeps its Python hints
    with pytest.raises(ValueError, match=r"pass errors='replace' or errors='skip'"):
        list(iter_chunks(tmp_path / "bad.txt"))
    with pytest.raises(FileNotFoundError, match=r"pass iter\(texts\)"):
        bytepair.count([str(tmp_path / "none*.txt")])
    with pytest.raises(
        bytepair.CorpusDecodeError,
        match=r"byte offset 3 \(byte 0xff\): invalid start byte; pass errors='replace' or ",
    ):
        bytepair.count(tmp_path / "bad.txt")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any folder"
)
def test_a_chmod_000_corpus_folder_is_a_permission_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("hello world\n", encoding="utf-8")
    corpus.chmod(0)
    try:
        with pytest.raises(PermissionError, match="corpus"):
            bytepair.count(corpus)
        argv = ["train", str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "t.json")]
        assert cli.main(argv) == 1
        assert f"{corpus}: Permission denied" in capsys.readouterr().err
    finally:
        corpus.chmod(0o755)


def test_cli_missing_optional_package_is_an_error_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a parquet corpus without pyarrow installed (None in sys.modules makes the import fail)
    (tmp_path / "c.parquet").write_bytes(b"PAR1 not really")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    out = str(tmp_path / "tok.json")
    code = cli.main(["train", str(tmp_path / "c.parquet"), "--vocab-size", "260", "-o", out])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("bytepair: error: ") and "install 'pyarrow'" in err
    assert "Traceback" not in err


def test_cli_show_html_never_replaces_the_tokenizer_or_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok = tmp_path / "tok.json"
    bytepair.Tokenizer(BYTES, []).save(tok)
    before = tok.read_bytes()
    text = tmp_path / "x.txt"
    text.write_text("hello\n", encoding="utf-8")
    for argv in (
        ["show", "-t", str(tok), "hi", "--html", str(tok)],
        ["show", "-t", str(tok), "--file", str(text), "--html", str(text)],
    ):
        assert cli.main(argv) == 1
        assert "not overwriting it" in capsys.readouterr().err
    assert tok.read_bytes() == before and text.read_text(encoding="utf-8") == "hello\n"
    assert cli.main(["show", "-t", str(tok), "hi", "--html", str(tmp_path / "p.html")]) == 0
    assert "<html" in (tmp_path / "p.html").read_text(encoding="utf-8").lower()


def test_output_through_a_dangling_symlink_names_the_output(
    tmp_path: Path, gpt2: bytepair.Tokenizer
) -> None:
    (tmp_path / "in.txt").write_text("hello\n", encoding="utf-8")
    for out in (tmp_path / "ids.npy", tmp_path / "tok.json"):
        out.symlink_to(tmp_path / "missing" / out.name)
    with pytest.raises(
        FileNotFoundError, match=r"No such folder for the file this symlink names .*ids\.npy"
    ):
        bytepair.encode_to_file(gpt2, tmp_path / "in.txt", tmp_path / "ids.npy", progress=False)
    with pytest.raises(
        FileNotFoundError, match=r"No such folder for the file this symlink names .*tok\.json"
    ):
        gpt2.save(tmp_path / "tok.json")
    assert not list(tmp_path.glob("*.tmp")) and not (tmp_path / "missing").exists()
    # no symlink: the message says so plainly (found by QA)
    with pytest.raises(FileNotFoundError, match=r"No such folder for the output: .*x\.json"):
        gpt2.save(tmp_path / "nowhere" / "x.json")


def test_reference_train_bpe_refuses_a_file_name(tmp_path: Path) -> None:
    # bytepair.train_bpe takes a path, bytepair.reference.train_bpe the text (found by QA)
    import bytepair as bp  # the oracle is reachable as an attribute, without importing it

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low low lower lowest\n", encoding="utf-8")
    for name in (str(corpus), corpus):
        with pytest.raises(TypeError, match="is the name of a file: pass its text"):
            bp.reference.train_bpe(name, 260)
    _, merges = bp.reference.train_bpe(corpus.read_text(encoding="utf-8"), 259)
    assert merges == bp.train_bpe(corpus, 259)[1] == [(b"o", b"w"), (b"l", b"ow"), (b" ", b"low")]


def test_reference_trainers_refuse_a_dict_of_counts() -> None:
    # iterating {word: count} gives the words: the counts were silently dropped
    from bytepair import reference

    vocab, merges = reference.train_bpe(["low", "low", "lower"], 258)
    base = (dict(vocab), list(merges))
    for train in (
        lambda t: reference.train_bpe(t, 258),
        lambda t: reference.train_bpe_continue(*base, t, 259),
    ):
        with pytest.raises(TypeError, match="not a dict: .*bytepair.train_from_counts"):
            train({"low": 2, "lower": 1})
    # the keys as texts, when asked for: each pair of "low" and "lower" twice, the tie going
    # to the greater pair (o, w)
    assert reference.train_bpe(iter({"low": 2, "lower": 1}), 258)[1] == [
        (b"o", b"w"),
        (b"l", b"ow"),
    ]


def test_cli_tokenizer_by_encoding_name(
    data_dir: Path, local_encodings: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "t.txt"
    text.write_text("hello world <|endoftext|>\n", encoding="utf-8")
    cl100k = bytepair.get_encoding("cl100k_base")
    assert cli.main(["encode", "-t", "cl100k_base", str(text), "--allow-special"]) == 0
    out = capsys.readouterr().out.split()
    assert out == [str(i) for i in cl100k.encode(text.read_text(), allowed_special="all")]
    # OpenAI's rank file itself: the hint names the encoding, which brings its specials
    rank_file = data_dir / "tiktoken" / "cl100k_base.tiktoken"
    assert cli.main(["encode", "-t", str(rank_file), str(text)]) == 1
    assert "this is the rank file of cl100k_base: pass -t cl100k_base" in capsys.readouterr().err


def test_a_huge_vocab_size_reserves_no_memory_for_it() -> None:
    # vocab_size is an upper bound: training stops when no pair is left. Room for all the
    # merges asked was reserved up front (8 bytes each): 10**9 asked for 8 GB, and the failed
    # allocation aborted the interpreter (QA). Under a 4 GB address-space limit, every
    # entry point now stops after the merges "hello world" has: 4 in "hello", 5 in " world".
    code = """if True:
        import resource
        import bytepair
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        for vocab_size in (10**9, 2**32 - 1):
            print(bytepair.train(iter(["hello world"]), vocab_size=vocab_size).n_vocab)
            counts = bytepair.count(iter(["hello world"]))
            print(bytepair.train_from_counts(counts, vocab_size).n_vocab)
        base = bytepair.train(iter(["hello"]), vocab_size=256)
        print(bytepair.train(iter(["hello world"]), vocab_size=10**9, base=base).n_vocab)
    """
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == [str(256 + 4 + 5)] * 5


@pytest.mark.parametrize(
    ("path", "fmt"),
    [(b"x.tiktoken", None), (b"x.json", None), (b"x.json", "native"), (b"x", "gpt2"), (b"x", "hf")],
)
def test_save_refuses_a_bytes_path_as_load_does(
    path: bytes, fmt: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same TypeError naming the argument for every format (was "endswith first arg must
    # be bytes" with no format, pathlib's "argument should be a str object" with one)
    monkeypatch.chdir(tmp_path)
    tok = bytepair.Tokenizer(BYTES, [])
    with pytest.raises(TypeError) as e:
        tok.save(path, format=fmt)  # type: ignore[arg-type]
    assert str(e.value) == (
        "save takes the path to write (a str or os.PathLike), not a bytes "
        "(decode it: os.fsdecode(path))"
    )
    with pytest.raises(TypeError, match="not a int"):
        tok.save(3, format=fmt)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError, match="load takes the path of a tokenizer file or folder"):
        bytepair.load(path)  # type: ignore[arg-type]


def test_counts_take_the_paths_a_tokenizer_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PretokenCounts.save(b"x") said "Can't mix bytes and non-bytes in path components" and
    # PretokenCounts.load(b"x") read the file: as Tokenizer.save and bytepair.load, a str or
    # os.PathLike only, and a TypeError naming the path otherwise
    monkeypatch.chdir(tmp_path)
    counts = bytepair.count(iter(["hello", "hello world"]))
    counts.save("x")
    assert bytepair.PretokenCounts.load(Path("x"))[b"hello"] == 2
    for path, shown in [
        (b"x", "bytes (decode it: os.fsdecode(path))"),
        (3, "int"),
        (None, "NoneType"),
    ]:
        with pytest.raises(TypeError) as e:
            counts.save(path)  # type: ignore[arg-type]
        assert str(e.value) == (
            f"PretokenCounts.save takes the path to write (a str or os.PathLike), not a {shown}"
        )
        with pytest.raises(TypeError) as e:
            bytepair.PretokenCounts.load(path)  # type: ignore[arg-type]
        assert str(e.value) == (
            "PretokenCounts.load takes the path of a counts file (a str or os.PathLike), "
            f"not a {shown}"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x"]


def test_counts_refuse_a_folder_as_a_tokenizer_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gpt2: bytepair.Tokenizer
) -> None:
    # (QA: save(".") said "[Errno 16] Device or resource busy: '<parent>/.bpcounts-...' ->
    # '.'", save(<a folder>) an IsADirectoryError and save("") a FileNotFoundError, each
    # naming a temporary file made in the folder above) the errors of Tokenizer.save, naming
    # the path, before any temporary file is made; "" is no name at all, as open("") says
    # (it was "is a folder" naming the current folder, which misled QA)
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    monkeypatch.chdir(work)
    counts = bytepair.count(iter(["hello world"]))
    folder = f"[Errno 21] is a folder; not replacing it: {str(work)!r}"
    for path, error, message in [
        (".", IsADirectoryError, folder),
        ("", FileNotFoundError, "[Errno 2] No such file or directory: ''"),
        (work, IsADirectoryError, folder),
        ("sub", IsADirectoryError, folder[:-1] + "/sub'"),
        (
            "nowhere/c.bpcounts",
            FileNotFoundError,
            "[Errno 2] No such folder for the output: 'nowhere/c.bpcounts'",
        ),
    ]:
        for save in (counts.save, gpt2.save):
            with pytest.raises(OSError) as e:
                save(path)
            assert type(e.value) is error and str(e.value) == message, (path, save)
    assert [p.name for p in tmp_path.iterdir()] == ["work"]
    assert [p.name for p in work.iterdir()] == ["sub"] and not any((work / "sub").iterdir())
    counts.save("sub/c.bpcounts")
    assert bytepair.PretokenCounts.load(work / "sub" / "c.bpcounts")[b" world"] == 1
    assert [p.name for p in (work / "sub").iterdir()] == ["c.bpcounts"]


@pytest.mark.parametrize(
    "texts", [{"low lower": 3, " lowest": 1}, Counter(["low lower", " lowest"])]
)
def test_a_dict_of_texts_is_refused_where_tiktoken_has_no_rule(
    texts: dict, data_dir: Path, gpt2: bytepair.Tokenizer
) -> None:
    # encode_iterable, compression_curve and charbpe.train read a dict's keys as the text,
    # silently dropping its values (as count did): a TypeError naming the argument. tiktoken
    # has none of them; its encode_batch and encode_ordinary_batch encode a dict's keys, so
    # ours still do, to its ids
    kind = type(texts).__name__

    def message(name: str, what: str) -> str:
        return (
            f"{name} must be {what}, not a {kind}: its keys would be read as the texts and its "
            f"values dropped (pass iter({name}) or iter({name}.values()) to say which)"
        )

    with pytest.raises(TypeError) as e:
        list(gpt2.encode_iterable(texts))
    assert str(e.value) == message("iterable", "an iterable of str")
    assert list(gpt2.encode_iterable(iter(texts))) == gpt2.encode("low lower lowest")
    tok = bytepair.train(iter(["low low lower lowest"]), 259)
    with pytest.raises(TypeError) as e:
        compression_curve(tok, texts)
    assert str(e.value) == message("texts", "a path, a list of paths or an iterable of str")
    assert [p.n_tokens for p in compression_curve(tok, iter(texts), [0, 2])] == [16, 10]
    with pytest.raises(TypeError) as e:
        charbpe.train(texts, 2)
    assert str(e.value) == message("sentences", "an iterable of str")
    assert charbpe.train(iter(texts), 2).merge_rules == [("l", "o"), ("lo", "w")]
    enc = tiktoken_encoding(data_dir, "r50k_base")
    assert gpt2.encode_batch(texts) == enc.encode_batch(texts) == [[9319, 2793], [9016]]
    assert gpt2.encode_ordinary_batch(texts) == enc.encode_ordinary_batch(texts)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs fifos")
def test_a_folder_walk_or_glob_skips_what_is_no_regular_file(tmp_path: Path) -> None:
    # A fifo in a corpus folder hung training for ever (Ctrl-C too; QA): nothing writes to
    # it. A socket blocks the same way, a symlink to nothing cannot be read. Found by a walk
    # or a glob they are skipped with a warning naming each; the regular files are the
    # corpus, as if the others were not there.
    import socket

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("low lower lowest\n", encoding="utf-8")
    os.mkfifo(docs / "b.fifo")
    (docs / "c.txt").symlink_to(tmp_path / "gone")
    (docs / "e.txt").symlink_to(docs / "f.txt")
    (docs / "f.txt").symlink_to(docs / "e.txt")  # (a loop: QA)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(docs / "d.sock"))
    only = tmp_path / "only"
    only.mkdir()
    (only / "a.txt").write_text("low lower lowest\n", encoding="utf-8")
    want = bytepair.train(only, 262)
    try:
        for corpus in (docs, docs / "*", [docs], str(docs / "**")):
            with pytest.warns(UserWarning) as seen:
                got = bytepair.train(corpus, 262)
            assert got.merges == want.merges
            said = [str(w.message) for w in seen]
            # each once (a "**" glob matches an entry at every level above it)
            assert len(said) == 5, said
            for name, what in [
                ("b.fifo", "not a regular file (a fifo, socket or device); skipped"),
                ("d.sock", "not a regular file (a fifo, socket or device); skipped"),
                ("c.txt", "a symlink to nothing; skipped"),
                ("e.txt", "a symlink loop; skipped"),
                ("f.txt", "a symlink loop; skipped"),
            ]:
                assert any(m.startswith(f"{docs / name}: {what}") for m in said), (name, said)
            # (the warning points at the caller's line, not into bytepair)
            assert all(w.filename == __file__ for w in seen)
    finally:
        sock.close()
    # a folder of nothing but a fifo holds no files; named alone, a fifo is a stream
    lone = tmp_path / "lone"
    lone.mkdir()
    os.mkfifo(lone / "p")
    with (
        pytest.warns(UserWarning, match="not a regular file"),
        pytest.raises(OSError, match="the folder holds no files"),
    ):
        bytepair.train(lone, 262)
    writer = subprocess.Popen(
        [sys.executable, "-c", f"open({str(lone / 'p')!r}, 'w').write('low lower lowest\\n')"]
    )
    try:
        assert bytepair.train(lone / "p", 262).merges == want.merges
    finally:
        writer.wait(timeout=60)


def test_a_long_special_token_of_one_character_builds_and_matches(tmp_path: Path) -> None:
    # (QA: a special token of one character repeated took time growing with the square of
    # its length to build, in `Tokenizer`, `train` and `load`: "x" * 30_000 3.6 s, a million
    # never finished, and Ctrl-C waited; tiktoken refuses it)
    long = "x" * 1_000_000
    byte_vocab = {i: bytes([i]) for i in range(256)}
    tok = bytepair.Tokenizer(byte_vocab, [], special_tokens=[long, "xx"])
    ids = tok.encode("a" + long + "xxxb", allowed_special="all")
    # leftmost, longest: the long one, then "xx", then the last x as text
    assert ids == [97, tok.special_tokens[long], tok.special_tokens["xx"], 120, 98]
    assert tok.decode(ids) == "a" + long + "xxxb"
    tok.save(tmp_path / "long.json")
    assert bytepair.load(tmp_path / "long.json").encode(long, allowed_special="all") == [
        tok.special_tokens[long]
    ]
    trained = bytepair.train(iter(["the cat " * 100]), vocab_size=300, special_tokens=[long])
    assert trained.encode(" cat" + long, allowed_special="all")[-1] == trained.special_tokens[long]
