"""End to end with the real default embedding model, real tree-sitter and real LanceDB."""

from __future__ import annotations

import json

import pytest

from askrepo import ranking
from askrepo.indexer import index_repo
from askrepo.retriever import Retriever, SearchOptions
from tests.fixture_repo import QUESTIONS, askrepo_home, make_fixture_repo, run_cli


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    home = tmp_path_factory.mktemp("home-e2e")
    with askrepo_home(home):
        root = make_fixture_repo(tmp_path_factory.mktemp("fx") / "repo")
        summary = index_repo(root)
        yield root, home, summary


@pytest.fixture
def retriever(indexed, monkeypatch):
    root, home, _ = indexed
    monkeypatch.setenv("ASKREPO_HOME", str(home))
    return Retriever.open(root)


def _rank(hits, path, symbol):
    for h in hits:
        if h.path == path and h.symbol == symbol:
            return h.rank
    return None


def test_summary_of_real_index(indexed):
    _, _, s = indexed
    assert s.model_id.startswith("all-MiniLM-L6-v2")
    assert s.chunks_total > 20 and s.files_total > 10
    assert s.redactions >= 2  # the fake AWS key and password in shop/settings.py
    assert {"python", "javascript", "go"} <= set(s.chunks_by_language)


def test_natural_language_questions_find_the_function(retriever):
    ranks = {q: _rank(retriever.search(q, SearchOptions(k=5)).hits, p, s) for q, p, s in QUESTIONS}
    assert all(r is not None for r in ranks.values()), ranks
    firsts = sum(r == 1 for r in ranks.values())
    assert firsts >= len(QUESTIONS) // 2, ranks
    q = "how is a discount code applied to a price?"
    assert ranks[q] == 1


def test_infile_stage_brings_in_the_best_files_chunks(retriever):
    q = "how does a user session get logged out or expire?"
    res = retriever.search(q, SearchOptions(k=10))
    best = res.hits[0].path
    ranked = [h for h in res.hits if "infile" in h.sources]
    assert ranked and {h.path for h in ranked} == {best}  # only the best file's chunks
    assert sorted(h.sources["infile"] for h in ranked)[0] == 1
    off = retriever.search(q, SearchOptions(k=10, disabled=("infile",)))
    assert not any("infile" in h.sources for h in off.hits)
    # a symbol query never takes this path
    sym = retriever.search("authenticate_user", SearchOptions(k=10))
    assert not any("infile" in h.sources for h in sym.hits)


def test_feedback_stage_searches_the_first_hits_words_again(retriever):
    q = "how does a user session get logged out or expire?"
    res = retriever.search(q, SearchOptions(k=10))
    fed = [h for h in res.hits if "feedback" in h.sources]
    assert fed and min(h.sources["feedback"] for h in fed) == 1
    top = [h.text for h in res.hits[: ranking.FEEDBACK_DOCS]]
    words = retriever.store.feedback_query(top, q, ranking.FEEDBACK_TERMS).split()
    assert 0 < len(words) <= ranking.FEEDBACK_TERMS
    assert not {"session", "user", "expire"} & set(words)  # the question's own words are out
    off = retriever.search(q, SearchOptions(k=10, disabled=("feedback",)))
    assert not any("feedback" in h.sources for h in off.hits)
    sym = retriever.search("authenticate_user", SearchOptions(k=10))  # a symbol query: never
    assert not any("feedback" in h.sources for h in sym.hits)


def test_explain_says_which_hits_the_feedback_list_ranked(indexed):
    root, home, _ = indexed
    q = "how does a user session get logged out or expire?"
    p = run_cli("search", q, "--repo", str(root), "-k", "10", "--explain", home=home)
    assert p.returncode == 0, p.stderr
    assert "by the first hits' words" in " ".join(p.stdout.split())


@pytest.mark.parametrize(
    "query, path, symbol",
    [
        ("authenticate_user", "shop/auth.py", "authenticate_user"),
        ("where is `load_config` defined?", "shop/config.py", "load_config"),
        ("SessionStore.expire", "shop/auth.py", "SessionStore.expire"),
        ("renderCart", "web/app.js", "renderCart"),
    ],
)
def test_exact_identifier_ranks_its_definition_first(retriever, query, path, symbol):
    hits = retriever.search(query, SearchOptions(k=5)).hits
    assert (hits[0].path, hits[0].symbol) == (path, symbol)


def test_scope_filter_and_override(retriever):
    default = retriever.search("authenticate_user", SearchOptions(k=10)).hits
    assert all(h.file_class not in ("test", "doc") for h in default)
    about_tests = retriever.search("where is authenticate_user tested?", SearchOptions(k=10)).hits
    assert any(h.file_class == "test" for h in about_tests)
    forced = retriever.search("authenticate_user", SearchOptions(k=10, include_tests=True)).hits
    assert any(h.file_class == "test" for h in forced)


