"""Retrieval evaluation: labelled questions -> hit@k, recall@k, MRR per search configuration.

A *configuration* is a named set of search options (``dense``, ``fts``, ``hybrid``,
``hybrid+scope``, ``hybrid+scope+expand``, ``+rerank``, ``+hyde``) optionally evaluated against a
separately built index (``@fp32``, ``@noenrich``). Every configuration answers the same questions,
so any two can be compared question by question with an exact McNemar test.

Everything ranking-critical here is a pure function (``is_hit``, ``hit_at``, ``recall_at``,
``reciprocal_rank``, ``percentile``, ``mcnemar_exact`` ...). See docs/eval.md for the file format
and the definitions.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from askrepo.datatypes import DOC, TEST, symbol_matches
from askrepo.errors import (
    AskrepoError,
    IndexIncompatibleError,
    NoIndexError,
    UsageError,
    whole_number,
)

if TYPE_CHECKING:  # pragma: no cover
    from askrepo.retriever import Retriever, SearchOptions

DEFAULT_CONFIGS = (
    "dense",
    "fts",
    "hybrid",
    "hybrid+scope",
    "hybrid+scope+expand",
    "hybrid+scope+rerank",
)
DEFAULT_BASELINE = "hybrid+scope"  # what `askrepo search` does with no flags
RERANK_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"
RERANK_POOL = 20  # candidates handed to the cross-encoder
WASTE_CLASSES = (TEST, DOC)

# ---------------------------------------------------------------------------------------------
# Query files


@dataclass(frozen=True)
class Expected:
    """One gold location. Lines are 1-based inclusive; ``symbol`` is a qualified name."""

    path: str
    start_line: int | None = None
    end_line: int | None = None
    symbol: str | None = None


@dataclass
class EvalQuery:
    id: str
    question: str
    expected: list[Expected]
    tags: list[str] = field(default_factory=list)
    absent: bool = False  # about something the code base does not contain
    secondary: list[Expected] = field(default_factory=list)  # half-gain targets (NDCG)
    language: str | None = None  # the repository's language, for per-language breakdowns


def parse_queries(text: str, source: str = "<queries>") -> list[EvalQuery]:
    """Parse a query file, detecting its format.

    * askrepo format: a JSON list of ``{"id", "question", "expected": [{"path", "start_line"?,
      "end_line"?, "symbol"?}], "tags"?, "absent"?}``.
    * click-eval format: JSON lines of ``{"id", "question", "expected": {"result",
      "locations": [{"path", "line_min", "line_max"}]}, "category"?}``; ``result ==
      "insufficient_evidence"`` marks an absent question.

    * benchmark format: a JSON list of ``{"query", "relevant": ["path" | {"path",
      "start_line", "end_line"}], "secondary"?: [...], "category"?, "language"?, "id"?}``.

    The format is decided per record (``query`` + ``relevant``, or the shape of ``expected``: a
    list or an object), so a JSON list or JSON lines of any shape are accepted.
    """
    stripped = text.strip()
    if not stripped:
        raise UsageError(f"The query file {source} is empty; add at least one question.")
    records: list[Any]
    try:
        data = json.loads(stripped)
        records = data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        records = []
        for lineno, line in enumerate(stripped.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UsageError(
                    f"{source}:{lineno} is not valid JSON ({exc.msg}); the file must be a JSON "
                    "list or JSON lines."
                ) from exc
    queries = [_parse_record(r, source, i) for i, r in enumerate(records, 1)]
    seen: set[str] = set()
    for q in queries:
        if q.id in seen:
            raise UsageError(f"{source}: question id {q.id!r} appears twice; ids must be unique.")
        seen.add(q.id)
    return queries


def load_queries(path: Path) -> list[EvalQuery]:
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"No query file at {path}; pass --queries FILE (format: docs/eval.md).")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"{path} is not UTF-8 text — pass a JSON or JSONL question file (docs/eval.md)."
        ) from None
    return parse_queries(text, str(path))


def _targets(items: Any, where: str) -> list[Expected]:
    """``["path", {"path", "start_line"?, "end_line"?, "symbol"?}]`` -> Expected list."""
    if not isinstance(items, list):
        raise UsageError(f"{where}: 'relevant' and 'secondary' must be lists.")
    out = []
    for e in items:
        if isinstance(e, str) and e:
            out.append(Expected(path=e))
            continue
        if not isinstance(e, dict) or not e.get("path"):
            raise UsageError(f"{where}: every target needs a 'path' (a string or an object).")
        out.append(_expected(e, where))
    return out


def _expected(e: dict[str, Any], where: str = "a target") -> Expected:
    """An ``Expected`` from ``{"path", "start_line"?, "end_line"?, "symbol"?}`` (path checked by
    the caller); a missing end line is the start line."""
    start = _opt_int(e.get("start_line"), where, "start_line")
    end = _opt_int(e.get("end_line"), where, "end_line")
    _check_range(start, end, where)
    return Expected(
        path=str(e["path"]),
        start_line=start,
        end_line=end if end is not None else start,
        symbol=e.get("symbol") or None,
    )


def _parse_benchmark_record(rec: dict[str, Any], where: str, n: int) -> EvalQuery:
    relevant = _targets(rec.get("relevant") or [], where)
    if not relevant:
        raise UsageError(f"{where} has no relevant target; add one path to 'relevant'.")
    tags = [str(rec["category"])] if rec.get("category") else []
    tags += [str(t) for t in rec.get("tags") or [] if str(t) not in tags]
    return EvalQuery(
        id=str(rec.get("id") or f"q{n}"),
        question=rec["query"],
        expected=relevant,
        tags=tags,
        secondary=_targets(rec.get("secondary") or [], where),
        language=str(rec["language"]) if rec.get("language") else None,
    )


def _parse_record(rec: Any, source: str, n: int) -> EvalQuery:
    where = f"{source}: record {n}"
    if isinstance(rec, dict):
        text = rec.get("query", rec.get("question"))
        if isinstance(text, str) and not text.strip():
            raise UsageError(f"{where}: the question is empty.")
    if isinstance(rec, dict) and isinstance(rec.get("query"), str) and "relevant" in rec:
        return _parse_benchmark_record(rec, where, n)
    if not isinstance(rec, dict) or not isinstance(rec.get("question"), str):
        raise UsageError(
            f"{where} needs a 'question' (or 'query' + 'relevant') string (format: docs/eval.md)."
        )
    qid = str(rec.get("id") or f"q{n}")
    exp = rec.get("expected", [])
    if isinstance(exp, dict):  # click-eval format
        absent = exp.get("result") == "insufficient_evidence"
        expected = []
        for loc in exp.get("locations") or []:
            if not isinstance(loc, dict) or not loc.get("path"):
                raise UsageError(f"{where}: every location needs a 'path'.")
            start = _opt_int(loc.get("line_min"), where, "line_min")
            end = _opt_int(loc.get("line_max", loc.get("line_min")), where, "line_max")
            _check_range(start, end, where)
            expected.append(Expected(path=str(loc["path"]), start_line=start, end_line=end))
        tags = [str(rec["category"])] if rec.get("category") else []
        if absent and "absent" not in tags:
            tags.append("absent")
    elif isinstance(exp, list):
        absent = bool(rec.get("absent", False))
        expected = []
        for e in exp:
            if not isinstance(e, dict) or not e.get("path"):
                raise UsageError(f"{where}: every expected location needs a 'path'.")
            expected.append(_expected(e, where))
        tags = [str(t) for t in rec.get("tags") or []]
    else:
        raise UsageError(f"{where}: 'expected' must be a list or an object.")
    if not absent and not expected:
        raise UsageError(
            f'{where} ({qid}) has no expected location; add one or mark it "absent": true.'
        )
    return EvalQuery(id=qid, question=rec["question"], expected=expected, tags=tags, absent=absent)


def unreachable_targets(queries: Sequence[EvalQuery], indexed: Collection[str]) -> list[str]:
    """One line per expected or secondary path that is not an indexed file: no search can
    return it, so the question scores a miss whatever the ranking does (a typo, a file the
    walk skips, a path outside the repository).

    >>> q = EvalQuery(id="q1", question="x", expected=[Expected(path="nosuch.go")])
    >>> unreachable_targets([q], {"router.go"})
    ['q1: nosuch.go is not an indexed file — no search can find it']
    """
    out = []
    for q in queries:
        for t in [*q.expected, *q.secondary]:
            if t.path not in indexed:
                out.append(f"{q.id}: {t.path} is not an indexed file — no search can find it")
    return out


def _opt_int(v: Any, where: str = "a target", name: str = "a line") -> int | None:
    """A line number from a question file: an int, or a string of digits; None when absent."""
    if v is None:
        return None
    n = whole_number(v)
    if n is None:
        raise UsageError(f"{where}: {name} must be a whole number (got {v!r}).")
    if n < 1:
        raise UsageError(f"{where}: {name} must be 1 or more — lines count from 1 (got {n}).")
    return n


def _check_range(start: int | None, end: int | None, where: str) -> None:
    if start is not None and end is not None and end < start:
        raise UsageError(f"{where}: the end line {end} is before the start line {start}.")


# ---------------------------------------------------------------------------------------------
# Pure metrics. ``hits`` are anything with path/start_line/end_line/symbol/file_class (Hit).


class Located(Protocol):
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    file_class: str


def is_hit(hit: Located, exp: Expected) -> bool:
    """Same path and overlapping line ranges; for a symbol-only expectation, a matching symbol.

    An expectation with only a path accepts any chunk of that file.
    """
    if hit.path != exp.path:
        return False
    if exp.start_line is not None:
        end = exp.end_line if exp.end_line is not None else exp.start_line
        return hit.start_line <= end and exp.start_line <= hit.end_line
    if exp.symbol:
        return symbol_matches(hit.symbol, exp.symbol)
    return True


def first_hit_rank(hits: Sequence[Located], expected: Sequence[Expected], k: int) -> int | None:
    """1-based position of the first of the top ``k`` hits matching any expectation, else None.

    Rank is the position in the returned list; equal scores are not re-ordered.
    """
    for i, h in enumerate(hits[:k], 1):
        if any(is_hit(h, e) for e in expected):
            return i
    return None


def hit_at(hits: Sequence[Located], expected: Sequence[Expected], k: int) -> bool:
    return first_hit_rank(hits, expected, k) is not None


def recall_at(hits: Sequence[Located], expected: Sequence[Expected], k: int) -> float:
    """Fraction of expected locations matched by at least one of the top ``k`` hits."""
    if not expected:
        return 0.0
    top = hits[:k]
    found = sum(1 for e in expected if any(is_hit(h, e) for h in top))
    return found / len(expected)


def reciprocal_rank(hits: Sequence[Located], expected: Sequence[Expected], k: int) -> float:
    """1 / rank of the first hit within the top ``k``; 0 when there is none."""
    r = first_hit_rank(hits, expected, k)
    return 0.0 if r is None else 1.0 / r


def symbol_hit_at(hits: Sequence[Located], expected: Sequence[Expected], k: int) -> bool | None:
    """A top-``k`` hit in an expected file whose symbol matches an expected symbol.

    None when no expectation names a symbol (the question does not count for this metric).
    """
    with_sym = [e for e in expected if e.symbol]
    if not with_sym:
        return None
    return any(
        h.path == e.path and symbol_matches(h.symbol, e.symbol or "")
        for h in hits[:k]
        for e in with_sym
    )


def wasted_slots(hits: Sequence[Located], k: int) -> tuple[int, int]:
    """(slots taken by test/doc chunks, slots filled) among the top ``k`` hits."""
    top = hits[:k]
    return sum(1 for h in top if h.file_class in WASTE_CLASSES), len(top)


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile: the smallest value with at least p% of values <= it.

    ``sorted(values)[ceil(p/100 * n) - 1]``; p50 of [1, 2, 3, 4] is 2, p95 of 20 values is the
    19th smallest. None for no values.
    """
    if not values:
        return None
    if not 0 < p <= 100:
        raise ValueError("p must be in (0, 100]")
    ordered = sorted(values)
    idx = max(1, math.ceil(p / 100 * len(ordered))) - 1
    return ordered[idx]


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: binomial test of b discordant pairs vs c at p = 0.5.

    p = min(1, 2 * sum_{i <= min(b, c)} C(b + c, i) / 2^(b + c)); 1.0 when b + c = 0.
    """
    if b < 0 or c < 0:
        raise ValueError("counts must be >= 0")
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


def paired_counts(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int, int, int]:
    """(a only, b only, both, neither) over paired per-question outcomes."""
    if len(a) != len(b):
        raise ValueError("paired outcomes must have the same length")
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    both = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    return a_only, b_only, both, len(a) - a_only - b_only - both


# ---------------------------------------------------------------------------------------------
# Configurations


_MODES = ("dense", "fts", "hybrid")
_FLAGS = ("scope", "expand", "rerank", "hyde", "nosymbol", "nopieces", "files")
NDCG_K = 10  # NDCG is always NDCG@10 (each search fetches at least 10 hits)


@dataclass(frozen=True)
class ConfigSpec:
    """A parsed configuration name:
    ``MODE[+scope][+expand][+rerank][+hyde][+nosymbol][+nopieces][+files][-STAGE...][@VAR...]``.

    ``nosymbol`` turns off the hybrid retriever's exact-symbol boost (an ablation); ``nopieces``
    makes dense search ignore the piece vectors of long chunks (an ablation). ``-STAGE``
    switches off one ranking stage (``askrepo.ranking.STAGES``: ``-defs``, ``-priors`` …);
    ``-ranking`` switches off all of them. ``+files`` ranks files (``files.rank_files`` over
    the top ``retriever.FILE_POOL`` chunks of ``retriever.file_pool``), one result per file,
    as ``search --files``.

    Variants build a separate index: ``@fp32`` / ``@int8`` (embedding precision of the default
    model), ``@model=NAME``, ``@noenrich`` / ``@enrich``, ``@contextual`` (one-line LLM
    summaries stored and embedded with each chunk, as ``askrepo index --contextual``; needs
    ``--with-llm``).
    """

    name: str
    mode: str = "hybrid"
    scope: bool = False
    expand: bool = False
    rerank: bool = False
    hyde: bool = False
    nosymbol: bool = False
    nopieces: bool = False
    files: bool = False
    disabled: tuple[str, ...] = ()
    model: str | None = None
    enrich: bool | None = None
    contextual: bool = False

    @property
    def variant(self) -> tuple[str | None, bool | None, bool] | None:
        """(model, enrich, contextual) of the separate index this config needs, or None."""
        if self.model is None and self.enrich is None and not self.contextual:
            return None
        return (self.model, self.enrich, self.contextual)

    def options(self, k: int) -> SearchOptions:
        from askrepo.retriever import FILE_POOL, SearchOptions, file_pool

        k = max(k, NDCG_K)
        if self.files:
            k = max(k, FILE_POOL)
        opts = SearchOptions(
            k=max(k, RERANK_POOL) if self.rerank else k,
            mode=self.mode,
            scope=self.scope,
            expand=self.expand,
            symbol_boost=not self.nosymbol,
            pieces=not self.nopieces,
            disabled=self.disabled,
        )
        # a file ranking's pool, as search --files reads it
        return file_pool(opts, opts.k) if self.files else opts


def parse_config(name: str) -> ConfigSpec:
    """Parse ``hybrid+scope+expand@noenrich`` into a ConfigSpec (UsageError when unknown)."""
    from askrepo.ranking import STAGES

    raw = name.strip()
    base, _, variant_part = raw.partition("@")
    parts = re.findall(r"([+-]?)([^+-]*)", base)
    tokens = [(sign, t) for sign, t in parts if t]
    if not tokens or tokens[0][1] not in _MODES or tokens[0][0]:
        raise UsageError(
            f"Configuration {name!r} must start with one of {', '.join(_MODES)} "
            "(e.g. hybrid+scope+expand)."
        )
    flags: dict[str, Any] = {}
    disabled: list[str] = []
    for sign, t in tokens[1:]:
        if sign == "-":
            if t == "ranking":
                disabled.extend(STAGES)
            elif t in STAGES:
                disabled.append(t)
            else:
                raise UsageError(
                    f"Unknown ranking stage {t!r} in configuration {name!r}; use "
                    f"{', '.join(STAGES)} or ranking (all)."
                )
        elif t not in _FLAGS:
            raise UsageError(
                f"Unknown option {t!r} in configuration {name!r}; use {', '.join(_FLAGS)}."
            )
        else:
            flags[t] = True
    flags["disabled"] = tuple(dict.fromkeys(disabled))
    model: str | None = None
    enrich: bool | None = None
    contextual = False
    for v in [v for v in re.split(r"[@+]", variant_part) if v]:
        if v == "contextual":
            contextual = True
        elif v == "noenrich":
            enrich = False
        elif v == "enrich":
            enrich = True
        elif v in ("fp32", "int8"):
            model = _precision_model(v)
        elif v.startswith("model="):
            model = v.removeprefix("model=")
        else:
            raise UsageError(
                f"Unknown index variant {v!r} in {name!r}; use fp32, int8, model=NAME, "
                "noenrich, enrich or contextual."
            )
    return ConfigSpec(
        name=raw, mode=tokens[0][1], model=model, enrich=enrich, contextual=contextual, **flags
    )


def _precision_model(precision: str) -> str:
    """``@fp32`` / ``@int8``: that precision of the configured model (``minilm-int8``)."""
    from askrepo import config

    base = config.embed_model().removesuffix("-fp32").removesuffix("-int8")
    return f"{base}-{precision}"


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class QueryResult:
    id: str
    absent: bool
    first_rank: int | None
    hit_at_1: bool
    hit_at_k: bool
    recall_at_k: float
    reciprocal_rank: float
    symbol_hit_at_k: bool | None
    wasted: int  # test/doc slots (0 when the question is about tests/docs)
    slots: int  # filled slots counted for waste (0 when about tests/docs)
    latency_ms: float
    top_score: float | None
    top: list[str]  # locations of the top k hits, for reading the report
    returned: int = 0  # hits returned (expansion appends up to k more after the top k)
    hit_in_returned: bool = False  # a hit anywhere in the returned list
    ndcg_at_10: float | None = None  # None for absent questions
    file_rank: int | None = None  # rank of the first relevant file among distinct files
    file_hit_at_1: bool = False
    file_hit_at_5: bool = False
    file_reciprocal_rank: float = 0.0


@dataclass
class ConfigReport:
    name: str
    status: str  # "ok" | "skipped"
    reason: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    n: int = 0  # answerable questions (ranking metrics are over these)
    hit_at_1: float | None = None
    hit_at_k: float | None = None
    recall_at_k: float | None = None
    mrr: float | None = None
    symbol_hit_at_k: float | None = None
    symbol_n: int = 0
    wasted_share: float | None = None  # test/doc slots / filled slots, non-test/doc questions
    wasted_slots: int = 0
    counted_slots: int = 0
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    hit_in_returned: float | None = None  # differs from hit@k only when more than k come back
    mean_returned: float | None = None
    absent_n: int = 0
    absent_mean_top_score: float | None = None
    answerable_mean_top_score: float | None = None
    ndcg_at_10: float | None = None
    file_hit_at_1: float | None = None
    file_hit_at_5: float | None = None
    file_mrr: float | None = None
    by_tag: dict[str, dict[str, float | int]] = field(default_factory=dict)
    by_language: dict[str, dict[str, float | int]] = field(default_factory=dict)
    queries: list[QueryResult] = field(default_factory=list)


@dataclass
class PairedComparison:
    """Question-by-question comparison of config ``a`` vs ``b`` on hit@k (or hit@1)."""

    a: str
    b: str
    metric: str
    a_only: int  # questions a hits and b misses
    b_only: int
    both: int
    neither: int
    p_value: float


@dataclass
class IdentifierCheck:
    """What `ask`'s refusal rule (``answer.missing_identifiers``) does with these questions.

    `ask` answers "not in this code base" without the model when a question names an
    identifier that occurs nowhere in the index.
    """

    absent_n: int = 0
    absent_with_identifier: int = 0
    absent_refused: int = 0  # correct refusals
    answerable_n: int = 0
    answerable_with_identifier: int = 0
    answerable_refused: int = 0  # wrong refusals
    details: dict[str, dict[str, list[str]]] = field(default_factory=dict)


@dataclass
class EvalReport:
    repo: str
    queries_file: str | None
    k: int
    n_questions: int
    n_answerable: int
    n_absent: int
    baseline: str
    index: dict[str, Any]
    configs: list[ConfigReport]
    hidden_path: str | None  # the question file, when indexed: its chunks are not scored
    comparisons: list[PairedComparison]
    identifiers: IdentifierCheck

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def config(self, name: str) -> ConfigReport:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------
# Scoring one configuration


def score_query(
    q: EvalQuery,
    hits: Sequence[Any],
    k: int,
    latency_ms: float,
    about_tests_docs: bool,
) -> QueryResult:
    """Per-question outcome for one configuration's ranked ``hits`` (hit@k, recall, MRR over
    the top ``k``; NDCG@10 and the file-level metrics over the top NDCG_K ranked hits)."""
    from askrepo import metrics

    top = list(hits[:k])
    ranked = [h for h in hits if not getattr(h, "expanded_from", None)][: max(k, NDCG_K)]
    if q.absent:
        ndcg, frank = None, None
    else:
        ndcg = metrics.ndcg_at_k(ranked, q.expected, NDCG_K, q.secondary)
        frank = metrics.file_rank(ranked, q.expected)
    wasted, slots = (0, 0) if about_tests_docs or q.absent else wasted_slots(top, k)
    if q.absent:
        rank, rr, rec, sym = None, 0.0, 0.0, None
    else:
        rank = first_hit_rank(top, q.expected, k)
        rr = reciprocal_rank(top, q.expected, k)
        rec = recall_at(top, q.expected, k)
        sym = symbol_hit_at(top, q.expected, k)
    return QueryResult(
        id=q.id,
        absent=q.absent,
        first_rank=rank,
        hit_at_1=rank == 1,
        hit_at_k=rank is not None,
        recall_at_k=rec,
        reciprocal_rank=rr,
        symbol_hit_at_k=sym,
        wasted=wasted,
        slots=slots,
        latency_ms=latency_ms,
        top_score=float(top[0].score) if top and hasattr(top[0], "score") else None,
        top=[f"{h.path}:{h.start_line}-{h.end_line}" for h in top],
        returned=len(hits),
        hit_in_returned=False if q.absent else hit_at(hits, q.expected, len(hits)),
        ndcg_at_10=ndcg,
        file_rank=frank,
        file_hit_at_1=frank == 1,
        file_hit_at_5=frank is not None and frank <= 5,
        file_reciprocal_rank=0.0 if frank is None else 1.0 / frank,
    )


def summarize(rs: Sequence[QueryResult]) -> dict[str, float | int]:
    """n, hit@1, hit@k, NDCG@10, file hit@1 / hit@5, file MRR over answerable outcomes."""
    n = len(rs)
    if not n:
        return {"n": 0}
    return {
        "n": n,
        "hit_at_1": sum(r.hit_at_1 for r in rs) / n,
        "hit_at_k": sum(r.hit_at_k for r in rs) / n,
        "ndcg_at_10": sum(r.ndcg_at_10 or 0.0 for r in rs) / n,
        "file_hit_at_1": sum(r.file_hit_at_1 for r in rs) / n,
        "file_hit_at_5": sum(r.file_hit_at_5 for r in rs) / n,
        "file_mrr": sum(r.file_reciprocal_rank for r in rs) / n,
    }


def aggregate(
    name: str, options: dict[str, Any], results: list[QueryResult], queries: list[EvalQuery]
) -> ConfigReport:
    """Average per-question outcomes; absent questions are kept out of the ranking metrics."""
    ranked = [r for r in results if not r.absent]
    absent = [r for r in results if r.absent]
    n = len(ranked)

    def mean(xs: Sequence[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    sym = [r.symbol_hit_at_k for r in ranked if r.symbol_hit_at_k is not None]
    wasted = sum(r.wasted for r in results)
    counted = sum(r.slots for r in results)
    lat = [r.latency_ms for r in results]
    by_tag: dict[str, dict[str, float | int]] = {}
    tags = {q.id: q.tags for q in queries}
    for tag in sorted({t for q in queries if not q.absent for t in q.tags}):
        by_tag[tag] = summarize([r for r in ranked if tag in tags.get(r.id, [])])
    langs = {q.id: q.language for q in queries}
    by_language = {
        lang: summarize([r for r in ranked if langs.get(r.id) == lang])
        for lang in sorted({q.language for q in queries if q.language and not q.absent})
    }
    return ConfigReport(
        name=name,
        status="ok",
        options=options,
        n=n,
        hit_at_1=mean([float(r.hit_at_1) for r in ranked]),
        hit_at_k=mean([float(r.hit_at_k) for r in ranked]),
        recall_at_k=mean([r.recall_at_k for r in ranked]),
        mrr=mean([r.reciprocal_rank for r in ranked]),
        symbol_hit_at_k=mean([float(s) for s in sym]),
        symbol_n=len(sym),
        wasted_share=wasted / counted if counted else None,
        wasted_slots=wasted,
        counted_slots=counted,
        latency_p50_ms=percentile(lat, 50),
        latency_p95_ms=percentile(lat, 95),
        hit_in_returned=mean([float(r.hit_in_returned) for r in ranked]),
        mean_returned=mean([float(r.returned) for r in ranked]),
        absent_n=len(absent),
        absent_mean_top_score=mean([r.top_score for r in absent if r.top_score is not None]),
        answerable_mean_top_score=mean([r.top_score for r in ranked if r.top_score is not None]),
        ndcg_at_10=mean([r.ndcg_at_10 or 0.0 for r in ranked]),
        file_hit_at_1=mean([float(r.file_hit_at_1) for r in ranked]),
        file_hit_at_5=mean([float(r.file_hit_at_5) for r in ranked]),
        file_mrr=mean([r.file_reciprocal_rank for r in ranked]),
        by_tag=by_tag,
        by_language=by_language,
        queries=results,
    )


def compare(configs: Sequence[ConfigReport], baseline: str) -> list[PairedComparison]:
    """McNemar comparisons of every evaluated config against ``baseline`` and of every pair."""
    ok = [c for c in configs if c.status == "ok"]
    out: list[PairedComparison] = []
    for i, a in enumerate(ok):
        for b in ok[i + 1 :]:
            for metric, attr in (("hit@k", "hit_at_k"), ("hit@1", "hit_at_1")):
                ra = [getattr(r, attr) for r in a.queries if not r.absent]
                rb = [getattr(r, attr) for r in b.queries if not r.absent]
                a_only, b_only, both, neither = paired_counts(ra, rb)
                # Orient every pair as (baseline, other) when the baseline is involved.
                first, second = (a.name, b.name)
                if b.name == baseline:
                    first, second = b.name, a.name
                    a_only, b_only = b_only, a_only
                out.append(
                    PairedComparison(
                        a=first,
                        b=second,
                        metric=metric,
                        a_only=a_only,
                        b_only=b_only,
                        both=both,
                        neither=neither,
                        p_value=mcnemar_exact(a_only, b_only),
                    )
                )
    return out


# ---------------------------------------------------------------------------------------------
# Running


Searcher = Callable[[str], list[Any]]  # question -> ranked hits


def run_eval(
    repo: Path,
    queries: Sequence[EvalQuery],
    configs: Sequence[str] = DEFAULT_CONFIGS,
    k: int = 5,
    *,
    baseline: str | None = None,
    with_llm: bool = False,
    llm: Any = None,
    queries_file: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvalReport:
    """Evaluate each configuration on ``queries`` against the index of ``repo``.

    Raises the store's NoIndexError when ``repo`` has no index. Configurations that cannot run
    here (reranker model not cached, no LLM, variant index fails) are reported as skipped with
    the reason. Metrics are deterministic for a fixed index; latencies are wall-clock.
    """
    from askrepo.retriever import Retriever

    if k < 1:
        raise UsageError("k must be at least 1.")
    specs = [parse_config(c) for c in configs]
    if with_llm and not any(s.hyde for s in specs):
        specs.append(parse_config("hybrid+scope+hyde"))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise UsageError("A configuration is listed twice; list each once.")
    if baseline is None:
        baseline = DEFAULT_BASELINE if DEFAULT_BASELINE in names else names[0]
    elif baseline not in names:
        raise UsageError(f"The baseline {baseline!r} is not among the configurations {names}.")
    queries = list(queries)
    if not queries:
        raise UsageError("No questions to evaluate; the query file is empty.")

    main = Retriever.open(Path(repo))
    store = main.store
    files = store.files()
    about_td = {q.id: _about_tests_docs(q, files) for q in queries}
    hide = _indexed_path(queries_file, store.repo, files)

    helpers = _Helpers(with_llm=with_llm, llm=llm)
    reports: dict[str, ConfigReport] = {}
    main_specs = [s for s in specs if s.variant is None]
    for spec in main_specs:
        reports[spec.name] = _run_config(main, spec, queries, k, about_td, helpers, progress, hide)

    variants: dict[tuple[str | None, bool | None, bool], list[ConfigSpec]] = {}
    for s in specs:
        if s.variant is not None:
            variants.setdefault(s.variant, []).append(s)
    for (model, enrich, contextual), vspecs in variants.items():
        summarizer = None
        if contextual:
            summarizer, why = helpers.llm()
            if summarizer is None:
                for spec in vspecs:
                    reports[spec.name] = ConfigReport(
                        name=spec.name, status="skipped", reason=f"@contextual {why}"
                    )
                continue
        try:
            with _variant_retriever(store.repo, model, enrich, progress, summarizer) as retr:
                for spec in vspecs:
                    reports[spec.name] = _run_config(
                        retr, spec, queries, k, about_td, helpers, progress, hide
                    )
        except AskrepoError as exc:
            for spec in vspecs:
                if spec.name not in reports:
                    reports[spec.name] = ConfigReport(
                        name=spec.name, status="skipped", reason=f"variant index failed: {exc}"
                    )

    ordered = [reports[n] for n in names]
    return EvalReport(
        repo=str(store.repo),
        queries_file=queries_file,
        k=k,
        n_questions=len(queries),
        n_answerable=sum(1 for q in queries if not q.absent),
        n_absent=sum(1 for q in queries if q.absent),
        baseline=baseline,
        index=_meta_dict(store),
        configs=ordered,
        hidden_path=hide,
        comparisons=compare(ordered, baseline),
        identifiers=check_identifiers(queries, _HidingStore(store, hide) if hide else store),
    )


def _indexed_path(queries_file: str | None, repo: Path, files: dict[str, Any]) -> str | None:
    """The question file's repo-relative path if the index contains it, else None."""
    if not queries_file:
        return None
    try:
        rel = Path(queries_file).resolve().relative_to(Path(repo).resolve()).as_posix()
    except ValueError:
        return None
    return rel if rel in files else None


