"""``askrepo index``: files → chunks → vectors → LanceDB, incrementally and crash-safely.

Only added or changed files (by content hash) are chunked and embedded; chunks of removed or
changed files are deleted. Nothing is visible to readers until the final commit in ``store``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import config
from .datatypes import Chunk, SourceFile
from .errors import UsageError

# progress(stage, done, total): stage is "walk", "chunk", "embed", "store" or "fts".
Progress = Callable[[str, int, int], None]

EMBED_BATCH = 256  # chunks per embed call / table write


@dataclass
class IndexSummary:
    repo: str
    index_path: str
    model: str
    model_id: str
    files_total: int
    files_indexed: int  # added or changed, re-chunked and re-embedded
    files_unchanged: int
    files_removed: int
    skipped: dict[str, int]
    chunks_total: int
    chunks_embedded: int
    chunks_by_language: dict[str, int]
    redactions: int
    timings_s: dict[str, float]
    commit: str | None = None
    rebuilt: str | None = None  # why the index was rebuilt from scratch, if it was
    embed_rate: float = 0.0  # chunks per second while embedding
    skipped_paths: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def embed_text(chunk: Chunk, enrich: bool) -> str:
    """The text that gets embedded: an optional header (path, symbol, context) then the code."""
    if not enrich:
        return chunk.text
    head = [f"# {chunk.path}"]
    if chunk.symbol:
        head.append(f"# {chunk.kind} {chunk.symbol}")
    if chunk.context:
        head.append(f"# {chunk.context}")
    return "\n".join(head) + "\n" + chunk.text


def fts_text(chunk: Chunk) -> str:
    """The code-aware full-text column: path, symbol, context and text, identifiers split."""
    from .identifiers import fts_document

    extra = " ".join(x for x in (chunk.path, chunk.symbol or "", chunk.context or "") if x)
    return fts_document(chunk.text, extra=extra)


def _chunk_file(root: Path, f: SourceFile) -> tuple[list[Chunk], int, SourceFile | None]:
    """Read, redact and chunk one file. Returns (chunks, redactions, updated file or None)."""
    from .chunker import chunk_text
    from .ingest import read_text
    from .secrets import redact

    got = read_text(root, f.path)
    if got is None:  # vanished or became unreadable since the walk
        return [], 0, None
    text, sha = got
    if sha != f.sha:
        f = SourceFile(f.path, f.language, f.file_class, len(text.encode("utf-8", "replace")), sha)
    text, n_redacted = redact(text, f.path)
    chunks = chunk_text(f.path, text, f.language)
    for c in chunks:
        c.file_class = f.file_class
        c.file_sha = f.sha
    return chunks, n_redacted, f


def index_repo(
    root: Path,
    *,
    model: str | None = None,
    rebuild: bool = False,
    enrich: bool | None = None,
    embedder: Any = None,
    progress: Progress | None = None,
    contextual: Any = None,
) -> IndexSummary:
    """Index ``root`` (create or update). ``embedder`` overrides the model (tests, ablations).

    ``contextual``: an LLM; when given, each new chunk gets a one-line summary that is stored
    and embedded with it (slow).
    """
    from .chunker import CHUNKER_VERSION
    from .ingest import check_root, git_commit, walk
    from .store import IndexWriter

    timings: dict[str, float] = {}
    report = progress or (lambda stage, done, total: None)
    # Checked before the writer creates an index directory for the path.
    root = check_root(root)
    enrich = config.enrich() if enrich is None else enrich

    model_name = model or config.embed_model()
    timings["load_model"] = 0.0
    if embedder is None:
        embedder = _LazyEmbedder(model_name, timings)

    with IndexWriter(root, embedder.model_id, model_name, embedder.dim, rebuild=rebuild) as w:
        t = time.perf_counter()
        report("walk", 0, 0)
        walked = walk(root, max_file_bytes=config.max_file_bytes())
        timings["walk"] = time.perf_counter() - t
        if not walked.files:
            why = ", ".join(f"{n} {r}" for r, n in sorted(walked.skipped.items())) or "none found"
            raise UsageError(
                f"No indexable files in {root} (skipped: {why}) — check the path, "
                ".gitignore and .askrepoignore"
            )
        report("walk", len(walked.files), len(walked.files))

        previous = w.previous
        current = {f.path: f for f in walked.files}
        todo = [f for p, f in current.items() if p not in previous or previous[p].sha != f.sha]
        removed = [p for p in previous if p not in current]
        unchanged = len(current) - len(todo)

        t = time.perf_counter()
        w.delete_paths([f.path for f in todo if f.path in previous] + removed)
        timings["store"] = time.perf_counter() - t

        timings["chunk"] = timings["embed"] = 0.0
        redactions = 0
        embedded = 0
        final: dict[str, SourceFile] = {p: f for p, f in current.items() if p in previous}
        batch: list[Chunk] = []

        def flush() -> None:
            nonlocal embedded
            if not batch:
                return
            if contextual is not None:
                _add_context(contextual, batch)
            if isinstance(embedder, _LazyEmbedder):
                embedder.load()
            t0 = time.perf_counter()
            vectors = embedder.embed_documents([embed_text(c, enrich) for c in batch])
            timings["embed"] += time.perf_counter() - t0
            t0 = time.perf_counter()
            w.add(batch, vectors, [fts_text(c) for c in batch])
            timings["store"] += time.perf_counter() - t0
            embedded += len(batch)
            report("embed", embedded, -1)
            batch.clear()

        for i, f in enumerate(todo, 1):
            t0 = time.perf_counter()
            chunks, n_red, kept = _chunk_file(root, f)
            timings["chunk"] += time.perf_counter() - t0
            report("chunk", i, len(todo))
            if kept is None:
                walked.skipped["unreadable"] = walked.skipped.get("unreadable", 0) + 1
                continue
            final[kept.path] = kept
            redactions += n_red
            batch.extend(chunks)
            if len(batch) >= EMBED_BATCH:
                flush()
        flush()

        t = time.perf_counter()
        changed = bool(todo or removed) or w.is_new
        if changed:  # an unchanged index keeps its full-text index as it is
            report("fts", 0, 1)
            w.finish_fts()
            report("fts", 1, 1)
        timings["fts"] = time.perf_counter() - t

        t = time.perf_counter()
        meta = w.commit(
            final,
            commit=git_commit(root),
            chunker_version=CHUNKER_VERSION,
            enrich=enrich,
            redactions=redactions,
            skipped=walked.skipped,
            tidy=changed,
        )
        timings["store"] += time.perf_counter() - t
        by_lang = _chunks_by_language(w)

    return IndexSummary(
        repo=str(root),
        index_path=str(w.path),
        model=model_name,
        model_id=embedder.model_id,
        files_total=len(final),
        files_indexed=len(todo),
        files_unchanged=unchanged,
        files_removed=len(removed),
        skipped=dict(sorted(walked.skipped.items())),
        chunks_total=meta.chunk_count,
        chunks_embedded=embedded,
        chunks_by_language=by_lang,
        redactions=redactions,
        timings_s={k: round(v, 3) for k, v in timings.items()},
        commit=meta.commit,
        rebuilt=("--rebuild" if rebuild else None) or w.rebuild_reason,
        embed_rate=round(embedded / timings["embed"], 1) if timings["embed"] > 0 else 0.0,
        skipped_paths={k: v[:50] for k, v in walked.skipped_paths.items()},
    )


def _chunks_by_language(w: Any) -> dict[str, int]:
    try:
        counts = Counter(w.column("language"))
    except Exception:
        return {}
    return {str(k or "text"): v for k, v in counts.most_common()}


def _add_context(llm: Any, chunks: list[Chunk]) -> None:
    from .answer import contextual_summary

    for c in chunks:
        if c.context is None and c.kind not in ("text",):
            try:
                c.context = contextual_summary(llm, c.text, c.path, c.symbol) or None
            except Exception:  # a summary is an optional extra; never fail the index run
                c.context = None


class _LazyEmbedder:
    """Loads the model only when something needs embedding (a no-op re-index stays fast)."""

    def __init__(self, name: str, timings: dict[str, float]):
        from .embedder import model_spec

        spec = model_spec(name)  # a UsageError that lists the choices for an unknown name
        self.name = name
        self.model_id = spec.model_id
        self.dim = spec.dim
        self._timings = timings
        self._model: Any = None

    def load(self) -> Any:
        if self._model is None:
            from .embedder import load_embedder

            t = time.perf_counter()
            self._model = load_embedder(self.name)
            self._timings["load_model"] = time.perf_counter() - t
        return self._model

    def embed_documents(self, texts: list[str]) -> Any:
        return self.load().embed_documents(texts)
