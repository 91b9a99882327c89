"""``askrepo serve`` through real clients: httpx against a real uvicorn server on a free loopback
port, and the MCP SDK's streamable-HTTP client against its /mcp endpoint.

Two repositories (the fixture shop and a small ledger) are indexed once with the real MiniLM
model. ``ask`` uses a scripted LLM here (what is tested is the HTTP/SSE plumbing and citation
repos); the browser test asks with the real embedded model.
"""

from __future__ import annotations

import json
import threading

import pytest
from serve_env import ScriptedLLM, ServeEnv, need

httpx = need("httpx", "pip install 'askrepo[dev]'")
need("uvicorn", "pip install 'askrepo[serve]'")
need("mcp", "pip install 'askrepo[serve]'")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    yield from ServeEnv.indexed(tmp_path_factory.mktemp("serve"))


@pytest.fixture(autouse=True)
def _askrepo_home(env, monkeypatch):  # overrides conftest: one home (the indexes) per module
    monkeypatch.setenv("ASKREPO_HOME", str(env.home))
    return env.home


@pytest.fixture(scope="module")
def local(env):
    """A loopback server without tokens, answering `ask` with the scripted LLM."""
    with env.server(llm_factory=ScriptedLLM) as url:
        yield url


@pytest.fixture(scope="module")
def tokens(env):
    """Tokens: one for everything, one limited to the ledger, one revoked later."""
    from askrepo.tokens import TokenStore

    store = TokenStore(env.home / "tokens.json")
    _, full = store.create("full")
    _, ledger_only = store.create("ledger-only", [env.ledger])
    _, to_revoke = store.create("to-revoke")
    return {"store": store, "full": full, "ledger": ledger_only, "revoke": to_revoke}


@pytest.fixture(scope="module")
def guarded(env, tokens):
    """A loopback server that requires tokens (as any non-loopback server does)."""
    with env.server(require_token=True, llm_factory=ScriptedLLM) as url:
        yield url


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# ----------------------------------------------------------------------------------------------
# JSON API on loopback


def test_repos_and_status(local, env):
    r = httpx.get(f"{local}/api/repos")
    assert r.status_code == 200
    repos = {x["name"]: x for x in r.json()["repos"]}
    assert set(repos) == {"shop", "ledger"}
    assert repos["shop"]["path"] == str(env.shop) and repos["shop"]["indexed"]
    assert repos["shop"]["files"] > 5 and repos["shop"]["chunks"] > 10
    st = httpx.get(f"{local}/api/status", params={"repo": "ledger"}, timeout=60).json()["repos"]
    assert len(st) == 1 and st[0]["name"] == "ledger"
    assert st[0]["file_count"] == 2 and st[0]["commit"] and st[0]["stale"] is False
    assert st[0]["embedded_share"] == 1.0  # every chunk has its vector once indexing is done
    assert st[0]["chunk_count"] == repos["ledger"]["chunks"]
    assert "index_path" in st[0]  # the local user sees where the index is
    r = httpx.get(f"{local}/api/search", params={"q": "ledger", "repo": "ledger"}, timeout=60)
    assert r.headers["cache-control"] == "no-store"


def test_search_all_repos_fused_and_filtered(local, env):
    r = httpx.get(
        f"{local}/api/search", params={"q": "transfer money between accounts", "k": 5}, timeout=60
    )
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["repos"] == [str(env.shop), str(env.ledger)]
    assert {h["repo"] for h in data["hits"]} == {str(env.shop), str(env.ledger)}
    top = data["hits"][0]
    assert (top["repo"], top["symbol"]) == (str(env.ledger), "Ledger.transfer")
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))
    # the same hit shape as `askrepo search --json`, plus repo
    assert {"rank", "path", "start_line", "end_line", "symbol", "score", "text", "repo"} <= set(top)
    only = httpx.get(
        f"{local}/api/search", params={"q": "hash a password", "repo": "shop"}, timeout=60
    ).json()
    assert only["repos"] == [str(env.shop)]
    assert {h["repo"] for h in only["hits"]} == {str(env.shop)}
    # the index's freshness, as on every JSON result: one repo's, or each repo's
    assert only["stale"] is False and only["changed_files"] == 0 and "indexed_commit" in only
    assert data["stale"] is False
    assert [f["repo"] for f in data["freshness"]] == [str(env.shop), str(env.ledger)]
    assert only["hits"][0]["symbol"] == "hash_password"
    # POST with a JSON body, highlighted lines
    post = httpx.post(
        f"{local}/api/search",
        json={"q": "hash a password", "repo": str(env.shop), "k": 2, "highlight": True},
        timeout=60,
    )
    assert post.status_code == 200
    h0 = post.json()["hits"][0]
    assert len(h0["html"]) == h0["end_line"] - h0["start_line"] + 1
    assert '<span class="k">def</span>' in h0["html"][0]


