"""The OpenAI encodings (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base,
o200k_harmony).

Each is a tiktoken rank file (``base64(token) rank`` per line) plus the pattern and special
tokens that tiktoken's ``openai_public.py`` gives it. Rank files are read locally, in this
order: an explicit ``path``; ``$BYTEPAIR_CACHE_DIR/<name>.tiktoken``; tiktoken's cache
(``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``, files
named by the SHA-1 of their URL, as tiktoken names them); ``$BYTEPAIR_DATA/tiktoken``. Every
file is checked against tiktoken's pinned SHA-256. When none is found and
``BYTEPAIR_OFFLINE`` is not set, the file is downloaded as tiktoken does and cached.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import tempfile
import threading
from pathlib import Path
from typing import NamedTuple, Union

from . import _core
from .tokenizer import Tokenizer

__all__ = ["encoding_for_model", "get_encoding", "list_encoding_names"]

PathLike = Union[str, "os.PathLike[str]"]
_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/"


class _Spec(NamedTuple):  # (a dataclass imported `dataclasses`, 1 MB, on every start)
    file: str  # rank file name
    sha256: str  # tiktoken's pinned hash of that file
    pattern: str
    special_tokens: dict[str, int]


_R50K = ("r50k_base", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930")
_P50K = ("p50k_base", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069")
_O200K = ("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d")
_EOT = "<|endoftext|>"
_SPECS = {
    # gpt2's data-gym files give exactly r50k_base's ranks
    "gpt2": _Spec(*_R50K, _core.GPT2_PATTERN, {_EOT: 50256}),
    "r50k_base": _Spec(*_R50K, _core.GPT2_PATTERN, {_EOT: 50256}),
    "p50k_base": _Spec(*_P50K, _core.GPT2_PATTERN, {_EOT: 50256}),
    "p50k_edit": _Spec(
        *_P50K,
        _core.GPT2_PATTERN,
        {_EOT: 50256, "<|fim_prefix|>": 50281, "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283},
    ),
    "cl100k_base": _Spec(
        "cl100k_base",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _core.CL100K_PATTERN,
        {
            _EOT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": _Spec(*_O200K, _core.O200K_PATTERN, {_EOT: 199999, "<|endofprompt|>": 200018}),
    # gpt-oss: o200k_base's ranks with the harmony chat format's special tokens, reserved ids up
    # to 201087 (<|reserved_200018|> is an alias of <|endofprompt|>: both encode to 200018)
    "o200k_harmony": _Spec(
        *_O200K,
        _core.O200K_PATTERN,
        {
            _EOT: 199999,
            "<|endofprompt|>": 200018,
            "<|startoftext|>": 199998,
            **{f"<|reserved_{i}|>": i for i in (200000, 200001, 200004, 200009, 200010, 200011)},
            "<|return|>": 200002,
            "<|constrain|>": 200003,
            "<|channel|>": 200005,
            "<|start|>": 200006,
            "<|end|>": 200007,
            "<|message|>": 200008,
            "<|call|>": 200012,
            **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
        },
    ),
}

# model name -> encoding, and name prefixes (tried in this order) -> encoding: tiktoken's
# tables (tiktoken/model.py), so that every name it knows maps the same way
_MODELS = {
    **dict.fromkeys(["o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"], "o200k_base"),
    **dict.fromkeys(
        [
            "gpt-4",
            "gpt-3.5-turbo",
            "gpt-3.5",
            "gpt-35-turbo",
            "davinci-002",
            "babbage-002",
            "text-embedding-ada-002",
            "text-embedding-3-small",
            "text-embedding-3-large",
        ],
        "cl100k_base",
    ),
    **dict.fromkeys(
        [
            "text-davinci-003",
            "text-davinci-002",
            "code-davinci-002",
            "code-davinci-001",
            "code-cushman-002",
            "code-cushman-001",
            "davinci-codex",
            "cushman-codex",
        ],
        "p50k_base",
    ),
    **dict.fromkeys(["text-davinci-edit-001", "code-davinci-edit-001"], "p50k_edit"),
    **dict.fromkeys(
        [
            "text-davinci-001",
            "text-curie-001",
            "text-babbage-001",
            "text-ada-001",
            "davinci",
            "curie",
            "babbage",
            "ada",
            "text-similarity-davinci-001",
            "text-similarity-curie-001",
            "text-similarity-babbage-001",
            "text-similarity-ada-001",
            "text-search-davinci-doc-001",
            "text-search-curie-doc-001",
            "text-search-babbage-doc-001",
            "text-search-ada-doc-001",
            "code-search-babbage-code-001",
            "code-search-ada-code-001",
        ],
        "r50k_base",
    ),
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
}
_MODEL_PREFIXES = {
    **dict.fromkeys(
        ["o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-"],
        "o200k_base",
    ),
    **dict.fromkeys(["gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-"], "cl100k_base"),
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base",
    **dict.fromkeys(
        ["ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002", "ft:babbage-002"], "cl100k_base"
    ),
}

_cache: dict[tuple[str, str], Tokenizer] = {}
# tiktoken's cache folder is under the temporary folder, which the stdlib finds once, under a
# lock of its own: found now, so that a child forked while another thread was finding it
# (its first get_encoding) does not find that lock taken for ever (QA: the child hung)
tempfile.gettempdir()
# threads asking for the same encoding at once build it once (QA: 16 first calls from 8
# threads built 9 copies, 0.2-0.4 s and megabytes each), as tiktoken's lock does
_cache_lock = threading.Lock()


def _new_lock_after_fork() -> None:
    # a child forked while another thread built an encoding would find the lock taken
    global _cache_lock
    _cache_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)


def list_encoding_names() -> list[str]:
    """The names ``get_encoding`` knows."""
    return list(_SPECS)


def encoding_for_model(model_name: str) -> Tokenizer:
    """The encoding of an OpenAI model name (``"gpt-4o"``, ``"gpt-4-0613"``, ...).

    Raises:
        KeyError: an unknown model name.
    """
    return get_encoding(encoding_name_for_model(model_name))


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding of an OpenAI model (``"gpt-4o"`` -> ``"o200k_base"``).

    Raises:
        KeyError: an unknown model name.
        TypeError: ``model_name`` is not a str.
    """
    if not isinstance(model_name, str):
        raise TypeError(f"a model name is a str, got {type(model_name).__name__}")
    if model_name in _MODELS:
        return _MODELS[model_name]
    for prefix, name in _MODEL_PREFIXES.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(
        f"no encoding known for model {model_name!r}; use get_encoding(name) with one of "
        f"{', '.join(_SPECS)}"
    )


