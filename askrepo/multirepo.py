"""Search several repositories at once: per-repo ranked hits fused into one ranking.

Raw similarities from different indexes are not comparable (another model, another corpus, BM25
statistics); ranks are. askrepo's retriever already turns ranks into scores — a hit's score is a
Reciprocal Rank Fusion sum ``Σ w / (60 + rank)`` over its dense, full-text and exact-symbol ranks
(times the same rank-free factors for every repo) — so two repositories' scores from the same
askrepo are on one scale: a chunk that is first in dense *and* full-text (2/61) beats one that is
first in dense only (1/61), whichever index it came from. ``fuse`` offers two methods:

- ``"merge"`` (default): a k-way merge of the per-repo lists by score. Each repository's own
  order is kept exactly (the next hit of a repo is always its next-ranked one); across repos the
  higher score goes first; equal scores go by rank in their repo, then by the order the repos
  were given.
- ``"rank"``: RRF over the repos' lists — a hit at rank ``r`` in its repo scores
  ``1 / (60 + r)`` — for scores that are not on one scale (another scorer). Equal ranks go by
  score relative to the repo's best hit, then repo order.

Every fused hit carries its ``repo`` and its rank and score in that repo. ``search_many`` runs one
search per repository (``Retriever.search`` or anything with its signature) and fuses;
``MultiRetriever`` makes several repositories look like one retriever to ``answer.ask``;
``check_freshness`` and ``freshness_fields`` give the per-repository freshness a result over
several repositories carries (``askrepo search --json --repo A --repo B``, the web API's
``/api/search``, the MCP ``search_code`` without ``repo``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
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
    per_repo: Sequence[tuple[str, Sequence[Hit]]],
    k: int,
    *,
    method: str = "merge",
    rrf_k: int = FUSION_K,
) -> list[RepoHit]:
    """The top ``k`` of several repositories' ranked hit lists, fused (see the module doc).

    ``per_repo``: (repo, hits best first); a list's order is its repo's ranking (``Hit.rank`` is
    not trusted). Returned hits are copies with ``rank`` 1..n; with ``method="merge"`` their
    ``score`` is their own, with ``"rank"`` it is 1/(rrf_k + rank in repo), rounded to 6 places.
    """
    if method not in ("merge", "rank"):
        raise ValueError(f"unknown fusion method {method!r}")
    # (primary, secondary) sort keys per hit, larger first; then repo order, then rank in repo
    keyed: list[tuple[float, float, int, int, RepoHit]] = []
    for order, (repo, hits) in enumerate(per_repo):
        best = max((h.score for h in hits), default=0.0)
        floor = float("inf")
        for r, h in enumerate(hits, 1):
            item = RepoHit(repo=repo, hit=h, repo_rank=r, repo_score=h.score)
            if method == "rank":
                keyed.append(
                    (1.0 / (rrf_k + r), h.score / best if best > 0 else 0.0, order, r, item)
                )
            else:
                # a hit never outranks an earlier hit of its own repo: cap at the running minimum
                floor = min(floor, h.score)
                keyed.append((floor, -r, order, r, item))
    keyed.sort(key=lambda t: (-t[0], -t[1], t[2], t[3]))
    out: list[RepoHit] = []
    for i, (primary, _, _, _, item) in enumerate(keyed[: max(k, 0)], 1):
        score = round(primary, 6) if method == "rank" else item.hit.score
        item.hit = dataclasses.replace(item.hit, rank=i, score=score)
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
    searchers: Sequence[tuple[str, SearchFn]], query: str, opts: Any, *, method: str = "merge"
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
        hits=fuse(lists, opts.k, method=method),
        filters=filters,
    )


# ----------------------------------------------------------------------------------------------
# The freshness of several repositories


@dataclass
class RepoFreshness:
    """One searched repository's index: its commit and ``freshness.Freshness``."""

    repo: str
    commit: str | None
    freshness: Any  # freshness.Freshness

    @property
    def stale(self) -> bool:
        return bool(self.freshness.stale)

    def to_dict(self) -> dict[str, Any]:
        """``{"repo", "commit", "indexed_commit", "head_commit", "stale", "changed_files"}``
        (plus ``changed_paths`` / ``freshness_error`` when there are)."""
        return {"repo": self.repo, "commit": self.commit, **self.freshness.to_dict()}


def check_freshness(stores: Iterable[tuple[str, Any]]) -> list[RepoFreshness]:
    """``freshness.check_store`` of each (repo, open ``IndexStore``)."""
    from .freshness import check_store

    return [RepoFreshness(repo, store.meta().commit, check_store(store)) for repo, store in stores]


def freshness_fields(fresh: Sequence[RepoFreshness], key: str = "freshness") -> dict[str, Any]:
    """The freshness fields of a result over several repositories: each repository's under
    ``key`` (``RepoFreshness.to_dict``), ``stale`` when any of them is, and the
    ``changed_files`` of all of them."""
    return {
        key: [f.to_dict() for f in fresh],
        "stale": any(f.stale for f in fresh),
        "changed_files": sum(f.freshness.changed_files for f in fresh),
    }


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

    @property
    def embedder(self) -> Any:
        """The embedding model every repository's index was built with (the card's header
        similarity reads it, as for one repository); AttributeError when they differ."""
        ids = {getattr(p.store, "model_id", None) for _, p in self.parts}
        if len(ids) != 1 or None in ids or not self.parts:
            raise AttributeError("the repositories were indexed with different models")
        return self.parts[0][1].embedder

    def repo_of(self, path: str, start_line: int, end_line: int) -> str | None:
        """The repo of the best-ranked hit of the last search covering this span, or None."""
        for h in self.last:
            if h.hit.path == path and h.hit.start_line <= end_line and start_line <= h.hit.end_line:
                return h.repo
        return None
