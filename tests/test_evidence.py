"""askrepo.evidence: the deterministic, model-free answer. Worked examples on small hits, then
the card on a real index of the fixture repository (tree-sitter, MiniLM, LanceDB)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from askrepo.datatypes import Chunk, Hit
from askrepo.evidence import (
    Graph,
    evidence_card,
    first_sentence,
    key_lines,
    leading_doc,
    question_terms,
    score_candidates,
    signature_of,
    stem,
    term_weights,
    terms_of,
)


def hit(rank, path, start, text, symbol=None, kind="function", calls=()):
    end = start + len(text.split("\n")) - 1
    return Hit(
        rank=rank,
        path=path,
        start_line=start,
        end_line=end,
        symbol=symbol,
        kind=kind,
        language="python",
        score=1.0 / rank,
        sources={"dense": rank, "fts": None},
        expanded_from=None,
        text=text,
        calls=list(calls),
    )


LOOKUP = '''\
def lookup_default(self, name: str, call: bool = True) -> t.Any | None:
    """Get the default for a parameter from :attr:`default_map`.

    :param call: If the default is a callable, call it.
    """
    if self.default_map is not None:
        value = self.default_map.get(name)
        if call and callable(value):
            return value()
        return value
    return None'''

GET_DEFAULT = '''\
def get_default(self, ctx: Context, call: bool = True) -> t.Any | None:
    """Get the default for the parameter."""
    value = ctx.lookup_default(self.name, call=False)
    if value is None:
        value = self.default
    return value'''

CONTEXT = '''\
class Context:
    """The context is a special internal object that holds state."""'''


# ------------------------------------------------------------------------------------------
# terms


def test_stem_meets_inflections_and_derivations():
    # the crude identifiers.stem keeps each of these pairs apart
    assert stem("completion") == stem("complete") == stem("completed")
    assert stem("connection") == stem("connect") and stem("validation") == stem("validate")
    assert stem("retries") == stem("retry") and stem("Indexing") == stem("indexer") == "index"
    assert stem("merged") == stem("merge") == stem("merges") == "merg"
    assert stem("overlapping") == stem("overlaps") == "overlap"
    assert stem("interrupted") == "interrupt"
    assert stem("run") == stem("runs") == stem("running") == "run"


def test_terms_split_identifiers_and_drop_stop_words():
    # "get" is a stop word; words are Snowball-stemmed ("file" stays "file")
    assert terms_of("the lookup_default of getFileContext") == [
        "lookup",
        "default",
        "lookupdefault",
        "file",
        "context",
        "getfilecontext",
    ]


def test_question_terms_drop_question_words_and_duplicates():
    q = "Where is `default_map` read, and where is the default implemented?"
    assert question_terms(q) == ["default", "map", "defaultmap", "read"]
    # what the reader asks of the answer is not a word the code should show
    assert question_terms("Explain how authentication flows work") == ["authent", "flow"]


def test_term_weights_are_idf_over_candidates():
    w = term_weights(["default", "map", "zebra"], ["default map", "default value", "other"])
    assert w["default"] == pytest.approx(math.log(1 + 3 / 2))
    assert w["map"] == pytest.approx(math.log(1 + 3 / 1))
    assert w["zebra"] == 0.0


def test_terms_of_a_when_clause_weigh_half_and_the_behaviour_leads():
    from askrepo.evidence import CLAUSE_FACTOR, clause_terms, lead_candidate, question_weights

    q = "Where are secrets redacted before indexing?"
    assert clause_terms(q) == {"index"}
    assert clause_terms("Where are secrets redacted?") == set()
    assert clause_terms("what runs before the request?") == set()  # one term before it
    redact = hit(1, "secrets.py", 10, "def redact(text):\n    # secrets\n    return text", "redact")
    history = hit(
        2, "history.py", 5, "def index_history(root):\n    return redact(root)", "index_history"
    )
    other = hit(3, "grep.py", 1, "def view(path):\n    return redact(path)", "view")
    cands = [redact, history, other]
    weights, unseen = question_weights(q, cands)
    # IDF over the 3 candidates: secret in 1, redact in 3, index in 1 (then halved)
    assert weights["secret"] == pytest.approx(math.log(1 + 3 / 1))
    assert weights["redact"] == pytest.approx(math.log(1 + 3 / 3))
    assert weights["index"] == pytest.approx(CLAUSE_FACTOR * math.log(1 + 3 / 1))
    assert not unseen
    # the name that holds the when-clause's word gains less over the function that redacts
    plain = dict(weights, index=math.log(1 + 3 / 1))
    a, b, _ = score_candidates(q, cands, weights)
    a0, b0, _ = score_candidates(q, cands, plain)
    assert a - b > a0 - b0
    assert lead_candidate(q, cands) == 0


# ------------------------------------------------------------------------------------------
# reading a definition


def test_signature_of_joins_continuation_lines_and_drops_decorators():
    text = "@cache\ndef f(a,\n      b=1) -> int:\n    return a"
    assert signature_of(text, "f") == "def f(a, b=1) -> int"
    assert signature_of("func Add(a, b int) int {\n\treturn a + b\n}", "Add") == (
        "func Add(a, b int) int"
    )


def test_first_sentence_respects_abbreviations_and_limit():
    assert first_sentence("Open a file.  Lazy when asked.") == "Open a file."
    assert first_sentence("Return it (e.g. a default) for name. More") == (
        "Return it (e.g. a default) for name."
    )
    long = "word " * 80
    out = first_sentence(long, limit=30)
    assert out.endswith("…") and len(out) <= 31


def test_leading_doc_reads_docstrings_and_comments():
    assert leading_doc(LOOKUP, "Context.lookup_default") == (
        "Get the default for a parameter from :attr:`default_map`."
    )
    go = "// Add sums two numbers.\n// Second line.\nfunc Add(a, b int) int {\n\treturn a + b\n}"
    assert leading_doc(go, "Add") == "Add sums two numbers."
    js = "/**\n * Parse the query string.\n * @param {string} q\n */\nfunction parse(q) {}"
    assert leading_doc(js, "parse") == "Parse the query string."
    assert leading_doc('"""Module: storage."""\nimport os', None) == "Module: storage."
    assert leading_doc("def f():\n    return 1", "f") is None
    # Lua's C sources mark every comment line with **; LDoc opens a doc comment with ---
    c = "/*\n** Barrier that moves collector\n** forward.\n*/\nvoid luaC_barrier_ (lua_State *L) {"
    assert leading_doc(c, "luaC_barrier_") == "Barrier that moves collector forward."
    lua = "--- Split a string into a list.\n-- @param s the string\nfunction split(s)\nend"
    assert leading_doc(lua, "split") == "Split a string into a list."
    # a comment opening a braced body is about the next statement, not the function
    go = "func (r *Router) insert(path string) {\n\t// Adjust max param\n\tr.max++\n}"
    assert leading_doc(go, "Router.insert") is None
    # after a Python header, a comment in place of a docstring describes the function
    assert leading_doc("def f():\n    # Compute the total.\n    return 1", "f") == (
        "Compute the total."
    )


def test_key_lines_are_the_lines_with_the_most_weight_in_line_order():
    weights = {"default": 1.0, "map": 2.0, "defaultmap": 3.0, "call": 0.5}
    lines = key_lines(LOOKUP, 727, weights, skip=[727], limit=2)
    # line 732 and 733 both carry default_map (weight 6); 728 is the docstring (weight 6, but
    # a docstring line is not a comment, so it ties); ties go to the earlier line.
    assert lines == [
        (728, '"""Get the default for a parameter from :attr:`default_map`.'),
        (732, "if self.default_map is not None:"),
    ]