def get_encoding(name: str, *, path: PathLike | None = None) -> Tokenizer:
    """An OpenAI encoding by name, with tiktoken's ranks, pattern and special tokens.

    Args:
        name: ``gpt2``, ``r50k_base``, ``p50k_base``, ``p50k_edit``, ``cl100k_base``,
            ``o200k_base`` or ``o200k_harmony`` (gpt-oss).
        path: the ``.tiktoken`` rank file to read (else it is looked up, see the module).

    Returns:
        a ``Tokenizer`` whose ids equal tiktoken's for every input (one per name and file,
        cached: every spelling of a path to one file, a symlink too, gives the same one).

    Raises:
        ValueError: an unknown name, a rank file whose SHA-256 is not tiktoken's, or a
            malformed rank file.
        FileNotFoundError: the rank file is nowhere locally and cannot be downloaded (the
            message says which file to put where).
        TypeError: ``name`` is not a str (tiktoken raises ValueError; here a wrong type is a
            TypeError, as in ``encoding_for_model``).
    """
    if not isinstance(name, str):  # (QA: None and 5 were a ValueError "unknown encoding None")
        raise TypeError(
            f"get_encoding: name must be a str (one of {', '.join(_SPECS)}), "
            f"got {type(name).__name__}"
        )
    if name not in _SPECS:
        raise ValueError(f"unknown encoding {name!r}; known: {', '.join(_SPECS)}")
    # a path is keyed by the file it resolves to: every spelling of it ("a/./b", "a//b", a
    # symlink, relative from here) is one entry (QA: 40 spellings of one o200k file built 40
    # copies, 869 MB); an explicit path stays an entry apart from the default lookup
    key = (name, os.path.realpath(path) if path is not None else "")
    with _cache_lock:
        return _cache[key] if key in _cache else _build(name, path, key)


