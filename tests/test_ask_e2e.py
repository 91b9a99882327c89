"""`askrepo ask` end to end: real index (tree-sitter, embedding model, LanceDB) of the fixture
repo, real embedded LLM (SmolLM2-135M via llama-cpp-python), through the real CLI.

A 135M model's answers are weak, so only what it reliably produces is asserted: a non-empty
answer of at most two cited sentences (its grammar), every citation resolving to real lines of
real files with the hash of exactly those lines, and the evidence card under it.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess

import pytest

from askrepo.lines import span_hash, split_lines
from tests.fixture_repo import indexed_fixture_repo, run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.llm,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (pip install 'askrepo[embedded]')",
    ),
]

JSON_KEYS = {
    "repo", "question", "answer", "citations", "invalid_citations", "retrieved", "backend", "model",
    "timings_ms", "refused", "evidence", "evidence_sources", "claims", "note", "not_in_code",
    "indexed_commit", "head_commit", "stale", "changed_files",
}  # fmt: skip


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    return indexed_fixture_repo(tmp_path_factory, "home-ask")


_ask = functools.partial(run_cli, "ask", timeout=1200)  # the 135M model on 2 loaded cores


def _head(root) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_ask_json_answer_cites_only_real_retrieved_lines(indexed):
    root, home = indexed
    q = "where is the password checked when a user logs in?"
    p = _ask(q, "--repo", str(root), "--backend", "embedded", "-k", "4", "--json", home=home)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)  # exactly one JSON object
    assert set(data) == JSON_KEYS
    assert data["question"] == q
    assert data["answer"].strip()
    assert data["backend"] == "embedded"
    assert data["model"] == "SmolLM2-135M-Instruct (Q4_1, embedded)"
    assert not data["refused"]
    assert {"retrieve", "evidence", "generate", "claims", "total"} <= set(data["timings_ms"])
    assert 0 < len(data["retrieved"]) <= 4
    head = _head(root)
    shown = data["answer"] + "\n" + data["evidence"]
    for c in data["citations"]:
        assert f"[{c['n']}]" in shown
        lines = split_lines((root / c["path"]).read_text())
        assert 1 <= c["start_line"] <= c["end_line"] <= len(lines)
        assert c["hash"] == span_hash(lines[c["start_line"] - 1 : c["end_line"]])
        assert c["commit"] == head
    for n in data["invalid_citations"]:
        assert f"[{n}]" not in data["answer"]
    # the tiny model writes at most two sentences, each ending with a citation (grammar)
    assert len(data["claims"]) <= 2
    for claim in data["claims"]:
        assert claim["citations"], claim
        assert set(claim) == {"text", "citations", "names", "unsupported"}


def test_ask_refuses_absent_identifier_without_the_model(indexed):
    root, home = indexed
    q = "How does `PaymentGatewayRegistry` retry failed charges?"
    p = _ask(q, "--repo", str(root), "--backend", "embedded", "--json", home=home)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["refused"] is True
    assert data["answer"].startswith("The code base does not contain `PaymentGatewayRegistry`")
    assert data["citations"] == []
    assert "generate" not in data["timings_ms"]


def test_ask_human_output_labels_the_weak_model(indexed):
    root, home = indexed
    q = "how are passwords hashed before they are stored?"
    p = _ask(q, "--repo", str(root), "--backend", "embedded", "-k", "2", home=home)
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())  # rich wraps at 80 columns when not on a terminal
    assert "Answered by embedded · SmolLM2-135M-Instruct (Q4_1, embedded)" in text
    assert "135M embedded model, expect weak answers" in text
    assert "Evidence from the index" in text and "The best match is hash_password" in text
    assert "Sources" in text
    assert "Traceback" not in p.stderr


def test_ask_missing_index_is_one_line_error(tmp_path):
    p = _ask("anything?", "--repo", str(tmp_path), "--backend", "embedded", home=tmp_path / "h")
    assert p.returncode == 2
    assert "askrepo index" in p.stderr and "Traceback" not in p.stderr