def test_a_repository_of_only_docs_searches_its_docs(tmp_path):
    """A repository of Markdown only: every chunk is a doc, and the default scope (docs left
    out) answered `No results` for any question. With no code or config indexed, docs and
    tests are what there is to search; asking for them to be left out still does."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("# Widget\n\n## Usage\n\nCall frobnicate to frob.\n")
    (root / "notes.md").write_text("# Notes\n\nThe frobnicator handles retries.\n")
    with askrepo_home(tmp_path / "home"):
        index_repo(root)
        retriever = Retriever.open(root)
        hits = retriever.search("frobnicate", SearchOptions(k=5)).hits
        assert hits and {h.path for h in hits} == {"README.md", "notes.md"}
        assert "docs excluded" not in retriever.search("frobnicate").filters
        files = retriever.search_files("how do I frob?", SearchOptions(k=5)).files
        assert {f.path for f in files} == {"README.md", "notes.md"}
        off = retriever.search("frobnicate", SearchOptions(include_docs=False)).hits
        assert off == []
        # code indexed since, by a run the same open retriever picks up (store.refresh): the
        # docs-only answer is the new file list's, not the one cached when it was opened
        (root / "frob.py").write_text("def frobnicate(x):\n    return x\n")
        index_repo(root)
        res = retriever.search("frobnicate")
        assert "docs excluded" in res.filters and [h.path for h in res.hits] == ["frob.py"]


REPORT = (
    "Login rejects a correct password after upgrading. Our tests started failing this morning "
    "and the docs say nothing about a migration. Steps to reproduce: create a user, hash the "
    "password, log in with the same password again; authenticate_user returns False. Expected "
    "True, as before the upgrade. We run the test suite on Python 3.11 with the default salt "
    "length and nothing else changed in our settings or our environment."
)


def test_a_pasted_report_mentioning_tests_still_searches_code(retriever):
    # words in a report describe the reporter's situation; the fix is in the code
    hits = retriever.search(REPORT, SearchOptions(k=10)).hits
    assert hits[0].symbol == "authenticate_user"
    assert all(h.file_class not in ("test", "doc") for h in hits)
    # a trace through a test file names it: tests come in
    trace = REPORT + '\n  File "tests/test_auth.py", line 12, in test_login\n'
    hits = retriever.search(trace, SearchOptions(k=10)).hits
    assert any(h.file_class == "test" for h in hits)
    # ... but the reporter's own test file, or notes, that are no file here bring in nothing
    for own in ('  File "tests/test_mine.py", line 3, in test_it', "see my notes.txt and guide.md"):
        hits = retriever.search(REPORT + "\n" + own + "\n", SearchOptions(k=10)).hits
        assert all(h.file_class not in ("test", "doc") for h in hits), own
    # a doc file that is one here does
    hits = retriever.search(REPORT + "\nas docs/usage.md says\n", SearchOptions(k=10)).hits
    assert any(h.file_class == "doc" for h in hits)


@pytest.mark.parametrize(
    ("query", "path", "symbol"),
    [
        ("shop.cart.Cart", "shop/cart.py", "Cart"),  # package.module.Class: no symbol spells it
        ("shop::auth::SessionStore", "shop/auth.py", "SessionStore"),
    ],
)
def test_a_qualified_name_finds_its_definition_by_location(retriever, query, path, symbol):
    res = retriever.search(query, SearchOptions(k=5))
    assert (res.hits[0].path, res.hits[0].symbol) == (path, symbol)
    assert any(f.startswith(f"`{symbol}` found by its qualifiers") for f in res.filters)


@pytest.mark.parametrize("query", ["ITERATIONS", "where is ITERATIONS defined?"])
def test_a_constant_is_found_where_it_is_given_its_value(retriever, indexed, query):
    root = indexed[0]
    lines = (root / "shop" / "auth.py").read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if t.startswith("ITERATIONS ="))
    res = retriever.search(query, SearchOptions(k=5))
    top = res.hits[0]
    assert top.path == "shop/auth.py" and top.start_line <= line <= top.end_line
    assert f"`ITERATIONS` is given its value at shop/auth.py:{line}" in res.filters


@pytest.mark.parametrize("query", ["hashPassword", "HashPassword"])
def test_a_symbol_typed_in_another_naming_style_finds_its_definition(retriever, query):
    res = retriever.search(query, SearchOptions(k=5))
    assert (res.hits[0].path, res.hits[0].symbol) == ("shop/auth.py", "hash_password")
    assert f"`{query}` found as `hash_password` (another naming style)" in res.filters


@pytest.mark.parametrize("query", ["shop/auth.py", "auth.py", "auth.py?"])
def test_a_question_that_is_only_a_file_name_lists_that_file_in_order(retriever, query):
    res = retriever.search(query, SearchOptions(k=4))
    starts = [h.start_line for h in res.hits if h.path == "shop/auth.py"]
    assert [h.path for h in res.hits[: len(starts)]] == ["shop/auth.py"] * len(starts)
    assert starts == sorted(starts) and starts[0] == 1 and len(starts) >= 3
    assert "file query: shop/auth.py in file order" in res.filters


def test_a_named_test_file_is_listed_though_tests_are_filtered(retriever):
    hits = retriever.search("tests/test_cart.py", SearchOptions(k=3)).hits
    assert hits[0].path == "tests/test_cart.py" and hits[0].file_class == "test"
    # a question about the file is a question, not a listing
    res = retriever.search("what does auth.py check?", SearchOptions(k=3))
    assert not any(f.startswith("file query") for f in res.filters)


def test_a_plain_word_the_question_calls_a_class_finds_its_definition(retriever):
    res = retriever.search("Where is the Cart class defined?", SearchOptions(k=3))
    assert (res.hits[0].path, res.hits[0].symbol) == ("shop/cart.py", "Cart")
    assert "1 exact symbol match(es) boosted" in res.filters  # looked up as a name
    # "where is X?" asks for the definition: pinned first even against a method that
    # shares the class's words
    res = retriever.search("where is the SessionStore class?", SearchOptions(k=3))
    assert (res.hits[0].symbol, res.hits[0].kind) == ("SessionStore", "class")


def test_find_symbol_reads_qualified_names_by_location(retriever):
    store = retriever.store
    assert [(c.path, c.symbol) for c in store.find_symbol("shop.cart.Cart")] == [
        ("shop/cart.py", "Cart")
    ]
    assert [c.symbol for c in store.find_symbol("Cart::total")] == ["Cart.total"]
    assert store.find_symbol("billing.invoices.Cart") == []  # no qualifier shown: not Cart


def test_a_question_that_only_mentions_tests_answers_from_the_code(retriever):
    q = "how does a session expire and log a user out, as the tests show?"
    hits = retriever.search(q, SearchOptions(k=10)).hits
    assert (hits[0].path, hits[0].symbol) == ("shop/auth.py", "SessionStore.expire")
    assert any(h.file_class == "test" for h in hits)  # tests are not filtered, only held back
    off = retriever.search(q, SearchOptions(k=10, disabled=("mentions",))).hits
    assert off[0].file_class == "test"  # the stage is what puts the code first
    # --include-tests asks for them: nothing is held back
    asked = retriever.search(q, SearchOptions(k=10, include_tests=True)).hits
    assert [(h.path, h.start_line) for h in asked] == [(h.path, h.start_line) for h in off]


def test_secrets_are_not_searchable(retriever):
    for q in ("AKIAIOSFODNN7EXAMPLE", "hunter2hunter2"):
        for mode in ("fts", "hybrid"):
            hits = retriever.search(q, SearchOptions(k=20, mode=mode, scope=False)).hits
            assert all(q not in h.text for h in hits)


def test_a_latin1_file_reads_the_same_in_search_citations_and_the_viewer(retriever, indexed):
    """shop/labels.py is Latin-1: the index, a citation check and the file viewer all read it
    through ingest.decode (no U+FFFD), so the cited lines and their hash agree everywhere."""
    from askrepo.lines import span_hash, split_lines
    from askrepo.mcp_server import Service
    from askrepo.verify import verify_citation

    root = indexed[0]
    comment = "# Libellés affichés en vitrine (encodage Latin-1 hérité)"
    hits = retriever.search("libellés affichés en vitrine", SearchOptions(k=5)).hits
    hit = next(h for h in hits if h.path == "shop/labels.py" and h.start_line <= 3 <= h.end_line)
    assert split_lines(hit.text)[3 - hit.start_line] == comment
    assert "\ufffd" not in hit.text
    check = verify_citation(root, hit.location, expected_hash=span_hash(hit.text))
    assert check.status == "valid", check.message
    shown = Service([root]).read_file("shop/labels.py", start_line=3, end_line=3)
    assert shown["content"] == f" 3 | {comment}"


def test_expand_adds_callees_marked_as_expansion(retriever):
    res = retriever.search("how is the cart total computed?", SearchOptions(k=3, expand=True))
    expanded = [h for h in res.hits if h.expanded_from]
    assert any(h.symbol == "apply_discount" for h in expanded), [
        (h.symbol, h.expanded_from) for h in res.hits
    ]


def test_cli_search_json_contract(indexed):
    root, home, _ = indexed
    p = run_cli(
        "search", "how is the cart total computed?", "--repo", str(root), "--json", home=home
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert set(data) == {
        "query", "repo", "mode", "elapsed_ms", "hits", "dense_partial",
        "indexed_commit", "head_commit", "stale", "changed_files",
    }  # fmt: skip
    assert data["mode"] == "hybrid" and data["repo"] == str(root)
    assert data["stale"] is False and data["dense_partial"] is False
    hit = data["hits"][0]
    assert set(hit) == {
        "rank", "path", "start_line", "end_line", "symbol", "kind", "language", "score",
        "sources", "expanded_from", "text", "file_class",
    }  # fmt: skip
    # both lists' ranks always; a stage that brought the hit in adds its own (`infile`, …)
    assert {"dense", "fts"} <= set(hit["sources"]), hit["sources"]
    assert all(v is None or isinstance(v, int) for v in hit["sources"].values())
    assert "total" in (hit["symbol"] or ""), hit["symbol"]
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))
    lines = (root / hit["path"]).read_text().split("\n")
    assert hit["text"] == "\n".join(lines[hit["start_line"] - 1 : hit["end_line"]])


def test_cli_human_output_and_explain(indexed):
    root, home, _ = indexed
    p = run_cli("search", "renderCart", "--repo", str(root), "--explain", home=home)
    assert p.returncode == 0, p.stderr
    assert "web/app.js:" in p.stdout and "renderCart" in p.stdout and "RRF" in p.stdout


def test_cli_missing_index_error(tmp_path):
    p = run_cli("search", "anything", "--repo", str(tmp_path), home=tmp_path / "h")
    assert p.returncode == 2
    assert "No index for" in p.stderr and "askrepo index" in p.stderr
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_search_files_for_a_pasted_bug_report(retriever, indexed):
    report = (
        "Bug: the cart total is wrong when a discount code is applied.\n"
        "Steps: add two items, apply code SAVE10, the total after tax is higher than expected.\n"
        "Expected the discount to be applied before the tax rate."
    )
    res = retriever.search_files(report, SearchOptions(k=5))
    paths = [f.path for f in res.files]
    assert paths[0] in ("shop/cart.py", "shop/pricing.py"), paths
    assert {"shop/cart.py", "shop/pricing.py"} <= set(paths)
    assert [f.rank for f in res.files] == list(range(1, len(res.files) + 1))
    assert all(a.score >= b.score for a, b in zip(res.files, res.files[1:], strict=False))

    root, home, _ = indexed
    p = run_cli("search", report, "--files", "--json", "-k", "3", "--repo", str(root), home=home)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert set(data) == {
        "query", "repo", "elapsed_ms", "files",
        "indexed_commit", "head_commit", "stale", "changed_files",
    }  # fmt: skip
    first = data["files"][0]
    assert {"rank", "path", "score", "best"} <= set(first) and len(data["files"]) <= 3
    assert set(first["best"]) == {"start_line", "end_line", "symbol"}
    p = run_cli("search", report, "--files", "--repo", str(root), home=home)
    assert p.returncode == 0 and first["path"] in p.stdout
    # "-" reads the report from standard input: the same ranking
    p = run_cli("search", "-", "--files", "--json", "-k", "3", "--repo", str(root), home=home,
                stdin=report)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (
        json.loads(p.stdout)["files"] == data["files"] and json.loads(p.stdout)["query"] == report
    )
    p = run_cli("search", "-", "--files", "--repo", str(root), home=home, stdin="  \n")
    assert p.returncode == 2 and "Nothing on standard input" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_ranking_stages_on_the_real_index(retriever):
    # a bare class name: the definition first (defs), whatever dense and FTS say
    hits = retriever.search("SessionStore", SearchOptions(k=5)).hits
    assert (hits[0].path, hits[0].symbol) == ("shop/auth.py", "SessionStore")
    # an explicit per-file cap is still honoured
    capped = retriever.search("SessionStore", SearchOptions(k=10, max_per_file=1)).hits
    assert len({h.path for h in capped}) == len(capped)
    # every stage off gives the old ranking, which still answers
    old = retriever.search("SessionStore", SearchOptions(k=5, disabled=("defs", "saturation")))
    assert old.hits and old.hits[0].path == "shop/auth.py"


LAUNCH = '''def launch(url, wait=False):
    """Open a web address in the user's default browser."""
    from ._impl import open_url

    return open_url(url, wait=wait)
