"""askrepo.evaluate: metrics with hand-worked numbers, McNemar, query files, a real run."""

from __future__ import annotations

import json
import re

import pytest

from askrepo.datatypes import CODE, DOC, TEST, Hit
from askrepo.errors import UsageError
from askrepo.evaluate import (
    ConfigSpec,
    EvalQuery,
    Expected,
    aggregate,
    compare,
    drop_path,
    first_hit_rank,
    hit_at,
    is_hit,
    mcnemar_exact,
    paired_counts,
    parse_config,
    parse_queries,
    percentile,
    recall_at,
    reciprocal_rank,
    score_query,
    symbol_hit_at,
    symbol_matches,
    wasted_slots,
)
from tests.click_corpus import EVAL_DIR

CLICK_JSONL = EVAL_DIR / "questions.jsonl"


def hit(path: str, start: int, end: int, symbol: str | None = None, fc: str = CODE, score=1.0):
    return Hit(
        rank=0,
        path=path,
        start_line=start,
        end_line=end,
        symbol=symbol,
        kind="function",
        language="python",
        score=score,
        sources={},
        expanded_from=None,
        text="",
        file_class=fc,
    )


# --- hit rule -------------------------------------------------------------------------------


def test_is_hit_line_overlap_is_inclusive():
    exp = Expected("a.py", 10, 20)
    assert is_hit(hit("a.py", 20, 30), exp)  # touches the last line
    assert is_hit(hit("a.py", 1, 10), exp)  # touches the first line
    assert is_hit(hit("a.py", 12, 14), exp)  # inside
    assert is_hit(hit("a.py", 1, 100), exp)  # contains
    assert not is_hit(hit("a.py", 21, 30), exp)
    assert not is_hit(hit("a.py", 1, 9), exp)
    assert not is_hit(hit("b.py", 10, 20), exp)  # other file


def test_is_hit_single_line_expectation():
    exp = Expected("a.py", 15, None)
    assert is_hit(hit("a.py", 10, 15), exp)
    assert not is_hit(hit("a.py", 16, 18), exp)


def test_is_hit_symbol_exact_or_dotted_suffix():
    exp = Expected("r.py", symbol="search")
    assert is_hit(hit("r.py", 1, 5, "Retriever.search"), exp)
    assert is_hit(hit("r.py", 1, 5, "search"), exp)
    assert not is_hit(hit("r.py", 1, 5, "research"), exp)  # suffix, but not at a dot
    assert not is_hit(hit("r.py", 1, 5, None), exp)
    assert not is_hit(hit("x.py", 1, 5, "search"), exp)  # symbol right, path wrong
    assert symbol_matches("A.B.c", "B.c") and not symbol_matches("A.B.c", "A.B")


def test_lines_win_over_symbol_when_both_given():
    exp = Expected("r.py", 10, 12, symbol="search")
    assert is_hit(hit("r.py", 11, 11, "other"), exp)
    assert not is_hit(hit("r.py", 40, 50, "search"), exp)


def test_path_only_expectation_accepts_any_chunk_of_the_file():
    assert is_hit(hit("README.md", 100, 120), Expected("README.md"))


# --- rank metrics -----------------------------------------------------------------------------

EXP = [Expected("a.py", 10, 20), Expected("b.py", symbol="B.run")]
HITS = [
    hit("c.py", 1, 5, score=0.9),  # 1: miss
    hit("a.py", 30, 40, score=0.8),  # 2: miss (same file, no overlap)
    hit("b.py", 1, 9, "B.run", score=0.8),  # 3: hit EXP[1] (tie in score with 2)
    hit("a.py", 15, 16, score=0.7),  # 4: hit EXP[0]
    hit("a.py", 18, 25, score=0.6),  # 5: hit EXP[0] again
]


