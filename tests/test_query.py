"""The parsed question (askrepo.query): kinds, names, phrases, file names, words."""

from __future__ import annotations

import pytest

from askrepo.query import (
    NATURAL,
    SYMBOL,
    TRACE,
    bare_symbol,
    content_words,
    file_names,
    frame_files,
    is_trace,
    parse_query,
    question_scope,
    report_names,
    report_title,
)


@pytest.mark.parametrize(
    "text, name",
    [
        ("Field", "Field"),
        ("APIRouter", "APIRouter"),
        ("HttpClient", "HttpClient"),
        ("Foo::Bar", "Foo.Bar"),
        ("a.b", "a.b"),
        ("_private", "_private"),
        ("resolve_command()", "resolve_command"),
        ("`invoke`", "invoke"),
        ("class Field", "Field"),
        ("the Deserialize trait", None),  # "the" is not a kind word: a question
        ("Deserialize trait", "Deserialize"),
        ("memoize", "memoize"),  # one word is looked up as a name
        ("core.py", None),  # a file name
        ("where is Field defined", None),
        ("", None),
    ],
)
def test_bare_symbol(text, name):
    assert bare_symbol(text) == name


def test_kinds():
    assert parse_query("Field").kind == SYMBOL
    assert parse_query("how are options parsed?").kind == NATURAL
    trace = 'Traceback (most recent call last):\n  File "src/click/core.py", line 12, in main\n'
    assert parse_query(trace).kind == TRACE
    assert parse_query("x " * 300).kind == TRACE  # a long pasted issue body


def test_is_trace_needs_two_frames_when_short():
    assert is_trace('File "a.py", line 3\nFile "b.py", line 9')
    assert not is_trace('what does File "a.py", line 3 mean')
    assert is_trace("panic: runtime error\ngoroutine 1 [running]:\nmain.go:12")


def test_symbols_put_the_bare_name_first():
    q = parse_query("Field")
    assert q.identifiers == () and q.symbol == "Field" and q.symbols == ("Field",)
    q = parse_query("how does `Context.invoke` call callbacks?")
    assert q.symbol is None and q.symbols == ("Context.invoke",)


def test_parts_of_a_question():
    q = parse_query('Where is "No such option" raised in parser.py for `OptionParser`?')
    assert q.phrases == ("No such option",)
    assert q.file_names == ("parser.py",)
    assert q.identifiers == ("OptionParser",)
    assert "raised" in q.words and "where" not in q.words
    assert "optionparser" in q.fts.split()
    assert q.dense_text == q.text


def test_file_names_of_a_trace_with_absolute_paths():
    trace = (
        'File "/home/u/.venv/lib/python3.12/site-packages/click/core.py", line 722, in main\n'
        'File "C:\\Users\\u\\app\\cli.py", line 3, in <module>\n'
        "see https://example.com/x.py"
    )
    assert file_names(trace) == [
        "/home/u/.venv/lib/python3.12/site-packages/click/core.py",
        "C:/Users/u/app/cli.py",
    ]


def test_frame_files_are_the_names_only_stack_frames_give():
    trace = (
        "Crash when the cache is shared; I think loaders.py is wrong\n\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app.py", line 12, in <module>\n'
        "    env.render('page.html')\n"
        '  File "/venv/site-packages/jinja2/environment.py", line 9, in render\n'
        '14:16:36  > File "/venv/site-packages/jinja2/loaders.py", line 3, in load\n'
        "    at Axios.request (/app/lib/core/Axios.js:45:12)\n"
        "\tat com.example.Cache.read(Cache.java:88)\n"
        "EOFError: marshal data too short (see /srv/app.py for the call)\n"
    )
    q = parse_query(trace)
    assert q.kind == "trace"
    # loaders.py is named in the prose too, app.py on the error line, page.html in a line of
    # code: they stay named
    assert q.frame_files == (
        "/venv/site-packages/jinja2/environment.py",
        "/venv/site-packages/jinja2/loaders.py",
        "/app/lib/core/Axios.js",
        "Cache.java",
    )
    assert set(q.file_names) - set(q.frame_files) == {"loaders.py", "/srv/app.py", "page.html"}
    # the same function on any list of names; a question is not a trace: no frames
    assert frame_files(trace, ["loaders.py", "Cache.java"]) == ["Cache.java"]
    assert parse_query('Why does File "a.py", line 3 fail in b.py?').frame_files == ()


