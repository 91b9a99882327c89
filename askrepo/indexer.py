"""``askrepo index``: files → chunks → vectors → LanceDB, incrementally and crash-safely.

Only added or changed files (by content hash) are chunked; chunks of removed or changed files
are deleted. Two commits make it searchable early: phase 1 (walk, chunk, full-text) and phase 2
(vectors, one commit per batch). See ``index_repo``. A new chunk whose embedded texts (its own
and its pieces') were embedded before, in a replaced chunk of a changed file or of the index a
chunker upgrade rebuilds, gets those vectors copied instead of computed (``chunks_reused``).
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import config
from .datatypes import NON_DEFINITION_KINDS, Chunk, SourceFile
from .errors import IndexIncompatibleError, UsageError

# progress(stage, done, total): stage is "walk", "chunk", "fts", "phase1" (committed:
# searchable now), "reuse" (vectors copied by embedded text) or "embed".
Progress = Callable[[str, int, int], None]

STORE_BATCH = 2_000  # chunks per table write in phase 1
EMBED_BATCH = 128  # chunks per vector write + commit in phase 2
ENCODE_BATCH = 32  # texts per model call


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
    chunks_embedded: int  # chunks whose vectors were computed this run (phase 2)
    chunks_by_language: dict[str, int]
    redactions: int
    timings_s: dict[str, float]
    commit: str | None = None
    rebuilt: str | None = None  # why the index was rebuilt from scratch, if it was
    embed_rate: float = 0.0  # chunks per second while embedding
    skipped_paths: dict[str, list[str]] = field(default_factory=dict)
    chunks_with_vectors: int = 0  # == chunks_total once phase 2 has finished
    chunks_added: int = 0  # new chunk rows this run (phase 1)
    # the index predates piece vectors (their column is missing): `--rebuild` adds them
    pieces_missing: bool = False
    # chunks whose vectors were copied this run from a replaced chunk with the same embedded
    # texts (own and pieces) instead of computed; not counted in chunks_embedded
    chunks_reused: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def embed_text(chunk: Chunk, enrich: bool) -> str:
    """The text that gets embedded: an optional header (path, symbol, context) then the code."""
    return _embed_header(chunk, enrich) + chunk.text


def _embed_header(chunk: Chunk, enrich: bool) -> str:
    if not enrich:
        return ""
    head = [f"# {chunk.path}"]
    if chunk.symbol:
        head.append(f"# {chunk.kind} {chunk.symbol}")
    if chunk.context:
        head.append(f"# {chunk.context}")
    return "\n".join(head) + "\n"


PIECE_START = 0.8  # a chunk's own vector is taken to read this share of piece_chars of its text
PIECE_OVERLAP = 3  # lines the first piece repeats from the end of that part
PIECE_MIN_CHARS = 80  # a shorter tail is not worth a vector


def piece_texts(chunk: Chunk, enrich: bool, chars: int, limit: int) -> list[str]:
    """Texts of a long chunk's *piece* vectors: the embedding model reads only its first
    ~``chars`` characters (256 MiniLM tokens), so the lines after that are embedded again in
    windows of about ``chars`` characters, each under the chunk's header, at most ``limit``.

    The first window starts PIECE_OVERLAP lines before the point where the chunk's own
    vector stops reading (PIECE_START of ``chars``); windows are whole lines, and a last one
    under PIECE_MIN_CHARS characters is dropped. A chunk no longer than ``chars`` has none, and
    so has a line window, markdown section or text chunk (NON_DEFINITION_KINDS): on the dev
    benchmark their pieces added nothing (docs/eval.md), so they would only cost time.
    """
    if chars <= 0 or limit <= 0 or len(chunk.text) <= chars:
        return []
    if chunk.kind in NON_DEFINITION_KINDS:
        return []
    head = _embed_header(chunk, enrich)
    lines = chunk.text.splitlines(keepends=True)
    i = read = 0
    while i < len(lines) and read < chars * PIECE_START:
        read += len(lines[i])
        i += 1
    i = max(0, i - PIECE_OVERLAP)
    out: list[str] = []
    while i < len(lines) and len(out) < limit:
        window: list[str] = []
        size = 0
        while i < len(lines) and size < chars:
            window.append(lines[i])
            size += len(lines[i])
            i += 1
        if size >= PIECE_MIN_CHARS:
            out.append(head + "".join(window))
    return out


def text_key(text: str) -> bytes:
    """The key of an embedded text for reusing its vector (a 128-bit hash)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def embedded_keys(chunk: Chunk, enrich: bool, chars: int, limit: int) -> list[bytes]:
    """Keys of every text embedded for ``chunk``: its own (``embed_text``), then its pieces
    (``piece_texts``), so that item ``n`` is the key of stored piece ``n``."""
    texts = [embed_text(chunk, enrich), *piece_texts(chunk, enrich, chars, limit)]
    return [text_key(t) for t in texts]


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
    if sha != f.sha:  # changed again since the walk: record what was actually chunked
        f = SourceFile(f.path, f.language, f.file_class, len(text.encode("utf-8", "replace")), sha)
    text, n_redacted = redact(text, f.path)
    chunks = chunk_text(f.path, text, f.language)
    for c in chunks:
        c.file_class = f.file_class
        c.file_sha = f.sha
    return chunks, n_redacted, f


