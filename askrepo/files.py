"""File-level ranking: aggregate chunk hits into files (``search --files``, ``plan``, eval).

A pure function over a ranked hit list, shared by every caller that needs "which files".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

# Each further chunk of a file adds this much less than the one before (1, 0.5, 0.25, ...).
FILE_DECAY = 0.5


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
