"""Ranking stages: pure functions over candidate lists, read off one parsed ``Query``.

``retriever.py`` fetches candidates (dense, FTS, definitions by symbol) and fuses them by RRF;
the stages here decide the weights of that fusion and then re-score the fused list. Each stage
has a name; ``SearchOptions.disabled`` (and an ``askrepo eval`` config such as
``hybrid+scope-priors``) switches it off, so each one's worth is measured by ablation:

* ``adaptive``: fusion weights by query kind (``fusion_weights``).
* ``defs``: for symbol queries, definitions of the name first, best definition first
  (``definition_key``; the best PINNED_DEFINITIONS are pinned above everything, ``pin_first``);
  a bare word such as ``Field`` counts as a name, in either first-letter case.
* ``infile``: for a natural-language question, every chunk of the best-ranked file
  (``best_files``) joins the fusion as one more list, ordered by its dense similarity to the
  question: the right file is found far more often than the right chunk in it, and a chunk
  that neither dense nor FTS put in their global top-N can still win inside its file.
* ``feedback``: for a natural-language question, the words that best describe the first
  FEEDBACK_DOCS fused candidates (``lexical.feedback_terms``: shared by them, rare in the
  index, not the question's own) make a second full-text query, FEEDBACK_TERMS words, whose
  list joins the fusion at FEEDBACK_WEIGHT (the retriever's wiring; pseudo-relevance
  feedback). A question names the behaviour in its words (``strip closing hashes``), the
  code in its own (``chop_trailing_hashtags``, ``rtrim``): the first hits, right or nearly
  right, know the code's words, and the second list finds the other chunks that use them.
* ``pathwords``: a natural-language query word matching a file's stem or directory raises that
  file's chunks (``path_word_factor``).
* ``coherence``: a file with several strong candidates raises its chunks (``coherence_factors``).
* ``length``: for a natural-language question (and, below its pinned definition, a symbol
  query's other candidates: a class's substantial methods before its getters) a chunk scores
  ``(lines / LENGTH_REF) **
  LENGTH_BETA`` times more (``length_factor``; ``code_lines``, not counting blank lines,
  comments and docstrings, capped at LENGTH_CAP). Both retrievers
  are biased against long chunks (BM25 normalises by length; the embedding model reads only
  the first 256 tokens), while the code that implements a behaviour is usually a substantial
  function, not a getter or a declaration that shares its words. A definition the question
  names (``names_definition``) is never demoted; a line window (a module header, a table of
  constants) is never lifted.
* ``header``: for a natural-language question a code or test file's header window (a line window
  that starts at line 1: module doc, imports, constants) scores HEADER_FACTOR: it says what the file
  is about, while the question asks for the code that does it (``infile`` brings that in).
* ``priors``: legacy / compat / vendored / example directories and re-export files are demoted
  unless the query names them, and code under a docs directory (``docs_src/``) unless the
  question is about docs or examples (``path_prior``); so are tests inside code files unless the
  question is about tests (``symbol_prior``), and platform variants (``src/win/``,
  ``*_darwin.c``, ``init_qnx``) unless the question names a platform (``platform_prior``), and
  a C/C++ header window that only lists declarations (``declaration_prior``), a Python
  window that is mostly documentation passed as arguments (``signature_docs_prior``) and a
  Python ``@overload`` stub (``overload_prior``), a method declared without a body or whose
  body only says it is not implemented (``bodyless_prior``), a setter that only stores values
  in fields, for a question in words (``setter_prior``); for a pasted report, an issue or
  pull-request template (``is_report_form``: the report filled it in).
* ``classes``: for a natural-language question, a class the question does not name scores
  CLASS_DEMOTION when a function or method is a candidate too (``class_factors``). ``ask``
  retrieves its card's candidates without it: the card has its own class rule.
* ``trivial``: a window that is only comments, blank lines or imports, or only a Rust
  ``impl`` block's head (``impl_header``), ranks below every non-trivial candidate
  (``is_trivial``).
* ``delegate``: for a natural-language question, a thin wrapper (``body_lines`` ≤ THIN_BODY)
  among the top DELEGATE_POOL that calls a longer candidate below it (``wrapper_callee``)
  has that callee moved just above it: ``launch(url)`` returning ``open_url(url)`` says where
  to look, ``open_url`` is the code that does it (``delegate``).
* ``namefield``: the full-text list weighs a chunk's name (its symbol's words) as a field of
  its own, NAME_WEIGHT times its body (BM25F, ``askrepo.lexical``); off, the same engine scores
  plain BM25 over the whole text (an index without ``askrepo.lexical``'s files uses LanceDB's
  BM25 either way).
* ``deepdense``: a natural-language question's dense list is read DENSE_DEPTH times as deep
  in a hybrid search (``list_depth``), like its full-text list (``deepfts``).
* ``prose``: a pasted report with fenced code is searched a second time by its prose alone,
  on both sides: a full-text list (``Query.prose_fts``, weighted PROSE_WEIGHT) and a dense one
  (``Query.prose``) (the retriever's wiring).
* ``title``: a pasted report's title (``Query.title``: its first line, when that is prose) is
  a dense query of its own, weighted like the report's (the retriever's wiring): a short
  sentence naming the problem is what the embedding model reads best.
* ``evidence``: for a natural-language question or a pasted report, among the top
  EVIDENCE_POOL chunks of the first hit's file, the one the evidence card would describe first
  (``evidence.lead_candidate``: the question's terms, IDF-weighted over those candidates, in
  its name, its signature + doc and its text, with retrieval's rank as the prior) moves to the
  top; the rest keep their order (``evidence_lead``).
* ``neighbours``: for a symbol query, below its first pinned definition, the chunks of that
  definition's file and the definitions it calls score NEIGHBOUR_FACTOR times more
  (``neighbours``): after ``ares_send`` come ``ares_send_nolock``, which it calls, and its own
  file's helpers, not another file's function that mentions the name.
* ``members``: for a symbol query whose first definition is a class (struct, trait,
  module …), its MEMBER_LEAD largest direct members, by lines of code, follow it
  (``member_lead``, placed by ``follow_first``), fetched from its file whether retrieval found
  them or not: after ``Thor::Shell::Basic`` come ``print_table``, ``file_collision`` and
  ``ask``, not ``quiet?`` and ``stdout``. Public members come before private helpers
  (``is_private``: after ``HeaderMap`` its ``pub fn insert``, not its ``fn remove_found``).
* ``saturation``: the i-th chunk of one file counts ``SATURATION**i`` of its score
  (``saturate``) instead of the old hard cap of 3 chunks per file.
* ``tail``: that decay spreads only the first SATURATION_HEAD places over files; below them
  the hits follow their own scores, so more chunks of a strong file come before weak chunks
  elsewhere (``saturation_head``; symbol queries decay throughout). The file ranking
  (``search --files``, FILE_RANKING_OFF) aggregates chunks decayed throughout, as before.
* ``testvotes``: file ranking only (``search --files``): the test chunks that match the query
  (a second search with tests in scope) vote for the files they test, by name
  (``files.vote_by_tests``: ``test_network_auth.py`` for ``network/auth.py``).
* ``frames``: the files a pasted report names join the fusion as one more list (weight
  ``fusion_weights``' named files), except those it names only in a stack trace's frames
  (``named_files``; ``Query.frame_files``): a trace shows where an error passed — the entry
  point the reporter called (``environment.py``'s ``render``), the command runner — far more
  often than the file to change.

Candidates are ``Hit`` objects (anything with ``path``, ``kind``, ``symbol``, ``text``,
``score``); the functions return new lists and never mutate their input.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from copy import copy
from dataclasses import replace
from functools import lru_cache
from typing import Any

from .datatypes import CODE, CONFIG, DOC, NON_DEFINITION_KINDS, TEST, last_part, symbol_matches
from .declarations import is_bodyless, not_implemented
from .identifiers import split_identifier, stem
from .ingest import is_doc_dir
from .query import FUNCTION_HINT, NATURAL, SYMBOL, TRACE, TYPE_HINT, Query

STAGES = (
    "adaptive",
    "namefield",
    "deepfts",
    "deepdense",
    "prose",
    "title",
    "defs",
    "infile",
    "feedback",
    "pathwords",
    "coherence",
    "length",
    "header",
    "priors",
    "trivial",
    "mentions",
    "classes",
    "windows",
    "saturation",
    "tail",
    "delegate",
    "neighbours",
    "members",
    "evidence",
    "testvotes",
    "frames",
)

# Chunk kinds that are not definitions (line windows of code, plain text, doc sections).

# (dense, fts, mentions, named files, definitions) weights of the fusion, per query kind.
# ``definitions``: the list of definitions of the names the question uses
# (``order_definitions``). In a question, a name is what it asks about, so its definition
# outranks anything dense + FTS agree on (10). A pasted issue names a dozen things (the API
# the reporter called, the frames of a trace): none of them is the question, and their
# definitions are one list among equals (1). On 117 real issue texts of click, jinja, werkzeug
# and rich (eval/bugs/, benchmarks/bench_bugs.py) the first file is right 52% -> 67%.
FUSION = {
    SYMBOL: (0.5, 1.0, 1.0, 1.0, 10.0),
    NATURAL: (1.0, 1.0, 1.0, 1.0, 10.0),
    TRACE: (0.5, 1.0, 1.0, 2.0, 1.0),
}
# -adaptive: every list counts the same, definitions 10 (as before issue 12)
FLAT_FUSION = (1.0, 1.0, 1.0, 0.0, 10.0)

PATH_STEM_BOOST = 1.08  # the query words name the file (its stem, or every part of it)
PATH_DIR_BOOST = 1.04  # the query words name one of its directories
COHERENCE = 0.15  # at most +15 % for a file whose other candidates are as strong as the best
COHERENCE_POOL = 30  # only the top candidates count as evidence
PRIOR_LEGACY = 0.7  # v1/, compat/, legacy/, deprecated/, vendored copies, examples, benchmarks
PRIOR_REEXPORT = 0.8  # __init__.py, index.ts barrels, package-info.java, .d.ts/.pyi stubs
PRIOR_DOC_CODE = 0.7  # code under docs/, doc/, docs_src/, docs-examples/ …: the docs' examples
PRIOR_INLINE_TEST = 0.5  # a test inside a code file (Rust `mod tests`, `test_*` functions)
PRIOR_PLATFORM = 0.8  # a Windows / macOS / QNX … variant, for a question naming no platform
PRIOR_DECLARATIONS = 0.8  # a C/C++ header window that is a list of declarations (prototypes)
DECLARATION_SHARE = 0.3  # of its code lines are function declarations for a window to be a list
PRIOR_SIGNATURE_DOCS = 0.5  # a Python chunk that is mostly documentation passed as arguments
SIGNATURE_DOC_SHARE = 0.5  # of its non-blank lines inside multi-line strings given to a call
PRIOR_OVERLOAD = 0.5  # a Python @overload stub: a type signature, the implementation is elsewhere
PRIOR_BODYLESS = 0.5  # a trait's / interface's method declared without a body: ditto
PRIOR_SETTER = 0.7  # a method that only stores values in fields, for a question in words
PRIOR_GENERATED = 0.7  # a file whose header says it was generated (re2c, fiat-crypto, bundles)
PRIOR_FORM = 0.5  # an issue / pull-request template, for a pasted report (written in that form)
PRIOR_CONFIG = 0.7  # the repository's own config (pyproject.toml, tox.ini), for a pasted report
TRIVIAL_FACTOR = 0.5
PINNED_DEFINITIONS = 3  # a symbol query's best definitions are placed first, in this number
INFILE_FILES = 1  # the best file's chunks join the fusion (more files measured worse)
INFILE_WEIGHT = 0.25  # RRF weight of that list (a quarter of the dense or FTS list)
FEEDBACK_DOCS = 3  # the first fused candidates whose words make the feedback query
FEEDBACK_TERMS = 20  # words in it (10 / 20 / 30 measured: 20 best on both dev sets)
FEEDBACK_DEPTH = 50  # hits read from its full-text list
FEEDBACK_WEIGHT = 0.25  # RRF weight of its full-text list (docs/eval.md, session 41)
LENGTH_BETA = 0.1  # 5 lines x0.87, 20 lines x1.0, 100 lines x1.17, 200+ lines x1.26
LENGTH_REF = 20
LENGTH_CAP = 200
HEADER_FACTOR = 0.8  # a file's header window, for a natural-language question
SATURATION = 0.95  # the second chunk of a file counts 0.95 of its score, the third 0.9025, ...
SATURATION_HEAD = 5  # ... for the first five places; below them, score order (the tail stage)
# stages the chunk pool of a file ranking runs without (search --files, eval +files,
# --from-git): with ``tail`` on, 274 bug reports lost 3 first files (docs/eval.md, session 34)
FILE_RANKING_OFF = ("tail",)
# a class the question does not name, when functions or methods are candidates too: a
# declaration holds no behaviour (dev nDCG@10 0.746 -> 0.751; docs/eval.md, session 12)
CLASS_DEMOTION = 0.9
WINDOW_DEMOTION = 0.9  # a line window of code, for a question in words (eval.md, session 28)
MENTION_FACTOR = 0.5  # a test / doc chunk when the question only mentions tests / docs
THIN_BODY = 3  # a function whose body has at most this many code lines is a thin wrapper
DELEGATE_POOL = 10  # the delegate stage looks at this many top candidates
MEMBER_LEAD = 4  # a symbol query for a class: its largest members follow it (member_lead)
NEIGHBOUR_FACTOR = 1.5  # after a symbol query's definition: its file's chunks and its callees


def fusion_weights(q: Query, enabled: bool = True) -> tuple[float, float, float, float, float]:
    """(dense, fts, mentions, named files, definitions) RRF weights for this kind of query."""
    return FUSION[q.kind] if enabled else FLAT_FUSION


# How deep the full-text list is read, as a multiple of the dense list's depth, per query kind.
# RRF gives a chunk at full-text rank 75 (1/135) nearly half of what rank 2 gets (1/62); cut at
# 50, a chunk that is first in the dense list but 75th in the full-text one loses to chunks
# that are in both lists at poor ranks. A natural-language question's words are few and
# spread over many chunks, so its full-text list is read twice as deep (dev nDCG@10 +0.003,
# hit@5 4 gained / 0 lost). A pasted report's full-text query is long and noisy: deeper lists
# lost two first files on the bug reports, so traces (and symbol queries, which the
# definitions decide) keep the dense list's depth.
FTS_DEPTH = {SYMBOL: 1, NATURAL: 2, TRACE: 1}

# How deep the dense list is read, as a multiple of ``n``, per query kind (hybrid search). A
# natural-language question's answer is often a chunk the embedding model ranks 50th-100th
# whose words the full-text list also finds: read only 50 deep, it enters the fusion through
# one list. Dev nDCG@10 0.751 -> 0.755 (docs/eval.md, session 12); a symbol query's
# definitions are pinned and a report's lists are many, so theirs stay.
DENSE_DEPTH = {SYMBOL: 1, NATURAL: 2, TRACE: 1}

# A pasted report's prose alone (its fenced code removed: ``Query.prose`` / ``prose_fts``)
# is a second query on both sides, beside the whole report: a full-text list weighted
# PROSE_WEIGHT (like the report's own) and a dense list weighted like the report's dense one.
# The reporter's code matches usage examples and docstrings full of the same calls (an ORM
# model, a template); the prose names the behaviour. Either can carry the answer (in a
# template engine the reporter's template is the bug), so all lists count. Bug reports, six
# projects: file Acc@5 0.833 -> 0.884, Acc@1 0.566 -> 0.591 (docs/eval.md, session 11).
PROSE_WEIGHT = 1.0


def list_depth(q: Query, n: int, side: str, enabled: bool = True) -> int:
    """How many candidates the ``side`` list (``"dense"`` or ``"fts"``) reads when the search
    reads ``n`` per list: ``n`` times DENSE_DEPTH / FTS_DEPTH of the query's kind (the
    ``deepdense`` / ``deepfts`` stages; ``enabled=False``: ``n``).

    >>> from askrepo.query import parse_query
    >>> question, name = parse_query("how are handlers combined?"), parse_query("Logger")
    >>> list_depth(question, 50, "fts"), list_depth(name, 50, "dense")
    (100, 50)
    """
    if not enabled:
        return n
    return n * (DENSE_DEPTH if side == "dense" else FTS_DEPTH)[q.kind]


def _path_parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..")]


def named_files(q: Query, frames: bool = True) -> tuple[str, ...]:
    """The file names of ``q`` whose files join the fusion as a list of their own: all of them,
    or (``frames``, the stage on) not those a pasted trace gives only in its stack frames.

    >>> from askrepo.query import parse_query
    >>> q = parse_query('Crash in loaders.py\\n\\nTraceback (most recent call last):\\n'
    ...                 '  File "/v/jinja2/environment.py", line 9, in render\\n    x()\\n')
    >>> named_files(q), named_files(q, frames=False)
    (('loaders.py',), ('loaders.py', '/v/jinja2/environment.py'))
    """
    if not frames or not q.frame_files:
        return q.file_names
    return tuple(f for f in q.file_names if f not in q.frame_files)


def named_paths(named: str, paths: Iterable[str]) -> list[str]:
    """The indexed ``paths`` a file name or path from the question names (``core.py``,
    ``click/core.py``, a trace's ``/home/u/.venv/.../site-packages/click/core.py``): those
    that agree with it on the most trailing path parts. The file name must agree, and the
    parent directory too when both have one (so a trace's ``.../werkzeug/debug/__init__.py``
    is not every ``__init__.py``, and ``.../flask/app.py`` is not ``examples/app.py``); a bare
    name names every file of that name. One rule for a question that is only file names and
    for the files of a pasted trace.

    >>> named_paths("core.py", ["src/click/core.py", "src/click/types.py"])
    ['src/click/core.py']
    >>> named_paths("a/src/index.ts", ["packages/a/src/index.ts", "packages/b/src/index.ts"])
    ['packages/a/src/index.ts']
    """
    want = _path_parts(named)
    if not want:
        return []
    best, out = 0, []
    for path in paths:
        if not path.endswith(want[-1]):
            continue
        have = path.split("/")
        n = 0
        while n < min(len(want), len(have)) and want[-1 - n] == have[-1 - n]:
            n += 1
        if n == 0 or (n == 1 and len(want) > 1 and len(have) > 1) or n < best:
            continue
        if n > best:
            best, out = n, []
        out.append(path)
    return out


def best_files(paths_in_rank_order: Sequence[str], n: int | None = None) -> list[str]:
    """The first ``n`` (INFILE_FILES) distinct paths of a ranked list of chunk paths."""
    n = INFILE_FILES if n is None else n
    return list(dict.fromkeys(paths_in_rank_order))[: max(n, 0)]


_CODE_LINES: dict[int, int] = {}  # hash of a chunk's text -> its code lines
_CODE_LINES_MAX = 1 << 15  # ints only (a search's texts are new strings each time)


def code_lines(text: str) -> int:
    """Lines that are code: not blank, not a comment (``_COMMENT``), not inside a Python
    docstring. A setter under ten lines of doc comment is three lines of code.

    A docstring opens on a line that starts with triple quotes (string prefixes allowed) and
    closes on the first later line holding the same quotes, wherever they are on it (a
    last line of words that ends with the quotes). Remembered by the text's hash: every
    search asks again for each of its ~150 candidates."""
    key = hash(text)
    n = _CODE_LINES.get(key)
    if n is None:
        if len(_CODE_LINES) >= _CODE_LINES_MAX:
            _CODE_LINES.clear()
        n = _CODE_LINES[key] = _count(_code(text.splitlines()), None)
    return n


def _code(lines: Iterable[str]) -> Iterator[str]:
    """The code lines of ``lines`` (``code_lines``), lazily."""
    return (line for _, line in code_line_indices(lines))


def code_line_indices(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(index, line) of each code line of ``lines`` (``code_lines``), lazily."""
    quote = ""  # the open docstring's delimiter, if any
    for i, line in enumerate(lines):
        s = line.strip()
        if quote:
            if quote in s:
                quote = ""
            continue
        if not s:
            continue
        # the regular expressions only for lines that can match them (most lines cannot)
        opened = _DOC_OPEN.match(s) if ('"""' in s[:5] or "'''" in s[:5]) else None
        if opened:
            q = opened.group(1)
            if q not in s[opened.end() :]:
                quote = q
            continue
        if s[0] not in _COMMENT_STARTS or not _COMMENT.match(line):
            yield i, line


def _count(lines: Iterable[str], limit: int | None) -> int:
    """How many ``lines``; with ``limit``, counting stops at ``limit + 1``."""
    n = 0
    for _ in lines:
        n += 1
        if limit is not None and n > limit:
            break
    return n


def definition_line(lines: Sequence[str], symbol: str | None) -> int:
    """Index of the line that defines ``symbol`` (first code line naming it), else of the first
    line that is neither blank, a comment nor a decorator; 0 if none."""
    name = last_part(symbol)
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])") if name else None
    fallback = None
    for i, line in enumerate(lines):
        if not line.strip() or LEAD_COMMENT.match(line) or DECORATOR.match(line):
            continue
        if fallback is None:
            fallback = i
        if pattern is None or pattern.search(line):
            return i
    return fallback or 0


