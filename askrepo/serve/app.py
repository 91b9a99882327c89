"""The ``askrepo serve`` application: web page, JSON API and MCP (streamable HTTP) in one ASGI app.

Thin: every answer comes from the library — ``Retriever.search`` through the MCP ``Service``'s
repo handles, ``multirepo.search_many`` for several repos, ``answer.ask`` for answers,
``Service.read_file`` / ``index_status`` for files and status, ``mcp_server.build_server`` for
MCP. This module adds HTTP: access checks (``access.py``, tokens from ``askrepo.tokens``), size
and concurrency limits, timeouts, threads (a slow ``ask`` runs in its own executor, so searches
never wait for it) and server-sent events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import (
    AskrepoError,
    BackendError,
    IndexIncompatibleError,
    IndexLockedError,
    ModelUnavailableError,
    NoIndexError,
    UsageError,
    at_least,
    whole_number,
)
from .access import Principal, Refusal, bearer, check_host_origin, is_loopback, refusal_for

HERE = Path(__file__).resolve().parent
PUBLIC_PATHS = ("/", "/healthz", "/favicon.ico")
PUBLIC_PREFIXES = ("/static/",)
POST_ONLY = {"/api/refresh": "POST"}  # endpoints a GET reaches only to be told the method
MAX_QUERY_CHARS = 20_000  # as the MCP search_code tool
MAX_K = 50
PAGE_HEADERS = {  # the page runs only its own script and style, and is never framed
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


@dataclass
class ServeSettings:
    repos: list[Path]
    host: str = "127.0.0.1"
    port: int = 8765
    require_token: bool = False  # always on when the host is not loopback
    model: str | None = None  # embedding model of the indexes (default: each index's)
    backend: str = "auto"  # `ask` backend (askrepo.llm.choose_backend)
    llm_model: str | None = None
    max_body_bytes: int = 256 * 1024
    max_query_string: int = 32 * 1024
    max_concurrent: int = 8  # requests in flight per token (or per local user)
    queue_timeout_s: float = 15.0  # wait this long for a slot, then 429
    request_timeout_s: float = 60.0  # search / file / status
    ask_timeout_s: float = 900.0
    allow_refresh: bool = True
    tokens_path: Path | None = None
    llm_factory: Callable[[], Any] | None = None  # tests: a deterministic LLM

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def tokens_required(self) -> bool:
        return self.require_token or not self.loopback


def _json(data: Any, status: int = 200) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(data, status_code=status)


def _error_response(exc: BaseException) -> Any:
    if isinstance(exc, Refusal):
        return _json(exc.to_dict(), exc.status)
    status, code = 500, "internal_error"
    if isinstance(exc, UsageError):
        status, code = 400, "bad_request"
    elif isinstance(exc, NoIndexError):
        status, code = 409, "not_indexed"
    elif isinstance(exc, (IndexIncompatibleError, IndexLockedError)):
        status, code = 409, "index_unavailable"
    elif isinstance(exc, (ModelUnavailableError, BackendError)):
        status, code = 503, "backend_unavailable"
    elif isinstance(exc, AskrepoError):
        status, code = 400, "error"
    msg = (
        str(exc)
        if isinstance(exc, AskrepoError)
        else f"internal error: {type(exc).__name__}: {exc}"
    )
    return _json({"error": msg, "code": code, "status": status}, status)


class _LockedRetriever:
    """One served repo as a retriever for ``answer.ask`` (searches go through the handle lock)."""

    def __init__(self, handle: Any):
        self.handle = handle

    @property
    def store(self) -> Any:
        return self.handle.store()

    def search(self, query: str, opts: Any) -> Any:
        return self.handle.search(query, opts)

    @property
    def embedder(self) -> Any:
        """The repo's embedding model, used under the handle lock like its searches: the card's
        header similarity and the commit evidence need it, as with ``askrepo ask``."""
        return _LockedEmbedder(self.handle.retriever().embedder, self.handle._lock)


class _LockedEmbedder:
    """An embedder whose ``embed_*`` calls hold a lock (the model is shared per repo)."""

    def __init__(self, embedder: Any, lock: Any):
        self._embedder, self._lock = embedder, lock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._embedder, name)
        if not name.startswith("embed_"):
            return value

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return value(*args, **kwargs)

        return locked


@dataclass
class _StatusCache:
    at: float
    data: dict[str, Any]


@dataclass
class ServeState:
    settings: ServeSettings
    service: Any = None
    tokens: Any = None
    names: dict[str, str] = field(default_factory=dict)  # repo path -> display name
    ask_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="askrepo-ask")
    )
    refresh_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="askrepo-index")
    )
    refreshing: set[str] = field(default_factory=set)
    asks_pending: int = 0  # asks submitted and not finished (changed on the event loop only)
    status_cache: dict[str, _StatusCache] = field(default_factory=dict)
    slots: dict[str, asyncio.Semaphore] = field(default_factory=dict)
    _llm: Any = None
    _llm_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        from ..mcp_server import Service
        from ..tokens import TokenStore

        self.service = Service(list(self.settings.repos), self.settings.model)
        self.tokens = TokenStore(self.settings.tokens_path)
        counts: dict[str, int] = {}
        for h in self.service.repos:
            counts[h.root.name] = counts.get(h.root.name, 0) + 1
        for h in self.service.repos:
            name = h.root.name if counts[h.root.name] == 1 else str(h.root)
            self.names[str(h.root)] = name

    # -- who and what -------------------------------------------------------------------------
    def principal(self, authorization: str | None) -> Principal:
        token = bearer(authorization)
        if token is None and authorization:
            raise refusal_for("malformed")
        if token is None and not self.settings.tokens_required:
            return Principal("local", None)
        verdict = self.tokens.verify(token)
        if verdict.token is None:
            raise refusal_for(verdict.reason or "unknown")
        t = verdict.token
        return Principal(t.id, frozenset(t.repos) if t.repos is not None else None)

    def allowed(self, who: Principal) -> list[Any]:
        handles = [h for h in self.service.repos if who.allows(str(h.root))]
        if not handles:
            raise Refusal(
                403,
                "token_no_repo",
                "This token is limited to repositories this server does not serve — ask for a "
                "token for one of them",
            )
        return handles

    def select(self, who: Principal, repo: str | None) -> list[Any]:
        """The handles a request may use: all it is allowed, or the one named by ``repo``."""
        if repo is None or not str(repo).strip() or str(repo).strip().lower() == "all":
            return self.allowed(who)
        want = str(repo).strip().rstrip("/")
        if len(want) > 4096:
            raise Refusal(413, "too_large", "The repo parameter is too long")
        match = [h for h in self.service.repos if want in (str(h.root), self.names[str(h.root)])]
        if not match:
            match = [h for h in self.service.repos if h.root.name == want]
        if len(match) == 1:
            h = match[0]
            if not who.allows(str(h.root)):
                raise Refusal(
                    403,
                    "token_repo_forbidden",
                    f"This token is not allowed to read {self.names[str(h.root)]!r} — use a "
                    "token created with `askrepo token create --repo` for it",
                )
            return [h]
        names = ", ".join(self.names[str(h.root)] for h in self.allowed(who))
        if match:
            raise UsageError(
                f"Repo name {repo!r} is ambiguous — pass the full path; served: {names}"
            )
        raise Refusal(404, "unknown_repo", f"Unknown repo {repo!r} — served: {names} (or all)")

    def one(self, who: Principal, repo: str | None) -> Any:
        handles = self.select(who, repo)
        if len(handles) > 1:
            names = ", ".join(self.names[str(h.root)] for h in handles)
            raise UsageError(f"Several repos are served ({names}) — pass repo=<name>")
        return handles[0]

    def slot(self, who: Principal) -> asyncio.Semaphore:
        sem = self.slots.get(who.id)
        if sem is None:
            sem = self.slots[who.id] = asyncio.Semaphore(self.settings.max_concurrent)
        return sem

    # -- the LLM (one, loaded on the first ask, used by one ask at a time) -----------------------
    def llm(self) -> Any:
        with self._llm_lock:
            if self._llm is None:
                if self.settings.llm_factory is not None:
                    self._llm = self.settings.llm_factory()
                else:
                    from ..llm import choose_backend

                    self._llm = choose_backend(
                        self.settings.backend, self.settings.llm_model, fallback="none"
                    )
            return self._llm


# ----------------------------------------------------------------------------------------------
# Middleware: size caps, Host/Origin, tokens, per-principal concurrency (pure ASGI: SSE streams)


class Guard:
    def __init__(self, app: Any, state: ServeState):
        self.app = app
        self.state = state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        s = self.state.settings
        path = scope.get("path", "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        public = path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)
        try:
            if len(scope.get("query_string", b"")) > s.max_query_string:
                raise Refusal(
                    413,
                    "query_too_large",
                    f"The query string is over {s.max_query_string:,} bytes — send long "
                    "questions as a POST JSON body",
                )
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > s.max_body_bytes):
                raise Refusal(
                    413, "body_too_large", f"The request body is over {s.max_body_bytes:,} bytes"
                )
            check_host_origin(headers.get("host"), headers.get("origin"), loopback_bind=s.loopback)
            who = None if public else self.state.principal(headers.get("authorization"))
            if scope["method"] in ("POST", "PUT", "PATCH", "DELETE") or length not in (None, "0"):
                receive = await self._buffered(receive, s.max_body_bytes)
        except Refusal as exc:
            await _json(exc.to_dict(), exc.status)(scope, receive, send)
            return
        if who is None:
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = who
        sem = self.state.slot(who)
        try:
            await asyncio.wait_for(sem.acquire(), timeout=s.queue_timeout_s)
        except asyncio.TimeoutError:
            exc = Refusal(
                429,
                "too_many_requests",
                f"More than {s.max_concurrent} requests in flight for this "
                f"{'token' if who.id != 'local' else 'client'} — wait for some to finish",
            )
            await _json(exc.to_dict(), 429)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            sem.release()

    @staticmethod
    async def _buffered(receive: Any, limit: int) -> Any:
        """Read the whole body (refusing more than ``limit`` bytes), then replay it once."""
        chunks: list[bytes] = []
        size = 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                break
            body = msg.get("body", b"")
            size += len(body)
            if size > limit:
                raise Refusal(413, "body_too_large", f"The request body is over {limit:,} bytes")
            chunks.append(body)
            if not msg.get("more_body", False):
                break
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        return replay


# ----------------------------------------------------------------------------------------------
# MCP over streamable HTTP: one MCP server per set of repos a caller may see, started lazily


class McpMounts:
    def __init__(self, state: ServeState):
        self.state = state
        self.managers: dict[tuple[str, ...], Any] = {}
        self.lock = asyncio.Lock()
        self.tg: Any = None

    async def manager(self, handles: list[Any]) -> Any:
        key = tuple(sorted(str(h.root) for h in handles))
        async with self.lock:
            mgr = self.managers.get(key)
            if mgr is None:
                mgr = self._build(handles)
                await self.tg.start(self._run, mgr)
                self.managers[key] = mgr
        return mgr

    def _build(self, handles: list[Any]) -> Any:
        from mcp.server.transport_security import TransportSecuritySettings

        from ..mcp_server import Service, build_server

        service = Service([h.root for h in handles], self.state.settings.model)
        service.repos = list(handles)  # share the loaded indexes and models
        server = build_server(service)
        server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            max_request_body_size=self.state.settings.max_body_bytes,
            # Host/Origin are checked (for every route) by Guard, the same way for MCP and API
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        return server.session_manager

    @staticmethod
    async def _run(mgr: Any, *, task_status: Any) -> None:
        import anyio

        async with mgr.run():
            task_status.started()
            await anyio.sleep_forever()


class McpEndpoint:
    def __init__(self, state: ServeState, mounts: McpMounts):
        self.state, self.mounts = state, mounts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            # Stateless: no session and nothing the server sends unasked, so no GET stream to
            # open (an idle one held a request slot forever) and no session to DELETE.
            response = _json(
                {
                    "error": "The MCP endpoint takes POST requests only (stateless streamable "
                    "HTTP: no server-sent stream, no sessions)",
                    "code": "method_not_allowed",
                },
                405,
            )
            response.headers["Allow"] = "POST"
            await response(scope, receive, send)
            return
        try:
            handles = self.state.allowed(scope["state"]["principal"])
        except Refusal as exc:
            await _json(exc.to_dict(), exc.status)(scope, receive, send)
            return
        mgr = await self.mounts.manager(handles)
        await mgr.handle_request(scope, receive, send)


# ----------------------------------------------------------------------------------------------
# Request helpers


async def _params(request: Any) -> dict[str, Any]:
    """Query parameters, overlaid by a JSON object body for POST."""
    params: dict[str, Any] = dict(request.query_params)
    if request.method == "POST":
        raw = await request.body()
        if raw.strip():
            try:
                body = json.loads(raw)
            except ValueError:
                raise UsageError("The body is not JSON — send a JSON object") from None
            if not isinstance(body, dict):
                raise UsageError("The body must be a JSON object")
            params.update(body)
    return params


def _tri(params: dict[str, Any], name: str) -> bool | None:
    """A true/false/auto parameter; anything else is refused (not quietly taken as false)."""
    value = params.get(name)
    if value is None or isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("", "auto"):
        return None
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"{name} must be true, false or auto (got {value!r})")


def _int(
    params: dict[str, Any], name: str, default: int | None, lo: int, hi: int | None
) -> int | None:
    """A whole-number parameter: ASCII digits (a JSON integer in a body), at least ``lo``, cut
    to ``hi`` (``None``: not cut, so a message can name the number that was asked for)."""
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    value = whole_number(raw)
    if value is None:
        raise UsageError(f"{name} must be a whole number (got {raw!r})")
    return at_least(name, value, lo, hi)


def _query(params: dict[str, Any], name: str = "q") -> str:
    q = params.get(name)
    if q is None:
        q = params.get("query") if name == "q" else None
    if not isinstance(q, str) or not q.strip():
        raise UsageError(f"Pass the text as `{name}` — e.g. ?{name}=where+is+the+config+loaded")
    if len(q) > MAX_QUERY_CHARS:
        raise Refusal(
            413,
            "query_too_large",
            f"The query is {len(q):,} characters; the limit is {MAX_QUERY_CHARS:,} — paste the "
            "relevant part only",
        )
    return q


async def _in_thread(fn: Callable[[], Any], timeout: float) -> Any:
    import anyio

    try:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
    except TimeoutError:
        raise Refusal(
            504, "timeout", f"The request took longer than {timeout:.0f} s and was abandoned"
        ) from None


def _raw_lines(content: str) -> list[str]:
    """The source lines of ``Service.read_file``'s numbered ``content`` (``' 12 | code'``)."""
    out = []
    for row in content.split("\n") if content else []:
        _, sep, body = row.partition(" | ")
        out.append(body if sep else row)
    return out


