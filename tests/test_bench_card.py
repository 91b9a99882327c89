"""benchmarks/bench_card.py: card@1 from saved candidates, and a setting scored against the
defaults (gained / lost), without retrieval."""

import importlib.util
import sys
from pathlib import Path

from askrepo import evidence
from askrepo.datatypes import Hit

_SPEC = importlib.util.spec_from_file_location(
    "bench_card", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_card.py"
)
bench_card = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_card"] = bench_card  # dataclasses look their module up
_SPEC.loader.exec_module(bench_card)


def _hit(rank, path, symbol, kind, text):
    return Hit(
        rank=rank,
        path=path,
        start_line=1,
        end_line=text.count("\n") + 1,
        symbol=symbol,
        kind=kind,
        language="python",
        score=1.0 / rank,
        sources={},
        expanded_from=None,
        text=text,
    )


def test_a_setting_is_scored_on_the_saved_candidates_against_the_defaults():
    """Worked numbers (no term weights, no similarity): the class at rank 1 scores
    1.0 x CLASS_FACTOR 0.6 = 0.6, the function at rank 2 scores the prior 0.5 / 2 + 0.5 x
    0.5 = 0.5, so the class stays first and the question (gold: the function) is missed.
    CLASS_FACTOR = 0.4 makes the class 0.4 < 0.5: one question gained, none lost."""
    cls = _hit(1, "a.py", "Store", "class", "class Store:\n    path: str")
    fn = _hit(2, "b.py", "save", "function", "def save(x):\n    return x")
    case = bench_card.Case("r:q1", "how does it work", [cls, fn], {}, None, None, [False, True])
    base = bench_card.picks([case])
    assert base == {"r:q1": False}
    res = bench_card.scored([case], {"CLASS_FACTOR": 0.4})
    assert res == {"r:q1": True}
    assert evidence.CLASS_FACTOR == 0.6  # restored after scoring
    assert bench_card.row("CLASS_FACTOR=0.4", res, base) == {
        "setting": "CLASS_FACTOR=0.4",
        "card@1": 1,
        "n": 1,
        "gained": 1,
        "lost": 0,
    }


def test_relation_statements_are_listed_per_question_without_citations():
    """``--relations``: "A calls B" from the saved candidates and call graph, prefixed by the
    question's key, its citation marks dropped."""
    callee = _hit(1, "a.py", "load", "function", "def load(p):\n    return open(p)")
    caller = _hit(2, "b.py", "main", "function", "def main():\n    load('x')")
    caller.calls = ["load"]
    graph = evidence.Graph(definitions={"load": 1, "main": 1})
    case = bench_card.Case("r:q1", "how is a file loaded?", [callee, caller], {}, graph, None,
                           [True, False])  # fmt: skip
    assert bench_card.relations([case]) == ["r:q1 `main` (`b.py:1-2`) calls `load`"]
