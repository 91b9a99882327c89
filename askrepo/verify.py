"""Does a citation still hold? ``path:start-end[@commit]`` checked against the working tree.

The cited lines (the *reference*) come from ``git show commit:path`` when a commit is given (or
defaulted by the caller), or only as a hash (``askrepo.lines.span_hash``) from ``--hash``. The
working-tree file is then compared:

- ``valid``: the same lines are still at the cited line numbers;
- ``moved``: they are elsewhere — other line numbers, or another file (a rename since the
  commit, or a file changed or added since); every place is given;
- ``changed``: the file is there but the lines are not (edited);
- ``gone``: the file no longer exists and the lines were found nowhere.

Lines are compared as ``span_hash`` compares them: trailing whitespace and ``\\r`` ignored.
Nothing here prints file content: results carry paths, line numbers and hashes only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .datatypes import _JSON
from .errors import UsageError
from .lines import span_hash, split_lines

VALID, MOVED, CHANGED, GONE = "valid", "moved", "changed", "gone"
MAX_OTHER_FILES = 200  # files changed/added since the commit searched for moved lines
MAX_FILE_BYTES = 2 * 1024 * 1024  # other files larger than this are not searched
MAX_PLACES = 20

_CITATION = re.compile(
    r"^(?P<path>.+?):(?P<start>\d+)(?:\s*[-–]\s*(?P<end>\d+))?(?:@(?P<commit>[^\s@:]+))?$"
)
_COMMITISH = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._/~^{}-]*$")


@dataclass
class Citation:
    """A parsed ``path:start-end[@commit]``."""

    path: str
    start_line: int
    end_line: int
    commit: str | None = None

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


def parse_citation(text: str) -> Citation:
    """``a/b.py:10-20@abc123`` → Citation; ``a.py:7`` is line 7 alone.

    >>> parse_citation("src/app.py:10-12@HEAD~1")
    Citation(path='src/app.py', start_line=10, end_line=12, commit='HEAD~1')
    >>> parse_citation("a:b.py:3")
    Citation(path='a:b.py', start_line=3, end_line=3, commit=None)
    """
    m = _CITATION.match((text or "").strip())
    if not m:
        raise UsageError(
            f"{text!r} is not a citation — write it as path:start-end, optionally @commit "
            "(e.g. src/app.py:10-24@3f2c1ab)"
        )
    start = int(m.group("start"))
    end = int(m.group("end") or start)
    if start < 1 or end < start:
        raise UsageError(f"{text!r}: the line range must be 1-based with start <= end (e.g. 10-24)")
    commit = m.group("commit")
    if commit is not None and not _COMMITISH.match(commit):
        raise UsageError(f"{commit!r} is not a commit — pass a sha, tag or branch after @")
    return Citation(m.group("path"), start, end, commit)


@dataclass
class Place(_JSON):
    path: str
    start_line: int
    end_line: int


@dataclass
class Verification(_JSON):
    """The verdict for one citation (JSON via ``to_dict``)."""

    citation: str  # path:start-end[@commit] as checked
    path: str
    start_line: int
    end_line: int
    commit: str | None  # full sha the reference lines were read from; None: hash only
    status: str  # valid | moved | changed | gone
    expected_hash: str  # span_hash of the cited lines
    current_hash: str | None  # span_hash of the same line numbers now (None: no such lines)
    moved_to: list[Place] = field(default_factory=list)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["moved_to"] = [p.to_dict() for p in self.moved_to]
        return d


# ------------------------------------------------------------------------------------------
# Pure matching


def _norm(lines: list[str]) -> list[str]:
    return [ln.rstrip() for ln in lines]


def find_runs(lines: list[str], block: list[str]) -> list[int]:
    """1-based start lines of every occurrence of ``block`` in ``lines`` (trailing whitespace
    ignored).

    >>> find_runs(["a", "b ", "c", "a", "b"], ["a", "b"])
    [1, 4]
    """
    n = len(block)
    if n == 0 or n > len(lines):
        return []
    norm, want = _norm(lines), _norm(block)
    first = want[0]
    return [i + 1 for i in range(len(norm) - n + 1) if norm[i] == first and norm[i : i + n] == want]


def find_hash_runs(lines: list[str], digest: str, n: int) -> list[int]:
    """1-based start lines of every run of ``n`` lines whose ``span_hash`` is ``digest``."""
    if n < 1 or n > len(lines):
        return []
    norm = _norm(lines)
    return [i + 1 for i in range(len(norm) - n + 1) if span_hash(norm[i : i + n]) == digest]


def judge(
    cite: Citation,
    current: list[str] | None,
    *,
    reference: list[str] | None,
    digest: str,
) -> tuple[str, list[int], str | None]:
    """The verdict for one file: ``(status, start lines found elsewhere in it, current_hash)``.

    ``current``: the working-tree lines (None: the file is gone); ``reference``: the cited lines
    when known (else only ``digest`` is), ``digest``: their span_hash.
    """
    n = cite.end_line - cite.start_line + 1
    if current is None:
        return GONE, [], None
    now = current[cite.start_line - 1 : cite.end_line] if cite.end_line <= len(current) else None
    now_hash = span_hash(now) if now is not None else None
    if now_hash == digest:
        return VALID, [], now_hash
    runs = find_runs(current, reference) if reference is not None else []
    if reference is None:
        runs = find_hash_runs(current, digest, n)
    runs = [r for r in runs if r != cite.start_line]
    return (MOVED if runs else CHANGED), runs, now_hash


# ------------------------------------------------------------------------------------------
# Git and files


def _git_bytes(root: Path, *args: str) -> bytes | None:
    from .ingest import _git

    return _git(root, *args)


def resolve_commit(root: Path, commit: str) -> str:
    """The full sha of ``commit`` in the repo at ``root``; UsageError when there is none."""
    out = _git_bytes(root, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}")
    sha = out.decode("ascii", "replace").strip() if out else ""
    if not re.fullmatch(r"[0-9a-f]{40,64}", sha):
        if _git_bytes(root, "rev-parse", "--git-dir") is None:
            raise UsageError(
                f"{root} is not a git repository, so @{commit} cannot be read — "
                "pass the citation's hash instead (--hash; `hash` over MCP)"
            )
        raise UsageError(
            f"Commit {commit!r} is not in the repository at {root} — fetch it, or pass the "
            "citation's hash instead (--hash; `hash` over MCP)"
        )
    return sha


def lines_at_commit(root: Path, sha: str, path: str) -> list[str]:
    from .ingest import decode

    blob = _git_bytes(root, "show", f"{sha}:{path}")
    if blob is None:
        raise UsageError(
            f"{path} is not in commit {sha[:12]} — check the citation's path and commit"
        )
    return split_lines(decode(blob))


def _read_lines(full: Path, max_bytes: int | None = None) -> list[str] | None:
    """The file's lines, or None when it is not a readable regular file (or over max_bytes)."""
    from .ingest import decode

    try:
        if not full.is_file() or (max_bytes is not None and full.stat().st_size > max_bytes):
            return None
        return split_lines(decode(full.read_bytes()))
    except OSError:
        return None


