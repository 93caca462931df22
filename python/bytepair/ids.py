"""Corpus to token ids: the flat id arrays a language model trains on, written and read back.

``encode_to_file`` encodes a whole corpus (any input ``bytepair.inputs.iter_chunks`` reads:
text files, folders, globs, jsonl, parquet, gzip/zstd, iterables of str) into one flat array
of ids, on all cores and in bounded memory, and writes it as raw little-endian integers
(``.bin``) or a NumPy ``.npy`` file. ``open_ids`` memory-maps it back, read-only::

    >>> import bytepair
    >>> tok = bytepair.train(iter(["low low lower lowest"]), 259, special_tokens=["<|endoftext|>"])
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "ids.npy")
    >>> info = encode_to_file(tok, iter(["low lower", "lowest"]), out, eot=True, progress=False)
    >>> open_ids(out).tolist()
    [258, 32, 258, 101, 114, 256, 258, 101, 115, 116, 256]
    >>> info["dtype"], info["n_tokens"], info["n_documents"]
    ('uint16', 11, 2)
    >>> import shutil; shutil.rmtree(os.path.dirname(out))

Ids: each document is encoded on its own (no pre-token spans two documents), exactly as
``Tokenizer.encode(document, allowed_special=...)``; ``eot`` puts the end-of-text token after
each document. The dtype is ``uint16`` when every id fits (``n_vocab <= 65536``), else
``uint32``. A sidecar JSON file (``OUT.bin.json`` / ``OUT.npy.json``) records the tokenizer's
SHA-256, the dtype, the token and document counts and the inputs.

How a long document is spread over the cores: it is cut into pieces of about a megabyte,
only at places where cutting cannot change the pre-tokens (see ``_EXACT_CUTS``), and the
pieces are encoded in parallel (``Tokenizer.encode_to_numpy`` on a thread pool: the GIL is
released and no Python int is made per token). A document with no such place for a long
stretch, or a tokenizer with a custom pattern, is encoded with ``Tokenizer.encode_iterable``
instead: exact for any chunking, but on one core.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
import time
from collections import deque
from collections.abc import Iterable, Iterator
from functools import cache
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, Union

from . import _core
from .formats._io import refuse_folder_name, replaceable_path, temporary_beside
from .inputs import expand_paths, file_format, is_stream, iter_chunks

if TYPE_CHECKING:
    from concurrent.futures import Future

    import numpy as np
    import regex

    from .tokenizer import AllowedSpecial, Tokenizer

__all__ = ["encode_to_file", "ids_dtype", "open_ids", "sidecar_path", "tokenizer_sha256"]

PathLike = Union[str, "os.PathLike[str]"]

SIDECAR_FORMAT = "bytepair-ids"
SIDECAR_VERSION = 1

_UNIT_CHARS = 1 << 20  # characters of one piece of a long document (encoded by one thread)
_STREAM_AFTER = 16 * _UNIT_CHARS  # a document this long with no exact cut is streamed
_BATCH_DOCS = 1024  # short documents encoded by one task (jsonl lines, parquet rows)
_NPY_HEADER = 128  # bytes of the .npy header we write (a multiple of 64, as numpy wants)

# Exact cut points of the preset patterns: places where the text can be cut in two and the
# two halves pre-tokenize to exactly the pre-tokens of the whole. The cut is at the start of
# the match. Both rules ask only whether a character is whitespace, which Python's `regex`
# and tiktoken's regex agree on; a rule that asked whether one is a letter cut wrongly where
# `regex`'s newer Unicode tables know letters that tiktoken's do not (U+10955, say).
# tests/python/test_ids.py checks the cuts against bytepair.reference.pretokenize with
# hypothesis, and against tiktoken's ids.
#   gpt2: before a "\n" that follows a non-space. No gpt2 pre-token joins a non-space to a
#     following "\n", and the "\n..." run pre-tokenizes alike with or without the text before.
#   cl100k / o200k: right after a "\n" before a non-space: their `\s*[\r\n]+` takes a
#     whitespace run ending in "\n" whole, at the end of the text or not, and punctuation
#     absorbs following newlines ("!\n" is one pre-token) but nothing after them except
#     o200k's "/" ("!\n/"), which is never cut before.
_AFTER_NEWLINE = r"(?r)(?<=\n)(?=[^\s/])"
_EXACT_CUTS = {
    _core.GPT2_PATTERN: r"(?r)(?<=\S)\n",
    _core.CL100K_PATTERN: _AFTER_NEWLINE,
    _core.O200K_PATTERN: _AFTER_NEWLINE,
}


@cache
def _exact_cut(pattern: str) -> regex.Pattern[str] | None:
    """The compiled cut rule of ``_EXACT_CUTS`` for a pattern, if it has one. (`regex`,
    1.5 MB of memory, is imported only here: ``import bytepair`` does not need it.)"""
    import regex

    rule = _EXACT_CUTS.get(pattern)
    return None if rule is None else regex.compile(rule)


def ids_dtype(n_vocab: int) -> np.dtype[Any]:
    """``uint16`` when every id of a vocabulary of ``n_vocab`` tokens fits, else ``uint32``."""
    import numpy as np

    return np.dtype(np.uint16 if n_vocab <= 1 << 16 else np.uint32)


def tokenizer_sha256(tok: Tokenizer) -> str:
    """The SHA-256 (hex) of a tokenizer's native serialization, without its metadata.

    It covers the pattern, the special tokens, every token's bytes by id and the merges
    (``bytepair.formats.native``), in canonical JSON (sorted keys, no spaces), so it changes
    exactly when the ids a tokenizer gives can change, and not with the time it was saved.
    """
    from .formats import native

    doc = native.to_document(tok)
    del doc["metadata"]
    canon = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8", "surrogatepass")).hexdigest()


def _is_our_sidecar(path: str) -> bool:
    """Whether ``path`` is the sidecar JSON of an id file this module wrote."""
    try:
        if os.path.getsize(path) > 1 << 20:
            # a big one (it lists every input: tens of thousands of files) by its first
            # key, which this module writes first; a big input is never read whole for this
            with open(path, "rb") as f:
                head = f.read(256)
            return (
                re.match(rb'\{\s*"format":\s*"' + SIDECAR_FORMAT.encode() + b'"', head) is not None
            )
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("format") == SIDECAR_FORMAT


def sidecar_path(path: PathLike) -> str:
    """Where the sidecar JSON of an id file lives: the file's path plus ``.json``."""
    return os.fspath(path) + ".json"


