"""LanceDB storage: one index per (repo path, embedding model).

Layout under ``$ASKREPO_HOME/indexes/<repo-name>-<hash>/<model_id>/``::

    lance/          LanceDB database: chunks in table ``meta.table``, their vectors in
                    ``meta.vectors_table`` (filled by phase 2 of an index run)
    lexical_*/      askrepo's full-text index (``askrepo.lexical``) of the committed chunks,
                    named by ``meta.lexical``; written before meta.json names it
    meta.json       the *committed* state: table name + version, manifest of files, model, versions
    lock            flock()ed by the one index run allowed at a time

Crash safety comes from LanceDB's versioned tables: a writer adds and deletes rows (each a new
table version) and only at the very end atomically replaces ``meta.json`` to point at the new
version. Readers always ``checkout()`` the version named in ``meta.json``, so a run killed at any
point leaves the previous index answering queries, and a concurrent search sees the old or the
new index, never a mix. The next run ``restore()``s the committed version before it writes.
A ``--rebuild`` writes a fresh table and swaps it in the same way.

Nothing LanceDB- or Arrow-shaped leaves the store modules: callers get ``Chunk`` objects.

This module is the *reader* (``IndexStore``, ``open_index``, ``find_index``) and the shared
layout (paths, keys, ``meta.json``). The writer is ``askrepo.store_writer``, the in-memory
search engine ``askrepo.mirror``, and the "did the work tree change?" check
``askrepo.freshness``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import config
from .datatypes import CODE, CONFIG, Chunk, SourceFile, last_part
from .errors import IndexIncompatibleError, NoIndexError, shell_arg

if TYPE_CHECKING:
    from .mirror import Mirror

# A chunk longer than the model's window gets at most this many piece vectors besides its own
# (``indexer.piece_texts``); dense search relies on the bound.
MAX_PIECES = 3
SCHEMA_VERSION = 2  # 2: vectors in their own table (two-phase indexing)
# What ``indexer.embed_text`` and ``indexer.piece_texts`` make of a chunk. A vectors table is
# stamped with it (schema metadata; a table without the stamp holds version 1), and vectors are
# reused by their embedded text only from a table with the current version
# (``IndexWriter.old_vectors``). Bump it, with CHUNKER_VERSION, when the same chunk would be
# embedded as another string: the rebuild then re-embeds everything.
EMBED_TEXT_VERSION = "1"
META_FILE = "meta.json"
# Old table versions stay readable this long after a newer commit (for searches in flight).
KEEP_OLD_VERSIONS = _dt.timedelta(minutes=10)

_CHUNK_COLUMNS = [
    "id",
    "path",
    "start_line",
    "end_line",
    "text",
    "language",
    "kind",
    "symbol",
    "signature",
    "calls",
    "file_class",
    "file_sha",
    "context",
]


def _lancedb() -> Any:
    """``import lancedb``, minus ~0.5 s of start-up for a client askrepo never uses.

    ``lancedb`` imports ``lance_namespace``, whose ``lance_namespace_urllib3_client`` package
    eagerly imports a generated REST client for remote catalogs (about half of lancedb's
    1.1-1.4 s import time here). askrepo only opens local tables. So that package is
    registered without running its ``__init__``: its submodules (the models lance_namespace
    needs) import normally, and the first attribute lookup on the package itself runs the real
    ``__init__``, so any code that does use the client still gets it.
    """
    import importlib.util
    import sys

    name = "lance_namespace_urllib3_client"
    if "lancedb" not in sys.modules and name not in sys.modules:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and spec.submodule_search_locations:
            pkg = importlib.util.module_from_spec(spec)

            def load_on_use(attr: str) -> Any:
                del pkg.__dict__["__getattr__"]
                spec.loader.exec_module(pkg)
                return getattr(pkg, attr)

            pkg.__getattr__ = load_on_use  # type: ignore[attr-defined]
            sys.modules[name] = pkg
    import lancedb

    return lancedb


def chunk_id(chunk: Chunk) -> str:
    raw = f"{chunk.path}\0{chunk.start_line}\0{chunk.end_line}\0{chunk.file_sha}\0{chunk.kind}"
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def repo_key(repo: Path) -> str:
    """``<safe name>-<sha1 of the path's bytes>``: any directory name works, even non-UTF-8."""
    resolved = str(Path(repo).resolve())
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(resolved).name or "root")[:40]
    return f"{name}-{hashlib.sha1(os.fsencode(resolved)).hexdigest()[:12]}"


def repo_dir(repo: Path) -> Path:
    return config.home() / "indexes" / repo_key(repo)


def index_dir(repo: Path, model_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)
    return repo_dir(repo) / safe


def model_id_for(name: str) -> str:
    """The stable id of a selectable model name, without loading the model."""
    from .embedder import model_spec
    from .errors import UsageError

    try:
        return model_spec(name).model_id
    except UsageError:
        return name  # an id already (or a custom embedder's), used as it is


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_in(column: str, values: Iterable[str]) -> str:
    """``column IN ('a', 'b', …)``, each value quoted by ``_sql_str``."""
    return f"{column} IN (" + ", ".join(_sql_str(v) for v in values) + ")"


