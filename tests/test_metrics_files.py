"""Worked numbers for the shared ranking metrics and file aggregation."""

import math
from types import SimpleNamespace as NS

from askrepo.files import extend_files, rank_files, subject_files, vote_by_tests
from askrepo.metrics import (
    covers,
    file_hit_at,
    file_rank,
    file_reciprocal_rank,
    ndcg_at_k,
)


def r(path, a=1, b=10, score=0.0, symbol=None):
    return NS(path=path, start_line=a, end_line=b, score=score, symbol=symbol, file_class="code")


def t(path, a=None, b=None):
    return NS(path=path, start_line=a, end_line=b)


def test_covers_whole_file_and_span():
    assert covers(r("a.py", 5, 9), t("a.py"))
    assert covers(r("a.py", 5, 9), t("a.py", 9, 20))
    assert not covers(r("a.py", 5, 9), t("a.py", 10, 20))
    assert not covers(r("b.py"), t("a.py"))


def test_a_symbol_target_is_covered_by_a_chunk_of_that_symbol():
    # as hit@k counts it (evaluate.is_hit): not by another chunk of the same file
    target = NS(path="core.py", start_line=None, end_line=None, symbol="Context.invoke")
    assert covers(r("core.py", 800, 870, symbol="Context.invoke"), target)
    assert covers(r("core.py", 800, 870, symbol="click.Context.invoke"), target)
    assert not covers(r("core.py", 1, 40, symbol="Context.__init__"), target)
    res = [
        r("core.py", 1, 40, symbol="Context.__init__"),
        r("core.py", 800, 870, symbol="Context.invoke"),
    ]
    assert math.isclose(ndcg_at_k(res, [target]), 1 / math.log2(3))  # rank 2, not rank 1


