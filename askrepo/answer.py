"""Grounded answers: retrieve snippets, refuse what the index cannot back, prompt, cite.

The pure parts (``build_prompt``, ``resolve_citations``, ``refusal_text``) are tested with worked
examples; ``ask`` wires them to a retriever and an LLM. Citations are built from the retrieved
hits' metadata only: a path or line number written by the model is never trusted.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from askrepo import config
from askrepo.datatypes import Answer, Citation, Hit, last_part
from askrepo.errors import UsageError
from askrepo.lines import span_hash, split_lines
from askrepo.llm import strip_think

if TYPE_CHECKING:
    from askrepo.llm import LLM
    from askrepo.retriever import SearchOptions

DEFAULT_MAX_TOKENS = 300  # answer length; with the embedded model's 2048 context
TEMPLATE_OVERHEAD = 32  # chat-template tokens around the system and user messages
MIN_SNIPPET_TOKENS = 48  # a snippet smaller than this (header included) is not worth showing
TRUNCATED_MARK = "… (truncated)"

SYSTEM_PROMPT = (
    "You answer questions about a code base using only the numbered code snippets you are "
    "given. Cite the snippets you use as [n]. If the snippets do not contain the answer, "
    "say so plainly instead of guessing."
)

INSTRUCTIONS = (
    "Answer the question using only the snippets above. After each statement, cite the "
    "snippet it comes from by its number in square brackets, for example [1]. Do not cite "
    "anything else. If the snippets do not contain the answer, say plainly that they do not."
)

NO_SNIPPETS = "(No code snippets were found for this question.)"

NO_CITATION_NOTE = (
    "_The answer cites none of the retrieved snippets, so nothing above is backed by the code; "
    "check the retrieved sources._"
)

HYDE_PROMPT = (
    "Write a short code snippet (at most 12 lines) that could be the code this question is "
    "about, using plausible names. Reply with the code only.\n\nQuestion: {question}"
)

SUMMARY_PROMPT = (
    "File: {path}\n{symbol_line}```\n{code}\n```\n\n"
    "In one sentence, say what this code does and what it is for, naming its key "
    "identifiers. Reply with that sentence only."
)


# ------------------------------------------------------------------------------------------
# Prompt


def _fence(text: str) -> str:
    """A backtick fence longer than any backtick run inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _snippet_block(n: int, hit: Hit) -> str:
    if hit.kind == "commit":  # history hook: a commit as evidence (askrepo.history)
        from askrepo.history import commit_snippet

        return commit_snippet(n, hit)
    head = f"[{n}] {hit.path}:{hit.start_line}-{hit.end_line}"
    if hit.symbol:
        head += f" ({hit.symbol})"
    fence = _fence(hit.text)
    return f"{head}\n{fence}{hit.language or ''}\n{hit.text.rstrip()}\n{fence}"


def _render(question: str, shown: list[Hit]) -> str:
    if shown:
        blocks = "\n\n".join(_snippet_block(i, h) for i, h in enumerate(shown, 1))
        body = f"Code snippets from the repository:\n\n{blocks}"
    else:
        body = NO_SNIPPETS
    return f"{body}\n\nQuestion: {question}\n\n{INSTRUCTIONS}"


def _truncate(hit: Hit, n: int, max_tokens: int, count_tokens: Callable[[str], int]) -> Hit | None:
    """The longest leading part of ``hit`` whose block fits ``max_tokens``, or None.

    The returned hit's ``end_line`` is the last line kept, so a citation of it points at
    exactly the lines the model saw.
    """
    lines = split_lines(hit.text)

    def cut(keep: int) -> Hit:
        text = "\n".join([*lines[:keep], TRUNCATED_MARK])
        return replace(hit, text=text, end_line=hit.start_line + keep - 1)

    lo, hi = 0, len(lines) - 1  # keeping all lines did not fit; find the largest that does
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(_snippet_block(n, cut(mid))) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return cut(lo) if lo > 0 else None