def test_search_cli_json_shape_matches(local, env):
    from typer.testing import CliRunner

    from askrepo.cli import app

    res = CliRunner().invoke(
        app,
        [
            "search",
            "hash a password",
            "--repo",
            str(env.shop),
            "--repo",
            str(env.ledger),
            "--json",
            "-k",
            "3",
        ],
    )
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)
    api = httpx.get(
        f"{local}/api/search", params={"q": "hash a password", "k": 3}, timeout=60
    ).json()
    assert set(cli) == set(api) - {"filters"}
    # one freshness per repository, the same from both (multirepo.freshness_fields)
    assert cli["freshness"] == api["freshness"] and len(api["freshness"]) == 2
    assert set(api["freshness"][0]) == {
        "repo", "commit", "indexed_commit", "head_commit", "stale", "changed_files"
    }  # fmt: skip
    assert [cli[k] for k in ("stale", "changed_files")] == [api["stale"], api["changed_files"]]
    assert (api["stale"], api["changed_files"]) == (False, 0)
    assert [(h["repo"], h["path"], h["start_line"]) for h in cli["hits"]] == [
        (h["repo"], h["path"], h["start_line"]) for h in api["hits"]
    ]


def test_file_viewer_api(local, env):
    r = httpx.get(
        f"{local}/api/file",
        params={"repo": "shop", "path": "shop/auth.py", "start": 14, "end": 16, "highlight": 1},
    )
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["path"] == "shop/auth.py" and d["start_line"] == 14 and d["end_line"] == 16
    assert d["lines"][0].startswith("def hash_password(")
    real = (env.shop / "shop/auth.py").read_text().split("\n")
    assert d["lines"] == real[13:16]
    assert len(d["html"]) == 3 and d["language"] == "python"


@pytest.mark.parametrize(
    "path",
    [
        "../ledger/ledger/books.py",
        "/etc/passwd",
        "etc_link/passwd",
        ".git/config",
        "shop/../../ledger/ledger/books.py",
        ".env",
        "shop\\..\\..\\x",
    ],
)
def test_file_path_traversal_refused(local, path):
    r = httpx.get(f"{local}/api/file", params={"repo": "shop", "path": path})
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["code"] == "bad_request" and body["error"] and "Traceback" not in r.text


def test_errors_are_one_line_json(local):
    r = httpx.get(f"{local}/api/search", params={"q": "x", "repo": "nope"})
    assert r.status_code == 404 and r.json()["code"] == "unknown_repo"
    assert "shop" in r.json()["error"]
    r = httpx.get(f"{local}/api/search")
    assert r.status_code == 400 and "q" in r.json()["error"]
    r = httpx.get(f"{local}/api/search", params={"q": "x", "mode": "magic"}, timeout=60)
    assert r.status_code == 400 and "mode" in r.json()["error"]
    r = httpx.get(f"{local}/api/file", params={"path": "shop/auth.py"})
    assert r.status_code == 400 and "repo" in r.json()["error"]
    r = httpx.get(f"{local}/api/nothing")
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    assert r.headers["cache-control"] == "no-store"  # errors and results alike
    # an endpoint that exists, asked with the wrong method: 405 and what it takes
    r = httpx.get(f"{local}/api/refresh")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["code"] == "method_not_allowed"
    assert httpx.get(f"{local}/favicon.ico").status_code == 204