def drop_path(hits: Sequence[Any], path: str, k: int) -> list[Any]:
    """Remove hits in ``path`` (the question file itself), keeping ``k`` ranked hits and up to
    ``k`` expansion hits (those with ``expanded_from``) after them."""
    kept = [h for h in hits if h.path != path]
    ranked = [h for h in kept if not getattr(h, "expanded_from", None)][:k]
    expanded = [h for h in kept if getattr(h, "expanded_from", None)][:k]
    return ranked + expanded


def _meta_dict(store: Any) -> dict[str, Any]:
    meta = store.meta()
    return meta.to_dict() if hasattr(meta, "to_dict") else asdict(meta)


def _about_tests_docs(q: EvalQuery, files: dict[str, Any]) -> bool:
    if {"tests", "docs"} & set(q.tags):
        return True
    return any(getattr(files.get(e.path), "file_class", None) in WASTE_CLASSES for e in q.expected)


def check_identifiers(queries: Sequence[EvalQuery], store: Any) -> IdentifierCheck:
    """Apply `ask`'s refusal rule to every question (absent ones should be refused)."""
    from askrepo.answer import missing_identifiers
    from askrepo.identifiers import query_identifiers

    out = IdentifierCheck()
    for q in queries:
        names = query_identifiers(q.question)
        missing = missing_identifiers(q.question, store) if names else []
        if names:
            out.details[q.id] = {"names": names, "missing": missing}
        if q.absent:
            out.absent_n += 1
            out.absent_with_identifier += bool(names)
            out.absent_refused += bool(missing)
        else:
            out.answerable_n += 1
            out.answerable_with_identifier += bool(names)
            out.answerable_refused += bool(missing)
    return out


