"""Tokenizer file formats. Parsing and writing files is not hot, so it lives in Python.

- ``native``: bytepair's own versioned JSON (pattern, special tokens, vocab, merges).
- ``gpt2``: GPT-2 ``vocab.json`` + ``merges.txt`` in the byte <-> unicode alphabet.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["load"]


def load(path: str | os.PathLike[str]) -> Tokenizer:
    """Loads a tokenizer file, detecting its format from the content, not the name.

    Recognised: a bytepair native JSON file; a folder holding GPT-2 ``vocab.json`` and
    ``merges.txt``.

    Raises:
        FileNotFoundError: the path does not exist.
        ValueError: the file is not a tokenizer file of a known format, or is corrupt
            (the message names the file and what is wrong).
    """
    from ..tokenizer import Tokenizer
    from . import native

    p = Path(path)
    if p.is_dir():
        vocab, merges = p / "vocab.json", p / "merges.txt"
        if vocab.is_file() and merges.is_file():
            return Tokenizer.from_files(vocab, merges)
        raise ValueError(f"{p}: folder has no tokenizer files (expected vocab.json + merges.txt)")
    with open(p, "rb") as f:
        head = f.read(1 << 16)
    if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{":
        try:
            doc = json.loads(p.read_bytes())
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{p}: not valid JSON ({e})") from None
        except RecursionError:
            raise ValueError(f"{p}: not a tokenizer file (JSON nested too deeply)") from None
        if isinstance(doc, dict) and doc.get("format") == native.FORMAT:
            return native.from_document(doc, p)
    raise ValueError(f"{p}: not a tokenizer file of a format bytepair reads")