def plan(
    previous: dict[str, SourceFile], current: dict[str, SourceFile]
) -> tuple[list[SourceFile], list[str]]:
    """(files to (re-)chunk: added, changed by hash, or now classified differently — a
    newer askrepo that reads ``tests.rs`` as a test file, or a language newly detected —
    and paths removed since the last run)."""
    todo = [
        f
        for p, f in current.items()
        if p not in previous
        or (previous[p].sha, previous[p].file_class, previous[p].language)
        != (f.sha, f.file_class, f.language)
    ]
    removed = [p for p in previous if p not in current]
    return todo, removed


def style_conflict(meta: Any, enrich: bool, contextual: bool) -> str | None:
    """Why this run may not add to an index built with another embedding style, or None.

    What gets embedded depends on ``ASKREPO_ENRICH`` (a path/symbol header) and ``--contextual``
    (an LLM summary); mixing two styles in one index would make its vectors incomparable.
    """
    problems = []
    if bool(meta.enrich) != enrich:
        was = "on" if meta.enrich else "off"
        problems.append(f"ASKREPO_ENRICH {was} (now {'on' if enrich else 'off'})")
    if bool(getattr(meta, "contextual", False)) != contextual:
        problems.append("--contextual" if meta.contextual else "no --contextual")
    if not problems:
        return None
    return (
        f"The index for {meta.repo} was built with {' and '.join(problems)} — run "
        f"`askrepo index --rebuild` to re-embed everything with the new setting, or index with "
        "the same setting as before"
    )


