"""`askrepo plan`: worked examples for the pure core (build_plan over hand-made hits and a tiny
call graph), the fixture repo indexed with the fake embedder (fast), the real MiniLM model
through the CLI, and prose on top from a real OpenAI-compatible server (llama_cpp.server).
"""

from __future__ import annotations

import functools
import json
import re

import pytest

from askrepo.datatypes import Chunk, Hit
from askrepo.errors import UsageError
from askrepo.plan import build_plan, plan_change, plan_prompt, request_words
from tests.fakes import FakeEmbedder
from tests.fixture_repo import askrepo_home, indexed_fixture_repo, run_cli

# ------------------------------------------------------------------------------------------
# Pure core


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        ("add a --color option to echo", {"color", "echo"}),
        ("make prompt() accept a timeout", {"prompt", "timeout"}),
        ("let a discount code expire after a date", {"discount", "date"}),
        ("rename `Cart.total` to grand_total", {"Cart", "total", "grand_total"}),
    ],
)
def test_request_words(request_, words):
    assert request_words(request_) == words


def hit(path, start, end, symbol, kind="function", score=0.03, cls="code", calls=()):
    return Hit(
        rank=0, path=path, start_line=start, end_line=end, symbol=symbol, kind=kind,
        language="python", score=score, sources={"dense": 1, "fts": None}, expanded_from=None,
        text=f"def {symbol}(): ...", file_class=cls, calls=list(calls),
    )  # fmt: skip


def chunk(path, start, end, symbol, kind="function", cls="code", calls=()):
    return Chunk(path, start, end, f"def {symbol}(): ...", "python", kind, symbol,
                 calls=list(calls), file_class=cls)  # fmt: skip


class Graph:
    """A tiny call graph with the store's callers/by_symbol interface."""

    def __init__(self, chunks):
        self.chunks = chunks

    def callers(self, name, classes=None, limit=5):
        return [("", c, 0.0) for c in self.chunks if name in c.calls][:limit]

    def by_symbol(self, names, classes=None, limit=50):
        out = []
        for c in self.chunks:
            if any(c.symbol == n or (c.symbol or "").endswith("." + n) for n in names):
                out.append(("", c, 0.0))
        return out[:limit]


GRAPH = Graph(
    [
        chunk("app/utils.py", 10, 30, "echo", calls=["write"]),
        chunk("app/term.py", 5, 20, "style"),
        chunk("app/term.py", 40, 50, "secho", calls=["echo", "style"]),
        chunk("app/core.py", 100, 140, "Command.main", calls=["echo", "show"]),
        chunk("app/errors.py", 1, 9, "UsageError.show", kind="method", calls=["echo"]),
        chunk("app/errors.py", 20, 29, "BadParameter.show", kind="method", calls=["echo"]),
        chunk("tests/test_utils.py", 3, 9, "test_echo_color", cls="test", calls=["echo"]),
        chunk("tests/test_misc.py", 3, 9, "test_banner", cls="test", calls=["secho"]),
        chunk("tests/test_main.py", 3, 9, "test_main", cls="test", calls=["echo"]),
    ]
)


def test_build_plan_worked_example():
    hits = [
        hit("app/term.py", 5, 20, "style", score=0.033),
        hit("app/utils.py", 10, 30, "echo", score=0.031, calls=["write"]),
        hit(
            "app/errors.py", 1, 9, "UsageError.show", kind="method", score=0.030, calls=["echo"]
        ),  # fmt: skip
        hit(
            "tests/test_utils.py", 3, 9, "test_echo_color", cls="test", score=0.03, calls=["echo"]
        ),  # fmt: skip
        hit("app/term.py", 60, 70, None, kind="window", score=0.01),
    ]
    plan = build_plan("add a --color option to echo", hits, GRAPH, repo="/r", commit="c0ffee")
    # echo is named in the request: its file comes first although style scored higher
    assert [f.path for f in plan.files] == ["app/utils.py", "app/term.py", "app/errors.py"]
    utils, term, errors = plan.files
    assert utils.items[0].why == ["defines echo", "named in the request"]
    assert [it.why for it in term.items] == [["defines style"], ["matches the request"]]
    # named first, then by score; windows are not targets
    assert plan.targets == ["echo", "style", "UsageError.show"]
    assert errors.items[0].why == ["defines UsageError.show", "calls echo"]
    # callers outside the plan, weighted 1/(target rank): secho 1 + 1/2, Command.main
    # 1 + 1/3, BadParameter.show 1; `show` is defined twice, so its callers are only by name
    assert [(it.symbol, it.why) for it in plan.may_break] == [
        ("secho", ["calls echo", "calls style"]),
        ("Command.main", ["calls echo", "calls UsageError.show (by name)"]),
        ("BadParameter.show", ["calls echo"]),
    ]
    # the retrieved test first; then callers, a test named after a target before others
    assert [(it.symbol, it.why) for it in plan.tests] == [
        ("test_echo_color", ["matches the request", "tests echo"]),
        ("test_main", ["tests echo"]),
    ]
    d = plan.to_dict()
    assert d["commit"] == "c0ffee" and d["prose"] is None
    assert d["files"][0]["items"][0]["location"] == "app/utils.py:10-30"
    json.dumps(d)


