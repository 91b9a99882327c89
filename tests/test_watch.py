"""``askrepo watch``: real file-system events (watchfiles), real edits, real LanceDB."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from askrepo.indexer import index_repo
from askrepo.store import open_index
from askrepo.watch import WatchStatus, watch_index
from tests.fakes import FakeEmbedder
from tests.fixture_repo import run_cli

pytest.importorskip("watchfiles", reason="askrepo watch needs watchfiles")
ROOT = Path(__file__).resolve().parent.parent


def _wait(pred, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "w"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    return root


def test_watch_reindexes_edits_and_ignores_ignored_files(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    seen: list[WatchStatus] = []
    stop = threading.Event()
    t = threading.Thread(
        target=watch_index,
        args=(repo,),
        kwargs={"embedder": emb, "on_status": seen.append, "stop_event": stop, "debounce_ms": 200},
        daemon=True,
    )
    t.start()
    try:
        assert _wait(lambda: seen), "no first status"
        assert not seen[0].stale and "fresh" in seen[0].line()
        (repo / "pkg" / "b.py").write_text("def beta_from_watch():\n    return 2\n")

        def indexed():
            # phase 1 lists the file; phase 2 (vectors) commits separately, a moment later
            store = open_index(repo)
            done, total = store.embedding_progress()
            return "pkg/b.py" in store.files() and done == total

        assert _wait(indexed), [s.line() for s in seen]
        store = open_index(repo)
        assert [c.symbol for c in store.find_symbol("beta_from_watch")] == ["beta_from_watch"]
        assert _wait(lambda: seen[-1].refreshes >= 1 and not seen[-1].stale)

        n = len(seen)
        (repo / "node_modules").mkdir()
        (repo / "node_modules" / "x.js").write_text("var ignored = 1\n")
        version = open_index(repo).meta().table_version
        time.sleep(1.5)  # give an event time to arrive: it must not start an index run
        assert open_index(repo).meta().table_version == version
        assert len(seen) >= n

        (repo / "pkg" / "a.py").unlink()
        assert _wait(lambda: "pkg/a.py" not in open_index(repo).files())
    finally:
        stop.set()
        t.join(timeout=30)
    assert not t.is_alive()


def test_watch_status_line():
    s = WatchStatus("/r", 10, 5, 8, True, 2, 1, "12:00:00: 2 files in 0.1 s")
    line = s.line()
    assert "stale (2 changed)" in line and "embedded 5/8" in line and "last refresh" in line


@pytest.mark.slow
def test_cli_watch_with_the_real_model(repo):
    p = run_cli("index", str(repo))
    assert p.returncode == 0, p.stderr
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "askrepo.cli", "watch", str(repo)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        assert _wait(lambda: lines, 120), "no status line"
        assert "watching" in lines[0] and "fresh" in lines[0], lines
        (repo / "pkg" / "c.py").write_text("def gamma_watched():\n    return 3\n")
        assert _wait(lambda: any("last refresh" in ln for ln in lines), 120), lines
        last = [ln for ln in lines if "last refresh" in ln][-1]
        assert "fresh" in last and "2 files" in last
        assert "pkg/c.py" in open_index(repo).files()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(timeout=10)
    assert not any("Traceback" in ln for ln in lines), lines