# ------------------------------------------------------------------------------------------
# the card


def test_card_picks_the_named_definition_first_and_cites_it():
    hits = [
        hit(1, "src/click/core.py", 2200, GET_DEFAULT, "Parameter.get_default", "method"),
        hit(2, "src/click/core.py", 727, LOOKUP, "Context.lookup_default", "method"),
    ]
    card = evidence_card("Where does `Context.lookup_default` read `default_map`?", hits)
    top = card.sources[0]
    assert (top.n, top.symbol, top.location) == (
        1,
        "Context.lookup_default",
        "src/click/core.py:727-737",
    )
    assert top.signature == "def lookup_default(self, name: str, call: bool = True) -> t.Any | None"
    first = card.text.splitlines()[0]
    assert first.startswith(
        "The best match is `Context.lookup_default`, a method in `src/click/core.py:727-737` [1]."
    )
    assert "   - line 732: `if self.default_map is not None:` [1]" in card.text


def test_card_states_calls_and_method_of_relations_with_both_citations():
    context_chunk = Chunk("src/click/core.py", 160, 161, CONTEXT, "python", "class", "Context")
    hits = [
        hit(1, "src/click/core.py", 727, LOOKUP, "Context.lookup_default", "method"),
        hit(
            2,
            "src/click/core.py",
            2200,
            GET_DEFAULT,
            "Parameter.get_default",
            "method",
            calls=["lookup_default"],
        ),
    ]
    graph = Graph(definitions={"lookup_default": 1}, classes={"Context": [context_chunk]})
    card = evidence_card("How is the default for a parameter looked up?", hits, graph)
    rel = [r.text for r in card.relations]
    sources = {s.symbol: s.n for s in card.sources}
    a, b = sources["Parameter.get_default"], sources["Context.lookup_default"]
    assert (
        f"`Parameter.get_default` (`src/click/core.py:2200-2205`) calls `Context.lookup_default` "
        f"[{a}][{b}]." in rel
    )
    c = sources["Context"]
    assert (
        f"`Context.lookup_default` is a method of class `Context` (`src/click/core.py:160-161`) "
        f"[{b}][{c}]." in rel
    )
    assert "How they connect:" in card.text


def test_a_name_asked_for_gets_what_its_definition_calls():
    send = "def send(message):\n    data = encode(message)\n    return deliver_locked(data)"
    hits = [
        hit(1, "net/send.py", 4, send, "send", calls=["encode", "deliver_locked", "send"]),
        hit(2, "net/batch.py", 1, "def flush(queue):\n    send(queue.pop())", "flush"),
        hit(
            3,
            "net/lock.py",
            6,
            "def deliver_locked(data):\n    return _write(data)",
            "deliver_locked",
        ),
        hit(4, "net/codec.py", 1, "def encode(m):\n    return m.encode()", "encode"),
    ]
    graph = Graph(definitions={"send": 1, "deliver_locked": 1, "encode": 2})
    card = evidence_card("send", hits, graph)
    rel = [r.text for r in card.relations]
    n = {s.symbol: s.n for s in card.sources}
    assert (
        "`send` (`net/send.py:4-6`) calls `deliver_locked` (`net/lock.py:6-7`) "
        f"[{n['send']}][{n['deliver_locked']}]." in rel
    )
    # `encode` is defined twice and send.py does not show which: no statement; a recursive
    # call is none either
    assert not any("calls `encode`" in r or "calls `send` (" in r for r in rel)
    # a question in words describes what it asks about, not the definition's callees
    worded = evidence_card("how is a message sent?", hits, graph)
    assert not any("calls `deliver_locked`" in r.text for r in worded.relations)


def test_card_does_not_state_a_call_edge_for_an_ambiguous_name():
    hits = [
        hit(1, "a.py", 1, "def commit():\n    pass", "commit"),
        hit(2, "b.py", 1, "def run():\n    db.commit()", "run", calls=["commit"]),
    ]
    card = evidence_card("commit run", hits, Graph(definitions={"commit": 3, "run": 1}))
    assert not any("calls `commit`" in r.text for r in card.relations)


def test_card_of_no_hits_is_empty():
    card = evidence_card("anything", [])
    assert card.sources == [] and card.text == ""


def test_card_cites_every_line():
    hits = [
        hit(1, "src/click/core.py", 727, LOOKUP, "Context.lookup_default", "method"),
        hit(2, "src/click/core.py", 2200, GET_DEFAULT, "Parameter.get_default", "method"),
    ]
    card = evidence_card("Where is the default_map read?", hits)
    for line in card.text.splitlines():
        if line.strip() and line.strip() != "How they connect:":
            assert "[1]" in line or "[2]" in line, line


def test_locations_are_code_spans_so_dunder_paths_survive_markdown():
    # `pkg/__init__.py` outside a code span renders as "pkg/init.py" in bold
    hits = [hit(1, "src/pkg/__init__.py", 10, LOOKUP, "lookup_default")]
    card = evidence_card("Where is the default_map read?", hits)
    assert "`src/pkg/__init__.py:10-" in card.text
    assert "__init__" not in card.text.replace("`src/pkg/__init__.py:", "")


def test_card_says_which_question_words_no_retrieved_code_mentions():
    hits = [hit(1, "src/click/core.py", 727, LOOKUP, "Context.lookup_default", "method")]
    card = evidence_card("Where are option defaults loaded from a YAML file?", hits)
    assert card.missing == ["option", "loaded", "YAML"]
    assert "No retrieved code mentions the words: option, loaded, yaml." in card.text.split("\n")[0]


def test_renumber_card_rewrites_every_citation():
    from askrepo.evidence import renumber_card

    hits = [
        hit(1, "src/click/core.py", 727, LOOKUP, "Context.lookup_default", "method"),
        hit(2, "src/click/core.py", 2200, GET_DEFAULT, "Parameter.get_default", "method",
            calls=["lookup_default"]),
    ]  # fmt: skip
    card = evidence_card("How is the default for a parameter looked up?", hits)
    nums = {s.n: s.n + 2 for s in card.sources}
    new = renumber_card(card, nums)
    assert [s.n for s in new.sources] == [s.n + 2 for s in card.sources]
    assert "[1]" not in new.text and "[2]" not in new.text
    assert new.relations[0].citations == [nums[n] for n in card.relations[0].citations]