class _HidingStore:
    """The store as the refusal check sees it, minus the question file (which names every
    identifier the questions ask about, including the absent ones).

    ``has_term`` / ``has_fragment`` / ``absent_fragments`` are ``askrepo.presence``'s (the
    rules ``IndexStore`` uses) with that file left out.
    """

    def __init__(self, store: Any, hide: str) -> None:
        self._store, self._hide = store, hide

    def find_symbol(self, name: str) -> list[Any]:
        return [c for c in self._store.find_symbol(name) if c.path != self._hide]

    def has_term(self, term: str) -> bool:
        from askrepo.presence import has_term

        return has_term(self._store, term, exclude={self._hide})

    def has_fragment(self, fragment: str) -> bool:
        from askrepo.presence import has_fragment

        return has_fragment(self._store, fragment, exclude={self._hide})

    def absent_fragments(self, fragments: Any) -> list[str]:
        from askrepo.presence import absent_fragments

        return absent_fragments(self._store, fragments, exclude={self._hide})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class _Helpers:
    """Lazily loaded extras shared by configs: the cross-encoder and the LLM for HyDE."""

    def __init__(self, with_llm: bool, llm: Any) -> None:
        self.with_llm = with_llm
        self._llm = llm
        self._llm_error: str | None = None
        self._reranker: Any = None
        self._rerank_error: str | None = None

    def reranker(self) -> tuple[Any, str | None]:
        if self._reranker is None and self._rerank_error is None:
            self._reranker, self._rerank_error = load_reranker()
        return self._reranker, self._rerank_error

    def llm(self) -> tuple[Any, str | None]:
        if not self.with_llm:
            return None, "needs --with-llm (HyDE asks the LLM for a hypothetical snippet)"
        if self._llm is None and self._llm_error is None:
            try:
                from askrepo import llm as llm_mod

                self._llm = llm_mod.choose_backend()
            except (AskrepoError, ImportError) as exc:
                self._llm_error = f"no LLM backend available: {exc}"
        return self._llm, self._llm_error


