"""askrepo.safepath: every way out of the repository is refused with a clear message."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from askrepo.errors import UsageError
from askrepo.safepath import normalize, resolve_repo_path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".env").write_text("TOKEN=x\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    os.symlink(outside / "secret.txt", root / "link_out.txt")  # file symlink leaving the repo
    os.symlink(outside, root / "dir_out")  # directory symlink leaving the repo
    os.symlink(root / "src" / "app.py", root / "link_in.py")  # stays inside
    os.symlink(root / ".git", root / "gitlink")  # inside, but into .git
    return root


def test_plain_paths_resolve(repo):
    assert resolve_repo_path(repo, "src/app.py") == (repo / "src" / "app.py").resolve()
    assert resolve_repo_path(repo, "./src//app.py") == (repo / "src" / "app.py").resolve()
    assert resolve_repo_path(repo, "src/../src/app.py") == (repo / "src/app.py").resolve()
    assert normalize("src\\app.py") == "src/app.py"
    # a symlink that stays inside the repo is followed
    assert resolve_repo_path(repo, "link_in.py") == (repo / "src" / "app.py").resolve()


@pytest.mark.parametrize(
    "rel",
    ["/etc/passwd", "~/.ssh/id_rsa", "~", "C:\\Windows\\win.ini", "C:/x.py", "C:", "\\\\x\\y"],
)
def test_absolute_paths_are_refused(repo, rel):
    with pytest.raises(UsageError, match="path must be relative to the repo root"):
        resolve_repo_path(repo, rel)


@pytest.mark.parametrize("rel", ["a:1-2.py", "~notes.md", "C:foo.py"])
def test_posix_names_that_look_like_drives_or_home_are_relative(repo, rel):
    """`askrepo index` indexes `a:1-2.py` and search cites it; verify (and MCP read_file)
    refused it as an absolute Windows path."""
    if os.name == "nt":
        pytest.skip("a drive letter on Windows")
    (repo / rel).write_text("x = 1\n")
    assert resolve_repo_path(repo, rel) == (repo / rel).resolve()
    assert resolve_repo_path(repo, rel, allowed={rel}) == (repo / rel).resolve()


@pytest.mark.parametrize("rel", ["../outside/secret.txt", "..", "src/../../outside/secret.txt"])
def test_traversal_is_refused(repo, rel):
    with pytest.raises(UsageError, match="is outside the repository"):
        resolve_repo_path(repo, rel)


@pytest.mark.parametrize("rel", ["link_out.txt", "dir_out/secret.txt"])
def test_symlinks_leaving_the_repo_are_refused(repo, rel):
    with pytest.raises(UsageError, match="is outside the repository"):
        resolve_repo_path(repo, rel)


@pytest.mark.parametrize("rel", [".git/config", "src/../.git/config", "sub/.git/HEAD"])
def test_git_dir_is_refused(repo, rel):
    with pytest.raises(UsageError, match=r"inside \.git/"):
        resolve_repo_path(repo, rel)


def test_symlink_into_git_dir_is_refused(repo):
    with pytest.raises(UsageError, match=r"leads into \.git/"):
        resolve_repo_path(repo, "gitlink/config")


@pytest.mark.parametrize("rel", ["", "   ", "src/app.py\0.txt", "."])
def test_empty_nul_and_root_are_refused(repo, rel):
    with pytest.raises(UsageError):
        resolve_repo_path(repo, rel)


def test_not_indexed_files_are_refused_when_allowed_is_given(repo):
    allowed = {"src/app.py"}
    assert resolve_repo_path(repo, "src/app.py", allowed=allowed).name == "app.py"
    with pytest.raises(UsageError, match="was not indexed"):
        resolve_repo_path(repo, ".env", allowed=allowed)  # skipped as a secret
    with pytest.raises(UsageError, match="was not indexed"):
        resolve_repo_path(repo, "src/missing.py", allowed=allowed)
    # a symlink to an indexed file is not itself indexed: refused too
    with pytest.raises(UsageError, match="was not indexed"):
        resolve_repo_path(repo, "link_in.py", allowed=allowed)
    # without `allowed`, the same secret path is only checked for location
    assert resolve_repo_path(repo, ".env").name == ".env"


def test_symlinked_repo_root_still_works(repo, tmp_path):
    alias = tmp_path / "alias"
    os.symlink(repo, alias)
    assert resolve_repo_path(alias, "src/app.py") == (repo / "src" / "app.py").resolve()
    with pytest.raises(UsageError, match="is outside the repository"):
        resolve_repo_path(alias, "link_out.txt")
