"""askrepo.claims: splitting answers into claims and checking what each names. Worked examples."""

from __future__ import annotations

from types import SimpleNamespace

from askrepo.claims import (
    check_answer,
    check_claim,
    citations_in,
    mark_unsupported,
    named_things,
    split_claims,
)

LOOKUP = SimpleNamespace(
    path="src/click/core.py",
    start_line=727,
    end_line=737,
    symbol="Context.lookup_default",
    text=(
        "def lookup_default(self, name: str, call: bool = True) -> t.Any | None:\n"
        '    """Get the default for a parameter from :attr:`default_map`."""\n'
        "    if self.default_map is not None:\n"
        "        value = self.default_map.get(name)\n"
        "        if call and callable(value):\n"
        "            return value()\n"
        "        return value\n"
        '    raise UsageError("No such option")\n'
    ),
)
ECHO = SimpleNamespace(
    path="src/click/utils.py",
    start_line=234,
    end_line=334,
    symbol="echo",
    text=(
        "def echo(message=None, file=None, nl=True, err=False, color=None):\n"
        "    out = strip_ansi(out)"
    ),
)
SOURCES = {1: LOOKUP, 2: ECHO}
INDEX = {"src/click/core.py", "src/click/utils.py", "src/click/types.py"}


def exists(path: str) -> bool:
    return path in INDEX


def test_split_sentences_bullets_and_trailing_citations():
    text = (
        "`Context.lookup_default` reads `default_map` [1]. It calls the value when `call` is "
        "true. [1]\n\n- `echo` strips ANSI codes [2].\n- Done, e.g. for pipes. Really [2]."
    )
    assert split_claims(text) == [
        "`Context.lookup_default` reads `default_map` [1].",
        "It calls the value when `call` is true. [1]",
        "`echo` strips ANSI codes [2].",
        "Done, e.g. for pipes.",
        "Really [2].",
    ]


def test_split_keeps_a_code_block_with_its_citation_line():
    text = (
        "It does this:\n[1] src/click/core.py:727-737\n```python\n"
        "value = self.default_map.get(name)\n```\nEnd [1]."
    )
    assert split_claims(text) == [
        "It does this:",
        "[1] src/click/core.py:727-737\n```python\nvalue = self.default_map.get(name)\n```",
        "End [1].",
    ]


def test_citations_in_skips_code_and_indexing():
    assert citations_in("a [2] b [1, 3] c `x[4]` args[5] [6](http://x) [2-4]") == [2, 1, 3, 4]


def test_named_things_worked_example():
    n = named_things(
        "Click's `Context.lookup_default()` in src/click/core.py:727-737 reads self.default_map "
        'at line 730 and raises "No such option" via `raise UsageError(...)`.'
    )
    assert n.identifiers == ["Context.lookup_default", "default_map"]
    assert n.paths == [("src/click/core.py", 727, 737)]
    assert n.lines == [(730, 730)]
    assert n.literals == ["raise UsageError(...)", "No such option"]


def test_named_things_two_code_spans_joined_by_a_dot_name_nothing_more():
    # the spans are read once, as what they are; what is left between them is no name
    # (they were once masked with x's, and `foo`.`bar` read as a name "xxxxx.xxxxx")
    assert named_things("Use `foo`.`bar` here [1].").identifiers == ["foo", "bar"]
    assert named_things('It says "no such"."option" [1].').identifiers == []


def test_supported_claim():
    c = check_claim(
        "`Context.lookup_default` reads `default_map` and returns `value()` at line 732 [1].",
        SOURCES,
        exists,
    )
    assert c.citations == [1]
    assert c.unsupported == [] and c.supported


def test_unsupported_names_are_listed():
    c = check_claim(
        "`echo` calls `resolve_color_default` in src/click/termui.py and line 400 [2].",
        SOURCES,
        exists,
    )
    assert c.unsupported == ["resolve_color_default", "src/click/termui.py", "line 400"]
    assert not c.supported


def test_names_from_an_uncited_snippet_do_not_count():
    c = check_claim("`echo` reads `default_map` [2].", SOURCES, exists)
    assert c.unsupported == ["default_map"]


def test_a_claim_that_cites_nothing_is_not_supported():
    c = check_claim("`lookup_default` reads the map.", SOURCES, exists)
    assert c.citations == [] and c.unsupported == ["lookup_default"] and not c.supported
    plain = check_claim("The snippets do not say.", SOURCES, exists)
    assert plain.unsupported == [] and not plain.supported


def test_paths_in_the_index_are_supported_without_citing_them():
    c = check_claim("Choices live in `src/click/types.py` [1].", SOURCES, exists)
    assert c.unsupported == []
    c = check_claim("See src/click/core.py:900-910 [1].", SOURCES, exists)
    assert c.unsupported == ["src/click/core.py:900-910"]  # outside the cited lines


def test_literals_ignore_whitespace_and_a_trailing_ellipsis():
    c = check_claim(
        "It starts `def lookup_default(self, name: str,    call: bool…` [1].", SOURCES, exists
    )
    assert c.unsupported == []


def test_dotted_names_match_the_cited_symbol_or_their_parts():
    assert check_claim("`lookup_default` [1]", SOURCES, exists).unsupported == []
    # qualified by its module, the cited symbol is still the cited symbol
    assert check_claim("`click.Context.lookup_default` [1]", SOURCES, exists).unsupported == []
    assert check_claim("`Context.get_default` [1]", SOURCES, exists).unsupported == [
        "Context.get_default"
    ]


def test_check_answer_and_marking():
    text = "`echo` strips codes with `strip_ansi` [2]. It uses `os.isatty` [2]."
    claims = check_answer(text, SOURCES, exists)
    assert [c.unsupported for c in claims] == [[], ["os.isatty"]]
    marked = mark_unsupported(text, claims)
    assert marked == (
        "`echo` strips codes with `strip_ansi` [2]. It uses `os.isatty` [2]. "
        "⚠ _not in the cited code: `os.isatty`_"
    )


def test_a_cited_symbol_that_looks_like_a_file_name_is_supported():
    """Go's method ``json`` of type ``context`` is the symbol ``context.json``: named in
    backticks it parses as a path, and no file has that name. The cited source's symbol is
    exactly it, so the claim holds; the same name citing another source does not."""
    json_method = SimpleNamespace(
        path="context.go",
        start_line=273,
        end_line=281,
        symbol="context.json",
        text="func (c *context) json(code int, i interface{}) error {\n\treturn nil\n}",
    )
    sources = {1: ECHO, 2: json_method}
    assert check_claim("Also relevant: `context.json` [2].", sources, exists).unsupported == []
    wrong = check_claim("Also relevant: `context.json` [1].", sources, exists)
    assert wrong.unsupported == ["context.json"]
    # a real path still needs the file (or a cited source of it)
    assert check_claim("See `context.json:3` [2].", sources, exists).unsupported == [
        "context.json:3"
    ]
