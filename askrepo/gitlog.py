"""Read a repository's commits: messages, files, diff hunks, and the definitions each touched.

Shared by the history index (``history.py``), ``askrepo why`` (``blame.py``) and the eval set
built from commits (``gitevals.py``). The parsing and classification functions are pure and
tested on hand-written ``git log`` output; :func:`read_commits` runs one ``git log -p -U0``
stream for any number of commits and :func:`touched_definitions` maps each commit's hunks
onto the chunker's definitions *at that commit* (``git cat-file``), by name.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError

# One record per commit: RS, then NUL-separated header fields, then the patch.
_FORMAT = "%x1e%H%x00%P%x00%an%x00%aI%x00%B%x00"
_FIELDS = 5
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
DEF_KINDS = frozenset({"function", "method", "class"})
MAX_DEF_FILES = 30  # a commit touching more files gets definitions for its first 30 only
MAX_BLOB_BYTES = 512 * 1024  # larger file versions are not chunked for definitions


@dataclass
class FileChange:
    """One file of a commit: its path after the commit (before it, for a deletion)."""

    path: str
    old_path: str | None = None  # set for renames / copies
    status: str = "M"  # A added, M modified, D deleted, R renamed, C copied
    hunks: list[tuple[int, int]] = field(default_factory=list)  # new-side 1-based line spans
    binary: bool = False


@dataclass
class Commit:
    sha: str
    parents: list[str]
    author: str
    date: str  # author date, ISO 8601
    message: str
    files: list[FileChange] = field(default_factory=list)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.split("\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# Pure parsing


def _unquote(raw: str) -> str:
    """Git's C-style quoted path (``"a\\tb"``) to text; unquoted paths are returned as they are."""
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        body = raw[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return body.encode("latin-1", "replace").decode("utf-8", "replace")
    return raw


def _strip_prefix(raw: str, prefix: str) -> str:
    path = _unquote(raw)
    return path[len(prefix) :] if path.startswith(prefix) else path


def _diff_git_path(text: str) -> str:
    """The path in ``diff --git a/X b/X`` (exact for non-renames, which have equal halves;
    renames and copies get their path from the ``rename to`` / ``copy to`` line)."""
    if text.startswith('"'):
        m = re.match(r'"(?:[^"\\]|\\.)*"', text)
        rest = text[m.end() :].strip() if m else ""
        return _strip_prefix(rest, "b/") if rest else text
    n = len(text)
    if (n - 5) % 2 == 0 and n > 5:
        size = (n - 5) // 2
        if text[:2] == "a/" and text[2 : 2 + size] == text[size + 5 :]:
            return text[2 : 2 + size]
    return text.rsplit(" b/", 1)[-1] if " b/" in text else text


def hunk_span(old_start: int, old_len: int, new_start: int, new_len: int) -> tuple[int, int]:
    """New-side lines a hunk touches. A pure deletion (``+c,0``) touches the lines around the
    gap: ``c`` and ``c + 1`` (a deletion at the top of a file: line 1)."""
    if new_len > 0:
        return new_start, new_start + new_len - 1
    return max(new_start, 1), new_start + 1


def parse_log(data: bytes) -> list[Commit]:
    """Parse the output of ``git log --format=<_FORMAT> -p -U0 -M`` (see :func:`log_args`)."""
    return list(iter_log(iter(data.splitlines(keepends=True))))


def iter_log(lines: Iterator[bytes]) -> Iterator[Commit]:
    """Commits from a stream of ``git log`` output lines (bytes, with line ends)."""
    commit: Commit | None = None
    head = b""
    in_head = False
    cur: FileChange | None = None
    for line in lines:
        if in_head or line.startswith(b"\x1e"):
            if not in_head:
                if commit is not None:
                    yield commit
                commit, cur, head, in_head = None, None, line[1:], True
            else:
                head += line
            if head.count(b"\0") >= _FIELDS:
                parts = head.split(b"\0", _FIELDS)
                sha, parents, author, date, msg = (p.decode("utf-8", "replace") for p in parts[:5])
                commit = Commit(
                    sha=sha.strip(),
                    parents=parents.split(),
                    author=author,
                    date=date.strip(),
                    message=msg.strip("\n"),
                )
                in_head = False
            continue
        if commit is None:
            continue
        if line.startswith(b"diff --git "):
            text = line[len(b"diff --git ") :].decode("utf-8", "replace").rstrip("\n")
            cur = FileChange(path=_diff_git_path(text))
            commit.files.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith(b"@@"):
            m = _HUNK.match(line)
            if m:
                o_start, o_len = int(m.group(1)), int(m.group(2) or b"1")
                n_start, n_len = int(m.group(3)), int(m.group(4) or b"1")
                cur.hunks.append(hunk_span(o_start, o_len, n_start, n_len))
            continue
        if cur.hunks or line.startswith((b" ", b"\\")):
            continue  # patch body: the bulk of the stream, never kept
        text = line.decode("utf-8", "replace").rstrip("\n")
        if text.startswith("new file mode"):
            cur.status = "A"
        elif text.startswith("deleted file mode"):
            cur.status = "D"
        elif text.startswith("rename from "):
            cur.old_path, cur.status = _unquote(text[len("rename from ") :]), "R"
        elif text.startswith("rename to "):
            cur.path = _unquote(text[len("rename to ") :])
        elif text.startswith("copy from "):
            cur.old_path, cur.status = _unquote(text[len("copy from ") :]), "C"
        elif text.startswith("copy to "):
            cur.path = _unquote(text[len("copy to ") :])
        elif text.startswith("--- ") and text[4:] != "/dev/null" and cur.status == "D":
            cur.path = _strip_prefix(text[4:], "a/")
        elif text.startswith("+++ ") and text[4:] != "/dev/null":
            cur.path = _strip_prefix(text[4:], "b/")
        elif text.startswith("Binary files "):
            cur.binary = True
    if commit is not None:
        yield commit


# ---------------------------------------------------------------------------------------------
# Classification rules (documented in docs/history.md)

_BOT_AUTHOR = re.compile(
    r"\[bot\]|^(dependabot|renovate|github-actions|pre-commit-ci|greenkeeper|snyk-bot|"
    r"allcontributors|imgbot|weblate)\b",
    re.I,
)
_BUMP_SUBJECT = re.compile(
    r"^(?:"
    r"(?:chore|build|ci)\(deps(?:-dev)?\)|"  # conventional dependency updates
    r"bump\b.*\bfrom\b.*\bto\b|"  # "Bump lodash from 4.1 to 4.2"
    r"bump(?:ed)? (?:the )?version|version bump|"
    r"(?:(?:release|releasing|prepare|prepare for|start|begin|new|tag|tagged|cut)\s+)?"
    r"(?:release|version|bump)\s+v?\d+(?:\.\d+)+\S*\s*$|"
    r"v?\d+(?:\.\d+)+\S*\s*$|"  # a bare version number
    r"update (?:dependency|dependencies)\b|"
    r"\[?(?:pre-commit\.ci|autofix)\b"
    r")",
    re.I,
)
_REVERT = re.compile(r'^Revert\b|^Reapply "|\bThis reverts commit [0-9a-f]{7,}', re.M)
_FORMAT_SUBJECT = re.compile(
    r"^(?:style|fmt|format|lint)(?:\(.*?\))?:|\b(?:re-?format(?:ted|ting)?|run (?:black|"
    r"prettier|ruff format|gofmt|rustfmt|clang-format)|apply (?:black|prettier|formatting)|"
    r"code style|quote style|(?:single|double) quotes|whitespace|trailing spaces|isort|"
    r"sort(?:ed)? imports|fix (?:formatting|indentation|lint(?:ing)?|typos?)|typos?)\b",
    re.I,
)


def skip_reason(commit: Commit) -> str | None:
    """Why a commit is left out of the history index, or None to keep it.

    ``merge`` (more than one parent), ``empty-message``, ``bot`` (the author is a bot account:
    ``[bot]``, dependabot, renovate, github-actions, pre-commit-ci, ...), ``bump`` (a dependency
    or version bump: "Bump x from 1 to 2", "chore(deps): ...", "v1.2.3", "Release 2.0").
    """
    if len(commit.parents) > 1:
        return "merge"
    if not commit.subject:
        return "empty-message"
    if _BOT_AUTHOR.search(commit.author):
        return "bot"
    if _BUMP_SUBJECT.search(commit.subject):
        return "bump"
    return None


def is_revert(commit: Commit) -> bool:
    return bool(_REVERT.search(commit.message))


def looks_like_formatting(commit: Commit) -> bool:
    """Whether the message says the commit is formatting/style/typo only."""
    return bool(_FORMAT_SUBJECT.search(commit.subject))


# ---------------------------------------------------------------------------------------------
# Definitions touched


def overlapping_definitions(chunks: Sequence[Any], spans: Sequence[tuple[int, int]]) -> list[str]:
    """Symbols of the definition chunks (function / method / class) that overlap any span,
    in file order, de-duplicated. Windows and text chunks name no definition."""
    out: dict[str, None] = {}
    for c in chunks:
        if c.kind not in DEF_KINDS or not c.symbol:
            continue
        if any(c.start_line <= hi and lo <= c.end_line for lo, hi in spans):
            out[c.symbol] = None
    return list(out)


def definition_spans(text: str, path: str) -> list[Any]:
    """The definition chunks of one file's text (chunker at that version)."""
    from .chunker import chunk_text
    from .ingest import detect_language

    language = detect_language(path, text[:256].encode("utf-8", "replace"))
    if language is None or language == "markdown":
        return []
    return [c for c in chunk_text(path, text, language) if c.kind in DEF_KINDS and c.symbol]


def _may_define(path: str) -> bool:
    from .chunker import supported_languages
    from .ingest import detect_language

    lang = detect_language(path)
    return lang is not None and lang in _supported(supported_languages)


_SUPPORTED: set[str] | None = None


def _supported(fn: Any) -> set[str]:
    global _SUPPORTED
    if _SUPPORTED is None:
        _SUPPORTED = set(fn())
    return _SUPPORTED


# ---------------------------------------------------------------------------------------------
# Running git


def _env() -> dict[str, str]:
    from .ingest import _git_env

    return _git_env()


def git(root: Path, *args: str, check: bool = True, input: bytes | None = None) -> bytes:
    """Run git in ``root``; stdout. UsageError with git's message when it fails and ``check``."""
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=root,
            env=_env(),
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"git could not run ({exc}) — install git and retry") from exc
    if proc.returncode != 0 and check:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(
            f"git {args[0]} failed in {root}: {msg[-1] if msg else 'no message'} — "
            "check that this is a git repository with at least one commit"
        )
    return proc.stdout


