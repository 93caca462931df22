"""bytepair's native tokenizer file: versioned JSON that a person can read.

Layout (version 1)::

    {
      "format": "bytepair",
      "version": 1,
      "pattern": "<the pre-tokenization regex>",
      "special_tokens": {"<|endoftext|>": 256},
      "vocab": [[0, "\\u0000"], ..., [256, "<|endoftext|>"], [257, " t"], ...],
      "merges": [[" ", "t"], ...],
      "metadata": {"bytepair_version": "0.1.0", "created": "...", "n_vocab": 300,
                   "training": {"corpus_bytes": 133027, "pretokens": 29140}}
    }

A token is written as a JSON string when its bytes are valid UTF-8, else as
``{"hex": "e4b8"}``. ``vocab`` lists every token (special tokens included) by id;
``merges`` are in rank order (merge i has rank i). ``metadata`` is informative (the
reader does not need it): the writing bytepair version, the UTC time of writing, ``n_vocab``,
and for a tokenizer made by ``bytepair.train`` the size of its training corpus (``training``:
UTF-8 bytes and pre-tokens counted, special-token text excluded). Files without
``metadata`` or ``training`` (older version-1 files) read the same.

What a file must hold, checked when writing and when reading (so every file ``save``
writes loads back, and a damaged or hand-edited file is a ``ValueError``, as in the other
formats):

- every token longer than one byte that is not a special token is made by a merge (BPE
  never outputs any other; GPT-2 and HF files are refused the same way), or is standalone:
  no two tokens make it, so it is output only where a whole pre-token equals it (GPT-2's
  ``<|endoftext|>`` in ``Tokenizer.from_files`` without special tokens). A token two tokens
  make (``"abc"`` = ``"ab"`` + ``"c"``) with no merge for it means a lost merge;
- no token bytes appear under two ids, and no merge is listed twice (a second copy would
  take a rank and do nothing: a pasted line); a special token's id is its vocab entry's;
- ids have no holes, except room left right before a special token's id: a run of unused
  ids must end just below a special token. That admits tiktoken's cl100k_base (100256 is
  unused, ``<|endoftext|>`` is 100257) and o200k_base, and continued training from them
  (new ids come after the largest), and refuses an id edited to leave a hole below an
  ordinary token. A hand-built ``Tokenizer`` with other holes cannot be saved: renumber it.
"""

from __future__ import annotations

import datetime
import json
import os
from typing import TYPE_CHECKING, Any, Union

from ._io import (
    check_holes_before_specials,
    check_id,
    check_no_duplicate_tokens,
    check_reachable,
    dump_json,
    read_json,
    write_atomic,
)

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

FORMAT = "bytepair"
VERSION = 1

Token = Union[str, dict[str, str]]


def token_to_json(b: bytes) -> Token:
    """Token bytes as text where they are UTF-8, else as ``{"hex": ...}``."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def token_from_json(t: Any, where: str) -> bytes:
    """The inverse of ``token_to_json``; ``where`` names the place for errors."""
    if isinstance(t, str):
        return t.encode("utf-8", "surrogatepass")
    if isinstance(t, dict) and set(t) == {"hex"} and isinstance(t["hex"], str):
        try:
            return bytes.fromhex(t["hex"])
        except ValueError:
            raise ValueError(f"{where}: invalid hex {t['hex']!r}") from None
    raise ValueError(f"{where}: a token must be a string or {{'hex': ...}}, got {t!r}")


def to_document(tok: Tokenizer, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON document of a tokenizer."""
    from .. import __version__

    vocab = tok.vocab
    meta = {
        "bytepair_version": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "n_vocab": tok.n_vocab,
    }
    meta.update(tok.metadata)  # e.g. the training corpus size, from ``bytepair.train``
    meta.update(metadata or {})
    return {
        "format": FORMAT,
        "version": VERSION,
        "pattern": tok.pattern,
        "special_tokens": tok.special_tokens,
        "vocab": [[i, token_to_json(b)] for i, b in sorted(vocab.items())],
        "merges": [[token_to_json(a), token_to_json(b)] for a, b in tok.merges],
        "metadata": meta,
    }


def check(
    vocab: dict[int, bytes],
    merges: list[tuple[bytes, bytes]],
    specials: dict[str, int],
    where: str,
) -> None:
    """The rules of the module docstring that the ``Tokenizer`` itself does not enforce
    (but for the duplicates, which the reader checks first)."""
    check_reachable(vocab, merges, specials, where, standalone_ok=True)
    check_holes_before_specials(vocab, specials, where)


