"""The development benchmark (eval/dev/): every query file is well formed, the manifest lists
them all, and, when a project's corpus has been fetched, every target exists in it."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from askrepo.lines import split_lines

DEV = Path(__file__).resolve().parent.parent / "eval" / "dev"
CATEGORIES = {"semantic", "architecture", "symbol", "bugreport"}
QUERY_FILES = sorted(p for p in DEV.glob("*.json") if p.name != "manifest.json")
# Symbol sets on the same corpora: qualified names (``rich.console.Console``,
# ``Monolog\\Logger``) and names given a value (constants, type aliases, macros).
SYMBOL_SETS = [DEV / "qualified", DEV / "values", DEV / "named"]  # named: "where is X defined?"
SYMBOL_FILES = sorted(p for d in SYMBOL_SETS for p in d.glob("*.json") if p.name != "manifest.json")


def corpora_root() -> Path:
    """Where benchmarks/fetch_dev_corpora.sh puts the projects ($ASKREPO_CORPORA/dev)."""
    return Path(os.environ.get("ASKREPO_CORPORA", "/work/.corpora")) / "dev"


def load(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def manifest() -> dict:
    return load(DEV / "manifest.json")


def targets(q: dict) -> list:
    return [*q["relevant"], *q.get("secondary", [])]


def test_benchmark_size():
    repos = manifest()["repos"]
    assert len(repos) >= 12
    assert len({r["language"] for r in repos}) >= 10
    # at least two of the languages added with it
    assert (
        len(
            {"swift", "scala", "elixir", "lua", "zig", "haskell", "dart"}
            & {r["language"] for r in repos}
        )
        >= 2
    )


def test_manifest_lists_every_query_file():
    m = manifest()
    listed = {r["queries"] for r in m["repos"]}
    assert listed == {p.name for p in QUERY_FILES}
    for r in m["repos"]:
        assert set(r) >= {"project", "language", "corpus_dir", "repo", "queries"}
        assert r["repo"].endswith("/" + r["corpus_dir"])
        assert not Path(r["corpus_dir"]).is_absolute() and ".." not in Path(r["corpus_dir"]).parts


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: p.stem)
def test_query_file_format(path):
    data = load(path)
    lang = {r["queries"]: r["language"] for r in manifest()["repos"]}[path.name]
    assert isinstance(data, list)
    counts = Counter(q["category"] for q in data)
    assert sum(counts[c] for c in ("semantic", "architecture", "symbol")) >= 15
    assert all(counts[c] >= 3 for c in ("semantic", "architecture", "symbol")), counts
    seen = set()
    for q in data:
        assert set(q) <= {"query", "relevant", "secondary", "category", "language"}, q
        assert isinstance(q["query"], str) and q["query"].strip() == q["query"] and q["query"]
        assert q["query"] not in seen, f"duplicate query {q['query']!r}"
        seen.add(q["query"])
        assert q["category"] in CATEGORIES
        assert q["language"] == lang
        assert isinstance(q["relevant"], list) and q["relevant"], q["query"]
        assert isinstance(q.get("secondary", []), list)
        for t in targets(q):
            if isinstance(t, str):
                rel = t
            else:
                assert set(t) == {"path", "start_line", "end_line"}, t
                assert isinstance(t["start_line"], int) and isinstance(t["end_line"], int)
                assert 1 <= t["start_line"] <= t["end_line"], t
                rel = t["path"]
            assert rel and not rel.startswith("/") and ".." not in rel.split("/"), t
        if q["category"] == "symbol":
            # a bare name, or a C-style kind word and a name ("struct ares_query")
            *kind, name = q["query"].split(" ")
            assert " " not in name and kind in ([], ["struct"], ["union"], ["enum"]), q["query"]
        if q["category"] == "architecture":
            assert len(q["relevant"]) + len(q.get("secondary", [])) >= 2, q["query"]


@pytest.mark.parametrize("folder", SYMBOL_SETS, ids=lambda p: p.name)
def test_symbol_sets_mirror_the_main_manifest(folder):
    main = {r["name"]: r for r in manifest()["repos"]}
    keys = ("project", "language", "corpus_dir", "repo")
    entries = load(folder / "manifest.json")["repos"]
    assert {r["queries"] for r in entries} == {p.name for p in folder.glob("*.json")} - {
        "manifest.json"
    }
    assert sum(len(load(folder / r["queries"])) for r in entries) >= 13
    for r in entries:
        assert {k: r[k] for k in keys} == {k: main[r["name"]][k] for k in keys}
        for q in load(folder / r["queries"]):
            assert q["category"] == "symbol" and q["language"] == r["language"], q
            assert (" " in q["query"]) == (folder.name == "named")
            if folder.name == "qualified":
                assert any(sep in q["query"] for sep in (".", "::", "\\"))
            assert [set(t) for t in q["relevant"]] == [{"path", "start_line", "end_line"}]


@pytest.mark.parametrize(
    "path", QUERY_FILES + SYMBOL_FILES, ids=lambda p: p.parent.name + "/" + p.stem
)
def test_targets_exist_in_the_corpus(path):
    repo = {r["queries"]: r["corpus_dir"] for r in load(path.parent / "manifest.json")["repos"]}[
        path.name
    ]
    root = corpora_root() / repo
    if not root.is_dir():
        pytest.skip(f"corpus not fetched: bash benchmarks/fetch_dev_corpora.sh {corpora_root()}")
    nlines: dict[str, int] = {}
    for q in load(path):
        for t in targets(q):
            rel = t if isinstance(t, str) else t["path"]
            f = root / rel
            assert f.is_file(), f"{path.name}: {rel} is not in {root} ({q['query']!r})"
            if isinstance(t, dict):
                if rel not in nlines:
                    nlines[rel] = len(split_lines(f.read_bytes().decode("utf-8", "replace")))
                assert t["end_line"] <= nlines[rel], f"{rel}:{t['start_line']}-{t['end_line']}"


SHORT = DEV / "short"  # the questions in words again, as a few words typed into a search box


def test_short_set_restates_every_question_in_words():
    """eval/dev/short/: for every semantic and architecture question of the main set, one
    short query (2-7 plain words, no code names) with the same targets, in the same order."""
    keys = ("project", "language", "corpus_dir", "repo", "queries")
    main = {r["name"]: r for r in manifest()["repos"]}
    entries = load(SHORT / "manifest.json")["repos"]
    assert {r["name"]: {k: r[k] for k in keys} for r in entries} == {
        n: {k: r[k] for k in keys} for n, r in main.items()
    }
    assert {p.name for p in SHORT.glob("*.json")} - {"manifest.json"} == {
        r["queries"] for r in entries
    }
    for r in entries:
        originals = [
            q for q in load(DEV / r["queries"]) if q["category"] in ("semantic", "architecture")
        ]
        short = load(SHORT / r["queries"])
        assert [q["long"] for q in short] == [q["query"] for q in originals], r["name"]
        assert len({q["query"] for q in short}) == len(short), r["name"]
        for s, q in zip(short, originals, strict=True):
            assert {k: s[k] for k in ("relevant", "secondary", "category", "language")} == {
                k: q.get(k, []) for k in ("relevant", "secondary", "category", "language")
            }
            words = s["query"].split()
            assert 2 <= len(words) <= 7, s["query"]
            assert not any(c in s["query"] for c in ("_", "::")), s["query"]
            assert not any(w[1:] != w[1:].lower() for w in words), s["query"]  # no CamelCase


def _full_repos():
    import importlib.util

    path = DEV.parent.parent / "benchmarks" / "full_repos.py"
    spec = importlib.util.spec_from_file_location("full_repos", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_full_repos_names_dev_projects_of_both_sets():
    fr = _full_repos()
    for sub in ("", "short"):
        projects = {r["corpus_dir"] for r in load(DEV / sub / "manifest.json")["repos"]}
        assert {p["project"] for p in fr.PROJECTS} <= projects, sub
    assert fr.map_path("v2/app.go", [("v2/", "")]) == "app.go"
    assert fr.map_path("src/lib.rs", [("src/", "tower/src/")]) == "tower/src/lib.rs"
    assert fr.map_path("Cargo.toml", [("src/", "tower/src/")]) == "Cargo.toml"


def test_full_repos_maps_targets_and_reports_files_that_differ(tmp_path):
    """``convert`` writes the questions with the repository's paths and names every target
    file that is missing there or, for a target with lines, differs from the corpus."""
    fr = _full_repos()
    corpora, root = tmp_path / "corpora", tmp_path / "full"
    for base, text in ((corpora / "p" / "lib", "a\n"), (root / "p" / "pkg" / "lib", "b\n")):
        base.mkdir(parents=True)
        (base / "same.rb").write_text("x\n")
        (base / "diff.rb").write_text(text)
        (base / "only_path.rb").write_text(text)
    (corpora / "p" / "lib" / "gone.rb").write_text("x\n")
    questions = [
        {
            "query": "q",
            "relevant": [{"path": "lib/same.rb", "start_line": 1, "end_line": 1}],
            "secondary": [
                {"path": "lib/diff.rb", "start_line": 1, "end_line": 1},
                "lib/only_path.rb",  # a path-only target: its bytes may differ
                "lib/gone.rb",
            ],
            "category": "semantic",
        }
    ]
    src = tmp_path / "p.json"
    src.write_text(json.dumps(questions))
    project = {"project": "p", "dir": "p", "map": [("lib/", "pkg/lib/")]}
    n, bad = fr.convert(project, src, tmp_path / "out" / "p.json", root, corpora)
    assert n == 4
    assert bad == ["pkg/lib/diff.rb", "pkg/lib/gone.rb"]
    out = load(tmp_path / "out" / "p.json")[0]
    assert out["relevant"] == [{"path": "pkg/lib/same.rb", "start_line": 1, "end_line": 1}]
    assert out["secondary"][1:] == ["pkg/lib/only_path.rb", "pkg/lib/gone.rb"]


def test_full_repos_clone_failure_is_one_line(tmp_path):
    fr = _full_repos()
    project = fr.parse_row("p  owner/p  v1.0.0")
    with pytest.raises(SystemExit) as exc:
        fr.clone(project, tmp_path, str(tmp_path / "missing" / "{name}"))
    assert str(exc.value).startswith("full_repos: could not clone ")
    assert "check --url" in str(exc.value)


def test_full_repos_without_the_corpora_is_one_line(tmp_path, monkeypatch):
    """Run before ``fetch_dev_corpora.sh``: a one-line error saying so, not a traceback."""
    fr = _full_repos()
    monkeypatch.setenv("ASKREPO_CORPORA", str(tmp_path / "none"))
    argv = ["full_repos.py", "--root", str(tmp_path / "full"), "-o", str(tmp_path / "out")]
    monkeypatch.setattr("sys.argv", [*argv, "--only", "axios"])
    with pytest.raises(SystemExit) as exc:
        fr.main()
    assert str(exc.value).startswith("full_repos: no corpus ")
    assert "fetch_dev_corpora.sh" in str(exc.value)
    assert not (tmp_path / "out").exists()


def test_full_repos_overlays_corpus_files_at_their_mapped_paths(tmp_path):
    """A newer corpus over an older tag: ``marshmallow/`` of the corpus replaces
    ``src/marshmallow/`` of the checkout, files the newer version dropped included."""
    fr = _full_repos()
    corpora, root = tmp_path / "corpora", tmp_path / "full"
    (corpora / "m" / "marshmallow").mkdir(parents=True)
    (corpora / "m" / "marshmallow" / "new.py").write_text("new\n")
    (root / "m" / "src" / "marshmallow").mkdir(parents=True)
    (root / "m" / "src" / "marshmallow" / "old.py").write_text("old\n")
    fr.overlay(fr.parse_row("m  o/m  3.23.0  prefix=src/  overlay=marshmallow"), root, corpora)
    assert sorted(p.name for p in (root / "m" / "src" / "marshmallow").iterdir()) == ["new.py"]
    assert not (root / "m" / "marshmallow").exists()