def test_ndcg_worked_numbers():
    # relevant target found at rank 2, the other not at all: dcg = 1/log2(3); ideal 1 + 1/log2(3)
    res = [r("x.py"), r("a.py"), r("y.py")]
    got = ndcg_at_k(res, [t("a.py"), t("b.py")], k=10)
    assert math.isclose(got, (1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # perfect ranking
    assert ndcg_at_k([r("a.py"), r("b.py")], [t("a.py"), t("b.py")]) == 1.0
    # a secondary target (gain 0.5) at rank 1, relevant at rank 2
    got = ndcg_at_k([r("s.py"), r("a.py")], [t("a.py")], secondary=[t("s.py")])
    assert math.isclose(got, (0.5 + 1 / math.log2(3)) / (1 + 0.5 / math.log2(3)))
    # a target counted once, at its first covering result
    assert ndcg_at_k([r("a.py"), r("a.py")], [t("a.py")]) == 1.0
    assert ndcg_at_k([r("x.py")] * 10 + [r("a.py")], [t("a.py")], k=10) == 0.0
    assert ndcg_at_k([r("a.py")], []) == 0.0


def test_file_ranks():
    res = [r("x.py"), r("x.py"), r("a.py"), r("b.py")]
    assert file_rank(res, [t("a.py", 1, 2)]) == 2
    assert file_hit_at(res, [t("a.py")], 2) and not file_hit_at(res, [t("b.py")], 2)
    assert file_reciprocal_rank(res, [t("b.py")]) == 1 / 3
    assert file_reciprocal_rank(res, [t("q.py")]) == 0.0


def test_rank_files_decay_and_ties():
    hits = [
        r("one.py", 1, 5, 0.9, "f"),
        r("two.py", 1, 5, 0.6, "g"),
        r("two.py", 9, 12, 0.6, "h"),
        r("three.py", 1, 5, 0.3),
    ]
    files = rank_files(hits)
    # two.py: 0.6 + 0.5*0.6 = 0.9 ties one.py (0.9): first appearance wins
    assert [f.path for f in files] == ["one.py", "two.py", "three.py"]
    assert files[1].score == 0.9 and files[1].chunks == 2
    assert files[0].best == {"start_line": 1, "end_line": 5, "symbol": "f"}
    assert [f.rank for f in files] == [1, 2, 3]
    assert "hits" not in files[0].to_dict()


def test_ndcg_is_capped_at_one_when_a_chunk_covers_two_targets():
    from types import SimpleNamespace as NS

    from askrepo.metrics import ndcg_at_k

    one = NS(path="a.py", start_line=1, end_line=50)
    targets = [
        NS(path="a.py", start_line=5, end_line=9),
        NS(path="a.py", start_line=20, end_line=30),
    ]
    # DCG 1 + 1 = 2 > ideal 1 + 1/log2(3) = 1.63: capped
    assert ndcg_at_k([one], targets) == 1.0


def test_extend_files_appends_the_missing_files_of_a_deeper_list():
    top = rank_files([r("big.py", 1, 5, 0.9, "f"), r("big.py", 9, 12, 0.8, "g")])
    deeper = [
        r("big.py", 1, 5, 0.9, "f"),
        r("other.py", 1, 5, 1.5, "h"),  # above big.py's 1.3: capped just under it
        r("big.py", 20, 30, 0.5, "k"),
        r("third.py", 3, 4, 0.1),
        r("fourth.py", 3, 4, 0.05),
    ]
    files = extend_files(top, deeper, 3)
    assert [(f.rank, f.path) for f in files] == [(1, "big.py"), (2, "other.py"), (3, "third.py")]
    assert files[0].score == 0.9 + 0.5 * 0.8  # the ranked file keeps its score
    assert files[1].score == round(1.3 * 0.999, 6) and files[2].score == 0.1
    assert extend_files(top, deeper, 1) == top


def test_subject_files_reads_the_test_naming_conventions():
    code = [
        "src/pip/network/auth.py",
        "src/pip/cli/auth.py",
        "src/pip/req/req_file.py",
        "src/client/session.ts",
        "pkg/mux/route.go",
        "src/main/java/com/x/HttpClient.java",
        "lib/faraday/request.rb",
        "src/pip/commands/show.py",
    ]
    assert subject_files("tests/unit/test_network_auth.py", code) == ["src/pip/network/auth.py"]
    assert subject_files("tests/unit/test_req_file.py", code) == ["src/pip/req/req_file.py"]
    assert subject_files("tests/functional/test_command_show.py", code) == [  # commands ~ command
        "src/pip/commands/show.py"
    ]
    assert subject_files("src/client/session.test.ts", code) == ["src/client/session.ts"]
    assert subject_files("pkg/mux/route_test.go", code) == ["pkg/mux/route.go"]
    assert subject_files("src/test/java/com/x/HttpClientTest.java", code) == [
        "src/main/java/com/x/HttpClient.java"
    ]
    assert subject_files("spec/faraday/request_spec.rb", code) == ["lib/faraday/request.rb"]
    # two files of that name: the one sharing more directory words with the test, else both
    assert subject_files("tests/cli/test_auth.py", code) == ["src/pip/cli/auth.py"]
    assert sorted(subject_files("tests/test_auth.py", code)) == [
        "src/pip/cli/auth.py",
        "src/pip/network/auth.py",
    ]
    # not named for a file: a fixture module, a helper, a name no code file has
    for path in ("tests/conftest.py", "tests/helpers.py", "tests/test_resolver.py"):
        assert subject_files(path, code) == []


def test_vote_by_tests_worked_numbers():
    files = rank_files(
        [r("src/a.py", score=0.050), r("src/b.py", score=0.045), r("src/c.py", score=0.040)]
    )
    code = ["src/a.py", "src/b.py", "src/c.py", "lib/c.py", "src/d.py"]
    tests = [
        NS(path="tests/test_c.py", score=0.060),  # src/c.py and lib/c.py share the vote
        NS(path="tests/test_b.py", score=0.040),
        NS(path="tests/test_b.py", score=0.020),  # its second chunk counts FILE_DECAY = 0.5
        NS(path="tests/test_d.py", score=0.080),  # src/d.py is not among the files: no vote
        NS(path="tests/conftest.py", score=0.090),  # names no file
    ]
    notes: list[str] = []
    voted = vote_by_tests(files, tests, code, weight=0.25, notes=notes)
    got = [(f.rank, f.path, f.score) for f in voted]
    assert notes == ["tests/test_c.py → src/c.py", "tests/test_b.py → src/b.py"]
    # b: 0.045 + 0.25 * (0.040 + 0.5 * 0.020) = 0.0575; c: 0.040 + 0.25 * 0.060 / 2 = 0.0475
    assert got == [(1, "src/b.py", 0.0575), (2, "src/a.py", 0.05), (3, "src/c.py", 0.0475)]
    # no test names a listed file: the list as it was
    assert vote_by_tests(files, tests[3:], code) == files
