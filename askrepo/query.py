"""The question, parsed once: a small frozen ``Query`` value every ranking stage reads.

``parse_query`` runs the identifier / phrase / file-name extraction of ``identifiers.py`` one
time per search and classifies the question:

* ``symbol``: a bare identifier or qualified name (``Field``, ``HttpClient``, ``Foo::Bar``,
  ``a.b``, ``_private``, ``resolve_command()``, ``memoize``), optionally with a kind word
  ("class Field").
* ``trace``: a pasted stack trace or a long issue body (many lines or characters).
* ``natural``: everything else (a question in words).

Pure and linear-time; never raises on odd input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .identifiers import (
    FILE_EXTENSIONS,
    STOP_WORDS,
    american,
    fts_query,
    query_identifiers,
)

SYMBOL, NATURAL, TRACE = "symbol", "natural", "trace"
KINDS = (SYMBOL, NATURAL, TRACE)

TRACE_CHARS = 400  # a question longer than this is a pasted issue / log, not a question
TRACE_LINES = 6
DENSE_QUERY_CHARS = 1_500  # the embedding model reads ~256 tokens; keep the informative head

# Words that name a kind of definition: "class Field", "the Deserialize trait".
_KIND_WORDS = frozenset(
    """
    class classes function functions func fn def method methods struct structs interface
    interfaces trait traits enum enums type types record protocol object module defmodule
    typedef macro constant const var variable symbol definition impl union
    """.split()
)
# The kind words that say which kind of definition a bare name asks for ("struct ares_query":
# the struct, not the function ares_query): TYPE_HINT for a type, FUNCTION_HINT for code.
TYPE_HINT, FUNCTION_HINT = "type", "function"
_HINTS = {
    **dict.fromkeys(
        "class classes struct structs interface interfaces trait traits enum enums type types "
        "record protocol typedef union".split(),
        TYPE_HINT,
    ),
    **dict.fromkeys("function functions func fn def method methods".split(), FUNCTION_HINT),
}
_BARE = re.compile(
    r"`?\\?([A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|#|\\)[A-Za-z_$][A-Za-z0-9_$]*)*)(\(\))?`?"
)
# a Python traceback's frame, and a file name with a line number ("decoder.go:123"): shared by
# _TRACE_LINE (is this a trace?) and _FRAME_LINE (which lines are its frames?)
_PY_FRAME = r'File "[^"\n]+", line \d+'
_FILE_LINE = r"\.\w{1,5}:\d+"
_TRACE_LINE = re.compile(
    _PY_FRAME + r"|^\s+at [\w$.<>]+\(|" + _FILE_LINE + r"(?::\d+)?\b|"
    r"^Traceback \(most recent|^panic:|^goroutine \d+|^\s*thread '.*' panicked|Exception in thread",
    re.M,
)
_QUOTED = re.compile(r"`([^`\n]{3,200})`|\"([^\"\n]{3,200})\"|(?<!\w)'([^'\n]{3,200})'(?!\w)")
_IDENT_ONLY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(\(\))?")
# A file name or path in a question: core.py, src/app/config.ts, "decoder.go:123"
# (absolute paths too: a trace's "/home/u/.venv/lib/python3.12/site-packages/click/core.py",
# "C:\Users\u\app\main.py"; they are read with "/" separators)
_FILE = re.compile(
    r"(?<![\w/\\.-])((?:[A-Za-z]:[\\/]|/)?(?:[\w.-]+[/\\])*[\w-]+\.([A-Za-z0-9]{1,5}))"
    r"(?=[\s:,;)\]\"'`?!]|\.(?:\s|$)|$)"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# A stack frame of a pasted trace: Python's `File "…", line N, in f` (anywhere in the line: a
# log's timestamp or a quote marker may come first), or a line that starts with an `at …` frame
# naming a file and line (JavaScript, Java, C#, Rust backtraces)
_FRAME_LINE = re.compile(rf"^(?:.*?\b{_PY_FRAME}|[ \t]*at\s.*?{_FILE_LINE}).*$", re.M)

_TEST_WORDS = re.compile(
    r"\b(tests?|tested|testing|unit ?tests?|spec|specs|fixtures?|pytest|unittest|mocks?|"
    r"mocked|conftest|test suite|coverage)\b",
    re.I,
)
_DOC_WORDS = re.compile(
    r"\b(readme|docs?|documentation|documented|document|changelog|tutorial|guide|"
    r"manual|user guide|faq|examples? in the docs|markdown|rst)\b",
    re.I,
)


# Phrasings that ask for tests or docs themselves, not just mention them: "which tests cover
# X", "where is X tested", "tests for X", "in the tests", "the test suite"; "what does the
# README say", "in the docs", "where is X documented".
_ASKS_TESTS = re.compile(
    r"\b(?:which|what|any)\s+(?:\w+\s+){0,2}?tests?\b"
    r"|\btests?\s+(?:for|of|that|which|covering|cover|covers|check|checks|exercis\w*|verif\w*|"
    r"assert\w*|do|does)\b"
    r"|\b(?:in|from|among)\s+(?:the\s+|our\s+)?tests?\b"
    r"|\btested\b|\b(?:test suites?|test files?|test cases?|unit tests?|integration tests?|"
    r"conftest|fixtures?|mocks?|mocked)\b",
    re.I,
)
_ASKS_DOCS = re.compile(
    r"\b(?:readme|changelog|tutorials?|faq|user guide)\b"
    r"|\b(?:the|in the|our)\s+(?:docs|documentation|manual|guide)\b"
    r"|\b(?:docs|documentation)\s+(?:say|says|explain\w*|describ\w*|show\w*|mention\w*|"
    r"recommend\w*|cover\w*)\b|\bdocumented\b",
    re.I,
)


def scope_mentions(text: str) -> tuple[bool, bool, tuple[str, ...]]:
    """(mentions tests only, mentions docs only, compounds): whether the question brings tests
    / docs in (``detect_scope``) without asking for them (``_ASKS_TESTS`` / ``_ASKS_DOCS``) —
    "how does search decide that a question is about tests or documentation?" — and the
    lower-case pairs each such word forms with its neighbours ("test scheduler" ->
    ``testscheduler``), which may spell a name in the code (``TestScheduler``).

    >>> scope_mentions("how is a question about tests detected?")
    (True, False, ('abouttests', 'testsdetected'))
    >>> scope_mentions("which tests cover the parser?")[:2]
    (False, False)
    """
    tests = bool(_TEST_WORDS.search(text)) and not _ASKS_TESTS.search(text)
    docs = bool(_DOC_WORDS.search(text)) and not _ASKS_DOCS.search(text)
    compounds: list[str] = []
    for on, words in ((tests, _TEST_WORDS), (docs, _DOC_WORDS)):
        if not on:
            continue
        for m in words.finditer(text):
            word = re.sub(r"\W", "", m.group(0)).lower()
            before = re.search(r"([A-Za-z]+)[\s_-]*$", text[: m.start()])
            after = re.match(r"[\s_-]*([A-Za-z]+)", text[m.end() :])
            if before:
                compounds.append(before.group(1).lower() + word)
            if after:
                compounds.append(word + after.group(1).lower())
    return tests, docs, tuple(dict.fromkeys(compounds))


def detect_scope(query: str) -> tuple[bool, bool]:
    """Whether a question is about tests and/or docs: (include_tests, include_docs).

    "where is X tested", "which tests cover Y" → tests; "what does the README say" → docs.
    """
    return bool(_TEST_WORDS.search(query)), bool(_DOC_WORDS.search(query))


def question_scope(text: str, kind: str, files: list[str] | tuple[str, ...]) -> tuple[bool, bool]:
    """(include_tests, include_docs) for a parsed question: ``detect_scope``'s words, except
    in a pasted issue body or log (kind ``trace``). There the words describe the reporter's
    situation ("my tests fail", "as the docs say") and the fix is in the code, so only a test or
    doc *file* the text names brings tests or docs in (a trace through ``tests/test_api.py``).

    >>> question_scope("where is X tested?", NATURAL, [])
    (True, False)
    >>> question_scope("Steps: run the tests ... (a long report)", TRACE, [])
    (False, False)
    >>> question_scope("FAILED tests/test_api.py::test_login ...", TRACE, ["tests/test_api.py"])
    (True, False)
    """
    if kind != TRACE:
        return detect_scope(text)
    from .ingest import DOC, TEST, classify

    classes = {classify(f, None) for f in files}
    return TEST in classes, DOC in classes


@dataclass(frozen=True)
class Query:
    text: str
    kind: str  # symbol | natural | trace
    identifiers: tuple[str, ...]  # code-looking names ("::" -> ".", no "()"), in order
    symbol: str | None  # the name, when the whole question is one (kind symbol)
    phrases: tuple[str, ...]  # quoted text that is not a bare identifier (messages, literals)
    file_names: tuple[str, ...]  # file names / paths named in the question ("core.py")
    words: tuple[str, ...]  # lowercase content words (no stop words), for path-word matching
    fts: str  # the FTS query string
    dense_text: str  # what the embedding model reads
    # every lowercase word of the question, short ones and stop words included ("v1", "docs"):
    # what the path priors compare with directory names
    tokens: frozenset[str] = frozenset()
    about_tests: bool = False  # "where is X tested" (detect_scope)
    about_docs: bool = False  # "what does the README say"
    # tests / docs only mentioned, not asked for, and the words they form ("testscheduler"):
    # scope_mentions, read by ranking.mention_factors
    mentions_tests: bool = False
    mentions_docs: bool = False
    mention_compounds: tuple[str, ...] = ()
    only_files: bool = False  # the question is nothing but file names / paths ("fetch.js")
    named: tuple[str, ...] = ()  # plain words the phrasing marks as names ("the Table class")
    # a short "where is X [defined]?" question: the definition is the answer (pinned first)
    asks_definition: bool = False
    # "what calls X?", "where is X used?", "callers of X": X itself is the subject (the card
    # lists its callers; a thin wrapper the question names keeps its place)
    asks_callers: bool = False
    # a pasted report's title (its first line, when that is prose): its content words, which
    # the path-words stage reads as it reads a question's words, and the line itself, which the
    # embedding model reads as a query of its own (the ``title`` stage)
    title_words: tuple[str, ...] = ()
    title: str = ""
    # a pasted report with fenced code: its prose alone (report_prose; the head the embedding
    # model reads, DENSE_QUERY_CHARS) and that prose's FTS query — a second dense and a second
    # full-text list beside the whole report's (the ``prose`` stage); "" otherwise
    prose: str = ""
    prose_fts: str = ""
    # a symbol query's kind word: "struct ares_query" -> TYPE_HINT, "fn main" -> FUNCTION_HINT
    kind_hint: str | None = None
    # a pasted trace's file names that occur only in its stack frames (``frame_files``): where
    # the error passed on its way up, not where the report points (the ``frames`` stage)
    frame_files: tuple[str, ...] = ()

    @property
    def symbols(self) -> tuple[str, ...]:
        """Names whose definitions are looked up: a symbol query's bare name (even one without
        camel humps or underscores, such as ``Field``) and the identifiers."""
        if self.symbol is None or self.symbol in self.identifiers:
            return self.identifiers
        return (self.symbol, *self.identifiers)


def quoted_phrases(query: str) -> list[str]:
    """Quoted text in a question that is not a bare identifier: `Got unexpected extra argument`,
    "No such option". Such text is usually copied from the code (messages, literals)."""
    out = []
    for m in _QUOTED.finditer(query):
        text = next(g for g in m.groups() if g is not None).strip()
        if text and not _IDENT_ONLY.fullmatch(text):
            out.append(text)
    return list(dict.fromkeys(out))


def quoted_message_spans(query: str) -> list[tuple[int, int]]:
    """Where the question quotes a message — text of several words in double or single quotes,
    not backticked code — as (start, end) offsets including the quotes:
    "The 'credentials' field is not implemented."

    >>> quoted_message_spans('it throws "no such option: --x" but `run(a b)` works')
    [(10, 31)]
    """
    out = []
    for m in _QUOTED.finditer(query):
        text = m.group(2) or m.group(3)  # not group 1: backticks quote code
        if text and " " in text.strip() and not _IDENT_ONLY.fullmatch(text.strip()):
            out.append(m.span())
    return out


def frame_files(text: str, files: list[str] | tuple[str, ...]) -> list[str]:
    r"""The names among ``files`` (``file_names(text)``) that a pasted trace gives only on its
    stack-frame lines: Python's ``File "…", line N``, or an ``at …`` frame with a file and line.
    A name the reporter also writes elsewhere (prose, a log line) is not one of them.

    >>> frame_files('Bug in loaders.py\n  File "/v/jinja2/environment.py", line 9, in render\n'
    ...             '  File "/v/jinja2/loaders.py", line 3, in get',
    ...             ["loaders.py", "/v/jinja2/environment.py", "/v/jinja2/loaders.py"])
    ['/v/jinja2/environment.py', '/v/jinja2/loaders.py']
    >>> frame_files("    at Axios.request (/app/node_modules/axios/lib/core/Axios.js:45:12)",
    ...             ["/app/node_modules/axios/lib/core/Axios.js"])
    ['/app/node_modules/axios/lib/core/Axios.js']
    """
    elsewhere = set(file_names(_FRAME_LINE.sub("", text)))
    return [f for f in files if f not in elsewhere]


def file_names(query: str) -> list[str]:
    """File names and paths in the question whose extension is a known source/text one."""
    out = []
    for m in _FILE.finditer(query):
        if m.group(2).lower() in FILE_EXTENSIONS:
            out.append(m.group(1).replace("\\", "/"))
    return list(dict.fromkeys(out))


_DEF_KINDS = (
    r"class|struct|trait|interface|enum|type|protocol|module|record|object|function|method|"
    r"macro|constant|variable|typedef|mixin|extension"
)
_DEF_KINDS_THE = _DEF_KINDS.replace("object|", "")
# how a question asks for callers (``asks_callers``; the name after it is ``named``)
_CALLERS_LEAD = (
    r"(?:(?:what|who)\s+(?:calls|uses|invokes)|which\s+\w+\s+(?:call|use|invoke)s?"
    r"|callers?\s+of)"
)
_CALLED = r"\s+(?:called|used|invoked)\b"  # "where is X called?"
_NAMED_PATTERNS = (
    # where is [the] X [kind] defined / declared / implemented
    re.compile(
        rf"\bwhere\s+(?:is|are)\s+(?:the\s+)?([A-Za-z_][\w$]*)\s+(?:(?:{_DEF_KINDS})\s+)?"
        r"(?:defined|declared|implemented)\b",
        re.I,
    ),
    # the X <kind>: "the Table class", "the Body trait" (X capitalised; not "a Command object",
    # which is an instance of it)
    re.compile(rf"\bthe\s+([A-Z][\w$]*)\s+(?:{_DEF_KINDS_THE})\b"),
    # <declaration keyword> X: "class Table", "struct Router", "object Foo" (X capitalised;
    # not "type", "function", "method": in prose they precede any capitalised word)
    re.compile(r"\b(?:class|struct|trait|interface|enum|protocol|mixin|object)\s+([A-Z][\w$]*)\b"),
    # the subject of a callers question: "what calls launch?", "which functions use `flush`",
    # "callers of expire", "where is launch called?" (a plain word there is a name too)
    re.compile(rf"\b{_CALLERS_LEAD}\s+(?:the\s+)?`?([A-Za-z_][\w$]*)`?(?:\(\))?\s*\??\s*$", re.I),
    re.compile(rf"^\s*where\s+(?:is|are)\s+`?([A-Za-z_][\w$]*)`?(?:\(\))?{_CALLED}", re.I),
)


def named_words(text: str) -> tuple[str, ...]:
    """Plain words the phrasing marks as code names though they do not look like identifiers:
    "where is Console defined?", "the Table class", "struct Router" -> Console, Table, Router.
    Their definitions are looked up like an identifier's (``ranking.symbol_names``).

    >>> named_words("Where is the Table class defined?")
    ('Table',)
    >>> named_words("where is the config file read?")
    ()
    >>> named_words("what calls launch?"), named_words("what calls the config loader?")
    (('launch',), ())
    """
    out: dict[str, None] = {}
    for rx in _NAMED_PATTERNS:
        for m in rx.finditer(text):
            word = m.group(1)
            if word.lower() not in STOP_WORDS and word.lower() not in _KIND_WORDS:
                out[word] = None
    return tuple(out)


_WHERE_DEFINED = re.compile(
    rf"^\s*where\s+(?:is|are)\s+(?:the\s+)?`?[A-Za-z_][\w$.:]*`?\s*"
    rf"(?:(?:{_DEF_KINDS})\s*)?(?:(?:defined|declared|implemented)\s*)?\??\s*$",
    re.I,
)


def asks_definition(text: str) -> bool:
    """A question that only asks where a name is defined: "where is Console defined?",
    "Where is the Bridge class?", "where is `parse_args`?" (the definition is the answer).

    >>> [asks_definition(t) for t in ("where is the Bridge class?", "where is X used?")]
    [True, False]
    """
    return _WHERE_DEFINED.match(text) is not None


_CALLERS_Q = re.compile(
    rf"\b{_CALLERS_LEAD}\b"
    # "where is [the] X [kind] called?": X one name, not a description ("where is the warning
    # printed when a deprecated command is invoked?" asks about the warning)
    rf"|\bwhere\s+(?:is|are)\s+(?:the\s+)?`?[\w$.:]+`?(?:\(\))?(?:\s+(?:{_DEF_KINDS}))?{_CALLED}",
    re.I,
)


def asks_callers(question: str) -> bool:
    """ "What calls X?", "who uses X", "which functions call X", "where is X called?",
    "callers of X".

    >>> [asks_callers(q) for q in ("What calls resolve_command?", "How is X called?")]
    [True, False]
    """
    return _CALLERS_Q.search(question) is not None


def only_file_names(text: str, files: list[str] | tuple[str, ...]) -> bool:
    """Whether ``text`` is nothing but the file names / paths ``files`` (and "and", commas).

    >>> only_file_names("lib/adapters/fetch.js", ["lib/adapters/fetch.js"])
    True
    >>> only_file_names("what calls fetch.js?", ["fetch.js"])
    False
    """
    if not files:
        return False
    rest = _FILE.sub(" ", text)
    return not re.search(r"[A-Za-z0-9]", re.sub(r"(?i)\b(?:and|or)\b", " ", rest))


def qualified_name(name: str) -> str:
    """A name as the index writes symbols: ``a::b``, ``a\\b`` and ``a#b`` become ``a.b``."""
    return name.replace("::", ".").replace("\\", ".").replace("#", ".").strip(".")