def build_prompt(
    question: str,
    hits: list[Hit],
    *,
    budget_tokens: int,
    count_tokens: Callable[[str], int],
    top_k: int | None = None,
) -> tuple[str, list[Hit]]:
    """The user prompt for ``question`` with the top snippets that fit ``budget_tokens``.

    Snippets are taken in rank order (at most ``top_k``, default ASKREPO_TOPK) and numbered
    [1], [2], … by their position in the returned list. Each snippet may use at most a third
    of the snippet budget (so the top few all get room; unused room flows to the next); one
    that does not fit is cut to its leading lines (its ``end_line`` shrinks to match), and once
    less than MIN_SNIPPET_TOKENS is left the remaining, lower-ranked ones are dropped. The
    question is never cut: UsageError if it alone does not fit.
    """
    candidates = hits[: top_k if top_k is not None else config.top_k()]
    base = _render(question, [])
    room = budget_tokens - count_tokens(base)
    if room < 0:
        raise UsageError(
            f"The question is too long for the model's context ({count_tokens(question)} tokens) "
            "— shorten it, or use `--backend ollama` for a larger context."
        )
    cap = max(MIN_SNIPPET_TOKENS, room // min(3, max(1, len(candidates))))
    shown: list[Hit] = []
    for hit in candidates:
        n = len(shown) + 1
        allowed = min(cap, room)
        if allowed < MIN_SNIPPET_TOKENS:
            break
        cost = count_tokens(_snippet_block(n, hit)) + 2  # + the blank line between blocks
        if cost > allowed:
            cut = _truncate(hit, n, allowed - 2, count_tokens)
            if cut is None:
                break
            hit, cost = cut, count_tokens(_snippet_block(n, cut)) + 2
        shown.append(hit)
        room -= cost

    prompt = _render(question, shown)
    while shown and count_tokens(prompt) > budget_tokens:  # token counts are not additive
        shown.pop()
        prompt = _render(question, shown)
    return prompt, shown


# ------------------------------------------------------------------------------------------
# Citations

# A citation group: [3], [1, 2], [2-4] (also with an en dash). "[1][2]" is two groups.
_GROUP = re.compile(r"\[\s*(\d+(?:\s*[-–]\s*\d+)?(?:\s*,\s*\d+(?:\s*[-–]\s*\d+)?)*)\s*\]")
_ITEM = re.compile(r"(\d+)(?:\s*[-–]\s*(\d+))?")
_CODE = re.compile(r"(`{3,}).*?(?:\1|\Z)|`[^`\n]*`", re.DOTALL)


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE.finditer(text)]


def resolve_citations(
    answer_text: str, shown: list[Hit], commit: str | None
) -> tuple[str, list[Citation], list[int]]:
    """Map the model's ``[n]`` markers to the snippets it was shown.

    Recognized: ``[n]``, ``[n, m]``, ``[n][m]`` and ranges ``[n-m]`` (expanded when both ends are
    shown snippets and n < m; otherwise the range is dropped, its out-of-range ends reported).
    Not citations: brackets inside code (backticks / fences), right after a word character or
    ``)`` (indexing like ``args[0]``), or followed by ``(`` (a Markdown link).
    Returns ``(text, citations, invalid)``: the text with numbers that match no snippet removed
    (an emptied group disappears with the space before it), the citations in first-appearance
    order without duplicates (``n`` = the number in the text), and the invalid numbers in
    first-appearance order without duplicates.
    """
    code = _code_spans(answer_text)
    total = len(shown)
    order: list[int] = []
    invalid: list[int] = []
    out: list[str] = []
    pos = 0
    skipped_end = -1  # end of the last bracket skipped as indexing: "a[1][2]" is not a citation

    def valid(n: int) -> bool:
        return 1 <= n <= total

    for m in _GROUP.finditer(answer_text):
        start, end = m.span()
        before = answer_text[start - 1] if start else ""
        after = answer_text[end] if end < len(answer_text) else ""
        in_code = any(a <= start < b for a, b in code)
        if (
            in_code
            or re.match(r"[\w)]", before)
            or after == "("
            or (before == "]" and skipped_end == start)
        ):
            skipped_end = end
            continue
        kept_items: list[str] = []
        for item in _ITEM.finditer(m.group(1)):
            a = int(item.group(1))
            b = int(item.group(2)) if item.group(2) else None
            if b is None:
                nums = [a] if valid(a) else []
                bad = [] if valid(a) else [a]
            elif valid(a) and valid(b) and a < b:
                nums, bad = list(range(a, b + 1)), []
            else:
                nums, bad = [], [x for x in (a, b) if not valid(x)]
            for x in bad:
                if x not in invalid:
                    invalid.append(x)
            if nums:
                kept_items.append(item.group(0))
                order.extend(x for x in nums if x not in order)
        out.append(answer_text[pos:start])
        if len(kept_items) == len(_ITEM.findall(m.group(1))):
            out.append(m.group(0))  # untouched
        elif kept_items:
            out.append("[" + ", ".join(kept_items) + "]")
        elif out[-1].endswith(" "):  # drop the group and the space that led to it
            out[-1] = out[-1][:-1]
        pos = end
    out.append(answer_text[pos:])
    text = "".join(out)
    citations = [
        Citation(
            n=n,
            path=shown[n - 1].path,
            start_line=shown[n - 1].start_line,
            end_line=shown[n - 1].end_line,
            symbol=shown[n - 1].symbol,
            commit=commit,
        )
        for n in order
    ]
    return text, citations, invalid


