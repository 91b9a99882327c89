"""The walker: exactly which files are kept and why, in git and non-git mode, and safe reads."""

from __future__ import annotations

import hashlib
import os
import subprocess
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_sitter_language_pack import SupportedLanguage

from askrepo import ingest
from askrepo.errors import UsageError
from askrepo.ingest import classify, detect_language, git_commit, read_text, walk
from tests.fixture_repo import (
    EXPECTED,
    INVENTORY_PY,
    LABELS_PY,
    expected_kept,
    expected_skipped,
    git,
    make_fixture_repo,
)


@pytest.fixture(autouse=True)
def _hermetic_git(tmp_path_factory, monkeypatch):
    """No user or system git config (a global excludes file would change what git lists)."""
    home = tmp_path_factory.mktemp("git-home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("ASKREPO_MAX_FILE_BYTES", raising=False)


def kept(result) -> dict[str, tuple[str | None, str]]:
    return {f.path: (f.language, f.file_class) for f in result.files}


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


# --- the fixture repository, both modes ----------------------------------------------------------


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_fixture_kept_and_skipped_exactly(tmp_path, use_git):
    root = make_fixture_repo(tmp_path / "repo", git=use_git)
    assert (root / ".git").is_dir() is use_git
    result = walk(root)
    assert result.root == root.resolve()
    assert kept(result) == expected_kept(use_git)
    assert result.skipped_paths == expected_skipped()
    assert result.skipped == {r: len(p) for r, p in expected_skipped().items()}
    assert [f.path for f in result.files] == sorted(f.path for f in result.files)
    paths = set(kept(result))
    for p in EXPECTED["ignored"]:
        assert (root / p).exists() and p not in paths
    if use_git:
        for p in EXPECTED["ignored_with_git"]:
            assert p not in paths
        assert (root / EXPECTED["git_excluded"]).exists()
        assert not (root / EXPECTED["deleted_in_git"]).exists()
        assert git(root, "ls-files", EXPECTED["deleted_in_git"]).strip()  # still tracked
        assert EXPECTED["untracked"] in git(root, "status", "--porcelain")
    assert EXPECTED["untracked"] in paths


def test_fixture_hashes_sizes_and_exact_bytes(tmp_path):
    root = make_fixture_repo(tmp_path / "repo")
    for f in walk(root).files:
        data = (root / f.path).read_bytes()
        assert f.size == len(data)
        assert f.sha == hashlib.sha256(data).hexdigest()
        text, sha = read_text(root, f.path)
        assert sha == f.sha
        assert text.count("\n") == data.count(b"\n")


def test_crlf_kept_as_is(tmp_path):
    root = make_fixture_repo(tmp_path / "repo")
    text, sha = read_text(root, EXPECTED["crlf"])
    assert text == INVENTORY_PY
    assert text.count("\r\n") == INVENTORY_PY.count("\n") > 10
    assert text.split("\n")[5].startswith("def reserve_stock")  # line 6, as in an editor
    assert sha == hashlib.sha256(INVENTORY_PY.encode()).hexdigest()


def test_invalid_utf8_decoded_without_moving_lines(tmp_path):
    root = make_fixture_repo(tmp_path / "repo")
    text, sha = read_text(root, EXPECTED["invalid_utf8"])
    assert "# Libellés affichés en vitrine (encodage Latin-1 hérité)" in text
    assert "\ufffd" not in text
    assert text.count("\n") == LABELS_PY.count(b"\n")
    assert text.split("\n")[5].startswith("def format_price_label")
    assert sha == hashlib.sha256(LABELS_PY).hexdigest()


def test_decode_reads_legacy_8_bit_files_as_cp1252_then_latin1():
    # UTF-8 first, its BOM dropped; a UTF-8 file is never read as cp1252
    assert ingest.decode("\ufeff# Jürgen €\n".encode()) == "# Jürgen €\n"
    assert ingest.decode_source("é\n".encode()) == ("é\n", "utf-8")
    # not UTF-8: Windows-1252 (0x80 is the euro sign, 0x93/0x94 curly quotes, 0xa9 ©)
    raw = b"# Copyright \xa9 J\xfcrgen \x80 \x93q\x94\n"
    assert ingest.decode_source(raw) == ("# Copyright © Jürgen € “q”\n", "cp1252")
    # a byte cp1252 leaves undefined (0x81): Latin-1, which decodes anything
    assert ingest.decode_source(b"a\x81\x85b\r\n") == ("a\x81\x85b\r\n", "latin-1")
    # a BOM followed by invalid UTF-8 is cp1252 text like the rest (bytes kept, not dropped)
    assert ingest.decode(b"\xef\xbb\xbfx\xff") == "ï»¿xÿ"
    # mostly UTF-8 (2 valid accented characters, 1 stray Latin-1 byte): UTF-8, the stray byte
    # U+FFFD, not "CafÃ© dÃ©jÃ " for the whole file
    raw = "Café déjà\n".encode() + b"# \xe9t\xe9\n"[:4] + b"\n"
    assert ingest.decode_source(raw) == ("Café déjà\n# \ufffdt\n", "utf-8")
    # as many invalid sequences as valid characters: a legacy file that happens to hold one
    # valid pair (\xc3\xa9 is "Ã©" in cp1252)
    assert ingest.decode_source(b"\xc3\xa9 J\xfcrgen\n") == ("Ã© Jürgen\n", "cp1252")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_decode_never_fails_nor_moves_a_line(data):
    text, encoding = ingest.decode_source(data)
    # U+FFFD only from a file read as UTF-8 (mostly UTF-8 with a stray byte) or already in it
    assert encoding == "utf-8" or "\ufffd" not in text or "\ufffd".encode() in data
    # only the file's own line feeds become "\n": every line number is the file's
    assert text.count("\n") == data.count(b"\n")
    assert [len(part) > 0 for part in text.split("\n")][1:] == [
        len(part) > 0 for part in data.split(b"\n")
    ][1:]


def test_unicode_file_name_with_space(tmp_path):
    root = make_fixture_repo(tmp_path / "repo")
    name = EXPECTED["unicode_name"]
    assert name in kept(walk(root))
    assert read_text(root, name)[0].startswith("# Café notes")


def test_root_is_a_subdirectory_of_the_repository(tmp_path):
    root = make_fixture_repo(tmp_path / "repo")
    result = walk(root / "shop")
    got = kept(result)
    assert "auth.py" in got and "notifications.py" in got and "generated_keep.py" in got
    assert "generated_models.py" not in got  # shop/.gitignore
    assert "scratch.py" not in got  # .git/info/exclude
    assert result.skipped_paths == {"symlink": ["auth_link.py"]}
    assert all(not p.startswith(("shop/", "web/", "tests/")) for p in got)


def test_git_commit(tmp_path):
    root = make_fixture_repo(tmp_path / "repo")
    assert git_commit(root) == git(root, "rev-parse", "HEAD").strip()
    assert git_commit(root / "shop") == git_commit(root)
    plain = make_fixture_repo(tmp_path / "plain", git=False)
    assert git_commit(plain) is None
    empty = tmp_path / "fresh"
    empty.mkdir()
    git(empty, "init", "-q")
    assert git_commit(empty) is None  # no commit yet


# --- gitignore semantics: our own walker must agree with git -------------------------------------

TRICKY_IGNORES: dict[str, str | bytes] = {
    ".gitignore": "\n".join(
        [
            "# comment",
            "*.log",
            "!important.log",
            "/only_at_root.txt",
            "logs/",
            "**/cache/**",
            "docs/*.tmp",
            "a/**/z.py",
            "\\#hash.txt",
            "trailing_space.txt\\ ",
            "",
        ]
    ),
    "important.log": "keep\n",
    "debug.log": "x\n",
    "only_at_root.txt": "x\n",
    "sub/only_at_root.txt": "kept: the pattern is anchored\n",
    "logs/app.txt": "x\n",
    "logs_file_not_dir/logs": "a file named logs is not a directory\n",
    "deep/cache/x/y.py": "x = 1\n",
    "docs/a.tmp": "x\n",
    "docs/nested/b.tmp": "kept: * does not cross /\n",
    "a/b/c/z.py": "x = 1\n",
    "a/z.py": "x = 1\n",
    "#hash.txt": "x\n",
    "trailing_space.txt ": "x\n",
    "pkg/.gitignore": "*.py\n!keep.py\n/local.txt\nsub/\n",
    "pkg/drop.py": "x = 1\n",
    "pkg/keep.py": "x = 1\n",
    "pkg/local.txt": "x\n",
    "pkg/inner/local.txt": "kept: anchored to pkg/\n",
    "pkg/inner/also_drop.py": "x = 1\n",
    "pkg/sub/x.txt": "x\n",
    "pkg/deeper/.gitignore": "!*.py\n",
    "pkg/deeper/revived.py": "x = 1  # re-included by a deeper .gitignore\n",
    "pkg/deeper/debug.log": "x\n",
    "excluded_dir/.gitignore": "",
    "excluded_dir/file.txt": "x\n",
    "main.py": "print('hi')\n",
}


def test_walker_agrees_with_git_on_tricky_gitignores(tmp_path):
    root = write(tmp_path / "repo", dict(TRICKY_IGNORES))
    (root / ".gitignore").write_text(
        (root / ".gitignore").read_text() + "excluded_dir/\n!excluded_dir/file.txt\n"
    )
    without_git = kept(walk(root))
    git(root, "init", "-q")
    with_git = kept(walk(root))
    assert without_git == with_git
    assert set(with_git) == {
        ".gitignore",
        "important.log",
        "sub/only_at_root.txt",
        "logs_file_not_dir/logs",
        "docs/nested/b.tmp",
        "pkg/.gitignore",
        "pkg/keep.py",
        "pkg/inner/local.txt",
        "pkg/deeper/.gitignore",
        "pkg/deeper/revived.py",
        "main.py",
    }


def test_askrepoignore_nested_with_negation_both_modes(tmp_path):
    files = {
        ".askrepoignore": "*.md\nfixtures/\n",
        "README.md": "# hi\n",
        "guide/.askrepoignore": "!keep.md\n",
        "guide/keep.md": "# kept\n",
        "guide/drop.md": "# dropped\n",
        "fixtures/data.py": "x = 1\n",
        "src/fixtures/data.py": "x = 1\n",
        "src/app.py": "x = 1\n",
    }
    root = write(tmp_path / "repo", files)
    expected = {".askrepoignore", "guide/.askrepoignore", "guide/keep.md", "src/app.py"}
    assert set(kept(walk(root))) == expected
    git(root, "init", "-q")
    git(root, "add", "-A")  # tracked files are still subject to .askrepoignore
    assert set(kept(walk(root))) == expected


def test_git_info_exclude_and_global_excludes(tmp_path, monkeypatch):
    root = write(tmp_path / "repo", {"a.py": "x\n", "b.secretnote": "x\n", "c.tmp": "x\n"})
    git(root, "init", "-q")
    (root / ".git" / "info" / "exclude").write_text("c.tmp\n")
    excludes = tmp_path / "global-ignore"
    excludes.write_text("*.secretnote\n")
    cfg = tmp_path / "gitconfig"
    cfg.write_text(f"[core]\n\texcludesFile = {excludes}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    assert set(kept(walk(root))) == {"a.py"}


def test_root_ignored_by_an_enclosing_repository_is_walked_directly(tmp_path):
    outer = write(tmp_path / "outer", {".gitignore": "vendored_copy/\n", "x.py": "x\n"})
    git(outer, "init", "-q")
    inner = write(outer / "vendored_copy", {"lib.py": "def f(): pass\n", "n.log": "x\n"})
    assert set(kept(walk(inner))) == {"lib.py", "n.log"}


def test_nested_repository_and_submodule_like_dirs_are_not_entered(tmp_path):
    root = write(tmp_path / "repo", {"a.py": "x\n", "nested/b.py": "x\n"})
    git(root / "nested", "init", "-q")
    git(root, "init", "-q")
    result = walk(root)
    assert kept(result) == {"a.py": ("python", "code")}
    assert set(kept(walk(root / "nested"))) == {"b.py"}
    # not entered, and not silently: the summary counts it
    assert result.skipped_paths == {"nested_repo": ["nested/"]}
    (root / ".askrepoignore").write_text("nested/\n")
    assert walk(root).skipped_paths == {}


def test_a_submodule_is_counted_as_a_nested_repository(tmp_path):
    sub = write(tmp_path / "sub", {"lib.py": "def f(): pass\n"})
    git(sub, "init", "-q")
    git(sub, "add", "-A")
    git(sub, "commit", "-qm", "i")
    root = write(tmp_path / "repo", {"a.py": "x\n"})
    git(root, "init", "-q")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "ext")
    result = walk(root)
    assert set(kept(result)) == {"a.py", ".gitmodules"}
    assert result.skipped_paths == {"nested_repo": ["ext/"]}


def test_git_missing_falls_back_to_walking(tmp_path, monkeypatch):
    root = make_fixture_repo(tmp_path / "repo")
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))
    result = walk(root)
    # Without git, .git/info/exclude is not applied and the deleted file is simply gone.
    assert kept(result) == expected_kept(git=False)
    assert git_commit(root) is None


