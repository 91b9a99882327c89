"""Re-indexing reuses vectors by embedded text (``IndexWriter.old_vectors``,
``indexer._copy_vectors``): real LanceDB and chunker, a fake embedder that records what it
embeds, and one run with the real MiniLM."""

from __future__ import annotations

import json

import numpy as np
import pytest

from askrepo.indexer import index_repo
from askrepo.retriever import Retriever, SearchOptions
from askrepo.store import META_FILE, open_index
from askrepo.store_writer import IndexWriter
from tests.fakes import FakeEmbedder


def _function(n: int, body: str = "") -> str:
    lines = [f"    total_{n}_{j} = value * {j} + {n}\n" for j in range(40)]  # > 900 chars: pieces
    return (
        f"def handler_{n}(value):\n    '''Handle request kind {n}.'''\n"
        + "".join(lines)
        + body
        + f"    return total_{n}_0\n\n\n"
    )


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "handlers.py").write_text("".join(_function(n) for n in range(5)))
    (root / "pkg" / "other.py").write_text("def other():\n    return 'unrelated code'\n")
    return root


def _fake() -> FakeEmbedder:
    return FakeEmbedder(piece_chars=900)


def _vectors(root) -> dict[tuple[str, str | None, int], np.ndarray]:
    """(path, symbol, piece) -> the stored vector, read from the committed tables."""
    import lancedb

    store = open_index(root)
    meta = store.meta()
    db = lancedb.connect(str(store.path / "lance"))
    chunks = db.open_table(meta.table)
    chunks.checkout(meta.table_version)
    vectors = db.open_table(meta.vectors_table)
    vectors.checkout(meta.vectors_version)
    rows = chunks.to_arrow().select(["id", "path", "symbol"]).to_pylist()
    where = {r["id"]: (r["path"], r["symbol"]) for r in rows}
    out = {}
    for r in vectors.to_arrow().select(["id", "piece", "vector"]).to_pylist():
        out[(*where[r["id"]], r["piece"])] = np.asarray(r["vector"], dtype=np.float32)
    return out


def _force_chunker_upgrade(root) -> None:
    path = open_index(root).path / META_FILE
    meta = json.loads(path.read_text())
    meta["chunker_version"] = "0-old"
    path.write_text(json.dumps(meta))


def _hits(root, emb, query="handle request kind value total"):
    r = Retriever.open(root, embedder=emb)
    hits = r.search(query, SearchOptions(k=10, max_per_file=0, mode="dense")).hits
    return [(h.path, h.start_line, h.end_line, round(h.score, 5)) for h in hits]


def test_editing_one_function_embeds_only_that_chunk(repo):
    emb = _fake()
    first = index_repo(repo, embedder=emb)
    assert first.chunks_reused == 0 and first.chunks_embedded == first.chunks_total
    assert any(k[2] > 0 for k in _vectors(repo))  # the functions have piece vectors
    before = _vectors(repo)

    p = repo / "pkg" / "handlers.py"
    p.write_text(p.read_text().replace("return total_2_0", "return total_2_0 + 1"))
    emb = _fake()
    s = index_repo(repo, embedder=emb)
    assert s.files_indexed == 1
    assert s.chunks_embedded == 1 and s.chunks_reused == 4
    assert all("handler_2" in t for t in emb.texts)  # own text and pieces of the edited one
    after = _vectors(repo)
    assert after.keys() == before.keys()
    for key, vec in after.items():
        if key[1] != "handler_2":
            assert np.array_equal(vec, before[key]), key  # copied bit for bit
    assert open_index(repo).meta().embedded_count == s.chunks_total

    # the same run again from scratch embeds the same vectors: search agrees exactly
    reused_hits = _hits(repo, emb)
    index_repo(repo, embedder=_fake(), rebuild=True)
    assert _hits(repo, emb) == reused_hits


def test_a_moved_function_reuses_when_its_text_is_unchanged(repo):
    """Without the path header (ASKREPO_ENRICH off) a function moved to another file is
    embedded as the same text: its vector is copied from the removed file's rows."""
    index_repo(repo, embedder=_fake(), enrich=False)
    (repo / "pkg" / "handlers.py").rename(repo / "pkg" / "moved.py")
    emb = _fake()
    s = index_repo(repo, embedder=emb, enrich=False)
    assert s.files_removed == 1 and s.chunks_reused == 5 and s.chunks_embedded == 0
    assert emb.calls == 0