def body_lines(text: str, symbol: str | None, limit: int | None = None) -> int:
    """Code lines of a definition's body: after its signature (up to the first line from the
    definition line on that ends with ``:``, ``{`` or ``=>``; a one-line definition has none),
    not counting blank, comment and docstring lines (``code_lines``), local imports or a
    closing ``}`` / ``end``. ``def launch(url):`` + an import + ``return open_url(url)`` -> 1.
    With ``limit``, counting stops at ``limit + 1`` (the thin-wrapper rules only need to know
    whether a body is longer than THIN_BODY)."""
    lines = text.splitlines()
    start = definition_line(lines, symbol)
    end = next(
        (j for j in range(start, len(lines)) if lines[j].rstrip().endswith((":", "{", "=>"))),
        start,
    )
    code = _code(lines[end + 1 :])
    body = (ln for ln in code if ln.strip() not in _BLOCK_END and not _IMPORT.match(ln))
    return _count(body, limit)


def wrapper_callee(
    hits: Sequence[Any],
    i: int,
    among: Iterable[int],
    lengths: Sequence[int],
    resolves: Callable[[Any, Any], bool],
    named: Collection[str] = (),
) -> int | None:
    """The index (from ``among``, in that order) of the candidate the thin wrapper ``hits[i]``
    hands over to, or None: ``hits[i]`` is a function or method whose body has at most
    THIN_BODY code lines (``lengths``: ``body_lines`` of each hit) and calls (``.calls``, bare
    names) the candidate, a definition of the same file class with a longer body;
    ``resolves(a, b)`` says whether ``a``'s call of that name can only mean ``b``. A wrapper
    in ``named`` keeps its place: the names of a question that asks for their callers
    (``Query.asks_callers``) — "what calls normalizeFlagName?" is about the wrapper, not the
    ``GetNormalizeFunc`` it calls. A bug report that names a wrapper ("formToJSON pollutes
    Object.prototype") is usually fixed in the callee, so there it still hands over."""
    a = hits[i]
    calls = set(getattr(a, "calls", None) or [])
    if a.kind not in ("function", "method") or not calls or lengths[i] > THIN_BODY:
        return None
    if names_symbol(named, a.symbol):
        return None
    for j in among:
        b = hits[j]
        if j == i or b.kind not in _KIND_RANK or not b.symbol or lengths[j] <= lengths[i]:
            continue
        if getattr(b, "file_class", CODE) != getattr(a, "file_class", CODE):
            continue
        if last_part(b.symbol) in calls and resolves(a, b):
            return j
    return None


EVIDENCE_POOL = 8  # candidates the evidence card reads (evidence.CANDIDATES)


