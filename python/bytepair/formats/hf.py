"""HF tokenizers ``tokenizer.json`` for byte-level BPE (GPT-2 and Split + ByteLevel styles).

Written so that ``tokenizers.Tokenizer.from_file`` encodes as bytepair does:

- ``pre_tokenizer``: ``Split`` with the pattern (``Isolated``: each match is a pre-token),
  then ``ByteLevel(use_regex=False)``, which only maps bytes to GPT-2's printable alphabet.
- ``model``: ``BPE`` with ``ignore_merges`` (a pre-token that is a token is that token, as
  in tiktoken) and every merge bytepair can apply: bytepair, like tiktoken, merges *any*
  adjacent pair whose concatenation is a token, lowest rank first. So each token gets all
  its splits into two tokens, its own merge first, then the others; the blocks are in rank
  order. Reading such a file keeps each token's first merge, which gives back the original
  merges.
- ``added_tokens``: the special tokens (HF splits them out first, longest match first).
- ``decoder``: ``ByteLevel``; no normalizer, no post-processor.

HF's ``Split`` runs the pattern with Oniguruma, not Rust's regex: the presets are written in
an equivalent form Oniguruma reads the same way (no possessive quantifiers: in Oniguruma's
Ruby syntax ``{1,3}+`` means "one or more of ``{1,3}``"); a custom regex is written as is
and must mean the same to Oniguruma (the README says where they differ).

Reading accepts GPT-2 style files (``ByteLevel`` pre-tokenizer with its built-in regex) and
the Split + ByteLevel style above; anything that makes HF's ids differ from bytepair's is a
``ValueError`` naming the key and why: a normalizer, ``add_prefix_space``, byte fallback,
dropout, another model; an added token with ``lstrip``, ``rstrip`` or ``single_word``
(HF then matches it with the spaces around it, or only as a whole word); a
``post_processor`` that adds tokens to every encoding (``TemplateProcessing`` with a special
token in its ``single`` template, ``BertProcessing``, ``RobertaProcessing``); ``truncation``
or ``padding``. Accepted because HF's ids stay the same: a ``ByteLevel`` post-processor (it
only trims offsets), ``normalized: true`` (the text is not changed without a normalizer),
except where a normalized added token overlaps one that is not: HF matches those first,
bytepair takes the longest leftmost match of all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Union

from .. import _core
from ..reference.gpt2_bytes import bytes_to_unicode, unicode_to_bytes
from ._io import (
    check_dense,
    check_id,
    check_no_duplicate_tokens,
    check_reachable,
    dump_json,
    read_json,
    write_atomic,
)

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]
Fail = Callable[[str, str], ValueError]  # (key, what is wrong) -> the error to raise

# The regex of HF's ByteLevel(use_regex=True) pre-tokenizer: GPT-2's, as OpenAI wrote it.
HF_GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
# cl100k_base's pattern without possessive quantifiers (as tiktoken first published it)
HF_CL100K_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# preset regex -> the form written into tokenizer.json (o200k's has no possessive: as is)
_TO_HF = {
    _core.GPT2_PATTERN: HF_GPT2_PATTERN,
    _core.CL100K_PATTERN: HF_CL100K_PATTERN,
}
_FROM_HF = {v: k for k, v in _TO_HF.items()}


def hf_pattern(pattern: str) -> str:
    """The regex written into tokenizer.json for a bytepair pattern."""
    return _TO_HF.get(pattern, pattern)


def _text(token: bytes, table: dict[int, str]) -> str:
    return "".join(table[b] for b in token)


# ------------------------------------------------------------------------------ writing


def all_merges(tok: Tokenizer) -> Iterator[tuple[bytes, bytes]]:
    """Every merge bytepair can apply, in priority order (see the module docstring)."""
    merges = tok.merges
    first: dict[bytes, tuple[bytes, bytes]] = {}
    for a, b in merges:
        first.setdefault(a + b, (a, b))
    tokens = set(tok.vocab.values()) - {
        b for s, i in tok.special_tokens.items() if (b := tok.vocab[i]) not in first
    }
    rank = {t: r for r, t in enumerate(first)}  # first merges in order: rank order
    for token, own in first.items():
        yield own
        others = [
            (token[:k], token[k:])
            for k in range(1, len(token))
            if (token[:k], token[k:]) != own and token[:k] in tokens and token[k:] in tokens
        ]
        others.sort(key=lambda p: (rank.get(p[0], -1), p[0], rank.get(p[1], -1), p[1]))
        yield from others


def to_document(tok: Tokenizer, where: str = "cannot write tokenizer.json") -> dict[str, Any]:
    """The tokenizer.json document of ``tok``; errors start with ``where``.

    Raises:
        ValueError: a token no merge makes that is not special, ids with gaps, two ids with
            the same bytes, or a special token whose text is already another token's key in
            the vocabulary.
    """
    vocab, specials = tok.vocab, tok.special_tokens
    check_reachable(vocab, tok.merges, specials, where)
    check_dense(vocab, specials, where)
    check_no_duplicate_tokens(vocab, where)
    table = bytes_to_unicode()
    special_ids = set(specials.values())
    merged = {a + b for a, b in tok.merges}
    model_vocab: dict[str, int] = {}
    for i, b in sorted(vocab.items()):
        if i not in special_ids or len(b) == 1 or b in merged:
            model_vocab.setdefault(_text(b, table), i)
    # HF gives an added token the id its text has in the model vocabulary
    for s, i in sorted(specials.items(), key=lambda item: item[1]):
        if model_vocab.setdefault(s, i) != i:
            raise ValueError(
                f"{where}: special token {s!r} (id {i}) is spelt like "
                f"token {model_vocab[s]} in GPT-2's byte alphabet"
            )
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": s,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for s, i in sorted(specials.items(), key=lambda item: item[1])
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": hf_pattern(tok.pattern)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": False,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": model_vocab,
            # "left right": the byte alphabet has no space, so one string per merge reads
            # in every tokenizers version
            "merges": [f"{_text(a, table)} {_text(b, table)}" for a, b in all_merges(tok)],
        },
    }


def write(tok: Tokenizer, path: PathLike) -> None:
    """Writes ``tok`` as a HF ``tokenizer.json`` (atomically). Raises as ``to_document``."""
    write_atomic(path, dump_json(to_document(tok, f"cannot write {os.fspath(path)}"), indent=None))


# ------------------------------------------------------------------------------ reading


def is_document(doc: Any) -> bool:
    """Whether a parsed JSON document is a HF tokenizer file."""
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict) and "added_tokens" in doc


def from_document(doc: dict[str, Any], path: PathLike) -> Tokenizer:
    """Builds a tokenizer from a parsed tokenizer.json; ``path`` is named in errors.

    Raises:
        ValueError: a model other than byte-level BPE, a setting bytepair cannot reproduce,
            or a malformed vocabulary, merge or added token (names the key).
    """
    from ..tokenizer import Tokenizer

    def fail(key: str, msg: str) -> ValueError:
        return ValueError(f"{path}: {key}: {msg}")

    model = doc["model"]
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise fail("model.type", f"{kind!r} is not a BPE model (bytepair reads byte-level BPE)")
    for key, ok in (
        ("dropout", (None, 0, 0.0)),
        ("continuing_subword_prefix", (None, "")),
        ("end_of_word_suffix", (None, "")),
        ("byte_fallback", (None, False)),
    ):
        if model.get(key) not in ok:
            raise fail(f"model.{key}", f"{model[key]!r} is not supported (byte-level BPE only)")
    if doc.get("normalizer") is not None:
        raise fail("normalizer", "bytepair has no normalizers; this file changes text first")
    for key, what in (("truncation", "cuts"), ("padding", "pads")):
        if doc.get(key) is not None:
            raise fail(key, f"HF {what} every encoding to a length; bytepair does not")
    _check_post_processor(doc.get("post_processor"), "post_processor", fail)
    pattern = _pattern(doc.get("pre_tokenizer"), fail)

    added = doc.get("added_tokens") or []
    if not isinstance(added, list):
        raise fail("added_tokens", "must be a list")
    specials: dict[str, int] = {}
    for n, entry in enumerate(added):
        where = f"added_tokens[{n}]"
        if not (isinstance(entry, dict) and isinstance(entry.get("content"), str)):
            raise fail(where, "must be an object with a 'content' string and an 'id'")
        if not entry["content"] or entry["content"] in specials:
            raise fail(where, f"empty or repeated token {entry['content']!r}")
        for flag, why in _ADDED_TOKEN_FLAGS:
            if entry.get(flag, False) is not False:
                raise fail(f"{where}.{flag}", f"{entry[flag]!r}: {why}")
        specials[entry["content"]] = check_id(entry.get("id"), f"{path}: {where}")
    _check_normalized_overlap(added, fail)

    raw_vocab = model.get("vocab")
    if not isinstance(raw_vocab, dict):
        raise fail("model.vocab", "must be an object of token -> id")
    table = unicode_to_bytes()
    vocab: dict[int, bytes] = {}
    for text, i in raw_vocab.items():
        where = f"model.vocab[{text!r}]"
        check_id(i, f"{path}: {where}")
        if specials.get(text) == i:
            token = text.encode("utf-8")  # an added token's entry, in plain text
        else:
            try:
                token = bytes(table[c] for c in text)
            except KeyError as e:
                raise fail(
                    where, f"character {e.args[0]!r} is not in GPT-2's byte alphabet"
                ) from None
        # (one token may be spelled twice: a special token that is also an ordinary one,
        # "\n" as an added token and "Ċ" in the byte alphabet)
        if vocab.get(i, token) != token:
            raise fail(where, f"id {i} appears twice")
        vocab[i] = token
    for s, i in specials.items():
        if i not in vocab:
            vocab[i] = s.encode("utf-8")
        elif vocab[i] != s.encode("utf-8"):
            raise fail("added_tokens", f"{s!r} has id {i}, which is token {vocab[i]!r}")
    check_no_duplicate_tokens(vocab, f"{path}: model.vocab")
    merges = _merges(model.get("merges"), table, set(vocab.values()), fail)
    check_reachable(vocab, merges, specials, f"{path}: model.vocab")
    check_dense(vocab, specials, f"{path}: model.vocab")
    try:
        return Tokenizer(vocab, merges, special_tokens=list(specials), pattern=pattern)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def _pattern(pre: Any, fail: Fail) -> str:
    """The bytepair pattern of a pre_tokenizer entry (GPT-2 style or Split + ByteLevel)."""
    steps = pre.get("pretokenizers") if isinstance(pre, dict) else None
    if isinstance(pre, dict) and pre.get("type") == "Sequence" and isinstance(steps, list):
        if len(steps) == 1:
            pre, steps = steps[0], None
    if isinstance(pre, dict) and pre.get("type") == "ByteLevel" and steps is None:
        _check_byte_level(pre, "pre_tokenizer", fail)
        if pre.get("use_regex", True) is False:
            raise fail("pre_tokenizer", "ByteLevel without a regex splits nothing")
        return "gpt2"  # HF's built-in regex is GPT-2's
    # (QA: a "pretokenizers" that is no list was a bare TypeError, naming no file)
    if isinstance(steps, list) and len(steps) == 2:
        split, byte_level = steps
        ok = (
            isinstance(split, dict)
            and split.get("type") == "Split"
            and isinstance(split.get("pattern"), dict)
            and isinstance(split["pattern"].get("Regex"), str)
            and split.get("behavior") == "Isolated"
            and not split.get("invert", False)
            and isinstance(byte_level, dict)
            and byte_level.get("type") == "ByteLevel"
            and byte_level.get("use_regex", True) is False
        )
        if ok:
            _check_byte_level(byte_level, "pre_tokenizer.pretokenizers[1]", fail)
            regex = split["pattern"]["Regex"]
            return _FROM_HF.get(regex, regex)
    raise fail(
        "pre_tokenizer",
        "expected ByteLevel (GPT-2 style) or Sequence[Split(Regex, Isolated), "
        "ByteLevel(use_regex=false)]",
    )


# added-token settings bytepair cannot reproduce: it matches special tokens exactly, anywhere
_ADDED_TOKEN_FLAGS = (
    ("lstrip", "HF takes the spaces left of the token into it; bytepair matches it exactly"),
    ("rstrip", "HF takes the spaces right of the token into it; bytepair matches it exactly"),
    ("single_word", "HF matches the token only as a whole word; bytepair matches it anywhere"),
)


def _check_normalized_overlap(added: list[dict[str, Any]], fail: Fail) -> None:
    """HF matches the added tokens with ``normalized: false`` first, then the others in what
    is left; bytepair takes the longest leftmost match of all. Without a normalizer the two
    agree unless a normalized token would win over one that is not: it starts before it and
    overlaps it, or starts at the same place and is longer."""
    normalized = [(n, e["content"]) for n, e in enumerate(added) if e.get("normalized", True)]
    exact = [e["content"] for e in added if not e.get("normalized", True)]
    if not normalized or not exact:
        return
    for n, text in normalized:
        for k in range(len(text)):
            tail = text[k:]
            for other in exact:
                if (k > 0 or len(text) > len(other)) and (
                    other.startswith(tail) or tail.startswith(other)
                ):
                    raise fail(
                        f"added_tokens[{n}].normalized",
                        f"{text!r} is normalized and overlaps {other!r}, which is not: HF "
                        "matches the tokens that are not normalized first, bytepair the "
                        "longest leftmost one, so they split such text differently",
                    )


def _check_post_processor(entry: Any, key: str, fail: Fail) -> None:
    """A post-processor is fine if HF's ids stay bytepair's: none, ``ByteLevel`` (offsets
    only), a ``TemplateProcessing`` whose single-text template adds no token, or a
    ``Sequence`` of those."""
    if entry is None:
        return
    kind = entry.get("type") if isinstance(entry, dict) else None
    if kind == "ByteLevel":
        return
    if kind == "Sequence" and isinstance(entry.get("processors"), list):
        for n, step in enumerate(entry["processors"]):
            _check_post_processor(step, f"{key}.processors[{n}]", fail)
        return
    if kind == "TemplateProcessing" and isinstance(entry.get("single"), list):
        added = [
            piece["SpecialToken"].get("id")
            for piece in entry["single"]
            if isinstance(piece, dict) and isinstance(piece.get("SpecialToken"), dict)
        ]
        if not added:
            return
        raise fail(
            f"{key}.single",
            f"HF adds {', '.join(map(repr, added))} to every encoding; bytepair does not",
        )
    if kind in ("BertProcessing", "RobertaProcessing"):
        raise fail(key, f"{kind} adds tokens to every encoding; bytepair does not")
    raise fail(key, f"{kind!r} is not supported (bytepair reads ByteLevel or no post-processor)")


def _check_byte_level(entry: dict[str, Any], key: str, fail: Fail) -> None:
    if entry.get("add_prefix_space", False):
        raise fail(f"{key}.add_prefix_space", "a space added before the text is not supported")


def _merges(
    raw: Any, table: dict[str, int], known: set[bytes], fail: Fail
) -> list[tuple[bytes, bytes]]:
    """Merges as byte pairs, keeping each token's first merge (see the module docstring)."""
    if not isinstance(raw, list):
        raise fail("model.merges", "must be a list")
    merges: list[tuple[bytes, bytes]] = []
    made: set[bytes] = set()
    for n, entry in enumerate(raw):
        where = f"model.merges[{n}]"
        if isinstance(entry, str):
            parts = entry.split(" ")
        elif isinstance(entry, list) and all(isinstance(p, str) for p in entry):
            parts = entry
        else:
            raise fail(where, f"must be 'left right' or [left, right], got {entry!r}")
        if len(parts) != 2 or not all(parts):
            raise fail(where, f"expected two tokens, got {entry!r}")
        try:
            left, right = (bytes(table[c] for c in p) for p in parts)
        except KeyError as e:
            raise fail(where, f"character {e.args[0]!r} is not in GPT-2's byte alphabet") from None
        for side in (left, right, left + right):
            if side not in known:
                raise fail(where, f"{side!r} is not a token of model.vocab")
        if left + right not in made:
            made.add(left + right)
            merges.append((left, right))
    return merges


def load(path: PathLike) -> Tokenizer:
    """Reads a tokenizer.json file. Raises ``ValueError`` as ``from_document``."""
    doc = read_json(path)
    if not is_document(doc):
        raise ValueError(f"{path}: not a HF tokenizer.json (no 'model' and 'added_tokens')")
    return from_document(doc, Path(path))
