"""The evidence-first answer end to end: a real index of the fixture repository (tree-sitter,
MiniLM, LanceDB), the real CLI, no model (`--backend none`, and `auto` with no server).

What a user relies on is asserted: the best definition is cited first, every citation resolves
to real lines of a real file with a hash of exactly those lines, every claim of the card is
supported, and `auto` without a server says in one line how to get prose.
"""

from __future__ import annotations

import json
import re
import socket

import pytest

from askrepo.cli_ask import short_symbol
from askrepo.evidence import evidence_card, gather_graph
from askrepo.lines import span_hash, split_lines
from askrepo.llm import NoModel, choose_backend
from askrepo.retriever import Retriever, SearchOptions
from tests.fixture_repo import QUESTIONS, indexed_fixture_repo, run_cli

pytestmark = [pytest.mark.slow]


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    return indexed_fixture_repo(tmp_path_factory, "home-evidence")


def _ask(*args, home, env=None, stdin=None):
    """`askrepo ask ARGS` with the default backend choice (ASKREPO_BACKEND unset)."""
    env = {"ASKREPO_BACKEND": None, **(env or {})}
    return run_cli("ask", *args, home=home, env=env, timeout=600, stdin=stdin)


def test_card_on_a_real_index_puts_the_answer_first(indexed, monkeypatch):
    root, home = indexed
    monkeypatch.setenv("ASKREPO_HOME", str(home))
    retriever = Retriever.open(root)
    found = 0
    for question, path, symbol in QUESTIONS:
        hits = retriever.search(question, SearchOptions(k=8)).hits
        card = evidence_card(question, hits, gather_graph(retriever.store, hits))
        top = card.sources[0]
        found += (top.path, top.symbol) == (path, symbol)
        assert card.text.startswith("The best match is ")
    assert found >= len(QUESTIONS) - 2, f"best definition first for {found}/{len(QUESTIONS)}"


def test_ask_backend_none_json_cites_real_lines_with_hashes(indexed):
    root, home = indexed
    q = "where is the password checked when a user logs in?"
    p = _ask(q, "--repo", str(root), "--backend", "none", "--json", home=home)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)  # exactly one JSON object
    assert data["backend"] == "none" and not data["refused"]
    assert data["answer"] == data["evidence"]
    assert data["answer"].startswith(
        "The best match is `authenticate_user`, a function in `shop/auth.py:"
    )
    first = data["citations"][0]
    assert (first["n"], first["path"], first["symbol"]) == (1, "shop/auth.py", "authenticate_user")
    for c in data["citations"]:
        lines = split_lines((root / c["path"]).read_text())
        assert 1 <= c["start_line"] <= c["end_line"] <= len(lines)
        assert c["hash"] == span_hash(lines[c["start_line"] - 1 : c["end_line"]])
        assert f"[{c['n']}]" in data["answer"]
    assert data["claims"], "the card is split into claims"
    assert all(cl["unsupported"] == [] for cl in data["claims"])
    assert all(cl["citations"] for cl in data["claims"] if cl["names"])
    assert "generate" not in data["timings_ms"]


def test_ask_auto_without_a_server_answers_from_the_index_and_says_how_to_get_prose(indexed):
    root, home = indexed
    q = "how is a discount code applied to a price?"
    p = _ask(q, "--repo", str(root), home=home, env={"OLLAMA_HOST": closed_port_url()})
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())  # rich wraps at 80 columns when not on a terminal
    assert "The best match is apply_discount, a function in shop/pricing.py" in text
    assert "Sources" in text
    assert "Answered from the index alone, no model" in text
    assert "ollama serve" in text and "--backend openai" in text
    assert "Traceback" not in p.stderr


def test_ask_absent_identifier_is_still_refused_without_a_model(indexed):
    root, home = indexed
    q = "How does `PaymentGatewayRegistry` retry failed charges?"
    p = _ask(q, "--repo", str(root), "--backend", "none", "--json", home=home)
    data = json.loads(p.stdout)
    assert data["refused"] is True and data["citations"] == []
    assert data["answer"].startswith("The code base does not contain `PaymentGatewayRegistry`")