def _rel(root: Path, path: str) -> str:
    """A repo-relative path (an absolute one inside the repo is accepted)."""
    if os.path.isabs(path):
        try:
            return Path(os.path.realpath(path)).relative_to(os.path.realpath(root)).as_posix()
        except ValueError:
            raise UsageError(
                f"{path!r} is outside the repository — cite a path inside the repo root, "
                "relative to it (e.g. src/app.py:10-24)"
            ) from None
    return path


def _names(out: bytes | None) -> list[str]:
    if not out:
        return []
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def changed_files(root: Path, sha: str, path: str) -> tuple[str | None, list[str]]:
    """``(rename target of path or None, other files changed or added since sha)``."""
    renamed = None
    out = _git_bytes(root, "diff", "--name-status", "-M", "-z", sha, "--")
    fields = _names(out)
    others: list[str] = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if status.startswith(("R", "C")) and i + 2 < len(fields):
            src, dst = fields[i + 1], fields[i + 2]
            if src == path and status.startswith("R"):
                renamed = dst
            others.append(dst)
            i += 3
        else:
            if i + 1 < len(fields) and not status.startswith("D"):
                others.append(fields[i + 1])
            i += 2
    others += _names(_git_bytes(root, "ls-files", "--others", "--exclude-standard", "-z"))
    return renamed, [p for p in dict.fromkeys(others) if p != path]


# ------------------------------------------------------------------------------------------
# The check