def _chunks_by_id(table: Any, found: Sequence[tuple[str, float]]) -> list[tuple[str, Chunk, float]]:
    """(id, chunk, score) for (id, score) pairs, in their order, read from ``table`` in one
    query; ids the table lacks are left out."""
    if not found:
        return []
    rows = table.search().where(_sql_in("id", (cid for cid, _ in found)))
    rows = rows.select(_CHUNK_COLUMNS).limit(len(found)).to_list()
    by_id = {cid: chunk for cid, chunk, _ in _rows_to_chunks(rows)}
    return [(cid, by_id[cid], sc) for cid, sc in found if cid in by_id]


def _like(column: str, text: str, *, before: bool = False, after: bool = False) -> str:
    """``column LIKE …`` for ``text`` taken literally (its ``%``, ``_`` and ``\\`` escaped), with
    a ``%`` wildcard before and / or after it."""
    body = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = ("%" if before else "") + body + ("%" if after else "")
    return f"{column} LIKE {_sql_str(pattern)} ESCAPE '\\'"


def _classes_filter(classes: Iterable[str] | None) -> str | None:
    if classes is None:
        return None
    return "file_class IN (" + ", ".join(_sql_str(c) for c in sorted(classes)) + ")"


def _and(*parts: str | None) -> str | None:
    kept = [f"({p})" for p in parts if p]
    return " AND ".join(kept) if kept else None


@dataclass
class IndexMeta:
    repo: str
    model_id: str
    model_name: str
    dim: int
    commit: str | None
    indexed_at: str
    chunk_count: int
    file_count: int
    chunker_version: str
    schema_version: int
    enrich: bool
    table: str
    table_version: int
    redactions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    contextual: bool = False  # chunks carry an LLM summary (`askrepo index --contextual`)
    vectors_table: str = ""
    vectors_version: int = 0
    embedded_count: int = 0  # chunks with a vector; < chunk_count while phase 2 is pending
    dirty: list[str] = field(default_factory=list)  # files that differed from HEAD when indexed
    lexical: str = ""  # directory of the full-text index (askrepo.lexical); "": LanceDB's only

    @property
    def fully_embedded(self) -> bool:
        return self.embedded_count >= self.chunk_count

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_META_FIELDS = frozenset(IndexMeta.__dataclass_fields__)


def _read_meta(path: Path) -> tuple[IndexMeta, dict[str, SourceFile]]:
    try:
        # surrogateescape: a repo path that is not valid UTF-8 round-trips byte for byte
        raw = json.loads((path / META_FILE).read_text("utf-8", errors="surrogateescape"))
        files = {p: SourceFile(path=p, **f) for p, f in raw.pop("files").items()}
        # a field a newer askrepo added is left out, not taken for damage
        meta = IndexMeta(**{k: v for k, v in raw.items() if k in _META_FIELDS})
    except FileNotFoundError:
        raise
    except (OSError, ValueError, TypeError, KeyError) as exc:
        why = f"The index at {path} is damaged ({exc.__class__.__name__})"
        raise IndexIncompatibleError(f"{why} — run `askrepo index --rebuild`", why) from exc
    return meta, files


def _meta_stamp(path: Path) -> tuple[int, int, int] | None:
    """Identity of the current meta.json (inode, size, mtime): changes on every commit."""
    try:
        st = (path / META_FILE).stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def write_json_atomic(path: Path, name: str, data: Any) -> None:
    """Write ``path/name`` as JSON crash-safely: a temporary file, fsync, ``os.replace``, then
    fsync of the directory. Readers see the old file or the new one, never a torn one."""
    tmp = path / f".{name}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
        json.dump(data, fh, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path / name)
    with contextlib.suppress(OSError):
        dfd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _write_meta(path: Path, meta: IndexMeta, files: dict[str, SourceFile]) -> None:
    data = meta.to_dict()
    data["files"] = {
        p: {k: v for k, v in asdict(f).items() if k != "path"} for p, f in sorted(files.items())
    }
    write_json_atomic(path, META_FILE, data)


def _check_compatible(meta: IndexMeta, where: Path) -> None:
    """Refuse an index this askrepo cannot read as it is. The error's ``reason`` is what an
    index run (``IndexWriter``), which rebuilds such an index from scratch, reports."""
    from .chunker import CHUNKER_VERSION

    if meta.schema_version != SCHEMA_VERSION:
        why = (
            f"The index for {meta.repo} was built by another askrepo version "
            f"(schema {meta.schema_version}, chunker {meta.chunker_version})"
        )
        raise IndexIncompatibleError(
            f"{why} — run `askrepo index --rebuild {shell_arg(meta.repo)}`", why
        )
    if meta.chunker_version != CHUNKER_VERSION:
        # same store format, other chunks: a plain index run re-chunks every file
        why = (
            f"The index for {meta.repo} was chunked by chunker version {meta.chunker_version} "
            f"(this askrepo has version {CHUNKER_VERSION})"
        )
        raise IndexIncompatibleError(
            f"{why} — run `askrepo index {shell_arg(meta.repo)}` to re-chunk and re-embed it",
            why,
        )