# --- the awkward cases ---------------------------------------------------------------------------


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_symlinks_are_never_followed(tmp_path, use_git):
    outside = write(tmp_path / "outside", {"secret.py": "LEAK = 1\n", "dir/x.py": "LEAK = 2\n"})
    root = write(tmp_path / "repo", {"real.py": "x = 1\n", "pkg/mod.py": "y = 2\n"})
    (root / "to_file.py").symlink_to(outside / "secret.py")
    (root / "to_dir").symlink_to(outside / "dir")
    (root / "to_parent").symlink_to("..")
    (root / "pkg" / "self").symlink_to(".")
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "dangling.py").symlink_to("nowhere.py")
    if use_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
    result = walk(root)
    assert set(kept(result)) == {"real.py", "pkg/mod.py"}
    assert result.skipped_paths == {
        "symlink": sorted(
            ["to_file.py", "to_dir", "to_parent", "pkg/self", "loop_a", "loop_b", "dangling.py"]
        )
    }
    for link in ("to_file.py", "to_dir/x.py", "to_parent/outside/secret.py", "pkg/self/mod.py"):
        assert read_text(root, link) is None


def test_read_text_refuses_to_leave_the_root(tmp_path):
    write(tmp_path, {"outside.py": "LEAK\n"})
    root = write(tmp_path / "repo", {"a.py": "x\n"})
    for bad in ("../outside.py", "/etc/passwd", "", ".", "a.py/..", "./a.py", "a//a.py"):
        assert read_text(root, bad) is None
    assert read_text(root, "a.py") == ("x\n", hashlib.sha256(b"x\n").hexdigest())
    assert read_text(root, "missing.py") is None
    assert read_text(root, ".") is None
    (root / "d").mkdir()
    assert read_text(root, "d") is None  # a directory


