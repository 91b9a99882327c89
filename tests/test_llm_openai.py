"""OpenAI-compatible backend against a REAL server: llama-cpp-python's ``llama_cpp.server``
serving the embedded SmolLM2-135M on loopback (tests/llama_server.py), started once for the
module and stopped after. Real HTTP, real SSE streaming, real errors (auth, unknown model,
server down, timeout, context overflow). Plus worked examples for the pure helpers.
"""

from __future__ import annotations

import functools
import json

import pytest

from askrepo.errors import BackendError, UsageError
from askrepo.llm import choose_backend
from askrepo.llm_openai import OpenAILLM, _error_text, normalize_base_url, parse_sse
from tests.fixture_repo import indexed_fixture_repo, run_cli
from tests.llama_server import ALIAS, LlamaServer, free_port, require_server

KEY = "test-key-123"


# ------------------------------------------------------------------------------------------
# Pure helpers


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("http://localhost:1234", "http://localhost:1234/v1"),
        ("http://localhost:1234/", "http://localhost:1234/v1"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
        ("localhost:8000", "http://localhost:8000/v1"),
        ("https://box.lan/api/openai/v1", "https://box.lan/api/openai/v1"),
    ],
)
def test_normalize_base_url(raw, norm):
    assert normalize_base_url(raw) == norm


def test_normalize_base_url_rejects_other_schemes():
    with pytest.raises(UsageError, match="not an http"):
        normalize_base_url("ftp://localhost:21")


def test_parse_sse_worked_example():
    lines = [
        ": keep-alive comment",
        'data: {"choices": [{"delta": {"content": "Hel"}}]}',
        "",
        "event: message",
        'data: {"choices": [{"delta":',
        'data:  {"content": "lo"}}]}',
        "",
        "",
        "data: [DONE]",
        "",
        'data: {"after": "done is ignored"}',
        "",
    ]
    events = list(parse_sse(iter(lines)))
    assert events == [
        {"choices": [{"delta": {"content": "Hel"}}]},
        {"choices": [{"delta": {"content": "lo"}}]},
    ]


def test_parse_sse_last_event_without_blank_line_and_bad_json():
    assert list(parse_sse(iter(['data: {"a": 1}']))) == [{"a": 1}]
    with pytest.raises(BackendError, match="not JSON"):
        list(parse_sse(iter(["data: <html>", ""])))


def test_error_text_shapes():
    assert _error_text({"error": {"message": "bad  model\nname"}}) == "bad model name"
    assert _error_text({"detail": [{"msg": "field required"}]}) == "field required"
    assert _error_text({"error": "plain"}) == "plain"
    assert _error_text("not json") == ""


def test_http_error_messages_worked_examples():
    llm = OpenAILLM(model="m", base_url="http://127.0.0.1:9/v1")
    body = {"error": {"message": "This model's maximum context length is 2048 tokens. However…"}}
    assert str(llm._http_error(400, body)).endswith("set ASKREPO_OPENAI_CONTEXT to 2048")
    assert str(llm._http_error(404, {"error": {"message": "model 'm' not found"}})) == (
        "Model m is not served at http://127.0.0.1:9/v1 — load it in the server, or pass a "
        "served model with --model (or ASKREPO_LLM)"
    )
    assert "has no OpenAI chat API (HTTP 404)" in str(llm._http_error(404, None))
    assert str(llm._http_error(500, {"detail": "boom"})) == (
        "The server at http://127.0.0.1:9/v1 failed for model m (HTTP 500: boom) — check its "
        "log, or use `--backend embedded`"
    )


def test_missing_base_url_is_a_usage_error(monkeypatch):
    monkeypatch.delenv("ASKREPO_OPENAI_BASE_URL", raising=False)
    with pytest.raises(UsageError, match="set ASKREPO_OPENAI_BASE_URL"):
        choose_backend("openai")


