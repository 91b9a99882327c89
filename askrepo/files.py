"""File-level ranking: aggregate chunk hits into files (``search --files``, ``plan``, eval).

A pure function over a ranked hit list, shared by every caller that needs "which files".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
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