def test_file_deleted_after_walk_reads_as_none(tmp_path):
    root = write(tmp_path / "repo", {"a.py": "x\n", "b.py": "y\n"})
    files = walk(root).files
    assert [f.path for f in files] == ["a.py", "b.py"]
    (root / "a.py").unlink()
    assert read_text(root, "a.py") is None
    (root / "b.py").unlink()
    (root / "b.py").symlink_to("/etc/hostname")
    assert read_text(root, "b.py") is None  # replaced by a symlink since the walk


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_file_deleted_between_listing_and_reading(tmp_path, monkeypatch, use_git):
    root = write(tmp_path / "repo", {"a.py": "x\n", "b.py": "y\n"})
    if use_git:
        git(root, "init", "-q")
    lister = "_filter_git_list" if use_git else "_walk_tree"
    original = getattr(ingest, lister)

    def list_then_delete(*args):
        listed = original(*args)
        (root / "a.py").unlink()
        return listed

    monkeypatch.setattr(ingest, lister, list_then_delete)
    result = walk(root)
    assert [f.path for f in result.files] == ["b.py"]
    assert result.skipped_paths == {"unreadable": ["a.py"]}


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_two_hundred_levels_deep(tmp_path, use_git):
    root = tmp_path / "repo"
    deep = root.joinpath(*[f"d{i}" for i in range(200)])
    deep.mkdir(parents=True)
    (deep / "bottom.py").write_text("def bottom():\n    return 200\n")
    (deep / ".gitignore").write_text("ignored.py\n")
    (deep / "ignored.py").write_text("x = 1\n")
    if use_git:
        git(root, "init", "-q")
    rel = "/".join(f"d{i}" for i in range(200))
    assert set(kept(walk(root))) == {f"{rel}/bottom.py", f"{rel}/.gitignore"}
    assert read_text(root, f"{rel}/bottom.py")[0].startswith("def bottom")


