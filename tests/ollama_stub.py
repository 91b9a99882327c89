"""A STUB of the Ollama HTTP API for tests — not Ollama.

The real server (and a real model such as qwen3:14b) cannot run on the test machine, so this
serves the documented endpoints askrepo uses, with canned replies, on 127.0.0.1 at a random
port in a background thread:

- ``GET /api/tags``: the "pulled" models;
- ``POST /api/show``: model details, or 404 ``{"error": "model 'x' not found"}``;
- ``POST /api/chat``: streamed NDJSON chunks (``stream: true``) or one JSON object, or 404 when
  the model is not pulled. Every request body is recorded in ``requests`` for assertions.

Shapes follow https://github.com/ollama/ollama/blob/main/docs/api.md.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CREATED = "2025-01-01T00:00:00Z"


class OllamaStub:
    """Start with ``with OllamaStub(models=["qwen3:14b"], reply=[...]) as stub: stub.url``."""

    def __init__(self, models: list[str] | None = None, reply: list[str] | None = None):
        self.models = list(models or [])
        self.reply = list(reply or ["Hello", " world"])  # the streamed pieces of every answer
        self.requests: list[tuple[str, str, dict[str, Any]]] = []  # (method, path, body)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> OllamaStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _has(self, name: str) -> bool:
        return name in self.models or f"{name}:latest" in self.models

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep pytest output clean
                pass

            def _body(self) -> dict[str, Any]:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n) or b"{}") if n else {}

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _not_found(self, name: str) -> None:
                self._send(404, {"error": f"model '{name}' not found"})

            def do_GET(self) -> None:
                stub.requests.append(("GET", self.path, {}))
                if self.path == "/api/tags":
                    models = [
                        {"name": m, "model": m, "modified_at": CREATED, "size": 1, "digest": "0"}
                        for m in stub.models
                    ]
                    self._send(200, {"models": models})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = self._body()
                stub.requests.append(("POST", self.path, body))
                name = body.get("model", "")
                if self.path == "/api/show":
                    if not stub._has(name):
                        return self._not_found(name)
                    return self._send(
                        200,
                        {
                            "modelfile": f"FROM {name}",
                            "template": "{{ .Prompt }}",
                            "details": {"family": "stub", "parameter_size": "0B"},
                            "model_info": {"general.architecture": "stub"},
                            "capabilities": ["completion"],
                        },
                    )
                if self.path == "/api/chat":
                    if not stub._has(name):
                        return self._not_found(name)
                    if body.get("stream", True):
                        return self._stream_chat(name)
                    return self._send(200, self._chunk(name, "".join(stub.reply), done=True))
                self._send(404, {"error": "not found"})

            def _chunk(self, name: str, content: str, *, done: bool) -> dict[str, Any]:
                out: dict[str, Any] = {
                    "model": name,
                    "created_at": CREATED,
                    "message": {"role": "assistant", "content": content},
                    "done": done,
                }
                if done:
                    out.update(done_reason="stop", eval_count=len(stub.reply), total_duration=1)
                return out

            def _stream_chat(self, name: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                lines = [self._chunk(name, piece, done=False) for piece in stub.reply]
                lines.append(self._chunk(name, "", done=True))
                for line in lines:
                    data = (json.dumps(line) + "\n").encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

        return Handler