# ------------------------------------------------------------------------------------------
# Refusal


# Ranking stages ``ask`` leaves off when it retrieves the card's candidates: the card scores
# classes and line windows with its own rules (``evidence.CLASS_FACTOR``, ``WINDOW_FACTOR``),
# so the retriever's ``classes`` and ``windows`` stages would count the same evidence twice
# (with ``classes``, card@1 Click + askrepo 66 -> 65, dev 284 -> 283; with ``windows``, dev
# 444 -> 441 of 626, Click + askrepo 68 = 68; docs/ask.md). The card reads its first
# EVIDENCE_POOL candidates for the best of several files, which the ``tail`` stage fills
# with one file's chunks (with it: dev card@1 649 -> 647 of 938, Click + askrepo
# cited-gold@1 68 -> 66 of 90; docs/eval.md, session 34).
CARD_STAGES_OFF = ("classes", "windows", "tail")


def card_search_options(k: int, extra_queries: list[str] | None = None) -> SearchOptions:
    """The search ``ask`` runs for the evidence card's candidates (``bench_card`` runs it too)."""
    from askrepo.retriever import SearchOptions

    return SearchOptions(k=k, extra_queries=list(extra_queries or []), disabled=CARD_STAGES_OFF)


def missing_identifiers(question: str, store: Any) -> list[str]:
    """Identifier-like names the question is *about* that occur nowhere in the index.

    A name is present when ``store.find_symbol(name)`` finds a definition (exact or qualified
    suffix) or ``store.has_term(name)`` finds it in any chunk; a dotted name (``A.b``) also
    counts as present when each of its parts is. Names come from
    ``askrepo.identifiers.query_identifiers`` (code-like tokens and backticked names only).
    Names that are only context — inside a quoted message, or anywhere in a pasted issue body
    or stack trace — are left out (``absent_context_names``): a browser's error message that
    names a browser type is not a question about that type.
    """
    return _absent(subject_identifiers(question), store)


def absent_context_names(question: str, store: Any) -> list[str]:
    """Names a question quotes in a message (see ``missing_identifiers``) that occur nowhere
    in the index. They do not refuse the question; the answer says they are not in the code.
    A pasted trace or issue body is not scanned (its names are the reporter's own frames and
    types, often dozens): ``[]``.

    >>> from types import SimpleNamespace as NS
    >>> store = NS(find_symbol=lambda n: [], has_term=lambda n: n == "fetchAdapter")
    >>> absent_context_names('fetchAdapter throws "field on RequestInitDict is missing"', store)
    ['RequestInitDict']
    """
    from askrepo.query import is_trace

    if is_trace(question):
        return []  # a pasted trace names the reporter's own frames: nothing worth scanning for
    return _absent(_context_names(question, subject_identifiers(question)), store)


def absent_names(question: str, store: Any) -> tuple[list[str], list[str]]:
    """(``missing_identifiers``, ``absent_context_names``) with the question read once; the
    second is only looked for when nothing the question is about is missing (a refusal says
    nothing more)."""
    from askrepo.query import is_trace

    subject = subject_identifiers(question)
    missing = _absent(subject, store)
    if missing or is_trace(question):
        return missing, []
    return missing, _absent(_context_names(question, subject), store)


def _context_names(question: str, subject: list[str]) -> list[str]:
    from askrepo.identifiers import query_identifiers

    about = set(subject)
    return [n for n in query_identifiers(question) if n not in about]


# An error type a question names as the symptom (``NoMethodError``, ``NullPointerException``,
# ``KeyError``): often a language's own, which the code never spells.
_ERROR_TYPE = re.compile(r"[A-Z]\w*(?:Error|Exception)")


