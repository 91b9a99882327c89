"""Tests for askrepo.identifiers (code-aware full-text search terms)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askrepo.identifiers import (
    fts_document,
    fts_query,
    identifiers,
    looks_like_identifier,
    query_identifiers,
    split_identifier,
)


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("getFileContext", ["get", "file", "context"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("snake_case_name", ["snake", "case", "name"]),
        ("parse2D", ["parse", "2d"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("base64Encode", ["base", "64", "encode"]),
        ("MAX_RETRY_COUNT", ["max", "retry", "count"]),
        ("__init__", ["init"]),
        ("IOError", ["io", "error"]),
        ("x", ["x"]),
        ("_", []),
        ("", []),
    ],
)
def test_split_identifier(word, parts):
    assert split_identifier(word) == parts


def test_identifiers_in_order():
    text = "def resolve_command(self, ctx):\n    return ctx.getFileContext(2, 'x')  # 3rd"
    assert identifiers(text) == [
        "def", "resolve_command", "self", "ctx", "return", "ctx", "getFileContext", "x", "rd",
    ]  # fmt: skip
    assert identifiers("") == []


def _tokens(s: str) -> list[str]:
    """What LanceDB's "simple" tokenizer makes of a string: lowercase alphanumeric runs."""
    return re.findall(r"[^\W_]+", s.lower())


def test_fts_document_adds_parts_and_whole_forms():
    doc = fts_document("x = snake_case_name(getFileContext)")
    assert doc.startswith("x = snake_case_name(getFileContext)\n")
    toks = _tokens(doc)
    # snake_case survives the tokenizer as a whole form and as parts
    assert {"snakecasename", "snake", "case", "name"} <= set(toks)
    # camelCase: the tokenizer keeps the whole word; we add the parts
    assert {"getfilecontext", "get", "file", "context"} <= set(toks)
    # each extra term once, even if the identifier repeats
    assert toks.count("snakecasename") == 1
    assert fts_document("a b c") == "a b c"  # nothing compound: unchanged


def test_fts_document_extra_is_prepended_and_expanded():
    doc = fts_document("pass", extra="src/click/core.py Group.resolve_command")
    assert doc.startswith("src/click/core.py Group.resolve_command\npass\n")
    assert "resolvecommand" in _tokens(doc)


def test_fts_query_examples():
    assert fts_query("Where is resolve_command handled?") == (
        "resolvecommand resolve command handled"
    )
    assert fts_query("How does HelpFormatter wrap text?") == (
        "helpformatter help formatter wrap text"
    )
    assert fts_query("what does `Context.lookup_default` do") == (
        "context lookupdefault lookup default"
    )
    # a call and a file name come before plain words; the extension is dropped
    assert fts_query("Why does invoke() fail in core.py") == "invoke core fail"
    assert fts_query("") == ""
    assert fts_query("?!... --- ((") == ""
    assert fts_query("the and of is") == ""


def test_fts_query_adds_the_american_spelling_beside_a_british_one():
    # code is written "color", "normalize": the British word stays, its American form follows
    assert fts_query("reduce a colour to the nearest of the terminal's colours") == (
        "reduce colour color nearest terminal colours colors"
    )
    assert fts_query("where are paths normalised and cancelled tasks logged?") == (
        "paths normalised normalized cancelled tasks logged"
    )  # "cancelled" and "canceled" already share the stem "cancel": no second copy
    # words that only end like a British spelling have no variant
    assert fts_query("raise a promise otherwise exercise the hour") == (
        "raise promise otherwise exercise hour"
    )


def test_fts_query_stack_trace_keeps_informative_terms_first():
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/x/click/core.py", line 1082, in main\n'
        "    rv = self.invoke(ctx)\n"
        "KeyError: 'missing_option'\n"
    )
    terms = fts_query(trace).split()
    assert terms[:7] == [
        "invoke", "keyerror", "key", "error", "missingoption", "missing", "option",
    ]  # fmt: skip
    assert "core" in terms and "1082" not in terms and "py" not in terms
    assert "self" not in terms
    assert len(terms) == len(set(terms))


def test_fts_query_caps_terms_and_handles_large_input():
    text = " ".join(f"load_value_{i}" for i in range(10_000))  # ~150 KB
    terms = fts_query(text, max_terms=32).split()
    assert len(terms) == 32
    assert terms[:4] == ["loadvalue0", "load", "value", "loadvalue1"]
    assert fts_query("alpha beta", max_terms=1) == "alpha"
    assert fts_query("alpha beta", max_terms=0) == ""


def test_fts_query_output_is_plain_terms():
    q = fts_query('AND OR NOT "quoted" +must -not title:foo (x) [y] *wild* foo~2')
    assert re.fullmatch(r"[a-z0-9 ]*", q), q
    assert "and" not in q.split() and "or" not in q.split()


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("resolve_command", True),
        ("HelpFormatter", True),
        ("Context.lookup_default", True),
        ("getFileContext", True),
        ("HTTPServer", True),
        ("_private", True),
        ("MAX_SIZE", True),
        ("`where`", True),
        ("foo()", True),
        ("where", False),
        ("handled", False),
        ("Context", False),  # a capitalised word may just start a sentence
        ("IDs", False),
        ("URLs", False),
        ("e.g", False),
        ("core.py", False),  # a file name, not a symbol
        ("example.com", False),
        ("__", False),
        ("", False),
        ("3rd", False),
        ("macOS", False),  # product names in plain questions
        ("GitHub", False),
        ("`GitHub`", True),
    ],
)
def test_looks_like_identifier(term, expected):
    assert looks_like_identifier(term) is expected


def test_query_identifiers():
    q = (
        "Where is `resolve_command` handled, and does HelpFormatter call "
        "Context.lookup_default or invoke() in core.py? What about Foo::bar and self.run?"
    )
    assert query_identifiers(q) == [
        "resolve_command",
        "HelpFormatter",
        "Context.lookup_default",
        "invoke",
        "Foo.bar",
        "run",
    ]
    assert query_identifiers("where is the config handled") == []
    assert query_identifiers("`main` and `main`") == ["main"]


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400), n=st.integers(0, 40))
def test_never_raises(text, n):
    q = fts_query(text, max_terms=n)
    assert len(q.split()) <= n
    assert isinstance(fts_document(text, extra=text[:20]), str)
    assert all(isinstance(t, str) and t for t in query_identifiers(text))
    for word in identifiers(text):
        assert all(p == p.lower() and p for p in split_identifier(word))
    looks_like_identifier(text)
