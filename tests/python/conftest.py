"""Shared pytest fixtures for bytepair's Python tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parents[2]

# property tests run BYTEPAIR_MAX_EXAMPLES examples each (default 100); CI can raise it
settings.register_profile(
    "bytepair", max_examples=int(os.environ.get("BYTEPAIR_MAX_EXAMPLES", "100"))
)
settings.load_profile("bytepair")


NO_DATA = "shared test data not found at"


def data_path() -> Path:
    """``$BYTEPAIR_DATA`` if set, else ``<repo>/../shared/data``."""
    env = os.environ.get("BYTEPAIR_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared test data folder (DESIGN.md §5).

    It is ``$BYTEPAIR_DATA`` if set, else ``<repo>/../shared/data``. Tests that use it skip
    when it is absent, unless ``BYTEPAIR_REQUIRE_DATA=1`` (as in CI), which makes them fail.
    """
    path = data_path()
    if not path.is_dir():
        reason = f"{NO_DATA} {path} (set BYTEPAIR_DATA to its location)"
        if os.environ.get("BYTEPAIR_REQUIRE_DATA") == "1":
            pytest.fail(reason + "; BYTEPAIR_REQUIRE_DATA=1 requires it")
        pytest.skip(reason)
    return path


@pytest.fixture
def local_encodings(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``bytepair.get_encoding`` reads only the shared data: never downloads, caches empty."""
    from bytepair import encodings

    monkeypatch.setenv("BYTEPAIR_OFFLINE", "1")
    monkeypatch.setenv("BYTEPAIR_DATA", str(data_dir))
    monkeypatch.delenv("BYTEPAIR_CACHE_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/nonexistent-bytepair-test-cache")
    encodings._cache.clear()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Says loudly when tests skipped for want of the shared data: a green run without it
    tested about half of the suite (CI sets ``BYTEPAIR_REQUIRE_DATA=1``, failing them)."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if NO_DATA in str(r.longrepr)]
    if skipped:
        terminalreporter.write_sep("=", "shared test data missing", yellow=True, bold=True)
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: no shared data at {data_path()}. Put the data "
            "folder there (the checkout's ../shared/data) or set BYTEPAIR_DATA to it; "
            "BYTEPAIR_REQUIRE_DATA=1 (as in CI) makes them fail instead."
        )
