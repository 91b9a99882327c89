"""Did the files change since the index was built? A check that costs O(changes), not O(repo).

* Inside a git work tree (the index recorded a commit), git's own view names the candidates:
  ``git status --porcelain -z`` (modified, added, deleted and untracked-not-ignored files, via
  git's stat cache), ``git diff`` between the indexed commit and ``HEAD`` when ``HEAD`` moved
  (a branch switch, a pull, a reset), and the files that already differed from ``HEAD`` when
  the index was built (``IndexMeta.dirty``: a ``git stash`` or ``checkout -- file`` brings them
  back to ``HEAD``'s content, which git then no longer lists).
* Outside git, the tree is listed with the walker's ignore rules and each file's
  (size, mtime_ns, inode) is compared with the one recorded when it was indexed.

Either way only the candidates are read: through the walker's rules (``.askrepoignore``,
vendored directories, secrets, binary, size), hashed, and compared with the indexed hash.
``stale`` is true exactly when the set of indexed files or the content of one of them would
change if the repository were re-indexed now.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import config
from .datatypes import SourceFile

MAX_LISTED = 20  # changed paths shown in JSON


@dataclass
class Freshness:
    """The result of one check. ``to_dict`` gives the fields every JSON result carries."""

    indexed_commit: str | None
    head_commit: str | None
    stale: bool
    changed_files: int
    changed: list[str] = field(default_factory=list)  # every changed path, sorted
    method: str = "stat"  # git | stat | unknown
    checked_ms: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "indexed_commit": self.indexed_commit,
            "head_commit": self.head_commit,
            "stale": self.stale,
            "changed_files": self.changed_files,
        }
        if self.changed:
            d["changed_paths"] = self.changed[:MAX_LISTED]
        if self.error:
            d["freshness_error"] = self.error
        return d


# ---------------------------------------------------------------------------------------------
# Pure pieces


def parse_porcelain(out: bytes) -> list[str]:
    """Paths from ``git status --porcelain=v1 -z --no-renames`` output (``XY path\\0``)."""
    paths = []
    for entry in out.split(b"\0"):
        if len(entry) > 3:
            paths.append(os.fsdecode(entry[3:]))
    return paths


# fields before the path in `git status --porcelain=v2` entries (see git-status(1))
_V2_FIELDS = {b"1": 8, b"2": 9, b"u": 10}


def parse_porcelain_v2(out: bytes) -> tuple[str | None, list[str]]:
    """(HEAD commit or None, paths) from ``git status --porcelain=v2 -z --branch
    --no-renames`` output: one git call gives both."""
    head: str | None = None
    paths = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        kind = entry[:1]
        if kind == b"#":
            if entry.startswith(b"# branch.oid "):
                oid = entry[len(b"# branch.oid ") :].decode("ascii", "replace").strip()
                head = oid if oid != "(initial)" else None
        elif kind in (b"?", b"!"):
            paths.append(os.fsdecode(entry[2:]))
        elif kind in _V2_FIELDS:
            parts = entry.split(b" ", _V2_FIELDS[kind])
            if len(parts) > _V2_FIELDS[kind]:
                paths.append(os.fsdecode(parts[-1]))
    return head, paths


def same_stat(old: SourceFile, st: os.stat_result) -> bool:
    """Whether a file's stat matches what was recorded when it was indexed."""
    return bool(old.mtime_ns) and (old.size, old.mtime_ns, old.inode) == (
        st.st_size,
        st.st_mtime_ns,
        st.st_ino,
    )


def compare(
    candidates: Iterable[str],
    indexed: Mapping[str, SourceFile],
    now: Mapping[str, SourceFile],
) -> list[str]:
    """Candidates whose indexed state differs from ``now`` (what the walker would index now)."""
    changed = []
    for rel in sorted(set(candidates)):
        old, cur = indexed.get(rel), now.get(rel)
        if (old is None) != (cur is None) or (old and cur and old.sha != cur.sha):
            changed.append(rel)
    return changed


# ---------------------------------------------------------------------------------------------
# The check


def check(repo: Path, meta: Any, files: Mapping[str, SourceFile]) -> Freshness:
    """Compare the index (``meta``, its file manifest) with the files on disk now."""
    t0 = time.perf_counter()
    repo = Path(repo)
    try:
        if meta.commit:
            res = _check_git(repo, meta, files)
            if res is not None:
                res.checked_ms = (time.perf_counter() - t0) * 1000
                return res
        res = _check_stat(repo, meta, files)
    except Exception as exc:  # a check must never break a search: say it is unknown
        res = Freshness(meta.commit, None, True, 0, method="unknown", error=str(exc)[:200])
    res.checked_ms = (time.perf_counter() - t0) * 1000
    return res