def test_file_names_and_words():
    assert file_names("see src/app/config.ts:12 and main.go, not example.com") == [
        "src/app/config.ts",
        "main.go",
    ]
    assert content_words("Where is the config of a DB loaded?") == ["config", "loaded"]
    # a British spelling brings its American form, which file names and code use (color.py)
    assert content_words("reduce a colour to the nearest colours") == [
        "reduce",
        "colour",
        "color",
        "nearest",
        "colours",
        "colors",
    ]


def test_scope_of_a_question_and_of_a_pasted_report():
    assert parse_query("where is the password hash tested?").about_tests
    assert parse_query("what does the README say about sessions?").about_docs
    report = "Since 2.1 our tests fail and the docs are silent about it. " + "details " * 60
    q = parse_query(report)
    assert q.kind == TRACE and not q.about_tests and not q.about_docs
    q = parse_query(report + 'File "tests/test_auth.py", line 3, see docs/usage.md')
    assert q.about_tests and q.about_docs  # files it names bring their class in
    assert question_scope("fix the tests", NATURAL, []) == (True, False)
    assert question_scope("fix the tests", TRACE, ["src/app.py"]) == (False, False)


def test_a_pasted_report_does_not_look_up_the_reporters_own_names():
    report = (
        "click.testing is not properly proxying stdout when I wrap it.\n\n```python\n"
        "import click\n\nclass StreamWrapper(object):\n    def __init__(self, stream):\n"
        "        self._stream = stream\n\n    def __getattr__(self, name):\n"
        "        return getattr(self._stream, name)\n\ndef invoke(cmd, args=()):\n"
        "    with StreamWrapper.stdout() as c:\n        cmd(standalone_mode=False)\n"
        "    return c.getvalue()\n```\n"
    )
    q = parse_query(report)
    assert q.kind == TRACE
    # its own class, function and methods, and protocol methods every class has, are not
    # the project's names; what it calls of the project is
    assert q.identifiers == ("click.testing", "_stream", "standalone_mode", "c.getvalue")
    assert report_names("def main():\n    run_app()\n", ["main", "run_app"]) == ["run_app"]
    # prose that says "the class Foo" defines nothing; only a line of code does
    assert report_names("I think the class Foo is wrong", ["Foo"]) == ["Foo"]
    # a question (not a pasted report) keeps every name it uses
    assert parse_query("what calls `__init__` of Context?").identifiers == ("__init__",)


def test_query_is_frozen():
    q = parse_query("Field")
    with pytest.raises(AttributeError):
        q.kind = NATURAL  # type: ignore[misc]


def test_php_namespaces_are_qualified_names():
    assert bare_symbol("Monolog\\Logger") == "Monolog.Logger"
    assert bare_symbol("\\Monolog\\Handler\\StreamHandler") == "Monolog.Handler.StreamHandler"
    assert parse_query("Monolog\\Logger").kind == SYMBOL


@pytest.mark.parametrize(
    ("text", "tests", "docs"),
    [
        # asked for: the scope filter lets them in and nothing is held against them
        ("which tests cover the parser?", False, False),
        ("where is the parser tested?", False, False),
        ("how are wrong passwords rejected in the tests?", False, False),
        ("what does the README say about sessions?", False, False),
        ("where is retry documented?", False, False),
        # only mentioned: the question asks for the code that handles tests / docs
        ("how does search decide that a question is about tests or documentation?", True, True),
        ("how does the walker decide whether a file is a test?", True, False),
        ("how does a session expire, as the tests show?", True, False),
    ],
)
def test_scope_mentions(text, tests, docs):
    q = parse_query(text)
    assert (q.mentions_tests, q.mentions_docs) == (tests, docs)
    assert q.about_tests or q.about_docs  # every one of them lets tests or docs in


def test_mention_compounds_are_the_words_around_the_mention():
    q = parse_query("how does the virtual time test scheduler compare results?")
    assert q.mentions_tests and "testscheduler" in q.mention_compounds


