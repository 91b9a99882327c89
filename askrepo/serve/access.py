"""Who may call ``askrepo serve``: pure checks of the bind address, Host/Origin headers, tokens.

- Bound to a loopback address, no token is needed, but a request whose ``Host`` is not a
  loopback name (``localhost``, ``127.0.0.1``, ``[::1]``; any port) or that carries a
  non-loopback ``Origin`` is refused: a web page on another site (DNS rebinding, or a plain
  cross-site fetch) cannot read local code through the browser.
- Bound to any other address, every data request needs a valid bearer token, and a browser
  ``Origin`` must be the server's own (same scheme, host and port as ``Host``).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

LOCAL_NAMES = {"localhost", "127.0.0.1", "::1", "localhost.localdomain", "ip6-localhost"}


class Refusal(Exception):
    """A request refused: HTTP status, a machine code and a one-line message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def to_dict(self) -> dict[str, object]:
        return {"error": self.message, "code": self.code, "status": self.status}


def is_loopback(host: str) -> bool:
    """Whether a bind address or host name means this machine only."""
    h = host.strip().strip("[]").lower()
    if h in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None]:
    """``Host`` header → (host, port): ``[::1]:8765`` → ("::1", 8765); ``a.b`` → ("a.b", None)."""
    v = value.strip()
    if v.startswith("["):
        end = v.find("]")
        if end < 0:
            return v, None
        host, rest = v[1:end], v[end + 1 :]
        port = rest[1:] if rest.startswith(":") else ""
    elif v.count(":") == 1:
        host, port = v.split(":", 1)
    else:
        host, port = v, ""
    try:
        return host.lower(), int(port) if port else None
    except ValueError:
        return host.lower(), -1


def origin_host(origin: str) -> tuple[str, str, int | None] | None:
    """``Origin`` → (scheme, host, port), or None for ``null`` / unparsable values."""
    try:
        parts = urlsplit(origin.strip())
        return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


def check_host_origin(host_header: str | None, origin: str | None, *, loopback_bind: bool) -> None:
    """Raise ``Refusal`` (403) when Host/Origin show the request did not come from here."""
    if loopback_bind:
        host, _ = split_host(host_header or "")
        if not host_header or not is_loopback(host):
            raise Refusal(
                403,
                "host_not_local",
                f"Host {host_header!r} is not a loopback name — this server listens on loopback "
                "only; open it as http://127.0.0.1:PORT or http://localhost:PORT",
            )
        if origin:
            parsed = origin_host(origin)
            if parsed is None or parsed[0] not in ("http", "https") or not is_loopback(parsed[1]):
                raise Refusal(
                    403,
                    "origin_not_local",
                    f"Origin {origin!r} is not a loopback page — cross-site requests to a local "
                    "askrepo server are refused",
                )
        return
    if origin:
        parsed = origin_host(origin)
        host, port = split_host(host_header or "")
        if (
            parsed is None
            or parsed[1] != host
            or (parsed[2] or _default_port(parsed[0])) != (port or _default_port(parsed[0]))
        ):
            raise Refusal(
                403,
                "origin_mismatch",
                f"Origin {origin!r} is not this server ({host_header}) — cross-site requests "
                "are refused",
            )


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else None."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


@dataclass(frozen=True)
class Principal:
    """Who is calling: a token (id, allowed repo paths or None for all) or the local user."""

    id: str  # token id, or "local"
    repos: frozenset[str] | None

    def allows(self, repo_path: str) -> bool:
        return self.repos is None or repo_path in self.repos


REFUSALS = {
    "missing": (
        401,
        "token_missing",
        "This server needs a token — send `Authorization: Bearer <token>` "
        "(create one with `askrepo token create`)",
    ),
    "malformed": (
        401,
        "token_malformed",
        "The token is not an askrepo token (askrepo_<id>_<secret>) — copy it exactly as "
        "`askrepo token create` printed it",
    ),
    "unknown": (
        401,
        "token_invalid",
        "The token is not valid here — check it, or create one with `askrepo token create`",
    ),
    "revoked": (
        401,
        "token_revoked",
        "The token was revoked — ask for a new one (`askrepo token create`)",
    ),
}


def refusal_for(reason: str) -> Refusal:
    status, code, message = REFUSALS.get(reason, REFUSALS["unknown"])
    return Refusal(status, code, message)
