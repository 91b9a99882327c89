"""``askrepo why path:line[-end]``: the commit behind some lines, its message, what else it did.

``git blame --porcelain -M -C -w`` (moves and copies followed, whitespace ignored, revisions in
``.git-blame-ignore-revs`` skipped) attributes each line to a commit; the newest of those
commits is the one that introduced or last meaningfully changed the lines. Its other touched
definitions come from the history index when it has the commit, else from the commit's diff
(``gitlog.touched_definitions``), located at HEAD by name.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError

IGNORE_REVS = ".git-blame-ignore-revs"
_ZERO = "0" * 40
_LOC = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")


@dataclass
class BlameLine:
    line: int  # final (HEAD / work tree) line number
    sha: str
    orig_path: str  # the file's path in that commit (moves/renames followed)
    orig_line: int


@dataclass
class BlamedCommit:
    sha: str
    author: str
    date: str  # author date, ISO 8601
    subject: str
    lines: list[int]  # the asked lines it owns
    path_then: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class WhyResult:
    repo: str
    path: str
    start_line: int
    end_line: int
    commit: BlamedCommit | None  # newest commit among the lines' blame (None: all uncommitted)
    message: str
    touched_here: list[dict[str, Any]]  # definitions of the asked lines that commit touched
    touched_elsewhere: list[dict[str, Any]]  # the other definitions it touched
    files: list[str]
    commits: list[BlamedCommit] = field(default_factory=list)  # every commit in the range
    uncommitted_lines: list[int] = field(default_factory=list)
    ignore_revs: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return d


# ---------------------------------------------------------------------------------------------
# Pure parsing


def parse_location(loc: str) -> tuple[str, int, int]:
    """``path:line`` or ``path:start-end`` → (path, start, end); UsageError otherwise."""
    m = _LOC.match(loc.strip())
    if not m:
        raise UsageError(
            f"{loc!r} is not a location — write PATH:LINE or PATH:START-END, e.g. src/app.py:42"
        )
    start = int(m.group("start"))
    end = int(m.group("end") or start)
    if start < 1 or end < start:
        raise UsageError(f"{loc!r}: lines are 1-based and START must not exceed END")
    return m.group("path"), start, end


def parse_porcelain(data: str) -> tuple[list[BlameLine], dict[str, dict[str, str]]]:
    """``git blame --porcelain`` → one BlameLine per line, and each commit's header fields."""
    lines: list[BlameLine] = []
    info: dict[str, dict[str, str]] = {}
    cur: dict[str, str] | None = None
    sha = ""
    orig_line = final_line = 0
    for raw in data.split("\n"):
        if raw.startswith("\t"):
            lines.append(BlameLine(final_line, sha, info[sha].get("filename", ""), orig_line))
            continue
        parts = raw.split(" ")
        if len(parts) >= 3 and re.fullmatch(r"[0-9a-f]{40,64}", parts[0]):
            sha, orig_line, final_line = parts[0], int(parts[1]), int(parts[2])
            cur = info.setdefault(sha, {})
            continue
        if cur is not None and raw:
            key, _, value = raw.partition(" ")
            cur[key] = value
    return lines, info


def newest(commits: list[BlamedCommit]) -> BlamedCommit | None:
    return max(commits, key=lambda c: (c.date, len(c.lines)), default=None)


def _iso(epoch: str, tz: str) -> str:
    try:
        sign = -1 if tz.startswith("-") else 1
        off = _dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])) * sign
        when = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone(off))
        return when.isoformat()
    except (ValueError, IndexError):
        return ""


# ---------------------------------------------------------------------------------------------
# The command