def test_bad_timeout_env_is_a_usage_error(monkeypatch):
    monkeypatch.setenv("ASKREPO_OPENAI_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="ASKREPO_OPENAI_TIMEOUT='soon' is not a number"):
        OpenAILLM(base_url="http://127.0.0.1:9")


def test_server_down_message():
    url = f"http://127.0.0.1:{free_port()}/v1"
    llm = OpenAILLM(model="m", base_url=url)
    expected = (
        f"No OpenAI-compatible server is reachable at {url} — start it (LM Studio, "
        "llama-server, vLLM, …) or fix ASKREPO_OPENAI_BASE_URL, or use `--backend embedded`"
    )
    for call in (llm.check, lambda: llm.generate("hi")):
        with pytest.raises(BackendError) as exc:
            call()
        assert str(exc.value) == expected
        assert exc.value.exit_code == 4


# ------------------------------------------------------------------------------------------
# Against the real llama_cpp.server


@pytest.fixture(scope="module")
def server():
    require_server()
    with LlamaServer(api_key=KEY, n_ctx=2048) as srv:
        yield srv


@pytest.fixture
def env(server, monkeypatch):
    monkeypatch.setenv("ASKREPO_OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("ASKREPO_OPENAI_API_KEY", KEY)
    monkeypatch.delenv("ASKREPO_LLM", raising=False)
    monkeypatch.delenv("ASKREPO_BACKEND", raising=False)
    monkeypatch.delenv("ASKREPO_OPENAI_CONTEXT", raising=False)
    monkeypatch.delenv("ASKREPO_OPENAI_TIMEOUT", raising=False)
    return server


def test_check_picks_the_only_model_and_generate_streams(env):
    llm = choose_backend("openai")
    assert (llm.name, llm.model) == ("openai", ALIAS)
    assert llm.context_tokens == 4096  # llama_cpp.server does not report it: the default
    pieces: list[str] = []
    text = llm.generate(
        "Name three colors.", system="Answer in one short line.", max_tokens=24,
        stream=pieces.append,
    )  # fmt: skip
    assert text.strip()
    assert len(pieces) > 1  # really streamed, piece by piece
    assert "".join(pieces).strip() == text


def test_stop_sequences_are_sent(env):
    llm = OpenAILLM(model=ALIAS)
    text = llm.generate("Count from 1 to 20, separated by commas.", max_tokens=60, stop=["5"])
    assert "5" not in text
    assert text.strip()


def test_wrong_api_key_message(env, monkeypatch):
    monkeypatch.setenv("ASKREPO_OPENAI_API_KEY", "wrong")
    llm = OpenAILLM(model=ALIAS)
    with pytest.raises(BackendError) as exc:
        llm.check()
    assert str(exc.value).startswith(f"The server at {env.url} refused the request (HTTP 401")
    assert str(exc.value).endswith("set ASKREPO_OPENAI_API_KEY to its API key")
    with pytest.raises(BackendError, match="HTTP 401"):
        llm.generate("hi", max_tokens=4)


def test_model_missing_message(env):
    # llama_cpp.server would silently answer with its default model: check() catches it
    expected = (
        f"Model qwen3:14b is not served at {env.url} — it serves: {ALIAS}; "
        "pass one with --model (or ASKREPO_LLM)"
    )
    with pytest.raises(BackendError) as exc:
        choose_backend("openai", model="qwen3:14b")
    assert str(exc.value) == expected


def test_timeout_message(env):
    llm = OpenAILLM(model=ALIAS, read_timeout=0.05)
    prompt = "Summarize: " + "the quick brown fox jumps over the lazy dog. " * 120  # ~1300 tok
    with pytest.raises(BackendError) as exc:
        llm.generate(prompt, max_tokens=8)
    assert str(exc.value) == (
        f"The server at {env.url} did not answer within 0.05 s — it may be overloaded or "
        "still loading the model; raise ASKREPO_OPENAI_TIMEOUT or try again"
    )


def test_context_overflow_message(env):
    llm = OpenAILLM(model=ALIAS)
    # llama_cpp.server ends a stream silently when the prompt overflows its context (2048)
    with pytest.raises(BackendError) as exc:
        llm.generate("word " * 3000, max_tokens=8)
    assert str(exc.value) == (
        f"The server at {env.url} closed the answer stream without sending anything — check "
        "its log; if the prompt is larger than its context, set ASKREPO_OPENAI_CONTEXT to the "
        "context size it runs with (now 4096)"
    )


def test_auto_uses_the_openai_server_when_ollama_is_down(env, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    llm = choose_backend("auto")
    assert (llm.name, llm.model) == ("openai", ALIAS)
    assert getattr(llm, "note", None) is None


def test_auto_falls_back_to_embedded_and_says_why(env, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    llm = choose_backend("auto", model="missing-model")
    assert llm.name == "embedded"
    assert "Ollama is not reachable" in llm.note
    assert f"Model missing-model is not served at {env.url}" in llm.note


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The fixture repo indexed with the real MiniLM model, in its own ASKREPO_HOME."""
    return indexed_fixture_repo(tmp_path_factory, "home-openai")


_ask = functools.partial(run_cli, "ask", timeout=600)


def test_cli_ask_through_the_server(env, indexed):
    """`askrepo ask --backend openai` end to end: real index, real server, real citations."""
    root, home = indexed
    q = "where is the password checked when a user logs in?"
    p = _ask(q, "--repo", str(root), "--backend", "openai", "-k", "3", "--json", home=home)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert (data["backend"], data["model"]) == ("openai", ALIAS)
    assert data["answer"].strip()
    retrieved = {(h["path"], h["start_line"]) for h in data["retrieved"]}
    for c in data["citations"]:
        assert (c["path"], c["start_line"]) in retrieved
        assert (root / c["path"]).is_file()


def test_cli_one_line_error_when_server_down(indexed, monkeypatch):
    root, home = indexed
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("ASKREPO_OPENAI_BASE_URL", url)
    p = _ask("where is login?", "--repo", str(root), "--backend", "openai", home=home)
    assert p.returncode == 4
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0, p.stderr
    assert p.stderr.startswith(f"error: No OpenAI-compatible server is reachable at {url}/v1")
