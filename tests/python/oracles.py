"""tiktoken encodings built offline from the shared data folder, for use as test oracles.

tiktoken normally downloads its rank files; here they come from ``<data>/tiktoken/``
(byte-identical to OpenAI's published files, see the data README), together with the
``pat_str`` and special tokens of ``<data>/tiktoken/encodings.json``. Nothing touches the
network, and nothing is written to tiktoken's download cache.

Also builds a tiktoken ``Encoding`` from any bytepair tokenizer, so trained tokenizers can be
checked against tiktoken's encoder too.
"""

from __future__ import annotations

import base64
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING

import tiktoken

if TYPE_CHECKING:
    import bytepair

__all__ = [
    "ENCODINGS",
    "encoding_info",
    "from_tokenizer",
    "load_ranks",
    "tiktoken_encoding",
    "tiktoken_with_specials",
]

# bytepair pattern preset -> the tiktoken encoding that uses it
ENCODINGS = {"gpt2": "r50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}


def load_ranks(path: str | Path) -> dict[bytes, int]:
    """Reads a ``.tiktoken`` rank file (``base64(token) rank`` per line).

    Parses the file exactly as ``tiktoken.load.load_tiktoken_bpe`` does, but without
    copying it into tiktoken's cache directory.
    """
    contents = Path(path).read_bytes()
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in contents.splitlines() if line)
    }


def encoding_info(data_dir: Path, name: str) -> dict:
    """The entry for ``name`` (e.g. ``"r50k_base"``) in ``<data>/tiktoken/encodings.json``."""
    info = json.loads((data_dir / "tiktoken" / "encodings.json").read_text(encoding="utf-8"))
    return info[name]


@functools.cache
def _encoding_cached(data_dir: str, name: str) -> tiktoken.Encoding:
    info = encoding_info(Path(data_dir), name)
    ranks = load_ranks(Path(data_dir) / "tiktoken" / info["file"])
    return tiktoken.Encoding(
        name,
        pat_str=info["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=dict(info["special_tokens"]),
        explicit_n_vocab=info["explicit_n_vocab"],
    )


def tiktoken_encoding(data_dir: Path, name: str = "r50k_base") -> tiktoken.Encoding:
    """tiktoken's encoding ``name`` built from the shared rank files (cached per process).

    Args:
        data_dir: the shared data folder (the ``data_dir`` fixture).
        name: ``"r50k_base"`` (= tiktoken's ``gpt2``), ``"p50k_base"``, ``"cl100k_base"`` or
            ``"o200k_base"``; a bytepair preset name (``"gpt2"``, ``"cl100k"``, ``"o200k"``)
            is accepted too.

    Returns:
        a ``tiktoken.Encoding`` with the official ``pat_str`` and special tokens.
    """
    return _encoding_cached(str(data_dir), ENCODINGS.get(name, name))


def from_tokenizer(tok: bytepair.Tokenizer, name: str = "bytepair") -> tiktoken.Encoding:
    """A tiktoken ``Encoding`` with the same vocabulary, pattern and specials as ``tok``.

    Ordinary tokens become ``mergeable_ranks`` with rank = id. For a trained tokenizer
    (ids: bytes, then specials, then merges in learned order) and for GPT-2 this is exactly
    the merge priority, so tiktoken's encoder is an independent oracle for ``tok.encode``.
    """
    specials = tok.special_tokens
    special_ids = set(specials.values())
    ranks = {b: i for i, b in tok.vocab.items() if i not in special_ids}
    return tiktoken.Encoding(
        name, pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=specials
    )


def tiktoken_with_specials(
    data_dir: Path, special_tokens: dict[str, int], name: str = "r50k_base"
) -> tiktoken.Encoding:
    """tiktoken encoding ``name`` with its own special tokens replaced by ``special_tokens``.

    For example GPT-2 with ``{"<|endoftext|>": 50256, "<|pad|>": 50257}``.
    """
    base = tiktoken_encoding(data_dir, name)
    return tiktoken.Encoding(
        f"{base.name}+{len(special_tokens)}",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens=dict(special_tokens),
    )
