"""OpenAI-compatible backend: any local server that speaks the OpenAI chat API, over httpx.

LM Studio, llama.cpp's ``llama-server``, llama-cpp-python's ``llama_cpp.server``, vLLM, LocalAI
and Jan all serve ``GET {base}/models`` and ``POST {base}/chat/completions`` (streamed as
server-sent events). Configuration: ``ASKREPO_OPENAI_BASE_URL`` (e.g.
``http://localhost:1234/v1``; a URL without a path gets ``/v1``), optional
``ASKREPO_OPENAI_API_KEY`` (sent as a Bearer token), the model (``--model`` / ``ASKREPO_LLM``,
else the server's only model), ``ASKREPO_OPENAI_TIMEOUT`` (seconds to wait for the next piece
of the answer, default 600) and ``ASKREPO_OPENAI_CONTEXT`` (the server's context size in tokens
when it does not report one; default 4096).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from askrepo.errors import BackendError, UsageError
from askrepo.llm import filtered_stream, strip_think

ENV_URL = "ASKREPO_OPENAI_BASE_URL"
ENV_KEY = "ASKREPO_OPENAI_API_KEY"
ENV_TIMEOUT = "ASKREPO_OPENAI_TIMEOUT"
ENV_CONTEXT = "ASKREPO_OPENAI_CONTEXT"
DEFAULT_CONTEXT = 4096
DEFAULT_TIMEOUT = 600.0
# Fields servers use to report a model's context size in their /models listing:
# vLLM "max_model_len", LM Studio "max_context_length", others "context_length" / "n_ctx".
# (llama-server's "meta.n_ctx_train" is the size the model was trained with, not the context
# the server runs with, so it is not used.)
_CONTEXT_FIELDS = ("max_model_len", "max_context_length", "context_length", "n_ctx")


def normalize_base_url(url: str) -> str:
    """``http://host:port`` -> ``http://host:port/v1``; a URL with a path is kept (no trailing /).

    >>> normalize_base_url("http://localhost:1234")
    'http://localhost:1234/v1'
    >>> normalize_base_url("http://localhost:8080/v1/")
    'http://localhost:8080/v1'
    >>> normalize_base_url("localhost:8000")
    'http://localhost:8000/v1'
    """
    url = url.strip()
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"{ENV_URL}={url!r} is not an http(s) URL — set it like http://localhost:1234/v1"
        )
    path = parts.path.rstrip("/") or "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def parse_sse(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The JSON events of an OpenAI-style server-sent-event stream, until ``data: [DONE]``.

    Only ``data:`` fields carry payloads; comments (``: ping``), ``event:``/``id:`` fields and
    blank separator lines are skipped. A multi-line event's data lines are joined by ``\\n``.
    """
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r")
        if line == "":
            if data:
                payload = "\n".join(data)
                data = []
                if payload.strip() == "[DONE]":
                    return
                yield _json_event(payload)
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        payload = "\n".join(data)
        if payload.strip() != "[DONE]":
            yield _json_event(payload)


def _json_event(payload: str) -> dict[str, Any]:
    try:
        event = json.loads(payload)
    except json.JSONDecodeError:
        raise BackendError(
            f"The server sent a stream event that is not JSON ({payload[:80]!r}) — "
            "is ASKREPO_OPENAI_BASE_URL an OpenAI-compatible API (usually ending in /v1)?"
        ) from None
    return event if isinstance(event, dict) else {}


def _error_text(body: Any) -> str:
    """The message of an OpenAI-style error body (``{"error": {"message": …}}`` and variants)."""
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body.get("message")))
        if isinstance(err, dict):
            err = err.get("message") or err.get("msg") or json.dumps(err)
        if isinstance(err, list) and err:  # FastAPI validation errors
            first = err[0]
            err = first.get("msg") if isinstance(first, dict) else first
        if err:
            return " ".join(str(err).split())[:300]
    return ""


