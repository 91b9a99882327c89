"""Crash safety and concurrency with real processes, real LanceDB and the real chunker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from askrepo.indexer import index_repo
from askrepo.retriever import Retriever, SearchOptions
from askrepo.store import open_index
from tests.fakes import FakeEmbedder
from tests.index_child import VERSION_A

ROOT = Path(__file__).resolve().parent.parent


def _make_repo(root: Path, n: int = 12) -> Path:
    (root / "pkg").mkdir(parents=True)
    for i in range(n):
        body = "\n\n".join(
            f"def func_{i}_{j}(x):\n    '''Handle case {j} of module {i}.'''\n    return x + {j}\n"
            for j in range(5)
        )
        (root / "pkg" / f"mod{i}.py").write_text(body)
    (root / "toggle.py").write_text(VERSION_A)
    return root


def _child(*args: str, piece_chars: int = 0) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.index_child", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "INDEX_CHILD_PIECE_CHARS": str(piece_chars)},
    )


def _snapshot(root: Path) -> list[tuple[str, int, int, str | None]]:
    r = Retriever.open(root, embedder=FakeEmbedder())
    hits = r.search("handle case module", SearchOptions(k=20, max_per_file=0)).hits
    return sorted((h.path, h.start_line, h.end_line, h.symbol) for h in hits)


def _kill_at(root: Path, stage: str, piece_chars: int = 0) -> None:
    child = _child(str(root), stage, piece_chars=piece_chars)
    try:
        line = child.stdout.readline()
        assert line.strip() == f"AT {stage}", child.stderr.read() if child.poll() else line
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()


@pytest.mark.parametrize("stage", ["walk", "chunk", "fts"])
def test_sigkill_in_phase_1_keeps_previous_index(tmp_path, stage):
    root = _make_repo(tmp_path / "repo")
    index_repo(root, embedder=FakeEmbedder())
    before = _snapshot(root)
    meta_before = open_index(root).meta()

    # change every file, so the killed run would have rewritten most of the table
    for p in (root / "pkg").glob("*.py"):
        p.write_text(p.read_text().replace("Handle case", "Process variant"))
    _kill_at(root, stage)

    assert open_index(root).meta().table_version == meta_before.table_version
    assert _snapshot(root) == before  # the old index answers, unchanged

    s = index_repo(root, embedder=FakeEmbedder())  # completes without --rebuild
    assert s.rebuilt is None and s.files_indexed == 12
    r = Retriever.open(root, embedder=FakeEmbedder())
    top = r.search("process variant", SearchOptions(k=3, mode="fts")).hits
    assert top and "Process variant" in top[0].text


@pytest.mark.parametrize("stage", ["phase1", "embed"])
def test_sigkill_between_phases_and_in_phase_2_leaves_searchable_index(tmp_path, stage):
    """Killed after phase 1 committed (between the phases, or mid-phase-2): the new text is
    searchable at once (full-text + symbols, dense over what has vectors), and the next run
    embeds only the chunks that still have none."""
    root = _make_repo(tmp_path / "repo")
    index_repo(root, embedder=FakeEmbedder())
    for p in (root / "pkg").glob("*.py"):
        p.write_text(p.read_text().replace("Handle case", "Process variant"))
    _kill_at(root, stage)

    store = open_index(root)
    done, total = store.embedding_progress()
    assert done < total
    assert store.meta().file_count == 13
    r = Retriever(store, FakeEmbedder())
    res = r.search("process variant", SearchOptions(k=3))
    assert res.dense_partial and res.hits and "Process variant" in res.hits[0].text
    assert r.search("func_3_2", SearchOptions(k=1)).hits[0].symbol == "func_3_2"

    emb = FakeEmbedder()
    s = index_repo(root, embedder=emb)  # resumes: nothing to chunk, only vectors to add
    assert s.rebuilt is None and s.files_indexed == 0 and s.chunks_added == 0
    assert s.chunks_embedded == total - done == len(emb.texts)
    assert open_index(root).embedding_progress() == (total, total)
    res = Retriever.open(root, embedder=FakeEmbedder()).search("process variant")
    assert not res.dense_partial and res.hits[0].sources["dense"] is not None


def test_sigkill_in_phase_2_never_leaves_a_piece_without_its_chunks_vector(tmp_path):
    """With piece vectors, a kill mid-phase-2 leaves each chunk with all of its vectors or none
    (they are one append), and the resumed run adds each missing chunk's vector and pieces once.
    """
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    for i in range(6):
        body = "\n\n".join(
            f"def long_{i}_{j}(x):\n"
            + "".join(f"    step_{k} = x * {k} + {j}  # part {k} of {i}\n" for k in range(12))
            + "    return x\n"
            for j in range(4)
        )
        (root / "pkg" / f"mod{i}.py").write_text(body)
    _kill_at(root, "embed", piece_chars=200)

    def rows() -> dict[str, list[int]]:
        vec = open_index(root).vectors
        out: dict[str, list[int]] = {}
        for r in vec.search().select(["id", "piece"]).limit(max(vec.count_rows(), 1)).to_list():
            out.setdefault(r["id"], []).append(r["piece"])
        return {cid: sorted(p) for cid, p in out.items()}

    store = open_index(root)
    done, total = store.embedding_progress()
    assert 0 < done < total
    partial = rows()
    assert len(partial) == done and all(p[0] == 0 for p in partial.values())
    assert all(p == list(range(len(p))) and len(p) > 1 for p in partial.values())

    index_repo(root, embedder=FakeEmbedder(piece_chars=200))
    full = rows()
    assert len(full) == total and open_index(root).embedding_progress() == (total, total)
    assert {cid: full[cid] for cid in partial} == partial  # nothing embedded twice
    assert len({len(p) for p in full.values()}) == 1  # every chunk: its vector + same pieces


def test_sigkill_at_random_moments(tmp_path):
    root = _make_repo(tmp_path / "repo")
    index_repo(root, embedder=FakeEmbedder())
    for delay in (0.3, 0.8, 1.5, 2.5):
        for p in (root / "pkg").glob("*.py"):
            p.write_text(p.read_text() + f"\n# touched {delay}\n")
        child = _child(str(root), "-")
        time.sleep(delay)
        child.kill()
        child.wait(timeout=30)
        snap = _snapshot(root)  # never an error, never empty
        assert snap
    s = index_repo(root, embedder=FakeEmbedder())
    assert s.rebuilt is None


def test_search_while_indexing_sees_old_or_new_never_a_mix(tmp_path):
    root = _make_repo(tmp_path / "repo", n=4)
    index_repo(root, embedder=FakeEmbedder())
    child = _child(str(root), "-", "6")
    seen = set()
    try:
        r = Retriever.open(root, embedder=FakeEmbedder())
        deadline = time.time() + 120
        while child.poll() is None and time.time() < deadline:
            hits = r.search("handler request", SearchOptions(k=5, mode="fts")).hits
            names = {h.symbol for h in hits if h.path == "toggle.py"}
            assert len(names) == 1, names  # exactly one version of toggle.py, never both/none
            seen |= names
    finally:
        if child.poll() is None:
            child.kill()
    assert child.wait(timeout=60) == 0, child.stderr.read()
    assert seen  # searched at least once during the runs


def test_two_concurrent_index_runs_one_is_refused(tmp_path):
    root = _make_repo(tmp_path / "repo")
    child = _child(str(root), "embed")
    try:
        assert child.stdout.readline().strip() == "AT embed"
        second = subprocess.run(
            [sys.executable, "-m", "tests.index_child", str(root)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode != 0
        assert "Another index run is in progress (pid" in second.stderr
    finally:
        child.kill()
        child.wait(timeout=30)
    s = index_repo(root, embedder=FakeEmbedder())
    assert s.files_total == 13
