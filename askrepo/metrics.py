"""Ranking metrics shared by every evaluation (labelled sets, sets built from git history).

Pure functions over ranked results that have ``path``, ``start_line`` and ``end_line``, and
targets that have ``path`` and optional ``start_line`` / ``end_line`` (a target with no lines is
a whole file). See docs/eval.md for the definitions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .datatypes import symbol_matches

RELEVANT_GAIN = 1.0
SECONDARY_GAIN = 0.5


def covers(result: Any, target: Any) -> bool:
    """Same path and, when the target has lines, overlapping 1-based inclusive line ranges;
    a target with a ``symbol`` and no lines is covered by a chunk of that symbol (as
    ``evaluate.is_hit``), one with only a path by any chunk of the file."""
    if result.path != target.path:
        return False
    start = getattr(target, "start_line", None)
    if start is None:
        symbol = getattr(target, "symbol", None)
        return not symbol or symbol_matches(getattr(result, "symbol", None), symbol)
    end = getattr(target, "end_line", None)
    end = start if end is None else end
    return result.start_line <= end and start <= result.end_line


def ndcg_at_k(
    results: Sequence[Any],
    relevant: Sequence[Any],
    k: int = 10,
    secondary: Sequence[Any] = (),
) -> float:
    """NDCG@k over chunk results.

    Each target is counted once, at the rank of the first result that covers it (gain 1 for a
    relevant target, 0.5 for a secondary one, discounted by ``1 / log2(rank + 1)``). The ideal
    ranking puts the ``min(k, targets)`` largest gains at ranks 1, 2, …. 0.0 without targets;
    at most 1.0 (a chunk that covers two targets at rank 1 would otherwise score above ideal).
    """
    targets = [(t, RELEVANT_GAIN) for t in relevant] + [(t, SECONDARY_GAIN) for t in secondary]
    if not targets or k <= 0:
        return 0.0
    dcg = 0.0
    for target, gain in targets:
        for rank, r in enumerate(results[:k], 1):
            if covers(r, target):
                dcg += gain / math.log2(rank + 1)
                break
    gains = sorted((g for _, g in targets), reverse=True)[:k]
    ideal = sum(g / math.log2(i + 1) for i, g in enumerate(gains, 1))
    # one chunk can cover several targets at rank 1, so DCG may pass the ideal: cap at 1
    return min(1.0, dcg / ideal) if ideal else 0.0


def file_order(results: Sequence[Any]) -> list[str]:
    """Distinct paths in order of first appearance."""
    return list(dict.fromkeys(r.path for r in results))


def file_rank(results: Sequence[Any], targets: Sequence[Any]) -> int | None:
    """1-based rank, among distinct files, of the first file that is a target's file."""
    wanted = {t.path for t in targets}
    for i, path in enumerate(file_order(results), 1):
        if path in wanted:
            return i
    return None


def file_hit_at(results: Sequence[Any], targets: Sequence[Any], k: int) -> bool:
    r = file_rank(results, targets)
    return r is not None and r <= k


def file_reciprocal_rank(results: Sequence[Any], targets: Sequence[Any]) -> float:
    r = file_rank(results, targets)
    return 0.0 if r is None else 1.0 / r