def test_a_doc_section_is_a_full_answer_to_a_question_about_the_docs():
    from dataclasses import replace

    from askrepo.evidence import WINDOW_FACTOR, score_candidates

    section = replace(
        hit(2, "docs/options.md", 646, "## Values from Environment Variables\nRead options."),
        symbol="Values from Environment Variables",
        kind="section",
        file_class="doc",
    )
    code = hit(
        1,
        "src/core.py",
        10,
        'def value_from_envvar(ctx):\n    """Read the option value from environment variables."""\n'
        "    return read(ctx)",
        symbol="Option.value_from_envvar",
    )
    q = "Where does the documentation explain reading option values from environment variables?"
    weights = term_weights(question_terms(q), [h.text for h in (code, section)])
    about_docs = score_candidates(q, [code, section], weights)
    assert about_docs[1] > about_docs[0]  # the section leads the card
    # the same section for a question not about the docs: WINDOW_FACTOR and the docs penalty
    q2 = "How are option values read from environment variables?"
    w2 = term_weights(question_terms(q2), [h.text for h in (code, section)])
    plain = score_candidates(q2, [code, section], w2)
    assert plain[1] < plain[0]
    assert WINDOW_FACTOR < 1


def test_tests_and_docs_a_question_only_mentions_are_held_back_as_in_retrieval():
    """ "How does the walker decide whether a file is a test, documentation or code?" brings
    tests and docs into the search (``about_docs``) but asks for the code that decides
    (``mentions_tests`` / ``mentions_docs``): a doc section and a test then count
    MENTION_FACTOR of what the same chunk would count as code (retrieval's ``mentions`` stage,
    the same function); a question that asks for the docs keeps the section whole."""
    from askrepo.evidence import score_candidates
    from askrepo.query import parse_query
    from askrepo.ranking import MENTION_FACTOR, mention_factors

    text = "## Classes\nEach file is a test, documentation, config or code file."
    section = replace(
        hit(1, "docs/walk.md", 1, text), symbol="Classes", kind="section", file_class="doc"
    )
    test = replace(
        hit(2, "tests/test_walk.py", 1, "def test_classify():\n    assert kind('a.md') == 'doc'"),
        symbol="test_classify",
        file_class="test",
    )
    code = hit(3, "src/walk.py", 10, "def classify(path):\n    return kind(path)")
    mention = "How does the walker decide whether a file is a test, documentation or code?"
    parsed = parse_query(mention)
    assert parsed.about_docs and parsed.mentions_docs and parsed.mentions_tests
    asks = "Where do the docs explain whether a file is a test, documentation or code?"
    assert parse_query(asks).about_docs and not parse_query(asks).mentions_docs
    as_code = [
        replace(section, file_class="code", kind="function"),
        replace(test, file_class="code"),
    ]
    w = term_weights(question_terms(mention), [section.text, test.text, code.text])
    held = score_candidates(mention, [section, test, code], w)
    whole = score_candidates(mention, [*as_code, code], w)
    assert held[0] == pytest.approx(MENTION_FACTOR * whole[0], abs=1e-5)
    assert held[1] == pytest.approx(MENTION_FACTOR * whole[1], abs=1e-5)
    # asked for: nothing is held back, and the section (no window factor) leads
    assert mention_factors([section, code], parse_query(asks)) == [1.0, 1.0]
    w2 = term_weights(question_terms(asks), [section.text, code.text])
    got = score_candidates(asks, [section, code], w2)
    assert got[0] > got[1]


def test_a_bare_name_keeps_retrievals_order_over_methods_and_namesakes():
    """``Router`` (a symbol query): the retriever already put the type first; the card must
    not prefer its method ``Router.add`` (class header rule) or ``Echo.Router`` (same last part),
    which it does for a natural-language question."""
    hits = [
        hit(
            1,
            "router.go",
            8,
            "type Router struct {\n\troutes map[string]*node\n}",
            "Router",
            "class",
        ),
        hit(
            2,
            "echo.go",
            340,
            "func (e *Echo) Router() *Router {\n\treturn e.router\n}",
            "Echo.Router",
        ),
        hit(
            3,
            "router.go",
            40,
            "func (r *Router) Add(method, path string) {\n\tr.insert(method, path)\n}",
            "Router.Add",
            "method",
        ),
    ]
    scores = score_candidates("Router", hits, {})
    assert scores == [1.0, 0.5, round(1 / 3, 6)]  # W_PRIOR / rank
    card = evidence_card("Router", hits)
    assert card.sources[0].symbol == "Router" and len(card.sources) == 1
    # a question that only asks where it is keeps retrieval's order too
    assert score_candidates("where is the Router struct defined?", hits, {}) == scores
    # the same hits for a question in words: the class-header rule applies again
    nl = score_candidates("how does the Router add a route", hits, {"rout": 1.0, "add": 1.0})
    assert nl[0] < nl[2]


def test_a_class_asked_by_name_shows_the_members_retrieval_placed_after_it():
    """``Router`` (a symbol query) whose type retrieval followed with its largest methods
    (``sources["member"]``, the ``members`` stage): the card describes the type and, up to
    MAX_DEFINITIONS, those methods; a method retrieval did not mark stays out, and without a
    class first the marks do not count."""
    cls = hit(
        1, "router.go", 8, "type Router struct {\n\troutes map[string]*node\n}", "Router", "class"
    )
    add = hit(
        2,
        "router.go",
        40,
        "func (r *Router) Add(m, p string) {\n\tr.insert(m, p)\n}",
        "Router.Add",
        "method",
    )
    find = hit(
        3,
        "router.go",
        60,
        "func (r *Router) Find(m, p string) {\n\tr.lookup(m, p)\n}",
        "Router.Find",
        "method",
    )
    other = hit(
        4,
        "router.go",
        90,
        "func (r *Router) Len() int {\n\treturn len(r.routes)\n}",
        "Router.Len",
        "method",
    )
    add.sources["member"], find.sources["member"] = 1, 2
    card = evidence_card("Router", [cls, add, find, other])
    assert [s.symbol for s in card.sources[:3]] == ["Router", "Router.Add", "Router.Find"]
    assert "Router.Len" not in [s.symbol for s in card.sources[:3]]
    # the same hits with a function first: the marks alone choose nothing
    fn = hit(1, "router.go", 1, "func NewRouter() *Router {\n\treturn &Router{}\n}", "NewRouter")
    card = evidence_card("NewRouter", [fn, add, find])
    assert [s.symbol for s in card.sources if s.role == "definition"] == ["NewRouter"]