def evidence_lead(
    hits: Sequence[Any], q: Query, project: str | None = None, pool: int = EVIDENCE_POOL
) -> list[Any]:
    """Within the first hit's file, the chunk the evidence card would describe first
    (``evidence.lead_candidate`` over that file's chunks among the top ``pool``) moves to the
    top with the first's score and ``sources["evidence"]`` = the rank it came from (for
    ``--explain``); every other hit keeps its order, so the first *file* never changes. A
    symbol query and "where is X defined?" keep retrieval's order (the ``defs`` pins decide).

    Letting the card pick across files as well raised chunk hit@1 but lost file hit@1 (600
    commit messages: 23 lost / 15 gained); within the file it is a gain on every set
    (docs/eval.md).
    """
    from .evidence import lead_candidate

    if q.kind == SYMBOL or q.asks_definition:
        return list(hits)
    top = [i for i, h in enumerate(hits[:pool]) if h.path == hits[0].path]
    if len(top) < 2:
        return list(hits)
    j = lead_candidate(q.text, [hits[i] for i in top], project, q, pool)
    i = top[j]
    if i <= 0:
        return list(hits)
    out = list(hits)
    moved = out.pop(i)
    out.insert(0, replace(moved, score=out[0].score, sources={**moved.sources, "evidence": i + 1}))
    return out


def delegate(
    hits: Sequence[Any], pool: int | None = None, named: Collection[str] = ()
) -> list[Any]:
    """Within the top ``pool`` (DELEGATE_POOL), move the callee of each thin wrapper
    (``wrapper_callee``, a candidate ranked below it) to just above the wrapper, with the
    wrapper's score and ``sources["delegate"]`` = the rank it came from (for ``--explain``); the
    rest keep their order. A callee's name must be unique in the pool or
    defined in the wrapper's file. Each hit moves or is moved at most once: after a move the
    scan goes on below the wrapper, and only hits below the scan are looked at. A wrapper in
    ``named`` (the names of a question asking for their callers) stays where it is."""
    out = list(hits)
    n = min(DELEGATE_POOL if pool is None else pool, len(out))
    counts: dict[str, int] = {}
    for h in out[:n]:
        name = last_part(h.symbol)
        counts[name] = counts.get(name, 0) + 1

    def resolves(a: Any, b: Any) -> bool:
        return counts.get(last_part(b.symbol)) == 1 or a.path == b.path

    lengths = [body_lines(h.text, h.symbol, THIN_BODY) for h in out[:n]]
    i = 0
    while i < n:
        j = wrapper_callee(out, i, range(i + 1, n), lengths, resolves, named)
        if j is not None:
            moved = out.pop(j)
            sources = {**moved.sources, "delegate": j + 1}
            out.insert(i, replace(moved, score=out[i].score, sources=sources))
            lengths.insert(i, lengths.pop(j))
            i += 1  # the wrapper, now below its callee
        i += 1
    return out


def length_factor(lines: int, named: bool = False) -> float:
    """``(min(max(lines, 1), LENGTH_CAP) / LENGTH_REF) ** LENGTH_BETA``: 20 lines -> 1.0,
    5 -> 0.871, 100 -> 1.175, 200 and more -> 1.259. A definition the question names
    (``named``: "how does a session expire" and ``SessionStore.expire``) is never demoted
    for being short: its name is specific evidence, not a shared word."""
    f = (min(max(lines, 1), LENGTH_CAP) / LENGTH_REF) ** LENGTH_BETA
    return max(f, 1.0) if named else f


def is_header(h: Any) -> bool:
    """A code or test file's header window: a line window (not a definition) starting at
    line 1. A config file's first window is its content, not a header, and is never one."""
    return (
        h.kind == "window" and h.start_line == 1 and getattr(h, "file_class", CODE) in (CODE, TEST)
    )


def _length_for(h: Any, q: Query) -> float:
    """The length stage's factor for one hit: ``length_factor`` of its code lines; a line
    window (module header, constants) is never lifted, only a definition is."""
    f = length_factor(code_lines(h.text))
    if f < 1.0 and names_definition(q.words, h.symbol):  # only a demotion asks the name
        f = 1.0
    return min(f, 1.0) if h.kind in NON_DEFINITION_KINDS else f


def names_definition(words: Sequence[str], symbol: str | None) -> bool:
    """``_names_definition``, cached per (words, symbol): every search asks it of ~100
    candidates, and the same chunks come back for the next question."""
    return _names_definition(tuple(words), symbol)


@lru_cache(maxsize=1 << 14)
def _names_definition(words: tuple[str, ...], symbol: str | None) -> bool:
    """Whether the question's words name this definition: the last part of its symbol whole,
    or every part of a compound name, matched by ``words_match`` or the same ``stem``
    (expire -> SessionStore.expire; passwords hashed -> hash_password)."""
    if not symbol:
        return False
    whole, parts = _name_parts(re.split(r"[.:#]+", symbol)[-1])
    stems, normed = _word_forms(words)

    def said(name: str) -> bool:
        if stem(name) in stems:
            return True
        n = _norm(name)
        return any(_same_word(w, n) for w in normed)

    if len(whole) >= 3 and said(whole):
        return True
    return len(parts) >= 2 and all(said(p) for p in parts)


# ---------------------------------------------------------------------------------------------
# Paths


_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _norm(word: str) -> str:
    """Lowercase, crude singular: dependencies -> dependency, configs -> config, class stays."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


@lru_cache(maxsize=1 << 16)
def words_match(a: str, b: str) -> bool:
    """Same word after ``_norm``, or one a prefix of the other with the shorter ≥ 5 letters
    (config ~ configuration, dependency ~ dependencies, form !~ format)."""
    return _same_word(_norm(a), _norm(b))


def _same_word(a: str, b: str) -> bool:
    """``words_match`` of two words already through ``_norm``."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 5 and long_.startswith(short)


