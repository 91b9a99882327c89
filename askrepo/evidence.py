"""The evidence-first answer: what retrieval found, laid out so a user can act on it, no model.

``evidence_card(question, hits, graph)`` picks the best definition(s) for the question among the
retrieved hits and writes, for each, one line (symbol, ``path:start-end``, kind, signature, the
first sentence of its docstring or leading comment), the lines inside it that carry the
question's terms (with their line numbers), and how the top hits relate (A calls B, B is a
method of C, C is called by D) from the call edges the index already has. Every line ends with
``[n]`` citations whose locations come from the chunks' metadata, never from generated text.

Everything here is pure and deterministic except :func:`gather_graph`, which reads the few
call-graph facts the card needs from the store (``by_symbol``, ``callers``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from py_rust_stemmers import SnowballStemmer

from askrepo.callers import bare_call, shows_owner, visibly_calls
from askrepo.datatypes import CODE, DOC, TEST, last_part, symbol_matches
from askrepo.declarations import is_bodyless, other_declarations
from askrepo.identifiers import STOP_WORDS, split_identifier
from askrepo.lines import span_hash, split_lines
from askrepo.query import SYMBOL, Query, parse_query
from askrepo.ranking import (
    DECORATOR,
    LEAD_COMMENT,
    THIN_BODY,
    best_first,
    body_lines,
    callers_subject,
    definition_line,
    is_constructor,
    mention_factors,
    names_symbol,
    question_names,
    wrapper_callee,
)

DEFINITION_KINDS = ("function", "method", "class")
MAX_DEFINITIONS = 3  # definitions described in full
MAX_KEY_LINES = 3  # relevant lines quoted per definition
MAX_LINE_CHARS = 110
MAX_DOC_CHARS = 200
MAX_SIGNATURE_CHARS = 100
MAX_CALLERS = 2  # callers stated per described definition
MAX_CALLEES = 3  # what a name's definition calls, stated when the question is the name
CALLER_ANSWER = 8  # ... when the question asks for the callers ("what calls X?")
CALLER_POOL = 12  # callers read per top hit, of which the MAX_CALLERS nearest the question
CANDIDATES = 8  # top hits considered for the best definition
# score_candidates: weights of "the question names it", term coverage by the symbol name, by
# the signature + doc, by the whole text, and of the retrieval rank prior (1/rank)
# and of the cosine similarity of the question and the definition's header
W_NAMED, W_NAME, W_HEAD, W_BODY, W_PRIOR, W_SIM = 3.0, 1.5, 1.0, 1.0, 1.0, 1.5
# The retrieval prior: half retrieval's order (1/rank), half its confidence (the hit's score as
# a share of the first hit's), so a near-tie at the top is not read as a 2:1 preference.
PRIOR_RANK_SHARE = 0.5
WINDOW_FACTOR = 0.5  # windows / sections answer "how" questions less often than definitions
CLASS_FACTOR = 0.6  # a class header whose method is also a candidate
CONSTRUCTOR_FACTOR = 0.6  # a constructor, when another function or method is a candidate
SCOPE_BOOST, SCOPE_PENALTY = 1.5, 0.6  # tests / docs, for questions about them / not
KEY_LINE_SHARE = 0.5  # a key line carries at least this share of the best line's weight
KEY_LINE_MIN = 0.15  # ... and at least this share of the whole question's weight
CLOSE_ENOUGH = 0.8  # a runner-up is described in full when its score is ≥ this share of the best
SEE_ALSO = 3  # retrieved definitions the card neither describes nor relates, named at its end

# Words that say what kind of answer is wanted, not what it is about.
QUESTION_WORDS = frozenset(
    """
    implement implemented implementation implements defined define definition defines located
    locate location happen happens code codebase base function functions method methods class
    classes module modules file files behavior behaviour logic responsible repository repo
    work works handle handles handled take takes make makes line lines exactly place
    explain explains describe describes overview
    """.split()
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOCSTRING_OPEN = re.compile(r'^\s*[rRuUbB]{0,2}("""|\'\'\'|"|\')')
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!?](?=\s|$)")


# ------------------------------------------------------------------------------------------
# Terms

_SNOWBALL = SnowballStemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem of ``word`` in lower case: "completion" and
    "complete", "connection" and "connect", "merged" and "merges" meet (the retriever's crude
    ``identifiers.stem`` keeps them apart; measured on the card only, see docs/ask.md)."""
    return _SNOWBALL.stem_word(word.lower())


def terms_of(text: str) -> list[str]:
    """Stemmed content terms of ``text``: identifier parts, plus the joined form of compounds.

    ``lookup_default`` gives ``lookup``, ``default`` and ``lookupdefault``; stop words and
    terms shorter than 3 characters are dropped. Cached: the same chunks come back query after
    query (the ``evidence`` ranking stage reads them on every search).
    """
    return list(_terms(text))


@lru_cache(maxsize=2048)
def _terms(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for tok in _WORD.findall(text):
        parts = split_identifier(tok) or [tok.lower()]
        for p in parts:
            if len(p) >= 3 and p not in STOP_WORDS:
                out.append(stem(p))
        if len(parts) > 1:
            out.append("".join(parts))
    return tuple(out)


def question_terms(question: str) -> list[str]:
    """The question's terms in order, without duplicates and without question words."""
    out: dict[str, None] = {}
    for t in terms_of(question):
        if t not in QUESTION_WORDS and stem(t) not in {stem(q) for q in QUESTION_WORDS}:
            out[t] = None
    return list(out)


def project_terms(name: str | None) -> set[str]:
    """The stemmed words of a repository's directory name, without version numbers:
    ``click-8.4.1`` -> {"click"}, ``capacitor-android`` -> {"capacitor", "android"}."""
    words = re.findall(r"[A-Za-z]{3,}", name or "")
    return {t for w in words for t in terms_of(w)}


def term_weights(terms: Sequence[str], texts: Sequence[str]) -> dict[str, float]:
    """IDF of each term over ``texts`` (the candidates): ``ln(1 + N / df)``, 0 when absent.

    A term every candidate contains still counts (ln 2); one only a single candidate has counts
    most. Terms no candidate contains get 0: they cannot tell candidates apart.
    """
    sets = [set(terms_of(t)) for t in texts]
    n = len(sets)
    weights: dict[str, float] = {}
    for t in terms:
        df = sum(1 for s in sets if t in s)
        weights[t] = math.log(1 + n / df) if df else 0.0
    return weights


