"""askrepo-mcp through the real protocol: a server subprocess on stdio, driven by the SDK client.

The fixture repo is indexed with the real embedding model (search_code is exercised). The Click
corpus is indexed with the fake embedder: only grep_code and the file tools are used on it, and
they never touch vectors — the index is there for its file list.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click_corpus import case_hit, click_src, literal_cases
from fixture_repo import make_fixture_repo

from askrepo.errors import UsageError

try:
    import mcp  # noqa: F401
except ImportError:  # fails under CI=true: the round trip is the only real MCP test
    from click_corpus import missing_prerequisite

    missing_prerequisite("the MCP SDK (askrepo[mcp]) is not installed")

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {
    "search_code",
    "grep_code",
    "find_symbol",
    "find_callers",
    "get_file_context",
    "read_file",
    "list_files",
    "index_status",
    "verify_citation",
    "plan_change",
    "search_history",
    "why_lines",
}


def _server_command(repos: list[Path]) -> tuple[str, list[str]]:
    args = [a for r in repos for a in ("--repo", str(r))]
    script = Path(sys.executable).with_name("askrepo-mcp")
    if script.exists():
        return str(script), args
    return sys.executable, ["-m", "askrepo.mcp_server", *args]


def _server_params(repos: list[Path], cwd: Path):
    """How to start ``askrepo-mcp --repo …`` over stdio, with this checkout's code and the
    test's ASKREPO_HOME."""
    from mcp.client.stdio import StdioServerParameters

    command, args = _server_command(repos)
    env = {
        k: os.environ[k]
        for k in ("ASKREPO_HOME", "ASKREPO_MODELS", "HF_HUB_OFFLINE", "ORT_DISABLE_TELEMETRY")
        if k in os.environ
    }
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))


