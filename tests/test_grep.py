"""askrepo.grep: line semantics, filters, ranking, safety limits and the Click literal cases."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click_corpus import case_hit, click_src, literal_cases

from askrepo import grep as g
from askrepo.errors import UsageError


def _repo(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8", newline="")
    return tmp_path


def _locs(res: g.GrepResult) -> list[tuple[str, int]]:
    return [(m.path, m.line) for m in res.matches]


# ----------------------------------------------------------------------------------------------
# Pure ranking pieces, hand-worked


def test_hunk_sizes_hand_worked():
    # 1,2 (gap 1) | 30,31,32 (gap 28 > 20 splits) | 100
    assert g.hunk_sizes([1, 2, 30, 31, 32, 100], gap=20) == [2, 2, 3, 3, 3, 1]
    assert g.hunk_sizes([1, 21, 41], gap=20) == [3, 3, 3]  # exactly `gap` apart still chains
    assert g.hunk_sizes([1, 22], gap=20) == [1, 1]
    assert g.hunk_sizes([], gap=20) == []


def _c(path, line, **kw) -> g.Candidate:
    return g.Candidate(path=path, line=line, column=1, text="", **kw)


def test_rank_tiers_in_order():
    cands = [
        _c("docs/a.md", 1, file_rank=3, definition=True),  # doc: last despite being a def
        _c("tests/t.py", 1, file_rank=2, definition=True),
        _c("src/z.py", 5, prose=True),  # comment mention
        _c("src/z.py", 50, whole_word=False),  # inside a longer identifier
        _c("src/z.py", 90, exact_case=False),
        _c("src/z.py", 70),  # plain code use
        _c("src/y.py", 9, definition=True),
        _c("config.toml", 1, file_rank=1),
    ]
    order = [(c.path, c.line) for c in g.rank(cands)]
    assert order == [
        ("src/y.py", 9),  # code definition
        ("src/z.py", 70),  # code, exact case, whole word, not prose
        ("src/z.py", 5),  # ... prose
        ("src/z.py", 50),  # not whole word
        ("src/z.py", 90),  # other case
        ("config.toml", 1),
        ("tests/t.py", 1),
        ("docs/a.md", 1),
    ]


def test_rank_prefers_the_densest_hunk_then_path_and_line():
    # b.py has a hunk of 3 uses (lines 100-104); a.py has 2 scattered single uses.
    cands = [_c("a.py", 1), _c("a.py", 500), _c("b.py", 100), _c("b.py", 102), _c("b.py", 104)]
    assert [(c.path, c.line) for c in g.rank(cands)] == [
        ("b.py", 100),
        ("b.py", 102),
        ("b.py", 104),
        ("a.py", 1),
        ("a.py", 500),
    ]


def test_definition_span_and_locality():
    assert g.definition_span("def foo(x):") == (4, 7)
    assert g.definition_span("    async def bar():") == (14, 17)
    assert g.definition_span("class Foo(Base):") == (6, 9)
    assert g.definition_span("export default function Baz() {") == (24, 27)
    assert g.definition_span("func (r *Repo) Open(path string) error {") == (15, 19)
    assert g.definition_span("pub(crate) fn run() {}") == (14, 17)
    assert g.definition_span("#define MAX_LEN 10") == (8, 15)
    assert g.definition_span("UNSET = object()") == (0, 5)
    assert g.definition_span("    x = 1") is None  # indented assignment: not a definition
    assert g.definition_span("if x == 1:") is None
    # Go's grouped declarations: `type (` … `\tContext interface {` (no keyword on the line)
    assert g.definition_span("\tContext interface {") == (1, 8)
    assert g.definition_span("\tList[T any] struct {") == (1, 5)
    assert g.definition_span("\treturn x") is None
    lines = [
        "class A:",
        "    def method(self):",  # 1: a method (enclosed by a class)
        "        def helper():",  # 2: local to method
        "            pass",
        "def outer(",
        "    a,",
        ") -> None:",
        "    def callback():",  # 7: local, behind a multi-line signature
        "        pass",
    ]
    assert not g.is_local(lines, 0)
    assert not g.is_local(lines, 1)
    assert g.is_local(lines, 2)
    assert g.is_local(lines, 7)


def test_whole_word_and_prose_spans():
    line = "result_callback(callback)"
    assert not g.is_whole_word(line, 7, 15)  # "callback" inside result_callback
    assert g.is_whole_word(line, 16, 24)
    assert g.is_whole_word("class Foo(x)", 0, 10)  # "class Foo(": edge "(" needs no boundary
    src = 'x = "# not a comment"  # a comment\n"""doc\nstring"""\ny = 1\n'
    spans = g.prose_spans(src, "python")
    assert [src[a:b] for a, b in spans] == ["# a comment", '"""doc\nstring"""']
    js = "let s = '//x'; // note\n/* block\n */ f()"
    assert [js[a:b] for a, b in g.prose_spans(js, "javascript")] == ["// note", "/* block\n */"]
    assert g.prose_spans("anything # here", None) == []
    # a Go raw string has no escapes: `O\` ends a line inside it, `_//_` is no comment
    go = "banner = `\n/_//_/\\\n  O\\\n`\n// AcquireContext returns\nfunc f() {}"
    assert [go[a:b] for a, b in g.prose_spans(go, "go")] == ["// AcquireContext returns"]


def test_normalize_lang_aliases():
    assert g.normalize_lang("py") == {"python"}
    assert g.normalize_lang("JS") == {"javascript", "jsx"}
    assert g.normalize_lang("ts") == {"typescript", "tsx"}
    assert g.normalize_lang("golang") == {"go"}
    assert g.normalize_lang("rust") == {"rust"}


# ----------------------------------------------------------------------------------------------
# Search semantics on a small tree


@pytest.fixture
def repo(tmp_path):
    return _repo(
        tmp_path,
        {
            "src/app.py": "import os\n\ndef handler(event):\n    return Handler(event)\n",
            "src/util.py": "# handler helpers\nHANDLER = 1\r\nvalue = handler_for(x)\n",
            "src/web.ts": "export function handler(req) {\n  return req;\n}\n",
            "tests/test_app.py": "def test_handler():\n    assert handler(1)\n",
            "docs/guide.md": "Call `handler(event)` to start.\n",
            "data.bin": b"handler\0\x01\x02",
            "long.py": "x = '" + "a" * 5000 + "handler'\n",
        },
    )


def _files(root: Path) -> list[tuple[str, str | None]]:
    langs = {".py": "python", ".ts": "typescript", ".md": "markdown"}
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out.append((p.relative_to(root).as_posix(), langs.get(p.suffix)))
    return out


def test_line_column_and_definition_first(repo):
    res = g.grep(repo, _files(repo), "handler", literal=True, lang="py")
    first = res.matches[0]
    assert (first.path, first.line, first.column, first.definition) == ("src/app.py", 3, 5, True)
    assert first.text == "def handler(event):"
    locs = _locs(res)
    assert ("src/web.ts", 1) not in locs  # lang filter
    assert ("data.bin", 1) not in locs  # binary (and no language)
    # tests after code; in tests the whole-word use beats the one inside `test_handler`
    assert locs[-2:] == [("tests/test_app.py", 2), ("tests/test_app.py", 1)]
    assert not res.timed_out and res.total_matches == len(res.matches)


def test_regex_path_filter_crlf_and_case(repo):
    res = g.grep(repo, _files(repo), r"^HANDLER = \d$", path=r"src/.*\.py$")
    assert _locs(res) == [("src/util.py", 2)]  # "$" matches before the "\r"
    assert res.matches[0].text == "HANDLER = 1"
    res = g.grep(repo, _files(repo), "HANDLER", literal=True, case_sensitive=False, path="util")
    # exact case first, then the other-case matches
    assert _locs(res)[0] == ("src/util.py", 2)
    assert set(_locs(res)) == {("src/util.py", 1), ("src/util.py", 2), ("src/util.py", 3)}


def test_all_languages_docs_last_and_limit(repo):
    res = g.grep(repo, _files(repo), r"handler\(", limit=3)
    assert res.truncated and len(res.matches) == 3 and res.total_matches > 3
    everything = g.grep(repo, _files(repo), r"handler\(", limit=50)
    assert _locs(everything)[-1] == ("docs/guide.md", 1)
    assert ("src/web.ts", 1) in _locs(everything)


def test_lang_filter_unknown_language_is_an_error(repo):
    with pytest.raises(UsageError, match="languages in this index: markdown, python, typescript"):
        g.grep(repo, _files(repo), "x", lang="cobol")


def test_long_lines_are_cut(repo):
    res = g.grep(repo, _files(repo), "aaahandler", literal=True)
    (m,) = res.matches
    assert m.path == "long.py" and len(m.text) == g.MAX_TEXT_CHARS + 1 and m.text.endswith("…")
    assert m.column == 5 + 5000 - 3 + 1


def test_literal_special_characters_and_unescape_fallback(tmp_path):
    root = _repo(
        tmp_path,
        {"a.py": "class Foo(Base):\n    pat = r'class Bar\\('\n", "b.py": "x = a | b\n"},
    )
    files = _files(root)
    # literal: regex metacharacters are plain text
    assert _locs(g.grep(root, files, "Foo(Base)", literal=True)) == [("a.py", 1)]
    # an escaped query with no literal match is retried unescaped, and says so
    res = g.grep(root, files, r"class Foo\(", literal=True)
    assert (
        _locs(res) == [("a.py", 1)]
        and res.pattern == "class Foo("
        and "No literal match" in (res.note or "")
    )
    assert _locs(g.grep(root, files, r"a \| b", literal=True)) == [("b.py", 1)]
    # ... but a query that matches literally is taken literally
    res = g.grep(root, files, r"class Bar\(", literal=True)
    assert _locs(res) == [("a.py", 2)] and res.note is None
    # nothing either way: no matches, no note about escapes
    res = g.grep(root, files, r"class Nope\(", literal=True)
    assert res.matches == [] and res.note is None


def test_bad_input_is_refused(repo):
    files = _files(repo)
    with pytest.raises(UsageError, match="empty"):
        g.grep(repo, files, "")
    with pytest.raises(UsageError, match="limit is 10,240"):
        g.grep(repo, files, "a" * (10 * 1024 + 1), literal=True)
    with pytest.raises(UsageError, match="limit is 10,240"):
        g.grep(repo, files, "a", path="x" * 20_000)
    with pytest.raises(UsageError, match="Invalid regular expression in pattern"):
        g.grep(repo, files, "foo(")
    with pytest.raises(UsageError, match="Invalid regular expression in path"):
        g.grep(repo, files, "foo", path="(")
    with pytest.raises(UsageError, match="limit must be"):
        g.grep(repo, files, "foo", limit=0)
    with pytest.raises(UsageError, match="line break"):
        g.grep(repo, files, "def handler(event):\n    return", literal=True)
    # the same text is fine as a literal
    assert g.grep(repo, files, "foo(", literal=True).matches == []


def test_catastrophic_regex_is_linear_and_the_deadline_still_holds(tmp_path):
    root = _repo(tmp_path, {"x.py": "a" * 40 + "!\n"})
    # ripgrep's engine has no backtracking: the classic catastrophic pattern just answers
    res = g.grep(root, [("x.py", "python")], r"(a+)+$", timeout_s=30)
    assert not res.timed_out and res.matches == []
    assert _locs(g.grep(root, [("x.py", "python")], r"a{40}!$")) == [("x.py", 1)]
    # a deadline that has passed stops the search and says so
    res = g.grep(root, [("x.py", "python")], r"a{40}!$", timeout_s=1e-9)
    assert res.timed_out and "time limit" in (res.note or "")


def test_symlink_leaving_the_repo_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 'handler'\n")
    root = _repo(tmp_path / "repo", {"ok.py": "handler = 1\n"})
    os.symlink(outside / "secret.py", root / "link.py")
    res = g.grep(root, [("ok.py", "python"), ("link.py", "python")], "handler", literal=True)
    assert _locs(res) == [("ok.py", 1)]


# ----------------------------------------------------------------------------------------------
# The Click literal cases (written by others for another tool): 16/16 hit@1, 2/2 no match


def test_click_literal_cases_perfect_score():
    from askrepo.ingest import walk

    root = click_src()
    cases = literal_cases()
    files = [(f.path, f.language, f.file_class) for f in walk(root).files]
    failures = []
    for case in cases:
        s = case["search"]
        res = g.grep(
            root,
            files,
            s["query"],
            literal=s.get("literal", False),
            path=s.get("path"),
            lang=s.get("lang"),
            limit=s.get("limit", 20),
        )
        if not case_hit(case, [m.__dict__ for m in res.matches]):
            failures.append((case["id"], _locs(res)[:3]))
    matches = sum(c["expected"]["outcome"] == "match" for c in cases)
    assert (matches, len(cases) - matches) == (16, 2)
    assert failures == []


def test_grep_sees_redacted_text_only(tmp_path):
    from askrepo.grep import grep as run_grep

    (tmp_path / "settings.py").write_text(
        'AWS_KEY = "AKIAIOSFODNN7EXAMPLE"\npassword = "hunter2hunter2"\nDEBUG = True\n'
    )
    files = [("settings.py", "python")]
    assert run_grep(tmp_path, files, "AKIAIOSFODNN7EXAMPLE", literal=True).matches == []
    assert run_grep(tmp_path, files, r"AKIA[A-Z0-9]{16}").matches == []  # no probing by regex
    assert run_grep(tmp_path, files, "hunter2", literal=True).matches == []
    shown = run_grep(tmp_path, files, "AWS_KEY", literal=True).matches
    assert len(shown) == 1 and "REDACTED" in shown[0].text and "AKIA" not in shown[0].text
    assert run_grep(tmp_path, files, "DEBUG", literal=True).matches[0].line == 3


def test_a_cp1252_file_matches_as_the_index_reads_it(tmp_path):
    """ripgrep reads raw bytes; a match in a file that is not UTF-8 shows the line as indexed
    (cp1252, not U+FFFD), at the column counted in those characters."""
    root = _repo(
        tmp_path,
        {
            "legal.py": b"# Copyright \xa9 J\xfcrgen M\xfcller\n\ndef licence():\n"
            b"    return '\x93MIT\x94'\n",
            "plain.py": "def licence_text():\n    return 'MIT'\n",
        },
    )
    files = [("legal.py", "python"), ("plain.py", "python")]
    hit = g.grep(root, files, "Copyright", literal=True).matches
    assert [(m.path, m.line, m.column, m.text) for m in hit] == [
        ("legal.py", 1, 3, "# Copyright © Jürgen Müller")
    ]
    hit = g.grep(root, files, r"ller$").matches  # after three non-ASCII characters
    assert [(m.line, m.column, m.text) for m in hit] == [(1, 24, "# Copyright © Jürgen Müller")]
    assert [(m.path, m.line, m.text) for m in g.grep(root, files, "MIT", literal=True).matches] == [
        ("legal.py", 4, "    return '“MIT”'"),
        ("plain.py", 2, "    return 'MIT'"),
    ]


# ----------------------------------------------------------------------------------------------
# ripgrep underneath (issue 10 item 9)


def test_ripgrep_ignores_user_config_and_never_follows_symlinks(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo", {"a.py": "Handler = 1\nhandler = 2\n"})
    rc = tmp_path / "ripgreprc"
    rc.write_text("--ignore-case\n--invert-match\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(rc))  # would flip every result
    assert _locs(g.grep(root, [("a.py", "python")], "handler", literal=True)) == [("a.py", 2)]
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "b.py").write_text("handler = 3\n")
    os.symlink(tmp_path / "real", root / "linked")  # a symlinked directory on the path
    res = g.grep(root, [("a.py", "python"), ("linked/b.py", "python")], "handler", literal=True)
    assert _locs(res) == [("a.py", 2)] and res.files_searched == 1


def test_missing_ripgrep_is_one_actionable_error(tmp_path, monkeypatch):
    root = _repo(tmp_path, {"a.py": "x = 1\n"})
    monkeypatch.setenv("ASKREPO_RG", str(tmp_path / "no-rg"))
    with pytest.raises(g.GrepUnavailableError, match="ASKREPO_RG=.*not an executable"):
        g.grep(root, [("a.py", "python")], "x", literal=True)
    broken = tmp_path / "rg"
    broken.write_text("#!/bin/sh\necho boom >&2\nexit 101\n")
    broken.chmod(0o755)
    monkeypatch.setenv("ASKREPO_RG", str(broken))
    with pytest.raises(g.GrepUnavailableError, match="ripgrep failed"):
        g.grep(root, [("a.py", "python")], "x", literal=True)


def test_rust_regex_syntax_errors_name_the_problem(repo):
    with pytest.raises(UsageError, match="look-around"):
        g.grep(repo, _files(repo), r"handler(?=\()")


def test_cli_grep_prints_code_verbatim_not_as_markup(tmp_path):
    """`tuple[str, int]` in a matched line is code, not a rich markup tag to swallow."""
    from typer.testing import CliRunner

    from askrepo.cli import app
    from askrepo.indexer import index_repo
    from tests.fakes import FakeEmbedder

    root = _repo(tmp_path / "r", {"m.py": "def pair() -> tuple[str, int]:\n    return ('a', 1)\n"})
    index_repo(root, embedder=FakeEmbedder())
    r = CliRunner().invoke(app, ["grep", "tuple", "--repo", str(root)])
    assert r.exit_code == 0, r.output
    assert "m.py:1: def pair() -> tuple[str, int]:" in r.output


def test_cli_grep_says_how_many_matches_the_limit_left_out(tmp_path):
    from typer.testing import CliRunner

    from askrepo.cli import app
    from askrepo.indexer import index_repo
    from tests.fakes import FakeEmbedder

    body = "".join(f"def f{i}():\n    return 'needle'\n" for i in range(7))
    root = _repo(tmp_path / "r", {"m.py": body})
    index_repo(root, embedder=FakeEmbedder())
    r = CliRunner().invoke(app, ["grep", "needle", "--limit", "3", "--repo", str(root)])
    assert r.exit_code == 0, r.output
    assert r.output.count("m.py:") == 3
    assert "… 4 more matching lines (raise --limit, now 3, or narrow with --path)" in r.output
    # all of them shown: no such line
    r = CliRunner().invoke(app, ["grep", "needle", "--limit", "7", "--repo", str(root)])
    assert r.output.count("m.py:") == 7 and "more matching" not in r.output


def test_cli_grep_json_names_the_repo_and_the_time_like_search(tmp_path):
    from typer.testing import CliRunner

    from askrepo.cli import app
    from askrepo.indexer import index_repo
    from tests.fakes import FakeEmbedder

    root = _repo(tmp_path / "r", {"m.py": "def f():\n    return 'needle'\n"})
    index_repo(root, embedder=FakeEmbedder())
    r = CliRunner().invoke(app, ["grep", "needle", "--json", "--repo", str(root)])
    data = json.loads(r.stdout)
    assert data["repo"] == str(root.resolve()) and data["elapsed_ms"] >= 0
    assert data["total_matches"] == 1 and data["matches"][0]["path"] == "m.py"
