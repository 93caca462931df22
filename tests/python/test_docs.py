"""The examples of docs/*.md and of the teaching modules' docstrings run, with their outputs.

Each ``>>>`` example is a doctest: the page is only right while this test passes.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from bytepair import charbpe, curve, ids, show

DOCS = Path(__file__).resolve().parents[2] / "docs"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_doc_page_examples(page: Path) -> None:
    result = doctest.testfile(str(page), module_relative=False, optionflags=FLAGS, verbose=False)
    assert result.attempted > 5, f"{page.name} has too few examples"
    assert result.failed == 0, f"{result.failed} example(s) of {page.name} failed (see above)"


@pytest.mark.parametrize("module", [charbpe, curve, ids, show], ids=lambda m: m.__name__)
def test_module_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=FLAGS, verbose=False)  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0