def save(tok: Tokenizer, path: str | os.PathLike[str]) -> None:
    """Writes ``tok`` to ``path`` atomically (temporary file in the same folder + rename).

    Raises:
        ValueError: a tokenizer the format refuses (see the module docstring): a token no
            merge makes that is not special, two ids with the same bytes, or a hole in the
            ids that is not right before a special token. Nothing is written then.
        OSError: the file cannot be written.
    """
    where = f"cannot write {os.fspath(path)}"
    vocab = tok.vocab
    check_no_duplicate_tokens(vocab, where, tok.special_tokens.values())
    check(vocab, tok.merges, tok.special_tokens, where)
    write_atomic(path, dump_json(to_document(tok)))


def check_version(doc: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Raises ``ValueError`` naming ``path`` unless the document's version is ``VERSION``."""
    version = doc.get("version")
    if type(version) is not int:  # (true == 1 in Python, and "1" is no version number)
        raise ValueError(
            f"{path}: the bytepair format version must be the integer {VERSION}, got "
            f"{version!r} ({type(version).__name__})"
        )
    if version != VERSION:
        raise ValueError(
            f"{path}: unsupported bytepair format version {version!r} (this bytepair reads "
            f"version {VERSION})"
        )


def from_document(doc: dict[str, Any], path: str | os.PathLike[str]) -> Tokenizer:
    """Builds a tokenizer from a parsed native document; ``path`` is named in errors."""
    from ..tokenizer import Tokenizer, _is_utf8_clean

    def fail(msg: str) -> ValueError:
        return ValueError(f"{path}: {msg}")

    check_version(doc, path)
    for key, kind in (
        ("pattern", str),
        ("special_tokens", dict),
        ("vocab", list),
        ("merges", list),
    ):
        if key not in doc:
            raise fail(f"missing key {key!r}")
        if not isinstance(doc[key], kind):
            raise fail(f"key {key!r} must be a {kind.__name__}")
    vocab: dict[int, bytes] = {}
    for n, entry in enumerate(doc["vocab"]):
        if not (isinstance(entry, list) and len(entry) == 2):
            raise fail(f"vocab[{n}] must be [id, token], got {entry!r}")
        i = check_id(entry[0], f"{path}: vocab[{n}]")
        if i in vocab:
            raise fail(f"vocab[{n}]: id {i} appears twice")
        vocab[i] = token_from_json(entry[1], f"{path}: vocab[{n}]")
    merges = []
    first: dict[tuple[bytes, bytes], int] = {}
    for n, entry in enumerate(doc["merges"]):
        if not (isinstance(entry, list) and len(entry) == 2):
            raise fail(f"merges[{n}] must be [left, right], got {entry!r}")
        where = f"{path}: merges[{n}]"
        merge = (token_from_json(entry[0], where), token_from_json(entry[1], where))
        if first.setdefault(merge, n) != n:
            raise fail(f"merges[{n}] repeats merges[{first[merge]}]: {merge[0]!r} + {merge[1]!r}")
        merges.append(merge)
    special_ids = [i for i in doc["special_tokens"].values() if isinstance(i, int)]
    check_no_duplicate_tokens(vocab, f"{path}: vocab", special_ids)
    meta = doc.get("metadata", {})
    if not isinstance(meta, dict):
        raise fail(f"key 'metadata' must be a dict, got {type(meta).__name__}")
    specials = doc["special_tokens"]
    for s, i in specials.items():
        # (QA: a lone surrogate, "\ud800" in the JSON, was a bare UnicodeEncodeError)
        if not _is_utf8_clean(s):
            raise fail(f"special token {s!r} is not valid Unicode text (a lone surrogate)")
        if vocab.get(check_id(i, f"{path}: special token {s!r}")) != s.encode("utf-8"):
            raise fail(f"special token {s!r} must have the id of its vocab entry, got {i!r}")
    try:
        tok = Tokenizer(vocab, merges, special_tokens=list(specials), pattern=doc["pattern"])
    except ValueError as e:
        raise fail(str(e)) from None
    check(vocab, merges, specials, f"{path}: vocab")
    tok._metadata = {k: v for k, v in meta.items() if k in _KEPT_METADATA}
    # (QA: a lone surrogate in the kept metadata loaded, and every later save failed)
    if not _is_utf8_clean(json.dumps(tok._metadata, ensure_ascii=False)):
        raise fail("metadata holds text that is not valid Unicode (a lone surrogate)")
    return tok


# metadata about the tokenizer's origin, carried from file to file (the rest is per file)
_KEPT_METADATA = ("training",)


def load(path: str | os.PathLike[str]) -> Tokenizer:
    """Reads a native file.

    Raises:
        ValueError: truncated or malformed JSON, or a document that is not a valid
            tokenizer (names the file and the key).
    """
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{path}: not a bytepair tokenizer file (no "format": "{FORMAT}")')
    return from_document(doc, path)