def load_reranker(model_name: str = RERANK_MODEL) -> tuple[Any, str | None]:
    """The fastembed cross-encoder if it loads from a local cache without a hub download."""
    from askrepo import config

    try:
        from fastembed.rerank.cross_encoder import TextCrossEncoder
    except ImportError as exc:  # pragma: no cover - fastembed is a dependency
        return None, f"fastembed has no TextCrossEncoder ({exc})"
    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    caches = [config.models_dir() / "fastembed", None]  # ours, then fastembed's default
    try:
        with _quiet_fastembed():
            for cache in caches:
                try:
                    kw = {"cache_dir": str(cache)} if cache is not None else {}
                    return TextCrossEncoder(model_name=model_name, **kw), None
                except Exception:  # noqa: BLE001, S112 - any load failure: not available here
                    continue
        return None, (
            f"reranker model not available offline ({model_name} is in neither "
            f"{caches[0]} nor fastembed's default cache; it needs a Hugging Face download)"
        )
    finally:
        if old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old


@contextlib.contextmanager
def _quiet_fastembed() -> Iterator[None]:
    """fastembed logs an ERROR through loguru for every cache miss; we report our own reason."""
    try:
        from loguru import logger
    except ImportError:  # pragma: no cover
        yield
        return
    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


def hyde_snippet(llm: Any, question: str) -> str:
    """HyDE exactly as `ask --hyde` does it (``answer.hypothetical_snippet``)."""
    from askrepo.answer import hypothetical_snippet

    return hypothetical_snippet(llm, question)


