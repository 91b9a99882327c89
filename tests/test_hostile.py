"""Hostile and odd input (issue #7): a clear message or a sensible result, never a traceback."""

from __future__ import annotations

import subprocess

import pytest

import askrepo.indexer as indexer_mod
from askrepo.answer import ask
from askrepo.errors import UsageError
from askrepo.indexer import index_repo
from askrepo.llm import NoModel
from askrepo.retriever import MAX_K, Retriever, SearchOptions
from tests.fakes import FakeEmbedder
from tests.fixture_repo import run_cli


def _one_line_error(p: subprocess.CompletedProcess, *needles: str) -> None:
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_cli_index_bad_paths(tmp_path):
    _one_line_error(
        run_cli("index", str(tmp_path / "missing"), home=tmp_path / "h"), "does not exist"
    )
    f = tmp_path / "f.txt"
    f.write_text("x")
    _one_line_error(run_cli("index", str(f), home=tmp_path / "h"), "not a directory")
    (tmp_path / "empty").mkdir()
    _one_line_error(
        run_cli("index", str(tmp_path / "empty"), home=tmp_path / "h"), "No indexable files"
    )


def test_cli_errors_show_bracketed_paths_as_is(tmp_path):
    """Error lines were rich markup: `/tmp/x/[red]repo does not exist` printed as
    `/tmp/x/repo does not exist`, naming a path the user never gave."""
    missing = tmp_path / "[red]repo"
    _one_line_error(
        run_cli("index", str(missing), home=tmp_path / "h"), f"{missing} does not exist"
    )