def bare_symbol(query: str) -> str | None:
    """The name when the whole question is one identifier (plus optional kind words):
    ``Field`` -> Field, ``class Foo::Bar`` -> Foo.Bar, ``resolve()`` -> resolve, ``memoize`` ->
    memoize (one word is looked up as a name), else None — also for a file name, whose
    extension is written in lower case after a dot (``core.py``; ``Kramdown::Converter::Html``
    and ``pydantic.Json`` are names).

    >>> bare_symbol("Kramdown::Converter::Html"), bare_symbol("pydantic.Json")
    ('Kramdown.Converter.Html', 'pydantic.Json')
    >>> bare_symbol("core.py"), bare_symbol("index.html")
    (None, None)
    """
    tokens = query.strip().rstrip("?").split()
    names = [t for t in tokens if t.lower().strip("`") not in _KIND_WORDS] or tokens
    if len(names) != 1 or len(tokens) > 3:
        return None
    m = _BARE.fullmatch(names[0])
    if m is None:
        return None
    name = qualified_name(m.group(1))
    raw = m.group(1)
    ext = raw.rsplit(".", 1)[1] if "." in raw else ""
    if ext in FILE_EXTENSIONS and not re.search(r"::|\\|#", raw):
        return None  # a file name (core.py), not Kramdown::Converter::Html or pydantic.Json
    return name


