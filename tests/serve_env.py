"""Shared set-up for the ``askrepo serve`` tests: two real indexed repos, a scripted LLM, servers.

``ServeEnv`` writes the fixture shop repo and a small second repo ("ledger"), indexes both with
the real MiniLM model under its own ASKREPO_HOME, and starts real uvicorn servers on free
loopback ports (``askrepo.serve.ServerThread``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

from fixture_repo import make_fixture_repo

LEDGER_PY = '''\
"""A double-entry ledger: accounts, postings and the trial balance."""

from __future__ import annotations


class Ledger:
    """Accounts with balances in integer cents; every transfer posts two entries."""

    def __init__(self) -> None:
        self.balances: dict[str, int] = {}

    def transfer(self, source: str, target: str, amount_cents: int) -> None:
        """Move money between two accounts: debit the source, credit the target."""
        if amount_cents <= 0:
            raise ValueError("amount must be positive")
        self.balances[source] = self.balances.get(source, 0) - amount_cents
        self.balances[target] = self.balances.get(target, 0) + amount_cents

    def trial_balance(self) -> int:
        """The sum of all balances; zero when the books are consistent."""
        return sum(self.balances.values())


def reconcile_statement(ledger: Ledger, statement: dict[str, int]) -> list[str]:
    """Accounts whose ledger balance differs from the bank statement."""
    return [acct for acct, cents in statement.items() if ledger.balances.get(acct, 0) != cents]
'''


def make_ledger_repo(dest: Path) -> Path:
    (dest / "ledger").mkdir(parents=True, exist_ok=True)
    (dest / "ledger" / "books.py").write_text(LEDGER_PY, encoding="utf-8")
    (dest / "README.md").write_text("# ledger\n\nDouble-entry bookkeeping.\n", encoding="utf-8")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=dest, check=True, env=env, capture_output=True)
    return dest


def need(module: str, why: str):
    """Import ``module``; when missing, fail under CI=true, else skip with the reason."""
    import importlib

    from click_corpus import missing_prerequisite

    try:
        return importlib.import_module(module)
    except ImportError:
        missing_prerequisite(f"{module} is missing: {why}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ScriptedLLM:
    """A deterministic LLM: streams a fixed answer citing [1] and [2] (optionally waits first)."""

    name = "scripted"
    model = "scripted-1"
    context_tokens = 8192

    def __init__(self, answer: str | None = None, gate: threading.Event | None = None):
        self.answer = answer or "Passwords are hashed with PBKDF2 [1]. Logins compare hashes [2]."
        self.gate = gate
        self.started = threading.Event()

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def generate(self, prompt, *, system=None, max_tokens=300, stream=None, stop=None) -> str:
        self.started.set()
        if self.gate is not None:
            assert self.gate.wait(60), "the test never released the scripted LLM"
        if stream is not None:
            for piece in self.answer.split(" "):
                stream(piece + " ")
        return self.answer


class ServeEnv:
    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.shop = make_fixture_repo(root / "shop")
        self.ledger = make_ledger_repo(root / "ledger")

    def index(self) -> None:
        from askrepo.indexer import index_repo

        for repo in (self.shop, self.ledger):
            index_repo(repo)

    def settings(self, **kw):
        from askrepo.serve import ServeSettings

        kw.setdefault("repos", [self.shop, self.ledger])
        kw.setdefault("port", free_port())
        kw.setdefault("tokens_path", self.home / "tokens.json")
        return ServeSettings(**kw)

    @classmethod
    def indexed(cls, root: Path):
        """A generator for a module-scoped fixture: both repos indexed under ``root/home``,
        with ASKREPO_HOME set to it until the module is done."""
        from fixture_repo import askrepo_home

        with askrepo_home(root / "home"):
            env = cls(root)
            env.index()
            yield env

    def server(self, **kw):
        from askrepo.serve import ServerThread

        return ServerThread(self.settings(**kw))
