"""Git history: log parsing and rules (hand-worked), and the history index, `why` and the
eval-from-git set on a real git repository with a scripted history (tests/git_history_repo.py).

Logic tests use the deterministic fake embedder; ``test_real_model_*`` uses MiniLM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from fakes import FakeEmbedder
from fixture_repo import run_cli
from git_history_repo import TOKEN, make_history_repo

from askrepo.blame import parse_location, parse_porcelain, why
from askrepo.datatypes import Citation, Hit
from askrepo.errors import IndexIncompatibleError, NoIndexError, UsageError
from askrepo.gitevals import build_set, load_set, query_of, quotes_names, run_git_eval, save_set
from askrepo.gitlog import (
    Commit,
    hunk_span,
    is_revert,
    looks_like_formatting,
    overlapping_definitions,
    parse_log,
    rename_map,
    skip_reason,
)
from askrepo.history import (
    META_FILE,
    CommitCitation,
    HistoryIndex,
    _sha_batches,
    commit_citations,
    history_dir,
    index_history,
    is_history_question,
    with_commit_evidence,
)

# ---------------------------------------------------------------------------------------------
# Pure: parsing


LOG = (
    b"\x1eaaa1\x00bbb2\x00Ada\x002024-01-02T03:04:05+00:00\x00Fix retry\n\nBody line\n\x00\n"
    b"\n"
    b"diff --git a/src/x.py b/src/x.py\n"
    b"index 1..2 100644\n"
    b"--- a/src/x.py\n"
    b"+++ b/src/x.py\n"
    b"@@ -10,2 +10,3 @@ def f():\n"
    b"-old\n"
    b"+++ this added line starts with two pluses\n"
    b"--- and this removed one with two minuses\n"
    b"@@ -30 +31,0 @@\n"
    b"-gone\n"
    b"diff --git a/old name.py b/new name.py\n"
    b"similarity index 90%\n"
    b"rename from old name.py\n"
    b"rename to new name.py\n"
    b"--- a/old name.py\n"
    b"+++ b/new name.py\n"
    b"@@ -1 +1 @@\n"
    b"-a\n"
    b"+b\n"
    b"diff --git a/dead.py b/dead.py\n"
    b"deleted file mode 100644\n"
    b"--- a/dead.py\n"
    b"+++ /dev/null\n"
    b"@@ -1,3 +0,0 @@\n"
    b"-x\n"
    b"diff --git a/logo.png b/logo.png\n"
    b"Binary files a/logo.png and b/logo.png differ\n"
    b'diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"\n'
    b"new file mode 100644\n"
    b"--- /dev/null\n"
    b'+++ "b/t\\303\\251st.py"\n'
    b"@@ -0,0 +1,2 @@\n"
    b"+a\n"
    b"+b\n"
    b"\x1eccc3\x00d1 d2\x00Bob\x002024-01-01T00:00:00+00:00\x00Merge branch 'x'\n\x00\n"
)


def test_parse_log_worked_example():
    a, m = parse_log(LOG)
    assert (a.sha, a.parents, a.author, a.subject, a.body) == (
        "aaa1",
        ["bbb2"],
        "Ada",
        "Fix retry",
        "Body line",
    )
    files = {f.path: f for f in a.files}
    assert list(files) == ["src/x.py", "new name.py", "dead.py", "logo.png", "tést.py"]
    # "+++ …" / "--- …" inside a hunk are patch lines, not headers
    assert files["src/x.py"].hunks == [(10, 12), (31, 32)]
    assert files["new name.py"].status == "R" and files["new name.py"].old_path == "old name.py"
    assert files["dead.py"].status == "D" and files["dead.py"].path == "dead.py"
    assert files["logo.png"].binary and not files["logo.png"].hunks
    assert files["tést.py"].status == "A" and files["tést.py"].hunks == [(1, 2)]
    assert m.parents == ["d1", "d2"] and m.files == []


def test_sha_batches_quote_and_split():
    shas = ["a1", "b'2", "c3", "d4", "e5"]
    out = list(_sha_batches(shas, size=2))
    assert [list(part) for part, _ in out] == [["a1", "b'2"], ["c3", "d4"], ["e5"]]
    assert out[0][1] == "sha IN ('a1', 'b''2')"
    assert out[2][1] == "sha IN ('e5')"
    assert list(_sha_batches([])) == []


def test_hunk_span():
    assert hunk_span(5, 2, 7, 3) == (7, 9)
    assert hunk_span(5, 2, 4, 0) == (4, 5)  # a deletion after line 4 touches lines 4 and 5
    assert hunk_span(1, 3, 0, 0) == (1, 1)  # deleting the first lines: the new line 1


def _commit(subject, author="Ada", parents=("p",), body=""):
    return Commit("s", list(parents), author, "2024", subject + ("\n\n" + body if body else ""))


@pytest.mark.parametrize(
    "subject,author,parents,reason",
    [
        ("Fix retry on 503", "Ada", ("p",), None),
        ("Merge pull request #1", "Ada", ("p", "q"), "merge"),
        ("", "Ada", ("p",), "empty-message"),
        ("Update deps", "dependabot[bot]", ("p",), "bot"),
        ("chore: tidy", "renovate-bot", ("p",), "bot"),
        ("chore: tidy", "Jo Abbott", ("p",), None),
        ("Lock file maintenance", "renovate", ("p",), "bot"),
        ("Bump lodash from 4.17.20 to 4.17.21", "Ada", ("p",), "bump"),
        ("chore(deps): update actions/checkout", "Ada", ("p",), "bump"),
        ("v2.3.1", "Ada", ("p",), "bump"),
        ("Release 8.1.0", "Ada", ("p",), "bump"),
        ("Bump version", "Ada", ("p",), "bump"),
        ("release version 8.1.8", "Ada", ("p",), "bump"),
        ("Start version 8.2.0", "Ada", ("p",), "bump"),
        ("Fix crash in version 2.0", "Ada", ("p",), None),
        ("Bump the retry limit to 5", "Ada", ("p",), None),
        ("Release the lock before retrying", "Ada", ("p",), None),
    ],
)
def test_skip_rules(subject, author, parents, reason):
    assert skip_reason(_commit(subject, author, parents)) == reason


def test_revert_and_formatting_rules():
    assert is_revert(_commit('Revert "Add cache"', body="This reverts commit abcdef1."))
    assert is_revert(_commit("Undo it", body="This reverts commit 0123456789abcdef."))
    assert not is_revert(_commit("Handle reverted transactions"))
    for s in ("style: black", "Reformat parser", "Run prettier", "Fix typo", "fmt: gofmt"):
        assert looks_like_formatting(_commit(s)), s
    assert not looks_like_formatting(_commit("Format dates as ISO 8601 in the log"))


def test_overlapping_definitions_by_span():
    C = SimpleNamespace
    chunks = [
        C(kind="class", symbol="Client", start_line=1, end_line=3),
        C(kind="method", symbol="Client.fetch", start_line=4, end_line=10),
        C(kind="window", symbol="Client", start_line=11, end_line=12),
        C(kind="function", symbol="backoff", start_line=14, end_line=15),
    ]
    assert overlapping_definitions(chunks, [(5, 5)]) == ["Client.fetch"]
    assert overlapping_definitions(chunks, [(11, 12)]) == []  # windows name no definition
    assert overlapping_definitions(chunks, [(3, 4), (15, 20)]) == [
        "Client",
        "Client.fetch",
        "backoff",
    ]


def test_rename_map_chains_oldest_first():
    got = rename_map([("2024-02", "b.py", "c.py"), ("2024-01", "a.py", "b.py")])
    assert got == {"a.py": "c.py", "b.py": "c.py"}


@pytest.mark.parametrize(
    "question,expected",
    [
        ("why do we retry on 503", True),
        ("when was --verbose added", True),
        ("who introduced the cache", True),
        ("what changed recently in the parser", True),
        ("which commit added retries", True),
        ("what happens when the file is missing", False),
        ("where is the header added", False),
        ("how does parsing work", False),
    ],
)
def test_history_question_detection(question, expected):
    assert is_history_question(question) is expected


def test_source_files_for_gold():
    from askrepo.gitevals import is_source

    assert is_source("src/click/core.py") and is_source("cmd/main.go")
    for path in ("tests/test_core.py", "docs/conf.py", "README.md", "pyproject.toml", "x.png"):
        assert not is_source(path), path


def test_query_of_and_quoted_names():
    body = "First paragraph\nwraps here.\n\nSecond paragraph.\n\nSigned-off-by: A <a@b>"
    assert query_of("Fix retry", body) == "Fix retry\nFirst paragraph wraps here."
    assert query_of("Fix retry", "") == "Fix retry"
    assert quotes_names("Fix fetch() on 503", ["http/client.py"], ["Client.fetch"])
    assert quotes_names("Speed up the client", ["http/client.py"], [])
    assert not quotes_names("Retry on 503", ["http/client.py"], ["Client.fetch"])


def test_parse_location_and_porcelain():
    assert parse_location("src/a.py:12") == ("src/a.py", 12, 12)
    assert parse_location("C:/x/a.py:3-9") == ("C:/x/a.py", 3, 9)
    for bad in ("a.py", "a.py:0", "a.py:9-3", ":4"):
        with pytest.raises(UsageError):
            parse_location(bad)
    sha1, sha2 = "a" * 40, "b" * 40
    text = (
        f"{sha1} 3 10 2\nauthor Ada\nauthor-time 1700000000\nauthor-tz +0100\nsummary Fix\n"
        f"filename old.py\n\tline ten\n{sha1} 4 11\nfilename old.py\n\tline eleven\n"
        f"{sha2} 1 12 1\nauthor Bob\nsummary Init\nfilename new.py\n\tline twelve\n"
    )
    lines, info = parse_porcelain(text)
    assert [(b.line, b.sha[0], b.orig_path, b.orig_line) for b in lines] == [
        (10, "a", "old.py", 3),
        (11, "a", "old.py", 4),
        (12, "b", "new.py", 1),
    ]
    assert info[sha1]["author-time"] == "1700000000"


# ---------------------------------------------------------------------------------------------
# A real repository


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("hist") / "repo"
    shas = make_history_repo(root)
    return root, shas


@pytest.fixture
def indexed(repo):
    root, shas = repo
    emb = FakeEmbedder()
    summary = index_history(root, embedder=emb)
    return root, shas, emb, summary


def test_index_keeps_non_merge_commits_and_skips_bots(indexed):
    root, shas, emb, s = indexed
    assert s.commits_seen == 14  # 15 commits, one of them a merge
    assert s.skipped == {"bot": 1}
    assert s.commits_indexed == s.commits_added == 13
    idx = HistoryIndex.open(root, embedder=emb)
    stored = {r["sha"] for r in idx.rows()}
    assert shas["merge"] not in stored and shas["bump"] not in stored
    assert shas["revert"] in stored and shas["reformat"] in stored


def test_secrets_are_redacted_from_messages(indexed):
    root, shas, emb, s = indexed
    assert s.redactions == 1
    idx = HistoryIndex.open(root, embedder=emb)
    row = idx.commit(shas["token"])
    assert TOKEN not in row["body"] and "[REDACTED:github-token]" in row["body"]
    assert TOKEN not in json.dumps(idx.search("deploy token", k=20).to_dict())


def test_touched_definitions_follow_renames_to_head(indexed):
    root, shas, emb, _ = indexed
    idx = HistoryIndex.open(root, embedder=emb)
    row = idx.commit(shas["retry"])
    assert row["files"] == ["client.py"] and row["defs"] == ["client.py\tClient.fetch"]
    (d,) = idx.locate([("client.py", "Client.fetch")])
    text = (root / "http/client.py").read_text().split("\n")
    assert d.head_path == "http/client.py"
    assert text[d.start_line - 1].strip() == "def fetch(self, path):"
    assert text[d.end_line - 1].strip() == "return 503"
    (gone,) = idx.locate([("client.py", "no_such_function")])
    assert gone.location is None


def test_search_ranks_the_commit_and_cites_head_spans(indexed):
    root, shas, emb, _ = indexed
    res = HistoryIndex.open(root, embedder=emb).search("load balancer deploy 503", k=3)
    top = res.hits[0]
    assert top.sha == shas["retry"] and top.rank == 1
    assert top.sources["fts"] == 1 and top.sources["dense"] is not None
    assert [d.location for d in top.defs] == ["http/client.py:10-16"]
    assert res.to_dict()["hits"][0]["defs"][0]["location"] == "http/client.py:10-16"
    with pytest.raises(UsageError):
        HistoryIndex.open(root, embedder=emb).search("  ")


def test_search_fuses_by_score_or_by_rank(indexed):
    root, shas, emb, _ = indexed
    idx = HistoryIndex.open(root, embedder=emb)
    by_score = idx.search("load balancer deploy 503", k=5)  # the default
    by_rank = idx.search("load balancer deploy 503", k=5, fusion="rrf")
    assert by_score.hits[0].sha == by_rank.hits[0].sha == shas["retry"]
    # min-max fusion: first on both sides scores 1 + 1; RRF: 2 / 61
    assert by_score.hits[0].score == 2.0
    assert by_rank.hits[0].score == pytest.approx(2 / 61, abs=1e-6)
    # one side only: its own order, RRF scores (nothing to fuse)
    fts = idx.search("load balancer deploy 503", k=5, mode="fts")
    assert fts.hits[0].score == pytest.approx(1 / 61, abs=1e-6)
    with pytest.raises(UsageError, match="Unknown fusion 'max'"):
        idx.search("deploy", fusion="max")


def test_incremental_run_embeds_only_new_commits(indexed, tmp_path):
    root, shas, _, _ = indexed
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    emb = FakeEmbedder()
    first = index_history(clone, embedder=emb)
    assert first.commits_added == 13
    again = index_history(clone, embedder=emb)
    assert again.commits_added == 0 and emb.calls == 1  # nothing re-embedded
    (clone / "http" / "client.py").write_text(
        (clone / "http" / "client.py").read_text() + "\n\ndef close():\n    return None\n"
    )
    _commit_all(clone, "Add close() so sockets are released")
    third = index_history(clone, embedder=emb)
    assert third.commits_added == 1 and emb.texts[-1].startswith("Add close()")
    # history rewritten: the new commit is gone from HEAD, so it leaves the index
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=clone, check=True)
    fourth = index_history(clone, embedder=emb)
    assert fourth.commits_removed == 1 and fourth.commits_indexed == 13


def test_search_says_how_many_commits_the_history_index_is_behind(indexed, tmp_path):
    root, _, _, _ = indexed
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    emb = FakeEmbedder()
    index_history(clone, embedder=emb)
    res = HistoryIndex.open(clone, embedder=emb).search("retry")
    assert (res.stale, res.new_commits) == (False, 0) and res.head == res.head_commit
    for i in range(2):
        (clone / "http" / "client.py").write_text(
            (clone / "http" / "client.py").read_text() + f"\n\ndef f{i}():\n    return {i}\n"
        )
        _commit_all(clone, f"Add f{i}")
    res = HistoryIndex.open(clone, embedder=emb).search("retry")
    d = res.to_dict()
    assert (d["stale"], d["new_commits"]) == (True, 2)
    assert d["indexed_commit"] == res.head and d["head_commit"] != res.head
    # a rewritten history: the indexed head is no ancestor, how far is unknown
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~3"], cwd=clone, check=True)
    res = HistoryIndex.open(clone, embedder=emb).search("retry")
    assert (res.stale, res.new_commits) == (True, None)


def test_history_leaves_out_what_the_code_index_leaves_out(tmp_path):
    """A file .askrepoignore'd (or a secret file) is not in the code index: its names and
    path are not stored with the commits that touched it either."""
    root = tmp_path / "r"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".askrepoignore").write_text("generated/\n")
    (root / "generated").mkdir()
    (root / "generated" / "tables.py").write_text("def generated_lookup_table():\n    return 1\n")
    (root / "app.py").write_text("def handle_request():\n    return 2\n")
    (root / ".env.production").write_text("TOKEN=x\n")
    _commit_all(root, "Add the request handler and its lookup table")
    emb = FakeEmbedder()
    index_history(root, embedder=emb)
    rows = list(HistoryIndex.open(root, embedder=emb).rows())
    assert len(rows) == 1
    assert rows[0]["files"] == [".askrepoignore", "app.py"]
    stored = json.dumps(rows[0]["defs"], default=str)
    assert "handle_request" in stored and "generated_lookup_table" not in stored


def test_crash_mid_run_leaves_the_committed_history(indexed, tmp_path):
    root, _, _, _ = indexed
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~3"], cwd=clone, check=True)
    index_history(clone, embedder=FakeEmbedder())
    before = HistoryIndex.open(clone, embedder=FakeEmbedder()).count
    subprocess.run(["git", "pull", "-q", "--ff-only"], cwd=clone, check=True)
    with pytest.raises(RuntimeError, match="injected"):
        index_history(clone, embedder=FakeEmbedder(fail_on_call=1))
    idx = HistoryIndex.open(clone, embedder=FakeEmbedder())
    assert idx.count == before == len(idx.rows())
    after = index_history(clone, embedder=FakeEmbedder())
    assert after.commits_indexed == before + after.commits_added and after.commits_added >= 2


def test_an_old_history_index_is_rebuilt_and_the_summary_says_why(indexed, tmp_path):
    root, _, _, _ = indexed
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    index_history(clone, embedder=FakeEmbedder())
    meta_path = history_dir(clone, FakeEmbedder().model_id) / META_FILE
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "schema": -1}))
    with pytest.raises(IndexIncompatibleError, match="another askrepo version — run"):
        HistoryIndex.open(clone, embedder=FakeEmbedder())
    again = index_history(clone, embedder=FakeEmbedder())
    # the run rebuilt, so its summary gives the reason, not the advice to rebuild
    assert again.rebuilt.endswith("was built by another askrepo version")
    assert "--rebuild" not in again.rebuilt
    assert again.commits_added == 13


def _clone(root: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    return clone


def _fts_top(idx: HistoryIndex, query: str) -> list[str]:
    return [h.sha for h in idx.search(query, k=5, mode="fts").hits]


def test_history_full_text_is_askrepos_own_and_lancedb_builds_none(indexed):
    root, shas, emb, _ = indexed
    path = history_dir(root, emb.model_id)
    meta = json.loads((path / META_FILE).read_text())
    assert meta["lexical"].startswith("lexical_") and (path / meta["lexical"]).is_dir()
    assert [d.name for d in path.glob("lexical_*")] == [meta["lexical"]]
    idx = HistoryIndex.open(root, embedder=emb)
    assert idx.full_text == "askrepo" and idx.table.list_indices() == []
    # "503" and "balancer" are only in the retry commit's subject
    assert _fts_top(idx, "load balancer 503")[:1] == [shas["retry"]]
    # file names and touched definitions are searchable too
    assert shas["cache"] in _fts_top(idx, "ResponseCache")


def test_history_full_text_tokenizes_only_the_commits_a_run_adds(indexed, tmp_path, monkeypatch):
    from askrepo import lexical

    root, _, _, _ = indexed
    clone = _clone(root, tmp_path)
    index_history(clone, embedder=FakeEmbedder())
    path = history_dir(clone, FakeEmbedder().model_id)
    first = json.loads((path / META_FILE).read_text())["lexical"]
    tokenized: list[str] = []
    real = lexical._tokenize

    def spy(docs, *args):
        docs = list(docs)
        tokenized.extend(d.id for d in docs)
        return real(docs, *args)

    monkeypatch.setattr(lexical, "_tokenize", spy)
    (clone / "http" / "client.py").write_text(
        (clone / "http" / "client.py").read_text() + "\n\ndef close():\n    return None\n"
    )
    _commit_all(clone, "Release sockets when the pool shuts down")
    summary = index_history(clone, embedder=FakeEmbedder())
    new_sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert summary.commits_added == 1 and tokenized == [new_sha]
    second = json.loads((path / META_FILE).read_text())["lexical"]
    assert second != first and [d.name for d in path.glob("lexical_*")] == [second]
    idx = HistoryIndex.open(clone, embedder=FakeEmbedder())
    assert _fts_top(idx, "sockets pool shuts")[:1] == [new_sha]
    # nothing new: no full-text work, the same directory
    tokenized.clear()
    index_history(clone, embedder=FakeEmbedder())
    assert tokenized == [] and json.loads((path / META_FILE).read_text())["lexical"] == second


def test_lost_history_full_text_is_rebuilt_in_memory_then_written_again(indexed, tmp_path):
    import shutil

    root, _, _, _ = indexed
    clone = _clone(root, tmp_path)
    index_history(clone, embedder=FakeEmbedder())
    path = history_dir(clone, FakeEmbedder().model_id)
    name = json.loads((path / META_FILE).read_text())["lexical"]
    before = HistoryIndex.open(clone, embedder=FakeEmbedder()).search("retry parser", k=8)
    shutil.rmtree(path / name)
    after = HistoryIndex.open(clone, embedder=FakeEmbedder()).search("retry parser", k=8)
    assert [(h.sha, h.score, h.sources) for h in after.hits] == [
        (h.sha, h.score, h.sources) for h in before.hits
    ]
    assert not (path / name).exists()  # a search writes nothing
    again = index_history(clone, embedder=FakeEmbedder())
    assert again.commits_added == 0
    name2 = json.loads((path / META_FILE).read_text())["lexical"]
    assert (path / name2 / "index.json").is_file()


def test_history_index_from_before_keeps_lancedb_full_text_until_the_next_run(indexed, tmp_path):
    """A history index written before askrepo's own full text (no ``lexical`` in meta.json,
    a LanceDB full-text index on the table) is searched with LanceDB's until an index run
    adds askrepo's, without re-embedding."""
    import shutil

    import lancedb
    from old_index import lancedb_fts_index

    root, shas, _, _ = indexed
    clone = _clone(root, tmp_path)
    index_history(clone, embedder=FakeEmbedder())
    path = history_dir(clone, FakeEmbedder().model_id)
    meta = json.loads((path / META_FILE).read_text())
    shutil.rmtree(path / meta.pop("lexical"))
    tbl = lancedb.connect(str(path / "lance")).open_table(meta["table"])
    meta["table_version"] = lancedb_fts_index(tbl)
    (path / META_FILE).write_text(json.dumps(meta))
    old = HistoryIndex.open(clone, embedder=FakeEmbedder())
    assert old.full_text == "lancedb" and old.lexical_index() is None
    assert _fts_top(old, "load balancer 503")[:1] == [shas["retry"]]
    emb = FakeEmbedder()
    summary = index_history(clone, embedder=emb)
    assert summary.commits_added == 0 and emb.calls == 0
    new = HistoryIndex.open(clone, embedder=FakeEmbedder())
    assert new.full_text == "askrepo"
    assert _fts_top(new, "load balancer 503")[:1] == [shas["retry"]]


