"""The history index: commit messages, embedded and full-text indexed, searchable like code.

``askrepo index --history`` stores, for each kept non-merge commit reachable from HEAD (the
newest ``depth``, default 5,000), its subject and body (secrets redacted), author, author date,
the files it touched, renames, and the definitions it touched (``gitlog.touched_definitions``).
Layout, beside the code index of the same model::

    <index dir>/history/
        lance/      LanceDB database, table ``meta.table``
        lexical_*/  askrepo's full-text index (``askrepo.lexical``) of the committed commits,
                    named by ``meta.lexical``; written before meta.json names it
        meta.json   the committed state: table + version, full-text directory, HEAD, and
                    every commit already seen
        lock        flock()ed by the one history run allowed at a time

Runs are incremental by commit (only commits not yet seen are read and embedded; commits no
longer reachable are deleted) and crash-safe in the same way as the code index: rows are
written as new table versions and become visible only when ``meta.json`` is atomically
replaced; a run that died is rolled back to the committed version by the next one.

The full-text side is askrepo's own BM25 (``askrepo.lexical``, the engine code search uses) over
the subject, body, file names and touched definitions. A run tokenizes only the commits it adds
(the others keep their postings); lost or damaged files are rebuilt in memory from the table. A
history index written before it (no ``meta.lexical``) keeps LanceDB's full-text index until the
next ``askrepo index --history`` run adds askrepo's.

``search_history`` ranks commits by min-max score fusion of dense and BM25 lists (RRF on
request), and reports
the definitions each commit touched as ``path:start-end`` at HEAD when they still exist
(followed through later renames, matched by name so they survive line moves).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from . import config
from .datatypes import Citation, Hit
from .errors import IndexIncompatibleError, NoIndexError, UsageError, at_least, shell_arg

HISTORY_SCHEMA = 1
DEFAULT_DEPTH = 5_000
HISTORY_DIR = "history"
META_FILE = "meta.json"
EMBED_BATCH = 128
EMBED_CHARS = 1_500  # the model reads ~256 tokens; subject + the start of the body
MAX_BODY_CHARS = 4_000  # longer bodies (pasted logs) are cut before storage
LEXICAL_PREFIX = "lexical_"
COMMIT_CLASS = "commit"  # the one file class of the history's full-text index
FUSIONS = ("rrf", "score")
_COLUMNS = ["sha", "date", "author", "subject", "body", "files", "renames", "defs"]

# progress(stage, done, total); stages are named "history: …" (shown as they are).
Progress = Callable[[str, int, int], None]


# ---------------------------------------------------------------------------------------------
# Pure functions

_HISTORY_WORDS = re.compile(
    r"\b(?:why|since when|when (?:was|were|did|has|have|had)|"
    r"who (?:added|wrote|changed|introduced|removed|made|broke|renamed)|"
    r"history|historical|commits?|committed|introduced|originally|rationale|reverted?|"
    r"regress(?:ed|ion)|used to|blame|changelog|last (?:week|month|year|release|version)|"
    r"changed recently|recent(?:ly)? (?:changed?|changes|added|removed))\b",
    re.I,
)


def is_history_question(question: str) -> bool:
    """Whether a question is about the code's past (why / when / who / history), detected by
    words like ``retriever.detect_scope`` detects tests/docs: "why do we retry on 503",
    "when was --verbose added", "who introduced the cache"."""
    return bool(_HISTORY_WORDS.search(question))


def commit_text(subject: str, body: str) -> str:
    """The message as embedded: subject, blank line, body; cut to what the model reads."""
    text = subject if not body else f"{subject}\n\n{body}"
    return text[:EMBED_CHARS]


def commit_fts(subject: str, body: str, files: Sequence[str], symbols: Sequence[str]) -> str:
    """The full-text column: message plus file names and touched symbols, identifiers split."""
    from .identifiers import fts_document

    return fts_document(f"{subject}\n{body}", extra=" ".join([*files, *symbols]))


def encode_def(path: str, symbol: str) -> str:
    return f"{path}\t{symbol}"


def decode_def(raw: str) -> tuple[str, str]:
    path, _, symbol = raw.partition("\t")
    return path, symbol


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class TouchedDef:
    path: str  # at the commit
    symbol: str
    head_path: str | None = None  # where it is now (None: gone)
    start_line: int | None = None
    end_line: int | None = None

    @property
    def location(self) -> str | None:
        if self.head_path is None or self.start_line is None:
            return None
        return f"{self.head_path}:{self.start_line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["location"] = self.location
        return d


@dataclass
class CommitHit:
    rank: int
    sha: str
    date: str
    author: str
    subject: str
    body: str
    files: list[str]
    defs: list[TouchedDef]
    score: float
    sources: dict[str, int | None]

    @property
    def short(self) -> str:
        return self.sha[:7]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["defs"] = [t.to_dict() for t in self.defs]
        return d


@dataclass
class HistorySearchResult:
    query: str
    repo: str
    elapsed_ms: float
    hits: list[CommitHit]
    commits_indexed: int
    head: str | None  # the commit the history index was built at
    head_commit: str | None = None  # the repository's HEAD now
    new_commits: int | None = None  # commits since ``head`` (None: not an ancestor / unknown)

    @property
    def stale(self) -> bool:
        return bool(self.head and self.head_commit and self.head != self.head_commit)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "repo": self.repo,
            "head": self.head,
            "indexed_commit": self.head,
            "head_commit": self.head_commit,
            "stale": self.stale,
            "new_commits": self.new_commits,
            "commits_indexed": self.commits_indexed,
            "elapsed_ms": round(self.elapsed_ms, 2),
            "hits": [h.to_dict() for h in self.hits],
        }


def commits_since(repo: Path, indexed: str | None) -> tuple[str | None, int | None]:
    """(HEAD now, how many commits it is ahead of ``indexed``; None when ``indexed`` is not an
    ancestor of it, as after a rebase, or git cannot say)."""
    from .ingest import _git, git_commit

    head = git_commit(repo)
    if not head or not indexed or head == indexed:
        return head, 0 if head and head == indexed else None
    out = _git(repo, "rev-list", "--count", f"{indexed}..{head}")
    ancestor = _git(repo, "merge-base", "--is-ancestor", indexed, head)
    text = out.decode().strip() if out else ""
    return head, int(text) if text.isdigit() and ancestor is not None else None


@dataclass
class HistorySummary:
    repo: str
    path: str
    head: str
    depth: int
    commits_seen: int  # reachable non-merge commits within the depth
    commits_indexed: int  # rows in the table
    commits_added: int
    commits_removed: int
    skipped: dict[str, int]
    redactions: int
    timings_s: dict[str, float]
    rebuilt: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# Storage helpers


def _lancedb() -> Any:
    try:
        from .store import _lancedb as load
    except ImportError:  # pragma: no cover - the store moved; plain import works too
        import lancedb

        return lancedb
    return load()


def history_dir(repo: Path, model_id: str) -> Path:
    from .store import index_dir

    return index_dir(Path(repo).resolve(), model_id) / HISTORY_DIR


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        meta = json.loads((path / META_FILE).read_text("utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        reason = f"The history index at {path} is damaged ({exc.__class__.__name__})"
        raise IndexIncompatibleError(
            f"{reason} — run `askrepo index --history --rebuild`", reason=reason
        ) from exc
    if meta.get("schema") != HISTORY_SCHEMA:
        reason = f"The history index at {path} was built by another askrepo version"
        raise IndexIncompatibleError(
            f"{reason} — run `askrepo index --history --rebuild`", reason=reason
        )
    return meta


def _write_meta(path: Path, meta: dict[str, Any]) -> None:
    from .store import write_json_atomic

    write_json_atomic(path, META_FILE, meta)


def _sha_batches(shas: Sequence[str], size: int = 200) -> Iterator[tuple[Sequence[str], str]]:
    """The shas in batches of ``size``, each with its ``sha IN (...)`` condition (one
    condition per batch keeps each SQL string short)."""
    for i in range(0, len(shas), size):
        part = shas[i : i + size]
        yield part, "sha IN (" + ", ".join("'" + v.replace("'", "''") + "'" for v in part) + ")"


def _model(model: str | None) -> tuple[str, str, int]:
    """(name, model id, dim) of an embedding model name, without loading it."""
    from .embedder import model_spec

    name = model or config.embed_model()
    spec = model_spec(name)
    return name, spec.model_id, spec.dim


# ---------------------------------------------------------------------------------------------
# Writing


def index_history(
    root: Path,
    *,
    model: str | None = None,
    depth: int | None = None,
    rebuild: bool = False,
    embedder: Any = None,
    progress: Progress | None = None,
) -> HistorySummary:
    """Create or update the history index of the git repository at ``root``."""
    from .gitlog import BlobReader, head, read_commits, require_repo, rev_list, skip_reason
    from .ingest import check_root
    from .secrets import redact
    from .store import _Lock

    root = check_root(root)
    require_repo(root)
    depth = DEFAULT_DEPTH if depth is None else int(depth)
    at_least("--history-depth", depth, 1)
    report = progress or (lambda stage, done, total: None)
    timings: dict[str, float] = {}
    if embedder is not None:
        model_name, model_id, dim = model or embedder.model_id, embedder.model_id, embedder.dim
    else:
        model_name, model_id, dim = _model(model)
    path = history_dir(root, model_id)
    path.mkdir(parents=True, exist_ok=True)

    with _Lock(path / "lock"):
        t = time.perf_counter()
        lancedb = _lancedb()
        db = lancedb.connect(str(path / "lance"))
        meta: dict[str, Any] | None = None
        rebuilt: str | None = "--rebuild" if rebuild else None
        if (path / META_FILE).exists() and not rebuild:
            try:
                meta = _read_meta(path)
                if meta.get("model_id") != model_id:
                    raise IndexIncompatibleError("another model")
            except IndexIncompatibleError as exc:
                meta, rebuilt = None, exc.reason
        tbl = None
        if meta is not None:
            try:
                tbl = db.open_table(meta["table"])
                if tbl.version != meta["table_version"]:
                    tbl.restore(meta["table_version"])  # a run died after writing: roll back
            except Exception as exc:  # damaged: build afresh
                tbl, meta, rebuilt = None, None, f"previous history unreadable ({exc})"
        old_table = None
        if tbl is None:
            with contextlib.suppress(Exception):
                old_table = _read_meta(path)["table"]
            tbl = _create_table(db, dim)
            meta = None
        seen: dict[str, str] = dict(meta.get("seen", {})) if meta else {}  # sha -> "" or reason
        timings["open"] = time.perf_counter() - t

        t = time.perf_counter()
        report("history: git log", 0, 0)
        head_sha = head(root)
        reachable = rev_list(root, depth)
        reachable_set = set(reachable)
        todo = [s for s in reachable if s not in seen]
        gone = [s for s in seen if s not in reachable_set]
        timings["git"] = time.perf_counter() - t
        report("history: git log", len(reachable), len(reachable))

        removed_rows = [s for s in gone if seen[s] == ""]
        for _, condition in _sha_batches(removed_rows):
            tbl.delete(condition)
        for s in gone:
            del seen[s]

        timings["read"] = timings["embed"] = 0.0
        skipped: dict[str, int] = {}
        redactions = 0
        added = 0
        batch: list[dict[str, Any]] = []
        new_fts: dict[str, str] = {}  # sha -> full-text document of the commits added now
        emb = embedder

        def flush() -> None:
            nonlocal emb, added
            if not batch:
                return
            if emb is None:
                from .embedder import load_embedder

                t0 = time.perf_counter()
                emb = load_embedder(model_name)
                timings["load_model"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            vectors = emb.embed_documents([r.pop("_embed") for r in batch])
            timings["embed"] += time.perf_counter() - t0
            _add_rows(tbl, batch, vectors, dim)
            new_fts.update((r["sha"], r["fts"]) for r in batch)
            added += len(batch)
            report("history: commits embedded", added, len(todo))
            batch.clear()

        t = time.perf_counter()
        from .ingest import excluded_by_rules

        excluded = excluded_by_rules(root)  # .askrepoignore'd and secret files: not stored
        with BlobReader(root) as blobs:
            from .gitlog import touched_definitions

            for n, c in enumerate(read_commits(root, todo), 1):
                report("history: commits read", n, len(todo))
                why = skip_reason(c)
                if why:
                    seen[c.sha] = why
                    skipped[why] = skipped.get(why, 0) + 1
                    continue
                subject, r1 = redact(c.subject)
                body, r2 = redact(c.body[:MAX_BODY_CHARS])
                redactions += r1 + r2
                kept = [f for f in c.files if not excluded(f.path)]
                files = list(dict.fromkeys(f.path for f in kept))
                renames = [f"{f.old_path}\t{f.path}" for f in kept if f.status == "R"]
                defs = [(p, s) for p, s in touched_definitions(c, blobs) if not excluded(p)]
                batch.append(
                    {
                        "sha": c.sha,
                        "date": c.date,
                        "author": c.author,
                        "subject": subject,
                        "body": body,
                        "files": files,
                        "renames": renames,
                        "defs": [encode_def(p, s) for p, s in defs],
                        "fts": commit_fts(subject, body, files, [s for _, s in defs]),
                        "_embed": commit_text(subject, body),
                    }
                )
                seen[c.sha] = ""
                if len(batch) >= EMBED_BATCH:
                    timings["read"] += time.perf_counter() - t
                    flush()
                    t = time.perf_counter()
        timings["read"] += time.perf_counter() - t
        flush()

        t = time.perf_counter()
        changed = bool(added or removed_rows) or meta is None
        lexical_name = (meta or {}).get("lexical", "")
        if changed or not _lexical_readable(path, lexical_name):  # lost, or from before it
            report("history: full-text index", 0, 1)
            lexical_name = _write_lexical(path, tbl, new_fts, lexical_name)
            report("history: full-text index", 1, 1)
        count = tbl.count_rows()
        new_meta = {
            "schema": HISTORY_SCHEMA,
            "repo": str(root),
            "model_id": model_id,
            "model_name": model_name,
            "dim": dim,
            "table": tbl.name,
            "table_version": tbl.version,
            "lexical": lexical_name,
            "head": head_sha,
            "depth": depth,
            "count": count,
            "indexed_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "seen": seen,
        }
        if (
            changed
            or meta is None
            or meta.get("head") != head_sha
            or meta.get("lexical") != lexical_name
        ):
            _write_meta(path, new_meta)
        _tidy_lexical(path, lexical_name)
        if changed:
            with contextlib.suppress(Exception):
                from .store import KEEP_OLD_VERSIONS

                tbl.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
                if tbl.version != new_meta["table_version"]:
                    new_meta["table_version"] = tbl.version
                    _write_meta(path, new_meta)
            if old_table and old_table != tbl.name:
                with contextlib.suppress(Exception):
                    db.drop_table(old_table)
        timings["store"] = time.perf_counter() - t

    total_skipped: dict[str, int] = {}
    for why in seen.values():
        if why:
            total_skipped[why] = total_skipped.get(why, 0) + 1
    return HistorySummary(
        repo=str(root),
        path=str(path),
        head=head_sha,
        depth=depth,
        commits_seen=len(reachable),
        commits_indexed=count,
        commits_added=added,
        commits_removed=len(removed_rows),
        skipped=dict(sorted(total_skipped.items())),
        redactions=redactions,
        timings_s={k: round(v, 3) for k, v in timings.items()},
        rebuilt=rebuilt,
    )


def _create_table(db: Any, dim: int) -> Any:
    import pyarrow as pa

    schema = pa.schema(
        [
            pa.field("sha", pa.string()),
            pa.field("date", pa.string()),
            pa.field("author", pa.string()),
            pa.field("subject", pa.string()),
            pa.field("body", pa.string()),
            pa.field("files", pa.list_(pa.string())),
            pa.field("renames", pa.list_(pa.string())),
            pa.field("defs", pa.list_(pa.string())),
            pa.field("fts", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )
    name = f"commits_{int(time.time() * 1000)}_{os.getpid()}"
    return db.create_table(name, schema=schema, mode="overwrite")


def _add_rows(tbl: Any, rows: list[dict[str, Any]], vectors: Any, dim: int) -> None:
    import numpy as np
    import pyarrow as pa

    vecs = np.asarray(vectors, dtype=np.float32).reshape(len(rows), dim)
    arrays = []
    for name in _COLUMNS + ["fts"]:
        arrays.append(pa.array([r[name] for r in rows], type=tbl.schema.field(name).type))
    flat = pa.array(vecs.reshape(-1), type=pa.float32())
    arrays.append(pa.FixedSizeListArray.from_arrays(flat, dim))
    tbl.add(pa.Table.from_arrays(arrays, schema=tbl.schema))


def _table_shas(tbl: Any) -> list[str]:
    n = tbl.count_rows()
    if not n:
        return []
    return tbl.search().select(["sha"]).limit(n).to_arrow().column("sha").to_pylist()


def _table_docs(tbl: Any, shas: Sequence[str]) -> Iterator[Any]:
    """The full-text documents (``lexical.Doc``) of these commits, read from the table."""
    from .lexical import Doc

    for part, condition in _sha_batches(shas):
        q = tbl.search().where(condition).select(["sha", "fts"])
        for r in q.limit(len(part)).to_list():
            yield Doc(r["sha"], COMMIT_CLASS, r["fts"] or "", None)


def build_lexical(tbl: Any, new: dict[str, str] | None = None, previous: Any = None) -> Any:
    """askrepo's full-text index (``lexical.build``) of every commit in the table: commits
    ``previous`` holds keep their postings, those in ``new`` (sha -> document, the commits a
    run just added) are tokenized from memory, the rest are read from the table."""
    from .lexical import Doc, build

    new = new or {}
    shas = _table_shas(tbl)

    def read(want: Sequence[str]) -> Iterator[Any]:
        yield from (Doc(s, COMMIT_CLASS, new[s], None) for s in want if s in new)
        yield from _table_docs(tbl, [s for s in want if s not in new])

    return build(shas, [COMMIT_CLASS] * len(shas), read, previous)


def _write_lexical(path: Path, tbl: Any, new: dict[str, str], previous_name: str) -> str:
    """Write the full-text index of the table's commits into a new ``lexical_*`` directory
    of ``path`` and return its name (meta.json names it once the run commits)."""
    from .lexical import LexicalIndex

    previous = None
    if previous_name:
        with contextlib.suppress(OSError, ValueError):
            previous = LexicalIndex.load(path / previous_name)
    lex = build_lexical(tbl, new, previous)
    name = f"{LEXICAL_PREFIX}{int(time.time() * 1000)}_{os.getpid()}"
    lex.save(path / name)
    return name


def _lexical_readable(path: Path, name: str) -> bool:
    from .lexical import LexicalIndex

    if not name:
        return False
    try:
        LexicalIndex.load(path / name)
    except (OSError, ValueError):
        return False
    return True


def _tidy_lexical(path: Path, keep: str) -> None:
    """Remove the full-text directories meta.json does not name (earlier runs', a killed
    run's); only called by a run holding the lock, after meta.json is written."""
    import shutil

    for d in path.glob(f"{LEXICAL_PREFIX}*"):
        if d.name != keep and d.is_dir():
            shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Reading


class HistoryIndex:
    """Read-only view of the committed history index of one repository."""

    def __init__(self, path: Path, meta: dict[str, Any], embedder: Any = None):
        self.path = path
        self.meta = meta
        self.repo = Path(meta["repo"])
        self._embedder = embedder
        self._table: Any = None
        self._renames: dict[str, str] | None = None
        self._lexical: Any = None
        self._defs_cache: dict[str, dict[str, tuple[int, int]] | None] = {}

    @classmethod
    def open(cls, repo: Path, model: str | None = None, embedder: Any = None) -> HistoryIndex:
        repo = Path(repo).resolve()
        if embedder is not None and model is None:
            model_id = embedder.model_id
        else:
            from .store import model_id_for

            model_id = model_id_for(model or config.embed_model())
        path = history_dir(repo, model_id)
        try:
            meta = _read_meta(path)
        except FileNotFoundError:
            from .ingest import git_toplevel

            if repo.is_dir() and git_toplevel(repo) is None:
                raise NoIndexError(
                    f"{repo} is not inside a git repository, so it has no history to search "
                    "— search its code without --history"
                ) from None
            from .store import nothing_to_index

            nothing = nothing_to_index(repo) if repo.is_dir() else None
            if nothing is not None:  # `askrepo index --history` fails there too
                raise NoIndexError(f"No history index for {repo}: {nothing}") from None
            raise NoIndexError(
                f"No history index for {repo} — run `askrepo index --history {shell_arg(repo)}`"
            ) from None
        return cls(path, meta, embedder)

    @property
    def count(self) -> int:
        return int(self.meta.get("count", 0))

    @property
    def table(self) -> Any:
        if self._table is None:
            try:
                db = _lancedb().connect(str(self.path / "lance"))
                tbl = db.open_table(self.meta["table"])
                tbl.checkout(self.meta["table_version"])
            except Exception as exc:
                raise IndexIncompatibleError(
                    f"The history index at {self.path} is damaged ({exc}) — "
                    f"run `askrepo index --history --rebuild {shell_arg(self.repo)}`"
                ) from exc
            self._table = tbl
        return self._table

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from .embedder import MODELS, load_query_embedder

            names = [n for n, s in MODELS.items() if s.model_id == self.meta["model_id"]]
            self._embedder = load_query_embedder(names[0] if names else self.meta["model_name"])
        return self._embedder

    def rows(self, condition: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        q = self.table.search().select(_COLUMNS).limit(limit or max(self.count, 1))
        if condition:
            q = q.where(condition)
        return q.to_list()

    def commit(self, sha: str) -> dict[str, Any] | None:
        """The stored row of one commit (full sha), or None when it is not indexed."""
        if not re.fullmatch(r"[0-9a-f]{7,64}", sha):
            return None
        found = self.rows(f"sha = '{sha}'", limit=1) if len(sha) >= 40 else []
        return found[0] if found else None

    def renames(self) -> dict[str, str]:
        """Old path → path at HEAD, from every indexed rename."""
        if self._renames is None:
            from .gitlog import rename_map

            triples = []
            if self.count:
                rows = self.table.search().select(["date", "renames"]).limit(self.count).to_list()
                for r in rows:
                    for raw in r["renames"] or []:
                        old, _, new = raw.partition("\t")
                        triples.append((r["date"], old, new))
            self._renames = rename_map(triples)
        return self._renames

    def search(
        self, query: str, k: int = 8, mode: str = "hybrid", fusion: str = "score"
    ) -> HistorySearchResult:
        """The ``k`` commits best matching ``query``. ``fusion`` (hybrid only): ``"score"`` (the
        default: min-max score fusion, measured better on four changelogs, docs/history.md) or
        ``"rrf"`` (reciprocal rank fusion, k = 60)."""
        from .identifiers import fts_query
        from .retriever import dense_query_text, rrf, score_fusion

        if not query or not query.strip():
            raise UsageError("The query is empty — describe the change you are looking for")
        at_least("k", k, 1)
        if mode not in ("dense", "fts", "hybrid"):
            raise UsageError(f"Unknown mode {mode!r} — use dense, fts or hybrid")
        if fusion not in FUSIONS:
            raise UsageError(f"Unknown fusion {fusion!r} — use {' or '.join(FUSIONS)}")
        t0 = time.perf_counter()
        n = max(50, k * 3)
        rows: dict[str, dict[str, Any]] = {}
        lists: list[list[tuple[str, float]]] = []
        dense: list[tuple[str, float]] = []
        lexical: list[tuple[str, float]] = []
        if self.count and mode in ("dense", "hybrid"):
            vec = [float(x) for x in self.embedder.embed_query(dense_query_text(query))]
            q = self.table.search(vec, vector_column_name="vector").metric("cosine")
            for r in q.select(_COLUMNS).limit(n).to_list():
                rows[r["sha"]] = r
                dense.append((r["sha"], 1.0 - float(r.get("_distance") or 0.0)))
            lists.append(dense)
        fq = fts_query(query)
        if self.count and fq and mode in ("fts", "hybrid"):
            lex = self.lexical_index()
            if lex is not None:
                found = lex.search(fq, n)
                missing = [sha for sha, _ in found if sha not in rows]
                for _, condition in _sha_batches(missing):
                    for r in self.rows(condition):
                        rows[r["sha"]] = r
                lexical = [(sha, s) for sha, s in found if sha in rows]
            else:  # a history index written before askrepo's full text: LanceDB's
                with contextlib.suppress(Exception):  # no FTS index (e.g. an empty table)
                    q = self.table.search(fq, query_type="fts", fts_columns="fts")
                    for r in q.select(_COLUMNS).limit(n).to_list():
                        rows[r["sha"]] = r
                        lexical.append((r["sha"], float(r.get("_score") or 0.0)))
            lists.append(lexical)
        if fusion == "rrf" or len(lists) < 2:
            fused = rrf([[sha for sha, _ in items] for items in lists])[:k]
        else:
            fused = score_fusion(lists, depth=n)[:k]
        dr = {sha: i for i, (sha, _) in enumerate(dense, 1)}
        fr = {sha: i for i, (sha, _) in enumerate(lexical, 1)}
        hits = [
            self._hit(i, rows[sha], score, {"dense": dr.get(sha), "fts": fr.get(sha)})
            for i, (sha, score) in enumerate(fused, 1)
        ]
        now, ahead = commits_since(Path(self.repo), self.meta.get("head"))
        return HistorySearchResult(
            query=query,
            repo=str(self.repo),
            elapsed_ms=(time.perf_counter() - t0) * 1000,
            hits=hits,
            commits_indexed=self.count,
            head=self.meta.get("head"),
            head_commit=now,
            new_commits=ahead,
        )

    @property
    def full_text(self) -> str:
        """Which full-text engine answers: ``"askrepo"`` or ``"lancedb"`` (written before)."""
        return "askrepo" if self.meta.get("lexical") else "lancedb"

    def lexical_index(self) -> Any:
        """The committed full-text index (``askrepo.lexical``), loaded once; None for a
        history index written before it. Lost or damaged files are rebuilt in memory from the
        table (the next ``askrepo index --history`` writes them again)."""
        name = self.meta.get("lexical")
        if not name:
            return None
        if self._lexical is None:
            from .lexical import LexicalIndex

            try:
                self._lexical = LexicalIndex.load(self.path / name)
            except (OSError, ValueError):
                self._lexical = build_lexical(self.table)
        return self._lexical

    def _hit(self, rank: int, r: dict[str, Any], score: float, sources: dict) -> CommitHit:
        return CommitHit(
            rank=rank,
            sha=r["sha"],
            date=r["date"],
            author=r["author"],
            subject=r["subject"],
            body=r["body"],
            files=list(r["files"] or []),
            defs=self.locate([decode_def(d) for d in r["defs"] or []]),
            score=round(score, 6),
            sources=sources,
        )

    def locate(self, defs: Sequence[tuple[str, str]]) -> list[TouchedDef]:
        """Where each (path, symbol) touched by a commit is now (work tree), by name."""
        out = []
        renames = self.renames()
        for path, symbol in defs:
            now = renames.get(path, path)
            spans = self._head_defs(now)
            span = spans.get(symbol) if spans else None
            if span is None:
                out.append(TouchedDef(path, symbol))
            else:
                out.append(TouchedDef(path, symbol, now, span[0], span[1]))
        return out

    def _head_defs(self, path: str) -> dict[str, tuple[int, int]] | None:
        if path not in self._defs_cache:
            self._defs_cache[path] = head_definitions(self.repo, path)
        return self._defs_cache[path]


def head_definitions(repo: Path, path: str) -> dict[str, tuple[int, int]] | None:
    """symbol → (start, end) of the definitions in the work-tree file ``path`` (first wins);
    None when the file is gone, unsafe or unreadable."""
    from .gitlog import definition_spans
    from .ingest import read_text
    from .safepath import resolve_repo_path

    try:
        resolve_repo_path(repo, path)
    except UsageError:
        return None
    got = read_text(repo, path)
    if got is None:
        return None
    spans: dict[str, tuple[int, int]] = {}
    for c in definition_spans(got[0], path):
        spans.setdefault(c.symbol, (c.start_line, c.end_line))
    return spans


def search_history(
    repo: Path,
    query: str,
    *,
    k: int = 8,
    model: str | None = None,
    embedder: Any = None,
    mode: str = "hybrid",
) -> HistorySearchResult:
    return HistoryIndex.open(repo, model, embedder).search(query, k, mode)


# ---------------------------------------------------------------------------------------------
# Commit evidence for `ask` (used through two small hooks in answer.py)

COMMIT_KIND = "commit"
ASK_COMMITS = 3  # commits shown to the model for a history question


@dataclass
class CommitEvidence(Hit):
    """A commit shown to the model beside code snippets; ``path`` is the short sha."""

    sha: str = ""
    subject: str = ""
    date: str = ""

    @property
    def location(self) -> str:
        return f"{self.sha[:7]} {self.subject}"


@dataclass
class CommitCitation(Citation):
    """A cited commit: printed as ``abc1234 subject``."""

    sha: str = ""
    subject: str = ""
    kind: str = COMMIT_KIND

    @property
    def location(self) -> str:
        return f"{self.sha[:7]} {self.subject}"


def _evidence(h: CommitHit) -> CommitEvidence:
    touched = [d.location or f"{d.path} ({d.symbol}, gone)" for d in h.defs[:8]]
    lines = [f"commit {h.short} · {h.date[:10]} · {h.author}", h.subject]
    if h.body:
        lines += ["", h.body[:1200]]
    if touched:
        lines += ["", "touched: " + ", ".join(touched)]
    elif h.files:
        lines += ["", "files: " + ", ".join(h.files[:8])]
    return CommitEvidence(
        rank=0,
        path=h.short,
        start_line=0,
        end_line=0,
        symbol=None,  # the subject is in `location`; a symbol column would repeat it
        kind=COMMIT_KIND,
        language=None,
        score=h.score,
        sources=dict(h.sources),
        expanded_from=None,
        text="\n".join(lines),
        file_class="history",
        sha=h.sha,
        subject=h.subject,
        date=h.date,
    )


def with_commit_evidence(question: str, retriever: Any, hits: list[Hit], k: int) -> list[Hit]:
    """For a why/when/who/history question with a history index: the top commits interleaved
    with the code hits (code first), ``k`` in all; otherwise ``hits`` unchanged."""
    if not is_history_question(question):
        return hits
    try:
        idx = HistoryIndex.open(retriever.store.repo, retriever.store.model_id)
        idx._embedder = retriever.embedder  # the code index's model: the same vectors
        commits = [_evidence(h) for h in idx.search(question, k=ASK_COMMITS).hits]
    except Exception:  # no history index (or a damaged one): answer from code alone
        return hits
    merged: list[Hit] = []
    code = list(hits)
    while code or commits:
        if code:
            merged.append(code.pop(0))
        if commits:
            merged.append(commits.pop(0))
    out = merged[: max(k, 1)]
    return [replace(h, rank=i) for i, h in enumerate(out, 1)]


def commit_snippet(n: int, hit: Hit) -> str:
    """The prompt block of a commit: ``[n] commit abc1234 subject`` then the message."""
    return f"[{n}] commit {hit.path}\n{hit.text.rstrip()}"


def commit_citations(citations: list[Citation], shown: Sequence[Hit]) -> list[Citation]:
    """Citations of shown commits become ``CommitCitation`` (printed ``abc1234 subject``)."""
    out: list[Citation] = []
    for c in citations:
        h = shown[c.n - 1] if 0 < c.n <= len(shown) else None
        if isinstance(h, CommitEvidence):
            out.append(
                CommitCitation(
                    n=c.n,
                    path=h.path,
                    start_line=0,
                    end_line=0,
                    symbol=None,
                    commit=h.sha,
                    sha=h.sha,
                    subject=h.subject,
                )
            )
        else:
            out.append(c)
    return out