def table_docs(table: Any, ids: Sequence[str]) -> Iterator[Any]:
    """The full-text documents (``lexical.Doc``) of these chunks, read from a chunks table: a
    few are looked up by id, many are read in one pass, a batch at a time."""
    from .lexical import Doc

    cols = ["id", "file_class", "fts", "symbol"]
    if len(ids) <= 2000:
        batches = []
        for i in range(0, len(ids), 500):
            q = table.search().where(_sql_in("id", ids[i : i + 500])).select(cols).limit(500)
            batches.append(q.to_arrow())
    else:
        n = max(table.count_rows(), 1)
        batches = table.search().select(cols).limit(n).to_batches(batch_size=2048)
    want = set(ids)
    for arr in batches:
        for row in arr.to_pylist():
            if row["id"] in want:
                yield Doc(row["id"], row["file_class"], row["fts"] or "", row["symbol"])


def build_lexical(table: Any, read: Any = None, previous: Any = None) -> Any:
    """askrepo's full-text index (``lexical.build``) of every chunk of a chunks table, in
    table order; the documents to tokenize come from ``read(ids)`` (default: the table,
    ``table_docs``), and the chunks ``previous`` holds keep their postings."""
    from . import lexical

    n = table.count_rows()
    rows = table.search().select(["id", "file_class"]).limit(max(n, 1)).to_arrow() if n else None
    ids = rows.column("id").to_pylist() if rows is not None else []
    classes = rows.column("file_class").to_pylist() if rows is not None else []

    def from_table(want: Sequence[str]) -> Iterator[Any]:
        return table_docs(table, want)

    return lexical.build(ids, classes, read or from_table, previous)


def _rows_to_chunks(rows: Sequence[dict[str, Any]]) -> list[tuple[str, Chunk, float]]:
    out = []
    for r in rows:
        score = r.get("_score")
        if score is None:
            dist = r.get("_distance")
            score = 1.0 - float(dist) if dist is not None else 0.0
        chunk = Chunk(
            path=r["path"],
            start_line=int(r["start_line"]),
            end_line=int(r["end_line"]),
            text=r["text"],
            language=r["language"],
            kind=r["kind"],
            symbol=r["symbol"],
            signature=r["signature"],
            calls=list(r["calls"] or []),
            file_class=r["file_class"],
            file_sha=r["file_sha"],
            context=r.get("context"),
        )
        out.append((r["id"], chunk, float(score)))
    return out


def _load_mirror(table: Any, vectors: Any, meta: IndexMeta) -> Mirror:
    """Every chunk and vector of the checked-out versions, as a ``Mirror``."""
    import numpy as np

    from .mirror import Mirror

    arr = table.search().select(_CHUNK_COLUMNS).limit(max(meta.chunk_count, 1)).to_arrow()
    rows = _rows_to_chunks(arr.to_pylist())
    ids = [r[0] for r in rows]
    mat = np.zeros((len(ids), meta.dim), dtype=np.float32)
    mirror = Mirror(ids, [r[1] for r in rows], mat, [r[1].file_class for r in rows], None)
    _load_vectors(mirror, vectors, meta)
    return mirror


def _load_vectors(mirror: Mirror, vectors: Any, meta: IndexMeta) -> None:
    """Put the committed vectors into ``mirror`` (again, after phase 2 committed more)."""
    import numpy as np

    embedded = np.zeros(len(mirror.ids), dtype=bool)
    if meta.embedded_count:
        pieces = _has_pieces(vectors)
        cols = ["id", "piece", "vector"] if pieces else ["id", "vector"]
        varr = vectors.search().select(cols).limit(max(vectors.count_rows(), 1)).to_arrow()
        vmat = np.asarray(varr.column("vector").combine_chunks().values, dtype=np.float32)
        vmat = vmat.reshape(len(varr), meta.dim)
        number = varr.column("piece").to_pylist() if pieces else [0] * len(varr)
        rows, found, owners, piece_rows = [], [], [], []
        for j, cid in enumerate(varr.column("id").to_pylist()):
            i = mirror.position.get(cid)
            if i is None:
                continue
            if number[j]:
                owners.append(i)
                piece_rows.append(j)
            else:
                rows.append(i)
                found.append(j)
        if rows:
            mirror.set_vectors(np.asarray(rows), vmat[np.asarray(found)])
            embedded[rows] = True
        keep = [n for n, i in enumerate(owners) if embedded[i]]
        if keep:
            mirror.set_pieces(
                np.asarray(owners)[keep], vmat[np.asarray(piece_rows)[np.asarray(keep)]]
            )
    mirror.embedded = embedded


def _has_pieces(vectors: Any) -> bool:
    """Whether a vectors table stores piece vectors (``store_writer``)."""
    return "piece" in vectors.schema.names


