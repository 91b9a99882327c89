"""What waits for a running search in a served repository (``RepoHandle``, askrepo.mcp_server).

A real index of the fixture repo (tree-sitter, LanceDB; the fake embedder keeps it fast). A
search is held inside the retriever by an Event, as a slow query would be: file reads must
still be answered, and must not refresh the store under the search. The same through the real
HTTP server: tests/test_serve_http.py::test_file_viewer_does_not_wait_behind_a_search.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from askrepo.indexer import index_repo
from askrepo.mcp_server import Service
from askrepo.retriever import Retriever
from askrepo.store import open_index
from tests.fakes import FakeEmbedder
from tests.fixture_repo import expected_kept, make_fixture_repo

DEADLOCK_GUARD_S = 60  # a read that has not returned by then is waiting for the search


class HeldSearch:
    """Makes the handle's retriever block in ``search`` until ``release()``."""

    def __init__(self, retriever: Retriever):
        self.started, self.gate = threading.Event(), threading.Event()
        real = retriever.search

        def search(query, opts=None):
            self.started.set()
            assert self.gate.wait(2 * DEADLOCK_GUARD_S), "the test never released the search"
            return real(query, opts)

        retriever.search = search

    def release(self) -> None:
        self.gate.set()


@pytest.fixture
def served(tmp_path, monkeypatch):
    monkeypatch.setenv("ASKREPO_MCP_REFRESH", "0")
    root = make_fixture_repo(tmp_path / "shop")
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    svc = Service([root])
    h = svc.repos[0]
    h._retriever = Retriever(open_index(root), emb)
    return svc, h, emb


def test_file_reads_are_answered_while_a_search_runs(served):
    svc, h, _ = served
    held = HeldSearch(h._retriever)
    cart = (h.root / "shop" / "cart.py").read_text().split("\n")
    with ThreadPoolExecutor(2) as pool:
        search = pool.submit(svc.search_code, "how is the cart total computed?")
        try:
            assert held.started.wait(DEADLOCK_GUARD_S), "the search never started"
            reads = pool.submit(
                lambda: {
                    "read_file": svc.read_file("shop/cart.py", 1, 3),
                    "get_file_context": svc.get_file_context("shop/cart.py", 2, 1, 1),
                    "list_files": svc.list_files(),
                    "verify_citation": svc.verify_citation("shop/cart.py:1-3"),
                    "why_lines": svc.why_lines("shop/cart.py", 1),
                }
            ).result(timeout=DEADLOCK_GUARD_S)
            assert not search.done()  # the reads did not wait for it
        finally:
            held.release()
        hits = search.result(timeout=DEADLOCK_GUARD_S)["hits"]
    assert reads["read_file"]["content"].split("\n") == [f" {n} | {cart[n - 1]}" for n in (1, 2, 3)]
    assert reads["get_file_context"]["content"].split("\n")[1] == f">2 | {cart[1]}"
    assert [f["path"] for f in reads["list_files"]["files"]] == list(expected_kept(git=True))
    assert reads["verify_citation"]["status"] == "valid"
    assert reads["why_lines"]["commit"]["subject"] == "Demo shop"
    assert any(hit["path"] == "shop/cart.py" for hit in hits)


def test_a_read_during_a_search_does_not_refresh_the_store_under_it(served):
    svc, h, emb = served
    store = h._retriever.store
    refreshes = []
    real_refresh = store.refresh
    store.refresh = lambda: refreshes.append(threading.current_thread().name) or real_refresh()
    held = HeldSearch(h._retriever)
    with ThreadPoolExecutor(2) as pool:
        search = pool.submit(svc.search_code, "cart total")
        try:
            assert held.started.wait(DEADLOCK_GUARD_S), "the search never started"
            before = len(refreshes)
            # an index run commits a new version while the search holds the old one
            (h.root / "shop" / "refunds.py").write_text("def refund(order):\n    return 0\n")
            index_repo(h.root, embedder=emb)
            files = pool.submit(svc.list_files).result(timeout=DEADLOCK_GUARD_S)
            assert len(refreshes) == before  # no refresh (no table swap) during the search
            assert "shop/refunds.py" not in [f["path"] for f in files["files"]]
        finally:
            held.release()
        search.result(timeout=DEADLOCK_GUARD_S)
    # with no search running, the next read refreshes and sees the new version
    assert "shop/refunds.py" in [f["path"] for f in svc.list_files()["files"]]
    assert len(refreshes) > before
