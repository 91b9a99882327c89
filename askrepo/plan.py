"""Change plans: which files and functions a change touches, and what may break.

``plan_change(request, retriever)`` is deterministic: a larger hybrid retrieval (tests included)
ranked into files with ``askrepo.files.rank_files``; in each file the chunks that matched, each
with its evidence (``defines X``, ``named in the request``, ``calls X``); then, from the call
edges the index already has (``Chunk.calls``, ``store.callers``), the callers of the targeted
definitions outside the plan (they may break) and the tests that exercise them. With an LLM
(``llm=``), a short prose plan citing the evidence as ``[n]`` is laid on top; citations are
resolved from the evidence's metadata, never from what the model writes.

The pure core, ``build_plan``, takes the hits and a ``CallGraph`` (the store, or a fake in
tests) and is tested with worked examples.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from .datatypes import CODE, CONFIG, TEST, Chunk, Citation, Hit, last_part
from .files import rank_files

if TYPE_CHECKING:
    from .llm import LLM

RETRIEVE_K = 40  # chunks retrieved (tests included) before ranking files
MAX_PER_FILE = 4  # chunks per file kept by the retriever
MAX_FILES = 6  # files to change, shown
MAX_ITEMS_PER_FILE = 4
MAX_TARGETS = 5  # definitions whose callers and tests are looked up
MAX_CALLERS = 12
MAX_TESTS = 8
CALLER_LOOKUP = 200  # callers fetched per target before ranking
DEFINITION_KINDS = ("function", "method", "class")
PROSE_MAX_TOKENS = 350

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CallGraph(Protocol):
    """What ``build_plan`` needs from the index (``IndexStore`` provides it)."""

    def callers(
        self, name: str, classes: Iterable[str] | None = None, limit: int = 5
    ) -> list[tuple[str, Chunk, float]]: ...

    def by_symbol(
        self, names: Iterable[str], classes: Iterable[str] | None = None, limit: int = 50
    ) -> list[tuple[str, Chunk, float]]: ...


@dataclass
class PlanItem:
    """One piece of evidence: a line range and why it is in the plan."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    why: list[str]
    score: float = 0.0
    n: int = 0  # its number in the prose prompt ([n]); 0 when not shown to a model

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["location"] = self.location
        d["score"] = round(self.score, 6)
        return d


@dataclass
class PlanFile:
    rank: int
    path: str
    score: float
    file_class: str
    items: list[PlanItem]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "path": self.path,
            "score": round(self.score, 6),
            "file_class": self.file_class,
            "items": [i.to_dict() for i in self.items],
        }


@dataclass
class Plan:
    request: str
    repo: str
    commit: str | None
    files: list[PlanFile]  # what to change, ranked
    targets: list[str]  # the definitions the plan is about (their callers/tests are listed)
    may_break: list[PlanItem]  # callers of the targets outside the plan
    tests: list[PlanItem]  # tests that call the targets or matched the request
    prose: str | None = None  # a model's plan on top of the evidence (None: no model)
    citations: list[Citation] = field(default_factory=list)  # the prose's [n], resolved
    backend: str | None = None
    model: str | None = None
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "repo": self.repo,
            "commit": self.commit,
            "files": [f.to_dict() for f in self.files],
            "targets": list(self.targets),
            "may_break": [i.to_dict() for i in self.may_break],
            "tests": [i.to_dict() for i in self.tests],
            "prose": self.prose,
            "citations": [c.to_dict() for c in self.citations],
            "backend": self.backend,
            "model": self.model,
            "notes": list(self.notes),
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
        }


# ------------------------------------------------------------------------------------------
# Pure core


# A plain word names code when it follows one of these ("... to echo", "... in the cart");
# "let a code expire" uses "expire" as a verb, not as SessionStore.expire.
_NAMING = {"to", "in", "of", "for", "from", "into", "on", "by", "with", "the", "a", "an"}


def request_words(request: str) -> set[str]:
    """The names a request uses for code: identifier-shaped terms (``hash_password``,
    ``prompt()``, ``NO_COLOR``, last part of ``Cart.total``) and plain words right after a
    preposition or article (``to echo``, ``the cart``). Symbols match them ignoring case.

    >>> sorted(request_words("add a --color option to echo"))
    ['color', 'echo']
    >>> sorted(request_words("make prompt() accept a timeout in `Cart.total`"))
    ['Cart', 'prompt', 'timeout', 'total']
    >>> sorted(request_words("let a discount code expire after a date"))
    ['date', 'discount']
    """
    from .identifiers import query_identifiers

    names = {part for n in query_identifiers(request) for part in n.split(".") if part}
    words = _WORD.findall(request.replace("--", " "))
    for prev, word in zip(words, words[1:], strict=False):
        if prev.lower() in _NAMING and len(word) >= 3 and word.lower() not in _NAMING:
            names.add(word)
    return names


