"""Reading training corpora: files, folders, globs, compressed files, jsonl, parquet, iterators.

``iter_chunks`` turns any supported input into a stream of ``(text, ends_document)`` pairs of
bounded size, so a corpus larger than memory can be counted in one pass. A document is the
unit a pre-token never crosses: a whole plain-text file (or, with ``blank_line_docs``, one
blank-line-separated block of it), one jsonl line, one parquet row, one item of an iterator.

>>> list(iter_chunks(iter(["one document", "another"])))
[('one document', True), ('another', True)]
"""

from __future__ import annotations

import bz2
import errno
import glob
import gzip
import io
import json
import lzma
import os
import re
import stat
import warnings
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, Any, Union

from ._checks import caller_level, refuse_mapping
from .formats._io import names_a_file_as_folder

__all__ = [
    "CorpusDecodeError",
    "expand_paths",
    "file_format",
    "is_stream",
    "iter_chunks",
    "open_decompressed",
]

PathLike = Union[str, "os.PathLike[str]"]

# bytes of a file decoded at a time, so a chunk holds about 1 MB of text
CHUNK_BYTES = 1 << 20
# characters of one in-memory document handed out at a time
CHUNK_CHARS = 1 << 20

_ERRORS = ("strict", "replace", "skip", "ignore")
_GLOB_CHARS = re.compile(r"[*?\[]")
# magic bytes of the compressed formats understood (stdlib, plus zstandard when installed)
_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
}
# "BZh", the block size digit, then a block or the end-of-stream magic
_BZ2_BLOCK = re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)")
_COMPRESSED_SUFFIXES = (".gz", ".gzip", ".zst", ".zstd", ".bz2", ".xz")
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
# bytes at the start of a file that the format detection looks at
_HEAD_BYTES = 10
# a run of blank lines (empty or whitespace only), starting at a line start
_BLANK_LINES = re.compile(r"^(?:[^\S\n]*\n)+", re.MULTILINE)
# a JSON escape of a surrogate (of a pair, or alone), and a surrogate left alone in a str
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# hints in messages for Python callers (the command line words them as its flags)
_PATHS_HINT = " (a list or tuple is read as paths; pass iter(texts) for in-memory texts)"
_TEXT_FIELD_HINT = "; pass text_field= to pick another"
_ERRORS_HINT = "; pass errors='replace' or errors='skip' to read it anyway"


class CorpusDecodeError(UnicodeDecodeError):
    """Invalid UTF-8 in a corpus file (a ``ValueError``): names the file and byte offset.

    Attributes:
        path: the file.
        offset: byte offset of the first invalid byte (in the decompressed data for a
            compressed file).
        line: for jsonl files, the 1-based line number, else None.
    """

    def __init__(
        self, path: str, offset: int, bad: bytes, reason: str, line: int | None = None
    ) -> None:
        # (object[start:end] is the bad sequence, as Python's own error gives it)
        super().__init__("utf-8", bad, 0, len(bad), reason)
        self.path = path
        self.offset = offset
        self.line = line

    def __str__(self) -> str:
        where = f", line {self.line}" if self.line is not None else ""
        of = " of the decompressed text" if self.path.endswith(_COMPRESSED_SUFFIXES) else ""
        byte = f"byte 0x{self.object[0]:02x}" if self.object else "no byte"
        return (
            f"{self.path}: invalid UTF-8 at byte offset {self.offset}{of} ({byte}{where}): "
            f"{self.reason}" + _ERRORS_HINT
        )

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.path, self.offset, self.object, self.reason, self.line))