LAUNCH = (
    'def launch(url, wait=False):\n    """Open a URL or file in the default application."""\n'
    "    from ._termui_impl import open_url\n\n    return open_url(url, wait=wait)"
)
OPEN_URL = (
    "def open_url(url, wait=False):\n    import subprocess\n\n"
    '    if sys.platform == "darwin":\n        args = ["open", url]\n'
    '    else:\n        args = ["xdg-open", url]\n    return subprocess.call(args)'
)


def test_a_thin_wrapper_hands_the_card_to_the_function_it_calls():
    """``launch`` (body: one return) ranks first and names the question's words in its doc;
    ``open_url``, which it returns, is where launching happens: the card describes it first.
    Without the hand-over the wrapper wins (scores before the swap: launch > open_url)."""
    q = "How does launching a URL in the default application work?"
    hits = [
        hit(1, "termui.py", 840, LAUNCH, "launch", calls=["open_url"]),
        hit(2, "_termui_impl.py", 756, OPEN_URL, "open_url", calls=["call"]),
    ]
    weights = term_weights(question_terms(q), [f"{h.symbol}\n{h.text}" for h in hits])
    scores = score_candidates(q, hits, weights)
    assert scores[1] > scores[0]
    card = evidence_card(q, hits)
    assert card.sources[0].symbol == "open_url"
    # a test calling the same function is not a wrapper of it
    test = replace(hits[0], path="tests/test_termui.py", symbol="test_launch", file_class="test")
    card = evidence_card("How is launching a URL tested?", [test, hits[1]])
    assert card.sources[0].symbol == "test_launch"


def test_a_wrapper_the_question_asks_the_callers_of_keeps_the_card_and_its_callers_lead():
    """ "what calls launch?" is about ``launch`` itself: the thin wrapper does not hand over to
    ``open_url``, and its callers are stated before any other relation (the class-free
    ``launch calls open_url`` comes after them)."""
    hits = [
        hit(1, "termui.py", 840, LAUNCH, "launch", calls=["open_url"]),
        hit(2, "_termui_impl.py", 756, OPEN_URL, "open_url", calls=["call"]),
    ]

    def caller(path, symbol):
        return Chunk(path, 1, 2, f"def {symbol}():\n    launch(URL)", "python", "function", symbol)

    graph = Graph(
        definitions={"launch": 1, "open_url": 1},
        callers={"launch": [caller("cli.py", "open_docs"), caller("web.py", "show")]},
    )
    q = "what calls launch?"
    weights = term_weights(question_terms(q), [f"{h.symbol}\n{h.text}" for h in hits])
    scores = score_candidates(q, hits, weights, graph)
    assert scores[0] > scores[1]  # no swap: the named wrapper keeps its lead
    card = evidence_card(q, hits, graph)
    assert card.sources[0].symbol == "launch"
    stated = [r.text.split(" (")[0] for r in card.relations]
    assert stated[:2] == ["`open_docs`", "`show`"]
    # a question that only names it still hands over (a report naming the public function is
    # usually fixed in the callee)
    q = "launch opens the wrong application on macOS"
    weights = term_weights(question_terms(q), [f"{h.symbol}\n{h.text}" for h in hits])
    assert evidence_card(q, hits, graph).sources[0].symbol == "open_url"


def test_the_callers_stated_are_the_ones_nearest_the_question():
    """``redact`` has three callers in the index, read in store order; the question asks about
    indexing, so ``_chunk_file`` in ``indexer.py`` (path and doc carry "index", "redact") is
    stated before the first two, which say nothing about it."""
    redact = "def redact(text):\n    return _AWS.sub('[REDACTED]', text)"
    hits = [
        hit(1, "secrets.py", 10, redact, "redact"),
        hit(2, "history.py", 5, "def index_history(root):\n    walk(root)", "index_history"),
    ]

    def caller(path, symbol, text):
        return Chunk(path, 1, 3, text, "python", "function", symbol)

    graph = Graph(
        definitions={"redact": 1, "index_history": 1},
        callers={
            "redact": [
                caller("blame.py", "_message", "def _message(m):\n    return redact(m)"),
                caller("gitevals.py", "build_set", "def build_set(c):\n    redact(c)"),
                caller(
                    "indexer.py",
                    "_chunk_file",
                    'def _chunk_file(f):\n    """Read, redact and chunk one file."""\n'
                    "    return chunk(redact(f))",
                ),
            ]
        },
    )
    card = evidence_card("Where are secrets redacted before indexing?", hits, graph)
    stated = [r.text.split(" (")[0] for r in card.relations]
    assert stated[0] == "`_chunk_file`" and len(stated) == 2
    # a question that asks for the callers gets all of them (up to CALLER_ANSWER)
    card = evidence_card("What calls redact?", hits, graph)
    stated = {r.text.split(" (")[0] for r in card.relations if "calls `redact`" in r.text}
    assert stated == {"`_message`", "`build_set`", "`_chunk_file`"}
    # ... and "calls" is how it asks, not a word the code should show
    assert card.missing == [] and "mentions the words" not in card.text


def test_a_docs_question_naming_a_class_is_answered_by_the_section_showing_it():
    """ "What does the documentation show as an example of testing with CliRunner?" names the
    class `CliRunner`: its definition would take the named bonus alone and lead; the section
    whose example uses `CliRunner` is named by the question as much and, being docs, leads.
    A section that does not mention it gets no such bonus."""
    cls = hit(
        1,
        "src/click/testing.py",
        287,
        "class CliRunner:\n    '''Invoke a command.'''",
        "CliRunner",
        "class",
    )
    example = replace(
        hit(
            3,
            "docs/testing.md",
            20,
            "## Basic Example\n```python\nrunner = CliRunner()\nresult = runner.invoke(hello)\n```",
        ),
        symbol="Basic Example",
        kind="section",
        file_class="doc",
    )
    other = replace(example, text="## Basic Example\nUse the test client to run a command.")
    q = "What does the documentation show as an example of testing a command with CliRunner?"
    texts = [h.text for h in (cls, example)]
    scores = score_candidates(q, [cls, example], term_weights(question_terms(q), texts))
    assert scores[1] > scores[0]
    texts = [h.text for h in (cls, other)]
    scores = score_candidates(q, [cls, other], term_weights(question_terms(q), texts))
    assert scores[1] < scores[0]


def test_the_projects_own_name_is_not_a_question_term():
    from askrepo.evidence import project_terms

    assert project_terms("click-8.4.1") == {"click"}
    assert project_terms("capacitor-android") == {"capacitor", "android"}
    assert project_terms(None) == set()
    hits = [
        hit(
            1,
            "src/click/_compat.py",
            500,
            "def should_strip_ansi(stream):\n    return not isatty(stream)",
            "should_strip_ansi",
        )
    ]
    q = "How does Click decide whether ANSI codes are stripped from a stream?"
    # no candidate says "click": without the project's name the card reports it as missing
    assert evidence_card(q, hits).missing == ["Click", "decide"]
    card = evidence_card(q, hits, project="click-8.4.1")
    assert card.missing == ["decide"]
    assert "words: decide." in card.text