def coverage(found: Iterable[str], weights: dict[str, float]) -> float:
    """Weighted share of the question's (weighted) terms that are in ``found``."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    have = set(found)
    return sum(w for t, w in weights.items() if t in have) / total


# ------------------------------------------------------------------------------------------
# Reading a definition


def signature_of(text: str, symbol: str | None) -> str | None:
    """The definition's header from its text: the defining line, continued while brackets are
    open (at most 40 lines), whitespace collapsed, without the trailing ``:`` / ``{``.

    >>> signature_of("@cache\\ndef f(a,\\n      b=1) -> int:\\n    return a", "f")
    'def f(a, b=1) -> int'
    """
    lines = split_lines(text)
    if not lines:
        return None
    i, j = signature_span(lines, symbol)
    parts = [line.strip() for line in lines[i:j]]
    sig = " ".join(" ".join(parts).split())
    sig = re.sub(r"([(\[]) ", r"\1", sig)
    sig = re.sub(r",? ([)\]])", r"\1", sig)
    sig = re.sub(r"\s*[:{]\s*$", "", sig).rstrip()
    if len(sig) > MAX_SIGNATURE_CHARS:
        sig = sig[: MAX_SIGNATURE_CHARS - 1].rstrip() + "…"
    return sig or None


def shown_header_lines(lines: Sequence[str], symbol: str | None, signature: str) -> list[int]:
    """Indexes of the header lines (``signature_span``) whose text the shown ``signature``
    holds: all of them unless it was cut short (``…``), then those before the cut.

    >>> header = ["fn f(", "    a: u8,", ") -> Result<Long, Error> {"]
    >>> shown_header_lines(header, "f", "fn f(a: u8) -> Re…")
    [0, 1]
    """
    i, j = signature_span(lines, symbol)
    if not signature.endswith("…"):
        return list(range(i, j))
    flat = "".join(signature[:-1].split())
    return [n for n in range(i, j) if "".join(lines[n].split()).rstrip(":{,") in flat]


def signature_span(lines: Sequence[str], symbol: str | None, limit: int = 40) -> tuple[int, int]:
    """``(i, j)``: the definition's header is ``lines[i:j]`` — the defining line, continued
    while brackets are open (at most ``limit`` lines).

    >>> signature_span(["@cache", "def f(a,", "      b=1) -> int:", "    return a"], "f")
    (1, 3)
    """
    i = definition_line(lines, symbol)
    depth = 0
    end = i + 1
    for j, line in enumerate(lines[i : i + limit], i):
        end = j + 1
        body_open = line.rstrip().endswith("{")  # a brace that opens the body, not a bracket
        for ch in line.rstrip()[:-1] if body_open else line:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
        if depth <= 0 and not line.rstrip().endswith(("(", ",", "\\")):
            break
    return i, min(end, len(lines))


def fragments(lines: Sequence[str], symbol: str | None) -> list[int]:
    """Indexes of the lines of a multi-line header that are pieces of a bracket, not a whole
    parameter: ``click_type: Annotated[`` or ``[Context, Parameter, str],``. Not key lines:
    a line that is a whole parameter (``lazy: bool | None = None,``) says something.

    >>> fragments(["def f(", "    a: Annotated[", "        int, Doc('x')],", "    b=1,", "):"], "f")
    [1, 2, 4]
    """
    i, j = signature_span(lines, symbol, limit=len(lines))
    out = []
    for k in range(i + 1, j):
        line = lines[k]
        if sum(line.count(c) for c in "([{") != sum(line.count(c) for c in ")]}"):
            out.append(k)
    return out


_COMMENT_MARK = re.compile(r"^\s*(?:/\*+|\*+/?|//[/!]?|#+|--+|;+)?\s?")


def example_lines(lines: Sequence[str]) -> list[int]:
    """Indexes of the lines that are example code written into documentation: inside a fenced
    block (```` ``` ```` or ``~~~``) of a comment or docstring, the fence lines included, a
    doctest line (``>>> f(1)``, ``... x``), and a JSDoc ``@example`` block. They show how the
    code is called, not what it does, so they are no key lines (rustdoc's
    ``/// let mut map = HeaderMap::new();`` or its hidden ``/// # use http::HeaderMap;``).

    >>> example_lines(["/// Sum.", "/// ```", "/// let x = add(1, 2);", "/// ```", "fn add() {"])
    [1, 2, 3]
    >>> example_lines(["    Sum two numbers:", "    >>> add(1, 2)", "    3", "    return a"])
    [1]
    >>> example_lines(["/**", " * Sum.", " * @example", " * add(1, 2)", " * @param a", " */"])
    [2, 3]
    """
    out: list[int] = []
    fence = example = False
    for i, line in enumerate(lines):
        comment = bool(LEAD_COMMENT.match(line))
        content = _COMMENT_MARK.sub("", line, count=1).strip() if comment else line.strip()
        if content.startswith(("```", "~~~")):
            fence = not fence
            out.append(i)
            continue
        if example and (not comment or content.startswith("@") or line.rstrip().endswith("*/")):
            example = False
        if fence or example or content.startswith((">>> ", "... ")) or content == ">>>":
            out.append(i)
        elif comment and content.startswith("@example"):
            example = True
            out.append(i)
    return out


def first_sentence(text: str, limit: int = MAX_DOC_CHARS) -> str:
    """The first sentence of ``text`` (whitespace collapsed), at most ``limit`` characters.

    >>> first_sentence("Open a file.  Lazy when asked, e.g. for writing.")
    'Open a file.'
    >>> first_sentence("Return the value (e.g. a default) for name.")
    'Return the value (e.g. a default) for name.'
    """
    flat = " ".join(text.split())
    m = _SENTENCE_END.search(flat)
    out = flat[: m.end()] if m else flat
    if len(out) > limit:
        cut = out[:limit].rsplit(" ", 1)[0]
        out = cut.rstrip(",;:") + "…"
    return out


def leading_doc(text: str, symbol: str | None) -> str | None:
    """The definition's own description: its docstring (Python) or the comment block right
    above it (``#``, ``//``, ``///``, ``/** */``, ``--``) or, after a Python-style header, at
    the start of its body; paragraph one.

    >>> leading_doc("// Sum two numbers.\\nfunc Add(a, b int) int {", "Add")
    'Sum two numbers.'
    >>> leading_doc("/**\\n * Sum two numbers.\\n */\\n\\nadd(a, b) {", "add")
    'Sum two numbers.'
    """
    lines = split_lines(text)
    if not lines:
        return None
    i = definition_line(lines, symbol)
    if symbol is None and _DOCSTRING_OPEN.match(lines[i]):  # a module docstring
        doc = _docstring(lines, i)
        return first_sentence(doc) if doc else None
    # a comment block just above the definition (decorators may sit between)
    above: list[str] = []
    j = i - 1
    while j >= 0 and DECORATOR.match(lines[j]):
        j -= 1
    if j >= 1 and not lines[j].strip() and lines[j - 1].rstrip().endswith("*/"):
        j -= 1  # a /** */ block one blank line above (as the chunker attaches it)
    while j >= 0 and LEAD_COMMENT.match(lines[j]):
        above.insert(0, lines[j])
        j -= 1
    # a docstring: the first statement after the header
    body = i + 1
    depth = 0
    for k in range(i, min(i + 40, len(lines))):
        depth += sum(lines[k].count(c) for c in "([{") - sum(lines[k].count(c) for c in ")]}")
        if depth <= 0:
            body = k + 1
            break
    while body < len(lines) and not lines[body].strip():
        body += 1
    doc = _docstring(lines, body) if body < len(lines) else None
    if doc is None and above:
        doc = _comment_text(above)
    # a comment opening the body stands for a docstring only after a Python-style header
    # (``def f():``); after a brace it is a note on the first statement ("// Adjust max param")
    header_end = lines[body - 1].split("#")[0].rstrip() if body >= 1 else ""
    if (
        doc is None
        and header_end.endswith(":")
        and body < len(lines)
        and LEAD_COMMENT.match(lines[body])
    ):
        block = []
        while body < len(lines) and LEAD_COMMENT.match(lines[body]):
            block.append(lines[body])
            body += 1
        doc = _comment_text(block)
    if not doc:
        return None
    sentence = first_sentence(doc)
    return sentence if len(sentence) >= 3 else None


def _docstring(lines: Sequence[str], i: int) -> str | None:
    m = _DOCSTRING_OPEN.match(lines[i])
    if not m:
        return None
    quote = m.group(1)
    rest = lines[i][m.end() :]
    collected: list[str] = []
    k = i
    while True:
        end = rest.find(quote)
        if end >= 0:
            collected.append(rest[:end])
            break
        collected.append(rest)
        k += 1
        if k >= len(lines) or len(quote) == 1:
            break
        rest = lines[k]
    return _first_paragraph(collected)


def _comment_text(block: Sequence[str]) -> str | None:
    cleaned: list[str] = []
    for line in block:
        s = line.strip()
        s = re.sub(r"^(?:/\*+|\*+/|\*+|///?|#+|-{2,}|;+)\s?", "", s)  # ** (Lua), --- (LDoc)
        s = re.sub(r"\*+/\s*$", "", s).strip()
        if s.startswith("@") or s.startswith("!"):  # JSDoc tags, shebang-like lines
            continue
        cleaned.append(s)
    return _first_paragraph(cleaned)


def _first_paragraph(lines: Sequence[str]) -> str | None:
    para: list[str] = []
    for line in lines:
        if not line.strip():
            if para:
                break
            continue
        para.append(line.strip())
    text = " ".join(para).strip()
    return text or None


def key_lines(
    text: str,
    start_line: int,
    weights: dict[str, float],
    *,
    skip: Iterable[int] = (),
    limit: int,
    known: Iterable[str] = (),
) -> list[tuple[int, str]]:
    """The ``limit`` lines of a chunk that carry the most question-term weight, in line order.

    Returns ``(line number, stripped line)``; lines in ``skip`` (line numbers), blank lines and
    lines longer than MAX_LINE_CHARS are left out. A line must carry at least KEY_LINE_SHARE of
    the best line's weight and KEY_LINE_MIN of the question's, and two of the question's
    terms or one that is not in ``known`` (the symbol's own name parts: ``for h in hits`` says
    nothing new about ``merge_hits``); comments lose ties to code.
    """
    skipped = set(skip)
    named = set(known)
    scored: list[tuple[float, int, str]] = []
    for i, line in enumerate(split_lines(text)):
        n = start_line + i
        s = line.strip()
        if n in skipped or not s or len(s) > MAX_LINE_CHARS:
            continue
        found = {t for t in terms_of(s) if weights.get(t, 0) > 0}
        if not found or (len(found) < 2 and found <= named):
            continue
        score = sum(weights[t] for t in found)
        if LEAD_COMMENT.match(line):
            score *= 0.9
        scored.append((score, n, s))
    top = max((x[0] for x in scored), default=0.0)
    floor = max(KEY_LINE_SHARE * top, KEY_LINE_MIN * sum(weights.values()))
    scored = [x for x in scored if x[0] >= floor]
    best = sorted(scored, key=lambda x: (-x[0], x[1]))[:limit]
    return [(n, s) for _, n, s in sorted(best, key=lambda x: x[1])]


# ------------------------------------------------------------------------------------------
# The card


@dataclass
class Graph:
    """Call-graph facts from the index that the card may state.

    ``definitions``: name (last part of a symbol) → how many definitions have it, a method a
    trait or interface declares without a body included (``askrepo.declarations``): a call
    edge by name is stated only when the name is defined once, so it cannot be another
    ``commit``.
    ``classes``: class name → every class chunk so named (to cite "B is a method of C": the one
    in B's file is B's class).
    ``callers``: symbol → chunks that call it.
    ``signatures``: ``(path, start_line)`` → signature stored in the index.
    ``external``: path → the names its file imports from outside the repository
    (``imports.external_names``), so ``from html import escape`` is not taken for the index's
    own ``escape``.
    """

    definitions: dict[str, int] = field(default_factory=dict)
    classes: dict[str, list[Any]] = field(default_factory=dict)
    callers: dict[str, list[Any]] = field(default_factory=dict)
    signatures: dict[tuple[str, int], str] = field(default_factory=dict)
    external: dict[str, frozenset[str]] = field(default_factory=dict)  # path -> imported names


def _external(a: Any, name: str, graph: Graph) -> bool:
    """Whether ``a``'s calls of ``name`` all reach a module outside the repository, by its
    file's imports (``askrepo.imports``): then it does not call the index's ``name``."""
    names = graph.external.get(a.path)
    if not names:
        return False
    from askrepo.imports import external_call

    return external_call(getattr(a, "text", "") or "", name, names)


@dataclass
class Source:
    """One numbered piece of evidence: a chunk (or hit) described by the card."""

    n: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    signature: str | None = None
    doc: str | None = None
    lines: list[tuple[int, str]] = field(default_factory=list)
    score: float = 0.0
    text: str = ""
    role: str = "definition"  # definition | related | see_also
    calls: list[str] = field(default_factory=list)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    @property
    def hash(self) -> str:
        return span_hash(split_lines(self.text)[: self.end_line - self.start_line + 1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "kind": self.kind,
            "signature": self.signature,
            "doc": self.doc,
            "lines": [{"line": n, "text": s} for n, s in self.lines],
            "role": self.role,
        }


@dataclass
class Relation:
    text: str  # markdown, ends with its citations
    citations: list[int]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "citations": list(self.citations)}


@dataclass
class EvidenceCard:
    question: str
    sources: list[Source]
    relations: list[Relation]
    text: str  # the card as markdown
    missing: list[str] = field(default_factory=list)  # question words no candidate contains
    nowhere: list[str] = field(default_factory=list)  # ... nor any indexed file, in any form
    notes: list[str] = field(default_factory=list)  # sentences after the lead (no citations)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": [s.to_dict() for s in self.sources],
            "relations": [r.to_dict() for r in self.relations],
            "missing": list(self.missing),
            "nowhere": list(self.nowhere),
            "notes": list(self.notes),
        }


def header_text(h: Any, graph: Graph | None = None) -> str:
    """What a definition says about itself: its name in words, the first sentence of its doc
    and its signature (for a window: its path and doc). Compared with the question by the
    embedding model (``similarity`` in :func:`score_candidates`)."""
    sym = h.symbol or ""
    doc = leading_doc(h.text, h.symbol) or ""
    if not sym:
        return f"{h.path}. {doc}".strip()
    words = " ".join(" ".join(split_identifier(p)) for p in sym.split("."))
    sig = (graph.signatures.get((h.path, h.start_line)) if graph else None) or signature_of(
        h.text, sym
    )
    return f"{words}. {doc} {sig or ''}".strip()


def score_candidates(
    question: str,
    hits: Sequence[Any],
    weights: dict[str, float],
    graph: Graph | None = None,
    similarity: Sequence[float] | None = None,
    parsed: Query | None = None,
) -> list[float]:
    """How well each hit answers the question (higher is better), one score per hit.

    ``3·named + 1.5·name + 1·head + 1·body + prior + 1.5·sim``: ``named`` = the question
    names the hit's symbol (or its last part); ``name`` / ``head`` / ``body`` = weighted
    coverage of the question's terms by the symbol's parts, by its signature + leading doc, and
    by its whole text; ``prior`` (:func:`retrieval_prior`) keeps retrieval's order and
    confidence; ``sim`` = cosine of the
    question and the hit's :func:`header_text` (when given). Non-definitions (windows,
    sections) get WINDOW_FACTOR of that, except documentation sections for a question about
    the docs; test and doc chunks of a question that only mentions tests / docs get
    ``ranking.mention_factors`` (as in retrieval); a class header whose method is also a
    candidate gets
    CLASS_FACTOR, and its methods inherit half the bonus of a question naming the class; a
    constructor gets CONSTRUCTOR_FACTOR when another function or method is a candidate
    (``_constructors``).

    A question that is one bare name (``Router``, ``HttpClient.send``: a symbol query), or
    that only asks where one is ("where is Console defined?"), keeps retrieval's order (the
    score is ``1/rank``): the retriever's ``defs`` stage has already put
    that name's best definition first, with evidence the card does not have (path priors, file
    names, every definition in the index), where the card would prefer a method or a namesake
    whose last part matches (``Echo.Router`` over the ``Router`` type).

    Last, a thin wrapper swaps scores with a longer candidate it calls (``_delegate``).
    ``parsed``: the question's ``Query`` when the caller has it (else it is parsed here).
    """
    parsed = parsed or parse_query(question)
    if parsed.kind == SYMBOL or parsed.asks_definition:  # "Router", "where is Console defined?"
        return [round(W_PRIOR / rank, 6) for rank in range(1, len(hits) + 1)]
    named = question_names(parsed)
    graph = graph or Graph()
    priors = retrieval_prior([h.score for h in hits])
    about_tests, about_docs = parsed.about_tests, parsed.about_docs
    mentioned = (parsed.mentions_tests, parsed.mentions_docs)
    # tests / docs a question only mentions are held back as retrieval's ``mentions`` stage
    # holds them back ("how does the walker decide whether a file is a test?" asks for code)
    held_back = mention_factors(hits, parsed)
    scores: list[float] = []
    for rank, h in enumerate(hits, 1):
        sym = h.symbol or ""
        exact = 1.0 if names_symbol(named, sym) else 0.0
        file_class = getattr(h, "file_class", CODE)
        if about_docs and file_class == DOC and not exact and named:
            # a question about the docs that names X: the section showing X is named by it
            exact = 1.0 if any(_mentions(h.text, n) for n in named) else 0.0
        name_cov = coverage(terms_of(sym), weights)
        sig = graph.signatures.get((h.path, h.start_line)) or signature_of(h.text, sym) or ""
        head = f"{sig} {leading_doc(h.text, sym) or ''}"
        head_cov = coverage(terms_of(head), weights)
        body_cov = coverage(terms_of(h.text), weights)
        s = W_NAMED * exact + W_NAME * name_cov + W_HEAD * head_cov + W_BODY * body_cov
        s += W_PRIOR * priors[rank - 1]
        if similarity is not None and rank - 1 < len(similarity):
            s += W_SIM * similarity[rank - 1]
        # a documentation section is the unit of answer to a question about the docs
        if h.kind not in DEFINITION_KINDS and not (about_docs and file_class == DOC):
            s *= WINDOW_FACTOR
        s *= _class_factor(file_class, about_tests, about_docs, mentioned) * held_back[rank - 1]
        scores.append(s)
    # A class declaration holds no behaviour of its own: when a function or method is a
    # candidate too, that is the better answer to a question about what the code does. A class
    # the question names keeps its score, unless one of its own methods is a candidate (which
    # then inherits half the bonus of the name).
    callables = any(m.kind in ("function", "method") for m in hits)
    for i, h in enumerate(hits):
        if h.kind != "class" or not h.symbol:
            continue
        members = [j for j, m in enumerate(hits) if (m.symbol or "").startswith(h.symbol + ".")]
        is_named = names_symbol(named, h.symbol)
        if is_named:
            for j in members:
                scores[j] += W_NAMED * 0.5
        if members or (callables and not is_named):
            scores[i] *= CLASS_FACTOR
    _constructors(hits, scores, named)
    _delegate(hits, scores, graph, callers_subject(parsed))
    return [round(s, 6) for s in scores]


def _constructors(hits: Sequence[Any], scores: list[float], named: Collection[str]) -> None:
    """A constructor sets its object up; its parameters repeat the question's words, but the
    behaviour asked about is in some other function or method. When one (not a constructor,
    and not a later part of this one) is a candidate too, the constructor's score is
    multiplied by CONSTRUCTOR_FACTOR (in place), unless the question names it.
    ``SocketHandler.__construct`` lists every option of "keep a persistent socket connection
    open and retry partial writes"; ``SocketHandler.writeToSocket`` does it."""
    for i, h in enumerate(hits):
        sym = h.symbol or ""
        if h.kind != "method" or not is_constructor(sym, h.path):
            continue
        if names_symbol(named, sym):
            continue
        others = (
            m.kind in ("function", "method")
            and m.symbol != sym
            and not is_constructor(m.symbol, m.path)
            for m in hits
        )
        if any(others):
            scores[i] *= CONSTRUCTOR_FACTOR


def retrieval_prior(scores: Sequence[float], rank_share: float | None = None) -> list[float]:
    """Retrieval's prior for each hit (best first): ``a/rank + (1 - a)·score/first score``
    (``a`` = PRIOR_RANK_SHARE). ``1/rank`` alone reads any order as 1 : 1/2 : 1/3; the score
    share says how close the runners-up came. Without positive scores, ``1/rank``.

    >>> retrieval_prior([0.032, 0.031, 0.016])  # rank 2 nearly tied with rank 1
    [1.0, 0.734375, 0.416667]
    >>> retrieval_prior([1.0, 0.5, 1 / 3])  # scores that fall as 1/rank: the prior is 1/rank
    [1.0, 0.5, 0.333333]
    """
    a = PRIOR_RANK_SHARE if rank_share is None else rank_share
    best = scores[0] if scores else 0.0
    if best <= 0:
        return [round(1 / r, 6) for r in range(1, len(scores) + 1)]
    return [round(a / r + (1 - a) * max(0.0, s / best), 6) for r, s in enumerate(scores, 1)]


def _delegate(
    hits: Sequence[Any], scores: list[float], graph: Graph, named: Collection[str] = ()
) -> None:
    """A thin wrapper hands its place to the function it calls (in place on ``scores``).

    A function or method whose body is at most THIN_BODY code lines and that calls a longer
    candidate definition of the same file class (``ranking.wrapper_callee``) which scored
    lower swaps scores with it: ``launch(url)`` that returns ``open_url(url)``, or
    ``Proxy(b)`` that returns ``ProxyWithConfig(c)``, says where to look; the callee is the
    code that does it. The callee's name must be unique in the index or defined in the
    wrapper's file. Each wrapper hands over once, to its best-ranked such callee. A wrapper
    named by a question that asks for its callers (``named``) keeps its score.
    """
    lengths = [body_lines(h.text, h.symbol, THIN_BODY) for h in hits]

    def resolves(a: Any, b: Any) -> bool:
        # a ranking hint, not a claim: a name in the same file is enough (KeyPair.sign's
        # ``st.finalize()`` is the Signer's: dev card@1 284 vs 283 with ``_calls_in_file``)
        return graph.definitions.get(last_part(b.symbol), 1) == 1 or a.path == b.path

    for i in range(len(hits)):
        lower = [j for j in range(len(hits)) if scores[j] < scores[i]]
        j = wrapper_callee(hits, i, lower, lengths, resolves, named)
        if j is not None:
            scores[i], scores[j] = scores[j], scores[i]


def _mentions(text: str, name: str) -> bool:
    """``name`` (or its last dotted part) as a whole word in ``text``."""
    last = last_part(name)
    return bool(last) and re.search(rf"(?<![\w.]){re.escape(last)}(?!\w)", text) is not None


def _class_factor(
    file_class: str,
    about_tests: bool,
    about_docs: bool,
    mentioned: tuple[bool, bool] = (False, False),
) -> float:
    """Tests and docs answer a question that asks for tests / docs; a question that only
    mentions them (``Query.mentions_tests`` / ``mentions_docs``: "how is a question about tests
    detected?") is neutral about them here (``ranking.mention_factors`` holds them back, as in
    retrieval); otherwise code answers."""
    if file_class == TEST:
        return 1.0 if mentioned[0] else SCOPE_BOOST if about_tests else SCOPE_PENALTY
    if file_class == DOC:
        return 1.0 if mentioned[1] else SCOPE_BOOST if about_docs else SCOPE_PENALTY
    return 1.0


def _md_code(s: str) -> str:
    """``s`` as inline code, with a fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _cite(*ns: int) -> str:
    return "".join(f"[{n}]" for n in dict.fromkeys(ns))


KIND_LABELS = {"window": "module-level code", "section": "section", "text": "text"}


def _name(s: Source) -> str:
    return _md_code(s.symbol) if s.symbol else f"the {_kind(s)} of {s.path}"


def _kind(s: Source) -> str:
    return KIND_LABELS.get(s.kind, s.kind)


def _describe(s: Source) -> list[str]:
    head = f"{_name(s)} ({_kind(s)}, {_md_code(s.location)})"
    if s.signature and s.kind in DEFINITION_KINDS:
        sig = s.signature
        if len(sig) > MAX_SIGNATURE_CHARS:
            sig = sig[: MAX_SIGNATURE_CHARS - 1].rstrip() + "…"
        head += f": {_md_code(sig)}"
    head += f" {_cite(s.n)}"
    out = [head]
    if s.doc:
        out.append(f"   - {_doc_line(s.doc)} {_cite(s.n)}")
    for n, line in s.lines:
        out.append(f"   - line {n}: {_md_code(line)} {_cite(s.n)}")
    return out


def _doc_line(doc: str) -> str:
    return f"doc: {doc.strip()}"


def evidence_card(
    question: str,
    hits: Sequence[Any],
    graph: Graph | None = None,
    *,
    k: int = CANDIDATES,
    similarity: Sequence[float] | None = None,
    project: str | None = None,
) -> EvidenceCard:
    """The deterministic answer for ``question`` from ``hits`` (rank order) and ``graph``.

    Sources are numbered in the order the card cites them: the best definition is [1].
    ``similarity``: the question's cosine with each hit's :func:`header_text` (optional).
    ``project``: the repository's directory name; the words of it (``project_terms``) are not
    question terms: "how does Click decide…" is about the behaviour, and the few candidates
    whose text happens to say "click" are not more relevant for it.
    """
    graph = graph or Graph()
    cands = list(hits[:k])
    parsed = parse_query(question)
    weights, unseen = question_weights(question, cands, project, parsed)
    if not cands:
        return EvidenceCard(question, [], [], "")
    scores = score_candidates(question, cands, weights, graph, similarity, parsed)
    order = best_first(scores)
    best = scores[order[0]]
    chosen = [order[0]]
    # "what calls X?": the runners-up must be an X too (``Context.invoke``: not Command's)
    subject = [*parsed.identifiers, *parsed.named] if parsed.asks_callers else []
    # a type asked for by name: its largest methods, which retrieval's ``members`` stage
    # placed right after it, are its API (``Basic`` -> ``print_table``, ``ask``)
    type_asked = parsed.kind == SYMBOL and cands[order[0]].kind == "class"
    for i in order[1:]:
        if len(chosen) >= MAX_DEFINITIONS:
            break
        sym = cands[i].symbol or ""
        if subject and not any(symbol_matches(sym, n) for n in subject):
            continue
        if any(_same_definition(cands[i], cands[j]) for j in chosen):
            continue  # another window of a long definition already described
        # a bare name several definitions share (hyper's three `Builder` structs): each of them
        # (the very name, not a method `Echo.Router` that ends with it)
        namesake = parsed.kind == SYMBOL and sym == parsed.symbol
        member = type_asked and bool((getattr(cands[i], "sources", None) or {}).get("member"))
        close = scores[i] >= CLOSE_ENOUGH * best
        if (close or namesake or member) and cands[i].kind in DEFINITION_KINDS:
            chosen.append(i)

    sources: list[Source] = []
    for i in chosen:
        h = cands[i]
        sig = graph.signatures.get((h.path, h.start_line)) or signature_of(h.text, h.symbol)
        if sig and not _shows(h.text, sig):
            sig = None  # a later part of a long definition: its header is not in these lines
        lines = split_lines(h.text)
        def_at = h.start_line + definition_line(lines, h.symbol)
        doc = leading_doc(h.text, h.symbol)
        skip = [def_at] + [
            h.start_line + j for j, ln in enumerate(lines) if doc and _in_doc(ln, doc)
        ]
        if sig:  # the header's other lines, as far as the card shows them
            skip += [h.start_line + j for j in shown_header_lines(lines, h.symbol, sig)]
        skip += [h.start_line + j for j in fragments(lines, h.symbol)]
        skip += [h.start_line + j for j in example_lines(lines)]
        sources.append(
            Source(
                n=len(sources) + 1,
                path=h.path,
                start_line=h.start_line,
                end_line=h.end_line,
                symbol=h.symbol,
                kind=h.kind,
                signature=sig,
                doc=doc,
                lines=key_lines(
                    h.text,
                    h.start_line,
                    weights,
                    skip=skip,
                    limit=MAX_KEY_LINES,
                    known=terms_of(h.symbol or ""),
                ),
                score=scores[i],
                text=h.text,
                calls=list(getattr(h, "calls", None) or []),
            )
        )
    others = [cands[i] for i in order if i not in chosen]
    relations = _relations(
        sources,
        others,
        graph,
        weights,
        CALLER_ANSWER if parsed.asks_callers else None,
        callees=parsed.kind == SYMBOL or parsed.asks_definition,
    )
    if not (parsed.asks_callers or parsed.asks_definition or parsed.kind == SYMBOL):
        _see_also(cands, sources)  # a name asked for: its definition, not other places
    missing = words_for(question, unseen)
    notes = _callers_unknown(sources, relations, graph) if parsed.asks_callers else []
    text = render_card(sources, relations, missing, notes=notes)
    return EvidenceCard(question, sources, relations, text, missing, notes=notes)


def _callers_unknown(sources: Sequence[Source], relations: Sequence[Relation], graph: Graph):
    """For "what calls X?" when the card states no caller of the X it shows because X's name
    is defined more than once (a trait method every service implements) and no call shows
    which definition it reaches: the one sentence that says so and where the calls are."""
    defs = [s for s in sources if s.role == "definition" and s.symbol]
    if not defs:
        return []
    name = last_part(defs[0].symbol)
    count = graph.definitions.get(name, 1)
    stated = any(f" calls {_md_code(s.symbol)} " in r.text for r in relations for s in defs)
    calls = any(graph.callers.get(s.symbol) for s in defs)
    if stated or count < 2 or not calls:
        return []
    return [
        f"{_md_code(name)} is defined {count} times, and no call of it shows which definition "
        f"it reaches; `askrepo callers {name}` lists every call."
    ]


# "what calls X?": the words that ask for callers are not terms the code should show
CALLER_WORDS = frozenset(stem(w) for w in "call calls called caller callers use uses used".split())
CALLER_WORDS |= {stem(w) for w in "invoke invokes invoked".split()}


# Words that open a clause saying *when* the thing asked about happens ("where are secrets
# redacted before indexing?"): the terms after one set the scene, the ones before it name the
# behaviour, so in the card's scoring they weigh CLAUSE_FACTOR of their IDF.
CLAUSE_WORDS = frozenset({"before", "after", "during", "while", "until"})
CLAUSE_FACTOR = 0.5


def clause_terms(question: str) -> set[str]:
    """The terms of ``question`` that appear only after a CLAUSE_WORDS word (the part that
    says when, not what), when at least two terms come before it.

    >>> sorted(clause_terms("Where are secrets redacted before indexing?"))
    ['index']
    >>> clause_terms("what runs before the request?") == set()  # the request is the subject
    True
    """
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", question)
    at = next((i for i, w in enumerate(words) if w.lower() in CLAUSE_WORDS), None)
    if at is None:
        return set()
    head = set(question_terms(" ".join(words[:at])))
    if len(head) < 2:
        return set()
    return set(question_terms(" ".join(words[at + 1 :]))) - head


def question_weights(
    question: str, cands: Sequence[Any], project: str | None = None, parsed: Query | None = None
) -> tuple[dict[str, float], set[str]]:
    """(weights, unseen): the IDF weight over ``cands`` of each question term that some
    candidate has (``term_weights``; the repository's own name is not a term,
    ``project_terms``, nor, in a question asking for callers, CALLER_WORDS), and the terms
    none has."""
    own = project_terms(project)
    if (parsed or parse_query(question)).asks_callers:
        own |= CALLER_WORDS
    terms = [t for t in question_terms(question) if t not in own]
    weights = term_weights(terms, [f"{h.symbol or ''}\n{h.text}" for h in cands])
    for t in clause_terms(question) & weights.keys():
        weights[t] *= CLAUSE_FACTOR
    unseen = {t for t, w in weights.items() if w == 0}
    return {t: w for t, w in weights.items() if w > 0}, unseen


def lead_candidate(
    question: str,
    hits: Sequence[Any],
    project: str | None = None,
    parsed: Query | None = None,
    k: int = CANDIDATES,
) -> int:
    """Index (among the first ``k`` of ``hits``) of the hit the card would describe first:
    the best ``score_candidates`` without the similarity term (it needs one embedding per
    candidate). 0 when retrieval's first stays first; always 0 for a symbol query or "where
    is X defined?" (the card keeps retrieval's order there)."""
    cands = list(hits[:k])
    if len(cands) < 2:
        return 0
    weights, _ = question_weights(question, cands, project, parsed)
    scores = score_candidates(question, cands, weights, None, None, parsed)
    return best_first(scores)[0]


# Words that qualify a question, not its topic: the card never says the code lacks them ("The
# words around, actual occur nowhere in the indexed files" told the reader nothing).
FILLER_WORDS = frozenset(
    """
    actual actually around really basically generally currently usually typically exactly
    specific specifically certain certainly various overall whole entire given possible possibly
    somewhere anywhere everywhere something anything everything someone anyone thing things
    stuff likely maybe perhaps instead either neither another whatever whenever wherever however
    therefore thus still already always never often sometimes simply mostly mainly
    rather quite pretty correctly properly
    """.split()
)


def words_for(question: str, stems: set[str], limit: int = 4) -> list[str]:
    """The question's own words (4+ letters) whose stems are in ``stems``, in order, without
    the FILLER_WORDS that qualify a question rather than name what it is about.

    >>> words_for("Where does Click load defaults from a YAML file?", {"yaml"})
    ['YAML']
    >>> words_for("Where is the actual YAML loaded around here?", {"actual", "yaml", "around"})
    ['YAML']
    """
    out: list[str] = []
    for tok in re.findall(r"[A-Za-z][A-Za-z0-9]*", question):
        if tok.lower() in FILLER_WORDS:
            continue
        if len(tok) >= 4 and stem(tok) in stems and tok not in out:
            out.append(tok)
    return out[:limit]


def _in_doc(line: str, doc: str) -> bool:
    """Whether a line only repeats (part of) the doc sentence shown above it, or holds that
    whole sentence (``/// Optional pre-release identifier on a version string. This comes``
    under the doc "Optional pre-release identifier on a version string.").

    >>> _in_doc("/// Parse a version. It may", "Parse a version.")
    True
    """
    core = re.sub(r"^\s*(?:[rRuU]?(?:\"\"\"|\'\'\')|#+|//+|/\*+|\*+|--)\s*", "", line).strip()
    if len(core) < 8:
        return False
    return core.rstrip("\"'") in doc or (len(doc) >= 8 and doc in core)


def _shows(text: str, fragment: str) -> bool:
    """Whether ``fragment`` (a signature, maybe cut with "…") is in ``text``, ignoring
    whitespace and a trailing comma before a closing bracket."""

    def squash(x: str) -> str:
        return re.sub(r",(?=[)\]}]|$)", "", re.sub(r"\s+", "", x))

    return squash(fragment.rstrip("…")) in squash(text)


def _same_definition(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are windows of one long definition: same file and symbol, and
    their lines overlap or touch (``ares_send_nolock`` 108-167 and 158-291).

    >>> from types import SimpleNamespace as S
    >>> w = lambda s, e, sym="f": S(path="a.c", symbol=sym, start_line=s, end_line=e)
    >>> _same_definition(w(108, 167), w(158, 291)), _same_definition(w(1, 9), w(20, 30))
    (True, False)
    >>> _same_definition(w(1, 9), w(5, 30, "g"))
    False
    """
    return (
        a.path == b.path
        and bool(a.symbol)
        and a.symbol == b.symbol
        and a.start_line <= b.end_line + 1
        and b.start_line <= a.end_line + 1
    )


def _see_also(hits: Sequence[Any], sources: list[Source], limit: int = SEE_ALSO) -> None:
    """Append (role ``see_also``) up to ``limit`` definitions of ``hits``, in retrieval order,
    that no source already cites (nor another window of): where else to read. The card
    describes what scored best for the question's words; retrieval's next definitions (the
    retry future's ``poll`` when a builder's ``retry`` leads) are named, not described."""
    added = 0
    for h in hits:
        if added >= limit:
            return
        if h.kind not in DEFINITION_KINDS or not h.symbol or any(_covers(s, h) for s in sources):
            continue
        before = len(sources)
        _source_for(h, sources, role="see_also")  # reuses a source of the same definition
        added += len(sources) > before


def _covers(s: Source, h: Any) -> bool:
    """Whether source ``s`` already shows all of ``h``'s lines (a class and its header)."""
    return s.path == h.path and s.start_line <= h.start_line and h.end_line <= s.end_line


def _source_for(chunk: Any, sources: list[Source], role: str = "related") -> Source:
    """The source citing ``chunk``: an existing one for the same lines, or for another window
    of the same long definition (``index_history`` 242-351 described, its window 342-401
    calling ``redact``: one source), else a new one."""
    for s in sources:
        if (s.path, s.start_line, s.end_line) == (chunk.path, chunk.start_line, chunk.end_line):
            return s
    for s in sources:
        if _same_definition(s, chunk):
            return s
    s = Source(
        n=len(sources) + 1,
        path=chunk.path,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        symbol=chunk.symbol,
        kind=chunk.kind,
        text=chunk.text,
        role=role,
        calls=list(getattr(chunk, "calls", None) or []),
    )
    sources.append(s)
    return s


def _shows_call(a: Any, b: Any, unique: Callable[[str], bool]) -> bool:
    """Whether ``a``'s code shows that it calls the definition ``b`` (a name in ``a``'s calls):
    a method through its owner or its own object (``visibly_calls``: ``x.get(`` is any
    ``get``, not ``SessionStore.get``), a function by its bare name when no other definition
    has that name, or as ``_calls_in_file`` tells within one file."""
    name = last_part(b.symbol)
    if "." in (b.symbol or ""):
        owner = b.symbol.rpartition(".")[0]
        return visibly_calls(a, b, unique(last_part(owner))) or _calls_in_file(a, b)
    return (unique(name) and bare_call(a.text, name)) or _calls_in_file(a, b)


def _calls_in_file(a: Any, b: Any) -> bool:
    """Whether ``a`` (same file as ``b``) visibly calls ``b`` when ``b``'s name is defined more
    than once: through what qualifies ``b`` (``Hasher.create(``, ``Hasher::create(``, Lua's
    ``template.compile(``), a method from another method of its class, a function by its bare
    name (``create(``, not ``mac.create(``, which may be any ``create``).

    >>> from types import SimpleNamespace as S
    >>> b = S(path="b.zig", symbol="Hasher.create", kind="method")
    >>> _calls_in_file(S(path="b.zig", symbol="hash", text="Hmac.create(&out)"), b)
    False
    >>> _calls_in_file(S(path="b.zig", symbol="strHash", text="return Hasher.create(pw)"), b)
    True
    """
    if a.path != b.path:
        return False
    text = getattr(a, "text", "") or ""
    owner, _, name = (b.symbol or "").rpartition(".")
    if owner:
        if b.kind == "method" and (a.symbol or "").rpartition(".")[0] == owner:
            return True
        if shows_owner(text, last_part(owner), name):  # the owner's own name
            return True
        if b.kind == "method":
            return False
    return bare_call(text, name)


def _relations(
    sources: list[Source],
    others: Sequence[Any],
    graph: Graph,
    weights: dict[str, float] | None = None,
    max_callers: int | None = None,
    callees: bool = False,
) -> list[Relation]:
    """A calls B (both among the top hits), B is a method of C, B is called by D (the callers
    whose path, name and doc carry most of the question's ``weights`` first: ``_chunk_file``
    in ``indexer.py`` before ``_view`` in ``grep.py`` for "where are secrets redacted before
    indexing?"). With ``max_callers`` (a question that asks for the callers) the callers come
    first, up to that many. With ``callees`` (a question that is a name: the card describes
    only its definition) also what the definition calls among the other top hits, up to
    MAX_CALLEES: ``ares_send`` calls ``ares_send_nolock``."""
    out: list[Relation] = []
    seen: set[str] = set()

    def add(text: str, cites: list[int], key: str) -> None:
        if key not in seen:
            seen.add(key)
            out.append(Relation(f"{text} {_cite(*cites)}.", list(dict.fromkeys(cites))))

    defs = list(sources)
    pool: list[Any] = [*defs, *[o for o in others if o.kind in DEFINITION_KINDS]]

    def unique(name: str) -> bool:
        return graph.definitions.get(name, 1) == 1

    def calls_among() -> None:
        # A calls B, among the described definitions and the other top hits
        for a in pool:
            a_calls = list(getattr(a, "calls", None) or [])
            for b in defs:
                if a is b or not b.symbol or not a.symbol or a.symbol == b.symbol:
                    continue  # an overload calling another says nothing new
                name = last_part(b.symbol)
                if (
                    name in a_calls
                    and f"{a.symbol} calls {b.symbol}" not in seen
                    and (unique(name) or _calls_in_file(a, b))
                    and not _external(a, name, graph)
                ):
                    sa = a if isinstance(a, Source) else _source_for(a, sources)
                    where = _md_code(sa.location)
                    add(
                        f"{_md_code(sa.symbol or '')} ({where}) calls {_md_code(b.symbol)}",
                        [sa.n, b.n],
                        f"{sa.symbol} calls {b.symbol}",
                    )

    def callees_of() -> None:
        # what the best definition calls among the other top hits (rank order)
        a = defs[0] if defs else None
        if a is None or not a.symbol or a.kind not in DEFINITION_KINDS:
            return
        named = 0
        for b in others:
            if named >= MAX_CALLEES:
                break
            name = last_part(b.symbol)
            if b.kind not in DEFINITION_KINDS or not b.symbol:
                continue
            if name == last_part(a.symbol) or name not in a.calls:
                continue
            if f"{a.symbol} calls {b.symbol}" in seen or _external(a, name, graph):
                continue
            if not _shows_call(a, b, unique):
                continue
            sb = _source_for(b, sources)
            add(
                f"{_md_code(a.symbol)} ({_md_code(a.location)}) calls {_md_code(b.symbol)} "
                f"({_md_code(sb.location)})",
                [a.n, sb.n],
                f"{a.symbol} calls {b.symbol}",
            )
            named += 1

    def owning_class(b: Source) -> Any | None:
        # the class chunk B belongs to: the one in B's file, else the only class so named (a
        # Kotlin interface `Promise` is not the Java class `Promise` of another package; a C++
        # method in foo-inl.h belongs to the one class foo in foo.h, whose constructors share
        # its name)
        owner = (b.symbol or "").rsplit(".", 1)[0]
        found = graph.classes.get(owner, [])
        here = [c for c in found if c.path == b.path]
        if here:
            return here[0]
        return found[0] if len({c.path for c in found}) == 1 else None

    def methods_of() -> None:
        # B is a method of C (one statement per class: "B and D are methods of class C")
        members: dict[tuple[str, str, int], list[Source]] = {}
        homes: dict[tuple[str, str, int], Any] = {}
        for b in defs:
            sym = b.symbol or ""
            if b.kind != "method" or "." not in sym:
                continue
            home = owning_class(b)
            if home is not None:
                key = (sym.rsplit(".", 1)[0], home.path, home.start_line)
                members.setdefault(key, []).append(b)
                homes[key] = home
        for key, methods in members.items():
            owner = key[0]
            sc = _source_for(homes[key], sources)
            names = list(dict.fromkeys(_md_code(b.symbol or "") for b in methods))  # overloads
            which = (
                f"{names[0]} is a method"
                if len(names) == 1
                else f"{', '.join(names[:-1])} and {names[-1]} are methods"
            )
            add(
                f"{which} of class {_md_code(owner)} ({_md_code(sc.location)})",
                [*(b.n for b in methods), sc.n],
                f"methods of {owner} at {sc.location}",
            )

    def callers_of() -> None:
        # who calls the best definition(s)
        for b in defs[:2]:
            if not b.symbol or b.kind not in DEFINITION_KINDS:
                continue
            # a name defined more than once: only the callers whose code shows it is B's
            sure = unique(last_part(b.symbol))
            callers = [
                c
                for c in graph.callers.get(b.symbol, [])
                if (c.path, c.start_line) != (b.path, b.start_line)
                and c.symbol
                and c.symbol != b.symbol  # an overload, or recursion
                and not _external(c, last_part(b.symbol), graph)
                and (sure or visibly_calls(c, b, unique(last_part(b.symbol.rpartition(".")[0]))))
            ]
            # one statement per caller: the windows of a long caller are one definition
            callers = [c for c in callers if f"{c.symbol} calls {b.symbol}" not in seen]
            first: dict[str, Any] = {}
            for c in callers:
                first.setdefault(c.symbol, c)
            callers = list(first.values())
            for c in _nearest(callers, weights or {})[: max_callers or MAX_CALLERS]:
                sc = _source_for(c, sources)
                add(
                    f"{_md_code(c.symbol)} ({_md_code(sc.location)}) calls {_md_code(b.symbol)}",
                    [sc.n, b.n],
                    f"{c.symbol} calls {b.symbol}",
                )

    # a question asking for the callers gets them first
    steps = (
        (callers_of, calls_among, methods_of)
        if max_callers
        else (calls_among, methods_of, callers_of)
    )
    for step in steps:
        step()
    if callees:
        callees_of()
    return out


def _nearest(chunks: Sequence[Any], weights: dict[str, float]) -> list[Any]:
    """``chunks`` ordered by how much of the question's ``weights`` their path, symbol and
    leading doc cover (``coverage``); ties keep their order."""

    def said(c: Any) -> float:
        doc = leading_doc(c.text, c.symbol) or ""
        return coverage(terms_of(f"{c.path} {c.symbol or ''} {doc}"), weights)

    return sorted(chunks, key=lambda c: -said(c)) if weights else list(chunks)


def renumber_card(card: EvidenceCard, numbers: dict[int, int]) -> EvidenceCard:
    """The same card with source ``n`` renumbered ``numbers[n]`` (text re-rendered), for when
    the snippets shown to a model must keep another order (commits among code hits)."""
    sources = [replace(s, n=numbers.get(s.n, s.n)) for s in card.sources]
    relations = []
    for r in card.relations:
        cites = [numbers.get(n, n) for n in r.citations]
        body = re.sub(r"(\s*\[\d+\])+\.$", "", r.text)
        relations.append(Relation(f"{body} {_cite(*cites)}.", cites))
    text = render_card(sources, relations, card.missing, card.nowhere, card.notes)
    return replace(card, sources=sources, relations=relations, text=text)


def with_notes(card: EvidenceCard, notes: Sequence[str]) -> EvidenceCard:
    """The card, re-rendered, with more sentences after its lead (``render_card``'s notes)."""
    notes = [*card.notes, *notes]
    text = render_card(card.sources, card.relations, card.missing, card.nowhere, notes)
    return replace(card, text=text, notes=notes)


def with_nowhere(card: EvidenceCard, nowhere: Sequence[str]) -> EvidenceCard:
    """The card, re-rendered, saying which of its ``missing`` words occur in no indexed file in
    any form (an exact scan decides that: ``askrepo.presence.has_fragment``)."""
    words = [w for w in card.missing if w in set(nowhere)]
    if not words:
        return card
    text = render_card(card.sources, card.relations, card.missing, words, card.notes)
    return replace(card, text=text, nowhere=words)


def render_card(
    sources: Sequence[Source],
    relations: Sequence[Relation],
    missing: Sequence[str] = (),
    nowhere: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> str:
    """The card as markdown: a lead sentence, the definitions, then how they connect.

    ``missing``: question words none of the retrieved code contains, said after the lead;
    ``nowhere``: those of them no indexed file contains in any form, said so; ``notes``:
    sentences said after those.
    """
    defs = [s for s in sources if s.role == "definition"]
    if not defs:
        return ""
    top = defs[0]
    what = f"a {_kind(top)} in " if top.symbol else ""
    lead = f"The best match is {_name(top)}, {what}{_md_code(top.location)} {_cite(top.n)}."
    if len(defs) > 1:
        # a name shown twice says where each one is (`Builder` in server.rs and in client.rs)
        names = [s.symbol for s in defs]
        rest = ", ".join(
            f"{_name(s)} ({_md_code(s.location)}) {_cite(s.n)}"
            if s.symbol and names.count(s.symbol) > 1
            else f"{_name(s)} {_cite(s.n)}"
            for s in defs[1:]
        )
        lead += f" Also relevant: {rest}."
    absent = [w for w in missing if w in set(nowhere)]
    unseen = [w for w in missing if w not in set(nowhere)]
    if absent:  # plain words, not names to check
        said = ", ".join(w.lower() for w in absent)
        lead += (
            f" The word {said} occurs nowhere in the indexed files, in any form."
            if len(absent) == 1
            else f" The words {said} occur nowhere in the indexed files, in any form."
        )
    if unseen:
        said = ", ".join(w.lower() for w in unseen)
        lead += f" No retrieved code mentions the words: {said}."
    for note in notes:
        lead += f" {note}"
    out = [lead, ""]
    for i, s in enumerate(defs, 1):
        body = _describe(s)
        out.append(f"{i}. {body[0]}")
        out.extend(body[1:])
    if relations:
        out += ["", "How they connect:"]
        out += [f"- {r.text}" for r in relations]
    see = [s for s in sources if s.role == "see_also"]
    if see:
        named = ", ".join(f"{_name(s)} ({_md_code(s.location)}) {_cite(s.n)}" for s in see)
        out += ["", f"See also: {named}."]
    return "\n".join(out)


# ------------------------------------------------------------------------------------------
# Reading the graph from the store


def gather_graph(store: Any, hits: Sequence[Any], k: int = CANDIDATES) -> Graph:
    """The call-graph facts the card may use for ``hits``: definition counts of the names
    involved, owning classes of methods, callers of the top definitions, stored signatures.

    Works with any store that has ``by_symbol`` / ``callers`` (missing methods: no facts).
    """
    graph = Graph()
    by_symbol = getattr(store, "by_symbol", None)
    callers = getattr(store, "callers", None)
    if by_symbol is None:
        return graph
    top = [h for h in hits[:k] if h.symbol]
    names = {last_part(h.symbol) for h in top}
    owners = {h.symbol.rsplit(".", 1)[0] for h in top if h.kind == "method" and "." in h.symbol}
    try:  # owners by their last part: every definition named like one counts
        rows = by_symbol(sorted(names | {last_part(o) for o in owners}), None, 400)
    except Exception:  # the card is best effort: a store error must not block an answer
        return graph
    only: dict[str, Any] = {}  # a name of the top hits defined once -> that definition
    for _, chunk, _ in rows:
        if chunk.kind not in DEFINITION_KINDS or is_bodyless(chunk):
            continue  # a declaration without a body counts below, with store.declarations
        last = last_part(chunk.symbol)
        graph.definitions[last] = graph.definitions.get(last, 0) + 1
        if last in names:
            only[last] = chunk
        if chunk.signature:
            graph.signatures[(chunk.path, chunk.start_line)] = chunk.signature
        if chunk.kind == "class" and chunk.symbol in owners:
            graph.classes.setdefault(chunk.symbol, []).append(chunk)
    only = {n: c for n, c in only.items() if graph.definitions[n] == 1}
    declarations = getattr(store, "declarations", None)
    if declarations is not None and only:
        try:
            for name, found in declarations(sorted(only)).items():
                # a trait's bodiless `fn retry(&self, req, result);` is another namesake of
                # the index's one `retry(self, policy)`
                graph.definitions[name] += len(other_declarations(found, [only[name].text], name))
        except Exception:  # best effort, like the lookups above
            pass
    if callers is not None:
        for h in top:
            try:
                found = callers(last_part(h.symbol), [CODE], CALLER_POOL)
            except Exception:
                continue
            graph.callers[h.symbol] = [
                c for _, c, _ in found if (c.path, c.start_line) != (h.path, h.start_line)
            ]
    _read_imports(store, graph, [h.path for h in hits[:k]], graph.callers.values())
    return graph


def _read_imports(store: Any, graph: Graph, paths: list[str], callers: Iterable[Any]) -> None:
    """Fill ``graph.external`` for the Python and JavaScript / TypeScript files among ``paths``
    and the callers' files (``imports.external_by_file``)."""
    from askrepo.imports import external_by_file

    wanted = [*paths, *(c.path for group in callers for c in group)]
    graph.external.update(external_by_file(store, wanted))
