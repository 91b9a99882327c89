"""End to end with the real default embedding model, real tree-sitter and real LanceDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from askrepo.indexer import index_repo
from askrepo.retriever import Retriever, SearchOptions
from tests.fixture_repo import QUESTIONS, make_fixture_repo


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    home = tmp_path_factory.mktemp("home-e2e")
    old = os.environ.get("ASKREPO_HOME")
    os.environ["ASKREPO_HOME"] = str(home)
    root = make_fixture_repo(tmp_path_factory.mktemp("fx") / "repo")
    summary = index_repo(root)
    yield root, home, summary
    if old is None:
        os.environ.pop("ASKREPO_HOME", None)
    else:
        os.environ["ASKREPO_HOME"] = old


@pytest.fixture
def retriever(indexed, monkeypatch):
    root, home, _ = indexed
    monkeypatch.setenv("ASKREPO_HOME", str(home))
    return Retriever.open(root)


def _rank(hits, path, symbol):
    for h in hits:
        if h.path == path and h.symbol == symbol:
            return h.rank
    return None


def test_summary_of_real_index(indexed):
    _, _, s = indexed
    assert s.model_id.startswith("all-MiniLM-L6-v2")
    assert s.chunks_total > 20 and s.files_total > 10
    assert s.redactions >= 2  # the fake AWS key and password in shop/settings.py
    assert {"python", "javascript", "go"} <= set(s.chunks_by_language)


def test_natural_language_questions_find_the_function(retriever):
    ranks = {q: _rank(retriever.search(q, SearchOptions(k=5)).hits, p, s) for q, p, s in QUESTIONS}
    assert all(r is not None for r in ranks.values()), ranks
    firsts = sum(r == 1 for r in ranks.values())
    assert firsts >= len(QUESTIONS) // 2, ranks
    q = "how is a discount code applied to a price?"
    assert ranks[q] == 1


@pytest.mark.parametrize(
    "query, path, symbol",
    [
        ("authenticate_user", "shop/auth.py", "authenticate_user"),
        ("where is `load_config` defined?", "shop/config.py", "load_config"),
        ("SessionStore.expire", "shop/auth.py", "SessionStore.expire"),
        ("renderCart", "web/app.js", "renderCart"),
    ],
)
def test_exact_identifier_ranks_its_definition_first(retriever, query, path, symbol):
    hits = retriever.search(query, SearchOptions(k=5)).hits
    assert (hits[0].path, hits[0].symbol) == (path, symbol)


def test_scope_filter_and_override(retriever):
    default = retriever.search("authenticate_user", SearchOptions(k=10)).hits
    assert all(h.file_class not in ("test", "doc") for h in default)
    about_tests = retriever.search("where is authenticate_user tested?", SearchOptions(k=10)).hits
    assert any(h.file_class == "test" for h in about_tests)
    forced = retriever.search("authenticate_user", SearchOptions(k=10, include_tests=True)).hits
    assert any(h.file_class == "test" for h in forced)


def test_secrets_are_not_searchable(retriever):
    for q in ("AKIAIOSFODNN7EXAMPLE", "hunter2hunter2"):
        for mode in ("fts", "hybrid"):
            hits = retriever.search(q, SearchOptions(k=20, mode=mode, scope=False)).hits
            assert all(q not in h.text for h in hits)


def test_expand_adds_callees_marked_as_expansion(retriever):
    res = retriever.search("how is the cart total computed?", SearchOptions(k=3, expand=True))
    expanded = [h for h in res.hits if h.expanded_from]
    assert any(h.symbol == "apply_discount" for h in expanded), [
        (h.symbol, h.expanded_from) for h in res.hits
    ]


def _cli(*args, home):
    env = dict(os.environ, ASKREPO_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "askrepo.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_cli_search_json_contract(indexed):
    root, home, _ = indexed
    p = _cli("search", "how is the cart total computed?", "--repo", str(root), "--json", home=home)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert set(data) == {
        "query", "repo", "mode", "elapsed_ms", "hits", "dense_partial",
        "indexed_commit", "head_commit", "stale", "changed_files",
    }  # fmt: skip
    assert data["mode"] == "hybrid" and data["repo"] == str(root)
    assert data["stale"] is False and data["dense_partial"] is False
    hit = data["hits"][0]
    assert set(hit) == {
        "rank", "path", "start_line", "end_line", "symbol", "kind", "language", "score",
        "sources", "expanded_from", "text", "file_class",
    }  # fmt: skip
    assert set(hit["sources"]) == {"dense", "fts"}
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))
    lines = (root / hit["path"]).read_text().split("\n")
    assert hit["text"] == "\n".join(lines[hit["start_line"] - 1 : hit["end_line"]])


def test_cli_human_output_and_explain(indexed):
    root, home, _ = indexed
    p = _cli("search", "renderCart", "--repo", str(root), "--explain", home=home)
    assert p.returncode == 0, p.stderr
    assert "web/app.js:" in p.stdout and "renderCart" in p.stdout and "RRF" in p.stdout


def test_cli_missing_index_error(tmp_path):
    p = _cli("search", "anything", "--repo", str(tmp_path), home=tmp_path / "h")
    assert p.returncode == 2
    assert "No index for" in p.stderr and "askrepo index" in p.stderr
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