SOCKET_CTOR = (
    "/**\n * @param bool $persistent Keep the socket connection open between writes\n */\n"
    "public function __construct(string $connectionString, bool $persistent = false,\n"
    "    int $retries = 3)\n{\n    $this->connectionString = $connectionString;\n"
    "    $this->persistent = $persistent;\n    $this->retries = $retries;\n}"
)
SOCKET_WRITE = (
    "private function writeToSocket(string $data): void\n{\n    $length = strlen($data);\n"
    "    $sent = 0;  // retry partial writes until all is sent\n"
    "    while ($this->isConnected() && $sent < $length) {\n"
    "        $chunk = $this->fwrite(substr($data, $sent));\n        $sent += $chunk;\n    }\n}"
)


def test_a_constructor_yields_to_another_method(monkeypatch):
    """Worked numbers: with no term weights and no similarity a hit scores ``W_PRIOR / rank``;
    the constructor (rank 1: 1.0) has another method among the candidates, so it scores
    1.0 x CONSTRUCTOR_FACTOR = 0.6, still above the method's 0.5 — the factor alone does not
    reorder. With the question's words, which the constructor's parameters and doc carry too,
    the constructor scores 2.338 and the method 1.524; the factor makes that 1.403 < 1.524."""
    from askrepo import evidence
    from askrepo.evidence import CONSTRUCTOR_FACTOR

    ctor = hit(1, "src/SocketHandler.php", 50, SOCKET_CTOR, "SocketHandler.__construct", "method")
    write = hit(
        2, "src/SocketHandler.php", 395, SOCKET_WRITE, "SocketHandler.writeToSocket", "method"
    )
    assert score_candidates("how does it work", [ctor, write], {}) == [
        round(1.0 * CONSTRUCTOR_FACTOR, 6),
        0.5,
    ]
    q = "keep a persistent socket connection open and retry partial writes"
    texts = [f"{h.symbol}\n{h.text}" for h in (ctor, write)]
    weights = term_weights(question_terms(q), texts)
    scores = score_candidates(q, [ctor, write], weights)
    assert scores == [1.403098, 1.523706]  # 2.338496 x 0.6 for the constructor
    assert evidence_card(q, [ctor, write]).sources[0].symbol == "SocketHandler.writeToSocket"
    monkeypatch.setattr(evidence, "CONSTRUCTOR_FACTOR", 1.0)  # without the rule: the constructor
    assert evidence_card(q, [ctor, write]).sources[0].symbol == "SocketHandler.__construct"
    # without another function or method among the candidates it is not touched ...
    header = hit(2, "src/SocketHandler.php", 20, "class SocketHandler {", "SocketHandler", "class")
    # (the class header, whose method is a candidate, gets CLASS_FACTOR: 0.5 x 0.6)
    assert score_candidates("how does it work", [ctor, header], {}) == [1.0, 0.3]
    # ... nor when the question names it
    named = score_candidates("what does SocketHandler.__construct set?", [ctor, write], {})
    assert named[0] == 4.0  # W_NAMED + W_PRIOR / 1, no factor


def test_a_near_tie_in_retrieval_lets_the_better_described_hit_lead():
    """The card's prior is half 1/rank, half the hit's retrieval score as a share of the
    first's (``retrieval_prior``). Worked numbers, term weights pars 1.0, token 0.5 (total 1.5):
    ``alpha`` covers pars (body 1/1.5 = 0.667), ``beta`` pars + token (body 1.0).
    Scores 0.032 / 0.031 (a near-tie): priors 1.0 and 0.5/2 + 0.5·0.031/0.032 = 0.734,
    so alpha 0.667 + 1.0 = 1.667 < beta 1.0 + 0.734 = 1.734. Scores 1.0 / 0.5 (rank 2 far
    behind): priors 1.0 and 0.5, alpha 1.667 > beta 1.5 — retrieval's order holds."""
    a = hit(1, "a.py", 1, "def alpha(x):\n    y = x + 1\n    return parse(y)", "alpha")
    b = hit(2, "b.py", 1, "def beta(x):\n    y = x + 1\n    return parse_token(y)", "beta")
    weights = {"pars": 1.0, "token": 0.5}
    q = "how is a token parsed"
    tied = [replace(a, score=0.032), replace(b, score=0.031)]
    assert score_candidates(q, tied, weights) == [1.666667, 1.734375]
    apart = [replace(a, score=1.0), replace(b, score=0.5)]
    assert score_candidates(q, apart, weights) == [1.666667, 1.5]


def test_a_constructor_split_in_parts_is_not_its_own_sibling():
    """Two chunks of one long ``__init__`` (the second a later part, same symbol) are not
    "another method": scores stay W_PRIOR / rank (1.0, 0.5)."""
    first = hit(1, "h.py", 10, "def __init__(self, a):\n    self.a = a", "H.__init__", "method")
    later = hit(2, "h.py", 60, "    self.b = 2\n    self.c = 3", "H.__init__", "method")
    assert score_candidates("how does it work", [first, later], {}) == [1.0, 0.5]


def test_a_class_yields_to_a_function_unless_the_question_names_it(monkeypatch):
    """A class declaration holds no behaviour of its own: with a function or method among the
    candidates, a class the question does not name gets CLASS_FACTOR even when none of its own
    methods is a candidate. Worked numbers (no term weights, no similarity, W_PRIOR / rank):
    the class at rank 1 scores 1.0 x 0.6 = 0.6 and the function at rank 2 keeps 0.5. With
    term weights sourc 0.5, file 0.5, classifi 1.0 (total 2.0), ``SourceFile`` covers half of
    them in its name, head and body: 1.5 x 0.5 + 0.5 + 0.5 + prior 1.0 = 2.75, and
    ``classify`` the other half: 0.75 + 0.5 + 0.5 + 0.5 = 2.25; the factor makes the class
    1.65 < 2.25."""
    from askrepo.evidence import CLASS_FACTOR

    record = hit(1, "askrepo/datatypes.py", 35, SOURCE_FILE, "SourceFile", "class")
    fn = hit(2, "askrepo/ingest.py", 80, CLASSIFY, "classify")
    assert score_candidates("how does it work", [record, fn], {}) == [
        round(1.0 * CLASS_FACTOR, 6),
        0.5,
    ]
    q = "how is a source file classified as a test or documentation"
    weights = {"sourc": 0.5, "file": 0.5, "classifi": 1.0}
    assert score_candidates(q, [record, fn], weights) == [1.65, 2.25]
    assert evidence_card(q, [record, fn]).sources[0].symbol == "classify"
    from askrepo import evidence

    monkeypatch.setattr(evidence, "CLASS_FACTOR", 1.0)  # without the rule: the class leads
    assert score_candidates(q, [record, fn], weights) == [2.75, 2.25]
    monkeypatch.setattr(evidence, "CLASS_FACTOR", CLASS_FACTOR)
    # a class with no function or method beside it keeps its score ...
    other = hit(2, "askrepo/datatypes.py", 60, "class Chunk:\n    path: str", "Chunk", "class")
    assert score_candidates("how does it work", [record, other], {}) == [1.0, 0.5]
    # ... and so does a class the question names (none of its methods is a candidate)
    assert score_candidates("what does SourceFile hold?", [record, fn], {}) == [4.0, 0.5]