def _line_of(path: Path, needle: str) -> int:
    for n, line in enumerate(path.read_text("utf-8").split("\n"), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in {path}")


class Session:
    """Small helpers over ClientSession: structured results and error texts."""

    def __init__(self, session):
        self.s = session

    async def ok(self, tool: str, **args) -> dict:
        res = await self.s.call_tool(tool, args)
        text = res.content[0].text if res.content else ""
        assert not res.is_error, f"{tool}({args}) failed: {text}"
        assert json.loads(text) == res.structured_content  # JSON text mirrors the structure
        return res.structured_content

    async def err(self, tool: str, **args) -> str:
        res = await self.s.call_tool(tool, args)
        text = res.content[0].text if res.content else ""
        assert res.is_error, f"{tool}({args}) should have failed, got {text[:300]}"
        assert "Traceback" not in text
        return text


@pytest.mark.slow
def test_mcp_round_trip(tmp_path):
    import anyio
    from fakes import FakeEmbedder
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from askrepo.indexer import index_repo

    shop = make_fixture_repo(tmp_path / "shop", git=True)
    click = click_src()
    cases = literal_cases()  # before the slow indexing: a missing file fails fast
    index_repo(shop)  # real model
    index_repo(click, embedder=FakeEmbedder())
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=shop, capture_output=True, text=True, check=True
    ).stdout.strip()
    auth = shop / "shop" / "auth.py"
    def_line = _line_of(auth, "def hash_password(")
    auth_lines = auth.read_text("utf-8").split("\n")

    params = _server_params([shop, click], tmp_path)

    async def run(errlog) -> None:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as raw:
                await raw.initialize()
                s = Session(raw)

                listed = await raw.list_tools()
                assert {t.name for t in listed.tools} == TOOLS
                assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)

                # -- index_status -------------------------------------------------------------
                st = await s.ok("index_status", repo="shop")
                assert st["repo"] == str(shop.resolve()) and st["commit"] == head
                assert st["chunk_count"] > 0 and st["worktree_changed"] is False
                assert st["full_text"] == "askrepo"  # a fresh index has askrepo's full text
                both = await s.ok("index_status")  # two repos: one status each
                assert [r["repo"] for r in both["repos"]] == [str(shop.resolve()), str(click)]
                assert await s.ok("index_status", repo="") == both  # "" is left out, as elsewhere

                # -- search_code (real model) ----------------------------------------------------
                sr = await s.ok(
                    "search_code", query="how are passwords hashed before storing?", repo="shop"
                )
                assert sr["commit"] == head
                top = sr["hits"][0]
                assert (top["path"], top["symbol"]) == ("shop/auth.py", "hash_password")
                assert top["start_line"] <= def_line <= top["end_line"]
                # files=true: a pasted report -> the files to change
                report = (
                    "Bug: the cart total is wrong when a discount code is applied.\n"
                    "Steps: add two items, apply code SAVE10, the total after tax is too high."
                )
                fr = await s.ok("search_code", query=report, files=True, k=3, repo="shop")
                assert fr["files"][0]["path"] in ("shop/cart.py", "shop/pricing.py")
                assert [f["rank"] for f in fr["files"]] == list(range(1, len(fr["files"]) + 1))
                assert set(fr["files"][0]["best"]) == {"start_line", "end_line", "symbol"}
                assert "hits" not in fr and fr["commit"] == head
                msg = await s.err("search_code", query=report, files=True)  # two repos
                assert "pass `repo`" in msg

                # -- grep_code ------------------------------------------------------------------
                gr = await s.ok("grep_code", pattern="hash_password", literal=True, repo="shop")
                first = gr["matches"][0]
                assert (first["path"], first["line"], first["definition"]) == (
                    "shop/auth.py",
                    def_line,
                    True,
                )
                assert gr["commit"] == head
                gr = await s.ok("grep_code", pattern=r"def \w+_password\(", lang="py", repo="shop")
                found = [(m["path"], m["line"]) for m in gr["matches"]]
                assert found[0] == ("shop/auth.py", def_line)
                assert all(p.startswith("tests/") for p, _ in found[1:])  # tests after code

                # -- find_symbol ----------------------------------------------------------------
                fs = await s.ok("find_symbol", name="expire", repo="shop")
                assert [(d["path"], d["symbol"]) for d in fs["definitions"]] == [
                    ("shop/auth.py", "SessionStore.expire")
                ]
                assert fs["definitions"][0]["start_line"] == _line_of(auth, "def expire(")
                # a module-qualified name, as an agent writes it: found by its location
                qual = await s.ok("find_symbol", name="shop::auth::SessionStore", repo="shop")
                assert [(d["path"], d["symbol"]) for d in qual["definitions"]] == [
                    ("shop/auth.py", "SessionStore")
                ]
                none = await s.ok("find_symbol", name="no_such_function_xyz", repo="shop")
                assert none["definitions"] == [] and "No definition" in none["note"]

                # -- find_callers -------------------------------------------------------------
                fc = await s.ok("find_callers", name="hash_password", repo="shop")
                assert [d["symbol"] for d in fc["definitions"]] == ["hash_password"]
                found = await s.ok("find_symbol", name="hash_password", repo="shop")
                assert fc["definitions"] == found["definitions"]  # the same shape and values
                assert fc["elsewhere"] == 0  # no call through another class's object
                got = {(c["path"], c["symbol"], c["certain"]) for c in fc["callers"]}
                assert ("shop/auth.py", "authenticate_user", True) in got
                assert any(p.startswith("tests/") for p, _, _ in got)  # tests by default
                caller = next(c for c in fc["callers"] if c["symbol"] == "authenticate_user")
                assert [x["line"] for x in caller["calls"]] == [
                    n
                    for n, ln in enumerate(auth_lines, 1)
                    if "= hash_password(" in ln or ln.strip().startswith("hash_password(")
                ]
                code_only = await s.ok(
                    "find_callers", name="hash_password", repo="shop", include_tests=False
                )
                assert all(c["file_class"] == "code" for c in code_only["callers"])
                assert code_only["stale"] is False and "indexed_commit" in code_only
                blank = await s.err("find_callers", name="  ", repo="shop")
                assert "name is empty" in blank
                # arguments that do not fit the schema: one line, no pydantic report
                missing = await s.err("find_symbol", repo="shop")
                assert missing == (
                    "Invalid arguments for find_symbol: `name` is required — see the tool's "
                    "input schema"
                )
                wrong = await s.err("search_code", query="x", k="many", repo="shop")
                assert wrong.startswith("Invalid arguments for search_code: `k`: input should")
                assert "\n" not in wrong and "pydantic" not in wrong

                # -- get_file_context / read_file -------------------------------------------------
                ctx = await s.ok(
                    "get_file_context",
                    path="shop/auth.py",
                    line=def_line,
                    before=2,
                    after=2,
                    repo="shop",
                )
                assert (ctx["start_line"], ctx["end_line"]) == (def_line - 2, def_line + 2)
                marked = [r for r in ctx["content"].split("\n") if r.startswith(">")]
                assert marked == [f">{def_line} | {auth_lines[def_line - 1]}"]
                rf = await s.ok(
                    "read_file", path="shop/auth.py", start_line=1, end_line=3, repo="shop"
                )
                assert rf["content"].split("\n") == [
                    f" {n} | {auth_lines[n - 1]}" for n in (1, 2, 3)
                ]
                assert (rf["end_line"], rf["truncated"]) == (3, False)
                secret = await s.ok("read_file", path="shop/settings.py", repo="shop")
                assert "AKIAIOSFODNN7EXAMPLE" not in secret["content"]
                assert "hunter2hunter2" not in secret["content"]
                assert "REDACTED" in secret["content"]
                big = await s.ok("read_file", path="src/click/core.py", repo="click-8.4.1")
                assert (big["start_line"], big["end_line"], big["truncated"]) == (1, 400, True)
                assert big["next_start_line"] == 401 and len(big["content"].split("\n")) == 400
                # the context windows the Click cases describe
                for case in cases:
                    want = case["expected"].get("context")
                    if not want:
                        continue
                    exp = case["expected"]
                    got = await s.ok(
                        "get_file_context",
                        path=exp["path"],
                        line=exp["line_min"],
                        repo="click-8.4.1",
                    )
                    assert {k: got[k] for k in want} == want, case["id"]

                # -- list_files -------------------------------------------------------------------
                lf = await s.ok("list_files", pattern="shop/*.py", limit=3, repo="shop")
                assert [f["path"] for f in lf["files"]] == [
                    "shop/__init__.py",
                    "shop/auth.py",
                    "shop/cart.py",
                ]
                assert lf["next_offset"] == 3 and lf["total"] > 3
                every = await s.ok("list_files", limit=1000, repo="shop")
                paths = {f["path"] for f in every["files"]}
                assert ".env" not in paths and "shop/auth_link.py" not in paths

                # -- refusals are tool errors; the server keeps answering -------------------------
                refusals = {
                    "../outside.txt": "outside the repository",
                    "/etc/passwd": "relative to the repo root",
                    "etc_link/passwd": "outside the repository",
                    ".git/config": ".git",
                    ".env": "was not indexed",
                    "shop/auth_link.py": "was not indexed",
                    "shop/../../shop/shop/auth.py": "outside the repository",
                }
                for bad, why in refusals.items():
                    msg = await s.err("read_file", path=bad, repo="shop")
                    assert why in msg, (bad, msg)
                    msg = await s.err("get_file_context", path=bad, line=1, repo="shop")
                    assert why in msg, (bad, msg)
                assert "limit is 10,240" in await s.err(
                    "grep_code", pattern="a" * 1_000_000, repo="shop"
                )
                assert "limit is 20,000" in await s.err(
                    "search_code", query="x" * 1_000_000, repo="shop"
                )
                assert "Invalid regular expression" in await s.err(
                    "grep_code", pattern="def (", repo="shop"
                )
                assert "Several repos" in await s.err("grep_code", pattern="x")
                assert "Unknown repo" in await s.err("list_files", repo="nope")
                assert "outside shop/auth.py" in await s.err(
                    "get_file_context", path="shop/auth.py", line=10_000, repo="shop"
                )
                again = await s.ok("index_status", repo="shop")
                assert again["commit"] == head

                # -- the Click literal cases through MCP ------------------------------------------
                failures = []
                for case in cases:
                    q = case["search"]
                    args = {"pattern": q["query"], "literal": q.get("literal", False)}
                    args.update({k: q[k] for k in ("path", "lang", "limit") if k in q})
                    res = await s.ok("grep_code", repo="click-8.4.1", **args)
                    if not case_hit(case, res["matches"]):
                        failures.append(case["id"])
                assert failures == []

    with tempfile.TemporaryFile("w+") as errlog:
        try:
            anyio.run(run, errlog)
        except BaseException:
            errlog.seek(0)
            sys.stderr.write("--- server stderr ---\n" + errlog.read()[-5000:])
            raise