def file_results(
    hits: Sequence[Any], vote: Callable[[list[Any]], list[Any]] | None = None
) -> list[Any]:
    """One result per file, in ``files.rank_files`` order (then re-ranked by ``vote``, the
    ``testvotes`` stage of ``search --files``): the file's best chunk, scored with the file's
    score (so every chunk metric reads a file ranking)."""
    from askrepo.files import rank_files

    files = rank_files(hits)
    if vote is not None:
        files = vote(files)
    return [replace(f.hits[0], rank=f.rank, score=f.score) for f in files]


def _rerank(ranker: Any, question: str, hits: list[Any], k: int) -> list[Any]:
    if not hits:
        return hits
    scores = list(ranker.rerank(question, [h.text for h in hits]))
    order = sorted(range(len(hits)), key=lambda i: (-float(scores[i]), i))
    return [replace(hits[i], rank=pos, score=float(scores[i])) for pos, i in enumerate(order, 1)][
        :k
    ]


def _run_config(
    retr: Retriever,
    spec: ConfigSpec,
    queries: Sequence[EvalQuery],
    k: int,
    about_td: dict[str, bool],
    helpers: _Helpers,
    progress: Callable[[str], None] | None,
    hide: str | None = None,
) -> ConfigReport:
    ranker = llm = None
    if spec.rerank:
        ranker, why = helpers.reranker()
        if ranker is None:
            return ConfigReport(name=spec.name, status="skipped", reason=why)
    if spec.hyde:
        llm, why = helpers.llm()
        if llm is None:
            return ConfigReport(name=spec.name, status="skipped", reason=why)
    opts = spec.options(k)
    options = asdict(opts) | {"rerank": spec.rerank, "hyde": spec.hyde}
    want = opts.k
    if hide is not None:  # room for the question file's own chunks, which are dropped
        opts = replace(opts, k=want + max(opts.max_per_file or 3, 1))
    if spec.variant is not None:
        options |= {"index_model": spec.model, "index_enrich": spec.enrich}
    if llm is not None:
        options["llm"] = f"{getattr(llm, 'name', '?')}:{getattr(llm, 'model', '?')}"

    def search(question: str) -> list[Any]:
        o = opts
        if llm is not None:
            snippet = hyde_snippet(llm, question)
            o = replace(opts, extra_queries=[snippet] if snippet else [])
        hits = list(retr.search(question, o).hits)
        if hide is not None:
            hits = drop_path(hits, hide, want)
        if spec.files:
            hits = file_results(hits, lambda files: retr.test_votes(question, o, files))
        if ranker is not None:
            hits = _rerank(ranker, question, hits, k)
        return hits

    try:
        search(queries[0].question)  # warm-up: model loads are not question latency
        results = []
        for i, q in enumerate(queries, 1):
            if progress is not None:
                progress(f"{spec.name}: {i}/{len(queries)}")
            t0 = time.perf_counter()
            hits = search(q.question)
            elapsed = (time.perf_counter() - t0) * 1000
            results.append(score_query(q, hits, k, elapsed, about_td[q.id]))
    except (NoIndexError, IndexIncompatibleError):
        raise
    except AskrepoError as exc:  # e.g. a model or LLM backend that cannot load here
        return ConfigReport(name=spec.name, status="skipped", reason=str(exc))
    return aggregate(spec.name, options, results, list(queries))


