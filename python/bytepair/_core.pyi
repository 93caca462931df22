"""Type stubs for the compiled module ``bytepair._core`` (checked with mypy.stubtest)."""

from collections.abc import Callable, Sequence
from os import PathLike
from typing import final, overload

__all__ = [
    "AllowedSpecial",
    "CL100K_PATTERN",
    "CoreBPE",
    "GPT2_PATTERN",
    "O200K_PATTERN",
    "PretokenCounts",
    "__version__",
    "check_build",
    "count_files",
    "count_texts",
    "train_continue",
    "train_from_counts",
]
__version__: str
GPT2_PATTERN: str
CL100K_PATTERN: str
O200K_PATTERN: str

_ProgressCallback = Callable[[str, int, int], object]

@final
class AllowedSpecial:
    def find(self, text: str) -> str | None: ...

@final
class CoreBPE:
    def __new__(
        cls,
        tokens: Sequence[tuple[bytes, int, int | None]],
        special_tokens: Sequence[tuple[str, int]],
        pattern: str,
    ) -> CoreBPE: ...
    @staticmethod
    def from_rank_file(
        data: bytes, special_tokens: Sequence[tuple[str, int]], pattern: str
    ) -> CoreBPE | None: ...
    @overload
    def encode_ordinary(self, text: str) -> list[int]: ...
    @overload
    def encode_ordinary(self, text: str, refuse_special: bool) -> list[int] | str: ...
    def encode(self, text: str, allowed: AllowedSpecial | None = None) -> list[int]: ...
    def encode_batch(
        self,
        texts: list[str],
        allowed: AllowedSpecial | None = None,
        ordinary: bool = False,
        num_threads: int | None = None,
        disallowed: AllowedSpecial | None = None,
    ) -> tuple[list[list[int]], tuple[int, str] | None]: ...
    def encode_to_bytes(
        self,
        text: str,
        allowed: AllowedSpecial | None = None,
        ordinary: bool = False,
        refuse_special: bool = False,
    ) -> bytes | str: ...
    def encode_stream_prefix(
        self, text: str, mode: str, allowed: AllowedSpecial | None = None
    ) -> tuple[list[int], str]: ...
    def allowed_special(self, tokens: Sequence[str]) -> AllowedSpecial: ...
    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...
    def decode(self, ids: Sequence[int], errors: str) -> str: ...
    def decode_bytes_le(self, data: bytes) -> bytes: ...
    @overload
    def decode_batch(
        self,
        batch: list[Sequence[int]],
        num_threads: int | None = None,
        errors: None = None,
    ) -> list[bytes]: ...
    @overload
    def decode_batch(
        self, batch: list[Sequence[int]], num_threads: int | None, errors: str
    ) -> list[str]: ...
    def token_bytes(self, id: int) -> bytes: ...
    def recover_merges(self) -> list[tuple[int, int]]: ...
    def tokens(self) -> list[tuple[int, bytes]]: ...
    def last_pretoken(self, text: str) -> bytes | None: ...
    def encode_piece(self, piece: bytes) -> list[int]: ...
    @property
    def n_vocab(self) -> int: ...

@final
class PretokenCounts:
    def __new__(cls, items: Sequence[tuple[bytes, int]] | None = None) -> PretokenCounts: ...
    def __len__(self) -> int: ...
    def __add__(self, other: PretokenCounts, /) -> PretokenCounts: ...
    def __radd__(self, other: PretokenCounts, /) -> PretokenCounts: ...
    def __eq__(self, other: object, /) -> bool: ...
    def add(self, other: PretokenCounts) -> None: ...
    def total(self) -> int: ...
    def get(self, key: bytes) -> int: ...
    def items(self) -> list[tuple[bytes, int]]: ...
    @property
    def long_pretokens(self) -> tuple[int, int]: ...
    @long_pretokens.setter
    def long_pretokens(self, value: tuple[int, int]) -> None: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes, n: int) -> PretokenCounts: ...
    def count_stream(
        self,
        chunks: Sequence[tuple[str, bool]],
        carry: str,
        pattern: str,
        special_tokens: Sequence[str],
        threads: int | None = None,
        max_pretoken_length: int | None = None,
        skip_long: bool = False,
    ) -> str: ...

def check_build(tokens: int) -> None: ...
def count_files(
    paths: Sequence[str | PathLike[str]],
    pattern: str,
    special_tokens: Sequence[str],
    progress: _ProgressCallback | None = None,
    threads: int | None = None,
    errors: str = "strict",
    max_pretoken_length: int | None = None,
    skip_long: bool = False,
) -> PretokenCounts: ...
def count_texts(
    texts: Sequence[str],
    pattern: str,
    special_tokens: Sequence[str],
    threads: int | None = None,
    max_pretoken_length: int | None = None,
    skip_long: bool = False,
) -> PretokenCounts: ...
def train_from_counts(
    counts: PretokenCounts,
    vocab_size: int,
    special_tokens: Sequence[str],
    progress: _ProgressCallback | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
) -> tuple[list[bytes], list[tuple[int, int]]]: ...
def train_continue(
    counts: PretokenCounts,
    base: CoreBPE,
    vocab_size: int,
    progress: _ProgressCallback | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
) -> tuple[list[bytes], list[tuple[int, int]]]: ...
