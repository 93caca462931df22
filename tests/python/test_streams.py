"""Inputs that can be read only once: pipes (``/dev/fd/N``, a shell's ``<(command)``), fifos
and stdin. Each must give exactly what the same bytes give as a regular file (the oracle: the
regular file, read by the Rust counter or by ``iter_chunks``), and a fifo is opened once (a
second open would wait for a writer forever). Found by QA: the format detection read the
first bytes and the input was then opened again, losing them."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import bytepair
from bytepair import cli, inputs
from bytepair.ids import encode_to_file
from bytepair.inputs import iter_chunks

EOT = "<|endoftext|>"
CLI = [sys.executable, "-m", "bytepair"]
COMPRESSORS = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@pytest.fixture(scope="module")
def corpus(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1.5 MB of English (more than one 1 MiB read block), as a regular file."""
    with open(data_dir / "corpora" / "english_gutenberg.txt", "rb") as f:
        data = f.read(1_500_000)
    text = data.decode("utf-8", "ignore") + "\nfin ✓\n"
    path = tmp_path_factory.mktemp("streams") / "corpus.txt"
    path.write_text(text, encoding="utf-8", newline="")
    return path


@pytest.fixture(scope="module")
def tok(corpus: Path) -> bytepair.Tokenizer:
    return bytepair.train(corpus, 400, special_tokens=[EOT], progress=False)


def _writer(open_target: object, data: bytes, pause_after: int) -> threading.Thread:
    """A thread writing ``data`` (the first ``pause_after`` bytes, a pause, the rest), so
    the reader's first read gets only part of the magic bytes."""

    def write() -> None:
        try:
            with open(open_target, "wb", buffering=0) as f:  # type: ignore[call-overload]
                if pause_after:
                    f.write(data[:pause_after])
                    time.sleep(0.1)
                f.write(data[pause_after:])
        except (BrokenPipeError, OSError):
            pass  # the reader stopped early: the test fails on what it read

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def pipe_path(data: bytes, pause_after: int = 0) -> Iterator[str]:
    """``/dev/fd/N`` of a pipe that a thread fills with ``data``, as ``<(command)`` gives."""
    r, w = os.pipe()
    thread = _writer(w, data, pause_after)
    try:
        yield f"/dev/fd/{r}"
    finally:
        os.close(r)  # a writer still blocked gets a broken pipe
        thread.join(10)


@contextlib.contextmanager
def fifo_path(folder: Path, data: bytes, name: str = "fifo") -> Iterator[str]:
    """A fifo that a thread opens and fills with ``data``."""
    path = folder / name
    os.mkfifo(path)
    thread = _writer(str(path), data, 0)
    try:
        yield str(path)
    finally:
        unblock_fifo(path)
        thread.join(10)


def unblock_fifo(path: str | Path) -> None:
    """Lets a writer or reader still waiting in open() on the fifo through."""
    for flags in (os.O_RDONLY, os.O_WRONLY):
        with contextlib.suppress(OSError):
            os.close(os.open(path, flags | os.O_NONBLOCK))