def iter_chunks(
    inputs: PathLike | Iterable[PathLike] | Iterable[str],
    *,
    text_field: str = "text",
    errors: str = "strict",
    blank_line_docs: bool = False,
) -> Iterator[tuple[str, bool]]:
    """Streams the text of a corpus as ``(chunk, ends_document)`` pairs, in bounded memory.

    What ``inputs`` may be:

    - a path (``str`` or ``os.PathLike``) to a file, or to a directory (every file under it,
      recursively, in sorted path order, but hidden ones: ``.git``, ``.DS_Store``, ...);
    - a glob pattern (``"data/*.jsonl.gz"``, ``"**"`` recursive), when no file has that exact
      name: the matches in sorted order (an error if there are none);
    - a ``list`` or ``tuple`` of those (in the order given);
    - any other iterable of ``str`` (a generator, ``iter(texts)``, a HF ``datasets`` column):
      each item is one document.

    Files: the compression is recognised by its magic bytes (gzip, zstd with the
    ``zstandard`` package, bz2, xz), whatever the name; the format by the name once any
    compression suffix is dropped: ``.jsonl``/``.ndjson`` (one JSON object per line, the
    document is its ``text_field`` string; blank lines are skipped), ``.parquet`` (or the
    ``PAR1`` magic; column ``text_field`` read in record batches with pyarrow; null rows
    are skipped), anything else is UTF-8 plain text: one document per file, or with
    ``blank_line_docs=True`` one document per block of lines separated by one or more blank
    lines (lines that are empty or hold only whitespace; those lines are dropped, a document
    keeps the newline of its own last line; empty documents are skipped; a whitespace-only
    line longer than 16 MiB counts as text).

    Pipes, fifos and devices (``/dev/stdin``, a shell's ``<(command)``; see ``is_stream``)
    are opened once and read as they come, never reopened: the compression is recognised
    from the first bytes read, the format from the name (or the ``PAR1`` magic). A parquet
    stream is read whole into memory first (parquet needs seeking).

    Chunks: a plain-text file (or document) comes in chunks of about ``CHUNK_BYTES`` (1 MiB)
    of UTF-8, cut anywhere (inside a word, but never inside a character); a long in-memory
    document in pieces of ``CHUNK_CHARS`` characters. The last chunk of each document has
    ``ends_document=True`` and is empty only if the document is. Memory stays bounded by
    the chunk size whatever the file size (a jsonl line or parquet row is held whole).

    Args:
        inputs: see above.
        text_field: the JSON key / parquet column holding the text.
        errors: invalid UTF-8 in a file: ``"strict"`` raises ``CorpusDecodeError`` (a
            ``ValueError``) naming the file and byte offset; ``"replace"`` turns each bad
            sequence into U+FFFD (as ``bytes.decode(errors="replace")``); ``"skip"`` (or
            ``"ignore"``) drops the bad bytes. A lone surrogate escaped in a jsonl string
            (``"\\ud800"``) is dealt with alike (strict: ``ValueError``).
        blank_line_docs: split plain-text files into documents at blank lines.

    Yields:
        ``(text, ends_document)``.

    Raises:
        FileNotFoundError: a path does not exist, or a glob pattern matches nothing.
        OSError: a file cannot be read, a compressed file is corrupt or truncated, or a
            folder holds no files.
        CorpusDecodeError: invalid UTF-8 with ``errors="strict"``.
        ValueError: a bad jsonl line (not JSON, not an object, ``text_field`` missing or not
            a string: the message names the file, line and key), a parquet file without
            the column, or a bad ``errors`` value.
        TypeError: an item of an iterator is not a ``str``; ``inputs`` is ``bytes`` or a
            dict (any mapping: its keys are not taken as the documents); ``blank_line_docs``
            is not a ``bool``.
        ImportError: a zstd or parquet file without ``zstandard`` / ``pyarrow`` installed.
    """
    errors = _check_errors(errors)
    if not isinstance(blank_line_docs, bool):  # (QA: "yes" was true, and "no" would be too)
        raise TypeError(
            f"blank_line_docs must be True or False, not {type(blank_line_docs).__name__}"
        )
    paths = expand_paths(inputs)
    if paths is None:
        return _iter_texts(inputs)  # type: ignore[arg-type]
    return _iter_files(paths, text_field, errors, blank_line_docs)


def expand_paths(inputs: object) -> list[str] | None:
    """The files named by ``inputs`` (see ``iter_chunks``), or None for an iterable of texts.

    Raises:
        FileNotFoundError: a path does not exist and is no glob pattern matching a file.
        TypeError: ``inputs`` is ``bytes``, a dict (any mapping), or not iterable.
    """
    what = "a path, a list of paths or an iterable of str"
    if isinstance(inputs, (bytes, bytearray)) or not (
        isinstance(inputs, (str, os.PathLike)) or hasattr(inputs, "__iter__")
    ):
        raise TypeError(f"inputs must be {what}, not {type(inputs).__name__}")
    # (encode_to_file({"a": 1}, ...) encoded the keys as the documents)
    refuse_mapping("inputs", inputs, what)
    if isinstance(inputs, (str, os.PathLike)):
        return _expand_one(inputs, hint="")
    if isinstance(inputs, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in inputs):
        out: list[str] = []
        for p in inputs:
            out.extend(_expand_one(p, _PATHS_HINT))
        return out
    return None