def require_repo(root: Path) -> Path:
    """The work tree's top level; UsageError when ``root`` is not in a git repository."""
    from .ingest import check_root

    root = check_root(root)
    out = git(root, "rev-parse", "--show-toplevel", check=False).decode().strip()
    if not out:
        raise UsageError(f"{root} is not inside a git repository — history needs git")
    if not git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip():
        raise UsageError(f"{root} has no commits yet — commit something first")
    return Path(out)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").decode().strip()


def rev_list(root: Path, depth: int, since: str | None = None) -> list[str]:
    """Non-merge commits reachable from HEAD, newest first, at most ``depth``."""
    args = ["rev-list", "--no-merges", f"--max-count={int(depth)}"]
    if since:
        args.append(f"--since={since}")
    return git(root, *args, "HEAD").decode().split()


def log_args() -> list[str]:
    return [
        "log",
        f"--format={_FORMAT}",
        "-p",
        "-U0",
        "-M",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--diff-merges=first-parent",
    ]


def read_commits(root: Path, shas: Sequence[str]) -> Iterator[Commit]:
    """The commits ``shas`` (yielded in the order given), with files and hunks.

    A commit whose diff git cannot produce (a blob missing from a partial or damaged clone)
    makes ``git log`` stop; the commits after it are read by a new ``git log``, and a commit
    git cannot show at all is skipped, so one bad object never ends the run.
    """
    remaining = list(shas)
    while remaining:
        done = 0
        ok = True
        for commit, clean in _log_stream(root, remaining):
            if commit is not None:
                done += 1
                yield commit
            else:
                ok = clean
        if ok or done >= len(remaining):
            return
        remaining = remaining[max(done, 1) :]  # skip what was read, or the unreadable one


