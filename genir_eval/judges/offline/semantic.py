"""Semantic evidence for the offline twins: does a text restate another in other words?

Word overlap rewards copying: a statement that synthesises two passages in its own words
shares few words with either, and the lexical twins call it unsupported. This module gives
the twins a static sentence-embedding model that ships inside a wheel, so it runs on the CPU
with no network and no download: WordLlama's ``l2_supercat`` model (256 dimensions; token
embeddings taken from a large language model and trained so that their mean pools into a
sentence embedding, Miller 2024, github.com/dleemiller/WordLlama), installed by the
``semantic`` extra (``pip install 'genir-eval[semantic]'``). The weights and the tokenizer are
read from the installed ``wordllama`` package's own files; the package's loader is not used,
since it looks for the tokenizer in a folder the wheel does not have and then downloads it.

Without the extra the twins keep their lexical evidence, and :func:`evidence_name` says which
ran (the report and ``run.json`` show it). ``GENIR_EVAL_OFFLINE_EVIDENCE=lexical`` forces the
lexical evidence with the extra installed (to compare the two).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import warnings
from collections.abc import Sequence
from importlib import resources

import numpy as np

from genir_eval.judges.lexical import passages
from genir_eval.llm.providers.offline import register_offline_version

__all__ = [
    "SEMANTIC_MODEL",
    "Embedder",
    "embedder",
    "evidence_name",
    "available",
    "cosine_matrix",
    "unit_vectors",
    "best_match",
]

#: The model the semantic evidence reads: its name as the report shows it.
SEMANTIC_MODEL = "wordllama l2_supercat-256"
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_FORCE = "GENIR_EVAL_OFFLINE_EVIDENCE"
_NEEDED = ("wordllama", "tokenizers", "safetensors")
#: Tokens beyond this many are not read (a passage's first ~1,500 words say what it is about).
MAX_TOKENS = 2048
_CACHE_SIZE = 65_536


class Embedder:
    """Mean-pooled static token embeddings, normalised to unit length (cosine = dot)."""

    def __init__(self, matrix: np.ndarray, tokenizer: object) -> None:
        self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._tokenizer = tokenizer
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (a text with no token gives the zero vector)."""
        out = np.zeros((len(texts), self._matrix.shape[1]), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t not in self._cache]
        if todo:
            encoded = self._tokenizer.encode_batch(  # type: ignore[attr-defined]
                [texts[i] for i in todo], add_special_tokens=False
            )
            if len(self._cache) > _CACHE_SIZE:
                self._cache.clear()
            for i, encoding in zip(todo, encoded, strict=True):
                ids = np.asarray(encoding.ids[:MAX_TOKENS], dtype=np.int64)
                ids = ids[(ids >= 0) & (ids < self._matrix.shape[0])]
                vector = self._matrix[ids].mean(axis=0) if ids.size else out[i]
                norm = float(np.linalg.norm(vector))
                self._cache[texts[i]] = vector / norm if norm > 0 else vector
        for i, text in enumerate(texts):
            out[i] = self._cache[text]
        return out


#: Why the installed model could not be loaded (a broken install), once it was tried.
_broken: str | None = None


@functools.lru_cache(maxsize=1)
def _load() -> Embedder | None:
    """The model from the installed wheel; ``None`` without the extra, and ``None`` with a
    warning when the extra is installed but broken (a package that fails on import, a
    weights file that does not load): the twins then read lexical evidence, as without it,
    and :func:`evidence_name` says so."""
    global _broken
    try:
        return _read_model()
    except ImportError:
        return None
    except Exception as error:  # noqa: BLE001 - any failure of a third-party install
        _broken = f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"
        warnings.warn(
            f"the semantic evidence's model could not be loaded ({_broken}); the offline "
            "twins read lexical evidence instead (reinstall the 'semantic' extra to restore "
            "it)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None


def _read_model() -> Embedder | None:
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    try:
        package = resources.files("wordllama")
    except ModuleNotFoundError:
        return None
    weights = package.joinpath(_WEIGHTS)
    tokenizer_file = package.joinpath(_TOKENIZER)
    if not (weights.is_file() and tokenizer_file.is_file()):
        return None
    with resources.as_file(weights) as path:
        matrix = load_file(str(path))["embedding.weight"]
    with resources.as_file(tokenizer_file) as path:
        tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return Embedder(matrix, tokenizer)


def embedder() -> Embedder | None:
    """The semantic model, loaded once from the installed wheel; ``None`` when the
    ``semantic`` extra is not installed or ``GENIR_EVAL_OFFLINE_EVIDENCE=lexical``."""
    if os.environ.get(_FORCE, "").strip().lower() == "lexical":
        return None
    return _load()


def available() -> bool:
    """Whether the twins read semantic evidence, told without loading the model: the extra's
    packages and the model's files are installed, and lexical evidence is not forced."""
    if os.environ.get(_FORCE, "").strip().lower() == "lexical" or _broken is not None:
        return False
    try:
        if any(importlib.util.find_spec(name) is None for name in _NEEDED):
            return False
        package = resources.files("wordllama")
    except Exception:  # noqa: BLE001 - a broken install: found only by importing it
        return False
    return package.joinpath(_WEIGHTS).is_file() and package.joinpath(_TOKENIZER).is_file()


def evidence_name() -> str:
    """Which evidence the offline twins read: ``"semantic (<model>)"`` or ``"lexical"``."""
    return f"semantic ({SEMANTIC_MODEL})" if available() else "lexical"


_SPACE = re.compile(r"\s+")


def unit_vectors(model: Embedder | None, texts: Sequence[str]) -> np.ndarray:
    """The unit vectors of ``texts``, whitespace runs read as one space."""
    if model is None:
        raise RuntimeError("the semantic model is not loaded")
    return model.encode([_SPACE.sub(" ", t).strip() for t in texts])


def cosine_matrix(model: Embedder, first: Sequence[str], second: Sequence[str]) -> np.ndarray:
    """Cosine similarity of every text of ``first`` with every text of ``second``."""
    return unit_vectors(model, first) @ unit_vectors(model, second).T


def best_match(model: Embedder, text: str, source: str) -> float:
    """The cosine similarity of ``text`` with the passage of ``source`` closest to it (a
    sentence or two adjacent ones, :func:`~genir_eval.judges.lexical.passages`)."""
    candidates = passages(source) or [source]
    return float(cosine_matrix(model, [text], candidates).max())


# Which evidence ran decides the twins' replies as much as their code: a run resumed after
# the extra is installed or removed asks again rather than reuse the other evidence's labels.
register_offline_version(evidence_name)