def subject_identifiers(question: str) -> list[str]:
    """The identifiers a question names outside quoted messages; none for a pasted issue body
    or stack trace (``askrepo.query``'s ``trace`` kind), where every name is context. An error
    type (``NoMethodError``) is context too when the question names something else: "why do I
    get a NoMethodError in convert_p?" is about ``convert_p``.

    >>> subject_identifiers('Why does `read_config` fail with "KeyError in ConfigLoader"?')
    ['read_config']
    >>> subject_identifiers("why do I get a NoMethodError in convert_p?")
    ['convert_p']
    >>> subject_identifiers("where is NoMethodError rescued?")
    ['NoMethodError']
    """
    from askrepo.identifiers import query_identifiers
    from askrepo.query import is_trace, quoted_message_spans

    if is_trace(question):
        return []
    text = question
    for a, b in quoted_message_spans(question):
        text = text[:a] + " " * (b - a) + text[b:]
    names = query_identifiers(text)
    about = [n for n in names if not _ERROR_TYPE.fullmatch(last_part(n))]
    return about or names


def _absent(names: list[str], store: Any) -> list[str]:
    missing: list[str] = []
    for name in names:
        if name in missing or _present(name, store):
            continue
        missing.append(name)
    return missing


def _present(name: str, store: Any) -> bool:
    if store.find_symbol(name) or store.has_term(name):
        return True
    parts = [p for p in name.split(".") if p]
    if len(parts) > 1:
        return all(store.find_symbol(p) or store.has_term(p) for p in parts)
    return False


def in_changed_files(
    names: Sequence[str], root: Path, changed: Sequence[str]
) -> list[tuple[str, str]]:
    """(name, path) for each of ``names`` that occurs (``presence.text_has_term``) in one of the
    ``changed`` files (repository paths changed, added or deleted since indexing) as it is on
    disk now; the first such file per name. The index cannot show that code yet: the answer
    says where the name is and that ``--refresh`` reads it."""
    from askrepo.ingest import decode
    from askrepo.presence import text_has_term
    from askrepo.safe_read import read_regular

    if not names or not changed:
        return []
    texts: list[tuple[str, str]] = []
    for rel in changed[:200]:
        try:
            raw = read_regular(Path(root) / rel, config.max_file_bytes(), label=rel)
        except (OSError, UsageError):
            continue  # deleted, not a regular file, too big: nothing to point to
        texts.append((rel, decode(raw)))
    out: list[tuple[str, str]] = []
    for name in dict.fromkeys(names):
        where = next((rel for rel, text in texts if text_has_term(name, [text])), None)
        if where is not None:
            out.append((name, where))
    return out


def cited_changes(sources: Sequence[Any], root: Path, changed: Sequence[str]) -> list[str]:
    """Sentences for the card's sources whose files changed since indexing: deleted (the
    cited code is gone), or edited (the cited lines may have moved: ``askrepo verify``).

    >>> from types import SimpleNamespace as S
    >>> cited_changes([S(n=1, path="gone.go"), S(n=2, path="a.go"), S(n=3, path="a.go")],
    ...               Path("/nonexistent"), ["gone.go", "b.go"])  # doctest: +NORMALIZE_WHITESPACE
    ['`gone.go` [1] was deleted since the index was built: its code is no longer in the
      work tree.']
    """
    wanted = set(changed)
    gone: dict[str, list[int]] = {}
    edited: dict[str, list[int]] = {}
    for s in sources:
        if s.path in wanted:
            into = edited if (Path(root) / s.path).is_file() else gone
            into.setdefault(s.path, []).append(s.n)
    out = []
    for path, ns in gone.items():
        cites = "".join(f"[{n}]" for n in ns)
        out.append(
            f"`{path}` {cites} was deleted since the index was built: its code is no longer "
            "in the work tree."
        )
    for path, ns in edited.items():
        cites = "".join(f"[{n}]" for n in ns)
        out.append(
            f"`{path}` {cites} changed since the index was built: the cited lines may have "
            "moved (`askrepo verify` checks them; `--refresh` re-reads the file)."
        )
    return out


