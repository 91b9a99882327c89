"""Issue 10 item 7: every error a user can cause is one line with a fix — bad ASKREPO_* values,
an unusable ASKREPO_HOME, a damaged LanceDB index, a failing ripgrep — never a traceback; and
Ctrl-C outside `index` does not claim that "nothing was committed". Real CLI subprocesses."""

from __future__ import annotations

import subprocess

import pytest
import typer

from askrepo.indexer import index_repo
from tests.fakes import FakeEmbedder
from tests.fixture_repo import run_cli

COMMANDS = {
    "index": ["index", "{repo}"],
    "search": ["search", "alpha", "--repo", "{repo}", "--mode", "fts"],
    "ask": ["ask", "where is alpha?", "--repo", "{repo}", "--backend", "embedded"],
    "grep": ["grep", "alpha", "--repo", "{repo}"],
    "eval": ["eval", "--repo", "{repo}", "--configs", "hybrid"],
}


def _one_line(p: subprocess.CompletedProcess, *needles: str) -> str:
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    repo = base / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def alpha():\n    return 1\n")
    home = base / "home"
    mp = pytest.MonkeyPatch()
    mp.setenv("ASKREPO_HOME", str(home))
    index_repo(repo, embedder=FakeEmbedder())
    mp.undo()
    blocker = base / "a-file"
    blocker.write_text("x")
    return repo, home, blocker


HOSTILE = {
    "topk-abc": ({"ASKREPO_TOPK": "abc"}, "ASKREPO_TOPK='abc' is not a positive whole number"),
    "max-bytes-negative": ({"ASKREPO_MAX_FILE_BYTES": "-1"}, "ASKREPO_MAX_FILE_BYTES='-1'"),
    "max-bytes-word": ({"ASKREPO_MAX_FILE_BYTES": "x"}, "ASKREPO_MAX_FILE_BYTES='x'"),
    "auto-refresh-word": (
        {"ASKREPO_AUTO_REFRESH": "maybe"},
        "ASKREPO_AUTO_REFRESH='maybe' is neither on nor off",
    ),
    "home-under-a-file": ({"ASKREPO_HOME": "{blocker}/sub"}, "ASKREPO_HOME="),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_command_with_hostile_env_values(indexed, command, case):
    repo, home, blocker = indexed
    env_t, needle = HOSTILE[case]
    env = {"ASKREPO_HOME": str(home)}
    env.update({k: v.format(blocker=blocker) for k, v in env_t.items()})
    args = [a.format(repo=repo) for a in COMMANDS[command]]
    _one_line(run_cli(*args, env=env), needle)


def test_damaged_lancedb_index_is_one_line(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def alpha():\n    return 1\n")
    home = tmp_path / "home"
    monkeypatch.setenv("ASKREPO_HOME", str(home))
    index_repo(repo, embedder=FakeEmbedder())
    damaged = 0
    for p in home.rglob("*.lance"):
        if p.is_file():
            p.write_bytes(b"garbage")
            damaged += 1
    assert damaged
    line = _one_line(
        run_cli(*COMMANDS["search"][:2], "--repo", str(repo), "--mode", "fts", home=home)
    )
    assert "askrepo index --rebuild" in line


def test_failing_ripgrep_is_one_line(indexed, tmp_path):
    repo, home, _ = indexed
    broken = tmp_path / "rg"
    broken.write_text("#!/bin/sh\nexit 101\n")
    broken.chmod(0o755)
    env = {"ASKREPO_HOME": str(home), "ASKREPO_RG": str(broken)}
    _one_line(run_cli("grep", "alpha", "--repo", str(repo), env=env), "ripgrep failed", "reinstall")
    env["ASKREPO_RG"] = str(tmp_path / "missing-rg")
    _one_line(run_cli("grep", "alpha", "--repo", str(repo), env=env), "ASKREPO_RG=")


def test_ctrl_c_says_nothing_was_committed_only_for_index(capsys):
    from askrepo.cli import friendly

    def index():
        raise KeyboardInterrupt

    def search():
        raise KeyboardInterrupt

    for fn, committed in ((index, True), (search, False)):
        with pytest.raises(typer.Exit) as exc:
            friendly(fn)()
        assert exc.value.exit_code == 130
        err = capsys.readouterr().err
        assert "Interrupted" in err
        assert ("nothing was committed" in err) is committed


def test_unexpected_errors_become_one_line_messages():
    from askrepo.cli import unexpected_error_message

    msg = unexpected_error_message(RuntimeError("lance error: Not found: x.lance"))
    assert "askrepo index --rebuild" in msg
    msg = unexpected_error_message(PermissionError(13, "Permission denied", "/root/x"))
    assert msg.startswith("Permission denied: /root/x —")
    assert "bug" in unexpected_error_message(ZeroDivisionError("division by zero"))