def test_no_history_index_says_how_to_build_it(repo, tmp_path):
    root, _ = repo
    with pytest.raises(NoIndexError, match="index --history"):
        HistoryIndex.open(root, embedder=FakeEmbedder(model_id="other"))
    with pytest.raises(UsageError, match="not inside a git repository"):
        index_history(tmp_path, embedder=FakeEmbedder())


def _commit_all(root: Path, message: str) -> None:
    env = dict(
        os.environ, GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@x", GIT_CONFIG_GLOBAL="/dev/null"
    )
    env.update(GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@x")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=root, check=True, env=env)


# ---------------------------------------------------------------------------------------------
# why


def test_why_follows_the_move_and_names_the_change(repo):
    root, shas = repo
    res = why(root, "http/client.py", 12, 13)
    assert res.commit.sha == shas["retry"] and res.commit.path_then == "client.py"
    assert res.message.startswith("Retry on 503 from the load balancer\n\nThe load balancer")
    assert [d["location"] for d in res.touched_here] == ["http/client.py:10-16"]
    assert res.uncommitted_lines == []


def test_why_skips_whitespace_and_ignored_revisions(repo):
    root, shas = repo
    line = (root / "parser.py").read_text().split("\n").index('        if "=" in line :') + 1
    res = why(root, "parser.py", line)
    # re-indented by "reformat" (-w), quotes changed by "quotes" (.git-blame-ignore-revs)
    assert res.commit.sha == shas["parser"] and res.ignore_revs == ".git-blame-ignore-revs"
    assert {d["symbol"] for d in res.touched_elsewhere} == {"_strip"}
    # without the ignore file, the quote-style commit owns the line
    plain = subprocess.run(
        ["git", "blame", "--porcelain", "-w", "-L", f"{line},{line}", "--", "parser.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null"),
    ).stdout
    assert plain.startswith(shas["quotes"])


def test_why_reports_uncommitted_lines_and_refuses_bad_paths(repo, tmp_path):
    root, shas = repo
    clone = tmp_path / "c"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    p = clone / "http" / "cache.py"
    p.write_text(p.read_text() + "\n    def clear(self):\n        self.items = {}\n")
    res = why(clone, "http/cache.py", 9, 11)
    assert res.uncommitted_lines == [9, 10, 11] and res.commit is None
    res = why(clone, "http/cache.py", 7, 10)
    assert res.commit.sha == shas["cache"] and res.uncommitted_lines == [9, 10]
    for bad, msg in (
        ("../x.py", "outside"),
        (".git/config", ".git"),
        ("nope.py", "not a file"),
    ):
        with pytest.raises(UsageError, match=msg):
            why(clone, bad, 1)
    with pytest.raises(UsageError, match="past its end"):
        why(clone, "http/cache.py", 500)
    with pytest.raises(UsageError, match="not indexed"):
        why(clone, "http/cache.py", 1, allowed={"parser.py"})


# ---------------------------------------------------------------------------------------------
# eval --from-git


def test_git_set_selection_rules(repo, tmp_path):
    root, shas = repo
    indexed = {"http/client.py", "http/cache.py", "parser.py", "deploy.cfg"}
    gs = build_set(root, indexed, n=50)
    kept = {c.commit: c for c in gs.cases}
    assert set(kept) == {shas[k] for k in ("client", "parser", "retry", "cache")}
    assert gs.dropped == {
        "no-source-files": 4,  # tests, token (config), docs, ignore-revs file
        "formatting": 2,  # whitespace only (by content), double quotes (by message)
        "revert": 1,
        "reverted": 1,
        "bot": 1,
        "rename-only": 1,
    }
    assert gs.scanned == 14
    retry = kept[shas["retry"]].to_eval()
    assert retry["query"].startswith("Retry on 503 from the load balancer\nThe load balancer")
    assert "Signed-off-by" not in retry["query"]
    assert retry["relevant"] == [
        {"path": "http/client.py", "start_line": 10, "end_line": 16, "symbol": "Client.fetch"}
    ]
    assert retry["category"] == "history" and retry["secondary"] == []
    assert retry["names_quoted"] is False and kept[shas["cache"]].names_quoted is True
    # labels whose files are not indexed (any more) are dropped
    small = build_set(root, {"parser.py"}, n=50)
    assert {c.commit for c in small.cases} == {shas["parser"]}
    # --n stops early
    assert len(build_set(root, indexed, n=2).cases) == 2
    out = tmp_path / "set.json"
    save_set(gs, out)
    again = load_set(out)
    assert [c.query for c in again] == [c.query for c in gs.cases]
    assert again[0].relevant == gs.cases[0].relevant


class _FixedRetriever:
    """Returns the same ranked hits for every query (scoring arithmetic only)."""

    def __init__(self, hits, files):
        self.hits = hits
        self.store = SimpleNamespace(
            repo="/r",
            files=lambda: files,
            meta=lambda: SimpleNamespace(commit="c", model_id="m", chunk_count=3),
        )

    def search(self, query, opts):
        self.opts = opts
        return SimpleNamespace(hits=self.hits)

    def test_votes(self, query, opts, files):  # no tests here to vote
        return files


def _hit(path, start, end, score, symbol=None):
    return Hit(0, path, start, end, symbol, "function", "python", score, {}, None, "")


def test_scores_worked_example(repo, tmp_path):
    root, shas = repo
    gs = build_set(root, {"http/client.py", "http/cache.py", "parser.py"}, n=50)
    save_set(gs, tmp_path / "s.json")
    # parser.py first (one chunk), http/client.py second (two chunks, lower total)
    hits = [
        _hit("parser.py", 1, 7, 0.05),
        _hit("http/client.py", 10, 16, 0.03),
        _hit("http/client.py", 19, 20, 0.01),
    ]
    r = _FixedRetriever(hits, {})
    rep = run_git_eval(root, set_in=tmp_path / "s.json", configs=["hybrid"], retriever=r)
    (c,) = rep.configs
    by_id = {x.id: x for x in c.results}
    assert by_id[shas["parser"][:10]].file_rank == 1
    assert by_id[shas["retry"][:10]].file_rank == 2
    assert by_id[shas["cache"][:10]].file_rank is None
    # 4 cases: parser hit@1; retry and client at rank 2; cache missed
    assert c.file_hit_at_1 == 0.25 and c.file_hit_at_5 == 0.75
    assert c.file_mrr == round((1 + 0.5 + 0.5 + 0) / 4, 4)
    # NDCG@10 of "retry": its one target (fetch) covered at rank 2 → 1/log2(3)
    assert by_id[shas["retry"][:10]].ndcg10 == round(1 / 1.5849625007211562, 4)
    assert c.unquoted_n == 1 and c.unquoted_file_hit_at_5 == 1.0
    # the same ranking under two names: no discordant pairs, p = 1
    rep2 = run_git_eval(root, set_in=tmp_path / "s.json", configs=["hybrid", "fts"], retriever=r)
    (cmp,) = rep2.comparisons
    assert cmp["config"] == "fts" and cmp["baseline"] == "hybrid"
    assert cmp["file@5"] == {"base_only": 0, "other_only": 0, "p": 1.0}
    # the chunk pool search --files aggregates: 20 hits, no per-file cap, without the tail
    assert (r.opts.k, r.opts.max_per_file, r.opts.expand) == (20, 0, False)
    assert r.opts.disabled == ("tail",)
    for name in ("hybrid+rerank", "hybrid+expand"):
        with pytest.raises(UsageError, match="not supported"):
            run_git_eval(root, set_in=tmp_path / "s.json", configs=[name], retriever=r)


# ---------------------------------------------------------------------------------------------
# ask: commit evidence


def test_commit_evidence_is_interleaved_and_cited_as_commits(indexed):
    root, shas, emb, _ = indexed
    code = [_hit("http/client.py", 10, 16, 0.1, "Client.fetch"), _hit("parser.py", 1, 7, 0.05)]
    retriever = SimpleNamespace(
        store=SimpleNamespace(repo=root, model_id="fake-bow-32"), embedder=emb
    )
    # not a history question: unchanged
    assert with_commit_evidence("where is fetch", retriever, code, 8) == code
    mixed = with_commit_evidence("why do we retry on 503 load balancer", retriever, code, 8)
    assert [h.kind for h in mixed[:4]] == ["function", "commit", "function", "commit"]
    assert [h.rank for h in mixed] == list(range(1, len(mixed) + 1))
    commit_hit = next(h for h in mixed if getattr(h, "sha", "") == shas["retry"])
    assert commit_hit.location == f"{shas['retry'][:7]} Retry on 503 from the load balancer"
    assert "touched: http/client.py:10-16" in commit_hit.text

    from askrepo.answer import _snippet_block

    n = mixed.index(commit_hit) + 1
    block = _snippet_block(n, commit_hit)
    assert block.startswith(f"[{n}] commit {shas['retry'][:7]}\n")
    cites = [Citation(1, "http/client.py", 10, 16, "Client.fetch"), Citation(n, "x", 0, 0, None)]
    out = commit_citations(cites, mixed)
    assert out[0] is cites[0] and isinstance(out[1], CommitCitation)
    assert out[1].location == f"{shas['retry'][:7]} Retry on 503 from the load balancer"
    assert out[1].to_dict()["sha"] == shas["retry"]
    # no history index for this model: the code hits alone
    other = SimpleNamespace(store=SimpleNamespace(repo=root, model_id="nope"), embedder=emb)
    assert with_commit_evidence("why do we retry", other, code, 8) == code


# ---------------------------------------------------------------------------------------------
# Real model, CLI and MCP


@pytest.fixture(scope="module")
def real(repo, tmp_path_factory):
    """The fixture repo indexed (code and history) with the real model through the CLI."""
    root, shas = repo
    home = tmp_path_factory.mktemp("home-real")
    p = run_cli("index", str(root), "--history", "--json", home=home)
    assert p.returncode == 0, p.stderr
    code = json.loads(p.stdout)  # one object: the code index, its history run under "history"
    return root, shas, home, code, code["history"]


def test_real_model_index_and_search(real):
    root, shas, home, code, hist = real
    assert hist["commits_indexed"] == 13 and hist["skipped"] == {"bot": 1}
    # the message says "retrying", "503", "deploy drains": the question paraphrases it
    question = "why do we keep trying when the server is unavailable during deploys"
    p = run_cli("search", "--history", question, "--repo", str(root), "--json", home=home)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["hits"][0]["sha"] == shas["retry"], [h["subject"] for h in data["hits"]]
    assert data["hits"][0]["defs"][0]["location"] == "http/client.py:10-16"
    p = run_cli("search", "--history", "response cache", "--repo", str(root), home=home)
    assert p.returncode == 0 and shas["cache"][:7] in p.stdout.split("\n")[0]


def test_cli_why_and_errors(real):
    root, shas, home, _, _ = real
    p = run_cli("why", "http/client.py:12-13", "--repo", str(root), home=home)
    assert p.returncode == 0, p.stderr
    assert shas["retry"][:10] in p.stdout and "Retry on 503" in p.stdout
    assert "then client.py" in p.stdout
    p = run_cli("why", "http/client.py:12", "--repo", str(root), "--json", home=home)
    assert json.loads(p.stdout)["commit"]["sha"] == shas["retry"]
    for bad, code in (("http/client.py", 2), ("../etc/passwd:1", 2), ("nope.py:1", 2)):
        p = run_cli("why", bad, "--repo", str(root), home=home)
        assert p.returncode == code and "Traceback" not in p.stderr, p.stderr
        assert len(p.stderr.strip().split("\n")) == 1
    p = run_cli("search", "--history", "x", "--repo", str(root), home=root / "nohome")
    assert p.returncode == 2 and "index --history" in p.stderr


def test_cli_eval_from_git(real, tmp_path):
    root, shas, home, _, _ = real
    out = tmp_path / "set.json"
    p = run_cli(
        "eval", "--from-git", "--repo", str(root), "--out", str(out), "-c", "fts,hybrid+scope",
        "--json", home=home,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["cases"] == 4 and [c["name"] for c in rep["configs"]] == ["fts", "hybrid+scope"]
    assert rep["dropped"]["revert"] == 1 and rep["baseline"] == "hybrid+scope"
    saved = json.loads(out.read_text())
    assert {r["commit"] for r in saved} == {shas[k] for k in ("client", "parser", "retry", "cache")}
    for c in rep["configs"]:
        assert 0 <= c["file_hit_at_1"] <= c["file_hit_at_5"] <= 1
    best = next(c for c in rep["configs"] if c["name"] == "hybrid+scope")
    assert best["file_hit_at_5"] == 1.0  # three files: every gold file is in the top 5
    # the saved set is re-scored as it is
    p = run_cli(
        "eval", "--from-git", "--queries", str(out), "--repo", str(root), "-c", "fts", home=home
    )
    assert p.returncode == 0, p.stderr
    assert "Change localization" in p.stdout and "fts" in p.stdout


def test_mcp_history_tools(real):
    pytest.importorskip("mcp", reason="the MCP SDK (askrepo[mcp]) is not installed")
    root, shas, home, _, _ = real
    script = f"""
import asyncio, json, os, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.executable,
        args=["-m", "askrepo.mcp_server", "--repo", {str(root)!r}], env=dict(os.environ))
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            out = {{}}
            res = await s.call_tool("search_history", {{"query": "retry 503 load balancer"}})
            out["search"] = json.loads(res.content[0].text)
            res = await s.call_tool("why_lines", {{"path": "http/client.py", "start_line": 12}})
            out["why"] = json.loads(res.content[0].text)
            res = await s.call_tool("why_lines", {{"path": ".git/config", "start_line": 1}})
            out["bad"] = (res.is_error, res.content[0].text)
            res = await s.call_tool("why_lines", {{"path": "tests/../../x", "start_line": 1}})
            out["bad2"] = (res.is_error, res.content[0].text)
            print(json.dumps(out))

asyncio.run(main())
"""
    env = dict(os.environ, ASKREPO_HOME=str(home))
    p = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().split("\n")[-1])
    assert out["search"]["hits"][0]["sha"] == shas["retry"]
    assert out["search"]["repo"] == str(root)
    assert out["why"]["commit"]["sha"] == shas["retry"] and out["why"]["path"] == "http/client.py"
    assert out["bad"][0] is True and ".git" in out["bad"][1]
    assert out["bad2"][0] is True and "outside" in out["bad2"][1]


class _ScriptedLLM:
    """Answers with a fixed text; records the prompt it was given."""

    name = "fake"
    model = "fake-model"
    context_tokens = 4096

    def __init__(self, reply):
        self.reply = reply
        self.prompts = []

    def generate(self, prompt, *, system=None, max_tokens=300, stream=None, stop=None):
        self.prompts.append(prompt)
        return self.reply

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_ask_cites_a_commit_beside_code(indexed):
    from askrepo.answer import ask
    from askrepo.indexer import index_repo
    from askrepo.retriever import Retriever

    root, shas, emb, _ = indexed
    index_repo(root, embedder=emb)
    retriever = Retriever.open(root, model=emb.model_id, embedder=emb)
    llm = _ScriptedLLM("The load balancer answers 503 during deploys [2]; fetch retries [1].")
    ans = ask("why do we retry on 503 from the load balancer", retriever, llm, k=6)
    prompt = llm.prompts[0]
    assert "[2] commit " in prompt and "Retry on 503 from the load balancer" in prompt
    kinds = {c.n: type(c).__name__ for c in ans.citations}
    commit_cite = next(c for c in ans.citations if kinds[c.n] == "CommitCitation")
    assert commit_cite.n == 2 and commit_cite.location.endswith(commit_cite.subject)
    code_cite = next(c for c in ans.citations if c.n == 1)
    assert ":" in code_cite.location and code_cite.path.endswith(".py")
    # a question that is not about history gets code only
    llm2 = _ScriptedLLM("fetch is in the client [1].")
    ans2 = ask("where is fetch defined", retriever, llm2, k=6)
    assert "commit " not in llm2.prompts[0].split("Question:")[0]
    assert all(type(c).__name__ == "Citation" for c in ans2.citations)
    # without a model the card reads code only; the CLI still lists the commits it found
    from rich.console import Console

    from askrepo.cli_ask import _render
    from askrepo.llm import NoModel

    ans3 = ask("why do we retry on 503 from the load balancer", retriever, NoModel(), k=6)
    assert any(h.kind == "commit" for h in ans3.retrieved)
    console = Console(record=True, width=120)
    _render(console, ans3, root, NoModel(), verbose=False)
    shown = console.export_text()
    assert "Commits found" in shown and shas["retry"][:7] in shown
    assert "Retry on 503 from the load balancer" in shown


def test_read_commits_survives_a_missing_blob(tmp_path):
    """A partial clone (or a damaged object store) lacks a blob: git log -p stops at that
    commit; the commits after it are still read."""
    from askrepo.gitlog import read_commits, rev_list

    root = tmp_path / "r"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for i in range(4):
        (root / "a.py").write_text(f"def f():\n    return {i}\n")
        _commit_all(root, f"change {i}")
    blob = subprocess.run(
        ["git", "rev-parse", "HEAD~2:a.py"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    shas = rev_list(root, 10)
    got = list(read_commits(root, shas))
    assert [c.subject for c in got] == ["change 3", "change 2", "change 1", "change 0"]
    assert got[0].files[0].hunks == [(2, 2)]


def test_cli_history_output_shows_brackets_in_paths_and_messages_as_is(tmp_path):
    """`why` and `search --history` printed paths, symbols and commit messages as rich markup:
    `[brackets]/[id].py` came out as `/.py` and a message's `[red]…[/red]` was swallowed."""
    from fixture_repo import git

    root = tmp_path / "repo"
    (root / "[brackets]").mkdir(parents=True)
    (root / "[brackets]" / "[id].py").write_text("def bracket_func():\n    return 1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add [red]bracket[/red] helper\n\nBody with [bold]markup[/bold].")
    home = tmp_path / "home"
    assert run_cli("index", str(root), "--history", home=home).returncode == 0
    p = run_cli("why", "[brackets]/[id].py:1", "--repo", str(root), home=home)
    assert p.returncode == 0, p.stderr
    assert "Add [red]bracket[/red] helper" in p.stdout and "[bold]markup[/bold]" in p.stdout
    assert "change to [brackets]/[id].py:1" in p.stdout
    assert "[brackets]/[id].py:1-2 bracket_func" in p.stdout
    p = run_cli("search", "--history", "bracket helper", "--repo", str(root), home=home)
    assert p.returncode == 0, p.stderr
    assert "[red]bracket[/red]" in p.stdout and "[brackets]/[id].py:1-2" in p.stdout