def encode_to_file(
    tok: Tokenizer,
    inputs: PathLike | Iterable[PathLike] | Iterable[str],
    out: PathLike,
    *,
    eot: bool | str | None = False,
    allowed_special: AllowedSpecial = frozenset(),
    num_threads: int | None = None,
    progress: bool | None = None,
    text_field: str = "text",
    errors: str = "strict",
    blank_line_docs: bool = False,
) -> dict[str, Any]:
    """Encodes a corpus into one flat id file (``.npy``, else raw ``.bin``) plus a sidecar.

    Args:
        tok: the tokenizer.
        inputs: what ``bytepair.inputs.iter_chunks`` reads: path(s), a folder, a glob, or an
            iterable of str (one document each; not a dict, whose keys would be taken).
        out: the id file. A name ending in ``.npy`` gets a NumPy file; any other name gets
            raw little-endian integers (``.bin`` by convention). Written to a temporary file
            and renamed, so an interrupted run leaves no partial file; a symlink is
            written through (the link stays), a folder, device or fifo is refused.
        eot: ``True`` puts ``<|endoftext|>`` after every document; a string names another
            special token to put there (or a token of that text: GPT-2's ``vocab.json``
            has ``<|endoftext|>`` as id 50256 without declaring it special). ``False`` or
            ``None``: nothing between documents.
        allowed_special: special tokens whose text becomes their id (``"all"`` for all);
            the text of any other special token is encoded as ordinary text.
        num_threads: threads for encoding (default: one per core).
        progress: show a tqdm bar (bytes/s, tokens/s, ETA when the size is known); default:
            when stderr is a terminal.
        text_field, errors, blank_line_docs: as in ``iter_chunks``.

    Returns:
        the sidecar's content: ``dtype``, ``n_tokens``, ``n_documents``, ``tokenizer_sha256``,
        ``eot_token``, ``inputs``, ... (also written to ``sidecar_path(out)``).

    Raises:
        ValueError: ``eot`` names no special token of ``tok``, a bad special-token name, bad
            input data (as ``iter_chunks``: invalid UTF-8, bad jsonl), or ``out`` is ``""``.
        TypeError: ``tok`` is not a ``Tokenizer``; ``eot`` is not a bool, str or None;
            ``inputs`` is a dict (any mapping), bytes or not iterable; an item of an iterable
            is not a ``str``.
        OSError: an input cannot be read or the output cannot be written (or is a folder,
            device or fifo); ``FileExistsError`` when the sidecar's path holds a file that
            bytepair did not write (``out="ids"`` would replace ``ids.json``).
    """
    from .tokenizer import Tokenizer, _read_once

    if not isinstance(tok, Tokenizer):  # (an int was "has no attribute '_check_special_names'")
        raise TypeError(f"tok must be a bytepair Tokenizer, got {type(tok).__name__}")
    out = os.fspath(out)
    if not out:  # (QA: "" was "is a folder; not replacing it: <cwd>")
        raise ValueError("the output's name is empty")
    refuse_folder_name(out)  # (QA: "ids.npy/" was refused naming its sidecar "ids.npy/.json")
    eot_id = _eot_id(tok, eot)
    allowed_special, _ = _read_once(allowed_special, ())
    tok._check_special_names(allowed_special)  # a mistyped name fails now, not after hours
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        if os.path.exists(folder):  # (QA: "c.txt/out.bin" said "No such folder")
            raise NotADirectoryError(20, "is a file, not a folder for the output", folder)
        raise FileNotFoundError(2, "No such folder for the output", folder)
    # written through symlinks; a folder, device or fifo there is refused before any work
    out_real = os.fspath(replaceable_path(out))
    sidecar_real = os.fspath(replaceable_path(sidecar_path(out)))
    dtype = ids_dtype(tok.n_vocab)
    from .tokenizer import _check_threads

    # (QA: 1.5, True and Decimal(3) were taken; a wrong type is a TypeError, as elsewhere)
    n_threads = _check_threads(num_threads) or os.cpu_count() or 1
    paths = expand_paths(inputs)  # resolved once: a glob or folder is listed one time only
    if paths is not None:
        # the output is never an input: named as one it is an error (it would be overwritten);
        # found in a folder or glob (a second run over the same folder), it and its sidecar
        # are skipped rather than read back as documents
        raw = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)  # type: ignore[call-overload]
        mine = {out_real, sidecar_real}
        if mine & {os.path.realpath(os.fspath(x)) for x in raw}:
            raise ValueError(f"{out}: it or its sidecar is one of the inputs; not overwriting it")
        found = mine & {os.path.realpath(p) for p in paths}
        if found and not _is_our_sidecar(sidecar_real):
            raise ValueError(
                f"{out}: the inputs hold {sorted(found)[0]}, which is not an id file written "
                "by bytepair (it has no bytepair sidecar); not overwriting it"
            )
        paths = [p for p in paths if os.path.realpath(p) not in mine]
    if os.path.exists(sidecar_real) and not _is_our_sidecar(sidecar_real):
        # ("-o out" has the sidecar out.json: a tokenizer or config there is not replaced)
        raise FileExistsError(
            17,
            f"the sidecar of {out} would replace this file, which bytepair did not write; "
            "name the output otherwise (ids.npy, ids.bin)",
            sidecar_path(out),
        )
    chunks = iter_chunks(
        paths if paths is not None else inputs,  # type: ignore[arg-type]
        text_field=text_field,
        errors=errors,
        blank_line_docs=blank_line_docs,
    )
    specials = tok.special_tokens if allowed_special == "all" else set(allowed_special)
    cut = _exact_cut(tok.pattern)
    if any("\n" in s for s in specials):  # a cut point could fall inside a special token
        cut = None

    fd, tmp = _temporary_file(out_real)
    bar = _Progress(progress, _plain_text_bytes(paths))
    try:
        with os.fdopen(fd, "wb") as f:
            npy = out.lower().endswith(".npy")
            if npy:
                f.write(b"\0" * _NPY_HEADER)  # the real header once the length is known
            writer = _Writer(f, dtype, eot_id, bar)
            pieces = _pieces(bar.track(chunks), cut)
            _encode_pieces(pieces, tok, allowed_special, n_threads, writer)
            if npy:
                f.seek(0)
                f.write(_npy_header(dtype, writer.n_tokens))
        info = {
            "format": SIDECAR_FORMAT,
            "version": SIDECAR_VERSION,
            "dtype": dtype.name,
            "byteorder": "little",
            "n_tokens": writer.n_tokens,
            "n_documents": writer.n_documents,
            "eot_token": eot_id,
            "n_vocab": tok.n_vocab,
            "tokenizer_sha256": tokenizer_sha256(tok),
            "inputs": paths if paths is not None else "<iterable of str>",
            "bytes_read": bar.n_bytes,
            "seconds": round(bar.elapsed, 3),
        }
        _write_json_atomic(sidecar_real, info)
        os.replace(tmp, out_real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        bar.close()
    return info


def open_ids(path: PathLike) -> np.ndarray:
    """Memory-maps an id file written by ``encode_to_file`` (or any 1-D ``.npy``), read-only.

    Args:
        path: a ``.npy`` file, or a raw id file whose dtype is read from its sidecar
            (``sidecar_path(path)``).

    Returns:
        a read-only 1-D ``numpy.ndarray`` (``np.memmap`` / ``np.load(mmap_mode="r")``) of
        ``uint16`` or ``uint32`` ids; nothing is read until it is indexed.

    Raises:
        FileNotFoundError: the file, or the sidecar of a raw file, is missing.
        TypeError: ``path`` is not a str or ``os.PathLike`` of str.
        ValueError: not a regular file; a ``.npy`` that is not one (another format, cut
            short), or holds no 1-D array of unsigned integers; a malformed sidecar, or one
            whose dtype or token count the file does not match (a truncated or foreign file).
    """
    import numpy as np

    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"open_ids takes a str or os.PathLike path, not {type(path).__name__}")
    if not os.path.exists(path):
        raise FileNotFoundError(2, "No such file or directory", path)
    if not stat.S_ISREG(os.stat(path).st_mode):
        # (a fifo would block here until some writer came)
        raise ValueError(f"{path}: not a regular file")
    side = sidecar_path(path)
    info = _read_sidecar(side) if os.path.exists(side) else None
    if path.lower().endswith(".npy"):
        arr = _load_npy(path)
        if info is not None and arr.dtype != np.dtype(info["dtype"]):
            raise ValueError(
                f"{path}: holds {arr.dtype} ids but its sidecar {side} says {info['dtype']}"
            )
    else:
        if info is None:
            raise FileNotFoundError(
                2, "No such file or directory (the sidecar that gives a raw id file's dtype)", side
            )
        dtype = np.dtype(info["dtype"]).newbyteorder("<")
        size = os.path.getsize(path)
        if size % dtype.itemsize:
            raise ValueError(f"{path}: {size} bytes is not a whole number of {dtype.name} ids")
        if size == 0:
            arr = np.zeros(0, dtype)
        else:
            arr = np.memmap(path, dtype=dtype, mode="r")
    if info is not None and len(arr) != info["n_tokens"]:
        raise ValueError(
            f"{path}: holds {len(arr)} ids but its sidecar {side} records {info['n_tokens']} "
            "(a truncated or replaced file)"
        )
    arr.flags.writeable = False
    return arr