def test_a_method_calling_its_own_class_namesake_is_not_said_to_call_the_target():
    """spdlog: hourly_file_sink.sink_it_ calls its own delete_old_, not daily_file_sink's;
    a function outside both classes still calls the target by name."""
    graph = Graph(
        [
            chunk("daily.h", 10, 30, "daily_file_sink.delete_old_", kind="method"),
            chunk(
                "daily.h", 40, 60, "daily_file_sink.sink_it_", kind="method", calls=["delete_old_"]
            ),  # fmt: skip
            chunk("hourly.h", 10, 30, "hourly_file_sink.delete_old_", kind="method"),
            chunk(
                "hourly.h",
                40,
                60,
                "hourly_file_sink.sink_it_",
                kind="method",
                calls=["delete_old_"],
            ),  # fmt: skip
            chunk("cleanup.h", 1, 9, "purge_all", calls=["delete_old_"]),
        ]
    )
    hits = [hit("daily.h", 10, 30, "daily_file_sink.delete_old_", kind="method")]
    plan = build_plan("delete old daily log files", hits, graph)
    assert sorted((it.symbol, it.why) for it in plan.may_break) == [
        ("daily_file_sink.sink_it_", ["calls daily_file_sink.delete_old_ (by name)"]),
        ("purge_all", ["calls daily_file_sink.delete_old_ (by name)"]),
    ]


def test_build_plan_without_code_hits_is_empty():
    plan = build_plan("anything", [hit("tests/t.py", 1, 2, "test_x", cls="test")], GRAPH)
    assert plan.files == [] and plan.targets == [] and plan.may_break == []
    assert [it.symbol for it in plan.tests] == ["test_x"]


def test_plan_prompt_fits_the_budget_and_numbers_evidence():
    hits = [hit("app/utils.py", 10, 30, "echo"), hit("app/term.py", 5, 20, "style")]
    plan = build_plan("add a --color option to echo", hits, GRAPH)
    from askrepo.plan import _evidence_hits

    evidence = _evidence_hits(plan, hits)
    assert [it.n for f in plan.files for it in f.items] == [1, 2]

    def count(text):
        return len(text) // 3

    prompt, shown = plan_prompt(plan, evidence, budget_tokens=10_000, count_tokens=count)
    assert "[1] app/utils.py:10-30 (echo) — defines echo; named in the request" in prompt
    assert "def echo(): ..." in prompt  # a target's code is shown
    assert prompt.rstrip().endswith("Do not write code.")
    small, shown_small = plan_prompt(plan, evidence, budget_tokens=150, count_tokens=count)
    assert count(small) <= 150 and len(shown_small) <= len(shown)


# ------------------------------------------------------------------------------------------
# A real index of the fixture repo (fake embedder: fast; real tree-sitter, LanceDB, call edges)


@pytest.fixture(scope="module")
def fake_indexed(tmp_path_factory):
    from askrepo.retriever import Retriever

    root, home = indexed_fixture_repo(tmp_path_factory, "home-plan", embedder=FakeEmbedder())
    with askrepo_home(home):
        retriever = Retriever.open(root, embedder=FakeEmbedder())
        retriever.store.files()
    return root, retriever


def test_plan_on_the_fixture_index_uses_real_call_edges(fake_indexed):
    root, retriever = fake_indexed
    plan = plan_change("add a minimum password length check to hash_password", retriever)
    assert plan.files[0].path == "shop/auth.py"
    top = plan.files[0].items[0]
    assert (top.symbol, top.why) == ("hash_password", ["defines hash_password",
                                                       "named in the request"])  # fmt: skip
    assert plan.targets[0] == "hash_password"
    auth_items = {it.symbol: it.why for it in plan.files[0].items}
    assert "calls hash_password" in auth_items.get("authenticate_user", [])
    tests = {it.symbol: it.why for it in plan.tests}
    assert "tests hash_password" in tests["test_authenticate_user_accepts_the_right_password"]
    assert plan.commit and len(plan.commit) == 40
    assert set(plan.timings_ms) >= {"retrieve", "plan", "total"}


def test_plan_rejects_an_empty_request(fake_indexed):
    _, retriever = fake_indexed
    with pytest.raises(UsageError, match="empty"):
        plan_change("  ", retriever)


