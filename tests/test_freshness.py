"""``stale`` is exact: real git repositories and real file edits (issue 13 §2, issue 10 item 3)."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace as NS

import pytest

from askrepo.datatypes import SourceFile
from askrepo.freshness import (
    check_store,
    compare,
    parse_porcelain,
    parse_porcelain_v2,
    same_stat,
)
from askrepo.indexer import index_repo
from askrepo.store import open_index
from tests.fakes import FakeEmbedder
from tests.fixture_repo import git


def fresh(root):
    return check_store(open_index(root))


def _files(root):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    (root / "pkg" / "b.py").write_text("def beta():\n    return 2\n")
    (root / "README.md").write_text("# r\n")
    (root / ".gitignore").write_text("*.log\nbuild-out/\n")


@pytest.fixture
def grepo(tmp_path):
    root = tmp_path / "g"
    _files(root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    index_repo(root, embedder=FakeEmbedder())
    return root


def _bump(path):
    """Rewrite with new content; make sure the mtime differs even on coarse clocks."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def test_git_clean_then_edit_add_delete(grepo):
    f = fresh(grepo)
    assert f.method == "git" and not f.stale and f.changed_files == 0
    assert f.indexed_commit == f.head_commit and f.head_commit
    d = f.to_dict()
    assert set(d) >= {"indexed_commit", "head_commit", "stale", "changed_files"}

    (grepo / "pkg" / "a.py").write_text("def alpha():\n    return 10\n")
    f = fresh(grepo)
    assert f.stale and f.changed == ["pkg/a.py"]
    (grepo / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")  # back to indexed
    assert not fresh(grepo).stale

    (grepo / "pkg" / "c.py").write_text("def gamma():\n    pass\n")  # untracked, not ignored
    assert fresh(grepo).changed == ["pkg/c.py"]
    (grepo / "pkg" / "c.py").unlink()

    (grepo / "debug.log").write_text("ignored by .gitignore\n")
    (grepo / "build-out").mkdir()
    (grepo / "build-out" / "x.py").write_text("x = 1\n")
    (grepo / "node_modules" / "m").mkdir(parents=True)
    (grepo / "node_modules" / "m" / "i.js").write_text("var x\n")  # vendored
    (grepo / ".askrepoignore").write_text("scratch/\n")
    (grepo / "scratch").mkdir()
    (grepo / "scratch" / "s.py").write_text("s = 1\n")
    f = fresh(grepo)
    assert f.changed == [".askrepoignore"]  # the ignore file itself is new; nothing else counts
    (grepo / ".askrepoignore").unlink()
    (grepo / "scratch" / "s.py").unlink()

    (grepo / "pkg" / "b.py").unlink()
    f = fresh(grepo)
    assert f.stale and f.changed == ["pkg/b.py"] and f.changed_files == 1


def test_git_touch_without_change_is_fresh(grepo):
    _bump(grepo / "pkg" / "a.py")
    assert not fresh(grepo).stale


def test_git_branch_switch_and_back(grepo):
    git(grepo, "checkout", "-q", "-b", "other")
    (grepo / "pkg" / "a.py").write_text("def alpha_other():\n    return 3\n")
    (grepo / "pkg" / "new.py").write_text("def new():\n    pass\n")
    git(grepo, "add", ".")
    git(grepo, "commit", "-qm", "other")
    f = fresh(grepo)
    assert f.stale and f.changed == ["pkg/a.py", "pkg/new.py"]
    assert f.head_commit != f.indexed_commit
    git(grepo, "checkout", "-q", "main")
    f = fresh(grepo)
    assert not f.stale and f.head_commit == f.indexed_commit


def test_git_commit_of_indexed_content_is_fresh(grepo):
    (grepo / "pkg" / "a.py").write_text("def alpha():\n    return 5\n")
    index_repo(grepo, embedder=FakeEmbedder())
    assert not fresh(grepo).stale
    git(grepo, "commit", "-qam", "commit what was indexed")
    f = fresh(grepo)
    assert not f.stale and f.head_commit != f.indexed_commit


def test_git_stash_of_indexed_dirty_work(grepo):
    (grepo / "pkg" / "a.py").write_text("def alpha():\n    return 99\n")
    index_repo(grepo, embedder=FakeEmbedder())  # the index holds the uncommitted edit
    assert open_index(grepo).meta().dirty == ["pkg/a.py"]
    assert not fresh(grepo).stale
    git(grepo, "stash", "-q")  # back to HEAD's content: git lists nothing any more
    f = fresh(grepo)
    assert f.stale and f.changed == ["pkg/a.py"]
    git(grepo, "stash", "pop", "-q")
    assert not fresh(grepo).stale


def test_repo_in_a_subdirectory_of_a_work_tree(tmp_path):
    top = tmp_path / "top"
    _files(top / "sub")
    (top / "other.py").write_text("x = 1\n")
    git(top, "init", "-q")
    git(top, "add", ".")
    git(top, "commit", "-qm", "init")
    root = top / "sub"
    index_repo(root, embedder=FakeEmbedder())
    assert not fresh(root).stale
    (top / "other.py").write_text("x = 2\n")  # outside the indexed directory
    assert not fresh(root).stale
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 7\n")
    assert fresh(root).changed == ["pkg/a.py"]


def test_outside_git_stat_cache(tmp_path):
    root = tmp_path / "plain"
    _files(root)
    index_repo(root, embedder=FakeEmbedder())
    f = fresh(root)
    assert f.method == "stat" and not f.stale and f.indexed_commit is None
    _bump(root / "pkg" / "a.py")  # stat changed, content not: hashed, still fresh
    assert not fresh(root).stale
    time.sleep(0.01)
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 11\n")
    assert fresh(root).changed == ["pkg/a.py"]
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    (root / "x.log").write_text("ignored\n")  # .gitignore rules apply outside git too
    assert not fresh(root).stale
    (root / "pkg" / "new.py").write_text("n = 1\n")
    (root / "README.md").unlink()
    assert fresh(root).changed == ["README.md", "pkg/new.py"]


def test_pure_helpers():
    out = b" M pkg/a.py\0?? new file.py\0D  gone.py\0"
    assert parse_porcelain(out) == ["pkg/a.py", "new file.py", "gone.py"]
    sha = "a" * 40
    v2 = (
        f"# branch.oid {sha}\0# branch.head main\0"
        "1 .M N... 100644 100644 100644 1234567 1234567 pkg/with space.py\0"
        "u UU N... 100644 100644 100644 100644 1 2 3 conflict.py\0"
        "? new.py\0"
    ).encode()
    assert parse_porcelain_v2(v2) == (sha, ["pkg/with space.py", "conflict.py", "new.py"])
    assert parse_porcelain_v2(b"# branch.oid (initial)\0? a\0") == (None, ["a"])
    a = SourceFile("a", None, "code", 3, "s1", mtime_ns=5, inode=7)
    st = NS(st_size=3, st_mtime_ns=5, st_ino=7)
    assert same_stat(a, st)
    assert not same_stat(SourceFile("a", None, "code", 3, "s1"), st)  # no stat recorded
    assert not same_stat(a, NS(st_size=3, st_mtime_ns=6, st_ino=7))
    assert not same_stat(a, NS(st_size=3, st_mtime_ns=5, st_ino=8))
    b = SourceFile("b", None, "code", 3, "s2")
    assert compare(["a", "b", "c"], {"a": a, "b": b}, {"a": a, "c": b}) == ["b", "c"]