def read_fifo_within(seconds: float, path: str, **kwargs: object) -> list[tuple[str, bool]]:
    """``list(iter_chunks(path))``, failing (not hanging) if it is still at it after
    ``seconds``: a fifo opened a second time waits for a writer that never comes."""
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["chunks"] = list(iter_chunks(path, **kwargs))  # type: ignore[arg-type]
        except Exception as e:
            out["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        unblock_fifo(path)
        thread.join(10)
        pytest.fail(f"{path}: still reading after {seconds} s (opened twice?)")
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["chunks"]  # type: ignore[return-value]


def ids_of(line: str) -> list[int]:
    return [int(x) for x in line.split()]


def test_pipes_and_fifos_are_streams_and_their_format_is_not_read(
    corpus: Path, tmp_path: Path
) -> None:
    data = gzip.compress(b"some text\n")
    with pipe_path(data) as p:
        assert inputs.is_stream(p)
        assert inputs.file_format(p) == (None, "text")  # nothing read, so nothing lost
        assert [t for t, _ in iter_chunks(p)] == ["some text\n"]
    assert not inputs.is_stream(corpus)
    assert not inputs.is_stream(tmp_path)
    assert not inputs.is_stream(tmp_path / "missing")
    with fifo_path(tmp_path, b"x", "a.jsonl") as f:
        assert inputs.is_stream(f)
        assert inputs.file_format(f) == (None, "jsonl")
        with pytest.raises(ValueError, match=r"a\.jsonl, line 1: not valid JSON"):
            read_fifo_within(20, f)


def test_count_and_train_of_a_pipe_equal_the_regular_file(corpus: Path) -> None:
    data = corpus.read_bytes()
    expected = bytepair.count(corpus, progress=False)
    with pipe_path(data, pause_after=3) as p:
        got = bytepair.count(p, progress=False)
    assert got.total() == expected.total()
    assert got == expected
    # a pipe between two regular files, as `bytepair train a <(cmd) b` gives
    with pipe_path(data) as p:
        got = bytepair.count([corpus, p, corpus], progress=False)
    assert got == expected + expected + expected

    want = bytepair.train(corpus, 600, special_tokens=[EOT], progress=False)
    with pipe_path(data) as p:
        trained = bytepair.train(p, 600, special_tokens=[EOT], progress=False)
    assert trained.merges == want.merges
    assert trained.vocab == want.vocab


@pytest.mark.parametrize("kind", [*COMPRESSORS, "zstd"])
def test_a_compressed_stream_is_read_like_the_compressed_file(
    kind: str, corpus: Path, tmp_path: Path
) -> None:
    text = corpus.read_bytes()[:300_000]
    if kind == "zstd":
        zstandard = pytest.importorskip("zstandard")
        data = zstandard.ZstdCompressor().compress(text)
    else:
        data = COMPRESSORS[kind](text)
    regular = tmp_path / f"c.{kind}"
    regular.write_bytes(data)
    expected = list(iter_chunks(regular))
    assert "".join(t for t, _ in expected) == text.decode("utf-8")
    # the magic bytes come in two reads: 3 bytes, then the rest
    with pipe_path(data, pause_after=3) as p:
        assert list(iter_chunks(p)) == expected
    with pipe_path(data) as p:
        assert bytepair.count(p, progress=False) == bytepair.count(regular, progress=False)


def test_jsonl_and_parquet_streams_are_read_like_the_files(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    docs = ["first doc ✓", "", "second\n\ndoc"]
    jsonl = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()
    with fifo_path(tmp_path, gzip.compress(jsonl), "docs.jsonl.gz") as f:
        assert [t for t, _ in read_fifo_within(20, f)] == docs
    buf = io.BytesIO()
    pq.write_table(pa.table({"text": docs}), buf)
    with pipe_path(buf.getvalue()) as p:  # no name: recognised by its PAR1 magic
        assert [t for t, _ in iter_chunks(p)] == docs


def test_encode_to_file_of_pipes_equals_the_regular_files(
    corpus: Path, tok: bytepair.Tokenizer, tmp_path: Path
) -> None:
    data = corpus.read_bytes()
    small = tmp_path / "small.txt"
    small.write_bytes(b"one small document\n")
    encode_to_file(tok, [corpus, small], tmp_path / "want.npy", eot=EOT, progress=False)
    want = np.load(tmp_path / "want.npy")
    assert want.tolist().count(tok.eot_token) == 2
    with pipe_path(data, pause_after=1) as a, pipe_path(small.read_bytes()) as b:
        encode_to_file(tok, [a, b], tmp_path / "got.npy", eot=EOT, progress=False)
    assert np.array_equal(np.load(tmp_path / "got.npy"), want)


def test_cli_encode_of_two_pipes_prints_each_document(
    tok: bytepair.Tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok.save(tmp_path / "tok.json")
    with pipe_path(b"a\n") as a, pipe_path(b"b\n") as b:
        assert cli.main(["encode", "-t", str(tmp_path / "tok.json"), a, b]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ids_of(line) for line in lines] == [tok.encode("a\n"), tok.encode("b\n")]


@pytest.mark.parametrize("args", [[], ["-"]])
def test_cli_encode_eot_of_stdin_ends_with_the_eot_id(
    args: list[str], tok: bytepair.Tokenizer, tmp_path: Path
) -> None:
    tok.save(tmp_path / "tok.json")
    text = "hello world\nsecond line ✓\n"
    expected = [*tok.encode(text), tok.eot_token]
    cmd = [*CLI, "encode", "-t", str(tmp_path / "tok.json"), *args, "--eot"]
    done = subprocess.run(cmd, input=text.encode(), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert ids_of(done.stdout.decode()) == expected
    # the same as for a file, and gzip on stdin is read as a gzip file is
    (tmp_path / "t.txt").write_text(text, encoding="utf-8", newline="")
    file_cmd = [*CLI, "encode", "-t", str(tmp_path / "tok.json"), str(tmp_path / "t.txt")]
    assert ids_of(subprocess.run([*file_cmd, "--eot"], capture_output=True).stdout.decode()) == (
        expected
    )
    done = subprocess.run(cmd, input=gzip.compress(text.encode()), capture_output=True, timeout=120)
    assert ids_of(done.stdout.decode()) == expected
    if args:  # stdin among other inputs stays an error
        mixed = [*cmd[:-1], str(tmp_path / "t.txt"), "--eot"]
        done = subprocess.run(mixed, input=b"x", capture_output=True, timeout=120)
        assert done.returncode == 1
        assert b"stdin (-) can only be encoded alone" in done.stderr


def test_cli_on_a_fifo_finishes_and_reads_it_whole(
    corpus: Path, tok: bytepair.Tokenizer, tmp_path: Path
) -> None:
    data = corpus.read_bytes()
    out = tmp_path / "t.json"
    with fifo_path(tmp_path, data) as f:
        cmd = [*CLI, "train", f, "--vocab-size", "300", "-o", str(out), "--no-progress"]
        done = subprocess.run(cmd, capture_output=True, timeout=30)  # used to hang
    assert done.returncode == 0, done.stderr
    assert bytepair.load(out).merges == bytepair.train(corpus, 300, progress=False).merges

    tok.save(tmp_path / "tok.json")
    text = "hello world\n"
    with fifo_path(tmp_path, text.encode(), "fifo2") as f:
        cmd = [*CLI, "encode", "-t", str(tmp_path / "tok.json"), f, "--eot"]
        done = subprocess.run(cmd, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert ids_of(done.stdout.decode()) == [*tok.encode(text), tok.eot_token]


def test_cli_waiting_for_a_fifo_writer_stops_on_ctrl_c(tmp_path: Path) -> None:
    # not a regression of the double open (the first open was Python's already): a fifo
    # nobody writes to must stay interruptible, as Python's open() is
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cmd = [*CLI, "train", str(fifo), "--vocab-size", "260", "-o", str(tmp_path / "t.json")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(2.0)  # started and waiting in open()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        unblock_fifo(fifo)
    assert proc.returncode != 0
    assert b"interrupted" in err or b"KeyboardInterrupt" in err  # (a slow start)
    assert not (tmp_path / "t.json").exists()
