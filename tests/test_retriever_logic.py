"""Pure ranking functions, with hand-worked numbers."""

from __future__ import annotations

import pytest

from askrepo.datatypes import Hit
from askrepo.retriever import (
    allowed_classes,
    dense_query_text,
    detect_scope,
    diversify,
    merge_overlaps,
    rrf,
    score_fusion,
)


def test_rrf_hand_worked():
    # a: 1/61 = .016393 ; b: 1/62 + 1/61 = .032522 ; c: 1/63 = .015873 ; d: 1/62 = .016129
    fused = rrf([["a", "b", "c"], ["b", "d"]], k=60)
    assert [d for d, _ in fused] == ["b", "a", "d", "c"]
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["c"] == pytest.approx(1 / 63)
    assert scores["d"] == pytest.approx(1 / 62)


def test_rrf_weights_and_small_k():
    # k=1: x: 1/2 + 1/3 = .8333, y: 1/3 + 1/2 = .8333 (tie -> first appearance), z: 3 * 1/2 = 1.5
    fused = rrf([["x", "y"], ["y", "x"], ["z"]], k=1, weights=[1, 1, 3])
    assert [d for d, _ in fused] == ["z", "x", "y"]
    assert dict(fused)["z"] == pytest.approx(1.5)
    assert dict(fused)["x"] == pytest.approx(1 / 2 + 1 / 3)


def test_score_fusion_hand_worked_keeps_a_lead_rrf_loses():
    # dense: x .9, y .5, z .4 -> span .5: x 1, y .2, z 0
    # fts:   w 8,  y 7,  z 0  -> span 8:  w 1, y .875, z 0
    # y 1.075 > x 1.0 = w 1.0 (tie: x appeared first) > z 0
    dense = [("x", 0.9), ("y", 0.5), ("z", 0.4)]
    fts = [("w", 8.0), ("y", 7.0), ("z", 0.0)]
    fused = score_fusion([dense, fts])
    assert [d for d, _ in fused] == ["y", "x", "w", "z"]
    assert dict(fused)["y"] == pytest.approx(0.2 + 0.875)
    assert dict(fused)["z"] == 0.0
    # RRF ranks z, third on both sides, above x and w, each first on one side
    assert [d for d, _ in rrf([[d for d, _ in dense], [d for d, _ in fts]])] == [
        "y",
        "z",
        "x",
        "w",
    ]


def test_score_fusion_depth_weights_ties_duplicates_and_empty():
    # depth 2: the floor is b's .5; c below it counts 0, not a negative score
    assert score_fusion([[("a", 1.0), ("b", 0.5), ("c", 0.2)]], depth=2) == [
        ("a", 1.0),
        ("b", 0.0),
        ("c", 0.0),
    ]
    # equal scores: each counts 1; weights scale a whole list
    fused = score_fusion([[("a", 3.0), ("b", 3.0)], [("c", 1.0), ("a", 0.0)]], weights=[1, 3])
    assert fused == [("c", 3.0), ("a", 1.0), ("b", 1.0)]
    # a duplicate counts at its first score only (its 0 is still the floor); an empty list adds
    # nothing
    assert score_fusion([[("a", 2.0), ("b", 1.0), ("a", 0.0)], []]) == [("a", 1.0), ("b", 0.5)]
    assert score_fusion([]) == []


def test_rrf_duplicate_in_one_list_counts_once_and_empty_lists():
    assert rrf([["a", "a", "b"]], k=60) == [
        ("a", pytest.approx(1 / 61)),
        ("b", pytest.approx(1 / 63)),
    ]
    assert rrf([[], []]) == []


def test_symbol_weight_puts_exact_definition_first():
    # dense and fts agree on "b" at rank 1 (2/61 = .0328); the symbol list names "c" (10/61 = .164)
    fused = rrf([["b", "c"], ["b"], ["c"]], weights=[1, 1, 10])
    assert fused[0][0] == "c"


@pytest.mark.parametrize(
    "question, tests, docs",
    [
        ("where is authentication handled?", False, False),
        ("where is authenticate_user tested?", True, False),
        ("which tests cover the cart total?", True, False),
        ("show me the pytest fixtures for the session store", True, False),
        ("what does the README say about installation?", False, True),
        ("is the retry decorator documented anywhere in the docs?", False, True),
        ("how are test and docs files classified?", True, True),
        ("latest release notes in the changelog", False, True),
        ("parse the query string", False, False),
        ("contest results", False, False),
    ],
)
def test_detect_scope(question, tests, docs):
    assert detect_scope(question) == (tests, docs)


def test_allowed_classes():
    assert allowed_classes(False, False) == {"code", "config"}
    assert allowed_classes(True, True) == {"code", "config", "test", "doc"}


def _hit(path, start, end, text=None, rank=0):
    text = text if text is not None else "\n".join(f"L{n}" for n in range(start, end + 1))
    return Hit(
        rank,
        path,
        start,
        end,
        None,
        "window",
        "python",
        1.0,
        {"dense": rank or None, "fts": None},
        None,
        text,
    )


def test_merge_overlaps_unions_ranges_and_text():
    a = _hit("x.py", 10, 20, rank=1)
    b = _hit("y.py", 1, 5, rank=2)
    c = _hit("x.py", 18, 25, rank=3)
    d = _hit("x.py", 26, 30, rank=4)  # adjacent, not overlapping: kept apart
    merged = merge_overlaps([a, b, c, d])
    assert [(h.path, h.start_line, h.end_line) for h in merged] == [
        ("x.py", 10, 25),
        ("y.py", 1, 5),
        ("x.py", 26, 30),
    ]
    assert merged[0].text.split("\n") == [f"L{n}" for n in range(10, 26)]
    assert merged[0].sources["dense"] == 1


def test_diversify_caps_per_file_then_fills():
    hits = [_hit("a.py", i * 10, i * 10 + 5) for i in range(1, 6)] + [_hit("b.py", 1, 2)]
    top = diversify(hits, k=4, max_per_file=2)
    assert [h.path for h in top] == ["a.py", "a.py", "b.py", "a.py"]
    # nothing else left: overflow fills the remaining slots
    assert len(diversify(hits[:5], k=4, max_per_file=2)) == 4
    assert diversify(hits, k=3, max_per_file=0) == hits[:3]


def test_dense_query_text_keeps_short_queries_and_trims_long_ones():
    assert dense_query_text("where is auth?") == "where is auth?"
    trace = "Traceback (most recent call last):\n" + '  File "x.py", line 3, in f\n' * 2000
    trace += "KeyError: resolve_command_name"
    text = dense_query_text(trace)
    assert len(text) < 3000
    assert "resolve_command_name" in text


def test_quoted_phrases_skip_bare_identifiers():
    from askrepo.retriever import quoted_phrases

    q = 'Where is `Got unexpected extra argument` or "No such option" raised in `parse_args`?'
    assert quoted_phrases(q) == ["Got unexpected extra argument", "No such option"]
    assert quoted_phrases("what does `Context.invoke()` do") == []
    assert quoted_phrases("it's the user's choice") == []


def test_contains_all_and_mentions_any():
    from askrepo.retriever import contains_all, mentions_any

    text = "raise UsageError(ngettext('Got unexpected extra argument', ...))\nself.default_map = x"
    assert contains_all(text, ["got UNEXPECTED extra argument"])
    assert not contains_all(text, ["got unexpected", "missing"])
    assert mentions_any(text, ["default_map"])
    assert not mentions_any(text, ["default"])  # whole identifiers only
    assert not mentions_any(text, ["map"])
