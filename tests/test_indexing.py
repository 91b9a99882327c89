"""Index identity and data-loss regressions (issue 10 items 5, 6, 12), real LanceDB + chunker."""

from __future__ import annotations

import os

import pytest

from askrepo.chunker import CHUNKER_VERSION
from askrepo.errors import IndexIncompatibleError
from askrepo.indexer import embed_batches, index_repo, plan, style_conflict
from askrepo.retriever import Retriever, SearchOptions
from askrepo.store import open_index, repo_key
from tests.fakes import FakeEmbedder
from tests.fixture_repo import run_cli

AUTH = "def authenticate_user(name, password):\n    return name == password\n"
CART = "class Cart:\n    def total(self):\n        return 0\n"


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "auth.py").write_text(AUTH)
    (root / "shop" / "cart.py").write_text(CART)
    return root


# -- item 5: a file unreadable mid-run keeps its chunks ------------------------------------------


def test_file_unreadable_between_walk_and_read_keeps_its_chunks(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    old_sha = open_index(repo).files()["shop/auth.py"].sha
    auth = repo / "shop" / "auth.py"
    auth.write_text(AUTH.replace("authenticate_user", "login_user"))

    def swap_to_fifo(stage, done, total):
        if stage == "walk" and total:  # the walk saw the new content; now it cannot be read
            auth.unlink()
            os.mkfifo(auth)

    s = index_repo(repo, embedder=emb, progress=swap_to_fifo)
    assert s.skipped.get("unreadable") == 1 and "shop/auth.py" in s.skipped_paths["unreadable"]
    assert s.files_indexed == 0
    store = open_index(repo)
    assert store.files()["shop/auth.py"].sha == old_sha  # manifest: what is actually stored
    r = Retriever(store, emb)
    hit = r.search("authenticate_user", SearchOptions(k=1)).hits[0]
    assert hit.symbol == "authenticate_user"  # the previous chunks are still there

    auth.unlink()
    auth.write_text(AUTH.replace("authenticate_user", "login_user"))
    s = index_repo(repo, embedder=emb)  # retried: the file is seen as changed again
    assert s.files_indexed == 1
    r = Retriever.open(repo, embedder=emb)
    assert r.search("login_user", SearchOptions(k=1)).hits[0].symbol == "login_user"


def test_new_file_unreadable_mid_run_is_not_recorded(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    new = repo / "shop" / "new.py"
    new.write_text("def brand_new():\n    pass\n")

    def swap(stage, done, total):
        if stage == "walk" and total:
            new.unlink()
            os.mkfifo(new)

    index_repo(repo, embedder=emb, progress=swap)
    assert "shop/new.py" not in open_index(repo).files()
    new.unlink()
    new.write_text("def brand_new():\n    pass\n")
    assert index_repo(repo, embedder=emb).files_indexed == 1


def test_plan_is_by_hash():
    from askrepo.datatypes import SourceFile

    a = SourceFile("a.py", "python", "code", 1, "x")
    b = SourceFile("b.py", "python", "code", 1, "y")
    b2 = SourceFile("b.py", "python", "code", 1, "z")
    c = SourceFile("c.py", "python", "code", 1, "w")
    todo, removed = plan({"a.py": a, "b.py": b, "c.py": c}, {"a.py": a, "b.py": b2})
    assert [f.path for f in todo] == ["b.py"] and removed == ["c.py"]
    # same bytes, classified differently by a newer askrepo (src/tests.rs is now a test file)
    t = SourceFile("src/tests.rs", "rust", "code", 1, "v")
    t2 = SourceFile("src/tests.rs", "rust", "test", 1, "v")
    assert [f.path for f in plan({"src/tests.rs": t}, {"src/tests.rs": t2})[0]] == ["src/tests.rs"]


# -- item 6: embedding style is part of the index identity ----------------------------------------


def test_switching_enrich_is_refused_then_rebuild_works(repo, monkeypatch):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    assert open_index(repo).meta().enrich is True
    monkeypatch.setenv("ASKREPO_ENRICH", "0")
    (repo / "shop" / "cart.py").write_text(CART + "\n\ndef more():\n    pass\n")
    emb.texts.clear()
    with pytest.raises(IndexIncompatibleError, match=r"ASKREPO_ENRICH on \(now off\).*--rebuild"):
        index_repo(repo, embedder=emb)
    assert emb.texts == []  # nothing embedded in the other style
    s = index_repo(repo, embedder=emb, rebuild=True)
    assert s.rebuilt == "--rebuild" and open_index(repo).meta().enrich is False
    assert all(not t.startswith("# shop/") for t in emb.texts)  # no header: enrich off
    # with the variable unset, a run keeps the style the index has
    monkeypatch.delenv("ASKREPO_ENRICH")
    (repo / "shop" / "auth.py").write_text(AUTH + "\n\ndef extra():\n    pass\n")
    index_repo(repo, embedder=emb)
    assert open_index(repo).meta().enrich is False


def test_switching_contextual_is_refused(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    with pytest.raises(IndexIncompatibleError, match="no --contextual.*--rebuild"):
        index_repo(repo, embedder=emb, contextual=object())


def test_style_conflict_messages():
    from types import SimpleNamespace as NS

    meta = NS(repo="/r", enrich=True, contextual=True)
    assert style_conflict(meta, True, True) is None
    msg = style_conflict(meta, False, False)
    assert "ASKREPO_ENRICH on (now off)" in msg and "--contextual" in msg and "--rebuild" in msg


def test_cli_refuses_a_style_switch_in_one_line(repo, tmp_path):
    index_repo(repo, model="minilm", embed=False)  # phase 1 only: no model needed
    proc = run_cli("index", str(repo), env={"ASKREPO_ENRICH": "0"}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "ASKREPO_ENRICH on (now off)" in proc.stderr and "--rebuild" in proc.stderr


def test_an_index_from_an_older_chunker_is_refused_then_rebuilt_by_a_plain_index_run(
    repo, monkeypatch
):
    """Upgrading askrepo past a chunker change (here 3 -> 4: Latin-1 files read as U+FFFD
    before): search refuses in one line naming `askrepo index PATH`, and a plain `askrepo index`
    says why it rebuilds, then re-chunks and re-embeds every file (real model, real LanceDB)."""
    import json

    from askrepo import ingest

    (repo / "shop" / "legal.py").write_bytes(
        b"# Copyright \xa9 J\xfcrgen\ndef licence():\n    pass\n"
    )
    with monkeypatch.context() as m:  # as chunker 3 read it
        m.setattr(ingest, "decode", lambda data: data.decode("utf-8-sig", errors="replace"))
        index_repo(repo, model="minilm", embed=False)
    meta_path = open_index(repo).path / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["chunker_version"] = "3"
    meta_path.write_text(json.dumps(meta))

    proc = run_cli("search", "licence", "--repo", str(repo), timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "chunked by chunker version 3" in proc.stderr
    assert f"run `askrepo index {repo.resolve()}`" in proc.stderr
    assert "--rebuild" not in proc.stderr

    proc = run_cli("index", str(repo), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "re-chunking every file, reusing the vectors of unchanged text" in proc.stderr
    assert "chunker version 3" in proc.stdout  # the summary's `rebuilt` row
    store = open_index(repo)
    assert store.meta().chunker_version == CHUNKER_VERSION
    assert store.meta().embedded_count == store.meta().chunk_count == meta["chunk_count"]
    (chunk,) = [c for _, c, _ in store.where("path = 'shop/legal.py'")]
    assert chunk.text.startswith("# Copyright © Jürgen\n")
    proc = run_cli("search", "who holds the copyright", "--repo", str(repo), timeout=120)
    assert proc.returncode == 0 and "shop/legal.py" in proc.stdout, proc.stderr


# -- item 12: a repository under a directory whose name is not UTF-8 ------------------------------


def test_latin1_directory_name(tmp_path):
    parent = tmp_path / os.fsdecode(b"caf\xe9-d\xe9p\xf4t")
    root = parent / "repo"
    root.mkdir(parents=True)
    (root / "main.py").write_text("def hello_world():\n    return 1\n")
    key = repo_key(root)
    assert key.startswith("repo-") and key.isascii()
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    store = open_index(root)
    assert str(store.repo) == str(root.resolve())  # the path round-trips byte for byte
    r = Retriever(store, emb)
    assert r.search("hello_world", SearchOptions(k=1)).hits[0].symbol == "hello_world"
    assert index_repo(root, embedder=emb).files_indexed == 0


def test_every_file_deleted_says_the_old_index_still_answers_and_how_to_drop_it(repo):
    """All files deleted since the last run: `index` failed with "No indexable files" while the
    old index kept answering, and the stale note's fix (`askrepo index`) only failed again."""
    from askrepo.errors import UsageError

    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    for f in (repo / "shop").iterdir():
        f.unlink()
    with pytest.raises(UsageError) as exc:
        index_repo(repo, embedder=emb)
    msg = str(exc.value)
    assert "No indexable files" in msg and "still answers for its 2 files" in msg
    assert f"delete {open_index(repo).path}" in msg
    empty = repo.parent / "empty"
    empty.mkdir()
    with pytest.raises(UsageError) as fresh:  # no earlier index: nothing more to say
        index_repo(empty, embedder=emb)
    assert "still answers" not in str(fresh.value)


# -- phase 2 batching ---------------------------------------------------------------------------


def test_embed_batches_bucket_by_length_and_cover_everything():
    texts = ["x" * n for n in (5, 1, 9, 3, 7, 2, 8)]
    batches = embed_batches(texts, 3)
    assert sorted(i for b in batches for i in b) == list(range(7))
    assert sorted(tuple(sorted(len(texts[i]) for i in b)) for b in batches) == [
        (1, 2, 3),
        (5, 7, 8),
        (9,),
    ]
    assert embed_batches(texts, 3) == batches  # deterministic


def test_long_lived_reader_keeps_its_chunks_while_phase_2_adds_vectors(repo):
    """A server's in-memory copy survives phase-2 commits: only vectors are reloaded."""
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb, embed=False)
    store = open_index(repo)
    r = Retriever(store, emb)
    for _ in range(2):  # the second search loads the in-memory mirror
        res = r.search("authenticate_user", SearchOptions(k=3))
    assert res.dense_partial and all(h.sources["dense"] is None for h in res.hits)
    mirror = store._matrix
    assert mirror is not None and not mirror.embedded.any()
    index_repo(repo, embedder=emb)  # phase 2 only: vectors for every chunk
    res = r.search("authenticate user password", SearchOptions(k=3, mode="dense"))
    assert store._matrix is mirror and mirror.embedded.all()
    assert res.hits and not res.dense_partial
    assert res.hits[0].symbol == "authenticate_user"