def _build(name: str, path: PathLike | None, key: tuple[str, str]) -> Tokenizer:
    """Reads and builds the encoding ``name`` and keeps it in the cache under ``key``."""
    spec = _SPECS[name]
    data = _read_rank_file(spec, path)
    tok = Tokenizer._from_rank_file(data, spec.special_tokens, spec.pattern)
    if tok is None:  # not the plain form: read (or rejected, naming the line) in Python
        ranks = _parse_ranks(data, path or spec.file)
        tok = Tokenizer._from_ranks(ranks, spec.special_tokens, spec.pattern)
    tok._name = name
    tok._encoding = key  # (pickled by name and path: see Tokenizer.__getstate__)
    _cache[key] = tok
    return tok


def Encoding(  # noqa: N802 - named as tiktoken's class, which it stands in for
    name: str,
    *,
    pat_str: str,
    mergeable_ranks: dict[bytes, int],
    special_tokens: dict[str, int],
    explicit_n_vocab: int | None = None,
) -> Tokenizer:
    """A tokenizer made as ``tiktoken.Encoding(...)`` makes one: ids = ranks.

    Code written for tiktoken runs unchanged with ``bytepair`` in its place, e.g. an
    encoding extended with special tokens::

        base = bytepair.get_encoding("cl100k_base")
        enc = bytepair.Encoding(
            "cl100k_im",
            pat_str=base._pat_str,
            mergeable_ranks=base._mergeable_ranks,
            special_tokens={**base._special_tokens, "<|im_start|>": 100264},
        )

    Args:
        name: the encoding's name (``tok.name``).
        pat_str: the pre-tokenization regex (or a preset name: ``"cl100k"``, ...).
        mergeable_ranks: token bytes -> rank; the ranks are the ids, dense from 0.
        special_tokens: special token -> id (ids outside the ranks).
        explicit_n_vocab: if given, the number of tokens there must be, as in tiktoken.

    Raises:
        ValueError: the ranks or ids are not usable (see ``formats.tiktoken.from_ranks``), or
            ``explicit_n_vocab`` does not match.
        TypeError: a rank's token is not bytes.
    """
    from .formats.tiktoken import from_ranks

    for token in mergeable_ranks:
        if not isinstance(token, bytes):
            raise TypeError(f"mergeable_ranks: a token must be bytes, got {token!r}")
    if explicit_n_vocab is not None:
        n = len(mergeable_ranks) + len(special_tokens)
        if n != explicit_n_vocab:
            raise ValueError(
                f"{name}: {len(mergeable_ranks)} ranks + {len(special_tokens)} special tokens "
                f"= {n}, but explicit_n_vocab is {explicit_n_vocab}"
            )
    tok = from_ranks(mergeable_ranks, dict(special_tokens), pat_str, name)
    if explicit_n_vocab is not None and tok.n_vocab != explicit_n_vocab:
        raise ValueError(
            f"{name}: the largest id is {tok.max_token_value}, but explicit_n_vocab is "
            f"{explicit_n_vocab}"
        )
    tok._name = name
    return tok


def _tiktoken_cache_dir() -> Path:
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            return Path(os.environ[var])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _candidates(spec: _Spec) -> list[Path]:
    url = _BASE_URL + spec.file + ".tiktoken"
    out = []
    if os.environ.get("BYTEPAIR_CACHE_DIR"):
        out.append(Path(os.environ["BYTEPAIR_CACHE_DIR"]) / f"{spec.file}.tiktoken")
    tk = _tiktoken_cache_dir()
    out += [tk / hashlib.sha1(url.encode()).hexdigest(), tk / f"{spec.file}.tiktoken"]
    if os.environ.get("BYTEPAIR_DATA"):
        out.append(Path(os.environ["BYTEPAIR_DATA"]) / "tiktoken" / f"{spec.file}.tiktoken")
    elif _CHECKOUT_DATA is not None:
        out.append(_CHECKOUT_DATA / "tiktoken" / f"{spec.file}.tiktoken")
    return out


# The project's shared data folder beside a source checkout (<checkout>/../shared/data, where
# the tests find it too): a checkout works offline with no setting. Files read from it are
# checked by hash like any other; without BYTEPAIR_DATA only.
_CHECKOUT_DATA_DEFAULT = Path(__file__).resolve().parents[2].parent / "shared" / "data"
_CHECKOUT_DATA: Path | None = _CHECKOUT_DATA_DEFAULT