@lru_cache(maxsize=256)
def _word_forms(words: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """A question's words as stems and through ``_norm``, computed once per question."""
    return frozenset(stem(w) for w in words), tuple(_norm(w) for w in words)


def _name_parts(name: str) -> tuple[str, list[str]]:
    """``api_router`` -> (api_router, [api, router]); ``HttpClient`` -> (httpclient, [http,
    client]); parts shorter than 3 letters are dropped."""
    whole = name.lower().strip("_-. ")
    parts = [p.lower() for p in _CAMEL_PART.findall(name)]
    return whole, [p for p in parts if len(p) >= 3]


def names_file(words: Sequence[str], name: str) -> bool:
    """Whether the query words name ``name`` (a file stem or a directory): one word matches it
    whole (config -> config, dependency -> dependencies), or every part of a compound name is
    matched by some word (rate limiter -> rate_limiter; status code !-> HttpStatusCode)."""
    whole, parts = _name_parts(name)
    if len(whole) >= 3 and any(words_match(w, whole) for w in words):
        return True
    return len(parts) >= 2 and all(any(words_match(w, p) for w in words) for p in parts)


def split_path(path: str) -> tuple[str, list[str]]:
    """(stem, directories): ``src/deps/api_router.test.ts`` -> (api_router, [src, deps])."""
    segs = path.split("/")
    base = segs[-1]
    stem = base.split(".", 1)[0] if not base.startswith(".") else base
    return stem, segs[:-1]


_GENERIC_STEMS = frozenset({"index", "main", "mod", "lib", "init", "__init__", "__main__", "app"})
# Words about code itself, not its domain: "the same file", "which function" name no file.
_META_WORDS = frozenset(
    """
    file files code function functions method methods class classes module modules package
    packages source sources line lines program project repo repository library thing things
    """.split()
)


def path_word_factor(path: str, words: Sequence[str]) -> float:
    """``_path_word_factor``, cached per (path, words)."""
    return _path_word_factor(path, tuple(words))


@lru_cache(maxsize=1 << 14)
def _path_word_factor(path: str, words: tuple[str, ...]) -> float:
    """PATH_STEM_BOOST when the words name the file stem, PATH_DIR_BOOST when they name one of
    its directories (``names_file``), else 1. ``config`` -> config.py; ``dependency`` ->
    dependencies/. Words about code itself ("the same file", "which function") never count."""
    words = [w for w in words if w not in _META_WORDS]
    if not words:
        return 1.0
    stem, dirs = split_path(path)
    if stem.lower() not in _GENERIC_STEMS and names_file(words, stem):
        return PATH_STEM_BOOST
    if any(names_file(words, d) for d in dirs):
        return PATH_DIR_BOOST
    return 1.0


# declaration stubs: TypeScript's for ES, CommonJS and ES modules, Python's type stubs
_STUB_SUFFIXES = (".d.ts", ".d.cts", ".d.mts", ".pyi")
_EXAMPLE_WORDS = frozenset("example examples sample samples demo demos".split())
_LEGACY_DIRS = (
    frozenset(
        """
        v1 compat legacy deprecated vendor vendored third_party thirdparty third-party 3rdparty
        bundled single_include external extern deps
        """.split()
    )
    | _EXAMPLE_WORDS
)
# names that are a vendored copy in a C / C++ tree (cereal's include/cereal/external/) but a
# module of the package itself inside a Python package (sympy/external/, setuptools/extern/,
# imported as ``sympy.external``); Python projects vendor into _vendor/, vendored/, third_party/
_PACKAGE_MODULE_DIRS = frozenset(("external", "extern", "deps", "bundled"))
# a benchmark harness: a directory (benches/, benchmarks/, asv_bench/) or a file named so
# (benchmark.zig, bench_parser.py, parse_bench.rs); a question using one of the words keeps it
_BENCH_WORDS = frozenset("bench benches benchmark benchmarks".split())
_BENCH_DIRS = _BENCH_WORDS | {"asv_bench"}
_BENCH_QUERY_WORDS = _BENCH_WORDS | {"benchmarking", "benchmarked"}


@lru_cache(maxsize=1 << 12)  # path_prior asks for every directory of every candidate
def _example_words(name: str) -> frozenset[str]:
    """The example word a compound directory name starts or ends with: ``example-expo`` ->
    {"example"}, ``basic_demo`` -> {"demo"}; ``examples`` alone is in ``_LEGACY_DIRS``, and
    ``exemplary`` or ``sampler`` are not examples."""
    words = [w for w in re.split(r"[-_.]+", name) if w]
    if len(words) < 2:
        return frozenset()
    return frozenset(w for w in (words[0], words[-1]) if w in _EXAMPLE_WORDS)


def is_benchmark(stem: str, names: Collection[str]) -> bool:
    """A benchmark's file: under a directory named for benchmarks (``names``: its directory
    names, lower case, leading ``_`` dropped, as ``path_prior`` reads them), or with ``bench``
    / ``benchmark`` as the first or last word of its name (``benchmark.zig``,
    ``bench_parser.py``, ``parse-bench.js``; not ``verifybench.rs`` or ``workbench.py``)."""
    if set(names) & _BENCH_DIRS:
        return True
    words = [w for w in re.split(r"[_\-]+", stem.lower()) if w]
    return bool(words) and (words[0] in _BENCH_WORDS or words[-1] in _BENCH_WORDS)


_BARREL_LINE = re.compile(
    r"^\s*(export\s+(\*|\{[^}]*\}|type\s+\{[^}]*\})\s*(as\s+\w+\s+)?from\b|export\s+\{[^}]*\}\s*;?\s*$|"
    r"import\b|from\s+\S+\s+import\b|pub\s+use\b|pub\s+mod\b|mod\s+\w+\s*;|__all__|"
    r"module\.exports\s*=\s*require|export\s+default\s+\w+\s*;?\s*$)"
)


# words of a question about documentation or examples: code under a docs directory keeps its place
_DOC_QUERY_WORDS = frozenset(
    "doc docs documentation documented tutorial tutorials example examples sample".split()
)


def is_barrel(text: str) -> bool:
    """At least 60 % of the non-blank, non-comment lines re-export or import."""
    lines = [ln for ln in text.split("\n") if ln.strip() and not _COMMENT.match(ln)]
    if not lines:
        return False
    return sum(1 for ln in lines if _BARREL_LINE.match(ln)) >= 0.6 * len(lines)


_TEST_SEGMENT = re.compile(r"(?:^|\.)(?:tests?|test_\w*)(?:\.|$)")


def symbol_prior(symbol: str | None, q: Query) -> float:
    """PRIOR_INLINE_TEST for a test that lives in a code file (``tests.test_decoder`` in a Rust
    ``mod tests``, a ``test_*`` function), unless the question is about tests."""
    if not symbol or q.about_tests or not _TEST_SEGMENT.search(symbol):
        return 1.0
    return PRIOR_INLINE_TEST


# Platforms other than the default one a question means: a file, directory or function named
# for one of them is a variant (``ares_sysconfig_win.c``, ``src/win/``,
# ``ares_init_sysconfig_qnx``). "win" counts in a directory or file name, "mac" only as a whole
# directory (``mac`` is a message authentication code in crypto code), "windows" not in a
# function's name (askrepo's ``_windows`` are line windows); Linux, Unix and POSIX are the
# default.
_PLATFORMS = frozenset(
    """
    win32 win64 windows winrt wince macos macosx osx darwin apple android qnx riscos haiku aix
    solaris sunos illumos cygwin mingw msvc os2 os390 zos vms beos amiga freebsd netbsd
    openbsd dragonfly hurd emscripten wasi
    """.split()
)
_PLATFORM_DIRS = _PLATFORMS | {"win", "mac"}


@lru_cache(maxsize=256)
def _names_platform(question: str) -> bool:
    """Whether the question names any platform (once per question, not per candidate)."""
    asked = {t.lower() for t in re.findall(r"[A-Za-z0-9]+", question)}
    return bool(asked & _PLATFORM_DIRS or asked & {"linux", "unix", "posix", "macintosh", "ios"})


def platform_prior(path: str, symbol: str | None, q: Query) -> float:
    """PRIOR_PLATFORM when the candidate's directory, file name or function name names a
    platform variant (``_PLATFORMS``) and the question names no platform at all.

    >>> from .query import parse_query
    >>> q = parse_query("how are the nameservers read from the system configuration?")
    >>> platform_prior("src/lib/ares_sysconfig_win.c", "get_DNS_Windows", q)
    0.8
    >>> platform_prior("askrepo/chunker.py", "_windows", q)
    1.0
    >>> platform_prior("src/lib/ares_sysconfig.c", "ares_init_sysconfig_qnx", q)
    0.8
    >>> platform_prior("std/crypto/poly1305.zig", "Poly1305.mac", q)
    1.0
    >>> platform_prior("src/lib/ares_sysconfig_win.c", "get_DNS_Windows",
    ...                parse_query("how are nameservers read on Windows?"))
    1.0
    """
    if _names_platform(q.text):
        return 1.0
    return PRIOR_PLATFORM if _platform_variant(path, symbol) else 1.0


@lru_cache(maxsize=1 << 15)  # keyed by (path, symbol): small keys, every search asks again
def _platform_variant(path: str, symbol: str | None) -> bool:
    """Whether a candidate's directory, file name or function name names a platform variant
    (``platform_prior``)."""
    stem, dirs = split_path(path)
    if {d.lower() for d in dirs} & _PLATFORM_DIRS:
        return True
    if {w.lower() for w in re.split(r"[_\-.]+", stem)} & (_PLATFORMS | {"win"}):
        return True
    last = last_part(symbol)
    words = {w.lower() for w in re.split(r"[_\-.]+", last)} | set(split_identifier(last))
    return bool(words & (_PLATFORMS - {"windows"}))


def path_prior(path: str, text: str, q: Query) -> float:
    """Demotion factor of a candidate's path (1 = none).

    PRIOR_LEGACY for a directory named v1, compat, legacy, deprecated, vendor(ed), third_party
    (third-party, 3rdparty), bundled, external, extern, deps (C and C++ projects keep the
    libraries they bundle there: cereal's ``external/rapidxml``, redis's ``deps/``; in a
    Python file below the repository's top directory these four name a module of the package
    itself, ``sympy/external/``, and keep their place: ``_package_modules``),
    single_include, example(s), sample(s), demo(s) (also as
    the first or last word of a name: ``example-expo/``, ``basic_demo/``; leading ``_``
    ignored), and for a benchmark's file (``is_benchmark``) unless the question speaks of
    benchmarks; else PRIOR_DOC_CODE for code under a documentation directory (``is_doc_dir``:
    ``docs/``, ``docs_src/`` — FastAPI-style projects keep hundreds of example programs
    there), unless the question is about docs or examples; PRIOR_REEXPORT for ``__init__.py``,
    ``package-info.java``, declaration stubs (``.d.ts``, ``.d.cts``, ``.d.mts``, ``.pyi``) and
    ``index.*`` / ``mod.rs`` barrels (mostly re-exports). A query that names the directory
    (``v1``, ``legacy``) keeps it.
    PRIOR_FORM, for a pasted report only, for an issue or pull-request template
    (``is_report_form``): the report was written by filling it in, so it shares the report's
    headings and boilerplate whatever the bug is.
    """
    stem, dirs = split_path(path)
    factor = 1.0
    names = {d.lower().lstrip("_") for d in dirs}
    legacy = (names & _LEGACY_DIRS) | {w for d in names for w in _example_words(d)}
    if legacy & _PACKAGE_MODULE_DIRS and path.lower().endswith(_PYTHON_SUFFIXES):
        legacy -= _package_modules(dirs)
    if legacy and not (legacy & q.tokens):
        factor *= PRIOR_LEGACY
    elif is_benchmark(stem, names) and not (_BENCH_QUERY_WORDS & q.tokens):
        factor *= PRIOR_LEGACY
    elif any(is_doc_dir(d) for d in dirs) and not (_DOC_QUERY_WORDS & q.tokens):
        factor *= PRIOR_DOC_CODE
    base = path.rsplit("/", 1)[-1].lower()
    if (
        base in ("__init__.py", "package-info.java")
        or base.endswith(_STUB_SUFFIXES)
        or (stem.lower() in ("index", "mod") and is_barrel(text))
    ):
        factor *= PRIOR_REEXPORT
    if q.kind == TRACE and is_report_form(path):
        factor *= PRIOR_FORM
    return factor


def _package_modules(dirs: Sequence[str]) -> set[str]:
    """The names among ``_PACKAGE_MODULE_DIRS`` that a Python file's directories use below
    another directory, as a module of a package (``sympy/external/gmpy.py``); at the top of the
    repository (``external/pybind11/setup.py``) the directory holds other projects.

    >>> sorted(_package_modules(["sympy", "external"])), sorted(_package_modules(["extern", "x"]))
    (['external'], [])
    """
    return {d.lower().lstrip("_") for d in dirs[1:]} & _PACKAGE_MODULE_DIRS


# GitHub's and GitLab's template folders and file names (matched in lower case)
_FORM_DIRS = frozenset(
    "issue_template pull_request_template discussion_template issue_templates "
    "merge_request_templates".split()
)
_FORM_STEMS = frozenset(("issue_template", "pull_request_template"))  # anywhere
_GITHUB_FORM_STEMS = frozenset(("bug_report", "bug-report"))  # in .github/ only


def is_report_form(path: str) -> bool:
    """An issue, pull-request or discussion template: a file under ``ISSUE_TEMPLATE/`` (also
    ``PULL_REQUEST_TEMPLATE/``, ``DISCUSSION_TEMPLATE/``, GitLab's ``issue_templates/`` and
    ``merge_request_templates/``), or an ``ISSUE_TEMPLATE.md`` / ``PULL_REQUEST_TEMPLATE.md``
    anywhere; in ``.github/`` also ``bug_report.*`` / ``bug-report.*``.

    >>> [is_report_form(p) for p in (".github/ISSUE_TEMPLATE/bug-report.yml",
    ...  ".github/PULL_REQUEST_TEMPLATE.md", ".gitlab/issue_templates/Bug.md",
    ...  ".github/workflows/ci.yml", "src/report/bug_report.py")]
    [True, True, True, False, False]
    """
    stem, dirs = split_path(path.lower())
    return (
        stem in _FORM_STEMS
        or any(d in _FORM_DIRS for d in dirs)
        or (stem in _GITHUB_FORM_STEMS and ".github" in dirs)
    )


_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx")
# A C/C++ function declaration as one statement: a return type, the name, the parameters, then
# qualifiers or attribute macros and `;` (`int ares_init(ares_channel_t **channelptr);`,
# `void flush() override;`, `CARES_EXTERN int f(void) CARES_DEPRECATED;`, `virtual void g() = 0;`).
# A call statement (`h(b);`, `int b = g(a);`, `return f(x);`) is not one.
_DECLARATION = re.compile(
    r"^(?:[A-Za-z_][\w:<>,]*[\s*&]+)+~?[A-Za-z_][\w:]*\s*\([^;{}=]*\)"
    r"\s*(?:(?:const|override|final|noexcept)\s*|[A-Z_][A-Z0-9_]*(?:\([^)]*\))?\s*)*"
    r"(?:=\s*(?:0|default|delete)\s*)?;$"
)
_STATEMENT_WORDS = frozenset({"return", "else", "case", "goto", "throw", "delete", "new", "do"})
_DIRECTIVE = re.compile(r"^\s*#")


def _declaration_lines(lines: Sequence[str]) -> int:
    """How many of ``lines`` (code lines) belong to function declarations, a statement being
    the lines up to one that ends in ``;``, ``{`` or ``}``."""
    count, statement = 0, []
    for ln in lines:
        statement.append(ln.strip())
        if not ln.rstrip().endswith((";", "{", "}")):
            continue
        text = " ".join(statement)
        first = text.split(None, 1)[0] if text else ""
        if first not in _STATEMENT_WORDS and _DECLARATION.match(text):
            count += len(statement)
        statement = []
    return count


def declaration_prior(h: Any, q: Query) -> float:
    r"""PRIOR_DECLARATIONS for a line window of a C/C++ header (no definition of its own, or a
    window of a class) in which at least DECLARATION_SHARE of the code lines are function
    declarations (``_declaration_lines``):
    a table of contents of functions defined elsewhere (``ares_private.h``'s prototypes, a
    class body's method declarations in spdlog's ``logger.h``). It matches a question's words
    by naming many functions, but the answer is a definition. Symbol queries are left alone
    (their definitions are pinned). On the dev benchmark none of 27 such windows in a top 10
    was a labelled target.

    >>> from types import SimpleNamespace as C
    >>> from .query import parse_query
    >>> text = "/* init */\nint ares_init(ares_channel_t **c);\n"
    >>> text += "void ares_destroy(ares_channel_t *c);\nint ares_dup(ares_channel_t **dest,\n"
    >>> text += "            ares_channel_t *src);\n#define X 1\n"
    >>> q = parse_query("how is a channel created and destroyed?")
    >>> declaration_prior(C(path="include/ares.h", kind="window", text=text), q)
    0.8
    >>> declaration_prior(C(path="src/ares_init.c", kind="window", text=text), q)
    1.0
    >>> declaration_prior(C(path="include/ares.h", kind="function", text=text), q)
    1.0
    """
    if q.kind == SYMBOL or h.kind != "window" or not h.path.endswith(_HEADER_SUFFIXES):
        return 1.0
    lines = [
        ln
        for ln in h.text.split("\n")
        if ln.strip() and not _COMMENT.match(ln) and not _DIRECTIVE.match(ln)
    ]
    if len(lines) < 3:
        return 1.0
    declared = _declaration_lines(lines)
    return PRIOR_DECLARATIONS if declared >= DECLARATION_SHARE * len(lines) else 1.0


_PYTHON_SUFFIXES = (".py", ".pyi")


def _triple_quotes(text: str) -> list[int]:
    """Offsets of the triple quotes in ``text`` (``\"\"\"`` and ``'''``), in order (str.find,
    one pass per kind: a regex alternation is ten times slower on a typical chunk)."""
    out: list[int] = []
    for mark in ('"""', "'''"):
        i = text.find(mark)
        while i >= 0:
            out.append(i)
            i = text.find(mark, i + 3)
    return sorted(out)


@lru_cache(maxsize=8192)  # a search re-reads the same chunks: their str objects keep their hash
def argument_doc_share(text: str) -> float:
    """Share of ``text``'s non-blank lines inside multi-line triple-quoted strings that are
    arguments of a call: preceded by ``(`` or ``,`` or followed by ``)`` or ``,`` (string
    prefixes such as ``r`` aside). A docstring (a statement of its own) or a constant's value
    (after ``=``) is not one. A window may be cut inside a string, so the text is read both
    ways (a string open before it, or not) and the larger share is taken.
    """
    if '"""' not in text and "'''" not in text:
        return 0.0
    quotes = _triple_quotes(text)

    def opens_argument(q: int) -> bool:  # ( or , before the quote (a string prefix aside)
        return text[max(0, q - 80) : q].rstrip().rstrip("rRbBuUfF").endswith(("(", ","))

    def closes_argument(q: int) -> bool:  # ) or , after the quote
        return text[q + 3 : q + 83].lstrip().startswith((")", ","))

    if not any(opens_argument(q) or closes_argument(q) for q in quotes):
        return 0.0
    lines = text.split("\n")
    nonblank = sum(1 for ln in lines if ln.strip())
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)

    def line_of(pos: int) -> int:  # the 0-based line holding offset pos
        return bisect.bisect_right(starts, pos) - 1

    def covered(pairs: list[tuple[int, int]]) -> int:
        inside: set[int] = set()
        for a, b in pairs:  # a: opening quote (-1: before the text), b: closing (len: after)
            first, last = line_of(max(a, 0)), line_of(min(b, len(text) - 1))
            if first == last:
                continue
            if (a >= 0 and opens_argument(a)) or (b < len(text) and closes_argument(b)):
                inside.update(i for i in range(first, last + 1) if lines[i].strip())
        return len(inside)

    # read from the start (the quotes pair up) or as a window cut inside a string (the first
    # quote closes a string opened before the text); a quote left over opens one to the end
    odd = len(quotes) % 2 == 1
    from_start = [*quotes, len(text)] if odd else quotes
    inside = [-1, *quotes] if odd else [-1, *quotes, len(text)]
    best = max(
        covered(list(zip(from_start[::2], from_start[1::2], strict=True))),
        covered(list(zip(inside[::2], inside[1::2], strict=True))),
    )
    return best / nonblank