def test_rank_metrics_worked_example():
    assert first_hit_rank(HITS, EXP, 5) == 3
    assert first_hit_rank(HITS, EXP, 2) is None
    assert hit_at(HITS, EXP, 3) and not hit_at(HITS, EXP, 2) and not hit_at(HITS, EXP, 1)
    assert reciprocal_rank(HITS, EXP, 5) == pytest.approx(1 / 3)
    assert reciprocal_rank(HITS, EXP, 2) == 0.0
    # recall: 1 of 2 locations in the top 3, both in the top 4; a second hit on a.py adds nothing
    assert recall_at(HITS, EXP, 3) == 0.5
    assert recall_at(HITS, EXP, 4) == 1.0
    assert recall_at(HITS, EXP, 5) == 1.0


def test_ties_rank_by_returned_position():
    # Equal scores: rank is the position in the list, not a shared rank.
    tied = [hit("x.py", 1, 2, score=0.5), hit("a.py", 10, 10, score=0.5)]
    assert first_hit_rank(tied, EXP, 5) == 2
    assert reciprocal_rank(tied, EXP, 5) == 0.5


def test_empty_results():
    assert first_hit_rank([], EXP, 5) is None
    assert reciprocal_rank([], EXP, 5) == 0.0
    assert recall_at([], EXP, 5) == 0.0
    assert symbol_hit_at([], EXP, 5) is False
    assert wasted_slots([], 5) == (0, 0)


def test_symbol_hit_at():
    assert symbol_hit_at(HITS, EXP, 3) is True
    assert symbol_hit_at(HITS, EXP, 2) is False
    # no expectation names a symbol -> not counted
    assert symbol_hit_at(HITS, [Expected("a.py", 10, 20)], 5) is None
    # line hit in the right file but wrong symbol is not a symbol hit
    assert symbol_hit_at([hit("b.py", 1, 9, "B.stop")], EXP, 5) is False


def test_wasted_slots_counts_tests_and_docs_in_top_k():
    hits = [
        hit("t.py", 1, 2, fc=TEST),
        hit("a.py", 1, 2),
        hit("R.md", 1, 2, fc=DOC),
        hit("b", 1, 1),
    ]
    assert wasted_slots(hits, 3) == (2, 3)
    assert wasted_slots(hits, 10) == (2, 4)  # only filled slots count


def test_percentile_nearest_rank():
    assert percentile([4, 1, 3, 2], 50) == 2
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile(list(range(1, 21)), 95) == 19
    assert percentile(list(range(1, 21)), 100) == 20
    assert percentile([7.5], 95) == 7.5
    assert percentile([], 50) is None