def _expand_one(path: PathLike, hint: str) -> list[str]:
    p = os.fspath(path)
    if os.path.isdir(p):
        files = _documents(_walk(p))
        if not files:
            raise OSError(f"{p}: the folder holds no files")
        return files
    if os.path.exists(p):
        return [p]
    if _GLOB_CHARS.search(p):
        found: list[str] = []
        for m in sorted(glob.glob(p, recursive=True)):
            found.extend(_walk(m) if os.path.isdir(m) else [m])
        # (each entry once before the check, so that one skipped is said once, not at each
        # level "**" matches)
        found = _documents(_once(found))
        if found:
            return found
        raise FileNotFoundError(2, "No file matches the glob pattern" + hint, p)
    if names_a_file_as_folder(p):
        # ("c.txt/": the file is there, as open() says; "No such file" misled, QA)
        raise NotADirectoryError(20, "Not a directory", p)
    raise FileNotFoundError(2, "No such file or directory" + hint, p)


def _raise(e: OSError) -> None:
    raise e


def _once(paths: list[str]) -> list[str]:
    """Each file once, however many ways a glob reached it (a symlinked folder loop)."""
    seen: set[str] = set()
    out = []
    for p in paths:
        real = os.path.realpath(p)
        if real not in seen:
            seen.add(real)
            out.append(p)
    return out


def _walk(folder: str) -> list[str]:
    out: list[str] = []
    # an unreadable subfolder is an error, not a silently smaller corpus
    for root, dirs, files in os.walk(folder, onerror=_raise):
        # hidden files and folders (.git, .DS_Store, editor backups) are not documents
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out.extend(os.path.join(root, f) for f in files if not f.startswith("."))
    return sorted(out)


def _documents(paths: list[str]) -> list[str]:
    """The regular files of ``paths`` that a folder walk or a glob found; the others are
    skipped with a warning: a fifo or a socket found there would block the read for ever
    (a fifo in a corpus folder hung training, Ctrl-C too; QA), a device such as a copy of
    ``/dev/zero`` has no end, and a symlink whose target is gone, or that leads back to
    itself, cannot be read. Named one by one, a fifo or a device is read as a stream
    (``is_stream``)."""
    out = []
    for p in paths:
        try:
            if stat.S_ISREG(os.stat(p).st_mode):
                out.append(p)
                continue
            why = "not a regular file (a fifo, socket or device); skipped; "
            why += "name it alone to read it as a stream"
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ELOOP):
                raise  # (not a silently smaller corpus)
            why = "a symlink to nothing" if e.errno == errno.ENOENT else "a symlink loop"
            why += "; skipped"
        warnings.warn(f"{p}: {why}", stacklevel=caller_level())
    return out


def file_format(path: PathLike) -> tuple[str | None, str]:
    """``(compression, format)`` of a corpus file: compression from the magic bytes
    (``"gzip"``, ``"zstd"``, ``"bz2"``, ``"xz"`` or None), format ``"text"``, ``"jsonl"`` or
    ``"parquet"`` from the name (parquet also from its ``PAR1`` magic).

    A pipe, fifo or device (see ``is_stream``) is not read, since what is read of it would
    be lost: its compression is None and its format comes from the name alone
    (``iter_chunks`` recognises a compressed stream from the bytes it reads).

    Raises:
        OSError: the file cannot be opened.
    """
    p = os.fspath(path)
    if is_stream(p):
        return _format_of(p, b"")
    with open(p, "rb") as f:
        head = f.read(_HEAD_BYTES)
    return _format_of(p, head)


def is_stream(path: PathLike) -> bool:
    """Whether ``path`` exists and is no regular file nor folder: a pipe, a fifo, a
    character device or a socket (``/dev/stdin``, a shell's ``<(command)``), which can be
    read only once, from its start to its end. ``iter_chunks`` opens such an input once
    and reads it in Python as a stream; it is never reopened."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _format_of(path: str, head: bytes) -> tuple[str | None, str]:
    """``file_format`` of a file named ``path`` that starts with ``head``."""
    compression = next((name for m, name in _MAGIC.items() if head.startswith(m)), None)
    if compression == "bz2" and not _BZ2_BLOCK.match(head):
        compression = None  # plain text that happens to start with "BZh"
    name = path.lower()
    while name.endswith(_COMPRESSED_SUFFIXES):
        name = name[: name.rindex(".")]
    if name.endswith(_JSONL_SUFFIXES):
        return compression, "jsonl"
    if name.endswith(".parquet") or (compression is None and head.startswith(b"PAR1")):
        return compression, "parquet"
    return compression, "text"


def open_decompressed(path: PathLike, compression: str | None) -> IO[bytes]:
    """A binary stream of the file's content, decompressed (see ``file_format``)."""
    p = os.fspath(path)
    return _decompressed(p, p, compression)