def _is_definition(kind: str) -> bool:
    return kind in DEFINITION_KINDS


def _item(c: Any, why: list[str], score: float = 0.0) -> PlanItem:
    return PlanItem(c.path, c.start_line, c.end_line, c.symbol, c.kind, why, score)


def _named(hit: Hit, words: set[str]) -> bool:
    if not (_is_definition(hit.kind) and hit.symbol):
        return False
    last = last_part(hit.symbol).lower()
    return any(last == w.lower() for w in words)


def _why_for_hit(hit: Hit, words: set[str]) -> list[str]:
    why: list[str] = []
    if _is_definition(hit.kind) and hit.symbol:
        why.append(f"defines {hit.symbol}")
        if _named(hit, words):
            why.append("named in the request")
    else:
        why.append("matches the request")
    return why


def build_plan(
    request: str,
    hits: Sequence[Hit],
    graph: CallGraph,
    *,
    repo: str = "",
    commit: str | None = None,
    max_files: int = MAX_FILES,
) -> Plan:
    """The deterministic plan for ``request`` from ranked ``hits`` and the call ``graph``.

    1. Code/config hits are ranked into files (``rank_files``); each of the top ``max_files``
       files lists its matched chunks, best first: ``defines X`` (+ ``named in the request``)
       for definitions, ``matches the request`` for other chunks.
    2. Targets: the definitions among those items, by score (named ones first), at most
       MAX_TARGETS. An item that calls another target gets ``calls X``.
    3. May break: code chunks that call a target (by its last name part) and are not items;
       ``calls X`` — a name shared by several definitions is marked ``(by name)``.
    4. Tests: test chunks that call a target (``tests X``), then test hits (``matches the
       request``).
    """
    words = request_words(request)
    code_hits = [h for h in hits if h.file_class in (CODE, CONFIG)]
    test_hits = [h for h in hits if h.file_class == TEST]
    # A definition the request names ("... to echo") outranks what merely resembles it.
    top = max((h.score for h in code_hits), default=0.0)
    code_hits = [replace(h, score=h.score + top) if _named(h, words) else h for h in code_hits]

    files: list[PlanFile] = []
    items_by_key: dict[tuple[str, int], PlanItem] = {}
    for fh in rank_files(code_hits)[:max_files]:
        items = []
        for h in fh.hits[:MAX_ITEMS_PER_FILE]:
            it = _item(h, _why_for_hit(h, words), h.score)
            items.append(it)
            items_by_key[(h.path, h.start_line)] = it
        files.append(PlanFile(len(files) + 1, fh.path, fh.score, fh.file_class, items))

    defs = [it for f in files for it in f.items if _is_definition(it.kind) and it.symbol]
    defs.sort(key=lambda it: ("named in the request" not in it.why, -it.score))
    targets: list[str] = []
    for it in defs:
        if it.symbol not in targets:
            targets.append(it.symbol or "")
        if len(targets) >= MAX_TARGETS:
            break

    # How many definitions share each target's last name: callers found by name may be
    # callers of another definition with the same name.
    shared: dict[str, int] = {}
    owners: dict[str, set[str]] = {}  # target -> the classes that define its last name
    for t in targets:
        name = last_part(t)
        rows = graph.by_symbol([name], None, limit=50)
        found = {
            (c.path, c.symbol)
            for _, c, _ in rows
            if _is_definition(c.kind) and last_part(c.symbol) == name
        }
        shared[t] = len(found)
        owners[t] = {sym.rpartition(".")[0] for _, sym in found if "." in (sym or "")}

    def own_namesake(caller: Any, t: str) -> bool:
        # a method of another class that defines the name itself calls its own
        # (hourly_file_sink.sink_it_ -> hourly_file_sink.delete_old_, not daily_file_sink's)
        home = (caller.symbol or "").rpartition(".")[0]
        return bool(home) and home != t.rpartition(".")[0] and home in owners.get(t, set())

    def calls_label(t: str, verb: str = "calls") -> str:
        return f"{verb} {t}" + (" (by name)" if shared.get(t, 1) > 1 else "")

    # items that call other targets
    for it_key, it in items_by_key.items():
        hit = next((h for h in code_hits if (h.path, h.start_line) == it_key), None)
        calls = set(hit.calls) if hit is not None else set()
        for t in targets:
            if t != it.symbol and last_part(t) in calls and not own_namesake(it, t):
                it.why.append(calls_label(t))

    # Sort keys: retrieved evidence first (it matched the request), then callers of the
    # better-ranked targets; a test named after a target ("test_echo…") before other callers.
    retrieved = {(h.path, h.start_line): h for h in hits}
    may_break: dict[tuple[str, int], PlanItem] = {}
    tests: dict[tuple[str, int], PlanItem] = {}
    weight: dict[tuple[str, int], float] = {}
    for rank, t in enumerate(targets):
        name = last_part(t)
        for _, c, _ in graph.callers(name, None, limit=CALLER_LOOKUP):
            key = (c.path, c.start_line)
            if c.symbol == t or key in items_by_key or own_namesake(c, t):
                continue
            if c.file_class == TEST:
                pool, label = tests, calls_label(t, "tests")
            elif c.file_class in (CODE, CONFIG):
                pool, label = may_break, calls_label(t)
            else:
                continue
            it = pool.get(key)
            if it is None:
                it = pool[key] = _item(c, [], 0.0)
            if label not in it.why:
                it.why.append(label)
                w = 1.0 / (rank + 1)
                if c.file_class == TEST and name.lower() in last_part(c.symbol).lower():
                    w += 1.0  # test_echo_color tests echo by name too
                weight[key] = weight.get(key, 0.0) + w
    for h in test_hits:  # their own call edges: a target may have too many callers to list
        key = (h.path, h.start_line)
        it = tests.get(key)
        if it is None:
            it = tests[key] = _item(h, [], 0.0)
        it.why.insert(0, "matches the request")
        for rank, t in enumerate(targets):
            label = calls_label(t, "tests")
            if last_part(t) in h.calls and label not in it.why:
                it.why.append(label)
                w = 1.0 / (rank + 1)
                if last_part(t).lower() in last_part(h.symbol).lower():
                    w += 1.0
                weight[key] = weight.get(key, 0.0) + w
    for pool in (may_break, tests):
        for key, it in pool.items():
            h = retrieved.get(key)
            it.score = (h.score if h is not None else 0.0) + weight.get(key, 0.0) / 100.0

    def ranked(pool: dict[tuple[str, int], PlanItem], cap: int) -> list[PlanItem]:
        def order(it: PlanItem) -> tuple[Any, ...]:
            key = (it.path, it.start_line)
            return (key not in retrieved, -weight.get(key, 0.0), -it.score, it.path, it.start_line)

        return sorted(pool.values(), key=order)[:cap]

    return Plan(
        request=request,
        repo=repo,
        commit=commit,
        files=files,
        targets=targets,
        may_break=ranked(may_break, MAX_CALLERS),
        tests=ranked(tests, MAX_TESTS),
    )