def test_a_repository_with_nothing_to_index_is_said_to_be_so_not_to_be_indexed(tmp_path):
    """A repository whose every file is skipped (a binary, an ignored log): the tools said "No
    index — run `askrepo index`", and that run fails with "No indexable files", so an agent
    went round in a loop. The server (warning at start-up, then every tool) says there is
    nothing to index, with what `askrepo index` skips and what to check."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    from typer.testing import CliRunner

    from askrepo.cli import app

    repo = tmp_path / "assets"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "logo.dat").write_bytes(b"\x89PNG\r\n\x00\x00\x00")
    (repo / ".git" / "info" / "exclude").write_text("*.log\n")
    (repo / "build.log").write_text("def build():\n    pass\n")
    index = CliRunner().invoke(app, ["index", str(repo)])
    assert index.exit_code == 2 and "No indexable files" in index.output  # what index says
    says = (
        f"No index for {repo.resolve()}: no indexable files in it (skipped: 1 binary), so "
        "`askrepo index` has nothing to index — check the path, .gitignore and .askrepoignore"
    )

    async def run(errlog) -> None:
        async with stdio_client(_server_params([repo], tmp_path), errlog=errlog) as (r, w):
            async with ClientSession(r, w) as raw:
                await raw.initialize()
                s = Session(raw)
                for tool, args in (
                    ("search_code", {"query": "where is the build step?"}),
                    ("index_status", {}),
                    ("grep_code", {"pattern": "build"}),
                ):
                    msg = await s.err(tool, **args)
                    assert msg == f"Error executing tool {tool}: {says}"

    with tempfile.TemporaryFile("w+") as errlog:
        anyio.run(run, errlog)
        errlog.seek(0)
        assert f"askrepo-mcp: warning: {says}" in errlog.read()


def test_main_without_the_sdk_says_how_to_install(monkeypatch, capsys, tmp_path):
    from askrepo import mcp_server

    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` raises ImportError
    with pytest.raises(SystemExit) as exc:
        mcp_server.main(["--repo", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == 'askrepo-mcp needs the MCP SDK: pip install "askrepo[mcp]"'


def test_repo_selection(tmp_path, monkeypatch):
    from askrepo.mcp_server import Service, repos_from

    a, b = tmp_path / "one" / "app", tmp_path / "two" / "app"
    c = tmp_path / "lib"
    for p in (a, b, c):
        p.mkdir(parents=True)
    s = Service([a, c])
    assert s.pick("app").root == a.resolve() and s.pick(str(c) + "/").root == c.resolve()
    with pytest.raises(UsageError, match="Several repos"):
        s.pick(None)
    with pytest.raises(UsageError, match="ambiguous"):
        Service([a, b]).pick("app")
    with pytest.raises(UsageError, match="Unknown repo"):
        s.pick("nope")
    assert Service([a]).pick(None).root == a.resolve()
    # --repo, else ASKREPO_MCP_REPO (os.pathsep-separated), else the git top-level / cwd
    assert repos_from([str(a)], f"{b}{os.pathsep}{c}", tmp_path) == [a.resolve()]
    assert repos_from(None, f"{b}{os.pathsep}{c}", tmp_path) == [b.resolve(), c.resolve()]
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert repos_from(None, None, c) == [c.resolve()]
    with pytest.raises(UsageError, match="not a directory"):
        repos_from([str(tmp_path / "missing")], None, tmp_path)


def test_tool_wrapper_turns_failures_into_tool_errors():
    from mcp.server.mcpserver.exceptions import ToolError

    from askrepo.mcp_server import _as_tool

    def broken(x: int) -> dict:
        raise KeyError("boom")

    def refused(x: int) -> dict:
        raise UsageError("line 9 is outside a.py (3 lines) — pass 1..3")

    def fine(x: int) -> dict:
        return {"x": x, "path": "a.py"}

    with pytest.raises(ToolError, match=r"^internal error: KeyError: 'boom'$"):
        _as_tool(broken)(1)
    with pytest.raises(ToolError, match=r"^line 9 is outside a\.py"):
        _as_tool(refused)(1)
    res = _as_tool(fine)(2)
    assert res.structured_content == {"x": 2, "path": "a.py"}
    assert json.loads(res.content[0].text) == {"x": 2, "path": "a.py"} and not res.is_error


def test_every_tool_argument_is_described_in_the_input_schema(tmp_path):
    """What an agent reads in tools/list: a description for every argument of every tool, and
    the valid values of an enumerated one (no index is needed: the service opens it lazily)."""
    import anyio

    from askrepo.mcp_server import TOOL_NAMES, Service, build_server
    from askrepo.retriever import MODES

    server = build_server(Service([tmp_path]))
    tools = {t.name: t for t in anyio.run(server.list_tools)}
    assert set(tools) == set(TOOL_NAMES) == TOOLS
    undescribed = [
        f"{name}.{arg}"
        for name, tool in tools.items()
        for arg, prop in tool.input_schema["properties"].items()
        if not str(prop.get("description", "")).strip()
    ]
    assert not undescribed, f"arguments without a description: {undescribed}"
    for name, tool in tools.items():  # every tool takes `repo`, and says what it is
        assert "repo" in tool.input_schema["properties"], name
    mode = tools["search_code"].input_schema["properties"]["mode"]
    assert mode["enum"] == ["hybrid", "dense", "fts"] and mode["default"] == "hybrid"
    assert set(mode["enum"]) == set(MODES)  # the modes the retriever accepts
    # defaults and required arguments are unchanged by the annotations
    grep = tools["grep_code"].input_schema
    assert grep["required"] == ["pattern"] and grep["properties"]["limit"]["default"] == 20
    assert tools["why_lines"].input_schema["required"] == ["path", "start_line"]


def test_list_files_exact_path_with_glob_characters_and_read_file_past_end_message(
    tmp_path, monkeypatch
):
    """A Next.js-style `pages/[id].py` is listed when its path is given (as a glob `[id]` would
    only match `i` or `d`), and a start_line far past the end is named as asked, not as a cap."""
    import anyio
    from fakes import FakeEmbedder

    from askrepo.indexer import index_repo
    from askrepo.mcp_server import Service, build_server

    monkeypatch.setenv("ASKREPO_MCP_REFRESH", "0")
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "[id].py").write_text("def show(request):\n    return request.id\n")
    (root / "pages" / "i.py").write_text("def index():\n    return 1\n")
    index_repo(root, embedder=FakeEmbedder())
    server = build_server(Service([root]))

    async def call(tool, args):
        return await server.call_tool(tool, args)

    for pattern, want in (
        ("pages/[id].py", ["pages/[id].py", "pages/i.py"]),  # the file itself, and the glob
        ("pages/[[]id].py", ["pages/[id].py"]),
        ("pages/*", ["pages/[id].py", "pages/i.py"]),
    ):
        res = anyio.run(call, "list_files", {"pattern": pattern})
        assert [f["path"] for f in res.structured_content["files"]] == want, pattern
    with pytest.raises(Exception, match=r"start_line 999999999999 is past the end of pages/i\.py"):
        anyio.run(call, "read_file", {"path": "pages/i.py", "start_line": 999_999_999_999})


def test_verify_citation_of_a_file_indexed_from_an_edited_work_tree(tmp_path, monkeypatch):
    """An index built with uncommitted edits (or untracked files) cites the text it holds;
    verify_citation checked such a citation against the commit and called it wrong ("lines 4-6
    were never there", "not in commit") while the file was exactly as indexed."""
    import anyio
    from fakes import FakeEmbedder
    from mcp.server.mcpserver.exceptions import ToolError

    from askrepo.indexer import index_repo
    from askrepo.mcp_server import Service, build_server

    monkeypatch.setenv("ASKREPO_MCP_REFRESH", "0")
    root = tmp_path / "work"
    root.mkdir()
    body = "def dashed():\n    return 42\n"
    (root / "-dash.py").write_text(body)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(git + cmd, cwd=root, check=True, capture_output=True)
    (root / "-dash.py").write_text("# one\n# two\n# three\n" + body)  # not committed
    (root / "new file.py").write_text("def fresh():\n    return 1\n")  # untracked
    index_repo(root, embedder=FakeEmbedder())
    server = build_server(Service([root]))

    async def call(args):
        return (await server.call_tool("verify_citation", args)).structured_content

    assert anyio.run(call, {"citation": "-dash.py:4-5"})["status"] == "valid"
    assert anyio.run(call, {"citation": "new file.py:1-2"})["status"] == "valid"
    with pytest.raises(ToolError, match="never there"):  # an explicit @commit: that commit's
        anyio.run(call, {"citation": "-dash.py:4-5@HEAD"})
    (root / "-dash.py").write_text(body)  # edited again since indexing: the commit decides
    assert anyio.run(call, {"citation": "-dash.py:1-2"})["status"] == "valid"
