"""Refresh, status and the stale flag through the MCP service and the CLI, with real file edits."""

from __future__ import annotations

import json

import pytest

from askrepo.indexer import index_repo
from askrepo.mcp_server import Service
from askrepo.refresh import refresh_changed
from askrepo.retriever import Retriever, SearchOptions
from askrepo.store import open_index
from askrepo.store_writer import IndexWriter
from tests.fakes import FakeEmbedder
from tests.fixture_repo import git, run_cli

FRESH_KEYS = {"indexed_commit", "head_commit", "stale", "changed_files"}


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "shop"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "auth.py").write_text("def authenticate_user(u, p):\n    return u == p\n")
    (root / "shop" / "cart.py").write_text("class Cart:\n    def total(self):\n        return 0\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


def _service(root, emb):
    svc = Service([root])
    svc.repos[0]._retriever = Retriever(open_index(root), emb)
    return svc


def test_mcp_stale_is_exact_and_on_every_tool(repo, monkeypatch):
    monkeypatch.setenv("ASKREPO_MCP_REFRESH", "0")
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    svc = _service(repo, emb)
    res = svc.search_code("authenticate_user")
    assert res["stale"] is False and res["changed_files"] == 0
    assert res["indexed_commit"] == res["head_commit"] == res["commit"]

    (repo / "shop" / "auth.py").write_text("def login_user(u, p):\n    return u == p\n")
    results = {
        "search_code": svc.search_code("authenticate_user"),
        "grep_code": svc.grep_code("Cart"),
        "find_symbol": svc.find_symbol("Cart"),
        "get_file_context": svc.get_file_context("shop/cart.py", 1),
        "read_file": svc.read_file("shop/cart.py"),
        "list_files": svc.list_files(),
        "index_status": svc.index_status(),
    }
    for name, out in results.items():
        assert FRESH_KEYS <= set(out), name
        assert out["stale"] is True and out["changed_files"] == 1, name
    assert results["index_status"]["changed_paths"] == ["shop/auth.py"]
    assert results["index_status"]["embedded"] == "{0} / {0} chunks".format(
        open_index(repo).meta().chunk_count
    )


def test_mcp_refreshes_changed_files_before_a_search_debounced(repo, monkeypatch):
    monkeypatch.setenv("ASKREPO_MCP_REFRESH_SECONDS", "3600")
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    svc = _service(repo, emb)
    (repo / "shop" / "auth.py").write_text("def login_user(u, p):\n    return u == p\n")
    res = svc.search_code("login_user")
    assert res["stale"] is False and res["hits"][0]["symbol"] == "login_user"
    assert svc.find_symbol("authenticate_user")["definitions"] == []
    # within the debounce window: no second index run, so the edit shows as stale
    (repo / "shop" / "cart.py").write_text("class Basket:\n    pass\n")
    res = svc.search_code("Basket")
    assert res["stale"] is True and res["changed_files"] == 1


def test_refresh_changed_limits_and_lock(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    store = open_index(repo)
    for i in range(3):
        (repo / "shop" / f"new{i}.py").write_text(f"def new_{i}():\n    pass\n")
    res = refresh_changed(store, limit=2, embedder=emb)
    assert not res.refreshed and res.changed_files == 3
    assert "3 files changed" in res.note and f"askrepo index {repo}" in res.note
    with IndexWriter(repo, emb.model_id, "fake", emb.dim, rebuild=False):
        res = refresh_changed(store, limit=20, embedder=emb)
    assert not res.refreshed and "another index run" in res.note
    emb.texts.clear()
    res = refresh_changed(store, limit=20, embedder=emb)
    assert res.refreshed and not res.freshness.stale and res.chunks_embedded == 3
    assert len(emb.texts) == 3  # only the new files were embedded
    assert {c.symbol for _, c, _ in store.by_symbol(["new_0", "new_2"])} == {"new_0", "new_2"}


def test_a_refresh_that_cannot_write_the_index_searches_as_is(repo, monkeypatch):
    """A shared index in a read-only ASKREPO_HOME: `search --refresh` (or
    ASKREPO_AUTO_REFRESH=1, on every search) failed with `Permission denied: …/lock` instead of
    searching the index as it is, as the other failing refreshes do."""
    import askrepo.indexer

    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    store = open_index(repo)
    (repo / "shop" / "new.py").write_text("def new():\n    pass\n")

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(store.path / "lock"))

    monkeypatch.setattr(askrepo.indexer, "index_repo", read_only)
    res = refresh_changed(store, limit=20, embedder=emb)
    assert not res.refreshed and res.freshness.stale
    assert res.note == f"refresh failed (Permission denied: {store.path / 'lock'}); searched as is"


def test_refresh_of_a_deleted_file(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    store = open_index(repo)
    (repo / "shop" / "cart.py").unlink()
    res = refresh_changed(store, embedder=emb)
    assert res.refreshed and not res.freshness.stale
    assert "shop/cart.py" not in store.files()
    r = Retriever(store, emb)
    assert all(h.path != "shop/cart.py" for h in r.search("Cart total", SearchOptions()).hits)


def _cli(*args, env=None, check=True):
    proc = run_cli(*args, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.slow
def test_cli_search_refresh_and_status_with_the_real_model(repo):
    """Real MiniLM, real CLI processes: stale note, --refresh, status JSON."""
    summary = json.loads(_cli("index", str(repo), "--json").stdout)
    assert FRESH_KEYS <= set(summary) and summary["stale"] is False
    assert summary["chunks_with_vectors"] == summary["chunks_total"] > 0
    (repo / "shop" / "auth.py").write_text("def login_user(u, p):\n    return u == p\n")

    proc = _cli("search", "login_user", "--repo", str(repo), "--json")
    out = json.loads(proc.stdout)
    assert out["stale"] is True and out["changed_files"] == 1
    assert out["changed_paths"] == ["shop/auth.py"] and "1 file changed" in proc.stderr

    st = json.loads(_cli("status", str(repo), "--json").stdout)
    assert st["stale"] is True and st["embedded"] == st["chunk_count"] > 0

    proc = _cli("search", "login_user", "--repo", str(repo), "--json", "--refresh")
    out = json.loads(proc.stdout)
    assert out["stale"] is False and out["changed_files"] == 0
    assert out["hits"][0]["symbol"] == "login_user" and "refreshed 1 changed file" in proc.stderr
    assert out["hits"][0]["sources"]["dense"] is not None  # embedded by the refresh

    (repo / "shop" / "cart.py").write_text("class Basket:\n    pass\n")
    proc = _cli(
        "search", "Basket", "--repo", str(repo), "--json", env={"ASKREPO_AUTO_REFRESH": "1"}
    )
    assert json.loads(proc.stdout)["stale"] is False

    for i in range(3):
        (repo / f"extra{i}.py").write_text(f"def extra_{i}():\n    pass\n")
    proc = _cli(
        "search",
        "extra",
        "--repo",
        str(repo),
        "--json",
        "--refresh",
        env={"ASKREPO_REFRESH_MAX_FILES": "2"},
    )
    out = json.loads(proc.stdout)
    assert out["stale"] is True and out["changed_files"] == 3
    assert "3 files changed" in proc.stderr and "askrepo index" in proc.stderr


def test_cli_status_during_phase_2(repo):
    index_repo(repo, model="minilm", embed=False)  # phase 1 only
    st = json.loads(_cli("status", str(repo), "--json").stdout)
    assert st["embedded"] == 0 and st["chunk_count"] > 0 and st["stale"] is False
    text = _cli("status", str(repo)).stdout
    assert f"0 / {st['chunk_count']} chunks" in text
    # lexical search works before any vector exists
    proc = _cli("search", "authenticate_user", "--repo", str(repo), "--json", "--mode", "fts")
    assert json.loads(proc.stdout)["hits"][0]["symbol"] == "authenticate_user"
    # hybrid says the dense side is partial (JSON and --explain)
    proc = _cli("search", "authenticate_user", "--repo", str(repo), "--json")
    out = json.loads(proc.stdout)
    assert out["dense_partial"] is True and out["hits"][0]["symbol"] == "authenticate_user"
    proc = _cli("search", "authenticate_user", "--repo", str(repo), "--explain")
    assert "dense over 0/" in proc.stdout and "embedded chunks" in proc.stdout


def test_ask_points_to_a_changed_file_for_a_name_the_index_lacks(repo, monkeypatch, tmp_path):
    """A name added to a file after indexing: the card says where it is and that --refresh
    reads it; a name only in a file added since is 'not in the index yet', not absent from
    the code base. Without the changed paths, the old behaviour (a refusal for the new file)."""
    from askrepo.answer import ask
    from askrepo.freshness import check_store
    from askrepo.llm import NoModel

    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    with (repo / "shop" / "auth.py").open("a") as f:
        f.write("\n\ndef rotate_session_keys(store):\n    return store.rotate()\n")
    (repo / "shop" / "audit.py").write_text("def record_login_attempt(user):\n    return user\n")
    retriever = Retriever(open_index(repo), emb)
    fresh = check_store(retriever.store)
    assert fresh.stale and set(fresh.changed) == {"shop/auth.py", "shop/audit.py"}

    a = ask("where is rotate_session_keys?", retriever, NoModel(), changed=fresh.changed)
    assert not a.refused
    assert (
        "`rotate_session_keys` is in `shop/auth.py`, changed since the index was built, so the "
        "code above may not show it: ask again with `--refresh` to read it." in a.answer
    )
    a = ask("where is record_login_attempt?", retriever, NoModel(), changed=fresh.changed)
    assert a.refused and a.answer == (
        "`record_login_attempt` is not in the index yet: it is in `shop/audit.py`, changed "
        "since the index was built — ask again with `--refresh` to read it."
    )
    a = ask("where is record_login_attempt?", retriever, NoModel())
    assert a.refused and a.answer.startswith("The code base does not contain")
    # a name in no file at all: still refused as absent, even with changed files
    a = ask("where is PaymentGatewayRegistry?", retriever, NoModel(), changed=fresh.changed)
    assert a.refused and a.answer.startswith("The code base does not contain")
    # a cited file deleted since indexing: the answer says its code is gone
    (repo / "shop" / "cart.py").unlink()
    fresh = check_store(retriever.store)
    a = ask("what does Cart.total return?", retriever, NoModel(), changed=fresh.changed)
    ns = "".join(f"[{c['n']}]" for c in a.evidence_sources if c["path"] == "shop/cart.py")
    assert ns == "[1][2]"  # the method and its class
    assert (
        f"`shop/cart.py` {ns} was deleted since the index was built: its code is no longer "
        "in the work tree." in a.answer
    )