# ------------------------------------------------------------------------------ internals

# a piece of a document to encode: (text, ends_document), or an iterator over the rest of
# a document that must be streamed (no exact cut found in a long stretch)
_Piece = Union[tuple[str, bool], Iterator[str]]


def _pieces(chunks: Iterator[tuple[str, bool]], cut: regex.Pattern[str] | None) -> Iterator[_Piece]:
    """Regroups ``iter_chunks`` output into independently encodable pieces.

    A document comes whole when it ends; a long one in pieces of about ``_UNIT_CHARS`` cut
    at exact points. A document with no exact cut in ``_STREAM_AFTER`` characters (or any
    long document when ``cut`` is None) comes as an iterator over its remaining text, which
    the caller must exhaust before asking for the next piece.
    """
    parts: list[str] = []
    size = 0
    searched = 0  # the start of ``parts`` has no exact cut up to here
    for text, ends in chunks:
        parts.append(text)
        size += len(text)
        if ends:
            yield "".join(parts), True
            parts, size, searched = [], 0, 0
        elif size >= _UNIT_CHARS:
            buf = "".join(parts)
            # the lookbehind sees the text before pos: only the new text needs searching
            m = cut.search(buf, max(searched - 1, 1)) if cut is not None else None
            if m is not None:
                yield buf[: m.start()], False
                parts, size, searched = [buf[m.start() :]], len(buf) - m.start(), 0
            elif cut is None or size >= _STREAM_AFTER:
                yield chain([buf], _rest_of_document(chunks))
                parts, size, searched = [], 0, 0
            else:
                parts, searched = [buf], len(buf)