SOURCE_FILE = (
    "@dataclass(frozen=True)\nclass SourceFile:\n"
    '    """A file to index: its path and its class (code, test, doc or config)."""\n'
    "    path: str\n    file_class: str"
)
CLASSIFY = (
    "def classify(path):\n    if is_test(path):\n        return TEST\n"
    "    return DOC if is_doc(path) else CODE"
)


def test_key_lines_skip_pieces_of_a_multi_line_signature():
    """A line of a multi-line header that only opens or closes a bracket
    (``include_tests: Annotated[``) is not a key line; a whole parameter line is, and so is
    a body line."""
    text = (
        "def search(\n"
        "    query: str,\n"
        "    include_tests: Annotated[\n"
        "        bool, Option(help='search the tests too')\n"
        "    ] = False,\n"
        "    tests_only: bool = False,\n"
        ") -> None:\n"
        "    scope = 'tests' if include_tests else 'code'\n"
    )
    h = hit(1, "cli.py", 10, text, "search")
    card = evidence_card("how are the tests included in a search?", [h])
    lines = dict(card.sources[0].lines)
    assert 12 not in lines  # "include_tests: Annotated[" (a piece of a bracket)
    assert 17 in lines  # the body line that uses it
    assert lines.get(15) == "tests_only: bool = False,"  # a whole parameter


def test_key_lines_do_not_repeat_header_lines_the_signature_shows():
    """The card shows the header as the signature; its lines are not key lines again, unless
    the signature was cut short before them (the test above)."""
    text = (
        "fn connection_for(\n"
        "    &self,\n"
        "    pool_key: PoolKey,\n"
        ") -> Result<Pooled, ConnectError> {\n"
        "    let pooled = self.pool.checkout(pool_key);\n"
        "    pooled.map_err(ConnectError::Checkout)\n"
        "}\n"
    )
    h = hit(1, "client.rs", 335, text, "Client.connection_for", "method")
    card = evidence_card("how is a pooled connection checked out for a pool key?", [h])
    src = card.sources[0]
    assert src.signature == (
        "fn connection_for(&self, pool_key: PoolKey) -> Result<Pooled, ConnectError>"
    )
    lines = dict(src.lines)
    assert 337 not in lines and 338 not in lines  # shown in the signature
    assert lines.get(339) == "let pooled = self.pool.checkout(pool_key);"


def test_key_lines_skip_example_code_written_into_the_docs():
    """A rustdoc example (the fenced block, its hidden ``# use`` lines) and a doctest show how
    the code is called, not what it does: no key lines, though they hold the question's words;
    the doc's prose and the body's code still are."""
    text = (
        "    /// Multiple values per key are kept in insertion order.\n"
        "    ///\n"
        "    /// ```\n"
        "    /// # use http::HeaderMap;\n"
        "    /// let mut map = HeaderMap::new();\n"
        "    /// map.append(header::HOST, value);\n"
        "    /// ```\n"
        "    pub fn append(&mut self, key: HeaderName, value: T) -> bool {\n"
        "        self.append_value(key, value, ExtraValues::Insert)\n"
        "    }\n"
    )
    h = hit(1, "src/header/map.rs", 1200, text, "HeaderMap.append", "method")
    card = evidence_card("how are multiple values appended to a header map key?", [h])
    lines = dict(card.sources[0].lines)
    assert not set(lines) & {1202, 1203, 1204, 1205, 1206}  # the fenced example
    assert 1208 in lines  # the body line

    doc = (
        "def add_value(headers, key, value):\n"
        '    """Append a value to a header key.\n'
        "\n"
        "    >>> add_value(headers, 'key', 'value')\n"
        '    """\n'
        "    headers.setdefault(key, []).append(value)\n"
    )
    card = evidence_card("how is a value appended to a header key?", [hit(1, "h.py", 1, doc)])
    lines = dict(card.sources[0].lines)
    assert 4 not in lines and 6 in lines  # the doctest line out, the code line in


def test_methods_of_one_class_are_stated_once():
    context_chunk = Chunk("src/click/core.py", 160, 161, CONTEXT, "python", "class", "Context")
    lookup_value = LOOKUP.replace("def lookup_default", "def lookup_value")
    hits = [
        hit(1, "src/click/core.py", 727, LOOKUP, "Context.lookup_default", "method"),
        hit(2, "src/click/core.py", 740, lookup_value, "Context.lookup_value", "method"),
    ]
    graph = Graph(
        definitions={"lookup_default": 1, "lookup_value": 1}, classes={"Context": [context_chunk]}
    )
    card = evidence_card("How does the context look up a default value?", hits, graph)
    sources = {s.symbol: s.n for s in card.sources}
    a, b, c = (
        sources["Context.lookup_default"],
        sources["Context.lookup_value"],
        sources["Context"],
    )
    members = [r.text for r in card.relations if "of class" in r.text]
    assert members == [
        "`Context.lookup_default` and `Context.lookup_value` are methods of class `Context` "
        f"(`src/click/core.py:160-161`) [{a}][{b}][{c}]."
    ]


def test_a_call_by_an_ambiguous_name_is_stated_only_when_the_code_shows_it():
    """``create`` is defined twice; ``bcrypt`` calls ``HmacSha512.create`` and ``strHash``
    calls ``CryptFormatHasher.create``, all in one file: only the second edge is true."""
    create = "fn create(password: []const u8) []u8 {\n    return hash(password);\n}"
    bcrypt = "pub fn bcrypt(password: []const u8) []u8 {\n    HmacSha512.create(&pre, password);\n}"
    str_hash = (
        "pub fn strHash(password: []const u8) []u8 {\n"
        "    return CryptFormatHasher.create(password);\n}"
    )
    hits = [
        hit(1, "bcrypt.zig", 708, create, "CryptFormatHasher.create", "method"),
        hit(2, "bcrypt.zig", 461, bcrypt, "bcrypt", calls=["create"]),
        hit(3, "bcrypt.zig", 759, str_hash, "strHash", calls=["create"]),
    ]
    graph = Graph(definitions={"create": 2, "bcrypt": 1, "strHash": 1})
    question = "How do `CryptFormatHasher.create`, `bcrypt` and `strHash` hash a password?"
    card = evidence_card(question, hits, graph)
    assert len(card.sources) == 3
    rel = " ".join(r.text for r in card.relations)
    assert "`strHash` (`bcrypt.zig:759-761`) calls `CryptFormatHasher.create`" in rel
    assert "`bcrypt` (`bcrypt.zig:461-463`) calls" not in rel