def test_unreadable_directory_is_counted_and_skipped(tmp_path, monkeypatch):
    root = write(tmp_path / "repo", {"ok.py": "x\n", "locked/secret.py": "y\n"})
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(ingest.os, "scandir", scandir)
    result = walk(root)
    assert set(kept(result)) == {"ok.py"}
    assert result.skipped_paths == {"unreadable": ["locked/"]}


def test_unreadable_file_is_counted_and_skipped(tmp_path, monkeypatch):
    root = write(tmp_path / "repo", {"ok.py": "x\n", "locked.py": "y\n"})
    real_open = os.open

    def fake_open(path, flags, *args):
        if str(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(ingest.os, "open", fake_open)
    result = walk(root)
    assert set(kept(result)) == {"ok.py"}
    assert result.skipped == {"unreadable": 1}


def test_fifo_does_not_hang_the_walk(tmp_path):
    root = write(tmp_path / "repo", {"a.py": "x\n"})
    os.mkfifo(root / "pipe.py")
    result = walk(root)
    assert set(kept(result)) == {"a.py"}
    assert result.skipped_paths == {"unreadable": ["pipe.py"]}
    assert read_text(root, "pipe.py") is None


def test_non_utf8_file_name_is_skipped(tmp_path):
    root = write(tmp_path / "repo", {"a.py": "x\n"})
    with open(os.fsencode(root) + b"/caf\xe9.py", "wb") as fh:
        fh.write(b"x = 1\n")
    result = walk(root)
    assert set(kept(result)) == {"a.py"}
    assert result.skipped["unreadable"] == 1


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_a_file_name_with_a_newline_or_tab_is_skipped_not_cited_over_two_lines(tmp_path, use_git):
    """`new\\nline.py` was indexed and cited as `new` / `line.py:1-2` over two lines, and a tab
    in a name broke the history index's records: such names are skipped like non-UTF-8 ones."""
    root = write(tmp_path / "repo", {"a.py": "x\n", "new\nline.py": "x\n", "t\tab.py": "x\n"})
    if use_git:
        git(root, "init", "-q")
    result = walk(root)
    assert set(kept(result)) == {"a.py"}
    assert result.skipped_paths == {"unreadable": ["new?line.py", "t?ab.py"]}
    # nor does the history index store them (its records are tab-separated: `tab` + `ab.py`)
    excluded = ingest.excluded_by_rules(root)
    assert excluded("t\tab.py") and excluded("new\nline.py") and not excluded("a.py")


# --- errors and empty repositories ---------------------------------------------------------------


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        walk(tmp_path / "nope")


def test_file_path_is_a_usage_error(tmp_path):
    f = write(tmp_path, {"a.py": "x\n"}) / "a.py"
    with pytest.raises(UsageError, match="not a directory"):
        walk(f)


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_empty_directory(tmp_path, use_git):
    root = tmp_path / "empty"
    root.mkdir()
    if use_git:
        git(root, "init", "-q")
    result = walk(root)
    assert (result.files, result.skipped, result.skipped_paths) == ([], {}, {})


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_everything_ignored(tmp_path, use_git):
    root = write(tmp_path / "repo", {".gitignore": "*\n", "a.py": "x\n", "sub/b.py": "y\n"})
    if use_git:
        git(root, "init", "-q")
    result = walk(root)
    assert (result.files, result.skipped) == ([], {})


# --- skip reasons --------------------------------------------------------------------------------


def test_skip_reasons(tmp_path):
    files: dict[str, str | bytes] = {
        "keep.py": "x = 1\n",
        "package-lock.json": "{}\n",
        "yarn.lock": "x\n",
        "pnpm-lock.yaml": "x\n",
        "poetry.lock": "x\n",
        "Cargo.lock": "x\n",
        "uv.lock": "x\n",
        "composer.lock": "{}\n",
        "Gemfile.lock": "x\n",
        "go.sum": "x\n",
        "proto/user_pb2.py": "x = 1\n",
        "proto/user_pb2_grpc.py": "x = 1\n",
        "api/user.pb.go": "package api\n",
        "ui/types.generated.ts": "export type X = 1;\n",
        "static/site.min.css": "a{}\n",
        "static/app.js.map": "{}\n",
        "gen/models.go": "// Code generated by sqlc. DO NOT EDIT.\n\npackage gen\n",
        "long_line.json": '{"data": "' + "x" * 6000 + '"}\n',
        "big.txt": "x = 1\n" * 2000,
        "image.JPG": "not really a jpeg, but the extension says so\n",
        "fonts/a.woff2": "x\n",
        "lib.so": "x\n",
        "doc.pdf": "x\n",
        "mod.pyc": "x\n",
        "data.unknownext": b"abc\x00def",
        "server.key": "x\n",
        ".env.production": "X=1\n",
        ".npmrc": "//registry/:_authToken=x\n",
        "dist/bundle.js": "x\n",
        "build/pkg.js": "x\n",
        "vendor/lib/x.go": "package x\n",
        "third_party/x/y.c": "int x;\n",
        ".venv/lib/site.py": "x\n",
        "venv/bin/activate": "x\n",
        "src/__pycache__/m.cpython-311.pyc": "x\n",
        ".tox/py311/x.py": "x\n",
        ".mypy_cache/3.11/x.json": "{}\n",
        "lib/site-packages/x.py": "x\n",
        "web/node_modules/a/b/c/index.js": "x\n",
        "src/build/__init__.py": "# a package that happens to be called build\n",
    }
    root = write(tmp_path / "repo", files)
    result = walk(root, max_file_bytes=10_000)
    assert set(kept(result)) == {"keep.py", "src/build/__init__.py"}
    assert result.skipped_paths == {
        "binary": sorted(
            ["image.JPG", "fonts/a.woff2", "lib.so", "doc.pdf", "mod.pyc", "data.unknownext"]
        ),
        "generated": sorted(
            [
                "package-lock.json",
                "yarn.lock",
                "pnpm-lock.yaml",
                "poetry.lock",
                "Cargo.lock",
                "uv.lock",
                "composer.lock",
                "Gemfile.lock",
                "go.sum",
                "proto/user_pb2.py",
                "proto/user_pb2_grpc.py",
                "api/user.pb.go",
                "ui/types.generated.ts",
                "static/site.min.css",
                "static/app.js.map",
                "gen/models.go",
                "long_line.json",
            ]
        ),
        "secret": [".env.production", ".npmrc", "server.key"],
        "too_large": ["big.txt"],
        "vendored": sorted(
            [
                "dist/",
                "build/",
                "vendor/",
                "third_party/",
                ".venv/",
                "venv/",
                "src/__pycache__/",
                ".tox/",
                ".mypy_cache/",
                "lib/site-packages/",
                "web/node_modules/",
            ]
        ),
    }
    # git mode reports the same, vendored directories counted once each
    git(root, "init", "-q")
    git(root, "add", "-A")
    again = walk(root, max_file_bytes=10_000)
    assert kept(again) == kept(result)
    assert again.skipped_paths == result.skipped_paths


def test_max_file_bytes_from_environment(tmp_path, monkeypatch):
    root = write(tmp_path / "repo", {"small.py": "x = 1\n", "large.py": "x = 1\n" * 100})
    monkeypatch.setenv("ASKREPO_MAX_FILE_BYTES", "100")
    assert set(kept(walk(root))) == {"small.py"}
    assert set(kept(walk(root, max_file_bytes=10_000))) == {"small.py", "large.py"}
    assert walk(root, max_file_bytes=6).skipped == {"too_large": 1}  # "x = 1\n" is 6: kept


def test_minified_heuristic_counts_characters_not_bytes(tmp_path):
    prose = "日本語の説明文です。" * 200  # 2,000 characters, 6,000 UTF-8 bytes, one line
    root = write(tmp_path / "repo", {"notes.md": f"# Notes\n\n{prose}\n", "m.js": "a;" * 3000})
    result = walk(root)
    assert set(kept(result)) == {"notes.md"}
    assert result.skipped_paths == {"generated": ["m.js"]}


def test_one_long_data_line_does_not_make_a_source_file_minified(tmp_path):
    # hiredis's ffc.h: 3,000 lines of C with one 25,578-character table line
    code = "".join(f"int f{i}(void) {{ return {i}; }}\n" for i in range(1500))
    table = "static const unsigned long long T[] = {" + "0x1234567890abcdef, " * 1300 + "};\n"
    bundle = "/* license */\n" + "var a=1;" * 4000 + "\n"  # a header line, then one long line
    root = write(tmp_path / "repo", {"ffc.h": code + table + code, "bundle.js": bundle})
    result = walk(root)
    assert set(kept(result)) == {"ffc.h"}
    assert result.skipped_paths == {"generated": ["bundle.js"]}


# --- languages and classes -----------------------------------------------------------------------


def test_every_language_name_exists_in_the_language_pack():
    supported = set(typing.get_args(SupportedLanguage))
    used = (
        set(ingest.EXT_LANGUAGE.values())
        | set(ingest.NAME_LANGUAGE.values())
        | set(ingest.SHEBANG_LANGUAGE.values())
        | {"requirements"}
    )
    assert used - supported == set()


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.py", "python"),
        ("a.pyi", "python"),
        ("a.js", "javascript"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        ("a.jsx", "javascript"),
        ("a.ts", "typescript"),
        ("a.mts", "typescript"),
        ("a.cts", "typescript"),
        ("a.tsx", "tsx"),
        ("a.go", "go"),
        ("a.rs", "rust"),
        ("A.java", "java"),
        ("a.c", "c"),
        ("a.h", "c"),
        ("a.cc", "cpp"),
        ("a.cpp", "cpp"),
        ("a.cxx", "cpp"),
        ("a.hpp", "cpp"),
        ("a.hh", "cpp"),
        ("a.hxx", "cpp"),
        ("a.cs", "csharp"),
        ("a.rb", "ruby"),
        ("a.php", "php"),
        ("a.kt", "kotlin"),
        ("a.kts", "kotlin"),
        ("a.sh", "bash"),
        ("a.bash", "bash"),
        ("a.md", "markdown"),
        ("a.markdown", "markdown"),
        ("a.json", "json"),
        ("a.yaml", "yaml"),
        ("a.yml", "yaml"),
        ("a.toml", "toml"),
        ("a.html", "html"),
        ("a.css", "css"),
        ("a.scala", "scala"),
        ("a.swift", "swift"),
        ("a.lua", "lua"),
        ("a.sql", "sql"),
        ("A.PY", "python"),
        ("dir.with.dots/Makefile", "make"),
        ("Dockerfile", "dockerfile"),
        ("Dockerfile.prod", "dockerfile"),
        ("CMakeLists.txt", "cmake"),
        ("go.mod", "gomod"),
        ("requirements-dev.txt", "requirements"),
        ("Gemfile", "ruby"),
        (".gitignore", "gitignore"),
        ("notes.txt", None),
        ("LICENSE", None),
        ("a.unknownext", None),
        (".py", None),  # a dotfile called ".py" has no extension
    ],
)
def test_detect_language_by_name(path, language):
    assert detect_language(path) == language


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#!/usr/bin/env python3\nprint(1)\n", "python"),
        (b"#!/usr/bin/python3.11 -u\n", "python"),
        (b"#!/bin/bash\nset -e\n", "bash"),
        (b"#!/bin/sh\n", "bash"),
        (b"#!/usr/bin/env -S node --experimental-vm-modules\n", "javascript"),
        (b"#!/usr/bin/env ruby\n", "ruby"),
        (b"#!/usr/bin/env perl\n", "perl"),
        (b"#! /usr/bin/env zsh\n", "bash"),
        (b"#!/usr/bin/env FOO=1 python\n", "python"),
        (b"#!/usr/bin/env\n", None),
        (b"#!/opt/weird/interpreter\n", None),
        (b"no shebang\n", None),
        (b"", None),
    ],
)
def test_detect_language_by_shebang(head, language):
    assert detect_language("bin/tool", head) == language