# ------------------------------------------------------------------------------------------
# Prose on top (optional)

PLAN_SYSTEM = (
    "You are a senior engineer planning a code change. Use only the numbered evidence you "
    "are given; cite it as [n]. Do not invent files or functions."
)

PLAN_INSTRUCTIONS = (
    "Write a short plan for this change: 3 to 6 bullet points saying which function or file to "
    "change and how, and what else must be updated (callers, tests). End each bullet with the "
    "evidence it relies on, for example [1]. Do not write code."
)


def _evidence_hits(plan: Plan, hits: Sequence[Hit]) -> list[Hit]:
    """The plan's evidence as Hits (text from the retrieval when available), in [n] order."""
    text = {(h.path, h.start_line): h for h in hits}
    order = [it for f in plan.files for it in f.items] + plan.may_break[:4] + plan.tests[:3]
    out: list[Hit] = []
    for it in order:
        h = text.get((it.path, it.start_line))
        out.append(
            Hit(
                rank=len(out) + 1,
                path=it.path,
                start_line=it.start_line,
                end_line=it.end_line,
                symbol=it.symbol,
                kind=it.kind,
                language=h.language if h else None,
                score=it.score,
                sources={"dense": None, "fts": None},
                expanded_from=None,
                text=h.text if h else "",
                file_class=h.file_class if h else CODE,
            )
        )
        it.n = len(out)
    return out