def test_a_bare_name_several_definitions_share_describes_each_and_says_where():
    """hyper's `Builder`: three structs of that name, the second and third far below the
    first in the card's score; a bare name asks for all of them, and the lead tells them apart
    by location."""
    hits = [
        hit(
            1,
            "src/server/server.rs",
            42,
            "pub struct Builder<I> {\n    incoming: I,\n}",
            "Builder",
            "class",
        ),
        hit(
            2,
            "src/server/server.rs",
            60,
            "impl<I> Builder<I> {\n    pub fn new() {}\n}",
            None,
            "window",
        ),
        hit(
            3,
            "src/server/server.rs",
            80,
            "pub fn http1_only(self) -> Self {\n    self\n}",
            "Builder.http1_only",
            "method",
        ),
        hit(
            4,
            "src/client/conn.rs",
            148,
            "pub struct Builder {\n    exec: Exec,\n}",
            "Builder",
            "class",
        ),
        hit(
            5,
            "src/client/client.rs",
            874,
            "pub struct Builder {\n    pool: Config,\n}",
            "Builder",
            "class",
        ),
    ]
    card = evidence_card("Builder", hits)
    described = [(s.path, s.symbol) for s in card.sources if s.role == "definition"]
    assert described == [
        ("src/server/server.rs", "Builder"),
        ("src/client/conn.rs", "Builder"),
        ("src/client/client.rs", "Builder"),
    ]
    assert card.text.startswith(
        "The best match is `Builder`, a class in `src/server/server.rs:42-44` [1]. Also "
        "relevant: `Builder` (`src/client/conn.rs:148-150`) [2], `Builder` "
        "(`src/client/client.rs:874-876`) [3]."
    )


def test_callers_of_a_name_defined_more_than_once_are_stated_when_their_code_shows_it():
    """``create`` is defined twice; the card states "D calls Hasher.create" only for callers
    whose code shows that call is this one: through ``Hasher.`` (from another file only when
    no other class is named ``Hasher``), or on its own object from a method of ``Hasher`` —
    not ``mac.create(``, and not, with a second ``Hasher`` elsewhere (zig-crypto's three
    ``PhcFormatHasher`` structs), ``Hasher.create(`` from another file."""
    b = hit(
        1, "a.zig", 10, "pub fn create(seed: u32) Hasher {\n    return .{};\n}", "Hasher.create"
    )
    b = replace(b, kind="method")

    def caller(path, symbol, body):
        return Chunk(
            path,
            1,
            2,
            f"fn {symbol.split('.')[-1]}() void {{\n    {body}\n}}",
            "zig",
            "function",
            symbol,
        )

    callers = [
        caller("b.zig", "strHash", "_ = Hasher.create(1);"),
        caller("c.zig", "anyHash", "_ = mac.create(1);"),
        caller("a.zig", "Hasher.rehash", "_ = self.create(2);"),
    ]

    def stated(defs):
        graph = Graph(definitions=defs, callers={"Hasher.create": callers})
        card = evidence_card("what calls Hasher.create?", [b], graph)
        return {r.text.split(" (")[0] for r in card.relations if "calls `Hasher.create`" in r.text}

    assert stated({"create": 2, "Hasher": 1}) == {"`strHash`", "`Hasher.rehash`"}
    assert stated({"create": 2, "Hasher": 2}) == {"`Hasher.rehash`"}  # same file only
    # a name defined once: every caller the index has
    assert stated({"create": 1}) == {"`strHash`", "`anyHash`", "`Hasher.rehash`"}
    # none shows it (create defined 5 times; only `mac.create(`): the card says so and where
    # the calls are, rather than listing none without a word
    graph = Graph(definitions={"create": 5, "Hasher": 1}, callers={"Hasher.create": callers[1:2]})
    card = evidence_card("what calls Hasher.create?", [b], graph)
    assert not [r for r in card.relations if "calls `Hasher.create`" in r.text]
    note = (
        "`create` is defined 5 times, and no call of it shows which definition it reaches; "
        "`askrepo callers create` lists every call."
    )
    assert card.notes == [note] and note in card.text.split("\n")[0]
    # a caller stated: no such note
    graph = Graph(definitions={"create": 5, "Hasher": 1}, callers={"Hasher.create": callers})
    assert evidence_card("what calls Hasher.create?", [b], graph).notes == []


def test_a_callers_question_describes_only_the_definitions_it_names():
    """ "what calls Context.invoke?": ``Command.invoke`` scores close (same name, same words)
    but is not what was asked about; overloads of ``Context.invoke`` are, and their class is
    stated once."""
    ctx_text = "def invoke(self, callback, *args):\n    return callback(*args)"
    hits = [
        replace(hit(1, "core.py", 823, ctx_text, "Context.invoke"), kind="method"),
        replace(hit(2, "core.py", 1294, ctx_text, "Command.invoke"), kind="method"),
        replace(hit(3, "core.py", 815, ctx_text, "Context.invoke"), kind="method"),
    ]
    context = Chunk("core.py", 202, 304, "class Context:\n    pass", "python", "class", "Context")
    graph = Graph(definitions={"invoke": 3}, classes={"Context": [context]})
    card = evidence_card("what calls Context.invoke?", hits, graph)
    assert [s.symbol for s in card.sources if s.role != "related"][:2] == [
        "Context.invoke",
        "Context.invoke",
    ]
    assert "Command.invoke" not in card.text
    assert "`Context.invoke` is a method of class `Context`" in card.text
    # without the callers question, the close runner-up is described too
    card = evidence_card("how is a callback invoked?", hits, graph)
    assert "Command.invoke" in card.text


def test_a_long_definition_is_one_source_and_one_caller():
    """Windows of one long definition (``send`` 108-167 and 158-221: same file and symbol,
    overlapping lines) are described once; a caller found in three windows is stated once,
    and no source is listed that the card does not cite."""
    head = "def send(q):\n" + "    step(q)\n" * 59
    tail = "    step(q)\n" * 10 + "    return finish(q)\n" * 54
    hits = [
        hit(1, "send.py", 108, head.rstrip("\n"), "send"),
        hit(2, "send.py", 158, tail.rstrip("\n"), "send"),
    ]
    assert (hits[0].end_line, hits[1].end_line) == (167, 221)

    def window(start, end):
        return Chunk("process.py", start, end, "def requeue(q):\n    send(q)", "python",
                     "function", "requeue")  # fmt: skip

    graph = Graph(
        definitions={"send": 1},
        callers={"send": [window(1617, 1804), window(1667, 1725), window(1717, 1775)]},
    )
    card = evidence_card("how is a query sent?", hits, graph)
    assert [(s.symbol, s.start_line) for s in card.sources if s.role != "related"] == [
        ("send", 108)
    ]
    stated = [r.text for r in card.relations if "calls `send`" in r.text]
    assert len(stated) == 1 and stated[0].startswith("`requeue` (`process.py:1617-1804`)")
    cited = {n for r in card.relations for n in r.citations} | {card.sources[0].n}
    assert {s.n for s in card.sources} <= cited