# ----------------------------------------------------------------------------------------------
# Handlers


def create_app(settings: ServeSettings) -> Any:
    """The ASGI app (Starlette) for ``settings``; raises UsageError for impossible settings."""
    import jinja2
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from .highlight import css, highlight_lines

    if not settings.repos:
        raise UsageError("No repository to serve — pass --repo PATH (repeatable)")
    state = ServeState(settings)
    if settings.tokens_required and not state.tokens.active():
        where = "on loopback with --require-token" if settings.loopback else f"on {settings.host}"
        raise UsageError(
            f"Serving {where} needs tokens and there are none — create one with "
            "`askrepo token create` (or listen on 127.0.0.1)"
        )
    mounts = McpMounts(state)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True
    )

    def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
        async def endpoint(request: Request) -> Any:
            try:
                response = await fn(request, request.scope["state"]["principal"])
            except Exception as exc:  # every failure is a one-line JSON error
                response = _error_response(exc)
            # code, paths and answers: for this request only, never kept by a cache
            response.headers.setdefault("Cache-Control", "no-store")
            return response

        endpoint.__name__ = fn.__name__
        return endpoint

    async def index(request: Request) -> Any:
        html = env.get_template("index.html").render(
            version=__version__,
            tokens_required=settings.tokens_required,
            repo_count=len(state.service.repos),
        )
        return HTMLResponse(html, headers=PAGE_HEADERS)

    async def pygments_css(request: Request) -> Any:
        return Response(css(), media_type="text/css")

    async def healthz(request: Request) -> Any:
        return _json({"ok": True, "version": __version__})

    async def repos(request: Request, who: Principal) -> Any:
        out = []
        for h in state.allowed(who):
            item: dict[str, Any] = {"name": state.names[str(h.root)], "path": str(h.root)}
            try:
                meta = h.read_store().meta()
                item.update(commit=meta.commit, files=meta.file_count, chunks=meta.chunk_count)
                item["indexed"] = True
            except AskrepoError as exc:
                item.update(indexed=False, error=str(exc))
            out.append(item)
        return _json({"repos": out})

    def _status_one(h: Any) -> dict[str, Any]:
        key = str(h.root)
        cached = state.status_cache.get(key)
        if cached and time.monotonic() - cached.at < 5.0:
            return cached.data
        base = {"name": state.names[key], "repo": key, "refreshing": key in state.refreshing}
        try:
            st = state.service.index_status(repo=key)
        except AskrepoError as exc:
            data = {**base, "indexed": False, "error": str(exc), "stale": True}
        else:
            data = {**base, **st, "indexed": True}
            data["stale"] = bool(st.get("worktree_changed") or st.get("head_moved"))
            data["embedded_share"] = _embedded_share(h, st)
        state.status_cache[key] = _StatusCache(time.monotonic(), data)
        return data

    async def status(request: Request, who: Principal) -> Any:
        params = await _params(request)
        handles = state.select(who, params.get("repo"))

        def run() -> list[dict[str, Any]]:
            return [_status_one(h) for h in handles]

        items = await _in_thread(run, settings.request_timeout_s)
        for item in items:
            item["refreshing"] = item["repo"] in state.refreshing
            if who.id != "local":  # a token's holder has no business with the server's paths
                item.pop("index_path", None)
        return _json({"repos": items})

    async def refresh(request: Request, who: Principal) -> Any:
        if not settings.allow_refresh:
            raise Refusal(403, "refresh_disabled", "Refreshing indexes is disabled on this server")
        params = await _params(request)
        h = state.one(who, params.get("repo"))
        key = str(h.root)
        if key in state.refreshing:
            raise Refusal(409, "refresh_running", f"{state.names[key]} is being re-indexed already")
        state.refreshing.add(key)

        def run() -> dict[str, Any]:
            from ..indexer import index_repo

            try:
                return index_repo(h.root, model=settings.model).to_dict()
            finally:
                state.refreshing.discard(key)
                state.status_cache.pop(key, None)

        loop = asyncio.get_running_loop()
        summary = await loop.run_in_executor(state.refresh_pool, run)
        return _json({"repo": key, "name": state.names[key], "summary": summary})

    def _with_html(hit: dict[str, Any]) -> dict[str, Any]:
        hit["html"] = highlight_lines(hit["text"].split("\n"), hit.get("language"), hit["path"])
        return hit

    async def search(request: Request, who: Principal) -> Any:
        from ..multirepo import freshness_fields, search_many
        from ..retriever import SearchOptions

        params = await _params(request)
        q = _query(params)
        handles = state.select(who, params.get("repo"))
        opts = SearchOptions(
            k=_int(params, "k", 8, 1, MAX_K) or 8,
            mode=str(params.get("mode") or "hybrid"),
            include_tests=_tri(params, "include_tests"),
            include_docs=_tri(params, "include_docs"),
            expand=bool(_tri(params, "expand")),
        )
        unavailable: list[dict[str, str]] = []

        def searcher(h: Any) -> Callable[[str, Any], Any]:
            def run(query: str, o: Any) -> Any:
                try:
                    return h.search(query, o)
                except (NoIndexError, IndexIncompatibleError) as exc:
                    if len(handles) == 1:
                        raise
                    from ..retriever import SearchResult

                    unavailable.append({"repo": str(h.root), "error": str(exc)})
                    return SearchResult(query, str(h.root), o.mode, 0.0, [], [])

            return run

        res = await _in_thread(
            lambda: search_many([(str(h.root), searcher(h)) for h in handles], q, opts),
            settings.request_timeout_s,
        )
        data = res.to_dict()
        data["filters"] = res.filters
        if unavailable:
            data["unavailable"] = unavailable
        # the freshness every JSON result carries (README): of the one repo, or of each
        fresh = await _in_thread(lambda: _freshness(handles, unavailable), 30.0)
        if len(handles) == 1 and fresh:
            data.update(fresh[0].freshness.to_dict())
        else:
            data.update(freshness_fields(fresh))
        if _tri(params, "highlight"):
            data["hits"] = [_with_html(hit) for hit in data["hits"]]
        return _json(data)

    async def file(request: Request, who: Principal) -> Any:
        params = await _params(request)
        path = params.get("path")
        if not isinstance(path, str) or not path:
            raise UsageError("Pass the repo-relative file as `path` — e.g. ?path=src/app.py")
        h = state.one(who, params.get("repo"))
        start = _int(params, "start", 1, 1, None) or 1
        end = _int(params, "end", None, 1, None)

        def run() -> dict[str, Any]:
            data = state.service.read_file(path, start_line=start, end_line=end, repo=str(h.root))
            data["name"] = state.names[str(h.root)]
            info = h.read_store().files().get(data["path"])
            data["language"] = getattr(info, "language", None)
            data["lines"] = _raw_lines(data.get("content", ""))
            if _tri(params, "highlight"):
                data["html"] = highlight_lines(data["lines"], data["language"], data["path"])
            return data

        return _json(await _in_thread(run, settings.request_timeout_s))

    async def ask(request: Request, who: Principal) -> Any:
        from ..answer import ask as ask_question
        from ..multirepo import MultiRetriever

        params = await _params(request)
        q = _query(params)
        handles = state.select(who, params.get("repo"))
        k = _int(params, "k", None, 1, MAX_K)
        if len(handles) == 1:
            retriever: Any = _LockedRetriever(handles[0])
        else:
            retriever = MultiRetriever([(str(h.root), _LockedRetriever(h)) for h in handles])
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def put(kind: str, value: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

        def work() -> Any:
            llm = state.llm()
            put("backend", {"backend": llm.name, "model": llm.model})
            return ask_question(q, retriever, llm, k=k, stream=lambda piece: put("token", piece))

        ahead = state.asks_pending  # the model answers one question at a time
        state.asks_pending += 1
        future = loop.run_in_executor(state.ask_pool, work)

        def finished(_: Any) -> None:
            state.asks_pending -= 1  # done callbacks of asyncio futures run on the loop
            queue.put_nowait(("done", None))

        future.add_done_callback(finished)

        def event(kind: str, data: Any) -> str:
            return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"

        async def stream() -> AsyncIterator[str]:
            yield event("start", {"question": q, "repos": [str(h.root) for h in handles]})
            if ahead:
                yield event("queued", {"ahead": ahead})
            deadline = loop.time() + settings.ask_timeout_s
            while True:
                try:
                    kind, value = await asyncio.wait_for(queue.get(), deadline - loop.time())
                except asyncio.TimeoutError:
                    yield event(
                        "error",
                        {
                            "error": "The answer took too long and was abandoned",
                            "code": "timeout",
                            "status": 504,
                        },
                    )
                    return
                if kind == "backend":
                    yield event("backend", value)
                elif kind == "token":
                    yield event("token", {"text": value})
                else:
                    break
            try:
                answer = future.result()
            except Exception as exc:  # one line, no traceback
                resp = _error_response(exc)
                yield event("error", json.loads(resp.body))
                return
            yield event("answer", _answer_dict(answer, retriever, handles))

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def not_found(request: Request, who: Principal) -> Any:
        allowed = POST_ONLY.get(request.url.path)
        if allowed:  # the endpoint exists; this method does not
            response = _json(
                {
                    "error": f"{request.url.path} takes {allowed} requests",
                    "code": "method_not_allowed",
                    "status": 405,
                },
                405,
            )
            response.headers["Allow"] = allowed
            return response
        raise Refusal(404, "not_found", f"No API endpoint {request.url.path}")

    async def favicon(request: Request) -> Any:
        return Response(status_code=204)  # no icon: say so without a 404 in the console

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        import anyio

        async with anyio.create_task_group() as tg:
            mounts.tg = tg
            yield
            tg.cancel_scope.cancel()
        state.ask_pool.shutdown(wait=False, cancel_futures=True)
        state.refresh_pool.shutdown(wait=False, cancel_futures=True)

    routes = [
        Route("/", index),
        Route("/healthz", healthz),
        Route("/favicon.ico", favicon),
        Route("/static/pygments.css", pygments_css),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        Route("/api/repos", guarded(repos)),
        Route("/api/status", guarded(status)),
        Route("/api/refresh", guarded(refresh), methods=["POST"]),
        Route("/api/search", guarded(search), methods=["GET", "POST"]),
        Route("/api/ask", guarded(ask), methods=["GET", "POST"]),
        Route("/api/file", guarded(file)),
        Route("/api/{rest:path}", guarded(not_found), methods=["GET", "POST"]),
        Route("/mcp", McpEndpoint(state, mounts)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.askrepo = state
    return Guard(app, state)


def _freshness(handles: list[Any], unavailable: list[dict[str, str]]) -> list[Any]:
    """``multirepo.RepoFreshness`` of each searched repo that has an index."""
    from ..multirepo import check_freshness

    skip = {u["repo"] for u in unavailable}
    searched = [h for h in handles if str(h.root) not in skip]
    return check_freshness((str(h.root), h.read_store()) for h in searched)


def _embedded_share(handle: Any, status: dict[str, Any]) -> float | None:
    """The share of chunks with an embedding, when the index records it (else None)."""
    for key in ("embedded_share", "embedded_fraction"):
        if isinstance(status.get(key), (int, float)):
            return float(status[key])
    meta = handle.store().meta()
    for key in ("embedded_chunks", "chunks_embedded", "embedded_count"):
        n = getattr(meta, key, None)
        if isinstance(n, int) and meta.chunk_count:
            return round(n / meta.chunk_count, 4)
    return None


def _answer_dict(answer: Any, retriever: Any, handles: list[Any]) -> dict[str, Any]:
    """``Answer.to_dict()`` with the repo of every citation and retrieved hit."""
    data = answer.to_dict()
    if len(handles) == 1:
        repo = str(handles[0].root)
        for c in data["citations"]:
            c["repo"] = repo
        for h in data["retrieved"]:
            h["repo"] = repo
        return data
    for c in data["citations"]:
        c["repo"] = retriever.repo_of(c["path"], c["start_line"], c["end_line"])
    for h in data["retrieved"]:
        h["repo"] = retriever.repo_of(h["path"], h["start_line"], h["end_line"])
    return data