def _rest_of_document(chunks: Iterator[tuple[str, bool]]) -> Iterator[str]:
    for text, ends in chunks:
        yield text
        if ends:
            return


def _encode_pieces(
    pieces: Iterator[_Piece],
    tok: Tokenizer,
    allowed_special: AllowedSpecial,
    n_threads: int,
    writer: _Writer,
) -> None:
    """Encodes pieces on ``n_threads`` threads while the main thread reads the next ones.

    Pieces are grouped into tasks of about ``_UNIT_CHARS`` characters (one long piece, or
    up to ``_BATCH_DOCS`` short documents). Each task runs ``Tokenizer.encode_to_numpy``,
    which releases the GIL and makes no Python int per token; at most ``2 * n_threads``
    tasks are in flight, so memory stays at about ``2 * n_threads * _UNIT_CHARS``
    characters and their ids, whatever the corpus size. Results are written in order.
    """
    task: list[str] = []
    task_ends: list[bool] = []
    size = 0
    in_flight: deque[tuple[Future[list[np.ndarray]], list[bool]]] = deque()

    def encode(texts: list[str]) -> list[np.ndarray]:
        return [
            tok.encode_to_numpy(t, allowed_special=allowed_special, disallowed_special=())
            for t in texts
        ]

    def write_oldest() -> None:
        future, ends = in_flight.popleft()
        writer.write_arrays(future.result(), ends)

    def submit() -> None:
        nonlocal task, task_ends, size
        if task:
            in_flight.append((pool.submit(encode, task), task_ends))
            task, task_ends, size = [], [], 0
        while len(in_flight) > 2 * n_threads:
            write_oldest()

    from concurrent.futures import ThreadPoolExecutor  # (not on every `import bytepair`)

    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        for piece in pieces:
            if isinstance(piece, tuple):
                task.append(piece[0])
                task_ends.append(piece[1])
                size += len(piece[0])
                if size >= _UNIT_CHARS or len(task) >= _BATCH_DOCS:
                    submit()
                continue
            # a document to stream: everything before it is written first
            submit()
            while in_flight:
                write_oldest()
            ids = tok.encode_iterable(piece, allowed_special=allowed_special, disallowed_special=())
            writer.write_stream(ids)
        submit()
        while in_flight:
            write_oldest()