def test_a_method_belongs_to_the_class_of_its_own_file_and_overloads_do_not_call_each_other():
    """Two structs named ``Client`` (hyper's client and its HTTP/1 role): ``Client.set_length``
    in role.rs is a method of role.rs's ``Client``. A method in foo-inl.h belongs to the one
    class ``foo`` of foo.h. ``resolve()`` calling its overload ``resolve(value)`` is not
    stated."""
    role = Chunk("src/proto/h1/role.rs", 115, 116, "pub(crate) enum Client {}", "rust", "class",
                 "Client")  # fmt: skip
    other = Chunk("src/client/client.rs", 24, 34, "pub struct Client<C, B> {", "rust", "class",
                  "Client")  # fmt: skip
    sink = Chunk("include/sink.h", 18, 51, "class sink {", "cpp", "class", "sink")
    graph = Graph(
        definitions={"set_length": 1, "sink_it_": 1, "resolve": 2, "sink": 2},
        classes={"Client": [other, role], "sink": [sink]},
    )

    def relations(h):
        return " ".join(r.text for r in evidence_card("how is it done?", [h], graph).relations)

    rel = relations(
        hit(
            1,
            "src/proto/h1/role.rs",
            900,
            "fn set_length(head: &mut Head) {\n    x()\n}",
            "Client.set_length",
            "method",
        )  # fmt: skip
    )
    assert "is a method of class `Client` (`src/proto/h1/role.rs:115-116`)" in rel
    assert "client/client.rs" not in rel
    rel = relations(
        hit(
            1,
            "include/sink-inl.h",
            40,
            "void sink::sink_it_(msg m) {\n    write(m);\n}",
            "sink.sink_it_",
            "method",
        )  # fmt: skip
    )
    assert "is a method of class `sink` (`include/sink.h:18-51`)" in rel
    overloads = [
        hit(
            1,
            "Promise.kt",
            16,
            "fun resolve() = resolve(null)",
            "Promise.resolve",
            "method",
            calls=["resolve"],
        ),  # fmt: skip
        hit(2, "Promise.kt", 18, "fun resolve(result: Double)", "Promise.resolve", "method"),
    ]
    card = evidence_card("how is a promise resolved?", overloads, graph)
    assert not any("calls `Promise.resolve`" in r.text for r in card.relations)


def test_a_caller_that_is_another_window_of_a_described_definition_cites_it():
    """``index_history`` is described (lines 242-351); its window 342-401 calls ``redact``:
    the statement cites that source, and no new source is listed for the other window."""
    from askrepo.evidence import Source, _source_for

    described = Source(n=1, path="history.py", start_line=242, end_line=351,
                       symbol="index_history", kind="function")  # fmt: skip
    sources = [described]
    window = Chunk("history.py", 342, 401, "    n = redact(msg)", "python", "function",
                   "index_history")  # fmt: skip
    assert _source_for(window, sources) is described and len(sources) == 1
    other = Chunk("history.py", 420, 430, "def walk(root):", "python", "function", "walk")
    assert _source_for(other, sources).n == 2 and len(sources) == 2


def test_the_card_ends_with_the_retrieved_definitions_it_does_not_cite():
    """A facade leads (it says "retry" most); the retry future's ``poll`` that does the work is
    named under "See also", in retrieval order, at most 3, never a window, never something a
    line above already cites (a class that holds the lead, another window of a definition)."""
    q = "how does the retry middleware decide whether a request is retried?"
    hits = [
        hit(
            1,
            "src/builder/mod.rs",
            243,
            "pub fn retry(self, policy: P) -> Self {\n"
            "    // retry middleware: decide whether a request is retried\n"
            "    self.layer(RetryLayer::new(policy))\n}",
            "ServiceBuilder.retry",
            "method",
        ),
        hit(2, "src/builder/mod.rs", 240, "/// retry\n", None, "window"),
        hit(
            3,
            "src/retry/future.rs",
            71,
            "fn poll(self) {\n    policy.retry(req)\n}",
            "ResponseFuture.poll",
            "method",
        ),
        hit(
            4,
            "src/retry/mod.rs",
            17,
            "pub struct Retry<P, S> {\n    policy: P,\n}",
            "Retry",
            "class",
        ),
        hit(
            5,
            "src/builder/mod.rs",
            243,
            "pub fn retry(self, policy: P) -> Self {\n}",
            "ServiceBuilder.retry",
            "method",
        ),
        hit(
            6,
            "src/retry/layer.rs",
            4,
            "pub struct RetryLayer<P> {\n    policy: P,\n}",
            "RetryLayer",
            "class",
        ),
        hit(
            7,
            "src/retry/budget.rs",
            55,
            "fn new() -> Budget {\n    Budget {}\n}",
            "Budget.new",
            "method",
        ),
    ]
    card = evidence_card(q, hits)
    assert card.sources[0].symbol == "ServiceBuilder.retry"
    see = [(s.n, s.symbol) for s in card.sources if s.role == "see_also"]
    assert [sym for _, sym in see] == ["ResponseFuture.poll", "Retry", "RetryLayer"]
    first = see[0][0]
    assert card.text.endswith(
        f"See also: `ResponseFuture.poll` (`src/retry/future.rs:71-73`) [{first}], "
        f"`Retry` (`src/retry/mod.rs:17-19`) [{first + 1}], "
        f"`RetryLayer` (`src/retry/layer.rs:4-6`) [{first + 2}]."
    )
    # a bare name or "where is X defined?" is answered by its definition alone
    for q in ("ServiceBuilder.retry", "where is ServiceBuilder.retry defined?"):
        card = evidence_card(q, hits)
        assert all(s.role != "see_also" for s in card.sources) and "See also" not in card.text


def test_card_does_not_say_the_code_lacks_filler_words():
    """Words that qualify the question ("actually", "around") are not what it asks about: the
    card names only the topic words no retrieved code mentions."""
    hits = [hit(1, "src/click/core.py", 727, LOOKUP, "Context.lookup_default", "method")]
    card = evidence_card("Where are YAML defaults actually loaded around startup?", hits)
    assert card.missing == ["YAML", "loaded", "startup"]
    assert "actually" not in card.text.split("\n")[0]