def test_extension_wins_over_shebang():
    assert detect_language("tool.py", b"#!/bin/bash\n") == "python"


@pytest.mark.parametrize(
    ("path", "cls"),
    [
        ("tests/helpers.py", "test"),
        ("src/test/java/FooTest.java", "test"),
        ("pkg/__tests__/a.js", "test"),
        ("spec/models/user_spec.rb", "test"),
        ("numpy/testing/utils.py", "test"),
        ("test_auth.py", "test"),
        ("auth_test.py", "test"),
        ("conftest.py", "test"),
        ("server_test.go", "test"),
        ("ui/cart.test.ts", "test"),
        ("ui/cart.test.tsx", "test"),
        ("ui/cart.test.js", "test"),
        ("ui/cart.test.jsx", "test"),
        ("ui/cart.spec.ts", "test"),
        ("ui/cart.spec.js", "test"),
        ("src/FooTest.java", "test"),
        ("src/FooTests.cs", "test"),
        ("lib/user_spec.rb", "test"),
        ("src/balance/p2c/test.rs", "test"),  # a Rust `#[cfg(test)] mod test;` file
        ("src/client/tests.rs", "test"),
        ("std/crypto/test.zig", "test"),
        ("shop/tests.py", "test"),  # Django's app tests
        ("v2/testdata/expected-doc-full.man", "test"),  # Go's test data convention
        ("internal/test_data/input.json", "test"),
        ("spec/fixtures/users.yml", "test"),
        ("fixtures/_fixtures/tempdir.py", "code"),  # python-fixtures: the package itself
        ("src/__fixtures__/page.html", "test"),
        ("web/ab_test/variants.py", "code"),  # an A/B-testing feature, not a test
        ("src/__mocks__/fs.js", "test"),
        ("ui/__snapshots__/cart.test.tsx.snap", "test"),
        ("integration_tests/run.py", "test"),
        ("e2e-tests/login.ts", "test"),
        ("spec-dtslint/operators/race-spec.ts", "test"),  # rxjs's type tests
        ("dtslint/index.ts", "test"),
        ("type-tests/router.ts", "test"),
        ("test-d/index.ts", "test"),
        ("conan/test_package/example.cpp", "test"),
        ("packages/test-utils/src/render.ts", "test"),
        ("source/index.test-d.ts", "test"),  # tsd
        ("http/server_test.ts", "test"),  # Deno
        ("ios/Capacitor/CapacitorTests/BridgeTests.swift", "test"),  # an Xcode test target
        ("ios/App/AppUITests/Launch.swift", "test"),
        ("ios/Capacitor/Contests/Rules.swift", "code"),  # CamelCase "Tests" only
        ("src/contests/rules.ts", "code"),
        ("src/spec-parser/read.ts", "code"),  # a specification parser
        ("src/types/index.ts", "code"),
        ("src/attest_data/x.py", "code"),
        ("exposed-tests/src/main/kotlin/DatabaseTestsBase.kt", "test"),
        ("cli_tests/run.rs", "test"),
        ("test_suite/tests/test_de.rs", "test"),  # serde
        ("netty-testsuite/src/main/java/x.java", "test"),
        ("src/latest_tests_results/x.py", "code"),
        ("contests/solve.py", "code"),
        ("src/attest.rs", "code"),
        ("src/latest.py", "code"),
        ("tests/README.md", "test"),
        ("README.md", "doc"),
        ("README", "doc"),
        ("CHANGELOG.md", "doc"),
        ("LICENSE", "doc"),
        ("LICENSE-MIT", "doc"),
        ("COPYING.txt", "doc"),
        ("notes.txt", "doc"),
        ("guide.rst", "doc"),
        ("manual.adoc", "doc"),
        ("docs/index.html", "doc"),
        ("docs/_static/custom.css", "doc"),
        ("doc/diagram.puml", "doc"),
        ("docs/mkdocs.yml", "doc"),
        ("docs/examples/quickstart.py", "doc"),  # code under a docs directory is docs
        ("docs/conf.py", "doc"),
        ("docs_src/dependencies/tutorial008.py", "doc"),  # FastAPI-style example programs
        ("docs_app/src/app/app.component.ts", "doc"),  # rxjs's documentation site
        ("docs/assets/javascripts/codemirror.js", "doc"),
        ("tokio/src/doc/os.rs", "doc"),
        ("docker/entrypoint.py", "code"),
        ("src/doctest/runner.py", "code"),
        ("src/docs.go", "code"),
        ("pyproject.toml", "config"),
        ("package.json", "config"),
        ("config/app.yaml", "config"),
        ("setup.cfg", "config"),
        ("pom.xml", "config"),
        ("Dockerfile", "config"),
        ("Makefile", "config"),
        ("CMakeLists.txt", "config"),
        ("requirements.txt", "config"),
        ("go.mod", "config"),
        (".env.example", "config"),
        (".gitignore", "config"),
        (".github/workflows/ci.yml", "config"),
        (".github/CODEOWNERS", "config"),
        (".github/PULL_REQUEST_TEMPLATE.md", "doc"),
        ("infra/main.tf", "config"),
        ("src/app.py", "code"),
        ("src/license.py", "code"),
        ("src/history.js", "code"),
        ("web/index.html", "code"),
        ("scripts/deploy", "code"),
        ("data/unknown.thing", "code"),
        ("contest.py", "code"),
        ("attestation/verify.go", "code"),
    ],
)
def test_classify(path, cls):
    assert classify(path, detect_language(path)) == cls