class _Writer:
    """Appends ids to the output file and counts tokens and documents."""

    def __init__(self, f: Any, dtype: np.dtype[Any], eot_id: int | None, bar: _Progress):
        import numpy as np

        self._f = f
        self._dtype = dtype.newbyteorder("<")
        self._eot = None if eot_id is None else np.array([eot_id], self._dtype)
        self._bar = bar
        self.n_tokens = 0
        self.n_documents = 0

    def write_arrays(self, ids: list[np.ndarray], ends: list[bool]) -> None:
        for piece, end in zip(ids, ends):
            self._write(piece.astype(self._dtype, copy=False))
            if end:
                self.end_document()

    def write_stream(self, ids: Iterator[int]) -> None:
        """Writes the ids of one whole document, given one at a time, in blocks."""
        import numpy as np

        while True:
            block = np.fromiter(islice(ids, _UNIT_CHARS), self._dtype)
            if not len(block):
                break
            self._write(block)
        self.end_document()

    def end_document(self) -> None:
        if self._eot is not None:
            self._write(self._eot)
        self.n_documents += 1

    def _write(self, arr: np.ndarray) -> None:
        self._f.write(arr.tobytes())
        self.n_tokens += len(arr)
        self._bar.add_tokens(len(arr))


def _eot_id(tok: Tokenizer, eot: bool | str | None) -> int | None:
    """The id to put after each document: a special token's, or (GPT-2's vocab.json loaded
    without special tokens) the id of the ordinary token with exactly that text."""
    if eot is False or eot is None:
        return None
    if not isinstance(eot, (bool, str)):  # (QA: eot=5 was "'int' object has no attribute")
        raise TypeError(
            f"eot must be True, False or the name of a special token, got {type(eot).__name__}"
        )
    name = "<|endoftext|>" if eot is True else eot
    specials = tok.special_tokens
    if name in specials:
        return specials[name]
    data = name.encode("utf-8")
    found = [i for i, b in tok.vocab.items() if b == data]
    if found:
        return min(found)
    have = ", ".join(map(repr, specials)) or "none"
    raise ValueError(
        f"the tokenizer has no special token {name!r} to end documents with "
        f"(its special tokens: {have}); train it with that special token "
        f"(train(..., special_tokens=[{name!r}]), CLI --special-token {name!r})"
    )


