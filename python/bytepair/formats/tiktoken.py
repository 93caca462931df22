"""tiktoken ``.tiktoken`` rank files, and ``tiktoken.Encoding`` objects.

A rank file has one ``base64(token) rank`` line per ordinary token, by rank; the rank is
both the token's id and its merge priority (lower merges first). It holds nothing else:
no pattern and no special tokens. So reading one needs the pattern named (there is no
safe default: the wrong pattern encodes differently without any error), and special
tokens are given separately, as tiktoken's ``Encoding(pat_str=..., special_tokens=...)``
takes them. tiktoken itself is imported only by ``to_encoding``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ._io import (
    check_dense,
    check_id,
    check_no_duplicate_tokens,
    merge_order_ok,
    write_atomic,
)

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]
SpecialTokens = Union[Mapping[str, int], Iterable[str], None]

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def looks_like_rank_file(head: bytes) -> bool:
    """Whether the first bytes of a file look like ``base64 rank`` lines: most of its first
    lines are (a damaged line among them is then reported by the reader, with its number)."""
    lines = [line for line in head.splitlines()[:8] if line]
    if len(head) >= 1 << 16:
        lines = lines[:-1]  # the last line may be cut
    return 2 * sum(map(_is_rank_line, lines)) > len(lines)


def _is_rank_line(line: bytes) -> bool:
    parts = line.split()
    if len(parts) != 2 or not parts[1].isdigit():
        return False
    try:
        base64.b64decode(parts[0], validate=True)
    except ValueError:
        return False
    return True


def read_ranks(path: PathLike, sha256: str | None = None) -> dict[bytes, int]:
    """The ranks of a rank file: ``{token bytes: rank}``.

    Args:
        path: the ``.tiktoken`` file.
        sha256: the expected SHA-256 of the file (hex), as tiktoken pins it; None: no check.

    Raises:
        ValueError: a wrong hash, ``sha256`` not 64 hex digits, a malformed line, a token or
            rank given twice.
        TypeError: ``sha256`` not a str.
    """
    from ..encodings import _parse_ranks

    if sha256 is not None:
        # (QA: a hash cut short or mistyped was reported as the file's mismatch)
        if not isinstance(sha256, str):
            raise TypeError(f"sha256 must be a str of 64 hex digits, not {type(sha256).__name__}")
        if not _HEX64.fullmatch(sha256):
            raise ValueError(f"sha256 must be 64 hex digits, got {sha256!r}")
    data = Path(path).read_bytes()
    if sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != sha256.lower():
            raise ValueError(f"{path}: SHA-256 is {got}, expected {sha256}")
    ranks = _parse_ranks(data, path)
    for token, rank in ranks.items():
        check_id(rank, f"{path}: token {token!r}")
    return ranks


def load(
    path: PathLike,
    *,
    pattern: str | None = None,
    special_tokens: SpecialTokens = None,
    sha256: str | None = None,
) -> Tokenizer:
    """Reads a rank file into a ``Tokenizer`` (ids = ranks, merges recovered from the ranks).

    Args:
        path: the ``.tiktoken`` file.
        pattern: the pre-tokenization pattern: a preset name (``"gpt2"``, ``"cl100k"``,
            ``"o200k"``) or a regex. Required: the file does not say it.
        special_tokens: ``{token: id}`` (ids outside the ranks), or a list of tokens, which
            get the ids after the largest rank in order.
        sha256: the expected SHA-256 of the file (hex), or None.

    Raises:
        ValueError: no pattern given; a wrong hash; a malformed line; a token or rank given
            twice; ranks with gaps that no special token fills; a special token id that is
            also a rank.

    Warns:
        UserWarning: the file is one of OpenAI's (known by its SHA-256) and ``pattern`` is
            not the one its encoding uses: the ids will differ from tiktoken's.
    """

    if pattern is None:
        raise ValueError(
            f"{path}: a tiktoken rank file has no pre-tokenization pattern; name it, e.g. "
            f"bytepair.load({os.fspath(path)!r}, pattern='cl100k') (presets: gpt2, cl100k, "
            "o200k; or a regex)"
        )
    tok = from_ranks(read_ranks(path, sha256), special_tokens, pattern, str(path))
    _warn_if_known_with_other_pattern(path, tok.pattern)
    return tok


def from_ranks(
    ranks: Mapping[bytes, int], special_tokens: SpecialTokens, pattern: str, where: str
) -> Tokenizer:
    """A ``Tokenizer`` of tiktoken ranks (ids = ranks, merges recovered from the ranks).

    Args:
        ranks: token bytes -> rank.
        special_tokens: as ``load``.
        pattern: a preset name or a regex.
        where: names the source in error messages.

    Raises:
        ValueError: no ranks; a rank or special id outside [0, 2**32); a special token id
            that is also a rank; ranks with gaps that no special token fills; a single byte
            with no token.
    """
    from ..tokenizer import Tokenizer

    if not ranks:
        raise ValueError(f"{where}: no tokens (an empty rank file)")
    for token, rank in ranks.items():
        check_id(rank, f"{where}: token {token!r}")
    specials = _special_ids(special_tokens, max(ranks.values()) + 1)
    by_rank = {i: b for b, i in ranks.items()}
    for s, i in specials.items():
        check_id(i, f"special token {s!r}")
        # (a special token may be an ordinary token too, at its rank: "\n" at 10)
        if i in by_rank and by_rank[i] != s.encode("utf-8", "surrogatepass"):
            raise ValueError(f"{where}: special token {s!r} has id {i}, the rank of {by_rank[i]!r}")
    check_dense(ranks.values(), specials, where)
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"{where}: no token for the single byte {missing[0]:#04x}")
    try:
        return Tokenizer._from_ranks(dict(ranks), specials, pattern)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def _warn_if_known_with_other_pattern(path: PathLike, regex: str) -> None:
    """Warns when ``path`` is an OpenAI rank file (by its hash) read with another pattern."""
    from ..encodings import _SPECS, encodings_of_rank_file
    from ..train import _pattern_name

    for name in encodings_of_rank_file(hashlib.sha256(Path(path).read_bytes()).hexdigest()):
        spec = _SPECS[name]
        if spec.pattern != regex:
            warnings.warn(
                f"{path} is the rank file of {name}, whose pattern is "
                f"{_pattern_name(spec.pattern)!r}; pattern={_pattern_name(regex)!r} splits "
                f"text differently, so its ids differ from tiktoken's {name} "
                f"(bytepair.get_encoding({name!r}) reads it as tiktoken does)",
                UserWarning,
                stacklevel=4,  # the caller of bytepair.load
            )
            return


def _special_ids(special_tokens: SpecialTokens, next_id: int) -> dict[str, int]:
    if special_tokens is None:
        return {}
    if isinstance(special_tokens, Mapping):
        return dict(special_tokens)
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a dict or a list of str, not one str")
    return {s: next_id + k for k, s in enumerate(dict.fromkeys(special_tokens))}


def ordinary_ranks(tok: Tokenizer, what: str) -> dict[bytes, int]:
    """The tokenizer's ordinary tokens as tiktoken ranks (rank = id).

    Raises:
        ValueError: ids with gaps, two ids with the same bytes, or ids that do not follow the
            merge order (rank = id would then change which merge comes first); ``what`` names
            the target in the message.
    """
    vocab, specials = tok.vocab, tok.special_tokens
    special_ids = set(specials.values())
    # a special token that is also an ordinary token (a byte, or made by a merge) stays one;
    # with ranks = ids (trained, or read from ranks) special ids are never ranks
    merged = {a + b for a, b in tok.merges} if special_ids and not tok._ranks_are_ids else set()
    ranks = {b: i for i, b in vocab.items() if i not in special_ids}
    for i in special_ids:
        b = vocab[i]
        if (len(b) == 1 or b in merged) and b not in ranks:
            ranks[b] = i
    check_dense(vocab, specials, f"cannot make {what}")
    check_no_duplicate_tokens(
        {i: b for i, b in vocab.items() if i not in special_ids}, f"cannot make {what}"
    )
    if not tok._ranks_are_ids and not merge_order_ok(vocab, tok.merges):
        raise ValueError(
            f"cannot make {what}: its ranks are the ids, and this tokenizer's ids do not "
            "follow its merge order (save it as native, GPT-2 or HF files instead)"
        )
    return ranks


def write(tok: Tokenizer, path: PathLike) -> None:
    """Writes the ordinary tokens as a ``.tiktoken`` rank file, by rank (atomically).

    The pattern and the special tokens are not written (the format has no place for them).

    Raises:
        ValueError: see ``ordinary_ranks``.
    """
    ranks = ordinary_ranks(tok, "a tiktoken rank file")
    lines = [
        base64.b64encode(b) + b" " + str(r).encode()
        for b, r in sorted(ranks.items(), key=lambda item: item[1])
    ]
    write_atomic(path, b"\n".join(lines) + b"\n")


def to_encoding(tok: Tokenizer, name: str = "bytepair") -> Any:
    """A ``tiktoken.Encoding`` with ``tok``'s ranks, pattern and special tokens.

    Raises:
        ImportError: tiktoken is not installed.
        ValueError: see ``ordinary_ranks``.
    """
    try:
        import tiktoken
    except ImportError:
        raise ImportError("to_tiktoken needs tiktoken: pip install tiktoken") from None
    return tiktoken.Encoding(
        name,
        pat_str=tok.pattern,
        mergeable_ranks=ordinary_ranks(tok, "a tiktoken Encoding"),
        special_tokens=tok.special_tokens,
    )