# --- McNemar ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),
        (0, 5, 0.0625),  # 2 * 1/32
        (5, 0, 0.0625),
        (1, 9, 0.021484375),  # 2 * (1 + 10) / 1024
        (0, 1, 1.0),
        (3, 3, 1.0),
        (2, 8, 0.109375),  # 2 * (1 + 10 + 45) / 1024
        (0, 10, 2 / 1024),
    ],
)
def test_mcnemar_exact(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_paired_counts():
    a = [True, True, False, False, True]
    b = [True, False, True, False, False]
    assert paired_counts(a, b) == (2, 1, 1, 1)
    with pytest.raises(ValueError):
        paired_counts([True], [])


# --- scoring and aggregation ------------------------------------------------------------------


def _queries():
    return [
        EvalQuery("q1", "where is a", [Expected("a.py", 10, 20)], tags=["where"]),
        EvalQuery("q2", "tests of b", [Expected("tests/t.py", 1, 5)], tags=["tests"]),
        EvalQuery("q3", "where is `Nope`", [], tags=["absent"], absent=True),
    ]


def test_score_and_aggregate_exclude_absent_questions():
    qs = _queries()
    r1 = score_query(qs[0], [hit("t.py", 1, 2, fc=TEST), hit("a.py", 12, 13)], 5, 10.0, False)
    r2 = score_query(qs[1], [hit("tests/t.py", 1, 2, fc=TEST)], 5, 30.0, True)
    r3 = score_query(qs[2], [hit("z.py", 1, 2, score=0.25)], 5, 20.0, False)
    assert (r1.first_rank, r1.hit_at_1, r1.hit_at_k, r1.reciprocal_rank) == (2, False, True, 0.5)
    assert (r1.wasted, r1.slots) == (1, 2)
    assert (r2.wasted, r2.slots) == (0, 0)  # a tests question: test hits are not waste
    assert r3.absent and not r3.hit_at_k and (r3.wasted, r3.slots) == (0, 0)
    rep = aggregate("x", {}, [r1, r2, r3], qs)
    assert rep.n == 2 and rep.absent_n == 1
    assert rep.hit_at_1 == 0.5  # q2 at rank 1, q1 at rank 2
    assert rep.hit_at_k == 1.0
    assert rep.mrr == pytest.approx((0.5 + 1.0) / 2)
    assert rep.wasted_share == 0.5 and (rep.wasted_slots, rep.counted_slots) == (1, 2)
    assert rep.latency_p50_ms == 20.0 and rep.latency_p95_ms == 30.0
    assert rep.absent_mean_top_score == 0.25
    assert rep.symbol_hit_at_k is None and rep.symbol_n == 0
    assert rep.by_tag["tests"] == {
        "n": 1,
        "hit_at_1": 1.0,
        "hit_at_k": 1.0,
        "ndcg_at_10": 1.0,
        "file_hit_at_1": 1.0,
        "file_hit_at_5": 1.0,
        "file_mrr": 1.0,
    }
    assert "absent" not in rep.by_tag


def test_compare_orients_pairs_against_the_baseline():
    qs = _queries()[:2]

    def rep(name, ranks):
        rs = []
        for q, r in zip(qs, ranks, strict=True):
            hits = [hit("zz", 1, 1)] * (r - 1) + [hit(q.expected[0].path, 1, 99)] if r else []
            rs.append(score_query(q, hits, 5, 1.0, False))
        return aggregate(name, {}, rs, qs)

    a, base = rep("a", [1, None]), rep("base", [None, None])
    pairs = compare([a, base], baseline="base")
    pk = next(p for p in pairs if p.metric == "hit@k")
    assert (pk.a, pk.b, pk.a_only, pk.b_only, pk.both, pk.neither) == ("base", "a", 0, 1, 0, 1)
    assert pk.p_value == 1.0


# --- configurations ---------------------------------------------------------------------------


def test_parse_config():
    assert parse_config("dense") == ConfigSpec("dense", mode="dense")
    s = parse_config("hybrid+scope+expand")
    assert (s.mode, s.scope, s.expand, s.rerank, s.variant) == ("hybrid", True, True, False, None)
    v = parse_config("hybrid+scope@noenrich")
    assert v.scope and v.enrich is False and v.variant == (None, False, False)
    assert parse_config("fts@model=foo@noenrich").variant == ("foo", False, False)
    assert parse_config("hybrid+scope@contextual").variant == (None, None, True)
    assert parse_config("hybrid@fp32").model == "minilm-fp32"
    assert parse_config("hybrid@int8").model == "minilm-int8"
    assert parse_config("hybrid+scope+nosymbol").nosymbol
    for bad in ("scope", "hybrid+fast", "hybrid@gpu", ""):
        with pytest.raises(UsageError):
            parse_config(bad)


def test_config_options_map_to_search_options():
    pytest.importorskip("askrepo.retriever")
    o = parse_config("fts").options(7)
    assert (o.mode, o.scope, o.expand, o.k) == ("fts", False, False, 10)  # NDCG@10: >= 10
    assert parse_config("fts").options(12).k == 12
    o = parse_config("hybrid+scope+expand").options(5)
    assert (o.mode, o.scope, o.expand) == ("hybrid", True, True)
    assert parse_config("hybrid+scope+rerank").options(5).k >= 20  # a pool for the reranker
    assert parse_config("hybrid").options(5).symbol_boost
    assert not parse_config("hybrid+nosymbol").options(5).symbol_boost


# --- query files ------------------------------------------------------------------------------


def test_parse_askrepo_format():
    text = json.dumps(
        [
            {
                "id": "a",
                "question": "Where is search?",
                "expected": [{"path": "r.py", "symbol": "Retriever.search"}],
                "tags": ["where", "identifier"],
            },
            {"id": "b", "question": "Lines?", "expected": [{"path": "x.py", "start_line": 3}]},
            {"id": "c", "question": "Where is Foo?", "expected": [], "absent": True},
        ]
    )
    qs = parse_queries(text)
    assert [q.id for q in qs] == ["a", "b", "c"]
    assert qs[0].expected == [Expected("r.py", None, None, "Retriever.search")]
    assert qs[0].tags == ["where", "identifier"]
    assert qs[1].expected == [Expected("x.py", 3, 3, None)]  # end defaults to start
    assert qs[2].absent and qs[2].expected == []


def test_parse_click_jsonl_format():
    lines = [
        {
            "id": "c1",
            "category": "symbol_behavior",
            "question": "Where is echo?",
            "expected": {
                "result": "answerable",
                "locations": [
                    {
                        "repo": "click",
                        "path": "src/click/utils.py",
                        "line_min": 234,
                        "line_max": 334,
                    }
                ],
            },
        },
        {
            "id": "c2",
            "question": "Where is `ClickOptionRegistry`?",
            "expected": {"result": "insufficient_evidence", "locations": []},
        },
    ]
    qs = parse_queries("\n".join(json.dumps(x) for x in lines) + "\n")
    assert qs[0].expected == [Expected("src/click/utils.py", 234, 334)]
    assert qs[0].tags == ["symbol_behavior"] and not qs[0].absent
    assert qs[1].absent and "absent" in qs[1].tags


@pytest.mark.skipif(not CLICK_JSONL.exists(), reason="shared click eval data not present")
def test_loads_the_shared_click_questions():
    qs = parse_queries(CLICK_JSONL.read_text())
    assert len(qs) == 10
    assert sum(q.absent for q in qs) == 2
    assert all(q.expected for q in qs if not q.absent)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[{}]",
        '[{"question": "no expectation"}]',
        '[{"question": "q", "expected": [{"start_line": 3}]}]',
        '{"question": "q", "expected": []}\nnot json',
        '[{"id": "x", "question": "q", "absent": true}, {"id": "x", "question": "r", '
        '"absent": true}]',
    ],
)
def test_bad_query_files_raise_usage_error(text):
    with pytest.raises(UsageError):
        parse_queries(text)


