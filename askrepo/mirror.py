"""An in-memory copy of one committed index version: chunks, unit vectors, symbol and call maps.

Pure numpy (no LanceDB): ``store.IndexStore`` loads it from the table once a second search
starts, and then answers dense, symbol and caller queries from memory in milliseconds.

Chunks whose vectors are not computed yet (phase 2 of an index run still pending) have
``embedded[i] == False`` and never appear in dense results; they still answer symbol and
caller lookups, and full-text search (which the store runs in LanceDB).

A chunk longer than the model's window also has *piece* vectors (``set_pieces``: the same
header over its later lines, ``indexer.piece_texts``); its dense score is the best of its own
vector and its pieces', so code past the model's first 256 tokens can still be found.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .datatypes import Chunk, last_part, symbol_matches

Row = tuple[str, Chunk, float]


class Mirror:
    """All chunks of one committed version in memory, with their unit vectors."""

    def __init__(
        self,
        ids: list[str],
        chunks: list[Chunk],
        matrix: Any,
        classes: Sequence[str],
        embedded: Any = None,
    ):
        import numpy as np

        self.ids = ids
        self.chunks = chunks
        mat = np.asarray(matrix, dtype=np.float32)
        self.matrix = unit_rows(mat) if len(mat) else mat
        self.classes = np.asarray(list(classes), dtype=object)
        self.embedded = (
            np.ones(len(ids), dtype=bool) if embedded is None else np.asarray(embedded, dtype=bool)
        )
        self.piece_owner = np.zeros(0, dtype=np.int64)  # row position of each piece's chunk
        self.piece_matrix = np.zeros((0, mat.shape[1] if mat.ndim == 2 else 0), dtype=np.float32)
        self._masks: dict[frozenset[str], Any] = {}
        self.position = {cid: i for i, cid in enumerate(ids)}
        self.by_last: dict[str, list[int]] = {}
        self.by_callee: dict[str, list[int]] = {}
        self.by_path: dict[str, list[int]] = {}
        self.types: list[Chunk] = []  # class chunks, for ``store.declarations``
        for i, c in enumerate(chunks):
            self.by_path.setdefault(c.path, []).append(i)
            if c.kind == "class":
                self.types.append(c)
            if c.symbol:
                self.by_last.setdefault(last_part(c.symbol), []).append(i)
            for callee in dict.fromkeys(c.calls):
                self.by_callee.setdefault(callee, []).append(i)

    def set_vectors(self, rows: Any, vectors: Any) -> None:
        """Store (unit-normalised) vectors for these row positions."""
        import numpy as np

        self.matrix[rows] = unit_rows(np.asarray(vectors, dtype=np.float32))

    def set_pieces(self, owners: Any, vectors: Any) -> None:
        """Piece vectors (unit-normalised here) of the chunks at row positions ``owners``."""
        import numpy as np

        self.piece_owner = np.asarray(owners, dtype=np.int64)
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(owners), -1)
        self.piece_matrix = unit_rows(vecs)

    def scores(self, q: Any, pieces: bool = True, rows: Any = None) -> Any:
        """Cosine with unit vector ``q`` of every row (or of ``rows``, in that order): a chunk's
        best of its own vector and its pieces' (``pieces=False``: its own vector only)."""
        import numpy as np

        if rows is None:
            scores = self.matrix @ q
            owner, pmat = self.piece_owner, self.piece_matrix
        else:
            rows = np.asarray(rows, dtype=np.int64)
            scores = self.matrix[rows] @ q
            if not pieces or not len(self.piece_owner):
                return scores
            where = {int(r): j for j, r in enumerate(rows)}
            sel = np.isin(self.piece_owner, rows)
            owner = np.asarray([where[int(o)] for o in self.piece_owner[sel]], dtype=np.int64)
            pmat = self.piece_matrix[sel]
        if pieces and len(owner):
            best = np.full(len(scores), -np.inf, dtype=np.float32)
            np.maximum.at(best, owner, pmat @ q)
            scores = np.maximum(scores, best)
        return scores

    def class_mask(self, classes: Iterable[str]) -> Any:
        import numpy as np

        key = frozenset(classes)
        if key not in self._masks:
            self._masks[key] = np.isin(self.classes, list(key))
        return self._masks[key]

    def dense(
        self,
        vector: Sequence[float],
        n: int,
        classes: Iterable[str] | None,
        pieces: bool = True,
    ) -> list[Row]:
        """Exact cosine search over the embedded chunks (same results as LanceDB's flat scan)."""
        import numpy as np

        if n <= 0 or not len(self.ids):
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        scores = self.scores(q, pieces)
        keep = self.embedded
        if classes is not None:
            keep = keep & self.class_mask(classes)
        scores = np.where(keep, scores, -np.inf)
        n = min(n, int(np.isfinite(scores).sum()))
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.ids[i], self.chunks[i], float(scores[i])) for i in top]

    def in_files(
        self,
        vector: Sequence[float],
        paths: Sequence[str],
        classes: Iterable[str] | None,
        pieces: bool = True,
    ) -> list[Row]:
        """Every embedded chunk of these files by cosine similarity to ``vector``, best first
        (ties by path and line)."""
        import numpy as np

        idx = [i for p in paths for i in self.by_path.get(p, []) if self.embedded[i]]
        if classes is not None:
            allowed = set(classes)
            idx = [i for i in idx if self.chunks[i].file_class in allowed]
        if not idx:
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        scores = self.scores(q, pieces, idx)
        chunks = [self.chunks[i] for i in idx]
        order = sorted(
            range(len(idx)), key=lambda j: (-scores[j], chunks[j].path, chunks[j].start_line)
        )
        return [(self.ids[idx[j]], self.chunks[idx[j]], float(scores[j])) for j in order]

    def _rows(self, idx: Iterable[int], classes: Iterable[str] | None, limit: int) -> list[Row]:
        allowed = None if classes is None else set(classes)
        out = []
        for i in sorted(set(idx)):
            if allowed is None or self.chunks[i].file_class in allowed:
                out.append((self.ids[i], self.chunks[i], 0.0))
                if len(out) >= limit:
                    break
        return out

    def by_symbol(self, names: list[str], classes: Iterable[str] | None, limit: int) -> list[Row]:
        idx = []
        for name in names:
            for i in self.by_last.get(last_part(name), []):
                sym = self.chunks[i].symbol or ""
                if symbol_matches(sym, name):
                    idx.append(i)
        return self._rows(idx, classes, limit)

    def callers(self, name: str, classes: Iterable[str] | None, limit: int) -> list[Row]:
        return self._rows(self.by_callee.get(name, []), classes, limit)


def unit_rows(vecs: Any) -> Any:
    """Rows scaled to length 1 (an all-zero row stays zero)."""
    import numpy as np

    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms == 0, 1.0, norms)