def _no_index(repo: Path, model: str | None = None) -> NoIndexError:
    """The error for a repository without an index, with the fix that works: a path that is
    no directory, a directory inside an indexed repository, a model not offered, a directory
    with nothing to index (where ``askrepo index`` fails too), or else the ``askrepo index``
    command to run."""
    from .embedder import model_spec
    from .errors import UsageError

    if not repo.exists():
        return NoIndexError(f"{repo} does not exist — pass a repository directory with --repo")
    if not repo.is_dir():
        return NoIndexError(f"{repo} is a file — pass its repository's directory with --repo")
    for parent in repo.parents:
        if any((p / META_FILE).exists() for p in repo_dir(parent).glob("*")):
            return NoIndexError(
                f"No index for {repo}: it is inside the indexed repository {parent} — "
                f"use --repo {shell_arg(parent)}"
            )
    if model is not None:
        try:
            model_spec(model)
        except UsageError as exc:
            return NoIndexError(str(exc))
    nothing = nothing_to_index(repo)
    if nothing is not None:
        # what `askrepo index` says here, which "run `askrepo index`" would only lead to
        return NoIndexError(f"No index for {repo}: {nothing}")
    return _run_index(repo, model)


def nothing_to_index(repo: Path) -> str | None:
    """Why ``askrepo index`` would fail for ``repo`` for want of files — what the walker skips
    there ("1 binary, 2 secret") — said as the end of a "No index" error; None when it would
    index some file (or the walk fails: the plain hint then). On the no-index error path
    only; the walk stops at the first file it would index, so a repository that is merely
    not indexed yet answers at once, and only one with nothing to index is walked to the end."""
    from .errors import AskrepoError
    from .ingest import walk

    try:
        walked = walk(repo, first_only=True)
    except (AskrepoError, OSError):
        return None
    if walked.files:
        return None
    skipped = ", ".join(f"{n} {r}" for r, n in walked.skipped.items()) or "none found"
    return (
        f"no indexable files in it (skipped: {skipped}), so `askrepo index` has nothing to "
        "index — check the path, .gitignore and .askrepoignore"
    )


def _run_index(repo: Path, model: str | None = None) -> NoIndexError:
    """The error that says to run ``askrepo index`` (for ``model``, with its ``--model`` unless
    it is the default, when one was asked for): the fix when nothing else is wrong."""
    if model is None:
        return NoIndexError(f"No index for {repo} — run `askrepo index {shell_arg(repo)}`")
    opt = "" if model == config.DEFAULT_EMBED_MODEL else f" --model {model}"
    return NoIndexError(
        f"No index for {repo} with model {model} — run `askrepo index {shell_arg(repo)}{opt}`"
    )


def merge_parts(chunks: Sequence[Chunk]) -> list[Chunk]:
    """``chunks`` (in path and line order) with the overlapping or adjacent parts of one long
    definition — the same file, symbol and kind, as the chunker cuts a definition longer than
    its window — joined into one chunk: one definition, not four (echo's 180-line ``Context``
    interface).

    >>> def part(a, b):
    ...     return Chunk("c.go", a, b, "\\n".join(map(str, range(a, b + 1))), "go", "class", "Ctx")
    >>> [(c.start_line, c.end_line, c.text.split()[-1]) for c in merge_parts([part(20, 79),
    ...                                                                      part(70, 128)])]
    [(20, 128, '128')]
    """
    out: list[Chunk] = []
    for c in chunks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and (prev.path, prev.symbol, prev.kind) == (c.path, c.symbol, c.kind)
            and c.start_line <= prev.end_line + 1
        ):
            lines = dict(enumerate(c.text.split("\n"), c.start_line))
            lines.update(enumerate(prev.text.split("\n"), prev.start_line))
            end = max(prev.end_line, c.end_line)
            text = "\n".join(lines.get(n, "") for n in range(prev.start_line, end + 1))
            calls = list(dict.fromkeys([*prev.calls, *c.calls]))
            out[-1] = replace(prev, end_line=end, text=text, calls=calls)
        else:
            out.append(c)
    return out


def find_index(repo: Path, model: str | None = None) -> Path:
    """The index directory for ``repo``; with no model, the default model's or the newest one."""
    repo = Path(repo).resolve()
    if model is not None or config.embed_model() != config.DEFAULT_EMBED_MODEL:
        name = model or config.embed_model()
        path = index_dir(repo, model_id_for(name))
        if not (path / META_FILE).exists():
            raise _no_index(repo, name)
        return path
    default = index_dir(repo, model_id_for(config.DEFAULT_EMBED_MODEL))
    if (default / META_FILE).exists():
        return default
    candidates = sorted(
        (p for p in repo_dir(repo).glob("*") if (p / META_FILE).exists()),
        key=lambda p: (p / META_FILE).stat().st_mtime,
        reverse=True,
    )
    if not candidates:
        raise _no_index(repo)
    return candidates[0]


def open_index(repo: Path, model: str | None = None) -> IndexStore:
    """Open the committed state of the index for ``repo`` (read-only)."""
    path = find_index(repo, model)
    try:
        meta, files = _read_meta(path)
    except FileNotFoundError as exc:  # meta.json removed since find_index saw it
        raise _run_index(repo) from exc
    _check_compatible(meta, path)
    return IndexStore(path, meta, files)


