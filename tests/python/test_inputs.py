"""bytepair.inputs.iter_chunks: every input kind, chunking, compression, bad input.

Oracles: Python's own ``bytes.decode`` on the whole file (chunked decoding must give the same
text and the same error offset), and a line-by-line reference for blank-line documents.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import inputs, train
from bytepair.inputs import CorpusDecodeError, iter_chunks

# compressed formats and parquet, recognised by their first bytes
MAGICS = (b"\x1f\x8b", b"(\xb5/\xfd", b"BZh", b"\xfd7zXZ\x00", b"PAR1")


def docs_of(chunks) -> list[str]:
    """Joins chunks into documents (asserting that the last chunk of a document is empty
    only when the whole document is)."""
    out, cur = [], []
    for text, ends in chunks:
        assert isinstance(text, str)
        cur.append(text)
        if ends:
            assert text or not "".join(cur), "a non-empty document ended with an empty chunk"
            out.append("".join(cur))
            cur = []
    assert not cur, "the stream ended inside a document"
    return out


def ref_blank_line_docs(text: str) -> list[str]:
    """Documents separated by blank lines, by the documented rule, one line at a time."""
    docs, cur = [], []
    for line in re.findall(r"[^\n]*\n|[^\n]+$", text):
        if not line.strip():
            if cur:
                docs.append("".join(cur))
            cur = []
        else:
            cur.append(line)
    if cur:
        docs.append("".join(cur))
    return docs


@pytest.fixture
def small_chunks(monkeypatch):
    """Makes chunks tiny so that every boundary case is hit on small inputs."""

    def set_size(n: int) -> None:
        monkeypatch.setattr(inputs, "CHUNK_BYTES", n)
        monkeypatch.setattr(inputs, "CHUNK_CHARS", n)

    return set_size


# ---------------------------------------------------------------- in-memory texts


def test_iterable_of_texts_one_document_each() -> None:
    assert list(iter_chunks(iter(["a b", "", "c"]))) == [("a b", True), ("", True), ("c", True)]
    assert list(iter_chunks(x for x in ["x"])) == [("x", True)]


def test_long_text_is_cut_into_chunks(small_chunks) -> None:
    small_chunks(4)
    assert list(iter_chunks(iter(["abcdefghij", "xy"]))) == [
        ("abcd", False),
        ("efgh", False),
        ("ij", True),
        ("xy", True),
    ]


def test_non_str_items_and_bytes_are_type_errors() -> None:
    with pytest.raises(TypeError, match=r"bytes \(item 1\)"):
        list(iter_chunks(iter(["ok", b"bad"])))
    with pytest.raises(TypeError, match="not bytes"):
        iter_chunks(b"some bytes")
    # a number is neither a path nor texts: said the same way, by train too
    message = "inputs must be a path, a list of paths or an iterable of str, not int"
    with pytest.raises(TypeError, match=message):
        iter_chunks(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=message):
        train(5, 300)  # type: ignore[arg-type]


def test_bad_errors_value() -> None:
    # every accepted value named (QA: 'ignore', accepted, was missing from the message)
    message = "errors must be one of 'strict', 'replace', 'skip', 'ignore', got 'bogus'"
    with pytest.raises(ValueError, match=re.escape(message)):
        iter_chunks(iter(["x"]), errors="bogus")


# ---------------------------------------------------------------- plain text files


def test_plain_file_is_one_document_in_1mb_chunks(tmp_path: Path) -> None:
    # 3-byte characters over 2.5 MiB: blocks end inside characters, which must not be split
    text = ("héllo wörld €uro 中文 " * 150_000)[:2_500_000]
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    chunks = list(iter_chunks(path))
    assert len(chunks) > 2
    assert [e for _, e in chunks] == [False] * (len(chunks) - 1) + [True]
    assert all(len(c.encode()) <= inputs.CHUNK_BYTES for c, _ in chunks)
    assert "".join(c for c, _ in chunks) == text


def test_empty_file_is_one_empty_document(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    assert list(iter_chunks(tmp_path / "e.txt")) == [("", True)]


@given(
    data=st.lists(
        st.sampled_from([b"a", b" ", b"\n", "é".encode(), "€".encode(), "😀".encode(), b"\xff"]),
        max_size=40,
    ).map(b"".join)
    | st.binary(max_size=40).filter(lambda b: not b.startswith(MAGICS)),
    size=st.integers(1, 9),
    errors=st.sampled_from(["replace", "skip"]),
)
def test_chunked_decoding_equals_whole_file_decoding(tmp_path_factory, data, size, errors) -> None:
    path = tmp_path_factory.mktemp("d") / "f.txt"
    path.write_bytes(data)
    saved = inputs.CHUNK_BYTES
    inputs.CHUNK_BYTES = size
    try:
        got = docs_of(iter_chunks(path, errors=errors))
        with pytest.raises(CorpusDecodeError) if _invalid(data) else _no_error() as raised:
            strict = docs_of(iter_chunks(path))
    finally:
        inputs.CHUNK_BYTES = saved
    py_errors = "ignore" if errors == "skip" else errors
    assert got == [data.decode("utf-8", py_errors)]
    if raised is None:
        assert strict == [data.decode("utf-8")]
    else:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            assert raised.value.offset == e.start


def _invalid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


class _no_error:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_invalid_utf8_names_file_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"x" * 3_000_000 + b"ok \xff\xfe tail")
    with pytest.raises(ValueError, match=r"bad\.txt: invalid UTF-8 at byte offset 3000003") as e:
        list(iter_chunks(path))
    assert isinstance(e.value, UnicodeDecodeError)
    assert e.value.path == str(path) and e.value.offset == 3_000_003
    assert "".join(c for c, _ in iter_chunks(path, errors="replace")).endswith(
        "ok \ufffd\ufffd tail"
    )
    assert "".join(c for c, _ in iter_chunks(path, errors="skip")).endswith("ok  tail")


# ---------------------------------------------------------------- blank-line documents


def test_blank_line_documents_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "docs.txt"
    path.write_text("\n\nfirst doc\nline two\n\n  \t\nsecond\r\n\r\nthird\n\n\n", encoding="utf-8")
    assert docs_of(iter_chunks(path, blank_line_docs=True)) == [
        "first doc\nline two\n",
        "second\r\n",
        "third\n",
    ]
    path.write_text("only\n   ", encoding="utf-8")  # a last blank line without its newline
    assert docs_of(iter_chunks(path, blank_line_docs=True)) == ["only\n"]
    # a flag, not any truthy value (QA: "yes" was read as True, so "no" would have been too)
    for bad in ("no", "yes", 1, None):
        with pytest.raises(TypeError, match="^blank_line_docs must be True or False, not "):
            iter_chunks(path, blank_line_docs=bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="^blank_line_docs must be True or False"):
            bytepair.encode_to_file(
                bytepair.train(iter(["ab"]), 257), path, tmp_path / "x.npy", blank_line_docs=bad
            )
    assert sorted(os.listdir(tmp_path)) == ["docs.txt"]


@given(
    lines=st.lists(
        st.text(alphabet="ab \t\r\u3000", max_size=12).map(lambda s: s + "\n"), max_size=25
    ),
    last=st.text(alphabet="ab \r", max_size=5),
    size=st.integers(1, 16),
)
def test_blank_line_documents_match_line_reference(tmp_path_factory, lines, last, size) -> None:
    text = "".join(lines) + last
    path = tmp_path_factory.mktemp("b") / "f.txt"
    path.write_bytes(text.encode())
    saved = inputs.CHUNK_BYTES
    inputs.CHUNK_BYTES = size
    try:
        got = docs_of(iter_chunks(path, blank_line_docs=True))
    finally:
        inputs.CHUNK_BYTES = saved
    assert got == ref_blank_line_docs(text)


def test_blank_line_documents_on_a_real_corpus(data_dir: Path) -> None:
    path = data_dir / "corpora" / "python_stdlib.txt"  # 31 MB: many 1 MiB blocks
    docs = docs_of(iter_chunks(path, blank_line_docs=True))
    assert len(docs) > 10_000
    assert docs == ref_blank_line_docs(path.read_bytes().decode())


# ---------------------------------------------------------------- compression


def _compressors():
    zstandard = pytest.importorskip("zstandard")
    return {
        "gzip": gzip.compress,
        "bz2": bz2.compress,
        "xz": lzma.compress,
        "zstd": lambda b: zstandard.ZstdCompressor().compress(b),
    }


@pytest.mark.parametrize("kind", ["gzip", "bz2", "xz", "zstd"])
def test_compressed_files_found_by_magic_bytes(tmp_path: Path, kind: str) -> None:
    raw = ("ünïcode text\n" * 200_000).encode()
    packed = _compressors()[kind](raw)
    for name in ["corpus.txt", f"corpus.{kind}"]:  # the suffix does not matter
        path = tmp_path / name
        path.write_bytes(packed)
        assert inputs.file_format(path) == (kind, "text")
        assert "".join(c for c, _ in iter_chunks(path)) == raw.decode()


def test_multi_frame_zstd_and_gzip(tmp_path: Path) -> None:
    comp = _compressors()
    for kind in ["gzip", "zstd"]:
        path = tmp_path / f"multi.{kind}"
        path.write_bytes(comp[kind](b"first frame ") + comp[kind](b"second frame"))
        assert docs_of(iter_chunks(path)) == ["first frame second frame"]


def test_invalid_utf8_offset_in_compressed_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress(b"abc\n" * 1000 + b"\xc3("))
    with pytest.raises(CorpusDecodeError, match="byte offset 4000"):
        list(iter_chunks(path))


def test_truncated_gzip_is_an_oserror_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.gz"
    path.write_bytes(gzip.compress(b"some text " * 10_000)[:-40])
    with pytest.raises(OSError, match="cut.gz"):
        list(iter_chunks(path))


# ---------------------------------------------------------------- jsonl and parquet


def test_jsonl_one_document_per_line(tmp_path: Path) -> None:
    rows = [{"text": "first\n\ndoc", "id": 1}, {"text": ""}, {"text": "ü😀", "other": "x"}]
    body = "\n".join(json.dumps(r) for r in rows) + "\n\n"
    (tmp_path / "a.jsonl").write_text(body, encoding="utf-8")
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(body.encode()))
    expect = ["first\n\ndoc", "", "ü😀"]
    assert docs_of(iter_chunks(tmp_path / "a.jsonl")) == expect
    assert docs_of(iter_chunks(tmp_path / "b.jsonl.gz")) == expect
    (tmp_path / "c.jsonl").write_text('{"content": "x"}\n', encoding="utf-8")
    assert docs_of(iter_chunks(tmp_path / "c.jsonl", text_field="content")) == ["x"]


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", r"line 2: not valid JSON"),
        ("[1, 2]", r"line 2: expected a JSON object, got list"),
        ('{"body": "x"}', r"line 2: no key 'text' \(keys: 'body'\)"),
        ('{"text": 5}', r"line 2: 'text' must be a string, got int"),
    ],
)
def test_bad_jsonl_lines_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl, " + message):
        list(iter_chunks(path))


def test_jsonl_invalid_utf8_names_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "b\xffd"}\n')
    with pytest.raises(CorpusDecodeError) as e:
        list(iter_chunks(path))
    assert str(e.value) == (
        f"{path}: invalid UTF-8 at byte offset 26 (byte 0xff, line 2): invalid start byte; "
        "pass errors='replace' or errors='skip' to read it anyway"
    )
    assert docs_of(iter_chunks(path, errors="replace")) == ["ok", "b\ufffdd"]
    # compressed: the offset is in the decompressed text, and says so
    gz = tmp_path / "bad.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(CorpusDecodeError) as e:
        list(iter_chunks(gz))
    assert "byte offset 26 of the decompressed text (byte 0xff, line 2)" in str(e.value)


def test_jsonl_lone_surrogate_is_dealt_with_as_invalid_utf8(tmp_path: Path) -> None:
    # "\ud800" alone in a JSON string is valid JSON but no character (QA: it became U+FFFD
    # silently, even with errors="strict"); escaped pairs and characters are text
    path = tmp_path / "s.jsonl"
    lines = [
        r'{"text": "pair \ud83d\ude00 ok \u00e9"}',
        r'{"text": "ab\udc00c\ud800", "id": "\ud800"}',
        r'{"text": "\ud800"}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as e:
        list(iter_chunks(path))
    assert str(e.value) == (
        f"{path}, line 2: a lone surrogate \\udc00 at character 2 of the text (escaped in "
        "JSON, it is no character); pass errors='replace' or errors='skip' to read it anyway"
    )
    assert docs_of(iter_chunks(path, errors="replace")) == [
        "pair \U0001f600 ok \u00e9",
        "ab\ufffdc\ufffd",
        "\ufffd",
    ]
    for errors in ("skip", "ignore"):
        assert docs_of(iter_chunks(path, errors=errors)) == ["pair \U0001f600 ok \u00e9", "abc", ""]
    # a surrogate outside the text field is no matter
    (tmp_path / "t.jsonl").write_text(r'{"id": "\ud800", "text": "x"}' + "\n", encoding="utf-8")
    assert docs_of(iter_chunks(tmp_path / "t.jsonl")) == ["x"]


def test_parquet_column_in_batches(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    texts = [f"row {i} ü" for i in range(3000)] + [None, "last"]
    table = pa.table({"id": list(range(len(texts))), "content": texts})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=700)
    assert docs_of(iter_chunks(path, text_field="content")) == [t for t in texts if t is not None]
    with pytest.raises(
        ValueError, match=r"t\.parquet: no column 'text' \(columns: 'id', 'content'"
    ):
        list(iter_chunks(path))
    with pytest.raises(ValueError, match="column 'id' holds int64, not strings"):
        list(iter_chunks(path, text_field="id"))
    renamed = tmp_path / "noext"  # found by the PAR1 magic
    renamed.write_bytes(path.read_bytes())
    assert inputs.file_format(renamed) == (None, "parquet")


def test_corrupt_parquet_is_a_value_error(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ValueError, match="broken.parquet: not a valid parquet file"):
        list(iter_chunks(path))


# ---------------------------------------------------------------- paths, folders, globs


def test_folders_globs_and_lists(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "b.txt").write_text("B", encoding="utf-8")
    (tmp_path / "a.txt").write_text("A", encoding="utf-8")
    (tmp_path / "sub" / "c.jsonl").write_text('{"text": "C"}\n', encoding="utf-8")
    (tmp_path / "sub" / "deeper" / "d.txt.gz").write_bytes(gzip.compress(b"D"))
    assert docs_of(iter_chunks(tmp_path)) == ["A", "B", "C", "D"]
    assert docs_of(iter_chunks(str(tmp_path / "*.txt"))) == ["A", "B"]
    assert docs_of(iter_chunks(str(tmp_path / "**" / "*.txt*"))) == ["A", "B", "D"]
    assert docs_of(iter_chunks([tmp_path / "b.txt", str(tmp_path / "sub")])) == ["B", "C", "D"]
    assert inputs.expand_paths(iter(["text"])) is None


def test_folders_skip_hidden_files_and_globs_list_each_file_once(tmp_path: Path) -> None:
    (tmp_path / "corpus" / ".git" / "objects").mkdir(parents=True)
    (tmp_path / "corpus" / ".git" / "objects" / "ab").write_bytes(b"\x78\x9c\xff")
    (tmp_path / "corpus" / ".DS_Store").write_bytes(b"\x00\x01")
    (tmp_path / "corpus" / "a.txt").write_text("A", encoding="utf-8")
    (tmp_path / "corpus" / "sub").mkdir()
    (tmp_path / "corpus" / "sub" / "b.txt").write_text("B", encoding="utf-8")
    (tmp_path / "corpus" / "sub" / "loop").symlink_to(tmp_path / "corpus")  # a folder loop
    assert docs_of(iter_chunks(tmp_path / "corpus")) == ["A", "B"]
    assert docs_of(iter_chunks(str(tmp_path / "corpus" / "**" / "*.txt"))) == ["A", "B"]
    # named explicitly, a hidden file is read
    (tmp_path / "corpus" / ".notes.txt").write_text("N", encoding="utf-8")
    assert docs_of(iter_chunks(tmp_path / "corpus" / ".notes.txt")) == ["N"]


def test_missing_paths_and_empty_globs(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="No such file") as e:
        iter_chunks(tmp_path / "missing.txt")
    assert e.value.filename == str(tmp_path / "missing.txt")
    with pytest.raises(FileNotFoundError, match="No file matches the glob"):
        iter_chunks(str(tmp_path / "*.nothing"))
    with pytest.raises(FileNotFoundError, match="pass iter"):
        iter_chunks(["this is a document, not a path"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(OSError, match="empty: the folder holds no files"):
        iter_chunks(tmp_path / "empty")
