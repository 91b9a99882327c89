"""Search several repositories at once: per-repo ranked hits fused into one ranking.

Scores from different indexes are not comparable (another model, another corpus size, another
score scale), ranks are. ``fuse`` is Reciprocal Rank Fusion over one ranked list per repository:
a hit at rank ``r`` in its repository scores ``1 / (k + r)`` (k = 60, as in the retriever), so
the first hits of every repository come first, then the second ones, and so on. Hits at the same
rank are ordered by their score relative to the best score of their own repository (a repo whose
2nd hit is nearly as good as its 1st beats one whose 2nd hit is far behind), then by the order
the repositories were given. Every fused hit carries its ``repo``.

``search_many`` runs one search per repository (the library's ``Retriever.search`` or anything
with the same signature) and fuses them; ``MultiRetriever`` makes several repositories look like
one retriever to ``answer.ask``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .datatypes import Hit

FUSION_K = 60


@dataclass
class RepoHit:
    """A hit from one of several repositories, ranked in the fused list."""

    repo: str
    hit: Hit  # rank and score fused; the repo's own rank and score are kept below
    repo_rank: int
    repo_score: float

    def to_dict(self) -> dict[str, Any]:
        d = self.hit.to_dict()
        d["repo"] = self.repo
        d["repo_rank"] = self.repo_rank
        d["repo_score"] = self.repo_score
        return d


def fuse(
    per_repo: Sequence[tuple[str, Sequence[Hit]]], k: int, *, rrf_k: int = FUSION_K
) -> list[RepoHit]:
    """The top ``k`` of several repositories' ranked hit lists, fused by rank (see module doc).

    ``per_repo``: (repo, hits best first). A repo's list order is its ranking (``Hit.rank`` is
    not trusted). Returned hits are copies with ``rank`` 1..n and ``score`` = 1/(rrf_k + rank in
    their repo), rounded to 6 places.
    """
    scored: list[tuple[float, float, int, int, RepoHit]] = []
    for order, (repo, hits) in enumerate(per_repo):
        best = max((h.score for h in hits), default=0.0)
        for r, h in enumerate(hits, 1):
            fused = 1.0 / (rrf_k + r)
            relative = h.score / best if best > 0 else 0.0
            item = RepoHit(repo=repo, hit=h, repo_rank=r, repo_score=h.score)
            scored.append((fused, relative, order, r, item))
    scored.sort(key=lambda t: (-t[0], -t[1], t[2], t[3]))
    out: list[RepoHit] = []
    for i, (fused, _, _, _, item) in enumerate(scored[: max(k, 0)], 1):
        item.hit = dataclasses.replace(item.hit, rank=i, score=round(fused, 6))
        out.append(item)
    return out


@dataclass
class MultiSearchResult:
    """Like ``retriever.SearchResult``, over several repositories; hits carry their repo."""

    query: str
    repos: list[str]
    mode: str
    elapsed_ms: float
    hits: list[RepoHit]
    filters: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "repos": self.repos,
            "mode": self.mode,
            "elapsed_ms": round(self.elapsed_ms, 2),
            "hits": [h.to_dict() for h in self.hits],
        }


SearchFn = Callable[[str, Any], Any]  # (query, SearchOptions) -> SearchResult


def search_many(
    searchers: Sequence[tuple[str, SearchFn]], query: str, opts: Any
) -> MultiSearchResult:
    """Search every repository with the same options and fuse the results to ``opts.k`` hits."""
    t0 = time.perf_counter()
    lists: list[tuple[str, Sequence[Hit]]] = []
    filters: list[str] = []
    mode = getattr(opts, "mode", "hybrid")
    for repo, search in searchers:
        res = search(query, opts)
        lists.append((repo, list(res.hits)))
        mode = res.mode
        filters.extend(f for f in res.filters if f not in filters)
    return MultiSearchResult(
        query=query,
        repos=[r for r, _ in searchers],
        mode=mode,
        elapsed_ms=(time.perf_counter() - t0) * 1000,
        hits=fuse(lists, opts.k),
        filters=filters,
    )


# ----------------------------------------------------------------------------------------------
# Several repositories as one retriever (for answer.ask)


class _MultiStore:
    """The read-only store calls ``answer.ask`` makes, answered over several stores."""

    def __init__(self, stores: Callable[[], list[Any]]):
        self._stores = stores
        self.repo = None

    def meta(self) -> None:  # no single commit/file count: citations carry no commit
        return None

    def find_symbol(self, name: str) -> list[Any]:
        return [c for s in self._stores() for c in s.find_symbol(name)]

    def has_term(self, term: str) -> bool:
        return any(s.has_term(term) for s in self._stores())


class MultiRetriever:
    """Several repositories behind the ``search`` / ``store`` surface of ``Retriever``.

    ``parts``: (repo, retriever-like object with ``search(query, opts)`` and ``store``).
    ``repo_of`` tells which repository a cited span came from (the last search's hits).
    """

    def __init__(self, parts: Sequence[tuple[str, Any]]):
        self.parts = list(parts)
        self.store = _MultiStore(lambda: [p.store for _, p in self.parts])
        self.last: list[RepoHit] = []

    def search(self, query: str, opts: Any) -> Any:
        from .retriever import SearchResult

        multi = search_many([(r, p.search) for r, p in self.parts], query, opts)
        self.last = multi.hits
        return SearchResult(
            query=query,
            repo=", ".join(multi.repos),
            mode=multi.mode,
            elapsed_ms=multi.elapsed_ms,
            hits=[h.hit for h in multi.hits],
            filters=multi.filters,
        )

    def repo_of(self, path: str, start_line: int, end_line: int) -> str | None:
        """The repo of the best-ranked hit of the last search covering this span, or None."""
        for h in self.last:
            if h.hit.path == path and h.hit.start_line <= end_line and start_line <= h.hit.end_line:
                return h.repo
        return None
