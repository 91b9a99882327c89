"""Fusion of several repositories' rankings, with hand-worked numbers."""

from __future__ import annotations

import pytest

from askrepo.datatypes import Hit
from askrepo.multirepo import MultiRetriever, fuse, search_many
from askrepo.retriever import SearchOptions, SearchResult


def hit(path: str, score: float, start: int = 1, end: int = 5, rank: int = 99) -> Hit:
    return Hit(
        rank=rank,
        path=path,
        start_line=start,
        end_line=end,
        symbol=None,
        kind="function",
        language="python",
        score=score,
        sources={"dense": None, "fts": None},
        expanded_from=None,
        text="x",
    )


def test_fuse_rank_hand_worked():
    # A: a1 (0.05), a2 (0.03);  B: b1 (0.02), b2 (0.019), b3 (0.001).
    # rank 1: a1 and b1 both 1/61; relative scores 1.0 and 1.0 -> repo order: a1, b1.
    # rank 2: a2 1/62 relative 0.6; b2 1/62 relative 0.95 -> b2 before a2.
    # rank 3: b3 1/63.
    a = [hit("a1.py", 0.05), hit("a2.py", 0.03)]
    b = [hit("b1.py", 0.02), hit("b2.py", 0.019), hit("b3.py", 0.001)]
    out = fuse([("A", a), ("B", b)], k=10, method="rank")
    assert [(h.repo, h.hit.path) for h in out] == [
        ("A", "a1.py"),
        ("B", "b1.py"),
        ("B", "b2.py"),
        ("A", "a2.py"),
        ("B", "b3.py"),
    ]
    assert [h.hit.rank for h in out] == [1, 2, 3, 4, 5]
    assert [h.hit.score for h in out] == [
        round(1 / 61, 6),
        round(1 / 61, 6),
        round(1 / 62, 6),
        round(1 / 62, 6),
        round(1 / 63, 6),
    ]
    assert [h.repo_rank for h in out] == [1, 1, 2, 2, 3]
    assert out[2].repo_score == 0.019
    d = out[0].to_dict()
    assert d["repo"] == "A" and d["rank"] == 1 and d["repo_rank"] == 1 and "calls" not in d
    # the inputs are not modified
    assert a[0].rank == 99 and a[0].score == 0.05


def test_fuse_rank_is_scale_free_and_truncates():
    # B's raw scores are 100x A's: rank fusion does not let them crowd A out.
    a = [hit("a1.py", 0.01), hit("a2.py", 0.005)]
    b = [hit("b1.py", 1.0), hit("b2.py", 0.9), hit("b3.py", 0.8)]
    out = fuse([("A", a), ("B", b)], k=3, method="rank")
    # rank 1: relative 1.0 both -> A first (given first). rank 2: a2 0.5 < b2 0.9 -> b2.
    assert [h.hit.path for h in out] == ["a1.py", "b1.py", "b2.py"]
    assert fuse([("A", a)], k=0) == []
    assert fuse([], k=5) == []


def test_fuse_zero_scores_keep_repo_order():
    for method in ("merge", "rank"):
        out = fuse([("A", [hit("a.py", 0.0)]), ("B", [hit("b.py", 0.0)])], k=5, method=method)
        assert [h.repo for h in out] == ["A", "B"]
    with pytest.raises(ValueError):
        fuse([], k=1, method="magic")


def test_fuse_merge_hand_worked():
    # RRF scores from askrepo's retriever: 2/61 = first in dense and FTS; 1/61 = first in one.
    # A: a1 1/61 (0.016393), a2 1/62 (0.016129); B: b1 2/61 (0.032787), b2 1/61, b3 0.0 (expanded)
    a = [hit("a1.py", 0.016393), hit("a2.py", 0.016129)]
    b = [hit("b1.py", 0.032787), hit("b2.py", 0.016393), hit("b3.py", 0.0)]
    out = fuse([("A", a), ("B", b)], k=10)
    # b1 (0.0328) > a1 = b2 (0.016393: equal score, equal rank? a1 is rank 1, b2 rank 2 -> a1)
    # > a2 (0.016129) > b3 (0.0)
    assert [(h.repo, h.hit.path) for h in out] == [
        ("B", "b1.py"),
        ("A", "a1.py"),
        ("B", "b2.py"),
        ("A", "a2.py"),
        ("B", "b3.py"),
    ]
    assert [h.hit.score for h in out] == [0.032787, 0.016393, 0.016393, 0.016129, 0.0]
    assert [h.repo_rank for h in out] == [1, 1, 2, 2, 3]


def test_fuse_merge_keeps_each_repo_order():
    # B's list is not sorted by score (b2 was promoted by a later stage): b2 must not jump b1.
    a = [hit("a1.py", 0.5)]
    b = [hit("b1.py", 0.2), hit("b2.py", 0.9)]
    out = fuse([("A", a), ("B", b)], k=3)
    # b1 and b2 are both capped at 0.2 (running minimum), a1 0.5 first
    assert [h.hit.path for h in out] == ["a1.py", "b1.py", "b2.py"]