def test_pick_llm_never_uses_the_embedded_model(monkeypatch):
    from askrepo.cli_plan import pick_llm
    from tests.llama_server import free_port

    monkeypatch.delenv("ASKREPO_BACKEND", raising=False)
    monkeypatch.delenv("ASKREPO_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    assert pick_llm("none", None) == (None, None)
    llm, note = pick_llm("embedded", None)
    assert llm is None and "does not write plans" in note
    llm, note = pick_llm("auto", None)
    assert llm is None and "ASKREPO_OPENAI_BASE_URL" in note
    monkeypatch.setenv("ASKREPO_BACKEND", "none")
    assert pick_llm("auto", None) == (None, None)


# ------------------------------------------------------------------------------------------
# The real model, through the CLI


@pytest.fixture(scope="module")
def real_indexed(tmp_path_factory):
    return indexed_fixture_repo(tmp_path_factory, "home-plan-real")


_plan_cli = functools.partial(run_cli, "plan", timeout=600)


@pytest.mark.slow
def test_cli_plan_json_with_the_real_model(real_indexed):
    root, home = real_indexed
    p = _plan_cli("add a max quantity limit to the cart", "--repo", str(root), "--json",
                  "--backend", "none", home=home)  # fmt: skip
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["files"][0]["path"] == "shop/cart.py"
    items = {it["symbol"]: it for it in data["files"][0]["items"]}
    assert items["Cart"]["why"] == ["defines Cart", "named in the request"]
    assert "Cart.add_item" in items
    assert any(t["path"] == "tests/test_cart.py" for t in data["tests"])
    for f in data["files"]:
        for it in f["items"]:
            assert (root / it["path"]).is_file()
            assert 1 <= it["start_line"] <= it["end_line"]
    assert data["prose"] is None and data["backend"] is None


@pytest.mark.slow
def test_cli_plan_terminal_output_and_errors(real_indexed):
    root, home = real_indexed
    p = _plan_cli("add a max quantity limit to the cart", "--repo", str(root), "--backend",
                  "none", home=home, env={"COLUMNS": "160"})  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Plan: add a max quantity limit to the cart  (commit ")
    assert "1. shop/cart.py" in p.stdout and "Tests to run or update" in p.stdout
    # "-": the request from standard input (a pasted issue), the same plan
    request = "add a max quantity limit to the cart\n"
    piped = _plan_cli("-", "--repo", str(root), "--backend", "none", home=home,
                      env={"COLUMNS": "160"}, stdin=request)  # fmt: skip

    def untimed(out):
        return re.sub(r"\d+(?:\.\d+)? s\b", "", out)

    assert piped.returncode == 0 and untimed(piped.stdout) == untimed(p.stdout)
    p = _plan_cli("x", "--repo", str(root), "--backend", "openai", home=home,
                  env={"ASKREPO_OPENAI_BASE_URL": ""})  # fmt: skip
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("error: --backend openai needs the server URL")


# ------------------------------------------------------------------------------------------
# Prose on top, from a real OpenAI-compatible server


@pytest.mark.slow
def test_prose_from_a_real_openai_server(fake_indexed, monkeypatch):
    from askrepo.llm_openai import OpenAILLM
    from tests.llama_server import LlamaServer, require_server

    require_server()
    _, retriever = fake_indexed
    monkeypatch.delenv("ASKREPO_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ASKREPO_OPENAI_CONTEXT", "2048")
    with LlamaServer(n_ctx=2048) as srv:
        llm = OpenAILLM(base_url=srv.url)
        llm.check()
        pieces: list[str] = []
        plan = plan_change(
            "add a minimum password length check to hash_password", retriever, llm=llm,
            stream=pieces.append,
        )  # fmt: skip
    assert plan.prose and plan.prose.strip()
    assert (plan.backend, plan.model) == ("openai", "smollm2")
    assert pieces  # streamed
    evidence = {(it.path, it.start_line) for f in plan.files for it in f.items}
    evidence |= {(it.path, it.start_line) for it in plan.may_break + plan.tests}
    for c in plan.citations:
        assert (c.path, c.start_line) in evidence
    assert "prose" in plan.timings_ms


def test_plan_terminal_output_shows_brackets_in_paths_and_names_as_is(tmp_path):
    """A file named `[red]warn.py` was printed as `warn.py` in the plan's per-file title
    (rich markup), and a symbol or reason in brackets would vanish the same way."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from askrepo.cli_plan import render

    item = SimpleNamespace(n=1, path="[red]warn.py", location="[red]warn.py:1-3",
                           symbol="[b]x", kind="function", why=["calls [i]y"])  # fmt: skip
    result = SimpleNamespace(
        request="change x", commit=None, prose=None, notes=[], may_break=[], tests=[],
        files=[SimpleNamespace(rank=1, path="[red]warn.py", items=[item])],
        timings_ms={"total": 5.0},
    )  # fmt: skip
    buf = io.StringIO()
    render(Console(file=buf, width=100, color_system=None), result, tmp_path)
    shown = buf.getvalue()
    assert "1. [red]warn.py" in shown and "[red]warn.py:1-3" in shown
    assert "[b]x" in shown and "calls [i]y" in shown
