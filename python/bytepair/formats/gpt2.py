"""GPT-2 ``vocab.json`` + ``merges.txt``, written in GPT-2's byte <-> unicode alphabet.

A folder holds ``vocab.json`` (token -> id; special tokens included, as GPT-2's own has
``<|endoftext|>`` = 50256) and ``merges.txt`` (``#version: 0.2``, then ``left right`` per line in
rank order; tiktoken's and GPT-2's readers skip that first line). Neither file says the
pattern or which tokens are special, so bytepair writes them into a third file,
``bytepair.json``. Reading a folder without it (GPT-2's own files, or HF's): the pattern is
GPT-2's, and the special tokens are those of an ``added_tokens.json`` and GPT-2's
``<|endoftext|>``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Union

from ..reference.gpt2_bytes import bytes_to_unicode, unicode_to_bytes
from ._io import (
    check_dense,
    check_id,
    check_no_duplicate_tokens,
    check_reachable,
    dump_json,
    read_json,
    write_atomic_many,
)

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]

VOCAB, MERGES = "vocab.json", "merges.txt"
# the same two files under OpenAI's own names (data-gym), looked for second
OPENAI_NAMES = ("encoder.json", "vocab.bpe")
# bytepair's note beside the two GPT-2 files: what they cannot say (pattern, special tokens)
SIDECAR = "bytepair.json"
SIDECAR_FORMAT = "bytepair-gpt2"
# HF's slow tokenizers keep extra tokens here: {"token": id}
ADDED_TOKENS = "added_tokens.json"
EOT = "<|endoftext|>"


def _token(text: str, where: str) -> bytes:
    table = unicode_to_bytes()
    try:
        return bytes(table[c] for c in text)
    except KeyError as e:
        raise ValueError(f"{where}: character {e.args[0]!r} is not in the GPT-2 alphabet") from None


def read(
    vocab_filepath: PathLike, merges_filepath: PathLike
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Reads the two files into (id -> bytes, merges as byte pairs).

    Raises:
        FileNotFoundError: a file is missing.
        ValueError: bad JSON, a token outside the GPT-2 alphabet, a duplicate id, or a
            merges line that is not two tokens (names the file and line).
    """
    vpath, mpath = Path(vocab_filepath), Path(merges_filepath)
    raw = read_json(vpath)
    if not isinstance(raw, dict):
        raise ValueError(f"{vpath}: expected a JSON object of token -> id")
    vocab: dict[int, bytes] = {}
    for text, i in raw.items():
        check_id(i, f"{vpath}: key {text!r}")
        if i in vocab:
            raise ValueError(f"{vpath}: key {text!r}: id {i} appears twice")
        vocab[i] = _token(text, f"{vpath}: key {text!r}")
    merges: list[tuple[bytes, bytes]] = []
    try:
        lines = mpath.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as e:
        # a character begun in the last bytes and never finished: the file was cut there
        cut = (
            " (it ends inside a character: cut short?)"
            if e.reason == "unexpected end of data"
            else ""
        )
        raise ValueError(f"{mpath}: not UTF-8 ({e}){cut}") from None
    known = set(vocab.values())
    for n, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line or (n == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError(
                f"{mpath}: line {n}: expected two tokens separated by a space, got {line!r}"
            )
        where = f"{mpath}: line {n}"
        left, right = _token(parts[0], where), _token(parts[1], where)
        for side in (left, right, left + right):
            if side not in known:
                raise ValueError(f"{where}: {side!r} is not a token of {vpath.name}")
        merges.append((left, right))
    return vocab, merges


def _text(token: bytes) -> str:
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


def write(tok: Tokenizer, folder: PathLike) -> None:
    """Writes ``vocab.json``, ``merges.txt`` and ``bytepair.json`` into ``folder``.

    Ids are kept. The three files are written to temporary names first and renamed only
    when all are written, so an interrupted save leaves the old files as they were.

    Raises:
        ValueError: a token longer than one byte that no merge makes and that is not special
            (GPT-2 files define tokens by their merges), ids with gaps, or two ids with the
            same bytes (``vocab.json`` maps each token to one id).
        OSError: the folder cannot be made or written.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise FileExistsError(
            f"cannot write GPT-2 files into {folder}: it is a file, and the format writes a "
            f"folder ({VOCAB}, {MERGES}, {SIDECAR})"
        )
    vocab, merges, specials = tok.vocab, tok.merges, tok.special_tokens
    check_reachable(vocab, merges, specials, "cannot write GPT-2 files")
    check_dense(vocab, specials, "cannot write GPT-2 files")
    check_no_duplicate_tokens(vocab, "cannot write GPT-2 files")
    # special tokens too, as GPT-2 has <|endoftext|> (ASCII but for the space is as is)
    encoder = {_text(b): i for i, b in sorted(vocab.items())}
    lines = ["#version: 0.2"] + [f"{_text(a)} {_text(b)}" for a, b in merges]
    sidecar = {"format": SIDECAR_FORMAT, "version": 1, "pattern": tok.pattern}
    sidecar["special_tokens"] = specials
    # the folders this save makes, outermost first: taken away again if it fails (QA: a
    # full disk left an empty folder behind)
    made = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic_many(
            {
                folder / VOCAB: dump_json(encoder, indent=None),
                folder / MERGES: "\n".join(lines) + "\n",
                folder / SIDECAR: dump_json(sidecar),
            }
        )
    except BaseException:
        for p in reversed(made):  # (innermost first; one the failure never made is skipped)
            try:
                if p.is_dir():
                    p.rmdir()  # (only if still empty: another process may have put files there)
            except OSError:
                break
        raise


def _files(folder: Path) -> tuple[Path, Path] | None:
    for vocab, merges in ((VOCAB, MERGES), OPENAI_NAMES):
        if (folder / vocab).is_file() and (folder / merges).is_file():
            return folder / vocab, folder / merges
    return None


def is_folder(folder: Path) -> bool:
    """Whether ``folder`` holds GPT-2 files (``vocab.json`` + ``merges.txt``, or OpenAI's
    ``encoder.json`` + ``vocab.bpe``)."""
    return _files(folder) is not None


def load_folder(folder: PathLike) -> Tokenizer:
    """Reads a folder of GPT-2 files (see the module for where pattern and specials come from).

    Raises:
        ValueError: a malformed file, a token that no merge makes and that is not special,
            or a special token whose id differs from its ``vocab.json`` id.
    """
    from ..tokenizer import Tokenizer

    folder = Path(folder)
    files = _files(folder)
    if files is None:
        raise ValueError(f"{folder}: no {VOCAB} + {MERGES} (or {' + '.join(OPENAI_NAMES)})")
    vpath, mpath = files
    vocab, merges = read(vpath, mpath)
    pattern, specials = "gpt2", _special_tokens(folder, vocab, merges)
    sidecar = folder / SIDECAR
    if sidecar.is_file():
        doc = read_json(sidecar)
        if not isinstance(doc, dict) or doc.get("format") != SIDECAR_FORMAT:
            raise ValueError(f'{sidecar}: expected "format": "{SIDECAR_FORMAT}"')
        if not isinstance(doc.get("pattern"), str) or not isinstance(
            doc.get("special_tokens"), dict
        ):
            raise ValueError(f"{sidecar}: needs a 'pattern' string and a 'special_tokens' dict")
        pattern, specials = doc["pattern"], doc["special_tokens"]
    by_bytes = {b: i for i, b in vocab.items()}
    for s, i in specials.items():
        where = f"{sidecar if sidecar.is_file() else folder}: special token {s!r}"
        check_id(i, where)
        b = s.encode("utf-8")
        if b not in by_bytes and i not in vocab:  # HF's added tokens live outside vocab.json
            vocab[i], by_bytes[b] = b, i
        elif by_bytes.get(b) != i:
            raise ValueError(f"{where}: id {i} is not its id in {vpath.name}")
    check_reachable(vocab, merges, specials, f"{vpath}")
    check_dense(vocab, specials, f"{vpath}")
    try:
        return Tokenizer(vocab, merges, special_tokens=list(specials), pattern=pattern)
    except ValueError as e:
        raise ValueError(f"{folder}: {e}") from None


def _special_tokens(
    folder: Path, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]]
) -> dict[str, int]:
    """Special tokens of a folder bytepair did not write: GPT-2's <|endoftext|> (in
    ``vocab.json``, made by no merge), HF's ``added_tokens.json``."""
    by_bytes = {b: i for i, b in vocab.items()}
    specials: dict[str, int] = {}
    if EOT.encode() in by_bytes and not any(a + b == EOT.encode() for a, b in merges):
        specials[EOT] = by_bytes[EOT.encode()]
    added = folder / ADDED_TOKENS
    if added.is_file():
        doc = read_json(added)
        if not isinstance(doc, dict):
            raise ValueError(f"{added}: expected a JSON object of token -> id")
        for s, i in doc.items():
            specials[s] = check_id(i, f"{added}: key {s!r}")
    return specials
