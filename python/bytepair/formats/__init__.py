"""Tokenizer file formats. Parsing and writing files is not hot, so it lives in Python.

- ``native``: bytepair's own versioned JSON (pattern, special tokens, vocab, merges, metadata).
- ``gpt2``: a folder with GPT-2 ``vocab.json`` + ``merges.txt`` (byte <-> unicode alphabet).
- ``tiktoken``: a ``.tiktoken`` rank file (``base64(token) rank`` lines); ``to_tiktoken``.
- ``hf``: HF tokenizers ``tokenizer.json`` (byte-level BPE).

``load`` tells them apart by content, never by name; ``save`` writes any of them.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ._io import SEPARATORS, check_path, names_a_file_as_folder

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["FORMATS", "detect", "load", "save"]

FORMATS = ("native", "gpt2", "tiktoken", "hf")

_HEAD = 1 << 16  # bytes read to tell a format apart
# the keys of a native file but "format"
_NATIVE_KEYS = {"version", "pattern", "special_tokens", "vocab", "merges", "metadata"}


def detect(path: str | os.PathLike[str]) -> str:
    """The format of a tokenizer file or folder: one of ``FORMATS``, from its content.

    Raises:
        FileNotFoundError: the path does not exist.
        NotADirectoryError: the path ends in a separator and names a file.
        ValueError: not a tokenizer file of a known format (the message says what it
            looks like).
    """
    return _sniff(Path(path))[0]


_GPT2_PAIRS = {"vocab.json": "merges.txt", "encoder.json": "vocab.bpe"}


def _incomplete_gpt2_folder(p: Path) -> None:
    """Raises ValueError naming what is wrong if ``p`` holds some GPT-2 files but no pair."""
    partner = {**_GPT2_PAIRS, **{b: a for a, b in _GPT2_PAIRS.items()}}
    present = [name for name in partner if os.path.lexists(p / name)]
    for name in present:
        if not (p / name).is_file():
            what = "a broken symlink" if not (p / name).exists() else "not a file"
            raise ValueError(f"{p / name}: {what}")
    if len(present) == 1:
        raise ValueError(f"{p}: folder has {present[0]} but no {partner[present[0]]} beside it")
    if present:
        raise ValueError(
            f"{p}: folder has {' and '.join(present)}, not a pair of GPT-2 files (vocab.json "
            "+ merges.txt, or encoder.json + vocab.bpe)"
        )


def _gpt2_written_since(folder: Path, hf_file: Path) -> bool:
    """Whether bytepair wrote GPT-2 files into ``folder`` after its ``tokenizer.json``: a
    folder of both is read as HF's (a model folder from the Hub holds both, and the
    tokenizer.json has the special tokens), unless ``save(folder, format="gpt2")`` came
    later (QA: a folder saved first as HF, then as GPT-2, loaded the old tokenizer)."""
    from . import gpt2

    sidecar = folder / gpt2.SIDECAR
    try:
        return gpt2.is_folder(folder) and sidecar.stat().st_mtime_ns > hf_file.stat().st_mtime_ns
    except OSError:
        return False


def _sniff(p: Path) -> tuple[str, object]:
    """The format, and the parsed document of a JSON file (else None)."""
    from . import gpt2, hf, native, tiktoken
    from ._io import parse_json

    if p.is_dir():
        hf_file = p / "tokenizer.json"
        if hf_file.is_file() and not _gpt2_written_since(p, hf_file):
            return "hf", None
        if gpt2.is_folder(p):
            return "gpt2", None
        _incomplete_gpt2_folder(p)
        raise ValueError(
            f"{p}: folder has no tokenizer files (expected tokenizer.json, vocab.json + "
            "merges.txt, or encoder.json + vocab.bpe)"
        )
    with open(p, "rb") as f:
        head = f.read(_HEAD)
    if not head.strip():
        raise ValueError(f"{p}: the file is empty" + (" (only whitespace)" if head else ""))
    if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{":
        doc = parse_json(p.read_bytes(), p)
        if isinstance(doc, dict) and doc.get("format") == native.FORMAT:
            return "native", doc
        if hf.is_document(doc):
            return "hf", doc
        if isinstance(doc, dict) and "version" in doc and set(doc) <= _NATIVE_KEYS:
            # a native file of another version (or one that lost its "format" key)
            native.check_version(doc, p)
            raise ValueError(f'{p}: a bytepair tokenizer file without "format": "bytepair"')
        if isinstance(doc, dict) and doc.get("format") == gpt2.SIDECAR_FORMAT:
            raise ValueError(f"{p}: this is the note beside GPT-2 files; load their folder")
        if isinstance(doc, dict) and doc and all(isinstance(v, int) for v in doc.values()):
            raise ValueError(
                f"{p}: looks like a GPT-2 vocab.json alone; load the folder holding it and "
                "merges.txt"
            )
        raise ValueError(f"{p}: JSON, but not a tokenizer file of a format bytepair reads")
    if tiktoken.looks_like_rank_file(head):
        return "tiktoken", None
    raise ValueError(
        f"{p}: not a tokenizer file of a format bytepair reads (native JSON, tokenizer.json, "
        ".tiktoken rank file, or a folder of GPT-2 files)"
    )


def load(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | Iterable[str] | None = None,
    sha256: str | None = None,
) -> Tokenizer:
    """Loads a tokenizer file or folder, detecting its format from the content, not the name.

    Recognised: bytepair's native JSON; HF ``tokenizer.json`` (byte-level BPE); a
    ``.tiktoken`` rank file; a folder with GPT-2 ``vocab.json`` and ``merges.txt`` (or with a
    ``tokenizer.json``).

    Args:
        path: the file or folder.
        pattern: for a rank file only, which has none: a preset name (``"gpt2"``,
            ``"cl100k"``, ``"o200k"``) or a regex. Required there.
        special_tokens: for a rank file only: ``{token: id}``, or a list of tokens that get
            the ids after the largest rank.
        sha256: for a rank file only: its expected SHA-256 (hex), as tiktoken pins them.

    Raises:
        TypeError: ``path`` is not a ``str`` or ``os.PathLike``.
        FileNotFoundError: the path does not exist.
        NotADirectoryError: the path ends in a separator and names a file.
        ValueError: the file is not a tokenizer file of a known format, is corrupt (the
            message names the file, the line or key, and what is wrong), is a rank file
            loaded without ``pattern`` or with the wrong hash.
    """
    from . import gpt2, hf, native, tiktoken

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"load takes the path of a tokenizer file or folder, not a {type(path).__name__} "
            "(in-memory vocab and merges: bytepair.Tokenizer(vocab, merges, ...))"
        )
    text = os.fspath(path)
    if not text:
        # (Path("") is the current folder: load("") read whatever tokenizer was there)
        raise ValueError("load needs the path of a tokenizer file or folder, got ''")
    if text.endswith(SEPARATORS) and not os.path.isdir(text):
        # (Path() drops the separator: load("tok.json/") read tok.json, where open() says
        # it is no folder)
        code = errno.ENOTDIR if names_a_file_as_folder(text) else errno.ENOENT
        raise OSError(code, os.strerror(code), text)
    p = Path(path)
    kind, doc = _sniff(p)
    if kind == "tiktoken":
        return tiktoken.load(path, pattern=pattern, special_tokens=special_tokens, sha256=sha256)
    if pattern is not None or special_tokens is not None or sha256 is not None:
        raise ValueError(
            f"{path}: a {kind} file names its own pattern and special tokens; pattern=, "
            "special_tokens= and sha256= are for .tiktoken rank files"
        )
    if kind == "gpt2":
        return gpt2.load_folder(p)
    if isinstance(doc, dict):
        return native.from_document(doc, p) if kind == "native" else hf.from_document(doc, p)
    return hf.load(p / "tokenizer.json")


def save(tok: Tokenizer, path: str | os.PathLike[str], format: str | None = None) -> None:
    """Writes ``tok`` in ``format`` (one of ``FORMATS``; None: from the path's suffix); see
    ``Tokenizer.save``."""
    from . import gpt2, hf, native, tiktoken

    path = check_path(path, "save takes the path to write")
    if format is None:
        # (a name that says .tiktoken promises a rank file: tiktoken.load reads it as one)
        format = "tiktoken" if os.fspath(path).lower().endswith(".tiktoken") else "native"

    writers = {
        "native": native.save,
        "gpt2": gpt2.write,
        "tiktoken": tiktoken.write,
        "hf": hf.write,
    }
    if format not in writers:
        raise ValueError(f"unknown format {format!r}; formats: {', '.join(FORMATS)}")
    ids = list(tok.special_tokens.values())
    if format != "tiktoken" and len(set(ids)) < len(ids):
        # these formats store one text per id
        shared = sorted(s for s, i in tok.special_tokens.items() if ids.count(i) > 1)
        raise ValueError(
            f"special tokens {shared[:4]!r} share an id (aliases, as in o200k_harmony), which "
            f"the {format} format cannot store; get the encoding with get_encoding(name), or "
            "save its ranks with format='tiktoken'"
        )
    writers[format](tok, path)