_OPENERS: dict[str, Any] = {  # the stdlib openers (overloaded, hence Any)
    "gzip": gzip.open,
    "bz2": bz2.open,
    "xz": lzma.open,
}


def _decompressed(source: str | IO[bytes], name: str, compression: str | None) -> IO[bytes]:
    """``source`` (a path, or a binary stream read from where it is) decompressed."""
    if compression in _OPENERS:
        return _OPENERS[compression](source, "rb")
    if compression == "zstd":
        try:
            import zstandard
        except ImportError as e:
            raise ImportError(
                f"{name} is zstd-compressed: install the 'zstandard' package "
                "(pip install 'bytepair[corpora]')"
            ) from e
        f = open(source, "rb") if isinstance(source, str) else source
        # buffered, for readline (jsonl)
        return io.BufferedReader(_ZstdReader(f, name, zstandard), CHUNK_BYTES)
    return open(source, "rb") if isinstance(source, str) else source


class _Prefixed(io.RawIOBase):
    """The bytes ``head`` already read from the stream ``f``, then the rest of ``f``."""

    def __init__(self, head: bytes, f: IO[bytes]) -> None:
        self._head, self._f = head, f

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._f.readinto(b)  # type: ignore[attr-defined]


class _ZstdReader(io.RawIOBase):
    """Decompresses a zstd file frame after frame, and says so when the file ends inside a
    frame: zstandard's stream reader returns the part it has without an error, which would
    count a truncated corpus as a shorter one."""

    def __init__(self, f: IO[bytes], path: str, zstandard: Any) -> None:
        self._f, self._path, self._zstd = f, path, zstandard
        self._obj = zstandard.ZstdDecompressor().decompressobj()
        self._fed = False  # bytes of the current frame were fed
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            data = self._f.read(CHUNK_BYTES)
            if not data:
                if self._fed:
                    raise OSError(f"{self._path}: truncated zstd data (the file ends in a frame)")
                return 0
            self._buf = self._feed(data)
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def _feed(self, data: bytes) -> bytes:
        out = []
        try:
            while data:
                self._fed = True
                out.append(self._obj.decompress(data))
                data = b""
                if self._obj.eof:  # a frame ended: the rest starts the next one
                    data = self._obj.unused_data
                    self._obj = self._zstd.ZstdDecompressor().decompressobj()
                    self._fed = False
        except self._zstd.ZstdError as e:
            raise OSError(f"{self._path}: corrupt zstd data: {e}") from None
        return b"".join(out)

    def close(self) -> None:
        self._f.close()
        super().close()


def _check_errors(errors: str) -> str:
    if errors not in _ERRORS:
        allowed = ", ".join(repr(e) for e in _ERRORS)
        raise ValueError(f"errors must be one of {allowed}, got {errors!r}")
    return "ignore" if errors == "skip" else errors


# ---------------------------------------------------------------------- in-memory texts


def _iter_texts(texts: Iterable[str]) -> Iterator[tuple[str, bool]]:
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts must be str, got {type(t).__name__} (item {i})")
        yield from _split_document(t)


def _split_document(t: str) -> Iterator[tuple[str, bool]]:
    if len(t) <= CHUNK_CHARS:
        yield t, True
        return
    for start in range(0, len(t), CHUNK_CHARS):
        yield t[start : start + CHUNK_CHARS], start + CHUNK_CHARS >= len(t)


# ---------------------------------------------------------------------- files


def _iter_files(
    paths: list[str], text_field: str, errors: str, blank_line_docs: bool
) -> Iterator[tuple[str, bool]]:
    for path in paths:
        if not is_stream(path):
            compression, fmt = file_format(path)
            yield from _iter_file(path, path, compression, fmt, text_field, errors, blank_line_docs)
            continue
        with open(path, "rb", buffering=0) as f:  # a pipe or fifo is opened once
            yield from _iter_stream(f, path, text_field, errors, blank_line_docs)


