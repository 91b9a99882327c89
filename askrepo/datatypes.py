"""Small result types shared by every module. They print as JSON via ``to_dict``.

LanceDB / Arrow objects never leave ``store.py``; everything else speaks these.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

# File classes: what a file is *for*. Tests and docs are filtered out of search by default.
CODE, TEST, DOC, CONFIG = "code", "test", "doc", "config"

# Chunk kinds that are NOT definitions: line windows between definitions, whole-file text of
# languages without a grammar, and markdown sections (headings). Every other kind (function,
# method, class, ...) is a definition. The one rule used by find_symbol, symbol boosting and
# call-graph expansion.
NON_DEFINITION_KINDS = frozenset({"window", "text", "section"})


def is_definition(kind: str | None) -> bool:
    """Whether a chunk of this kind defines its symbol (a function, method, class, ...)."""
    return bool(kind) and kind not in NON_DEFINITION_KINDS


def last_part(symbol: str | None) -> str:
    """The last part of a dotted symbol: ``Status.console`` -> ``console``; "" for None."""
    return (symbol or "").rsplit(".", 1)[-1]


def symbol_matches(actual: str | None, expected: str) -> bool:
    """``expected`` equals ``actual`` or is its dotted suffix ("search" ~ "Retriever.search")."""
    if not actual:
        return False
    return actual == expected or actual.endswith("." + expected)


class _JSON:
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kw)


@dataclass
class SourceFile(_JSON):
    """A file the walker decided to index (content is read again when it is chunked)."""

    path: str  # repo-relative, POSIX separators
    language: str | None  # tree-sitter-language-pack name ("python", "tsx", ...) or None
    file_class: str  # code | test | doc | config
    size: int
    sha: str  # sha256 of the raw bytes
    # stat when walked: a file whose (size, mtime_ns, inode) did not change is not re-hashed
    # by the freshness check (askrepo.freshness)
    mtime_ns: int = 0
    inode: int = 0


@dataclass
class Chunk(_JSON):
    """A contiguous, 1-based inclusive line range of one file."""

    path: str
    start_line: int
    end_line: int
    text: str
    language: str | None
    kind: str  # function | method | class | window | section | text
    symbol: str | None = None  # qualified: "Class.method"
    signature: str | None = None  # first line(s) of the definition, for enrichment
    calls: list[str] = field(default_factory=list)  # identifiers this chunk calls
    file_class: str = CODE
    file_sha: str = ""
    context: str | None = None  # optional one-line LLM summary (`askrepo index --contextual`)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass
class Hit(_JSON):
    """One search result, in rank order."""

    rank: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    language: str | None
    score: float
    sources: dict[str, int | None]  # {"dense": rank or None, "fts": rank or None} (1-based)
    expanded_from: str | None
    text: str
    file_class: str = CODE
    calls: list[str] = field(default_factory=list)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("calls")
        return d


@dataclass
class Citation(_JSON):
    n: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    commit: str | None = None
    hash: str | None = None  # askrepo.lines.span_hash of the cited lines as indexed

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass
class Answer(_JSON):
    question: str
    answer: str
    citations: list[Citation]
    invalid_citations: list[int]
    retrieved: list[Hit]
    backend: str
    model: str
    timings_ms: dict[str, float]
    refused: bool = False  # answered "not in this code base" without asking the model
    # The evidence card (askrepo.evidence) the answer is laid on: markdown, the same as
    # ``answer`` for the no-model backend; "" when refused.
    evidence: str = ""
    evidence_sources: list[dict[str, Any]] = field(default_factory=list)
    # Each claim of ``answer`` with its citations and the names its cited code does not show
    # (askrepo.claims.Claim.to_dict()).
    claims: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None  # one line: how to get a better answer (e.g. no model server)
    # Names the question quotes as context (an error message, a pasted issue) that occur
    # nowhere in the index: stated, not refused (askrepo.answer.absent_context_names).
    not_in_code: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["retrieved"] = [h.to_dict() for h in self.retrieved]
        return d
