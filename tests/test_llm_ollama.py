"""Ollama backend against tests/ollama_stub.py — a STUB of the Ollama HTTP API, not a real server.

A real Ollama server with qwen3:14b cannot run on the test machine; the stub serves the
documented endpoints so the real ``ollama`` client, our request shape, stream assembly and
error messages are exercised end to end over HTTP. Also: strip_think/ThinkFilter and
choose_backend.
"""

from __future__ import annotations

import importlib.util
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askrepo.errors import BackendError, UsageError
from askrepo.llm import ThinkFilter, choose_backend, strip_think
from askrepo.llm_ollama import OllamaLLM
from tests.ollama_stub import OllamaStub

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(not HAS_LLAMA, reason="llama-cpp-python is not installed")


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# ------------------------------------------------------------------------------------------
# strip_think / ThinkFilter


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<think>\nplan\n</think>\n\nThe answer [1].", "The answer [1]."),
        ("A <think>x</think>B<think>y</think> C", "A B C"),
        ("<think>never finished", ""),
        ("reasoning the template opened</think>Answer", "Answer"),
        ("No thinking here.", "No thinking here."),
    ],
)
def test_strip_think(raw, clean):
    assert strip_think(raw) == clean


@given(st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=40))
def test_think_filter_handles_tags_split_across_pieces(cuts):
    text = "Intro <think>secret <b> plan</think>Answer <th>[1] <thin and done"
    pieces, i = [], 0
    for c in cuts * 20:
        if i >= len(text):
            break
        pieces.append(text[i : i + c])
        i += c
    pieces.append(text[i:])
    f = ThinkFilter()
    shown = "".join(f.feed(p) for p in pieces) + f.flush()
    assert shown == "Intro Answer <th>[1] <thin and done"


# ------------------------------------------------------------------------------------------
# OllamaLLM over HTTP (stub)


def test_generate_streams_and_sends_the_documented_request():
    reply = ["<think>", "I should", " cite</think>", "The answer", " is ", "in [1]."]
    with OllamaStub(models=["qwen3:14b"], reply=reply) as stub:
        llm = OllamaLLM(host=stub.url)
        pieces: list[str] = []
        text = llm.generate(
            "Where is X?", system="Be brief.", max_tokens=50, stream=pieces.append, stop=["\n\n"]
        )
    assert text == "The answer is in [1]."
    assert "".join(pieces) == "The answer is in [1]."  # thinking never reaches the terminal
    method, path, body = stub.requests[-1]
    assert (method, path) == ("POST", "/api/chat")
    assert body["model"] == "qwen3:14b"
    assert body["stream"] is True
    assert body["think"] is False
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Where is X?"},
    ]
    assert body["options"]["num_predict"] == 50
    assert body["options"]["num_ctx"] == llm.context_tokens == 8192
    assert body["options"]["stop"] == ["\n\n"]
    assert (llm.name, llm.model) == ("ollama", "qwen3:14b")


def test_check_passes_when_the_model_is_pulled_and_uses_show():
    with OllamaStub(models=["llama3.2:latest"]) as stub:
        OllamaLLM(model="llama3.2", host=stub.url).check()
    assert stub.requests == [("POST", "/api/show", {"model": "llama3.2"})]


def test_model_not_pulled_message():
    expected = (
        "Model qwen3:14b is not pulled — run `ollama pull qwen3:14b` (or use `--backend embedded`)"
    )
    with OllamaStub(models=["other:1b"]) as stub:
        llm = OllamaLLM(host=stub.url)
        with pytest.raises(BackendError) as exc:
            llm.check()
        assert str(exc.value) == expected
        with pytest.raises(BackendError) as exc:
            llm.generate("hi")
        assert str(exc.value) == expected


def test_server_down_message():
    url = closed_port_url()
    llm = OllamaLLM(host=url)
    expected = (
        f"Ollama is not reachable at {url} — start it with `ollama serve`, "
        "or use the embedded model with `--backend embedded`"
    )
    for call in (llm.check, lambda: llm.generate("hi")):
        with pytest.raises(BackendError) as exc:
            call()
        assert str(exc.value) == expected
        assert exc.value.exit_code == 4


def test_ollama_host_env_and_default(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert OllamaLLM().host == "http://localhost:11434"
    with OllamaStub(models=["qwen3:14b"], reply=["ok"]) as stub:
        monkeypatch.setenv("OLLAMA_HOST", stub.url)
        assert OllamaLLM().generate("hi") == "ok"


# ------------------------------------------------------------------------------------------
# choose_backend


def test_auto_picks_ollama_when_server_has_the_model(monkeypatch):
    monkeypatch.delenv("ASKREPO_BACKEND", raising=False)
    monkeypatch.setenv("ASKREPO_LLM", "qwen2.5-coder:7b")
    with OllamaStub(models=["qwen2.5-coder:7b"]) as stub:
        monkeypatch.setenv("OLLAMA_HOST", stub.url)
        llm = choose_backend("auto")
    assert (llm.name, llm.model) == ("ollama", "qwen2.5-coder:7b")


def test_explicit_ollama_backend_raises_when_server_down(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    with pytest.raises(BackendError, match="not reachable"):
        choose_backend("ollama")


@needs_llama
def test_auto_falls_back_to_embedded_when_server_down(monkeypatch):
    monkeypatch.delenv("ASKREPO_BACKEND", raising=False)
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    llm = choose_backend("auto")
    assert llm.name == "embedded"
    assert llm.model == "SmolLM2-135M-Instruct (Q4_1, embedded)"
    assert "not reachable" in llm.note


@needs_llama
def test_auto_falls_back_to_embedded_when_model_missing(monkeypatch):
    monkeypatch.delenv("ASKREPO_BACKEND", raising=False)
    with OllamaStub(models=["other:1b"]) as stub:
        monkeypatch.setenv("OLLAMA_HOST", stub.url)
        llm = choose_backend("auto", model="qwen3:14b")
    assert llm.name == "embedded"
    assert "ollama pull qwen3:14b" in llm.note


@needs_llama
def test_backend_env_selects_embedded_without_contacting_ollama(monkeypatch):
    with OllamaStub(models=["qwen3:14b"]) as stub:
        monkeypatch.setenv("OLLAMA_HOST", stub.url)
        monkeypatch.setenv("ASKREPO_BACKEND", "embedded")
        llm = choose_backend("auto")
    assert llm.name == "embedded" and llm.note is None
    assert stub.requests == []


def test_unknown_backend_is_a_usage_error():
    with pytest.raises(UsageError, match="auto, ollama, openai, embedded"):
        choose_backend("gpt4all")


def test_embedded_backend_asked_for_a_model_by_name_is_a_usage_error(monkeypatch):
    # the embedded backend runs a .gguf file; a name would be ignored and SmolLM2 run instead
    monkeypatch.delenv("ASKREPO_BACKEND", raising=False)
    with pytest.raises(UsageError, match=r"not a model named 'nosuch' — pass a \.gguf path"):
        choose_backend("embedded", model="nosuch")