def index_repo(
    root: Path,
    *,
    model: str | None = None,
    rebuild: bool = False,
    enrich: bool | None = None,
    embedder: Any = None,
    progress: Progress | None = None,
    contextual: Any = None,
    embed: bool = True,
    paths: list[str] | None = None,
    notify: Callable[[str], None] | None = None,
) -> IndexSummary:
    """Index ``root`` (create or update) in two committed phases.

    Phase 1 walks, chunks and stores every added or changed file with its full-text entry,
    and commits: from then on the index answers full-text, symbol and grep queries. Phase 2
    embeds the chunks that have no vector yet, in length-bucketed batches, committing after
    each batch; a run interrupted there leaves a usable index and the next run embeds only
    what is missing. ``embed=False`` stops after phase 1.

    ``embedder`` overrides the model (tests, ablations). ``contextual``: an LLM; when given,
    each new chunk gets a one-line summary that is stored and embedded with it (slow).
    ``paths``: only look at these repo-relative paths (a refresh after a freshness check names
    the changed files); every other indexed file is kept as it is.
    ``enrich``: None follows ``ASKREPO_ENRICH`` when it is set, else what the index was built
    with (on for a new index).

    An index this askrepo cannot update in place (built by another chunker version, another
    store schema, or damaged) is rebuilt from scratch as ``rebuild=True`` would, crash-safely
    (the old one answers until phase 1 commits); ``notify`` (one line for the user) hears why
    before the work starts, and the summary's ``rebuilt`` says it again.
    """
    from .chunker import CHUNKER_VERSION
    from .freshness import dirty_paths
    from .ingest import check_root, git_commit, inspect_paths, walk
    from .store import MAX_PIECES
    from .store_writer import IndexWriter

    timings: dict[str, float] = {}
    report = progress or (lambda stage, done, total: None)
    started = time.perf_counter()
    # Checked before the writer creates an index directory for the path.
    root = check_root(root)
    piece_limit = config.pieces(MAX_PIECES)

    model_name = model or config.embed_model()
    timings["load_model"] = 0.0
    if embedder is None:
        embedder = _LazyEmbedder(model_name, timings)

    with IndexWriter(root, embedder.model_id, model_name, embedder.dim, rebuild=rebuild) as w:
        prev_meta = w.previous_meta
        # the index whose vectors may be copied: this one, or the one a chunker upgrade rebuilds
        source = w.reuse_meta
        if enrich is None:
            enrich = config.enrich_setting()
        if enrich is None:
            enrich = source.enrich if source is not None else config.enrich()
        if prev_meta is not None:
            why = style_conflict(prev_meta, enrich, contextual is not None)
            if why:
                raise IndexIncompatibleError(why)
        reuse = (
            embed
            and source is not None
            and source.dim == embedder.dim
            and style_conflict(source, enrich, contextual is not None) is None
        )
        if w.rebuild_reason and notify is not None:
            how = (
                "re-chunking every file, reusing the vectors of unchanged text"
                if reuse
                else "re-chunking and re-embedding every file"
            )
            notify(f"{w.rebuild_reason} — {how}")
        keys_of = functools.partial(
            embedded_keys, enrich=enrich, chars=_piece_chars(embedder), limit=piece_limit
        )

        t = time.perf_counter()
        report("walk", 0, 0)
        commit = git_commit(root)
        dirty = (dirty_paths(root) or []) if commit else []
        previous = w.previous
        if paths is not None and previous:
            git = commit is not None
            walked = inspect_paths(root, paths, with_gitignore=not git)
            current = dict(previous)
            seen = {f.path for f in walked.files}
            for p in paths:
                if p not in seen:
                    current.pop(p, None)
            current.update({f.path: f for f in walked.files})
            skipped = dict(prev_meta.skipped) if prev_meta is not None else {}
        else:
            walked = walk(root, max_file_bytes=config.max_file_bytes())
            current = {f.path: f for f in walked.files}
            skipped = dict(walked.skipped)
        timings["walk"] = time.perf_counter() - t
        if not current:
            why = ", ".join(f"{n} {r}" for r, n in sorted(walked.skipped.items())) or "none found"
            kept = ""
            if prev_meta is not None and prev_meta.file_count:
                # the files were all deleted or ignored since: the index cannot be emptied, and
                # "run `askrepo index`" (the stale note's fix) would only fail again
                n = prev_meta.file_count
                kept = (
                    f"; the index built earlier is unchanged and still answers for its {n} "
                    f"file{'s' * (n != 1)} (delete {w.path} to drop it)"
                )
            raise UsageError(
                f"No indexable files in {root} (skipped: {why}) — check the path, "
                f".gitignore and .askrepoignore{kept}"
            )
        report("walk", len(current), len(current))

        # -- phase 1: chunk + full text, committed --------------------------------------------
        todo, removed = plan(previous, current)
        unchanged = len(current) - len(todo)
        timings["chunk"] = timings["store"] = timings["embed"] = 0.0
        old: dict[Hashable, Any] = {}
        if reuse and not w.is_new:
            # the vectors of the rows this run replaces, read before they are deleted (a crash
            # after phase 1 loses them: the next run embeds those chunks)
            t = time.perf_counter()
            old = w.old_vectors(keys_of, [f.path for f in todo if f.path in previous] + removed)
            timings["reuse"] = time.perf_counter() - t
        redactions = 0
        added = 0
        unreadable: list[str] = []
        # Only what was actually chunked and stored is recorded: a file that cannot be read
        # now keeps its previous entry (and chunks), or stays out if it is new.
        final: dict[str, SourceFile] = {p: f for p, f in current.items() if p in previous}
        for f in todo:
            if f.path in previous:
                final[f.path] = previous[f.path]
        batch: list[Chunk] = []
        batch_paths: list[str] = []

        def store_batch() -> None:
            nonlocal added
            t0 = time.perf_counter()
            # old rows of these files go just before their new rows, in the same commit
            w.delete_paths([p for p in batch_paths if p in previous])
            if contextual is not None:
                _add_context(contextual, batch)
            w.add(batch, [fts_text(c) for c in batch])
            timings["store"] += time.perf_counter() - t0
            added += len(batch)
            batch.clear()
            batch_paths.clear()

        for i, f in enumerate(todo, 1):
            t0 = time.perf_counter()
            chunks, n_red, kept = _chunk_file(root, f)
            timings["chunk"] += time.perf_counter() - t0
            report("chunk", i, len(todo))
            if kept is None:
                unreadable.append(f.path)
                continue
            final[kept.path] = kept
            redactions += n_red
            batch.extend(chunks)
            batch_paths.append(kept.path)
            if len(batch) >= STORE_BATCH:
                store_batch()
        if batch or batch_paths:
            store_batch()
        t0 = time.perf_counter()
        w.delete_paths(removed)
        timings["store"] += time.perf_counter() - t0
        if unreadable:
            skipped["unreadable"] = skipped.get("unreadable", 0) + len(unreadable)
            walked.skipped_paths.setdefault("unreadable", []).extend(unreadable)

        changed = bool(added or removed) or w.is_new
        t = time.perf_counter()
        # askrepo's full-text index (askrepo.lexical) of the new table state, built here so
        # its time is reported; the commit names it in meta.json
        report("fts", 0, 1)
        w.build_lexical()
        report("fts", 1, 1)
        timings["fts"] = time.perf_counter() - t

        def publish(tidy: bool) -> Any:
            return w.commit(
                final,
                commit=commit,
                chunker_version=CHUNKER_VERSION,
                enrich=enrich,
                contextual=contextual is not None,
                redactions=redactions + (prev_meta.redactions if paths and prev_meta else 0),
                skipped=skipped,
                dirty=dirty,
                tidy=tidy,
            )

        t = time.perf_counter()
        meta = publish(tidy=False)
        timings["store"] += time.perf_counter() - t
        timings["searchable"] = time.perf_counter() - started
        report("phase1", meta.chunk_count, meta.chunk_count)

        # -- phase 2: vectors, committed batch by batch ---------------------------------------
        embedded = reused = 0
        if embed:

            def old_vectors() -> dict[Hashable, Any]:
                nonlocal old
                if reuse and w.is_new:  # a rebuild for another chunker version
                    return w.old_vectors(keys_of)
                got, old = old, {}  # the caller drops it before embedding
                return got

            embedded, reused = _embed_pending(
                w, embedder, enrich, timings, report, piece_limit, old_vectors
            )
        meta = w._meta
        pieces_missing = bool(piece_limit and _piece_chars(embedder)) and not w.has_pieces
        if changed or embedded:
            t = time.perf_counter()
            w.tidy(chunks=changed)
            timings["store"] += time.perf_counter() - t
        by_lang = _chunks_by_language(w)

    return IndexSummary(
        repo=str(root),
        index_path=str(w.path),
        model=model_name,
        model_id=embedder.model_id,
        files_total=len(final),
        files_indexed=len(todo) - len(unreadable),
        files_unchanged=unchanged,
        files_removed=len(removed),
        skipped=dict(sorted(skipped.items())),
        chunks_total=meta.chunk_count,
        chunks_embedded=embedded,
        chunks_by_language=by_lang,
        redactions=redactions,
        timings_s={k: round(v, 3) for k, v in timings.items()},
        commit=meta.commit,
        rebuilt=("--rebuild" if rebuild else None) or w.rebuild_reason,
        embed_rate=round(embedded / timings["embed"], 1) if timings["embed"] > 0 else 0.0,
        skipped_paths={k: v[:50] for k, v in walked.skipped_paths.items()},
        pieces_missing=pieces_missing,
        chunks_with_vectors=meta.embedded_count,
        chunks_added=added,
        chunks_reused=reused,
    )


