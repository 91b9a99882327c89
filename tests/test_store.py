"""Index + store with real LanceDB and the real chunker; a fake embedder counts embed calls."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from askrepo.chunker import CHUNKER_VERSION
from askrepo.errors import IndexIncompatibleError, IndexLockedError, NoIndexError, UsageError
from askrepo.freshness import worktree_changed
from askrepo.indexer import index_repo
from askrepo.retriever import Retriever, SearchOptions
from askrepo.store import open_index
from askrepo.store_writer import IndexWriter
from tests.fakes import FakeEmbedder

AUTH = '''"""Authentication."""
import hmac


def authenticate_user(username, password, users):
    """Check a user's password against the stored hash."""
    stored = users.get(username)
    if stored is None:
        return False
    return hmac.compare_digest(stored, hash_password(password))


def hash_password(password):
    return "h" + password[::-1]
'''

CART = '''class Cart:
    """A shopping cart."""

    def __init__(self):
        self.items = []

    def add_item(self, item, qty=1):
        self.items.append((item, qty))

    def total(self):
        return sum(price * qty for price, qty in self.items)
'''


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "auth.py").write_text(AUTH)
    (root / "shop" / "cart.py").write_text(CART)
    (root / "README.md").write_text("# Shop\n\nA tiny shop.\n")
    return root


def _ids_by_path(root, emb):
    r = Retriever.open(root, embedder=emb)
    rows = r.store.where("true", limit=1000)
    out = {}
    for cid, chunk, _ in rows:
        out.setdefault(chunk.path, set()).add(cid)
    return out


def test_index_then_search_fts_and_symbol(repo):
    emb = FakeEmbedder()
    s = index_repo(repo, embedder=emb)
    assert s.files_total == 3 and s.files_indexed == 3 and s.files_unchanged == 0
    assert s.chunks_total == s.chunks_embedded > 0
    assert s.chunks_by_language.get("python", 0) >= 4
    r = Retriever.open(repo, embedder=emb)
    res = r.search("authenticate_user", SearchOptions(k=3))
    assert res.hits[0].symbol == "authenticate_user"
    assert res.hits[0].path == "shop/auth.py"
    assert (res.hits[0].start_line, res.hits[0].end_line) == (5, 10)
    assert res.hits[0].text.startswith("def authenticate_user")
    fts = r.search("compare digest", SearchOptions(k=3, mode="fts"))
    assert fts.hits[0].symbol == "authenticate_user"
    assert fts.hits[0].sources["fts"] == 1 and fts.hits[0].sources["dense"] is None
    # docs are filtered unless asked for
    assert all(h.path != "README.md" for h in r.search("tiny shop", SearchOptions(k=10)).hits)
    assert any(
        h.path == "README.md"
        for h in r.search("what does the README say", SearchOptions(k=10)).hits
    )


def test_incremental_reembeds_only_changed_file_and_drops_removed(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    before = _ids_by_path(repo, emb)
    emb.texts.clear()

    version = open_index(repo).meta().table_version
    again = index_repo(repo, embedder=emb)
    assert again.files_indexed == 0 and again.chunks_embedded == 0 and emb.texts == []
    assert open_index(repo).meta().table_version == version  # nothing rewritten

    (repo / "shop" / "cart.py").write_text(
        CART + "\n    def clear(self):\n        self.items = []\n"
    )
    s = index_repo(repo, embedder=emb)
    assert s.files_indexed == 1 and s.files_unchanged == 2
    assert emb.texts and all("cart.py" in t or "Cart" in t or "self" in t for t in emb.texts)
    after = _ids_by_path(repo, emb)
    assert after["shop/auth.py"] == before["shop/auth.py"]  # untouched
    assert after["shop/cart.py"] != before["shop/cart.py"]

    (repo / "shop" / "auth.py").unlink()
    s = index_repo(repo, embedder=emb)
    assert s.files_removed == 1
    assert "shop/auth.py" not in _ids_by_path(repo, emb)
    assert "shop/auth.py" not in open_index(repo).files()


def test_failed_embedding_leaves_a_searchable_index_and_resumes(repo):
    """Phase 1 (text, full-text, symbols) is committed before embedding starts: a failure in
    phase 2 leaves the new content searchable lexically; the next run embeds only what is
    missing."""
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    (repo / "shop" / "auth.py").write_text(AUTH.replace("authenticate_user", "login_user"))
    broken = FakeEmbedder(fail_on_call=1)
    with pytest.raises(RuntimeError, match="injected"):
        index_repo(repo, embedder=broken)
    r = Retriever.open(repo, embedder=emb)
    done, total = r.store.embedding_progress()
    assert done < total
    res = r.search("login_user", SearchOptions(k=3))
    assert res.hits[0].symbol == "login_user" and res.hits[0].sources["dense"] is None
    assert res.dense_partial
    assert not worktree_changed(r.store)  # the files are indexed; only vectors are missing
    emb.texts.clear()
    s = index_repo(repo, embedder=emb)
    assert s.files_indexed == 0 and s.rebuilt is None
    assert s.chunks_embedded == total - done and len(emb.texts) == total - done
    assert all("auth.py" in t for t in emb.texts)
    r = Retriever.open(repo, embedder=emb)
    assert r.store.embedding_progress() == (total, total)
    res = r.search("login_user", SearchOptions(k=1))
    assert res.hits[0].symbol == "login_user" and res.hits[0].sources["dense"] is not None
    assert not res.dense_partial


def test_second_writer_is_refused_with_pid(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    with IndexWriter(repo, emb.model_id, "fake", emb.dim, rebuild=False):
        with pytest.raises(
            IndexLockedError, match=r"(?i)another index run is in progress \(pid \d+\)"
        ):
            index_repo(repo, embedder=emb)


def test_models_get_separate_indexes(repo):
    a, b = FakeEmbedder(model_id="fake-a"), FakeEmbedder(dim=16, model_id="fake-b")
    sa, sb = index_repo(repo, embedder=a), index_repo(repo, embedder=b)
    assert sa.index_path != sb.index_path
    assert open_index(repo, "fake-b").meta().dim == 16


def test_missing_and_damaged_index_messages(repo, tmp_path):
    with pytest.raises(NoIndexError, match="run `askrepo index"):
        open_index(repo)
    emb = FakeEmbedder()
    s = index_repo(repo, embedder=emb)
    (tmp_path / "x").mkdir()
    meta = json.loads((open_index(repo).path / "meta.json").read_text())
    (open_index(repo).path / "meta.json").write_text("{not json")
    with pytest.raises(IndexIncompatibleError, match="--rebuild"):
        open_index(repo)
    s = index_repo(repo, embedder=emb)  # a damaged index is rebuilt by the next run
    assert s.rebuilt and s.chunks_total == meta["chunk_count"]
    assert "--rebuild" not in s.rebuilt  # says why it rebuilt, not to rebuild
    # a missing table (partial directory) is detected on first query
    st = open_index(repo)
    import shutil

    shutil.rmtree(st.path / "lance")
    with pytest.raises(IndexIncompatibleError, match="--rebuild"):
        Retriever(open_index(repo), emb).search("cart")


def test_bad_paths(tmp_path):
    emb = FakeEmbedder()
    with pytest.raises(UsageError, match="does not exist"):
        index_repo(tmp_path / "nope", embedder=emb)
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        index_repo(f, embedder=emb)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="No indexable files"):
        index_repo(tmp_path / "empty", embedder=emb)


def test_git_commit_recorded(repo):
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
        cwd=repo,
        check=True,
    )
    s = index_repo(repo, embedder=FakeEmbedder())
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    assert s.commit == head


def test_in_memory_dense_matches_lancedb_scan(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    q = emb.embed_query("add item to the cart")
    for classes in ({"code", "config"}, None, {"doc"}):
        first = open_index(repo)
        first.start_search()
        via_lance = first.dense(q, 5, classes)  # first search on a store: LanceDB's scan
        assert first.dense(q, 5, classes) == via_lance and first._matrix is None
        first.start_search()
        via_numpy = first.dense(q, 5, classes)  # second search: the in-memory matrix
        assert first._matrix is not None
        assert [c for c, _, _ in via_lance] == [c for c, _, _ in via_numpy]
        for (_, a, sa), (_, b, sb) in zip(via_lance, via_numpy, strict=True):
            assert a == b and sa == pytest.approx(sb, abs=1e-5)


def test_mirror_symbol_and_caller_lookups_match_sql(repo):
    index_repo(repo, embedder=FakeEmbedder())
    sql, mem = open_index(repo), open_index(repo)
    mem._searches = 2  # as if a second search started: queries use the in-memory mirror
    for names in (["Cart.total"], ["total"], ["authenticate_user", "hash_password"], ["nope"]):
        for classes in (None, {"code"}, {"doc"}):
            assert sql.by_symbol(names, classes) == mem.by_symbol(names, classes)
    assert mem._matrix is not None and sql._matrix is None
    assert [c.symbol for _, c, _ in mem.callers("hash_password")] == ["authenticate_user"]
    assert sql.callers("hash_password") == mem.callers("hash_password")
    assert sql.callers("append", {"code"}) == mem.callers("append", {"code"})


def test_mirror_fts_matches_sql(repo):
    index_repo(repo, embedder=FakeEmbedder())
    sql, mem = open_index(repo), open_index(repo)
    mem._searches = 2
    for q in ("cart item", "password hash", "shop"):
        assert mem.fts(q, 10) == sql.fts(q, 10)
    assert mem._matrix is not None


class _SummaryLLM:
    """A fake LLM for `index --contextual`: one fixed line per chunk, counts calls."""

    name, model, context_tokens = "fake", "fake", 2048

    def __init__(self):
        self.calls = 0

    def count_tokens(self, text):
        return len(text) // 4

    def generate(self, prompt, **kw):
        self.calls += 1
        return "Summary: checks credentials for the shop login\n"


def test_contextual_summaries_are_stored_embedded_and_searchable(repo):
    emb, llm = FakeEmbedder(), _SummaryLLM()
    index_repo(repo, embedder=emb, contextual=llm)
    assert llm.calls > 0
    assert any("Summary: checks credentials" in t for t in emb.texts)  # embedded with the code
    r = Retriever.open(repo, embedder=emb)
    hit = r.search("credentials login", SearchOptions(k=1, mode="fts")).hits[0]
    chunk = r.store.where(f"path = '{hit.path}' AND start_line = {hit.start_line}")[0][1]
    assert chunk.context == "Summary: checks credentials for the shop login"


def test_lancedb_import_defers_the_rest_client_but_loads_it_on_use():
    code = (
        "import sys; from askrepo.store import _lancedb; db = _lancedb();"
        "pkg = sys.modules['lance_namespace_urllib3_client'];"
        "print('lazy' if '__getattr__' in vars(pkg) else 'eager');"
        "pkg.ApiClient; print('loaded' if '__getattr__' not in vars(pkg) else 'still lazy')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["lazy", "loaded"]


def test_in_files_ranks_every_chunk_of_the_files_the_same_from_lancedb_and_mirror(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    q = emb.embed_query("add item to the cart")
    sql, mem = open_index(repo), open_index(repo)
    mem._searches = 2  # the second search: the in-memory mirror answers
    all_paths = sorted(sql.files())
    for paths in (all_paths[:1], all_paths[:2], ["no/such/file.py"], []):
        for classes in (None, {"code"}, {"doc"}):
            a, b = sql.in_files(q, paths, classes), mem.in_files(q, paths, classes)
            assert [c for c, _, _ in a] == [c for c, _, _ in b]
            for (_, x, sx), (_, y, sy) in zip(a, b, strict=True):
                assert x == y and sx == pytest.approx(sy, abs=1e-5)
            # every chunk of those files (of the allowed classes), best cosine first
            want = [
                c
                for c in (sql.where(f"path = '{p}'", 1000) for p in paths)
                for _, c, _ in c
                if classes is None or c.file_class in classes
            ]
            assert sorted((c.path, c.start_line) for _, c, _ in a) == sorted(
                (c.path, c.start_line) for c in want
            )
            scores = [s for _, _, s in a]
            assert scores == sorted(scores, reverse=True)
    assert mem._matrix is not None and sql._matrix is None
    assert sql.in_files(q, all_paths[:1])  # the test exercises a non-empty answer


def test_file_chunks_are_the_same_from_lancedb_and_mirror_in_file_order(repo):
    index_repo(repo, embedder=FakeEmbedder())
    sql, mem = open_index(repo), open_index(repo)
    mem._searches = 2  # the second search: the in-memory mirror answers
    all_paths = sorted(sql.files())
    for paths in (all_paths[:1], all_paths[1::-1], ["no/such/file.py"], []):
        a, b = sql.file_chunks(paths, 1000), mem.file_chunks(paths, 1000)
        assert [c for c, _, _ in a] == [c for c, _, _ in b]
        keys = [(paths.index(c.path), c.start_line) for _, c, _ in a]
        assert keys == sorted(keys)  # the paths as given, then by line
        want = sum(len(sql.where(f"path = '{p}'", 1000)) for p in paths)
        assert len(a) == want
    assert len(sql.file_chunks(all_paths[:2], 2)) == 2
    assert mem._matrix is not None and sql._matrix is None


def test_index_from_an_older_chunker_is_rebuilt_with_the_reason(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    path = open_index(repo).path / "meta.json"
    meta = json.loads(path.read_text())
    meta["chunker_version"] = "0"
    path.write_text(json.dumps(meta))
    with pytest.raises(IndexIncompatibleError, match="chunker version 0") as exc:
        open_index(repo)  # search says how to fix it: a plain index run, no --rebuild
    assert f"run `askrepo index {repo}`" in str(exc.value) and "--rebuild" not in str(exc.value)
    notes: list[str] = []
    s = index_repo(repo, embedder=emb, notify=notes.append)  # ... and the next index run does it
    assert s.rebuilt and "chunker version 0" in s.rebuilt and "--rebuild" not in s.rebuilt
    # same chunks, same embedded texts: every vector is copied from the old tables
    assert s.chunks_reused == s.chunks_total == meta["chunk_count"] and s.chunks_embedded == 0
    assert s.files_indexed == s.files_total == len(meta["files"])  # every file re-chunked
    assert notes == [f"{s.rebuilt} — re-chunking every file, reusing the vectors of unchanged text"]
    assert open_index(repo).meta().chunker_version == CHUNKER_VERSION
    notes.clear()
    assert index_repo(repo, embedder=emb, notify=notes.append).rebuilt is None and notes == []
    # another store schema keeps naming --rebuild (a plain index run rebuilds it too)
    meta = json.loads(path.read_text())
    meta["schema_version"] = 1
    path.write_text(json.dumps(meta))
    with pytest.raises(IndexIncompatibleError, match="schema 1.*run `askrepo index --rebuild"):
        open_index(repo)
    s = index_repo(repo, embedder=emb)  # an index run rebuilds it all the same
    assert s.rebuilt and "schema 1" in s.rebuilt and "--rebuild" not in s.rebuilt
    assert s.chunks_reused == 0 and s.chunks_embedded == s.chunks_total  # other layout: no reuse
    assert open_index(repo).meta().schema_version != 1


def test_generated_paths_from_lancedb_and_mirror(repo):
    (repo / "shop" / "parser_gen.py").write_text(
        "# Auto-generated by tools/gen.py. Do not edit.\n\nTABLE = [1, 2, 3]\n"
    )
    (repo / "shop" / "late.py").write_text("\n" * 8 + "# generated by hand? no: line 9\nX = 1\n")
    index_repo(repo, embedder=FakeEmbedder())
    sql, mem = open_index(repo), open_index(repo)
    mem._searches = 2  # the second search: the in-memory mirror answers
    paths = ["shop/auth.py", "shop/parser_gen.py", "shop/late.py", "README.md", "no/such.py"]
    assert sql.generated_paths(paths) == mem.generated_paths(paths) == {"shop/parser_gen.py"}
    assert mem._matrix is not None and sql._matrix is None
    assert sql.generated_paths([]) == set()
