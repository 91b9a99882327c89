"""`askrepo verify` on a real git repository: commit, then edit, move lines, rename, delete.

Worked examples for the pure parts (parse_citation, find_runs, judge), then the library and the
CLI against real `git show`, and the MCP tool through a real MCP session.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from askrepo.errors import UsageError
from askrepo.lines import span_hash
from askrepo.verify import Citation, find_hash_runs, find_runs, judge, parse_citation
from askrepo.verify import verify_citation as verify
from tests.fixture_repo import git, run_cli

APP = """\
import os


def load(path):
    with open(path) as fh:
        return fh.read()


def save(path, text):
    with open(path, "w") as fh:
        fh.write(text)
"""
# load() is lines 4-6, save() lines 9-11


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "app.py").write_text(APP)
    (root / "README.md").write_text("# demo\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root, git(root, "rev-parse", "HEAD")


# ------------------------------------------------------------------------------------------
# Pure parts


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("pkg/app.py:4-6", Citation("pkg/app.py", 4, 6, None)),
        ("pkg/app.py:4-6@abc1234", Citation("pkg/app.py", 4, 6, "abc1234")),
        ("pkg/app.py:9", Citation("pkg/app.py", 9, 9, None)),
        ("C:odd/na@me.py:2–3@HEAD~1", Citation("C:odd/na@me.py", 2, 3, "HEAD~1")),
    ],
)
def test_parse_citation(text, want):
    assert parse_citation(text) == want


@pytest.mark.parametrize(
    "bad", ["pkg/app.py", "pkg/app.py:0-3", "pkg/app.py:5-2", ":4-6", "a.py:1@-rf"]
)
def test_parse_citation_rejects(bad):
    with pytest.raises(UsageError):
        parse_citation(bad)


def test_find_runs_and_hash_runs_worked_example():
    lines = ["x", "a", "b  ", "y", "a", "b", "a"]
    assert find_runs(lines, ["a", "b"]) == [2, 5]
    assert find_hash_runs(lines, span_hash(["a", "b"]), 2) == [2, 5]
    assert find_runs(lines, ["b", "a", "c"]) == []
    assert find_runs(["a"], ["a", "b"]) == []


def test_judge_worked_examples():
    ref = ["def f():", "    return 1"]
    digest = span_hash(ref)
    cite = Citation("m.py", 2, 3)
    assert judge(cite, ["", *ref], reference=ref, digest=digest)[:2] == ("valid", [])
    assert judge(cite, ["", "", "", *ref], reference=ref, digest=digest)[:2] == ("moved", [4])
    assert judge(cite, ["", "", "", *ref], reference=None, digest=digest)[:2] == ("moved", [4])
    assert judge(cite, ["", "def f():", "    return 2"], reference=ref, digest=digest)[0] == (
        "changed"
    )
    assert judge(cite, [""], reference=ref, digest=digest) == ("changed", [], None)
    assert judge(cite, None, reference=ref, digest=digest) == ("gone", [], None)


# ------------------------------------------------------------------------------------------
# Library on a real git repo


def test_valid_at_head_and_at_commit(repo):
    root, sha = repo
    r = verify(root, "pkg/app.py:4-6")
    assert (r.status, r.commit, r.moved_to) == ("valid", sha, [])
    assert r.expected_hash == r.current_hash == span_hash(APP.splitlines()[3:6])
    assert verify(root, f"pkg/app.py:4-6@{sha[:8]}").status == "valid"
    assert r.citation == f"pkg/app.py:4-6@{sha[:12]}"


def test_trailing_whitespace_and_crlf_do_not_count(repo):
    root, sha = repo
    (root / "pkg" / "app.py").write_text(APP.replace("\n", "  \r\n"))
    assert verify(root, f"pkg/app.py:4-6@{sha}").status == "valid"


def test_moved_lines_are_found_with_their_new_numbers(repo):
    root, sha = repo
    (root / "pkg" / "app.py").write_text("# header\n# more\n\n" + APP)
    r = verify(root, f"pkg/app.py:4-6@{sha}")
    assert r.status == "moved"
    assert [p.to_dict() for p in r.moved_to] == [
        {"path": "pkg/app.py", "start_line": 7, "end_line": 9}
    ]
    assert r.message == f"The cited lines moved since {sha[:12]}: now at pkg/app.py:7-9"


def test_changed_when_the_cited_lines_were_edited(repo):
    root, sha = repo
    (root / "pkg" / "app.py").write_text(APP.replace("fh.read()", "fh.read().strip()"))
    r = verify(root, f"pkg/app.py:4-6@{sha}")
    assert (r.status, r.moved_to) == ("changed", [])
    assert r.current_hash is not None and r.current_hash != r.expected_hash
    # save() is untouched
    assert verify(root, f"pkg/app.py:9-11@{sha}").status == "valid"


def test_changed_says_so_when_the_file_no_longer_reaches_the_cited_lines(repo):
    root, sha = repo
    (root / "pkg" / "app.py").write_text("import os\n")
    r = verify(root, f"pkg/app.py:9-11@{sha}")
    assert r.status == "changed"
    assert r.message == (
        f"pkg/app.py:9-11 changed since {sha[:12]}: pkg/app.py now has 1 line, fewer than "
        "the citation's last line, and the cited lines are nowhere in it"
    )


def test_gone_when_the_file_is_deleted_and_committed(repo):
    root, sha = repo
    git(root, "rm", "-q", "pkg/app.py")
    git(root, "commit", "-q", "-m", "drop app")
    r = verify(root, f"pkg/app.py:4-6@{sha}")
    assert (r.status, r.current_hash, r.moved_to) == ("gone", None, [])
    assert r.message == "pkg/app.py no longer exists and the cited lines were found nowhere else"
    # without @commit the reference is HEAD, where the file no longer exists: a wrong citation
    with pytest.raises(UsageError, match="is not in commit"):
        verify(root, "pkg/app.py:4-6")


def test_rename_and_move_to_another_file_are_followed(repo):
    root, sha = repo
    git(root, "mv", "pkg/app.py", "pkg/io.py")
    git(root, "commit", "-q", "-m", "rename")
    r = verify(root, f"pkg/app.py:4-6@{sha}")
    assert r.status == "moved"
    assert [(p.path, p.start_line) for p in r.moved_to] == [("pkg/io.py", 4)]
    # save() moved into a new, untracked module, and was removed from io.py
    save = "\n".join(APP.splitlines()[8:11]) + "\n"
    (root / "pkg" / "store.py").write_text("import os\n\n" + save)
    (root / "pkg" / "io.py").write_text(APP.replace(save, ""))
    r = verify(root, f"pkg/app.py:9-11@{sha}")
    assert r.status == "moved"
    assert [(p.path, p.start_line, p.end_line) for p in r.moved_to] == [("pkg/store.py", 3, 5)]


def test_hash_only_and_hash_with_commit(repo):
    root, sha = repo
    h = span_hash(APP.splitlines()[8:11])
    assert verify(root, "pkg/app.py:9-11", expected_hash=h).status == "valid"
    assert verify(root, "pkg/app.py:9-11", expected_hash=h).commit is None
    (root / "pkg" / "app.py").write_text("\n\n" + APP)
    r = verify(root, "pkg/app.py:9-11", expected_hash=h.upper())
    assert (r.status, [p.start_line for p in r.moved_to]) == ("moved", [11])
    assert verify(root, f"pkg/app.py:9-11@{sha}", expected_hash=h).status == "moved"
    with pytest.raises(UsageError, match="does not match pkg/app.py:4-6 at commit"):
        verify(root, f"pkg/app.py:4-6@{sha}", expected_hash=h)
    with pytest.raises(UsageError, match="not a citation hash"):
        verify(root, "pkg/app.py:9-11", expected_hash="xyz")


def test_default_commit_is_used_when_given(repo):
    root, first = repo
    (root / "pkg" / "app.py").write_text("\n" + APP)
    git(root, "commit", "-qam", "shift")
    assert verify(root, "pkg/app.py:4-6").status == "valid"  # HEAD has the shifted file
    r = verify(root, "pkg/app.py:4-6", default_commit=first)
    assert (r.status, r.moved_to[0].start_line) == ("moved", 5)


def test_errors_are_one_line_usage_errors(repo, tmp_path):
    root, sha = repo
    cases = {
        "pkg/app.py:4-6@deadbeef": "Commit 'deadbeef' is not in the repository",
        f"pkg/app.py:40-41@{sha}": "has 11 lines at commit",
        f"nope.py:1-2@{sha}": "nope.py is not in commit",
        "../etc/passwd:1-2": "outside the repository",
        "/etc/passwd:1-2": "outside the repository — cite a path inside the repo root",
        ".git/config:1-2": "inside .git/",
    }
    for cite, msg in cases.items():
        with pytest.raises(UsageError, match=msg) as exc:
            verify(root, cite)
        assert "\n" not in str(exc.value)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n")
    with pytest.raises(UsageError, match="no git commit to compare with"):
        verify(plain, "a.py:1")
    assert verify(plain, "a.py:1", expected_hash=span_hash(["x = 1"])).status == "valid"


def test_allowed_set_limits_what_can_be_checked(repo):
    root, _ = repo
    with pytest.raises(UsageError, match="not an indexed file"):
        verify(root, "README.md:1", allowed={"pkg/app.py"})
    assert verify(root, "pkg/app.py:4-6", allowed={"pkg/app.py"}).status == "valid"


# ------------------------------------------------------------------------------------------
# CLI


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("verify", *args, "--repo", str(root), timeout=120)


def test_cli_prints_json_lines_and_exit_codes(repo):
    root, sha = repo
    p = _cli(root, f"pkg/app.py:4-6@{sha}", "pkg/app.py:9-11")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["status"] for r in rows] == ["valid", "valid"]
    assert set(rows[0]) == {
        "citation", "path", "start_line", "end_line", "commit", "status", "expected_hash",
        "current_hash", "moved_to", "message",
    }  # fmt: skip
    (root / "pkg" / "app.py").write_text("\n" + APP)
    p = _cli(root, f"pkg/app.py:4-6@{sha}")
    assert p.returncode == 1
    assert json.loads(p.stdout)["moved_to"] == [
        {"path": "pkg/app.py", "start_line": 5, "end_line": 7}
    ]


def test_cli_reads_a_path_relative_to_the_current_directory(repo, monkeypatch):
    """From pkg/, `app.py:4-6` is pkg/app.py, as `askrepo why` reads it."""
    from typer.testing import CliRunner

    from askrepo.cli import app

    root, sha = repo
    monkeypatch.chdir(root / "pkg")
    r = CliRunner().invoke(app, ["verify", f"app.py:4-6@{sha}", "--repo", str(root)])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)
    assert (row["path"], row["status"]) == ("pkg/app.py", "valid")


def test_cli_errors_are_one_line(repo):
    root, _ = repo
    for args in (["pkg/app.py"], ["a.py:1", "b.py:2", "--hash", "0" * 16]):
        p = _cli(root, *args)
        assert p.returncode == 2
        assert "Traceback" not in p.stderr
        assert p.stderr.startswith("error: ") and p.stderr.strip().count("\n") == 0, p.stderr