def embed_batches(texts: list[str], size: int, seed: int = 0) -> list[list[int]]:
    """Indices of ``texts`` cut into length-bucketed batches (similar lengths pad least), in a
    shuffled order so the rate, and so the ETA, stays steady over the run."""
    import random

    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    random.Random(seed).shuffle(batches)
    return batches


def _embed_pending(
    w: Any,
    embedder: Any,
    enrich: bool,
    timings: dict[str, float],
    report: Progress,
    piece_limit: int,
    old_vectors: Callable[[], dict[Hashable, Any]] = dict,
) -> tuple[int, int]:
    """Give every chunk without a vector its vectors: copied from ``old_vectors()`` (text key →
    vector, read only if something is pending) when all its texts are there, else embedded.
    Returns (chunks embedded, chunks whose vectors were copied)."""
    pending = w.pending()
    if not pending:
        return 0, 0
    texts = [embed_text(c, enrich) for c in pending]
    chars = _piece_chars(embedder) if w.has_pieces else 0  # none for an index without the column
    pieces = [piece_texts(c, enrich, chars, piece_limit) for c in pending]
    t0 = time.perf_counter()
    old = old_vectors()
    reused = _copy_vectors(w, pending, texts, pieces, old, report) if old else []
    del old
    if reused:
        timings["reuse"] = timings.get("reuse", 0.0) + time.perf_counter() - t0
    copied = set(reused)
    todo = [i for i in range(len(pending)) if i not in copied]
    if not todo:
        return 0, len(reused)
    if isinstance(embedder, _LazyEmbedder):
        embedder.load()
    total = len(todo)
    done = 0
    report("embed", 0, total)
    for batch_idx in embed_batches([texts[i] for i in todo], EMBED_BATCH):
        idx = [todo[j] for j in batch_idx]
        # a chunk's pieces go in the same append as its own vector (one commit per batch)
        piece_of = [j for j, i in enumerate(idx) for _ in pieces[i]]
        batch = [texts[i] for i in idx] + [p for i in idx for p in pieces[i]]
        t0 = time.perf_counter()
        vectors = embedder.embed_documents(batch, batch_size=ENCODE_BATCH)
        timings["embed"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        w.add_vectors([pending[i] for i in idx], vectors[: len(idx)], piece_of, vectors[len(idx) :])
        w.commit_vectors()
        timings["store"] += time.perf_counter() - t0
        done += len(idx)
        report("embed", done, total)
    return done, len(reused)


def _copy_vectors(
    w: Any,
    pending: list[Chunk],
    texts: list[str],
    pieces: list[list[str]],
    old: dict[Hashable, Any],
    report: Progress,
) -> list[int]:
    """Store the vectors of the pending chunks whose own and piece texts all have one in
    ``old`` (copied, committed every STORE_BATCH chunks). Returns their positions."""
    keys = [[text_key(t) for t in (texts[i], *pieces[i])] for i in range(len(pending))]
    found = [i for i, ks in enumerate(keys) if all(k in old for k in ks)]
    report("reuse", 0, len(found))
    for s in range(0, len(found), STORE_BATCH):
        idx = found[s : s + STORE_BATCH]
        piece_of = [j for j, i in enumerate(idx) for _ in pieces[i]]
        own = [old[keys[i][0]] for i in idx]
        more = [old[k] for i in idx for k in keys[i][1:]]
        w.add_vectors([pending[i] for i in idx], own, piece_of, more or None)
        w.commit_vectors()
        report("reuse", s + len(idx), len(found))
    return found


def _piece_chars(embedder: Any) -> int:
    """The model's ``ModelSpec.piece_chars`` (0 for an embedder without a spec: no pieces)."""
    return int(getattr(getattr(embedder, "spec", None), "piece_chars", 0) or 0)


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
        self.spec = spec
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

    def embed_documents(self, texts: list[str], batch_size: int = ENCODE_BATCH) -> Any:
        return self.load().embed_documents(texts, batch_size=batch_size)