def changed_note(found: Sequence[tuple[str, str]], *, refused: bool = False) -> str:
    """The sentence for ``in_changed_files``'s names: after a card's lead, or (``refused``) as
    the answer when the index has none of the names the question is about.

    >>> changed_note([("FindRoute", "router.go")])  # doctest: +NORMALIZE_WHITESPACE
    '`FindRoute` is in `router.go`, changed since the index was built, so the code above may
    not show it: ask again with `--refresh` to read it.'
    >>> changed_note([("Gnu", "gnu.go")], refused=True)  # doctest: +NORMALIZE_WHITESPACE
    '`Gnu` is not in the index yet: it is in `gnu.go`, changed since the index was built — ask
    again with `--refresh` to read it.'
    """
    them = "them" if len(found) > 1 else "it"
    if refused:
        where = (
            f"it is in `{found[0][1]}`"
            if len(found) == 1
            else ", ".join(f"`{n}` is in `{p}`" for n, p in found)
        )
        names = _join_names([n for n, _ in found]).replace(" or ", " and ")
        return (
            f"{names} {'is' if len(found) == 1 else 'are'} not in the index yet: {where}, "
            f"changed since the index was built — ask again with `--refresh` to read {them}."
        )
    said = " and ".join(f"`{n}` is in `{p}`" for n, p in found)
    return (
        f"{said}, changed since the index was built, so the code above may not show {them}: "
        f"ask again with `--refresh` to read {them}."
    )


def _join_names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def refusal_text(missing: list[str], meta: Any | None = None) -> str:
    """The answer given, without asking the model, when the question names absent identifiers.

    >>> refusal_text(["FooBar"])  # doctest: +ELLIPSIS
    'The code base does not contain `FooBar`: ...'
    """
    scope = "the index"
    if meta is not None:
        files = getattr(meta, "file_count", None)
        chunks = getattr(meta, "chunk_count", None)
        commit = getattr(meta, "commit", None)
        if files is not None and chunks is not None:
            scope = f"the index ({files} files, {chunks} chunks"
            scope += f", commit {commit[:12]})" if commit else ")"
    what, it = ("that name", "it") if len(missing) == 1 else ("those names", "them")
    return (
        f"The code base does not contain {_join_names(missing)}: no definition with {what} "
        f"(exact or qualified) and no occurrence of {it} anywhere in {scope}. "
        "The model was not asked, so nothing was made up; check the spelling, or re-index "
        "with `askrepo index` if the code changed."
    )


# ------------------------------------------------------------------------------------------
# The pipeline


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = round((time.perf_counter() - start) * 1000, 1)


def _meta(store: Any) -> Any | None:
    try:
        return store.meta()
    except Exception:  # a damaged meta must not block answering; it only labels citations
        return None


def _strip_fences(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if not ln.strip().startswith("```")]
    return "\n".join(lines).strip()


def hypothetical_snippet(llm: LLM, question: str, *, max_tokens: int = 120) -> str:
    """HyDE: a short made-up code snippet answering ``question``, used only as a search query."""
    return _strip_fences(llm.generate(HYDE_PROMPT.format(question=question), max_tokens=max_tokens))


def _as_hit(src: Any, n: int) -> Hit:
    """A card source as a snippet the model is shown (its number is its card number)."""
    return Hit(
        rank=n,
        path=src.path,
        start_line=src.start_line,
        end_line=src.end_line,
        symbol=src.symbol,
        kind=src.kind,
        language=None,
        score=0.0,
        sources={"dense": None, "fts": None},
        expanded_from=None,
        text=src.text,
    )


def _same_span(a: Any, b: Any) -> bool:
    return (a.path, a.start_line, a.end_line) == (b.path, b.start_line, b.end_line)


def _in(src: Any, hits: list[Hit]) -> bool:
    return any(_same_span(src, h) for h in hits)


def snippet_order(card: Any, hits: list[Hit]) -> list[Hit]:
    """The snippets a model is shown: the card's sources first, in card order (so ``[n]``
    means the same thing in the model's text and in the card), then the other hits."""
    first = [_as_hit(s, s.n) for s in card.sources]
    for f in first:  # keep the retrieved language / metadata when the source is a hit
        for h in hits:
            if _same_span(f, h):
                f.language, f.score, f.sources, f.calls = h.language, h.score, h.sources, h.calls
    rest = [h for h in hits if not any(_same_span(h, f) for f in first)]
    return [*first, *rest]


