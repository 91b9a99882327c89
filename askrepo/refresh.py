"""Keep an index fresh: status, re-index-the-few-changed-files, and the watch loop's step.

The CLI (``search|ask --refresh``, ``ASKREPO_AUTO_REFRESH=1``, ``askrepo status``,
``askrepo watch``) and the MCP server are thin shells over these functions.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import AskrepoError, UsageError, shell_arg
from .freshness import Freshness, check_store

DEFAULT_MAX_FILES = 20


def max_files() -> int:
    """ASKREPO_REFRESH_MAX_FILES: refresh automatically up to this many changed files."""
    raw = (os.environ.get("ASKREPO_REFRESH_MAX_FILES") or "").strip()
    if not raw:
        return DEFAULT_MAX_FILES
    try:
        value = int(raw)
    except ValueError:
        raise UsageError(
            f"ASKREPO_REFRESH_MAX_FILES={raw!r} is not a number — set it to e.g. 20"
        ) from None
    if value < 0:
        raise UsageError(f"ASKREPO_REFRESH_MAX_FILES must be 0 or more (got {value})")
    return value


@dataclass
class IndexStatus:
    """What ``askrepo status`` and MCP ``index_status`` report."""

    repo: str
    index_path: str
    model: str
    model_id: str
    indexed_at: str
    file_count: int
    chunk_count: int
    embedded: int
    freshness: Freshness
    skipped: dict[str, int] = field(default_factory=dict)
    full_text: str = "askrepo"  # "lancedb": built before askrepo's own; `askrepo index` adds it

    @property
    def fully_embedded(self) -> bool:
        return self.embedded >= self.chunk_count

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("freshness")
        d["embedded_fraction"] = (
            round(self.embedded / self.chunk_count, 4) if self.chunk_count else 1
        )
        d.update(self.freshness.to_dict())
        d["freshness_method"] = self.freshness.method
        return d


def status(store: Any) -> IndexStatus:
    store.refresh()
    if hasattr(store, "check_readable"):
        store.check_readable()  # damaged tables: say so and how to fix, not "embedded n / n"
    meta = store.meta()
    done, total = store.embedding_progress()
    return IndexStatus(
        repo=str(store.repo),
        index_path=str(store.path),
        model=meta.model_name,
        model_id=meta.model_id,
        indexed_at=meta.indexed_at,
        file_count=meta.file_count,
        chunk_count=total,
        embedded=done,
        freshness=check_store(store),
        skipped=dict(meta.skipped),
        full_text=getattr(store, "full_text", "askrepo"),
    )


@dataclass
class RefreshResult:
    refreshed: bool  # an index run happened and committed
    changed_files: int  # changed before the refresh
    freshness: Freshness  # after the refresh (or the unchanged check when none happened)
    note: str | None = None  # why nothing was refreshed, as a user-facing sentence
    chunks_embedded: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = {
            "refreshed": self.refreshed,
            "refreshed_files": self.changed_files if self.refreshed else 0,
        }
        if self.note:
            d["refresh_note"] = self.note
        return d


def refresh_changed(
    store: Any,
    *,
    limit: int | None = None,
    embedder: Any = None,
    before: Freshness | None = None,
) -> RefreshResult:
    """Re-index the files that changed since ``store``'s index was built, if there are at most
    ``limit`` (default ``max_files()``); else only say how many changed and how to refresh.

    ``embedder``: reuse an already loaded model of the index (e.g. a Retriever's) so a
    refresh before a search loads nothing twice. Only this index's own settings are used
    (model, enrichment). Never raises for a busy or failing refresh: it says so in ``note``.
    """
    from .errors import IndexLockedError
    from .indexer import index_repo

    limit = max_files() if limit is None else limit
    fresh = before or check_store(store)
    if not fresh.stale:
        return RefreshResult(False, 0, fresh)
    n = fresh.changed_files
    hint = f"run `askrepo index {shell_arg(store.repo)}` to refresh"
    if fresh.method == "unknown":
        return RefreshResult(False, n, fresh, f"could not check for changes — {hint}")
    if n > limit:
        return RefreshResult(
            False,
            n,
            fresh,
            f"{n} files changed since indexing (more than the refresh limit of {limit}, "
            f"ASKREPO_REFRESH_MAX_FILES) — {hint}",
        )
    meta = store.meta()
    if getattr(meta, "contextual", False):
        return RefreshResult(
            False,
            n,
            fresh,
            f"{n} files changed; this index uses --contextual — {hint} --contextual",
        )
    if embedder is not None and getattr(embedder, "model_id", None) != meta.model_id:
        embedder = None
    try:
        summary = index_repo(
            Path(store.repo),
            model=meta.model_name,
            embedder=embedder,
            paths=fresh.changed,
            enrich=meta.enrich,
        )
    except IndexLockedError:
        return RefreshResult(False, n, fresh, "another index run is in progress; searched as is")
    except AskrepoError as exc:
        return RefreshResult(False, n, fresh, f"refresh failed ({exc})")
    except OSError as exc:  # e.g. a shared index in a read-only ASKREPO_HOME: search it as is
        where = f": {exc.filename}" if exc.filename else ""
        return RefreshResult(
            False, n, fresh, f"refresh failed ({exc.strerror or exc}{where}); searched as is"
        )
    store.refresh()
    after = check_store(store)
    return RefreshResult(True, n, after, chunks_embedded=summary.chunks_embedded)