def test_walk_speed_sanity_on_many_files(tmp_path):
    """2,000 files walk (no timing assertion: benchmarks measure speed)."""
    files = {f"pkg{i % 20}/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(2000)}
    root = write(tmp_path / "repo", files)
    assert len(walk(root).files) == 2000
    git(root, "init", "-q")
    assert len(walk(root).files) == 2000


def test_git_commit_is_none_for_a_root_the_enclosing_repo_ignores(tmp_path):

    from askrepo.ingest import git_commit

    outer = tmp_path / "outer"
    (outer / "cache" / "lib").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=outer, check=True)
    (outer / ".gitignore").write_text("cache/\n")
    (outer / "a.py").write_text("x = 1\n")
    (outer / "cache" / "lib" / "b.py").write_text("y = 2\n")
    subprocess.run(["git", "add", "."], cwd=outer, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "i"],
        cwd=outer,
        check=True,
    )
    assert git_commit(outer) is not None
    assert git_commit(outer / "cache" / "lib") is None


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_askrepo_home_and_models_inside_the_root_are_never_indexed(tmp_path, monkeypatch, use_git):
    """ASKREPO_HOME inside the repository (or indexing `~`, which holds ~/.askrepo): every run
    indexed the index it had just written, and every check found it changed."""
    root = write(
        tmp_path / "repo",
        {
            "a.py": "x = 1\n",
            ".askhome/indexes/r/meta.json": "{}\n",
            "cache/models/m/config.json": "{}\n",
            "cache/other.txt": "keep\n",
        },
    )
    monkeypatch.setenv("ASKREPO_HOME", str(root / ".askhome"))
    monkeypatch.setenv("ASKREPO_MODELS", str(root / "cache" / "models"))
    if use_git:
        git(root, "init", "-q")
    assert set(kept(walk(root))) == {"a.py", "cache/other.txt"}
    got = ingest.inspect_paths(root, [".askhome/indexes/r/meta.json", "a.py"], with_gitignore=True)
    assert [f.path for f in got.files] == ["a.py"]
    assert ".askhome/indexes/r/meta.json" not in ingest.list_candidates(root)