def citation_for(n: int, snippet: Any, commit: str | None) -> Citation:
    """A citation of ``snippet`` (metadata only) with the hash of the lines it covers."""
    lines = split_lines(snippet.text)[: snippet.end_line - snippet.start_line + 1]
    lines = [ln for ln in lines if ln != TRUNCATED_MARK]
    return Citation(
        n=n,
        path=snippet.path,
        start_line=snippet.start_line,
        end_line=snippet.end_line,
        symbol=snippet.symbol,
        commit=commit,
        hash=span_hash(lines),
    )


def nowhere_words(words: list[str], store: Any) -> list[str]:
    """The ``words`` (question words no retrieved code contains) that no indexed file contains
    in any form: their root (``presence.word_root``) is in no file. "How does Click load
    defaults from a YAML file?" -> ``["YAML"]``: that is certain, and worth saying."""
    from askrepo.evidence import stem
    from askrepo.presence import word_root

    roots = {w: word_root(w, stem(w)) for w in words}
    gone = set(store.absent_fragments(list(dict.fromkeys(roots.values()))))
    return [w for w in words if roots[w] in gone]


def card_inputs(question: str, hits: list[Hit], retriever: Any) -> tuple[list[Hit], Any, Any]:
    """What the evidence card reads besides the question, as ``ask`` gathers it (and
    ``bench_card``): the code hits (commits go to the model, not the card), their call-graph
    facts (``evidence.gather_graph``) and each candidate's ``header_similarity``."""
    from askrepo.evidence import gather_graph

    code = [h for h in hits if h.kind != "commit"]
    graph = gather_graph(retriever.store, code)
    return code, graph, header_similarity(question, code, graph, retriever)


def header_similarity(question: str, hits: list[Hit], graph: Any, retriever: Any) -> Any:
    """Cosine of the question and each candidate's header (askrepo.evidence.header_text) with
    the retriever's embedding model; None when the retriever has no model (fakes)."""
    from askrepo.evidence import CANDIDATES, header_text

    if not hasattr(type(retriever), "embedder") and not hasattr(retriever, "_embedder"):
        return None
    try:
        emb = retriever.embedder
        qv = emb.embed_query(question)
        return [float(qv @ emb.embed_query(header_text(h, graph))) for h in hits[:CANDIDATES]]
    except Exception:  # a ranking hint only: never block the answer
        return None


SUMMARY_SYSTEM = (
    "You answer a question about a code base in one or two short plain sentences, using only "
    "the numbered facts given. End each sentence with the number of the fact it uses, like [1]."
)


def summary_prompt(question: str, card: Any) -> str:
    """The small model's task: one or two sentences over the evidence card's facts."""
    facts: list[str] = []
    for s in card.sources:
        if s.role == "see_also":
            continue  # named for the reader; the summary is about what the card describes
        who = f"`{s.symbol}`" if s.symbol else f"code in {s.path}"
        fact = f"[{s.n}] {who} is a {s.kind} in {s.path}."
        if s.doc:
            fact += f" It is documented as: {s.doc}"
        facts.append(fact)
    for r in card.relations:
        facts.append(re.sub(r"\s*(\[\d+\])+\.?$", "", r.text) + ".")
    body = "\n".join(facts)
    return f"Facts:\n{body}\n\nQuestion: {question}\n\nAnswer in one or two sentences."


def summary_grammar(n_sources: int) -> str:
    """GBNF: one or two sentences of 4-41 words, each ending with ``[n].`` for a card source n.

    A word may hold inner dots (``os.path``) but never end with one, so a sentence ends only
    at its citation and each sentence is exactly one cited claim.
    """
    nums = " | ".join(f'"{i}"' for i in range(1, max(1, min(n_sources, 9)) + 1))
    return (
        'root ::= sentence (" " sentence)?\n'
        'sentence ::= word (" " word){3,40} " [" num "]."\n'
        'word ::= part ("." part){0,3}\n'
        "part ::= [A-Za-z0-9_`(),:'/-]{1,30}\n"
        f"num ::= {nums}\n"
    )


NO_SUPPORTED_CLAIM = (
    "_None of the claims below is backed by the code it cites (each names something its cited "
    "lines do not show, or cites nothing); rely on the evidence under it._"
)


