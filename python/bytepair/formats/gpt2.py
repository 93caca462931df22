"""GPT-2 ``vocab.json`` + ``merges.txt``, written in GPT-2's byte <-> unicode alphabet."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Union

from ..reference.gpt2_bytes import unicode_to_bytes

PathLike = Union[str, "os.PathLike[str]"]


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
    try:
        raw = json.loads(vpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{vpath}: not valid JSON ({e})") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{vpath}: expected a JSON object of token -> id")
    vocab: dict[int, bytes] = {}
    for text, i in raw.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise ValueError(f"{vpath}: key {text!r}: id must be a non-negative int, got {i!r}")
        if i in vocab:
            raise ValueError(f"{vpath}: key {text!r}: id {i} appears twice")
        vocab[i] = _token(text, f"{vpath}: key {text!r}")
    merges: list[tuple[bytes, bytes]] = []
    try:
        lines = mpath.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise ValueError(f"{mpath}: not UTF-8 ({e})") from None
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
