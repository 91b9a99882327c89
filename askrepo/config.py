"""Paths and settings, all overridable by ASKREPO_* environment variables.

Every variable is documented in the README's Configuration section.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UsageError

DEFAULT_EMBED_MODEL = "minilm"
DEFAULT_MAX_FILE_BYTES = 1024 * 1024


_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def flag(name: str, default: bool) -> bool:
    """An on/off setting from the environment: 1/true/yes/on or 0/false/no/off (any case);
    unset or empty gives ``default``; any other value is a UsageError (one line, with the fix).
    """
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _ON or value in _OFF:
        return value in _ON
    raise UsageError(
        f"{name}={raw!r} is neither on nor off — set {name}=1 or {name}=0, "
        f"or unset it for the default ({int(default)})"
    )


def home() -> Path:
    """Where indexes live (ASKREPO_HOME, default ~/.askrepo)."""
    return Path(os.environ.get("ASKREPO_HOME") or Path.home() / ".askrepo").expanduser()


def models_dir() -> Path:
    """Model cache (ASKREPO_MODELS, default ~/.cache/askrepo/models).

    Kept apart from ASKREPO_HOME so that tests and throwaway homes reuse converted models.
    """
    default = (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "askrepo" / "models"
    )
    return Path(os.environ.get("ASKREPO_MODELS") or default).expanduser()


def embed_model() -> str:
    return os.environ.get("ASKREPO_MODEL") or DEFAULT_EMBED_MODEL


def enrich() -> bool:
    """Embed a header (path, symbol, signature) before the code (ASKREPO_ENRICH, default on)."""
    return flag("ASKREPO_ENRICH", True)


def _positive_int(name: str, default: int, example: str) -> int:
    """A positive integer from the environment; UsageError (one line, with the fix) if not."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise UsageError(
            f"{name}={raw!r} is not a positive whole number — set e.g. {name}={example}, "
            f"or unset it for the default ({default})"
        )
    return value


def pieces(limit: int) -> int:
    """Piece vectors per long chunk when indexing (ASKREPO_PIECES, 0 to ``limit``, default
    ``limit``); 0 gives one vector per chunk: a faster phase 2, weaker dense search."""
    raw = os.environ.get("ASKREPO_PIECES")
    if raw is None or raw.strip() == "":
        return limit
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if not 0 <= value <= limit:
        raise UsageError(
            f"ASKREPO_PIECES={raw!r} is not a whole number from 0 to {limit} — set e.g. "
            f"ASKREPO_PIECES=0 for one vector per chunk, or unset it for the default ({limit})"
        )
    return value


def enrich_setting() -> bool | None:
    """ASKREPO_ENRICH as set by the user, or None when it is not set."""
    raw = os.environ.get("ASKREPO_ENRICH")
    return None if raw is None or raw.strip() == "" else enrich()


def max_file_bytes() -> int:
    """Files larger than this are not indexed (ASKREPO_MAX_FILE_BYTES, default 1 MiB)."""
    return _positive_int("ASKREPO_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES, "2000000")


def exclude_tests() -> bool:
    return flag("ASKREPO_EXCLUDE_TESTS", True)


def exclude_docs() -> bool:
    return flag("ASKREPO_EXCLUDE_DOCS", True)


def auto_refresh() -> bool:
    """Every `search`/`ask` re-indexes a few changed files first (ASKREPO_AUTO_REFRESH, default
    off)."""
    return flag("ASKREPO_AUTO_REFRESH", False)


def mcp_refresh() -> bool:
    """The MCP server (and `serve`) re-indexes a few changed files before a search
    (ASKREPO_MCP_REFRESH, default on)."""
    return flag("ASKREPO_MCP_REFRESH", True)


def top_k() -> int:
    """Snippets `ask` retrieves and shows the model (ASKREPO_TOPK, default 8)."""
    return _positive_int("ASKREPO_TOPK", 8, "8")


def check_home(*, write: bool = False) -> Path:
    """ASKREPO_HOME, checked: UsageError if it (or a parent) is not a directory, or — with
    ``write`` — if it cannot be created or written."""
    path = home()
    hint = "set ASKREPO_HOME to a writable directory (default ~/.askrepo)"
    for p in (path, *path.parents):
        if p.exists():
            if not p.is_dir():
                raise UsageError(f"ASKREPO_HOME={path} is not usable: {p} is a file — {hint}")
            break
    if write:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"ASKREPO_HOME={path} cannot be created ({exc.strerror or exc}) — {hint}"
            ) from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise UsageError(f"ASKREPO_HOME={path} is not writable — {hint}")
    return path


def validate() -> None:
    """Check every ASKREPO_* value a command may use, so a bad one is reported at once, as one
    line, by every command (not as a traceback halfway through)."""
    max_file_bytes()
    top_k()
    for on_off in (enrich, exclude_tests, exclude_docs, auto_refresh, mcp_refresh):
        on_off()
    check_home()