def _iter_stream(
    f: IO[bytes], name: str, text_field: str, errors: str, blank_line_docs: bool
) -> Iterator[tuple[str, bool]]:
    """The chunks of a binary stream read once from where it is (a pipe, stdin) as the
    file ``name`` would be read: the format is told from the first bytes, which are then
    read again from memory."""
    errors = _check_errors(errors)
    head = f.read(_HEAD_BYTES)
    while len(head) < _HEAD_BYTES and (more := f.read(_HEAD_BYTES - len(head))):
        head += more  # a pipe gives what its writer has written so far
    compression, fmt = _format_of(name, head)
    stream = io.BufferedReader(_Prefixed(head, f), CHUNK_BYTES)
    yield from _iter_file(stream, name, compression, fmt, text_field, errors, blank_line_docs)


def _iter_file(
    source: str | IO[bytes],
    path: str,
    compression: str | None,
    fmt: str,
    text_field: str,
    errors: str,
    blank_line_docs: bool,
) -> Iterator[tuple[str, bool]]:
    """The chunks of one file, read from ``source`` (its path, or a stream of it)."""
    if fmt == "parquet":
        if compression is not None:
            raise ValueError(f"{path}: a compressed parquet file cannot be read (decompress it)")
        yield from _iter_parquet(source, path, text_field, errors)
        return
    with _decompressed(source, path, compression) as stream:
        try:
            if fmt == "jsonl":
                yield from _iter_jsonl(stream, path, text_field, errors)
            elif blank_line_docs:
                yield from _fuse_ends(_iter_blank_line_docs(_decoded_blocks(stream, path, errors)))
            else:
                yield from _iter_text_file(_decoded_blocks(stream, path, errors))
        except (EOFError, lzma.LZMAError, zlib.error) as e:
            raise OSError(f"{path}: corrupt or truncated {compression} data: {e}") from e
        except OSError as e:
            if e.filename is None and not str(e).startswith(path):
                raise OSError(f"{path}: {e}") from e
            raise


def _decode(data: bytes, path: str, offset: int, errors: str, line: int | None = None) -> str:
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise CorpusDecodeError(
            path, offset + e.start, data[e.start : e.end], e.reason, line
        ) from None


def _decoded_blocks(stream: IO[bytes], path: str, errors: str) -> Iterator[str]:
    """The stream decoded in blocks of ``CHUNK_BYTES``; a character cut by a block end is
    carried over, so the text equals decoding the whole stream at once."""
    offset = 0  # stream offset of `pending[0]`
    pending = b""
    while True:
        block = stream.read(CHUNK_BYTES)
        if not block:
            break
        data = pending + block if pending else block
        cut = _complete_prefix(data)
        pending = data[cut:]
        if cut:
            yield _decode(data[:cut], path, offset, errors)
            offset += cut
    if pending:
        yield _decode(pending, path, offset, errors)