'''
OPEN_URL = """import subprocess
import sys


def open_url(url, wait=False):
    if sys.platform == "darwin":
        args = ["open", url]
    elif sys.platform == "win32":
        args = ["start", url]
    else:
        args = ["xdg-open", url]
    proc = subprocess.Popen(args)
    return proc.wait() if wait else 0
"""


def test_delegate_stage_ranks_the_callee_just_above_its_thin_wrapper(tmp_path, monkeypatch):
    """Real tree-sitter, model and LanceDB: ``launch`` (its docstring is the question) ranks
    first without the stage; with it, ``open_url``, which ``launch`` returns, is first, and
    ``search --explain`` says why."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "termui.py").write_text(LAUNCH)
    (repo / "pkg" / "_impl.py").write_text(OPEN_URL)
    (repo / "pkg" / "colors.py").write_text("def style(text, fg=None):\n    return text\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    index_repo(repo)
    r = Retriever.open(repo)
    q = "launch a web address in the default browser"
    off = [h.symbol for h in r.search(q, SearchOptions(k=5, disabled=("delegate",))).hits]
    assert off.index("launch") < off.index("open_url")
    on = r.search(q, SearchOptions(k=5)).hits
    assert [h.symbol for h in on][:2] == ["open_url", "launch"]
    assert on[0].sources["delegate"] == off.index("open_url") + 1
    shown = run_cli(
        "search",
        q,
        "--repo",
        str(repo),
        "--explain",
        home=tmp_path / "home",
        env={"COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert "the thin wrapper below calls it" in shown.stdout
    # a question asking for the wrapper's callers is about the wrapper: it keeps its place
    asked = [h.symbol for h in r.search("what calls launch?", SearchOptions(k=5)).hits]
    assert asked.index("launch") < asked.index("open_url")


def test_evidence_stage_only_moves_the_cards_choice_within_the_first_file(retriever):
    """Real index: for each question, the stage's list is the list without it, except that the
    chunk ``evidence.lead_candidate`` picks among the first file's chunks in the top 8 leads."""
    from askrepo.evidence import lead_candidate
    from askrepo.ranking import EVIDENCE_POOL

    moved = 0
    # with and without the classes stage (ask's card retrieves without it): the fixture's one
    # move comes from a class that the classes stage already puts below its file's function
    runs = [(q, other) for q, _path, _symbol in QUESTIONS for other in ((), ("classes",))]
    for q, other in runs:
        off = retriever.search(q, SearchOptions(k=10, disabled=("evidence", *other))).hits
        on = retriever.search(q, SearchOptions(k=10, disabled=other)).hits
        key = [(h.path, h.start_line) for h in off]
        top = [h for h in off[:EVIDENCE_POOL] if h.path == off[0].path]
        j = lead_candidate(q, top, retriever.store.repo.name) if len(top) > 1 else 0
        lead = key.index((top[j].path, top[j].start_line))
        want = [key[lead]] + key[:lead] + key[lead + 1 :]
        assert [(h.path, h.start_line) for h in on] == want, q
        assert on[0].path == off[0].path  # the first file never changes
        if lead:
            moved += 1
            assert on[0].sources["evidence"] == lead + 1
    assert moved >= 1  # the fixture's questions do exercise a move (1 of 24 runs with MiniLM)


def test_full_text_search_runs_beside_the_embedding_and_its_errors_reach_the_caller(
    retriever, monkeypatch
):
    """The FTS list runs in a worker thread (retriever._background); the hits are the same as
    a sequential run's, and an error inside it is raised by search as before."""
    import threading

    q = "how is a discount code applied to a price?"
    seen: list[str] = []
    real_fts = retriever.store.fts

    def fts(*args):
        seen.append(threading.current_thread().name)
        return real_fts(*args)

    monkeypatch.setattr(retriever.store, "fts", fts)
    threaded = [h.location for h in retriever.search(q, SearchOptions(k=8)).hits]
    # the question's own list runs in the worker (the feedback stage's one after the fusion)
    assert seen and seen[0].startswith("askrepo-search")

    def inline(fn, *args):  # the same search with the FTS list computed in this thread
        from concurrent.futures import Future

        done: Future = Future()
        done.set_result(fn(*args))
        return done

    monkeypatch.setattr("askrepo.retriever._background", inline)
    assert [h.location for h in retriever.search(q, SearchOptions(k=8)).hits] == threaded
    assert seen[-1] == threading.current_thread().name

    def broken(*args):
        raise OSError("FTS index unreadable")

    monkeypatch.setattr(retriever.store, "fts", broken)
    with pytest.raises(OSError, match="FTS index unreadable"):
        retriever.search(q, SearchOptions(k=8))


def test_a_natural_question_reads_the_full_text_list_twice_as_deep(retriever, monkeypatch):
    """The ``deepfts`` stage: the real index is asked for 2 x 50 full-text candidates for a
    question in words, 50 for a bare name, and 50 when the stage is switched off."""
    depths: list[int] = []
    real_fts = retriever.store.fts

    def fts(query, n, classes=None, name_weight=None):
        depths.append(n)
        return real_fts(query, n, classes)

    monkeypatch.setattr(retriever.store, "fts", fts)
    fb = ("feedback",)  # its own full-text query is read at most FEEDBACK_DEPTH deep
    retriever.search("how is a discount code applied to a price?", SearchOptions(k=8, disabled=fb))
    retriever.search("apply_discount", SearchOptions(k=8))
    retriever.search(
        "how is a discount code applied to a price?",
        SearchOptions(k=8, disabled=("deepfts", *fb)),
    )
    assert depths == [100, 50, 50]
    # k = 40 reads 3 x 40 = 120 dense candidates, so 240 full-text ones
    retriever.search("how is a discount code applied to a price?", SearchOptions(k=40))
    assert depths[-2:] == [240, ranking.FEEDBACK_DEPTH]


def test_a_natural_question_reads_the_dense_list_twice_as_deep(retriever, monkeypatch):
    """The ``deepdense`` stage: in a hybrid search the real index's dense list is read 2 x 50
    deep for a question in words, 50 deep for a bare name, for the dense mode alone and when
    the stage is switched off."""
    depths: list[int] = []
    real_dense = retriever.store.dense

    def dense(vector, n, classes=None, pieces=True):
        depths.append(n)
        return real_dense(vector, n, classes, pieces)

    monkeypatch.setattr(retriever.store, "dense", dense)
    q = "how is a discount code applied to a price?"
    retriever.search(q, SearchOptions(k=8))
    retriever.search("apply_discount", SearchOptions(k=8))
    retriever.search(q, SearchOptions(k=8, mode="dense"))
    retriever.search(q, SearchOptions(k=8, disabled=("deepdense",)))
    assert depths == [100, 50, 50, 50]


PROSE_REPORT = (
    "Login fails after the session expires\n\n"
    "When a user signs in again after the session expired, authentication is refused.\n"
    "```python\n"
    "cart = Cart()\n"
    "cart.add(item, quantity=2)\n"
    "total = apply_discount(cart.total(), code)\n"
    "```\n"
)


def test_a_report_with_fenced_code_gets_a_second_full_text_list_of_its_prose(
    retriever, monkeypatch
):
    """The ``prose`` stage: for a pasted report with fenced code, the real index is searched
    twice on each side — full text (the whole report's terms, then its prose's alone) and
    dense (the report, then its prose) — and once each with the stage off, for a question and
    for a report without fences."""
    asked: list[str] = []
    embedded: list[str] = []
    real_fts, real_embed = retriever.store.fts, retriever.embedder.embed_query

    def fts(query, n, classes=None, name_weight=None):
        asked.append(query)
        return real_fts(query, n, classes)

    def embed_query(text):
        embedded.append(text)
        return real_embed(text)

    monkeypatch.setattr(retriever.store, "fts", fts)
    monkeypatch.setattr(retriever.embedder, "embed_query", embed_query)
    # which texts each search embeds: no query vector kept from one search to the next
    monkeypatch.setattr("askrepo.retriever.QUERY_VECTORS", 0)
    monkeypatch.setattr(retriever, "_query_vectors", {})
    retriever.search(PROSE_REPORT, SearchOptions(k=8, disabled=("title",)))
    assert len(asked) == 2 and len(embedded) == 2
    assert "cart" in asked[0].split() and "cart" not in asked[1].split()
    assert {"session", "expires", "login"} <= set(asked[1].split())
    assert "Cart()" in embedded[0] and "Cart()" not in embedded[1]
    assert embedded[1].startswith("Login fails after the session expires")
    asked.clear()
    embedded.clear()
    retriever.search(PROSE_REPORT, SearchOptions(k=8, disabled=("prose", "title")))
    retriever.search(
        "how is a discount code applied to a price?", SearchOptions(k=8, disabled=("feedback",))
    )
    retriever.search(REPORT, SearchOptions(k=8))  # a report without fences or a title line
    assert len(asked) == 3 and len(embedded) == 3
    # the title stage: the report's first line, when it is prose, is a dense query of its own
    embedded.clear()
    retriever.search(PROSE_REPORT, SearchOptions(k=8))
    assert embedded[-1] == "Login fails after the session expires" and len(embedded) == 3
    hits = retriever.search(PROSE_REPORT, SearchOptions(k=8)).hits
    assert any("title" in h.sources for h in hits)  # --explain shows the title list's rank
    # the prose list counts: the code the prose describes joins the reporter's cart code at
    # the top; without it, the fenced code's words fill the first places
    hits = retriever.search(PROSE_REPORT, SearchOptions(k=8)).hits
    off = retriever.search(PROSE_REPORT, SearchOptions(k=8, disabled=("prose",))).hits
    assert "shop/auth.py" in [h.path for h in hits[:3]]
    assert any("prose" in h.sources for h in hits)  # --explain shows the list's rank
    assert "shop/auth.py" not in [h.path for h in off[:3]]


def test_a_forked_child_gets_its_own_search_pool(retriever, monkeypatch):
    """The worker pool belongs to the process that made it: after a fork (seen as another
    pid) the next search makes a new pool instead of submitting to the parent's, whose threads
    do not exist in the child (its search would wait forever). A real fork of this process is
    not used: forking a process that runs LanceDB's and ONNX Runtime's threads is unsafe in
    itself, whatever askrepo does."""
    import os

    from askrepo import retriever as module

    q = "how is a discount code applied to a price?"
    first = [h.location for h in retriever.search(q, SearchOptions(k=5)).hits]
    parent_pid, parent_pool = module._POOL
    assert parent_pid == os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: parent_pid + 1)
    again = [h.location for h in retriever.search(q, SearchOptions(k=5)).hits]
    assert again == first
    assert module._POOL[0] == parent_pid + 1 and module._POOL[1] is not parent_pool


def test_files_table_keeps_paths_whole_in_a_narrow_terminal(monkeypatch):
    """``search --files`` answers with paths: an 80-column terminal cuts the best chunk's
    symbol, never the path, keeps the rank and score, and prints ``[id]`` literally."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from askrepo import cli
    from askrepo.files import FileHit

    long_path = "src/pip/_internal/resolution/resolvelib/factory.py"
    files = [
        FileHit(1, long_path, 0.0611, {"start_line": 544, "end_line": 584,
                                        "symbol": "Factory.collect_root_requirements"}),
        FileHit(2, "app/[id]/page.tsx", 0.0302, {"start_line": 1, "end_line": 9, "symbol": None}),
    ]  # fmt: skip
    buf = io.StringIO()
    monkeypatch.setattr(cli, "out", Console(file=buf, width=80, color_system=None))
    cli.print_files(SimpleNamespace(files=files, query="q"))
    lines = buf.getvalue().splitlines()
    assert lines[0].split() == ["#", "file", "score", "best"]
    assert lines[1].split()[:3] == ["1", long_path, "0.0611"]
    assert lines[2].split()[:4] == ["2", "app/[id]/page.tsx", "0.0302", "1-9"]
    assert "544-584 Factory" in lines[1] and len(lines) == 3


def test_hits_table_keeps_symbols_readable_in_a_narrow_terminal(monkeypatch):
    """On 80 columns a 58-character location left the symbol column 4 characters
    (``Logge / r.pus / hProc …``): the location now folds past what leaves the symbol 24, and
    every column keeps its width; on a wide terminal both stay on one line."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from askrepo import cli
    from askrepo.datatypes import Hit

    loc = "src/Monolog/Handler/ProcessableHandlerInterface.php"
    hits = [
        Hit(1, "src/Monolog/Logger.php", 271, 279, "Logger.pushProcessor", "method", "php",
            0.0343, {"dense": 3, "fts": 3}, None, "x"),
        Hit(2, loc, 16, 44, "ProcessableHandlerInterface", "class", "php",
            0.0298, {"dense": 2, "fts": 1}, None, "x"),
    ]  # fmt: skip
    result = SimpleNamespace(hits=hits, query="q", mode="hybrid", filters=[], elapsed_ms=9.0)

    def table(width: int, explain: bool = False) -> list[str]:
        buf = io.StringIO()
        monkeypatch.setattr(cli, "out", Console(file=buf, width=width, color_system=None))
        monkeypatch.setattr(cli, "print_snippet", lambda *a, **k: None)
        cli.print_hits(result, explain=explain)
        return buf.getvalue().splitlines()

    narrow = table(80)
    assert narrow[0].split() == ["#", "location", "symbol", "score"]
    assert narrow[1].split() == ["1", "src/Monolog/Logger.php:271-279", "Logger.pushProcessor",
                                 "0.0343"]  # fmt: skip
    # the second row folds both its location and its 27-character symbol (past 24)
    row, more = narrow[2].split(), narrow[3].split()
    assert row[0] == "2" and row[-1] == "0.0298" and len(narrow) == 4
    assert row[1] + more[0] == f"{loc}:16-44" and row[2] + more[1] == hits[1].symbol
    assert len(row[2]) == cli.SYMBOL_MIN and max(map(len, narrow)) <= 80
    wide = table(120)
    assert wide[2].split() == ["2", f"{loc}:16-44", "ProcessableHandlerInterface", "0.0298"]
    assert len(wide) == 3
    # --explain on 80 columns: no room for a note column beside 24 of symbol, so the notes
    # (where each hit came from) are listed under the table instead
    explained = table(80, explain=True)
    assert explained[0].split() == ["#", "location", "symbol", "score", "dense", "fts"]
    assert "Logger.pushProcessor" in explained[1].split()
    assert [line for line in explained if line[:2] in ("1:", "2:")] == ["1: code", "2: code"]
    assert max(map(len, explained)) <= 80
    assert table(200, explain=True)[0].split()[-1] == "note"


def test_hits_table_headers_never_fold_above_short_names(monkeypatch):
    """A 5-letter symbol (``ro_fn``) beside a short location (``x.py:1-2``) made the columns
    narrower than their headers: ``symbo`` / ``l``. Both ``search`` and ``ask`` tables."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from askrepo import cli
    from askrepo.cli_ask import _locations_table
    from askrepo.datatypes import Hit

    hits = [Hit(1, "x.py", 1, 2, "ro_fn", "function", "python", 0.1, {}, None, "x")]
    buf = io.StringIO()
    monkeypatch.setattr(cli, "out", Console(file=buf, width=80, color_system=None))
    monkeypatch.setattr(cli, "print_snippet", lambda *a, **k: None)
    cli.print_hits(SimpleNamespace(hits=hits, query="q"))
    lines = buf.getvalue().splitlines()
    assert lines[0].split() == ["#", "location", "symbol", "score"] and len(lines) == 2
    buf = io.StringIO()
    console = Console(file=buf, width=80, color_system=None)
    t = _locations_table(console, "Sources", "#", ["a:1-2"], ["f"])
    t.add_row("[1]", "a:1-2", "f")
    console.print(t)
    assert buf.getvalue().splitlines()[1].split() == ["#", "location", "symbol"]


def test_control_characters_in_repository_text_never_reach_the_terminal(monkeypatch):
    """A file holding ``"\\x1b[31mred"`` (or a BEL, or a CSI) had its escape sequences printed
    raw by `search` and `grep`: a repository could recolour, retitle or clear the terminal.
    They are shown as visible escapes; rich's own styles still render."""
    import io
    from types import SimpleNamespace

    from askrepo import cli
    from askrepo.datatypes import Hit

    text = 'def ansi():\n    return "\x1b[31mred\x1b]0;title\x07\x9b2J"'
    hits = [Hit(1, "a\x1b[2J.py", 1, 2, "ansi", "function", "python", 0.1, {}, None, text)]
    buf = io.StringIO()
    console = cli.SafeConsole(file=buf, width=80, force_terminal=True, color_system="standard")
    monkeypatch.setattr(cli, "out", console)
    cli.print_hits(SimpleNamespace(hits=hits, query="q"))
    shown = buf.getvalue()
    assert "\x1b[31mred" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "\\x1b[31mred\\x1b]0;title" in shown and "\\x9b2J" in shown  # (rich drops BEL)
    assert "\\x1b[2J.py:1-2" in shown and "\x1b[1;36m" in shown  # rich's own style is kept


def test_ask_sources_table_folds_nothing_away(monkeypatch):
    """``ask``'s Sources table: at 80 columns the symbol keeps 24 characters beside a long
    location, and whatever folds is all there (rich had cropped a character of a folded
    symbol when the table came out one column too wide)."""
    import io

    from rich.console import Console

    from askrepo.cli_ask import _locations_table

    locs = [
        "src/Monolog/Logger.php:271-279",
        "src/Monolog/Handler/ProcessableHandlerInterface.php:16-44",
    ]
    names = ["Logger.pushProcessor", "ProcessableHandlerInterface"]
    for width in (80, 60, 36):
        buf = io.StringIO()
        console = Console(file=buf, width=width, color_system=None)
        t = _locations_table(console, "Sources", "#", locs, names)
        for i, (loc, name) in enumerate(zip(locs, names, strict=True), 1):
            t.add_row(f"[{i}]", loc, name)
        console.print(t)
        header, *lines = buf.getvalue().splitlines()[1:]
        at_loc, at_sym = header.index("location"), header.index("symbol")
        assert max(map(len, lines)) <= width
        folded_locs = "".join(line[at_loc:at_sym].strip() for line in lines)
        folded_names = "".join(line[at_sym:].strip() for line in lines)
        assert (folded_locs, folded_names) == ("".join(locs), "".join(names)), (width, lines)
        if width == 80:
            assert lines[0].split()[1:] == [locs[0], names[0]]


def write_unrelated(directory, names):
    """One small module per name, each about reading its own settings: files a search for
    something else should rank low."""
    for name in names:
        (directory / f"{name}.py").write_text(
            f"def read_{name}(filename):\n"
            f'    """Read the {name} settings from a file on disk."""\n'
            "    return open(filename).read()\n"
        )


def test_search_files_lists_k_files_when_one_large_file_fills_the_pool(tmp_path):
    """rich's progress.py filled all 20 pooled chunks of a report about the progress bar, and
    `--files -k 5` listed 2 files: the files of a deeper list now follow."""
    root = tmp_path / "repo"
    root.mkdir()
    rules = "\n\n".join(
        f"def discount_rule_{i}(price):\n"
        f'    """Apply discount rule {i} to the price of a cart item."""\n'
        f"    return price * {100 - i} / 100\n"
        for i in range(40)
    )
    (root / "discounts.py").write_text(rules + "\n")
    write_unrelated(root, ("config", "logging_setup", "paths", "cli", "version"))
    home = tmp_path / "home"
    with askrepo_home(home):
        index_repo(root)
        retriever = Retriever.open(root)
        report = "The discount applied to a cart item price is wrong"
        pool = retriever.search(report, SearchOptions(k=20, max_per_file=0))
        assert {h.path for h in pool.hits} == {"discounts.py"}  # the case being fixed
        res = retriever.search_files(report, SearchOptions(k=5))
    paths = [f.path for f in res.files]
    assert len(paths) == 5 and paths[0] == "discounts.py" and len(set(paths)) == 5
    assert all(a.score >= b.score for a, b in zip(res.files, res.files[1:], strict=False))


CONN_H = """\
#ifndef CONN_H
#define CONN_H

struct conn;
typedef struct conn conn_t;

struct query;
typedef struct query query_t;

conn_t *conn_open(const char *host);

#endif
"""

PRIVATE_H = """\
#include "conn.h"

/* One open connection to a name server. */
struct conn {
  int fd;
  unsigned int total_queries;
  const char *host;
};

/* One query in flight. */
struct query {
  unsigned short qid;
  conn_t *conn;
};
"""

QUERY_C = """\
#include "private.h"

int query(conn_t *conn, const char *name) {
  struct query q;
  q.conn = conn;
  return send_query(&q, name);
}
"""


def test_c_typedef_and_kind_word_symbol_queries(tmp_path, monkeypatch):
    """Real index of a small C library: ``conn_t`` (a typedef of ``struct conn``, defined in
    another header) finds the struct first and the typedef line next; ``struct query``
    finds the struct, not the function ``query`` in query.c."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "conn.h").write_text(CONN_H)
    (repo / "src" / "private.h").write_text(PRIVATE_H)
    (repo / "src" / "query.c").write_text(QUERY_C)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    index_repo(repo)
    r = Retriever.open(repo)
    res = r.search("conn_t", SearchOptions(k=5))
    assert (res.hits[0].path, res.hits[0].symbol) == ("src/private.h", "conn")
    assert res.hits[1].path == "src/conn.h" and res.hits[1].start_line <= 5 <= res.hits[1].end_line
    assert "`conn_t` is a typedef of `conn`" in res.filters
    bare = r.search("query", SearchOptions(k=5)).hits
    assert (bare[0].path, bare[0].kind) == ("src/query.c", "function")
    hits = r.search("struct query", SearchOptions(k=5)).hits
    assert (hits[0].path, hits[0].symbol, hits[0].kind) == ("src/private.h", "query", "class")


def test_a_symbol_querys_definition_is_followed_by_what_it_calls(tmp_path, monkeypatch):
    """Real tree-sitter, model and LanceDB: after the definition of ``send``, the
    ``neighbours`` stage raises the function it calls (in another file) and the rest of its
    file by NEIGHBOUR_FACTOR, and leaves a caller elsewhere as it was."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "net").mkdir(parents=True)
    (repo / "net" / "send.py").write_text(
        "from .lock import deliver_locked\n\n\n"
        "def send(message, timeout=5):\n"
        '    """Send one message to the peer."""\n'
        "    return deliver_locked(message, timeout)\n"
    )
    (repo / "net" / "lock.py").write_text(
        "import threading\n\n_LOCK = threading.Lock()\n\n\n"
        "def deliver_locked(message, timeout):\n"
        '    """Deliver one message while holding the lock."""\n'
        "    with _LOCK:\n"
        "        return _write(message.encode(), timeout)\n"
    )
    (repo / "net" / "batch.py").write_text(
        "from .send import send\n\n\n"
        "def flush(queue):\n"
        '    """Empty the queue."""\n'
        "    while queue:\n"
        "        send(queue.pop())\n"
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    index_repo(repo)
    r = Retriever.open(repo)
    off = r.search("send", SearchOptions(k=8, disabled=("neighbours",))).hits
    on = r.search("send", SearchOptions(k=8)).hits
    assert [h.symbol for h in off[:3]] == ["send", "flush", "deliver_locked"]
    before = {h.symbol: h.score for h in off}
    after = {h.symbol: h.score for h in on}
    assert after["send"] == before["send"]  # the definition keeps its place
    assert after["flush"] == before["flush"]  # a caller elsewhere: unchanged
    # the callee (another file) and the file's other chunk (the imports window) rise x1.5
    assert after["deliver_locked"] == pytest.approx(before["deliver_locked"] * 1.5)
    window = [h for h in on if h.path == "net/send.py" and h.symbol is None]
    assert window and window[0].score == pytest.approx(
        next(h.score for h in off if h.path == "net/send.py" and h.symbol is None) * 1.5
    )


def test_a_class_symbol_is_followed_by_its_largest_members(tmp_path, monkeypatch):
    """Real tree-sitter, model and LanceDB: after the class ``Shell`` a symbol query pins
    first come its MEMBER_LEAD largest methods by lines of code, ``print_table`` before
    ``ask``, not the one-line getters; a method of another class and a nested class's method
    never take those places. ``-members`` switches it off."""
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    getters = "".join(
        f"    def {name}(self):\n        return self._{name}\n\n" for name in ("quiet", "mute")
    )
    table = "".join(f"            row{i} = self.cell(r, {i})\n" for i in range(12))
    asked = "".join(f"        step{i} = self.prompt({i})\n" for i in range(6))
    (repo / "shell.py").write_text(
        "class Shell:\n"
        '    """A terminal shell."""\n\n'
        + getters
        + "    def print_table(self, rows):\n        for r in rows:\n"
        + table
        + "        return rows\n\n"
        + "    def ask(self, question):\n"
        + asked
        + "        return question\n\n"
        + "    class Inner:\n"
        + "        def run(self):\n"
        + "".join(f"            v{i} = {i}\n" for i in range(30))
    )
    (repo / "color.py").write_text(
        "from shell import Shell\n\n\nclass Color(Shell):\n"
        "    def paint(self, text):\n"
        + "".join(f"        text = self.wrap(text, {i})\n" for i in range(40))
        + "        return text\n"
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    index_repo(repo)
    r = Retriever.open(repo)
    on = r.search("Shell", SearchOptions(k=6)).hits
    assert [(h.symbol, h.kind) for h in on[:3]] == [
        ("Shell", "class"),
        ("Shell.print_table", "method"),
        ("Shell.ask", "method"),
    ]
    assert [h.sources.get("member") for h in on[:3]] == [None, 1, 2]  # for --explain
    lead = [h.symbol for h in on[1 : 1 + ranking.MEMBER_LEAD]]
    assert "Shell.Inner.run" not in lead and "Color.paint" not in lead
    assert [h.score for h in on] == sorted((h.score for h in on), reverse=True)
    off = r.search("Shell", SearchOptions(k=6, disabled=("members",))).hits
    assert off[0].symbol == "Shell"
    assert [h.symbol for h in off[1:3]] != ["Shell.print_table", "Shell.ask"]
    # the evidence card of `ask Shell` describes the class and the members placed after it
    from askrepo.evidence import evidence_card

    card = evidence_card("Shell", on)
    assert [s.symbol for s in card.sources[:3]] == ["Shell", "Shell.print_table", "Shell.ask"]


HAND_SCANNER = '''def scan_number(text, pos):
    """Read a numeric literal starting at pos."""
    end = pos
    while end < len(text) and (text[end].isdigit() or text[end] in ".eE+-"):
        end += 1
    return text[pos:end], end