_OVERLOAD = re.compile(r"^[ \t]*@(?:typing\.|t\.|typing_extensions\.)?overload\b", re.M)


def is_overload_stub(chunk: Any) -> bool:
    """A Python definition decorated ``@overload`` (``typing.overload``): one of the type
    signatures of a name whose implementation is the undecorated definition after them."""
    return (
        chunk.path.endswith(_PYTHON_SUFFIXES)
        and "overload" in chunk.text
        and bool(_OVERLOAD.search(chunk.text))
    )


def bodyless_prior(h: Any, q: Query) -> float:
    """PRIOR_BODYLESS for a method declared without a body (``is_bodyless``), or one whose body
    only says it is not implemented (``not_implemented``: ``raise NotImplementedError``,
    ``todo!()``, a Python ``...``), unless the query is a symbol (``Buf::chunk`` is the
    declaration): for a question in words the implementation is the answer, and the
    declaration's doc comment paraphrases the question (echo's ``Context`` interface: "RealIP
    returns the client's network address …")."""
    if q.kind == SYMBOL:
        return 1.0
    return PRIOR_BODYLESS if is_bodyless(h) or not_implemented(h) else 1.0


def overload_prior(h: Any, q: Query) -> float:
    """PRIOR_OVERLOAD for an ``@overload`` stub (``is_overload_stub``) unless the query is a
    symbol: sqlmodel's ``Field`` has three stubs of 45 lines each, full of the parameter names
    every question about fields uses, and ``select`` thirty. (For a symbol query
    ``definition_key`` puts the implementation before the stubs.)"""
    if q.kind == SYMBOL:
        return 1.0
    return PRIOR_OVERLOAD if is_overload_stub(h) else 1.0


def signature_docs_prior(h: Any, q: Query) -> float:
    """PRIOR_SIGNATURE_DOCS for a Python chunk at least SIGNATURE_DOC_SHARE of whose lines are
    documentation written into call arguments (``argument_doc_share``): PEP 727's
    ``Annotated[str, Doc("...")]`` parameters, hundreds of lines of them in typer's ``Option``
    and ``Argument`` and in FastAPI's path operations and parameter functions, or a
    ``@deprecated("...")`` notice. Such a window holds the words of every question about the
    feature its parameters configure, while the code that does it is elsewhere. Symbol
    queries are left alone (their definitions are pinned)."""
    if q.kind == SYMBOL or not h.path.endswith(_PYTHON_SUFFIXES):
        return 1.0
    share = argument_doc_share(h.text)
    return PRIOR_SIGNATURE_DOCS if share >= SIGNATURE_DOC_SHARE else 1.0


# words of a question about generated code itself: generated files keep their place
_GENERATED_QUERY_WORDS = frozenset(
    "generated autogenerated generator generators generate codegen re2c".split()
)


# a setter's lines: a field given a value that is no call (``self.x = x;``, ``@x = x``,
# ``$this->x = $x;``, Go's ``c.x = x``), then at most ``return this`` / ``self`` and closers
_SETTER_ASSIGN = re.compile(r"^\s*(?:\$this->|@)?[\w.\[\]>-]+\s*(?:=|\?\?=|\|\|=)\s*[^=(][^(]*$")
_SETTER_END = re.compile(r"^\s*(?:return\s+\$?(?:self|this)\b;?|self|this|[)\]}]+;?|end)\s*$")
_ANNOTATION = re.compile(r"^\s*(?:@[A-Za-z_][\w.]*(?:\(.*\))?|#!?\[.*\])\s*$")
_SETTER_CHARS = 1200


def is_setter(chunk: Any) -> bool:
    """A function or method whose body only stores values in fields, one or two of them,
    without a call: a builder's ``fn http1_title_case_headers(&mut self, on: bool) -> &mut Self
    { self.h1_title_case_headers = on; self }``, a Java ``setTileCacheMaxAge``. It names an
    option; what the option does is where the field is read.

    >>> from types import SimpleNamespace as C
    >>> rs = "/// Title-case.\\npub fn title_case(&mut self, on: bool) -> &mut Self {\\n"
    >>> is_setter(C(kind="method", path="b.rs", text=rs + "    self.title = on;\\n    self\\n}"))
    True
    >>> is_setter(C(kind="method", path="b.rs", text=rs + "    self.n = f(on);\\n    self\\n}"))
    False
    >>> py = "def set_name(self, name):\\n    '''Set it.'''\\n    self.name = name"
    >>> is_setter(C(kind="method", path="a.py", text=py))
    True
    >>> is_setter(C(kind="method", path="a.rb", text="def name=(v)\\n  @name = v\\nend"))
    True
    >>> is_setter(C(kind="method", path="b.rs", text="#[inline]\\n" + rs + "    self.t = on;\\n}"))
    True
    """
    if chunk.kind not in ("function", "method") or len(chunk.text) > _SETTER_CHARS:
        return False  # longer: more than a setter and its doc comment (and no time to read)
    if "=" not in chunk.text:
        return False
    lines = []
    for ln in _code(chunk.text.split("\n")):  # no blank, comment or docstring line
        t = ln.strip()
        if t[0] in "@#" and _ANNOTATION.match(t):
            continue  # an annotation, a decorator, a Rust attribute
        lines.append(t)
        if len(lines) > 6:
            return False
    if len(lines) < 2:
        return False
    body = [ln for ln in lines[1:] if ln.strip() != "{" and not _SETTER_END.match(ln)]
    return 1 <= len(body) <= 2 and all(_SETTER_ASSIGN.match(ln.rstrip(";")) for ln in body)


def setter_prior(h: Any, q: Query) -> float:
    """PRIOR_SETTER for a setter (``is_setter``), for a question in words: hyper's three
    ``http2_adaptive_window`` builder methods, named after the feature, led "http/2 adaptive
    flow control window" above the code that adapts the window."""
    return PRIOR_SETTER if q.kind == NATURAL and is_setter(h) else 1.0


def config_prior(h: Any, q: Query) -> float:
    """PRIOR_CONFIG for a chunk of a config file (data and build files, ``ingest.file_class``:
    ``pyproject.toml``, ``tox.ini``, ``package.json``, CI workflows) when the query is a pasted
    report. Reporters paste *their* configuration — a ``[testenv]`` section, a
    ``[tool.x]`` table — which matches the repository's own config files word for word
    whatever the bug is: in tox's 47 reports ``tox.toml``, ``pyproject.toml`` and
    ``tox.schema.json`` held 28 of the 235 top-5 places of ``search --files`` (13 with this
    prior; docs/eval.md, session 34). A file the report names keeps the boost of the
    named-files list; questions in words and symbol queries are left alone."""
    if q.kind != TRACE or h.file_class != CONFIG:
        return 1.0
    return PRIOR_CONFIG


def generated_prior(path: str, q: Query, generated: Collection[str]) -> float:
    """PRIOR_GENERATED for a candidate of a file whose first lines say it was generated
    (``generated``: such paths among the candidates, ``ingest.marks_generated``), for a
    question in words or a pasted report that is not about generated code: the state machine
    re2c wrote, a bundled JavaScript build, a table made by a script are rarely what a person
    asks about, and their many matching words crowd out the hand-written code. Symbol queries
    are left alone (a generated definition is still the definition)."""
    if q.kind == SYMBOL or path not in generated or (_GENERATED_QUERY_WORDS & q.tokens):
        return 1.0
    return PRIOR_GENERATED


# ---------------------------------------------------------------------------------------------
# Trivial chunks

_COMMENT = re.compile(
    r"^\s*(#(?!include|import|define|if|pragma|\[|!\[)|//|/\*|\*|--(?!>)|;|%|<!--|-->|\(\*|\*\))"
)
_IMPORT = re.compile(
    r"^\s*(import\b|from\s+\S+\s+import\b|using\s+[\w.]+\s*;|#include\b|#import\b|"
    r"require(_relative)?[\s(]|package\s+[\w.]+\s*;?\s*$|extern\s+crate\b|@import\b|"
    r"(pub(\([\w:]+\))?\s+)?use\s+[\w:{}, *]+(;|\{\s*$)|(pub(\([\w:]+\))?\s+)?mod\s+\w+\s*;|"
    r"export\s+(\*|\{[^}]*\})\s*from\b|"
    r"(const|let|var)\s+[\w{}, ]+=\s*require\(|library\s|part\s+(of\s+)?['\"]|open\s+[A-Z]|"
    r"alias\s+[A-Z]|local\s+\w+\s*=\s*require\b)"
)
_CLOSER = re.compile(r"^\s*([)\]}>;,]+|end|pass|\"\"\"|''')\s*$")
# C/C++ scaffolding: a namespace or extern block opened or closed (`namespace spdlog {`,
# `} // namespace spdlog`, `extern "C" {`), a forward declaration (`class logger;`)
_SCAFFOLD = re.compile(
    r"^\s*(?:(?:inline\s+)?namespace(?:\s+[\w:]+)?\s*\{|extern\s+\"C(?:\+\+)?\"\s*\{"
    r"|[)\]};,]+|(?:class|struct|union|enum(?:\s+class)?)\s+[\w:]+\s*;)"
    r"\s*(?://.*|/\*.*\*/\s*)?$"
)
LEAD_COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*|--|;)")  # before a definition line
DECORATOR = re.compile(r"^\s*(?:@|#\[)")
_BLOCK_END = frozenset(("}", "};", "})", "end"))
_COMMENT_STARTS = frozenset("#/*-;%<(")  # first characters of every _COMMENT match
_DOC_OPEN = re.compile(r"^[rRuUbBfF]{0,2}(\"\"\"|''')")  # a stripped line opening a docstring
_OPENERS = ("(", "{", "[")


_ATTRIBUTE = re.compile(r"^\s*#!?\[.*\]\s*$")  # a Rust attribute line
_IMPL = re.compile(r"^\s*(?:unsafe\s+)?impl\b")
_BEHAVIOUR = re.compile(r"\bfn\b|\blet\b|=>|\bmatch\b|\breturn\b")


def impl_header(text: str) -> bool:
    r"""A Rust ``impl`` block's head alone — its attributes, ``impl<…> Trait for Type``, the
    ``where`` bounds and associated ``type Item = …;`` lines — with no function in it: the
    line window the chunker leaves before the block's first method.

    >>> impl_header("#[cfg(feature = \"stream\")]\nimpl Stream for Body {\n    type Item = Bytes;")
    True
    >>> impl_header("impl Body {\n    fn empty() -> Body { Body::new() }\n}")
    False
    """
    code = [ln for ln in text.split("\n") if ln.strip() and not _COMMENT.match(ln)]
    code = [ln for ln in code if not _ATTRIBUTE.match(ln)]
    return bool(code) and bool(_IMPL.match(code[0])) and not _BEHAVIOUR.search(text)