@contextlib.contextmanager
def _variant_retriever(
    root: Path,
    model: str | None,
    enrich: bool | None,
    progress: Callable[[str], None] | None,
    contextual: Any = None,
) -> Iterator[Retriever]:
    """Index ``root`` into a throwaway ASKREPO_HOME with another model/enrichment (and, with
    ``contextual`` = an LLM, one-line chunk summaries)."""
    from askrepo.indexer import index_repo
    from askrepo.retriever import Retriever

    old = os.environ.get("ASKREPO_HOME")
    with tempfile.TemporaryDirectory(prefix="askrepo-eval-") as home:
        os.environ["ASKREPO_HOME"] = home
        try:
            if progress is not None:
                progress(f"indexing variant model={model} enrich={enrich}")
            index_repo(root, model=model, enrich=enrich, contextual=contextual)
            yield Retriever.open(root, model=model)
        finally:
            if old is None:
                os.environ.pop("ASKREPO_HOME", None)
            else:
                os.environ["ASKREPO_HOME"] = old


# ---------------------------------------------------------------------------------------------
# Several repositories in one run (a benchmark manifest)


@dataclass(frozen=True)
class SuiteEntry:
    """One repository of a benchmark: its root, its question file and its language."""

    name: str
    repo: Path
    queries: Path
    language: str | None = None


