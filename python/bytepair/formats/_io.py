"""What every format shares: atomic writes, strict JSON reading, and the checks a vocabulary
read from a file must pass (dense ids, every token made by a merge, ids in merge order).

Error messages start with the file (and the line or key) so a user can go and look.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

PathLike = Union[str, "os.PathLike[str]"]


# ----------------------------------------------------------------------------- writing


def check_path(path: object, what: str) -> str:
    """``path`` as a ``str``: a ``str`` or ``os.PathLike`` of one; anything else (bytes, an
    int, None) is a ``TypeError`` beginning with ``what`` (``"save takes the path to write"``),
    where it failed inside, differently by caller (a bytes path: "Can't mix bytes and
    non-bytes in path components", or the suffix check's "endswith first arg must be bytes").
    """
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(name, str):
        hint = " (decode it: os.fsdecode(path))" if bytes in (type(path), type(name)) else ""
        raise TypeError(f"{what} (a str or os.PathLike), not a {type(path).__name__}{hint}")
    return name


def write_atomic(path: PathLike, data: str | bytes) -> None:
    """Writes ``data`` to ``path`` through a temporary file in the same folder and a rename.

    An interruption (an error, Ctrl-C, a crash) leaves either the old file or the new one,
    never half a file, and no temporary file behind.

    Raises:
        IsADirectoryError: ``path`` is a folder, or ends with a path separator (``"t.json/"``
            names a folder; it wrote a file ``t.json``).
        OSError: the folder cannot be written (the error names ``path``).
    """
    refuse_folder_name(path)
    write_atomic_many({Path(path): data})


# the path separators of this system (a path ending in one names a folder)
SEPARATORS = tuple(s for s in (os.sep, os.altsep) if s)


def names_a_file_as_folder(name: str) -> bool:
    """Whether ``name`` ends with a path separator and names a file (not a folder):
    ``open()`` says "Not a directory" there, where ``Path()`` drops the separator."""
    return (
        name.endswith(SEPARATORS)
        and not os.path.isdir(name)
        and os.path.lexists(name.rstrip("".join(SEPARATORS)))
    )


def refuse_folder_name(path: PathLike) -> None:
    """Raises ``IsADirectoryError`` if ``path`` ends with a path separator: it names a
    folder, where a file is to be written (``"t.json/"`` wrote a file ``t.json``); and
    ``FileNotFoundError`` for an empty name, as ``open("")``."""
    name = os.fspath(path)
    if not name:
        # (as open("") says; it was "is a folder; not replacing it: <the current folder>")
        raise FileNotFoundError(2, "No such file or directory", name)
    if name.endswith(SEPARATORS):
        raise IsADirectoryError(
            21, "names a folder (it ends with a path separator); a file is written here", name
        )


def new_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: 0666 less the process umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def replaceable_path(path: PathLike) -> Path:
    """The file an atomic write to ``path`` replaces: through symlinks, the file they name.

    A rename over a folder, device or fifo would turn it into a regular file, so those are
    refused (a write through a symlink keeps the link).

    Raises:
        IsADirectoryError: ``path`` is a folder.
        FileNotFoundError: the folder of ``path`` (or of the file its symlink names) does not
            exist.
        NotADirectoryError: that folder's name is a file's (``"c.txt/t.json"``).
        OSError: ``path`` is a device, fifo or socket.
    """
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        # (also /dev/stdout, whose real path is a pipe's, which names no folder)
        raise OSError(f"{os.fspath(path)}: is not a regular file (a device or fifo)")
    real = Path(os.path.realpath(path))
    if real.parent.exists() and not real.parent.is_dir():
        raise NotADirectoryError(20, f"is a file, not a folder for {real.name!r}", str(real.parent))
    if not real.parent.is_dir():  # (name the path given, not our temporary file)
        why = (
            f"No such folder for the file this symlink names ({real})"
            if os.path.islink(path)
            else "No such folder for the output"
        )
        raise FileNotFoundError(2, why, os.fspath(path))
    if real.is_dir():
        raise IsADirectoryError(21, "is a folder; not replacing it", os.fspath(real))
    if real.exists() and not real.is_file():
        raise OSError(f"{real}: is not a regular file (a device or fifo); not replacing it")
    return real


def temporary_beside(path: PathLike, prefix: str) -> tuple[int, str]:
    """A new file (open descriptor, name) in the folder of ``path``, to be renamed over it,
    with the permissions ``open`` gives a new file (``mkstemp`` makes 0600).

    Raises:
        OSError: the folder cannot be written; the error names ``path``, the file asked
            for, not the temporary one (QA: "/ro/x.npy.9elv6ic3.tmp: Read-only file system").
    """
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    except OSError as e:
        raise type(e)(e.errno, e.strerror, os.fspath(path)) from None
    os.fchmod(fd, new_file_mode())
    return fd, tmp


def write_atomic_many(files: dict[Path, str | bytes]) -> None:
    """Writes several files as ``write_atomic`` does, all temporary files first.

    The renames come only once every file is written and synced, so a failure while writing
    (a full disk, Ctrl-C) leaves all the old files as they were: a GPT-2 folder never ends
    up with a new ``vocab.json`` beside an old ``merges.txt``.
    """
    files = {replaceable_path(p): d for p, d in files.items()}
    temps: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            raw = data.encode("utf-8") if isinstance(data, str) else data
            fd, tmp = temporary_beside(path, f".{path.name}.")
            temps.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
        while temps:
            tmp, path = temps[0]
            os.replace(tmp, path)
            temps.pop(0)
    except BaseException:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise


def dump_json(doc: Any, indent: int | None = 1) -> str:
    """JSON text as the formats write it: UTF-8 characters as they are, a final newline."""
    return json.dumps(doc, ensure_ascii=False, indent=indent) + "\n"


# ----------------------------------------------------------------------------- reading


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(Exception):
    pass


def parse_json(data: bytes, path: PathLike) -> Any:
    """Parses JSON strictly: a truncated file, bad syntax or a key given twice in one object
    (which ``json`` would silently let the last one win) is a ``ValueError`` naming ``path``.
    """
    try:
        return json.loads(data, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as e:
        raise ValueError(f"{path}: key {e.args[0]!r} appears twice in one JSON object") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a tokenizer file (JSON nested too deeply)") from None
    except ValueError as e:  # (an int of over 4300 digits: Python's limit on int parsing)
        raise ValueError(f"{path}: not a tokenizer file ({e})") from None


def read_json(path: PathLike) -> Any:
    """``parse_json`` of the file at ``path``."""
    return parse_json(Path(path).read_bytes(), path)


# ----------------------------------------------------------------------------- checks


def check_id(value: Any, where: str) -> int:
    """A token id: an int in [0, 2**32)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise ValueError(f"{where}: id must be an int in [0, 2**32), got {value!r}")
    return value


def check_dense(ids: Iterable[int], specials: Mapping[str, int], where: str) -> None:
    """Ids must be dense: every id below the largest ordinary token's is used.

    Special tokens may lie above with gaps (tiktoken's cl100k_base and o200k_base put theirs
    at 100257.. and 199999/200018), and fill gaps among the ordinary ids (p50k_base's
    ``<|endoftext|>`` is 50256).
    """
    ordinary = set(ids) - set(specials.values())
    if not ordinary:
        return
    top = max(ordinary)
    used = ordinary | set(specials.values())
    if len([i for i in used if i <= top]) != top + 1:
        missing = next(i for i in range(top + 1) if i not in used)
        raise ValueError(
            f"{where}: ids are not dense: id {missing} is missing below the largest token id "
            f"{top} (a special token may fill it: name it in special_tokens)"
        )


def check_holes_before_specials(
    ids: Iterable[int], specials: Mapping[str, int], where: str
) -> None:
    """Unused ids may only be room left right before a special token's id.

    Every run of unused ids (from id 0 on) must end just below a special token: tiktoken's
    cl100k_base leaves 100256 unused before ``<|endoftext|>`` = 100257, o200k_base leaves
    199998 and 200000..200017, and continued training from them keeps those holes and adds
    its tokens after the largest id. A hole below an ordinary token (an id edited by hand, a
    vocabulary cut short) is refused. Weaker than ``check_dense``, which also refuses ordinary
    tokens after the special tokens.
    """
    special_ids = set(specials.values())
    prev = -1
    for i in sorted(set(ids)):
        if i > prev + 1 and i not in special_ids:
            hole = f"id {prev + 1} is" if i == prev + 2 else f"ids {prev + 1}..{i - 1} are"
            raise ValueError(
                f"{where}: ids are not dense: {hole} missing below token {i}, which is not a "
                "special token (unused ids may only be room left before a special token's id)"
            )
        prev = i


def check_no_duplicate_tokens(
    vocab: Mapping[int, bytes], where: str, special_ids: Iterable[int] = ()
) -> None:
    """No two ids may share the same token bytes, except a special token's (a one-byte
    special token keeps its own id beside the byte's)."""
    seen: dict[bytes, int] = {}
    specials = set(special_ids)
    for i, b in sorted(vocab.items()):
        if i in specials:
            continue
        if b in seen:
            raise ValueError(f"{where}: token {b!r} appears twice, as ids {seen[b]} and {i}")
        seen[b] = i


def check_reachable(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    specials: Mapping[str, int],
    where: str,
    standalone_ok: bool = False,
) -> None:
    """Every ordinary token longer than one byte must be made by a merge.

    BPE can only produce a token by merging two others, so a token no merge makes is never
    output: the file is damaged, or the token is a special token nobody declared.

    With ``standalone_ok``, a token that no two tokens make either (no split into two
    tokens, as GPT-2's ``<|endoftext|>`` read as ordinary) is let through: it is output only
    where a whole pre-token equals it. One that two tokens could make but no merge does
    still means a merge is missing.
    """
    made = {a + b for a, b in merges}
    special_ids = set(specials.values())
    tokens = set(vocab.values()) if standalone_ok else set()
    for i, b in sorted(vocab.items()):
        if len(b) > 1 and i not in special_ids and b not in made:
            split = next(
                ((b[:k], b[k:]) for k in range(1, len(b)) if {b[:k], b[k:]} <= tokens), None
            )
            if standalone_ok and split is None:
                continue
            why = f"; {split[0]!r} + {split[1]!r} are tokens" if split else ""
            raise ValueError(
                f"{where}: token {i} ({b!r}) is made by no merge (unreachable{why}); "
                "if it is a special token, declare it as one, else the merges are incomplete "
                "(a merges file cut short?)"
            )


def merge_order_ok(vocab: Mapping[int, bytes], merges: Sequence[tuple[bytes, bytes]]) -> bool:
    """Whether ids sort the merged tokens in merge order (then rank = id, as tiktoken wants)."""
    rank: dict[bytes, int] = {}
    for r, (a, b) in enumerate(merges):
        rank.setdefault(a + b, r)
    by_id = [rank[b] for i, b in sorted(vocab.items()) if b in rank]
    return all(x < y for x, y in zip(by_id, by_id[1:]))