def test_only_file_names():
    assert parse_query("lib/adapters/fetch.js").only_files
    assert parse_query("fetch.js and xhr.js").only_files
    assert parse_query("sha2.zig").only_files  # zig, ex, hs, dart… are file extensions too
    assert not parse_query("what calls fetch.js?").only_files
    assert not parse_query("Field").only_files
    assert file_names("see core.py. Then parser.py? And main.go!") == [
        "core.py",
        "parser.py",
        "main.go",
    ]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("where is Console defined?", ("Console",)),
        ("Where is the Table class defined?", ("Table",)),
        ("where is the Body trait?", ("Body",)),
        ("what does struct Router hold?", ("Router",)),
        # an instance, prose and plain words are not names
        ("Where does the decorator turn a function into a Command object?", ()),
        ("where is the config file read?", ()),
        ("which type Value is meant here?", ()),
        # a code-looking name is an identifier already, not repeated here
        ("where is SessionStore defined?", ()),
    ],
)
def test_named_words(text, named):
    assert parse_query(text).named == named


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("where is Console defined?", True),
        ("Where is the Bridge class?", True),
        ("where is `parse_args`?", True),
        ("where is the Table class declared", True),
        ("where is Console used?", False),
        ("where is the config file read from disk?", False),
        ("how is the Table class rendered?", False),
    ],
)
def test_asks_definition(text, asks):
    assert parse_query(text).asks_definition is asks


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("what calls normalizeFlagName?", True),
        ("Who uses the Table class", True),
        ("where is Console used?", True),
        ("callers of parse_args", True),
        ("which functions invoke redact?", True),
        ("Which method calls flush", True),
        ("How is X called?", False),
        ("where is Console defined?", False),
        ("formToJSON pollutes Object.prototype", False),
        ("where is the Table class used?", True),
        ("Where is the deprecation warning printed when a deprecated command is invoked?", False),
    ],
)
def test_asks_callers(text, asks):
    assert parse_query(text).asks_callers is asks


@pytest.mark.parametrize(
    "text, title",
    [
        ("Link comparison fails to normalise file://localhost/\n\nWhen I compare ...", None),
        ("[BUG] Live flickers when printing\n\nSteps ...", None),
        ('Traceback (most recent call last):\n  File "a.py", line 1, in f', ""),
        ("```python\nimport click\n```", ""),
        ("### Description\n\nIt fails", ""),
        ("x" * 201 + "\nmore", ""),
        ("\n\n  Upgrade breaks the cache  \n\nbody", "Upgrade breaks the cache"),
    ],
)
def test_report_title(text, title):
    expected = text.strip().splitlines()[0] if title is None else title
    assert report_title(text) == expected


def test_title_words_only_for_a_pasted_report():
    report = "Cache lookup ignores the TTL\n\n" + "\n".join(
        f"step {i}: call get()" for i in range(8)
    )
    q = parse_query(report)
    assert q.kind == TRACE and q.title_words == ("cache", "lookup", "ignores", "ttl")
    assert parse_query("how does the cache lookup work?").title_words == ()


def test_a_report_with_fenced_code_has_a_full_text_query_of_its_prose():
    """``Query.prose_fts``: the FTS terms of a report without its fenced code (``` or ~~~,
    an unclosed fence running to the end); empty for a question, or for a report whose prose
    gives the same terms."""
    from askrepo.query import report_prose

    report = (
        "Brackets are lost in a query\n\nThe generated SQL drops the parentheses.\n"
        "```python\nstmt = select(User).where(User.id == 5)\n```\n"
        'Traceback (most recent call last):\n  File "app.py", line 3, in main\n'
        "~~~\nsession.execute(stmt)\n"
    )
    q = parse_query(report)
    assert q.kind == "trace"
    terms = q.prose_fts.split()
    assert {"brackets", "parentheses", "sql"} <= set(terms)
    assert "select" not in terms and "session" not in terms  # only in the fences
    assert "select" in q.fts.split()
    assert "stmt" not in report_prose(report) and "Traceback" in report_prose(report)
    assert q.prose == report_prose(report) and q.prose.startswith("Brackets are lost")
    assert parse_query("how are brackets kept in a query?").prose_fts == ""
    plain = "Brackets are lost\n" + "The generated SQL drops the parentheses, again.\n" * 8
    assert parse_query(plain).kind == "trace" and parse_query(plain).prose_fts == ""
    assert parse_query(plain).prose == ""  # no fences: nothing to read twice
    # the title (first line, prose) is kept as written for the embedding model
    assert q.title == "Brackets are lost in a query"
    assert parse_query("how are brackets kept in a query?").title == ""
