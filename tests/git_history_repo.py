"""A real git repository with a scripted history, for the history / why / eval-from-git tests.

Commits (oldest first, one minute apart, fixed dates so runs are reproducible):

 1. "Add HTTP client"                        client.py: Client, fetch, backoff
 2. "Add config parser"                      parser.py: parse_config, _strip
 3. "Retry on 503 from the load balancer"    client.py: fetch (+ body paragraph)
 4. "Add tests for the client"               tests/test_client.py only
 5. "Move the client into the http package"  rename client.py -> http/client.py
 6. "Reformat parser"                        whitespace only (re-indented)
 7. "Use double quotes in parser"            quote style only; listed in .git-blame-ignore-revs
 8. "Add debug logging to parse_config"      parser.py
 9. 'Revert "Add debug logging ..."'         git revert of 8
10. "Bump requests from 2.30.0 to 2.31.0"    by dependabot[bot], requirements.txt
11. "Add response cache" (branch feature)    http/cache.py: ResponseCache, merged with --no-ff
12. merge commit
13. "Rotate deploy token" with a GitHub token in the body (must be redacted)
14. "Document the retry policy"              README.md only
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

CLIENT_V1 = '''import time


class Client:
    """A tiny HTTP client."""

    def __init__(self, base):
        self.base = base

    def fetch(self, path):
        return self.base + path


def backoff(attempt):
    return min(2 ** attempt, 30)
'''

CLIENT_V2 = '''import time


class Client:
    """A tiny HTTP client."""

    def __init__(self, base):
        self.base = base

    def fetch(self, path):
        for attempt in range(5):
            status = self._get(path)
            if status != 503:
                return status
            time.sleep(backoff(attempt))
        return 503


def backoff(attempt):
    return min(2 ** attempt, 30)
'''

PARSER_V1 = """def parse_config(text):
    out = {}
    for line in text.splitlines():
        if '=' in line:
            key, value = line.split('=', 1)
            out[_strip(key)] = _strip(value)
    return out


def _strip(s):
    return s.strip()
"""

# the same code, re-indented with tabs->8 spaces in the loop (whitespace only)
PARSER_V2 = PARSER_V1.replace("        if '=' in line:", "        if '=' in line :")
PARSER_V3 = PARSER_V2.replace("'", '"')
PARSER_V4 = PARSER_V3.replace("    return out", "    print('parsed', out)\n    return out")

CACHE = '''class ResponseCache:
    """Keeps recent responses in memory."""

    def __init__(self):
        self.items = {}

    def get(self, key):
        return self.items.get(key)
'''

TEST_CLIENT = """from http.client import Client


def test_fetch():
    assert Client("x").base == "x"
"""


def _git(root: Path, *args: str, date: str | None = None, author: str | None = None) -> str:
    env = dict(os.environ)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    env.update(
        GIT_AUTHOR_NAME=author or "Ada Lovelace",
        GIT_AUTHOR_EMAIL="ada@example.org",
        GIT_COMMITTER_NAME="Ada Lovelace",
        GIT_COMMITTER_EMAIL="ada@example.org",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
    )
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_history_repo(root: Path) -> dict[str, str]:
    """Create the repository; returns {label: sha} for the scripted commits."""
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    minute = [0]

    def commit(label: str, message: str, author: str | None = None) -> str:
        minute[0] += 1
        date = f"2024-03-01T10:{minute[0]:02d}:00+00:00"
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", message, date=date, author=author)
        shas[label] = _git(root, "rev-parse", "HEAD").strip()
        return shas[label]

    shas: dict[str, str] = {}
    w = lambda rel, text: _write(root, rel, text)  # noqa: E731

    w("client.py", CLIENT_V1)
    commit("client", "Add HTTP client")
    w("parser.py", PARSER_V1)
    commit("parser", "Add config parser")
    w("client.py", CLIENT_V2)
    commit(
        "retry",
        "Retry on 503 from the load balancer\n\n"
        "The load balancer answers 503 Service Unavailable while a deploy drains the old\n"
        "instances; retrying with exponential backoff hides that from users.\n\n"
        "Signed-off-by: Ada Lovelace <ada@example.org>",
    )
    w("tests/test_client.py", TEST_CLIENT)
    commit("tests", "Add tests for the client")
    (root / "http").mkdir()
    _git(root, "mv", "client.py", "http/client.py")
    commit("move", "Move the client into the http package")
    w("parser.py", PARSER_V2)
    commit("reformat", "Reformat parser")
    w("parser.py", PARSER_V3)
    commit("quotes", "Use double quotes in parser")
    w("parser.py", PARSER_V4)
    commit("debug", "Add debug logging to parse_config")
    minute[0] += 1
    _git(root, "revert", "--no-edit", "HEAD", date=f"2024-03-01T10:{minute[0]:02d}:00+00:00")
    shas["revert"] = _git(root, "rev-parse", "HEAD").strip()
    w("requirements.txt", "requests==2.31.0\n")
    commit("bump", "Bump requests from 2.30.0 to 2.31.0", author="dependabot[bot]")
    _git(root, "checkout", "-q", "-b", "feature")
    w("http/cache.py", CACHE)
    commit("cache", "Add response cache\n\nRepeated GETs within a request are served from memory.")
    _git(root, "checkout", "-q", "main")
    minute[0] += 1
    _git(
        root,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge branch 'feature'",
        "feature",
        date=f"2024-03-01T10:{minute[0]:02d}:00+00:00",
    )
    shas["merge"] = _git(root, "rev-parse", "HEAD").strip()
    w("deploy.cfg", "region = eu\n")
    commit("token", f"Rotate deploy token\n\nThe old one leaked; new token is {TOKEN} for now.")
    w("README.md", "# demo\n\nThe client retries 503 answers with backoff.\n")
    commit("docs", "Document the retry policy")
    (root / ".git-blame-ignore-revs").write_text(f"# style only\n{shas['quotes']}\n")
    commit("ignore", "Skip the quote-style commit in blame")
    return shas


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
