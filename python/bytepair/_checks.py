"""Checks of arguments shared by the public functions: integers (counts, lengths, threads),
token ids, and texts given as a mapping.

One rule for all of them (README, "The rules": bad input): any integer type is taken,
numpy's included, as ``operator.index`` reads it; a value of another type (a float, a
string, a bool) is a ``TypeError``, as Python's own functions raise; an int out of range is
a ``ValueError``; both messages name the argument.
"""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Iterator, Mapping
from types import FrameType
from typing import Any


def integer(value: object) -> int | None:
    """``value`` as an int if it is an integer of any type, numpy's too (``operator.index``
    is how Python asks for one); None for anything else, bools included."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def count_option(
    name: str, value: object, minimum: int, maximum: int | None = None, what: str | None = None
) -> int:
    """The integer option ``name`` as an int in ``[minimum, maximum]``.

    Args:
        name: the argument, as the caller wrote it (``"threads"``, ``"min_frequency"``).
        value: what was passed.
        minimum: the smallest value allowed (0 or 1 for a count).
        maximum: the largest (None: no limit); above it, the message names the limit.
        what: what the option must be, for the message (default: ``"a non-negative int"``
            for ``minimum`` 0, ``"a positive int"`` for 1).

    Raises:
        TypeError: ``value`` is not an integer (a bool is not one here).
        ValueError: it is below ``minimum`` or above ``maximum``.
    """
    n = integer(value)
    if n is None or n < minimum:
        if what is None:
            what = {0: "a non-negative int", 1: "a positive int"}.get(
                minimum, f"an int >= {minimum}"
            )
        raise (TypeError if n is None else ValueError)(f"{name} must be {what}, got {value!r}")
    if maximum is not None and n > maximum:
        raise ValueError(f"{name} {n} is too large (at most {maximum})")
    return n


def is_text(value: object) -> bool:
    """Whether ``value`` iterates as characters or byte values, never as token ids: a
    ``str``, ``bytes``, ``bytearray`` or a memoryview of bytes (a memoryview of an int array
    holds ids). Refused wherever ids are taken: bytes read as ids decoded b"ab" to GPT-2's
    ids 97 and 98, "bc"."""
    if isinstance(value, memoryview):
        return value.format in ("B", "b", "c")
    return isinstance(value, (str, bytes, bytearray))


def iter_ids(name: str, ids: object) -> Iterator[Any]:
    """An iterator over ``ids``, an iterable of token ids; one int, text (``is_text``), a
    dict (its keys would be read as the ids), None or anything not iterable is the
    ``TypeError`` of ``not_ids`` naming ``name``."""
    try:
        if is_text(ids) or isinstance(ids, Mapping):
            raise TypeError
        return iter(ids)  # type: ignore[call-overload, no-any-return]
    except TypeError:
        raise not_ids(name, ids, "an iterable") from None


def not_ids(name: str, ids: object, kind: str) -> TypeError:
    """The ``TypeError`` for an argument ``name`` that should hold token ids and does not
    (one int, a ``str``, bytes, None, ...): one wording for every method that takes ids.

    Args:
        name: the argument as the caller wrote it (``"ids"``, ``"batch[2]"``).
        ids: what was passed.
        kind: what the method takes: ``"a sequence"`` or ``"an iterable"``.
    """
    one = f" (one id: [{ids!r}])" if integer(ids) is not None else ""
    return TypeError(f"{name} must be {kind} of token ids (ints), not {type(ids).__name__}{one}")


def refuse_mapping(name: str, value: object, what: str, hint: str | None = None) -> None:
    """Raises ``TypeError`` if ``value`` is a dict (any ``Mapping``) where texts (or paths)
    are expected: iterating it gives its keys, so the texts would silently be its keys and
    its values (counts, say) dropped.

    Args:
        name: the argument, as the caller wrote it (``"inputs"``, ``"iterable"``).
        value: what was passed.
        what: what the argument must be, for the message (``"an iterable of str"``).
        hint: what to do instead (default: say which of keys or values to pass).
    """
    if isinstance(value, Mapping):
        if hint is None:
            hint = (
                f"its keys would be read as the texts and its values dropped (pass iter({name}) "
                f"or iter({name}.values()) to say which)"
            )
        raise TypeError(f"{name} must be {what}, not a {type(value).__name__}: {hint}")


def refuse_unordered(name: str, value: object) -> None:
    """TypeError if ``value`` is a set of two or more items: where their order gives the
    ids (special tokens), a set's order changes from run to run (string hashes are salted
    per process: ``PYTHONHASHSEED``), and so would the ids."""
    if isinstance(value, (set, frozenset)) and len(value) > 1:
        raise TypeError(
            f"{name} is a {type(value).__name__}: its order gives the ids, and a set's order "
            f"changes from run to run; pass a list (ids in its order), e.g. sorted({name})"
        )


def caller_level() -> int:
    """The ``stacklevel`` that makes a warning point at the first caller outside bytepair
    (``train`` calls ``count``: the user's line, not bytepair's, is the one to show)."""
    package = os.path.dirname(os.path.abspath(__file__))
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        level, frame = level + 1, frame.f_back
    return level
