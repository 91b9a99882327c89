"""A deterministic fake embedder for fast tests of our own logic (never of quality)."""

from __future__ import annotations

import hashlib
import re
from types import SimpleNamespace

import numpy as np


class FakeEmbedder:
    """Bag-of-hashed-words vectors: texts sharing words are close. Counts what it embeds."""

    def __init__(
        self,
        dim: int = 32,
        model_id: str = "fake-bow-32",
        fail_on_call: int | None = None,
        piece_chars: int = 0,
    ):
        self.dim = dim
        self.model_id = model_id
        # like ModelSpec.piece_chars: chunks longer than this also get piece vectors
        self.spec = SimpleNamespace(piece_chars=piece_chars)
        self.calls = 0
        self.texts: list[str] = []
        self.fail_on_call = fail_on_call

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            h = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little")
            v[h % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v + (1.0 / np.sqrt(self.dim))

    def embed_documents(self, texts, batch_size=32, progress=None):
        self.calls += 1
        if self.fail_on_call is not None and self.calls >= self.fail_on_call:
            raise RuntimeError("injected failure while embedding")
        self.texts.extend(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vec(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)