class FakeSearch:
    def __init__(self, repo: str, hits: list[Hit], filters: list[str] | None = None):
        self.repo, self.hits, self.filters = repo, hits, filters or []
        self.store = FakeStore({h.path for h in hits})
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, opts: SearchOptions) -> SearchResult:
        self.calls.append((query, opts.k))
        return SearchResult(query, self.repo, opts.mode, 1.0, self.hits[: opts.k], self.filters)


class FakeStore:
    def __init__(self, terms: set[str]):
        self.terms = terms

    def find_symbol(self, name: str) -> list[str]:
        return [name] if name in self.terms else []

    def has_term(self, term: str) -> bool:
        return term in self.terms


def test_search_many_runs_each_repo_and_fuses():
    a = FakeSearch("A", [hit("a1.py", 0.5), hit("a2.py", 0.4)], ["tests excluded"])
    b = FakeSearch("B", [hit("b1.py", 0.9)], ["tests excluded", "docs excluded"])
    res = search_many([("A", a.search), ("B", b.search)], "q", SearchOptions(k=2))
    assert a.calls == [("q", 2)] and b.calls == [("q", 2)]
    # merged by score: b1 (0.9) before a1 (0.5); a2 (0.4) is cut at k=2
    assert [(h.repo, h.hit.path) for h in res.hits] == [("B", "b1.py"), ("A", "a1.py")]
    assert res.filters == ["tests excluded", "docs excluded"]
    d = res.to_dict()
    assert d["repos"] == ["A", "B"] and d["mode"] == "hybrid"
    assert [h["repo"] for h in d["hits"]] == ["B", "A"]


def test_multi_retriever_for_ask():
    a = FakeSearch("A", [hit("same.py", 0.5, 1, 10), hit("a.py", 0.4)])
    b = FakeSearch("B", [hit("same.py", 0.9, 20, 30)])
    mr = MultiRetriever([("A", a), ("B", b)])
    res = mr.search("q", SearchOptions(k=3))
    # B's same.py (0.9) first, then A's same.py (0.5) and a.py (0.4)
    assert [h.path for h in res.hits] == ["same.py", "same.py", "a.py"]
    assert [h.score for h in res.hits] == [0.9, 0.5, 0.4]
    assert [h.rank for h in res.hits] == [1, 2, 3]
    # the same path in two repos is told apart by the cited line range
    assert mr.repo_of("same.py", 2, 4) == "A"
    assert mr.repo_of("same.py", 25, 26) == "B"
    assert mr.repo_of("same.py", 100, 120) is None
    assert mr.store.has_term("a.py") and not mr.store.has_term("zzz")
    assert mr.store.find_symbol("same.py") == ["same.py", "same.py"]
    assert mr.store.meta() is None


def test_multi_retriever_embedder_is_the_shared_model_or_none():
    from types import SimpleNamespace as NS

    first, second = object(), object()

    def part(model_id, emb):
        return NS(store=NS(model_id=model_id), embedder=emb, search=None)

    mr = MultiRetriever([("A", part("minilm", first)), ("B", part("minilm", second))])
    assert mr.embedder is first  # one model for all: the first repository's, loaded once
    mixed = MultiRetriever([("A", part("minilm", first)), ("B", part("jina", second))])
    with pytest.raises(AttributeError, match="different models"):
        _ = mixed.embedder


@pytest.mark.parametrize("k", [1, 2, 5])
def test_fuse_never_returns_more_than_k(k):
    lists = [(r, [hit(f"{r}{i}.py", 1.0 / (i + 1)) for i in range(4)]) for r in "ABC"]
    for method in ("merge", "rank"):
        out = fuse(lists, k=k, method=method)
        assert len(out) == k
        assert len({(h.repo, h.hit.path) for h in out}) == k


def test_cli_search_over_several_repos_prints_names_and_code_verbatim(tmp_path, monkeypatch):
    """Real index (MiniLM), real CLI: a repo named `lib[x]` and `tuple[str, int]` in the code
    are text, not rich markup tags to swallow; each hit shows its first lines."""
    from typer.testing import CliRunner

    from askrepo.cli import app
    from askrepo.indexer import index_repo

    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    code = "def pair() -> tuple[str, int]:\n    return ('a', 1)\n"
    repos = []
    for name in ("app", "lib[x]"):
        root = tmp_path / name
        root.mkdir()
        (root / "m.py").write_text(code, encoding="utf-8")
        index_repo(root)
        repos += ["--repo", str(root)]
    r = CliRunner().invoke(app, ["search", "pair of a string and an int", *repos, "-k", "2"])
    assert r.exit_code == 0, r.output
    assert "lib[x]: m.py:1-2" in r.output and "app: m.py:1-2" in r.output
    assert r.output.count("lib[x]") == 2  # the table's repo column and the hit's heading
    assert "tuple[str, int]" in r.output
    none = CliRunner().invoke(app, ["search", "[bold]zzz", *repos, "--mode", "fts"])
    assert none.exit_code == 0, none.output
    assert "No results for '[bold]zzz'." in none.output