def check_store(store: Any) -> Freshness:
    """``check`` for an open ``IndexStore``."""
    return check(store.repo, store.meta(), store.files())


def worktree_changed(store: Any) -> bool:
    """Whether files were added, changed or removed since the index was built."""
    return check_store(store).stale


_PREFIX: dict[str, str | None] = {}  # repo -> its path inside the work tree (does not change)


def _prefix(repo: Path) -> str | None:
    key = str(repo)
    if key not in _PREFIX:
        from .ingest import _git

        out = _git(repo, "rev-parse", "--show-prefix")
        _PREFIX[key] = None if out is None else os.fsdecode(out).strip()
    return _PREFIX[key]


def git_state(repo: Path) -> tuple[str | None, str | None]:
    """(HEAD commit or None, the repo's path prefix inside its work tree), or (None, None)."""
    from .ingest import _git

    out = _git(repo, "rev-parse", "--show-prefix", "--verify", "-q", "HEAD")
    if out is None:
        prefix = _git(repo, "rev-parse", "--show-prefix")
        if prefix is None:
            return None, None
        return None, os.fsdecode(prefix).strip()
    lines = os.fsdecode(out).split("\n")
    return (lines[1].strip() or None) if len(lines) > 1 else None, lines[0].strip()


def dirty_paths(repo: Path) -> list[str] | None:
    """Repo-relative paths git lists as differing from HEAD (incl. untracked), or None."""

    _, prefix = git_state(repo)
    if prefix is None:
        return None
    return _status(repo, prefix)


def _status(repo: Path, prefix: str) -> list[str] | None:
    got = _status_v2(repo)
    return None if got is None else _strip(got[1], prefix)


def _status_v2(repo: Path) -> tuple[str | None, list[str]] | None:
    """One ``git status`` call: (HEAD, paths relative to the work tree top), or None."""
    from .ingest import _git

    out = _git(
        repo,
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--no-renames",
        "--untracked-files=all",
        "--ignore-submodules=all",
        "--",
        ".",
    )
    return None if out is None else parse_porcelain_v2(out)


def _strip(paths: Iterable[str], prefix: str) -> list[str]:
    return [p[len(prefix) :] for p in paths if p.startswith(prefix) and len(p) > len(prefix)]


def _check_git(repo: Path, meta: Any, files: Mapping[str, SourceFile]) -> Freshness | None:
    from .ingest import _git, inspect_paths

    prefix = _prefix(repo)
    got = _status_v2(repo) if prefix is not None else None
    if got is None or got[0] is None:
        return None  # no longer a git work tree (or no commit): use the stat check
    head, listed = got
    candidates = set(_strip(listed, prefix)) | set(meta.dirty)
    if head != meta.commit:
        out = _git(repo, "diff", "--name-only", "-z", "--no-renames", meta.commit, head, "--", ".")
        if out is None:  # the indexed commit is gone (gc'd after a rebase): compare everything
            return None
        names = [os.fsdecode(p) for p in out.split(b"\0") if p]
        candidates |= set(_strip(names, prefix))
    # a file whose stat still matches the index needs no hashing
    todo = []
    for rel in candidates:
        old = files.get(rel)
        try:
            st = os.lstat(repo / rel)
        except OSError:
            todo.append(rel)
            continue
        if old is None or not same_stat(old, st):
            todo.append(rel)
    now = {f.path: f for f in inspect_paths(repo, todo, with_gitignore=False).files}
    changed = compare(todo, files, now)
    return Freshness(meta.commit, head, bool(changed), len(changed), changed, method="git")


def _check_stat(repo: Path, meta: Any, files: Mapping[str, SourceFile]) -> Freshness:
    from .ingest import inspect_paths, list_candidates

    head, _ = git_state(repo) if meta.commit else (None, None)
    listed = list_candidates(repo)
    todo = []
    top = str(repo)
    for rel in listed:
        old = files.get(rel)
        try:
            st = os.lstat(os.path.join(top, rel))
        except OSError:
            continue
        if old is None or not same_stat(old, st):
            todo.append(rel)
    gone = set(files) - set(listed)
    now = {
        f.path: f
        for f in inspect_paths(
            repo, todo, with_gitignore=True, max_file_bytes=config.max_file_bytes()
        ).files
    }
    changed = compare(list(todo) + sorted(gone), files, now)
    return Freshness(meta.commit, head, bool(changed), len(changed), changed, method="stat")