def kind_hint(query: str) -> str | None:
    """TYPE_HINT or FUNCTION_HINT when a bare-name question says which kind of definition it
    wants, else None (no kind word, or words of both kinds).

    >>> kind_hint("struct ares_query"), kind_hint("fn main"), kind_hint("Field")
    ('type', 'function', None)
    """
    hints = {_HINTS.get(t.lower().strip("`")) for t in query.split()} - {None}
    return hints.pop() if len(hints) == 1 else None


def is_trace(query: str) -> bool:
    """A pasted stack trace, log or issue body rather than a question."""
    if len(query) > TRACE_CHARS or query.count("\n") >= TRACE_LINES:
        return True
    return len(_TRACE_LINE.findall(query)) >= 2


def content_words(query: str) -> list[str]:
    """Lowercase words of the question minus stop words and 1–2 letter words, de-duplicated."""
    out: dict[str, None] = {}
    for m in _WORD.finditer(query):
        w = m.group(0).lower()
        if len(w) > 2 and w not in STOP_WORDS:
            out[w] = None
            variant = american(w)
            if variant:  # "colour" also matches color.py
                out[variant] = None
    return list(out)


def question_tokens(query: str) -> frozenset[str]:
    """Every lowercase word of the question (letters, digits, ``_``), stop words and short
    words included.

    >>> sorted(question_tokens("Where are the v1 docs?"))
    ['are', 'docs', 'the', 'v1', 'where']
    """
    return frozenset(t.lower() for t in re.findall(r"[A-Za-z0-9_]+", query))