class OpenAILLM:
    """A model behind an OpenAI-compatible server. ``check()`` picks/verifies the model."""

    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        context_tokens: int | None = None,
        connect_timeout: float = 2.0,
        probe_timeout: float = 5.0,
        read_timeout: float | None = None,
    ) -> None:
        import httpx

        url = base_url or os.environ.get(ENV_URL)
        if not url or not url.strip():
            raise UsageError(
                f"--backend openai needs the server URL — set {ENV_URL} "
                "(e.g. http://localhost:1234/v1 for LM Studio, http://localhost:8080/v1 for "
                "llama-server)"
            )
        self.base_url = normalize_base_url(url)
        self.model = model or ""  # "" until check() asks the server for its only model
        self._api_key = api_key if api_key is not None else os.environ.get(ENV_KEY) or None
        self.context_tokens = context_tokens or _env_int(ENV_CONTEXT) or DEFAULT_CONTEXT
        self._context_fixed = bool(context_tokens or _env_int(ENV_CONTEXT))
        self.read_timeout = read_timeout or _env_float(ENV_TIMEOUT) or DEFAULT_TIMEOUT
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(self.read_timeout, connect=connect_timeout),
        )
        self._probe = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(probe_timeout, connect=connect_timeout),
        )
        self._checked = False

    # -- errors ---------------------------------------------------------------------------

    def _unreachable(self) -> BackendError:
        return BackendError(
            f"No OpenAI-compatible server is reachable at {self.base_url} — start it (LM Studio, "
            f"llama-server, vLLM, …) or fix {ENV_URL}, or use `--backend embedded`"
        )

    def _timed_out(self, what: str, seconds: float) -> BackendError:
        return BackendError(
            f"The server at {self.base_url} did not {what} within {seconds:g} s — it may be "
            f"overloaded or still loading the model; raise {ENV_TIMEOUT} or try again"
        )

    def _http_error(self, status: int, body: Any) -> BackendError:
        detail = _error_text(body)
        suffix = f": {detail}" if detail else ""
        if status in (401, 403):
            return BackendError(
                f"The server at {self.base_url} refused the request (HTTP {status}{suffix}) — "
                f"set {ENV_KEY} to its API key"
            )
        if status == 404 and "model" in detail.lower():
            return self._model_missing([])
        if status == 404:
            return BackendError(
                f"{self.base_url} has no OpenAI chat API (HTTP 404{suffix}) — set {ENV_URL} to "
                "the server's OpenAI base URL, usually ending in /v1"
            )
        if "context" in detail.lower() or "too long" in detail.lower():
            m = re.search(r"context (?:length|window|size)\D{0,20}(\d+)", detail)
            size = m.group(1) if m else "the context size the server runs with"
            return BackendError(
                f"The prompt ({self.context_tokens} tokens allowed) does not fit the server's "
                f"context (HTTP {status}{suffix}) — set {ENV_CONTEXT} to {size}"
            )
        return BackendError(
            f"The server at {self.base_url} failed for model {self.model or '?'} "
            f"(HTTP {status}{suffix}) — check its log, or use `--backend embedded`"
        )

    def _model_missing(self, served: list[str]) -> BackendError:
        if served:
            listed = ", ".join(served[:8]) + (", …" if len(served) > 8 else "")
            return BackendError(
                f"Model {self.model} is not served at {self.base_url} — it serves: {listed}; "
                "pass one with --model (or ASKREPO_LLM)"
            )
        return BackendError(
            f"Model {self.model} is not served at {self.base_url} — load it in the server, "
            "or pass a served model with --model (or ASKREPO_LLM)"
        )

    def _translate(self, exc: BaseException) -> BackendError:
        import httpx

        if isinstance(exc, httpx.ConnectTimeout):
            return self._unreachable()
        if isinstance(exc, httpx.TimeoutException):
            return self._timed_out("answer", self.read_timeout)
        if isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError, ConnectionError)):
            return self._unreachable()
        if isinstance(exc, httpx.TransportError):
            return BackendError(
                f"The connection to {self.base_url} failed ({type(exc).__name__}: {exc}) — "
                "check the server, or use `--backend embedded`"
            )
        return BackendError(f"The server at {self.base_url} failed: {exc}")

    # -- model discovery ------------------------------------------------------------------

    def served_models(self) -> list[dict[str, Any]]:
        """The server's ``GET /models`` entries (each has at least an ``id``)."""
        import httpx

        try:
            resp = self._probe.get("models")
        except httpx.TimeoutException:
            raise self._timed_out("list its models", self._probe.timeout.read or 0) from None
        except httpx.TransportError as exc:
            raise self._translate(exc) from None
        body = _json_or_none(resp)
        if resp.status_code != 200:
            raise self._http_error(resp.status_code, body)
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise BackendError(
                f"{self.base_url}/models did not return an OpenAI model list — set {ENV_URL} "
                "to the server's OpenAI base URL, usually ending in /v1"
            )
        return [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]

    def check(self) -> None:
        """Raise BackendError unless the server answers and serves the model (short timeouts).

        Without a model name, the server's only model is used (several: the error lists them).
        Servers that ignore an unknown model name (llama_cpp.server answers with its default)
        are caught here, before the first question.
        """
        models = self.served_models()
        ids = [m["id"] for m in models]
        if not self.model:
            if len(ids) == 1:
                self.model = ids[0]
            elif not ids:
                raise BackendError(
                    f"The server at {self.base_url} serves no model — load one in the server"
                )
            else:
                listed = ", ".join(ids[:8]) + (", …" if len(ids) > 8 else "")
                raise BackendError(
                    f"The server at {self.base_url} serves several models ({listed}) — "
                    "pick one with --model (or ASKREPO_LLM)"
                )
        entry = next((m for m in models if m["id"] == self.model), None)
        if entry is None:
            raise self._model_missing(ids)
        if not self._context_fixed:
            found = _context_of(entry)
            if found:
                self.context_tokens = found
        self._checked = True

    # -- LLM protocol ---------------------------------------------------------------------

    def generate(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 300,
        stream: Callable[[str], None] | None = None,
        stop: list[str] | None = None,
    ) -> str:
        import httpx

        if not self.model:
            self.check()
        messages: list[dict[str, str]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": True,
        }
        if stop:
            body["stop"] = list(stop)[:4]  # the OpenAI API takes at most 4 stop sequences
        feed, finish = filtered_stream(stream)
        parts: list[str] = []
        try:
            with self._client.stream("POST", "chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    resp.read()
                    raise self._http_error(resp.status_code, _json_or_none(resp))
                if "text/event-stream" not in resp.headers.get("content-type", ""):
                    # a server that ignores "stream": one JSON completion
                    resp.read()
                    events: Iterator[dict[str, Any]] = iter([_json_or_none(resp) or {}])
                else:
                    events = parse_sse(resp.iter_lines())
                seen = 0
                for event in events:
                    seen += 1
                    if "error" in event:
                        raise self._http_error(500, event)
                    piece = _content(event)
                    if piece:
                        parts.append(piece)
                        feed(piece)
        except httpx.TransportError as exc:
            raise self._translate(exc) from None
        if not seen:  # e.g. llama_cpp.server ends the stream silently when the prompt is too long
            raise BackendError(
                f"The server at {self.base_url} closed the answer stream without sending "
                f"anything — check its log; if the prompt is larger than its context, set "
                f"{ENV_CONTEXT} to the context size it runs with (now {self.context_tokens})"
            )
        finish()
        return strip_think("".join(parts))

    def count_tokens(self, text: str) -> int:
        """Approximate: about 3 characters per token for code (errs on the high side)."""
        return (len(text) + 2) // 3

    def close(self) -> None:
        self._client.close()
        self._probe.close()


def _content(event: dict[str, Any]) -> str:
    """The text of one chat-completion chunk (``delta``) or a whole completion (``message``).

    Reasoning fields (``reasoning_content``) are not part of the answer and are skipped.
    """
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    choice = choices[0]
    msg = choice.get("delta") or choice.get("message") or {}
    content = msg.get("content") if isinstance(msg, dict) else None
    if content is None:
        content = choice.get("text")  # legacy completions shape
    return content if isinstance(content, str) else ""


def _context_of(entry: dict[str, Any]) -> int | None:
    for key in _CONTEXT_FIELDS:
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value
    meta = entry.get("meta")
    if isinstance(meta, dict):
        value = meta.get("n_ctx")
        if isinstance(value, int) and value > 0:
            return value
    return None


def _json_or_none(resp: Any) -> Any:
    try:
        return resp.json()
    except (ValueError, UnicodeDecodeError):
        return None


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise UsageError(
            f"{name}={raw!r} is not a whole number — set it like {name}=8192"
        ) from None
    if value < 256:
        raise UsageError(f"{name}={value} is too small — set the server's context size (≥ 256)")
    return value


def _env_float(name: str) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number of seconds — e.g. {name}=120") from None
    if value <= 0:
        raise UsageError(f"{name} must be positive (got {raw})")
    return value
