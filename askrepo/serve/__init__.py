"""``askrepo serve``: a local web page, a JSON API and MCP over streamable HTTP (see docs/api.md).

``create_app(settings)`` builds the ASGI app; ``make_server`` wraps it in a uvicorn server;
``ServerThread`` runs one in a background thread (tests, benchmarks, embedding in a program).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from .app import ServeSettings, create_app

__all__ = ["ServeSettings", "ServerThread", "create_app", "make_server"]


def make_server(settings: ServeSettings, *, log_level: str = "warning") -> Any:
    import uvicorn

    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        lifespan="on",
        timeout_keep_alive=15,
        limit_concurrency=256,
        timeout_graceful_shutdown=3,
        server_header=False,
        proxy_headers=False,
    )
    return uvicorn.Server(config)


class ServerThread:
    """A uvicorn server on a background thread: ``with ServerThread(settings) as url: ...``."""

    def __init__(self, settings: ServeSettings, *, startup_timeout: float = 30.0):
        self.settings = settings
        self.server = make_server(settings)
        self.thread = threading.Thread(target=self.server.run, name="askrepo-serve", daemon=True)
        self.startup_timeout = startup_timeout

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.settings.port}"

    def start(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + self.startup_timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"askrepo serve did not start on {self.url}")
            time.sleep(0.02)
        return self.url

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