def test_rebuild_for_a_chunker_upgrade_reuses_and_explicit_rebuild_does_not(repo):
    emb = _fake()
    index_repo(repo, embedder=emb)
    before = _vectors(repo)
    hits = _hits(repo, emb)

    _force_chunker_upgrade(repo)
    notes: list[str] = []
    emb = _fake()
    s = index_repo(repo, embedder=emb, notify=notes.append)
    assert s.rebuilt and "chunker version 0-old" in s.rebuilt
    assert "reusing the vectors of unchanged text" in notes[0]
    assert s.chunks_embedded == 0 and s.chunks_reused == s.chunks_total == 6
    assert emb.calls == 0
    after = _vectors(repo)
    assert after.keys() == before.keys()
    assert all(np.array_equal(v, before[k]) for k, v in after.items())
    assert _hits(repo, emb) == hits
    store = open_index(repo)
    assert store.meta().embedded_count == store.meta().chunk_count == 6

    emb = _fake()
    s = index_repo(repo, embedder=emb, rebuild=True)  # a clean slate: embeds everything
    assert s.chunks_reused == 0 and s.chunks_embedded == s.chunks_total


def test_no_reuse_after_the_embedding_style_changed(repo, monkeypatch):
    index_repo(repo, embedder=_fake())  # enrich on (the default)
    _force_chunker_upgrade(repo)
    monkeypatch.setenv("ASKREPO_ENRICH", "0")
    emb = _fake()
    s = index_repo(repo, embedder=emb)
    assert s.rebuilt and s.chunks_reused == 0 and s.chunks_embedded == s.chunks_total


def test_a_chunker_rebuild_keeps_the_old_enrich_setting(repo, monkeypatch):
    monkeypatch.delenv("ASKREPO_ENRICH", raising=False)
    index_repo(repo, embedder=_fake(), enrich=False)
    _force_chunker_upgrade(repo)
    s = index_repo(repo, embedder=_fake())
    assert s.chunks_reused == s.chunks_total
    assert open_index(repo).meta().enrich is False


def test_unreadable_old_tables_fall_back_to_embedding(repo):
    index_repo(repo, embedder=_fake())
    store = open_index(repo)
    vectors_dir = store.path / "lance" / f"{store.meta().vectors_table}.lance"
    for f in (vectors_dir / "data").iterdir():
        f.write_bytes(b"not a lance file")
    _force_chunker_upgrade(repo)
    emb = _fake()
    s = index_repo(repo, embedder=emb)
    assert s.chunks_reused == 0 and s.chunks_embedded == s.chunks_total == 6


def test_vectors_of_another_embed_text_version_are_not_reused(repo, monkeypatch):
    from askrepo import store_writer

    index_repo(repo, embedder=_fake())
    _force_chunker_upgrade(repo)
    monkeypatch.setattr(store_writer, "EMBED_TEXT_VERSION", "2")
    s = index_repo(repo, embedder=_fake())
    assert s.chunks_reused == 0 and s.chunks_embedded == 6
    p = repo / "pkg" / "other.py"  # the new table is stamped "2": reuse works again
    p.write_text(p.read_text() + "\n\ndef more():\n    return 2\n")
    s = index_repo(repo, embedder=_fake())
    assert s.chunks_embedded == 1 and s.chunks_reused == 1


def test_old_vectors_reads_nothing_without_a_source(repo):
    with IndexWriter(repo, "fake-bow-32", "fake", 32, rebuild=False) as w:  # a first index
        assert w.reuse_meta is None
        assert w.old_vectors(lambda c: [c.text]) == {}
        assert w.old_vectors(lambda c: [c.text], ["pkg/handlers.py"]) == {}


def test_a_crash_after_phase_1_leaves_an_index_the_next_run_completes(repo):
    index_repo(repo, embedder=_fake())
    p = repo / "pkg" / "handlers.py"
    p.write_text(p.read_text().replace("return total_2_0", "return total_2_0 + 1"))
    with pytest.raises(RuntimeError, match="injected"):
        index_repo(repo, embedder=FakeEmbedder(piece_chars=900, fail_on_call=1))
    meta = open_index(repo).meta()
    assert meta.embedded_count == meta.chunk_count - 1  # the 4 copies were committed
    s = index_repo(repo, embedder=_fake())
    assert s.chunks_embedded == 1 and s.files_indexed == 0
    assert open_index(repo).meta().fully_embedded


def test_real_model_reuse_matches_a_full_embed(repo):
    """MiniLM: vectors copied after an edit equal the ones a fresh index computes."""
    index_repo(repo, model="minilm")
    p = repo / "pkg" / "handlers.py"
    p.write_text(p.read_text().replace("return total_2_0", "return total_2_0 + 1"))
    s = index_repo(repo, model="minilm")
    assert s.chunks_embedded == 1 and s.chunks_reused == 4
    reused = _vectors(repo)
    index_repo(repo, model="minilm", rebuild=True)
    fresh = _vectors(repo)
    assert reused.keys() == fresh.keys()
    for key in fresh:  # another batch composition: equal up to float noise
        assert np.allclose(reused[key], fresh[key], atol=1e-5), key