def _npy_header(dtype: np.dtype[Any], n: int) -> bytes:
    """A .npy version-1.0 header of exactly ``_NPY_HEADER`` bytes for a 1-D array of ``n``."""
    import numpy as np

    d = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (n,)}
    magic = np.lib.format.magic(1, 0)
    text = repr(d).ljust(_NPY_HEADER - len(magic) - 2 - 1) + "\n"
    return magic + struct.pack("<H", len(text)) + text.encode("latin1")


_NPY_MAGIC = b"\x93NUMPY"


def _load_npy(path: str) -> np.ndarray:
    """``np.load(path, mmap_mode="r")`` of a 1-D array of unsigned integers, with errors that
    name the file (numpy's do not, and for a file that is not a .npy at all it speaks of
    pickles)."""
    import numpy as np

    with open(path, "rb") as f:
        magic = f.read(len(_NPY_MAGIC))
    if magic != _NPY_MAGIC:
        what = "empty" if not magic else "not a .npy file (no NumPy header)"
        raise ValueError(f"{path}: {what}")
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, EOFError, OSError) as e:
        raise ValueError(
            f"{path}: not a readable .npy id file (cut short or damaged): {e}"
        ) from None
    if arr.ndim != 1:
        raise ValueError(f"{path}: holds an array of shape {arr.shape}, not a 1-D id array")
    if arr.dtype.kind != "u" or arr.dtype.fields is not None:
        raise ValueError(f"{path}: holds {arr.dtype} values, not unsigned integer ids")
    return arr


def _read_sidecar(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a JSON file: {e}") from None
    if not isinstance(info, dict):
        raise ValueError(f"{path}: expected a JSON object")
    for key, kind in (("dtype", str), ("n_tokens", int)):
        if not isinstance(info.get(key), kind) or isinstance(info.get(key), bool):
            raise ValueError(f"{path}: key {key!r} is missing or not a {kind.__name__}")
    if info["n_tokens"] < 0:
        raise ValueError(f"{path}: n_tokens {info['n_tokens']} is negative")
    if info["dtype"] not in ("uint16", "uint32"):
        raise ValueError(f"{path}: dtype {info['dtype']!r} is not uint16 or uint32")
    return info


def _write_json_atomic(path: str, doc: dict[str, Any]) -> None:
    fd, tmp = _temporary_file(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _temporary_file(path: str) -> tuple[int, str]:
    """A new file beside ``path`` to rename over it (``formats._io.temporary_beside``)."""
    return temporary_beside(path, os.path.basename(path) + ".")


def _plain_text_bytes(paths: list[str] | None) -> int | None:
    """The total size of the inputs when they are uncompressed plain-text files, else None
    (a pipe's size is not known)."""
    if paths is None:
        return None
    total = 0
    for p in paths:
        if is_stream(p) or file_format(p) != (None, "text"):
            return None
        total += os.path.getsize(p)
    return total


class _Progress:
    """A tqdm bar in bytes of text read, with tokens/s shown beside it."""

    def __init__(self, enabled: bool | None, total: int | None) -> None:
        import sys

        if enabled is None:
            enabled = sys.stderr is not None and sys.stderr.isatty()
        self._bar = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc="encoding", unit="B", unit_scale=True)
        self._start = time.perf_counter()
        self.n_bytes = 0
        self.n_tokens = 0

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._start

    def track(self, chunks: Iterator[tuple[str, bool]]) -> Iterator[tuple[str, bool]]:
        for text, ends in chunks:
            n = len(text.encode("utf-8", "surrogatepass"))
            self.n_bytes += n
            if self._bar is not None:
                self._bar.update(n)
            yield text, ends

    def add_tokens(self, n: int) -> None:
        self.n_tokens += n
        if self._bar is not None:
            rate = self.n_tokens / max(self.elapsed, 1e-9)
            self._bar.set_postfix_str(f"{self.n_tokens:,} tokens, {rate:,.0f} tokens/s", False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