def test_oversize_requests_413(local):
    r = httpx.get(f"{local}/api/search", params={"q": "a" * 40_000})
    assert r.status_code == 413 and r.json()["code"] == "query_too_large"
    r = httpx.post(f"{local}/api/search", json={"q": "a" * 25_000})
    assert r.status_code == 413 and r.json()["code"] == "query_too_large"
    r = httpx.post(
        f"{local}/api/search",
        content=b"{" + b" " * 300_000 + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 413 and r.json()["code"] == "body_too_large"

    def chunks():  # no Content-Length: the cap applies while reading
        for _ in range(40):
            yield b" " * 10_000

    r = httpx.post(f"{local}/api/search", content=chunks())
    assert r.status_code == 413 and r.json()["code"] == "body_too_large"


def test_dns_rebinding_and_cross_site_refused(local):
    r = httpx.get(f"{local}/api/repos", headers={"Host": "attacker.example:8765"})
    assert r.status_code == 403 and r.json()["code"] == "host_not_local"
    r = httpx.get(f"{local}/api/repos", headers={"Origin": "http://attacker.example"})
    assert r.status_code == 403 and r.json()["code"] == "origin_not_local"
    r = httpx.post(f"{local}/mcp", headers={"Origin": "https://attacker.example"}, json={})
    assert r.status_code == 403
    ok = httpx.get(f"{local}/api/repos", headers={"Origin": local, "Host": "localhost:1"})
    assert ok.status_code == 200


def test_ask_streams_events_with_cited_repos(local, env):
    with httpx.stream(
        "POST",
        f"{local}/api/ask",
        json={"q": "how are passwords hashed?", "repo": "shop"},
        timeout=120,
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = _sse(r.iter_lines())
    kinds = [k for k, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "answer"
    assert kinds.count("token") >= 5
    streamed = "".join(d["text"] for k, d in events if k == "token")
    assert "PBKDF2 [1]" in streamed
    answer = events[-1][1]
    assert answer["backend"] == "scripted"
    ns = [c["n"] for c in answer["citations"]]  # the answer's [1] [2], then the card's See also
    assert ns[:2] == [1, 2] and ns == list(range(1, len(ns) + 1)) and len(ns) <= 5
    assert all(c["repo"] == str(env.shop) for c in answer["citations"])
    assert answer["citations"][0]["path"] == answer["retrieved"][0]["path"]


def test_ask_builds_the_same_evidence_card_as_the_cli(local, env):
    """The served repo is a retriever with the repo's embedding model too: the card ranks its
    candidates with the header similarity the CLI uses (it once had no model and ranked them
    differently)."""
    from askrepo.answer import ask
    from askrepo.llm import NoModel
    from askrepo.retriever import Retriever, SearchOptions

    q = "where is the shopping cart total computed?"
    with httpx.stream("POST", f"{local}/api/ask", json={"q": q, "repo": "shop"}, timeout=120) as r:
        served = _sse(r.iter_lines())[-1][1]
    cli = ask(q, Retriever.open(env.shop), NoModel())
    assert served["evidence"] == cli.evidence and served["evidence"]
    # what the card reads the similarity with: the repo's model, not None (no model)
    from askrepo.answer import card_inputs
    from askrepo.mcp_server import RepoHandle
    from askrepo.serve.app import _LockedRetriever

    locked = _LockedRetriever(RepoHandle(env.shop))
    hits = locked.search(q, SearchOptions(k=8)).hits
    _, _, similarity = card_inputs(q, hits, locked)
    assert similarity is not None and len(similarity) == min(len(hits), 8)
    assert locked.embedder.model_id == Retriever.open(env.shop).embedder.model_id


def test_ask_over_all_repos_names_each_citation_repo(local, env):
    with httpx.stream(
        "GET",
        f"{local}/api/ask",
        params={"q": "how is money moved between ledger accounts?"},
        timeout=120,
    ) as r:
        events = _sse(r.iter_lines())
    answer = events[-1][1]
    assert events[-1][0] == "answer", events[-1]
    by_path = {(h["path"], h["start_line"]): h["repo"] for h in answer["retrieved"]}
    assert set(by_path.values()) <= {str(env.shop), str(env.ledger)}
    for c in answer["citations"]:
        assert c["repo"] == by_path[(c["path"], c["start_line"])]


def test_slow_ask_does_not_block_search(env):
    import time

    gate = threading.Event()
    llm = ScriptedLLM(gate=gate)
    srv = env.server(llm_factory=lambda: llm)
    with srv as url:
        result: dict = {}

        def run_ask(key: str):
            with httpx.stream(
                "POST",
                f"{url}/api/ask",
                json={"q": "how are passwords hashed?", "repo": "shop"},
                timeout=120,
            ) as r:
                result[key] = _sse(r.iter_lines())

        t = threading.Thread(target=run_ask, args=("events",))
        t.start()
        second = threading.Thread(target=run_ask, args=("second",))
        try:
            assert llm.started.wait(60), "ask never reached the LLM"
            # the answer is stuck in the LLM; searches and file reads are still served
            r = httpx.get(f"{url}/api/search", params={"q": "apply a discount code"}, timeout=60)
            assert r.status_code == 200 and r.json()["hits"]
            assert (
                httpx.get(
                    f"{url}/api/file", params={"repo": "ledger", "path": "ledger/books.py"}
                ).status_code
                == 200
            )
            assert "events" not in result  # the ask is still waiting
            # a second question waits for the model and is told so
            second.start()
            state = srv.server.config.app.state
            for _ in range(300):
                if state.asks_pending == 2:
                    break
                time.sleep(0.05)
            assert state.asks_pending == 2
        finally:
            gate.set()
            t.join(60)
            if second.is_alive() or second.ident:
                second.join(60)
        assert result["events"][-1][0] == "answer"
        assert ("queued", {"ahead": 1}) in result["second"]
        assert result["second"][-1][0] == "answer"
        assert state.asks_pending == 0


def test_file_viewer_does_not_wait_behind_a_search(env):
    """/api/file answers while a search of the same repo is running (held in the retriever)."""
    started, gate = threading.Event(), threading.Event()
    srv = env.server(llm_factory=ScriptedLLM)
    with srv as url:
        handle = next(h for h in srv.server.config.app.state.service.repos if h.root.name == "shop")
        retriever = handle.retriever()
        real_search = retriever.search

        def held_search(query, opts=None):
            started.set()
            assert gate.wait(120), "the test never released the search"
            return real_search(query, opts)

        retriever.search = held_search
        result: dict = {}
        params = {"q": "how is the cart total computed?", "repo": "shop"}

        def search() -> None:
            result["r"] = httpx.get(f"{url}/api/search", params=params, timeout=180)

        t = threading.Thread(target=search)
        t.start()
        try:
            assert started.wait(60), "the search never started"
            f = httpx.get(
                f"{url}/api/file",
                params={"repo": "shop", "path": "shop/cart.py", "start": 1, "end": 3},
                timeout=60,
            )
            assert f.status_code == 200, f.text
            assert f.json()["lines"] == (env.shop / "shop/cart.py").read_text().split("\n")[:3]
            assert "r" not in result  # the search is still held
        finally:
            gate.set()
            t.join(180)
        assert result["r"].status_code == 200
        assert any(hit["path"] == "shop/cart.py" for hit in result["r"].json()["hits"])


def test_per_client_concurrency_cap(env):
    gate = threading.Event()
    llm = ScriptedLLM(gate=gate)
    with env.server(llm_factory=lambda: llm, max_concurrent=1, queue_timeout_s=0.3) as url:
        t = threading.Thread(
            target=lambda: httpx.post(
                f"{url}/api/ask",
                json={"q": "how are passwords hashed?", "repo": "shop"},
                timeout=120,
            )
        )
        t.start()
        try:
            assert llm.started.wait(60)
            r = httpx.get(f"{url}/api/repos")
            assert r.status_code == 429 and r.json()["code"] == "too_many_requests"
        finally:
            gate.set()
            t.join(60)
        assert httpx.get(f"{url}/api/repos").status_code == 200


def test_non_loopback_without_tokens_refuses_to_start(env, tmp_path):
    from askrepo.errors import UsageError
    from askrepo.serve import create_app

    with pytest.raises(UsageError, match="token"):
        create_app(env.settings(host="0.0.0.0", tokens_path=tmp_path / "none.json"))
    with pytest.raises(UsageError, match="token"):
        create_app(env.settings(require_token=True, tokens_path=tmp_path / "none.json"))


# ----------------------------------------------------------------------------------------------
# Tokens


def test_token_auth_cases(guarded, tokens, env):
    api = f"{guarded}/api/search"
    q = {"q": "hash a password", "k": 3}
    r = httpx.get(api, params=q)
    assert r.status_code == 401 and r.json()["code"] == "token_missing"
    r = httpx.get(api, params=q, headers=bearer("askrepo_0000abcd_" + "x" * 43))
    assert r.status_code == 401 and r.json()["code"] == "token_invalid"
    r = httpx.get(api, params=q, headers=bearer(tokens["full"][:-2] + "zz"))
    assert r.status_code == 401 and r.json()["code"] == "token_invalid"
    r = httpx.get(api, params=q, headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert r.status_code == 401 and r.json()["code"] == "token_malformed"
    r = httpx.get(api, params=q, headers=bearer(tokens["full"]), timeout=60)
    assert r.status_code == 200 and len(r.json()["repos"]) == 2
    # limited to the ledger: the shop is forbidden, "all" means the ledger only
    r = httpx.get(api, params={**q, "repo": "shop"}, headers=bearer(tokens["ledger"]))
    assert r.status_code == 403 and r.json()["code"] == "token_repo_forbidden"
    r = httpx.get(
        f"{guarded}/api/file",
        params={"repo": "shop", "path": "shop/auth.py"},
        headers=bearer(tokens["ledger"]),
    )
    assert r.status_code == 403
    r = httpx.get(api, params=q, headers=bearer(tokens["ledger"]), timeout=60)
    assert r.status_code == 200 and r.json()["repos"] == [str(env.ledger)]
    assert {h["repo"] for h in r.json()["hits"]} == {str(env.ledger)}
    r = httpx.get(f"{guarded}/api/repos", headers=bearer(tokens["ledger"]))
    assert [x["name"] for x in r.json()["repos"]] == ["ledger"]
    # the page itself is public (it holds no data); the API is not
    assert httpx.get(f"{guarded}/").status_code == 200
    assert httpx.get(f"{guarded}/api/status").status_code == 401
    st = httpx.get(f"{guarded}/api/status", headers=bearer(tokens["ledger"]), timeout=60)
    assert st.status_code == 200 and "index_path" not in st.json()["repos"][0]


def test_revoked_token_refused_by_running_server(guarded, tokens):
    r = httpx.get(f"{guarded}/api/repos", headers=bearer(tokens["revoke"]))
    assert r.status_code == 200
    info = [t for t in tokens["store"].list() if t.name == "to-revoke"][0]
    tokens["store"].revoke(info.id)
    r = httpx.get(f"{guarded}/api/repos", headers=bearer(tokens["revoke"]))
    assert r.status_code == 401 and r.json()["code"] == "token_revoked"


# ----------------------------------------------------------------------------------------------
# MCP over streamable HTTP


def _mcp(url: str, headers: dict[str, str] | None, calls):
    """Run ``calls(session)`` with the MCP SDK's streamable-HTTP client; returns its result."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main():
        async with httpx2.AsyncClient(headers=headers or {}, timeout=120) as client:
            async with streamable_http_client(f"{url}/mcp", http_client=client) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    return await calls(s)

    return anyio.run(main)


def test_mcp_tools_over_http(local, env):
    async def calls(s):
        tools = sorted(t.name for t in (await s.list_tools()).tools)
        found = await s.call_tool("search_code", {"query": "hash a password", "repo": "shop"})
        status = await s.call_tool("index_status", {})
        bad = await s.call_tool("read_file", {"path": "../../etc/passwd", "repo": "shop"})
        fused = await s.call_tool("search_code", {"query": "transfer money between accounts"})
        return tools, found, status, bad, fused

    tools, found, status, bad, fused = _mcp(local, None, calls)
    from askrepo.mcp_server import TOOL_NAMES

    assert tools == sorted(TOOL_NAMES)
    assert not found.is_error
    assert found.structured_content["hits"][0]["symbol"] == "hash_password"
    assert {r["repo"] for r in status.structured_content["repos"]} == {
        str(env.shop),
        str(env.ledger),
    }
    assert bad.is_error and "outside the repository" in bad.content[0].text
    # no repo with several served: one fused ranking over both, each hit naming its repo
    assert not fused.is_error, fused.content[0].text
    hits = fused.structured_content["hits"]
    assert {h["repo"] for h in hits} == {str(env.shop), str(env.ledger)}
    assert (hits[0]["repo"], hits[0]["symbol"]) == (str(env.ledger), "Ledger.transfer")
    assert [r["repo"] for r in fused.structured_content["repos"]] == [
        str(env.shop),
        str(env.ledger),
    ]
    # the freshness every result carries: per repository, and over them all
    assert fused.structured_content["stale"] is False
    assert all({"indexed_commit", "stale"} <= set(r) for r in fused.structured_content["repos"])


def test_mcp_get_and_delete_are_refused_not_held_open(local):
    """Stateless MCP has no server-sent stream: a GET (a browser tab, a client probing for
    one) is answered 405 at once instead of an event stream that never ends and holds one of
    the client's request slots."""
    for method in ("GET", "DELETE"):
        r = httpx.request(
            method, f"{local}/mcp", headers={"Accept": "text/event-stream"}, timeout=10
        )
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        assert r.json()["code"] == "method_not_allowed"
    # nine in a row (more than the slots): the API still answers
    for _ in range(9):
        httpx.get(f"{local}/mcp", timeout=10)
    assert httpx.get(f"{local}/api/repos", timeout=10).status_code == 200


def test_mcp_token_limits(guarded, tokens, env):
    r = httpx.post(
        f"{guarded}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert r.status_code == 401 and r.json()["code"] == "token_missing"

    async def calls(s):
        status = await s.call_tool("index_status", {})
        shop = await s.call_tool("search_code", {"query": "password", "repo": "shop"})
        return status, shop

    status, shop = _mcp(guarded, bearer(tokens["ledger"]), calls)
    assert status.structured_content["repo"] == str(env.ledger)  # one repo visible
    assert shop.is_error and "Unknown repo" in shop.content[0].text


def _sse(lines) -> list[tuple[str, dict]]:
    events, kind, data = [], None, []
    for line in lines:
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "" and kind:
            events.append((kind, json.loads("".join(data))))
            kind, data = None, []
    return events


# ----------------------------------------------------------------------------------------------
# The CLI: `askrepo serve` as a process, `askrepo ask` over several repos


def test_serve_command_runs_and_refuses_open_host_without_tokens(env, tmp_path):
    import os
    import subprocess
    import sys
    import time

    from fixture_repo import run_cli
    from serve_env import free_port

    cmd = [sys.executable, "-m", "askrepo.cli", "serve", "--repo", str(env.shop)]
    bad = run_cli(
        *cmd[3:], "--host", "0.0.0.0", "--port", str(free_port()),
        home=tmp_path / "empty-home", timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "needs tokens" in bad.stderr and "askrepo token create" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) <= 2

    port = free_port()
    proc = subprocess.Popen(
        cmd + ["--port", str(port)],
        env={**os.environ},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(300):
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.2)
        assert r.status_code == 200 and 'id="q"' in r.text
        assert "script-src 'self'" in r.headers["content-security-policy"]
        repos = httpx.get(f"http://127.0.0.1:{port}/api/repos", timeout=30).json()["repos"]
        assert [x["name"] for x in repos] == ["shop"]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/" in err


def test_cli_ask_over_several_repos(env, monkeypatch):
    from typer.testing import CliRunner

    import askrepo.llm
    from askrepo.cli import app

    monkeypatch.setattr(askrepo.llm, "choose_backend", lambda *a, **k: ScriptedLLM())
    res = CliRunner().invoke(
        app,
        [
            "ask",
            "how is money moved between accounts?",
            "--repo",
            str(env.shop),
            "--repo",
            str(env.ledger),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    ns = [c["n"] for c in data["citations"]]  # the answer's [1] [2], then the card's See also
    assert ns[:2] == [1, 2] and ns == list(range(1, len(ns) + 1)) and len(ns) <= 5
    repos = {h["repo"] for h in data["retrieved"]}
    assert repos <= {str(env.shop), str(env.ledger)} and None not in repos
    first = data["retrieved"][0]
    assert data["citations"][0]["repo"] == first["repo"]
    assert (first["repo"], first["symbol"]) == (str(env.ledger), "Ledger.transfer")


def test_highlight_keeps_lines_on_their_numbers_with_a_lone_cr():
    """Lines are cut at \\n only (askrepo.lines); Pygments' get_tokens reads a lone \\r as a line
    break, which shifted every later line of the viewer and the hits off its number."""
    from askrepo.serve.highlight import highlight_lines

    lines = ["a = 1\rb = '<x>'", "c = 2", "d\x0ce", "f = '<script>'"]
    html = highlight_lines(lines, "python", "x.py")
    assert len(html) == 4
    assert "a</span>" in html[0] and "&lt;x&gt;" in html[0]
    assert "c</span>" in html[1] and "e</span>" in html[2]
    assert "&lt;script&gt;" in html[3] and "<script>" not in "".join(html)
    # CRLF lines, a docstring over lines and Markdown keep their count and place too
    assert len(highlight_lines(["x = 1\r", "y\r"], "python", "x.py")) == 2
    doc = highlight_lines(['"""doc', 'more"""', "z"], "python", "x.py")
    assert "more" in doc[1] and "z</span>" in doc[2]


def test_bad_switches_and_numbers_are_400s_that_name_them(local):
    """include_tests=perhaps was taken as false and k=1.5 / start=١ as numbers; a start far past
    the end was reported as the 10**9 cap."""
    for params, name in (
        ({"q": "x", "include_tests": "perhaps"}, "include_tests"),
        ({"q": "x", "include_docs": "maybe"}, "include_docs"),
        ({"q": "x", "expand": "yes please"}, "expand"),
        ({"q": "x", "highlight": "sure"}, "highlight"),
        ({"q": "x", "k": "1.5"}, "k"),
        ({"q": "x", "k": "\u0661"}, "k"),
    ):
        r = httpx.get(f"{local}/api/search", params=params, timeout=60)
        assert r.status_code == 400, (params, r.text)
        assert r.json()["code"] == "bad_request" and name in r.json()["error"], r.text
    for body in ({"q": "x", "k": 1.5}, {"q": "x", "k": True}, {"q": "x", "include_docs": 3}):
        r = httpx.post(f"{local}/api/search", json=body, timeout=60)
        assert r.status_code == 400, (body, r.text)
    ok = httpx.get(f"{local}/api/search", params={"q": "x", "include_tests": "false", "k": "2"})
    assert ok.status_code == 200 and len(ok.json()["hits"]) <= 2
    ok = httpx.post(f"{local}/api/search", json={"q": "x", "k": 2, "expand": False}, timeout=60)
    assert ok.status_code == 200
    far = "9" * 21
    auth = {"repo": "shop", "path": "shop/auth.py"}
    r = httpx.get(f"{local}/api/file", params={**auth, "start": far})
    assert r.status_code == 400 and f"start_line {far} is past the end" in r.json()["error"]
    r = httpx.get(f"{local}/api/file", params={**auth, "end": "1_0"})
    assert r.status_code == 400 and "end must be a whole number" in r.json()["error"]