def test_walk_first_only_stops_at_the_first_kept_file(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x00")
    for name in ("a.py", "b.py", "c.py"):
        (root / name).write_text("def f():\n    return 1\n")
    assert len(walk(root).files) == 3
    first = walk(root, first_only=True)
    assert len(first.files) == 1  # whether there is anything to index, not what
    # nothing to index: the whole tree is walked, every skip counted
    for name in ("a.py", "b.py", "c.py"):
        (root / name).unlink()
    assert walk(root, first_only=True).skipped == walk(root).skipped == {"binary": 1}


@pytest.mark.parametrize(
    "head, generated",
    [
        ('/* Generated by re2c 3.0 */\n#include "scanners.h"', True),
        ("/*! Capacitor - MIT */\n/* Generated File. Do not edit. */", True),
        ("// Autogenerated: 'src/ExtractionOCaml/word_by_word_montgomery' --lang Zig", True),
        ("#![allow(x)]\n#![allow(y)]\n/// This file is autogenerated.  See tls-hacking", True),
        ("# THIS FILE IS AUTOMATICALLY GENERATED BY CARGO", True),
        ("// @generated by protoc-gen-ts", True),
        ("def generated_by(user):\n    return 'do not edit'", False),  # code, not a comment
        ("a = 1\n" * 5 + "# Generated by x", False),  # after the first 5 lines
        ("# This module generates code for the lexer", False),
    ],
)
def test_marks_generated(head, generated):
    from askrepo.ingest import marks_generated

    assert marks_generated(head) is generated