def is_trivial(text: str) -> bool:
    """Only comments, blank lines, imports (with their parenthesised continuation lines),
    closing brackets and C/C++ scaffolding (a namespace or ``extern "C"`` block's first or
    last line, a forward declaration) — or only a Rust ``impl`` block's head
    (``impl_header``): nothing a question can be about."""
    if impl_header(text):
        return True
    depth = 0  # open brackets of a multi-line import (``use std::{ fmt, sync::{ … }, };``)
    in_block = False
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if in_block:
            if "*/" in line:
                in_block = False
            continue
        if depth > 0:
            depth += _brackets(line)
            continue
        if line.startswith("/*") and "*/" not in line:
            in_block = True
            continue
        if _COMMENT.match(raw) or _CLOSER.match(raw) or _ATTRIBUTE.match(raw):
            continue
        if _SCAFFOLD.match(raw):
            continue
        if _IMPORT.match(raw):
            depth = max(0, _brackets(line)) if line.endswith(_OPENERS) else 0
            continue
        return False
    return True


def _brackets(line: str) -> int:
    """Opening minus closing brackets on a line."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


# ---------------------------------------------------------------------------------------------
# Definitions


_KIND_RANK = {"class": 0, "function": 1, "method": 2}


def symbol_names(q: Query, smart: bool = True) -> list[str]:
    """Names whose definitions are looked up. With ``smart`` (stage ``defs``): a symbol query's
    bare name too, and its other first-letter case (``logger`` also finds class ``Logger``,
    ``Parse`` also ``parse``), and the words the phrasing marks as names (``Query.named``: "the
    Table class"); without: the code-looking identifiers only (as before)."""
    if not smart:
        return list(q.identifiers)
    names = [*q.symbols, *q.named]
    if q.symbol:
        last = last_part(q.symbol)
        flipped = last[:1].swapcase() + last[1:]
        if flipped != last:
            names.append(q.symbol[: len(q.symbol) - len(last)] + flipped)
    return list(dict.fromkeys(names))


def style_variants(name: str) -> list[str]:
    """The same words in the identifier styles (``merge_config`` -> ``mergeConfig``,
    ``MergeConfig``; ``parseHeaders`` -> ``parse_headers``, ``ParseHeaders``), for a symbol
    query typed in another language's convention. Looked up only when nothing has the name as
    typed, neither a definition nor a line giving it a value (``COMPLETE_NOTIFICATION`` stays
    the constant, not the ``CompleteNotification`` type).

    >>> style_variants("merge_config")
    ['merge_config', 'mergeConfig', 'MergeConfig']
    >>> style_variants("Field")
    []
    """
    from .identifiers import split_identifier

    words = split_identifier(name)
    if len(words) < 2 or not all(w.isalnum() for w in words):
        return []
    return [
        "_".join(words),
        words[0] + "".join(w.capitalize() for w in words[1:]),
        "".join(w.capitalize() for w in words),
    ]


def definition_key(chunk: Any, name: str, base: float, q: Query, first: bool) -> tuple:
    """Sort key (smaller first) among definitions of ``name`` found for a symbol query:

    0. the exact spelling before the other first-letter case (``symbol_names``); then the kind
       the question names, if it names one (``Query.kind_hint``: "struct ares_query" is the
       struct, not the function ``ares_query`` in ares_query.c);
    1. the file's stem matches the name (``Field`` -> fields.py, ``HttpClient`` -> http_client.go);
    2. not demoted by a path prior (a ``v1/`` copy after the current one);
    3. an implementation before its ``@overload`` stubs (``is_overload_stub``);
    4. type-level definitions (class, struct, trait, interface: kind ``class``) before functions
       before methods;
    5. the first window of a long definition (the one with its signature) before later ones;
    6. the fused dense/FTS score.
    """
    stem, _ = split_path(chunk.path)
    last = last_part(name)
    stem_match = _squash(stem) in (_squash(last), _squash(last) + "s") or _squash(last) in _squash(
        stem
    )
    prior = path_prior(chunk.path, chunk.text, q) < 1.0
    exact = last_part(chunk.symbol) == last
    kind = _KIND_RANK.get(chunk.kind, 3)
    wrong_kind = (q.kind_hint == TYPE_HINT and kind != 0) or (
        q.kind_hint == FUNCTION_HINT and kind not in (1, 2)
    )
    return (
        not exact,
        wrong_kind,
        not stem_match,
        prior,
        is_overload_stub(chunk),
        kind,
        not first,
        -base,
    )


def _squash(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def project_words(repo_dir_name: str) -> tuple[str, ...]:
    """The words of a repository directory's name that can qualify a name in it: ``echo`` ->
    (echo,), ``click-8.4.1`` -> (click,), ``zig-crypto`` -> (zig, crypto)."""
    return tuple(w for w in re.split(r"[^A-Za-z0-9]+", repo_dir_name.lower()) if w.isalpha())


def qualifier_matches(
    qualifiers: Sequence[str], path: str, symbol: str | None, project: Sequence[str] = ()
) -> int:
    """How many of a qualified name's qualifiers a definition's location shows, for a name
    whose qualifiers are not part of any indexed symbol: a package, module, crate or namespace
    path (``hyper::server::conn::http1::Builder``, ``rich.console.Console``,
    ``com.getcapacitor.Bridge``, ``Monolog\\Logger``). A qualifier counts when it is one of
    the symbol's own qualifiers, a directory or the stem of the file, or a word of the
    project's name (a Go package or Rust crate at the repository root), compared without case
    or separators.

    >>> qualifier_matches(["hyper", "server", "conn", "http1"], "src/server/conn/http1.rs",
    ...                   "Builder", ("hyper",))
    4
    >>> qualifier_matches(["hyper", "server", "conn", "http1"], "src/client/conn/http1.rs",
    ...                   "Builder", ("hyper",))
    3
    >>> qualifier_matches(["fmt"], "include/fmt/format.h", "fmt.v10.format")
    1
    >>> qualifier_matches(["self"], "shop/cart.py", "Cart.total")
    0
    """
    stem, dirs = split_path(path)
    places = {_squash(stem), *(_squash(d) for d in dirs), *(_squash(w) for w in project)}
    places.update(_squash(p) for p in (symbol or "").split(".")[:-1])
    places.discard("")
    return sum(1 for q in qualifiers if _squash(q) in places)


def by_qualifiers(name: str, chunks: Sequence[Any], project: Sequence[str] = ()) -> list[Any]:
    """Of ``chunks`` (definitions), those named like the last part of the qualified ``name``
    whose location shows the most of its qualifiers (``qualifier_matches``; at least one), in
    their order. For a qualified name no symbol spells out; shared by search and
    ``find_symbol``.

    >>> from types import SimpleNamespace as C
    >>> defs = [C(path="src/client/conn.rs", symbol="Builder"),
    ...         C(path="src/server/conn.rs", symbol="Builder"), C(path="x.rs", symbol="Other")]
    >>> [c.path for c in by_qualifiers("hyper.server.conn.Builder", defs, ("hyper",))]
    ['src/server/conn.rs']
    >>> defs = [C(path="rich/console.py", symbol="Console.print_json"),
    ...         C(path="rich/__init__.py", symbol="print_json")]
    >>> [c.symbol for c in by_qualifiers("rich.print_json", defs)]
    ['print_json']
    >>> defs = [C(path="src/hedge/select.rs", symbol="Policy"),
    ...         C(path="src/hedge/mod.rs", symbol="Policy")]
    >>> [c.path for c in by_qualifiers("tower.hedge.Policy", defs, ("tower",))]
    ['src/hedge/mod.rs']
    """
    *quals, last = name.split(".")
    if not quals:
        return []
    wanted = {_squash(q) for q in quals}

    def key(c: Any) -> tuple[int, int, int]:
        # most qualifiers shown; then fewest of the symbol's own qualifiers the name leaves
        # unexplained (``rich.print_json`` is the function, not the method Console.print_json);
        # then a file the name spells out: ``hedge::Policy`` is hedge/mod.rs's, not that of
        # hedge/select.rs (the module ``hedge::select``) — a generic stem (mod, __init__,
        # index) or one named like the definition is the module itself
        own = (c.symbol or "").split(".")[:-1]
        stem = _squash(split_path(c.path)[0])
        extra_file = stem not in wanted and stem not in _GENERIC_STEMS and stem != _squash(last)
        return (
            qualifier_matches(quals, c.path, c.symbol, project),
            -sum(_squash(p) not in wanted for p in own),
            -int(extra_file),
        )

    scored = [(key(c), c) for c in chunks if last_part(c.symbol) == last]
    best = max((k for k, _ in scored), default=(0, 0, 0))
    return [c for k, c in scored if k == best and best[0] > 0]


def named_definitions(
    defs: Sequence[Any],
    names: Sequence[str],
    project: Sequence[str] = (),
    qualified: Collection[str] | None = None,
) -> tuple[list[Any], list[tuple[str, int, int]]]:
    """Of ``defs`` (the definitions ``store.by_symbol`` finds for ``names`` and their last
    parts, in its order), those a name names: the symbol is the name (``Context.invoke``),
    ends with it (``core.Context.invoke``), or its last part is the name (``invoke`` names
    ``Context.invoke``). A qualified name no symbol spells out (``rich.console.Console``: the
    module is the file) names the definitions of its last part whose location shows most of
    its qualifiers (``by_qualifiers``); only for the names in ``qualified``, when given. Also
    returns, per name found that way, (last part, qualifiers shown, qualifiers). Shared by
    search (``Retriever._symbol_matches``) and ``store.find_symbol``.

    >>> from types import SimpleNamespace as C
    >>> defs = [C(path="rich/console.py", symbol="Console"),
    ...         C(path="rich/console.py", symbol="Console.print"),
    ...         C(path="rich/_log.py", symbol="Console")]
    >>> found, shown = named_definitions(defs, ["rich.console.Console", "print"], ("rich",))
    >>> [(c.path, c.symbol) for c in found], shown
    ([('rich/console.py', 'Console.print'), ('rich/console.py', 'Console')], [('Console', 2, 2)])
    """
    found: list[Any] = []
    for c in defs:
        sym = c.symbol or ""
        if any(symbol_matches(sym, n) for n in names) or last_part(sym) in names:
            found.append(c)
    shown: list[tuple[str, int, int]] = []
    for name in names:
        if "." not in name or any(symbol_matches(c.symbol, name) for c in found):
            continue
        if qualified is not None and name not in qualified:
            continue
        *quals, last = name.split(".")
        best = by_qualifiers(name, defs, project)
        found += [c for c in best if not any(c is f for f in found)]
        if best:
            shown.append(
                (last, qualifier_matches(quals, best[0].path, best[0].symbol, project), len(quals))
            )
    return found, shown


@lru_cache(maxsize=256)
def _defining(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    return re.compile(
        rf"^[ \t]*#[ \t]*define[ \t]+{n}\b"  # C/C++ macro
        rf"|^[ \t]*typedef\b[^;\n]*\b{n}[ \t]*;"  # typedef struct x NAME;
        # [keywords / a type] NAME [<generics>] [: annotation] = value  (not ==)
        rf"|^[ \t]*(?:[\w$]+(?:\([^)\n]*\))?[ \t]+)*{n}[ \t]*(?:<[^>\n]*>)?[ \t]*"
        rf"(?::[^=\n]+)?=(?!=)(?P<value>[^\n]*)",
        re.M,
    )


_IMPORTED = re.compile(r"\b(?:require|require_relative|import|include)\b|@import\b")


def defining_lines(text: str, name: str) -> list[tuple[int, int]]:
    r"""(line index, indentation) of each line of ``text`` that gives ``name`` its value — a
    constant, a variable, a type alias or a macro, which no chunk is named after. An alias of
    a name defined elsewhere (``const Sha256 = std.crypto.hash.sha2.Sha256;``, ``= require(…)``,
    ``@import(…)``) does not count.

    >>> defining_lines("import x\n\npub const Sha256 = Sha2x32(iv256, 256);", "Sha256")
    [(2, 0)]
    >>> defining_lines("const Sha256 = std.crypto.hash.sha2.Sha256;", "Sha256")
    []
    >>> defining_lines("DEFAULT_STYLES: Dict[str, Style] = {", "DEFAULT_STYLES")
    [(0, 0)]
    >>> defining_lines('const (\n\tMIMEApplicationJSON = "application/json"', "MIMEApplicationJSON")
    [(1, 1)]
    >>> [defining_lines(t, "MAX") for t in ("#define MAX 10", "if (n == MAX) {", "f(MAX)")]
    [[(0, 0)], [], []]
    >>> defining_lines("pub type Result<T> = std::result::Result<T, Error>;", "Result")
    [(0, 0)]
    """
    out = []
    for m in _defining(name).finditer(text):
        value = (m.group("value") or "").strip().rstrip(";").strip()
        if value and (
            _IMPORTED.search(value) or re.fullmatch(rf"[\w$.:]*\b{re.escape(name)}", value)
        ):
            continue
        line = text.count("\n", 0, m.start())
        start = text.rfind("\n", 0, m.start()) + 1
        indent = len(text[start:]) - len(text[start:].lstrip(" \t"))
        out.append((line, indent))
    return out


def typedef_tag(line: str, name: str) -> str | None:
    """The tag a C typedef line names ``name`` after (``typedef struct uv_loop_s uv_loop_t;``
    -> ``uv_loop_s``): the struct, union or enum whose definition says what ``name`` is. None
    for any other line, a pointer typedef, or a tag spelled like the name itself.

    >>> typedef_tag("typedef struct ares_conn ares_conn_t;", "ares_conn_t")
    'ares_conn'
    >>> [typedef_tag(t, "h_t") for t in ("typedef struct h *h_t;", "typedef int h_t;")]
    [None, None]
    """
    m = re.match(
        rf"[ \t]*typedef[ \t]+(?:const[ \t]+)?(?:struct|union|enum)[ \t]+([A-Za-z_]\w*)[ \t]+"
        rf"{re.escape(name)}[ \t]*;",
        line,
    )
    return m.group(1) if m and m.group(1) != name else None


def value_definition(
    candidates: Sequence[Any], name: str, nested: bool = True
) -> tuple[str, int] | None:
    """(path, line) where ``name`` (its last part) is given its value, among ``candidates``
    (chunks, best first; ``defining_lines``): the first top-level one (no indentation, as
    ``export const EMPTY = …``) before the first nested one (``static EMPTY = …`` in a class;
    none with ``nested=False``).
    """
    last = last_part(name)
    inner = None
    for c in candidates:
        for line, indent in defining_lines(c.text, last):
            if indent == 0:
                return c.path, c.start_line + line
            inner = inner or (c.path, c.start_line + line)
    return inner if nested else None


def order_definitions(
    found: Sequence[tuple[str, Any]], q: Query, base: dict[str, float], smart: bool = True
) -> list[str]:
    """Ids of the definitions ``found`` ((id, chunk) pairs), best first.

    With ``smart`` (stage ``defs``) by ``definition_key`` for symbol queries and questions
    whose phrasing names a definition ("where is the Bridge class?": the class before its
    constructor ``Bridge.Bridge``); otherwise by fused score only, as before."""
    if not smart or (q.kind != SYMBOL and not q.named):
        return [cid for cid, _ in sorted(found, key=lambda p: -base.get(p[0], 0.0))]
    firsts: dict[tuple[str, str], int] = {}
    for _, c in found:
        key = (c.path, c.symbol or "")
        firsts[key] = min(firsts.get(key, c.start_line), c.start_line)
    name = q.symbol or (q.named[0] if q.named else q.identifiers[0] if q.identifiers else "")

    def key(p: tuple[str, Any]) -> tuple:
        cid, c = p
        first = firsts[(c.path, c.symbol or "")] == c.start_line
        return definition_key(c, name, base.get(cid, 0.0), q, first)

    return [cid for cid, _ in sorted(found, key=key)]


# ---------------------------------------------------------------------------------------------
# Re-scoring the fused list


def coherence_factors(hits: Sequence[Any], pool: int | None = None) -> list[float]:
    """Per hit: ``1 + COHERENCE * min(1, S / best)`` where S is the summed score of the *other*
    candidates of its file among the top ``pool`` (COHERENCE_POOL) and best is the top
    candidate's score."""
    pool = COHERENCE_POOL if pool is None else pool
    top = hits[:pool]
    if not top:
        return [1.0] * len(hits)
    best = max(h.score for h in top) or 1.0
    per_file: dict[str, float] = {}
    for h in top:
        per_file[h.path] = per_file.get(h.path, 0.0) + h.score
    out = []
    for i, h in enumerate(hits):
        total = per_file.get(h.path, 0.0)
        own = h.score if i < pool else 0.0
        out.append(1.0 + COHERENCE * min(1.0, max(total - own, 0.0) / best))
    return out


def mention_factors(hits: Sequence[Any], q: Query) -> list[float]:
    """MENTION_FACTOR for the test (doc) chunks of a question that brings tests (docs) in
    without asking for them (``query.scope_mentions``: "how does search decide that a question
    is about tests or documentation?" asks for the code that decides), else 1. Unless the words
    around the mention spell a name among the candidates — "the virtual time test scheduler" is
    ``TestScheduler`` (a symbol part or a file stem, compared without case and separators; not
    a ``test_…`` test case named after the phrase): then the mention names code and nothing
    changes.

    >>> from types import SimpleNamespace as H
    >>> from .query import parse_query
    >>> hits = [H(file_class="test", symbol="test_scope", path="tests/test_q.py"),
    ...         H(file_class="code", symbol="detect_scope", path="src/query.py")]
    >>> mention_factors(hits, parse_query("how is a question about tests detected?"))
    [0.5, 1.0]
    >>> mention_factors(hits, parse_query("which tests cover detect_scope?"))
    [1.0, 1.0]
    """
    if not (q.mentions_tests or q.mentions_docs):
        return [1.0] * len(hits)
    parts = [p for h in hits for p in (*(h.symbol or "").split("."), split_path(h.path)[0])]
    names = {_squash(p) for p in parts if not p.startswith("test_")}  # not a test case's name
    if names.intersection(q.mention_compounds):
        return [1.0] * len(hits)
    return [
        MENTION_FACTOR
        if (q.mentions_tests and h.file_class == TEST) or (q.mentions_docs and h.file_class == DOC)
        else 1.0
        for h in hits
    ]


def question_names(q: Query) -> frozenset[str]:
    """The names a question uses, each whole and by its last dotted part (``Table.widths`` ->
    ``Table.widths``, ``widths``): what ``names_symbol`` compares a candidate with."""
    return frozenset(n for i in q.identifiers for n in (i, last_part(i)))


def callers_subject(q: Query) -> frozenset[str]:
    """The names a question asking for callers (``Query.asks_callers``) is about: its
    identifiers (``question_names``) and the words its phrasing marks as names ("what calls
    launch?"); empty for any other question. A thin wrapper among them keeps its place
    (``wrapper_callee``).

    >>> from .query import parse_query
    >>> sorted(callers_subject(parse_query("what calls launch?")))
    ['launch']
    >>> callers_subject(parse_query("launch opens the wrong application"))
    frozenset()
    """
    if not q.asks_callers:
        return frozenset()
    return question_names(q) | frozenset(q.named)


def names_symbol(names: Collection[str], symbol: str | None) -> bool:
    """Whether ``symbol`` or its last dotted part is among ``names`` (``question_names``).

    >>> names_symbol({"Table"}, "rich.Table"), names_symbol({"Table"}, "Table.widths")
    (True, False)
    """
    return bool(symbol) and (symbol in names or last_part(symbol) in names)


def _any_callable(hits: Sequence[Any]) -> bool:
    """A function or method is among ``hits``: what a class or a line window yields to
    (``class_factors``, ``window_factors``)."""
    return any(h.kind in ("function", "method") for h in hits)


def class_factors(hits: Sequence[Any], q: Query) -> list[float]:
    """CLASS_DEMOTION for a class chunk the question does not name (by its symbol or the
    symbol's last part) when a function or method is among the candidates too, else 1: a
    declaration holds no behaviour, while its name and fields repeat the question's nouns.

    >>> from types import SimpleNamespace as H
    >>> from .query import parse_query
    >>> hits = [H(kind="class", symbol="TableLayout"), H(kind="method", symbol="TableLayout.fit")]
    >>> class_factors(hits, parse_query("how are column widths computed?"))
    [0.9, 1.0]
    >>> class_factors(hits, parse_query("how does TableLayout compute column widths?"))
    [1.0, 1.0]
    >>> class_factors(hits[:1], parse_query("how are column widths computed?"))
    [1.0]
    """
    if not _any_callable(hits):
        return [1.0] * len(hits)
    named = question_names(q)
    return [
        CLASS_DEMOTION
        if h.kind == "class" and h.symbol and not names_symbol(named, h.symbol)
        else 1.0
        for h in hits
    ]


@lru_cache(maxsize=1)
def _definition_languages() -> frozenset[str]:
    from .chunker import supported_languages

    return frozenset(supported_languages())


def window_factors(hits: Sequence[Any], q: Query) -> list[float]:
    """WINDOW_DEMOTION for a line window of code (the lines between definitions: imports,
    module-level statements, a block of constants or templates) in a language askrepo chunks
    by definitions, when a function or method is among the candidates too, else 1. In the
    dev set's top 10s a window answers a question in words half as often as a function does
    (8.7% against 18.5%), while its many words match many questions.

    >>> from types import SimpleNamespace as H
    >>> from .query import parse_query
    >>> hits = [H(kind="window", language="go"), H(kind="function", language="go"),
    ...         H(kind="window", language="yaml")]
    >>> window_factors(hits, parse_query("how is the help text rendered?"))
    [0.9, 1.0, 1.0]
    >>> window_factors(hits[:1], parse_query("how is the help text rendered?"))
    [1.0]
    """
    if not _any_callable(hits):
        return [1.0] * len(hits)
    langs = _definition_languages()
    return [
        WINDOW_DEMOTION if h.kind == "window" and getattr(h, "language", None) in langs else 1.0
        for h in hits
    ]


def best_first(scores: Sequence[float]) -> list[int]:
    """Indexes of ``scores``, highest first; ties keep their order (retrieval's rank).

    >>> best_first([0.2, 0.5, 0.2, 0.9])
    [3, 1, 0, 2]
    """
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def _with_scores(hits: Sequence[Any], scores: Sequence[float]) -> list[Any]:
    return [rescored(hits[i], scores[i]) for i in best_first(scores)]


def rescored(h: Any, score: float) -> Any:
    """A copy of the hit ``h`` with ``score``: ``dataclasses.replace``'s result at a fraction
    of its cost (the re-scoring stages copy every candidate of every search). A shallow copy
    of the fields, as ``replace`` makes."""
    try:
        new = object.__new__(type(h))
        new.__dict__.update(h.__dict__)
    except (AttributeError, TypeError):  # no instance dict (slots)
        new = copy(h)
    new.score = score
    return new


CONSTRUCTOR_NAMES = frozenset(
    {"__init__", "__new__", "__construct", "constructor", "new", "init", "initialize"}
)
# languages whose constructor is named after its class (``Foo.Foo``); in Go or Rust a method
# named after its type is an ordinary method (``Group.Group`` adds a sub-group)
_CLASS_NAMED_CONSTRUCTORS = frozenset(
    {".java", ".cs", ".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h", ".dart"}
)


def is_constructor(symbol: str | None, path: str = "") -> bool:
    """A method that constructs its class: ``Handler.__init__``, ``Socket.__construct``,
    ``Subject.constructor``, ``Store.init``, ``Client.new``, ``Logger.initialize``, or, in
    a language whose constructors carry the class's name (Java, C#, C++, Dart), ``Foo.Foo``.

    >>> is_constructor("RichHandler.__init__"), is_constructor("Bridge.Bridge", "Bridge.java")
    (True, True)
    >>> is_constructor("Group.Group", "group.go"), is_constructor("init")
    (False, False)
    """
    if not symbol or "." not in symbol:
        return False
    owner, last = symbol.rsplit(".", 1)
    if last in CONSTRUCTOR_NAMES:
        return True
    ext = os.path.splitext(path)[1].lower()  # of the file name only: not "pkg.v2/Foo"
    return ext in _CLASS_NAMED_CONSTRUCTORS and last == last_part(owner)


def rescore(
    hits: Sequence[Any],
    q: Query,
    disabled: Iterable[str] = (),
    generated: Collection[str] = frozenset(),
) -> list[Any]:
    """Apply the enabled re-scoring stages (coherence, pathwords, length, header, priors,
    mentions, classes, windows, trivial) to the fused candidates (best first) and return them
    re-sorted (ties keep their order). ``generated``: the candidates' paths whose files say
    they were generated (``generated_prior``)."""
    off = set(disabled)
    scores = [float(h.score) for h in hits]
    if "coherence" not in off:
        scores = [s * f for s, f in zip(scores, coherence_factors(hits), strict=True)]
    if "pathwords" not in off and (q.kind == NATURAL or q.title_words):
        words = q.words if q.kind == NATURAL else q.title_words  # a report: its title's words
        scores = [s * path_word_factor(h.path, words) for s, h in zip(scores, hits, strict=True)]
    if "length" not in off and q.kind in (NATURAL, SYMBOL):
        scores = [s * _length_for(h, q) for s, h in zip(scores, hits, strict=True)]
    if "header" not in off and q.kind == NATURAL:
        scores = [
            s * HEADER_FACTOR if is_header(h) else s for s, h in zip(scores, hits, strict=True)
        ]
    if "priors" not in off:
        scores = [
            s
            * path_prior(h.path, h.text, q)
            * symbol_prior(h.symbol, q)
            * platform_prior(h.path, h.symbol, q)
            * declaration_prior(h, q)
            * signature_docs_prior(h, q)
            * overload_prior(h, q)
            * bodyless_prior(h, q)
            * setter_prior(h, q)
            * generated_prior(h.path, q, generated)
            * config_prior(h, q)
            for s, h in zip(scores, hits, strict=True)
        ]
    if "mentions" not in off:
        scores = [s * f for s, f in zip(scores, mention_factors(hits, q), strict=True)]
    if "classes" not in off and q.kind == NATURAL:
        scores = [s * f for s, f in zip(scores, class_factors(hits, q), strict=True)]
    if "windows" not in off and q.kind == NATURAL:
        scores = [s * f for s, f in zip(scores, window_factors(hits, q), strict=True)]
    if "trivial" not in off:
        trivial = [h.kind in NON_DEFINITION_KINDS and is_trivial(h.text) for h in hits]
        floor = min((s for s, t in zip(scores, trivial, strict=True) if not t), default=None)
        if floor is not None:
            scores = [
                min(s * TRIVIAL_FACTOR, floor * 0.999) if t else s
                for s, t in zip(scores, trivial, strict=True)
            ]
    return _with_scores(hits, scores)


def saturation_head(q: Query, enabled: bool = True) -> int | None:
    """How many first places ``saturate`` spreads over files for this query (the ``tail``
    stage): SATURATION_HEAD for a question in words or a pasted report; every place (None)
    for a symbol query, whose places below the definition belong to its neighbours and
    members, or with the stage off."""
    return None if q.kind == SYMBOL or not enabled else SATURATION_HEAD


def saturate(hits: Sequence[Any], decay: float | None = None, head: int | None = None) -> list[Any]:
    """Spread the first ``head`` places (None: all; the retriever passes ``saturation_head``)
    over files, then follow the score.

    For the head, the i-th hit (0-based, in score order) of a file scores ``score * decay**i``
    (decay: SATURATION) and the hits are re-sorted; ``[a.py 1.0, a.py 0.9, b.py 0.7]`` with
    decay 0.8 -> a.py 1.0, a.py 0.72, b.py 0.7. The hits left below the head keep their own
    order (their scores, undecayed), each scoring at most the one above it: once the first
    places show the best of several files, more chunks of a strong file are likelier
    answers than weak chunks elsewhere."""
    decay = SATURATION if decay is None else decay
    head = len(hits) if head is None else head
    seen: dict[str, int] = {}
    scores = []
    for h in hits:
        n = seen.get(h.path, 0)
        seen[h.path] = n + 1
        scores.append(h.score * decay**n)
    order = best_first(scores)
    first = order[:head]
    taken = set(first)
    rest = sorted((i for i in range(len(hits)) if i not in taken), key=lambda i: -hits[i].score)
    out = [rescored(hits[i], scores[i]) for i in first]
    ceiling = out[-1].score if out else float("inf")
    for i in rest:
        ceiling = min(float(hits[i].score), ceiling)
        out.append(rescored(hits[i], ceiling))
    return out


def pin_first(
    hits: Sequence[Any], defs: Sequence[tuple[str, int]], limit: int | None = None
) -> list[Any]:
    """Place the hits holding the first ``limit`` (PINNED_DEFINITIONS) definitions ``defs``
    ((path, start_line), best first) at the top in that order, above every other hit; the
    rest keep their order. Scores stay monotone: pinned hits score just above the best."""
    limit = PINNED_DEFINITIONS if limit is None else limit
    pinned: list[int] = []
    for path, line in defs:
        if len(pinned) >= limit:
            break
        for i, h in enumerate(hits):
            if h.path == path and h.start_line <= line <= h.end_line and i not in pinned:
                pinned.append(i)
                break
    if not pinned:
        return list(hits)
    head = above([hits[i] for i in pinned], max(h.score for h in hits))
    return head + [h for i, h in enumerate(hits) if i not in set(pinned)]


def neighbours(hits: Sequence[Any], pinned: int, factor: float | None = None) -> list[Any]:
    """After the ``pinned`` definitions a symbol query placed first, the hits in the first
    definition's file and the definitions it calls (its ``calls``) score ``factor``
    (NEIGHBOUR_FACTOR) times as much, and the rest of the list is sorted again: what a reader
    of ``ares_send`` looks at next is ``ares_send_nolock``, which it calls, not another file's
    function that mentions it. The pinned hits keep their places; the rest stay below them.

    Worked numbers: tests/test_ranking.py::test_neighbours_hand_worked.
    """
    factor = NEIGHBOUR_FACTOR if factor is None else factor
    if pinned <= 0 or pinned >= len(hits) or factor == 1.0:
        return list(hits)
    first = hits[0]
    callees = set(getattr(first, "calls", None) or ()) - {last_part(first.symbol)}
    tail = [
        rescored(h, h.score * factor)
        if h.path == first.path or (last_part(h.symbol) in callees and h.symbol)
        else h
        for h in hits[pinned:]
    ]
    tail = [tail[i] for i in best_first([h.score for h in tail])]
    return list(hits[:pinned]) + below(tail, hits[pinned - 1].score)


def below(tail: Sequence[Any], ceiling: float) -> list[Any]:
    """``tail`` (best first) scaled so that its best scores just under ``ceiling`` when it
    reaches it, keeping its proportions; unchanged when it is already below (scores stay
    monotone after a placed head): ``[0.9, 0.45]`` under 0.5 -> 0.4995, 0.24975."""
    if tail and tail[0].score >= ceiling > 0:
        ratio = ceiling * 0.999 / tail[0].score
        return [rescored(h, h.score * ratio) for h in tail]
    return list(tail)


def member_lead(definition: Any, candidates: Sequence[Any], k: int | None = None) -> list[Any]:
    """The ``k`` (MEMBER_LEAD) largest direct members of the class ``definition`` among
    ``candidates`` (chunks of its file): functions and methods whose symbol is the class's
    plus one more part (``Basic`` -> ``Basic.ask``, not ``Basic.Inner.run``), by
    ``code_lines``, most first, ties in file order; the chunks of one name (a long method's
    parts, overloads) count as one member, shown by its first chunk of at least half the
    size of its largest. What a reader of a type looks at after its
    definition is its substantial API (``ask``, ``print_table``), not its one-line getters;
    retrieval cannot tell them apart for a bare name, since every member mentions the class.
    Public members come first (``is_private``; a Rust trait's methods are all public), then
    private helpers, each group by size.

    Worked numbers: tests/test_ranking.py::test_member_lead_hand_worked and
    ::test_member_lead_puts_the_public_api_before_private_helpers.
    """
    k = MEMBER_LEAD if k is None else k
    sym = getattr(definition, "symbol", None)
    if k <= 0 or not sym or definition.kind != "class":
        return []
    prefix = sym + "."
    members = [
        c
        for c in candidates
        if c.kind in ("function", "method")
        and (c.symbol or "").startswith(prefix)
        and "." not in c.symbol[len(prefix) :]
    ]
    # a long method cut into several chunks, or overloads sharing a name, is one member: its
    # size is its largest chunk's, and the first of its chunks at least half that size stands
    # for it (the part with the signature, not a one-line ``@overload`` stub before it)
    lines = [code_lines(c.text) for c in members]
    size: dict[str, int] = {}
    for c, n in zip(members, lines, strict=True):
        size[c.symbol] = max(size.get(c.symbol, 0), n)
    first: dict[str, Any] = {}
    for i in sorted(range(len(members)), key=lambda i: members[i].start_line):
        c = members[i]
        if c.symbol not in first and 2 * lines[i] >= size[c.symbol]:
            first[c.symbol] = c
    trait = _declares_trait(definition)
    order = sorted(
        first,
        key=lambda s: (not trait and is_private(first[s]), -size[s], first[s].start_line),
    )
    return [first[s] for s in order[:k]]


_PRIVATE_WORD = re.compile(r"\b(?:private|fileprivate)\b")
_RUST_PUB = re.compile(r"\bpub\b")
_TRAIT_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s", re.MULTILINE)


def _declares_trait(definition: Any) -> bool:
    """Whether ``definition`` is a Rust trait: its methods need no ``pub`` to be its API."""
    return definition.path.endswith(".rs") and bool(_TRAIT_DECL.search(definition.text))


def is_private(chunk: Any) -> bool:
    """Whether the member ``chunk`` is outside its type's public API, as its language spells
    it: Python ``_name`` (not a ``__dunder__``), JavaScript ``#name`` / ``_name``, Dart
    ``_name``, Go a lower-case first letter, Rust no ``pub`` before the name (a trait impl's
    ``fmt`` too: protocol, not API), and ``private`` / ``fileprivate`` before the name in the
    C-family languages. Unknown: public (Ruby's ``private`` sections, C++'s access labels)."""
    name = last_part(chunk.symbol or "")
    if not name:
        return False
    path = chunk.path
    ext = os.path.splitext(path)[1]
    if ext in (".py", ".pyi"):
        return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
    if ext == ".go":
        return name[0].islower()
    if ext in (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".dart") and name[0] in "_#":
        return True
    prefix = _before_name(chunk.text, name)
    if prefix is None:
        return False
    if ext == ".rs":
        return not _RUST_PUB.search(prefix)
    return bool(_PRIVATE_WORD.search(prefix))


def _before_name(text: str, name: str) -> str | None:
    """What precedes ``name`` on the first code line that declares it (modifiers), or None."""
    pat = re.compile(r"(?<![\w$#])" + re.escape(name) + r"(?![\w$])")
    for _, line in code_line_indices(text.splitlines()):
        m = pat.search(line)
        if m:
            return line[: m.start()]
    return None


def follow_first(hits: Sequence[Any], lead: Sequence[Any]) -> list[Any]:
    """``lead`` placed right after the first hit, in its order, above every other hit (a hit
    of ``lead`` already in ``hits`` moves up; the rest keep their order). Scores stay
    monotone: the lead takes scores just below the first's, the rest are scaled under them.
    ``[a 1.0, b 0.8, c 0.5]`` with lead ``[c]`` -> a 1.0, c 0.999, b 0.8."""
    if not hits or not lead:
        return list(hits)
    key = {(h.path, h.start_line, h.end_line) for h in lead}
    top = hits[0].score
    head = [rescored(h, top * (1 - 1e-3 * (n + 1))) for n, h in enumerate(lead)]
    rest = [h for h in hits[1:] if (h.path, h.start_line, h.end_line) not in key]
    return [hits[0], *head, *below(rest, head[-1].score)]


def above(head: Sequence[Any], top: float) -> list[Any]:
    """``head`` re-scored just above ``top``, in its order and strictly decreasing (steps of a
    thousandth of ``top``): ``[a, b]`` above 0.5 -> a 0.501, b 0.5005."""
    step = max(abs(top), 1e-6) * 1e-3
    return [replace(h, score=top + (len(head) - n) * step) for n, h in enumerate(head)]
