"""The MCP tools verify_citation and plan_change through the real protocol: an askrepo-mcp
subprocess on stdio, driven by the SDK client, over the fixture repo indexed with the real model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_repo import make_fixture_repo

from askrepo.lines import span_hash, split_lines

mcp = pytest.importorskip("mcp", reason="the MCP SDK (askrepo[mcp]) is not installed")

ROOT = Path(__file__).resolve().parent.parent


def _line_of(lines: list[str], needle: str) -> int:
    return next(n for n, line in enumerate(lines, 1) if needle in line)


async def _ok(session, tool: str, **args) -> dict:
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    assert not res.is_error, f"{tool}({args}) failed: {text}"
    assert json.loads(text) == res.structured_content
    return res.structured_content


async def _err(session, tool: str, **args) -> str:
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    assert res.is_error, f"{tool}({args}) should have failed, got {text[:300]}"
    assert "Traceback" not in text and "\n" not in text.strip()
    return text


@pytest.mark.slow
def test_verify_citation_and_plan_change_over_mcp(tmp_path):
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from askrepo.indexer import index_repo

    shop = make_fixture_repo(tmp_path / "shop", git=True)
    index_repo(shop)  # real model: plan_change searches
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=shop, capture_output=True, text=True, check=True
    ).stdout.strip()
    auth = shop / "shop" / "auth.py"
    lines = split_lines(auth.read_text("utf-8"))
    start = _line_of(lines, "def hash_password(")
    end = start + 4  # the def line, docstring and body (3 lines) of hash_password
    cited = f"shop/auth.py:{start}-{end}"
    digest = span_hash(lines[start - 1 : end])

    env = {
        k: os.environ[k]
        for k in ("ASKREPO_HOME", "ASKREPO_MODELS", "HF_HUB_OFFLINE", "ORT_DISABLE_TELEMETRY")
        if k in os.environ
    }
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "askrepo.mcp_server", "--repo", str(shop)],
        env=env,
        cwd=str(tmp_path),
    )

    async def run() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                names = {t.name for t in (await s.list_tools()).tools}
                assert {"verify_citation", "plan_change"} <= names

                # -- verify_citation --------------------------------------------------------
                v = await _ok(s, "verify_citation", citation=cited)
                assert (v["status"], v["commit"], v["indexed_commit"]) == ("valid", head, head)
                assert v["stale"] is False and v["changed_files"] == 0 and v["head_commit"] == head
                assert v["expected_hash"] == digest
                v = await _ok(s, "verify_citation", citation=cited, hash=digest)
                assert (v["status"], v["commit"]) == ("valid", None)

                auth.write_text("\n".join(["# moved down", *lines]) + "\n", "utf-8")
                v = await _ok(s, "verify_citation", citation=f"{cited}@{head}")
                assert v["status"] == "moved"
                assert v["moved_to"] == [
                    {"path": "shop/auth.py", "start_line": start + 1, "end_line": end + 1}
                ]
                assert "def hash_password" not in json.dumps(v)  # no code in the result

                msg = await _err(s, "verify_citation", citation="shop/auth.py")
                assert "is not a citation" in msg
                msg = await _err(s, "verify_citation", citation="../x.py:1-2")
                assert "outside the repository" in msg

                # -- plan_change ------------------------------------------------------------
                p = await _ok(s, "plan_change", request="add a minimum password length check")
                assert p["commit"] == head and p["prose"] is None
                # like every tool: the index's freshness (auth.py was edited above)
                assert p["indexed_commit"] == head and p["stale"] is True and p["changed_files"]
                paths = [f["path"] for f in p["files"]]
                assert "shop/auth.py" in paths[:3]
                whys = [w for f in p["files"] for it in f["items"] for w in it["why"]]
                assert any(w.startswith("defines ") for w in whys)
                msg = await _err(s, "plan_change", request="   ")
                assert "empty" in msg

    anyio.run(run)