# --- a real run: fixture repo, real chunker, real embedding model, real LanceDB ---------------


def test_run_eval_on_the_fixture_repo(tmp_path):
    from typer.testing import CliRunner

    from askrepo.cli import app
    from askrepo.evaluate import run_eval
    from askrepo.indexer import index_repo
    from tests.fixture_repo import QUESTIONS, make_fixture_repo

    root = make_fixture_repo(tmp_path / "repo")
    records = [
        {"id": f"q{i}", "question": q, "expected": [{"path": p, "symbol": s}], "tags": ["how"]}
        for i, (q, p, s) in enumerate(QUESTIONS[:4])
    ]
    records += [
        {
            "id": "ident",
            "question": "retry_with_backoff",
            "expected": [{"path": "shop/http.py", "symbol": "retry_with_backoff"}],
            "tags": ["identifier"],
        },
        {"id": "none", "question": "Where is `PaymentGatewayAdapter`?", "absent": True},
    ]
    qfile = root / "eval" / "queries.json"  # inside the repo, so it gets indexed too
    qfile.parent.mkdir()
    qfile.write_text(json.dumps(records))
    queries = parse_queries(qfile.read_text())
    index_repo(root)

    configs = ["fts", "hybrid", "hybrid+scope", "hybrid+scope+rerank", "hybrid+scope@contextual"]
    rep = run_eval(root, queries, configs, k=5, queries_file=str(qfile))
    ctx = rep.config("hybrid+scope@contextual")
    assert ctx.status == "skipped" and "--with-llm" in ctx.reason
    # the question file itself is indexed but never scored (its text matches every question)
    assert rep.hidden_path == "eval/queries.json"
    assert not any(t.startswith("eval/") for c in rep.configs for r in c.queries for t in r.top)
    assert [c.name for c in rep.configs] == configs
    assert (rep.n_questions, rep.n_answerable, rep.n_absent) == (6, 5, 1)
    assert rep.baseline == "hybrid+scope" and rep.index["chunk_count"] > 0
    fts = rep.config("fts")
    assert fts.status == "ok" and fts.n == 5 and fts.absent_n == 1
    ident = next(r for r in fts.queries if r.id == "ident")
    assert ident.first_rank == 1 and ident.top[0].startswith("shop/http.py:")
    for c in rep.configs[:3]:
        assert c.status == "ok"
        assert 0.0 <= c.hit_at_1 <= c.hit_at_k <= 1.0
        assert 0.0 <= c.mrr <= 1.0 and c.latency_p50_ms <= c.latency_p95_ms
        assert len(c.queries) == 6
    # dense contributes to hybrid, so every hybrid list is full: dropped hits were replaced
    assert all(len(r.top) == 5 for c in rep.configs[1:3] for r in c.queries)
    # the scoped default never spends a slot on tests/docs for these code questions
    assert rep.config("hybrid+scope").wasted_slots == 0
    rerank = rep.config("hybrid+scope+rerank")
    if rerank.status == "skipped":  # reported, never dropped
        assert "reranker model not available offline" in rerank.reason
    pairs = [p for p in rep.comparisons if p.metric == "hit@k"]
    assert len(pairs) == (3 if rerank.status == "skipped" else 6)
    assert all(p.a_only + p.b_only + p.both + p.neither == 5 for p in pairs)
    ids = rep.identifiers
    assert (ids.absent_n, ids.absent_refused, ids.answerable_n, ids.answerable_refused) == (
        1,
        1,
        5,
        0,
    )
    assert ids.details["ident"] == {"names": ["retry_with_backoff"], "missing": []}
    assert ids.details["none"]["missing"] == ["PaymentGatewayAdapter"]
    json.dumps(rep.to_dict())  # serializable

    result = CliRunner().invoke(
        app,
        ["eval", "--repo", str(root), "--queries", str(qfile), "-c", "fts,hybrid+scope", "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["name"] for c in data["configs"]] == ["fts", "hybrid+scope"]
    assert data["configs"][0]["hit_at_k"] == fts.hit_at_k  # deterministic

    table = CliRunner().invoke(
        app, ["eval", "--repo", str(root), "--queries", str(qfile), "-c", "fts,hybrid+scope"]
    )
    assert table.exit_code == 0, table.output
    assert "hit@5" in table.stdout and "McNemar" in table.stdout


def test_eval_without_an_index_raises_no_index_error(tmp_path):
    from askrepo.errors import NoIndexError
    from askrepo.evaluate import run_eval

    q = [EvalQuery("a", "where?", [Expected("x.py", 1, 2)])]
    with pytest.raises(NoIndexError):
        run_eval(tmp_path, q, ["fts"], k=5)


def test_drop_path_keeps_k_ranked_and_k_expanded():
    from dataclasses import replace

    hits = [hit("q.json", 1, 2), hit("a.py", 1, 2), hit("q.json", 5, 6), hit("b.py", 1, 2)]
    hits += [hit("c.py", 1, 2), replace(hit("d.py", 1, 2), expanded_from="a.py:1-2")]
    out = drop_path(hits, "q.json", 2)
    assert [h.path for h in out] == ["a.py", "b.py", "d.py"]


def test_hits_after_the_top_k_count_only_for_hit_in_returned():
    # Expansion appends hits after the top k: they do not change hit@k.
    q = EvalQuery("q", "where is a", [Expected("a.py", 10, 20)])
    hits = [hit("z.py", i, i) for i in range(1, 6)] + [hit("a.py", 12, 14)]
    r = score_query(q, hits, 5, 1.0, False)
    assert (r.hit_at_k, r.hit_in_returned, r.returned, r.first_rank) == (False, True, 6, None)
    rep = aggregate("x", {}, [r], [q])
    assert (rep.hit_at_k, rep.hit_in_returned, rep.mean_returned) == (0.0, 1.0, 6.0)


def test_contextual_variant_builds_an_index_with_llm_summaries(tmp_path):
    from askrepo.evaluate import run_eval
    from askrepo.indexer import index_repo
    from tests.fixture_repo import QUESTIONS, make_fixture_repo

    class SummaryLLM:
        name, model, context_tokens = "fake", "fake", 2048
        calls = 0

        def count_tokens(self, text):
            return len(text) // 4

        def generate(self, prompt, **kw):
            SummaryLLM.calls += 1
            return "Part of the shop example."

    root = make_fixture_repo(tmp_path / "repo")
    index_repo(root)
    q, p, s = QUESTIONS[0]
    queries = parse_queries(json.dumps([{"id": "a", "question": q, "expected": [{"path": p}]}]))
    rep = run_eval(root, queries, ["hybrid+scope@contextual"], k=5, with_llm=True, llm=SummaryLLM())
    assert rep.config("hybrid+scope@contextual").status == "ok"
    assert SummaryLLM.calls > 10  # one summary per chunk of the variant index


# --- benchmark format, NDCG and file metrics, ablations, manifests ------------------------------


def test_parse_benchmark_format():
    text = json.dumps(
        [
            {
                "query": "where are retries handled",
                "relevant": ["shop/http.py", {"path": "shop/a.py", "start_line": 3, "end_line": 9}],
                "secondary": [{"path": "shop/b.py", "start_line": 5}],
                "category": "semantic",
                "language": "python",
            },
            {"query": "Field", "relevant": ["m/fields.py"], "category": "symbol", "id": "f"},
        ]
    )
    q1, q2 = parse_queries(text)
    assert q1.id == "q1" and q1.question == "where are retries handled"
    assert q1.expected == [Expected("shop/http.py"), Expected("shop/a.py", 3, 9)]
    assert q1.secondary == [Expected("shop/b.py", 5, 5)]
    assert q1.tags == ["semantic"] and q1.language == "python" and not q1.absent
    assert (q2.id, q2.tags, q2.secondary, q2.language) == ("f", ["symbol"], [], None)
    for bad in ('[{"query": "x", "relevant": []}]', '[{"query": "x", "relevant": [{"a": 1}]}]'):
        with pytest.raises(UsageError):
            parse_queries(bad)


def test_parse_config_ablations():
    s = parse_config("hybrid+scope-priors-defs")
    assert s.scope and s.disabled == ("priors", "defs")
    from askrepo.ranking import STAGES

    assert parse_config("hybrid+scope-ranking").disabled == STAGES  # every stage, in order
    assert len(STAGES) == 26 and STAGES[0] == "adaptive" and STAGES[-1] == "frames"
    o = parse_config("hybrid+scope-trivial").options(5)
    assert o.disabled == ("trivial",) and o.k == 10  # NDCG@10 needs ten hits
    f = parse_config("hybrid+scope+files")
    assert f.files and f.options(5).max_per_file == 0 and f.options(5).k == 20
    # as search --files: no expansion, and its pool ranked without the tail stage
    fx = parse_config("hybrid+scope+expand+files-priors").options(5)
    assert fx.expand is False and fx.disabled == ("priors", "tail")
    with pytest.raises(UsageError):
        parse_config("hybrid-bogus")


def test_score_query_ndcg_and_file_metrics_hand_worked():
    q = EvalQuery(
        "q",
        "?",
        [Expected("a.py", 10, 20), Expected("c.py")],
        secondary=[Expected("b.py", 1, 5)],
    )
    hits = [hit("x.py", 1, 9), hit("a.py", 15, 30), hit("x.py", 40, 50), hit("b.py", 1, 2)]
    r = score_query(q, hits, 5, 1.0, False)
    # relevant a.py at rank 2: 1/log2(3) = .6309; secondary b.py at rank 4: .5/log2(5) = .2153
    # ideal: 1 + 1/log2(3) + .5/log2(4) = 1.8809 -> NDCG = .8462 / 1.8809 = .4499
    assert r.ndcg_at_10 == pytest.approx(0.4499, abs=1e-4)
    # distinct files: x.py, a.py, b.py -> first relevant file at rank 2
    assert (r.file_rank, r.file_hit_at_1, r.file_hit_at_5) == (2, False, True)
    assert r.file_reciprocal_rank == 0.5
    agg = aggregate("c", {}, [r], [q])
    assert agg.ndcg_at_10 == pytest.approx(0.4499, abs=1e-4) and agg.file_mrr == 0.5


def test_file_results_one_per_file_in_rank_files_order():
    from askrepo.evaluate import file_results

    hits = [
        hit("a.py", 1, 2, score=0.5),
        hit("b.py", 1, 2, score=0.4),
        hit("b.py", 5, 6, score=0.3),
    ]
    out = file_results(hits)
    # a: 0.5; b: 0.4 + 0.5 * 0.3 = 0.55
    assert [(h.path, h.rank, round(h.score, 2)) for h in out] == [
        ("b.py", 1, 0.55),
        ("a.py", 2, 0.5),
    ]


def test_manifest_errors(tmp_path):
    from askrepo.evaluate import load_manifest

    with pytest.raises(UsageError):
        load_manifest(tmp_path / "none.json")
    bad = tmp_path / "m.json"
    bad.write_text('[{"repo": "x"}]')
    with pytest.raises(UsageError):
        load_manifest(bad)
    bad.write_text('[{"repo": "$HOME/x", "queries": "q/p.json", "language": "go"}]')
    (e,) = load_manifest(bad)
    assert e.name == "p" and e.queries == tmp_path / "q" / "p.json" and e.language == "go"
    assert "$HOME" not in str(e.repo)
    (tmp_path / "q").mkdir()
    for n in ("b", "a"):
        (tmp_path / "q" / f"{n}.json").write_text("[]")
    bad.write_text('[{"repo": "/c/{name}", "queries": "q/*.json"}]')
    assert [(e.name, str(e.repo)) for e in load_manifest(bad)] == [("a", "/c/a"), ("b", "/c/b")]


def test_run_suite_pools_repositories(tmp_path):
    from typer.testing import CliRunner

    from askrepo.cli import app
    from askrepo.evaluate import load_manifest, run_suite
    from askrepo.indexer import index_repo
    from tests.fixture_repo import QUESTIONS, make_fixture_repo

    root = make_fixture_repo(tmp_path / "repo")
    index_repo(root)
    records = [
        {"query": q, "relevant": [p], "category": "semantic" if i % 2 else "architecture"}
        for i, (q, p, _s) in enumerate(QUESTIONS[:4])
    ]
    records.append(
        {"query": "retry_with_backoff", "relevant": ["shop/http.py"], "category": "symbol"}
    )
    (tmp_path / "shop.json").write_text(json.dumps(records))
    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        json.dumps(
            [
                {"name": "shop", "repo": "repo", "queries": "shop.json", "language": "python"},
                {"name": "gone", "repo": "nowhere", "queries": "shop.json", "language": "go"},
            ]
        )
    )
    configs = ["hybrid+scope", "hybrid+scope-ranking", "hybrid+scope+files"]
    rep = run_suite(load_manifest(manifest), configs, k=5, manifest=str(manifest))
    assert [m["name"] for m in rep.missing] == ["gone"]
    assert len(rep.repos) == 1 and [c.name for c in rep.pooled] == configs
    base = rep.pooled[0]
    assert base.status == "ok" and base.n == 5
    assert set(base.by_language) == {"python"} and base.by_language["python"]["n"] == 5
    assert set(base.by_tag) == {"architecture", "semantic", "symbol"}
    assert 0.0 <= base.ndcg_at_10 <= 1.0 and base.file_hit_at_1 <= base.file_hit_at_5
    sym = next(r for r in base.queries if r.id.startswith("shop:") and r.id.endswith("q5"))
    assert sym.file_rank == 1  # the definition of a bare symbol comes first
    files = rep.pooled[2]
    assert all(len({t.split(":")[0] for t in r.top}) == len(r.top) for r in files.queries)
    json.dumps(rep.to_dict())

    result = CliRunner().invoke(app, ["eval", "--manifest", str(manifest), "-c", "hybrid+scope"])
    assert result.exit_code == 0, result.output
    assert "nDCG@10 per language" in result.stdout and "gone" in result.stdout


@pytest.mark.parametrize(
    "record, says",
    [
        ({"question": "x", "expected": [{"path": "a.go", "start_line": "a"}]},
         "record 1: start_line must be a whole number (got 'a')"),
        ({"question": "x", "expected": [{"path": "a.go", "start_line": -5}]},
         "record 1: start_line must be 1 or more"),
        ({"question": "x", "expected": [{"path": "a.go", "start_line": 10, "end_line": 5}]},
         "record 1: the end line 5 is before the start line 10"),
        ({"question": "  ", "expected": [{"path": "a.go"}]}, "record 1: the question is empty"),
        ({"query": "x", "relevant": [{"path": "a.go", "start_line": True}]},
         "record 1: start_line must be a whole number (got True)"),
        ({"question": "x", "expected": {"locations": [{"path": "a.go", "line_min": "1x"}]}},
         "record 1: line_min must be a whole number"),
        # str.isdigit() took these, then int() raised ValueError (a traceback, not one line)
        ({"question": "x", "expected": [{"path": "a.go", "start_line": "²"}]},
         "record 1: start_line must be a whole number (got '²')"),
        ({"question": "x", "expected": [{"path": "a.go", "start_line": "9" * 5000}]},
         "record 1: start_line must be a whole number"),
        # a signed string is read as the number it is, as an int -5 is
        ({"question": "x", "expected": [{"path": "a.go", "start_line": "-5"}]},
         "record 1: start_line must be 1 or more — lines count from 1 (got -5)"),
    ],
)  # fmt: skip
def test_bad_question_records_are_one_line_usage_errors(record, says):
    with pytest.raises(UsageError, match=re.escape(says)):
        parse_queries(json.dumps([record]), "q.json")
    # a line number written as a string of digits is fine
    ok = parse_queries(
        json.dumps([{"question": "x", "expected": [{"path": "a", "start_line": "3"}]}])
    )
    assert (ok[0].expected[0].start_line, ok[0].expected[0].end_line) == (3, 3)


def test_a_question_file_that_is_not_text_is_a_usage_error(tmp_path):
    from askrepo.evaluate import load_queries

    f = tmp_path / "bin.json"
    f.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UsageError, match="is not UTF-8 text"):
        load_queries(f)


def test_unreachable_targets_name_the_question_and_the_path():
    from askrepo.evaluate import unreachable_targets

    qs = [
        EvalQuery(id="ok", question="x", expected=[Expected(path="router.go")]),
        EvalQuery(
            id="typo",
            question="y",
            expected=[Expected(path="routr.go")],
            secondary=[Expected(path="../../etc/passwd")],
        ),
    ]
    assert unreachable_targets(qs, {"router.go"}) == [
        "typo: routr.go is not an indexed file — no search can find it",
        "typo: ../../etc/passwd is not an indexed file — no search can find it",
    ]