def _log_stream(root: Path, shas: Sequence[str]) -> Iterator[tuple[Commit | None, bool]]:
    """(commit, True) per commit of one ``git log --no-walk --stdin`` run, then
    (None, whether git exited cleanly)."""
    import threading

    proc = subprocess.Popen(
        ["git", "-c", "core.quotePath=false", *log_args(), "--no-walk=unsorted", "--stdin"],
        cwd=root,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        try:
            proc.stdin.write("\n".join(shas).encode() + b"\n")  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    try:
        for c in iter_log(iter(proc.stdout.readline, b"")):
            yield c, True
    finally:
        proc.stdout.close()
        code = proc.wait()
        t.join(timeout=1)
    yield None, code == 0


class BlobReader:
    """``git cat-file --batch``: file contents at any commit, one long-lived process."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=root,
            env=_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def read(self, commit: str, path: str) -> str | None:
        """The text of ``path`` at ``commit``; None when missing, binary or too large."""
        if "\n" in path or self.proc.stdin is None or self.proc.stdout is None:
            return None
        self.proc.stdin.write(f"{commit}:{path}\n".encode())
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            return None
        size = int(header[2])
        data = self.proc.stdout.read(size + 1)[:size]
        if size > MAX_BLOB_BYTES or b"\0" in data[:8000]:
            return None
        return data.decode("utf-8-sig", "replace")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.proc.wait()

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def touched_definitions(commit: Commit, blobs: BlobReader) -> list[tuple[str, str]]:
    """(path, symbol) of the definitions the commit's hunks touch, at that commit."""
    out: list[tuple[str, str]] = []
    files = [f for f in commit.files if f.status != "D" and f.hunks and not f.binary]
    for f in files[:MAX_DEF_FILES]:
        if not _may_define(f.path):
            continue
        text = blobs.read(commit.sha, f.path)
        if text is None:
            continue
        chunks = definition_spans(text, f.path)
        out.extend((f.path, s) for s in overlapping_definitions(chunks, f.hunks))
    return out


def rename_map(renames: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Where each old path lives at HEAD, from (date, old, new) renames in any order.

    Applied oldest first: a → b then b → c gives {a: c, b: c}. A path that was renamed away
    and later re-created keeps its own name only if no rename targets it afterwards (rare).
    """
    forward: dict[str, str] = {}
    for _, old, new in sorted(renames):
        for k, v in list(forward.items()):
            if v == old:
                forward[k] = new
        forward[old] = new
        forward.pop(new, None)
    return forward


def renames_since(root: Path, sha: str) -> dict[str, str]:
    """Old path → path at HEAD for the renames made after ``sha`` (first-parent diffs)."""
    out = git(
        root,
        "log",
        "-M",
        "--diff-filter=R",
        "--name-status",
        "--format=%x1e%aI",
        f"{sha}..HEAD",
        check=False,
    ).decode("utf-8", "replace")
    triples = []
    for record in out.split("\x1e")[1:]:
        lines = record.strip().split("\n")
        date = lines[0].strip()
        for line in lines[1:]:
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].startswith("R"):
                triples.append((date, parts[1], parts[2]))
    return rename_map(triples)