class IndexStore:
    """Read-only view of one committed index version."""

    def __init__(self, path: Path, meta: IndexMeta, files: dict[str, SourceFile]):
        self.path = path
        self._meta = meta
        self._files = files
        self.repo = Path(meta.repo)
        self.model_id = meta.model_id
        self.model_name = meta.model_name
        self._table = None
        self._vectors = None
        # An in-memory mirror of the table (vectors, chunks, symbol and call maps), loaded when
        # a second search starts on this store: a one-shot CLI search does not pay for loading
        # it; a long-lived caller (MCP server, eval, ask) gets millisecond lookups.
        self._matrix: Mirror | None = None
        self._searches = 0
        self._vectors_changed = False
        self._stamp = _meta_stamp(path)
        self._docs_only: bool | None = None  # of self._files; None: not computed yet
        self._lexical: tuple[str, Any] | None = None  # (meta.lexical, its LexicalIndex or None)
        self._generated: dict[str, bool] = {}  # chunk id -> its file marks itself generated

    # -- metadata ---------------------------------------------------------------------------
    def meta(self) -> IndexMeta:
        return self._meta

    def files(self) -> dict[str, SourceFile]:
        return self._files

    @property
    def docs_only(self) -> bool:
        """Whether no code or config file is indexed (docs or tests only): the retriever then
        searches docs and tests by default. Computed once per committed state (``refresh``
        forgets it when it reads a new file list)."""
        if self._docs_only is None:
            self._docs_only = not any(f.file_class in (CODE, CONFIG) for f in self._files.values())
        return self._docs_only

    @property
    def table(self):
        """The chunks table at the committed version."""
        if self._table is None:
            self._table = self._open_table(self._meta.table, self._meta.table_version)
        return self._table

    @property
    def vectors(self):
        """The vectors table at the committed version."""
        if self._vectors is None:
            self._vectors = self._open_table(self._meta.vectors_table, self._meta.vectors_version)
        return self._vectors

    def _open_table(self, name: str, version: int) -> Any:
        lancedb = _lancedb()
        try:
            db = lancedb.connect(str(self.path / "lance"))
            tbl = db.open_table(name)
            tbl.checkout(version)
        except Exception as exc:  # lance raises many kinds (ValueError, OSError, RuntimeError)
            raise IndexIncompatibleError(
                f"The index at {self.path} is damaged or incomplete ({exc}) — "
                f"run `askrepo index --rebuild {shell_arg(self.repo)}`"
            ) from exc
        return tbl

    def check_readable(self) -> None:
        """Read the ``id`` column of both tables (every data file, a few ms at 20k chunks):
        IndexIncompatibleError with the fix if a file is missing or unreadable, which opening
        a table and reading its metadata do not notice (``askrepo status``)."""
        from .errors import IndexIncompatibleError

        for name, tbl in (("chunks", self.table), ("vectors", self.vectors)):
            try:
                tbl.search().select(["id"]).limit(1 << 30).to_arrow()
            except Exception as exc:  # lance raises many kinds (OSError, RuntimeError, …)
                detail = " ".join(str(exc).split())[:200]
                raise IndexIncompatibleError(
                    f"The index at {self.path} is damaged: its {name} table cannot be read "
                    f"({detail}) — run `askrepo index --rebuild {shell_arg(self.repo)}`"
                ) from exc

    def embedding_progress(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks): equal once phase 2 of indexing has finished."""
        return self._meta.embedded_count, self._meta.chunk_count

    def warm(self) -> None:
        """Import LanceDB and open the table now (e.g. in a thread while a model loads).

        Errors are left for the first real query to raise.
        """
        with contextlib.suppress(Exception):
            _ = self.table

    def refresh(self) -> bool:
        """Switch to a newer committed state if an index run committed one. True if it did."""
        stamp = _meta_stamp(self.path)
        if stamp is not None and stamp == self._stamp:
            return False  # meta.json untouched since we read it
        try:
            meta, files = _read_meta(self.path)
        except (FileNotFoundError, IndexIncompatibleError):
            return False
        _check_compatible(meta, self.path)
        self._stamp = stamp
        self._docs_only = None  # the file list below is the new one's
        old = (self._meta.table, self._meta.table_version, self._meta.vectors_version)
        if (meta.table, meta.table_version, meta.vectors_version) == old:
            self._meta, self._files = meta, files
            return False
        same_chunks = (meta.table, meta.table_version) == old[:2]
        self._meta, self._files, self._vectors = meta, files, None
        if same_chunks and self._matrix is not None:
            # phase 2 committed more vectors: the mirror keeps its chunks, reloads vectors only
            self._vectors_changed = True
        else:
            self._table, self._matrix = None, None
        return True

    def _retrying(self, run: Any) -> Any:
        """``run()``; if the version we hold was retired under us, move to the new one and
        run it again."""
        try:
            return run()
        except Exception:
            if not self.refresh():
                raise
            return run()

    def _run(self, make_query) -> list[tuple[str, Chunk, float]]:
        """Run a query; if the version we hold was retired under us, move to the new one."""
        return self._retrying(lambda: _rows_to_chunks(make_query(self.table).to_list()))

    # -- queries ----------------------------------------------------------------------------
    def dense(
        self,
        vector: Sequence[float],
        n: int,
        classes: Iterable[str] | None = None,
        pieces: bool = True,
    ) -> list[tuple[str, Chunk, float]]:
        """Nearest chunks by cosine similarity (score = 1 - distance), best first.

        A chunk scores the best of its own vector and its piece vectors (``pieces=False``:
        its own only). Only chunks that have a vector take part: while phase 2 of an index
        run is pending (``embedding_progress``), the rest are found by full-text and symbol
        search only.
        """
        if n <= 0 or self._meta.chunk_count == 0 or self._meta.embedded_count == 0:
            return []
        mirror = self._mirror_ready()
        if mirror is not None:
            return mirror.dense(vector, n, classes, pieces)
        vec = [float(x) for x in vector]
        flt = _classes_filter(classes)

        def run() -> list[tuple[str, Chunk, float]]:
            with_pieces = _has_pieces(self.vectors)
            where = flt
            if with_pieces and not pieces:
                where = _and(flt, "piece = 0")
            q = self.vectors.search(vec, vector_column_name="vector").metric("cosine")
            # Rows come best first, so a chunk's first row is its best; a chunk has at most
            # 1 + MAX_PIECES rows, so that many times n rows hold the n best chunks.
            q = q.select(["id"]).limit((1 + MAX_PIECES) * n if with_pieces and pieces else n)
            if where:
                q = q.where(where, prefilter=True)
            best: dict[str, float] = {}
            for r in q.to_list():
                best.setdefault(r["id"], 1.0 - float(r["_distance"]))
            return _chunks_by_id(self.table, list(best.items())[:n])

        return self._retrying(run)

    def in_files(
        self,
        vector: Sequence[float],
        paths: Sequence[str],
        classes: Iterable[str] | None = None,
        pieces: bool = True,
    ) -> list[tuple[str, Chunk, float]]:
        """Every embedded chunk of ``paths`` by cosine similarity to ``vector`` (the best of
        its own and its pieces' vectors, as ``dense``), best first. Same result from the
        in-memory mirror and from LanceDB."""
        paths = list(dict.fromkeys(paths))
        if not paths or self._meta.chunk_count == 0 or self._meta.embedded_count == 0:
            return []
        mirror = self._mirror_ready()
        if mirror is not None:
            return mirror.in_files(vector, paths, classes, pieces)
        import numpy as np

        from .mirror import unit_rows

        cond = _and(_sql_in("path", paths), _classes_filter(classes))

        def run() -> list[tuple[str, Chunk, float]]:
            rows = self.table.search().where(cond or "").select(_CHUNK_COLUMNS)
            found = _rows_to_chunks(rows.limit(100_000).to_list())
            if not found:
                return []
            vcond = _sql_in("id", (cid for cid, _, _ in found))
            if _has_pieces(self.vectors) and not pieces:
                vcond += " AND piece = 0"
            vrows = self.vectors.search().where(vcond).select(["id", "vector"])
            vrows = vrows.limit((1 + MAX_PIECES) * len(found)).to_list()  # every row of them
            if not vrows:
                return []
            mat = unit_rows(np.asarray([r["vector"] for r in vrows], dtype=np.float32))
            q = np.asarray(vector, dtype=np.float32)
            best: dict[str, float] = {}
            for r, sc in zip(vrows, mat @ (q / (np.linalg.norm(q) or 1.0)), strict=True):
                best[r["id"]] = max(best.get(r["id"], -np.inf), float(sc))
            keep = [(cid, c) for cid, c, _ in found if cid in best]
            if not keep:
                return []
            scores = [best[cid] for cid, _ in keep]
            order = sorted(
                range(len(keep)),
                key=lambda j: (-scores[j], keep[j][1].path, keep[j][1].start_line),
            )
            return [(keep[j][0], keep[j][1], float(scores[j])) for j in order]

        return self._retrying(run)

    def start_search(self) -> None:
        """Called by each search; from the second one on, queries use the in-memory mirror,
        loaded (or its vectors reloaded) here, before the search's lists may run in threads."""
        self._searches += 1
        self._mirror_ready()

    def _mirror_ready(self) -> Mirror | None:
        """The in-memory mirror, once a second search has started (see ``__init__``)."""
        if self._matrix is not None and self._vectors_changed:
            try:
                _load_vectors(self._matrix, self.vectors, self._meta)
                self._vectors_changed = False
            except Exception:
                self._matrix = None
        if self._matrix is None and self._searches >= 2:
            try:
                self._matrix = _load_mirror(self.table, self.vectors, self._meta)
                self._vectors_changed = False
            except Exception:
                self._matrix = None
        return self._matrix

    def fts(
        self,
        query: str,
        n: int,
        classes: Iterable[str] | None = None,
        name_weight: float | None = None,
    ) -> list[tuple[str, Chunk, float]]:
        """Full-text matches, best first: BM25F over a chunk's text and name from askrepo's
        own index (``askrepo.lexical``; ``name_weight`` overrides its NAME_WEIGHT), or, for an
        index built before it, LanceDB's BM25 on the code-aware column."""
        if n <= 0 or not query.strip() or self._meta.chunk_count == 0:
            return []
        lex = self._lexical_index()
        if lex is not None:
            from . import lexical

            weight = lexical.NAME_WEIGHT if name_weight is None else name_weight
            found = lex.search(query, n, classes, name_weight=weight)
            return self._by_ids(found)
        flt = _classes_filter(classes)
        mirror = self._mirror_ready()
        cols = ["id", "_score"] if mirror is not None else _CHUNK_COLUMNS + ["_score"]

        def make(tbl):
            q = tbl.search(query, query_type="fts", fts_columns="fts").select(cols).limit(n)
            return q.where(flt, prefilter=True) if flt else q

        if mirror is None:
            return self._run(make)
        return self._by_ids([(r["id"], float(r["_score"])) for r in make(self.table).to_list()])

    def feedback_query(self, texts: Sequence[str], query: str, limit: int) -> str:
        """A second full-text query made of the words that best describe ``texts`` (the top
        chunks of a first search), not those of ``query`` (``lexical.feedback_terms``); "" for
        an index without ``askrepo.lexical``'s files."""
        lex = self._lexical_index()
        if lex is None or limit <= 0:
            return ""
        from .lexical import feedback_terms

        return " ".join(feedback_terms(texts, query, lex.doc_freq, len(lex), limit))

    @property
    def full_text(self) -> str:
        """Which full-text engine answers: ``"askrepo"`` (``askrepo.lexical``'s BM25F) or
        ``"lancedb"`` (an index built before it)."""
        return "askrepo" if self._lexical_index() is not None else "lancedb"

    def _lexical_index(self) -> Any:
        """The committed state's full-text index, loaded once (None for an index built before
        it, where LanceDB's full-text search answers). Lost or damaged files are rebuilt in
        memory from the table."""
        from .lexical import LexicalIndex

        for _ in range(2):
            name = self._meta.lexical
            if not name:
                return None
            if self._lexical is not None and self._lexical[0] == name:
                return self._lexical[1]
            try:
                self._lexical = (name, LexicalIndex.load(self.path / name))
                return self._lexical[1]
            except (OSError, ValueError):
                self._lexical = (name, None)
                # an index run may have committed a newer state and retired this directory:
                # read meta.json again once before rebuilding it
                self.refresh()
                if self._meta.lexical == name:
                    break
        # the committed index's full-text files are lost or damaged: rebuild them in memory
        # from the table's full-text column (the next index run writes them again)
        name = self._meta.lexical
        self._lexical = (name, self._retrying(lambda: build_lexical(self.table)))
        return self._lexical[1]

    def _by_ids(self, found: Sequence[tuple[str, float]]) -> list[tuple[str, Chunk, float]]:
        """(id, chunk, score) for (id, score) pairs, in their order, from the mirror or one
        LanceDB query; ids the committed table lacks are left out."""
        mirror = self._mirror_ready()
        if mirror is not None:
            at = [(cid, mirror.position.get(cid), sc) for cid, sc in found]
            return [(cid, mirror.chunks[i], sc) for cid, i, sc in at if i is not None]
        return self._retrying(lambda: _chunks_by_id(self.table, found))

    def where(self, condition: str, limit: int = 50) -> list[tuple[str, Chunk, float]]:
        return self._run(
            lambda tbl: tbl.search().where(condition).select(_CHUNK_COLUMNS).limit(limit)
        )

    def file_chunks(self, paths: Sequence[str], limit: int = 50) -> list[tuple[str, Chunk, float]]:
        """The chunks of ``paths`` (any file class, embedded or not) in file order: the paths
        as given, then by start line. Same result from the in-memory mirror and from LanceDB."""
        paths = list(dict.fromkeys(paths))
        if not paths or self._meta.chunk_count == 0:
            return []
        mirror = self._mirror_ready()
        if mirror is not None:
            rows = [
                (mirror.ids[i], mirror.chunks[i], 0.0)
                for p in paths
                for i in mirror.by_path.get(p, [])
            ]
        else:
            rows = self.where(_sql_in("path", paths), limit=100_000)
        rank = {p: i for i, p in enumerate(paths)}
        rows.sort(key=lambda r: (rank.get(r[1].path, len(rank)), r[1].start_line))
        return rows[:limit]

    def generated_paths(self, paths: Iterable[str]) -> set[str]:
        """The ``paths`` whose files say in their first lines that they were generated
        (``ingest.marks_generated``), read from each file's first chunk as indexed (so a
        search reads no file). The answer for a chunk is kept: its id names its content."""
        from .ingest import GENERATED_HEAD_LINES, marks_generated

        paths = list(dict.fromkeys(paths))
        if not paths or self._meta.chunk_count == 0:
            return set()
        mirror = self._mirror_ready()
        if mirror is not None:
            rows = []
            for p in paths:
                idx = mirror.by_path.get(p)
                if idx:
                    i = min(idx, key=lambda j: mirror.chunks[j].start_line)
                    rows.append((mirror.ids[i], mirror.chunks[i]))
        else:
            cond = _and(_sql_in("path", paths), f"start_line <= {GENERATED_HEAD_LINES}") or ""
            firsts: dict[str, tuple[str, Chunk]] = {}
            for cid, c, _ in self.where(cond, limit=len(paths) * GENERATED_HEAD_LINES):
                if c.path not in firsts or c.start_line < firsts[c.path][1].start_line:
                    firsts[c.path] = (cid, c)
            rows = list(firsts.values())
        out = set()
        for cid, c in rows:
            found = self._generated.get(cid)
            if found is None:
                head = "\n" * (c.start_line - 1) + c.text
                found = c.start_line <= GENERATED_HEAD_LINES and marks_generated(head)
                if len(self._generated) > 100_000:
                    self._generated.clear()
                self._generated[cid] = found
            if found:
                out.add(c.path)
        return out

    def by_symbol(
        self, names: Iterable[str], classes: Iterable[str] | None = None, limit: int = 50
    ) -> list[tuple[str, Chunk, float]]:
        """Definitions whose qualified symbol equals a name or ends with ``.name``."""
        names = list(dict.fromkeys(n for n in names if n))
        mirror = self._mirror_ready()
        if mirror is not None:
            return mirror.by_symbol(names, classes, limit)
        conds = []
        for name in names:
            conds.append(f"symbol = {_sql_str(name)}")
            conds.append(_like("symbol", "." + name, before=True))
        if not conds or self._meta.chunk_count == 0:
            return []
        return self.where(_and(" OR ".join(conds), _classes_filter(classes)) or "", limit)

    def callers(
        self, name: str, classes: Iterable[str] | None = None, limit: int = 5
    ) -> list[tuple[str, Chunk, float]]:
        """Chunks whose ``calls`` include ``name`` (the last part of a qualified symbol)."""
        if not name or self._meta.chunk_count == 0:
            return []
        mirror = self._mirror_ready()
        if mirror is not None:
            return mirror.callers(name, classes, limit)
        cond = _and(f"array_has(calls, {_sql_str(name)})", _classes_filter(classes))
        return self.where(cond or "", limit)

    def declarations(self, names: Iterable[str]) -> dict[str, list[int]]:
        """Per name, the parameter counts of the methods of that name that class chunks (a
        trait, an interface, a protocol, an abstract class) declare without a body
        (``askrepo.declarations``), one per declaration; one scan for all the names. Since
        chunker 6 a Rust trait's, a Go / Java / TypeScript interface's and an abstract method's
        declaration is a method chunk of its own (``declarations.is_bodyless``): those count too."""
        from .declarations import arity, declared_arities, is_bodyless

        names = list(dict.fromkeys(n for n in names if n))
        if not names or self._meta.chunk_count == 0:
            return {}
        mirror = self._mirror_ready()
        if mirror is not None:
            types = [c for c in mirror.types if any(n in c.text for n in names)]
        else:
            likes = " OR ".join(_like("text", n, before=True, after=True) for n in names)
            types = [c for _, c, _ in self.where(f"kind = 'class' AND ({likes})", 500)]
        out = {n: [a for c in types for a in declared_arities(c.text, n)] for n in names}
        for _, c, _ in self.by_symbol(names, limit=500):
            last = last_part(c.symbol)
            if last in out and is_bodyless(c) and (a := arity(c.text, last)) is not None:
                out[last].append(a)
        return out

    def find_symbol(self, name: str) -> list[Chunk]:
        """Exact qualified-symbol matches, else ``.name`` suffix matches, else — for a
        qualified name no symbol spells out (``rich.console.Console``, ``hyper::server::Builder``)
        — the definitions of its last part whose location shows most of its qualifiers
        (``ranking.named_definitions``); definitions only (never a line window or a markdown
        heading: ``datatypes.is_definition``)."""
        from .datatypes import is_definition
        from .query import qualified_name
        from .ranking import named_definitions, project_words

        name = qualified_name(name)
        defs = [c for _, c, _ in self.by_symbol([name], limit=200) if is_definition(c.kind)]
        if not defs and "." in name:  # the qualifiers may be a module, crate or package path
            last = name.rsplit(".", 1)[1]
            defs = [c for _, c, _ in self.by_symbol([last], limit=200) if is_definition(c.kind)]
        rows, _ = named_definitions(defs, [name], project_words(self.repo.name))
        exact = [c for c in rows if c.symbol == name]
        return merge_parts(sorted(exact or rows, key=lambda c: (c.path, c.start_line)))

    def has_term(self, term: str) -> bool:
        """Whether ``term`` occurs as a whole word (or the same words in another identifier
        style) anywhere in the indexed text: an exact scan, see ``askrepo.presence``."""
        from .presence import has_term

        return has_term(self, term)

    def has_fragment(self, fragment: str) -> bool:
        """Whether any indexed file contains ``fragment`` inside any word, in any case (an
        exact scan: ``askrepo.presence.has_fragment``)."""
        from .presence import has_fragment

        return has_fragment(self, fragment)

    def absent_fragments(self, fragments: Sequence[str]) -> list[str]:
        """The ``fragments`` no indexed file contains (``has_fragment`` of each, one scan)."""
        from .presence import absent_fragments

        return absent_fragments(self, fragments)


def __getattr__(name: str) -> Any:
    """Old import paths keep working: ``from askrepo.store import IndexWriter``."""
    if name in ("IndexWriter", "_Lock"):
        from . import store_writer

        return getattr(store_writer, name)
    if name == "worktree_changed":
        from . import freshness

        return freshness.worktree_changed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