def dense_query_text(query: str, idents: list[str] | tuple[str, ...] | None = None) -> str:
    """What the embedding model reads: short queries as they are; long ones (a pasted issue or
    stack trace) as their head plus the informative terms (identifiers, file names)."""
    if len(query) <= DENSE_QUERY_CHARS:
        return query
    names = list(idents) if idents is not None else query_identifiers(query)
    return query[: DENSE_QUERY_CHARS // 2] + "\n" + " ".join(names[:48])


# A line of code in a pasted report that defines a name: the reporter's own code.
_OWN_DEF = re.compile(
    r"^[ \t>]*(?:(?:export|pub|public|private|static|async|default|abstract)\s+)*"
    r"(?:def|class|function|func|fn|struct|interface|trait|enum|module)\s+([A-Za-z_$][\w$]*)",
    re.M,
)
_DUNDER = re.compile(r"__\w+__")


def report_names(text: str, idents: list[str]) -> list[str]:
    r"""The identifiers of a pasted report (kind ``trace``) that may name the project's code:
    not the names the report's own code defines (``def cli():``, ``class Foo:`` in a snippet
    that reproduces the bug; ``Foo.run`` too) and not protocol methods (``__init__``,
    ``__call__`` in a trace's frames), which every class defines.

    >>> report_names("```\nclass Foo:\n    def __init__(self): echo_via_pager(x)\n```",
    ...              ["Foo", "__init__", "Foo.run", "echo_via_pager"])
    ['echo_via_pager']
    """
    own = set(_OWN_DEF.findall(text))

    def theirs(name: str) -> bool:
        parts = name.split(".")
        return parts[0] in own or parts[-1] in own or bool(_DUNDER.fullmatch(parts[-1]))

    return [n for n in idents if not theirs(n)]


TITLE_CHARS = 200  # a first line longer than this is a paragraph, not a title


def report_title(text: str) -> str:
    r"""The title of a pasted report: its first non-blank line, when that is a short line of
    prose (not a trace line, a code fence, a markdown heading or a log line); else "".

    >>> report_title("Link comparison fails to normalise file://localhost/\n\nWhen I ...")
    'Link comparison fails to normalise file://localhost/'
    >>> report_title('Traceback (most recent call last):\n  File "a.py", line 1, in f')
    ''
    """
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if (
        len(line) > TITLE_CHARS
        or _TRACE_LINE.search(line)
        or line.startswith(("```", "~~~", "#", ">", "$", "{", "<"))
        or not _WORD.search(line)
    ):
        return ""
    return line


_FENCED = re.compile(r"^[ \t>]*(```|~~~).*?(^[ \t>]*\1[^\n]*$|\Z)", re.S | re.M)


def report_prose(text: str) -> str:
    r"""A pasted report without its fenced code blocks (the reporter's own code, logs and
    traces between ```` ``` ```` or ``~~~`` lines; an unclosed fence runs to the end).

    >>> report_prose("Query loses brackets\n```python\nBase = declarative_base()\n```\nsee above")
    'Query loses brackets\n\nsee above'
    """
    return _FENCED.sub("", text)


def parse_query(text: str) -> Query:
    """Parse a question once (see the module docstring)."""
    idents = query_identifiers(text)
    bare = bare_symbol(text)
    if bare is not None:
        kind = SYMBOL
    elif is_trace(text):
        kind = TRACE
    else:
        kind = NATURAL
    if kind == TRACE:
        idents = report_names(text, idents)
    phrases = quoted_phrases(text)
    files = file_names(text)
    fts = fts_query(text)
    title = report_title(text) if kind == TRACE else ""
    prose, prose_fts = _prose(text, fts) if kind == TRACE else ("", "")
    scope = question_scope(text, kind, files)
    mentions = scope_mentions(text)
    return Query(
        text=text,
        kind=kind,
        identifiers=tuple(idents),
        symbol=bare,
        phrases=tuple(phrases),
        file_names=tuple(files),
        words=tuple(content_words(text)),
        tokens=question_tokens(text),
        fts=fts,
        dense_text=dense_query_text(text, idents),
        about_tests=scope[0],
        about_docs=scope[1],
        mentions_tests=scope[0] and mentions[0],
        mentions_docs=scope[1] and mentions[1],
        mention_compounds=mentions[2],
        only_files=only_file_names(text, files),
        named=tuple(n for n in named_words(text) if n not in idents and n != bare),
        asks_definition=asks_definition(text),
        asks_callers=asks_callers(text),
        title_words=tuple(content_words(title)),
        title=title,
        prose=prose,
        prose_fts=prose_fts,
        kind_hint=kind_hint(text) if kind == SYMBOL else None,
        frame_files=tuple(frame_files(text, files)) if kind == TRACE else (),
    )


def _prose(text: str, fts: str) -> tuple[str, str]:
    """``(prose, prose_fts)`` of a report with fenced code (empty without fences; the FTS
    query only when it differs from the whole report's ``fts``)."""
    prose = report_prose(text)
    if prose == text or not prose.strip():
        return "", ""
    terms = fts_query(prose)
    return prose[:DENSE_QUERY_CHARS], terms if terms != fts else ""
