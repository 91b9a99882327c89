"""Ollama backend: the official ``ollama`` client talking to a local server (chat API, streamed)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from askrepo.errors import BackendError
from askrepo.llm import filtered_stream, strip_think

DEFAULT_MODEL = "qwen3:14b"
DEFAULT_HOST = "http://localhost:11434"
DEFAULT_NUM_CTX = 8192


class OllamaLLM:
    """A model served by Ollama. ``check()`` verifies server and model before first use."""

    name = "ollama"

    def __init__(
        self,
        model: str | None = None,
        host: str | None = None,
        *,
        num_ctx: int = DEFAULT_NUM_CTX,
        connect_timeout: float = 2.0,
        probe_timeout: float = 5.0,
        read_timeout: float = 600.0,
    ) -> None:
        import httpx
        import ollama

        self.model = model or DEFAULT_MODEL
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        # num_ctx is sent with every request, so the server really uses this context size.
        self.context_tokens = num_ctx
        self._client = ollama.Client(
            host=self.host, timeout=httpx.Timeout(read_timeout, connect=connect_timeout)
        )
        self._probe = ollama.Client(
            host=self.host, timeout=httpx.Timeout(probe_timeout, connect=connect_timeout)
        )

    # -- errors ---------------------------------------------------------------------------

    def _not_pulled(self) -> BackendError:
        return BackendError(
            f"Model {self.model} is not pulled — run `ollama pull {self.model}` "
            "(or use `--backend embedded`)"
        )

    def _unreachable(self) -> BackendError:
        return BackendError(
            f"Ollama is not reachable at {self.host} — start it with `ollama serve`, "
            "or use the embedded model with `--backend embedded`"
        )

    def _translate(self, exc: BaseException) -> BackendError:
        import httpx
        import ollama

        if isinstance(exc, ollama.ResponseError):
            if exc.status_code == 404 or "not found" in str(exc.error).lower():
                return self._not_pulled()
            return BackendError(
                f"Ollama at {self.host} failed for model {self.model}: {exc.error} — "
                "check `ollama ps` and the server log, or use `--backend embedded`"
            )
        if isinstance(exc, (ConnectionError, httpx.TransportError)):
            return self._unreachable()
        return BackendError(f"Ollama at {self.host} failed: {exc} — or use `--backend embedded`")

    def check(self) -> None:
        """Raise BackendError unless the server answers and has the model (short timeouts)."""
        import httpx
        import ollama

        try:
            self._probe.show(self.model)
        except (ollama.ResponseError, ConnectionError, httpx.TransportError) as exc:
            raise self._translate(exc) from None

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
        import ollama

        messages: list[dict[str, str]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        options: dict[str, Any] = {
            "num_ctx": self.context_tokens,
            "num_predict": max_tokens,
            "temperature": 0,
        }
        if stop:
            options["stop"] = list(stop)
        feed, finish = filtered_stream(stream)
        parts: list[str] = []
        try:
            # think=False asks thinking models to answer directly; a model that thinks anyway
            # has its <think> block removed below (and from the stream).
            for part in self._client.chat(
                model=self.model, messages=messages, stream=True, think=False, options=options
            ):
                piece = part.message.content or ""
                if piece:
                    parts.append(piece)
                    feed(piece)
        except (ollama.ResponseError, ConnectionError, httpx.TransportError) as exc:
            raise self._translate(exc) from None
        finish()
        return strip_think("".join(parts))

    def count_tokens(self, text: str) -> int:
        """Approximate: about 3 characters per token for code (errs on the high side)."""
        return (len(text) + 2) // 3