def test_cli_ask_sources_show_bracketed_names_and_a_docs_only_repo_answers(tmp_path):
    """`ask`'s Sources table printed a section named `[draft] Setup steps` as rich markup
    (`Setup steps`); and a repository of Markdown alone answered nothing (docs filtered)."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "GUIDE.md").write_text(
        "# Guide\n\n## [draft] Setup steps\n\nRun make setup to install the toolchain.\n"
    )
    home = tmp_path / "h"
    assert run_cli("index", str(root), home=home).returncode == 0
    p = run_cli("ask", "how do I install the toolchain?", "--backend", "none", "--repo",
                str(root), home=home, env={"COLUMNS": "100"})  # fmt: skip
    assert p.returncode == 0, p.stderr
    sources = p.stdout.split("Sources", 1)[1]
    assert "GUIDE.md:3-5  [draft] Setup steps" in sources


def test_cli_index_and_status_show_a_bracketed_repository_path_as_is(tmp_path):
    """`index` and `status` printed the repository `…/my [repo]` as `…/my ` (rich markup)."""
    root = tmp_path / "my [repo]"
    root.mkdir()
    (root / "w.py").write_text("def f():\n    return 1\n")
    home = tmp_path / "h"
    env = {"COLUMNS": "200"}
    p = run_cli("index", str(root), home=home, env=env)
    assert p.returncode == 0, p.stderr
    assert f"repository  {root}" in p.stdout
    p = run_cli("status", str(root), home=home, env=env)
    assert p.returncode == 0 and f"repository  {root}" in p.stdout, p.stdout


def test_suggested_commands_quote_a_path_with_spaces(tmp_path):
    """A missing index for `/x/my repo` suggested running `askrepo index /x/my repo`, which,
    typed as shown, indexes `/x/my`: the path in a suggested command is shell-quoted."""
    root = tmp_path / "my repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    pass\n")  # something to index: the fix works
    p = run_cli("search", "x", "--repo", str(root), home=tmp_path / "h")
    _one_line_error(p, f"run `askrepo index '{root}'`")


def test_cli_only_ignored_files(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text("*\n")
    (root / "a.py").write_text("def a():\n    pass\n")
    _one_line_error(run_cli("index", str(root), home=tmp_path / "h"), "No indexable files")


def test_cli_unknown_model(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "a.py").write_text("x = 1\n")
    p = run_cli("index", str(tmp_path / "r"), "--model", "nope", home=tmp_path / "h")
    _one_line_error(p, "nope")


@pytest.fixture
def weird_repo(tmp_path):
    root = tmp_path / "weird"
    root.mkdir()
    (root / "min.js").write_text("var a=1;" * (10 * 1024 * 1024 // 8))  # 10 MB, one line
    (root / "nul.py").write_bytes(b"def f():\n    return 1\x00\n")
    (root / "bad_utf8.py").write_bytes(b"def caf\xe9():\n    return '\xff'\n")
    (root / "mixed.py").write_bytes(b"def a():\r\n    return 1\r\n\ndef b():\n    return 2\n")
    (root / "ünï côde.py").write_text("def unicode_name():\n    return 'ok'\n")
    (root / "garbage.py").write_text("def (((( class ]]] :::\n  \x7f return return\n" * 50)
    (root / "loop").symlink_to(root / "loop")
    (root / "etc").symlink_to("/etc")
    deep = root
    for i in range(200):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "deep.py").write_text("def deepest():\n    return 200\n")
    (root / "ok.py").write_text("def parse_header(line):\n    return line.split(':', 1)\n")
    return root


def test_weird_repo_indexes_and_searches(weird_repo):
    s = index_repo(weird_repo, embedder=FakeEmbedder())
    kept = set(s.skipped_paths.get("too_large", [])) | set(s.skipped_paths.get("generated", []))
    assert "min.js" in kept
    assert s.skipped.get("binary", 0) >= 1  # nul.py
    assert s.skipped.get("symlink", 0) >= 2
    r = Retriever.open(weird_repo, embedder=FakeEmbedder())
    files = r.store.files()
    assert "ünï côde.py" in files and "mixed.py" in files and "bad_utf8.py" in files
    assert any(p.endswith("deep.py") for p in files)
    assert not any(p.startswith("etc/") or p.startswith("loop/") for p in files)
    hit = r.search("deepest", SearchOptions(k=3)).hits[0]
    assert hit.symbol == "deepest" and hit.start_line == 1
    b = r.search("b", SearchOptions(k=10, mode="fts")).hits
    mixed = [h for h in r.search("def a return", SearchOptions(k=20)).hits if h.path == "mixed.py"]
    assert mixed and all(1 <= h.start_line <= h.end_line <= 5 for h in mixed)
    assert isinstance(b, list)


def test_file_deleted_between_walk_and_read(tmp_path, monkeypatch):
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    (root / "b.py").write_text("def b():\n    return 2\n")
    real = indexer_mod._chunk_file

    def vanish(r, f):
        if f.path == "b.py":
            (root / "b.py").unlink(missing_ok=True)
        return real(r, f)

    monkeypatch.setattr(indexer_mod, "_chunk_file", vanish)
    s = index_repo(root, embedder=FakeEmbedder())
    assert s.skipped.get("unreadable") == 1
    assert s.files_total == 1


@pytest.fixture
def small_index(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def alpha(x):\n    return x\n\n\ndef beta(y):\n    return y\n")
    index_repo(root, embedder=FakeEmbedder())
    return Retriever.open(root, embedder=FakeEmbedder())


def test_query_edge_cases(small_index):
    r = small_index
    for q in ("", "   ", "\n"):
        with pytest.raises(UsageError, match="empty"):
            r.search(q)
    with pytest.raises(UsageError, match="limit"):
        r.search("x" * 100_001)
    big = ("alpha beta " * 10_000)[:100_000]  # a 100 KB query works
    assert r.search(big, SearchOptions(k=2)).hits
    assert isinstance(r.search("?!.,;:()[]{}", SearchOptions(k=2)).hits, list)
    for k in (0, -3):
        with pytest.raises(UsageError, match="k must be at least 1"):
            r.search("alpha", SearchOptions(k=k))
    for k in (0, -3):  # ask too: 0 is not "the default"
        with pytest.raises(UsageError, match="k must be at least 1"):
            ask("what does alpha return?", r, NoModel(), k=k)
    huge = r.search("alpha", SearchOptions(k=10**9)).hits
    assert 1 <= len(huge) <= MAX_K
    with pytest.raises(UsageError, match="Unknown mode"):
        r.search("alpha", SearchOptions(mode="sparse"))


def test_search_max_per_file_below_one_is_refused_not_read_as_no_cap(small_index):
    from typer.testing import CliRunner

    from askrepo.cli import app

    root = str(small_index.store.repo)
    for bad in ("0", "-1"):
        r = CliRunner().invoke(app, ["search", "alpha", "--max-per-file", bad, "--repo", root])
        assert r.exit_code == 2, r.output
        assert f"--max-per-file must be at least 1 (got {bad})" in r.output
        assert "Traceback" not in r.output


def test_no_index_errors_name_a_fix_that_works(small_index, tmp_path):
    from askrepo.errors import NoIndexError
    from askrepo.history import HistoryIndex
    from askrepo.store import open_index

    root = small_index.store.repo
    cases = [
        (tmp_path / "missing", None, "does not exist — pass a repository directory with --repo"),
        (root / "a.py", None, "is a file — pass its repository's directory with --repo"),
        (tmp_path / "elsewhere", None, "run `askrepo index "),
        (root, "nosuch", "Unknown embedding model 'nosuch'; choose one of: minilm,"),
        (root, "minilm-int8", f"run `askrepo index {root} --model minilm-int8`"),
        # nothing `askrepo index` would index: running it fails too ("No indexable files")
        (tmp_path / "empty", None, "no indexable files in it (skipped: none found), so "
         "`askrepo index` has nothing to index — check the path, .gitignore and .askrepoignore"),
        (tmp_path / "blobs", "minilm-int8", "no indexable files in it (skipped: 1 binary, "
         "1 secret), so `askrepo index` has nothing to index"),
    ]  # fmt: skip
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.py").write_text("def b():\n    pass\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs" / "logo.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "blobs" / ".env").write_text("TOKEN=x\n")
    (root / "sub").mkdir()
    cases.append((root / "sub", None, f"inside the indexed repository {root} — use --repo {root}"))
    for path, model, says in cases:
        with pytest.raises(NoIndexError) as exc:
            open_index(path, model)
        assert says in str(exc.value), (path, model, str(exc.value))
    assert "minilm-static" not in str(pytest.raises(NoIndexError, open_index, root, "x").value)
    # history of a directory that is no git work tree: nothing to index, say so
    with pytest.raises(NoIndexError, match="not inside a git repository"):
        HistoryIndex.open(root, embedder=FakeEmbedder())
    # a git repository with nothing to index: `askrepo index --history` fails there too
    import subprocess

    blobs = tmp_path / "blobs"
    subprocess.run(["git", "init", "-q", str(blobs)], check=True)
    with pytest.raises(NoIndexError) as exc:
        HistoryIndex.open(blobs, embedder=FakeEmbedder())
    assert "No history index for" in str(exc.value)
    assert "no indexable files in it (skipped: 1 binary, 1 secret)" in str(exc.value)
    assert "run `askrepo index --history" not in str(exc.value)


def test_help_paragraphs_reflow_to_the_terminal_not_at_source_newlines():
    """A command's docstring paragraphs are wrapped to the terminal's width: not broken where
    the source line ended (``ask --help`` showed "how they" alone on a line at 80 columns)."""
    from typer.testing import CliRunner

    from askrepo.cli import app

    r = CliRunner().invoke(app, ["ask", "--help"], env={"COLUMNS": "80", "TERM": "dumb"})
    assert r.exit_code == 0, r.output
    lines = [ln.strip() for ln in r.output.splitlines()]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("The answer starts from"))
    end = lines.index("", start)
    paragraph = lines[start:end]
    assert len(paragraph) >= 3
    assert all(len(ln) >= 60 for ln in paragraph[:-1]), paragraph
    r = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"})
    assert "REPO/eval/queries.json" in r.output  # not swallowed as an HTML tag


def test_search_history_refuses_options_of_code_search(small_index):
    from typer.testing import CliRunner

    from askrepo.cli import app

    root = str(small_index.store.repo)
    r = CliRunner().invoke(app, ["search", "--history", "x", "--files", "--repo", root])
    assert r.exit_code == 2
    assert "--files applies to code search, not to --history (commits) — drop it" in r.output
    r = CliRunner().invoke(
        app, ["search", "--history", "x", "--expand", "--explain", "--repo", root]
    )
    assert "--expand, --explain apply to code search" in r.output and "drop them" in r.output


def test_index_history_interrupted_says_the_code_index_is_done(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import askrepo.cli_history as cli_history
    from askrepo.cli import app

    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n")
    summary = index_repo(root, embedder=FakeEmbedder())
    monkeypatch.setattr(indexer_mod, "index_repo", lambda *a, **k: summary)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_history, "index_history_cmd", interrupted)
    r = CliRunner().invoke(app, ["index", str(root), "--history"])
    assert r.exit_code == 130, r.output
    text = " ".join(r.output.split())
    assert "the code index above is up to date; the history index was not changed" in text


def test_status_notices_a_damaged_table(small_index):
    """Data files of the chunks table gone: the metadata still reads, so status must read the
    tables themselves to say so (it reported 'embedded 3 / 3' before)."""
    from askrepo.errors import IndexIncompatibleError
    from askrepo.refresh import status
    from askrepo.store import open_index

    root = small_index.store.repo
    assert status(open_index(root)).embedded > 0  # healthy: reads fine
    data = list((small_index.store.path / "lance").glob("chunks_*/data/*.lance"))
    assert data
    for f in data:
        f.unlink()
    with pytest.raises(IndexIncompatibleError, match=r"chunks table cannot be read .* --rebuild"):
        status(open_index(root))