def test_ask_an_error_type_the_code_never_names_is_the_symptom_not_the_subject(indexed):
    # a language's own exception names what went wrong, not what the question is about
    root, home = indexed
    q = "why does authenticate_user throw a NullPointerException?"
    data = json.loads(_ask(q, "--repo", str(root), "--backend", "none", "--json", home=home).stdout)
    assert data["refused"] is False and data["not_in_code"] == ["NullPointerException"]
    assert data["citations"][0]["symbol"] == "authenticate_user"
    # named alone, it is the subject: refused
    q = "where is NullPointerException caught?"
    data = json.loads(_ask(q, "--repo", str(root), "--backend", "none", "--json", home=home).stdout)
    assert data["refused"] is True and "`NullPointerException`" in data["answer"]


def test_ask_a_pasted_error_naming_a_foreign_type_is_answered_not_refused(indexed):
    # the name comes from the user's runtime, not from this code: say so, answer the rest
    root, home = indexed
    q = 'Login fails with "SessionVaultProxy is not initialized": where is the password checked?'
    p = _ask(q, "--repo", str(root), "--backend", "none", "--json", home=home)
    data = json.loads(p.stdout)
    assert data["refused"] is False and data["not_in_code"] == ["SessionVaultProxy"]
    assert data["citations"][0]["symbol"] == "authenticate_user"
    p = _ask(q, "--repo", str(root), "--backend", "none", home=home)
    text = " ".join(p.stdout.split())
    assert "Not in the code base: `SessionVaultProxy` (named in the question" in text
    assert "authenticate_user" in text and "Traceback" not in p.stderr
    # "-": the same question from standard input, the same answer
    piped = _ask("-", "--repo", str(root), "--backend", "none", home=home, stdin=q + "\n")

    def untimed(out):
        return re.sub(r"\d+(?:\.\d+)? s\b", "", out)

    assert piped.returncode == 0 and untimed(piped.stdout) == untimed(p.stdout)


def test_choose_backend_none_and_auto_fallback_to_none(monkeypatch):
    monkeypatch.delenv("ASKREPO_BACKEND", raising=False)
    assert isinstance(choose_backend("none"), NoModel)
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    llm = choose_backend("auto", fallback="none")
    assert llm.name == "none" and "not reachable" in llm.note


def test_sources_keep_whole_locations_in_a_narrow_terminal(indexed):
    """The location is what a reader follows: a narrow terminal wraps or shortens the symbol,
    never the ``path:start-end``."""
    root, home = indexed
    q = "how is a discount code applied to a price?"
    p = _ask(q, "--repo", str(root), "--backend", "none", home=home, env={"COLUMNS": "36"})
    assert p.returncode == 0, p.stderr
    rows = [ln for ln in p.stdout.splitlines() if re.match(r"\s*\[\d+\]\s", ln)]
    assert rows, p.stdout
    for row in rows:
        assert re.search(r"\S+\.(?:py|js):\d+-\d+", row), row


def test_short_symbol_drops_leading_qualifiers_only():
    assert short_symbol("spdlog.details.v_formatter.format") == "…details.v_formatter.format"
    assert short_symbol("Client.send_request") == "Client.send_request"
    assert short_symbol("a.b.c", limit=3) == "…c"
    assert short_symbol(None) == ""


def test_the_card_says_which_question_words_no_indexed_file_holds(indexed):
    root, home = indexed
    q = "how is a discount code applied to a price with blockchain tokens?"
    p = _ask(q, "--repo", str(root), "--backend", "none", "--json", home=home)
    data = json.loads(p.stdout)
    assert not data["refused"]  # a missing word is not a certain refusal: the concept may be
    lead = data["answer"].split("\n")[0]
    assert "The word blockchain occurs nowhere in the indexed files, in any form." in lead
    assert lead.count("nowhere") == 1
    assert "presence" in data["timings_ms"]


def test_a_name_asked_for_is_answered_with_what_its_definition_calls(indexed, monkeypatch):
    """Real index: the card for the bare name ``authenticate_user`` states the call it makes
    to ``hash_password`` (a candidate of the search), and none through a method name another
    object may own (``sessions.get(`` is not shown to be ``SessionStore.get``)."""
    root, home = indexed
    monkeypatch.setenv("ASKREPO_HOME", str(home))
    retriever = Retriever.open(root)
    hits = retriever.search("authenticate_user", SearchOptions(k=8)).hits
    card = evidence_card("authenticate_user", hits, gather_graph(retriever.store, hits))
    assert card.sources[0].symbol == "authenticate_user"
    said = [r.text for r in card.relations]
    assert any(
        r.startswith("`authenticate_user` (`shop/auth.py:") and "calls `hash_password`" in r
        for r in said
    ), said
    assert not any("calls `SessionStore.get`" in r for r in said), said
