"""The local LLM seam: one Protocol, backend choice, and think-block removal.

Backends: ``askrepo.llm_ollama.OllamaLLM`` (a local Ollama server, default ``qwen3:14b``),
``askrepo.llm_openai.OpenAILLM`` (any OpenAI-compatible server: LM Studio, llama-server, vLLM…)
and ``askrepo.llm_embedded.EmbeddedLLM`` (SmolLM2-135M-Instruct through llama-cpp-python, shipped
in a PyPI wheel: always available offline, but a 135M model gives weak answers).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from askrepo.errors import BackendError, UsageError

BACKENDS = ("auto", "ollama", "openai", "embedded", "none")

PROSE_HINT = (
    "for prose on top, run `ollama serve` (model qwen3:14b) or use `--backend openai` with "
    "ASKREPO_OPENAI_BASE_URL (LM Studio, llama-server, vLLM)"
)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


@runtime_checkable
class LLM(Protocol):
    """A chat model that turns one prompt (plus optional system message) into text."""

    name: str  # backend: "ollama" | "openai" | "embedded"
    model: str  # human-readable model name
    context_tokens: int  # prompt + answer must fit in this many tokens

    def generate(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 300,
        stream: Callable[[str], None] | None = None,
        stop: list[str] | None = None,
    ) -> str:
        """Answer ``prompt``; call ``stream`` with each text piece as it is generated.

        Returns the full text with think blocks removed (streamed pieces exclude them too).
        """
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` takes in this model's context (approximate for Ollama)."""
        ...


_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)


def strip_think(text: str) -> str:
    """Remove reasoning blocks that thinking models (qwen3, deepseek-r1) emit before the answer.

    Removes every ``<think>…</think>`` block; an unterminated leading ``<think>`` (generation
    stopped mid-thought) removes everything after it; a stray ``</think>`` with no opening tag
    (the chat template opened the block) removes everything before it.

    >>> strip_think("<think>hmm</think>\\nAnswer [1]")
    'Answer [1]'
    >>> strip_think("<think>still thinking")
    ''
    >>> strip_think("thinking done</think>Answer")
    'Answer'
    """
    text = _THINK_BLOCK.sub("", text)
    if THINK_CLOSE in text:  # the opening tag was in the prompt, not in the output
        text = text.rsplit(THINK_CLOSE, 1)[1]
    if THINK_OPEN in text:  # unterminated block: the rest is unfinished reasoning
        text = text.split(THINK_OPEN, 1)[0]
    return text.strip()


class ThinkFilter:
    """Streaming counterpart of :func:`strip_think`: drops ``<think>…</think>`` from pieces.

    Text that could be the start of a tag is held back until the next piece decides it.
    Call :meth:`feed` with each piece (returns what may be shown) and :meth:`flush` at the end.
    """

    def __init__(self) -> None:
        self._buf = ""
        self._inside = False

    def feed(self, piece: str) -> str:
        self._buf += piece
        out: list[str] = []
        while self._buf:
            tag = THINK_CLOSE if self._inside else THINK_OPEN
            i = self._buf.find(tag)
            if i >= 0:
                if not self._inside:
                    out.append(self._buf[:i])
                self._buf = self._buf[i + len(tag) :]
                self._inside = not self._inside
                continue
            keep = _partial_suffix(self._buf, tag)
            if not self._inside:
                out.append(self._buf[: len(self._buf) - keep])
            self._buf = self._buf[len(self._buf) - keep :] if keep else ""
            break
        return "".join(out)

    def flush(self) -> str:
        rest, self._buf = ("" if self._inside else self._buf), ""
        return rest


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


def filtered_stream(
    stream: Callable[[str], None] | None,
) -> tuple[Callable[[str], None], Callable[[], None]]:
    """Wrap ``stream`` so think blocks never reach it: returns ``(feed, finish)``."""
    filt = ThinkFilter()

    def feed(piece: str) -> None:
        shown = filt.feed(piece)
        if shown and stream is not None:
            stream(shown)

    def finish() -> None:
        rest = filt.flush()
        if rest and stream is not None:
            stream(rest)

    return feed, finish


class NoModel:
    """The ``none`` backend: no model at all; ``ask`` answers with the evidence card alone."""

    name = "none"
    model = "evidence from the index (no model)"
    context_tokens = 0

    def __init__(self, note: str | None = None) -> None:
        self.note = note  # why "auto" chose no model, if it fell back

    def generate(self, prompt: str, **_: object) -> str:
        raise BackendError(f"No language model is in use — {PROSE_HINT}.")

    def count_tokens(self, text: str) -> int:
        return len(text) // 3


def choose_backend(
    backend: str = "auto", model: str | None = None, *, fallback: str = "embedded"
) -> LLM:
    """Return a ready LLM.

    ``backend``: "ollama", "openai", "embedded", "none" (no model: :class:`NoModel`) or "auto"
    (Ollama when the server answers and has the model, else the OpenAI-compatible server at
    ``ASKREPO_OPENAI_BASE_URL`` when that is set and serves the model, else ``fallback``:
    "embedded" or "none"; ``ASKREPO_BACKEND`` replaces "auto"). ``model``: the model name
    (default ``ASKREPO_LLM``; Ollama's default is qwen3:14b, an OpenAI server's its only model);
    the embedded backend uses it only when it is a path to a ``.gguf`` file (asked for by name,
    ``backend="embedded"`` with any other ``model`` is a ``UsageError``). When "auto" falls
    back, the returned LLM's ``note`` says why.
    """
    backend = (backend or "auto").strip().lower()
    if backend == "auto":
        backend = (os.environ.get("ASKREPO_BACKEND") or "auto").strip().lower()
    if backend not in BACKENDS:
        raise UsageError(
            f"Unknown backend {backend!r} — use one of: {', '.join(BACKENDS)} "
            "(--backend or ASKREPO_BACKEND)."
        )
    if backend == "embedded" and model and not model.lower().endswith(".gguf"):
        raise UsageError(
            f"The embedded backend runs a local .gguf file, not a model named {model!r} — "
            "pass a .gguf path with --model, omit --model for the bundled SmolLM2, or use "
            "--backend ollama / openai for a served model."
        )
    model = model or os.environ.get("ASKREPO_LLM") or None
    if backend == "none":
        return NoModel()

    if backend in ("auto", "ollama"):
        from askrepo.llm_ollama import OllamaLLM

        ollama_llm = OllamaLLM(model=model)
        try:
            ollama_llm.check()
        except BackendError as exc:
            if backend == "ollama":
                raise
            note = str(exc)
        else:
            return ollama_llm
    else:
        note = None

    if backend == "openai" or (backend == "auto" and os.environ.get("ASKREPO_OPENAI_BASE_URL")):
        from askrepo.llm_openai import OpenAILLM

        openai_llm = OpenAILLM(model=model)
        try:
            openai_llm.check()
        except BackendError as exc:
            if backend == "openai":
                raise
            note = f"{note}; {exc}" if note else str(exc)
        else:
            return openai_llm
    if backend == "auto" and fallback == "none":
        return NoModel(note)

    from askrepo.llm_embedded import EmbeddedLLM

    gguf = model if model and model.lower().endswith(".gguf") else None
    embedded = EmbeddedLLM(model_path=gguf)
    embedded.note = note
    return embedded