def why(
    repo: Path,
    path: str,
    start: int,
    end: int | None = None,
    *,
    allowed: set[str] | None = None,
    model: str | None = None,
    embedder: Any = None,
) -> WhyResult:
    """Blame ``path`` lines ``start..end`` (repo-relative, 1-based) and explain the newest commit.

    ``allowed``: the paths a caller may ask about (the MCP server passes the indexed files).
    """
    from .gitlog import git, require_repo
    from .safepath import resolve_repo_path

    end = start if end is None else end
    if start < 1 or end < start:
        raise UsageError(f"lines {start}-{end}: lines are 1-based and START must not exceed END")
    top = require_repo(Path(repo))
    full = resolve_repo_path(top, path, allowed=allowed)
    rel = full.relative_to(Path(top).resolve()).as_posix()
    if not full.is_file():
        raise UsageError(f"{rel!r} is not a file in {top} — pass a tracked file's path")
    total = len(full.read_bytes().split(b"\n")) - (1 if full.read_bytes().endswith(b"\n") else 0)
    if end > total:
        raise UsageError(f"{rel} has {total} lines; lines {start}-{end} are past its end")

    args = ["blame", "--porcelain", "-M", "-C", "-w", "-L", f"{start},{end}"]
    ignore = top / IGNORE_REVS
    used_ignore = None
    if ignore.is_file():
        args += ["--ignore-revs-file", str(ignore)]
        used_ignore = IGNORE_REVS
    out = git(top, *args, "--", rel, check=False)
    if not out and used_ignore:  # an unreadable ignore file: blame without it
        args = args[:-2]
        used_ignore = None
        out = git(top, *args, "--", rel, check=False)
    if not out:
        raise UsageError(f"git cannot blame {rel} — is it tracked? (`git add` and commit it)")
    blamed, info = parse_porcelain(out.decode("utf-8", "replace"))

    by_sha: dict[str, BlamedCommit] = {}
    uncommitted: list[int] = []
    for b in blamed:
        if b.sha == _ZERO:
            uncommitted.append(b.line)
            continue
        c = by_sha.get(b.sha)
        if c is None:
            h = info.get(b.sha, {})
            c = by_sha[b.sha] = BlamedCommit(
                sha=b.sha,
                author=h.get("author", ""),
                date=_iso(h.get("author-time", ""), h.get("author-tz", "+0000")),
                subject=h.get("summary", ""),
                lines=[],
                path_then=h.get("filename", rel),
            )
        c.lines.append(b.line)
    commits = sorted(by_sha.values(), key=lambda c: (-len(c.lines), c.date))
    main = newest(commits)
    result = WhyResult(
        repo=str(top),
        path=rel,
        start_line=start,
        end_line=end,
        commit=main,
        message="",
        touched_here=[],
        touched_elsewhere=[],
        files=[],
        commits=commits,
        uncommitted_lines=uncommitted,
        ignore_revs=used_ignore,
    )
    if main is None:
        return result
    result.message = git(top, "show", "-s", "--format=%B", main.sha).decode("utf-8", "replace")
    result.message = _redacted(result.message.strip())
    defs, files = _touched(top, main.sha, model, embedder)
    result.files = files
    for d in defs:
        item = d.to_dict()
        here = (
            d.head_path == rel
            and d.start_line is not None
            and d.start_line <= end
            and start <= (d.end_line or d.start_line)
        )
        (result.touched_here if here else result.touched_elsewhere).append(item)
    return result


def _redacted(text: str) -> str:
    from .secrets import redact

    return redact(text)[0]


def _touched(top: Path, sha: str, model: str | None, embedder: Any) -> tuple[list[Any], list[str]]:
    """The definitions ``sha`` touched, located at HEAD: from the history index when it has
    the commit, else from the commit's own diff."""
    from .history import HistoryIndex, decode_def

    idx = None
    try:
        idx = HistoryIndex.open(top, model, embedder)
        row = idx.commit(sha)
    except Exception:  # no history index: compute from git
        row = None
    if idx is not None and row is not None:
        defs = [decode_def(d) for d in row["defs"] or []]
        return idx.locate(defs), list(row["files"] or [])
    from .gitlog import BlobReader, read_commits, renames_since, touched_definitions
    from .history import TouchedDef, head_definitions

    commits = list(read_commits(top, [sha]))
    if not commits:
        return [], []
    with BlobReader(top) as blobs:
        pairs = touched_definitions(commits[0], blobs)
    renames = renames_since(top, sha)
    out = []
    cache: dict[str, Any] = {}
    for path, symbol in pairs:
        now = renames.get(path, path)
        if now not in cache:
            cache[now] = head_definitions(top, now)
        span = (cache[now] or {}).get(symbol)
        out.append(
            TouchedDef(path, symbol, now, span[0], span[1]) if span else TouchedDef(path, symbol)
        )
    return out, list(dict.fromkeys(f.path for f in commits[0].files))
