"""bytepair: byte-level BPE tokenizers. Train on real corpora; encode and decode exactly
(bit-identical to tiktoken and the CS336 reference rules) and fast.

>>> import bytepair
>>> tok = bytepair.train(iter(["low low lower lowest"]), vocab_size=259)
>>> tok.encode("lowest")
[257, 101, 115, 116]

The rules are in the README ("The rules", with where each lives in the code); the
pure-Python oracle in ``bytepair.reference``.
"""

from ._core import __version__
from .encodings import (
    Encoding,
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)
from .formats import load
from .ids import encode_to_file, open_ids
from .inputs import CorpusDecodeError
from .stream import StreamDecoder
from .tokenizer import Tokenizer
from .train import PretokenCounts, count, train, train_bpe, train_from_counts

__all__ = [
    "CorpusDecodeError",
    "Encoding",
    "PretokenCounts",
    "StreamDecoder",
    "Tokenizer",
    "__version__",
    "count",
    "encode_to_file",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load",
    "open_ids",
    "train",
    "train_bpe",
    "train_from_counts",
]


def __getattr__(name: str) -> object:
    # `bytepair.reference` (the pure-Python oracle) without importing it on every start
    if name == "reference":
        import importlib

        return importlib.import_module(".reference", __name__)
    raise AttributeError(f"module 'bytepair' has no attribute {name!r}")