def _complete_prefix(data: bytes) -> int:
    """Length of ``data`` without a UTF-8 sequence still incomplete at its end."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        b = data[n - back]
        if b & 0xC0 != 0x80:  # not a continuation byte: a lead byte or ASCII
            need = (
                2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 1
            )
            return n - back if need > back else n
    return n


def _iter_text_file(blocks: Iterator[str]) -> Iterator[tuple[str, bool]]:
    prev: str | None = None
    for block in blocks:
        if not block:  # all bytes skipped
            continue
        if prev is not None:
            yield prev, False
        prev = block
    yield (prev or ""), True


def _iter_blank_line_docs(blocks: Iterator[str]) -> Iterator[tuple[str, bool]]:
    # `partial`: the current line not yet ended by "\n" (at most about two blocks long, or
    # 16 for a line of whitespace; a longer line is handed out as it comes). `started`: the
    # current document has already been handed out in part. `at_line_start`: `partial`
    # starts a line.
    partial = ""
    started = False
    at_line_start = True
    for block in blocks:
        text = partial + block
        end = text.rfind("\n") + 1
        if end == 0 and (
            len(text) < 2 * CHUNK_BYTES
            or (at_line_start and len(text) < 16 * CHUNK_BYTES and not text.strip())
        ):
            partial = text
            continue
        if end == 0:  # a very long line, taken as document text even if all whitespace
            yield text, False
            partial, started, at_line_start = "", True, False
            continue
        complete, partial = text[:end], text[end:]
        start = 0
        if not at_line_start:  # the rest of a long line is text, whatever it holds
            start = complete.index("\n") + 1
        pieces, started = _split_blank_lines(complete, start, started)
        yield from pieces
        at_line_start = True
    if at_line_start and not partial.strip():  # a last blank line without its "\n"
        partial = ""
    if partial or started:
        yield partial, True


def _fuse_ends(chunks: Iterator[tuple[str, bool]]) -> Iterator[tuple[str, bool]]:
    """Folds an empty document end into the chunk before it: ``("a", False), ("", True)``
    becomes ``("a", True)``."""
    held: tuple[str, bool] | None = None
    for text, ends in chunks:
        if held is not None:
            if ends and not text and not held[1]:
                yield held[0], True
                held = None
                continue
            yield held
        held = (text, ends)
    if held is not None:
        yield held


def _split_blank_lines(text: str, start: int, started: bool) -> tuple[list[tuple[str, bool]], bool]:
    """Cuts ``text`` (whole lines, except maybe the last) at runs of blank lines found
    from ``start`` on; returns the finished documents, then what remains as a chunk."""
    out: list[tuple[str, bool]] = []
    begin = 0
    for m in _BLANK_LINES.finditer(text, start):
        doc = text[begin : m.start()]
        if doc or started:
            out.append((doc, True))
        begin, started = m.end(), False
    rest = text[begin:]
    if rest:
        out.append((rest, False))
        started = True
    return out, started


def _iter_jsonl(
    stream: IO[bytes], path: str, field: str, errors: str
) -> Iterator[tuple[str, bool]]:
    offset = 0
    for lineno, raw in enumerate(stream, 1):
        line = _decode(raw, path, offset, errors, lineno)
        offset += len(raw)
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}, line {lineno}: not valid JSON: {e}") from None
        if not isinstance(obj, dict):
            raise ValueError(
                f"{path}, line {lineno}: expected a JSON object, got {type(obj).__name__}"
            )
        if field not in obj:
            keys = ", ".join(map(repr, list(obj)[:10]))
            raise ValueError(
                f"{path}, line {lineno}: no key {field!r} (keys: {keys})" + _TEXT_FIELD_HINT
            )
        text = obj[field]
        if not isinstance(text, str):
            raise ValueError(
                f"{path}, line {lineno}: {field!r} must be a string, got {type(text).__name__}"
            )
        if _SURROGATE_ESCAPE.search(raw) and (bad := _LONE_SURROGATE.search(text)):
            text = _lone_surrogates(text, bad, errors, f"{path}, line {lineno}")
        yield from _split_document(text)


def _lone_surrogates(text: str, bad: re.Match[str], errors: str, where: str) -> str:
    """``text`` (of a jsonl line) with its lone surrogates dealt with as ``errors`` deals
    with invalid UTF-8: escaped in JSON (``"\\ud800"``), one is no character, and UTF-8
    cannot hold it (QA: it became U+FFFD silently, even with ``errors="strict"``)."""
    if errors == "strict":
        raise ValueError(
            f"{where}: a lone surrogate \\u{ord(bad.group()):04x} at character {bad.start()} of "
            "the text (escaped in JSON, it is no character)" + _ERRORS_HINT
        )
    return _LONE_SURROGATE.sub("\ufffd" if errors == "replace" else "", text)


def _iter_parquet(
    source: str | IO[bytes], path: str, column: str, errors: str
) -> Iterator[tuple[str, bool]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ImportError(
            f"{path} is a parquet file: install 'pyarrow' (pip install 'bytepair[corpora]')"
        ) from e
    if not isinstance(source, str):  # a pipe: parquet needs seeking, so it is read whole
        source = pa.BufferReader(source.read())
    try:
        pf = pq.ParquetFile(source)
    except pa.ArrowException as e:
        raise ValueError(f"{path}: not a valid parquet file: {e}") from None
    names = pf.schema_arrow.names
    if column not in names:
        raise ValueError(
            f"{path}: no column {column!r} (columns: {', '.join(map(repr, names[:20]))})"
            + _TEXT_FIELD_HINT
        )
    kind = pf.schema_arrow.field(column).type
    is_binary = pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
    if not (is_binary or pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ValueError(f"{path}: column {column!r} holds {kind}, not strings")
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=1024, columns=[column]):
            for value in batch.column(0).to_pylist():
                row += 1
                if value is None:
                    continue
                if is_binary:
                    value = _decode_row(value, path, row, errors)
                yield from _split_document(value)
    except pa.ArrowException as e:
        raise ValueError(f"{path}: corrupt parquet data near row {row}: {e}") from None


def _decode_row(value: bytes, path: str, row: int, errors: str) -> str:
    try:
        return value.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path}, row {row}: invalid UTF-8 at byte {e.start} of the value"
        ) from None