def _read_rank_file(spec: _Spec, path: PathLike | None) -> bytes:
    if path is not None:
        data = Path(path).read_bytes()
        _check_hash(data, spec, Path(path))
        return data
    # a damaged copy in a cache is passed over, as tiktoken fetches it again
    damaged: ValueError | None = None
    for candidate in _candidates(spec):
        if candidate.is_file():
            data = candidate.read_bytes()
            try:
                _check_hash(data, spec, candidate)
            except ValueError as e:
                damaged = damaged or e
                continue
            return data
    try:
        return _download(spec)
    except FileNotFoundError:
        if damaged is not None:
            raise damaged from None
        raise


def encodings_of_rank_file(sha256: str) -> list[str]:
    """The names of the encodings whose rank file has this SHA-256 (hex): gpt2 and r50k_base
    share one, as do o200k_base and o200k_harmony; none for any other file."""
    return [name for name, spec in _SPECS.items() if spec.sha256 == sha256]


def _check_hash(data: bytes, spec: _Spec, where: Path) -> None:
    got = hashlib.sha256(data).hexdigest()
    if got != spec.sha256:
        other = [_SPECS[name].file for name in encodings_of_rank_file(got)]
        what = f"it is {other[0]}.tiktoken" if other else "the file is damaged or another encoding"
        raise ValueError(
            f"{where}: SHA-256 {got} is not that of tiktoken's {spec.file}.tiktoken "
            f"({spec.sha256}); {what}"
        )


def _download(spec: _Spec) -> bytes:
    url = _BASE_URL + spec.file + ".tiktoken"
    target = _candidates(spec)[0]
    hint = (
        f"the rank file {spec.file}.tiktoken was not found; put it at {target} "
        f"(or set BYTEPAIR_CACHE_DIR to its folder, or BYTEPAIR_DATA to a data folder "
        f"holding tiktoken/{spec.file}.tiktoken, such as the shared/data folder beside a "
        f"bytepair checkout, or pass path=...)"
    )
    if os.environ.get("BYTEPAIR_OFFLINE"):
        raise FileNotFoundError(hint + "; downloading is off (BYTEPAIR_OFFLINE)")
    # (imported here: urllib.request loads ssl, 3 MB of every process that imports bytepair)
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=15) as response:
            data = response.read()
    except OSError as e:
        raise FileNotFoundError(f"{hint}; downloading it failed: {e}") from None
    _check_hash(data, spec, Path(url))
    cache = _tiktoken_cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f".{spec.file}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, cache / hashlib.sha1(url.encode()).hexdigest())
    except OSError:
        pass  # a cache we cannot write is not an error
    return data


def _parse_ranks(data: bytes, where: PathLike) -> dict[bytes, int]:
    """``base64(token) rank`` lines -> {token bytes: rank}.

    Raises:
        ValueError: a malformed line, or a token or rank given twice (names the line; an
            error in a last line with no newline says the file looks truncated).
    """
    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}  # rank -> line
    lines = data.splitlines()
    # a file cut off mid-line ends in a line with no newline: an error there most likely
    # comes from the cut (QA: cl100k cut in "IGV4aXRlZA== 52383" said "rank 52 appears twice")
    cut = len(lines) if data and not data.endswith((b"\n", b"\r")) else 0

    def bad(n: int, what: str) -> ValueError:
        if n == cut:
            what = f"the file looks truncated (cut off in its last line, no newline): {what}"
        return ValueError(f"{where}: line {n}: {what}")

    for n, line in enumerate(lines, start=1):
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            token, rank = base64.b64decode(parts[0], validate=True), int(parts[1])
        except (ValueError, binascii.Error):
            raise bad(n, f"expected 'base64-token rank', got {line[:60]!r}") from None
        if rank < 0:
            raise bad(n, f"rank {rank} is negative")
        if token in ranks:
            raise bad(n, f"token {token!r} appears twice (line {seen_ranks[ranks[token]]})")
        if rank in seen_ranks:
            raise bad(n, f"rank {rank} appears twice (line {seen_ranks[rank]})")
        ranks[token] = rank
        seen_ranks[rank] = n
    return ranks
