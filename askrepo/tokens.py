"""Bearer tokens for ``askrepo serve``: created once, stored only as a hash, optionally limited.

A token reads ``askrepo_<id>_<secret>``: ``id`` (8 hex characters) names the record, ``secret``
carries 256 random bits. Only ``sha256(token)`` is stored, in ``$ASKREPO_HOME/tokens.json``
(mode 0600, replaced atomically); checking compares hashes with ``hmac.compare_digest``. A
record may be limited to some repositories (resolved paths) and may be revoked (kept, marked, so
that a revoked token gets a clear "revoked" answer rather than "unknown"). A running server sees
a new or revoked token on its next request (the file is re-read when it changes).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import config
from .errors import UsageError

PREFIX = "askrepo_"
_TOKEN = re.compile(r"^askrepo_([0-9a-f]{8})_([A-Za-z0-9_-]{20,100})$")


@dataclass
class TokenInfo:
    id: str
    name: str
    repos: list[str] | None  # None: every served repository
    created_at: str
    revoked_at: str | None = None
    hash: str = ""

    def to_dict(self) -> dict[str, Any]:  # never the hash
        d = asdict(self)
        d.pop("hash")
        return d

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


@dataclass
class Verdict:
    """The result of checking a presented token: ``token`` is set when it is valid."""

    token: TokenInfo | None
    reason: str | None  # "missing" | "malformed" | "unknown" | "revoked" when token is None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def tokens_path() -> Path:
    return config.home() / "tokens.json"


class TokenStore:
    """The token file, cached and re-read when it changes on disk."""

    def __init__(self, path: Path | None = None):
        self.path = path or tokens_path()
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._tokens: list[TokenInfo] = []

    # -- reading ------------------------------------------------------------------------------
    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def _load(self) -> list[TokenInfo]:
        stamp = self._file_stamp()
        if stamp is not None and stamp == self._stamp:
            return self._tokens
        if stamp is None:
            self._tokens, self._stamp = [], None
            return self._tokens
        try:
            raw = json.loads(self.path.read_text("utf-8"))
            tokens = [TokenInfo(**t) for t in raw.get("tokens", [])]
        except (OSError, ValueError, TypeError) as exc:
            raise UsageError(
                f"The token file {self.path} is unreadable ({exc}) — fix or delete it and "
                "create tokens again with `askrepo token create`"
            ) from None
        self._tokens, self._stamp = tokens, stamp
        return tokens

    def list(self) -> list[TokenInfo]:
        with self._lock:
            return list(self._load())

    def active(self) -> list[TokenInfo]:
        return [t for t in self.list() if not t.revoked]

    # -- writing ------------------------------------------------------------------------------
    def _save(self, tokens: list[TokenInfo]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps({"tokens": [asdict(t) for t in tokens]}, indent=2)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._stamp = None  # re-read on next use

    def create(
        self, name: str | None = None, repos: list[Path] | None = None
    ) -> tuple[TokenInfo, str]:
        """A new token: (its record, the token text — shown once, never stored)."""
        with self._lock:
            tokens = list(self._load())
            ids = {t.id for t in tokens}
            tid = secrets.token_hex(4)
            while tid in ids:
                tid = secrets.token_hex(4)
            token = f"{PREFIX}{tid}_{secrets.token_urlsafe(32)}"
            name = (name or "").strip() or f"token-{tid}"
            if any(t.name == name and not t.revoked for t in tokens):
                raise UsageError(f"A token named {name!r} exists — pick another --name")
            limited = None
            if repos:
                limited = []
                for r in repos:
                    p = Path(r).expanduser().resolve()
                    if not p.is_dir():
                        raise UsageError(
                            f"{r} is not a directory — pass --repo PATH of a repository"
                        )
                    if str(p) not in limited:
                        limited.append(str(p))
            info = TokenInfo(tid, name, limited, _now(), None, hash_token(token))
            self._save(tokens + [info])
            return info, token

    def revoke(self, which: str) -> TokenInfo:
        """Revoke by id or name (the token stays listed as revoked)."""
        with self._lock:
            tokens = list(self._load())
            found = [t for t in tokens if which in (t.id, t.name) and not t.revoked]
            if not found:
                raise UsageError(
                    f"No active token with id or name {which!r} — see `askrepo token list`"
                )
            if len(found) > 1:
                raise UsageError(f"{which!r} names several tokens — revoke by id")
            found[0].revoked_at = _now()
            self._save(tokens)
            return found[0]

    # -- checking -----------------------------------------------------------------------------
    def verify(self, presented: str | None) -> Verdict:
        if not presented:
            return Verdict(None, "missing")
        m = _TOKEN.match(presented.strip())
        if not m:
            return Verdict(None, "malformed")
        digest = hash_token(presented.strip())
        match: TokenInfo | None = None
        for t in self.list():  # compare against every record: time does not depend on the id
            if hmac.compare_digest(t.hash, digest) and t.id == m.group(1):
                match = t
        if match is None:
            return Verdict(None, "unknown")
        if match.revoked:
            return Verdict(None, "revoked")
        return Verdict(match, None)