def verify_citation(
    root: Path,
    citation: str | Citation,
    *,
    expected_hash: str | None = None,
    default_commit: str | None = None,
    allowed: set[str] | None = None,
) -> Verification:
    """Check one citation against the working tree at ``root``.

    The reference is the citation's ``@commit``, else ``expected_hash`` alone, else
    ``default_commit`` (the caller's choice: the indexed commit, or HEAD); with a commit and a
    hash both, the hash must match the commit's lines. ``allowed``: when given, only these
    repo-relative paths may be checked (the MCP server passes the indexed files).
    """
    from .safepath import normalize, resolve_repo_path

    root = Path(root)
    cite = parse_citation(citation) if isinstance(citation, str) else citation
    cite.path = normalize(_rel(root, cite.path))
    if allowed is not None and cite.path not in allowed:
        raise UsageError(f"{cite.path!r} is not an indexed file — pass a path from a citation")
    if expected_hash is not None:
        expected_hash = expected_hash.strip().lower()
        if not re.fullmatch(r"[0-9a-f]{16}", expected_hash):
            raise UsageError(
                f"The hash {expected_hash!r} is not a citation hash (16 hex digits, as "
                "`ask --json` prints them)"
            )
    commit = cite.commit or (None if expected_hash else default_commit)
    if commit is None and expected_hash is None:
        from .ingest import git_commit

        commit = git_commit(root)
        if commit is None:
            raise UsageError(
                f"{root} has no git commit to compare with — add @commit to the citation or "
                "pass the citation's hash (--hash; `hash` over MCP)"
            )

    reference: list[str] | None = None
    sha: str | None = None
    if commit is not None:
        sha = resolve_commit(root, commit)
        old = lines_at_commit(root, sha, cite.path)
        if cite.end_line > len(old):
            raise UsageError(
                f"{cite.path} has {len(old)} lines at commit {sha[:12]}, so lines "
                f"{cite.start_line}-{cite.end_line} were never there — check the citation"
            )
        reference = old[cite.start_line - 1 : cite.end_line]
        digest = span_hash(reference)
        if expected_hash is not None and expected_hash != digest:
            raise UsageError(
                f"The hash {expected_hash} does not match {cite.location} at commit {sha[:12]} "
                f"(their hash is {digest}) — check the citation"
            )
    else:
        digest = expected_hash or ""

    full = resolve_repo_path(root, cite.path)
    current = _read_lines(full)
    status, runs, now_hash = judge(cite, current, reference=reference, digest=digest)
    n = cite.end_line - cite.start_line + 1
    places = [Place(cite.path, r, r + n - 1) for r in runs]

    if status in (CHANGED, GONE) and sha is not None and reference is not None:
        renamed, others = changed_files(root, sha, cite.path)
        first = [renamed] if renamed else []
        for other in dict.fromkeys(first + others[:MAX_OTHER_FILES]):
            try:
                other_full = resolve_repo_path(root, other)
            except UsageError:
                continue
            if allowed is not None and other not in allowed and other != renamed:
                continue
            lines = _read_lines(other_full, MAX_FILE_BYTES)
            for r in find_runs(lines or [], reference):
                places.append(Place(other, r, r + n - 1))
            if len(places) >= MAX_PLACES:
                break
        if places:
            status = MOVED
    places = places[:MAX_PLACES]

    label = cite.location + (f"@{sha[:12]}" if sha else "")
    return Verification(
        citation=label,
        path=cite.path,
        start_line=cite.start_line,
        end_line=cite.end_line,
        commit=sha,
        status=status,
        expected_hash=digest,
        current_hash=now_hash,
        moved_to=places,
        message=_message(
            status,
            cite,
            sha,
            places,
            gone_file=current is None,
            lines_now=len(current) if current is not None else None,
        ),
    )


def _message(
    status: str,
    cite: Citation,
    sha: str | None,
    places: list[Place],
    *,
    gone_file: bool,
    lines_now: int | None = None,
) -> str:
    since = f" since {sha[:12]}" if sha else ""
    if status == VALID:
        return f"{cite.location} still holds: the cited lines are unchanged{since}"
    if status == MOVED:
        where = ", ".join(f"{p.path}:{p.start_line}-{p.end_line}" for p in places[:5])
        more = f" (and {len(places) - 5} more)" if len(places) > 5 else ""
        return f"The cited lines moved{since}: now at {where}{more}"
    if status == GONE:
        return f"{cite.path} no longer exists and the cited lines were found nowhere else"
    if lines_now is not None and cite.end_line > lines_now:  # the file got shorter
        return (
            f"{cite.location} changed{since}: {cite.path} now has {lines_now} "
            f"line{'s' * (lines_now != 1)}, fewer "
            "than the citation's last line, and the cited lines are nowhere in it"
        )
    return f"{cite.location} changed{since}: the cited lines are no longer in {cite.path}"