@dataclass
class SuiteReport:
    manifest: str
    k: int
    baseline: str
    repos: list[EvalReport]
    pooled: list[ConfigReport]  # every question of every repository, one report per config
    comparisons: list[PairedComparison]
    missing: list[dict[str, str]]  # entries not evaluated (no corpus, no index) and why

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_manifest(path: Path) -> list[SuiteEntry]:
    """A JSON list of ``{"name"?, "repo", "queries", "language"?}``. Relative paths are resolved
    against the manifest's folder; ``$VARS`` and ``~`` are expanded (e.g. ``$ASKREPO_CORPORA``).
    ``queries`` may be a file pattern (``dev/*.json``): one entry per match, named by its stem,
    with ``{name}`` in ``repo`` replaced by it."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"No manifest at {path}; pass --manifest FILE (format: docs/eval.md).")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc.msg}); see docs/eval.md.") from exc
    if isinstance(data, dict):
        data = data.get("repos", [])
    if not isinstance(data, list) or not data:
        raise UsageError(f"{path} must be a non-empty JSON list of {{repo, queries}} entries.")
    base = path.parent

    def resolve(p: str) -> Path:
        q = Path(os.path.expanduser(os.path.expandvars(p)))
        return q if q.is_absolute() else (base / q)

    out = []
    for i, e in enumerate(data, 1):
        if not isinstance(e, dict) or not e.get("repo") or not e.get("queries"):
            raise UsageError(f"{path}: entry {i} needs 'repo' and 'queries'.")
        queries = resolve(str(e["queries"]))
        # a pattern ("dev/*.json") stands for every matching file; "{name}" in repo is its stem
        files = sorted(queries.parent.glob(queries.name)) if "*" in queries.name else [queries]
        for qf in files:
            name = str(e.get("name") or qf.stem) if len(files) == 1 else qf.stem
            out.append(
                SuiteEntry(
                    name=name,
                    repo=resolve(str(e["repo"]).replace("{name}", qf.stem)),
                    queries=qf,
                    language=str(e["language"]) if e.get("language") else None,
                )
            )
    return out


def run_suite(
    entries: Sequence[SuiteEntry],
    configs: Sequence[str] = DEFAULT_CONFIGS,
    k: int = 5,
    *,
    baseline: str | None = None,
    manifest: str = "",
    progress: Callable[[str], None] | None = None,
) -> SuiteReport:
    """``run_eval`` on every entry (each must be indexed), then every configuration pooled over
    all questions (ids become ``name:id``) with per-language and per-category breakdowns."""
    reports: list[EvalReport] = []
    missing: list[dict[str, str]] = []
    pooled_results: dict[str, list[QueryResult]] = {}
    pooled_queries: list[EvalQuery] = []
    options: dict[str, dict[str, Any]] = {}
    for e in entries:
        if not e.repo.is_dir():
            missing.append({"name": e.name, "reason": f"no corpus at {e.repo}"})
            continue
        qs = [
            replace(q, id=f"{e.name}:{q.id}", language=q.language or e.language)
            for q in load_queries(e.queries)
        ]
        try:
            rep = run_eval(
                e.repo,
                qs,
                configs,
                k,
                baseline=baseline,
                queries_file=str(e.queries),
                progress=(lambda m, n=e.name: progress(f"{n}: {m}")) if progress else None,
            )
        except (NoIndexError, IndexIncompatibleError) as exc:
            missing.append({"name": e.name, "reason": str(exc)})
            continue
        reports.append(rep)
        pooled_queries.extend(qs)
        for c in rep.configs:
            if c.status == "ok":
                pooled_results.setdefault(c.name, []).extend(c.queries)
                options.setdefault(c.name, c.options)
    names = [parse_config(c).name for c in configs]
    base = reports[0].baseline if reports else (baseline or names[0])
    pooled = []
    for n in names:
        if n in pooled_results and all(r.config(n).status == "ok" for r in reports):
            pooled.append(aggregate(n, options[n], pooled_results[n], pooled_queries))
        else:
            pooled.append(ConfigReport(name=n, status="skipped", reason="not run on every repo"))
    return SuiteReport(
        manifest=manifest,
        k=k,
        baseline=base,
        repos=reports,
        pooled=pooled,
        comparisons=compare(pooled, base),
        missing=missing,
    )
