"""Hybrid retrieval: dense + full-text, fused by Reciprocal Rank Fusion.

The ranking-critical pieces are pure functions (``rrf``, ``score_fusion``, ``detect_scope``,
``merge_overlaps``, ``diversify``) tested with hand-worked numbers; ``Retriever.search`` wires
them to the store.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import config, ranking
from .datatypes import CODE, CONFIG, DOC, TEST, Chunk, Hit, is_definition, last_part
from .errors import UsageError, at_least, shell_arg
from .query import (  # noqa: F401 (re-exported)
    NATURAL,
    SYMBOL,
    TRACE,
    Query,
    dense_query_text,
    detect_scope,
    parse_query,
    quoted_phrases,
)

RRF_K = 60
PHRASE_WEIGHT = 3.0  # chunks containing a quoted phrase of the question (e.g. an error message)
MENTION_WEIGHT = 1.0  # chunks that mention an identifier the question names
MAX_K = 100
LEGACY_MAX_PER_FILE = 3  # the hard per-file cap when the saturation stage is off
MAX_QUERY_CHARS = 100_000
MODES = ("dense", "fts", "hybrid")


# ---------------------------------------------------------------------------------------------
# Pure functions


def rrf(
    ranked: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Reciprocal Rank Fusion: ``score(d) = Σ_s w_s / (k + rank_s(d))`` with 1-based ranks.

    Returns (id, score) best first; ties keep the order of first appearance (list by list).
    A duplicate id inside one list counts at its best rank only.
    """
    scores: dict[str, float] = {}
    for i, ids in enumerate(ranked):
        w = 1.0 if weights is None else weights[i]
        seen: set[str] = set()
        for rank, doc in enumerate(ids, 1):
            if doc in seen:
                continue
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    order = {doc: n for n, doc in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def score_fusion(
    scored: Sequence[Sequence[tuple[str, float]]],
    weights: Sequence[float] | None = None,
    depth: int = 50,
) -> list[tuple[str, float]]:
    """Min-max score fusion: ``score(d) = Σ_s w_s · scaled_s(d)``, where each list's scores
    (higher is better, best first) are scaled to [0, 1] between its best score and its score at
    rank ``depth`` (its last, if shorter); below that floor, or absent from a list, counts 0. A
    list whose scores are all equal gives each of its documents 1.

    Unlike ``rrf`` it keeps how far apart the scores are: a commit far ahead on one side stays
    ahead of one that is merely second on both. Returns (id, score) best first; ties keep the
    order of first appearance; a duplicate id inside one list counts at its first score only.
    """
    scores: dict[str, float] = {}
    for i, items in enumerate(scored):
        w = 1.0 if weights is None else weights[i]
        if not items:
            continue
        top = items[0][1]
        floor = items[min(depth, len(items)) - 1][1]
        span = top - floor
        seen: set[str] = set()
        for doc, s in items:
            if doc in seen:
                continue
            seen.add(doc)
            scaled = 1.0 if span <= 0 else max(0.0, (s - floor) / span)
            scores[doc] = scores.get(doc, 0.0) + w * scaled
    order = {doc: n for n, doc in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def allowed_classes(include_tests: bool, include_docs: bool) -> set[str]:
    classes = {CODE, CONFIG}
    if include_tests:
        classes.add(TEST)
    if include_docs:
        classes.add(DOC)
    return classes


def _join_lines(a: Chunk, b: Chunk) -> str:
    """Text of the union of two overlapping line ranges of the same file."""
    a_lines, b_lines = a.text.split("\n"), b.text.split("\n")
    lines: dict[int, str] = {}
    for start, chunk_lines in ((b.start_line, b_lines), (a.start_line, a_lines)):
        for i, line in enumerate(chunk_lines):
            lines[start + i] = line
    lo, hi = min(a.start_line, b.start_line), max(a.end_line, b.end_line)
    return "\n".join(lines.get(n, "") for n in range(lo, hi + 1))


def merge_overlaps(hits: list[Hit]) -> list[Hit]:
    """Merge hits of one file whose line ranges overlap into the best-ranked one (in order)."""
    out: list[Hit] = []
    by_path: dict[str, list[Hit]] = {}  # the kept hits of each file
    for h in hits:
        same_file = by_path.setdefault(h.path, [])
        for kept in same_file:
            if (
                kept.start_line <= h.end_line
                and h.start_line <= kept.end_line
                and kept.expanded_from == h.expanded_from
            ):
                a = Chunk(kept.path, kept.start_line, kept.end_line, kept.text, None, kept.kind)
                b = Chunk(h.path, h.start_line, h.end_line, h.text, None, h.kind)
                kept.text = _join_lines(a, b)
                kept.start_line = min(kept.start_line, h.start_line)
                kept.end_line = max(kept.end_line, h.end_line)
                kept.symbol = kept.symbol or h.symbol
                for src, rank in h.sources.items():
                    if rank is not None and (
                        kept.sources.get(src) is None or rank < kept.sources[src]
                    ):
                        kept.sources[src] = rank
                break
        else:
            out.append(h)
            same_file.append(h)
    return out


def diversify(hits: list[Hit], k: int, max_per_file: int) -> list[Hit]:
    """Top ``k`` with at most ``max_per_file`` hits per file, unless nothing else is left."""
    if max_per_file <= 0:
        return hits[:k]
    picked: list[Hit] = []
    overflow: list[Hit] = []
    per_file: dict[str, int] = {}
    for h in hits:
        if per_file.get(h.path, 0) < max_per_file:
            per_file[h.path] = per_file.get(h.path, 0) + 1
            picked.append(h)
        else:
            overflow.append(h)
        if len(picked) >= k:
            break
    if len(picked) < k:
        picked.extend(overflow[: k - len(picked)])
    return picked


def contains_all(text: str, phrases: Sequence[str]) -> bool:
    low = text.lower()
    return all(p.lower() in low for p in phrases)


def mentions_any(text: str, names: Sequence[str]) -> bool:
    """Whether ``text`` contains one of the identifiers as a whole word."""
    return any(
        re.search(r"(?<![A-Za-z0-9_])" + re.escape(n) + r"(?![A-Za-z0-9_])", text) for n in names
    )


# ---------------------------------------------------------------------------------------------
# The retriever


@dataclass
class SearchOptions:
    k: int = 8
    mode: str = "hybrid"
    include_tests: bool | None = None  # None: auto-detect from the question (and env)
    include_docs: bool | None = None
    scope: bool = True  # False: no test/doc prefilter at all (for ablation)
    expand: bool = False
    expand_depth: int = 2
    max_per_file: int | None = None  # None: no cap, saturation decays (3 without saturation)
    candidates: int = 50
    extra_queries: list[str] = field(default_factory=list)
    symbol_boost: bool = True
    pieces: bool = True  # False: dense scores ignore piece vectors (an ablation, `+nopieces`)
    disabled: tuple[str, ...] = ()  # ranking stages switched off (ranking.STAGES), for ablation


@dataclass
class SearchResult:
    query: str
    repo: str
    mode: str
    elapsed_ms: float
    hits: list[Hit]
    filters: list[str]
    stale: bool = False
    # dense side covered only the chunks embedded so far (phase 2 of indexing pending)
    dense_partial: bool = False
    freshness: dict[str, Any] | None = None  # askrepo.freshness.Freshness.to_dict(), if checked

    def to_dict(self) -> dict[str, Any]:
        d = {
            "query": self.query,
            "repo": self.repo,
            "mode": self.mode,
            "elapsed_ms": round(self.elapsed_ms, 2),
            "dense_partial": self.dense_partial,
            "hits": [h.to_dict() for h in self.hits],
        }
        if self.freshness is not None:
            d.update(self.freshness)
        return d


@dataclass
class FileSearchResult:
    """``search --files``: files ranked by their chunks' evidence (``files.rank_files``)."""

    query: str
    repo: str
    elapsed_ms: float
    files: list[Any]  # files.FileHit
    filters: list[str] = field(default_factory=list)
    stale: bool = False
    freshness: dict[str, Any] | None = None  # indexed_commit, head_commit, stale, changed_files

    def to_dict(self) -> dict[str, Any]:
        d = {
            "query": self.query,
            "repo": self.repo,
            "elapsed_ms": round(self.elapsed_ms, 2),
            "files": [f.to_dict() for f in self.files],
        }
        if self.freshness is not None:
            d.update(self.freshness)
        return d


QUERY_VECTORS = 8  # query vectors a Retriever keeps (Retriever._query_vector)
FILE_POOL = 20  # chunk hits aggregated into files by search_files (at least 2 per file asked)


def file_pool(opts: SearchOptions, k: int) -> SearchOptions:
    """The chunk search a file ranking aggregates (``search_files``, ``askrepo eval`` ``+files``
    and ``--from-git``): ``k`` hits, no per-file cap, no expansion, without the stages a file
    ranking runs without (``ranking.FILE_RANKING_OFF``)."""
    off = tuple(dict.fromkeys((*opts.disabled, *ranking.FILE_RANKING_OFF)))
    return replace(opts, k=k, max_per_file=0, expand=False, disabled=off)


_POOL: tuple[int, Any] | None = None  # (pid, executor): a forked child makes its own


def _background(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a shared worker thread; returns its ``Future`` (``result()`` re-raises
    what ``fn`` raised)."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor

        _POOL = (os.getpid(), ThreadPoolExecutor(2, thread_name_prefix="askrepo-search"))
    return _POOL[1].submit(fn, *args)


def _validate(query: str, opts: SearchOptions) -> None:
    if not query or not query.strip():
        raise UsageError("The query is empty — ask a question or name an identifier")
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(
            f"The query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,} — "
            "paste the relevant part only"
        )
    at_least("k", opts.k, 1)
    if opts.mode not in MODES:
        raise UsageError(f"Unknown mode {opts.mode!r} — use one of: {', '.join(MODES)}")


class Retriever:
    """Search one index. The embedding model is loaded on first use and kept."""

    def __init__(self, store: Any, embedder: Any = None):
        self.store = store
        self._embedder = embedder
        # the last QUERY_VECTORS texts' vectors: search_files searches a report twice
        self._query_vectors: dict[str, Any] = {}
        self._query_vectors_lock = threading.Lock()  # the MCP and web servers share one

    @classmethod
    def open(cls, repo: Path, model: str | None = None, embedder: Any = None) -> Retriever:
        from .store import open_index

        return cls(open_index(Path(repo), model), embedder)

    @property
    def project(self) -> str:
        """The repository directory's name (``ranking.project_words``, the evidence card)."""
        return Path(getattr(self.store, "repo", "") or "").name

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from .embedder import MODELS, load_query_embedder
            from .errors import IndexIncompatibleError

            # Load the model the index was built with, even if a name's default moved since.
            names = [n for n, spec in MODELS.items() if spec.model_id == self.store.model_id]
            emb = load_query_embedder(names[0] if names else self.store.model_name)
            if emb.model_id != self.store.model_id:
                raise IndexIncompatibleError(
                    f"The index was built with {self.store.model_id} but model "
                    f"{self.store.model_name} is now {emb.model_id} — "
                    f"run `askrepo index --rebuild {shell_arg(self.store.repo)}`"
                )
            self._embedder = emb
        return self._embedder

    def _query_vector(self, text: str) -> Any:
        """``embedder.embed_query(text)``, kept for the last QUERY_VECTORS texts."""
        with self._query_vectors_lock:
            vec = self._query_vectors.pop(text, None)
        if vec is None:
            vec = self.embedder.embed_query(text)
        with self._query_vectors_lock:
            self._query_vectors[text] = vec  # most recent last
            while len(self._query_vectors) > QUERY_VECTORS:
                del self._query_vectors[next(iter(self._query_vectors))]
        return vec

    def search(self, query: str, opts: SearchOptions | None = None) -> SearchResult:
        opts = opts or SearchOptions()
        _validate(query, opts)
        t0 = time.perf_counter()
        self.store.refresh()
        self.store.start_search()
        k = min(opts.k, MAX_K)
        n = max(opts.candidates, k * 3)

        filters: list[str] = []
        classes: set[str] | None = None
        q = self._report_scope(parse_query(query))
        if opts.scope:
            auto_tests, auto_docs = q.about_tests, q.about_docs
            inc_tests = opts.include_tests
            if inc_tests is None:
                inc_tests = auto_tests or not config.exclude_tests()
            inc_docs = opts.include_docs
            if inc_docs is None:
                inc_docs = auto_docs or not config.exclude_docs()
            if self.store.docs_only:
                # only docs (or tests) indexed: leaving them out would leave nothing to search
                inc_tests = inc_tests or opts.include_tests is None
                inc_docs = inc_docs or opts.include_docs is None
            classes = allowed_classes(inc_tests, inc_docs)
            if opts.include_tests or opts.include_docs:  # asked for on the command line
                q = replace(
                    q,
                    mentions_tests=q.mentions_tests and not opts.include_tests,
                    mentions_docs=q.mentions_docs and not opts.include_docs,
                )
            if not inc_tests:
                filters.append("tests excluded")
            if not inc_docs:
                filters.append("docs excluded")

        off = frozenset(opts.disabled)
        hybrid = opts.mode == "hybrid"
        w_dense, w_fts, w_mention, w_file, w_defs = ranking.fusion_weights(q, "adaptive" not in off)
        if not hybrid:
            w_dense = w_fts = 1.0
        name_weight = 0.0 if "namefield" in off else None  # None: askrepo.lexical's default
        chunks: dict[str, Chunk] = {}
        lists: list[list[str]] = []
        weights: list[float] = []
        dense_ids: list[str] = []
        fts_ids: list[str] = []

        # While phase 2 of indexing is pending, the dense list ranks only the embedded part:
        # it counts in the fusion in proportion to the part it covers.
        done, total = (
            self.store.embedding_progress() if hasattr(self.store, "embedding_progress") else (1, 1)
        )
        coverage = done / total if total and done < total else 1.0
        qvec = None
        # The full-text query runs in a worker thread while the question is embedded and the
        # dense list is scored: LanceDB's search and ONNX Runtime both release the GIL.
        fts_rows = prose_rows = None
        prose_dense_ids: list[str] = []
        title_ids: list[str] = []
        if opts.mode in ("fts", "hybrid") and q.fts:
            depth = ranking.list_depth(q, n, "fts", "deepfts" not in off)
            fts_rows = _background(self.store.fts, q.fts, depth, classes, name_weight)
        prose_on = hybrid and "prose" not in off  # a fenced report's prose alone, both sides
        if prose_on and q.prose_fts:
            prose_rows = _background(self.store.fts, q.prose_fts, n, classes, name_weight)
        if opts.mode in ("dense", "hybrid"):
            texts = [q.dense_text] + [t for t in opts.extra_queries if t.strip()]
            prose_at = title_at = -1
            if prose_on and q.prose:
                prose_at = len(texts)
                texts.append(q.prose)
            if hybrid and q.title and "title" not in off:  # a report's title, as a sentence
                title_at = len(texts)
                texts.append(q.title)
            dense_n = ranking.list_depth(q, n, "dense", hybrid and "deepdense" not in off)
            for at, text in enumerate(texts):
                vec = self._query_vector(text)
                if qvec is None:
                    qvec = vec
                ids = []
                for cid, chunk, _ in self.store.dense(vec, dense_n, classes, opts.pieces):
                    chunks[cid] = chunk
                    ids.append(cid)
                lists.append(ids)
                weights.append(w_dense * coverage)
                if at == 0:
                    dense_ids = ids
                elif at == prose_at:
                    prose_dense_ids = ids
                elif at == title_at:
                    title_ids = ids
        if opts.mode in ("fts", "hybrid"):
            for cid, chunk, _ in fts_rows.result() if fts_rows is not None else []:
                chunks[cid] = chunk
                fts_ids.append(cid)
            lists.append(fts_ids)
            weights.append(w_fts)
        prose_ids: list[str] = []
        if prose_rows is not None:
            for cid, chunk, _ in prose_rows.result():
                chunks.setdefault(cid, chunk)
                prose_ids.append(cid)
            lists.append(prose_ids)
            weights.append(ranking.PROSE_WEIGHT)

        fused = rrf(lists, weights=weights)
        feedback_ids: list[str] = []
        if (
            hybrid
            and q.kind == NATURAL
            and "feedback" not in off
            and hasattr(self.store, "feedback_query")
        ):
            # the words of the first hits, searched again: the code's own words for the question
            top = [chunks[c].text for c, _ in fused[: ranking.FEEDBACK_DOCS]]
            again = self.store.feedback_query(top, q.fts, ranking.FEEDBACK_TERMS)  # "" for none
            depth = min(n, ranking.FEEDBACK_DEPTH)
            for cid, chunk, _ in self.store.fts(again, depth, classes, name_weight):
                chunks.setdefault(cid, chunk)
                feedback_ids.append(cid)
            if feedback_ids:
                lists.append(feedback_ids)
                weights.append(ranking.FEEDBACK_WEIGHT)
                fused = rrf(lists, weights=weights)
        infile_ids: list[str] = []
        if hybrid and qvec is not None and q.kind == NATURAL and "infile" not in off:
            # every chunk of the best file competes, ranked by dense similarity within it
            files = ranking.best_files([chunks[c].path for c, _ in fused])
            in_best = self.store.in_files(qvec, files, classes, opts.pieces) if files else []
            for cid, chunk, _ in in_best:
                chunks.setdefault(cid, chunk)
                infile_ids.append(cid)
            if infile_ids:
                lists.append(infile_ids)
                weights.append(ranking.INFILE_WEIGHT * coverage)
                fused = rrf(lists, weights=weights)
        symbol_ids: list[str] = []
        value_pin: tuple[str, int] | None = None
        if hybrid and opts.symbol_boost:
            order = [cid for cid, _ in fused]
            smart = "defs" not in off
            names = ranking.symbol_names(q, smart)
            found, value_pin = self._named(q, names, order, classes, chunks, filters, smart)
            symbol_ids = ranking.order_definitions(found, q, dict(fused), smart)
            extra = [(symbol_ids, w_defs)]
            phrases = list(q.phrases)
            if phrases:
                extra.append(
                    ([c for c in order if contains_all(chunks[c].text, phrases)], PHRASE_WEIGHT)
                )
                filters.append(f"quoted text boosted: {'; '.join(phrases)}")
            pinned_last = {last_part(chunks[c].symbol) for c in symbol_ids}
            idents = [n for n in names if n not in phrases and n not in q.named]
            # identifiers that name no definition (attributes, parameters): boost their users
            unpinned = [last_part(n) for n in idents if last_part(n) not in pinned_last]
            if unpinned:
                users = [c for c in order if mentions_any(chunks[c].text, unpinned)]
                extra.append((users, w_mention))
            # files named in a pasted trace or issue (not those only its stack frames name)
            named_files = ranking.named_files(q, "frames" not in off)
            if w_file and named_files:
                have = {chunks[c].path for c in order}
                files = {p for f in named_files for p in ranking.named_paths(f, have)}
                named = [c for c in order if chunks[c].path in files]
                extra.append((named, w_file))
            extra = [(ids, w) for ids, w in extra if ids]
            if extra:
                fused = rrf(lists + [i for i, _ in extra], weights=weights + [w for _, w in extra])

        dense_rank = {cid: r for r, cid in enumerate(dense_ids, 1)}
        fts_rank = {cid: r for r, cid in enumerate(fts_ids, 1)}
        infile_rank = {cid: r for r, cid in enumerate(infile_ids, 1)}
        feedback_rank = {cid: r for r, cid in enumerate(feedback_ids, 1)}
        title_rank = {cid: r for r, cid in enumerate(title_ids, 1)}
        prose_rank: dict[str, int] = {}
        for ids in (prose_dense_ids, prose_ids):  # its best rank in the prose's two lists
            for r, cid in enumerate(ids, 1):
                prose_rank[cid] = min(r, prose_rank.get(cid, r))

        def sources(cid: str) -> dict[str, int | None]:
            out = {"dense": dense_rank.get(cid), "fts": fts_rank.get(cid)}
            if cid in infile_rank:  # its rank inside the best file (the infile stage)
                out["infile"] = infile_rank[cid]
            if cid in feedback_rank:  # its rank for the first hits' words (the feedback stage)
                out["feedback"] = feedback_rank[cid]
            if cid in prose_rank:  # its rank in the report's prose lists (the prose stage)
                out["prose"] = prose_rank[cid]
            if cid in title_rank:  # its rank for the report's title (the title stage)
                out["title"] = title_rank[cid]
            return out

        hits = [_hit(chunks[cid], score, sources(cid)) for cid, score in fused]
        if hybrid:
            generated: set[str] = set()
            if "priors" not in off and q.kind != SYMBOL and hasattr(self.store, "generated_paths"):
                generated = self.store.generated_paths(h.path for h in hits)
            hits = ranking.rescore(hits, q, off, generated)
        hits = merge_overlaps(hits)
        saturation = hybrid and "saturation" not in off
        if saturation:
            hits = ranking.saturate(hits, head=ranking.saturation_head(q, "tail" not in off))
        if hybrid and q.kind == NATURAL and "delegate" not in off:
            hits = ranking.delegate(hits, named=ranking.callers_subject(q))
        pins = [(chunks[c].path, chunks[c].start_line) for c in symbol_ids]
        if value_pin:  # after the struct a C typedef names, if any (_typedef_target)
            pins.append(value_pin)
        if pins and q.kind == "symbol" and "defs" not in off:
            hits = ranking.pin_first(hits, pins)
            if hybrid and "neighbours" not in off:
                hits = ranking.neighbours(hits, 1)
            if hybrid and "members" not in off and symbol_ids and hits:
                hits = self._member_lead(hits, chunks[symbol_ids[0]], sources)
        elif pins and q.asks_definition and "defs" not in off:  # "where is X defined?"
            hits = ranking.pin_first(hits, pins, limit=1)
        if hybrid and "evidence" not in off and not q.only_files:
            hits = ranking.evidence_lead(hits, q, self.project)
        if q.only_files and opts.mode != "dense":
            hits = self._file_query(q, hits, k, filters)
        cap = opts.max_per_file
        if cap is None:
            cap = 0 if saturation else LEGACY_MAX_PER_FILE
        hits = diversify(hits, k, cap)
        if opts.expand:
            hits += self._expand(hits, classes, opts.expand_depth, limit=k)
        for i, h in enumerate(hits, 1):
            h.rank = i
            h.score = round(h.score, 6)
        if symbol_ids:
            filters.append(f"{len(symbol_ids)} exact symbol match(es) boosted")
        partial = False
        if opts.mode != "fts" and coverage < 1.0:
            partial = True
            filters.append(
                f"dense over {done:,}/{total:,} embedded chunks (embedding in progress, "
                f"weight {coverage:.2f}); full-text and symbols over all"
            )
        return SearchResult(
            query=query,
            repo=str(self.store.repo),
            mode=opts.mode,
            elapsed_ms=(time.perf_counter() - t0) * 1000,
            hits=hits,
            filters=filters,
            dense_partial=partial,
        )

    def _member_lead(self, hits: list[Hit], definition: Chunk, sources: Any) -> list[Hit]:
        """After a class a symbol query pinned first, its largest members
        (``ranking.member_lead`` over every chunk of its file, in the candidates or not)."""
        first = hits[0]
        if (first.path, first.start_line) != (definition.path, definition.start_line):
            return hits
        rows = self.store.file_chunks([definition.path], limit=100_000)
        lead = ranking.member_lead(definition, [c for _, c, _ in rows])
        if not lead:
            return hits
        have = {(h.path, h.start_line, h.end_line): h for h in hits}
        ids = {(c.path, c.start_line, c.end_line): cid for cid, c, _ in rows}
        lead_hits = []
        for n, c in enumerate(lead, 1):  # sources["member"]: its place by size, for --explain
            key = (c.path, c.start_line, c.end_line)
            h = have.get(key) or _hit(c, 0.0, sources(ids[key]))
            lead_hits.append(replace(h, sources={**h.sources, "member": n}))
        return ranking.follow_first(hits, lead_hits)

    def search_files(self, query: str, opts: SearchOptions | None = None) -> FileSearchResult:
        """The ``opts.k`` files most likely to answer ``query`` (e.g. the files to change for a
        pasted bug report): the top FILE_POOL (or 2·k) chunks, no per-file cap, aggregated per
        file by ``files.rank_files``. When those chunks hold fewer than k files (a large file
        can fill them), the files of a deeper list follow (``files.extend_files``). Then the
        tests that match the query vote for the files they test (``test_votes``)."""
        from .files import extend_files, rank_files

        opts = opts or SearchOptions()
        t0 = time.perf_counter()
        want = min(opts.k, MAX_K)
        pool = file_pool(opts, max(FILE_POOL, 2 * opts.k))
        res = self.search(query, pool)
        files = rank_files(res.hits)[:want]
        if len(files) < want and len(res.hits) >= pool.k and pool.k < MAX_K:
            deeper = self.search(query, replace(pool, k=MAX_K))
            files = extend_files(files, deeper.hits, want)
        voted: list[str] = []
        files = self.test_votes(query, opts, files, voted)
        filters = list(res.filters)
        if voted:  # shown by --explain
            more = f" (+{len(voted) - 3})" if len(voted) > 3 else ""
            filters.append(f"tests voted: {', '.join(voted[:3])}{more}")
        return FileSearchResult(
            query=query,
            repo=res.repo,
            elapsed_ms=(time.perf_counter() - t0) * 1000,
            files=files,
            filters=filters,
        )

    def test_votes(
        self, query: str, opts: SearchOptions, files: list[Any], notes: list[str] | None = None
    ) -> list[Any]:
        """The ``testvotes`` stage of ``search_files``: ``files`` re-ranked by the votes of the
        test chunks a hybrid search with tests in scope finds among its top TEST_VOTE_POOL
        (``files.vote_by_tests``, which writes each vote to ``notes``); as they were when
        there are none, for another mode, or with the stage off."""
        from .files import TEST_VOTE_POOL, vote_by_tests

        if not files or opts.mode != "hybrid" or "testvotes" in opts.disabled:
            return files
        wide = replace(
            opts, k=TEST_VOTE_POOL, include_tests=True, scope=True, max_per_file=0, expand=False
        )
        tests = [h for h in self.search(query, wide).hits if h.file_class == TEST]
        if not tests:
            return files
        code = [p for p, f in self.store.files().items() if f.file_class == CODE]
        return vote_by_tests(files, tests, code, notes=notes)

    def _report_scope(self, q: Query) -> Query:
        """A pasted report brings tests or docs into scope only through a test or doc file it
        names (``query.question_scope``, by the name alone); here, only when that name's
        indexed files (``ranking.named_paths``) are all tests, or all docs, too: the
        ``requirements.txt`` or ``notes.txt`` of a reporter's own project is not this
        repository's docs, and a name that is no file here brings in nothing."""
        if q.kind != TRACE or not (q.about_tests or q.about_docs):
            return q
        files = self.store.files()
        tests = docs = False
        for f in q.file_names:
            classes = {files[p].file_class for p in ranking.named_paths(f, files)}
            tests = tests or classes == {TEST}
            docs = docs or classes == {DOC}
        return replace(q, about_tests=q.about_tests and tests, about_docs=q.about_docs and docs)

    def _file_query(self, q: Query, hits: list[Hit], k: int, notes: list[str]) -> list[Hit]:
        """For a question that is only file names (``fetch.js``, ``src/app/config.ts``): the
        chunks of the indexed files it names (``ranking.named_paths``), in file order and
        above everything else, whatever their class — naming a test file asks for it; the
        other hits follow."""
        indexed = list(self.store.files())
        named = (p for f in q.file_names for p in ranking.named_paths(f, indexed))
        paths = list(dict.fromkeys(named))
        rows = self.store.file_chunks(paths, limit=k) if paths else []
        if not rows:
            return hits
        top = max((h.score for h in hits), default=0.0)
        head = ranking.above([_hit(c, 0.0, {"dense": None, "fts": None}) for _, c, _ in rows], top)
        notes.append(f"file query: {', '.join(dict.fromkeys(paths))} in file order")
        named = set(paths)
        return head + [h for h in hits if h.path not in named]

    def _named(
        self,
        q: Query,
        names: list[str],
        order: list[str],
        classes: set[str] | None,
        chunks: dict[str, Chunk],
        notes: list[str],
        smart: bool,
    ) -> tuple[list[tuple[str, Chunk]], tuple[str, int] | None]:
        """The definitions the query names (``_symbol_matches``) and, for a symbol query that
        names no definition, the (path, line) that gives the name its value (a constant, a type
        alias, a macro: ``ranking.value_definition`` over the candidates ``order``; with the
        struct a C typedef line names, ``_typedef_target``), else the
        definitions of the name in another naming style (``ranking.style_variants``)."""
        found = self._symbol_matches(names, classes, chunks, notes, {*q.symbols, *q.identifiers})
        if smart and q.named:  # "where is Sha256 defined?": a value line if no definition
            have = {last_part(c.symbol) for _, c in found}
            for name in q.named:
                if name in have or name[:1].swapcase() + name[1:] in have:
                    continue
                value = ranking.value_definition([chunks[c] for c in order], name, nested=False)
                if value:
                    notes.append(f"`{name}` is given its value at {value[0]}:{value[1]}")
                    found += [
                        (c, chunks[c])
                        for c in order
                        if chunks[c].path == value[0]
                        and chunks[c].start_line <= value[1] <= chunks[c].end_line
                    ][:1]
        if found or not smart or q.kind != SYMBOL or not q.symbol:
            return found, None
        value = ranking.value_definition([chunks[c] for c in order], q.symbol)
        if value:
            notes.append(f"`{q.symbol}` is given its value at {value[0]}:{value[1]}")
            return self._typedef_target(q.symbol, value, order, classes, chunks, notes), value
        head, _, last = q.symbol.rpartition(".")
        styles = [f"{head}.{v}" if head else v for v in ranking.style_variants(last)]
        found = self._symbol_matches(styles, classes, chunks, notes)
        if found:
            notes.append(f"`{q.symbol}` found as `{found[0][1].symbol}` (another naming style)")
        return found, None

    def _typedef_target(
        self,
        name: str,
        value: tuple[str, int],
        order: list[str],
        classes: set[str] | None,
        chunks: dict[str, Chunk],
        notes: list[str],
    ) -> list[tuple[str, Chunk]]:
        """When the line giving ``name`` its value is a C typedef of a tagged type
        (``typedef struct uv_loop_s uv_loop_t;``, ``ranking.typedef_tag``), the definitions of
        that struct, union or enum: they say what the name is, and rank before the typedef."""
        path, line = value
        holder = next(
            (
                chunks[c]
                for c in order
                if chunks[c].path == path and chunks[c].start_line <= line <= chunks[c].end_line
            ),
            None,
        )
        lines = holder.text.split("\n") if holder else []
        at = line - holder.start_line if holder else -1
        text = lines[at] if 0 <= at < len(lines) else ""
        tag = ranking.typedef_tag(text, last_part(name))
        if not tag:
            return []
        matches = self._symbol_matches([tag], classes, chunks, notes)
        found = [(c, ch) for c, ch in matches if ch.kind == "class"]
        if found:
            notes.append(f"`{name}` is a typedef of `{tag}`")
        return found

    def _symbol_matches(
        self,
        names: list[str],
        classes: set[str] | None,
        chunks: dict[str, Chunk],
        notes: list[str],
        typed: set[str] | None = None,
    ) -> list[tuple[str, Chunk]]:
        """(id, chunk) of definitions whose symbol equals a name (or its dotted form) named in
        the query, or, for a qualified name no symbol spells out, whose location shows most of
        its qualifiers (``ranking.qualifier_matches``, said in ``notes``; only for the names
        in ``typed`` when given — not the other first-letter case); they join ``chunks``."""
        if not names:
            return []
        wanted = set(names) | {last_part(n) for n in names if "." in n}
        rows = [
            (cid, chunk)
            for cid, chunk, _ in self.store.by_symbol(wanted, classes, limit=50)
            if is_definition(chunk.kind)
        ]
        project = ranking.project_words(self.project)
        defs, shown = ranking.named_definitions([c for _, c in rows], names, project, typed)
        found = [(cid, c) for d in defs for cid, c in rows if c is d]
        for cid, c in found:
            chunks[cid] = c
        notes += [f"`{last}` found by its qualifiers ({n} of {of} shown)" for last, n, of in shown]
        return found

    def _expand(
        self, hits: list[Hit], classes: set[str] | None, depth: int, limit: int
    ) -> list[Hit]:
        """Definitions the hits call (up to ``depth`` levels) and a few of their callers."""
        seen = {(h.path, h.start_line) for h in hits}
        out: list[Hit] = []
        frontier = list(hits)
        for _ in range(max(depth, 0)):
            nxt: list[Hit] = []
            for h in frontier:
                origin = f"{h.path}:{h.start_line}-{h.end_line}" + (
                    f" ({h.symbol})" if h.symbol else ""
                )
                callees = [c for c in h.calls if c and c != last_part(h.symbol)]
                for _, chunk, _ in self.store.by_symbol(callees[:20], classes, limit=20):
                    name = last_part(chunk.symbol)
                    if name not in callees or not is_definition(chunk.kind):
                        continue
                    key = (chunk.path, chunk.start_line)
                    if key in seen:
                        continue
                    seen.add(key)
                    new = _hit(chunk, 0.0, {"dense": None, "fts": None}, origin)
                    out.append(new)
                    nxt.append(new)
                    if len(out) >= limit:
                        return out
            frontier = nxt
        for h in hits[:3]:
            name = last_part(h.symbol)
            if not name or not is_definition(h.kind):
                continue
            for _, chunk, _ in self.store.callers(name, classes, limit=3):
                key = (chunk.path, chunk.start_line)
                if key in seen:
                    continue
                seen.add(key)
                origin = f"caller of {h.symbol}"
                out.append(_hit(chunk, 0.0, {"dense": None, "fts": None}, origin))
                if len(out) >= limit:
                    return out
        return out


def _hit(chunk: Chunk, score: float, sources: dict[str, int | None], origin: str | None = None):
    return Hit(
        rank=0,
        path=chunk.path,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        symbol=chunk.symbol,
        kind=chunk.kind,
        language=chunk.language,
        score=round(score, 6),
        sources=dict(sources),
        expanded_from=origin,
        text=chunk.text,
        file_class=chunk.file_class,
        calls=list(chunk.calls),
    )