def _evidence_block(n: int, hit: Hit, why: list[str], max_lines: int) -> str:
    head = f"[{n}] {hit.path}:{hit.start_line}-{hit.end_line}"
    if hit.symbol:
        head += f" ({hit.symbol})"
    head += " — " + "; ".join(why)
    if not hit.text or max_lines <= 0:
        return head
    lines = hit.text.splitlines()
    body = "\n".join(lines[:max_lines]) + ("\n…" if len(lines) > max_lines else "")
    return f"{head}\n```\n{body}\n```"


def plan_prompt(
    plan: Plan, evidence: list[Hit], *, budget_tokens: int, count_tokens: Any
) -> tuple[str, list[Hit]]:
    """The prose prompt: the request and as much numbered evidence as fits ``budget_tokens``.

    Targets' code is shown (cut to its first lines); every other piece as one header line.
    Evidence that does not fit is dropped from the end.
    """
    whys = {(it.path, it.start_line): it.why for f in plan.files for it in f.items}
    whys.update({(it.path, it.start_line): it.why for it in plan.may_break + plan.tests})
    targets = set(plan.targets)

    def render(shown: list[Hit], max_lines: int) -> str:
        blocks = [
            _evidence_block(
                i,
                h,
                whys.get((h.path, h.start_line), []),
                max_lines if h.symbol in targets else 0,
            )
            for i, h in enumerate(shown, 1)
        ]
        return (
            "Evidence from the repository:\n\n"
            + "\n\n".join(blocks)
            + f"\n\nChange request: {plan.request}\n\n{PLAN_INSTRUCTIONS}"
        )

    shown = list(evidence)
    for max_lines in (30, 15, 6, 0):
        prompt = render(shown, max_lines)
        if count_tokens(prompt) <= budget_tokens:
            return prompt, shown
    while shown and count_tokens(render(shown, 0)) > budget_tokens:
        shown.pop()
    return render(shown, 0), shown


def add_prose(plan: Plan, hits: Sequence[Hit], llm: LLM, *, stream: Any = None) -> None:
    """Ask ``llm`` for a short prose plan over the evidence; citations resolved from metadata."""
    from .answer import resolve_citations

    evidence = _evidence_hits(plan, hits)
    budget = llm.context_tokens - PROSE_MAX_TOKENS - llm.count_tokens(PLAN_SYSTEM) - 32
    prompt, shown = plan_prompt(plan, evidence, budget_tokens=budget, count_tokens=llm.count_tokens)
    text = llm.generate(prompt, system=PLAN_SYSTEM, max_tokens=PROSE_MAX_TOKENS, stream=stream)
    text, citations, _invalid = resolve_citations(text, shown, plan.commit)
    plan.prose = text.strip() or None
    plan.citations = citations
    plan.backend, plan.model = llm.name, llm.model


# ------------------------------------------------------------------------------------------
# Wiring


def plan_change(
    request: str,
    retriever: Any,
    *,
    llm: LLM | None = None,
    max_files: int = MAX_FILES,
    stream: Any = None,
) -> Plan:
    """Retrieve, build the deterministic plan, and (with ``llm``) add prose on top."""
    from .errors import UsageError
    from .retriever import SearchOptions

    if not request or not request.strip():
        raise UsageError(
            'The change request is empty — describe the change, e.g. "add a --color option to echo"'
        )
    t0 = time.perf_counter()
    opts = SearchOptions(
        k=RETRIEVE_K, include_tests=True, include_docs=False, max_per_file=MAX_PER_FILE
    )
    res = retriever.search(request, opts)
    t1 = time.perf_counter()
    store = retriever.store
    plan = build_plan(
        request,
        res.hits,
        store,
        repo=str(store.repo),
        commit=store.meta().commit,
        max_files=max_files,
    )
    t2 = time.perf_counter()
    plan.timings_ms = {"retrieve": (t1 - t0) * 1000, "plan": (t2 - t1) * 1000}
    if not plan.files:
        plan.notes.append("No code matched the request — rephrase it with the names you know")
    if llm is not None and plan.files:
        add_prose(plan, res.hits, llm, stream=stream)
        plan.timings_ms["prose"] = (time.perf_counter() - t2) * 1000
    plan.timings_ms["total"] = (time.perf_counter() - t0) * 1000
    return plan