'''


def test_a_generated_file_yields_to_hand_written_code(tmp_path, monkeypatch):
    """Real tree-sitter, model and LanceDB: the same scanner in two files, one whose header
    says it was generated. For a question in words the generated copy scores x0.7
    (PRIOR_GENERATED) of what it scores with the priors off, the hand-written one is
    unchanged and first; a symbol query and a question about generated code leave it alone."""
    import subprocess

    from askrepo import ranking

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "util.py").write_text(HAND_SCANNER)
    (repo / "pkg" / "lexer.py").write_text(
        "# Generated by make_lexer.py -- do not edit.\n\n\n" + HAND_SCANNER
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    index_repo(repo)
    r = Retriever.open(repo)
    assert r.store.generated_paths(["pkg/util.py", "pkg/lexer.py", "no/such.py"]) == {
        "pkg/lexer.py"
    }

    def scores(query, **kw):
        hits = r.search(query, SearchOptions(k=5, **kw)).hits
        return [h.path for h in hits], {(h.path, h.start_line): h.score for h in hits}

    q = "read a number literal"
    _, off = scores(q, disabled=("priors",))
    order, on = scores(q)
    assert order[0] == "pkg/util.py"
    assert on[("pkg/util.py", 1)] == off[("pkg/util.py", 1)]
    assert on[("pkg/lexer.py", 4)] == pytest.approx(0.7 * off[("pkg/lexer.py", 4)], rel=1e-3)
    for query in ("read a number literal in the generated lexer", "scan_number"):
        monkeypatch.setattr(ranking, "PRIOR_GENERATED", 1.0)
        _, plain = scores(query)
        monkeypatch.setattr(ranking, "PRIOR_GENERATED", 0.7)
        assert scores(query)[1] == plain


GO_TEMPLATES = """package cli

// HelpTemplate is the text template of the help screen: each option with its usage,
// its placeholder, its default value and the environment variables it reads.
var HelpTemplate = `NAME:
   {{.Name}} - {{.Usage}}

OPTIONS:
   {{range .Flags}}{{.Name}} {{.Placeholder}}  {{.Usage}} (default: {{.Default}}) [$ENV]
   {{end}}
`
"""

GO_FLAG = """package cli

import "fmt"

// stringifyFlag builds the one-line help description of an option.
func stringifyFlag(name, placeholder, usage, value string, envVars []string) string {
	line := fmt.Sprintf("--%s %s\\t%s", name, placeholder, usage)
	if value != "" {
		line += fmt.Sprintf(" (default: %s)", value)
	}
	for _, env := range envVars {
		line += " [$" + env + "]"
	}
	return line
}
"""


def test_a_line_window_yields_to_a_function_for_a_question_in_words(tmp_path, monkeypatch):
    """Real tree-sitter (Go), model and LanceDB: a file of help templates is one line window;
    for a question in words it scores x0.9 (WINDOW_DEMOTION) of what it scores with the
    ``windows`` stage off, the function's score is unchanged, and a symbol query is left
    alone."""
    import subprocess

    from askrepo import ranking

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "template.go").write_text(GO_TEMPLATES)
    (repo / "flag.go").write_text(GO_FLAG)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    index_repo(repo)
    r = Retriever.open(repo)

    def scores(query, **kw):
        hits = r.search(query, SearchOptions(k=8, **kw)).hits
        return {(h.path, h.kind, h.symbol): h.score for h in hits}

    q = "build the one-line help description of an option with its default value"
    off, on = scores(q, disabled=("windows",)), scores(q)
    windows = [key for key in on if key[0] == "template.go"]
    assert windows and all(kind == "window" for _, kind, _ in windows)
    for key in windows:
        assert on[key] == pytest.approx(0.9 * off[key], rel=1e-3)
    func = ("flag.go", "function", "stringifyFlag")
    assert on[func] == off[func]
    monkeypatch.setattr(ranking, "WINDOW_DEMOTION", 1.0)
    assert scores(q) == off  # the stage is all the difference
    monkeypatch.setattr(ranking, "WINDOW_DEMOTION", 0.9)
    assert scores("stringifyFlag") == scores("stringifyFlag", disabled=("windows",))


BUG_FORM = """\
name: Bug report
description: Report a bug in the upload client
labels: [bug]
body:
  - type: textarea
    attributes:
      label: Description
      description: A clear description of the bug. What happened?
  - type: textarea
    attributes:
      label: Steps to reproduce
      description: The code you ran, as a minimal example.
  - type: textarea
    attributes:
      label: Expected behavior
      description: What you expected to happen instead.
  - type: input
    attributes:
      label: Version
      description: The version of the upload client and of Python.
"""


def test_a_pasted_report_ranks_code_above_the_issue_form_it_was_written_in(tmp_path):
    """A report filled in from `.github/ISSUE_TEMPLATE/` shares the form's headings whatever
    the bug is; the form yields to code (the `priors` stage), which it outranks without it."""
    root = tmp_path / "repo"
    (root / ".github" / "ISSUE_TEMPLATE").mkdir(parents=True)
    (root / ".github" / "ISSUE_TEMPLATE" / "bug_report.yml").write_text(BUG_FORM)
    (root / "upload").mkdir()
    (root / "upload" / "retry.py").write_text(
        "def retry_delay(attempt, base=0.5):\n"
        '    """Seconds to wait before retrying an upload: doubles with each attempt."""\n'
        "    return base * 2 ** attempt\n"
    )
    write_unrelated(root / "upload", ("auth", "progress", "paths"))
    report = (
        "Stuck for minutes on a flaky network\n\n### Description\n\nA clear description of "
        "the bug: what happened is that the upload client hung for minutes.\n\n"
        "### Steps to reproduce\n\nThe code I ran: client.send('big.bin')\n\n"
        "### Expected behavior\n\nWhat I expected to happen instead: it goes on soon.\n\n"
        "### Version\n\nupload client 2.1, Python 3.12\n"
    )
    form = ".github/ISSUE_TEMPLATE/bug_report.yml"
    with askrepo_home(tmp_path / "home"):
        index_repo(root)
        retriever = Retriever.open(root)
        plain = [f.path for f in retriever.search_files(report, SearchOptions(k=5)).files]
        off = SearchOptions(k=5, disabled=("priors",))
        without = [f.path for f in retriever.search_files(report, off).files]
    code = ["upload/auth.py", "upload/paths.py", "upload/progress.py", "upload/retry.py"]
    assert without[0] == plain[0] == "upload/retry.py"
    # without the prior the form outranks code files, as it did in pip's and rich's reports
    assert without.index(form) < max(without.index(p) for p in code)
    # with it, every code file comes first
    assert sorted(plain[:4]) == code and plain[4] == form


def test_search_files_tests_vote_for_the_file_they_test(tmp_path):
    """Two modules read alike; the report's scenario is a test of one of them
    (`tests/test_billing.py`), so that module is the file to change (the `testvotes` stage);
    without the stage the other one comes first."""
    root = tmp_path / "repo"
    (root / "shop").mkdir(parents=True)
    (root / "tests").mkdir()
    for name in ("pricing", "billing"):
        (root / "shop" / f"{name}.py").write_text(
            f"def {name}_total(items):\n"
            f'    """Sum the prices of the cart items for {name}."""\n'
            "    return sum(item.price for item in items)\n"
        )
    write_unrelated(root / "shop", ("config", "paths", "logging_setup"))
    (root / "tests" / "test_billing.py").write_text(
        "from shop.billing import billing_total\n\n\n"
        "def test_total_with_a_discount_coupon_rounds_cents():\n"
        '    """A discount coupon on the cart total must round to whole cents."""\n'
        "    assert billing_total([Item(9.99, coupon='HALF')]) == 5.0\n"
    )
    report = (
        "Cart total is wrong with a discount coupon\n\n"
        "With a HALF coupon the total of the cart items is not rounded to whole cents."
    )
    with askrepo_home(tmp_path / "home"):
        index_repo(root)
        retriever = Retriever.open(root)
        # the two modules tie but for the tests' vote (the feedback stage would break the tie)
        res = retriever.search_files(report, SearchOptions(k=5, disabled=("feedback",)))
        on = res.files
        off_res = retriever.search_files(
            report, SearchOptions(k=5, disabled=("testvotes", "feedback"))
        )
        off = off_res.files
    # --explain says which test voted for which file
    assert "tests voted: tests/test_billing.py → shop/billing.py" in res.filters
    assert not any(f.startswith("tests voted") for f in off_res.filters)
    args = ("search", "--files", "--explain", report, "--repo", str(root))
    p = run_cli(*args, home=tmp_path / "home", env={"COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    assert "tests voted: tests/test_billing.py → shop/billing.py" in p.stdout
    assert p.stdout.index("shop/billing.py") < p.stdout.index("shop/pricing.py")
    assert [f.path for f in off[:2]] == ["shop/pricing.py", "shop/billing.py"]
    assert [f.path for f in on[:2]] == ["shop/billing.py", "shop/pricing.py"]
    assert all(f.file_class == "code" for f in on)  # tests vote; they are not listed
    assert all(a.score >= b.score for a, b in zip(on, on[1:], strict=False))


def test_search_files_embeds_each_query_text_once(tmp_path):
    """`search --files` searches a report twice (the second time with tests in scope, for
    `testvotes`); the retriever keeps the last query vectors, so each text is embedded once."""
    from tests.fakes import FakeEmbedder

    class Counting(FakeEmbedder):
        def __init__(self):
            super().__init__()
            self.queries: list[str] = []

        def embed_query(self, text):
            self.queries.append(text)
            return super().embed_query(text)

    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "billing.py").write_text("def billing_total(items):\n    return sum(items)\n")
    (root / "tests" / "test_billing.py").write_text(
        "def test_total():\n    assert billing_total([1, 2]) == 3\n"
    )
    with askrepo_home(tmp_path / "home"):
        index_repo(root, embedder=FakeEmbedder())
        emb = Counting()
        retriever = Retriever.open(root, embedder=emb)
        retriever.search_files("the billing total is wrong", SearchOptions(k=5))
        assert emb.queries == ["the billing total is wrong"]
        for i in range(12):  # an old text leaves the cache: embedded again
            retriever.search(f"question {i}", SearchOptions(k=3))
        retriever.search("the billing total is wrong", SearchOptions(k=3))
    assert emb.queries.count("the billing total is wrong") == 2


def test_the_tail_follows_the_score_below_the_spread_head(retriever, monkeypatch):
    """The tail stage: below SATURATION_HEAD places the hits keep their own score order.
    With a head of 0 nothing is decayed, so the order is the one with saturation off; with
    the stage off (decay everywhere) a file's later chunks sink."""
    q = "how does a user session get logged out or expire?"
    plain = retriever.search(q, SearchOptions(k=8, max_per_file=0, disabled=("saturation",)))
    monkeypatch.setattr(ranking, "SATURATION_HEAD", 0)
    tail = retriever.search(q, SearchOptions(k=8))
    decayed = retriever.search(q, SearchOptions(k=8, disabled=("tail",)))
    located = [[(h.path, h.start_line) for h in r.hits] for r in (plain, tail, decayed)]
    assert located[1] == located[0]
    assert located[2] != located[0]
    # search --files aggregates a pool decayed throughout
    seen = []
    search = Retriever.search

    def spy(self, query, opts=None):
        seen.append(tuple(opts.disabled))
        return search(self, query, opts)

    monkeypatch.setattr(Retriever, "search", spy)
    retriever.search_files(q, SearchOptions(k=3))
    assert "tail" in seen[0]


def test_a_trace_s_frames_do_not_name_the_file_to_change(tmp_path):
    """A pasted trace runs through the entry point the reporter called (here the
    environment's ``__call__``) on its way to the error, while the report's words point at the
    bytecode cache. The files only the frames name do not join the fusion as named files (the
    `frames` stage); with the stage off, the entry point comes first — as jinja's
    `environment.py` did in 12 of its 36 reports."""
    root = tmp_path / "repo"
    (root / "tmpl").mkdir(parents=True)
    (root / "tmpl" / "environment.py").write_text(
        "class Environment:\n"
        '    """The central object: configuration, globals, and the loader of templates."""\n\n'
        "    def __call__(self, name, **context):\n"
        '        """Render the named template with the given context variables."""\n'
        "        return self.loader.load(self, name).render(context)\n"
    )
    (root / "tmpl" / "bccache.py").write_text(
        "import marshal\n\n\n"
        "class FileSystemBytecodeCache:\n"
        '    """Keeps compiled template bytecode in files of a cache directory."""\n\n'
        "    def load_bytecode(self, bucket):\n"
        '        """Read a bucket\'s cached bytecode file."""\n'
        "        with open(self.path(bucket), 'rb') as f:\n"
        "            bucket.code = marshal.load(f)\n\n"
        "    def dump_bytecode(self, bucket):\n"
        '        """Write the bucket\'s bytecode file in place, not atomically."""\n'
        "        with open(self.path(bucket), 'wb') as f:\n"
        "            marshal.dump(bucket.code, f)\n"
    )
    write_unrelated(root / "tmpl", ("config", "paths", "logging_setup"))
    report = (
        "Bytecode cache file read while partially written by another process\n\n"
        "With several processes sharing one cache directory, a reader can load a partially "
        "written bytecode cache file:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app.py", line 12, in <module>\n'
        '  File "/venv/site-packages/tmpl/environment.py", line 5, in __call__\n'
        '  File "/venv/site-packages/tmpl/environment.py", line 5, in __call__\n'
        "EOFError: marshal data too short\n"
    )
    with askrepo_home(tmp_path / "home"):
        index_repo(root)
        retriever = Retriever.open(root)
        plain = [f.path for f in retriever.search_files(report, SearchOptions(k=5)).files]
        off = SearchOptions(k=5, disabled=("frames",))
        without = [f.path for f in retriever.search_files(report, off).files]
    assert plain[0] == "tmpl/bccache.py"
    assert without[0] == "tmpl/environment.py"


def test_a_trait_method_is_found_by_its_qualified_name(tmp_path):
    """Real index: ``Buf::chunk`` is the trait's declaration with its docs (a chunk of its own
    since chunker 6), not the ``fn chunk`` of ``impl Buf for &[u8]`` (which had no qualifier
    and answered first, bytes's first contact); ``objectTraps.get`` is the method of an object
    literal (immer)."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "buf.rs").write_text(
        "/// Read bytes from a buffer.\n"
        "pub trait Buf {\n"
        "    /// Returns the number of bytes between the current position and the end.\n"
        "    fn remaining(&self) -> usize;\n\n"
        "    /// Returns a slice starting at the current position, of any length up to\n"
        "    /// `remaining()`: the bytes not yet consumed.\n"
        "    fn chunk(&self) -> &[u8];\n"
        "}\n\n"
        "impl Buf for &[u8] {\n"
        "    fn remaining(&self) -> usize {\n"
        "        self.len()\n"
        "    }\n\n"
        "    fn chunk(&self) -> &[u8] {\n"
        "        self\n"
        "    }\n"
        "}\n"
    )
    (root / "src" / "proxy.ts").write_text(
        "/** Traps of an object draft. */\n"
        "export const objectTraps = {\n"
        "  get(state: State, prop: string) {\n"
        "    return latest(state)[prop]\n"
        "  },\n"
        "  has(state: State, prop: string) {\n"
        "    return prop in latest(state)\n"
        "  },\n"
        "}\n"
    )
    write_unrelated(root / "src", ("config", "paths", "logging_setup"))
    with askrepo_home(tmp_path / "home"):
        index_repo(root)
        retriever = Retriever.open(root)
        chunk = retriever.search("Buf::chunk", SearchOptions(k=3)).hits
        traps = retriever.search("objectTraps.get", SearchOptions(k=3)).hits
    assert (chunk[0].symbol, chunk[0].start_line) == ("Buf.chunk", 6)
    assert chunk[1].symbol == "[u8].chunk"
    assert traps[0].symbol == "objectTraps.get"