def ask(
    question: str,
    retriever: Any,
    llm: LLM,
    *,
    k: int | None = None,
    hyde: bool = False,
    stream: Callable[[str], None] | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    changed: Sequence[str] = (),
) -> Answer:
    """Answer ``question`` from the indexed code, with citations resolved against the hits.

    ``changed``: the repository paths changed since indexing (``freshness.Freshness.changed``);
    a name the question is about that the index lacks but one of them contains is pointed to
    (``in_changed_files``), in the card's lead or the refusal.

    Stages (each timed in ``timings_ms``): refusal check (identifiers named in the question
    that are absent from the index → answered without the model, ``refused=True``), optional
    HyDE, retrieval, the evidence card (askrepo.evidence), then — unless the backend is
    ``none`` — the model's answer laid on top of the card (pieces go to ``stream``), citation
    resolution and the claim check (askrepo.claims). The embedded model only writes one or two
    grammar-constrained sentences over the card; server models get the numbered snippets, the
    card's sources first. ``citations`` holds only what the answer and the card cite;
    ``retrieved`` holds every hit.
    """
    from askrepo.claims import check_answer
    from askrepo.evidence import evidence_card, renumber_card, with_notes, with_nowhere
    from askrepo.presence import text_has_term

    question = question.strip()
    if not question:
        raise UsageError('The question is empty — ask something, e.g. `askrepo ask "where is X?"`.')
    k = config.top_k() if k is None else k
    if k < 1:
        raise UsageError(f"k must be at least 1 (got {k}) — the snippets to retrieve, e.g. -k 8")
    timings: dict[str, float] = {}
    start = time.perf_counter()
    store = retriever.store
    meta = _meta(store)
    commit = getattr(meta, "commit", None)
    card: Any = None
    uses_model = llm.name != "none"
    context_absent: list[str] = []  # quoted names not in the code (absent_context_names)

    def path_exists(path: str) -> bool:
        try:
            return path in store.files()
        except Exception:
            return False

    def done(
        text: str,
        citations: list[Citation],
        invalid: list[int],
        refused: bool,
        claims: list[Any] | None = None,
    ) -> Answer:
        timings["total"] = round((time.perf_counter() - start) * 1000, 1)
        return Answer(
            question=question,
            answer=text,
            citations=citations,
            invalid_citations=invalid,
            retrieved=hits,
            backend=llm.name,
            model=llm.model,
            timings_ms=timings,
            refused=refused,
            evidence=card.text if card is not None else "",
            evidence_sources=[s.to_dict() for s in card.sources] if card is not None else [],
            claims=[c.to_dict() for c in claims or []],
            note=getattr(llm, "note", None),
            not_in_code=list(context_absent),
        )

    with _timed(timings, "refusal_check"):
        missing, context_absent = absent_names(question, store)

    extra: list[str] = []
    if hyde and not missing and uses_model:
        with _timed(timings, "hyde"):
            snippet = hypothetical_snippet(llm, question)
        if snippet:
            extra.append(snippet)

    with _timed(timings, "retrieve"):
        hits = list(retriever.search(question, card_search_options(k, extra)).hits)
        # history hook: commits beside code for why/when/who questions (askrepo.history)
        from askrepo.history import with_commit_evidence

        hits = with_commit_evidence(question, retriever, hits, k)

    if missing:
        # a name in a file changed or added since indexing is not absent: say where it is
        moved = in_changed_files(missing, Path(getattr(store, "repo", ".")), changed)
        absent = [n for n in missing if n not in {m for m, _ in moved}]
        parts = [refusal_text(absent, meta)] if absent else []
        if moved:
            parts.append(changed_note(moved, refused=True))
        text = " ".join(parts)
        return done(text, [], [], True)
    if not hits:
        return done(
            "The search found no code for this question, so there is nothing to answer from — "
            "try other words, or check the index with `askrepo search`.",
            [],
            [],
            True,
        )

    with _timed(timings, "evidence"):
        code, graph, similarity = card_inputs(question, hits, retriever)
        card = evidence_card(
            question,
            code,
            graph,
            similarity=similarity,
            project=Path(getattr(store, "repo", "") or "").name,
        )
    if card.missing and hasattr(store, "absent_fragments"):
        with _timed(timings, "presence"):
            card = with_nowhere(card, nowhere_words(card.missing, store))
    if changed:  # a name the index lacks, in a file changed since: say where it is
        unseen = [
            n
            for n in subject_identifiers(question)
            if not any(text_has_term(n, [s.text]) for s in card.sources)
            and not store.find_symbol(n)
        ]
        root = Path(getattr(store, "repo", "."))
        moved = in_changed_files(unseen, root, changed)
        notes = [changed_note(moved)] if moved else []
        notes += cited_changes(card.sources, root, changed)
        if notes:
            card = with_notes(card, notes)
    by_n = {s.n: s for s in card.sources}
    card_citations = [citation_for(s.n, s, commit) for s in card.sources]

    if not uses_model:
        if not card.sources:  # only commits were found (a history question): nothing to show
            return done(
                "The search found no code for this question — try other words, or use a model "
                "backend to read the commits it found.",
                [],
                [],
                True,
            )
        with _timed(timings, "claims"):
            claims = check_answer(card.text, by_n, path_exists)
        return done(card.text, card_citations, [], False, claims)

    if getattr(llm, "name", "") == "embedded":  # a 135M model: one or two sentences, no code
        described = sum(s.role != "see_also" for s in card.sources)  # what it may cite
        with _timed(timings, "generate"):
            raw = llm.generate(
                summary_prompt(question, card),
                system=SUMMARY_SYSTEM,
                max_tokens=120,
                stream=stream,
                grammar=summary_grammar(described),  # type: ignore[call-arg]
            )
        shown: list[Hit] = [_as_hit(s, s.n) for s in card.sources]
    else:
        order = snippet_order(card, hits)
        if len(code) < len(hits):  # commits among the hits keep their places: renumber the card
            order = [*hits, *[_as_hit(s, s.n) for s in card.sources if not _in(s, hits)]]
            card = renumber_card(
                card,
                {
                    s.n: next(i for i, h in enumerate(order, 1) if _same_span(h, s))
                    for s in card.sources
                },  # fmt: skip
            )
            card_citations = [citation_for(s.n, s, commit) for s in card.sources]
        with _timed(timings, "prompt"):
            system_tokens = llm.count_tokens(SYSTEM_PROMPT)
            budget = llm.context_tokens - max_tokens - system_tokens - TEMPLATE_OVERHEAD
            prompt, shown = build_prompt(
                question,
                order,
                budget_tokens=budget,
                count_tokens=llm.count_tokens,
                top_k=len(order),
            )
        with _timed(timings, "generate"):
            raw = llm.generate(prompt, system=SYSTEM_PROMPT, max_tokens=max_tokens, stream=stream)
    with _timed(timings, "cite"):
        text, cited, invalid = resolve_citations(strip_think(raw), shown, commit)
    text = text.strip() or "(The model returned an empty answer.)"
    with _timed(timings, "claims"):
        claims = check_answer(text, {i: h for i, h in enumerate(shown, 1)}, path_exists)
    citations = [citation_for(c.n, shown[c.n - 1], commit) for c in cited]
    citations += [c for c in card_citations if c.n not in {x.n for x in citations}]
    from askrepo.history import commit_citations  # history hook: `[n] abc1234 subject`

    citations = commit_citations(citations, shown)
    if not cited:
        text = f"{text}\n\n{NO_CITATION_NOTE}"
    elif not any(c.supported for c in claims):
        text = f"{NO_SUPPORTED_CLAIM}\n\n{text}"
    return done(text, citations, invalid, False, claims)


def contextual_summary(llm: LLM, chunk_text: str, path: str, symbol: str | None) -> str:
    """One sentence situating a chunk in its file, for ``askrepo index --contextual``."""
    max_tokens = 60
    symbol_line = f"Symbol: {symbol}\n" if symbol else ""
    budget = llm.context_tokens - max_tokens - TEMPLATE_OVERHEAD

    def prompt_for(code: str) -> str:
        return SUMMARY_PROMPT.format(path=path, symbol_line=symbol_line, code=code)

    code = chunk_text
    if llm.count_tokens(prompt_for(code)) > budget:
        lines = split_lines(chunk_text)
        lo, hi = 0, len(lines) - 1
        while lo < hi:  # the most leading lines that fit, with the truncation mark
            mid = (lo + hi + 1) // 2
            fits = llm.count_tokens(prompt_for("\n".join([*lines[:mid], TRUNCATED_MARK])))
            lo, hi = (mid, hi) if fits <= budget else (lo, mid - 1)
        code = "\n".join([*lines[:lo], TRUNCATED_MARK])
    raw = llm.generate(prompt_for(code), max_tokens=max_tokens)
    for line in strip_think(raw).splitlines():
        line = line.strip().strip("`").strip()
        if line:
            return line[:300]
    return ""
