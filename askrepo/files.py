"""File-level ranking: aggregate chunk hits into files (``search --files``, ``plan``, eval).

A pure function over a ranked hit list, shared by every caller that needs "which files".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

# Each further chunk of a file adds this much less than the one before (1, 0.5, 0.25, ...).
FILE_DECAY = 0.5
# A test chunk that matches the query adds this share of its score to the file it tests
# (``vote_by_tests``); swept 0.15-1.0 on 227 bug reports of six projects (docs/eval.md,
# "Session 33"): 0.25 gained 5 first files and lost none, 1.0 gained 15 and lost 8.
TEST_VOTE = 0.25
TEST_VOTE_POOL = 30  # hits of the search with tests in scope whose test chunks vote


@dataclass
class FileHit:
    rank: int
    path: str
    score: float
    best: dict[str, Any]  # {"start_line", "end_line", "symbol"} of the file's best chunk
    chunks: int = 1  # how many of the hits are in this file
    file_class: str = "code"
    hits: list[Any] = field(default_factory=list, repr=False)  # the file's hits, best first

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("hits")
        return d


def rank_files(hits: Sequence[Any], decay: float = FILE_DECAY) -> list[FileHit]:
    """Files ranked by their chunks' scores: ``Σ_i score_i * decay**i`` over the file's hits in
    score order (a file with several strong chunks beats a file with one). Ties keep the order
    in which files first appear in ``hits``."""
    grouped: dict[str, list[Any]] = {}
    for h in hits:
        grouped.setdefault(h.path, []).append(h)
    order = {p: i for i, p in enumerate(grouped)}
    scored = []
    for path, group in grouped.items():
        group = sorted(group, key=lambda h: -h.score)
        score = sum(h.score * decay**i for i, h in enumerate(group))
        scored.append((path, score, group))
    scored.sort(key=lambda t: (-t[1], order[t[0]]))
    out = []
    for rank, (path, score, group) in enumerate(scored, 1):
        b = group[0]
        out.append(
            FileHit(
                rank=rank,
                path=path,
                score=round(score, 6),
                best={"start_line": b.start_line, "end_line": b.end_line, "symbol": b.symbol},
                chunks=len(group),
                file_class=getattr(b, "file_class", "code"),
                hits=group,
            )
        )
    return out


def extend_files(ranked: Sequence[FileHit], deeper: Sequence[Any], k: int) -> list[FileHit]:
    """``ranked`` followed by the files of ``deeper`` (a longer hit list of the same search)
    that it lacks, in ``rank_files`` order, until there are ``k``; their scores are capped just
    under the last ranked file's so the list stays in score order. ``ranked`` is kept as is.

    >>> from types import SimpleNamespace as H
    >>> top = rank_files([H(path="a.py", score=0.9, start_line=1, end_line=2, symbol="f")])
    >>> deep = [H(path=p, score=s, start_line=1, end_line=2, symbol=None)
    ...         for p, s in [("a.py", 0.9), ("b.py", 0.95), ("c.py", 0.2)]]
    >>> [(f.rank, f.path, f.score) for f in extend_files(top, deep, 3)]
    [(1, 'a.py', 0.9), (2, 'b.py', 0.8991), (3, 'c.py', 0.2)]
    """
    out = list(ranked)
    have = {f.path for f in out}
    last = out[-1].score if out else None
    for f in rank_files(deeper):
        if len(out) >= k:
            break
        if f.path in have:
            continue
        score = f.score if last is None else min(f.score, round(last * 0.999, 6))
        out.append(replace(f, rank=len(out) + 1, score=score))
        have.add(f.path)
        last = score
    return out


_TEST_AFFIX = (
    re.compile(r"^tests?_"),
    re.compile(r"(_tests?|_spec|\.test|\.spec|Tests?|Spec)$"),
)
_PATH_WORD = re.compile(r"[/_.\-]+")


@functools.lru_cache(maxsize=1 << 15)
def _words(path: str) -> tuple[str, ...]:
    """A path's words, lower-case, a plural ``s`` dropped (``commands/show`` -> command, show).
    Cached: every test hit reads the words of every code path."""
    out = []
    for w in _PATH_WORD.split(path.lower()):
        if w:
            out.append(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return tuple(out)


def _without_extension(path: str) -> str:
    """``tests/auth.test.ts`` -> ``tests/auth.test``; a dotfile (``.env``) keeps its name."""
    head, _, name = path.rpartition("/")
    if "." in name.lstrip("."):
        name = name.rsplit(".", 1)[0]
    return f"{head}/{name}" if head else name


def subject_files(test_path: str, code_paths: Collection[str]) -> list[str]:
    """The code files a test file is named for: ``test_X`` / ``X_test`` / ``X_spec`` /
    ``X.test`` / ``XTest`` names X, and the code files whose path (without extension) ends in
    X's words
    (``test_network_auth.py`` -> ``network/auth.py``; ``test_req_file.py`` ->
    ``req/req_file.py``); of several, those sharing most directory words with the test file.
    [] for a file not named so (``conftest.py``, ``helpers.py``).

    >>> code = ["src/pip/network/auth.py", "src/pip/cli/auth.py", "src/pip/req/req_file.py"]
    >>> subject_files("tests/unit/test_network_auth.py", code)
    ['src/pip/network/auth.py']
    >>> subject_files("tests/unit/test_auth.py", code)
    ['src/pip/network/auth.py', 'src/pip/cli/auth.py']
    >>> subject_files("tests/cli/test_auth.py", code)
    ['src/pip/cli/auth.py']
    >>> subject_files("tests/conftest.py", code)
    []
    """
    stem = _without_extension(test_path).rsplit("/", 1)[-1]
    subject = _TEST_AFFIX[1].sub("", _TEST_AFFIX[0].sub("", stem))
    if not subject or subject == stem:
        return []
    want = _words(subject)
    n = len(want)
    test_dirs = set(_words(test_path.rsplit("/", 1)[0])) if "/" in test_path else set()
    found = []
    for path in code_paths:
        words = _words(_without_extension(path))
        if len(words) >= n and words[-n:] == want:
            found.append((len(test_dirs & set(words[:-n])), path))
    if not found:
        return []
    best = max(k for k, _ in found)
    return [p for k, p in found if k == best]


def vote_by_tests(
    files: Sequence[FileHit],
    test_hits: Sequence[Any],
    code_paths: Collection[str],
    weight: float = TEST_VOTE,
    decay: float = FILE_DECAY,
    notes: list[str] | None = None,
) -> list[FileHit]:
    """``files`` re-ranked with the votes of the tests that match the query: each test chunk
    (``test_hits``, best first) adds ``weight * score * decay**i / n`` to the files its test
    file is named for (``subject_files``; ``i``: the chunks of that test file before it, ``n``:
    the files it names), when they are among ``files``. A report describes what it did, and
    the tests that do the same name the module they test. Files no test names keep their
    score; ties keep their order. ``notes``, if given, gets one ``"test → file"`` per vote cast.

    >>> from types import SimpleNamespace as H
    >>> files = rank_files([H(path="src/parser.py", score=0.05, start_line=1, end_line=9,
    ...                       symbol="parse"),
    ...                     H(path="src/lexer.py", score=0.04, start_line=1, end_line=9,
    ...                       symbol="lex")])
    >>> tests = [H(path="tests/test_lexer.py", score=0.06), H(path="tests/test_lexer.py",
    ...          score=0.04)]
    >>> [(f.rank, f.path, f.score) for f in vote_by_tests(files, tests, ["src/parser.py",
    ...  "src/lexer.py"])]
    [(1, 'src/lexer.py', 0.06), (2, 'src/parser.py', 0.05)]
    """
    have = {f.path for f in files}
    votes: dict[str, float] = {}
    seen: dict[str, int] = {}
    subjects: dict[str, list[str]] = {}  # a test file's chunks share its subject files
    for h in test_hits:
        if h.path not in subjects:
            subjects[h.path] = subject_files(h.path, code_paths)
        targets = subjects[h.path]
        if not targets:
            continue
        i = seen.get(h.path, 0)
        seen[h.path] = i + 1
        share = weight * h.score * decay**i / len(targets)
        for t in targets:
            if t in have:
                votes[t] = votes.get(t, 0.0) + share
                if notes is not None and i == 0:
                    notes.append(f"{h.path} → {t}")
    if not votes:
        return list(files)
    scored = [(f, f.score + votes.get(f.path, 0.0)) for f in files]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i][1], i))
    return [
        replace(scored[i][0], rank=rank, score=round(scored[i][1], 6))
        for rank, i in enumerate(order, 1)
    ]
